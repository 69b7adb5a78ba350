//! The embedded API end to end on a real file: CRUD through `Database`/`Collection`,
//! cursors across batches, errors with MongoDB's codes, close to one file, and reopen.

use bson::doc;
use engine::Database;

fn temp_path(name: &str) -> std::path::PathBuf {
    crate::support::temp_db(&format!("embedded-{name}"), "app.mfdb")
}

#[test]
fn crud_through_the_embedded_api_survives_close_and_reopen() {
    let path = temp_path("crud");
    let db = Database::open(&path).expect("open");
    let people = db.collection("people");
    let ids = people
        .insert_many((0..250).map(|i| doc! {"_id": i, "age": i % 50, "name": format!("p{i}")}))
        .expect("insert_many");
    assert_eq!(ids.len(), 250);
    let generated = people
        .insert_one(doc! {"name": "no id"})
        .expect("insert_one");
    assert!(matches!(generated, bson::Bson::ObjectId(_)));

    let duplicate = people
        .insert_one(doc! {"_id": 5})
        .expect_err("duplicate _id");
    assert_eq!(duplicate.code, 11000);
    assert!(
        duplicate.message.contains("dup key: { _id: 5 }"),
        "{duplicate}"
    );

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
        .expect("update_many");
    assert_eq!((updated.matched, updated.modified), (5, 5));
    let again = people
        .update_one(doc! {"_id": 0}, doc! {"$set": {"zero": true}})
        .expect("no-op update");
    assert_eq!((again.matched, again.modified), (1, 0));
    let upserted = people
        .upsert_one(doc! {"_id": 999}, doc! {"$set": {"age": 1}})
        .expect("upsert");
    assert_eq!(upserted.upserted_id, Some(bson::Bson::Int32(999)));
    people
        .replace_one(doc! {"_id": 1}, doc! {"name": "replaced"})
        .expect("replace");
    assert_eq!(people.delete_one(doc! {"_id": 2}).expect("delete_one"), 1);
    assert_eq!(
        people.delete_many(doc! {"age": 49}).expect("delete_many"),
        5
    );
    assert_eq!(
        people.count_documents(doc! {}).expect("count"),
        251 + 1 - 1 - 5
    );

    let groups: Vec<_> = people
        .aggregate([doc! {"$group": {"_id": null, "n": {"$sum": 1}}}])
        .expect("aggregate")
        .map(|d| d.expect("doc"))
        .collect();
    assert_eq!(groups, vec![doc! {"_id": null, "n": 246}]);

    let bad = db
        .run_command("test", doc! {"find": "people", "filter": {"$where": "1"}})
        .expect_err("$where refused");
    assert_ne!(bad.code, 0);
    db.close().expect("close");
    assert!(people.find_one(doc! {}).is_err(), "calls fail after close");
    drop(db);
    let files: Vec<_> = std::fs::read_dir(path.parent().expect("dir"))
        .expect("read dir")
        .map(|e| e.expect("entry").file_name())
        .collect();
    assert_eq!(
        files,
        vec![std::ffi::OsString::from("app.mfdb")],
        "one file"
    );

    let db = Database::open(&path).expect("reopen");
    let people = db.collection("people");
    assert_eq!(people.count_documents(doc! {}).expect("count"), 246);
    let replaced = people.find_one(doc! {"_id": 1}).expect("find_one");
    assert_eq!(replaced, Some(doc! {"_id": 1, "name": "replaced"}));
    people.drop().expect("drop");
    assert_eq!(people.count_documents(doc! {}).expect("count"), 0);
    db.close().expect("close");
    let _ = std::fs::remove_dir_all(path.parent().expect("dir"));
}

#[test]
fn an_unclosed_database_recovers_every_write_on_reopen() {
    let path = temp_path("crash");
    {
        let db = Database::open(&path).expect("open");
        let coll = db.collection_in("app", "events");
        for i in 0..100 {
            coll.insert_one(doc! {"_id": i}).expect("insert");
        }
        coll.delete_one(doc! {"_id": 50}).expect("delete");
        // Dropped without close: the log holds everything after the last checkpoint.
    }
    let db = Database::open(&path).expect("reopen");
    let coll = db.collection_in("app", "events");
    assert_eq!(coll.count_documents(doc! {}).expect("count"), 99);
    assert!(coll.find_one(doc! {"_id": 50}).expect("find").is_none());
    db.close().expect("close");
    let _ = std::fs::remove_dir_all(path.parent().expect("dir"));
}

