//! Wildcard indexes end to end (issue 26): which filters they answer and which they must
//! not (mongod's rules: not `null`, `$exists: false` or `$ne`, not equality to a non-empty
//! document or array, not a paths its projection leaves out, not a positional path
//! through an array), the `$exists: true` subpath bounds, hints (291 when no path is
//! covered), explain in mongod's expanded shape, and that writes keep the index valid.
//! Every answer is compared with a collection scan.

use crate::support::{fails, ok, run};
use bson::{Bson, Document, RawDocumentBuf, doc};
use engine::Engine;

fn raw(doc: Document) -> RawDocumentBuf {
    RawDocumentBuf::try_from(&doc).expect("encodes")
}

/// An engine whose `db.c` holds `docs` and the indexes `specs`.
fn setup(specs: Vec<Document>, docs: Vec<Document>) -> Engine {
    let engine = crate::support::engine();
    ok(
        &engine,
        "db",
        raw(doc! { "createIndexes": "c", "indexes": specs }),
    );
    if !docs.is_empty() {
        ok(
            &engine,
            "db",
            raw(doc! { "insert": "c", "documents": docs }),
        );
    }
    engine
}

fn ids_of(reply: &Document) -> Vec<i32> {
    let mut ids: Vec<i32> = reply
        .get_document("cursor")
        .and_then(|c| c.get_array("firstBatch"))
        .expect("firstBatch")
        .iter()
        .map(|d| {
            d.as_document()
                .and_then(|d| d.get_i32("_id").ok())
                .expect("_id")
        })
        .collect();
    ids.sort_unstable();
    ids
}

fn find(engine: &Engine, filter: &Document, hint: Option<Bson>) -> Vec<i32> {
    let mut cmd = doc! { "find": "c", "filter": filter.clone() };
    if let Some(hint) = hint {
        cmd.insert("hint", hint);
    }
    ids_of(&ok(engine, "db", raw(cmd)))
}

/// The winning plan's input stage (`IXSCAN` under `FETCH`, or `COLLSCAN`).
fn scan_stage(engine: &Engine, filter: &Document, hint: Option<Bson>) -> Document {
    let mut cmd = doc! { "find": "c", "filter": filter.clone() };
    if let Some(hint) = hint {
        cmd.insert("hint", hint);
    }
    let reply = ok(
        engine,
        "db",
        raw(doc! { "explain": cmd, "verbosity": "queryPlanner" }),
    );
    let winning = reply
        .get_document("queryPlanner")
        .and_then(|p| p.get_document("winningPlan"))
        .expect("winningPlan")
        .clone();
    match winning.get_document("inputStage") {
        Ok(input) => input.clone(),
        Err(_) => winning,
    }
}

fn natural() -> Option<Bson> {
    Some(Bson::Document(doc! { "$natural": 1 }))
}

/// Asserts the planner's answer, and the hinted index's, equal the scan's, which is `want`.
fn agrees(engine: &Engine, filter: Document, hint: &str, want: &[i32]) {
    assert_eq!(find(engine, &filter, natural()), want, "scan {filter:?}");
    assert_eq!(find(engine, &filter, None), want, "planned {filter:?}");
    assert_eq!(
        find(engine, &filter, Some(Bson::String(hint.to_owned()))),
        want,
        "hinted {filter:?}"
    );
}

fn wildcard(name: &str, key: Document) -> Document {
    doc! { "key": key, "name": name }
}

