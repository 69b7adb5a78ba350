//! Secondary indexes (issue 26), the pure core: what an index is ([`spec`]: a
//! `createIndexes` specification parsed and validated as mongod 7.0 does, its stored and
//! `listIndexes` forms, default names, the 85/86 conflict rules) and which keys a document
//! gives it ([`keys`]: mongod's `BtreeKeyGenerator` and hashed keys over raw BSON, and
//! [`wildcard`]: mongod's `WildcardKeyGenerator`, each encoded with `bson_canonical::key`). It owns no storage, takes no locks and calls nothing that
//! does; the store's write path, the catalog, the commands and the planner build on it.
//!
//! Invariants:
//! - An index over-approximates: every document a filter matches has a key that the
//!   planner's bounds for the filter cover, and the full filter is always re-checked on the
//!   fetched document. For an equality `{p: v}` the planner looks up `v`'s key, and also,
//!   when `v` is an array, its first element's key (`[]`: undefined's), and, when `v` is
//!   null, undefined's (the property test in `proptests.rs` holds generation to this).
//! - The keys of one document are deduplicated and sorted (`{a: [1, 1.0]}` gives one key),
//!   so a unique index sees each document once per distinct key.
//! - A key is the concatenation of one `bson_canonical::key` encoding per key field, in
//!   key-pattern order, descending fields inverted; a missing field is null, an empty array
//!   at the end of a path undefined. Nothing here re-implements the encoding.
//! - Key generation never panics on a stored document: malformed bytes end a walk, and
//!   every refusal (171 parallel arrays, 16766 arrays in a hashed index, 16746 ambiguous
//!   positions) is an `Err` with mongod's code.
//! - A sparse index gives no key whose every field was missing; a partial index gives no
//!   key to a document its filter does not match ([`keys::index_keys`]).
//! - A parsed [`spec::IndexSpec`] has passed every check mongod makes before building; what
//!   this server cannot build (text, 2d, 2dsphere, compound wildcard, non-simple
//!   collations, clustered) is refused with 238 NotImplemented, never accepted and ignored.
//! - A wildcard index's key is `(path, value)`. For every path `p` its projection covers
//!   (`wildcard::Projection::covers`) it holds `(p, v)` for each scalar, empty document and
//!   array-in-an-array `v` the matcher meets at `p`, and `(p, undefined)` for an empty
//!   array; a non-empty document at `p` only through its leaves' keys (paths under `p.`).
//!
//! Callers: the store's write path and builds (`store::indexes`: keys of every written
//! document, `key_values` for duplicate key errors), the catalog (specifications re-parsed
//! from their stored form) and the index commands (`command::indexes`).

pub mod display;
mod hash;
pub mod keys;
mod partial;
#[cfg(test)]
mod proptests;
pub mod spec;
#[cfg(test)]
mod tests;
pub mod wildcard;
#[cfg(test)]
mod wildcard_tests;

pub use partial::key_of as canonical_key;
pub use spec::truthy;

use crate::error::{Error, ErrorCode};

/// The 64-bit hash a hashed index keys `value` by (missing fields hash as null).
pub fn hash_key(value: bson::raw::RawBsonRef<'_>) -> i64 {
    hash::hash64(value, hash::SEED_DEFAULT)
}

/// An error with MongoDB's code, name and message.
fn error(code: i32, name: &'static str, message: impl Into<String>) -> Error {
    Error::new(ErrorCode::from_parts(code, name), message)
}
