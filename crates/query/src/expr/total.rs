//! The running total of `$sum` and `$avg`, shared by the `$group` accumulators and
//! the expression forms (MongoDB's `AccumulatorSum` and `AccumulatorAvg`, which
//! `ExpressionFromAccumulator` evaluates too).
//!
//! Invariants (mongodb/mongo `accumulator_sum.cpp`, `accumulator_avg.cpp`,
//! `util/summation.h`):
//! - Non-numbers are ignored; the result type is the widest numeric type summed:
//!   int32 when only int32s were summed and the total fits, else int64 when no
//!   double was summed and it fits, else a double; any Decimal128 makes the
//!   result a Decimal128.
//! - Integers are summed exactly and doubles with compensated summation, as
//!   MongoDB keeps a double-double total; decimals are summed exactly in their own
//!   total, and the non-decimal total joins it at the end, each part converted
//!   with 34 digits (`DoubleDoubleSummation::getDecimal`).
//! - `$avg` is the sum divided by the count: a double, or a decimal (divided
//!   exactly) when any decimal was summed; null without numbers.

use bson::Bson;
use bson_canonical::decimal::{self, Decimal};

/// The widest numeric type a sum has seen, which decides its result type.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
enum Width {
    Int,
    Long,
    Double,
    Decimal,
}

/// A running `$sum` or `$avg`.
#[derive(Debug, Clone)]
pub(crate) struct Total {
    width: Width,
    integer: i128,
    double: f64,
    compensation: f64,
    decimal: Decimal,
    count: u64,
}

impl Total {
    pub(crate) fn new() -> Total {
        Total {
            width: Width::Int,
            integer: 0,
            double: 0.0,
            compensation: 0.0,
            decimal: Decimal::ZERO,
            count: 0,
        }
    }

    /// Adds a value; non-numbers are ignored, as MongoDB does.
    pub(crate) fn add(&mut self, value: &Bson) {
        let width = match value {
            Bson::Int32(v) => {
                self.integer = self.integer.saturating_add(i128::from(*v));
                Width::Int
            }
            Bson::Int64(v) => {
                self.integer = self.integer.saturating_add(i128::from(*v));
                Width::Long
            }
            Bson::Double(v) => {
                self.add_double(*v);
                Width::Double
            }
            Bson::Decimal128(d) => {
                self.decimal = decimal::add(self.decimal, Decimal::decode(*d));
                Width::Decimal
            }
            _ => return,
        };
        self.width = self.width.max(width);
        self.count += 1;
    }

    /// Adds the total of later integer values (`other` saw no double or decimal: what a
    /// count's constant gives), exactly as adding them one by one would.
    pub(crate) fn merge_integers(&mut self, other: &Total) {
        assert!(
            other.width <= Width::Long,
            "only integer totals merge exactly"
        );
        assert!(
            self.width <= Width::Long,
            "only integer totals merge exactly"
        );
        self.integer = self.integer.saturating_add(other.integer);
        self.width = self.width.max(other.width);
        self.count += other.count;
    }

    fn add_double(&mut self, v: f64) {
        let sum = self.double + v;
        if sum.is_finite() {
            self.compensation += if self.double.abs() >= v.abs() {
                (self.double - sum) + v
            } else {
                (v - sum) + self.double
            };
        }
        self.double = sum;
    }

    fn as_f64(&self) -> f64 {
        let doubles = if self.double.is_finite() {
            self.double + self.compensation
        } else {
            self.double
        };
        self.integer as f64 + doubles
    }

    /// The decimal total: the decimals' exact sum plus the other numbers'.
    fn as_decimal(&self) -> Decimal {
        let others = if self.double.is_finite() {
            let integer = Decimal::from_i128(self.integer);
            let double = decimal::add(
                Decimal::from_f64_exact(self.double),
                Decimal::from_f64_exact(self.compensation),
            );
            decimal::add(integer, double)
        } else {
            Decimal::from_f64_exact(self.double)
        };
        decimal::add(self.decimal, others)
    }

    /// The sum, in MongoDB's result type.
    pub(crate) fn sum(&self) -> Bson {
        let fits_long = i64::try_from(self.integer).ok();
        match (self.width, fits_long) {
            (Width::Decimal, _) => Bson::Decimal128(self.as_decimal().encode()),
            (Width::Int, Some(v)) => i32::try_from(v).map_or(Bson::Int64(v), Bson::Int32),
            (Width::Long, Some(v)) => Bson::Int64(v),
            _ => Bson::Double(self.as_f64()),
        }
    }

    /// The average: null without numbers.
    pub(crate) fn average(&self) -> Bson {
        if self.count == 0 {
            Bson::Null
        } else if self.width == Width::Decimal {
            let count = Decimal::from_i64(i64::try_from(self.count).unwrap_or(i64::MAX));
            Bson::Decimal128(decimal::divide(self.as_decimal(), count).encode())
        } else {
            Bson::Double(self.as_f64() / self.count as f64)
        }
    }
}