#[test]
fn predicates_a_missing_field_can_satisfy_are_not_answered() {
    let engine = setup(
        vec![wildcard("w", doc! { "$**": 1 })],
        vec![
            doc! { "_id": 1 },
            doc! { "_id": 2, "a": Bson::Null },
            doc! { "_id": 3, "a": 1 },
            doc! { "_id": 4, "a": [Bson::Null, 2] },
        ],
    );
    for (filter, want) in [
        (doc! { "a": Bson::Null }, vec![1, 2, 4]),
        (doc! { "a": { "$in": [Bson::Null, 1] } }, vec![1, 2, 3, 4]),
        (doc! { "a": { "$exists": false } }, vec![1]),
        (doc! { "a": { "$ne": 1 } }, vec![1, 2, 4]),
        (doc! { "a": { "$nin": [1] } }, vec![1, 2, 4]),
        (doc! { "a": { "$not": { "$gt": 1 } } }, vec![1, 2, 3]),
    ] {
        assert_eq!(find(&engine, &filter, natural()), want, "{filter:?}");
        assert_eq!(find(&engine, &filter, None), want, "{filter:?}");
        assert_eq!(
            scan_stage(&engine, &filter, None).get_str("stage").ok(),
            Some("COLLSCAN"),
            "{filter:?}"
        );
        fails(
            &engine,
            "db",
            raw(doc! { "find": "c", "filter": filter.clone(), "hint": "w" }),
            291,
        );
    }
    agrees(&engine, doc! { "a": { "$gte": 1 } }, "w", &[3, 4]);
}

#[test]
fn exists_true_reaches_the_path_and_every_path_under_it() {
    let engine = setup(
        vec![wildcard("w", doc! { "$**": 1 })],
        vec![
            doc! { "_id": 1, "a": { "b": 1 } },
            doc! { "_id": 2, "a": 1 },
            doc! { "_id": 3, "a": [] },
            doc! { "_id": 4, "b": 1 },
            doc! { "_id": 5, "a": { "b": { "c": [1, 2] }, "d": 1 } },
            doc! { "_id": 6, "ab": 1, "a/": 1 },
            doc! { "_id": 7, "a": {} },
        ],
    );
    agrees(
        &engine,
        doc! { "a": { "$exists": true } },
        "w",
        &[1, 2, 3, 5, 7],
    );
    agrees(&engine, doc! { "a.b": { "$exists": true } }, "w", &[1, 5]);
    let scan = scan_stage(&engine, &doc! { "a": { "$exists": true } }, None);
    assert_eq!(scan.get_str("indexName").ok(), Some("w"), "{scan:?}");
    assert_eq!(
        scan.get_document("indexBounds").ok(),
        Some(&doc! { "$_path": ["[\"a\", \"a\"]", "[\"a.\", \"a/\")"], "a": ["[MinKey, MaxKey]"] })
    );
}

#[test]
fn empty_documents_and_arrays_are_values_others_are_not() {
    let engine = setup(
        vec![wildcard("w", doc! { "$**": 1 })],
        vec![
            doc! { "_id": 1, "a": [] },
            doc! { "_id": 2, "a": [[]] },
            doc! { "_id": 3, "a": {} },
            doc! { "_id": 4, "a": [{}] },
            doc! { "_id": 5, "a": { "b": 1 } },
            doc! { "_id": 6, "a": [1, 2] },
            doc! { "_id": 7, "a": [[1, 2]] },
        ],
    );
    agrees(&engine, doc! { "a": [] }, "w", &[1, 2]);
    agrees(&engine, doc! { "a": {} }, "w", &[3, 4]);
    agrees(
        &engine,
        doc! { "a": { "$in": [[], {}] } },
        "w",
        &[1, 2, 3, 4],
    );
    for (filter, want) in [
        (doc! { "a": { "b": 1 } }, vec![5]),
        (doc! { "a": [1, 2] }, vec![6, 7]),
        (doc! { "a": { "$in": [5, { "b": 1 }] } }, vec![5]),
    ] {
        assert_eq!(find(&engine, &filter, natural()), want, "{filter:?}");
        assert_eq!(find(&engine, &filter, None), want, "{filter:?}");
        assert_eq!(
            scan_stage(&engine, &filter, None).get_str("stage").ok(),
            Some("COLLSCAN"),
            "{filter:?}"
        );
    }
}

