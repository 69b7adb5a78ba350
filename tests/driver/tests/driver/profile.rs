//! The database profiler (issue 22): `profile` levels, `slowms`, `sampleRate` and
//! `filter`, and the `<db>.system.profile` documents in mongod's shape.

use crate::harness::TestServer;
use mongodb::bson::{Document, doc};

fn profile_docs(db: &mongodb::sync::Database) -> Vec<Document> {
    db.collection::<Document>("system.profile")
        .find(doc! {})
        .run()
        .expect("find")
        .collect::<Result<_, _>>()
        .expect("documents")
}

#[test]
fn profile_levels_write_system_profile_as_mongod_shapes_it() {
    let server = TestServer::start(&[]);
    let db = server.client().database("app");
    let coll = db.collection::<Document>("c");
    coll.insert_many(vec![doc! { "_id": 1 }, doc! { "_id": 2 }])
        .run()
        .expect("insert");
    let before = db
        .run_command(doc! { "profile": 2 })
        .run()
        .expect("profile");
    assert_eq!(before.get_i32("was").ok(), Some(0), "{before:?}");
    assert_eq!(before.get_i32("slowms").ok(), Some(100), "{before:?}");
    assert_eq!(before.get_f64("sampleRate").ok(), Some(1.0), "{before:?}");
    let found: Vec<Document> = coll
        .find(doc! {})
        .run()
        .expect("find")
        .collect::<Result<_, _>>()
        .expect("docs");
    assert_eq!(found.len(), 2);
    let profiled = profile_docs(&db);
    let query = profiled
        .iter()
        .find(|d| d.get_str("op").ok() == Some("query"))
        .unwrap_or_else(|| panic!("no query profiled: {profiled:#?}"));
    assert_eq!(query.get_str("ns").ok(), Some("app.c"));
    assert_eq!(
        query
            .get_document("command")
            .and_then(|c| c.get_str("find"))
            .ok(),
        Some("c")
    );
    assert_eq!(query.get_i32("nreturned").ok(), Some(2), "{query:?}");
    assert!(query.get_i32("millis").is_ok_and(|ms| ms >= 0), "{query:?}");
    assert!(query.get_datetime("ts").is_ok(), "{query:?}");
    assert_eq!(query.get_str("client").ok(), Some("127.0.0.1"), "{query:?}");
    assert_eq!(query.get_str("user").ok(), Some(""), "{query:?}");
    // Reading system.profile is not itself profiled.
    let count = profile_docs(&db).len();
    assert_eq!(profile_docs(&db).len(), count);
    let was = db
        .run_command(doc! { "profile": 0 })
        .run()
        .expect("profile");
    assert_eq!(was.get_i32("was").ok(), Some(2));
    coll.find_one(doc! {}).run().expect("find");
    assert_eq!(profile_docs(&db).len(), count, "level 0 profiles nothing");
    // Level 1: only operations slower than slowms.
    db.run_command(doc! { "profile": 1, "slowms": 1_000_000 })
        .run()
        .expect("profile");
    coll.find_one(doc! {}).run().expect("find");
    assert_eq!(profile_docs(&db).len(), count, "nothing is that slow");
    // A filter decides instead of slowms.
    let set = db
        .run_command(doc! { "profile": 1, "filter": { "op": "insert" } })
        .run()
        .expect("profile");
    assert!(set.get_str("note").is_ok(), "{set:?}");
    coll.insert_one(doc! { "_id": 3 }).run().expect("insert");
    coll.find_one(doc! {}).run().expect("find");
    let after = profile_docs(&db);
    assert_eq!(after.len(), count + 1, "{after:#?}");
    assert_eq!(
        after.last().and_then(|d| d.get_str("op").ok()),
        Some("insert")
    );
    let read = db
        .run_command(doc! { "profile": -1 })
        .run()
        .expect("profile");
    assert_eq!(read.get_i32("was").ok(), Some(1));
    assert_eq!(
        read.get_document("filter").ok(),
        Some(&doc! { "op": "insert" })
    );
    // sampleRate 0 at level 2 (the filter unset): nothing is sampled.
    db.run_command(doc! { "profile": 2, "filter": "unset", "sampleRate": 0.0, "slowms": 100 })
        .run()
        .expect("profile");
    coll.find_one(doc! {}).run().expect("find");
    assert_eq!(profile_docs(&db).len(), count + 1);
    for bad in [
        doc! { "profile": 3 },
        doc! { "profile": 1, "sampleRate": 2.0 },
    ] {
        let error = db.run_command(bad).run().expect_err("refused");
        match *error.kind {
            mongodb::error::ErrorKind::Command(ref command) => assert_eq!(command.code, 2),
            ref other => panic!("{other:?}"),
        }
    }
}

