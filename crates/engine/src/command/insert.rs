//! The insert command, and the checks and fixes every new document gets before it is
//! stored (by insert and by upserts), as mongod's `fixDocumentForInsert` does them: size,
//! nesting, the `_id` rules, a generated `_id` placed first, and top-level
//! `Timestamp(0, 0)` values replaced with the current time.

use super::Request;
use super::args;
use super::retry::Retry;
use super::write::{BatchErrors, Failure, count, reply, statements};
use super::write_concern::WriteConcern;
use crate::engine::Engine;
use crate::error::{Error, ErrorCode};
use crate::store::{Namespace, Writer};
use bson::raw::RawBsonRef;
use bson::{Bson, Document, RawDocument, RawDocumentBuf};
use std::borrow::Cow;

/// The arguments insert takes besides the generic ones.
const FIELDS: &[&str] = &[
    "documents",
    "ordered",
    "bypassDocumentValidation",
    "stmtId",
    "stmtIds",
    "isTimeseriesNamespace",
];

/// insert: `{insert, documents, ordered}` → `{n, writeErrors?}`.
pub(super) fn insert(engine: &Engine, request: &Request<'_>) -> Result<Document, Error> {
    args::check_fields(request, FIELDS)?;
    let ns = args::collection(request)?;
    args::check_writable(&ns)?;
    let concern = WriteConcern::parse(request)?;
    let ordered = args::opt_bool(request, "ordered")?.unwrap_or(true);
    args::bypass_validation(request)?;
    let documents = statements(request, "documents")?;
    let now = engine.host.now_millis();
    let store = engine.store();
    let mut writer = store.write()?;
    writer.bypass_document_validation(args::bypass_validation(request)?);
    let mut retry = Retry::begin(engine, request, &mut writer)?;
    let mut inserted = 0;
    let mut errors = BatchErrors::default();
    for (index, doc) in documents.into_iter().enumerate() {
        // killOp / maxTimeMS end the command; its transaction is dropped whole.
        crate::operations::check_current()?;
        if let Some(retry) = &mut retry
            && retry.previous(index, &mut writer).is_some()
        {
            inserted += 1;
            continue;
        }
        match errors.take(index, insert_one(engine, &mut writer, &ns, doc, now))? {
            Some(()) => {
                inserted += 1;
                if let Some(retry) = &mut retry {
                    retry.ran(index, None);
                }
            }
            None if ordered => break,
            None => {}
        }
    }
    let saved = match retry {
        Some(retry) => Some(retry.save(engine, &mut writer)?),
        None => None,
    };
    concern.commit(writer)?;
    let retried = super::retry::after_commit(saved.as_ref())?;
    Ok(reply(vec![
        ("n", Some(count(inserted))),
        ("writeErrors", errors.field()),
        ("retriedStmtIds", retried),
    ]))
}

fn insert_one(
    engine: &Engine,
    writer: &mut Writer<'_>,
    ns: &Namespace,
    doc: &RawDocument,
    now: i64,
) -> Result<(), Failure> {
    let doc = prepare(engine, doc, now)?;
    writer
        .insert(ns, &doc)
        .map_err(|error| Failure::store(error, &doc))?;
    Ok(())
}

/// `doc` as it will be stored, or mongod's reason to refuse it. Borrowed when nothing
/// needs fixing (the usual case: the driver put an `_id` first).
pub(super) fn prepare<'d>(
    engine: &Engine,
    doc: &'d RawDocument,
    now: i64,
) -> Result<Cow<'d, RawDocument>, Error> {
    let size = doc.as_bytes().len();
    let size_max = crate::limits::BSON_OBJECT_SIZE_MAX;
    if size > size_max {
        return Err(Error::new(
            ErrorCode::BadValue,
            format!("object to insert too large. size in bytes: {size}, max size: {size_max}"),
        ));
    }
    if too_deep(doc, 1) {
        return Err(Error::new(
            ErrorCode::Other(15, "Overflow"),
            format!(
                "cannot insert document because it exceeds {} levels of nesting",
                bson_canonical::limits::NESTING_DEPTH_MAX
            ),
        ));
    }
    let mut id_count = 0;
    let mut id_first = false;
    let mut zero_timestamp = false;
    for (position, element) in doc.iter().enumerate() {
        let (key, value) =
            element.map_err(|e| Error::new(ErrorCode::InvalidBson, e.to_string()))?;
        if let RawBsonRef::Timestamp(ts) = value {
            zero_timestamp |= ts.time == 0 && ts.increment == 0;
        }
        if key.as_str() == "_id" {
            check_id(value)?;
            id_count += 1;
            if id_count > 1 {
                return Err(Error::new(
                    ErrorCode::BadValue,
                    "can't have multiple _id fields in one document",
                ));
            }
            id_first = position == 0;
        }
    }
    if id_first && !zero_timestamp {
        return Ok(Cow::Borrowed(doc));
    }
    if id_count == 0 && !zero_timestamp {
        return Ok(Cow::Owned(prepend_id(doc, engine.ids.object_id(now))));
    }
    rebuild(engine, doc, now).map(Cow::Owned)
}

