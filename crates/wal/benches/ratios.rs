//! The log's performance goals, each measured as a ratio against its floor in one run.
//!
//! Run: `cargo bench -p wal --bench ratios` (release profile). Files go to
//! `target/wal-bench/`, on the same file system as the repository. Prints one table:
//!
//! 1. commit latency of one small record against a bare 4 KiB append + fdatasync and
//!    against a 4 KiB overwrite of preallocated space + fdatasync (interleaved rounds);
//! 2. commits per second with 1, 8, 32 and 128 concurrent committers, and commits per
//!    fsync, one 1.5 s window each; then 1 against 32 committers in alternating short
//!    windows (one scheduler tick or a burst of load elsewhere moves a single window's
//!    rate a lot, so the ratio goal is read from the medians of the alternating ones);
//! 3. append throughput of 16 KiB documents against lz4_flex compressing the same bytes;
//! 4. the machine's ceiling for the ratio of 2.: 1 against 32 committers of the log and
//!    of two bare group-commit skeletons (`ceiling`), in alternating windows.
//!
//! Invariants:
//! - Every figure compared in a ratio is measured in this process, in alternating rounds,
//!   so drift of the machine affects both sides alike.

use std::fs::File;
use std::os::unix::fs::FileExt;
use std::path::Path;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::{Duration, Instant};
use support::{DOC_COUNT, DOC_LEN, bench_dir, documents};
use wal::{Dir, FaultyStorage, Op, OsDir, OsStorage, Storage, Wal, WalOptions};

mod ceiling;
mod support;

const ROUNDS: usize = 5;
const LATENCY_ITERATIONS: usize = 300;

/// Alternating windows of 1 and 32 committers: this many of each.
const PAIRS: usize = 10;
const PAIR_WINDOW: Duration = Duration::from_millis(300);

fn main() {
    // `cargo bench -p wal --bench ratios -- concurrency` runs only the sections whose
    // name (latency, concurrency, concurrency-interleaved, throughput, ceiling) contains one of
    // the words given (all of them without any).
    let words: Vec<String> = std::env::args()
        .skip(1)
        .filter(|a| !a.starts_with('-'))
        .collect();
    let run = |section: &str| {
        words.is_empty()
            || words
                .iter()
                .any(|w| !w.starts_with("window-") && section.contains(w))
    };
    let root = bench_dir("ratios");
    println!("wal ratios bench, files in {}", root.display());
    if run("latency") {
        latency(&root);
    }
    if run("concurrency") {
        concurrency(&root);
    }
    if run("concurrency-interleaved") {
        interleaved(&root);
    }
    if run("throughput") {
        throughput(&root);
    }
    if run("ceiling") {
        ceiling_ratios(&root);
    }
    // `window-N` (never part of a full run): one 2 s window of N committers, printing the
    // commit count, for `perf stat` per commit.
    for word in &words {
        if let Some(threads) = word.strip_prefix("window-").and_then(|n| n.parse().ok()) {
            let (wal, _) =
                Wal::open_path(&root, "window.wal", WalOptions::default()).expect("open");
            let (total, rate) = window(&Arc::new(wal), threads, Duration::from_secs(2));
            println!("window of {threads} committers: {total:.0} commits, {rate:.0}/s");
        }
    }
    let _ = std::fs::remove_dir_all(&root);
}

fn percentile(samples: &mut [Duration], p: f64) -> Duration {
    samples.sort();
    let index = ((samples.len() as f64 - 1.0) * p).round() as usize;
    samples[index]
}

fn micros(d: Duration) -> f64 {
    d.as_secs_f64() * 1e6
}

