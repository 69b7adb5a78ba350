//! aggregate.

use super::{batch, delete, drain, engine, fails, field_values, insert, numbered, ok};
use bson::{Bson, RawDocumentBuf, doc, rawdoc};

#[test]
fn aggregate_groups_and_pages_through_a_cursor() {
    let (engine, _) = engine();
    insert(
        &engine,
        "c",
        (0..40).map(|i| rawdoc! { "_id": i, "g": i % 4, "v": i }),
    );
    let cmd = rawdoc! {
        "aggregate": "c",
        "pipeline": [
            { "$match": { "v": { "$gte": 8 } } },
            { "$group": { "_id": "$g", "total": { "$sum": "$v" } } },
            { "$sort": { "_id": 1 } },
        ],
        "cursor": { "batchSize": 1 },
    };
    let first = ok(&engine, cmd);
    let (docs, id) = batch(&first);
    assert_eq!(
        docs,
        vec![doc! { "_id": 0, "total": 8 + 12 + 16 + 20 + 24 + 28 + 32 + 36 }]
    );
    assert_ne!(id, 0);
    assert_eq!(
        first
            .get_document("cursor")
            .expect("cursor")
            .get_str("ns")
            .ok(),
        Some("test.c")
    );
    let all = drain(&engine, "c", &first, Some(2));
    assert_eq!(
        field_values(&all, "_id"),
        (0..4).map(Bson::Int32).collect::<Vec<_>>()
    );
}

#[test]
fn aggregate_defaults_to_101_and_handles_missing_collections() {
    let (engine, _) = engine();
    insert(&engine, "c", numbered(0..150));
    let first = ok(
        &engine,
        rawdoc! { "aggregate": "c", "pipeline": [], "cursor": {} },
    );
    assert_eq!(batch(&first).0.len(), 101);
    assert_eq!(drain(&engine, "c", &first, None).len(), 150);
    let none = ok(
        &engine,
        rawdoc! { "aggregate": "nope", "pipeline": [{ "$count": "n" }], "cursor": {} },
    );
    assert_eq!(batch(&none), (vec![], 0));
}

#[test]
fn aggregate_uses_the_id_index_for_a_leading_match() {
    let (engine, _) = engine();
    insert(&engine, "c", numbered(0..50));
    let cmd = rawdoc! {
        "aggregate": "c",
        "pipeline": [{ "$match": { "_id": 7, "n": 7 } }, { "$project": { "n": 1, "_id": 0 } }],
        "cursor": {},
    };
    assert_eq!(batch(&ok(&engine, cmd)), (vec![doc! { "n": 7 }], 0));
    let miss = rawdoc! {
        "aggregate": "c", "pipeline": [{ "$match": { "_id": 7, "n": 8 } }], "cursor": {},
    };
    assert_eq!(batch(&ok(&engine, miss)), (vec![], 0));
}

