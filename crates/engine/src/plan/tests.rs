//! The planner's choices and bounds on hand-built catalog entries; the end-to-end
//! differential test (index plans against collection scans) is `tests/planner.rs`.

use super::bounds::{FieldView, bounds};
use super::predicates::Predicates;
use super::{Access, Hint, static_choice as choose};
use crate::index::spec::{IndexSpec, KeyKind, ParseOptions};
use crate::store::{CollectionMeta, IndexMeta, KeyRange, Namespace};
use bson::{Bson, Document, RawDocumentBuf, doc};
use bson_canonical::key::{Direction, encode_field_into};
use proptest::prelude::*;
use std::collections::BTreeSet;
use std::sync::Arc;

fn raw(doc: Document) -> RawDocumentBuf {
    RawDocumentBuf::try_from(&doc).expect("raw")
}

fn index(spec: Document) -> IndexMeta {
    let spec = IndexSpec::parse(&raw(spec), ParseOptions::default()).expect("spec");
    IndexMeta::new(Arc::new(spec))
}

fn meta(indexes: Vec<IndexMeta>) -> CollectionMeta {
    let mut meta = CollectionMeta::new(
        RawDocumentBuf::new(),
        [0; 16],
        crate::store::Compressor::None,
    );
    meta.indexes = indexes;
    meta
}

fn ns() -> Namespace {
    Namespace::new("db", "c")
}

/// The name of the index `choose` picks for `filter` (`None`: a collection scan; `"id"`:
/// the `_id` point lookup).
fn chosen(meta: &CollectionMeta, filter: Document) -> Option<String> {
    let filter = raw(filter);
    match choose(meta, &ns(), Some(&filter), &Hint::None).expect("plan") {
        Access::Collection => None,
        Access::Id(_) => Some("id".to_owned()),
        Access::Index(access) => Some(access.name),
        Access::Or(walks) => Some(format!(
            "or({})",
            walks
                .iter()
                .map(|w| w.name.as_str())
                .collect::<Vec<_>>()
                .join(",")
        )),
    }
}

fn key(value: Bson, direction: Direction) -> Vec<u8> {
    let holder = raw(doc! { "v": value });
    let mut out = Vec::new();
    encode_field_into(holder.get("v").expect("v"), direction, &mut out);
    out
}

fn within(ranges: &[KeyRange], key: &[u8]) -> bool {
    ranges
        .iter()
        .any(|r| key >= r.lower.as_slice() && r.upper.as_ref().is_none_or(|u| key < u.as_slice()))
}

#[test]
fn equality_in_and_ranges_choose_the_index_that_pins_most() {
    let meta = meta(vec![
        index(doc! { "key": { "a": 1 }, "name": "a_1" }),
        index(doc! { "key": { "a": 1, "b": 1 }, "name": "a_1_b_1" }),
        index(doc! { "key": { "c": -1 }, "name": "c_-1", "unique": true }),
        index(doc! { "key": { "h": "hashed" }, "name": "h_hashed" }),
        index(doc! { "key": { "x": 1 }, "name": "x_1", "hidden": true }),
    ]);
    assert_eq!(chosen(&meta, doc! { "a": 1 }).as_deref(), Some("a_1"));
    assert_eq!(
        chosen(&meta, doc! { "a": 1, "b": 2 }).as_deref(),
        Some("a_1_b_1")
    );
    assert_eq!(
        chosen(&meta, doc! { "a": { "$in": [1, 2] }, "b": { "$gt": 2 } }).as_deref(),
        Some("a_1_b_1")
    );
    assert_eq!(chosen(&meta, doc! { "b": 2 }), None, "b leads no index");
    assert_eq!(
        chosen(&meta, doc! { "c": 3, "a": 1 }).as_deref(),
        Some("c_-1")
    );
    assert_eq!(
        chosen(&meta, doc! { "h": "x" }).as_deref(),
        Some("h_hashed")
    );
    assert_eq!(
        chosen(&meta, doc! { "h": { "$gt": 1 } }),
        None,
        "hashed: no ranges"
    );
    assert_eq!(chosen(&meta, doc! { "x": 1 }), None, "hidden");
    assert_eq!(
        chosen(&meta, doc! { "_id": 4, "a": 1 }).as_deref(),
        Some("id")
    );
    assert_eq!(
        chosen(&meta, doc! { "_id": { "$in": [1, 2] } }).as_deref(),
        Some("_id_")
    );
    assert_eq!(
        chosen(&meta, doc! { "$and": [{ "a": 1 }] }).as_deref(),
        Some("a_1")
    );
    // An `$or` whose every branch is indexed: a walk per branch.
    assert_eq!(
        chosen(&meta, doc! { "$or": [{ "a": 1 }, { "a": 2 }] }).as_deref(),
        Some("or(a_1,a_1)")
    );
    assert_eq!(chosen(&meta, doc! { "a": { "$ne": 1 } }), None);
    assert_eq!(chosen(&meta, doc! { "a": { "$gt": null } }), None);
    let regex = Bson::RegularExpression(bson::Regex {
        pattern: "^x".try_into().expect("p"),
        options: "".try_into().expect("o"),
    });
    assert_eq!(chosen(&meta, doc! { "a": regex }), None);
}

