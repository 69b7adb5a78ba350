//! A `--replSet` server through the Rust driver (issue 43), as users connect to one:
//! with and without `replicaSet=` and `directConnection=`, by `127.0.0.1` and by
//! `localhost`. The driver sees a replica set with a primary, turns retryable writes on,
//! and a write whose connection drops (or that fails with a retryable error) is retried
//! and applied once; a retry after kill -9 and a restart is not applied again.

use crate::harness::TestServer;
use bson::{Document, doc};
use mongodb::sync::Client;

fn client(uri: &str) -> Client {
    Client::with_uri_str(uri).expect("client")
}

fn count(client: &Client) -> u64 {
    client
        .database("db")
        .collection::<Document>("c")
        .count_documents(doc! {})
        .run()
        .expect("count")
}

#[test]
fn every_usual_uri_reaches_the_primary() {
    let server = TestServer::start(&["--replSet", "rs0"]);
    let port = server.address.port();
    let uris = [
        format!("mongodb://127.0.0.1:{port}/?serverSelectionTimeoutMS=5000"),
        format!("mongodb://127.0.0.1:{port}/?replicaSet=rs0&serverSelectionTimeoutMS=5000"),
        format!("mongodb://127.0.0.1:{port}/?directConnection=true&serverSelectionTimeoutMS=5000"),
        format!("mongodb://localhost:{port}/?replicaSet=rs0&serverSelectionTimeoutMS=5000"),
        format!("mongodb://localhost:{port}/?serverSelectionTimeoutMS=5000"),
    ];
    for (i, uri) in uris.iter().enumerate() {
        let client = client(uri);
        let coll = client.database("db").collection::<Document>("c");
        coll.insert_one(doc! { "_id": i64::try_from(i).expect("small") })
            .run()
            .unwrap_or_else(|e| panic!("{uri}: {e}"));
        let hello = client
            .database("admin")
            .run_command(doc! { "hello": 1 })
            .run()
            .expect("hello");
        assert_eq!(hello.get_str("setName").ok(), Some("rs0"), "{uri}");
        assert_eq!(
            hello.get_str("me").ok(),
            Some(format!("127.0.0.1:{port}").as_str())
        );
    }
    assert_eq!(count(&client(&uris[1])), uris.len() as u64);
    let status = client(&uris[1])
        .database("admin")
        .run_command(doc! { "replSetGetStatus": 1 })
        .run()
        .expect("status");
    assert_eq!(status.get_i32("myState").ok(), Some(1));
}

#[test]
fn a_write_whose_connection_drops_is_retried_and_applied_once() {
    let server = TestServer::start(&["--replSet", "rs0", "--setParameter", "enableTestCommands=1"]);
    let uri = format!(
        "mongodb://{}/?replicaSet=rs0&serverSelectionTimeoutMS=5000",
        server.address
    );
    let client = client(&uri);
    let coll = client.database("db").collection::<Document>("c");
    // The first insert's connection closes after the server received it (before it
    // ran): the driver retries on a new connection, once.
    client
        .database("admin")
        .run_command(doc! {
            "configureFailPoint": "failCommand", "mode": { "times": 1 },
            "data": { "failCommands": ["insert"], "closeConnection": true },
        })
        .run()
        .expect("fail point");
    coll.insert_one(doc! { "_id": 1 }).run().expect("retried");
    // A retryable error, once: retried too.
    client
        .database("admin")
        .run_command(doc! {
            "configureFailPoint": "failCommand", "mode": { "times": 1 },
            "data": { "failCommands": ["update"], "errorCode": 189 },
        })
        .run()
        .expect("fail point");
    coll.update_one(doc! { "_id": 1 }, doc! { "$inc": { "n": 1 } })
        .run()
        .expect("retried");
    let found = coll.find_one(doc! { "_id": 1 }).run().expect("find");
    assert_eq!(found, Some(doc! { "_id": 1, "n": 1 }), "applied once");
    // With retryWrites=false the same error reaches the application.
    let no_retry = self::client(&format!("{uri}&retryWrites=false"));
    no_retry
        .database("admin")
        .run_command(doc! {
            "configureFailPoint": "failCommand", "mode": { "times": 1 },
            "data": { "failCommands": ["insert"], "errorCode": 189 },
        })
        .run()
        .expect("fail point");
    no_retry
        .database("db")
        .collection::<Document>("c")
        .insert_one(doc! { "_id": 2 })
        .run()
        .expect_err("not retried");
    assert_eq!(count(&client), 1);
}

