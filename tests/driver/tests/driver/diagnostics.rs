//! What monitoring and diagnostics read, through the official Rust driver (issue 22, its
//! last items): tailable cursors refused as mongod refuses them on a collection that is not
//! capped, profile documents with their execution counts, latency histograms,
//! `admin.system.version`, and a command's `comment` in the slow-operation log and in
//! `currentOp`.

use crate::harness::TestServer;
use mongodb::bson::{Document, doc};
use mongodb::error::ErrorKind;
use mongodb::options::CursorType;

/// The code, code name and message of a command's failure.
fn failure(error: &mongodb::error::Error) -> (i32, String, String) {
    match *error.kind {
        ErrorKind::Command(ref failure) => (
            failure.code,
            failure.code_name.clone(),
            failure.message.clone(),
        ),
        ref other => panic!("not a command error: {other:?}"),
    }
}

#[test]
fn tailable_find_on_a_collection_that_is_not_capped_is_mongods_bad_value() {
    let server = TestServer::start(&[]);
    let db = server.client().database("app");
    let coll = db.collection::<Document>("plain");
    coll.insert_one(doc! { "_id": 1 }).run().expect("insert");
    for kind in [CursorType::Tailable, CursorType::TailableAwait] {
        let error = coll
            .find(doc! {})
            .cursor_type(kind)
            .run()
            .map(|_| ())
            .expect_err("refused");
        // The text mongod 7.0 gives (the Go driver's test of it has the same).
        let expected = "error processing query: ns=app.plainTree: $and\nSort: {}\nProj: {}\n \
                        tailable cursor requested on non capped collection";
        assert_eq!(
            failure(&error),
            (2, "BadValue".to_owned(), expected.to_owned()),
            "{kind:?}"
        );
    }
    // A filter, sort and projection appear as mongod prints them.
    let error = db
        .run_command(doc! {
            "find": "plain", "filter": { "a": 1 }, "sort": { "b": 1 },
            "projection": { "c": 1 }, "tailable": true,
        })
        .run()
        .expect_err("refused");
    let expected = "error processing query: ns=app.plainTree: a $eq 1\nSort: { b: 1 }\nProj: \
                    { c: 1 }\n tailable cursor requested on non capped collection";
    assert_eq!(
        failure(&error),
        (2, "BadValue".to_owned(), expected.to_owned())
    );
    // A collection that does not exist: an empty cursor, as on mongod.
    let reply = db
        .run_command(doc! { "find": "missing", "tailable": true, "awaitData": true })
        .run()
        .expect("no collection, no cursor");
    let cursor = reply.get_document("cursor").expect("cursor");
    assert_eq!(cursor.get_i64("id").ok(), Some(0), "{reply:?}");
    // awaitData alone is FailedToParse.
    let error = db
        .run_command(doc! { "find": "plain", "awaitData": true })
        .run()
        .expect_err("refused");
    assert_eq!(
        failure(&error),
        (
            9,
            "FailedToParse".to_owned(),
            "Cannot set 'awaitData' without also setting 'tailable'".to_owned()
        )
    );
}

/// (latency, ops, the histogram's counts summed, its buckets' lower bounds) of one kind.
fn latency_kind(section: &Document, kind: &str) -> (i64, i64, i64, Vec<i64>) {
    let kind = section.get_document(kind).expect("kind");
    let histogram = kind.get_array("histogram").expect("histogram");
    let buckets: Vec<&Document> = histogram
        .iter()
        .map(|b| b.as_document().expect("bucket"))
        .collect();
    (
        kind.get_i64("latency").expect("latency"),
        kind.get_i64("ops").expect("ops"),
        buckets
            .iter()
            .map(|b| b.get_i64("count").expect("count"))
            .sum(),
        buckets
            .iter()
            .map(|b| b.get_i64("micros").expect("micros"))
            .collect(),
    )
}

