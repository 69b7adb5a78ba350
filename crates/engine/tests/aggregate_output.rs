//! `$out` and `$merge` (the output written in one transaction, the target replaced or
//! merged into, MongoDB's errors for bad targets and conflicts) and collectionless
//! aggregates (`aggregate: 1` with `$documents` or `$listLocalSessions`).

use crate::support::{collections, contents, engine, fails, ok, run};
use bson::{Binary, Bson, Document, doc, rawdoc, spec::BinarySubtype};
use engine::Engine;

fn seeded() -> Engine {
    let engine = engine();
    ok(
        &engine,
        "db",
        rawdoc! { "insert": "src", "documents": [
            { "_id": 1, "x": 11 }, { "_id": 2, "x": 22 }, { "_id": 3, "x": 33 },
        ] },
    );
    ok(
        &engine,
        "db",
        rawdoc! { "insert": "dst", "documents": [{ "_id": 2, "x": 0, "keep": true }, { "_id": 9, "old": 1 }] },
    );
    engine
}

fn batch(reply: &Document) -> Vec<Document> {
    reply
        .get_document("cursor")
        .and_then(|c| c.get_array("firstBatch"))
        .expect("cursor reply")
        .iter()
        .map(|d| d.as_document().expect("document").clone())
        .collect()
}

#[test]
fn out_replaces_the_target_with_the_output() {
    let engine = seeded();
    let reply = ok(
        &engine,
        "db",
        rawdoc! {
            "aggregate": "src",
            "pipeline": [{ "$sort": { "x": 1 } }, { "$match": { "_id": { "$gt": 1 } } }, { "$out": "dst" }],
            "cursor": { "batchSize": 2 },
        },
    );
    // The reply is an exhausted cursor with an empty batch.
    assert_eq!(
        reply.get_document("cursor").ok(),
        Some(&doc! { "firstBatch": [], "id": 0_i64, "ns": "db.src" })
    );
    assert_eq!(
        contents(&engine, "db", "dst"),
        vec![doc! { "_id": 2, "x": 22 }, doc! { "_id": 3, "x": 33 }]
    );
    assert_eq!(contents(&engine, "db", "src").len(), 3);
    // No temporary collection is left behind.
    assert_eq!(collections(&engine, "db"), vec!["dst", "src"]);
}

#[test]
fn out_creates_empty_targets_other_databases_and_ids() {
    let engine = seeded();
    ok(
        &engine,
        "db",
        rawdoc! { "aggregate": "src", "pipeline": [{ "$match": { "x": 0 } }, { "$out": "empty" }], "cursor": {} },
    );
    assert!(collections(&engine, "db").contains(&"empty".to_owned()));
    assert!(contents(&engine, "db", "empty").is_empty());
    ok(
        &engine,
        "db",
        rawdoc! {
            "aggregate": "src",
            "pipeline": [{ "$project": { "_id": 0, "x": 1 } }, { "$out": { "db": "other", "coll": "c" } }],
            "cursor": {},
        },
    );
    let copied = contents(&engine, "other", "c");
    assert_eq!(copied.len(), 3);
    // Documents without `_id` get an ObjectId first, as an insert gives them.
    for doc in &copied {
        assert!(matches!(doc.iter().next(), Some((key, Bson::ObjectId(_))) if key == "_id"));
    }
    // `$out` over its own source reads the snapshot from before the write.
    ok(
        &engine,
        "db",
        rawdoc! { "aggregate": "src", "pipeline": [{ "$match": { "_id": 3 } }, { "$out": "src" }], "cursor": {} },
    );
    assert_eq!(
        contents(&engine, "db", "src"),
        vec![doc! { "_id": 3, "x": 33 }]
    );
}

