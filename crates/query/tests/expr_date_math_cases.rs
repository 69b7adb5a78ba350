//! Data-driven cases for `$dateAdd`, `$dateSubtract`, `$dateDiff` and `$dateTrunc`.

use crate::support::{date, fails_with, millis, yields};
use bson::{Bson, Document, doc};

fn d() -> Document {
    doc! {"n": Bson::Null, "t": date("2020-01-30T18:59:00Z")}
}

#[track_caller]
fn add(op: &str, start: &str, unit: &str, amount: i64, expected: &str) {
    let mut spec = Document::new();
    spec.insert(
        op,
        doc! {"startDate": date(start), "unit": unit, "amount": amount},
    );
    yields(&d(), spec, date(expected));
}

#[test]
fn date_add_clamps_to_the_end_of_the_month() {
    // manual, "$dateAdd": adding a month to January 31 gives the last day of February.
    add(
        "$dateAdd",
        "2020-01-31T12:00:00Z",
        "month",
        1,
        "2020-02-29T12:00:00Z",
    );
    add(
        "$dateAdd",
        "2021-01-31T12:00:00Z",
        "month",
        1,
        "2021-02-28T12:00:00Z",
    );
    add(
        "$dateAdd",
        "2020-11-30T00:00:00Z",
        "quarter",
        1,
        "2021-02-28T00:00:00Z",
    );
    add(
        "$dateAdd",
        "2020-02-29T00:00:00Z",
        "year",
        1,
        "2021-02-28T00:00:00Z",
    );
    add(
        "$dateAdd",
        "2020-02-29T00:00:00Z",
        "year",
        4,
        "2024-02-29T00:00:00Z",
    );
    add(
        "$dateAdd",
        "2020-01-31T00:00:00Z",
        "month",
        -2,
        "2019-11-30T00:00:00Z",
    );
    add(
        "$dateSubtract",
        "2020-03-31T08:00:00Z",
        "month",
        1,
        "2020-02-29T08:00:00Z",
    );
    add(
        "$dateSubtract",
        "1970-01-01T00:00:00Z",
        "year",
        1970,
        "0000-01-01T00:00:00Z",
    );
}

#[test]
fn date_add_fixed_units() {
    add(
        "$dateAdd",
        "2020-12-31T23:00:00Z",
        "day",
        1,
        "2021-01-01T23:00:00Z",
    );
    add(
        "$dateAdd",
        "2020-12-31T23:00:00Z",
        "week",
        2,
        "2021-01-14T23:00:00Z",
    );
    add(
        "$dateAdd",
        "2020-12-31T23:00:00Z",
        "hour",
        -24,
        "2020-12-30T23:00:00Z",
    );
    add(
        "$dateAdd",
        "1970-01-01T00:00:00Z",
        "minute",
        -1,
        "1969-12-31T23:59:00Z",
    );
    add(
        "$dateAdd",
        "1970-01-01T00:00:00Z",
        "second",
        90,
        "1970-01-01T00:01:30Z",
    );
    add(
        "$dateAdd",
        "1970-01-01T00:00:00Z",
        "millisecond",
        -1,
        "1969-12-31T23:59:59.999Z",
    );
    add(
        "$dateSubtract",
        "2021-03-01T00:00:00Z",
        "day",
        1,
        "2021-02-28T00:00:00Z",
    );
    yields(
        &d(),
        doc! {"$dateAdd": {"startDate": "$t", "unit": "day", "amount": 2.0}},
        date("2020-02-01T18:59:00Z"),
    );
}

#[test]
fn date_add_month_arithmetic_is_local_to_the_timezone() {
    // In UTC January 30 plus a month is February 28 (2021 has no 29th) ...
    yields(
        &d(),
        doc! {"$dateAdd": {"startDate": date("2021-01-30T20:00:00Z"), "unit": "month", "amount": 1}},
        date("2021-02-28T20:00:00Z"),
    );
    // ... but at +05:00 the instant is already January 31, 01:00 local.
    yields(
        &d(),
        doc! {"$dateAdd": {"startDate": date("2021-01-30T20:00:00Z"), "unit": "month",
        "amount": 1, "timezone": "+05:00"}},
        date("2021-02-27T20:00:00Z"),
    );
}

