//! Secondary indexes through `Engine::run_command` (issue 26): createIndexes, listIndexes,
//! dropIndexes and collMod replies and errors, unique enforcement on every write path,
//! builds over existing data, sizes, validate, and indexes across a restart.

use crate::support::{contents, engine, fails, ok, options, run, temp_db, write_errors};
use bson::{Bson, Document, RawDocumentBuf, doc, rawdoc};
use engine::Engine;
use engine::store::Namespace;

fn raw(doc: Document) -> RawDocumentBuf {
    RawDocumentBuf::try_from(&doc).expect("encodes")
}

fn create_index(engine: &Engine, coll: &str, spec: Document) -> Document {
    ok(
        engine,
        "db",
        raw(doc! { "createIndexes": coll, "indexes": [spec] }),
    )
}

fn insert(engine: &Engine, coll: &str, docs: Vec<Document>) -> Document {
    let docs: Vec<Bson> = docs.into_iter().map(Bson::Document).collect();
    run(
        engine,
        "db",
        raw(doc! { "insert": coll, "documents": docs }),
    )
}

fn list_indexes(engine: &Engine, coll: &str) -> Vec<Document> {
    let reply = ok(engine, "db", rawdoc! { "listIndexes": coll });
    let batch = reply
        .get_document("cursor")
        .and_then(|c| c.get_array("firstBatch"))
        .expect("firstBatch");
    batch
        .iter()
        .map(|d| d.as_document().expect("document").clone())
        .collect()
}

fn names(engine: &Engine, coll: &str) -> Vec<String> {
    list_indexes(engine, coll)
        .iter()
        .map(|d| d.get_str("name").expect("name").to_owned())
        .collect()
}

/// validate's verdict, asserting it found every index consistent.
fn assert_valid(engine: &Engine, coll: &str) -> Document {
    let reply = ok(engine, "db", raw(doc! { "validate": coll }));
    assert_eq!(reply.get_bool("valid").ok(), Some(true), "{reply:?}");
    reply
}

#[test]
fn create_indexes_replies_as_mongod() {
    let engine = engine();
    let reply = create_index(&engine, "c", doc! { "key": { "a": 1 }, "name": "a_1" });
    assert_eq!(
        reply,
        doc! {
            "numIndexesBefore": 1, "numIndexesAfter": 2,
            "createdCollectionAutomatically": true, "ok": 1.0,
        }
    );
    // The same index again is a no-op, with mongod's note.
    let reply = create_index(&engine, "c", doc! { "key": { "a": 1 }, "name": "a_1" });
    assert_eq!(
        reply,
        doc! {
            "numIndexesBefore": 2, "numIndexesAfter": 2,
            "note": "all indexes already exist", "ok": 1.0,
        }
    );
    // Several at once, one of them existing.
    let reply = ok(
        &engine,
        "db",
        rawdoc! { "createIndexes": "c", "indexes": [
            { "key": { "a": 1 }, "name": "a_1" },
            { "key": { "b": -1, "c": 1 }, "name": "b_-1_c_1", "unique": true },
            { "key": { "d": "hashed" }, "name": "d_hashed" },
        ] },
    );
    assert_eq!(reply.get_i32("numIndexesBefore").ok(), Some(2));
    assert_eq!(reply.get_i32("numIndexesAfter").ok(), Some(4));
    assert_eq!(
        reply.get_bool("createdCollectionAutomatically").ok(),
        Some(false)
    );
    assert_eq!(reply.get_str("note").ok(), Some("index already exists"));
    assert_eq!(names(&engine, "c"), ["_id_", "a_1", "b_-1_c_1", "d_hashed"]);
    let listed = list_indexes(&engine, "c");
    assert_eq!(
        listed[0],
        doc! { "v": 2, "key": { "_id": 1 }, "name": "_id_" }
    );
    assert_eq!(listed[1], doc! { "v": 2, "key": { "a": 1 }, "name": "a_1" });
    assert_eq!(
        listed[2],
        doc! { "v": 2, "key": { "b": -1, "c": 1 }, "name": "b_-1_c_1", "unique": true }
    );
    assert_valid(&engine, "c");
}

