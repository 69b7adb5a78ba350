//! Allocation, reuse, snapshots, growth under readers, checkpoints, reopen and verify.

use crate::support::{Rng, TempPath};
use pager::limits::{PAGE_SIZE, WRITE_BACK_COMMIT_BYTES_MAX};
use pager::{Error, Extent, KIND_USER_MIN, Options, PageId, Pager};
use std::sync::Arc;
use wal::{MemStorage, OsStorage, Storage};

const KIND: u8 = KIND_USER_MIN;

fn mem_pager() -> (Arc<MemStorage>, Pager) {
    let storage = Arc::new(MemStorage::new());
    let pager = Pager::open(storage.clone(), Options::default()).expect("open");
    (storage, pager)
}

fn write_page(pager: &Pager, slot: usize, byte: u8) -> PageId {
    let mut txn = pager.begin_write().expect("write");
    let id = txn.allocate(KIND, 1).expect("allocate");
    txn.page_mut(id).expect("own")[..4].fill(byte);
    txn.set_root(slot, u64::from(id.0));
    txn.commit().expect("commit");
    id
}

#[test]
fn committed_page_survives_checkpoint_and_reopen() {
    let (storage, pager) = mem_pager();
    let id = write_page(&pager, 0, 7);
    pager.checkpoint(42).expect("checkpoint");
    drop(pager);
    let bytes = storage.snapshot();
    let pager =
        Pager::open(Arc::new(MemStorage::from_bytes(bytes)), Options::default()).expect("reopen");
    assert_eq!(pager.checkpoint_lsn(), 42);
    let read = pager.begin_read().expect("read");
    assert_eq!(read.root(0), u64::from(id.0));
    assert_eq!(&read.page(id).expect("page")[..4], &[7, 7, 7, 7]);
    drop(read);
    pager.verify(&[Extent::new(id, 1)]).expect("verify");
}

#[test]
fn uncheckpointed_commit_is_gone_after_reopen() {
    let (storage, pager) = mem_pager();
    write_page(&pager, 0, 1);
    pager.checkpoint(1).expect("checkpoint");
    write_page(&pager, 1, 2);
    let pager = Pager::open(
        Arc::new(MemStorage::from_bytes(storage.snapshot())),
        Options::default(),
    )
    .expect("reopen");
    let read = pager.begin_read().expect("read");
    assert_ne!(read.root(0), 0);
    assert_eq!(read.root(1), 0, "the second commit was never checkpointed");
}

#[test]
fn reader_keeps_its_snapshot_while_the_writer_copies_and_frees() {
    let (_storage, pager) = mem_pager();
    let id = write_page(&pager, 0, 1);
    let reader = pager.begin_read().expect("read");
    let mut txn = pager.begin_write().expect("write");
    let copy = txn.cow(id).expect("cow");
    assert_ne!(copy, id, "a published page is copied, not edited");
    txn.page_mut(copy).expect("own")[..4].fill(9);
    txn.set_root(0, u64::from(copy.0));
    txn.commit().expect("commit");
    for _ in 0..4 {
        // Churn: none of these may reuse `id` while the reader lives.
        let mut txn = pager.begin_write().expect("write");
        let fresh = txn.allocate(KIND, 1).expect("allocate");
        assert_ne!(fresh, id, "a page a reader can see was reused");
        txn.free(Extent::new(fresh, 1));
        txn.commit().expect("commit");
    }
    assert_eq!(&reader.page(id).expect("old page")[..4], &[1, 1, 1, 1]);
    let newer = pager.begin_read().expect("read");
    assert_eq!(&newer.page(copy).expect("new page")[..4], &[9, 9, 9, 9]);
}