#[test]
fn a_positional_path_through_an_array_is_not_bounded() {
    let engine = setup(
        vec![wildcard("w", doc! { "$**": 1 })],
        vec![doc! { "_id": 1, "a": { "0": 5 } }],
    );
    // `a` has never been an array: `a.0` is a field name, indexed as such.
    agrees(&engine, doc! { "a.0": 5 }, "w", &[1]);
    assert_eq!(
        scan_stage(&engine, &doc! { "a.0": 5 }, None)
            .get_str("indexName")
            .ok(),
        Some("w")
    );
    ok(
        &engine,
        "db",
        raw(
            doc! { "insert": "c", "documents": [{ "_id": 2, "a": [5] }, { "_id": 3, "a": [{ "0": 5 }] }] },
        ),
    );
    // Now `a` is multikey: `a.0` also names the first element, indexed under `a`.
    let filter = doc! { "a.0": 5 };
    assert_eq!(find(&engine, &filter, natural()), vec![1, 2, 3]);
    assert_eq!(find(&engine, &filter, None), vec![1, 2, 3]);
    assert_eq!(
        scan_stage(&engine, &filter, None).get_str("stage").ok(),
        Some("COLLSCAN")
    );
}

#[test]
fn the_projection_decides_which_paths_a_query_may_use() {
    let engine = setup(
        vec![
            doc! { "key": { "$**": 1 }, "name": "incl", "wildcardProjection": { "a.b": 1 } },
            doc! { "key": { "x.$**": 1 }, "name": "sub" },
            doc! { "key": { "$**": 1 }, "name": "excl", "wildcardProjection": { "a": 0, "x": 0 } },
        ],
        vec![
            doc! { "_id": 1, "a": { "b": 1, "c": 1 }, "x": { "y": 1 }, "z": 1 },
            doc! { "_id": 2, "a": [{ "b": 1 }, 1], "x": 1, "z": [1] },
        ],
    );
    agrees(&engine, doc! { "a.b": 1 }, "incl", &[1, 2]);
    agrees(&engine, doc! { "x.y": 1 }, "sub", &[1]);
    agrees(&engine, doc! { "x": 1 }, "sub", &[2]);
    agrees(&engine, doc! { "z": 1 }, "excl", &[1, 2]);
    for (filter, hint) in [
        (doc! { "a": 1 }, "incl"),
        (doc! { "a.c": 1 }, "incl"),
        (doc! { "z": 1 }, "sub"),
        (doc! { "a.b": 1 }, "excl"),
        (doc! { "_id": { "$gt": 0 } }, "excl"),
    ] {
        fails(
            &engine,
            "db",
            raw(doc! { "find": "c", "filter": filter, "hint": hint }),
            291,
        );
    }
    fails(
        &engine,
        "db",
        raw(doc! { "find": "c", "filter": {}, "hint": { "x.$**": 1 } }),
        291,
    );
    agrees(&engine, doc! { "x.y": 1 }, "sub", &[1]);
    assert_eq!(
        find(
            &engine,
            &doc! { "x.y": 1 },
            Some(Bson::Document(doc! { "x.$**": 1 }))
        ),
        vec![1]
    );
}

#[test]
fn two_bounds_on_a_multikey_path_are_not_intersected() {
    let engine = setup(
        vec![wildcard("w", doc! { "$**": 1 })],
        vec![
            doc! { "_id": 1, "a": { "b": [4, -1] } },
            doc! { "_id": 2, "a": { "b": 1 } },
            doc! { "_id": 3, "a": [{ "b": 4 }, { "b": -1 }] },
        ],
    );
    agrees(
        &engine,
        doc! { "a.b": { "$gt": 3, "$lt": 0 } },
        "w",
        &[1, 3],
    );
    let engine = setup(
        vec![wildcard("w", doc! { "$**": 1 })],
        vec![
            doc! { "_id": 1, "a": { "b": 4 } },
            doc! { "_id": 2, "a": { "b": 1 } },
        ],
    );
    let scan = scan_stage(&engine, &doc! { "a.b": { "$gt": 0, "$lt": 3 } }, None);
    assert_eq!(
        scan.get_document("indexBounds").ok(),
        Some(&doc! { "$_path": ["[\"a.b\", \"a.b\"]"], "a.b": ["(0, 3)"] }),
        "not multikey: the two bounds are intersected"
    );
}

