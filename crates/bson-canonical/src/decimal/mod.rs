//! IEEE 754-2008 decimal128 arithmetic as MongoDB computes it: exact operations on
//! BID-encoded values rounded to 34 digits, and MongoDB's conversions.
//!
//! MongoDB computes with the Intel BID library (`src/mongo/platform/decimal128.cpp`),
//! rounding half to even unless told otherwise. Every operation here is exact and
//! then rounded once, as IEEE 754 requires, so results agree with MongoDB's to the
//! last digit and the last exponent: `0.1 + 0.2` is `0.3`, `1.0 + 1.00` is `2.00`,
//! `10 / 4` is `2.5`, `1 / 3` is `0.3333333333333333333333333333333333`.
//!
//! - [`add`], [`subtract`], [`multiply`], [`divide`], [`remainder`] (`fmod`: the sign
//!   of the dividend), [`sqrt`], [`compare`] and [`quantize`] (MongoDB's
//!   `Decimal128::quantize`, which `$round`, `$trunc`, `$ceil` and `$floor` use).
//! - Conversions: [`Decimal::from_i64`] and [`Decimal::from_i128`] (exact, then
//!   rounded), [`Decimal::from_f64`] (MongoDB's default `kRoundTo15Digits`: the
//!   double's exact value rounded to 34 digits, then quantized to exactly 15
//!   significant digits, so `0.1` becomes `0.100000000000000`),
//!   [`Decimal::from_f64_exact`] (`kRoundTo34Digits`), [`Decimal::to_f64`]
//!   (correctly rounded) and [`Decimal::to_i64`] (in a chosen rounding direction).
//!   Text is `bson::Decimal128`'s `Display`/`FromStr`, which is MongoDB's format.
//!
//! Transcendental functions (`exp`, `ln`, `pow` with a fractional exponent, the
//! trigonometric functions) are not here: exact 34-digit algorithms for them are
//! out of reach, and callers compute those through `f64`.
//!
//! While computing, a coefficient is a vector of decimal digits (see [`digits`]):
//! operands have at most 34 digits and an addend far below the rounding position is
//! folded into one sticky digit, so no intermediate exceeds a few hundred digits.

mod digits;

use bson::Decimal128;
use digits::{
    Exact, add_digits, compare_digits, digits_of, divide_digits, multiply_digits, round, round_off,
    shifted, sqrt_digits, subtract_digits, to_u128, trailing_zeros,
};
use std::cmp::Ordering;

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
pub enum Decimal {
    /// A quiet NaN (a signaling NaN is quieted when decoded).
    NaN {
        /// The sign bit.
        negative: bool,
        /// The payload, at most 10^33 - 1 (a larger one reads as 0).
        payload: u128,
    },
    /// An infinity.
    Infinity {
        /// Whether it is negative infinity.
        negative: bool,
    },
    /// `(-1)^negative × coefficient × 10^exponent`.
    Finite {
        /// The sign bit (zeros are signed too).
        negative: bool,
        /// At most 10^34 - 1.
        coefficient: u128,
        /// In -6176..=6111.
        exponent: i64,
    },
}

/// A rounding direction (IEEE 754-2008 §4.3).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Rounding {
    /// To the nearest value, ties to the even digit (MongoDB's default).
    HalfEven,
    /// Toward zero (truncation).
    TowardZero,
    /// Toward positive infinity (ceiling).
    TowardPositive,
    /// Toward negative infinity (floor).
    TowardNegative,
}

/// The NaN an invalid operation (∞ - ∞, 0 × ∞, 0 / 0) produces.
const DEFAULT_NAN: Decimal = Decimal::NaN {
    negative: false,
    payload: 0,
};

impl Decimal {
    /// Zero with exponent 0 (MongoDB's `Decimal128()` and `kNormalizedZero`).
    pub const ZERO: Decimal = Decimal::Finite {
        negative: false,
        coefficient: 0,
        exponent: 0,
    };

