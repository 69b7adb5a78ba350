//! Integration test modules and their shared helpers.

mod basic;
mod corruption;
mod crash;
mod faults;
mod fixture;
mod group_commit;

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use wal::{Codec, Dir, Lsn, MemDir, MemStorage, Recovery, Storage, Wal, WalOptions};

/// The log's file name in every test.
pub const NAME: &str = "wal";

/// Small blocks and chunks, so tests cross block and preallocation boundaries quickly.
pub fn options_small() -> WalOptions {
    WalOptions {
        codec: Codec::Lz4,
        block_len_target: 1024,
        preallocate_chunk: 8192,
        flush_threshold: 2048,
        ..WalOptions::default()
    }
}

/// Opens the log in `dir` with small options, panicking on failure.
pub fn open<S: Storage + 'static>(dir: &Arc<MemDir<S>>) -> (Wal, Recovery) {
    Wal::open(Arc::clone(dir) as Arc<dyn Dir>, NAME, options_small()).expect("open")
}

/// A deterministic record payload: its length and contents follow from `seed`.
pub fn payload(seed: u64, len: usize) -> Vec<u8> {
    let mut x = seed.wrapping_mul(0x9e37_79b9_7f4a_7c15) | 1;
    (0..len)
        .map(|i| {
            if i % 3 == 0 {
                x ^= x << 13;
                x ^= x >> 7;
                x ^= x << 17;
            }
            // Mostly compressible, with some noise.
            if i % 5 == 0 {
                x as u8
            } else {
                b'a' + (i % 7) as u8
            }
        })
        .collect()
}

/// A log in memory, from raw file bytes.
pub fn mem_dir_with(bytes: Vec<u8>) -> Arc<MemDir<MemStorage>> {
    let dir = Arc::new(MemDir::<MemStorage>::new());
    dir.insert(NAME, MemStorage::from_bytes(bytes));
    dir
}

/// A fresh directory under the system temp dir (same file system as the repository).
pub fn temp_dir(tag: &str) -> std::path::PathBuf {
    static COUNTER: AtomicU64 = AtomicU64::new(0);
    let n = COUNTER.fetch_add(1, Ordering::Relaxed);
    let path = std::env::temp_dir().join(format!("wal-test-{}-{tag}-{n}", std::process::id()));
    let _ = std::fs::remove_dir_all(&path);
    std::fs::create_dir_all(&path).expect("temp dir");
    path
}

/// Checks that `recovery` holds exactly `model[lsn_start..]` up to some prefix, at least
/// through `committed` (the last LSN whose commit returned `Ok`).
pub fn check_prefix(recovery: &Recovery, model: &[Vec<u8>], committed: Lsn) {
    let start = recovery.lsn_start.0;
    for (i, (lsn, record)) in recovery.records.iter().enumerate() {
        assert_eq!(*lsn, Lsn(start + i as u64), "lsns must be dense");
        let expected = model
            .get(lsn.0 as usize)
            .expect("recovered a record never appended");
        assert_eq!(record, expected, "record {lsn:?} differs");
    }
    assert!(
        recovery.lsn_next.0 > committed.0,
        "committed {committed:?} lost: log ends before {:?}",
        recovery.lsn_next
    );
    assert!(
        recovery.lsn_next.0 as usize <= model.len(),
        "log longer than what was appended"
    );
}
