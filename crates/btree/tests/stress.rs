//! Stress: a million random keys (release; 100,000 in the dev profile, or set
//! `MFDB_STRESS_KEYS`), a large-key stress, and a churn run that must settle near the live
//! size. Run the full-size one with `cargo test --release -p btree stress`.

use crate::common::{TREE, verify_all};
use crate::support::{Rng, TempPath};
use pager::{Options, Pager};
use std::sync::Arc;
use wal::OsStorage;

fn stress_keys() -> u64 {
    let default = if cfg!(debug_assertions) {
        100_000
    } else {
        1_000_000
    };
    std::env::var("MFDB_STRESS_KEYS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

fn key(i: u64) -> [u8; 16] {
    let mut rng = Rng(i.wrapping_mul(0x9e37_79b9_7f4a_7c15) | 1);
    let mut key = [0u8; 16];
    key[..8].copy_from_slice(&rng.next_u64().to_be_bytes());
    key[8..].copy_from_slice(&i.to_be_bytes());
    key
}

#[test]
fn stress_random_keys_insert_lookup_delete() {
    let n = stress_keys();
    let path = TempPath::new("stress");
    let pager = Pager::open(
        Arc::new(OsStorage::open(&path.0).expect("file")),
        Options::default(),
    )
    .expect("open");
    let mut txn = pager.begin_write().expect("write");
    for i in 0..n {
        TREE.insert(&mut txn, &key(i), &i.to_le_bytes())
            .expect("insert");
    }
    txn.commit().expect("commit");
    pager.checkpoint(1).expect("checkpoint");
    assert_eq!(verify_all(&pager).entries, n);
    let read = pager.begin_read().expect("read");
    for i in (0..n).step_by(7) {
        let value = TREE.get(&read, &key(i)).expect("get").expect("present");
        assert_eq!(&value[..], &i.to_le_bytes());
    }
    drop(read);
    let mut txn = pager.begin_write().expect("write");
    for i in (0..n).filter(|i| i % 2 == 0) {
        assert!(TREE.remove(&mut txn, &key(i)).expect("remove"));
    }
    txn.commit().expect("commit");
    pager.checkpoint(2).expect("checkpoint");
    let report = verify_all(&pager);
    assert_eq!(report.entries, n / 2);
    let read = pager.begin_read().expect("read");
    let mut previous: Option<Vec<u8>> = None;
    let mut count = 0;
    for entry in TREE.iter(&read).expect("iter") {
        let (k, _) = entry.expect("entry");
        assert!(previous.as_deref() < Some(&k[..]));
        previous = Some(k.into_owned());
        count += 1;
    }
    assert_eq!(count, n / 2);
}

#[test]
fn stress_large_keys_and_values() {
    let path = TempPath::new("large");
    let pager = Pager::open(
        Arc::new(OsStorage::open(&path.0).expect("file")),
        Options::default(),
    )
    .expect("open");
    let mut rng = Rng(11);
    let mut model = std::collections::BTreeMap::new();
    for round in 0..6 {
        let mut txn = pager.begin_write().expect("write");
        for _ in 0..150 {
            let mut k = vec![b'k'; 1 + rng.below(20_000) as usize];
            k.extend_from_slice(&rng.below(500).to_be_bytes());
            if rng.below(4) == 0 {
                TREE.remove(&mut txn, &k).expect("remove");
                model.remove(&k);
            } else {
                let v = vec![round as u8; rng.below(300_000) as usize];
                TREE.insert(&mut txn, &k, &v).expect("insert");
                model.insert(k, v);
            }
        }
        txn.commit().expect("commit");
        pager.checkpoint(round + 1).expect("checkpoint");
        assert_eq!(verify_all(&pager).entries, model.len() as u64);
    }
    let read = pager.begin_read().expect("read");
    for (k, v) in &model {
        assert_eq!(
            &TREE.get(&read, k).expect("get").expect("present")[..],
            &v[..]
        );
    }
}

/// Delete a random half, refill, ten rounds; batches of n/1,000 per commit (100,000 keys
/// and batches of 100 in a debug build, 200,000 and 200 in release, or set
/// `MFDB_CHURN_KEYS`: each commit touches the same share of the tree at every size) and a
/// checkpoint every 10 commits or when `checkpoint_due` says so (the engine's rhythm). The
/// file must stay near the live size.
#[test]
fn stress_churn_settles_near_the_live_size() {
    let storage = Arc::new(wal::MemStorage::new());
    let pager = Pager::open(storage, Options::default()).expect("open");
    let n = std::env::var("MFDB_CHURN_KEYS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(if cfg!(debug_assertions) {
            100_000u64
        } else {
            200_000
        });
    let batch_len = (n / 1000).max(1) as usize;
    let mut rng = Rng(77);
    let mut live: Vec<bool> = vec![false; n as usize];
    let mut commits = 0u64;
    let batch = |pager: &Pager, keys: &[u64], insert: bool, commits: &mut u64| {
        let mut txn = pager.begin_write().expect("write");
        for &i in keys {
            if insert {
                TREE.insert(&mut txn, &key(i), &[i as u8; 100])
                    .expect("insert");
            } else {
                TREE.remove(&mut txn, &key(i)).expect("remove");
            }
        }
        txn.commit().expect("commit");
        *commits += 1;
        if commits.is_multiple_of(10) || pager.checkpoint_due() {
            pager.checkpoint(*commits).expect("checkpoint");
        }
    };
    let all: Vec<u64> = (0..n).collect();
    for chunk in all.chunks(batch_len) {
        batch(&pager, chunk, true, &mut commits);
    }
    live.fill(true);
    let mut ratios = Vec::new();
    for _round in 0..10 {
        let mut victims: Vec<u64> = (0..n).filter(|_| rng.below(2) == 0).collect();
        for &v in &victims {
            live[v as usize] = false;
        }
        for chunk in victims.chunks(batch_len) {
            batch(&pager, chunk, false, &mut commits);
        }
        for i in (1..victims.len()).rev() {
            victims.swap(i, rng.below(i as u64 + 1) as usize);
        }
        for chunk in victims.chunks(batch_len) {
            batch(&pager, chunk, true, &mut commits);
        }
        for &v in &victims {
            live[v as usize] = true;
        }
        pager.checkpoint(commits).expect("checkpoint");
        let report = verify_all(&pager);
        let stats = pager.stats().expect("stats");
        let live_pages = (report.leaf_pages + report.branch_pages + report.overflow_pages) * 4096;
        ratios.push((
            stats.file_bytes as f64 / live_pages as f64,
            stats.file_bytes as f64 / report.payload_bytes as f64,
        ));
    }
    assert!(live.iter().all(|&l| l));
    eprintln!("churn: file / live pages, file / live key+value bytes per round: {ratios:.3?}");
    let (pages_ratio, bytes_ratio) = *ratios.last().expect("ten rounds");
    assert!(
        pages_ratio <= 1.3,
        "file is {pages_ratio:.2}x the live pages"
    );
    // Leaves that split only when no neighbour has room stay about 86% full, with cells
    // of 3 header bytes, a checkpoint due at 1/64 of the file and growth by 1/64: 1.298x
    // at 200,000 keys, 1.297x at 1,000,000. Splitting every full leaf in two, with 9-byte
    // cell headers, gave 1.86x; 1/32 for all three, 1.342x; 1/32 sharing slack alone,
    // 1.315x (100,000 keys). A small file grows in steps that are a larger share of it:
    // 1.324x at 20,000 keys.
    let bound = if n >= 100_000 { 1.30 } else { 1.35 };
    assert!(
        bytes_ratio <= bound,
        "file is {bytes_ratio:.3}x the live key and value bytes (goal {bound}x)"
    );
}
