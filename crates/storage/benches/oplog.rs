//! What the oplog costs a durable insert (issue 43's budget: a `--replSet` server's
//! `insertMany` MB/s and `insertOne` latency within 10% of a standalone's): the same
//! commits into two databases side by side in one run, one without `local.oplog.rs` and
//! one with it (each 16 KiB document then also becomes an entry in the same transaction;
//! the log carries a stamp of a few dozen bytes more, the data file the entry's pages).
//!
//! `cargo bench -p storage --bench oplog`

use bson::{RawDocumentBuf, rawdoc};
use criterion::{Criterion, criterion_group, criterion_main};
use std::sync::Arc;
use std::time::Duration;
use storage::store::oplog;
use storage::store::{Namespace, Store, StoreOptions};

const DOC_SIZE: usize = 16 * 1024;

fn doc(id: i64) -> RawDocumentBuf {
    let pad = "x".repeat(DOC_SIZE - 40);
    rawdoc! { "_id": id, "n": id, "pad": pad }
}

fn open(dir: &std::path::Path, name: &str, with_oplog: bool) -> Arc<Store> {
    let store = Store::open_path(&dir.join(name), StoreOptions::default()).expect("open");
    if with_oplog {
        store.set_oplog_writes(true);
        let mut writer = store.write().expect("write");
        // Large enough that no entry is trimmed during the run.
        let size = 64_i64 << 30;
        writer
            .create_collection(
                &oplog::namespace(),
                rawdoc! { "capped": true, "size": size },
            )
            .expect("create the oplog");
        writer.commit().expect("commit");
    }
    store
}

fn inserts(c: &mut Criterion) {
    let dir = std::env::temp_dir().join(format!("mfdb-bench-oplog-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("dir");
    let ns = Namespace::new("bench", "c");
    let stores = [
        ("plain", open(&dir, "plain.mfdb", false)),
        ("oplog", open(&dir, "oplog.mfdb", true)),
    ];
    // Each store's next `_id`, across the groups.
    let mut next = [0_i64; 2];
    for (batch, label) in [(1_usize, "insert_x1"), (16, "insert_x16")] {
        let mut group = c.benchmark_group(format!("oplog_{label}"));
        group
            .sample_size(30)
            .measurement_time(Duration::from_secs(5))
            .throughput(criterion::Throughput::Bytes((batch * DOC_SIZE) as u64));
        for ((name, store), next) in stores.iter().zip(next.iter_mut()) {
            group.bench_function(*name, |b| {
                b.iter(|| {
                    let mut writer = store.write().expect("write");
                    for _ in 0..batch {
                        *next += 1;
                        writer.insert(&ns, &doc(*next)).expect("insert");
                    }
                    writer.commit().expect("commit");
                });
            });
        }
        group.finish();
    }
    for (_, store) in stores {
        store.close().expect("close");
    }
    let _ = std::fs::remove_dir_all(&dir);
}

criterion_group!(benches, inserts);
criterion_main!(benches);
