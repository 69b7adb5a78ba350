//! Criterion benches of the log: commit latency beside its two fsync floors, and append
//! throughput of 16 KiB documents beside lz4_flex alone. Run: `cargo bench -p wal --bench
//! criterion`. (Concurrent committers and the ratio table: `--bench ratios`.)
//!
//! Invariants:
//! - Each group measures the log and its floor in the same run, on the same file system.

use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use std::fs::File;
use std::hint::black_box;
use std::os::unix::fs::FileExt;
use std::time::{Duration, Instant};
use support::{DOC_LEN, bench_dir, documents};
use wal::{Lsn, Wal, WalOptions};

mod support;

/// Overwrites cycle through this many 4 KiB slots of a prewritten file.
const OVERWRITE_SLOTS: u64 = 4096;

fn commit_latency(c: &mut Criterion) {
    let root = bench_dir("criterion-commit");
    let mut group = c.benchmark_group("commit_latency");
    group
        .sample_size(20)
        .measurement_time(Duration::from_secs(4));
    let block = vec![0x5au8; 4096];
    let append_file = File::create(root.join("floor-append")).expect("create");
    let mut append_at = 0u64;
    group.bench_function("floor_append_4k_fdatasync", |b| {
        b.iter(|| {
            append_file.write_all_at(&block, append_at).expect("append");
            append_file.sync_data().expect("fdatasync");
            append_at += 4096;
        })
    });
    let overwrite_file = File::create(root.join("floor-overwrite")).expect("create");
    overwrite_file
        .write_all_at(&vec![0u8; (OVERWRITE_SLOTS * 4096) as usize], 0)
        .expect("prewrite");
    overwrite_file.sync_all().expect("sync");
    let mut slot = 0u64;
    group.bench_function("floor_overwrite_4k_fdatasync", |b| {
        b.iter(|| {
            overwrite_file
                .write_all_at(&block, (slot % OVERWRITE_SLOTS) * 4096)
                .expect("write");
            overwrite_file.sync_data().expect("fdatasync");
            slot += 1;
        })
    });
    let (wal, _) = Wal::open_path(&root, "commit.wal", WalOptions::default()).expect("open");
    let record = [0x42u8; 100];
    group.bench_function("wal_append_commit_100b", |b| {
        b.iter(|| {
            let lsn = wal.append(&record).expect("append");
            wal.commit(lsn).expect("commit");
        })
    });
    group.finish();
    let _ = std::fs::remove_dir_all(&root);
}

fn append_throughput(c: &mut Criterion) {
    let root = bench_dir("criterion-append");
    let docs = documents();
    let mut group = c.benchmark_group("append_16k");
    group
        .sample_size(20)
        .measurement_time(Duration::from_secs(4))
        .throughput(Throughput::Bytes(DOC_LEN as u64));
    let mut output = vec![0u8; lz4_flex::block::get_maximum_output_size(DOC_LEN)];
    let mut next = 0usize;
    group.bench_function("lz4_flex_alone", |b| {
        b.iter(|| {
            let doc = &docs[next % docs.len()];
            next += 1;
            black_box(lz4_flex::block::compress_into(doc, &mut output).expect("compress"))
        })
    });
    let (wal, _) = Wal::open_path(&root, "append.wal", WalOptions::default()).expect("open");
    group.bench_function("wal_append", |b| {
        b.iter_custom(|iterations| {
            let start = Instant::now();
            for i in 0..iterations {
                black_box(wal.append(&docs[i as usize % docs.len()]).expect("append"));
            }
            let elapsed = start.elapsed();
            // Keep the file small between samples; not timed.
            let lsn_next: Lsn = wal.lsn_next();
            wal.truncate_before(lsn_next).expect("truncate");
            elapsed
        })
    });
    group.finish();
    let _ = std::fs::remove_dir_all(&root);
}

criterion_group!(benches, commit_latency, append_throughput);
criterion_main!(benches);
