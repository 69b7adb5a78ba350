//! `Client::bulk_write`: the summary counts over mixed models and namespaces, one command
//! per run of consecutive models of a kind and namespace, ordered and unordered failures
//! with their model indexes and partial results, the driver's checks before anything
//! runs, a whole command's failure as the error's source, and batches split past
//! `maxWriteBatchSize`.

use bson::{Bson, Document, doc};
use engine::client::{
    BulkWriteError, Client, Collection, DeleteManyModel, DeleteOneModel, Error, ErrorKind,
    InsertOneModel, Namespace, PartialBulkWriteResult, ReplaceOneModel, SummaryBulkWriteResult,
    UpdateManyModel, UpdateOneModel, WriteModel,
};
use serde::{Deserialize, Serialize};
use std::error::Error as _;

fn insert(ns: &Namespace, document: Document) -> WriteModel {
    InsertOneModel::builder()
        .namespace(ns.clone())
        .document(document)
        .build()
        .into()
}

fn commands(client: &Client) -> u64 {
    client.engine().expect("open").stats().snapshot().requests
}

fn all(coll: &Collection<Document>) -> Vec<Document> {
    coll.find(doc! {})
        .sort(doc! {"_id": 1})
        .run()
        .expect("find")
        .collect::<Result<_, _>>()
        .expect("docs")
}

fn bulk_error(error: &Error) -> &BulkWriteError {
    match &*error.kind {
        ErrorKind::BulkWrite(bulk) => bulk,
        other => panic!("expected a bulk write error, got {other:?}"),
    }
}

fn partial(bulk: &BulkWriteError) -> Option<&SummaryBulkWriteResult> {
    bulk.partial_result.as_ref().map(|p| match p {
        PartialBulkWriteResult::Summary(summary) => summary,
        other => panic!("expected a summary, got {other:?}"),
    })
}

#[derive(Debug, PartialEq, Serialize, Deserialize)]
struct Item {
    #[serde(rename = "_id")]
    id: i32,
    qty: i32,
}

#[test]
fn mixed_models_over_two_namespaces_give_the_summary_and_one_command_per_run() {
    let client = Client::memory();
    let db = client.database("shop");
    let items = db.collection::<Item>("items");
    let log = client.database("audit").collection::<Document>("log");
    let (ins, logs) = (items.namespace(), log.namespace());
    assert_eq!(ins.to_string(), "shop.items");
    let models: Vec<WriteModel> = vec![
        items
            .insert_one_model(Item { id: 1, qty: 5 })
            .expect("model")
            .into(),
        items
            .insert_one_model(Item { id: 2, qty: 0 })
            .expect("model")
            .into(),
        items
            .insert_one_model(Item { id: 3, qty: 9 })
            .expect("model")
            .into(),
        insert(&logs, doc! {"event": "restock"}),
        UpdateOneModel::builder()
            .namespace(ins.clone())
            .filter(doc! {"_id": 1})
            .update(doc! {"$inc": {"qty": 1}})
            .build()
            .into(),
        UpdateManyModel::builder()
            .namespace(ins.clone())
            .filter(doc! {"qty": {"$gt": 0}})
            .update(vec![doc! {"$set": {"qty": {"$add": ["$qty", 10]}}}])
            .build()
            .into(),
        UpdateOneModel::builder()
            .namespace(ins.clone())
            .filter(doc! {"_id": 4})
            .update(doc! {"$set": {"qty": 4}})
            .upsert(true)
            .build()
            .into(),
        UpdateOneModel::builder()
            .namespace(ins.clone())
            .filter(doc! {"_id": 99})
            .update(doc! {"$set": {"qty": 1}})
            .build()
            .into(),
        items
            .replace_one_model(doc! {"_id": 2}, Item { id: 2, qty: 2 })
            .expect("model")
            .into(),
        DeleteOneModel::builder()
            .namespace(ins.clone())
            .filter(doc! {"_id": 3})
            .build()
            .into(),
        DeleteManyModel::builder()
            .namespace(logs.clone())
            .filter(doc! {})
            .build()
            .into(),
        insert(&logs, doc! {"_id": "last"}),
    ];
    let before = commands(&client);
    let summary = client.bulk_write(models).run().expect("bulk_write");
    // Runs: 3 inserts | 1 insert (audit) | 4 updates + 1 replace | 1 delete | 1 delete
    // (audit) | 1 insert (audit).
    assert_eq!(commands(&client) - before, 6, "one command per run");
    let mut expected = SummaryBulkWriteResult::default();
    expected.inserted_count = 5;
    expected.matched_count = 1 + 2 + 1;
    expected.modified_count = 1 + 2 + 1;
    expected.upserted_count = 1;
    expected.deleted_count = 2;
    assert_eq!(summary, expected);
    let found: Vec<Item> = items
        .find(doc! {})
        .sort(doc! {"_id": 1})
        .run()
        .expect("find")
        .collect::<Result<_, _>>()
        .expect("items");
    assert_eq!(
        found,
        vec![
            Item { id: 1, qty: 16 },
            Item { id: 2, qty: 2 },
            Item { id: 4, qty: 4 },
        ]
    );
    assert_eq!(all(&log), vec![doc! {"_id": "last"}]);
}

