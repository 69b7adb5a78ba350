//! The integration test binary of the regex crate: hand-written cases, the PCRE2 differential corpus, pathological patterns.

mod cases;
mod differential;
mod oracle;
mod pathological;
