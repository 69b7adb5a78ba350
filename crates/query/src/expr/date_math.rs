//! Date arithmetic operators: `$dateAdd`, `$dateSubtract`, `$dateDiff` and `$dateTrunc`.
//!
//! Units are year, quarter, month, week, day, hour, minute, second and
//! millisecond. Calendar units work on the local civil time of the `timezone`
//! (UTC or a fixed offset; Olson names are refused with 40485, see `Zone`), so
//! with no daylight saving time a day is always 24 hours. Adding months keeps
//! the day of the month unless the target month is shorter, in which case the
//! result is that month's last day (manual, "$dateAdd", "Adding a Month").

use super::civil::{
    Civil, MS_PER_DAY, MS_PER_HOUR, MS_PER_MINUTE, MS_PER_SECOND, YEAR_ABS_MAX, Zone, coerce_date,
    days_from_civil, days_in_month, weekday_from_sunday,
};
use super::date::{Args, named_fields, shown, zone_of};
use super::ops::nullish;
use super::value::type_name;
use super::{Expr, ParseCtx, Scope, Value};
use crate::error::QueryError;
use bson::{Bson, RawBsonRef};

type Result<T> = std::result::Result<T, QueryError>;

/// The operators of this module.
pub(super) const OPERATORS: &[&str] = &["$dateAdd", "$dateSubtract", "$dateDiff", "$dateTrunc"];

/// A unit of time.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Unit {
    Year,
    Quarter,
    Month,
    Week,
    Day,
    Hour,
    Minute,
    Second,
    Millisecond,
}

impl Unit {
    fn parse(name: &str) -> Option<Unit> {
        Some(match name {
            "year" => Unit::Year,
            "quarter" => Unit::Quarter,
            "month" => Unit::Month,
            "week" => Unit::Week,
            "day" => Unit::Day,
            "hour" => Unit::Hour,
            "minute" => Unit::Minute,
            "second" => Unit::Second,
            "millisecond" => Unit::Millisecond,
            _ => return None,
        })
    }

    /// Months per unit for the calendar units.
    fn months(self) -> Option<i64> {
        match self {
            Unit::Year => Some(12),
            Unit::Quarter => Some(3),
            Unit::Month => Some(1),
            _ => None,
        }
    }

    /// Milliseconds per unit for the fixed-length units.
    fn millis(self) -> i64 {
        match self {
            Unit::Week => 7 * MS_PER_DAY,
            Unit::Day => MS_PER_DAY,
            Unit::Hour => MS_PER_HOUR,
            Unit::Minute => MS_PER_MINUTE,
            Unit::Second => MS_PER_SECOND,
            _ => 1,
        }
    }
}

/// A day of the week as days after Sunday; MongoDB accepts full names and
/// three-letter abbreviations in any case.
fn parse_day_of_week(name: &str) -> Option<u32> {
    const DAYS: [&str; 7] = [
        "sunday",
        "monday",
        "tuesday",
        "wednesday",
        "thursday",
        "friday",
        "saturday",
    ];
    let lower = name.to_ascii_lowercase();
    DAYS.iter()
        .position(|d| *d == lower || d.get(..3) == Some(lower.as_str()))
        .map(|p| p as u32)
}