/// Floors and commit latency, in interleaved rounds.
fn latency(root: &Path) {
    let block = vec![0x5au8; 4096];
    let append_path = root.join("floor-append");
    let overwrite_path = root.join("floor-overwrite");
    let append_file = File::create(&append_path).expect("create");
    let overwrite_file = File::create(&overwrite_path).expect("create");
    let prealloc = (LATENCY_ITERATIONS * ROUNDS * 4096) as u64;
    for offset in (0..prealloc).step_by(1 << 20) {
        overwrite_file
            .write_all_at(&vec![0u8; 1 << 20], offset)
            .expect("prewrite");
    }
    overwrite_file.sync_all().expect("sync");
    let (wal, _) = Wal::open_path(root, "latency.wal", WalOptions::default()).expect("open");
    let (marked_wal, _) =
        Wal::open_path(root, "latency-marked.wal", WalOptions::default()).expect("open");
    // A durable-LSN mark (#24: telling an acknowledged last block from a torn one),
    // priced two ways before any format change: a small write after each sync that the
    // next sync carries, in the same file (the overwrite floor plus a 64-byte write to
    // another page of it before the fdatasync) or in a side file (no sync of its own:
    // kill -9 keeps it, a power cut at worst leaves an older, still true, mark).
    let mark_path = root.join("latency.mark");
    let mark_file = File::create(&mark_path).expect("create");
    mark_file.write_all_at(&[0u8; 4096], 0).expect("prewrite");
    mark_file.sync_all().expect("sync");
    let mark = [0x6du8; 64];
    let record = vec![0x42u8; 100];
    let (mut appends, mut overwrites, mut commits) = (Vec::new(), Vec::new(), Vec::new());
    let (mut overwrites_marked, mut commits_marked) = (Vec::new(), Vec::new());
    let (mut append_at, mut overwrite_at) = (0u64, 0u64);
    for _ in 0..ROUNDS {
        for _ in 0..LATENCY_ITERATIONS {
            let start = Instant::now();
            append_file.write_all_at(&block, append_at).expect("append");
            append_file.sync_data().expect("fdatasync");
            appends.push(start.elapsed());
            append_at += 4096;
        }
        for _ in 0..LATENCY_ITERATIONS {
            let start = Instant::now();
            overwrite_file
                .write_all_at(&block, overwrite_at)
                .expect("overwrite");
            overwrite_file.sync_data().expect("fdatasync");
            overwrites.push(start.elapsed());
            overwrite_at += 4096;
        }
        for _ in 0..LATENCY_ITERATIONS {
            let start = Instant::now();
            overwrite_file
                .write_all_at(&block, overwrite_at)
                .expect("overwrite");
            // The mark of the previous sync, in the file's first page.
            overwrite_file.write_all_at(&mark, 0).expect("mark");
            overwrite_file.sync_data().expect("fdatasync");
            overwrites_marked.push(start.elapsed());
            overwrite_at += 4096;
        }
        for _ in 0..LATENCY_ITERATIONS {
            let start = Instant::now();
            let lsn = wal.append(&record).expect("append");
            wal.commit(lsn).expect("commit");
            commits.push(start.elapsed());
        }
        for _ in 0..LATENCY_ITERATIONS {
            let start = Instant::now();
            let lsn = marked_wal.append(&record).expect("append");
            marked_wal.commit(lsn).expect("commit");
            mark_file.write_all_at(&mark, 0).expect("mark");
            commits_marked.push(start.elapsed());
        }
    }
    let append_p50 = percentile(&mut appends, 0.5);
    let overwrite_p50 = percentile(&mut overwrites, 0.5);
    let commit_p50 = percentile(&mut commits, 0.5);
    let overwrite_marked_p50 = percentile(&mut overwrites_marked, 0.5);
    let commit_marked_p50 = percentile(&mut commits_marked, 0.5);
    println!();
    println!(
        "## 1. commit latency, one 100-byte record ({ROUNDS} interleaved rounds of {LATENCY_ITERATIONS})"
    );
    println!("| series | p50 µs | p99 µs |");
    println!("| --- | --- | --- |");
    for (name, samples, p50) in [
        ("bare 4 KiB append + fdatasync", &mut appends, append_p50),
        (
            "4 KiB overwrite of preallocated + fdatasync",
            &mut overwrites,
            overwrite_p50,
        ),
        ("wal append + commit", &mut commits, commit_p50),
        (
            "4 KiB overwrite + 64 B mark in the same file + fdatasync",
            &mut overwrites_marked,
            overwrite_marked_p50,
        ),
        (
            "wal append + commit + 64 B mark in a side file",
            &mut commits_marked,
            commit_marked_p50,
        ),
    ] {
        let p99 = percentile(samples, 0.99);
        println!("| {name} | {:.1} | {:.1} |", micros(p50), micros(p99));
    }
    println!(
        "ratio commit / append floor (goal <= 0.8): {:.2}",
        commit_p50.as_secs_f64() / append_p50.as_secs_f64()
    );
    println!(
        "ratio commit / overwrite floor: {:.2}",
        commit_p50.as_secs_f64() / overwrite_p50.as_secs_f64()
    );
    println!(
        "durable-LSN mark: same file {:.3}x the overwrite floor, side file {:.3}x the commit",
        overwrite_marked_p50.as_secs_f64() / overwrite_p50.as_secs_f64(),
        commit_marked_p50.as_secs_f64() / commit_p50.as_secs_f64()
    );
}

