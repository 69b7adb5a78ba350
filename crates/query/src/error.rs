//! The one error type of the crate: why a filter, expression, sort or projection was refused.

use thiserror::Error;

/// Everything that can go wrong parsing or evaluating a query.
///
/// Each variant carries the MongoDB error code the engine answers with
/// ([`QueryError::code`], [`QueryError::code_name`]); the message text is
/// MongoDB's where it has one.
#[non_exhaustive]
#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub enum QueryError {
    /// A malformed operator argument or an unknown operator (code 2).
    #[error("{0}")]
    BadValue(String),
    /// A specification that cannot be parsed (code 9).
    #[error("{0}")]
    FailedToParse(String),
    /// An argument of the wrong BSON type (code 14).
    #[error("{0}")]
    TypeMismatch(String),
    /// An error MongoDB reports with a numbered location code, such as 16554
    /// for `$add` of a string or 51091 for an invalid regular expression.
    #[error("{message}")]
    Location {
        /// MongoDB's code.
        code: i32,
        /// MongoDB's message.
        message: String,
    },
    /// An unknown aggregation expression operator (code 168).
    #[error("Unrecognized expression '{0}'")]
    InvalidPipelineOperator(String),
    /// A conversion (`$toInt`, ...) that cannot be done (code 241).
    #[error("{0}")]
    ConversionFailure(String),
    /// A projection mixing inclusion and exclusion and the like (code 31254 and kin).
    #[error("{message}")]
    Projection {
        /// MongoDB's code.
        code: i32,
        /// MongoDB's message.
        message: String,
    },
    /// A regular expression exhausted its step budget while matching (code 2).
    #[error("regular expression is too complex to evaluate: {0}")]
    RegexTooComplex(String),
}

impl QueryError {
    /// A `BadValue` error.
    pub(crate) fn bad_value(message: impl Into<String>) -> QueryError {
        QueryError::BadValue(message.into())
    }

    /// A numbered-location error.
    pub(crate) fn location(code: i32, message: impl Into<String>) -> QueryError {
        QueryError::Location {
            code,
            message: message.into(),
        }
    }

    /// MongoDB's numeric error code.
    pub fn code(&self) -> i32 {
        match self {
            QueryError::BadValue(_) | QueryError::RegexTooComplex(_) => 2,
            QueryError::FailedToParse(_) => 9,
            QueryError::TypeMismatch(_) => 14,
            QueryError::Location { code, .. } | QueryError::Projection { code, .. } => *code,
            QueryError::InvalidPipelineOperator(_) => 168,
            QueryError::ConversionFailure(_) => 241,
        }
    }

    /// MongoDB's code name (`Location<code>` for numbered locations).
    pub fn code_name(&self) -> &'static str {
        match self.code() {
            2 => "BadValue",
            9 => "FailedToParse",
            14 => "TypeMismatch",
            168 => "InvalidPipelineOperator",
            241 => "ConversionFailure",
            _ => "Location",
        }
    }
}
