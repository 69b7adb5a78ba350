//! find's `allowDiskUse` (issue 17): a sort over the memory limit (set small here with
//! setParameter `internalQueryMaxBlockingSortMemoryUsageBytes`) spills to a file beside
//! the database and answers exactly what the in-memory sort answers; the file is gone
//! once the cursor is drained or killed, after a failure, and after a crash at the next
//! open. Before this, allowDiskUse was refused with 146.

use super::{batch, drain, engine, fails, insert, ok};
use crate::engine::{Engine, EngineOptions, StartupOptions};
use bson::{Bson, Document, RawDocumentBuf, doc, rawdoc};
use proptest::prelude::*;
use std::sync::Arc;
use wal::{Dir, Fault, FaultKind, FaultyStorage, MemDir, MemStorage, Op};

pub(super) fn set_limit(engine: &Engine, bytes: i32) {
    let cmd = rawdoc! { "setParameter": 1, "internalQueryMaxBlockingSortMemoryUsageBytes": bytes };
    let reply = admin(engine, cmd);
    assert_eq!(reply.get_f64("ok").ok(), Some(1.0), "{reply:?}");
}

/// Sets the `$group` memory limit with setParameter `internalDocumentSourceGroupMaxMemoryBytes`.
pub(super) fn set_group_limit(engine: &Engine, bytes: i64) {
    let cmd = rawdoc! { "setParameter": 1, "internalDocumentSourceGroupMaxMemoryBytes": bytes };
    let reply = admin(engine, cmd);
    assert_eq!(reply.get_f64("ok").ok(), Some(1.0), "{reply:?}");
}

/// Runs `cmd` against `admin`.
fn admin(engine: &Engine, cmd: RawDocumentBuf) -> Document {
    let reply = engine.run_command("admin", &cmd, &crate::ConnectionContext::default());
    Document::try_from(&reply).expect("valid")
}

/// The spill files beside `engine`'s database.
pub(super) fn spill_files(engine: &Engine) -> Vec<String> {
    let store = engine.store();
    let (dir, _) = store.files();
    let names = dir.list().expect("listed");
    names.into_iter().filter(|n| n.contains(".sort-")).collect()
}

/// A value of one of several types, an array now and then, or nothing.
pub(super) fn mixed(i: i32) -> Option<Bson> {
    match i % 9 {
        0 => None,
        1 => Some(Bson::String(format!("s{}", i % 5))),
        2 => Some(Bson::Array(vec![Bson::Int32(i % 7), Bson::Int32(-(i % 4))])),
        3 => Some(Bson::Double(f64::from(i % 6) / 2.0)),
        4 => Some(Bson::Null),
        5 => Some(Bson::Array(vec![])),
        6 => Some(Bson::Boolean(i % 2 == 0)),
        _ => Some(Bson::Int64(i64::from(i % 11))),
    }
}

pub(super) fn mixed_docs(n: i32) -> Vec<RawDocumentBuf> {
    (0..n)
        .map(|i| {
            let mut d = doc! { "_id": i, "pad": "p".repeat(20 + (i % 13) as usize) };
            if let Some(k) = mixed(i * 31 % 97) {
                d.insert("k", k);
            }
            RawDocumentBuf::try_from(&d).expect("small")
        })
        .collect()
}

pub(super) fn ids(docs: &[Document]) -> Vec<i32> {
    docs.iter()
        .map(|d| d.get_i32("_id").expect("_id"))
        .collect()
}

/// A find of `test.c` with `extra` options, drained in batches of 7.
fn find_all(engine: &Engine, extra: Document) -> Vec<i32> {
    let mut cmd = doc! { "find": "c", "batchSize": 7 };
    cmd.extend(extra);
    let cmd = RawDocumentBuf::try_from(&cmd).expect("command");
    let first = ok(engine, cmd);
    ids(&drain(engine, "c", &first, Some(7)))
}

