//! The command surface monitoring, mongosh and drivers touch (issue 22): serverStatus's
//! counters and sections, mongosh's admin helpers, parameters and introspection, killOp
//! and maxTimeMS, and the size limits of write batches.

use crate::support::{engine, fails, ok, run};
use bson::{Document, doc, rawdoc};

fn section(status: &Document, name: &str) -> Document {
    status
        .get_document(name)
        .unwrap_or_else(|_| panic!("no {name} in {status:?}"))
        .clone()
}

fn status(engine: &engine::Engine) -> Document {
    ok(engine, "admin", rawdoc! { "serverStatus": 1 })
}

#[test]
fn server_status_opcounters_count_as_mongod_counts() {
    let engine = engine();
    let before = section(&status(&engine), "opcounters");
    assert_eq!(before.get_i64("insert").ok(), Some(0), "{before:?}");
    ok(
        &engine,
        "db",
        rawdoc! { "insert": "c", "documents": [{ "_id": 1 }, { "_id": 2 }, { "_id": 3 }] },
    );
    // A document that fails still counts as an insert (mongod counts each one tried).
    run(
        &engine,
        "db",
        rawdoc! { "insert": "c", "documents": [{ "_id": 1 }] },
    );
    ok(&engine, "db", rawdoc! { "find": "c", "batchSize": 1 });
    ok(
        &engine,
        "db",
        rawdoc! { "find": "c", "filter": { "_id": 2 } },
    );
    ok(
        &engine,
        "db",
        rawdoc! { "update": "c", "updates": [
            { "q": { "_id": 1 }, "u": { "$set": { "a": 1 } } },
            { "q": { "_id": 2 }, "u": { "$set": { "a": 1 } } },
        ] },
    );
    ok(
        &engine,
        "db",
        rawdoc! { "delete": "c", "deletes": [{ "q": { "_id": 3 }, "limit": 1 }] },
    );
    ok(&engine, "db", rawdoc! { "count": "c" });
    let after = status(&engine);
    let counters = section(&after, "opcounters");
    // The serverStatus before, count and this serverStatus are the commands.
    assert_eq!(
        counters,
        doc! { "insert": 4_i64, "query": 2_i64, "update": 2_i64, "delete": 1_i64,
        "getmore": 0_i64, "command": 3_i64 },
    );
    let document = section(&section(&after, "metrics"), "document");
    assert_eq!(
        document,
        doc! { "deleted": 1_i64, "inserted": 3_i64, "returned": 2_i64, "updated": 2_i64 },
    );
    // The duplicate key is a write error, not a failed command; a failed command is a user
    // assertion.
    fails(&engine, "db", rawdoc! { "find": 1 }, 73);
    let asserts = section(&status(&engine), "asserts");
    assert_eq!(asserts.get_i64("user").ok(), Some(1), "{asserts:?}");
}

#[test]
fn server_status_has_the_sections_monitoring_reads() {
    let engine = engine();
    ok(
        &engine,
        "db",
        rawdoc! { "insert": "c", "documents": [{ "_id": 1 }, { "_id": 2 }, { "_id": 3 }] },
    );
    let reply = ok(&engine, "db", rawdoc! { "find": "c", "batchSize": 1 });
    let id = reply
        .get_document("cursor")
        .and_then(|c| c.get_i64("id"))
        .expect("id");
    let status = status(&engine);
    for name in [
        "asserts",
        "connections",
        "globalLock",
        "network",
        "opcounters",
        "mem",
    ] {
        section(&status, name);
    }
    assert!(status.get_f64("uptime").is_ok());
    assert!(status.get_datetime("localTime").is_ok());
    let storage = section(&status, "storageEngine");
    assert_eq!(storage.get_str("name").ok(), Some("multiforadb"));
    assert_eq!(storage.get_bool("persistent").ok(), Some(false));
    let metrics = section(&status, "metrics");
    let cursor = section(&metrics, "cursor");
    assert_eq!(
        cursor.get_document("open").ok(),
        Some(&doc! { "noTimeout": 0_i64, "pinned": 0_i64, "total": 1_i64 })
    );
    assert_eq!(cursor.get_i64("totalOpened").ok(), Some(1));
    section(&metrics, "operation");
    let active = section(&section(&status, "globalLock"), "activeClients");
    assert_eq!(active.get_i64("total").ok(), Some(1), "serverStatus itself");
    ok(
        &engine,
        "db",
        rawdoc! { "getMore": id, "collection": "c", "batchSize": 1 },
    );
    let counters = section(&self::status(&engine), "opcounters");
    assert_eq!(counters.get_i64("getmore").ok(), Some(1), "{counters:?}");
}

