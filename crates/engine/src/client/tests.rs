//! Unit tests of the client: the handles' auto traits, checked at compile time, and the
//! driver's argument checks, which refuse before the engine is asked.

use super::*;
use bson::doc;

const fn shareable<T: Clone + Send + Sync + 'static>() {}
const fn sendable<T: Send + Sync + 'static>() {}

#[derive(serde::Serialize, serde::Deserialize)]
struct Typed {
    a: i32,
}

const _: () = {
    shareable::<Client>();
    shareable::<Database>();
    shareable::<Collection<Document>>();
    shareable::<Collection<Typed>>();
    sendable::<Cursor<Document>>();
    sendable::<Cursor<Typed>>();
    sendable::<Error>();
    shareable::<WriteModel>();
    shareable::<Namespace>();
    shareable::<SummaryBulkWriteResult>();
};

fn invalid_argument(error: &Error) -> &str {
    match &*error.kind {
        ErrorKind::InvalidArgument { message } => message,
        other => panic!("expected InvalidArgument, got {other:?}"),
    }
}

#[test]
fn updates_must_be_operators_and_replacements_must_not_be() {
    let client = Client::memory();
    let coll = client.database("db").collection::<Document>("c");
    let error = coll
        .update_one(doc! {}, doc! {"a": 1})
        .run()
        .expect_err("no operators");
    assert_eq!(
        invalid_argument(&error),
        "update document must only contain update modifiers"
    );
    let error = coll.update_many(doc! {}, doc! {}).run().expect_err("empty");
    assert_eq!(
        invalid_argument(&error),
        "update document must not be empty"
    );
    let error = coll
        .replace_one(doc! {}, doc! {"$set": {"a": 1}})
        .run()
        .expect_err("operators");
    assert_eq!(
        invalid_argument(&error),
        "replacement document must not contain update modifiers"
    );
    let error = coll
        .insert_many(Vec::<Document>::new())
        .run()
        .expect_err("nothing");
    assert_eq!(
        invalid_argument(&error),
        "No documents provided to insert_many"
    );
}

#[test]
fn a_closed_client_refuses_every_call() {
    let client = Client::memory();
    let coll = client.database("db").collection::<Document>("c");
    coll.insert_one(doc! {"_id": 1}).run().expect("insert");
    client.close().expect("close");
    let error = coll.find_one(doc! {"_id": 1}).run().expect_err("closed");
    assert!(matches!(*error.kind, ErrorKind::Closed), "{error:?}");
    let error = coll.insert_one(doc! {"_id": 2}).run().expect_err("closed");
    assert!(matches!(*error.kind, ErrorKind::Closed), "{error:?}");
}
