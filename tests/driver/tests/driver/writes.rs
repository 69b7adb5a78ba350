//! The official Rust driver's write API against the server: inserts (single, batch,
//! ordered and unordered), updates and replaces with upsert, deletes, the findAndModify
//! helpers, collection DDL, and an unacknowledged (w:0) write over a raw socket. There is
//! no read path yet, so results are checked through what the write calls and
//! findAndModify return.

use crate::harness::{TestServer, roundtrip};
use mongodb::bson::{Bson, Document, doc};
use mongodb::error::{ErrorKind, WriteFailure};
use mongodb::options::{ReturnDocument, WriteConcern};
use mongodb::sync::{Client, Collection};
use std::io::Write;
use wire::{DocumentSequence, MsgFlags, OpMsg};

fn collection(client: &Client, name: &str) -> Collection<Document> {
    client.database("app").collection(name)
}

#[test]
fn insert_one_and_many_return_ids() {
    let server = TestServer::start(&[]);
    let client = server.client();
    let users = collection(&client, "users");
    let one = users
        .insert_one(doc! { "name": "ada" })
        .run()
        .expect("insert_one");
    assert!(matches!(one.inserted_id, Bson::ObjectId(_)), "{one:?}");
    let many = users
        .insert_many(vec![
            doc! { "_id": 1 },
            doc! { "_id": 2 },
            doc! { "name": "x" },
        ])
        .run()
        .expect("insert_many");
    assert_eq!(many.inserted_ids.len(), 3);
    assert_eq!(many.inserted_ids.get(&0), Some(&Bson::Int32(1)));
    // The driver's generated _id is the one stored: deleting by it finds the document.
    let deleted = users
        .delete_one(doc! { "_id": one.inserted_id })
        .run()
        .expect("delete_one");
    assert_eq!(deleted.deleted_count, 1);
}

#[test]
fn duplicate_key_errors_carry_index_and_code() {
    let server = TestServer::start(&[]);
    let client = server.client();
    let items = collection(&client, "items");
    items
        .insert_one(doc! { "_id": 1 })
        .run()
        .expect("first insert");
    let error = items
        .insert_one(doc! { "_id": 1 })
        .run()
        .expect_err("duplicate");
    match *error.kind {
        ErrorKind::Write(WriteFailure::WriteError(ref failure)) => {
            assert_eq!(failure.code, 11000);
            assert!(
                failure
                    .message
                    .contains("E11000 duplicate key error collection: app.items")
            );
        }
        ref other => panic!("expected a write error, got {other:?}"),
    }
    for (ordered, inserted_after) in [(true, 0), (false, 1)] {
        let batch = vec![
            doc! { "_id": 10 + i32::from(ordered) },
            doc! { "_id": 1 },
            doc! { "_id": 20 + i32::from(ordered) },
        ];
        let error = items
            .insert_many(batch)
            .ordered(ordered)
            .run()
            .expect_err("duplicate in batch");
        match *error.kind {
            ErrorKind::InsertMany(ref failure) => {
                let errors = failure.write_errors.as_ref().expect("write errors");
                assert_eq!(errors.len(), 1);
                assert_eq!(errors[0].index, 1);
                assert_eq!(errors[0].code, 11000);
            }
            ref other => panic!("expected an insert-many error, got {other:?}"),
        }
        // Whether the document after the duplicate was inserted shows in a delete.
        let third = 20 + i32::from(ordered);
        let deleted = items
            .delete_many(doc! { "_id": third })
            .run()
            .expect("delete");
        assert_eq!(deleted.deleted_count, inserted_after, "ordered: {ordered}");
    }
}

