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

/// serverStatus `network` as an uncompressed client reads it.
fn network(monitor: &mongodb::sync::Client) -> bson::Document {
    let status = monitor
        .database("admin")
        .run_command(doc! { "serverStatus": 1 })
        .run()
        .expect("serverStatus");
    status.get_document("network").expect("network").clone()
}

/// A counter of `network` at `path` (dotted), a long.
fn counter(network: &bson::Document, path: &str) -> i64 {
    let mut doc = network;
    let mut parts = path.split('.').peekable();
    while let Some(part) = parts.next() {
        if parts.peek().is_none() {
            return doc
                .get_i64(part)
                .unwrap_or_else(|_| panic!("{path} in {network:?}"));
        }
        doc = doc.get_document(part).unwrap_or_else(|_| panic!("{path}"));
    }
    unreachable!("a path has a last part")
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
        let start = network(&monitor);
        coll.insert_many(docs).run().expect("insert_many");
        let before = network(&monitor);
        let found: Vec<bson::Document> = coll
            .find(doc! { "_id": { "$gte": 100 } })
            .run()
            .expect("find")
            .map(|d| d.expect("doc"))
            .collect();
        assert_eq!(found.len(), 100, "{name}");
        let after = network(&monitor);
        let delta = |path: &str, from: &bson::Document| counter(&after, path) - counter(from, path);
        // The 100 documents are 2.4 MB: `bytesOut` counts them as encoded, and the wire
        // (`physicalBytesOut`) carries a small part of that when compressed (the serverStatus
        // reply in between is a few KB).
        let logical = delta("bytesOut", &before);
        let sent = delta("physicalBytesOut", &before);
        assert!(logical > 2_400_000, "{name}: {logical} logical bytes");
        if name == "none" {
            assert!(sent >= logical, "uncompressed: {sent} bytes");
        } else {
            compressed_counters(name, sent, &start, &before, &after);
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

/// The wire and the compression counters of `name` between the three `network` readings:
/// before the insert, before the find and after it.
fn compressed_counters(
    name: &str,
    sent: i64,
    start: &bson::Document,
    before: &bson::Document,
    after: &bson::Document,
) {
    let delta = |path: &str, from: &bson::Document| counter(after, path) - counter(from, path);
    assert!(
        sent < 400_000,
        "{name}: {sent} bytes for 2.4 MB of documents"
    );
    // The compressor took the find's replies and gave what went out; the decompressor
    // took the compressed insert and gave its 4.8 MB back.
    let taken = delta(&format!("compression.{name}.compressor.bytesIn"), before);
    let given = delta(&format!("compression.{name}.compressor.bytesOut"), before);
    assert!(
        taken > 2_400_000 && given < 400_000 && given > 0,
        "{name}: {taken} -> {given}"
    );
    let unpacked = delta(&format!("compression.{name}.decompressor.bytesOut"), start);
    let packed = delta(&format!("compression.{name}.decompressor.bytesIn"), start);
    assert!(
        unpacked > 4_800_000 && packed < unpacked / 4,
        "{name}: {packed} -> {unpacked}"
    );
    assert!(
        delta("physicalBytesIn", start) < delta("bytesIn", start) / 4,
        "{name}: requests compressed on the wire"
    );
    for other in ["snappy", "zlib", "zstd"].iter().filter(|o| **o != name) {
        let path = format!("compression.{other}.compressor.bytesIn");
        assert_eq!(delta(&path, start), 0, "{name}: {other} unused");
    }
}