#[test]
fn a_spilled_find_sort_answers_as_the_in_memory_sort() {
    let (engine, _) = engine();
    insert(&engine, "c", mixed_docs(400));
    let cases = [
        doc! { "sort": { "k": 1 } },
        doc! { "sort": { "k": -1 } },
        doc! { "sort": { "k": 1, "_id": -1 } },
        doc! { "sort": { "k": -1 }, "skip": 13 },
        doc! { "sort": { "k": 1 }, "skip": 5, "limit": 150 },
        doc! { "sort": { "k": -1 }, "limit": 390 },
        doc! { "sort": { "k": 1 }, "filter": { "_id": { "$gte": 100 } }, "projection": { "pad": 0 } },
    ];
    let expected: Vec<Vec<i32>> = cases.iter().map(|c| find_all(&engine, c.clone())).collect();
    set_limit(&engine, 3000);
    for (case, expected) in cases.iter().zip(&expected) {
        let mut spilled = case.clone();
        spilled.insert("allowDiskUse", true);
        assert_eq!(&find_all(&engine, spilled), expected, "{case:?}");
        assert_eq!(spill_files(&engine), Vec::<String>::new(), "{case:?}");
    }
    let message = fails(&engine, rawdoc! { "find": "c", "sort": { "k": 1 } }, 292);
    assert!(
        message.contains("Sort exceeded memory limit of 3000 bytes, but did not opt in"),
        "{message}"
    );
}

#[test]
fn a_killed_spilled_cursor_removes_its_file() {
    let (engine, _) = engine();
    insert(&engine, "c", mixed_docs(300));
    set_limit(&engine, 2000);
    let first = ok(
        &engine,
        rawdoc! { "find": "c", "sort": { "k": 1 }, "allowDiskUse": true, "batchSize": 3 },
    );
    let (_, id) = batch(&first);
    assert_ne!(id, 0);
    assert_eq!(spill_files(&engine), vec!["memory.mfdb.sort-1".to_owned()]);
    ok(&engine, rawdoc! { "killCursors": "c", "cursors": [id] });
    assert_eq!(spill_files(&engine), Vec::<String>::new());
}

#[test]
fn explain_shows_the_sort_spilling() {
    let (engine, _) = engine();
    insert(&engine, "c", mixed_docs(300));
    let explain = |allow: bool| {
        let cmd = rawdoc! {
            "explain": { "find": "c", "sort": { "k": 1 }, "allowDiskUse": allow },
            "verbosity": "executionStats",
        };
        ok(&engine, cmd)
    };
    let sort_stage = |reply: &Document| {
        let stats = reply
            .get_document("executionStats")
            .expect("executionStats");
        stats
            .get_document("executionStages")
            .expect("stages")
            .clone()
    };
    let total: i64 = mixed_docs(300)
        .iter()
        .map(|d| d.as_bytes().len() as i64)
        .sum();
    let in_memory = sort_stage(&explain(true));
    assert_eq!(in_memory.get_str("stage").ok(), Some("SORT"));
    assert_eq!(in_memory.get_bool("usedDisk").ok(), Some(false));
    assert_eq!(in_memory.get_i64("spills").ok(), Some(0));
    assert_eq!(in_memory.get_i64("totalDataSizeSorted").ok(), Some(total));
    assert_eq!(in_memory.get_i64("memLimit").ok(), Some(104_857_600));
    set_limit(&engine, 2000);
    let spilled = sort_stage(&explain(true));
    assert_eq!(spilled.get_bool("usedDisk").ok(), Some(true));
    // Runs are cut when the buffer passes 2000 bytes: at least total / 2000 of them.
    let spills = spilled.get_i64("spills").expect("spills");
    assert!(
        spills >= total / 2000 && spills <= total / 1000 + 1,
        "{spills} of {total}"
    );
    assert_eq!(spilled.get_i64("memLimit").ok(), Some(2000));
    assert_eq!(spilled.get_i64("nReturned").ok(), Some(300));
    assert_eq!(spill_files(&engine), Vec::<String>::new());
    let refused = explain(false);
    let stats = refused
        .get_document("executionStats")
        .expect("executionStats");
    assert_eq!(
        stats.get_bool("executionSuccess").ok(),
        Some(false),
        "{stats:?}"
    );
    assert_eq!(stats.get_i32("errorCode").ok(), Some(292));
}

#[test]
fn the_sort_memory_limit_is_a_parameter() {
    let (engine, _) = engine();
    let get = rawdoc! { "getParameter": 1, "internalQueryMaxBlockingSortMemoryUsageBytes": 1 };
    let value = |engine: &Engine| {
        let reply = admin(engine, get.clone());
        reply
            .get_i32("internalQueryMaxBlockingSortMemoryUsageBytes")
            .ok()
    };
    assert_eq!(value(&engine), Some(104_857_600));
    set_limit(&engine, 5000);
    assert_eq!(value(&engine), Some(5000));
    let negative =
        rawdoc! { "setParameter": 1, "internalQueryMaxBlockingSortMemoryUsageBytes": -1 };
    assert_eq!(admin(&engine, negative).get_i32("code").ok(), Some(2));
    engine.set_sort_bytes_max(7000);
    assert_eq!(value(&engine), Some(7000));
}

