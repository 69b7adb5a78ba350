//! The embedded client end to end on a real file: CRUD through `Client`/`Collection`,
//! cursors across batches, errors by kind with MongoDB's codes, close to one file, reopen,
//! recovery of an unclosed file, the one-opener lock, and the `find_one` by `_id` shortcut
//! against the find command.

use bson::{Bson, Document, doc};
use engine::client::{Client, Error, ErrorKind, WriteFailure};

fn temp_path(name: &str) -> std::path::PathBuf {
    crate::support::temp_db(&format!("embedded-{name}"), "app.mfdb")
}

/// The write error of a failed single write (panics on any other kind).
fn write_error(error: &Error) -> &engine::client::WriteError {
    match &*error.kind {
        ErrorKind::Write(WriteFailure::WriteError(write)) => write,
        other => panic!("expected a write error, got {other:?}"),
    }
}

/// The first `writeErrors` entry of the reply the error keeps.
fn first_reply_write_error(error: &Error) -> Document {
    let reply = error.server_response().expect("the failed command's reply");
    let reply = Document::try_from(reply.as_ref()).expect("decode");
    let errors = reply.get_array("writeErrors").expect("writeErrors");
    errors[0].as_document().expect("entry").clone()
}

#[test]
fn crud_through_the_client_survives_close_and_reopen() {
    let path = temp_path("crud");
    let client = Client::open(&path).expect("open");
    let people = client.database("test").collection::<Document>("people");
    let ids = people
        .insert_many((0..250).map(|i| doc! {"_id": i, "age": i % 50, "name": format!("p{i}")}))
        .run()
        .expect("insert_many");
    assert_eq!(ids.inserted_ids.len(), 250);
    assert_eq!(ids.inserted_ids.get(&249), Some(&Bson::Int32(249)));
    let generated = people
        .insert_one(doc! {"name": "no id"})
        .run()
        .expect("insert_one");
    assert!(matches!(generated.inserted_id, Bson::ObjectId(_)));

    let duplicate = people
        .insert_one(doc! {"_id": 5})
        .run()
        .expect_err("duplicate _id");
    let write = write_error(&duplicate);
    assert_eq!(write.code, 11000);
    assert!(write.message.contains("dup key: { _id: 5 }"), "{duplicate}");

    let young: Vec<_> = people
        .find(doc! {"age": {"$lt": 3}})
        .sort(doc! {"_id": -1})
        .projection(doc! {"name": 1, "_id": 0})
        .batch_size(4)
        .run()
        .expect("find")
        .map(|d| d.expect("doc"))
        .collect();
    assert_eq!(young.len(), 15);
    assert_eq!(young[0], doc! {"name": "p202"});
    let all = people.find(doc! {}).batch_size(7).run().expect("find");
    assert_eq!(all.count(), 251);

    let updated = people
        .update_many(doc! {"age": 0}, doc! {"$set": {"zero": true}})
        .run()
        .expect("update_many");
    assert_eq!((updated.matched_count, updated.modified_count), (5, 5));
    let again = people
        .update_one(doc! {"_id": 0}, doc! {"$set": {"zero": true}})
        .run()
        .expect("no-op update");
    assert_eq!((again.matched_count, again.modified_count), (1, 0));
    let upserted = people
        .update_one(doc! {"_id": 999}, doc! {"$set": {"age": 1}})
        .upsert(true)
        .run()
        .expect("upsert");
    assert_eq!(upserted.upserted_id, Some(Bson::Int32(999)));
    assert_eq!(upserted.matched_count, 0);
    let replaced = people
        .replace_one(doc! {"_id": 1}, doc! {"name": "replaced"})
        .run()
        .expect("replace");
    assert_eq!((replaced.matched_count, replaced.modified_count), (1, 1));
    let deleted = people
        .delete_one(doc! {"_id": 2})
        .run()
        .expect("delete_one");
    assert_eq!(deleted.deleted_count, 1);
    let deleted = people
        .delete_many(doc! {"age": 49})
        .run()
        .expect("delete_many");
    assert_eq!(deleted.deleted_count, 5);
    assert_eq!(
        people.count_documents(doc! {}).run().expect("count"),
        251 + 1 - 1 - 5
    );

    let groups: Vec<_> = people
        .aggregate([doc! {"$group": {"_id": null, "n": {"$sum": 1}}}])
        .run()
        .expect("aggregate")
        .map(|d| d.expect("doc"))
        .collect();
    assert_eq!(groups, vec![doc! {"_id": null, "n": 246}]);

    let bad = client
        .database("test")
        .run_command(doc! {"find": "people", "filter": {"$where": "1"}})
        .run()
        .expect_err("$where refused");
    assert!(
        matches!(&*bad.kind, ErrorKind::Command(c) if c.code != 0),
        "{bad:?}"
    );
    client.close().expect("close");
    let closed = people.find_one(doc! {}).run().expect_err("closed");
    assert!(matches!(*closed.kind, ErrorKind::Closed), "{closed:?}");
    drop(people);
    drop(client);
    let files: Vec<_> = std::fs::read_dir(path.parent().expect("dir"))
        .expect("read dir")
        .map(|e| e.expect("entry").file_name())
        .collect();
    assert_eq!(
        files,
        vec![std::ffi::OsString::from("app.mfdb")],
        "one file"
    );

    let client = Client::open(&path).expect("reopen");
    let people = client.database("test").collection::<Document>("people");
    assert_eq!(people.count_documents(doc! {}).run().expect("count"), 246);
    let replaced = people.find_one(doc! {"_id": 1}).run().expect("find_one");
    assert_eq!(replaced, Some(doc! {"_id": 1, "name": "replaced"}));
    people.drop().run().expect("drop");
    assert_eq!(people.count_documents(doc! {}).run().expect("count"), 0);
    client.close().expect("close");
    let _ = std::fs::remove_dir_all(path.parent().expect("dir"));
}