#[test]
fn create_indexes_conflicts_and_bad_specs_are_refused() {
    let engine = engine();
    create_index(&engine, "c", doc! { "key": { "a": 1 }, "name": "a_1" });
    // Same name, other key: 86; same key and name, other options: 85; same key under
    // another name: 85.
    let cmd = |spec: Document| raw(doc! { "createIndexes": "c", "indexes": [spec] });
    fails(
        &engine,
        "db",
        cmd(doc! { "key": { "b": 1 }, "name": "a_1" }),
        86,
    );
    fails(
        &engine,
        "db",
        cmd(doc! { "key": { "a": 1 }, "name": "a_1", "expireAfterSeconds": 10 }),
        85,
    );
    fails(
        &engine,
        "db",
        cmd(doc! { "key": { "a": 1 }, "name": "other" }),
        85,
    );
    fails(
        &engine,
        "db",
        cmd(doc! { "key": { "a": "text" }, "name": "t" }),
        238,
    );
    fails(&engine, "db", cmd(doc! { "key": {}, "name": "e" }), 67);
    fails(&engine, "db", cmd(doc! { "key": { "a": 1 } }), 9);
    // A batch with a bad spec creates none of its indexes.
    fails(
        &engine,
        "db",
        rawdoc! { "createIndexes": "c", "indexes": [
            { "key": { "x": 1 }, "name": "x_1" },
            { "key": { "y": 1 }, "name": "y_1", "bogus": 1 },
        ] },
        197,
    );
    assert_eq!(names(&engine, "c"), ["_id_", "a_1"]);
}

#[test]
fn drop_indexes_by_name_key_list_and_star() {
    let engine = engine();
    for (key, name) in [("a", "a_1"), ("b", "b_1"), ("c", "c_1"), ("d", "d_1")] {
        let mut key_doc = Document::new();
        key_doc.insert(key, 1);
        create_index(&engine, "c", doc! { "key": key_doc, "name": name });
    }
    insert(
        &engine,
        "c",
        vec![doc! { "_id": 1, "a": 1, "b": 2, "c": 3, "d": 4 }],
    );
    let reply = ok(
        &engine,
        "db",
        rawdoc! { "dropIndexes": "c", "index": "a_1" },
    );
    assert_eq!(reply, doc! { "nIndexesWas": 5, "ok": 1.0 });
    ok(
        &engine,
        "db",
        rawdoc! { "dropIndexes": "c", "index": { "b": 1.0 } },
    );
    assert_eq!(names(&engine, "c"), ["_id_", "c_1", "d_1"]);
    // A list is all or nothing.
    fails(
        &engine,
        "db",
        rawdoc! { "dropIndexes": "c", "index": ["c_1", "nope"] },
        27,
    );
    assert_eq!(names(&engine, "c"), ["_id_", "c_1", "d_1"]);
    let reply = fails(
        &engine,
        "db",
        rawdoc! { "dropIndexes": "c", "index": "_id_" },
        72,
    );
    assert_eq!(reply.get_str("errmsg").ok(), Some("cannot drop _id index"));
    assert_eq!(reply.get_str("codeName").ok(), Some("InvalidOptions"));
    fails(
        &engine,
        "db",
        rawdoc! { "dropIndexes": "c", "index": { "_id": 1 } },
        72,
    );
    let reply = fails(
        &engine,
        "db",
        rawdoc! { "dropIndexes": "c", "index": "zz" },
        27,
    );
    assert_eq!(
        reply.get_str("errmsg").ok(),
        Some("index not found with name [zz]")
    );
    assert_eq!(reply.get_str("codeName").ok(), Some("IndexNotFound"));
    let reply = fails(
        &engine,
        "db",
        rawdoc! { "dropIndexes": "c", "index": { "z": 1 } },
        27,
    );
    assert_eq!(
        reply.get_str("errmsg").ok(),
        Some("can't find index with key: { z: 1 }")
    );
    ok(
        &engine,
        "db",
        rawdoc! { "dropIndexes": "c", "index": ["c_1"] },
    );
    let reply = ok(&engine, "db", rawdoc! { "dropIndexes": "c", "index": "*" });
    assert_eq!(
        reply,
        doc! { "nIndexesWas": 2, "msg": "non-_id indexes dropped for collection", "ok": 1.0 }
    );
    assert_eq!(names(&engine, "c"), ["_id_"]);
    fails(
        &engine,
        "db",
        rawdoc! { "dropIndexes": "none", "index": "*" },
        26,
    );
    // Every page of the dropped trees went back to the file: verify checks ownership.
    engine.store().verify().expect("verify");
    assert_valid(&engine, "c");
}

