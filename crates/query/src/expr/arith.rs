//! The arithmetic operators with MongoDB's numeric promotion: `$add`, `$subtract`,
//! `$multiply`, `$divide`, `$mod`, `$abs`, `$ceil`, `$floor`, `$sqrt`, `$round`
//! and `$trunc`.
//!
//! Promotion (mongodb/mongo `src/mongo/db/pipeline/expression.cpp`, `AddState`,
//! `MultiplyState`, `ExpressionSubtract::apply`, `ExpressionDivide::apply`,
//! `ExpressionMod::apply`, `evaluateRoundOrTrunc`):
//! - int32 op int32 is an int32 when the result fits, else an int64; int64
//!   overflow gives a double; any double makes a double; any Decimal128 makes a
//!   Decimal128, computed exactly by [`bson_canonical::decimal`]. A double meeting
//!   a decimal converts to 15 significant digits first (`Decimal128(double)`).
//! - `$add` and `$multiply` fold their operands left to right: the first null or
//!   missing operand answers null, a non-number before it is an error. A running
//!   int64 total that overflows continues as a double.
//! - `$divide` of two integers is a double; `$mod` keeps the integer type.
//! - `$round`/`$trunc` of a double goes through a 34-digit decimal and back, so
//!   `$round: [2.675, 2]` is `2.67` (the double is below 2.675) and ties go to even.
//!
//! Invariants: no operator here panics or wraps on any input; every overflow
//! either promotes or is MongoDB's error.

use super::ops::nullish;
use super::value::{Number, type_name};
use super::{Bson, Value};
use crate::error::QueryError;
use bson_canonical::decimal::{self, Decimal, Rounding};
use std::cmp::Ordering;

type Result<T> = std::result::Result<T, QueryError>;

/// The widest numeric type seen, in MongoDB's order (`Value::getWidestNumeric`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
enum Width {
    Int,
    Long,
    Double,
    Decimal,
}

fn width(n: Number) -> Width {
    match n {
        Number::Int(_) => Width::Int,
        Number::Long(_) => Width::Long,
        Number::Double(_) => Width::Double,
        Number::Decimal(_) => Width::Decimal,
    }
}

fn date_overflow() -> QueryError {
    QueryError::Overflow("date overflow".to_owned())
}

/// MongoDB's `AddState`: one total per type, widened as operands arrive.
struct AddState {
    long: i64,
    double: f64,
    decimal: Decimal,
    width: Width,
    date: bool,
}

impl AddState {
    fn new() -> AddState {
        AddState {
            long: 0,
            double: 0.0,
            decimal: Decimal::ZERO,
            width: Width::Int,
            date: false,
        }
    }

    fn add_number(&mut self, n: Number) -> Result<()> {
        if self.date {
            return self.add_to_date(n);
        }
        let old = self.width;
        self.width = self.width.max(width(n));
        if old != self.width {
            match (self.width, old) {
                (Width::Double, _) => self.double = self.long as f64,
                (Width::Decimal, Width::Double) => self.decimal = Decimal::from_f64(self.double),
                (Width::Decimal, _) => self.decimal = Decimal::from_i64(self.long),
                _ => {}
            }
        }
        match self.width {
            Width::Int | Width::Long => {
                let operand = n.as_i64().unwrap_or_default();
                match self.long.checked_add(operand) {
                    Some(total) => self.long = total,
                    None => {
                        self.width = Width::Double;
                        self.double = self.long as f64 + n.to_f64();
                    }
                }
            }
            Width::Double => self.double += n.to_f64(),
            Width::Decimal => self.decimal = decimal::add(self.decimal, n.to_decimal()),
        }
        Ok(())
    }

    fn add_date(&mut self, millis: i64) -> Result<()> {
        if self.date {
            return Err(QueryError::location(
                16612,
                "only one date allowed in an $add expression",
            ));
        }
        let so_far = self.number();
        self.long = 0;
        self.date = true;
        self.add_to_date(so_far)?;
        self.add_to_date(Number::Long(millis))
    }

