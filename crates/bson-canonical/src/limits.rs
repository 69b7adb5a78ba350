//! The limits MongoDB places on documents, in one place.

/// The largest document a client may store: 16 MiB.
pub const DOCUMENT_SIZE_MAX: usize = 16 * 1024 * 1024;

/// The deepest nesting of objects and arrays in a stored document, counted in
/// embedded levels below the root: `{a: {b: 1}}` nests one level. MongoDB
/// stores up to 100 levels and refuses a 101st with `Overflow` (15).
pub const NESTING_DEPTH_MAX: usize = 100;

/// The deepest nesting accepted in a message from the wire (MongoDB's
/// `maxBSONDepth` default); commands may nest deeper than stored documents.
pub const WIRE_NESTING_DEPTH_MAX: usize = 200;

/// The smallest well-formed BSON document: a 4-byte length and a terminator.
pub const DOCUMENT_SIZE_MIN: usize = 5;

const _: () = assert!(NESTING_DEPTH_MAX < WIRE_NESTING_DEPTH_MAX);
const _: () = assert!(DOCUMENT_SIZE_MIN < DOCUMENT_SIZE_MAX);
