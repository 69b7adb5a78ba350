//! `cargo xtask gates`: every measured claim of the project by one command, beside the
//! physical floors of the machine measured in the same run.
//!
//! Builds the release server, runs the sections (the benchmark table through the Node.js
//! driver, large collections, churn, the crash matrix), writes
//! `results/gates-YYYYMMDD-HHMMSS.tsv` (`# section` lines, then `name<TAB>value` rows, units in
//! the names) and prints the difference from the previous report. The driver workloads are
//! `tests/gates/bench.mjs`; this module owns the server (start, RSS, SIGKILL, SIGTERM, reopen)
//! and the floors. Not run in CI: the default size takes several minutes.

mod report;
mod sys;

use crate::e2e::{RunningServer, stop_within};
use anyhow::{Context, Result, bail};
use report::{Report, Row, number};
use std::collections::HashMap;
use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

const USAGE: &str = "usage: cargo xtask gates [--size small|default|large] [--docs N] \
[--doc-size BYTES] [--large-gb G] [--only bench,large,churn,crash,replset] \
[--compressor none|lz4]";

const SECTIONS: &[&str] = &["bench", "large", "churn", "crash", "replset"];

/// A clean stop checkpoints; on a large file that takes a while.
const STOP_LIMIT: Duration = Duration::from_secs(300);
/// Longest wait for a restarted server's first `ping`.
const OPEN_LIMIT: Duration = Duration::from_secs(120);

/// What one run measures, from `--size` and the flags that override it.
struct Plan {
    size: String,
    /// Benchmark table: documents and their BSON size.
    docs: u64,
    doc_size: u64,
    /// Repetitions of the scan-sized latency rows.
    reps: u32,
    /// Sequential inserts of this many bytes, to see the tail across a checkpoint (0: skip).
    long_insert_bytes: u64,
    /// Concurrent inserts: seconds per level and repetitions.
    concurrent_seconds: f64,
    concurrent_reps: u32,
    /// Large collections: bytes loaded.
    large_bytes: u64,
    /// Churn: documents, delete-and-refill rounds, `$set` rounds.
    churn_docs: u64,
    churn_delete_rounds: u32,
    churn_set_rounds: u32,
    /// The sequential-write floor: bytes per repetition.
    seq_write_bytes: usize,
    only: Vec<String>,
    /// The server's `--compressor` (its default when `None`).
    compressor: Option<String>,
}

impl Plan {
    fn parse(args: &[String]) -> Result<Plan> {
        let mut flags: HashMap<String, String> = HashMap::new();
        let mut iter = args.iter();
        while let Some(flag) = iter.next() {
            let Some(name) = flag.strip_prefix("--") else {
                bail!("unexpected argument {flag:?}\n{USAGE}");
            };
            let Some(value) = iter.next() else {
                bail!("{flag} needs a value\n{USAGE}");
            };
            flags.insert(name.to_owned(), value.clone());
        }
        let size = flags.remove("size").unwrap_or_else(|| "default".into());
        let mut plan = match size.as_str() {
            "small" => Plan {
                size: size.clone(),
                docs: 4096,
                doc_size: 16384,
                reps: 3,
                long_insert_bytes: 0,
                concurrent_seconds: 0.5,
                concurrent_reps: 1,
                large_bytes: 64 << 20,
                churn_docs: 4000,
                churn_delete_rounds: 4,
                churn_set_rounds: 3,
                seq_write_bytes: 256 << 20,
                only: Vec::new(),
                compressor: None,
            },
            "default" | "large" => Plan {
                size: size.clone(),
                docs: 65536,
                doc_size: 16384,
                reps: 5,
                long_insert_bytes: 96 << 20,
                concurrent_seconds: 2.0,
                concurrent_reps: 3,
                large_bytes: if size == "large" { 4 << 30 } else { 1 << 30 },
                churn_docs: 40000,
                churn_delete_rounds: 6,
                churn_set_rounds: 5,
                seq_write_bytes: 256 << 20,
                only: Vec::new(),
                compressor: None,
            },
            other => bail!("unknown size {other:?}\n{USAGE}"),
        };
        for (name, value) in flags {
            match name.as_str() {
                "docs" => plan.docs = value.parse().context("--docs")?,
                "doc-size" => plan.doc_size = value.parse().context("--doc-size")?,
                "large-gb" => {
                    let gb: f64 = value.parse().context("--large-gb")?;
                    plan.large_bytes = (gb * f64::from(1u32 << 30)) as u64;
                }
                "only" => {
                    plan.only = value.split(',').map(str::to_owned).collect();
                    if let Some(bad) = plan.only.iter().find(|s| !SECTIONS.contains(&s.as_str())) {
                        bail!("unknown section {bad:?}; sections: {}", SECTIONS.join(","));
                    }
                }
                "compressor" => plan.compressor = Some(value),
                other => bail!("unknown flag --{other}\n{USAGE}"),
            }
        }
        Ok(plan)
    }