#[test]
fn freed_durable_page_waits_for_the_next_checkpoint() {
    let (_storage, pager) = mem_pager();
    let id = write_page(&pager, 0, 1);
    pager.checkpoint(1).expect("checkpoint");
    let mut txn = pager.begin_write().expect("write");
    let copy = txn.cow(id).expect("cow");
    txn.set_root(0, u64::from(copy.0));
    txn.commit().expect("commit");
    let mut txn = pager.begin_write().expect("write");
    let fresh = txn.allocate(KIND, 1).expect("allocate");
    assert_ne!(fresh, id, "reused a page the durable checkpoint references");
    drop(txn);
    pager.checkpoint(2).expect("checkpoint");
    let stats = pager.stats().expect("stats");
    assert_eq!(stats.pending_pages, 0);
    let mut txn = pager.begin_write().expect("write");
    let a = txn.allocate(KIND, 1).expect("allocate");
    let b = txn.allocate(KIND, 1).expect("allocate");
    assert!(
        a == id || b == id,
        "after the checkpoint {id:?} is reusable"
    );
}

#[test]
fn best_fit_keeps_a_freed_extent_for_a_large_request() {
    let (_storage, pager) = mem_pager();
    let mut txn = pager.begin_write().expect("write");
    let big = txn.allocate(KIND, 32).expect("allocate");
    let middle = txn.allocate(KIND, 1).expect("allocate");
    let small = txn.allocate(KIND, 1).expect("allocate");
    let guard = txn.allocate(KIND, 1).expect("allocate");
    txn.commit().expect("commit");
    let mut txn = pager.begin_write().expect("write");
    txn.free(Extent::new(small, 1));
    txn.free(Extent::new(big, 32));
    txn.commit().expect("commit");
    let mut txn = pager.begin_write().expect("write");
    let one = txn.allocate(KIND, 1).expect("allocate");
    assert_eq!(
        one, small,
        "one page comes from the one-page hole, not the first fit"
    );
    let again = txn.allocate(KIND, 32).expect("allocate");
    assert_eq!(again, big, "the 32-page extent stayed whole");
    txn.commit().expect("commit");
    let owned = [
        Extent::new(one, 1),
        Extent::new(again, 32),
        Extent::new(middle, 1),
        Extent::new(guard, 1),
    ];
    pager.verify(&owned).expect("verify");
}

#[test]
fn verify_reports_a_leak_and_a_double_owner() {
    let (_storage, pager) = mem_pager();
    let a = write_page(&pager, 0, 1);
    let b = write_page(&pager, 1, 2);
    let leak = pager.verify(&[Extent::new(a, 1)]).expect_err("b is leaked");
    assert!(
        matches!(leak, Error::Corrupt { page, .. } if page == b.0),
        "{leak}"
    );
    let both = [Extent::new(a, 1), Extent::new(b, 1), Extent::new(a, 1)];
    assert!(pager.verify(&both).is_err());
    pager.verify(&both[..2]).expect("verify");
}

#[test]
fn aborted_transaction_returns_its_pages() {
    let (_storage, pager) = mem_pager();
    let a = write_page(&pager, 0, 1);
    let mut txn = pager.begin_write().expect("write");
    txn.allocate(KIND, 5).expect("allocate");
    txn.free(Extent::new(a, 1));
    drop(txn);
    pager
        .verify(&[Extent::new(a, 1)])
        .expect("nothing leaked, nothing freed");
}

#[test]
fn reader_slices_stay_valid_while_the_mapped_file_grows() {
    let path = TempPath::new("grow");
    let storage: Arc<dyn Storage> = Arc::new(OsStorage::open(&path.0).expect("file"));
    // Commits write their pages at once, so the reader borrows from the map.
    let options = Options {
        write_back_max: 0,
        ..Options::default()
    };
    let pager = Pager::open(storage, options).expect("open");
    let id = write_page(&pager, 0, 5);
    let reader = pager.begin_read().expect("read");
    let held = reader.page(id).expect("page");
    assert!(
        matches!(held, std::borrow::Cow::Borrowed(_)),
        "read through the map"
    );
    for round in 0..8u8 {
        let mut txn = pager.begin_write().expect("write");
        txn.allocate(KIND, 4096).expect("allocate 16 MiB");
        txn.commit().expect("commit");
        assert_eq!(&held[..4], &[5, 5, 5, 5], "round {round}");
    }
    pager.checkpoint(3).expect("checkpoint");
    assert!(pager.stats().expect("stats").file_bytes > 128 << 20);
    assert_eq!(&held[..4], &[5, 5, 5, 5]);
}

