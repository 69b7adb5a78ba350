//! Slotted node pages: the byte layout of leaves and branches, read and edited in place.
//!
//! Payload layout (after the pager's 32-byte header; see `docs/format.md`):
//! level u8 @0 (0 = leaf), reserved u8 @1, count u16 @2, heap_start u16 @4, garbage u16 @6,
//! child0 u32 @8 (branches), slots u16 × count @12; cells fill the heap from the end.
//! Leaf cell: flags u8 (1 = key overflow, 2 = value overflow), key_len u32, val_len u32,
//! key (inline bytes or overflow page u32), value (inline bytes or page u32).
//! Branch cell: flags u8, key_len u32, key (inline or page u32), child u32.
//!
//! Invariants:
//! - `NODE_HEADER_SIZE + 2 * count <= heap_start <= payload length`, and every slot points
//!   at a whole cell inside the heap; `Node::parse` checks this before any other access, so
//!   reads of damaged pages are errors, never panics.
//! - `garbage` counts dead heap bytes; live cells + garbage = payload length - heap_start.
//! - Keys in a node are strictly increasing by slot (checked by `verify`).

use crate::error::{Result, corrupt};
use crate::limits::NODE_HEADER_SIZE;
use pager::PageId;
use pager::limits::PAGE_PAYLOAD_SIZE;
use std::ops::Range;

pub(crate) const FLAG_KEY_OVERFLOW: u8 = 1;
pub(crate) const FLAG_VALUE_OVERFLOW: u8 = 2;
/// The lengths are LEB128 varints (format 2 on) rather than `u32`s (format 1).
pub(crate) const FLAG_COMPACT: u8 = 4;

/// The header of a cell: its flags, lengths, and where its key part starts.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Head {
    pub(crate) flags: u8,
    pub(crate) key_len: u32,
    /// Zero for branch cells.
    pub(crate) value_len: u32,
    pub(crate) body: usize,
}

/// Decodes the header of the cell at `at` of `b` (a leaf cell has a value length too);
/// `None` when it runs past `b` or a varint is malformed.
#[inline]
pub(crate) fn head(b: &[u8], at: usize, leaf: bool) -> Option<Head> {
    let flags = *b.get(at)?;
    if flags & FLAG_COMPACT == 0 {
        let key_len = u32_at(b, at + 1)?;
        if !leaf {
            return Some(Head {
                flags,
                key_len,
                value_len: 0,
                body: at + 5,
            });
        }
        let value_len = u32_at(b, at + 5)?;
        return Some(Head {
            flags,
            key_len,
            value_len,
            body: at + 9,
        });
    }
    let (key_len, next) = varint(b, at + 1)?;
    if !leaf {
        return Some(Head {
            flags,
            key_len,
            value_len: 0,
            body: next,
        });
    }
    let (value_len, body) = varint(b, next)?;
    Some(Head {
        flags,
        key_len,
        value_len,
        body,
    })
}

/// A LEB128 `u32` at `at`: its value and the offset after it; at most five bytes.
#[inline]
fn varint(b: &[u8], at: usize) -> Option<(u32, usize)> {
    let first = *b.get(at)?;
    if first < 0x80 {
        return Some((u32::from(first), at + 1));
    }
    varint_long(b, at)
}

#[cold]
fn varint_long(b: &[u8], mut at: usize) -> Option<(u32, usize)> {
    let mut value = 0u32;
    for shift in [0, 7, 14, 21, 28] {
        let byte = *b.get(at)?;
        at += 1;
        let bits = u32::from(byte & 0x7f);
        if shift == 28 && bits > 0x0f {
            return None;
        }
        value |= bits << shift;
        if byte & 0x80 == 0 {
            return Some((value, at));
        }
    }
    None
}

fn put_varint(out: &mut Vec<u8>, mut value: u32) {
    while value >= 0x80 {
        out.push((value & 0x7f) as u8 | 0x80);
        value >>= 7;
    }
    out.push(value as u8);
}

/// Where a key or value lives: a byte range of the node, or an overflow extent.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum Part {
    Inline(Range<usize>),
    Overflow(PageId),
}

/// A decoded leaf cell.
#[derive(Clone, Debug)]
pub(crate) struct LeafCell {
    pub(crate) key: Part,
    pub(crate) key_len: usize,
    pub(crate) value: Part,
    pub(crate) value_len: usize,
}

