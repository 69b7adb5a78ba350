//! The official Rust driver reading through the server: find with its cursor, counts,
//! distinct, aggregate and the catalog listings.
//!
//! Tests that need data insert it with the driver.

use crate::harness::TestServer;
use mongodb::bson::{Bson, Document, doc};
use mongodb::error::ErrorKind;
use mongodb::sync::Collection;

fn code_of(error: &mongodb::error::Error) -> i32 {
    match *error.kind {
        ErrorKind::Command(ref failure) => failure.code,
        ref other => panic!("expected a command error, got {other:?}"),
    }
}

fn seeded(server: &TestServer, name: &str, count: i32) -> Collection<Document> {
    let collection = server.client().database("app").collection::<Document>(name);
    let docs = (0..count).map(|i| doc! { "_id": i, "n": i, "g": i % 4, "tags": [i % 3, "t"] });
    collection.insert_many(docs).run().expect("insert_many");
    collection
}

#[test]
fn driver_reads_an_empty_database() {
    let server = TestServer::start(&[]);
    let db = server.client().database("app");
    assert!(db.list_collection_names().run().expect("names").is_empty());
    let users = db.collection::<Document>("users");
    let found: Vec<Document> = users
        .find(doc! { "age": { "$gt": 1 } })
        .sort(doc! { "age": 1 })
        .run()
        .expect("find")
        .collect::<Result<_, _>>()
        .expect("cursor");
    assert!(found.is_empty());
    assert_eq!(users.count_documents(doc! {}).run().expect("count"), 0);
    assert_eq!(users.estimated_document_count().run().expect("estimate"), 0);
    assert!(
        users
            .distinct("age", doc! {})
            .run()
            .expect("distinct")
            .is_empty()
    );
    let grouped = users
        .aggregate([doc! { "$group": { "_id": "$age" } }])
        .run()
        .expect("aggregate");
    assert_eq!(grouped.count(), 0);
    let missing = users.list_indexes().run().expect_err("no collection");
    assert_eq!(code_of(&missing), 26);
    // As mongod: a query on a missing collection answers nothing, without planning, so
    // even a hint naming no index is not an error there.
    let hinted = users
        .find(doc! {})
        .hint(mongodb::options::Hint::Name("age_1".into()))
        .run()
        .expect("find");
    assert_eq!(hinted.count(), 0);
    let refused = users
        .find(doc! {})
        .sort(doc! { "age": 2 })
        .run()
        .expect_err("bad sort");
    assert_eq!(code_of(&refused), 15975);
}

#[test]
fn driver_find_pages_with_sort_skip_limit_and_projection() {
    let server = TestServer::start(&[]);
    let collection = seeded(&server, "items", 300);
    let cursor = collection
        .find(doc! { "g": { "$ne": 3 } })
        .sort(doc! { "n": -1 })
        .skip(5)
        .limit(150)
        .projection(doc! { "n": 1, "_id": 0 })
        .batch_size(20)
        .run()
        .expect("find");
    let got: Vec<Document> = cursor.collect::<Result<_, _>>().expect("all batches");
    let expected: Vec<Document> = (0..300)
        .rev()
        .filter(|i| i % 4 != 3)
        .skip(5)
        .take(150)
        .map(|i| doc! { "n": i })
        .collect();
    assert_eq!(got, expected);
    // Natural order with the default batch sizes: 101, then the rest.
    let all = collection.find(doc! {}).run().expect("find");
    let ids: Vec<Bson> = all
        .map(|d| d.expect("doc").get("_id").cloned().expect("_id"))
        .collect();
    assert_eq!(ids, (0..300).map(Bson::Int32).collect::<Vec<_>>());
    // A cursor dropped half-way is killed, and the server carries on.
    let mut partial = collection.find(doc! {}).batch_size(2).run().expect("find");
    assert!(partial.next().is_some());
    drop(partial);
    assert_eq!(
        collection.estimated_document_count().run().expect("count"),
        300
    );
}

#[test]
fn driver_counts_distinct_and_aggregates() {
    let server = TestServer::start(&[]);
    let collection = seeded(&server, "stats", 40);
    assert_eq!(
        collection
            .count_documents(doc! { "g": 1 })
            .run()
            .expect("count"),
        10
    );
    assert_eq!(
        collection
            .estimated_document_count()
            .run()
            .expect("estimate"),
        40
    );
    let groups = collection.distinct("g", doc! {}).run().expect("distinct");
    assert_eq!(groups, (0..4).map(Bson::Int32).collect::<Vec<_>>());
    let tags = collection
        .distinct("tags", doc! { "g": 0 })
        .run()
        .expect("distinct");
    assert_eq!(tags, vec![Bson::Int32(0), 1.into(), 2.into(), "t".into()]);
    let pipeline = [
        doc! { "$group": { "_id": "$g", "total": { "$sum": "$n" }, "count": { "$sum": 1 } } },
        doc! { "$sort": { "_id": 1 } },
    ];
    let grouped: Vec<Document> = collection
        .aggregate(pipeline)
        .batch_size(1)
        .run()
        .expect("aggregate")
        .collect::<Result<_, _>>()
        .expect("all batches");
    assert_eq!(grouped.len(), 4);
    let zero = grouped.first().expect("group 0");
    assert_eq!(zero.get_i32("count").ok(), Some(10));
    assert_eq!(
        zero.get_i32("total").ok(),
        Some((0..40).filter(|i| i % 4 == 0).sum())
    );
}

