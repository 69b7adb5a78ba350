//! Unsigned integers as vectors of decimal digits, and the rounding of an exact
//! result into the decimal128 format: the arithmetic underneath [`super`].
//!
//! Invariants:
//! - A digit vector is most significant first, every element is 0..=9, and it has
//!   no leading zero; zero is the empty vector. Every function here takes and
//!   returns vectors in that form.
//! - Operands have at most 34 digits, and callers fold anything far below the
//!   rounding position into a sticky digit, so no vector grows past a few hundred
//!   digits (a double's exact expansion, 767 digits, is the largest).

use super::{Decimal, EXPONENT_MAX, EXPONENT_MIN, PRECISION, Rounding};
use std::cmp::Ordering;

/// An exact intermediate result, `(-1)^negative × digits × 10^exponent`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct Exact {
    pub(super) negative: bool,
    pub(super) digits: Vec<u8>,
    pub(super) exponent: i64,
}

impl Exact {
    pub(super) fn new(negative: bool, digits: Vec<u8>, exponent: i64) -> Exact {
        Exact {
            negative,
            digits,
            exponent,
        }
    }
}

/// Rounds an exact result into the format: 34 digits, exponents in range, with
/// gradual underflow and overflow to infinity (or to the largest finite value
/// when the rounding direction points away from that infinity).
pub(super) fn round(mut value: Exact, rounding: Rounding) -> Decimal {
    let length = value.digits.len() as i64;
    let drop = (length - PRECISION as i64)
        .max(EXPONENT_MIN - value.exponent)
        .max(0);
    if drop > 0 {
        let drop = usize::try_from(drop).unwrap_or(usize::MAX);
        value.digits = round_off(&value.digits, drop, rounding, value.negative);
        value.exponent += drop as i64;
        if value.digits.len() > PRECISION {
            // Rounding carried into a 35th digit (999… → 1000…): drop the zero.
            value.digits.pop();
            value.exponent += 1;
        }
    }
    if value.digits.is_empty() {
        return Decimal::Finite {
            negative: value.negative,
            coefficient: 0,
            exponent: value.exponent.clamp(EXPONENT_MIN, EXPONENT_MAX),
        };
    }
    if value.exponent > EXPONENT_MAX {
        let pad = value.exponent - EXPONENT_MAX;
        if value.digits.len() as i64 + pad > PRECISION as i64 {
            return overflow(value.negative, rounding);
        }
        value.digits = shifted(&value.digits, pad);
        value.exponent = EXPONENT_MAX;
    }
    Decimal::Finite {
        negative: value.negative,
        coefficient: to_u128(&value.digits),
        exponent: value.exponent,
    }
}

/// The result of an overflow: infinity, unless the rounding direction points
/// away from it, which gives the largest finite value of that sign (IEEE 754 §7.4).
fn overflow(negative: bool, rounding: Rounding) -> Decimal {
    let to_infinity = match rounding {
        Rounding::HalfEven => true,
        Rounding::TowardZero => false,
        Rounding::TowardPositive => !negative,
        Rounding::TowardNegative => negative,
    };
    if to_infinity {
        Decimal::Infinity { negative }
    } else {
        Decimal::Finite {
            negative,
            coefficient: super::COEFFICIENT_MAX,
            exponent: EXPONENT_MAX,
        }
    }
}

/// `digits × 10^-drop` rounded in the given direction, as trimmed digits.
pub(super) fn round_off(digits: &[u8], drop: usize, rounding: Rounding, negative: bool) -> Vec<u8> {
    if drop == 0 {
        return digits.to_vec();
    }
    let keep = digits.len().saturating_sub(drop);
    let mut kept = digits.get(..keep).unwrap_or_default().to_vec();
    // The first dropped digit; zero when the rounding position lies above every digit.
    let first = if drop <= digits.len() {
        digits.get(keep).copied().unwrap_or(0)
    } else {
        0
    };
    let rest_start = if drop <= digits.len() { keep + 1 } else { 0 };
    let sticky = digits
        .get(rest_start..)
        .unwrap_or_default()
        .iter()
        .any(|&d| d != 0);
    let inexact = first != 0 || sticky;
    let up = match rounding {
        Rounding::HalfEven => {
            let odd = kept.last().is_some_and(|d| d % 2 == 1);
            first > 5 || (first == 5 && (sticky || odd))
        }
        Rounding::TowardZero => false,
        Rounding::TowardPositive => inexact && !negative,
        Rounding::TowardNegative => inexact && negative,
    };
    if up {
        increment(&mut kept);
    }
    trim(kept)
}

fn increment(digits: &mut Vec<u8>) {
    for digit in digits.iter_mut().rev() {
        if *digit == 9 {
            *digit = 0;
        } else {
            *digit += 1;
            return;
        }
    }
    digits.insert(0, 1);
}

