//! Benchmarks typical MongoDB `$regex` patterns: ours against the `regex` crate and PCRE2 (interpreter and JIT).
//!
//! Each pattern runs `is_match` over a set of short field values (20-200
//! bytes) and over one document of a few KiB. Ratios: divide our time by the
//! `regex` crate's for the same pattern and subject set.

use criterion::{Criterion, criterion_group, criterion_main};
use std::hint::black_box;

/// (name, pattern, options) — all supported by the three engines.
const PATTERNS: &[(&str, &str, &str)] = &[
    ("prefix", "^user_42", ""),
    ("substring", "needle", ""),
    ("caseless_word", "(?i)ERROR", ""),
    ("phone", r"\d{3}-\d{4}", ""),
    ("email", r"^[a-z]+@[a-z]+\.com$", ""),
    ("alternation", "apple|banana|cherry|durian", ""),
    ("dot_star", ".*foo.*bar", ""),
    ("word_boundary", r"\bstatus\b", ""),
];

fn short_subjects() -> Vec<String> {
    let mut subjects = vec![
        "user_42".to_string(),
        "user_4217 logged in from 10.0.0.7".to_string(),
        "jane@example.com".to_string(),
        "Jane.Doe@Example.org".to_string(),
        "call 555-1234 or 555-9876 after 5pm".to_string(),
        "the quick brown fox jumps over the lazy dog".to_string(),
        "ERROR: disk quota exceeded on /var/lib/multifora".to_string(),
        "warning: retrying request 3 of 5".to_string(),
        "I like bananas and cherries more than durians".to_string(),
        "a foo walks into a bar".to_string(),
        "status=ok latency_ms=12 region=eu-west-1".to_string(),
        "haystack without the thing we are looking for at all".to_string(),
    ];
    subjects.push("lorem ipsum dolor sit amet ".repeat(7));
    subjects
}

fn long_subject() -> String {
    let mut text = String::new();
    for i in 0..120 {
        text.push_str(&format!(
            "line {i}: the service reported latency of {} ms while handling request \
             {i} for tenant {}; ",
            i * 7 % 300,
            i % 13
        ));
    }
    text.push_str("finally foo met bar, needle found, ERROR status 555-0000 cherry");
    text
}

fn bench(c: &mut Criterion) {
    let shorts = short_subjects();
    let long = long_subject();
    for &(name, pattern, options) in PATTERNS {
        let ours = regex::Regex::new(pattern, options).expect("ours compiles");
        let rust = rust_regex::Regex::new(pattern).expect("regex crate compiles");
        let pcre = pcre2::bytes::RegexBuilder::new()
            .utf(true)
            .build(pattern)
            .expect("pcre2 compiles");
        let pcre_jit = pcre2::bytes::RegexBuilder::new()
            .utf(true)
            .jit_if_available(true)
            .build(pattern)
            .expect("pcre2 jit compiles");
        for (set, subjects) in [("short", shorts.clone()), ("long", vec![long.clone()])] {
            let mut group = c.benchmark_group(format!("{name}/{set}"));
            group.bench_function("ours", |b| {
                b.iter(|| {
                    subjects
                        .iter()
                        .filter(|s| ours.is_match(black_box(s)).unwrap_or(false))
                        .count()
                })
            });
            group.bench_function("regex", |b| {
                b.iter(|| {
                    subjects
                        .iter()
                        .filter(|s| rust.is_match(black_box(s)))
                        .count()
                })
            });
            group.bench_function("pcre2", |b| {
                b.iter(|| {
                    subjects
                        .iter()
                        .filter(|s| pcre.is_match(black_box(s.as_bytes())).unwrap_or(false))
                        .count()
                })
            });
            group.bench_function("pcre2_jit", |b| {
                b.iter(|| {
                    subjects
                        .iter()
                        .filter(|s| pcre_jit.is_match(black_box(s.as_bytes())).unwrap_or(false))
                        .count()
                })
            });
            group.finish();
        }
    }
}

criterion_group! {
    name = benches;
    config = Criterion::default()
        .sample_size(20)
        .warm_up_time(std::time::Duration::from_millis(300))
        .measurement_time(std::time::Duration::from_millis(800));
    targets = bench
}
criterion_main!(benches);
