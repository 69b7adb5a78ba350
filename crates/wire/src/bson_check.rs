//! Full validation of a BSON document from the wire: every element, every nested level.
//!
//! `bson::RawDocument::from_bytes` checks only the outer length and terminator;
//! commands are read lazily later, so an invalid element deep inside would
//! surface as an error far from the socket. Walking every element once here
//! means everything above the wire layer sees only well-formed BSON. The walk is
//! recursive, bounded by `BSON_DEPTH_MAX`, so hostile nesting cannot overflow
//! the stack.

use crate::Error;
use crate::limits::BSON_DEPTH_MAX;
use bson::RawDocument;
use bson::raw::RawBsonRef;

/// Checks that `bytes` is exactly one valid BSON document; `offset` locates it in the frame.
pub(crate) fn validate(bytes: &[u8], offset: usize) -> Result<&RawDocument, Error> {
    let document = RawDocument::from_bytes(bytes).map_err(|error| invalid(offset, &error))?;
    walk(document, offset, 1)?;
    Ok(document)
}

fn invalid(offset: usize, error: &dyn std::fmt::Display) -> Error {
    Error::InvalidBson {
        offset,
        reason: error.to_string(),
    }
}

fn walk(document: &RawDocument, offset: usize, depth: usize) -> Result<(), Error> {
    if depth > BSON_DEPTH_MAX {
        return Err(Error::InvalidBson {
            offset,
            reason: format!("nesting deeper than {BSON_DEPTH_MAX} levels"),
        });
    }
    for element in document {
        let (_key, value) = element.map_err(|error| invalid(offset, &error))?;
        walk_value(value, offset, depth)?;
    }
    Ok(())
}

fn walk_value(value: RawBsonRef<'_>, offset: usize, depth: usize) -> Result<(), Error> {
    match value {
        RawBsonRef::Document(inner) => walk(inner, offset, depth + 1),
        RawBsonRef::JavaScriptCodeWithScope(code) => walk(code.scope, offset, depth + 1),
        RawBsonRef::Array(inner) => {
            if depth + 1 > BSON_DEPTH_MAX {
                return Err(Error::InvalidBson {
                    offset,
                    reason: format!("nesting deeper than {BSON_DEPTH_MAX} levels"),
                });
            }
            for item in inner {
                let item = item.map_err(|error| invalid(offset, &error))?;
                walk_value(item, offset, depth + 1)?;
            }
            Ok(())
        }
        _ => Ok(()),
    }
}

#[cfg(test)]
mod tests {
    use super::validate;
    use crate::Error;

    #[test]
    fn validate_accepts_nested_documents() {
        let doc = bson::rawdoc! { "a": { "b": [1, "x", { "c": true }] } };
        assert!(validate(doc.as_bytes(), 0).is_ok());
    }

    #[test]
    fn validate_refuses_invalid_utf8_deep_inside() {
        let doc = bson::rawdoc! { "a": { "b": "xyz" } };
        let mut bytes = doc.as_bytes().to_vec();
        let at = bytes
            .iter()
            .position(|&b| b == b'x')
            .expect("string present");
        bytes[at] = 0xff;
        assert!(matches!(
            validate(&bytes, 7),
            Err(Error::InvalidBson { offset: 7, .. })
        ));
    }

    #[test]
    fn validate_refuses_excessive_nesting() {
        let mut doc = bson::rawdoc! {};
        for _ in 0..200 {
            doc = bson::rawdoc! { "a": doc };
        }
        assert!(matches!(
            validate(doc.as_bytes(), 0),
            Err(Error::InvalidBson { .. })
        ));
    }
}
