//! TTL indexes through the official Rust driver (issue 26): a server started with
//! `--ttl-sweep-secs 1` deletes the documents of a TTL index whose dates have passed, and
//! keeps the others; serverStatus counts the deletes and getParameter reports the setting.

use crate::harness::TestServer;
use mongodb::IndexModel;
use mongodb::bson::{Bson, DateTime, Document, doc};
use mongodb::options::IndexOptions;
use mongodb::sync::Collection;
use std::time::{Duration, Instant};

#[test]
fn expired_documents_are_deleted_by_the_monitor_and_the_others_kept() {
    let server = TestServer::start(&["--ttl-sweep-secs", "1"]);
    let client = server.client();
    let sessions: Collection<Document> = client.database("app").collection("sessions");
    let created = sessions
        .create_index(
            IndexModel::builder()
                .keys(doc! { "lastSeen": 1 })
                .options(
                    IndexOptions::builder()
                        .expire_after(Duration::from_secs(0))
                        .build(),
                )
                .build(),
        )
        .run()
        .expect("create_index");
    assert_eq!(created.index_name, "lastSeen_1");
    let now = DateTime::now().timestamp_millis();
    let at = |offset: i64| Bson::DateTime(DateTime::from_millis(now + offset));
    sessions
        .insert_many(vec![
            doc! { "_id": "old", "lastSeen": at(-3_600_000) },
            doc! { "_id": "old_array", "lastSeen": [at(86_400_000), at(-60_000)] },
            doc! { "_id": "future", "lastSeen": at(86_400_000) },
            doc! { "_id": "not_a_date", "lastSeen": "2000-01-01" },
            doc! { "_id": "missing" },
        ])
        .run()
        .expect("insert");
    let remaining = || -> Vec<String> {
        let mut ids: Vec<String> = sessions
            .find(doc! {})
            .run()
            .expect("find")
            .map(|d| d.expect("document").get_str("_id").expect("_id").to_owned())
            .collect();
        ids.sort();
        ids
    };
    let deadline = Instant::now() + Duration::from_secs(10);
    while remaining().len() > 3 && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(100));
    }
    assert_eq!(remaining(), ["future", "missing", "not_a_date"]);
    let admin = client.database("admin");
    let status = admin
        .run_command(doc! { "serverStatus": 1 })
        .run()
        .expect("serverStatus");
    let ttl = status
        .get_document("metrics")
        .and_then(|m| m.get_document("ttl"))
        .expect("metrics.ttl");
    assert_eq!(ttl.get_i64("deletedDocuments").ok(), Some(2), "{ttl:?}");
    assert!(ttl.get_i64("passes").unwrap_or(0) >= 1, "{ttl:?}");
    let parameters = admin
        .run_command(doc! { "getParameter": 1, "ttlMonitorSleepSecs": 1, "ttlMonitorEnabled": 1 })
        .run()
        .expect("getParameter");
    assert_eq!(parameters.get_i32("ttlMonitorSleepSecs").ok(), Some(1));
    assert_eq!(parameters.get_bool("ttlMonitorEnabled").ok(), Some(true));
    let validate = client
        .database("app")
        .run_command(doc! { "validate": "sessions" })
        .run()
        .expect("validate");
    assert_eq!(validate.get_bool("valid").ok(), Some(true), "{validate:?}");
}

#[test]
fn ttl_sweep_secs_0_turns_the_monitor_off() {
    let server = TestServer::start(&["--ttl-sweep-secs", "0"]);
    let client = server.client();
    let parameters = client
        .database("admin")
        .run_command(doc! { "getParameter": 1, "ttlMonitorEnabled": 1 })
        .run()
        .expect("getParameter");
    assert_eq!(parameters.get_bool("ttlMonitorEnabled").ok(), Some(false));
}
