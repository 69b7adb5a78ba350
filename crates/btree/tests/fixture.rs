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
