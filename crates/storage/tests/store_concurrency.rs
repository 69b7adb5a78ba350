//! The store under concurrent writers, readers and checkpoints on a real file: no deadlock,
//! readers always see a consistent snapshot (catalog count = records), writers share
//! fsyncs, and after a clean close and reopen every acknowledged document is there.

use bson::rawdoc;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;
use storage::store::{Namespace, Store, StoreOptions};

const WRITERS: usize = 4;
const PER_WRITER: i64 = 300;

fn temp_path(name: &str) -> std::path::PathBuf {
    crate::temp_db(&format!("store-{name}"), "db.mfdb")
}

#[test]
fn writers_readers_and_checkpoints_run_together() {
    let path = temp_path("concurrency");
    let options = StoreOptions {
        checkpoint_interval: Some(Duration::from_millis(250)),
        checkpoint_log_bytes: 1 << 20,
        ..StoreOptions::default()
    };
    let store = Store::open_path(&path, options.clone()).expect("open");
    let stop = Arc::new(AtomicBool::new(false));
    let readers: Vec<_> = (0..2)
        .map(|_| {
            let (store, stop) = (Arc::clone(&store), Arc::clone(&stop));
            std::thread::spawn(move || {
                let mut snapshots = 0u64;
                while !stop.load(Ordering::Relaxed) {
                    let reader = store.read().expect("read");
                    for (_, meta) in reader.collections(Some("db")).expect("collections") {
                        let records = reader.scan(&meta, None).expect("scan").count() as u64;
                        assert_eq!(records, meta.count, "snapshot is consistent");
                    }
                    snapshots += 1;
                }
                snapshots
            })
        })
        .collect();
    let writers: Vec<_> = (0..WRITERS)
        .map(|w| {
            let store = Arc::clone(&store);
            std::thread::spawn(move || {
                let ns = Namespace::new("db", format!("c{w}"));
                for i in 0..PER_WRITER {
                    let mut writer = store.write().expect("write");
                    writer
                        .insert(&ns, &rawdoc! {"_id": i, "pad": "p".repeat(200)})
                        .expect("insert");
                    writer.commit().expect("commit");
                }
            })
        })
        .collect();
    for writer in writers {
        writer.join().expect("writer");
    }
    stop.store(true, Ordering::Relaxed);
    for reader in readers {
        assert!(reader.join().expect("reader") > 0);
    }
    let checkpoints = store.pager_stats().expect("stats").checkpoint_counter;
    assert!(
        checkpoints >= 1,
        "background checkpoints ran: {checkpoints}"
    );
    store.verify().expect("verify");
    store.close().expect("close");
    drop(store);
    let wal = path.with_file_name("db.mfdb-wal");
    assert!(!wal.exists(), "a clean close removes the log");
    let store = Store::open_path(&path, options).expect("reopen");
    let reader = store.read().expect("read");
    let collections = reader.collections(None).expect("collections");
    assert_eq!(collections.len(), WRITERS);
    for (_, meta) in collections {
        assert_eq!(meta.count, PER_WRITER as u64);
    }
    drop(reader);
    store.close().expect("close");
    let _ = std::fs::remove_dir_all(path.parent().expect("dir"));
}

/// A waiter for the next commit wakes when another thread commits (not before), and a
/// wait with no commit ends at its timeout with the count unchanged; a transaction that
/// logged nothing is not a commit.
#[test]
fn a_commit_wakes_its_waiters() {
    let path = temp_path("commit-signal");
    let store = Store::open_path(&path, StoreOptions::default()).expect("open");
    let ns = Namespace::new("db", "c");
    let seen = store.commit_count();
    assert_eq!(
        store.wait_for_commit(seen, Duration::from_millis(30)),
        seen,
        "no commit: the wait times out"
    );
    store
        .write()
        .expect("write")
        .commit()
        .expect("empty commit");
    assert_eq!(
        store.commit_count(),
        seen,
        "an empty transaction is no commit"
    );
    let waiter = {
        let store = Arc::clone(&store);
        std::thread::spawn(move || {
            let started = std::time::Instant::now();
            let count = store.wait_for_commit(seen, Duration::from_secs(30));
            (count, started.elapsed())
        })
    };
    std::thread::sleep(Duration::from_millis(50));
    let mut writer = store.write().expect("write");
    writer.insert(&ns, &rawdoc! {"_id": 1}).expect("insert");
    writer.commit().expect("commit");
    let (count, waited) = waiter.join().expect("waiter");
    assert_eq!(count, seen + 1);
    assert!(waited < Duration::from_secs(30), "woken by the commit");
    store.close().expect("close");
}
