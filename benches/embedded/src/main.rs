//! The embedded comparison of issue #8: MultiforaDB's embedded API side by side with PoloDB
//! and SQLite on one workload, in one run, on the same file system.
//!
//! Workload (defaults): load 100,000 documents of about 1 KiB in batches of 1,000 (each
//! batch one durable transaction), 10,000 point reads by `_id`, a filtered full scan, and
//! 1,000 single-document durable updates. SQLite stores each document as JSON text in a
//! table with an integer primary key, WAL journal, `synchronous=FULL`. PoloDB 4.4 never
//! calls fsync (its log is only `flush`ed), so its write rows are not durable: they are an
//! upper bound, printed as such.
//!
//! Then typed beside untyped (issue #25: typed within 1.1x of untyped): `insert_one` and
//! `find_one` by `_id` through `Collection<Bench>` (serde) and `Collection<Document>`,
//! taking turns in blocks within each round; the median round of each is reported, per
//! operation. `find_one` reads the loaded file; `insert_one` runs on the file (durable:
//! one fsync each, so the API's cost is a small part) and in memory (the API's cost alone).
//!
//! Run: `cargo xtask bench embedded [--docs N] [--dir PATH] [--rounds R] [--only-ours]
//! [--only-typed [--only-memory]]`.

use bson::{Document, doc};
use engine::client::{Client, Collection};
use serde::{Deserialize, Serialize};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

const BATCH: usize = 1000;
const POINT_READS: usize = 10_000;
const UPDATES: usize = 1000;
const PAYLOAD: usize = 900;

struct Args {
    docs: usize,
    dir: PathBuf,
    /// Run only MultiforaDB (for profiling).
    only_ours: bool,
    /// Run only the typed-beside-untyped rows (on a file of `docs` documents).
    only_typed: bool,
    /// Rounds of the typed-beside-untyped rows.
    rounds: usize,
    /// Only the in-memory typed-beside-untyped rows (with `--only-typed`; for profiling).
    only_memory: bool,
}

fn parse_args() -> Args {
    let mut args = Args {
        docs: 100_000,
        dir: std::env::temp_dir().join(format!("mfdb-bench-embedded-{}", std::process::id())),
        only_ours: false,
        only_typed: false,
        rounds: 7,
        only_memory: false,
    };
    let mut it = std::env::args().skip(1);
    while let Some(arg) = it.next() {
        match arg.as_str() {
            "--docs" => args.docs = it.next().and_then(|v| v.parse().ok()).expect("--docs N"),
            "--dir" => args.dir = PathBuf::from(it.next().expect("--dir PATH")),
            "--only-ours" => args.only_ours = true,
            "--only-typed" => args.only_typed = true,
            "--only-memory" => args.only_memory = true,
            "--rounds" => {
                args.rounds = it.next().and_then(|v| v.parse().ok()).expect("--rounds R");
            }
            other => panic!("unknown argument {other}"),
        }
    }
    args
}

/// A small deterministic generator, so every system sees the same ids and documents.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }
}

fn payload(i: usize) -> String {
    let word = format!("item-{i:08}-");
    word.repeat(PAYLOAD / word.len() + 1)[..PAYLOAD].to_owned()
}

fn group(i: usize) -> i64 {
    (i % 100) as i64
}

/// Timings of one system, in the row order of the report.
#[derive(Default)]
struct Timings {
    load: Duration,
    point_reads: Duration,
    scan: Duration,
    updates: Duration,
    scan_hits: usize,
    /// CPU time (user + system) of the process in each row, for `--only-ours` profiling.
    cpu: [Duration; 4],
}

/// CPU time (user + system) this process has used so far, from `/proc/self/stat` (10 ms
/// ticks on Linux; zero where that file does not exist).
fn process_cpu() -> Duration {
    let stat = std::fs::read_to_string("/proc/self/stat").unwrap_or_default();
    // Fields after the parenthesised command name; utime and stime are fields 14 and 15.
    let rest = stat.rsplit_once(')').map_or("", |(_, rest)| rest);
    let ticks: u64 = rest
        .split_whitespace()
        .skip(11)
        .take(2)
        .filter_map(|v| v.parse::<u64>().ok())
        .sum();
    Duration::from_millis(ticks * 10)
}

