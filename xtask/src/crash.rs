//! `cargo xtask crash`: the crash matrix. For each named crash point (`wal::crashpoint::ALL`),
//! workload and seed: start the server (built with `--features crash-points` into
//! `target/crash`) on a fresh database with `MFDB_CRASH_AT=<point>:<n>`, drive the workload
//! until the server dies at the point, restart it without the variable and check that every
//! acknowledged write is present with its acknowledged content, nothing never sent appears,
//! an unacknowledged command is wholly present or wholly absent, `validate` passes for every
//! collection, and the restarted server answers `ping` within a second of being started.
//!
//! Kinds of runs:
//! - live points (write path, catalog, DDL, checkpoints): the server runs with a checkpoint
//!   every 50 ms and after 1 MiB of log, so checkpoint points are reached during short runs;
//!   the TTL point (`ttl.before_commit`) also with the TTL monitor every second
//!   (`--ttl-sweep-secs 1`), over the TTL workload's expired documents;
//! - `close.*`: the workload is interrupted by SIGTERM, and the clean close dies at the point;
//! - `recovery.*`: a first run without checkpoints is killed (SIGKILL) to leave a log, the
//!   second start dies at the point while replaying it, the third start must recover.
//!
//! A point that is never reached, or reached fewer times than the run armed it for, fails
//! the run: a point no workload reaches is a hole in the matrix.
//!
//! Tiers: `small` (CI) runs each point once with the cheapest workload that reaches it;
//! `large` (`cargo xtask gates`) runs every point with every workload that reaches it, with
//! several seeds (the seed picks the crash count `n`, the client count and the commands).

mod client;
mod workload;

use crate::e2e::{self, RunningServer, Spawned};
use anyhow::{Context, Result, bail};
use client::Client;
use std::os::unix::process::ExitStatusExt;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};
use workload::{Rng, Track, Workload};

/// How big a matrix to run.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Tier {
    /// Every point once, with its cheapest workload (CI).
    Small,
    /// Every point with every workload that reaches it, several seeds.
    Large,
}

impl Tier {
    fn name(self) -> &'static str {
        match self {
            Tier::Small => "small",
            Tier::Large => "large",
        }
    }

    fn seeds(self) -> u64 {
        match self {
            Tier::Small => 1,
            Tier::Large => 3,
        }
    }
}

/// How a point is reached.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Kind {
    /// During the workload (or a background checkpoint).
    Live,
    /// During the clean close that SIGTERM starts.
    Close,
    /// While opening a database whose log holds records to replay.
    Recovery,
}

/// How the matrix runs one point.
#[derive(Clone, Copy, Debug)]
struct Plan {
    kind: Kind,
    /// The cheapest workload that reaches it (the small tier's).
    small: Workload,
    /// Every workload that reaches it (the large tier's).
    workloads: &'static [Workload],
    /// The crash comes at the `n`-th pass, `n` in `1..=max_n` (picked by the seed).
    max_n: u64,
    /// Server flags of the armed run.
    args: &'static [&'static str],
    /// Recovery runs: the crash point (armed at its first pass) that ends the first run,
    /// instead of SIGKILL.
    first_crash: Option<&'static str>,
}

/// The data workloads (every one but TTL's, which only its own point runs).
const DATA: &[Workload] = &[
    Workload::Insert,
    Workload::Update,
    Workload::Delete,
    Workload::Ddl,
    Workload::Index,
];
const DDL: &[Workload] = &[Workload::Ddl];
const INSERT: &[Workload] = &[Workload::Insert];
const INDEX: &[Workload] = &[Workload::Index];
const TTL: &[Workload] = &[Workload::Ttl];

