//! `cargo xtask tidy`: mechanical rules CI enforces beyond fmt and clippy.
//!
//! - Layering: a workspace crate may depend (normal, dev or build) only on the
//!   crates listed for it in `ALLOWED_EDGES`, which mirrors docs/ARCHITECTURE.md.
//! - Inside the engine, a folder listed in `MODULE_RULES` never names the modules its
//!   row forbids (outside its test files): authorization reads a narrow view of a
//!   request and of the engine, never `command::Request` or `Engine`.
//! - Inside a crate listed in `CIRCLE_MAX`, no import circle among its non-test files is
//!   larger than its row says (`crate::circles`): the engine's knot of commands, cursors
//!   and the `Engine` may shrink, never grow.
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
        "storage",
        &[
            "bson-canonical",
            "wire",
            "wal",
            "pager",
            "btree",
            "query",
            "update",
        ],
    ),
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
            "storage",
        ],
    ),
    ("server", &["engine", "wire", "bson-canonical"]),
    // The published face: the embedded client under the product's name.
    ("multiforadb", &["engine"]),
];

/// Folders of `crates/engine/src` and the module paths their non-test files never name.
pub const MODULE_RULES: &[(&str, &[&str])] = &[(
    "auth",
    &["crate::command", "crate::engine", "crate::Engine"],
)];

/// The largest import circle each crate may hold, in files (see `crate::circles`).
/// storage: `error` and `store` (each error type converts into the other's).
/// engine: the command dispatcher, its cursors and argument parsing, `Engine` and
/// `profile`: the next to break (`operations` left it by taking a narrow view).
pub const CIRCLE_MAX: &[(&str, usize)] = &[("storage", 2), ("engine", 8)];

/// The only file that may contain `unsafe`.
const UNSAFE_ALLOWED: &[&str] = &["crates/pager/src/map.rs"];

