//! `Tree`: a B+tree whose root page number the caller stores (in a catalog entry, say)
//! rather than a pager root slot, so a database can hold any number of trees.
//!
//! Invariants:
//! - A `Tree` is only its root page number (`0` for empty); every write method updates it,
//!   and the caller must persist the new value in the same write transaction.
//! - `destroy` frees every page the tree reaches, so dropping a collection returns its space.

use crate::bulk::bulk_load_in;
use crate::cursor::{Range, range_in};
use crate::error::{Error, Result};
use crate::tree::{PageRead, free_all_in, get_in, insert_in, parse_root, remove_in};
use crate::verify::{TreeReport, verify_in};
use pager::WriteTxn;
use std::borrow::Cow;
use std::ops::Bound;

/// A tree named by its root page number, which the caller keeps.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct Tree {
    root: u64,
}

impl Tree {
    /// The empty tree.
    pub const EMPTY: Tree = Tree { root: 0 };

    /// The tree whose root is `root` (a value earlier read from [`Tree::root`]).
    pub const fn from_root(root: u64) -> Tree {
        Tree { root }
    }

    /// The root page number to persist (`0` when empty).
    pub const fn root(&self) -> u64 {
        self.root
    }

    /// Whether the tree has no entries.
    pub const fn is_empty(&self) -> bool {
        self.root == 0
    }

    fn set(&mut self, root: Option<pager::PageId>) {
        self.root = root.map_or(0, |r| u64::from(r.0));
    }

    /// The value stored under `key`, if any.
    pub fn get<'t, T: PageRead>(&self, txn: &'t T, key: &[u8]) -> Result<Option<Cow<'t, [u8]>>> {
        get_in(txn, parse_root(self.root)?, key)
    }

    /// Inserts or replaces `key`. Returns whether the key was already present.
    pub fn insert(&mut self, txn: &mut WriteTxn<'_>, key: &[u8], value: &[u8]) -> Result<bool> {
        let (root, replaced) = insert_in(txn, parse_root(self.root)?, key, value)?;
        self.set(Some(root));
        Ok(replaced)
    }

    /// Removes `key`; returns whether it was present.
    pub fn remove(&mut self, txn: &mut WriteTxn<'_>, key: &[u8]) -> Result<bool> {
        let (root, removed) = remove_in(txn, parse_root(self.root)?, key)?;
        self.set(root);
        Ok(removed)
    }

    /// Entries with keys within `(lower, upper)`, in key order (reverse with `.rev()`).
    pub fn range<'t, T: PageRead>(
        &self,
        txn: &'t T,
        lower: Bound<&[u8]>,
        upper: Bound<&[u8]>,
    ) -> Result<Range<'t, T>> {
        Ok(range_in(txn, parse_root(self.root)?, lower, upper))
    }

    /// Every entry in key order.
    pub fn iter<'t, T: PageRead>(&self, txn: &'t T) -> Result<Range<'t, T>> {
        self.range(txn, Bound::Unbounded, Bound::Unbounded)
    }

    /// Loads `entries` (strictly increasing keys) into this empty tree; returns how many.
    pub fn bulk_load<K, V, I>(&mut self, txn: &mut WriteTxn<'_>, entries: I) -> Result<u64>
    where
        K: AsRef<[u8]>,
        V: AsRef<[u8]>,
        I: IntoIterator<Item = (K, V)>,
    {
        if !self.is_empty() {
            return Err(Error::NotEmpty);
        }
        let (root, count) = bulk_load_in(txn, entries)?;
        self.set(root);
        Ok(count)
    }

    /// Walks the whole tree and checks its invariants.
    pub fn verify<T: PageRead>(&self, txn: &T) -> Result<TreeReport> {
        verify_in(txn, parse_root(self.root)?)
    }

    /// Frees every page of the tree and leaves it empty.
    pub fn destroy(&mut self, txn: &mut WriteTxn<'_>) -> Result<()> {
        free_all_in(txn, parse_root(self.root)?)?;
        self.root = 0;
        Ok(())
    }
}
