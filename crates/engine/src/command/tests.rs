//! Dispatcher and handler tests through the public entry points, with a fixed host.

use crate::{ConnectionContext, Engine, EngineOptions, FixedHost, HostFacts, StartupOptions};
use bson::{RawDocumentBuf, doc, rawdoc};
use std::sync::Arc;

fn engine() -> Engine {
    let host = FixedHost {
        now_millis: 1_700_000_000_000,
        uptime_millis: 5_500,
        facts: HostFacts {
            hostname: "box".into(),
            process_id: 42,
            ..HostFacts::default()
        },
        ..FixedHost::default()
    };
    Engine::new(EngineOptions {
        host: Arc::new(host),
        startup: StartupOptions {
            argv: vec!["multiforadb".into(), "--port".into(), "1".into()],
            parsed: doc! { "net": { "port": 1 } },
        },
        connections_max: 10,
        ttl_interval: None,
    })
}

fn ctx() -> ConnectionContext {
    ConnectionContext {
        connection_id: 7,
        client_address: "127.0.0.1:5000".into(),
        ..ConnectionContext::default()
    }
}

fn run(db: &str, cmd: RawDocumentBuf) -> bson::Document {
    let reply = engine().run_command(db, &cmd, &ctx());
    bson::Document::try_from(&reply).expect("reply is valid BSON")
}

#[test]
fn ping_answers_ok() {
    assert_eq!(run("admin", rawdoc! { "ping": 1 }), doc! { "ok": 1.0 });
}

#[test]
fn unknown_command_is_command_not_found() {
    let reply = run("test", rawdoc! { "frobnicate": 1 });
    assert_eq!(reply.get_f64("ok").ok(), Some(0.0));
    assert_eq!(reply.get_i32("code").ok(), Some(59));
    assert_eq!(reply.get_str("codeName").ok(), Some("CommandNotFound"));
    assert_eq!(
        reply.get_str("errmsg").ok(),
        Some("no such command: 'frobnicate'")
    );
}

#[test]
fn commands_we_lack_are_command_not_found() {
    for name in ["mapReduce", "geoSearch"] {
        let mut cmd = RawDocumentBuf::new();
        cmd.append(bson::raw::CString::try_from(name).expect("name"), "c");
        assert_eq!(run("test", cmd).get_i32("code").ok(), Some(59), "{name}");
    }
}

#[test]
fn hello_has_limits_and_wire_versions() {
    let reply = run("admin", rawdoc! { "hello": 1, "helloOk": true });
    assert_eq!(reply.get_bool("helloOk").ok(), Some(true));
    assert_eq!(reply.get_bool("isWritablePrimary").ok(), Some(true));
    assert_eq!(
        reply.get_i32("maxBsonObjectSize").ok(),
        Some(16 * 1024 * 1024)
    );
    assert_eq!(reply.get_i32("maxMessageSizeBytes").ok(), Some(48_000_000));
    assert_eq!(reply.get_i32("maxWriteBatchSize").ok(), Some(100_000));
    assert_eq!(reply.get_i32("connectionId").ok(), Some(7));
    assert_eq!(
        reply.get_i32("maxWireVersion").ok(),
        Some(crate::version::MAX_WIRE_VERSION)
    );
    assert_eq!(
        reply
            .get_datetime("localTime")
            .map(|t| t.timestamp_millis())
            .ok(),
        Some(1_700_000_000_000)
    );
    let legacy = run("admin", rawdoc! { "isMaster": 1 });
    assert_eq!(legacy.get_bool("ismaster").ok(), Some(true));
    assert!(legacy.get("helloOk").is_none());
}

#[test]
fn build_info_version_agrees_with_wire_version() {
    let reply = run("test", rawdoc! { "buildInfo": 1 });
    assert_eq!(
        reply.get_str("version").ok(),
        Some(crate::version::SERVER_VERSION)
    );
    let array = reply.get_array("versionArray").expect("versionArray");
    assert_eq!(array.first().and_then(bson::Bson::as_i32), Some(7));
}

#[test]
fn admin_only_commands_refuse_other_databases() {
    for cmd in [
        rawdoc! { "listDatabases": 1 },
        rawdoc! { "getCmdLineOpts": 1 },
    ] {
        let reply = run("test", cmd);
        assert_eq!(reply.get_i32("code").ok(), Some(13));
    }
}

#[test]
fn list_databases_is_empty_without_storage() {
    let reply = run("admin", rawdoc! { "listDatabases": 1 });
    assert_eq!(
        reply,
        doc! { "databases": [], "totalSize": 0i64, "totalSizeMb": 0i64, "ok": 1.0 }
    );
}

#[test]
fn get_log_startup_warnings_is_empty() {
    let reply = run("admin", rawdoc! { "getLog": "startupWarnings" });
    assert_eq!(reply, doc! { "totalLinesWritten": 0, "log": [], "ok": 1.0 });
}

