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

/// The most memory MongoDB lets one `$range` result take
/// (`internalQueryMaxRangeBytes`, 100 MiB); past it `$range` fails with
/// ExceededMemoryLimit (146) before building anything.
pub const RANGE_BYTES_MAX: i64 = 100 * 1024 * 1024;

/// MongoDB's estimate of one `$range` element: the size of its `Value`.
pub const RANGE_ELEMENT_BYTES: i64 = 16;

/// MongoDB's estimate of the array holding a `$range` result (a `std::vector`).
pub const RANGE_OVERHEAD_BYTES: i64 = 24;

/// The most bytes of match documents `$regexFindAll` may build for one input
/// (MongoDB's `BufferMaxSize`, 64 MiB); past it the operator fails with 51151.
pub const REGEX_FIND_ALL_BYTES_MAX: usize = 64 * 1024 * 1024;

/// The most elements an array built by an expression operator whose output can
/// grow as a product of its inputs' sizes (`$zip`) may hold; past it the operator
/// fails with ExceededMemoryLimit (146) instead of exhausting memory.
pub const EXPRESSION_ARRAY_ELEMENTS_MAX: usize = 16 * 1024 * 1024;
