//! `configureFailPoint` with `failCommand` (issue 43): absent without test commands,
//! and with them each of its actions as the drivers' specification tests use them.

use crate::support::{fails, ok, options, run};
use bson::{Document, RawDocumentBuf, doc, rawdoc};
use engine::{ConnectionContext, Engine, StartupOptions};

fn with_test_commands() -> Engine {
    Engine::new(engine::EngineOptions {
        startup: StartupOptions {
            argv: Vec::new(),
            parsed: doc! { "setParameter": { "enableTestCommands": "1" } },
        },
        ..options()
    })
}

#[test]
fn without_test_commands_configure_fail_point_does_not_exist() {
    let engine = Engine::new(options());
    let cmd = rawdoc! { "configureFailPoint": "failCommand", "mode": "off" };
    fails(&engine, "admin", cmd, 59);
    let parameter = ok(
        &engine,
        "admin",
        rawdoc! { "getParameter": 1, "enableTestCommands": 1 },
    );
    assert_eq!(parameter.get_bool("enableTestCommands").ok(), Some(false));
    let commands = ok(&engine, "admin", rawdoc! { "listCommands": 1 });
    let commands = commands.get_document("commands").expect("commands");
    assert!(!commands.contains_key("configureFailPoint"));
}

#[test]
fn fail_command_fails_the_named_commands_the_given_times_with_code_and_labels() {
    let engine = with_test_commands();
    let parameter = ok(
        &engine,
        "admin",
        rawdoc! { "getParameter": 1, "enableTestCommands": 1 },
    );
    assert_eq!(parameter.get_bool("enableTestCommands").ok(), Some(true));
    let configured = ok(
        &engine,
        "admin",
        rawdoc! {
            "configureFailPoint": "failCommand", "mode": { "times": 1 },
            "data": { "failCommands": ["insert"], "errorCode": 91, "errorLabels": ["RetryableWriteError"] },
        },
    );
    assert_eq!(configured.get_i64("count").ok(), Some(0));
    ok(&engine, "db", rawdoc! { "find": "c" });
    let failed = fails(
        &engine,
        "db",
        rawdoc! { "insert": "c", "documents": [{ "_id": 1 }] },
        91,
    );
    assert_eq!(failed.get_str("codeName").ok(), Some("ShutdownInProgress"));
    assert_eq!(
        failed.get_str("errmsg").ok(),
        Some("Failing command via 'failCommand' failpoint")
    );
    let labels: Vec<&str> = failed
        .get_array("errorLabels")
        .expect("labels")
        .iter()
        .filter_map(|l| l.as_str())
        .collect();
    assert_eq!(labels, ["RetryableWriteError"]);
    // The failed insert did not run; the next one does, the point being spent.
    let inserted = ok(
        &engine,
        "db",
        rawdoc! { "insert": "c", "documents": [{ "_id": 1 }] },
    );
    assert_eq!(inserted.get_i32("n").ok(), Some(1));
    let off = ok(
        &engine,
        "admin",
        rawdoc! { "configureFailPoint": "failCommand", "mode": "off" },
    );
    assert_eq!(off.get_i64("count").ok(), Some(1));
}

#[test]
fn write_concern_errors_are_added_to_replies_of_commands_that_ran() {
    let engine = with_test_commands();
    ok(
        &engine,
        "admin",
        rawdoc! {
            "configureFailPoint": "failCommand", "mode": "alwaysOn",
            "data": {
                "failCommands": ["insert"],
                "writeConcernError": { "code": 100, "errmsg": "Not enough data-bearing nodes" },
            },
        },
    );
    let reply = ok(
        &engine,
        "db",
        rawdoc! { "insert": "c", "documents": [{ "_id": 1 }] },
    );
    assert_eq!(reply.get_i32("n").ok(), Some(1), "the insert ran");
    let error = reply
        .get_document("writeConcernError")
        .expect("writeConcernError");
    assert_eq!(error.get_i32("code").ok(), Some(100));
}

