//! The one error type of the crate: why an update was refused or could not be applied.

use thiserror::Error;

/// Everything that can go wrong parsing or applying an update.
///
/// Each variant carries the MongoDB error code the engine answers with
/// ([`UpdateError::code`], [`UpdateError::code_name`]); messages are MongoDB's
/// where it has one.
#[non_exhaustive]
#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub enum UpdateError {
    /// A malformed operator argument (code 2).
    #[error("{0}")]
    BadValue(String),
    /// An update that cannot be parsed (code 9).
    #[error("{0}")]
    FailedToParse(String),
    /// An argument or target of the wrong BSON type (code 14).
    #[error("{0}")]
    TypeMismatch(String),
    /// A path that cannot be created through a scalar or an array (code 28).
    #[error("{0}")]
    PathNotViable(String),
    /// Two paths of one update overlap (code 40).
    #[error("{0}")]
    ConflictingUpdateOperators(String),
    /// A path with an empty component (code 56).
    #[error("{0}")]
    EmptyFieldName(String),
    /// A `$`-prefixed field where MongoDB does not allow one (code 52).
    #[error("{0}")]
    DollarPrefixedFieldName(String),
    /// A result nesting deeper than a stored document may (code 15).
    #[error("{0}")]
    Overflow(String),
    /// `$ref`, `$id` or `$db` out of DBRef order at the top level (code 55).
    #[error("{0}")]
    InvalidDbRef(String),
    /// An update of `_id` (code 66).
    #[error("{0}")]
    ImmutableField(String),
    /// An upsert filter naming one path twice with equality (code 54).
    #[error("{0}")]
    NotSingleValueField(String),
    /// An error MongoDB reports with a numbered location code, such as 17419
    /// for a result larger than 16 MiB.
    #[error("{message}")]
    Location {
        /// MongoDB's code.
        code: i32,
        /// MongoDB's message.
        message: String,
    },
    /// A filter or expression of the update (`$pull` condition, `arrayFilters`,
    /// pipeline stage) refused by the query crate.
    #[error(transparent)]
    Query(#[from] query::QueryError),
}

impl UpdateError {
    /// MongoDB's numeric error code.
    pub fn code(&self) -> i32 {
        match self {
            UpdateError::BadValue(_) => 2,
            UpdateError::FailedToParse(_) => 9,
            UpdateError::TypeMismatch(_) => 14,
            UpdateError::Overflow(_) => 15,
            UpdateError::PathNotViable(_) => 28,
            UpdateError::ConflictingUpdateOperators(_) => 40,
            UpdateError::DollarPrefixedFieldName(_) => 52,
            UpdateError::NotSingleValueField(_) => 54,
            UpdateError::InvalidDbRef(_) => 55,
            UpdateError::EmptyFieldName(_) => 56,
            UpdateError::ImmutableField(_) => 66,
            UpdateError::Location { code, .. } => *code,
            UpdateError::Query(e) => e.code(),
        }
    }

    /// MongoDB's code name (`Location<code>` for numbered locations).
    pub fn code_name(&self) -> &'static str {
        match self {
            UpdateError::BadValue(_) => "BadValue",
            UpdateError::FailedToParse(_) => "FailedToParse",
            UpdateError::TypeMismatch(_) => "TypeMismatch",
            UpdateError::Overflow(_) => "Overflow",
            UpdateError::PathNotViable(_) => "PathNotViable",
            UpdateError::ConflictingUpdateOperators(_) => "ConflictingUpdateOperators",
            UpdateError::DollarPrefixedFieldName(_) => "DollarPrefixedFieldName",
            UpdateError::NotSingleValueField(_) => "NotSingleValueField",
            UpdateError::InvalidDbRef(_) => "InvalidDBRef",
            UpdateError::EmptyFieldName(_) => "EmptyFieldName",
            UpdateError::ImmutableField(_) => "ImmutableField",
            UpdateError::Location { code, .. } => match code {
                17419 => "Location17419",
                _ => "Location",
            },
            UpdateError::Query(e) => e.code_name(),
        }
    }

    pub(crate) fn bad_value(message: impl Into<String>) -> UpdateError {
        UpdateError::BadValue(message.into())
    }

    pub(crate) fn failed_to_parse(message: impl Into<String>) -> UpdateError {
        UpdateError::FailedToParse(message.into())
    }

    pub(crate) fn type_mismatch(message: impl Into<String>) -> UpdateError {
        UpdateError::TypeMismatch(message.into())
    }
}
