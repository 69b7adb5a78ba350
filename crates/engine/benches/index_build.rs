//! An index build against the scan it is compared with (issue 26's gate: `createIndex({k:
//! 1})` at most 2x the same run's unindexed range count), in process, over a file-backed
//! database of 16 KiB documents shaped as the gates' (`{_id, k, p, payload}`).
//!
//! `cargo bench -p engine --bench index_build` (`MFDB_BENCH_DOCS`, default 8,192 = 128 MiB).
//! Each build is timed alone (its drop is outside the timing); read the ratios of the
//! rows' medians from one run (the build with the default scan, split over the cores, and
//! with one thread, against the range count).

mod common;

use bson::rawdoc;
use common::{load, options, run};
use criterion::{Criterion, criterion_group, criterion_main};
use engine::Engine;
use std::time::{Duration, Instant};

fn build_against_scan(c: &mut Criterion) {
    let docs: u32 = std::env::var("MFDB_BENCH_DOCS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(8192);
    let dir = std::env::temp_dir().join(format!("mfdb-bench-index-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("dir");
    let engine = Engine::open(&dir.join("bench.mfdb"), options()).expect("open");
    load(&engine, docs, &rawdoc! {});
    let count = rawdoc! { "count": "bench", "query": { "p": { "$gte": 250000, "$lt": 350000 } } };
    let create =
        rawdoc! { "createIndexes": "bench", "indexes": [{ "key": { "k": 1 }, "name": "k_1" }] };
    let drop_index = rawdoc! { "dropIndexes": "bench", "index": "k_1" };
    // The load's pages written out first, so no row competes with that checkpoint.
    engine.store().checkpoint().expect("checkpoint");
    run(&engine, &count);
    let mut group = c.benchmark_group("index_build");
    group
        .sample_size(10)
        .measurement_time(Duration::from_secs(8));
    group.bench_function("range_count_unindexed", |b| b.iter(|| run(&engine, &count)));
    // The default scan (split over the cores) and one thread, side by side.
    for (name, threads) in [("create_index_k", 0), ("create_index_k_one_thread", 1)] {
        group.bench_function(name, |b| {
            engine.store().set_index_build_threads(threads);
            b.iter_custom(|iters| {
                let mut total = Duration::ZERO;
                for _ in 0..iters {
                    let started = Instant::now();
                    run(&engine, &create);
                    total += started.elapsed();
                    run(&engine, &drop_index);
                }
                total
            });
        });
    }
    group.finish();
    // The same three, interleaved round by round (the machine's load moves between
    // criterion's rows): medians and ratios.
    let mut times: [Vec<Duration>; 3] = Default::default();
    for _ in 0..15 {
        let started = Instant::now();
        run(&engine, &count);
        times[0].push(started.elapsed());
        for (slot, threads) in [(1, 0), (2, 1)] {
            engine.store().set_index_build_threads(threads);
            let started = Instant::now();
            run(&engine, &create);
            times[slot].push(started.elapsed());
            run(&engine, &drop_index);
        }
    }
    let median = |v: &mut Vec<Duration>| {
        v.sort();
        v[v.len() / 2].as_secs_f64() * 1e3
    };
    let [count_ms, split_ms, one_ms] = times.map(|mut v| median(&mut v));
    println!(
        "interleaved medians: range count {count_ms:.2} ms, build {split_ms:.2} ms \
         ({:.2}x), one-thread build {one_ms:.2} ms ({:.2}x)",
        split_ms / count_ms,
        one_ms / count_ms
    );
    drop(engine);
    let _ = std::fs::remove_dir_all(&dir);
}

criterion_group!(benches, build_against_scan);
criterion_main!(benches);
