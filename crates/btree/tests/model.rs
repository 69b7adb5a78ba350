//! Property test: random inserts, deletes, range scans, commits, reopens and crashes against
//! `std::collections::BTreeMap`, with both `verify`s after every step.

use crate::common::{TREE, contents, open, verify_all};
use proptest::prelude::*;
use std::collections::BTreeMap;
use std::ops::Bound;
use std::sync::Arc;
use wal::MemStorage;

#[derive(Clone, Debug)]
enum Op {
    Insert(Vec<u8>, Vec<u8>),
    Remove(Vec<u8>),
}

#[derive(Clone, Debug)]
enum Step {
    /// One write transaction; committed unless `abort`.
    Write { ops: Vec<Op>, abort: bool },
    /// Checkpoint, then reopen the file.
    Reopen,
    /// Reopen without a checkpoint: the file goes back to its last checkpoint.
    Crash,
    Scan {
        lower: Bound<Vec<u8>>,
        upper: Bound<Vec<u8>>,
        reverse: bool,
    },
}

fn key() -> impl Strategy<Value = Vec<u8>> {
    prop_oneof![
        8 => proptest::collection::vec(0u8..4, 0..6),
        1 => (0u8..4, 600usize..3000).prop_map(|(b, n)| vec![b; n]),
    ]
}

fn value() -> impl Strategy<Value = Vec<u8>> {
    prop_oneof![
        8 => proptest::collection::vec(any::<u8>(), 0..40),
        1 => (any::<u8>(), 900usize..9000).prop_map(|(b, n)| vec![b; n]),
    ]
}

fn bound() -> impl Strategy<Value = Bound<Vec<u8>>> {
    prop_oneof![
        Just(Bound::Unbounded),
        key().prop_map(Bound::Included),
        key().prop_map(Bound::Excluded),
    ]
}

fn op() -> impl Strategy<Value = Op> {
    prop_oneof![
        3 => (key(), value()).prop_map(|(k, v)| Op::Insert(k, v)),
        2 => key().prop_map(Op::Remove),
    ]
}

fn step() -> impl Strategy<Value = Step> {
    prop_oneof![
        8 => (proptest::collection::vec(op(), 1..40), proptest::bool::weighted(0.1))
            .prop_map(|(ops, abort)| Step::Write { ops, abort }),
        1 => Just(Step::Reopen),
        1 => Just(Step::Crash),
        2 => (bound(), bound(), any::<bool>())
            .prop_map(|(lower, upper, reverse)| Step::Scan { lower, upper, reverse }),
    ]
}

fn as_ref(bound: &Bound<Vec<u8>>) -> Bound<&[u8]> {
    match bound {
        Bound::Included(k) => Bound::Included(k),
        Bound::Excluded(k) => Bound::Excluded(k),
        Bound::Unbounded => Bound::Unbounded,
    }
}

fn model_range(
    model: &BTreeMap<Vec<u8>, Vec<u8>>,
    lower: &Bound<Vec<u8>>,
    upper: &Bound<Vec<u8>>,
) -> Vec<(Vec<u8>, Vec<u8>)> {
    model
        .iter()
        .filter(|(k, _)| match lower {
            Bound::Included(l) => *k >= l,
            Bound::Excluded(l) => *k > l,
            Bound::Unbounded => true,
        })
        .filter(|(k, _)| match upper {
            Bound::Included(u) => *k <= u,
            Bound::Excluded(u) => *k < u,
            Bound::Unbounded => true,
        })
        .map(|(k, v)| (k.clone(), v.clone()))
        .collect()
}

fn run(steps: Vec<Step>) {
    let storage = Arc::new(MemStorage::new());
    let mut pager = open(storage.clone());
    let mut model = BTreeMap::new();
    let mut checkpointed = BTreeMap::new();
    let mut lsn = 0;
    for step in steps {
        match step {
            Step::Write { ops, abort } => {
                let mut txn = pager.begin_write().expect("write");
                let mut next = model.clone();
                for op in ops {
                    match op {
                        Op::Insert(k, v) => {
                            let had = TREE.insert(&mut txn, &k, &v).expect("insert");
                            assert_eq!(had, next.insert(k, v).is_some());
                        }
                        Op::Remove(k) => {
                            let had = TREE.remove(&mut txn, &k).expect("remove");
                            assert_eq!(had, next.remove(&k).is_some());
                        }
                    }
                }
                if abort {
                    drop(txn);
                } else {
                    txn.commit().expect("commit");
                    model = next;
                }
            }
            Step::Reopen => {
                lsn += 1;
                pager.checkpoint(lsn).expect("checkpoint");
                checkpointed = model.clone();
                drop(pager);
                pager = open(storage.clone());
            }
            Step::Crash => {
                drop(pager);
                pager = open(storage.clone());
                model = checkpointed.clone();
            }
            Step::Scan {
                lower,
                upper,
                reverse,
            } => {
                let read = pager.begin_read().expect("read");
                let range = TREE
                    .range(&read, as_ref(&lower), as_ref(&upper))
                    .expect("range");
                let mut got: Vec<(Vec<u8>, Vec<u8>)> = if reverse {
                    range
                        .rev()
                        .map(|e| e.expect("entry"))
                        .map(|(k, v)| (k.into_owned(), v.into_owned()))
                        .collect()
                } else {
                    range
                        .map(|e| e.expect("entry"))
                        .map(|(k, v)| (k.into_owned(), v.into_owned()))
                        .collect()
                };
                if reverse {
                    got.reverse();
                }
                assert_eq!(got, model_range(&model, &lower, &upper));
            }
        }
        let report = verify_all(&pager);
        assert_eq!(report.entries, model.len() as u64);
    }
    assert_eq!(contents(&pager), model);
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 48, ..ProptestConfig::default() })]

    #[test]
    fn tree_matches_btreemap_across_commits_reopens_and_crashes(
        steps in proptest::collection::vec(step(), 1..30)
    ) {
        run(steps);
    }
}

#[test]
fn double_ended_iteration_meets_in_the_middle() {
    let (_storage, pager) = crate::common::mem();
    let mut txn = pager.begin_write().expect("write");
    for i in 0..500u32 {
        TREE.insert(&mut txn, &i.to_be_bytes(), b"v")
            .expect("insert");
    }
    txn.commit().expect("commit");
    let read = pager.begin_read().expect("read");
    let mut range = TREE.iter(&read).expect("iter");
    let mut seen = Vec::new();
    loop {
        let front = range.next();
        let back = range.next_back();
        if front.is_none() && back.is_none() {
            break;
        }
        for (key, _) in front.into_iter().chain(back).map(|e| e.expect("entry")) {
            seen.push(u32::from_be_bytes(key[..].try_into().expect("4 bytes")));
        }
    }
    assert!(range.next().is_none() && range.next_back().is_none());
    seen.sort_unstable();
    assert_eq!(seen, (0..500).collect::<Vec<_>>());
}
