//! Hand-written cases: each line is a pattern, options, subject and the expected match span, checked against PCRE2 too.

use crate::oracle::{Outcome, our_outcome, pcre2_outcome, pcre2_outcome_groups, pcre2_regex};
use regex::{Regex, RegexError};

/// Checks our leftmost match span, and that PCRE2 agrees with it.
fn check(pattern: &str, options: &str, subject: &str, expected: Option<(usize, usize)>) {
    let re = Regex::new(pattern, options).unwrap_or_else(|e| panic!("{pattern:?}: {e}"));
    let found = re
        .find(subject)
        .expect("no step limit here")
        .map(|m| (m.start, m.end));
    assert_eq!(found, expected, "{pattern:?} /{options} on {subject:?}");
    let oracle = pcre2_regex(pattern, options);
    let groups = usize::MAX;
    let theirs = pcre2_outcome_groups(oracle.as_ref(), subject, groups);
    let mine = our_outcome(Some(&re), subject);
    assert_eq!(
        mine, theirs,
        "PCRE2 disagrees: {pattern:?} /{options} on {subject:?}"
    );
}

/// Checks that the pattern fails to compile with a message containing `needle`, like PCRE2.
fn check_error(pattern: &str, needle: &str) {
    let err = Regex::new(pattern, "").expect_err(pattern).to_string();
    assert!(err.contains(needle), "{pattern:?}: {err}");
    assert_eq!(
        pcre2_outcome(pcre2_regex(pattern, "").as_ref(), ""),
        Outcome::CompileError,
        "PCRE2 accepts {pattern:?}"
    );
}

#[test]
fn literals_and_classes() {
    check("abc", "", "xxabcxx", Some((2, 5)));
    check("abc", "", "ab", None);
    check("a.c", "", "a\nc abc", Some((4, 7)));
    check("a.c", "s", "a\nc", Some((0, 3)));
    check("[a-c]+", "", "xxbcay", Some((2, 5)));
    check("[^a-c]+", "", "abxyc", Some((2, 4)));
    check("[]a]+", "", "x]a]", Some((1, 4)));
    check("[a-]+", "", "x-a-", Some((1, 4)));
    check("[[:digit:][:upper:]]+", "", "abC12d", Some((2, 5)));
    check("[[:^alpha:]]+", "", "ab12c", Some((2, 4)));
    check(r"\d{3}-\d{4}", "", "call 555-1234 now", Some((5, 13)));
    check(r"\w+\s\W", "", "hi there !", Some((3, 10)));
    check(r"[\d.]+", "", "v1.2.3", Some((1, 6)));
    check(r"\x41\x{263A}\101", "", "A\u{263A}A", Some((0, 5)));
    check(r"\Qa.b\E+", "", "a.bbb", Some((0, 5)));
    check(r"é+", "", "caféé", Some((3, 7)));
    check(r"[é-ë]", "", "xê", Some((1, 3)));
}

#[test]
fn caseless() {
    check("abc", "i", "xABC", Some((1, 4)));
    check("(?i)straße", "", "STRAßE", Some((0, 7)));
    check("[a-z]+", "i", "Hello", Some((0, 5)));
    check("[^a-z]", "i", "Hello1", Some((5, 6)));
    check("k", "i", "\u{212A}", Some((0, 3)));
    check("σ", "i", "Σ", Some((0, 2)));
    check("a(?i)b|c", "", "C", Some((0, 1)));
    check("a(?i:b)c", "", "aBc aBC", Some((0, 3)));
    check(r"(a)\1", "i", "aA", Some((0, 2)));
}

#[test]
fn anchors_and_boundaries() {
    check("^abc", "", "abc", Some((0, 3)));
    check("^abc", "", "xabc", None);
    check("^abc", "m", "x\nabc", Some((2, 5)));
    check("abc$", "", "abc\n", Some((0, 3)));
    check("abc$", "", "abc\nx", None);
    check("abc$", "m", "abc\nx", Some((0, 3)));
    check(r"^", "m", "a\n", Some((0, 0)));
    check(r"\Aab\z", "", "ab", Some((0, 2)));
    check(r"ab\Z", "", "ab\n", Some((0, 2)));
    check(r"\bfoo\b", "", "a foo.", Some((2, 5)));
    check(r"\Boo\B", "", "foo boox", Some((5, 7)));
    check(r"x*", "", "abc", Some((0, 0)));
}