/// Whether a container nests deeper than mongod stores, counting as its `validateDepth`
/// does: `frames` containers are open, and an empty container opens none.
fn too_deep(doc: &RawDocument, frames: usize) -> bool {
    doc.iter()
        .filter_map(Result::ok)
        .any(|(_, value)| value_too_deep(value, frames))
}

fn value_too_deep(value: RawBsonRef<'_>, frames: usize) -> bool {
    let limit = bson_canonical::limits::NESTING_DEPTH_MAX;
    match value {
        RawBsonRef::Document(child) if !child.is_empty() => {
            frames == limit || too_deep(child, frames + 1)
        }
        RawBsonRef::Array(child) if !child.is_empty() => {
            frames == limit
                || child
                    .into_iter()
                    .filter_map(Result::ok)
                    .any(|value| value_too_deep(value, frames + 1))
        }
        _ => false,
    }
}

/// mongod's `storageValidIdField`: no array, regex or undefined `_id`, and no
/// `$`-prefixed names inside an `_id` document.
pub(super) fn check_id(value: RawBsonRef<'_>) -> Result<(), Error> {
    let refused = match value {
        RawBsonRef::Array(_) => Some("array"),
        RawBsonRef::RegularExpression(_) => Some("regex"),
        RawBsonRef::Undefined => Some("undefined"),
        _ => None,
    };
    if let Some(type_name) = refused {
        return Err(Error::new(
            ErrorCode::Other(53, "InvalidIdField"),
            format!("The '_id' value cannot be of type {type_name}"),
        ));
    }
    if let RawBsonRef::Document(doc) = value
        && let Some(name) = dollar_field(doc)
    {
        return Err(Error::new(
            ErrorCode::Other(52, "DollarPrefixedFieldName"),
            format!(
                "_id fields may not contain '$'-prefixed fields: {name} is not valid for storage."
            ),
        ));
    }
    Ok(())
}

/// The first `$`-prefixed field name inside `doc`, at any depth (DBRef fields excepted).
fn dollar_field(doc: &RawDocument) -> Option<String> {
    for (key, value) in doc.iter().filter_map(Result::ok) {
        let key = key.as_str();
        if key.starts_with('$') && !matches!(key, "$ref" | "$id" | "$db") {
            return Some(key.to_owned());
        }
        let nested = nested_dollar_field(value);
        if nested.is_some() {
            return nested;
        }
    }
    None
}

fn nested_dollar_field(value: RawBsonRef<'_>) -> Option<String> {
    match value {
        RawBsonRef::Document(child) => dollar_field(child),
        RawBsonRef::Array(child) => child
            .into_iter()
            .filter_map(Result::ok)
            .find_map(nested_dollar_field),
        _ => None,
    }
}

/// `doc` with `_id: id` in front, spliced at the byte level.
fn prepend_id(doc: &RawDocument, id: bson::oid::ObjectId) -> RawDocumentBuf {
    let bytes = doc.as_bytes();
    let body = bytes
        .get(4..bytes.len().saturating_sub(1))
        .unwrap_or_default();
    let mut out = Vec::with_capacity(bytes.len() + 17);
    out.extend_from_slice(&[0; 4]);
    out.push(0x07);
    out.extend_from_slice(b"_id\0");
    out.extend_from_slice(&id.bytes());
    out.extend_from_slice(body);
    out.push(0);
    let length = i32::try_from(out.len()).expect("a prepared document is under 16 MiB");
    out[..4].copy_from_slice(&length.to_le_bytes());
    RawDocumentBuf::from_bytes(out).expect("splicing an element into valid BSON stays valid")
}

/// The slow path: `_id` moved (or generated) first, zero timestamps replaced.
fn rebuild(engine: &Engine, doc: &RawDocument, now: i64) -> Result<RawDocumentBuf, Error> {
    let tree =
        Document::try_from(doc).map_err(|e| Error::new(ErrorCode::InvalidBson, e.to_string()))?;
    let mut out = Document::new();
    let id = match tree.get("_id") {
        Some(id) => id.clone(),
        None => Bson::ObjectId(engine.ids.object_id(now)),
    };
    out.insert("_id", id);
    for (key, value) in tree {
        if key == "_id" {
            continue;
        }
        let value = match value {
            Bson::Timestamp(ts) if ts.time == 0 && ts.increment == 0 => {
                Bson::Timestamp(engine.ids.timestamp(now))
            }
            other => other,
        };
        out.insert(key, value);
    }
    RawDocumentBuf::try_from(&out).map_err(|e| Error::new(ErrorCode::BadValue, e.to_string()))
}