/// Rounds to at most 34 digits half to even (no exponent limits): the rounding
/// of `binary64_to_bid128`.
pub(super) fn round_precision(digits: Vec<u8>, exponent: i64) -> (Vec<u8>, i64) {
    if digits.len() <= PRECISION {
        return (digits, exponent);
    }
    let drop = digits.len() - PRECISION;
    let mut rounded = round_off(&digits, drop, Rounding::HalfEven, false);
    let mut exponent = exponent + drop as i64;
    if rounded.len() > PRECISION {
        rounded.pop();
        exponent += 1;
    }
    (rounded, exponent)
}

/// The coefficient of `digits × 10^exponent` written at exponent `target`
/// (IEEE quantize, half to even); may carry into one more digit.
pub(super) fn quantize_half_even(digits: &[u8], exponent: i64, target: i64) -> Vec<u8> {
    if target >= exponent {
        let drop = usize::try_from(target - exponent).unwrap_or(usize::MAX);
        round_off(digits, drop, Rounding::HalfEven, false)
    } else {
        shifted(digits, exponent - target)
    }
}

/// `floor(log2(|value|))` for a finite non-zero double (C's `frexp` exponent minus one).
pub(super) fn binary_exponent(value: f64) -> i64 {
    let bits = value.to_bits();
    let biased = ((bits >> 52) & 0x7ff) as i64;
    if biased == 0 {
        let fraction = bits & ((1 << 52) - 1);
        63 - i64::from(fraction.leading_zeros()) - 1074
    } else {
        biased - 1023
    }
}

/// The exact decimal value of a finite non-zero double: digits and exponent.
pub(super) fn exact_f64(value: f64) -> (Vec<u8>, i64) {
    let bits = value.to_bits();
    let biased = ((bits >> 52) & 0x7ff) as i64;
    let fraction = bits & ((1 << 52) - 1);
    let (mut mantissa, mut exponent2) = if biased == 0 {
        (fraction, -1074)
    } else {
        (fraction | (1 << 52), biased - 1075)
    };
    while mantissa & 1 == 0 && exponent2 < 0 {
        mantissa >>= 1;
        exponent2 += 1;
    }
    let mut big = Limbs::from_u64(mantissa);
    if exponent2 >= 0 {
        big.multiply_power(2, exponent2);
        (big.digits(), 0)
    } else {
        // m × 2^-k = m × 5^k × 10^-k.
        big.multiply_power(5, -exponent2);
        (big.digits(), exponent2)
    }
}

/// An unsigned integer in base 10^9 limbs, least significant first: just enough
/// to expand a double exactly.
struct Limbs(Vec<u32>);

const LIMB_BASE: u64 = 1_000_000_000;

impl Limbs {
    fn from_u64(mut value: u64) -> Limbs {
        let mut limbs = Vec::new();
        while value > 0 {
            limbs.push((value % LIMB_BASE) as u32);
            value /= LIMB_BASE;
        }
        Limbs(limbs)
    }

    /// Multiplies by `base^count`, `base` 2 or 5, in chunks that fit a u32 factor.
    fn multiply_power(&mut self, base: u32, count: i64) {
        let chunk: u32 = if base == 2 { 30 } else { 13 };
        let mut left = count;
        while left > 0 {
            let step = left.min(i64::from(chunk));
            self.multiply_small(base.pow(u32::try_from(step).unwrap_or(1)));
            left -= step;
        }
    }

    fn multiply_small(&mut self, factor: u32) {
        let mut carry = 0u64;
        for limb in &mut self.0 {
            let product = u64::from(*limb) * u64::from(factor) + carry;
            *limb = (product % LIMB_BASE) as u32;
            carry = product / LIMB_BASE;
        }
        while carry > 0 {
            self.0.push((carry % LIMB_BASE) as u32);
            carry /= LIMB_BASE;
        }
    }

    fn digits(&self) -> Vec<u8> {
        let mut out = Vec::with_capacity(self.0.len() * 9);
        for limb in self.0.iter().rev() {
            let mut part = [0u8; 9];
            let mut value = *limb;
            for slot in part.iter_mut().rev() {
                *slot = (value % 10) as u8;
                value /= 10;
            }
            out.extend_from_slice(&part);
        }
        trim(out)
    }
}

pub(super) fn digits_of(mut value: u128) -> Vec<u8> {
    let mut digits = Vec::with_capacity(PRECISION);
    while value > 0 {
        digits.push((value % 10) as u8);
        value /= 10;
    }
    digits.reverse();
    digits
}

pub(super) fn to_u128(digits: &[u8]) -> u128 {
    assert!(
        digits.len() <= 38,
        "{} digits do not fit a u128 coefficient",
        digits.len()
    );
    digits
        .iter()
        .fold(0u128, |acc, &d| acc * 10 + u128::from(d))
}

pub(super) fn trim(mut digits: Vec<u8>) -> Vec<u8> {
    let zeros = digits.iter().take_while(|&&d| d == 0).count();
    digits.drain(..zeros);
    digits
}