#[test]
fn an_unclosed_client_recovers_every_write_on_reopen() {
    let path = temp_path("crash");
    {
        let client = Client::open(&path).expect("open");
        let coll = client.database("app").collection::<Document>("events");
        for i in 0..100 {
            coll.insert_one(doc! {"_id": i}).run().expect("insert");
        }
        coll.delete_one(doc! {"_id": 50}).run().expect("delete");
        // Dropped without close: the log holds everything after the last checkpoint.
    }
    let client = Client::open(&path).expect("reopen");
    let coll = client.database("app").collection::<Document>("events");
    assert_eq!(coll.count_documents(doc! {}).run().expect("count"), 99);
    let gone = coll.find_one(doc! {"_id": 50}).run().expect("find");
    assert!(gone.is_none());
    client.close().expect("close");
    let _ = std::fs::remove_dir_all(path.parent().expect("dir"));
}

/// A result as a comparable line: the value, or the error's kind.
fn outcome(result: Result<Option<Document>, Error>) -> String {
    match result {
        Ok(found) => format!("ok {found:?}"),
        Err(error) => format!("err {:?}", error.kind),
    }
}

#[test]
fn find_one_by_id_agrees_with_the_find_command() {
    // `find_one` with a lone `_id` equality skips the command; every filter here must give
    // what the find command gives, errors included.
    let client = Client::memory();
    let db = client.database("test");
    let coll = db.collection::<Document>("c");
    coll.insert_many([
        doc! {"_id": 1, "v": "int"},
        doc! {"_id": "s", "v": "string"},
        doc! {"_id": {"a": 1, "b": 2}, "v": "document"},
        doc! {"_id": Bson::Null, "v": "null"},
        doc! {"_id": 2.5, "v": "double"},
    ])
    .run()
    .expect("insert");
    let filters = [
        doc! {"_id": 1},
        doc! {"_id": 1.0},
        doc! {"_id": 1_i64},
        doc! {"_id": {"$eq": 1}},
        doc! {"_id": "s"},
        doc! {"_id": {"a": 1, "b": 2}},
        doc! {"_id": {"a": 1.0, "b": 2}},
        doc! {"_id": {"b": 2, "a": 1}},
        doc! {"_id": Bson::Null},
        doc! {"_id": 2.5},
        doc! {"_id": 3},
        doc! {"_id": {"$gt": 1}},
        doc! {"_id": 1, "v": "int"},
        doc! {"_id": 1, "v": "other"},
        doc! {"v": "double"},
        doc! {"_id": {"$in": [2.5]}},
        doc! {"_id": {"$bad": 1}},
    ];
    for filter in filters {
        let fast = coll.find_one(filter.clone()).run();
        let slow = coll
            .find(filter.clone())
            .limit(1)
            .run()
            .and_then(|mut cursor| cursor.next().transpose());
        assert_eq!(outcome(fast), outcome(slow), "{filter}");
    }
    let missing = db.collection::<Document>("nothing_here");
    let none = missing
        .find_one(doc! {"_id": 1})
        .run()
        .expect("no collection");
    assert_eq!(none, None);
    for (db_name, coll_name) in [("test", ""), ("bad.db", "c"), ("test", "a\0b")] {
        let bad = client.database(db_name).collection::<Document>(coll_name);
        let fast = bad.find_one(doc! {"_id": 1}).run();
        let slow = bad.find(doc! {"_id": 1}).run().map(|_| None);
        assert!(fast.is_err(), "{db_name}.{coll_name}: {fast:?}");
        assert_eq!(outcome(fast), outcome(slow), "{db_name}.{coll_name}");
    }
}

