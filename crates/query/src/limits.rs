//! Bounds on the work a filter, expression or projection may ask for.

/// The deepest nesting of filter operators and sub-documents that is parsed
/// (MongoDB refuses filters nested deeper than 100 levels).
pub const FILTER_DEPTH_MAX: usize = 100;

/// The deepest nesting of aggregation expressions that is parsed.
pub const EXPRESSION_DEPTH_MAX: usize = 150;

/// The largest bit position `$bitsAllSet` and kin accept in an array of
/// positions (MongoDB bounds positions by the 32-bit integer range).
pub const BIT_POSITION_MAX: i64 = i32::MAX as i64;

/// The most bytes one `$push` or `$addToSet` accumulator may hold in one
/// group (MongoDB's `internalQueryMaxPushBytes` and
/// `internalQueryMaxAddToSetBytes`, 100 MiB); past it the group fails with
/// ExceededMemoryLimit (146).
pub const ACCUMULATOR_BYTES_MAX: usize = 100 * 1024 * 1024;

/// The largest document a pipeline may return: MongoDB's internal BSON
/// object limit, 16 MiB plus 16 KiB for command overhead
/// (`BSONObjMaxInternalSize`); larger ones fail with BSONObjectTooLarge (10334).
pub const PIPELINE_DOCUMENT_BYTES_MAX: usize = 16 * 1024 * 1024 + 16 * 1024;

const _: () = assert!(PIPELINE_DOCUMENT_BYTES_MAX < ACCUMULATOR_BYTES_MAX);