pub(super) type FaultyDir = MemDir<FaultyStorage<MemStorage>>;

pub(super) fn engine_in(dir: &Arc<FaultyDir>) -> Engine {
    let options = EngineOptions {
        host: Arc::new(crate::host::FixedHost::default()),
        startup: StartupOptions::default(),
        connections_max: 10,
        ttl_interval: None,
    };
    let store_options = crate::store::StoreOptions {
        checkpoint_interval: None,
        pager: pager::Options {
            mmap: false,
            ..pager::Options::default()
        },
        ..crate::store::StoreOptions::default()
    };
    let dir = Arc::clone(dir) as Arc<dyn Dir>;
    Engine::open_in(dir, "t.mfdb", options, store_options).expect("opens")
}

#[test]
fn a_failed_spill_write_is_a_clean_error_and_the_file_goes() {
    let dir: Arc<FaultyDir> = Arc::new(MemDir::with_factory(|| {
        FaultyStorage::new(MemStorage::default())
    }));
    // A crash's leftover is removed at open; a stranger's file is not.
    dir.insert("t.mfdb.sort-9", FaultyStorage::new(MemStorage::default()));
    dir.insert("t.mfdb.sorted", FaultyStorage::new(MemStorage::default()));
    let engine = engine_in(&dir);
    assert!(
        !dir.names().contains(&"t.mfdb.sort-9".to_owned()),
        "{:?}",
        dir.names()
    );
    assert!(dir.names().contains(&"t.mfdb.sorted".to_owned()));
    insert(&engine, "c", mixed_docs(200));
    set_limit(&engine, 1500);
    let file = dir.insert("t.mfdb.sort-1", FaultyStorage::new(MemStorage::default()));
    file.inject(Fault {
        op: Op::Write,
        nth: 2,
        kind: FaultKind::Io,
        sticky: true,
    });
    let cmd = rawdoc! { "find": "c", "sort": { "k": 1 }, "allowDiskUse": true };
    let message = fails(&engine, cmd.clone(), 39);
    assert!(
        message.contains("error writing to file \"t.mfdb.sort-1\""),
        "{message}"
    );
    assert_eq!(spill_files(&engine), Vec::<String>::new());
    // The store is not failed by a temporary file: the next sort spills to a new one.
    let first = ok(&engine, cmd);
    assert_eq!(drain(&engine, "c", &first, None).len(), 200);
    assert_eq!(spill_files(&engine), Vec::<String>::new());
    assert!(!engine.store().is_failed());
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 24, ..ProptestConfig::default() })]

    /// Spilled and in-memory finds agree on random mixed-type data, both directions,
    /// with skips and limits.
    #[test]
    fn spilled_and_in_memory_finds_agree(
        seed in 0i32..1000,
        n in 1i32..250,
        direction in prop_oneof![Just(1), Just(-1)],
        skip in prop::option::of(0i64..40),
        limit in prop::option::of(1i64..60),
        limit_bytes in 300i32..4000,
    ) {
        let (engine, _) = engine();
        let docs: Vec<RawDocumentBuf> = (0..n)
            .map(|i| {
                let mut d = doc! { "_id": i, "pad": "p".repeat(((i + seed) % 17) as usize) };
                if let Some(k) = mixed((i * 37 + seed) % 101) {
                    d.insert("k", k);
                }
                RawDocumentBuf::try_from(&d).expect("small")
            })
            .collect();
        insert(&engine, "c", docs);
        let mut case = doc! { "sort": { "k": direction } };
        if let Some(skip) = skip {
            case.insert("skip", skip);
        }
        if let Some(limit) = limit {
            case.insert("limit", limit);
        }
        let expected = find_all(&engine, case.clone());
        set_limit(&engine, limit_bytes);
        case.insert("allowDiskUse", true);
        prop_assert_eq!(find_all(&engine, case), expected);
        prop_assert!(spill_files(&engine).is_empty());
    }
}
