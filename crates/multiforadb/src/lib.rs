//! The crate users depend on: MultiforaDB's embedded client (`engine::client`) under the
//! product's name, with [`bson`] and [`doc!`] re-exported so `use multiforadb::{Client,
//! doc};` is the whole import. It adds no code of its own: every item is the engine's, so
//! the two paths name the same types.
//!
//! Invariants:
//! - The README's example (this page's below) is a doctest, and the workspace README's
//!   lead example is the same text (`tests/readme.rs` checks it).
//!
#![doc = include_str!("../README.md")]
#![forbid(unsafe_code)]

pub use bson;
pub use bson::doc;
pub use engine::client::*;
