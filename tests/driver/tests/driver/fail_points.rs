//! Fail points through the Rust driver (issue 43): a server started with
//! `--setParameter enableTestCommands=1` fails, stalls or drops the commands
//! `configureFailPoint` names, as the drivers' specification tests expect; without the
//! parameter the command does not exist, and unknown startup parameters are refused.

use crate::harness::TestServer;
use bson::doc;
use std::time::{Duration, Instant};

fn configure(client: &mongodb::sync::Client, command: bson::Document) -> bson::Document {
    client
        .database("admin")
        .run_command(command)
        .run()
        .expect("configureFailPoint")
}

fn code_of(error: &mongodb::error::Error) -> Option<i32> {
    match error.kind.as_ref() {
        mongodb::error::ErrorKind::Command(command) => Some(command.code),
        mongodb::error::ErrorKind::Write(mongodb::error::WriteFailure::WriteError(write)) => {
            Some(write.code)
        }
        _ => None,
    }
}

#[test]
fn fail_command_fails_stalls_and_drops_what_it_names() {
    let server = TestServer::start(&["--setParameter", "enableTestCommands=1"]);
    let client = server.client();
    let coll = client.database("db").collection::<bson::Document>("c");

    // An error, once, on insert: the driver reports the server's code.
    let reply = configure(
        &client,
        doc! {
            "configureFailPoint": "failCommand", "mode": { "times": 1 },
            "data": { "failCommands": ["insert"], "errorCode": 2 },
        },
    );
    assert_eq!(reply.get_i64("count").ok(), Some(0));
    let error = coll
        .insert_one(doc! { "_id": 1 })
        .run()
        .expect_err("fails once");
    assert_eq!(code_of(&error), Some(2), "{error}");
    coll.insert_one(doc! { "_id": 1 }).run().expect("then runs");

    // A stall: the find waits at least blockTimeMS, then answers.
    configure(
        &client,
        doc! {
            "configureFailPoint": "failCommand", "mode": { "times": 1 },
            "data": { "failCommands": ["find"], "blockConnection": true, "blockTimeMS": 300 },
        },
    );
    let started = Instant::now();
    let found = coll.find_one(doc! { "_id": 1 }).run().expect("find");
    assert!(found.is_some());
    assert!(
        started.elapsed() >= Duration::from_millis(300),
        "{:?}",
        started.elapsed()
    );

    // A dropped connection: the driver sees a network error, and the next command works
    // on a new connection.
    configure(
        &client,
        doc! {
            "configureFailPoint": "failCommand", "mode": { "times": 1 },
            "data": { "failCommands": ["count"], "closeConnection": true },
        },
    );
    let error = client
        .database("db")
        .run_command(doc! { "count": "c" })
        .run()
        .expect_err("the connection is closed");
    assert!(
        matches!(error.kind.as_ref(), mongodb::error::ErrorKind::Io(_)),
        "a network error, got {error}"
    );
    let counted = client
        .database("db")
        .run_command(doc! { "count": "c" })
        .run()
        .expect("count on a new connection");
    assert_eq!(counted.get_i32("n").ok(), Some(1));
    assert!(server.log_contains("the failCommand fail point closes it"));
}

#[test]
fn without_test_commands_there_is_no_fail_point_and_unknown_parameters_are_refused() {
    let server = TestServer::start(&[]);
    let error = server
        .client()
        .database("admin")
        .run_command(doc! { "configureFailPoint": "failCommand", "mode": "off" })
        .run()
        .expect_err("no such command");
    assert_eq!(code_of(&error), Some(59), "{error}");
    let (status, stderr) = TestServer::refused_with(
        &TestServer::temp_db(),
        &["--setParameter", "noSuchParameter=1"],
    );
    assert!(!status.success());
    assert!(
        stderr.contains("unknown startup parameter 'noSuchParameter'"),
        "{stderr}"
    );
}
