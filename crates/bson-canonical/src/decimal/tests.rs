//! Unit and property tests of the decimal128 arithmetic: known results (many from
//! the IEEE 754 rules MongoDB's Intel library follows), an i128 oracle for integers,
//! and agreement with the `bson` crate's decimal strings.

use proptest::prelude::*;

use super::*;

fn parse(text: &str) -> Decimal {
    Decimal::decode(text.parse().expect("decimal literal"))
}

fn show(value: Decimal) -> String {
    value.encode().to_string()
}

#[track_caller]
fn check_add(x: &str, y: &str, want: &str) {
    assert_eq!(show(add(parse(x), parse(y))), want, "{x} + {y}");
    assert_eq!(show(add(parse(y), parse(x))), want, "{y} + {x}");
}

#[track_caller]
fn check_multiply(x: &str, y: &str, want: &str) {
    assert_eq!(show(multiply(parse(x), parse(y))), want, "{x} × {y}");
    assert_eq!(show(multiply(parse(y), parse(x))), want, "{y} × {x}");
}

#[test]
fn addition_is_exact_at_the_smaller_exponent() {
    check_add("0.1", "0.2", "0.3");
    check_add("1.0", "1.00", "2.00");
    check_add("1E+10", "1", "10000000001");
    check_add("1", "-1", "0");
    check_add("-0", "-0", "-0");
    check_add("-0", "0", "0");
    check_add("0E+5", "0E-3", "0.000");
    check_add("1E+5", "0E-3", "100000.000");
    check_add("1E+5", "0E-40", "100000.0000000000000000000000000000");
    check_add("-2.5", "1", "-1.5");
    check_add("1", "-1E-34", "0.9999999999999999999999999999999999");
}

#[test]
fn addition_rounds_half_to_even_at_34_digits() {
    check_add(
        "9999999999999999999999999999999999",
        "1",
        "1.000000000000000000000000000000000E+34",
    );
    check_add(
        "1234567890123456789012345678901234",
        "0.5",
        "1234567890123456789012345678901234",
    );
    check_add(
        "1234567890123456789012345678901235",
        "0.5",
        "1234567890123456789012345678901236",
    );
    check_add(
        "1234567890123456789012345678901234",
        "0.5000000000000000000001",
        "1234567890123456789012345678901235",
    );
    check_add("1", "1E-100", "1.000000000000000000000000000000000");
    check_add("1", "-1E-100", "1.000000000000000000000000000000000");
    check_add(
        "1E+6000",
        "-1E-6000",
        "1.000000000000000000000000000000000E+6000",
    );
}

#[test]
fn overflow_and_special_values() {
    check_add(
        "9.999999999999999999999999999999999E+6144",
        "9.999999999999999999999999999999999E+6144",
        "Infinity",
    );
    check_add("Infinity", "-Infinity", "NaN");
    check_add("Infinity", "1", "Infinity");
    check_add("-Infinity", "-Infinity", "-Infinity");
    check_add("NaN", "1", "NaN");
    check_multiply("Infinity", "0", "NaN");
    check_multiply("-Infinity", "2", "-Infinity");
    check_multiply("-Infinity", "-Infinity", "Infinity");
    check_multiply("NaN", "Infinity", "NaN");
    check_multiply(
        "9.999999999999999999999999999999999E+6144",
        "10",
        "Infinity",
    );
}

#[test]
fn multiplication_keeps_the_exponent_sum() {
    check_multiply("2.50", "0", "0.00");
    check_multiply("1.5", "2", "3.0");
    check_multiply("-1", "0", "-0");
    check_multiply("1.1", "1.1", "1.21");
    check_multiply("1E+6111", "1E+2", "1.00E+6113");
    check_multiply("1E-6176", "0.5", "0E-6176");
    check_multiply("1E-6176", "0.6", "1E-6176");
    check_multiply("1E-6176", "1E-6176", "0E-6176");
    check_multiply(
        "3333333333333333333333333333333333",
        "3",
        "9999999999999999999999999999999999",
    );
    check_multiply(
        "3333333333333333333333333333333333",
        "4",
        "1.333333333333333333333333333333333E+34",
    );
}

