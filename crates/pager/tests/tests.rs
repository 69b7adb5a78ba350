//! The pager's integration tests: one binary, one module per area.

mod support;

mod crash;
mod pages;
