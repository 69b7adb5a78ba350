//! Exact values of BSON numbers: comparison across int32, int64, double and
//! Decimal128, and the canonical decimal form the key encoding writes.
//!
//! Every finite non-zero number is reduced to `0.d1d2…dn × 10^exp10` with
//! `d1 != 0` and no trailing zero digit. Two numbers are equal exactly when
//! their reduced forms are, so int32 1, int64 1, 1.0 and Decimal128 "1.00" all
//! become `0.1 × 10^1`. Doubles are exact binary fractions, so their reduced form
//! is exact too (0.1 as a double has 55 significant digits).
//!
//! MongoDB orders NaN below every other number and treats all NaNs as equal;
//! -0 equals 0.

use bson::Decimal128;
use std::cmp::Ordering;

/// The class of a number, in MongoDB's order.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub(crate) enum Class {
    NaN = 1,
    NegativeInfinity = 2,
    Negative = 3,
    Zero = 4,
    Positive = 5,
    PositiveInfinity = 6,
}

/// A number reduced to its exact value.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Exact {
    pub(crate) class: Class,
    /// Decimal exponent of the reduced form (meaningful for finite non-zero).
    pub(crate) exp10: i32,
    /// Decimal digits 0..=9, first non-zero, last non-zero (finite non-zero only).
    pub(crate) digits: Vec<u8>,
}

impl Exact {
    fn special(class: Class) -> Exact {
        Exact {
            class,
            exp10: 0,
            digits: Vec::new(),
        }
    }

    /// Builds the reduced form of `negative? -1 : 1 × 0.digits × 10^(digits.len() + shift)`
    /// from raw decimal digits that may carry leading or trailing zeros.
    fn from_digits(negative: bool, raw: &[u8], shift: i64) -> Exact {
        let first = raw.iter().position(|&d| d != 0);
        let Some(first) = first else {
            return Exact::special(Class::Zero);
        };
        let last = raw.iter().rposition(|&d| d != 0).unwrap_or(first);
        let integer_digits = (raw.len() - first) as i64;
        let exp10 = integer_digits + shift;
        Exact {
            class: if negative {
                Class::Negative
            } else {
                Class::Positive
            },
            exp10: i32::try_from(exp10).unwrap_or(if exp10 < 0 { i32::MIN } else { i32::MAX }),
            digits: raw[first..=last].to_vec(),
        }
    }

    pub(crate) fn from_i64(value: i64) -> Exact {
        let digits = decimal_digits_u128(u128::from(value.unsigned_abs()));
        Exact::from_digits(value < 0, &digits, 0)
    }

    pub(crate) fn from_f64(value: f64) -> Exact {
        if value.is_nan() {
            return Exact::special(Class::NaN);
        }
        if value.is_infinite() {
            let class = if value < 0.0 {
                Class::NegativeInfinity
            } else {
                Class::PositiveInfinity
            };
            return Exact::special(class);
        }
        if value == 0.0 {
            return Exact::special(Class::Zero);
        }
        let negative = value < 0.0;
        if value.fract() == 0.0 && value.abs() < 1.0e30 {
            // An integral double below 2^100 fits a u128 exactly.
            let digits = decimal_digits_u128(value.abs() as u128);
            return Exact::from_digits(negative, &digits, 0);
        }
        let bits = value.to_bits();
        let biased = ((bits >> 52) & 0x7ff) as i64;
        let fraction = bits & ((1u64 << 52) - 1);
        let (mut mantissa, mut exp2) = if biased == 0 {
            (fraction, -1074)
        } else {
            (fraction | (1u64 << 52), biased - 1075)
        };
        while mantissa & 1 == 0 && exp2 < 0 {
            mantissa >>= 1;
            exp2 += 1;
        }
        let mut big = BigUint::from_u64(mantissa);
        if exp2 >= 0 {
            for _ in 0..exp2 {
                big.mul_small(2);
            }
            Exact::from_digits(negative, &big.decimal_digits(), 0)
        } else {
            // m × 2^-k = m × 5^k × 10^-k.
            let k = -exp2;
            for _ in 0..k {
                big.mul_small(5);
            }
            Exact::from_digits(negative, &big.decimal_digits(), -k)
        }
    }