/// Parses one of [`OPERATORS`].
pub(super) fn parse(key: &str, arg: RawBsonRef<'_>, ctx: ParseCtx<'_>) -> Result<Expr> {
    let adding = key == "$dateAdd" || key == "$dateSubtract";
    let RawBsonRef::Document(doc) = arg else {
        return Err(match key {
            "$dateDiff" => QueryError::location(
                5_166_301,
                "$dateDiff only supports an object as its argument",
            ),
            "$dateTrunc" => QueryError::location(
                5_439_007,
                "$dateTrunc only supports an object as its argument",
            ),
            _ => QueryError::location(
                5_166_400,
                format!("{key} expects an object as its argument"),
            ),
        });
    };
    let (allowed, required): (&[&str], &[(&str, i32)]) = match key {
        "$dateDiff" => (
            &["startDate", "endDate", "unit", "timezone", "startOfWeek"],
            &[
                ("startDate", 5_166_303),
                ("endDate", 5_166_304),
                ("unit", 5_166_305),
            ],
        ),
        "$dateTrunc" => (
            &["date", "unit", "binSize", "timezone", "startOfWeek"],
            &[("date", 5_439_009), ("unit", 5_439_010)],
        ),
        _ => (
            &["startDate", "unit", "amount", "timezone"],
            &[
                ("startDate", 5_166_402),
                ("unit", 5_166_402),
                ("amount", 5_166_402),
            ],
        ),
    };
    let args = named_fields(doc, ctx, |field| {
        if allowed.contains(&field) {
            return None;
        }
        Some(match key {
            "$dateDiff" => QueryError::location(
                5_166_302,
                format!("Unrecognized argument to $dateDiff: {field}"),
            ),
            "$dateTrunc" => QueryError::location(
                5_439_008,
                format!("Unrecognized argument to $dateTrunc: {field}"),
            ),
            _ => QueryError::location(
                5_166_401,
                format!(
                    "Unrecognized argument to {key}: {field}. Expected arguments are \
                     startDate, unit, amount, and optionally timezone."
                ),
            ),
        })
    })?;
    for (name, code) in required {
        if !args.iter().any(|(k, _)| k == name) {
            let message = if adding {
                format!("{key} requires startDate, unit, and amount to be present")
            } else {
                format!("Missing '{name}' parameter to {key}")
            };
            return Err(QueryError::location(*code, message));
        }
    }
    Ok(Expr::Named(key.to_owned(), args))
}

/// Evaluates one of [`OPERATORS`].
pub(super) fn named(name: &str, args: &Args<'_>, scope: &mut Scope<'_>) -> Result<Value> {
    match name {
        "$dateDiff" => date_diff(args, scope),
        "$dateTrunc" => date_trunc(args, scope),
        _ => date_add(name, args, scope),
    }
}

/// The `timezone` argument evaluated, or `None` (for UTC) when absent.
fn timezone_value(args: &Args<'_>, scope: &mut Scope<'_>) -> Result<Option<Value>> {
    if args.has("timezone") {
        Ok(Some(args.eval("timezone", scope)?))
    } else {
        Ok(None)
    }
}

fn zone_from(value: Option<Value>) -> Result<Zone> {
    match value {
        None => Ok(Zone::UTC),
        Some(v) => Ok(zone_of(&v)?.unwrap_or(Zone::UTC)),
    }
}

fn date(ms: i64) -> Value {
    Some(Bson::DateTime(bson::DateTime::from_millis(ms)))
}

/// `$dateAdd` and `$dateSubtract`: any null or missing argument gives null.
fn date_add(name: &str, args: &Args<'_>, scope: &mut Scope<'_>) -> Result<Value> {
    let start = args.eval("startDate", scope)?;
    let unit = args.eval("unit", scope)?;
    let amount = args.eval("amount", scope)?;
    let timezone = timezone_value(args, scope)?;
    if nullish(&start)
        || nullish(&unit)
        || nullish(&amount)
        || timezone.as_ref().is_some_and(nullish)
    {
        return Ok(Some(Bson::Null));
    }
    let start = start.as_ref().and_then(coerce_date).ok_or_else(|| {
        QueryError::location(
            5_166_403,
            format!("{name} requires startDate to be convertible to a date"),
        )
    })?;
    let Some(Bson::String(unit)) = &unit else {
        return Err(QueryError::location(
            5_166_404,
            format!("{name} expects string defining the time unit"),
        ));
    };
    let unit = Unit::parse(unit)
        .ok_or_else(|| QueryError::FailedToParse(format!("unknown time unit value: {unit}")))?;
    let amount = amount
        .as_ref()
        .and_then(|v| crate::value::as_whole_i64(super::value::to_raw(v).as_raw_bson_ref()))
        .ok_or_else(|| {
            QueryError::location(
                5_166_405,
                format!("{name} expects integer amount of time units"),
            )
        })?;
    let zone = zone_from(timezone)?;
    let amount = if name == "$dateSubtract" {
        amount.checked_neg().ok_or_else(|| {
            QueryError::location(
                6_045_000,
                format!("invalid $dateSubtract 'amount' parameter value: {amount}"),
            )
        })?
    } else {
        amount
    };
    add(start, unit, amount, zone)
        .map(date)
        .ok_or_else(|| QueryError::location(5_166_406, format!("{name} overflowed")))
}

