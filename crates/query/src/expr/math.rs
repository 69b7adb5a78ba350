//! Numeric and miscellaneous operators: `$pow`, `$exp`, `$ln`, `$log`, `$log10`, the
//! trigonometric operators, the bitwise operators, `$stdDevPop`, `$stdDevSamp`,
//! `$binarySize`, `$bsonSize`, `$tsSecond` and `$tsIncrement`.
//!
//! Semantics and error codes follow MongoDB's `src/mongo/db/pipeline/expression.cpp`
//! and `expression_trigonometric.{h,cpp}`. A Decimal128 argument gives a Decimal128
//! result as in MongoDB, but it is computed in double precision (this crate has no
//! decimal arithmetic): exact results agree with MongoDB's, inexact ones carry about
//! 16 significant digits where MongoDB computes 34.

use super::Value;
use super::convert::decimal_from_double;
use super::ops::nullish;
use super::value::{Number, format_double, type_name};
use crate::error::QueryError;
use bson::Bson;

type Result<T> = std::result::Result<T, QueryError>;

/// The operators of this module with their least and greatest argument counts.
pub(super) const OPERATORS: &[(&str, usize, usize)] = &[
    ("$pow", 2, 2),
    ("$exp", 1, 1),
    ("$ln", 1, 1),
    ("$log", 2, 2),
    ("$log10", 1, 1),
    ("$sin", 1, 1),
    ("$cos", 1, 1),
    ("$tan", 1, 1),
    ("$asin", 1, 1),
    ("$acos", 1, 1),
    ("$atan", 1, 1),
    ("$atan2", 2, 2),
    ("$sinh", 1, 1),
    ("$cosh", 1, 1),
    ("$tanh", 1, 1),
    ("$asinh", 1, 1),
    ("$acosh", 1, 1),
    ("$atanh", 1, 1),
    ("$degreesToRadians", 1, 1),
    ("$radiansToDegrees", 1, 1),
    ("$bitAnd", 0, usize::MAX),
    ("$bitOr", 0, usize::MAX),
    ("$bitXor", 0, usize::MAX),
    ("$bitNot", 1, 1),
    ("$stdDevPop", 0, usize::MAX),
    ("$stdDevSamp", 0, usize::MAX),
    ("$binarySize", 1, 1),
    ("$bsonSize", 1, 1),
    ("$tsSecond", 1, 1),
    ("$tsIncrement", 1, 1),
];

/// Evaluates one of [`OPERATORS`] on its evaluated arguments (arity checked at parse time).
pub(super) fn call(name: &str, values: Vec<Value>) -> Result<Value> {
    match (name, values.as_slice()) {
        ("$pow", [base, exponent]) => pow(base, exponent),
        ("$log", [arg, base]) => log(arg, base),
        ("$atan2", [y, x]) => atan2(y, x),
        ("$bitAnd" | "$bitOr" | "$bitXor", _) => bitwise(name, &values),
        ("$stdDevPop" | "$stdDevSamp", _) => Ok(Some(std_dev(name == "$stdDevSamp", &values))),
        ("$binarySize", [v]) => binary_size(v),
        ("$bsonSize", [v]) => bson_size(v),
        ("$tsSecond" | "$tsIncrement", [v]) => timestamp_part(name, v),
        (_, [v]) => {
            if nullish(v) {
                return Ok(Some(Bson::Null));
            }
            let Some(n) = v.as_ref().and_then(Number::of) else {
                return Err(QueryError::location(
                    28765,
                    format!("{name} only supports numeric types, not {}", type_name(v)),
                ));
            };
            let decimal = matches!(v, Some(Bson::Decimal128(_)));
            single(name, v, n, decimal).map(Some)
        }
        _ => Err(super::dispatch::arity_error(name, values.len())),
    }
}

/// A double result, or a Decimal128 one when the argument was a decimal.
fn result(value: f64, decimal: bool) -> Bson {
    if decimal {
        Bson::Decimal128(decimal_of_result(value))
    } else {
        Bson::Double(value)
    }
}

/// A result computed as a double, as a decimal with the fewest digits that read
/// back as the same double: exact results come out as MongoDB's decimal
/// arithmetic gives them (`1`, `2`, `0.5`, `Infinity`), inexact ones to about 16
/// significant digits where MongoDB gives 34.
fn decimal_of_result(value: f64) -> bson::Decimal128 {
    if value.is_finite()
        && let Ok(d) = format!("{value:e}").parse()
    {
        return d;
    }
    decimal_from_double(value)
}

