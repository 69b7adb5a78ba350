//! Import circles inside one crate: the files of `src/` as a graph, an edge wherever a
//! file names a path through `crate::` or `super::` that lands in another file, and the
//! strongly connected components of that graph (Tarjan). Test code (`tests.rs`,
//! `*_tests.rs`, `proptests.rs`, anything under a `*tests` folder, and an inline
//! `#[cfg(test)] mod tests { ... }` at a file's end) is left out: tests may reach anywhere.
//!
//! A file's module path is its path under `src/` (`a/mod.rs` and `a.rs` are `a`; `lib.rs`
//! is the root). A named path resolves to the longest prefix that is a file, so
//! `crate::command::cursor::Cursor` is `command/cursor` and `crate::command::Request` is
//! `command`. `use a::{b, c::d}` groups are expanded one level. Macros and re-exports are
//! not followed: the figure is a floor, measured the same way before and after a change.

use anyhow::{Result, bail};
use std::collections::{BTreeMap, BTreeSet};
use std::fs;
use std::path::Path;

/// The module graph of the crate whose sources are under `src`.
pub type Graph = BTreeMap<Vec<String>, BTreeSet<Vec<String>>>;

/// The graph of `src`'s non-test files.
pub fn graph(src: &Path) -> Result<Graph> {
    let mut files = BTreeMap::new();
    collect(src, src, &mut files)?;
    let mut graph = Graph::new();
    for (module, text) in &files {
        let mut edges = BTreeSet::new();
        for (relative, path) in named_paths(text) {
            let mut full = if relative {
                module[..module.len().saturating_sub(1)].to_vec()
            } else {
                Vec::new()
            };
            let mut path = path.into_iter().peekable();
            while relative && path.next_if(|p| p == "super").is_some() {
                full.pop();
            }
            full.extend(path);
            let target = (0..=full.len())
                .rev()
                .map(|n| full[..n].to_vec())
                .find(|prefix| files.contains_key(prefix));
            if let Some(target) = target
                && &target != module
            {
                edges.insert(target);
            }
        }
        graph.insert(module.clone(), edges);
    }
    Ok(graph)
}

fn collect(src: &Path, dir: &Path, files: &mut BTreeMap<Vec<String>, String>) -> Result<()> {
    for entry in fs::read_dir(dir)? {
        let path = entry?.path();
        let name = path
            .file_name()
            .and_then(|n| n.to_str())
            .unwrap_or_default();
        let stem = name.trim_end_matches(".rs");
        if stem == "tests" || stem.ends_with("_tests") || stem == "proptests" {
            continue;
        }
        if path.is_dir() {
            collect(src, &path, files)?;
            continue;
        }
        if !name.ends_with(".rs") {
            continue;
        }
        let relative = path.strip_prefix(src).unwrap_or(&path).with_extension("");
        let mut module: Vec<String> = relative
            .components()
            .map(|c| c.as_os_str().to_string_lossy().into_owned())
            .collect();
        if module
            .last()
            .is_some_and(|last| last == "mod" || last == "lib")
        {
            module.pop();
        }
        let text = fs::read_to_string(&path)?;
        let text = match text.find("#[cfg(test)]\nmod tests {") {
            Some(at) => text[..at].to_owned(),
            None => text,
        };
        files.insert(module, text);
    }
    Ok(())
}

