//! The oplog against a model (issue 43): random writes, index changes and catalog changes
//! across collections, with checkpoints, clean reopens and simulated power cuts between
//! them. After every step:
//! - the oplog holds exactly the entries the model predicts for the committed changes, in
//!   commit order (the newest ones, within its size, when it is bounded), each `ts`
//!   greater than the last;
//! - replaying the oplog from an empty database rebuilds the database (unbounded);
//! - after a reopen, the clock hands out a `ts` past every entry.

use crate::ns;
use bson::raw::RawBsonRef;
use bson::{Bson, Document, RawDocument, RawDocumentBuf, doc, rawdoc};
use proptest::prelude::*;
use std::collections::BTreeMap;
use std::sync::Arc;
use storage::index::spec::{IndexSpec, ParseOptions};
use storage::store::oplog::{self, Ts};
use storage::store::{Namespace, Store, StoreError};
use wal::{CrashStorage, Dir, MemDir};

type Model = BTreeMap<Namespace, BTreeMap<i64, RawDocumentBuf>>;

const DB_FILE: &str = "oplog.mfdb";

fn open<S: wal::Storage + 'static>(dir: &Arc<MemDir<S>>) -> Arc<Store> {
    let options = crate::memory_options();
    let store = Store::open(Arc::clone(dir) as Arc<dyn Dir>, DB_FILE, options).expect("open");
    store.set_oplog_writes(true);
    store
}

/// Creates the oplog, bounded to `cap` bytes when given.
fn create_oplog(store: &Store, cap: Option<i64>) {
    let mut w = store.write().expect("write");
    let options = match cap {
        Some(size) => rawdoc! { "capped": true, "size": size },
        None => rawdoc! {},
    };
    w.create_collection(&oplog::namespace(), options)
        .expect("create the oplog");
    w.commit().expect("commit");
}

fn doc(id: i64, n: usize, v: i64) -> RawDocumentBuf {
    rawdoc! { "_id": id, "pad": "x".repeat(n), "v": v, "sub": { "a": v % 3, "b": "y" } }
}

/// An entry as the model predicts it: `op`, `ns`, and what identifies the change (the
/// document's `_id`, or the command's name and argument).
type Expected = (String, String, Bson);

#[derive(Clone, Debug)]
enum Step {
    Insert(usize, i64, usize),
    Replace(usize, i64, usize),
    Bump(usize, i64, i64),
    Delete(usize, i64),
    Create(usize),
    Drop(usize),
    Rename(usize, usize),
    Index(usize),
    DropIndex(usize),
    Checkpoint,
    Crash(u64),
    Reopen,
}

fn step() -> impl Strategy<Value = Step> {
    prop_oneof![
        8 => (0..3usize, 0..30i64, 0..600usize).prop_map(|(c, k, n)| Step::Insert(c, k, n)),
        3 => (0..3usize, 0..30i64, 0..600usize).prop_map(|(c, k, n)| Step::Replace(c, k, n)),
        4 => (0..3usize, 0..30i64, any::<i64>()).prop_map(|(c, k, v)| Step::Bump(c, k, v)),
        3 => (0..3usize, 0..30i64).prop_map(|(c, k)| Step::Delete(c, k)),
        1 => (0..3usize).prop_map(Step::Create),
        1 => (0..3usize).prop_map(Step::Drop),
        1 => (0..3usize, 0..3usize).prop_map(|(a, b)| Step::Rename(a, b)),
        1 => (0..3usize).prop_map(Step::Index),
        1 => (0..3usize).prop_map(Step::DropIndex),
        1 => Just(Step::Checkpoint),
        2 => any::<u64>().prop_map(Step::Crash),
        1 => Just(Step::Reopen),
    ]
}

fn expected(op: &str, ns: &Namespace, what: Bson) -> Expected {
    (op.to_owned(), ns.full(), what)
}

fn command(ns: &Namespace, name: &str, argument: &str) -> Expected {
    let what = Bson::Document(doc! { name: argument });
    (String::from("c"), format!("{}.$cmd", ns.db), what)
}

struct Harness {
    model: Model,
    /// Per collection, whether it has the index on `v`.
    indexed: BTreeMap<Namespace, bool>,
    entries: Vec<Expected>,
}

