//! findAndModify through `Engine::run_command`: every option, the reply shape, and its
//! argument errors.

use crate::support::{contents, engine, fails, ok};
use bson::{Bson, Document, RawDocumentBuf, doc, rawdoc};
use engine::Engine;

fn seeded() -> Engine {
    let engine = engine();
    ok(
        &engine,
        "db",
        rawdoc! {
            "insert": "c",
            "documents": [
                { "_id": 1, "v": 3, "tag": "a" },
                { "_id": 2, "v": 1, "tag": "a" },
                { "_id": 3, "v": 2, "tag": "b" },
            ],
        },
    );
    engine
}

fn fam(engine: &Engine, args: Document) -> Document {
    let mut cmd = doc! { "findAndModify": "c" };
    cmd.extend(args);
    ok(
        engine,
        "db",
        RawDocumentBuf::try_from(&cmd).expect("encodes"),
    )
}

/// `(arguments, expected reply without ok)` on the seeded collection.
#[test]
fn find_and_modify_cases() {
    let cases: Vec<(Document, Document)> = vec![
        (
            doc! { "query": { "tag": "a" }, "update": { "$inc": { "v": 1 } } },
            doc! {
                "lastErrorObject": { "n": 1, "updatedExisting": true },
                "value": { "_id": 1, "v": 3, "tag": "a" },
            },
        ),
        (
            doc! { "query": { "tag": "a" }, "update": { "$inc": { "v": 1 } }, "new": true },
            doc! {
                "lastErrorObject": { "n": 1, "updatedExisting": true },
                "value": { "_id": 1, "v": 4, "tag": "a" },
            },
        ),
        (
            doc! {
                "query": { "tag": "a" }, "sort": { "v": 1 }, "update": { "$set": { "x": 1 } },
                "new": true, "fields": { "x": 1, "_id": 0 },
            },
            doc! { "lastErrorObject": { "n": 1, "updatedExisting": true }, "value": { "x": 1 } },
        ),
        (
            doc! { "sort": { "v": -1 }, "remove": true, "fields": { "v": 1 } },
            doc! { "lastErrorObject": { "n": 1 }, "value": { "_id": 1, "v": 3 } },
        ),
        (
            doc! { "query": { "_id": 9 }, "remove": true },
            doc! { "lastErrorObject": { "n": 0 }, "value": Bson::Null },
        ),
        (
            doc! { "query": { "_id": 9 }, "update": { "$set": { "v": 1 } } },
            doc! { "lastErrorObject": { "n": 0, "updatedExisting": false }, "value": Bson::Null },
        ),
        (
            doc! { "query": { "_id": 9 }, "update": { "$set": { "v": 1 } }, "upsert": true },
            doc! {
                "lastErrorObject": { "n": 1, "updatedExisting": false, "upserted": 9 },
                "value": Bson::Null,
            },
        ),
        (
            doc! {
                "query": { "_id": 9 }, "update": { "w": 1 }, "upsert": true, "new": true,
            },
            doc! {
                "lastErrorObject": { "n": 1, "updatedExisting": false, "upserted": 9 },
                "value": { "_id": 9, "w": 1 },
            },
        ),
        (
            doc! { "query": { "_id": 3 }, "update": { "tag": "c" }, "new": true },
            doc! {
                "lastErrorObject": { "n": 1, "updatedExisting": true },
                "value": { "_id": 3, "tag": "c" },
            },
        ),
        (
            doc! {
                "query": { "_id": 2 }, "update": [{ "$set": { "v": { "$multiply": ["$v", 10] } } }],
                "new": true, "hint": { "_id": 1 }, "collation": { "locale": "simple" },
            },
            doc! {
                "lastErrorObject": { "n": 1, "updatedExisting": true },
                "value": { "_id": 2, "v": 10, "tag": "a" },
            },
        ),
        (
            doc! { "query": { "_id": 2 }, "update": { "$set": { "v": 1 } }, "new": true },
            doc! {
                "lastErrorObject": { "n": 1, "updatedExisting": true },
                "value": { "_id": 2, "v": 1, "tag": "a" },
            },
        ),
    ];
    for (args, expected) in cases {
        let engine = seeded();
        let mut reply = fam(&engine, args.clone());
        reply.remove("ok");
        assert_eq!(reply, expected, "{args:?}");
    }
}