#[test]
fn doubles_convert_to_fifteen_significant_digits() {
    let cases: &[(f64, &str)] = &[
        (0.1, "0.100000000000000"),
        (1.0, "1.00000000000000"),
        (-2.5, "-2.50000000000000"),
        (100_000.0, "100000.000000000"),
        (0.999_999_999_999_999_4, "0.999999999999999"),
        (0.000_01, "0.0000100000000000000"),
        (1_000_000_000_000_005.0, "1.00000000000000E+15"),
        (1_000_000_000_000_015.0, "1.00000000000002E+15"),
        (f64::MAX, "1.79769313486232E+308"),
        (5e-324, "4.94065645841247E-324"),
        (0.0, "0"),
        (-0.0, "-0"),
        (f64::INFINITY, "Infinity"),
        (f64::NEG_INFINITY, "-Infinity"),
        (f64::NAN, "NaN"),
    ];
    for &(value, want) in cases {
        assert_eq!(show(Decimal::from_f64(value)), want, "{value:e}");
    }
}

#[test]
fn integers_convert_exactly() {
    assert_eq!(show(Decimal::from_i64(i64::MIN)), "-9223372036854775808");
    assert_eq!(show(Decimal::from_i64(0)), "0");
    assert_eq!(show(Decimal::from_i64(42)), "42");
}

#[test]
fn non_canonical_encodings_read_as_zero() {
    // The large-coefficient form (bits 126-125 set) with exponent 0.
    let bits: u128 = (0b11 << 125) | (6176 << 111) | 1;
    let value = Decimal::decode(Decimal128::from_bytes(bits.to_le_bytes()));
    assert_eq!(
        value,
        Decimal::Finite {
            negative: false,
            coefficient: 0,
            exponent: 0
        }
    );
    // A small-form coefficient above 10^34 - 1.
    let bits: u128 = (6176 << 113) | (COEFFICIENT_MAX + 1);
    let value = Decimal::decode(Decimal128::from_bytes(bits.to_le_bytes()));
    assert_eq!(show(value), "0");
}

#[track_caller]
fn check(got: Decimal, want: &str) {
    assert_eq!(show(got), want);
}

#[test]
fn subtraction_is_addition_of_the_negation() {
    check(subtract(parse("20.99"), parse("0.99")), "20.00");
    check(subtract(parse("1"), parse("1")), "0");
    check(subtract(parse("-0"), parse("0")), "-0");
    check(subtract(parse("Infinity"), parse("Infinity")), "NaN");
    check(subtract(parse("1"), parse("NaN")), "NaN");
}

#[test]
fn division_prefers_the_exponent_difference_when_exact() {
    check(divide(parse("10"), parse("4")), "2.5");
    check(divide(parse("1.00"), parse("1")), "1.00");
    check(divide(parse("31.00"), parse("2")), "15.50");
    check(divide(parse("1E+2"), parse("1")), "1E+2");
    check(divide(parse("100"), parse("1E+2")), "1.00");
    check(divide(parse("1"), parse("8")), "0.125");
    check(
        divide(parse("1"), parse("3")),
        "0.3333333333333333333333333333333333",
    );
    check(
        divide(parse("2"), parse("3")),
        "0.6666666666666666666666666666666667",
    );
    check(
        divide(parse("-1"), parse("3")),
        "-0.3333333333333333333333333333333333",
    );
    check(divide(parse("0"), parse("5")), "0");
    check(divide(parse("0.00"), parse("5")), "0.00");
    check(divide(parse("1"), parse("0")), "Infinity");
    check(divide(parse("-1"), parse("0")), "-Infinity");
    check(divide(parse("0"), parse("0")), "NaN");
    check(divide(parse("Infinity"), parse("-2")), "-Infinity");
    check(divide(parse("1"), parse("Infinity")), "0E-6176");
    check(divide(parse("Infinity"), parse("Infinity")), "NaN");
    check(
        divide(
            parse("9.999999999999999999999999999999999E+6144"),
            parse("1E-10"),
        ),
        "Infinity",
    );
}