#[test]
fn find_one_by_id_agrees_with_the_find_command() {
    // `find_one` with a lone `_id` equality skips the command; every filter here must give
    // what the find command gives, errors included.
    let db = engine::Database::memory();
    let coll = db.collection("c");
    coll.insert_many([
        doc! {"_id": 1, "v": "int"},
        doc! {"_id": "s", "v": "string"},
        doc! {"_id": {"a": 1, "b": 2}, "v": "document"},
        doc! {"_id": bson::Bson::Null, "v": "null"},
        doc! {"_id": 2.5, "v": "double"},
    ])
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
        doc! {"_id": bson::Bson::Null},
        doc! {"_id": 2.5},
        doc! {"_id": 3},
        doc! {"_id": {"$gt": 1}},
        doc! {"_id": 1, "v": "int"},
        doc! {"_id": 1, "v": "other"},
        doc! {"v": "double"},
        doc! {"_id": {"$in": [2.5]}},
    ];
    for filter in filters {
        let fast = coll.find_one(filter.clone());
        let slow = coll
            .find(filter.clone())
            .limit(1)
            .run()
            .and_then(|mut cursor| cursor.next().transpose());
        assert_eq!(fast, slow, "{filter}");
    }
    let missing = db.collection("nothing_here");
    assert_eq!(missing.find_one(doc! {"_id": 1}), Ok(None));
    for (db_name, coll_name) in [("test", ""), ("bad.db", "c"), ("test", "a\0b")] {
        let bad = db.collection_in(db_name, coll_name);
        let fast = bad.find_one(doc! {"_id": 1}).map_err(|e| e.code);
        let slow = bad
            .find(doc! {"_id": 1})
            .run()
            .map(|_| ())
            .map_err(|e| e.code);
        assert!(fast.is_err(), "{db_name}.{coll_name}: {fast:?}");
        assert_eq!(fast.map(|_| ()), slow, "{db_name}.{coll_name}");
    }
}

#[test]
fn a_second_open_of_an_open_file_in_one_process_is_refused_until_the_first_is_dropped() {
    let path = temp_path("lock");
    let first = Database::open(&path).expect("open");
    first
        .collection("c")
        .insert_one(doc! {"a": 1})
        .expect("insert");
    let error = match Database::open(&path) {
        Err(error) => error,
        Ok(_) => panic!("a second Database::open of an open file succeeded"),
    };
    assert_eq!((error.code, error.code_name.as_str()), (98, "DBPathInUse"));
    assert!(
        error.message.contains(&path.display().to_string()),
        "{error}"
    );
    assert!(error.message.contains("this process"), "{error}");
    // The refused opener changed nothing: the first goes on writing.
    first
        .collection("c")
        .insert_one(doc! {"a": 2})
        .expect("insert");
    drop(first);
    let again = Database::open(&path).expect("opens once the first handle is gone");
    assert_eq!(
        again
            .collection("c")
            .count_documents(doc! {})
            .expect("count"),
        2
    );
    again.engine().close().expect("close");
    // A closed engine keeps its claim until it is dropped.
    assert!(Database::open(&path).is_err());
    drop(again);
    Database::open(&path).expect("opens after the closed one is dropped");
}

#[test]
fn updates_need_operators_and_replacements_may_not_have_them() {
    let db = Database::memory();
    let people = db.collection("people");
    people
        .insert_one(doc! {"_id": 2, "name": "Ann", "age": 36})
        .expect("insert");
    let cases = [
        (
            people.update_one(doc! {"_id": 2}, doc! {"age": 37}),
            "update document must only contain update modifiers",
        ),
        (
            people.update_many(doc! {}, doc! {}),
            "update document must not be empty",
        ),
        (
            people.upsert_one(doc! {"_id": 3}, doc! {"age": 1}),
            "update document must only contain update modifiers",
        ),
        (
            people.replace_one(doc! {"_id": 2}, doc! {"$set": {"age": 40}}),
            "replacement document must not contain update modifiers",
        ),
    ];
    for (result, message) in cases {
        let error = result.expect_err(message);
        assert_eq!((error.code, error.message.as_str()), (2, message));
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
    people
        .update_one(doc! {"_id": 2}, vec![doc! {"$set": {"age": 37}}])
        .expect("pipeline update");
}

#[test]
fn write_errors_keep_their_name_index_and_key_details() {
    let db = Database::memory();
    let people = db.collection("people");
    people.insert_one(doc! {"_id": 1}).expect("insert");
    let error = people
        .insert_many([doc! {"_id": 0}, doc! {"_id": 1}])
        .expect_err("duplicate in the batch");
    assert_eq!(
        (error.code, error.code_name.as_str()),
        (11000, "DuplicateKey")
    );
    assert_eq!(error.index, Some(1), "the second statement failed");
    assert_eq!(
        error.details.as_deref(),
        Some(&doc! {"keyPattern": {"_id": 1}, "keyValue": {"_id": 1}})
    );
    // A write error with a named code other than the duplicate key.
    let error = people
        .update_one(doc! {"_id": 1}, doc! {"$inc": {"_id": 1}})
        .expect_err("immutable _id");
    assert_eq!(
        (error.code, error.code_name.as_str()),
        (66, "ImmutableField")
    );
    assert_eq!(error.index, Some(0));
    // Command errors keep their name too.
    let error = db
        .run_command("test", doc! {"noSuchCommand": 1})
        .expect_err("unknown command");
    assert_eq!(
        (error.code, error.code_name.as_str()),
        (59, "CommandNotFound")
    );
    assert_eq!(error.index, None);
}
