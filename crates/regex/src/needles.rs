//! A multi-literal prefilter: finds the next occurrence of any of a few short literals (ASCII letters possibly caseless) by testing two rare bytes of each over fixed-size blocks, in loops the compiler vectorises.
//!
//! Each needle gets a probe: the offsets of its two rarest bytes (by a
//! typical-text frequency rank). A block of [`BLOCK`] candidate start
//! positions is tested at once: for every needle, the subject bytes at the
//! two probe offsets are compared lane by lane without early exit, which
//! compiles to SIMD compares over fixed-size arrays (a portable, safe take on
//! memchr's "packed pair" and Hyperscan's Teddy). Only a block with a hit is
//! looked at position by position, and every candidate is verified against
//! the whole needle, so the probes may report false positives but never miss
//! an occurrence.

/// Candidate start positions tested per block.
const BLOCK: usize = 64;

/// Bytes read per block: a probe offset is below [`NEEDLE_LEN_MAX`].
const WINDOW: usize = BLOCK + NEEDLE_LEN_MAX;
const _: () = assert!(NEEDLE_LEN_MAX.is_power_of_two(), "probe offsets are masked");
const _: () = assert!(BLOCK <= u64::BITS as usize, "a block's hits fit a u64 mask");
const _: () = assert!(BLOCK.is_multiple_of(8), "a block's hits are whole words");

/// Most needles one prefilter tests.
pub(crate) const NEEDLES_MAX: usize = 8;

/// Longest needle kept: longer literals are cut to this many bytes (a prefix
/// of an occurrence is still an occurrence of the prefix).
pub(crate) const NEEDLE_LEN_MAX: usize = 16;

/// One byte of a needle: subject byte `x` matches when `x & mask == value`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct NeedleByte {
    value: u8,
    mask: u8,
}

impl NeedleByte {
    /// Exactly `byte`.
    pub(crate) fn exact(byte: u8) -> NeedleByte {
        NeedleByte {
            value: byte,
            mask: 0xff,
        }
    }

    /// The ASCII letter `letter` in either case (`None` for a non-letter).
    /// Clearing bit 5 maps exactly the two cases of a letter to one value.
    pub(crate) fn caseless(letter: u8) -> Option<NeedleByte> {
        letter.is_ascii_alphabetic().then_some(NeedleByte {
            value: letter & 0xdf,
            mask: 0xdf,
        })
    }

    fn matches(self, byte: u8) -> bool {
        byte & self.mask == self.value
    }

    /// How common the byte is in typical text (higher is more common).
    pub(crate) fn rank(self) -> u32 {
        if self.mask == 0xff {
            rank(self.value)
        } else {
            rank(self.value).max(rank(self.value | 0x20)) + 16
        }
    }
}

/// The two bytes of a needle tested before verifying it.
#[derive(Debug, Clone, Copy)]
struct Probe {
    first: usize,
    second: usize,
    first_byte: NeedleByte,
    second_byte: NeedleByte,
}

impl Probe {
    fn is_exact(&self) -> bool {
        self.first_byte.mask == 0xff && self.second_byte.mask == 0xff
    }

    /// How often a position of typical text passes this probe, 0..=255 (higher is worse):
    /// the product of its bytes' ranks, or the one rank when both probe one position.
    fn score(&self) -> u32 {
        if self.first == self.second {
            self.first_byte.rank()
        } else {
            self.first_byte.rank() * self.second_byte.rank() / 255
        }
    }
}

/// A set of non-empty needles and their probes.
#[derive(Debug, Clone)]
pub(crate) struct Needles {
    needles: Vec<Vec<NeedleByte>>,
    probes: Vec<Probe>,
    /// The shortest needle's length.
    len_min: usize,
}

impl Needles {
    /// The prefilter for `needles`; `None` if there are none, too many, or
    /// one is empty.
    pub(crate) fn new(needles: Vec<Vec<NeedleByte>>) -> Option<Needles> {
        if needles.is_empty() || needles.len() > NEEDLES_MAX || needles.iter().any(Vec::is_empty) {
            return None;
        }
        let needles: Vec<Vec<NeedleByte>> = needles
            .into_iter()
            .map(|mut n| {
                n.truncate(NEEDLE_LEN_MAX);
                n
            })
            .collect();
        let probes: Vec<Probe> = needles.iter().map(|n| probe(n)).collect::<Option<_>>()?;
        let len_min = needles.iter().map(Vec::len).min()?;
        Some(Needles {
            needles,
            probes,
            len_min,
        })
    }

