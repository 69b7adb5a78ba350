//! `cargo xtask bench ping|compression|embedded|surface`: runs the ping benchmark
//! (`tests/netbench`; `compression`: its OP_COMPRESSED row), the
//! embedded comparison with PoloDB and SQLite (`benches/embedded`) in release mode, or issue
//! 22's command-surface rows through PyMongo (dev build).

use anyhow::{Result, bail};
use std::path::Path;
use std::process::Command;

pub fn run(root: &Path, args: &[String]) -> Result<()> {
    let Some((what, rest)) = args.split_first() else {
        bail!(
            "usage: cargo xtask bench ping [--seconds S] [--clients 1,8,64]\n       \
             cargo xtask bench compression [--rounds R]\n       \
             cargo xtask bench embedded [--docs N] [--dir PATH] [--rounds R] [--only-ours] \
             [--only-typed]"
        );
    };
    if what == "surface" {
        return surface(root, rest);
    }
    // Cargo's progress shows while it builds (a release build takes minutes).
    eprintln!("xtask: building and running the {what} benchmark (release)");
    let mut command = crate::cargo();
    command.current_dir(root).args(["run", "--release"]);
    match what.as_str() {
        "ping" => command.args(["-p", "mfdb-netbench"]),
        // Issue 20's OP_COMPRESSED row (the same binary, `--compression`).
        "compression" => command.args(["-p", "mfdb-netbench"]),
        // A workspace of its own (the peers stay out of the main build); the same target
        // dir as the workspace's (`CARGO_TARGET_DIR` when set).
        "embedded" => command
            .args([
                "--manifest-path",
                "benches/embedded/Cargo.toml",
                "--target-dir",
            ])
            .arg(std::env::var_os("CARGO_TARGET_DIR").unwrap_or_else(|| "target".into())),
        _ => bail!("unknown benchmark {what:?}; available: ping, compression, embedded, surface"),
    };
    command.arg("--");
    if what == "compression" {
        command.arg("--compression");
    }
    let status = command.args(rest).status()?;
    if !status.success() {
        bail!("{what} benchmark failed: {status}");
    }
    Ok(())
}

/// `bench surface [--rounds N]`: issue 22's rows through PyMongo (`tests/e2e/bench_surface.py`,
/// install it with `bash tests/e2e/setup.sh`) against the dev build: currentOp and
/// serverStatus against ping with 100 idle cursors and 32 connections, and an exhaust
/// cursor against a plain one over 100,000 small documents.
fn surface(root: &Path, args: &[String]) -> Result<()> {
    let python = root.join("tests/e2e/.venv/bin/python");
    if !python.exists() {
        bail!("PyMongo is not installed: run `bash tests/e2e/setup.sh` first");
    }
    crate::e2e::build_server(root)?;
    let mut server = crate::e2e::start_with(root, "bench-surface", &[])?;
    let uri = format!("mongodb://{}/?directConnection=true", server.address);
    let status = Command::new(&python)
        .arg(root.join("tests/e2e/bench_surface.py"))
        .arg(&uri)
        .args(args)
        .status();
    let stopped = crate::e2e::stop(&mut server);
    let _ = std::fs::remove_file(&server.db);
    if !status?.success() {
        bail!("the surface benchmark failed");
    }
    stopped
}