#[test]
fn a_second_open_in_one_process_is_refused_until_the_first_is_dropped_or_closed() {
    let path = temp_path("lock");
    let first = Client::open(&path).expect("open");
    let c = first.database("test").collection::<Document>("c");
    c.insert_one(doc! {"a": 1}).run().expect("insert");
    let error = Client::open(&path).expect_err("a second Client::open of an open file");
    let ErrorKind::Locked { message } = &*error.kind else {
        panic!("expected Locked, got {error:?}");
    };
    assert!(message.contains(&path.display().to_string()), "{message}");
    assert!(message.contains("this process"), "{message}");
    // The refused opener changed nothing: the first goes on writing.
    c.insert_one(doc! {"a": 2}).run().expect("insert");
    drop(c);
    drop(first);
    let again = Client::open(&path).expect("opens once the first handle is gone");
    let c = again.database("test").collection::<Document>("c");
    assert_eq!(c.count_documents(doc! {}).run().expect("count"), 2);
    // Dropping the client is not enough while a handle (here a clone of one) lives.
    drop(again);
    let holder = c.clone();
    drop(c);
    let error = Client::open(&path).expect_err("the collection still holds the file");
    assert!(matches!(*error.kind, ErrorKind::Locked { .. }), "{error:?}");
    drop(holder);
    // Closing releases the file at once, whatever handles live; they answer Closed.
    let client = Client::open(&path).expect("opens after the last handle is dropped");
    let c = client.database("test").collection::<Document>("c");
    client.close().expect("close");
    client.close().expect("a second close does nothing");
    let reopened = Client::open(&path).expect("a closed client releases the file");
    let error = c.count_documents(doc! {}).run().expect_err("closed");
    assert!(matches!(*error.kind, ErrorKind::Closed), "{error:?}");
    let c = reopened.database("test").collection::<Document>("c");
    assert_eq!(c.count_documents(doc! {}).run().expect("count"), 2);
}