#[test]
fn unique_violations_are_mongods_error_word_for_word() {
    let engine = engine();
    create_index(
        &engine,
        "c",
        doc! { "key": { "a": 1 }, "name": "a_1", "unique": true },
    );
    let reply = insert(
        &engine,
        "c",
        vec![
            doc! { "_id": 1, "a": 1 },
            doc! { "_id": 2, "a": 1 },
            doc! { "_id": 3, "a": 2 },
        ],
    );
    assert_eq!(
        reply.get_i32("n").ok(),
        Some(1),
        "ordered: stops at the error: {reply:?}"
    );
    let errors = reply.get_array("writeErrors").expect("writeErrors");
    let error = errors[0].as_document().expect("doc");
    assert_eq!(
        error,
        &doc! {
            "index": 1, "code": 11000,
            "keyPattern": { "a": 1 }, "keyValue": { "a": 1 },
            "errmsg": "E11000 duplicate key error collection: db.c index: a_1 dup key: { a: 1 }",
        }
    );
    // 1.0 and 1 are one key; the message shows the value as the new document has it.
    let reply = insert(&engine, "c", vec![doc! { "_id": 4, "a": 1.0 }]);
    let error = reply.get_array("writeErrors").expect("errors")[0]
        .as_document()
        .expect("doc")
        .clone();
    assert_eq!(
        error.get_str("errmsg").ok(),
        Some("E11000 duplicate key error collection: db.c index: a_1 dup key: { a: 1.0 }")
    );
    assert_eq!(contents(&engine, "db", "c"), [doc! { "_id": 1, "a": 1 }]);
    assert_valid(&engine, "c");
}

#[test]
fn unique_is_enforced_on_update_upsert_and_find_and_modify() {
    let engine = engine();
    create_index(
        &engine,
        "c",
        doc! { "key": { "a": 1, "b": 1 }, "name": "ab", "unique": true },
    );
    insert(
        &engine,
        "c",
        vec![
            doc! { "_id": 1, "a": 1, "b": "x" },
            doc! { "_id": 2, "a": 2, "b": "x" },
        ],
    );
    let reply = ok(
        &engine,
        "db",
        rawdoc! { "update": "c", "updates": [{ "q": { "_id": 2 }, "u": { "$set": { "a": 1 } } }] },
    );
    assert_eq!(write_errors(&reply), [(0, 11000)]);
    let error = reply.get_array("writeErrors").expect("errors")[0]
        .as_document()
        .expect("doc")
        .clone();
    assert_eq!(
        error.get_document("keyPattern").ok(),
        Some(&doc! { "a": 1, "b": 1 })
    );
    assert_eq!(
        error.get_document("keyValue").ok(),
        Some(&doc! { "a": 1, "b": "x" })
    );
    assert_eq!(
        error.get_str("errmsg").ok(),
        Some("E11000 duplicate key error collection: db.c index: ab dup key: { a: 1, b: \"x\" }")
    );
    // A multi-update stops at the violation; the statement leaves nothing.
    let reply = ok(
        &engine,
        "db",
        rawdoc! { "update": "c", "updates": [{ "q": {}, "u": { "$set": { "a": 5 } }, "multi": true }] },
    );
    assert_eq!(write_errors(&reply), [(0, 11000)]);
    let reply = ok(
        &engine,
        "db",
        rawdoc! { "update": "c", "updates": [{ "q": { "_id": 9 }, "u": { "$set": { "a": 2, "b": "x" } }, "upsert": true }] },
    );
    assert_eq!(write_errors(&reply), [(0, 11000)]);
    let reply = fails(
        &engine,
        "db",
        rawdoc! { "findAndModify": "c", "query": { "_id": 1 }, "update": { "$set": { "a": 2 } } },
        11000,
    );
    assert_eq!(
        reply.get_document("keyValue").ok(),
        Some(&doc! { "a": 2, "b": "x" })
    );
    fails(
        &engine,
        "db",
        rawdoc! { "findAndModify": "c", "query": { "_id": 7 }, "update": { "a": 2, "b": "x" }, "upsert": true },
        11000,
    );
    // Moving a key away frees it.
    ok(
        &engine,
        "db",
        rawdoc! { "update": "c", "updates": [{ "q": { "_id": 1 }, "u": { "$set": { "a": 3 } } }] },
    );
    let reply = ok(
        &engine,
        "db",
        rawdoc! { "update": "c", "updates": [{ "q": { "_id": 2 }, "u": { "$set": { "a": 1 } } }] },
    );
    assert_eq!(reply.get_i32("nModified").ok(), Some(1), "{reply:?}");
    assert_eq!(
        contents(&engine, "db", "c"),
        [
            doc! { "_id": 1, "a": 3, "b": "x" },
            doc! { "_id": 2, "a": 1, "b": "x" }
        ]
    );
    assert_valid(&engine, "c");
}

