//! The B+tree: point lookup, insert and delete with copy-on-write paths over pager pages.
//!
//! A tree lives in one root slot of the pager header; `0` means empty. A writer works in a
//! `pager::WriteTxn` (one writer, so one writer per tree); readers use any `PageRead`
//! (a `ReadTxn` sees the last commit when it began).
//!
//! Invariants:
//! - Every leaf is at level 0 and a branch at level `n` has children at level `n - 1`, so
//!   all leaves are at the same depth.
//! - For separator `k_i` of a branch, keys in child `i` are `< k_i <= ` keys in child `i + 1`.
//! - A non-root leaf holds at least one entry: a leaf emptied by delete is freed and its
//!   pointer removed; a branch left with no child is freed too; a root branch with one child
//!   is replaced by that child. A leaf under a quarter full merges with a neighbour when
//!   both fit in half a page; underfull branches are kept.
//! - A full leaf splits only when neither neighbour has room to take its share
//!   (`share_with_sibling`, `SHARE_SLACK`): random inserts leave leaves about 86% full
//!   instead of about two-thirds.
//! - Each overflow extent is owned by exactly one cell; removing or replacing the cell frees it.

use crate::error::{Error, Result, corrupt};
use crate::limits::{
    CELL_MAX, HEIGHT_MAX, KEY_INLINE_MAX, KEY_LEN_MAX, LEAF_CELL_MAX, NODE_CAPACITY,
    NODE_HEADER_SIZE, SHARE_SLACK, VALUE_LEN_MAX,
};
use crate::node::{self, Encoded, Node, Part};
use pager::limits::PAGE_PAYLOAD_SIZE;
use pager::{Extent, KIND_USER_MIN, PageId, ReadTxn, WriteTxn, pages_for_payload};
use std::borrow::Cow;
use std::cmp::Ordering;

/// Pager page kind of a leaf.
pub const KIND_LEAF: u8 = KIND_USER_MIN;
/// Pager page kind of a branch.
pub const KIND_BRANCH: u8 = KIND_USER_MIN + 1;
/// Pager page kind of an overflow extent.
pub const KIND_OVERFLOW: u8 = KIND_USER_MIN + 2;

/// Read access to pages and roots: implemented by both transaction kinds.
pub trait PageRead {
    /// The payload of the page or extent at `id`.
    fn page(&self, id: PageId) -> pager::Result<Cow<'_, [u8]>>;
    /// Root slot `slot`.
    fn root(&self, slot: usize) -> u64;
    /// Hints that the page or extent at `id` is read soon (nothing by default).
    fn prefetch(&self, _id: PageId) {}
}

impl PageRead for ReadTxn<'_> {
    fn page(&self, id: PageId) -> pager::Result<Cow<'_, [u8]>> {
        ReadTxn::page(self, id)
    }
    fn prefetch(&self, id: PageId) {
        ReadTxn::prefetch(self, id);
    }
    fn root(&self, slot: usize) -> u64 {
        ReadTxn::root(self, slot)
    }
}

impl PageRead for WriteTxn<'_> {
    fn page(&self, id: PageId) -> pager::Result<Cow<'_, [u8]>> {
        WriteTxn::page(self, id)
    }
    fn root(&self, slot: usize) -> u64 {
        WriteTxn::root(self, slot)
    }
}

/// A handle on the tree stored in one root slot. Holds no state of its own.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Btree {
    slot: usize,
}

/// Re-borrows part of a page with the page's lifetime (copying when the page is owned).
#[inline]
pub(crate) fn sub<'t>(page: &Cow<'t, [u8]>, range: std::ops::Range<usize>) -> Cow<'t, [u8]> {
    match page {
        Cow::Borrowed(bytes) => Cow::Borrowed(&bytes[range]),
        Cow::Owned(bytes) => Cow::Owned(bytes[range].to_vec()),
    }
}

/// Loads the bytes of a key or value part.
pub(crate) fn load<'t, T: PageRead>(
    txn: &'t T,
    page: &Cow<'t, [u8]>,
    part: &Part,
    len: usize,
) -> Result<Cow<'t, [u8]>> {
    match part {
        Part::Inline(range) => Ok(sub(page, range.clone())),
        Part::Overflow(id) => {
            let extent = txn.page(*id)?;
            if extent.len() < len {
                return Err(corrupt(id.0, "overflow extent shorter than its cell says"));
            }
            Ok(sub(&extent, 0..len))
        }
    }
}

