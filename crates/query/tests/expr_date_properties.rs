//! Property tests of the date operators against each other on generated dates
//! and fixed offsets: parts round-trip through `$dateFromParts`, strings
//! through `$dateFromString`, `$dateDiff` undoes `$dateAdd`, and `$dateTrunc`
//! gives the start of a bin no longer than the unit.

use crate::support::{evaluate, millis};
use bson::{Bson, Document, doc};
use proptest::prelude::*;

/// 0001-01-01 and 9999-12-31T23:59:59.999 in milliseconds: the years every
/// operator (including `%Y` and `$dateFromParts`) accepts.
const MS_MIN: i64 = -62_135_596_800_000;
const MS_MAX: i64 = 253_402_300_799_999;

fn eval(expr: Document) -> Bson {
    evaluate(&Document::new(), Bson::Document(expr.clone()))
        .unwrap_or_else(|e| panic!("{expr}: {e}"))
        .unwrap_or_else(|| panic!("{expr}: missing"))
}

/// An instant a day inside the supported years, so offsets keep it there.
fn instant() -> impl Strategy<Value = i64> {
    prop_oneof![
        (MS_MIN + 86_400_000..MS_MAX - 86_400_000),
        // Near the epoch, where negative remainders go wrong first.
        (-86_400_000_i64 * 3..86_400_000 * 3),
    ]
}

/// A fixed offset as "+HH:MM" text, within ±14 hours.
fn offset() -> impl Strategy<Value = String> {
    (-14 * 60..=14 * 60_i32).prop_map(|minutes| {
        let sign = if minutes < 0 { '-' } else { '+' };
        let m = minutes.abs();
        format!("{sign}{:02}:{:02}", m / 60, m % 60)
    })
}

proptest! {
    #[test]
    fn parts_round_trip(ms in instant(), zone in offset(), iso in any::<bool>()) {
        let parts = eval(doc! {"$dateToParts": {"date": millis(ms), "timezone": zone.clone(), "iso8601": iso}});
        let Bson::Document(mut parts) = parts else { panic!("parts {parts:?}") };
        parts.insert("timezone", zone);
        prop_assert_eq!(eval(doc! {"$dateFromParts": parts}), millis(ms));
    }

    #[test]
    fn strings_round_trip(ms in instant(), zone in offset()) {
        let text = eval(doc! {"$dateToString": {"date": millis(ms), "timezone": zone.clone(),
            "format": "%Y-%m-%dT%H:%M:%S.%L"}});
        let back = eval(doc! {"$dateFromString": {"dateString": text, "timezone": zone}});
        prop_assert_eq!(back, millis(ms));
    }

    #[test]
    fn diff_undoes_add(
        ms in instant(),
        amount in -1000_i64..1000,
        unit in prop::sample::select(vec!["week", "day", "hour", "minute", "second", "millisecond"]),
        zone in offset(),
    ) {
        let end = eval(doc! {"$dateAdd": {"startDate": millis(ms), "unit": unit, "amount": amount,
            "timezone": zone.clone()}});
        let diff = eval(doc! {"$dateDiff": {"startDate": millis(ms), "endDate": end, "unit": unit,
            "timezone": zone}});
        prop_assert_eq!(diff, Bson::Int64(amount));
    }

    #[test]
    fn month_diff_undoes_month_add(ms in instant(), amount in -500_i64..500) {
        // Clamping at the month's end keeps the month count exact.
        let end = eval(doc! {"$dateAdd": {"startDate": millis(ms), "unit": "month", "amount": amount}});
        let diff = eval(doc! {"$dateDiff": {"startDate": millis(ms), "endDate": end.clone(), "unit": "month"}});
        prop_assert_eq!(diff, Bson::Int64(amount));
        let day = eval(doc! {"$dayOfMonth": end});
        let start_day = eval(doc! {"$dayOfMonth": millis(ms)});
        prop_assert!(day.as_i32() <= start_day.as_i32());
    }

    #[test]
    fn trunc_is_the_start_of_a_bin(
        ms in instant(),
        (unit, size) in prop::sample::select(vec![
            ("week", 604_800_000_i64), ("day", 86_400_000), ("hour", 3_600_000),
            ("minute", 60_000), ("second", 1_000),
        ]),
        bin in 1_i64..5,
        zone in offset(),
    ) {
        let spec = |date: Bson| doc! {"$dateTrunc": {"date": date, "unit": unit, "binSize": bin,
            "timezone": zone.clone()}};
        let start = eval(spec(millis(ms)));
        let Bson::DateTime(start_dt) = start else { panic!("{start:?}") };
        let start_ms = start_dt.timestamp_millis();
        prop_assert!(start_ms <= ms && ms - start_ms < size * bin, "{} -> {}", ms, start_ms);
        prop_assert_eq!(eval(spec(start.clone())), start);
    }
}
