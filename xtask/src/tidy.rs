//! `cargo xtask tidy`: mechanical rules CI enforces beyond fmt and clippy.
//!
//! - Layering: a workspace crate may depend (normal, dev or build) only on the
//!   crates listed for it in `ALLOWED_EDGES`, which mirrors docs/ARCHITECTURE.md.
//! - Every `.rs` file under `crates/` opens with a `//!` line of purpose.
//! - No Rust file exceeds `FILE_LINES_MAX` lines.
//! - No `FIXME` in committed code.
//! - `unsafe` appears only in the pager's mmap module, each block with `// SAFETY:`.

use anyhow::{Result, bail};
use std::fs;
use std::path::{Path, PathBuf};

const FILE_LINES_MAX: usize = 1500;

/// The stack, bottom-up. A crate may import the crates named after it here;
/// `xtask` and the test/bench packages sit beside the stack and may use any.
/// Keep in step with docs/ARCHITECTURE.md.
pub const ALLOWED_EDGES: &[(&str, &[&str])] = &[
    ("bson-canonical", &[]),
    ("wire", &["bson-canonical"]),
    ("wal", &[]),
    ("pager", &["wal"]),
    ("btree", &["pager", "wal", "bson-canonical"]),
    ("regex", &[]),
    ("query", &["bson-canonical", "regex"]),
    ("update", &["query", "bson-canonical"]),
    (
        "engine",
        &[
            "bson-canonical",
            "wire",
            "wal",
            "pager",
            "btree",
            "regex",
            "query",
            "update",
        ],
    ),
    ("server", &["engine", "wire", "bson-canonical"]),
];

/// The only file that may contain `unsafe`.
const UNSAFE_ALLOWED: &[&str] = &["crates/pager/src/map.rs"];

pub fn run(root: &Path) -> Result<()> {
    let mut problems = Vec::new();
    check_layers(root, &mut problems)?;
    for file in rust_files(&root.join("crates"))? {
        check_file(root, &file, &mut problems)?;
    }
    if problems.is_empty() {
        println!("tidy: ok");
        return Ok(());
    }
    for problem in &problems {
        eprintln!("tidy: {problem}");
    }
    bail!("tidy found {} problem(s)", problems.len())
}

fn check_layers(root: &Path, problems: &mut Vec<String>) -> Result<()> {
    let crate_names: Vec<&str> = ALLOWED_EDGES.iter().map(|(name, _)| *name).collect();
    for entry in fs::read_dir(root.join("crates"))? {
        let dir = entry?.path();
        let manifest = dir.join("Cargo.toml");
        if !manifest.exists() {
            continue;
        }
        let name = dir
            .file_name()
            .and_then(|n| n.to_str())
            .unwrap_or_default()
            .to_string();
        let Some((_, allowed)) = ALLOWED_EDGES.iter().find(|(n, _)| *n == name) else {
            problems.push(format!(
                "crate {name} is not in the layer table (xtask/src/tidy.rs)"
            ));
            continue;
        };
        let text = fs::read_to_string(&manifest)?;
        for line in text.lines() {
            let line = line.trim();
            for dep in &crate_names {
                let is_dep = line.starts_with(&format!("{dep} ="))
                    || line.starts_with(&format!("{dep}.workspace"));
                if is_dep && !allowed.contains(dep) && *dep != name.as_str() {
                    problems.push(format!("{name} may not depend on {dep} (layering)"));
                }
            }
        }
    }
    Ok(())
}

fn check_file(root: &Path, file: &Path, problems: &mut Vec<String>) -> Result<()> {
    let text = fs::read_to_string(file)?;
    let rel = file
        .strip_prefix(root)
        .unwrap_or(file)
        .to_string_lossy()
        .replace('\\', "/");
    let lines = text.lines().count();
    if lines > FILE_LINES_MAX {
        problems.push(format!("{rel}: {lines} lines (max {FILE_LINES_MAX})"));
    }
    let first = text
        .lines()
        .find(|l| !l.trim().is_empty())
        .unwrap_or_default();
    if !first.starts_with("//!") {
        problems.push(format!("{rel}: must open with a `//!` line of purpose"));
    }
    let fixme = ["FIX", "ME"].concat();
    for (number, line) in text.lines().enumerate() {
        if line.contains(&fixme) {
            problems.push(format!(
                "{rel}:{}: {fixme} must be fixed before merge",
                number + 1
            ));
        }
        let code = line.split("//").next().unwrap_or_default();
        let has_unsafe = code.contains("unsafe {") || code.contains("unsafe fn");
        if has_unsafe && !UNSAFE_ALLOWED.contains(&rel.as_str()) {
            problems.push(format!(
                "{rel}:{}: unsafe outside {UNSAFE_ALLOWED:?}",
                number + 1
            ));
        }
        if has_unsafe && code.contains("unsafe {") {
            let previous = text
                .lines()
                .nth(number.saturating_sub(1))
                .unwrap_or_default();
            if !previous.contains("SAFETY:") && !line.contains("SAFETY:") {
                problems.push(format!(
                    "{rel}:{}: unsafe block without // SAFETY:",
                    number + 1
                ));
            }
        }
    }
    Ok(())
}

fn rust_files(dir: &Path) -> Result<Vec<PathBuf>> {
    let mut out = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(dir) = stack.pop() {
        let Ok(entries) = fs::read_dir(&dir) else {
            continue;
        };
        for entry in entries {
            let path = entry?.path();
            if path.is_dir() {
                if path.file_name().is_some_and(|n| n == "target") {
                    continue;
                }
                stack.push(path);
            } else if path.extension().is_some_and(|e| e == "rs") {
                out.push(path);
            }
        }
    }
    out.sort();
    Ok(out)
}
