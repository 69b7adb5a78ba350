//! Every fault the faulty file can inject, at every operation of a workload: the log
//! either succeeds or fails and then refuses all work until reopened; a reopen recovers
//! every committed record; a failed fsync is never retried.

use super::{NAME, check_prefix, open, payload};
use std::sync::Arc;
use wal::{Fault, FaultKind, FaultyStorage, Lsn, MemDir, MemStorage, Op, Storage, Wal, WalError};

type Dir = MemDir<FaultyStorage<MemStorage>>;

fn new_dir() -> Arc<Dir> {
    Arc::new(MemDir::with_factory(|| {
        FaultyStorage::new(MemStorage::new())
    }))
}

/// The workload: appends, commits, a truncation. Returns the last LSN whose commit (or
/// truncation) returned `Ok`, and the first error.
fn workload(wal: &Wal, model: &mut Vec<Vec<u8>>) -> (Lsn, Option<WalError>) {
    let mut committed = Lsn(0);
    for i in 0..60u64 {
        let record = payload(model.len() as u64, 200 + (i as usize * 53) % 900);
        match wal.append(&record) {
            Ok(lsn) => {
                assert_eq!(lsn.0 as usize, model.len());
                model.push(record);
            }
            Err(error) => return (committed, Some(error)),
        }
        let result = if i == 40 {
            wal.truncate_before(Lsn(20))
        } else if i % 6 == 5 {
            wal.commit_all()
        } else {
            Ok(())
        };
        match result {
            Ok(()) if i % 6 == 5 || i == 40 => committed = wal.lsn_durable(),
            Ok(()) => {}
            Err(error) => return (committed, Some(error)),
        }
    }
    match wal.commit_all() {
        Ok(()) => (wal.lsn_durable(), None),
        Err(error) => (committed, Some(error)),
    }
}

/// Counts the operations of each kind the workload performs on the log file.
fn op_counts() -> Vec<(Op, u64)> {
    let dir = new_dir();
    let (wal, _) = open(&dir);
    let file = dir.file(NAME).expect("file");
    let before: Vec<u64> = Op::ALL.iter().map(|&op| file.count(op)).collect();
    let mut model = vec![Vec::new()];
    let (_, error) = workload(&wal, &mut model);
    assert!(error.is_none(), "workload fails without faults: {error:?}");
    Op::ALL
        .iter()
        .zip(before)
        .map(|(&op, before)| (op, file.count(op) - before))
        .collect()
}

fn assert_poisoned(wal: &Wal) {
    assert!(wal.is_poisoned());
    assert!(matches!(wal.append(b"x"), Err(WalError::Poisoned)));
    // The last record is either of unknown outcome or certainly never written.
    assert!(matches!(
        wal.commit_all(),
        Err(WalError::Poisoned | WalError::NotWritten(_))
    ));
    assert!(matches!(
        wal.truncate_before(Lsn(1)),
        Err(WalError::Poisoned)
    ));
}

fn run_with_fault(op: Op, nth: u64, kind: FaultKind) {
    let dir = new_dir();
    let (wal, _) = open(&dir);
    let file = dir.file(NAME).expect("file");
    file.inject(Fault {
        op,
        nth: file.count(op) + nth,
        kind,
        sticky: kind == FaultKind::NoSpace,
    });
    let mut model = vec![Vec::new()];
    let (committed, error) = workload(&wal, &mut model);
    let fired = file.fired() > 0 || dir.file(NAME).is_some_and(|f| f.fired() > 0);
    // A commit told `NotWritten` (the workload's last record) must not be in the log.
    let not_written =
        matches!(error, Some(WalError::NotWritten(_))).then(|| Lsn(model.len() as u64 - 1));
    match error {
        None => assert!(
            kind == FaultKind::ShortWrite || !fired,
            "{op:?}#{nth} {kind:?} fired but nothing failed"
        ),
        Some(WalError::Io(_) | WalError::NotWritten(_)) => {
            assert!(fired, "an i/o error without a fault");
            let syncs = dir.file(NAME).expect("file").count(Op::Sync);
            assert_poisoned(&wal);
            assert_eq!(
                dir.file(NAME).expect("file").count(Op::Sync),
                syncs,
                "a poisoned log touched the file"
            );
        }
        Some(other) => panic!("{op:?}#{nth} {kind:?}: unexpected error {other}"),
    }
    drop(wal);
    if let Some(file) = dir.file(NAME) {
        file.clear();
    }
    let (_, recovery) = open(&dir);
    check_prefix(&recovery, &model, committed);
    if let Some(lsn) = not_written {
        assert!(
            recovery
                .records
                .iter()
                .all(|(recovered, _)| *recovered < lsn),
            "{op:?}#{nth} {kind:?}: a record reported not written was recovered"
        );
    }
}