    /// An estimate of how often a position of typical text passes the
    /// probes (higher is worse): the sum over needles of the product of
    /// their probe bytes' ranks, scaled to 0..=255 per needle.
    pub(crate) fn score(&self) -> u32 {
        self.probes.iter().map(Probe::score).sum()
    }

    /// The worst single needle's share of [`Self::score`].
    pub(crate) fn score_max(&self) -> u32 {
        self.probes
            .iter()
            .map(Probe::score)
            .max()
            .unwrap_or(u32::MAX)
    }

    /// The least offset at or after `from` where some needle occurs.
    pub(crate) fn find(&self, haystack: &[u8], from: usize) -> Option<usize> {
        // The probe count is a constant in each scan, so the compiler
        // unrolls the probes and keeps their bytes in vector registers.
        match self.probes.as_slice() {
            [p] if p.first == p.second && self.len_min == 1 => {
                let byte = p.first_byte;
                if byte.mask == 0xff {
                    find_byte(haystack, from, |x| x == byte.value)
                } else {
                    find_byte(haystack, from, |x| byte.matches(x))
                }
            }
            probes if probes.iter().all(Probe::is_exact) => match probes.len() {
                1 => self.pairs::<1, true>(haystack, from),
                2 => self.pairs::<2, true>(haystack, from),
                3 | 4 => self.pairs::<4, true>(haystack, from),
                _ => self.pairs::<NEEDLES_MAX, true>(haystack, from),
            },
            [_] => self.pairs::<1, false>(haystack, from),
            [_, _] => self.pairs::<2, false>(haystack, from),
            [_, _, _] | [_, _, _, _] => self.pairs::<4, false>(haystack, from),
            _ => self.pairs::<NEEDLES_MAX, false>(haystack, from),
        }
    }

    /// Tests blocks of [`BLOCK`] start positions from `from` against `N`
    /// probes (the real ones, the first repeated to fill the array; `EXACT`
    /// when no probe byte is caseless, which saves the masking) and
    /// verifies each position whose probes pass.
    fn pairs<const N: usize, const EXACT: bool>(
        &self,
        haystack: &[u8],
        from: usize,
    ) -> Option<usize> {
        let first = *self.probes.first()?;
        let probes: [Probe; N] =
            std::array::from_fn(|i| self.probes.get(i).copied().unwrap_or(first));
        let mut at = from;
        loop {
            let rest = haystack.get(at..)?;
            let hits = match rest.first_chunk::<WINDOW>() {
                Some(window) if !pairs_any::<N, EXACT>(window, &probes) => 0,
                Some(window) => pairs_hit::<N, EXACT>(window, &probes),
                None if rest.len() < self.len_min => return None,
                None => {
                    // The tail: probe a zero-padded copy. An occurrence
                    // lies inside the haystack, so its probe bytes are
                    // real; the padding can only add candidates, and the
                    // verification reads the haystack itself.
                    let mut padded = [0u8; WINDOW];
                    for (slot, &byte) in padded.iter_mut().zip(rest) {
                        *slot = byte;
                    }
                    if pairs_any::<N, EXACT>(&padded, &probes) {
                        pairs_hit::<N, EXACT>(&padded, &probes)
                    } else {
                        0
                    }
                }
            };
            let mut bits = hits;
            while bits != 0 {
                let candidate = at + bits.trailing_zeros() as usize;
                if self.occurs_at(haystack, candidate) {
                    return Some(candidate);
                }
                bits &= bits - 1;
            }
            at += BLOCK;
        }
    }

    /// Whether some needle occurs at `at`.
    fn occurs_at(&self, haystack: &[u8], at: usize) -> bool {
        let Some(rest) = haystack.get(at..) else {
            return false;
        };
        self.needles.iter().any(|needle| {
            rest.len() >= needle.len()
                && needle
                    .iter()
                    .zip(rest)
                    .all(|(pattern, &byte)| pattern.matches(byte))
        })
    }
}

/// Bytes tested at once by [`find_byte`], in [`BYTE_LANES`]-byte parts.
const BYTE_CHUNK: usize = 64;
const BYTE_LANES: usize = 32;
const _: () = assert!(BYTE_CHUNK.is_multiple_of(BYTE_LANES), "parts tile a chunk");

/// The first offset at or after `from` whose byte passes `hit` (a portable
/// memchr): each chunk is tested without early exit, which vectorises.
fn find_byte(haystack: &[u8], from: usize, hit: impl Fn(u8) -> bool) -> Option<usize> {
    let rest = haystack.get(from..)?;
    let mut chunks = rest.chunks_exact(BYTE_CHUNK);
    let mut base = from;
    for chunk in &mut chunks {
        // Byte lanes OR-ed across the chunk: a vector register each.
        let mut lanes = [0u8; BYTE_LANES];
        for part in chunk.chunks_exact(BYTE_LANES) {
            for (lane, &x) in lanes.iter_mut().zip(part) {
                *lane |= u8::from(hit(x));
            }
        }
        if lanes.iter().fold(0, |any, &lane| any | lane) != 0 {
            return chunk.iter().position(|&x| hit(x)).map(|i| base + i);
        }
        base += BYTE_CHUNK;
    }
    chunks
        .remainder()
        .iter()
        .position(|&x| hit(x))
        .map(|i| base + i)
}

