//! The write-back buffer: single-page images a commit published but has not yet written.
//!
//! A commit used to write every page it changed through the seam at once, so that readers
//! could find it in the map. For small transactions that is most of the cost outside the
//! WAL's fdatasync: a single-document update rewrites a leaf, its branches and the catalog
//! leaf, four scattered 4 KiB `pwrite`s, and most of those pages are replaced again by the
//! next commit. Durability never depended on those writes (the WAL holds the change until a
//! checkpoint), so single-page images now stay here, readers look here before the map, and
//! the pages are written in page order, coalesced, by the next checkpoint (or when the
//! buffer passes its bound). A page replaced before then is never written at all.
//!
//! Invariants:
//! - An entry at page `p` holds exactly the sealed image the latest commit published at
//!   `p`: a commit inserts before it publishes its snapshot, and every write of an image
//!   through the seam first removes the entries its pages cover (`forget`), so a flush can
//!   never write an old image over newer bytes.
//! - Entries are only ever single pages, so an entry covers only its own page number.
//! - An entry is removed only after its bytes are in the file (`flush`), so a reader that
//!   misses here finds the same bytes through the map.
//! - A stale entry (its page since freed) is harmless: it is written to a free page.

use crate::limits::PAGE_SIZE;
use crate::page::PageId;
use parking_lot::RwLock;
use std::collections::HashMap;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

/// Published single-page images not yet written to the file.
#[derive(Debug, Default)]
pub(crate) struct WriteBack {
    pages: RwLock<HashMap<u32, Arc<Box<[u8]>>>>,
    /// Entries in `pages`, readable without the lock (readers skip the lock when zero).
    len: AtomicUsize,
}

impl WriteBack {
    /// The image published at `id`, if it is still waiting to be written.
    pub(crate) fn get(&self, id: PageId) -> Option<Arc<Box<[u8]>>> {
        if self.len.load(Ordering::Acquire) == 0 {
            return None;
        }
        self.pages.read().get(&id.0).cloned()
    }

    /// Holds the sealed single-page `image` for page `id` (replacing any older one).
    pub(crate) fn insert(&self, id: PageId, image: Box<[u8]>) {
        debug_assert_eq!(image.len(), PAGE_SIZE, "only single pages are buffered");
        let mut pages = self.pages.write();
        pages.insert(id.0, Arc::new(image));
        self.len.store(pages.len(), Ordering::Release);
    }

    /// Drops the entries for pages `start .. start + pages`, which are about to be written
    /// with other content through the seam.
    pub(crate) fn forget(&self, start: PageId, pages: u32) {
        if self.len.load(Ordering::Acquire) == 0 {
            return;
        }
        let mut map = self.pages.write();
        if u64::from(pages) > map.len() as u64 {
            let end = start.0.saturating_add(pages);
            map.retain(|&id, _| !(start.0..end).contains(&id));
        } else {
            for id in start.0..start.0.saturating_add(pages) {
                map.remove(&id);
            }
        }
        self.len.store(map.len(), Ordering::Release);
    }

    /// Whether page `id` is held (its image came from a commit of this process).
    pub(crate) fn contains(&self, id: PageId) -> bool {
        self.len.load(Ordering::Acquire) != 0 && self.pages.read().contains_key(&id.0)
    }

    /// Bytes held.
    pub(crate) fn bytes(&self) -> usize {
        self.len.load(Ordering::Acquire) * PAGE_SIZE
    }

    /// Every entry, in page order (the caller writes them, then calls `clear`).
    pub(crate) fn sorted(&self) -> Vec<(u32, Arc<Box<[u8]>>)> {
        let mut entries: Vec<(u32, Arc<Box<[u8]>>)> = self
            .pages
            .read()
            .iter()
            .map(|(&id, image)| (id, Arc::clone(image)))
            .collect();
        entries.sort_unstable_by_key(|&(id, _)| id);
        entries
    }

    /// Drops every entry (after `flush` wrote them all).
    pub(crate) fn clear(&self) {
        let mut pages = self.pages.write();
        pages.clear();
        self.len.store(0, Ordering::Release);
    }
}