#[test]
fn unique_treats_missing_as_null_except_sparse_and_partial() {
    let engine = engine();
    create_index(
        &engine,
        "u",
        doc! { "key": { "a": 1 }, "name": "a_1", "unique": true },
    );
    insert(&engine, "u", vec![doc! { "_id": 1 }]);
    let reply = insert(&engine, "u", vec![doc! { "_id": 2, "a": null }]);
    assert_eq!(write_errors(&reply), [(0, 11000)]);
    let error = reply.get_array("writeErrors").expect("errors")[0]
        .as_document()
        .expect("doc")
        .clone();
    assert_eq!(
        error.get_str("errmsg").ok(),
        Some("E11000 duplicate key error collection: db.u index: a_1 dup key: { a: null }")
    );
    // One document's own keys are deduplicated: [1, 1] is legal, but 1 is then taken.
    assert_eq!(
        write_errors(&insert(&engine, "u", vec![doc! { "_id": 3, "a": [1, 1] }])),
        []
    );
    assert_eq!(
        write_errors(&insert(&engine, "u", vec![doc! { "_id": 4, "a": [2, 1] }])),
        [(0, 11000)]
    );
    create_index(
        &engine,
        "s",
        doc! { "key": { "a": 1 }, "name": "a_1", "unique": true, "sparse": true },
    );
    let reply = insert(
        &engine,
        "s",
        vec![
            doc! { "_id": 1 },
            doc! { "_id": 2 },
            doc! { "_id": 3, "a": 1 },
        ],
    );
    assert_eq!(write_errors(&reply), []);
    create_index(
        &engine,
        "p",
        doc! { "key": { "a": 1 }, "name": "a_1", "unique": true,
        "partialFilterExpression": { "b": { "$gt": 0 } } },
    );
    let reply = insert(
        &engine,
        "p",
        vec![
            doc! { "_id": 1, "a": 1 },
            doc! { "_id": 2, "a": 1 },
            doc! { "_id": 3, "a": 1, "b": 1 },
        ],
    );
    assert_eq!(write_errors(&reply), []);
    let reply = insert(&engine, "p", vec![doc! { "_id": 4, "a": 1, "b": 2 }]);
    assert_eq!(write_errors(&reply), [(0, 11000)]);
    for coll in ["u", "s", "p"] {
        assert_valid(&engine, coll);
    }
}

#[test]
fn a_build_over_duplicates_fails_and_leaves_no_index() {
    let engine = engine();
    insert(
        &engine,
        "c",
        vec![
            doc! { "_id": 1, "a": 5 },
            doc! { "_id": 2, "a": 6 },
            doc! { "_id": 3, "a": 5 },
        ],
    );
    let reply = fails(
        &engine,
        "db",
        rawdoc! { "createIndexes": "c", "indexes": [
            { "key": { "b": 1 }, "name": "b_1" },
            { "key": { "a": 1 }, "name": "a_1", "unique": true },
        ] },
        11000,
    );
    // mongod's coordinator puts the build's context before the cause.
    let message = reply.get_str("errmsg").expect("errmsg");
    assert!(message.starts_with("Index build failed: "), "{message}");
    assert!(message.contains(": Collection db.c ( "), "{message}");
    assert!(
        message.ends_with(
            " ) :: caused by :: E11000 duplicate key error collection: db.c index: a_1 dup key: { a: 5 }"
        ),
        "{message}"
    );
    assert_eq!(
        reply.get_document("keyPattern").ok(),
        Some(&doc! { "a": 1 })
    );
    assert_eq!(reply.get_document("keyValue").ok(), Some(&doc! { "a": 5 }));
    assert_eq!(
        names(&engine, "c"),
        ["_id_"],
        "neither index of the batch exists"
    );
    engine
        .store()
        .verify()
        .expect("no page of the failed build is leaked");
    // Parallel arrays refuse a build too, with mongod's 171.
    insert(
        &engine,
        "d",
        vec![doc! { "_id": 1, "a": [1, 2], "b": [3, 4] }],
    );
    fails(
        &engine,
        "db",
        rawdoc! { "createIndexes": "d", "indexes": [{ "key": { "a": 1, "b": 1 }, "name": "ab" }] },
        171,
    );
    // A build over good data indexes every document, multikey included.
    insert(&engine, "c", vec![doc! { "_id": 4, "a": [7, 8] }]);
    create_index(&engine, "c", doc! { "key": { "a": 1 }, "name": "a_1" });
    let reply = assert_valid(&engine, "c");
    assert_eq!(
        reply
            .get_document("keysPerIndex")
            .and_then(|k| k.get_i32("a_1"))
            .ok(),
        Some(5)
    );
}

