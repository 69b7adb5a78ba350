//! The pager: opening and recovering the data file, publishing commits, and checkpoints.
//!
//! Lifecycle of the durable state (see `docs/format.md`, "Data file"):
//! `open` (reads both header slots, picks the valid one with the higher counter, loads its
//! free list) → any number of `WriteTxn::commit` (new page copies written through the seam
//! or held in the write-back buffer, not synced, published to new readers) → `checkpoint`
//! (buffer and free list written, sync, header slot written, sync) → durable. A crash at any point reopens at the last durable
//! checkpoint; the engine replays its WAL from `checkpoint_lsn()`.
//!
//! Invariants:
//! - No page that the durable checkpoint references is rewritten before a newer checkpoint
//!   is durable: commits write only pages taken from free space, and a page freed while the
//!   durable checkpoint still references it waits in `pending` with `durable = true`.
//! - No page a registered reader can reach is rewritten: a page freed by commit `c` returns
//!   to free space only when every registered reader has a snapshot `>= c`.
//! - header pages, the durable free-list extent, free space, pending frees and the pages
//!   reachable from the latest commit partition `0..page_count` (checked by `verify`).
//! - After a failed write or sync every call fails with `PreviousIo`; nothing retries a sync.
//! - After every commit the file holds `Writer::free_list_reserve` pages past the mark, so
//!   the next checkpoint's free list never grows the file; a checkpoint with no commit since
//!   the last writes only a header (debug-asserted in `checkpoint_locked`).

use crate::alloc::{FreeSpace, PendingFrees};
use crate::error::{Error, Result, corrupt};
use crate::header::HeaderSlot;
use crate::limits::{
    DIRTY_BYTES_MAX_DEFAULT, FILE_PAGES_MAX, GROW_PAGES_MAX, GROW_PAGES_MIN, HEADER_PAGES,
    PAGE_HEADER_SIZE, PAGE_SIZE, ROOT_SLOTS, WRITE_BACK_BYTES_MAX_DEFAULT,
};
use crate::page::{self, Extent, KIND_FREE_LIST, PageId, read_u32};
use crate::view::{Snapshot, View, read_extent};
use crate::writeback::WriteBack;
use parking_lot::Mutex;
use std::collections::{BTreeMap, HashSet};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use wal::{Storage, crashpoint};

/// How a pager opens its file.
#[derive(Clone, Debug)]
pub struct Options {
    /// Read pages through a memory map when the storage has an OS file (default true).
    pub mmap: bool,
    /// Dirty bytes a write transaction holds in memory before spilling pages to the file.
    pub dirty_bytes_max: usize,
    /// Committed single pages held in memory (readers find them there) before they are
    /// written to the file; a checkpoint writes them all. 0: every commit writes its pages.
    pub write_back_max: usize,
}

impl Default for Options {
    fn default() -> Self {
        Options {
            mmap: true,
            dirty_bytes_max: DIRTY_BYTES_MAX_DEFAULT,
            write_back_max: WRITE_BACK_BYTES_MAX_DEFAULT,
        }
    }
}

/// State owned by the single writer (and by checkpoints, which take the same lock).
#[derive(Debug)]
pub(crate) struct Writer {
    pub(crate) free: FreeSpace,
    pub(crate) pending: PendingFrees,
    /// Extent starts written since the last checkpoint (not referenced by it).
    pub(crate) fresh: HashSet<u32>,
    /// The extent holding the durable checkpoint's free list.
    pub(crate) free_list: Option<Extent>,
    pub(crate) page_count: u32,
    pub(crate) file_pages: u64,
    pub(crate) seq: u64,
    pub(crate) checkpoint_seq: u64,
    pub(crate) checkpoint_counter: u64,
    pub(crate) checkpoint_lsn: u64,
    pub(crate) view: Option<Arc<View>>,
}

