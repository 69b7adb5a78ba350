//! kill -9 during a concurrent durable write load: after a restart every acknowledged
//! write is there, nothing is half-applied, and the storage verifiers pass.

use crate::harness::TestServer;
use bson::{Document, doc};
use mongodb::sync::Client;
use std::collections::BTreeSet;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

const CLIENTS: usize = 4;

#[derive(Default)]
struct Acked {
    /// `_id`s whose insert was acknowledged.
    inserted: BTreeSet<String>,
    /// Per client: increments acknowledged and attempted on its counter document.
    counters: Vec<(i64, i64)>,
}

/// One client: alternately inserts a new document and increments its counter document.
fn client_load(client: &Client, round: usize, t: usize, stop: &AtomicBool, acked: &Mutex<Acked>) {
    let coll = client.database("crash").collection::<Document>("load");
    let counter = format!("counter-{t}");
    for i in 0.. {
        if stop.load(Ordering::Relaxed) {
            return;
        }
        let id = format!("r{round}-t{t}-{i}");
        let pad = "x".repeat(100 + (i * 37) % 2000);
        if coll
            .insert_one(doc! {"_id": &id, "t": t as i64, "pad": pad})
            .run()
            .is_err()
        {
            return;
        }
        acked.lock().expect("lock").inserted.insert(id);
        acked.lock().expect("lock").counters[t].1 += 1;
        let result = coll
            .update_one(doc! {"_id": &counter}, doc! {"$inc": {"n": 1}})
            .upsert(true)
            .run();
        if result.is_err() {
            return;
        }
        acked.lock().expect("lock").counters[t].0 += 1;
    }
}

/// Reads every document of the collection after a restart.
fn read_back(client: &Client) -> Vec<Document> {
    let coll = client.database("crash").collection::<Document>("load");
    coll.find(doc! {})
        .run()
        .expect("find")
        .map(|d| d.expect("document"))
        .collect()
}

#[test]
fn sigkill_during_concurrent_writes_loses_no_acknowledged_write() {
    let db = TestServer::temp_db();
    let mut acked = Acked {
        counters: vec![(0, 0); CLIENTS],
        ..Acked::default()
    };
    let seed = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(1, |d| d.subsec_nanos() as u64);
    for round in 0..3 {
        let mut server = TestServer::start_at(&db, &[]);
        let shared = Arc::new(Mutex::new(std::mem::take(&mut acked)));
        let stop = Arc::new(AtomicBool::new(false));
        let threads: Vec<_> = (0..CLIENTS)
            .map(|t| {
                let (client, shared, stop) = (server.client(), shared.clone(), stop.clone());
                std::thread::spawn(move || client_load(&client, round, t, &stop, &shared))
            })
            .collect();
        let wait = 300 + (seed.wrapping_mul(round as u64 + 7) % 700);
        std::thread::sleep(Duration::from_millis(wait));
        server.kill9();
        stop.store(true, Ordering::Relaxed);
        for thread in threads {
            thread.join().expect("client thread");
        }
        acked = Arc::try_unwrap(shared)
            .map_err(|_| "clients joined")
            .expect("sole owner")
            .into_inner()
            .expect("lock");
        assert!(
            !acked.inserted.is_empty(),
            "round {round}: no write was acknowledged"
        );

        let started = Instant::now();
        let server = TestServer::start_at(&db, &[]);
        let client = server.client();
        let docs = read_back(&client);
        let answered = started.elapsed();
        let present: BTreeSet<String> = docs
            .iter()
            .filter_map(|d| d.get_str("_id").ok())
            .filter(|id| id.starts_with('r'))
            .map(str::to_owned)
            .collect();
        let missing: Vec<_> = acked.inserted.difference(&present).take(5).collect();
        assert!(
            missing.is_empty(),
            "seed {seed} round {round}: acknowledged inserts lost: {missing:?}"
        );
        for t in 0..CLIENTS {
            let (done, tried) = acked.counters[t];
            let n = docs
                .iter()
                .find(|d| d.get_str("_id").ok() == Some(format!("counter-{t}").as_str()))
                .map_or(0, |d| {
                    d.get_i32("n")
                        .map_or_else(|_| d.get_i64("n").unwrap_or(0), i64::from)
                });
            assert!(
                n >= done && n <= tried,
                "seed {seed} round {round}: counter {t} is {n}, acknowledged {done}, tried {tried}"
            );
            acked.counters[t] = (n, n);
        }
        let validate = client
            .database("crash")
            .run_command(doc! {"validate": "load"})
            .run()
            .expect("validate");
        assert_eq!(validate.get_bool("valid").ok(), Some(true), "{validate:?}");
        assert!(
            answered < Duration::from_secs(5),
            "restart took {answered:?}"
        );
        acked.inserted = present;
    }
    let _ = std::fs::remove_file(&db);
    let mut wal = db.clone().into_os_string();
    wal.push("-wal");
    let _ = std::fs::remove_file(std::path::PathBuf::from(wal));
}

#[test]
fn sigterm_folds_the_log_into_one_file_and_everything_is_there_after_restart() {
    let db = TestServer::temp_db();
    let mut wal = db.clone().into_os_string();
    wal.push("-wal");
    let wal = std::path::PathBuf::from(wal);
    let mut server = TestServer::start_at(&db, &[]);
    let coll = server
        .client()
        .database("app")
        .collection::<Document>("things");
    let docs: Vec<Document> = (0..500)
        .map(|i| doc! {"_id": i, "v": "x".repeat(300)})
        .collect();
    coll.insert_many(docs).run().expect("insert");
    coll.delete_one(doc! {"_id": 7}).run().expect("delete");
    server
        .client()
        .database("app")
        .collection::<Document>("gone")
        .insert_one(doc! {"_id": 1})
        .run()
        .expect("insert");
    server
        .client()
        .database("app")
        .collection::<Document>("gone")
        .drop()
        .run()
        .expect("drop");
    assert!(wal.exists(), "the log exists while the server runs");
    let status = server.terminate();
    assert!(status.success(), "clean exit: {status}");
    assert!(!wal.exists(), "a clean stop removes the log");
    assert!(db.exists());

    let server = TestServer::start_at(&db, &[]);
    let client = server.client();
    let coll = client.database("app").collection::<Document>("things");
    assert_eq!(coll.count_documents(doc! {}).run().expect("count"), 499);
    assert!(
        coll.find_one(doc! {"_id": 7})
            .run()
            .expect("find")
            .is_none()
    );
    let names = client
        .database("app")
        .list_collection_names()
        .run()
        .expect("names");
    assert_eq!(
        names,
        vec!["things".to_owned()],
        "a dropped collection stays dropped"
    );
    drop(server);
    let _ = std::fs::remove_file(&db);
    let _ = std::fs::remove_file(&wal);
}
