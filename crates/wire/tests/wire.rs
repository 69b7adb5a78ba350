//! Round trips and every refusal the decoder promises, against hand-built frames.

use bson::rawdoc;
use proptest::prelude::*;
use wire::{Error, Message, MsgFlags, OpMsg, OpQuery, OpReply, decode, limits};

fn ping() -> OpMsg {
    OpMsg::new(rawdoc! { "ping": 1, "$db": "admin" })
}

fn decode_msg(frame: &[u8]) -> OpMsg {
    match decode(frame) {
        Ok((_, Message::Msg(msg))) => msg,
        other => panic!("expected OP_MSG, got {other:?}"),
    }
}

fn decode_error(frame: &[u8]) -> Error {
    match decode(frame) {
        Err((_, error)) => error,
        Ok(other) => panic!("expected an error, got {other:?}"),
    }
}

/// Rewrites the length prefix after a test edited the frame.
fn fix_length(frame: &mut [u8]) {
    let length = i32::try_from(frame.len())
        .expect("small frame")
        .to_le_bytes();
    frame[..4].copy_from_slice(&length);
}

#[test]
fn op_msg_round_trips_with_header_ids() {
    let frame = ping().encode(7, 3).unwrap();
    let (header, message) = decode(&frame).unwrap();
    assert_eq!(
        (header.request_id, header.response_to, header.op_code),
        (7, 3, 2013)
    );
    assert_eq!(message, Message::Msg(ping()));
}

#[test]
fn op_msg_checksum_is_written_and_verified() {
    let mut msg = ping();
    msg.flags = MsgFlags(MsgFlags::CHECKSUM_PRESENT);
    let frame = msg.encode(1, 0).unwrap();
    assert_eq!(decode_msg(&frame), msg);
    let mut corrupted = frame.clone();
    corrupted[25] ^= 0x20;
    assert!(matches!(
        decode_error(&corrupted),
        Error::ChecksumMismatch { .. }
    ));
}

#[test]
fn op_msg_flags_more_to_come_and_exhaust_are_reported() {
    let mut msg = ping();
    msg.flags = MsgFlags(MsgFlags::MORE_TO_COME | MsgFlags::EXHAUST_ALLOWED | (1 << 20));
    let decoded = decode_msg(&msg.encode(1, 0).unwrap());
    assert!(decoded.flags.more_to_come());
    assert!(decoded.flags.exhaust_allowed());
    assert!(!decoded.flags.checksum_present());
}

#[test]
fn op_msg_unknown_required_flag_is_refused() {
    let mut msg = ping();
    msg.flags = MsgFlags(1 << 5);
    let frame = msg.encode(1, 0).unwrap();
    assert_eq!(
        decode_error(&frame),
        Error::UnknownRequiredFlags { flags: 1 << 5 }
    );
}

#[test]
fn op_msg_document_sequences_merge_into_the_command() {
    let mut msg = OpMsg::new(rawdoc! { "insert": "c", "$db": "d" });
    msg.sequences.push(wire::DocumentSequence {
        identifier: "documents".into(),
        documents: vec![rawdoc! { "_id": 1 }, rawdoc! { "_id": 2 }],
    });
    let decoded = decode_msg(&msg.encode(1, 0).unwrap());
    assert_eq!(decoded, msg);
    let command = decoded.command_document().unwrap().into_owned();
    let expected = rawdoc! { "insert": "c", "$db": "d", "documents": [{ "_id": 1 }, { "_id": 2 }] };
    assert_eq!(command, expected);
}

#[test]
fn op_msg_sequence_shadowing_a_body_field_is_refused() {
    let mut msg = OpMsg::new(rawdoc! { "insert": "c", "documents": [] });
    msg.sequences.push(wire::DocumentSequence {
        identifier: "documents".into(),
        documents: vec![rawdoc! {}],
    });
    let decoded = decode_msg(&msg.encode(1, 0).unwrap());
    assert!(matches!(
        decoded.command_document(),
        Err(Error::DuplicateSequence { .. })
    ));
}

#[test]
fn op_msg_sequence_size_that_does_not_add_up_is_refused() {
    let mut msg = ping();
    msg.sequences.push(wire::DocumentSequence {
        identifier: "documents".into(),
        documents: vec![rawdoc! { "a": 1 }],
    });
    let frame = msg.encode(1, 0).unwrap();
    let body_len = ping().body.as_bytes().len();
    let size_at = 16 + 4 + 1 + body_len + 1;
    for delta in [-3i32, 1, 200] {
        let mut edited = frame.clone();
        let size = i32::from_le_bytes(edited[size_at..size_at + 4].try_into().unwrap());
        edited[size_at..size_at + 4].copy_from_slice(&(size + delta).to_le_bytes());
        let error = decode_error(&edited);
        assert!(
            matches!(
                error,
                Error::SectionMismatch { .. } | Error::InvalidBson { .. }
            ),
            "delta {delta}: {error:?}"
        );
    }
}

