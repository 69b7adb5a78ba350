//! Wildcard indexes through the official Rust driver (issue 26): creating `$**` and
//! `a.$**` indexes and ones with a `wildcardProjection`, mongod's refusals (codes and
//! words), listing, queries and hints through them with explain's expanded `IXSCAN`,
//! `collMod` hiding one, `validate`, `collStats` and dropping by name and key pattern.

use crate::harness::TestServer;
use mongodb::IndexModel;
use mongodb::bson::{Bson, Document, doc};
use mongodb::error::ErrorKind;
use mongodb::options::{Hint, IndexOptions};
use mongodb::sync::{Collection, Database};

fn model(keys: Document, options: IndexOptions) -> IndexModel {
    IndexModel::builder().keys(keys).options(options).build()
}

/// The code and message of a command error.
fn command_error(error: &mongodb::error::Error) -> (i32, String) {
    match *error.kind {
        ErrorKind::Command(ref failure) => (failure.code, failure.message.clone()),
        ref other => panic!("expected a command error, got {other:?}"),
    }
}

/// The input stage of the winning plan of `find` with `filter` (and `hint`).
fn winning_scan(db: &Database, filter: Document, hint: Option<Bson>) -> Document {
    let mut find = doc! { "find": "docs", "filter": filter };
    if let Some(hint) = hint {
        find.insert("hint", hint);
    }
    let reply = db
        .run_command(doc! { "explain": find, "verbosity": "queryPlanner" })
        .run()
        .expect("explain");
    let winning = reply
        .get_document("queryPlanner")
        .and_then(|p| p.get_document("winningPlan"))
        .expect("winningPlan")
        .clone();
    winning
        .get_document("inputStage")
        .cloned()
        .unwrap_or(winning)
}

fn ids(coll: &Collection<Document>, filter: Document, hint: Option<Hint>) -> Vec<i32> {
    let find = coll.find(filter);
    let find = match hint {
        Some(hint) => find.hint(hint),
        None => find,
    };
    let mut found: Vec<i32> = find
        .run()
        .expect("find")
        .map(|d| d.expect("doc").get_i32("_id").expect("_id"))
        .collect();
    found.sort_unstable();
    found
}