    fn runs(&self, section: &str) -> bool {
        self.only.is_empty() || self.only.iter().any(|s| s == section)
    }
}

/// What every section needs: the server binary, the node script, a scratch folder.
struct Setup {
    root: PathBuf,
    server: PathBuf,
    /// Flags every server start gets (`--log-level`, `--compressor`).
    server_args: Vec<String>,
    script: PathBuf,
    scratch: PathBuf,
}

pub fn run(root: &Path, args: &[String]) -> Result<()> {
    let plan = Plan::parse(args)?;
    let e2e = root.join("tests/e2e");
    if !e2e.join("node_modules/mongodb").exists() {
        bail!("the Node.js driver is not installed: run `bash tests/e2e/setup.sh` first");
    }
    eprintln!("gates: building the release server");
    let status = crate::cargo()
        .current_dir(root)
        .args(["build", "--release", "-p", "server", "--bin", "multiforadb"])
        .status()?;
    if !status.success() {
        bail!("building the release server failed");
    }
    let scratch = root
        .join("results/tmp")
        .join(format!("gates-{}", std::process::id()));
    std::fs::create_dir_all(&scratch)?;
    let context = Setup {
        root: root.to_owned(),
        server: crate::target_dir(root).join("release/multiforadb"),
        server_args: {
            let mut args = vec!["--log-level".to_owned(), "info".to_owned()];
            if let Some(compressor) = &plan.compressor {
                args.extend(["--compressor".to_owned(), compressor.clone()]);
            }
            args
        },
        script: root.join("tests/gates/bench.mjs"),
        scratch: scratch.clone(),
    };
    let stamp = command_output(Command::new("date").arg("+%Y%m%d-%H%M%S"))?;
    let mut report = Report::default();
    let machine = report.section("machine");
    machine.push(("date".into(), stamp.clone()));
    machine.push(("commit".into(), git_commit(root)));
    machine.push(("size".into(), plan.size.clone()));
    let sections = if plan.only.is_empty() {
        "all".into()
    } else {
        plan.only.join(",")
    };
    machine.push(("sections".into(), sections));
    machine.push((
        "compressor".into(),
        plan.compressor
            .clone()
            .unwrap_or_else(|| "default (none)".into()),
    ));
    machine.push(("docs".into(), plan.docs.to_string()));
    machine.push(("doc_size_bytes".into(), plan.doc_size.to_string()));
    machine.push(("large_bytes".into(), plan.large_bytes.to_string()));
    machine.push(("churn_docs".into(), plan.churn_docs.to_string()));
    machine.extend(sys::machine());
    machine.push((
        "node".into(),
        command_output(Command::new("node").arg("--version"))?,
    ));
    machine.push(("driver".into(), driver_version(&e2e)));
    println!("gates: {} run; machine:", plan.size);
    for (name, value) in report.section("machine").iter() {
        println!("  {name}\t{value}");
    }
    let result = run_sections(&context, &plan, &mut report);
    let _ = std::fs::remove_dir_all(&scratch);
    result?;
    report
        .section("machine")
        .push(("loadavg_end".into(), sys::load_average()));
    let path = report::write(root, &stamp, &report)?;
    report::print_bench_table(&report);
    println!("\nreport: {}", path.display());
    if let Some(previous) = report::previous(root, &path) {
        let old = Report::parse(&std::fs::read_to_string(&previous)?);
        let name = previous
            .file_name()
            .map(|n| n.to_string_lossy().into_owned());
        report::print_diff(&name.unwrap_or_default(), &old, &report);
    }
    Ok(())
}

