//! Proleptic Gregorian calendar arithmetic on milliseconds since the epoch, and the
//! fixed-offset time zones the date operators accept.
//!
//! Dates are `i64` milliseconds since 1970-01-01T00:00:00Z, negative before it, and
//! the calendar is the proleptic Gregorian one with a year 0 (astronomical year
//! numbering, as MongoDB's `$year` reports it). Day arithmetic follows Howard
//! Hinnant's `days_from_civil` / `civil_from_days` ("chrono-Compatible Low-Level
//! Date Algorithms"), which is exact over the whole `i64` day range we reach.

use crate::error::QueryError;
use bson::Bson;

pub(crate) const MS_PER_SECOND: i64 = 1_000;
pub(crate) const MS_PER_MINUTE: i64 = 60 * MS_PER_SECOND;
pub(crate) const MS_PER_HOUR: i64 = 60 * MS_PER_MINUTE;
pub(crate) const MS_PER_DAY: i64 = 24 * MS_PER_HOUR;

/// The largest year magnitude month arithmetic works with: beyond it no date
/// fits in `i64` milliseconds (about 292 million years either side of 1970).
pub(crate) const YEAR_ABS_MAX: i64 = 300_000_000;

/// Days from 1970-01-01 to `year-month-day` (`month` 1..=12, `day` 1..=31).
pub(crate) fn days_from_civil(year: i64, month: i64, day: i64) -> i64 {
    debug_assert!((1..=12).contains(&month), "month {month}");
    let y = if month <= 2 { year - 1 } else { year };
    let era = y.div_euclid(400);
    let year_of_era = y - era * 400;
    let month_from_march = (month + 9) % 12;
    let day_of_year = (153 * month_from_march + 2) / 5 + day - 1;
    let day_of_era = year_of_era * 365 + year_of_era / 4 - year_of_era / 100 + day_of_year;
    era * 146_097 + day_of_era - 719_468
}

/// The civil date `days` after 1970-01-01: (year, month 1..=12, day 1..=31).
pub(crate) fn civil_from_days(days: i64) -> (i64, u32, u32) {
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let day_of_era = z - era * 146_097;
    let year_of_era =
        (day_of_era - day_of_era / 1_460 + day_of_era / 36_524 - day_of_era / 146_096) / 365;
    let day_of_year = day_of_era - (365 * year_of_era + year_of_era / 4 - year_of_era / 100);
    let month_from_march = (5 * day_of_year + 2) / 153;
    let day = day_of_year - (153 * month_from_march + 2) / 5 + 1;
    let month = if month_from_march < 10 {
        month_from_march + 3
    } else {
        month_from_march - 9
    };
    let year = year_of_era + era * 400 + i64::from(month <= 2);
    (year, month as u32, day as u32)
}

/// Whether `year` has a February 29th.
pub(crate) fn is_leap(year: i64) -> bool {
    year.rem_euclid(4) == 0 && (year.rem_euclid(100) != 0 || year.rem_euclid(400) == 0)
}

/// The number of days in `month` (1..=12) of `year`.
pub(crate) fn days_in_month(year: i64, month: u32) -> u32 {
    match month {
        2 if is_leap(year) => 29,
        2 => 28,
        4 | 6 | 9 | 11 => 30,
        _ => 31,
    }
}

/// The broken-down local time of one instant.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Civil {
    pub(crate) year: i64,
    pub(crate) month: u32,
    pub(crate) day: u32,
    pub(crate) hour: u32,
    pub(crate) minute: u32,
    pub(crate) second: u32,
    pub(crate) millisecond: u32,
    /// Days since 1970-01-01 (local).
    pub(crate) days: i64,
}

impl Civil {
    /// The civil time of `local_ms` (milliseconds since the local epoch).
    pub(crate) fn of(local_ms: i64) -> Civil {
        let days = local_ms.div_euclid(MS_PER_DAY);
        let in_day = local_ms.rem_euclid(MS_PER_DAY);
        let (year, month, day) = civil_from_days(days);
        Civil {
            year,
            month,
            day,
            hour: (in_day / MS_PER_HOUR) as u32,
            minute: (in_day % MS_PER_HOUR / MS_PER_MINUTE) as u32,
            second: (in_day % MS_PER_MINUTE / MS_PER_SECOND) as u32,
            millisecond: (in_day % MS_PER_SECOND) as u32,
            days,
        }
    }

