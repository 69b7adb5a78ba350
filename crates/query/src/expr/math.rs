//! Numeric and miscellaneous operators: `$pow`, `$exp`, `$ln`, `$log`, `$log10`, the
//! trigonometric operators, the bitwise operators, `$stdDevPop`, `$stdDevSamp`,
//! `$binarySize`, `$bsonSize`, `$tsSecond` and `$tsIncrement`.
//!
//! Semantics and error codes follow MongoDB's `src/mongo/db/pipeline/expression.cpp`
//! and `expression_trigonometric.{h,cpp}`. A Decimal128 argument gives a Decimal128
//! result as in MongoDB. `$pow` with an integral exponent and `$degreesToRadians`/
//! `$radiansToDegrees` are exact decimal arithmetic ([`bson_canonical::decimal`]);
//! the transcendental functions (`$exp`, `$ln`, `$log`, `$log10`, `$pow` with a
//! fractional exponent, the trigonometric ones) over a Decimal128 answer 238
//! NotImplemented: MongoDB computes them to 34 digits with the Intel library, and a
//! double-precision result would be a different answer from the 17th digit on.

use super::Value;
use super::ops::nullish;
use super::value::{Number, format_double, type_name};
use crate::error::QueryError;
use bson::Bson;
use bson_canonical::decimal::{self, Decimal};
use std::cmp::Ordering;

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

/// A double result; for a decimal argument, MongoDB's 34-digit decimal result, which
/// is not computed yet: refused rather than answered with a double's 16 digits.
///
/// Special values are exact either way (the function of an infinity or a NaN, a pole
/// such as `$atanh` of 1): those decimal results are given.
fn result(name: &str, inputs: &[f64], value: f64, decimal: bool) -> Result<Bson> {
    if !decimal {
        return Ok(Bson::Double(value));
    }
    if !value.is_finite() || inputs.iter().any(|x| !x.is_finite()) {
        return Ok(Bson::Decimal128(decimal_of_result(value)));
    }
    Err(inexact_decimal(name))
}

/// The refusal of a transcendental function over Decimal128 (MongoDB computes it to 34
/// digits with the Intel decimal library; a double-precision result would differ from
/// the 17th digit on).
fn inexact_decimal(name: &str) -> QueryError {
    QueryError::NotImplemented(format!(
        "{name} of a Decimal128 is not implemented (its 34-digit result); convert the \
         argument with $toDouble for a double result"
    ))
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
    Decimal::from_f64(value).encode()
}

/// The natural logarithm of a positive decimal, through its coefficient and
/// exponent so that values beyond the double range keep a finite logarithm.
fn decimal_ln(d: Decimal) -> f64 {
    match d {
        Decimal::Finite {
            coefficient,
            exponent,
            ..
        } => (coefficient as f64).ln() + exponent as f64 * std::f64::consts::LN_10,
        other => other.to_f64().ln(),
    }
}

/// Whether a number is a decimal greater than zero (MongoDB's decimal path of the
/// logarithms; anything else is checked as a double).
fn positive_decimal(n: Number) -> Option<Decimal> {
    match n {
        Number::Decimal(d) if decimal::compare(d, Decimal::ZERO) == Some(Ordering::Greater) => {
            Some(d)
        }
        _ => None,
    }
}

/// `k` when `d` is exactly `10^k`.
fn power_of_ten(d: Decimal) -> Option<i64> {
    let Decimal::Finite {
        negative: false,
        mut coefficient,
        mut exponent,
    } = d
    else {
        return None;
    };
    while coefficient > 1 && coefficient % 10 == 0 {
        coefficient /= 10;
        exponent += 1;
    }
    (coefficient == 1).then_some(exponent)
}

/// π rounded to 34 digits, as MongoDB's `Decimal128::kPi` is.
fn decimal_pi() -> Decimal {
    Decimal::Finite {
        negative: false,
        coefficient: 3_141_592_653_589_793_238_462_643_383_279_503,
        exponent: -33,
    }
}

