//! One opener per database file: a second server or embedded opener of a file that is
//! already open is refused with DBPathInUse and the first keeps its data intact.

use crate::harness::TestServer;
use bson::{Document, doc};
use engine::client as embedded;
use mongodb::sync::Client;

fn insert_round(client: &Client, round: i32, n: i32) {
    let docs: Vec<Document> = (0..n)
        .map(|i| doc! {"round": round, "i": i, "pad": "x".repeat(200)})
        .collect();
    client
        .database("test")
        .collection::<Document>("c")
        .insert_many(docs)
        .run()
        .expect("insert");
}

fn count(client: &Client) -> u64 {
    client
        .database("test")
        .collection::<Document>("c")
        .count_documents(doc! {})
        .run()
        .expect("count")
}

fn assert_valid(client: &Client) {
    let validate = client
        .database("test")
        .run_command(doc! {"validate": "c"})
        .run()
        .expect("validate");
    assert_eq!(validate.get_bool("valid").ok(), Some(true), "{validate:?}");
}

fn assert_in_use(stderr: &str, db: &std::path::Path, holder: u32) {
    assert!(stderr.contains("DBPathInUse"), "{stderr}");
    assert!(
        stderr.contains(&db.display().to_string()),
        "names the file: {stderr}"
    );
    assert!(
        stderr.contains(&format!("process {holder}")),
        "names the holder {holder}: {stderr}"
    );
}

#[test]
fn a_second_server_on_an_open_file_exits_and_the_first_keeps_serving() {
    let db = TestServer::temp_db();
    let mut first = TestServer::start_at(&db, &[]);
    let client = first.client();
    for round in 0..5 {
        insert_round(&client, round, 3_000);
        let (status, stderr) = TestServer::refused_at(&db);
        assert!(!status.success(), "the second server must fail: {stderr}");
        assert_in_use(&stderr, &db, first.pid());
    }
    insert_round(&client, 5, 3_000);
    assert_eq!(count(&client), 18_000);
    assert_valid(&client);
    first.assert_healthy();
    assert!(first.terminate().success());
    // After a clean stop the file opens again, whole.
    let second = TestServer::start_at(&db, &[]);
    let client = second.client();
    assert_eq!(count(&client), 18_000);
    assert_valid(&client);
}

/// The embedded client of `db`, and its collection `test.c`.
fn embedded(db: &std::path::Path) -> (embedded::Client, embedded::Collection<Document>) {
    let client = embedded::Client::open(db).expect("open");
    let c = client.database("test").collection("c");
    (client, c)
}

#[test]
fn the_embedded_client_is_refused_while_a_server_has_the_file_and_opens_after() {
    let db = TestServer::temp_db();
    let mut server = TestServer::start_at(&db, &[]);
    insert_round(&server.client(), 0, 100);
    let error = embedded::Client::open(&db).expect_err("the server has the file open");
    let embedded::ErrorKind::Locked { message } = &*error.kind else {
        panic!("expected Locked, got {error:?}");
    };
    assert!(message.contains(&db.display().to_string()), "{message}");
    assert!(
        message.contains(&format!("process {}", server.pid())),
        "{message}"
    );
    server.assert_healthy();
    assert!(server.terminate().success());
    let (_client, c) = embedded(&db);
    let n = c.count_documents(doc! {}).run().expect("count");
    assert_eq!(n, 100);
}

#[test]
fn a_server_is_refused_while_the_embedded_client_has_the_file() {
    let db = TestServer::temp_db();
    let (client, c) = embedded(&db);
    c.insert_one(doc! {"a": 1}).run().expect("insert");
    let (status, stderr) = TestServer::refused_at(&db);
    assert!(!status.success(), "{stderr}");
    assert_in_use(&stderr, &db, std::process::id());
    assert_eq!(c.count_documents(doc! {}).run().expect("count"), 1);
    client.close().expect("close");
    drop((client, c));
    let server = TestServer::start_at(&db, &[]);
    assert_eq!(count(&server.client()), 1);
}

#[test]
fn after_kill_9_of_the_holder_the_file_opens_at_once() {
    let db = TestServer::temp_db();
    let mut server = TestServer::start_at(&db, &[]);
    insert_round(&server.client(), 0, 500);
    server.kill9();
    // The kernel dropped the lock with the process: no wait, no stale lock file.
    let (client, c) = embedded(&db);
    let n = c.count_documents(doc! {}).run().expect("count");
    assert_eq!(n, 500);
    drop((client, c));
    let server = TestServer::start_at(&db, &[]);
    assert_eq!(count(&server.client()), 500);
}
