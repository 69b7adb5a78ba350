//! Bounds on the work a filter, expression or projection may ask for.

/// The deepest nesting of filter operators and sub-documents that is parsed
/// (MongoDB refuses filters nested deeper than 100 levels).
pub const FILTER_DEPTH_MAX: usize = 100;

/// The deepest nesting of aggregation expressions that is parsed.
pub const EXPRESSION_DEPTH_MAX: usize = 150;

/// The largest bit position `$bitsAllSet` and kin accept in an array of
/// positions (MongoDB bounds positions by the 32-bit integer range).
pub const BIT_POSITION_MAX: i64 = i32::MAX as i64;
