//! The plan cache (issue 17): the winner of a trial, kept per collection and query shape
//! (the filter with its values stripped, the sort and the projection), so the next query
//! of that shape skips the trial.
//!
//! Invariants:
//! - An entry only names a plan; it is used only when the planner proposes that plan for
//!   the query at hand (so values that disqualify an index, such as a `null` for a sparse
//!   one, never reach it), and only while it answers within `REPLAN_FACTOR` times the
//!   work it took when it won (mongod's replanning); otherwise it is dropped and the query
//!   is planned again.
//! - An entry is dropped when the collection's indexes change (created, dropped, hidden or
//!   unhidden: their fingerprint differs), when the collection is replaced (its UUID is
//!   part of the key), and when its document count has more than doubled or halved (by
//!   more than `COUNT_SLACK` documents) since the entry was made.
//! - The cache holds at most `ENTRIES_MAX` entries; the least recently used goes first.
//!   Lookups take the lock only to copy an entry out: trials run without it.

use crate::store::CollectionMeta;
use bson::raw::RawBsonRef;
use bson::{Bson, Document, RawDocument, doc};
use std::collections::HashMap;
use std::hash::{Hash, Hasher};

/// The most entries the cache holds.
const ENTRIES_MAX: usize = 5_000;

/// A count change smaller than this never invalidates an entry.
const COUNT_SLACK: u64 = 1_000;

/// A query shape of one collection.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub(crate) struct Key {
    uuid: [u8; 16],
    shape: String,
}

impl Key {
    /// The shape of a query over `meta`.
    pub(crate) fn of(
        meta: &CollectionMeta,
        filter: Option<&RawDocument>,
        sort: Option<&RawDocument>,
        projection: Option<&RawDocument>,
    ) -> Key {
        let mut shape = String::new();
        if let Some(filter) = filter {
            shape_of(filter, &mut shape);
        }
        shape.push('|');
        for part in [sort, projection].into_iter().flatten() {
            for element in part.iter_elements().flatten() {
                shape.push_str(element.key().as_str());
                shape.push(':');
                let value = element.value().ok();
                shape.push_str(&value.map(|v| format!("{v:?}")).unwrap_or_default());
                shape.push(',');
            }
            shape.push('|');
        }
        Key {
            uuid: meta.uuid,
            shape,
        }
    }

    /// mongod's `queryHash`: the shape's hash as eight hex digits.
    pub(crate) fn query_hash(&self) -> String {
        format!("{:08X}", fnv(self.shape.as_bytes(), 0))
    }

    /// mongod's `planCacheKey`: the shape's hash with the indexes it may use.
    pub(crate) fn plan_cache_key(&self, meta: &CollectionMeta) -> String {
        format!("{:08X}", fnv(self.shape.as_bytes(), fingerprint(meta)))
    }
}

/// Appends the shape of `filter`: its field names and operators, every value a `?`
/// (the operands of `$and`, `$or` and `$nor` are filters, shaped in turn).
fn shape_of(filter: &RawDocument, out: &mut String) {
    out.push('{');
    for element in filter.iter_elements().flatten() {
        let key = element.key().as_str();
        out.push_str(key);
        match element.value() {
            Ok(RawBsonRef::Document(inner)) => shape_of(inner, out),
            Ok(RawBsonRef::Array(list)) if matches!(key, "$and" | "$or" | "$nor") => {
                out.push('[');
                for item in list.into_iter().flatten() {
                    if let RawBsonRef::Document(inner) = item {
                        shape_of(inner, out);
                    }
                }
                out.push(']');
            }
            _ => out.push('?'),
        }
        out.push(',');
    }
    out.push('}');
}

/// 32-bit FNV-1a of `bytes`, seeded with `seed`.
fn fnv(bytes: &[u8], seed: u64) -> u32 {
    let mut hash: u32 = 0x811c_9dc5;
    for byte in seed.to_be_bytes().iter().chain(bytes) {
        hash ^= u32::from(*byte);
        hash = hash.wrapping_mul(0x0100_0193);
    }
    hash
}

/// What identifies the collection's usable indexes: names, key patterns, hidden flags.
fn fingerprint(meta: &CollectionMeta) -> u64 {
    let mut hasher = std::collections::hash_map::DefaultHasher::new();
    for index in &meta.indexes {
        index.name().hash(&mut hasher);
        index.spec.hidden.hash(&mut hasher);
        format!("{:?}", index.spec.key_pattern).hash(&mut hasher);
    }
    hasher.finish()
}

/// A cached winner.
#[derive(Debug, Clone)]
pub(crate) struct Cached {
    /// The index the winner walks (`_id_` for the `_id_` index).
    pub(crate) index: String,
    /// For a wildcard index, the path it walks.
    pub(crate) wildcard_path: Option<String>,
    /// The winner's works (keys plus documents examined) in the trial it won.
    pub(crate) works: u64,
    /// When it was made (host milliseconds).
    pub(crate) created_ms: i64,
    /// The query it was made from: `{query, sort, projection}`.
    pub(crate) query: Document,
    indexes: u64,
    count: u64,
    used: u64,
}

