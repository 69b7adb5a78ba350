//! What the write commands (insert, update, delete, findAndModify) share: statement-level
//! versus command-level failures, `writeErrors` entries, readers for the fields of one
//! statement, the `hint`/`collation`/`let` rules, and finding the documents a filter selects.
//!
//! A write command runs all its statements in one store transaction and commits once. A
//! statement that fails (a duplicate key, a bad filter, an update that cannot apply) is
//! reported in `writeErrors` and leaves nothing of itself behind: every check runs before
//! the statement's first change, and each store change is a single call that either
//! happens whole or fails before touching anything. A failure the store cannot recover
//! from inside the transaction (I/O, corruption) ends the whole command and the
//! transaction is dropped, so none of its statements happen.

use super::Request;
use super::args::{self, bson_type_name};
use super::read_args::Hint;
use crate::error::{Error, ErrorCode};
use crate::plan::{self, Access};
use crate::store::{Namespace, StoreError, WalkPosition, Writer};
use bson::raw::RawBsonRef;
use bson::{Bson, Document, RawArray, RawDocument, RawDocumentBuf, doc};
use query::{Filter, Variables};
use std::collections::HashSet;

/// Why one statement of a write command did not happen.
#[derive(Debug)]
pub(super) enum Failure {
    /// The statement failed; the command goes on (or stops, when ordered) and reports it.
    Statement(Error),
    /// The command cannot go on: its transaction is abandoned and the error is the reply.
    Fatal(Error),
}

/// Write errors of a batch, in statement order, and whether the batch must stop.
#[derive(Default)]
pub(super) struct BatchErrors {
    errors: Vec<Bson>,
}

impl BatchErrors {
    /// Takes one statement's outcome: its value, `None` after recording a statement error,
    /// or `Err` for a fatal one. `stop` tells an ordered batch to end after an error.
    pub(super) fn take<T>(
        &mut self,
        index: usize,
        result: Result<T, Failure>,
    ) -> Result<Option<T>, Error> {
        match result {
            Ok(value) => Ok(Some(value)),
            Err(Failure::Fatal(error)) => Err(error),
            Err(Failure::Statement(error)) => {
                self.errors.push(Bson::Document(write_error(index, &error)));
                Ok(None)
            }
        }
    }

    /// The reply's `writeErrors` field (absent when there were none).
    pub(super) fn field(self) -> Option<Bson> {
        (!self.errors.is_empty()).then_some(Bson::Array(self.errors))
    }
}

impl From<Error> for Failure {
    fn from(error: Error) -> Failure {
        Failure::Statement(error)
    }
}

impl From<query::QueryError> for Failure {
    fn from(error: query::QueryError) -> Failure {
        Failure::Statement(error.into())
    }
}

impl From<update::UpdateError> for Failure {
    fn from(error: update::UpdateError) -> Failure {
        Failure::Statement(error.into())
    }
}

impl Failure {
    /// Sorts a store failure for a statement that wrote `doc`: a duplicate `_id` fails the
    /// statement (with MongoDB's `keyPattern`/`keyValue`), anything else the command.
    pub(super) fn store(error: StoreError, doc: &RawDocument) -> Failure {
        match error {
            StoreError::DuplicateKey(_) | StoreError::Rejected(_) => {
                Failure::Statement(duplicate_key(&error, doc))
            }
            other => Failure::Fatal(other.into()),
        }
    }

    /// A store failure outside any single document: always fatal.
    pub(super) fn fatal(error: StoreError) -> Failure {
        Failure::Fatal(error.into())
    }
}

/// The error for a duplicate key (with the `keyPattern`/`keyValue` drivers read from it)
/// or a document an index refuses, as a statement's error. `_doc` is the statement's
/// document (the error carries everything it needs).
pub(super) fn duplicate_key(error: &StoreError, _doc: &RawDocument) -> Error {
    Error::from(error.clone())
}