#[test]
fn op_msg_without_or_with_two_bodies_is_refused() {
    let mut frame = ping().encode(1, 0).unwrap();
    frame.truncate(20);
    fix_length(&mut frame);
    assert_eq!(decode_error(&frame), Error::BodyCount { count: 0 });
    let mut twice = ping().encode(1, 0).unwrap();
    let section = twice[20..].to_vec();
    twice.extend_from_slice(&section);
    fix_length(&mut twice);
    assert_eq!(decode_error(&twice), Error::BodyCount { count: 2 });
}

#[test]
fn op_msg_unknown_section_kind_is_refused() {
    let mut frame = ping().encode(1, 0).unwrap();
    frame[20] = 2;
    assert!(matches!(
        decode_error(&frame),
        Error::UnknownSectionKind {
            kind: 2,
            offset: 20
        }
    ));
}

#[test]
fn op_msg_invalid_bson_in_the_body_is_refused() {
    let mut frame = ping().encode(1, 0).unwrap();
    // The body's first element type byte: make it an undefined type.
    frame[25] = 0x77;
    assert!(matches!(
        decode_error(&frame),
        Error::InvalidBson { offset: 21, .. }
    ));
}

#[test]
fn truncated_frame_is_refused_at_every_length() {
    let frame = ping().encode(1, 0).unwrap();
    for cut in 0..frame.len() {
        let mut short = frame[..cut].to_vec();
        if short.len() >= 4 {
            fix_length(&mut short);
        }
        assert!(decode(&short).is_err(), "cut at {cut}");
    }
}

#[test]
fn length_prefix_disagreeing_with_the_frame_is_refused() {
    let mut frame = ping().encode(1, 0).unwrap();
    frame.push(0);
    assert!(matches!(decode_error(&frame), Error::LengthMismatch { .. }));
}

#[test]
fn huge_length_prefix_is_refused() {
    let frame = (2_000_000_000i32).to_le_bytes();
    assert!(matches!(
        decode_error(&frame),
        Error::LengthOutOfRange { .. }
    ));
    assert!(matches!(
        wire::frame_length(&(limits::MESSAGE_LEN_MAX as i32 + 1).to_le_bytes()),
        Err(Error::LengthOutOfRange { .. })
    ));
}

#[test]
fn unknown_opcodes_are_refused_with_the_header() {
    for opcode in [2001, 2002, 2005, 2006, 2012, 0, -1, 9999] {
        let mut frame = ping().encode(5, 0).unwrap();
        frame[12..16].copy_from_slice(&i32::to_le_bytes(opcode));
        match decode(&frame) {
            Err((Some(header), Error::UnsupportedOpcode { opcode: got })) => {
                assert_eq!((header.request_id, got), (5, opcode));
            }
            other => panic!("opcode {opcode}: {other:?}"),
        }
    }
}

#[test]
fn op_query_and_op_reply_round_trip() {
    let query = OpQuery {
        flags: 4,
        full_collection_name: "admin.$cmd".into(),
        number_to_skip: 0,
        number_to_return: -1,
        query: rawdoc! { "isMaster": 1, "helloOk": true },
        return_fields_selector: None,
    };
    let frame = query.encode(9).unwrap();
    let (header, message) = decode(&frame).unwrap();
    assert_eq!(header.op_code, 2004);
    let Message::Query(decoded) = message else {
        panic!("not a query")
    };
    assert_eq!(
        (decoded.database(), decoded.collection()),
        ("admin", "$cmd")
    );
    assert_eq!(decoded, query);

    let reply = OpReply::single(rawdoc! { "ok": 1.0 });
    let (header, message) = decode(&reply.encode(10, 9).unwrap()).unwrap();
    assert_eq!((header.response_to, header.op_code), (9, 1));
    assert_eq!(message, Message::Reply(reply));
}

#[test]
fn encode_reply_into_matches_encode() {
    let body = rawdoc! { "ok": 1.0 };
    let mut out = Vec::new();
    wire::encode_reply_into(&mut out, 4, 3, &body).unwrap();
    assert_eq!(out, OpMsg::new(body).encode(4, 3).unwrap());
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 256, ..ProptestConfig::default() })]

    #[test]
    fn decode_never_panics_on_arbitrary_bytes(bytes in proptest::collection::vec(any::<u8>(), 0..128)) {
        let _ = decode(&bytes);
    }

    #[test]
    fn decode_never_panics_on_mutated_frames(at in 0usize..64, value in any::<u8>(), checksum in any::<bool>()) {
        let mut msg = ping();
        if checksum {
            msg.flags = MsgFlags(MsgFlags::CHECKSUM_PRESENT);
        }
        let mut frame = msg.encode(1, 0).unwrap();
        let at = at % frame.len();
        frame[at] = value;
        let _ = decode(&frame);
    }

    #[test]
    fn op_msg_round_trips_any_string_body(key in "[a-z]{1,12}", value in ".{0,40}", id in any::<i32>()) {
        let mut body = bson::RawDocumentBuf::new();
        body.append(bson::raw::CString::try_from(key).unwrap(), value);
        let msg = OpMsg::new(body);
        let (header, decoded) = decode(&msg.encode(id, 0).unwrap()).unwrap();
        prop_assert_eq!(header.request_id, id);
        prop_assert_eq!(decoded, Message::Msg(msg));
    }
}