pub fn run(root: &Path) -> Result<()> {
    let mut problems = Vec::new();
    check_layers(root, &mut problems)?;
    check_modules(root, &mut problems)?;
    check_circles(root, &mut problems)?;
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

/// `MODULE_RULES`: a test file (`tests.rs`, `*_tests.rs`, `proptests.rs`) may use anything.
fn check_modules(root: &Path, problems: &mut Vec<String>) -> Result<()> {
    for (folder, forbidden) in MODULE_RULES {
        let dir = root.join("crates/engine/src").join(folder);
        for file in rust_files(&dir)? {
            let stem = file
                .file_stem()
                .and_then(|s| s.to_str())
                .unwrap_or_default();
            if stem == "tests" || stem.ends_with("_tests") || stem == "proptests" {
                continue;
            }
            let rel = file
                .strip_prefix(root)
                .unwrap_or(&file)
                .display()
                .to_string();
            for (number, line) in fs::read_to_string(&file)?.lines().enumerate() {
                let code = line.split("//").next().unwrap_or_default();
                for path in *forbidden {
                    let named = code.match_indices(path).any(|(at, _)| {
                        let next = code[at + path.len()..].chars().next();
                        !next.is_some_and(|c| c.is_alphanumeric() || c == '_')
                    });
                    if named {
                        problems.push(format!(
                            "{rel}:{}: engine/src/{folder} may not name {path} (module layering)",
                            number + 1
                        ));
                    }
                }
            }
        }
    }
    Ok(())
}

/// `CIRCLE_MAX`: prints each crate's largest circle, refuses one over its limit.
fn check_circles(root: &Path, problems: &mut Vec<String>) -> Result<()> {
    for (name, max) in CIRCLE_MAX {
        let graph = crate::circles::graph(&root.join("crates").join(name).join("src"))?;
        let circles = crate::circles::circles(&graph);
        let largest = circles.first().map_or(0, Vec::len);
        println!("tidy: {name}'s largest import circle: {largest} files (at most {max})");
        if largest > *max {
            let files: Vec<String> = circles[0].iter().map(|m| crate::circles::show(m)).collect();
            problems.push(format!(
                "{name}: an import circle of {largest} files (at most {max}): {}",
                files.join(", ")
            ));
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

#[cfg(test)]
mod tests {
    use super::*;

    /// A scratch workspace holding `crates/<name>/Cargo.toml` with `manifest` for each entry.
    fn workspace(test: &str, crates: &[(&str, &str)]) -> PathBuf {
        let root = std::env::temp_dir().join(format!("tidy-{test}-{}", std::process::id()));
        let _ = fs::remove_dir_all(&root);
        for (name, manifest) in crates {
            let dir = root.join("crates").join(name);
            fs::create_dir_all(&dir).expect("scratch crate");
            fs::write(dir.join("Cargo.toml"), manifest).expect("manifest");
        }
        root
    }

    fn layer_problems(root: &Path) -> Vec<String> {
        let mut problems = Vec::new();
        check_layers(root, &mut problems).expect("read the scratch workspace");
        problems
    }

    #[test]
    fn storage_reaching_up_to_the_engine_is_refused() {
        let manifest =
            "[dependencies]\nbtree = { path = \"../btree\" }\nengine = { path = \"../engine\" }\n";
        let root = workspace("up", &[("storage", manifest)]);
        assert_eq!(
            layer_problems(&root),
            vec!["storage may not depend on engine (layering)".to_owned()]
        );
        let dev = "[dev-dependencies]\nserver = { path = \"../server\" }\n";
        let root = workspace("up-dev", &[("storage", dev)]);
        assert_eq!(
            layer_problems(&root),
            vec!["storage may not depend on server (layering)".to_owned()]
        );
        let _ = fs::remove_dir_all(&root);
    }

    #[test]
    fn a_lower_crate_reaching_up_to_storage_is_refused() {
        let manifest = "[dependencies]\nstorage = { path = \"../storage\" }\n";
        let root = workspace("below", &[("btree", manifest), ("query", manifest)]);
        let mut problems = layer_problems(&root);
        problems.sort();
        assert_eq!(
            problems,
            vec![
                "btree may not depend on storage (layering)".to_owned(),
                "query may not depend on storage (layering)".to_owned(),
            ]
        );
        let _ = fs::remove_dir_all(&root);
    }

    #[test]
    fn authorization_naming_the_request_or_the_engine_is_refused() {
        let root = workspace("auth", &[]);
        let auth = root.join("crates/engine/src/auth");
        fs::create_dir_all(&auth).expect("scratch folder");
        fs::write(auth.join("authorize.rs"), "//! x\nuse crate::command::Request;\n// crate::engine in a comment is fine\nfn f(e: &crate::Engine) {}\nuse crate::engine_like;\n").expect("file");
        fs::write(auth.join("tests.rs"), "//! x\nuse crate::engine::Engine;\n").expect("file");
        let mut problems = Vec::new();
        check_modules(&root, &mut problems).expect("read the scratch folder");
        let file = "crates/engine/src/auth/authorize.rs";
        assert_eq!(
            problems,
            vec![
                format!("{file}:2: engine/src/auth may not name crate::command (module layering)"),
                format!("{file}:4: engine/src/auth may not name crate::Engine (module layering)"),
            ]
        );
        let _ = fs::remove_dir_all(&root);
    }

    #[test]
    fn an_import_circle_is_found_and_test_files_are_left_out() {
        let root = workspace("circles", &[]);
        let src = root.join("src");
        fs::create_dir_all(src.join("a")).expect("scratch folder");
        let write = |path: &str, text: &str| fs::write(src.join(path), text).expect("file");
        write("lib.rs", "//! x\nmod a;\nmod b;\nmod c;\n");
        write("a/mod.rs", "//! x\nuse crate::b::B;\nmod inner;\n");
        write("a/inner.rs", "//! x\nuse super::super::c::{C, D};\n");
        write(
            "b.rs",
            "//! x\n// crate::c in a comment\nfn f() { crate::a::inner::g() }\n",
        );
        write(
            "c.rs",
            "//! x\nuse crate::a;\n#[cfg(test)]\nmod tests {\n use crate::lib_only;\n}\n",
        );
        write("a/tests.rs", "//! x\nuse crate::c::everything;\n");
        let graph = crate::circles::graph(&src).expect("graph");
        let circles = crate::circles::circles(&graph);
        let shown: Vec<String> = circles[0].iter().map(|m| crate::circles::show(m)).collect();
        assert_eq!(shown, ["a", "a/inner", "b", "c"]);
        assert!(circles[1..].iter().all(|c| c.len() == 1), "{circles:?}");
        // Cut c's edge back into a: the circle is gone.
        write("c.rs", "//! x\n");
        let graph = crate::circles::graph(&src).expect("graph");
        assert_eq!(crate::circles::circles(&graph)[0].len(), 1, "{graph:?}");
        let _ = fs::remove_dir_all(&root);
    }

    #[test]
    fn this_workspace_keeps_its_layers() {
        let root = Path::new(env!("CARGO_MANIFEST_DIR"))
            .parent()
            .expect("the workspace");
        assert_eq!(layer_problems(root), Vec::<String>::new());
        let mut problems = Vec::new();
        check_modules(root, &mut problems).expect("read the engine");
        check_circles(root, &mut problems).expect("read the crates");
        assert_eq!(problems, Vec::<String>::new());
    }
}
