//! The registry of fuzz targets: one entry per decoder of outside bytes.
//!
//! A target takes arbitrary bytes and must return normally (any `Err` is fine);
//! a panic, an abort or a hang is a bug. Each entry also names seed inputs that
//! reach deep into the decoder, which the driver mutates.

/// A registered fuzz target.
pub struct Target {
    /// The name used on the command line (`cargo xtask fuzz <name>`).
    pub name: &'static str,
    /// Valid or nearly valid inputs for the driver to start from.
    pub seeds: fn() -> Vec<Vec<u8>>,
    /// The code under test.
    pub run: fn(&[u8]),
}

/// Every fuzz target of the workspace.
pub const TARGETS: &[Target] = &[Target {
    name: "wire",
    seeds: wire_seeds,
    run: wire_run,
}];

/// Wire decoder: any frame decodes or errors; a decoded OP_MSG re-encodes to an
/// equal message, and merging its sequences into the command never panics.
fn wire_run(bytes: &[u8]) {
    wire_decode_checked(bytes);
    // Most mutations break the length prefix first; also try the input with its
    // prefix repaired so the fuzzer reaches the sections and documents.
    if bytes.len() >= 4 {
        let mut repaired = bytes.to_vec();
        let length = i32::try_from(bytes.len()).unwrap_or(i32::MAX).to_le_bytes();
        repaired.splice(0..4, length);
        wire_decode_checked(&repaired);
    }
}

fn wire_decode_checked(bytes: &[u8]) {
    if let Ok((header, wire::Message::Msg(msg))) = wire::decode(bytes) {
        let _ = msg.command_document();
        let again = msg
            .encode(header.request_id, header.response_to)
            .expect("re-encodes");
        match wire::decode(&again) {
            Ok((_, wire::Message::Msg(decoded))) => assert_eq!(decoded, msg, "round trip"),
            other => panic!("re-encoded OP_MSG failed to decode: {other:?}"),
        }
    }
}

fn wire_seeds() -> Vec<Vec<u8>> {
    use bson::rawdoc;
    let ping = wire::OpMsg::new(rawdoc! { "ping": 1, "$db": "admin" });
    let mut checksummed = ping.clone();
    checksummed.flags = wire::MsgFlags(wire::MsgFlags::CHECKSUM_PRESENT);
    let mut insert = wire::OpMsg::new(rawdoc! { "insert": "c", "$db": "d" });
    insert.sequences.push(wire::DocumentSequence {
        identifier: "documents".into(),
        documents: vec![
            rawdoc! { "_id": 1, "a": [1.5, "x", { "b": null }] },
            rawdoc! {},
        ],
    });
    let query = wire::OpQuery {
        flags: 0,
        full_collection_name: "admin.$cmd".into(),
        number_to_skip: 0,
        number_to_return: -1,
        query: rawdoc! { "isMaster": 1, "client": { "driver": { "name": "x" } } },
        return_fields_selector: None,
    };
    let reply = wire::OpReply::single(rawdoc! { "ok": 1.0 });
    [
        ping.encode(1, 0),
        checksummed.encode(2, 0),
        insert.encode(3, 0),
        query.encode(4),
        reply.encode(5, 4),
    ]
    .into_iter()
    .flatten()
    .collect()
}