fn insert_ids(engine: &engine::Engine, coll: &str, ids: std::ops::Range<i32>) {
    let mut documents = bson::RawArrayBuf::new();
    for id in ids {
        documents.push(rawdoc! { "_id": id, "pad": "x".repeat(100) });
    }
    let mut cmd = rawdoc! { "insert": coll };
    cmd.append(bson::raw::cstr!("documents"), documents);
    ok(engine, "db", cmd);
}

fn count(engine: &engine::Engine, coll: &str) -> i32 {
    ok(engine, "db", rawdoc! { "count": coll })
        .get_i32("n")
        .expect("n")
}

/// fsyncLock stops writes (they wait), leaves reads running, and leaves the data file
/// consistent: a copy of the one file, taken while locked, opens as a database holding
/// every write acknowledged before the lock.
#[test]
fn fsync_lock_stops_writes_and_a_copy_of_the_file_is_a_valid_database() {
    let path = crate::support::temp_db("fsync-lock", "data.mfdb");
    let engine =
        std::sync::Arc::new(engine::Engine::open(&path, crate::support::options()).expect("open"));
    insert_ids(&engine, "c", 0..500);
    fails(&engine, "admin", rawdoc! { "fsyncUnlock": 1 }, 20);
    let locked = ok(&engine, "admin", rawdoc! { "fsync": 1, "lock": true });
    assert_eq!(locked.get_i64("lockCount").ok(), Some(1), "{locked:?}");
    let again = ok(&engine, "admin", rawdoc! { "fsync": 1, "lock": true });
    assert_eq!(again.get_i64("lockCount").ok(), Some(2));
    let current = ok(&engine, "admin", rawdoc! { "currentOp": 1 });
    assert_eq!(current.get_bool("fsyncLock").ok(), Some(true));
    let copy = path.with_file_name("copy.mfdb");
    std::fs::copy(&path, &copy).expect("copy");
    let writer = {
        let engine = std::sync::Arc::clone(&engine);
        std::thread::spawn(move || insert_ids(&engine, "c", 500..501))
    };
    std::thread::sleep(std::time::Duration::from_millis(300));
    assert!(!writer.is_finished(), "a write ran while fsync-locked");
    assert_eq!(count(&engine, "c"), 500, "reads go on");
    let unlocked = ok(&engine, "admin", rawdoc! { "fsyncUnlock": 1 });
    assert_eq!(unlocked.get_i64("lockCount").ok(), Some(1));
    std::thread::sleep(std::time::Duration::from_millis(100));
    assert!(!writer.is_finished(), "one lock is still held");
    let unlocked = ok(&engine, "admin", rawdoc! { "fsyncUnlock": 1 });
    assert_eq!(unlocked.get_i64("lockCount").ok(), Some(0));
    writer.join().expect("the write ran after the unlock");
    assert_eq!(count(&engine, "c"), 501);
    fails(&engine, "admin", rawdoc! { "fsyncUnlock": 1 }, 20);
    let copied = engine::Engine::open(&copy, crate::support::options()).expect("the copy opens");
    assert_eq!(count(&copied, "c"), 500);
    let report = copied.store().verify().expect("verify");
    assert_eq!(
        (report.collections, report.documents),
        (1, 500),
        "{report:?}"
    );
    engine.close().expect("close");
}