/// The plan for `point`; `None` for a point the matrix does not know (a test keeps every
/// point of `ALL` planned).
fn plan(point: &str) -> Option<Plan> {
    use Workload::{Ddl, Delete, Index, Insert, Ttl, Update};
    let live = |small, workloads, max_n| Plan {
        kind: Kind::Live,
        small,
        workloads,
        max_n,
        args: LIVE_ARGS,
        first_crash: None,
    };
    let once = |kind, small| Plan {
        kind,
        small,
        workloads: DATA,
        max_n: 1,
        args: LIVE_ARGS,
        first_crash: None,
    };
    Some(match point {
        "txn.commit.before_append" | "txn.commit.after_publish" | "wal.commit.before_sync" => {
            live(Insert, DATA, 20)
        }
        "txn.commit.after_append" | "wal.commit.before_write" | "txn.commit.after_sync" => {
            live(Update, DATA, 20)
        }
        "wal.commit.after_sync" => live(Delete, DATA, 20),
        // Only a transaction of several records (the insert workload's bulk inserts)
        // fills the log's buffer past its flush threshold between commits, and only when
        // no other thread holds the log's I/O (a checkpoint's truncation often does).
        "wal.append.after_flush" => Plan {
            args: NO_CHECKPOINT_ARGS,
            ..live(Insert, INSERT, 3)
        },
        "pager.commit.before_batch" => live(Delete, DATA, 40),
        "catalog.commit.between_entries" => live(Ddl, DDL, 5),
        "ddl.create.before_commit"
        | "ddl.drop.before_commit"
        | "ddl.rename.after_drop_target"
        | "ddl.rename.before_commit"
        | "ddl.drop_database.between_drops"
        | "ddl.drop_database.before_commit" => live(Ddl, DDL, 3),
        // The setup's two builds pass the load point first (over an empty collection);
        // later passes are client 0's builds of `k_1` over the data.
        "ddl.create_index.before_load" => live(Index, INDEX, 5),
        "ddl.create_index.before_commit" | "ddl.drop_index.before_commit" => live(Index, INDEX, 3),
        // The monitor sweeps every second; each pass deletes the expired documents the
        // clients inserted since the last one, in one batch.
        "ttl.before_commit" => Plan {
            args: TTL_ARGS,
            ..live(Ttl, TTL, 3)
        },
        "checkpoint.start" | "checkpoint.after_header" | "wal.truncate.after_rename" => {
            live(Insert, DATA, 3)
        }
        "checkpoint.before_pages"
        | "checkpoint.after_header_write"
        | "checkpoint.after_truncate" => live(Update, DATA, 3),
        "checkpoint.after_pages" | "wal.truncate.before_rename" => live(Delete, DATA, 3),
        "close.before_remove_log" => once(Kind::Close, Update),
        "recovery.before_replay" => once(Kind::Recovery, Insert),
        "recovery.replay.mid" => once(Kind::Recovery, Update),
        "recovery.after_replay" => once(Kind::Recovery, Delete),
        // The log must end inside a transaction: the first run dies between the records
        // of a bulk insert.
        "recovery.unfinished.before_checkpoint" => Plan {
            workloads: INSERT,
            first_crash: Some("wal.append.after_flush"),
            ..once(Kind::Recovery, Insert)
        },
        _ => return None,
    })
}

/// Server flags for live runs: frequent checkpoints, by time and by log size.
const LIVE_ARGS: &[&str] = &[
    "--checkpoint-interval-ms",
    "50",
    "--checkpoint-log-bytes",
    "1048576",
];
/// Server flags for the TTL point's runs: live runs with the TTL monitor every second.
const TTL_ARGS: &[&str] = &[
    "--checkpoint-interval-ms",
    "50",
    "--checkpoint-log-bytes",
    "1048576",
    "--ttl-sweep-secs",
    "1",
];
/// Server flags for the run that leaves a log to replay: no checkpoints at all.
const NO_CHECKPOINT_ARGS: &[&str] = &[
    "--checkpoint-interval-ms",
    "0",
    "--checkpoint-log-bytes",
    "1099511627776",
];
/// How long a workload may run before the matrix gives up waiting for the crash.
const WORKLOAD_LIMIT: Duration = Duration::from_secs(8);
/// How soon a restarted server must answer `ping`.
const PING_LIMIT: Duration = Duration::from_secs(1);

/// What to run.
#[derive(Clone, Debug)]
struct Options {
    tier: Tier,
    seeds: u64,
    point: Option<String>,
    workload: Option<Workload>,
    tsv: bool,
    keep: bool,
}

/// One finished run.
struct RunResult {
    line: String,
    passed: bool,
    crashed: bool,
    point: &'static str,
    ping: Option<Duration>,
}

