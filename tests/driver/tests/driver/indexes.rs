//! Secondary indexes through the official Rust driver (issue 26): `create_index` /
//! `create_indexes`, `list_indexes`, `drop_index` / `drop_indexes`, and unique violations
//! on insert, update, findOneAndUpdate and at build time, as the driver reports them.

use crate::harness::TestServer;
use mongodb::IndexModel;
use mongodb::bson::{Bson, Document, doc};
use mongodb::error::{ErrorKind, WriteFailure};
use mongodb::options::IndexOptions;
use mongodb::sync::Collection;

fn unique(keys: Document, name: &str) -> IndexModel {
    IndexModel::builder()
        .keys(keys)
        .options(
            IndexOptions::builder()
                .unique(true)
                .name(name.to_owned())
                .build(),
        )
        .build()
}

fn write_error_code(error: &mongodb::error::Error) -> (i32, String) {
    match *error.kind {
        ErrorKind::Write(WriteFailure::WriteError(ref failure)) => {
            (failure.code, failure.message.clone())
        }
        ErrorKind::InsertMany(ref failure) => {
            let first = &failure.write_errors.as_ref().expect("write errors")[0];
            (first.code, first.message.clone())
        }
        ErrorKind::Command(ref failure) => (failure.code, failure.message.clone()),
        ref other => panic!("expected a write or command error, got {other:?}"),
    }
}

#[test]
fn create_list_and_drop_indexes() {
    let server = TestServer::start(&[]);
    let client = server.client();
    let items: Collection<Document> = client.database("app").collection("items");
    let created = items
        .create_index(IndexModel::builder().keys(doc! { "a": 1, "b": -1 }).build())
        .run()
        .expect("create_index");
    assert_eq!(created.index_name, "a_1_b_-1");
    let created = items
        .create_indexes(vec![
            unique(doc! { "sku": 1 }, "sku_unique"),
            IndexModel::builder()
                .keys(doc! { "tags": 1 })
                .options(IndexOptions::builder().sparse(true).build())
                .build(),
        ])
        .run()
        .expect("create_indexes");
    assert_eq!(created.index_names, ["sku_unique", "tags_1"]);
    let names = items.list_index_names().run().expect("list_index_names");
    assert_eq!(names, ["_id_", "a_1_b_-1", "sku_unique", "tags_1"]);
    let listed: Vec<IndexModel> = items
        .list_indexes()
        .run()
        .expect("list_indexes")
        .collect::<Result<_, _>>()
        .expect("cursor");
    let sku = &listed[2];
    assert_eq!(sku.keys, doc! { "sku": 1 });
    let options = sku.options.as_ref().expect("options");
    assert_eq!(options.unique, Some(true));
    assert_eq!(
        listed[3].options.as_ref().and_then(|o| o.sparse),
        Some(true)
    );
    items.drop_index("a_1_b_-1").run().expect("drop_index");
    assert_eq!(
        items.list_index_names().run().expect("names"),
        ["_id_", "sku_unique", "tags_1"]
    );
    let error = items.drop_index("nope").run().expect_err("missing index");
    assert_eq!(write_error_code(&error).0, 27);
    let error = items.drop_index("_id_").run().expect_err("_id_");
    assert_eq!(write_error_code(&error).0, 72);
    items.drop_indexes().run().expect("drop_indexes");
    assert_eq!(items.list_index_names().run().expect("names"), ["_id_"]);
}

