//! Acknowledged writes and catalog changes survive a restart without a clean close: the
//! engine is dropped (the log is replayed on open), and dropped or renamed collections
//! stay gone.

use crate::support::{collections, contents, fails, ok, options};
use bson::{Document, doc, rawdoc};
use engine::Engine;
use engine::store::Namespace;
use std::path::PathBuf;

/// A database path in a fresh temporary directory, removed on drop.
struct TempDb {
    dir: PathBuf,
}

impl TempDb {
    fn new(name: &str) -> TempDb {
        let dir = std::env::temp_dir().join(format!(
            "mfdb-engine-{name}-{}-{}",
            std::process::id(),
            std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .map_or(0, |d| d.as_nanos())
        ));
        std::fs::create_dir_all(&dir).expect("temp dir");
        TempDb { dir }
    }

    fn path(&self) -> PathBuf {
        self.dir.join("data.mfdb")
    }
}

impl Drop for TempDb {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

#[test]
fn acknowledged_writes_survive_a_restart_without_close() {
    let temp = TempDb::new("restart");
    {
        let engine = Engine::open(&temp.path(), options()).expect("open");
        ok(
            &engine,
            "app",
            rawdoc! { "create": "users", "validationLevel": "moderate" },
        );
        ok(
            &engine,
            "app",
            rawdoc! {
                "insert": "users",
                "documents": [{ "_id": 1, "n": "a" }, { "_id": 2, "n": "b" }, { "_id": 3, "n": "c" }],
            },
        );
        ok(
            &engine,
            "app",
            rawdoc! {
                "update": "users",
                "updates": [
                    { "q": { "_id": 2 }, "u": { "$set": { "n": "B" } } },
                    { "q": { "_id": 4 }, "u": { "$set": { "n": "d" } }, "upsert": true },
                ],
            },
        );
        ok(
            &engine,
            "app",
            rawdoc! { "delete": "users", "deletes": [{ "q": { "_id": 1 }, "limit": 1 }] },
        );
        ok(
            &engine,
            "app",
            rawdoc! {
                "findAndModify": "users", "query": { "_id": 3 }, "update": { "$inc": { "k": 1 } },
            },
        );
        ok(
            &engine,
            "app",
            rawdoc! { "insert": "temp", "documents": [{ "_id": 1 }] },
        );
        ok(&engine, "app", rawdoc! { "drop": "temp" });
        ok(
            &engine,
            "app",
            rawdoc! { "insert": "old", "documents": [{ "_id": 1 }] },
        );
        ok(
            &engine,
            "admin",
            rawdoc! { "renameCollection": "app.old", "to": "app.new" },
        );
        ok(
            &engine,
            "gone",
            rawdoc! { "insert": "x", "documents": [{ "_id": 1 }] },
        );
        ok(&engine, "gone", rawdoc! { "dropDatabase": 1 });
        // Dropped without close: the next open must replay the log.
    }
    let engine = Engine::open(&temp.path(), options()).expect("reopen");
    assert_eq!(
        contents(&engine, "app", "users"),
        vec![
            doc! { "_id": 2, "n": "B" },
            doc! { "_id": 3, "n": "c", "k": 1 },
            doc! { "_id": 4, "n": "d" },
        ]
    );
    assert_eq!(
        collections(&engine, "app"),
        vec!["new".to_owned(), "users".to_owned()]
    );
    assert!(collections(&engine, "gone").is_empty());
    let store = engine.store();
    let reader = store.read().expect("read");
    let meta = reader
        .collection(&Namespace::new("app", "users"))
        .expect("catalog")
        .expect("users");
    assert_eq!(
        bson::Document::try_from(&meta.options).expect("options"),
        doc! { "validationLevel": "moderate" }
    );
    drop(reader);
    drop(store); // a held store keeps the file (and its lock) open
    engine.store().verify().expect("verify after replay");
    let valid = ok(&engine, "app", rawdoc! { "validate": "users" });
    assert_eq!(valid.get_bool("valid").ok(), Some(true));
    // Writes go on after the restart, and a clean close leaves one file.
    ok(
        &engine,
        "app",
        rawdoc! { "insert": "users", "documents": [{ "_id": 5 }] },
    );
    engine.close().expect("close");
    drop(engine);
    let engine = Engine::open(&temp.path(), options()).expect("reopen after close");
    assert_eq!(contents(&engine, "app", "users").len(), 4);
}

#[test]
fn leftover_out_temporaries_are_dropped_at_open() {
    // A `tmp.agg_out.*` collection is only ever a `$out` in progress; opening a file that
    // still has one (written here through the store, as an interrupted `$out` could) drops
    // it and keeps everything else, including a user collection with a similar name.
    let temp = TempDb::new("temporaries");
    {
        let engine = Engine::open(&temp.path(), options()).expect("open");
        let store = engine.store();
        let mut writer = store.write().expect("write");
        for coll in [
            "tmp.agg_out.65a1b2c3d4e5f60718293a4b",
            "tmp.agg_outx",
            "kept",
        ] {
            writer
                .insert(&Namespace::new("app", coll), &rawdoc! { "_id": 1 })
                .expect("insert");
        }
        writer.commit().expect("commit");
        assert_eq!(collections(&engine, "app").len(), 3);
    }
    let engine = Engine::open(&temp.path(), options()).expect("reopen");
    assert_eq!(collections(&engine, "app"), vec!["kept", "tmp.agg_outx"]);
    drop(engine);
    let engine = Engine::open(&temp.path(), options()).expect("reopen twice");
    assert_eq!(collections(&engine, "app"), vec!["kept", "tmp.agg_outx"]);
}

#[test]
fn a_cut_off_log_tail_shows_in_the_startup_warnings() {
    let temp = TempDb::new("torn");
    {
        let engine = Engine::open(&temp.path(), options()).expect("open");
        ok(
            &engine,
            "app",
            rawdoc! { "insert": "c", "documents": [{ "_id": 1, "pad": "x".repeat(3000) }] },
        );
        let before = ok(&engine, "admin", rawdoc! { "getLog": "startupWarnings" });
        assert_eq!(before.get_array("log").map(Vec::len).ok(), Some(0));
    }
    // Damage the last block of the log, as a crash in the middle of a write would.
    let log = temp.path().with_extension("mfdb-wal");
    let mut bytes = std::fs::read(&log).expect("log");
    let last = bytes.iter().rposition(|&b| b != 0).expect("log bytes");
    bytes[last - 16] ^= 0x55;
    std::fs::write(&log, &bytes).expect("write log");
    let engine = Engine::open(&temp.path(), options()).expect("reopen");
    let reply = ok(&engine, "admin", rawdoc! { "getLog": "startupWarnings" });
    let lines = reply.get_array("log").expect("log");
    assert_eq!(lines.len(), 1, "{reply:?}");
    let line: serde_json::Value =
        serde_json::from_str(lines[0].as_str().expect("a string")).expect("a JSON line");
    assert_eq!(line["s"], "W");
    let msg = line["msg"].as_str().expect("msg");
    assert!(
        msg.contains("cut off") && msg.contains("from lsn 1"),
        "{msg}"
    );
    assert!(
        contents(&engine, "app", "c").is_empty(),
        "the damaged record is gone"
    );
}

#[test]
fn a_log_deleted_while_open_is_noticed_and_no_acknowledged_write_depends_on_it() {
    let temp = TempDb::new("wal-deleted");
    let log = temp.path().with_extension("mfdb-wal");
    let store_options = engine::store::StoreOptions {
        checkpoint_interval: Some(std::time::Duration::from_secs(3600)),
        ..engine::store::StoreOptions::default()
    };
    {
        let engine =
            Engine::open_with(&temp.path(), options(), store_options.clone()).expect("open");
        let docs = |from: i32| -> Vec<bson::Bson> {
            (from..from + 100)
                .map(|i| bson::Bson::Document(doc! { "_id": i }))
                .collect()
        };
        let insert = |from: i32| {
            let mut cmd = bson::Document::new();
            cmd.insert("insert", "c");
            cmd.insert("documents", docs(from));
            ok(
                &engine,
                "app",
                bson::RawDocumentBuf::try_from(&cmd).expect("encode"),
            );
        };
        insert(0);
        std::fs::remove_file(&log).expect("delete the log");
        insert(100); // acknowledged into the deleted file
        // Within a few seconds the checkpointer notices and a fresh log is in place.
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
        while !log.exists() {
            assert!(
                std::time::Instant::now() < deadline,
                "the deleted log was never noticed"
            );
            std::thread::sleep(std::time::Duration::from_millis(50));
        }
        insert(200);
        // Dropped without close, as after kill -9.
    }
    let engine = Engine::open_with(&temp.path(), options(), store_options).expect("reopen");
    assert_eq!(
        contents(&engine, "app", "c").len(),
        300,
        "every acknowledged write is there"
    );
}

#[test]
fn opening_what_is_not_a_database_or_its_log_says_so_and_what_to_do() {
    let temp = TempDb::new("not-db");
    std::fs::write(temp.path(), b"name,age\nann,36\n").expect("a csv");
    let error = Engine::open(&temp.path(), options())
        .err()
        .expect("refused");
    assert!(
        error
            .to_string()
            .contains("not a MultiforaDB database file (no magic at offset 0"),
        "{error}"
    );
    assert_eq!(
        std::fs::read(temp.path()).expect("file"),
        b"name,age\nann,36\n",
        "the file is left as it was"
    );
    std::fs::remove_file(temp.path()).expect("remove");
    // An empty log beside a database: never replaced silently, reported with advice.
    drop(Engine::open(&temp.path(), options()).expect("create"));
    let log = temp.path().with_extension("mfdb-wal");
    std::fs::write(&log, b"").expect("empty log");
    let error = Engine::open(&temp.path(), options())
        .err()
        .expect("refused");
    let message = error.to_string();
    assert!(message.contains("is not a MultiforaDB log"), "{message}");
    assert!(
        message.contains("move") && message.contains("aside"),
        "{message}"
    );
    assert!(
        message.contains(&log.display().to_string()),
        "names the log: {message}"
    );
}

/// Collections with different compressors live side by side and keep their compressor
/// across a restart without close (replay) and a clean one (the catalog); collStats
/// reports the logical size, the stored bytes and the compressor (issue 18).
#[test]
fn collections_keep_their_compressor_across_restarts() {
    let temp = TempDb::new("codecs");
    let docs = |n: i32| -> Vec<Document> {
        (0..n)
            .map(|i| doc! { "_id": i, "text": "compressible ".repeat(200), "i": i })
            .collect()
    };
    let stats = |engine: &Engine, coll: &str| ok(engine, "app", rawdoc! { "collStats": coll });
    {
        let engine = Engine::open(&temp.path(), options()).expect("open");
        ok(
            &engine,
            "app",
            rawdoc! { "create": "raw", "storageEngine": { "multiforadb": { "compressor": "none" } } },
        );
        ok(
            &engine,
            "app",
            rawdoc! { "create": "packed", "storageEngine": { "multiforadb": { "compressor": "lz4" } } },
        );
        fails(
            &engine,
            "app",
            rawdoc! { "create": "z", "storageEngine": { "multiforadb": { "compressor": "zstd" } } },
            238,
        );
        fails(
            &engine,
            "app",
            rawdoc! { "create": "z", "storageEngine": { "multiforadb": { "compressor": "x" } } },
            2,
        );
        for coll in ["raw", "packed"] {
            let documents: Vec<bson::Bson> = docs(50).into_iter().map(Into::into).collect();
            let cmd = doc! { "insert": coll, "documents": documents };
            ok(
                &engine,
                "app",
                bson::RawDocumentBuf::try_from(&cmd).unwrap(),
            );
        }
        ok(
            &engine,
            "app",
            rawdoc! { "update": "packed", "updates": [{ "q": { "_id": 3 }, "u": { "$set": { "i": -3 } } }] },
        );
        ok(
            &engine,
            "app",
            rawdoc! { "delete": "packed", "deletes": [{ "q": { "_id": 4 }, "limit": 1 }] },
        );
        // Dropped without close: the creates and writes come back by replay.
    }
    for round in 0..2 {
        let engine = Engine::open(&temp.path(), options()).expect("reopen");
        let raw = stats(&engine, "raw");
        let packed = stats(&engine, "packed");
        let section = |s: &Document| s.get_document("multiforadb").unwrap().clone();
        assert_eq!(
            section(&raw).get_str("compressor").unwrap(),
            "none",
            "round {round}"
        );
        assert_eq!(
            section(&packed).get_str("compressor").unwrap(),
            "lz4",
            "round {round}"
        );
        let size = |s: &Document| {
            s.get("size")
                .and_then(bson::Bson::as_i64)
                .unwrap_or_else(|| i64::from(s.get_i32("size").unwrap()))
        };
        let stored = |s: &Document| {
            let d = section(s);
            d.get("storedBytes")
                .and_then(bson::Bson::as_i64)
                .unwrap_or_else(|| i64::from(d.get_i32("storedBytes").unwrap()))
        };
        assert_eq!(stored(&raw), size(&raw));
        assert!(stored(&packed) * 5 < size(&packed), "{packed:?}");
        let mut expected = docs(50);
        assert_eq!(contents(&engine, "app", "raw"), expected);
        expected.remove(4);
        expected[3].insert("i", -3);
        assert_eq!(contents(&engine, "app", "packed"), expected);
        engine.store().verify().expect("verify");
        engine.close().expect("close");
    }
}
