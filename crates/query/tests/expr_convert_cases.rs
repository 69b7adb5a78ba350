//! Data-driven cases for `$convert`, the `$to*` shorthands and `$isNumber`.
//!
//! One case per cell of MongoDB 7.0's conversion table that matters (manual,
//! "$convert", "Behavior"), plus the parsing and overflow rules of the
//! shorthand pages ("$toInt", "$toDouble", "$toDate", "$toDecimal").

use crate::support::{date, fails_with, millis, yields, yields_missing};
use bson::oid::ObjectId;
use bson::{Bson, Decimal128, Document, Timestamp, doc};

fn d() -> Document {
    doc! {
        "n": Bson::Null,
        "oid": oid(),
        "when": millis(123),
        "big": 3_000_000_000_i64,
    }
}

fn oid() -> ObjectId {
    ObjectId::parse_str("0123456789abcdef01234567").expect("hex")
}

fn decimal(text: &str) -> Bson {
    Bson::Decimal128(text.parse::<Decimal128>().expect("decimal"))
}

/// `{op: input}` yields `expected`.
#[track_caller]
fn to(op: &str, input: Bson, expected: Bson) {
    let mut spec = Document::new();
    spec.insert(op, input);
    yields(&d(), spec, expected);
}

/// `{op: input}` fails with ConversionFailure (241).
#[track_caller]
fn refuses(op: &str, input: Bson) {
    let mut spec = Document::new();
    spec.insert(op, input);
    fails_with(&d(), spec, 241);
}

#[test]
fn to_int() {
    to("$toInt", "42".into(), Bson::Int32(42));
    to("$toInt", "-5".into(), Bson::Int32(-5));
    to("$toInt", 2.9.into(), Bson::Int32(2));
    // Doubles truncate toward zero.
    to("$toInt", (-2.9).into(), Bson::Int32(-2));
    to("$toInt", decimal("1.9"), Bson::Int32(1));
    to("$toInt", true.into(), Bson::Int32(1));
    to("$toInt", Bson::Int64(7), Bson::Int32(7));
    to("$toInt", "$n".into(), Bson::Null);
    to("$toInt", "$nope".into(), Bson::Null);
    // Strings must be plain base-10 integers: no whitespace, hex or fraction.
    refuses("$toInt", " 42".into());
    refuses("$toInt", "42 ".into());
    refuses("$toInt", "0x1A".into());
    refuses("$toInt", "1.5".into());
    refuses("$toInt", "".into());
    refuses("$toInt", "2147483648".into());
    refuses("$toInt", 2_147_483_648.0.into());
    refuses("$toInt", f64::NAN.into());
    refuses("$toInt", f64::INFINITY.into());
    refuses("$toInt", "$big".into());
    refuses("$toInt", decimal("1E+10"));
    refuses("$toInt", "$when".into());
    refuses("$toInt", "$oid".into());
}

#[test]
fn to_long() {
    to(
        "$toLong",
        "9223372036854775807".into(),
        Bson::Int64(i64::MAX),
    );
    to("$toLong", "$when".into(), Bson::Int64(123));
    to("$toLong", 2.9.into(), Bson::Int64(2));
    // Decimals convert exactly, past the 2^53 a double would round at.
    to(
        "$toLong",
        decimal("9223372036854775807"),
        Bson::Int64(i64::MAX),
    );
    to(
        "$toLong",
        decimal("-9007199254740993.7"),
        Bson::Int64(-9_007_199_254_740_993),
    );
    refuses("$toLong", "9223372036854775808".into());
    refuses("$toLong", 9.3e18.into());
    refuses("$toLong", decimal("9223372036854775808"));
    refuses("$toLong", decimal("NaN"));
}

#[test]
fn to_double() {
    to("$toDouble", "2.5".into(), Bson::Double(2.5));
    to("$toDouble", "-1e3".into(), Bson::Double(-1000.0));
    to(
        "$toDouble",
        "-Infinity".into(),
        Bson::Double(f64::NEG_INFINITY),
    );
    to("$toDouble", decimal("1.9"), Bson::Double(1.9));
    to("$toDouble", "$when".into(), Bson::Double(123.0));
    to("$toDouble", true.into(), Bson::Double(1.0));
    to("$toDouble", "$big".into(), Bson::Double(3e9));
    refuses("$toDouble", "1e400".into());
    refuses("$toDouble", " 2.5".into());
    refuses("$toDouble", "0x10".into());
    refuses("$toDouble", "2.5.1".into());
    refuses("$toDouble", decimal("1E+400"));
    refuses("$toDouble", "$oid".into());
}