#[test]
fn groups_alternation_quantifiers() {
    check("(a|ab)(c|bcd)(d*)", "", "abcd", Some((0, 4)));
    check("a+?b", "", "aaab", Some((0, 4)));
    check("a{2,3}", "", "aaaa", Some((0, 3)));
    check("a{2,3}?", "", "aaaa", Some((0, 2)));
    check("a{,2}b", "", "aaab", Some((1, 4)));
    check("(?:a{2}){3}", "", "aaaaaaa", Some((0, 6)));
    check("x{", "", "x{", Some((0, 2)));
    check(
        "(?<year>\\d{4})-(?P<m>\\d\\d)",
        "",
        "on 2024-05",
        Some((3, 10)),
    );
    check("(?:ab)+", "", "ababa", Some((0, 4)));
    check("(a*)*b", "", "aab", Some((0, 3)));
    check("(a|)*b", "", "b", Some((0, 1)));
    check("a b # comment\n c", "x", "abc", Some((0, 3)));
    check("(?#note)ab", "", "ab", Some((0, 2)));
    check("(?n)(a)(?<x>b)", "", "ab", Some((0, 2)));
    check("(?U)a+", "", "aaa", Some((0, 1)));
}

#[test]
fn backtracking_constructs() {
    check(r"(a+)\1", "", "xaaaa", Some((1, 5)));
    check(r"(?<q>['\x22]).*?\k<q>", "", "say 'hi' now", Some((4, 8)));
    check(r"foo(?=bar)", "", "foobaz foobar", Some((7, 10)));
    check(r"foo(?!bar)", "", "foobar foobaz", Some((7, 10)));
    check(r"(?<=\$)\d+", "", "cost $42", Some((6, 8)));
    check(r"(?<!\$)\b\d+", "", "$42 17", Some((4, 6)));
    check(r"(?<=ab|c)x", "", "cx abx", Some((1, 2)));
    check(r"(?>a+)b", "", "aaab", Some((0, 4)));
    check(r"a++a", "", "aaaa", None);
    check(r"a*+b", "", "aab", Some((0, 3)));
    check(r"\R", "", "a\r\nb", Some((1, 3)));
    check(r"(a)|\1b", "", "b", None);
}

#[test]
fn syntax_errors_match_pcre2() {
    check_error("(abc", "missing closing parenthesis at offset 4");
    check_error("abc)", "unmatched closing parenthesis at offset 3");
    check_error("[abc", "missing terminating ] for character class");
    check_error(
        "*a",
        "quantifier does not follow a repeatable item at offset 0",
    );
    check_error("a{3,2}", "numbers out of order");
    check_error("a{70000}", "number too big");
    check_error("[z-a]", "range out of order");
    check_error(r"(a)\2", "reference to non-existent subpattern");
    check_error(r"\k<nope>", "reference to non-existent subpattern");
    check_error(r"(?<=a+)b", "lookbehind");
    check_error("a\\", "\\ at end of pattern");
    check_error(r"\i", "unrecognized character follows \\");
    check_error("(?<n>a)(?<n>b)", "same name");
    check_error("[[:foo:]]", "unknown POSIX class name");
}

#[test]
fn options_are_validated() {
    assert_eq!(
        Regex::new("a", "q").unwrap_err(),
        RegexError::UnknownOption('q')
    );
    assert!(Regex::new("a", "imsxu").is_ok());
}

#[test]
fn captures_and_names() {
    let re = Regex::new(r"(?<k>\w+)=(\w*)(x)?", "").unwrap();
    let caps = re.captures("  key=val").unwrap().unwrap();
    assert_eq!(caps.len(), 4);
    assert_eq!(caps.name("k").map(|m| m.range()), Some(2..5));
    assert_eq!(caps.get(2).map(|m| m.range()), Some(6..9));
    assert_eq!(caps.get(3), None);
}