fn run_sections(context: &Setup, plan: &Plan, report: &mut Report) -> Result<()> {
    type Section = fn(&Setup, &Plan) -> Result<Vec<Row>>;
    let sections: [(&str, String, Section); 5] = [
        (
            "bench",
            format!("{} x {} B", plan.docs, plan.doc_size),
            bench,
        ),
        (
            "large",
            format!("{:.2} GB", plan.large_bytes as f64 / 1e9),
            large,
        ),
        (
            "churn",
            format!("{} x {} B", plan.churn_docs, plan.doc_size),
            churn,
        ),
        ("crash", String::new(), crash),
        (
            "replset",
            format!("{} rounds, PyMongo", replset_rounds(plan)),
            replset,
        ),
    ];
    for (name, what, section) in sections {
        if !plan.runs(name) {
            continue;
        }
        println!("\n# {name}: {what} (load average {})", sys::load_average());
        let rows = section(context, plan)?;
        report.section(name).extend(rows);
        let load = sys::load_average();
        report
            .section("machine")
            .push((format!("loadavg_after_{name}"), load));
    }
    Ok(())
}

// ---- a replica set beside a standalone (issue 43) ------------------------------------------

fn replset_rounds(plan: &Plan) -> u32 {
    if plan.size == "small" { 3 } else { 5 }
}

/// `tests/e2e/bench_replset.py`: a `--replSet` server and a standalone side by side,
/// alternating rounds (retryable and plain insertOne, insertMany, hello vs ping, the first
/// ping as primary); its `name<TAB>value` lines are the rows.
fn replset(context: &Setup, plan: &Plan) -> Result<Vec<Row>> {
    let python = context.root.join("tests/e2e/.venv/bin/python");
    if !python.exists() {
        bail!("PyMongo is not installed: run `bash tests/e2e/setup.sh` first");
    }
    let mut child = Command::new(python)
        .arg(context.root.join("tests/e2e/bench_replset.py"))
        .arg(&context.server)
        .arg(replset_rounds(plan).to_string())
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit())
        .spawn()
        .context("starting bench_replset.py")?;
    let stdout = child.stdout.take().context("bench_replset.py stdout")?;
    let mut rows = Vec::new();
    for line in BufReader::new(stdout).lines() {
        let line = line?;
        match line.split_once('\t') {
            Some((name, value)) => rows.push((name.to_owned(), value.to_owned())),
            None => println!("  {line}"),
        }
    }
    let status = child.wait()?;
    if !status.success() {
        bail!("bench_replset.py failed: {status}");
    }
    Ok(rows)
}

// ---- the benchmark table ----------------------------------------------------------------

