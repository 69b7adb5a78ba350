//! MongoDB error codes and the one place that renders `{ok: 0, errmsg, code, codeName}`.

use bson::{RawDocumentBuf, rawdoc};

/// The MongoDB error codes this engine returns, with their official numbers and names
/// (from mongod's `error_codes.yml`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum ErrorCode {
    /// 1: a bug on the server side.
    InternalError,
    /// 2: a value of the right type but not allowed.
    BadValue,
    /// 9: a command or option that could not be parsed.
    FailedToParse,
    /// 13: the operation is not allowed here (e.g. an admin-only command elsewhere).
    Unauthorized,
    /// 14: a value of the wrong BSON type.
    TypeMismatch,
    /// 17: a malformed wire message.
    ProtocolError,
    /// 22: a document that is not valid BSON.
    InvalidBson,
    /// 59: no command by that name.
    CommandNotFound,
    /// 72: options that do not fit together or name nothing.
    InvalidOptions,
    /// 73: a database or collection name that is not allowed.
    InvalidNamespace,
    /// 96: the operation ran and failed.
    OperationFailed,
    /// 238: a known feature this server does not have yet.
    NotImplemented,
    /// 11000: a unique index already holds the key.
    DuplicateKey,
    /// 26: the collection or database does not exist.
    NamespaceNotFound,
    /// 48: the collection exists already.
    NamespaceExists,
    /// 43: no cursor with that id.
    CursorNotFound,
    /// 20: the operation is not allowed in this state.
    IllegalOperation,
    /// 290: stored bytes are damaged.
    DataCorruptionDetected,
    /// A numbered assertion site of mongod, reported as `Location<code>`.
    Location(i32),
    /// Any other code with its official name (errors raised by the query and update crates).
    Other(i32, &'static str),
    /// 352: OP_QUERY used for anything but the handshake.
    UnsupportedOpQueryCommand,
    /// 10334: a document over `maxBsonObjectSize`.
    BsonObjectTooLarge,
    /// 98: the database file is open elsewhere (mongod: its lock file is taken).
    DbPathInUse,
    /// 14031: the disk is full; the write was not applied.
    OutOfDiskSpace,
    /// A write whose outcome is unknown (the log failed after its record may have reached
    /// the file). The server never answers it: it closes the connection, which drivers
    /// treat as an unknown outcome, as when mongod fail-stops. Reported as code 1.
    OutcomeUnknown,
}

/// The error label an `OutcomeUnknown` reply carries (the embedded API shows it; the
/// server closes the connection instead of sending it).
pub const OUTCOME_UNKNOWN_LABEL: &str = "MultiforaDBOutcomeUnknown";

impl ErrorCode {
    /// The numeric code.
    #[must_use]
    pub fn code(self) -> i32 {
        match self {
            ErrorCode::InternalError => 1,
            ErrorCode::BadValue => 2,
            ErrorCode::FailedToParse => 9,
            ErrorCode::Unauthorized => 13,
            ErrorCode::TypeMismatch => 14,
            ErrorCode::ProtocolError => 17,
            ErrorCode::InvalidBson => 22,
            ErrorCode::CommandNotFound => 59,
            ErrorCode::InvalidOptions => 72,
            ErrorCode::InvalidNamespace => 73,
            ErrorCode::OperationFailed => 96,
            ErrorCode::NotImplemented => 238,
            ErrorCode::DuplicateKey => 11000,
            ErrorCode::NamespaceNotFound => 26,
            ErrorCode::NamespaceExists => 48,
            ErrorCode::CursorNotFound => 43,
            ErrorCode::IllegalOperation => 20,
            ErrorCode::DataCorruptionDetected => 290,
            ErrorCode::Location(code) | ErrorCode::Other(code, _) => code,
            ErrorCode::UnsupportedOpQueryCommand => 352,
            ErrorCode::BsonObjectTooLarge => 10334,
            ErrorCode::DbPathInUse => 98,
            ErrorCode::OutOfDiskSpace => 14031,
            ErrorCode::OutcomeUnknown => 1,
        }
    }

