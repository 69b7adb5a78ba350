//! `$type` selectors: BSON type names, numbers and the "number" alias.

use crate::error::QueryError;
use bson::RawBsonRef;

/// What one `$type` argument selects.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum TypeSelector {
    /// One BSON type, by its type number (MinKey -1, MaxKey 127).
    Code(i32),
    /// The "number" alias: double, int, long and decimal.
    Number,
}

const NAMES: &[(&str, i32)] = &[
    ("double", 1),
    ("string", 2),
    ("object", 3),
    ("array", 4),
    ("binData", 5),
    ("undefined", 6),
    ("objectId", 7),
    ("bool", 8),
    ("date", 9),
    ("null", 10),
    ("regex", 11),
    ("dbPointer", 12),
    ("javascript", 13),
    ("symbol", 14),
    ("javascriptWithScope", 15),
    ("int", 16),
    ("timestamp", 17),
    ("long", 18),
    ("decimal", 19),
    ("minKey", -1),
    ("maxKey", 127),
];

/// The BSON type number a type name stands for ("double", "objectId", ...).
pub(crate) fn code_of_name(name: &str) -> Option<i32> {
    NAMES
        .iter()
        .find(|(n, _)| *n == name)
        .map(|(_, code)| *code)
}

/// Whether `code` is a BSON type number.
pub(crate) fn is_type_code(code: i32) -> bool {
    NAMES.iter().any(|(_, c)| *c == code)
}

/// The BSON type number of a value.
pub(crate) fn type_code(value: &RawBsonRef<'_>) -> i32 {
    match value {
        RawBsonRef::Double(_) => 1,
        RawBsonRef::String(_) => 2,
        RawBsonRef::Document(_) => 3,
        RawBsonRef::Array(_) => 4,
        RawBsonRef::Binary(_) => 5,
        RawBsonRef::Undefined => 6,
        RawBsonRef::ObjectId(_) => 7,
        RawBsonRef::Boolean(_) => 8,
        RawBsonRef::DateTime(_) => 9,
        RawBsonRef::Null => 10,
        RawBsonRef::RegularExpression(_) => 11,
        RawBsonRef::DbPointer(_) => 12,
        RawBsonRef::JavaScriptCode(_) => 13,
        RawBsonRef::Symbol(_) => 14,
        RawBsonRef::JavaScriptCodeWithScope(_) => 15,
        RawBsonRef::Int32(_) => 16,
        RawBsonRef::Timestamp(_) => 17,
        RawBsonRef::Int64(_) => 18,
        RawBsonRef::Decimal128(_) => 19,
        RawBsonRef::MinKey => -1,
        RawBsonRef::MaxKey => 127,
    }
}

/// MongoDB's name for a BSON type number ("missing" for none).
pub(crate) fn type_name(code: i32) -> &'static str {
    NAMES
        .iter()
        .find(|(_, c)| *c == code)
        .map_or("missing", |(name, _)| name)
}

impl TypeSelector {
    /// Whether a value has the selected type.
    pub(crate) fn matches(self, value: &RawBsonRef<'_>) -> bool {
        match self {
            TypeSelector::Code(code) => type_code(value) == code,
            TypeSelector::Number => matches!(type_code(value), 1 | 16 | 18 | 19),
        }
    }

    /// Parses one `$type` argument: a name, "number" or a type number.
    pub(crate) fn parse(value: RawBsonRef<'_>) -> Result<TypeSelector, QueryError> {
        match value {
            RawBsonRef::String(name) => {
                if name == "number" {
                    return Ok(TypeSelector::Number);
                }
                NAMES
                    .iter()
                    .find(|(n, _)| *n == name)
                    .map(|(_, code)| TypeSelector::Code(*code))
                    .ok_or_else(|| {
                        QueryError::bad_value(format!("Unknown type name alias: {name}"))
                    })
            }
            RawBsonRef::Int32(_)
            | RawBsonRef::Int64(_)
            | RawBsonRef::Double(_)
            | RawBsonRef::Decimal128(_) => {
                let code = crate::value::as_whole_i64(value).ok_or_else(|| {
                    QueryError::bad_value("Invalid numerical type code: not a whole number")
                })?;
                let known = NAMES.iter().any(|(_, c)| i64::from(*c) == code);
                match i32::try_from(code) {
                    Ok(code) if known => Ok(TypeSelector::Code(code)),
                    _ => Err(QueryError::bad_value(format!(
                        "Invalid numerical type code: {code}"
                    ))),
                }
            }
            _ => Err(QueryError::TypeMismatch(
                "type must be represented as a number or a string".to_owned(),
            )),
        }
    }
}