#[test]
fn sparse_and_partial_indexes_are_chosen_only_when_they_hold_every_match() {
    let meta = meta(vec![
        index(doc! { "key": { "s": 1 }, "name": "s_1", "sparse": true }),
        index(doc! { "key": { "p": 1 }, "name": "p_1",
        "partialFilterExpression": { "p": { "$gt": 5 }, "k": { "$exists": true } } }),
        index(doc! { "key": { "q": 1 }, "name": "q_1",
        "partialFilterExpression": { "t": "x" } }),
    ]);
    assert_eq!(chosen(&meta, doc! { "s": 1 }).as_deref(), Some("s_1"));
    assert_eq!(
        chosen(&meta, doc! { "s": null }),
        None,
        "null matches missing"
    );
    assert_eq!(chosen(&meta, doc! { "s": { "$in": [1, null] } }), None);
    assert_eq!(
        chosen(&meta, doc! { "s": { "$gte": 1 } }).as_deref(),
        Some("s_1")
    );
    assert_eq!(
        chosen(&meta, doc! { "p": 7, "k": 1 }).as_deref(),
        Some("p_1")
    );
    assert_eq!(chosen(&meta, doc! { "p": 7 }), None, "k may be missing");
    assert_eq!(chosen(&meta, doc! { "p": 3, "k": 1 }), None, "3 is not > 5");
    assert_eq!(
        chosen(&meta, doc! { "p": { "$gt": 9 }, "k": { "$gt": 0 } }).as_deref(),
        Some("p_1")
    );
    assert_eq!(chosen(&meta, doc! { "p": { "$gte": 5 }, "k": 1 }), None);
    assert_eq!(chosen(&meta, doc! { "p": { "$lt": 9 }, "k": 1 }), None);
    assert_eq!(
        chosen(&meta, doc! { "q": 1, "t": "x" }).as_deref(),
        Some("q_1")
    );
    assert_eq!(chosen(&meta, doc! { "q": 1, "t": "y" }), None);
}

#[test]
fn hints_name_an_index_or_fail_with_bad_value() {
    let meta = meta(vec![
        index(doc! { "key": { "a": 1 }, "name": "a_1" }),
        index(doc! { "key": { "b": -1 }, "name": "bee", "hidden": true }),
    ]);
    let filter = raw(doc! { "z": 1 });
    let by_name = choose(&meta, &ns(), Some(&filter), &Hint::Name("a_1".into())).expect("hint");
    let Access::Index(access) = by_name else {
        panic!("a hinted index is walked: {by_name:?}");
    };
    assert_eq!(access.ranges.len(), 1, "the whole index");
    let pattern = Hint::Pattern(raw(doc! { "a": 1.0 }));
    assert!(matches!(
        choose(&meta, &ns(), Some(&filter), &pattern),
        Ok(Access::Index(_))
    ));
    for hint in [
        Hint::Name("nope".into()),
        Hint::Name("bee".into()),
        Hint::Pattern(raw(doc! { "a": -1 })),
    ] {
        let error = choose(&meta, &ns(), Some(&filter), &hint).expect_err("no such index");
        assert_eq!(error.code().code(), 2, "{hint:?}");
    }
    assert_eq!(
        choose(&meta, &ns(), Some(&filter), &Hint::Natural(true)).expect("natural"),
        Access::Collection
    );
}

fn fields<'m>(
    paths: &'m [(&'m str, KeyKind)],
    multikey: &'m [BTreeSet<usize>],
) -> Vec<FieldView<'m>> {
    paths
        .iter()
        .zip(multikey)
        .map(|((path, kind), multikey)| FieldView {
            path,
            kind: *kind,
            multikey,
        })
        .collect()
}

