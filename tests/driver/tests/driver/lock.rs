//! One opener per database file: a second server or embedded opener of a file that is
//! already open is refused with DBPathInUse and the first keeps its data intact.

use crate::harness::TestServer;
use bson::{Document, doc};
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

#[test]
fn the_embedded_api_is_refused_while_a_server_has_the_file_and_opens_after() {
    let db = TestServer::temp_db();
    let mut server = TestServer::start_at(&db, &[]);
    insert_round(&server.client(), 0, 100);
    let error = match engine::Database::open(&db) {
        Err(error) => error,
        Ok(_) => panic!("the embedded API opened a file the server has open"),
    };
    assert_eq!((error.code, error.code_name.as_str()), (98, "DBPathInUse"));
    assert!(error.message.contains(&db.display().to_string()), "{error}");
    assert!(
        error.message.contains(&format!("process {}", server.pid())),
        "{error}"
    );
    server.assert_healthy();
    assert!(server.terminate().success());
    let database = engine::Database::open(&db).expect("opens once the server stopped");
    let n = database
        .collection("c")
        .count_documents(doc! {})
        .expect("count");
    assert_eq!(n, 100);
}

#[test]
fn a_server_is_refused_while_the_embedded_api_has_the_file() {
    let db = TestServer::temp_db();
    let database = engine::Database::open(&db).expect("open");
    database
        .collection("c")
        .insert_one(doc! {"a": 1})
        .expect("insert");
    let (status, stderr) = TestServer::refused_at(&db);
    assert!(!status.success(), "{stderr}");
    assert_in_use(&stderr, &db, std::process::id());
    assert_eq!(
        database
            .collection("c")
            .count_documents(doc! {})
            .expect("count"),
        1
    );
    database.engine().close().expect("close");
    drop(database);
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
    let database = engine::Database::open(&db).expect("opens right after kill -9");
    let n = database
        .collection("c")
        .count_documents(doc! {})
        .expect("count");
    assert_eq!(n, 500);
    drop(database);
    let server = TestServer::start_at(&db, &[]);
    assert_eq!(count(&server.client()), 500);
}