fn duplicate_run(ns: &Namespace) -> Vec<WriteModel> {
    vec![
        insert(ns, doc! {"_id": 1}),
        insert(ns, doc! {"_id": 1}),
        insert(ns, doc! {"_id": 2}),
        UpdateOneModel::builder()
            .namespace(ns.clone())
            .filter(doc! {"_id": 2})
            .update(doc! {"$set": {"_id": 5}})
            .build()
            .into(),
        DeleteOneModel::builder()
            .namespace(ns.clone())
            .filter(doc! {"_id": 1})
            .build()
            .into(),
    ]
}

#[test]
fn ordered_stops_at_the_first_failure_and_unordered_goes_on() {
    let client = Client::memory();
    let coll = client.database("db").collection::<Document>("ordered");
    let error = client
        .bulk_write(duplicate_run(&coll.namespace()))
        .run()
        .expect_err("a duplicate");
    let bulk = bulk_error(&error);
    assert_eq!(bulk.write_errors.len(), 1);
    assert_eq!(bulk.write_errors[&1].code, 11000, "{bulk:?}");
    let written = partial(bulk).expect("the first insert was written");
    assert_eq!(written.inserted_count, 1);
    assert_eq!(all(&coll), vec![doc! {"_id": 1}]);

    let coll = client.database("db").collection::<Document>("unordered");
    let error = client
        .bulk_write(duplicate_run(&coll.namespace()))
        .ordered(false)
        .run()
        .expect_err("a duplicate and an immutable _id");
    let bulk = bulk_error(&error);
    let mut failed: Vec<_> = bulk
        .write_errors
        .iter()
        .map(|(i, e)| (*i, e.code))
        .collect();
    failed.sort_unstable();
    assert_eq!(failed, vec![(1, 11000), (3, 66)]);
    let written = partial(bulk).expect("written");
    assert_eq!((written.inserted_count, written.deleted_count), (2, 1));
    assert_eq!(written.matched_count, 0);
    assert_eq!(all(&coll), vec![doc! {"_id": 2}]);
    assert!(error.source().is_none(), "no command failed as a whole");
}

#[test]
fn a_failure_before_anything_was_written_has_no_partial_result() {
    let client = Client::memory();
    let coll = client.database("db").collection::<Document>("c");
    coll.insert_one(doc! {"_id": 1}).run().expect("insert");
    let ns = coll.namespace();
    let models = [insert(&ns, doc! {"_id": 1}), insert(&ns, doc! {"_id": 2})];
    let error = client.bulk_write(models).run().expect_err("duplicate");
    let bulk = bulk_error(&error);
    assert_eq!(
        bulk.write_errors.keys().copied().collect::<Vec<_>>(),
        vec![0]
    );
    assert_eq!(bulk.partial_result, None);
    assert_eq!(coll.count_documents(doc! {}).run().expect("count"), 1);
}

