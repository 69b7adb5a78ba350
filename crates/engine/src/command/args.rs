//! Reading command arguments the way mongod does: the target collection, typed options
//! with MongoDB's type errors, unknown-field checks, and namespace rules.
#![allow(dead_code)] // The CRUD command modules use these; until they land some are unused.

use super::Request;
use crate::error::{Error, ErrorCode};
use crate::store::Namespace;
use bson::raw::RawBsonRef;
use bson::{RawArray, RawDocument};

/// Arguments every command accepts (driver and session plumbing), never "unknown".
pub(crate) const GENERIC_ARGS: &[&str] = &[
    "$db",
    "lsid",
    "$clusterTime",
    "txnNumber",
    "autocommit",
    "startTransaction",
    "readConcern",
    "writeConcern",
    "comment",
    "maxTimeMS",
    "$readPreference",
    "apiVersion",
    "apiStrict",
    "apiDeprecationErrors",
    "$audit",
    "$client",
    "mayBypassWriteBlocking",
];

/// Longest `db.collection` MongoDB accepts, in bytes.
pub(crate) const NAMESPACE_LEN_MAX: usize = 255;

fn type_name(value: RawBsonRef<'_>) -> &'static str {
    match value {
        RawBsonRef::Double(_) => "double",
        RawBsonRef::String(_) => "string",
        RawBsonRef::Document(_) => "object",
        RawBsonRef::Array(_) => "array",
        RawBsonRef::Binary(_) => "binData",
        RawBsonRef::Undefined => "undefined",
        RawBsonRef::ObjectId(_) => "objectId",
        RawBsonRef::Boolean(_) => "bool",
        RawBsonRef::DateTime(_) => "date",
        RawBsonRef::Null => "null",
        RawBsonRef::RegularExpression(_) => "regex",
        RawBsonRef::DbPointer(_) => "dbPointer",
        RawBsonRef::JavaScriptCode(_) => "javascript",
        RawBsonRef::Symbol(_) => "symbol",
        RawBsonRef::JavaScriptCodeWithScope(_) => "javascriptWithScope",
        RawBsonRef::Int32(_) => "int",
        RawBsonRef::Timestamp(_) => "timestamp",
        RawBsonRef::Int64(_) => "long",
        RawBsonRef::Decimal128(_) => "decimal",
        RawBsonRef::MaxKey => "maxKey",
        RawBsonRef::MinKey => "minKey",
    }
}

/// MongoDB's name for the BSON type of `value` (as in `$type` and error messages).
pub(crate) fn bson_type_name(value: RawBsonRef<'_>) -> &'static str {
    type_name(value)
}

/// MongoDB's TypeMismatch for option `key` of the wrong BSON type.
pub(crate) fn wrong_type(
    request: &Request<'_>,
    key: &str,
    value: RawBsonRef<'_>,
    expected: &str,
) -> Error {
    Error::new(
        ErrorCode::TypeMismatch,
        format!(
            "BSON field '{}.{key}' is the wrong type '{}', expected type '{expected}'",
            request.name,
            type_name(value)
        ),
    )
}

fn field<'a>(request: &Request<'a>, key: &str) -> Result<Option<RawBsonRef<'a>>, Error> {
    request.field(key)
}

/// The collection a command names in its first field, validated.
pub(crate) fn collection(request: &Request<'_>) -> Result<Namespace, Error> {
    match field(request, request.name)? {
        Some(RawBsonRef::String(name)) => {
            let ns = Namespace::new(request.db, name);
            check_namespace(&ns)?;
            Ok(ns)
        }
        Some(value) => Err(Error::new(
            ErrorCode::InvalidNamespace,
            format!("collection name has invalid type {}", type_name(value)),
        )),
        None => Err(Error::new(
            ErrorCode::InvalidNamespace,
            "no collection name",
        )),
    }
}