#[test]
fn latency_histograms_count_each_operation_in_mongods_buckets() {
    let server = TestServer::start(&[]);
    let client = server.client();
    let db = client.database("app");
    let coll = db.collection::<Document>("c");
    for i in 0..5 {
        coll.insert_one(doc! { "_id": i }).run().expect("insert");
    }
    for _ in 0..3 {
        coll.find(doc! {}).run().expect("find").for_each(drop);
    }
    coll.count_documents(doc! {}).run().expect("count");
    let stats = coll
        .aggregate(vec![
            doc! { "$collStats": { "latencyStats": { "histograms": true } } },
        ])
        .run()
        .expect("$collStats")
        .next()
        .expect("one document")
        .expect("document");
    let latency = stats.get_document("latencyStats").expect("latencyStats");
    // Three finds and a count (an aggregate) read; five inserts wrote.
    let (micros, ops, counted, bounds) = latency_kind(latency, "reads");
    assert_eq!((ops, counted), (4, 4), "{latency:?}");
    assert!(micros > 0, "{latency:?}");
    let known = [
        0i64, 2, 4, 8, 16, 32, 64, 128, 256, 512, 1024, 2048, 3072, 4096, 6144,
    ];
    assert!(
        bounds.iter().all(|b| known.contains(b) || *b > 6144),
        "{bounds:?}"
    );
    let (_, ops, counted, _) = latency_kind(latency, "writes");
    assert_eq!((ops, counted), (5, 5), "{latency:?}");
    let (_, ops, counted, _) = latency_kind(latency, "transactions");
    assert_eq!((ops, counted), (0, 0), "{latency:?}");
    // Without `histograms`, the totals only.
    let plain = coll
        .aggregate(vec![doc! { "$collStats": { "latencyStats": {} } }])
        .run()
        .expect("$collStats")
        .next()
        .expect("one document")
        .expect("document");
    let reads = plain
        .get_document("latencyStats")
        .and_then(|l| l.get_document("reads"))
        .expect("reads");
    assert!(!reads.contains_key("histogram"), "{reads:?}");
    // The first $collStats has finished since: a read too.
    assert_eq!(reads.get_i64("ops").ok(), Some(5), "{reads:?}");
    // serverStatus' opLatencies counts every command of the server.
    let status = client
        .database("admin")
        .run_command(doc! { "serverStatus": 1, "opLatencies": { "histograms": true } })
        .run()
        .expect("serverStatus");
    let op_latencies = status.get_document("opLatencies").expect("opLatencies");
    let (_, ops, counted, _) = latency_kind(op_latencies, "reads");
    assert!(
        ops >= 5,
        "the finds, the count and the aggregate: {op_latencies:?}"
    );
    assert_eq!(ops, counted);
    let (_, ops, counted, _) = latency_kind(op_latencies, "writes");
    assert_eq!((ops, counted), (5, 5));
    let (_, ops, counted, _) = latency_kind(op_latencies, "commands");
    assert!(ops > 0 && ops == counted, "{op_latencies:?}");
    let plain = client
        .database("admin")
        .run_command(doc! { "serverStatus": 1 })
        .run()
        .expect("serverStatus");
    let reads = plain
        .get_document("opLatencies")
        .and_then(|l| l.get_document("reads"))
        .expect("reads");
    assert!(!reads.contains_key("histogram"), "{reads:?}");
}

fn collection_names(db: &mongodb::sync::Database) -> Vec<String> {
    db.list_collection_names().run().expect("listCollections")
}

#[test]
fn admin_system_version_and_config_system_sessions_read_as_on_mongod() {
    let server = TestServer::start(&[]);
    let client = server.client();
    let admin = client.database("admin");
    let version: Vec<Document> = admin
        .collection::<Document>("system.version")
        .find(doc! {})
        .run()
        .expect("find")
        .collect::<Result<_, _>>()
        .expect("documents");
    assert_eq!(
        version,
        vec![doc! { "_id": "featureCompatibilityVersion", "version": "7.0" }]
    );
    // A filter that matches nothing, and a projection, work as on any collection.
    let none = admin
        .collection::<Document>("system.version")
        .find_one(doc! { "_id": "other" })
        .run()
        .expect("find");
    assert_eq!(none, None);
    let projected = admin
        .collection::<Document>("system.version")
        .find_one(doc! {})
        .projection(doc! { "_id": 0 })
        .run()
        .expect("find");
    assert_eq!(projected, Some(doc! { "version": "7.0" }));
    assert!(
        collection_names(&admin).contains(&"system.version".to_owned()),
        "{:?}",
        collection_names(&admin)
    );
    // The driver's commands carry a session: config.system.sessions holds it.
    client
        .database("app")
        .collection::<Document>("c")
        .insert_one(doc! { "_id": 1 })
        .run()
        .expect("insert");
    let config = client.database("config");
    assert_eq!(
        collection_names(&config),
        vec!["system.sessions".to_owned()]
    );
    let sessions: Vec<Document> = config
        .collection::<Document>("system.sessions")
        .find(doc! {})
        .run()
        .expect("find")
        .collect::<Result<_, _>>()
        .expect("documents");
    assert!(!sessions.is_empty());
    for session in &sessions {
        let id = session.get_document("_id").expect("_id");
        assert!(id.get_binary_generic("uid").is_ok(), "{session:?}");
        assert!(id.contains_key("id"), "{session:?}");
        assert!(session.get_datetime("lastUse").is_ok(), "{session:?}");
    }
    let indexes: Vec<String> = config
        .collection::<Document>("system.sessions")
        .list_index_names()
        .run()
        .expect("listIndexes");
    assert_eq!(indexes, vec!["_id_".to_owned(), "lsidTTLIndex".to_owned()]);
}

/// The lines `getLog: 'global'` returns.
fn global_log(client: &mongodb::sync::Client) -> Vec<String> {
    let log = client
        .database("admin")
        .run_command(doc! { "getLog": "global" })
        .run()
        .expect("getLog");
    log.get_array("log")
        .expect("log")
        .iter()
        .map(|line| line.as_str().expect("a string").to_owned())
        .collect()
}

