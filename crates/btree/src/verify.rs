//! `Btree::verify`: key order, node fill, uniform depth and reachability of every page.
//!
//! Invariants:
//! - Every key lies within the bounds its ancestors' separators give it, and keys in a node
//!   strictly increase.
//! - Every leaf is at the same depth, every node's level is its parent's minus one.
//! - No node except the root is empty (a leaf has an entry; a branch has a child, always).
//! - Every page the tree reaches (nodes, overflow extents) is listed once, with its length,
//!   for `Pager::verify` to check ownership against free space.

use crate::error::{Result, corrupt};
use crate::limits::HEIGHT_MAX;
use crate::node::Node;
use crate::tree::{Btree, PageRead, key_bytes, node_at, overflow_extent};
use pager::limits::PAGE_PAYLOAD_SIZE;
use pager::{Extent, PageId};

/// What `verify` found.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct TreeReport {
    /// Entries in the tree.
    pub entries: u64,
    /// Levels (0 for an empty tree, 1 for a lone leaf).
    pub height: usize,
    /// Leaf pages.
    pub leaf_pages: u64,
    /// Branch pages.
    pub branch_pages: u64,
    /// Pages in overflow extents.
    pub overflow_pages: u64,
    /// Every extent the tree reaches.
    pub extents: Vec<Extent>,
    /// Bytes in use across all nodes divided by their capacity.
    pub fill: f64,
    /// Bytes of keys and values stored.
    pub payload_bytes: u64,
}

struct Walk {
    report: TreeReport,
    used_bytes: u64,
    leaf_depth: Option<usize>,
}

impl Btree {
    /// Walks the whole tree and checks its invariants.
    pub fn verify<T: PageRead>(&self, txn: &T) -> Result<TreeReport> {
        verify_in(txn, self.root(txn)?)
    }
}

/// Checks the tree rooted at `root`.
pub(crate) fn verify_in<T: PageRead>(txn: &T, root: Option<PageId>) -> Result<TreeReport> {
    {
        let mut walk = Walk {
            report: TreeReport::default(),
            used_bytes: 0,
            leaf_depth: None,
        };
        if let Some(root) = root {
            let level = {
                let page = node_at(txn, root)?;
                Node::parse(&page, root)?.level()
            };
            walk_node(txn, root, None, None, usize::from(level), 0, &mut walk)?;
            walk.report.height = walk.leaf_depth.map_or(0, |d| d + 1);
        }
        let nodes = walk.report.leaf_pages + walk.report.branch_pages;
        if nodes > 0 {
            walk.report.fill = walk.used_bytes as f64 / (nodes as f64 * PAGE_PAYLOAD_SIZE as f64);
        }
        Ok(walk.report)
    }
}

fn walk_node<T: PageRead>(
    txn: &T,
    id: PageId,
    lower: Option<&[u8]>,
    upper: Option<&[u8]>,
    level: usize,
    depth: usize,
    walk: &mut Walk,
) -> Result<()> {
    if depth >= HEIGHT_MAX {
        return Err(corrupt(id.0, "tree deeper than HEIGHT_MAX"));
    }
    let page = node_at(txn, id)?;
    let node = Node::parse(&page, id)?;
    node.validate()?;
    if usize::from(node.level()) != level {
        return Err(corrupt(id.0, "node level does not match its depth"));
    }
    walk.report.extents.push(Extent::new(id, 1));
    walk.used_bytes += node.used_bytes() as u64;
    let count = node.count();
    let mut keys = Vec::with_capacity(count);
    for i in 0..count {
        let key = key_bytes(txn, &page, id, i)?;
        if keys
            .last()
            .is_some_and(|previous: &Vec<u8>| previous >= &key)
        {
            return Err(corrupt(id.0, "keys out of order in a node"));
        }
        if lower.is_some_and(|l| key.as_slice() < l) || upper.is_some_and(|u| key.as_slice() >= u) {
            return Err(corrupt(id.0, "key outside its parent's separators"));
        }
        keys.push(key);
    }
    if node.is_leaf() {
        if depth > 0 && count == 0 {
            return Err(corrupt(id.0, "empty non-root leaf"));
        }
        if *walk.leaf_depth.get_or_insert(depth) != depth {
            return Err(corrupt(id.0, "leaves at different depths"));
        }
        walk.report.leaf_pages += 1;
        walk.report.entries += count as u64;
        for i in 0..count {
            let (cell, _) = node.leaf_cell(i)?;
            walk.report.payload_bytes += (cell.key_len + cell.value_len) as u64;
            for (part, len) in [(&cell.key, cell.key_len), (&cell.value, cell.value_len)] {
                if let Some(extent) = overflow_extent(part, len) {
                    check_overflow(txn, extent, len)?;
                    walk.report.overflow_pages += u64::from(extent.pages);
                    walk.report.extents.push(extent);
                }
            }
        }
        return Ok(());
    }
    if level == 0 {
        return Err(corrupt(id.0, "branch at leaf level"));
    }
    walk.report.branch_pages += 1;
    for i in 0..count {
        let (cell, _) = node.branch_cell(i)?;
        if let Some(extent) = overflow_extent(&cell.key, cell.key_len) {
            check_overflow(txn, extent, cell.key_len)?;
            walk.report.overflow_pages += u64::from(extent.pages);
            walk.report.extents.push(extent);
        }
    }
    for i in 0..=count {
        let child_lower = if i == 0 {
            lower
        } else {
            Some(keys[i - 1].as_slice())
        };
        let child_upper = if i == count {
            upper
        } else {
            Some(keys[i].as_slice())
        };
        let child = node.child(i)?;
        walk_node(
            txn,
            child,
            child_lower,
            child_upper,
            level - 1,
            depth + 1,
            walk,
        )?;
    }
    Ok(())
}

fn check_overflow<T: PageRead>(txn: &T, extent: Extent, len: usize) -> Result<()> {
    let payload = txn.page(extent.start)?;
    if payload.len() + pager::limits::PAGE_HEADER_SIZE != extent.bytes() || payload.len() < len {
        return Err(corrupt(extent.start.0, "overflow extent length"));
    }
    Ok(())
}
