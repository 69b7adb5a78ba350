//! `cargo xtask bench ping|embedded`: runs the ping benchmark (`tests/netbench`) or the
//! embedded comparison with PoloDB and SQLite (`benches/embedded`) in release mode.

use anyhow::{Result, bail};
use std::path::Path;
use std::process::Command;

pub fn run(root: &Path, args: &[String]) -> Result<()> {
    let Some((what, rest)) = args.split_first() else {
        bail!(
            "usage: cargo xtask bench ping [--seconds S] [--clients 1,8,64]\n       \
             cargo xtask bench embedded [--docs N] [--dir PATH] [--rounds R] [--only-ours] \
             [--only-typed]"
        );
    };
    let mut command = Command::new(env!("CARGO"));
    command
        .current_dir(root)
        .args(["run", "--release", "--quiet"]);
    match what.as_str() {
        "ping" => command.args(["-p", "mfdb-netbench"]),
        // A workspace of its own (the peers stay out of the main build); the same target
        // dir as the workspace's (`CARGO_TARGET_DIR` when set).
        "embedded" => command
            .args([
                "--manifest-path",
                "benches/embedded/Cargo.toml",
                "--target-dir",
            ])
            .arg(std::env::var_os("CARGO_TARGET_DIR").unwrap_or_else(|| "target".into())),
        _ => bail!("unknown benchmark {what:?}; available: ping, embedded"),
    };
    let status = command.arg("--").args(rest).status()?;
    if !status.success() {
        bail!("{what} benchmark failed: {status}");
    }
    Ok(())
}
