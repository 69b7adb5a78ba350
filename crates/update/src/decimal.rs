//! IEEE 754-2008 decimal128 arithmetic for `$inc` and `$mul`: exact addition and
//! multiplication of BID-encoded values rounded to 34 digits (half to even), and
//! MongoDB's conversions of int32, int64 and double operands to decimal.
//!
//! MongoDB computes `$inc`/`$mul` in decimal as soon as either side is a
//! Decimal128 (`SafeNum::addInternal`/`mulInternal` call `Decimal128::add`/
//! `multiply`, the Intel BID library in round-half-even). `SafeNum::getDecimal`
//! converts an int32 or int64 exactly (exponent 0) and a double with
//! `Decimal128(double, kRoundTo15Digits)`: the double's exact binary value rounded
//! to 34 digits, then quantized to exactly 15 significant digits
//! (mongodb/mongo `src/mongo/util/safe_num.cpp`, `src/mongo/platform/decimal128.cpp`).
//! So `$inc: {a: 0.1}` on `NumberDecimal("1")` stores `1.100000000000000`, not the
//! shortest round-trip `1.1`.
//!
//! While computing, a coefficient is a vector of decimal digits (most significant
//! first, no leading zeros, empty for zero): operands have at most 34 digits and
//! an addend far below the rounding position is folded into one sticky digit, so
//! no intermediate exceeds about a hundred digits.

use bson::Decimal128;

/// Significant digits of a decimal128 coefficient.
const PRECISION: usize = 34;
/// The smallest exponent (of the coefficient's last digit).
const EXPONENT_MIN: i64 = -6176;
/// The largest exponent.
const EXPONENT_MAX: i64 = 6111;
/// The exponent bias of the encoding.
const EXPONENT_BIAS: i64 = 6176;
/// The largest canonical coefficient, 10^34 - 1.
const COEFFICIENT_MAX: u128 = 9_999_999_999_999_999_999_999_999_999_999_999;
/// The largest canonical NaN payload, 10^33 - 1.
const PAYLOAD_MAX: u128 = 999_999_999_999_999_999_999_999_999_999_999;

const _: () = assert!(COEFFICIENT_MAX < 1 << 113);
const _: () = assert!(EXPONENT_MAX + EXPONENT_BIAS < 1 << 14);

/// A decoded decimal128 value.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Decimal {
    /// A quiet NaN (a signaling NaN is quieted when decoded).
    NaN {
        negative: bool,
        payload: u128,
    },
    Infinity {
        negative: bool,
    },
    /// `(-1)^negative × coefficient × 10^exponent`, coefficient at most 10^34 - 1
    /// and exponent in `EXPONENT_MIN..=EXPONENT_MAX`.
    Finite {
        negative: bool,
        coefficient: u128,
        exponent: i64,
    },
}

/// The NaN an invalid operation (∞ - ∞, 0 × ∞) produces.
const DEFAULT_NAN: Decimal = Decimal::NaN {
    negative: false,
    payload: 0,
};

impl Decimal {
    /// Decodes BSON's little-endian BID bytes; a non-canonical coefficient reads as zero.
    pub(crate) fn decode(value: Decimal128) -> Decimal {
        let bits = u128::from_le_bytes(value.bytes());
        let negative = bits >> 127 == 1;
        let combination = (bits >> 122) & 0x1f;
        if combination == 0x1f {
            let payload = bits & ((1 << 110) - 1);
            let payload = if payload > PAYLOAD_MAX { 0 } else { payload };
            return Decimal::NaN { negative, payload };
        }
        if combination == 0x1e {
            return Decimal::Infinity { negative };
        }
        let (biased, coefficient) = if (bits >> 125) & 0b11 == 0b11 {
            // The large-coefficient form always exceeds 10^34 - 1: non-canonical, zero.
            ((bits >> 111) & 0x3fff, 0)
        } else {
            let coefficient = bits & ((1 << 113) - 1);
            let coefficient = if coefficient > COEFFICIENT_MAX {
                0
            } else {
                coefficient
            };
            ((bits >> 113) & 0x3fff, coefficient)
        };
        Decimal::Finite {
            negative,
            coefficient,
            exponent: biased as i64 - EXPONENT_BIAS,
        }
    }

    /// Encodes as BSON's little-endian BID bytes (always the small-coefficient form).
    pub(crate) fn encode(self) -> Decimal128 {
        let (negative, rest) = match self {
            Decimal::NaN { negative, payload } => (negative, (0x1f << 122) | payload),
            Decimal::Infinity { negative } => (negative, 0x1e << 122),
            Decimal::Finite {
                negative,
                coefficient,
                exponent,
            } => {
                assert!(
                    coefficient <= COEFFICIENT_MAX,
                    "coefficient {coefficient} has more than 34 digits"
                );
                assert!(
                    (EXPONENT_MIN..=EXPONENT_MAX).contains(&exponent),
                    "exponent {exponent} out of range"
                );
                let biased = u128::try_from(exponent + EXPONENT_BIAS).unwrap_or_default();
                (negative, (biased << 113) | coefficient)
            }
        };
        let sign = if negative { 1u128 << 127 } else { 0 };
        Decimal128::from_bytes((sign | rest).to_le_bytes())
    }

