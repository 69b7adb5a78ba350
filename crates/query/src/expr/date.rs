//! The date expression operators: parts of a date (`$year` ... `$isoDayOfWeek`),
//! `$dateToString`, `$dateFromString`, `$dateToParts` and `$dateFromParts`.
//!
//! Dates are evaluated in UTC unless a `timezone` is given; only UTC and fixed
//! offsets are supported (see [`Zone`]): an Olson name such as
//! "America/New_York" is refused with 40485 "unrecognized time zone
//! identifier". The date arithmetic operators live in `date_math`.

use super::civil::{
    MS_PER_DAY, MS_PER_HOUR, MS_PER_MINUTE, MS_PER_SECOND, Zone, coerce_date, days_from_civil,
    days_from_iso,
};
use super::date_text::{DEFAULT_FORMAT, format_date, parse_date, validate_format};
use super::ops::nullish;
use super::value::type_name;
use super::{Expr, ParseCtx, Scope, Value, parse_expr};
use crate::error::QueryError;
use bson::{Bson, RawBsonRef};
use bson_canonical::compare::elements;

type Result<T> = std::result::Result<T, QueryError>;

/// The operators that extract one part of a date.
pub(super) const PART_OPERATORS: &[&str] = &[
    "$year",
    "$month",
    "$dayOfMonth",
    "$dayOfWeek",
    "$dayOfYear",
    "$hour",
    "$minute",
    "$second",
    "$millisecond",
    "$week",
    "$isoWeek",
    "$isoWeekYear",
    "$isoDayOfWeek",
];

/// The date operators with named arguments handled in this module.
const NAMED_OPERATORS: &[&str] = &[
    "$dateToString",
    "$dateFromString",
    "$dateToParts",
    "$dateFromParts",
];

/// Whether `name` is a date operator evaluated by [`named`] (or `date_math`).
pub(super) fn is_named(name: &str) -> bool {
    PART_OPERATORS.contains(&name)
        || NAMED_OPERATORS.contains(&name)
        || super::date_math::OPERATORS.contains(&name)
}

/// A value as MongoDB prints it in messages.
pub(super) fn shown(v: &Value) -> String {
    match v {
        None => "missing".to_owned(),
        Some(Bson::String(s)) => format!("\"{s}\""),
        Some(other) => other.to_string(),
    }
}

