//! Schema validation through the official Rust driver (issue 48): a `$jsonSchema`
//! validator given to `create_collection`, a refused insert reported as the driver reports
//! mongod's (code 121, `errInfo` in `WriteError::details`), `bypass_document_validation`,
//! and a `warn` collection's line in the server's log.

use crate::harness::TestServer;
use mongodb::bson::{Bson, Document, doc};
use mongodb::error::{ErrorKind, WriteFailure};
use mongodb::options::ValidationAction;
use mongodb::sync::Collection;

#[test]
fn a_refused_insert_is_121_with_err_info() {
    let server = TestServer::start(&[]);
    let client = server.client();
    let db = client.database("app");
    db.create_collection("people")
        .validator(doc! { "$jsonSchema": {
            "bsonType": "object",
            "required": ["name", "born"],
            "properties": {
                "name": { "bsonType": "string", "description": "must be a string" },
                "born": { "bsonType": "int", "minimum": 1800 },
            },
        } })
        .run()
        .expect("create_collection");
    let people: Collection<Document> = db.collection("people");
    people
        .insert_one(doc! { "_id": 1, "name": "Ada", "born": 1815 })
        .run()
        .expect("a valid document");
    let error = people
        .insert_one(doc! { "_id": 2, "name": "Bob", "born": 1700 })
        .run()
        .expect_err("born too early");
    let ErrorKind::Write(WriteFailure::WriteError(failure)) = *error.kind else {
        panic!("not a write error: {error:?}");
    };
    assert_eq!(failure.code, 121);
    assert_eq!(failure.message, "Document failed validation");
    let info = failure.details.expect("errInfo");
    assert_eq!(info.get_i32("failingDocumentId").ok(), Some(2));
    let details = info.get_document("details").expect("details");
    assert_eq!(details.get_str("operatorName").ok(), Some("$jsonSchema"));
    let rules = details.get_array("schemaRulesNotSatisfied").expect("rules");
    let Some(Bson::Document(rule)) = rules.first() else {
        panic!("{details}")
    };
    assert_eq!(rule.get_str("operatorName").ok(), Some("properties"));
    people
        .insert_one(doc! { "_id": 3, "name": 7 })
        .bypass_document_validation(true)
        .run()
        .expect("bypassed");
    let ids: Vec<Bson> = people
        .find(doc! {})
        .run()
        .expect("find")
        .map(|d| d.expect("doc").get("_id").cloned().expect("_id"))
        .collect();
    assert_eq!(ids, [Bson::Int32(1), Bson::Int32(3)]);
    let infos = db
        .run_command(doc! { "listCollections": 1, "filter": { "name": "people" } })
        .run()
        .expect("listCollections");
    let first = infos
        .get_document("cursor")
        .and_then(|c| c.get_array("firstBatch"))
        .expect("batch")[0]
        .as_document()
        .expect("info")
        .clone();
    assert!(
        first
            .get_document("options")
            .expect("options")
            .contains_key("validator"),
        "{first}"
    );
}

#[test]
fn a_warn_collection_logs_and_stores() {
    let server = TestServer::start(&[]);
    let client = server.client();
    let db = client.database("app");
    db.create_collection("events")
        .validator(doc! { "kind": { "$in": ["a", "b"] } })
        .validation_action(ValidationAction::Warn)
        .run()
        .expect("create_collection");
    let events: Collection<Document> = db.collection("events");
    events
        .insert_one(doc! { "_id": 1, "kind": "z" })
        .run()
        .expect("warn lets it through");
    assert_eq!(events.count_documents(doc! {}).run().expect("count"), 1);
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(5);
    while !server.log_contains("Document would fail validation") {
        assert!(
            std::time::Instant::now() < deadline,
            "{:?}",
            server.log_lines()
        );
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
}
