//! The official Rust driver against the server: connect, handshake and admin commands.

use crate::harness::TestServer;
use mongodb::bson::{Document, doc};
use mongodb::error::ErrorKind;

fn admin(server: &TestServer, command: Document) -> Document {
    server
        .client()
        .database("admin")
        .run_command(command)
        .run()
        .expect("command succeeds")
}

#[test]
fn driver_connects_and_pings() {
    let server = TestServer::start(&[]);
    assert_eq!(
        admin(&server, doc! { "ping": 1 }).get_f64("ok").ok(),
        Some(1.0)
    );
    // Any database answers ping.
    let reply = server
        .client()
        .database("app")
        .run_command(doc! { "ping": 1 })
        .run();
    assert_eq!(reply.expect("ping").get_f64("ok").ok(), Some(1.0));
}

#[test]
fn driver_sees_modern_mongodb_in_hello_and_build_info() {
    let server = TestServer::start(&[]);
    let hello = admin(&server, doc! { "hello": 1 });
    assert_eq!(hello.get_bool("isWritablePrimary").ok(), Some(true));
    assert_eq!(hello.get_i32("maxWireVersion").ok(), Some(21));
    assert_eq!(hello.get_i32("maxMessageSizeBytes").ok(), Some(48_000_000));
    assert!(hello.get_datetime("localTime").is_ok());
    assert!(hello.get_i32("connectionId").is_ok());
    let build = admin(&server, doc! { "buildInfo": 1 });
    assert_eq!(build.get_str("version").ok(), Some("7.0.0"));
}

#[test]
fn driver_lists_no_databases_before_storage_exists() {
    let server = TestServer::start(&[]);
    let names = server
        .client()
        .list_database_names()
        .run()
        .expect("listDatabases");
    assert!(names.is_empty(), "{names:?}");
    let full = admin(&server, doc! { "listDatabases": 1 });
    assert_eq!(full.get_i64("totalSize").ok(), Some(0));
}

#[test]
fn driver_gets_command_not_found_for_unknown_and_crud_commands() {
    let server = TestServer::start(&[]);
    let client = server.client();
    for command in [
        doc! { "frobnicate": 1 },
        doc! { "mapReduce": "users", "map": "", "reduce": "" },
    ] {
        let error = client
            .database("app")
            .run_command(command)
            .run()
            .expect_err("refused");
        match *error.kind {
            ErrorKind::Command(ref failure) => {
                assert_eq!(failure.code, 59);
                assert_eq!(failure.code_name, "CommandNotFound");
            }
            ref other => panic!("expected a command error, got {other:?}"),
        }
    }
}

#[test]
fn driver_runs_the_admin_commands() {
    let server = TestServer::start(&[]);
    let status = admin(&server, doc! { "serverStatus": 1 });
    assert!(
        status
            .get_document("connections")
            .expect("connections")
            .get_i64("current")
            .is_ok()
    );
    assert!(status.get_document("opcounters").is_ok());
    assert!(status.get_document("mem").is_ok());
    assert!(status.get_f64("uptime").is_ok());
    let options = admin(&server, doc! { "getCmdLineOpts": 1 });
    let argv = options.get_array("argv").expect("argv");
    assert!(argv.iter().any(|a| a.as_str() == Some("--db")), "{argv:?}");
    let storage = options
        .get_document("parsed")
        .and_then(|p| p.get_document("storage"));
    assert!(storage.expect("storage").get_str("dbPath").is_ok());
    let host = admin(&server, doc! { "hostInfo": 1 });
    assert!(host.get_document("system").is_ok());
    let fcv = admin(
        &server,
        doc! { "getParameter": 1, "featureCompatibilityVersion": 1 },
    );
    assert!(fcv.get_document("featureCompatibilityVersion").is_ok());
    let log = admin(&server, doc! { "getLog": "startupWarnings" });
    assert_eq!(log.get_array("log").map(Vec::len).ok(), Some(0));
    let me = admin(&server, doc! { "whatsmyuri": 1 });
    assert!(me.get_str("you").expect("you").starts_with("127.0.0.1:"));
    assert!(
        admin(&server, doc! { "connectionStatus": 1 })
            .get_document("authInfo")
            .is_ok()
    );
    assert!(
        admin(&server, doc! { "endSessions": [] })
            .get_f64("ok")
            .is_ok()
    );
    assert!(
        admin(&server, doc! { "killAllSessions": [] })
            .get_f64("ok")
            .is_ok()
    );
}

#[test]
fn driver_sessions_end_cleanly_on_shutdown() {
    let mut server = TestServer::start(&[]);
    let client = server.client();
    let session = client.start_session().run().expect("session");
    drop(session);
    admin(&server, doc! { "ping": 1 });
    client.shutdown().run();
    let status = server.terminate();
    assert!(status.success(), "{status:?}");
    assert!(server.log_contains(r#""msg":"Shutting down","attr":{"exitCode":0}"#));
}
