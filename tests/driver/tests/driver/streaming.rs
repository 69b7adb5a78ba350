//! Replies that wait or stream (issue 22): hello's `topologyVersion` and the awaitable
//! hello, as mongod 7.0 answers them, by hand on the wire and through the Rust driver
//! (which monitors with the streaming protocol once it sees `topologyVersion`).

use crate::harness::{TestServer, read_frame};
use bson::{Document, rawdoc};
use std::io::Write;
use std::net::TcpStream;
use wire::{Header, Message, MsgFlags, OpMsg};

/// Sends `body` as an OP_MSG with `flags` and request id `id`.
fn send(stream: &mut TcpStream, id: i32, flags: u32, body: bson::RawDocumentBuf) {
    let mut message = OpMsg::new(body);
    message.flags = MsgFlags(flags);
    let frame = message.encode(id, 0).expect("encode");
    stream.write_all(&frame).expect("send");
}

/// The next reply: its header, flags and body.
fn receive(stream: &mut TcpStream) -> (Header, MsgFlags, Document) {
    let frame = read_frame(stream).expect("a reply");
    let (header, message) = wire::decode(&frame).expect("decodes");
    let Message::Msg(msg) = message else {
        panic!("not an OP_MSG: {message:?}");
    };
    let body = Document::try_from(&msg.body).expect("body");
    (header, msg.flags, body)
}

fn topology_version(body: &Document) -> Document {
    body.get_document("topologyVersion")
        .unwrap_or_else(|_| panic!("no topologyVersion: {body:?}"))
        .clone()
}

#[test]
fn hello_and_is_master_carry_one_topology_version_per_process() {
    let server = TestServer::start(&[]);
    let client = server.client();
    let admin = client.database("admin");
    let hello = admin
        .run_command(bson::doc! { "hello": 1 })
        .run()
        .expect("hello");
    let version = topology_version(&hello);
    assert!(version.get_object_id("processId").is_ok(), "{version:?}");
    assert_eq!(version.get_i64("counter").ok(), Some(0), "{version:?}");
    assert_eq!(version.len(), 2, "{version:?}");
    let is_master = admin
        .run_command(bson::doc! { "isMaster": 1 })
        .run()
        .expect("isMaster");
    assert_eq!(topology_version(&is_master), version);
    // Another connection, the same process: the same processId.
    let mut stream = server.raw();
    send(&mut stream, 1, 0, rawdoc! { "hello": 1, "$db": "admin" });
    let (_, _, raw) = receive(&mut stream);
    assert_eq!(topology_version(&raw), version);
    // Another process: another processId.
    let other = TestServer::start(&[]);
    let mut stream = other.raw();
    send(&mut stream, 1, 0, rawdoc! { "hello": 1, "$db": "admin" });
    let (_, _, theirs) = receive(&mut stream);
    assert_ne!(topology_version(&theirs), version);
}

#[test]
fn an_awaitable_hello_with_exhaust_streams_replies_each_answering_the_last() {
    let server = TestServer::start(&[]);
    let mut stream = server.raw();
    send(&mut stream, 1, 0, rawdoc! { "hello": 1, "$db": "admin" });
    let (_, _, first) = receive(&mut stream);
    let version = bson::RawDocumentBuf::try_from(&topology_version(&first)).expect("raw");
    let body = rawdoc! {
        "hello": 1, "topologyVersion": version, "maxAwaitTimeMS": 20, "$db": "admin",
    };
    send(&mut stream, 7, MsgFlags::EXHAUST_ALLOWED, body);
    let mut answering = 7;
    for _ in 0..3 {
        let (header, flags, reply) = receive(&mut stream);
        assert_eq!(header.response_to, answering, "{reply:?}");
        assert!(flags.more_to_come(), "{flags:?} {reply:?}");
        assert_eq!(reply.get_bool("isWritablePrimary").ok(), Some(true));
        assert_eq!(reply.get_f64("ok").ok(), Some(1.0));
        answering = header.request_id;
    }
    // Without exhaustAllowed: one reply, after the wait, without moreToCome.
    let mut stream = server.raw();
    let body = rawdoc! {
        "hello": 1, "topologyVersion": bson::RawDocumentBuf::try_from(&topology_version(&first))
            .expect("raw"), "maxAwaitTimeMS": 10, "$db": "admin",
    };
    send(&mut stream, 9, 0, body);
    let (header, flags, reply) = receive(&mut stream);
    assert_eq!(header.response_to, 9);
    assert!(!flags.more_to_come(), "{reply:?}");
    // The connection goes on as usual.
    send(&mut stream, 10, 0, rawdoc! { "ping": 1, "$db": "admin" });
    let (header, _, reply) = receive(&mut stream);
    assert_eq!(
        (header.response_to, reply.get_f64("ok").ok()),
        (10, Some(1.0))
    );
}

