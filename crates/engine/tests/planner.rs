//! Differential property test of the planner (issue 26): random documents (arrays,
//! arrays of sub-documents, nested documents, mixed types, missing fields), a random set of
//! indexes (ascending, descending, compound, multikey, shared array prefixes, hashed,
//! sparse, partial, unique-free, wildcard: `$**`, `a.$**`, inclusion and exclusion
//! projections), random filters (equalities, `$in`, ranges, `$ne`, `$exists`, `$and`,
//! `$or`, a filter that is one `$or` of conjunctions (a walk per branch), positional
//! paths). Every query through the planner, and through every index by hint, must
//! return exactly what a collection scan (`hint: {$natural: 1}`) returns:
//! find (also batch by batch through getMore), count, distinct, and the documents an
//! `updateMany` and a `deleteMany` touch. A broken bound (an index that under-approximates)
//! turns it red. A hinted wildcard index that covers none of the filter's paths is refused
//! with mongod's 291 instead. Sorts ending in `_id` (no ties) must come out in the scan's
//! order, also where an index provides them (after pinned fields, or merged per `$in` point).

use crate::support::{ok, options, run};
use bson::{Bson, Document, RawDocumentBuf, doc};
use engine::Engine;
use proptest::prelude::*;

fn raw(doc: Document) -> RawDocumentBuf {
    RawDocumentBuf::try_from(&doc).expect("encodes")
}

/// `(name, key, extra options, whether a hint of it must agree with a scan)`: sparse and
/// partial indexes answer a hint from their entries only, as in mongod.
fn pool() -> Vec<(&'static str, Document, Document, bool)> {
    vec![
        ("a_1", doc! { "a": 1 }, doc! {}, true),
        ("a_-1", doc! { "a": -1 }, doc! {}, true),
        ("a_1_b_1", doc! { "a": 1, "b": 1 }, doc! {}, true),
        ("b_-1_a_1", doc! { "b": -1, "a": 1 }, doc! {}, true),
        ("ax_1", doc! { "a.x": 1 }, doc! {}, true),
        ("ax_1_ay_-1", doc! { "a.x": 1, "a.y": -1 }, doc! {}, true),
        ("cx_1", doc! { "c.x": 1 }, doc! {}, true),
        ("b_hashed", doc! { "b": "hashed" }, doc! {}, true),
        ("b_sparse", doc! { "b": 1 }, doc! { "sparse": true }, false),
        ("a_1__id_1", doc! { "a": 1, "_id": 1 }, doc! {}, true),
        ("b_1__id_-1", doc! { "b": 1, "_id": -1 }, doc! {}, true),
        // After `a` (or `c.x` and `a`) pinned by an `$in`, the sorts on `b` then `_id` come
        // from merging one walk per point (SORT_MERGE), forward or backward.
        (
            "a_1_b_1__id_-1",
            doc! { "a": 1, "b": 1, "_id": -1 },
            doc! {},
            true,
        ),
        (
            "cx_1_a_1_b_-1__id_1",
            doc! { "c.x": 1, "a": 1, "b": -1, "_id": 1 },
            doc! {},
            true,
        ),
        (
            "b_partial",
            doc! { "b": 1 },
            doc! { "partialFilterExpression": { "b": { "$gt": 0 } } },
            false,
        ),
        ("w_all", doc! { "$**": 1 }, doc! {}, true),
        ("w_a", doc! { "a.$**": 1 }, doc! {}, true),
        (
            "w_incl",
            doc! { "$**": 1 },
            doc! { "wildcardProjection": { "a.x": 1, "b": true, "c": { "x": 1 } } },
            true,
        ),
        (
            "w_excl",
            doc! { "$**": -1 },
            doc! { "wildcardProjection": { "a.y": 0, "c": 0 } },
            true,
        ),
        (
            "w_partial",
            doc! { "a.$**": 1 },
            doc! { "partialFilterExpression": { "b": { "$gt": 0 } } },
            false,
        ),
    ]
}

/// The number of indexes in the pool.
const POOL: usize = 19;

fn scalar() -> impl Strategy<Value = Bson> {
    prop_oneof![
        4 => (0i32..2).prop_map(Bson::Int32),
        1 => (-2i32..4).prop_map(Bson::Int32),
        1 => (-2i64..4).prop_map(Bson::Int64),
        1 => prop_oneof![Just(0.5), Just(2.0), Just(f64::NAN)].prop_map(Bson::Double),
        1 => prop_oneof![Just("p"), Just("q"), Just("")].prop_map(|s| Bson::String(s.to_owned())),
        1 => Just(Bson::Null),
        1 => any::<bool>().prop_map(Bson::Boolean),
        1 => (0i64..2).prop_map(|t| Bson::DateTime(bson::DateTime::from_millis(t))),
    ]
}

fn sub_doc() -> impl Strategy<Value = Bson> {
    (
        proptest::option::of(scalar()),
        proptest::option::of(prop_oneof![
            scalar(),
            proptest::collection::vec(scalar(), 0..3).prop_map(Bson::Array)
        ]),
        // A field named like an array position: `a.0` names it, or an array's first element.
        prop_oneof![5 => Just(None), 1 => scalar().prop_map(Some)],
    )
        .prop_map(|(x, y, zero)| {
            let mut d = Document::new();
            if let Some(x) = x {
                d.insert("x", x);
            }
            if let Some(y) = y {
                d.insert("y", y);
            }
            if let Some(zero) = zero {
                d.insert("0", zero);
            }
            Bson::Document(d)
        })
}

