//! Ordered range iteration in both directions, with seek, over a cursor stack.
//!
//! A `Range` holds up to two cursors (front and back), created lazily on the first `next`
//! or `next_back`. A cursor moves through: Unpositioned → Positioned (seek to a bound) →
//! Exhausted; `advance`/`retreat` climb the stack to the next child and descend again.
//! Leaves carry no sibling pointers: copy-on-write would have to copy a neighbour on every
//! leaf change.
//!
//! Invariants:
//! - A cursor's stack names one page per level from the root down to a leaf.
//! - Front and back never yield the same entry: each remembers the position (leaf page,
//!   slot) it yielded last, and iteration ends when one reaches the other's.

use crate::error::{Result, corrupt};
use crate::limits::HEIGHT_MAX;
use crate::node::{FLAG_KEY_OVERFLOW, FLAG_VALUE_OVERFLOW, Node, Part, Spans};
use crate::tree::{Btree, PageRead, child_index, load, lower_bound, node_at, sub};
use pager::PageId;
use std::borrow::Cow;
use std::ops::Bound;

/// How many entries a walk hints at a time. A scan of 16 KiB documents (each an extent
/// of its own, a TLB and cache miss apart) measured, in server CPU per unindexed range
/// count over 65,536 of them: no hints 17.3 ms, a hint 8 entries ahead per step 14.5 ms,
/// batches of 32 13.3-14.0 ms, the whole leaf at once 12.2-14.0 ms (PLAN.md, the #19
/// decision). A batch's hints issue back to back, so their page walks and line fills
/// overlap the way a tight loop's loads do; one hint per step waits for its own walk.
/// Batches bound what a walk that stops early (a limit) hints in vain.
const PREFETCH_BATCH: usize = 32;

/// One key-value pair, borrowed from the map when possible.
pub type Entry<'t> = (Cow<'t, [u8]>, Cow<'t, [u8]>);

struct Frame<'t> {
    id: PageId,
    page: Cow<'t, [u8]>,
    index: usize,
}

struct Cursor<'t> {
    stack: Vec<Frame<'t>>,
    /// The cells of the leaf on top of `stack`, decoded when the cursor entered it: one
    /// pass over the slots with independent loads, so a scan pays a leaf's cache misses
    /// together and each step after is an index into this.
    cells: Vec<Spans>,
}

fn count_of(frame: &Frame<'_>) -> Result<usize> {
    Ok(Node::parse(&frame.page, frame.id)?.count())
}

impl<'t> Cursor<'t> {
    /// Pushes the leaf `frame` and decodes its cells.
    fn enter_leaf(&mut self, frame: Frame<'t>) -> Result<()> {
        let node = Node::parse(&frame.page, frame.id)?;
        self.cells.clear();
        node.leaf_spans(&mut self.cells)?;
        self.stack.push(frame);
        Ok(())
    }

    /// Descends from `id` always taking the first (or last) child; `index` at the leaf is
    /// the first (or last) slot.
    fn descend_edge<T: PageRead>(&mut self, txn: &'t T, mut id: PageId, last: bool) -> Result<()> {
        loop {
            if self.stack.len() >= HEIGHT_MAX {
                return Err(corrupt(id.0, "tree deeper than HEIGHT_MAX"));
            }
            let page = node_at(txn, id)?;
            let node = Node::parse(&page, id)?;
            let count = node.count();
            if node.is_leaf() {
                let index = if last { count.wrapping_sub(1) } else { 0 };
                return self.enter_leaf(Frame { id, page, index });
            }
            let index = if last { count } else { 0 };
            let child = node.child(index)?;
            self.stack.push(Frame { id, page, index });
            id = child;
        }
    }

    /// Positions at the first entry `>= key` (or `> key` when `exclusive`).
    fn seek_front<T: PageRead>(txn: &'t T, root: PageId, bound: Bound<&[u8]>) -> Result<Self> {
        let mut cursor = Cursor {
            stack: Vec::new(),
            cells: Vec::new(),
        };
        let (key, exclusive) = match bound {
            Bound::Unbounded => {
                cursor.descend_edge(txn, root, false)?;
                cursor.skip_empty_forward(txn)?;
                cursor.prefetch_window(txn, true);
                return Ok(cursor);
            }
            Bound::Included(key) => (key, false),
            Bound::Excluded(key) => (key, true),
        };
        cursor.descend_to(txn, root, key)?;
        let leaf = cursor.stack.last_mut().expect("descended to a leaf");
        let node = Node::parse(&leaf.page, leaf.id)?;
        let (index, found) = lower_bound(txn, &node, key)?;
        leaf.index = if found && exclusive { index + 1 } else { index };
        cursor.skip_empty_forward(txn)?;
        cursor.prefetch_window(txn, true);
        Ok(cursor)
    }

