//! insert and delete through `Engine::run_command`, the write concern, and the argument
//! errors every write command shares; results read back through the store.

use crate::support::{NOW_MILLIS, collections, contents, engine, fails, ok, run, write_errors};
use bson::spec::ElementType;
use bson::{Bson, Document, RawDocumentBuf, Regex, Timestamp, doc, rawdoc};

fn ids(docs: &[Document]) -> Vec<Bson> {
    docs.iter()
        .map(|d| d.get("_id").cloned().unwrap_or(Bson::Null))
        .collect()
}

#[test]
fn insert_generates_an_object_id_first() {
    let engine = engine();
    let reply = ok(
        &engine,
        "db",
        rawdoc! { "insert": "c", "documents": [{ "a": 1 }] },
    );
    assert_eq!(reply, doc! { "n": 1, "ok": 1.0 });
    let stored = contents(&engine, "db", "c");
    assert_eq!(stored.len(), 1);
    let (first, value) = stored[0].iter().next().expect("a field");
    assert_eq!(first, "_id");
    let oid = value.as_object_id().expect("an ObjectId");
    assert_eq!(oid.timestamp().timestamp_millis(), NOW_MILLIS);
    assert_eq!(stored[0].get_i32("a").ok(), Some(1));
}

#[test]
fn insert_moves_a_given_id_first() {
    let engine = engine();
    ok(
        &engine,
        "db",
        rawdoc! { "insert": "c", "documents": [{ "a": 1, "_id": 5 }] },
    );
    assert_eq!(
        contents(&engine, "db", "c"),
        vec![doc! { "_id": 5, "a": 1 }]
    );
}

#[test]
fn insert_replaces_top_level_zero_timestamps() {
    let engine = engine();
    let zero = Timestamp {
        time: 0,
        increment: 0,
    };
    ok(
        &engine,
        "db",
        rawdoc! {
            "insert": "c",
            "documents": [{ "_id": 1, "t": zero, "inner": { "t": zero } }],
        },
    );
    let stored = &contents(&engine, "db", "c")[0];
    let t = stored.get_timestamp("t").expect("timestamp");
    assert_eq!(u64::from(t.time) * 1000, NOW_MILLIS as u64);
    assert!(t.increment > 0);
    let inner = stored.get_document("inner").expect("inner");
    assert_eq!(inner.get_timestamp("t").ok(), Some(zero));
}

#[test]
fn insert_accepts_dollar_and_dotted_field_names() {
    let engine = engine();
    ok(
        &engine,
        "db",
        rawdoc! {
            "insert": "c", "documents": [{ "_id": 1, "$price": 2, "a.b": 3 }],
        },
    );
    assert_eq!(
        contents(&engine, "db", "c"),
        vec![doc! { "_id": 1, "$price": 2, "a.b": 3 }]
    );
}

#[test]
fn duplicate_id_reports_key_pattern_and_value() {
    let engine = engine();
    let reply = ok(
        &engine,
        "db",
        rawdoc! {
            "insert": "c", "documents": [{ "_id": 1 }, { "_id": 1.0 }],
        },
    );
    assert_eq!(reply.get_i32("n").ok(), Some(1));
    let errors = reply.get_array("writeErrors").expect("writeErrors");
    let expected = doc! {
        "index": 1,
        "code": 11000,
        "keyPattern": { "_id": 1 },
        "keyValue": { "_id": 1.0 },
        "errmsg": "E11000 duplicate key error collection: db.c index: _id_ dup key: { _id: 1.0 }",
    };
    assert_eq!(errors, &vec![Bson::Document(expected)]);
}

#[test]
fn duplicate_object_id_prints_as_mongod() {
    let engine = engine();
    let id = bson::oid::ObjectId::parse_str("65a1b2c3d4e5f60718293a4b").expect("oid");
    let reply = ok(
        &engine,
        "db",
        rawdoc! { "insert": "c", "documents": [{ "_id": id }, { "_id": id }] },
    );
    let errors = reply.get_array("writeErrors").expect("writeErrors");
    let message = errors[0]
        .as_document()
        .and_then(|e| e.get_str("errmsg").ok());
    assert_eq!(
        message,
        Some(
            "E11000 duplicate key error collection: db.c index: _id_ dup key: \
             { _id: ObjectId('65a1b2c3d4e5f60718293a4b') }"
        )
    );
}

#[test]
fn ordered_insert_stops_at_the_first_error() {
    let engine = engine();
    let reply = ok(
        &engine,
        "db",
        rawdoc! {
            "insert": "c", "documents": [{ "_id": 1 }, { "_id": 1 }, { "_id": 2 }],
        },
    );
    assert_eq!(reply.get_i32("n").ok(), Some(1));
    assert_eq!(write_errors(&reply), vec![(1, 11000)]);
    assert_eq!(ids(&contents(&engine, "db", "c")), vec![Bson::Int32(1)]);
}

