//! The client's errors, shaped as the `mongodb` crate's: an [`Error`] with a boxed
//! [`ErrorKind`], the driver's variant and struct names where the driver has them
//! (`Command`, `Write`, `InsertMany`, `InvalidArgument`, `Io`, `Bson`), and variants of our own for what only an embedded database
//! meets (`Locked`, `Corrupt`, `Closed`).
//!
//! Invariants:
//! - A reply with `ok: 0` becomes `ErrorKind::Command`, never a write error, as the driver
//!   reads it; its `errorLabels` become the error's labels.
//! - A `writeErrors` entry keeps the server's `codeName` only when the server sent one
//!   (mongod sends none), and `details` is its `errInfo`, as the driver's `WriteError`.

use bson::{Bson, Document, RawDocument, RawDocumentBuf};
use std::collections::{HashMap, HashSet};
use std::sync::Arc;

/// A `Result` whose error is the client's [`Error`].
pub type Result<T> = std::result::Result<T, Error>;

/// A failed client call: what kind of failure, and the labels the reply carried.
#[derive(Clone, Debug)]
#[non_exhaustive]
pub struct Error {
    /// What went wrong.
    pub kind: Box<ErrorKind>,
    labels: HashSet<String>,
    server_response: Option<Box<RawDocumentBuf>>,
    /// What ended a bulk write after some of it was written (the driver's `source`).
    source: Option<Box<Error>>,
}

impl std::fmt::Display for Error {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Kind: {}, labels: {:?}", self.kind, self.labels)
    }
}

/// The source is the error that ended a bulk write after some of it was written.
impl std::error::Error for Error {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        self.source
            .as_deref()
            .map(|source| source as &(dyn std::error::Error + 'static))
    }
}

impl Error {
    pub(crate) fn new(kind: ErrorKind) -> Error {
        Error {
            kind: Box::new(kind),
            labels: HashSet::new(),
            server_response: None,
            source: None,
        }
    }

    /// The whole reply of the command that failed, as the driver keeps it: the fields the
    /// error kinds do not carry (a duplicate key's `keyPattern` and `keyValue` in
    /// `writeErrors`) are read from it. `None` for errors raised before a command ran.
    #[must_use]
    pub fn server_response(&self) -> Option<&RawDocumentBuf> {
        self.server_response.as_deref()
    }

    pub(crate) fn with_server_response(mut self, reply: &RawDocument) -> Error {
        if self.server_response.is_none() {
            self.server_response = Some(Box::new(reply.to_owned()));
        }
        self
    }

    /// [`Error::with_server_response`] for a reply already decoded.
    pub(crate) fn with_server_document(self, reply: &Document) -> Error {
        match RawDocumentBuf::try_from(reply) {
            Ok(raw) => self.with_server_response(&raw),
            Err(_) => self,
        }
    }

    pub(crate) fn with_source(mut self, source: Error) -> Error {
        self.source = Some(Box::new(source));
        self
    }

    /// The error labels (`MultiforaDBOutcomeUnknown` marks a write whose outcome is
    /// unknown: the log failed after its record may have reached the file).
    #[must_use]
    pub fn labels(&self) -> &HashSet<String> {
        &self.labels
    }

    /// Whether the error carries `label`.
    #[must_use]
    pub fn contains_label<T: AsRef<str>>(&self, label: T) -> bool {
        self.labels.contains(label.as_ref())
    }

    pub(crate) fn invalid_argument(message: impl Into<String>) -> Error {
        Error::new(ErrorKind::InvalidArgument {
            message: message.into(),
        })
    }

    pub(crate) fn invalid_response(message: impl Into<String>) -> Error {
        Error::new(ErrorKind::InvalidResponse {
            message: message.into(),
        })
    }
}

impl From<ErrorKind> for Error {
    fn from(kind: ErrorKind) -> Error {
        Error::new(kind)
    }
}

/// An I/O error is `ErrorKind::Io`, as the driver converts it.
impl From<std::io::Error> for Error {
    fn from(error: std::io::Error) -> Error {
        Error::new(ErrorKind::Io(Arc::new(error)))
    }
}

/// bson's error (encoding a value, decoding a stored document into `T`) is
/// `ErrorKind::Bson`, as the driver built for bson 3 reports it.
impl From<bson::error::Error> for Error {
    fn from(error: bson::error::Error) -> Error {
        Error::new(ErrorKind::Bson(error))
    }
}

/// The kinds of failure.
#[derive(Clone, Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ErrorKind {
    /// A call refused before it ran (as the driver refuses it before sending anything).
    #[error("An invalid argument was provided: {message}")]
    InvalidArgument {
        /// Why.
        message: String,
    },
    /// A value could not be encoded as BSON, or a stored document could not be decoded
    /// into the collection's type (the driver built for bson 3 reports both so).
    #[error("{0}")]
    Bson(bson::error::Error),
    /// Never produced with bson 3 (as in the driver): kept so that code matching the
    /// driver's variants compiles unchanged.
    #[error("{0}")]
    BsonSerialization(bson::error::Error),
    /// Never produced with bson 3 (as in the driver): kept so that code matching the
    /// driver's variants compiles unchanged.
    #[error("{0}")]
    BsonDeserialization(bson::error::Error),
    /// A command failed (a reply with `ok: 0`).
    #[error("Command failed: {0}")]
    Command(CommandError),
    /// A single write (`insert_one`, `update_*`, `replace_one`, `delete_*`) failed.
    #[error("{0:?}")]
    Write(WriteFailure),
    /// Some writes of an `insert_many` failed.
    #[error("{0:?}")]
    InsertMany(InsertManyError),
    /// Some writes of a `bulk_write` failed (what was written is its `partial_result`).
    #[error("{0:?}")]
    BulkWrite(super::bulk::BulkWriteError),
    /// Opening or closing the file failed for a reason of the operating system.
    #[error("I/O error: {0}")]
    Io(Arc<std::io::Error>),
    /// The database file is open in another client, here or in another process
    /// (DBPathInUse, 98).
    #[error("{message}")]
    Locked {
        /// Which file and who holds it.
        message: String,
    },
    /// The database file or its log is damaged, or is not a database.
    #[error("{message}")]
    Corrupt {
        /// Where and what.
        message: String,
    },
    /// The client was closed ([`Client::close`](super::Client::close)).
    #[error("the database is closed")]
    Closed,
    /// A reply this client could not read (a bug).
    #[error("invalid response: {message}")]
    InvalidResponse {
        /// What was wrong with it.
        message: String,
    },
}

