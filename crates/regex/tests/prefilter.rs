//! `is_match` fast paths against PCRE2 on long subjects: literal needles (caseless, alternations, inner literals with a bounded reach back), stripped optional ends, multi-byte text, matches across scan-block edges and at the very end.
//!
//! The differential corpus uses subjects of under ten characters, which
//! never reach the block scans of the needle prefilter; here every
//! candidate piece is planted at every offset of a long, varied filler.

use crate::oracle::{flags, pcre2_regex};
use regex::Regex;

/// (pattern, options, pieces to plant: matches and near misses).
const CASES: &[(&str, &str, &[&str])] = &[
    (
        "(?i)ERROR",
        "",
        &["ERROR", "error", "ErRoR", "ERRO", "EROR"],
    ),
    ("error", "i", &["ERROR", "eRROR", "errr", "érror"]),
    (
        r"\d{3}-\d{4}",
        "",
        &["555-1234", "55-1234", "555-123", "5555-12345", "-"],
    ),
    (r"\d{3}-é\d", "", &["123-é4", "123-e4", "12-é4", "123-é"]),
    (
        r".{2}-x",
        "",
        &["éé-x", "€€-x", "😀😀-x", "a-x", "\n.-x", "ab-y"],
    ),
    (".{2}-x", "s", &["\n\n-x", "a\n-x", "-x"]),
    (
        "apple|banana|cherry|durian",
        "",
        &["apple", "banan", "cherry", "durian", "appl"],
    ),
    (
        "(?:apple|banana)s?\\b",
        "",
        &["apples", "bananas!", "applesauce", "banana"],
    ),
    (
        ".*foo.*bar",
        "",
        &["foo bar", "foo\nbar", "fo bar", "foobar", "foo"],
    ),
    (".*foo.*bar", "s", &["foo\nbar", "bar foo"]),
    ("foo.*bar$", "m", &["foo bar\n", "foo bar baz", "foobar"]),
    ("^foo.*bar", "m", &["\nfoo bar", "foo bar", " foo bar"]),
    (
        r"\bstatus\b",
        "",
        &["status", "statuses", "_status", " status!", "ſtatus"],
    ),
    (
        r"(?i)\bstatus\b",
        "",
        &["STATUS", "ſtatus", "statuſ", "Status_"],
    ),
    ("(?m)^status$", "", &["\nstatus\n", "status", "xstatus\n"]),
    (
        r"(?i)kelvin\d",
        "",
        &["KELVIN1", "\u{212a}elvin2", "kelvin"],
    ),
    ("é+x|ÉY", "", &["ééx", "ÉY", "éY", "Éx"]),
    ("(?i)é-x", "", &["É-X", "é-x", "e-x"]),
    (r"a.{0,3}-b", "", &["a-b", "a€€€-b", "a1234-b", "a\n-b"]),
    (
        r"[a-z]+@[a-z]+\.com",
        "",
        &["jane@example.com", "@example.com", "a@b.co"],
    ),
    ("needle", "", &["needle", "needl", "NEEDLE"]),
    ("x*-+y*", "", &["-", "x", "y"]),
];

/// Filler text: ASCII words, digits, punctuation, newlines and multi-byte
/// characters (two, three and four bytes) in a fixed pseudo-random order.
fn filler(len: usize, seed: u64) -> String {
    const WORDS: &[&str] = &[
        "the ", "service ", "for ", "tenant ", "12 ", "é", "€", "😀", "\n", "r", "s", "-", "foo ",
        "status", "st", "ERR", "app", "ba", "\u{212a}", "ſ", "_", ". ",
    ];
    let mut state = seed | 1;
    let mut out = String::new();
    while out.len() < len {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        out.push_str(WORDS[(state % WORDS.len() as u64) as usize]);
    }
    out
}

#[test]
fn is_match_fast_paths_agree_with_pcre2_on_long_subjects() {
    let mut checked = 0usize;
    for &(pattern, options, pieces) in CASES {
        let ours = Regex::with_flags(pattern, flags(options)).expect("ours compiles");
        let theirs = pcre2_regex(pattern, options).expect("pcre2 compiles");
        let mut subjects = vec![String::new()];
        for (k, piece) in pieces.iter().enumerate() {
            subjects.push(piece.to_string());
            for offset in 0..80 {
                let head = filler(offset, 7 + k as u64 * 31 + offset as u64);
                let tail = filler(offset % 50, 99 + offset as u64);
                // The piece at the very end, and followed by more text.
                subjects.push(format!("{head}{piece}"));
                subjects.push(format!("{head}{piece}{tail}"));
            }
        }
        for subject in &subjects {
            let expected = theirs.is_match(subject.as_bytes()).expect("pcre2 matches");
            let actual = ours.is_match(subject).expect("ours matches");
            assert_eq!(
                actual, expected,
                "/{pattern}/{options} on {subject:?}: ours {actual}, pcre2 {expected}"
            );
            checked += 1;
        }
    }
    assert!(checked > 10_000, "{checked} subjects checked");
}

#[test]
fn is_match_agrees_with_find_on_bench_like_text() {
    // The bench's long subject shape: the matches sit at the very end.
    let mut text = String::new();
    for i in 0..120 {
        text.push_str(&format!(
            "line {i}: the service reported latency of {} ms while handling request {i} for tenant {}; ",
            i * 7 % 300,
            i % 13
        ));
    }
    let tail = "finally foo met bar, needle found, ERROR status 555-0000 cherry";
    for pattern in [
        "(?i)ERROR",
        r"\d{3}-\d{4}",
        "apple|banana|cherry|durian",
        ".*foo.*bar",
        r"\bstatus\b",
    ] {
        let re = Regex::new(pattern, "").expect("compiles");
        assert!(!re.is_match(&text).unwrap(), "{pattern} without the tail");
        let full = format!("{text}{tail}");
        assert!(re.is_match(&full).unwrap(), "{pattern} with the tail");
        assert!(re.find(&full).unwrap().is_some(), "{pattern} find");
    }
}
