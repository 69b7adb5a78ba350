//! `cargo xtask`: the project's task runner (tidy, fuzz, e2e, spec, bench, gates).
//!
//! Each subcommand lives in its own module; `main` only dispatches.

mod bench;
mod certs;
mod circles;
mod crash;
mod e2e;
mod fuzz;
mod gates;
mod spec;
mod tidy;

use anyhow::{Result, bail};
use std::path::PathBuf;

const USAGE: &str = "\
usage: cargo xtask <command> [args]

commands:
  tidy                 check layering, import circles, file sizes, FIXMEs and unsafe rules
  circles <crate|path/to/src> [--top N]
                       a crate's largest import circles among its non-test files
  fuzz <target|all> [--iterations N] [--seed S]
                       run a fuzz target (see tests/fuzz/src/targets.rs)
  e2e                  smoke-test the server with PyMongo, the Node.js driver and mongosh
                       (install them first: bash tests/e2e/setup.sh)
  spec [--filter SUBSTR] [--verbose] [--update-baseline] [--topology single|replicaset]
                       MongoDB's unified-format spec tests through PyMongo: pass/fail/skip
                       per file; fails if a test in tests/spec/baseline.txt stops passing
                       (replicaset: a --replSet server, more folders, baseline-replicaset.txt)
  crash [--tier small|large] [--seeds N] [--point NAME|PREFIX] [--workload W] [--tsv] [--keep]
                       the crash matrix: kill the server at each named crash point, restart,
                       check every acknowledged write (builds into target/crash)
  bench ping [--seconds S] [--clients 1,8,64]
  bench embedded [--docs N] [--dir PATH]   (vs PoloDB and SQLite)
  bench surface [--rounds N]   currentOp/serverStatus vs ping, exhaust vs plain (PyMongo)
                       ping round trips/s against the server and a bare TCP echo server
  gates [--size small|default|large] [--docs N] [--doc-size BYTES] [--large-gb G]
        [--only bench,large,churn,crash]
                       the benchmark table (Node.js driver) with the machine's floors, large
                       collections, churn and the crash matrix; writes results/gates-*.tsv
                       (install the driver first: bash tests/e2e/setup.sh)
";

fn main() -> Result<()> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let Some(command) = args.first() else {
        eprint!("{USAGE}");
        bail!("no command given");
    };
    let rest = &args[1..];
    match command.as_str() {
        "tidy" => tidy::run(&workspace_root()),
        "circles" => circles::run(&workspace_root(), rest),
        "fuzz" => fuzz::run(&workspace_root(), rest),
        "e2e" => e2e::run(&workspace_root(), rest),
        "spec" => spec::run(&workspace_root(), rest),
        "crash" => crash::run(&workspace_root(), rest),
        "bench" => bench::run(&workspace_root(), rest),
        "gates" => gates::run(&workspace_root(), rest),
        "help" | "--help" | "-h" => {
            print!("{USAGE}");
            Ok(())
        }
        other => {
            eprint!("{USAGE}");
            bail!("unknown command {other:?}")
        }
    }
}

/// A `cargo` command for the tasks' own builds, without the variables `cargo run` set for
/// xtask itself (`CARGO_PKG_NAME=xtask`, `CARGO_MANIFEST_DIR`, ...): build scripts such as
/// ring's name those in `rerun-if-env-changed`, so inheriting them made every build from
/// a task rebuild ring, rustls and the server, and the next plain build rebuild them back
/// (issue 50).
pub(crate) fn cargo() -> std::process::Command {
    let mut command = std::process::Command::new(env!("CARGO"));
    for (name, _) in std::env::vars_os() {
        let Some(name) = name.to_str() else { continue };
        let set_by_cargo_run = [
            "CARGO_PKG_",
            "CARGO_MANIFEST_",
            "CARGO_BIN_",
            "CARGO_CRATE_",
        ]
        .iter()
        .any(|prefix| name.starts_with(prefix))
            || matches!(name, "CARGO_PRIMARY_PACKAGE" | "OUT_DIR");
        if set_by_cargo_run {
            command.env_remove(name);
        }
    }
    command
}

/// Cargo's target directory for `root`: `CARGO_TARGET_DIR` when set (relative to `root`),
/// else `root/target`, so the binaries run are the ones just built.
fn target_dir(root: &std::path::Path) -> PathBuf {
    match std::env::var_os("CARGO_TARGET_DIR") {
        Some(dir) => root.join(dir),
        None => root.join("target"),
    }
}

/// The workspace root: the parent of this crate's manifest directory.
fn workspace_root() -> PathBuf {
    let manifest = PathBuf::from(env!("CARGO_MANIFEST_DIR"));
    manifest.parent().map(PathBuf::from).unwrap_or(manifest)
}
