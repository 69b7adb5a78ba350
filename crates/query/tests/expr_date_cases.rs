//! Data-driven cases for the date expression operators: parts of a date,
//! `$dateToString`, `$dateFromString`, `$dateToParts` and `$dateFromParts`.
//!
//! Expected values were cross-checked against Python's `datetime` (proleptic
//! Gregorian, `%U`, `isocalendar`) and MongoDB's jstests where the manual is
//! silent.

use crate::support::{date, fails_with, millis, yields, yields_missing};
use bson::oid::ObjectId;
use bson::{Bson, Document, Timestamp, doc};

/// 0000-01-01T00:00:00Z: year 0 exists in MongoDB's (astronomical) numbering.
const YEAR_ZERO_MS: i64 = -62_167_219_200_000;

fn d() -> Document {
    doc! {
        "t": date("2017-07-04T14:56:42.911Z"),
        "before": millis(-1),
        "y0": millis(YEAR_ZERO_MS),
        "n": Bson::Null,
        "s": "2017",
        "oid": ObjectId::parse_str("0123456789abcdef01234567").expect("hex"),
        "ts": Timestamp { time: 86_400, increment: 1 },
    }
}

/// `{op: date}` yields the int `expected`.
#[track_caller]
fn part(op: &str, value: Bson, expected: i32) {
    let mut spec = Document::new();
    spec.insert(op, value);
    yields(&d(), spec, Bson::Int32(expected));
}

#[test]
fn parts_of_a_summer_afternoon() {
    let t = date("2017-07-04T14:56:42.911Z");
    for (op, expected) in [
        ("$year", 2017),
        ("$month", 7),
        ("$dayOfMonth", 4),
        // 2017-07-04 was a Tuesday: $dayOfWeek counts Sunday as 1.
        ("$dayOfWeek", 3),
        ("$dayOfYear", 185),
        ("$hour", 14),
        ("$minute", 56),
        ("$second", 42),
        ("$millisecond", 911),
        ("$week", 27),
        ("$isoWeek", 27),
        ("$isoDayOfWeek", 2),
    ] {
        part(op, t.clone(), expected);
    }
    // MongoDB returns the ISO week-numbering year as a long.
    yields(&d(), doc! {"$isoWeekYear": "$t"}, Bson::Int64(2017));
}

#[test]
fn the_last_millisecond_before_the_epoch() {
    for (op, expected) in [
        ("$year", 1969),
        ("$month", 12),
        ("$dayOfMonth", 31),
        ("$hour", 23),
        ("$minute", 59),
        ("$second", 59),
        ("$millisecond", 999),
        ("$dayOfWeek", 4),
        ("$dayOfYear", 365),
        ("$week", 52),
        // 1969-12-31 is a Wednesday in ISO week 1 of 1970.
        ("$isoWeek", 1),
    ] {
        part(op, Bson::String("$before".into()), expected);
    }
    yields(&d(), doc! {"$isoWeekYear": "$before"}, Bson::Int64(1970));
}

#[test]
fn leap_years_and_year_zero() {
    part("$dayOfYear", date("2020-02-29T00:00:00Z"), 60);
    part("$dayOfYear", date("2020-12-31T00:00:00Z"), 366);
    part("$dayOfYear", date("2000-12-31T00:00:00Z"), 366);
    // 1900 is not a leap year (divisible by 100, not by 400).
    part("$dayOfYear", date("1900-03-01T00:00:00Z"), 60);
    part("$year", Bson::String("$y0".into()), 0);
    part("$dayOfWeek", Bson::String("$y0".into()), 7);
    part("$year", millis(YEAR_ZERO_MS - 1), -1);
    part("$month", millis(YEAR_ZERO_MS - 1), 12);
    part("$dayOfMonth", millis(YEAR_ZERO_MS - 1), 31);
    // Year 0 is a leap year in the proleptic Gregorian calendar.
    let feb_29_year_0 = YEAR_ZERO_MS + 59 * 86_400_000;
    part("$month", millis(feb_29_year_0), 2);
    part("$dayOfMonth", millis(feb_29_year_0), 29);
}