/// The one-number operators, after the null and type checks.
fn single(name: &str, v: &Value, n: Number, decimal: bool) -> Result<Bson> {
    let x = n.to_f64();
    Ok(match name {
        "$exp" => result(x.exp(), decimal),
        // A positive decimal takes the decimal path; anything else is checked as a
        // double (so a decimal NaN gives a double NaN, as in MongoDB).
        "$ln" | "$log10" => {
            if decimal && x > 0.0 {
                return Ok(result(log_of(name, x), true));
            }
            if !(x > 0.0 || x.is_nan()) {
                let code = if name == "$ln" { 28766 } else { 28761 };
                return Err(QueryError::location(
                    code,
                    format!(
                        "{name}'s argument must be a positive number, but is {}",
                        format_double(x)
                    ),
                ));
            }
            Bson::Double(log_of(name, x))
        }
        "$bitNot" => match v {
            Some(Bson::Int32(i)) => Bson::Int32(!i),
            Some(Bson::Int64(l)) => Bson::Int64(!l),
            _ => {
                return Err(QueryError::TypeMismatch(format!(
                    "$bitNot only supports int and long, not: {}.",
                    type_name(v)
                )));
            }
        },
        "$degreesToRadians" => result(x * (std::f64::consts::PI / 180.0), decimal),
        "$radiansToDegrees" => result(x * (180.0 / std::f64::consts::PI), decimal),
        _ => trigonometric(name, v, x, decimal)?,
    })
}

fn log_of(name: &str, x: f64) -> f64 {
    if name == "$ln" { x.ln() } else { x.log10() }
}

/// The bounds of a bounded trigonometric operator: inclusive for the inverse
/// functions, exclusive (so infinities are refused) for `$sin`, `$cos`, `$tan`.
fn bounds(name: &str) -> Option<(f64, f64, bool)> {
    match name {
        "$acos" | "$asin" | "$atanh" => Some((-1.0, 1.0, true)),
        "$acosh" => Some((1.0, f64::INFINITY, true)),
        "$sin" | "$cos" | "$tan" => Some((f64::NEG_INFINITY, f64::INFINITY, false)),
        _ => None,
    }
}

fn trigonometric(name: &str, v: &Value, x: f64, decimal: bool) -> Result<Bson> {
    if let Some((low, high, inclusive)) = bounds(name) {
        if x.is_nan() {
            // NaN passes through unchanged, with its type.
            return Ok(v.clone().unwrap_or(Bson::Null));
        }
        let inside = if inclusive {
            low <= x && x <= high
        } else {
            low < x && x < high
        };
        if !inside {
            let (open, close) = if inclusive { ("[", "]") } else { ("(", ")") };
            return Err(QueryError::location(
                50989,
                format!(
                    "cannot apply {name} to {}, value must in {open}{},{}{close}",
                    shown_number(v, x),
                    format_double(low).replace("Infinity", "inf"),
                    format_double(high).replace("Infinity", "inf"),
                ),
            ));
        }
    }
    let y = match name {
        "$sin" => x.sin(),
        "$cos" => x.cos(),
        "$tan" => x.tan(),
        "$asin" => x.asin(),
        "$acos" => x.acos(),
        "$atan" => x.atan(),
        "$sinh" => x.sinh(),
        "$cosh" => x.cosh(),
        "$tanh" => x.tanh(),
        "$asinh" => x.asinh(),
        "$acosh" => x.acosh(),
        _ => x.atanh(),
    };
    Ok(result(y, decimal))
}

fn shown_number(v: &Value, x: f64) -> String {
    match v {
        Some(Bson::Decimal128(d)) => d.to_string(),
        _ => format_double(x),
    }
}