#[test]
fn remainder_has_the_sign_of_the_dividend() {
    check(remainder(parse("10"), parse("3")), "1");
    check(remainder(parse("-10"), parse("3")), "-1");
    check(remainder(parse("10"), parse("-3")), "1");
    check(remainder(parse("5.5"), parse("2")), "1.5");
    check(remainder(parse("1E+10"), parse("7")), "4");
    check(remainder(parse("3"), parse("1E+40")), "3");
    check(remainder(parse("7.25"), parse("0.5")), "0.25");
    check(remainder(parse("1"), parse("0")), "NaN");
    check(remainder(parse("Infinity"), parse("2")), "NaN");
    check(remainder(parse("2"), parse("Infinity")), "2");
}

#[test]
fn square_roots_are_exact_when_they_can_be() {
    check(sqrt(parse("4")), "2");
    check(sqrt(parse("4.00")), "2.0");
    check(sqrt(parse("0.25")), "0.5");
    check(sqrt(parse("1E+2")), "1E+1");
    check(sqrt(parse("2")), "1.414213562373095048801688724209698");
    check(sqrt(parse("0")), "0");
    check(sqrt(parse("-0")), "-0");
    check(sqrt(parse("-1")), "NaN");
    check(sqrt(parse("Infinity")), "Infinity");
}

#[test]
fn comparison_is_numeric() {
    use std::cmp::Ordering::{Equal, Greater, Less};
    assert_eq!(compare(parse("1.0"), parse("1.00")), Some(Equal));
    assert_eq!(compare(parse("-0"), parse("0")), Some(Equal));
    assert_eq!(compare(parse("0.1"), parse("0.09")), Some(Greater));
    assert_eq!(compare(parse("-0.1"), parse("-0.09")), Some(Less));
    assert_eq!(compare(parse("1E+3"), parse("999")), Some(Greater));
    assert_eq!(compare(parse("-Infinity"), parse("-1E+6000")), Some(Less));
    assert_eq!(compare(parse("NaN"), parse("1")), None);
}

#[test]
fn quantize_follows_mongodb() {
    let place = |p: i64| Decimal::Finite {
        negative: false,
        coefficient: 1,
        exponent: -p,
    };
    // The cases of MongoDB's jstests/aggregation/expressions/round_trunc.js.
    check(
        quantize(parse("1.298"), place(1), Rounding::HalfEven),
        "1.3",
    );
    check(
        quantize(parse("1.298"), place(1), Rounding::TowardZero),
        "1.2",
    );
    check(
        quantize(parse("23.298"), place(-1), Rounding::HalfEven),
        "2E+1",
    );
    check(quantize(parse("-1.6"), place(0), Rounding::HalfEven), "-2");
    check(
        quantize(
            parse("1.298912343250054252245154325"),
            place(20),
            Rounding::HalfEven,
        ),
        "1.29891234325005425225",
    );
    check(
        quantize(parse("1.298"), place(100), Rounding::TowardZero),
        "1.298000000000000000000000000000000",
    );
    check(quantize(parse("2.5"), place(0), Rounding::HalfEven), "2");
    check(quantize(parse("3.5"), place(0), Rounding::HalfEven), "4");
    // $ceil and $floor quantize to 0E0, which takes the plain IEEE rule.
    check(
        quantize(parse("-1.2"), Decimal::ZERO, Rounding::TowardPositive),
        "-1",
    );
    check(
        quantize(parse("-0.2"), Decimal::ZERO, Rounding::TowardPositive),
        "-0",
    );
    check(
        quantize(parse("1.2"), Decimal::ZERO, Rounding::TowardNegative),
        "1",
    );
    check(
        quantize(parse("1E+40"), Decimal::ZERO, Rounding::TowardNegative),
        "NaN",
    );
    check(
        quantize(parse("Infinity"), Decimal::ZERO, Rounding::TowardNegative),
        "NaN",
    );
    check(quantize(parse("NaN"), place(2), Rounding::HalfEven), "NaN");
}