#[test]
fn close_connection_is_a_reply_the_server_must_not_send() {
    let engine = with_test_commands();
    ok(
        &engine,
        "admin",
        rawdoc! {
            "configureFailPoint": "failCommand", "mode": { "times": 1 },
            "data": { "failCommands": ["ping"], "closeConnection": true },
        },
    );
    let reply = engine.run_command(
        "admin",
        &rawdoc! { "ping": 1 },
        &ConnectionContext::default(),
    );
    assert!(Engine::closes_connection(&reply).is_some(), "{reply:?}");
    let reply = engine.run_command(
        "admin",
        &rawdoc! { "ping": 1 },
        &ConnectionContext::default(),
    );
    assert_eq!(Engine::closes_connection(&reply), None);
}

#[test]
fn app_name_limits_the_point_to_connections_whose_handshake_named_it() {
    let engine = with_test_commands();
    ok(
        &engine,
        "admin",
        rawdoc! {
            "configureFailPoint": "failCommand", "mode": "alwaysOn",
            "data": { "failCommands": ["ping"], "errorCode": 2, "appName": "mine" },
        },
    );
    let mine = ConnectionContext::default();
    let other = ConnectionContext::default();
    let hello = |name: &str| rawdoc! { "hello": 1, "client": { "application": { "name": name } } };
    let run_on = |ctx: &ConnectionContext, cmd: RawDocumentBuf| {
        Document::try_from(&engine.run_command("admin", &cmd, ctx)).expect("reply")
    };
    run_on(&mine, hello("mine"));
    run_on(&other, hello("theirs"));
    assert_eq!(
        run_on(&mine, rawdoc! { "ping": 1 }).get_i32("code").ok(),
        Some(2)
    );
    assert_eq!(
        run_on(&other, rawdoc! { "ping": 1 }).get_f64("ok").ok(),
        Some(1.0)
    );
    // A connection that never said: not matched either.
    assert_eq!(
        run(&engine, "admin", rawdoc! { "ping": 1 })
            .get_f64("ok")
            .ok(),
        Some(1.0)
    );
}

#[test]
fn an_unknown_fail_point_and_a_bad_mode_are_refused_as_mongod_refuses_them() {
    let engine = with_test_commands();
    let unknown = fails(
        &engine,
        "admin",
        rawdoc! { "configureFailPoint": "noSuchPoint", "mode": "alwaysOn" },
        266,
    );
    assert_eq!(unknown.get_str("codeName").ok(), Some("FailPointSetFailed"));
    fails(
        &engine,
        "admin",
        rawdoc! { "configureFailPoint": "failCommand", "mode": "sometimes" },
        2,
    );
    // Outside admin: as every admin-only command.
    fails(
        &engine,
        "db",
        rawdoc! { "configureFailPoint": "failCommand", "mode": "off" },
        13,
    );
}

#[test]
fn state_change_errors_carry_the_topology_version_as_mongods_do() {
    let engine = with_test_commands();
    let hello = ok(&engine, "admin", rawdoc! { "hello": 1 });
    let version = hello
        .get_document("topologyVersion")
        .expect("topologyVersion")
        .clone();
    for (code, carries) in [
        (11600, true),
        (91, true),
        (10107, true),
        (189, true),
        (2, false),
    ] {
        ok(
            &engine,
            "admin",
            rawdoc! {
                "configureFailPoint": "failCommand", "mode": { "times": 1 },
                "data": { "failCommands": ["find"], "errorCode": code },
            },
        );
        let failed = fails(&engine, "db", rawdoc! { "find": "c" }, code);
        // Drivers take an error whose topologyVersion is not newer than their monitor's
        // as stale: they retry at once instead of waiting for the next heartbeat.
        let shown = failed.get_document("topologyVersion").ok();
        assert_eq!(shown, carries.then_some(&version), "code {code}");
    }
}