    /// Adds to the milliseconds of a date: a double rounds half away from zero
    /// (`llround`), a decimal half to even; leaving the `i64` range is Overflow.
    fn add_to_date(&mut self, n: Number) -> Result<()> {
        let operand = match n {
            Number::Int(_) | Number::Long(_) => n.as_i64().unwrap_or_default(),
            Number::Double(d) => {
                // 2^63 as a double: the exclusive upper bound MongoDB checks.
                const LIMIT: f64 = 9_223_372_036_854_775_808.0;
                if !(-LIMIT..LIMIT).contains(&d) {
                    return Err(date_overflow());
                }
                d.round() as i64
            }
            Number::Decimal(d) => d.to_i64(Rounding::HalfEven).ok_or_else(date_overflow)?,
        };
        self.long = self.long.checked_add(operand).ok_or_else(date_overflow)?;
        Ok(())
    }

    fn number(&self) -> Number {
        match self.width {
            Width::Int => Number::integer(self.long),
            Width::Long => Number::Long(self.long),
            Width::Double => Number::Double(self.double),
            Width::Decimal => Number::Decimal(self.decimal),
        }
    }

    fn value(&self) -> Bson {
        if self.date {
            Bson::DateTime(bson::DateTime::from_millis(self.long))
        } else {
            self.number().to_bson()
        }
    }
}

/// `$add`: numbers and at most one date, folded left to right.
pub(super) fn add(values: &[Value]) -> Result<Value> {
    let mut state = AddState::new();
    for v in values {
        match v {
            _ if nullish(v) => return Ok(Some(Bson::Null)),
            Some(Bson::DateTime(dt)) => state.add_date(dt.timestamp_millis())?,
            Some(b) => match Number::of(b) {
                Some(n) => state.add_number(n)?,
                None => {
                    return Err(QueryError::TypeMismatch(format!(
                        "$add only supports numeric or date types, not {}",
                        type_name(v)
                    )));
                }
            },
            None => return Ok(Some(Bson::Null)),
        }
    }
    Ok(Some(state.value()))
}

/// `$multiply`, MongoDB's `MultiplyState`.
pub(super) fn multiply(values: &[Value]) -> Result<Value> {
    let mut width = Width::Int;
    let (mut long, mut double, mut product) = (1i64, 1f64, Decimal::ZERO);
    for v in values {
        if nullish(v) {
            return Ok(Some(Bson::Null));
        }
        let Some(n) = v.as_ref().and_then(Number::of) else {
            return Err(QueryError::TypeMismatch(format!(
                "$multiply only supports numeric types, not {}",
                type_name(v)
            )));
        };
        let old = width;
        width = width.max(self::width(n));
        if width == Width::Decimal {
            if old != Width::Decimal {
                product = if old == Width::Double {
                    Decimal::from_f64(double)
                } else {
                    Decimal::from_i64(long)
                };
            }
            product = decimal::multiply(product, n.to_decimal());
            continue;
        }
        double *= n.to_f64();
        if width != Width::Double {
            match long.checked_mul(n.as_i64().unwrap_or_default()) {
                Some(p) if n.to_f64().is_finite() => long = p,
                _ => width = Width::Double,
            }
        }
    }
    Ok(Some(match width {
        Width::Int => Number::integer(long).to_bson(),
        Width::Long => Bson::Int64(long),
        Width::Double => Bson::Double(double),
        Width::Decimal => Bson::Decimal128(product.encode()),
    }))
}

