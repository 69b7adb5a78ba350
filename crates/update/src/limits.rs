//! Bounds on what an update may ask for.

/// The largest document an update may produce: MongoDB's 16 MiB.
pub const DOCUMENT_SIZE_MAX: usize = bson_canonical::limits::DOCUMENT_SIZE_MAX;

/// The most null elements a numeric path component may pad an array with
/// (MongoDB refuses to backfill past 1,500,000 elements).
pub const ARRAY_PAD_MAX: usize = 1_500_000;

/// The most components of an update path (MongoDB's nesting limit bounds it).
pub const PATH_COMPONENTS_MAX: usize = bson_canonical::limits::WIRE_NESTING_DEPTH_MAX;

const _: () = assert!(ARRAY_PAD_MAX < DOCUMENT_SIZE_MAX);