/// Parses a date operator.
pub(super) fn parse(key: &str, arg: RawBsonRef<'_>, ctx: ParseCtx<'_>) -> Result<Expr> {
    if PART_OPERATORS.contains(&key) {
        return parse_part(key, arg, ctx);
    }
    if super::date_math::OPERATORS.contains(&key) {
        return super::date_math::parse(key, arg, ctx);
    }
    let (allowed, not_object, unknown): (&[&str], _, _) = match key {
        "$dateToString" => (
            &["date", "format", "timezone", "onNull"],
            QueryError::location(
                18629,
                "$dateToString only supports an object as its argument",
            ),
            18534,
        ),
        "$dateFromString" => (
            &["dateString", "format", "timezone", "onNull", "onError"],
            QueryError::location(
                40540,
                format!(
                    "$dateFromString only supports an object as an argument, found: {}",
                    raw_type_name(arg)
                ),
            ),
            40541,
        ),
        "$dateToParts" => (
            &["date", "timezone", "iso8601"],
            QueryError::location(
                40524,
                "$dateToParts only supports an object as its argument",
            ),
            40520,
        ),
        _ => (
            &[
                "year",
                "month",
                "day",
                "hour",
                "minute",
                "second",
                "millisecond",
                "isoWeekYear",
                "isoWeek",
                "isoDayOfWeek",
                "timezone",
            ],
            QueryError::location(
                40519,
                "$dateFromParts only supports an object as its argument",
            ),
            40518,
        ),
    };
    let RawBsonRef::Document(doc) = arg else {
        return Err(not_object);
    };
    let args = named_fields(doc, ctx, |field| {
        if allowed.contains(&field) {
            None
        } else {
            Some(QueryError::location(
                unknown,
                format!("Unrecognized argument to {key}: {field}"),
            ))
        }
    })?;
    let has = |k: &str| args.iter().any(|(name, _)| name == k);
    match key {
        "$dateToString" => {
            if !has("date") {
                return Err(QueryError::location(
                    18628,
                    "Missing 'date' parameter to $dateToString",
                ));
            }
            if let Some((_, Expr::Literal(Bson::String(format)))) =
                args.iter().find(|(k, _)| k == "format")
            {
                validate_format(format)?;
            }
        }
        "$dateFromString" => {
            if !has("dateString") {
                return Err(QueryError::location(
                    40542,
                    "Missing 'dateString' parameter to $dateFromString",
                ));
            }
            if let Some((_, Expr::Literal(Bson::String(format)))) =
                args.iter().find(|(k, _)| k == "format")
            {
                super::date_text::validate_parse_format(format)?;
            }
        }
        "$dateToParts" => {
            if !has("date") {
                return Err(QueryError::location(
                    40522,
                    "Missing 'date' parameter to $dateToParts",
                ));
            }
        }
        _ => {
            let natural = ["year", "month", "day"].iter().any(|k| has(k));
            let iso = ["isoWeekYear", "isoWeek", "isoDayOfWeek"]
                .iter()
                .any(|k| has(k));
            if natural && iso {
                return Err(QueryError::location(
                    40489,
                    "$dateFromParts does not allow mixing natural dates with ISO dates",
                ));
            }
            if !has("year") && !has("isoWeekYear") {
                return Err(QueryError::location(
                    40516,
                    "$dateFromParts requires either 'year' or 'isoWeekYear' to be present",
                ));
            }
        }
    }
    Ok(Expr::Named(key.to_owned(), args))
}

fn raw_type_name(arg: RawBsonRef<'_>) -> &'static str {
    crate::filter::types::type_name(crate::filter::types::type_code(&arg))
}

/// The fields of a named-argument document, parsed; `refuse` names the error
/// for a field the operator does not take.
pub(super) fn named_fields(
    doc: &bson::RawDocument,
    ctx: ParseCtx<'_>,
    refuse: impl Fn(&str) -> Option<QueryError>,
) -> Result<Vec<(String, Expr)>> {
    let mut out = Vec::new();
    for (key, value) in elements(doc) {
        if let Some(error) = refuse(key) {
            return Err(error);
        }
        out.push((key.to_owned(), parse_expr(value, ctx.nested())?));
    }
    Ok(out)
}

/// `{$year: <date>}`, `{$year: [<date>]}` or `{$year: {date, timezone}}`.
fn parse_part(key: &str, arg: RawBsonRef<'_>, ctx: ParseCtx<'_>) -> Result<Expr> {
    match arg {
        RawBsonRef::Document(doc)
            if !elements(doc)
                .next()
                .is_some_and(|(first, _)| first.starts_with('$')) =>
        {
            let args = named_fields(doc, ctx, |field| {
                if field == "date" || field == "timezone" {
                    None
                } else {
                    Some(QueryError::location(
                        40535,
                        format!("unrecognized option to {key}: \"{field}\""),
                    ))
                }
            })?;
            if !args.iter().any(|(k, _)| k == "date") {
                return Err(QueryError::location(
                    40539,
                    format!(
                        "missing 'date' argument to {key}, provided: {}",
                        shown_doc(doc)
                    ),
                ));
            }
            Ok(Expr::Named(key.to_owned(), args))
        }
        RawBsonRef::Array(items) => {
            let items: Vec<_> = bson_canonical::compare::array_values(items).collect();
            let [only] = items.as_slice() else {
                return Err(QueryError::location(
                    40536,
                    format!(
                        "{key} accepts exactly one argument if given an array, but was given {}",
                        items.len()
                    ),
                ));
            };
            let date = parse_expr(*only, ctx.nested())?;
            Ok(Expr::Named(key.to_owned(), vec![("date".to_owned(), date)]))
        }
        other => {
            let date = parse_expr(other, ctx.nested())?;
            Ok(Expr::Named(key.to_owned(), vec![("date".to_owned(), date)]))
        }
    }
}

fn shown_doc(doc: &bson::RawDocument) -> String {
    bson::Document::try_from(doc).map_or_else(|_| "{}".to_owned(), |d| d.to_string())
}

/// Named arguments during evaluation.
pub(super) struct Args<'a> {
    args: &'a [(String, Expr)],
}