#[test]
fn writes_refused_by_an_index_leave_nothing() {
    let engine = engine();
    create_index(
        &engine,
        "c",
        doc! { "key": { "a": 1, "b": 1 }, "name": "ab" },
    );
    let reply = insert(&engine, "c", vec![doc! { "_id": 1, "a": [1], "b": [2] }]);
    assert_eq!(write_errors(&reply), [(0, 171)]);
    insert(&engine, "c", vec![doc! { "_id": 2, "a": [1], "b": 2 }]);
    let reply = ok(
        &engine,
        "db",
        rawdoc! { "update": "c", "updates": [{ "q": { "_id": 2 }, "u": { "$set": { "b": [1, 2] } } }] },
    );
    assert_eq!(write_errors(&reply), [(0, 171)]);
    assert_eq!(
        contents(&engine, "db", "c"),
        [doc! { "_id": 2, "a": [1], "b": 2 }]
    );
    assert_valid(&engine, "c");
}

#[test]
fn stats_count_and_size_every_index() {
    let engine = engine();
    create_index(&engine, "c", doc! { "key": { "a": 1 }, "name": "a_1" });
    insert(
        &engine,
        "c",
        (0..50).map(|i| doc! { "_id": i, "a": i }).collect(),
    );
    let stats = ok(&engine, "db", rawdoc! { "collStats": "c" });
    assert_eq!(stats.get_i32("nindexes").ok(), Some(2));
    let sizes = stats.get_document("indexSizes").expect("indexSizes");
    assert_eq!(sizes.keys().collect::<Vec<_>>(), ["_id_", "a_1"]);
    let total: i32 = sizes.values().map(|v| v.as_i32().expect("int")).sum();
    assert_eq!(stats.get_i32("totalIndexSize").ok(), Some(total));
    let db = ok(&engine, "db", rawdoc! { "dbStats": 1 });
    assert_eq!(db.get_i32("indexes").ok(), Some(2));
    let reply = assert_valid(&engine, "c");
    assert_eq!(reply.get_i32("nIndexes").ok(), Some(2));
    assert_eq!(
        reply.get_document("keysPerIndex").ok(),
        Some(&doc! { "_id_": 50, "a_1": 50 })
    );
}

#[test]
fn coll_mod_hides_and_unhides_an_index() {
    let engine = engine();
    create_index(&engine, "c", doc! { "key": { "a": 1 }, "name": "a_1" });
    let reply = ok(
        &engine,
        "db",
        rawdoc! { "collMod": "c", "index": { "name": "a_1", "hidden": true } },
    );
    assert_eq!(
        reply,
        doc! { "hidden_old": false, "hidden_new": true, "ok": 1.0 }
    );
    assert_eq!(
        list_indexes(&engine, "c")[1].get_bool("hidden").ok(),
        Some(true)
    );
    let reply = ok(
        &engine,
        "db",
        rawdoc! { "collMod": "c", "index": { "keyPattern": { "a": 1 }, "hidden": false } },
    );
    assert_eq!(
        reply,
        doc! { "hidden_old": true, "hidden_new": false, "ok": 1.0 }
    );
    assert!(list_indexes(&engine, "c")[1].get("hidden").is_none());
    fails(
        &engine,
        "db",
        rawdoc! { "collMod": "c", "index": { "name": "zz", "hidden": true } },
        27,
    );
    create_index(
        &engine,
        "c",
        doc! { "key": { "t": 1 }, "name": "t_1", "expireAfterSeconds": 60 },
    );
    let reply = ok(
        &engine,
        "db",
        rawdoc! { "collMod": "c", "index": { "name": "t_1", "expireAfterSeconds": 120 } },
    );
    assert_eq!(
        reply,
        doc! { "expireAfterSeconds_old": 60_i64, "expireAfterSeconds_new": 120_i64, "ok": 1.0 }
    );
    assert_eq!(
        list_indexes(&engine, "c")[2]
            .get_i32("expireAfterSeconds")
            .ok(),
        Some(120)
    );
    fails(
        &engine,
        "db",
        rawdoc! { "collMod": "c", "viewOn": "other", "pipeline": [] },
        238,
    );
}