    /// Positions at the last entry `<= key` (or `< key` when `exclusive`).
    fn seek_back<T: PageRead>(txn: &'t T, root: PageId, bound: Bound<&[u8]>) -> Result<Self> {
        let mut cursor = Cursor {
            stack: Vec::new(),
            cells: Vec::new(),
        };
        let (key, exclusive) = match bound {
            Bound::Unbounded => {
                cursor.descend_edge(txn, root, true)?;
                cursor.skip_empty_backward(txn)?;
                cursor.prefetch_window(txn, false);
                return Ok(cursor);
            }
            Bound::Included(key) => (key, false),
            Bound::Excluded(key) => (key, true),
        };
        cursor.descend_to(txn, root, key)?;
        let leaf = cursor.stack.last_mut().expect("descended to a leaf");
        let node = Node::parse(&leaf.page, leaf.id)?;
        let (index, found) = lower_bound(txn, &node, key)?;
        // The slot before the first `>= key`, or the equal one when inclusive.
        leaf.index = if found && !exclusive {
            index
        } else {
            index.wrapping_sub(1)
        };
        cursor.skip_empty_backward(txn)?;
        cursor.prefetch_window(txn, false);
        Ok(cursor)
    }

    fn descend_to<T: PageRead>(&mut self, txn: &'t T, mut id: PageId, key: &[u8]) -> Result<()> {
        loop {
            if self.stack.len() >= HEIGHT_MAX {
                return Err(corrupt(id.0, "tree deeper than HEIGHT_MAX"));
            }
            let page = node_at(txn, id)?;
            let node = Node::parse(&page, id)?;
            if node.is_leaf() {
                return self.enter_leaf(Frame { id, page, index: 0 });
            }
            let index = child_index(txn, &node, key)?;
            let child = node.child(index)?;
            self.stack.push(Frame { id, page, index });
            id = child;
        }
    }

    /// If the leaf index is past the end, moves to the first slot of the next leaf.
    fn skip_empty_forward<T: PageRead>(&mut self, txn: &'t T) -> Result<()> {
        loop {
            let Some(leaf) = self.stack.last() else {
                return Ok(());
            };
            if leaf.index < self.cells.len() {
                return Ok(());
            }
            self.stack.pop();
            loop {
                let Some(frame) = self.stack.last_mut() else {
                    return Ok(());
                };
                if frame.index < count_of(frame)? {
                    frame.index += 1;
                    let child = Node::parse(&frame.page, frame.id)?.child(frame.index)?;
                    self.descend_edge(txn, child, false)?;
                    break;
                }
                self.stack.pop();
            }
        }
    }

    /// If the leaf index is before the start (wrapped), moves to the last slot of the
    /// previous leaf.
    fn skip_empty_backward<T: PageRead>(&mut self, txn: &'t T) -> Result<()> {
        loop {
            let Some(leaf) = self.stack.last() else {
                return Ok(());
            };
            if leaf.index < self.cells.len() {
                return Ok(());
            }
            self.stack.pop();
            loop {
                let Some(frame) = self.stack.last_mut() else {
                    return Ok(());
                };
                if frame.index > 0 {
                    frame.index -= 1;
                    let child = Node::parse(&frame.page, frame.id)?.child(frame.index)?;
                    self.descend_edge(txn, child, true)?;
                    break;
                }
                self.stack.pop();
            }
        }
    }