#[test]
fn multikey_fields_take_one_bound_and_shared_array_prefixes_do_not_compound() {
    let filter = raw(doc! { "a": { "$gt": 5, "$lt": 3 } });
    let predicates = Predicates::of(Some(&filter));
    let flat = [BTreeSet::new()];
    let single = [("a", KeyKind::Ascending)];
    assert!(
        bounds(&fields(&single, &flat), &predicates)
            .ranges
            .is_empty(),
        "no scalar is > 5 and < 3"
    );
    let multikey = [BTreeSet::from([0])];
    let b = bounds(&fields(&single, &multikey), &predicates);
    assert!(within(
        &b.ranges,
        &key(Bson::Int32(9), Direction::Ascending)
    ));
    assert!(!within(
        &b.ranges,
        &key(Bson::Int32(1), Direction::Ascending)
    ));

    let filter = raw(doc! { "a.b": 1, "a.c": 2 });
    let predicates = Predicates::of(Some(&filter));
    let pair = [("a.b", KeyKind::Ascending), ("a.c", KeyKind::Ascending)];
    let arrays = [BTreeSet::from([0]), BTreeSet::from([0])];
    let b = bounds(&fields(&pair, &arrays), &predicates);
    assert_eq!(
        (b.point_fields, b.range_field),
        (1, false),
        "a.c is not compounded"
    );
    let none = [BTreeSet::new(), BTreeSet::new()];
    let b = bounds(&fields(&pair, &none), &predicates);
    assert_eq!(b.point_fields, 2);
}

#[test]
fn in_lists_multiply_up_to_the_cap() {
    let many: Vec<i32> = (0..100).collect();
    let filter = raw(doc! { "a": { "$in": many.clone() }, "b": { "$in": many } });
    let predicates = Predicates::of(Some(&filter));
    let flat = [BTreeSet::new(), BTreeSet::new()];
    let pair = [("a", KeyKind::Ascending), ("b", KeyKind::Descending)];
    let b = bounds(&fields(&pair, &flat), &predicates);
    const { assert!(100 * 100 > super::bounds::RANGES_MAX) };
    assert_eq!(
        (b.point_fields, b.ranges.len()),
        (1, 100),
        "b left unbounded"
    );
    let few = raw(doc! { "a": { "$in": [1, 2] }, "b": { "$in": [3, 4, 5] } });
    let b = bounds(&fields(&pair, &flat), &Predicates::of(Some(&few)));
    assert_eq!((b.point_fields, b.ranges.len()), (2, 6));
}

fn scalar() -> impl Strategy<Value = Bson> {
    prop_oneof![
        (-4i32..5).prop_map(Bson::Int32),
        (-4i64..5).prop_map(Bson::Int64),
        prop_oneof![Just(0.5), Just(-1.5), Just(f64::NAN), Just(f64::INFINITY)]
            .prop_map(Bson::Double),
        prop_oneof![Just(""), Just("a"), Just("b"), Just("ab")]
            .prop_map(|s| Bson::String(s.to_owned())),
        any::<bool>().prop_map(Bson::Boolean),
        (0i64..3).prop_map(|t| Bson::DateTime(bson::DateTime::from_millis(t))),
        Just(Bson::Null),
        Just(Bson::MinKey),
        Just(Bson::MaxKey),
    ]
}

fn predicate() -> impl Strategy<Value = Bson> {
    let op = prop_oneof![
        Just("$gt"),
        Just("$gte"),
        Just("$lt"),
        Just("$lte"),
        Just("$eq")
    ];
    (op.clone(), scalar(), proptest::option::of((op, scalar()))).prop_map(|(o, v, more)| {
        let mut spec = Document::new();
        spec.insert(o, v);
        if let Some((o2, v2)) = more
            && !spec.contains_key(o2)
        {
            spec.insert(o2, v2);
        }
        Bson::Document(spec)
    })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(3000))]

    /// A scalar the matcher says satisfies the predicates has its key inside the bounds,
    /// ascending and descending, single-valued or multikey.
    #[test]
    fn a_matching_scalar_lies_within_the_bounds(
        value in scalar(),
        spec in predicate(),
        descending in any::<bool>(),
        multikey in any::<bool>(),
    ) {
        let filter = raw(doc! { "a": spec });
        let Ok(compiled) = query::Filter::parse(&filter) else { return Ok(()); };
        let doc = raw(doc! { "a": value.clone() });
        if !compiled.matches(&doc) {
            return Ok(());
        }
        let predicates = Predicates::of(Some(&filter));
        let kind = if descending { KeyKind::Descending } else { KeyKind::Ascending };
        let direction = if descending { Direction::Descending } else { Direction::Ascending };
        let arrays = [if multikey { BTreeSet::from([0]) } else { BTreeSet::new() }];
        let single = [("a", kind)];
        let b = bounds(&fields(&single, &arrays), &predicates);
        let k = key(value.clone(), direction);
        prop_assert!(within(&b.ranges, &k), "{:?} matches {:?} but is outside {:?}", value, filter, b.ranges);
    }
}

