//! The storage layer: every collection, index and catalog entry of a database in one data
//! file, changed only by the logged write transaction, recovered from the write-ahead log.
//!
#![doc = include_str!("../README.md")]
//!
//! # What it owns
//!
//! - [`store`]: the [`Store`](store::Store) (the pager's data file, the log beside it, the
//!   checkpointer), the catalog (`db.coll` → [`CollectionMeta`](store::CollectionMeta)),
//!   record trees, the `_id_` index and secondary index trees, the
//!   [`Writer`](store::Writer) and [`Reader`](store::Reader), recovery and checkpoints.
//! - [`index`]: what an index is (a `createIndexes` specification, parsed and validated as
//!   mongod does) and which keys a document gives it: pure, no storage.
//! - [`spill`]: sorted runs written beside the database for blocking sorts with
//!   `allowDiskUse`, merged back in order.
//! - [`error`]: MongoDB's error codes and [`Error`], the one error type of every layer
//!   from here up (lower crates return their own typed errors, mapped here); [`limits`].
//!
//! It never imports commands, authentication, sessions, replication or the engine. What it
//! needs from above comes in as a value it defines: the check a writer runs while it waits
//! for the write gate ([`store::StoreOptions::wait_check`]: the engine's killOp and
//! maxTimeMS) and the sort settings a spill file is numbered by ([`spill::Settings`]).
//! `cargo xtask tidy` holds the crate graph to docs/ARCHITECTURE.md's table.
//!
//! # Invariants
//!
//! - **The write gate.** One [`Writer`](store::Writer) at a time: [`Store::write`]
//!   (store::Store::write) takes the gate and holds it until its commit has appended its
//!   records to the log (or until it is dropped). Checkpoints take the same gate; readers
//!   never do.
//! - **Commit order is log order.** A writer's records are appended to the log while it
//!   still holds the gate, so the log's LSN order is the order in which transactions
//!   changed the trees, and replaying the log in order rebuilds exactly the live state
//!   (every change, live or replayed, goes through one `apply` function).
//! - **What is visible when.** A reader sees one published snapshot for its whole life.
//!   A commit publishes its pages (visible to readers that start after it) and then
//!   appends its records to the log, before they are durable: a reader may see a change
//!   whose commit has not yet returned. If the append fails, the store fails and no later
//!   write or reader is served from the unlogged pages. Nothing of a dropped writer is
//!   ever visible.
//! - **What is durable when.** [`Writer::commit`](store::Writer::commit) returns `Ok`
//!   only after the log is `fdatasync`ed through the transaction's last record
//!   (concurrent commits share one sync); that is when a command may be acknowledged. An
//!   error from a commit means nothing of it reached the log (docs/ARCHITECTURE.md,
//!   "Failure model"). A failed sync is never retried as if nothing happened: the store
//!   is failed until reopened.
//! - **What recovery guarantees.** Opening replays every record after the data file's
//!   checkpoint LSN: every acknowledged transaction is there after kill -9 at any
//!   instant, a transaction whose last record never reached the log is not applied at
//!   all, and a torn log tail is cut off and reported ([`store::OpenReport`]). Secondary
//!   index entries are never logged; replay derives them from the document changes. A
//!   damaged file is reported and contained, never a panic.
#![forbid(unsafe_code)]

pub mod error;
pub mod index;
pub mod limits;
pub mod spill;
pub mod store;

pub use error::{Error, ErrorCode};
