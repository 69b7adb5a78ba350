//! `$group` over its memory limit: 292 without spilling, and with it (allowDiskUse) the same
//! groups as an unbounded `$group` over the same input, whatever the limit, the keys and the
//! accumulators (groups are compared in key order: MongoDB leaves their order unspecified).

use bson::{Bson, Document, RawDocumentBuf, doc};
use proptest::prelude::*;
use query::{DocumentStream, Foreign, GroupMemory, Pipeline, QueryError, SortSpec};
use std::cell::Cell;

/// A database with no other collections whose `$group`s have `memory`; its blocking
/// sort is the in-memory default, counted.
struct Bounded {
    memory: GroupMemory,
    sorts: Cell<usize>,
}

impl Bounded {
    fn new(bytes_max: usize, spill: bool) -> Bounded {
        Bounded {
            memory: GroupMemory { bytes_max, spill },
            sorts: Cell::new(0),
        }
    }
}

impl Foreign for Bounded {
    fn scan(&self, _: &str) -> Result<DocumentStream<'_>, QueryError> {
        Ok(Box::new(std::iter::empty()))
    }

    fn sort<'a>(
        &'a self,
        spec: &'a SortSpec,
        keep: Option<usize>,
        input: DocumentStream<'a>,
    ) -> Result<DocumentStream<'a>, QueryError> {
        self.sorts.set(self.sorts.get() + 1);
        // The trait's default, reached through a foreign that does not override it.
        struct Plain;
        impl Foreign for Plain {
            fn scan(&self, _: &str) -> Result<DocumentStream<'_>, QueryError> {
                Ok(Box::new(std::iter::empty()))
            }
        }
        let sorted: Vec<_> = Plain.sort(spec, keep, input)?.collect();
        Ok(Box::new(sorted.into_iter()))
    }

    fn group_memory(&self) -> GroupMemory {
        self.memory
    }
}

fn pipeline(stages: &[Document]) -> Pipeline {
    let stages: Vec<Bson> = stages.iter().cloned().map(Bson::Document).collect();
    let raw = bson::RawArrayBuf::try_from(&bson::Array::from(stages)).expect("encodes");
    Pipeline::parse(&raw).expect("parses")
}

fn input(docs: &[Document]) -> impl Iterator<Item = Result<RawDocumentBuf, QueryError>> + '_ {
    docs.iter()
        .map(|d| Ok(RawDocumentBuf::try_from(d).expect("encodes")))
}

/// The output in the canonical key order of `_id`, as documents.
fn by_key(out: Vec<RawDocumentBuf>) -> Vec<Document> {
    let mut keyed: Vec<(Vec<u8>, Document)> = out
        .iter()
        .map(|raw| {
            let id = raw.get("_id").expect("valid").expect("has _id");
            let mut key = Vec::new();
            bson_canonical::key::encode_into(id, &mut key);
            (key, Document::try_from(raw.as_ref()).expect("valid"))
        })
        .collect();
    keyed.sort_by(|a, b| a.0.cmp(&b.0));
    keyed.into_iter().map(|(_, d)| d).collect()
}

fn run(
    pipeline: &Pipeline,
    docs: &[Document],
    foreign: &Bounded,
) -> Result<Vec<RawDocumentBuf>, QueryError> {
    pipeline.stream_with(input(docs), foreign).collect()
}

fn accumulators() -> Document {
    doc! {
        "_id": "$g",
        "n": {"$sum": 1},
        "s": {"$sum": "$v"},
        "p": {"$push": "$v"},
        "f": {"$first": "$v"},
        "l": {"$last": "$v"},
        "m": {"$max": "$v"},
        "t": {"$addToSet": "$v"},
    }
}

#[test]
fn over_the_limit_without_disk_use_is_292_in_mongods_words() {
    let docs: Vec<Document> = (0..100).map(|i| doc! {"g": i, "v": i}).collect();
    let p = pipeline(&[doc! {"$group": accumulators()}]);
    let e = run(&p, &docs, &Bounded::new(2_000, false)).expect_err("over the limit");
    assert_eq!(e.code(), 292);
    assert_eq!(e.code_name(), "QueryExceededMemoryLimitNoDiskUseAllowed");
    assert_eq!(
        e.to_string(),
        "PlanExecutor error during aggregation :: caused by :: Exceeded memory limit for \
         $group, but didn't allow external sort. Pass allowDiskUse:true to opt in."
    );
    // Under the limit the same pipeline runs, and never sorts.
    let roomy = Bounded::new(1 << 20, false);
    assert_eq!(run(&p, &docs, &roomy).expect("fits").len(), 100);
    assert_eq!(roomy.sorts.get(), 0);
}

