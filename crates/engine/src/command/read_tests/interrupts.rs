//! Interrupted operations stop reading (issue 22): a write's selection scan ends soon
//! after its `maxTimeMS` is spent (it used to read on to the collection's end, only not
//! matching), and a write waiting at `fsyncLock` gives up with 50 MaxTimeMSExpired
//! instead of waiting for the unlock.

use super::{DB, engine, fails, insert, numbered, ok};
use crate::store::Namespace;
use bson::{Document, rawdoc};
use std::time::Duration;

/// The profile documents of `test` with this `op`.
fn profiled(engine: &crate::Engine, op: &str) -> Vec<Document> {
    let ns = Namespace::new(DB, "system.profile");
    let store = engine.store();
    let reader = store.read().expect("read");
    let meta = reader.collection(&ns).expect("catalog").expect("profiled");
    reader
        .scan(&meta, None)
        .expect("scan")
        .map(|entry| {
            let (_, bytes) = entry.expect("record");
            Document::from_reader(&bytes[..]).expect("document")
        })
        .filter(|doc| doc.get_str("op").ok() == Some(op))
        .collect()
}

#[test]
fn a_selection_scan_stops_soon_after_its_max_time_ms() {
    let (engine, clock) = engine();
    insert(&engine, "c", numbered(0..20_000));
    ok(&engine, rawdoc! { "profile": 2 });
    // Not interrupted: every document examined, as mongod counts them.
    ok(
        &engine,
        rawdoc! { "update": "c", "updates": [{ "q": { "n": { "$lt": 0 } }, "u": { "$set": { "x": 1 } }, "multi": true }] },
    );
    let whole = profiled(&engine, "update");
    assert_eq!(
        whole[0].get_i32("docsExamined").ok(),
        Some(20_000),
        "{whole:?}"
    );
    // Every clock reading now moves it 1 ms: a 5 ms budget is spent within a few checks.
    clock.set_step(1);
    fails(
        &engine,
        rawdoc! {
            "update": "c",
            "updates": [{ "q": { "n": { "$lt": 0 } }, "u": { "$set": { "x": 1 } }, "multi": true }],
            "maxTimeMS": 5,
        },
        50,
    );
    fails(
        &engine,
        rawdoc! { "delete": "c", "deletes": [{ "q": { "n": { "$lt": 0 } }, "limit": 0 }], "maxTimeMS": 5 },
        50,
    );
    clock.set_step(0);
    for op in ["update", "remove"] {
        let last = profiled(&engine, op).pop().expect("profiled");
        let examined = last.get_i32("docsExamined").expect("docsExamined");
        assert!(
            examined < 2_000,
            "{op}: the scan read {examined} of 20000 documents after its time ran out"
        );
    }
}

#[test]
fn a_write_waiting_at_fsync_lock_gives_up_at_its_max_time_ms() {
    let (engine, clock) = engine();
    let engine = std::sync::Arc::new(engine);
    insert(&engine, "c", numbered(0..1));
    let admin = |cmd: bson::RawDocumentBuf| {
        let reply = engine.run_command("admin", &cmd, &crate::ConnectionContext::default());
        Document::try_from(&reply).expect("reply")
    };
    let locked = admin(rawdoc! { "fsync": 1, "lock": true });
    assert_eq!(locked.get_f64("ok").ok(), Some(1.0), "{locked:?}");
    clock.set_step(1);
    let writer = std::sync::Arc::clone(&engine);
    let (done, finished) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let cmd = rawdoc! { "insert": "c", "documents": [{ "_id": 1 }], "maxTimeMS": 20 };
        let reply = writer.run_command(DB, &cmd, &crate::ConnectionContext::default());
        let _ = done.send(Document::try_from(&reply).expect("reply"));
    });
    let reply = finished.recv_timeout(Duration::from_secs(20));
    let unlocked = admin(rawdoc! { "fsyncUnlock": 1 });
    assert_eq!(unlocked.get_f64("ok").ok(), Some(1.0), "{unlocked:?}");
    let reply = reply.expect("the insert gave up while the lock was held");
    assert_eq!(reply.get_i32("code").ok(), Some(50), "{reply:?}");
    assert_eq!(reply.get_str("codeName").ok(), Some("MaxTimeMSExpired"));
    clock.set_step(0);
    // Nothing of it was written; a write after the unlock goes through.
    let count = ok(&engine, rawdoc! { "count": "c" });
    assert_eq!(count.get_i32("n").ok(), Some(1), "{count:?}");
    ok(
        &engine,
        rawdoc! { "insert": "c", "documents": [{ "_id": 2 }] },
    );
}
