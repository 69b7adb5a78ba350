//! `$convert`, its shorthands (`$toBool`, `$toDate`, `$toDecimal`, `$toDouble`,
//! `$toInt`, `$toLong`, `$toObjectId`, `$toString`) and `$isNumber`.
//!
//! The conversions are MongoDB 7.0's (manual, "$convert", "Behavior"): to
//! double, string, objectId, bool, date, int, long and decimal. A conversion
//! that cannot be done fails with ConversionFailure (241), which `onError`
//! replaces; an invalid `to` is a parse-style error `onError` does not catch.
//! A null or missing `input` gives `onNull` (null by default), before `to` is
//! looked at when `to` is null.
//!
//! Strings parse as base-10 numbers only: no surrounding whitespace, no hex
//! ("0x1A"), and for int and long no fraction or exponent (manual, "$toInt",
//! "$toDouble"). A value that overflows the target fails.

use super::civil::{Zone, coerce_date};
use super::date::{Args, named_fields};
use super::date_text::{DEFAULT_FORMAT, format_date, parse_date};
use super::ops::nullish;
use super::value::{Number, format_double, to_text, truthy, type_name};
use super::{Expr, ParseCtx, Scope, Value};
use crate::error::QueryError;
use bson::{Bson, Decimal128, RawBsonRef};

type Result<T> = std::result::Result<T, QueryError>;

/// The shorthand operators and the type each converts to.
pub(super) const SHORTHANDS: &[(&str, i32)] = &[
    ("$toDouble", 1),
    ("$toString", 2),
    ("$toObjectId", 7),
    ("$toBool", 8),
    ("$toDate", 9),
    ("$toInt", 16),
    ("$toLong", 18),
    ("$toDecimal", 19),
];

/// `{$convert: {input, to, onError, onNull}}`.
pub(super) fn parse(arg: RawBsonRef<'_>, ctx: ParseCtx<'_>) -> Result<Expr> {
    let RawBsonRef::Document(doc) = arg else {
        return Err(QueryError::FailedToParse(format!(
            "$convert expects an object of named arguments but found: {}",
            crate::filter::types::type_name(crate::filter::types::type_code(&arg))
        )));
    };
    let args = named_fields(doc, ctx, |field| match field {
        "input" | "to" | "onError" | "onNull" => None,
        _ => Some(QueryError::FailedToParse(format!(
            "$convert found an unknown argument: {field}"
        ))),
    })?;
    for required in ["input", "to"] {
        if !args.iter().any(|(k, _)| k == required) {
            return Err(QueryError::FailedToParse(format!(
                "Missing '{required}' parameter to $convert"
            )));
        }
    }
    Ok(Expr::Named("$convert".to_owned(), args))
}

/// Evaluates `$convert`.
pub(super) fn named(args: &[(String, Expr)], scope: &mut Scope<'_>) -> Result<Value> {
    let args = Args::new(args);
    let to = args.eval("to", scope)?;
    let input = args.eval("input", scope)?;
    let target = if nullish(&to) {
        None
    } else {
        Some(target_type(&to)?)
    };
    if nullish(&input) {
        return if args.has("onNull") {
            args.eval("onNull", scope)
        } else {
            Ok(Some(Bson::Null))
        };
    }
    let Some(target) = target else {
        return Ok(Some(Bson::Null));
    };
    match convert(target, &input) {
        Ok(v) => Ok(Some(v)),
        Err(QueryError::ConversionFailure(_)) if args.has("onError") => args.eval("onError", scope),
        Err(e) => Err(e),
    }
}

/// A shorthand: null or missing gives null.
pub(super) fn shorthand(name: &str, value: Value) -> Result<Value> {
    if nullish(&value) {
        return Ok(Some(Bson::Null));
    }
    let target = SHORTHANDS
        .iter()
        .find(|(n, _)| *n == name)
        .map_or(0, |(_, code)| *code);
    convert(target, &value).map(Some)
}

/// `$isNumber`: whether the value is an int, long, double or decimal.
pub(super) fn is_number(value: &Value) -> Value {
    Some(Bson::Boolean(matches!(
        value,
        Some(Bson::Int32(_) | Bson::Int64(_) | Bson::Double(_) | Bson::Decimal128(_))
    )))
}