/// A command that failed, with MongoDB's code.
#[derive(Clone, Debug, PartialEq, thiserror::Error)]
#[error("Error code {code} ({code_name}): {message}")]
#[non_exhaustive]
pub struct CommandError {
    /// MongoDB's code.
    pub code: i32,
    /// Its name.
    pub code_name: String,
    /// The message.
    pub message: String,
}

/// Why a single write failed.
#[derive(Clone, Debug, PartialEq)]
#[non_exhaustive]
pub enum WriteFailure {
    /// The statement failed (the only failure an embedded database has: its write concern
    /// is always met).
    WriteError(WriteError),
}

/// A failed write statement.
#[derive(Clone, Debug, PartialEq)]
#[non_exhaustive]
pub struct WriteError {
    /// MongoDB's code (11000 for a duplicate key).
    pub code: i32,
    /// The code's name when the reply named it (mongod's write errors do not).
    pub code_name: Option<String>,
    /// The message.
    pub message: String,
    /// The statement's `errInfo` (a validation failure's explanation).
    pub details: Option<Document>,
}

/// A failed statement of an `insert_many`, with its position in the call.
#[derive(Clone, Debug, PartialEq)]
#[non_exhaustive]
pub struct IndexedWriteError {
    /// The position of the document in the `insert_many` call.
    pub index: usize,
    /// MongoDB's code.
    pub code: i32,
    /// The code's name when the reply named it.
    pub code_name: Option<String>,
    /// The message.
    pub message: String,
    /// The statement's `errInfo`.
    pub details: Option<Document>,
}

/// The failures of an `insert_many`.
#[derive(Clone, Debug, PartialEq)]
#[non_exhaustive]
pub struct InsertManyError {
    /// The failed statements, in order.
    pub write_errors: Option<Vec<IndexedWriteError>>,
    /// The `_id`s of the documents inserted before (and, unordered, around) the failures.
    pub(crate) inserted_ids: HashMap<usize, Bson>,
}

impl InsertManyError {
    /// The `_id`s of the documents that were inserted, by position in the call.
    #[must_use]
    pub fn inserted_ids(&self) -> &HashMap<usize, Bson> {
        &self.inserted_ids
    }
}

/// The command error of an `ok: 0` reply, with its labels.
pub(crate) fn command_error(reply: &Document) -> Error {
    let code = reply.get_i32("code").unwrap_or(8);
    let code_name = reply.get_str("codeName").map_or_else(
        |_| crate::error::code_name(code).into_owned(),
        str::to_owned,
    );
    let message = reply.get_str("errmsg").unwrap_or_default().to_owned();
    let mut error = Error::new(ErrorKind::Command(CommandError {
        code,
        code_name,
        message,
    }));
    if let Ok(labels) = reply.get_array("errorLabels") {
        error.labels = labels
            .iter()
            .filter_map(|label| label.as_str().map(str::to_owned))
            .collect();
    }
    error.with_server_document(reply)
}

/// One entry of a reply's `writeErrors`.
pub(crate) fn indexed_write_error(entry: &Document) -> IndexedWriteError {
    IndexedWriteError {
        index: entry
            .get_i32("index")
            .ok()
            .and_then(|i| usize::try_from(i).ok())
            .unwrap_or(0),
        code: entry.get_i32("code").unwrap_or(8),
        code_name: entry.get_str("codeName").ok().map(str::to_owned),
        message: entry.get_str("errmsg").unwrap_or_default().to_owned(),
        details: entry.get_document("errInfo").ok().cloned(),
    }
}

/// The reply's `writeErrors`, each with its index in the command.
pub(crate) fn write_errors(reply: &Document) -> Vec<IndexedWriteError> {
    reply
        .get_array("writeErrors")
        .map(|errors| {
            errors
                .iter()
                .filter_map(Bson::as_document)
                .map(indexed_write_error)
                .collect()
        })
        .unwrap_or_default()
}

/// The first write error of a single-statement reply as a `Write` error.
pub(crate) fn single_write_error(reply: &Document) -> Option<Error> {
    let first = write_errors(reply).into_iter().next()?;
    let error = Error::new(ErrorKind::Write(WriteFailure::WriteError(first.into())));
    Some(error.with_server_document(reply))
}

impl From<IndexedWriteError> for WriteError {
    fn from(error: IndexedWriteError) -> WriteError {
        WriteError {
            code: error.code,
            code_name: error.code_name,
            message: error.message,
            details: error.details,
        }
    }
}

/// An engine error from opening or closing the file.
pub(crate) fn from_engine(error: &crate::Error) -> Error {
    use crate::ErrorCode;
    let message = error.to_string();
    let kind = match error.code() {
        ErrorCode::DbPathInUse => ErrorKind::Locked { message },
        ErrorCode::DataCorruptionDetected => ErrorKind::Corrupt { message },
        _ => ErrorKind::Io(Arc::new(std::io::Error::other(message))),
    };
    Error::new(kind)
}
