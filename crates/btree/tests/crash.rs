//! Crash tests with the crash model: the engine's contract with the pager is simulated with
//! an in-memory, durable WAL (every committed transaction is "logged" before commit). After
//! a crash at a random point (after the workload, or inside a random sync, so with a
//! checkpoint in flight; unsynced page writes kept, dropped or torn), the file reopens
//! at its last checkpoint, replaying the logged transactions after `checkpoint_lsn` yields
//! exactly the model with every committed change, and both `verify`s pass.

use crate::common::{TREE, contents, verify_all};
use crate::support::Rng;
use crate::support::crash::CrashStorage;
use pager::{Options, Pager};
use std::collections::BTreeMap;
use std::sync::Arc;
use wal::MemStorage;

type Txn = Vec<(Vec<u8>, Option<Vec<u8>>)>;

fn random_txn(rng: &mut Rng) -> Txn {
    (0..1 + rng.below(30))
        .map(|_| {
            let key = format!("k{:04}", rng.below(400)).into_bytes();
            let value = match rng.below(10) {
                0 => None,
                1 => Some(vec![rng.below(256) as u8; 700 + rng.below(6000) as usize]),
                _ => Some(vec![rng.below(256) as u8; rng.below(60) as usize]),
            };
            (key, value)
        })
        .collect()
}

fn apply(pager: &Pager, txn_ops: &Txn) {
    let mut txn = pager.begin_write().expect("write");
    for (key, value) in txn_ops {
        match value {
            Some(value) => {
                TREE.insert(&mut txn, key, value).expect("insert");
            }
            None => {
                TREE.remove(&mut txn, key).expect("remove");
            }
        }
    }
    txn.commit().expect("commit");
}

fn apply_model(model: &mut BTreeMap<Vec<u8>, Vec<u8>>, txn_ops: &Txn) {
    for (key, value) in txn_ops {
        match value {
            Some(value) => model.insert(key.clone(), value.clone()),
            None => model.remove(key),
        };
    }
}

#[test]
fn recovery_plus_wal_replay_holds_every_committed_change() {
    for seed in 1..=60u64 {
        let mut rng = Rng(seed * 7919);
        let storage = Arc::new(CrashStorage::new());
        let pager = Pager::open(storage.clone(), Options::default()).expect("open");
        let mut wal: Vec<Txn> = Vec::new();
        let mut model = BTreeMap::new();
        let rounds = 5 + rng.below(60);
        // Odd seeds lose power inside a sync (a checkpoint in flight), even ones after.
        if seed % 2 == 1 {
            storage.crash_at_sync(rng.below(rounds / 8 + 1));
        }
        for _ in 0..rounds {
            if storage.crashed() {
                break;
            }
            let txn = random_txn(&mut rng);
            wal.push(txn.clone()); // logged (durable) before the pager commit
            apply(&pager, &txn);
            apply_model(&mut model, &txn);
            if rng.below(4) == 0 {
                // Fails only when the power fails inside it.
                let _ = pager.checkpoint(wal.len() as u64);
            }
        }
        let image = storage.crash(&mut rng);
        let reopened = Pager::open(Arc::new(MemStorage::from_bytes(image)), Options::default())
            .unwrap_or_else(|e| panic!("seed {seed}: crashed file must open: {e}"));
        let lsn = reopened.checkpoint_lsn() as usize;
        let mut at_checkpoint = BTreeMap::new();
        for txn in &wal[..lsn] {
            apply_model(&mut at_checkpoint, txn);
        }
        assert_eq!(
            contents(&reopened),
            at_checkpoint,
            "seed {seed}: state at lsn {lsn}"
        );
        verify_all(&reopened);
        for txn in &wal[lsn..] {
            apply(&reopened, txn);
        }
        assert_eq!(contents(&reopened), model, "seed {seed}: after replay");
        verify_all(&reopened);
        reopened
            .checkpoint(wal.len() as u64)
            .expect("checkpoint after recovery");
        verify_all(&reopened);
    }
}

#[test]
fn crash_during_a_checkpoint_keeps_the_previous_one() {
    let mut rng = Rng(5);
    for round in 0..40u64 {
        let storage = Arc::new(CrashStorage::new());
        let pager = Pager::open(storage.clone(), Options::default()).expect("open");
        let first = random_txn(&mut rng);
        apply(&pager, &first);
        pager.checkpoint(1).expect("checkpoint");
        let second = random_txn(&mut rng);
        apply(&pager, &second);
        // Fail the seam part-way through the second checkpoint, then crash.
        storage.fail_writes_after(rng.below(3));
        let _ = pager.checkpoint(2);
        let image = storage.crash(&mut rng);
        let reopened = Pager::open(Arc::new(MemStorage::from_bytes(image)), Options::default())
            .expect("opens");
        let mut model = BTreeMap::new();
        apply_model(&mut model, &first);
        if reopened.checkpoint_lsn() == 2 {
            apply_model(&mut model, &second);
        }
        assert_eq!(contents(&reopened), model, "round {round}");
        verify_all(&reopened);
    }
}

/// A small deterministic run, crashed at every sync point in turn (and once after the end).
#[test]
fn crash_at_every_sync_point_of_a_small_run() {
    let workload: Vec<Txn> = {
        let mut rng = Rng(99);
        (0..24).map(|_| random_txn(&mut rng)).collect()
    };
    let run = |crash_at: Option<u64>, rng: &mut Rng| {
        let storage = Arc::new(CrashStorage::new());
        let pager = Pager::open(storage.clone(), Options::default()).expect("open");
        if let Some(k) = crash_at {
            storage.crash_at_sync(k);
        }
        let mut logged = 0;
        for (i, txn) in workload.iter().enumerate() {
            if storage.crashed() {
                break;
            }
            logged = i + 1;
            apply(&pager, txn);
            if i % 3 == 2 {
                let _ = pager.checkpoint(logged as u64);
            }
        }
        (storage.crash(rng), logged, storage.crashed())
    };
    let mut rng = Rng(1234);
    for k in 0.. {
        let (image, logged, crashed) = run(Some(k), &mut rng);
        let reopened = Pager::open(Arc::new(MemStorage::from_bytes(image)), Options::default())
            .unwrap_or_else(|e| panic!("sync point {k}: crashed file must open: {e}"));
        let lsn = reopened.checkpoint_lsn() as usize;
        let mut model = BTreeMap::new();
        for txn in &workload[..lsn] {
            apply_model(&mut model, txn);
        }
        assert_eq!(
            contents(&reopened),
            model,
            "sync point {k}: state at lsn {lsn}"
        );
        verify_all(&reopened);
        for txn in &workload[lsn..logged] {
            apply(&reopened, txn);
            apply_model(&mut model, txn);
        }
        assert_eq!(contents(&reopened), model, "sync point {k}: after replay");
        verify_all(&reopened);
        if !crashed {
            // Every sync point of the run has been a crash point: 8 checkpoints, 2 syncs each.
            assert_eq!(k, 16, "sync points in the run");
            break;
        }
    }
}