fn bench(context: &Setup, plan: &Plan) -> Result<Vec<Row>> {
    let dir = context.scratch.join("bench");
    std::fs::create_dir_all(&dir)?;
    let mut rows = Vec::new();
    // The floors, on the file system the database lives on: measured before and after the
    // table, and the better of the two kept (the more demanding bar; a burst of other
    // processes' I/O during one of them then does not flatter the ratios).
    let before = floors(&dir, plan)?;
    // The open floor: the server reopening an empty database it created before.
    let empty = dir.join("empty.mfdb");
    let (mut server, _) = timed_start(context, &empty)?;
    stop_within(&mut server, STOP_LIMIT)?;
    let (mut server, open_empty) = timed_start(context, &empty)?;
    stop_within(&mut server, STOP_LIMIT)?;
    rows.extend(tls_pings(context, &dir, &empty)?);

    let db = dir.join("bench.mfdb");
    let (mut server, _) = timed_start(context, &db)?;
    let uri = uri(&server);
    let table = node(
        context,
        "table",
        &uri,
        &[
            ("docs", plan.docs.to_string()),
            ("doc-size", plan.doc_size.to_string()),
            ("reps", plan.reps.to_string()),
            ("long-bytes", plan.long_insert_bytes.to_string()),
        ],
    )?;
    rows.extend(table);
    let pid = server.child.id();
    let live = value(&rows, "live_data_bytes").unwrap_or(f64::NAN);
    let rss = sys::status_kb(pid, "VmRSS")? as f64 / 1024.0;
    push(&mut rows, "rss_after_load_MB", number(rss));
    let wal = PathBuf::from(format!("{}-wal", db.display()));
    let disk = sys::file_allocated(&db) + sys::file_allocated(&wal);
    push(&mut rows, "disk_bytes", disk.to_string());
    push(
        &mut rows,
        "disk_file_len_bytes",
        (sys::file_len(&db) + sys::file_len(&wal)).to_string(),
    );
    let concurrent = node(
        context,
        "concurrent",
        &uri,
        &[
            ("doc-size", plan.doc_size.to_string()),
            ("seconds", plan.concurrent_seconds.to_string()),
            ("reps", plan.concurrent_reps.to_string()),
        ],
    )?;
    rows.extend(concurrent);
    let rss = sys::status_kb(pid, "VmRSS")? as f64 / 1024.0;
    push(&mut rows, "rss_after_concurrent_MB", number(rss));
    let peak = sys::status_kb(pid, "VmHWM")? as f64 / 1024.0;
    push(&mut rows, "rss_peak_MB", number(peak));

    // kill -9, then the time from the new process to its first answered ping.
    kill9(&mut server)?;
    let (mut server, reopen) = timed_start(context, &db)?;
    push(&mut rows, "kill9_to_ping_ms", number(reopen));
    stop_within(&mut server, STOP_LIMIT)?;
    push(
        &mut rows,
        "disk_after_close_bytes",
        sys::file_allocated(&db).to_string(),
    );
    // A clean reopen: RSS right after the first ping.
    let (mut server, clean) = timed_start(context, &db)?;
    push(&mut rows, "clean_open_to_ping_ms", number(clean));
    let rss = sys::status_kb(server.child.id(), "VmRSS")? as f64 / 1024.0;
    push(&mut rows, "rss_after_reopen_MB", number(rss));
    // The whole table sorted with allowDiskUse on the reopened server: the peak of its
    // anonymous memory (the sort's; the data file's mapped pages are file memory) sampled
    // while the sort runs, and the peak RSS of the process.
    let pid = server.child.id();
    let sampling = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(true));
    let sampler = {
        let sampling = sampling.clone();
        std::thread::spawn(move || {
            let mut peak = 0u64;
            while sampling.load(std::sync::atomic::Ordering::Relaxed) {
                peak = peak.max(sys::status_kb(pid, "RssAnon").unwrap_or(0));
                std::thread::sleep(std::time::Duration::from_millis(20));
            }
            peak
        })
    };
    let spilled = node(context, "spill", &self::uri(&server), &[]);
    sampling.store(false, std::sync::atomic::Ordering::Relaxed);
    let anon_peak = sampler.join().unwrap_or(0);
    rows.extend(spilled?);
    push(
        &mut rows,
        "spill_sort_rss_anon_peak_MB",
        number(anon_peak as f64 / 1024.0),
    );
    let peak = sys::status_kb(pid, "VmHWM")? as f64 / 1024.0;
    push(&mut rows, "spill_sort_rss_peak_MB", number(peak));
    stop_within(&mut server, STOP_LIMIT)?;
    let after = floors(&dir, plan)?;
    let mut floor_rows = Vec::new();
    for ((name, a), (_, b)) in before.iter().zip(&after) {
        let best = if name.ends_with("Bps") {
            a.max(*b)
        } else {
            a.min(*b)
        };
        println!("  {name}: {} before, {} after", number(*a), number(*b));
        push(&mut floor_rows, name, number(best));
    }
    push(&mut floor_rows, "floor_open_empty_ms", number(open_empty));
    floor_rows.extend(rows);
    let mut rows = floor_rows;
    std::fs::remove_dir_all(&dir)?;

    let derived = bench_ratios(&rows, live, plan.doc_size as f64);
    for (name, ratio) in derived {
        push(&mut rows, &name, number(ratio));
    }
    Ok(rows)
}

