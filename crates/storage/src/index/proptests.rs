//! Property tests: generated keys equal a plain model's (each field's value set, then the
//! product, parallel arrays refused), and the over-approximation the planner relies on: a
//! document `{p: v}` matches has a key the planner looks up for `v`.
//!
//! The model covers key patterns whose fields start with different top-level names (no two
//! fields through one array, so no lockstep expansion) and no numeric components; those
//! rules have unit tests in `tests.rs`.

use super::keys::generate;
use super::spec::{IndexSpec, ParseOptions};
use bson::{Bson, Document, doc};
use bson_canonical::key::{Direction, encode_compound};
use proptest::prelude::*;
use std::collections::BTreeSet;

fn scalar() -> impl Strategy<Value = Bson> {
    prop_oneof![
        (-3i32..4).prop_map(Bson::Int32),
        (-3i64..4).prop_map(Bson::Int64),
        prop_oneof![Just(0.5), Just(1.0), Just(-2.0)].prop_map(Bson::Double),
        prop_oneof![Just("s"), Just("t"), Just("")].prop_map(|s| Bson::String(s.to_owned())),
        Just(Bson::Null),
        any::<bool>().prop_map(Bson::Boolean),
    ]
}

fn value() -> impl Strategy<Value = Bson> {
    scalar().prop_recursive(3, 24, 3, |inner| {
        prop_oneof![
            proptest::collection::vec(inner.clone(), 0..4).prop_map(Bson::Array),
            proptest::collection::btree_map(prop_oneof![Just("x"), Just("y")], inner, 0..3)
                .prop_map(|m| Bson::Document(
                    m.into_iter().map(|(k, v)| (k.to_owned(), v)).collect()
                )),
        ]
    })
}

fn document() -> impl Strategy<Value = Document> {
    proptest::collection::btree_map(prop_oneof![Just("a"), Just("b"), Just("c")], value(), 0..4)
        .prop_map(|m| m.into_iter().map(|(k, v)| (k.to_owned(), v)).collect())
}

/// Key patterns: 1-2 fields with different top-level names, paths of 1-3 components.
fn pattern() -> impl Strategy<Value = Vec<(String, i32)>> {
    let path = |top: &'static str| {
        prop_oneof![
            Just(top.to_owned()),
            Just(format!("{top}.x")),
            Just(format!("{top}.y")),
            Just(format!("{top}.x.y")),
        ]
    };
    let direction = prop_oneof![Just(1), Just(-1)];
    prop_oneof![
        (path("a"), direction.clone()).prop_map(|f| vec![f]),
        (path("a"), direction.clone(), path("b"), direction)
            .prop_map(|(p, d, q, e)| vec![(p, d), (q, e)]),
    ]
}

/// One field's model: the values it contributes (each with whether it was found) and
/// whether its walk met an array.
fn model(value: &Bson, rest: &[&str]) -> (Vec<(Bson, bool)>, bool) {
    let Some((head, tail)) = rest.split_first() else {
        return match value {
            Bson::Array(items) if items.is_empty() => (vec![(Bson::Undefined, true)], true),
            Bson::Array(items) => (items.iter().map(|v| (v.clone(), true)).collect(), true),
            other => (vec![(other.clone(), true)], false),
        };
    };
    match value {
        Bson::Document(doc) => match doc.get(*head) {
            Some(inner) => model(inner, tail),
            None => (vec![(Bson::Null, false)], false),
        },
        Bson::Array(items) if items.is_empty() => (vec![(Bson::Null, false)], true),
        Bson::Array(items) => {
            let mut out = Vec::new();
            for item in items {
                match item {
                    Bson::Document(_) => out.extend(model(item, rest).0),
                    _ => out.push((Bson::Null, false)),
                }
            }
            (out, true)
        }
        _ => (vec![(Bson::Null, false)], false),
    }
}

fn encode(values: &[(Bson, i32)]) -> Vec<u8> {
    let holder: Document = values
        .iter()
        .enumerate()
        .map(|(i, (v, _))| (i.to_string(), v.clone()))
        .collect();
    let raw = bson::RawDocumentBuf::try_from(&holder).expect("raw");
    let fields: Vec<_> = values
        .iter()
        .enumerate()
        .map(|(i, (_, d))| {
            let direction = if *d < 0 {
                Direction::Descending
            } else {
                Direction::Ascending
            };
            (raw.get(i.to_string()).expect("get"), direction)
        })
        .collect();
    encode_compound(&fields)
}

/// The model's keys, or `None` for parallel arrays.
fn model_keys(
    doc: &Document,
    pattern: &[(String, i32)],
    sparse: bool,
) -> Option<(BTreeSet<Vec<u8>>, bool)> {
    let root = Bson::Document(doc.clone());
    let per_field: Vec<(Vec<(Bson, bool)>, bool)> = pattern
        .iter()
        .map(|(path, _)| model(&root, &path.split('.').collect::<Vec<_>>()))
        .collect();
    let arrays = per_field.iter().filter(|(_, touched)| *touched).count();
    if arrays > 1 {
        return None;
    }
    let mut tuples: Vec<Vec<(Bson, bool)>> = vec![Vec::new()];
    for (values, _) in &per_field {
        tuples = tuples
            .into_iter()
            .flat_map(|t| {
                values.iter().map(move |v| {
                    let mut t = t.clone();
                    t.push(v.clone());
                    t
                })
            })
            .collect();
    }
    let keys = tuples
        .into_iter()
        .filter(|t| !sparse || t.iter().any(|(_, found)| *found))
        .map(|t| {
            let with_directions: Vec<(Bson, i32)> = t
                .into_iter()
                .zip(pattern)
                .map(|((v, _), (_, d))| (v, *d))
                .collect();
            encode(&with_directions)
        })
        .collect();
    Some((keys, arrays == 1))
}

