//! Dates as text: `$dateToString`'s format specifiers and `$dateFromString`'s parser.
//!
//! Formatting follows MongoDB's `%` specifiers (manual, "$dateToString",
//! "Format Specifiers"). Parsing without a format accepts ISO 8601 dates as
//! MongoDB writes them: `YYYY-MM-DD`, optionally followed by `T` or a space and
//! `HH:MM`, `HH:MM:SS` or `HH:MM:SS.fff`, optionally followed by `Z` or an offset
//! (`+HH`, `+HHMM`, `+HH:MM`). MongoDB's parser (timelib) also reads free-form
//! dates such as "July 4th, 2017" and Olson zone names inside the string; those
//! are refused here with ConversionFailure (241), which `onError` catches.

use super::civil::{
    Civil, MS_PER_DAY, MS_PER_HOUR, MS_PER_MINUTE, MS_PER_SECOND, Zone, days_from_civil,
    days_from_iso, days_in_month, parse_offset,
};
use crate::error::QueryError;
use std::fmt::Write as _;

type Result<T> = std::result::Result<T, QueryError>;

/// `$dateToString`'s format when none is given, and `$toString`'s for dates.
pub(crate) const DEFAULT_FORMAT: &str = "%Y-%m-%dT%H:%M:%S.%LZ";

const MONTH_NAMES: [&str; 12] = [
    "January",
    "February",
    "March",
    "April",
    "May",
    "June",
    "July",
    "August",
    "September",
    "October",
    "November",
    "December",
];

/// The specifiers `$dateToString` knows.
const FORMAT_SPECIFIERS: &str = "dGHjLmMSwuUVYzZbB%";

/// Checks a `$dateToString` format: every `%` is followed by a known specifier.
pub(crate) fn validate_format(format: &str) -> Result<()> {
    check_specifiers(format, FORMAT_SPECIFIERS)
}

/// Every `%` in `format` is followed by one of `known` (18535 for a trailing `%`, 18536
/// for another character).
fn check_specifiers(format: &str, known: &str) -> Result<()> {
    let mut chars = format.chars();
    while let Some(c) = chars.next() {
        if c != '%' {
            continue;
        }
        match chars.next() {
            None => {
                return Err(QueryError::location(
                    18535,
                    "Unmatched '%' at end of format string",
                ));
            }
            Some(spec) if known.contains(spec) => {}
            Some(spec) => {
                return Err(QueryError::location(
                    18536,
                    format!("Invalid format character '%{spec}' in format string"),
                ));
            }
        }
    }
    Ok(())
}

/// Formats the instant `utc_ms` in `zone` with `format` (18535/18536 for a bad
/// specifier, 18537 for a year `%Y` cannot write).
pub(crate) fn format_date(format: &str, utc_ms: i64, zone: Zone) -> Result<String> {
    validate_format(format)?;
    let c = zone.civil(utc_ms);
    let mut out = String::with_capacity(format.len() + 16);
    let mut chars = format.chars();
    while let Some(ch) = chars.next() {
        if ch != '%' {
            out.push(ch);
            continue;
        }
        let Some(spec) = chars.next() else {
            break;
        };
        if spec == 'Y' && !(0..=9999).contains(&c.year) {
            // MongoDB refuses a year `%Y` cannot hold in four digits; other
            // specifiers still format such a date.
            return Err(QueryError::location(
                18537,
                format!(
                    "$dateToString is only defined on year 0-9999, tried to use year {}",
                    c.year
                ),
            ));
        }
        write_specifier(&mut out, spec, &c, zone);
    }
    Ok(out)
}

fn write_specifier(out: &mut String, spec: char, c: &Civil, zone: Zone) {
    let month_name = MONTH_NAMES
        .get(c.month as usize - 1)
        .copied()
        .unwrap_or_default();
    // Writing to a String cannot fail.
    let _ = match spec {
        'd' => write!(out, "{:02}", c.day),
        'G' => write!(out, "{:04}", c.iso_week().0),
        'H' => write!(out, "{:02}", c.hour),
        'j' => write!(out, "{:03}", c.day_of_year()),
        'L' => write!(out, "{:03}", c.millisecond),
        'm' => write!(out, "{:02}", c.month),
        'M' => write!(out, "{:02}", c.minute),
        'S' => write!(out, "{:02}", c.second),
        'w' => write!(out, "{}", c.day_of_week()),
        'u' => write!(out, "{}", c.iso_day_of_week()),
        'U' => write!(out, "{:02}", c.week()),
        'V' => write!(out, "{:02}", c.iso_week().1),
        'Y' => write!(out, "{:04}", c.year),
        'z' => {
            let minutes = zone.offset_ms() / MS_PER_MINUTE;
            let sign = if minutes < 0 { '-' } else { '+' };
            let minutes = minutes.abs();
            write!(out, "{sign}{:02}{:02}", minutes / 60, minutes % 60)
        }
        'Z' => write!(out, "{}", zone.offset_ms() / MS_PER_MINUTE),
        'b' => write!(out, "{}", month_name.get(..3).unwrap_or_default()),
        'B' => write!(out, "{month_name}"),
        _ => write!(out, "%"),
    };
}

