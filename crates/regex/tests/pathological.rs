//! Patterns that make backtracking engines take exponential time: ours finish fast or return the step-limit error.

use regex::{Regex, RegexError};
use std::time::{Duration, Instant};

fn quick<T>(f: impl FnOnce() -> T) -> T {
    let started = Instant::now();
    let out = f();
    assert!(
        started.elapsed() < Duration::from_secs(5),
        "took {:?}",
        started.elapsed()
    );
    out
}

#[test]
fn nested_quantifiers_run_in_linear_time() {
    let subject = "a".repeat(50_000);
    for pattern in [
        "(a*)*b",
        "(a|aa)+$b",
        "(a|a)*c",
        "(x+x+)+y",
        "^(a+)+$b",
        "(.*a){20}b",
    ] {
        let re = Regex::new(pattern, "").unwrap();
        assert!(!quick(|| re.is_match(&subject)).unwrap(), "{pattern}");
    }
    let re = Regex::new("(a|aa)+$", "").unwrap();
    assert_eq!(
        quick(|| re.find(&subject)).unwrap().map(|m| m.range()),
        Some(0..50_000)
    );
}

#[test]
fn exponential_backtracking_hits_the_step_limit() {
    let subject = format!("{}b", "a".repeat(40));
    let re = Regex::new(r"^(a+)+\1$", "").unwrap();
    let result = quick(|| re.is_match(&subject));
    assert!(
        matches!(result, Err(RegexError::StepLimitExceeded { .. })),
        "{result:?}"
    );
    let re = Regex::new(r"(?=(a|aa)+$x)", "").unwrap();
    let result = quick(|| re.is_match(&"a".repeat(60)));
    assert!(
        matches!(result, Err(RegexError::StepLimitExceeded { .. })),
        "{result:?}"
    );
}

#[test]
fn huge_repetition_is_rejected_not_allocated() {
    let result = Regex::new("(a{1000}){1000}", "");
    assert!(
        matches!(result, Err(RegexError::ProgramTooLarge { .. })),
        "{result:?}"
    );
    let deep = format!("{}a{}", "(".repeat(300), ")".repeat(300));
    assert!(matches!(
        Regex::new(&deep, ""),
        Err(RegexError::NestingTooDeep { .. })
    ));
}

#[test]
fn dfa_state_blowup_falls_back_to_the_pike_vm() {
    // (a|b)*a(a|b){12} needs 2^13 DFA states: more than the cache holds.
    let re = Regex::new("(a|b)*a(a|b){12}c", "").unwrap();
    let mut x: u64 = 12345;
    let subject: String = (0..20_000)
        .map(|_| {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            if x.is_multiple_of(2) { 'a' } else { 'b' }
        })
        .collect();
    for _ in 0..5 {
        assert!(!quick(|| re.is_match(&subject)).unwrap());
    }
    let hit = format!("{subject}abbbbbbbbbbbbc");
    assert!(quick(|| re.is_match(&hit)).unwrap());
    assert_eq!(re.find(&hit).unwrap().map(|m| m.end), Some(hit.len()));
}
