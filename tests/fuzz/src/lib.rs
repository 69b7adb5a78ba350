//! Fuzz targets for every decoder of outside bytes, and the driver that runs them.
//!
//! The toolchain here is stable Rust only, so instead of libFuzzer this crate
//! carries a small mutational fuzzer: it starts from each target's seed inputs,
//! applies random byte-level mutations (flips, insertions, deletions, splices,
//! interesting integers) from a seeded PRNG, and calls the target under
//! `catch_unwind`. A panic is a failure; the seed and the input are printed so
//! `cargo xtask fuzz <target> --seed S` replays it. Targets are registered in one
//! list, [`targets::TARGETS`], and `cargo test -p mfdb-fuzz` runs each in smoke mode.

pub mod driver;
pub mod sasl_target;
pub mod storage_targets;
pub mod targets;