#[derive(Debug)]
pub(crate) struct Published {
    pub(crate) snapshot: Arc<Snapshot>,
    /// Registered readers by the snapshot sequence they read.
    pub(crate) readers: BTreeMap<u64, usize>,
}

impl Writer {
    /// Free space as the next checkpoint's free list records it: free extents, pending
    /// frees and the durable list's own extent (free once that checkpoint is durable).
    pub(crate) fn persisted(&self) -> FreeSpace {
        let mut persisted = self.free.clone();
        let others = self.pending.iter().map(|f| f.extent).chain(self.free_list);
        for other in others {
            persisted.insert(other).expect("pending frees are disjoint");
        }
        persisted
    }

    /// Pages past the high-water mark that the next checkpoint's free list may need, with
    /// `freeing` more extents about to wait. The list holds at most one entry per free
    /// extent, per pending free and for the durable list (an upper bound: merging only
    /// lowers it, and neither a release of pending frees nor an aborted transaction
    /// raises it), plus one for the split its own allocation may cause. None are needed
    /// past the mark while a free extent holds that many pages (commits before the
    /// checkpoint re-check it; releases only add free space). Every commit grows the file
    /// to keep this reserve, so a checkpoint never grows it: a full disk refuses the
    /// commit ("not applied"), never the checkpoint that makes acknowledged writes safe.
    pub(crate) fn free_list_reserve(&self, freeing: usize) -> u64 {
        let entries = self.free.extent_count()
            + self.pending.len()
            + usize::from(self.free_list.is_some())
            + freeing
            + 1;
        let pages = free_list_pages(entries);
        if self.free.largest() >= pages {
            return 0;
        }
        u64::from(pages)
    }
}

/// Counters describing the file, for tests, benchmarks and monitoring.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Stats {
    /// Pages below the high-water mark.
    pub page_count: u32,
    /// Bytes in the file (including the preallocated tail).
    pub file_bytes: u64,
    /// Pages free for reuse now.
    pub free_pages: u64,
    /// Pages freed but still waiting for readers or a checkpoint.
    pub pending_pages: u64,
    /// The last durable checkpoint's counter.
    pub checkpoint_counter: u64,
    /// The WAL position the last durable checkpoint covers.
    pub checkpoint_lsn: u64,
    /// The last committed transaction.
    pub commit_seq: u64,
}

/// The data file: fixed-size pages, copy-on-write commits, checkpoints.
#[derive(Debug)]
pub struct Pager {
    pub(crate) storage: Arc<dyn Storage>,
    pub(crate) options: Options,
    pub(crate) published: Mutex<Published>,
    pub(crate) writer: Mutex<Writer>,
    pub(crate) failed: AtomicBool,
    /// Published single pages not yet written (see `writeback`).
    pub(crate) write_back: WriteBack,
    /// Bytes written through the seam since the last sync began (see `unsynced_bytes`).
    pub(crate) unsynced: AtomicU64,
}

impl Pager {
    /// Opens the data file behind `storage`, creating an empty one if it has no bytes.
    pub fn open(storage: Arc<dyn Storage>, options: Options) -> Result<Pager> {
        if storage.len()? == 0 {
            create(&*storage)?;
        }
        if !has_magic(&*storage)? {
            return Err(Error::NotDatabase);
        }
        let header = read_best_header(&*storage)?;
        let len = storage.len()?;
        let file_pages = len / PAGE_SIZE as u64;
        if file_pages < u64::from(header.page_count) {
            return Err(corrupt(
                header.page_count,
                "file shorter than its header says",
            ));
        }
        let free = match header.free_list {
            Some(extent) => load_free_list(&*storage, extent, header.page_count)?,
            None => FreeSpace::default(),
        };
        let view = match (options.mmap, storage.os_file()) {
            (true, Some(file)) => Some(Arc::new(View::new(file, file_pages, None)?)),
            _ => None,
        };
        let snapshot = Arc::new(Snapshot {
            seq: 0,
            roots: header.roots,
            page_count: header.page_count,
            view: view.clone(),
        });
        let writer = Writer {
            free,
            pending: PendingFrees::default(),
            fresh: HashSet::new(),
            free_list: header.free_list,
            page_count: header.page_count,
            file_pages,
            seq: 0,
            checkpoint_seq: 0,
            checkpoint_counter: header.counter,
            checkpoint_lsn: header.lsn,
            view,
        };
        Ok(Pager {
            storage,
            options,
            published: Mutex::new(Published {
                snapshot,
                readers: BTreeMap::new(),
            }),
            writer: Mutex::new(writer),
            failed: AtomicBool::new(false),
            write_back: WriteBack::default(),
            unsynced: AtomicU64::new(0),
        })
    }

