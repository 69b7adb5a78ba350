//! The write-back buffer: page and extent images a commit published but has not yet written.
//!
//! A commit used to write every page it changed through the seam at once, so that readers
//! could find it in the map. For small transactions that is most of the cost outside the
//! WAL's fdatasync: a single-document update rewrites a leaf, its branches and the catalog
//! leaf, four scattered 4 KiB `pwrite`s, and most of those pages are replaced again by the
//! next commit; an indexed `updateMany` of 66 large documents also wrote 66 new extents
//! before its log record, the kernel copying each into the page cache on the committing
//! thread. Durability never depended on those writes (the WAL holds the change until a
//! checkpoint), so a small commit's images now stay here, readers look here before the
//! map, and the images are written in page order, coalesced, by the next checkpoint (or
//! when the buffer passes its bound). An image replaced before then is never written.
//!
//! Invariants:
//! - An entry at page `p` holds exactly the sealed image (one page or an extent) the
//!   latest commit published at `p`: a commit inserts before it publishes its snapshot, and
//!   every write of an image through the seam first removes the entries its pages overlap
//!   (`forget`), so a flush can never write an old image over newer bytes.
//! - Entries never overlap: `insert` and `forget` remove every entry sharing a page with
//!   the range they are given (an extent freed and its pages reused is the case they cover).
//!   So only the last entry starting before a range can reach into it.
//! - An entry is removed only after its bytes are in the file (`flush`), so a reader that
//!   misses here finds the same bytes through the map.
//! - A stale entry (its pages since freed) is harmless: it is written to free pages.

use crate::limits::PAGE_SIZE;
use crate::page::PageId;
use parking_lot::RwLock;
use std::collections::BTreeMap;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

/// Published images not yet written to the file, by first page.
#[derive(Debug, Default)]
pub(crate) struct WriteBack {
    pages: RwLock<BTreeMap<u32, Arc<Box<[u8]>>>>,
    /// Bytes held in `pages`, readable without the lock (readers skip the lock when zero).
    bytes: AtomicUsize,
}

/// The pages an image at `start` covers.
fn end_of(start: u32, image: &[u8]) -> u64 {
    u64::from(start) + (image.len() / PAGE_SIZE) as u64
}

/// Removes from `map` every entry sharing a page with `start .. start + pages`; returns the
/// bytes removed.
fn remove_overlapping(map: &mut BTreeMap<u32, Arc<Box<[u8]>>>, start: u32, pages: u32) -> usize {
    let mut removed = 0;
    // Entries do not overlap, so only the last one starting before `start` can reach it.
    if let Some((&before, image)) = map.range(..start).next_back()
        && end_of(before, image) > u64::from(start)
    {
        removed += map.remove(&before).map_or(0, |image| image.len());
    }
    let end = start.saturating_add(pages);
    let inside: Vec<u32> = map.range(start..end).map(|(&id, _)| id).collect();
    for id in inside {
        removed += map.remove(&id).map_or(0, |image| image.len());
    }
    removed
}

impl WriteBack {
    /// The image published at `id`, if it is still waiting to be written.
    pub(crate) fn get(&self, id: PageId) -> Option<Arc<Box<[u8]>>> {
        if self.bytes.load(Ordering::Acquire) == 0 {
            return None;
        }
        self.pages.read().get(&id.0).cloned()
    }

    /// Holds the sealed `image` (a page or an extent) for page `id`, replacing every older
    /// entry it overlaps.
    pub(crate) fn insert(&self, id: PageId, image: Box<[u8]>) {
        debug_assert!(
            !image.is_empty() && image.len().is_multiple_of(PAGE_SIZE),
            "whole pages only"
        );
        let pages = u32::try_from(image.len() / PAGE_SIZE).expect("extent pages fit u32");
        let mut map = self.pages.write();
        let removed = remove_overlapping(&mut map, id.0, pages);
        let added = image.len();
        map.insert(id.0, Arc::new(image));
        let held = self.bytes.load(Ordering::Relaxed) - removed + added;
        self.bytes.store(held, Ordering::Release);
    }

    /// Drops the entries overlapping pages `start .. start + pages`, which are about to be
    /// written with other content through the seam.
    pub(crate) fn forget(&self, start: PageId, pages: u32) {
        if self.bytes.load(Ordering::Acquire) == 0 {
            return;
        }
        let mut map = self.pages.write();
        let removed = remove_overlapping(&mut map, start.0, pages);
        let held = self.bytes.load(Ordering::Relaxed) - removed;
        self.bytes.store(held, Ordering::Release);
    }

    /// Whether page `id` is held (its image came from a commit of this process).
    pub(crate) fn contains(&self, id: PageId) -> bool {
        self.bytes.load(Ordering::Acquire) != 0 && self.pages.read().contains_key(&id.0)
    }

    /// Bytes held.
    pub(crate) fn bytes(&self) -> usize {
        self.bytes.load(Ordering::Acquire)
    }

    /// Every entry, in page order (the caller writes them, then calls `clear`).
    pub(crate) fn sorted(&self) -> Vec<(u32, Arc<Box<[u8]>>)> {
        self.pages
            .read()
            .iter()
            .map(|(&id, image)| (id, Arc::clone(image)))
            .collect()
    }

    /// Drops every entry (after `flush` wrote them all).
    pub(crate) fn clear(&self) {
        let mut pages = self.pages.write();
        pages.clear();
        self.bytes.store(0, Ordering::Release);
    }
}