fn value_a() -> impl Strategy<Value = Option<Bson>> {
    proptest::option::of(prop_oneof![
        3 => scalar(),
        2 => proptest::collection::vec(scalar(), 0..4).prop_map(Bson::Array),
        2 => proptest::collection::vec((-2i32..4).prop_map(Bson::Int32), 0..4).prop_map(Bson::Array),
        2 => proptest::collection::vec((0i32..2).prop_map(Bson::Int32), 0..3).prop_map(Bson::Array),
        2 => sub_doc(),
        2 => proptest::collection::vec(sub_doc(), 0..3).prop_map(Bson::Array),
        1 => proptest::collection::vec(
            proptest::collection::vec(scalar(), 0..2).prop_map(Bson::Array), 0..2)
            .prop_map(Bson::Array),
    ])
}

fn body() -> impl Strategy<Value = Document> {
    (
        value_a(),
        proptest::option::of(scalar()),
        proptest::option::of(sub_doc()),
    )
        .prop_map(|(a, b, c)| {
            let mut d = Document::new();
            if let Some(a) = a {
                d.insert("a", a);
            }
            if let Some(b) = b {
                d.insert("b", b);
            }
            if let Some(c) = c {
                d.insert("c", c);
            }
            d
        })
}

fn operand() -> impl Strategy<Value = Bson> {
    prop_oneof![
        4 => scalar(),
        2 => proptest::collection::vec((0i32..2).prop_map(Bson::Int32), 0..3).prop_map(Bson::Array),
        1 => proptest::collection::vec(scalar(), 0..3).prop_map(Bson::Array),
        1 => sub_doc(),
        1 => proptest::collection::vec(sub_doc(), 1..3).prop_map(Bson::Array),
    ]
}

fn predicate() -> impl Strategy<Value = (String, Bson)> {
    let path = prop_oneof![
        2 => Just("a"),
        1 => Just("b"),
        2 => Just("a.x"),
        2 => Just("a.y"),
        1 => Just("c.x"),
        1 => Just("c"),
        1 => Just("a.0"),
        1 => Just("c.0")
    ];
    let condition = prop_oneof![
        3 => operand(),
        1 => operand().prop_map(|v| Bson::Document(doc! { "$eq": v })),
        2 => proptest::collection::vec(operand(), 0..4)
            .prop_map(|v| Bson::Document(doc! { "$in": v })),
        3 => (prop_oneof![Just("$gt"), Just("$gte"), Just("$lt"), Just("$lte")], scalar(),
              proptest::option::of((prop_oneof![Just("$lt"), Just("$lte")], scalar())))
            .prop_map(|(op, v, more)| {
                let mut d = doc! { op: v };
                if let Some((op2, v2)) = more
                    && !d.contains_key(op2)
                {
                    d.insert(op2, v2);
                }
                Bson::Document(d)
            }),
        2 => (-2i32..4, -2i32..4, any::<bool>()).prop_map(|(lo, hi, inclusive)| {
            let (gt, lt) = if inclusive { ("$gte", "$lte") } else { ("$gt", "$lt") };
            Bson::Document(doc! { gt: lo, lt: hi })
        }),
        1 => scalar().prop_map(|v| Bson::Document(doc! { "$ne": v })),
        1 => any::<bool>().prop_map(|e| Bson::Document(doc! { "$exists": e })),
    ];
    (path, condition).prop_map(|(p, c)| (p.to_owned(), c))
}

fn filter() -> impl Strategy<Value = Document> {
    prop_oneof![
        4 => conjunction(),
        // Two fields through one array: the elements that satisfy each may differ.
        1 => (0i32..2, 0i32..2).prop_map(|(x, y)| doc! { "a.x": x, "a.y": y }),
        // A filter that is one `$or`: an index walk per branch when each has an index.
        2 => proptest::collection::vec(proptest::collection::vec(predicate(), 1..3), 1..4)
            .prop_map(|branches| {
                let list: Vec<Bson> = branches
                    .into_iter()
                    .map(|preds| Bson::Document(preds.into_iter().collect()))
                    .collect();
                doc! { "$or": list }
            }),
    ]
}

fn conjunction() -> impl Strategy<Value = Document> {
    (
        proptest::collection::vec(predicate(), 0..3),
        0u8..4,
        proptest::collection::vec(predicate(), 0..2),
    )
        .prop_map(|(preds, shape, extra)| {
            let mut conj = Document::new();
            for (p, c) in preds {
                conj.insert(p, c);
            }
            match shape {
                0 => {
                    let extra: Vec<Bson> = extra
                        .into_iter()
                        .map(|(p, c)| Bson::Document(doc! { p: c }))
                        .collect();
                    if !extra.is_empty() {
                        conj.insert("$and", extra);
                    }
                    conj
                }
                1 => {
                    let extra: Vec<Bson> = extra
                        .into_iter()
                        .map(|(p, c)| Bson::Document(doc! { p: c }))
                        .collect();
                    if !extra.is_empty() {
                        conj.insert("$or", extra);
                    }
                    conj
                }
                _ => conj,
            }
        })
}

