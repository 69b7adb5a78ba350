//! Small helpers over raw BSON values shared by filters, expressions and sort.

use bson::{RawBson, RawBsonRef};

/// The value as an `i64` when it is a number with no fractional part that fits.
pub(crate) fn as_whole_i64(value: RawBsonRef<'_>) -> Option<i64> {
    match value {
        RawBsonRef::Int32(v) => Some(i64::from(v)),
        RawBsonRef::Int64(v) => Some(v),
        RawBsonRef::Double(v) => whole_f64_to_i64(v),
        RawBsonRef::Decimal128(d) => d.to_string().parse::<f64>().ok().and_then(whole_f64_to_i64),
        _ => None,
    }
}

/// A double with no fractional part inside the `i64` range, as an `i64`.
pub(crate) fn whole_f64_to_i64(v: f64) -> Option<i64> {
    // 2^63 as a double; every double strictly below it and at or above -2^63
    // converts exactly.
    const LIMIT: f64 = 9_223_372_036_854_775_808.0;
    if v.is_finite() && v.fract() == 0.0 && (-LIMIT..LIMIT).contains(&v) {
        Some(v as i64)
    } else {
        None
    }
}

/// The value as an `f64` when it is a number (Decimal128 through its text).
pub(crate) fn as_f64(value: RawBsonRef<'_>) -> Option<f64> {
    match value {
        RawBsonRef::Int32(v) => Some(f64::from(v)),
        RawBsonRef::Int64(v) => Some(v as f64),
        RawBsonRef::Double(v) => Some(v),
        RawBsonRef::Decimal128(d) => decimal_to_f64(&d.to_string()),
        _ => None,
    }
}

fn decimal_to_f64(text: &str) -> Option<f64> {
    match text {
        "NaN" | "-NaN" => Some(f64::NAN),
        "Infinity" => Some(f64::INFINITY),
        "-Infinity" => Some(f64::NEG_INFINITY),
        _ => text.parse().ok(),
    }
}

/// Whether the value is a number that is NaN.
pub(crate) fn is_nan(value: RawBsonRef<'_>) -> bool {
    match value {
        RawBsonRef::Double(v) => v.is_nan(),
        RawBsonRef::Decimal128(d) => d.to_string().ends_with("NaN"),
        _ => false,
    }
}

/// MongoDB's truthiness of a filter argument (`$exists: 0` is false).
pub(crate) fn true_value(value: RawBsonRef<'_>) -> bool {
    match value {
        RawBsonRef::Boolean(b) => b,
        RawBsonRef::Null | RawBsonRef::Undefined => false,
        RawBsonRef::Int32(_)
        | RawBsonRef::Int64(_)
        | RawBsonRef::Double(_)
        | RawBsonRef::Decimal128(_) => as_f64(value).is_some_and(|v| v != 0.0),
        _ => true,
    }
}

/// An owned copy of a borrowed value.
pub(crate) fn owned(value: RawBsonRef<'_>) -> RawBson {
    RawBson::from(value)
}

/// Whether a `$`-prefixed field name may appear in a field path: the DBRef names
/// `$id`, `$ref` and `$db` may, as in MongoDB's `FieldPath::uassertValidFieldName`
/// (so `$lookup` joins on `author.$id` and `$group` keys on `$author.$id`).
pub(crate) fn dollar_name_allowed(name: &str) -> bool {
    matches!(name, "$id" | "$ref" | "$db")
}
