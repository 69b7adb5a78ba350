//! The command surface through the official Rust driver (issue 22): serverStatus counts
//! the driver's traffic, an oversized document in an insert batch is a write error for
//! itself, fsyncLock makes the one file copyable, and `shutdown` stops the server cleanly.

use crate::harness::TestServer;
use mongodb::bson::{Document, doc};
use std::time::{Duration, Instant};

fn admin(server: &TestServer, command: Document) -> Document {
    server
        .client()
        .database("admin")
        .run_command(command)
        .run()
        .expect("command succeeds")
}

#[test]
fn driver_traffic_moves_server_status_counters() {
    let server = TestServer::start(&[]);
    let client = server.client();
    let coll = client.database("app").collection::<Document>("c");
    coll.insert_many(vec![
        doc! { "_id": 1 },
        doc! { "_id": 2 },
        doc! { "_id": 3 },
    ])
    .run()
    .expect("insert");
    let found: Vec<_> = coll
        .find(doc! {})
        .batch_size(1)
        .run()
        .expect("find")
        .collect::<Result<_, _>>()
        .expect("docs");
    assert_eq!(found.len(), 3);
    coll.update_one(doc! { "_id": 1 }, doc! { "$set": { "a": 1 } })
        .run()
        .expect("update");
    coll.delete_one(doc! { "_id": 2 }).run().expect("delete");
    let status = admin(&server, doc! { "serverStatus": 1 });
    let counters = status.get_document("opcounters").expect("opcounters");
    assert_eq!(counters.get_i64("insert").ok(), Some(3), "{counters:?}");
    assert_eq!(counters.get_i64("query").ok(), Some(1), "{counters:?}");
    assert_eq!(counters.get_i64("getmore").ok(), Some(2), "{counters:?}");
    assert_eq!(counters.get_i64("update").ok(), Some(1), "{counters:?}");
    assert_eq!(counters.get_i64("delete").ok(), Some(1), "{counters:?}");
    let network = status.get_document("network").expect("network");
    assert!(
        network.get_i64("bytesIn").is_ok_and(|n| n > 0),
        "{network:?}"
    );
    assert!(
        network.get_i64("numRequests").is_ok_and(|n| n >= 7),
        "{network:?}"
    );
    let storage = status.get_document("storageEngine").expect("storageEngine");
    assert_eq!(storage.get_str("name").ok(), Some("multiforadb"));
    assert_eq!(storage.get_bool("persistent").ok(), Some(true));
    let stats = server
        .client()
        .database("app")
        .run_command(doc! { "dbStats": 1 })
        .run()
        .expect("dbStats");
    let size = |key: &str| {
        let value = stats
            .get(key)
            .unwrap_or_else(|| panic!("no {key}: {stats:?}"));
        value
            .as_i64()
            .or_else(|| value.as_i32().map(i64::from))
            .expect("a number")
    };
    let (total, used) = (size("fsTotalSize"), size("fsUsedSize"));
    assert!(total > 0 && (0..=total).contains(&used), "{stats:?}");
    // hostInfo.extra from /proc, where the machine has it.
    let host = admin(&server, doc! { "hostInfo": 1 });
    let extra = host.get_document("extra").expect("extra");
    if std::path::Path::new("/proc/version").exists() {
        assert!(
            extra
                .get_str("versionString")
                .is_ok_and(|v| v.starts_with("Linux")),
            "{extra:?}"
        );
        assert!(
            extra.get_i64("maxOpenFiles").is_ok_and(|n| n > 0),
            "{extra:?}"
        );
    }
}