/// One `writeErrors` entry: `{index, code, ...info, errmsg}` as mongod orders it.
pub(super) fn write_error(index: usize, error: &Error) -> Document {
    let mut entry = doc! {
        "index": i32::try_from(index).unwrap_or(i32::MAX),
        "code": error.code().code(),
    };
    if let Some(info) = error.info() {
        for (key, value) in info {
            entry.insert(key.clone(), value.clone());
        }
    }
    entry.insert("errmsg", error.to_string());
    entry
}

/// The statements of a write command (`documents`, `updates`, `deletes`): a required array
/// of documents, 1 to `maxWriteBatchSize` long.
pub(super) fn statements<'a>(
    request: &Request<'a>,
    key: &str,
) -> Result<Vec<&'a RawDocument>, Error> {
    let Some(array) = args::opt_array(request, key)? else {
        return Err(missing(&format!("{}.{key}", request.name)));
    };
    let mut out = Vec::new();
    for (index, value) in array_values(array)?.into_iter().enumerate() {
        match value {
            RawBsonRef::Document(doc) => out.push(doc),
            other => {
                let path = format!("{}.{key}.{index}", request.name);
                return Err(wrong_type(&path, other, "object"));
            }
        }
    }
    let limit = crate::limits::WRITE_BATCH_SIZE_MAX;
    if out.is_empty() || out.len() > limit {
        return Err(Error::new(
            ErrorCode::Other(16, "InvalidLength"),
            format!(
                "Write batch sizes must be between 1 and {limit}. Got {} operations.",
                out.len()
            ),
        ));
    }
    Ok(out)
}

/// The values of an array, in order.
pub(super) fn array_values(array: &RawArray) -> Result<Vec<RawBsonRef<'_>>, Error> {
    array
        .into_iter()
        .map(|value| value.map_err(|e| Error::new(ErrorCode::InvalidBson, e.to_string())))
        .collect()
}

/// mongod's error for a required field that is absent.
pub(super) fn missing(path: &str) -> Error {
    Error::new(
        ErrorCode::Location(40414),
        format!("BSON field '{path}' is missing but a required field"),
    )
}

/// mongod's error for a field of the wrong type.
pub(super) fn wrong_type(path: &str, value: RawBsonRef<'_>, expected: &str) -> Error {
    Error::new(
        ErrorCode::TypeMismatch,
        format!(
            "BSON field '{path}' is the wrong type '{}', expected type '{expected}'",
            bson_type_name(value)
        ),
    )
}

/// The fields of one statement document (an entry of `updates` or `deletes`), read with
/// mongod's messages, which name the field by its path (`update.updates.q`).
pub(super) struct Fields<'a> {
    doc: &'a RawDocument,
    path: String,
}

impl<'a> Fields<'a> {
    /// Reads `doc`, the statement found at `path` (e.g. `delete.deletes`), refusing any
    /// field outside `allowed`.
    pub(super) fn new(doc: &'a RawDocument, path: String, allowed: &[&str]) -> Result<Self, Error> {
        for element in doc.iter_elements() {
            let element = element.map_err(|e| Error::new(ErrorCode::InvalidBson, e.to_string()))?;
            let key = element.key().as_str();
            if !allowed.contains(&key) {
                return Err(Error::new(
                    ErrorCode::Location(40415),
                    format!("BSON field '{path}.{key}' is an unknown field."),
                ));
            }
        }
        Ok(Fields { doc, path })
    }

