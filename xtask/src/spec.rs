//! `cargo xtask spec`: MongoDB's unified-format spec tests against the server, as a
//! scorecard with a committed baseline.
//!
//! Builds and starts the server as `cargo xtask e2e` does, runs `tests/spec/runner.py`
//! (PyMongo, installed by `bash tests/e2e/setup.sh`) over the spec folders read from
//! `../shared/spec-tests/` (or `MFDB_SPEC_TESTS`), stops the server, and prints pass /
//! fail / skip per file, per folder and in total. It fails when a test listed in
//! `tests/spec/baseline.txt` no longer passes; `--update-baseline` rewrites that list
//! from a full run. The runner prints one `status<TAB>file<TAB>test<TAB>reason` line per
//! test, so one test's failure never stops the others.
//!
//! `--topology replicaset` runs the second scorecard: the server started with `--replSet
//! rs0` (a one-member replica set), connected with `replicaSet=rs0`, over the same
//! folders plus the replica-set ones (sessions, retryable writes and reads, causal
//! consistency, read and write concern, command monitoring), against its own baseline
//! `tests/spec/baseline-replicaset.txt`.

use crate::e2e::{self, indent};
use anyhow::{Context, Result, bail};
use std::collections::{BTreeMap, BTreeSet};
use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::Instant;

/// The folders of `../shared/spec-tests/` that the scorecard covers.
const FOLDERS: &[&str] = &[
    "crud",
    "collection-management",
    "run-command",
    "unified-test-format",
    "index-management",
];
/// The folders the replica-set scorecard adds.
const REPLICA_SET_FOLDERS: &[&str] = &[
    "sessions",
    "retryable-writes",
    "retryable-reads",
    "causal-consistency",
    "read-write-concern",
    "command-monitoring",
];
const BASELINE: &str = "tests/spec/baseline.txt";
const BASELINE_REPLICA_SET: &str = "tests/spec/baseline-replicaset.txt";

struct Options {
    filter: String,
    verbose: bool,
    update_baseline: bool,
    /// The server as a one-member replica set (`--topology replicaset`).
    replica_set: bool,
}

impl Options {
    /// The baseline file of this run's topology.
    fn baseline(&self) -> &'static str {
        if self.replica_set {
            BASELINE_REPLICA_SET
        } else {
            BASELINE
        }
    }
}

/// One test's verdict, as the runner printed it.
struct Verdict {
    status: String,
    file: String,
    test: String,
    reason: String,
}

impl Verdict {
    /// The baseline's name for the test: `file<TAB>test`.
    fn name(&self) -> String {
        format!("{}\t{}", self.file, self.test)
    }
}

#[derive(Default, Clone, Copy)]
struct Tally {
    pass: usize,
    fail: usize,
    skip: usize,
}

impl Tally {
    fn add(&mut self, status: &str) {
        match status {
            "pass" => self.pass += 1,
            "fail" => self.fail += 1,
            _ => self.skip += 1,
        }
    }
}

