//! Issue 43's slice (d) at the engine: read and write concerns as a one-member set and a
//! standalone answer them, and the oplog read through tailable (`awaitData`) cursors.

use crate::replica_set::member;
use crate::support::{self, fails, ok};
use bson::{Bson, Document, Timestamp, rawdoc};
use engine::Engine;
use engine::repl::Options;
use std::time::{Duration, Instant};

fn operation_time(reply: &Document) -> Timestamp {
    reply.get_timestamp("operationTime").expect("operationTime")
}

fn later(ts: Timestamp, secs: u32) -> Timestamp {
    Timestamp {
        time: ts.time + secs,
        increment: 1,
    }
}

#[test]
fn a_member_applies_a_write_it_cannot_replicate_and_says_so() {
    let engine = member();
    let reply = ok(
        &engine,
        "db",
        rawdoc! {
            "insert": "c", "documents": [{ "_id": 1 }],
            "writeConcern": { "w": 2, "wtimeout": 60_000 },
        },
    );
    assert_eq!(reply.get_i32("n").ok(), Some(1), "{reply}");
    let error = reply
        .get_document("writeConcernError")
        .expect("writeConcernError");
    assert_eq!(error.get_i32("code").ok(), Some(100), "{error}");
    assert_eq!(
        error.get_str("codeName").ok(),
        Some("UnsatisfiableWriteConcern")
    );
    let given = error
        .get_document("errInfo")
        .and_then(|info| info.get_document("writeConcern"))
        .expect("errInfo.writeConcern");
    assert_eq!(given.get_i32("w").ok(), Some(2));
    assert_eq!(given.get_str("provenance").ok(), Some("clientSupplied"));
    // A mode the config does not define: applied, and 79.
    let reply = ok(
        &engine,
        "db",
        rawdoc! {
            "update": "c", "updates": [{ "q": { "_id": 1 }, "u": { "$set": { "a": 1 } } }],
            "writeConcern": { "w": "dc1" },
        },
    );
    assert_eq!(reply.get_i32("nModified").ok(), Some(1), "{reply}");
    let error = reply
        .get_document("writeConcernError")
        .expect("writeConcernError");
    assert_eq!(error.get_i32("code").ok(), Some(79), "{error}");
    // What one member satisfies carries no error.
    for w in [Bson::Int32(1), Bson::String("majority".into())] {
        let cmd = bson::doc! { "delete": "c", "deletes": [{ "q": { "_id": 9 }, "limit": 1 }],
        "writeConcern": { "w": w } };
        let reply = ok(
            &engine,
            "db",
            bson::RawDocumentBuf::try_from(&cmd).expect("raw"),
        );
        assert!(reply.get("writeConcernError").is_none(), "{reply}");
    }
    assert_eq!(support::contents(&engine, "db", "c").len(), 1);
    // A standalone still refuses w: 2 before writing anything.
    let standalone = support::engine();
    fails(
        &standalone,
        "db",
        rawdoc! { "insert": "c", "documents": [{ "_id": 1 }], "writeConcern": { "w": 2 } },
        2,
    );
    assert!(support::contents(&standalone, "db", "c").is_empty());
}

#[test]
fn read_concern_levels_are_checked_as_mongod_checks_them() {
    let engine = member();
    let standalone = support::engine();
    for level in ["local", "available", "majority", "linearizable"] {
        let find = rawdoc! { "find": "c", "readConcern": { "level": level } };
        ok(&engine, "db", find);
    }
    for level in ["local", "available", "majority"] {
        ok(
            &standalone,
            "db",
            rawdoc! { "find": "c", "readConcern": { "level": level } },
        );
    }
    fails(
        &standalone,
        "db",
        rawdoc! { "find": "c", "readConcern": { "level": "linearizable" } },
        123,
    );
    fails(
        &standalone,
        "db",
        rawdoc! { "find": "c", "readConcern": { "level": "snapshot" } },
        123,
    );
    // Not done yet on a member: one snapshot across a cursor's batches.
    fails(
        &engine,
        "db",
        rawdoc! { "find": "c", "readConcern": { "level": "snapshot" } },
        238,
    );
    fails(
        &engine,
        "db",
        rawdoc! { "insert": "c", "documents": [{}], "readConcern": { "level": "snapshot" } },
        72,
    );
    assert!(support::contents(&engine, "db", "c").is_empty());
    fails(
        &engine,
        "db",
        rawdoc! { "find": "c", "readConcern": { "level": "strong" } },
        2,
    );
    fails(
        &engine,
        "db",
        rawdoc! { "find": "c", "readConcern": "majority" },
        14,
    );
}

#[test]
fn after_cluster_time_sees_every_write_up_to_it() {
    let engine = member();
    let write = ok(
        &engine,
        "db",
        rawdoc! { "insert": "c", "documents": [{ "_id": 1 }] },
    );
    let at = operation_time(&write);
    let read = ok(
        &engine,
        "db",
        rawdoc! {
            "find": "c", "readConcern": { "level": "majority", "afterClusterTime": at },
        },
    );
    let batch = read
        .get_document("cursor")
        .and_then(|c| c.get_array("firstBatch"))
        .expect("batch");
    assert_eq!(batch.len(), 1, "{read}");
    assert!(operation_time(&read) >= at);
    // A time this set has not reached: mongod's InvalidOptions.
    let reply = fails(
        &engine,
        "db",
        rawdoc! { "find": "c", "readConcern": { "afterClusterTime": later(at, 3600) } },
        72,
    );
    assert!(
        reply
            .get_str("errmsg")
            .is_ok_and(|m| m.contains("must not be greater than the current clusterTime")),
        "{reply}"
    );
    // A standalone has no cluster time.
    fails(
        &support::engine(),
        "db",
        rawdoc! { "find": "c", "readConcern": { "afterClusterTime": at } },
        123,
    );
}