/// The one-number operators, after the null and type checks.
fn single(name: &str, v: &Value, n: Number, decimal: bool) -> Result<Bson> {
    let x = n.to_f64();
    Ok(match name {
        "$exp" if decimal && x == 0.0 => Bson::Decimal128(Decimal::from_i64(1).encode()),
        "$exp" => result(name, &[x], x.exp(), decimal)?,
        // A positive decimal takes the decimal path; anything else is checked as a
        // double (so a decimal NaN gives a double NaN, as in MongoDB).
        "$ln" | "$log10" => {
            if let Some(d) = positive_decimal(n) {
                // Exact, as MongoDB's decimal results are: log10(10^k) = k, ln(1) = 0.
                match (name, power_of_ten(d)) {
                    ("$log10", Some(power)) | ("$ln", Some(power @ 0)) => {
                        return Ok(Bson::Decimal128(Decimal::from_i64(power).encode()));
                    }
                    _ => {}
                }
                let ln = decimal_ln(d);
                let value = if name == "$ln" {
                    ln
                } else {
                    ln / std::f64::consts::LN_10
                };
                return result(name, &[x], value, true);
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
        "$degreesToRadians" | "$radiansToDegrees" => match n {
            // MongoDB multiplies by kPiOver180 or k180OverPi, both decimal quotients.
            Number::Decimal(d) => {
                let factor = if name == "$degreesToRadians" {
                    decimal::divide(decimal_pi(), Decimal::from_i64(180))
                } else {
                    decimal::divide(Decimal::from_i64(180), decimal_pi())
                };
                Bson::Decimal128(decimal::multiply(d, factor).encode())
            }
            _ if name == "$degreesToRadians" => Bson::Double(x * (std::f64::consts::PI / 180.0)),
            _ => Bson::Double(x * (180.0 / std::f64::consts::PI)),
        },
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
    result(name, &[x], y, decimal)
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
    let zero_to_negative = || {
        QueryError::location(
            28764,
            "$pow cannot take a base of 0 and a negative exponent",
        )
    };
    if matches!(b, Number::Decimal(_)) || matches!(e, Number::Decimal(_)) {
        let (x, y) = (b.to_decimal(), e.to_decimal());
        if x.is_zero() && y.is_negative() && !y.is_nan() {
            return Err(zero_to_negative());
        }
        return Ok(Some(Bson::Decimal128(decimal_pow(x, y)?.encode())));
    }
    let (x, y) = (b.to_f64(), e.to_f64());
    if x == 0.0 && y < 0.0 {
        return Err(zero_to_negative());
    }
    let (Some(b), Some(e)) = (b.as_i64(), e.as_i64()) else {
        return Ok(Some(Bson::Double(x.powf(y))));
    };
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

/// `x^y` for decimals: by repeated squaring when `y` is a whole number (each step
/// rounded to 34 digits, exact while the result fits), else through doubles; the
/// result at full precision, as MongoDB's `Decimal128::power` normalizes it.
fn decimal_pow(x: Decimal, y: Decimal) -> Result<Decimal> {
    let whole = Number::Decimal(y).whole_i64();
    let Some(n) = whole else {
        return Err(inexact_decimal("$pow"));
    };
    let mut result = Decimal::from_i64(1);
    let mut square = x;
    let mut left = n.unsigned_abs();
    while left > 0 {
        if left & 1 == 1 {
            result = decimal::multiply(result, square);
        }
        left >>= 1;
        if left > 0 {
            square = decimal::multiply(square, square);
        }
    }
    if n < 0 {
        result = decimal::divide(Decimal::from_i64(1), result);
    }
    Ok(result.normalize())
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
    if matches!(a, Number::Decimal(_)) || matches!(b, Number::Decimal(_)) {
        let (x, y) = (a.to_decimal(), b.to_decimal());
        let one = decimal::compare(y, Decimal::from_i64(1)) == Some(Ordering::Equal);
        if let (Some(x), Some(y)) = (
            positive_decimal(Number::Decimal(x)),
            positive_decimal(Number::Decimal(y)),
        ) && !one
        {
            let inputs = [x.to_f64(), y.to_f64()];
            return result("$log", &inputs, decimal_ln(x) / decimal_ln(y), true).map(Some);
        }
    }
    let (x, y) = (a.to_f64(), b.to_f64());
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
    let value = numbers[0].atan2(numbers[1]);
    result("$atan2", &numbers, value, decimal).map(Some)
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
