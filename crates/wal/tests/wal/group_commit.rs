//! Many threads committing at once share writes and fsyncs, and each learns when its own
//! record is durable.

use super::{NAME, open, payload};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use wal::{FaultyStorage, Lsn, MemDir, MemStorage, Op, Storage};

/// A storage whose sync is slow, so committers pile up behind the leader.
#[derive(Debug, Default)]
struct SlowSync(MemStorage);

impl Storage for SlowSync {
    fn read_at(&self, buf: &mut [u8], offset: u64) -> std::io::Result<usize> {
        self.0.read_at(buf, offset)
    }
    fn write_at(&self, buf: &[u8], offset: u64) -> std::io::Result<usize> {
        self.0.write_at(buf, offset)
    }
    fn sync(&self) -> std::io::Result<()> {
        std::thread::sleep(std::time::Duration::from_micros(300));
        Ok(())
    }
    fn len(&self) -> std::io::Result<u64> {
        self.0.len()
    }
    fn set_len(&self, len: u64) -> std::io::Result<()> {
        self.0.set_len(len)
    }
}

#[test]
fn concurrent_commits_share_fsyncs_and_all_become_durable() {
    let dir = Arc::new(MemDir::with_factory(|| {
        FaultyStorage::new(SlowSync::default())
    }));
    let (wal, _) = open(&dir);
    let wal = Arc::new(wal);
    let file = dir.file(NAME).expect("file");
    let syncs_before = file.count(Op::Sync);
    let threads = 16;
    let per_thread = 50;
    let handles: Vec<_> = (0..threads)
        .map(|t| {
            let wal = Arc::clone(&wal);
            std::thread::spawn(move || {
                let mut mine = Vec::new();
                for i in 0..per_thread {
                    let record = payload(t * 1000 + i, 100);
                    let lsn = wal.append(&record).expect("append");
                    wal.commit(lsn).expect("commit");
                    assert!(wal.lsn_durable() >= lsn, "commit returned before durable");
                    mine.push((lsn, record));
                }
                mine
            })
        })
        .collect();
    let mut all: Vec<(Lsn, Vec<u8>)> = handles
        .into_iter()
        .flat_map(|h| h.join().expect("thread"))
        .collect();
    all.sort();
    let commits = threads * per_thread;
    let syncs = file.count(Op::Sync) - syncs_before;
    assert!(
        syncs * 2 < commits,
        "{syncs} fsyncs for {commits} commits: group commit is not grouping"
    );
    drop(wal);
    let (_, recovery) = open(&dir);
    assert_eq!(recovery.records, all);
}

#[test]
fn appends_racing_a_truncation_are_all_kept() {
    let dir = Arc::new(MemDir::<MemStorage>::new());
    let (wal, _) = open(&dir);
    let wal = Arc::new(wal);
    let stop = Arc::new(AtomicBool::new(false));
    let writer = {
        let wal = Arc::clone(&wal);
        let stop = Arc::clone(&stop);
        std::thread::spawn(move || {
            let mut count = 0u64;
            while !stop.load(Ordering::Relaxed) || count < 100 {
                let lsn = wal.append(&payload(count, 64)).expect("append");
                if count.is_multiple_of(3) {
                    wal.commit(lsn).expect("commit");
                }
                count += 1;
            }
            wal.commit_all().expect("commit");
            count
        })
    };
    for _ in 0..20 {
        let lsn = wal.lsn_durable();
        wal.truncate_before(Lsn(lsn.0.max(1))).expect("truncate");
    }
    stop.store(true, Ordering::Relaxed);
    let count = writer.join().expect("writer");
    let lsn_next = wal.lsn_next();
    assert_eq!(lsn_next, Lsn(count + 1));
    drop(wal);
    let (_, recovery) = open(&dir);
    assert_eq!(recovery.lsn_next, lsn_next);
    let first = recovery.lsn_start.0;
    for (lsn, record) in &recovery.records {
        assert_eq!(record, &payload(lsn.0 - 1, 64));
        assert!(lsn.0 >= first);
    }
}