/// A `$dateFromString` parse failure (ConversionFailure, which `onError` catches).
fn parse_error(text: &str, detail: &str) -> QueryError {
    QueryError::ConversionFailure(format!("Error parsing date string '{text}'; {detail}"))
}

/// The fields a date string sets.
#[derive(Debug, Default)]
struct Fields {
    year: Option<i64>,
    month: Option<i64>,
    day: Option<i64>,
    day_of_year: Option<i64>,
    iso_year: Option<i64>,
    iso_week: Option<i64>,
    iso_day: Option<i64>,
    hour: i64,
    minute: i64,
    second: i64,
    millisecond: i64,
    offset_ms: Option<i64>,
}

/// A cursor over the date string.
struct Cursor<'t> {
    text: &'t str,
    at: usize,
}

impl Cursor<'_> {
    fn peek(&self) -> Option<u8> {
        self.text.as_bytes().get(self.at).copied()
    }

    fn eat(&mut self, byte: u8) -> bool {
        if self.peek() == Some(byte) {
            self.at += 1;
            true
        } else {
            false
        }
    }

    /// Between 1 and `max` digits.
    fn digits(&mut self, max: usize, what: &str) -> Result<i64> {
        let start = self.at;
        while self.at - start < max && self.peek().is_some_and(|b| b.is_ascii_digit()) {
            self.at += 1;
        }
        let digits = self.text.get(start..self.at).unwrap_or_default();
        if digits.is_empty() {
            return Err(parse_error(
                self.text,
                &format!("{start}: Unexpected data found, expected {what}"),
            ));
        }
        digits
            .parse()
            .map_err(|_| parse_error(self.text, "number out of range"))
    }

    /// Exactly `count` digits.
    fn fixed(&mut self, count: usize, what: &str) -> Result<i64> {
        let start = self.at;
        let value = self.digits(count, what)?;
        if self.at - start != count {
            return Err(parse_error(
                self.text,
                &format!("{start}: Unexpected data found, expected {what}"),
            ));
        }
        Ok(value)
    }

    /// A fraction of a second after the dot, as milliseconds (extra digits dropped).
    fn fraction(&mut self) -> Result<i64> {
        let start = self.at;
        while self.peek().is_some_and(|b| b.is_ascii_digit()) {
            self.at += 1;
        }
        let digits = self.text.get(start..self.at).unwrap_or_default();
        if digits.is_empty() {
            return Err(parse_error(
                self.text,
                "Unexpected data found, expected digits",
            ));
        }
        let mut padded: String = digits.chars().take(3).collect();
        while padded.len() < 3 {
            padded.push('0');
        }
        padded
            .parse()
            .map_err(|_| parse_error(self.text, "number out of range"))
    }

    /// `Z` or a numeric offset, up to the end of the string.
    fn zone(&mut self) -> Result<i64> {
        if self.eat(b'Z') {
            return Ok(0);
        }
        let rest = self.text.get(self.at..).unwrap_or_default();
        let end = rest
            .find(|c: char| !(c.is_ascii_digit() || c == ':' || c == '+' || c == '-'))
            .unwrap_or(rest.len());
        let candidate = rest.get(..end).unwrap_or_default();
        let offset = parse_offset(candidate).ok_or_else(|| {
            parse_error(
                self.text,
                &format!(
                    "{}: The timezone could not be found in the database",
                    self.at
                ),
            )
        })?;
        self.at += end;
        Ok(offset)
    }
}

/// Parses `text` as an ISO 8601 date (no format given).
fn parse_iso(text: &str) -> Result<Fields> {
    let mut cur = Cursor { text, at: 0 };
    let mut fields = Fields::default();
    let negative = cur.eat(b'-');
    let year = cur.fixed(4, "4 digit year")?;
    fields.year = Some(if negative { -year } else { year });
    expect(&mut cur, b'-')?;
    fields.month = Some(cur.fixed(2, "2 digit month")?);
    expect(&mut cur, b'-')?;
    fields.day = Some(cur.fixed(2, "2 digit day")?);
    if cur.eat(b'T') || cur.eat(b' ') {
        fields.hour = cur.fixed(2, "2 digit hour")?;
        expect(&mut cur, b':')?;
        fields.minute = cur.fixed(2, "2 digit minute")?;
        if cur.eat(b':') {
            fields.second = cur.fixed(2, "2 digit second")?;
            if cur.eat(b'.') {
                fields.millisecond = cur.fraction()?;
            }
        }
        if cur.peek().is_some() {
            fields.offset_ms = Some(cur.zone()?);
        }
    }
    if cur.at != text.len() {
        return Err(parse_error(text, &format!("{}: Trailing data", cur.at)));
    }
    Ok(fields)
}

