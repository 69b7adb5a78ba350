//! `$sample`: `size` documents drawn uniformly from the input without replacement, in
//! random order (MongoDB sorts by a random key and keeps the first `size`); all of them,
//! shuffled, when there are fewer.

use crate::error::QueryError;
use bson::RawBsonRef;
use bson::raw::RawDocumentBuf;
use bson_canonical::compare::elements;

/// Parses `{size: n}`.
pub(crate) fn parse(spec: RawBsonRef<'_>) -> Result<u64, QueryError> {
    let RawBsonRef::Document(spec) = spec else {
        return Err(QueryError::location(
            28745,
            "the $sample stage specification must be an object",
        ));
    };
    let mut size = None;
    for (name, value) in elements(spec) {
        if name != "size" {
            return Err(QueryError::location(
                28748,
                format!("unrecognized option to $sample: {name}"),
            ));
        }
        // MongoDB reads the number as a long: doubles truncate toward zero.
        let n: i64 = match value {
            RawBsonRef::Int32(n) => i64::from(n),
            RawBsonRef::Int64(n) => n,
            RawBsonRef::Double(d) if d.is_nan() => 0,
            #[allow(clippy::cast_possible_truncation)]
            RawBsonRef::Double(d) => d as i64,
            #[allow(clippy::cast_possible_truncation)]
            RawBsonRef::Decimal128(d) => d.to_string().parse::<f64>().map_or(0, |d| d as i64),
            _ => {
                return Err(QueryError::location(
                    28746,
                    "size argument to $sample must be a number",
                ));
            }
        };
        let Ok(n) = u64::try_from(n) else {
            return Err(QueryError::location(
                28747,
                "size argument to $sample must not be negative",
            ));
        };
        size = Some(n);
    }
    size.ok_or_else(|| QueryError::location(28749, "$sample stage must specify a size"))
}

/// A small generator (SplitMix64) seeded from the standard library's per-process random
/// keys: a fresh seed for every run of the stage.
struct Draws(u64);

impl Draws {
    fn new() -> Draws {
        use std::hash::{BuildHasher, Hasher};
        let mut hasher = std::collections::hash_map::RandomState::new().build_hasher();
        hasher.write_u8(0x5a);
        Draws(hasher.finish())
    }

    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }

    /// A uniform integer in `0..bound` (`bound > 0`), without modulo bias.
    fn below(&mut self, bound: u64) -> u64 {
        let zone = u64::MAX - u64::MAX % bound;
        loop {
            let x = self.next();
            if x < zone {
                return x % bound;
            }
        }
    }
}

/// Draws `size` of `input` (reservoir sampling, so only `size` documents are held), then
/// shuffles them.
pub(crate) fn run(
    size: u64,
    input: impl Iterator<Item = Result<RawDocumentBuf, QueryError>>,
) -> Result<Vec<RawDocumentBuf>, QueryError> {
    let mut draws = Draws::new();
    let keep = usize::try_from(size).unwrap_or(usize::MAX);
    let mut kept: Vec<RawDocumentBuf> = Vec::new();
    let mut seen: u64 = 0;
    for doc in input {
        let doc = doc?;
        seen += 1;
        if kept.len() < keep {
            kept.push(doc);
        } else if keep > 0 {
            let slot = draws.below(seen);
            if let Ok(slot) = usize::try_from(slot)
                && slot < keep
            {
                kept[slot] = doc;
            }
        }
    }
    for i in (1..kept.len()).rev() {
        let j = usize::try_from(draws.below(i as u64 + 1)).unwrap_or(0);
        kept.swap(i, j);
    }
    Ok(kept)
}