#[test]
fn find_and_modify_changes_are_stored() {
    let engine = seeded();
    fam(
        &engine,
        doc! { "query": { "_id": 1 }, "update": { "$set": { "v": 0 } } },
    );
    fam(&engine, doc! { "query": { "_id": 2 }, "remove": true });
    fam(
        &engine,
        doc! { "query": { "_id": 7 }, "update": { "$set": { "v": 7 } }, "upsert": true },
    );
    let docs = contents(&engine, "db", "c");
    assert_eq!(
        docs,
        vec![
            doc! { "_id": 1, "v": 0, "tag": "a" },
            doc! { "_id": 3, "v": 2, "tag": "b" },
            doc! { "_id": 7, "v": 7 },
        ]
    );
}

#[test]
fn lowercase_alias_answers_too() {
    let engine = seeded();
    let reply = ok(
        &engine,
        "db",
        rawdoc! {
            "findandmodify": "c", "query": { "_id": 1 }, "remove": true,
        },
    );
    assert_eq!(
        reply.get_document("lastErrorObject").ok(),
        Some(&doc! { "n": 1 })
    );
}

#[test]
fn upsert_duplicate_is_a_top_level_error_with_key_fields() {
    let engine = seeded();
    let reply = fails(
        &engine,
        "db",
        rawdoc! {
            "findAndModify": "c",
            "query": { "_id": 1, "v": 100 },
            "update": { "$set": { "w": 1 } },
            "upsert": true,
        },
        11000,
    );
    assert_eq!(reply.get_str("codeName").ok(), Some("DuplicateKey"));
    assert_eq!(
        reply.get_document("keyPattern").ok(),
        Some(&doc! { "_id": 1 })
    );
    assert_eq!(
        reply.get_document("keyValue").ok(),
        Some(&doc! { "_id": 1 })
    );
    assert_eq!(contents(&engine, "db", "c").len(), 3);
}

/// Refused argument combinations: `(arguments, code, message)`.
#[test]
fn find_and_modify_argument_errors() {
    let cases: Vec<(Document, i32, Option<&str>)> = vec![
        (
            doc! {},
            9,
            Some("Either an update or remove=true must be specified"),
        ),
        (
            doc! { "remove": true, "update": { "$set": { "v": 1 } } },
            9,
            Some("Cannot specify both an update and remove=true"),
        ),
        (doc! { "remove": true, "upsert": true }, 9, None),
        (
            doc! { "remove": true, "new": true },
            9,
            Some(
                "Cannot specify both new=true and remove=true; 'remove' always returns the \
                 deleted document",
            ),
        ),
        (doc! { "remove": true, "arrayFilters": [] }, 9, None),
        (
            doc! { "update": [{ "$set": { "v": 1 } }], "arrayFilters": [{ "e": 1 }] },
            9,
            None,
        ),
        (doc! { "update": 5 }, 9, None),
        (doc! { "query": 1, "remove": true }, 14, None),
        (
            doc! { "remove": true, "collation": { "locale": "de" } },
            238,
            None,
        ),
        (doc! { "remove": true, "let": { "X": 1 } }, 9, None),
        (doc! { "remove": true, "hint": { "tag": 1 } }, 2, None),
        (doc! { "remove": true, "bogus": 1 }, 40415, None),
        (
            doc! { "update": { "$set": { "_id": 5 } }, "query": { "_id": 1 } },
            66,
            None,
        ),
        (
            doc! { "update": { "v": 1 }, "query": { "$bogus": 1 } },
            2,
            None,
        ),
        (doc! { "remove": true, "sort": { "v": "up" } }, 15975, None),
        (doc! { "remove": true, "writeConcern": { "w": 3 } }, 2, None),
    ];
    for (args, code, message) in cases {
        let engine = seeded();
        let mut cmd = doc! { "findAndModify": "c" };
        cmd.extend(args.clone());
        let reply = fails(
            &engine,
            "db",
            RawDocumentBuf::try_from(&cmd).expect("encodes"),
            code,
        );
        if let Some(message) = message {
            assert_eq!(reply.get_str("errmsg").ok(), Some(message), "{args:?}");
        }
        assert_eq!(contents(&engine, "db", "c").len(), 3, "{args:?}");
    }
}