fn cursor_of(reply: &Document) -> (i64, Vec<Document>) {
    let cursor = reply.get_document("cursor").expect("cursor");
    let batch = cursor
        .get_array("firstBatch")
        .or_else(|_| cursor.get_array("nextBatch"))
        .expect("batch");
    let docs = batch
        .iter()
        .filter_map(|d| d.as_document().cloned())
        .collect();
    (cursor.get_i64("id").expect("id"), docs)
}

fn get_more(engine: &Engine, id: i64, max_time_ms: Option<i64>) -> Document {
    let mut cmd = rawdoc! { "getMore": id, "collection": "oplog.rs" };
    if let Some(ms) = max_time_ms {
        cmd.append(bson::raw::cstr!("maxTimeMS"), ms);
    }
    ok(engine, "local", cmd)
}

#[test]
fn a_tailable_cursor_on_the_oplog_stays_open_and_sees_new_entries() {
    let engine = member();
    let first = ok(
        &engine,
        "db",
        rawdoc! { "insert": "c", "documents": [{ "_id": 1 }] },
    );
    let after = operation_time(&first);
    // Meteor's shape: the entries after a known position, tailed.
    let find = ok(
        &engine,
        "local",
        rawdoc! {
            "find": "oplog.rs", "filter": { "ts": { "$gt": after }, "ns": "db.c" },
            "tailable": true, "awaitData": true, "oplogReplay": true,
        },
    );
    let (id, docs) = cursor_of(&find);
    assert!(docs.is_empty(), "nothing after the position yet: {docs:?}");
    assert_ne!(id, 0, "a tailable cursor stays open at the end");
    // Nothing new: an awaitData getMore waits its maxTimeMS, then answers empty.
    let started = Instant::now();
    let (same, docs) = cursor_of(&get_more(&engine, id, Some(150)));
    assert!(docs.is_empty());
    assert_eq!(same, id);
    assert!(started.elapsed() >= Duration::from_millis(140), "it waited");
    // A write during the wait wakes it.
    std::thread::scope(|scope| {
        let waiter = scope.spawn(|| {
            let started = Instant::now();
            (
                cursor_of(&get_more(&engine, id, Some(20_000))),
                started.elapsed(),
            )
        });
        std::thread::sleep(Duration::from_millis(100));
        ok(
            &engine,
            "db",
            rawdoc! { "insert": "c", "documents": [{ "_id": 2 }] },
        );
        let ((same, docs), waited) = waiter.join().expect("getMore");
        assert_eq!(same, id);
        assert!(waited < Duration::from_secs(10), "woken by the commit");
        assert_eq!(docs.len(), 1, "{docs:?}");
        assert_eq!(docs[0].get_str("op").ok(), Some("i"));
        assert_eq!(
            docs[0]
                .get_document("o")
                .ok()
                .and_then(|o| o.get_i32("_id").ok()),
            Some(2)
        );
    });
    // Without awaitData, maxTimeMS on getMore is refused as mongod refuses it.
    let plain = ok(
        &engine,
        "local",
        rawdoc! { "find": "oplog.rs", "tailable": true },
    );
    let (plain_id, docs) = cursor_of(&plain);
    assert!(!docs.is_empty());
    assert_ne!(plain_id, 0);
    fails(
        &engine,
        "local",
        rawdoc! { "getMore": plain_id, "collection": "oplog.rs", "maxTimeMS": 10_i64 },
        2,
    );
}

#[test]
fn tailing_is_refused_where_mongod_refuses_it() {
    let engine = member();
    ok(
        &engine,
        "db",
        rawdoc! { "insert": "c", "documents": [{ "_id": 1 }] },
    );
    fails(&engine, "db", rawdoc! { "find": "c", "tailable": true }, 2);
    fails(
        &engine,
        "local",
        rawdoc! { "find": "oplog.rs", "tailable": true, "sort": { "ts": -1 } },
        2,
    );
    fails(
        &engine,
        "local",
        rawdoc! { "find": "oplog.rs", "awaitData": true },
        9,
    );
}

#[test]
fn a_tailing_cursor_whose_position_rolled_off_the_oplog_is_lost() {
    let engine = support::engine();
    let mut options = Options::new("rs0", "127.0.0.1:27017");
    options.oplog_size_bytes = 16 * 1024;
    engine.start_replica_set(&options).expect("start");
    let find = ok(
        &engine,
        "local",
        rawdoc! { "find": "oplog.rs", "tailable": true, "batchSize": 1 },
    );
    let (id, docs) = cursor_of(&find);
    assert_eq!(docs.len(), 1);
    let pad = "x".repeat(1000);
    for i in 0..64 {
        ok(
            &engine,
            "db",
            rawdoc! { "insert": "c", "documents": [{ "_id": i, "pad": pad.clone() }] },
        );
    }
    let reply = fails(
        &engine,
        "local",
        rawdoc! { "getMore": id, "collection": "oplog.rs" },
        136,
    );
    assert_eq!(reply.get_str("codeName").ok(), Some("CappedPositionLost"));
}
