//! The update command through `Engine::run_command`: operator, replacement and pipeline
//! updates, multi, upserts, no-op detection and statement errors; results read back
//! through the store.

use crate::support::{NOW_MILLIS, contents, engine, ok, write_errors};
use bson::{Bson, DateTime, Document, RawDocumentBuf, doc, rawdoc};
use engine::Engine;

fn seeded() -> Engine {
    let engine = engine();
    ok(
        &engine,
        "db",
        rawdoc! {
            "insert": "c",
            "documents": [
                { "_id": 1, "v": 1, "a": [1, 2, 3] },
                { "_id": 2, "v": 2, "a": [{ "x": 1 }, { "x": 5 }] },
                { "_id": 3, "v": 2 },
            ],
        },
    );
    engine
}

fn update(engine: &Engine, updates: Vec<Document>) -> Document {
    let cmd = doc! { "update": "c", "updates": updates };
    ok(
        engine,
        "db",
        RawDocumentBuf::try_from(&cmd).expect("encodes"),
    )
}

fn counts(reply: &Document) -> (i32, i32) {
    (
        reply.get_i32("n").expect("n"),
        reply.get_i32("nModified").expect("nModified"),
    )
}

fn stored(engine: &Engine, id: i32) -> Option<Document> {
    contents(engine, "db", "c")
        .into_iter()
        .find(|d| d.get_i32("_id").ok() == Some(id))
}

/// One-statement updates on the seeded collection: `(statement, (n, nModified), _id to
/// check, its document afterwards)`.
#[test]
fn update_cases() {
    let cases: Vec<(Document, (i32, i32), i32, Document)> = vec![
        (
            doc! { "q": { "_id": 1 }, "u": { "$set": { "v": 10 } } },
            (1, 1),
            1,
            doc! { "_id": 1, "v": 10, "a": [1, 2, 3] },
        ),
        (
            doc! { "q": { "v": 2 }, "u": { "$inc": { "v": 1 } } },
            (1, 1),
            3,
            doc! { "_id": 3, "v": 2 },
        ),
        (
            doc! { "q": { "_id": 3 }, "u": { "w": 1 } },
            (1, 1),
            3,
            doc! { "_id": 3, "w": 1 },
        ),
        (
            doc! { "q": { "_id": 3 }, "u": [{ "$set": { "w": { "$add": ["$v", 1] } } }] },
            (1, 1),
            3,
            doc! { "_id": 3, "v": 2, "w": 3 },
        ),
        (
            doc! { "q": { "_id": 1, "a": 2 }, "u": { "$set": { "a.$": 20 } } },
            (1, 1),
            1,
            doc! { "_id": 1, "v": 1, "a": [1, 20, 3] },
        ),
        (
            doc! {
                "q": { "_id": 2 },
                "u": { "$set": { "a.$[e].x": 0 } },
                "arrayFilters": [{ "e.x": { "$gt": 2 } }],
            },
            (1, 1),
            2,
            doc! { "_id": 2, "v": 2, "a": [{ "x": 1 }, { "x": 0 }] },
        ),
        (
            doc! { "q": { "_id": 1 }, "u": { "$set": { "v": 1 } } },
            (1, 0),
            1,
            doc! { "_id": 1, "v": 1, "a": [1, 2, 3] },
        ),
        (
            doc! { "q": { "_id": 3 }, "u": { "_id": 3, "v": 2 } },
            (1, 0),
            3,
            doc! { "_id": 3, "v": 2 },
        ),
        (
            doc! { "q": { "_id": 9 }, "u": { "$set": { "v": 1 } } },
            (0, 0),
            3,
            doc! { "_id": 3, "v": 2 },
        ),
        (
            doc! { "q": { "_id": 3 }, "u": { "$currentDate": { "t": true } } },
            (1, 1),
            3,
            doc! { "_id": 3, "v": 2, "t": DateTime::from_millis(NOW_MILLIS) },
        ),
        (
            doc! { "q": { "_id": 3 }, "u": { "$set": { "v": 5 } }, "hint": { "_id": 1 } },
            (1, 1),
            3,
            doc! { "_id": 3, "v": 5 },
        ),
    ];
    for (statement, expected, id, after) in cases {
        let engine = seeded();
        let reply = update(&engine, vec![statement.clone()]);
        assert!(write_errors(&reply).is_empty(), "{statement:?} → {reply:?}");
        assert_eq!(counts(&reply), expected, "{statement:?}");
        assert_eq!(stored(&engine, id), Some(after), "{statement:?}");
    }
}

#[test]
fn multi_update_counts_matched_and_modified() {
    let engine = seeded();
    let reply = update(
        &engine,
        vec![
            doc! { "q": { "v": 2 }, "u": { "$set": { "v": 2, "w": 1 } }, "multi": true },
            doc! { "q": {}, "u": { "$set": { "w": 1 } }, "multi": true },
        ],
    );
    assert_eq!(counts(&reply), (5, 3), "{reply:?}");
    for doc in contents(&engine, "db", "c") {
        assert_eq!(doc.get_i32("w").ok(), Some(1), "{doc:?}");
    }
}

