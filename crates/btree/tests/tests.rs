//! The B+tree's integration tests: one binary, one module per area.

#[path = "../../pager/tests/support/mod.rs"]
mod support;

mod common;
mod crash;
mod fixture;
mod held;
mod model;
mod stress;
mod tree;
