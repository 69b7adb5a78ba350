//! Field lookup over raw document bytes that skips elements by their length.
//!
//! `bson`'s element iterator parses each element it passes (key as UTF-8,
//! value header); a filter on one field of a 16 KiB document passes hundreds.
//! Here an element is skipped by reading its type byte, finding the key's
//! terminating zero and reading the value's length, without decoding
//! anything. Only the element named is decoded. Types this module does not
//! decode itself (arrays, binary, regex and the rare ones) fall back to the
//! `bson` iterator, so the answer is always the same as
//! `bson_canonical::path::get_field`; malformed bytes end the lookup with
//! `None` rather than a panic.

use bson::raw::RawDocument;
use bson::{RawBsonRef, Timestamp};

fn read_i32(bytes: &[u8], at: usize) -> Option<i32> {
    let chunk: [u8; 4] = bytes.get(at..at.checked_add(4)?)?.try_into().ok()?;
    Some(i32::from_le_bytes(chunk))
}

fn length_at(bytes: &[u8], at: usize) -> Option<usize> {
    usize::try_from(read_i32(bytes, at)?).ok()
}

/// The size in bytes of the value of type `kind` that starts at `at`.
fn value_size(kind: u8, bytes: &[u8], at: usize) -> Option<usize> {
    Some(match kind {
        0x06 | 0x0A | 0x7F | 0xFF => 0,
        0x08 => 1,
        0x10 => 4,
        0x01 | 0x09 | 0x11 | 0x12 => 8,
        0x07 => 12,
        0x13 => 16,
        0x02 | 0x0D | 0x0E => length_at(bytes, at)?.checked_add(4)?,
        0x03 | 0x04 | 0x0F => length_at(bytes, at)?,
        0x05 => length_at(bytes, at)?.checked_add(5)?,
        0x0C => length_at(bytes, at)?.checked_add(16)?,
        0x0B => {
            let rest = bytes.get(at..)?;
            let first = rest.iter().position(|&b| b == 0)?;
            let second = rest.get(first + 1..)?.iter().position(|&b| b == 0)?;
            first + second + 2
        }
        _ => return None,
    })
}

/// Decodes a value this module handles itself; `None` sends the caller to the
/// slow path.
fn decode(kind: u8, value: &[u8]) -> Option<RawBsonRef<'_>> {
    let fixed = |n: usize| -> Option<&[u8]> { value.get(..n) };
    Some(match kind {
        0x01 => RawBsonRef::Double(f64::from_le_bytes(fixed(8)?.try_into().ok()?)),
        0x02 => {
            let text = value.get(4..value.len().checked_sub(1)?)?;
            if value.last() != Some(&0) {
                return None;
            }
            RawBsonRef::String(std::str::from_utf8(text).ok()?)
        }
        0x03 => RawBsonRef::Document(RawDocument::from_bytes(value).ok()?),
        0x06 => RawBsonRef::Undefined,
        0x07 => RawBsonRef::ObjectId(bson::oid::ObjectId::from_bytes(fixed(12)?.try_into().ok()?)),
        0x08 => match fixed(1)? {
            [0] => RawBsonRef::Boolean(false),
            [1] => RawBsonRef::Boolean(true),
            _ => return None,
        },
        0x09 => RawBsonRef::DateTime(bson::DateTime::from_millis(i64::from_le_bytes(
            fixed(8)?.try_into().ok()?,
        ))),
        0x0A => RawBsonRef::Null,
        0x10 => RawBsonRef::Int32(i32::from_le_bytes(fixed(4)?.try_into().ok()?)),
        0x11 => {
            let increment = u32::from_le_bytes(value.get(..4)?.try_into().ok()?);
            let time = u32::from_le_bytes(value.get(4..8)?.try_into().ok()?);
            RawBsonRef::Timestamp(Timestamp { time, increment })
        }
        0x12 => RawBsonRef::Int64(i64::from_le_bytes(fixed(8)?.try_into().ok()?)),
        0x13 => RawBsonRef::Decimal128(bson::Decimal128::from_bytes(fixed(16)?.try_into().ok()?)),
        0x7F => RawBsonRef::MaxKey,
        0xFF => RawBsonRef::MinKey,
        _ => return None,
    })
}

/// The value of the first field called `name`, or `None` when it is missing.
pub(crate) fn get_field<'a>(doc: &'a RawDocument, name: &str) -> Option<RawBsonRef<'a>> {
    get_field_in(doc.as_bytes(), name)
}