#[test]
fn every_injected_fault_poisons_or_is_survived_and_reopen_recovers() {
    let counts = op_counts();
    let mut runs = 0;
    for (op, count) in counts {
        for nth in 0..count {
            for kind in [FaultKind::Io, FaultKind::NoSpace, FaultKind::ShortWrite] {
                run_with_fault(op, nth, kind);
                runs += 1;
            }
        }
    }
    assert!(runs > 50, "only {runs} fault runs");
}

#[test]
fn failed_fsync_poisons_and_is_never_retried() {
    let dir = new_dir();
    let (wal, _) = open(&dir);
    let file = dir.file(NAME).expect("file");
    wal.append(b"durable").expect("append");
    wal.commit_all().expect("commit");
    let lsn = wal.append(b"lost?").expect("append");
    file.inject(Fault {
        op: Op::Sync,
        nth: file.count(Op::Sync),
        kind: FaultKind::Io,
        sticky: false,
    });
    assert!(matches!(wal.commit(lsn), Err(WalError::Io(_))));
    let syncs = file.count(Op::Sync);
    // The fault is gone, but the log must not try the sync again.
    assert!(matches!(wal.commit(lsn), Err(WalError::Poisoned)));
    assert_eq!(file.count(Op::Sync), syncs);
    assert_eq!(wal.lsn_durable(), Lsn(1));
    drop(wal);
    let (wal, recovery) = open(&dir);
    assert_eq!(recovery.records[0].1, b"durable");
    assert!(!wal.is_poisoned());
}

#[test]
fn short_writes_everywhere_still_produce_a_correct_log() {
    let dir = new_dir();
    let (wal, _) = open(&dir);
    let file = dir.file(NAME).expect("file");
    file.inject(Fault {
        op: Op::Write,
        nth: 0,
        kind: FaultKind::ShortWrite,
        sticky: true,
    });
    let mut model = vec![Vec::new()];
    for i in 0..40u64 {
        let record = payload(i, 900);
        wal.append(&record).expect("append");
        model.push(record);
    }
    wal.commit_all().expect("commit");
    assert!(file.fired() > 0);
    drop(wal);
    let (_, recovery) = open(&dir);
    check_prefix(&recovery, &model, Lsn(40));
    assert_eq!(recovery.records.len(), 40);
}

#[test]
fn enospc_while_preallocating_poisons() {
    let dir = new_dir();
    let (wal, _) = open(&dir);
    let file = dir.file(NAME).expect("file");
    file.inject(Fault {
        op: Op::Write,
        nth: file.count(Op::Write),
        kind: FaultKind::NoSpace,
        sticky: true,
    });
    // 8 KiB chunks: this needs to grow the file.
    wal.append(&payload(1, 20_000)).expect("append");
    let error = wal.commit_all().expect_err("no space");
    // The growth failed before the record's first byte: a definite "not in the log".
    match error {
        WalError::NotWritten(error) => assert_eq!(error.raw_os_error(), Some(28)),
        other => panic!("unexpected {other}"),
    }
    assert_poisoned(&wal);
}

#[test]
fn read_error_during_open_is_reported() {
    let dir = new_dir();
    drop(open(&dir));
    let file = dir.file(NAME).expect("file");
    file.inject(Fault {
        op: Op::Read,
        nth: file.count(Op::Read),
        kind: FaultKind::Io,
        sticky: false,
    });
    let result = Wal::open(
        Arc::clone(&dir) as Arc<dyn wal::Dir>,
        NAME,
        super::options_small(),
    );
    assert!(matches!(result, Err(WalError::Io(_))));
    let (_, recovery) = open(&dir);
    assert!(recovery.records.is_empty());
    let _ = file.len();
}