    /// An integer, exactly (MongoDB's `Decimal128(int64_t)`: exponent 0).
    pub(crate) fn from_i64(value: i64) -> Decimal {
        Decimal::Finite {
            negative: value < 0,
            coefficient: u128::from(value.unsigned_abs()),
            exponent: 0,
        }
    }

    /// A double as MongoDB converts it for arithmetic (`kRoundTo15Digits`): the
    /// exact value rounded to 34 digits, then quantized to 15 significant digits,
    /// both half to even.
    pub(crate) fn from_f64(value: f64) -> Decimal {
        let negative = value.is_sign_negative();
        if value.is_nan() {
            return Decimal::NaN {
                negative,
                payload: 0,
            };
        }
        if value.is_infinite() {
            return Decimal::Infinity { negative };
        }
        if value == 0.0 {
            return Decimal::Finite {
                negative,
                coefficient: 0,
                exponent: 0,
            };
        }
        let (digits, exponent) = exact_f64(value);
        let (digits, exponent) = round_precision(digits, exponent);
        // MongoDB's first guess of the decimal exponent, floor(log10(2^e)) with
        // log10(2) ≈ 0.30103; one too low when the value is near the next power of ten.
        let base2 = binary_exponent(value);
        let mut base10 = base2 * 30103 / 100_000;
        if base2 < 0 {
            base10 -= 1;
        }
        let mut quantized = quantize(&digits, exponent, base10 - 14);
        if quantized.len() > 15 {
            quantized = quantize(&digits, exponent, base10 - 13);
            base10 += 1;
        }
        debug_assert_eq!(quantized.len(), 15, "{value} did not quantize to 15 digits");
        Decimal::Finite {
            negative,
            coefficient: to_u128(&quantized),
            exponent: base10 - 14,
        }
    }

    /// Whether the value is a NaN.
    pub(crate) fn is_nan(self) -> bool {
        matches!(self, Decimal::NaN { .. })
    }
}

/// `x + y`, correctly rounded (IEEE 754-2008 addition, round half to even).
pub(crate) fn add(x: Decimal, y: Decimal) -> Decimal {
    use Decimal::{Finite, Infinity, NaN};
    match (x, y) {
        (NaN { .. }, _) => x,
        (_, NaN { .. }) => y,
        (Infinity { negative: a }, Infinity { negative: b }) if a != b => DEFAULT_NAN,
        (Infinity { .. }, _) => x,
        (_, Infinity { .. }) => y,
        (
            Finite {
                negative: sx,
                coefficient: cx,
                exponent: ex,
            },
            Finite {
                negative: sy,
                coefficient: cy,
                exponent: ey,
            },
        ) => add_finite(
            Exact::new(sx, digits_of(cx), ex),
            Exact::new(sy, digits_of(cy), ey),
        ),
    }
}

/// `x × y`, correctly rounded (IEEE 754-2008 multiplication, round half to even).
pub(crate) fn multiply(x: Decimal, y: Decimal) -> Decimal {
    use Decimal::{Finite, Infinity, NaN};
    let is_zero = |d: Decimal| matches!(d, Finite { coefficient: 0, .. });
    let sign = |d: Decimal| match d {
        NaN { negative, .. } | Infinity { negative } | Finite { negative, .. } => negative,
    };
    match (x, y) {
        (NaN { .. }, _) => x,
        (_, NaN { .. }) => y,
        (Infinity { .. }, _) | (_, Infinity { .. }) => {
            if is_zero(x) || is_zero(y) {
                DEFAULT_NAN
            } else {
                Infinity {
                    negative: sign(x) != sign(y),
                }
            }
        }
        (
            Finite {
                negative: sx,
                coefficient: cx,
                exponent: ex,
            },
            Finite {
                negative: sy,
                coefficient: cy,
                exponent: ey,
            },
        ) => round(Exact::new(
            sx != sy,
            multiply_digits(&digits_of(cx), &digits_of(cy)),
            ex + ey,
        )),
    }
}

/// An exact intermediate result.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Exact {
    negative: bool,
    /// Most significant first, no leading zeros; empty for zero.
    digits: Vec<u8>,
    exponent: i64,
}

impl Exact {
    fn new(negative: bool, digits: Vec<u8>, exponent: i64) -> Exact {
        Exact {
            negative,
            digits,
            exponent,
        }
    }
}

