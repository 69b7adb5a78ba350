//! `Tree` (caller-held root): many trees in one file against `BTreeMap` models, page
//! ownership across all of them, and `destroy` returning every page.

use crate::common::mem;
use btree::Tree;
use proptest::prelude::*;
use std::collections::BTreeMap;

type Model = BTreeMap<Vec<u8>, Vec<u8>>;

#[derive(Clone, Debug)]
enum Op {
    Insert(usize, u16, usize),
    Remove(usize, u16),
    Destroy(usize),
}

fn op() -> impl Strategy<Value = Op> {
    prop_oneof![
        6 => (0..4usize, 0..600u16, 0..3000usize).prop_map(|(t, k, n)| Op::Insert(t, k, n)),
        3 => (0..4usize, 0..600u16).prop_map(|(t, k)| Op::Remove(t, k)),
        1 => (0..4usize).prop_map(Op::Destroy),
    ]
}

fn key(k: u16) -> Vec<u8> {
    format!("key-{k:05}").into_bytes()
}

/// Checks every tree against its model and page ownership of the whole file.
fn check(pager: &pager::Pager, trees: &[Tree], models: &[Model]) {
    let read = pager.begin_read().expect("read");
    let mut extents = Vec::new();
    for (tree, model) in trees.iter().zip(models) {
        let report = tree.verify(&read).expect("verify");
        assert_eq!(report.entries, model.len() as u64);
        extents.extend(report.extents);
        let got: Model = tree
            .iter(&read)
            .expect("iter")
            .map(|e| {
                let (k, v) = e.expect("entry");
                (k.into_owned(), v.into_owned())
            })
            .collect();
        assert_eq!(&got, model);
    }
    drop(read);
    pager.verify(&extents).expect("pager verify");
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 48, ..ProptestConfig::default() })]
    #[test]
    fn held_trees_match_their_models(ops in prop::collection::vec(op(), 1..300)) {
        let (_storage, pager) = mem();
        let mut trees = [Tree::EMPTY; 4];
        let mut models: Vec<Model> = vec![Model::new(); 4];
        for chunk in ops.chunks(25) {
            let mut txn = pager.begin_write().expect("write");
            for op in chunk {
                match *op {
                    Op::Insert(t, k, n) => {
                        let value = vec![k as u8; n];
                        let had = trees[t].insert(&mut txn, &key(k), &value).expect("insert");
                        prop_assert_eq!(had, models[t].insert(key(k), value).is_some());
                    }
                    Op::Remove(t, k) => {
                        let had = trees[t].remove(&mut txn, &key(k)).expect("remove");
                        prop_assert_eq!(had, models[t].remove(&key(k)).is_some());
                    }
                    Op::Destroy(t) => {
                        trees[t].destroy(&mut txn).expect("destroy");
                        models[t].clear();
                        prop_assert!(trees[t].is_empty());
                    }
                }
            }
            txn.commit().expect("commit");
            check(&pager, &trees, &models);
        }
    }
}

#[test]
fn destroy_returns_every_page_including_overflow() {
    let (_storage, pager) = mem();
    let mut tree = Tree::EMPTY;
    let mut txn = pager.begin_write().expect("write");
    for i in 0..3000u32 {
        let value = vec![7u8; if i % 10 == 0 { 20_000 } else { 100 }];
        tree.insert(&mut txn, &i.to_be_bytes(), &value)
            .expect("insert");
    }
    let long_key = vec![b'k'; 9000];
    tree.insert(&mut txn, &long_key, b"v").expect("long key");
    txn.commit().expect("commit");
    pager.checkpoint(1).expect("checkpoint");
    let used = {
        let read = pager.begin_read().expect("read");
        tree.verify(&read).expect("verify").extents.len()
    };
    assert!(used > 300, "tree spans many extents: {used}");
    let mut txn = pager.begin_write().expect("write");
    tree.destroy(&mut txn).expect("destroy");
    txn.commit().expect("commit");
    pager.checkpoint(2).expect("checkpoint");
    pager.checkpoint(3).expect("checkpoint");
    let report = pager.verify(&[]).expect("verify with nothing reachable");
    assert_eq!(report.owned_pages, 0);
    assert_eq!(
        u64::from(report.page_count),
        report.free_pages + report.free_list_pages + 2 + report.pending_pages,
        "{report:?}"
    );
}

#[test]
fn a_root_that_is_not_a_page_number_is_corruption() {
    let (_storage, pager) = mem();
    let read = pager.begin_read().expect("read");
    let tree = Tree::from_root(u64::MAX);
    assert!(tree.get(&read, b"k").is_err());
}