    /// The raw value of `key`.
    pub(super) fn get(&self, key: &str) -> Result<Option<RawBsonRef<'a>>, Error> {
        self.doc
            .get(key)
            .map_err(|e| Error::new(ErrorCode::InvalidBson, e.to_string()))
    }

    /// The field's full path, for messages.
    pub(super) fn path(&self, key: &str) -> String {
        format!("{}.{key}", self.path)
    }

    /// A required document field.
    pub(super) fn required_doc(&self, key: &str) -> Result<&'a RawDocument, Error> {
        self.doc_field(key)?.ok_or_else(|| missing(&self.path(key)))
    }

    /// An optional document field.
    pub(super) fn doc_field(&self, key: &str) -> Result<Option<&'a RawDocument>, Error> {
        match self.get(key)? {
            None => Ok(None),
            Some(RawBsonRef::Document(doc)) => Ok(Some(doc)),
            Some(other) => Err(wrong_type(&self.path(key), other, "object")),
        }
    }

    /// An optional boolean (numbers count, as in mongod).
    pub(super) fn bool_field(&self, key: &str) -> Result<Option<bool>, Error> {
        match self.get(key)? {
            None => Ok(None),
            Some(RawBsonRef::Boolean(v)) => Ok(Some(v)),
            Some(RawBsonRef::Int32(v)) => Ok(Some(v != 0)),
            Some(RawBsonRef::Int64(v)) => Ok(Some(v != 0)),
            Some(RawBsonRef::Double(v)) => Ok(Some(v != 0.0)),
            Some(other) => Err(wrong_type(&self.path(key), other, "bool")),
        }
    }

    /// An optional array whose entries are all documents (`arrayFilters`).
    pub(super) fn doc_array(&self, key: &str) -> Result<Option<Vec<RawDocumentBuf>>, Error> {
        match self.get(key)? {
            None => Ok(None),
            Some(RawBsonRef::Array(array)) => documents_of(array, &self.path(key)).map(Some),
            Some(other) => Err(wrong_type(&self.path(key), other, "array")),
        }
    }
}

/// The entries of an array that must hold only documents.
pub(super) fn documents_of(array: &RawArray, path: &str) -> Result<Vec<RawDocumentBuf>, Error> {
    let mut out = Vec::new();
    for (index, value) in array_values(array)?.into_iter().enumerate() {
        match value {
            RawBsonRef::Document(doc) => out.push(doc.to_owned()),
            other => return Err(wrong_type(&format!("{path}.{index}"), other, "object")),
        }
    }
    Ok(out)
}

/// A write statement's `hint`: a name or a key pattern (resolved against the collection
/// when the statement selects its documents), `$natural`, or nothing.
pub(super) fn check_hint(hint: Option<RawBsonRef<'_>>) -> Result<Hint, Error> {
    let is_one = |value: RawBsonRef<'_>| match value {
        RawBsonRef::Int32(v) => v == 1 || v == -1,
        RawBsonRef::Int64(v) => v == 1 || v == -1,
        RawBsonRef::Double(v) => v == 1.0 || v == -1.0,
        _ => false,
    };
    match hint {
        None => Ok(Hint::None),
        Some(RawBsonRef::String("_id_")) => Ok(Hint::Id),
        Some(RawBsonRef::String(name)) => Ok(Hint::Name(name.to_owned())),
        Some(RawBsonRef::Document(doc)) => {
            let fields: Vec<_> = doc.iter().collect::<Result<_, _>>().unwrap_or_default();
            Ok(match fields.as_slice() {
                [] => Hint::None,
                [(key, value)] if key.as_str() == "$natural" && is_one(*value) => {
                    Hint::Natural(match value {
                        RawBsonRef::Int32(v) => *v > 0,
                        RawBsonRef::Int64(v) => *v > 0,
                        RawBsonRef::Double(v) => *v > 0.0,
                        _ => true,
                    })
                }
                [(key, value)] if key.as_str() == "_id" && is_one(*value) => Hint::Id,
                _ => Hint::Pattern(doc.to_owned()),
            })
        }
        Some(other) => Err(wrong_type("hint", other, "object")),
    }
}

/// Refuses any collation but the simple (binary) one: other collations need ICU.
pub(super) fn check_collation(collation: Option<&RawDocument>) -> Result<(), Error> {
    let Some(collation) = collation else {
        return Ok(());
    };
    let simple = matches!(
        collation.get("locale"),
        Ok(Some(RawBsonRef::String("simple")))
    ) && collation.iter().count() == 1;
    if simple {
        Ok(())
    } else {
        Err(Error::new(
            ErrorCode::NotImplemented,
            "collations other than {locale: \"simple\"} are not supported yet",
        ))
    }
}

/// The write command's variables: its `let` document evaluated once, before any document
/// is read, and `$$NOW` fixed at `now_ms`. A bad `let` fails the whole command.
pub(super) fn command_variables(request: &Request<'_>, now_ms: i64) -> Result<Variables, Error> {
    let now = bson::DateTime::from_millis(now_ms);
    Ok(match args::opt_doc(request, "let")? {
        Some(spec) => Variables::from_let_at(spec, now)?,
        None => Variables::at(now),
    })
}

