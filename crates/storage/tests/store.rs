//! The store against a model: random inserts, updates, deletes and catalog changes across
//! collections, with checkpoints, clean reopens and simulated power cuts (`CrashStorage`)
//! in between. After every crash the database equals the model: every committed change is
//! there, nothing else is, and `verify` passes.

use crate::ns;
use bson::{RawDocumentBuf, rawdoc};
use proptest::prelude::*;
use std::collections::BTreeMap;
use std::sync::Arc;
use storage::store::{Namespace, Store, StoreError, StoreOptions};
use wal::{CrashStorage, Dir, MemDir, MemStorage};

type Model = BTreeMap<Namespace, BTreeMap<i64, RawDocumentBuf>>;

const DB_FILE: &str = "test.mfdb";

fn options() -> StoreOptions {
    StoreOptions {
        // Implicitly created collections compress; `Step::Create(1)` makes a raw one, so
        // a database holds both kinds side by side (issue 18).
        compressor: storage::store::Compressor::Lz4,
        ..crate::memory_options()
    }
}

fn open<S: wal::Storage + 'static>(dir: &Arc<MemDir<S>>) -> Arc<Store> {
    Store::open(Arc::clone(dir) as Arc<dyn Dir>, DB_FILE, options()).expect("open")
}

/// The whole database as a model, read through a snapshot.
fn contents(store: &Store) -> Model {
    let reader = store.read().expect("read");
    let mut model = Model::new();
    for (name, meta) in reader.collections(None).expect("collections") {
        let docs = model.entry(name).or_default();
        for entry in reader.scan(&meta, None).expect("scan") {
            let (_, bytes) = entry.expect("record");
            let doc = RawDocumentBuf::from_bytes(bytes.into_owned()).expect("bson");
            let id = doc.get_i64("_id").expect("_id");
            docs.insert(id, doc);
        }
    }
    model
}

/// Every third size is noise (stored raw even where compression is on), the rest
/// compresses.
fn doc(id: i64, n: usize) -> RawDocumentBuf {
    let pad = if n.is_multiple_of(3) {
        let mut x = (n as u64 + 1).wrapping_mul(0x9e37_79b9_7f4a_7c15);
        (0..n)
            .map(|_| {
                x ^= x << 13;
                x ^= x >> 7;
                x ^= x << 17;
                char::from(b'!' + (x % 90) as u8)
            })
            .collect()
    } else {
        "x".repeat(n)
    };
    rawdoc! { "_id": id, "pad": pad }
}

/// `doc` with field `v` set to `v`: in place when present (same size for an int64), at the
/// end otherwise.
fn with_field(doc: &RawDocumentBuf, v: i64) -> RawDocumentBuf {
    let mut out = RawDocumentBuf::new();
    let mut set = false;
    for field in doc {
        let (key, value) = field.expect("field");
        if key == "v" {
            out.append(bson::cstr!("v"), v);
            set = true;
        } else {
            out.append(key, bson::RawBson::from(value));
        }
    }
    if !set {
        out.append(bson::cstr!("v"), v);
    }
    out
}

#[derive(Clone, Debug)]
enum Step {
    Insert(usize, i64, usize),
    Update(usize, i64, usize),
    /// Sets field `v` of a document (an edit of a few bytes: logged as a patch).
    Bump(usize, i64, i64),
    Delete(usize, i64),
    Create(usize),
    Drop(usize),
    Rename(usize, usize),
    Checkpoint,
    Crash(u64),
    Reopen,
}

fn step() -> impl Strategy<Value = Step> {
    prop_oneof![
        8 => (0..3usize, 0..40i64, 0..3000usize).prop_map(|(c, k, n)| Step::Insert(c, k, n)),
        4 => (0..3usize, 0..40i64, 0..3000usize).prop_map(|(c, k, n)| Step::Update(c, k, n)),
        4 => (0..3usize, 0..40i64, any::<i64>()).prop_map(|(c, k, v)| Step::Bump(c, k, v)),
        3 => (0..3usize, 0..40i64).prop_map(|(c, k)| Step::Delete(c, k)),
        1 => (0..3usize).prop_map(Step::Create),
        1 => (0..3usize).prop_map(Step::Drop),
        1 => (0..3usize, 0..3usize).prop_map(|(a, b)| Step::Rename(a, b)),
        1 => Just(Step::Checkpoint),
        2 => any::<u64>().prop_map(Step::Crash),
        1 => Just(Step::Reopen),
    ]
}

