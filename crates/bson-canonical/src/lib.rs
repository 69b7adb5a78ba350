//! MongoDB's semantics over BSON: canonical order, key encoding, paths, validation.
//!
//! Built on the `bson` crate's raw types (`RawDocument`, `RawBsonRef`): this
//! crate adds what MongoDB defines and `bson` does not.
//! - [`compare_values`]: MongoDB's total order over BSON values (type brackets,
//!   numbers by exact value across int32, int64, double and Decimal128).
//! - [`key`]: an order-preserving byte encoding of values, with compound keys and
//!   descending fields, for B+tree indexes.
//! - [`path`]: dotted field paths over raw documents with MongoDB's array semantics.
//! - [`decimal`]: IEEE 754-2008 decimal128 arithmetic and conversions as MongoDB
//!   computes them (Decimal128 `$sum`, `$inc`, `$round`, ...).
//! - [`validate`]: the checks a document from a client must pass, each failure
//!   carrying MongoDB's error code.
//!
//! ```
//! use bson::rawdoc;
//! use bson_canonical::{compare_values, key};
//!
//! let doc = rawdoc! {"a": 1, "b": 1.0_f64, "c": [{"d": "x"}, {"d": "y"}]};
//! let a = doc.get("a").unwrap().unwrap();
//! let b = doc.get("b").unwrap().unwrap();
//! assert_eq!(compare_values(a, b), std::cmp::Ordering::Equal);
//! assert_eq!(key::encode(a), key::encode(b));
//! let reached = bson_canonical::path::values(&doc, "c.d");
//! assert_eq!(reached.len(), 2);
//! ```
#![forbid(unsafe_code)]

pub mod compare;
pub mod decimal;
pub mod error;
pub mod key;
pub mod limits;
mod number;
pub mod path;
pub mod validate;

pub use compare::{compare_documents, compare_values};
pub use error::ValidationError;
pub use key::{Direction, encode, encode_compound};
pub use path::{PathValue, for_each_value, get_path};
pub use validate::{validate_bson, validate_for_storage};