#[test]
fn models_are_checked_before_anything_runs() {
    let client = Client::memory();
    let coll = client.database("db").collection::<Document>("c");
    let ns = coll.namespace();
    let cases: Vec<(WriteModel, &str)> = vec![
        (
            UpdateOneModel::builder()
                .namespace(ns.clone())
                .filter(doc! {})
                .update(doc! {"qty": 1})
                .build()
                .into(),
            "update document must only contain update modifiers",
        ),
        (
            UpdateManyModel::builder()
                .namespace(ns.clone())
                .filter(doc! {})
                .update(doc! {})
                .build()
                .into(),
            "update document must not be empty",
        ),
        (
            ReplaceOneModel::builder()
                .namespace(ns.clone())
                .filter(doc! {})
                .replacement(doc! {"$set": {"a": 1}})
                .build()
                .into(),
            "replacement document must not contain update modifiers",
        ),
    ];
    for (bad, message) in cases {
        let models = vec![insert(&ns, doc! {"_id": 1}), bad];
        let error = client.bulk_write(models).run().expect_err(message);
        assert!(
            matches!(&*error.kind, ErrorKind::InvalidArgument { message: m } if m == message),
            "{error:?}"
        );
        assert_eq!(coll.count_documents(doc! {}).run().expect("count"), 0);
    }
    let error = client
        .bulk_write(Vec::<WriteModel>::new())
        .run()
        .expect_err("nothing");
    assert!(
        matches!(&*error.kind, ErrorKind::InvalidArgument { message }
            if message == "bulk_write must be provided at least one write operation"),
        "{error:?}"
    );
}

#[test]
fn a_command_failing_whole_ends_the_call_and_is_the_source() {
    let client = Client::memory();
    let good = Namespace::new("db", "c");
    let bad = Namespace::new("bad.db", "c");
    // First: nothing written yet, so the command's error itself.
    let error = client
        .bulk_write([
            insert(&bad, doc! {"_id": 1}),
            insert(&good, doc! {"_id": 1}),
        ])
        .ordered(false)
        .run()
        .expect_err("invalid namespace");
    assert!(
        matches!(&*error.kind, ErrorKind::Command(c) if c.code == 73),
        "{error:?}"
    );
    // After a write: a bulk write error with what was written and the command's as source.
    let error = client
        .bulk_write([
            insert(&good, doc! {"_id": 1}),
            insert(&bad, doc! {"_id": 2}),
            insert(&good, doc! {"_id": 3}),
        ])
        .ordered(false)
        .run()
        .expect_err("invalid namespace");
    let bulk = bulk_error(&error);
    assert!(bulk.write_errors.is_empty());
    assert_eq!(partial(bulk).map(|p| p.inserted_count), Some(1));
    let source = error.source().expect("the command's error");
    let source = source.downcast_ref::<Error>().expect("a client error");
    assert!(
        matches!(&*source.kind, ErrorKind::Command(c) if c.code == 73),
        "{source:?}"
    );
    let coll = client.database("db").collection::<Document>("c");
    assert_eq!(all(&coll), vec![doc! {"_id": 1}], "the third never ran");
}

#[test]
fn batches_split_past_max_write_batch_size_and_count_indexes_across_them() {
    let client = Client::memory();
    let coll = client.database("db").collection::<Document>("big");
    let ns = coll.namespace();
    let mut models: Vec<WriteModel> = (0..100_010).map(|i| insert(&ns, doc! {"_id": i})).collect();
    models[100_005] = insert(&ns, doc! {"_id": 3});
    let before = commands(&client);
    let error = client
        .bulk_write(models)
        .ordered(false)
        .run()
        .expect_err("one duplicate");
    assert_eq!(commands(&client) - before, 2, "two batches");
    let bulk = bulk_error(&error);
    assert_eq!(
        bulk.write_errors.keys().copied().collect::<Vec<_>>(),
        vec![100_005]
    );
    assert_eq!(partial(bulk).map(|p| p.inserted_count), Some(100_009));
    let generated = client
        .bulk_write([insert(&ns, doc! {"name": "no id"})])
        .run()
        .expect("insert");
    assert_eq!(generated.inserted_count, 1);
    let found = coll
        .find_one(doc! {"name": "no id"})
        .run()
        .expect("find")
        .expect("inserted");
    assert!(matches!(found.get("_id"), Some(Bson::ObjectId(_))));
}
