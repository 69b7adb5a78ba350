//! Round trips through append, commit, reopen and truncation.

use super::{NAME, check_prefix, open, options_small, payload, temp_dir};
use std::sync::Arc;
use wal::limits::RECORD_LEN_MAX;
use wal::{Lsn, MemDir, MemStorage, Storage, Wal, WalError, WalOptions};

#[test]
fn new_log_is_empty_and_starts_at_lsn_one() {
    let dir = Arc::new(MemDir::<MemStorage>::new());
    let (wal, recovery) = open(&dir);
    assert!(recovery.records.is_empty());
    assert_eq!(recovery.lsn_next, Lsn(1));
    assert_eq!(wal.lsn_durable(), Lsn(0));
    drop(wal);
    let (_, recovery) = open(&dir);
    assert!(recovery.records.is_empty());
    assert_eq!(recovery.torn_tail, None);
}

#[test]
fn a_new_log_starts_at_lsn_first_and_an_existing_one_ignores_it() {
    let dir = Arc::new(MemDir::<MemStorage>::new());
    let options = WalOptions {
        lsn_first: Lsn(5000),
        ..options_small()
    };
    let dyn_dir = Arc::clone(&dir) as Arc<dyn wal::Dir>;
    let (wal, recovery) = Wal::open(Arc::clone(&dyn_dir), NAME, options.clone()).expect("open");
    assert_eq!(recovery.lsn_next, Lsn(5000));
    assert_eq!(recovery.lsn_start, Lsn(5000));
    let lsn = wal.append(b"first").expect("append");
    assert_eq!(lsn, Lsn(5000));
    wal.commit(lsn).expect("commit");
    drop(wal);
    let later = WalOptions {
        lsn_first: Lsn(9),
        ..options
    };
    let (wal, recovery) = Wal::open(dyn_dir, NAME, later).expect("reopen");
    assert_eq!(recovery.records, vec![(Lsn(5000), b"first".to_vec())]);
    assert_eq!(wal.append(b"second").expect("append"), Lsn(5001));
}

#[test]
fn committed_records_come_back_in_order_after_reopen() {
    let dir = Arc::new(MemDir::<MemStorage>::new());
    let (wal, _) = open(&dir);
    let mut model = vec![Vec::new()];
    for i in 0..200u64 {
        let record = payload(i, (i as usize * 37) % 3000);
        let lsn = wal.append(&record).expect("append");
        assert_eq!(lsn, Lsn(i + 1));
        model.push(record);
        if i % 7 == 0 {
            wal.commit(lsn).expect("commit");
            assert!(wal.lsn_durable() >= lsn);
        }
    }
    wal.commit_all().expect("commit all");
    drop(wal);
    let (wal, recovery) = open(&dir);
    assert_eq!(recovery.records.len(), 200);
    check_prefix(&recovery, &model, Lsn(200));
    assert_eq!(wal.append(b"next").expect("append"), Lsn(201));
}

#[test]
fn records_larger_than_a_block_and_empty_records_round_trip() {
    let dir = Arc::new(MemDir::<MemStorage>::new());
    let (wal, _) = open(&dir);
    let model = vec![
        Vec::new(),
        vec![],
        payload(1, 50_000),
        vec![],
        payload(2, 10),
    ];
    for record in &model[1..] {
        wal.append(record).expect("append");
    }
    wal.commit_all().expect("commit");
    drop(wal);
    let (_, recovery) = open(&dir);
    check_prefix(&recovery, &model, Lsn(4));
    assert_eq!(recovery.records.len(), 4);
}

#[test]
fn oversized_record_and_unknown_lsn_are_rejected() {
    let dir = Arc::new(MemDir::<MemStorage>::new());
    let (wal, _) = open(&dir);
    let huge = vec![0u8; RECORD_LEN_MAX + 1];
    assert!(matches!(
        wal.append(&huge),
        Err(WalError::RecordTooLarge { .. })
    ));
    assert!(matches!(
        wal.commit(Lsn(1)),
        Err(WalError::LsnOutOfRange { .. })
    ));
    assert!(!wal.is_poisoned());
}