#[test]
fn a_slow_operation_is_logged_with_its_comment_as_mongod_logs_it() {
    let server = TestServer::start(&[]);
    let client = server.client();
    let db = client.database("app");
    db.collection::<Document>("c")
        .insert_many(vec![doc! { "_id": 1, "b": 1 }, doc! { "_id": 2, "b": 2 }])
        .run()
        .expect("insert");
    // Not slow at the default 100 ms: not logged.
    db.run_command(doc! { "find": "c", "filter": { "b": 1 }, "comment": "quick-find" })
        .run()
        .expect("find");
    assert!(
        !global_log(&client).iter().any(|l| l.contains("quick-find")),
        "a quick find is not slow"
    );
    // slowms 0 (profiling stays off): every operation is slow.
    db.run_command(doc! { "profile": 0, "slowms": 0 })
        .run()
        .expect("profile");
    db.run_command(doc! { "find": "c", "filter": { "b": 1 }, "comment": "slow-find" })
        .run()
        .expect("find");
    let lines = global_log(&client);
    let line = lines
        .iter()
        .find(|l| l.contains("slow-find"))
        .unwrap_or_else(|| panic!("no slow line: {lines:#?}"));
    assert!(
        line.contains("\"s\":\"I\",\"c\":\"COMMAND\",\"id\":51803,\"ctx\":\"conn"),
        "{line}"
    );
    assert!(
        line.contains(
            "\"msg\":\"Slow query\",\"attr\":{\"type\":\"command\",\"ns\":\"app.c\",\
             \"command\":{\"find\":\"c\",\"filter\":{\"b\":1},\"comment\":\"slow-find\""
        ),
        "{line}"
    );
    for part in [
        "\"planSummary\":\"COLLSCAN\"",
        "\"keysExamined\":0",
        "\"docsExamined\":2",
        "\"nreturned\":1",
        "\"protocol\":\"op_msg\"",
        "\"durationMillis\":",
    ] {
        assert!(line.contains(part), "{part} missing: {line}");
    }
    // The server's own log has the same line.
    assert!(
        server.log_contains("slow-find"),
        "{:#?}",
        server.log_lines()
    );
}

#[test]
fn current_op_shows_the_comment_and_a_write_at_fsync_lock_honours_max_time_ms() {
    let server = TestServer::start(&[]);
    let client = server.client();
    let admin = client.database("admin");
    let coll = client.database("app").collection::<Document>("c");
    coll.insert_one(doc! { "_id": 0 }).run().expect("insert");
    admin
        .run_command(doc! { "fsync": 1, "lock": true })
        .run()
        .expect("fsyncLock");
    // A write with maxTimeMS gives up at the lock: 50, and nothing written.
    let started = std::time::Instant::now();
    let error = client
        .database("app")
        .run_command(doc! {
            "insert": "c", "documents": [{ "_id": 1 }], "maxTimeMS": 200,
        })
        .run()
        .expect_err("gives up");
    assert_eq!(failure(&error).0, 50, "{error:?}");
    assert_eq!(failure(&error).1, "MaxTimeMSExpired");
    assert!(started.elapsed() < std::time::Duration::from_secs(30));
    // One without maxTimeMS waits; currentOp shows it with its comment.
    let blocked = std::thread::spawn({
        let client = client.clone();
        move || {
            client
                .database("app")
                .run_command(doc! {
                    "insert": "c", "documents": [{ "_id": 2 }], "comment": "waiting-insert",
                })
                .run()
        }
    });
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
    let op = loop {
        let ops = admin
            .run_command(doc! { "currentOp": 1, "op": "insert" })
            .run()
            .expect("currentOp");
        let found = ops
            .get_array("inprog")
            .expect("inprog")
            .iter()
            .filter_map(|op| op.as_document())
            .find(|op| {
                op.get_document("command")
                    .and_then(|c| c.get_str("comment"))
                    .ok()
                    == Some("waiting-insert")
            })
            .cloned();
        if let Some(op) = found {
            break op;
        }
        assert!(std::time::Instant::now() < deadline, "{ops:?}");
        std::thread::sleep(std::time::Duration::from_millis(20));
    };
    assert_eq!(op.get_str("ns").ok(), Some("app.c"), "{op:?}");
    admin
        .run_command(doc! { "fsyncUnlock": 1 })
        .run()
        .expect("fsyncUnlock");
    let inserted = blocked
        .join()
        .expect("thread")
        .expect("the insert went through");
    assert_eq!(inserted.get_i32("n").ok(), Some(1), "{inserted:?}");
    let ids: Vec<Document> = coll
        .find(doc! {})
        .run()
        .expect("find")
        .collect::<Result<_, _>>()
        .expect("documents");
    assert_eq!(ids, vec![doc! { "_id": 0 }, doc! { "_id": 2 }]);
}
