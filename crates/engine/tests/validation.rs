//! Collection validators through the commands: create and collMod of `validator`,
//! `validationLevel`, `validationAction`; inserts, updates, replacements, upserts,
//! findAndModify, `$out` and `$merge` checked; `bypassDocumentValidation`; warnings
//! logged; 121 with mongod's `errInfo`; the options in listCollections and across a
//! reopen.

use crate::support::{contents, engine, fails, ok, options, run, temp_db, write_errors};
use bson::{Bson, Document, doc, rawdoc};
use engine::Engine;

fn schema_collection(engine: &Engine) {
    ok(
        engine,
        "db",
        rawdoc! { "create": "c", "validator": { "$jsonSchema": {
            "bsonType": "object",
            "required": ["name"],
            "properties": { "name": { "bsonType": "string" }, "n": { "minimum": 0 } },
        } } },
    );
}

fn ids(engine: &Engine, coll: &str) -> Vec<Bson> {
    contents(engine, "db", coll)
        .into_iter()
        .map(|d| d.get("_id").cloned().unwrap_or(Bson::Null))
        .collect()
}

fn first_write_error(reply: &Document) -> Document {
    match reply.get_array("writeErrors").ok().and_then(|e| e.first()) {
        Some(Bson::Document(error)) => error.clone(),
        _ => panic!("no write error: {reply}"),
    }
}

#[test]
fn inserts_are_checked_and_failures_carry_err_info() {
    let engine = engine();
    schema_collection(&engine);
    ok(
        &engine,
        "db",
        rawdoc! { "insert": "c", "documents": [{ "_id": 1, "name": "a", "n": 1 }] },
    );
    let reply = ok(
        &engine,
        "db",
        rawdoc! { "insert": "c", "documents": [{ "_id": 2, "name": 5 }, { "_id": 3, "name": "b" }] },
    );
    assert_eq!(write_errors(&reply), vec![(0, 121)], "{reply}");
    assert_eq!(reply.get_i32("n").ok(), Some(0), "ordered: the batch stops");
    let error = first_write_error(&reply);
    assert_eq!(
        error.get_str("errmsg").ok(),
        Some("Document failed validation")
    );
    let info = error.get_document("errInfo").expect("errInfo");
    assert_eq!(info.get_i32("failingDocumentId").ok(), Some(2));
    let details = info.get_document("details").expect("details");
    assert_eq!(details.get_str("operatorName").ok(), Some("$jsonSchema"));
    let rules = details.get_array("schemaRulesNotSatisfied").expect("rules");
    let Some(Bson::Document(rule)) = rules.first() else {
        panic!("{details}")
    };
    assert_eq!(rule.get_str("operatorName").ok(), Some("properties"));
    let keys: Vec<&str> = error.keys().map(String::as_str).collect();
    assert_eq!(keys, ["index", "code", "errInfo", "errmsg"]);
    // Unordered: the valid document after the failing one goes in.
    let reply = ok(
        &engine,
        "db",
        rawdoc! { "insert": "c", "ordered": false, "documents": [{ "_id": 4 }, { "_id": 5, "name": "e" }] },
    );
    assert_eq!(write_errors(&reply), vec![(0, 121)]);
    assert_eq!(ids(&engine, "c"), vec![Bson::Int32(1), Bson::Int32(5)]);
}

