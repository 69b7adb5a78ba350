//! Read and write transactions: snapshots for readers, copy-on-write pages for the writer.
//!
//! A write transaction moves through: Open (`Pager::begin_write`) → Committed
//! (`WriteTxn::commit`) or Aborted (dropped without commit: every page it allocated returns
//! to free space, every page it freed stays live). A read transaction is Open from
//! `Pager::begin_read` until dropped; while open it pins its snapshot's pages.
//!
//! Invariants:
//! - The writer mutates only pages it allocated in this transaction (`dirty`); any other
//!   page is first copied to a new location (`cow`), so published pages never change.
//! - A page allocated and freed in the same transaction is reusable at once: nothing else
//!   ever saw it. Any other free waits in `pending` (see `pager.rs`).
//! - Dirty pages over `dirty_bytes_max` spill to their own (unpublished) file locations,
//!   so a write transaction's memory is bounded.

use crate::alloc::Freed;
use crate::error::Result;
use crate::limits::{
    EXTENT_PAGES_MAX, PAGE_HEADER_SIZE, PAGE_SIZE, ROOT_SLOTS, WRITE_BACK_COMMIT_BYTES_MAX,
    WRITE_BACK_COMMIT_PAGES_MAX,
};
use crate::page::{self, Extent, KIND_USER_MIN, PageId};
use crate::pager::{Pager, Writer, grow, write_coalesced};
use crate::view::{Snapshot, payload, read_extent};
use parking_lot::MutexGuard;
use std::borrow::Cow;
use std::collections::HashMap;
use std::sync::Arc;

/// A consistent read-only view of the last commit at the time it began.
#[derive(Debug)]
pub struct ReadTxn<'p> {
    pager: &'p Pager,
    snapshot: Arc<Snapshot>,
}

impl<'p> ReadTxn<'p> {
    pub(crate) fn begin(pager: &'p Pager) -> Result<ReadTxn<'p>> {
        pager.check_failed()?;
        let mut published = pager.published.lock();
        let snapshot = Arc::clone(&published.snapshot);
        *published.readers.entry(snapshot.seq).or_default() += 1;
        Ok(ReadTxn { pager, snapshot })
    }

    /// The value of root slot `slot` in this snapshot.
    pub fn root(&self, slot: usize) -> u64 {
        self.snapshot.roots[slot]
    }

    /// The commit sequence number this snapshot shows.
    pub fn seq(&self) -> u64 {
        self.snapshot.seq
    }

    /// The payload of the page or extent at `id`, checksum-verified.
    pub fn page(&self, id: PageId) -> Result<Cow<'_, [u8]>> {
        let view = self.snapshot.view.as_deref();
        let image = read_extent(
            &*self.pager.storage,
            Some(&self.pager.write_back),
            view,
            self.snapshot.page_count,
            id,
            false,
        )?;
        Ok(payload(image))
    }

    /// Hints that the page or extent at `id` is read soon (see [`ReadTxn::page`]): the
    /// first cache line of its mapped bytes starts loading. Nothing happens without a map
    /// or for a page beyond this snapshot.
    pub fn prefetch(&self, id: PageId) {
        if id.0 < self.snapshot.page_count
            && let Some(view) = self.snapshot.view.as_deref()
        {
            view.prefetch(id);
        }
    }
}

impl Drop for ReadTxn<'_> {
    fn drop(&mut self) {
        let mut published = self.pager.published.lock();
        let count = published
            .readers
            .get_mut(&self.snapshot.seq)
            .expect("a live reader is registered");
        *count -= 1;
        if *count == 0 {
            published.readers.remove(&self.snapshot.seq);
        }
    }
}

#[derive(Debug)]
enum Dirty {
    Memory(Box<[u8]>),
    Spilled(u32),
}

/// The single writer: copy-on-write page edits, published atomically by `commit`.
#[derive(Debug)]
pub struct WriteTxn<'p> {
    pager: &'p Pager,
    writer: MutexGuard<'p, Writer>,
    base: Arc<Snapshot>,
    roots: [u64; ROOT_SLOTS],
    dirty: HashMap<u32, Dirty>,
    dirty_bytes: usize,
    freed: Vec<Extent>,
    /// The high-water mark when this transaction began (an abort returns to it).
    page_count_begin: u32,
}

