//! `cargo xtask bench ping|embedded`: runs the ping benchmark (`tests/netbench`) or the
//! embedded comparison with PoloDB and SQLite (`benches/embedded`) in release mode.

use anyhow::{Result, bail};
use std::path::Path;
use std::process::Command;

pub fn run(root: &Path, args: &[String]) -> Result<()> {
    let Some((what, rest)) = args.split_first() else {
        bail!(
            "usage: cargo xtask bench ping [--seconds S] [--clients 1,8,64]\n       \
             cargo xtask bench embedded [--docs N] [--dir PATH]"
        );
    };
    let mut command = Command::new(env!("CARGO"));
    command
        .current_dir(root)
        .args(["run", "--release", "--quiet"]);
    match what.as_str() {
        "ping" => command.args(["-p", "mfdb-netbench"]),
        // A workspace of its own (the peers stay out of the main build); same target dir.
        "embedded" => command.args([
            "--manifest-path",
            "benches/embedded/Cargo.toml",
            "--target-dir",
            "target",
        ]),
        _ => bail!("unknown benchmark {what:?}; available: ping, embedded"),
    };
    let status = command.arg("--").args(rest).status()?;
    if !status.success() {
        bail!("{what} benchmark failed: {status}");
    }
    Ok(())
}
