//! Fuzz targets for the data file: opening a damaged file, decoding damaged B+tree nodes and
//! damaged compressed record values.
//!
//! A damaged data file must give an error, never a panic or a wrong answer: checksums make
//! most damage an error at the page, and these targets also drive the node decoder with
//! arbitrary bytes behind a valid checksum (written through a real transaction), which is
//! what a bug in a writer, rather than the disk, would produce.

use btree::Btree;
use pager::{KIND_USER_MIN, Options, PageId, Pager};
use std::ops::Bound;
use std::sync::Arc;
use wal::MemStorage;

const TREE: Btree = Btree::new(0);

fn value_of(key: &[u8]) -> Vec<u8> {
    key.iter().rev().copied().collect()
}

/// A small valid data file: a tree with inline and overflow entries, checkpointed.
fn small_file(entries: u32) -> Vec<u8> {
    let storage = Arc::new(MemStorage::new());
    let pager = Pager::open(storage.clone(), Options::default()).expect("open");
    let mut txn = pager.begin_write().expect("write");
    for i in 0..entries {
        let mut key = i.to_be_bytes().to_vec();
        if i % 50 == 7 {
            key.resize(700, b'k');
        }
        let mut value = value_of(&key);
        if i % 40 == 3 {
            value.resize(5000, b'v');
            value.truncate(5000);
        }
        TREE.insert(&mut txn, &key, &value_of(&key))
            .expect("insert");
    }
    txn.commit().expect("commit");
    pager.checkpoint(1).expect("checkpoint");
    storage.snapshot()
}

/// Seeds for `pager_open`: an empty file, a one-leaf tree, a two-level tree.
pub fn data_file_seeds() -> Vec<Vec<u8>> {
    vec![small_file(0), small_file(5), small_file(300)]
}

/// Opens `input` as a data file and reads everything; any error is fine, but every entry
/// that comes back must be one the seed files could hold (value = reversed key).
pub fn open_damaged_data_file(input: &[u8]) {
    let storage = Arc::new(MemStorage::from_bytes(input.to_vec()));
    let Ok(pager) = Pager::open(storage, Options::default()) else {
        return;
    };
    let Ok(read) = pager.begin_read() else {
        return;
    };
    if let Ok(range) = TREE.iter(&read) {
        for entry in range {
            let Ok((key, value)) = entry else { break };
            assert_eq!(value.as_ref(), value_of(&key).as_slice(), "wrong answer");
        }
    }
    if let Ok(report) = TREE.verify(&read) {
        drop(read);
        let _ = pager.verify(&report.extents);
    }
}

/// Seeds for `btree_node`: payloads of a valid leaf and a valid branch.
pub fn node_seeds() -> Vec<Vec<u8>> {
    let storage = Arc::new(MemStorage::new());
    let pager = Pager::open(storage, Options::default()).expect("open");
    let mut txn = pager.begin_write().expect("write");
    for i in 0..200u32 {
        TREE.insert(&mut txn, &i.to_be_bytes(), &[1; 40])
            .expect("insert");
    }
    txn.commit().expect("commit");
    let read = pager.begin_read().expect("read");
    let root = PageId(read.root(0) as u32);
    let branch = read.page(root).expect("root").into_owned();
    let child = u32::from_le_bytes([branch[8], branch[9], branch[10], branch[11]]);
    let leaf = read.page(PageId(child)).expect("leaf").into_owned();
    vec![leaf, branch]
}

/// Installs `input` as the root node (padded to a page) and runs every read path and a
/// few writes over it: errors are fine, panics are bugs.
pub fn read_damaged_node(input: &[u8]) {
    let storage = Arc::new(MemStorage::new());
    let pager = Pager::open(storage, Options::default()).expect("open");
    let mut txn = pager.begin_write().expect("write");
    let id = txn.allocate(KIND_USER_MIN, 1).expect("allocate");
    let page = txn.page_mut(id).expect("own");
    let n = input.len().min(page.len());
    page[..n].copy_from_slice(&input[..n]);
    txn.set_root(0, u64::from(id.0));
    txn.commit().expect("commit");
    let read = pager.begin_read().expect("read");
    let _ = TREE.get(&read, b"\x00\x00\x00\x05");
    if let Ok(range) = TREE.range(&read, Bound::Included(b"\x00"), Bound::Unbounded) {
        for entry in range.take(300) {
            if entry.is_err() {
                break;
            }
        }
    }
    if let Ok(range) = TREE.iter(&read) {
        for entry in range.rev().take(300) {
            if entry.is_err() {
                break;
            }
        }
    }
    let _ = TREE.verify(&read);
    drop(read);
    let mut txn = pager.begin_write().expect("write");
    let _ = TREE.insert(&mut txn, b"\x00\x00\x00\x07", b"x");
    let _ = TREE.remove(&mut txn, b"\x00\x00\x00\x05");
}

/// Seeds for `record_decode`: compressed and raw record values as a compressed collection
/// stores them (issue 18).
pub fn record_seeds() -> Vec<Vec<u8>> {
    let lz4 = engine::store::Compressor::Lz4;
    let text = b"a document's bytes, repeated; ".repeat(40);
    let small = b"small".to_vec();
    vec![
        lz4.encode(&text).into_owned(),
        lz4.encode(&small).into_owned(),
    ]
}

/// Decodes `input` as a compressed collection's record value: an error or bytes, never a
/// panic, and a decoded LZ4 value is exactly as long as its header says.
pub fn decode_damaged_record(input: &[u8]) {
    let lz4 = engine::store::Compressor::Lz4;
    if let Ok(doc) = lz4.decode(std::borrow::Cow::Borrowed(input))
        && input.first() == Some(&1)
    {
        let claimed = u32::from_le_bytes(input[1..5].try_into().expect("4 bytes"));
        assert_eq!(
            doc.len(),
            claimed as usize,
            "decoded length differs from the header"
        );
    }
}
