//! Direct B+tree behaviour: overflow round trips, space returned on delete, bulk load,
//! snapshot isolation under a concurrent writer, damaged files.

use crate::common::{TREE, contents, mem, verify_all};
use crate::support::Rng;
use btree::Error;
use pager::{Options, Pager};
use std::sync::Arc;
use wal::MemStorage;

#[test]
fn long_keys_and_values_round_trip_through_overflow() {
    let (_storage, pager) = mem();
    let mut txn = pager.begin_write().expect("write");
    let big_value = vec![7u8; 16 * 1024 * 1024];
    TREE.insert(&mut txn, b"doc", &big_value)
        .expect("16 MiB value");
    let big_key = vec![3u8; 20_000];
    TREE.insert(&mut txn, &big_key, b"small").expect("long key");
    txn.commit().expect("commit");
    let read = pager.begin_read().expect("read");
    assert_eq!(
        TREE.get(&read, b"doc")
            .expect("get")
            .expect("present")
            .len(),
        big_value.len()
    );
    assert_eq!(
        &TREE.get(&read, &big_key).expect("get").expect("present")[..],
        b"small"
    );
    drop(read);
    let report = verify_all(&pager);
    assert!(report.overflow_pages >= 4096);
}

#[test]
fn documents_up_to_two_kib_stay_inline_in_their_leaves() {
    // 1-2 KiB values (typical documents) share leaf pages instead of taking an overflow
    // page each; random sizes in random key order make splits meet mixed cell sizes.
    let (_storage, pager) = mem();
    let mut rng = Rng(11);
    let mut txn = pager.begin_write().expect("write");
    let mut bytes = 0u64;
    for _ in 0..2000 {
        let key = rng.next_u64().to_be_bytes();
        let size = 1000 + usize::try_from(rng.below(1000)).expect("small");
        bytes += size as u64;
        TREE.insert(&mut txn, &key, &vec![9u8; size])
            .expect("insert");
    }
    txn.commit().expect("commit");
    let report = verify_all(&pager);
    assert_eq!(report.overflow_pages, 0, "{report:?}");
    // About two values per 4 KiB leaf at worst, not a page each plus a leaf slot.
    assert!(
        report.leaf_pages * 4096 < bytes * 2,
        "{} leaves for {bytes} bytes",
        report.leaf_pages
    );
}

#[test]
fn deleting_everything_returns_every_page() {
    let (_storage, pager) = mem();
    let mut txn = pager.begin_write().expect("write");
    for i in 0..3000u32 {
        let value = vec![1u8; if i % 100 == 0 { 5000 } else { 20 }];
        TREE.insert(&mut txn, &i.to_be_bytes(), &value)
            .expect("insert");
    }
    txn.commit().expect("commit");
    pager.checkpoint(1).expect("checkpoint");
    let mut txn = pager.begin_write().expect("write");
    for i in 0..3000u32 {
        assert!(TREE.remove(&mut txn, &i.to_be_bytes()).expect("remove"));
    }
    txn.commit().expect("commit");
    pager.checkpoint(2).expect("checkpoint");
    let report = verify_all(&pager);
    assert_eq!(report.entries, 0);
    let stats = pager.stats().expect("stats");
    assert_eq!(stats.pending_pages, 0);
    let in_use = u64::from(stats.page_count) - stats.free_pages;
    assert!(
        in_use <= 4,
        "header + free list only, got {in_use} pages in use"
    );
}

#[test]
fn bulk_load_builds_a_valid_tree_and_rejects_unsorted_input() {
    let (_storage, pager) = mem();
    let mut txn = pager.begin_write().expect("write");
    let entries = (0..50_000u32).map(|i| (i.to_be_bytes(), vec![i as u8; (i % 50) as usize]));
    assert_eq!(TREE.bulk_load(&mut txn, entries).expect("load"), 50_000);
    txn.commit().expect("commit");
    let report = verify_all(&pager);
    assert_eq!(report.entries, 50_000);
    assert!(report.fill > 0.85, "bulk fill {}", report.fill);
    let mut txn = pager.begin_write().expect("write");
    let other = btree::Btree::new(1);
    let unsorted = [
        (b"b".to_vec(), b"1".to_vec()),
        (b"a".to_vec(), b"2".to_vec()),
    ];
    assert!(matches!(
        other.bulk_load(&mut txn, unsorted),
        Err(Error::Unsorted { index: 1 })
    ));
    let again = [(b"z".to_vec(), b"1".to_vec())];
    assert!(matches!(
        TREE.bulk_load(&mut txn, again),
        Err(Error::NotEmpty)
    ));
}

