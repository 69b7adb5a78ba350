//! The server's log as mongod users expect it (issue 50): by default every line on stderr is
//! one JSON object in mongod's structured shape (`t.$date`, `s`, `c`, `id`, `ctx`, `msg`,
//! optional `attr`), with mongod's ids for the lines mongod has; `getLog: 'global'` returns
//! the very lines printed; `--logFormat plain` prints text lines instead.
//!
//! Traffic goes over raw sockets, not the driver, so no monitoring connection logs anything
//! in the background while the lines are compared.

use crate::harness::{TestServer, decode_reply, read_frame};
use std::io::Write;
use std::time::{Duration, Instant};

/// Sends `command` on `stream` as OP_MSG and returns the reply's body.
fn command(stream: &mut std::net::TcpStream, command: bson::RawDocumentBuf) -> bson::Document {
    let frame = wire::OpMsg::new(command).encode(1, 0).expect("encode");
    stream.write_all(&frame).expect("send");
    let reply = read_frame(stream).expect("a reply");
    decode_reply(&reply).1
}

/// A connection that says hello as a driver does (with its `client` metadata), inserts,
/// reads and leaves.
fn some_traffic(server: &TestServer) {
    let mut stream = server.raw();
    let hello = bson::rawdoc! {
        "hello": 1,
        "client": { "driver": { "name": "raw-test", "version": "1" }, "os": { "type": "Linux" } },
        "$db": "admin",
    };
    assert_eq!(command(&mut stream, hello).get_f64("ok").ok(), Some(1.0));
    let insert = bson::rawdoc! { "insert": "c", "documents": [{ "_id": 1 }], "$db": "app" };
    assert_eq!(command(&mut stream, insert).get_f64("ok").ok(), Some(1.0));
    let find = bson::rawdoc! { "find": "c", "$db": "app" };
    assert_eq!(command(&mut stream, find).get_f64("ok").ok(), Some(1.0));
}

/// Waits (up to 5 s) until the lines the server printed satisfy `done`, and returns them.
fn lines_after(server: &TestServer, done: impl Fn(&[String]) -> bool) -> Vec<String> {
    let deadline = Instant::now() + Duration::from_secs(5);
    loop {
        let lines = server.log_lines();
        if done(&lines) || Instant::now() > deadline {
            return lines;
        }
        std::thread::sleep(Duration::from_millis(10));
    }
}

/// The line's fields as mongod writes them, or why it is not one of mongod's lines.
fn check_mongod_shape(line: &str) -> Result<serde_json::Value, String> {
    let value: serde_json::Value =
        serde_json::from_str(line).map_err(|error| format!("not JSON ({error}): {line}"))?;
    let object = value.as_object().ok_or(format!("not an object: {line}"))?;
    let mut keys: Vec<&str> = object.keys().map(String::as_str).collect();
    keys.sort_unstable();
    if keys != ["c", "ctx", "id", "msg", "s", "t"]
        && keys != ["attr", "c", "ctx", "id", "msg", "s", "t"]
    {
        return Err(format!("fields {keys:?} are not mongod's: {line}"));
    }
    if object.get("attr").is_some_and(|attr| !attr.is_object()) {
        return Err(format!("attr must be an object: {line}"));
    }
    // mongod's order (serde_json's map sorts keys, so the text itself is read).
    let at = |field: &str| line.find(&format!("\"{field}\":"));
    let order = ["t", "s", "c", "id", "ctx", "msg", "attr"].map(at);
    let present: Vec<usize> = order.iter().flatten().copied().collect();
    if !line.starts_with("{\"t\":{\"$date\":\"") || !present.is_sorted() {
        return Err(format!("fields not in mongod's order: {line}"));
    }
    let date = value["t"]["$date"].as_str().unwrap_or_default();
    // mongod's date: 2026-12-07T19:00:00.123+00:00.
    if date.len() != 29 || !date.ends_with("+00:00") || date.get(19..20) != Some(".") {
        return Err(format!("t.$date is not mongod's: {line}"));
    }
    let severity = value["s"].as_str().unwrap_or_default();
    if !["F", "E", "W", "I", "D1", "D2", "D3", "D4", "D5"].contains(&severity) {
        return Err(format!("severity {severity:?}: {line}"));
    }
    if !value["c"].is_string() || !value["ctx"].is_string() || !value["msg"].is_string() {
        return Err(format!("c, ctx and msg must be strings: {line}"));
    }
    if !value["id"].is_i64() {
        return Err(format!("id must be an integer: {line}"));
    }
    Ok(value)
}