#[test]
fn refused_updates_and_replacements_change_nothing_and_a_pipeline_is_an_update() {
    let client = Client::memory();
    let people = client.database("test").collection::<Document>("people");
    people
        .insert_one(doc! {"_id": 2, "name": "Ann", "age": 36})
        .run()
        .expect("insert");
    let cases = [
        (
            people.update_one(doc! {"_id": 2}, doc! {"age": 37}).run(),
            "update document must only contain update modifiers",
        ),
        (
            people.update_many(doc! {}, doc! {}).run(),
            "update document must not be empty",
        ),
        (
            people
                .update_one(doc! {"_id": 3}, doc! {"age": 1})
                .upsert(true)
                .run(),
            "update document must only contain update modifiers",
        ),
        (
            people
                .replace_one(doc! {"_id": 2}, doc! {"$set": {"age": 40}})
                .run(),
            "replacement document must not contain update modifiers",
        ),
    ];
    for (result, expected) in cases {
        let error = result.expect_err(expected);
        assert!(
            matches!(&*error.kind, ErrorKind::InvalidArgument { message } if message == expected),
            "{error:?}"
        );
    }
    // Nothing changed, nothing was inserted.
    let all: Vec<_> = people
        .find(doc! {})
        .run()
        .expect("find")
        .collect::<Result<_, _>>()
        .expect("docs");
    assert_eq!(all, vec![doc! {"_id": 2, "name": "Ann", "age": 36}]);
    // A pipeline is an update.
    let r = people
        .update_one(doc! {"_id": 2}, vec![doc! {"$set": {"age": 37}}])
        .run()
        .expect("pipeline update");
    assert_eq!(r.modified_count, 1);
}

#[test]
fn write_errors_keep_their_code_index_and_key_details() {
    let client = Client::memory();
    let db = client.database("test");
    let people = db.collection::<Document>("people");
    people.insert_one(doc! {"_id": 1}).run().expect("insert");
    let error = people
        .insert_many([doc! {"_id": 0}, doc! {"_id": 1}])
        .run()
        .expect_err("duplicate in the batch");
    let ErrorKind::InsertMany(failure) = &*error.kind else {
        panic!("expected InsertMany, got {error:?}");
    };
    let errors = failure.write_errors.as_deref().expect("write errors");
    assert_eq!(errors.len(), 1);
    assert_eq!((errors[0].index, errors[0].code), (1, 11000), "the second");
    assert_eq!(failure.inserted_ids().len(), 1);
    // A single insert's duplicate: the key's pattern and value are in the reply kept.
    let error = people
        .insert_one(doc! {"_id": 1})
        .run()
        .expect_err("duplicate");
    assert_eq!(write_error(&error).code, 11000);
    let entry = first_reply_write_error(&error);
    assert_eq!(entry.get_i32("index").ok(), Some(0));
    assert_eq!(
        entry.get_document("keyPattern").ok(),
        Some(&doc! {"_id": 1})
    );
    assert_eq!(entry.get_document("keyValue").ok(), Some(&doc! {"_id": 1}));
    // A write error with another code.
    let error = people
        .update_one(doc! {"_id": 1}, doc! {"$inc": {"_id": 1}})
        .run()
        .expect_err("immutable _id");
    assert_eq!(write_error(&error).code, 66, "ImmutableField");
    assert_eq!(
        first_reply_write_error(&error).get_i32("index").ok(),
        Some(0)
    );
    // Command errors keep their name.
    let error = db
        .run_command(doc! {"noSuchCommand": 1})
        .run()
        .expect_err("unknown command");
    let ErrorKind::Command(command) = &*error.kind else {
        panic!("expected a command error, got {error:?}");
    };
    assert_eq!(
        (command.code, command.code_name.as_str()),
        (59, "CommandNotFound")
    );
    assert!(error.server_response().is_some());
    // An error raised before anything ran has no reply.
    let error = people
        .update_one(doc! {}, doc! {"a": 1})
        .run()
        .expect_err("no operators");
    assert!(error.server_response().is_none());
}