    /// Days since the last Sunday: 0 for Sunday .. 6 for Saturday (1970-01-01 was a Thursday).
    pub(crate) fn weekday_from_sunday(&self) -> u32 {
        weekday_from_sunday(self.days)
    }

    /// `$dayOfWeek`: 1 for Sunday .. 7 for Saturday.
    pub(crate) fn day_of_week(&self) -> u32 {
        self.weekday_from_sunday() + 1
    }

    /// `$isoDayOfWeek`: 1 for Monday .. 7 for Sunday.
    pub(crate) fn iso_day_of_week(&self) -> u32 {
        match self.weekday_from_sunday() {
            0 => 7,
            w => w,
        }
    }

    /// `$dayOfYear`: 1 ..= 366.
    pub(crate) fn day_of_year(&self) -> u32 {
        (self.days - days_from_civil(self.year, 1, 1) + 1) as u32
    }

    /// `$week` and `%U`: weeks begin on Sunday; days before the year's first
    /// Sunday are in week 0 (0 ..= 53).
    pub(crate) fn week(&self) -> u32 {
        (self.day_of_year() - 1 + 7 - self.weekday_from_sunday()) / 7
    }

    /// ISO 8601 week-numbering year and week (1 ..= 53): the week belongs to the
    /// year that holds its Thursday.
    pub(crate) fn iso_week(&self) -> (i64, u32) {
        let thursday = self.days + 4 - i64::from(self.iso_day_of_week());
        let (iso_year, _, _) = civil_from_days(thursday);
        let week = (thursday - days_from_civil(iso_year, 1, 1)) / 7 + 1;
        (iso_year, week as u32)
    }
}

/// 0 for Sunday .. 6 for Saturday, of a day counted from 1970-01-01.
pub(crate) fn weekday_from_sunday(days: i64) -> u32 {
    (days + 4).rem_euclid(7) as u32
}

/// Days from 1970-01-01 to Monday of ISO week `week` of `iso_year`, plus
/// `iso_day - 1` (both may be out of their usual range and carry over).
pub(crate) fn days_from_iso(iso_year: i64, week: i64, iso_day: i64) -> i64 {
    // January 4th is always in week 1.
    let jan4 = days_from_civil(iso_year, 1, 4);
    let jan4_iso_day = match weekday_from_sunday(jan4) {
        0 => 7,
        w => i64::from(w),
    };
    let week1_monday = jan4 - (jan4_iso_day - 1);
    week1_monday + (week - 1) * 7 + (iso_day - 1)
}

/// A time zone: UTC or a fixed offset from it.
///
/// MongoDB also accepts Olson identifiers ("America/New_York"); without a time
/// zone database we accept only "UTC", "GMT", "Etc/UTC", "Etc/GMT" and "Z", and
/// fixed offsets "+05:30", "-0800", "+03". Any other identifier is refused with
/// MongoDB's error for an unknown zone (40485), so a query never silently uses
/// the wrong offset. Fixed offsets have no daylight saving time.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Zone {
    offset_ms: i64,
}

impl Zone {
    pub(crate) const UTC: Zone = Zone { offset_ms: 0 };

    /// Parses a `timezone` argument.
    pub(crate) fn parse(name: &str) -> Result<Zone, QueryError> {
        match name {
            "UTC" | "GMT" | "Etc/UTC" | "Etc/GMT" | "Z" => return Ok(Zone::UTC),
            _ => {}
        }
        parse_offset(name)
            .map(|offset_ms| Zone { offset_ms })
            .ok_or_else(|| {
                QueryError::location(
                    40485,
                    format!("unrecognized time zone identifier: \"{name}\""),
                )
            })
    }

    /// A zone `offset_ms` east of UTC.
    pub(crate) fn fixed(offset_ms: i64) -> Zone {
        Zone { offset_ms }
    }

    /// Milliseconds east of UTC.
    pub(crate) fn offset_ms(self) -> i64 {
        self.offset_ms
    }