/// The machine's floors: fdatasync after a write of 4 KiB and of one document, appended and
/// overwriting, and sequential write bandwidth.
fn floors(dir: &Path, plan: &Plan) -> Result<Vec<(String, f64)>> {
    let reps = 200;
    let mut out = Vec::new();
    for (size, label) in [(4096, "4k"), (plan.doc_size as usize, "16k")] {
        let append = sys::fdatasync_ms(dir, size, false, reps)?;
        out.push((format!("floor_fdatasync_{label}_append_ms"), append));
        let overwrite = sys::fdatasync_ms(dir, size, true, reps)?;
        out.push((format!("floor_fdatasync_{label}_overwrite_ms"), overwrite));
    }
    let seq = sys::sequential_write_mbps(dir, plan.seq_write_bytes, 3)?;
    out.push(("floor_seq_write_MBps".into(), seq));
    let touch = sys::touch_scan_ms(plan.docs as usize, plan.doc_size as usize, 5);
    out.push(("floor_touch_scan_ms".into(), touch));
    Ok(out)
}

/// The ratio of each benchmark row to its floor (see `report::FLOORS`).
fn bench_ratios(rows: &[Row], live: f64, doc_bytes: f64) -> Vec<(String, f64)> {
    let get = |name: &str| value(rows, name).unwrap_or(f64::NAN);
    let ping = get("ping_ms");
    let sync = get("floor_fdatasync_16k_overwrite_ms");
    // A scan matching on the first fields reads at least one word of each document.
    let scan = get("floor_touch_scan_ms");
    let c1 = get("insertOne_c1_docs_per_s");
    let mut out = vec![
        (
            "insertOne_seq_x200_over_floor".into(),
            get("insertOne_seq_x200_ms") / (ping + sync),
        ),
        (
            "insertMany_share_of_seq_write".into(),
            get("insertMany_MBps") / get("floor_seq_write_MBps"),
        ),
        (
            "countDocuments_over_ping".into(),
            get("countDocuments_ms") / ping,
        ),
        ("findOne_id_over_ping".into(), get("findOne_id_ms") / ping),
        (
            "range_count_unindexed_over_floor".into(),
            get("range_count_unindexed_ms") / (ping + scan),
        ),
        (
            "sort_id_desc_limit20_over_ping".into(),
            get("sort_id_desc_limit20_ms") / ping,
        ),
        (
            "projection_limit1000_over_ping".into(),
            get("projection_limit1000_ms") / ping,
        ),
        (
            "aggregate_group_k_over_floor".into(),
            get("aggregate_group_k_ms") / (ping + scan),
        ),
        (
            "updateOne_id_x50_over_floor".into(),
            get("updateOne_id_x50_ms") / (ping + sync),
        ),
        (
            // With the index on k: find 66 entries, write 66 documents, one sync.
            "updateMany_k_over_floor".into(),
            get("updateMany_k_ms")
                / (ping
                    + sync
                    + get("updateMany_k_matched") * doc_bytes / 1e3 / get("floor_seq_write_MBps")),
        ),
        (
            "createIndex_k_over_range_count".into(),
            get("createIndex_k_ms") / get("range_count_beside_builds_ms"),
        ),
        (
            "findOne_k_indexed_over_findOne_id".into(),
            get("findOne_k_indexed_ms") / get("findOne_id_ms"),
        ),
        (
            "find_k_range_sort_limit20_over_findOne_id".into(),
            get("find_k_range_sort_limit20_ms") / get("findOne_id_ms"),
        ),
        (
            "ping_tls_over_plain".into(),
            get("ping_tls_ms") / get("ping_plain_ms"),
        ),
        (
            "find_k_or2_over_equality".into(),
            get("find_k_or2_ms") / get("find_k_equality_ms"),
        ),
        (
            "sort_id_desc_limit20_raw_over_ping".into(),
            get("sort_id_desc_limit20_raw_ms") / ping,
        ),
        (
            "projection_limit1000_raw_over_ping".into(),
            get("projection_limit1000_raw_ms") / ping,
        ),
        (
            "insertOne_3idx_over_plain".into(),
            get("insertOne_seq_3idx_x200_ms") / get("insertOne_seq_plain_x200_ms"),
        ),
        (
            "deleteOne_insertOne_over_floor".into(),
            get("deleteOne_insertOne_ms") / (2.0 * (ping + sync)),
        ),
        (
            "insertOne_c1_share_of_ceiling".into(),
            c1 * (ping + sync) / 1e3,
        ),
    ];
    for clients in [4, 8, 16, 32] {
        out.push((
            format!("insertOne_c{clients}_over_c1"),
            get(&format!("insertOne_c{clients}_docs_per_s")) / c1,
        ));
    }
    out.push((
        "rss_after_reopen_share_of_live_pct".into(),
        get("rss_after_reopen_MB") * 1048576.0 / live * 100.0,
    ));
    out.push((
        "kill9_to_ping_over_empty_open".into(),
        get("kill9_to_ping_ms") / get("floor_open_empty_ms"),
    ));
    out.push(("disk_over_live".into(), get("disk_bytes") / live));
    // Issue 18: the file against its records as stored (each document compressed alone),
    // and the records as stored against the live data.
    out.push((
        "disk_over_stored".into(),
        get("disk_bytes") / get("stored_bytes"),
    ));
    out.push(("stored_over_live".into(), get("stored_bytes") / live));
    out.push((
        "disk_after_close_over_live".into(),
        get("disk_after_close_bytes") / live,
    ));
    out
}