/// A directory that remembers the files it opened, to count their fsyncs.
#[derive(Debug)]
struct CountingDir {
    inner: OsDir,
    files: parking_lot::Mutex<Vec<Arc<FaultyStorage<OsStorage>>>>,
}

impl CountingDir {
    fn syncs(&self) -> u64 {
        self.files.lock().iter().map(|f| f.count(Op::Sync)).sum()
    }
}

impl Dir for CountingDir {
    fn open(&self, name: &str) -> std::io::Result<Arc<dyn Storage>> {
        let path = self.inner.path().join(name);
        let file = Arc::new(FaultyStorage::new(OsStorage::open(&path)?));
        self.files.lock().push(Arc::clone(&file));
        Ok(file)
    }
    fn exists(&self, name: &str) -> std::io::Result<bool> {
        self.inner.exists(name)
    }
    fn rename(&self, from: &str, to: &str) -> std::io::Result<()> {
        self.inner.rename(from, to)
    }
    fn remove(&self, name: &str) -> std::io::Result<()> {
        self.inner.remove(name)
    }
    fn list(&self) -> std::io::Result<Vec<String>> {
        self.inner.list()
    }
    fn sync(&self) -> std::io::Result<()> {
        self.inner.sync()
    }
}

/// Commits per second with many committers, each appending one record and committing it.
fn concurrency(root: &Path) {
    println!();
    println!("## 2. concurrent committers (each: append 100 B, commit, repeat; 1.5 s per row)");
    println!("| committers | commits/s | × 1 committer | commits per fsync |");
    println!("| --- | --- | --- | --- |");
    let mut single = 0.0;
    for threads in [1usize, 8, 32, 128] {
        let dir = Arc::new(CountingDir {
            inner: OsDir::new(root),
            files: parking_lot::Mutex::new(Vec::new()),
        });
        let name = format!("concurrency-{threads}.wal");
        let (wal, _) = Wal::open(
            Arc::clone(&dir) as Arc<dyn Dir>,
            &name,
            WalOptions::default(),
        )
        .expect("open");
        let wal = Arc::new(wal);
        let syncs_before = dir.syncs();
        let (total, rate) = window(&wal, threads, Duration::from_millis(1500));
        let syncs = (dir.syncs() - syncs_before).max(1) as f64;
        if threads == 1 {
            single = rate;
        }
        println!(
            "| {threads} | {rate:.0} | {:.1} | {:.1} |",
            rate / single,
            total / syncs
        );
    }
}

/// Runs `threads` committers on `wal` for `duration`, each appending one 100-byte record
/// and committing it, over and over. Returns the commits and the commits per second.
fn window(wal: &Arc<Wal>, threads: usize, duration: Duration) -> (f64, f64) {
    let wal = Arc::clone(wal);
    let record = [0x33u8; 100];
    run_committers(
        threads,
        duration,
        Arc::new(move || {
            let lsn = wal.append(&record).expect("append");
            wal.commit(lsn).expect("commit");
        }),
    )
}

/// Runs `threads` threads calling `commit` over and over for `duration` (the log's
/// committers and the skeletons of `ceiling` alike). Returns the commits and the
/// commits per second.
fn run_committers(
    threads: usize,
    duration: Duration,
    commit: Arc<dyn Fn() + Send + Sync>,
) -> (f64, f64) {
    let stop = Arc::new(AtomicBool::new(false));
    let commits = Arc::new(AtomicU64::new(0));
    let start = Instant::now();
    let handles: Vec<_> = (0..threads)
        .map(|_| {
            let (commit, stop, commits) =
                (Arc::clone(&commit), Arc::clone(&stop), Arc::clone(&commits));
            std::thread::spawn(move || {
                while !stop.load(Ordering::Relaxed) {
                    commit();
                    commits.fetch_add(1, Ordering::Relaxed);
                }
            })
        })
        .collect();
    std::thread::sleep(duration);
    stop.store(true, Ordering::Relaxed);
    for handle in handles {
        handle.join().expect("committer");
    }
    let elapsed = start.elapsed().as_secs_f64();
    let total = commits.load(Ordering::Relaxed) as f64;
    (total, total / elapsed)
}

