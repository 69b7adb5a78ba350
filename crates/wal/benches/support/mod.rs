//! Shared pieces of the benches: the bench directory and the 16 KiB document corpus.

#![allow(dead_code, reason = "each bench uses a subset")]

use std::path::{Path, PathBuf};

/// Bytes per document.
pub const DOC_LEN: usize = 16 * 1024;
/// Documents in the corpus (16 MiB).
pub const DOC_COUNT: usize = 1024;

/// A fresh directory `target/wal-bench/<tag>`, on the repository's file system.
pub fn bench_dir(tag: &str) -> PathBuf {
    let target = std::env::var_os("CARGO_TARGET_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| Path::new(env!("CARGO_MANIFEST_DIR")).join("../../target"));
    let dir = target.join("wal-bench").join(tag);
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).expect("bench dir");
    dir
}

/// Synthetic 16 KiB documents shaped like the corpus of MACHINE.md: field names and
/// Zipf-ish words (compressible) plus a 2 KiB random printable payload (not).
pub fn documents() -> Vec<Vec<u8>> {
    const WORDS: &[&str] = &[
        "the", "of", "and", "to", "in", "is", "you", "that", "it", "he", "was", "for", "on", "are",
        "as", "with", "his", "they", "at", "be", "this", "have", "from", "or", "one", "had", "by",
        "word", "but", "not", "what", "all", "were", "we", "when", "your", "can", "said", "there",
        "use", "an", "each", "which", "she", "do", "how", "their", "if", "will", "up", "other",
        "about", "out", "many", "then", "them", "these", "so", "some", "her", "would", "make",
        "like", "him", "into", "time", "has", "look", "two", "more",
    ];
    let mut x = 0x2545_f491_4f6c_dd1du64;
    let mut next = move || {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        x
    };
    (0..DOC_COUNT)
        .map(|i| {
            let mut doc = Vec::with_capacity(DOC_LEN);
            doc.extend_from_slice(format!("_id{i:024x}createdAt{}user", next()).as_bytes());
            for _ in 0..2048 {
                doc.push(b' ' + (next() % 95) as u8);
            }
            let mut item = 0;
            while doc.len() < DOC_LEN {
                doc.extend_from_slice(
                    format!(
                        "items.{item}sku{:08}qty{}price{}.{:02}statustitle",
                        next() % 100_000,
                        next() % 9,
                        next() % 500,
                        next() % 100
                    )
                    .as_bytes(),
                );
                for _ in 0..(8 + next() % 24) {
                    let r = next() % 1000;
                    let word =
                        WORDS[((r * r) / 1000 * WORDS.len() as u64 / 1000) as usize % WORDS.len()];
                    doc.extend_from_slice(word.as_bytes());
                    doc.push(b' ');
                }
                item += 1;
            }
            doc.truncate(DOC_LEN);
            doc
        })
        .collect()
}