/// The driver refuses a document over 16 MiB in `insert_many` itself, so the batch goes
/// as a command (mongosh and other drivers send it): the server answers with a write
/// error for that document alone.
#[test]
fn an_oversized_document_in_an_insert_command_is_a_write_error_for_itself() {
    let server = TestServer::start(&[]);
    let db = server.client().database("app");
    let big = doc! { "_id": 2, "pad": "x".repeat(16 * 1024 * 1024) };
    let reply = db
        .run_command(doc! {
            "insert": "c",
            "documents": [{ "_id": 1 }, big, { "_id": 3 }],
            "ordered": false,
        })
        .run()
        .expect("the command succeeds; one document fails");
    assert_eq!(reply.get_i32("n").ok(), Some(2), "{reply:?}");
    let errors = reply.get_array("writeErrors").expect("writeErrors");
    assert_eq!(errors.len(), 1, "{errors:?}");
    let error = errors[0].as_document().expect("error");
    assert_eq!(error.get_i32("index").ok(), Some(1));
    assert_eq!(error.get_i32("code").ok(), Some(2));
    assert!(
        error
            .get_str("errmsg")
            .is_ok_and(|m| m.starts_with("object to insert too large. size in bytes: 16777240")),
        "{error:?}"
    );
    let coll = db.collection::<Document>("c");
    assert_eq!(coll.count_documents(doc! {}).run().expect("count"), 2);
}