/// Compares the key of cell `i` with `probe`.
#[inline]
fn cmp_key<T: PageRead>(txn: &T, node: &Node<'_>, i: usize, probe: &[u8]) -> Result<Ordering> {
    if i < node.count()
        && let Some(key) = node.inline_key(i)
    {
        return Ok(key.cmp(probe));
    }
    let (part, len) = node.key(i)?;
    match part {
        Part::Inline(range) => Ok(node.bytes[range].cmp(probe)),
        Part::Overflow(id) => {
            let extent = txn.page(id)?;
            let key = extent
                .get(..len)
                .ok_or_else(|| corrupt(id.0, "overflow extent shorter than its cell says"))?;
            Ok(key.cmp(probe))
        }
    }
}

/// First slot whose key is `>= probe` (`found` if equal).
pub(crate) fn lower_bound<T: PageRead>(
    txn: &T,
    node: &Node<'_>,
    probe: &[u8],
) -> Result<(usize, bool)> {
    let (mut low, mut high) = (0, node.count());
    while low < high {
        let mid = (low + high) / 2;
        match cmp_key(txn, node, mid, probe)? {
            Ordering::Less => low = mid + 1,
            Ordering::Equal => return Ok((mid, true)),
            Ordering::Greater => high = mid,
        }
    }
    Ok((low, false))
}

/// The child of a branch that covers `probe`: the number of separators `<= probe`.
pub(crate) fn child_index<T: PageRead>(txn: &T, node: &Node<'_>, probe: &[u8]) -> Result<usize> {
    let (i, found) = lower_bound(txn, node, probe)?;
    Ok(if found { i + 1 } else { i })
}

/// Parses the node at `id`, checking its level against the expected one.
pub(crate) fn node_at<'t, T: PageRead>(txn: &'t T, id: PageId) -> Result<Cow<'t, [u8]>> {
    let page = txn.page(id)?;
    Node::parse(&page, id)?;
    Ok(page)
}

/// Extent of an overflow part of `len` bytes, if it is one.
pub(crate) fn overflow_extent(part: &Part, len: usize) -> Option<Extent> {
    match part {
        Part::Overflow(id) => Some(Extent::new(*id, pages_for_payload(len))),
        Part::Inline(_) => None,
    }
}

fn store_overflow(txn: &mut WriteTxn<'_>, bytes: &[u8]) -> Result<Encoded> {
    let id = txn.allocate_filled(KIND_OVERFLOW, bytes)?;
    Ok(Encoded {
        len: len_u32(bytes.len()),
        overflow: true,
        body: id.0.to_le_bytes().to_vec(),
    })
}

fn len_u32(len: usize) -> u32 {
    u32::try_from(len).expect("lengths are checked against the limits")
}

fn inline(bytes: &[u8]) -> Encoded {
    Encoded {
        len: len_u32(bytes.len()),
        overflow: false,
        body: bytes.to_vec(),
    }
}

/// Encodes a branch key: inline when the cell stays under `CELL_MAX`, else overflow.
pub(crate) fn encode_branch_key(txn: &mut WriteTxn<'_>, key: &[u8]) -> Result<Encoded> {
    if 9 + key.len() <= CELL_MAX {
        Ok(inline(key))
    } else {
        store_overflow(txn, key)
    }
}

/// Builds a leaf cell, moving long keys and values to overflow extents.
/// [`encode_leaf_cell`] appended to `out`, without an allocation when the cell is inline.
pub(crate) fn encode_leaf_cell_into(
    txn: &mut WriteTxn<'_>,
    key: &[u8],
    value: &[u8],
    out: &mut Vec<u8>,
) -> Result<()> {
    if 9 + key.len() + value.len() <= LEAF_CELL_MAX {
        node::put_inline_leaf_cell(out, key, value);
    } else {
        out.extend_from_slice(&encode_leaf_cell(txn, key, value)?);
    }
    Ok(())
}

