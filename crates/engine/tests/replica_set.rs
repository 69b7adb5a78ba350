//! The one-member replica set (issue 43) at the engine: hello's replica-set fields, the
//! persisted config, term and oplog across restarts, the `replSet*` commands, cluster
//! time on every reply, and retryable writes (a retried statement answers its first
//! result and is not applied twice, across a reopen too).

use crate::support::{self, fails, ok, run};
use bson::spec::BinarySubtype;
use bson::{Binary, Bson, Document, RawDocumentBuf, doc, rawdoc};
use engine::Engine;
use engine::repl::Options;

fn temp_path(name: &str) -> std::path::PathBuf {
    let dir = std::env::temp_dir().join(format!(
        "mfdb-repl-{name}-{}-{}",
        std::process::id(),
        std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_nanos())
    ));
    std::fs::create_dir_all(&dir).expect("dir");
    dir.join("db.mfdb")
}

fn member_at(path: &std::path::Path, name: &str) -> Engine {
    let engine = Engine::open(path, support::options()).expect("open");
    engine
        .start_replica_set(&Options::new(name, "127.0.0.1:27017"))
        .expect("start the member");
    engine
}

pub(crate) fn member() -> Engine {
    let engine = support::engine();
    engine
        .start_replica_set(&Options::new("rs0", "127.0.0.1:27017"))
        .expect("start the member");
    engine
}

fn oplog(engine: &Engine) -> Vec<Document> {
    let reply = ok(
        engine,
        "local",
        rawdoc! { "find": "oplog.rs", "filter": {}, "batchSize": 1000 },
    );
    reply
        .get_document("cursor")
        .and_then(|c| c.get_array("firstBatch"))
        .expect("batch")
        .iter()
        .filter_map(|d| d.as_document().cloned())
        .collect()
}

fn lsid(byte: u8) -> Document {
    doc! { "id": Binary { subtype: BinarySubtype::Uuid, bytes: vec![byte; 16] } }
}

fn raw(doc: Document) -> RawDocumentBuf {
    RawDocumentBuf::try_from(&doc).expect("raw")
}

#[test]
fn a_standalone_refuses_the_replica_set_commands_and_transaction_numbers() {
    let engine = support::engine();
    let hello = ok(&engine, "admin", rawdoc! { "hello": 1 });
    assert!(hello.get("setName").is_none());
    assert!(hello.get("$clusterTime").is_none());
    fails(&engine, "admin", rawdoc! { "replSetGetStatus": 1 }, 76);
    fails(&engine, "admin", rawdoc! { "replSetGetConfig": 1 }, 76);
    fails(&engine, "admin", rawdoc! { "replSetInitiate": {} }, 76);
    let insert = raw(doc! {
        "insert": "c", "documents": [{ "_id": 1 }], "lsid": lsid(1), "txnNumber": 1_i64,
    });
    fails(&engine, "db", insert, 20);
}

#[test]
fn hello_reports_the_set_and_every_reply_carries_the_cluster_time() {
    let engine = member();
    let hello = ok(&engine, "admin", rawdoc! { "hello": 1 });
    assert_eq!(hello.get_str("setName").ok(), Some("rs0"));
    assert_eq!(
        hello.get_array("hosts").ok(),
        Some(&vec![Bson::String("127.0.0.1:27017".into())])
    );
    assert_eq!(hello.get_str("primary").ok(), Some("127.0.0.1:27017"));
    assert_eq!(hello.get_str("me").ok(), Some("127.0.0.1:27017"));
    assert_eq!(hello.get_bool("isWritablePrimary").ok(), Some(true));
    assert_eq!(hello.get_bool("secondary").ok(), Some(false));
    assert_eq!(hello.get_i32("setVersion").ok(), Some(1));
    let election = hello.get_object_id("electionId").expect("electionId");
    assert_eq!(election.to_hex(), "7fffffff0000000000000001", "term 1");
    let last_write = hello.get_document("lastWrite").expect("lastWrite");
    assert!(last_write.get_document("opTime").is_ok());
    assert!(last_write.get_datetime("majorityWriteDate").is_ok());

    let before = hello.get_timestamp("operationTime").expect("operationTime");
    let cluster = hello.get_document("$clusterTime").expect("$clusterTime");
    assert_eq!(cluster.get_timestamp("clusterTime").ok(), Some(before));
    let signature = cluster.get_document("signature").expect("signature");
    assert_eq!(signature.get_i64("keyId").ok(), Some(0));
    assert_eq!(
        signature.get_binary_generic("hash").ok().map(Vec::len),
        Some(20)
    );

    let inserted = ok(
        &engine,
        "db",
        rawdoc! { "insert": "c", "documents": [{ "_id": 1 }] },
    );
    let after = inserted
        .get_timestamp("operationTime")
        .expect("operationTime");
    assert!(
        (after.time, after.increment) > (before.time, before.increment),
        "{before:?} then {after:?}"
    );
    // Errors carry them too.
    let refused = fails(&engine, "db", rawdoc! { "noSuchCommand": 1 }, 59);
    assert!(refused.get_document("$clusterTime").is_ok(), "{refused:?}");
}