#[test]
fn driver_fsync_lock_then_a_file_copy_opens_and_shutdown_exits_cleanly() {
    let db = TestServer::temp_db();
    let mut server = TestServer::start_at(&db, &[]);
    let coll = server.client().database("app").collection::<Document>("c");
    let docs: Vec<Document> = (0..200).map(|i| doc! { "_id": i }).collect();
    coll.insert_many(docs).run().expect("insert");
    let locked = admin(&server, doc! { "fsync": 1, "lock": true });
    assert_eq!(locked.get_i64("lockCount").ok(), Some(1), "{locked:?}");
    let copy = db.with_file_name("copy.mfdb");
    std::fs::copy(&db, &copy).expect("copy");
    let unlocked = admin(&server, doc! { "fsyncUnlock": 1 });
    assert_eq!(unlocked.get_i64("lockCount").ok(), Some(0));
    coll.insert_one(doc! { "_id": 1000 })
        .run()
        .expect("writes resume");
    // shutdown: the driver may see the reply or the closed connection; the process exits 0.
    let _ = server
        .client()
        .database("admin")
        .run_command(doc! { "shutdown": 1, "timeoutSecs": 1 })
        .run();
    let deadline = Instant::now() + Duration::from_secs(10);
    while server.is_running() {
        assert!(
            Instant::now() < deadline,
            "server did not exit after shutdown"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
    assert!(server.log_contains(r#""msg":"Terminating via shutdown command""#));
    let reopened = TestServer::start_at(&db, &[]);
    let count = reopened
        .client()
        .database("app")
        .collection::<Document>("c")
        .count_documents(doc! {})
        .run()
        .expect("count");
    assert_eq!(count, 201);
    drop(reopened);
    let from_copy = TestServer::start_at(&copy, &[]);
    let count = from_copy
        .client()
        .database("app")
        .collection::<Document>("c")
        .count_documents(doc! {})
        .run()
        .expect("count");
    assert_eq!(
        count, 200,
        "the copy holds what was written before the lock"
    );
}

/// The same through an OP_MSG document sequence (how PyMongo and the Node driver send an
/// insert batch): the oversized document reaches the engine, which refuses it alone,
/// instead of the wire layer refusing the whole message.
#[test]
fn an_oversized_document_in_a_document_sequence_is_a_write_error_for_itself() {
    let server = TestServer::start(&[]);
    let mut big = bson::rawdoc! { "_id": 2 };
    big.append(bson::raw::cstr!("pad"), "x".repeat(16 * 1024 * 1024));
    let message = wire::OpMsg {
        flags: wire::MsgFlags::default(),
        body: bson::rawdoc! { "insert": "c", "ordered": true, "$db": "app" },
        sequences: vec![wire::DocumentSequence {
            identifier: "documents".into(),
            documents: vec![bson::rawdoc! { "_id": 1 }, big, bson::rawdoc! { "_id": 3 }],
        }],
    };
    let frame = message.encode(5, 0).expect("encode");
    let mut stream = server.raw();
    let (_, reply) = crate::harness::roundtrip(&mut stream, &frame);
    assert_eq!(reply.get_f64("ok").ok(), Some(1.0), "{reply:?}");
    assert_eq!(
        reply.get_i32("n").ok(),
        Some(1),
        "ordered: stops at the error"
    );
    let errors = reply.get_array("writeErrors").expect("writeErrors");
    let error = errors[0].as_document().expect("error");
    assert_eq!(error.get_i32("index").ok(), Some(1));
    assert_eq!(error.get_i32("code").ok(), Some(2));
}

/// A standalone has no oplog: `watch()` fails as on mongod's standalone, with 40573 (not
/// 238), on a collection and on a database.
#[test]
fn watch_on_a_standalone_fails_with_40573() {
    let server = TestServer::start(&[]);
    let db = server.client().database("app");
    let check = |error: mongodb::error::Error| match *error.kind {
        mongodb::error::ErrorKind::Command(ref command) => {
            assert_eq!(command.code, 40573, "{command:?}");
            assert_eq!(command.code_name, "Location40573");
            assert_eq!(
                command.message,
                "The $changeStream stage is only supported on replica sets"
            );
        }
        ref other => panic!("not a command error: {other:?}"),
    };
    let coll = db.collection::<Document>("c");
    check(coll.watch().run().err().expect("no change streams"));
    check(db.watch().run().err().expect("no change streams"));
}

/// `getLog: 'global'` holds the server's recent lines in mongod's JSON shape, as strings;
/// `getLog: '*'` names the logs there are.
#[test]
fn get_log_global_returns_recent_lines_as_mongod_shapes_them() {
    let server = TestServer::start(&[]);
    let names = admin(&server, doc! { "getLog": "*" });
    let names: Vec<&str> = names
        .get_array("names")
        .expect("names")
        .iter()
        .filter_map(|name| name.as_str())
        .collect();
    assert_eq!(names, ["global", "startupWarnings"]);
    server
        .client()
        .database("app")
        .run_command(doc! { "find": "c" })
        .run()
        .expect("find");
    let log = admin(&server, doc! { "getLog": "global" });
    let lines: Vec<&str> = log
        .get_array("log")
        .expect("log")
        .iter()
        .map(|line| line.as_str().expect("a line is a string"))
        .collect();
    let total = log.get_i32("totalLinesWritten").expect("totalLinesWritten");
    assert!(usize::try_from(total).expect("positive") >= lines.len());
    for line in &lines {
        assert!(line.starts_with("{\"t\":{\"$date\":\""), "{line}");
        for field in [
            "\"s\":\"",
            "\"c\":\"",
            "\"id\":",
            "\"ctx\":\"",
            "\"msg\":\"",
        ] {
            assert!(line.contains(field), "{field} missing: {line}");
        }
    }
    let accepted = lines
        .iter()
        .find(|line| line.contains("Connection accepted"))
        .unwrap_or_else(|| panic!("no connection line: {lines:#?}"));
    assert!(
        accepted.contains(
            "\"s\":\"I\",\"c\":\"NETWORK\",\"id\":22943,\"ctx\":\"listener\",\
             \"msg\":\"Connection accepted\",\"attr\":{\"remote\":\"127.0.0.1:"
        ),
        "{accepted}"
    );
    // The harness runs the server at debug level: each command is a COMMAND line.
    assert!(
        lines
            .iter()
            .any(|line| line.contains("\"c\":\"COMMAND\"") && line.contains("command find")),
        "{lines:#?}"
    );
}

/// `admin`, `config` and `local` are listed as any database once they hold something, and
/// `filter`, `nameOnly` and `authorizedDatabases` shape the list as on mongod (with
/// `nameOnly` the filter sees only the name).
#[test]
fn list_databases_shows_the_system_databases_and_honours_its_options() {
    let server = TestServer::start(&[]);
    let client = server.client();
    assert!(client.list_database_names().run().expect("list").is_empty());
    for name in ["admin", "config", "local", "app"] {
        client
            .database(name)
            .collection::<Document>("t")
            .insert_one(doc! { "a": 1 })
            .run()
            .expect("insert");
    }
    let all = admin(&server, doc! { "listDatabases": 1 });
    let databases = all.get_array("databases").expect("databases");
    let names: Vec<&str> = databases
        .iter()
        .filter_map(|d| d.as_document()?.get_str("name").ok())
        .collect();
    assert_eq!(names, ["admin", "app", "config", "local"]);
    for database in databases {
        let database = database.as_document().expect("document");
        assert!(
            database.get_i64("sizeOnDisk").is_ok_and(|n| n > 0),
            "{database:?}"
        );
        assert_eq!(database.get_bool("empty").ok(), Some(false));
    }
    assert!(all.get_i64("totalSize").is_ok_and(|n| n > 0), "{all:?}");
    assert!(all.get_i64("totalSizeMb").is_ok(), "{all:?}");
    let filtered = admin(
        &server,
        doc! { "listDatabases": 1, "filter": { "name": { "$regex": "^(admin|local)$" } } },
    );
    assert_eq!(filtered.get_array("databases").map(Vec::len).ok(), Some(2));
    let names_only = admin(&server, doc! { "listDatabases": 1, "nameOnly": true });
    let first = names_only.get_array("databases").expect("databases")[0]
        .as_document()
        .expect("document")
        .clone();
    assert_eq!(first, doc! { "name": "admin" });
    assert!(names_only.get("totalSize").is_none(), "{names_only:?}");
    let by_size = admin(
        &server,
        doc! { "listDatabases": 1, "nameOnly": true, "filter": { "sizeOnDisk": { "$gt": 0 } } },
    );
    assert_eq!(
        by_size.get_array("databases").map(Vec::len).ok(),
        Some(0),
        "{by_size:?}"
    );
    let authorized = admin(
        &server,
        doc! { "listDatabases": 1, "authorizedDatabases": true, "nameOnly": true },
    );
    assert_eq!(
        authorized.get_array("databases").map(Vec::len).ok(),
        Some(4)
    );
}

/// The `$collStats` stage (what mongosh's `db.coll.stats()` runs) as mongod shapes it.
#[test]
fn coll_stats_stage_reports_the_sections_asked_for() {
    let server = TestServer::start(&[]);
    let db = server.client().database("app");
    let coll = db.collection::<Document>("c");
    let docs: Vec<Document> = (0..50).map(|i| doc! { "_id": i, "k": i % 5 }).collect();
    coll.insert_many(docs).run().expect("insert");
    coll.create_index(mongodb::IndexModel::builder().keys(doc! { "k": 1 }).build())
        .run()
        .expect("index");
    assert_eq!(coll.find(doc! {}).run().expect("find").count(), 50);
    let stage = doc! { "$collStats": {
        "latencyStats": { "histograms": true },
        "storageStats": { "scale": 1 },
        "count": {},
        "queryExecStats": {},
    } };
    let out: Vec<Document> = coll
        .aggregate(vec![stage])
        .run()
        .expect("aggregate")
        .collect::<Result<_, _>>()
        .expect("documents");
    assert_eq!(out.len(), 1, "{out:?}");
    let stats = &out[0];
    let keys: Vec<&str> = stats.keys().map(String::as_str).collect();
    assert_eq!(
        keys,
        [
            "ns",
            "host",
            "localTime",
            "latencyStats",
            "storageStats",
            "count",
            "queryExecStats"
        ]
    );
    assert_eq!(stats.get_str("ns").ok(), Some("app.c"));
    assert!(stats.get_datetime("localTime").is_ok());
    let latency = stats.get_document("latencyStats").expect("latencyStats");
    let reads = latency.get_document("reads").expect("reads");
    assert!(reads.get_i64("ops").is_ok_and(|n| n >= 1), "{latency:?}");
    assert!(reads.get_i64("latency").is_ok(), "{latency:?}");
    assert!(reads.get_array("histogram").is_ok(), "{latency:?}");
    for section in ["writes", "commands", "transactions"] {
        assert!(latency.get_document(section).is_ok(), "{latency:?}");
    }
    let writes = latency.get_document("writes").expect("writes");
    assert!(writes.get_i64("ops").is_ok_and(|n| n >= 1), "{latency:?}");
    let storage = stats.get_document("storageStats").expect("storageStats");
    assert_eq!(storage.get_i32("count").ok(), Some(50), "{storage:?}");
    assert_eq!(storage.get_i32("nindexes").ok(), Some(2), "{storage:?}");
    let index_sizes = storage.get_document("indexSizes").expect("indexSizes");
    assert!(index_sizes.contains_key("_id_") && index_sizes.contains_key("k_1"));
    for key in [
        "size",
        "storageSize",
        "totalIndexSize",
        "totalSize",
        "avgObjSize",
    ] {
        assert!(storage.contains_key(key), "{key}: {storage:?}");
    }
    assert_eq!(stats.get_i64("count").ok(), Some(50));
    let scans = stats
        .get_document("queryExecStats")
        .and_then(|q| q.get_document("collectionScans"))
        .expect("collectionScans");
    assert!(scans.get_i64("total").is_ok() && scans.get_i64("nonTailable").is_ok());
    // Only what was asked for; a stage after it runs on its document.
    let only: Vec<Document> = coll
        .aggregate(vec![
            doc! { "$collStats": { "count": {} } },
            doc! { "$project": { "_id": 0, "count": 1 } },
        ])
        .run()
        .expect("aggregate")
        .collect::<Result<_, _>>()
        .expect("documents");
    assert_eq!(only, [doc! { "count": 50_i64 }]);
    let code = |pipeline: Vec<Document>, coll: &str| {
        let error = db
            .collection::<Document>(coll)
            .aggregate(pipeline)
            .run()
            .expect_err("fails");
        match *error.kind {
            mongodb::error::ErrorKind::Command(ref command) => command.code,
            ref other => panic!("{other:?}"),
        }
    };
    let storage_stage = doc! { "$collStats": { "storageStats": {} } };
    assert_eq!(code(vec![storage_stage.clone()], "missing"), 26);
    assert_eq!(
        code(vec![doc! { "$collStats": { "bogus": {} } }], "c"),
        40415
    );
    assert_eq!(code(vec![doc! { "$match": {} }, storage_stage], "c"), 40602);
}

/// validate takes mongod's options (the checks run whatever they say; `repair` is refused
/// on a running server, and the combinations mongod refuses are refused with 72) and
/// reports in mongod's shape.
#[test]
fn validate_accepts_mongod_s_options_and_reports_its_fields() {
    let server = TestServer::start(&[]);
    let db = server.client().database("app");
    let coll = db.collection::<Document>("c");
    let docs: Vec<Document> = (0..30).map(|i| doc! { "_id": i, "k": i }).collect();
    coll.insert_many(docs).run().expect("insert");
    coll.create_index(mongodb::IndexModel::builder().keys(doc! { "k": 1 }).build())
        .run()
        .expect("index");
    for options in [
        doc! {},
        doc! { "full": true },
        doc! { "scandata": true },
        doc! { "background": true },
        doc! { "checkBSONConformance": true },
        doc! { "metadata": true },
        doc! { "full": true, "checkBSONConformance": true, "scandata": false },
    ] {
        let mut command = doc! { "validate": "c" };
        command.extend(options.clone());
        let reply = db.run_command(command).run().expect("validate");
        assert_eq!(
            reply.get_bool("valid").ok(),
            Some(true),
            "{options:?} {reply:?}"
        );
        assert_eq!(reply.get_i32("nrecords").ok(), Some(30), "{reply:?}");
        assert_eq!(reply.get_i32("nIndexes").ok(), Some(2), "{reply:?}");
        let keys = reply.get_document("keysPerIndex").expect("keysPerIndex");
        assert_eq!(keys, &doc! { "_id_": 30, "k_1": 30 });
        let details = reply.get_document("indexDetails").expect("indexDetails");
        assert_eq!(
            details
                .get_document("k_1")
                .and_then(|d| d.get_bool("valid"))
                .ok(),
            Some(true)
        );
        assert!(
            reply.get_array("errors").is_ok_and(Vec::is_empty),
            "{reply:?}"
        );
        assert!(reply.get_array("warnings").is_ok(), "{reply:?}");
    }
    let refused = |options: Document| {
        let mut command = doc! { "validate": "c" };
        command.extend(options);
        match *db.run_command(command).run().expect_err("refused").kind {
            mongodb::error::ErrorKind::Command(ref command) => {
                (command.code, command.code_name.clone())
            }
            ref other => panic!("{other:?}"),
        }
    };
    let invalid = (72, "InvalidOptions".to_owned());
    assert_eq!(refused(doc! { "repair": true }), invalid);
    assert_eq!(refused(doc! { "background": true, "full": true }), invalid);
    assert_eq!(refused(doc! { "metadata": true, "full": true }), invalid);
}