#[test]
fn truncate_before_keeps_later_records_and_lsns_continue() {
    let dir = Arc::new(MemDir::<MemStorage>::new());
    let (wal, _) = open(&dir);
    let mut model = vec![Vec::new()];
    for i in 0..50u64 {
        let record = payload(i, 300);
        wal.append(&record).expect("append");
        model.push(record);
    }
    wal.commit(Lsn(30)).expect("commit");
    wal.truncate_before(Lsn(40)).expect("truncate");
    assert_eq!(
        wal.lsn_durable(),
        Lsn(50),
        "truncation makes everything durable"
    );
    let record = payload(99, 10);
    assert_eq!(wal.append(&record).expect("append"), Lsn(51));
    model.push(record);
    wal.commit(Lsn(51)).expect("commit");
    drop(wal);
    assert_eq!(
        dir.names(),
        vec![NAME.to_owned()],
        "temporary file left behind"
    );
    let (wal, recovery) = open(&dir);
    assert_eq!(recovery.lsn_start, Lsn(40));
    assert_eq!(recovery.records.first().map(|r| r.0), Some(Lsn(40)));
    check_prefix(&recovery, &model, Lsn(51));
    assert_eq!(recovery.records.len(), 12);
    // Truncating everything leaves an empty log that still continues the LSNs.
    wal.truncate_before(Lsn(52)).expect("truncate all");
    drop(wal);
    let (wal, recovery) = open(&dir);
    assert!(recovery.records.is_empty());
    assert_eq!(recovery.lsn_next, Lsn(52));
    assert_eq!(wal.append(b"x").expect("append"), Lsn(52));
    assert!(matches!(
        wal.truncate_before(Lsn(54)),
        Err(WalError::LsnOutOfRange { .. })
    ));
}

/// A fresh log is one chunk long, and a truncation's generation is the smallest whole
/// number of chunks that leaves a quarter chunk past its records: the zeros' fdatasync
/// is most of what opening a database costs.
#[test]
fn fresh_and_truncated_logs_preallocate_one_chunk_past_their_records() {
    let path = temp_dir("chunks");
    let chunk = 1u64 << 16;
    let options = WalOptions {
        preallocate_chunk: chunk,
        ..options_small()
    };
    let (wal, _) = Wal::open_path(&path, NAME, options.clone()).expect("open");
    let len = || std::fs::metadata(path.join(NAME)).expect("metadata").len();
    assert_eq!(len(), chunk, "a fresh log");
    // About 60 KiB of retained records: less than a quarter chunk left in one chunk.
    for i in 0..100u64 {
        let lsn = wal.append(&payload(i, 600)).expect("append");
        wal.commit(lsn).expect("commit");
    }
    wal.truncate_before(Lsn(1)).expect("truncate");
    assert_eq!(len(), 2 * chunk, "records plus at least a quarter chunk");
    wal.truncate_before(Lsn(95)).expect("truncate");
    assert_eq!(len(), chunk, "few records left");
    drop(wal);
    std::fs::remove_dir_all(&path).expect("cleanup");
}

#[test]
fn os_log_is_preallocated_and_round_trips() {
    let path = temp_dir("os");
    let options = WalOptions {
        preallocate_chunk: 1 << 16,
        ..options_small()
    };
    let (wal, _) = Wal::open_path(&path, NAME, options.clone()).expect("open");
    let mut model = vec![Vec::new()];
    for i in 0..300u64 {
        let record = payload(i, 700);
        let lsn = wal.append(&record).expect("append");
        model.push(record);
        if i % 10 == 9 {
            wal.commit(lsn).expect("commit");
        }
    }
    drop(wal);
    let len = std::fs::metadata(path.join(NAME)).expect("metadata").len();
    assert_eq!(len % (1 << 16), 0, "file length {len} is not whole chunks");
    let (wal, recovery) = Wal::open_path(&path, NAME, options).expect("reopen");
    check_prefix(&recovery, &model, Lsn(300));
    wal.truncate_before(Lsn(250)).expect("truncate");
    drop(wal);
    let storage = wal::OsStorage::open(&path.join(NAME)).expect("open file");
    assert!(
        storage.len().expect("len") < len,
        "truncation did not shrink the file"
    );
    std::fs::remove_dir_all(&path).expect("cleanup");
}