#[test]
fn bulk_load_with_long_keys_builds_overflow_separators() {
    let (_storage, pager) = mem();
    let mut txn = pager.begin_write().expect("write");
    let entries = (0..400u32).map(|i| {
        let mut key = vec![b'x'; 2000];
        key.extend_from_slice(&i.to_be_bytes());
        (key, b"v".to_vec())
    });
    TREE.bulk_load(&mut txn, entries).expect("load");
    txn.commit().expect("commit");
    assert_eq!(verify_all(&pager).entries, 400);
}

#[test]
fn readers_see_their_snapshot_while_a_writer_commits() {
    let (_storage, pager) = mem();
    let mut txn = pager.begin_write().expect("write");
    for i in 0..2000u32 {
        TREE.insert(&mut txn, &i.to_be_bytes(), &[0])
            .expect("insert");
    }
    txn.commit().expect("commit");
    std::thread::scope(|scope| {
        for reader in 0..2 {
            let pager = &pager;
            scope.spawn(move || {
                for _ in 0..30 {
                    let read = pager.begin_read().expect("read");
                    let values: Vec<u8> = TREE
                        .iter(&read)
                        .expect("iter")
                        .map(|e| e.expect("entry").1[0])
                        .collect();
                    assert_eq!(values.len(), 2000, "reader {reader}");
                    assert!(values.iter().all(|&v| v == values[0]), "torn snapshot");
                }
            });
        }
        for round in 1..=40u8 {
            let mut txn = pager.begin_write().expect("write");
            for i in 0..2000u32 {
                TREE.insert(&mut txn, &i.to_be_bytes(), &[round])
                    .expect("insert");
            }
            txn.commit().expect("commit");
        }
    });
    verify_all(&pager);
}

#[test]
fn damaged_files_give_errors_not_wrong_answers() {
    let (storage, pager) = mem();
    let mut txn = pager.begin_write().expect("write");
    for i in 0..300u32 {
        TREE.insert(&mut txn, &i.to_be_bytes(), &i.to_le_bytes())
            .expect("insert");
    }
    txn.commit().expect("commit");
    pager.checkpoint(1).expect("checkpoint");
    let good = storage.snapshot();
    let mut rng = Rng(3);
    for _ in 0..400 {
        let mut bytes = good.clone();
        for _ in 0..1 + rng.below(4) {
            let at = rng.below(bytes.len() as u64) as usize;
            bytes[at] = rng.next_u64() as u8;
        }
        let storage = Arc::new(MemStorage::from_bytes(bytes));
        let Ok(pager) = Pager::open(storage, Options::default()) else {
            continue;
        };
        let Ok(read) = pager.begin_read() else {
            continue;
        };
        let Ok(range) = TREE.iter(&read) else {
            continue;
        };
        for entry in range {
            let Ok((key, value)) = entry else { break };
            let key = u32::from_be_bytes(key[..].try_into().expect("keys read back are intact"));
            assert_eq!(
                &value[..],
                &key.to_le_bytes(),
                "a wrong answer from a damaged file"
            );
        }
    }
    assert_eq!(contents(&pager).len(), 300);
}

#[test]
fn mapped_readers_survive_growth_checkpoints_and_page_reuse() {
    // Every commit writes its pages, so readers borrow every value from the map.
    let options = Options {
        write_back_max: 0,
        ..Options::default()
    };
    readers_survive_growth_checkpoints_and_page_reuse("mapped-readers", options, 3000, true);
}