#[test]
fn large_write_transaction_spills_and_still_commits() {
    let storage = Arc::new(MemStorage::new());
    let options = Options {
        dirty_bytes_max: 64 * 4096,
        ..Options::default()
    };
    let pager = Pager::open(storage, options).expect("open");
    let mut txn = pager.begin_write().expect("write");
    let mut ids = Vec::new();
    for i in 0..300u32 {
        let id = txn.allocate(KIND, 1).expect("allocate");
        txn.page_mut(id).expect("own")[..4].copy_from_slice(&i.to_le_bytes());
        ids.push(id);
    }
    for (i, id) in ids.iter().enumerate() {
        let page = txn.page(*id).expect("spilled page reads back");
        assert_eq!(&page[..4], &(i as u32).to_le_bytes());
    }
    txn.page_mut(ids[0]).expect("reload")[..4].fill(0xee);
    txn.commit().expect("commit");
    let read = pager.begin_read().expect("read");
    assert_eq!(&read.page(ids[0]).expect("page")[..4], &[0xee; 4]);
    assert_eq!(
        &read.page(ids[299]).expect("page")[..4],
        &299u32.to_le_bytes()
    );
    drop(read);
    let owned: Vec<Extent> = ids.iter().map(|&id| Extent::new(id, 1)).collect();
    pager.verify(&owned).expect("verify");
}

#[test]
fn torn_newest_header_falls_back_to_the_previous_checkpoint() {
    let (storage, pager) = mem_pager();
    write_page(&pager, 0, 1);
    pager.checkpoint(10).expect("checkpoint");
    write_page(&pager, 1, 2);
    pager.checkpoint(20).expect("checkpoint");
    let counter = pager.stats().expect("stats").checkpoint_counter;
    let mut bytes = storage.snapshot();
    let slot = (counter % 2) as usize * 4096;
    bytes[slot + 100] ^= 0xff;
    let pager =
        Pager::open(Arc::new(MemStorage::from_bytes(bytes)), Options::default()).expect("reopen");
    assert_eq!(pager.checkpoint_lsn(), 10);
}

#[test]
fn damaged_files_are_errors() {
    let (storage, pager) = mem_pager();
    let id = write_page(&pager, 0, 1);
    pager.checkpoint(1).expect("checkpoint");
    let good = storage.snapshot();
    let mut rng = Rng(99);
    for _ in 0..300 {
        let mut bytes = good.clone();
        match rng.below(3) {
            0 => bytes.truncate(rng.below(bytes.len() as u64) as usize),
            _ => {
                let at = rng.below(bytes.len() as u64) as usize;
                bytes[at] ^= 1 << rng.below(8);
            }
        }
        let Ok(pager) = Pager::open(Arc::new(MemStorage::from_bytes(bytes)), Options::default())
        else {
            continue;
        };
        let Ok(read) = pager.begin_read() else {
            continue;
        };
        let root = read.root(0);
        if root == u64::from(id.0)
            && let Ok(page) = read.page(id)
        {
            assert_eq!(
                &page[..4],
                &[1, 1, 1, 1],
                "a damaged page read back as valid"
            );
        }
    }
}

#[test]
fn failed_write_makes_every_later_call_fail() {
    // Without the write-back buffer the commit's own write fails.
    let storage = Arc::new(crate::support::crash::CrashStorage::new());
    let options = Options {
        write_back_max: 0,
        ..Options::default()
    };
    let pager = Pager::open(storage.clone(), options).expect("open");
    write_page(&pager, 0, 1);
    storage.fail_writes_after(0);
    let mut txn = pager.begin_write().expect("write");
    txn.allocate(KIND, 1).expect("allocate");
    assert!(matches!(txn.commit(), Err(Error::Io(_))));
    assert!(matches!(pager.begin_write(), Err(Error::PreviousIo)));
    assert!(matches!(pager.checkpoint(5), Err(Error::PreviousIo)));
}