#[test]
fn literal_prefix_for_the_planner() {
    let prefix = |p: &str, o: &str| {
        Regex::new(p, o)
            .unwrap()
            .literal_prefix()
            .map(str::to_string)
    };
    assert_eq!(prefix("^abc", ""), Some("abc".into()));
    assert_eq!(prefix(r"^abc\d+", ""), Some("abc".into()));
    assert_eq!(prefix(r"\Aab?c", ""), Some("a".into()));
    assert_eq!(prefix("^(ab)+c", ""), Some("ab".into()));
    assert_eq!(prefix("^abc", "m"), None);
    assert_eq!(prefix("^abc", "i"), None);
    assert_eq!(prefix("abc", ""), None);
    assert_eq!(prefix("^a|^b", ""), None);
    assert!(Regex::new("^a|^b", "").unwrap().is_anchored_start());
    assert!(!Regex::new("^a|b", "").unwrap().is_anchored_start());
}

#[test]
fn regex_is_shareable_between_threads() {
    fn assert_send_sync<T: Send + Sync>() {}
    assert_send_sync::<Regex>();
    let re = std::sync::Arc::new(Regex::new(r"\d+", "").unwrap());
    let handles: Vec<_> = (0..4)
        .map(|i| {
            let re = re.clone();
            std::thread::spawn(move || re.is_match(&format!("x{i}")).unwrap())
        })
        .collect();
    for h in handles {
        assert!(h.join().unwrap());
    }
}

/// Cases the differential corpus found, each with the bug it caught.
#[test]
fn regressions_from_the_differential_corpus() {
    // An empty iteration ends a loop (PCRE), so `c?` matching empty wins over `a`.
    check("(?<n0>c?|a)+", "m", "caAabé", Some((0, 1)));
    check("(|[[:alpha:]]?)*a", "", "BaaBa", Some((0, 2)));
    check(r"(?:\D*?| )+b", "im", "AÉabbA", Some((0, 5)));
    // Lookbehind alternatives run in order, each from its farthest start.
    check(
        r"\w(?<=[a-c]a|[É]?(|\B-?[[:alpha:]]){,1})\z",
        "m",
        "Bbc",
        Some((2, 3)),
    );
    // A failed negative lookahead leaves no captures behind.
    check(
        r"([b-]{1,2}(?!\1a|(c{,1}?\2?)(?i:\2)?+)*(?:.(?:bAé?)a)?)",
        "i",
        "bca1abÉ",
        Some((0, 1)),
    );
    // A backreference inside a repeated group sees the previous iteration.
    check(r"([b-]\1*){2}.++", "is", "ÉB-BBbÉÉ-", Some((2, 12)));
    // x mode skips whitespace before a lazy or possessive suffix.
    check("aA+ ?é", "x", "aAAé", Some((0, 5)));
}

/// `captures_at` searches from a start offset but sees the text before it, as
/// PCRE2's start offset does (MongoDB's `$regexFindAll` walks a subject so).
#[test]
fn captures_at_sees_the_text_before_the_start() {
    let span = |pattern: &str, options: &str, subject: &str, start: usize| {
        Regex::new(pattern, options)
            .expect("compiles")
            .captures_at(subject, start)
            .expect("runs")
            .and_then(|c| c.get(0))
            .map(|m| m.range())
    };
    assert_eq!(span("^a", "", "aa", 1), None);
    assert_eq!(span("^a", "m", "a\na", 1), Some(2..3));
    assert_eq!(span("\\Aa", "", "aa", 1), None);
    assert_eq!(span("\\bb", "", "ab b", 1), Some(3..4));
    assert_eq!(span("(?<=a)b", "", "ab", 1), Some(1..2));
    assert_eq!(span("(a)\\1", "", "aaaa", 1), Some(1..3));
    assert_eq!(span("abc", "", "abcabc", 1), Some(3..6));
    assert_eq!(span("x*", "", "ab", 2), Some(2..2));
    assert_eq!(span("a", "", "ab", 3), None);
    assert_eq!(span("a", "", "é", 1), None);
}