#[test]
fn to_decimal() {
    // Doubles keep 15 significant digits (manual, "$toDecimal" example: 2.5 gives "2.50000000000000").
    to("$toDecimal", 2.5.into(), decimal("2.50000000000000"));
    to("$toDecimal", 1.into(), decimal("1"));
    to("$toDecimal", "$big".into(), decimal("3000000000"));
    to("$toDecimal", "1.9".into(), decimal("1.9"));
    to("$toDecimal", false.into(), decimal("0"));
    to("$toDecimal", "$when".into(), decimal("123"));
    refuses("$toDecimal", "abc".into());
    refuses("$toDecimal", " 1".into());
    refuses("$toDecimal", "$oid".into());
}

#[test]
fn to_string_and_to_bool() {
    to("$toString", 1.9.into(), Bson::String("1.9".into()));
    to("$toString", 2.0.into(), Bson::String("2".into()));
    to(
        "$toString",
        "$big".into(),
        Bson::String("3000000000".into()),
    );
    to("$toString", decimal("1.9"), Bson::String("1.9".into()));
    to("$toString", true.into(), Bson::String("true".into()));
    to(
        "$toString",
        "$oid".into(),
        Bson::String("0123456789abcdef01234567".into()),
    );
    to(
        "$toString",
        "$when".into(),
        Bson::String("1970-01-01T00:00:00.123Z".into()),
    );
    to(
        "$toString",
        millis(-1),
        Bson::String("1969-12-31T23:59:59.999Z".into()),
    );
    refuses("$toString", Bson::Array(vec![Bson::Array(vec![1.into()])]));
    refuses("$toString", Bson::Document(doc! {"$literal": {"a": 1}}));
    to("$toBool", 0.into(), Bson::Boolean(false));
    to("$toBool", 0.0.into(), Bson::Boolean(false));
    to("$toBool", decimal("0"), Bson::Boolean(false));
    to("$toBool", Bson::Int64(-1), Bson::Boolean(true));
    // Every string is true, even "" and "false" (manual, "$toBool").
    to("$toBool", "".into(), Bson::Boolean(true));
    to("$toBool", "false".into(), Bson::Boolean(true));
    to("$toBool", "$oid".into(), Bson::Boolean(true));
    to("$toBool", "$when".into(), Bson::Boolean(true));
    to("$toBool", "$n".into(), Bson::Null);
}

#[test]
fn to_object_id_and_to_date() {
    to(
        "$toObjectId",
        "0123456789abcdef01234567".into(),
        Bson::ObjectId(oid()),
    );
    to("$toObjectId", "$oid".into(), Bson::ObjectId(oid()));
    refuses("$toObjectId", "xyz".into());
    refuses("$toObjectId", "0123456789abcdef0123456z".into());
    refuses("$toObjectId", 1.into());
    to(
        "$toDate",
        "2017-07-04T14:56:42.911Z".into(),
        date("2017-07-04T14:56:42.911Z"),
    );
    to("$toDate", "2017-07-04".into(), date("2017-07-04T00:00:00Z"));
    to(
        "$toDate",
        "2017-07-04T14:56:42+05:30".into(),
        date("2017-07-04T09:26:42Z"),
    );
    to("$toDate", "$oid".into(), date("1970-08-09T22:25:43Z"));
    to(
        "$toDate",
        Bson::Timestamp(Timestamp {
            time: 60,
            increment: 9,
        }),
        millis(60_000),
    );
    to("$toDate", Bson::Int64(1), millis(1));
    // Doubles and decimals are milliseconds, truncated toward zero.
    to("$toDate", 1.9.into(), millis(1));
    to("$toDate", (-1.9).into(), millis(-1));
    to("$toDate", decimal("1.9"), millis(1));
    to("$toDate", "$when".into(), millis(123));
    // An int does not convert to a date; a long does (manual, "$toDate").
    refuses("$toDate", 1.into());
    refuses("$toDate", true.into());
    refuses("$toDate", "not a date".into());
    refuses("$toDate", f64::NAN.into());
    refuses("$toDate", 1e300.into());
}

