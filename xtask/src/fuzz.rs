//! `cargo xtask fuzz`: runs the project's fuzz targets in release mode.
//!
//! The targets and the mutational driver live in `tests/fuzz` (package
//! `mfdb-fuzz`); this only builds and launches it with the right flags.

use anyhow::{Result, bail};
use std::path::Path;

pub fn run(root: &Path, args: &[String]) -> Result<()> {
    if args.is_empty() {
        bail!("usage: cargo xtask fuzz <target|all|list> [--iterations N] [--seed S]");
    }
    let status = crate::cargo()
        .current_dir(root)
        .args(["run", "--release", "--quiet", "-p", "mfdb-fuzz", "--"])
        .args(args)
        .status()?;
    if !status.success() {
        bail!("fuzz run failed: {status}");
    }
    Ok(())
}
