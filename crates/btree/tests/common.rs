//! Helpers shared by the B+tree tests: open, reopen, full verification, contents.

use btree::Btree;
use pager::{Options, Pager};
use std::collections::BTreeMap;
use std::sync::Arc;
use wal::{MemStorage, Storage};

pub const TREE: Btree = Btree::new(0);

pub fn open(storage: Arc<dyn Storage>) -> Pager {
    Pager::open(storage, Options::default()).expect("open")
}

pub fn mem() -> (Arc<MemStorage>, Pager) {
    let storage = Arc::new(MemStorage::new());
    let pager = open(storage.clone());
    (storage, pager)
}

/// Tree invariants plus page ownership of the whole file.
pub fn verify_all(pager: &Pager) -> btree::TreeReport {
    let read = pager.begin_read().expect("read");
    let report = TREE.verify(&read).expect("tree verify");
    drop(read);
    pager.verify(&report.extents).expect("pager verify");
    report
}

pub fn contents(pager: &Pager) -> BTreeMap<Vec<u8>, Vec<u8>> {
    let read = pager.begin_read().expect("read");
    TREE.iter(&read)
        .expect("iter")
        .map(|entry| {
            let (key, value) = entry.expect("entry");
            (key.into_owned(), value.into_owned())
        })
        .collect()
}