#[test]
fn every_stderr_line_is_mongod_s_structured_json_with_its_ids() {
    let mut server = TestServer::start(&[]);
    some_traffic(&server);
    // The client's own end, logged before the stop (else the stop would end it).
    lines_after(&server, |lines| {
        lines.iter().any(|line| line.contains("\"id\":22944"))
    });
    server.terminate();
    let lines = lines_after(&server, |lines| {
        lines.iter().any(|line| line.contains("\"Shutting down\""))
    });
    let mut ids = Vec::new();
    for line in &lines {
        let value = check_mongod_shape(line).unwrap_or_else(|error| panic!("{error}"));
        ids.push((
            value["c"].as_str().unwrap_or_default().to_owned(),
            value["id"].as_i64().unwrap_or_default(),
            value["msg"].as_str().unwrap_or_default().to_owned(),
        ));
    }
    // mongod's component, id and message for the lines mongod has.
    for (component, id, message) in [
        ("NETWORK", 23015, "Listening on"),
        ("NETWORK", 23016, "Waiting for connections"),
        ("NETWORK", 22943, "Connection accepted"),
        ("NETWORK", 51800, "client metadata"),
        ("NETWORK", 22944, "Connection ended"),
        ("CONTROL", 23377, "Received signal"),
        ("CONTROL", 20565, "Now exiting"),
        ("CONTROL", 23138, "Shutting down"),
    ] {
        let found = ids
            .iter()
            .filter(|(c, i, m)| c == component && *i == id && m == message)
            .count();
        assert_eq!(found, 1, "{component} {id} {message}: {lines:#?}");
    }
    let accepted = lines
        .iter()
        .find(|line| line.contains("\"id\":22943"))
        .expect("accepted");
    let value = check_mongod_shape(accepted).expect("shape");
    assert_eq!(value["ctx"], "listener");
    assert_eq!(value["attr"]["connectionId"], 1);
    assert_eq!(value["attr"]["connectionCount"], 1);
    let ended = lines
        .iter()
        .find(|line| line.contains("\"id\":22944"))
        .expect("ended");
    let value = check_mongod_shape(ended).expect("shape");
    assert_eq!(value["ctx"], "conn1");
    assert_eq!(value["attr"]["connectionCount"], 0);
    assert!(value["attr"].get("reason").is_none(), "{ended}");
    let metadata = lines
        .iter()
        .find(|line| line.contains("\"id\":51800"))
        .expect("client metadata");
    let value = check_mongod_shape(metadata).expect("shape");
    assert_eq!(value["attr"]["doc"]["driver"]["name"], "raw-test");
}

#[test]
fn get_log_global_returns_the_lines_printed() {
    let server = TestServer::start(&[]);
    some_traffic(&server);
    let mut stream = server.raw();
    let reply = command(
        &mut stream,
        bson::rawdoc! { "getLog": "global", "$db": "admin" },
    );
    let recorded: Vec<String> = reply
        .get_array("log")
        .expect("log")
        .iter()
        .map(|line| line.as_str().expect("a string").to_owned())
        .collect();
    let last = recorded.last().expect("lines").clone();
    let printed = lines_after(&server, |lines| lines.contains(&last));
    let end = printed
        .iter()
        .position(|line| *line == last)
        .unwrap_or_else(|| panic!("{last} never printed: {printed:#?}"));
    assert_eq!(printed[..=end], recorded[..], "printed, then recorded");
}

