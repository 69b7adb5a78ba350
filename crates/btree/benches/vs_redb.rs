//! Side-by-side benchmark against redb on the same keys, printed as a table with ratios.
//!
//! Run: `cargo bench -p btree --features bench-redb --bench vs_redb` (release profile).
//! `MFDB_BENCH_KEYS` (default 1,000,000), `MFDB_BENCH_COMMITS` (default 100,000) and
//! `MFDB_BENCH_DURABLE` (default 200 durable single-key commits) size it.
//! Each row is the best of `MFDB_BENCH_REPS` (default 3) runs on fresh files in the temp
//! directory. Durability is matched per row: bulk insert and the durable-commit row sync
//! both engines (our commit + checkpoint; redb `Durability::Immediate`); the single-key
//! commit row syncs neither (our commit, whose durability is the engine's WAL; redb
//! `Durability::None`), with one durable commit at the end for both.

use btree::Btree;
use pager::{Options, Pager};
use redb::{Database, Durability, ReadableDatabase, ReadableTable, TableDefinition};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, Instant};
use wal::OsStorage;

const TABLE: TableDefinition<&[u8], &[u8]> = TableDefinition::new("bench");
const TREE: Btree = Btree::new(0);
const VALUE: [u8; 100] = [0x5a; 100];

fn env(name: &str, default: u64) -> u64 {
    std::env::var(name)
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

/// Deterministic pseudo-random 16-byte keys (splitmix64).
fn keys(n: u64, seed: u64) -> Vec<[u8; 16]> {
    let mut state = seed;
    let mut next = || {
        state = state.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = state;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    };
    (0..n)
        .map(|_| {
            let mut key = [0u8; 16];
            key[..8].copy_from_slice(&next().to_be_bytes());
            key[8..].copy_from_slice(&next().to_be_bytes());
            key
        })
        .collect()
}

fn shuffled(keys: &[[u8; 16]], seed: u64) -> Vec<[u8; 16]> {
    let mut out = keys.to_vec();
    let mut state = seed | 1;
    for i in (1..out.len()).rev() {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        out.swap(i, (state % (i as u64 + 1)) as usize);
    }
    out
}

struct Times {
    bulk: Duration,
    lookup: Duration,
    scan: Duration,
    commits: Duration,
    durable: Duration,
    file_bytes: u64,
}

fn time<T>(f: impl FnOnce() -> T) -> (Duration, T) {
    let start = Instant::now();
    let out = f();
    (start.elapsed(), out)
}

fn ours(
    path: &Path,
    data: &[[u8; 16]],
    probes: &[[u8; 16]],
    extra: &[[u8; 16]],
    durable: usize,
) -> Times {
    let storage = Arc::new(OsStorage::open(path).expect("file"));
    let pager = Pager::open(storage, Options::default()).expect("open");
    let (bulk, ()) = time(|| {
        let mut txn = pager.begin_write().expect("write");
        for key in data {
            TREE.insert(&mut txn, key, &VALUE).expect("insert");
        }
        txn.commit().expect("commit");
        pager.checkpoint(1).expect("checkpoint");
    });
    let (lookup, found) = time(|| {
        let read = pager.begin_read().expect("read");
        let mut bytes = 0usize;
        for key in probes {
            bytes += TREE.get(&read, key).expect("get").expect("present").len();
        }
        bytes
    });
    assert_eq!(found, probes.len() * VALUE.len());
    let (scan, count) = time(|| {
        let read = pager.begin_read().expect("read");
        let mut count = 0usize;
        for entry in TREE.iter(&read).expect("iter") {
            let (key, value) = entry.expect("entry");
            count += usize::from(key.len() + value.len() > 0);
        }
        count
    });
    assert_eq!(count, data.len());
    let (commits, ()) = time(|| {
        for key in extra {
            let mut txn = pager.begin_write().expect("write");
            TREE.insert(&mut txn, key, &VALUE).expect("insert");
            txn.commit().expect("commit");
        }
        pager.checkpoint(2).expect("checkpoint");
    });
    let (durable_time, ()) = time(|| {
        for (i, key) in data[..durable].iter().enumerate() {
            let mut txn = pager.begin_write().expect("write");
            TREE.insert(&mut txn, key, &VALUE[..50]).expect("insert");
            txn.commit().expect("commit");
            pager.checkpoint(3 + i as u64).expect("checkpoint");
        }
    });
    let file_bytes = pager.stats().expect("stats").file_bytes;
    Times {
        bulk,
        lookup,
        scan,
        commits,
        durable: durable_time,
        file_bytes,
    }
}

fn theirs(
    path: &Path,
    data: &[[u8; 16]],
    probes: &[[u8; 16]],
    extra: &[[u8; 16]],
    durable: usize,
) -> Times {
    let db = Database::create(path).expect("create");
    let (bulk, ()) = time(|| {
        let txn = db.begin_write().expect("write");
        {
            let mut table = txn.open_table(TABLE).expect("table");
            for key in data {
                table
                    .insert(key.as_slice(), VALUE.as_slice())
                    .expect("insert");
            }
        }
        txn.commit().expect("commit");
    });
    let (lookup, found) = time(|| {
        let txn = db.begin_read().expect("read");
        let table = txn.open_table(TABLE).expect("table");
        let mut bytes = 0usize;
        for key in probes {
            bytes += table
                .get(key.as_slice())
                .expect("get")
                .expect("present")
                .value()
                .len();
        }
        bytes
    });
    assert_eq!(found, probes.len() * VALUE.len());
    let (scan, count) = time(|| {
        let txn = db.begin_read().expect("read");
        let table = txn.open_table(TABLE).expect("table");
        let mut count = 0usize;
        for entry in table.iter().expect("iter") {
            let (key, value) = entry.expect("entry");
            count += usize::from(key.value().len() + value.value().len() > 0);
        }
        count
    });
    assert_eq!(count, data.len());
    let (commits, ()) = time(|| {
        for key in extra {
            let mut txn = db.begin_write().expect("write");
            txn.set_durability(Durability::None).expect("durability");
            {
                let mut table = txn.open_table(TABLE).expect("table");
                table
                    .insert(key.as_slice(), VALUE.as_slice())
                    .expect("insert");
            }
            txn.commit().expect("commit");
        }
        let txn = db.begin_write().expect("write");
        txn.commit().expect("durable commit");
    });
    let (durable_time, ()) = time(|| {
        for key in &data[..durable] {
            let txn = db.begin_write().expect("write");
            {
                let mut table = txn.open_table(TABLE).expect("table");
                table.insert(key.as_slice(), &VALUE[..50]).expect("insert");
            }
            txn.commit().expect("commit");
        }
    });
    drop(db);
    let file_bytes = std::fs::metadata(path).expect("size").len();
    Times {
        bulk,
        lookup,
        scan,
        commits,
        durable: durable_time,
        file_bytes,
    }
}

/// A table row: its name, which time it reads, and how many operations it timed.
type Row = (&'static str, fn(&Times) -> Duration, u64);

fn best(runs: &[Times], pick: impl Fn(&Times) -> Duration) -> Duration {
    runs.iter().map(pick).min().expect("at least one run")
}

fn temp(name: &str) -> PathBuf {
    let path = std::env::temp_dir().join(format!("mfdb-bench-{}-{name}", std::process::id()));
    let _ = std::fs::remove_file(&path);
    path
}

fn main() {
    let n = env("MFDB_BENCH_KEYS", 1_000_000);
    let commits = env("MFDB_BENCH_COMMITS", 100_000);
    let reps = env("MFDB_BENCH_REPS", 3);
    let durable = (env("MFDB_BENCH_DURABLE", 200) as usize).min(n as usize);
    let data = keys(n, 1);
    let probes = shuffled(&data, 2);
    let extra = keys(commits, 3);
    let (mut mine, mut redb) = (Vec::new(), Vec::new());
    for rep in 0..reps {
        // Alternate the order so neither side always runs on a warmer machine.
        for side in if rep % 2 == 0 { [0, 1] } else { [1, 0] } {
            let path = temp(if side == 0 { "ours" } else { "redb" });
            if side == 0 {
                mine.push(ours(&path, &data, &probes, &extra, durable));
            } else {
                redb.push(theirs(&path, &data, &probes, &extra, durable));
            }
            let _ = std::fs::remove_file(&path);
        }
    }
    println!(
        "keys {n} x (16 B key, 100 B value); best of {reps}; ratio = redb time / ours (>1 = ours faster)"
    );
    println!("| row | multiforadb | redb 4.6 | ratio |");
    println!("| --- | --- | --- | --- |");
    let rows: [Row; 5] = [
        ("bulk insert, one commit (durable)", |t| t.bulk, n),
        ("random point lookups", |t| t.lookup, n),
        ("full ordered scan", |t| t.scan, n),
        (
            "single-key commits (non-durable) + 1 durable",
            |t| t.commits,
            commits,
        ),
        ("single-key durable commits", |t| t.durable, durable as u64),
    ];
    for (name, pick, ops) in rows {
        let (a, b) = (best(&mine, pick), best(&redb, pick));
        let per = |d: Duration| d.as_nanos() as f64 / ops as f64;
        println!(
            "| {name} ({ops} ops) | {:.3} s ({:.0} ns/op) | {:.3} s ({:.0} ns/op) | {:.2}x |",
            a.as_secs_f64(),
            per(a),
            b.as_secs_f64(),
            per(b),
            b.as_secs_f64() / a.as_secs_f64()
        );
    }
    let (a, b) = (mine[0].file_bytes, redb[0].file_bytes);
    println!(
        "| file size after the run | {:.1} MiB | {:.1} MiB | {:.2}x |",
        a as f64 / 1048576.0,
        b as f64 / 1048576.0,
        b as f64 / a as f64
    );
}