fn pow(base: &Value, exponent: &Value) -> Result<Value> {
    if nullish(base) || nullish(exponent) {
        return Ok(Some(Bson::Null));
    }
    let Some(b) = base.as_ref().and_then(Number::of) else {
        return Err(QueryError::location(
            28762,
            format!("$pow's base must be numeric, not {}", type_name(base)),
        ));
    };
    let Some(e) = exponent.as_ref().and_then(Number::of) else {
        return Err(QueryError::location(
            28763,
            format!(
                "$pow's exponent must be numeric, not {}",
                type_name(exponent)
            ),
        ));
    };
    let (x, y) = (b.to_f64(), e.to_f64());
    if x == 0.0 && y < 0.0 {
        return Err(QueryError::location(
            28764,
            "$pow cannot take a base of 0 and a negative exponent",
        ));
    }
    let decimal =
        matches!(base, Some(Bson::Decimal128(_))) || matches!(exponent, Some(Bson::Decimal128(_)));
    let (Some(b), Some(e)) = (b.as_i64(), e.as_i64()) else {
        return Ok(Some(result(x.powf(y), decimal)));
    };
    if decimal {
        return Ok(Some(result(x.powf(y), true)));
    }
    let long = matches!(base, Some(Bson::Int64(_))) || matches!(exponent, Some(Bson::Int64(_)));
    let integer = |r: i64| {
        if long {
            Bson::Int64(r)
        } else {
            Number::integer(r).to_bson()
        }
    };
    let exact = match b {
        0 => Some(i64::from(e == 0)),
        1 => Some(1),
        -1 => Some(if e % 2 == 0 { 1 } else { -1 }),
        _ => u32::try_from(e)
            .ok()
            .filter(|e| *e <= 63)
            .and_then(|e| b.checked_pow(e)),
    };
    Ok(Some(match exact {
        Some(r) => integer(r),
        // Not representable as a long: a double.
        None => Bson::Double(x.powf(y)),
    }))
}

fn log(arg: &Value, base: &Value) -> Result<Value> {
    if nullish(arg) || nullish(base) {
        return Ok(Some(Bson::Null));
    }
    let Some(a) = arg.as_ref().and_then(Number::of) else {
        return Err(QueryError::location(
            28756,
            format!("$log's argument must be numeric, not {}", type_name(arg)),
        ));
    };
    let Some(b) = base.as_ref().and_then(Number::of) else {
        return Err(QueryError::location(
            28757,
            format!("$log's base must be numeric, not {}", type_name(base)),
        ));
    };
    let (x, y) = (a.to_f64(), b.to_f64());
    let decimal =
        matches!(arg, Some(Bson::Decimal128(_))) || matches!(base, Some(Bson::Decimal128(_)));
    if decimal && x > 0.0 && y > 0.0 && y != 1.0 {
        return Ok(Some(result(x.ln() / y.ln(), true)));
    }
    if !(x > 0.0 || x.is_nan()) {
        return Err(QueryError::location(
            28758,
            format!(
                "$log's argument must be a positive number, but is {}",
                format_double(x)
            ),
        ));
    }
    if !((y > 0.0 && y != 1.0) || y.is_nan()) {
        return Err(QueryError::location(
            28759,
            format!(
                "$log's base must be a positive number not equal to 1, but is {}",
                format_double(y)
            ),
        ));
    }
    Ok(Some(Bson::Double(x.ln() / y.ln())))
}

fn atan2(y: &Value, x: &Value) -> Result<Value> {
    let mut numbers = [0.0; 2];
    for (slot, (v, code)) in numbers.iter_mut().zip([(y, 51044), (x, 51045)]) {
        if nullish(v) {
            return Ok(Some(Bson::Null));
        }
        *slot = v
            .as_ref()
            .and_then(Number::of)
            .map(Number::to_f64)
            .ok_or_else(|| {
                QueryError::location(
                    code,
                    format!("$atan2 only supports numeric types, not {}", type_name(v)),
                )
            })?;
    }
    let decimal = matches!(y, Some(Bson::Decimal128(_))) || matches!(x, Some(Bson::Decimal128(_)));
    Ok(Some(result(numbers[0].atan2(numbers[1]), decimal)))
}