pub fn run(root: &Path, args: &[String]) -> Result<()> {
    let options = parse_args(args)?;
    let rows = matrix(root, &options)?;
    if options.tsv {
        for (name, value) in &rows {
            println!("{name}\t{value}");
        }
    }
    let failed = rows
        .iter()
        .find(|(name, _)| name == "crash.failed")
        .map_or("0", |(_, v)| v.as_str());
    if failed != "0" {
        bail!("crash matrix: {failed} run(s) failed");
    }
    Ok(())
}

/// Runs the matrix of `tier` with its default seeds and returns its figures as
/// `name<TAB>value` rows (runs, passed, failed, points reached, seconds, slowest ping).
/// Failed runs are counted, not returned as an error.
#[allow(
    dead_code,
    reason = "the entry point for `cargo xtask gates` (xtask/src/gates.rs)"
)]
pub(crate) fn run_matrix(root: &Path, tier: Tier) -> Result<Vec<(String, String)>> {
    let options = Options {
        tier,
        seeds: tier.seeds(),
        point: None,
        workload: None,
        tsv: true,
        keep: false,
    };
    matrix(root, &options)
}

fn parse_args(args: &[String]) -> Result<Options> {
    let mut options = Options {
        tier: Tier::Small,
        seeds: 0,
        point: None,
        workload: None,
        tsv: false,
        keep: false,
    };
    let mut args = args.iter();
    while let Some(arg) = args.next() {
        let mut value = |what: &str| {
            args.next()
                .cloned()
                .with_context(|| format!("{arg} needs {what}"))
        };
        match arg.as_str() {
            "--tier" => {
                options.tier = match value("small|large")?.as_str() {
                    "small" => Tier::Small,
                    "large" => Tier::Large,
                    other => bail!("unknown tier {other:?} (small|large)"),
                }
            }
            "--seeds" => options.seeds = value("a count")?.parse().context("--seeds")?,
            "--point" => options.point = Some(value("a point name or prefix")?),
            "--workload" => {
                let name = value("a workload")?;
                let names: Vec<_> = Workload::ALL.iter().map(|w| w.name()).collect();
                options.workload = Some(Workload::parse(&name).with_context(|| {
                    format!("unknown workload {name:?} (one of {})", names.join(", "))
                })?);
            }
            "--tsv" => options.tsv = true,
            "--keep" => options.keep = true,
            other => bail!(
                "unknown argument {other:?}\nusage: cargo xtask crash [--tier small|large] \
                 [--seeds N] [--point NAME|PREFIX] [--workload insert|update|delete|ddl|index|ttl] \
                 [--tsv] [--keep]"
            ),
        }
    }
    if options.seeds == 0 {
        options.seeds = options.tier.seeds();
    }
    Ok(options)
}

/// The (point, workload, seed) runs `options` selects.
fn runs(options: &Options) -> Result<Vec<(&'static str, Workload, u64)>> {
    let mut runs = Vec::new();
    for &point in wal::crashpoint::ALL {
        if let Some(wanted) = &options.point
            && point != wanted
            && !point.starts_with(wanted.as_str())
        {
            continue;
        }
        let plan = plan(point).with_context(|| format!("crash point {point} has no plan"))?;
        let workloads: Vec<Workload> = match options.tier {
            Tier::Small => vec![options.workload.unwrap_or(plan.small)],
            Tier::Large => plan.workloads.to_vec(),
        };
        for workload in workloads {
            if options.workload.is_some_and(|w| w != workload)
                || !plan.workloads.contains(&workload)
            {
                continue;
            }
            for seed in 1..=options.seeds {
                runs.push((point, workload, seed));
            }
        }
    }
    if runs.is_empty() {
        bail!("no crash point matches {:?}", options.point);
    }
    Ok(runs)
}

