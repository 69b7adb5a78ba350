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