    /// The `codeName` clients see.
    #[must_use]
    pub fn name(self) -> std::borrow::Cow<'static, str> {
        match self {
            ErrorCode::Location(code) => std::borrow::Cow::Owned(format!("Location{code}")),
            ErrorCode::Other(_, name) => std::borrow::Cow::Borrowed(name),
            _ => std::borrow::Cow::Borrowed(self.static_name()),
        }
    }

    fn static_name(self) -> &'static str {
        match self {
            ErrorCode::InternalError => "InternalError",
            ErrorCode::BadValue => "BadValue",
            ErrorCode::FailedToParse => "FailedToParse",
            ErrorCode::Unauthorized => "Unauthorized",
            ErrorCode::TypeMismatch => "TypeMismatch",
            ErrorCode::ProtocolError => "ProtocolError",
            ErrorCode::InvalidBson => "InvalidBSON",
            ErrorCode::CommandNotFound => "CommandNotFound",
            ErrorCode::InvalidOptions => "InvalidOptions",
            ErrorCode::InvalidNamespace => "InvalidNamespace",
            ErrorCode::OperationFailed => "OperationFailed",
            ErrorCode::NotImplemented => "NotImplemented",
            ErrorCode::DuplicateKey => "DuplicateKey",
            ErrorCode::NamespaceNotFound => "NamespaceNotFound",
            ErrorCode::NamespaceExists => "NamespaceExists",
            ErrorCode::CursorNotFound => "CursorNotFound",
            ErrorCode::IllegalOperation => "IllegalOperation",
            ErrorCode::DataCorruptionDetected => "DataCorruptionDetected",
            ErrorCode::Location(_) | ErrorCode::Other(..) => "",
            ErrorCode::UnsupportedOpQueryCommand => "UnsupportedOpQueryCommand",
            ErrorCode::BsonObjectTooLarge => "BSONObjectTooLarge",
            ErrorCode::DbPathInUse => "DBPathInUse",
            ErrorCode::OutOfDiskSpace => "OutOfDiskSpace",
            ErrorCode::OutcomeUnknown => "InternalError",
        }
    }
}

/// Everything a command can fail with. Each maps to one [`ErrorCode`].
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// A command-level failure with its MongoDB code and message.
    #[error("{message}")]
    Command {
        /// The MongoDB code.
        code: ErrorCode,
        /// The `errmsg` sent to the client.
        message: String,
    },
    /// A wire message that could not be decoded (framing intact, contents bad).
    #[error(transparent)]
    Wire(#[from] wire::Error),
    /// A command-level failure whose reply carries fields beyond the message, such as a
    /// duplicate key's `keyPattern` and `keyValue`.
    #[error("{message}")]
    WithInfo {
        /// The MongoDB code.
        code: ErrorCode,
        /// The `errmsg` sent to the client.
        message: String,
        /// Fields appended to the error reply after `codeName` (boxed: errors stay small).
        info: Box<bson::Document>,
    },
}

impl From<crate::store::StoreError> for Error {
    fn from(error: crate::store::StoreError) -> Error {
        use crate::store::StoreError;
        let code = match &error {
            StoreError::DuplicateKey(key) => {
                return Error::WithInfo {
                    code: ErrorCode::DuplicateKey,
                    message: error.to_string(),
                    info: Box::new(
                        bson::doc! { "keyPattern": &key.pattern, "keyValue": &key.value },
                    ),
                };
            }
            StoreError::Rejected(inner) => return inner.clone(),
            StoreError::NamespaceNotFound(_) => ErrorCode::NamespaceNotFound,
            StoreError::NamespaceExists(_) => ErrorCode::NamespaceExists,
            StoreError::Corrupt(_) => ErrorCode::DataCorruptionDetected,
            StoreError::InUse { .. } => ErrorCode::DbPathInUse,
            StoreError::OutOfDiskSpace(_) => ErrorCode::OutOfDiskSpace,
            StoreError::OutcomeUnknown(_) => {
                return Error::WithInfo {
                    code: ErrorCode::OutcomeUnknown,
                    message: error.to_string(),
                    info: Box::new(bson::doc! { "errorLabels": [OUTCOME_UNKNOWN_LABEL] }),
                };
            }
            _ => ErrorCode::InternalError,
        };
        Error::new(code, error.to_string())
    }
}