#[test]
fn failed_flush_of_buffered_pages_makes_every_later_call_fail() {
    // With it, a one-page commit writes nothing; the checkpoint's flush meets the failure.
    let storage = Arc::new(crate::support::crash::CrashStorage::new());
    let pager = Pager::open(storage.clone(), Options::default()).expect("open");
    write_page(&pager, 0, 1);
    storage.fail_writes_after(0);
    let mut txn = pager.begin_write().expect("write");
    txn.allocate(KIND, 1).expect("allocate");
    txn.commit().expect("a buffered commit writes nothing");
    assert!(matches!(pager.checkpoint(5), Err(Error::Io(_))));
    assert!(matches!(pager.begin_write(), Err(Error::PreviousIo)));
    assert!(matches!(pager.begin_read(), Err(Error::PreviousIo)));
    assert!(matches!(pager.checkpoint(6), Err(Error::PreviousIo)));
}

#[test]
fn unsynced_bytes_count_the_writes_since_the_last_sync() {
    let (storage, pager) = mem_pager();
    assert_eq!(pager.unsynced_bytes(), 0);
    // A small commit's extent waits in the write-back buffer; it counts, as the next
    // `sync_ahead` writes it.
    let mut txn = pager.begin_write().expect("write");
    let id = txn.allocate(KIND, 3).expect("allocate");
    txn.page_mut(id).expect("page").fill(7);
    txn.commit().expect("commit");
    assert!(
        pager.unsynced_bytes() >= 3 * PAGE_SIZE as u64,
        "{} bytes counted",
        pager.unsynced_bytes()
    );
    let at = id.0 as usize * PAGE_SIZE + 32;
    assert_ne!(storage.snapshot().get(at), Some(&7), "not in the file yet");
    pager.sync_ahead().expect("sync ahead");
    assert_eq!(pager.unsynced_bytes(), 0);
    assert_eq!(
        storage.snapshot().get(at),
        Some(&7),
        "sync_ahead wrote the buffer"
    );
    // A commit larger than the buffer takes goes to the file at once, and counts too.
    let pages = (WRITE_BACK_COMMIT_BYTES_MAX / PAGE_SIZE + 1) as u32;
    let mut txn = pager.begin_write().expect("write");
    txn.allocate(KIND, pages).expect("allocate");
    txn.commit().expect("commit");
    assert!(pager.unsynced_bytes() >= u64::from(pages) * PAGE_SIZE as u64);
    pager.sync_ahead().expect("sync ahead");
    assert_eq!(pager.unsynced_bytes(), 0);
    write_page(&pager, 0, 1);
    pager.checkpoint(1).expect("checkpoint");
    assert_eq!(pager.unsynced_bytes(), 0, "a checkpoint syncs last");
}

#[test]
fn a_failed_sync_ahead_fails_the_pager_and_is_never_retried() {
    let storage = Arc::new(crate::support::crash::CrashStorage::new());
    let pager = Pager::open(storage.clone(), Options::default()).expect("open");
    write_page(&pager, 0, 1);
    pager.sync_ahead().expect("a sync ahead of the checkpoint");
    pager.checkpoint(1).expect("checkpoint after it");
    write_page(&pager, 0, 2);
    storage.crash_at_sync(0);
    assert!(matches!(pager.sync_ahead(), Err(Error::Io(_))));
    assert!(matches!(pager.sync_ahead(), Err(Error::PreviousIo)));
    assert!(matches!(pager.checkpoint(2), Err(Error::PreviousIo)));
    assert!(matches!(pager.begin_write(), Err(Error::PreviousIo)));
}

/// A real file that refuses to grow past a byte limit, as a full disk does (ENOSPC).
#[derive(Debug)]
struct FullDisk {
    file: OsStorage,
    limit: u64,
}

impl Storage for FullDisk {
    fn read_at(&self, buf: &mut [u8], offset: u64) -> std::io::Result<usize> {
        self.file.read_at(buf, offset)
    }
    fn write_at(&self, buf: &[u8], offset: u64) -> std::io::Result<usize> {
        if offset + buf.len() as u64 > self.limit {
            return Err(std::io::ErrorKind::StorageFull.into());
        }
        self.file.write_at(buf, offset)
    }
    fn sync(&self) -> std::io::Result<()> {
        self.file.sync()
    }
    fn len(&self) -> std::io::Result<u64> {
        self.file.len()
    }
    fn set_len(&self, len: u64) -> std::io::Result<()> {
        self.file.set_len(len)
    }
    fn os_file(&self) -> Option<&std::fs::File> {
        self.file.os_file()
    }
}

