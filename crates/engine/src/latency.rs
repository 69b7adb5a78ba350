//! Operation latencies as mongod keeps them for `$collStats`' `latencyStats` and
//! serverStatus' `opLatencies`: per kind (reads, writes, commands) the total microseconds,
//! the operation count and a histogram over mongod's fixed buckets
//! (`OperationLatencyHistogram`: `[0, 2)`, then powers of two to 1024 µs, half steps from
//! 2048 µs to about 1.5 s, powers of two again to 2^40 µs).
//!
//! Invariants:
//! - A histogram's bucket counts add up to its `ops`, and every latency lands in exactly
//!   one bucket: the one with the largest lower bound not above it.
//! - Only buckets with a count are reported, in bucket order, as mongod omits empty ones.

use bson::{Bson, Document, RawDocumentBuf, doc, rawdoc};

/// mongod's bucket lower bounds, in microseconds.
const LOWER_BOUNDS: [u64; 51] = [
    0,
    2,
    4,
    8,
    16,
    32,
    64,
    128,
    256,
    512,
    1024,
    2048,
    3072,
    4096,
    6144,
    8192,
    12_288,
    16_384,
    24_576,
    32_768,
    49_152,
    65_536,
    98_304,
    131_072,
    196_608,
    262_144,
    393_216,
    524_288,
    786_432,
    1_048_576,
    1_572_864,
    1 << 21,
    1 << 22,
    1 << 23,
    1 << 24,
    1 << 25,
    1 << 26,
    1 << 27,
    1 << 28,
    1 << 29,
    1 << 30,
    1 << 31,
    1 << 32,
    1 << 33,
    1 << 34,
    1 << 35,
    1 << 36,
    1 << 37,
    1 << 38,
    1 << 39,
    1 << 40,
];

/// Which of mongod's latency kinds a command counts under (its `ReadWriteType`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Kind {
    Read = 0,
    Write = 1,
    Command = 2,
}

impl Kind {
    /// The kind of command `name`, as mongod's commands declare it.
    pub(crate) fn of(name: &str) -> Kind {
        match name {
            "find" | "getMore" | "aggregate" | "count" | "distinct" => Kind::Read,
            "insert" | "update" | "delete" | "findAndModify" | "findandmodify" => Kind::Write,
            _ => Kind::Command,
        }
    }
}

/// One kind's latencies.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Histogram {
    micros: u64,
    ops: u64,
    buckets: [u64; LOWER_BOUNDS.len()],
}

impl Default for Histogram {
    fn default() -> Histogram {
        Histogram {
            micros: 0,
            ops: 0,
            buckets: [0; LOWER_BOUNDS.len()],
        }
    }
}

impl Histogram {
    /// Counts one operation of `micros`.
    pub(crate) fn record(&mut self, micros: u64) {
        self.micros = self.micros.saturating_add(micros);
        self.ops += 1;
        let bucket = LOWER_BOUNDS.partition_point(|&bound| bound <= micros) - 1;
        self.buckets[bucket] += 1;
        debug_assert_eq!(self.buckets.iter().sum::<u64>(), self.ops);
    }

    /// `{latency, ops}` and, when asked, `histogram: [{micros, count}, ...]` as mongod.
    pub(crate) fn report(&self, histograms: bool) -> Document {
        let long = |n: u64| i64::try_from(n).unwrap_or(i64::MAX);
        let mut out = Document::new();
        if histograms {
            let buckets: Vec<Bson> = LOWER_BOUNDS
                .iter()
                .zip(self.buckets)
                .filter(|(_, count)| *count > 0)
                .map(|(&micros, count)| {
                    Bson::Document(doc! { "micros": long(micros), "count": long(count) })
                })
                .collect();
            out.insert("histogram", buckets);
        }
        out.insert("latency", long(self.micros));
        out.insert("ops", long(self.ops));
        out
    }
}

/// The three kinds' histograms of one namespace, or of the whole server.
#[derive(Debug, Clone, Copy, Default)]
pub(crate) struct Latencies {
    kinds: [Histogram; 3],
}