#[test]
fn week_numbers_at_the_turn_of_the_year() {
    // %U / $week: days before the year's first Sunday are week 0.
    part("$week", date("2017-01-01T00:00:00Z"), 1);
    part("$week", date("2016-01-01T00:00:00Z"), 0);
    part("$week", date("2000-12-31T00:00:00Z"), 53);
    // ISO 8601: the week belongs to the year holding its Thursday.
    part("$isoWeek", date("2017-01-01T00:00:00Z"), 52);
    part("$isoDayOfWeek", date("2017-01-01T00:00:00Z"), 7);
    part("$isoWeek", date("2016-01-01T00:00:00Z"), 53);
    part("$isoWeek", date("2018-12-31T00:00:00Z"), 1);
    part("$isoWeek", date("2020-12-31T00:00:00Z"), 53);
    for (when, year) in [
        ("2017-01-01T00:00:00Z", 2016),
        ("2016-01-01T00:00:00Z", 2015),
        ("2018-12-31T00:00:00Z", 2019),
    ] {
        yields(&d(), doc! {"$isoWeekYear": date(when)}, Bson::Int64(year));
    }
}

#[test]
fn argument_forms_and_timezones() {
    part("$year", Bson::Array(vec!["$t".into()]), 2017);
    part("$hour", Bson::Document(doc! {"date": "$t"}), 14);
    for (zone, hour, minute) in [
        ("UTC", 14, 56),
        ("GMT", 14, 56),
        ("Etc/UTC", 14, 56),
        ("Z", 14, 56),
        ("+05:30", 20, 26),
        ("-0800", 6, 56),
        ("+03", 17, 56),
    ] {
        part(
            "$hour",
            Bson::Document(doc! {"date": "$t", "timezone": zone}),
            hour,
        );
        part(
            "$minute",
            Bson::Document(doc! {"date": "$t", "timezone": zone}),
            minute,
        );
    }
    // An offset can move the date into the next day.
    part(
        "$dayOfMonth",
        Bson::Document(doc! {"date": "$t", "timezone": "+14:00"}),
        5,
    );
    // Olson names need a time zone database; they are refused, never guessed.
    fails_with(
        &d(),
        doc! {"$hour": {"date": "$t", "timezone": "America/New_York"}},
        40485,
    );
    fails_with(
        &d(),
        doc! {"$hour": {"date": "$t", "timezone": "+5"}},
        40485,
    );
    fails_with(&d(), doc! {"$hour": {"date": "$t", "timezone": 5}}, 40517);
    yields(
        &d(),
        doc! {"$hour": {"date": "$t", "timezone": "$n"}},
        Bson::Null,
    );
    yields(&d(), doc! {"$year": [ "$t" ]}, Bson::Int32(2017));
    fails_with(&d(), doc! {"$year": ["$t", "$t"]}, 40536);
    fails_with(&d(), doc! {"$year": {"date": "$t", "foo": 1}}, 40535);
    fails_with(&d(), doc! {"$year": {"timezone": "UTC"}}, 40539);
    fails_with(&d(), doc! {"$year": {}}, 40539);
}

#[test]
fn part_operators_coerce_dates_and_pass_null_through() {
    yields(&d(), doc! {"$year": "$n"}, Bson::Null);
    yields(&d(), doc! {"$year": "$nope"}, Bson::Null);
    // A null date gives null before the zone is checked.
    yields(
        &d(),
        doc! {"$year": {"date": "$n", "timezone": "Mars/Olympus"}},
        Bson::Null,
    );
    fails_with(&d(), doc! {"$year": "$s"}, 16006);
    fails_with(&d(), doc! {"$month": 5}, 16006);
    // An ObjectId is coerced to its creation time, a timestamp to its seconds.
    part("$year", Bson::String("$oid".into()), 1970);
    part("$month", Bson::String("$oid".into()), 8);
    part("$dayOfMonth", Bson::String("$ts".into()), 2);
}