#[test]
fn full_disk_is_an_error_and_the_mapped_state_stays_readable() {
    let path = TempPath::new("full");
    let storage = Arc::new(FullDisk {
        file: OsStorage::open(&path.0).expect("file"),
        limit: 1 << 20,
    });
    let pager = Pager::open(storage, Options::default()).expect("open");
    let id = write_page(&pager, 0, 3);
    pager.checkpoint(1).expect("checkpoint");
    let reader = pager.begin_read().expect("read");
    let mut txn = pager.begin_write().expect("write");
    txn.allocate(KIND, 1024)
        .expect("allocation is in memory only");
    let error = txn.commit().expect_err("the file cannot grow by 4 MiB");
    assert!(matches!(&error, Error::Io(e) if e.kind() == std::io::ErrorKind::StorageFull));
    assert!(matches!(pager.begin_write(), Err(Error::PreviousIo)));
    // Nothing was mapped past the end of the file: the old snapshot still reads.
    assert_eq!(&reader.page(id).expect("page")[..4], &[3, 3, 3, 3]);
}

#[test]
fn a_buffered_page_reused_inside_a_larger_extent_shows_the_new_bytes() {
    // Two single pages wait in the write-back buffer, are freed, and their space is taken by
    // a two-page extent, which waits in the buffer too. The buffer must drop the old images:
    // a read of the extent, and the file after a checkpoint, show new bytes.
    let (storage, pager) = mem_pager();
    let mut txn = pager.begin_write().expect("write");
    let a = txn.allocate(KIND, 1).expect("allocate");
    let b = txn.allocate(KIND, 1).expect("allocate");
    assert_eq!(b.0, a.0 + 1, "a fresh file hands out adjacent pages");
    txn.page_mut(a).expect("own")[..4].fill(1);
    txn.page_mut(b).expect("own")[..4].fill(2);
    txn.commit().expect("commit");
    let mut txn = pager.begin_write().expect("write");
    txn.free(Extent::new(a, 1));
    txn.free(Extent::new(b, 1));
    txn.commit().expect("commit");
    let mut txn = pager.begin_write().expect("write");
    let both = txn.allocate(KIND, 2).expect("allocate");
    assert_eq!(both, a, "the freed pages are reused");
    txn.page_mut(both).expect("own").fill(5);
    txn.set_root(0, u64::from(both.0));
    txn.commit().expect("commit");
    let read_back = |pager: &Pager| {
        let read = pager.begin_read().expect("read");
        let page = read.page(both).expect("extent").into_owned();
        assert_eq!(page.len(), 2 * 4096 - 32, "the whole extent");
        assert!(page.iter().all(|&x| x == 5), "new bytes");
    };
    read_back(&pager);
    pager.checkpoint(3).expect("checkpoint");
    read_back(&pager);
    pager.verify(&[Extent::new(both, 2)]).expect("verify");
    drop(pager);
    let reopened = Pager::open(
        Arc::new(MemStorage::from_bytes(storage.snapshot())),
        Options::default(),
    )
    .expect("reopen");
    read_back(&reopened);
}