#[test]
fn out_keeps_the_targets_indexes_and_merge_enforces_them() {
    let engine = engine();
    create_index(
        &engine,
        "target",
        doc! { "key": { "k": 1 }, "name": "k_1", "unique": true },
    );
    insert(
        &engine,
        "src",
        vec![doc! { "_id": 1, "k": 1 }, doc! { "_id": 2, "k": 2 }],
    );
    ok(
        &engine,
        "db",
        rawdoc! { "aggregate": "src", "pipeline": [{ "$out": "target" }], "cursor": {} },
    );
    assert_eq!(names(&engine, "target"), ["_id_", "k_1"]);
    assert_valid(&engine, "target");
    insert(
        &engine,
        "dup",
        vec![doc! { "_id": 1, "k": 1 }, doc! { "_id": 2, "k": 1 }],
    );
    fails(
        &engine,
        "db",
        rawdoc! { "aggregate": "dup", "pipeline": [{ "$out": "target" }], "cursor": {} },
        11000,
    );
    assert_eq!(
        contents(&engine, "db", "target").len(),
        2,
        "the old target stays"
    );
    fails(
        &engine,
        "db",
        rawdoc! { "aggregate": "dup", "pipeline": [{ "$project": { "k": 1, "_id": { "$add": ["$_id", 10] } } }, { "$merge": { "into": "target" } }], "cursor": {} },
        11000,
    );
    assert_eq!(contents(&engine, "db", "target").len(), 2);
    assert_valid(&engine, "target");
}

#[test]
fn indexes_follow_rename_and_go_with_drop() {
    let engine = engine();
    create_index(&engine, "a", doc! { "key": { "x": 1 }, "name": "x_1" });
    insert(
        &engine,
        "a",
        (0..300)
            .map(|i| doc! { "_id": i, "x": i, "pad": "p".repeat(64) })
            .collect(),
    );
    ok(
        &engine,
        "admin",
        rawdoc! { "renameCollection": "db.a", "to": "db.b" },
    );
    assert_eq!(names(&engine, "b"), ["_id_", "x_1"]);
    assert_valid(&engine, "b");
    let reply = ok(&engine, "db", rawdoc! { "drop": "b" });
    assert_eq!(reply.get_i32("nIndexesWas").ok(), Some(2));
    engine.store().verify().expect("every index page freed");
    create_index(&engine, "e", doc! { "key": { "x": 1 }, "name": "x_1" });
    insert(
        &engine,
        "e",
        (0..300).map(|i| doc! { "_id": i, "x": i }).collect(),
    );
    ok(&engine, "db", rawdoc! { "dropDatabase": 1 });
    engine.store().verify().expect("every index page freed");
}

#[test]
fn index_scan_yields_record_ids_in_key_order() {
    let engine = engine();
    create_index(&engine, "c", doc! { "key": { "a": -1 }, "name": "a_-1" });
    insert(
        &engine,
        "c",
        vec![
            doc! { "_id": 1, "a": 2 },
            doc! { "_id": 2, "a": [3, 1] },
            doc! { "_id": 3, "a": 2 },
        ],
    );
    let store = engine.store();
    let reader = store.read().expect("read");
    let meta = reader
        .collection(&Namespace::new("db", "c"))
        .expect("catalog")
        .expect("exists");
    let index = meta.index("a_-1").expect("index");
    assert!(index.multikey);
    let all: Vec<u64> = reader
        .index_scan(
            &meta,
            "a_-1",
            std::ops::Bound::Unbounded,
            std::ops::Bound::Unbounded,
        )
        .expect("scan")
        .map(|e| e.expect("entry").1)
        .collect();
    // Descending: 3 (record 2), 2 (records 1, 3), 1 (record 2).
    assert_eq!(all, [2, 1, 3, 2]);
}

#[test]
fn indexes_survive_a_restart_without_close() {
    let path = temp_db("indexes-restart", "data.mfdb");
    {
        let engine = Engine::open(&path, options()).expect("open");
        create_index(
            &engine,
            "c",
            doc! { "key": { "a": 1 }, "name": "a_1", "unique": true },
        );
        insert(
            &engine,
            "c",
            (0..20).map(|i| doc! { "_id": i, "a": i }).collect(),
        );
        create_index(&engine, "c", doc! { "key": { "b": 1 }, "name": "b_1" });
        ok(
            &engine,
            "db",
            rawdoc! { "update": "c", "updates": [{ "q": { "_id": 3 }, "u": { "$set": { "a": 100, "b": [1, 2] } } }] },
        );
        ok(
            &engine,
            "db",
            rawdoc! { "delete": "c", "deletes": [{ "q": { "_id": 4 }, "limit": 1 }] },
        );
        create_index(&engine, "c", doc! { "key": { "z": 1 }, "name": "z_1" });
        ok(
            &engine,
            "db",
            rawdoc! { "dropIndexes": "c", "index": "z_1" },
        );
        // Dropped without close: the log is replayed at the next open.
    }
    let engine = Engine::open(&path, options()).expect("reopen");
    assert_eq!(names(&engine, "c"), ["_id_", "a_1", "b_1"]);
    let reply = assert_valid(&engine, "c");
    assert_eq!(
        reply.get_document("keysPerIndex").ok(),
        Some(&doc! { "_id_": 19, "a_1": 19, "b_1": 20 })
    );
    let reply = insert(&engine, "c", vec![doc! { "_id": 50, "a": 100 }]);
    assert_eq!(write_errors(&reply), [(0, 11000)]);
    engine.store().verify().expect("verify");
}