impl Harness {
    /// Replaces document `k` of collection `c` by `new(old)` when the model has it.
    fn replace(
        &mut self,
        store: &Store,
        c: usize,
        k: i64,
        replacement: bool,
        new: impl FnOnce(&RawDocumentBuf) -> RawDocumentBuf,
    ) {
        let mut w = store.write().expect("write");
        w.set_oplog_context(oplog::Context {
            replacement,
            ..oplog::Context::default()
        });
        let found = w.find_id(&ns(c), RawBsonRef::Int64(k)).expect("find");
        let modeled = self.model.get_mut(&ns(c)).and_then(|m| m.get_mut(&k));
        assert_eq!(found.is_some(), modeled.is_some(), "find_id {k}");
        if let (Some((rid, _)), Some(slot)) = (found, modeled) {
            let new = new(slot);
            w.update(&ns(c), rid, &new).expect("update");
            w.commit().expect("commit");
            *slot = new;
            self.entries.push(expected("u", &ns(c), Bson::Int64(k)));
        }
    }

    fn run(&mut self, store: &Store, step: &Step) {
        match *step {
            Step::Insert(c, k, n) => {
                let mut w = store.write().expect("write");
                let implicit = !self.model.contains_key(&ns(c));
                match w.insert(&ns(c), &doc(k, n, 0)) {
                    Ok(_) => {
                        w.commit().expect("commit");
                        if implicit {
                            self.entries.push(command(&ns(c), "create", &ns(c).coll));
                        }
                        self.entries.push(expected("i", &ns(c), Bson::Int64(k)));
                        self.model.entry(ns(c)).or_default().insert(k, doc(k, n, 0));
                    }
                    Err(StoreError::DuplicateKey { .. }) => {
                        assert!(self.model.get(&ns(c)).is_some_and(|m| m.contains_key(&k)));
                    }
                    Err(e) => panic!("insert: {e}"),
                }
            }
            Step::Replace(c, k, n) => self.replace(store, c, k, true, |_| doc(k, n, 1)),
            Step::Bump(c, k, v) => self.replace(store, c, k, false, |old| {
                let n = old.get_str("pad").expect("pad").len();
                doc(k, n, v)
            }),
            Step::Delete(c, k) => {
                let mut w = store.write().expect("write");
                if let Some((rid, _)) = w.find_id(&ns(c), RawBsonRef::Int64(k)).expect("find") {
                    w.delete(&ns(c), rid).expect("delete");
                    w.commit().expect("commit");
                    self.model.get_mut(&ns(c)).expect("modeled").remove(&k);
                    self.entries.push(expected("d", &ns(c), Bson::Int64(k)));
                }
            }
            Step::Create(c) => {
                let mut w = store.write().expect("write");
                match w.create_collection(&ns(c), rawdoc! {}) {
                    Ok(()) => {
                        w.commit().expect("commit");
                        self.model.insert(ns(c), BTreeMap::new());
                        self.entries.push(command(&ns(c), "create", &ns(c).coll));
                    }
                    Err(StoreError::NamespaceExists(_)) => {
                        assert!(self.model.contains_key(&ns(c)));
                    }
                    Err(e) => panic!("create: {e}"),
                }
            }
            Step::Drop(c) => {
                let mut w = store.write().expect("write");
                let existed = w.drop_collection(&ns(c)).expect("drop");
                assert_eq!(existed, self.model.remove(&ns(c)).is_some());
                w.commit().expect("commit");
                self.indexed.remove(&ns(c));
                if existed {
                    self.entries.push(command(&ns(c), "drop", &ns(c).coll));
                }
            }
            Step::Rename(a, b) => {
                let mut w = store.write().expect("write");
                match w.rename_collection(&ns(a), &ns(b)) {
                    Ok(()) => {
                        w.commit().expect("commit");
                        let docs = self.model.remove(&ns(a)).expect("source modeled");
                        self.model.insert(ns(b), docs);
                        let indexed = self.indexed.remove(&ns(a)).unwrap_or(false);
                        self.indexed.insert(ns(b), indexed);
                        let what = Bson::Document(doc! { "renameCollection": ns(a).full() });
                        self.entries
                            .push(("c".into(), format!("{}.$cmd", ns(a).db), what));
                    }
                    Err(StoreError::NamespaceNotFound(_)) => {
                        assert!(!self.model.contains_key(&ns(a)));
                    }
                    Err(StoreError::NamespaceExists(_)) => {
                        assert!(self.model.contains_key(&ns(b)));
                    }
                    Err(e) => panic!("rename: {e}"),
                }
            }
            Step::Index(c) => {
                if !self.model.contains_key(&ns(c)) || self.indexed.get(&ns(c)) == Some(&true) {
                    return;
                }
                let spec = IndexSpec::parse(
                    &rawdoc! { "key": { "v": 1 }, "name": "v_1" },
                    ParseOptions::default(),
                )
                .expect("spec");
                let mut w = store.write().expect("write");
                w.create_index(&ns(c), &spec).expect("create index");
                w.commit().expect("commit");
                self.indexed.insert(ns(c), true);
                self.entries
                    .push(command(&ns(c), "createIndexes", &ns(c).coll));
            }
            Step::DropIndex(c) => {
                if self.indexed.get(&ns(c)) != Some(&true) {
                    return;
                }
                let mut w = store.write().expect("write");
                w.drop_index(&ns(c), "v_1").expect("drop index");
                w.commit().expect("commit");
                self.indexed.insert(ns(c), false);
                self.entries
                    .push(command(&ns(c), "dropIndexes", &ns(c).coll));
            }
            Step::Checkpoint => store.checkpoint().expect("checkpoint"),
            Step::Crash(_) | Step::Reopen => unreachable!("handled by the driver loop"),
        }
    }
}