/// Replaces document `k` of collection `c` by `new(old)` in the store and the model, when
/// both have it.
fn replace_modeled(
    store: &Store,
    model: &mut Model,
    c: usize,
    k: i64,
    new: impl FnOnce(&RawDocumentBuf) -> RawDocumentBuf,
) {
    let mut w = store.write().expect("write");
    let found = w
        .find_id(&ns(c), bson::raw::RawBsonRef::Int64(k))
        .expect("find");
    let modeled = model.get_mut(&ns(c)).and_then(|m| m.get_mut(&k));
    assert_eq!(found.is_some(), modeled.is_some(), "find_id {k}");
    if let (Some((rid, _)), Some(slot)) = (found, modeled) {
        let replacement = new(slot);
        w.update(&ns(c), rid, &replacement).expect("update");
        w.commit().expect("commit");
        *slot = replacement;
    }
}

/// Applies one step to the store and the model. Each committed write is durable on return.
fn run(store: &Store, model: &mut Model, step: &Step) {
    match *step {
        Step::Insert(c, k, n) => {
            let mut w = store.write().expect("write");
            match w.insert(&ns(c), &doc(k, n)) {
                Ok(_) => {
                    w.commit().expect("commit");
                    model.entry(ns(c)).or_default().insert(k, doc(k, n));
                }
                Err(StoreError::DuplicateKey { .. }) => {
                    assert!(model.get(&ns(c)).is_some_and(|m| m.contains_key(&k)));
                }
                Err(e) => panic!("insert: {e}"),
            }
        }
        Step::Update(c, k, n) => replace_modeled(store, model, c, k, |_| doc(k, n)),
        Step::Bump(c, k, v) => replace_modeled(store, model, c, k, |old| with_field(old, v)),
        Step::Delete(c, k) => {
            let mut w = store.write().expect("write");
            if let Some((rid, _)) = w
                .find_id(&ns(c), bson::raw::RawBsonRef::Int64(k))
                .expect("find")
            {
                w.delete(&ns(c), rid).expect("delete");
                w.commit().expect("commit");
                model.get_mut(&ns(c)).expect("modeled").remove(&k);
            }
        }
        Step::Create(c) => {
            let mut w = store.write().expect("write");
            let options = if c == 1 {
                rawdoc! { "storageEngine": { "multiforadb": { "compressor": "none" } } }
            } else {
                rawdoc! {}
            };
            match w.create_collection(&ns(c), options) {
                Ok(()) => {
                    w.commit().expect("commit");
                    model.insert(ns(c), BTreeMap::new());
                }
                Err(StoreError::NamespaceExists(_)) => assert!(model.contains_key(&ns(c))),
                Err(e) => panic!("create: {e}"),
            }
        }
        Step::Drop(c) => {
            let mut w = store.write().expect("write");
            let existed = w.drop_collection(&ns(c)).expect("drop");
            assert_eq!(existed, model.remove(&ns(c)).is_some());
            w.commit().expect("commit");
        }
        Step::Rename(a, b) => {
            let mut w = store.write().expect("write");
            match w.rename_collection(&ns(a), &ns(b)) {
                Ok(()) => {
                    w.commit().expect("commit");
                    let docs = model.remove(&ns(a)).expect("source modeled");
                    model.insert(ns(b), docs);
                }
                Err(StoreError::NamespaceNotFound(_)) => assert!(!model.contains_key(&ns(a))),
                Err(StoreError::NamespaceExists(_)) => assert!(model.contains_key(&ns(b))),
                Err(e) => panic!("rename: {e}"),
            }
        }
        Step::Checkpoint => store.checkpoint().expect("checkpoint"),
        Step::Crash(_) | Step::Reopen => unreachable!("handled by the driver loop"),
    }
}

fn check(store: &Store, model: &Model) {
    assert_eq!(&contents(store), model);
    let report = store.verify().expect("verify");
    assert_eq!(report.collections, model.len() as u64);
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 40, ..ProptestConfig::default() })]
    #[test]
    fn store_survives_crashes_with_every_committed_change(
        steps in prop::collection::vec(step(), 1..120)
    ) {
        let dir = Arc::new(MemDir::<CrashStorage>::new());
        let mut store = open(&dir);
        let mut model = Model::new();
        for step in &steps {
            match *step {
                Step::Crash(seed) => {
                    drop(store);
                    for name in dir.names() {
                        dir.file(&name).expect("file").crash(seed);
                    }
                    store = open(&dir);
                    check(&store, &model);
                }
                Step::Reopen => {
                    store.close().expect("close");
                    drop(store);
                    prop_assert_eq!(dir.names(), vec![DB_FILE.to_owned()]);
                    store = open(&dir);
                    check(&store, &model);
                }
                _ => run(&store, &mut model, step),
            }
        }
        check(&store, &model);
    }
}

