//! PCRE2 (through the `pcre2` crate, UTF mode, no UCP, no JIT) as the reference implementation.

use regex::{Flags, Regex, RegexError};

/// What one engine says about one pattern and subject.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Outcome {
    /// The pattern does not compile.
    CompileError,
    /// The pattern compiles; the match, if any, with every group.
    Matched(Option<Vec<Option<(usize, usize)>>>),
    /// Matching gave up (our step budget, PCRE2's match limit).
    GaveUp,
}

/// Our flags for MongoDB option letters.
pub fn flags(options: &str) -> Flags {
    Flags::from_options(options).expect("test options are valid")
}

/// PCRE2 compiled in UTF mode with the same options, or `None` on a compile error.
pub fn pcre2_regex(pattern: &str, options: &str) -> Option<pcre2::bytes::Regex> {
    let f = flags(options);
    pcre2::bytes::RegexBuilder::new()
        .utf(true)
        .caseless(f.caseless)
        .multi_line(f.multiline)
        .dotall(f.dotall)
        .extended(f.extended)
        // Auto-possessification and start-of-match optimisations must not
        // change results, but in PCRE2 10.46 they do: `A*(?:a)?+\bA+` on "Ab"
        // and `(?m)([É]$(?>b{2}(?:b-+){1,2}^)+|\1?).` on "AaAÉ" find no match,
        // while the same patterns with the optimisations off match at (0, 1).
        // The oracle runs without them, so it checks the semantics.
        .build(&format!("(*NO_AUTO_POSSESS)(*NO_START_OPT){pattern}"))
        .ok()
}

/// PCRE2's outcome on `subject`.
pub fn pcre2_outcome(re: Option<&pcre2::bytes::Regex>, subject: &str) -> Outcome {
    pcre2_outcome_groups(re, subject, usize::MAX)
}

/// PCRE2's outcome with at most `groups` groups reported.
pub fn pcre2_outcome_groups(
    re: Option<&pcre2::bytes::Regex>,
    subject: &str,
    groups: usize,
) -> Outcome {
    let Some(re) = re else {
        return Outcome::CompileError;
    };
    match re.captures(subject.as_bytes()) {
        Ok(None) => Outcome::Matched(None),
        Ok(Some(caps)) => Outcome::Matched(Some(
            (0..caps.len().min(groups))
                .map(|g| caps.get(g).map(|m| (m.start(), m.end())))
                .collect(),
        )),
        Err(_) => Outcome::GaveUp,
    }
}

/// Our outcome on `subject`; also checks `is_match` and `find` agree with `captures`.
pub fn our_outcome(re: Option<&Regex>, subject: &str) -> Outcome {
    let Some(re) = re else {
        return Outcome::CompileError;
    };
    let caps = match re.captures(subject) {
        Ok(caps) => caps,
        Err(RegexError::StepLimitExceeded { .. }) => return Outcome::GaveUp,
        Err(other) => panic!("unexpected match error {other}"),
    };
    // is_match and find must agree with captures.
    let is_match = re.is_match(subject);
    let find = re.find(subject);
    if let (Ok(is_match), Ok(find)) = (is_match, find) {
        assert_eq!(
            is_match,
            caps.is_some(),
            "is_match vs captures for {:?} on {subject:?}",
            re.as_str()
        );
        assert_eq!(
            find.map(|m| m.range()),
            caps.as_ref().and_then(|c| c.get(0)).map(|m| m.range()),
            "find vs captures for {:?} on {subject:?}",
            re.as_str()
        );
    }
    let groups = re.captures_len();
    Outcome::Matched(caps.map(|caps| {
        (0..groups)
            .map(|g| caps.get(g).map(|m| (m.start, m.end)))
            .collect()
    }))
}

/// Our regex, or `None` on a compile error.
pub fn ours(pattern: &str, options: &str) -> Option<Regex> {
    Regex::with_flags(pattern, flags(options)).ok()
}