    pub(crate) fn from_decimal128(value: Decimal128) -> Exact {
        let bytes = value.bytes();
        let low = u64::from_le_bytes(array8(&bytes, 0));
        let high = u64::from_le_bytes(array8(&bytes, 8));
        let negative = high >> 63 == 1;
        let combination = (high >> 58) & 0x1f;
        if combination == 0x1f {
            return Exact::special(Class::NaN);
        }
        if combination == 0x1e {
            let class = if negative {
                Class::NegativeInfinity
            } else {
                Class::PositiveInfinity
            };
            return Exact::special(class);
        }
        let (exponent, coefficient) = if (high >> 61) & 0b11 == 0b11 {
            // The "large coefficient" form always exceeds 10^34 - 1: non-canonical, so zero.
            (((high >> 47) & 0x3fff) as i64, 0u128)
        } else {
            let coefficient_high = high & ((1u64 << 49) - 1);
            (
                ((high >> 49) & 0x3fff) as i64,
                (u128::from(coefficient_high) << 64) | u128::from(low),
            )
        };
        const COEFFICIENT_MAX: u128 = 9_999_999_999_999_999_999_999_999_999_999_999;
        if coefficient == 0 || coefficient > COEFFICIENT_MAX {
            return Exact::special(Class::Zero);
        }
        let digits = decimal_digits_u128(coefficient);
        Exact::from_digits(negative, &digits, exponent - 6176)
    }

    /// The value as an `i64`, when it is a whole number in range.
    pub(crate) fn whole(&self) -> Option<i64> {
        let negative = match self.class {
            Class::Zero => return Some(0),
            Class::Positive => false,
            Class::Negative => true,
            _ => return None,
        };
        let length = i32::try_from(self.digits.len()).ok()?;
        // 0.d1…dn × 10^exp10 is whole when no digit falls after the point; 19 digits is
        // the most an i64 holds.
        if self.exp10 < length || self.exp10 > 19 {
            return None;
        }
        let mut magnitude: i128 = 0;
        for &digit in &self.digits {
            magnitude = magnitude * 10 + i128::from(digit);
        }
        for _ in length..self.exp10 {
            magnitude *= 10;
        }
        i64::try_from(if negative { -magnitude } else { magnitude }).ok()
    }

    /// Compares two reduced numbers by value.
    pub(crate) fn compare(&self, other: &Exact) -> Ordering {
        match self.class.cmp(&other.class) {
            Ordering::Equal => {}
            unequal => return unequal,
        }
        let magnitude = || {
            self.exp10
                .cmp(&other.exp10)
                .then_with(|| self.digits.as_slice().cmp(&other.digits))
        };
        match self.class {
            Class::Positive => magnitude(),
            Class::Negative => magnitude().reverse(),
            _ => Ordering::Equal,
        }
    }
}

fn array8(bytes: &[u8; 16], start: usize) -> [u8; 8] {
    let mut out = [0u8; 8];
    out.copy_from_slice(&bytes[start..start + 8]);
    out
}

/// The decimal digits of `value`, most significant first (`[0]` for zero).
fn decimal_digits_u128(mut value: u128) -> Vec<u8> {
    let mut digits = Vec::with_capacity(40);
    loop {
        digits.push((value % 10) as u8);
        value /= 10;
        if value == 0 {
            break;
        }
    }
    digits.reverse();
    digits
}

/// Just enough of an unsigned big integer to expand a double exactly.
struct BigUint {
    /// Little-endian base-2^32 limbs.
    limbs: Vec<u32>,
}

impl BigUint {
    fn from_u64(value: u64) -> BigUint {
        BigUint {
            limbs: vec![value as u32, (value >> 32) as u32],
        }
    }

    fn mul_small(&mut self, factor: u32) {
        let mut carry = 0u64;
        for limb in &mut self.limbs {
            let product = u64::from(*limb) * u64::from(factor) + carry;
            *limb = product as u32;
            carry = product >> 32;
        }
        if carry != 0 {
            self.limbs.push(carry as u32);
        }
    }

    /// Divides in place by `divisor`, returning the remainder.
    fn div_small(&mut self, divisor: u32) -> u32 {
        let mut remainder = 0u64;
        for limb in self.limbs.iter_mut().rev() {
            let current = (remainder << 32) | u64::from(*limb);
            *limb = (current / u64::from(divisor)) as u32;
            remainder = current % u64::from(divisor);
        }
        while self.limbs.last() == Some(&0) {
            self.limbs.pop();
        }
        remainder as u32
    }