#[test]
fn aggregate_refuses_bad_arguments() {
    let (engine, _) = engine();
    insert(&engine, "c", numbered(0..3));
    assert_eq!(
        fails(&engine, rawdoc! { "aggregate": "c", "pipeline": [] }, 9),
        "The 'cursor' option is required, except for aggregate with the explain argument"
    );
    let cases = [
        (
            rawdoc! { "aggregate": 1, "pipeline": [{ "$currentOp": {} }], "cursor": {} },
            73,
        ),
        (
            rawdoc! { "aggregate": "c", "pipeline": [{ "$currentOp": {} }], "cursor": {} },
            73,
        ),
        (rawdoc! { "aggregate": 1, "pipeline": [], "cursor": {} }, 73),
        (
            rawdoc! { "aggregate": 1, "pipeline": [{ "$match": {} }], "cursor": {} },
            73,
        ),
        (
            rawdoc! { "aggregate": "c", "pipeline": [{ "$listLocalSessions": {} }], "cursor": {} },
            73,
        ),
        (rawdoc! { "aggregate": 2, "pipeline": [], "cursor": {} }, 9),
        (rawdoc! { "aggregate": {}, "pipeline": [], "cursor": {} }, 9),
        (rawdoc! { "aggregate": "c", "cursor": {} }, 40414),
        (
            rawdoc! { "aggregate": "c", "pipeline": {}, "cursor": {} },
            14,
        ),
        (
            rawdoc! { "aggregate": "c", "pipeline": [1], "cursor": {} },
            14,
        ),
        (
            rawdoc! { "aggregate": "c", "pipeline": [], "cursor": 1 },
            14,
        ),
        (
            rawdoc! { "aggregate": "c", "pipeline": [], "cursor": { "x": 1 } },
            40415,
        ),
        (
            rawdoc! { "aggregate": "c", "pipeline": [], "cursor": { "batchSize": -1 } },
            51024,
        ),
        (
            rawdoc! { "aggregate": "c", "pipeline": [], "cursor": { "batchSize": "a" } },
            14,
        ),
        (
            rawdoc! { "aggregate": "c", "pipeline": [{ "$frob": {} }], "cursor": {} },
            40324,
        ),
        (
            rawdoc! { "aggregate": "c", "pipeline": [{ "$out": "system.x" }], "cursor": {} },
            17385,
        ),
        (
            rawdoc! { "aggregate": "c", "pipeline": [], "cursor": {}, "let": { "A": 1 } },
            9,
        ),
        (
            rawdoc! { "aggregate": "c", "pipeline": [], "cursor": {}, "let": { "a": "$x" } },
            4_890_500,
        ),
        (
            rawdoc! { "aggregate": "c", "pipeline": [], "cursor": {}, "hint": { "a": 1 } },
            2,
        ),
        (
            rawdoc! { "aggregate": "c", "pipeline": [], "cursor": {}, "bogus": 1 },
            40415,
        ),
        (
            rawdoc! { "aggregate": "c", "pipeline": [], "cursor": {}, "maxTimeMS": -5 },
            51024,
        ),
    ];
    for (cmd, code) in cases {
        fails(&engine, cmd, code);
    }
}

#[test]
fn aggregate_max_time_ms_expires() {
    let (engine, clock) = engine();
    insert(&engine, "c", numbered(0..500));
    clock.set_step(10);
    let cmd = rawdoc! {
        "aggregate": "c", "pipeline": [{ "$group": { "_id": null, "n": { "$sum": "$_id" } } }],
        "cursor": {}, "maxTimeMS": 5,
    };
    fails(&engine, cmd, 50);
}