#[test]
fn explain_shows_the_wildcard_index_as_mongod_expands_it() {
    let engine = setup(
        vec![
            wildcard("w", doc! { "$**": -1 }),
            doc! { "key": { "q": 1 }, "name": "q_1" },
        ],
        vec![doc! { "_id": 1, "a": [{ "b": 1 }, { "b": 2 }] }],
    );
    let scan = scan_stage(&engine, &doc! { "a.b": { "$in": [2, 1] } }, None);
    assert_eq!(
        scan,
        doc! {
            "stage": "IXSCAN",
            "keyPattern": { "$_path": 1, "a.b": -1 },
            "indexName": "w",
            "isMultiKey": true,
            "multiKeyPaths": { "$_path": [], "a.b": ["a"] },
            "isUnique": false,
            "isSparse": false,
            "isPartial": false,
            "indexVersion": 2,
            "direction": "forward",
            "indexBounds": { "$_path": ["[\"a.b\", \"a.b\"]"], "a.b": ["[2, 2]", "[1, 1]"] },
        }
    );
    // An ordinary index with the same bounds wins the tie.
    let scan = scan_stage(&engine, &doc! { "q": 1, "a.b": 1 }, None);
    assert_eq!(scan.get_str("indexName").ok(), Some("q_1"));
    let reply = ok(
        &engine,
        "db",
        raw(
            doc! { "explain": { "find": "c", "filter": { "a.b": 2 } }, "verbosity": "executionStats" },
        ),
    );
    let stats = reply.get_document("executionStats").expect("stats");
    assert_eq!(stats.get_i64("nReturned").ok(), Some(1), "{stats:?}");
    assert_eq!(
        stats.get_i64("totalKeysExamined").ok(),
        Some(1),
        "{stats:?}"
    );
}

#[test]
fn a_wildcard_index_never_provides_a_sort() {
    let engine = setup(
        vec![wildcard("w", doc! { "$**": 1 })],
        (0..6)
            .map(|i| doc! { "_id": i, "a": (i * 7) % 5, "b": [i, 10 - i] })
            .collect(),
    );
    for (filter, sort) in [
        (doc! { "a": { "$gte": 0 } }, doc! { "a": 1, "_id": 1 }),
        (doc! { "b": { "$gte": 0 } }, doc! { "b": -1, "_id": 1 }),
    ] {
        let get = |hint: Option<Bson>| {
            let mut cmd = doc! { "find": "c", "filter": filter.clone(), "sort": sort.clone() };
            if let Some(hint) = hint {
                cmd.insert("hint", hint);
            }
            let reply = ok(&engine, "db", raw(cmd));
            reply
                .get_document("cursor")
                .and_then(|c| c.get_array("firstBatch"))
                .expect("batch")
                .iter()
                .map(|d| {
                    d.as_document()
                        .and_then(|d| d.get_i32("_id").ok())
                        .expect("_id")
                })
                .collect::<Vec<i32>>()
        };
        let scanned = get(natural());
        assert_eq!(get(None), scanned, "{filter:?} {sort:?}");
        assert_eq!(
            get(Some(Bson::String("w".into()))),
            scanned,
            "{filter:?} {sort:?}"
        );
    }
}