#[test]
fn multi_update_visits_each_document_once() {
    let engine = seeded();
    let reply = update(
        &engine,
        vec![doc! { "q": { "v": { "$gte": 1 } }, "u": { "$inc": { "v": 10 } }, "multi": true }],
    );
    assert_eq!(counts(&reply), (3, 3));
    let values: Vec<i32> = contents(&engine, "db", "c")
        .iter()
        .map(|d| d.get_i32("v").expect("v"))
        .collect();
    assert_eq!(values, vec![11, 12, 12]);
}

#[test]
fn no_op_update_writes_nothing() {
    let engine = seeded();
    let commits = || engine.store().pager_stats().expect("stats").commit_seq;
    let before = commits();
    let reply = update(
        &engine,
        vec![
            doc! { "q": {}, "u": { "$max": { "v": 0 } }, "multi": true },
            doc! { "q": { "_id": 1 }, "u": { "$unset": { "nothing": "" } } },
            doc! { "q": { "_id": 3 }, "u": { "_id": 3, "v": 2 } },
            doc! { "q": { "_id": 2 }, "u": [{ "$set": { "v": 2 } }] },
        ],
    );
    assert_eq!(counts(&reply), (6, 0), "{reply:?}");
    assert_eq!(commits(), before, "a no-op update commits nothing");
    update(
        &engine,
        vec![doc! { "q": { "_id": 1 }, "u": { "$set": { "v": 0 } } }],
    );
    assert!(commits() > before, "a modifying update commits");
}

#[test]
fn upserts_seed_from_the_filter() {
    let engine = seeded();
    let reply = update(
        &engine,
        vec![
            doc! { "q": { "_id": 10, "k": "a" }, "u": { "$set": { "v": 1 } }, "upsert": true },
            doc! { "q": { "_id": 11, "k": "b" }, "u": { "w": 2 }, "upsert": true },
            doc! { "q": { "k": "c", "n.m": 1 }, "u": { "$setOnInsert": { "s": 1 } }, "upsert": true },
            doc! { "q": { "_id": 1 }, "u": { "$set": { "v": 7 } }, "upsert": true },
        ],
    );
    assert_eq!(counts(&reply), (4, 1), "{reply:?}");
    let upserted = reply.get_array("upserted").expect("upserted");
    assert_eq!(upserted.len(), 3);
    assert_eq!(upserted[0], Bson::Document(doc! { "index": 0, "_id": 10 }));
    assert_eq!(upserted[1], Bson::Document(doc! { "index": 1, "_id": 11 }));
    let generated = match &upserted[2] {
        Bson::Document(entry) => {
            assert_eq!(entry.get_i32("index").ok(), Some(2));
            entry.get_object_id("_id").expect("a generated ObjectId")
        }
        other => panic!("{other:?}"),
    };
    let docs = contents(&engine, "db", "c");
    assert_eq!(docs[3], doc! { "_id": 10, "k": "a", "v": 1 });
    assert_eq!(docs[4], doc! { "_id": 11, "w": 2 });
    assert_eq!(
        docs[5],
        doc! { "_id": generated, "k": "c", "n": { "m": 1 }, "s": 1 }
    );
    assert_eq!(
        stored(&engine, 1).and_then(|d| d.get_i32("v").ok()),
        Some(7)
    );
}

#[test]
fn replacement_upsert_seeds_only_from_id() {
    // mongod seeds a replacement upsert from `_id` alone: the other equalities, even two
    // on one path (an error for an operator upsert), are not looked at.
    let engine = engine();
    let reply = update(
        &engine,
        vec![
            doc! { "q": { "x": 1, "x.y": 2 }, "u": { "r": 1 }, "upsert": true },
            doc! { "q": { "_id": 7, "a": 1, "a.b": 2 }, "u": { "r": 2 }, "upsert": true },
        ],
    );
    assert_eq!(counts(&reply), (2, 0), "{reply:?}");
    assert!(reply.get("writeErrors").is_none(), "{reply:?}");
    let docs = contents(&engine, "db", "c");
    assert_eq!(docs.len(), 2);
    assert!(docs[0].get_object_id("_id").is_ok(), "{:?}", docs[0]);
    assert_eq!(docs[0].get("r"), Some(&Bson::Int32(1)));
    assert_eq!(
        docs[0].len(),
        2,
        "nothing seeded from the filter: {:?}",
        docs[0]
    );
    assert_eq!(docs[1], doc! { "_id": 7, "r": 2 });
}

#[test]
fn upsert_pipeline_and_id_set_by_the_update() {
    let engine = engine();
    let reply = update(
        &engine,
        vec![
            doc! { "q": { "k": 1 }, "u": { "$set": { "_id": "chosen" } }, "upsert": true },
            doc! { "q": { "_id": 5 }, "u": [{ "$set": { "x": { "$literal": 1 } } }], "upsert": true },
        ],
    );
    assert_eq!(counts(&reply), (2, 0), "{reply:?}");
    let docs = contents(&engine, "db", "c");
    assert_eq!(
        docs,
        vec![doc! { "_id": "chosen", "k": 1 }, doc! { "_id": 5, "x": 1 }]
    );
}