/// `$subtract`, MongoDB's `ExpressionSubtract::apply`.
pub(super) fn subtract(a: &Value, b: &Value) -> Result<Value> {
    let (x, y) = (
        a.as_ref().and_then(Number::of),
        b.as_ref().and_then(Number::of),
    );
    if let (Some(x), Some(y)) = (x, y) {
        return Ok(Some(
            match width(x).max(width(y)) {
                Width::Decimal => {
                    Number::Decimal(decimal::subtract(x.to_decimal(), y.to_decimal()))
                }
                Width::Double => Number::Double(x.to_f64() - y.to_f64()),
                Width::Long => {
                    let (p, q) = (
                        x.as_i64().unwrap_or_default(),
                        y.as_i64().unwrap_or_default(),
                    );
                    p.checked_sub(q)
                        .map_or(Number::Double(x.to_f64() - y.to_f64()), Number::Long)
                }
                Width::Int => {
                    let (p, q) = (
                        x.as_i64().unwrap_or_default(),
                        y.as_i64().unwrap_or_default(),
                    );
                    Number::integer(p - q)
                }
            }
            .to_bson(),
        ));
    }
    if nullish(a) || nullish(b) {
        return Ok(Some(Bson::Null));
    }
    match (a, b) {
        (Some(Bson::DateTime(p)), Some(Bson::DateTime(q))) => Ok(Some(Bson::Int64(
            p.timestamp_millis().wrapping_sub(q.timestamp_millis()),
        ))),
        (Some(Bson::DateTime(p)), _) => match y {
            Some(n) => {
                let millis = coerce_to_long(n)?;
                Ok(Some(Bson::DateTime(bson::DateTime::from_millis(
                    p.timestamp_millis().wrapping_sub(millis),
                ))))
            }
            None => Err(QueryError::TypeMismatch(format!(
                "can't $subtract {} from Date",
                type_name(b)
            ))),
        },
        _ => Err(QueryError::TypeMismatch(format!(
            "can't $subtract {} from {}",
            type_name(b),
            type_name(a)
        ))),
    }
}

/// MongoDB's `Value::coerceToLong`: a double truncates, a decimal rounds half to
/// even; out of range is 31109.
fn coerce_to_long(n: Number) -> Result<i64> {
    let out_of_range = || {
        QueryError::location(
            31109,
            format!("Can't coerce out of range value {} to long", shown(n)),
        )
    };
    match n {
        Number::Int(_) | Number::Long(_) => Ok(n.as_i64().unwrap_or_default()),
        Number::Double(d) => {
            const LIMIT: f64 = 9_223_372_036_854_775_808.0;
            if (-LIMIT..LIMIT).contains(&d) {
                Ok(d as i64)
            } else if d.is_nan() {
                Ok(0)
            } else {
                Err(out_of_range())
            }
        }
        Number::Decimal(d) => d.to_i64(Rounding::HalfEven).ok_or_else(out_of_range),
    }
}

fn shown(n: Number) -> String {
    match n {
        Number::Decimal(d) => d.to_string(),
        other => super::value::format_double(other.to_f64()),
    }
}

/// Both operands as numbers, or null when either is null or missing, or MongoDB's
/// error naming both types.
fn numeric_pair(
    a: &Value,
    b: &Value,
    error: impl Fn(String) -> QueryError,
    name: &str,
) -> Result<Option<(Number, Number)>> {
    match (
        a.as_ref().and_then(Number::of),
        b.as_ref().and_then(Number::of),
    ) {
        (Some(x), Some(y)) => Ok(Some((x, y))),
        _ if nullish(a) || nullish(b) => Ok(None),
        _ => Err(error(format!(
            "{name} only supports numeric types, not {} and {}",
            type_name(a),
            type_name(b)
        ))),
    }
}