#[test]
fn a_buffered_extent_reused_by_a_direct_write_never_comes_back() {
    // A three-page extent waits in the write-back buffer and is freed; a large commit then
    // writes a two-page extent straight to the file over its last two pages. The buffer
    // must drop the old extent although its first page is not rewritten: otherwise the
    // checkpoint's flush writes the old bytes over the new ones.
    let (storage, pager) = mem_pager();
    let mut txn = pager.begin_write().expect("write");
    let old = txn.allocate(KIND, 3).expect("allocate");
    txn.page_mut(old).expect("own").fill(1);
    txn.commit().expect("commit");
    let mut txn = pager.begin_write().expect("write");
    txn.free(Extent::new(old, 3));
    txn.commit().expect("commit");
    let mut txn = pager.begin_write().expect("write");
    let first = txn.allocate(KIND, 1).expect("allocate");
    assert_eq!(first, old, "the freed extent is reused");
    let tail = txn.allocate(KIND, 2).expect("allocate");
    assert_eq!(tail.0, old.0 + 1, "the rest of the hole");
    txn.free(Extent::new(first, 1));
    txn.page_mut(tail).expect("own").fill(5);
    // Past the buffer's per-commit bound: every image goes to the file at commit.
    let pages = (WRITE_BACK_COMMIT_BYTES_MAX / PAGE_SIZE + 1) as u32;
    let big = txn.allocate(KIND, pages).expect("allocate");
    txn.set_root(0, u64::from(tail.0));
    txn.set_root(1, u64::from(big.0));
    txn.commit().expect("commit");
    let read_back = |pager: &Pager| {
        let read = pager.begin_read().expect("read");
        let page = read.page(tail).expect("extent").into_owned();
        assert_eq!(page.len(), 2 * PAGE_SIZE - 32, "the whole extent");
        assert!(page.iter().all(|&x| x == 5), "new bytes");
    };
    read_back(&pager);
    pager.checkpoint(3).expect("checkpoint");
    read_back(&pager);
    pager
        .verify(&[Extent::new(tail, 2), Extent::new(big, pages)])
        .expect("verify");
    drop(pager);
    let reopened = Pager::open(
        Arc::new(MemStorage::from_bytes(storage.snapshot())),
        Options::default(),
    )
    .expect("reopen");
    read_back(&reopened);
}

#[test]
fn a_small_commits_extent_reaches_the_file_at_the_checkpoint() {
    let (storage, pager) = mem_pager();
    let mut txn = pager.begin_write().expect("write");
    let id = txn.allocate(KIND, 4).expect("allocate");
    txn.page_mut(id).expect("own").fill(3);
    txn.set_root(0, u64::from(id.0));
    txn.commit().expect("commit");
    let read = pager.begin_read().expect("read");
    let page = read.page(id).expect("buffered");
    assert_eq!(page.len(), 4 * PAGE_SIZE - 32);
    assert!(page.iter().all(|&x| x == 3));
    drop(read);
    let on_file = |storage: &MemStorage| {
        let bytes = storage.snapshot();
        let start = id.0 as usize * PAGE_SIZE + 32;
        bytes
            .get(start..start + 4 * PAGE_SIZE - 32)
            .map(<[u8]>::to_vec)
    };
    assert_ne!(
        on_file(&storage),
        Some(vec![3; 4 * PAGE_SIZE - 32]),
        "not written yet"
    );
    pager.checkpoint(1).expect("checkpoint");
    assert_eq!(
        on_file(&storage),
        Some(vec![3; 4 * PAGE_SIZE - 32]),
        "written by the checkpoint"
    );
    pager.verify(&[Extent::new(id, 4)]).expect("verify");
}

#[test]
fn buffered_pages_reach_the_file_at_the_checkpoint() {
    // A one-page commit leaves the file as it was; the checkpoint writes the page.
    let (storage, pager) = mem_pager();
    let before = storage.snapshot();
    let id = write_page(&pager, 0, 9);
    let offset = u64::from(id.0) as usize * 4096;
    let after_commit = storage.snapshot();
    assert!(
        after_commit.len() <= offset
            || after_commit[offset..offset + 4096]
                == before.get(offset..offset + 4096).unwrap_or(&[0; 4096])[..],
        "the commit wrote nothing to the page"
    );
    let read = pager.begin_read().expect("read");
    assert_eq!(&read.page(id).expect("buffered")[..4], &[9, 9, 9, 9]);
    drop(read);
    pager.checkpoint(1).expect("checkpoint");
    let reopened = Pager::open(
        Arc::new(MemStorage::from_bytes(storage.snapshot())),
        Options::default(),
    )
    .expect("reopen");
    let read = reopened.begin_read().expect("read");
    assert_eq!(&read.page(id).expect("from the file")[..4], &[9, 9, 9, 9]);
}