#[test]
fn upsert_duplicate_is_a_write_error() {
    let engine = seeded();
    let reply = update(
        &engine,
        vec![doc! { "q": { "_id": 1, "v": 99 }, "u": { "$set": { "w": 1 } }, "upsert": true }],
    );
    assert_eq!(write_errors(&reply), vec![(0, 11000)]);
    assert_eq!(counts(&reply), (0, 0));
    assert!(reply.get("upserted").is_none());
}

/// Statements that fail as write errors: `(statement, code)`.
#[test]
fn update_statement_errors() {
    let big = "x".repeat(9 * 1024 * 1024);
    let cases: Vec<(Document, i32)> = vec![
        (
            doc! { "q": { "_id": 1 }, "u": { "$set": { "_id": 2 } } },
            66,
        ),
        (doc! { "q": { "_id": 1 }, "u": { "_id": 2, "v": 1 } }, 66),
        (doc! { "q": {}, "u": { "v": 1 }, "multi": true }, 9),
        (doc! { "q": {}, "u": { "$bogus": { "v": 1 } } }, 9),
        (
            doc! { "q": { "$bogus": 1 }, "u": { "$set": { "v": 1 } } },
            2,
        ),
        (doc! { "q": { "_id": 1 }, "u": { "$inc": { "a": 1 } } }, 14),
        (
            doc! { "q": {}, "u": { "$set": { "v": 1 } }, "hint": { "v": 1 } },
            2,
        ),
        (
            doc! { "q": {}, "u": { "$set": { "v": 1 } }, "collation": { "locale": "en" } },
            238,
        ),
        (
            doc! { "q": {}, "u": { "$set": { "v": 1 } }, "c": { "x": 1 } },
            51198,
        ),
        (
            doc! { "q": {}, "u": [{ "$set": { "v": "$$x" } }], "c": { "x-y": 1 } },
            9,
        ),
        (
            doc! { "q": { "_id": 1 }, "u": { "$set": { "b1": big.clone(), "b2": big } } },
            17419,
        ),
        (
            doc! { "q": { "_id": 1 }, "u": { "$set": { "a.$[nope]": 1 } } },
            2,
        ),
        (
            doc! { "q": { "x": 1, "x.y": 2 }, "u": { "$set": { "v": 1 } }, "upsert": true },
            54,
        ),
    ];
    for (statement, code) in cases {
        let engine = seeded();
        let before = contents(&engine, "db", "c");
        let reply = update(&engine, vec![statement.clone()]);
        assert_eq!(
            write_errors(&reply),
            vec![(0, code)],
            "{statement:?} → {reply:?}"
        );
        assert_eq!(
            contents(&engine, "db", "c"),
            before,
            "{statement:?} changed data"
        );
    }
}

#[test]
fn immutable_id_message_is_mongods() {
    let engine = seeded();
    let reply = update(
        &engine,
        vec![doc! { "q": { "_id": 1 }, "u": { "$set": { "_id": 2 } } }],
    );
    let error = match &reply.get_array("writeErrors").expect("errors")[0] {
        Bson::Document(error) => error.clone(),
        other => panic!("{other:?}"),
    };
    assert_eq!(
        error.get_str("errmsg").ok(),
        Some("Performing an update on the path '_id' would modify the immutable field '_id'")
    );
}

#[test]
fn ordered_update_stops_and_unordered_continues() {
    for (ordered, expected_v, errors) in [(true, 1, vec![(0, 66)]), (false, 5, vec![(0, 66)])] {
        let engine = seeded();
        let cmd = doc! {
            "update": "c",
            "ordered": ordered,
            "updates": [
                { "q": { "_id": 1 }, "u": { "$set": { "_id": 9 } } },
                { "q": { "_id": 1 }, "u": { "$set": { "v": 5 } } },
            ],
        };
        let reply = ok(
            &engine,
            "db",
            RawDocumentBuf::try_from(&cmd).expect("encodes"),
        );
        assert_eq!(write_errors(&reply), errors);
        let v = stored(&engine, 1).and_then(|d| d.get_i32("v").ok());
        assert_eq!(v, Some(expected_v), "ordered: {ordered}");
    }
}

#[test]
fn multi_update_failing_midway_keeps_earlier_documents() {
    let engine = engine();
    ok(
        &engine,
        "db",
        rawdoc! {
            "insert": "c", "documents": [{ "_id": 1, "v": 1 }, { "_id": 2, "v": "s" }, { "_id": 3, "v": 3 }],
        },
    );
    let reply = update(
        &engine,
        vec![doc! { "q": {}, "u": { "$inc": { "v": 1 } }, "multi": true }],
    );
    assert_eq!(write_errors(&reply), vec![(0, 14)]);
    let values: Vec<Bson> = contents(&engine, "db", "c")
        .iter()
        .map(|d| d.get("v").cloned().unwrap_or(Bson::Null))
        .collect();
    assert_eq!(
        values,
        vec![Bson::Int32(2), Bson::String("s".into()), Bson::Int32(3)]
    );
}