/// The oplog's entries, in record order.
fn oplog_entries(store: &Store) -> Vec<Document> {
    let reader = store.read().expect("read");
    let meta = reader
        .collection(&oplog::namespace())
        .expect("catalog")
        .expect("the oplog exists");
    let mut out = Vec::new();
    for record in reader.scan(&meta, None).expect("scan") {
        let (rid, bytes) = record.expect("record");
        let entry =
            Document::try_from(RawDocument::from_bytes(&bytes).expect("bson")).expect("doc");
        let ts = entry.get_timestamp("ts").expect("ts");
        assert_eq!(Ts::from_timestamp(ts).0, rid, "record id = ts");
        out.push(entry);
    }
    out
}

/// What the model predicts of an entry, read from the entry.
fn identify(entry: &Document) -> Expected {
    let op = entry.get_str("op").expect("op").to_owned();
    let ns = entry.get_str("ns").expect("ns").to_owned();
    let what = match op.as_str() {
        "i" | "u" => entry
            .get_document("o2")
            .expect("o2")
            .get("_id")
            .expect("_id")
            .clone(),
        "d" => entry
            .get_document("o")
            .expect("o")
            .get("_id")
            .expect("_id")
            .clone(),
        _ => {
            let o = entry.get_document("o").expect("o");
            let (name, argument) = o.iter().next().expect("a command");
            Bson::Document(doc! { name: argument.clone() })
        }
    };
    (op, ns, what)
}

/// The database rebuilt by applying `entries` to an empty one.
fn replayed(entries: &[Document]) -> Model {
    let mut model = Model::new();
    for entry in entries {
        let ns = entry.get_str("ns").expect("ns");
        let o = entry.get_document("o").expect("o");
        let raw = |d: &Document| RawDocumentBuf::try_from(d).expect("raw");
        match entry.get_str("op").expect("op") {
            "i" => {
                let ns = Namespace::parse(ns).expect("ns");
                let id = o.get_i64("_id").expect("_id");
                model.entry(ns).or_default().insert(id, raw(o));
            }
            "u" => {
                let ns = Namespace::parse(ns).expect("ns");
                let id = entry
                    .get_document("o2")
                    .expect("o2")
                    .get_i64("_id")
                    .expect("_id");
                let slot = model
                    .get_mut(&ns)
                    .and_then(|m| m.get_mut(&id))
                    .expect("updated doc");
                *slot = match o.get_i32("$v") {
                    Ok(2) => oplog::apply_diff(slot, &raw(o.get_document("diff").expect("diff")))
                        .expect("the diff applies"),
                    _ => raw(o),
                };
            }
            "d" => {
                let ns = Namespace::parse(ns).expect("ns");
                let id = o.get_i64("_id").expect("_id");
                assert!(model.get_mut(&ns).expect("ns").remove(&id).is_some());
            }
            "c" => {
                let db = ns.trim_end_matches(".$cmd");
                if let Ok(coll) = o.get_str("create") {
                    model.insert(Namespace::new(db, coll), BTreeMap::new());
                } else if let Ok(coll) = o.get_str("drop") {
                    model.remove(&Namespace::new(db, coll));
                } else if let Ok(from) = o.get_str("renameCollection") {
                    let to = Namespace::parse(o.get_str("to").expect("to")).expect("ns");
                    let docs = model
                        .remove(&Namespace::parse(from).expect("ns"))
                        .expect("source");
                    model.insert(to, docs);
                }
            }
            other => panic!("unexpected op {other}"),
        }
    }
    model
}