/// Every document a find returns, following the cursor through getMore.
fn find_all(engine: &Engine, mut cmd: Document) -> Result<Vec<Document>, Document> {
    cmd.insert("batchSize", 2);
    let reply = run(engine, "db", raw(cmd));
    if reply.get_f64("ok").ok() != Some(1.0) {
        return Err(reply);
    }
    let cursor = reply.get_document("cursor").expect("cursor");
    let mut docs: Vec<Document> = cursor
        .get_array("firstBatch")
        .expect("firstBatch")
        .iter()
        .map(|d| d.as_document().expect("doc").clone())
        .collect();
    let mut id = cursor.get_i64("id").expect("id");
    while id != 0 {
        let reply = ok(
            engine,
            "db",
            raw(doc! { "getMore": id, "collection": "c", "batchSize": 3 }),
        );
        let cursor = reply.get_document("cursor").expect("cursor");
        docs.extend(
            cursor
                .get_array("nextBatch")
                .expect("nextBatch")
                .iter()
                .map(|d| d.as_document().expect("doc").clone()),
        );
        id = cursor.get_i64("id").expect("id");
    }
    docs.sort_by_key(|d| d.get_i32("_id").expect("_id"));
    Ok(docs)
}

/// An explain reply's `queryPlanner.winningPlan`.
fn winning_plan(reply: &Document) -> &Document {
    reply
        .get_document("queryPlanner")
        .and_then(|p| p.get_document("winningPlan"))
        .expect("winningPlan")
}

/// The `_id`s of a find's first batch, in the order returned.
fn first_batch_ids(engine: &Engine, cmd: Document) -> Vec<i32> {
    let reply = ok(engine, "db", raw(cmd));
    ids(&reply
        .get_document("cursor")
        .and_then(|c| c.get_array("firstBatch"))
        .expect("firstBatch")
        .iter()
        .map(|d| d.as_document().expect("doc").clone())
        .collect::<Vec<_>>())
}

fn ids(docs: &[Document]) -> Vec<i32> {
    docs.iter()
        .map(|d| d.get_i32("_id").expect("_id"))
        .collect()
}

fn count(engine: &Engine, filter: &Document, hint: Bson) -> Result<i32, Document> {
    let reply = run(
        engine,
        "db",
        raw(doc! { "count": "c", "query": filter.clone(), "hint": hint }),
    );
    match reply.get_i32("n") {
        Ok(n) => Ok(n),
        Err(_) => Err(reply),
    }
}

/// The distinct values of `b`, as canonical keys: equal values (1 and 1.0) are one, and
/// which of them is shown depends on which document came first.
fn distinct(engine: &Engine, filter: &Document, hint: Bson) -> Result<Vec<Vec<u8>>, Document> {
    let reply = run(
        engine,
        "db",
        raw(doc! { "distinct": "c", "key": "b", "query": filter.clone(), "hint": hint }),
    );
    let Ok(values) = reply.get_array("values") else {
        return Err(reply);
    };
    let holder = raw(doc! { "v": values.clone() });
    let Ok(Some(bson::raw::RawBsonRef::Array(values))) = holder.get("v") else {
        unreachable!("an array was put there");
    };
    Ok(values
        .into_iter()
        .map(|v| bson_canonical::encode(v.expect("value")))
        .collect())
}

fn natural() -> Bson {
    Bson::Document(doc! { "$natural": 1 })
}

fn check_case(
    bodies: Vec<Document>,
    chosen: Vec<bool>,
    filters: Vec<Document>,
    sorts: Vec<(usize, Option<i32>, i32)>,
) {
    let engine = Engine::new(options());
    let pool = pool();
    let mut indexes = Vec::new();
    for ((name, key, extra, _), on) in pool.iter().zip(chosen) {
        if on {
            let mut spec = doc! { "key": key.clone(), "name": *name };
            spec.extend(extra.clone());
            indexes.push(spec);
        }
    }
    assert_eq!(pool.len(), POOL);
    let names: Vec<(&str, bool)> = pool
        .iter()
        .filter(|(name, ..)| {
            indexes
                .iter()
                .any(|i| i.get_str("name").ok() == Some(*name))
        })
        .map(|(name, _, _, hintable)| (*name, *hintable))
        .collect();
    ok(&engine, "db", raw(doc! { "create": "c" }));
    ok(&engine, "db", raw(doc! { "create": "d" }));
    if !indexes.is_empty() {
        ok(
            &engine,
            "db",
            raw(doc! { "createIndexes": "c", "indexes": indexes.clone() }),
        );
    }
    for (i, body) in bodies.into_iter().enumerate() {
        let mut doc = doc! { "_id": i as i32 };
        doc.extend(body);
        let reply = run(
            &engine,
            "db",
            raw(doc! { "insert": "c", "documents": [doc.clone()] }),
        );
        if reply.get_array("writeErrors").is_ok() {
            continue; // an index refused it (a hashed index and an array)
        }
        ok(
            &engine,
            "db",
            raw(doc! { "insert": "d", "documents": [doc] }),
        );
    }
    for filter in filters {
        let scan = find_all(
            &engine,
            doc! { "find": "c", "filter": filter.clone(), "hint": natural() },
        );
        let Ok(expected) = scan else {
            continue; // the filter itself is refused (e.g. a bad operand)
        };
        let planned = find_all(&engine, doc! { "find": "c", "filter": filter.clone() })
            .expect("planned find");
        assert_eq!(ids(&planned), ids(&expected), "find {filter:?}");
        assert_eq!(
            count(&engine, &filter, Bson::Document(doc! {})).expect("count"),
            expected.len() as i32,
            "count {filter:?}"
        );
        let scanned_values = distinct(&engine, &filter, natural()).expect("distinct");
        assert_eq!(
            distinct(&engine, &filter, Bson::Document(doc! {})).expect("distinct"),
            scanned_values,
            "distinct {filter:?}"
        );
        // Sorts with `_id` last have no ties: the order must be the scan's, exactly, also
        // where an index provides it (forward or backward, after a pinned prefix).
        for (which, limit, skip) in &sorts {
            let sort = [
                doc! { "a": 1, "_id": 1 },
                doc! { "a": -1, "_id": -1 },
                doc! { "b": 1, "_id": -1 },
                doc! { "b": -1, "_id": 1 },
                doc! { "_id": -1 },
                doc! { "_id": 1 },
            ][*which]
                .clone();
            let mut cmd =
                doc! { "find": "c", "filter": filter.clone(), "sort": sort.clone(), "skip": *skip };
            if let Some(limit) = limit {
                cmd.insert("limit", *limit);
            }
            let mut scan = cmd.clone();
            scan.insert("hint", natural());
            assert_eq!(
                first_batch_ids(&engine, cmd),
                first_batch_ids(&engine, scan),
                "find {filter:?} sort {sort:?}"
            );
        }
        for (name, hintable) in &names {
            if !hintable {
                continue;
            }
            let hinted = find_all(
                &engine,
                doc! { "find": "c", "filter": filter.clone(), "hint": *name },
            );
            let hinted = match hinted {
                Err(reply) if name.starts_with("w_") && reply.get_i32("code").ok() == Some(291) => {
                    continue; // the wildcard index covers none of the filter's paths
                }
                other => other.expect("hinted find"),
            };
            assert_eq!(ids(&hinted), ids(&expected), "find {filter:?} hint {name}");
            assert_eq!(
                count(&engine, &filter, Bson::String((*name).to_owned())).expect("count"),
                expected.len() as i32,
                "count {filter:?} hint {name}"
            );
        }
    }
}