/// The `codeName` mongod gives code `code`, for replies that carry only the number (the
/// entries of `writeErrors`). Covers every code this server reports; a numbered assertion
/// site (a code without a name of its own) is `Location<code>`.
#[must_use]
pub fn code_name(code: i32) -> std::borrow::Cow<'static, str> {
    let name = match code {
        1 => "InternalError",
        2 => "BadValue",
        6 => "HostUnreachable",
        7 => "HostNotFound",
        8 => "UnknownError",
        9 => "FailedToParse",
        13 => "Unauthorized",
        14 => "TypeMismatch",
        15 => "Overflow",
        16 => "InvalidLength",
        17 => "ProtocolError",
        20 => "IllegalOperation",
        22 => "InvalidBSON",
        24 => "LockTimeout",
        26 => "NamespaceNotFound",
        27 => "IndexNotFound",
        28 => "PathNotViable",
        40 => "ConflictingUpdateOperators",
        43 => "CursorNotFound",
        48 => "NamespaceExists",
        50 => "MaxTimeMSExpired",
        52 => "DollarPrefixedFieldName",
        53 => "InvalidIdField",
        54 => "NotSingleValueField",
        56 => "EmptyFieldName",
        59 => "CommandNotFound",
        64 => "WriteConcernFailed",
        66 => "ImmutableField",
        67 => "CannotCreateIndex",
        72 => "InvalidOptions",
        73 => "InvalidNamespace",
        85 => "IndexOptionsConflict",
        86 => "IndexKeySpecsConflict",
        89 => "NetworkTimeout",
        91 => "ShutdownInProgress",
        96 => "OperationFailed",
        98 => "DBPathInUse",
        100 => "UnsatisfiableWriteConcern",
        112 => "WriteConflict",
        121 => "DocumentValidationFailure",
        125 => "CommandFailed",
        146 => "ExceededMemoryLimit",
        168 => "InvalidPipelineOperator",
        171 => "CannotIndexParallelArrays",
        175 => "QueryPlanKilled",
        189 => "PrimarySteppedDown",
        197 => "InvalidIndexSpecificationOption",
        224 => "QueryFeatureNotAllowed",
        238 => "NotImplemented",
        241 => "ConversionFailure",
        251 => "NoSuchTransaction",
        262 => "ExceededTimeLimit",
        263 => "OperationNotSupportedInTransaction",
        266 => "FailPointSetFailed",
        290 => "DataCorruptionDetected",
        292 => "QueryExceededMemoryLimitNoDiskUseAllowed",
        352 => "UnsupportedOpQueryCommand",
        9001 => "SocketException",
        10107 => "NotWritablePrimary",
        10334 => "BSONObjectTooLarge",
        11000 => "DuplicateKey",
        11600 => "InterruptedAtShutdown",
        11601 => "Interrupted",
        11602 => "InterruptedDueToReplStateChange",
        13435 => "NotPrimaryNoSecondaryOk",
        13436 => "NotPrimaryOrSecondary",
        14031 => "OutOfDiskSpace",
        _ => return std::borrow::Cow::Owned(format!("Location{code}")),
    };
    std::borrow::Cow::Borrowed(name)
}

impl ErrorCode {
    /// The code for a number and name reported by a lower crate (`Location` names carry
    /// the number themselves).
    #[must_use]
    pub fn from_parts(code: i32, name: &'static str) -> ErrorCode {
        if name.starts_with("Location") {
            ErrorCode::Location(code)
        } else {
            ErrorCode::Other(code, name)
        }
    }
}

impl From<query::QueryError> for Error {
    fn from(error: query::QueryError) -> Error {
        let code = ErrorCode::from_parts(error.code(), error.code_name());
        Error::new(code, error.to_string())
    }
}

impl From<update::UpdateError> for Error {
    fn from(error: update::UpdateError) -> Error {
        let code = ErrorCode::from_parts(error.code(), error.code_name());
        Error::new(code, error.to_string())
    }
}

impl Error {
    /// A command error with `code` and `message`.
    pub fn new(code: ErrorCode, message: impl Into<String>) -> Error {
        Error::Command {
            code,
            message: message.into(),
        }
    }

    /// The MongoDB code this error is reported with.
    #[must_use]
    pub fn code(&self) -> ErrorCode {
        match self {
            Error::Command { code, .. } | Error::WithInfo { code, .. } => *code,
            Error::Wire(wire::Error::InvalidBson { .. }) => ErrorCode::InvalidBson,
            Error::Wire(wire::Error::DocumentTooLarge { .. }) => ErrorCode::BsonObjectTooLarge,
            Error::Wire(_) => ErrorCode::ProtocolError,
        }
    }

    /// The extra reply fields of the error (empty for most errors).
    #[must_use]
    pub fn info(&self) -> Option<&bson::Document> {
        match self {
            Error::WithInfo { info, .. } => Some(info),
            _ => None,
        }
    }

    /// The error as a reply document: `{ok: 0.0, errmsg, code, codeName, ...info}`.
    #[must_use]
    pub fn to_reply(&self) -> RawDocumentBuf {
        let code = self.code();
        let mut reply = rawdoc! {
            "ok": 0.0,
            "errmsg": self.to_string(),
            "code": code.code(),
            "codeName": code.name().as_ref(),
        };
        if let Some(info) = self.info() {
            for (key, value) in info {
                if let (Ok(key), Ok(value)) = (
                    bson::raw::CString::try_from(key.as_str()),
                    bson::RawBson::try_from(value.clone()),
                ) {
                    reply.append(key, value);
                }
            }
        }
        reply
    }
}

#[cfg(test)]
mod tests {
    use super::{Error, ErrorCode};
    use bson::rawdoc;

    #[test]
    fn error_reply_has_mongodb_shape() {
        let reply = Error::new(ErrorCode::CommandNotFound, "no such command: 'x'").to_reply();
        let expected = rawdoc! {
            "ok": 0.0, "errmsg": "no such command: 'x'", "code": 59, "codeName": "CommandNotFound",
        };
        assert_eq!(reply, expected);
    }

    #[test]
    fn wire_errors_map_to_protocol_codes() {
        let bson = Error::from(wire::Error::InvalidBson {
            offset: 1,
            reason: "x".into(),
        });
        assert_eq!(bson.code(), ErrorCode::InvalidBson);
        let opcode = Error::from(wire::Error::UnsupportedOpcode { opcode: 2012 });
        assert_eq!(opcode.code().code(), 17);
    }
}