fn ids(docs: usize, n: usize, seed: u64) -> Vec<usize> {
    let mut rng = Rng(seed);
    (0..n)
        .map(|_| (rng.next() % docs as u64) as usize)
        .collect()
}

/// The benchmark's document, as a type.
#[derive(Debug, Clone, Serialize, Deserialize)]
struct Bench {
    #[serde(rename = "_id")]
    id: i64,
    name: String,
    group: i64,
    score: f64,
    payload: String,
}

fn bench_doc(i: usize) -> Document {
    doc! {"_id": i as i64, "name": format!("user{i}"), "group": group(i),
    "score": i as f64 * 0.5, "payload": payload(i)}
}

fn bench_typed(i: usize) -> Bench {
    Bench {
        id: i as i64,
        name: format!("user{i}"),
        group: group(i),
        score: i as f64 * 0.5,
        payload: payload(i),
    }
}

/// The untyped collection `bench` of database `test`.
fn bench_collection(client: &Client) -> Collection<Document> {
    client.database("test").collection("bench")
}

fn bench_multiforadb(dir: &Path, docs: usize) -> Timings {
    let client = Client::open(dir.join("bench.mfdb")).expect("open");
    let coll = bench_collection(&client);
    let mut t = Timings::default();
    let mut cpu = process_cpu();
    let mut lap = || {
        let now = process_cpu();
        let spent = now.saturating_sub(cpu);
        cpu = now;
        spent
    };
    let start = Instant::now();
    for chunk in (0..docs).collect::<Vec<_>>().chunks(BATCH) {
        let batch = chunk.iter().map(|&i| bench_doc(i));
        coll.insert_many(batch).run().expect("insert_many");
    }
    t.load = start.elapsed();
    t.cpu[0] = lap();
    let start = Instant::now();
    for id in ids(docs, POINT_READS, 7) {
        let found = coll
            .find_one(doc! {"_id": id as i64})
            .run()
            .expect("find_one");
        assert!(found.is_some(), "id {id}");
    }
    t.point_reads = start.elapsed();
    t.cpu[1] = lap();
    let start = Instant::now();
    let cursor = coll.find(doc! {"group": 7}).run().expect("find");
    t.scan_hits = cursor.inspect(|d| assert!(d.is_ok(), "{d:?}")).count();
    t.scan = start.elapsed();
    t.cpu[2] = lap();
    let start = Instant::now();
    for (n, id) in ids(docs, UPDATES, 11).into_iter().enumerate() {
        let r = coll
            .update_one(doc! {"_id": id as i64}, doc! {"$set": {"score": n as f64}})
            .run()
            .expect("update");
        assert_eq!(r.matched_count, 1);
    }
    t.updates = start.elapsed();
    t.cpu[3] = lap();
    client.close().expect("close");
    t
}

/// Per-operation medians (over rounds) of typed and untyped, in microseconds.
struct Pair {
    typed: Vec<f64>,
    untyped: Vec<f64>,
}

impl Pair {
    fn new() -> Pair {
        Pair {
            typed: Vec::new(),
            untyped: Vec::new(),
        }
    }

    fn print(&mut self, name: &str) {
        let median = |v: &mut Vec<f64>| {
            v.sort_by(f64::total_cmp);
            v[v.len() / 2]
        };
        let spread = |v: &[f64]| (v[0], v[v.len() - 1]);
        let (typed, untyped) = (median(&mut self.typed), median(&mut self.untyped));
        let (t_lo, t_hi) = spread(&self.typed);
        let (u_lo, u_hi) = spread(&self.untyped);
        println!(
            "{name:<34} {typed:>9.2} {untyped:>9.2}   {:>5.3}x   [{t_lo:.2}-{t_hi:.2}] \
             [{u_lo:.2}-{u_hi:.2}]",
            typed / untyped
        );
    }
}