fn check_writes(bodies: Vec<Document>, filter: Document) {
    let engine = Engine::new(options());
    let specs: Vec<Document> = pool()
        .into_iter()
        .filter(|(_, key, ..)| !key.values().any(|v| v.as_str() == Some("hashed")))
        .map(|(name, key, extra, _)| {
            let mut spec = doc! { "key": key, "name": name };
            spec.extend(extra);
            spec
        })
        .collect();
    ok(&engine, "db", raw(doc! { "create": "c" }));
    ok(
        &engine,
        "db",
        raw(doc! { "createIndexes": "c", "indexes": specs }),
    );
    ok(&engine, "db", raw(doc! { "create": "d" }));
    let docs: Vec<Document> = bodies
        .into_iter()
        .enumerate()
        .map(|(i, body)| {
            let mut doc = doc! { "_id": i as i32 };
            doc.extend(body);
            doc
        })
        .collect();
    if docs.is_empty() {
        return;
    }
    for coll in ["c", "d"] {
        ok(
            &engine,
            "db",
            raw(doc! { "insert": coll, "documents": docs.clone() }),
        );
    }
    let mut replies = Vec::new();
    for coll in ["c", "d"] {
        let update = doc! {
            "update": coll,
            "updates": [{ "q": filter.clone(), "u": { "$inc": { "m": 1 } }, "multi": true }],
        };
        replies.push(run(&engine, "db", raw(update)));
        let one = doc! {
            "update": coll,
            "updates": [{ "q": filter.clone(), "u": { "$inc": { "one": 1 } } }],
        };
        replies.push(run(&engine, "db", raw(one)));
    }
    if replies[0].get_f64("ok").ok() != Some(1.0) || replies[0].get_array("writeErrors").is_ok() {
        return;
    }
    assert_eq!(
        replies[0].get("n"),
        replies[2].get("n"),
        "updateMany {filter:?}"
    );
    assert_eq!(
        replies[1].get("n"),
        replies[3].get("n"),
        "updateOne {filter:?}"
    );
    // find_all follows getMores on "c" only; the batches here are single.
    let c = find_all(
        &engine,
        doc! { "find": "c", "filter": { "m": 1 }, "batchSize": 1000 },
    )
    .expect("c");
    let d = run(
        &engine,
        "db",
        raw(doc! { "find": "d", "filter": { "m": 1 }, "batchSize": 1000 }),
    );
    let mut d_ids: Vec<i32> = d
        .get_document("cursor")
        .expect("cursor")
        .get_array("firstBatch")
        .expect("batch")
        .iter()
        .map(|x| x.as_document().expect("doc").get_i32("_id").expect("_id"))
        .collect();
    d_ids.sort_unstable();
    assert_eq!(ids(&c), d_ids, "updateMany touched {filter:?}");
    let mut deleted = Vec::new();
    for coll in ["c", "d"] {
        let delete = doc! { "delete": coll, "deletes": [{ "q": filter.clone(), "limit": 0 }] };
        deleted.push(ok(&engine, "db", raw(delete)).get("n").cloned());
    }
    assert_eq!(deleted[0], deleted[1], "deleteMany {filter:?}");
    let valid = ok(&engine, "db", raw(doc! { "validate": "c" }));
    assert_eq!(valid.get_bool("valid").ok(), Some(true), "{valid:?}");
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(
        std::env::var("MFDB_PLANNER_CASES").ok().and_then(|v| v.parse().ok()).unwrap_or(64)
    ))]

    #[test]
    fn index_plans_return_what_a_collection_scan_returns(
        bodies in proptest::collection::vec(body(), 0..24),
        chosen in proptest::collection::vec(any::<bool>(), POOL),
        sorts in proptest::collection::vec((0usize..6, proptest::option::of(1i32..4), 0i32..2), 1..4),
        filters in proptest::collection::vec(filter(), 1..8),
    ) {
        check_case(bodies, chosen, filters, sorts);
    }

    #[test]
    fn index_driven_writes_touch_what_a_scan_touches(
        bodies in proptest::collection::vec(body(), 0..16),
        filter in filter(),
    ) {
        check_writes(bodies, filter);
    }
}