#[test]
fn count_shaped_pipelines_answer_as_the_group_would() {
    // `[{$match: {}}?, {$group: {_id: <constant>, n: {$sum: 1}}}]` is answered from the
    // catalog's count; each case is compared with the same pipeline behind a `$match`
    // that keeps everything but takes the general path (values and types alike).
    let (engine, _) = engine();
    insert(&engine, "c", numbered(0..150));
    insert(&engine, "empty", numbered(0..1));
    delete(&engine, "empty", 0);
    for i in [3, 77, 149] {
        delete(&engine, "c", i);
    }
    let shapes: Vec<RawDocumentBuf> = vec![
        rawdoc! { "p": [{ "$match": {} }, { "$group": { "_id": 1, "n": { "$sum": 1 } } }] },
        rawdoc! { "p": [{ "$group": { "_id": null, "n": { "$sum": 1 }, "m": { "$sum": 1 } } }] },
        rawdoc! { "p": [{ "$group": { "_id": "all", "n": { "$sum": 1 } } }] },
        // Not the shape: the general path answers these (a long 1, a path `_id`).
        rawdoc! { "p": [{ "$group": { "_id": 1, "n": { "$sum": 1i64 } } }] },
        rawdoc! { "p": [{ "$group": { "_id": "$missing", "n": { "$sum": 1 } } }] },
        rawdoc! { "p": [{ "$match": { "_id": { "$gt": 100 } } },
        { "$group": { "_id": 1, "n": { "$sum": 1 } } }] },
    ];
    for coll in ["c", "empty", "missing"] {
        for shape in &shapes {
            let pipeline = shape.get_array("p").expect("p");
            let mut general = vec![Bson::Document(
                doc! { "$match": { "_id": { "$exists": true } } },
            )];
            for stage in pipeline {
                let stage = stage.expect("stage").as_document().expect("doc");
                general.push(Bson::Document(stage.try_into().expect("doc")));
            }
            let fast = ok(
                &engine,
                rawdoc! {
                    "aggregate": coll, "pipeline": pipeline.to_owned(), "cursor": {},
                },
            );
            let cmd = doc! { "aggregate": coll, "pipeline": general, "cursor": {} };
            let slow = ok(&engine, RawDocumentBuf::try_from(&cmd).expect("raw"));
            assert_eq!(batch(&fast), batch(&slow), "{coll}: {shape:?}");
        }
    }
    let counted = ok(
        &engine,
        rawdoc! {
            "aggregate": "c", "cursor": {},
            "pipeline": [{ "$match": {} }, { "$group": { "_id": 1, "n": { "$sum": 1 } } }],
        },
    );
    assert_eq!(batch(&counted).0, vec![doc! { "_id": 1, "n": 147 }]);
}

#[test]
fn a_leading_group_sees_the_fields_it_reads_as_over_whole_documents() {
    // A leading `$group`/`$count` gets documents cut down to the top-level fields it reads;
    // every pipeline here must give what the same pipeline gives over whole documents.
    let (engine, _) = engine();
    let docs: Vec<RawDocumentBuf> = (0..60)
        .map(|i| {
            let mut doc = rawdoc! {
                "_id": i, "a": i % 3, "b": { "c": i, "d": [i, i + 1] }, "e": format!("x{i}"),
                "pad": "p".repeat(200),
            };
            if i % 2 == 1 {
                doc.append(bson::raw::cstr!("f"), i);
            }
            doc
        })
        .collect();
    insert(&engine, "g", docs.clone());
    let pipelines: Vec<RawDocumentBuf> = vec![
        rawdoc! { "p": [{ "$group": { "_id": "$a", "s": { "$sum": "$b.c" } } }] },
        rawdoc! { "p": [{ "$match": { "e": { "$regex": "^x1" } } },
        { "$group": { "_id": "$a", "n": { "$sum": 1 }, "m": { "$max": "$f" } } }] },
        rawdoc! { "p": [{ "$group": { "_id": { "a": "$a", "f": "$f" }, "v": { "$push": "$e" } } },
        { "$sort": { "_id.a": 1, "_id.f": 1 } }] },
        rawdoc! { "p": [{ "$group": { "_id": null, "r": { "$push": "$$ROOT" } } }] },
        rawdoc! { "p": [{ "$group": { "_id": "$$ROOT.a", "l": { "$last": "$$CURRENT.e" } } }] },
        rawdoc! { "p": [{ "$group": { "_id": "$a", "t": { "$sum": { "$let": {
        "vars": { "x": "$b.c" }, "in": { "$multiply": ["$$x", 2] } } } } } }] },
        rawdoc! { "p": [{ "$group": { "_id": "$a", "t": { "$sum": { "$size": { "$map": {
        "input": "$b.d", "as": "CURRENT", "in": "$$CURRENT" } } } } } }] },
        rawdoc! { "p": [{ "$group": { "_id": { "$getField": "e" }, "n": { "$sum": 1 } } }] },
        rawdoc! { "p": [{ "$group": { "_id": "$a", "k": { "$first": { "$filter": {
        "input": "$b.d", "cond": { "$gt": ["$$this", 5] } } } } } }] },
        rawdoc! { "p": [{ "$match": { "a": 1 } }, { "$count": "n" }] },
        rawdoc! { "p": [{ "$sortByCount": "$a" }] },
        rawdoc! { "p": [{ "$match": { "_id": 7 } }, { "$group": { "_id": "$e" } }] },
    ];
    for pipeline in &pipelines {
        let stages = pipeline.get_array("p").expect("p");
        let reply = ok(
            &engine,
            rawdoc! {
                "aggregate": "g", "pipeline": stages.to_owned(), "cursor": { "batchSize": 1000 },
            },
        );
        let expected = query::Pipeline::parse(stages)
            .expect("parse")
            .run(docs.iter().cloned().map(Ok))
            .expect("run");
        let expected: Vec<bson::Document> = expected
            .iter()
            .map(|d| d.as_ref().try_into().expect("doc"))
            .collect();
        assert_eq!(batch(&reply).0, expected, "{pipeline:?}");
    }
}