pub(crate) fn encode_leaf_cell(
    txn: &mut WriteTxn<'_>,
    key: &[u8],
    value: &[u8],
) -> Result<Vec<u8>> {
    if 9 + key.len() + value.len() <= LEAF_CELL_MAX {
        return Ok(node::leaf_cell_bytes(&inline(key), &inline(value)));
    }
    let key_part = if key.len() <= KEY_INLINE_MAX {
        inline(key)
    } else {
        store_overflow(txn, key)?
    };
    let value_part = if 9 + key_part.body.len() + value.len() <= LEAF_CELL_MAX {
        inline(value)
    } else {
        store_overflow(txn, value)?
    };
    Ok(node::leaf_cell_bytes(&key_part, &value_part))
}

/// The shortest key `s` with `left < s <= right`.
pub(crate) fn separator(left: &[u8], right: &[u8]) -> Vec<u8> {
    assert!(left < right, "separator needs left < right");
    let common = left.iter().zip(right).take_while(|(a, b)| a == b).count();
    right[..common + 1].to_vec()
}

/// The full key of a leaf cell given as its bytes (`page` names it in errors).
fn cell_key<T: PageRead>(txn: &T, cell: &[u8], page: PageId) -> Result<Vec<u8>> {
    let (part, len) = node::leaf_cell_key(cell, page)?;
    Ok(load(txn, &Cow::Borrowed(cell), &part, len)?.into_owned())
}

/// The full key of cell `i` of `node`.
pub(crate) fn key_bytes<T: PageRead>(
    txn: &T,
    page: &[u8],
    id: PageId,
    i: usize,
) -> Result<Vec<u8>> {
    let (part, len) = Node::parse(page, id)?.key(i)?;
    Ok(load(txn, &Cow::Borrowed(page), &part, len)?.into_owned())
}

/// What inserting into a subtree did.
enum Inserted {
    /// The node (or its copy) took the entry.
    Fitted,
    /// The node split: the separator and the new right node, for the parent to insert.
    Split(Encoded, PageId),
    /// A leaf had no room for `cell` at slot `index` and is unchanged but for a replaced
    /// entry's removal; its parent shares the cells with a neighbour or splits it.
    Full { index: usize, cell: Vec<u8> },
}

enum Removed {
    Kept(PageId),
    Empty,
}

impl Btree {
    /// The tree in root slot `slot` (`slot < pager::limits::ROOT_SLOTS`).
    pub const fn new(slot: usize) -> Btree {
        assert!(slot < pager::limits::ROOT_SLOTS, "root slot out of range");
        Btree { slot }
    }

    /// The root slot this tree uses.
    pub fn slot(&self) -> usize {
        self.slot
    }

    pub(crate) fn root<T: PageRead>(&self, txn: &T) -> Result<Option<PageId>> {
        parse_root(txn.root(self.slot))
    }

    /// The value stored under `key`, if any.
    pub fn get<'t, T: PageRead>(&self, txn: &'t T, key: &[u8]) -> Result<Option<Cow<'t, [u8]>>> {
        get_in(txn, self.root(txn)?, key)
    }

    /// Inserts or replaces `key`. Returns whether the key was already present.
    pub fn insert(&self, txn: &mut WriteTxn<'_>, key: &[u8], value: &[u8]) -> Result<bool> {
        let root = self.root(txn)?;
        let (root, replaced) = insert_in(txn, root, key, value)?;
        txn.set_root(self.slot, u64::from(root.0));
        Ok(replaced)
    }

    /// Removes `key`; returns whether it was present. Freed pages go back to the pager.
    pub fn remove(&self, txn: &mut WriteTxn<'_>, key: &[u8]) -> Result<bool> {
        let root = self.root(txn)?;
        let (root, removed) = remove_in(txn, root, key)?;
        txn.set_root(self.slot, root.map_or(0, |r| u64::from(r.0)));
        Ok(removed)
    }
}

/// Reads a stored root value: `0` is the empty tree.
pub(crate) fn parse_root(raw: u64) -> Result<Option<PageId>> {
    match raw {
        0 => Ok(None),
        root => u32::try_from(root)
            .map(|r| Some(PageId(r)))
            .map_err(|_| corrupt(0, "root holds no page number")),
    }
}

