//! Validation of documents arriving from clients.
//!
//! [`validate_bson`] checks that bytes are a well-formed BSON document (every
//! length consistent, every string and field name UTF-8 and terminated, only
//! known element types, booleans 0 or 1) within a nesting limit.
//! [`validate_for_storage`] adds what MongoDB requires of a document it
//! stores: at most 16 MiB, at most 100 nested levels, and an `_id` that is not
//! an array, a regular expression or undefined.
//!
//! The walk reads each byte once and never panics on any input (the fuzz target
//! `bson-validate` holds it to that).

use crate::error::ValidationError;
use crate::limits::{DOCUMENT_SIZE_MAX, DOCUMENT_SIZE_MIN, NESTING_DEPTH_MAX};

/// Checks that `bytes` is exactly one well-formed BSON document nesting at most
/// `depth_max` levels of objects and arrays below the root.
pub fn validate_bson(bytes: &[u8], depth_max: usize) -> Result<(), ValidationError> {
    let length = read_i32(bytes, 0)?;
    if length < 0 || length as usize != bytes.len() {
        return Err(malformed(0, "document length does not match the bytes"));
    }
    let mut walker = Walker { bytes, depth_max };
    walker.document(0, 0)
}

/// Checks a document a client asks to store.
pub fn validate_for_storage(bytes: &[u8]) -> Result<(), ValidationError> {
    if bytes.len() > DOCUMENT_SIZE_MAX {
        return Err(ValidationError::TooLarge {
            size: bytes.len(),
            max: DOCUMENT_SIZE_MAX,
        });
    }
    validate_bson(bytes, NESTING_DEPTH_MAX)?;
    let doc = bson::RawDocument::from_bytes(bytes).map_err(|_| malformed(0, "unreadable"))?;
    if let Some(id) = crate::path::get_field(doc, "_id") {
        let refused = match id {
            bson::RawBsonRef::Array(_) => Some("array"),
            bson::RawBsonRef::RegularExpression(_) => Some("regex"),
            bson::RawBsonRef::Undefined => Some("undefined"),
            _ => None,
        };
        if let Some(type_name) = refused {
            return Err(ValidationError::InvalidId { type_name });
        }
    }
    Ok(())
}

fn malformed(offset: usize, reason: &'static str) -> ValidationError {
    ValidationError::Malformed { offset, reason }
}

fn read_i32(bytes: &[u8], at: usize) -> Result<i32, ValidationError> {
    let slice = bytes
        .get(at..at.saturating_add(4))
        .ok_or(malformed(at, "truncated length"))?;
    let mut raw = [0u8; 4];
    raw.copy_from_slice(slice);
    Ok(i32::from_le_bytes(raw))
}

struct Walker<'a> {
    bytes: &'a [u8],
    depth_max: usize,
}

