//! Plan choice by trial and the plan cache (issue 17): a fixed data set with competing
//! indexes, the winner and the examined counts asserted through explain, the cache's hits
//! and invalidations through the engine's cache.

use super::{DB, engine, insert, ok};
use crate::Engine;
use crate::plan::{Access, Hint};
use crate::store::Namespace;
use bson::{Bson, Document, RawDocumentBuf, rawdoc};

/// `test.c` with 1,000 documents `{_id: i, a: 1, b: i}` and the indexes `a_1` (matching
/// every document) and `b_1`, created in that order.
fn competing() -> Engine {
    let (engine, _clock) = engine();
    insert(
        &engine,
        "c",
        (0..1000).map(|i| rawdoc! { "_id": i, "a": 1, "b": i }),
    );
    ok(
        &engine,
        rawdoc! { "createIndexes": "c", "indexes": [
            { "key": { "a": 1 }, "name": "a_1" },
            { "key": { "b": 1 }, "name": "b_1" },
        ] },
    );
    engine
}

fn explain(engine: &Engine, find: RawDocumentBuf) -> Document {
    ok(
        engine,
        rawdoc! { "explain": find, "verbosity": "allPlansExecution" },
    )
}

/// The index name of the IXSCAN under a plan's FETCH.
fn index_of(stage: &Document) -> String {
    let mut stage = stage.clone();
    while stage.get_str("stage").ok() != Some("IXSCAN") {
        stage = stage.get_document("inputStage").expect("an input").clone();
    }
    stage.get_str("indexName").expect("indexName").to_owned()
}

fn i64_of(doc: &Document, key: &str) -> i64 {
    match doc.get(key) {
        Some(Bson::Int64(n)) => *n,
        Some(Bson::Int32(n)) => i64::from(*n),
        other => panic!("{key}: {other:?} in {doc:?}"),
    }
}

fn cached(engine: &Engine) -> Vec<String> {
    let store = engine.store();
    let reader = store.read().expect("read");
    let meta = reader
        .collection(&Namespace::new(DB, "c"))
        .expect("meta")
        .expect("collection");
    engine
        .plans
        .entries(&meta)
        .into_iter()
        .map(|(_, e)| e.index)
        .collect()
}

#[test]
fn the_trial_picks_the_selective_index_the_ranking_would_not() {
    let engine = competing();
    let filter = rawdoc! { "a": 1, "b": { "$gte": 990 } };
    // The static ranking prefers the pinned field: the test is about the trial.
    let store = engine.store();
    let reader = store.read().expect("read");
    let ns = Namespace::new(DB, "c");
    let meta = reader.collection(&ns).expect("meta").expect("collection");
    let ranked = crate::plan::static_choice(&meta, &ns, Some(&filter), &Hint::None);
    assert!(matches!(ranked, Ok(Access::Index(i)) if i.name == "a_1"));
    drop(reader);

    let reply = explain(&engine, rawdoc! { "find": "c", "filter": filter.clone() });
    let planner = reply.get_document("queryPlanner").expect("queryPlanner");
    let winning = planner.get_document("winningPlan").expect("winningPlan");
    assert_eq!(index_of(winning), "b_1", "{reply:?}");
    let rejected = planner.get_array("rejectedPlans").expect("rejectedPlans");
    assert_eq!(rejected.len(), 1, "{rejected:?}");
    let loser = rejected[0].as_document().expect("a plan");
    assert_eq!(index_of(loser), "a_1");
    assert!(planner.get_str("queryHash").is_ok_and(|h| h.len() == 8));

    let stats = reply
        .get_document("executionStats")
        .expect("executionStats");
    assert_eq!(i64_of(stats, "nReturned"), 10);
    assert_eq!(i64_of(stats, "totalKeysExamined"), 10);
    assert_eq!(i64_of(stats, "totalDocsExamined"), 10);
    // The trial's own counts, winner first: b_1 ended its ranges after 10 keys while a_1
    // walked two turns of 8 keys without a match.
    let all = stats
        .get_array("allPlansExecution")
        .expect("allPlansExecution");
    let all: Vec<&Document> = all.iter().map(|p| p.as_document().expect("plan")).collect();
    assert_eq!(all.len(), 2);
    assert_eq!(
        index_of(all[0].get_document("executionStages").expect("stages")),
        "b_1"
    );
    assert_eq!(
        [all[0], all[1]].map(|p| (
            i64_of(p, "nReturned"),
            i64_of(p, "totalKeysExamined"),
            i64_of(p, "totalDocsExamined")
        )),
        [(10, 10, 10), (0, 16, 16)]
    );
    // Explain leaves the cache alone.
    assert!(cached(&engine).is_empty());

    let found = ok(&engine, rawdoc! { "find": "c", "filter": filter });
    let (docs, _) = super::batch(&found);
    assert_eq!(docs.len(), 10);
}