/// Point lookup in the tree rooted at `root`.
pub(crate) fn get_in<'t, T: PageRead>(
    txn: &'t T,
    root: Option<PageId>,
    key: &[u8],
) -> Result<Option<Cow<'t, [u8]>>> {
    let Some(mut id) = root else {
        return Ok(None);
    };
    for _ in 0..HEIGHT_MAX {
        let page = node_at(txn, id)?;
        let node = Node::parse(&page, id)?;
        if !node.is_leaf() {
            id = node.child(child_index(txn, &node, key)?)?;
            continue;
        }
        let (i, found) = lower_bound(txn, &node, key)?;
        if !found {
            return Ok(None);
        }
        let (cell, _) = node.leaf_cell(i)?;
        return load(txn, &page, &cell.value, cell.value_len).map(Some);
    }
    Err(corrupt(id.0, "tree deeper than HEIGHT_MAX"))
}

/// Inserts or replaces `key` in the tree rooted at `root`; returns the new root and whether
/// the key was present.
pub(crate) fn insert_in(
    txn: &mut WriteTxn<'_>,
    root: Option<PageId>,
    key: &[u8],
    value: &[u8],
) -> Result<(PageId, bool)> {
    check_entry_lengths(key, value)?;
    let Some(root) = root else {
        let cell = encode_leaf_cell(txn, key, value)?;
        let leaf = txn.allocate(KIND_LEAF, 1)?;
        let b = txn.page_mut(leaf)?;
        node::init(b, 0, PageId(0));
        assert!(
            node::insert_cell(b, 0, &cell),
            "one cell fits an empty leaf"
        );
        return Ok((leaf, false));
    };
    let mut replaced = false;
    let (new_root, inserted) = insert_at(txn, root, key, value, 0, &mut replaced)?;
    let split = match inserted {
        Inserted::Fitted => None,
        Inserted::Split(sep, right) => Some((sep, right)),
        Inserted::Full { index, cell } => Some(split(txn, new_root, index, cell, 0)?),
    };
    let new_root = match split {
        None => new_root,
        Some((sep, right)) => {
            let level = {
                let page = txn.page(new_root)?;
                Node::parse(&page, new_root)?.level()
            };
            let branch = txn.allocate(KIND_BRANCH, 1)?;
            let b = txn.page_mut(branch)?;
            node::init(b, level + 1, new_root);
            let cell = node::branch_cell_bytes(&sep, right);
            assert!(
                node::insert_cell(b, 0, &cell),
                "one cell fits an empty branch"
            );
            branch
        }
    };
    Ok((new_root, replaced))
}

/// Removes `key` from the tree rooted at `root`; returns the new root (`None` when the tree
/// emptied) and whether the key was present.
pub(crate) fn remove_in(
    txn: &mut WriteTxn<'_>,
    root: Option<PageId>,
    key: &[u8],
) -> Result<(Option<PageId>, bool)> {
    if get_in(txn, root, key)?.is_none() {
        return Ok((root, false));
    }
    let root = root.expect("a found key has a root");
    let mut root = match remove_at(txn, root, key, 0)? {
        Removed::Empty => return Ok((None, true)),
        Removed::Kept(root) => root,
    };
    loop {
        let only_child = {
            let page = txn.page(root)?;
            let node = Node::parse(&page, root)?;
            (!node.is_leaf() && node.count() == 0).then(|| node.child(0))
        };
        match only_child {
            Some(child) => {
                txn.free(Extent::new(root, 1));
                root = child?;
            }
            None => break,
        }
    }
    Ok((Some(root), true))
}

/// Frees every page of the tree rooted at `root`: nodes and overflow extents.
pub(crate) fn free_all_in(txn: &mut WriteTxn<'_>, root: Option<PageId>) -> Result<()> {
    let Some(root) = root else {
        return Ok(());
    };
    let mut stack = vec![(root, 0usize)];
    while let Some((id, depth)) = stack.pop() {
        if depth >= HEIGHT_MAX {
            return Err(corrupt(id.0, "tree deeper than HEIGHT_MAX"));
        }
        let mut extents = Vec::new();
        {
            let page = node_at(txn, id)?;
            let node = Node::parse(&page, id)?;
            if node.is_leaf() {
                for i in 0..node.count() {
                    let (cell, _) = node.leaf_cell(i)?;
                    extents.extend(overflow_extent(&cell.key, cell.key_len));
                    extents.extend(overflow_extent(&cell.value, cell.value_len));
                }
            } else {
                for i in 0..=node.count() {
                    stack.push((node.child(i)?, depth + 1));
                }
                for i in 0..node.count() {
                    let (part, len) = node.key(i)?;
                    extents.extend(overflow_extent(&part, len));
                }
            }
        }
        for extent in extents {
            txn.free(extent);
        }
        txn.free(Extent::new(id, 1));
    }
    Ok(())
}

