//! The wire protocol by hand: legacy handshake, checksums, moreToCome, pipelining, SIGTERM.

use crate::harness::{TestServer, decode_reply, ping_frame, read_frame, roundtrip};
use bson::rawdoc;
use std::io::Write;
use wire::{MsgFlags, OpMsg, OpQuery};

#[test]
fn legacy_op_query_hello_gets_an_op_reply() {
    let server = TestServer::start(&[]);
    let mut stream = server.raw();
    let query = OpQuery {
        flags: 0,
        full_collection_name: "admin.$cmd".into(),
        number_to_skip: 0,
        number_to_return: -1,
        query: rawdoc! { "isMaster": 1, "helloOk": true, "client": { "driver": { "name": "t" } } },
        return_fields_selector: None,
    };
    let (header, reply) = roundtrip(&mut stream, &query.encode(11).expect("encode"));
    assert_eq!((header.op_code, header.response_to), (1, 11));
    assert_eq!(reply.get_bool("ismaster").ok(), Some(true));
    assert_eq!(reply.get_bool("helloOk").ok(), Some(true));
    // The same connection then switches to OP_MSG, as drivers do.
    let (header, reply) = roundtrip(&mut stream, &ping_frame(12));
    assert_eq!((header.op_code, header.response_to), (2013, 12));
    assert_eq!(reply.get_f64("ok").ok(), Some(1.0));
}

#[test]
fn legacy_op_query_other_than_hello_is_refused() {
    let server = TestServer::start(&[]);
    let mut stream = server.raw();
    let query = OpQuery {
        flags: 0,
        full_collection_name: "app.$cmd".into(),
        number_to_skip: 0,
        number_to_return: -1,
        query: rawdoc! { "count": "users" },
        return_fields_selector: None,
    };
    let (_, reply) = roundtrip(&mut stream, &query.encode(3).expect("encode"));
    assert_eq!(reply.get_i32("code").ok(), Some(352));
}

#[test]
fn op_msg_with_checksum_is_verified_and_answered() {
    let mut server = TestServer::start(&[]);
    let mut stream = server.raw();
    let mut msg = OpMsg::new(rawdoc! { "ping": 1, "$db": "admin" });
    msg.flags = MsgFlags(MsgFlags::CHECKSUM_PRESENT);
    let mut frame = msg.encode(5, 0).expect("encode");
    let (_, reply) = roundtrip(&mut stream, &frame);
    assert_eq!(reply.get_f64("ok").ok(), Some(1.0));
    let last = frame.len() - 1;
    frame[last] ^= 1;
    let (header, reply) = roundtrip(&mut stream, &frame);
    assert_eq!(header.response_to, 5);
    assert_eq!(reply.get_str("codeName").ok(), Some("ProtocolError"));
    server.assert_healthy();
}

#[test]
fn more_to_come_requests_get_no_reply() {
    let server = TestServer::start(&[]);
    let mut stream = server.raw();
    let mut silent = OpMsg::new(rawdoc! { "ping": 1, "$db": "admin" });
    silent.flags = MsgFlags(MsgFlags::MORE_TO_COME);
    stream
        .write_all(&silent.encode(1, 0).expect("encode"))
        .expect("send");
    let (header, _) = roundtrip(&mut stream, &ping_frame(2));
    assert_eq!(
        header.response_to, 2,
        "the moreToCome request must not be answered"
    );
}

#[test]
fn pipelined_requests_are_answered_in_order() {
    let server = TestServer::start(&[]);
    let mut stream = server.raw();
    let mut batch = Vec::new();
    for id in 100..150 {
        // Alternate inline (ping) and worker (find, which reads storage) paths.
        let command = if id % 2 == 0 {
            rawdoc! { "ping": 1, "$db": "admin" }
        } else {
            rawdoc! { "find": "c", "$db": "app" }
        };
        batch.extend(OpMsg::new(command).encode(id, 0).expect("encode"));
    }
    stream.write_all(&batch).expect("send");
    for id in 100..150 {
        let (header, reply) = decode_reply(&read_frame(&mut stream).expect("reply"));
        assert_eq!(header.response_to, id);
        assert_eq!(reply.get_f64("ok").ok(), Some(1.0));
        assert_eq!(reply.contains_key("cursor"), id % 2 == 1);
    }
}

#[test]
fn worker_dispatch_gives_the_same_answers() {
    let server = TestServer::start(&["--dispatch", "pool"]);
    let mut stream = server.raw();
    let (header, reply) = roundtrip(&mut stream, &ping_frame(9));
    assert_eq!(header.response_to, 9);
    assert_eq!(reply.get_f64("ok").ok(), Some(1.0));
}

#[test]
fn sigterm_shuts_down_gracefully() {
    let mut server = TestServer::start(&[]);
    let mut stream = server.raw();
    roundtrip(&mut stream, &ping_frame(1));
    let status = server.terminate();
    assert!(status.success(), "{status:?}");
    assert!(
        server.log_contains(r#""msg":"Received signal","attr":{"signal":15,"error":"Terminated"}"#)
    );
    assert!(server.log_contains(r#""msg":"Shutting down","attr":{"exitCode":0}"#));
    assert!(
        read_frame(&mut stream).is_none(),
        "connection closed at shutdown"
    );
}
