//! The integration tests of `query`: one binary made of modules.

mod differential;
mod expr_cases;
mod filter_cases;
mod projection_cases;
mod sort_cases;
mod support;