fn median(values: &[f64]) -> f64 {
    let mut sorted = values.to_vec();
    sorted.sort_by(f64::total_cmp);
    sorted[sorted.len() / 2]
}

/// 1 against 32 committers in alternating short windows (1, 32, 32, 1, 1, 32, ...), each
/// on its own log, so drift of the machine reaches both series alike.
fn interleaved(root: &Path) {
    let open = |name: &str| {
        let (wal, _) = Wal::open_path(root, name, WalOptions::default()).expect("open");
        let wal = Arc::new(wal);
        // Warm up: the file's first preallocation, and the gather's timing.
        window(&wal, 1, Duration::from_millis(50));
        wal
    };
    let (one, many) = (open("interleaved-1.wal"), open("interleaved-32.wal"));
    let (mut rates_one, mut rates_many, mut ratios) = (Vec::new(), Vec::new(), Vec::new());
    for pair in 0..PAIRS {
        let (rate_one, rate_many) = if pair % 2 == 0 {
            let a = window(&one, 1, PAIR_WINDOW).1;
            (a, window(&many, 32, PAIR_WINDOW).1)
        } else {
            let b = window(&many, 32, PAIR_WINDOW).1;
            (window(&one, 1, PAIR_WINDOW).1, b)
        };
        rates_one.push(rate_one);
        rates_many.push(rate_many);
        ratios.push(rate_many / rate_one);
    }
    let spread = |values: &[f64]| {
        let (min, max) = values
            .iter()
            .fold((f64::MAX, f64::MIN), |(lo, hi), &v| (lo.min(v), hi.max(v)));
        (median(values), min, max)
    };
    println!();
    println!(
        "## 2b. 1 against 32 committers, {PAIRS} alternating pairs of {} ms windows",
        PAIR_WINDOW.as_millis()
    );
    println!("| committers | median commits/s | min | max |");
    println!("| --- | --- | --- | --- |");
    for (threads, rates) in [(1, &rates_one), (32, &rates_many)] {
        let (med, min, max) = spread(rates);
        println!("| {threads} | {med:.0} | {min:.0} | {max:.0} |");
    }
    let (med, min, max) = spread(&ratios);
    println!(
        "ratio of medians 32 / 1 committer (goal >= 20): {:.1}",
        median(&rates_many) / median(&rates_one)
    );
    println!("ratio within each pair: median {med:.1}, min {min:.1}, max {max:.1}");
}

/// Append throughput of 16 KiB documents against lz4_flex alone.
fn throughput(root: &Path) {
    let docs = documents();
    let bytes_total = (DOC_LEN * DOC_COUNT) as f64;
    let mut output = vec![0u8; lz4_flex::block::get_maximum_output_size(DOC_LEN)];
    let mut chunk_output = vec![0u8; lz4_flex::block::get_maximum_output_size(256 * 1024)];
    let (mut lz4_doc, mut lz4_chunk, mut append, mut append_commit) =
        (Vec::new(), Vec::new(), Vec::new(), Vec::new());
    let mut compressed = 0usize;
    let concatenated: Vec<u8> = docs.concat();
    for round in 0..ROUNDS {
        let start = Instant::now();
        compressed = 0;
        for doc in &docs {
            compressed += lz4_flex::block::compress_into(doc, &mut output).expect("compress");
        }
        lz4_doc.push(start.elapsed());
        let start = Instant::now();
        for chunk in concatenated.chunks(256 * 1024) {
            lz4_flex::block::compress_into(chunk, &mut chunk_output).expect("compress");
        }
        lz4_chunk.push(start.elapsed());
        let name = format!("throughput-{round}.wal");
        let (wal, _) = Wal::open_path(root, &name, WalOptions::default()).expect("open");
        let start = Instant::now();
        for doc in &docs {
            wal.append(doc).expect("append");
        }
        append.push(start.elapsed());
        wal.commit_all().expect("commit");
        append_commit.push(start.elapsed());
        drop(wal);
        std::fs::remove_file(root.join(&name)).expect("remove");
    }
    let rate =
        |samples: &mut Vec<Duration>| bytes_total / percentile(samples, 0.5).as_secs_f64() / 1e6;
    let (lz4_doc, lz4_chunk) = (rate(&mut lz4_doc), rate(&mut lz4_chunk));
    let (append, append_commit) = (rate(&mut append), rate(&mut append_commit));
    println!();
    println!(
        "## 3. append throughput, {DOC_COUNT} × 16 KiB documents (lz4 ratio {:.2}; median of {ROUNDS})",
        bytes_total / compressed as f64
    );
    println!("| series | MB/s |");
    println!("| --- | --- |");
    println!("| lz4_flex compress, each 16 KiB document alone | {lz4_doc:.0} |");
    println!("| lz4_flex compress, 256 KiB chunks | {lz4_chunk:.0} |");
    println!("| wal append (never syncs) | {append:.0} |");
    println!("| wal append + one final commit | {append_commit:.0} |");
    println!(
        "ratio append / lz4 per document (goal >= 0.7): {:.2}",
        append / lz4_doc
    );
    println!(
        "ratio append / lz4 per 256 KiB chunk: {:.2}",
        append / lz4_chunk
    );
    println!(
        "ratio append+commit / lz4 per document: {:.2}",
        append_commit / lz4_doc
    );
}