#[test]
fn unordered_insert_continues_past_errors() {
    let engine = engine();
    let reply = ok(
        &engine,
        "db",
        rawdoc! {
            "insert": "c",
            "ordered": false,
            "documents": [{ "_id": 1 }, { "_id": 1 }, { "_id": [1] }, { "_id": 2 }],
        },
    );
    assert_eq!(reply.get_i32("n").ok(), Some(2));
    assert_eq!(write_errors(&reply), vec![(1, 11000), (2, 53)]);
    assert_eq!(
        ids(&contents(&engine, "db", "c")),
        vec![Bson::Int32(1), Bson::Int32(2)]
    );
}

fn nested(levels: usize, innermost: Document) -> Document {
    let mut doc = innermost;
    for _ in 0..levels {
        doc = doc! { "a": doc };
    }
    doc
}

fn raw(doc: &Document) -> RawDocumentBuf {
    RawDocumentBuf::try_from(doc).expect("encodes")
}

/// Documents mongod refuses on insert, each with the code of its write error.
#[test]
fn insert_refuses_documents_as_mongod() {
    let mut two_ids = RawDocumentBuf::new();
    two_ids.append(bson::raw::cstr!("_id"), 1);
    two_ids.append(bson::raw::cstr!("_id"), 2);
    let cases: Vec<(RawDocumentBuf, i32, &str)> = vec![
        (
            rawdoc! { "_id": [1, 2] },
            53,
            "The '_id' value cannot be of type array",
        ),
        (
            rawdoc! { "_id": Regex { pattern: bson::raw::cstr!("a").into(), options: bson::raw::cstr!("").into() } },
            53,
            "The '_id' value cannot be of type regex",
        ),
        (
            rawdoc! { "_id": bson::RawBson::Undefined },
            53,
            "The '_id' value cannot be of type undefined",
        ),
        (
            rawdoc! { "_id": { "$gt": 1 } },
            52,
            "_id fields may not contain '$'-prefixed fields: $gt is not valid for storage.",
        ),
        (two_ids, 2, "can't have multiple _id fields in one document"),
        (
            raw(&nested(100, doc! { "x": 1 })),
            15,
            "cannot insert document because it exceeds 100 levels of nesting",
        ),
    ];
    for (document, code, message) in cases {
        let engine = engine();
        let reply = ok(
            &engine,
            "db",
            rawdoc! { "insert": "c", "documents": [document.clone()] },
        );
        assert_eq!(reply.get_i32("n").ok(), Some(0), "{document:?}");
        let error = match &reply.get_array("writeErrors").expect("writeErrors")[0] {
            Bson::Document(error) => error.clone(),
            other => panic!("{other:?}"),
        };
        assert_eq!(error.get_i32("code").ok(), Some(code), "{document:?}");
        assert_eq!(error.get_str("errmsg").ok(), Some(message), "{document:?}");
        assert!(
            collections(&engine, "db").is_empty(),
            "nothing created for {document:?}"
        );
    }
}

#[test]
fn nesting_limit_counts_like_mongod() {
    let engine = engine();
    let deepest_allowed = raw(&nested(99, doc! { "x": 1 }));
    let empty_at_the_limit = raw(&nested(100, doc! {}));
    let reply = ok(
        &engine,
        "db",
        rawdoc! {
            "insert": "c", "documents": [deepest_allowed, empty_at_the_limit],
        },
    );
    assert_eq!(reply.get_i32("n").ok(), Some(2), "{reply:?}");
}

#[test]
fn oversized_document_is_refused() {
    let engine = engine();
    let big = rawdoc! { "_id": 1, "s": "x".repeat(16 * 1024 * 1024) };
    let reply = ok(&engine, "db", rawdoc! { "insert": "c", "documents": [big] });
    assert_eq!(write_errors(&reply), vec![(0, 2)]);
    let near = rawdoc! { "_id": 2, "s": "x".repeat(16 * 1024 * 1024 - 100) };
    let reply = ok(
        &engine,
        "db",
        rawdoc! { "insert": "c", "documents": [near] },
    );
    assert_eq!(reply.get_i32("n").ok(), Some(1));
}