/// `digits × 10^count`.
pub(super) fn shifted(digits: &[u8], count: i64) -> Vec<u8> {
    let mut out = digits.to_vec();
    if !out.is_empty() {
        out.resize(digits.len() + usize::try_from(count).unwrap_or(0), 0);
    }
    out
}

/// The number of trailing zero digits.
pub(super) fn trailing_zeros(digits: &[u8]) -> usize {
    digits.iter().rev().take_while(|&&d| d == 0).count()
}

pub(super) fn compare_digits(a: &[u8], b: &[u8]) -> Ordering {
    a.len().cmp(&b.len()).then_with(|| a.cmp(b))
}

pub(super) fn add_digits(a: &[u8], b: &[u8]) -> Vec<u8> {
    let mut out = Vec::with_capacity(a.len().max(b.len()) + 1);
    let mut carry = 0;
    let mut ia = a.iter().rev();
    let mut ib = b.iter().rev();
    loop {
        let (da, db) = (ia.next(), ib.next());
        if da.is_none() && db.is_none() {
            break;
        }
        let sum = da.copied().unwrap_or(0) + db.copied().unwrap_or(0) + carry;
        out.push(sum % 10);
        carry = sum / 10;
    }
    if carry > 0 {
        out.push(carry);
    }
    out.reverse();
    trim(out)
}

/// `a - b` for `a >= b`.
pub(super) fn subtract_digits(a: &[u8], b: &[u8]) -> Vec<u8> {
    debug_assert!(
        compare_digits(a, b) != Ordering::Less,
        "subtrahend larger than minuend"
    );
    let mut out = Vec::with_capacity(a.len());
    let mut borrow = 0i8;
    let mut ib = b.iter().rev();
    for &da in a.iter().rev() {
        let mut diff = da as i8 - ib.next().copied().unwrap_or(0) as i8 - borrow;
        borrow = 0;
        if diff < 0 {
            diff += 10;
            borrow = 1;
        }
        out.push(diff as u8);
    }
    out.reverse();
    trim(out)
}

pub(super) fn multiply_digits(a: &[u8], b: &[u8]) -> Vec<u8> {
    if a.is_empty() || b.is_empty() {
        return Vec::new();
    }
    // Least significant first while accumulating.
    let mut sums = vec![0u32; a.len() + b.len()];
    for (i, &da) in a.iter().rev().enumerate() {
        for (j, &db) in b.iter().rev().enumerate() {
            if let Some(slot) = sums.get_mut(i + j) {
                *slot += u32::from(da) * u32::from(db);
            }
        }
    }
    let mut out = Vec::with_capacity(sums.len());
    let mut carry = 0u32;
    for sum in sums {
        let total = sum + carry;
        out.push((total % 10) as u8);
        carry = total / 10;
    }
    while carry > 0 {
        out.push((carry % 10) as u8);
        carry /= 10;
    }
    out.reverse();
    trim(out)
}

/// `a × digit` for a single digit.
fn multiply_digit(a: &[u8], digit: u8) -> Vec<u8> {
    multiply_digits(a, &digits_of(u128::from(digit)))
}

/// Long division: `(a / b, a % b)` for a non-zero `b`.
pub(super) fn divide_digits(a: &[u8], b: &[u8]) -> (Vec<u8>, Vec<u8>) {
    assert!(!b.is_empty(), "division by a zero digit vector");
    let mut quotient = Vec::with_capacity(a.len());
    let mut remainder: Vec<u8> = Vec::new();
    for &digit in a {
        remainder.push(digit);
        remainder = trim(remainder);
        let mut count = 0u8;
        while compare_digits(&remainder, b) != Ordering::Less {
            remainder = subtract_digits(&remainder, b);
            count += 1;
        }
        quotient.push(count);
    }
    (trim(quotient), remainder)
}

/// The integer square root of `a` and whether it is exact: the schoolbook
/// digit-pair method, one root digit per pair of input digits.
pub(super) fn sqrt_digits(a: &[u8]) -> (Vec<u8>, bool) {
    let mut padded = Vec::with_capacity(a.len() + 1);
    if a.len() % 2 == 1 {
        padded.push(0);
    }
    padded.extend_from_slice(a);
    let mut root: Vec<u8> = Vec::new();
    let mut remainder: Vec<u8> = Vec::new();
    for pair in padded.chunks(2) {
        remainder.extend_from_slice(pair);
        remainder = trim(remainder);
        // The largest d with (20 × root + d) × d <= remainder.
        let twenty_root = multiply_digits(&root, &[2, 0]);
        let mut chosen = (0u8, Vec::new());
        for d in (1..=9u8).rev() {
            let candidate = add_digits(&twenty_root, &digits_of(u128::from(d)));
            let product = multiply_digit(&candidate, d);
            if compare_digits(&product, &remainder) != Ordering::Greater {
                chosen = (d, product);
                break;
            }
        }
        remainder = subtract_digits(&remainder, &chosen.1);
        root.push(chosen.0);
        root = trim(root);
    }
    (root, remainder.is_empty())
}