// ---- large collections ------------------------------------------------------------------

fn large(context: &Setup, plan: &Plan) -> Result<Vec<Row>> {
    let dir = context.scratch.join("large");
    std::fs::create_dir_all(&dir)?;
    let db = dir.join("large.mfdb");
    let wal = PathBuf::from(format!("{}-wal", db.display()));
    let mut rows = Vec::new();
    let (mut server, _) = timed_start(context, &db)?;
    let loaded = node(
        context,
        "load",
        &uri(&server),
        &[
            ("bytes", plan.large_bytes.to_string()),
            ("doc-size", plan.doc_size.to_string()),
        ],
    )?;
    rows.extend(loaded);
    let live = value(&rows, "large_live_bytes").unwrap_or(f64::NAN);
    let peak = sys::status_kb(server.child.id(), "VmHWM")? as f64 / 1024.0;
    push(&mut rows, "large_rss_peak_during_load_MB", number(peak));
    kill9(&mut server)?;
    push(
        &mut rows,
        "large_file_at_kill_bytes",
        sys::file_len(&db).to_string(),
    );
    push(
        &mut rows,
        "large_wal_at_kill_bytes",
        sys::file_len(&wal).to_string(),
    );

    let (mut server, open) = timed_start(context, &db)?;
    push(&mut rows, "large_open_after_kill_ms", number(open));
    let pid = server.child.id();
    let rss = sys::status_kb(pid, "VmRSS")? as f64 / 1024.0;
    push(&mut rows, "large_rss_after_reopen_MB", number(rss));
    push(
        &mut rows,
        "large_rss_after_reopen_share_pct",
        number(rss * 1048576.0 / live * 100.0),
    );
    let count = value(&rows, "large_documents_acked").unwrap_or(0.0);
    let last = value(&rows, "large_last_id").unwrap_or(0.0);
    let checked = node(
        context,
        "verify",
        &uri(&server),
        &[
            ("count", number(count)),
            ("last-id", number(last)),
            ("doc-size", plan.doc_size.to_string()),
        ],
    )?;
    rows.extend(checked);
    let rss = sys::status_kb(pid, "VmRSS")? as f64 / 1024.0;
    push(&mut rows, "large_rss_after_full_scan_MB", number(rss));
    let anon = sys::status_kb(pid, "RssAnon")? as f64 / 1024.0;
    push(&mut rows, "large_rss_anon_after_full_scan_MB", number(anon));
    stop_within(&mut server, STOP_LIMIT)?;
    let file = sys::file_len(&db) as f64;
    push(&mut rows, "large_file_bytes", number(file));
    push(&mut rows, "large_file_over_live", number(file / live));
    let (mut server, clean) = timed_start(context, &db)?;
    push(&mut rows, "large_clean_open_ms", number(clean));
    stop_within(&mut server, STOP_LIMIT)?;
    std::fs::remove_dir_all(&dir)?;
    Ok(rows)
}