#[test]
fn a_query_shape_reuses_its_cached_winner() {
    let engine = competing();
    let find = |low: i32| {
        let filter = rawdoc! { "a": 1, "b": { "$gte": low } };
        let reply = ok(&engine, rawdoc! { "find": "c", "filter": filter });
        super::batch(&reply).0.len()
    };
    assert_eq!(find(990), 10);
    assert_eq!(cached(&engine), ["b_1"]);
    assert_eq!(engine.plans.hits(), 0);
    // Other values, the same shape: no trial.
    assert_eq!(find(995), 5);
    assert_eq!(engine.plans.hits(), 1);
    // count and a write plan through the same entry and cache.
    let count = ok(
        &engine,
        rawdoc! { "count": "c", "query": { "a": 1, "b": { "$gte": 999 } } },
    );
    assert_eq!(count.get_i32("n").ok(), Some(1));
    assert_eq!(engine.plans.hits(), 2);

    // A new index changes the candidates: the entry is dropped, and planned again.
    ok(
        &engine,
        rawdoc! { "createIndexes": "c", "indexes": [{ "key": { "z": 1 }, "name": "z_1" }] },
    );
    assert_eq!(find(990), 10);
    assert_eq!(engine.plans.hits(), 2);
    assert_eq!(cached(&engine), ["b_1"]);

    // $planCacheStats shows the entry in mongod's fields.
    let stats = |engine: &Engine| {
        let reply = ok(
            engine,
            rawdoc! { "aggregate": "c", "pipeline": [
                { "$planCacheStats": {} }, { "$match": { "isActive": true } },
            ], "cursor": {} },
        );
        super::batch(&reply).0
    };
    let entries = stats(&engine);
    assert_eq!(entries.len(), 1, "{entries:?}");
    let entry = &entries[0];
    assert_eq!(i64_of(entry, "works"), 20);
    assert!(entry.get_str("queryHash").is_ok_and(|h| h.len() == 8));
    let from = entry
        .get_document("createdFromQuery")
        .expect("createdFromQuery");
    let query = from.get_document("query").expect("query");
    assert_eq!(
        query.get_document("b").ok(),
        Some(&bson::doc! { "$gte": 990 })
    );
    let plan = entry.get_document("cachedPlan").expect("cachedPlan");
    assert_eq!(index_of(plan), "b_1");

    // planCacheClear empties the collection's entries.
    ok(&engine, rawdoc! { "planCacheClear": "c" });
    assert!(cached(&engine).is_empty());
    assert!(stats(&engine).is_empty());
}

#[test]
fn a_cached_plan_that_works_too_hard_is_replanned() {
    let engine = competing();
    let find = |low: i32| {
        let filter = rawdoc! { "a": 1, "b": { "$gte": low } };
        let reply = ok(&engine, rawdoc! { "find": "c", "filter": filter });
        super::batch(&reply).0.len()
    };
    assert_eq!(find(990), 10);
    assert_eq!(cached(&engine), ["b_1"]);
    // b_1 won with 20 works; every document now matches, so within 10x that it does not
    // produce a trial's 101 matches: the query is planned again, and the tie between two
    // equally productive plans goes to the ranking's first (a_1).
    assert_eq!(find(0), 101);
    assert_eq!(engine.plans.hits(), 0);
    assert_eq!(cached(&engine), ["a_1"]);
}