impl<'p> WriteTxn<'p> {
    pub(crate) fn begin(pager: &'p Pager) -> Result<WriteTxn<'p>> {
        pager.check_failed()?;
        let mut writer = pager.writer.lock();
        pager.check_failed()?;
        pager.release_pending(&mut writer);
        let base = Arc::clone(&pager.published.lock().snapshot);
        let roots = base.roots;
        let page_count_begin = writer.page_count;
        Ok(WriteTxn {
            pager,
            writer,
            base,
            roots,
            dirty: HashMap::new(),
            dirty_bytes: 0,
            freed: Vec::new(),
            page_count_begin,
        })
    }

    /// The value of root slot `slot` as this transaction sees it.
    pub fn root(&self, slot: usize) -> u64 {
        self.roots[slot]
    }

    /// The commit sequence number of the snapshot this transaction started from (the newest
    /// one: there is one writer); its `commit` publishes `base_seq() + 1`.
    pub fn base_seq(&self) -> u64 {
        self.base.seq
    }

    /// Sets root slot `slot`; published by `commit`, made durable by a checkpoint.
    pub fn set_root(&mut self, slot: usize, value: u64) {
        self.roots[slot] = value;
    }

    /// Allocates an extent of `pages` pages of page kind `kind` (>= `KIND_USER_MIN`),
    /// zero-filled, owned by this transaction until commit.
    pub fn allocate(&mut self, kind: u8, pages: u32) -> Result<PageId> {
        assert!(
            kind >= KIND_USER_MIN,
            "kind {kind} is reserved by the pager"
        );
        assert!(pages >= 1, "zero-page extent");
        assert!(pages <= EXTENT_PAGES_MAX, "extent of {pages} pages");
        let mut image = vec![0u8; pages as usize * PAGE_SIZE].into_boxed_slice();
        page::init(&mut image, kind);
        self.place(image, pages)
    }

    /// Allocates an extent of page kind `kind` (>= `KIND_USER_MIN`) just large enough for
    /// `payload`, which it holds from the payload's first byte; the rest of the extent is
    /// zeros. Equal to [`WriteTxn::allocate`] then copying `payload` in, without zero-filling
    /// the bytes `payload` covers (a 16 KiB record's extent was ~3% of an indexed
    /// `updateMany`'s server CPU in `memset`).
    pub fn allocate_filled(&mut self, kind: u8, payload: &[u8]) -> Result<PageId> {
        assert!(
            kind >= KIND_USER_MIN,
            "kind {kind} is reserved by the pager"
        );
        let pages = page::pages_for_payload(payload.len());
        assert!(pages <= EXTENT_PAGES_MAX, "extent of {pages} pages");
        let len = pages as usize * PAGE_SIZE;
        let mut image = Vec::with_capacity(len);
        image.resize(PAGE_HEADER_SIZE, 0);
        image.extend_from_slice(payload);
        image.resize(len, 0);
        let mut image = image.into_boxed_slice();
        page::init(&mut image, kind);
        self.place(image, pages)
    }

    /// Takes `pages` pages of free space (or grows the file) for `image`, which this
    /// transaction then owns.
    fn place(&mut self, image: Box<[u8]>, pages: u32) -> Result<PageId> {
        let start = match self.writer.free.take(pages) {
            Some(start) => start,
            None => grow(&mut self.writer, pages)?,
        };
        self.dirty_bytes += image.len();
        let previous = self.dirty.insert(start.0, Dirty::Memory(image));
        assert!(previous.is_none(), "page {start:?} allocated twice");
        if self.dirty_bytes > self.pager.options.dirty_bytes_max {
            self.spill()?;
        }
        Ok(start)
    }

    /// Whether this transaction owns (may mutate) the page at `id`.
    pub fn is_dirty(&self, id: PageId) -> bool {
        self.dirty.contains_key(&id.0)
    }

    /// The payload of the page or extent at `id`, as this transaction sees it.
    pub fn page(&self, id: PageId) -> Result<Cow<'_, [u8]>> {
        match self.dirty.get(&id.0) {
            Some(Dirty::Memory(image)) => Ok(Cow::Borrowed(&image[PAGE_HEADER_SIZE..])),
            Some(Dirty::Spilled(_)) => {
                let storage = &*self.pager.storage;
                let image = read_extent(storage, None, None, self.writer.page_count, id, true)?;
                Ok(payload(image))
            }
            None => {
                let view = self.base.view.as_deref();
                let storage = &*self.pager.storage;
                let buffered = Some(&self.pager.write_back);
                let image = read_extent(storage, buffered, view, self.base.page_count, id, false)?;
                Ok(payload(image))
            }
        }
    }