fn index(pattern: &[(String, i32)], sparse: bool) -> IndexSpec {
    let key: Document = pattern
        .iter()
        .map(|(p, d)| (p.clone(), Bson::Int32(*d)))
        .collect();
    let raw = bson::RawDocumentBuf::try_from(&doc! {"key": key, "name": "i", "sparse": sparse})
        .expect("raw");
    IndexSpec::parse(&raw, ParseOptions::default()).expect("spec")
}

/// The keys the planner looks up for an equality to `v`: `v`'s own key, and for an array
/// also its first element's (a document matches `{a: [1, 2]}` when an element of its array
/// equals `[1, 2]` or when the array itself does, and the index holds that array's
/// elements) or, for `[]`, undefined; for null also undefined (null matches undefined).
fn lookup_keys(v: &Bson) -> Vec<Vec<u8>> {
    let mut out = vec![encode(&[(v.clone(), 1)])];
    match v {
        Bson::Array(items) => match items.first() {
            Some(first) => out.push(encode(&[(first.clone(), 1)])),
            None => out.push(encode(&[(Bson::Undefined, 1)])),
        },
        Bson::Null => out.push(encode(&[(Bson::Undefined, 1)])),
        _ => {}
    }
    out
}

/// Values found inside a document, to make matching predicates likely.
fn values_in(value: &Bson, out: &mut Vec<Bson>) {
    out.push(value.clone());
    match value {
        Bson::Array(items) => items.iter().for_each(|v| values_in(v, out)),
        Bson::Document(doc) => doc.values().for_each(|v| values_in(v, out)),
        _ => {}
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(2000))]

    #[test]
    fn keys_equal_the_product_model(doc in document(), pattern in pattern(), sparse in any::<bool>()) {
        let spec = index(&pattern, sparse);
        let raw = bson::RawDocumentBuf::try_from(&doc).expect("raw");
        let got = generate(&spec, &raw);
        match model_keys(&doc, &pattern, sparse) {
            None => {
                let error = got.expect_err("parallel arrays refused");
                prop_assert_eq!(error.code().code(), 171);
            }
            Some((keys, multikey)) => {
                let got = got.expect("keys");
                prop_assert_eq!(got.is_multikey(), multikey);
                prop_assert_eq!(got.keys, keys.into_iter().collect::<Vec<_>>());
            }
        }
    }

    /// The fast path for documents without arrays on the key paths gives exactly what the
    /// general walk gives.
    #[test]
    fn simple_keys_equal_the_walk(doc in document(), pattern in pattern(), sparse in any::<bool>()) {
        let spec = index(&pattern, sparse);
        let raw = bson::RawDocumentBuf::try_from(&doc).expect("raw");
        let walked = crate::index::keys::walk_keys_for_tests(&spec, &raw);
        if let Some(simple) = crate::index::keys::simple_keys_for_tests(&spec, &raw) {
            let walked = walked.expect("the walk accepts what the fast path accepts");
            prop_assert!(!walked.is_multikey());
            prop_assert_eq!(&simple.keys, &walked.keys);
        }
        // The build's appending form: the same key after whatever the buffer held, or the
        // buffer untouched.
        let mut out = vec![7u8; 3];
        match crate::index::keys::append_simple_key(&spec, raw.as_bytes(), &mut out) {
            Some(true) => {
                let simple = crate::index::keys::simple_keys_for_tests(&spec, &raw);
                prop_assert_eq!(simple.map(|s| s.keys), Some(vec![out[3..].to_vec()]));
            }
            Some(false) => {
                prop_assert_eq!(&out, &vec![7u8; 3]);
                let keys = crate::index::keys::simple_keys_for_tests(&spec, &raw).map(|s| s.keys);
                prop_assert_eq!(keys, Some(Vec::<Vec<u8>>::new()));
            }
            None => {
                prop_assert_eq!(&out, &vec![7u8; 3]);
                prop_assert!(crate::index::keys::simple_keys_for_tests(&spec, &raw).is_none());
            }
        }
    }

    #[test]
    fn every_matching_document_has_a_looked_up_key(
        doc in document(),
        path in prop_oneof![Just("a"), Just("a.x"), Just("a.x.y")],
        pick in any::<prop::sample::Index>(),
        other in value(),
    ) {
        let mut candidates = vec![other];
        doc.values().for_each(|v| values_in(v, &mut candidates));
        let v = pick.get(&candidates).clone();
        let filter = bson::RawDocumentBuf::try_from(&doc! {path: v.clone()}).expect("filter");
        let filter = query::Filter::parse(&filter).expect("filter parses");
        let raw = bson::RawDocumentBuf::try_from(&doc).expect("raw");
        if filter.matches(&raw) {
            let keys = generate(&index(&[(path.to_owned(), 1)], false), &raw).expect("keys");
            let wanted = lookup_keys(&v);
            prop_assert!(
                keys.keys.iter().any(|k| wanted.contains(k)),
                "{:?} matches {{{}: {:?}}} but has none of the looked-up keys", doc, path, v
            );
        }
    }
}