#[test]
fn conversions_to_integers_and_doubles() {
    assert_eq!(parse("2.5").to_i64(Rounding::HalfEven), Some(2));
    assert_eq!(parse("-2.5").to_i64(Rounding::HalfEven), Some(-2));
    assert_eq!(parse("-2.5").to_i64(Rounding::TowardZero), Some(-2));
    assert_eq!(parse("-2.1").to_i64(Rounding::TowardNegative), Some(-3));
    assert_eq!(parse("1E+3").to_i64(Rounding::HalfEven), Some(1000));
    assert_eq!(
        parse("9223372036854775807").to_i64(Rounding::HalfEven),
        Some(i64::MAX)
    );
    assert_eq!(
        parse("-9223372036854775808").to_i64(Rounding::HalfEven),
        Some(i64::MIN)
    );
    assert_eq!(
        parse("9223372036854775808").to_i64(Rounding::HalfEven),
        None
    );
    assert_eq!(parse("1E+30").to_i64(Rounding::HalfEven), None);
    assert_eq!(parse("NaN").to_i64(Rounding::HalfEven), None);
    assert_eq!(parse("20.99").to_f64(), 20.99);
    assert_eq!(parse("-0").to_f64().to_bits(), (-0.0f64).to_bits());
    assert_eq!(parse("1E+400").to_f64(), f64::INFINITY);
    assert!(parse("NaN").to_f64().is_nan());
    check(
        Decimal::from_f64_exact(0.1),
        "0.1000000000000000055511151231257827",
    );
    check(
        Decimal::from_i128(i128::MAX),
        "1.701411834604692317316873037158841E+38",
    );
    check(
        parse("1.5").normalize(),
        "1.500000000000000000000000000000000",
    );
}

/// Rounds an exact integer to 34 significant digits, half to even: the oracle.
fn reference_round(value: i128) -> (bool, u128, i64) {
    let negative = value < 0;
    let mut magnitude = value.unsigned_abs();
    let mut exponent = 0;
    let digits = magnitude.checked_ilog10().map_or(1, |l| l + 1);
    if digits > 34 {
        let divisor = 10u128.pow(digits - 34);
        let (quotient, remainder) = (magnitude / divisor, magnitude % divisor);
        let half = divisor / 2;
        magnitude = quotient;
        if remainder > half || (remainder == half && quotient % 2 == 1) {
            magnitude += 1;
        }
        exponent = i64::from(digits - 34);
        if magnitude > COEFFICIENT_MAX {
            magnitude /= 10;
            exponent += 1;
        }
    }
    (negative, magnitude, exponent)
}