/// Whether some probe's two bytes match for some start among the first
/// [`BLOCK`] offsets of `window`. No early exit, so the lanes vectorise;
/// inlined into the scan loop so that the probe bytes stay in registers.
#[inline(always)]
fn pairs_any<const N: usize, const EXACT: bool>(
    window: &[u8; WINDOW],
    probes: &[Probe; N],
) -> bool {
    let hits = pairs_lanes::<N, EXACT>(window, probes);
    hits.iter().fold(0, |acc, &h| acc | h) != 0
}

/// The starts among the first [`BLOCK`] offsets of `window` where some
/// probe's two bytes match, as a bit mask (bit `i`: offset `i`). Out of
/// line: blocks rarely hit, and inlined, the compiler would start this work
/// before knowing.
#[inline(never)]
fn pairs_hit<const N: usize, const EXACT: bool>(window: &[u8; WINDOW], probes: &[Probe; N]) -> u64 {
    let lanes = pairs_lanes::<N, EXACT>(window, probes);
    let mut mask = 0;
    for (k, word) in lanes.chunks_exact(8).enumerate() {
        let word = word
            .first_chunk::<8>()
            .map_or(u64::MAX, |w| u64::from_le_bytes(*w));
        mask |= gather_bits(word) << (8 * k);
    }
    mask
}

/// The low bits of the eight bytes of `word` (each 0 or 1), byte `i` to
/// bit `i`. The multiplier shifts byte `i` by `56 - 7i` bits, to bit `56 + i`;
/// every other product term lands at a distinct lower bit, so nothing
/// carries into the top byte.
fn gather_bits(word: u64) -> u64 {
    word.wrapping_mul(0x0102_0408_1020_4080) >> 56
}

/// Per start among the first [`BLOCK`] offsets of `window`: 1 if some
/// probe's two bytes match there, else 0.
#[inline(always)]
fn pairs_lanes<const N: usize, const EXACT: bool>(
    window: &[u8; WINDOW],
    probes: &[Probe; N],
) -> [u8; BLOCK] {
    let mut hits = [0u8; BLOCK];
    for probe in probes {
        // Offsets are below NEEDLE_LEN_MAX (needles are cut to it); masking
        // changes nothing but lets the compiler drop the bounds checks.
        let (first_at, second_at) = (
            probe.first & (NEEDLE_LEN_MAX - 1),
            probe.second & (NEEDLE_LEN_MAX - 1),
        );
        let (Some(first), Some(second)) = (
            window
                .get(first_at..)
                .and_then(<[u8]>::first_chunk::<BLOCK>),
            window
                .get(second_at..)
                .and_then(<[u8]>::first_chunk::<BLOCK>),
        ) else {
            return [1; BLOCK];
        };
        let (a, b) = (probe.first_byte, probe.second_byte);
        for ((hit, &x), &y) in hits.iter_mut().zip(first).zip(second) {
            *hit |= if EXACT {
                u8::from(x == a.value) & u8::from(y == b.value)
            } else {
                u8::from(x & a.mask == a.value) & u8::from(y & b.mask == b.value)
            };
        }
    }
    hits
}

/// The probe of a non-empty needle: its rarest byte and, if it has more
/// than one, its second rarest (at another offset).
fn probe(needle: &[NeedleByte]) -> Option<Probe> {
    let rank = |i: usize| needle.get(i).map_or(u32::MAX, |b| b.rank());
    // The earliest of the rarest bytes, then the rarest other byte, the
    // farthest from it on a tie: adjacent bytes are more often found
    // together ("fo" of "foo" in "for").
    let rarest = (0..needle.len()).min_by_key(|&i| (rank(i), i))?;
    let next = (0..needle.len())
        .filter(|&i| i != rarest)
        .min_by_key(|&i| (rank(i), std::cmp::Reverse(i.abs_diff(rarest))))
        .unwrap_or(rarest);
    let (first, second) = (rarest.min(next), rarest.max(next));
    Some(Probe {
        first,
        second,
        first_byte: *needle.get(first)?,
        second_byte: *needle.get(second)?,
    })
}