#[test]
fn plain_format_prints_text_lines_and_is_reported_in_get_cmd_line_opts() {
    let mut server = TestServer::start(&["--logFormat", "plain"]);
    let mut stream = server.raw();
    let reply = command(
        &mut stream,
        bson::rawdoc! { "getCmdLineOpts": 1, "$db": "admin" },
    );
    let parsed = reply.get_document("parsed").expect("parsed");
    let ours = parsed.get_document("multiforadb").expect("multiforadb");
    assert_eq!(ours.get_str("logFormat").ok(), Some("plain"), "{reply:?}");
    // getLog stays mongod's JSON whatever is printed.
    let log = command(
        &mut stream,
        bson::rawdoc! { "getLog": "global", "$db": "admin" },
    );
    let recorded = log.get_array("log").expect("log");
    assert!(
        recorded
            .iter()
            .all(|line| check_mongod_shape(line.as_str().unwrap_or_default()).is_ok()),
        "{recorded:?}"
    );
    drop(stream);
    server.terminate();
    let lines = lines_after(&server, |lines| {
        lines.iter().any(|line| line.contains("Shutting down"))
    });
    for line in &lines {
        assert!(
            check_mongod_shape(line).is_err(),
            "JSON in plain mode: {line}"
        );
        // `2026-12-07T19:00:00.123+00:00 INFO  NETWORK  [listener] Connection accepted {..}`
        let date = line.get(..29).unwrap_or_default();
        assert!(date.ends_with("+00:00"), "{line}");
        assert!(line.contains(" ["), "{line}");
    }
    assert!(
        lines.iter().any(
            |line| line.contains(" INFO  NETWORK  [listener] Connection accepted {\"remote\":")
        ),
        "{lines:#?}"
    );
    assert!(
        lines
            .iter()
            .any(|line| line.contains(" INFO  CONTROL  [SignalHandler] Received signal")),
        "{lines:#?}"
    );
}

/// A server that cannot start (the file is another's) says so in mongod's lines too:
/// its failure (STORAGE 20557, severity E) and its exit code.
#[test]
fn a_refused_start_is_logged_in_mongod_s_lines() {
    let db = TestServer::temp_db();
    let first = TestServer::start_at(&db, &[]);
    let (status, stderr) = TestServer::refused_at(&db);
    drop(first);
    for path in [db.clone(), db.with_extension("mfdb-wal")] {
        let _ = std::fs::remove_file(path);
    }
    assert!(!status.success(), "{stderr}");
    let lines: Vec<serde_json::Value> = stderr
        .lines()
        .map(|line| check_mongod_shape(line).unwrap_or_else(|error| panic!("{error}")))
        .collect();
    let failure = lines
        .iter()
        .find(|line| line["id"] == 20557)
        .unwrap_or_else(|| panic!("no failure line: {stderr}"));
    assert_eq!(failure["s"], "E");
    assert_eq!(failure["c"], "STORAGE");
    let error = failure["attr"]["error"].as_str().unwrap_or_default();
    assert!(error.contains("DBPathInUse"), "{stderr}");
    let last = lines.last().expect("lines");
    assert_eq!(last["msg"], "Shutting down");
    assert_eq!(last["attr"]["exitCode"], 1);
}

/// The Node.js driver and mongosh say their first hello as a legacy OP_QUERY (plain or
/// wrapped in `$query`): its client metadata is logged as an OP_MSG one is.
#[test]
fn a_legacy_handshake_s_client_metadata_is_logged() {
    let server = TestServer::start(&[]);
    for (id, query) in [
        (
            1,
            bson::rawdoc! { "isMaster": 1, "client": { "driver": { "name": "legacy-plain" } } },
        ),
        (
            2,
            bson::rawdoc! {
                "$query": { "isMaster": 1, "client": { "driver": { "name": "legacy-wrapped" } } },
                "$readPreference": { "mode": "primaryPreferred" },
            },
        ),
    ] {
        let mut stream = server.raw();
        let query = wire::OpQuery {
            flags: 0,
            full_collection_name: "admin.$cmd".into(),
            number_to_skip: 0,
            number_to_return: -1,
            query,
            return_fields_selector: None,
        };
        stream
            .write_all(&query.encode(id).expect("encode"))
            .expect("send");
        read_frame(&mut stream).expect("a reply");
    }
    let text = r#""msg":"client metadata","attr":{"remote":"127.0.0.1:"#;
    for name in ["legacy-plain", "legacy-wrapped"] {
        let found = lines_after(&server, |lines| {
            lines
                .iter()
                .any(|line| line.contains(text) && line.contains(name))
        });
        assert!(
            found
                .iter()
                .any(|line| line.contains(text) && line.contains(name)),
            "{name}: {found:#?}"
        );
    }
}