#[test]
fn the_leading_group_feed_stops_or_fails_at_the_limit() {
    let docs: Vec<RawDocumentBuf> = (0..100)
        .map(|i| RawDocumentBuf::try_from(&doc! {"g": i, "v": i}).expect("encodes"))
        .collect();
    let p = pipeline(&[doc! {"$group": {"_id": "$g", "n": {"$sum": 1}}}]);
    let tight = |spill| GroupMemory {
        bytes_max: 2_000,
        spill,
    };
    let mut feed = p.group_feed(tight(true)).expect("a leading $group");
    let fed = docs
        .iter()
        .take_while(|d| feed.add(d.as_bytes()).expect("spills"))
        .count();
    assert!(fed < 99, "the feed says stop before the end ({fed})");
    let mut feed = p.group_feed(tight(false)).expect("a leading $group");
    let e = docs
        .iter()
        .find_map(|d| feed.add(d.as_bytes()).err())
        .expect("fails over the limit");
    assert_eq!(e.code(), 292);
}

#[test]
fn a_spilled_group_keeps_the_first_id_and_input_order_within_each_group() {
    // 1, 1.0 and NumberLong(1) are one group whose _id is the first seen; $push keeps
    // input order across the point where the groups stopped fitting.
    let mut docs: Vec<Document> = (0..50)
        .map(|i| doc! {"g": format!("s{i}"), "v": i})
        .collect();
    docs.push(doc! {"g": 1.0, "v": 100});
    docs.push(doc! {"g": 1, "v": 101});
    docs.push(doc! {"g": 1_i64, "v": 102});
    docs.push(doc! {"g": "s0", "v": 103});
    let p = pipeline(&[doc! {"$group": accumulators()}]);
    let foreign = Bounded::new(1_500, true);
    let spilled = by_key(run(&p, &docs, &foreign).expect("spills"));
    assert_eq!(
        foreign.sorts.get(),
        1,
        "the remainder went through the sort"
    );
    let whole = by_key(run(&p, &docs, &Bounded::new(usize::MAX, false)).expect("runs"));
    assert_eq!(spilled, whole);
    let one = spilled
        .iter()
        .find(|d| d.get("_id") == Some(&Bson::Double(1.0)))
        .expect("the group of 1");
    assert_eq!(one.get_array("p").expect("p").len(), 3);
}

fn key_value() -> impl Strategy<Value = Bson> {
    prop_oneof![
        (0..8i32).prop_map(Bson::Int32),
        (0..8i64).prop_map(Bson::Int64),
        (0..8i32).prop_map(|n| Bson::Double(f64::from(n))),
        (0..8u8).prop_map(|n| Bson::String(format!("k{n}"))),
        Just(Bson::Null),
        (0..3i32, 0..3i32).prop_map(|(a, b)| Bson::Array(vec![Bson::Int32(a), Bson::Int32(b)])),
        (0..3i32).prop_map(|a| Bson::Document(doc! {"x": a})),
    ]
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 300, failure_persistence: None, ..ProptestConfig::default() })]

    #[test]
    fn a_spilling_group_equals_an_unbounded_one(
        rows in proptest::collection::vec((proptest::option::of(key_value()), 0..100i32), 0..80),
        bytes_max in 0usize..4_000,
        lead in proptest::bool::ANY,
    ) {
        let docs: Vec<Document> = rows
            .into_iter()
            .map(|(g, v)| match g {
                Some(g) => doc! {"g": g, "v": v},
                None => doc! {"v": v},
            })
            .collect();
        // With a leading $match the $group is not the first stage; a stage after it runs
        // over the spilled output.
        let mut stages = Vec::new();
        if lead {
            stages.push(doc! {"$match": {"v": {"$gte": 10}}});
        }
        stages.push(doc! {"$group": accumulators()});
        stages.push(doc! {"$addFields": {"size": {"$size": "$p"}}});
        let p = pipeline(&stages);
        let spilled = by_key(run(&p, &docs, &Bounded::new(bytes_max, true)).expect("spills"));
        let whole = by_key(run(&p, &docs, &Bounded::new(usize::MAX, false)).expect("runs"));
        prop_assert_eq!(spilled, whole);
    }
}