/// Copies `id` for editing and checks its structure once.
fn edit(txn: &mut WriteTxn<'_>, id: PageId) -> Result<PageId> {
    // Bytes read from the file are validated before they are edited in place; a node this
    // process built (owned, or still in the pager's write-back buffer) is trusted.
    let trusted = txn.is_dirty(id) || txn.is_buffered(id);
    let id = txn.cow(id)?;
    if !trusted {
        let page = txn.page(id)?;
        Node::parse(&page, id)?.validate()?;
    }
    Ok(id)
}

fn insert_at(
    txn: &mut WriteTxn<'_>,
    id: PageId,
    key: &[u8],
    value: &[u8],
    depth: usize,
    replaced: &mut bool,
) -> Result<(PageId, Inserted)> {
    if depth >= HEIGHT_MAX {
        return Err(corrupt(id.0, "tree deeper than HEIGHT_MAX"));
    }
    let id = edit(txn, id)?;
    let (is_leaf, index, found, child, level) = {
        let page = txn.page(id)?;
        let node = Node::parse(&page, id)?;
        if node.is_leaf() {
            let (i, found) = lower_bound(txn, &node, key)?;
            (true, i, found, PageId(0), 0)
        } else {
            let i = child_index(txn, &node, key)?;
            (false, i, false, node.child(i)?, node.level())
        }
    };
    if is_leaf {
        if found {
            *replaced = true;
            // The new cell takes the old one's place when it fits there: a replacement
            // whose cell keeps its size (a record's overflow reference) then costs no
            // compaction of a full leaf.
            let size = free_leaf_cell_extents(txn, id, index)?;
            let cell = encode_leaf_cell(txn, key, value)?;
            let page = txn.page_mut(id)?;
            if cell.len() <= size {
                node::overwrite_cell(page, index, size, &cell);
                return Ok((id, Inserted::Fitted));
            }
            node::remove_cell(page, index, size);
            if node::insert_cell(page, index, &cell) {
                return Ok((id, Inserted::Fitted));
            }
            return Ok((id, Inserted::Full { index, cell }));
        }
        let cell = encode_leaf_cell(txn, key, value)?;
        if node::insert_cell(txn.page_mut(id)?, index, &cell) {
            return Ok((id, Inserted::Fitted));
        }
        return Ok((id, Inserted::Full { index, cell }));
    }
    let (new_child, inserted) = insert_at(txn, child, key, value, depth + 1, replaced)?;
    if new_child != child {
        node::set_child(txn.page_mut(id)?, index, new_child)?;
    }
    let (sep, right) = match inserted {
        Inserted::Fitted => return Ok((id, Inserted::Fitted)),
        Inserted::Split(sep, right) => (sep, right),
        Inserted::Full { index: at, cell } => {
            if share_with_sibling(txn, id, index, new_child, at, &cell)? {
                return Ok((id, Inserted::Fitted));
            }
            split(txn, new_child, at, cell, 0)?
        }
    };
    let cell = node::branch_cell_bytes(&sep, right);
    if node::insert_cell(txn.page_mut(id)?, index, &cell) {
        return Ok((id, Inserted::Fitted));
    }
    split(txn, id, index, cell, level).map(|(sep, right)| (id, Inserted::Split(sep, right)))
}