fn matrix(root: &Path, options: &Options) -> Result<Vec<(String, String)>> {
    let runs = runs(options)?;
    let binary = build(root)?;
    let scratch = std::env::temp_dir().join(format!("mfdb-crash-{}", std::process::id()));
    std::fs::create_dir_all(&scratch)?;
    println!(
        "crash matrix ({} tier): {} runs, scratch {}",
        options.tier.name(),
        runs.len(),
        scratch.display()
    );
    let started = Instant::now();
    let mut results = Vec::new();
    for (index, &(point, workload, seed)) in runs.iter().enumerate() {
        let dir = scratch.join(format!("{index:04}-{point}-{}-{seed}", workload.name()));
        std::fs::create_dir_all(&dir)?;
        let result = run_one(&binary, &dir, point, workload, seed);
        println!("{}", result.line);
        if result.passed && !options.keep {
            let _ = std::fs::remove_dir_all(&dir);
        } else if !result.passed {
            println!("    kept {}", dir.display());
        }
        results.push(result);
    }
    let _ = std::fs::remove_dir(&scratch);
    let seconds = started.elapsed().as_secs_f64();
    let passed = results.iter().filter(|r| r.passed).count();
    let failed = results.len() - passed;
    let points: std::collections::BTreeSet<&str> = runs.iter().map(|r| r.0).collect();
    let reached: std::collections::BTreeSet<&str> = results
        .iter()
        .filter(|r| r.crashed)
        .map(|r| r.point)
        .collect();
    let ping_max = results
        .iter()
        .filter_map(|r| r.ping)
        .max()
        .unwrap_or_default();
    println!(
        "crash matrix ({} tier): {passed}/{} runs passed, {failed} failed; {}/{} points \
         reached; slowest restart-to-ping {} ms; {seconds:.1} s",
        options.tier.name(),
        results.len(),
        reached.len(),
        points.len(),
        ping_max.as_millis()
    );
    for point in points.difference(&reached) {
        println!("    point never crashed at: {point}");
    }
    Ok(vec![
        ("crash.tier".into(), options.tier.name().into()),
        ("crash.runs".into(), results.len().to_string()),
        ("crash.passed".into(), passed.to_string()),
        ("crash.failed".into(), failed.to_string()),
        ("crash.points".into(), points.len().to_string()),
        ("crash.points_reached".into(), reached.len().to_string()),
        ("crash.ping_ms_max".into(), ping_max.as_millis().to_string()),
        ("crash.seconds".into(), format!("{seconds:.1}")),
    ])
}

/// Builds the server with crash points into `target/crash` (its own target directory, so
/// normal builds are not invalidated) and returns the binary.
fn build(root: &Path) -> Result<PathBuf> {
    let target = root.join("target/crash");
    let status = crate::cargo()
        .current_dir(root)
        .args(["build", "--quiet", "-p", "server", "--bin", "multiforadb"])
        .args(["--features", "crash-points", "--target-dir"])
        .arg(&target)
        .status()?;
    if !status.success() {
        bail!("building the server with crash points failed");
    }
    Ok(target.join("debug/multiforadb"))
}

/// The crash count for `point` in the run with `seed`.
fn crash_count(point: &str, seed: u64, max_n: u64) -> u64 {
    let hash = point.bytes().fold(0xcbf2_9ce4_8422_2325u64, |h, b| {
        (h ^ u64::from(b)).wrapping_mul(0x100_0000_01b3)
    });
    1 + Rng::new(hash ^ seed).below(max_n)
}

fn run_one(
    binary: &Path,
    dir: &Path,
    point: &'static str,
    workload: Workload,
    seed: u64,
) -> RunResult {
    let plan = plan(point).expect("runs() planned every point");
    let n = crash_count(point, seed, plan.max_n);
    let mut result = RunResult {
        line: String::new(),
        passed: false,
        crashed: false,
        point,
        ping: None,
    };
    let outcome = match plan.kind {
        Kind::Live | Kind::Close => live_run(binary, dir, point, &plan, n, workload, seed),
        Kind::Recovery => recovery_run(binary, dir, point, &plan, workload, seed),
    };
    let head = format!("{point} {} {seed}", workload.name());
    match outcome {
        Ok(done) => {
            result.crashed = true;
            result.ping = Some(done.ping);
            result.passed = true;
            result.line = format!("{head}: ok ({})", done.note);
        }
        Err(failure) => {
            result.crashed = failure.crashed;
            result.line = format!("{head}: FAILED: {}", failure.why);
        }
    }
    result
}

