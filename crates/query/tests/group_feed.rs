//! The byte path of a leading `$group` (`Pipeline::group_feed`: stored bytes folded in
//! where they lie, `_id` and arguments read by length-skipping when they are constants or
//! top-level fields) against the general path (`Pipeline::run`: every document parsed, the
//! stage's expressions evaluated), on generated documents and `$group` stages: same
//! output, byte for byte, or the same error.

use crate::support::raw;
use bson::{Bson, Document, RawDocumentBuf, doc};
use proptest::prelude::*;
use query::Pipeline;

/// A value as stored documents hold them: equal numbers of each type, null, strings,
/// arrays and documents (whose group keys compare field by field).
fn value() -> impl Strategy<Value = Option<Bson>> {
    let scalar = prop_oneof![
        Just(None),
        Just(Some(Bson::Null)),
        (0..3_i32).prop_map(|n| Some(Bson::Int32(n))),
        (0..3_i64).prop_map(|n| Some(Bson::Int64(n))),
        (0..3_i32).prop_map(|n| Some(Bson::Double(f64::from(n) / 2.0))),
        prop::sample::select(vec!["a", "b", ""]).prop_map(|s| Some(Bson::String(s.to_owned()))),
        any::<bool>().prop_map(|b| Some(Bson::Boolean(b))),
    ];
    prop_oneof![
        4 => scalar.clone(),
        1 => prop::collection::vec(scalar.clone(), 0..3)
            .prop_map(|items| Some(Bson::Array(items.into_iter().flatten().collect()))),
        1 => scalar.prop_map(|v| {
            let mut sub = Document::new();
            if let Some(v) = v {
                sub.insert("b", v);
            }
            Some(Bson::Document(sub))
        }),
    ]
}

/// A document with fields `k`, `v` and `w` (each possibly missing) in a random order, a
/// payload between them, and sometimes a second `k` at the end (raw documents may hold
/// one; both paths read the first).
fn document() -> impl Strategy<Value = RawDocumentBuf> {
    (value(), value(), value(), any::<u8>(), any::<bool>()).prop_map(|(k, v, w, order, dup)| {
        let mut fields: Vec<(&str, Option<Bson>)> = vec![
            ("k", k),
            ("v", v),
            ("w", w),
            (
                "payload",
                Some(Bson::String("x".repeat(usize::from(order) * 4))),
            ),
        ];
        fields.rotate_left(usize::from(order) % 4);
        if order % 3 == 0 {
            fields.swap(0, 2);
        }
        let mut doc = doc! {"_id": i32::from(order)};
        for (name, value) in fields {
            if let Some(value) = value {
                doc.insert(name, value);
            }
        }
        let mut doc = raw(&doc);
        if dup {
            doc.append(bson::raw::cstr!("k"), 7);
        }
        doc
    })
}

/// A `_id` expression: the simple shapes the byte path reads itself, and others it hands
/// to the general evaluation.
fn id_spec() -> impl Strategy<Value = Bson> {
    prop::sample::select(vec![
        Bson::String("$k".into()),
        Bson::String("$v".into()),
        Bson::String("$missing".into()),
        Bson::Null,
        Bson::Int32(1),
        Bson::String("text".into()),
        Bson::String("$k.b".into()),
        Bson::Document(doc! {"a": "$k", "b": "$w"}),
        Bson::Document(doc! {"$toString": "$k"}),
    ])
}

/// One accumulator over a simple or a computed argument.
fn accumulator() -> impl Strategy<Value = Bson> {
    let operator = prop::sample::select(vec![
        "$sum",
        "$avg",
        "$min",
        "$max",
        "$first",
        "$last",
        "$push",
        "$addToSet",
    ]);
    let argument = prop::sample::select(vec![
        Bson::String("$v".into()),
        Bson::String("$w".into()),
        Bson::String("$k".into()),
        Bson::Int32(1),
        Bson::Double(2.5),
        Bson::String("$v.b".into()),
        Bson::Document(doc! {"$add": ["$v", 1]}),
    ]);
    prop_oneof![
        (operator, argument).prop_map(|(op, arg)| {
            let mut spec = Document::new();
            spec.insert(op, arg);
            Bson::Document(spec)
        }),
        Just(Bson::Document(doc! {"$count": {}})),
        Just(Bson::Document(
            doc! {"$top": {"output": "$v", "sortBy": {"w": 1}}}
        )),
        Just(Bson::Document(doc! {"$firstN": {"input": "$v", "n": 2}})),
    ]
}