#[test]
fn driver_lists_collections_and_indexes() {
    let server = TestServer::start(&[]);
    seeded(&server, "b", 1);
    let a = seeded(&server, "a", 1);
    let db = server.client().database("app");
    assert_eq!(
        db.list_collection_names().run().expect("names"),
        vec!["a", "b"]
    );
    let specs: Vec<_> = db
        .list_collections()
        .run()
        .expect("listCollections")
        .collect::<Result<_, _>>()
        .expect("specs");
    assert_eq!(specs.len(), 2);
    let indexes: Vec<_> = a
        .list_indexes()
        .run()
        .expect("listIndexes")
        .collect::<Result<_, _>>()
        .expect("indexes");
    assert_eq!(indexes.len(), 1);
    assert_eq!(indexes[0].keys, doc! { "_id": 1 });
    let names = a.list_index_names().run().expect("names");
    assert_eq!(names, vec!["_id_"]);
    let bad_hint = a
        .find(doc! {})
        .hint(mongodb::options::Hint::Name("n_1".into()))
        .run()
        .expect_err("no such index");
    assert_eq!(code_of(&bad_hint), 2);
}

/// The spill files beside `db` (`<db>.sort-<n>`).
fn spill_files(db: &std::path::Path) -> Vec<String> {
    let name = db
        .file_name()
        .and_then(|n| n.to_str())
        .expect("a file name");
    let dir = db.parent().expect("a directory");
    std::fs::read_dir(dir)
        .expect("listed")
        .filter_map(|entry| entry.ok()?.file_name().into_string().ok())
        .filter(|n| n.starts_with(name) && n.contains(".sort-"))
        .collect()
}

#[test]
fn aggregate_spills_with_allow_disk_use_and_refuses_without_it() {
    let db = TestServer::temp_db();
    let server = TestServer::start_at(&db, &[]);
    let client = server.client();
    client
        .database("admin")
        .run_command(doc! {
            "setParameter": 1,
            "internalQueryMaxBlockingSortMemoryUsageBytes": 20_000,
            "internalDocumentSourceGroupMaxMemoryBytes": 20_000_i64,
        })
        .run()
        .expect("setParameter");
    let items = client.database("app").collection::<Document>("items");
    let pad = "p".repeat(100);
    let docs = (0..500).map(|i| doc! { "_id": i, "k": (i * 37) % 500, "pad": &pad });
    items.insert_many(docs).run().expect("insert_many");
    let sort = vec![
        doc! { "$sort": { "k": 1 } },
        doc! { "$project": { "pad": 0 } },
    ];
    let group = vec![doc! { "$group": { "_id": "$k", "ids": { "$push": "$_id" } } }];
    for pipeline in [&sort, &group] {
        let error = items
            .aggregate(pipeline.clone())
            .run()
            .expect_err("over the memory limit");
        assert_eq!(code_of(&error), 292, "{pipeline:?}");
        let ErrorKind::Command(ref failure) = *error.kind else {
            unreachable!()
        };
        assert_eq!(
            failure.code_name,
            "QueryExceededMemoryLimitNoDiskUseAllowed"
        );
        assert!(
            failure.message.contains("xceeded memory limit"),
            "{}",
            failure.message
        );
    }
    let sorted: Vec<Document> = items
        .aggregate(sort)
        .allow_disk_use(true)
        .batch_size(64)
        .run()
        .expect("spills")
        .collect::<Result<_, _>>()
        .expect("cursor");
    let keys: Vec<i32> = sorted.iter().map(|d| d.get_i32("k").unwrap()).collect();
    assert_eq!(keys, (0..500).collect::<Vec<_>>());
    assert_eq!(spill_files(&db), Vec::<String>::new());
    let mut groups: Vec<(i32, Vec<Bson>)> = items
        .aggregate(group)
        .allow_disk_use(true)
        .run()
        .expect("spills")
        .map(|d| {
            let d = d.expect("group");
            (
                d.get_i32("_id").unwrap(),
                d.get_array("ids").unwrap().clone(),
            )
        })
        .collect();
    groups.sort_by_key(|(k, _)| *k);
    assert_eq!(groups.len(), 500);
    // 37 is invertible mod 500: each k has one document, the one whose _id maps to it.
    assert!(groups.iter().all(|(k, ids)| {
        let id = ids[0].as_i32().unwrap();
        ids.len() == 1 && (id * 37) % 500 == *k
    }));
    assert_eq!(spill_files(&db), Vec::<String>::new());
    drop(client);
    drop(server);
    let _ = std::fs::remove_file(&db);
}