#[test]
fn out_failures_leave_the_target_untouched() {
    let engine = seeded();
    let before = contents(&engine, "db", "dst");
    let cases = [
        // Two output documents with one `_id`.
        (
            rawdoc! { "aggregate": "src", "pipeline": [{ "$project": { "_id": { "$literal": 1 } } }, { "$out": "dst" }], "cursor": {} },
            11000,
        ),
        (
            rawdoc! { "aggregate": "src", "pipeline": [{ "$out": "system.views" }], "cursor": {} },
            17385,
        ),
        (
            rawdoc! { "aggregate": "src", "pipeline": [{ "$out": { "db": "admin", "coll": "x" } }], "cursor": {} },
            31321,
        ),
        (
            rawdoc! { "aggregate": "src", "pipeline": [{ "$out": "" }], "cursor": {} },
            73,
        ),
        (
            rawdoc! { "aggregate": "src", "pipeline": [{ "$out": "a$b" }], "cursor": {} },
            73,
        ),
        (
            rawdoc! { "aggregate": "src", "pipeline": [{ "$out": "dst" }, { "$match": {} }], "cursor": {} },
            40601,
        ),
        (
            rawdoc! { "aggregate": "src", "pipeline": [{ "$addFields": { "y": { "$add": ["$x", "s"] } } }, { "$out": "dst" }], "cursor": {} },
            14,
        ),
    ];
    for (cmd, code) in cases {
        fails(&engine, "db", cmd, code);
        assert_eq!(contents(&engine, "db", "dst"), before);
        assert_eq!(collections(&engine, "db"), vec!["dst", "src"]);
    }
    let reply = fails(
        &engine,
        "db",
        rawdoc! { "aggregate": "src", "pipeline": [{ "$project": { "_id": { "$literal": 1 } } }, { "$out": "dst" }], "cursor": {} },
        11000,
    );
    assert_eq!(
        reply.get_document("keyValue").ok(),
        Some(&doc! { "_id": 1 })
    );
}

fn merge(engine: &Engine, spec: Document) -> Document {
    let spec = bson::RawDocumentBuf::try_from(&spec).expect("spec");
    run(
        engine,
        "db",
        rawdoc! {
            "aggregate": "src",
            "pipeline": [{ "$match": { "_id": { "$lte": 2 } } }, { "$merge": spec }],
            "cursor": {},
        },
    )
}

#[test]
fn merge_modes() {
    let engine = seeded();
    let reply = merge(&engine, doc! { "into": "dst" });
    assert_eq!(reply.get_f64("ok").ok(), Some(1.0), "{reply:?}");
    assert_eq!(batch(&reply), Vec::<Document>::new());
    // Default: merge fields into the match, insert the rest.
    assert_eq!(
        contents(&engine, "db", "dst"),
        vec![
            doc! { "_id": 2, "x": 22, "keep": true },
            doc! { "_id": 9, "old": 1 },
            doc! { "_id": 1, "x": 11 },
        ]
    );
    let engine = seeded();
    merge(
        &engine,
        doc! { "into": "dst", "whenMatched": "replace", "whenNotMatched": "discard" },
    );
    assert_eq!(
        contents(&engine, "db", "dst"),
        vec![doc! { "_id": 2, "x": 22 }, doc! { "_id": 9, "old": 1 }]
    );
    let engine = seeded();
    merge(
        &engine,
        doc! { "into": { "db": "db", "coll": "dst" }, "whenMatched": "keepExisting" },
    );
    assert_eq!(
        contents(&engine, "db", "dst"),
        vec![
            doc! { "_id": 2, "x": 0, "keep": true },
            doc! { "_id": 9, "old": 1 },
            doc! { "_id": 1, "x": 11 },
        ]
    );
}

