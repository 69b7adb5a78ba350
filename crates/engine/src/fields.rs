//! Reading a command document the way mongod does: its name and its boolean-ish options.
//! A leaf: used by the commands and by authorization alike.

use crate::error::{Error, ErrorCode};
use bson::RawDocument;

/// The command name: the first field of the document.
pub(crate) fn name_of(cmd: &RawDocument) -> Result<&str, Error> {
    match cmd.iter_elements().next() {
        Some(Ok(element)) => Ok(element.key().as_str()),
        Some(Err(error)) => Err(Error::new(ErrorCode::InvalidBson, error.to_string())),
        None => Err(Error::new(
            ErrorCode::FailedToParse,
            "empty command document",
        )),
    }
}

/// Reads an optional boolean-ish option the way mongod does: any number or bool.
pub(crate) fn flag(body: &RawDocument, key: &str) -> bool {
    use bson::raw::RawBsonRef;
    match body.get(key) {
        Ok(Some(RawBsonRef::Boolean(value))) => value,
        Ok(Some(RawBsonRef::Int32(value))) => value != 0,
        Ok(Some(RawBsonRef::Int64(value))) => value != 0,
        Ok(Some(RawBsonRef::Double(value))) => value != 0.0,
        _ => false,
    }
}