/// Command-level argument errors of the write commands: `(command, code)`.
#[test]
fn write_command_argument_errors() {
    let too_many: Vec<Bson> = (0..100_001)
        .map(|i| Bson::Document(doc! { "_id": i }))
        .collect();
    let cases: Vec<(RawDocumentBuf, i32)> = vec![
        (rawdoc! { "insert": "c" }, 40414),
        (rawdoc! { "insert": "c", "documents": [] }, 16),
        (raw(&doc! { "insert": "c", "documents": too_many }), 16),
        (rawdoc! { "insert": "c", "documents": [1] }, 14),
        (rawdoc! { "insert": "c", "documents": {} }, 14),
        (
            rawdoc! { "insert": "c", "documents": [{}], "bogus": 1 },
            40415,
        ),
        (
            rawdoc! { "insert": "c", "documents": [{}], "ordered": "yes" },
            14,
        ),
        (rawdoc! { "insert": 1, "documents": [{}] }, 73),
        (rawdoc! { "insert": "", "documents": [{}] }, 73),
        (rawdoc! { "insert": "system.users", "documents": [{}] }, 73),
        (rawdoc! { "insert": "a$b", "documents": [{}] }, 73),
        (rawdoc! { "delete": "c", "deletes": [{ "q": {} }] }, 40414),
        (
            rawdoc! { "delete": "c", "deletes": [{ "limit": 1 }] },
            40414,
        ),
        (
            rawdoc! { "delete": "c", "deletes": [{ "q": {}, "limit": 2 }] },
            9,
        ),
        (
            rawdoc! { "delete": "c", "deletes": [{ "q": {}, "limit": 1, "x": 1 }] },
            40415,
        ),
        (
            rawdoc! { "delete": "c", "deletes": [{ "q": 1, "limit": 1 }] },
            14,
        ),
        (
            rawdoc! { "delete": "c", "deletes": [{ "q": {}, "limit": 0 }], "let": { "A": 1 } },
            9,
        ),
        (rawdoc! { "update": "c", "updates": [{ "u": {} }] }, 40414),
        (rawdoc! { "update": "c", "updates": [{ "q": {} }] }, 40414),
        (
            rawdoc! { "update": "c", "updates": [{ "q": {}, "u": 1 }] },
            9,
        ),
        (
            rawdoc! { "update": "c", "updates": [{ "q": {}, "u": {}, "multi": "x" }] },
            14,
        ),
        (
            rawdoc! { "update": "c", "updates": [{ "q": {}, "u": {}, "y": 1 }] },
            40415,
        ),
        (
            rawdoc! { "update": "c", "updates": [{ "q": {}, "u": {}, "arrayFilters": [1] }] },
            14,
        ),
        (
            rawdoc! { "update": "c", "updates": [{ "q": {}, "u": {} }], "let": { "a": "$b" } },
            4_890_500,
        ),
    ];
    for (cmd, code) in cases {
        let engine = engine();
        fails(&engine, "db", cmd, code);
        assert!(collections(&engine, "db").is_empty());
    }
}

#[test]
fn write_concern_standalone_rules() {
    let engine = engine();
    let insert = |id: i32, wc: Document| {
        rawdoc! { "insert": "c", "documents": [{ "_id": id }], "writeConcern": raw(&wc) }
    };
    for (id, wc) in [
        (1, doc! { "w": 1 }),
        (2, doc! { "w": "majority", "wtimeout": 1000 }),
        (3, doc! { "j": true }),
        (4, doc! { "w": 1, "j": false }),
        (5, doc! { "w": 0 }),
    ] {
        ok(&engine, "db", insert(id, wc));
    }
    let reply = fails(&engine, "db", insert(6, doc! { "w": 2 }), 2);
    assert_eq!(
        reply.get_str("errmsg").ok(),
        Some("cannot use 'w' > 1 when a host is not replicated")
    );
    fails(&engine, "db", insert(7, doc! { "w": "dc1" }), 2);
    fails(&engine, "db", insert(8, doc! { "w": -1 }), 9);
    fails(
        &engine,
        "db",
        rawdoc! { "insert": "c", "documents": [{}], "writeConcern": 1 },
        14,
    );
    let stored: Vec<Bson> = ids(&contents(&engine, "db", "c"));
    assert_eq!(stored, (1..=5).map(Bson::Int32).collect::<Vec<_>>());
}

#[test]
fn unacknowledged_write_is_visible_to_the_next_command() {
    let engine = engine();
    ok(
        &engine,
        "db",
        rawdoc! {
            "insert": "c", "documents": [{ "_id": 1 }], "writeConcern": { "w": 0 },
        },
    );
    let reply = ok(
        &engine,
        "db",
        rawdoc! {
            "update": "c", "updates": [{ "q": { "_id": 1 }, "u": { "$set": { "a": 1 } } }],
        },
    );
    assert_eq!(reply.get_i32("nModified").ok(), Some(1));
}

