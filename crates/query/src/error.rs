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
    /// An error MongoDB reports with a numbered location code, such as 16612
    /// for `$add` of two dates or 51091 for an invalid regular expression.
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
    /// A MongoDB feature this crate does not implement, such as an aggregation
    /// stage that needs the engine (`$lookup`, `$out`) (code 238).
    #[error("{0}")]
    NotImplemented(String),
    /// An accumulator (`$push`, `$addToSet`) grew past its memory limit (code 146).
    #[error("{0}")]
    ExceededMemoryLimit(String),
    /// A document produced by a pipeline is larger than BSON allows (code 10334).
    #[error("{0}")]
    BsonObjectTooLarge(String),
    /// Arithmetic that left its type's range, such as a date past the `i64`
    /// milliseconds (code 45).
    #[error("{0}")]
    Overflow(String),
    /// A query that needs an index which does not exist, such as `$text` without a
    /// text index (code 27).
    #[error("{0}")]
    IndexNotFound(String),
    /// A query no plan can answer, such as `$near` without a geospatial index
    /// (code 291).
    #[error("{0}")]
    NoQueryExecutionPlans(String),
    /// An error with the context MongoDB adds in front of it, such as
    /// `Invalid $project :: caused by :: ...`; code and code name are the cause's.
    #[error("{context} :: caused by :: {cause}")]
    Context {
        /// What was being done.
        context: String,
        /// The error underneath.
        cause: Box<QueryError>,
    },
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

    /// Puts `context` in front of the message, keeping the code.
    pub(crate) fn context(self, context: impl Into<String>) -> QueryError {
        QueryError::Context {
            context: context.into(),
            cause: Box::new(self),
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
            QueryError::NotImplemented(_) => 238,
            QueryError::ExceededMemoryLimit(_) => 146,
            QueryError::BsonObjectTooLarge(_) => 10334,
            QueryError::Overflow(_) => 45,
            QueryError::IndexNotFound(_) => 27,
            QueryError::NoQueryExecutionPlans(_) => 291,
            QueryError::Context { cause, .. } => cause.code(),
        }
    }

    /// MongoDB's code name. For numbered locations this is the prefix
    /// `Location`: the name on the wire is it followed by [`QueryError::code`]
    /// (`Location40324`).
    pub fn code_name(&self) -> &'static str {
        match self.code() {
            2 => "BadValue",
            9 => "FailedToParse",
            14 => "TypeMismatch",
            168 => "InvalidPipelineOperator",
            241 => "ConversionFailure",
            238 => "NotImplemented",
            146 => "ExceededMemoryLimit",
            10334 => "BSONObjectTooLarge",
            45 => "Overflow",
            27 => "IndexNotFound",
            291 => "NoQueryExecutionPlans",
            292 => "QueryExceededMemoryLimitNoDiskUseAllowed",
            _ => "Location",
        }
    }
}