struct Done {
    note: String,
    ping: Duration,
}

struct RunFailure {
    why: String,
    /// Whether the server did die at the point (the failure came after).
    crashed: bool,
}

fn fail<T>(crashed: bool, why: impl std::fmt::Display) -> Result<T, RunFailure> {
    Err(RunFailure {
        why: why.to_string(),
        crashed,
    })
}

/// What the workload phase left behind.
struct Phase {
    tracks: Vec<Track>,
    errors: Vec<String>,
}

/// The clients of a run: the setup client (data workloads) and the workload's clients.
fn clients_for(workload: Workload, seed: u64) -> Vec<Track> {
    let mut tracks = Vec::new();
    match workload {
        Workload::Ddl => {}
        Workload::Index => tracks.push(Track::setup_indexed()),
        Workload::Ttl => tracks.push(Track::setup_ttl()),
        _ => tracks.push(Track::setup()),
    }
    tracks.extend((0..workload.clients(seed)).map(|c| Track::client(workload, c, seed)));
    tracks
}

/// Runs the clients `tracks` against `server`: first the setup client's script, alone,
/// then the others concurrently, until the server exits, the workload limit passes or
/// `until` (given the acknowledgement counts) says to stop; `until` may kill the server.
/// The caller decides how the server ends.
fn drive(
    server: &mut RunningServer,
    tracks: Vec<Track>,
    mut until: impl FnMut(&mut RunningServer, &[u64]) -> bool,
) -> Phase {
    let address = server.address.clone();
    let stop = AtomicBool::new(false);
    let deadline = Instant::now() + WORKLOAD_LIMIT;
    let mut errors = Vec::new();
    let (mut setups, clients): (Vec<Track>, Vec<Track>) =
        tracks.into_iter().partition(Track::is_setup);
    for setup in &mut setups {
        if setup.scripted() {
            continue;
        }
        match Client::connect(&address, Duration::from_secs(5)) {
            Ok(mut client) => {
                while !setup.scripted() {
                    match setup.step(&mut client) {
                        Ok(true) => {}
                        Ok(false) => break,
                        Err(e) => {
                            errors.push(e);
                            break;
                        }
                    }
                }
            }
            Err(e) => errors.push(format!("setup: connect: {e}")),
        }
    }
    let mut tracks = setups;
    if !errors.is_empty() || tracks.iter().any(|t| !t.scripted() || t.pending.is_some()) {
        tracks.extend(clients);
        return Phase { tracks, errors };
    }
    let acks: Vec<std::sync::atomic::AtomicU64> = (0..clients.len())
        .map(|_| std::sync::atomic::AtomicU64::new(0))
        .collect();
    std::thread::scope(|scope| {
        let handles: Vec<_> = clients
            .into_iter()
            .zip(&acks)
            .map(|(mut track, acked)| {
                let (stop, address) = (&stop, &address);
                scope.spawn(move || {
                    let mut client = match Client::connect(address, Duration::from_secs(5)) {
                        Ok(client) => client,
                        Err(e) => return (track, Some(format!("connect: {e}"))),
                    };
                    while !stop.load(Ordering::Relaxed) && Instant::now() < deadline {
                        match track.step(&mut client) {
                            Ok(true) => {
                                acked.fetch_add(1, Ordering::Relaxed);
                            }
                            Ok(false) => break,
                            Err(e) => return (track, Some(e)),
                        }
                    }
                    (track, None)
                })
            })
            .collect();
        loop {
            let done = handles.iter().all(|h| h.is_finished());
            let counts: Vec<u64> = acks.iter().map(|a| a.load(Ordering::Relaxed)).collect();
            if done || until(server, &counts) || Instant::now() >= deadline {
                break;
            }
            std::thread::sleep(Duration::from_millis(2));
        }
        stop.store(true, Ordering::Relaxed);
        for handle in handles {
            let (track, error) = handle.join().expect("client thread");
            tracks.push(track);
            errors.extend(error);
        }
    });
    Phase { tracks, errors }
}

/// Whether a run starts on a database that an earlier, cleanly stopped server wrote
/// (about one run in three): the crash then hits a log that was created on reopen.
fn has_prelude(point: &str, seed: u64) -> bool {
    crash_count(point, seed.wrapping_add(17), 3) == 1
}