/// Where the key and value of a leaf cell are, as offsets into the node (of the bytes, or
/// of the 4-byte overflow page number when the flag says so): what a cursor keeps per cell.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Spans {
    pub(crate) flags: u8,
    /// Where the cell starts.
    pub(crate) at: u32,
    pub(crate) key_at: u32,
    pub(crate) key_len: u32,
    pub(crate) value_at: u32,
    pub(crate) value_len: u32,
}

/// A decoded branch cell.
#[derive(Clone, Debug)]
pub(crate) struct BranchCell {
    pub(crate) key: Part,
    pub(crate) key_len: usize,
    pub(crate) child: PageId,
}

fn u16_at(b: &[u8], at: usize) -> usize {
    usize::from(u16::from_le_bytes([b[at], b[at + 1]]))
}

fn set_u16(b: &mut [u8], at: usize, value: usize) {
    let value = u16::try_from(value).expect("node offsets fit u16");
    b[at..at + 2].copy_from_slice(&value.to_le_bytes());
}

fn u32_at(b: &[u8], at: usize) -> Option<u32> {
    let bytes = b.get(at..at + 4)?;
    Some(u32::from_le_bytes([bytes[0], bytes[1], bytes[2], bytes[3]]))
}

/// A validated read-only view of a node payload.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Node<'a> {
    pub(crate) bytes: &'a [u8],
    pub(crate) page: PageId,
}

impl<'a> Node<'a> {
    /// Checks the header and slot array bounds.
    pub(crate) fn parse(bytes: &'a [u8], page: PageId) -> Result<Node<'a>> {
        if bytes.len() != PAGE_PAYLOAD_SIZE {
            return Err(corrupt(page.0, "node is not a single page"));
        }
        let count = u16_at(bytes, 2);
        let heap_start = u16_at(bytes, 4);
        if NODE_HEADER_SIZE + 2 * count > heap_start || heap_start > bytes.len() {
            return Err(corrupt(page.0, "node slot array overlaps its heap"));
        }
        if u16_at(bytes, 6) > bytes.len() - heap_start {
            return Err(corrupt(page.0, "node garbage count"));
        }
        Ok(Node { bytes, page })
    }

    pub(crate) fn level(&self) -> u8 {
        self.bytes[0]
    }

    pub(crate) fn is_leaf(&self) -> bool {
        self.level() == 0
    }

    pub(crate) fn count(&self) -> usize {
        u16_at(self.bytes, 2)
    }

    fn err(&self, reason: &'static str) -> crate::error::Error {
        corrupt(self.page.0, reason)
    }

    /// The offset of cell `i`, checked to be in the heap.
    fn cell_at(&self, i: usize) -> Result<usize> {
        if i >= self.count() {
            return Err(self.err("cell index past the count"));
        }
        let at = u16_at(self.bytes, NODE_HEADER_SIZE + 2 * i);
        if at < u16_at(self.bytes, 4) || at >= self.bytes.len() {
            return Err(self.err("slot points outside the heap"));
        }
        Ok(at)
    }

    fn part(&self, at: usize, len: usize, overflow: bool) -> Result<(Part, usize)> {
        if overflow {
            let page = u32_at(self.bytes, at).ok_or_else(|| self.err("cell past the page"))?;
            return Ok((Part::Overflow(PageId(page)), at + 4));
        }
        let end = at
            .checked_add(len)
            .filter(|&end| end <= self.bytes.len())
            .ok_or_else(|| self.err("cell past the page"))?;
        Ok((Part::Inline(at..end), end))
    }

    /// Cell `i` of a leaf, with its total size.
    pub(crate) fn leaf_cell(&self, i: usize) -> Result<(LeafCell, usize)> {
        let at = self.cell_at(i)?;
        let h = head(self.bytes, at, true).ok_or_else(|| self.err("cell past the page"))?;
        let (flags, key_len, value_len) = (h.flags, h.key_len as usize, h.value_len as usize);
        let (key, next) = self.part(h.body, key_len, flags & FLAG_KEY_OVERFLOW != 0)?;
        let (value, end) = self.part(next, value_len, flags & FLAG_VALUE_OVERFLOW != 0)?;
        let cell = LeafCell {
            key,
            key_len,
            value,
            value_len,
        };
        Ok((cell, end - at))
    }

    /// The spans of every cell of a leaf, appended to `out`, each checked as `leaf_cell`
    /// checks it. One loop whose loads do not depend on each other, so the cache misses
    /// of a leaf a scan enters overlap.
    pub(crate) fn leaf_spans(&self, out: &mut Vec<Spans>) -> Result<()> {
        let len = self.bytes.len();
        let heap_start = u16_at(self.bytes, 4);
        for i in 0..self.count() {
            let at = u16_at(self.bytes, NODE_HEADER_SIZE + 2 * i);
            if at < heap_start {
                return Err(self.err("slot points outside the heap"));
            }
            let Head {
                flags,
                key_len,
                value_len,
                body: key_at,
            } = head(self.bytes, at, true).ok_or_else(|| self.err("cell past the page"))?;
            let part_len = |overflow: bool, n: u32| if overflow { 4 } else { n as usize };
            let value_at = key_at + part_len(flags & FLAG_KEY_OVERFLOW != 0, key_len);
            let end = value_at + part_len(flags & FLAG_VALUE_OVERFLOW != 0, value_len);
            if end > len {
                return Err(self.err("cell past the page"));
            }
            out.push(Spans {
                flags,
                at: at as u32,
                key_at: key_at as u32,
                key_len,
                value_at: value_at as u32,
                value_len,
            });
        }
        Ok(())
    }

    /// The bytes of every cell of a leaf, in slot order, appended to `out`.
    pub(crate) fn leaf_cells(&self, out: &mut Vec<&'a [u8]>) -> Result<()> {
        let mut spans = Vec::with_capacity(self.count());
        self.leaf_spans(&mut spans)?;
        out.extend(spans.iter().map(|s| {
            let value_len = if s.flags & FLAG_VALUE_OVERFLOW != 0 {
                4
            } else {
                s.value_len
            };
            // `leaf_spans` checked that every cell ends inside the page.
            &self.bytes[s.at as usize..(s.value_at + value_len) as usize]
        }));
        Ok(())
    }

    /// The bytes of every cell, in slot order.
    pub(crate) fn cells(&self) -> Result<Vec<&'a [u8]>> {
        let mut out = Vec::with_capacity(self.count() + 1);
        if self.is_leaf() {
            self.leaf_cells(&mut out)?;
        } else {
            for i in 0..self.count() {
                out.push(self.cell_bytes(i)?);
            }
        }
        Ok(out)
    }