impl<'a> Args<'a> {
    pub(super) fn new(args: &'a [(String, Expr)]) -> Args<'a> {
        Args { args }
    }

    pub(super) fn has(&self, key: &str) -> bool {
        self.args.iter().any(|(k, _)| k == key)
    }

    /// The value of argument `key`; missing when it is absent.
    pub(super) fn eval(&self, key: &str, scope: &mut Scope<'_>) -> Result<Value> {
        match self.args.iter().find(|(k, _)| k == key) {
            Some((_, e)) => e.eval(scope),
            None => Ok(None),
        }
    }

    /// The zone of the `timezone` argument: UTC when absent, `None` when it is
    /// null or missing (the operator then gives null).
    pub(super) fn zone(&self, scope: &mut Scope<'_>) -> Result<Option<Zone>> {
        if !self.has("timezone") {
            return Ok(Some(Zone::UTC));
        }
        zone_of(&self.eval("timezone", scope)?)
    }
}

/// The zone a `timezone` value names; `None` for null or missing.
pub(super) fn zone_of(value: &Value) -> Result<Option<Zone>> {
    match value {
        _ if nullish(value) => Ok(None),
        Some(Bson::String(name)) => Zone::parse(name).map(Some),
        _ => Err(QueryError::location(
            40517,
            format!(
                "timezone must evaluate to a string, found {}",
                type_name(value)
            ),
        )),
    }
}

/// A date argument as milliseconds, or MongoDB's 16006.
pub(super) fn date_arg(value: &Value) -> Result<i64> {
    value.as_ref().and_then(coerce_date).ok_or_else(|| {
        QueryError::location(
            16006,
            format!("can't convert from BSON type {} to Date", type_name(value)),
        )
    })
}

/// Evaluates a date operator.
pub(super) fn named(name: &str, args: &[(String, Expr)], scope: &mut Scope<'_>) -> Result<Value> {
    let args = Args::new(args);
    match name {
        "$dateToString" => date_to_string(&args, scope),
        "$dateFromString" => date_from_string(&args, scope),
        "$dateToParts" => date_to_parts(&args, scope),
        "$dateFromParts" => date_from_parts(&args, scope),
        _ if PART_OPERATORS.contains(&name) => part(name, &args, scope),
        _ => super::date_math::named(name, &args, scope),
    }
}

fn part(name: &str, args: &Args<'_>, scope: &mut Scope<'_>) -> Result<Value> {
    let date = args.eval("date", scope)?;
    if nullish(&date) {
        return Ok(Some(Bson::Null));
    }
    let Some(zone) = args.zone(scope)? else {
        return Ok(Some(Bson::Null));
    };
    let c = zone.civil(date_arg(&date)?);
    let int = |v: u32| Bson::Int32(v as i32);
    Ok(Some(match name {
        "$year" => Bson::Int32(year_i32(c.year)),
        "$month" => int(c.month),
        "$dayOfMonth" => int(c.day),
        "$dayOfWeek" => int(c.day_of_week()),
        "$dayOfYear" => int(c.day_of_year()),
        "$hour" => int(c.hour),
        "$minute" => int(c.minute),
        "$second" => int(c.second),
        "$millisecond" => int(c.millisecond),
        "$week" => int(c.week()),
        "$isoWeek" => int(c.iso_week().1),
        // MongoDB returns the ISO week-numbering year as a long.
        "$isoWeekYear" => Bson::Int64(c.iso_week().0),
        _ => int(c.iso_day_of_week()),
    }))
}

/// Years of dates in `i64` milliseconds fit in an `i32` (about ±292 million).
fn year_i32(year: i64) -> i32 {
    i32::try_from(year).unwrap_or(if year < 0 { i32::MIN } else { i32::MAX })
}

/// `$dateToString`: `format` null gives null before anything else is checked,
/// then the zone, then `onNull` for a null date (manual, "$dateToString").
fn date_to_string(args: &Args<'_>, scope: &mut Scope<'_>) -> Result<Value> {
    let date = args.eval("date", scope)?;
    let format = if args.has("format") {
        let format = args.eval("format", scope)?;
        if nullish(&format) {
            return Ok(Some(Bson::Null));
        }
        Some(format)
    } else {
        None
    };
    let Some(zone) = args.zone(scope)? else {
        return Ok(Some(Bson::Null));
    };
    if nullish(&date) {
        return if args.has("onNull") {
            args.eval("onNull", scope)
        } else {
            Ok(Some(Bson::Null))
        };
    }
    let format = match &format {
        None => DEFAULT_FORMAT,
        Some(Some(Bson::String(f))) => f.as_str(),
        Some(other) => {
            return Err(QueryError::location(
                18533,
                format!(
                    "$dateToString requires that 'format' be a string, found: {} with value {}",
                    type_name(other),
                    shown(other)
                ),
            ));
        }
    };
    let ms = date_arg(&date)?;
    Ok(Some(Bson::String(format_date(format, ms, zone)?)))
}

/// `$dateFromString`: parse failures (ConversionFailure) go to `onError`; a
/// null `dateString` gives `onNull`; a null `format` or `timezone` gives null.
fn date_from_string(args: &Args<'_>, scope: &mut Scope<'_>) -> Result<Value> {
    let text = args.eval("dateString", scope)?;
    let zone = if args.has("timezone") {
        match zone_of(&args.eval("timezone", scope)?)? {
            Some(zone) => Some(zone),
            None => return Ok(Some(Bson::Null)),
        }
    } else {
        None
    };
    let format = if args.has("format") {
        match args.eval("format", scope)? {
            f if nullish(&f) => return Ok(Some(Bson::Null)),
            Some(Bson::String(f)) => {
                super::date_text::validate_parse_format(&f)?;
                Some(f)
            }
            other => {
                return Err(QueryError::location(
                    40684,
                    format!(
                        "$dateFromString requires that 'format' be a string, found: {} with \
                         value {}",
                        type_name(&other),
                        shown(&other)
                    ),
                ));
            }
        }
    } else {
        None
    };
    if nullish(&text) {
        return if args.has("onNull") {
            args.eval("onNull", scope)
        } else {
            Ok(Some(Bson::Null))
        };
    }
    let parsed = match &text {
        Some(Bson::String(s)) => parse_date(s, format.as_deref(), zone),
        other => Err(QueryError::ConversionFailure(format!(
            "$dateFromString requires that 'dateString' be a string, found: {} with value {}",
            type_name(other),
            shown(other)
        ))),
    };
    match parsed {
        Ok(ms) => Ok(Some(Bson::DateTime(bson::DateTime::from_millis(ms)))),
        Err(QueryError::ConversionFailure(_)) if args.has("onError") => args.eval("onError", scope),
        Err(e) => Err(e),
    }
}

fn date_to_parts(args: &Args<'_>, scope: &mut Scope<'_>) -> Result<Value> {
    let date = args.eval("date", scope)?;
    let Some(zone) = args.zone(scope)? else {
        return Ok(Some(Bson::Null));
    };
    let iso = if args.has("iso8601") {
        match args.eval("iso8601", scope)? {
            v if nullish(&v) => return Ok(Some(Bson::Null)),
            Some(Bson::Boolean(b)) => b,
            other => {
                return Err(QueryError::location(
                    40521,
                    format!(
                        "iso8601 must evaluate to a bool, found {}",
                        type_name(&other)
                    ),
                ));
            }
        }
    } else {
        false
    };
    if nullish(&date) {
        return Ok(Some(Bson::Null));
    }
    let c = zone.civil(date_arg(&date)?);
    let int = |v: u32| Bson::Int32(v as i32);
    let mut out = bson::Document::new();
    if iso {
        let (iso_year, iso_week) = c.iso_week();
        out.insert("isoWeekYear", Bson::Int32(year_i32(iso_year)));
        out.insert("isoWeek", int(iso_week));
        out.insert("isoDayOfWeek", int(c.iso_day_of_week()));
    } else {
        out.insert("year", Bson::Int32(year_i32(c.year)));
        out.insert("month", int(c.month));
        out.insert("day", int(c.day));
    }
    out.insert("hour", int(c.hour));
    out.insert("minute", int(c.minute));
    out.insert("second", int(c.second));
    out.insert("millisecond", int(c.millisecond));
    Ok(Some(Bson::Document(out)))
}

/// One `$dateFromParts` part: absent gives `default`, null gives `None`.
fn date_part(
    args: &Args<'_>,
    scope: &mut Scope<'_>,
    key: &str,
    default: i64,
) -> Result<Option<i64>> {
    if !args.has(key) {
        return Ok(Some(default));
    }
    let value = args.eval(key, scope)?;
    if nullish(&value) {
        return Ok(None);
    }
    let number = value
        .as_ref()
        .and_then(|v| crate::value::as_whole_i64(super::value::to_raw(v).as_raw_bson_ref()))
        .ok_or_else(|| {
            QueryError::location(
                40515,
                format!(
                    "'{key}' must evaluate to an integer, found {} with value {}",
                    type_name(&value),
                    shown(&value)
                ),
            )
        })?;
    let (low, high, code, text) = match key {
        "year" => (1, 9999, 40523, "in the range 1 to 9999"),
        "isoWeekYear" => (1, 9999, 31095, "in the range 1 to 9999"),
        _ => (-32768, 32767, 31034, ""),
    };
    if !(low..=high).contains(&number) {
        let message = if code == 31034 {
            format!(
                "'{key}' must evaluate to a value in the range [-32768, 32767]; value {number} \
                 is not in range"
            )
        } else {
            format!("'{key}' must evaluate to an integer {text}, found {number}")
        };
        return Err(QueryError::location(code, message));
    }
    Ok(Some(number))
}

/// `$dateFromParts`: out-of-range months, days and times carry into the next
/// larger unit (manual, "$dateFromParts", "Value Range").
fn date_from_parts(args: &Args<'_>, scope: &mut Scope<'_>) -> Result<Value> {
    let iso = args.has("isoWeekYear");
    let keys: [(&str, i64); 7] = if iso {
        [
            ("isoWeekYear", 0),
            ("isoWeek", 1),
            ("isoDayOfWeek", 1),
            ("hour", 0),
            ("minute", 0),
            ("second", 0),
            ("millisecond", 0),
        ]
    } else {
        [
            ("year", 0),
            ("month", 1),
            ("day", 1),
            ("hour", 0),
            ("minute", 0),
            ("second", 0),
            ("millisecond", 0),
        ]
    };
    let mut parts = [0_i64; 7];
    let mut null = false;
    for (slot, (key, default)) in parts.iter_mut().zip(keys) {
        match date_part(args, scope, key, default)? {
            Some(v) => *slot = v,
            None => null = true,
        }
    }
    let Some(zone) = args.zone(scope)? else {
        return Ok(Some(Bson::Null));
    };
    if null {
        return Ok(Some(Bson::Null));
    }
    let [a, b, c, hour, minute, second, millisecond] = parts;
    let days = if iso {
        days_from_iso(a, b, c)
    } else {
        let months = a * 12 + (b - 1);
        days_from_civil(months.div_euclid(12), months.rem_euclid(12) + 1, 1) + (c - 1)
    };
    let local = days * MS_PER_DAY
        + hour * MS_PER_HOUR
        + minute * MS_PER_MINUTE
        + second * MS_PER_SECOND
        + millisecond;
    let utc = zone.to_utc(local).unwrap_or(local);
    Ok(Some(Bson::DateTime(bson::DateTime::from_millis(utc))))
}
