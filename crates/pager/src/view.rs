//! Snapshots and page reads: one mapping generation plus the bits of pages already verified.
//!
//! Invariants:
//! - A snapshot only names pages below its `page_count`, and its view (when mapped) covers
//!   at least `page_count` pages, so a read through it never leaves the mapping.
//! - A page is handed out only after its checksum verified, either now or earlier through a
//!   view whose bit was set by a successful check, or after this process wrote it: the
//!   writer clears the bit before it rewrites a page and sets it once the write of the
//!   sealed image it checksummed itself has succeeded (its bytes were just checksummed, so
//!   the first reader need not hash them again; a new process verifies them on first read,
//!   and `verify` re-checks every page).

use crate::error::{Result, corrupt};
use crate::limits::{HEADER_PAGES, PAGE_HEADER_SIZE, PAGE_SIZE, ROOT_SLOTS};
use crate::map::Mapping;
use crate::page::{self, PageId};
use crate::writeback::WriteBack;
use std::borrow::Cow;
use std::sync::atomic::{AtomicU64, Ordering};
use wal::Storage;

/// One mapping of the file and the verified-page bits for it.
#[derive(Debug)]
pub(crate) struct View {
    mapping: Mapping,
    verified: Box<[AtomicU64]>,
}

impl View {
    /// Maps `pages` pages of `file`, carrying over the verified bits of `previous`.
    pub(crate) fn new(
        file: &std::fs::File,
        pages: u64,
        previous: Option<&View>,
    ) -> std::io::Result<View> {
        let len = usize::try_from(pages * PAGE_SIZE as u64)
            .map_err(|_| std::io::Error::from(std::io::ErrorKind::OutOfMemory))?;
        let mapping = Mapping::new(file, len)?;
        let words = usize::try_from(pages.div_ceil(64)).unwrap_or(0);
        let verified: Box<[AtomicU64]> = (0..words)
            .map(|i| {
                let old = previous.and_then(|p| p.verified.get(i));
                AtomicU64::new(old.map_or(0, |w| w.load(Ordering::Relaxed)))
            })
            .collect();
        Ok(View { mapping, verified })
    }

    fn is_verified(&self, id: PageId) -> bool {
        let word = &self.verified[id.0 as usize / 64];
        word.load(Ordering::Acquire) & (1 << (id.0 % 64)) != 0
    }

    pub(crate) fn set_verified(&self, id: PageId) {
        let word = &self.verified[id.0 as usize / 64];
        word.fetch_or(1 << (id.0 % 64), Ordering::Release);
    }

    /// Hints that page `id` is read soon: its first cache line (the page header and the
    /// first bytes of the payload) starts loading.
    pub(crate) fn prefetch(&self, id: PageId) {
        if let Ok(offset) = usize::try_from(id.offset()) {
            self.mapping.prefetch(offset);
        }
    }

    /// Forgets that `id` was verified (the writer is about to rewrite it).
    pub(crate) fn clear_verified(&self, id: PageId) {
        if let Some(word) = self.verified.get(id.0 as usize / 64) {
            word.fetch_and(!(1 << (id.0 % 64)), Ordering::Release);
        }
    }
}

/// A committed state readers see: the roots, the page bound, the mapping that covers it.
#[derive(Debug)]
pub(crate) struct Snapshot {
    pub(crate) seq: u64,
    pub(crate) roots: [u64; ROOT_SLOTS],
    pub(crate) page_count: u32,
    pub(crate) view: Option<std::sync::Arc<View>>,
}

/// Reads the whole extent at `id`, verified. A page still in the write-back buffer is
/// copied from there; otherwise, with a view the bytes are borrowed from the map, without
/// one they are read through the seam. `force` re-checks a page already verified.
pub(crate) fn read_extent<'a>(
    storage: &dyn Storage,
    buffered: Option<&WriteBack>,
    view: Option<&'a View>,
    page_count: u32,
    id: PageId,
    force: bool,
) -> Result<Cow<'a, [u8]>> {
    if id.0 < HEADER_PAGES || id.0 >= page_count {
        return Err(corrupt(id.0, "page number out of range"));
    }
    if let Some(image) = buffered.and_then(|b| b.get(id)) {
        if force {
            page::check(&image, id)?;
        }
        return Ok(Cow::Owned(image.to_vec()));
    }
    let start = id.offset() as usize;
    if let Some(view) = view {
        let bytes = view.mapping.bytes();
        let first = bytes
            .get(start..start + PAGE_SIZE)
            .ok_or_else(|| corrupt(id.0, "page beyond the mapping"))?;
        let pages = page::pages_claimed(first, id)?;
        if u64::from(id.0) + u64::from(pages) > u64::from(page_count) {
            return Err(corrupt(id.0, "extent past the end of the file"));
        }
        let image = bytes
            .get(start..start + pages as usize * PAGE_SIZE)
            .ok_or_else(|| corrupt(id.0, "extent beyond the mapping"))?;
        if force || !view.is_verified(id) {
            page::check(image, id)?;
            view.set_verified(id);
        }
        return Ok(Cow::Borrowed(image));
    }
    let mut first = vec![0u8; PAGE_SIZE];
    storage.read_exact_at(&mut first, id.offset())?;
    let pages = page::pages_claimed(&first, id)?;
    if u64::from(id.0) + u64::from(pages) > u64::from(page_count) {
        return Err(corrupt(id.0, "extent past the end of the file"));
    }
    let mut image = first;
    if pages > 1 {
        image.resize(pages as usize * PAGE_SIZE, 0);
        storage.read_exact_at(&mut image[PAGE_SIZE..], id.offset() + PAGE_SIZE as u64)?;
    }
    page::check(&image, id)?;
    Ok(Cow::Owned(image))
}

/// Drops the page header from an extent image, keeping the borrow when there is one.
pub(crate) fn payload(image: Cow<'_, [u8]>) -> Cow<'_, [u8]> {
    match image {
        Cow::Borrowed(bytes) => Cow::Borrowed(&bytes[PAGE_HEADER_SIZE..]),
        Cow::Owned(mut bytes) => {
            bytes.drain(..PAGE_HEADER_SIZE);
            Cow::Owned(bytes)
        }
    }
}