#[test]
fn updates_replacements_and_upserts_check_the_new_document() {
    let engine = engine();
    schema_collection(&engine);
    ok(
        &engine,
        "db",
        rawdoc! { "insert": "c", "documents": [{ "_id": 1, "name": "a", "n": 1 }] },
    );
    let cases = [
        rawdoc! { "q": { "_id": 1 }, "u": { "$set": { "n": -1 } } },
        rawdoc! { "q": { "_id": 1 }, "u": { "$unset": { "name": "" } } },
        rawdoc! { "q": { "_id": 1 }, "u": { "other": 1 } },
        rawdoc! { "q": { "_id": 1 }, "u": [{ "$set": { "name": 3 } }] },
        rawdoc! { "q": { "_id": 9 }, "u": { "$set": { "n": 1 } }, "upsert": true },
    ];
    for statement in cases {
        let reply = ok(
            &engine,
            "db",
            rawdoc! { "update": "c", "updates": [statement.clone()] },
        );
        assert_eq!(
            write_errors(&reply),
            vec![(0, 121)],
            "{statement:?}: {reply}"
        );
    }
    assert_eq!(
        contents(&engine, "db", "c"),
        vec![doc! { "_id": 1, "name": "a", "n": 1 }]
    );
    let reply = ok(
        &engine,
        "db",
        rawdoc! { "update": "c", "updates": [{ "q": { "_id": 1 }, "u": { "$set": { "n": 2 } } }] },
    );
    assert_eq!(reply.get_i32("nModified").ok(), Some(1));
    ok(
        &engine,
        "db",
        rawdoc! { "update": "c", "updates": [{ "q": { "_id": 7 }, "u": { "$set": { "name": "u" } }, "upsert": true }] },
    );
    assert_eq!(ids(&engine, "c"), vec![Bson::Int32(1), Bson::Int32(7)]);
}

#[test]
fn find_and_modify_fails_with_121_and_err_info() {
    let engine = engine();
    ok(
        &engine,
        "db",
        rawdoc! { "create": "test", "validator": { "x": { "$type": "string" } } },
    );
    ok(
        &engine,
        "db",
        rawdoc! { "insert": "test", "documents": [{ "_id": 1, "x": "a" }] },
    );
    let reply = fails(
        &engine,
        "db",
        rawdoc! { "findAndModify": "test", "query": { "_id": 1 }, "update": { "$set": { "x": 1 } } },
        121,
    );
    let info = reply.get_document("errInfo").expect("errInfo");
    assert_eq!(info.get_i32("failingDocumentId").ok(), Some(1));
    let details = info.get_document("details").expect("details");
    assert_eq!(details.get_str("operatorName").ok(), Some("$type"));
    fails(
        &engine,
        "db",
        rawdoc! { "findAndModify": "test", "query": { "_id": 2 }, "update": { "$set": { "x": 2 } }, "upsert": true },
        121,
    );
    ok(
        &engine,
        "db",
        rawdoc! { "findAndModify": "test", "query": { "_id": 1 }, "update": { "$set": { "x": 1 } },
        "bypassDocumentValidation": true },
    );
    assert_eq!(
        contents(&engine, "db", "test"),
        vec![doc! { "_id": 1, "x": 1 }]
    );
}

#[test]
fn bypass_document_validation_skips_the_check() {
    let engine = engine();
    schema_collection(&engine);
    let reply = ok(
        &engine,
        "db",
        rawdoc! { "insert": "c", "documents": [{ "_id": 1 }], "bypassDocumentValidation": true },
    );
    assert_eq!(reply.get_i32("n").ok(), Some(1));
    ok(
        &engine,
        "db",
        rawdoc! { "update": "c", "updates": [{ "q": { "_id": 1 }, "u": { "$set": { "n": -5 } } }],
        "bypassDocumentValidation": true },
    );
    let reply = ok(
        &engine,
        "db",
        rawdoc! { "insert": "c", "documents": [{ "_id": 2 }], "bypassDocumentValidation": false },
    );
    assert_eq!(write_errors(&reply), vec![(0, 121)]);
    assert_eq!(
        contents(&engine, "db", "c"),
        vec![doc! { "_id": 1, "n": -5 }]
    );
}