    /// The data file (its handle holds the database's lock, `wal::LockError`).
    pub fn storage(&self) -> &Arc<dyn Storage> {
        &self.storage
    }

    /// Whether a failed write or sync has failed the pager (every later call fails).
    pub fn is_failed(&self) -> bool {
        self.failed.load(Ordering::Acquire)
    }

    pub(crate) fn check_failed(&self) -> Result<()> {
        if self.failed.load(Ordering::Acquire) {
            return Err(Error::PreviousIo);
        }
        Ok(())
    }

    /// Marks the pager failed if `result` is an I/O error, and passes it on.
    pub(crate) fn fail_on_io<T>(&self, result: Result<T>) -> Result<T> {
        if let Err(Error::Io(_)) = &result {
            self.failed.store(true, Ordering::Release);
        }
        result
    }

    /// The WAL position the last durable checkpoint covers: after a crash the engine replays
    /// every WAL record after it.
    pub fn checkpoint_lsn(&self) -> u64 {
        self.writer.lock().checkpoint_lsn
    }

    /// Whether a checkpoint is due for space reasons: pages freed since the last checkpoint
    /// (which cannot be reused until the next one) exceed 1/64 of the file. Copy-on-write
    /// keeps the file near `live × (1 + freed-per-checkpoint share)`, so an engine that
    /// checkpoints when this says so keeps churn near 1.06x the live pages (delete half and
    /// refill, ten rounds, 200,000 keys: 1/16 gave 1.11x to 1.16x, 1/32 1.07x to 1.09x,
    /// 1/64 1.05x to 1.07x; PLAN D29).
    pub fn checkpoint_due(&self) -> bool {
        let w = self.writer.lock();
        w.pending.pages() * 64 >= u64::from(w.page_count)
    }

    /// Current counters.
    pub fn stats(&self) -> Result<Stats> {
        let w = self.writer.lock();
        let pending_pages = w.pending.pages();
        Ok(Stats {
            page_count: w.page_count,
            file_bytes: self.storage.len()?,
            free_pages: w.free.pages(),
            pending_pages,
            checkpoint_counter: w.checkpoint_counter,
            checkpoint_lsn: w.checkpoint_lsn,
            commit_seq: w.seq,
        })
    }

    /// Writes the write-back buffer and syncs the data file, ahead of a checkpoint: the
    /// pages commits published since the last sync reach the disk while commits go on
    /// (the buffer's write excludes the writer only while it runs; the sync not at all),
    /// so the syncs of `checkpoint`, which the writer waits for, find little left, and no
    /// commit pays for writing a full buffer. It makes nothing durable that a crash needs:
    /// until the checkpoint's header is written, recovery reads the previous checkpoint's
    /// pages, which no commit overwrites. A failure fails the pager, as any failed write
    /// or sync does.
    pub fn sync_ahead(&self) -> Result<()> {
        self.check_failed()?;
        let result = self.flush_ahead().and_then(|()| self.sync_storage());
        self.fail_on_io(result)
    }

    /// Writes the write-back buffer now (`sync_ahead`), under the writer lock as every
    /// write of it is (a commit may not add to or write over it meanwhile).
    fn flush_ahead(&self) -> Result<()> {
        if self.write_back.bytes() == 0 {
            return Ok(());
        }
        let w = self.writer.lock();
        self.check_failed()?;
        self.flush_write_back(w.view.as_deref())
    }