/// The database's user collections.
fn contents(store: &Store) -> Model {
    let reader = store.read().expect("read");
    let mut model = Model::new();
    for (name, meta) in reader.collections(None).expect("collections") {
        if name.db == "local" {
            continue;
        }
        let docs = model.entry(name).or_default();
        for entry in reader.scan(&meta, None).expect("scan") {
            let (_, bytes) = entry.expect("record");
            let doc = RawDocumentBuf::from_bytes(bytes.into_owned()).expect("bson");
            docs.insert(doc.get_i64("_id").expect("_id"), doc);
        }
    }
    model
}

fn check(store: &Store, harness: &Harness, cap: Option<i64>) {
    assert_eq!(contents(store), harness.model);
    store.verify().expect("verify");
    let entries = oplog_entries(store);
    let seen: Vec<Expected> = entries.iter().map(identify).collect();
    match cap {
        None => {
            assert_eq!(seen, harness.entries);
            assert_eq!(
                replayed(&entries),
                harness.model,
                "the oplog replayed from empty"
            );
        }
        Some(cap) => {
            assert!(
                harness.entries.ends_with(&seen),
                "the newest entries are kept"
            );
            let bytes: usize = entries
                .iter()
                .map(|e| RawDocumentBuf::try_from(e).expect("bytes").as_bytes().len())
                .sum();
            assert!(
                entries.len() <= 1 || bytes as i64 <= cap,
                "{bytes} bytes over {cap}"
            );
            if !harness.entries.is_empty() {
                assert!(!entries.is_empty(), "the last entry is always kept");
            }
        }
    }
    if let Some(last) = entries.last() {
        let last = Ts::from_timestamp(last.get_timestamp("ts").expect("ts"));
        assert!(
            store.oplog_clock().last() >= last,
            "the clock is at or past the last entry"
        );
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 32, ..ProptestConfig::default() })]
    #[test]
    fn the_oplog_holds_every_committed_change_in_order_across_crashes(
        steps in prop::collection::vec(step(), 1..80),
        cap in prop::option::of(1_500i64..20_000),
    ) {
        let dir = Arc::new(MemDir::<CrashStorage>::new());
        let mut store = open(&dir);
        create_oplog(&store, cap);
        let mut harness = Harness { model: Model::new(), indexed: BTreeMap::new(), entries: Vec::new() };
        for step in &steps {
            match *step {
                Step::Crash(seed) => {
                    drop(store);
                    for name in dir.names() {
                        dir.file(&name).expect("file").crash(seed);
                    }
                    store = open(&dir);
                    check(&store, &harness, cap);
                }
                Step::Reopen => {
                    store.close().expect("close");
                    drop(store);
                    store = open(&dir);
                    check(&store, &harness, cap);
                }
                _ => harness.run(&store, step),
            }
        }
        check(&store, &harness, cap);
        // Every ts is new: one more write lands after every entry.
        let before = store.oplog_clock().last();
        let mut w = store.write().expect("write");
        w.insert(&ns(0), &doc(1_000, 1, 0)).expect("insert");
        w.commit().expect("commit");
        let after = oplog_entries(&store).last().map(|e| Ts::from_timestamp(e.get_timestamp("ts").expect("ts")));
        prop_assert!(after > Some(before));
    }
}

#[test]
fn user_writes_to_the_oplog_are_refused_and_local_is_not_recorded() {
    let dir = Arc::new(MemDir::<wal::MemStorage>::new());
    let store = open(&dir);
    create_oplog(&store, None);
    let mut w = store.write().expect("write");
    let refused = w.insert(&oplog::namespace(), &rawdoc! { "_id": 1, "op": "n" });
    match refused {
        Err(StoreError::Rejected(error)) => {
            assert_eq!(error.code().code(), 73, "InvalidNamespace");
            assert_eq!(error.to_string(), "cannot write to 'local.oplog.rs'");
        }
        other => panic!("expected a refusal, got {other:?}"),
    }
    w.insert(
        &Namespace::new("local", "startup_log"),
        &rawdoc! { "_id": 1 },
    )
    .expect("insert into local");
    w.commit().expect("commit");
    assert!(oplog_entries(&store).is_empty(), "local is not recorded");
}