#[test]
fn the_oplog_opens_the_set_and_records_each_write() {
    let engine = member();
    ok(
        &engine,
        "db",
        rawdoc! { "insert": "c", "documents": [{ "_id": 1, "a": 1 }] },
    );
    ok(
        &engine,
        "db",
        rawdoc! { "update": "c", "updates": [{ "q": { "_id": 1 }, "u": { "$set": { "a": 2 } } }] },
    );
    ok(
        &engine,
        "db",
        rawdoc! { "delete": "c", "deletes": [{ "q": { "_id": 1 }, "limit": 1 }] },
    );
    let entries = oplog(&engine);
    let shape: Vec<(String, String)> = entries
        .iter()
        .map(|e| {
            (
                e.get_str("op").unwrap_or_default().to_owned(),
                e.get_str("ns").unwrap_or_default().to_owned(),
            )
        })
        .collect();
    let expected = [
        ("n", ""),
        ("n", ""),
        ("c", "db.$cmd"),
        ("i", "db.c"),
        ("u", "db.c"),
        ("d", "db.c"),
    ];
    let expected: Vec<(String, String)> = expected
        .iter()
        .map(|(op, ns)| ((*op).to_owned(), (*ns).to_owned()))
        .collect();
    assert_eq!(shape, expected, "{entries:#?}");
    assert_eq!(
        entries[0].get_document("o").ok(),
        Some(&doc! { "msg": "initiating set" })
    );
    assert_eq!(
        entries[1].get_document("o").ok(),
        Some(&doc! { "msg": "new primary" })
    );
    assert_eq!(
        entries[4].get_document("o").ok(),
        Some(&doc! { "$v": 2, "diff": { "u": { "a": 2 } } })
    );
    // User writes to the oplog are refused.
    let refused = ok(
        &engine,
        "local",
        rawdoc! { "insert": "oplog.rs", "documents": [{ "_id": 1 }] },
    );
    let errors = refused.get_array("writeErrors").expect("writeErrors");
    assert_eq!(
        errors[0].as_document().and_then(|e| e.get_i32("code").ok()),
        Some(73)
    );
}