#[test]
fn ranges_are_sorted_and_disjoint() {
    let filter = raw(doc! { "a": { "$in": [3, 1, 2, 1.0, null] } });
    let predicates = Predicates::of(Some(&filter));
    let flat = [BTreeSet::new()];
    let single = [("a", KeyKind::Descending)];
    let b = bounds(&fields(&single, &flat), &predicates);
    for pair in b.ranges.windows(2) {
        let end = pair[0].upper.as_ref().expect("bounded");
        assert!(*end < pair[1].lower, "{:?}", b.ranges);
    }
    // 3, 2, 1, null and undefined (null matches undefined); 1.0 is 1.
    assert_eq!(b.ranges.len(), 5);
    assert!(!b.excludes_missing);
}

fn nested_value() -> impl Strategy<Value = Bson> {
    let leaf = prop_oneof![
        (-2i32..3).prop_map(Bson::Int32),
        prop_oneof![Just(0.5), Just(1.0)].prop_map(Bson::Double),
        prop_oneof![Just("s"), Just("")].prop_map(|s| Bson::String(s.to_owned())),
        Just(Bson::Null),
        any::<bool>().prop_map(Bson::Boolean),
    ];
    leaf.prop_recursive(3, 24, 3, |inner| {
        prop_oneof![
            proptest::collection::vec(inner.clone(), 0..3).prop_map(Bson::Array),
            proptest::collection::btree_map(
                prop_oneof![Just("x"), Just("y"), Just("0")],
                inner,
                0..3
            )
            .prop_map(|m| Bson::Document(m.into_iter().map(|(k, v)| (k.to_owned(), v)).collect())),
        ]
    })
}

/// Values inside a value, to make matching predicates likely.
fn values_in(value: &Bson, out: &mut Vec<Bson>) {
    out.push(value.clone());
    match value {
        Bson::Array(items) => items.iter().for_each(|v| values_in(v, out)),
        Bson::Document(doc) => doc.values().for_each(|v| values_in(v, out)),
        _ => {}
    }
}

/// A wildcard index specification: all paths, a subtree, an inclusion or an exclusion.
fn wildcard_spec(which: usize, descending: bool) -> Document {
    let direction = if descending { -1 } else { 1 };
    match which {
        0 => doc! { "key": { "$**": direction }, "name": "w" },
        1 => doc! { "key": { "a.$**": direction }, "name": "w" },
        2 => {
            doc! { "key": { "$**": direction }, "name": "w", "wildcardProjection": { "a.x": 1, "b": 1 } }
        }
        _ => doc! { "key": { "$**": direction }, "name": "w", "wildcardProjection": { "a.y": 0 } },
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(3000))]

    /// The wildcard index's invariant, independent of which plan wins: a document matching
    /// a predicate the index answers has a key inside the index's bounds for that path,
    /// with the multikey paths the index would have recorded for it.
    #[test]
    fn a_matching_document_has_a_wildcard_key_within_the_bounds(
        a in proptest::option::of(nested_value()),
        b in proptest::option::of(nested_value()),
        which in 0usize..4,
        descending in any::<bool>(),
        path in prop_oneof![
            Just("a"), Just("a.x"), Just("a.x.y"), Just("a.0"), Just("a.0.x"), Just("a.y"), Just("b"),
        ],
        op in prop_oneof![
            Just("$eq"), Just("$in"), Just("$gt"), Just("$gte"), Just("$lt"), Just("$lte"), Just("$exists"),
        ],
        pick in any::<prop::sample::Index>(),
        other in nested_value(),
    ) {
        let mut doc = Document::new();
        if let Some(a) = a {
            doc.insert("a", a);
        }
        if let Some(b) = b {
            doc.insert("b", b);
        }
        let mut candidates = vec![other];
        doc.values().for_each(|v| values_in(v, &mut candidates));
        let operand = pick.get(&candidates).clone();
        let condition = match op {
            "$in" => doc! { "$in": [operand.clone(), 7] },
            "$exists" => doc! { "$exists": true },
            op => doc! { op: operand.clone() },
        };
        let filter = raw(doc! { path: condition });
        let Ok(compiled) = query::Filter::parse(&filter) else { return Ok(()); };
        let doc_raw = raw(doc.clone());
        let mut meta = index(wildcard_spec(which, descending));
        let keys = crate::index::keys::generate(&meta.spec, &doc_raw).expect("keys");
        meta.wildcard_multikey = keys.wildcard_multikey.clone();
        let predicates = Predicates::of(Some(&filter));
        let Some(found) = super::wildcard::path_bounds(&meta, path, predicates.on(path)) else {
            return Ok(());
        };
        if compiled.matches(&doc_raw) {
            prop_assert!(
                keys.keys.iter().any(|k| within(&found.ranges, k)),
                "{:?} matches {:?} but none of its keys lies in {:?}",
                doc, filter, found.display
            );
        }
    }
}