/// `$divide`: a double, or a decimal when either side is one.
pub(super) fn divide(a: &Value, b: &Value) -> Result<Value> {
    let Some((x, y)) = numeric_pair(a, b, QueryError::TypeMismatch, "$divide")? else {
        return Ok(Some(Bson::Null));
    };
    let by_zero = || QueryError::bad_value("can't $divide by zero");
    if matches!(x, Number::Decimal(_)) || matches!(y, Number::Decimal(_)) {
        let divisor = y.to_decimal();
        if divisor.is_zero() {
            return Err(by_zero());
        }
        return Ok(Some(
            Number::Decimal(decimal::divide(x.to_decimal(), divisor)).to_bson(),
        ));
    }
    if y.to_f64() == 0.0 {
        return Err(by_zero());
    }
    Ok(Some(Bson::Double(x.to_f64() / y.to_f64())))
}

/// `$mod`: a decimal `fmod` when either side is a decimal; a double `fmod` when the
/// dividend is a double or the divisor a non-integral double; else an integer
/// remainder, a long when either side is one.
pub(super) fn modulo(a: &Value, b: &Value) -> Result<Value> {
    let error = |message| QueryError::location(16611, message);
    let Some((x, y)) = numeric_pair(a, b, error, "$mod")? else {
        return Ok(Some(Bson::Null));
    };
    if matches!(x, Number::Decimal(_)) || matches!(y, Number::Decimal(_)) {
        let divisor = y.to_decimal();
        if divisor.is_zero() {
            return Err(QueryError::location(5_733_415, "can't $mod by zero"));
        }
        return Ok(Some(
            Number::Decimal(decimal::remainder(x.to_decimal(), divisor)).to_bson(),
        ));
    }
    if y.to_f64() == 0.0 {
        return Err(QueryError::location(16610, "can't $mod by zero"));
    }
    if matches!(x, Number::Double(_)) || (matches!(y, Number::Double(_)) && !y.integral()) {
        return Ok(Some(Bson::Double(x.to_f64() % y.to_f64())));
    }
    // Here the divisor is an integer or an integral double (which fits an int32).
    let (p, q) = (
        x.whole_i64().unwrap_or_default(),
        y.whole_i64().unwrap_or_default(),
    );
    // `checked_rem` fails only for MIN % -1, whose remainder is 0 (`overflow::safeMod`).
    let rest = p.checked_rem(q).unwrap_or(0);
    Ok(Some(
        if matches!(x, Number::Long(_)) || matches!(y, Number::Long(_)) {
            Bson::Int64(rest)
        } else {
            Number::integer(rest).to_bson()
        },
    ))
}

/// `$abs`, `$ceil`, `$floor` and `$sqrt` of one argument.
pub(super) fn unary(name: &str, v: &Value) -> Result<Value> {
    if nullish(v) {
        return Ok(Some(Bson::Null));
    }
    let Some(n) = v.as_ref().and_then(Number::of) else {
        return Err(QueryError::location(
            28765,
            format!("{name} only supports numeric types, not {}", type_name(v)),
        ));
    };
    let result = match (name, n) {
        ("$abs", Number::Int(i)) => Number::integer(i64::from(i).abs()),
        ("$abs", Number::Long(l)) => Number::Long(
            l.checked_abs()
                .ok_or_else(|| QueryError::location(28680, "can't take $abs of long long min"))?,
        ),
        ("$abs", Number::Double(d)) => Number::Double(d.abs()),
        ("$abs", Number::Decimal(d)) => Number::Decimal(d.abs()),
        ("$sqrt", n) => return sqrt(n).map(|n| Some(n.to_bson())),
        ("$ceil" | "$floor", Number::Double(d)) => {
            Number::Double(if name == "$ceil" { d.ceil() } else { d.floor() })
        }
        ("$ceil" | "$floor", Number::Decimal(d)) => {
            let direction = if name == "$ceil" {
                Rounding::TowardPositive
            } else {
                Rounding::TowardNegative
            };
            Number::Decimal(decimal::quantize(d, Decimal::ZERO, direction))
        }
        (_, other) => other,
    };
    Ok(Some(result.to_bson()))
}