#[test]
fn an_or_of_indexed_branches_walks_each_branch_once() {
    let engine = competing();
    // _id 5 is in both branches; `c` has no index, so the `$or` is the only indexed plan.
    let filter = rawdoc! { "$or": [{ "b": { "$lt": 6 } }, { "_id": { "$in": [5, 7] } }] };
    let reply = explain(&engine, rawdoc! { "find": "c", "filter": filter.clone() });
    let winning = reply
        .get_document("queryPlanner")
        .and_then(|p| p.get_document("winningPlan"))
        .expect("winningPlan");
    assert_eq!(
        winning.get_str("stage").ok(),
        Some("SUBPLAN"),
        "{winning:?}"
    );
    let stats = reply
        .get_document("executionStats")
        .expect("executionStats");
    assert_eq!(i64_of(stats, "nReturned"), 7);
    assert_eq!(i64_of(stats, "totalKeysExamined"), 8);
    assert_eq!(i64_of(stats, "totalDocsExamined"), 7);
    let fetch = stats
        .get_document("executionStages")
        .and_then(|s| s.get_document("inputStage"))
        .expect("FETCH");
    assert_eq!(fetch.get_str("stage").ok(), Some("FETCH"));
    let or = fetch.get_document("inputStage").expect("OR");
    assert_eq!(or.get_str("stage").ok(), Some("OR"));
    assert_eq!(
        (i64_of(or, "dupsTested"), i64_of(or, "dupsDropped")),
        (8, 1)
    );
    let scans: Vec<(String, i64)> = or
        .get_array("inputStages")
        .expect("inputStages")
        .iter()
        .map(|s| {
            let s = s.as_document().expect("IXSCAN");
            (index_of(s), i64_of(s, "keysExamined"))
        })
        .collect();
    assert_eq!(scans, [("b_1".to_owned(), 6), ("_id_".to_owned(), 2)]);

    // find (through getMore), count and a write select each record once.
    let reply = ok(
        &engine,
        rawdoc! { "find": "c", "filter": filter.clone(), "batchSize": 2 },
    );
    let (mut docs, mut id) = super::batch(&reply);
    while id != 0 {
        let more = ok(&engine, rawdoc! { "getMore": id, "collection": "c" });
        let (next, next_id) = super::batch(&more);
        docs.extend(next);
        id = next_id;
    }
    let mut ids: Vec<i32> = docs
        .iter()
        .map(|d| d.get_i32("_id").expect("_id"))
        .collect();
    ids.sort_unstable();
    assert_eq!(ids, [0, 1, 2, 3, 4, 5, 7]);
    // A blocking sort and an aggregate read the candidates as a stream.
    let sorted = ok(
        &engine,
        rawdoc! { "find": "c", "filter": filter.clone(), "sort": { "n": 1 } },
    );
    assert_eq!(super::batch(&sorted).0.len(), 7);
    let aggregated = ok(
        &engine,
        rawdoc! { "aggregate": "c", "pipeline": [{ "$match": filter.clone() }], "cursor": {} },
    );
    assert_eq!(super::batch(&aggregated).0.len(), 7);
    let count = ok(&engine, rawdoc! { "count": "c", "query": filter.clone() });
    assert_eq!(count.get_i32("n").ok(), Some(7));
    let updated = ok(
        &engine,
        rawdoc! { "update": "c", "updates": [
            { "q": filter, "u": { "$set": { "seen": true } }, "multi": true },
        ] },
    );
    assert_eq!(updated.get_i32("nModified").ok(), Some(7));

    // A branch without an index: a collection scan.
    let reply = explain(
        &engine,
        rawdoc! { "find": "c", "filter": { "$or": [{ "b": 1 }, { "z": 1 }] } },
    );
    let winning = reply
        .get_document("queryPlanner")
        .and_then(|p| p.get_document("winningPlan"))
        .expect("winningPlan");
    assert_eq!(winning.get_str("stage").ok(), Some("COLLSCAN"));
}