/// A header slot rewritten to `version` (checksum recomputed, so only the version is off).
fn with_version(mut file: Vec<u8>, version: u32) -> Vec<u8> {
    for slot in 0..2usize {
        let page = &mut file[slot * PAGE_SIZE..(slot + 1) * PAGE_SIZE];
        page[8..12].copy_from_slice(&version.to_le_bytes());
        let sum = xxhash_rust::xxh3::xxh3_64_with_seed(&page[..PAGE_SIZE - 8], slot as u64);
        page[PAGE_SIZE - 8..].copy_from_slice(&sum.to_le_bytes());
    }
    file
}

/// Every version from 1 to this build's opens; 0 and later versions are refused by name
/// (a newer file may hold what this build cannot read), never read as damage or data.
#[test]
fn unknown_format_versions_are_refused_and_known_ones_open() {
    let (storage, pager) = mem_pager();
    write_page(&pager, 0, 1);
    pager.checkpoint(1).expect("checkpoint");
    drop(pager);
    let good = storage.snapshot();
    for version in 1..=pager::FORMAT_VERSION {
        let bytes = with_version(good.clone(), version);
        Pager::open(Arc::new(MemStorage::from_bytes(bytes)), Options::default())
            .unwrap_or_else(|e| panic!("version {version} opens: {e}"));
    }
    for version in [0, pager::FORMAT_VERSION + 1, u32::MAX] {
        let bytes = with_version(good.clone(), version);
        match Pager::open(Arc::new(MemStorage::from_bytes(bytes)), Options::default()) {
            Err(Error::Version { found, .. }) => assert_eq!(found, version),
            other => panic!("version {version}: {other:?}"),
        }
    }
}

/// A checkpoint with no commit since the last writes only a header, keeping the durable
/// free list (so it needs no page a full disk could refuse): that list must still be
/// exact after an aborted transaction grew the file, which is why an abort hands the
/// pages it grew by back and lowers the mark again.
#[test]
fn a_checkpoint_after_an_aborted_growth_keeps_the_free_list_exact() {
    let (storage, pager) = mem_pager();
    let id = write_page(&pager, 0, 7);
    pager.checkpoint(1).expect("checkpoint");
    let before = pager.stats().expect("stats");
    {
        let mut txn = pager.begin_write().expect("write");
        txn.allocate(KIND, 40).expect("allocate past the mark");
        // Dropped: aborted.
    }
    let after_abort = pager.stats().expect("stats");
    assert_eq!(
        after_abort.page_count, before.page_count,
        "the mark goes back"
    );
    assert_eq!(
        after_abort.free_pages, before.free_pages,
        "free space as it was"
    );
    pager.checkpoint(2).expect("header-only checkpoint");
    let len_before = storage.len().expect("len");
    pager
        .checkpoint(2)
        .expect("the same position again: no write at all");
    assert_eq!(storage.len().expect("len"), len_before);
    drop(pager);
    let pager = Pager::open(
        Arc::new(MemStorage::from_bytes(storage.snapshot())),
        Options::default(),
    )
    .expect("reopen");
    assert_eq!(pager.checkpoint_lsn(), 2);
    pager
        .verify(&[Extent::new(id, 1)])
        .expect("every page accounted for");
}

/// A disk that is full from a given length on: writing or growing past it fails with
/// ENOSPC (nothing written); everything below it works.
#[derive(Debug, Default)]
struct FullPast {
    inner: MemStorage,
    limit: std::sync::atomic::AtomicU64,
}

impl Storage for FullPast {
    fn read_at(&self, buf: &mut [u8], offset: u64) -> std::io::Result<usize> {
        self.inner.read_at(buf, offset)
    }
    fn write_at(&self, buf: &[u8], offset: u64) -> std::io::Result<usize> {
        let limit = self.limit.load(std::sync::atomic::Ordering::SeqCst);
        if offset + buf.len() as u64 > limit {
            return Err(std::io::Error::from_raw_os_error(28));
        }
        self.inner.write_at(buf, offset)
    }
    fn sync(&self) -> std::io::Result<()> {
        self.inner.sync()
    }
    fn len(&self) -> std::io::Result<u64> {
        self.inner.len()
    }
    fn set_len(&self, len: u64) -> std::io::Result<()> {
        if len > self.limit.load(std::sync::atomic::Ordering::SeqCst) {
            return Err(std::io::Error::from_raw_os_error(28));
        }
        self.inner.set_len(len)
    }
}