/// Blocks of the typed-beside-untyped rows: typed and untyped take turns every
/// `ops / BLOCKS` operations (which goes first alternating), so a change in the machine's
/// load lasting longer than a block weighs on both alike.
const BLOCKS: usize = 20;

/// Runs `ops` calls each of `typed` and `untyped` (given the operation's number), in
/// alternating blocks; the microseconds per call of each.
fn alternate(
    ops: usize,
    mut typed: impl FnMut(usize),
    mut untyped: impl FnMut(usize),
) -> (f64, f64) {
    let mut spent = [Duration::ZERO; 2];
    let block = ops.div_ceil(BLOCKS);
    for (n, start) in (0..ops).step_by(block).enumerate() {
        let end = (start + block).min(ops);
        for side in [n % 2, 1 - n % 2] {
            let began = Instant::now();
            for i in start..end {
                if side == 0 { typed(i) } else { untyped(i) }
            }
            spent[side] += began.elapsed();
        }
    }
    let per_op = |d: Duration| d.as_secs_f64() * 1e6 / ops as f64;
    (per_op(spent[0]), per_op(spent[1]))
}

/// `insert_one` of `ops` new documents per round into fresh collections of `client`.
fn insert_pair(client: &Client, rounds: usize, ops: usize, base: usize) -> Pair {
    let db = client.database("typed");
    let mut pair = Pair::new();
    for round in 0..rounds {
        let first = base + round * ops;
        let typed_docs: Vec<Bench> = (first..first + ops).map(bench_typed).collect();
        let untyped_docs: Vec<Document> = (first..first + ops).map(bench_doc).collect();
        let typed = db.collection::<Bench>(&format!("typed{round}"));
        let untyped = db.collection::<Document>(&format!("untyped{round}"));
        let (t, u) = alternate(
            ops,
            |i| {
                typed.insert_one(&typed_docs[i]).run().expect("insert");
            },
            |i| {
                untyped.insert_one(&untyped_docs[i]).run().expect("insert");
            },
        );
        pair.typed.push(t);
        pair.untyped.push(u);
    }
    pair
}

/// `find_one` by `_id` of `ops` random documents per round of the loaded collection.
fn find_pair(client: &Client, docs: usize, rounds: usize, ops: usize) -> Pair {
    let untyped = bench_collection(client);
    let typed = untyped.clone_with_type::<Bench>();
    let mut pair = Pair::new();
    for round in 0..rounds {
        let ids = ids(docs, ops, 13 + round as u64);
        let (t, u) = alternate(
            ops,
            |i| {
                let found = typed.find_one(doc! {"_id": ids[i] as i64}).run();
                assert!(found.expect("find_one").is_some());
            },
            |i| {
                let found = untyped.find_one(doc! {"_id": ids[i] as i64}).run();
                assert!(found.expect("find_one").is_some());
            },
        );
        pair.typed.push(t);
        pair.untyped.push(u);
    }
    pair
}

/// The typed-beside-untyped rows, on the file `dir/bench.mfdb` (loaded with `docs`
/// documents when it has none) unless `dir` is `None`, and in memory.
fn bench_typed_untyped(dir: Option<&Path>, docs: usize, rounds: usize) {
    println!(
        "typed (Collection<Bench>, serde) beside untyped (Collection<Document>); \
         microseconds per operation, median of {rounds} rounds [min-max]"
    );
    println!(
        "{:<34} {:>9} {:>9}   {:>6}",
        "row", "typed", "untyped", "ratio"
    );
    if let Some(dir) = dir {
        let client = Client::open(dir.join("bench.mfdb")).expect("open");
        let coll = bench_collection(&client);
        if coll.estimated_document_count().run().expect("count") == 0 {
            for chunk in (0..docs).collect::<Vec<_>>().chunks(BATCH) {
                let batch = chunk.iter().map(|&i| bench_doc(i));
                coll.insert_many(batch).run().expect("insert_many");
            }
        }
        find_pair(&client, docs, rounds, POINT_READS).print("find_one by _id (file, 10,000)");
        insert_pair(&client, rounds, 300, docs).print("insert_one durable (file, 300)");
        client.close().expect("close");
    }
    let memory = Client::memory();
    insert_pair(&memory, rounds, 10_000, 0).print("insert_one (memory, 10,000)");
    let loaded = bench_collection(&memory);
    for chunk in (0..docs).collect::<Vec<_>>().chunks(BATCH) {
        let batch = chunk.iter().map(|&i| bench_doc(i));
        loaded.insert_many(batch).run().expect("insert_many");
    }
    find_pair(&memory, docs, rounds, POINT_READS).print("find_one by _id (memory, 10,000)");
}