/// The BSON type code `to` names ("missing" is code 0, a type nothing converts to).
fn target_type(to: &Value) -> Result<i32> {
    match to {
        Some(Bson::String(name)) if name == "missing" => Ok(0),
        Some(Bson::String(name)) => crate::filter::types::code_of_name(name)
            .ok_or_else(|| QueryError::bad_value(format!("Unknown type name: {name}"))),
        Some(other) if Number::of(other).is_some() => {
            let code = crate::value::as_whole_i64(super::value::to_raw(other).as_raw_bson_ref())
                .ok_or_else(|| {
                    QueryError::FailedToParse(
                        "In $convert, numeric 'to' argument is not an integer".to_owned(),
                    )
                })?;
            i32::try_from(code)
                .ok()
                .filter(|c| crate::filter::types::is_type_code(*c))
                .ok_or_else(|| {
                    QueryError::FailedToParse(format!(
                        "In $convert, numeric value for 'to' does not correspond to a BSON type: \
                         {code}"
                    ))
                })
        }
        other => Err(QueryError::FailedToParse(format!(
            "$convert's 'to' argument must be a string or number, but is {}",
            type_name(other)
        ))),
    }
}

fn target_name(target: i32) -> &'static str {
    if target == 0 {
        "missing"
    } else {
        crate::filter::types::type_name(target)
    }
}

fn unsupported(value: &Value, target: i32) -> QueryError {
    QueryError::ConversionFailure(format!(
        "Unsupported conversion from {} to {} in $convert with no onError value",
        type_name(value),
        target_name(target)
    ))
}

fn failure(message: impl std::fmt::Display) -> QueryError {
    QueryError::ConversionFailure(format!("{message} in $convert with no onError value"))
}

fn overflow(shown: impl std::fmt::Display) -> QueryError {
    QueryError::ConversionFailure(format!(
        "Conversion would overflow target type in $convert with no onError value: {shown}"
    ))
}

/// Converts a present, non-null value to the type with code `target`.
fn convert(target: i32, value: &Value) -> Result<Bson> {
    let Some(v) = value else {
        return Err(unsupported(value, target));
    };
    Ok(match target {
        1 => Bson::Double(to_double(v).ok_or_else(|| unsupported(value, target))??),
        2 => Bson::String(to_string(v)?.ok_or_else(|| unsupported(value, target))?),
        7 => match v {
            Bson::ObjectId(oid) => Bson::ObjectId(*oid),
            Bson::String(s) => Bson::ObjectId(parse_object_id(s)?),
            _ => return Err(unsupported(value, target)),
        },
        8 => Bson::Boolean(truthy(value)),
        9 => Bson::DateTime(bson::DateTime::from_millis(
            to_date(v).ok_or_else(|| unsupported(value, target))??,
        )),
        16 => {
            let wide = to_integer(v, false).ok_or_else(|| unsupported(value, target))??;
            Bson::Int32(i32::try_from(wide).map_err(|_| overflow(wide))?)
        }
        18 => Bson::Int64(to_integer(v, true).ok_or_else(|| unsupported(value, target))??),
        19 => Bson::Decimal128(to_decimal(v).ok_or_else(|| unsupported(value, target))??),
        _ => return Err(unsupported(value, target)),
    })
}

/// Whether `text` is a base-10 number as MongoDB's parser reads it: a sign,
/// digits with at most one dot, and (when `fraction` is allowed) an exponent;
/// or NaN and infinity spelled out.
fn numeric_text(text: &str, fraction: bool) -> bool {
    let body = text.strip_prefix(['-', '+']).unwrap_or(text);
    if fraction
        && matches!(
            body.to_ascii_lowercase().as_str(),
            "nan" | "inf" | "infinity"
        )
    {
        return true;
    }
    let (mantissa, exponent) = match body.find(['e', 'E']) {
        Some(at) if fraction => (body.get(..at).unwrap_or(""), body.get(at + 1..)),
        _ => (body, None),
    };
    let mut dots = 0;
    let mut digits = 0;
    for c in mantissa.chars() {
        match c {
            '0'..='9' => digits += 1,
            '.' if fraction => dots += 1,
            _ => return false,
        }
    }
    let exponent_ok = exponent.is_none_or(|e| {
        let e = e.strip_prefix(['-', '+']).unwrap_or(e);
        !e.is_empty() && e.chars().all(|c| c.is_ascii_digit())
    });
    digits > 0 && dots <= 1 && exponent_ok
}

fn parse_failure(text: &str, why: &str) -> QueryError {
    failure(format!("Failed to parse number '{text}'")).with_detail(why)
}

trait Detail {
    fn with_detail(self, why: &str) -> QueryError;
}

impl Detail for QueryError {
    fn with_detail(self, why: &str) -> QueryError {
        match self {
            QueryError::ConversionFailure(m) => {
                QueryError::ConversionFailure(format!("{m}: {why}"))
            }
            other => other,
        }
    }
}