#[test]
fn buffered_readers_survive_growth_checkpoints_and_page_reuse() {
    // Committed single pages wait in the write-back buffer (a small bound, so flushes
    // between checkpoints happen too): readers see copies of some pages, the map for others.
    // 300 keys of 64 bytes make commits small enough to be buffered.
    let options = Options {
        write_back_max: 64 * 4096,
        ..Options::default()
    };
    readers_survive_growth_checkpoints_and_page_reuse("buffered-readers", options, 300, false);
}

fn readers_survive_growth_checkpoints_and_page_reuse(
    name: &str,
    options: Options,
    keys: u32,
    mapped: bool,
) {
    let path = crate::support::TempPath::new(name);
    let storage = Arc::new(wal::OsStorage::open(&path.0).expect("file"));
    let pager = Pager::open(storage, options).expect("open");
    let mut txn = pager.begin_write().expect("write");
    for i in 0..keys {
        TREE.insert(&mut txn, &i.to_be_bytes(), &[0; 64])
            .expect("insert");
    }
    txn.commit().expect("commit");
    std::thread::scope(|scope| {
        for reader in 0..2 {
            let pager = &pager;
            scope.spawn(move || {
                for _ in 0..25 {
                    let read = pager.begin_read().expect("read");
                    // Hold borrowed slices into the map across the writer's growth.
                    let held: Vec<_> = TREE
                        .iter(&read)
                        .expect("iter")
                        .map(|e| e.expect("entry"))
                        .collect();
                    assert!(
                        !mapped
                            || held
                                .iter()
                                .all(|(_, v)| matches!(v, std::borrow::Cow::Borrowed(_)))
                    );
                    std::thread::yield_now();
                    // Keys below 10,000 are rewritten together in every round, so one
                    // snapshot must show them all from the same round. The large-value
                    // keys added one per round carry their own round and are left out:
                    // comparing them made the test fail whenever a reader started after
                    // the second round (seen once under load; a test bug, not a torn read).
                    let first = held[0].1[0];
                    let rewritten = held
                        .iter()
                        .filter(|(k, _)| k.as_ref() < 10_000u32.to_be_bytes().as_slice());
                    assert!(
                        rewritten.clone().all(|(_, v)| v[0] == first),
                        "reader {reader}: torn"
                    );
                    assert_eq!(rewritten.count(), keys as usize);
                    assert!(held.len() >= keys as usize);
                }
            });
        }
        for round in 1..=30u8 {
            let mut txn = pager.begin_write().expect("write");
            for i in 0..keys {
                TREE.insert(&mut txn, &i.to_be_bytes(), &[round; 64])
                    .expect("insert");
            }
            // Grow the file: new keys with large values.
            let key = (10_000 + u32::from(round)).to_be_bytes();
            TREE.insert(&mut txn, &key, &vec![round; 200_000])
                .expect("insert");
            txn.commit().expect("commit");
            if round % 5 == 0 {
                pager.checkpoint(u64::from(round)).expect("checkpoint");
            }
        }
    });
    verify_all(&pager);
}

#[test]
fn deleting_most_keys_merges_leaves_and_returns_their_pages() {
    let (_storage, pager) = mem();
    let mut txn = pager.begin_write().expect("write");
    for i in 0..20_000u32 {
        TREE.insert(
            &mut txn,
            &i.wrapping_mul(2_654_435_761).to_be_bytes(),
            &[7; 60],
        )
        .expect("insert");
    }
    txn.commit().expect("commit");
    let full = verify_all(&pager).leaf_pages;
    let mut rng = Rng(8);
    let mut txn = pager.begin_write().expect("write");
    for i in 0..20_000u32 {
        if rng.below(20) != 0 {
            TREE.remove(&mut txn, &i.wrapping_mul(2_654_435_761).to_be_bytes())
                .expect("remove");
        }
    }
    txn.commit().expect("commit");
    let report = verify_all(&pager);
    assert!(
        report.entries < 1_300 && report.entries > 700,
        "{}",
        report.entries
    );
    assert!(
        report.leaf_pages * 6 < full,
        "{} leaves left of {full} for 5% of the keys",
        report.leaf_pages
    );
}