#[test]
fn each_start_is_a_new_term_of_the_same_set() {
    let path = temp_path("terms");
    let set_id = {
        let engine = member_at(&path, "rs0");
        ok(
            &engine,
            "db",
            rawdoc! { "insert": "c", "documents": [{ "_id": 1 }] },
        );
        let config = ok(&engine, "admin", rawdoc! { "replSetGetConfig": 1 });
        let config = config.get_document("config").expect("config").clone();
        assert_eq!(config.get_i64("term").ok(), Some(1));
        engine.close().expect("close");
        config
            .get_document("settings")
            .and_then(|s| s.get_object_id("replicaSetId"))
            .expect("replicaSetId")
    };
    // A standalone start of the file writes no oplog entries and says what it was.
    {
        let engine = Engine::open(&path, support::options()).expect("open");
        assert_eq!(
            engine.stored_replica_set_name().expect("read"),
            Some("rs0".to_owned())
        );
        let before = oplog(&engine).len();
        ok(
            &engine,
            "db",
            rawdoc! { "insert": "c", "documents": [{ "_id": 2 }] },
        );
        assert_eq!(oplog(&engine).len(), before, "a standalone writes no oplog");
        engine.close().expect("close");
    }
    let engine = member_at(&path, "rs0");
    let hello = ok(&engine, "admin", rawdoc! { "hello": 1 });
    assert_eq!(
        hello.get_object_id("electionId").expect("id").to_hex(),
        "7fffffff0000000000000002"
    );
    assert_eq!(hello.get_i32("setVersion").ok(), Some(1));
    let config = ok(&engine, "admin", rawdoc! { "replSetGetConfig": 1 });
    let config = config.get_document("config").expect("config");
    assert_eq!(config.get_i64("term").ok(), Some(2));
    assert_eq!(
        config
            .get_document("settings")
            .and_then(|s| s.get_object_id("replicaSetId"))
            .ok(),
        Some(set_id)
    );
    let notes: Vec<_> = oplog(&engine)
        .into_iter()
        .filter(|e| e.get_str("op").ok() == Some("n"))
        .map(|e| e.get_i64("t").unwrap_or_default())
        .collect();
    assert_eq!(
        notes,
        vec![1, 1, 2],
        "initiating, then one new primary per term"
    );
    engine.close().expect("close");
    drop(engine);

    // Another set's name is refused, with what to do.
    let engine = Engine::open(&path, support::options()).expect("open");
    let error = engine
        .start_replica_set(&Options::new("other", "127.0.0.1:27017"))
        .expect_err("another set");
    assert!(error.to_string().contains("'rs0'"), "{error}");
    drop(engine);

    // A new address is the one member's, in a new config version.
    let engine = Engine::open(&path, support::options()).expect("open");
    engine
        .start_replica_set(&Options::new("rs0", "db.example:27018"))
        .expect("start");
    let hello = ok(&engine, "admin", rawdoc! { "hello": 1 });
    assert_eq!(hello.get_str("me").ok(), Some("db.example:27018"));
    assert_eq!(hello.get_i32("setVersion").ok(), Some(2));
    engine.close().expect("close");
    let _ = std::fs::remove_dir_all(path.parent().expect("dir"));
}

#[test]
fn the_repl_set_commands_answer_as_a_one_member_primary() {
    let engine = member();
    let status = ok(&engine, "admin", rawdoc! { "replSetGetStatus": 1 });
    assert_eq!(status.get_str("set").ok(), Some("rs0"));
    assert_eq!(status.get_i32("myState").ok(), Some(1));
    let members = status.get_array("members").expect("members");
    let only = members[0].as_document().expect("member");
    assert_eq!(only.get_str("stateStr").ok(), Some("PRIMARY"));
    assert_eq!(only.get_bool("self").ok(), Some(true));
    assert_eq!(only.get_str("name").ok(), Some("127.0.0.1:27017"));

    fails(&engine, "admin", rawdoc! { "replSetInitiate": {} }, 23);
    fails(&engine, "admin", rawdoc! { "replSetStepDown": 60 }, 262);
    fails(&engine, "admin", rawdoc! { "replSetFreeze": 60 }, 95);
    // Only on admin, as mongod.
    fails(&engine, "db", rawdoc! { "replSetGetStatus": 1 }, 13);

    let config = ok(&engine, "admin", rawdoc! { "replSetGetConfig": 1 });
    let mut config = config.get_document("config").expect("config").clone();
    // Not a newer version: refused.
    let same = raw(doc! { "replSetReconfig": config.clone() });
    fails(&engine, "admin", same, 103);
    config.insert("version", 2);
    let mut settings = config.get_document("settings").expect("settings").clone();
    settings.insert("electionTimeoutMillis", 5000);
    config.insert("settings", settings);
    ok(
        &engine,
        "admin",
        raw(doc! { "replSetReconfig": config.clone() }),
    );
    let hello = ok(&engine, "admin", rawdoc! { "hello": 1 });
    assert_eq!(hello.get_i32("setVersion").ok(), Some(2));
    let stored = ok(&engine, "admin", rawdoc! { "replSetGetConfig": 1 });
    assert_eq!(
        stored
            .get_document("config")
            .and_then(|c| c.get_document("settings"))
            .and_then(|s| s.get_i32("electionTimeoutMillis"))
            .ok(),
        Some(5000)
    );
    // Another member: not built.
    let mut two = config.clone();
    two.insert("version", 3);
    let mut members = two.get_array("members").expect("members").clone();
    members.push(Bson::Document(doc! { "_id": 1, "host": "other:27017" }));
    two.insert("members", members);
    fails(&engine, "admin", raw(doc! { "replSetReconfig": two }), 238);
    // Another name: refused.
    let mut renamed = config;
    renamed.insert("version", 3);
    renamed.insert("_id", "rs1");
    fails(
        &engine,
        "admin",
        raw(doc! { "replSetReconfig": renamed }),
        103,
    );
}

