//! The write-ahead log and the storage seam that every file access goes through.
//!
//! # The log
//!
//! [`Wal`] is an append-only sequence of opaque records, each named by a [`Lsn`]
//! (log sequence number, dense and increasing from 1). The log never interprets a
//! record.
//!
//! ```no_run
//! # fn main() -> Result<(), wal::WalError> {
//! use wal::{Wal, WalOptions};
//! let (wal, recovery) = Wal::open_path("/tmp".as_ref(), "db.mfdb-wal", WalOptions::default())?;
//! for (lsn, record) in &recovery.records {
//!     // replay `record` into the engine
//! #   let _ = (lsn, record);
//! }
//! let lsn = wal.append(b"insert ...")?; // buffered, never synced
//! wal.commit(lsn)?;                     // durable when this returns (group commit)
//! wal.truncate_before(lsn)?;            // after a checkpoint covering records < lsn
//! # Ok(()) }
//! ```
//!
//! - [`Wal::open`] recovers: every intact record is returned; a block torn by a crash at
//!   the tail is cut off ([`Recovery::torn_tail`]); damage to bytes that had been made
//!   durable is [`WalError::Corrupt`] naming the offset and LSN. "Had been made durable"
//!   is decided from the disk alone: every block records how far the log was synced when
//!   it was written, so damage followed by an intact block claiming a sync past it is
//!   corruption, and damage that no later block vouches for is a torn tail.
//! - [`Wal::append`] buffers and returns the record's LSN; it never syncs.
//! - [`Wal::commit`] blocks until every record up to an LSN is durable. Concurrent
//!   committers share one write and one fdatasync (leader/follower group commit).
//! - [`Wal::truncate_before`] drops records below a checkpoint LSN by writing a new file
//!   generation and renaming it into place.
//! - After any failed write or sync the log is poisoned: every call returns
//!   [`WalError::Poisoned`] until it is dropped and reopened. A failed fsync is never
//!   retried.
//!
//! The byte layout is in `docs/format.md` ("Write-ahead log").
//!
//! # The storage seam
//!
//! [`Storage`] is a file (positional reads and writes, length, sync) and [`storage::Dir`]
//! a directory (open, rename, remove, sync). Implementations: [`OsStorage`] / [`OsDir`],
//! [`MemStorage`] / [`MemDir`], [`FaultyStorage`] (fails the Nth operation, short writes,
//! ENOSPC, fsync errors) and [`CrashStorage`] (keeps, drops or tears unsynced writes at
//! sector granularity).
//!
//! Invariants:
//! - Every file access of this crate goes through `Storage` or `Dir`.
//! - LSNs are dense: the records of a log are `lsn_start, lsn_start + 1, ...`.
#![forbid(unsafe_code)]

pub mod crashpoint;
mod error;
pub mod format;
mod group;
pub mod limits;
mod recovery;
pub mod storage;
mod wal;

pub use error::{Result, WalError};
pub use format::Codec;
pub use recovery::TornTail;
pub use storage::{
    CrashStorage, Dir, Fault, FaultKind, FaultyStorage, LockError, MemDir, MemStorage, Op, OsDir,
    OsStorage, Storage,
};
pub use wal::{Recovery, Wal, WalOptions};

/// A log sequence number: names one record. Dense and increasing; `Lsn(0)` is never a
/// record (it means "none").
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Default)]
pub struct Lsn(pub u64);