/// A full leaf's cells plus the one that did not fit are spread over it and a neighbour
/// with room (the one with more), when the pair then keeps `SHARE_SLACK` bytes free and
/// the parent `id` has room for the new separator; returns whether it did. Deferring the
/// split this way keeps leaves fuller under random inserts (a split leaves two halves;
/// sharing fills the neighbour first). `child` is child `index` of `id`, dirty, and `cell`
/// belongs at its slot `at`.
fn share_with_sibling(
    txn: &mut WriteTxn<'_>,
    id: PageId,
    index: usize,
    child: PageId,
    at: usize,
    cell: &[u8],
) -> Result<bool> {
    let (siblings, parent_free) = {
        let page = txn.page(id)?;
        let node = Node::parse(&page, id)?;
        let mut siblings = Vec::with_capacity(2);
        for i in [index.checked_sub(1), Some(index + 1)]
            .into_iter()
            .flatten()
        {
            if i <= node.count() {
                siblings.push((i, node.child(i)?));
            }
        }
        (
            siblings,
            NODE_CAPACITY + NODE_HEADER_SIZE - node.used_bytes(),
        )
    };
    let mut best: Option<(usize, PageId, usize)> = None;
    for (sibling_index, sibling) in siblings {
        let page = txn.page(sibling)?;
        let node = Node::parse(&page, sibling)?;
        if !node.is_leaf() {
            return Err(corrupt(sibling.0, "leaf sibling is not a leaf"));
        }
        let free = NODE_CAPACITY + NODE_HEADER_SIZE - node.used_bytes();
        if best.is_none_or(|(_, _, f)| free > f) {
            best = Some((sibling_index, sibling, free));
        }
    }
    let Some((sibling_index, sibling, free)) = best else {
        return Ok(false);
    };
    if free < cell.len() + 2 + SHARE_SLACK {
        return Ok(false);
    }
    let (left_index, left, right) = if sibling_index < index {
        (sibling_index, sibling, child)
    } else {
        (index, child, sibling)
    };
    // Both leaves are copied out first: the cells are sliced from the copies while the
    // pages are rebuilt in place.
    let pages = [txn.page(left)?.to_vec(), txn.page(right)?.to_vec()];
    let mut cells: Vec<&[u8]> = Vec::with_capacity(64);
    for (page, leaf) in pages.iter().zip([left, right]) {
        let node = Node::parse(page, leaf)?;
        node.leaf_cells(&mut cells)?;
        if leaf == child {
            let position = cells.len() - node.count() + at;
            cells.insert(position, cell);
        }
    }
    let Some(middle) = fitting_split_point(&cells, false, true) else {
        return Ok(false);
    };
    let left_last = cell_key(txn, cells[middle - 1], left)?;
    let right_first = cell_key(txn, cells[middle], right)?;
    let sep = separator(&left_last, &right_first);
    let (old_cell_size, old_overflow) = {
        let page = txn.page(id)?;
        let (old, size) = Node::parse(&page, id)?.branch_cell(left_index)?;
        (size, overflow_extent(&old.key, old.key_len))
    };
    let new_cell_size = 9 + sep.len();
    if new_cell_size > CELL_MAX || parent_free + old_cell_size < new_cell_size {
        return Ok(false);
    }
    let left = edit(txn, left)?;
    let right = edit(txn, right)?;
    node::rebuild(txn.page_mut(left)?, 0, PageId(0), &cells[..middle]);
    node::rebuild(txn.page_mut(right)?, 0, PageId(0), &cells[middle..]);
    node::set_child(txn.page_mut(id)?, left_index, left)?;
    let cell = node::branch_cell_bytes(&inline(&sep), right);
    if old_overflow.is_none() && cell.len() <= old_cell_size {
        node::overwrite_cell(txn.page_mut(id)?, left_index, old_cell_size, &cell);
        return Ok(true);
    }
    remove_branch_cell(txn, id, left_index)?;
    if !node::insert_cell(txn.page_mut(id)?, left_index, &cell) {
        return Err(corrupt(
            id.0,
            "branch lost the room checked for a separator",
        ));
    }
    Ok(true)
}

/// Removes leaf cell `i` of dirty page `id`, freeing its overflow extents.
fn remove_leaf_cell(txn: &mut WriteTxn<'_>, id: PageId, i: usize) -> Result<()> {
    let size = free_leaf_cell_extents(txn, id, i)?;
    node::remove_cell(txn.page_mut(id)?, i, size);
    Ok(())
}

/// Frees the overflow extents of leaf cell `i` of dirty page `id`, which stays in place;
/// returns its size.
fn free_leaf_cell_extents(txn: &mut WriteTxn<'_>, id: PageId, i: usize) -> Result<usize> {
    let (size, extents) = {
        let page = txn.page(id)?;
        let node = Node::parse(&page, id)?;
        let (cell, size) = node.leaf_cell(i)?;
        let key = overflow_extent(&cell.key, cell.key_len);
        let value = overflow_extent(&cell.value, cell.value_len);
        (size, [key, value])
    };
    for extent in extents.into_iter().flatten() {
        txn.free(extent);
    }
    Ok(size)
}