fn count(engine: &Engine, coll: &str) -> i64 {
    let reply = ok(engine, "db", raw(doc! { "count": coll }));
    reply.get_i32("n").map(i64::from).unwrap_or_default()
}

#[test]
fn a_retried_insert_is_applied_once_and_answers_as_the_first_time() {
    let engine = member();
    let insert = doc! {
        "insert": "c", "documents": [{ "_id": 1 }, { "_id": 2 }],
        "lsid": lsid(1), "txnNumber": 5_i64,
    };
    let first = ok(&engine, "db", raw(insert.clone()));
    assert_eq!(first.get_i32("n").ok(), Some(2));
    assert!(first.get("retriedStmtIds").is_none());
    let again = ok(&engine, "db", raw(insert.clone()));
    assert_eq!(again.get_i32("n").ok(), Some(2), "{again:?}");
    assert_eq!(
        again.get_array("retriedStmtIds").ok(),
        Some(&vec![Bson::Int32(0), Bson::Int32(1)])
    );
    assert!(
        again.get("writeErrors").is_none(),
        "no duplicate key: {again:?}"
    );
    assert_eq!(count(&engine, "c"), 2);

    // The oplog entries carry the session and statement ids.
    let inserts: Vec<Document> = oplog(&engine)
        .into_iter()
        .filter(|e| e.get_str("op").ok() == Some("i"))
        .collect();
    assert_eq!(inserts.len(), 2);
    assert_eq!(inserts[1].get_i64("txnNumber").ok(), Some(5));
    assert_eq!(inserts[1].get_i32("stmtId").ok(), Some(1));
    assert_eq!(
        inserts[1]
            .get_document("lsid")
            .and_then(|l| l.get_binary_generic("uid"))
            .map(Vec::len)
            .ok(),
        Some(32),
        "the owner's uid, as mongod keeps it"
    );

    // An older number: 225; a newer one runs.
    let older = doc! {
        "insert": "c", "documents": [{ "_id": 3 }], "lsid": lsid(1), "txnNumber": 4_i64,
    };
    fails(&engine, "db", raw(older), 225);
    let newer = doc! {
        "insert": "c", "documents": [{ "_id": 3 }], "lsid": lsid(1), "txnNumber": 6_i64,
    };
    ok(&engine, "db", raw(newer));
    assert_eq!(count(&engine, "c"), 3);
    // Another session's same number is its own.
    let other = doc! {
        "insert": "c", "documents": [{ "_id": 4 }], "lsid": lsid(2), "txnNumber": 5_i64,
    };
    ok(&engine, "db", raw(other));
    assert_eq!(count(&engine, "c"), 4);
}

#[test]
fn a_half_done_ordered_insert_is_finished_by_its_retry() {
    let engine = member();
    ok(
        &engine,
        "db",
        rawdoc! { "insert": "c", "documents": [{ "_id": 2 }] },
    );
    let insert = doc! {
        "insert": "c", "documents": [{ "_id": 1 }, { "_id": 2 }, { "_id": 3 }],
        "lsid": lsid(1), "txnNumber": 1_i64,
    };
    let first = ok(&engine, "db", raw(insert.clone()));
    assert_eq!(first.get_i32("n").ok(), Some(1));
    assert!(first.get_array("writeErrors").is_ok());
    ok(
        &engine,
        "db",
        rawdoc! { "delete": "c", "deletes": [{ "q": { "_id": 2 }, "limit": 1 }] },
    );
    let retried = ok(&engine, "db", raw(insert));
    assert_eq!(retried.get_i32("n").ok(), Some(3), "{retried:?}");
    assert_eq!(
        retried.get_array("retriedStmtIds").ok(),
        Some(&vec![Bson::Int32(0)])
    );
    assert_eq!(count(&engine, "c"), 3);
}