impl Walker<'_> {
    /// Validates the document starting at `start`; returns nothing, since its
    /// length prefix (already checked to fit) gives its end.
    fn document(&mut self, start: usize, depth: usize) -> Result<(), ValidationError> {
        let length = read_i32(self.bytes, start)?;
        if length < DOCUMENT_SIZE_MIN as i32 {
            return Err(malformed(start, "document shorter than 5 bytes"));
        }
        let end = start
            .checked_add(length as usize)
            .filter(|&end| end <= self.bytes.len())
            .ok_or(malformed(start, "document length overruns its container"))?;
        let last = end - 1;
        if self.bytes.get(last) != Some(&0) {
            return Err(malformed(last, "document not terminated by 0"));
        }
        let mut at = start + 4;
        while at < last {
            at = self.element(at, last, depth)?;
        }
        if at != last {
            return Err(malformed(at, "element overruns its document"));
        }
        Ok(())
    }

    /// Validates one element at `at`, which must end by `limit`; returns the
    /// offset just past it.
    fn element(&mut self, at: usize, limit: usize, depth: usize) -> Result<usize, ValidationError> {
        let kind = *self
            .bytes
            .get(at)
            .ok_or(malformed(at, "truncated element"))?;
        let value = self.cstring(at + 1, limit, "field name")?;
        let end = match kind {
            0x01 | 0x09 | 0x11 | 0x12 => value + 8,
            0x10 => value + 4,
            0x07 => value + 12,
            0x13 => value + 16,
            0x06 | 0x0a | 0x7f | 0xff => value,
            0x08 => {
                match self.bytes.get(value) {
                    Some(0 | 1) => {}
                    _ => return Err(malformed(value, "boolean is neither 0 nor 1")),
                }
                value + 1
            }
            0x02 | 0x0d | 0x0e => self.string(value, limit)?,
            0x03 | 0x04 => {
                if depth >= self.depth_max {
                    return Err(ValidationError::TooDeep {
                        max: self.depth_max,
                    });
                }
                self.document(value, depth + 1)?;
                value + read_i32(self.bytes, value)? as usize
            }
            0x05 => self.binary(value, limit)?,
            0x0b => {
                let options = self.cstring(value, limit, "regex pattern")?;
                self.cstring(options, limit, "regex options")?
            }
            0x0c => self.string(value, limit)? + 12,
            0x0f => self.code_with_scope(value, limit, depth)?,
            _ => return Err(malformed(at, "unknown element type")),
        };
        if end > limit {
            return Err(malformed(at, "element overruns its document"));
        }
        Ok(end)
    }

    /// A 0-terminated UTF-8 string starting at `at`; returns the offset past it.
    fn cstring(
        &self,
        at: usize,
        limit: usize,
        what: &'static str,
    ) -> Result<usize, ValidationError> {
        let region = self
            .bytes
            .get(at..limit)
            .ok_or(malformed(at, "truncated string"))?;
        let length = region
            .iter()
            .position(|&b| b == 0)
            .ok_or(malformed(at, "unterminated"))?;
        if std::str::from_utf8(&region[..length]).is_err() {
            return Err(ValidationError::InvalidUtf8 { offset: at, what });
        }
        Ok(at + length + 1)
    }

    /// A length-prefixed string: i32 length (including the terminator), bytes, 0.
    fn string(&self, at: usize, limit: usize) -> Result<usize, ValidationError> {
        let length = read_i32(self.bytes, at)?;
        if length < 1 {
            return Err(malformed(at, "string length below 1"));
        }
        let body = at + 4;
        let end = body
            .checked_add(length as usize)
            .filter(|&end| end <= limit)
            .ok_or(malformed(at, "string overruns its document"))?;
        if self.bytes.get(end - 1) != Some(&0) {
            return Err(malformed(end - 1, "string not terminated by 0"));
        }
        if std::str::from_utf8(&self.bytes[body..end - 1]).is_err() {
            return Err(ValidationError::InvalidUtf8 {
                offset: body,
                what: "string",
            });
        }
        Ok(end)
    }

    fn binary(&self, at: usize, limit: usize) -> Result<usize, ValidationError> {
        let length = read_i32(self.bytes, at)?;
        if length < 0 {
            return Err(malformed(at, "negative binary length"));
        }
        let subtype_at = at + 4;
        let end = (subtype_at + 1)
            .checked_add(length as usize)
            .filter(|&end| end <= limit)
            .ok_or(malformed(at, "binary overruns its document"))?;
        if self.bytes.get(subtype_at) == Some(&0x02) {
            // The old binary subtype repeats the length inside the payload.
            let inner = read_i32(self.bytes, subtype_at + 1)?;
            if length < 4 || inner != length - 4 {
                return Err(malformed(
                    at,
                    "old binary subtype with inconsistent lengths",
                ));
            }
        }
        Ok(end)
    }

    fn code_with_scope(
        &mut self,
        at: usize,
        limit: usize,
        depth: usize,
    ) -> Result<usize, ValidationError> {
        let total = read_i32(self.bytes, at)?;
        // Total length, string length, 1-byte string, 5-byte document.
        if total < 14 {
            return Err(malformed(at, "code with scope too short"));
        }
        let end = at
            .checked_add(total as usize)
            .filter(|&end| end <= limit)
            .ok_or(malformed(at, "code with scope overruns its document"))?;
        let scope = self.string(at + 4, end)?;
        if depth >= self.depth_max {
            return Err(ValidationError::TooDeep {
                max: self.depth_max,
            });
        }
        self.document(scope, depth + 1)?;
        let scope_length = read_i32(self.bytes, scope)? as usize;
        if scope + scope_length != end {
            return Err(malformed(at, "code with scope lengths disagree"));
        }
        Ok(end)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use bson::{doc, rawdoc};

    fn nested(levels: usize) -> Vec<u8> {
        let mut doc = doc! {"leaf": 1};
        for _ in 0..levels {
            doc = doc! {"a": doc};
        }
        doc.to_vec().expect("encode")
    }

    #[test]
    fn nesting_is_limited_to_one_hundred_levels() {
        assert_eq!(validate_for_storage(&nested(100)), Ok(()));
        let error = validate_for_storage(&nested(101)).expect_err("too deep");
        assert_eq!(error, ValidationError::TooDeep { max: 100 });
        assert_eq!(error.code(), 15);
    }

    #[test]
    fn refused_id_types_carry_mongodb_codes() {
        let array = rawdoc! {"_id": [1]};
        let error = validate_for_storage(array.as_bytes()).expect_err("array id");
        assert_eq!((error.code(), error.code_name()), (53, "InvalidIdField"));
        assert!(validate_for_storage(rawdoc! {"_id": {"a": 1}}.as_bytes()).is_ok());
        assert!(validate_for_storage(rawdoc! {"$price": 1}.as_bytes()).is_ok());
    }

    #[test]
    fn documents_over_sixteen_mebibytes_are_refused() {
        let big = rawdoc! {"s": "x".repeat(DOCUMENT_SIZE_MAX)};
        let error = validate_for_storage(big.as_bytes()).expect_err("too large");
        assert_eq!(error.code(), 10334);
    }

    #[test]
    fn malformed_bytes_are_errors_not_panics() {
        let good = rawdoc! {"a": "b", "n": {"x": true}}.into_bytes();
        for cut in 0..good.len() {
            assert!(validate_bson(&good[..cut], 10).is_err(), "cut at {cut}");
        }
        let mut bad_bool = rawdoc! {"x": true}.into_bytes();
        let at = bad_bool.len() - 2;
        bad_bool[at] = 2;
        assert!(validate_bson(&bad_bool, 10).is_err());
        let mut bad_utf8 = rawdoc! {"s": "é"}.into_bytes();
        let at = bad_utf8.len() - 3;
        bad_utf8[at] = 0xff;
        assert!(matches!(
            validate_bson(&bad_utf8, 10),
            Err(ValidationError::InvalidUtf8 { .. })
        ));
    }
}