#[test]
fn wildcard_indexes_are_created_listed_refused_and_dropped_as_mongod_does() {
    let server = TestServer::start(&[]);
    let client = server.client();
    let db = client.database("app");
    let docs: Collection<Document> = db.collection("docs");
    let created = docs
        .create_index(IndexModel::builder().keys(doc! { "$**": 1 }).build())
        .run()
        .expect("$**");
    assert_eq!(created.index_name, "$**_1");
    let created = docs
        .create_indexes(vec![
            IndexModel::builder().keys(doc! { "attrs.$**": -1 }).build(),
            model(
                doc! { "$**": 1 },
                IndexOptions::builder()
                    .name("profile".to_owned())
                    .wildcard_projection(doc! { "profile.name": 1, "_id": 1 })
                    .build(),
            ),
        ])
        .run()
        .expect("a.$** and a projection");
    assert_eq!(created.index_names, ["attrs.$**_-1", "profile"]);
    // The same index again is a no-op; the same key with another projection is another
    // index (the projection is part of the signature).
    docs.create_index(IndexModel::builder().keys(doc! { "$**": 1 }).build())
        .run()
        .expect("again");
    let listed = db
        .run_command(doc! { "listIndexes": "docs" })
        .run()
        .expect("listIndexes");
    let batch = listed
        .get_document("cursor")
        .and_then(|c| c.get_array("firstBatch"))
        .expect("firstBatch");
    assert_eq!(batch.len(), 4);
    assert_eq!(
        batch[3].as_document(),
        Some(&doc! {
            "v": 2,
            "key": { "$**": 1 },
            "name": "profile",
            "wildcardProjection": { "profile.name": 1, "_id": 1 },
        })
    );

    let refused = |keys: Document, options: IndexOptions| {
        let error = docs
            .create_index(model(keys, options))
            .run()
            .expect_err("refused");
        command_error(&error)
    };
    let (code, message) = refused(
        doc! { "$**": 1 },
        IndexOptions::builder().sparse(true).build(),
    );
    assert_eq!(code, 67);
    assert!(
        message
            .ends_with(":: caused by :: Index type 'wildcard' does not support the sparse option"),
        "{message}"
    );
    let (code, message) = refused(
        doc! { "$**": 1 },
        IndexOptions::builder().unique(true).build(),
    );
    assert_eq!(code, 67);
    assert!(
        message.ends_with("does not support the unique option"),
        "{message}"
    );
    let (code, message) = refused(
        doc! { "a.$**": 1 },
        IndexOptions::builder()
            .expire_after(std::time::Duration::from_secs(60))
            .build(),
    );
    assert_eq!(code, 67);
    assert!(
        message.ends_with("Index type 'wildcard' cannot be a TTL index"),
        "{message}"
    );
    let (code, message) = refused(
        doc! { "$**": 1 },
        IndexOptions::builder()
            .name("mixed".to_owned())
            .wildcard_projection(doc! { "a": 1, "b": 0 })
            .build(),
    );
    assert_eq!(code, 31254);
    assert!(
        message.ends_with(
            "Failed to parse projection: wildcardProjection :: caused by :: Cannot do exclusion \
             on field b in inclusion projection"
        ),
        "{message}"
    );
    let (code, _) = refused(
        doc! { "a.$**": 1 },
        IndexOptions::builder()
            .wildcard_projection(doc! { "a": 1 })
            .build(),
    );
    assert_eq!(code, 9);
    let (code, _) = refused(doc! { "$**": 1, "b": 1 }, IndexOptions::default());
    assert_eq!(code, 67, "compound on all fields needs a projection");
    let (code, message) = refused(doc! { "k": 1, "attrs.$**": 1 }, IndexOptions::default());
    assert_eq!(code, 238, "{message}");
    assert_eq!(
        refused(doc! { "a.$**": 1, "$**": 1 }, IndexOptions::default()).0,
        7246201
    );

    // By key pattern, `{$**: 1}` names two indexes: mongod asks for a name.
    docs.drop_index("$**_1").run().expect("drop by name");
    let error = docs.drop_index("$**_1").run().expect_err("dropped twice");
    assert_eq!(command_error(&error).0, 27);
    docs.create_index(IndexModel::builder().keys(doc! { "$**": 1 }).build())
        .run()
        .expect("recreate");
    let error = db
        .run_command(doc! { "dropIndexes": "docs", "index": { "$**": 1 } })
        .run()
        .expect_err("ambiguous");
    assert_eq!(command_error(&error).0, 289);
    let dropped = db
        .run_command(doc! { "dropIndexes": "docs", "index": { "attrs.$**": -1 } })
        .run()
        .expect("by key pattern");
    assert!(matches!(dropped.get("nIndexesWas"), Some(Bson::Int32(4))));
    assert_eq!(
        docs.list_index_names().run().expect("names"),
        ["_id_", "profile", "$**_1"]
    );
}