fn bench_sqlite(dir: &Path, docs: usize) -> Timings {
    let mut conn = rusqlite::Connection::open(dir.join("bench.sqlite")).expect("open");
    conn.execute_batch(
        "PRAGMA journal_mode=WAL; PRAGMA synchronous=FULL;
         CREATE TABLE docs (id INTEGER PRIMARY KEY, body TEXT NOT NULL);",
    )
    .expect("schema");
    let mut t = Timings::default();
    let start = Instant::now();
    for chunk in (0..docs).collect::<Vec<_>>().chunks(BATCH) {
        let tx = conn.transaction().expect("tx");
        {
            let mut stmt = tx
                .prepare_cached("INSERT INTO docs (id, body) VALUES (?1, ?2)")
                .expect("prepare");
            for &i in chunk {
                let body = serde_json::json!({"_id": i, "name": format!("user{i}"),
                    "group": group(i), "score": i as f64 * 0.5, "payload": payload(i)});
                stmt.execute(rusqlite::params![i as i64, body.to_string()])
                    .expect("insert");
            }
        }
        tx.commit().expect("commit");
    }
    t.load = start.elapsed();
    let start = Instant::now();
    {
        let mut stmt = conn
            .prepare_cached("SELECT body FROM docs WHERE id = ?1")
            .expect("prepare");
        for id in ids(docs, POINT_READS, 7) {
            let body: String = stmt
                .query_row([id as i64], |row| row.get(0))
                .expect("point read");
            let parsed: serde_json::Value = serde_json::from_str(&body).expect("json");
            assert!(parsed.is_object());
        }
    }
    t.point_reads = start.elapsed();
    let start = Instant::now();
    {
        let mut stmt = conn
            .prepare("SELECT body FROM docs WHERE json_extract(body, '$.group') = 7")
            .expect("prepare");
        let rows = stmt
            .query_map([], |row| row.get::<_, String>(0))
            .expect("scan");
        for body in rows {
            let parsed: serde_json::Value =
                serde_json::from_str(&body.expect("row")).expect("json");
            assert!(parsed.is_object());
            t.scan_hits += 1;
        }
    }
    t.scan = start.elapsed();
    let start = Instant::now();
    for (n, id) in ids(docs, UPDATES, 11).into_iter().enumerate() {
        let changed = conn
            .execute(
                "UPDATE docs SET body = json_set(body, '$.score', ?1) WHERE id = ?2",
                rusqlite::params![n as f64, id as i64],
            )
            .expect("update");
        assert_eq!(changed, 1);
    }
    t.updates = start.elapsed();
    t
}

fn bench_polodb(dir: &Path, docs: usize) -> Timings {
    use polodb_core::bson::doc as pdoc;
    let db = polodb_core::Database::open_file(dir.join("bench.polodb")).expect("open");
    let coll = db.collection::<polodb_core::bson::Document>("bench");
    let mut t = Timings::default();
    let start = Instant::now();
    for chunk in (0..docs).collect::<Vec<_>>().chunks(BATCH) {
        let batch: Vec<_> = chunk
            .iter()
            .map(|&i| {
                pdoc! {"_id": i as i64, "name": format!("user{i}"), "group": group(i),
                "score": i as f64 * 0.5, "payload": payload(i)}
            })
            .collect();
        coll.insert_many(batch).expect("insert_many");
    }
    t.load = start.elapsed();
    let start = Instant::now();
    for id in ids(docs, POINT_READS, 7) {
        let found = coll.find_one(pdoc! {"_id": id as i64}).expect("find_one");
        assert!(found.is_some(), "id {id}");
    }
    t.point_reads = start.elapsed();
    let start = Instant::now();
    let cursor = coll.find(pdoc! {"group": 7i64}).expect("find");
    t.scan_hits = cursor.inspect(|d| assert!(d.is_ok(), "{d:?}")).count();
    t.scan = start.elapsed();
    let start = Instant::now();
    for (n, id) in ids(docs, UPDATES, 11).into_iter().enumerate() {
        let r = coll
            .update_one(
                pdoc! {"_id": id as i64},
                pdoc! {"$set": {"score": n as f64}},
            )
            .expect("update");
        assert!(r.modified_count <= 1);
    }
    t.updates = start.elapsed();
    t
}