    /// Cell `i` of a branch, with its total size.
    pub(crate) fn branch_cell(&self, i: usize) -> Result<(BranchCell, usize)> {
        let at = self.cell_at(i)?;
        let h = head(self.bytes, at, false).ok_or_else(|| self.err("cell past the page"))?;
        let key_len = h.key_len as usize;
        let (key, next) = self.part(h.body, key_len, h.flags & FLAG_KEY_OVERFLOW != 0)?;
        let child = u32_at(self.bytes, next).ok_or_else(|| self.err("cell past the page"))?;
        let cell = BranchCell {
            key,
            key_len,
            child: PageId(child),
        };
        Ok((cell, next + 4 - at))
    }

    /// The key part of cell `i` (leaf or branch), without decoding the rest of the cell:
    /// this is the comparison in every binary search.
    pub(crate) fn key(&self, i: usize) -> Result<(Part, usize)> {
        let at = self.cell_at(i)?;
        let h =
            head(self.bytes, at, self.is_leaf()).ok_or_else(|| self.err("cell past the page"))?;
        let key_len = h.key_len as usize;
        let (part, _) = self.part(h.body, key_len, h.flags & FLAG_KEY_OVERFLOW != 0)?;
        Ok((part, key_len))
    }

    /// The key of cell `i` when it is stored inline, `None` when it is in an overflow
    /// extent or the cell is damaged (callers fall back to `key`, which reports which).
    /// The binary search's fast path: a few loads and one bounds check per probe.
    #[inline]
    pub(crate) fn inline_key(&self, i: usize) -> Option<&'a [u8]> {
        let at = u16_at(self.bytes, NODE_HEADER_SIZE + 2 * i);
        let h = head(self.bytes, at, self.is_leaf())?;
        if h.flags & FLAG_KEY_OVERFLOW != 0 {
            return None;
        }
        self.bytes
            .get(h.body..h.body.checked_add(h.key_len as usize)?)
    }

    /// Child `i` of a branch (0 = leftmost, `i` = right of key `i - 1`).
    pub(crate) fn child(&self, i: usize) -> Result<PageId> {
        if i == 0 {
            let child = u32_at(self.bytes, 8).ok_or_else(|| self.err("node header"))?;
            return Ok(PageId(child));
        }
        Ok(self.branch_cell(i - 1)?.0.child)
    }

    /// The raw bytes of cell `i`.
    pub(crate) fn cell_bytes(&self, i: usize) -> Result<&'a [u8]> {
        let at = self.cell_at(i)?;
        let size = if self.is_leaf() {
            self.leaf_cell(i)?.1
        } else {
            self.branch_cell(i)?.1
        };
        Ok(&self.bytes[at..at + size])
    }

    /// Bytes in use: header, slots and live cells.
    pub(crate) fn used_bytes(&self) -> usize {
        let heap = self.bytes.len() - u16_at(self.bytes, 4) - u16_at(self.bytes, 6);
        NODE_HEADER_SIZE + 2 * self.count() + heap
    }

    /// Checks every cell, so in-place edits after this cannot go out of bounds.
    pub(crate) fn validate(&self) -> Result<()> {
        let mut live = 0;
        for i in 0..self.count() {
            live += self.cell_bytes(i)?.len();
        }
        let heap = self.bytes.len() - u16_at(self.bytes, 4);
        if live + u16_at(self.bytes, 6) != heap {
            return Err(self.err("node heap accounting"));
        }
        Ok(())
    }
}

