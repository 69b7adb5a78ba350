//! `cargo xtask bench ping`: runs the ping benchmark (`tests/netbench`) in release mode.

use anyhow::{Result, bail};
use std::path::Path;
use std::process::Command;

pub fn run(root: &Path, args: &[String]) -> Result<()> {
    let Some((what, rest)) = args.split_first() else {
        bail!("usage: cargo xtask bench ping [--seconds S] [--clients 1,8,64]");
    };
    if what != "ping" {
        bail!("unknown benchmark {what:?}; available: ping");
    }
    let status = Command::new(env!("CARGO"))
        .current_dir(root)
        .args(["run", "--release", "--quiet", "-p", "mfdb-netbench", "--"])
        .args(rest)
        .status()?;
    if !status.success() {
        bail!("ping benchmark failed: {status}");
    }
    Ok(())
}