/// MongoDB's collection-name rules.
pub(crate) fn check_namespace(ns: &Namespace) -> Result<(), Error> {
    let invalid = |why: &str| {
        Error::new(
            ErrorCode::InvalidNamespace,
            format!("Invalid namespace specified '{}': {why}", ns.full()),
        )
    };
    if ns.coll.is_empty() {
        return Err(invalid("collection name is empty"));
    }
    if ns.coll.contains('\0') {
        return Err(invalid("collection name contains a null character"));
    }
    if ns.coll.contains('$') {
        return Err(invalid("collection name contains '$'"));
    }
    if ns.coll.starts_with('.') || ns.coll.ends_with('.') {
        return Err(invalid("collection name starts or ends with '.'"));
    }
    if ns.full().len() > NAMESPACE_LEN_MAX {
        return Err(Error::new(
            ErrorCode::InvalidNamespace,
            format!(
                "Fully qualified namespace is too long. Namespace: {} Max: {NAMESPACE_LEN_MAX}",
                ns.full()
            ),
        ));
    }
    Ok(())
}

/// Refuses user writes to `system.*` collections, as mongod does.
pub(crate) fn check_writable(ns: &Namespace) -> Result<(), Error> {
    if ns.coll.starts_with("system.") {
        return Err(Error::new(
            ErrorCode::InvalidNamespace,
            format!("Invalid namespace specified '{}'", ns.full()),
        ));
    }
    Ok(())
}

/// Fails with MongoDB's 40415 for any field not in `allowed` (nor a generic argument).
pub(crate) fn check_fields(request: &Request<'_>, allowed: &[&str]) -> Result<(), Error> {
    for element in request.body.iter_elements() {
        let element = element.map_err(|e| Error::new(ErrorCode::InvalidBson, e.to_string()))?;
        let key = element.key().as_str();
        if key == request.name || allowed.contains(&key) || GENERIC_ARGS.contains(&key) {
            continue;
        }
        return Err(Error::new(
            ErrorCode::Location(40415),
            format!("BSON field '{}.{key}' is an unknown field.", request.name),
        ));
    }
    Ok(())
}

/// An optional integer option: int, long, or a double with no fraction.
pub(crate) fn opt_i64(request: &Request<'_>, key: &str) -> Result<Option<i64>, Error> {
    match field(request, key)? {
        None => Ok(None),
        Some(RawBsonRef::Int32(v)) => Ok(Some(i64::from(v))),
        Some(RawBsonRef::Int64(v)) => Ok(Some(v)),
        Some(RawBsonRef::Double(v)) if v.fract() == 0.0 && v.abs() < 9.2e18 => Ok(Some(v as i64)),
        Some(value) => Err(wrong_type(request, key, value, "long")),
    }
}

/// An optional boolean option (numbers count as booleans, as in mongod).
pub(crate) fn opt_bool(request: &Request<'_>, key: &str) -> Result<Option<bool>, Error> {
    match field(request, key)? {
        None => Ok(None),
        Some(RawBsonRef::Boolean(v)) => Ok(Some(v)),
        Some(RawBsonRef::Int32(v)) => Ok(Some(v != 0)),
        Some(RawBsonRef::Int64(v)) => Ok(Some(v != 0)),
        Some(RawBsonRef::Double(v)) => Ok(Some(v != 0.0)),
        Some(value) => Err(wrong_type(request, key, value, "bool")),
    }
}

/// An optional document option.
pub(crate) fn opt_doc<'a>(
    request: &Request<'a>,
    key: &str,
) -> Result<Option<&'a RawDocument>, Error> {
    match field(request, key)? {
        None => Ok(None),
        Some(RawBsonRef::Document(doc)) => Ok(Some(doc)),
        Some(value) => Err(wrong_type(request, key, value, "object")),
    }
}

/// `bypassDocumentValidation` of a write command: whether its writer stores documents
/// without checking the collection's validator (authorization asked for the privilege).
pub(crate) fn bypass_validation(request: &Request<'_>) -> Result<bool, Error> {
    Ok(opt_bool(request, "bypassDocumentValidation")?.unwrap_or(false))
}

/// An optional array option.
pub(crate) fn opt_array<'a>(
    request: &Request<'a>,
    key: &str,
) -> Result<Option<&'a RawArray>, Error> {
    match field(request, key)? {
        None => Ok(None),
        Some(RawBsonRef::Array(array)) => Ok(Some(array)),
        Some(value) => Err(wrong_type(request, key, value, "array")),
    }
}

/// An optional string option.
pub(crate) fn opt_str<'a>(request: &Request<'a>, key: &str) -> Result<Option<&'a str>, Error> {
    match field(request, key)? {
        None => Ok(None),
        Some(RawBsonRef::String(s)) => Ok(Some(s)),
        Some(value) => Err(wrong_type(request, key, value, "string")),
    }
}