/// Growing the preallocated space ahead (the store does it on its checkpointer thread)
/// takes the zeros off the commit path: after it, every commit until space runs low again
/// is one write and one sync, and the log reopens with every record and no torn tail.
#[test]
fn growing_ahead_leaves_commits_one_write_each() {
    let dir = Arc::new(MemDir::with_factory(|| {
        wal::FaultyStorage::new(MemStorage::default())
    }));
    let (wal, _) = open(&dir);
    let file = dir.file(NAME).expect("file");
    let mut records = Vec::new();
    let commit = |wal: &Wal, records: &mut Vec<Vec<u8>>| {
        let record = payload(records.len() as u64, 900);
        let lsn = wal.append(&record).expect("append");
        wal.commit(lsn).expect("commit");
        records.push(record);
    };
    while !wal.needs_growth() {
        commit(&wal, &mut records);
    }
    for round in 0..3 {
        let len = file.len().expect("len");
        assert!(wal.grow_ahead().expect("grow"), "round {round}: grew");
        // Real zeros, not a size: the space is allocated (D12).
        assert!(
            file.len().expect("len") >= len + 8192,
            "round {round}: zeros written"
        );
        assert!(!wal.needs_growth(), "round {round}: space ahead again");
        assert!(
            !wal.grow_ahead().expect("grow"),
            "round {round}: nothing to do"
        );
        let mut commits = 0;
        while !wal.needs_growth() {
            let (writes, syncs) = (file.count(wal::Op::Write), file.count(wal::Op::Sync));
            commit(&wal, &mut records);
            assert_eq!(
                file.count(wal::Op::Write) - writes,
                1,
                "round {round}: one write"
            );
            assert_eq!(
                file.count(wal::Op::Sync) - syncs,
                1,
                "round {round}: one sync"
            );
            commits += 1;
        }
        assert!(commits > 1, "round {round}: {commits} commits fit a chunk");
    }
    drop(wal);
    let (_, recovery) = open(&dir);
    assert_eq!(recovery.torn_tail, None);
    let got: Vec<Vec<u8>> = recovery.records.into_iter().map(|(_, r)| r).collect();
    assert_eq!(got, records);
}

/// A vectored write puts the same bytes in the same places as a write of the concatenated
/// buffers: empty buffers, buffers of every length, more buffers than one `pwritev` takes
/// (IOV_MAX), over existing content, on a real file and through the default method.
#[test]
fn vectored_writes_equal_the_concatenated_write() {
    let path = temp_dir("vectored");
    let file = wal::OsStorage::open(&path.join("data")).expect("open file");
    let memory = MemStorage::default();
    let lengths = (0..2_500usize).map(|i| (i * 7919) % 37);
    let pieces: Vec<Vec<u8>> = lengths
        .enumerate()
        .map(|(i, len)| (0..len).map(|j| (i * 31 + j) as u8 | 1).collect())
        .collect();
    let bufs: Vec<&[u8]> = pieces.iter().map(Vec::as_slice).collect();
    let joined = pieces.concat();
    for storage in [&file as &dyn Storage, &memory] {
        storage
            .write_all_at(&vec![0xee; joined.len() + 100], 0)
            .expect("fill");
        storage
            .write_all_vectored_at(&bufs, 50)
            .expect("vectored write");
        let mut back = vec![0; joined.len() + 100];
        storage.read_exact_at(&mut back, 0).expect("read back");
        assert!(
            back[..50].iter().all(|&b| b == 0xee),
            "bytes before the write changed"
        );
        assert_eq!(
            back[50..50 + joined.len()],
            joined[..],
            "the written bytes differ"
        );
        assert!(
            back[50 + joined.len()..].iter().all(|&b| b == 0xee),
            "bytes after it changed"
        );
    }
    std::fs::remove_dir_all(&path).expect("cleanup");
}
