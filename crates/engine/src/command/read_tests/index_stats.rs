//! `$indexStats` (issue 17): one access per operation per index of its winning plan, since
//! the engine started or the index was created; mongod's document shape and spec rules.

use super::{engine, fails, insert, ok};
use crate::Engine;
use bson::{Document, rawdoc};
use std::collections::BTreeMap;

const START_MS: i64 = 1_700_000_000_000;

/// Every index's `(accesses.ops, accesses.since in ms)`, by name.
fn accesses(engine: &Engine) -> BTreeMap<String, (i64, i64)> {
    let reply = ok(
        engine,
        rawdoc! { "aggregate": "c", "pipeline": [{ "$indexStats": {} }], "cursor": {} },
    );
    super::batch(&reply)
        .0
        .iter()
        .map(|doc| {
            let accesses = doc.get_document("accesses").expect("accesses");
            let since = accesses.get_datetime("since").expect("since");
            let ops = accesses.get_i64("ops").expect("ops is a long");
            let name = doc.get_str("name").expect("name").to_owned();
            (name, (ops, since.timestamp_millis()))
        })
        .collect()
}

fn ops(engine: &Engine) -> Vec<(String, i64)> {
    accesses(engine)
        .into_iter()
        .map(|(name, (ops, _))| (name, ops))
        .collect()
}

fn counts(pairs: &[(&str, i64)]) -> Vec<(String, i64)> {
    pairs.iter().map(|(n, c)| ((*n).to_owned(), *c)).collect()
}

/// `test.c` with 100 documents `{_id: i, a: i % 10, b: i}`, `a_1` created 5 s after start.
fn indexed() -> (Engine, std::sync::Arc<super::Clock>) {
    let (engine, clock) = engine();
    insert(
        &engine,
        "c",
        (0..100).map(|i| rawdoc! { "_id": i, "a": i % 10, "b": i }),
    );
    clock.advance(5_000);
    ok(
        &engine,
        rawdoc! { "createIndexes": "c", "indexes": [{ "key": { "a": 1 }, "name": "a_1" }] },
    );
    (engine, clock)
}

#[test]
fn every_index_is_listed_in_mongod_shape_with_its_start() {
    let (engine, _clock) = indexed();
    let reply = ok(
        &engine,
        rawdoc! { "aggregate": "c", "pipeline": [{ "$indexStats": {} }], "cursor": {} },
    );
    let docs = super::batch(&reply).0;
    let names: Vec<&str> = docs.iter().map(|d| d.get_str("name").unwrap()).collect();
    assert_eq!(names, ["_id_", "a_1"]);
    let a = &docs[1];
    let keys: Vec<&str> = a.keys().map(String::as_str).collect();
    assert_eq!(keys, ["name", "key", "host", "accesses", "spec"]);
    assert_eq!(a.get_document("key").unwrap(), &bson::doc! { "a": 1 });
    let spec = a.get_document("spec").unwrap();
    assert_eq!(spec.get_str("name").ok(), Some("a_1"));
    assert_eq!(spec.get_i32("v").ok(), Some(2));
    // `_id_` counts from the engine's start, `a_1` from its creation.
    let seen = accesses(&engine);
    assert_eq!(seen["_id_"], (0, START_MS));
    assert_eq!(seen["a_1"], (0, START_MS + 5_000));
}

