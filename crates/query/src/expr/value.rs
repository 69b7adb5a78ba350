//! Values in expression evaluation: aggregation field paths, truthiness, order and numbers.

use super::Value;
use bson::{Bson, RawBson};
use bson_canonical::decimal::{self, Decimal, Rounding};
use std::cmp::Ordering;

/// Follows an aggregation field path: through documents by name and through
/// arrays element by element, collecting an array (elements where the path is
/// missing are dropped; numeric components are field names, never positions).
pub(crate) fn walk(value: &Bson, path: &[String]) -> Value {
    let Some((first, rest)) = path.split_first() else {
        return Some(value.clone());
    };
    match value {
        Bson::Document(doc) => walk(doc.get(first)?, rest),
        Bson::Array(items) => Some(Bson::Array(
            items
                .iter()
                .filter(|item| matches!(item, Bson::Document(_) | Bson::Array(_)))
                .filter_map(|item| walk(item, path))
                .collect(),
        )),
        _ => None,
    }
}

/// Aggregation truthiness: false, null, missing, undefined and numeric zero are false.
pub(crate) fn truthy(value: &Value) -> bool {
    match value {
        None | Some(Bson::Null | Bson::Undefined) => false,
        Some(Bson::Boolean(b)) => *b,
        Some(Bson::Int32(v)) => *v != 0,
        Some(Bson::Int64(v)) => *v != 0,
        Some(Bson::Double(v)) => *v != 0.0,
        // A decimal NaN is true, as a double NaN is.
        Some(Bson::Decimal128(d)) => !Decimal::decode(*d).is_zero(),
        Some(_) => true,
    }
}

/// The raw form of a tree value, for the canonical comparison.
pub(crate) fn to_raw(value: &Bson) -> RawBson {
    RawBson::try_from(value.clone()).unwrap_or(RawBson::Null)
}

/// MongoDB's order over expression values; missing sorts below everything.
pub(crate) fn compare_bson(a: &Value, b: &Value) -> Ordering {
    match (a, b) {
        (None, None) => Ordering::Equal,
        (None, Some(_)) => Ordering::Less,
        (Some(_), None) => Ordering::Greater,
        (Some(a), Some(b)) => {
            bson_canonical::compare_values(to_raw(a).as_raw_bson_ref(), to_raw(b).as_raw_bson_ref())
        }
    }
}

/// MongoDB's type name of an expression value ("missing" for none).
pub(crate) fn type_name(value: &Value) -> &'static str {
    let Some(value) = value else {
        return "missing";
    };
    let raw = to_raw(value);
    crate::filter::types::type_name(crate::filter::types::type_code(&raw.as_raw_bson_ref()))
}

/// A number in arithmetic.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) enum Number {
    Int(i32),
    Long(i64),
    Double(f64),
    Decimal(Decimal),
}

impl Number {
    pub(crate) fn of(value: &Bson) -> Option<Number> {
        match value {
            Bson::Int32(v) => Some(Number::Int(*v)),
            Bson::Int64(v) => Some(Number::Long(*v)),
            Bson::Double(v) => Some(Number::Double(*v)),
            Bson::Decimal128(d) => Some(Number::Decimal(Decimal::decode(*d))),
            _ => None,
        }
    }

    /// The nearest double (MongoDB's `coerceToDouble`).
    pub(crate) fn to_f64(self) -> f64 {
        match self {
            Number::Int(v) => f64::from(v),
            Number::Long(v) => v as f64,
            Number::Double(v) => v,
            Number::Decimal(d) => d.to_f64(),
        }
    }

    /// The value as a decimal (MongoDB's `coerceToDecimal`: integers exactly, a
    /// double to 15 significant digits).
    pub(crate) fn to_decimal(self) -> Decimal {
        match self {
            Number::Int(v) => Decimal::from_i64(i64::from(v)),
            Number::Long(v) => Decimal::from_i64(v),
            Number::Double(v) => Decimal::from_f64(v),
            Number::Decimal(d) => d,
        }
    }

    pub(crate) fn to_bson(self) -> Bson {
        match self {
            Number::Int(v) => Bson::Int32(v),
            Number::Long(v) => Bson::Int64(v),
            Number::Double(v) => Bson::Double(v),
            Number::Decimal(d) => Bson::Decimal128(d.encode()),
        }
    }

    /// Integer value of an int or long.
    pub(crate) fn as_i64(self) -> Option<i64> {
        match self {
            Number::Int(v) => Some(i64::from(v)),
            Number::Long(v) => Some(v),
            Number::Double(_) | Number::Decimal(_) => None,
        }
    }

    /// The value as an `i64` when it is whole and in range, whatever its type.
    pub(crate) fn whole_i64(self) -> Option<i64> {
        match self {
            Number::Int(v) => Some(i64::from(v)),
            Number::Long(v) => Some(v),
            Number::Double(d) => crate::value::whole_f64_to_i64(d),
            Number::Decimal(d) => d
                .to_i64(Rounding::TowardZero)
                .filter(|&v| decimal::compare(Decimal::from_i64(v), d) == Some(Ordering::Equal)),
        }
    }

    /// Whether the value is a whole number that fits an int32 (MongoDB's `integral()`).
    pub(crate) fn integral(self) -> bool {
        self.whole_i64().is_some_and(|v| i32::try_from(v).is_ok())
    }

    /// The narrowest of int and long that holds `v`.
    pub(crate) fn integer(v: i64) -> Number {
        i32::try_from(v).map_or(Number::Long(v), Number::Int)
    }
}

/// A value as text for `$toString`, `$concat`'s coercions and `$toLower`.
pub(crate) fn to_text(value: &Bson) -> Option<String> {
    Some(match value {
        Bson::String(s) | Bson::Symbol(s) => s.clone(),
        Bson::Int32(v) => v.to_string(),
        Bson::Int64(v) => v.to_string(),
        Bson::Double(v) => format_double(*v),
        Bson::Decimal128(d) => d.to_string(),
        Bson::Boolean(b) => b.to_string(),
        Bson::ObjectId(oid) => oid.to_hex(),
        Bson::DateTime(dt) => super::date_text::format_date(
            super::date_text::DEFAULT_FORMAT,
            dt.timestamp_millis(),
            super::civil::Zone::UTC,
        )
        .ok()?,
        _ => return None,
    })
}

/// MongoDB's text for a double: integral values without a fraction.
pub(crate) fn format_double(v: f64) -> String {
    if v.is_nan() {
        "NaN".to_owned()
    } else if v.is_infinite() {
        if v > 0.0 { "Infinity" } else { "-Infinity" }.to_owned()
    } else if v.fract() == 0.0 && v.abs() < 1e15 {
        format!("{v:.0}")
    } else {
        v.to_string()
    }
}