fn prelude_note(point: &str, seed: u64) -> &'static str {
    if has_prelude(point, seed) {
        " after a clean restart"
    } else {
        ""
    }
}

/// The prelude: a clean server runs the clients for a while (no command left pending),
/// then stops with SIGTERM. Returns the clients to continue with.
fn prelude(
    binary: &Path,
    db: &Path,
    tracks: Vec<Track>,
    seed: u64,
) -> Result<Vec<Track>, RunFailure> {
    let mut server = match e2e::start_server(binary, db, LIVE_ARGS, &[]) {
        Ok(server) => server,
        Err(e) => return fail(false, format!("prelude server did not start: {e:#}")),
    };
    let stop_after = 10 + Rng::new(seed ^ 0xABCD).below(30);
    let phase = drive(&mut server, tracks, |_, acks| {
        acks.iter().sum::<u64>() >= stop_after
    });
    if !phase.errors.is_empty() {
        sigkill(&mut server);
        return fail(
            false,
            format!("prelude workload: {}", phase.errors.join("; ")),
        );
    }
    if let Err(e) = e2e::stop(&mut server) {
        return fail(false, format!("prelude clean stop: {e:#}"));
    }
    Ok(phase.tracks)
}

fn exited(server: &mut RunningServer) -> bool {
    matches!(server.child.try_wait(), Ok(Some(_)))
}

/// Waits up to `limit` for the server to exit; kills it (SIGKILL) after that.
fn wait_exit(server: &mut RunningServer, limit: Duration) -> Option<std::process::ExitStatus> {
    let deadline = Instant::now() + limit;
    loop {
        if let Ok(Some(status)) = server.child.try_wait() {
            server.drain_log();
            return Some(status);
        }
        if Instant::now() >= deadline {
            let _ = server.child.kill();
            let _ = server.child.wait();
            server.drain_log();
            return None;
        }
        std::thread::sleep(Duration::from_millis(5));
    }
}

fn sigkill(server: &mut RunningServer) {
    let _ = server.child.kill();
    let _ = server.child.wait();
    server.drain_log();
}

/// How often the log says the armed point was passed, and whether it aborted there.
fn crash_lines(log: &[String], point: &str) -> (usize, bool) {
    let prefix = format!("crash point {point}: hit ");
    let hits = log.iter().filter(|l| l.contains(&prefix)).count();
    let aborted = log
        .iter()
        .any(|l| l.contains(&prefix) && l.ends_with(", aborting"));
    (hits, aborted)
}

fn was_abort(status: Option<std::process::ExitStatus>) -> bool {
    status.and_then(|s| s.signal()) == Some(6)
}

fn live_run(
    binary: &Path,
    dir: &Path,
    point: &'static str,
    plan: &Plan,
    n: u64,
    workload: Workload,
    seed: u64,
) -> Result<Done, RunFailure> {
    let kind = plan.kind;
    let db = dir.join("db.mfdb");
    let mut tracks = clients_for(workload, seed);
    if has_prelude(point, seed) {
        tracks = prelude(binary, &db, tracks, seed)?;
    }
    let spec = format!("{point}:{n}");
    let mut server = match e2e::start_server(binary, &db, plan.args, &[("MFDB_CRASH_AT", &spec)]) {
        Ok(server) => server,
        Err(e) => return fail(false, format!("server did not start: {e:#}")),
    };
    // Close runs: SIGTERM once the clients have some acknowledged commands.
    let term_after = 5 + Rng::new(seed).below(30);
    let mut termed = false;
    let phase = drive(&mut server, tracks, |server, acks| {
        if kind == Kind::Close && !termed && acks.iter().sum::<u64>() >= term_after {
            let pid = server.child.id().to_string();
            let _ = std::process::Command::new("kill")
                .args(["-TERM", &pid])
                .status();
            termed = true;
        }
        exited(server)
    });
    if kind == Kind::Close && !termed {
        let pid = server.child.id().to_string();
        let _ = std::process::Command::new("kill")
            .args(["-TERM", &pid])
            .status();
    }
    // The clients stop when their connections break, which can be before the dying
    // process is reaped: give it a moment (a server still running is killed after it).
    let grace = if kind == Kind::Close { 15 } else { 2 };
    let status = wait_exit(&mut server, Duration::from_secs(grace));
    let log = server.log.lock().expect("log").clone();
    let (hits, aborted) = crash_lines(&log, point);
    let crashed = aborted && was_abort(status);
    if !crashed {
        let mut why = if hits == 0 {
            format!("point never reached (armed for pass {n})")
        } else {
            format!("point passed {hits} times, armed for pass {n}: no crash")
        };
        let acks: u64 = phase.tracks.iter().map(|t| t.acks).sum();
        why = format!("{why} ({acks} commands acknowledged)");
        if !phase.errors.is_empty() {
            why = format!("{why}; workload: {}", phase.errors.join("; "));
        }
        return fail(false, why);
    }
    if !phase.errors.is_empty() {
        return fail(true, format!("workload: {}", phase.errors.join("; ")));
    }
    let checked = restart_and_check(binary, &db, &phase.tracks).or_else(|why| fail(true, why))?;
    Ok(Done {
        note: format!(
            "crash at pass {n}{}; {}",
            prelude_note(point, seed),
            checked.note
        ),
        ping: checked.ping,
    })
}