#[test]
fn merge_with_a_pipeline() {
    let engine = seeded();
    let reply = merge(
        &engine,
        doc! { "into": "dst", "whenMatched": [{ "$set": { "x": { "$add": ["$x", "$$new.x", 1] } } }] },
    );
    assert_eq!(reply.get_f64("ok").ok(), Some(1.0), "{reply:?}");
    assert_eq!(
        contents(&engine, "db", "dst"),
        vec![
            doc! { "_id": 2, "x": 23, "keep": true },
            doc! { "_id": 9, "old": 1 },
            doc! { "_id": 1, "x": 11 },
        ]
    );
    // Its own `let`, evaluated against each output document, beside the command's.
    let engine = seeded();
    let reply = run(
        &engine,
        "db",
        rawdoc! {
            "aggregate": "src",
            "pipeline": [{ "$match": { "_id": 2 } }, { "$merge": {
                "into": "dst", "let": { "twice": { "$multiply": ["$x", 2] } },
                "whenMatched": [{ "$set": { "twice": "$$twice", "tag": "$$tag" } }],
                "whenNotMatched": "discard",
            } }],
            "cursor": {},
            "let": { "tag": "t" },
        },
    );
    assert_eq!(reply.get_f64("ok").ok(), Some(1.0), "{reply:?}");
    assert_eq!(
        contents(&engine, "db", "dst")[0],
        doc! { "_id": 2, "x": 0, "keep": true, "twice": 44, "tag": "t" }
    );
}

#[test]
fn merge_failures_write_nothing() {
    let engine = seeded();
    let before = contents(&engine, "db", "dst");
    let reply = merge(&engine, doc! { "into": "dst", "whenMatched": "fail" });
    assert_eq!(reply.get_i32("code").ok(), Some(11000), "{reply:?}");
    assert_eq!(
        reply.get_document("keyPattern").ok(),
        Some(&doc! { "_id": 1 })
    );
    assert_eq!(
        reply.get_document("keyValue").ok(),
        Some(&doc! { "_id": 2 })
    );
    // `_id: 1` was inserted before `_id: 2` failed: the whole merge is undone.
    assert_eq!(contents(&engine, "db", "dst"), before);
    for (spec, code) in [
        (doc! { "into": "dst", "whenNotMatched": "fail" }, 13113),
        (doc! { "into": "dst", "on": "x" }, 51183),
        (doc! { "into": "dst", "on": ["_id", "_id"] }, 31465),
        (
            doc! { "into": "dst", "whenMatched": [{ "$match": {} }] },
            72,
        ),
        // A `let` of its own replaces the default `new`.
        (
            doc! { "into": "dst", "let": { "n": "$x" }, "whenMatched": [{ "$set": { "a": "$$new" } }] },
            17276,
        ),
        (doc! { "into": "system.x" }, 31319),
        (doc! { "into": { "db": "local", "coll": "x" } }, 31320),
    ] {
        let reply = merge(&engine, spec.clone());
        assert_eq!(reply.get_i32("code").ok(), Some(code), "{spec} → {reply:?}");
        assert_eq!(contents(&engine, "db", "dst"), before);
    }
}

#[test]
fn database_aggregate_with_documents() {
    let engine = seeded();
    let reply = ok(
        &engine,
        "db",
        rawdoc! {
            "aggregate": 1,
            "pipeline": [{ "$documents": [{ "a": 1 }, { "a": 2 }, { "a": "$$v" }] }, { "$match": { "a": { "$gte": 2 } } }],
            "cursor": {},
            "let": { "v": 3 },
        },
    );
    assert_eq!(batch(&reply), vec![doc! { "a": 2 }, doc! { "a": 3 }]);
    assert_eq!(
        reply
            .get_document("cursor")
            .and_then(|c| c.get_str("ns"))
            .ok(),
        Some("db.$cmd.aggregate")
    );
    // `$documents` into `$merge`, as the spec's DuplicateKey test does.
    let reply = fails(
        &engine,
        "db",
        rawdoc! {
            "aggregate": 1,
            "pipeline": [{ "$documents": [{ "_id": 2, "x": 1 }] }, { "$merge": { "into": "src", "whenMatched": "fail" } }],
            "cursor": {},
        },
        11000,
    );
    assert_eq!(
        reply.get_document("keyValue").ok(),
        Some(&doc! { "_id": 2 })
    );
    fails(
        &engine,
        "db",
        rawdoc! { "aggregate": 1, "pipeline": [{ "$match": {} }], "cursor": {} },
        73,
    );
}

