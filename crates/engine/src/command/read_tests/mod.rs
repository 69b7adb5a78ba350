//! Tests of the read commands (find, getMore, killCursors, count, distinct, aggregate,
//! listCollections, listIndexes) through `Engine::run_command`, with data written straight
//! into the store and a clock the tests move.

mod aggregate;
mod catalog;
mod count;
mod cursor;
mod find;
mod index_stats;
mod interrupts;
mod min_max;
mod plans;
mod props;
mod spill;
mod spill_aggregate;
mod split;

use crate::host::{Host, HostFacts, MemoryFacts};
use crate::store::Namespace;
use crate::{ConnectionContext, Engine, EngineOptions, StartupOptions};
use bson::{Bson, Document, RawDocumentBuf, rawdoc};
use std::sync::Arc;
use std::sync::atomic::{AtomicI64, Ordering};

/// The database every test uses.
pub(super) const DB: &str = "test";

/// A clock the test sets; with a step, every reading also moves it forward.
#[derive(Default)]
pub(super) struct Clock {
    now_ms: AtomicI64,
    step_ms: AtomicI64,
    facts: HostFacts,
}

impl Clock {
    pub(super) fn advance(&self, ms: i64) {
        self.now_ms.fetch_add(ms, Ordering::SeqCst);
    }

    pub(super) fn set_step(&self, ms: i64) {
        self.step_ms.store(ms, Ordering::SeqCst);
    }
}

impl Host for Clock {
    fn now_millis(&self) -> i64 {
        let step = self.step_ms.load(Ordering::SeqCst);
        self.now_ms.fetch_add(step, Ordering::SeqCst)
    }
    fn uptime_millis(&self) -> u64 {
        0
    }
    fn memory(&self) -> MemoryFacts {
        MemoryFacts::default()
    }
    fn facts(&self) -> &HostFacts {
        &self.facts
    }
}

/// An in-memory engine and its clock (starting at a fixed time).
pub(super) fn engine() -> (Engine, Arc<Clock>) {
    let clock = Arc::new(Clock::default());
    clock.advance(1_700_000_000_000);
    let engine = Engine::new(EngineOptions {
        host: Arc::clone(&clock) as Arc<dyn Host>,
        startup: StartupOptions::default(),
        connections_max: 10,
        ttl_interval: None,
    });
    (engine, clock)
}

/// Inserts `docs` into `test.<coll>` in one transaction.
pub(super) fn insert(engine: &Engine, coll: &str, docs: impl IntoIterator<Item = RawDocumentBuf>) {
    let ns = Namespace::new(DB, coll);
    let store = engine.store();
    let mut writer = store.write().expect("write");
    for doc in docs {
        writer.insert(&ns, &doc).expect("insert");
    }
    writer.commit().expect("commit");
}

/// Deletes the document of `test.<coll>` whose `_id` is the integer `id`.
pub(super) fn delete(engine: &Engine, coll: &str, id: i32) {
    let ns = Namespace::new(DB, coll);
    let store = engine.store();
    let mut writer = store.write().expect("write");
    let (rid, _) = writer
        .find_id(&ns, bson::raw::RawBsonRef::Int32(id))
        .expect("find_id")
        .expect("present");
    writer.delete(&ns, rid).expect("delete");
    writer.commit().expect("commit");
}

/// `{_id: i, n: i}` for each `i` in `ids`.
pub(super) fn numbered(ids: impl IntoIterator<Item = i32>) -> Vec<RawDocumentBuf> {
    ids.into_iter()
        .map(|i| rawdoc! { "_id": i, "n": i })
        .collect()
}

/// Runs `cmd` against `test` and returns the reply.
pub(super) fn run(engine: &Engine, cmd: RawDocumentBuf) -> Document {
    let reply = engine.run_command(DB, &cmd, &ConnectionContext::default());
    Document::try_from(&reply).expect("reply is valid BSON")
}

/// Runs `cmd` and asserts it succeeded.
pub(super) fn ok(engine: &Engine, cmd: RawDocumentBuf) -> Document {
    let reply = run(engine, cmd.clone());
    assert_eq!(reply.get_f64("ok").ok(), Some(1.0), "{cmd:?} -> {reply:?}");
    reply
}

/// Runs `cmd`, asserts it failed with `code`, and returns its message.
pub(super) fn fails(engine: &Engine, cmd: RawDocumentBuf, code: i32) -> String {
    let reply = run(engine, cmd.clone());
    assert_eq!(reply.get_f64("ok").ok(), Some(0.0), "{cmd:?} -> {reply:?}");
    assert_eq!(
        reply.get_i32("code").ok(),
        Some(code),
        "{cmd:?} -> {reply:?}"
    );
    assert!(reply.get_str("codeName").is_ok_and(|name| !name.is_empty()));
    reply.get_str("errmsg").expect("errmsg").to_owned()
}

/// The batch (first or next) and id of a cursor reply.
pub(super) fn batch(reply: &Document) -> (Vec<Document>, i64) {
    let cursor = reply.get_document("cursor").expect("cursor");
    let docs = cursor
        .get_array("firstBatch")
        .or_else(|_| cursor.get_array("nextBatch"))
        .expect("batch");
    let docs = docs
        .iter()
        .map(|d| d.as_document().expect("document").clone())
        .collect();
    (docs, cursor.get_i64("id").expect("id is a long"))
}

/// The `n` field of each document.
pub(super) fn field_values(docs: &[Document], field: &str) -> Vec<Bson> {
    docs.iter()
        .map(|d| d.get(field).cloned().unwrap_or(Bson::Null))
        .collect()
}

/// All of a cursor: its first batch, then getMores of `batch_size` until it is exhausted.
pub(super) fn drain(
    engine: &Engine,
    coll: &str,
    first: &Document,
    batch_size: Option<i64>,
) -> Vec<Document> {
    let (mut docs, mut id) = batch(first);
    let mut rounds = 0;
    while id != 0 {
        let mut cmd = rawdoc! { "getMore": id, "collection": coll };
        if let Some(size) = batch_size {
            cmd.append(bson::raw::cstr!("batchSize"), size);
        }
        let (more, next) = batch(&ok(engine, cmd));
        docs.extend(more);
        id = next;
        rounds += 1;
        assert!(rounds < 10_000, "cursor never ends");
    }
    docs
}