#[test]
fn queries_hints_collmod_validate_and_stats_through_a_wildcard_index() {
    let server = TestServer::start(&[]);
    let client = server.client();
    let db = client.database("app");
    let docs: Collection<Document> = db.collection("docs");
    docs.insert_many(vec![
        doc! { "_id": 1, "attrs": { "color": "red", "size": 3 }, "tags": ["x", "y"] },
        doc! { "_id": 2, "attrs": { "color": "blue", "size": [1, 5] } },
        doc! { "_id": 3, "attrs": { "size": 9 }, "other": 1 },
        doc! { "_id": 4, "attrs": [] },
    ])
    .run()
    .expect("insert");
    docs.create_index(IndexModel::builder().keys(doc! { "attrs.$**": 1 }).build())
        .run()
        .expect("build over documents");
    let scan = winning_scan(&db, doc! { "attrs.size": { "$gt": 4 } }, None);
    assert_eq!(scan.get_str("stage").ok(), Some("IXSCAN"), "{scan:?}");
    assert_eq!(
        scan.get_document("keyPattern").ok(),
        Some(&doc! { "$_path": 1, "attrs.size": 1 })
    );
    assert_eq!(
        scan.get_document("indexBounds").ok(),
        Some(
            &doc! { "$_path": ["[\"attrs.size\", \"attrs.size\"]"], "attrs.size": ["(4, inf.0]"] }
        )
    );
    assert_eq!(
        scan.get_document("multiKeyPaths").ok(),
        Some(&doc! { "$_path": [], "attrs.size": ["attrs", "attrs.size"] }),
        "`attrs: []` made `attrs` multikey too"
    );
    assert_eq!(
        ids(&docs, doc! { "attrs.size": { "$gt": 4 } }, None),
        [2, 3]
    );
    assert_eq!(ids(&docs, doc! { "attrs.color": "red" }, None), [1]);
    assert_eq!(ids(&docs, doc! { "attrs": [] }, None), [4]);
    assert_eq!(
        ids(&docs, doc! { "attrs.color": { "$exists": true } }, None),
        [1, 2]
    );
    // Not answered by the index, answered right all the same.
    assert_eq!(ids(&docs, doc! { "attrs.color": Bson::Null }, None), [3]);
    assert_eq!(
        winning_scan(&db, doc! { "attrs.color": Bson::Null }, None)
            .get_str("stage")
            .ok(),
        Some("COLLSCAN")
    );
    // Hints by name and by key pattern; a hint on a path the index leaves out is 291.
    let by_name = Hint::Name("attrs.$**_1".to_owned());
    let by_key = Hint::Keys(doc! { "attrs.$**": 1 });
    assert_eq!(ids(&docs, doc! { "attrs.size": 9 }, Some(by_name)), [3]);
    assert_eq!(
        ids(&docs, doc! { "attrs.size": 1 }, Some(by_key.clone())),
        [2]
    );
    let error = docs
        .find(doc! { "other": 1 })
        .hint(by_key)
        .run()
        .expect_err("path not covered");
    let (code, message) = command_error(&error);
    assert_eq!(code, 291);
    assert!(message.ends_with("No query solutions"), "{message}");
    let count = docs
        .count_documents(doc! { "attrs.size": { "$lte": 3 } })
        .run()
        .expect("count");
    assert_eq!(count, 2);
    let updated = docs
        .update_many(
            doc! { "attrs.color": "blue" },
            doc! { "$set": { "attrs.size": 2 } },
        )
        .run()
        .expect("update through the index");
    assert_eq!(updated.modified_count, 1);
    assert_eq!(ids(&docs, doc! { "attrs.size": 2 }, None), [2]);

    // collMod hides it from the planner and its hints, and shows it again.
    let changed = db
        .run_command(doc! { "collMod": "docs", "index": { "keyPattern": { "attrs.$**": 1 }, "hidden": true } })
        .run()
        .expect("hide");
    assert_eq!(changed.get_bool("hidden_new").ok(), Some(true));
    assert_eq!(
        winning_scan(&db, doc! { "attrs.size": 2 }, None)
            .get_str("stage")
            .ok(),
        Some("COLLSCAN")
    );
    db.run_command(doc! { "collMod": "docs", "index": { "name": "attrs.$**_1", "hidden": false } })
        .run()
        .expect("unhide");
    assert_eq!(
        winning_scan(&db, doc! { "attrs.size": 2 }, None)
            .get_str("indexName")
            .ok(),
        Some("attrs.$**_1")
    );

    let valid = db
        .run_command(doc! { "validate": "docs", "full": true })
        .run()
        .expect("validate");
    assert_eq!(valid.get_bool("valid").ok(), Some(true), "{valid:?}");
    // attrs.color x2, attrs.size x2 (doc 1, 3), doc 2's size is 2 now, attrs: [] → 6.
    assert_eq!(
        valid.get_document("keysPerIndex").ok(),
        Some(&doc! { "_id_": 4, "attrs.$**_1": 6 })
    );
    let stats = db
        .run_command(doc! { "collStats": "docs" })
        .run()
        .expect("collStats");
    let sizes = stats.get_document("indexSizes").expect("indexSizes");
    let size = sizes.get("attrs.$**_1").and_then(Bson::as_i64).or_else(|| {
        sizes
            .get("attrs.$**_1")
            .and_then(Bson::as_i32)
            .map(i64::from)
    });
    assert!(size.is_some_and(|s| s > 0), "{stats:?}");
    assert!(
        matches!(stats.get("nindexes"), Some(Bson::Int32(2))),
        "{stats:?}"
    );
}