#[test]
fn a_clean_close_leaves_one_file_and_reopens_without_replay() {
    let dir = Arc::new(MemDir::<MemStorage>::new());
    let store = open(&dir);
    let mut w = store.write().expect("write");
    for i in 0..100 {
        w.insert(&ns(0), &doc(i, 100)).expect("insert");
    }
    w.commit().expect("commit");
    store.close().expect("close");
    assert!(matches!(store.write(), Err(StoreError::Closed)));
    drop(store);
    assert_eq!(dir.names(), vec![DB_FILE.to_owned()]);
    let store = open(&dir);
    assert_eq!(store.open_report().replayed, 0);
    assert_eq!(contents(&store)[&ns(0)].len(), 100);
    // New writes after reopen get LSNs past the checkpoint: they replay after a crash.
    let mut w = store.write().expect("write");
    w.insert(&ns(0), &doc(1000, 10)).expect("insert");
    w.commit().expect("commit");
    drop(store);
    let store = open(&dir);
    assert_eq!(store.open_report().replayed, 1);
    assert_eq!(contents(&store)[&ns(0)].len(), 101);
}

/// A small edit of a large document is logged as the bytes that changed (issue 26's
/// `updateMany` gate), and replays after a power cut to exactly the live documents.
#[test]
fn small_edits_of_large_documents_log_a_few_bytes_and_replay() {
    let dir = Arc::new(MemDir::<CrashStorage>::new());
    let store = open(&dir);
    let mut model = Model::new();
    for k in 0..40 {
        run(&store, &mut model, &Step::Insert(1, k, 16_000));
    }
    store.checkpoint().expect("checkpoint");
    assert_eq!(store.logged_bytes(), 0);
    for round in 0..3 {
        for k in 0..40 {
            run(&store, &mut model, &Step::Bump(1, k, round * 1000 + k));
        }
    }
    // 120 updates of 16 KB documents, about 2 MB if logged whole.
    let logged = store.logged_bytes();
    assert!(
        logged < 120 * 200,
        "{logged} bytes logged for 120 small edits"
    );
    drop(store);
    for name in dir.names() {
        dir.file(&name).expect("file").crash(7);
    }
    let store = open(&dir);
    assert_eq!(store.open_report().replayed, 120);
    check(&store, &model);
}

#[test]
fn a_dropped_collection_stays_dropped_after_restart() {
    let dir = Arc::new(MemDir::<MemStorage>::new());
    let store = open(&dir);
    let mut w = store.write().expect("write");
    w.insert(&ns(0), &doc(1, 10)).expect("insert");
    w.commit().expect("commit");
    store.checkpoint().expect("checkpoint");
    let mut w = store.write().expect("write");
    assert!(w.drop_collection(&ns(0)).expect("drop"));
    w.commit().expect("commit");
    drop(store);
    let store = open(&dir);
    assert!(contents(&store).is_empty());
    store.close().expect("close");
    drop(store);
    let store = open(&dir);
    assert!(contents(&store).is_empty());
}

