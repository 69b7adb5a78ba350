//! Data-driven cases for `$inc` and `$mul` with Decimal128 on either side.
//!
//! Regression: both used to refuse any Decimal128 with BadValue. MongoDB computes
//! in decimal as soon as one side is a Decimal128 (mongodb/mongo
//! `src/mongo/util/safe_num.cpp`: `addInternal`/`mulInternal` → `Decimal128::add`/
//! `multiply`), converting a double to 15 significant digits
//! (`Decimal128(double, kRoundTo15Digits)`, `src/mongo/platform/decimal128.cpp`).

use bson::{Bson, doc};

use crate::support::{Code, Doc, check};

fn dec(text: &str) -> Bson {
    Bson::Decimal128(text.parse().expect("decimal literal"))
}

#[test]
fn decimal_inc_cases() {
    check(
        doc! {"_id": 1, "a": dec("1")},
        doc! {"$inc": {"a": 1}},
        Doc(doc! {"_id": 1, "a": dec("2")}),
    );
    check(
        doc! {"_id": 1, "a": dec("1.5")},
        doc! {"$inc": {"a": dec("0.25")}},
        Doc(doc! {"_id": 1, "a": dec("1.75")}),
    );
    check(
        doc! {"_id": 1, "a": 1},
        doc! {"$inc": {"a": dec("0.1")}},
        Doc(doc! {"_id": 1, "a": dec("1.1")}),
    );
    check(
        doc! {"_id": 1, "a": 1_i64},
        doc! {"$inc": {"a": dec("1E+20")}},
        Doc(doc! {"_id": 1, "a": dec("100000000000000000001")}),
    );
    // A double operand counts with 15 significant digits, trailing zeros kept.
    check(
        doc! {"_id": 1, "a": dec("1")},
        doc! {"$inc": {"a": 0.1}},
        Doc(doc! {"_id": 1, "a": dec("1.100000000000000")}),
    );
    check(
        doc! {"_id": 1, "a": 0.5},
        doc! {"$inc": {"a": dec("1")}},
        Doc(doc! {"_id": 1, "a": dec("1.500000000000000")}),
    );
    check(
        doc! {"_id": 1},
        doc! {"$inc": {"a": dec("2.50")}},
        Doc(doc! {"_id": 1, "a": dec("2.50")}),
    );
    check(
        doc! {"_id": 1, "a": dec("1")},
        doc! {"$inc": {"a": dec("-1")}},
        Doc(doc! {"_id": 1, "a": dec("0")}),
    );
    // An equal result is a no-op (`SafeNum::isIdentical`): "1" stays, not "1.0".
    check(
        doc! {"_id": 1, "a": dec("1")},
        doc! {"$inc": {"a": dec("0.0")}},
        Doc(doc! {"_id": 1, "a": dec("1")}),
    );
    check(
        doc! {"_id": 1, "a": dec("9.999999999999999999999999999999999E+6144")},
        doc! {"$inc": {"a": dec("9.999999999999999999999999999999999E+6144")}},
        Doc(doc! {"_id": 1, "a": dec("Infinity")}),
    );
    check(
        doc! {"_id": 1, "a": dec("NaN")},
        doc! {"$inc": {"a": 1}},
        Doc(doc! {"_id": 1, "a": dec("NaN")}),
    );
    check(
        doc! {"_id": 1, "a": dec("Infinity")},
        doc! {"$inc": {"a": dec("-Infinity")}},
        Doc(doc! {"_id": 1, "a": dec("NaN")}),
    );
    check(
        doc! {"_id": 1, "a": "x"},
        doc! {"$inc": {"a": dec("1")}},
        Code(14),
    );
    check(
        doc! {"_id": 1, "a": [dec("1"), 2]},
        doc! {"$inc": {"a.0": dec("1"), "a.1": dec("1")}},
        Doc(doc! {"_id": 1, "a": [dec("2"), dec("3")]}),
    );
}

#[test]
fn decimal_mul_cases() {
    check(
        doc! {"_id": 1, "a": dec("1.5")},
        doc! {"$mul": {"a": 2}},
        Doc(doc! {"_id": 1, "a": dec("3.0")}),
    );
    check(
        doc! {"_id": 1, "a": 3},
        doc! {"$mul": {"a": dec("0.5")}},
        Doc(doc! {"_id": 1, "a": dec("1.5")}),
    );
    check(
        doc! {"_id": 1, "a": i64::MAX},
        doc! {"$mul": {"a": dec("2")}},
        Doc(doc! {"_id": 1, "a": dec("18446744073709551614")}),
    );
    check(
        doc! {"_id": 1, "a": 2.0},
        doc! {"$mul": {"a": dec("1.1")}},
        Doc(doc! {"_id": 1, "a": dec("2.200000000000000")}),
    );
    // A missing field gets the operand times int32 0 (`setValueForNewElement`).
    check(
        doc! {"_id": 1},
        doc! {"$mul": {"a": dec("2.50")}},
        Doc(doc! {"_id": 1, "a": dec("0.00")}),
    );
    check(
        doc! {"_id": 1},
        doc! {"$mul": {"a": -2.5}},
        Doc(doc! {"_id": 1, "a": -0.0}),
    );
    check(
        doc! {"_id": 1, "a": dec("2")},
        doc! {"$mul": {"a": dec("1.00")}},
        Doc(doc! {"_id": 1, "a": dec("2")}),
    );
    check(
        doc! {"_id": 1, "a": dec("Infinity")},
        doc! {"$mul": {"a": 0}},
        Doc(doc! {"_id": 1, "a": dec("NaN")}),
    );
    check(
        doc! {"_id": 1, "a": dec("-1E-6176")},
        doc! {"$mul": {"a": dec("0.1")}},
        Doc(doc! {"_id": 1, "a": dec("-0E-6176")}),
    );
    check(
        doc! {"_id": 1, "a": true},
        doc! {"$mul": {"a": dec("2")}},
        Code(14),
    );
}
