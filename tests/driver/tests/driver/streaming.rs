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

/// The open cursors serverStatus counts.
fn open_cursors(server: &TestServer) -> i64 {
    let status = server
        .client()
        .database("admin")
        .run_command(bson::doc! { "serverStatus": 1 })
        .run()
        .expect("serverStatus");
    let open = status
        .get_document("metrics")
        .and_then(|m| m.get_document("cursor"))
        .and_then(|c| c.get_document("open"))
        .expect("metrics.cursor.open");
    open.get_i64("total").expect("total")
}

/// A collection `app.c` of `count` small documents, and a cursor over it with a first batch
/// of 2: its id.
fn cursor_over(server: &TestServer, stream: &mut TcpStream, count: i32) -> i64 {
    let coll = server.client().database("app").collection::<Document>("c");
    let docs: Vec<Document> = (0..count).map(|i| bson::doc! { "_id": i }).collect();
    coll.insert_many(docs).run().expect("insert");
    send(
        stream,
        1,
        0,
        rawdoc! { "find": "c", "batchSize": 2, "$db": "app" },
    );
    let (_, _, reply) = receive(stream);
    let cursor = reply.get_document("cursor").expect("cursor");
    assert_eq!(cursor.get_array("firstBatch").map(Vec::len).ok(), Some(2));
    cursor.get_i64("id").expect("id")
}

#[test]
fn an_exhaust_get_more_streams_every_batch_until_the_cursor_is_exhausted() {
    let mut server = TestServer::start(&[]);
    let mut stream = server.raw();
    let id = cursor_over(&server, &mut stream, 1000);
    assert_ne!(id, 0);
    let body = rawdoc! { "getMore": id, "collection": "c", "batchSize": 7, "$db": "app" };
    send(&mut stream, 2, MsgFlags::EXHAUST_ALLOWED, body);
    let (mut answering, mut seen, mut replies) = (2, 2, 0_u32);
    loop {
        let (header, flags, reply) = receive(&mut stream);
        assert_eq!(header.response_to, answering, "{reply:?}");
        answering = header.request_id;
        replies += 1;
        let cursor = reply.get_document("cursor").expect("cursor");
        let batch = cursor.get_array("nextBatch").expect("nextBatch");
        for doc in batch {
            let doc = doc.as_document().expect("document");
            assert_eq!(
                doc.get_i32("_id").ok(),
                Some(seen),
                "in order, none skipped"
            );
            seen += 1;
        }
        let more = cursor.get_i64("id").expect("id") != 0;
        assert_eq!(
            flags.more_to_come(),
            more,
            "moreToCome until the cursor is exhausted"
        );
        if !more {
            break;
        }
    }
    assert_eq!(seen, 1000);
    assert_eq!(replies, 998_u32.div_ceil(7));
    // The connection is an ordinary one again.
    send(&mut stream, 50, 0, rawdoc! { "ping": 1, "$db": "admin" });
    let (header, flags, _) = receive(&mut stream);
    assert_eq!((header.response_to, flags.more_to_come()), (50, false));
    assert_eq!(open_cursors(&server), 0);
    server.assert_healthy();
}

#[test]
fn a_client_that_leaves_an_exhaust_stream_leaves_no_cursor_behind() {
    let mut server = TestServer::start(&[]);
    let mut stream = server.raw();
    let id = cursor_over(&server, &mut stream, 5000);
    assert_eq!(open_cursors(&server), 1);
    let body = rawdoc! { "getMore": id, "collection": "c", "batchSize": 2, "$db": "app" };
    send(&mut stream, 2, MsgFlags::EXHAUST_ALLOWED, body);
    let (_, flags, _) = receive(&mut stream);
    assert!(flags.more_to_come());
    drop(stream);
    // The server notices the close when it next reads or writes: wait for it (up to 10 s).
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
    while open_cursors(&server) != 0 {
        assert!(
            std::time::Instant::now() < deadline,
            "the stream's cursor is still open"
        );
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    server.assert_healthy();
}

/// An error ends a stream: a getMore of an unknown cursor is answered once, without
/// moreToCome, with mongod's 43 CursorNotFound.
#[test]
fn an_exhaust_get_more_that_fails_is_answered_once() {
    let server = TestServer::start(&[]);
    let mut stream = server.raw();
    let body = rawdoc! { "getMore": 12345i64, "collection": "c", "$db": "app" };
    send(&mut stream, 4, MsgFlags::EXHAUST_ALLOWED, body);
    let (header, flags, reply) = receive(&mut stream);
    assert_eq!(header.response_to, 4);
    assert!(!flags.more_to_come());
    assert_eq!(reply.get_i32("code").ok(), Some(43), "{reply:?}");
}
