//! Durable `updateMany({k: 7}, {$inc: {n: 1}})` through an index over 16 KiB documents
//! (issue 26's gate: at most 3x its floor), in process, on file-backed databases whose
//! logs compress blocks with LZ4 (the default) and store them raw, side by side; and the
//! floor's disk part measured in the same run: one fdatasync after overwriting the matched
//! bytes in a preallocated file.
//!
//! `cargo bench -p engine --bench updates` (`MFDB_BENCH_DOCS`, default 8,192; every
//! 1000th document has `k: 7`, so 8 match by default, 66 at the gates' 65,536).

mod common;

use bson::rawdoc;
use common::{DOC_SIZE, load, options, run};
use criterion::{Criterion, criterion_group, criterion_main};
use engine::Engine;
use engine::store::StoreOptions;
use std::io::{Seek, Write};
use std::time::Duration;

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
        load(&engine, docs, &rawdoc! { "n": 0 });
        run(
            &engine,
            &rawdoc! { "createIndexes": "bench", "indexes": [{ "key": { "k": 1 }, "name": "k_1" }] },
        );
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