/// Formats an empty node of `level`.
pub(crate) fn init(b: &mut [u8], level: u8, child0: PageId) {
    b[..NODE_HEADER_SIZE].fill(0);
    b[0] = level;
    set_u16(b, 4, b.len());
    b[8..12].copy_from_slice(&child0.0.to_le_bytes());
}

/// Sets child `i` of a branch.
pub(crate) fn set_child(b: &mut [u8], i: usize, child: PageId) -> Result<()> {
    let at = if i == 0 {
        8
    } else {
        let node = Node::parse(b, PageId(0))?;
        let (_, size) = node.branch_cell(i - 1)?;
        u16_at(b, NODE_HEADER_SIZE + 2 * (i - 1)) + size - 4
    };
    b[at..at + 4].copy_from_slice(&child.0.to_le_bytes());
    Ok(())
}

/// Inserts `cell` at slot `i`; returns false (node unchanged) if it does not fit.
pub(crate) fn insert_cell(b: &mut [u8], i: usize, cell: &[u8]) -> bool {
    let count = u16_at(b, 2);
    assert!(i <= count, "insert at {i} of {count}");
    let slots_end = NODE_HEADER_SIZE + 2 * count;
    let need = cell.len() + 2;
    if u16_at(b, 4) - slots_end < need {
        if u16_at(b, 4) - slots_end + u16_at(b, 6) < need {
            return false;
        }
        compact(b);
    }
    let at = u16_at(b, 4) - cell.len();
    b[at..at + cell.len()].copy_from_slice(cell);
    set_u16(b, 4, at);
    let slot = NODE_HEADER_SIZE + 2 * i;
    b.copy_within(slot..slots_end, slot + 2);
    set_u16(b, slot, at);
    set_u16(b, 2, count + 1);
    true
}

/// Removes the cell at slot `i` whose size is `size`.
pub(crate) fn remove_cell(b: &mut [u8], i: usize, size: usize) {
    let count = u16_at(b, 2);
    assert!(i < count, "remove at {i} of {count}");
    let slot = NODE_HEADER_SIZE + 2 * i;
    let at = u16_at(b, slot);
    if at == u16_at(b, 4) {
        set_u16(b, 4, at + size);
    } else {
        set_u16(b, 6, u16_at(b, 6) + size);
    }
    b.copy_within(slot + 2..NODE_HEADER_SIZE + 2 * count, slot);
    set_u16(b, 2, count - 1);
}

/// Writes `cell` over cell `i`, whose size is `size` (at least `cell.len()`); the bytes
/// it does not reuse become garbage.
pub(crate) fn overwrite_cell(b: &mut [u8], i: usize, size: usize, cell: &[u8]) {
    assert!(
        cell.len() <= size,
        "a cell of {} bytes over one of {size}",
        cell.len()
    );
    let at = u16_at(b, NODE_HEADER_SIZE + 2 * i);
    b[at..at + cell.len()].copy_from_slice(cell);
    set_u16(b, 6, u16_at(b, 6) + size - cell.len());
}