pub fn run(root: &Path, args: &[String]) -> Result<()> {
    let options = parse(args)?;
    if options.update_baseline && !options.filter.is_empty() {
        bail!("--update-baseline needs a full run (no --filter)");
    }
    let python = root.join("tests/e2e/.venv/bin/python");
    if !python.exists() {
        bail!("PyMongo is not installed: run `bash tests/e2e/setup.sh` first");
    }
    let spec_root = spec_root(root);
    if !spec_root.join("crud").is_dir() {
        bail!(
            "no spec tests at {} (set MFDB_SPEC_TESTS)",
            spec_root.display()
        );
    }
    e2e::build_server(root)?;
    let started = Instant::now();
    // Test commands on: the tests' `failPoint` operations configure `failCommand`.
    let mut flags = vec![
        "--log-level",
        "debug",
        "--setParameter",
        "enableTestCommands=1",
    ];
    let mut folders: Vec<&str> = FOLDERS.to_vec();
    if options.replica_set {
        flags.extend(["--replSet", "rs0"]);
        folders.extend(REPLICA_SET_FOLDERS);
    }
    let mut server = e2e::start_with(root, "spec", &flags)?;
    let uri = if options.replica_set {
        format!("mongodb://{}/?replicaSet=rs0", server.address)
    } else {
        format!("mongodb://{}/?directConnection=true", server.address)
    };
    eprintln!("spec: running {} against {uri}", folders.join(", "));
    let mut child = Command::new(&python)
        .arg("-B") // no __pycache__ in the source tree
        .arg("-u") // verdicts as they come: the progress lines follow them
        .arg(root.join("tests/spec/runner.py"))
        .args(["--uri", &uri, "--spec-root"])
        .arg(&spec_root)
        .args(["--filter", &options.filter])
        .args(&folders)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .context("running tests/spec/runner.py")?;
    let stderr = child.stderr.take().context("runner stderr")?;
    let errors = std::thread::spawn(move || {
        let mut text = String::new();
        let _ = std::io::Read::read_to_string(&mut BufReader::new(stderr), &mut text);
        text
    });
    let stdout = follow(child.stdout.take().context("runner stdout")?)?;
    let status = child.wait()?;
    let stderr = errors.join().unwrap_or_default();
    let stopped = e2e::stop(&mut server);
    for path in [server.db.clone(), server.db.with_extension("mfdb-wal")] {
        let _ = std::fs::remove_file(path);
    }
    let verdicts = parse_verdicts(&stdout)?;
    if !status.success() {
        bail!("the runner exited with {status}:\n{}", indent(&stderr));
    }
    print_scorecard(&verdicts, options.verbose);
    println!("spec: {:.1} s", started.elapsed().as_secs_f64());
    if let Err(error) = stopped {
        println!(
            "server log:\n{}",
            indent(&server.log.lock().expect("log").join("\n"))
        );
        bail!("server shutdown: {error:#}");
    }
    compare_with_baseline(root, &verdicts, &options)
}

fn parse(args: &[String]) -> Result<Options> {
    let mut options = Options {
        filter: String::new(),
        verbose: false,
        update_baseline: false,
        replica_set: false,
    };
    let mut args = args.iter();
    while let Some(arg) = args.next() {
        match arg.as_str() {
            "--filter" => options.filter = args.next().context("--filter needs a value")?.clone(),
            "--verbose" | "-v" => options.verbose = true,
            "--update-baseline" => options.update_baseline = true,
            "--topology" => match args.next().map(String::as_str) {
                Some("single") => options.replica_set = false,
                Some("replicaset") => options.replica_set = true,
                other => bail!("--topology takes single or replicaset, not {other:?}"),
            },
            other => bail!(
                "unknown argument {other:?}; usage: cargo xtask spec [--filter SUBSTR] \
                 [--verbose] [--update-baseline] [--topology single|replicaset]"
            ),
        }
    }
    Ok(options)
}

/// `MFDB_SPEC_TESTS`, else `../shared/spec-tests` beside the repository.
fn spec_root(root: &Path) -> PathBuf {
    match std::env::var_os("MFDB_SPEC_TESTS") {
        Some(path) => PathBuf::from(path),
        None => root.join("../shared/spec-tests"),
    }
}

/// Reads the runner's verdict lines as they come, printing one progress line per folder
/// it finishes (with its counts so far) on stderr; returns them all.
fn follow(stdout: impl std::io::Read) -> Result<String> {
    let mut all = String::new();
    let mut folder = String::new();
    let mut tally = Tally::default();
    let started = Instant::now();
    let report = |folder: &str, tally: &Tally| {
        eprintln!(
            "spec: {folder}/ done at {:.0} s ({} pass, {} fail, {} skip)",
            started.elapsed().as_secs_f64(),
            tally.pass,
            tally.fail,
            tally.skip
        );
    };
    for line in BufReader::new(stdout).lines() {
        let line = line?;
        let mut fields = line.splitn(3, '\t');
        if let (Some(status), Some(file)) = (fields.next(), fields.next()) {
            let this = file.split_once('/').map_or(file, |(f, _)| f);
            if this != folder {
                if !folder.is_empty() {
                    report(&folder, &tally);
                }
                folder = this.to_owned();
                tally = Tally::default();
            }
            tally.add(status);
        }
        all.push_str(&line);
        all.push('\n');
    }
    if !folder.is_empty() {
        report(&folder, &tally);
    }
    Ok(all)
}

