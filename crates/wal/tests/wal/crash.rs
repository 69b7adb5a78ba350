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
}

fn step() -> impl Strategy<Value = Step> {
    prop_oneof![
        6 => (0usize..1500).prop_map(Step::Append),
        1 => (0usize..3).prop_map(|_| Step::Append(5000)),
        3 => Just(Step::Commit),
        1 => any::<u8>().prop_map(Step::Truncate),
    ]
}

/// Runs `steps` on the log in `dir`, extending `model` (indexed by LSN) and returning the
/// last LSN whose commit returned.
fn run(dir: &Arc<MemDir<CrashStorage>>, steps: &[Step], model: &mut Vec<Vec<u8>>) -> Lsn {
    let (wal, recovery) = open(dir);
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