impl Latencies {
    /// Counts one operation of `kind` that took `micros`.
    pub(crate) fn record(&mut self, kind: Kind, micros: u64) {
        self.kinds[kind as usize].record(micros);
    }

    /// [`Latencies::report`] as raw BSON (serverStatus builds its reply raw). Without
    /// histograms it is written directly, without a `Document` in between.
    pub(crate) fn report_raw(
        &self,
        histograms: bool,
    ) -> Result<RawDocumentBuf, bson::error::Error> {
        if histograms {
            return RawDocumentBuf::try_from(&self.report(true));
        }
        let long = |n: u64| i64::try_from(n).unwrap_or(i64::MAX);
        let [reads, writes, commands] = &self.kinds;
        Ok(rawdoc! {
            "reads": { "latency": long(reads.micros), "ops": long(reads.ops) },
            "writes": { "latency": long(writes.micros), "ops": long(writes.ops) },
            "commands": { "latency": long(commands.micros), "ops": long(commands.ops) },
            "transactions": { "latency": 0i64, "ops": 0i64 },
        })
    }

    /// mongod's `latencyStats`/`opLatencies` document: `reads`, `writes`, `commands` and
    /// `transactions` (none run here: always zero).
    pub(crate) fn report(&self, histograms: bool) -> Document {
        let [reads, writes, commands] = &self.kinds;
        doc! {
            "reads": reads.report(histograms),
            "writes": writes.report(histograms),
            "commands": commands.report(histograms),
            "transactions": Histogram::default().report(histograms),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn buckets(report: &Document) -> Vec<(i64, i64)> {
        report
            .get_array("histogram")
            .expect("histogram")
            .iter()
            .map(|b| {
                let b = b.as_document().expect("bucket");
                (
                    b.get_i64("micros").expect("micros"),
                    b.get_i64("count").expect("count"),
                )
            })
            .collect()
    }

    #[test]
    fn latencies_land_in_mongods_buckets() {
        let mut histogram = Histogram::default();
        // mongod's documented example: [0, 2), [2, 4), [4096, 6144), [16384, 24576).
        for micros in [0, 1, 1, 2, 3, 4096, 6143, 16_384, 24_575, 1 << 41] {
            histogram.record(micros);
        }
        let report = histogram.report(true);
        assert_eq!(
            buckets(&report),
            vec![(0, 3), (2, 2), (4096, 2), (16_384, 2), (1 << 40, 1)]
        );
        assert_eq!(report.get_i64("ops").ok(), Some(10));
        let total = 1 + 1 + 2 + 3 + 4096 + 6143 + 16_384 + 24_575 + (1i64 << 41);
        assert_eq!(report.get_i64("latency").ok(), Some(total));
        assert!(!histogram.report(false).contains_key("histogram"));
    }

    #[test]
    fn the_raw_report_is_the_document_report() {
        let mut latencies = Latencies::default();
        latencies.record(Kind::Read, 5);
        latencies.record(Kind::Write, 3000);
        latencies.record(Kind::Command, 70);
        for histograms in [false, true] {
            let raw = latencies.report_raw(histograms).expect("raw");
            let doc = Document::try_from(raw.as_ref()).expect("document");
            assert_eq!(doc, latencies.report(histograms));
        }
    }

    #[test]
    fn bucket_bounds_double_then_take_half_steps_as_mongod() {
        for pair in LOWER_BOUNDS.windows(2) {
            assert!(pair[0] < pair[1], "{pair:?}");
        }
        assert_eq!(LOWER_BOUNDS[10], 1024);
        assert_eq!(&LOWER_BOUNDS[11..14], &[2048, 3072, 4096]);
        assert_eq!(LOWER_BOUNDS[30], 1_572_864);
        assert_eq!(LOWER_BOUNDS[31], 1 << 21);
    }

    #[test]
    fn commands_count_under_mongods_kinds() {
        assert_eq!(Kind::of("find"), Kind::Read);
        assert_eq!(Kind::of("aggregate"), Kind::Read);
        assert_eq!(Kind::of("findAndModify"), Kind::Write);
        assert_eq!(Kind::of("ping"), Kind::Command);
    }
}
