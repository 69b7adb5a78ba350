//! The storage layer's integration tests: one binary, one module per area.

mod oplog;
mod store;
mod store_concurrency;

use storage::store::{Namespace, StoreOptions};
use wal::WalOptions;

/// The options of the model tests' in-memory stores: checkpoints only when a test asks,
/// no memory map, and small log blocks and preallocation chunks, so that records span
/// blocks and the log grows often.
pub fn memory_options() -> StoreOptions {
    StoreOptions {
        checkpoint_interval: None,
        checkpoint_log_bytes: 1 << 40,
        pager: pager::Options {
            mmap: false,
            ..pager::Options::default()
        },
        wal: WalOptions {
            block_len_target: 4096,
            preallocate_chunk: 8192,
            ..WalOptions::default()
        },
        ..StoreOptions::default()
    }
}

/// Collection `i` of the model tests: `db.c0`, `db.c1`, `other.c2`.
pub fn ns(i: usize) -> Namespace {
    Namespace::new(if i == 2 { "other" } else { "db" }, format!("c{i}"))
}

/// A fresh, empty directory for test `name`; returns the path of database file `file` in it.
pub fn temp_db(name: &str, file: &str) -> std::path::PathBuf {
    let dir = std::env::temp_dir().join(format!("mfdb-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).expect("temp dir");
    dir.join(file)
}