    /// The position and entry under the cursor, or `None` when exhausted.
    fn current<T: PageRead>(&self, txn: &'t T) -> Result<Option<((PageId, usize), Entry<'t>)>> {
        let Some(leaf) = self.stack.last() else {
            return Ok(None);
        };
        let cell = self
            .cells
            .get(leaf.index)
            .ok_or_else(|| corrupt(leaf.id.0, "cursor past its leaf"))?;
        let part = |at: u32, len: u32, flag: u8| {
            let (at, len) = (at as usize, len as usize);
            if cell.flags & flag == 0 {
                return Ok(sub(&leaf.page, at..at + len));
            }
            let id = u32::from_le_bytes(leaf.page[at..at + 4].try_into().expect("4 bytes"));
            load(txn, &leaf.page, &Part::Overflow(PageId(id)), len)
        };
        let key = part(cell.key_at, cell.key_len, FLAG_KEY_OVERFLOW)?;
        let value = part(cell.value_at, cell.value_len, FLAG_VALUE_OVERFLOW)?;
        Ok(Some(((leaf.id, leaf.index), (key, value))))
    }

    fn step<T: PageRead>(&mut self, txn: &'t T, forward: bool) -> Result<()> {
        if let Some(leaf) = self.stack.last_mut() {
            if forward {
                leaf.index += 1;
                if leaf.index < self.cells.len() {
                    let (index, batch) = (leaf.index, PREFETCH_BATCH);
                    if index % batch == 0 {
                        self.prefetch_cells(txn, index + batch..index + 2 * batch);
                    }
                    return Ok(());
                }
                self.skip_empty_forward(txn)?;
            } else {
                leaf.index = leaf.index.wrapping_sub(1);
                if leaf.index < self.cells.len() {
                    let (from_end, batch) = (self.cells.len() - 1 - leaf.index, PREFETCH_BATCH);
                    if from_end % batch == 0 {
                        let end = leaf.index.saturating_sub(batch);
                        self.prefetch_cells(txn, end.saturating_sub(batch)..end);
                    }
                    return Ok(());
                }
                self.skip_empty_backward(txn)?;
            }
            self.prefetch_window(txn, forward);
        }
        Ok(())
    }

    /// Hints the overflow values of the entries a walk reads next in this leaf: after a
    /// seek or a step onto a leaf, the next two batches in the walk's direction; each step
    /// onto a batch boundary then hints the batch after the next.
    fn prefetch_window<T: PageRead>(&self, txn: &T, forward: bool) {
        let Some(leaf) = self.stack.last() else {
            return;
        };
        let batch = PREFETCH_BATCH;
        if forward {
            let index = leaf.index;
            self.prefetch_cells(txn, index + 1..(index / batch + 2) * batch);
        } else {
            let index = leaf.index.min(self.cells.len());
            let from_end = self.cells.len().saturating_sub(1 + index);
            let end = self
                .cells
                .len()
                .saturating_sub((from_end / batch + 2) * batch);
            self.prefetch_cells(txn, end..index);
        }
    }

    /// Hints the overflow values of the cells `range` of the current leaf (those that
    /// exist), one after the other: the misses of a batch overlap.
    fn prefetch_cells<T: PageRead>(&self, txn: &T, range: std::ops::Range<usize>) {
        for index in range.start..range.end.min(self.cells.len()) {
            self.prefetch_value(txn, index);
        }
    }

    /// Hints the overflow value of cell `index` of the current leaf, if it has one: a scan
    /// reads the first bytes of each value, and every value over a page is an extent of
    /// its own, a cache and TLB miss apart from the leaf and from each other.
    fn prefetch_value<T: PageRead>(&self, txn: &T, index: usize) {
        let (Some(leaf), Some(cell)) = (self.stack.last(), self.cells.get(index)) else {
            return;
        };
        if cell.flags & FLAG_VALUE_OVERFLOW == 0 {
            return;
        }
        let at = cell.value_at as usize;
        if let Some(id) = leaf.page.get(at..at + 4) {
            let id = u32::from_le_bytes(id.try_into().expect("4 bytes"));
            txn.prefetch(PageId(id));
        }
    }
}

/// An ordered iterator over the entries of a tree within bounds; double-ended.
pub struct Range<'t, T: PageRead> {
    txn: &'t T,
    root: Option<PageId>,
    lower: Bound<Vec<u8>>,
    upper: Bound<Vec<u8>>,
    front: Option<Cursor<'t>>,
    back: Option<Cursor<'t>>,
    front_last: Option<(PageId, usize)>,
    back_last: Option<(PageId, usize)>,
    done: bool,
}

fn as_ref(bound: &Bound<Vec<u8>>) -> Bound<&[u8]> {
    match bound {
        Bound::Included(key) => Bound::Included(key),
        Bound::Excluded(key) => Bound::Excluded(key),
        Bound::Unbounded => Bound::Unbounded,
    }
}

