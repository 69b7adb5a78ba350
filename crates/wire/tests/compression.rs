//! OP_COMPRESSED: round trips through every compressor, and every refusal the decoder
//! promises (lying sizes, disabled compressors, nesting, damaged payloads), never a panic.

use bson::rawdoc;
use proptest::prelude::*;
use wire::compression::{compress, decompress, is_compressed};
use wire::{Compressor, Error, Message, OP_COMPRESSED, OpMsg, decode, limits};

const ALL: [Compressor; 4] = [
    Compressor::Noop,
    Compressor::Snappy,
    Compressor::Zlib,
    Compressor::Zstd,
];

fn frame_with(payload: &str) -> Vec<u8> {
    OpMsg::new(rawdoc! { "insert": "c", "$db": "test", "payload": payload })
        .encode(7, 3)
        .expect("encode")
}

/// An OP_COMPRESSED frame built by hand: `size` announced, `payload` as the compressed bytes.
fn hand_built(original: i32, size: i32, id: u8, payload: &[u8]) -> Vec<u8> {
    let mut out = Vec::new();
    let length = i32::try_from(16 + 9 + payload.len()).expect("small");
    for word in [length, 9, 0, OP_COMPRESSED, original, size] {
        out.extend_from_slice(&word.to_le_bytes());
    }
    out.push(id);
    out.extend_from_slice(payload);
    out
}

fn refusal(frame: &[u8], enabled: &[Compressor]) -> Error {
    match decompress(frame, enabled) {
        Err((_, error)) => error,
        Ok((inner, c)) => panic!("expected a refusal, got {} bytes by {c:?}", inner.len()),
    }
}

#[test]
fn every_compressor_round_trips_a_message_with_its_ids() {
    let frame = frame_with(&"abc".repeat(5000));
    for compressor in ALL {
        let compressed = compress(&frame, compressor).expect("compress");
        assert!(is_compressed(&compressed), "{compressor:?}");
        assert!(!is_compressed(&frame));
        if compressor != Compressor::Noop {
            assert!(
                compressed.len() * 10 < frame.len(),
                "{compressor:?}: {} of {}",
                compressed.len(),
                frame.len()
            );
        }
        assert_eq!(
            compressed[4..12],
            frame[4..12],
            "request id and responseTo kept"
        );
        let (inner, used) = decompress(&compressed, &ALL).expect("decompress");
        assert_eq!(used, compressor);
        assert_eq!(inner, frame, "{compressor:?}");
        let (header, message) = decode(&inner).expect("decode");
        assert_eq!(header.request_id, 7);
        assert!(matches!(message, Message::Msg(_)));
    }
}

#[test]
fn names_and_ids_are_the_specifications() {
    for (compressor, id, name) in [
        (Compressor::Noop, 0, "noop"),
        (Compressor::Snappy, 1, "snappy"),
        (Compressor::Zlib, 2, "zlib"),
        (Compressor::Zstd, 3, "zstd"),
    ] {
        assert_eq!(compressor.id(), id);
        assert_eq!(Compressor::from_id(id), Some(compressor));
        assert_eq!(compressor.name(), name);
        assert_eq!(Compressor::from_name(name), Some(compressor));
    }
    assert_eq!(Compressor::from_id(4), None);
    assert_eq!(Compressor::from_name("lz4"), None);
}

#[test]
fn a_disabled_or_unknown_compressor_is_refused() {
    let frame = frame_with("x");
    let zstd = compress(&frame, Compressor::Zstd).expect("compress");
    let error = refusal(&zstd, &[Compressor::Snappy, Compressor::Zlib]);
    assert_eq!(error, Error::UnsupportedCompressor { id: 3 });
    let unknown = hand_built(2013, 1, 9, b"x");
    assert_eq!(
        refusal(&unknown, &ALL),
        Error::UnsupportedCompressor { id: 9 }
    );
}