/// The `_id` value a filter pins with plain equality (`{_id: 5}`), when it is the filter's
/// only field: such a statement reads one record through the `_id_` index.
fn pinned_id(filter: &RawDocument) -> Option<RawBsonRef<'_>> {
    let mut fields = filter.iter();
    let (key, value) = fields.next()?.ok()?;
    if key.as_str() != "_id" || fields.next().is_some() {
        return None;
    }
    match value {
        RawBsonRef::Document(doc) => {
            let operator = doc
                .iter()
                .next()
                .and_then(Result::ok)
                .is_some_and(|(key, _)| key.as_str().starts_with('$'));
            (!operator).then_some(value)
        }
        RawBsonRef::Array(_)
        | RawBsonRef::RegularExpression(_)
        | RawBsonRef::Null
        | RawBsonRef::Undefined
        | RawBsonRef::MinKey
        | RawBsonRef::MaxKey => None,
        other => Some(other),
    }
}

/// The records of `ns` that `filter` (compiled from `filter_doc`) selects, in the order
/// the planner's access path reads them (natural order for a scan, index order for an
/// index); only the first when `first_only`. A filter that fails at run time (a `$expr`
/// type error) fails the statement; a hint naming no index is 2 BadValue.
pub(super) fn select(
    writer: &mut Writer<'_>,
    engine: &crate::engine::Engine,
    ns: &Namespace,
    filter: &Filter,
    filter_doc: &RawDocument,
    hint: &Hint,
    first_only: bool,
) -> Result<Vec<(u64, RawDocumentBuf)>, Failure> {
    let take = |rid, doc: &RawDocument| (rid, doc.to_owned());
    select_taking(
        writer, engine, ns, filter, filter_doc, hint, first_only, take,
    )
}

/// The record ids [`select`] selects, in its order, with no document copied (a write
/// that re-reads each record as it changes it: `updateMany`, `deleteMany`).
pub(super) fn select_ids(
    writer: &mut Writer<'_>,
    engine: &crate::engine::Engine,
    ns: &Namespace,
    filter: &Filter,
    filter_doc: &RawDocument,
    hint: &Hint,
    first_only: bool,
) -> Result<Vec<u64>, Failure> {
    let take = |rid, _: &RawDocument| rid;
    select_taking(
        writer, engine, ns, filter, filter_doc, hint, first_only, take,
    )
}