#[track_caller]
fn convert(args: Document, expected: Bson) {
    yields(&d(), doc! {"$convert": args}, expected);
}

#[test]
fn convert_targets_by_name_and_number() {
    convert(doc! {"input": "42", "to": "int"}, Bson::Int32(42));
    convert(doc! {"input": "42", "to": 16}, Bson::Int32(42));
    convert(doc! {"input": "42", "to": 18.0}, Bson::Int64(42));
    convert(doc! {"input": 1, "to": "bool"}, Bson::Boolean(true));
    convert(
        doc! {"input": "$oid", "to": "objectId"},
        Bson::ObjectId(oid()),
    );
    convert(
        doc! {"input": 1.5, "to": "decimal"},
        decimal("1.50000000000000"),
    );
    // Types nothing converts to are conversion failures, which onError catches.
    for target in ["minKey", "object", "array", "regex", "timestamp", "missing"] {
        convert(
            doc! {"input": 1.9, "to": target, "onError": "E"},
            Bson::String("E".into()),
        );
        fails_with(&d(), doc! {"$convert": {"input": 1.9, "to": target}}, 241);
    }
}

#[test]
fn convert_on_error_and_on_null() {
    convert(
        doc! {"input": "x", "to": "int", "onError": "E", "onNull": "N"},
        Bson::String("E".into()),
    );
    convert(
        doc! {"input": "$n", "to": "int", "onError": "E", "onNull": "N"},
        Bson::String("N".into()),
    );
    convert(
        doc! {"input": "$nope", "to": "int", "onNull": "N"},
        Bson::String("N".into()),
    );
    convert(doc! {"input": "$n", "to": "int"}, Bson::Null);
    // A null input gives onNull even when 'to' is null (jstest convert.js) ...
    convert(
        doc! {"input": "$n", "to": "$n", "onNull": "N"},
        Bson::String("N".into()),
    );
    // ... and a null 'to' with a real input gives null.
    convert(doc! {"input": 1, "to": "$n", "onError": "E"}, Bson::Null);
    yields_missing(
        &d(),
        doc! {"$convert": {"input": "x", "to": "int", "onError": "$$REMOVE"}},
    );
    // onError covers the conversion only: an error in the input propagates.
    fails_with(
        &d(),
        doc! {"$convert": {"input": {"$divide": [1, 0]}, "to": "string", "onError": "E"}},
        2,
    );
}

#[test]
fn convert_refuses_bad_targets_and_specifications() {
    // An unknown 'to' is an error onError does not catch, checked even for a null input.
    fails_with(
        &d(),
        doc! {"$convert": {"input": 1, "to": "foo", "onError": "E"}},
        2,
    );
    fails_with(
        &d(),
        doc! {"$convert": {"input": "$n", "to": "foo", "onNull": "N"}},
        2,
    );
    fails_with(&d(), doc! {"$convert": {"input": 1, "to": 16.5}}, 9);
    fails_with(&d(), doc! {"$convert": {"input": 1, "to": 100}}, 9);
    fails_with(&d(), doc! {"$convert": {"input": 1, "to": true}}, 9);
    fails_with(&d(), doc! {"$convert": 1}, 9);
    fails_with(&d(), doc! {"$convert": {"input": 1}}, 9);
    fails_with(&d(), doc! {"$convert": {"to": "int"}}, 9);
    fails_with(
        &d(),
        doc! {"$convert": {"input": 1, "to": "int", "x": 1}},
        9,
    );
    fails_with(&d(), doc! {"$toInt": [1, 2]}, 16020);
}

#[test]
fn is_number() {
    for (value, expected) in [
        (Bson::Int32(1), true),
        (Bson::Int64(1), true),
        (Bson::Double(1.5), true),
        (decimal("1"), true),
        (Bson::String("1".into()), false),
        (Bson::String("$nope".into()), false),
        (Bson::String("$n".into()), false),
        (Bson::String("$when".into()), false),
    ] {
        to("$isNumber", value, Bson::Boolean(expected));
    }
}