    /// Bytes the next `sync_ahead` has to write and sync: those written to the data file
    /// since the last sync began, and those waiting in the write-back buffer. An engine
    /// that calls `sync_ahead` whenever this passes a few MiB keeps every sync short, so a
    /// commit's log sync never queues behind a long one on the same device.
    pub fn unsynced_bytes(&self) -> u64 {
        self.unsynced.load(Ordering::Relaxed) + self.write_back.bytes() as u64
    }

    /// Syncs the data file; what was written before this call is counted as synced.
    fn sync_storage(&self) -> Result<()> {
        self.unsynced.store(0, Ordering::Relaxed);
        self.storage.sync()?;
        Ok(())
    }

    /// Writes `bytes` at `offset` through the seam, counting them for `unsynced_bytes`.
    pub(crate) fn write_at(&self, bytes: &[u8], offset: u64) -> Result<()> {
        self.unsynced
            .fetch_add(bytes.len() as u64, Ordering::Relaxed);
        self.storage.write_all_at(bytes, offset)?;
        Ok(())
    }

    /// Writes `images` one after another from `offset` on through the seam (one vectored
    /// write, no concatenated copy), counting them for `unsynced_bytes`.
    pub(crate) fn write_vectored_at(&self, images: &[&[u8]], offset: u64) -> Result<()> {
        let bytes: usize = images.iter().map(|image| image.len()).sum();
        self.unsynced.fetch_add(bytes as u64, Ordering::Relaxed);
        self.storage.write_all_vectored_at(images, offset)?;
        Ok(())
    }

    /// Makes the last committed state durable and records `lsn`, the WAL position it covers.
    ///
    /// Writes the free list, syncs, writes the next header slot, syncs. Waits for (and
    /// excludes) the writer. On any I/O error the pager enters the failed state.
    pub fn checkpoint(&self, lsn: u64) -> Result<()> {
        self.check_failed()?;
        let mut w = self.writer.lock();
        let result = self.checkpoint_locked(&mut w, lsn);
        self.fail_on_io(result)
    }

    fn checkpoint_locked(&self, w: &mut Writer, lsn: u64) -> Result<()> {
        crashpoint::hit("checkpoint.before_pages");
        if w.seq == w.checkpoint_seq {
            // Nothing committed since the durable checkpoint: its free list still records
            // exactly the free and pending pages, so no page is written but the header
            // (and none at all if the position is the same). This is what lets a checkpoint
            // right after another, or after opening, skip the reserve the last one used.
            return self.checkpoint_header_only(w, lsn);
        }
        self.flush_write_back(w.view.as_deref())?;
        let roots = self.published.lock().snapshot.roots;
        let (extent, persisted) = allocate_free_list(w)?;
        // The last commit kept the reserve that extent needed: no growth, which a full
        // disk would refuse (a failed checkpoint would leave the log as the only copy).
        debug_assert!(
            w.file_pages >= u64::from(w.page_count),
            "checkpoint grows the file: {} pages, mark {}",
            w.file_pages,
            w.page_count
        );
        self.ensure_file(w, u64::from(w.page_count))?;
        let mut image = vec![0u8; extent.bytes()];
        page::init(&mut image, KIND_FREE_LIST);
        let count = u32::try_from(persisted.extent_count()).expect("free list count fits u32");
        let body = &mut image[PAGE_HEADER_SIZE..];
        body[0..4].copy_from_slice(&count.to_le_bytes());
        for (i, free) in persisted.iter().enumerate() {
            let at = 4 + i * 8;
            body[at..at + 4].copy_from_slice(&free.start.0.to_le_bytes());
            body[at + 4..at + 8].copy_from_slice(&free.pages.to_le_bytes());
        }
        page::seal(&mut image, extent.start, w.checkpoint_counter + 1);
        self.write_image(w, &image, extent.start)?;
        self.sync_storage()?;
        crashpoint::hit("checkpoint.after_pages");
        let header = HeaderSlot {
            counter: w.checkpoint_counter + 1,
            lsn,
            page_count: w.page_count,
            free_list: Some(extent),
            roots,
        };
        self.write_at(&header.encode(), header.slot() * PAGE_SIZE as u64)?;
        crashpoint::hit("checkpoint.after_header_write");
        self.sync_storage()?;
        // Durable: the previous free-list extent is referenced by nothing now.
        if let Some(old) = w.free_list.replace(extent) {
            w.free
                .insert(old)
                .expect("old free-list extent is disjoint");
        }
        w.checkpoint_counter += 1;
        w.checkpoint_lsn = lsn;
        w.checkpoint_seq = w.seq;
        w.fresh.clear();
        self.release_pending(w);
        Ok(())
    }

