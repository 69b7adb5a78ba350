//! The logical session commands (issue 43): sessions started, refreshed and killed show
//! in `$listLocalSessions` as mongod's cache shows them.

use crate::support::{engine, fails, ok};
use bson::spec::BinarySubtype;
use bson::{Binary, Bson, Document, RawDocumentBuf, rawdoc};
use engine::Engine;

fn lsid(byte: u8) -> RawDocumentBuf {
    rawdoc! { "id": Binary { subtype: BinarySubtype::Uuid, bytes: vec![byte; 16] } }
}

/// The session ids `$listLocalSessions` lists, oldest use first.
fn listed(engine: &Engine) -> Vec<Bson> {
    let reply = ok(
        engine,
        "admin",
        rawdoc! { "aggregate": 1, "pipeline": [{ "$listLocalSessions": {} }], "cursor": {} },
    );
    let cursor = reply.get_document("cursor").expect("cursor");
    cursor
        .get_array("firstBatch")
        .expect("batch")
        .iter()
        .map(|entry| {
            let entry = entry.as_document().expect("document");
            entry
                .get_document("_id")
                .expect("_id")
                .get("id")
                .expect("id")
                .clone()
        })
        .collect()
}

#[test]
fn start_session_hands_out_a_new_uuid_with_mongods_timeout() {
    let engine = engine();
    let first = ok(&engine, "admin", rawdoc! { "startSession": 1 });
    assert_eq!(first.get_i32("timeoutMinutes").ok(), Some(30));
    let id = first
        .get_document("id")
        .expect("id")
        .get("id")
        .expect("uuid")
        .clone();
    let Bson::Binary(Binary {
        subtype: BinarySubtype::Uuid,
        bytes,
    }) = &id
    else {
        panic!("a UUID, got {id:?}");
    };
    assert_eq!(bytes.len(), 16);
    assert_eq!(bytes[6] >> 4, 4, "version 4");
    let second = ok(&engine, "admin", rawdoc! { "startSession": 1 });
    assert_ne!(second.get_document("id").expect("id").get("id"), Some(&id));
    assert_eq!(listed(&engine).len(), 2);
}

#[test]
fn refresh_records_and_kill_ends_the_sessions_listed() {
    let engine = engine();
    ok(
        &engine,
        "admin",
        rawdoc! { "refreshSessions": [lsid(1), lsid(2), lsid(3)] },
    );
    assert_eq!(listed(&engine).len(), 3);
    ok(&engine, "admin", rawdoc! { "killSessions": [lsid(2)] });
    let ids = listed(&engine);
    assert_eq!(ids.len(), 2);
    let killed = Document::try_from(lsid(2).as_ref()).expect("doc");
    assert!(!ids.contains(killed.get("id").expect("id")));
    fails(&engine, "admin", rawdoc! { "killSessions": 1 }, 14);
    fails(&engine, "admin", rawdoc! { "refreshSessions": [1] }, 14);
}

#[test]
fn kill_all_sessions_by_pattern_ends_one_session_or_every_owners() {
    let engine = engine();
    ok(
        &engine,
        "admin",
        rawdoc! { "refreshSessions": [lsid(1), lsid(2), lsid(3)] },
    );
    ok(
        &engine,
        "admin",
        rawdoc! { "killAllSessionsByPattern": [{ "lsid": lsid(1) }] },
    );
    assert_eq!(listed(&engine).len(), 2);
    fails(
        &engine,
        "admin",
        rawdoc! { "killAllSessionsByPattern": [{ "nonsense": 1 }] },
        40415,
    );
    assert_eq!(listed(&engine).len(), 2, "a refused pattern kills nothing");
    // Every session here is the unauthenticated user's: a users pattern ends them all.
    ok(
        &engine,
        "admin",
        rawdoc! { "killAllSessionsByPattern": [{ "users": [] }] },
    );
    assert!(listed(&engine).is_empty());
    ok(&engine, "admin", rawdoc! { "refreshSessions": [lsid(4)] });
    ok(&engine, "admin", rawdoc! { "killAllSessionsByPattern": [] });
    assert!(listed(&engine).is_empty());
}

/// `$listSessions` reads `config.system.sessions` (which lists the same sessions as
/// the cache here) and only it, as mongod; a plain aggregate of that collection reads
/// its documents too.
#[test]
fn list_sessions_reads_config_system_sessions() {
    let engine = engine();
    ok(&engine, "db", rawdoc! { "ping": 1, "lsid": lsid(4) });
    let ids = |reply: &Document| -> Vec<Bson> {
        reply
            .get_document("cursor")
            .and_then(|c| c.get_array("firstBatch"))
            .expect("batch")
            .iter()
            .filter_map(|e| {
                e.as_document()?
                    .get_document("_id")
                    .ok()?
                    .get("id")
                    .cloned()
            })
            .collect()
    };
    let expected = vec![Bson::Binary(Binary {
        subtype: BinarySubtype::Uuid,
        bytes: vec![4; 16],
    })];
    for stage in [
        rawdoc! { "$listSessions": {} },
        rawdoc! { "$listSessions": { "allUsers": true } },
    ] {
        let reply = ok(
            &engine,
            "config",
            rawdoc! { "aggregate": "system.sessions", "pipeline": [stage], "cursor": {} },
        );
        assert_eq!(ids(&reply), expected, "{reply}");
    }
    let plain = ok(
        &engine,
        "config",
        rawdoc! { "aggregate": "system.sessions", "pipeline": [{ "$match": {} }], "cursor": {} },
    );
    assert_eq!(ids(&plain), expected, "{plain}");
    let elsewhere = fails(
        &engine,
        "db",
        rawdoc! { "aggregate": "c", "pipeline": [{ "$listSessions": {} }], "cursor": {} },
        73,
    );
    assert!(
        elsewhere
            .get_str("errmsg")
            .is_ok_and(|m| m.contains("config.system.sessions"))
    );
    fails(
        &engine,
        "config",
        rawdoc! {
            "aggregate": "system.sessions",
            "pipeline": [{ "$match": {} }, { "$listSessions": {} }],
            "cursor": {},
        },
        40602,
    );
}