#[test]
fn retried_updates_deletes_and_find_and_modify_answer_their_first_results() {
    let engine = member();
    ok(
        &engine,
        "db",
        rawdoc! { "insert": "c", "documents": [{ "_id": 1, "n": 0 }] },
    );
    let update = doc! {
        "update": "c",
        "updates": [
            { "q": { "_id": 1 }, "u": { "$inc": { "n": 1 } } },
            { "q": { "_id": 9 }, "u": { "$inc": { "n": 1 } }, "upsert": true },
        ],
        "lsid": lsid(1), "txnNumber": 1_i64,
    };
    let first = ok(&engine, "db", raw(update.clone()));
    let again = ok(&engine, "db", raw(update));
    for key in ["n", "nModified"] {
        assert_eq!(first.get(key), again.get(key), "{key}: {first:?} {again:?}");
    }
    assert_eq!(
        first.get_array("upserted").ok(),
        again.get_array("upserted").ok()
    );
    assert_eq!(
        again.get_array("upserted").ok().map(Vec::len),
        Some(1),
        "{again:?}"
    );
    let docs = support::contents(&engine, "db", "c");
    assert_eq!(
        docs[0].get_i32("n").ok(),
        Some(1),
        "incremented once: {docs:?}"
    );
    assert_eq!(docs.len(), 2);

    let modify = doc! {
        "findAndModify": "c", "query": { "_id": 1 }, "update": { "$inc": { "n": 10 } },
        "new": true, "lsid": lsid(1), "txnNumber": 2_i64,
    };
    let first = ok(&engine, "db", raw(modify.clone()));
    // Changed since: the retry still answers the first image.
    ok(
        &engine,
        "db",
        rawdoc! { "update": "c", "updates": [{ "q": { "_id": 1 }, "u": { "$set": { "n": 100 } } }] },
    );
    let again = ok(&engine, "db", raw(modify));
    assert_eq!(
        first.get_document("value").ok(),
        again.get_document("value").ok()
    );
    assert_eq!(again.get_i32("retriedStmtId").ok(), Some(0));
    assert_eq!(
        first
            .get_document("value")
            .and_then(|v| v.get_i32("n"))
            .ok(),
        Some(11)
    );

    let delete = doc! {
        "delete": "c", "deletes": [{ "q": { "_id": 9 }, "limit": 1 }],
        "lsid": lsid(1), "txnNumber": 3_i64,
    };
    let first = ok(&engine, "db", raw(delete.clone()));
    assert_eq!(first.get_i32("n").ok(), Some(1));
    ok(
        &engine,
        "db",
        rawdoc! { "insert": "c", "documents": [{ "_id": 9 }] },
    );
    let again = ok(&engine, "db", raw(delete));
    assert_eq!(again.get_i32("n").ok(), Some(1));
    assert_eq!(count(&engine, "c"), 2, "the re-inserted document stays");
}

#[test]
fn what_mongod_refuses_in_a_retryable_write_is_refused() {
    let engine = member();
    let multi = doc! {
        "update": "c", "updates": [{ "q": {}, "u": { "$set": { "a": 1 } }, "multi": true }],
        "lsid": lsid(1), "txnNumber": 1_i64,
    };
    fails(&engine, "db", raw(multi), 72);
    let many = doc! {
        "delete": "c", "deletes": [{ "q": {}, "limit": 0 }],
        "lsid": lsid(1), "txnNumber": 2_i64,
    };
    fails(&engine, "db", raw(many), 72);
    let find = doc! { "find": "c", "lsid": lsid(1), "txnNumber": 3_i64 };
    fails(&engine, "db", raw(find), 50768);
    let transaction = doc! {
        "insert": "c", "documents": [{}], "lsid": lsid(1), "txnNumber": 4_i64,
        "autocommit": false, "startTransaction": true,
    };
    fails(&engine, "db", raw(transaction), 238);
    let no_session = doc! { "insert": "c", "documents": [{}], "txnNumber": 5_i64 };
    fails(&engine, "db", raw(no_session), 72);
    let int_number = doc! {
        "insert": "c", "documents": [{}], "lsid": lsid(1), "txnNumber": 6_i32,
    };
    fails(&engine, "db", raw(int_number), 14);
}