/// A transaction larger than one log record (6 MiB: two records) whose first record
/// reached the log and whose last did not (a crash before its commit) is not applied, and
/// the records it left are not taken for the start of the next transaction. Found by the
/// crash matrix (`cargo xtask crash --point wal.append.after_flush`): before the
/// continuation marker, replay applied the first 254 of the 384 documents.
#[test]
fn a_transaction_cut_between_its_records_is_not_replayed() {
    let dir = Arc::new(MemDir::<MemStorage>::new());
    let store = open(&dir);
    let mut w = store.write().expect("write");
    w.insert(&ns(0), &doc(0, 10)).expect("insert");
    w.commit().expect("commit");
    let mut w = store.write().expect("write");
    for i in 1..=384 {
        w.insert(&ns(0), &doc(i, 16 * 1024)).expect("insert");
    }
    // The first record is written out when the second is appended (past the log's flush
    // threshold); the second stays in memory: dropping the store now is the crash.
    w.commit_nowait().expect("commit without waiting");
    drop(store);
    let store = open(&dir);
    assert_eq!(
        store.open_report().unfinished,
        1,
        "{:?}",
        store.open_report()
    );
    assert_eq!(
        contents(&store)[&ns(0)].len(),
        1,
        "only the committed document"
    );
    store.verify().expect("verify");
    let mut w = store.write().expect("write");
    w.insert(&ns(0), &doc(1000, 10)).expect("insert");
    w.commit().expect("commit");
    drop(store);
    let store = open(&dir);
    let ids: Vec<i64> = contents(&store)[&ns(0)].keys().copied().collect();
    assert_eq!(ids, vec![0, 1000]);
    store.verify().expect("verify");
}

#[test]
fn equal_ids_of_different_numeric_types_are_one_key() {
    let dir = Arc::new(MemDir::<MemStorage>::new());
    let store = open(&dir);
    let mut w = store.write().expect("write");
    w.insert(&ns(0), &rawdoc! {"_id": 1i32}).expect("insert");
    let err = w
        .insert(&ns(0), &rawdoc! {"_id": 1.0f64})
        .expect_err("duplicate");
    assert_eq!(
        err.to_string(),
        "E11000 duplicate key error collection: db.c0 index: _id_ dup key: { _id: 1.0 }"
    );
    assert!(w.insert(&ns(0), &rawdoc! {"_id": 1i64}).is_err());
    assert!(
        w.find_id(&ns(0), bson::raw::RawBsonRef::Double(1.0))
            .expect("find")
            .is_some()
    );
}

#[test]
fn an_update_to_an_id_another_record_has_is_refused_and_changes_nothing() {
    let dir = Arc::new(MemDir::<MemStorage>::new());
    let store = open(&dir);
    let mut w = store.write().expect("write");
    let first = w.insert(&ns(0), &doc(1, 3)).expect("insert");
    w.insert(&ns(0), &doc(2, 3)).expect("insert");
    let err = w
        .update(&ns(0), first, &doc(2, 9))
        .expect_err("the other record's _id");
    assert!(matches!(err, StoreError::DuplicateKey { .. }), "{err}");
    // A new _id nobody has is fine, and the old one is free afterwards.
    w.update(&ns(0), first, &doc(3, 4)).expect("a free _id");
    w.insert(&ns(0), &doc(1, 5))
        .expect("the old _id is free again");
    w.commit().expect("commit");
    let ids: Vec<i64> = contents(&store)[&ns(0)].keys().copied().collect();
    assert_eq!(ids, vec![1, 2, 3]);
    assert_eq!(contents(&store)[&ns(0)][&2], doc(2, 3), "untouched");
    store.verify().expect("verify");
}

#[test]
fn a_damaged_last_log_block_is_cut_off_loudly_with_where_and_how_much() {
    let dir = Arc::new(MemDir::<MemStorage>::new());
    let store = open(&dir);
    for batch in 0..3 {
        let mut w = store.write().expect("write");
        for i in 0..20 {
            w.insert(&ns(0), &doc(batch * 100 + i, 200))
                .expect("insert");
        }
        w.commit().expect("commit");
    }
    drop(store); // as after kill -9: the log holds the three batches
    let log = dir.file(&format!("{DB_FILE}-wal")).expect("log");
    // Flip a byte inside the last block (the third batch).
    let len = log
        .snapshot()
        .iter()
        .rposition(|&b| b != 0)
        .expect("log bytes");
    let mut byte = [0u8];
    wal::Storage::read_at(log.as_ref(), &mut byte, len as u64 - 8).expect("read");
    byte[0] ^= 0xff;
    wal::Storage::write_at(log.as_ref(), &byte, len as u64 - 8).expect("write");
    let store = open(&dir);
    let report = store.open_report();
    assert!(report.torn_tail);
    let [warning] = report.warnings.as_slice() else {
        panic!("one warning: {report:?}")
    };
    for needle in [
        "damaged block",
        "cut off",
        "bytes at offset",
        "from lsn 3",
        "data loss",
    ] {
        assert!(warning.contains(needle), "{needle:?} in {warning}");
    }
    assert_eq!(
        contents(&store)[&ns(0)].len(),
        40,
        "the first two batches replay"
    );
}