    /// The payload of a page this transaction owns, for editing. Panics if it does not own
    /// it: editing a published page is a bug (call `cow` first).
    pub fn page_mut(&mut self, id: PageId) -> Result<&mut [u8]> {
        if let Some(Dirty::Spilled(_)) = self.dirty.get(&id.0) {
            let storage = &*self.pager.storage;
            let image = read_extent(storage, None, None, self.writer.page_count, id, true)?;
            let image: Box<[u8]> = image.into_owned().into_boxed_slice();
            self.dirty_bytes += image.len();
            self.dirty.insert(id.0, Dirty::Memory(image));
        }
        match self.dirty.get_mut(&id.0) {
            Some(Dirty::Memory(image)) => Ok(&mut image[PAGE_HEADER_SIZE..]),
            _ => panic!("page {id:?} is not owned by this write transaction"),
        }
    }

    /// Whether the published page at `id` is an image a commit of this process built and
    /// still holds in memory (the write-back buffer), as opposed to bytes read from the
    /// file: a caller may skip re-validating structure it wrote itself.
    pub fn is_buffered(&self, id: PageId) -> bool {
        !self.is_dirty(id) && self.pager.write_back.contains(id)
    }

    /// Returns a page this transaction may edit holding the content of `id`: `id` itself if
    /// already owned, otherwise a fresh copy (and `id` is freed).
    pub fn cow(&mut self, id: PageId) -> Result<PageId> {
        if self.is_dirty(id) {
            return Ok(id);
        }
        let (mut image, pages) = {
            let view = self.base.view.as_deref();
            let storage = &*self.pager.storage;
            let buffered = Some(&self.pager.write_back);
            let image = read_extent(storage, buffered, view, self.base.page_count, id, false)?;
            let pages = u32::try_from(image.len() / PAGE_SIZE).expect("extent pages fit u32");
            // One copy: the source image becomes the new page's image.
            (image.into_owned().into_boxed_slice(), pages)
        };
        let kind = page::kind_of(&image);
        page::init(&mut image, kind);
        let copy = self.place(image, pages)?;
        self.free(Extent::new(id, pages));
        Ok(copy)
    }

    /// Frees an extent reachable from this transaction's state (or allocated by it).
    pub fn free(&mut self, extent: Extent) {
        assert!(
            extent.pages >= 1,
            "freeing an empty extent at {:?}",
            extent.start
        );
        if let Some(dirty) = self.dirty.remove(&extent.start.0) {
            let pages = match &dirty {
                Dirty::Memory(image) => {
                    self.dirty_bytes -= image.len();
                    u32::try_from(image.len() / PAGE_SIZE).expect("extent pages fit u32")
                }
                Dirty::Spilled(pages) => *pages,
            };
            assert_eq!(pages, extent.pages, "freed length at {:?}", extent.start);
            let result = self.writer.free.insert(extent);
            result.expect("a page this transaction allocated is not free");
            return;
        }
        self.freed.push(extent);
    }

    /// Writes every in-memory dirty page to its own location (not reachable by any reader or
    /// by the durable checkpoint) and drops it from memory.
    fn spill(&mut self) -> Result<()> {
        let generation = self.writer.checkpoint_counter + 1;
        let needed = u64::from(self.writer.page_count);
        let result = self.pager.ensure_file(&mut self.writer, needed);
        self.pager.fail_on_io(result)?;
        let mut ids: Vec<u32> = self.dirty.keys().copied().collect();
        ids.sort_unstable();
        for id in ids {
            if !matches!(self.dirty.get(&id), Some(Dirty::Memory(_))) {
                continue;
            }
            let Some(Dirty::Memory(mut image)) = self.dirty.remove(&id) else {
                unreachable!("checked just above");
            };
            page::seal(&mut image, PageId(id), generation);
            let result = self.pager.write_image(&self.writer, &image, PageId(id));
            self.pager.fail_on_io(result)?;
            let pages = u32::try_from(image.len() / PAGE_SIZE).expect("extent pages fit u32");
            self.dirty.insert(id, Dirty::Spilled(pages));
        }
        self.dirty_bytes = 0;
        Ok(())
    }

    /// Writes the dirty pages through the seam (no sync) and publishes the new state to
    /// readers that begin afterwards. Durability comes from the WAL until a checkpoint.
    pub fn commit(mut self) -> Result<()> {
        let result = self.commit_pages();
        self.pager.fail_on_io(result)
    }