#[test]
fn an_entry_carries_its_statements_session_and_wall_time() {
    let dir = Arc::new(MemDir::<wal::MemStorage>::new());
    let store = open(&dir);
    create_oplog(&store, None);
    store.set_term(3);
    let mut w = store.write().expect("write");
    w.set_oplog_context(oplog::Context {
        wall_millis: Some(1_700_000_000_123),
        session: Some((rawdoc! { "id": 7 }, 42)),
        stmt_id: Some(5),
        replacement: false,
    });
    w.insert(&ns(0), &rawdoc! { "_id": 1i64 }).expect("insert");
    w.commit().expect("commit");
    drop(store);
    // After a crash-free reopen without a checkpoint, the entries come back from the log.
    let store = open(&dir);
    let entries = oplog_entries(&store);
    let insert = entries.last().expect("an entry");
    assert_eq!(
        insert.get_document("lsid").expect("lsid"),
        &doc! { "id": 7 }
    );
    assert_eq!(insert.get_i64("txnNumber").expect("txnNumber"), 42);
    assert_eq!(insert.get_i32("stmtId").expect("stmtId"), 5);
    assert_eq!(insert.get_i64("t").expect("t"), 3);
    assert_eq!(
        insert
            .get_datetime("wall")
            .expect("wall")
            .timestamp_millis(),
        1_700_000_000_123
    );
    let ts = insert.get_timestamp("ts").expect("ts");
    assert_eq!(ts.time, 1_700_000_000);
    assert_eq!(entries.len(), 2, "the implicit create, then the insert");
    assert_eq!(
        entries[0]
            .get_document("o")
            .expect("o")
            .get_str("create")
            .expect("create"),
        "c0"
    );
}

#[test]
fn notes_are_entries_of_their_own_and_come_back_from_the_log() {
    let dir = Arc::new(MemDir::<wal::MemStorage>::new());
    let store = open(&dir);
    create_oplog(&store, None);
    let mut w = store.write().expect("write");
    w.oplog_note(rawdoc! { "msg": "initiating set" })
        .expect("note");
    w.commit().expect("commit");
    drop(store);
    let store = open(&dir);
    let entries = oplog_entries(&store);
    assert_eq!(entries.len(), 1, "{entries:?}");
    let note = &entries[0];
    assert_eq!(note.get_str("op").expect("op"), "n");
    assert_eq!(note.get_str("ns").expect("ns"), "");
    assert!(note.get("ui").is_none(), "a no-op names no collection");
    assert_eq!(
        note.get_document("o").expect("o"),
        &doc! { "msg": "initiating set" }
    );
}

#[test]
fn with_oplog_writes_off_nothing_is_recorded() {
    let dir = Arc::new(MemDir::<wal::MemStorage>::new());
    let store = open(&dir);
    create_oplog(&store, None);
    store.set_oplog_writes(false);
    let mut w = store.write().expect("write");
    w.insert(&ns(0), &rawdoc! { "_id": 1i64 }).expect("insert");
    w.oplog_note(rawdoc! { "msg": "x" }).expect("note");
    w.commit().expect("commit");
    assert!(oplog_entries(&store).is_empty());
    store.set_oplog_writes(true);
    let mut w = store.write().expect("write");
    w.insert(&ns(0), &rawdoc! { "_id": 2i64 }).expect("insert");
    w.commit().expect("commit");
    assert_eq!(oplog_entries(&store).len(), 1);
}

#[test]
fn retryable_write_records_are_not_recorded() {
    let dir = Arc::new(MemDir::<wal::MemStorage>::new());
    let store = open(&dir);
    create_oplog(&store, None);
    let mut w = store.write().expect("write");
    for coll in ["transactions", "image_collection"] {
        w.insert(&Namespace::new("config", coll), &rawdoc! { "_id": 1 })
            .expect("insert");
    }
    w.insert(
        &Namespace::new("config", "system.sessions"),
        &rawdoc! { "_id": 1 },
    )
    .expect("insert");
    w.commit().expect("commit");
    let namespaces: Vec<String> = oplog_entries(&store)
        .iter()
        .map(|e| e.get_str("ns").expect("ns").to_owned())
        .collect();
    assert_eq!(
        namespaces,
        ["config.$cmd", "config.system.sessions"],
        "only system.sessions is replicated"
    );
}