fn sqrt(n: Number) -> Result<Number> {
    let negative =
        || QueryError::location(28714, "$sqrt's argument must be greater than or equal to 0");
    if let Number::Decimal(d) = n {
        // NaN has no order and passes, giving NaN.
        if decimal::compare(d, Decimal::ZERO) == Some(Ordering::Less) {
            return Err(negative());
        }
        return Ok(Number::Decimal(decimal::sqrt(d)));
    }
    let x = n.to_f64();
    if x < 0.0 {
        return Err(negative());
    }
    Ok(Number::Double(x.sqrt()))
}

/// `$round` (half to even) and `$trunc` (toward zero), with an optional number
/// of places in -20..=100 (MongoDB's `evaluateRoundOrTrunc`).
pub(super) fn round(name: &str, values: &[Value]) -> Result<Value> {
    let (number, place) = match values {
        [n] => (n, None),
        [n, p] => (n, Some(p)),
        _ => {
            return Err(QueryError::location(
                28667,
                format!("Expression {name} takes at least 1 argument, and at most 2"),
            ));
        }
    };
    if nullish(number) {
        return Ok(Some(Bson::Null));
    }
    let Some(n) = number.as_ref().and_then(Number::of) else {
        return Err(QueryError::location(
            51081,
            format!(
                "{name} only supports numeric types, not {}",
                type_name(number)
            ),
        ));
    };
    let places = match place {
        None => 0,
        Some(p) if nullish(p) => return Ok(Some(Bson::Null)),
        Some(p) => precision(name, p)?,
    };
    let rounding = if name == "$trunc" {
        Rounding::TowardZero
    } else {
        Rounding::HalfEven
    };
    // 10^-places, the quantum MongoDB quantizes to.
    let quantum = Decimal::Finite {
        negative: false,
        coefficient: 1,
        exponent: -places,
    };
    Ok(Some(match n {
        Number::Decimal(d) if d.is_infinite() => n.to_bson(),
        Number::Decimal(d) => Bson::Decimal128(decimal::quantize(d, quantum, rounding).encode()),
        Number::Double(d) => {
            let exact = Decimal::from_f64_exact(d);
            if exact.is_infinite() {
                return Ok(Some(Bson::Double(d)));
            }
            Bson::Double(decimal::quantize(exact, quantum, rounding).to_f64())
        }
        Number::Int(_) | Number::Long(_) if places >= 0 => n.to_bson(),
        Number::Int(_) | Number::Long(_) => {
            let whole = n.as_i64().unwrap_or_default();
            let out = decimal::quantize(Decimal::from_i64(whole), quantum, rounding)
                .to_i64(Rounding::HalfEven)
                .ok_or_else(|| {
                    QueryError::location(
                        51080,
                        format!(
                            "invalid conversion from Decimal128 result in {name} resulting \
                             from arguments: [{whole}, {places}]"
                        ),
                    )
                })?;
            // An int stays an int when the result fits one (MongoDB checks only the
            // upper bound and wraps below it; a long is the faithful answer there).
            match (n, i32::try_from(out)) {
                (Number::Int(_), Ok(i)) => Bson::Int32(i),
                _ => Bson::Int64(out),
            }
        }
    }))
}

/// The places argument of `$round`/`$trunc`: integral (51082), in -20..=100 (51083).
fn precision(name: &str, p: &Value) -> Result<i64> {
    let Some(n) = p.as_ref().and_then(Number::of) else {
        return Err(QueryError::location(
            16004,
            format!("can't convert from BSON type {} to long", type_name(p)),
        ));
    };
    let value = coerce_to_long(n)?;
    if !n.integral() {
        return Err(QueryError::location(
            51082,
            format!("precision argument to  {name} must be a integral value"),
        ));
    }
    if !(-20..=100).contains(&value) {
        return Err(QueryError::location(
            51083,
            format!("cannot apply {name} with precision value {value} value must be in [-20, 100]"),
        ));
    }
    Ok(value)
}