#[test]
fn moderate_lets_updates_of_invalid_documents_through() {
    let engine = engine();
    ok(
        &engine,
        "db",
        rawdoc! { "insert": "c", "documents": [{ "_id": 1, "a": 0 }, { "_id": 2, "a": 5 }] },
    );
    ok(
        &engine,
        "db",
        rawdoc! { "collMod": "c", "validator": { "a": { "$gt": 1 } }, "validationLevel": "moderate" },
    );
    // _id 1 already fails: updating it to another failing document is allowed.
    let reply = ok(
        &engine,
        "db",
        rawdoc! { "update": "c", "updates": [{ "q": { "_id": 1 }, "u": { "$set": { "a": -1 } } }] },
    );
    assert!(write_errors(&reply).is_empty(), "{reply}");
    // _id 2 passes: it may not be made to fail.
    let reply = ok(
        &engine,
        "db",
        rawdoc! { "update": "c", "updates": [{ "q": { "_id": 2 }, "u": { "$set": { "a": -1 } } }] },
    );
    assert_eq!(write_errors(&reply), vec![(0, 121)]);
    // Inserts are checked at every level but off.
    let reply = ok(
        &engine,
        "db",
        rawdoc! { "insert": "c", "documents": [{ "_id": 3, "a": 0 }] },
    );
    assert_eq!(write_errors(&reply), vec![(0, 121)]);
    ok(
        &engine,
        "db",
        rawdoc! { "collMod": "c", "validationLevel": "off" },
    );
    ok(
        &engine,
        "db",
        rawdoc! { "insert": "c", "documents": [{ "_id": 3, "a": 0 }] },
    );
    ok(
        &engine,
        "db",
        rawdoc! { "collMod": "c", "validationLevel": "strict" },
    );
    let reply = ok(
        &engine,
        "db",
        rawdoc! { "update": "c", "updates": [{ "q": { "_id": 1 }, "u": { "$set": { "a": -2 } } }] },
    );
    assert_eq!(
        write_errors(&reply),
        vec![(0, 121)],
        "strict checks every update"
    );
}

#[test]
fn warn_lets_the_write_through_and_logs_it() {
    let engine = engine();
    ok(
        &engine,
        "db",
        rawdoc! { "create": "c", "validator": { "a": { "$exists": true } }, "validationAction": "warn" },
    );
    let reply = ok(
        &engine,
        "db",
        rawdoc! { "insert": "c", "documents": [{ "_id": 1, "b": 1 }] },
    );
    assert!(write_errors(&reply).is_empty(), "{reply}");
    assert_eq!(ids(&engine, "c"), vec![Bson::Int32(1)]);
    let log = run(&engine, "admin", rawdoc! { "getLog": "global" });
    let lines = log.get_array("log").expect("log");
    let line = lines
        .iter()
        .filter_map(Bson::as_str)
        .find(|l| l.contains("Document would fail validation"))
        .unwrap_or_else(|| panic!("no warning logged: {log}"));
    assert!(
        line.contains("\"id\":20294") && line.contains("\"s\":\"W\""),
        "{line}"
    );
    assert!(line.contains("failingDocumentId"), "{line}");
}