/// The merged walks `sort_merge::choose` gives `filter` sorted on `sort`.
fn merged(
    meta: &CollectionMeta,
    filter: Document,
    sort: &[(&str, bool)],
) -> Option<super::SortMerge> {
    let filter = raw(filter);
    super::sort_merge::choose(meta, &ns(), Some(&filter), &Hint::None, sort).expect("plan")
}

#[test]
fn points_before_the_sort_fields_split_into_one_walk_per_combination() {
    let meta = meta(vec![
        index(doc! { "key": { "a": 1, "b": 1 }, "name": "a_1_b_1" }),
        index(doc! { "key": { "x": 1, "y": 1, "b": -1 }, "name": "x_1_y_1_b_-1" }),
    ]);
    let merge = merged(&meta, doc! { "a": { "$in": [3, 1, 2] } }, &[("b", true)]).expect("merge");
    assert_eq!(merge.walks.len(), 3);
    assert!(
        merge
            .walks
            .iter()
            .all(|w| w.name == "a_1_b_1" && !w.reverse)
    );
    let shown: Vec<&str> = merge.pinned.iter().map(|p| p[0].1.as_str()).collect();
    assert_eq!(
        shown,
        ["[1, 1]", "[2, 2]", "[3, 3]"],
        "ascending combinations"
    );
    // Each walk holds exactly the keys of its point, whatever follows in the key.
    for (i, walk) in merge.walks.iter().enumerate() {
        for a in 0..5 {
            let mut k = key(Bson::Int32(a), Direction::Ascending);
            k.extend(key(Bson::String("z".into()), Direction::Ascending));
            assert_eq!(
                within(&walk.ranges, &k),
                a == i as i32 + 1,
                "walk {i}, a = {a}"
            );
        }
    }
    // Two pinned fields: their product, in order; descending b walked forward for b: -1.
    let merge = merged(
        &meta,
        doc! { "x": { "$in": [1, 2] }, "y": { "$in": [7, 8] } },
        &[("b", false)],
    )
    .expect("merge");
    let shown: Vec<(&str, &str)> = merge
        .pinned
        .iter()
        .map(|p| (p[0].1.as_str(), p[1].1.as_str()))
        .collect();
    assert_eq!(
        shown,
        [
            ("[1, 1]", "[7, 7]"),
            ("[1, 1]", "[8, 8]"),
            ("[2, 2]", "[7, 7]"),
            ("[2, 2]", "[8, 8]")
        ]
    );
    assert!(merge.walks.iter().all(|w| !w.reverse));
    let backward = merged(&meta, doc! { "a": { "$in": [1, 2] } }, &[("b", false)]).expect("merge");
    assert!(backward.walks.iter().all(|w| w.reverse));
    // One point is a plain index-provided sort; other sorts, ranges, or too many points are not merged.
    assert!(merged(&meta, doc! { "a": 1 }, &[("b", true)]).is_none());
    assert!(merged(&meta, doc! { "a": { "$in": [1, 2] } }, &[("c", true)]).is_none());
    assert!(merged(&meta, doc! { "a": { "$gt": 1 } }, &[("b", true)]).is_none());
    assert!(
        merged(&meta, doc! { "x": { "$in": [1, 2] } }, &[("b", true)]).is_none(),
        "y unpinned"
    );
    let many: Vec<i32> = (0..=super::sort_merge::WALKS_MAX as i32).collect();
    assert!(merged(&meta, doc! { "a": { "$in": many } }, &[("b", true)]).is_none());
}