#[test]
fn two_bounds_on_a_multikey_field_are_not_intersected() {
    let engine = Engine::new(options());
    ok(
        &engine,
        "db",
        raw(doc! { "createIndexes": "c", "indexes": [{ "key": { "a": 1 }, "name": "a_1" }] }),
    );
    ok(
        &engine,
        "db",
        raw(
            doc! { "insert": "c", "documents": [{ "_id": 1, "a": [4, -1] }, { "_id": 2, "a": 1 }] },
        ),
    );
    let filter = doc! { "a": { "$gt": 3, "$lt": 0 } };
    for hint in [
        natural(),
        Bson::String("a_1".into()),
        Bson::Document(doc! {}),
    ] {
        let found = find_all(
            &engine,
            doc! { "find": "c", "filter": filter.clone(), "hint": hint.clone() },
        )
        .expect("find");
        assert_eq!(ids(&found), vec![1], "hint {hint:?}");
    }
}

#[test]
fn fields_through_one_array_are_not_compounded() {
    let engine = Engine::new(options());
    ok(
        &engine,
        "db",
        raw(
            doc! { "createIndexes": "c", "indexes": [{ "key": { "a.x": 1, "a.y": -1 }, "name": "axy" }] },
        ),
    );
    ok(
        &engine,
        "db",
        raw(doc! { "insert": "c", "documents": [
            { "_id": 1, "a": [{ "x": 0 }, { "y": 1 }] },
            { "_id": 2, "a": { "x": 0, "y": 1 } },
            { "_id": 3, "a": [{ "x": 0, "y": 0 }] },
        ] }),
    );
    let filter = doc! { "a.x": 0, "a.y": 1 };
    for hint in [
        natural(),
        Bson::String("axy".into()),
        Bson::Document(doc! {}),
    ] {
        let found = find_all(
            &engine,
            doc! { "find": "c", "filter": filter.clone(), "hint": hint.clone() },
        )
        .expect("find");
        assert_eq!(ids(&found), vec![1, 2], "hint {hint:?}");
    }
}

