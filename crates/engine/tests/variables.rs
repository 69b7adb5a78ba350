//! Command-level `let` variables (and an update statement's `c` constants) through every
//! command that takes them: find, aggregate, update, delete and findAndModify. Values are
//! evaluated once before any document is read; `$$NOW` is the command's time.

use crate::support::{NOW_MILLIS, contents, engine, fails, ok, write_errors};
use bson::{Bson, DateTime, Document, doc, rawdoc};
use engine::Engine;

fn seeded() -> Engine {
    let engine = engine();
    ok(
        &engine,
        "db",
        rawdoc! { "insert": "c", "documents": [
            { "_id": 1, "v": 10 }, { "_id": 2, "v": 20 }, { "_id": 3, "v": 30 },
        ] },
    );
    engine
}

fn first_batch(reply: &Document) -> Vec<Document> {
    reply
        .get_document("cursor")
        .and_then(|c| c.get_array("firstBatch"))
        .expect("a cursor reply")
        .iter()
        .map(|d| d.as_document().expect("documents").clone())
        .collect()
}

#[test]
fn find_reads_let_in_filter_and_projection() {
    let engine = seeded();
    let reply = ok(
        &engine,
        "db",
        rawdoc! {
            "find": "c",
            "filter": { "$expr": { "$eq": ["$_id", "$$id"] } },
            "projection": { "_id": 1, "tag": "$$tag", "at": "$$NOW" },
            "let": { "id": { "$add": [1, 1] }, "tag": { "$concat": ["x", "y"] } },
        },
    );
    assert_eq!(
        first_batch(&reply),
        vec![doc! { "_id": 2, "tag": "xy", "at": DateTime::from_millis(NOW_MILLIS) }]
    );
    // The name of an undefined variable fails the query; a bad `let` fails the command.
    fails(
        &engine,
        "db",
        rawdoc! { "find": "c", "filter": { "$expr": "$$id" } },
        17276,
    );
    fails(
        &engine,
        "db",
        rawdoc! { "find": "c", "let": { "Id": 1 } },
        9,
    );
    fails(
        &engine,
        "db",
        rawdoc! { "find": "c", "let": { "id": "$v" } },
        4_890_500,
    );
}

#[test]
fn aggregate_reads_let_in_every_stage() {
    let engine = seeded();
    let reply = ok(
        &engine,
        "db",
        rawdoc! {
            "aggregate": "c",
            "pipeline": [
                { "$match": { "$expr": { "$gte": ["$v", "$$min"] } } },
                { "$group": { "_id": "$$label", "total": { "$sum": "$v" } } },
                { "$project": { "_id": 0, "total": 1, "label": "$_id", "y": "$$y" } },
            ],
            "cursor": {},
            "let": { "min": 20, "label": "big", "y": { "$literal": "$bar" } },
        },
    );
    assert_eq!(
        first_batch(&reply),
        vec![doc! { "total": 50, "label": "big", "y": "$bar" }]
    );
}

#[test]
fn update_reads_let_in_filter_and_pipeline() {
    let engine = seeded();
    let reply = ok(
        &engine,
        "db",
        rawdoc! {
            "update": "c",
            "updates": [
                { "q": { "$expr": { "$eq": ["$_id", "$$id"] } }, "u": [{ "$set": { "x": "$$x" } }] },
                { "q": { "_id": 3 }, "u": [{ "$set": { "k": "$$k", "x": "$$x" } }], "c": { "k": 7, "x": "shadowed" } },
            ],
            "let": { "id": 1, "x": "foo" },
        },
    );
    assert_eq!(reply.get_i32("nModified").ok(), Some(2), "{reply:?}");
    assert_eq!(
        contents(&engine, "db", "c"),
        vec![
            doc! { "_id": 1, "v": 10, "x": "foo" },
            doc! { "_id": 2, "v": 20 },
            doc! { "_id": 3, "v": 30, "k": 7, "x": "shadowed" },
        ]
    );
    // An upsert through a `let`-filtered replacement seeds nothing from `$expr`.
    let reply = ok(
        &engine,
        "db",
        rawdoc! {
            "update": "c",
            "updates": [{ "q": { "$expr": { "$eq": ["$_id", "$$id"] } }, "u": { "_id": 9, "r": "$$id" }, "upsert": true }],
            "let": { "id": 99 },
        },
    );
    assert_eq!(reply.get_i32("n").ok(), Some(1), "{reply:?}");
    // A replacement is a document, not an expression: `$$id` stays a string.
    assert!(
        contents(&engine, "db", "c").contains(&doc! { "_id": 9, "r": "$$id" }),
        "{:?}",
        contents(&engine, "db", "c")
    );
    // The undefined variable fails the statement, not the command.
    let reply = ok(
        &engine,
        "db",
        rawdoc! { "update": "c", "updates": [{ "q": {}, "u": [{ "$set": { "x": "$$nope" } }] }] },
    );
    assert_eq!(write_errors(&reply), vec![(0, 17276)]);
}

#[test]
fn delete_reads_let_in_its_filter() {
    let engine = seeded();
    let reply = ok(
        &engine,
        "db",
        rawdoc! {
            "delete": "c",
            "deletes": [{ "q": { "$expr": { "$gt": ["$v", "$$limit"] } }, "limit": 0 }],
            "let": { "limit": { "$multiply": [2, 10] } },
        },
    );
    assert_eq!(reply.get_i32("n").ok(), Some(1), "{reply:?}");
    assert_eq!(
        contents(&engine, "db", "c")
            .iter()
            .map(|d| d.get("_id").cloned())
            .collect::<Vec<_>>(),
        vec![Some(Bson::Int32(1)), Some(Bson::Int32(2))]
    );
}

#[test]
fn find_and_modify_reads_let_in_filter_update_and_fields() {
    let engine = seeded();
    let reply = ok(
        &engine,
        "db",
        rawdoc! {
            "findAndModify": "c",
            "query": { "$expr": { "$eq": ["$_id", "$$id"] } },
            "update": [{ "$set": { "v": { "$add": ["$v", "$$step"] } } }],
            "fields": { "v": 1, "step": "$$step" },
            "new": true,
            "let": { "id": 2, "step": 5 },
        },
    );
    assert_eq!(
        reply.get_document("value").ok(),
        Some(&doc! { "_id": 2, "v": 25, "step": 5 })
    );
    let reply = ok(
        &engine,
        "db",
        rawdoc! {
            "findAndModify": "c",
            "query": { "$expr": { "$eq": ["$_id", "$$id"] } },
            "remove": true,
            "let": { "id": 3 },
        },
    );
    assert_eq!(
        reply.get_document("value").ok(),
        Some(&doc! { "_id": 3, "v": 30 })
    );
}