fn parse_verdicts(stdout: &str) -> Result<Vec<Verdict>> {
    stdout
        .lines()
        .map(|line| {
            let mut fields = line.splitn(4, '\t');
            let mut field = || fields.next().map(str::to_owned);
            match (field(), field(), field(), field()) {
                (Some(status), Some(file), Some(test), reason)
                    if ["pass", "fail", "skip"].contains(&status.as_str()) =>
                {
                    Ok(Verdict {
                        status,
                        file,
                        test,
                        reason: reason.unwrap_or_default(),
                    })
                }
                _ => bail!("unexpected runner output line: {line:?}"),
            }
        })
        .collect()
}

fn print_scorecard(verdicts: &[Verdict], verbose: bool) {
    let mut files: BTreeMap<(&str, &str), Tally> = BTreeMap::new();
    for verdict in verdicts {
        let (folder, _) = verdict.file.split_once('/').unwrap_or(("", &verdict.file));
        files
            .entry((folder, &verdict.file))
            .or_default()
            .add(&verdict.status);
    }
    let row = |name: &str, tally: Tally| {
        println!(
            "{name:<64} {:>5} {:>5} {:>5}",
            tally.pass, tally.fail, tally.skip
        );
    };
    println!(
        "{:<64} {:>5} {:>5} {:>5}",
        "spec file", "pass", "fail", "skip"
    );
    let mut folders: BTreeMap<&str, Tally> = BTreeMap::new();
    for (&(folder, file), &tally) in &files {
        row(file, tally);
        let sum = folders.entry(folder).or_default();
        sum.pass += tally.pass;
        sum.fail += tally.fail;
        sum.skip += tally.skip;
    }
    println!();
    let mut total = Tally::default();
    for (folder, tally) in &folders {
        row(&format!("{folder}/ (total)"), *tally);
        total.pass += tally.pass;
        total.fail += tally.fail;
        total.skip += tally.skip;
    }
    row("TOTAL", total);
    if verbose {
        for status in ["fail", "skip"] {
            println!("\n{status}s:");
            for verdict in verdicts.iter().filter(|v| v.status == status) {
                println!(
                    "  {}: {}\n      {}",
                    verdict.file, verdict.test, verdict.reason
                );
            }
        }
    }
}

fn compare_with_baseline(root: &Path, verdicts: &[Verdict], options: &Options) -> Result<()> {
    let baseline_file = options.baseline();
    let path = root.join(baseline_file);
    let passing: BTreeSet<String> = verdicts
        .iter()
        .filter(|v| v.status == "pass")
        .map(Verdict::name)
        .collect();
    if options.update_baseline {
        let text: String = passing.iter().map(|name| format!("{name}\n")).collect();
        std::fs::write(&path, text).with_context(|| format!("writing {baseline_file}"))?;
        println!(
            "spec: wrote {} passing tests to {baseline_file}",
            passing.len()
        );
        return Ok(());
    }
    let baseline_text = std::fs::read_to_string(&path).unwrap_or_default();
    let baseline: BTreeSet<&str> = baseline_text.lines().filter(|l| !l.is_empty()).collect();
    let ran: BTreeSet<String> = verdicts.iter().map(Verdict::name).collect();
    // With --filter, a baseline test that did not run says nothing; without, it must run.
    let checked: Vec<&str> = baseline
        .iter()
        .copied()
        .filter(|name| options.filter.is_empty() || ran.contains(*name))
        .collect();
    let lost: Vec<&str> = checked
        .iter()
        .copied()
        .filter(|name| !passing.contains(*name))
        .collect();
    let gained: Vec<&String> = passing
        .iter()
        .filter(|name| !baseline.contains(name.as_str()))
        .collect();
    if !gained.is_empty() {
        println!("\nnewly passing (not in {baseline_file}; run with --update-baseline):");
        for name in &gained {
            println!("  {}", name.replace('\t', ": "));
        }
    }
    if !lost.is_empty() {
        println!("\nno longer passing (in {baseline_file}):");
        for name in &lost {
            let reason = verdicts
                .iter()
                .find(|v| v.name() == *name)
                .map_or("did not run", |v| v.reason.as_str());
            println!("  {}\n      {reason}", name.replace('\t', ": "));
        }
        bail!("{} baseline spec test(s) no longer pass", lost.len());
    }
    println!("spec: baseline holds ({} tests checked)", checked.len());
    Ok(())
}