#[test]
fn lookup_joins_other_collections_of_the_database_in_one_snapshot() {
    let (engine, _) = engine();
    insert(
        &engine,
        "orders",
        [
            rawdoc! { "_id": 1, "item": "almonds" },
            rawdoc! { "_id": 2, "item": "pecans" },
            rawdoc! { "_id": 3, "item": "figs" },
        ],
    );
    insert(
        &engine,
        "inventory",
        [
            rawdoc! { "_id": 10, "sku": "almonds", "n": 1 },
            rawdoc! { "_id": 11, "sku": "pecans", "n": 2 },
            rawdoc! { "_id": 12, "sku": "pecans", "n": 3 },
        ],
    );
    insert(
        &engine,
        "notes",
        [rawdoc! { "_id": 1, "on": 11, "text": "crunchy" }],
    );
    let cmd = rawdoc! {
        "aggregate": "orders",
        "pipeline": [
            { "$lookup": {
                "from": "inventory", "localField": "item", "foreignField": "sku",
                "pipeline": [
                    { "$lookup": { "from": "notes", "localField": "_id", "foreignField": "on", "as": "notes" } },
                    { "$project": { "_id": 0, "n": 1, "notes.text": 1 } },
                ],
                "as": "stock",
            } },
            { "$lookup": { "from": "missing", "localField": "_id", "foreignField": "_id", "as": "none" } },
            { "$sort": { "_id": 1 } },
        ],
        "cursor": {},
    };
    let docs = batch(&ok(&engine, cmd)).0;
    assert_eq!(
        docs,
        vec![
            doc! { "_id": 1, "item": "almonds", "stock": [{ "n": 1, "notes": [] }], "none": [] },
            doc! {
                "_id": 2, "item": "pecans",
                "stock": [{ "n": 2, "notes": [{ "text": "crunchy" }] }, { "n": 3, "notes": [] }],
                "none": [],
            },
            doc! { "_id": 3, "item": "figs", "stock": [], "none": [] },
        ]
    );
    // A collectionless aggregate joins too.
    let cmd = rawdoc! {
        "aggregate": 1,
        "pipeline": [
            { "$documents": [{ "k": "pecans" }] },
            { "$lookup": { "from": "inventory", "localField": "k", "foreignField": "sku", "as": "j" } },
            { "$project": { "_id": 0, "ids": "$j._id" } },
        ],
        "cursor": {},
    };
    assert_eq!(batch(&ok(&engine, cmd)).0, vec![doc! { "ids": [11, 12] }]);
    let cmd = rawdoc! {
        "aggregate": "notes",
        "pipeline": [
            { "$unionWith": { "coll": "orders", "pipeline": [{ "$match": { "_id": 3 } }] } },
            { "$project": { "_id": 1 } },
        ],
        "cursor": {},
    };
    assert_eq!(
        batch(&ok(&engine, cmd)).0,
        vec![doc! { "_id": 1 }, doc! { "_id": 3 }]
    );
}