    /// A checkpoint with no commit since the last: the same roots, page count and free
    /// list under a new counter and `lsn`.
    fn checkpoint_header_only(&self, w: &mut Writer, lsn: u64) -> Result<()> {
        debug_assert!(self.write_back.bytes() == 0, "no commit, nothing buffered");
        if lsn == w.checkpoint_lsn {
            return Ok(());
        }
        let header = HeaderSlot {
            counter: w.checkpoint_counter + 1,
            lsn,
            page_count: w.page_count,
            free_list: w.free_list,
            roots: self.published.lock().snapshot.roots,
        };
        self.write_at(&header.encode(), header.slot() * PAGE_SIZE as u64)?;
        crashpoint::hit("checkpoint.after_header_write");
        self.sync_storage()?;
        w.checkpoint_counter += 1;
        w.checkpoint_lsn = lsn;
        self.release_pending(w);
        Ok(())
    }

    /// Writes one sealed image: its verified bit is cleared before the write and set once
    /// the write succeeded (the image was checksummed as it was sealed).
    pub(crate) fn write_image(&self, w: &Writer, image: &[u8], id: PageId) -> Result<()> {
        debug_assert!(page::check(image, id).is_ok(), "image at {id:?} verifies");
        if let Some(view) = &w.view {
            view.clear_verified(id);
        }
        let pages = u32::try_from(image.len() / PAGE_SIZE).expect("extent pages fit u32");
        self.write_back.forget(id, pages);
        self.write_at(image, id.offset())?;
        if let Some(view) = &w.view {
            view.set_verified(id);
        }
        Ok(())
    }

    /// Writes every page waiting in the write-back buffer, in page order with contiguous
    /// pages in one write, then drops them from the buffer. Called with the writer lock
    /// held (no commit can add pages meanwhile); readers find the same bytes either way.
    /// The written pages are marked verified in `view` (their images were sealed here).
    pub(crate) fn flush_write_back(&self, view: Option<&View>) -> Result<()> {
        let entries = self.write_back.sorted();
        let pages = entries.iter().map(|(id, image)| (*id, &image[..]));
        // The entries stay until every write is done: they hold these very bytes.
        write_coalesced(pages, |batch, start| {
            crashpoint::hit("pager.commit.before_batch");
            self.write_vectored_at(batch, PageId(start).offset())?;
            Ok(())
        })?;
        if let Some(view) = view {
            for (id, _) in &entries {
                view.set_verified(PageId(*id));
            }
        }
        self.write_back.clear();
        Ok(())
    }

    /// Returns pending frees that no reader and no durable checkpoint needs to free space.
    pub(crate) fn release_pending(&self, w: &mut Writer) {
        let oldest = {
            let published = self.published.lock();
            published.readers.keys().next().copied().unwrap_or(u64::MAX)
        };
        let checkpoint_seq = w.checkpoint_seq;
        let Writer { pending, free, .. } = w;
        pending.release(oldest, checkpoint_seq, free);
    }