fn seed(engine: &engine::Engine) {
    ok(
        engine,
        "db",
        rawdoc! {
            "insert": "c",
            "documents": [
                { "_id": 1, "v": 1 }, { "_id": 2, "v": 2 }, { "_id": 3, "v": 2 }, { "_id": 4, "v": 3 },
            ],
        },
    );
}

#[test]
fn delete_limit_one_removes_the_first_match_only() {
    let engine = engine();
    seed(&engine);
    let reply = ok(
        &engine,
        "db",
        rawdoc! {
            "delete": "c", "deletes": [{ "q": { "v": 2 }, "limit": 1 }],
        },
    );
    assert_eq!(reply, doc! { "n": 1, "ok": 1.0 });
    let left = ids(&contents(&engine, "db", "c"));
    assert_eq!(left, vec![Bson::Int32(1), Bson::Int32(3), Bson::Int32(4)]);
}

#[test]
fn delete_limit_zero_removes_every_match() {
    let engine = engine();
    seed(&engine);
    let reply = ok(
        &engine,
        "db",
        rawdoc! {
            "delete": "c",
            "deletes": [{ "q": { "v": { "$gte": 2 } }, "limit": 0 }, { "q": { "_id": 1 }, "limit": 1 }],
        },
    );
    assert_eq!(reply.get_i32("n").ok(), Some(4));
    assert!(contents(&engine, "db", "c").is_empty());
    let missing = ok(
        &engine,
        "db",
        rawdoc! {
            "delete": "nothing", "deletes": [{ "q": {}, "limit": 0 }],
        },
    );
    assert_eq!(missing.get_i32("n").ok(), Some(0));
}

#[test]
fn delete_statement_errors_follow_ordered() {
    for (ordered, deleted, errors) in [(true, 0, vec![(0, 2)]), (false, 1, vec![(0, 2), (2, 2)])] {
        let engine = engine();
        seed(&engine);
        let reply = ok(
            &engine,
            "db",
            rawdoc! {
                "delete": "c",
                "ordered": ordered,
                "deletes": [
                    { "q": { "$bogus": 1 }, "limit": 0 },
                    { "q": { "_id": 1 }, "limit": 1 },
                    { "q": {}, "limit": 0, "hint": { "v": 1 } },
                ],
            },
        );
        assert_eq!(reply.get_i32("n").ok(), Some(deleted), "{reply:?}");
        assert_eq!(write_errors(&reply), errors);
    }
}

#[test]
fn delete_accepts_id_hint_and_simple_collation() {
    let engine = engine();
    seed(&engine);
    let reply = ok(
        &engine,
        "db",
        rawdoc! {
            "delete": "c",
            "deletes": [
                { "q": { "_id": 1 }, "limit": 1, "hint": { "_id": 1 } },
                { "q": { "_id": 2 }, "limit": 1, "hint": "_id_", "collation": { "locale": "simple" } },
                { "q": { "_id": 3 }, "limit": 1, "collation": { "locale": "fr" } },
            ],
        },
    );
    assert_eq!(reply.get_i32("n").ok(), Some(2));
    assert_eq!(write_errors(&reply), vec![(2, 238)]);
}

#[test]
fn raw_bytes_of_an_insert_are_stored_unchanged() {
    let engine = engine();
    let document = rawdoc! { "_id": 1, "n": 1.5, "s": "x", "d": { "e": [1, 2] } };
    ok(
        &engine,
        "db",
        rawdoc! { "insert": "c", "documents": [document.clone()] },
    );
    let store = engine.store();
    let reader = store.read().expect("read");
    let meta = reader
        .collection(&engine::store::Namespace::new("db", "c"))
        .expect("catalog")
        .expect("collection");
    let (_, bytes) = reader
        .scan(&meta, None)
        .expect("scan")
        .next()
        .expect("one")
        .expect("ok");
    assert_eq!(&*bytes, document.as_bytes());
    assert_eq!(
        bson::RawDocument::from_bytes(&bytes)
            .expect("bson")
            .get("n")
            .ok()
            .flatten()
            .map(|v| v.element_type()),
        Some(ElementType::Double)
    );
}

#[test]
fn insert_into_many_collections_and_databases() {
    let engine = engine();
    for (db, coll) in [("a", "x"), ("a", "y"), ("b", "x")] {
        ok(
            &engine,
            db,
            rawdoc! { "insert": coll, "documents": [{ "_id": 1 }] },
        );
    }
    assert_eq!(
        collections(&engine, "a"),
        vec!["x".to_owned(), "y".to_owned()]
    );
    assert_eq!(collections(&engine, "b"), vec!["x".to_owned()]);
    let reply = run(
        &engine,
        "b",
        rawdoc! { "insert": "x", "documents": [{ "_id": 1 }] },
    );
    assert_eq!(write_errors(&reply), vec![(0, 11000)]);
}