impl Cached {
    /// An entry for the winner `index` (on `wildcard_path`) over `meta`.
    pub(crate) fn new(
        meta: &CollectionMeta,
        index: &str,
        wildcard_path: Option<&str>,
        works: u64,
        created_ms: i64,
        query: Document,
    ) -> Cached {
        Cached {
            index: index.to_owned(),
            wildcard_path: wildcard_path.map(str::to_owned),
            works,
            created_ms,
            query,
            indexes: fingerprint(meta),
            count: meta.count,
            used: 0,
        }
    }

    /// Whether the entry still describes `meta`'s indexes and size.
    fn fresh(&self, meta: &CollectionMeta) -> bool {
        let (then, now) = (self.count, meta.count);
        let grown = now > then.saturating_mul(2).saturating_add(COUNT_SLACK);
        let shrunk = then > now.saturating_mul(2).saturating_add(COUNT_SLACK);
        self.indexes == fingerprint(meta) && !grown && !shrunk
    }
}

/// The engine's plan cache.
#[derive(Debug, Default)]
pub(crate) struct PlanCache {
    inner: parking_lot::Mutex<Inner>,
}

#[derive(Debug, Default)]
struct Inner {
    entries: HashMap<Key, Cached>,
    tick: u64,
    hits: u64,
}

impl PlanCache {
    /// The fresh entry for `key` over `meta`, if any (a stale one is dropped).
    pub(crate) fn lookup(&self, key: &Key, meta: &CollectionMeta) -> Option<Cached> {
        let mut inner = self.inner.lock();
        inner.tick += 1;
        let tick = inner.tick;
        let entry = inner.entries.get_mut(key)?;
        if !entry.fresh(meta) {
            inner.entries.remove(key);
            return None;
        }
        entry.used = tick;
        Some(entry.clone())
    }

    /// Counts a query answered by a cached plan.
    pub(crate) fn hit(&self) {
        self.inner.lock().hits += 1;
    }

    /// Queries answered by a cached plan since the engine started.
    #[cfg(test)]
    pub(crate) fn hits(&self) -> u64 {
        self.inner.lock().hits
    }

    /// Stores `entry` for `key`, making room first when the cache is full.
    pub(crate) fn insert(&self, key: Key, mut entry: Cached) {
        let mut inner = self.inner.lock();
        inner.tick += 1;
        entry.used = inner.tick;
        if inner.entries.len() >= ENTRIES_MAX && !inner.entries.contains_key(&key) {
            let oldest = inner
                .entries
                .iter()
                .min_by_key(|(_, e)| e.used)
                .map(|(k, _)| k.clone());
            if let Some(oldest) = oldest {
                inner.entries.remove(&oldest);
            }
        }
        inner.entries.insert(key, entry);
    }

    /// Drops the entry for `key`.
    pub(crate) fn remove(&self, key: &Key) {
        self.inner.lock().entries.remove(key);
    }

    /// Drops every entry of the collection `meta` (`planCacheClear`).
    pub(crate) fn clear(&self, meta: &CollectionMeta) {
        self.inner.lock().entries.retain(|k, _| k.uuid != meta.uuid);
    }

    /// The entries of the collection `meta`, least recently used first.
    pub(crate) fn entries(&self, meta: &CollectionMeta) -> Vec<(Key, Cached)> {
        let inner = self.inner.lock();
        let mut out: Vec<(Key, Cached)> = inner
            .entries
            .iter()
            .filter(|(k, _)| k.uuid == meta.uuid)
            .map(|(k, e)| (k.clone(), e.clone()))
            .collect();
        out.sort_by_key(|(_, e)| e.used);
        out
    }
}

/// An entry as `$planCacheStats` shows it (mongod's classic fields).
pub(crate) fn stats_document(
    meta: &CollectionMeta,
    key: &Key,
    entry: &Cached,
    host: &str,
) -> Document {
    let mut scan = doc! { "stage": "IXSCAN", "indexName": &entry.index };
    if let Some(path) = &entry.wildcard_path {
        scan.insert("wildcardPath", path);
    }
    doc! {
        "version": "1",
        "queryHash": key.query_hash(),
        "planCacheKey": key.plan_cache_key(meta),
        "isActive": true,
        "works": i64::try_from(entry.works).unwrap_or(i64::MAX),
        "timeOfCreation": Bson::DateTime(bson::DateTime::from_millis(entry.created_ms)),
        "createdFromQuery": entry.query.clone(),
        "cachedPlan": { "stage": "FETCH", "inputStage": scan },
        "indexFilterSet": false,
        "isPinned": false,
        "host": host,
    }
}