#[test]
fn a_retry_after_a_restart_is_not_applied_again() {
    let path = temp_path("retry-restart");
    let insert = doc! {
        "insert": "c", "documents": [{ "_id": 1 }], "lsid": lsid(7), "txnNumber": 1_i64,
    };
    {
        let engine = member_at(&path, "rs0");
        ok(&engine, "db", raw(insert.clone()));
        // No clean close: the log holds the write and its record.
        drop(engine);
    }
    let engine = member_at(&path, "rs0");
    let again = ok(&engine, "db", raw(insert));
    assert_eq!(
        again.get_array("retriedStmtIds").ok(),
        Some(&vec![Bson::Int32(0)])
    );
    assert_eq!(count(&engine, "c"), 1);
    engine.close().expect("close");
    let _ = std::fs::remove_dir_all(path.parent().expect("dir"));
}

#[test]
fn retryable_errors_carry_the_retryable_write_label() {
    let mut options = support::options();
    options.startup.parsed = doc! { "setParameter": { "enableTestCommands": "1" } };
    let engine = Engine::new(options);
    engine
        .start_replica_set(&Options::new("rs0", "127.0.0.1:27017"))
        .expect("start");
    ok(
        &engine,
        "admin",
        rawdoc! {
            "configureFailPoint": "failCommand", "mode": { "times": 2 },
            "data": { "failCommands": ["insert"], "errorCode": 91 },
        },
    );
    let retryable = doc! {
        "insert": "c", "documents": [{}], "lsid": lsid(1), "txnNumber": 1_i64,
    };
    let reply = fails(&engine, "db", raw(retryable), 91);
    assert_eq!(
        reply.get_array("errorLabels").ok(),
        Some(&vec![Bson::String("RetryableWriteError".into())])
    );
    // Not a retryable write: no label.
    let reply = fails(
        &engine,
        "db",
        rawdoc! { "insert": "c", "documents": [{}] },
        91,
    );
    assert!(reply.get("errorLabels").is_none(), "{reply:?}");
    // A non-retryable code: no label.
    let reply = run(
        &engine,
        "db",
        raw(
            doc! { "insert": "c", "documents": [{ "_id": 1 }, { "_id": 1 }], "lsid": lsid(1), "txnNumber": 2_i64 },
        ),
    );
    assert!(reply.get("errorLabels").is_none(), "{reply:?}");
}

#[test]
fn the_embedded_client_opens_a_file_as_a_member() {
    use engine::client::{Client, ClientOptions};
    let path = temp_path("embedded");
    let options = ClientOptions {
        repl_set_name: Some("rs0".to_owned()),
    };
    let client = Client::open_with_options(&path, &options).expect("open");
    client
        .database("db")
        .collection::<Document>("c")
        .insert_one(doc! { "_id": 1 })
        .run()
        .expect("insert");
    let hello = client
        .database("admin")
        .run_command(doc! { "hello": 1 })
        .run()
        .expect("hello");
    assert_eq!(hello.get_str("setName").ok(), Some("rs0"));
    assert_eq!(
        hello.get_str("me").ok(),
        Some(engine::client::EMBEDDED_MEMBER_HOST)
    );
    let oplog = client
        .database("local")
        .collection::<Document>("oplog.rs")
        .count_documents(doc! { "op": "i", "ns": "db.c" })
        .run()
        .expect("count");
    assert_eq!(oplog, 1);
    client.close().expect("close");
    drop(client);
    // The same file opened plainly: a standalone, its data there.
    let client = Client::open(&path).expect("open");
    let hello = client
        .database("admin")
        .run_command(doc! { "hello": 1 })
        .run()
        .expect("hello");
    assert!(hello.get("setName").is_none());
    client.close().expect("close");
    let _ = std::fs::remove_dir_all(path.parent().expect("dir"));
}
