//! An order-preserving byte encoding of BSON values (index keys).
//!
//! `encode(a) < encode(b)` as bytes exactly when `compare_values(a, b)` is
//! `Less`, and values that compare equal encode to identical bytes (int32 1,
//! int64 1, 1.0 and Decimal128 "1.0" are one key). Every encoding is
//! prefix-free, which gives two properties the index layer relies on:
//! concatenating the encodings of several fields orders tuples
//! lexicographically, and inverting every byte of one field's encoding reverses
//! its order (descending index fields). The layout is specified byte by byte in
//! `docs/format.md`, section "Index key encoding".
//!
//! Layout of one value: the type bracket byte (see [`type_bracket`]) followed by
//! - numbers: a class byte (NaN 1, -inf 2, negative 3, zero 4, positive 5, +inf 6);
//!   for finite non-zero numbers the magnitude: the decimal exponent plus 32768
//!   as u16 big-endian, then the digits two per byte (`10*d1 + d2 + 1`, a lone
//!   last digit padded with 0), then a 0 terminator; negative magnitudes are
//!   written with every byte inverted;
//! - strings, symbols, code: the bytes with 0x00 escaped as 0x00 0xFF, then 0x00 0x00;
//! - documents: per element the type bracket, the field name escaped as a
//!   string, the value; then 0x00. Arrays: per element the value; then 0x00;
//! - binary: length u32 big-endian, subtype, bytes; ObjectId: its 12 bytes;
//!   bool: 0 or 1; date: i64 big-endian with the sign bit flipped; timestamp:
//!   time then increment, u32 big-endian; regex: pattern and options as strings;
//!   DBPointer: namespace length u32 big-endian, namespace, ObjectId;
//!   code with scope: code as a string, then the scope as a document;
//! - MinKey, undefined, null, MaxKey: the bracket byte alone.

use crate::compare::{array_values, db_pointer_parts, elements, exact, type_bracket};
use crate::number::Class;
use bson::RawBsonRef;
use bson::raw::{RawArray, RawDocument};

/// The order of one field in a compound key.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Direction {
    /// Smallest first.
    Ascending,
    /// Largest first: the field's encoding is written with every byte inverted.
    Descending,
}

/// Encodes one value into a fresh buffer.
pub fn encode(value: RawBsonRef<'_>) -> Vec<u8> {
    let mut out = Vec::new();
    encode_into(value, &mut out);
    out
}

/// Appends the encoding of `value` to `out`.
pub fn encode_into(value: RawBsonRef<'_>, out: &mut Vec<u8>) {
    out.push(type_bracket(&value));
    encode_body(value, out);
}

/// Appends the encoding of a missing field, which indexes and sorts as null.
pub fn encode_missing_into(out: &mut Vec<u8>) {
    encode_into(RawBsonRef::Null, out);
}

/// Appends one field of a compound key in the given direction. A compound key
/// is these encodings concatenated in the order of the index's fields.
pub fn encode_field_into(value: Option<RawBsonRef<'_>>, direction: Direction, out: &mut Vec<u8>) {
    let start = out.len();
    match value {
        Some(value) => encode_into(value, out),
        None => encode_missing_into(out),
    }
    if direction == Direction::Descending {
        for byte in &mut out[start..] {
            *byte = !*byte;
        }
    }
}