#[test]
fn mongosh_helpers_answer_as_mongod_on_a_standalone() {
    let engine = engine();
    let status = fails(&engine, "admin", rawdoc! { "replSetGetStatus": 1 }, 76);
    assert_eq!(
        status.get_str("codeName").ok(),
        Some("NoReplicationEnabled")
    );
    assert_eq!(
        status.get_str("errmsg").ok(),
        Some("not running with --replSet")
    );
    let users = ok(&engine, "db", rawdoc! { "usersInfo": 1 });
    assert_eq!(users.get_array("users").map(Vec::len).ok(), Some(0));
    ok(&engine, "admin", rawdoc! { "logRotate": 1 });
    // Embedded, there is no server to stop.
    fails(
        &engine,
        "admin",
        rawdoc! { "shutdown": 1, "force": true },
        20,
    );
    fails(
        &engine,
        "admin",
        rawdoc! { "shutdown": 1, "timeoutSecs": "x" },
        14,
    );
    let stopped = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
    let flag = std::sync::Arc::clone(&stopped);
    engine.on_shutdown(std::sync::Arc::new(move || {
        flag.store(true, std::sync::atomic::Ordering::SeqCst);
    }));
    ok(
        &engine,
        "admin",
        rawdoc! { "shutdown": 1, "timeoutSecs": 5 },
    );
    assert!(stopped.load(std::sync::atomic::Ordering::SeqCst));
    fails(&engine, "db", rawdoc! { "compact": "none" }, 26);
    insert_ids(&engine, "c", 0..3);
    let compact = ok(&engine, "db", rawdoc! { "compact": "c" });
    assert_eq!(compact.get_i64("bytesFreed").ok(), Some(0));
    ok(&engine, "db", rawdoc! { "find": "c" });
    let top = ok(&engine, "admin", rawdoc! { "top": 1 });
    let c = top
        .get_document("totals")
        .and_then(|t| t.get_document("db.c"))
        .expect("db.c");
    assert_eq!(
        c.get_document("insert")
            .and_then(|i| i.get_i64("count"))
            .ok(),
        Some(1),
        "{c:?}"
    );
    assert_eq!(
        c.get_document("total")
            .and_then(|i| i.get_i64("count"))
            .ok(),
        Some(3),
        "insert, compact, find: {c:?}"
    );
}

/// dbHash as mongod computes it: md5 of the documents' bytes in `_id` order per
/// collection, md5 of the hex digests in collection name order for the whole.
#[test]
fn db_hash_is_mongod_md5_of_documents_in_id_order() {
    use md5::{Digest, Md5};
    let engine = engine();
    // Inserted out of _id order: the hash follows _id, not insertion.
    ok(
        &engine,
        "db",
        rawdoc! { "insert": "b", "documents": [{ "_id": 2, "x": 1 }, { "_id": 1 }] },
    );
    ok(&engine, "db", rawdoc! { "create": "a" });
    let hex = |bytes: &[u8]| -> String { bytes.iter().map(|b| format!("{b:02x}")).collect() };
    let mut b = Md5::new();
    b.update(rawdoc! { "_id": 1 }.as_bytes());
    b.update(rawdoc! { "_id": 2, "x": 1 }.as_bytes());
    let b = hex(&b.finalize());
    let a = hex(&Md5::new().finalize());
    assert_eq!(a, "d41d8cd98f00b204e9800998ecf8427e");
    let mut whole = Md5::new();
    whole.update(a.as_bytes());
    whole.update(b.as_bytes());
    let reply = ok(&engine, "db", rawdoc! { "dbHash": 1 });
    assert_eq!(
        reply.get_document("collections").ok(),
        Some(&doc! { "a": a.clone(), "b": b.clone() })
    );
    assert_eq!(
        reply.get_str("md5").ok(),
        Some(hex(&whole.finalize()).as_str())
    );
    let only = ok(&engine, "db", rawdoc! { "dbHash": 1, "collections": ["b"] });
    assert_eq!(
        only.get_document("collections").ok(),
        Some(&doc! { "b": b })
    );
    assert!(
        only.get_document("uuids")
            .is_ok_and(|u| u.contains_key("b"))
    );
}

