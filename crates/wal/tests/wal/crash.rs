//! Random record sequences, random crash points: recovery yields a prefix holding every
//! record whose commit returned, and nothing that was never appended.

use super::{NAME, check_prefix, open, payload};
use proptest::prelude::*;
use std::sync::Arc;
use wal::{CrashStorage, Lsn, MemDir};

#[derive(Debug, Clone)]
enum Step {
    Append(usize),
    Commit,
    Truncate(u8),
    /// Drop and reopen without a crash (a process exit: unsynced writes stay readable).
    Reopen,
}

fn step() -> impl Strategy<Value = Step> {
    prop_oneof![
        6 => (0usize..1500).prop_map(Step::Append),
        1 => (0usize..3).prop_map(|_| Step::Append(5000)),
        3 => Just(Step::Commit),
        1 => any::<u8>().prop_map(Step::Truncate),
        1 => Just(Step::Reopen),
    ]
}

/// Runs `steps` on the log in `dir`, extending `model` (indexed by LSN) and returning the
/// last LSN whose commit returned.
fn run(dir: &Arc<MemDir<CrashStorage>>, steps: &[Step], model: &mut Vec<Vec<u8>>) -> Lsn {
    let (mut wal, recovery) = open(dir);
    assert_eq!(recovery.lsn_next.0 as usize, model.len());
    let mut committed = Lsn(0);
    for step in steps {
        match step {
            Step::Append(len) => {
                let record = payload(model.len() as u64, *len);
                let lsn = wal.append(&record).expect("append");
                assert_eq!(lsn.0 as usize, model.len());
                model.push(record);
            }
            Step::Commit => {
                wal.commit_all().expect("commit");
                committed = wal.lsn_durable();
            }
            Step::Truncate(fraction) => {
                let lsn_next = wal.lsn_next().0;
                let lsn = 1 + (lsn_next - 1) * u64::from(*fraction) / 255;
                wal.truncate_before(Lsn(lsn)).expect("truncate");
                committed = wal.lsn_durable();
            }
            Step::Reopen => {
                drop(wal);
                let recovery;
                (wal, recovery) = open(dir);
                // Nothing is lost without a crash, but only committed records are promised.
                check_prefix(&recovery, model, committed);
                model.truncate(recovery.lsn_next.0 as usize);
            }
        }
    }
    committed
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(128))]

    #[test]
    fn recovery_after_crash_keeps_every_committed_record(
        rounds in prop::collection::vec(
            (prop::collection::vec(step(), 0..40), any::<u64>()),
            1..4,
        ),
    ) {
        let dir = Arc::new(MemDir::with_factory(CrashStorage::new));
        let mut model = vec![Vec::new()];
        let mut committed = Lsn(0);
        for (steps, seed) in &rounds {
            let committed_now = run(&dir, steps, &mut model);
            committed = committed.max(committed_now);
            let file = dir.file(NAME).expect("log file");
            file.crash(*seed);
            let (_, recovery) = open(&dir);
            check_prefix(&recovery, &model, committed);
            model.truncate(recovery.lsn_next.0 as usize);
        }
    }
}

/// A crash tears the first block of a two-block write and keeps the second. After
/// recovery a new block of the same size fills the hole, so the stale second block
/// follows it by offset and by LSN; only its older session keeps it out of the log.
#[test]
fn stale_block_from_a_crashed_session_is_not_resurrected() {
    use wal::limits::FILE_HEADER_LEN;
    use wal::{Codec, Dir, MemStorage, Storage, Wal, WalOptions};
    let options = WalOptions {
        codec: Codec::Raw,
        ..super::options_small()
    };
    let dir = Arc::new(MemDir::<MemStorage>::new());
    let open_raw = |dir: &Arc<MemDir<MemStorage>>| {
        Wal::open(Arc::clone(dir) as Arc<dyn Dir>, NAME, options.clone()).expect("open")
    };
    let (wal, _) = open_raw(&dir);
    wal.append(&payload(1, 600)).expect("append");
    wal.commit_all().expect("commit");
    let first_end = FILE_HEADER_LEN as usize + 1024;
    wal.append(&payload(2, 600)).expect("append");
    wal.append(&payload(3, 600)).expect("append");
    wal.commit_all().expect("commit");
    drop(wal);
    // The crash: block 2 (LSN 2) torn to zeros, block 3 (LSN 3) intact.
    let original = dir.file(NAME).expect("file").snapshot();
    let mut bytes = original.clone();
    bytes[first_end..first_end + 1024].fill(0);
    let dir = super::mem_dir_with(bytes);
    let (wal, recovery) = open_raw(&dir);
    assert_eq!(recovery.lsn_next, Lsn(2));
    // A new record of the same size lands exactly where block 2 was.
    let fresh = payload(99, 600);
    assert_eq!(wal.append(&fresh).expect("append"), Lsn(2));
    wal.commit_all().expect("commit");
    drop(wal);
    // Recovery zeroed the stale block; put it back, as if that write had been lost, so
    // that only the session check stands between it and the log.
    let file = dir.file(NAME).expect("file");
    let stale = &original[first_end + 1024..first_end + 2048];
    file.write_all_at(stale, (first_end + 1024) as u64)
        .expect("restore");
    let (_, recovery) = open_raw(&dir);
    assert_eq!(recovery.lsn_next, Lsn(3), "stale record 3 came back");
    assert_eq!(recovery.records[1], (Lsn(2), fresh));
}

/// Several threads append and commit concurrently, then the machine crashes: every
/// record whose commit returned survives, and the rest is a clean prefix.
#[test]
fn concurrent_committers_then_crash_keep_every_acknowledged_record() {
    for seed in 0..24u64 {
        let dir = Arc::new(MemDir::with_factory(CrashStorage::new));
        let (wal, _) = open(&dir);
        let wal = Arc::new(wal);
        let handles: Vec<_> = (0..4u64)
            .map(|t| {
                let wal = Arc::clone(&wal);
                std::thread::spawn(move || {
                    let mut acknowledged = Vec::new();
                    for i in 0..30u64 {
                        let record = payload(t * 100 + i, 50 + ((t + i) as usize * 97) % 1200);
                        let lsn = wal.append(&record).expect("append");
                        if (i + t + seed) % 3 != 0 {
                            wal.commit(lsn).expect("commit");
                            acknowledged.push((lsn, record));
                        }
                    }
                    acknowledged
                })
            })
            .collect();
        let acknowledged: Vec<(Lsn, Vec<u8>)> = handles
            .into_iter()
            .flat_map(|h| h.join().expect("thread"))
            .collect();
        drop(wal);
        dir.file(NAME).expect("file").crash(seed);
        let (_, recovery) = open(&dir);
        for (lsn, record) in &acknowledged {
            let index = (lsn.0 - 1) as usize;
            assert_eq!(
                recovery.records.get(index),
                Some(&(*lsn, record.clone())),
                "seed {seed}"
            );
        }
    }
}
