//! A B+tree over byte keys stored in pager pages: variable-length keys and values with
//! overflow extents, point lookup, insert, delete, ordered double-ended ranges with seek,
//! bottom-up bulk loading, and `verify`.
//!
#![doc = include_str!("../README.md")]
//!
//! Keys compare as bytes (index keys from `bson-canonical` are encoded so byte order is
//! sort order). A tree is a [`Btree`] handle naming a pager root slot, or a [`Tree`] whose
//! root page number the caller keeps (a catalog holds those); writes take a
//! `pager::WriteTxn` (the pager has one writer, so each tree has one), reads take any
//! [`PageRead`], and a `pager::ReadTxn` sees the last commit at the time it began, while
//! the writer goes on copying pages.
//!
//! Invariants:
//! - No `unsafe` code.
//! - Disk bytes never cause a panic: every node is parsed with bounds checks.
#![forbid(unsafe_code)]
#![deny(missing_docs)]

mod bulk;
mod cursor;
pub mod error;
mod held;
pub mod limits;
mod node;
mod tree;
mod verify;

pub use cursor::{Entry, Range};
pub use error::{Error, Result};
pub use held::Tree;
pub use tree::{Btree, KIND_BRANCH, KIND_LEAF, KIND_OVERFLOW, PageRead};
pub use verify::TreeReport;
