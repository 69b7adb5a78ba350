//! Threads sharing one client: every handle (`Client`, `Database`, `Collection<T>`) is
//! `Clone + Send + Sync + 'static`, so a clone moves into a spawned thread (or an
//! app-state struct) without borrowing anything. Writers insert and increment counters
//! while a reader counts; the file is locked once for them all.
//!
//! Run with `cargo run -p engine --example threads`.

use bson::doc;
use engine::client::{Client, Collection, Result};
use serde::{Deserialize, Serialize};
use std::thread;

#[derive(Debug, Serialize, Deserialize)]
struct Event {
    #[serde(rename = "_id")]
    id: u32,
    writer: u32,
}

/// What every thread gets: a clone, owned, `'static`.
#[derive(Clone)]
struct AppState {
    events: Collection<Event>,
    counters: Collection<bson::Document>,
}

fn main() -> Result<()> {
    let dir = std::env::temp_dir().join(format!("mfdb-example-threads-{}", std::process::id()));
    std::fs::create_dir_all(&dir)?;
    let client = Client::open(dir.join("threads.mfdb"))?;
    let db = client.database("app");
    let state = AppState {
        events: db.collection("events"),
        counters: db.collection("counters"),
    };

    let writers: Vec<_> = (0..4_u32)
        .map(|writer| {
            let state = state.clone();
            thread::spawn(move || -> Result<u32> {
                for i in 0..50 {
                    state
                        .events
                        .insert_one(Event {
                            id: writer * 1000 + i,
                            writer,
                        })
                        .run()?;
                    state
                        .counters
                        .update_one(doc! {"_id": "events"}, doc! {"$inc": {"n": 1}})
                        .upsert(true)
                        .run()?;
                }
                Ok(writer)
            })
        })
        .collect();
    let reader = {
        let events = state.events.clone();
        thread::spawn(move || -> Result<u64> {
            let mut seen = 0;
            for _ in 0..20 {
                seen = events.estimated_document_count().run()?;
                thread::yield_now();
            }
            Ok(seen)
        })
    };
    for writer in writers {
        let writer = writer.join().expect("a writer thread")?;
        println!("writer {writer} done");
    }
    println!(
        "the reader last saw {} events",
        reader.join().expect("the reader")?
    );

    let total = state.events.count_documents(doc! {}).run()?;
    let counter = state.counters.find_one(doc! {"_id": "events"}).run()?;
    println!("{total} events; counter {counter:?}");
    assert_eq!(total, 200);
    assert_eq!(
        counter.and_then(|c| c.get_i32("n").ok()),
        Some(200),
        "no increment lost"
    );
    client.close()?;
    let _ = std::fs::remove_dir_all(&dir);
    Ok(())
}
