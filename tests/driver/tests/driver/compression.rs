//! OP_COMPRESSED (issue 20): the Rust driver with each compressor, hello's negotiation,
//! replies compressed as their requests were, and lying or disabled compressed frames
//! closing the connection while the server serves others.

use crate::harness::{TestServer, closed_within, read_frame, roundtrip};
use bson::{doc, rawdoc};
use std::io::Write;
use std::time::Duration;
use wire::compression::{compress, decompress, is_compressed};
use wire::{Compressor, OpMsg};

const ALL: [Compressor; 4] = [
    Compressor::Noop,
    Compressor::Snappy,
    Compressor::Zlib,
    Compressor::Zstd,
];

fn hello_with(compression: &[&str]) -> Vec<u8> {
    let list: Vec<bson::Bson> = compression.iter().map(|&n| n.into()).collect();
    let body = bson::RawDocumentBuf::try_from(&doc! {
        "hello": 1, "$db": "admin", "compression": list,
    })
    .expect("raw");
    OpMsg::new(body).encode(1, 0).expect("encode")
}

#[test]
fn hello_answers_the_compressors_both_sides_have_in_the_clients_order() {
    let server = TestServer::start(&[]);
    let mut stream = server.raw();
    let (_, reply) = roundtrip(&mut stream, &hello_with(&["zlib", "lz4", "snappy", "zlib"]));
    let names: Vec<&str> = reply
        .get_array("compression")
        .expect("compression")
        .iter()
        .filter_map(|b| b.as_str())
        .collect();
    assert_eq!(names, ["zlib", "snappy"]);
    let (_, reply) = roundtrip(&mut stream, &hello_with(&["lz4"]));
    assert!(reply.get("compression").is_none(), "{reply:?}");
    let (_, reply) = roundtrip(&mut stream, &hello_with(&[]));
    assert!(reply.get("compression").is_none(), "{reply:?}");

    let disabled = TestServer::start(&["--networkMessageCompressors", "disabled"]);
    let mut stream = disabled.raw();
    let (_, reply) = roundtrip(&mut stream, &hello_with(&["snappy", "zstd"]));
    assert!(reply.get("compression").is_none(), "{reply:?}");

    let only = TestServer::start(&["--networkMessageCompressors", "zstd"]);
    let mut stream = only.raw();
    let (_, reply) = roundtrip(&mut stream, &hello_with(&["snappy", "zstd"]));
    assert_eq!(
        reply.get_array("compression").expect("compression"),
        &vec![bson::Bson::from("zstd")]
    );
}

#[test]
fn a_compressed_request_gets_a_reply_compressed_the_same_way() {
    let server = TestServer::start(&["--networkMessageCompressors", "snappy,zlib,zstd,noop"]);
    let mut stream = server.raw();
    for (i, compressor) in ALL.into_iter().enumerate() {
        let id = 10 + i32::try_from(i).expect("small");
        let ping = OpMsg::new(rawdoc! { "ping": 1, "$db": "admin" })
            .encode(id, 0)
            .expect("encode");
        stream
            .write_all(&compress(&ping, compressor).expect("compress"))
            .expect("send");
        let reply = read_frame(&mut stream).expect("a reply");
        assert!(
            is_compressed(&reply),
            "{compressor:?}: the reply is compressed"
        );
        let (inner, used) = decompress(&reply, &ALL).expect("the reply decompresses");
        assert_eq!(used, compressor);
        let (header, body) = crate::harness::decode_reply(&inner);
        assert_eq!(header.response_to, id);
        assert_eq!(body.get_f64("ok").ok(), Some(1.0), "{compressor:?}");
    }
    // hello is never compressed, even when asked compressed.
    let hello = compress(&hello_with(&["zstd"]), Compressor::Zstd).expect("compress");
    stream.write_all(&hello).expect("send");
    let reply = read_frame(&mut stream).expect("a reply");
    assert!(!is_compressed(&reply), "hello's reply is not compressed");
    // An uncompressed request still gets an uncompressed reply.
    let (_, reply) = roundtrip(&mut stream, &crate::harness::ping_frame(99));
    assert_eq!(reply.get_f64("ok").ok(), Some(1.0));
}

#[test]
fn lying_or_disabled_compressed_frames_close_that_connection_only() {
    let mut server = TestServer::start(&["--networkMessageCompressors", "snappy,zlib"]);
    let ping = crate::harness::ping_frame(5);
    // A compressor the server does not enable.
    let mut stream = server.raw();
    stream
        .write_all(&compress(&ping, Compressor::Zstd).expect("compress"))
        .expect("send");
    assert!(closed_within(&mut stream, Duration::from_secs(5)));
    // Sizes that lie, in both directions, for each enabled compressor.
    for compressor in [Compressor::Snappy, Compressor::Zlib] {
        for delta in [-1i32, 1, 1 << 20] {
            let mut frame = compress(&ping, compressor).expect("compress");
            let size = i32::from_le_bytes(frame[20..24].try_into().expect("4 bytes"));
            frame[20..24].copy_from_slice(&(size + delta).to_le_bytes());
            let mut stream = server.raw();
            stream.write_all(&frame).expect("send");
            assert!(
                closed_within(&mut stream, Duration::from_secs(5)),
                "{compressor:?} {delta}"
            );
        }
    }
    assert!(server.log_contains("refused a compressed message"));
    server.assert_healthy();
}

/// serverStatus `network.bytesOut` as an uncompressed client reads it.
fn bytes_out(monitor: &mongodb::sync::Client) -> i64 {
    let status = monitor
        .database("admin")
        .run_command(doc! { "serverStatus": 1 })
        .run()
        .expect("serverStatus");
    let network = status.get_document("network").expect("network");
    network
        .get_i64("bytesOut")
        .or_else(|_| network.get_i32("bytesOut").map(i64::from))
        .expect("bytesOut")
}

#[test]
fn the_rust_driver_works_through_each_compressor() {
    let server = TestServer::start(&[]);
    let monitor = server.client();
    let payload = "compress me ".repeat(2000);
    for name in ["none", "snappy", "zlib", "zstd"] {
        let uri = match name {
            "none" => server.uri(),
            _ => format!("{}&compressors={name}", server.uri()),
        };
        let client = mongodb::sync::Client::with_uri_str(&uri).expect("client");
        let coll = client
            .database("compression")
            .collection::<bson::Document>(name);
        let docs: Vec<bson::Document> = (0..200)
            .map(|i| doc! { "_id": i, "payload": &payload })
            .collect();
        coll.insert_many(docs).run().expect("insert_many");
        let before = bytes_out(&monitor);
        let found: Vec<bson::Document> = coll
            .find(doc! { "_id": { "$gte": 100 } })
            .run()
            .expect("find")
            .map(|d| d.expect("doc"))
            .collect();
        assert_eq!(found.len(), 100, "{name}");
        // The 100 documents are 2.4 MB; compressed replies carry a small part of that
        // (the serverStatus reply in between is a few KB).
        let sent = bytes_out(&monitor) - before;
        if name == "none" {
            assert!(sent > 2_400_000, "uncompressed: {sent} bytes");
        } else {
            assert!(
                sent < 400_000,
                "{name}: {sent} bytes for 2.4 MB of documents"
            );
        }
        assert!(
            found
                .iter()
                .all(|d| d.get_str("payload").ok() == Some(payload.as_str()))
        );
        let updated = coll
            .update_many(doc! {}, doc! { "$set": { "seen": name } })
            .run()
            .expect("update");
        assert_eq!(updated.modified_count, 200);
    }
}