#[test]
fn coll_mod_and_list_collections_show_the_options() {
    let engine = engine();
    ok(
        &engine,
        "db",
        rawdoc! { "create": "c", "validator": { "a": 1 } },
    );
    let list = |engine: &Engine| {
        let reply = ok(
            engine,
            "db",
            rawdoc! { "listCollections": 1, "filter": { "name": "c" } },
        );
        let batch = reply
            .get_document("cursor")
            .and_then(|c| c.get_array("firstBatch"))
            .expect("batch")
            .clone();
        match batch.first() {
            Some(Bson::Document(info)) => info.get_document("options").expect("options").clone(),
            _ => panic!("{reply}"),
        }
    };
    assert_eq!(list(&engine), doc! { "validator": { "a": 1 } });
    ok(
        &engine,
        "db",
        rawdoc! { "collMod": "c", "validator": { "b": { "$gt": 2 } }, "validationAction": "warn" },
    );
    assert_eq!(
        list(&engine),
        doc! { "validator": { "b": { "$gt": 2 } }, "validationAction": "warn" }
    );
    fails(
        &engine,
        "db",
        rawdoc! { "collMod": "c", "validator": { "$where": "1" } },
        2,
    );
    fails(
        &engine,
        "db",
        rawdoc! { "collMod": "c", "validationLevel": "always" },
        2,
    );
    fails(
        &engine,
        "db",
        rawdoc! { "collMod": "c", "colour": 1 },
        40415,
    );
    fails(
        &engine,
        "db",
        rawdoc! { "collMod": "missing", "validator": {} },
        26,
    );
    fails(
        &engine,
        "db",
        rawdoc! { "create": "d", "validator": { "$jsonSchema": { "type": "integer" } } },
        9,
    );
    fails(
        &engine,
        "admin",
        rawdoc! { "create": "d", "validator": { "a": 1 } },
        72,
    );
    ok(&engine, "db", rawdoc! { "collMod": "c", "validator": {} });
    assert_eq!(
        list(&engine),
        doc! { "validationAction": "warn" },
        "an empty validator is none"
    );
    ok(
        &engine,
        "db",
        rawdoc! { "insert": "c", "documents": [{ "_id": 1 }] },
    );
}

#[test]
fn out_and_merge_targets_are_checked() {
    let engine = engine();
    ok(
        &engine,
        "db",
        rawdoc! { "insert": "src", "documents": [{ "_id": 1, "a": 1 }, { "_id": 2, "a": 5 }] },
    );
    ok(
        &engine,
        "db",
        rawdoc! { "create": "out", "validator": { "a": { "$lt": 3 } } },
    );
    ok(
        &engine,
        "db",
        rawdoc! { "insert": "out", "documents": [{ "_id": 0, "a": 0 }] },
    );
    fails(
        &engine,
        "db",
        rawdoc! { "aggregate": "src", "pipeline": [{ "$out": "out" }], "cursor": {} },
        121,
    );
    assert_eq!(
        ids(&engine, "out"),
        vec![Bson::Int32(0)],
        "the target stays as it was"
    );
    fails(
        &engine,
        "db",
        rawdoc! { "aggregate": "src", "pipeline": [{ "$merge": { "into": "out" } }], "cursor": {} },
        121,
    );
    ok(
        &engine,
        "db",
        rawdoc! { "aggregate": "src", "pipeline": [{ "$out": "out" }], "cursor": {},
        "bypassDocumentValidation": true },
    );
    assert_eq!(ids(&engine, "out"), vec![Bson::Int32(1), Bson::Int32(2)]);
}

#[test]
fn validators_survive_a_reopen() {
    let path = temp_db("validators-reopen", "data.mfdb");
    {
        let engine = Engine::open(&path, options()).expect("open");
        ok(
            &engine,
            "db",
            rawdoc! { "create": "c", "validator": { "a": { "$type": "int" } } },
        );
        // collMod after the last checkpoint: only the log holds it.
        ok(
            &engine,
            "db",
            rawdoc! { "collMod": "c", "validator": { "a": { "$type": "string" } } },
        );
    }
    let engine = Engine::open(&path, options()).expect("reopen");
    let reply = ok(
        &engine,
        "db",
        rawdoc! { "insert": "c", "documents": [{ "_id": 1, "a": 1 }] },
    );
    assert_eq!(write_errors(&reply), vec![(0, 121)]);
    ok(
        &engine,
        "db",
        rawdoc! { "insert": "c", "documents": [{ "_id": 2, "a": "s" }] },
    );
    engine.close().expect("close");
    drop(engine);
    let engine = Engine::open(&path, options()).expect("reopen after a clean close");
    let reply = ok(
        &engine,
        "db",
        rawdoc! { "insert": "c", "documents": [{ "_id": 3, "a": 3 }] },
    );
    assert_eq!(write_errors(&reply), vec![(0, 121)]);
    assert_eq!(ids(&engine, "c"), vec![Bson::Int32(2)]);
}