/// What `take` makes of each record [`select`] selects, the record borrowed where it is
/// stored.
#[allow(clippy::too_many_arguments)]
fn select_taking<T>(
    writer: &mut Writer<'_>,
    engine: &crate::engine::Engine,
    ns: &Namespace,
    filter: &Filter,
    filter_doc: &RawDocument,
    hint: &Hint,
    first_only: bool,
    take: impl Fn(u64, &RawDocument) -> T,
) -> Result<Vec<T>, Failure> {
    // Counts what the selection reads for the operation (profile `keysExamined`,
    // `docsExamined`); no time budget of its own.
    let counts = super::cursor::Deadline::start(engine.host.as_ref(), None);
    if *hint == Hint::None
        && let Some(id) = pinned_id(filter_doc)
    {
        let found = writer
            .with_id(ns, id, |rid, doc| {
                filter
                    .try_matches(doc)
                    .map(|matched| matched.then(|| take(rid, doc)))
            })
            .map_err(Failure::fatal)?;
        if let Some(uuid) = writer.uuid(ns).map_err(Failure::fatal)? {
            engine.index_usage.used(uuid, "_id_");
        }
        if found.is_some() {
            counts.key_examined();
            counts.doc_examined();
        }
        return Ok(found.transpose()?.flatten().into_iter().collect());
    }
    let Some(meta) = writer.collection(ns).map_err(Failure::fatal)? else {
        return Ok(Vec::new());
    };
    let query = plan::Query {
        want: first_only.then_some(1),
        ..plan::Query::of(Some(filter_doc), Some(filter), hint)
    };
    let mut planning = plan::Planning {
        meta: &meta,
        ns,
        walker: &mut *writer,
        cache: Some(&engine.plans),
        now_ms: engine.host.now_millis(),
    };
    let access = plan::choose(&mut planning, &query)?.access;
    engine.index_usage.used_by(&meta, &access);
    let mut failure: Option<query::QueryError> = None;
    let interrupted: std::cell::RefCell<Option<Error>> = std::cell::RefCell::default();
    let mut examined = 0_usize;
    let mut test = |doc: &RawDocument| {
        if failure.is_some() || interrupted.borrow().is_some() {
            return false;
        }
        examined += 1;
        if examined.is_multiple_of(crate::limits::DEADLINE_CHECK_INTERVAL)
            && let Err(error) = crate::operations::check_current()
        {
            // A walk or a scan stops at this record (see `stop_if_interrupted`).
            *interrupted.borrow_mut() = Some(error);
            return first_only;
        }
        filter.try_matches(doc).unwrap_or_else(|error| {
            failure = Some(error);
            // Stop at the failing record when reading stops at the first match.
            first_only
        })
    };
    let selected = match access {
        Access::Index(_) | Access::Or(_) => {
            let mut seen = HashSet::new();
            let mut out = Vec::new();
            for index in access.walks() {
                if (first_only && !out.is_empty()) || interrupted.borrow().is_some() {
                    break;
                }
                let mut position = WalkPosition::default();
                writer
                    .walk(
                        ns,
                        &index.target,
                        &index.ranges,
                        &mut position,
                        |rid, bytes| -> Result<bool, StoreError> {
                            counts.key_examined();
                            if !seen.insert(rid) {
                                return Ok(true);
                            }
                            counts.doc_examined();
                            let doc = RawDocument::from_bytes(bytes).map_err(|_| {
                                StoreError::Corrupt(format!("record {rid} is not BSON"))
                            })?;
                            if test(doc) {
                                out.push(take(rid, doc));
                            }
                            if interrupted.borrow().is_some() {
                                return Ok(false);
                            }
                            Ok(!first_only || out.is_empty())
                        },
                    )
                    .map_err(Failure::fatal)?;
            }
            out
        }
        Access::Id(id) => {
            let found = writer
                .with_id(ns, id, |rid, doc| test(doc).then(|| take(rid, doc)))
                .map_err(Failure::fatal)?;
            if found.is_some() {
                counts.key_examined();
                counts.doc_examined();
            }
            found.flatten().into_iter().collect()
        }
        Access::Collection => {
            let limit = if first_only { 1 } else { usize::MAX };
            writer
                .scan_taking(ns, None, limit, |rid, doc| {
                    counts.doc_examined();
                    let keep = test(doc);
                    stop_if_interrupted(&interrupted).map(|()| keep.then(|| take(rid, doc)))
                })
                .map_err(Failure::fatal)?
        }
    };
    if let Some(error) = interrupted.into_inner() {
        return Err(Failure::Fatal(error));
    }
    match failure {
        Some(error) => Err(error.into()),
        None => Ok(selected),
    }
}

/// Stops a selection scan at the record where its operation was found interrupted
/// (killOp, maxTimeMS): the interruption as the store's error, which ends the scan.
fn stop_if_interrupted(interrupted: &std::cell::RefCell<Option<Error>>) -> Result<(), StoreError> {
    match &*interrupted.borrow() {
        Some(error) => Err(StoreError::Rejected(error.clone())),
        None => Ok(()),
    }
}

/// Builds a command reply from `(key, value)` pairs, leaving out absent values.
pub(super) fn reply(fields: Vec<(&str, Option<Bson>)>) -> Document {
    let mut out = Document::new();
    for (key, value) in fields {
        if let Some(value) = value {
            out.insert(key, value);
        }
    }
    out
}

/// A count as the `i32` mongod answers with.
pub(super) fn count(value: usize) -> Bson {
    Bson::Int32(i32::try_from(value).unwrap_or(i32::MAX))
}