#[test]
fn unique_violations_over_the_wire() {
    let server = TestServer::start(&[]);
    let client = server.client();
    let db = client.database("app");
    let users: Collection<Document> = db.collection("users");
    users
        .create_index(unique(doc! { "email": 1 }, "email_1"))
        .run()
        .expect("create_index");
    users
        .insert_one(doc! { "_id": 1, "email": "a@x" })
        .run()
        .expect("first");
    let error = users
        .insert_one(doc! { "_id": 2, "email": "a@x" })
        .run()
        .expect_err("duplicate");
    assert_eq!(
        write_error_code(&error),
        (
            11000,
            "E11000 duplicate key error collection: app.users index: email_1 dup key: { email: \"a@x\" }"
                .to_owned()
        )
    );
    // keyPattern and keyValue, as drivers and ODMs read them from the raw reply.
    let reply = db
        .run_command(doc! { "insert": "users", "documents": [{ "_id": 3, "email": "a@x" }] })
        .run()
        .expect("insert command");
    let entry = reply.get_array("writeErrors").expect("writeErrors")[0]
        .as_document()
        .expect("entry")
        .clone();
    assert_eq!(
        entry.get_document("keyPattern").ok(),
        Some(&doc! { "email": 1 })
    );
    assert_eq!(
        entry.get_document("keyValue").ok(),
        Some(&doc! { "email": "a@x" })
    );
    users
        .insert_one(doc! { "_id": 4, "email": "b@x" })
        .run()
        .expect("second");
    let error = users
        .update_one(doc! { "_id": 4 }, doc! { "$set": { "email": "a@x" } })
        .run()
        .expect_err("update to a taken key");
    assert_eq!(write_error_code(&error).0, 11000);
    let error = users
        .find_one_and_update(doc! { "_id": 4 }, doc! { "$set": { "email": "a@x" } })
        .run()
        .expect_err("findOneAndUpdate to a taken key");
    assert_eq!(write_error_code(&error).0, 11000);
    let error = users
        .insert_many(vec![
            doc! { "_id": 5, "email": "c@x" },
            doc! { "_id": 6, "email": "c@x" },
        ])
        .run()
        .expect_err("batch with a duplicate");
    assert_eq!(write_error_code(&error).0, 11000);
    assert_eq!(users.count_documents(doc! {}).run().expect("count"), 3);
    // A unique build over duplicates fails and leaves no index.
    let dup: Collection<Document> = db.collection("dup");
    dup.insert_many(vec![doc! { "k": 1 }, doc! { "k": 1 }])
        .run()
        .expect("insert");
    let error = dup
        .create_index(unique(doc! { "k": 1 }, "k_1"))
        .run()
        .expect_err("build over duplicates");
    let (code, message) = write_error_code(&error);
    assert_eq!(code, 11000);
    assert!(
        message.ends_with("index: k_1 dup key: { k: 1 }"),
        "{message}"
    );
    assert_eq!(dup.list_index_names().run().expect("names"), ["_id_"]);
    let valid = db
        .run_command(doc! { "validate": "users" })
        .run()
        .expect("validate");
    assert_eq!(valid.get_bool("valid").ok(), Some(true), "{valid:?}");
    assert_eq!(
        valid.get_document("keysPerIndex").ok(),
        Some(&doc! { "_id_": 3, "email_1": 3 })
    );
    assert!(matches!(valid.get("nIndexes"), Some(Bson::Int32(2))));
}

/// `find(..).min(..).max(..).hint(..)` and `$indexStats` as the driver sends them.
#[test]
fn min_max_and_index_stats_through_the_driver() {
    let server = TestServer::start(&[]);
    let client = server.client();
    let items: Collection<Document> = client.database("app").collection("items");
    let docs: Vec<Document> = (0..50).map(|i| doc! { "_id": i, "k": i % 10 }).collect();
    items.insert_many(docs).run().expect("insert");
    items
        .create_index(IndexModel::builder().keys(doc! { "k": -1 }).build())
        .run()
        .expect("create_index");
    // k descends: from k 7 (inclusive) down to k 4 (exclusive); ties in record order.
    let found: Vec<Document> = items
        .find(doc! {})
        .hint(mongodb::options::Hint::Name("k_-1".to_owned()))
        .min(doc! { "k": 7 })
        .max(doc! { "k": 4 })
        .batch_size(4)
        .run()
        .expect("find with min/max")
        .collect::<Result<_, _>>()
        .expect("cursor");
    let keys: Vec<(i32, i32)> = found
        .iter()
        .map(|d| (d.get_i32("k").unwrap(), d.get_i32("_id").unwrap()))
        .collect();
    let expected: Vec<(i32, i32)> = [7, 6, 5]
        .into_iter()
        .flat_map(|k| (0..5).map(move |j| (k, k + 10 * j)))
        .collect();
    assert_eq!(keys, expected);
    let error = items
        .find(doc! {})
        .min(doc! { "k": 7 })
        .run()
        .expect_err("min without a hint");
    assert_eq!(write_error_code(&error).0, 51173);

    items.find_one(doc! { "k": 3 }).run().expect("find_one");
    let stats: Vec<Document> = items
        .aggregate(vec![doc! { "$indexStats": {} }])
        .run()
        .expect("$indexStats")
        .collect::<Result<_, _>>()
        .expect("cursor");
    let ops: Vec<(String, i64)> = stats
        .iter()
        .map(|d| {
            let accesses = d.get_document("accesses").expect("accesses");
            assert!(accesses.get_datetime("since").is_ok(), "{d}");
            (
                d.get_str("name").unwrap().to_owned(),
                accesses.get_i64("ops").unwrap(),
            )
        })
        .collect();
    // The min/max find and the find_one each used k_-1 once.
    assert_eq!(ops, [("_id_".to_owned(), 0), ("k_-1".to_owned(), 2)]);
}