#[test]
fn date_add_nulls_and_errors() {
    let spec = |start: Bson, unit: Bson, amount: Bson| {
        doc! {"$dateAdd": {"startDate": start, "unit": unit, "amount": amount}}
    };
    let t = Bson::String("$t".into());
    yields(&d(), spec("$n".into(), "day".into(), 1.into()), Bson::Null);
    yields(&d(), spec(t.clone(), "$n".into(), 1.into()), Bson::Null);
    yields(
        &d(),
        spec(t.clone(), "day".into(), "$nope".into()),
        Bson::Null,
    );
    yields(
        &d(),
        doc! {"$dateAdd": {"startDate": "$t", "unit": "day", "amount": 1, "timezone": "$n"}},
        Bson::Null,
    );
    fails_with(&d(), spec("x".into(), "day".into(), 1.into()), 5_166_403);
    fails_with(&d(), spec(t.clone(), 5.into(), 1.into()), 5_166_404);
    fails_with(&d(), spec(t.clone(), "decade".into(), 1.into()), 9);
    fails_with(&d(), spec(t.clone(), "day".into(), 1.5.into()), 5_166_405);
    fails_with(&d(), spec(t.clone(), "day".into(), "1".into()), 5_166_405);
    fails_with(
        &d(),
        spec(t.clone(), "millisecond".into(), Bson::Int64(i64::MAX)),
        5_166_406,
    );
    fails_with(
        &d(),
        spec(t.clone(), "year".into(), Bson::Int64(i64::MAX / 2)),
        5_166_406,
    );
    fails_with(
        &d(),
        doc! {"$dateSubtract": {"startDate": "$t", "unit": "day", "amount": Bson::Int64(i64::MIN)}},
        6_045_000,
    );
    fails_with(
        &d(),
        doc! {"$dateAdd": {"startDate": "$t", "unit": "day", "amount": 1, "timezone": "EST5EDT"}},
        40485,
    );
    fails_with(
        &d(),
        doc! {"$dateAdd": {"startDate": "$t", "unit": "day"}},
        5_166_402,
    );
    fails_with(
        &d(),
        doc! {"$dateAdd": {"startDate": "$t", "unit": "day", "amount": 1, "x": 1}},
        5_166_401,
    );
    fails_with(&d(), doc! {"$dateAdd": "$t"}, 5_166_400);
}

#[track_caller]
fn diff(start: &str, end: &str, unit: &str, extra: Document, expected: i64) {
    let mut args = doc! {"startDate": date(start), "endDate": date(end), "unit": unit};
    args.extend(extra);
    yields(&d(), doc! {"$dateDiff": args}, Bson::Int64(expected));
}

#[test]
fn date_diff_counts_boundaries_crossed() {
    // jstest date_diff.js: 18:23:36 to midnight crosses six hour boundaries.
    diff(
        "2020-11-01T18:23:36Z",
        "2020-11-02T00:00:00Z",
        "hour",
        doc! {},
        6,
    );
    diff(
        "2020-12-31T23:59:59.999Z",
        "2021-01-01T00:00:00Z",
        "year",
        doc! {},
        1,
    );
    diff(
        "2021-01-01T00:00:00Z",
        "2021-12-31T23:59:59Z",
        "year",
        doc! {},
        0,
    );
    diff(
        "2020-01-31T00:00:00Z",
        "2020-02-01T00:00:00Z",
        "month",
        doc! {},
        1,
    );
    diff(
        "2020-03-31T00:00:00Z",
        "2020-04-01T00:00:00Z",
        "quarter",
        doc! {},
        1,
    );
    diff(
        "2020-04-01T00:00:00Z",
        "2020-03-31T00:00:00Z",
        "quarter",
        doc! {},
        -1,
    );
    diff(
        "1969-12-31T23:59:59.999Z",
        "1970-01-01T00:00:00Z",
        "second",
        doc! {},
        1,
    );
    diff(
        "1969-12-31T23:59:59.999Z",
        "1970-01-01T00:00:00Z",
        "millisecond",
        doc! {},
        1,
    );
    diff(
        "2000-01-01T00:00:00Z",
        "2001-01-01T00:00:00Z",
        "day",
        doc! {},
        366,
    );
    diff(
        "2021-01-01T23:00:00Z",
        "2021-01-02T01:00:00Z",
        "day",
        doc! {},
        1,
    );
    diff(
        "2021-01-01T23:00:00Z",
        "2021-01-02T01:00:00Z",
        "day",
        doc! {"timezone": "-02:00"},
        0,
    );
}

