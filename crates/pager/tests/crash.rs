//! Crashes at random points of a page-churn workload reopen at the last durable checkpoint,
//! with every page it references intact and the free list consistent.

use crate::support::Rng;
use crate::support::crash::CrashStorage;
use pager::{Extent, KIND_USER_MIN, Options, PageId, Pager};
use std::sync::Arc;
use wal::MemStorage;

/// Root slot 0 names a "table" page listing up to 64 page ids; each listed page is filled
/// with one byte derived from its generation. The model is the table content per
/// checkpoint.
fn apply_round(pager: &Pager, rng: &mut Rng, round: u64) {
    let mut txn = pager.begin_write().expect("write");
    let mut ids: Vec<u32> = match txn.root(0) {
        0 => Vec::new(),
        table => {
            let page = txn.page(PageId(table as u32)).expect("table");
            let n = u32::from_le_bytes(page[..4].try_into().expect("4")) as usize;
            (0..n)
                .map(|i| u32::from_le_bytes(page[4 + 4 * i..8 + 4 * i].try_into().expect("4")))
                .collect()
        }
    };
    for _ in 0..rng.below(6) {
        if !ids.is_empty() && rng.below(2) == 0 {
            let victim = ids.swap_remove(rng.below(ids.len() as u64) as usize);
            let pages = pages_of(victim);
            txn.free(Extent::new(PageId(victim), pages));
        } else if ids.len() < 64 {
            let pages = 1 + rng.below(3) as u32;
            let id = txn.allocate(KIND_USER_MIN, pages).expect("allocate");
            LENGTHS.with(|l| l.borrow_mut().insert(id.0, pages));
            let fill = (id.0 as u64 * 31 + round) as u8;
            txn.page_mut(id).expect("own")[..16].fill(fill);
            ids.push(id.0);
        }
    }
    let table = match txn.root(0) {
        0 => txn.allocate(KIND_USER_MIN, 1).expect("table"),
        old => txn.cow(PageId(old as u32)).expect("cow table"),
    };
    let page = txn.page_mut(table).expect("own");
    page[..4].copy_from_slice(&(ids.len() as u32).to_le_bytes());
    for (i, id) in ids.iter().enumerate() {
        page[4 + 4 * i..8 + 4 * i].copy_from_slice(&id.to_le_bytes());
    }
    txn.set_root(0, u64::from(table.0));
    txn.commit().expect("commit");
}

/// Extent lengths are a function of the id in this test (recorded in a side table).
fn pages_of(id: u32) -> u32 {
    LENGTHS.with(|l| *l.borrow().get(&id).expect("known extent"))
}

thread_local! {
    static LENGTHS: std::cell::RefCell<std::collections::HashMap<u32, u32>> =
        std::cell::RefCell::new(std::collections::HashMap::new());
}

fn table(pager: &Pager) -> Vec<(u32, Vec<u8>)> {
    let read = pager.begin_read().expect("read");
    let root = read.root(0);
    if root == 0 {
        return Vec::new();
    }
    let page = read.page(PageId(root as u32)).expect("table");
    let n = u32::from_le_bytes(page[..4].try_into().expect("4")) as usize;
    (0..n)
        .map(|i| {
            let id = u32::from_le_bytes(page[4 + 4 * i..8 + 4 * i].try_into().expect("4"));
            let body = read.page(PageId(id)).expect("listed page verifies");
            (id, body[..16].to_vec())
        })
        .collect()
}

fn owned(pager: &Pager) -> Vec<Extent> {
    let read = pager.begin_read().expect("read");
    let root = read.root(0);
    if root == 0 {
        return Vec::new();
    }
    let mut out = vec![Extent::new(PageId(root as u32), 1)];
    let page = read.page(PageId(root as u32)).expect("table");
    let n = u32::from_le_bytes(page[..4].try_into().expect("4")) as usize;
    for i in 0..n {
        let id = u32::from_le_bytes(page[4 + 4 * i..8 + 4 * i].try_into().expect("4"));
        let len = read.page(PageId(id)).expect("page").len() + 32;
        out.push(Extent::new(PageId(id), (len / 4096) as u32));
    }
    out
}

#[test]
fn crash_at_any_point_reopens_at_the_last_checkpoint() {
    for seed in 1..=80u64 {
        let mut rng = Rng(seed);
        let storage = Arc::new(CrashStorage::new());
        let pager = Pager::open(storage.clone(), Options::default()).expect("open");
        let rounds = 5 + rng.below(40);
        // Half the runs lose power inside a sync (a checkpoint in flight), half after.
        if seed % 2 == 0 {
            storage.crash_at_sync(rng.below(rounds / 3 + 1));
        }
        let mut checkpoints = vec![(0u64, Vec::new())];
        let mut in_flight = None;
        for round in 1..=rounds {
            if storage.crashed() {
                break;
            }
            apply_round_recorded(&pager, &mut rng, round);
            if rng.below(3) == 0 {
                let state = (round, table(&pager));
                match pager.checkpoint(round) {
                    Ok(()) => checkpoints.push(state),
                    Err(_) => in_flight = Some(state),
                }
            }
        }
        let image = storage.crash(&mut rng);
        let reopened = Pager::open(Arc::new(MemStorage::from_bytes(image)), Options::default())
            .expect("a crashed file reopens");
        let lsn = reopened.checkpoint_lsn();
        let done = checkpoints.last().expect("at least the empty one");
        let expected = match &in_flight {
            Some(state) if state.0 == lsn => state,
            _ => done,
        };
        assert_eq!(
            lsn, expected.0,
            "seed {seed}: reopened at a durable checkpoint"
        );
        assert_eq!(
            table(&reopened),
            expected.1,
            "seed {seed}: content of checkpoint {lsn}"
        );
        reopened
            .verify(&owned(&reopened))
            .expect("verify after recovery");
        // The recovered file keeps working.
        apply_round_recorded(&reopened, &mut rng, rounds + 1);
        reopened
            .checkpoint(rounds + 1)
            .expect("checkpoint after recovery");
        reopened.verify(&owned(&reopened)).expect("verify");
    }
}

fn apply_round_recorded(pager: &Pager, rng: &mut Rng, round: u64) {
    apply_round(pager, rng, round);
    for extent in owned(pager) {
        LENGTHS.with(|l| l.borrow_mut().insert(extent.start.0, extent.pages));
    }
}
