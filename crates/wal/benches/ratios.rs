//! Benchmarks: placeholder until the ratio harness lands.
fn main() {}
