//! Smoke mode: every registered fuzz target survives a short fixed-seed run.

use mfdb_fuzz::driver::fuzz;
use mfdb_fuzz::targets::TARGETS;

#[test]
fn every_target_survives_a_short_run() {
    for target in TARGETS {
        if let Err(input) = fuzz(target, 0x5eed, 3_000) {
            panic!("fuzz target {} panicked on {input:02x?}", target.name);
        }
    }
}