#[test]
fn date_to_string_formats() {
    let fmt = |format: &str, when: Bson, zone: &str| {
        doc! {"$dateToString": {"format": format, "date": when, "timezone": zone}}
    };
    let t = date("2017-07-04T14:56:42.911Z");
    yields(
        &d(),
        doc! {"$dateToString": {"date": "$t"}},
        Bson::String("2017-07-04T14:56:42.911Z".into()),
    );
    // The jstests' Asia/Kathmandu case as a fixed offset.
    yields(
        &d(),
        fmt("%Y-%m-%d %H:%M:%S %z (%Z minutes)", t.clone(), "+05:45"),
        Bson::String("2017-07-04 20:41:42 +0545 (345 minutes)".into()),
    );
    yields(
        &d(),
        fmt("%z %Z", t.clone(), "-08:00"),
        Bson::String("-0800 -480".into()),
    );
    // %w counts Sunday as 1; %u is ISO (Monday 1); 2017-01-01 is in ISO week 52 of 2016.
    yields(
        &d(),
        fmt(
            "Natural: %Y-W%w-%U, ISO: %G-W%u-%V",
            date("2017-01-01T15:08:51.911Z"),
            "UTC",
        ),
        Bson::String("Natural: 2017-W1-01, ISO: 2016-W7-52".into()),
    );
    // jstest iso_date_exprs.js: the order of %V and %G does not matter.
    yields(
        &d(),
        fmt("%V-%G", date("1900-12-31T23:59:59Z"), "UTC"),
        Bson::String("01-1901".into()),
    );
    yields(
        &d(),
        fmt("%j %L %%", date("2020-12-31T00:00:00.007Z"), "UTC"),
        Bson::String("366 007 %".into()),
    );
    yields(
        &d(),
        fmt("%b (%B) %d, %Y", t, "UTC"),
        Bson::String("Jul (July) 04, 2017".into()),
    );
    yields(
        &d(),
        doc! {"$dateToString": {"date": "$before"}},
        Bson::String("1969-12-31T23:59:59.999Z".into()),
    );
    yields(
        &d(),
        doc! {"$dateToString": {"date": "$y0"}},
        Bson::String("0000-01-01T00:00:00.000Z".into()),
    );
    // Years outside 0-9999 cannot be written with %Y; other specifiers still work.
    fails_with(
        &d(),
        doc! {"$dateToString": {"date": millis(YEAR_ZERO_MS - 1)}},
        18537,
    );
    yields(
        &d(),
        fmt("%m-%d %H:%M", millis(YEAR_ZERO_MS - 1), "UTC"),
        Bson::String("12-31 23:59".into()),
    );
}

#[test]
fn date_to_string_null_handling_and_errors() {
    yields(
        &d(),
        doc! {"$dateToString": {"date": "$n", "onNull": "none"}},
        Bson::String("none".into()),
    );
    yields_missing(
        &d(),
        doc! {"$dateToString": {"date": "$nope", "onNull": "$$REMOVE"}},
    );
    yields(&d(), doc! {"$dateToString": {"date": "$n"}}, Bson::Null);
    // A null format gives null, even when onNull is given (jstest date_to_string.js).
    yields(
        &d(),
        doc! {"$dateToString": {"date": "$n", "format": "$n", "onNull": "x"}},
        Bson::Null,
    );
    // A null timezone gives null before onNull applies.
    yields(
        &d(),
        doc! {"$dateToString": {"date": "$nope", "timezone": "$n", "onNull": "x"}},
        Bson::Null,
    );
    fails_with(
        &d(),
        doc! {"$dateToString": {"date": "$t", "format": 5}},
        18533,
    );
    fails_with(
        &d(),
        doc! {"$dateToString": {"date": "$t", "format": "%"}},
        18535,
    );
    fails_with(
        &d(),
        doc! {"$dateToString": {"date": "$t", "format": "%n"}},
        18536,
    );
    fails_with(&d(), doc! {"$dateToString": {"format": "%Y"}}, 18628);
    fails_with(&d(), doc! {"$dateToString": "$t"}, 18629);
    fails_with(
        &d(),
        doc! {"$dateToString": {"date": "$t", "foo": 1}},
        18534,
    );
    fails_with(&d(), doc! {"$dateToString": {"date": 42}}, 16006);
    fails_with(
        &d(),
        doc! {"$dateToString": {"date": "$t", "timezone": "Europe/Oslo"}},
        40485,
    );
}

