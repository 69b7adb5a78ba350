//! The integration test binary of the regex crate: hand-written cases, the PCRE2 differential corpus, pathological patterns, `is_match` fast paths on long subjects.

mod cases;
mod differential;
mod oracle;
mod pathological;
mod prefilter;
