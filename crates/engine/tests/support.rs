//! Shared helpers: an in-memory engine with a fixed clock, running commands, and reading
//! a collection back through the store (not through find).

use bson::{Bson, Document, RawDocumentBuf};
use engine::store::Namespace;
use engine::{ConnectionContext, Engine, EngineOptions, FixedHost};
use std::sync::Arc;

/// The fixed clock of test engines (2023-11-14T22:13:20Z).
pub const NOW_MILLIS: i64 = 1_700_000_000_000;

/// The options of a test engine.
pub fn options() -> EngineOptions {
    EngineOptions {
        host: Arc::new(FixedHost {
            now_millis: NOW_MILLIS,
            ..FixedHost::default()
        }),
        startup: engine::StartupOptions::default(),
        connections_max: 10,
        ttl_interval: None,
    }
}

/// A fresh in-memory engine.
pub fn engine() -> Engine {
    Engine::new(options())
}

/// Runs `cmd` against `db` and returns the reply.
pub fn run(engine: &Engine, db: &str, cmd: RawDocumentBuf) -> Document {
    let reply = engine.run_command(db, &cmd, &ConnectionContext::default());
    Document::try_from(&reply).expect("replies are valid BSON")
}

/// Runs `cmd` and asserts it succeeded.
pub fn ok(engine: &Engine, db: &str, cmd: RawDocumentBuf) -> Document {
    let reply = run(engine, db, cmd.clone());
    assert_eq!(reply.get_f64("ok").ok(), Some(1.0), "{cmd:?} → {reply:?}");
    reply
}

/// Runs `cmd`, asserts it failed with `code`, and returns the reply.
pub fn fails(engine: &Engine, db: &str, cmd: RawDocumentBuf, code: i32) -> Document {
    let reply = run(engine, db, cmd.clone());
    assert_eq!(reply.get_f64("ok").ok(), Some(0.0), "{cmd:?} → {reply:?}");
    assert_eq!(
        reply.get_i32("code").ok(),
        Some(code),
        "{cmd:?} → {reply:?}"
    );
    reply
}

/// The documents of `db.coll` in natural (record id) order, read through a store snapshot.
pub fn contents(engine: &Engine, db: &str, coll: &str) -> Vec<Document> {
    let store = engine.store();
    let reader = store.read().expect("read");
    let Some(meta) = reader
        .collection(&Namespace::new(db, coll))
        .expect("catalog")
    else {
        return Vec::new();
    };
    reader
        .scan(&meta, None)
        .expect("scan")
        .map(|entry| {
            let (_, bytes) = entry.expect("record");
            let raw = RawDocumentBuf::from_bytes(bytes.into_owned()).expect("stored BSON");
            Document::try_from(&raw).expect("stored documents decode")
        })
        .collect()
}

/// The names of the collections of `db`, in order.
pub fn collections(engine: &Engine, db: &str) -> Vec<String> {
    let store = engine.store();
    let reader = store.read().expect("read");
    reader
        .collections(Some(db))
        .expect("catalog")
        .into_iter()
        .map(|(ns, _)| ns.coll)
        .collect()
}

/// The `writeErrors` of a reply as `(index, code)` pairs.
pub fn write_errors(reply: &Document) -> Vec<(i32, i32)> {
    let Ok(errors) = reply.get_array("writeErrors") else {
        return Vec::new();
    };
    errors
        .iter()
        .map(|error| match error {
            Bson::Document(error) => (
                error.get_i32("index").expect("index"),
                error.get_i32("code").expect("code"),
            ),
            other => panic!("write error is not a document: {other:?}"),
        })
        .collect()
}

/// A fresh, empty directory for test `name`; returns the path of database file `file` in it.
pub fn temp_db(name: &str, file: &str) -> std::path::PathBuf {
    let dir = std::env::temp_dir().join(format!("mfdb-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).expect("temp dir");
    dir.join(file)
}