/// `$bitAnd`, `$bitOr`, `$bitXor`: ints and longs only; a long operand makes the
/// result a long; no operands give the identity (-1 or 0) as an int.
fn bitwise(name: &str, values: &[Value]) -> Result<Value> {
    let mut acc: i64 = if name == "$bitAnd" { -1 } else { 0 };
    let mut long = false;
    for v in values {
        let operand = match v {
            _ if nullish(v) => return Ok(Some(Bson::Null)),
            Some(Bson::Int32(i)) => i64::from(*i),
            Some(Bson::Int64(l)) => {
                long = true;
                *l
            }
            _ => {
                return Err(QueryError::TypeMismatch(format!(
                    "{name} only supports int and long operands."
                )));
            }
        };
        acc = match name {
            "$bitAnd" => acc & operand,
            "$bitOr" => acc | operand,
            _ => acc ^ operand,
        };
    }
    // Without a long operand every operand was an int, so `acc` fits an int.
    Ok(Some(if long {
        Bson::Int64(acc)
    } else {
        Bson::Int32(i32::try_from(acc).unwrap_or_default())
    }))
}

/// A running standard deviation: Welford's online algorithm, as MongoDB
/// computes it (so results agree to the last bit).
#[derive(Debug, Clone, Default)]
pub(crate) struct Deviation {
    count: i64,
    mean: f64,
    m2: f64,
}

impl Deviation {
    /// Adds a value; non-numbers are ignored, as MongoDB does.
    pub(crate) fn add(&mut self, value: &Bson) {
        let v = match value {
            Bson::Int32(v) => f64::from(*v),
            Bson::Int64(v) => *v as f64,
            Bson::Double(v) => *v,
            Bson::Decimal128(_) => {
                let raw = super::value::to_raw(value);
                match crate::value::as_f64(raw.as_raw_bson_ref()) {
                    Some(v) => v,
                    None => return,
                }
            }
            _ => return,
        };
        self.count += 1;
        let delta = v - self.mean;
        if delta != 0.0 {
            self.mean += delta / self.count as f64;
            self.m2 += delta * (v - self.mean);
        }
    }

    /// The population (`sample` false) or sample standard deviation; null
    /// without numbers, or with fewer than two for a sample.
    pub(crate) fn result(&self, sample: bool) -> Bson {
        let count = if sample { self.count - 1 } else { self.count };
        if count <= 0 {
            return Bson::Null;
        }
        Bson::Double((self.m2 / count as f64).sqrt())
    }
}

/// `$stdDevPop`/`$stdDevSamp` as expressions (MongoDB's `ExpressionFromAccumulator`):
/// one array argument contributes its elements, otherwise each argument counts;
/// anything but a number is ignored.
fn std_dev(sample: bool, values: &[Value]) -> Bson {
    let mut deviation = Deviation::default();
    match values {
        [Some(Bson::Array(items))] => items.iter().for_each(|v| deviation.add(v)),
        _ => values.iter().flatten().for_each(|v| deviation.add(v)),
    }
    deviation.result(sample)
}

fn binary_size(v: &Value) -> Result<Value> {
    let length = match v {
        _ if nullish(v) => return Ok(Some(Bson::Null)),
        Some(Bson::String(s)) => s.len(),
        Some(Bson::Binary(b)) => b.bytes.len(),
        _ => {
            return Err(QueryError::location(
                51276,
                format!(
                    "$binarySize requires a string or BinData argument, found: {}",
                    type_name(v)
                ),
            ));
        }
    };
    Ok(Some(Bson::Int32(i32::try_from(length).unwrap_or(i32::MAX))))
}

fn bson_size(v: &Value) -> Result<Value> {
    match v {
        _ if nullish(v) => Ok(Some(Bson::Null)),
        Some(Bson::Document(doc)) => {
            let bytes = bson::RawDocumentBuf::try_from(doc)
                .map(|raw| raw.as_bytes().len())
                .map_err(|e| QueryError::bad_value(e.to_string()))?;
            Ok(Some(Bson::Int32(i32::try_from(bytes).unwrap_or(i32::MAX))))
        }
        _ => Err(QueryError::location(
            31393,
            format!(
                "$bsonSize requires a document input, found: {}",
                type_name(v)
            ),
        )),
    }
}

fn timestamp_part(name: &str, v: &Value) -> Result<Value> {
    match v {
        _ if nullish(v) => Ok(Some(Bson::Null)),
        Some(Bson::Timestamp(ts)) => Ok(Some(Bson::Int64(i64::from(if name == "$tsSecond" {
            ts.time
        } else {
            ts.increment
        })))),
        _ => Err(QueryError::location(
            if name == "$tsSecond" {
                5_687_301
            } else {
                5_687_302
            },
            format!(
                " Argument to {name} must be a timestamp, but is {}",
                type_name(v)
            ),
        )),
    }
}
