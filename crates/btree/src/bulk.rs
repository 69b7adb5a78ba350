//! Bulk loading from sorted input: leaves packed left to right, then each branch level
//! built bottom-up from the level below (for index builds).
//!
//! Invariants:
//! - Input keys must be strictly increasing; the first violation is an `Unsorted` error.
//! - Nodes are filled to `BULK_FILL_BYTES` (not to the brim), so the first inserts after a
//!   load do not split every node.
//! - Separators between neighbouring nodes are the shortest keys between them, the same
//!   rule `insert` uses.

use crate::error::{Error, Result};
use crate::limits::{BULK_FILL_BYTES, NODE_HEADER_SIZE};
use crate::node;
use crate::tree::{
    Btree, KIND_BRANCH, KIND_LEAF, encode_branch_key, encode_leaf_cell_into, separator,
};
use pager::{PageId, WriteTxn};

/// A finished node of the level being built: its page and the key range below it.
struct Built {
    id: PageId,
    first: Vec<u8>,
    last: Vec<u8>,
}

/// Accumulates cells for one node at a time, in one flat buffer (no allocation per cell;
/// the buffers are reused from node to node).
struct Pending {
    flat: Vec<u8>,
    ends: Vec<usize>,
    bytes: usize,
    first: Vec<u8>,
    last: Vec<u8>,
    child0: PageId,
}

impl Pending {
    fn new() -> Pending {
        Pending {
            flat: Vec::new(),
            ends: Vec::new(),
            bytes: NODE_HEADER_SIZE,
            first: Vec::new(),
            last: Vec::new(),
            child0: PageId(0),
        }
    }

    fn is_empty(&self) -> bool {
        self.ends.is_empty()
    }

    fn count(&self) -> usize {
        self.ends.len()
    }

    fn fits(&self, cell: &[u8]) -> bool {
        self.bytes + cell.len() + 2 <= BULK_FILL_BYTES
    }

    fn push(&mut self, cell: &[u8]) {
        self.flat.extend_from_slice(cell);
        self.ends.push(self.flat.len());
        self.bytes += cell.len() + 2;
    }

    fn flush(&mut self, txn: &mut WriteTxn<'_>, level: u8, out: &mut Vec<Built>) -> Result<()> {
        let kind = if level == 0 { KIND_LEAF } else { KIND_BRANCH };
        let id = txn.allocate(kind, 1)?;
        let mut start = 0;
        let cells: Vec<&[u8]> = self
            .ends
            .iter()
            .map(|&end| {
                let cell = &self.flat[start..end];
                start = end;
                cell
            })
            .collect();
        node::rebuild(txn.page_mut(id)?, level, self.child0, &cells);
        out.push(Built {
            id,
            first: std::mem::take(&mut self.first),
            last: std::mem::take(&mut self.last),
        });
        self.flat.clear();
        self.ends.clear();
        self.bytes = NODE_HEADER_SIZE;
        self.child0 = PageId(0);
        Ok(())
    }
}

impl Btree {
    /// Loads `entries` (strictly increasing keys) into this empty tree; returns how many.
    pub fn bulk_load<K, V, I>(&self, txn: &mut WriteTxn<'_>, entries: I) -> Result<u64>
    where
        K: AsRef<[u8]>,
        V: AsRef<[u8]>,
        I: IntoIterator<Item = (K, V)>,
    {
        if self.root(txn)?.is_some() {
            return Err(Error::NotEmpty);
        }
        let (root, count) = bulk_load_in(txn, entries)?;
        if let Some(root) = root {
            txn.set_root(self.slot(), u64::from(root.0));
        }
        Ok(count)
    }
}

/// Builds a tree from `entries` (strictly increasing keys); returns its root (`None` when
/// there were no entries) and the entry count.
pub(crate) fn bulk_load_in<K, V, I>(
    txn: &mut WriteTxn<'_>,
    entries: I,
) -> Result<(Option<PageId>, u64)>
where
    K: AsRef<[u8]>,
    V: AsRef<[u8]>,
    I: IntoIterator<Item = (K, V)>,
{
    {
        let mut level_nodes = Vec::new();
        let mut pending = Pending::new();
        let mut count = 0u64;
        let mut cell = Vec::new();
        for (key, value) in entries {
            let (key, value) = (key.as_ref(), value.as_ref());
            crate::tree::check_entry_lengths(key, value)?;
            let previous = (!pending.is_empty()).then_some(pending.last.as_slice());
            let previous = previous.or(level_nodes.last().map(|b: &Built| b.last.as_slice()));
            if previous.is_some_and(|p| p >= key) {
                return Err(Error::Unsorted { index: count });
            }
            cell.clear();
            encode_leaf_cell_into(txn, key, value, &mut cell)?;
            if !pending.is_empty() && !pending.fits(&cell) {
                pending.flush(txn, 0, &mut level_nodes)?;
            }
            if pending.is_empty() {
                pending.first.clear();
                pending.first.extend_from_slice(key);
            }
            pending.last.clear();
            pending.last.extend_from_slice(key);
            pending.push(&cell);
            count += 1;
        }
        if count == 0 {
            return Ok((None, 0));
        }
        pending.flush(txn, 0, &mut level_nodes)?;
        let mut level = 0u8;
        while level_nodes.len() > 1 {
            level += 1;
            level_nodes = build_level(txn, level, level_nodes)?;
        }
        let root = level_nodes.first().expect("at least one node").id;
        Ok((Some(root), count))
    }
}

fn build_level(txn: &mut WriteTxn<'_>, level: u8, children: Vec<Built>) -> Result<Vec<Built>> {
    let mut out = Vec::new();
    let mut pending = Pending::new();
    let mut previous_last: Option<Vec<u8>> = None;
    let mut started = false;
    for child in children {
        if !started {
            pending.child0 = child.id;
            pending.first = child.first;
            pending.last = child.last.clone();
            previous_last = Some(child.last);
            started = true;
            continue;
        }
        let left = previous_last.take().expect("a previous child");
        let sep = encode_branch_key(txn, &separator(&left, &child.first))?;
        let cell = node::branch_cell_bytes(&sep, child.id);
        if !pending.fits(&cell) && pending.count() >= 2 {
            if sep.overflow {
                // The separator is not used: its child starts the next node instead.
                let page = PageId(u32::from_le_bytes([
                    sep.body[0],
                    sep.body[1],
                    sep.body[2],
                    sep.body[3],
                ]));
                txn.free(pager::Extent::new(
                    page,
                    pager::pages_for_payload(sep.len as usize),
                ));
            }
            pending.flush(txn, level, &mut out)?;
            pending.child0 = child.id;
            pending.first = child.first;
        } else {
            pending.push(&cell);
        }
        pending.last = child.last.clone();
        previous_last = Some(child.last);
    }
    pending.flush(txn, level, &mut out)?;
    Ok(out)
}