#[test]
fn updates_and_replaces_with_upsert() {
    let server = TestServer::start(&[]);
    let client = server.client();
    let c = collection(&client, "c");
    c.insert_many(vec![
        doc! { "_id": 1, "v": 1 },
        doc! { "_id": 2, "v": 1 },
        doc! { "_id": 3, "v": 2 },
    ])
    .run()
    .expect("seed");
    let one = c
        .update_one(doc! { "v": 1 }, doc! { "$inc": { "v": 10 } })
        .run()
        .expect("update_one");
    assert_eq!((one.matched_count, one.modified_count), (1, 1));
    let many = c
        .update_many(
            doc! { "v": { "$lt": 100 } },
            doc! { "$set": { "seen": true } },
        )
        .run()
        .expect("update_many");
    assert_eq!((many.matched_count, many.modified_count), (3, 3));
    let noop = c
        .update_many(doc! {}, doc! { "$set": { "seen": true } })
        .run()
        .expect("no-op update");
    assert_eq!((noop.matched_count, noop.modified_count), (3, 0));
    let upserted = c
        .update_one(doc! { "_id": 9 }, doc! { "$set": { "v": 9 } })
        .upsert(true)
        .run()
        .expect("upsert");
    assert_eq!(upserted.upserted_id, Some(Bson::Int32(9)));
    assert_eq!(upserted.matched_count, 0);
    let replaced = c
        .replace_one(doc! { "_id": 3 }, doc! { "w": "replaced" })
        .run()
        .expect("replace_one");
    assert_eq!((replaced.matched_count, replaced.modified_count), (1, 1));
    let replace_upsert = c
        .replace_one(doc! { "name": "new" }, doc! { "name": "new", "v": 0 })
        .upsert(true)
        .run()
        .expect("replace upsert");
    assert!(matches!(
        replace_upsert.upserted_id,
        Some(Bson::ObjectId(_))
    ));
    let after = c
        .find_one_and_update(doc! { "_id": 3 }, doc! { "$set": { "x": 1 } })
        .return_document(ReturnDocument::After)
        .run()
        .expect("find_one_and_update");
    assert_eq!(after, Some(doc! { "_id": 3, "w": "replaced", "x": 1 }));
    let error = c
        .update_one(doc! { "_id": 1 }, doc! { "$set": { "_id": 5 } })
        .run()
        .expect_err("_id is immutable");
    match *error.kind {
        ErrorKind::Write(WriteFailure::WriteError(ref failure)) => assert_eq!(failure.code, 66),
        ref other => panic!("expected a write error, got {other:?}"),
    }
}

#[test]
fn deletes_count_what_they_remove() {
    let server = TestServer::start(&[]);
    let client = server.client();
    let c = collection(&client, "c");
    let docs: Vec<Document> = (0..10)
        .map(|i| doc! { "_id": i, "even": i % 2 == 0 })
        .collect();
    c.insert_many(docs).run().expect("seed");
    assert_eq!(
        c.delete_one(doc! { "even": true })
            .run()
            .expect("delete_one")
            .deleted_count,
        1
    );
    assert_eq!(
        c.delete_many(doc! { "even": true })
            .run()
            .expect("delete_many")
            .deleted_count,
        4
    );
    assert_eq!(
        c.delete_many(doc! {})
            .run()
            .expect("delete all")
            .deleted_count,
        5
    );
    assert_eq!(
        c.delete_many(doc! {})
            .run()
            .expect("delete none")
            .deleted_count,
        0
    );
}

#[test]
fn find_one_and_modify_helpers() {
    let server = TestServer::start(&[]);
    let client = server.client();
    let c = collection(&client, "jobs");
    c.insert_many(vec![
        doc! { "_id": 1, "state": "new", "priority": 1 },
        doc! { "_id": 2, "state": "new", "priority": 5 },
    ])
    .run()
    .expect("seed");
    let claimed = c
        .find_one_and_update(
            doc! { "state": "new" },
            doc! { "$set": { "state": "running" } },
        )
        .sort(doc! { "priority": -1 })
        .projection(doc! { "state": 1 })
        .run()
        .expect("claim");
    assert_eq!(claimed, Some(doc! { "_id": 2, "state": "new" }));
    let replaced = c
        .find_one_and_replace(doc! { "_id": 1 }, doc! { "state": "done" })
        .return_document(ReturnDocument::After)
        .run()
        .expect("replace");
    assert_eq!(replaced, Some(doc! { "_id": 1, "state": "done" }));
    let upserted = c
        .find_one_and_update(
            doc! { "_id": 3 },
            doc! { "$setOnInsert": { "state": "new" } },
        )
        .upsert(true)
        .return_document(ReturnDocument::After)
        .run()
        .expect("upsert");
    assert_eq!(upserted, Some(doc! { "_id": 3, "state": "new" }));
    let removed = c
        .find_one_and_delete(doc! { "_id": 2 })
        .run()
        .expect("delete");
    assert_eq!(
        removed,
        Some(doc! { "_id": 2, "state": "running", "priority": 5 })
    );
    let nothing = c
        .find_one_and_delete(doc! { "_id": 2 })
        .run()
        .expect("delete again");
    assert_eq!(nothing, None);
}

