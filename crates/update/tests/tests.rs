//! The integration tests of `update`: one binary made of modules.

mod cases;
mod decimal_cases;
mod pipeline_cases;
mod property;
mod storage_cases;
mod support;