#[test]
fn sizes_past_the_limit_or_negative_are_refused_before_allocating() {
    let max = limits::MESSAGE_LEN_MAX - 16;
    for size in [-1, i32::MAX, i32::try_from(max + 1).expect("fits")] {
        let frame = hand_built(2013, size, 1, b"tiny");
        assert_eq!(
            refusal(&frame, &ALL),
            Error::UncompressedSizeOutOfRange {
                size: i64::from(size),
                max
            }
        );
    }
}

#[test]
fn a_lying_size_is_refused_by_every_compressor() {
    let frame = frame_with(&"lie".repeat(300));
    let body_len = frame.len() - 16;
    for compressor in ALL {
        let honest = compress(&frame, compressor).expect("compress");
        for announced in [body_len - 1, body_len + 1, body_len + 4096, 0] {
            let mut lying = honest.clone();
            let size = i32::try_from(announced).expect("small");
            lying[20..24].copy_from_slice(&size.to_le_bytes());
            match refusal(&lying, &ALL) {
                Error::UncompressedSizeMismatch {
                    declared, actual, ..
                } => {
                    assert_eq!(declared, announced, "{compressor:?}");
                    assert_ne!(actual, announced, "{compressor:?}");
                }
                Error::Decompression { .. } => {}
                other => panic!("{compressor:?} announced {announced}: {other:?}"),
            }
        }
    }
}

#[test]
fn nesting_and_truncation_are_refused() {
    let frame = frame_with("x");
    let once = compress(&frame, Compressor::Snappy).expect("compress");
    assert_eq!(
        compress(&once, Compressor::Snappy),
        Err(Error::NestedCompression)
    );
    let nested = hand_built(OP_COMPRESSED, 4, 0, b"abcd");
    assert_eq!(refusal(&nested, &ALL), Error::NestedCompression);
    let mut short = hand_built(2013, 4, 0, b"");
    short.truncate(16 + 6);
    let length = i32::try_from(short.len()).expect("small").to_le_bytes();
    short[..4].copy_from_slice(&length);
    assert!(matches!(refusal(&short, &ALL), Error::Truncated { .. }));
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    /// Random bodies round-trip through every compressor.
    #[test]
    fn random_messages_round_trip(payload in ".{0,3000}", id in 0u8..4) {
        let compressor = Compressor::from_id(id).expect("id");
        let frame = frame_with(&payload);
        let compressed = compress(&frame, compressor).expect("compress");
        let (inner, _) = decompress(&compressed, &ALL).expect("decompress");
        prop_assert_eq!(inner, frame);
    }

    /// Arbitrary payload bytes and announced sizes under every compressor id: a clean
    /// refusal or a result of exactly the announced size, never a panic.
    #[test]
    fn damaged_payloads_never_panic(
        payload in proptest::collection::vec(any::<u8>(), 0..600),
        size in 0i32..5000,
        id in 0u8..5,
    ) {
        let frame = hand_built(2013, size, id, &payload);
        if let Ok((inner, _)) = decompress(&frame, &ALL) {
            prop_assert_eq!(inner.len(), 16 + usize::try_from(size).expect("non-negative"));
        }
    }

    /// A real compressed message with bytes flipped: refused or decompressed to the
    /// announced size, never a panic.
    #[test]
    fn flipped_bytes_never_panic(id in 0u8..4, flips in proptest::collection::vec((25usize..400, any::<u8>()), 1..6)) {
        let compressor = Compressor::from_id(id).expect("id");
        let frame = frame_with(&"flip me ".repeat(40));
        let mut compressed = compress(&frame, compressor).expect("compress");
        for (at, byte) in flips {
            let at = at % compressed.len();
            if at >= 25 {
                compressed[at] ^= byte | 1;
            }
        }
        if let Ok((inner, _)) = decompress(&compressed, &ALL) {
            prop_assert_eq!(inner.len(), frame.len());
        }
    }
}
