//! The B+tree's error type: pager failures, corrupt nodes, and rejected input.

use thiserror::Error;

/// Everything that can go wrong in a B+tree operation.
#[derive(Debug, Error)]
#[non_exhaustive]
pub enum Error {
    /// The pager failed (I/O, a bad page checksum, or its failed state).
    #[error(transparent)]
    Pager(#[from] pager::Error),
    /// A node or overflow extent does not have the shape the tree writes.
    #[error("b+tree corrupt at page {page}: {reason}")]
    Corrupt {
        /// The page where the damage was found.
        page: u32,
        /// What was wrong, in a few words.
        reason: &'static str,
    },
    /// A key longer than `limits::KEY_LEN_MAX`.
    #[error("key of {len} bytes is longer than the limit {max}")]
    KeyTooLong {
        /// The key's length.
        len: usize,
        /// The limit.
        max: usize,
    },
    /// A value longer than `limits::VALUE_LEN_MAX`.
    #[error("value of {len} bytes is longer than the limit {max}")]
    ValueTooLong {
        /// The value's length.
        len: usize,
        /// The limit.
        max: usize,
    },
    /// `bulk_load` was given keys that are not strictly increasing.
    #[error("bulk load input is not strictly increasing at entry {index}")]
    Unsorted {
        /// The position of the first out-of-order entry.
        index: u64,
    },
    /// `bulk_load` into a tree that already holds entries.
    #[error("bulk load needs an empty tree")]
    NotEmpty,
}

/// Shorthand for B+tree results.
pub type Result<T> = std::result::Result<T, Error>;

pub(crate) fn corrupt(page: u32, reason: &'static str) -> Error {
    Error::Corrupt { page, reason }
}
