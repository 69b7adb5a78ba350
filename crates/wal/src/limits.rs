//! Size limits of the write-ahead log and its on-disk format.
//!
//! Invariants:
//! - A walk over log bytes that passes one of these limits reports the block as damaged.
//! - The constants agree with each other (checked at compile time below).

/// Largest record payload: a 16 MiB BSON document plus room for the engine's framing.
pub const RECORD_LEN_MAX: usize = 16 * 1024 * 1024 + 64 * 1024;

/// Bytes in front of every record inside a block (its `u32` length).
pub const RECORD_HEADER_LEN: usize = 4;

/// Raw size a block aims for; it closes when the next record would pass this.
pub const BLOCK_LEN_TARGET: usize = 256 * 1024;

/// Largest raw payload of one block: one maximal record alone in its block.
pub const BLOCK_LEN_RAW_MAX: usize = RECORD_LEN_MAX + RECORD_HEADER_LEN;

/// Blocks start at multiples of this (the sector size).
pub const BLOCK_ALIGN: u64 = 512;

/// Size of the file header region; the first block starts here.
pub const FILE_HEADER_LEN: u64 = 512;

/// Size of a block header.
pub const BLOCK_HEADER_LEN: usize = 48;

/// Sealed, unwritten block bytes at which `append` waits for the writer to catch up.
pub const SEALED_BACKLOG_MAX: usize = 64 * 1024 * 1024;

/// Default preallocation step of the log file. Each step is written as zeros and synced
/// inside one commit (or when a log is created, which every open after a clean close
/// does), so it sets that commit's stall: 4 MiB costs ~10 ms of this machine's fdatasync,
/// 16 MiB ~40 ms; the bytes written per byte of log are the same either way.
pub const PREALLOCATE_CHUNK_DEFAULT: u64 = 4 * 1024 * 1024;

const _: () = assert!(BLOCK_LEN_TARGET < BLOCK_LEN_RAW_MAX);
const _: () = assert!(BLOCK_LEN_RAW_MAX <= u32::MAX as usize);
const _: () = assert!(FILE_HEADER_LEN.is_multiple_of(BLOCK_ALIGN));
const _: () = assert!((BLOCK_HEADER_LEN as u64) < BLOCK_ALIGN);
const _: () = assert!(PREALLOCATE_CHUNK_DEFAULT.is_multiple_of(BLOCK_ALIGN));
