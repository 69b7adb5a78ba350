//! Unit and property tests of the decimal128 arithmetic: known results, an i128
//! oracle for integers, and agreement with the `bson` crate's decimal strings.

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