#[test]
fn date_from_string_parses_iso_dates() {
    let from = |text: &str| doc! {"$dateFromString": {"dateString": text}};
    yields(
        &d(),
        from("2017-02-08T12:10:40.787Z"),
        date("2017-02-08T12:10:40.787Z"),
    );
    yields(&d(), from("2017-02-08"), date("2017-02-08T00:00:00Z"));
    yields(&d(), from("2017-02-08 12:10"), date("2017-02-08T12:10:00Z"));
    yields(
        &d(),
        from("2017-02-08T12:10:40+0100"),
        date("2017-02-08T11:10:40Z"),
    );
    yields(
        &d(),
        from("2017-02-08T12:10:40-05:30"),
        date("2017-02-08T17:40:40Z"),
    );
    yields(&d(), from("1969-12-31T23:59:59.999Z"), millis(-1));
    yields(&d(), from("2020-02-29"), date("2020-02-29T00:00:00Z"));
    // A string without an offset is read in the timezone argument.
    yields(
        &d(),
        doc! {"$dateFromString": {"dateString": "2017-02-08T12:10:40.787", "timezone": "+05:00"}},
        date("2017-02-08T07:10:40.787Z"),
    );
    // An offset in the string and a timezone argument conflict.
    fails_with(
        &d(),
        doc! {"$dateFromString": {"dateString": "2017-02-08T12:10:40Z", "timezone": "UTC"}},
        241,
    );
    fails_with(&d(), from("2017-02-30"), 241);
    fails_with(&d(), from("2019-02-29"), 241);
    fails_with(&d(), from("1900-02-29"), 241);
    yields(&d(), from("2000-02-29"), date("2000-02-29T00:00:00Z"));
    fails_with(&d(), from("July 4th, 2017"), 241);
    fails_with(&d(), from("2017-02-08T25:00"), 241);
}

#[test]
fn date_from_string_formats_and_fallbacks() {
    yields(
        &d(),
        doc! {"$dateFromString": {"dateString": "15/06/2018", "format": "%d/%m/%Y"}},
        date("2018-06-15T00:00:00Z"),
    );
    yields(
        &d(),
        doc! {"$dateFromString": {"dateString": "2018-166 07:05:09.5+0200", "format": "%Y-%j %H:%M:%S.%L%z"}},
        date("2018-06-15T05:05:09.500Z"),
    );
    yields(
        &d(),
        doc! {"$dateFromString": {"dateString": "2017-W01-1", "format": "%G-W%V-%u"}},
        date("2017-01-02T00:00:00Z"),
    );
    yields(
        &d(),
        doc! {"$dateFromString": {"dateString": "garbage", "onError": "bad"}},
        Bson::String("bad".into()),
    );
    // A non-string dateString is a ConversionFailure, which onError catches.
    yields(
        &d(),
        doc! {"$dateFromString": {"dateString": 5, "onError": "bad"}},
        Bson::String("bad".into()),
    );
    fails_with(&d(), doc! {"$dateFromString": {"dateString": 5}}, 241);
    // onNull wins for a null string; onError is not consulted.
    yields(
        &d(),
        doc! {"$dateFromString": {"dateString": "$n", "onNull": "N", "onError": "E"}},
        Bson::String("N".into()),
    );
    yields(
        &d(),
        doc! {"$dateFromString": {"dateString": "$nope"}},
        Bson::Null,
    );
    yields(
        &d(),
        doc! {"$dateFromString": {"dateString": "2017-01-01", "format": "$n"}},
        Bson::Null,
    );
    // Errors outside parsing are not caught by onError.
    fails_with(
        &d(),
        doc! {"$dateFromString": {"dateString": "x", "timezone": "Mars/Base", "onError": "E"}},
        40485,
    );
    fails_with(
        &d(),
        doc! {"$dateFromString": {"dateString": "2017", "format": 5}},
        40684,
    );
    fails_with(
        &d(),
        doc! {"$dateFromString": {"dateString": "2017", "format": "%n"}},
        18536,
    );
    fails_with(&d(), doc! {"$dateFromString": {"format": "%Y"}}, 40542);
    fails_with(
        &d(),
        doc! {"$dateFromString": {"dateString": "x", "to": 1}},
        40541,
    );
    fails_with(&d(), doc! {"$dateFromString": "2017-01-01"}, 40540);
}