/// Every `crate::` or `super::` path in `text` outside line comments, as (relative to the
/// file's parent, segments), with one level of `{...}` groups expanded.
fn named_paths(text: &str) -> Vec<(bool, Vec<String>)> {
    let ident = |c: char| c.is_alphanumeric() || c == '_';
    let mut out = Vec::new();
    for line in text.lines() {
        let code = line.split("//").next().unwrap_or_default();
        for root in ["crate::", "super::"] {
            for (at, _) in code.match_indices(root) {
                let before = &code[..at];
                if before.chars().next_back().is_some_and(ident) || before.ends_with("::") {
                    continue;
                }
                let rest = &code[at + root.len()..];
                let mut segments = Vec::new();
                let mut tail = rest;
                loop {
                    let end = tail.find(|c: char| !ident(c)).unwrap_or(tail.len());
                    if end == 0 {
                        break;
                    }
                    segments.push(tail[..end].to_owned());
                    match tail[end..].strip_prefix("::") {
                        Some(next) => tail = next,
                        None => break,
                    }
                }
                if let Some(group) = tail.strip_prefix('{') {
                    let group = group.split('}').next().unwrap_or_default();
                    for item in group.split(',') {
                        let first = item.trim().split("::").next().unwrap_or_default();
                        let first = first.split(' ').next().unwrap_or_default();
                        if !first.is_empty() && first != "self" {
                            let mut path = segments.clone();
                            path.push(first.to_owned());
                            out.push((root == "super::", path));
                        }
                    }
                }
                out.push((root == "super::", segments));
            }
        }
    }
    out
}

/// The graph's strongly connected components, largest first (each sorted).
pub fn circles(graph: &Graph) -> Vec<Vec<Vec<String>>> {
    struct Tarjan<'g> {
        graph: &'g Graph,
        index: BTreeMap<&'g Vec<String>, (usize, usize)>,
        stack: Vec<&'g Vec<String>>,
        on_stack: BTreeSet<&'g Vec<String>>,
        out: Vec<Vec<Vec<String>>>,
    }
    impl<'g> Tarjan<'g> {
        fn visit(&mut self, v: &'g Vec<String>) {
            let n = self.index.len();
            self.index.insert(v, (n, n));
            self.stack.push(v);
            self.on_stack.insert(v);
            for w in self.graph.get(v).into_iter().flatten() {
                if !self.index.contains_key(w) {
                    self.visit(w);
                    let low = self.index[w].1.min(self.index[v].1);
                    self.index.get_mut(v).expect("visited").1 = low;
                } else if self.on_stack.contains(w) {
                    let low = self.index[w].0.min(self.index[v].1);
                    self.index.get_mut(v).expect("visited").1 = low;
                }
            }
            if self.index[v].0 == self.index[v].1 {
                let mut component = Vec::new();
                while let Some(w) = self.stack.pop() {
                    self.on_stack.remove(w);
                    component.push(w.clone());
                    if w == v {
                        break;
                    }
                }
                component.sort();
                self.out.push(component);
            }
        }
    }
    let mut tarjan = Tarjan {
        graph,
        index: BTreeMap::new(),
        stack: Vec::new(),
        on_stack: BTreeSet::new(),
        out: Vec::new(),
    };
    for v in graph.keys() {
        if !tarjan.index.contains_key(v) {
            tarjan.visit(v);
        }
    }
    tarjan
        .out
        .sort_by(|a, b| b.len().cmp(&a.len()).then_with(|| a.cmp(b)));
    tarjan.out
}

/// A module path as a reader writes it (`command/cursor`; the root is `lib`).
pub fn show(module: &[String]) -> String {
    if module.is_empty() {
        "lib".to_owned()
    } else {
        module.join("/")
    }
}

/// `cargo xtask circles <crate|path/to/src> [--top N]`: the largest circles, their files.
pub fn run(root: &Path, args: &[String]) -> Result<()> {
    let Some(which) = args.first() else {
        bail!("usage: cargo xtask circles <crate|path/to/src> [--top N]");
    };
    let top = match args.get(1..3) {
        Some([flag, n]) if flag == "--top" => n.parse()?,
        _ => 3,
    };
    let src = if Path::new(which).is_dir() {
        Path::new(which).to_path_buf()
    } else {
        root.join("crates").join(which).join("src")
    };
    let graph = graph(&src)?;
    let circles = circles(&graph);
    println!("{}: {} non-test files", src.display(), graph.len());
    for circle in circles.iter().take(top).filter(|c| c.len() > 1) {
        let files: Vec<String> = circle.iter().map(|m| show(m)).collect();
        println!("circle of {} files: {}", circle.len(), files.join(", "));
    }
    Ok(())
}