/// Encodes a compound key from (value, direction) pairs; `None` is a missing field.
pub fn encode_compound(fields: &[(Option<RawBsonRef<'_>>, Direction)]) -> Vec<u8> {
    let mut out = Vec::new();
    for (value, direction) in fields {
        encode_field_into(*value, *direction, &mut out);
    }
    out
}

fn encode_body(value: RawBsonRef<'_>, out: &mut Vec<u8>) {
    match value {
        RawBsonRef::MinKey | RawBsonRef::MaxKey | RawBsonRef::Null | RawBsonRef::Undefined => {}
        RawBsonRef::Double(_)
        | RawBsonRef::Int32(_)
        | RawBsonRef::Int64(_)
        | RawBsonRef::Decimal128(_) => encode_number(value, out),
        RawBsonRef::String(s) | RawBsonRef::Symbol(s) | RawBsonRef::JavaScriptCode(s) => {
            encode_bytes(s.as_bytes(), out);
        }
        RawBsonRef::Document(doc) => encode_document(doc, out),
        RawBsonRef::Array(array) => encode_array(array, out),
        RawBsonRef::Binary(binary) => {
            let length = u32::try_from(binary.bytes.len()).unwrap_or(u32::MAX);
            out.extend_from_slice(&length.to_be_bytes());
            out.push(u8::from(binary.subtype));
            out.extend_from_slice(binary.bytes);
        }
        RawBsonRef::ObjectId(id) => out.extend_from_slice(&id.bytes()),
        RawBsonRef::Boolean(b) => out.push(u8::from(b)),
        RawBsonRef::DateTime(date) => {
            let flipped = (date.timestamp_millis() as u64) ^ (1 << 63);
            out.extend_from_slice(&flipped.to_be_bytes());
        }
        RawBsonRef::Timestamp(ts) => {
            out.extend_from_slice(&ts.time.to_be_bytes());
            out.extend_from_slice(&ts.increment.to_be_bytes());
        }
        RawBsonRef::RegularExpression(regex) => {
            encode_bytes(regex.pattern.as_str().as_bytes(), out);
            encode_bytes(regex.options.as_str().as_bytes(), out);
        }
        RawBsonRef::DbPointer(_) => {
            let (namespace, id) = db_pointer_parts(value);
            let length = u32::try_from(namespace.len()).unwrap_or(u32::MAX);
            out.extend_from_slice(&length.to_be_bytes());
            out.extend_from_slice(&namespace);
            out.extend_from_slice(&id);
        }
        RawBsonRef::JavaScriptCodeWithScope(code) => {
            encode_bytes(code.code.as_bytes(), out);
            encode_document(code.scope, out);
        }
    }
}

/// Strings: 0x00 escaped as 0x00 0xFF, terminated by 0x00 0x00.
fn encode_bytes(bytes: &[u8], out: &mut Vec<u8>) {
    out.reserve(bytes.len() + 2);
    for &byte in bytes {
        out.push(byte);
        if byte == 0 {
            out.push(0xff);
        }
    }
    out.extend_from_slice(&[0, 0]);
}

fn encode_document(doc: &RawDocument, out: &mut Vec<u8>) {
    for (key, value) in elements(doc) {
        out.push(type_bracket(&value));
        encode_bytes(key.as_bytes(), out);
        encode_body(value, out);
    }
    out.push(0);
}

fn encode_array(array: &RawArray, out: &mut Vec<u8>) {
    for value in array_values(array) {
        encode_into(value, out);
    }
    out.push(0);
}

fn encode_number(value: RawBsonRef<'_>, out: &mut Vec<u8>) {
    if let Some((negative, magnitude)) = whole_number(value) {
        encode_whole(negative, magnitude, out);
        return;
    }
    encode_exact(value, out);
}

/// A number that is a whole number of magnitude below 2^64 (int32, int64, an integral
/// double of that size), as its sign and magnitude; `None` for the rest (fractions, huge
/// doubles, NaN, infinities, Decimal128), which go through [`exact`].
fn whole_number(value: RawBsonRef<'_>) -> Option<(bool, u64)> {
    match value {
        RawBsonRef::Int32(i) => Some((i < 0, u64::from(i.unsigned_abs()))),
        RawBsonRef::Int64(i) => Some((i < 0, i.unsigned_abs())),
        // 2^64 as a double is the first magnitude that does not fit.
        RawBsonRef::Double(d) if d.fract() == 0.0 && d.abs() < 18_446_744_073_709_551_616.0 => {
            Some((d < 0.0, d.abs() as u64))
        }
        _ => None,
    }
}

/// [`encode_exact`] of a whole number, without building its digit vectors: the class, the
/// exponent (the number of digits), the digits without trailing zeros in pairs, a zero;
/// complemented after the class when negative.
fn encode_whole(negative: bool, magnitude: u64, out: &mut Vec<u8>) {
    if magnitude == 0 {
        out.push(Class::Zero as u8);
        return;
    }
    out.push(if negative {
        Class::Negative
    } else {
        Class::Positive
    } as u8);
    let mut digits = [0u8; 20];
    let mut count = 0;
    let mut rest = magnitude;
    while rest > 0 {
        digits[count] = (rest % 10) as u8;
        rest /= 10;
        count += 1;
    }
    // `digits` holds the least significant digit first; the reduced form drops the
    // trailing (least significant) zeros and lists the rest most significant first.
    let first = digits.iter().position(|&d| d != 0).unwrap_or(0);
    let mut significant = [0u8; 20];
    for (slot, &digit) in significant
        .iter_mut()
        .zip(digits[first..count].iter().rev())
    {
        *slot = digit;
    }
    let start = out.len();
    let exponent = u16::try_from(count).expect("at most 20 digits") + 32768;
    out.extend_from_slice(&exponent.to_be_bytes());
    for pair in significant[..count - first].chunks(2) {
        let high = pair[0];
        let low = pair.get(1).copied().unwrap_or(0);
        out.push(high * 10 + low + 1);
    }
    out.push(0);
    if negative {
        for byte in &mut out[start..] {
            *byte = !*byte;
        }
    }
}

fn encode_exact(value: RawBsonRef<'_>, out: &mut Vec<u8>) {
    let number = exact(value);
    out.push(number.class as u8);
    if !matches!(number.class, Class::Positive | Class::Negative) {
        return;
    }
    let start = out.len();
    let exponent = (i64::from(number.exp10) + 32768).clamp(0, i64::from(u16::MAX)) as u16;
    out.extend_from_slice(&exponent.to_be_bytes());
    for pair in number.digits.chunks(2) {
        let high = pair.first().copied().unwrap_or(0);
        let low = pair.get(1).copied().unwrap_or(0);
        out.push(high * 10 + low + 1);
    }
    out.push(0);
    if number.class == Class::Negative {
        for byte in &mut out[start..] {
            *byte = !*byte;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use bson::{Bson, doc};
    use proptest::prelude::*;

    fn both(value: RawBsonRef<'_>) -> (Vec<u8>, Vec<u8>) {
        let (mut fast, mut exact) = (Vec::new(), Vec::new());
        encode_number(value, &mut fast);
        encode_exact(value, &mut exact);
        (fast, exact)
    }

    proptest! {
        /// The whole-number shortcut writes the bytes of the exact reduction.
        #[test]
        fn whole_numbers_encode_as_their_exact_value(i in any::<i64>(), j in any::<i32>(), shift in 0..64u32) {
            for value in [
                RawBsonRef::Int64(i),
                RawBsonRef::Int32(j),
                RawBsonRef::Int64(i >> shift),
                RawBsonRef::Double(i as f64),
                RawBsonRef::Double((i >> shift) as f64),
                RawBsonRef::Double(f64::from(j) * 1000.0),
            ] {
                let (fast, exact) = both(value);
                prop_assert_eq!(fast, exact, "{:?}", value);
            }
        }
    }

    #[test]
    fn whole_number_edges_encode_as_their_exact_value() {
        for value in [
            RawBsonRef::Int32(0),
            RawBsonRef::Int32(i32::MIN),
            RawBsonRef::Int64(i64::MIN),
            RawBsonRef::Int64(i64::MAX),
            RawBsonRef::Int64(10),
            RawBsonRef::Int64(1_000_000_000_000_000_000),
            RawBsonRef::Double(-0.0),
            RawBsonRef::Double(18_446_744_073_709_549_568.0),
            RawBsonRef::Double(18_446_744_073_709_551_616.0),
            RawBsonRef::Double(-9_223_372_036_854_775_808.0),
            RawBsonRef::Double(0.5),
            RawBsonRef::Double(f64::NAN),
            RawBsonRef::Double(f64::INFINITY),
        ] {
            let (fast, exact) = both(value);
            assert_eq!(fast, exact, "{value:?}");
        }
    }

    fn key(value: Bson) -> Vec<u8> {
        let raw = bson::RawDocumentBuf::try_from(&doc! {"v": value}).expect("raw");
        encode(raw.get("v").expect("get").expect("present"))
    }

    #[test]
    fn equal_numbers_share_one_key() {
        let one = key(Bson::Int32(1));
        assert_eq!(one, key(Bson::Int64(1)));
        assert_eq!(one, key(Bson::Double(1.0)));
        assert_eq!(one, key(Bson::Decimal128("1.0".parse().expect("decimal"))));
        assert_eq!(key(Bson::Double(-0.0)), key(Bson::Int32(0)));
        assert_eq!(
            key(Bson::Double(f64::NAN)),
            key(Bson::Decimal128("NaN".parse().expect("d")))
        );
    }

    #[test]
    fn negative_numbers_order_by_reversed_magnitude() {
        assert!(key(Bson::Int32(-10)) < key(Bson::Int32(-9)));
        assert!(key(Bson::Double(-0.5)) < key(Bson::Int32(0)));
        assert!(key(Bson::Double(f64::NEG_INFINITY)) < key(Bson::Int64(i64::MIN)));
        assert!(key(Bson::Double(f64::NAN)) < key(Bson::Double(f64::NEG_INFINITY)));
    }

    #[test]
    fn descending_fields_invert_the_order_and_compound_keys_are_tuples() {
        let raw = bson::RawDocumentBuf::try_from(&doc! {"a": 1, "b": 2, "s": "x", "t": "xy"})
            .expect("raw");
        let get = |k: &str| raw.get(k).expect("get");
        let asc = |v| encode_compound(&[(v, Direction::Ascending)]);
        let desc = |v| encode_compound(&[(v, Direction::Descending)]);
        assert!(asc(get("a")) < asc(get("b")));
        assert!(desc(get("a")) > desc(get("b")));
        // "x" is a prefix of "xy" as a string, but not as an encoding.
        assert!(desc(get("s")) > desc(get("t")));
        let ab = encode_compound(&[
            (get("a"), Direction::Ascending),
            (get("t"), Direction::Ascending),
        ]);
        let b_ = encode_compound(&[
            (get("b"), Direction::Ascending),
            (get("s"), Direction::Ascending),
        ]);
        assert!(ab < b_);
        assert_eq!(
            encode_compound(&[(None, Direction::Ascending)]),
            key(Bson::Null)
        );
    }
}