fn recovery_run(
    binary: &Path,
    dir: &Path,
    point: &'static str,
    plan: &Plan,
    workload: Workload,
    seed: u64,
) -> Result<Done, RunFailure> {
    let db = dir.join("db.mfdb");
    let mut tracks = clients_for(workload, seed);
    if has_prelude(point, seed) {
        tracks = prelude(binary, &db, tracks, seed)?;
    }
    // 1. A run without checkpoints, killed mid-workload (or dying at `first_crash`): its
    //    log is all there is.
    let first = plan.first_crash.map(|p| format!("{p}:1"));
    let env: Vec<(&str, &str)> = first
        .iter()
        .map(|s| ("MFDB_CRASH_AT", s.as_str()))
        .collect();
    let mut server = match e2e::start_server(binary, &db, NO_CHECKPOINT_ARGS, &env) {
        Ok(server) => server,
        Err(e) => return fail(false, format!("server did not start: {e:#}")),
    };
    let kill_after = 20 + Rng::new(seed).below(60);
    let phase = drive(&mut server, tracks, |server, acks| {
        if first.is_none() && acks.iter().sum::<u64>() >= kill_after {
            // SIGKILL with the clients mid-command, so some commands stay pending.
            let _ = server.child.kill();
            return true;
        }
        exited(server)
    });
    let status = wait_exit(&mut server, Duration::from_secs(2));
    if let Some(first_point) = plan.first_crash {
        let log = server.log.lock().expect("log").clone();
        if !(crash_lines(&log, first_point).1 && was_abort(status)) {
            return fail(false, format!("the first run never died at {first_point}"));
        }
    }
    if !phase.errors.is_empty() {
        return fail(false, format!("workload: {}", phase.errors.join("; ")));
    }
    // 2. Reopen with the point armed: it must die there, before listening.
    let spec = format!("{point}:1");
    let spawned = e2e::spawn_server(binary, &db, LIVE_ARGS, &[("MFDB_CRASH_AT", &spec)]);
    match spawned {
        Ok(Spawned::Exited { status, log }) => {
            let (_, aborted) = crash_lines(&log, point);
            if !(aborted && was_abort(Some(status))) {
                return fail(
                    false,
                    format!(
                        "reopen exited with {status} but not at the point:\n{}",
                        log.join("\n")
                    ),
                );
            }
        }
        Ok(Spawned::Listening(mut server)) => {
            sigkill(&mut server);
            return fail(
                false,
                "point never reached: the reopened server started listening",
            );
        }
        Err(e) => return fail(false, format!("reopen: {e:#}")),
    }
    // 3. Reopen clean: everything acknowledged in phase 1 is there.
    let checked = restart_and_check(binary, &db, &phase.tracks).or_else(|why| fail(true, why))?;
    Ok(Done {
        note: format!(
            "replay crash{}; {}",
            prelude_note(point, seed),
            checked.note
        ),
        ping: checked.ping,
    })
}