fn finite(value: Decimal) -> (bool, u128, i64) {
    match value {
        Decimal::Finite {
            negative,
            coefficient,
            exponent,
        } => (negative && coefficient != 0, coefficient, exponent),
        other => panic!("expected a finite result, got {other:?}"),
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(2000))]

    #[test]
    fn integer_arithmetic_matches_i128(a in any::<i64>(), b in any::<i64>()) {
        let (x, y) = (Decimal::from_i64(a), Decimal::from_i64(b));
        let sum = i128::from(a) + i128::from(b);
        prop_assert_eq!(finite(add(x, y)), reference_round(sum));
        let product = i128::from(a) * i128::from(b);
        prop_assert_eq!(finite(multiply(x, y)), reference_round(product));
    }

    #[test]
    fn scaled_integers_add_exactly(
        a in -10i64.pow(15)..10i64.pow(15),
        b in -10i64.pow(15)..10i64.pow(15),
        ea in -9i64..9,
        eb in -9i64..9,
    ) {
        // 15 digits shifted by at most 18 stay within 34: exact at the smaller exponent.
        let x = Decimal::Finite { negative: a < 0, coefficient: u128::from(a.unsigned_abs()), exponent: ea };
        let y = Decimal::Finite { negative: b < 0, coefficient: u128::from(b.unsigned_abs()), exponent: eb };
        let low = ea.min(eb);
        let scale = |c: i64, e: i64| i128::from(c) * 10i128.pow(u32::try_from(e - low).unwrap_or(0));
        let exact = scale(a, ea) + scale(b, eb);
        let (negative, coefficient, exponent) = finite(add(x, y));
        prop_assert_eq!(exponent, low);
        prop_assert_eq!(negative, exact < 0);
        prop_assert_eq!(coefficient, exact.unsigned_abs());
    }

    #[test]
    fn division_times_divisor_gives_back_the_dividend(
        a in -10i64.pow(17)..10i64.pow(17),
        b in 1i64..10i64.pow(9),
    ) {
        // An exact quotient multiplies back exactly; an inexact one is within half a
        // unit in the 34th digit.
        let (x, y) = (Decimal::from_i64(a), Decimal::from_i64(b));
        let quotient = divide(x, y);
        if a % b == 0 {
            prop_assert_eq!(finite(quotient), reference_round(i128::from(a / b)));
        }
        let back = multiply(quotient, y).to_f64();
        prop_assert!((back - a as f64).abs() <= (a as f64).abs() * 1e-15 + 1e-9);
        let rest = remainder(x, y);
        prop_assert_eq!(finite(rest).1, u128::from((a % b).unsigned_abs()));
    }

    #[test]
    fn square_roots_square_back(c in 1u64..u64::MAX, e in -40i64..40) {
        let x = Decimal::Finite { negative: false, coefficient: u128::from(c), exponent: e };
        let root = sqrt(x);
        let square = multiply(root, root);
        let (x_f, s_f) = (x.to_f64(), square.to_f64());
        prop_assert!(((s_f - x_f) / x_f).abs() < 1e-15, "{} {}", show(root), show(square));
    }

    #[test]
    fn comparison_agrees_with_i128(a in any::<i64>(), b in any::<i64>(), e in 0i64..3) {
        let scale = |v: i64| Decimal::Finite {
            negative: v < 0, coefficient: u128::from(v.unsigned_abs()), exponent: -e,
        };
        prop_assert_eq!(compare(scale(a), scale(b)), Some(a.cmp(&b)));
        prop_assert_eq!(compare(Decimal::from_i64(a), scale(a).normalize()),
            Some(if e == 0 || a == 0 { std::cmp::Ordering::Equal } else if a > 0 {
                std::cmp::Ordering::Greater } else { std::cmp::Ordering::Less }));
    }

    #[test]
    fn encoding_round_trips_and_agrees_with_bson_strings(
        negative in any::<bool>(),
        coefficient in 0u128..=COEFFICIENT_MAX,
        exponent in EXPONENT_MIN..=EXPONENT_MAX,
    ) {
        let value = Decimal::Finite { negative, coefficient, exponent };
        let encoded = value.encode();
        prop_assert_eq!(Decimal::decode(encoded), value);
        let text = format!("{}{coefficient}E{exponent}", if negative { "-" } else { "" });
        let parsed: Decimal128 = text.parse().expect("bson parses");
        prop_assert_eq!(parsed.bytes(), encoded.bytes());
        let back: Decimal128 = encoded.to_string().parse().expect("bson parses its own output");
        prop_assert_eq!(back.bytes(), encoded.bytes());
    }

    #[test]
    fn doubles_round_like_formatting_to_fifteen_digits(bits in any::<u64>()) {
        let value = f64::from_bits(bits);
        prop_assume!(value.is_finite() && value != 0.0);
        // Rust formats the exact value rounded half to even; MongoDB first rounds to
        // 34 digits, which only differs on a tie manufactured by that first rounding.
        let text = format!("{value:.14e}");
        let (mantissa, exp) = text.split_once('e').expect("exponent");
        let digits: String = mantissa.chars().filter(char::is_ascii_digit).collect();
        let coefficient: u128 = digits.parse().expect("digits");
        let exponent: i64 = exp.parse::<i64>().expect("exponent") - 14;
        prop_assert_eq!(
            Decimal::from_f64(value),
            Decimal::Finite { negative: value < 0.0, coefficient, exponent }
        );
    }
}