    /// Grows the file so it holds `pages_needed` pages, giving every new page real blocks
    /// (so a full disk fails here, as an error, and never later when a page is
    /// overwritten) and mapping the new length. The new length is the mark plus the
    /// growth slack, or `pages_needed` if more: a commit's free-list reserve
    /// (`Writer::free_list_reserve`) comes out of the slack, never on top of it (the
    /// churn gate's 1.298x is unchanged; the reserve plus the slack gave 1.303x).
    pub(crate) fn ensure_file(&self, w: &mut Writer, pages_needed: u64) -> Result<()> {
        if w.file_pages >= pages_needed {
            return Ok(());
        }
        let slack = (w.file_pages / 64).clamp(GROW_PAGES_MIN, GROW_PAGES_MAX);
        let new_pages = (u64::from(w.page_count) + slack)
            .max(pages_needed)
            .min(FILE_PAGES_MAX);
        assert!(
            new_pages >= pages_needed,
            "growth to {new_pages} covers {pages_needed}"
        );
        // Every new page gets real blocks now, the ones this commit is about to write
        // included (it may free some of them again, and a later overwrite of a hole could
        // fail on a full disk where no failure is allowed: in a checkpoint).
        let start = w.file_pages * PAGE_SIZE as u64;
        let end = new_pages * PAGE_SIZE as u64;
        self.storage.allocate(start, end - start)?;
        assert!(self.storage.len()? >= end, "file grew to {end}");
        w.file_pages = new_pages;
        if let (true, Some(file)) = (self.options.mmap, self.storage.os_file()) {
            let view = View::new(file, new_pages, w.view.as_deref())?;
            w.view = Some(Arc::new(view));
        }
        Ok(())
    }
}