/// Faults in the new file generation written by `truncate_before`: the call fails, the
/// log is poisoned (no room for the file, ENOSPC: `TruncationNotDone`, not poisoned, the
/// partial file removed), and a reopen finds the old generation intact.
#[test]
fn fault_while_writing_the_new_generation_keeps_the_old_log() {
    use parking_lot::Mutex;
    for (op, nth, kind) in [
        (Op::Write, 0, FaultKind::Io),
        (Op::Write, 1, FaultKind::NoSpace),
        (Op::Write, 0, FaultKind::ShortWrite),
        (Op::Sync, 0, FaultKind::Io),
    ] {
        let plan: Arc<Mutex<Option<Fault>>> = Arc::new(Mutex::new(None));
        let factory_plan = Arc::clone(&plan);
        let dir = Arc::new(MemDir::with_factory(move || {
            let file = FaultyStorage::new(MemStorage::new());
            if let Some(fault) = *factory_plan.lock() {
                file.inject(fault);
            }
            file
        }));
        let (wal, _) = open(&dir);
        let mut model = vec![Vec::new()];
        for i in 0..30u64 {
            let record = payload(i, 400);
            wal.append(&record).expect("append");
            model.push(record);
        }
        wal.commit_all().expect("commit");
        *plan.lock() = Some(Fault {
            op,
            nth,
            kind,
            sticky: false,
        });
        let result = wal.truncate_before(Lsn(20));
        if kind == FaultKind::ShortWrite {
            result.expect("short writes are retried");
        } else if kind == FaultKind::NoSpace {
            // No room for the new file: the old log stays the log, not poisoned, every
            // record in it durable; the next truncation tries again.
            assert!(
                matches!(result, Err(WalError::TruncationNotDone(_))),
                "{op:?} {kind:?}: {result:?}"
            );
            assert!(!wal.is_poisoned(), "a full disk does not poison the log");
            assert!(
                !dir.names().iter().any(|n| n.ends_with(".tmp")),
                "the partial file is removed"
            );
        } else {
            assert!(
                matches!(result, Err(WalError::Io(_))),
                "{op:?} {kind:?}: {result:?}"
            );
            assert_poisoned(&wal);
        }
        drop(wal);
        *plan.lock() = None;
        let (_, recovery) = open(&dir);
        check_prefix(&recovery, &model, Lsn(30));
        let start = if kind == FaultKind::ShortWrite { 20 } else { 1 };
        assert_eq!(recovery.lsn_start, Lsn(start), "{op:?} {kind:?}");
    }
}

/// Growing the log ahead: a failed zero write changes nothing (the next commit grows the
/// file itself and succeeds), a failed sync of the zeros poisons the log (it may have
/// covered written records), as every failed sync does; committed records survive both.
#[test]
fn growing_ahead_fails_safe() {
    for (op, poisons) in [(Op::Write, false), (Op::Sync, true)] {
        let dir = new_dir();
        let (wal, _) = open(&dir);
        let file = dir.file(NAME).expect("file");
        let mut model = Vec::new();
        for i in 0..4u64 {
            let record = payload(i, 700);
            let lsn = wal.append(&record).expect("append");
            wal.commit(lsn).expect("commit");
            model.push(record);
        }
        while !wal.needs_growth() {
            let record = payload(model.len() as u64, 700);
            wal.commit(wal.append(&record).expect("append"))
                .expect("commit");
            model.push(record);
        }
        file.inject(Fault {
            op,
            nth: file.count(op),
            kind: FaultKind::Io,
            sticky: false,
        });
        let grown = wal.grow_ahead();
        file.clear();
        if poisons {
            assert!(grown.is_err(), "{op:?}: a failed sync is reported");
            assert!(wal.is_poisoned(), "{op:?}: and poisons the log");
        } else {
            assert!(!grown.expect("a failed zero write is no error"), "{op:?}");
            assert!(!wal.is_poisoned(), "{op:?}: the log goes on");
            let record = payload(model.len() as u64, 700);
            wal.commit(wal.append(&record).expect("append"))
                .expect("commit after");
            model.push(record);
        }
        drop(wal);
        let (_, recovery) = open(&dir);
        let got: Vec<Vec<u8>> = recovery.records.into_iter().map(|(_, r)| r).collect();
        assert_eq!(got, model, "{op:?}: every committed record");
    }
}