#[test]
fn date_diff_weeks_start_on_the_given_day() {
    // Sunday 2021-01-24 to Monday 2021-01-25 (jstest date_diff.js).
    let (sunday, monday) = ("2021-01-24T18:23:36Z", "2021-01-25T02:23:36Z");
    diff(sunday, monday, "week", doc! {}, 0);
    diff(sunday, monday, "week", doc! {"startOfWeek": "MONDAY"}, 1);
    // manual, "$dateDiff": startOfWeek also takes three-letter abbreviations.
    diff(sunday, monday, "week", doc! {"startOfWeek": "mon"}, 1);
    diff(monday, sunday, "week", doc! {"startOfWeek": "monday"}, -1);
    // startOfWeek is ignored, even when invalid, for other units.
    diff(sunday, monday, "hour", doc! {"startOfWeek": "IGNORED"}, 8);
}

#[test]
fn date_diff_nulls_come_before_type_errors() {
    let spec = |args: Document| doc! {"$dateDiff": args};
    yields(
        &d(),
        spec(doc! {"startDate": "$nope", "endDate": 1, "unit": "century", "timezone": "INVALID"}),
        Bson::Null,
    );
    yields(
        &d(),
        spec(doc! {"startDate": "$t", "endDate": "$t", "unit": "$n"}),
        Bson::Null,
    );
    yields(
        &d(),
        spec(doc! {"startDate": "$t", "endDate": "$t", "unit": "week", "startOfWeek": "$n"}),
        Bson::Null,
    );
    yields(
        &d(),
        spec(doc! {"startDate": "$t", "endDate": "$t", "unit": "hour", "timezone": "$n"}),
        Bson::Null,
    );
    let t = || Bson::String("$t".into());
    fails_with(
        &d(),
        spec(doc! {"startDate": "x", "endDate": t(), "unit": "hour"}),
        5_166_307,
    );
    fails_with(
        &d(),
        spec(doc! {"startDate": t(), "endDate": 1, "unit": "hour"}),
        5_166_307,
    );
    fails_with(
        &d(),
        spec(doc! {"startDate": t(), "endDate": t(), "unit": 5}),
        5_439_013,
    );
    fails_with(
        &d(),
        spec(doc! {"startDate": t(), "endDate": t(), "unit": "decade"}),
        5_439_014,
    );
    fails_with(
        &d(),
        spec(doc! {"startDate": t(), "endDate": t(), "unit": "week", "startOfWeek": 1}),
        5_439_015,
    );
    fails_with(
        &d(),
        spec(doc! {"startDate": t(), "endDate": t(), "unit": "week", "startOfWeek": "FRIDIE"}),
        5_439_016,
    );
    fails_with(
        &d(),
        spec(doc! {"startDate": t(), "endDate": t(), "unit": "hour", "timezone": 1}),
        40517,
    );
    fails_with(&d(), spec(doc! {"endDate": t(), "unit": "hour"}), 5_166_303);
    fails_with(
        &d(),
        spec(doc! {"startDate": t(), "unit": "hour"}),
        5_166_304,
    );
    fails_with(
        &d(),
        spec(doc! {"startDate": t(), "endDate": t()}),
        5_166_305,
    );
    fails_with(
        &d(),
        spec(doc! {"startDate": t(), "endDate": t(), "unit": "hour", "x": 1}),
        5_166_302,
    );
    fails_with(&d(), doc! {"$dateDiff": 1}, 5_166_301);
}

#[track_caller]
fn trunc(when: Bson, unit: &str, extra: Document, expected: Bson) {
    let mut args = doc! {"date": when, "unit": unit};
    args.extend(extra);
    yields(&d(), doc! {"$dateTrunc": args}, expected);
}