/// [`get_field`] over the bytes of one BSON document whose length prefix the caller
/// checked ([`is_framed`]). Its last byte (the terminating zero) is never read: elements
/// are skipped by their lengths up to it, so a lookup of a document's first fields reads
/// only the bytes before them (in a 16 KiB stored document, the first cache line rather
/// than also the last page).
pub fn get_field_in<'a>(bytes: &'a [u8], name: &str) -> Option<RawBsonRef<'a>> {
    let slow = || bson_canonical::path::get_field(RawDocument::from_bytes(bytes).ok()?, name);
    let target = name.as_bytes();
    let end = bytes.len().saturating_sub(1);
    let mut at = 4;
    while at < end {
        let (kind, key, value_start, size) = match element_at(bytes, at) {
            Element::Known(kind, key, value_start, size) => (kind, key, value_start, size),
            Element::Unknown => return slow(),
            Element::Malformed => return None,
        };
        let value_end = value_start.checked_add(size)?;
        if same_key(key, target) {
            let value = bytes.get(value_start..value_end)?;
            return decode(kind, value).or_else(slow);
        }
        at = value_end;
    }
    None
}

/// Whether two field names are equal, compared byte by byte: `memcmp` loads 32 bytes at
/// a time, and past a short key that load reaches into the next cache line, which a scan
/// reading a document's first fields has no other reason to wait for.
pub(crate) fn same_key(key: &[u8], target: &[u8]) -> bool {
    key.len() == target.len() && key.iter().zip(target).all(|(a, b)| a == b)
}

/// One element's header as [`element_at`] reads it.
pub(crate) enum Element<'a> {
    /// Type byte, key bytes, where the value starts and its size.
    Known(u8, &'a [u8], usize, usize),
    /// A type whose size this module does not compute (or a length it cannot read):
    /// the caller falls back to the `bson` iterator.
    Unknown,
    /// The bytes end inside the header or the value.
    Malformed,
}

/// The element starting at `at` (its type byte), read without decoding its value.
pub(crate) fn element_at(bytes: &[u8], at: usize) -> Element<'_> {
    let Some(&kind) = bytes.get(at) else {
        return Element::Malformed;
    };
    let key_start = at + 1;
    let Some(key_len) = bytes
        .get(key_start..)
        .and_then(|rest| rest.iter().position(|&b| b == 0))
    else {
        return Element::Malformed;
    };
    let key = &bytes[key_start..key_start + key_len];
    let value_start = key_start + key_len + 1;
    match value_size(kind, bytes, value_start) {
        Some(size) => Element::Known(kind, key, value_start, size),
        None => Element::Unknown,
    }
}

/// The key of the element that starts at offset `at` of a document's bytes, and the offset
/// where the element ends; `None` when the bytes end before the element does (or it is
/// malformed, or of an unknown type). For readers of a document's leading part.
pub fn element_span(bytes: &[u8], at: usize) -> Option<(&[u8], usize)> {
    match element_at(bytes, at) {
        Element::Known(_, key, value_start, size) => Some((key, value_start.checked_add(size)?)),
        Element::Unknown | Element::Malformed => None,
    }
}

/// Whether `bytes` can be one BSON document as far as its first bytes tell: at least five
/// bytes, and a length prefix equal to their length. (Its last byte is not read.)
pub fn is_framed(bytes: &[u8]) -> bool {
    bytes.len() >= 5 && length_at(bytes, 0) == Some(bytes.len())
}

#[cfg(test)]
mod tests {
    use super::*;
    use bson::spec::BinarySubtype;
    use bson::{Binary, rawdoc};

    #[test]
    fn agrees_with_the_bson_iterator_on_every_type() {
        let doc = rawdoc! {
            "d": 1.5, "s": "text", "o": {"x": 1}, "a": [1, 2],
            "b": Binary { subtype: BinarySubtype::Generic, bytes: vec![1, 2, 3] },
            "u": bson::RawBson::Undefined,
            "id": bson::oid::ObjectId::from_bytes([3; 12]), "t": true, "f": false,
            "dt": bson::DateTime::from_millis(-5), "n": bson::RawBson::Null,
            "r": bson::Regex { pattern: "a.*".try_into().expect("cstr"), options: "i".try_into().expect("cstr") },
            "i": -7, "ts": Timestamp { time: 9, increment: 4 }, "l": i64::MIN,
            "dec": bson::Decimal128::from_bytes([1; 16]),
            "max": bson::RawBson::MaxKey, "min": bson::RawBson::MinKey, "s": "duplicate",
        };
        for name in [
            "d", "s", "o", "a", "b", "u", "id", "t", "f", "dt", "n", "r", "i", "ts", "l", "dec",
            "max", "min", "missing", "",
        ] {
            assert_eq!(
                get_field(&doc, name),
                bson_canonical::path::get_field(&doc, name),
                "{name}"
            );
        }
    }
}