fn pipeline_of(stages: &[Document]) -> Pipeline {
    let mut array = bson::RawArrayBuf::new();
    for stage in stages {
        array.push(raw(stage));
    }
    Pipeline::parse(&array).expect("generated pipelines are valid")
}

/// The output the byte path gives: the leading `$match` applied by the caller, as the
/// engine does, then each document's bytes fed in.
fn by_feed(pipeline: &Pipeline, docs: &[RawDocumentBuf]) -> Result<Vec<RawDocumentBuf>, String> {
    let mut feed = pipeline
        .group_feed(query::GroupMemory::UNBOUNDED)
        .expect("a leading $group");
    for doc in docs {
        if pipeline.leading_match().is_some_and(|f| !f.matches(doc)) {
            continue;
        }
        feed.add(doc.as_bytes()).map_err(|e| e.to_string())?;
    }
    feed.finish()
        .collect::<Result<Vec<_>, _>>()
        .map_err(|e| e.to_string())
}

/// The byte path split in two runs (`GroupFeed::fork`, each fed its run, then
/// `GroupFeed::merge`), as a scan split in record-id ranges feeds it; `None` when the
/// pipeline does not fork.
fn by_split_feed(
    pipeline: &Pipeline,
    docs: &[RawDocumentBuf],
    split: usize,
) -> Option<Result<Vec<RawDocumentBuf>, String>> {
    let mut first = pipeline
        .group_feed(query::GroupMemory::UNBOUNDED)
        .expect("a leading $group");
    let mut second = first.fork()?;
    let split = split.min(docs.len());
    for (part, feed) in [(&docs[..split], &mut first), (&docs[split..], &mut second)] {
        for doc in part {
            if pipeline.leading_match().is_some_and(|f| !f.matches(doc)) {
                continue;
            }
            if let Err(e) = feed.add(doc.as_bytes()) {
                return Some(Err(e.to_string()));
            }
        }
    }
    first.merge(second);
    Some(
        first
            .finish()
            .collect::<Result<Vec<_>, _>>()
            .map_err(|e| e.to_string()),
    )
}

/// Accumulators whose split runs merge exactly, and some that do not (which must refuse
/// to fork).
fn mergeable_accumulator() -> impl Strategy<Value = Bson> {
    prop_oneof![
        prop::sample::select(vec![
            doc! {"$sum": 1},
            doc! {"$sum": 5_i64},
            doc! {"$avg": 2},
            doc! {"$count": {}},
            doc! {"$min": "$v"},
            doc! {"$max": "$v"},
            doc! {"$first": "$v"},
            doc! {"$last": "$w"},
            doc! {"$min": {"$add": ["$v", 1]}},
        ])
        .prop_map(Bson::Document),
        accumulator(),
    ]
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 1000, ..ProptestConfig::default() })]

    #[test]
    fn split_group_feeds_merge_into_the_general_result(
        docs in prop::collection::vec(document(), 0..30),
        id in id_spec(),
        accumulators in prop::collection::vec(mergeable_accumulator(), 0..4),
        split in 0..31_usize,
    ) {
        let mut group = doc! {"_id": id};
        for (i, accumulator) in accumulators.iter().enumerate() {
            group.insert(format!("f{i}"), accumulator.clone());
        }
        let stages = [doc! {"$match": {"w": {"$ne": 1}}}, doc! {"$group": group}];
        let pipeline = pipeline_of(&stages);
        let general = pipeline
            .run(docs.iter().cloned().map(Ok))
            .map_err(|e| e.to_string());
        match by_split_feed(&pipeline, &docs, split) {
            Some(merged) => prop_assert_eq!(merged, general, "pipeline {:?}", stages),
            None => {
                // Only sums of non-constants and the collecting accumulators refuse.
                let refusing = accumulators.iter().any(|a| {
                    let a = a.as_document().expect("a document");
                    !(a.contains_key("$min") || a.contains_key("$max") || a.contains_key("$first")
                        || a.contains_key("$last") || a.contains_key("$count")
                        || matches!(a.get("$sum").or(a.get("$avg")), Some(Bson::Int32(_) | Bson::Int64(_))))
                });
                prop_assert!(refusing, "pipeline {:?} did not fork", stages);
            }
        }
    }

    #[test]
    fn group_feed_agrees_with_the_general_path(
        docs in prop::collection::vec(document(), 0..30),
        id in id_spec(),
        accumulators in prop::collection::vec(accumulator(), 0..4),
        matched in any::<bool>(),
        sorted in any::<bool>(),
    ) {
        let mut group = doc! {"_id": id};
        for (i, accumulator) in accumulators.into_iter().enumerate() {
            group.insert(format!("f{i}"), accumulator);
        }
        let mut stages = Vec::new();
        if matched {
            stages.push(doc! {"$match": {"w": {"$ne": 1}}});
        }
        stages.push(doc! {"$group": group});
        if sorted {
            stages.push(doc! {"$sort": {"_id": -1}});
        }
        let pipeline = pipeline_of(&stages);
        let general = pipeline
            .run(docs.iter().cloned().map(Ok))
            .map_err(|e| e.to_string());
        prop_assert_eq!(by_feed(&pipeline, &docs), general, "pipeline {:?}", stages);
    }
}