/// Rewrites the heap without garbage, cells in ascending key order from `heap_start` so a
/// forward scan reads the page front to back.
fn compact(b: &mut [u8]) {
    let copy = b.to_vec();
    let node = Node::parse(&copy, PageId(0)).expect("a node being edited is valid");
    let cells = node.cells().expect("a node being edited has valid cells");
    place_ascending(b, &cells);
}

fn place_ascending<C: AsRef<[u8]>>(b: &mut [u8], cells: &[C]) {
    let total: usize = cells.iter().map(|c| c.as_ref().len()).sum();
    let mut at = b.len() - total;
    set_u16(b, 4, at);
    set_u16(b, 6, 0);
    for (i, cell) in cells.iter().enumerate() {
        let cell = cell.as_ref();
        b[at..at + cell.len()].copy_from_slice(cell);
        set_u16(b, NODE_HEADER_SIZE + 2 * i, at);
        at += cell.len();
    }
    set_u16(b, 2, cells.len());
}

/// Rebuilds a node of `level` from `cells` (all must fit), laid out in key order.
pub(crate) fn rebuild<C: AsRef<[u8]>>(b: &mut [u8], level: u8, child0: PageId, cells: &[C]) {
    init(b, level, child0);
    let needed = NODE_HEADER_SIZE + cells_size(cells);
    assert!(needed <= b.len(), "rebuilt node needs {needed} bytes");
    place_ascending(b, cells);
}

/// Bytes `cells` take in a node, slots included.
pub(crate) fn cells_size<C: AsRef<[u8]>>(cells: &[C]) -> usize {
    cells.iter().map(|c| c.as_ref().len() + 2).sum()
}

/// The key part of a leaf cell given as its bytes (`Part::Inline` ranges are into `cell`).
pub(crate) fn leaf_cell_key(cell: &[u8], page: PageId) -> Result<(Part, usize)> {
    let h = head(cell, 0, true).ok_or_else(|| corrupt(page.0, "cell past the page"))?;
    let key_len = h.key_len as usize;
    if h.flags & FLAG_KEY_OVERFLOW != 0 {
        let id = u32_at(cell, h.body).ok_or_else(|| corrupt(page.0, "cell past the page"))?;
        return Ok((Part::Overflow(PageId(id)), key_len));
    }
    if h.body + key_len > cell.len() {
        return Err(corrupt(page.0, "cell past the page"));
    }
    Ok((Part::Inline(h.body..h.body + key_len), key_len))
}

/// Encodes a leaf cell from its key and value parts.
pub(crate) fn leaf_cell_bytes(key: &Encoded, value: &Encoded) -> Vec<u8> {
    let mut cell = Vec::with_capacity(9 + key.body.len() + value.body.len());
    cell.push(FLAG_COMPACT | key.flag(FLAG_KEY_OVERFLOW) | value.flag(FLAG_VALUE_OVERFLOW));
    put_varint(&mut cell, key.len);
    put_varint(&mut cell, value.len);
    cell.extend_from_slice(&key.body);
    cell.extend_from_slice(&value.body);
    cell
}

/// Appends the leaf cell of an inline `key` and `value` (the bytes [`leaf_cell_bytes`] gives
/// for two inline parts), without allocating.
pub(crate) fn put_inline_leaf_cell(out: &mut Vec<u8>, key: &[u8], value: &[u8]) {
    out.push(FLAG_COMPACT);
    put_varint(out, u32::try_from(key.len()).expect("key length fits u32"));
    put_varint(
        out,
        u32::try_from(value.len()).expect("value length fits u32"),
    );
    out.extend_from_slice(key);
    out.extend_from_slice(value);
}

/// Encodes a branch cell from a key part and a child.
pub(crate) fn branch_cell_bytes(key: &Encoded, child: PageId) -> Vec<u8> {
    let mut cell = Vec::with_capacity(9 + key.body.len());
    cell.push(FLAG_COMPACT | key.flag(FLAG_KEY_OVERFLOW));
    put_varint(&mut cell, key.len);
    cell.extend_from_slice(&key.body);
    cell.extend_from_slice(&child.0.to_le_bytes());
    cell
}

