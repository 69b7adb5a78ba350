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