/// 1 against 32 committers of the log and of the two skeletons in `ceiling`, in
/// alternating windows (each pair: the three systems in turn, 1 and 32 in alternating
/// order), so all three see the same machine.
fn ceiling_ratios(root: &Path) {
    use ceiling::{Lead, Skeleton};
    let wals: Vec<Arc<Wal>> = ["ceiling-1.wal", "ceiling-32.wal"]
        .iter()
        .map(|name| {
            let (wal, _) = Wal::open_path(root, name, WalOptions::default()).expect("open");
            let wal = Arc::new(wal);
            window(&wal, 1, Duration::from_millis(50));
            wal
        })
        .collect();
    let skeletons: Vec<Arc<Skeleton>> = [Lead::Eager, Lead::Gathered, Lead::NoIo]
        .iter()
        .map(|&lead| Arc::new(Skeleton::new(&root.join(format!("ceiling-{lead:?}")), lead)))
        .collect();
    let names = [
        "the log",
        "skeleton, eager leader",
        "skeleton, gathered rounds",
        "skeleton, gathered rounds, no I/O",
    ];
    let mut rates: Vec<[Vec<f64>; 2]> = (0..4).map(|_| [Vec::new(), Vec::new()]).collect();
    for pair in 0..PAIRS {
        for (system, series) in rates.iter_mut().enumerate() {
            let order: [usize; 2] = if pair % 2 == 0 { [1, 32] } else { [32, 1] };
            for threads in order {
                let rate = match system {
                    0 => window(&wals[usize::from(threads == 32)], threads, PAIR_WINDOW).1,
                    _ => {
                        let skeleton = Arc::clone(&skeletons[system - 1]);
                        let commit = move || skeleton.commit(threads as u64);
                        run_committers(threads, PAIR_WINDOW, Arc::new(commit)).1
                    }
                };
                series[usize::from(threads == 32)].push(rate);
            }
        }
    }
    println!();
    println!(
        "## 4. ceiling: 1 against 32 committers, {PAIRS} alternating pairs of {} ms windows",
        PAIR_WINDOW.as_millis()
    );
    println!("| system | median commits/s, 1 | median commits/s, 32 | ratio of medians |");
    println!("| --- | --- | --- | --- |");
    for (name, [one, many]) in names.iter().zip(&rates) {
        let (one, many) = (median(one), median(many));
        println!("| {name} | {one:.0} | {many:.0} | {:.1} |", many / one);
    }
    // A round of 32 without I/O is pure wake-up cost; 20x needs a round of 32 (sync
    // included) within 32/20 of a single commit's time.
    let wake_round = 32.0 / median(&rates[3][1]) * 1e6;
    let single = 1e6 / median(&rates[0][0]);
    println!(
        "a round of 32 without I/O: {wake_round:.0} µs; a single commit of the log: \
         {single:.0} µs; 20x leaves a round of 32 {:.0} µs, sync included",
        single * 32.0 / 20.0
    );
}