/// Removes branch cell `i` of dirty page `id` (its key and the child right of it).
fn remove_branch_cell(txn: &mut WriteTxn<'_>, id: PageId, i: usize) -> Result<()> {
    let (size, extent) = {
        let page = txn.page(id)?;
        let node = Node::parse(&page, id)?;
        let (cell, size) = node.branch_cell(i)?;
        (size, overflow_extent(&cell.key, cell.key_len))
    };
    if let Some(extent) = extent {
        txn.free(extent);
    }
    node::remove_cell(txn.page_mut(id)?, i, size);
    Ok(())
}

/// Splits dirty node `id` after inserting `cell` at `index` into its cells; returns the
/// separator and the new right node.
fn split(
    txn: &mut WriteTxn<'_>,
    id: PageId,
    index: usize,
    cell: Vec<u8>,
    level: u8,
) -> Result<(Encoded, PageId)> {
    // The node is copied out first: its cells are sliced from the copy while it is
    // rebuilt in place.
    let page = txn.page(id)?.to_vec();
    let node = Node::parse(&page, id)?;
    let (mut cells, child0) = (node.cells()?, node.child(0)?);
    let appending = index == cells.len();
    cells.insert(index, &cell);
    let at = split_point(&cells, appending, level == 0);
    let right_cells = cells.split_off(at);
    let kind = if level == 0 { KIND_LEAF } else { KIND_BRANCH };
    let right = txn.allocate(kind, 1)?;
    if level == 0 {
        node::rebuild(txn.page_mut(id)?, 0, PageId(0), &cells);
        node::rebuild(txn.page_mut(right)?, 0, PageId(0), &right_cells);
        let left_last = key_bytes(txn, &txn.page(id)?, id, cells.len() - 1)?;
        let right_first = key_bytes(txn, &txn.page(right)?, right, 0)?;
        let sep = separator(&left_last, &right_first);
        return Ok((encode_branch_key(txn, &sep)?, right));
    }
    // A branch: the first right cell moves up; its child becomes the right node's child0.
    let middle = right_cells[0];
    let sep = Encoded::from_branch_cell(middle);
    let right_child0 = Encoded::branch_child(middle);
    node::rebuild(txn.page_mut(id)?, level, child0, &cells);
    node::rebuild(txn.page_mut(right)?, level, right_child0, &right_cells[1..]);
    Ok((sep, right))
}

/// Where to split `cells`: left-full when appending at the end (sequential inserts fill
/// nodes), else the point nearest the byte midpoint at which both halves fit; both sides
/// non-empty (and for a branch the right side keeps at least one cell to push up besides
/// its own). A plain midpoint walk is not enough once leaf cells reach half a node: with
/// a small cell first and large ones after, it stops early and leaves the right half
/// overfull.
fn split_point<C: AsRef<[u8]>>(cells: &[C], appending: bool, leaf: bool) -> usize {
    fitting_split_point(cells, appending, leaf)
        .expect("cell limits leave a split point where both halves fit")
}

/// `split_point`, or `None` when no split point leaves both halves fitting (cells of two
/// nodes can be too many for two).
fn fitting_split_point<C: AsRef<[u8]>>(cells: &[C], appending: bool, leaf: bool) -> Option<usize> {
    let minimum_right = if leaf { 1 } else { 2 };
    let high = cells.len().checked_sub(minimum_right)?;
    if appending && node::cells_size(&cells[..high]) <= NODE_CAPACITY {
        return Some(high);
    }
    let total = node::cells_size(cells);
    let mut best: Option<(usize, usize)> = None;
    let mut left = 0;
    for at in 1..=high {
        left += cells[at - 1].as_ref().len() + 2;
        // A branch's cell `at` moves up to the parent: it is in neither half.
        let moved = if leaf {
            0
        } else {
            cells[at].as_ref().len() + 2
        };
        let right = total - left - moved;
        if left <= NODE_CAPACITY && right <= NODE_CAPACITY {
            let distance = left.abs_diff(right);
            if best.is_none_or(|(_, d)| distance < d) {
                best = Some((at, distance));
            }
        }
    }
    best.map(|(at, _)| at)
}

