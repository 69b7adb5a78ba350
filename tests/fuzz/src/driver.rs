//! A seeded mutational fuzzing loop over a [`Target`].

use crate::targets::Target;
use std::panic::{AssertUnwindSafe, catch_unwind};

/// A small, fast, seedable PRNG (xorshift64*), so runs replay exactly.
pub struct Rng(u64);

impl Rng {
    /// A generator from a seed (zero is remapped, xorshift cannot leave it).
    pub fn new(seed: u64) -> Self {
        Rng(seed.max(1))
    }

    /// The next 64 random bits.
    pub fn next_u64(&mut self) -> u64 {
        let mut x = self.0;
        x ^= x >> 12;
        x ^= x << 25;
        x ^= x >> 27;
        self.0 = x;
        x.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }

    /// A value in `0..bound` (`bound` must be non-zero).
    pub fn below(&mut self, bound: usize) -> usize {
        (self.next_u64() % bound as u64) as usize
    }
}

const INTERESTING: &[u32] = &[
    0,
    1,
    0x7f,
    0x80,
    0xff,
    0x7fff,
    0xffff,
    0x7fff_ffff,
    0xffff_ffff,
    16,
];

/// Applies one to four random mutations to `input`.
pub fn mutate(rng: &mut Rng, input: &mut Vec<u8>, corpus: &[Vec<u8>]) {
    for _ in 0..=rng.below(4) {
        let len = input.len();
        match rng.below(7) {
            0 if len > 0 => {
                let at = rng.below(len);
                input[at] ^= 1 << rng.below(8);
            }
            1 if len > 0 => {
                let at = rng.below(len);
                input[at] = rng.next_u64() as u8;
            }
            2 => {
                let at = rng.below(len + 1);
                input.insert(at, rng.next_u64() as u8);
            }
            3 if len > 0 => {
                let at = rng.below(len);
                let end = (at + 1 + rng.below(16)).min(len);
                input.drain(at..end);
            }
            4 if len >= 4 => {
                let at = rng.below(len - 3);
                let value = INTERESTING[rng.below(INTERESTING.len())];
                input[at..at + 4].copy_from_slice(&value.to_le_bytes());
            }
            5 if !corpus.is_empty() => {
                let other = &corpus[rng.below(corpus.len())];
                if !other.is_empty() {
                    let from = rng.below(other.len());
                    let end = (from + 1 + rng.below(64)).min(other.len());
                    let at = rng.below(len + 1);
                    input.splice(at..at, other[from..end].iter().copied());
                }
            }
            _ if len > 0 => {
                input.truncate(rng.below(len));
            }
            _ => input.push(rng.next_u64() as u8),
        }
    }
}

/// Runs `target` for `iterations` mutated inputs from `seed`.
///
/// Returns the failing input when the target panics.
pub fn fuzz(target: &Target, seed: u64, iterations: u64) -> Result<(), Vec<u8>> {
    let mut rng = Rng::new(seed);
    let mut corpus = (target.seeds)();
    corpus.push(Vec::new());
    for input in &corpus {
        run_one(target, input)?;
    }
    for _ in 0..iterations {
        let mut input = corpus[rng.below(corpus.len())].clone();
        mutate(&mut rng, &mut input, &corpus);
        run_one(target, &input)?;
        // Keep a few mutants so mutations compound, bounded so memory stays flat.
        if rng.below(16) == 0 && corpus.len() < 256 {
            corpus.push(input);
        }
    }
    Ok(())
}

fn run_one(target: &Target, input: &[u8]) -> Result<(), Vec<u8>> {
    match catch_unwind(AssertUnwindSafe(|| (target.run)(input))) {
        Ok(()) => Ok(()),
        Err(_) => Err(input.to_vec()),
    }
}
