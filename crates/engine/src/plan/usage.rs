//! Index usage counters (issue 17, `$indexStats`): how many operations each index served
//! since the server started or the index was created, as mongod's index usage tracker
//! counts them.
//!
//! Invariants:
//! - One access per operation per index its chosen plan reads: a find, count, distinct,
//!   aggregate, update or delete statement counts each index of its winning plan once (an
//!   `$or` plan each branch's index; the `_id` point lookup `_id_`), however many keys it
//!   walks and however many `getMore`s follow. Trials, explain and index maintenance by
//!   writes count nothing.
//! - `since` is when the counter started: the index's creation when this process created
//!   it, otherwise the engine's start. Re-creating an index restarts its counter.
//! - Counters are keyed by the collection's UUID and the index name, so a dropped and
//!   re-created collection starts from zero; they live in memory only (mongod's too).

use super::Access;
use crate::store::CollectionMeta;
use std::collections::HashMap;

/// The engine's index usage counters.
#[derive(Debug)]
pub(crate) struct IndexUsage {
    /// When counting started for indexes this process did not create (the engine's start).
    started_ms: i64,
    counters: parking_lot::Mutex<HashMap<Uuid, HashMap<String, Counter>>>,
}

type Uuid = [u8; 16];

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Counter {
    /// Operations that used the index.
    pub(crate) ops: i64,
    /// When counting started (milliseconds since the epoch).
    pub(crate) since_ms: i64,
}

impl IndexUsage {
    pub(crate) fn new(started_ms: i64) -> IndexUsage {
        IndexUsage {
            started_ms,
            counters: parking_lot::Mutex::default(),
        }
    }

    /// Index `name` of the collection with `uuid` was (re-)created at `now_ms`: its counter
    /// starts again from zero.
    pub(crate) fn created(&self, uuid: Uuid, name: &str, now_ms: i64) {
        let counter = Counter {
            ops: 0,
            since_ms: now_ms,
        };
        let mut counters = self.counters.lock();
        counters
            .entry(uuid)
            .or_default()
            .insert(name.to_owned(), counter);
    }

    /// One operation used index `name` of the collection with `uuid`.
    pub(crate) fn used(&self, uuid: Uuid, name: &str) {
        let mut counters = self.counters.lock();
        let indexes = counters.entry(uuid).or_default();
        match indexes.get_mut(name) {
            Some(counter) => counter.ops += 1,
            None => {
                let counter = Counter {
                    ops: 1,
                    since_ms: self.started_ms,
                };
                indexes.insert(name.to_owned(), counter);
            }
        }
    }

    /// One operation ran `access` over `meta`'s collection: each index it reads counts once.
    pub(crate) fn used_by(&self, meta: &CollectionMeta, access: &Access<'_>) {
        match access {
            Access::Collection => {}
            Access::Id(_) => self.used(meta.uuid, "_id_"),
            Access::Index(_) | Access::Or(_) => {
                let mut names: Vec<&str> = access.walks().iter().map(|w| w.name.as_str()).collect();
                names.sort_unstable();
                names.dedup();
                for name in names {
                    self.used(meta.uuid, name);
                }
            }
        }
    }

    /// The counter of index `name` of `meta`'s collection.
    pub(crate) fn counter(&self, meta: &CollectionMeta, name: &str) -> Counter {
        self.counters
            .lock()
            .get(&meta.uuid)
            .and_then(|indexes| indexes.get(name))
            .copied()
            .unwrap_or(Counter {
                ops: 0,
                since_ms: self.started_ms,
            })
    }
}