    fn commit_pages(&mut self) -> Result<()> {
        // The pages written here, and the reserve the next checkpoint's free list may need
        // (the frees this commit adds included): a full disk refuses this commit rather
        // than that checkpoint (see `Writer::free_list_reserve`).
        let reserve = self.writer.free_list_reserve(self.freed.len());
        let needed = u64::from(self.writer.page_count) + reserve;
        self.pager.ensure_file(&mut self.writer, needed)?;
        let generation = self.writer.checkpoint_counter + 1;
        // Small commits only: a bulk commit's pages go to the file at once, so the readers
        // that follow borrow them from the map instead of copying them from the buffer.
        let buffer = self.pager.options.write_back_max > 0
            && self.dirty.len() <= WRITE_BACK_COMMIT_PAGES_MAX
            && self.dirty_bytes <= WRITE_BACK_COMMIT_BYTES_MAX;
        let mut ids: Vec<u32> = self.dirty.keys().copied().collect();
        ids.sort_unstable();
        for &id in &ids {
            self.writer.fresh.insert(id);
            let Some(Dirty::Memory(image)) = self.dirty.get_mut(&id) else {
                continue;
            };
            page::seal(image, PageId(id), generation);
            if let Some(view) = &self.writer.view {
                view.clear_verified(PageId(id));
            }
            if buffer {
                // Published below; written by the next checkpoint (see `writeback`).
                let Some(Dirty::Memory(image)) = self.dirty.remove(&id) else {
                    unreachable!("matched just above");
                };
                self.pager.write_back.insert(PageId(id), image);
            }
        }
        let direct = ids.iter().filter_map(|id| match self.dirty.get(id) {
            Some(Dirty::Memory(image)) => Some((*id, &image[..])),
            _ => None,
        });
        write_coalesced(direct, |batch, start| write_batch(self.pager, batch, start))?;
        // Written as sealed above: the first reader need not hash them again (`view`).
        if let Some(view) = &self.writer.view {
            for (&id, dirty) in &self.dirty {
                if matches!(dirty, Dirty::Memory(_)) {
                    view.set_verified(PageId(id));
                }
            }
        }
        let seq = self.writer.seq + 1;
        for extent in std::mem::take(&mut self.freed) {
            let durable = !self.writer.fresh.remove(&extent.start.0);
            self.writer.pending.push(Freed {
                seq,
                extent,
                durable,
            });
        }
        self.dirty.clear();
        self.dirty_bytes = 0;
        self.writer.seq = seq;
        let snapshot = Arc::new(Snapshot {
            seq,
            roots: self.roots,
            page_count: self.writer.page_count,
            view: self.writer.view.clone(),
        });
        self.pager.published.lock().snapshot = snapshot;
        // Committed: the drop that follows has nothing to hand back.
        self.page_count_begin = self.writer.page_count;
        self.pager.release_pending(&mut self.writer);
        if self.pager.write_back.bytes() > self.pager.options.write_back_max {
            self.pager.flush_write_back(self.writer.view.as_deref())?;
        }
        Ok(())
    }
}

/// Writes `batch`, the images of the pages from `start` on, through the seam.
fn write_batch(pager: &Pager, batch: &[&[u8]], start: u32) -> Result<()> {
    let bytes: usize = batch.iter().map(|image| image.len()).sum();
    if bytes > 0 {
        wal::crashpoint::hit("pager.commit.before_batch");
        let pages = u32::try_from(bytes / PAGE_SIZE).expect("batch pages fit u32");
        pager.write_back.forget(PageId(start), pages);
        pager.write_vectored_at(batch, PageId(start).offset())?;
    }
    Ok(())
}

impl Drop for WriteTxn<'_> {
    fn drop(&mut self) {
        // Abort: pages this transaction allocated go back; its frees never happened.
        for (id, dirty) in self.dirty.drain() {
            let pages = match dirty {
                Dirty::Memory(image) => image.len() / PAGE_SIZE,
                Dirty::Spilled(pages) => pages as usize,
            };
            let pages = u32::try_from(pages).expect("extent pages fit u32");
            let result = self.writer.free.insert(Extent::new(PageId(id), pages));
            result.expect("an aborted allocation is not free");
        }
        // The pages it grew the file by are all free again: the mark goes back, so free
        // space is as it was and a checkpoint with no commit since the last still finds
        // the durable free list exact (`Pager::checkpoint_header_only`).
        let end = self.writer.page_count;
        let floor = self.page_count_begin;
        self.writer.page_count = self.writer.free.trim_tail(end, floor);
    }
}

impl Pager {
    /// Begins a read transaction on the last committed state.
    pub fn begin_read(&self) -> Result<ReadTxn<'_>> {
        ReadTxn::begin(self)
    }

    /// Begins the write transaction, waiting for the current one (there is one writer).
    pub fn begin_write(&self) -> Result<WriteTxn<'_>> {
        WriteTxn::begin(self)
    }
}
