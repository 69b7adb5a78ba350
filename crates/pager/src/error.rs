//! The pager's error type: I/O failures, corruption found on disk, and the sticky failed state.

use thiserror::Error;

/// Everything that can go wrong in the pager.
#[derive(Debug, Error)]
#[non_exhaustive]
pub enum Error {
    /// The storage seam reported an I/O error (including a full disk while growing the file).
    #[error("data file i/o: {0}")]
    Io(#[from] std::io::Error),
    /// Bytes on disk do not describe a valid data file.
    #[error("data file corrupt at page {page}: {reason}")]
    Corrupt {
        /// The page where the damage was found.
        page: u32,
        /// What was wrong, in a few words.
        reason: &'static str,
    },
    /// The file was written by an incompatible format version.
    #[error("data file format version {found} is not supported (expected {expected})")]
    Version {
        /// The version in the file.
        found: u32,
        /// The version this build writes.
        expected: u32,
    },
    /// Neither header slot starts with the data file's magic: this is some other file
    /// (or both headers were overwritten), so nothing in it is read as pages.
    #[error("not a MultiforaDB database file (no magic at offset 0 or 4096)")]
    NotDatabase,
    /// An earlier write or sync failed; the pager refuses all work until reopened.
    #[error("an earlier write or sync of the data file failed; reopen to recover")]
    PreviousIo,
    /// The file would pass the page-number limit.
    #[error("data file is full: {pages} pages requested, limit {limit}")]
    FileFull {
        /// The page count that was needed.
        pages: u64,
        /// The largest page count the format allows.
        limit: u64,
    },
}

/// Shorthand for pager results.
pub type Result<T> = std::result::Result<T, Error>;

/// Builds a corruption error.
pub(crate) fn corrupt(page: u32, reason: &'static str) -> Error {
    Error::Corrupt { page, reason }
}