/// `Some(result)` when the type converts to double, `None` when it does not.
fn to_double(v: &Bson) -> Option<Result<f64>> {
    Some(Ok(match v {
        Bson::Double(d) => *d,
        Bson::Int32(i) => f64::from(*i),
        Bson::Int64(l) => *l as f64,
        Bson::Boolean(b) => f64::from(u8::from(*b)),
        Bson::DateTime(dt) => dt.timestamp_millis() as f64,
        Bson::Decimal128(d) => {
            let text = d.to_string();
            let parsed = Number::of(v).map_or(f64::NAN, Number::to_f64);
            if parsed.is_infinite() && !text.contains("Infinity") {
                return Some(Err(overflow(text)));
            }
            parsed
        }
        Bson::String(s) => {
            if !numeric_text(s, true) {
                return Some(Err(parse_failure(s, "Did not consume whole string.")));
            }
            match s.parse::<f64>() {
                Ok(d) if d.is_infinite() && !s.to_ascii_lowercase().contains("inf") => {
                    return Some(Err(parse_failure(s, "Out of range")));
                }
                Ok(d) => d,
                Err(_) => return Some(Err(parse_failure(s, "Did not consume whole string."))),
            }
        }
        _ => return None,
    }))
}

/// `Some(result)` for the types that convert to string.
fn to_string(v: &Bson) -> Result<Option<String>> {
    Ok(match v {
        Bson::Double(d) => Some(format_double(*d)),
        Bson::DateTime(dt) => Some(format_date(
            DEFAULT_FORMAT,
            dt.timestamp_millis(),
            Zone::UTC,
        )?),
        Bson::String(_)
        | Bson::Symbol(_)
        | Bson::Int32(_)
        | Bson::Int64(_)
        | Bson::Decimal128(_)
        | Bson::Boolean(_)
        | Bson::ObjectId(_) => to_text(v),
        _ => None,
    })
}

fn parse_object_id(text: &str) -> Result<bson::oid::ObjectId> {
    if text.len() != 24 {
        return Err(
            failure(format!("Failed to parse objectId '{text}'")).with_detail(&format!(
                "Invalid string length for parsing to OID, expected 24 but found {}",
                text.len()
            )),
        );
    }
    bson::oid::ObjectId::parse_str(text).map_err(|_| {
        failure(format!("Failed to parse objectId '{text}'"))
            .with_detail("Invalid character found in hex string")
    })
}

/// A double or decimal truncated toward zero, as an `i64`.
fn truncate(d: f64, shown: &str) -> Result<i64> {
    if d.is_nan() {
        return Err(failure("Attempt to convert NaN value to integer type").with_detail(shown));
    }
    if d.is_infinite() {
        return Err(failure("Attempt to convert infinity value to integer type").with_detail(shown));
    }
    crate::value::whole_f64_to_i64(d.trunc()).ok_or_else(|| overflow(shown))
}

/// `Some(result)` when the type converts to int (`long` false) or long.
fn to_integer(v: &Bson, long: bool) -> Option<Result<i64>> {
    Some(match v {
        Bson::Int32(i) => Ok(i64::from(*i)),
        Bson::Int64(l) => Ok(*l),
        Bson::Boolean(b) => Ok(i64::from(*b)),
        Bson::Double(d) => truncate(*d, &format_double(*d)),
        Bson::Decimal128(d) => decimal_truncate(&d.to_string()),
        Bson::DateTime(dt) if long => Ok(dt.timestamp_millis()),
        Bson::String(s) => {
            if !numeric_text(s, false) {
                Err(parse_failure(s, "Did not consume whole string."))
            } else {
                s.parse::<i64>()
                    .map_err(|_| parse_failure(s, "Overflow"))
                    .and_then(|n| {
                        if long || i32::try_from(n).is_ok() {
                            Ok(n)
                        } else {
                            Err(parse_failure(s, "Overflow"))
                        }
                    })
            }
        }
        _ => return None,
    })
}

/// A decimal's text truncated toward zero to an `i64`, exactly (no detour
/// through a double, which would lose digits past 2^53).
fn decimal_truncate(text: &str) -> Result<i64> {
    let body = text.strip_prefix('-').unwrap_or(text);
    let negative = body.len() != text.len();
    match body {
        "NaN" => return truncate(f64::NAN, text),
        "Infinity" => return truncate(f64::INFINITY, text),
        _ => {}
    }
    let (mantissa, exponent) = match body.split_once('E') {
        Some((m, e)) => (m, e.parse::<i64>().map_err(|_| overflow(text))?),
        None => (body, 0),
    };
    let (whole, fraction) = mantissa.split_once('.').unwrap_or((mantissa, ""));
    let digits = format!("{whole}{fraction}");
    // The number is digits × 10^(exponent − fraction length).
    let scale = exponent - fraction.len() as i64;
    let kept = if scale >= 0 {
        if scale > 40 && digits.trim_start_matches('0').is_empty() {
            String::from("0")
        } else if scale > 40 {
            return Err(overflow(text));
        } else {
            format!("{digits}{}", "0".repeat(scale as usize))
        }
    } else {
        let cut = digits.len() as i64 + scale;
        if cut <= 0 {
            String::from("0")
        } else {
            digits.get(..cut as usize).unwrap_or("0").to_owned()
        }
    };
    let magnitude: i128 = kept
        .trim_start_matches('0')
        .parse()
        .or_else(|e: std::num::ParseIntError| {
            if kept.trim_start_matches('0').is_empty() {
                Ok(0)
            } else {
                Err(e)
            }
        })
        .map_err(|_| overflow(text))?;
    let value = if negative { -magnitude } else { magnitude };
    i64::try_from(value).map_err(|_| overflow(text))
}