// ---- churn ------------------------------------------------------------------------------

fn churn(context: &Setup, plan: &Plan) -> Result<Vec<Row>> {
    let dir = context.scratch.join("churn");
    std::fs::create_dir_all(&dir)?;
    let db = dir.join("churn.mfdb");
    let mut rows: Vec<Row> = vec![
        (
            "churn_indexes".into(),
            "_id_ only (no secondary indexes yet)".into(),
        ),
        (
            "churn_checkpoints".into(),
            "the server's own (60 s, 64 MiB of log, freed space); none forced between rounds"
                .into(),
        ),
    ];
    let (mut server, _) = timed_start(context, &db)?;
    let measured = node(
        context,
        "churn",
        &uri(&server),
        &[
            ("docs", plan.churn_docs.to_string()),
            ("doc-size", plan.doc_size.to_string()),
            ("delete-rounds", plan.churn_delete_rounds.to_string()),
            ("set-rounds", plan.churn_set_rounds.to_string()),
            ("db-file", db.display().to_string()),
        ],
    )?;
    rows.extend(measured);
    let last_delete = format!(
        "churn_delete_round{}_file_over_live",
        plan.churn_delete_rounds
    );
    let last_set = format!("churn_set_round{}_file_over_live", plan.churn_set_rounds);
    for (from, to) in [
        (last_delete, "churn_final_delete_file_over_live"),
        (last_set, "churn_final_set_file_over_live"),
    ] {
        if let Some(v) = value(&rows, &from) {
            rows.push((to.into(), number(v)));
        }
    }
    stop_within(&mut server, STOP_LIMIT)?;
    let live = value(&rows, "churn_live_bytes").unwrap_or(f64::NAN);
    let closed = sys::file_len(&db) as f64;
    rows.push((
        "churn_after_clean_close_file_over_live".into(),
        number(closed / live),
    ));
    for row in rows.iter().take(2).chain(rows.iter().rev().take(1)) {
        println!("  {}\t{}", row.0, row.1);
    }
    std::fs::remove_dir_all(&dir)?;
    Ok(rows)
}

// ---- crash matrix -----------------------------------------------------------------------

/// The crash matrix (`cargo xtask crash`): its small tier at small and default size, the
/// large tier (every point x every workload x several seeds) at large size.
fn crash(context: &Setup, plan: &Plan) -> Result<Vec<Row>> {
    let tier = if plan.size == "large" {
        crate::crash::Tier::Large
    } else {
        crate::crash::Tier::Small
    };
    let rows = crate::crash::run_matrix(&context.root, tier)?;
    for (name, value) in &rows {
        println!("  {name}\t{value}");
    }
    Ok(rows)
}

// ---- helpers ----------------------------------------------------------------------------

/// Prints a row and adds it.
fn push(rows: &mut Vec<Row>, name: &str, value: String) {
    println!("  {name}\t{value}");
    rows.push((name.to_owned(), value));
}