    /// Decodes BSON's little-endian BID bytes; a non-canonical coefficient reads as zero.
    pub fn decode(value: Decimal128) -> Decimal {
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
    pub fn encode(self) -> Decimal128 {
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
    pub fn from_i64(value: i64) -> Decimal {
        Decimal::Finite {
            negative: value < 0,
            coefficient: u128::from(value.unsigned_abs()),
            exponent: 0,
        }
    }

    /// A wide integer, rounded half to even to 34 digits.
    pub fn from_i128(value: i128) -> Decimal {
        round(
            Exact::new(value < 0, digits_of(value.unsigned_abs()), 0),
            Rounding::HalfEven,
        )
    }

    /// A double as MongoDB converts it by default (`kRoundTo15Digits`: `$toDecimal`,
    /// and any arithmetic mixing a double with a decimal): the exact value rounded
    /// to 34 digits, then quantized to 15 significant digits, both half to even.
    pub fn from_f64(value: f64) -> Decimal {
        if let Some(special) = special_f64(value) {
            return special;
        }
        let (digits, exponent) = digits::exact_f64(value);
        let (digits, exponent) = digits::round_precision(digits, exponent);
        // MongoDB's first guess of the decimal exponent, floor(log10(2^e)) with
        // log10(2) ≈ 0.30103; one too low when the value is near the next power of ten.
        let base2 = digits::binary_exponent(value);
        let mut base10 = base2 * 30103 / 100_000;
        if base2 < 0 {
            base10 -= 1;
        }
        let mut quantized = digits::quantize_half_even(&digits, exponent, base10 - 14);
        if quantized.len() > 15 {
            quantized = digits::quantize_half_even(&digits, exponent, base10 - 13);
            base10 += 1;
        }
        debug_assert_eq!(quantized.len(), 15, "{value} did not quantize to 15 digits");
        Decimal::Finite {
            negative: value.is_sign_negative(),
            coefficient: to_u128(&quantized),
            exponent: base10 - 14,
        }
    }

    /// A double's exact value rounded half to even to 34 digits (`kRoundTo34Digits`,
    /// which `$sum`'s double-double total and `$round` of a double use).
    pub fn from_f64_exact(value: f64) -> Decimal {
        if let Some(special) = special_f64(value) {
            return special;
        }
        let (digits, exponent) = digits::exact_f64(value);
        let (digits, exponent) = digits::round_precision(digits, exponent);
        round(
            Exact::new(value.is_sign_negative(), digits, exponent),
            Rounding::HalfEven,
        )
    }

    /// The nearest double (MongoDB's `toDouble`): NaN, infinities and signed zeros carry over.
    pub fn to_f64(self) -> f64 {
        match self {
            Decimal::NaN { .. } => f64::NAN,
            Decimal::Infinity { negative: false } => f64::INFINITY,
            Decimal::Infinity { negative: true } => f64::NEG_INFINITY,
            Decimal::Finite {
                negative,
                coefficient,
                exponent,
            } => {
                let sign = if negative { "-" } else { "" };
                // Rust's parser rounds correctly, so this is the nearest double.
                format!("{sign}{coefficient}e{exponent}")
                    .parse()
                    .unwrap_or(f64::NAN)
            }
        }
    }

    /// The value rounded to an integer in the given direction, or `None` for NaN,
    /// an infinity, or a result outside the `i64` range (MongoDB's `toLong`, whose
    /// invalid flag the callers turn into an error).
    pub fn to_i64(self, rounding: Rounding) -> Option<i64> {
        let Decimal::Finite {
            negative,
            coefficient,
            exponent,
        } = self
        else {
            return None;
        };
        let magnitude = if coefficient == 0 {
            0
        } else if exponent >= 0 {
            let scale = 10u128.checked_pow(u32::try_from(exponent).ok()?)?;
            coefficient.checked_mul(scale)?
        } else {
            let drop = usize::try_from(-exponent).ok()?;
            to_u128(&round_off(
                &digits_of(coefficient),
                drop,
                rounding,
                negative,
            ))
        };
        let signed = i128::try_from(magnitude).ok()?;
        i64::try_from(if negative { -signed } else { signed }).ok()
    }

    /// Whether the value is a NaN.
    pub fn is_nan(self) -> bool {
        matches!(self, Decimal::NaN { .. })
    }

    /// Whether the value is an infinity.
    pub fn is_infinite(self) -> bool {
        matches!(self, Decimal::Infinity { .. })
    }

    /// Whether the value is a zero of either sign.
    pub fn is_zero(self) -> bool {
        matches!(self, Decimal::Finite { coefficient: 0, .. })
    }

    /// Whether the sign bit is set (true for -0 and -NaN too).
    pub fn is_negative(self) -> bool {
        match self {
            Decimal::NaN { negative, .. }
            | Decimal::Infinity { negative }
            | Decimal::Finite { negative, .. } => negative,
        }
    }

    /// The value with its sign bit flipped.
    pub fn negate(self) -> Decimal {
        self.with_sign(!self.is_negative())
    }

    /// The value with its sign bit cleared (`bid128_abs`).
    pub fn abs(self) -> Decimal {
        self.with_sign(false)
    }

    fn with_sign(self, negative: bool) -> Decimal {
        match self {
            Decimal::NaN { payload, .. } => Decimal::NaN { negative, payload },
            Decimal::Infinity { .. } => Decimal::Infinity { negative },
            Decimal::Finite {
                coefficient,
                exponent,
                ..
            } => Decimal::Finite {
                negative,
                coefficient,
                exponent,
            },
        }
    }

    /// The same value with as many digits as the format allows (MongoDB's
    /// `normalize`: adding `0E-6176`), so `1.5` becomes
    /// `1.500000000000000000000000000000000`.
    pub fn normalize(self) -> Decimal {
        add(
            self,
            Decimal::Finite {
                negative: false,
                coefficient: 0,
                exponent: EXPONENT_MIN,
            },
        )
    }
}

impl std::fmt::Display for Decimal {
    /// MongoDB's text of the value (`bson::Decimal128`'s format).
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        self.encode().fmt(f)
    }
}

/// The decimal of a double that needs no rounding: NaN, an infinity or a zero.
fn special_f64(value: f64) -> Option<Decimal> {
    let negative = value.is_sign_negative();
    if value.is_nan() {
        Some(Decimal::NaN {
            negative,
            payload: 0,
        })
    } else if value.is_infinite() {
        Some(Decimal::Infinity { negative })
    } else if value == 0.0 {
        Some(Decimal::Finite {
            negative,
            coefficient: 0,
            exponent: 0,
        })
    } else {
        None
    }
}

/// `x + y`, correctly rounded (IEEE 754-2008 addition, round half to even).
pub fn add(x: Decimal, y: Decimal) -> Decimal {
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

/// `x - y`, correctly rounded (IEEE 754-2008 subtraction, round half to even).
pub fn subtract(x: Decimal, y: Decimal) -> Decimal {
    if y.is_nan() {
        return y;
    }
    add(x, y.negate())
}

/// `x × y`, correctly rounded (IEEE 754-2008 multiplication, round half to even).
pub fn multiply(x: Decimal, y: Decimal) -> Decimal {
    use Decimal::{Finite, Infinity, NaN};
    match (x, y) {
        (NaN { .. }, _) => x,
        (_, NaN { .. }) => y,
        (Infinity { .. }, _) | (_, Infinity { .. }) => {
            if x.is_zero() || y.is_zero() {
                DEFAULT_NAN
            } else {
                Infinity {
                    negative: x.is_negative() != y.is_negative(),
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
        ) => round(
            Exact::new(
                sx != sy,
                multiply_digits(&digits_of(cx), &digits_of(cy)),
                ex + ey,
            ),
            Rounding::HalfEven,
        ),
    }
}

/// `x / y`, correctly rounded (IEEE 754-2008 division, round half to even). An
/// exact quotient takes the exponent nearest to `ex - ey` (`10 / 4` is `2.5`,
/// `1.00 / 1` is `1.00`); an inexact one has 34 digits. `x / 0` is an infinity
/// and `0 / 0` a NaN (MongoDB's `$divide` refuses a zero divisor before this).
pub fn divide(x: Decimal, y: Decimal) -> Decimal {
    use Decimal::{Finite, Infinity, NaN};
    let negative = x.is_negative() != y.is_negative();
    match (x, y) {
        (NaN { .. }, _) => x,
        (_, NaN { .. }) => y,
        (Infinity { .. }, Infinity { .. }) => DEFAULT_NAN,
        (Infinity { .. }, _) => Infinity { negative },
        (_, Infinity { .. }) => Finite {
            negative,
            coefficient: 0,
            exponent: EXPONENT_MIN,
        },
        (
            Finite {
                coefficient: cx,
                exponent: ex,
                ..
            },
            Finite {
                coefficient: cy,
                exponent: ey,
                ..
            },
        ) => {
            let preferred = ex - ey;
            if cy == 0 {
                return if cx == 0 {
                    DEFAULT_NAN
                } else {
                    Infinity { negative }
                };
            }
            if cx == 0 {
                return Finite {
                    negative,
                    coefficient: 0,
                    exponent: preferred.clamp(EXPONENT_MIN, EXPONENT_MAX),
                };
            }
            let (a, b) = (digits_of(cx), digits_of(cy));
            // Enough digits that the quotient has at least 35: one beyond the format.
            let shift = (PRECISION + 1 + b.len()).saturating_sub(a.len());
            let (mut quotient, rest) = divide_digits(&shifted(&a, shift as i64), &b);
            let mut exponent = preferred - shift as i64;
            if rest.is_empty() {
                // Exact: drop trailing zeros, moving toward the preferred exponent.
                let removable = trailing_zeros(&quotient).min(shift);
                quotient.truncate(quotient.len() - removable);
                exponent += removable as i64;
            } else {
                // A sticky digit below every kept one: the quotient is inexact.
                quotient.push(1);
                exponent -= 1;
            }
            round(Exact::new(negative, quotient, exponent), Rounding::HalfEven)
        }
    }
}

/// `x - trunc(x / y) × y`, exactly (`bid128_fmod`, which MongoDB's `$mod` uses): the
/// result has the sign of `x` and the exponent `min(ex, ey)`. `x % 0` and `∞ % y`
/// are NaN; `x % ∞` is `x`.
pub fn remainder(x: Decimal, y: Decimal) -> Decimal {
    use Decimal::{Finite, Infinity, NaN};
    match (x, y) {
        (NaN { .. }, _) => x,
        (_, NaN { .. }) => y,
        (Infinity { .. }, _) => DEFAULT_NAN,
        (_, Infinity { .. }) => x,
        (
            Finite {
                negative,
                coefficient: cx,
                exponent: ex,
            },
            Finite {
                coefficient: cy,
                exponent: ey,
                ..
            },
        ) => {
            if cy == 0 {
                return DEFAULT_NAN;
            }
            let exponent = ex.min(ey);
            let coefficient = if ex >= ey {
                // (cx × 10^(ex-ey)) mod cy, one decimal shift at a time; every
                // intermediate is below 10 × cy < 10^35, which fits a u128.
                let mut rest = cx % cy;
                for _ in 0..(ex - ey) {
                    rest = (rest * 10) % cy;
                }
                rest
            } else {
                // The divisor cy × 10^(ey-ex); when it has more digits than cx it
                // exceeds it, and the remainder is cx.
                let digits = digits_of(cy).len() as i64 + (ey - ex);
                if digits > 38 {
                    cx
                } else {
                    let scale = 10u128.pow(u32::try_from(ey - ex).unwrap_or(0));
                    cx % (cy * scale)
                }
            };
            Finite {
                negative,
                coefficient,
                exponent,
            }
        }
    }
}

/// The numeric order of two values, `None` when either is a NaN; -0 equals 0 and
/// cohort members (`1.0`, `1.00`) are equal.
pub fn compare(x: Decimal, y: Decimal) -> Option<Ordering> {
    use Decimal::{Finite, Infinity, NaN};
    let sign = |d: Decimal| -> i8 {
        match d {
            _ if d.is_zero() => 0,
            _ if d.is_negative() => -1,
            _ => 1,
        }
    };
    match (x, y) {
        (NaN { .. }, _) | (_, NaN { .. }) => None,
        (Infinity { negative: a }, Infinity { negative: b }) => Some(b.cmp(&a)),
        (Infinity { negative }, _) => Some(if negative {
            Ordering::Less
        } else {
            Ordering::Greater
        }),
        (_, Infinity { negative }) => Some(if negative {
            Ordering::Greater
        } else {
            Ordering::Less
        }),
        (
            Finite {
                coefficient: cx,
                exponent: ex,
                ..
            },
            Finite {
                coefficient: cy,
                exponent: ey,
                ..
            },
        ) => {
            let (sx, sy) = (sign(x), sign(y));
            if sx != sy || sx == 0 {
                return Some(sx.cmp(&sy));
            }
            let magnitude = compare_magnitude(&digits_of(cx), ex, &digits_of(cy), ey);
            Some(if sx < 0 {
                magnitude.reverse()
            } else {
                magnitude
            })
        }
    }
}

/// The order of two non-zero magnitudes `a × 10^ea` and `b × 10^eb`.
fn compare_magnitude(a: &[u8], ea: i64, b: &[u8], eb: i64) -> Ordering {
    let adjusted_a = ea + a.len() as i64;
    let adjusted_b = eb + b.len() as i64;
    adjusted_a.cmp(&adjusted_b).then_with(|| {
        // Same leading position: compare digit by digit, the shorter padded with zeros.
        let length = a.len().max(b.len());
        let pad = |d: &[u8]| shifted(d, (length - d.len()) as i64);
        compare_digits(&pad(a), &pad(b))
    })
}

/// MongoDB's `Decimal128::quantize(reference, rounding)`: `x` written with the
/// exponent of `reference` (IEEE `quantize`), except that when `x` at full
/// precision has an exponent more than 33 above that of `reference` at full
/// precision, `x` is returned at full precision (so `$round` of `1.298` to 100
/// places gives `1.298000000000000000000000000000000` rather than a NaN). A
/// result that needs more than 34 digits, or an infinity quantized to a finite
/// exponent, is a NaN, as IEEE requires.
pub fn quantize(x: Decimal, reference: Decimal, rounding: Rounding) -> Decimal {
    let normalized = x.normalize();
    if let (
        Decimal::Finite { exponent: own, .. },
        Decimal::Finite {
            exponent: theirs, ..
        },
    ) = (normalized, reference.normalize())
    {
        let theirs_biased = theirs + EXPONENT_BIAS;
        if theirs_biased != 0 && (own + EXPONENT_BIAS) - theirs_biased > 33 {
            return normalized;
        }
    }
    match (x, reference) {
        (Decimal::NaN { .. }, _) => x,
        (_, Decimal::NaN { .. }) => reference,
        (Decimal::Infinity { .. }, Decimal::Infinity { .. }) => x,
        (Decimal::Infinity { .. }, _) | (_, Decimal::Infinity { .. }) => DEFAULT_NAN,
        (
            Decimal::Finite {
                negative,
                coefficient,
                exponent,
            },
            Decimal::Finite {
                exponent: target, ..
            },
        ) => {
            let digits = digits_of(coefficient);
            let out = if target >= exponent {
                let drop = usize::try_from(target - exponent).unwrap_or(usize::MAX);
                round_off(&digits, drop, rounding, negative)
            } else if digits.len() as i64 + (exponent - target) > PRECISION as i64 {
                return DEFAULT_NAN;
            } else {
                shifted(&digits, exponent - target)
            };
            if out.len() > PRECISION {
                return DEFAULT_NAN;
            }
            Decimal::Finite {
                negative,
                coefficient: to_u128(&out),
                exponent: target,
            }
        }
    }
}

/// The square root, correctly rounded (IEEE 754-2008 `squareRoot`): an exact root
/// takes the exponent nearest to `floor(e / 2)` (`sqrt(4.00)` is `2.0`), an inexact
/// one has 34 digits; a negative operand gives a NaN and `-0` gives `-0`.
pub fn sqrt(x: Decimal) -> Decimal {
    match x {
        Decimal::NaN { .. } | Decimal::Infinity { negative: false } => x,
        Decimal::Infinity { negative: true } => DEFAULT_NAN,
        Decimal::Finite {
            negative,
            coefficient,
            exponent,
        } => {
            let preferred = exponent.div_euclid(2);
            if coefficient == 0 {
                return Decimal::Finite {
                    negative,
                    coefficient: 0,
                    exponent: preferred,
                };
            }
            if negative {
                return DEFAULT_NAN;
            }
            let digits = digits_of(coefficient);
            // At least 70 radicand digits (a root of 35) and an even exponent.
            let mut pad = (2 * (PRECISION + 1)).saturating_sub(digits.len()) as i64;
            if (exponent - pad).rem_euclid(2) == 1 {
                pad += 1;
            }
            let (mut root, exact) = sqrt_digits(&shifted(&digits, pad));
            let mut root_exponent = (exponent - pad) / 2;
            if exact {
                let room = usize::try_from(preferred - root_exponent).unwrap_or(0);
                let removable = trailing_zeros(&root).min(room);
                root.truncate(root.len() - removable);
                root_exponent += removable as i64;
            } else {
                root.push(1);
                root_exponent -= 1;
            }
            round(Exact::new(false, root, root_exponent), Rounding::HalfEven)
        }
    }
}

fn add_finite(x: Exact, y: Exact) -> Decimal {
    if x.digits.is_empty() && y.digits.is_empty() {
        // Round half to even gives -0 only when both zeros are negative.
        let negative = x.negative && y.negative;
        return round(
            Exact::new(negative, Vec::new(), x.exponent.min(y.exponent)),
            Rounding::HalfEven,
        );
    }
    let (high, mut low) = if x.exponent >= y.exponent {
        (x, y)
    } else {
        (y, x)
    };
    if high.digits.is_empty() {
        // 0 + y is y exactly, at its own (smaller) exponent.
        return round(low, Rounding::HalfEven);
    }
    // The exponent of `high` written with all 34 digits: the finest position the
    // rounded sum can keep while `high` dominates.
    let high_full = high.exponent - (PRECISION as i64 - high.digits.len() as i64);
    if low.digits.is_empty() {
        // x + 0 is x at the preferred exponent min(ex, ey), or as near as 34 digits allow.
        let exponent = low.exponent.max(high_full);
        let digits = shifted(&high.digits, high.exponent - exponent);
        return round(
            Exact::new(high.negative, digits, exponent),
            Rounding::HalfEven,
        );
    }
    if low.exponent + low.digits.len() as i64 <= high_full - 2 {
        // `low` lies below a tenth of the smallest unit the result can have, so
        // only its sign matters: any such value rounds the same way.
        low = Exact::new(low.negative, vec![1], high_full - 3);
    }
    let exponent = low.exponent;
    let a = shifted(&high.digits, high.exponent - exponent);
    let b = low.digits;
    let exact = if high.negative == low.negative {
        Exact::new(high.negative, add_digits(&a, &b), exponent)
    } else {
        match compare_digits(&a, &b) {
            Ordering::Equal => Exact::new(false, Vec::new(), exponent),
            Ordering::Greater => Exact::new(high.negative, subtract_digits(&a, &b), exponent),
            Ordering::Less => Exact::new(low.negative, subtract_digits(&b, &a), exponent),
        }
    };
    round(exact, Rounding::HalfEven)
}

#[cfg(test)]
mod tests;