/// `start` plus `amount` units in `zone`; `None` when the result does not fit.
fn add(start: i64, unit: Unit, amount: i64, zone: Zone) -> Option<i64> {
    let Some(per) = unit.months() else {
        return start.checked_add(amount.checked_mul(unit.millis())?);
    };
    let months = amount.checked_mul(per)?;
    let local = zone.to_local(start);
    let c = Civil::of(local);
    let total = (c.year * 12 + i64::from(c.month) - 1).checked_add(months)?;
    let year = total.div_euclid(12);
    if year.abs() > YEAR_ABS_MAX {
        return None;
    }
    let month = total.rem_euclid(12) as u32 + 1;
    let day = c.day.min(days_in_month(year, month));
    let in_day = local.rem_euclid(MS_PER_DAY);
    let days = days_from_civil(year, i64::from(month), i64::from(day));
    let local = days.checked_mul(MS_PER_DAY)?.checked_add(in_day)?;
    zone.to_utc(local)
}

/// A date argument of `$dateDiff`/`$dateTrunc`, or the operator's type error.
fn date_or(value: &Value, name: &str, field: &str, code: i32) -> Result<i64> {
    value.as_ref().and_then(coerce_date).ok_or_else(|| {
        QueryError::location(
            code,
            format!(
                "{name} requires '{field}' to be a date, but got {}",
                type_name(value)
            ),
        )
    })
}

fn unit_or(value: &Value, name: &str) -> Result<Unit> {
    let Some(Bson::String(text)) = value else {
        return Err(QueryError::location(
            5_439_013,
            format!(
                "{name} requires 'unit' to be a string, but got {}",
                type_name(value)
            ),
        ));
    };
    Unit::parse(text).ok_or_else(|| {
        QueryError::location(
            5_439_014,
            format!("{name} parameter 'unit' value cannot be recognized as a time unit: {text}"),
        )
    })
}

fn start_of_week_or(value: &Value, name: &str) -> Result<u32> {
    let Some(Bson::String(text)) = value else {
        return Err(QueryError::location(
            5_439_015,
            format!(
                "{name} requires 'startOfWeek' to be a string, but got {}",
                type_name(value)
            ),
        ));
    };
    parse_day_of_week(text).ok_or_else(|| {
        QueryError::location(
            5_439_016,
            format!(
                "{name} parameter 'startOfWeek' value cannot be recognized as a day of a week: \
                 {text}"
            ),
        )
    })
}

/// The `startOfWeek` argument when `unit` is "week": `Ok(None)` when it is
/// absent (Sunday), `Some(None)` when it is null.
fn start_of_week_value(
    args: &Args<'_>,
    scope: &mut Scope<'_>,
    unit: &Value,
) -> Result<Option<Value>> {
    let is_week = matches!(unit, Some(Bson::String(u)) if u == "week");
    if is_week && args.has("startOfWeek") {
        Ok(Some(args.eval("startOfWeek", scope)?))
    } else {
        Ok(None)
    }
}

/// `$dateDiff`: the number of unit boundaries crossed from `startDate` to
/// `endDate` in local time, as a long (manual, "$dateDiff", "Behavior").
/// Null checks come before type checks: a missing `startDate` gives null even
/// when other arguments are invalid.
fn date_diff(args: &Args<'_>, scope: &mut Scope<'_>) -> Result<Value> {
    const NAME: &str = "$dateDiff";
    let start = args.eval("startDate", scope)?;
    let end = args.eval("endDate", scope)?;
    let unit = args.eval("unit", scope)?;
    let timezone = timezone_value(args, scope)?;
    let week_start = start_of_week_value(args, scope, &unit)?;
    if nullish(&start)
        || nullish(&end)
        || nullish(&unit)
        || timezone.as_ref().is_some_and(nullish)
        || week_start.as_ref().is_some_and(nullish)
    {
        return Ok(Some(Bson::Null));
    }
    let start = date_or(&start, NAME, "startDate", 5_166_307)?;
    let end = date_or(&end, NAME, "endDate", 5_166_307)?;
    let unit = unit_or(&unit, NAME)?;
    let zone = zone_from(timezone)?;
    let week_start = match week_start {
        Some(v) => start_of_week_or(&v, NAME)?,
        None => 0,
    };
    let (a, b) = (zone.to_local(start), zone.to_local(end));
    let diff = match unit {
        Unit::Year | Unit::Quarter | Unit::Month => {
            let (ca, cb) = (Civil::of(a), Civil::of(b));
            let months = |c: Civil| c.year * 12 + i64::from(c.month) - 1;
            match unit {
                Unit::Year => i128::from(cb.year - ca.year),
                Unit::Quarter => i128::from(months(cb).div_euclid(3) - months(ca).div_euclid(3)),
                _ => i128::from(months(cb) - months(ca)),
            }
        }
        Unit::Week => {
            let week = |local: i64| {
                let days = local.div_euclid(MS_PER_DAY);
                let into_week =
                    (i64::from(weekday_from_sunday(days)) - i64::from(week_start)).rem_euclid(7);
                (days - into_week).div_euclid(7)
            };
            i128::from(week(b) - week(a))
        }
        _ => {
            let size = unit.millis();
            i128::from(b.div_euclid(size)) - i128::from(a.div_euclid(size))
        }
    };
    let diff =
        i64::try_from(diff).map_err(|_| QueryError::location(5_166_309, "$dateDiff overflowed"))?;
    Ok(Some(Bson::Int64(diff)))
}

