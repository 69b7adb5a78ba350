//! listCollections and listIndexes.

use super::{batch, drain, engine, fails, insert, numbered, ok};
use bson::{Bson, doc, rawdoc};

#[test]
fn list_collections_describes_each_collection() {
    let (engine, _) = engine();
    insert(&engine, "b", numbered(0..1));
    insert(&engine, "a", numbered(0..1));
    let reply = ok(&engine, rawdoc! { "listCollections": 1 });
    let cursor = reply.get_document("cursor").expect("cursor");
    assert_eq!(cursor.get_str("ns").ok(), Some("test.$cmd.listCollections"));
    let (docs, id) = batch(&reply);
    assert_eq!(id, 0);
    assert_eq!(docs.len(), 2);
    let first = &docs[0];
    assert_eq!(first.get_str("name").ok(), Some("a"));
    assert_eq!(first.get_str("type").ok(), Some("collection"));
    assert_eq!(first.get_document("options").ok(), Some(&doc! {}));
    let info = first.get_document("info").expect("info");
    assert_eq!(info.get_bool("readOnly").ok(), Some(false));
    match info.get("uuid") {
        Some(Bson::Binary(binary)) => {
            assert_eq!(binary.subtype, bson::spec::BinarySubtype::Uuid);
            assert_eq!(binary.bytes.len(), 16);
        }
        other => panic!("uuid is {other:?}"),
    }
    assert_eq!(
        first.get_document("idIndex").ok(),
        Some(&doc! { "v": 2, "key": { "_id": 1 }, "name": "_id_" })
    );
}

#[test]
fn list_collections_filters_names_only_and_batches() {
    let (engine, _) = engine();
    for name in ["x1", "x2", "y1", "x3"] {
        insert(&engine, name, numbered(0..1));
    }
    let names = |cmd| {
        let reply = ok(&engine, cmd);
        batch(&reply).0
    };
    assert_eq!(
        names(rawdoc! { "listCollections": 1, "nameOnly": true, "filter": { "name": "y1" } }),
        vec![doc! { "name": "y1", "type": "collection" }]
    );
    let regex = rawdoc! {
        "listCollections": 1, "filter": { "name": { "$regex": "^x" } },
        "authorizedCollections": true, "nameOnly": true,
    };
    assert_eq!(names(regex).len(), 3);
    assert_eq!(
        names(rawdoc! { "listCollections": 1, "filter": { "type": "view" } }).len(),
        0
    );
    let first = ok(
        &engine,
        rawdoc! { "listCollections": 1, "cursor": { "batchSize": 1 } },
    );
    assert_eq!(batch(&first).0.len(), 1);
    assert_eq!(
        drain(&engine, "$cmd.listCollections", &first, Some(1)).len(),
        4
    );
    let empty = run_in(&engine, "other", rawdoc! { "listCollections": 1 });
    assert_eq!(batch(&empty), (vec![], 0));
}

fn run_in(engine: &crate::Engine, db: &str, cmd: bson::RawDocumentBuf) -> bson::Document {
    let reply = engine.run_command(db, &cmd, &crate::ConnectionContext::default());
    bson::Document::try_from(&reply).expect("bson")
}

#[test]
fn list_collections_refuses_bad_arguments() {
    let (engine, _) = engine();
    fails(&engine, rawdoc! { "listCollections": 1, "filter": 1 }, 14);
    fails(
        &engine,
        rawdoc! { "listCollections": 1, "filter": { "$bad": 1 } },
        2,
    );
    fails(
        &engine,
        rawdoc! { "listCollections": 1, "nameOnly": "x" },
        14,
    );
    fails(&engine, rawdoc! { "listCollections": 1, "cursor": 1 }, 14);
    fails(
        &engine,
        rawdoc! { "listCollections": 1, "cursor": { "batchSize": -1 } },
        51024,
    );
    fails(&engine, rawdoc! { "listCollections": 1, "what": 1 }, 40415);
}

#[test]
fn list_indexes_lists_the_id_index() {
    let (engine, _) = engine();
    insert(&engine, "c", numbered(0..1));
    let reply = ok(&engine, rawdoc! { "listIndexes": "c" });
    assert_eq!(
        reply,
        doc! {
            "cursor": {
                "firstBatch": [{ "v": 2, "key": { "_id": 1 }, "name": "_id_" }],
                "id": 0i64,
                "ns": "test.$cmd.listIndexes.c",
            },
            "ok": 1.0,
        }
    );
    let zero = ok(
        &engine,
        rawdoc! { "listIndexes": "c", "cursor": { "batchSize": 0 } },
    );
    let all = drain(&engine, "$cmd.listIndexes.c", &zero, None);
    assert_eq!(all.len(), 1);
}

#[test]
fn list_indexes_refuses_missing_collections_and_bad_arguments() {
    let (engine, _) = engine();
    assert_eq!(
        fails(&engine, rawdoc! { "listIndexes": "none" }, 26),
        "ns does not exist: test.none"
    );
    fails(&engine, rawdoc! { "listIndexes": 1 }, 73);
    fails(&engine, rawdoc! { "listIndexes": "c", "cursor": [] }, 14);
    fails(&engine, rawdoc! { "listIndexes": "c", "nope": true }, 40415);
}