#[test]
fn collections_are_created_renamed_dropped_and_listed() {
    let server = TestServer::start(&[]);
    let client = server.client();
    let app = client.database("app");
    app.create_collection("made").run().expect("create");
    let error = app
        .create_collection("made")
        .validator(doc! {})
        .run()
        .expect_err("exists with other options");
    match *error.kind {
        ErrorKind::Command(ref failure) => assert_eq!(failure.code, 48),
        ref other => panic!("expected a command error, got {other:?}"),
    }
    collection(&client, "made")
        .insert_one(doc! { "_id": 1 })
        .run()
        .expect("insert");
    client
        .database("other")
        .collection::<Document>("x")
        .insert_one(doc! { "_id": 1 })
        .run()
        .expect("insert other");
    let names = client.list_database_names().run().expect("list");
    assert_eq!(names, vec!["app".to_owned(), "other".to_owned()]);
    let admin = client.database("admin");
    admin
        .run_command(doc! { "renameCollection": "app.made", "to": "app.renamed" })
        .run()
        .expect("rename");
    let moved = collection(&client, "renamed")
        .find_one_and_delete(doc! { "_id": 1 })
        .run()
        .expect("the document moved with its collection");
    assert_eq!(moved, Some(doc! { "_id": 1 }));
    collection(&client, "renamed").drop().run().expect("drop");
    collection(&client, "renamed")
        .drop()
        .run()
        .expect("dropping again succeeds");
    client
        .database("other")
        .drop()
        .run()
        .expect("drop database");
    let stats = app
        .run_command(doc! { "dbStats": 1 })
        .run()
        .expect("dbStats");
    assert_eq!(stats.get_i32("collections").ok(), Some(0));
    assert!(client.list_database_names().run().expect("list").is_empty());
}

/// The Rust driver refuses unacknowledged write concerns ("not supported"), so the w:0
/// write goes over a raw socket the way other drivers send it: `moreToCome` set, the
/// documents in a kind-1 sequence. The server answers nothing, and the next request on the
/// connection sees the write.
#[test]
fn unacknowledged_write_is_visible_to_the_next_request() {
    let server = TestServer::start(&[]);
    let mut stream = server.raw();
    let mut insert = OpMsg::new(bson::rawdoc! {
        "insert": "fast", "writeConcern": { "w": 0 }, "$db": "app",
    });
    insert.flags = MsgFlags(MsgFlags::MORE_TO_COME);
    insert.sequences.push(DocumentSequence {
        identifier: "documents".into(),
        documents: vec![
            bson::rawdoc! { "_id": 1, "n": 0 },
            bson::rawdoc! { "_id": 2, "n": 0 },
        ],
    });
    stream
        .write_all(&insert.encode(1, 0).expect("encode"))
        .expect("send");
    let next = OpMsg::new(bson::rawdoc! {
        "findAndModify": "fast", "query": { "_id": 2 }, "update": { "$inc": { "n": 1 } },
        "new": true, "$db": "app",
    });
    let (header, reply) = roundtrip(&mut stream, &next.encode(2, 0).expect("encode"));
    assert_eq!(header.response_to, 2, "the w:0 insert must not be answered");
    assert_eq!(
        reply.get_document("value").ok(),
        Some(&doc! { "_id": 2, "n": 1 })
    );
    let client = server.client();
    let refused = collection(&client, "fast")
        .insert_one(doc! { "_id": 3 })
        .write_concern(WriteConcern::nodes(2))
        .run()
        .expect_err("w:2 on a standalone");
    match *refused.kind {
        ErrorKind::Command(ref failure) => assert_eq!(failure.code, 2),
        ref other => panic!("expected a command error, got {other:?}"),
    }
}