/// Every commit keeps the next free list's pages past the mark unless a free extent
/// holds them, so a checkpoint never grows the file (a full disk would refuse it):
/// thousands of scattered frees since the last checkpoint, the growth slack used up,
/// then a checkpoint on a disk that refuses every growth. Red without the reserve (the
/// checkpoint grows the file by the list's 8 pages).
#[test]
fn a_checkpoint_never_grows_the_file_whatever_the_free_list_size() {
    let storage = Arc::new(FullPast {
        limit: u64::MAX.into(),
        ..FullPast::default()
    });
    let pager = Pager::open(storage.clone(), Options::default()).expect("open");
    let mut ids = Vec::new();
    let mut txn = pager.begin_write().expect("write");
    for _ in 0..8_000 {
        ids.push(txn.allocate(KIND, 1).expect("allocate"));
    }
    txn.commit().expect("commit");
    pager.checkpoint(1).expect("checkpoint");
    // Every other page freed, one commit each: 4,000 separate extents, an 8-page list.
    for id in ids.iter().step_by(2) {
        let mut txn = pager.begin_write().expect("write");
        txn.free(Extent::new(*id, 1));
        txn.commit().expect("commit");
    }
    assert_eq!(pager.stats().expect("stats").pending_pages, 4_000);
    // Commits of one page each use up the growth slack (the disk still has room).
    let slack = |pager: &Pager| {
        let stats = pager.stats().expect("stats");
        stats.file_bytes / PAGE_SIZE as u64 - u64::from(stats.page_count)
    };
    for _ in 0..2_000 {
        if slack(&pager) < 8 {
            break;
        }
        let mut txn = pager.begin_write().expect("write");
        txn.allocate(KIND, 1).expect("allocate");
        txn.commit().expect("commit");
    }
    // The disk is full from here.
    let len = storage.len().expect("len");
    storage
        .limit
        .store(len, std::sync::atomic::Ordering::SeqCst);
    pager.checkpoint(2).expect("checkpoint on a full disk");
    assert_eq!(storage.len().expect("len"), len, "the file did not grow");
}

/// `allocate_filled` equals `allocate` then copying the payload in: the same extent length
/// and kind, the payload from the first payload byte, zeros after it, before and after
/// a commit and a checkpoint; over payload lengths around the page boundaries.
#[test]
fn allocate_filled_equals_allocate_and_copy() {
    let (_storage, pager) = mem_pager();
    let payload_size = PAGE_SIZE - pager::limits::PAGE_HEADER_SIZE;
    let lengths = [
        0,
        1,
        payload_size - 1,
        payload_size,
        payload_size + 1,
        3 * PAGE_SIZE,
        16_384,
    ];
    let mut txn = pager.begin_write().expect("write");
    let mut made = Vec::new();
    for (i, &len) in lengths.iter().enumerate() {
        let payload: Vec<u8> = (0..len).map(|b| (b * 7 + i) as u8 | 1).collect();
        let filled = txn.allocate_filled(KIND, &payload).expect("filled");
        let pages = pager::pages_for_payload(len);
        let copied = txn.allocate(KIND, pages).expect("allocate");
        txn.page_mut(copied).expect("own")[..len].copy_from_slice(&payload);
        let a = txn.page(filled).expect("filled page").into_owned();
        let b = txn.page(copied).expect("copied page").into_owned();
        assert_eq!(a.len(), b.len(), "extent length for {len} bytes");
        assert_eq!(a, b, "contents for {len} bytes");
        assert_eq!(&a[..len], &payload[..], "payload of {len} bytes");
        assert!(a[len..].iter().all(|&z| z == 0), "zeros after {len} bytes");
        made.push((filled, pages, a));
    }
    txn.set_root(0, u64::from(made[0].0.0));
    txn.commit().expect("commit");
    pager.checkpoint(1).expect("checkpoint");
    let read = pager.begin_read().expect("read");
    for (id, _, image) in &made {
        assert_eq!(
            &*read.page(*id).expect("page"),
            &image[..],
            "{id:?} as committed"
        );
    }
    drop(read);
}
