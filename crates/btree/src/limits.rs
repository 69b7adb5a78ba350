//! Bounds of the B+tree: key and value lengths, cell sizes, tree height.
//!
//! Invariants:
//! - A branch cell is at most `CELL_MAX` bytes, so a branch holds at least four cells.
//! - A leaf cell is at most `LEAF_CELL_MAX` bytes (half a node's capacity, less two slots),
//!   so a leaf holds at least two, and among the split points of a full leaf plus one
//!   cell there is always one where both halves fit.
//! - A descent deeper than `HEIGHT_MAX` is reported as corruption (it can only be a cycle).

use pager::limits::{EXTENT_PAGES_MAX, PAGE_HEADER_SIZE, PAGE_PAYLOAD_SIZE, PAGE_SIZE};

/// Bytes of node header before the slot array.
pub const NODE_HEADER_SIZE: usize = 12;

/// The largest branch cell (including nothing of its slot).
pub const CELL_MAX: usize = 1000;

/// Bytes a node has for slots and cells.
pub const NODE_CAPACITY: usize = PAGE_PAYLOAD_SIZE - NODE_HEADER_SIZE;

/// The largest leaf cell. Documents up to about 2 KiB stay inline in their leaf rather
/// than taking an overflow page each (a 1.5 KiB document in a page of its own costs 2.7x
/// its size on disk).
pub const LEAF_CELL_MAX: usize = NODE_CAPACITY / 2 - 2;

/// A full leaf shares its cells with a neighbour instead of splitting only when the pair
/// keeps this many bytes free afterwards (a quarter of a small entry), so the insert that
/// follows a share splits rather than reshuffling the same two leaves again. Larger slack
/// shares less and fills less: random inserts leave leaves 85% full at 1/32 and 86% at
/// 1/128 (PLAN D28, D29).
pub const SHARE_SLACK: usize = NODE_CAPACITY / 128;

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
const _: () = assert!(2 * (LEAF_CELL_MAX + 2) <= NODE_CAPACITY);
const _: () = assert!(CELL_MAX <= LEAF_CELL_MAX);
const _: () = assert!(9 + KEY_INLINE_MAX + 4 <= CELL_MAX);
const _: () = assert!(KEY_LEN_MAX <= VALUE_LEN_MAX);
const _: () = assert!(PAGE_PAYLOAD_SIZE < u16::MAX as usize);