#[test]
fn coll_mod_prepares_unique_then_converts_as_mongod() {
    let engine = engine();
    create_index(&engine, "c", doc! { "key": { "x": 1 }, "name": "x_1" });
    insert(
        &engine,
        "c",
        vec![
            doc! { "_id": 1, "x": 1 },
            doc! { "_id": 2, "x": 1 },
            doc! { "_id": 3, "x": 2 },
        ],
    );
    let modify = |index: Document| raw(doc! { "collMod": "c", "index": index });
    fails(
        &engine,
        "db",
        modify(doc! { "name": "x_1", "unique": true }),
        72,
    );
    let reply = ok(
        &engine,
        "db",
        modify(doc! { "keyPattern": { "x": 1 }, "prepareUnique": true }),
    );
    assert_eq!(
        reply.get_bool("prepareUnique_old").ok(),
        Some(false),
        "{reply:?}"
    );
    assert_eq!(
        reply.get_bool("prepareUnique_new").ok(),
        Some(true),
        "{reply:?}"
    );
    // New duplicates are refused; the old ones stay.
    let reply = run(
        &engine,
        "db",
        raw(doc! { "insert": "c", "documents": [{ "_id": 4, "x": 2 }] }),
    );
    assert_eq!(write_errors(&reply), vec![(0, 11000)], "{reply:?}");
    let reply = run(
        &engine,
        "db",
        raw(
            doc! { "update": "c", "updates": [{ "q": { "_id": 3 }, "u": { "$set": { "x": 1 } } }] },
        ),
    );
    assert_eq!(write_errors(&reply), vec![(0, 11000)], "{reply:?}");
    let refused = fails(
        &engine,
        "db",
        modify(doc! { "name": "x_1", "unique": true }),
        359,
    );
    assert_eq!(
        refused.get_str("codeName").ok(),
        Some("CannotConvertIndexToUnique")
    );
    assert_eq!(
        refused.get_array("violations").ok(),
        Some(&vec![Bson::Document(doc! { "ids": [1, 2] })]),
        "{refused:?}"
    );
    ok(
        &engine,
        "db",
        raw(doc! { "delete": "c", "deletes": [{ "q": { "_id": 2 }, "limit": 1 }] }),
    );
    let reply = ok(
        &engine,
        "db",
        modify(doc! { "name": "x_1", "unique": true }),
    );
    assert_eq!(reply.get_bool("unique_new").ok(), Some(true), "{reply:?}");
    let listed = list_indexes(&engine, "c");
    let x = listed
        .iter()
        .find(|i| i.get_str("name").ok() == Some("x_1"))
        .expect("x_1");
    assert_eq!(x.get_bool("unique").ok(), Some(true), "{x:?}");
    assert!(x.get("prepareUnique").is_none(), "{x:?}");
    fails(
        &engine,
        "db",
        modify(doc! { "name": "x_1", "unique": false }),
        2,
    );
    fails(
        &engine,
        "db",
        modify(doc! { "name": "_id_", "prepareUnique": true }),
        2,
    );
    assert_valid(&engine, "c");
}