#[test]
fn get_parameter_star_lists_every_parameter_and_set_parameter_sets_the_settable_ones() {
    let engine = engine();
    let all = ok(&engine, "admin", rawdoc! { "getParameter": "*" });
    for name in [
        "enableTestCommands",
        "featureCompatibilityVersion",
        "authenticationMechanisms",
        "logLevel",
        "maxBSONObjectSize",
        "ttlMonitorSleepSecs",
        "cursorTimeoutMillis",
        "transactionLifetimeLimitSeconds",
    ] {
        assert!(all.contains_key(name), "{name} missing from {all:?}");
    }
    let details = ok(
        &engine,
        "admin",
        rawdoc! { "getParameter": { "showDetails": true }, "logLevel": 1 },
    );
    assert_eq!(
        details.get_document("logLevel").ok(),
        Some(&doc! { "value": 0, "settableAtRuntime": true, "settableAtStartup": true })
    );
    let set = ok(
        &engine,
        "admin",
        rawdoc! { "setParameter": 1, "logLevel": 2 },
    );
    assert_eq!(set.get_i32("was").ok(), Some(0));
    let got = ok(
        &engine,
        "admin",
        rawdoc! { "getParameter": 1, "logLevel": 1 },
    );
    assert_eq!(got.get_i32("logLevel").ok(), Some(2));
    let startup_only = fails(
        &engine,
        "admin",
        rawdoc! { "setParameter": 1, "enableTestCommands": true },
        20,
    );
    assert_eq!(
        startup_only.get_str("errmsg").ok(),
        Some("not allowed to change [enableTestCommands] at runtime")
    );
    fails(
        &engine,
        "admin",
        rawdoc! { "setParameter": 1, "noSuch": 1 },
        72,
    );
    fails(&engine, "admin", rawdoc! { "setParameter": 1 }, 72);
    fails(
        &engine,
        "admin",
        rawdoc! { "setParameter": 1, "logLevel": "x" },
        2,
    );
    fails(
        &engine,
        "db",
        rawdoc! { "setParameter": 1, "logLevel": 1 },
        13,
    );
    fails(
        &engine,
        "admin",
        rawdoc! { "getParameter": 1, "noSuch": 1 },
        72,
    );
}

/// A clock the test moves.
struct Clock {
    now_millis: std::sync::atomic::AtomicI64,
    facts: engine::HostFacts,
}

impl engine::Host for Clock {
    fn now_millis(&self) -> i64 {
        self.now_millis.load(std::sync::atomic::Ordering::SeqCst)
    }
    fn uptime_millis(&self) -> u64 {
        0
    }
    fn memory(&self) -> engine::MemoryFacts {
        engine::MemoryFacts::default()
    }
    fn facts(&self) -> &engine::HostFacts {
        &self.facts
    }
}

/// cursorTimeoutMillis is consumed: an idle cursor is reaped after the new timeout, not
/// mongod's default ten minutes.
#[test]
fn cursor_timeout_millis_reaps_idle_cursors_after_the_set_time() {
    let clock = std::sync::Arc::new(Clock {
        now_millis: std::sync::atomic::AtomicI64::new(crate::support::NOW_MILLIS),
        facts: engine::HostFacts::default(),
    });
    let mut options = crate::support::options();
    options.host = clock.clone();
    let engine = engine::Engine::new(options);
    let set = ok(
        &engine,
        "admin",
        rawdoc! { "setParameter": 1, "cursorTimeoutMillis": 120_000_i64 },
    );
    assert_eq!(set.get_i64("was").ok(), Some(600_000));
    insert_ids(&engine, "c", 0..3);
    let open = |engine: &engine::Engine| {
        ok(engine, "db", rawdoc! { "find": "c", "batchSize": 1 })
            .get_document("cursor")
            .and_then(|c| c.get_i64("id"))
            .expect("id")
    };
    let id = open(&engine);
    clock
        .now_millis
        .fetch_add(180_000, std::sync::atomic::Ordering::SeqCst);
    open(&engine); // registering sweeps
    fails(
        &engine,
        "db",
        rawdoc! { "getMore": id, "collection": "c", "batchSize": 1 },
        43,
    );
    let cursor = section(&section(&status(&engine), "metrics"), "cursor");
    assert_eq!(cursor.get_i64("timedOut").ok(), Some(1), "{cursor:?}");
}