/// The last profile document of a `find` with this filter.
fn profiled_find(db: &mongodb::sync::Database, filter: &Document) -> Document {
    profile_docs(db)
        .into_iter()
        .rev()
        .find(|d| {
            d.get_document("command")
                .is_ok_and(|c| c.get_document("filter").ok() == Some(filter))
        })
        .unwrap_or_else(|| panic!("no find with {filter:?} profiled"))
}

/// (keysExamined, docsExamined, nreturned, planSummary) of a profile document.
fn counts(profiled: &Document) -> (i32, i32, i32, &str) {
    (
        profiled.get_i32("keysExamined").unwrap_or(-1),
        profiled.get_i32("docsExamined").unwrap_or(-1),
        profiled.get_i32("nreturned").unwrap_or(-1),
        profiled.get_str("planSummary").unwrap_or("<none>"),
    )
}

#[test]
fn profile_documents_carry_the_execution_counts_and_plan_summary() {
    let server = TestServer::start(&[]);
    let db = server.client().database("app");
    let coll = db.collection::<Document>("c");
    let docs: Vec<Document> = (0..10)
        .map(|i| doc! { "_id": i, "a": i, "b": i % 2 })
        .collect();
    coll.insert_many(docs).run().expect("insert");
    db.run_command(
        doc! { "createIndexes": "c", "indexes": [{ "key": { "a": 1 }, "name": "a_1" }] },
    )
    .run()
    .expect("index");
    db.run_command(doc! { "profile": 2 })
        .run()
        .expect("profile");
    let run = |filter: Document| {
        let found = coll
            .find(filter.clone())
            .run()
            .expect("find")
            .collect::<Result<Vec<_>, _>>()
            .expect("documents");
        (found.len(), profiled_find(&db, &filter))
    };
    // An indexed range: three keys, three documents fetched.
    let (n, indexed) = run(doc! { "a": { "$gte": 7 } });
    assert_eq!(n, 3);
    assert_eq!(
        counts(&indexed),
        (3, 3, 3, "IXSCAN { a: 1 }"),
        "{indexed:?}"
    );
    // The index proposes, the rest of the filter decides: four keys, four fetched, two kept.
    let (n, residual) = run(doc! { "a": { "$lt": 4 }, "b": 1 });
    assert_eq!(n, 2);
    assert_eq!(
        counts(&residual),
        (4, 4, 2, "IXSCAN { a: 1 }"),
        "{residual:?}"
    );
    // A collection scan reads every document and no key.
    let (n, scan) = run(doc! { "b": 1 });
    assert_eq!(n, 5);
    assert_eq!(counts(&scan), (0, 10, 5, "COLLSCAN"), "{scan:?}");
    // An _id point lookup.
    let (n, point) = run(doc! { "_id": 4 });
    assert_eq!(n, 1);
    assert_eq!(counts(&point), (1, 1, 1, "IDHACK"), "{point:?}");
    // A sorted find: the blocking sort's input is the whole collection.
    let sorted = doc! { "b": 0 };
    coll.find(sorted.clone())
        .sort(doc! { "b": -1, "_id": -1 })
        .run()
        .expect("find")
        .for_each(drop);
    assert_eq!(counts(&profiled_find(&db, &sorted)), (0, 10, 5, "COLLSCAN"));
    // A cursor read in batches: the getMores report their own counts and the plan; the
    // find and its getMores together examined each document once.
    let batched = doc! { "a": { "$gte": 0 } };
    let seen = coll
        .find(batched.clone())
        .batch_size(4)
        .run()
        .expect("find")
        .count();
    assert_eq!(seen, 10);
    let first = profiled_find(&db, &batched);
    let more: Vec<Document> = profile_docs(&db)
        .into_iter()
        .filter(|d| d.get_str("op").ok() == Some("getmore"))
        .collect();
    assert!(!more.is_empty(), "getMores profiled");
    let total = |field: &str| {
        first.get_i32(field).unwrap_or(0)
            + more
                .iter()
                .map(|d| d.get_i32(field).unwrap_or(0))
                .sum::<i32>()
    };
    assert_eq!(
        (total("keysExamined"), total("docsExamined")),
        (10, 10),
        "{first:?} {more:?}"
    );
    for getmore in &more {
        assert_eq!(
            getmore.get_str("planSummary").ok(),
            Some("IXSCAN { a: 1 }"),
            "{getmore:?}"
        );
    }
}
