//! Argument readers the read commands share, with mongod's messages: `safeInt64` numbers and
//! their range checks, `maxTimeMS`, `hint`, `collation`, the `cursor` option, required fields.

use super::Request;
use super::args::bson_type_name;
use crate::error::{Error, ErrorCode};
use crate::store::Namespace;
use bson::RawDocument;
use bson::raw::{RawArray, RawBsonRef};
use query::Variables;

pub(crate) use crate::plan::Hint;

/// The raw value of `key`, if present.
pub(crate) fn field<'a>(request: &Request<'a>, key: &str) -> Result<Option<RawBsonRef<'a>>, Error> {
    request.field(key)
}

use super::args::wrong_type;

fn missing(request: &Request<'_>, key: &str) -> Error {
    Error::new(
        ErrorCode::Location(40414),
        format!(
            "BSON field '{}.{key}' is missing but a required field",
            request.name
        ),
    )
}

/// A number as mongod's `safeInt64` reads it: int, long, double (truncated toward zero) or
/// decimal; `None` for anything else.
pub(crate) fn number_i64(value: RawBsonRef<'_>) -> Option<Result<i64, Error>> {
    let float = match value {
        RawBsonRef::Int32(v) => return Some(Ok(i64::from(v))),
        RawBsonRef::Int64(v) => return Some(Ok(v)),
        RawBsonRef::Double(v) => v,
        RawBsonRef::Decimal128(v) => v.to_string().parse::<f64>().unwrap_or(f64::NAN),
        _ => return None,
    };
    if !float.is_finite() {
        let message = "Unable to coerce NaN/Inf to integral type";
        return Some(Err(Error::new(ErrorCode::BadValue, message)));
    }
    let truncated = float.trunc();
    // 2^63 is exactly representable; every double below it in magnitude fits in an i64.
    const BOUND: f64 = 9_223_372_036_854_775_808.0;
    if !(-BOUND..BOUND).contains(&truncated) {
        let message = "Out of bounds coercing to integral value";
        return Some(Err(Error::new(ErrorCode::BadValue, message)));
    }
    // In range (checked above) and integral: the cast is exact.
    Some(Ok(truncated as i64))
}

/// An optional `safeInt64` option.
pub(crate) fn safe_i64(request: &Request<'_>, key: &str) -> Result<Option<i64>, Error> {
    let Some(value) = field(request, key)? else {
        return Ok(None);
    };
    match number_i64(value) {
        Some(result) => result.map(Some),
        None => Err(Error::new(
            ErrorCode::TypeMismatch,
            format!(
                "BSON field '{}.{key}' is the wrong type '{}', expected types \
                 '[long, int, decimal, double']",
                request.name,
                bson_type_name(value)
            ),
        )),
    }
}

/// mongod's IDL check `validator: {gte: 0}` (error 51024).
pub(crate) fn check_non_negative(key: &str, value: i64) -> Result<u64, Error> {
    u64::try_from(value).map_err(|_| {
        Error::new(
            ErrorCode::Location(51024),
            format!("BSON field '{key}' value must be >= 0, actual value '{value}'"),
        )
    })
}

/// An optional `safeInt64` option that must not be negative.
pub(crate) fn non_negative(request: &Request<'_>, key: &str) -> Result<Option<u64>, Error> {
    safe_i64(request, key)?
        .map(|value| check_non_negative(key, value))
        .transpose()
}

/// A count as a `usize` (counts past the address space are as good as unbounded).
pub(crate) fn to_usize(value: u64) -> usize {
    usize::try_from(value).unwrap_or(usize::MAX)
}

/// `maxTimeMS` in milliseconds; `None` when absent or 0 (no limit).
pub(crate) fn max_time_ms(request: &Request<'_>) -> Result<Option<i64>, Error> {
    let Some(value) = field(request, "maxTimeMS")? else {
        return Ok(None);
    };
    let bad = |message: &str| Error::new(ErrorCode::BadValue, message);
    let Some(number) = number_i64(value) else {
        return Err(bad("maxTimeMS must be a number"));
    };
    if let RawBsonRef::Double(v) = value
        && v.is_finite()
        && v.fract() != 0.0
        && v >= 0.0
    {
        return Err(bad("maxTimeMS has non-integral value"));
    }
    let number = number.map_err(|_| bad("maxTimeMS is out of range"))?;
    check_non_negative("maxTimeMS", number)?;
    if number > i64::from(i32::MAX) {
        return Err(bad("maxTimeMS is out of range"));
    }
    Ok((number > 0).then_some(number))
}

/// An object option where null or `{}` count as absent (mongod's
/// `object_owned_nonempty_serialize`).
pub(crate) fn object_or_null<'a>(
    request: &Request<'a>,
    key: &str,
) -> Result<Option<&'a RawDocument>, Error> {
    match field(request, key)? {
        None | Some(RawBsonRef::Null) => Ok(None),
        Some(RawBsonRef::Document(doc)) if doc.is_empty() => Ok(None),
        Some(RawBsonRef::Document(doc)) => Ok(Some(doc)),
        Some(value) => Err(wrong_type(request, key, value, "object")),
    }
}

/// A required string field.
pub(crate) fn required_str<'a>(request: &Request<'a>, key: &str) -> Result<&'a str, Error> {
    match field(request, key)? {
        Some(RawBsonRef::String(value)) => Ok(value),
        Some(value) => Err(wrong_type(request, key, value, "string")),
        None => Err(missing(request, key)),
    }
}