/// `explain` shows the plan the planner chose, in mongod's shape, and counts what a run
/// examines.
/// `{a: {$in: [0, 2]}}` sorted by `b` then `_id` over `{a: 1, b: 1, _id: 1}`: one walk per
/// point, merged (mongod's SORT_MERGE), each stopping after `skip + limit` matches; the
/// order is the sort's, and explain shows the merge with each walk's pinned bounds and
/// true counts.
#[test]
fn an_in_before_the_sort_fields_merges_one_walk_per_point() {
    let engine = Engine::new(options());
    ok(
        &engine,
        "db",
        raw(doc! { "createIndexes": "c", "indexes": [
            { "key": { "a": 1, "b": 1, "_id": 1 }, "name": "a_b_id" },
        ] }),
    );
    let docs: Vec<Document> = (0..30)
        .map(|i| doc! { "_id": i, "a": i % 3, "b": (i * 7) % 11 })
        .collect();
    let all: Vec<Bson> = docs.iter().cloned().map(Bson::Document).collect();
    ok(&engine, "db", raw(doc! { "insert": "c", "documents": all }));
    let model = |forward: bool, skip: usize, limit: usize| {
        let mut kept: Vec<&Document> = docs
            .iter()
            .filter(|d| [0, 2].contains(&d.get_i32("a").expect("a")))
            .collect();
        kept.sort_by_key(|d| (d.get_i32("b").expect("b"), d.get_i32("_id").expect("_id")));
        if !forward {
            kept.reverse();
        }
        kept.iter()
            .skip(skip)
            .take(limit)
            .map(|d| d.get_i32("_id").expect("_id"))
            .collect::<Vec<_>>()
    };
    let filter = doc! { "a": { "$in": [2, 0] } };
    for (sort, forward) in [
        (doc! { "b": 1, "_id": 1 }, true),
        (doc! { "b": -1, "_id": -1 }, false),
    ] {
        for (skip, limit) in [(0, 4), (3, 5), (15, 10)] {
            let cmd = doc! {
                "find": "c", "filter": filter.clone(), "sort": sort.clone(),
                "skip": skip as i32, "limit": limit as i32,
            };
            let reply = ok(&engine, "db", raw(cmd));
            let got: Vec<i32> = reply
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
            assert_eq!(
                got,
                model(forward, skip, limit),
                "{sort:?} skip {skip} limit {limit}"
            );
        }
    }
    let reply = ok(
        &engine,
        "db",
        raw(doc! {
            "explain": {
                "find": "c", "filter": filter.clone(), "sort": { "b": 1, "_id": 1 }, "limit": 4,
            },
            "verbosity": "executionStats",
        }),
    );
    let winning = winning_plan(&reply);
    assert_eq!(winning.get_str("stage").ok(), Some("LIMIT"), "{winning:?}");
    let merge = winning
        .get_document("inputStage")
        .and_then(|fetch| fetch.get_document("inputStage"))
        .expect("SORT_MERGE");
    assert_eq!(
        merge.get_str("stage").ok(),
        Some("SORT_MERGE"),
        "{winning:?}"
    );
    assert_eq!(
        merge.get_document("sortPattern").ok(),
        Some(&doc! { "b": 1, "_id": 1 })
    );
    let bounds: Vec<Document> = merge
        .get_array("inputStages")
        .expect("inputStages")
        .iter()
        .map(|scan| {
            let scan = scan.as_document().expect("IXSCAN");
            assert_eq!(scan.get_str("stage").ok(), Some("IXSCAN"));
            scan.get_document("indexBounds").expect("bounds").clone()
        })
        .collect();
    let all_values = "[MinKey, MaxKey]";
    assert_eq!(
        bounds,
        vec![
            doc! { "a": ["[0, 0]"], "b": [all_values], "_id": [all_values] },
            doc! { "a": ["[2, 2]"], "b": [all_values], "_id": [all_values] },
        ]
    );
    let stats = reply
        .get_document("executionStats")
        .expect("executionStats");
    assert_eq!(stats.get_i64("nReturned").ok(), Some(4), "{stats:?}");
    // Each walk stops after 4 matches: 4 keys and 4 documents each.
    assert_eq!(
        stats.get_i64("totalKeysExamined").ok(),
        Some(8),
        "{stats:?}"
    );
    assert_eq!(
        stats.get_i64("totalDocsExamined").ok(),
        Some(8),
        "{stats:?}"
    );

    // A find that streams (an index walk in sort order, or a scan) stops at its limit, and
    // so do explain's counts.
    for (cmd, keys, docs) in [
        (
            doc! { "find": "c", "filter": { "a": 1 }, "sort": { "b": 1, "_id": 1 }, "limit": 3 },
            3,
            3,
        ),
        (doc! { "find": "c", "limit": 5 }, 0, 5),
        (
            doc! { "find": "c", "filter": { "a": 2 }, "skip": 2, "limit": 2 },
            4,
            4,
        ),
    ] {
        let reply = ok(
            &engine,
            "db",
            raw(doc! { "explain": cmd.clone(), "verbosity": "executionStats" }),
        );
        let stats = reply
            .get_document("executionStats")
            .expect("executionStats");
        assert_eq!(
            stats.get_i64("totalKeysExamined").ok(),
            Some(keys),
            "{cmd:?}: {stats:?}"
        );
        assert_eq!(
            stats.get_i64("totalDocsExamined").ok(),
            Some(docs),
            "{cmd:?}: {stats:?}"
        );
    }

    // Without a limit the merge would read and hold what an in-memory sort does: SORT.
    let reply = ok(
        &engine,
        "db",
        raw(doc! {
            "explain": { "find": "c", "filter": filter, "sort": { "b": 1, "_id": 1 } },
            "verbosity": "queryPlanner",
        }),
    );
    let winning = winning_plan(&reply);
    assert_eq!(winning.get_str("stage").ok(), Some("SORT"), "{winning:?}");
}