/// A leaf under a quarter full after a delete merges with a neighbour (the one to its left,
/// else to its right) when both fit in half a page, leaving room for inserts before a
/// re-split; the right one is freed and its separator removed from the parent `id`.
/// Branches are not merged: they are a small share of the pages, and a branch with a
/// single child is legal.
fn merge_leaf(txn: &mut WriteTxn<'_>, id: PageId, index: usize, child: PageId) -> Result<()> {
    let quarter = PAGE_PAYLOAD_SIZE / 4;
    let (sibling_index, left_index) = if index > 0 {
        (index - 1, index - 1)
    } else {
        (1, 0)
    };
    let sibling = {
        let page = txn.page(child)?;
        let node = Node::parse(&page, child)?;
        if !node.is_leaf() || node.used_bytes() >= quarter {
            return Ok(());
        }
        let parent = txn.page(id)?;
        Node::parse(&parent, id)?.child(sibling_index)?
    };
    let (left, right) = if index > 0 {
        (sibling, child)
    } else {
        (child, sibling)
    };
    let cells = {
        let mut cells = Vec::new();
        for leaf in [left, right] {
            let page = txn.page(leaf)?;
            let node = Node::parse(&page, leaf)?;
            if !node.is_leaf() {
                return Err(corrupt(leaf.0, "leaf sibling is not a leaf"));
            }
            for i in 0..node.count() {
                cells.push(node.cell_bytes(i)?.to_vec());
            }
        }
        cells
    };
    if crate::limits::NODE_HEADER_SIZE + node::cells_size(&cells) > 2 * quarter {
        return Ok(());
    }
    let left_copy = edit(txn, left)?;
    node::rebuild(txn.page_mut(left_copy)?, 0, PageId(0), &cells);
    node::set_child(txn.page_mut(id)?, left_index, left_copy)?;
    txn.free(Extent::new(right, 1));
    remove_branch_cell(txn, id, left_index)
}

fn remove_at(txn: &mut WriteTxn<'_>, id: PageId, key: &[u8], depth: usize) -> Result<Removed> {
    if depth >= HEIGHT_MAX {
        return Err(corrupt(id.0, "tree deeper than HEIGHT_MAX"));
    }
    let id = edit(txn, id)?;
    let (is_leaf, index, child, count) = {
        let page = txn.page(id)?;
        let node = Node::parse(&page, id)?;
        if node.is_leaf() {
            let (i, found) = lower_bound(txn, &node, key)?;
            if !found {
                return Err(corrupt(
                    id.0,
                    "key found by lookup is missing on the write path",
                ));
            }
            (true, i, PageId(0), node.count())
        } else {
            let i = child_index(txn, &node, key)?;
            (false, i, node.child(i)?, node.count())
        }
    };
    if is_leaf {
        remove_leaf_cell(txn, id, index)?;
        if count == 1 {
            txn.free(Extent::new(id, 1));
            return Ok(Removed::Empty);
        }
        return Ok(Removed::Kept(id));
    }
    match remove_at(txn, child, key, depth + 1)? {
        Removed::Kept(new_child) => {
            if new_child != child {
                node::set_child(txn.page_mut(id)?, index, new_child)?;
            }
            if count > 0 {
                merge_leaf(txn, id, index, new_child)?;
            }
        }
        Removed::Empty if count == 0 => {
            txn.free(Extent::new(id, 1));
            return Ok(Removed::Empty);
        }
        Removed::Empty if index == 0 => {
            let next = {
                let page = txn.page(id)?;
                Node::parse(&page, id)?.child(1)?
            };
            node::set_child(txn.page_mut(id)?, 0, next)?;
            remove_branch_cell(txn, id, 0)?;
        }
        Removed::Empty => remove_branch_cell(txn, id, index - 1)?,
    }
    Ok(Removed::Kept(id))
}

/// Refuses a key or value longer than the tree stores (insert and bulk load alike).
pub(crate) fn check_entry_lengths(key: &[u8], value: &[u8]) -> Result<()> {
    if key.len() > KEY_LEN_MAX {
        return Err(Error::KeyTooLong {
            len: key.len(),
            max: KEY_LEN_MAX,
        });
    }
    if value.len() > VALUE_LEN_MAX {
        return Err(Error::ValueTooLong {
            len: value.len(),
            max: VALUE_LEN_MAX,
        });
    }
    Ok(())
}