/// Hands `pages` (ascending page numbers, each a sealed image) to `write` in runs of
/// contiguous pages of up to 1 MiB (or one larger image): one vectored write per run
/// instead of one per page, and no copy of the images into a run buffer.
pub(crate) fn write_coalesced<'a>(
    pages: impl Iterator<Item = (u32, &'a [u8])>,
    mut write: impl FnMut(&[&'a [u8]], u32) -> Result<()>,
) -> Result<()> {
    let mut run: Vec<&'a [u8]> = Vec::new();
    let mut run_start = 0u32;
    let mut run_bytes = 0u64;
    for (id, image) in pages {
        let contiguous = u64::from(run_start) * PAGE_SIZE as u64 + run_bytes == PageId(id).offset();
        if !run.is_empty() && (!contiguous || run_bytes >= 1 << 20) {
            write(&run, run_start)?;
            run.clear();
            run_bytes = 0;
        }
        if run.is_empty() {
            run_start = id;
        }
        run.push(image);
        run_bytes += image.len() as u64;
    }
    if !run.is_empty() {
        write(&run, run_start)?;
    }
    Ok(())
}

/// Writes an empty data file: both header slots, nothing else.
fn create(storage: &dyn Storage) -> Result<()> {
    for counter in 0..2u64 {
        let slot = HeaderSlot {
            counter,
            lsn: 0,
            page_count: HEADER_PAGES,
            free_list: None,
            roots: [0; ROOT_SLOTS],
        };
        storage.write_all_at(&slot.encode(), slot.slot() * PAGE_SIZE as u64)?;
    }
    storage.sync()?;
    Ok(())
}

/// Whether either header slot starts with the magic (a damaged slot may not).
fn has_magic(storage: &dyn Storage) -> Result<bool> {
    for slot in 0..2u64 {
        let mut magic = [0u8; 8];
        match storage.read_exact_at(&mut magic, slot * PAGE_SIZE as u64) {
            Ok(()) if magic == *crate::header::MAGIC => return Ok(true),
            Ok(()) => {}
            Err(error) if error.kind() == std::io::ErrorKind::UnexpectedEof => {}
            Err(error) => return Err(error.into()),
        }
    }
    Ok(false)
}

fn read_best_header(storage: &dyn Storage) -> Result<HeaderSlot> {
    let mut best: Option<HeaderSlot> = None;
    let mut first_error = None;
    for slot in 0..2u64 {
        let mut page = vec![0u8; PAGE_SIZE];
        let decoded = match storage.read_exact_at(&mut page, slot * PAGE_SIZE as u64) {
            Ok(()) => HeaderSlot::decode(&page, slot),
            Err(error) if error.kind() == std::io::ErrorKind::UnexpectedEof => {
                Err(corrupt(0, "file shorter than its header"))
            }
            Err(error) => return Err(error.into()),
        };
        match decoded {
            Ok(header) if best.as_ref().is_none_or(|b| header.counter > b.counter) => {
                best = Some(header);
            }
            Ok(_) => {}
            Err(error) => first_error = first_error.or(Some(error)),
        }
    }
    match (best, first_error) {
        (Some(header), _) => Ok(header),
        (None, Some(error)) => Err(error),
        (None, None) => Err(corrupt(0, "no valid header slot")),
    }
}

fn load_free_list(storage: &dyn Storage, extent: Extent, page_count: u32) -> Result<FreeSpace> {
    let image = read_extent(storage, None, None, page_count, extent.start, true)?;
    let at = extent.start.0;
    if image.len() != extent.bytes() || page::kind_of(&image) != KIND_FREE_LIST {
        return Err(corrupt(at, "free list extent does not match the header"));
    }
    let body = &image[PAGE_HEADER_SIZE..];
    let count = read_u32(body, 0) as usize;
    if count > (body.len() - 4) / 8 {
        return Err(corrupt(at, "free list count"));
    }
    let mut free = FreeSpace::default();
    for i in 0..count {
        let start = read_u32(body, 4 + i * 8);
        let pages = read_u32(body, 8 + i * 8);
        let entry = Extent::new(PageId(start), pages);
        let overlaps_list = entry.start.0 < extent.start.0 + extent.pages
            && extent.start.0 < start.saturating_add(pages);
        if start < HEADER_PAGES || pages == 0 || entry.end() > u64::from(page_count) {
            return Err(corrupt(at, "free list entry out of range"));
        }
        if overlaps_list || free.insert(entry).is_err() {
            return Err(corrupt(at, "free list entries overlap"));
        }
    }
    Ok(free)
}

/// Takes an extent for the next free list from free space (or the end of the file, within
/// the reserve every commit keeps: `Writer::free_list_reserve`) and returns it with the
/// free space that list must record.
fn allocate_free_list(w: &mut Writer) -> Result<(Extent, FreeSpace)> {
    // Taking the list's own extent out of free space can split one recorded extent in two
    // (a free run merged with pending neighbours), never more: one entry of headroom.
    let entries = w.persisted().extent_count() + 1;
    let pages = free_list_pages(entries);
    let start = match w.free.take(pages) {
        Some(start) => start,
        None => grow(w, pages)?,
    };
    let extent = Extent::new(start, pages);
    let persisted = w.persisted();
    let capacity = (extent.bytes() - PAGE_HEADER_SIZE - 4) / 8;
    assert!(
        persisted.extent_count() <= capacity,
        "free list of {} entries in {pages} pages (room for {capacity})",
        persisted.extent_count()
    );
    Ok((extent, persisted))
}

/// Pages of a free-list extent that holds `entries` entries.
pub(crate) fn free_list_pages(entries: usize) -> u32 {
    page::pages_for_payload(4 + entries * 8)
}

/// Extends the high-water mark by `pages` and returns the first new page.
pub(crate) fn grow(w: &mut Writer, pages: u32) -> Result<PageId> {
    let end = u64::from(w.page_count) + u64::from(pages);
    if end > FILE_PAGES_MAX {
        return Err(Error::FileFull {
            pages: end,
            limit: FILE_PAGES_MAX,
        });
    }
    let start = PageId(w.page_count);
    w.page_count = u32::try_from(end).expect("checked against FILE_PAGES_MAX");
    Ok(start)
}