fn row(name: &str, ours: Duration, sqlite: Duration, polodb: Duration) {
    let ms = |d: Duration| d.as_secs_f64() * 1000.0;
    println!(
        "{name:<34} {:>10.1} {:>10.1} {:>10.1}   {:>6.2}x {:>6.2}x",
        ms(ours),
        ms(sqlite),
        ms(polodb),
        ms(sqlite) / ms(ours),
        ms(polodb) / ms(ours),
    );
}

fn main() {
    let args = parse_args();
    std::fs::create_dir_all(&args.dir).expect("bench dir");
    let sub = |name: &str| {
        let path = args.dir.join(name);
        let _ = std::fs::remove_dir_all(&path);
        std::fs::create_dir_all(&path).expect("dir");
        path
    };
    if args.only_typed {
        let dir = sub("typed");
        let dir = (!args.only_memory).then_some(dir.as_path());
        bench_typed_untyped(dir, args.docs, args.rounds);
        let _ = std::fs::remove_dir_all(&args.dir);
        return;
    }
    let ours_dir = sub("multiforadb");
    let ours = bench_multiforadb(&ours_dir, args.docs);
    if args.only_ours {
        let ms = |d: Duration| d.as_secs_f64() * 1000.0;
        println!(
            "mfdb only: load {:.1} ms, point reads {:.1} ms, scan {:.1} ms, updates {:.1} ms",
            ms(ours.load),
            ms(ours.point_reads),
            ms(ours.scan),
            ms(ours.updates)
        );
        println!(
            "  process cpu: load {:.0} ms, point reads {:.0} ms, scan {:.0} ms, updates {:.0} ms",
            ms(ours.cpu[0]),
            ms(ours.cpu[1]),
            ms(ours.cpu[2]),
            ms(ours.cpu[3])
        );
        let _ = std::fs::remove_dir_all(&args.dir);
        return;
    }
    let sqlite = bench_sqlite(&sub("sqlite"), args.docs);
    let polodb = bench_polodb(&sub("polodb"), args.docs);
    assert_eq!(ours.scan_hits, sqlite.scan_hits, "scan results differ");
    assert_eq!(ours.scan_hits, polodb.scan_hits, "scan results differ");
    println!(
        "{} documents of ~1 KiB, batches of {BATCH}; times in ms; ratio = peer / MultiforaDB \
         (above 1: we are faster)",
        args.docs
    );
    println!(
        "{:<34} {:>10} {:>10} {:>10}   {:>7} {:>7}",
        "row", "mfdb", "sqlite", "polodb*", "sqlite", "polodb*"
    );
    row(
        "load (durable batches of 1,000)",
        ours.load,
        sqlite.load,
        polodb.load,
    );
    row(
        "10,000 point reads by _id",
        ours.point_reads,
        sqlite.point_reads,
        polodb.point_reads,
    );
    row("filtered full scan", ours.scan, sqlite.scan, polodb.scan);
    row(
        "1,000 durable single updates",
        ours.updates,
        sqlite.updates,
        polodb.updates,
    );
    println!("* PoloDB 4.4 never fsyncs: its write rows are not durable (an upper bound).");
    println!();
    bench_typed_untyped(Some(&ours_dir), args.docs, args.rounds);
    let _ = std::fs::remove_dir_all(&args.dir);
}