    fn decimal_digits(mut self) -> Vec<u8> {
        let mut chunks = Vec::new();
        while !self.limbs.is_empty() {
            chunks.push(self.div_small(1_000_000_000));
        }
        let mut digits = Vec::with_capacity(chunks.len() * 9);
        for chunk in chunks.iter().rev() {
            let mut part = [0u8; 9];
            let mut value = *chunk;
            for slot in part.iter_mut().rev() {
                *slot = (value % 10) as u8;
                value /= 10;
            }
            digits.extend_from_slice(&part);
        }
        digits
    }
}

/// Compares an integer with a double exactly, as MongoDB does.
pub(crate) fn compare_i64_f64(integer: i64, double: f64) -> Ordering {
    const TWO_63: f64 = 9_223_372_036_854_775_808.0;
    if double.is_nan() {
        return Ordering::Greater;
    }
    if double >= TWO_63 {
        return Ordering::Less;
    }
    if double < -TWO_63 {
        return Ordering::Greater;
    }
    let truncated = double.trunc();
    // |truncated| < 2^63 here, so the conversion is exact.
    match integer.cmp(&(truncated as i64)) {
        Ordering::Equal => 0.0f64
            .partial_cmp(&(double - truncated))
            .unwrap_or(Ordering::Equal),
        unequal => unequal,
    }
}

/// Compares two doubles in MongoDB's order: NaN first and equal to NaN, -0 = 0.
pub(crate) fn compare_f64(a: f64, b: f64) -> Ordering {
    match (a.is_nan(), b.is_nan()) {
        (true, true) => Ordering::Equal,
        (true, false) => Ordering::Less,
        (false, true) => Ordering::Greater,
        (false, false) => a.partial_cmp(&b).unwrap_or(Ordering::Equal),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn decimal(text: &str) -> Decimal128 {
        text.parse().expect("decimal literal")
    }

    #[test]
    fn one_is_one_in_every_numeric_type() {
        let one = Exact::from_i64(1);
        assert_eq!(one, Exact::from_f64(1.0));
        assert_eq!(one, Exact::from_decimal128(decimal("1.0")));
        assert_eq!(one, Exact::from_decimal128(decimal("0.001E3")));
        assert_eq!(one.exp10, 1);
        assert_eq!(one.digits, vec![1]);
    }

    #[test]
    fn doubles_expand_exactly() {
        // 0.1 as a double is 0.1000000000000000055511151231257827021181583404541015625.
        let tenth = Exact::from_f64(0.1);
        assert_eq!(tenth.exp10, 0);
        assert_eq!(tenth.digits.len(), 55);
        assert_eq!(
            tenth.compare(&Exact::from_decimal128(decimal("0.1"))),
            Ordering::Greater
        );
        let tiny = Exact::from_f64(f64::from_bits(1));
        assert_eq!(tiny.exp10, -323);
        let huge = Exact::from_f64(f64::MAX);
        assert_eq!(huge.exp10, 309);
    }

    #[test]
    fn integers_beyond_two_to_the_53_compare_exactly_with_doubles() {
        let big = (1i64 << 53) + 1;
        let nearest = big as f64; // rounds to 2^53
        assert_eq!(compare_i64_f64(big, nearest), Ordering::Greater);
        assert_eq!(
            Exact::from_i64(big).compare(&Exact::from_f64(nearest)),
            Ordering::Greater
        );
        assert_eq!(
            compare_i64_f64(i64::MAX, 9_223_372_036_854_775_808.0),
            Ordering::Less
        );
        assert_eq!(
            compare_i64_f64(i64::MIN, -9_223_372_036_854_775_808.0),
            Ordering::Equal
        );
        assert_eq!(compare_i64_f64(3, 3.5), Ordering::Less);
        assert_eq!(compare_i64_f64(-3, -3.5), Ordering::Greater);
    }

    #[test]
    fn nan_sorts_first_and_zero_signs_are_equal() {
        assert_eq!(compare_f64(f64::NAN, f64::NEG_INFINITY), Ordering::Less);
        assert_eq!(compare_f64(f64::NAN, -f64::NAN), Ordering::Equal);
        assert_eq!(compare_f64(-0.0, 0.0), Ordering::Equal);
        assert_eq!(Exact::from_f64(-0.0), Exact::from_i64(0));
        assert_eq!(
            Exact::from_decimal128(decimal("NaN")),
            Exact::from_f64(f64::NAN)
        );
        assert_eq!(Exact::from_decimal128(decimal("-0.00")), Exact::from_i64(0));
    }
}