#[test]
fn get_parameter_reports_known_and_refuses_unknown() {
    let reply = run(
        "admin",
        rawdoc! { "getParameter": 1, "featureCompatibilityVersion": 1 },
    );
    let fcv = reply
        .get_document("featureCompatibilityVersion")
        .expect("fcv");
    assert_eq!(fcv.get_str("version").ok(), Some("7.0"));
    let unknown = run("admin", rawdoc! { "getParameter": 1, "nonsense": 1 });
    assert_eq!(unknown.get_i32("code").ok(), Some(72));
}

#[test]
fn server_status_counts_connections_and_commands() {
    let engine = engine();
    engine.stats().connection_opened();
    let _ = engine.run_command("admin", &rawdoc! { "ping": 1 }, &ctx());
    let reply = engine.run_command("admin", &rawdoc! { "serverStatus": 1 }, &ctx());
    let reply = bson::Document::try_from(&reply).expect("valid");
    let connections = reply.get_document("connections").expect("connections");
    assert_eq!(connections.get_i64("current").ok(), Some(1));
    assert_eq!(connections.get_i64("available").ok(), Some(9));
    let counters = reply.get_document("opcounters").expect("opcounters");
    assert_eq!(counters.get_i64("command").ok(), Some(2));
    assert_eq!(reply.get_f64("uptime").ok(), Some(5.5));
    assert!(reply.get_document("mem").is_ok());
}

#[test]
fn get_cmd_line_opts_returns_argv_and_parsed() {
    let reply = run("admin", rawdoc! { "getCmdLineOpts": 1 });
    assert_eq!(reply.get_array("argv").map(Vec::len).ok(), Some(3));
    assert_eq!(
        reply.get_document("parsed").ok(),
        Some(&doc! { "net": { "port": 1 } })
    );
}

#[test]
fn whatsmyuri_and_connection_status() {
    assert_eq!(
        run("admin", rawdoc! { "whatsmyuri": 1 })
            .get_str("you")
            .ok(),
        Some("127.0.0.1:5000")
    );
    let status = run("admin", rawdoc! { "connectionStatus": 1 });
    assert!(status.get_document("authInfo").is_ok());
}

#[test]
fn message_without_db_is_failed_to_parse() {
    let reply = engine().run_message(&rawdoc! { "ping": 1 }, &ctx());
    assert_eq!(reply.get_i32("code").ok(), Some(9));
    let ok = engine().run_message(&rawdoc! { "ping": 1, "$db": "admin" }, &ctx());
    assert_eq!(ok.get_f64("ok").ok(), Some(1.0));
}

#[test]
fn invalid_database_name_is_refused() {
    assert_eq!(
        run("a.b", rawdoc! { "ping": 1 }).get_i32("code").ok(),
        Some(73)
    );
    assert_eq!(
        run("", rawdoc! { "ping": 1 }).get_i32("code").ok(),
        Some(73)
    );
}

#[test]
fn legacy_query_accepts_only_the_handshake() {
    let mut query = wire::OpQuery {
        flags: 0,
        full_collection_name: "admin.$cmd".into(),
        number_to_skip: 0,
        number_to_return: -1,
        query: rawdoc! { "$query": { "isMaster": 1, "helloOk": true } },
        return_fields_selector: None,
    };
    let reply = engine().run_legacy_query(&query, &ctx());
    assert_eq!(reply.get_bool("ismaster").ok(), Some(true));
    assert_eq!(reply.get_bool("helloOk").ok(), Some(true));
    query.query = rawdoc! { "ping": 1 };
    let refused = engine().run_legacy_query(&query, &ctx());
    assert_eq!(refused.get_i32("code").ok(), Some(352));
}

#[test]
fn quick_commands_are_classified() {
    let engine = engine();
    assert!(engine.is_quick(&rawdoc! { "ping": 1 }));
    assert!(!engine.is_quick(&rawdoc! { "find": "c" }));
}

#[test]
fn a_cursor_batch_names_its_documents_by_position_and_counts_them() {
    let docs: Vec<RawDocumentBuf> = (0..1_234).map(|i| rawdoc! { "i": i }).collect();
    let ns = crate::store::Namespace::new("db", "c");
    let super::Reply::Raw(reply) =
        super::cursor::reply(&ns, 7, &docs, bson::raw::cstr!("firstBatch"))
    else {
        panic!("a cursor reply is raw");
    };
    let batch = reply
        .get_document("cursor")
        .and_then(|c| c.get_array("firstBatch"))
        .expect("firstBatch");
    let doc = bson::RawDocument::from_bytes(batch.as_bytes()).expect("an array is a document");
    for (i, element) in doc.iter_elements().enumerate() {
        let element = element.expect("element");
        assert_eq!(element.key().as_str(), i.to_string());
    }
    assert_eq!(super::elements(batch.as_bytes()), 1_234);
    // Every element type the skip knows, and one it does not (bson's count then).
    let mixed = rawdoc! {
        "d": 1.5, "s": "x", "o": { "a": 1 }, "a": [1, 2], "n": bson::RawBson::Null,
        "t": true, "l": 5_i64, "dt": bson::DateTime::from_millis(3),
    };
    assert_eq!(super::elements(mixed.as_bytes()), 8);
    assert_eq!(super::elements(rawdoc! {}.as_bytes()), 0);
}