#[test]
fn list_commands_lists_every_command_with_mongod_fields() {
    let engine = engine();
    let reply = ok(&engine, "admin", rawdoc! { "listCommands": 1 });
    let commands = reply.get_document("commands").expect("commands");
    let find = commands.get_document("find").expect("find");
    assert_eq!(find.get_bool("adminOnly").ok(), Some(false));
    assert_eq!(find.get_array("apiVersions").map(Vec::len).ok(), Some(1));
    for key in [
        "help",
        "requiresAuth",
        "secondaryOk",
        "deprecatedApiVersions",
    ] {
        assert!(find.contains_key(key), "{key}: {find:?}");
    }
    let shutdown = commands.get_document("shutdown").expect("shutdown");
    assert_eq!(shutdown.get_bool("adminOnly").ok(), Some(true));
    // Every command answers: none of them is CommandNotFound.
    for (name, _) in commands {
        let mut cmd = bson::Document::new();
        cmd.insert(name.as_str(), 1);
        if matches!(name.as_str(), "shutdown" | "fsync") {
            continue;
        }
        let reply = run(
            &engine,
            "admin",
            bson::RawDocumentBuf::try_from(&cmd).expect("encode"),
        );
        assert_ne!(reply.get_i32("code").ok(), Some(59), "{name}: {reply:?}");
    }
}

/// A clock that moves one millisecond per look, and, when armed, kills the operation
/// running `command.<name>` from inside it (on its own thread, at its next look at the
/// clock): a killOp that arrives mid-loop, deterministically.
struct Ticking {
    now_millis: std::sync::atomic::AtomicI64,
    facts: engine::HostFacts,
    engine: std::sync::OnceLock<&'static engine::Engine>,
    kill: parking_lot_free::Slot,
}