#[test]
fn a_hello_naming_another_process_is_answered_without_waiting() {
    let server = TestServer::start(&[]);
    let mut stream = server.raw();
    // An hour's wait, unless the server answers at once as mongod does for a topology
    // version of another process (the read timeout of 10 s fails the test otherwise).
    let body = rawdoc! {
        "hello": 1,
        "topologyVersion": { "processId": bson::oid::ObjectId::new(), "counter": 0i64 },
        "maxAwaitTimeMS": 3_600_000,
        "$db": "admin",
    };
    send(&mut stream, 3, 0, body);
    let (header, _, reply) = receive(&mut stream);
    assert_eq!(header.response_to, 3);
    assert_eq!(reply.get_f64("ok").ok(), Some(1.0), "{reply:?}");
}

#[test]
fn awaitable_hello_options_are_checked_as_mongod_checks_them() {
    let server = TestServer::start(&[]);
    let mut stream = server.raw();
    send(&mut stream, 1, 0, rawdoc! { "hello": 1, "$db": "admin" });
    let (_, _, first) = receive(&mut stream);
    let version = topology_version(&first);
    let process = version.get_object_id("processId").expect("processId");
    let cases = [
        (
            rawdoc! { "hello": 1, "maxAwaitTimeMS": 5, "$db": "admin" },
            31368,
            "Location31368",
        ),
        (
            rawdoc! { "hello": 1, "topologyVersion": { "processId": process, "counter": 0i64 },
            "$db": "admin" },
            31368,
            "Location31368",
        ),
        (
            rawdoc! { "hello": 1, "topologyVersion": { "processId": process, "counter": -1i64 },
            "maxAwaitTimeMS": 5, "$db": "admin" },
            31372,
            "Location31372",
        ),
        (
            rawdoc! { "hello": 1, "topologyVersion": { "processId": process, "counter": 0i64 },
            "maxAwaitTimeMS": -1, "$db": "admin" },
            51024,
            "Location51024",
        ),
        (
            rawdoc! { "hello": 1, "topologyVersion": { "processId": process, "counter": 5i64 },
            "maxAwaitTimeMS": 5, "$db": "admin" },
            31382,
            "Location31382",
        ),
    ];
    for (index, (body, code, name)) in cases.into_iter().enumerate() {
        let id = i32::try_from(index).expect("small") + 10;
        send(&mut stream, id, MsgFlags::EXHAUST_ALLOWED, body);
        let (header, flags, reply) = receive(&mut stream);
        assert_eq!(header.response_to, id);
        assert!(!flags.more_to_come(), "an error ends the stream: {reply:?}");
        assert_eq!(reply.get_i32("code").ok(), Some(code), "{reply:?}");
        assert_eq!(reply.get_str("codeName").ok(), Some(name), "{reply:?}");
    }
}

/// The Rust driver monitors a server announcing `topologyVersion` with the streaming
/// protocol (an exhaust hello held `maxAwaitTimeMS`): commands keep working beside it,
/// and the server sees the monitor's connection stay open rather than reconnect.
#[test]
fn the_rust_driver_streams_its_monitor_and_keeps_working() {
    let server = TestServer::start(&[]);
    let uri = format!("{}&heartbeatFrequencyMS=500", server.uri());
    let client = mongodb::sync::Client::with_uri_str(uri).expect("client");
    let coll = client.database("app").collection::<Document>("c");
    for i in 0..20 {
        coll.insert_one(bson::doc! { "_id": i })
            .run()
            .expect("insert");
    }
    assert_eq!(
        coll.count_documents(bson::doc! {}).run().expect("count"),
        20
    );
    let status = client
        .database("admin")
        .run_command(bson::doc! { "serverStatus": 1 })
        .run()
        .expect("serverStatus");
    let connections = status.get_document("connections").expect("connections");
    let total = connections
        .get_i32("totalCreated")
        .map(i64::from)
        .or_else(|_| connections.get_i64("totalCreated"))
        .expect("totalCreated");
    assert!(total <= 4, "the monitor reconnected: {connections:?}");
}
