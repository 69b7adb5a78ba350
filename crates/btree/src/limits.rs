//! Bounds of the B+tree: key and value lengths, cell sizes, tree height.
//!
//! Invariants:
//! - Any cell the tree builds is at most `CELL_MAX` bytes, so every node holds at least four
//!   cells and a split always leaves both halves non-empty.
//! - A descent deeper than `HEIGHT_MAX` is reported as corruption (it can only be a cycle).

use pager::limits::{EXTENT_PAGES_MAX, PAGE_HEADER_SIZE, PAGE_PAYLOAD_SIZE, PAGE_SIZE};

/// Bytes of node header before the slot array.
pub const NODE_HEADER_SIZE: usize = 12;

/// The largest cell stored in a node (including nothing of its slot).
pub const CELL_MAX: usize = 1000;

/// Keys up to this length stay inline next to an overflowed value.
pub const KEY_INLINE_MAX: usize = 512;

/// The longest key (BSON documents are at most 16 MiB; an index key is shorter).
pub const KEY_LEN_MAX: usize = 16 * 1024 * 1024;

/// The longest value (one overflow extent).
pub const VALUE_LEN_MAX: usize = EXTENT_PAGES_MAX as usize * PAGE_SIZE - PAGE_HEADER_SIZE;

/// The deepest tree a walk accepts.
pub const HEIGHT_MAX: usize = 32;

/// Bulk loading fills nodes to this many payload bytes, leaving room for later inserts.
pub const BULK_FILL_BYTES: usize = PAGE_PAYLOAD_SIZE * 15 / 16;

const _: () = assert!(4 * (CELL_MAX + 2) + NODE_HEADER_SIZE <= PAGE_PAYLOAD_SIZE);
const _: () = assert!(9 + KEY_INLINE_MAX + 4 <= CELL_MAX);
const _: () = assert!(KEY_LEN_MAX <= VALUE_LEN_MAX);
const _: () = assert!(PAGE_PAYLOAD_SIZE < u16::MAX as usize);