/// A one-shot slot for the command name to kill (a Mutex, no extra dependency).
mod parking_lot_free {
    #[derive(Default)]
    pub struct Slot(pub std::sync::Mutex<Option<&'static str>>);
}

impl engine::Host for Ticking {
    fn now_millis(&self) -> i64 {
        let armed = self.kill.0.lock().expect("slot").take();
        if let (Some(name), Some(engine)) = (armed, self.engine.get()) {
            let mut filter = bson::Document::new();
            filter.insert("currentOp", 1);
            filter.insert(format!("command.{name}"), doc! { "$exists": true });
            let ops = ok(
                engine,
                "admin",
                bson::RawDocumentBuf::try_from(&filter).expect("bson"),
            );
            let ops = ops.get_array("inprog").expect("inprog");
            match ops.first().and_then(|op| op.as_document()) {
                Some(op) => {
                    let opid = op.get_i32("opid").expect("opid");
                    ok(engine, "admin", rawdoc! { "killOp": 1, "op": opid });
                }
                // Not listed yet (the clock is read before the operation begins): later.
                None => *self.kill.0.lock().expect("slot") = Some(name),
            }
        }
        self.now_millis
            .fetch_add(1, std::sync::atomic::Ordering::SeqCst)
    }
    fn uptime_millis(&self) -> u64 {
        0
    }
    fn memory(&self) -> engine::MemoryFacts {
        engine::MemoryFacts::default()
    }
    fn facts(&self) -> &engine::HostFacts {
        &self.facts
    }
}

fn ticking_engine() -> (&'static engine::Engine, std::sync::Arc<Ticking>) {
    let host = std::sync::Arc::new(Ticking {
        now_millis: std::sync::atomic::AtomicI64::new(crate::support::NOW_MILLIS),
        facts: engine::HostFacts::default(),
        engine: std::sync::OnceLock::new(),
        kill: parking_lot_free::Slot::default(),
    });
    let mut options = crate::support::options();
    options.host = host.clone();
    let engine: &'static engine::Engine = Box::leak(Box::new(engine::Engine::new(options)));
    let _ = host.engine.set(engine);
    (engine, host)
}

/// maxTimeMS interrupts the write itself: the insert batch, the update's scan and the
/// index build stop with 50 and leave nothing (their transaction is dropped whole).
#[test]
fn max_time_ms_interrupts_writes_and_index_builds() {
    let (engine, _host) = ticking_engine();
    let mut documents = bson::RawArrayBuf::new();
    for id in 0..5000 {
        documents.push(rawdoc! { "_id": id, "k": id % 10 });
    }
    let mut insert = rawdoc! { "insert": "c", "maxTimeMS": 20 };
    insert.append(bson::raw::cstr!("documents"), documents.clone());
    let reply = fails(engine, "db", insert, 50);
    assert_eq!(reply.get_str("codeName").ok(), Some("MaxTimeMSExpired"));
    assert_eq!(count(engine, "c"), 0, "the interrupted batch left nothing");
    let mut insert = rawdoc! { "insert": "c" };
    insert.append(bson::raw::cstr!("documents"), documents);
    ok(engine, "db", insert);
    fails(
        engine,
        "db",
        rawdoc! { "update": "c", "updates": [{ "q": { "k": 3 }, "u": { "$set": { "x": 1 } }, "multi": true }], "maxTimeMS": 20 },
        50,
    );
    let updated = ok(engine, "db", rawdoc! { "count": "c", "query": { "x": 1 } });
    assert_eq!(updated.get_i32("n").ok(), Some(0));
    fails(
        engine,
        "db",
        rawdoc! { "createIndexes": "c", "indexes": [{ "key": { "k": 1 }, "name": "k_1" }], "maxTimeMS": 3 },
        50,
    );
    let indexes = ok(engine, "db", rawdoc! { "listIndexes": "c" });
    let batch = indexes
        .get_document("cursor")
        .and_then(|c| c.get_array("firstBatch"))
        .expect("batch");
    assert_eq!(batch.len(), 1, "only _id_: {batch:?}");
    let metrics = section(&status(engine), "metrics");
    let operation = section(&metrics, "operation");
    assert_eq!(
        operation.get_i64("killedDueToMaxTimeMSExpired").ok(),
        Some(3)
    );
    // Without maxTimeMS the same work runs to the end.
    ok(
        engine,
        "db",
        rawdoc! { "createIndexes": "c", "indexes": [{ "key": { "k": 1 }, "name": "k_1" }] },
    );
}

/// killOp stops a running find (at the read path's check), update scan and index build
/// with 11601 Interrupted; the killed write leaves nothing.
#[test]
fn kill_op_interrupts_a_running_operation() {
    let (engine, host) = ticking_engine();
    let mut documents = bson::RawArrayBuf::new();
    for id in 0..5000 {
        documents.push(rawdoc! { "_id": id, "k": id % 10 });
    }
    let mut insert = rawdoc! { "insert": "c" };
    insert.append(bson::raw::cstr!("documents"), documents);
    ok(engine, "db", insert);
    // A generous maxTimeMS makes the loops look at the clock, where the kill is waiting.
    *host.kill.0.lock().expect("slot") = Some("find");
    let reply = fails(
        engine,
        "db",
        rawdoc! { "find": "c", "filter": { "k": 99 }, "maxTimeMS": 1_000_000 },
        11601,
    );
    assert_eq!(reply.get_str("codeName").ok(), Some("Interrupted"));
    *host.kill.0.lock().expect("slot") = Some("update");
    fails(
        engine,
        "db",
        rawdoc! { "update": "c", "updates": [{ "q": { "k": 3 }, "u": { "$set": { "x": 1 } }, "multi": true }], "maxTimeMS": 1_000_000 },
        11601,
    );
    let updated = ok(engine, "db", rawdoc! { "count": "c", "query": { "x": 1 } });
    assert_eq!(updated.get_i32("n").ok(), Some(0));
    *host.kill.0.lock().expect("slot") = Some("createIndexes");
    fails(
        engine,
        "db",
        rawdoc! { "createIndexes": "c", "indexes": [{ "key": { "k": 1 }, "name": "k_1" }], "maxTimeMS": 1_000_000 },
        11601,
    );
    // killOp is admin-only, needs `op`, and answers ok for an operation that is not running.
    fails(engine, "db", rawdoc! { "killOp": 1, "op": 1 }, 13);
    fails(engine, "admin", rawdoc! { "killOp": 1 }, 2);
    ok(engine, "admin", rawdoc! { "killOp": 1, "op": 123_456 });
}

fn padded(id: i32, bytes: usize) -> bson::RawDocumentBuf {
    let mut doc = rawdoc! { "_id": id };
    doc.append(bson::raw::cstr!("pad"), "x".repeat(bytes));
    doc
}

/// A document over 16 MiB in an insert batch is a write error for that document (2
/// BadValue, mongod's message); the others go on as `ordered` says.
#[test]
fn an_oversized_document_in_an_insert_batch_is_a_write_error_for_itself() {
    const MAX: usize = 16 * 1024 * 1024;
    let engine = engine();
    for (ordered, inserted) in [(false, 2), (true, 1)] {
        let coll = if ordered { "ordered" } else { "unordered" };
        let big = padded(2, MAX);
        let size = big.as_bytes().len();
        let mut documents = bson::RawArrayBuf::new();
        documents.push(padded(1, 10));
        documents.push(big);
        documents.push(padded(3, 10));
        let mut cmd = rawdoc! { "insert": coll, "ordered": ordered };
        cmd.append(bson::raw::cstr!("documents"), documents);
        let reply = ok(&engine, "db", cmd);
        assert_eq!(reply.get_i32("n").ok(), Some(inserted), "{ordered}");
        let errors = reply.get_array("writeErrors").expect("writeErrors");
        assert_eq!(errors.len(), 1);
        let error = errors[0].as_document().expect("error");
        assert_eq!(error.get_i32("index").ok(), Some(1));
        assert_eq!(error.get_i32("code").ok(), Some(2));
        assert_eq!(
            error.get_str("errmsg").ok(),
            Some(
                format!("object to insert too large. size in bytes: {size}, max size: {MAX}")
                    .as_str()
            )
        );
        assert_eq!(count(&engine, coll), inserted);
    }
}

/// An update that grows a document past 16 MiB is mongod's 17419 write error; a
/// replacement just under 16 MiB (a statement larger than a stored document may be, by
/// the command slack) succeeds.
#[test]
fn an_update_past_16_mib_is_a_write_error_and_a_replacement_just_under_succeeds() {
    const MAX: usize = 16 * 1024 * 1024;
    let engine = engine();
    ok(
        &engine,
        "db",
        rawdoc! { "insert": "c", "documents": [{ "_id": 1 }, { "_id": 2 }] },
    );
    let mut set = rawdoc! {};
    set.append(bson::raw::cstr!("pad"), "x".repeat(MAX));
    let mut update = rawdoc! {};
    update.append(bson::raw::cstr!("$set"), set);
    let mut statement = rawdoc! { "q": { "_id": 1 } };
    statement.append(bson::raw::cstr!("u"), update);
    let mut statements = bson::RawArrayBuf::new();
    statements.push(statement);
    let mut cmd = rawdoc! { "update": "c" };
    cmd.append(bson::raw::cstr!("updates"), statements);
    let reply = ok(&engine, "db", cmd);
    let errors = reply.get_array("writeErrors").expect("writeErrors");
    let error = errors[0].as_document().expect("error");
    assert_eq!(error.get_i32("code").ok(), Some(17419), "{error:?}");
    assert_eq!(reply.get_i32("nModified").ok(), Some(0));
    // {_id: 2, pad: "..."} of exactly 16 MiB - 32 bytes.
    let overhead = padded(2, 0).as_bytes().len();
    let replacement = padded(2, MAX - 32 - overhead);
    assert_eq!(replacement.as_bytes().len(), MAX - 32);
    let mut statement = rawdoc! { "q": { "_id": 2 } };
    statement.append(bson::raw::cstr!("u"), replacement);
    let mut statements = bson::RawArrayBuf::new();
    statements.push(statement);
    let mut cmd = rawdoc! { "update": "c" };
    cmd.append(bson::raw::cstr!("updates"), statements);
    let reply = ok(&engine, "db", cmd);
    assert_eq!(reply.get_i32("nModified").ok(), Some(1), "{reply:?}");
}
