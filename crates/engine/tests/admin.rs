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
    ok(&engine, "db", rawdoc! { "find": "c", "filter": { "_id": 2 } });
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
