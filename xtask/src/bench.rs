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
    let package = match what.as_str() {
        "ping" => "mfdb-netbench",
        "embedded" => "mfdb-bench-embedded",
        _ => bail!("unknown benchmark {what:?}; available: ping, embedded"),
    };
    let status = Command::new(env!("CARGO"))
        .current_dir(root)
        .args(["run", "--release", "--quiet", "-p", package, "--"])
        .args(rest)
        .status()?;
    if !status.success() {
        bail!("{what} benchmark failed: {status}");
    }
    Ok(())
}