#[test]
fn date_to_parts_and_back() {
    let when = date("2017-01-01T01:29:09.123Z");
    yields(
        &d(),
        doc! {"$dateToParts": {"date": when.clone()}},
        Bson::Document(
            doc! {"year": 2017, "month": 1, "day": 1, "hour": 1, "minute": 29,
            "second": 9, "millisecond": 123},
        ),
    );
    yields(
        &d(),
        doc! {"$dateToParts": {"date": when.clone(), "iso8601": true}},
        Bson::Document(doc! {"isoWeekYear": 2016, "isoWeek": 52, "isoDayOfWeek": 7,
        "hour": 1, "minute": 29, "second": 9, "millisecond": 123}),
    );
    yields(
        &d(),
        doc! {"$dateToParts": {"date": when.clone(), "timezone": "-02:00"}},
        Bson::Document(
            doc! {"year": 2016, "month": 12, "day": 31, "hour": 23, "minute": 29,
            "second": 9, "millisecond": 123},
        ),
    );
    yields(&d(), doc! {"$dateToParts": {"date": "$n"}}, Bson::Null);
    yields(
        &d(),
        doc! {"$dateToParts": {"date": when.clone(), "iso8601": "$n"}},
        Bson::Null,
    );
    fails_with(
        &d(),
        doc! {"$dateToParts": {"date": when, "iso8601": "yes"}},
        40521,
    );
    fails_with(&d(), doc! {"$dateToParts": {"timezone": "UTC"}}, 40522);
    fails_with(&d(), doc! {"$dateToParts": {"date": "$t", "x": 1}}, 40520);
    fails_with(&d(), doc! {"$dateToParts": "$t"}, 40524);
    fails_with(&d(), doc! {"$dateToParts": {"date": "$s"}}, 16006);
}

#[test]
fn date_from_parts_carries_out_of_range_values() {
    let from = |parts: Document| doc! {"$dateFromParts": parts};
    yields(
        &d(),
        from(doc! {"year": 2017, "month": 2, "day": 8, "hour": 12}),
        date("2017-02-08T12:00:00Z"),
    );
    // Values outside a part's usual range carry (manual, "$dateFromParts", "Value Range").
    yields(
        &d(),
        from(doc! {"year": 2017, "month": 14, "day": 1}),
        date("2018-02-01T00:00:00Z"),
    );
    yields(
        &d(),
        from(doc! {"year": 2016, "month": 2, "day": 30}),
        date("2016-03-01T00:00:00Z"),
    );
    yields(
        &d(),
        from(doc! {"year": 2017, "month": 0}),
        date("2016-12-01T00:00:00Z"),
    );
    yields(
        &d(),
        from(doc! {"year": 2017, "day": 0}),
        date("2016-12-31T00:00:00Z"),
    );
    yields(
        &d(),
        from(doc! {"year": 2017, "hour": -1, "millisecond": 1500}),
        date("2016-12-31T23:00:01.500Z"),
    );
    yields(
        &d(),
        from(doc! {"year": 2017.0, "timezone": "+01:00"}),
        date("2016-12-31T23:00:00Z"),
    );
    yields(
        &d(),
        from(doc! {"isoWeekYear": 2017, "isoWeek": 1, "isoDayOfWeek": 1}),
        date("2017-01-02T00:00:00Z"),
    );
    yields(
        &d(),
        from(doc! {"isoWeekYear": 2015, "isoWeek": 53, "isoDayOfWeek": 7}),
        date("2016-01-03T00:00:00Z"),
    );
    yields(&d(), from(doc! {"year": "$n"}), Bson::Null);
    yields(
        &d(),
        from(doc! {"year": 2017, "month": "$nope"}),
        Bson::Null,
    );
}

#[test]
fn date_from_parts_errors() {
    let from = |parts: Document| doc! {"$dateFromParts": parts};
    fails_with(&d(), from(doc! {"year": 0}), 40523);
    fails_with(&d(), from(doc! {"year": 10_000}), 40523);
    fails_with(&d(), from(doc! {"isoWeekYear": 0}), 31095);
    fails_with(&d(), from(doc! {"year": 2017, "month": 32_768}), 31034);
    fails_with(&d(), from(doc! {"year": 2017, "day": -32_769}), 31034);
    fails_with(&d(), from(doc! {"year": 2017, "month": 1.5}), 40515);
    fails_with(&d(), from(doc! {"year": 2017, "month": "1"}), 40515);
    fails_with(&d(), from(doc! {"year": 2017, "isoWeek": 1}), 40489);
    fails_with(&d(), from(doc! {"month": 1}), 40516);
    fails_with(&d(), from(doc! {"year": 2017, "week": 1}), 40518);
    fails_with(&d(), doc! {"$dateFromParts": 2017}, 40519);
    fails_with(
        &d(),
        from(doc! {"year": 2017, "timezone": "Asia/Tokyo"}),
        40485,
    );
}