/// Index builds over existing data agree with indexes maintained write by write, whether the
/// build scans with one thread or splits its scan over several (forced here with
/// `set_index_build_threads`, so small collections split too): the same documents through
/// every index, in the same order, the same key counts, `validate` valid; and a unique
/// build over duplicates that fall in different parts of a split scan fails the same way
/// and leaves no index.
#[test]
fn builds_split_over_threads_equal_incremental_indexes() {
    let mut seed: u64 = 0x9e37_79b9_7f4a_7c15;
    let mut next = move |n: u64| {
        seed = seed
            .wrapping_mul(6_364_136_223_846_793_005)
            .wrapping_add(1_442_695_040_888_963_407);
        (seed >> 33) % n
    };
    let value = |pick: u64, i: u64| -> Bson {
        match pick {
            0 => Bson::Int32((i % 17) as i32),
            1 => Bson::Double((i % 13) as f64 / 2.0),
            2 => Bson::String(format!("s{}", i % 11)),
            3 => Bson::Array(vec![
                Bson::Int32((i % 5) as i32),
                Bson::Int32((i % 7) as i32),
            ]),
            4 => Bson::Document(doc! { "b": (i % 9) as i32 }),
            5 => Bson::Array(vec![Bson::Document(doc! { "b": (i % 4) as i32 })]),
            6 => Bson::Null,
            _ => Bson::Boolean(i.is_multiple_of(2)),
        }
    };
    let docs: Vec<Document> = (0..1500_u64)
        .map(|i| {
            let mut doc = doc! { "_id": i as i64 };
            if next(5) != 0 {
                doc.insert("a", value(next(8), i));
            }
            if next(4) != 0 {
                doc.insert("c", value(next(3), i + 1));
            }
            doc.insert("u", i as i64);
            doc
        })
        .collect();
    let specs = vec![
        doc! { "key": { "a": 1 }, "name": "a" },
        doc! { "key": { "a.b": -1, "c": 1 }, "name": "ab_c" },
        doc! { "key": { "c": 1 }, "name": "c_sparse", "sparse": true },
        doc! { "key": { "u": 1 }, "name": "u_unique", "unique": true },
        doc! { "key": { "c": "hashed" }, "name": "c_hashed" },
        doc! { "key": { "a": 1, "u": -1 }, "name": "a_u_partial",
        "partialFilterExpression": { "u": { "$gte": 300 } } },
    ];
    let engine = engine();
    // "inc": indexes first, documents after; "one" and "split": documents first, then a
    // build with one thread and with three.
    create_index_all(&engine, "inc", &specs);
    for coll in ["inc", "one", "split"] {
        for chunk in docs.chunks(500) {
            let reply = insert(&engine, coll, chunk.to_vec());
            assert!(reply.get_array("writeErrors").is_err(), "{reply:?}");
        }
    }
    engine.store().set_index_build_threads(1);
    create_index_all(&engine, "one", &specs);
    engine.store().set_index_build_threads(3);
    create_index_all(&engine, "split", &specs);
    let walk = |coll: &str, index: &str| -> Vec<Bson> {
        let reply = ok(
            &engine,
            "db",
            raw(
                doc! { "find": coll, "filter": {}, "hint": index, "projection": { "_id": 1 },
                "batchSize": 100_000 },
            ),
        );
        let batch = reply
            .get_document("cursor")
            .and_then(|c| c.get_array("firstBatch"))
            .expect("batch");
        batch
            .iter()
            .map(|d| {
                d.as_document()
                    .expect("doc")
                    .get("_id")
                    .cloned()
                    .expect("_id")
            })
            .collect()
    };
    let keys = |coll: &str| -> Document {
        let reply = ok(&engine, "db", raw(doc! { "validate": coll, "full": true }));
        assert_eq!(
            reply.get_bool("valid").ok(),
            Some(true),
            "{coll}: {reply:?}"
        );
        reply
            .get_document("keysPerIndex")
            .expect("keysPerIndex")
            .clone()
    };
    let expected = keys("inc");
    assert_eq!(keys("one"), expected);
    assert_eq!(keys("split"), expected);
    for spec in &specs {
        let name = spec.get_str("name").expect("name");
        if matches!(name, "c_sparse" | "a_u_partial" | "wild") {
            continue; // never used for an unfiltered find (sparse, partial, wildcard)
        }
        let order = walk("inc", name);
        assert!(!order.is_empty(), "{name}");
        assert_eq!(walk("one", name), order, "{name}: one thread");
        assert_eq!(walk("split", name), order, "{name}: split scan");
    }
    // Duplicates at the two ends of the collection, so in different parts of a split scan.
    ok(
        &engine,
        "db",
        raw(doc! { "update": "split", "updates": [
            { "q": { "_id": 1499_i64 }, "u": { "$set": { "dup": 1 } } },
            { "q": { "_id": 0_i64 }, "u": { "$set": { "dup": 1 } } },
        ] }),
    );
    let reply = run(
        &engine,
        "db",
        raw(doc! { "createIndexes": "split", "indexes": [
            { "key": { "dup": 1 }, "name": "dup", "unique": true, "sparse": true },
        ] }),
    );
    assert_eq!(reply.get_i32("code").ok(), Some(11000), "{reply:?}");
    assert_eq!(keys("split"), expected);
}

fn create_index_all(engine: &Engine, coll: &str, specs: &[Document]) {
    ok(
        engine,
        "db",
        raw(doc! { "createIndexes": coll, "indexes": specs.to_vec() }),
    );
}