fn expect(cur: &mut Cursor<'_>, byte: u8) -> Result<()> {
    if cur.eat(byte) {
        Ok(())
    } else {
        Err(parse_error(
            cur.text,
            &format!(
                "{}: Unexpected data found, expected '{}'",
                cur.at,
                char::from(byte)
            ),
        ))
    }
}

/// Checks a `$dateFromString` format (code 18536 for an unknown specifier,
/// 18535 for a trailing `%`).
pub(crate) fn validate_parse_format(format: &str) -> Result<()> {
    check_specifiers(format, "dGHjLmMSuVYzZ%")
}

/// Parses `text` with a `$dateFromString` format (already validated).
fn parse_with_format(text: &str, format: &str) -> Result<Fields> {
    let mut cur = Cursor { text, at: 0 };
    let mut fields = Fields::default();
    let mut specs = format.chars();
    while let Some(f) = specs.next() {
        if f != '%' {
            let mut buf = [0u8; 4];
            for &b in f.encode_utf8(&mut buf).as_bytes() {
                expect(&mut cur, b)?;
            }
            continue;
        }
        let Some(spec) = specs.next() else {
            break;
        };
        match spec {
            'Y' => fields.year = Some(cur.digits(4, "4 digit year")?),
            'm' => fields.month = Some(cur.digits(2, "2 digit month")?),
            'd' => fields.day = Some(cur.digits(2, "2 digit day")?),
            'j' => fields.day_of_year = Some(cur.digits(3, "3 digit day of year")?),
            'H' => fields.hour = cur.digits(2, "2 digit hour")?,
            'M' => fields.minute = cur.digits(2, "2 digit minute")?,
            'S' => fields.second = cur.digits(2, "2 digit second")?,
            'L' => fields.millisecond = cur.fraction()?,
            'G' => fields.iso_year = Some(cur.digits(4, "4 digit ISO year")?),
            'V' => fields.iso_week = Some(cur.digits(2, "2 digit ISO week")?),
            'u' => fields.iso_day = Some(cur.digits(1, "1 digit day of week")?),
            'z' | 'Z' => fields.offset_ms = Some(cur.zone()?),
            _ => expect(&mut cur, b'%')?,
        }
    }
    if cur.at != text.len() {
        return Err(parse_error(text, &format!("{}: Trailing data", cur.at)));
    }
    Ok(fields)
}

/// Parses a date string into milliseconds since the epoch.
///
/// `zone` is the `timezone` argument (`None` when absent): it places a string
/// without an offset, and may not be combined with a string that has one.
pub(crate) fn parse_date(text: &str, format: Option<&str>, zone: Option<Zone>) -> Result<i64> {
    let fields = match format {
        Some(format) => parse_with_format(text, format)?,
        None => parse_iso(text)?,
    };
    let local = local_ms(text, &fields)?;
    let offset = match (fields.offset_ms, zone) {
        (Some(_), Some(_)) => {
            return Err(QueryError::ConversionFailure(format!(
                "you cannot pass in a date/time string with time zone information ('{text}') \
                 together with a timezone argument"
            )));
        }
        (Some(offset), None) => offset,
        (None, Some(zone)) => zone.offset_ms(),
        (None, None) => 0,
    };
    Zone::fixed(offset)
        .to_utc(local)
        .ok_or_else(|| parse_error(text, "date out of range"))
}

/// The local milliseconds the parsed fields name, checking each is in range.
fn local_ms(text: &str, f: &Fields) -> Result<i64> {
    let invalid = || parse_error(text, "The parsed date was invalid");
    if f.hour > 23 || f.minute > 59 || f.second > 59 {
        return Err(invalid());
    }
    let days = if let Some(iso_year) = f.iso_year {
        let week = f.iso_week.unwrap_or(1);
        let day = f.iso_day.unwrap_or(1);
        if !(1..=53).contains(&week) || !(1..=7).contains(&day) {
            return Err(invalid());
        }
        days_from_iso(iso_year, week, day)
    } else {
        let Some(year) = f.year else {
            return Err(parse_error(text, "the date string names no year"));
        };
        if let Some(day_of_year) = f.day_of_year {
            let length = if super::civil::is_leap(year) {
                366
            } else {
                365
            };
            if !(1..=length).contains(&day_of_year) {
                return Err(invalid());
            }
            days_from_civil(year, 1, 1) + day_of_year - 1
        } else {
            let month = f.month.unwrap_or(1);
            let day = f.day.unwrap_or(1);
            if !(1..=12).contains(&month)
                || day < 1
                || day > i64::from(days_in_month(year, month as u32))
            {
                return Err(invalid());
            }
            days_from_civil(year, month, day)
        }
    };
    Ok(days * MS_PER_DAY
        + f.hour * MS_PER_HOUR
        + f.minute * MS_PER_MINUTE
        + f.second * MS_PER_SECOND
        + f.millisecond)
}