/// A double as a decimal with 15 significant digits, as MongoDB converts it
/// (`$toDecimal: 2.5` is `NumberDecimal("2.50000000000000")`).
pub(super) fn decimal_from_double(d: f64) -> Decimal128 {
    bson_canonical::decimal::Decimal::from_f64(d).encode()
}

fn decimal_of_int(n: i64) -> Decimal128 {
    // An integer's text always parses.
    n.to_string()
        .parse()
        .unwrap_or_else(|_| Decimal128::from_bytes([0; 16]))
}

/// `Some(result)` for the types that convert to decimal.
fn to_decimal(v: &Bson) -> Option<Result<Decimal128>> {
    Some(Ok(match v {
        Bson::Decimal128(d) => *d,
        Bson::Double(d) => decimal_from_double(*d),
        Bson::Int32(i) => decimal_of_int(i64::from(*i)),
        Bson::Int64(l) => decimal_of_int(*l),
        Bson::Boolean(b) => decimal_of_int(i64::from(*b)),
        Bson::DateTime(dt) => decimal_of_int(dt.timestamp_millis()),
        Bson::String(s) => {
            if !numeric_text(s, true) {
                return Some(Err(failure(format!(
                    "Failed to parse string to decimal '{s}'"
                ))));
            }
            match s.parse::<Decimal128>() {
                Ok(d) => d,
                Err(_) => {
                    return Some(Err(failure(format!(
                        "Failed to parse string to decimal '{s}'"
                    ))));
                }
            }
        }
        _ => return None,
    }))
}

/// `Some(result)` for the types that convert to a date: a double, decimal or
/// long is milliseconds since the epoch (truncated); a string is parsed as
/// `$dateFromString` does; an ObjectId or timestamp gives its time. An int
/// does not convert (manual, "$toDate").
fn to_date(v: &Bson) -> Option<Result<i64>> {
    Some(match v {
        Bson::Int64(l) => Ok(*l),
        Bson::Double(d) => truncate(*d, &format_double(*d)).map_err(|e| match e {
            QueryError::ConversionFailure(m) => {
                QueryError::ConversionFailure(m.replace("integer type", "date"))
            }
            other => other,
        }),
        Bson::Decimal128(d) => decimal_truncate(&d.to_string()),
        Bson::String(s) => parse_date(s, None, None),
        Bson::DateTime(_) | Bson::ObjectId(_) | Bson::Timestamp(_) => {
            Ok(coerce_date(v).unwrap_or_default())
        }
        _ => return None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn decimal_truncation_is_exact_past_two_to_the_fifty_third() {
        assert_eq!(decimal_truncate("9223372036854775807"), Ok(i64::MAX));
        assert_eq!(decimal_truncate("-9223372036854775808"), Ok(i64::MIN));
        assert!(decimal_truncate("9223372036854775808").is_err());
        assert_eq!(decimal_truncate("1.9"), Ok(1));
        assert_eq!(decimal_truncate("-1.9"), Ok(-1));
        assert_eq!(decimal_truncate("1.5E+3"), Ok(1500));
        assert_eq!(decimal_truncate("1E-7"), Ok(0));
        assert_eq!(decimal_truncate("0E+6000"), Ok(0));
    }

    #[test]
    fn doubles_become_fifteen_digit_decimals() {
        assert_eq!(decimal_from_double(2.5).to_string(), "2.50000000000000");
        assert_eq!(decimal_from_double(0.1).to_string(), "0.100000000000000");
        assert_eq!(
            decimal_from_double(-1e20).to_string(),
            "-1.00000000000000E+20"
        );
    }

    #[test]
    fn numeric_text_is_strict() {
        assert!(numeric_text("-12", false));
        assert!(!numeric_text(" 12", false));
        assert!(!numeric_text("12 ", false));
        assert!(!numeric_text("0x1A", false));
        assert!(!numeric_text("1.5", false));
        assert!(numeric_text("1.5e3", true));
        assert!(!numeric_text("1.5e", true));
        assert!(!numeric_text(".", true));
        assert!(numeric_text("-Infinity", true));
    }
}