/// `$dateTrunc`: the start of the `binSize`-unit bin holding `date`, bins
/// counted from 2000-01-01T00:00 local time (for weeks, from the first
/// `startOfWeek` day on or after it) (manual, "$dateTrunc", "binSize").
fn date_trunc(args: &Args<'_>, scope: &mut Scope<'_>) -> Result<Value> {
    const NAME: &str = "$dateTrunc";
    let value = args.eval("date", scope)?;
    let unit = args.eval("unit", scope)?;
    let bin_size = if args.has("binSize") {
        Some(args.eval("binSize", scope)?)
    } else {
        None
    };
    let timezone = timezone_value(args, scope)?;
    let week_start = start_of_week_value(args, scope, &unit)?;
    if nullish(&value)
        || nullish(&unit)
        || bin_size.as_ref().is_some_and(nullish)
        || timezone.as_ref().is_some_and(nullish)
        || week_start.as_ref().is_some_and(nullish)
    {
        return Ok(Some(Bson::Null));
    }
    let ms = date_or(&value, NAME, "date", 5_439_012)?;
    let unit = unit_or(&unit, NAME)?;
    let bin_size = match bin_size {
        None => 1,
        Some(v) => bin_size_or(&v)?,
    };
    let zone = zone_from(timezone)?;
    let week_start = match week_start {
        Some(v) => start_of_week_or(&v, NAME)?,
        None => 0,
    };
    let local = i128::from(zone.to_local(ms));
    let reference_days = days_from_civil(2000, 1, 1);
    let bin_start = if let Some(per) = unit.months() {
        let c = Civil::of(zone.to_local(ms));
        let months = i128::from((c.year - 2000) * 12 + i64::from(c.month) - 1);
        let step = i128::from(bin_size) * i128::from(per);
        let bin = months.div_euclid(step) * step;
        let year = 2000 + bin.div_euclid(12);
        let month = bin.rem_euclid(12) + 1;
        if year.abs() > i128::from(YEAR_ABS_MAX) {
            return Ok(Some(Bson::Null));
        }
        i128::from(days_from_civil(year as i64, month as i64, 1)) * i128::from(MS_PER_DAY)
    } else {
        let reference = if unit == Unit::Week {
            let ahead = (i64::from(week_start) - i64::from(weekday_from_sunday(reference_days)))
                .rem_euclid(7);
            reference_days + ahead
        } else {
            reference_days
        };
        let reference = i128::from(reference) * i128::from(MS_PER_DAY);
        let size = i128::from(bin_size) * i128::from(unit.millis());
        reference + (local - reference).div_euclid(size) * size
    };
    let bin_start =
        i64::try_from(bin_start).unwrap_or(if bin_start < 0 { i64::MIN } else { i64::MAX });
    Ok(date(zone.to_utc(bin_start).unwrap_or(bin_start)))
}

fn bin_size_or(value: &Value) -> Result<i64> {
    let size = value
        .as_ref()
        .and_then(|v| crate::value::as_whole_i64(super::value::to_raw(v).as_raw_bson_ref()))
        .ok_or_else(|| {
            QueryError::location(
                5_439_017,
                format!(
                    "$dateTrunc requires 'binSize' to be a 64-bit integer, but got value '{}' \
                     of type {}",
                    shown(value),
                    type_name(value)
                ),
            )
        })?;
    if size <= 0 {
        return Err(QueryError::location(
            5_439_018,
            format!("$dateTrunc requires 'binSize' to be greater than 0, but got value {size}"),
        ));
    }
    Ok(size)
}