/// The byte path reads a stored document only up to the fields it names: a document whose
/// terminating byte is damaged is still grouped by a field before it (the scan never
/// touches a 16 KiB document's last page for `{$group: {_id: "$k"}}`).
#[test]
fn group_feed_reads_only_the_fields_it_names() {
    let pipeline = pipeline_of(&[doc! {"$group": {"_id": "$k", "n": {"$sum": 1}}}]);
    let mut feed = pipeline
        .group_feed(query::GroupMemory::UNBOUNDED)
        .expect("a leading $group");
    for k in [1, 2, 1] {
        let mut bytes = raw(&doc! {"k": k, "payload": "x".repeat(100)}).into_bytes();
        let last = bytes.len() - 1;
        bytes[last] = 0xFF;
        feed.add(&bytes).expect("the damaged byte is never read");
    }
    let out: Vec<RawDocumentBuf> = feed.finish().collect::<Result<_, _>>().expect("groups");
    let expected = [doc! {"_id": 1, "n": 2}, doc! {"_id": 2, "n": 1}].map(|d| raw(&d));
    assert_eq!(out, expected);
}

/// Pipelines whose first stage (after a `$match`) is not `$group` have no feed.
#[test]
fn group_feed_only_for_a_leading_group() {
    assert!(
        pipeline_of(&[doc! {"$project": {"k": 1}}, doc! {"$group": {"_id": "$k"}}])
            .group_feed(query::GroupMemory::UNBOUNDED)
            .is_none()
    );
    assert!(
        pipeline_of(&[doc! {"$match": {}}, doc! {"$group": {"_id": "$k"}}])
            .group_feed(query::GroupMemory::UNBOUNDED)
            .is_some()
    );
}

/// Numbers equal across types are one group, on both paths: whole numbers (keyed by their
/// value) and the rest (keyed by their canonical encoding) never meet, since equal numbers
/// are both whole or both not.
#[test]
fn equal_numbers_of_every_type_are_one_group() {
    let decimal = |text: &str| Bson::Decimal128(text.parse().expect("a decimal"));
    let values = [
        Bson::Int32(1),
        Bson::Int64(1),
        Bson::Double(1.0),
        decimal("1.0"),
        decimal("0.01E2"),
        Bson::Double(1.5),
        decimal("1.50"),
        Bson::Double(-0.0),
        decimal("-0"),
        Bson::Int32(0),
        Bson::Double(9_223_372_036_854_775_808.0),
        decimal("9223372036854775808"),
        Bson::Int64(i64::MIN),
        Bson::Double(-9_223_372_036_854_775_808.0),
        decimal("-9223372036854775808"),
        Bson::String("1".into()),
    ];
    let docs: Vec<RawDocumentBuf> = values
        .iter()
        .map(|v| raw(&doc! {"k": v.clone(), "pad": "x"}))
        .collect();
    let pipeline = pipeline_of(&[doc! {"$group": {"_id": "$k", "n": {"$sum": 1}}}]);
    let expected: Vec<RawDocumentBuf> = [
        doc! {"_id": 1, "n": 5},
        doc! {"_id": 1.5, "n": 2},
        doc! {"_id": -0.0, "n": 3},
        doc! {"_id": 9_223_372_036_854_775_808.0, "n": 2},
        doc! {"_id": i64::MIN, "n": 3},
        doc! {"_id": "1", "n": 1},
    ]
    .iter()
    .map(raw)
    .collect();
    let general = pipeline.run(docs.iter().cloned().map(Ok)).expect("groups");
    assert_eq!(general, expected);
    assert_eq!(by_feed(&pipeline, &docs), Ok(expected));
}