#[test]
fn writes_keep_a_wildcard_index_valid_and_its_multikey_paths_recorded() {
    let engine = setup(
        vec![
            wildcard("w", doc! { "$**": 1 }),
            doc! { "key": { "$**": 1 }, "name": "p", "wildcardProjection": { "a": 1 } },
        ],
        vec![doc! { "_id": 1, "a": { "b": 1 } }],
    );
    let valid = |engine: &Engine| {
        let reply = ok(engine, "db", raw(doc! { "validate": "c", "full": true }));
        assert_eq!(reply.get_bool("valid").ok(), Some(true), "{reply:?}");
        reply
    };
    valid(&engine);
    ok(
        &engine,
        "db",
        raw(
            doc! { "update": "c", "updates": [{ "q": { "_id": 1 }, "u": { "$set": { "a.b": [1, 2], "c": { "d": [] } } } }] },
        ),
    );
    let reply = valid(&engine);
    assert_eq!(
        reply.get_document("keysPerIndex").ok(),
        Some(&doc! { "_id_": 1, "w": 3, "p": 2 }),
        "{reply:?}"
    );
    agrees(&engine, doc! { "a.b": 2 }, "w", &[1]);
    agrees(&engine, doc! { "c.d": [] }, "w", &[1]);
    let scan = scan_stage(&engine, &doc! { "c.d": [] }, None);
    assert_eq!(
        scan.get_document("multiKeyPaths").ok(),
        Some(&doc! { "$_path": [], "c.d": ["c.d"] })
    );
    ok(
        &engine,
        "db",
        raw(doc! { "delete": "c", "deletes": [{ "q": { "a.b": 1 }, "limit": 0 }] }),
    );
    let reply = valid(&engine);
    assert_eq!(
        reply.get_document("keysPerIndex").ok(),
        Some(&doc! { "_id_": 0, "w": 0, "p": 0 })
    );
    // A build over existing documents gives the same entries as the writes did.
    ok(
        &engine,
        "db",
        raw(doc! { "insert": "c", "documents": [{ "_id": 2, "x": [{ "y": 1 }, [2]] }] }),
    );
    ok(
        &engine,
        "db",
        raw(doc! { "createIndexes": "c", "indexes": [{ "key": { "x.$**": 1 }, "name": "x" }] }),
    );
    let reply = valid(&engine);
    assert_eq!(
        reply.get_document("keysPerIndex").ok(),
        Some(&doc! { "_id_": 1, "w": 2, "p": 0, "x": 2 })
    );
    let scan = scan_stage(&engine, &doc! { "x.y": 1 }, Some(Bson::String("x".into())));
    assert_eq!(scan.get_bool("isMultiKey").ok(), Some(true), "{scan:?}");
    let reply = run(
        &engine,
        "db",
        raw(doc! { "find": "c", "filter": { "x": [2] }, "hint": "x" }),
    );
    assert_eq!(reply.get_i32("code").ok(), Some(291), "{reply:?}");
}

/// The specification, the entries and the recorded multikey paths come back after a
/// restart, whether the log is replayed (no clean close) or the checkpoint read (closed).
#[test]
fn a_wildcard_index_survives_a_restart_with_its_multikey_paths() {
    let path = crate::support::temp_db("wildcard-restart", "data.mfdb");
    let open = || Engine::open(&path, crate::support::options()).expect("open");
    let check = |engine: &Engine| {
        let reply = ok(engine, "db", raw(doc! { "validate": "c" }));
        assert_eq!(reply.get_bool("valid").ok(), Some(true), "{reply:?}");
        assert_eq!(
            reply.get_document("keysPerIndex").ok(),
            Some(&doc! { "_id_": 2, "w": 3 })
        );
        let scan = scan_stage(engine, &doc! { "a.b": 1 }, None);
        assert_eq!(
            scan.get_document("multiKeyPaths").ok(),
            Some(&doc! { "$_path": [], "a.b": ["a"] }),
            "{scan:?}"
        );
        agrees(engine, doc! { "a.b": 1 }, "w", &[1]);
    };
    {
        let engine = open();
        ok(
            &engine,
            "db",
            raw(doc! { "createIndexes": "c", "indexes": [
                { "key": { "$**": 1 }, "name": "w", "wildcardProjection": { "a": 1, "z": 1 } },
            ] }),
        );
        ok(
            &engine,
            "db",
            raw(doc! { "insert": "c", "documents": [
                { "_id": 1, "a": [{ "b": 1 }, { "b": 2 }] },
                { "_id": 2, "a": { "c": 3 }, "q": 1 },
            ] }),
        );
        check(&engine);
    }
    let engine = open();
    check(&engine);
    let listed = ok(&engine, "db", raw(doc! { "listIndexes": "c" }));
    let batch = listed
        .get_document("cursor")
        .and_then(|c| c.get_array("firstBatch"))
        .expect("firstBatch");
    assert_eq!(
        batch[1]
            .as_document()
            .and_then(|i| i.get_document("wildcardProjection").ok()),
        Some(&doc! { "a": 1, "z": 1 })
    );
    engine.close().expect("close");
    drop(engine);
    check(&open());
    let _ = std::fs::remove_dir_all(path.parent().expect("dir"));
}
