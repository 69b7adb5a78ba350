//! The TTL monitor (issue 26): which documents a pass deletes (dates only, the earliest of
//! an array, the cutoff included), descending and partial TTL indexes, collMod's new
//! `expireAfterSeconds`, batches past the batch size, indexes consistent and deletes
//! durable afterwards, the counters and parameters, and the background thread (it runs,
//! survives a failed store, and stops at once on close). Time comes from a clock the tests
//! move.

use crate::support::{contents, fails, ok, options, run, temp_db};
use bson::{Bson, DateTime, Document, RawDocumentBuf, doc, rawdoc};
use engine::{Engine, EngineOptions, Host, HostFacts, MemoryFacts};
use std::sync::Arc;
use std::sync::atomic::{AtomicI64, Ordering};
use std::time::{Duration, Instant};

/// A host whose clock the test moves.
#[derive(Default)]
pub struct Clock {
    now: AtomicI64,
    facts: HostFacts,
}

impl Clock {
    pub fn at(millis: i64) -> Arc<Clock> {
        let clock = Arc::new(Clock::default());
        clock.now.store(millis, Ordering::SeqCst);
        clock
    }

    pub fn advance(&self, millis: i64) {
        self.now.fetch_add(millis, Ordering::SeqCst);
    }
}

impl Host for Clock {
    fn now_millis(&self) -> i64 {
        self.now.load(Ordering::SeqCst)
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

const NOW: i64 = 1_700_000_000_000;

fn clock_options(clock: &Arc<Clock>, interval: Option<Duration>) -> EngineOptions {
    EngineOptions {
        host: Arc::clone(clock) as Arc<dyn Host>,
        ttl_interval: interval,
        ..options()
    }
}

/// An in-memory engine without a monitor thread (passes run by `run_ttl_pass`).
fn engine_at(clock: &Arc<Clock>) -> Engine {
    Engine::new(clock_options(clock, None))
}

fn raw(doc: Document) -> RawDocumentBuf {
    RawDocumentBuf::try_from(&doc).expect("encodes")
}

fn date(offset_millis: i64) -> Bson {
    Bson::DateTime(DateTime::from_millis(NOW + offset_millis))
}

fn create_index(engine: &Engine, spec: Document) {
    ok(
        engine,
        "db",
        raw(doc! { "createIndexes": "c", "indexes": [spec] }),
    );
}

fn insert(engine: &Engine, docs: Vec<Document>) {
    let docs: Vec<Bson> = docs.into_iter().map(Bson::Document).collect();
    ok(engine, "db", raw(doc! { "insert": "c", "documents": docs }));
}

/// The `_id`s left in `db.c`, in record order.
fn ids(engine: &Engine) -> Vec<String> {
    contents(engine, "db", "c")
        .iter()
        .map(|d| d.get_str("_id").expect("string _id").to_owned())
        .collect()
}

/// Asserts validate finds every index consistent with the documents, and the store's
/// own verification passes.
fn assert_consistent(engine: &Engine) {
    let reply = ok(engine, "db", rawdoc! { "validate": "c", "full": true });
    assert_eq!(reply.get_bool("valid").ok(), Some(true), "{reply:?}");
    engine.store().verify().expect("verify");
}

fn ttl_metrics(engine: &Engine) -> Document {
    let reply = ok(engine, "admin", rawdoc! { "serverStatus": 1 });
    reply
        .get_document("metrics")
        .and_then(|m| m.get_document("ttl"))
        .expect("metrics.ttl")
        .clone()
}

/// The mixed documents every sweep test inserts: which must go at `expireAfterSeconds: 60`
/// and which must stay.
fn mixed_documents() -> Vec<Document> {
    vec![
        doc! { "_id": "past", "t": date(-3_600_000) },
        doc! { "_id": "at_cutoff", "t": date(-60_000) },
        doc! { "_id": "just_young", "t": date(-59_999) },
        doc! { "_id": "future", "t": date(3_600_000) },
        doc! { "_id": "before_1970", "t": Bson::DateTime(DateTime::from_millis(-1_000)) },
        doc! { "_id": "number", "t": 0i64 },
        doc! { "_id": "string", "t": "2000-01-01" },
        doc! { "_id": "timestamp", "t": Bson::Timestamp(bson::Timestamp { time: 1, increment: 1 }) },
        doc! { "_id": "null", "t": Bson::Null },
        doc! { "_id": "missing" },
        doc! { "_id": "array_earliest_past", "t": [date(3_600_000), date(-120_000), 5] },
        doc! { "_id": "array_all_future", "t": [date(3_600_000), date(7_200_000)] },
        doc! { "_id": "array_no_dates", "t": [1, "x"] },
        doc! { "_id": "empty_array", "t": [] },
        doc! { "_id": "nested_array", "t": [[date(-3_600_000)]] },
        doc! { "_id": "subdocument", "t": { "d": date(-3_600_000) } },
    ]
}

const KEPT: [&str; 11] = [
    "just_young",
    "future",
    "number",
    "string",
    "timestamp",
    "null",
    "missing",
    "array_all_future",
    "array_no_dates",
    "empty_array",
    "nested_array",
];

fn kept_plus_subdocument() -> Vec<String> {
    let mut kept: Vec<String> = KEPT.iter().map(|s| (*s).to_owned()).collect();
    kept.push("subdocument".to_owned());
    kept
}

#[test]
fn a_pass_deletes_only_dates_at_or_before_the_cutoff_and_arrays_at_their_earliest() {
    let clock = Clock::at(NOW);
    let engine = engine_at(&clock);
    create_index(
        &engine,
        doc! { "key": { "t": 1 }, "name": "t_1", "expireAfterSeconds": 60 },
    );
    // An index without TTL on the same field changes nothing.
    create_index(
        &engine,
        doc! { "key": { "t": 1, "x": 1 }, "name": "t_1_x_1" },
    );
    insert(&engine, mixed_documents());
    let pass = engine.run_ttl_pass().expect("pass");
    assert_eq!(pass.indexes, 1);
    assert_eq!(
        pass.deleted, 4,
        "past, at_cutoff, before_1970, array_earliest_past"
    );
    assert_eq!(ids(&engine), kept_plus_subdocument());
    assert_consistent(&engine);
    assert_eq!(
        ttl_metrics(&engine),
        doc! { "deletedDocuments": 4i64, "passes": 1i64, "subPasses": 1i64 }
    );
    // A second pass at the same time finds nothing; once the clock moves past the young
    // one's cutoff it goes too.
    assert_eq!(engine.run_ttl_pass().expect("pass").deleted, 0);
    clock.advance(1);
    assert_eq!(engine.run_ttl_pass().expect("pass").deleted, 1);
    assert!(!ids(&engine).contains(&"just_young".to_owned()));
    assert_consistent(&engine);
    assert_eq!(
        ttl_metrics(&engine),
        doc! { "deletedDocuments": 5i64, "passes": 3i64, "subPasses": 3i64 }
    );
}

#[test]
fn a_descending_ttl_index_expires_the_same_documents() {
    let clock = Clock::at(NOW);
    let engine = engine_at(&clock);
    create_index(
        &engine,
        doc! { "key": { "t": -1 }, "name": "t_-1", "expireAfterSeconds": 60 },
    );
    insert(&engine, mixed_documents());
    assert_eq!(engine.run_ttl_pass().expect("pass").deleted, 4);
    assert_eq!(ids(&engine), kept_plus_subdocument());
    assert_consistent(&engine);
}

#[test]
fn a_dotted_ttl_path_reaches_into_subdocuments() {
    let clock = Clock::at(NOW);
    let engine = engine_at(&clock);
    create_index(
        &engine,
        doc! { "key": { "t.d": 1 }, "name": "t.d_1", "expireAfterSeconds": 0 },
    );
    insert(&engine, mixed_documents());
    let pass = engine.run_ttl_pass().expect("pass");
    assert_eq!(pass.deleted, 1);
    assert!(!ids(&engine).contains(&"subdocument".to_owned()));
    assert_consistent(&engine);
}

#[test]
fn a_partial_ttl_index_expires_only_the_documents_it_holds() {
    let clock = Clock::at(NOW);
    let engine = engine_at(&clock);
    create_index(
        &engine,
        doc! {
            "key": { "t": 1 }, "name": "t_1", "expireAfterSeconds": 0,
            "partialFilterExpression": { "kind": "session" },
        },
    );
    insert(
        &engine,
        vec![
            doc! { "_id": "session_old", "kind": "session", "t": date(-1_000) },
            doc! { "_id": "order_old", "kind": "order", "t": date(-1_000) },
            doc! { "_id": "untyped_old", "t": date(-1_000) },
            doc! { "_id": "session_new", "kind": "session", "t": date(1_000) },
        ],
    );
    assert_eq!(engine.run_ttl_pass().expect("pass").deleted, 1);
    assert_eq!(ids(&engine), ["order_old", "untyped_old", "session_new"]);
    assert_consistent(&engine);
}

#[test]
fn compound_ttl_indexes_are_refused_so_never_swept() {
    let clock = Clock::at(NOW);
    let engine = engine_at(&clock);
    fails(
        &engine,
        "db",
        rawdoc! { "createIndexes": "c", "indexes": [
            { "key": { "t": 1, "u": 1 }, "name": "t_1_u_1", "expireAfterSeconds": 0 },
        ] },
        67,
    );
    insert(
        &engine,
        vec![doc! { "_id": "old", "t": date(-1_000), "u": 1 }],
    );
    assert_eq!(engine.run_ttl_pass().expect("pass").indexes, 0);
    assert_eq!(ids(&engine), ["old"]);
}

#[test]
fn coll_mod_changes_what_the_next_pass_expires() {
    let clock = Clock::at(NOW);
    let engine = engine_at(&clock);
    create_index(
        &engine,
        doc! { "key": { "t": 1 }, "name": "t_1", "expireAfterSeconds": 3_600 },
    );
    insert(
        &engine,
        vec![
            doc! { "_id": "two_minutes", "t": date(-120_000) },
            doc! { "_id": "ten_seconds", "t": date(-10_000) },
        ],
    );
    assert_eq!(engine.run_ttl_pass().expect("pass").deleted, 0);
    ok(
        &engine,
        "db",
        rawdoc! { "collMod": "c", "index": { "name": "t_1", "expireAfterSeconds": 60 } },
    );
    assert_eq!(engine.run_ttl_pass().expect("pass").deleted, 1);
    assert_eq!(ids(&engine), ["ten_seconds"]);
    assert_consistent(&engine);
}

#[test]
fn more_documents_than_a_batch_all_go_in_one_pass() {
    let clock = Clock::at(NOW);
    let engine = engine_at(&clock);
    create_index(
        &engine,
        doc! { "key": { "t": 1 }, "name": "t_1", "expireAfterSeconds": 0 },
    );
    create_index(&engine, doc! { "key": { "n": 1 }, "name": "n_1" });
    // 2,600 expired (a third of them as arrays of two expired dates: two entries each),
    // and every tenth unexpired.
    let docs: Vec<Document> = (0..2_860)
        .map(|i| {
            let t = match i % 11 {
                0 => date(1_000),
                1..=3 => Bson::Array(vec![date(-i), date(-2 * i - 1)]),
                _ => date(-i - 1),
            };
            doc! { "_id": format!("d{i}"), "t": t, "n": i }
        })
        .collect();
    for chunk in docs.chunks(1_000) {
        insert(&engine, chunk.to_vec());
    }
    let pass = engine.run_ttl_pass().expect("pass");
    assert_eq!(pass.deleted, 2_600);
    assert_eq!(ids(&engine).len(), 260);
    assert_consistent(&engine);
}

#[test]
fn ttl_deletes_survive_a_reopen_without_close() {
    let path = temp_db("ttl-durable", "data.mfdb");
    let clock = Clock::at(NOW);
    {
        let engine = Engine::open(&path, clock_options(&clock, None)).expect("open");
        create_index(
            &engine,
            doc! { "key": { "t": 1 }, "name": "t_1", "expireAfterSeconds": 60 },
        );
        insert(&engine, mixed_documents());
        assert_eq!(engine.run_ttl_pass().expect("pass").deleted, 4);
        // Dropped without close: the deletes come back from the log.
    }
    let engine = Engine::open(&path, clock_options(&clock, None)).expect("reopen");
    assert_eq!(ids(&engine), kept_plus_subdocument());
    assert_consistent(&engine);
    engine.close().expect("close");
}

#[test]
fn get_parameter_reports_the_monitor_settings() {
    let clock = Clock::at(NOW);
    let on = Engine::new(clock_options(&clock, Some(Duration::from_secs(60))));
    let reply = ok(
        &on,
        "admin",
        rawdoc! { "getParameter": 1, "ttlMonitorSleepSecs": 1, "ttlMonitorEnabled": 1 },
    );
    assert_eq!(
        reply,
        doc! { "ttlMonitorSleepSecs": 60, "ttlMonitorEnabled": true, "ok": 1.0 }
    );
    let off = engine_at(&clock);
    let reply = ok(
        &off,
        "admin",
        rawdoc! { "getParameter": 1, "ttlMonitorEnabled": 1 },
    );
    assert_eq!(reply.get_bool("ttlMonitorEnabled").ok(), Some(false));
}

/// Polls `done` every 10 ms for up to `limit`.
fn eventually(limit: Duration, mut done: impl FnMut() -> bool) -> bool {
    let deadline = Instant::now() + limit;
    while Instant::now() < deadline {
        if done() {
            return true;
        }
        std::thread::sleep(Duration::from_millis(10));
    }
    done()
}

#[test]
fn the_monitor_thread_expires_documents_as_the_clock_moves() {
    let clock = Clock::at(NOW);
    let engine = Engine::new(clock_options(&clock, Some(Duration::from_millis(20))));
    create_index(
        &engine,
        doc! { "key": { "t": 1 }, "name": "t_1", "expireAfterSeconds": 10 },
    );
    insert(
        &engine,
        vec![
            doc! { "_id": "old", "t": date(-10_000) },
            doc! { "_id": "soon", "t": date(0) },
            doc! { "_id": "later", "t": date(60_000) },
        ],
    );
    assert!(eventually(Duration::from_secs(3), || ids(&engine) == ["soon", "later"]));
    clock.advance(10_000);
    assert!(eventually(Duration::from_secs(3), || ids(&engine) == ["later"]));
    let metrics = ttl_metrics(&engine);
    assert_eq!(metrics.get_i64("deletedDocuments").ok(), Some(2));
    assert!(metrics.get_i64("passes").unwrap_or(0) >= 2, "{metrics:?}");
    assert_consistent(&engine);
}

#[test]
fn close_and_drop_do_not_wait_for_the_monitors_interval() {
    let clock = Clock::at(NOW);
    let engine = Engine::new(clock_options(&clock, Some(Duration::from_secs(60))));
    let started = Instant::now();
    engine.close().expect("close");
    drop(engine);
    let path = temp_db("ttl-drop", "data.mfdb");
    let engine =
        Engine::open(&path, clock_options(&clock, Some(Duration::from_secs(60)))).expect("open");
    drop(engine);
    // The file lock is released: the thread held no strong reference while asleep.
    let engine = Engine::open(&path, clock_options(&clock, None)).expect("reopen");
    drop(engine);
    assert!(
        started.elapsed() < Duration::from_secs(2),
        "{:?}",
        started.elapsed()
    );
}

#[test]
fn a_closed_engine_refuses_a_pass_without_panicking() {
    let clock = Clock::at(NOW);
    let engine = engine_at(&clock);
    engine.close().expect("close");
    assert!(engine.run_ttl_pass().is_err());
    let reply = run(&engine, "db", rawdoc! { "ping": 1 });
    assert!(reply.get_f64("ok").is_ok());
}