/// Restarts the server clean, times its first `ping`, reads and validates everything,
/// checks it against the tracks and stops the server with SIGTERM (a clean close).
fn restart_and_check(binary: &Path, db: &Path, tracks: &[Track]) -> Result<Done, String> {
    let started = Instant::now();
    let mut server =
        e2e::start_server(binary, db, LIVE_ARGS, &[]).map_err(|e| format!("restart: {e:#}"))?;
    let result = check_server(&mut server, started, tracks);
    if result.is_err() {
        sigkill(&mut server);
        return result;
    }
    e2e::stop(&mut server).map_err(|e| format!("clean stop after the check: {e:#}"))?;
    result
}

fn check_server(
    server: &mut RunningServer,
    started: Instant,
    tracks: &[Track],
) -> Result<Done, String> {
    let mut client = Client::connect(&server.address, Duration::from_secs(1))
        .map_err(|e| format!("connect after restart: {e}"))?;
    client
        .command("admin", bson::doc! {"ping": 1})
        .map_err(|e| format!("ping after restart: {e}"))?;
    let ping = started.elapsed();
    if ping > PING_LIMIT {
        return Err(format!(
            "first ping answered {} ms after the restart (limit {} ms)",
            ping.as_millis(),
            PING_LIMIT.as_millis()
        ));
    }
    let actual = workload::read_state(&mut client).map_err(|e| format!("{e:#}"))?;
    workload::check(&actual, tracks)?;
    let acks: u64 = tracks.iter().map(|t| t.acks).sum();
    let pending = tracks.iter().filter(|t| t.pending.is_some()).count();
    Ok(Done {
        note: format!(
            "{acks} acknowledged, {pending} pending, {} documents, ping {} ms",
            actual.docs.len(),
            ping.as_millis()
        ),
        ping,
    })
}

#[cfg(test)]
mod tests {
    use super::{Tier, plan, runs};

    #[test]
    fn every_point_has_a_plan_whose_small_workload_reaches_it() {
        for point in wal::crashpoint::ALL {
            let plan = plan(point).unwrap_or_else(|| panic!("{point} has no plan"));
            assert!(plan.workloads.contains(&plan.small), "{point}");
            assert!(plan.max_n >= 1, "{point}");
        }
    }

    #[test]
    fn every_listed_point_is_marked_in_the_code_and_every_mark_is_listed() {
        let root = crate::workspace_root().join("crates");
        let mut marked = std::collections::BTreeSet::new();
        let mut stack = vec![root];
        while let Some(dir) = stack.pop() {
            for entry in std::fs::read_dir(&dir).expect("read crates") {
                let path = entry.expect("entry").path();
                if path.is_dir() {
                    stack.push(path);
                } else if path.extension().is_some_and(|e| e == "rs") {
                    let text = std::fs::read_to_string(&path).expect("read source");
                    for piece in text.split("crashpoint::hit(\"").skip(1) {
                        let name = piece.split('"').next().expect("name");
                        marked.insert(name.to_owned());
                    }
                }
            }
        }
        for point in wal::crashpoint::ALL {
            assert!(
                marked.contains(*point),
                "{point} is listed but never marked"
            );
        }
        for name in &marked {
            assert!(
                wal::crashpoint::ALL.contains(&name.as_str()),
                "{name} is marked but not listed in ALL"
            );
        }
    }

    #[test]
    fn tiers_select_runs() {
        let small = super::Options {
            tier: Tier::Small,
            seeds: 1,
            point: None,
            workload: None,
            tsv: false,
            keep: false,
        };
        assert_eq!(
            runs(&small).expect("runs").len(),
            wal::crashpoint::ALL.len()
        );
        let large = super::Options {
            tier: Tier::Large,
            seeds: 3,
            ..small.clone()
        };
        assert!(runs(&large).expect("runs").len() > 3 * wal::crashpoint::ALL.len());
        let one = super::Options {
            point: Some("checkpoint.".into()),
            ..small
        };
        assert!(
            runs(&one)
                .expect("runs")
                .iter()
                .all(|r| r.0.starts_with("checkpoint."))
        );
    }
}
