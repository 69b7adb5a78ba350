//! Format fixtures: every shipped data-file format version keeps a file that this test
//! opens and reads back. `MFDB_WRITE_FIXTURES=1 cargo test -p btree fixture` rewrites the
//! current version's fixture (only when the format version changes).

use crate::common::{TREE, contents, verify_all};
use pager::{FORMAT_VERSION, Options, Pager};
use std::collections::BTreeMap;
use std::path::PathBuf;
use std::sync::Arc;
use wal::{MemStorage, Storage};

fn model() -> BTreeMap<Vec<u8>, Vec<u8>> {
    let mut model = BTreeMap::new();
    for i in 0..60u32 {
        model.insert(i.to_be_bytes().to_vec(), format!("value {i}").into_bytes());
    }
    model.insert(vec![b'L'; 1500], b"long key".to_vec());
    model.insert(b"overflow".to_vec(), vec![0xab; 9000]);
    model
}

fn fixture_path(version: u32) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join(format!("tests/fixtures/format-v{version}.mfdb"))
}

fn write_fixture() {
    let storage = Arc::new(MemStorage::new());
    let pager = Pager::open(storage.clone(), Options::default()).expect("open");
    let mut txn = pager.begin_write().expect("write");
    for (key, value) in model() {
        TREE.insert(&mut txn, &key, &value).expect("insert");
    }
    txn.commit().expect("commit");
    pager.checkpoint(7).expect("checkpoint");
    let pages = pager.stats().expect("stats").page_count;
    let mut bytes = storage.snapshot();
    bytes.truncate(pages as usize * pager::limits::PAGE_SIZE);
    std::fs::write(fixture_path(FORMAT_VERSION), bytes).expect("write fixture");
}

#[test]
fn fixture_of_every_format_version_opens_and_reads_back() {
    if std::env::var_os("MFDB_WRITE_FIXTURES").is_some() {
        write_fixture();
    }
    for version in 1..=FORMAT_VERSION {
        let bytes = std::fs::read(fixture_path(version)).expect("fixture exists");
        let storage: Arc<dyn Storage> = Arc::new(MemStorage::from_bytes(bytes));
        let pager = Pager::open(storage, Options::default()).expect("fixture opens");
        assert_eq!(pager.checkpoint_lsn(), 7);
        assert_eq!(contents(&pager), model(), "format v{version}");
        verify_all(&pager);
    }
}

/// A format 1 file edited by this build holds cells of both encodings side by side (the
/// old `u32` lengths and the new varints) in the same nodes; every read and the verifier
/// accept both, and after a checkpoint the file says format 2.
#[test]
fn a_format_1_file_takes_new_cells_beside_its_old_ones() {
    let bytes = std::fs::read(fixture_path(1)).expect("fixture exists");
    let storage = Arc::new(MemStorage::from_bytes(bytes));
    let pager = Pager::open(storage.clone(), Options::default()).expect("fixture opens");
    let mut model = model();
    let mut txn = pager.begin_write().expect("write");
    for i in (0..60u32).step_by(3) {
        let key = i.to_be_bytes().to_vec();
        TREE.remove(&mut txn, &key).expect("remove");
        model.remove(&key);
    }
    for i in 1000..1400u32 {
        let (key, value) = (i.to_be_bytes().to_vec(), format!("new {i}").into_bytes());
        TREE.insert(&mut txn, &key, &value).expect("insert");
        model.insert(key, value);
    }
    let key = 7u32.to_be_bytes().to_vec();
    TREE.insert(&mut txn, &key, b"replaced").expect("replace");
    model.insert(key, b"replaced".to_vec());
    txn.commit().expect("commit");
    assert_eq!(contents(&pager), model);
    verify_all(&pager);
    pager.checkpoint(8).expect("checkpoint");
    drop(pager);
    let version = u32::from_le_bytes(storage.snapshot()[8..12].try_into().expect("4 bytes"));
    let other = u32::from_le_bytes(
        storage.snapshot()[pager::limits::PAGE_SIZE + 8..pager::limits::PAGE_SIZE + 12]
            .try_into()
            .expect("4 bytes"),
    );
    assert_eq!(version.max(other), FORMAT_VERSION);
    let pager = Pager::open(storage, Options::default()).expect("reopens");
    assert_eq!(contents(&pager), model);
    verify_all(&pager);
}
