//! Durable `updateMany({k: 7}, {$inc: {n: 1}})` through an index over 16 KiB documents
//! (issue 26's gate: at most 3x its floor), in process, on file-backed databases whose
//! logs compress blocks with LZ4 (the default) and store them raw, side by side; and the
//! floor's disk part measured in the same run: one fdatasync after overwriting the matched
//! bytes in a preallocated file.
//!
//! `cargo bench -p engine --bench updates` (`MFDB_BENCH_DOCS`, default 8,192; every
//! 1000th document has `k: 7`, so 8 match by default, 66 at the gates' 65,536).

use bson::{RawDocumentBuf, rawdoc};
use criterion::{Criterion, criterion_group, criterion_main};
use engine::store::StoreOptions;
use engine::{ConnectionContext, Engine, EngineOptions, FixedHost, StartupOptions};
use std::io::{Seek, Write};
use std::sync::Arc;
use std::time::Duration;

const DOC_SIZE: usize = 16 * 1024;

fn options() -> EngineOptions {
    EngineOptions {
        host: Arc::new(FixedHost::default()),
        startup: StartupOptions::default(),
        connections_max: 10,
        ttl_interval: None,
    }
}

fn run(engine: &Engine, cmd: &RawDocumentBuf) -> RawDocumentBuf {
    let reply = engine.run_command("db", cmd, &ConnectionContext::default());
    assert_eq!(reply.get_f64("ok").ok(), Some(1.0), "{cmd:?} -> {reply:?}");
    reply
}

fn load(engine: &Engine, docs: u32) {
    let payload = "lorem ipsum dolor sit amet ".repeat(DOC_SIZE / 27);
    for start in (0..docs).step_by(256) {
        let mut array = bson::RawArrayBuf::new();
        for i in start..(start + 256).min(docs) {
            let p = (u64::from(i) * 2_654_435_761) % 1_000_000;
            let mut doc =
                rawdoc! { "_id": i64::from(i), "k": i64::from(i % 1000), "p": p as i64, "n": 0 };
            let pad = DOC_SIZE.saturating_sub(doc.as_bytes().len() + 20);
            doc.append(
                bson::raw::cstr!("payload"),
                &payload[..pad.min(payload.len())],
            );
            array.push(doc);
        }
        let mut insert = rawdoc! { "insert": "bench" };
        insert.append(bson::raw::cstr!("documents"), array);
        run(engine, &insert);
    }
    run(
        engine,
        &rawdoc! { "createIndexes": "bench", "indexes": [{ "key": { "k": 1 }, "name": "k_1" }] },
    );
}

fn update_many(c: &mut Criterion) {
    let docs: u32 = std::env::var("MFDB_BENCH_DOCS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(8192);
    let dir = std::env::temp_dir().join(format!("mfdb-bench-updates-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("dir");
    let matched = docs.div_ceil(1000) as usize;
    let mut group = c.benchmark_group("update_many_indexed");
    group
        .sample_size(20)
        .measurement_time(Duration::from_secs(6));
    for (name, codec) in [("lz4_log", wal::Codec::Lz4), ("raw_log", wal::Codec::Raw)] {
        let mut store = StoreOptions::default();
        store.wal.codec = codec;
        let engine =
            Engine::open_with(&dir.join(format!("{name}.mfdb")), options(), store).expect("open");
        load(&engine, docs);
        engine.store().checkpoint().expect("checkpoint");
        let update = rawdoc! { "update": "bench", "updates": [
            { "q": { "k": 7_i64 }, "u": { "$inc": { "n": 1 } }, "multi": true },
        ] };
        group.bench_function(name, |b| b.iter(|| run(&engine, &update)));
    }
    let floor_file = dir.join("floor");
    let bytes = vec![7_u8; matched * DOC_SIZE];
    // The floor overwrites a preallocated file, as the log overwrites its preallocation.
    group.bench_function("floor_write_and_fdatasync", |b| {
        let mut file = std::fs::File::create(&floor_file).expect("floor file");
        file.write_all(&bytes).expect("preallocate");
        file.sync_all().expect("sync");
        b.iter(|| {
            file.seek(std::io::SeekFrom::Start(0)).expect("seek");
            file.write_all(&bytes).expect("write");
            file.sync_data().expect("sync");
        });
    });
    group.finish();
    let _ = std::fs::remove_dir_all(&dir);
}

criterion_group!(benches, update_many);
criterion_main!(benches);