#[test]
fn a_count_exact_on_an_index_counts_keys_only() {
    let engine = competing();
    let count = |query: RawDocumentBuf| {
        let reply = ok(&engine, rawdoc! { "count": "c", "query": query });
        reply.get_i32("n").expect("n")
    };
    let plan = |query: RawDocumentBuf| {
        let reply = ok(
            &engine,
            rawdoc! { "explain": { "count": "c", "query": query }, "verbosity": "executionStats" },
        );
        let stats = reply.get_document("executionStats").expect("stats").clone();
        let stage = stats
            .get_document("executionStages")
            .and_then(|s| s.get_document("inputStage"))
            .expect("COUNT's input")
            .clone();
        (stage, stats)
    };
    assert_eq!(count(rawdoc! { "b": { "$gte": 990 } }), 10);
    let (stage, stats) = plan(rawdoc! { "b": { "$gte": 990 } });
    assert_eq!(stage.get_str("stage").ok(), Some("COUNT_SCAN"), "{stage:?}");
    assert_eq!(stage.get_str("indexName").ok(), Some("b_1"));
    assert_eq!(i64_of(&stage, "keysExamined"), 10);
    assert_eq!(
        stage.get_document("indexBounds").ok(),
        Some(&bson::doc! {
            "startKey": { "b": 990 }, "startKeyInclusive": true,
            "endKey": { "b": f64::INFINITY }, "endKeyInclusive": true,
        })
    );
    assert_eq!(i64_of(&stats, "totalKeysExamined"), 10);
    assert_eq!(i64_of(&stats, "totalDocsExamined"), 0);
    assert_eq!(count(rawdoc! { "b": 7 }), 1);
    assert_eq!(count(rawdoc! { "b": { "$gt": 10, "$lte": 20 } }), 10);
    // Not exact: a `$lt` alone (NaN sorts at the bracket's start), a second field, a
    // multikey index.
    for query in [
        rawdoc! { "b": { "$lt": 5 } },
        rawdoc! { "b": 5, "z": 1 },
        rawdoc! { "a": 1 },
    ] {
        if query.get("a").ok().flatten().is_some() {
            insert(&engine, "c", [rawdoc! { "_id": -1, "a": [1, 2], "b": -1 }]);
        }
        let (stage, _) = plan(query.clone());
        assert_eq!(
            stage.get_str("stage").ok(),
            Some("FETCH"),
            "{query:?}: {stage:?}"
        );
    }
    assert_eq!(count(rawdoc! { "a": 1 }), 1001);
    // Counting keys there would count [1, 2] twice, and NaN below 5.
    assert_eq!(count(rawdoc! { "a": { "$gte": 1 } }), 1001);
    insert(&engine, "c", [rawdoc! { "_id": -2, "b": f64::NAN }]);
    assert_eq!(count(rawdoc! { "b": { "$lt": 5 } }), 6);
}

#[test]
fn a_distinct_on_an_indexed_field_reads_a_document_per_key() {
    let (engine, _clock) = engine();
    // 300 documents over three values of `k` (1 and 1.0 are one value: the first kept),
    // one with `k: null`, one without `k`.
    let mut docs: Vec<RawDocumentBuf> = (0..300)
        .map(|i| match i % 3 {
            0 => rawdoc! { "_id": i, "k": 1 },
            1 => rawdoc! { "_id": i, "k": 1.0 },
            _ => rawdoc! { "_id": i, "k": format!("s{}", i % 2) },
        })
        .collect();
    // The document without `k` first under the null key: the null is in the second.
    docs.push(rawdoc! { "_id": 300 });
    docs.push(rawdoc! { "_id": 301, "k": bson::raw::RawBson::Null });
    insert(&engine, "c", docs);
    let distinct = |engine: &Engine| {
        let reply = ok(engine, rawdoc! { "distinct": "c", "key": "k" });
        reply.get_array("values").expect("values").clone()
    };
    let scanned = distinct(&engine);
    ok(
        &engine,
        rawdoc! { "createIndexes": "c", "indexes": [{ "key": { "k": 1 }, "name": "k_1" }] },
    );
    assert_eq!(distinct(&engine), scanned);
    assert_eq!(
        scanned,
        vec![
            Bson::Null,
            Bson::Int32(1),
            Bson::String("s0".into()),
            Bson::String("s1".into())
        ]
    );
    let reply = ok(
        &engine,
        rawdoc! { "explain": { "distinct": "c", "key": "k" }, "verbosity": "executionStats" },
    );
    let stats = reply.get_document("executionStats").expect("stats");
    let scan = stats
        .get_document("executionStages")
        .and_then(|s| s.get_document("inputStage"))
        .expect("DISTINCT_SCAN");
    assert_eq!(
        scan.get_str("stage").ok(),
        Some("DISTINCT_SCAN"),
        "{stats:?}"
    );
    // Keys: null's two entries (null and missing share it), then 1, "s0", "s1".
    assert_eq!(i64_of(stats, "totalKeysExamined"), 5);
    assert_eq!(i64_of(stats, "totalDocsExamined"), 5);
}
