//! Errors of this crate: why a document from a client is refused.

use thiserror::Error;

/// Why a document failed validation.
///
/// Validation is the contract between the database and its clients, so each
/// variant carries the MongoDB error code and name the server must answer with
/// ([`ValidationError::code`], [`ValidationError::code_name`]).
#[derive(Debug, Clone, PartialEq, Eq, Error)]
#[non_exhaustive]
pub enum ValidationError {
    /// The document is larger than the 16 MiB BSON limit.
    #[error("object to insert too large. size in bytes: {size}, max size: {max}")]
    TooLarge {
        /// The document's size in bytes.
        size: usize,
        /// The limit in bytes.
        max: usize,
    },
    /// The document nests objects and arrays deeper than allowed.
    #[error("Document exceeds maximum nesting depth of {max}")]
    TooDeep {
        /// The nesting limit.
        max: usize,
    },
    /// The bytes are not a well-formed BSON document.
    #[error("invalid BSON at offset {offset}: {reason}")]
    Malformed {
        /// Byte offset (from the start of the outer document) where decoding failed.
        offset: usize,
        /// What was wrong.
        reason: &'static str,
    },
    /// A string or field name is not valid UTF-8.
    #[error("invalid UTF-8 in {what} at offset {offset}")]
    InvalidUtf8 {
        /// Byte offset of the string.
        offset: usize,
        /// "string" or "field name".
        what: &'static str,
    },
    /// The `_id` holds a type MongoDB refuses for it.
    #[error("The '_id' value cannot be of type {type_name}")]
    InvalidId {
        /// The BSON type name of the refused value.
        type_name: &'static str,
    },
}

impl ValidationError {
    /// MongoDB's numeric error code for this failure.
    pub fn code(&self) -> i32 {
        match self {
            ValidationError::TooLarge { .. } => 10334,
            ValidationError::TooDeep { .. } => 15,
            ValidationError::Malformed { .. } | ValidationError::InvalidUtf8 { .. } => 22,
            ValidationError::InvalidId { .. } => 53,
        }
    }

    /// MongoDB's error code name for this failure.
    pub fn code_name(&self) -> &'static str {
        match self {
            ValidationError::TooLarge { .. } => "BSONObjectTooLarge",
            ValidationError::TooDeep { .. } => "Overflow",
            ValidationError::Malformed { .. } | ValidationError::InvalidUtf8 { .. } => {
                "InvalidBSON"
            }
            ValidationError::InvalidId { .. } => "InvalidIdField",
        }
    }
}