#[test]
fn date_trunc_bins_from_the_year_2000() {
    let t = date("2020-01-30T18:59:00Z");
    trunc(
        t.clone(),
        "minute",
        doc! {"binSize": 15},
        date("2020-01-30T18:45:00Z"),
    );
    trunc(
        t.clone(),
        "minute",
        doc! {"binSize": "15".parse::<bson::Decimal128>().expect("decimal")},
        date("2020-01-30T18:45:00Z"),
    );
    trunc(t.clone(), "day", doc! {}, date("2020-01-30T00:00:00Z"));
    trunc(t.clone(), "year", doc! {}, date("2020-01-01T00:00:00Z"));
    // 2020 is 20 years after 2000: the 3-year bin holding it starts in 2018.
    trunc(
        t.clone(),
        "year",
        doc! {"binSize": 3},
        date("2018-01-01T00:00:00Z"),
    );
    trunc(
        date("2020-04-15T00:00:00Z"),
        "month",
        doc! {"binSize": 2},
        date("2020-03-01T00:00:00Z"),
    );
    trunc(
        date("2020-05-15T00:00:00Z"),
        "quarter",
        doc! {},
        date("2020-04-01T00:00:00Z"),
    );
    // Wednesday 2021-01-27: weeks start on Sunday unless startOfWeek says otherwise.
    trunc(
        date("2021-01-27T10:00:00Z"),
        "week",
        doc! {},
        date("2021-01-24T00:00:00Z"),
    );
    trunc(
        date("2021-01-27T10:00:00Z"),
        "week",
        doc! {"startOfWeek": "monday"},
        date("2021-01-25T00:00:00Z"),
    );
    trunc(
        date("2021-01-27T10:10:00Z"),
        "hour",
        doc! {"timezone": "+05:30"},
        date("2021-01-27T09:30:00Z"),
    );
    // Bins floor toward the past, also before 1970.
    trunc(millis(-1), "day", doc! {}, date("1969-12-31T00:00:00Z"));
    trunc(millis(-1), "second", doc! {}, millis(-1000));
    trunc(
        millis(-1),
        "year",
        doc! {"startOfWeek": 1},
        date("1969-01-01T00:00:00Z"),
    );
}

#[test]
fn date_trunc_nulls_and_errors() {
    let t = || Bson::String("$t".into());
    let spec = |args: Document| doc! {"$dateTrunc": args};
    yields(&d(), spec(doc! {"date": "$n", "unit": "hour"}), Bson::Null);
    yields(
        &d(),
        spec(doc! {"date": "Invalid", "unit": "invalid", "timezone": "Invalid", "binSize": "$n"}),
        Bson::Null,
    );
    yields(
        &d(),
        spec(doc! {"date": t(), "unit": "week", "startOfWeek": "$n"}),
        Bson::Null,
    );
    fails_with(&d(), spec(doc! {"date": "x", "unit": "hour"}), 5_439_012);
    fails_with(&d(), spec(doc! {"date": t(), "unit": 1}), 5_439_013);
    fails_with(&d(), spec(doc! {"date": t(), "unit": "decade"}), 5_439_014);
    fails_with(
        &d(),
        spec(doc! {"date": t(), "unit": "hour", "binSize": "1"}),
        5_439_017,
    );
    fails_with(
        &d(),
        spec(doc! {"date": t(), "unit": "hour", "binSize": 2.5}),
        5_439_017,
    );
    fails_with(
        &d(),
        spec(doc! {"date": t(), "unit": "hour", "binSize": 0}),
        5_439_018,
    );
    fails_with(
        &d(),
        spec(doc! {"date": t(), "unit": "week", "startOfWeek": "FRIDIE"}),
        5_439_016,
    );
    fails_with(
        &d(),
        spec(doc! {"date": t(), "unit": "hour", "timezone": "America/Invalid"}),
        40485,
    );
    fails_with(&d(), spec(doc! {"unit": "hour"}), 5_439_009);
    fails_with(&d(), spec(doc! {"date": t()}), 5_439_010);
    fails_with(
        &d(),
        spec(doc! {"date": t(), "unit": "hour", "x": 1}),
        5_439_008,
    );
    fails_with(&d(), doc! {"$dateTrunc": "x"}, 5_439_007);
}