/// A required array field.
pub(crate) fn required_array<'a>(request: &Request<'a>, key: &str) -> Result<&'a RawArray, Error> {
    match field(request, key)? {
        Some(RawBsonRef::Array(value)) => Ok(value),
        Some(value) => Err(wrong_type(request, key, value, "array")),
        None => Err(missing(request, key)),
    }
}

/// The collection a cursor command (getMore, killCursors) names: any non-empty string,
/// including the `$cmd.listCollections` pseudo-collections of listing cursors.
pub(crate) fn cursor_namespace(request: &Request<'_>, key: &str) -> Result<Namespace, Error> {
    let name = match field(request, key)? {
        // As mongod's namespace parsing: the command's own field names the collection.
        Some(value) if key == request.name && !matches!(value, RawBsonRef::String(_)) => {
            let message = format!("collection name has invalid type {}", bson_type_name(value));
            return Err(Error::new(ErrorCode::InvalidNamespace, message));
        }
        _ => required_str(request, key)?,
    };
    if name.is_empty() {
        let message = "Collection names cannot be empty";
        return Err(Error::new(ErrorCode::InvalidNamespace, message));
    }
    Ok(Namespace::new(request.db, name))
}

/// The `hint` option: by name or key pattern (resolved against the collection by the
/// planner), or `$natural`.
pub(crate) fn hint(request: &Request<'_>) -> Result<Hint, Error> {
    match field(request, "hint")? {
        None => Ok(Hint::None),
        Some(RawBsonRef::String("_id_")) => Ok(Hint::Id),
        Some(RawBsonRef::String(name)) => Ok(Hint::Name(name.to_owned())),
        Some(RawBsonRef::Document(spec)) => {
            let mut elements = spec.iter_elements();
            let Some(first) = elements.next() else {
                return Ok(Hint::None);
            };
            let first = first.map_err(|e| Error::new(ErrorCode::InvalidBson, e.to_string()))?;
            let value = first.value().ok().and_then(number_i64).and_then(Result::ok);
            match (first.key().as_str(), value, elements.next().is_none()) {
                ("$natural", Some(1), true) => Ok(Hint::Natural(true)),
                ("$natural", Some(-1), true) => Ok(Hint::Natural(false)),
                ("$natural", _, _) => Err(Error::new(
                    ErrorCode::BadValue,
                    "$natural hint must be 1 or -1 and the only field of the hint",
                )),
                ("_id", Some(1), true) => Ok(Hint::Id),
                _ => Ok(Hint::Pattern(spec.to_owned())),
            }
        }
        Some(_) => Err(Error::new(
            ErrorCode::FailedToParse,
            "Hint must be a string or an object",
        )),
    }
}

/// Accepts only the simple collation (absent, `{}` or `{locale: "simple"}`).
pub(crate) fn check_collation(request: &Request<'_>) -> Result<(), Error> {
    let Some(spec) = object_or_null(request, "collation")? else {
        return Ok(());
    };
    let simple = spec.iter_elements().count() == 1
        && matches!(spec.get("locale"), Ok(Some(RawBsonRef::String("simple"))));
    if simple {
        return Ok(());
    }
    Err(Error::new(
        ErrorCode::NotImplemented,
        "collations other than {locale: \"simple\"} are not supported",
    ))
}

/// The command's variables: its `let` document evaluated once, before any document is
/// read (MongoDB's `seedVariablesWithLetParameters`), and `$$NOW` fixed at `now_ms`.
pub(crate) fn variables(request: &Request<'_>, now_ms: i64) -> Result<Variables, Error> {
    let now = bson::DateTime::from_millis(now_ms);
    Ok(match object_or_null(request, "let")? {
        Some(spec) => Variables::from_let_at(spec, now)?,
        None => Variables::at(now),
    })
}

/// Refuses option `key` when it is true.
pub(crate) fn refuse_true(request: &Request<'_>, key: &str) -> Result<(), Error> {
    if super::args::opt_bool(request, key)? == Some(true) {
        let message = format!("{} with {key}: true is not supported", request.name);
        return Err(Error::new(ErrorCode::NotImplemented, message));
    }
    Ok(())
}

/// The `cursor: {batchSize}` option of aggregate, listCollections and listIndexes:
/// `Ok(None)` when the option is absent, `Ok(Some(batch_size))` otherwise.
pub(crate) fn cursor_option(request: &Request<'_>) -> Result<Option<Option<u64>>, Error> {
    let spec = match field(request, "cursor")? {
        None => return Ok(None),
        Some(RawBsonRef::Document(spec)) => spec,
        Some(value) => return Err(wrong_type(request, "cursor", value, "object")),
    };
    let mut batch_size = None;
    for element in spec.iter_elements() {
        let element = element.map_err(|e| Error::new(ErrorCode::InvalidBson, e.to_string()))?;
        let key = element.key().as_str();
        if key != "batchSize" {
            return Err(Error::new(
                ErrorCode::Location(40415),
                format!("BSON field 'cursor.{key}' is an unknown field."),
            ));
        }
        let value = element
            .value()
            .map_err(|e| Error::new(ErrorCode::InvalidBson, e.to_string()))?;
        let number = number_i64(value).ok_or_else(|| {
            Error::new(
                ErrorCode::TypeMismatch,
                format!(
                    "BSON field 'cursor.batchSize' is the wrong type '{}', expected types \
                     '[long, int, decimal, double']",
                    bson_type_name(value)
                ),
            )
        })??;
        batch_size = Some(check_non_negative("batchSize", number)?);
    }
    Ok(Some(batch_size))
}