fn add_finite(x: Exact, y: Exact) -> Decimal {
    if x.digits.is_empty() && y.digits.is_empty() {
        // Round half to even gives -0 only when both zeros are negative.
        let negative = x.negative && y.negative;
        return round(Exact::new(negative, Vec::new(), x.exponent.min(y.exponent)));
    }
    let (high, mut low) = if x.exponent >= y.exponent {
        (x, y)
    } else {
        (y, x)
    };
    if high.digits.is_empty() {
        // 0 + y is y exactly, at its own (smaller) exponent.
        return round(low);
    }
    // The exponent of `high` written with all 34 digits: the finest position the
    // rounded sum can keep while `high` dominates.
    let high_full = high.exponent - (PRECISION as i64 - high.digits.len() as i64);
    if low.digits.is_empty() {
        // x + 0 is x at the preferred exponent min(ex, ey), or as near as 34 digits allow.
        let exponent = low.exponent.max(high_full);
        let digits = shifted(&high.digits, high.exponent - exponent);
        return round(Exact::new(high.negative, digits, exponent));
    }
    if low.exponent + low.digits.len() as i64 <= high_full - 2 {
        // `low` lies below a tenth of the smallest unit the result can have, so
        // only its sign matters: any such value rounds the same way.
        low = Exact::new(low.negative, vec![1], high_full - 3);
    }
    let exponent = low.exponent;
    let a = shifted(&high.digits, high.exponent - exponent);
    let b = low.digits;
    if high.negative == low.negative {
        return round(Exact::new(high.negative, add_digits(&a, &b), exponent));
    }
    match compare_digits(&a, &b) {
        std::cmp::Ordering::Equal => round(Exact::new(false, Vec::new(), exponent)),
        std::cmp::Ordering::Greater => {
            round(Exact::new(high.negative, subtract_digits(&a, &b), exponent))
        }
        std::cmp::Ordering::Less => {
            round(Exact::new(low.negative, subtract_digits(&b, &a), exponent))
        }
    }
}

/// Rounds an exact result into the format: 34 digits, exponents in range, with
/// gradual underflow and overflow to infinity.
fn round(mut value: Exact) -> Decimal {
    let length = value.digits.len() as i64;
    let drop = (length - PRECISION as i64)
        .max(EXPONENT_MIN - value.exponent)
        .max(0);
    if drop > 0 {
        value.digits = round_off(&value.digits, usize::try_from(drop).unwrap_or(usize::MAX));
        value.exponent += drop;
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
            return Decimal::Infinity {
                negative: value.negative,
            };
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

/// `digits × 10^-drop` rounded half to even, as trimmed digits.
fn round_off(digits: &[u8], drop: usize) -> Vec<u8> {
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
    let odd = kept.last().is_some_and(|d| d % 2 == 1);
    let up = first > 5 || (first == 5 && (sticky || odd));
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

/// Rounds to at most 34 digits (no exponent limits): the rounding of binary64_to_bid128.
fn round_precision(digits: Vec<u8>, exponent: i64) -> (Vec<u8>, i64) {
    if digits.len() <= PRECISION {
        return (digits, exponent);
    }
    let drop = digits.len() - PRECISION;
    let mut rounded = round_off(&digits, drop);
    let mut exponent = exponent + drop as i64;
    if rounded.len() > PRECISION {
        rounded.pop();
        exponent += 1;
    }
    (rounded, exponent)
}

/// The coefficient of `digits × 10^exponent` written at exponent `target`
/// (IEEE quantize, half to even); may carry into one more digit.
fn quantize(digits: &[u8], exponent: i64, target: i64) -> Vec<u8> {
    if target >= exponent {
        round_off(
            digits,
            usize::try_from(target - exponent).unwrap_or(usize::MAX),
        )
    } else {
        shifted(digits, exponent - target)
    }
}

/// `floor(log2(|value|))` for a finite non-zero double (C's `frexp` exponent minus one).
fn binary_exponent(value: f64) -> i64 {
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
fn exact_f64(value: f64) -> (Vec<u8>, i64) {
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

fn digits_of(mut value: u128) -> Vec<u8> {
    let mut digits = Vec::with_capacity(PRECISION);
    while value > 0 {
        digits.push((value % 10) as u8);
        value /= 10;
    }
    digits.reverse();
    digits
}

fn to_u128(digits: &[u8]) -> u128 {
    assert!(
        digits.len() <= PRECISION,
        "{} digits do not fit a coefficient",
        digits.len()
    );
    digits
        .iter()
        .fold(0u128, |acc, &d| acc * 10 + u128::from(d))
}

fn trim(mut digits: Vec<u8>) -> Vec<u8> {
    let zeros = digits.iter().take_while(|&&d| d == 0).count();
    digits.drain(..zeros);
    digits
}

/// `digits × 10^count`.
fn shifted(digits: &[u8], count: i64) -> Vec<u8> {
    let mut out = digits.to_vec();
    if !out.is_empty() {
        out.resize(digits.len() + usize::try_from(count).unwrap_or(0), 0);
    }
    out
}

fn compare_digits(a: &[u8], b: &[u8]) -> std::cmp::Ordering {
    a.len().cmp(&b.len()).then_with(|| a.cmp(b))
}

fn add_digits(a: &[u8], b: &[u8]) -> Vec<u8> {
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
fn subtract_digits(a: &[u8], b: &[u8]) -> Vec<u8> {
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
    debug_assert_eq!(borrow, 0, "subtrahend larger than minuend");
    out.reverse();
    trim(out)
}

fn multiply_digits(a: &[u8], b: &[u8]) -> Vec<u8> {
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

#[cfg(test)]
#[path = "decimal_tests.rs"]
mod tests;