#[test]
fn explain_shows_the_chosen_plan_and_its_counts() {
    let engine = Engine::new(options());
    ok(
        &engine,
        "db",
        raw(doc! { "createIndexes": "c", "indexes": [
            { "key": { "a": 1 }, "name": "a_1" },
            { "key": { "b": -1 }, "name": "b_-1" },
        ] }),
    );
    let docs: Vec<Bson> = (0..20)
        .map(|i| Bson::Document(doc! { "_id": i, "a": i % 5, "b": [i, i + 100] }))
        .collect();
    ok(
        &engine,
        "db",
        raw(doc! { "insert": "c", "documents": docs }),
    );
    let explain = |cmd: Document, verbosity: &str| {
        ok(
            &engine,
            "db",
            raw(doc! { "explain": cmd, "verbosity": verbosity }),
        )
    };
    let reply = explain(doc! { "find": "c", "filter": { "a": 3 } }, "executionStats");
    let planner = reply.get_document("queryPlanner").expect("queryPlanner");
    assert_eq!(planner.get_str("namespace").ok(), Some("db.c"));
    let winning = planner.get_document("winningPlan").expect("winningPlan");
    assert_eq!(winning.get_str("stage").ok(), Some("FETCH"), "{winning:?}");
    let scan = winning.get_document("inputStage").expect("inputStage");
    assert_eq!(scan.get_str("stage").ok(), Some("IXSCAN"));
    assert_eq!(scan.get_str("indexName").ok(), Some("a_1"));
    assert_eq!(scan.get_bool("isMultiKey").ok(), Some(false));
    assert_eq!(
        scan.get_document("indexBounds").expect("bounds"),
        &doc! { "a": ["[3, 3]"] }
    );
    let stats = reply
        .get_document("executionStats")
        .expect("executionStats");
    assert_eq!(stats.get_i64("nReturned").ok(), Some(4), "{stats:?}");
    assert_eq!(stats.get_i64("totalKeysExamined").ok(), Some(4));
    assert_eq!(stats.get_i64("totalDocsExamined").ok(), Some(4));

    let reply = explain(
        doc! { "find": "c", "filter": { "b": { "$gte": 105 } } },
        "queryPlanner",
    );
    let scan = reply
        .get_document("queryPlanner")
        .and_then(|p| p.get_document("winningPlan"))
        .and_then(|w| w.get_document("inputStage"))
        .expect("IXSCAN");
    assert_eq!(scan.get_bool("isMultiKey").ok(), Some(true));
    assert_eq!(
        scan.get_document("multiKeyPaths").ok(),
        Some(&doc! { "b": ["b"] })
    );
    assert_eq!(
        scan.get_document("indexBounds").ok(),
        Some(&doc! { "b": ["[inf.0, 105]"] }),
        "descending: the interval is reversed"
    );
    assert!(reply.get("executionStats").is_none());

    // No index serves the filter; a_1 provides the sort, walked instead of a blocking sort.
    let reply = explain(
        doc! { "find": "c", "filter": { "z": 1 }, "sort": { "a": -1 }, "limit": 2 },
        "allPlansExecution",
    );
    let winning = winning_plan(&reply);
    assert_eq!(winning.get_str("stage").ok(), Some("LIMIT"), "{winning:?}");
    let scan = winning
        .get_document("inputStage")
        .and_then(|s| s.get_document("inputStage"))
        .expect("IXSCAN");
    assert_eq!(scan.get_str("indexName").ok(), Some("a_1"));
    assert_eq!(scan.get_str("direction").ok(), Some("backward"));
    let reply = explain(
        doc! { "find": "c", "filter": { "z": 1 }, "sort": { "z": 1 } },
        "allPlansExecution",
    );
    let winning = winning_plan(&reply);
    assert_eq!(winning.get_str("stage").ok(), Some("SORT"));
    assert_eq!(
        winning
            .get_document("inputStage")
            .and_then(|s| s.get_str("stage"))
            .ok(),
        Some("COLLSCAN")
    );
    let stats = reply.get_document("executionStats").expect("stats");
    assert_eq!(stats.get_i64("totalDocsExamined").ok(), Some(20));
    assert_eq!(stats.get_i64("nReturned").ok(), Some(0));

    let reply = explain(doc! { "count": "c", "query": { "_id": 4 } }, "queryPlanner");
    let winning = winning_plan(&reply);
    assert_eq!(
        winning,
        &doc! { "stage": "COUNT", "inputStage": { "stage": "IDHACK" } }
    );

    let reply = explain(
        doc! { "update": "c", "updates": [{ "q": { "a": 1 }, "u": { "$set": { "x": 1 } }, "multi": true }] },
        "executionStats",
    );
    let stats = reply.get_document("executionStats").expect("stats");
    assert_eq!(stats.get_i64("nReturned").ok(), Some(4));
    assert_eq!(
        stats
            .get_document("executionStages")
            .and_then(|s| s.get_str("stage"))
            .ok(),
        Some("UPDATE")
    );
    // Explain does not write.
    assert_eq!(
        find_all(&engine, doc! { "find": "c", "filter": { "x": 1 } })
            .expect("find")
            .len(),
        0
    );

    let reply = explain(
        doc! { "aggregate": "c", "pipeline": [{ "$match": { "a": 2 } }, { "$count": "n" }], "cursor": {} },
        "queryPlanner",
    );
    let stages = reply.get_array("stages").expect("stages");
    let cursor = stages[0]
        .as_document()
        .and_then(|s| s.get_document("$cursor").ok())
        .expect("$cursor");
    let index_name = cursor
        .get_document("queryPlanner")
        .and_then(|p| p.get_document("winningPlan"))
        .and_then(|w| w.get_document("inputStage"))
        .and_then(|s| s.get_str("indexName"))
        .expect("indexName");
    assert_eq!(index_name, "a_1");
    assert_eq!(stages.len(), 2);

    let missing = explain(
        doc! { "find": "nothing", "filter": { "a": 1 } },
        "queryPlanner",
    );
    assert_eq!(
        missing
            .get_document("queryPlanner")
            .and_then(|p| p.get_document("winningPlan"))
            .ok(),
        Some(&doc! { "stage": "EOF" })
    );
    crate::support::fails(
        &engine,
        "db",
        raw(doc! { "explain": { "find": "c" }, "verbosity": "loud" }),
        2,
    );
    crate::support::fails(&engine, "db", raw(doc! { "explain": { "frob": "c" } }), 59);
    crate::support::fails(
        &engine,
        "db",
        raw(doc! { "explain": { "find": "c", "hint": "nope" } }),
        2,
    );
}

#[test]
fn aggregate_with_explain_true_answers_the_plan() {
    let engine = Engine::new(options());
    ok(
        &engine,
        "db",
        raw(doc! { "insert": "c", "documents": [{ "_id": 1 }] }),
    );
    let reply = ok(
        &engine,
        "db",
        raw(doc! { "aggregate": "c", "pipeline": [{ "$match": { "_id": 1 } }], "explain": true }),
    );
    let stages = reply.get_array("stages").expect("stages");
    let winning = stages[0]
        .as_document()
        .and_then(|s| s.get_document("$cursor").ok())
        .and_then(|c| c.get_document("queryPlanner").ok())
        .and_then(|p| p.get_document("winningPlan").ok())
        .expect("winningPlan");
    assert_eq!(winning.get_str("stage").ok(), Some("IDHACK"));
}