#[test]
fn list_local_sessions_lists_the_sessions_commands_used() {
    let engine = engine();
    let lsid = |byte: u8| {
        doc! { "id": Binary { subtype: BinarySubtype::Uuid, bytes: vec![byte; 16] } }
    };
    let list = |engine: &Engine| {
        let reply = ok(
            engine,
            "admin",
            rawdoc! { "aggregate": 1, "pipeline": [{ "$listLocalSessions": {} }, { "$project": { "id": "$_id.id" } }], "cursor": {} },
        );
        batch(&reply)
    };
    assert!(list(&engine).is_empty());
    ok(
        &engine,
        "db",
        rawdoc! { "ping": 1, "lsid": bson::RawDocumentBuf::try_from(&lsid(7)).expect("lsid") },
    );
    let listed = list(&engine);
    assert_eq!(listed.len(), 1);
    assert_eq!(listed[0].get("id"), lsid(7).get("id"));
    // The spec test's shape: one session, then fields of its own.
    let reply = ok(
        &engine,
        "admin",
        rawdoc! {
            "aggregate": 1,
            "pipeline": [
                { "$listLocalSessions": {} }, { "$limit": 1 },
                { "$addFields": { "dummy": "dummy field" } }, { "$project": { "_id": 0, "dummy": 1 } },
            ],
            "cursor": {},
        },
    );
    assert_eq!(batch(&reply), vec![doc! { "dummy": "dummy field" }]);
    ok(
        &engine,
        "admin",
        rawdoc! { "endSessions": [bson::RawDocumentBuf::try_from(&lsid(7)).expect("lsid")] },
    );
    assert!(list(&engine).is_empty());
}

