//! Sizes and bounds of the data file format, checked against each other at compile time.
//!
//! Invariants:
//! - A page is a multiple of the OS page and of a 512-byte sector.
//! - Every limit here that a walk over disk data can pass reports corruption, never a panic.

/// Bytes in one page. 4 KiB: the OS page, the unit the kernel caches and writes back, the
/// granularity of the mapping, and small enough that a point lookup touches few bytes.
pub const PAGE_SIZE: usize = 4096;

/// Bytes of the common header at the start of every page or extent.
pub const PAGE_HEADER_SIZE: usize = 32;

/// Bytes of payload in a single page.
pub const PAGE_PAYLOAD_SIZE: usize = PAGE_SIZE - PAGE_HEADER_SIZE;

/// Pages that hold the two header slots (pages 0 and 1).
pub const HEADER_PAGES: u32 = 2;

/// Root slots in the file header: the engine's and B+tree's named entry points.
pub const ROOT_SLOTS: usize = 32;

/// The largest extent, in pages (64 MiB: room for a 16 MiB document with margin).
pub const EXTENT_PAGES_MAX: u32 = 16 * 1024;

/// The largest page number plus one (u32 page numbers; 16 TiB at 4 KiB pages).
pub const FILE_PAGES_MAX: u64 = u32::MAX as u64;

/// The file grows by at least this many pages at a time (64 KiB).
pub const GROW_PAGES_MIN: u64 = 16;

/// ...and by at most this many pages beyond what is needed (64 MiB), so a preallocated tail
/// stays a small share of a large file.
pub const GROW_PAGES_MAX: u64 = 16 * 1024;

/// Dirty bytes a write transaction keeps in memory before it spills pages to the file.
pub const DIRTY_BYTES_MAX_DEFAULT: usize = 256 * 1024 * 1024;

/// Committed single pages held in memory before they are written to the file (32 MiB); a
/// checkpoint writes them all in any case.
pub const WRITE_BACK_BYTES_MAX_DEFAULT: usize = 32 * 1024 * 1024;

/// Commits that change at most this many extents keep their images in the write-back
/// buffer; larger ones write every page at once. 256 (was 64): an indexed `updateMany` of 66
/// large documents changes ~140 (66 extents, their leaves, branches), and buffering its
/// leaves took 10-13% off the call in an interleaved A/B (D60); bulk loads stay above it.
pub const WRITE_BACK_COMMIT_PAGES_MAX: usize = 256;

/// ...and at most this many bytes of images: such a commit's extents (a large document's
/// record) wait in the buffer too, instead of being written before its log record.
pub const WRITE_BACK_COMMIT_BYTES_MAX: usize = 4 * 1024 * 1024;

const _: () = assert!(PAGE_SIZE.is_multiple_of(512));
const _: () = assert!(PAGE_HEADER_SIZE < PAGE_SIZE);
const _: () = assert!(ROOT_SLOTS * 8 + 128 < PAGE_SIZE);
const _: () = assert!(GROW_PAGES_MIN <= GROW_PAGES_MAX);
const _: () = assert!((EXTENT_PAGES_MAX as u64) < FILE_PAGES_MAX);