#[test]
fn each_operation_counts_once_per_index_of_its_winning_plan() {
    let (engine, _clock) = indexed();
    // A find through a_1 whose batch is cut, and its getMore: one access.
    let reply = ok(
        &engine,
        rawdoc! { "find": "c", "filter": { "a": 3 }, "batchSize": 2 },
    );
    let id = super::batch(&reply).1;
    assert_ne!(id, 0);
    ok(&engine, rawdoc! { "getMore": id, "collection": "c" });
    assert_eq!(ops(&engine), counts(&[("_id_", 0), ("a_1", 1)]));
    // A collection scan counts nothing; the `_id` lookup counts `_id_`.
    ok(&engine, rawdoc! { "find": "c", "filter": { "b": 3 } });
    ok(&engine, rawdoc! { "find": "c", "filter": { "_id": 3 } });
    assert_eq!(ops(&engine), counts(&[("_id_", 1), ("a_1", 1)]));
    // count, distinct, aggregate, update and delete through a_1: one each.
    ok(&engine, rawdoc! { "count": "c", "query": { "a": 4 } });
    ok(
        &engine,
        rawdoc! { "distinct": "c", "key": "b", "query": { "a": 4 } },
    );
    ok(
        &engine,
        rawdoc! { "aggregate": "c", "pipeline": [{ "$match": { "a": 5 } }], "cursor": {} },
    );
    ok(
        &engine,
        rawdoc! { "update": "c", "updates": [
            { "q": { "a": 6 }, "u": { "$set": { "x": 1 } }, "multi": true },
        ] },
    );
    ok(
        &engine,
        rawdoc! { "delete": "c", "deletes": [{ "q": { "a": 7 }, "limit": 0 }] },
    );
    assert_eq!(ops(&engine), counts(&[("_id_", 1), ("a_1", 6)]));
    // An `$or` of an `_id` branch and an a_1 branch uses both once.
    ok(
        &engine,
        rawdoc! { "find": "c", "filter": { "$or": [{ "_id": 50 }, { "a": 1 }] } },
    );
    assert_eq!(ops(&engine), counts(&[("_id_", 2), ("a_1", 7)]));
    // explain, inserts and index-maintaining writes count nothing.
    ok(
        &engine,
        rawdoc! { "explain": { "find": "c", "filter": { "a": 3 } }, "verbosity": "executionStats" },
    );
    ok(
        &engine,
        rawdoc! { "insert": "c", "documents": [{ "_id": 1000, "a": 3 }] },
    );
    assert_eq!(ops(&engine), counts(&[("_id_", 2), ("a_1", 7)]));
}

#[test]
fn a_recreated_index_starts_again() {
    let (engine, clock) = indexed();
    ok(&engine, rawdoc! { "find": "c", "filter": { "a": 3 } });
    assert_eq!(accesses(&engine)["a_1"], (1, START_MS + 5_000));
    ok(&engine, rawdoc! { "dropIndexes": "c", "index": "a_1" });
    clock.advance(1_000);
    ok(
        &engine,
        rawdoc! { "createIndexes": "c", "indexes": [{ "key": { "a": 1 }, "name": "a_1" }] },
    );
    assert_eq!(accesses(&engine)["a_1"], (0, START_MS + 6_000));
}

#[test]
fn the_stage_takes_an_empty_object_first_and_feeds_later_stages() {
    let (engine, _clock) = indexed();
    for spec in [
        bson::RawBson::Int32(1),
        bson::RawBson::Document(rawdoc! { "x": 1 }),
    ] {
        fails(
            &engine,
            rawdoc! { "aggregate": "c", "pipeline": [{ "$indexStats": spec }], "cursor": {} },
            28803,
        );
    }
    fails(
        &engine,
        rawdoc! { "aggregate": "c", "pipeline": [{ "$match": {} }, { "$indexStats": {} }], "cursor": {} },
        40602,
    );
    let reply = ok(
        &engine,
        rawdoc! { "aggregate": "c", "pipeline": [
            { "$indexStats": {} }, { "$match": { "name": "a_1" } }, { "$project": { "_id": 0, "name": 1 } },
        ], "cursor": {} },
    );
    let docs: Vec<Document> = super::batch(&reply).0;
    assert_eq!(docs, [bson::doc! { "name": "a_1" }]);
    // A missing collection has no indexes.
    let reply = ok(
        &engine,
        rawdoc! { "aggregate": "none", "pipeline": [{ "$indexStats": {} }], "cursor": {} },
    );
    assert!(super::batch(&reply).0.is_empty());
}
