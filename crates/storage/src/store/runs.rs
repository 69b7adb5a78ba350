//! Sorted runs of index entries for builds: each scanning thread appends its entries to one
//! flat buffer (no allocation per entry), sorts its run on its own thread, and the build
//! merges the runs into the order the bulk load takes.
//!
//! Invariants:
//! - A run's `spans` name disjoint byte ranges of its `bytes`, one per entry, appended
//!   in any order; after [`Run::sort`] they are in ascending byte order of the entries
//!   they name (duplicates kept).
//! - [`merged`] yields every entry of every run exactly once, in ascending byte order,
//!   whatever the split of the entries between runs.

/// One entry of a run: where its bytes are and their first 16 bytes (zero-padded,
/// big-endian) so most comparisons follow no pointer.
#[derive(Debug, Clone, Copy)]
struct Span {
    prefix: u128,
    start: usize,
    len: usize,
}

/// The entries one scanning thread generated.
#[derive(Debug, Default)]
pub struct Run {
    bytes: Vec<u8>,
    spans: Vec<Span>,
}

impl Run {
    /// The buffer to append an entry's bytes to; call [`Run::seal`] after each entry.
    pub fn buffer(&mut self) -> &mut Vec<u8> {
        &mut self.bytes
    }

    /// Records the bytes appended since the previous entry (from `start`) as one entry.
    pub fn seal(&mut self, start: usize) {
        let len = self.bytes.len() - start;
        let entry = &self.bytes[start..];
        let mut head = [0u8; 16];
        let take = entry.len().min(16);
        head[..take].copy_from_slice(&entry[..take]);
        self.spans.push(Span {
            prefix: u128::from_be_bytes(head),
            start,
            len,
        });
    }

    /// Adds `entry` (copied).
    pub fn push(&mut self, entry: &[u8]) {
        let start = self.bytes.len();
        self.bytes.extend_from_slice(entry);
        self.seal(start);
    }

    /// How many entries the run holds.
    pub fn len(&self) -> usize {
        self.spans.len()
    }

    fn entry(&self, span: &Span) -> &[u8] {
        &self.bytes[span.start..span.start + span.len]
    }

    /// Puts the entries in ascending byte order. Prefixes decide most comparisons; where
    /// they tie (equal first 16 bytes, or zero padding: `ab` against `ab\0`) the whole
    /// entries do.
    pub fn sort(&mut self) {
        let mut spans = std::mem::take(&mut self.spans);
        spans.sort_unstable_by(|a, b| {
            a.prefix
                .cmp(&b.prefix)
                .then_with(|| self.entry(a).cmp(self.entry(b)))
        });
        self.spans = spans;
    }
}

/// Every entry of the sorted `runs`, in ascending byte order.
pub fn merged(runs: &[Run]) -> Vec<&[u8]> {
    let mut out = Vec::with_capacity(runs.iter().map(Run::len).sum());
    let mut next = vec![0usize; runs.len()];
    loop {
        let mut best: Option<(usize, &[u8])> = None;
        for (i, run) in runs.iter().enumerate() {
            if let Some(span) = run.spans.get(next[i]) {
                let candidate = run.entry(span);
                if best.is_none_or(|(_, current)| candidate < current) {
                    best = Some((i, candidate));
                }
            }
        }
        let Some((i, entry)) = best else {
            return out;
        };
        out.push(entry);
        next[i] += 1;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    proptest! {
        /// Runs split any way, sorted and merged, give the entries a plain sort gives.
        #[test]
        fn merged_runs_equal_one_sort(
            entries in proptest::collection::vec(
                (proptest::collection::vec(0u8..4, 0..24), 0usize..3), 0..200),
        ) {
            let mut runs: Vec<Run> = (0..3).map(|_| Run::default()).collect();
            for (entry, part) in &entries {
                runs[*part].push(entry);
            }
            for run in &mut runs {
                run.sort();
            }
            let got: Vec<Vec<u8>> = merged(&runs).into_iter().map(<[u8]>::to_vec).collect();
            let mut want: Vec<Vec<u8>> = entries.into_iter().map(|(e, _)| e).collect();
            want.sort();
            prop_assert_eq!(got, want);
        }
    }

    #[test]
    fn zero_padding_ties_are_broken_by_the_whole_entry() {
        let mut run = Run::default();
        for entry in [&b"ab\0"[..], b"ab", b"ab\0\0", b"a"] {
            run.push(entry);
        }
        run.sort();
        let got: Vec<&[u8]> = merged(std::slice::from_ref(&run));
        assert_eq!(got, vec![&b"a"[..], b"ab", b"ab\0", b"ab\0\0"]);
    }
}