/// How common `byte` is in typical field values and text, 0 (rare) to 255
/// (a space). Only the order matters; it follows English letter frequency
/// with digits and a little punctuation in between.
fn rank(byte: u8) -> u32 {
    const LOWER_BY_FREQUENCY: &[u8] = b"etaoinsrhldcumfpgwybvkxjqz";
    const PUNCTUATION_COMMON: &[u8] = b".,:;_/=\"'()";
    match byte {
        b' ' => 255,
        b'a'..=b'z' => {
            let place = LOWER_BY_FREQUENCY.iter().position(|&b| b == byte);
            250 - 4 * place.map_or(25, |p| p as u32)
        }
        b'A'..=b'Z' => rank(byte | 0x20) - 110,
        b'0'..=b'9' => 190,
        b'\n' | b'\t' | b'\r' => 140,
        _ if PUNCTUATION_COMMON.contains(&byte) => 120,
        0x21..=0x7e => 80,
        0x80..=0xff => 60,
        _ => 20,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn exact(text: &str) -> Vec<NeedleByte> {
        text.bytes().map(NeedleByte::exact).collect()
    }

    fn caseless(text: &str) -> Vec<NeedleByte> {
        text.bytes()
            .map(|b| NeedleByte::caseless(b).unwrap_or(NeedleByte::exact(b)))
            .collect()
    }

    /// The reference: every offset tried in order.
    fn naive(needles: &[Vec<NeedleByte>], haystack: &[u8], from: usize) -> Option<usize> {
        (from..haystack.len()).find(|&at| {
            needles.iter().any(|n| {
                haystack.len() - at >= n.len()
                    && n.iter().zip(&haystack[at..]).all(|(p, &b)| p.matches(b))
            })
        })
    }

    fn check(needles: Vec<Vec<NeedleByte>>, haystack: &[u8]) {
        let searcher = Needles::new(needles.clone()).expect("needles");
        for from in 0..=haystack.len() + 1 {
            assert_eq!(
                searcher.find(haystack, from),
                naive(&needles, haystack, from),
                "from {from} in {:?}",
                String::from_utf8_lossy(haystack)
            );
        }
    }

    #[test]
    fn finds_every_occurrence_at_every_offset() {
        let mut hay = String::new();
        for i in 0..40 {
            hay.push_str(&"x".repeat(i % 9));
            hay.push_str(["apple", "Banana", "cherry", "-", "ERROR", "érr"][i % 6]);
        }
        check(vec![exact("apple")], hay.as_bytes());
        check(vec![exact("-")], hay.as_bytes());
        check(
            vec![exact("apple"), exact("banana"), exact("cherry")],
            hay.as_bytes(),
        );
        check(vec![caseless("error")], hay.as_bytes());
        check(vec![caseless("banana"), exact("é")], hay.as_bytes());
    }

    #[test]
    fn occurrences_straddling_blocks_and_at_the_end_are_found() {
        // Every start offset around the block size and at the very end.
        for pad in 0..2 * BLOCK + 3 {
            let hay = format!("{}ERROR{}", "e".repeat(pad), "r".repeat(pad % 5));
            check(vec![caseless("error")], hay.as_bytes());
            let tail = format!("{}needle", "n".repeat(pad));
            let searcher = Needles::new(vec![exact("needle")]).expect("needles");
            assert_eq!(searcher.find(tail.as_bytes(), 0), Some(pad), "pad {pad}");
        }
    }

    #[test]
    fn caseless_bytes_match_only_the_two_cases() {
        let searcher = Needles::new(vec![caseless("k")]).expect("needles");
        // 'K' ^ 0x20 is 'k'; '+' (0x2b) and 'K' differ in more than bit 5.
        assert_eq!(searcher.find(b"+{[Kk", 0), Some(3));
        assert_eq!(searcher.find("\u{212a}".as_bytes(), 0), None);
        assert_eq!(NeedleByte::caseless(b'-'), None);
    }

    #[test]
    fn gather_bits_packs_byte_flags() {
        for bits in 0..=255u64 {
            let bytes: [u8; 8] = std::array::from_fn(|i| u8::from(bits >> i & 1 == 1));
            assert_eq!(gather_bits(u64::from_le_bytes(bytes)), bits);
        }
    }

    #[test]
    fn probes_pick_rare_bytes() {
        let searcher = Needles::new(vec![exact("the-end")]).expect("needles");
        let probe = searcher.probes[0];
        assert_eq!(probe.first_byte, NeedleByte::exact(b'-'));
        assert!(Needles::new(vec![]).is_none());
        assert!(Needles::new(vec![exact("")]).is_none());
        assert!(Needles::new(vec![exact("a"); NEEDLES_MAX + 1]).is_none());
    }
}
