//! Value helpers: conversion from raw BSON, MongoDB's type names, canonical
//! comparison and the numeric arithmetic of `$inc`, `$mul` and `$bit`.

use std::cmp::Ordering;

use bson::{Bson, RawBson, RawBsonRef};

use crate::error::UpdateError;
use bson_canonical::decimal::{self, Decimal};

/// A raw value as a tree value.
pub(crate) fn to_bson(value: RawBsonRef<'_>) -> Result<Bson, UpdateError> {
    Bson::try_from(value).map_err(|e| UpdateError::failed_to_parse(e.to_string()))
}

/// MongoDB's name of the value's type (`$type` names).
pub(crate) fn type_name(value: &Bson) -> &'static str {
    match value {
        Bson::Double(_) => "double",
        Bson::String(_) => "string",
        Bson::Document(_) => "object",
        Bson::Array(_) => "array",
        Bson::Binary(_) => "binData",
        Bson::Undefined => "undefined",
        Bson::ObjectId(_) => "objectId",
        Bson::Boolean(_) => "bool",
        Bson::DateTime(_) => "date",
        Bson::Null => "null",
        Bson::RegularExpression(_) => "regex",
        Bson::DbPointer(_) => "dbPointer",
        Bson::JavaScriptCode(_) => "javascript",
        Bson::Symbol(_) => "symbol",
        Bson::JavaScriptCodeWithScope(_) => "javascriptWithScope",
        Bson::Int32(_) => "int",
        Bson::Timestamp(_) => "timestamp",
        Bson::Int64(_) => "long",
        Bson::Decimal128(_) => "decimal",
        Bson::MinKey => "minKey",
        Bson::MaxKey => "maxKey",
    }
}

/// Whether the value is one of the four numeric types.
pub(crate) fn is_number(value: &Bson) -> bool {
    matches!(
        value,
        Bson::Int32(_) | Bson::Int64(_) | Bson::Double(_) | Bson::Decimal128(_)
    )
}

/// The value as an `i64` when it is a whole number that fits.
pub(crate) fn as_whole(value: &Bson) -> Option<i64> {
    const LIMIT: f64 = 9_223_372_036_854_775_808.0;
    match value {
        Bson::Int32(v) => Some(i64::from(*v)),
        Bson::Int64(v) => Some(*v),
        Bson::Double(v) if v.is_finite() && v.fract() == 0.0 && (-LIMIT..LIMIT).contains(v) => {
            Some(*v as i64)
        }
        _ => None,
    }
}

/// MongoDB's canonical order of two values (the order of `$min`, `$max`, `$sort`).
pub(crate) fn compare(a: &Bson, b: &Bson) -> Ordering {
    match (RawBson::try_from(a.clone()), RawBson::try_from(b.clone())) {
        (Ok(x), Ok(y)) => bson_canonical::compare_values(x.as_raw_bson_ref(), y.as_raw_bson_ref()),
        // Only values with interior NULs in keys fail to convert; they came
        // from valid BSON, so treat them by type only.
        _ => Ordering::Equal,
    }
}

/// Whether two values are equal in MongoDB's sense (`1 == 1.0`).
pub(crate) fn equal(a: &Bson, b: &Bson) -> bool {
    compare(a, b) == Ordering::Equal
}

/// The arithmetic of `$inc` and `$mul`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Arith {
    Add,
    Multiply,
}

/// `a op b` with MongoDB's type promotion: int32 widens to int64 on overflow,
/// int64 overflow is `None`, a Decimal128 on either side gives a Decimal128
/// (see [`bson_canonical::decimal`]), otherwise a double operand gives a double.
/// `a` is the stored value and `b` the operand; MongoDB computes `b op a`.
pub(crate) fn arith(op: Arith, a: &Bson, b: &Bson) -> Result<Option<Bson>, UpdateError> {
    Ok(match (a, b) {
        (Bson::Int32(x), Bson::Int32(y)) => {
            let (x, y) = (i64::from(*x), i64::from(*y));
            let wide = match op {
                Arith::Add => x + y,
                Arith::Multiply => x * y,
            };
            Some(i32::try_from(wide).map_or(Bson::Int64(wide), Bson::Int32))
        }
        (Bson::Decimal128(_), _) | (_, Bson::Decimal128(_)) => {
            let (Some(x), Some(y)) = (as_decimal(a), as_decimal(b)) else {
                return Ok(None);
            };
            let result = match op {
                Arith::Add => decimal::add(y, x),
                Arith::Multiply => decimal::multiply(y, x),
            };
            Some(Bson::Decimal128(result.encode()))
        }
        (Bson::Double(_), _) | (_, Bson::Double(_)) => {
            let (Some(x), Some(y)) = (as_f64(a), as_f64(b)) else {
                return Ok(None);
            };
            Some(Bson::Double(match op {
                Arith::Add => x + y,
                Arith::Multiply => x * y,
            }))
        }
        _ => {
            let (Some(x), Some(y)) = (as_i64(a), as_i64(b)) else {
                return Ok(None);
            };
            let result = match op {
                Arith::Add => x.checked_add(y),
                Arith::Multiply => x.checked_mul(y),
            };
            result.map(Bson::Int64)
        }
    })
}

fn as_f64(value: &Bson) -> Option<f64> {
    match value {
        Bson::Int32(v) => Some(f64::from(*v)),
        Bson::Int64(v) => Some(*v as f64),
        Bson::Double(v) => Some(*v),
        _ => None,
    }
}

fn as_i64(value: &Bson) -> Option<i64> {
    match value {
        Bson::Int32(v) => Some(i64::from(*v)),
        Bson::Int64(v) => Some(*v),
        _ => None,
    }
}

/// A numeric value as MongoDB converts it for decimal arithmetic.
fn as_decimal(value: &Bson) -> Option<Decimal> {
    match value {
        Bson::Int32(v) => Some(Decimal::from_i64(i64::from(*v))),
        Bson::Int64(v) => Some(Decimal::from_i64(*v)),
        Bson::Double(v) => Some(Decimal::from_f64(*v)),
        Bson::Decimal128(v) => Some(Decimal::decode(*v)),
        _ => None,
    }
}

/// What `$mul` stores in a missing field: the operand times int32 0, so the
/// operand's type (and a double's or decimal's sign and exponent) carries over,
/// as in MongoDB's `ArithmeticNode::setValueForNewElement`.
pub(crate) fn zero_like(value: &Bson) -> Bson {
    match arith(Arith::Multiply, &Bson::Int32(0), value) {
        Ok(Some(zero)) => zero,
        _ => Bson::Int32(0),
    }
}

/// Whether an arithmetic result leaves the stored value as it is: same type and
/// equal value, NaN never (MongoDB's `SafeNum::isIdentical`, under which `$inc`
/// by `NumberDecimal("0.0")` keeps `NumberDecimal("1")` rather than `1.0`).
pub(crate) fn identical(current: &Bson, result: &Bson) -> bool {
    match (current, result) {
        (Bson::Int32(a), Bson::Int32(b)) => a == b,
        (Bson::Int64(a), Bson::Int64(b)) => a == b,
        (Bson::Double(a), Bson::Double(b)) => a == b,
        (Bson::Decimal128(a), Bson::Decimal128(b)) => {
            !Decimal::decode(*a).is_nan() && !Decimal::decode(*b).is_nan() && equal(current, result)
        }
        _ => false,
    }
}
