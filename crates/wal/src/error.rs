//! The errors of the write-ahead log.
//!
//! Invariants:
//! - Corruption errors name where (file offset, and the LSN expected there) and what
//!   (a static reason); they are never produced for a torn tail.
//! - `Poisoned` is returned by every call after a failed write or sync until reopen.

use crate::Lsn;
use std::io;

/// Everything that can go wrong in `wal`.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum WalError {
    /// The operating system reported an I/O error (the log is poisoned from now on when
    /// the error came from a write or a sync).
    #[error("wal i/o error: {0}")]
    Io(#[from] io::Error),

    /// A previous write or sync failed; nothing more is accepted until the log is reopened
    /// and recovered. A failed fsync is never retried. For a committer this means the
    /// outcome is unknown: its record may or may not have reached the file.
    #[error("wal is poisoned by an earlier i/o failure; reopen to recover")]
    Poisoned,

    /// The log failed before any byte of this record reached the file (the failure was
    /// in growing the log ahead of the write, or in an earlier write): the record is not
    /// in the log and will never be replayed. The log is poisoned.
    #[error("wal i/o error before the record was written: {0}")]
    NotWritten(io::Error),

    /// `truncate_before` could not write the log's new generation (a full disk, as a
    /// rule) and left the old file in place, every record in it durable: nothing is
    /// lost and the log is not poisoned; the next truncation tries again.
    #[error("the log was not truncated (its new file could not be written: {0}); it is kept")]
    TruncationNotDone(io::Error),

    /// Durable bytes of the log are damaged (not a torn tail).
    #[error("wal corrupt at offset {offset} (expected lsn {lsn:?}): {reason}")]
    Corrupt {
        /// File offset of the damaged header or block.
        offset: u64,
        /// The LSN expected at that offset, when known.
        lsn: Option<Lsn>,
        /// What is wrong.
        reason: &'static str,
    },

    /// A record is larger than `limits::RECORD_LEN_MAX`.
    #[error("wal record of {len} bytes exceeds the limit of {max}")]
    RecordTooLarge {
        /// The record's length.
        len: usize,
        /// The limit.
        max: usize,
    },

    /// The caller passed an LSN that the log has not handed out, or already dropped.
    #[error("lsn {lsn:?} is outside the log ({reason})")]
    LsnOutOfRange {
        /// The LSN given.
        lsn: Lsn,
        /// Why it is rejected.
        reason: &'static str,
    },
}

/// Shorthand for results of this crate.
pub type Result<T, E = WalError> = std::result::Result<T, E>;