/// An array sorts by its smallest element whatever the filter: a walk of a multikey index
/// within bounds would meet `{a: [1, 5]}` at 5, after `{a: 3}`; the planner sorts instead.
#[test]
fn a_multikey_sort_field_is_sorted_not_walked() {
    let engine = Engine::new(options());
    ok(
        &engine,
        "db",
        raw(
            doc! { "createIndexes": "c", "indexes": [{ "key": { "a": 1, "_id": 1 }, "name": "a_id" }] },
        ),
    );
    ok(
        &engine,
        "db",
        raw(doc! { "insert": "c", "documents": [{ "_id": 1, "a": [1, 5] }, { "_id": 2, "a": 3 }] }),
    );
    let reply = ok(
        &engine,
        "db",
        raw(
            doc! { "find": "c", "filter": { "a": { "$gt": 2 } }, "sort": { "a": 1, "_id": 1 }, "limit": 5 },
        ),
    );
    let batch = reply
        .get_document("cursor")
        .and_then(|c| c.get_array("firstBatch"))
        .expect("batch");
    let got: Vec<i32> = batch
        .iter()
        .map(|d| {
            d.as_document()
                .and_then(|d| d.get_i32("_id").ok())
                .expect("_id")
        })
        .collect();
    assert_eq!(got, vec![1, 2]);
}

/// A small value domain, so that `$in` lists meet documents: ints, a string, null, arrays
/// of ints (a multikey leading field), or missing.
fn small() -> impl Strategy<Value = Option<Bson>> {
    proptest::option::weighted(
        0.9,
        prop_oneof![
            6 => (0i32..4).prop_map(Bson::Int32),
            1 => Just(Bson::String("s".into())),
            1 => Just(Bson::Null),
            2 => proptest::collection::vec((0i32..4).prop_map(Bson::Int32), 0..3).prop_map(Bson::Array),
        ],
    )
}

/// A sort field's values: never an array (an index sorted by a multikey field is not
/// walked for a sort), some ties, mixed types, missing.
fn sortable() -> impl Strategy<Value = Option<Bson>> {
    proptest::option::weighted(
        0.9,
        prop_oneof![
            6 => (0i32..6).prop_map(Bson::Int32),
            1 => (0i32..3).prop_map(|n| Bson::Double(f64::from(n) + 0.5)),
            1 => Just(Bson::String("t".into())),
            1 => Just(Bson::Null),
        ],
    )
}

fn in_list() -> impl Strategy<Value = Bson> {
    proptest::collection::vec(
        prop_oneof![
            6 => (0i32..4).prop_map(Bson::Int32),
            1 => Just(Bson::Null),
            1 => Just(Bson::String("s".into())),
        ],
        1..5,
    )
    .prop_map(|values| Bson::Document(doc! { "$in": values }))
}

/// Merged sorts (SORT_MERGE) against the collection scan: `$in` on the fields before the
/// sort's, sorts on `b` then `_id` both ways, skips and limits; the documents, in order.
fn check_merge(
    bodies: Vec<(Option<Bson>, Option<Bson>, Option<Bson>)>,
    filters: Vec<(Bson, Option<Bson>, Option<i32>)>,
    sorts: Vec<(bool, i32, i32)>,
) {
    let engine = Engine::new(options());
    ok(
        &engine,
        "db",
        raw(doc! { "createIndexes": "c", "indexes": [
            { "key": { "a": 1, "b": 1, "_id": -1 }, "name": "a_1_b_1__id_-1" },
            { "key": { "c.x": 1, "a": 1, "b": -1, "_id": 1 }, "name": "cx_1_a_1_b_-1__id_1" },
        ] }),
    );
    for (i, (a, b, cx)) in bodies.into_iter().enumerate() {
        let mut doc = doc! { "_id": i as i32 };
        if let Some(a) = a {
            doc.insert("a", a);
        }
        if let Some(b) = b {
            doc.insert("b", b);
        }
        if let Some(cx) = cx {
            doc.insert("c", doc! { "x": cx });
        }
        ok(
            &engine,
            "db",
            raw(doc! { "insert": "c", "documents": [doc] }),
        );
    }
    for (a, cx, above) in filters {
        let mut filter = doc! { "a": a };
        if let Some(cx) = cx {
            filter.insert("c.x", cx);
        }
        if let Some(above) = above {
            filter.insert("_id", doc! { "$gt": above });
        }
        for &(up, skip, limit) in &sorts {
            let sort = if up {
                doc! { "b": 1, "_id": -1 }
            } else {
                doc! { "b": -1, "_id": 1 }
            };
            let cmd = doc! {
                "find": "c", "filter": filter.clone(), "sort": sort.clone(),
                "skip": skip, "limit": limit,
            };
            let mut scan = cmd.clone();
            scan.insert("hint", natural());
            assert_eq!(
                first_batch_ids(&engine, cmd),
                first_batch_ids(&engine, scan),
                "find {filter:?} sort {sort:?} skip {skip} limit {limit}"
            );
        }
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(
        std::env::var("MFDB_PLANNER_CASES").ok().and_then(|v| v.parse().ok()).unwrap_or(64)
    ))]

    #[test]
    fn merged_sorts_return_what_a_sorted_scan_returns(
        bodies in proptest::collection::vec((small(), sortable(), small()), 0..40),
        filters in proptest::collection::vec(
            (in_list(), proptest::option::of(in_list()), proptest::option::of(0i32..20)),
            1..5,
        ),
        sorts in proptest::collection::vec((any::<bool>(), 0i32..3, 1i32..8), 1..4),
    ) {
        check_merge(bodies, filters, sorts);
    }
}