/// Starts the release server on `db` and waits for its first answered `ping`; returns it
/// and the milliseconds from spawning the process to that answer.
fn timed_start(context: &Setup, db: &Path) -> Result<(RunningServer, f64)> {
    let start = Instant::now();
    let args: Vec<&str> = context.server_args.iter().map(String::as_str).collect();
    let server = crate::e2e::start_server(&context.server, db, &args, &[])?;
    sys::wait_ping(&server.address, OPEN_LIMIT)?;
    Ok((server, sys::ms_since(start)))
}

/// `ping` over TLS and plain, interleaved, on one `--tlsMode preferTLS` server over the
/// empty database (issue 20: TLS at most 1.3x plain), with certificates made for the run.
fn tls_pings(context: &Setup, dir: &Path, db: &Path) -> Result<Vec<Row>> {
    let files = crate::certs::write(&dir.join("tls"))?;
    let server_pem = files.server.to_str().context("utf-8 path")?.to_owned();
    let mut args: Vec<&str> = context.server_args.iter().map(String::as_str).collect();
    args.extend([
        "--tlsMode",
        "preferTLS",
        "--tlsCertificateKeyFile",
        &server_pem,
    ]);
    let mut server = crate::e2e::start_server(&context.server, db, &args, &[])?;
    let pinged = sys::wait_ping(&server.address, OPEN_LIMIT).and_then(|()| {
        let ca = files.ca.to_str().context("utf-8 path")?.to_owned();
        node(context, "tls", &uri(&server), &[("ca", ca)])
    });
    stop_within(&mut server, STOP_LIMIT)?;
    pinged
}

fn kill9(server: &mut RunningServer) -> Result<()> {
    server.child.kill()?;
    server.child.wait()?;
    Ok(())
}

fn uri(server: &RunningServer) -> String {
    format!("mongodb://{}/?directConnection=true", server.address)
}

/// Runs a phase of `tests/gates/bench.mjs`; its stdout rows are echoed and returned, its
/// stderr (progress) goes to ours.
fn node(context: &Setup, phase: &str, uri: &str, args: &[(&str, String)]) -> Result<Vec<Row>> {
    let mut command = Command::new("node");
    command.arg(&context.script).arg(phase).arg(uri);
    for (name, value) in args {
        command.arg(format!("--{name}")).arg(value);
    }
    let mut child = command
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit())
        .spawn()
        .context("starting node (is Node.js installed?)")?;
    let stdout = child.stdout.take().context("node stdout")?;
    let mut rows = Vec::new();
    for line in BufReader::new(stdout).lines() {
        let line = line?;
        if let Some((name, value)) = line.split_once('\t') {
            println!("  {name}\t{value}");
            rows.push((name.to_owned(), value.to_owned()));
        }
    }
    let status = child.wait()?;
    if !status.success() {
        bail!("bench.mjs {phase} failed: {status}");
    }
    Ok(rows)
}

fn value(rows: &[Row], name: &str) -> Option<f64> {
    rows.iter()
        .find(|(n, _)| n == name)
        .and_then(|(_, v)| v.parse().ok())
}

fn command_output(command: &mut Command) -> Result<String> {
    let output = command.output()?;
    if !output.status.success() {
        bail!("{command:?} failed");
    }
    Ok(String::from_utf8_lossy(&output.stdout).trim().to_owned())
}

fn git_commit(root: &Path) -> String {
    let head = command_output(Command::new("git").current_dir(root).args([
        "rev-parse",
        "--short",
        "HEAD",
    ]))
    .unwrap_or_else(|_| "?".into());
    let dirty = command_output(Command::new("git").current_dir(root).args([
        "status",
        "--porcelain",
        "--untracked-files=no",
    ]))
    .map(|s| !s.is_empty())
    .unwrap_or(false);
    if dirty { format!("{head}+dirty") } else { head }
}

fn driver_version(e2e: &Path) -> String {
    let text =
        std::fs::read_to_string(e2e.join("node_modules/mongodb/package.json")).unwrap_or_default();
    text.split("\"version\"")
        .nth(1)
        .and_then(|rest| rest.split('"').nth(1))
        .map_or_else(|| "?".into(), |v| format!("mongodb {v} (Node.js driver)"))
}
