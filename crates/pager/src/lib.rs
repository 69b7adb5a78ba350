//! One data file of fixed-size pages: mmap reads, extent allocation and reuse, copy-on-write
//! commits and two-slot checkpoints, all I/O through `wal::Storage`.
//!
#![doc = include_str!("../README.md")]
//!
//! The layers above see pages as payload bytes behind a [`PageId`]. A [`WriteTxn`] edits
//! copies (`cow`) of published pages and allocates new ones; `commit` keeps a small
//! commit's images in a write-back buffer that readers consult first (written by the next
//! `sync_ahead` or checkpoint), writes a large commit's through the seam, and publishes the
//! new roots to readers that begin afterwards; a [`ReadTxn`]
//! keeps reading the snapshot it began on, however the file grows, because it holds the
//! mapping it reads from. `Pager::checkpoint` makes the last commit durable and records the
//! WAL position it covers; after a crash the file reopens at the last durable checkpoint
//! and the engine replays the WAL after [`Pager::checkpoint_lsn`]. Byte layouts are in
//! `docs/format.md`, "Data file".
//!
//! Invariants:
//! - `unsafe` code exists only in the private `map` module.
//! - All file access goes through the `Storage` trait; the map is read-only.
#![deny(unsafe_code)]
#![deny(missing_docs)]

mod alloc;
pub mod error;
mod header;
pub mod limits;
#[allow(unsafe_code)]
mod map;
pub mod page;
mod pager;
mod txn;
mod verify;
mod view;
mod writeback;

pub use error::{Error, Result};
pub use header::FORMAT_VERSION;
pub use page::{Extent, KIND_USER_MIN, PageId, pages_for_payload};
pub use pager::{Options, Pager, Stats};
pub use txn::{ReadTxn, WriteTxn};
pub use verify::VerifyReport;