#[test]
fn a_retry_after_kill_9_and_a_restart_is_not_applied_again() {
    let db = TestServer::temp_db();
    let insert = |server: &TestServer| {
        let client = client(&format!(
            "mongodb://{}/?directConnection=true&serverSelectionTimeoutMS=5000",
            server.address
        ));
        let lsid = doc! { "id": bson::Binary {
            subtype: bson::spec::BinarySubtype::Uuid, bytes: vec![3; 16],
        } };
        client
            .database("db")
            .run_command(doc! {
                "insert": "c", "documents": [{ "_id": 1, "n": 1 }, { "_id": 2 }],
                "lsid": lsid, "txnNumber": 9_i64,
            })
            .run()
            .expect("insert")
    };
    let mut server = TestServer::start_at(&db, &["--replSet", "rs0"]);
    let first = insert(&server);
    assert_eq!(first.get_i32("n").ok(), Some(2));
    server.kill9();
    let server = TestServer::start_at(&db, &["--replSet", "rs0"]);
    let again = insert(&server);
    assert_eq!(again.get_i32("n").ok(), Some(2), "{again:?}");
    assert_eq!(
        again.get_array("retriedStmtIds").ok().map(Vec::len),
        Some(2)
    );
    let client = client(&format!(
        "mongodb://{}/?replicaSet=rs0&serverSelectionTimeoutMS=5000",
        server.address
    ));
    assert_eq!(count(&client), 2);
    // The restart was an election: the term moved up.
    let hello = client
        .database("admin")
        .run_command(doc! { "hello": 1 })
        .run()
        .expect("hello");
    assert_eq!(
        hello.get_object_id("electionId").expect("id").to_hex(),
        "7fffffff0000000000000002"
    );
    drop(server);
    for suffix in ["", "-wal"] {
        let _ = std::fs::remove_file(format!("{}{suffix}", db.display()));
    }
}

/// The oplog tailed as Meteor and Rocket.Chat tail it, through the driver's own
/// `TailableAwait` cursor: it waits for the next write and yields its entry; `w: 2` on
/// one member is applied and answered with the driver's write concern error (100).
#[test]
fn the_oplog_is_tailed_through_the_driver_and_w_2_is_unsatisfiable() {
    use mongodb::options::{CursorType, WriteConcern};
    let server = TestServer::start(&["--replSet", "rs0"]);
    let uri = format!(
        "mongodb://{}/?replicaSet=rs0&serverSelectionTimeoutMS=5000",
        server.address
    );
    let client = client(&uri);
    let coll = client.database("db").collection::<Document>("c");
    coll.insert_one(doc! { "_id": 0 }).run().expect("insert");
    let oplog = client.database("local").collection::<Document>("oplog.rs");
    let last = oplog
        .find_one(doc! {})
        .sort(doc! { "$natural": -1 })
        .run()
        .expect("last entry")
        .expect("an entry");
    let after = last.get_timestamp("ts").expect("ts");
    let mut cursor = oplog
        .find(doc! { "ts": { "$gt": after }, "ns": "db.c" })
        .cursor_type(CursorType::TailableAwait)
        .max_await_time(std::time::Duration::from_millis(200))
        .run()
        .expect("tail");
    let writer = {
        let coll = coll.clone();
        std::thread::spawn(move || {
            std::thread::sleep(std::time::Duration::from_millis(300));
            coll.insert_one(doc! { "_id": 1 }).run().expect("insert");
        })
    };
    let entry = cursor.next().expect("an entry").expect("no error");
    writer.join().expect("writer");
    assert_eq!(entry.get_str("op").ok(), Some("i"), "{entry}");
    assert_eq!(
        entry.get_document("o").and_then(|o| o.get_i32("_id")).ok(),
        Some(1)
    );
    let two = WriteConcern::builder()
        .w(mongodb::options::Acknowledgment::Nodes(2))
        .build();
    let error = coll
        .insert_one(doc! { "_id": 2 })
        .write_concern(two)
        .run()
        .expect_err("w: 2 cannot be satisfied");
    match *error.kind {
        mongodb::error::ErrorKind::Write(mongodb::error::WriteFailure::WriteConcernError(
            ref concern,
        )) => assert_eq!(concern.code, 100, "{error}"),
        _ => panic!("expected a write concern error: {error}"),
    }
    assert_eq!(count(&client), 3, "the w: 2 insert was applied");
}