/// `$merge` on fields other than `_id` (mongod's `merge_requires_unique_index.js` cases):
/// it needs a unique, non-partial index of plain fields whose set equals `on`; documents
/// match by those fields; a replacement without `_id` keeps the match's, one with another
/// `_id` is refused (66); `on` values must be present, not null and not arrays.
#[test]
fn merge_on_fields_with_a_unique_index() {
    let engine = engine();
    ok(
        &engine,
        "db",
        rawdoc! { "insert": "src", "documents": [
            { "_id": 1, "a": 1, "v": "one" }, { "_id": 2, "a": 2, "v": "two" },
        ] },
    );
    let agg = |pipeline: bson::RawArrayBuf| {
        run(
            &engine,
            "db",
            rawdoc! { "aggregate": "src", "pipeline": pipeline, "cursor": {} },
        )
    };
    let code = |reply: &Document| reply.get_i32("code").ok();
    let on_a = |on: Bson| {
        let mut pipeline = bson::RawArrayBuf::new();
        pipeline.push(rawdoc! { "$project": { "_id": 0 } });
        let merge = bson::RawDocumentBuf::try_from(&doc! { "$merge": {
            "into": "t", "on": on, "whenMatched": "replace", "whenNotMatched": "insert",
        } })
        .expect("stage");
        pipeline.push(merge);
        pipeline
    };
    // No target, then a target without a supporting index: 51183.
    assert_eq!(code(&agg(on_a(Bson::from("a")))), Some(51183));
    ok(&engine, "db", rawdoc! { "create": "t" });
    assert_eq!(code(&agg(on_a(Bson::from("a")))), Some(51183));
    for (key, options, on) in [
        (doc! { "a": 1 }, doc! {}, Bson::from("a")),
        (
            doc! { "a": 1 },
            doc! { "unique": true, "partialFilterExpression": { "a": { "$gte": 2 } } },
            Bson::from("a"),
        ),
        (
            doc! { "a": 1, "b": 1 },
            doc! { "unique": true },
            Bson::from("a"),
        ),
        (
            doc! { "a": 1 },
            doc! { "unique": true },
            Bson::from(vec!["a", "b"]),
        ),
    ] {
        let mut spec = doc! { "key": key.clone(), "name": "probe" };
        spec.extend(options.clone());
        let spec = bson::RawDocumentBuf::try_from(&spec).expect("spec");
        ok(
            &engine,
            "db",
            rawdoc! { "createIndexes": "t", "indexes": [spec] },
        );
        let reply = agg(on_a(on.clone()));
        assert_eq!(
            code(&reply),
            Some(51183),
            "{key} {options} on {on}: {reply:?}"
        );
        ok(
            &engine,
            "db",
            rawdoc! { "dropIndexes": "t", "index": "probe" },
        );
    }
    assert_eq!(code(&agg(on_a(Bson::from(vec!["a", "a"])))), Some(31465));
    ok(
        &engine,
        "db",
        rawdoc! { "createIndexes": "t", "indexes": [{ "key": { "a": -1 }, "name": "a", "unique": true }] },
    );
    ok(
        &engine,
        "db",
        rawdoc! { "insert": "t", "documents": [{ "_id": "T", "a": 2, "old": true }] },
    );
    let reply = agg(on_a(Bson::from("a")));
    assert_eq!(reply.get_f64("ok").ok(), Some(1.0), "{reply:?}");
    let stored = contents(&engine, "db", "t");
    assert_eq!(stored.len(), 2, "{stored:?}");
    // The match is replaced and keeps its `_id`; the other is inserted with a new one.
    assert_eq!(stored[0], doc! { "_id": "T", "a": 2, "v": "two" });
    assert_eq!(stored[1].get_i32("a").ok(), Some(1));
    assert!(stored[1].get_object_id("_id").is_ok(), "{stored:?}");
    // Merging again matches both by `a`: nothing new.
    agg(on_a(Bson::from("a")));
    assert_eq!(contents(&engine, "db", "t").len(), 2);
    // Keeping the source's `_id` for a match with another one: 66, nothing written.
    let before = contents(&engine, "db", "t");
    let mut pipeline = bson::RawArrayBuf::new();
    pipeline.push(rawdoc! { "$merge": { "into": "t", "on": "a", "whenMatched": "merge" } });
    assert_eq!(code(&agg(pipeline)), Some(66));
    assert_eq!(contents(&engine, "db", "t"), before);
    // `on` values that are missing, null or arrays.
    for (project, expected) in [
        (rawdoc! { "$project": { "_id": 0, "v": 1 } }, 51132),
        (
            rawdoc! { "$project": { "_id": 0, "a": { "$literal": null } } },
            51132,
        ),
        (rawdoc! { "$project": { "_id": 0, "a": ["$a"] } }, 51185),
    ] {
        let mut pipeline = bson::RawArrayBuf::new();
        pipeline.push(project.clone());
        pipeline.push(rawdoc! { "$merge": { "into": "t", "on": "a" } });
        let reply = agg(pipeline);
        assert_eq!(code(&reply), Some(expected), "{project:?}: {reply:?}");
        assert_eq!(contents(&engine, "db", "t"), before);
    }
    // A dotted `on` through a compound unique index, fields in either order, and a
    // multikey target matched as a query matches it.
    ok(
        &engine,
        "db",
        rawdoc! { "createIndexes": "m", "indexes": [{ "key": { "k.x": 1, "k.y": -1 }, "name": "k", "unique": true }] },
    );
    ok(
        &engine,
        "db",
        rawdoc! { "insert": "m", "documents": [{ "_id": "M", "k": [{ "x": 1, "y": 1 }, { "x": 5, "y": 5 }] }] },
    );
    let mut pipeline = bson::RawArrayBuf::new();
    pipeline.push(rawdoc! { "$project": { "_id": 0, "k": { "x": "$a", "y": "$a" }, "v": 1 } });
    pipeline
        .push(rawdoc! { "$merge": { "into": "m", "on": ["k.y", "k.x"], "whenMatched": "merge" } });
    let reply = agg(pipeline);
    assert_eq!(reply.get_f64("ok").ok(), Some(1.0), "{reply:?}");
    let stored = contents(&engine, "db", "m");
    assert_eq!(stored.len(), 2, "{stored:?}");
    assert_eq!(
        stored[0],
        doc! { "_id": "M", "k": { "x": 1, "y": 1 }, "v": "one" }
    );
}