/// A key or value ready for a cell: inline bytes, or the page of its overflow extent.
#[derive(Clone, Debug)]
pub(crate) struct Encoded {
    pub(crate) len: u32,
    pub(crate) overflow: bool,
    pub(crate) body: Vec<u8>,
}

impl Encoded {
    fn flag(&self, bit: u8) -> u8 {
        if self.overflow { bit } else { 0 }
    }

    /// The encoded form of a branch cell's key part (without the child).
    pub(crate) fn from_branch_cell(cell: &[u8]) -> Encoded {
        let h = head(cell, 0, false).expect("a branch cell this process built or checked");
        Encoded {
            len: h.key_len,
            overflow: h.flags & FLAG_KEY_OVERFLOW != 0,
            body: cell[h.body..cell.len() - 4].to_vec(),
        }
    }

    /// The child of a branch cell.
    pub(crate) fn branch_child(cell: &[u8]) -> PageId {
        let at = cell.len() - 4;
        PageId(u32::from_le_bytes([
            cell[at],
            cell[at + 1],
            cell[at + 2],
            cell[at + 3],
        ]))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn varints_round_trip_and_bad_ones_are_refused() {
        for value in [0, 1, 127, 128, 300, 16_383, 16_384, 1 << 24, u32::MAX] {
            let mut bytes = vec![0xee];
            put_varint(&mut bytes, value);
            bytes.push(0xee);
            assert_eq!(varint(&bytes, 1), Some((value, bytes.len() - 1)), "{value}");
        }
        assert_eq!(varint(&[0x80, 0x80], 0), None, "runs past the end");
        assert_eq!(varint(&[0xff, 0xff, 0xff, 0xff, 0x1f], 0), None, "past u32");
        assert_eq!(
            varint(&[0x80, 0x80, 0x80, 0x80, 0x80, 0x01], 0),
            None,
            "six bytes"
        );
    }

    #[test]
    fn an_appended_inline_cell_is_the_encoded_one() {
        for (key, value) in [(0, 0), (1, 0), (17, 0), (200, 3), (127, 129)] {
            let (key, value) = (vec![5u8; key], vec![6u8; value]);
            let mut out = vec![9u8];
            put_inline_leaf_cell(&mut out, &key, &value);
            assert_eq!(
                out[1..],
                leaf_cell_bytes(&inline(&key), &inline(&value))[..]
            );
        }
    }

    #[test]
    fn a_small_entry_costs_three_header_bytes() {
        let cell = leaf_cell_bytes(&inline(&[1; 16]), &inline(&[2; 100]));
        assert_eq!(cell.len(), 3 + 16 + 100);
        let h = head(&cell, 0, true).expect("header");
        assert_eq!((h.key_len, h.value_len, h.body), (16, 100, 3));
        let branch = branch_cell_bytes(&inline(&[1; 5]), PageId(9));
        assert_eq!(branch.len(), 2 + 5 + 4);
        assert_eq!(Encoded::from_branch_cell(&branch).body, vec![1; 5]);
        assert_eq!(Encoded::branch_child(&branch), PageId(9));
    }

    fn inline(bytes: &[u8]) -> Encoded {
        Encoded {
            len: bytes.len() as u32,
            overflow: false,
            body: bytes.to_vec(),
        }
    }

    #[test]
    fn insert_remove_and_compact_keep_cells_intact() {
        let mut b = vec![0u8; PAGE_PAYLOAD_SIZE];
        init(&mut b, 0, PageId(0));
        for i in 0..40u8 {
            let cell = leaf_cell_bytes(&inline(&[i; 10]), &inline(&[i; 50]));
            assert!(insert_cell(&mut b, usize::from(i), &cell));
        }
        for _ in 0..20 {
            let size = Node::parse(&b, PageId(2))
                .expect("valid")
                .leaf_cell(5)
                .expect("cell")
                .1;
            remove_cell(&mut b, 5, size);
        }
        let big = leaf_cell_bytes(&inline(&[9; 400]), &inline(&[9; 500]));
        assert!(insert_cell(&mut b, 3, &big), "fits after compaction");
        let node = Node::parse(&b, PageId(2)).expect("valid");
        node.validate().expect("heap accounting");
        assert_eq!(node.count(), 21);
        let (cell, _) = node.leaf_cell(3).expect("cell");
        assert_eq!(cell.value_len, 500);
    }
}