fn within_upper(key: &[u8], upper: &Bound<Vec<u8>>) -> bool {
    match upper {
        Bound::Included(bound) => key <= bound.as_slice(),
        Bound::Excluded(bound) => key < bound.as_slice(),
        Bound::Unbounded => true,
    }
}

fn within_lower(key: &[u8], lower: &Bound<Vec<u8>>) -> bool {
    match lower {
        Bound::Included(bound) => key >= bound.as_slice(),
        Bound::Excluded(bound) => key > bound.as_slice(),
        Bound::Unbounded => true,
    }
}

impl<'t, T: PageRead> Range<'t, T> {
    fn next_front(&mut self) -> Result<Option<Entry<'t>>> {
        if self.done {
            return Ok(None);
        }
        let Some(root) = self.root else {
            return Ok(None);
        };
        if self.front.is_none() {
            self.front = Some(Cursor::seek_front(self.txn, root, as_ref(&self.lower))?);
        } else if let Some(cursor) = self.front.as_mut() {
            cursor.step(self.txn, true)?;
        }
        let cursor = self.front.as_ref().expect("front cursor set above");
        let Some((position, (key, value))) = cursor.current(self.txn)? else {
            self.done = true;
            return Ok(None);
        };
        if Some(position) == self.back_last || !within_upper(&key, &self.upper) {
            self.done = true;
            return Ok(None);
        }
        self.front_last = Some(position);
        Ok(Some((key, value)))
    }

    fn next_rear(&mut self) -> Result<Option<Entry<'t>>> {
        if self.done {
            return Ok(None);
        }
        let Some(root) = self.root else {
            return Ok(None);
        };
        if self.back.is_none() {
            self.back = Some(Cursor::seek_back(self.txn, root, as_ref(&self.upper))?);
        } else if let Some(cursor) = self.back.as_mut() {
            cursor.step(self.txn, false)?;
        }
        let cursor = self.back.as_ref().expect("back cursor set above");
        let Some((position, (key, value))) = cursor.current(self.txn)? else {
            self.done = true;
            return Ok(None);
        };
        if Some(position) == self.front_last || !within_lower(&key, &self.lower) {
            self.done = true;
            return Ok(None);
        }
        self.back_last = Some(position);
        Ok(Some((key, value)))
    }
}

impl<'t, T: PageRead> Iterator for Range<'t, T> {
    type Item = Result<Entry<'t>>;

    fn next(&mut self) -> Option<Self::Item> {
        let item = self.next_front();
        if item.is_err() {
            self.done = true;
        }
        item.transpose()
    }
}

impl<T: PageRead> DoubleEndedIterator for Range<'_, T> {
    fn next_back(&mut self) -> Option<Self::Item> {
        let item = self.next_rear();
        if item.is_err() {
            self.done = true;
        }
        item.transpose()
    }
}

impl Btree {
    /// Entries with keys within `(lower, upper)`, in key order (reverse with `.rev()`);
    /// a bound is a seek.
    pub fn range<'t, T: PageRead>(
        &self,
        txn: &'t T,
        lower: Bound<&[u8]>,
        upper: Bound<&[u8]>,
    ) -> Result<Range<'t, T>> {
        Ok(range_in(txn, self.root(txn)?, lower, upper))
    }

    /// Every entry in key order.
    pub fn iter<'t, T: PageRead>(&self, txn: &'t T) -> Result<Range<'t, T>> {
        self.range(txn, Bound::Unbounded, Bound::Unbounded)
    }
}

/// A range over the tree rooted at `root`.
pub(crate) fn range_in<'t, T: PageRead>(
    txn: &'t T,
    root: Option<PageId>,
    lower: Bound<&[u8]>,
    upper: Bound<&[u8]>,
) -> Range<'t, T> {
    let owned = |bound: Bound<&[u8]>| match bound {
        Bound::Included(key) => Bound::Included(key.to_vec()),
        Bound::Excluded(key) => Bound::Excluded(key.to_vec()),
        Bound::Unbounded => Bound::Unbounded,
    };
    Range {
        txn,
        root,
        lower: owned(lower),
        upper: owned(upper),
        front: None,
        back: None,
        front_last: None,
        back_last: None,
        done: false,
    }
}