    /// Local milliseconds of a UTC instant (saturating at the ends of `i64`).
    pub(crate) fn to_local(self, utc_ms: i64) -> i64 {
        utc_ms.saturating_add(self.offset_ms)
    }

    /// The UTC instant of local milliseconds, if it fits.
    pub(crate) fn to_utc(self, local_ms: i64) -> Option<i64> {
        local_ms.checked_sub(self.offset_ms)
    }

    /// The civil time of a UTC instant in this zone.
    pub(crate) fn civil(self, utc_ms: i64) -> Civil {
        Civil::of(self.to_local(utc_ms))
    }
}

/// `+HH`, `+HHMM` or `+HH:MM` (or `-`), as milliseconds east of UTC.
pub(crate) fn parse_offset(text: &str) -> Option<i64> {
    let bytes = text.as_bytes();
    let (&sign, rest) = bytes.split_first()?;
    let sign = match sign {
        b'+' => 1,
        b'-' => -1,
        _ => return None,
    };
    let digits: Vec<u8> = match rest {
        [h1, h2] => vec![*h1, *h2, b'0', b'0'],
        [h1, h2, m1, m2] => vec![*h1, *h2, *m1, *m2],
        [h1, h2, b':', m1, m2] => vec![*h1, *h2, *m1, *m2],
        _ => return None,
    };
    if !digits.iter().all(u8::is_ascii_digit) {
        return None;
    }
    let value = |a: u8, b: u8| i64::from(a - b'0') * 10 + i64::from(b - b'0');
    let hours = value(digits[0], digits[1]);
    let minutes = value(digits[2], digits[3]);
    if minutes >= 60 {
        return None;
    }
    Some(sign * (hours * MS_PER_HOUR + minutes * MS_PER_MINUTE))
}

/// MongoDB's coercion of a value to a date (`Value::coerceToDate`): a date, a
/// timestamp (its seconds) or an ObjectId (its creation second).
pub(crate) fn coerce_date(value: &Bson) -> Option<i64> {
    match value {
        Bson::DateTime(dt) => Some(dt.timestamp_millis()),
        Bson::Timestamp(ts) => Some(i64::from(ts.time) * MS_PER_SECOND),
        Bson::ObjectId(oid) => Some(oid.timestamp().timestamp_millis()),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn civil_round_trips_over_four_hundred_years_each_side_of_the_epoch() {
        let mut expected = (1570_i64, 1_u32, 1_u32);
        let start = days_from_civil(1570, 1, 1);
        for days in start..start + 146_097 * 2 {
            assert_eq!(civil_from_days(days), expected, "day {days}");
            assert_eq!(
                days_from_civil(expected.0, i64::from(expected.1), i64::from(expected.2)),
                days
            );
            let (y, m, d) = expected;
            expected = if d < days_in_month(y, m) {
                (y, m, d + 1)
            } else if m < 12 {
                (y, m + 1, 1)
            } else {
                (y + 1, 1, 1)
            };
        }
    }

    #[test]
    fn the_epoch_and_its_neighbours() {
        assert_eq!(days_from_civil(1970, 1, 1), 0);
        assert_eq!(civil_from_days(-1), (1969, 12, 31));
        assert_eq!(civil_from_days(days_from_civil(0, 2, 29)), (0, 2, 29));
        assert_eq!(civil_from_days(days_from_civil(-1, 12, 31) + 1), (0, 1, 1));
        let c = Civil::of(-1);
        assert_eq!(
            (
                c.year,
                c.month,
                c.day,
                c.hour,
                c.minute,
                c.second,
                c.millisecond
            ),
            (1969, 12, 31, 23, 59, 59, 999)
        );
    }

    #[test]
    fn offsets_parse_in_three_spellings() {
        assert_eq!(
            parse_offset("+05:30"),
            Some(5 * MS_PER_HOUR + 30 * MS_PER_MINUTE)
        );
        assert_eq!(parse_offset("-0800"), Some(-8 * MS_PER_HOUR));
        assert_eq!(parse_offset("+03"), Some(3 * MS_PER_HOUR));
        assert_eq!(parse_offset("+3"), None);
        assert_eq!(parse_offset("+03:60"), None);
        assert_eq!(parse_offset("05:00"), None);
    }
}
