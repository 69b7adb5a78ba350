//! Tests of index specifications and key generation against mongod's rules; the cases come
//! from mongod's `btree_key_generator_test.cpp`, `hasher_test.cpp` and jstests
//! (`index_partial_create_drop.js`, `create_index_same_spec_different_name.js`,
//! `index_signature.js`, the TTL and hashed index tests).

use super::keys::{Keys, generate, index_keys};
use super::spec::{CreateOutcome, IndexSpec, ParseOptions, check_conflict, default_name};
use bson::{Bson, Document, doc};
use bson_canonical::key::{Direction, encode_compound};

fn parse(raw: Document) -> Result<IndexSpec, crate::error::Error> {
    let raw = bson::RawDocumentBuf::try_from(&raw).expect("raw");
    IndexSpec::parse(&raw, ParseOptions::default())
}

fn spec(raw: Document) -> IndexSpec {
    parse(raw).expect("valid spec")
}

fn code(raw: Document) -> i32 {
    parse(raw).map_or_else(|e| e.code().code(), |_| 0)
}

fn keys_of(index: &IndexSpec, doc: Document) -> Result<Keys, crate::error::Error> {
    let raw = bson::RawDocumentBuf::try_from(&doc).expect("raw");
    generate(index, &raw)
}

/// The encoded keys of the given value tuples, in the index's directions, sorted.
fn expected(index: &IndexSpec, tuples: Vec<Vec<Bson>>) -> Vec<Vec<u8>> {
    let mut out: Vec<Vec<u8>> = tuples
        .into_iter()
        .map(|tuple| {
            let holder: Document = tuple
                .iter()
                .enumerate()
                .map(|(i, v)| (i.to_string(), v.clone()))
                .collect();
            let raw = bson::RawDocumentBuf::try_from(&holder).expect("raw");
            let fields: Vec<_> = index
                .fields
                .iter()
                .enumerate()
                .map(|(i, f)| {
                    let direction = if f.kind == super::spec::KeyKind::Descending {
                        Direction::Descending
                    } else {
                        Direction::Ascending
                    };
                    (raw.get(i.to_string()).expect("get"), direction)
                })
                .collect();
            encode_compound(&fields)
        })
        .collect();
    out.sort();
    out.dedup();
    out
}

/// One key-generation case: index spec, document, the key tuples mongod generates.
fn check(index: Document, doc: Document, tuples: Vec<Vec<Bson>>) {
    let index = spec(index);
    let got = keys_of(&index, doc.clone()).expect("keys");
    assert_eq!(got.keys, expected(&index, tuples), "keys of {doc:?}");
}

fn error_of(index: Document, doc: Document) -> (i32, String) {
    let error = keys_of(&spec(index), doc).expect_err("an error");
    (error.code().code(), error.to_string())
}

#[test]
fn arrays_are_indexed_element_wise_and_keys_deduplicated() {
    let a = || doc! {"key": {"a": 1}, "name": "a_1"};
    check(
        a(),
        doc! {"a": [1, 2, 2, 1.0]},
        vec![vec![1.into()], vec![2.into()]],
    );
    check(a(), doc! {"a": 5}, vec![vec![5.into()]]);
    check(a(), doc! {"b": 5}, vec![vec![Bson::Null]]);
    check(a(), doc! {"a": null}, vec![vec![Bson::Null]]);
    check(a(), doc! {"a": []}, vec![vec![Bson::Undefined]]);
    // Arrays directly inside the indexed array are indexed whole.
    check(
        a(),
        doc! {"a": [[1, 2], 3]},
        vec![vec![Bson::Array(vec![1.into(), 2.into()])], vec![3.into()]],
    );
    let ab = || doc! {"key": {"a.b": 1}, "name": "ab"};
    check(
        ab(),
        doc! {"a": [{"b": 1}, {"b": 2}]},
        vec![vec![1.into()], vec![2.into()]],
    );
    // An element that is not a document has no `b`: null.
    check(
        ab(),
        doc! {"a": [1, {"b": 2}]},
        vec![vec![Bson::Null], vec![2.into()]],
    );
    // An empty array with path left: the rest is missing.
    check(ab(), doc! {"a": []}, vec![vec![Bson::Null]]);
    check(ab(), doc! {"a": [{"b": []}]}, vec![vec![Bson::Undefined]]);
    check(
        ab(),
        doc! {"a": [{"b": [7, 8]}]},
        vec![vec![7.into()], vec![8.into()]],
    );
    check(
        ab(),
        doc! {"a": {"b": {"c": 1}}},
        vec![vec![Bson::Document(doc! {"c": 1})]],
    );
}

#[test]
fn multikey_paths_name_the_expanded_components() {
    let index = spec(doc! {"key": {"a.b": 1, "c": 1}, "name": "x"});
    let k = keys_of(&index, doc! {"a": [{"b": 1}], "c": 2}).expect("keys");
    assert!(k.is_multikey());
    assert_eq!(
        k.multikey_paths[0].iter().copied().collect::<Vec<_>>(),
        vec![0]
    );
    assert!(k.multikey_paths[1].is_empty());
    let k = keys_of(&index, doc! {"a": {"b": [1]}, "c": 2}).expect("keys");
    assert_eq!(
        k.multikey_paths[0].iter().copied().collect::<Vec<_>>(),
        vec![1]
    );
    let k = keys_of(&index, doc! {"a": {"b": 1}, "c": 2}).expect("keys");
    assert!(!k.is_multikey());
    // {a: [1]} is multikey although it gives one key, as in mongod.
    let single = spec(doc! {"key": {"a": 1}, "name": "a_1"});
    assert!(
        keys_of(&single, doc! {"a": [1]})
            .expect("keys")
            .is_multikey()
    );
    assert!(
        keys_of(&single, doc! {"a": []})
            .expect("keys")
            .is_multikey()
    );
}

#[test]
fn compound_keys_expand_one_array_and_refuse_parallel_ones() {
    let ab = || doc! {"key": {"a": 1, "b": -1}, "name": "ab"};
    check(
        ab(),
        doc! {"a": [1, 2], "b": 5},
        vec![vec![1.into(), 5.into()], vec![2.into(), 5.into()]],
    );
    assert_eq!(
        error_of(ab(), doc! {"a": [1], "b": [2]}),
        (171, "cannot index parallel arrays [b] [a]".to_owned())
    );
    assert_eq!(
        error_of(
            doc! {"key": {"x.a": 1, "y.b": 1}, "name": "n"},
            doc! {"x": {"a": [1]}, "y": {"b": [1]}}
        )
        .0,
        171
    );
    // Two fields through the same array expand in lockstep (no cross product).
    check(
        doc! {"key": {"a.b": 1, "a.c": 1}, "name": "n"},
        doc! {"a": [{"b": 1, "c": 2}, {"b": 3, "c": 4}]},
        vec![vec![1.into(), 2.into()], vec![3.into(), 4.into()]],
    );
}

#[test]
fn sparse_indexes_skip_keys_whose_every_field_is_missing() {
    let sparse = || doc! {"key": {"a": 1, "b": 1}, "name": "ab", "sparse": true};
    check(sparse(), doc! {"c": 1}, vec![]);
    check(sparse(), doc! {"a": 1}, vec![vec![1.into(), Bson::Null]]);
    check(
        sparse(),
        doc! {"a": null},
        vec![vec![Bson::Null, Bson::Null]],
    );
    let one = || doc! {"key": {"a.b": 1}, "name": "ab", "sparse": true};
    check(
        one(),
        doc! {"a": [{"b": 1}, {"c": 2}]},
        vec![vec![1.into()]],
    );
    check(one(), doc! {"a": []}, vec![]);
    check(
        doc! {"key": {"a": 1}, "name": "a", "sparse": true},
        doc! {"a": []},
        vec![vec![Bson::Undefined]],
    );
}

#[test]
fn numeric_components_name_positions() {
    let first = || doc! {"key": {"a.0": 1}, "name": "a0"};
    check(first(), doc! {"a": [5, 6]}, vec![vec![5.into()]]);
    let index = spec(first());
    assert!(
        !keys_of(&index, doc! {"a": [5, 6]})
            .expect("keys")
            .is_multikey()
    );
    check(
        doc! {"key": {"a.0.b": 1}, "name": "n"},
        doc! {"a": [{"b": 1}, {"b": 2}]},
        vec![vec![1.into()]],
    );
    // No element at position 1: the component is a field name in every element.
    check(
        doc! {"key": {"a.1": 1}, "name": "n"},
        doc! {"a": [{"1": "x"}]},
        vec![vec!["x".into()]],
    );
    check(first(), doc! {"a": {"0": 9}}, vec![vec![9.into()]]);
    assert_eq!(error_of(first(), doc! {"a": [{"0": 1}]}).0, 16746);
}

#[test]
fn hashed_keys_are_mongods_hash_and_refuse_arrays() {
    let hashed = spec(doc! {"key": {"a": "hashed"}, "name": "a_hashed"});
    let k = keys_of(&hashed, doc! {"a": 42}).expect("keys");
    let want = expected(&hashed, vec![vec![Bson::Int64(-944302157085130861)]]);
    assert_eq!(k.keys, want);
    let null = keys_of(&hashed, doc! {}).expect("keys");
    let null_hash = super::hash::hash64(bson::RawBsonRef::Null, 0);
    assert_eq!(
        null.keys,
        expected(&hashed, vec![vec![Bson::Int64(null_hash)]])
    );
    let (code, message) = error_of(doc! {"key": {"a": "hashed"}, "name": "h"}, doc! {"a": [1]});
    assert_eq!(code, 16766);
    assert!(message.starts_with("Error: hashed indexes do not currently support array values"));
    assert_eq!(
        error_of(
            doc! {"key": {"a.b": "hashed"}, "name": "h"},
            doc! {"a": [{"b": 2}]}
        )
        .0,
        16766
    );
    assert_eq!(
        error_of(
            doc! {"key": {"b": 1, "a": "hashed"}, "name": "h"},
            doc! {"b": [1]}
        )
        .0,
        16766
    );
    let sparse = spec(doc! {"key": {"a": "hashed", "b": 1}, "name": "h", "sparse": true});
    assert!(
        keys_of(&sparse, doc! {"c": 1})
            .expect("keys")
            .keys
            .is_empty()
    );
}

#[test]
fn partial_indexes_hold_only_matching_documents() {
    let index =
        spec(doc! {"key": {"x": 1}, "name": "x_1", "partialFilterExpression": {"a": {"$lt": 5}}});
    let raw = |d: Document| bson::RawDocumentBuf::try_from(&d).expect("raw");
    assert_eq!(
        index_keys(&index, &raw(doc! {"x": 1, "a": 2}))
            .expect("keys")
            .keys
            .len(),
        1
    );
    assert!(
        index_keys(&index, &raw(doc! {"x": 1, "a": 7}))
            .expect("keys")
            .keys
            .is_empty()
    );
    assert!(
        index_keys(&index, &raw(doc! {"x": 1}))
            .expect("keys")
            .keys
            .is_empty()
    );
}

#[test]
fn default_names_are_the_drivers() {
    assert_eq!(default_name(&doc! {"a": 1, "b": -1}), "a_1_b_-1");
    assert_eq!(default_name(&doc! {"a": "hashed"}), "a_hashed");
    assert_eq!(default_name(&doc! {"$**": 1}), "$**_1");
    assert_eq!(default_name(&doc! {"a.b": 1.0, "c": -1.5}), "a.b_1_c_-1.5");
}

#[test]
fn specification_errors_carry_mongods_codes() {
    let k = |key: Document| doc! {"key": key, "name": "n"};
    for (raw, want) in [
        (doc! {"key": {"a": 1}}, 9),
        (doc! {"name": "a_1"}, 9),
        (doc! {"key": 1, "name": "n"}, 14),
        (k(doc! {}), 67),
        (k(doc! {"a": 0}), 67),
        (k(doc! {"a": f64::NAN}), 67),
        (k(doc! {"a": true}), 67),
        (k(doc! {"a": ""}), 67),
        (k(doc! {"a": "text"}), 238),
        (k(doc! {"a": "2d"}), 238),
        (k(doc! {"a": "2dsphere"}), 238),
        (k(doc! {"a": "geoHaystack"}), 67),
        (k(doc! {"a": "foo"}), 67),
        (k(doc! {"a": "hashed", "b": "2d"}), 67),
        (k(doc! {"a": "hashed", "b": "hashed"}), 31303),
        (
            doc! {"key": {"a": "hashed"}, "name": "n", "unique": true},
            16764,
        ),
        (k(doc! {"$a": 1}), 67),
        (k(doc! {"a..b": 1}), 67),
        (k(doc! {"a.$b": 1}), 67),
        (k(doc! {"_fts": 1}), 67),
        (doc! {"key": {"a": 1}, "name": "n", "foo": 1}, 197),
        (doc! {"key": {"a": 1}, "name": "n", "v": 3}, 67),
        (doc! {"key": {"a": 1}, "name": "n", "v": "2"}, 14),
        (doc! {"key": {"a": 1}, "name": "n", "v": 1.5}, 2),
        (doc! {"key": {"a": 1}, "name": 5}, 14),
        (doc! {"key": {"a": 1}, "name": ""}, 67),
        (doc! {"key": {"a": 1}, "name": "_id_"}, 2),
        (doc! {"key": {"a": 1}, "name": "*"}, 2),
        (doc! {"key": {"_id": -1}, "name": "n"}, 2),
        (
            doc! {"key": {"_id": 1}, "name": "_id_", "unique": true},
            197,
        ),
        (
            doc! {"key": {"_id": 1}, "name": "_id_", "hidden": true},
            197,
        ),
        (doc! {"key": {"a": 1}, "name": "n", "hidden": 1}, 14),
        (doc! {"key": {"a": 1}, "name": "n", "unique": "yes"}, 14),
        (
            doc! {"key": {"a": 1}, "name": "n", "collation": {"locale": "fr"}},
            238,
        ),
        (doc! {"key": {"a": 1}, "name": "n", "collation": {}}, 2),
        (
            doc! {"key": {"a": 1}, "name": "n", "collation": {"locale": "simple"}, "v": 1},
            67,
        ),
        (
            doc! {"key": {"a": 1}, "name": "n", "partialFilterExpression": {"a": 1}, "sparse": true},
            67,
        ),
        (
            doc! {"key": {"a": 1}, "name": "n", "partialFilterExpression": 5},
            14,
        ),
        (
            doc! {"key": {"a": 1}, "name": "n", "partialFilterExpression": {"a": {"$ne": 1}}},
            67,
        ),
        (
            doc! {"key": {"a": 1}, "name": "n", "partialFilterExpression": {"x": {"$asdasd": 3}}},
            2,
        ),
        (
            doc! {"key": {"a": 1}, "name": "n", "partialFilterExpression": {"$expr": {"$eq": ["$x", 5]}}},
            224,
        ),
        (doc! {"key": {"a": 1}, "name": "n", "weights": {"a": 1}}, 67),
        (
            doc! {"key": {"a": 1}, "name": "n", "wildcardProjection": {"a": 1}},
            2,
        ),
        (doc! {"key": {"a": 1}, "name": "n", "storageEngine": {}}, 67),
        (
            doc! {"key": {"a": 1}, "name": "n", "storageEngine": {"rocks": {}}},
            72,
        ),
        (
            doc! {"key": {"a": 1}, "name": "n", "unique": true, "prepareUnique": true},
            67,
        ),
        (
            doc! {"key": {"a": 1}, "name": "n", "clustered": false},
            6492800,
        ),
        (
            doc! {"key": {"a": 1}, "name": "n", "clustered": true, "unique": true},
            6479600,
        ),
    ] {
        assert_eq!(code(raw.clone()), want, "{raw:?}");
    }
    let fields: Document = (0..32).map(|i| (format!("f{i}"), Bson::Int32(1))).collect();
    assert_eq!(code(k(fields.clone())), 0);
    let mut over = fields;
    over.insert("f32", 1);
    assert_eq!(code(k(over)), 13103);
    assert_eq!(code(k(doc! {"a.$id": 1, "b": -2.5, "c": "hashed"})), 0);
    assert_eq!(
        code(
            doc! {"key": {"a": 1}, "name": "n", "partialFilterExpression": {"a": {"$gt": 1}}, "sparse": false}
        ),
        0
    );
}

#[test]
fn duplicate_key_fields_are_bad_value() {
    let cstr = |s: &str| bson::raw::CString::try_from(s).expect("name");
    let mut raw = bson::RawDocumentBuf::new();
    let mut key = bson::RawDocumentBuf::new();
    key.append(cstr("a"), 1);
    key.append(cstr("a"), -1);
    raw.append(cstr("key"), key);
    raw.append(cstr("name"), "n");
    let error = IndexSpec::parse(&raw, ParseOptions::default()).expect_err("refused");
    assert_eq!(error.code().code(), 2);
    assert!(
        error
            .to_string()
            .contains("The field 'a' appears multiple times"),
        "{error}"
    );
}

#[test]
fn unknown_options_are_197_unless_ignored() {
    let raw = bson::RawDocumentBuf::try_from(&doc! {"key": {"a": 1}, "name": "n", "foo": 1})
        .expect("raw");
    let error = IndexSpec::parse(&raw, ParseOptions::default()).expect_err("refused");
    assert_eq!(
        error.to_string(),
        "Error in specification { key: { a: 1 }, name: \"n\", foo: 1 } :: caused by :: The field \
         'foo' is not valid for an index specification. Specification: { key: { a: 1 }, name: \
         \"n\", foo: 1 }"
    );
    let ignoring = ParseOptions {
        ignore_unknown_options: true,
    };
    let spec = IndexSpec::parse(&raw, ignoring).expect("unknown option dropped");
    assert!(!spec.stored.contains_key("foo"));
}

#[test]
fn ttl_rules_follow_validate_index_spec_ttl() {
    let ttl = |value: Bson| doc! {"key": {"d": 1}, "name": "d_1", "expireAfterSeconds": value};
    for (value, want) in [
        (Bson::Int32(0), 0),
        (Bson::Int32(i32::MAX), 0),
        (Bson::Double(3600.5), 0),
        (Bson::Int32(-1), 67),
        (Bson::Int64(i64::from(i32::MAX) + 1), 67),
        (Bson::Double(1e20), 67),
        (Bson::Double(f64::NAN), 67),
        (Bson::String("60".into()), 67),
    ] {
        assert_eq!(code(ttl(value.clone())), want, "{value:?}");
    }
    let message = parse(ttl(Bson::Int32(-1)))
        .expect_err("negative")
        .to_string();
    assert!(
        message.ends_with("TTL index 'expireAfterSeconds' option cannot be less than 0"),
        "{message}"
    );
    assert_eq!(
        code(doc! {"key": {"a": 1, "b": 1}, "name": "n", "expireAfterSeconds": 10}),
        67
    );
    assert_eq!(
        code(doc! {"key": {"_id": 1}, "name": "_id_", "expireAfterSeconds": 10}),
        197
    );
}

#[test]
fn stored_and_listed_forms_follow_mongods_field_order() {
    let index = spec(doc! {
        "name": "a_1", "key": {"a": 1}, "expireAfterSeconds": 3600.0, "sparse": 1,
        "unique": 1, "background": true, "hidden": false, "collation": {"locale": "simple"},
    });
    assert_eq!(
        index.stored,
        doc! {"v": 2, "unique": true, "key": {"a": 1}, "name": "a_1", "expireAfterSeconds": 3600.0, "sparse": 1, "background": true}
    );
    assert_eq!(
        index.list_entry(),
        doc! {"v": 2, "key": {"a": 1}, "name": "a_1", "background": true, "unique": true, "sparse": true, "expireAfterSeconds": 3600}
    );
    assert_eq!(
        IndexSpec::id_index().list_entry(),
        doc! {"v": 2, "key": {"_id": 1}, "name": "_id_"}
    );
}

#[test]
fn conflicts_are_85_and_86_and_identical_indexes_are_no_ops() {
    let existing = vec![
        IndexSpec::id_index(),
        spec(doc! {"key": {"x": 1}, "name": "x_1"}),
    ];
    let outcome = |raw: Document| {
        check_conflict("db.c", &spec(raw), &existing).map_err(|e| (e.code().code(), e.to_string()))
    };
    assert_eq!(
        outcome(doc! {"key": {"x": 1}, "name": "x_1"}),
        Ok(CreateOutcome::AlreadyExists)
    );
    assert_eq!(
        outcome(doc! {"key": {"x": 1.0}, "name": "x_1", "hidden": true}),
        Ok(CreateOutcome::AlreadyExists)
    );
    assert_eq!(
        outcome(doc! {"key": {"x": 1}, "name": "x_1", "background": true}),
        Ok(CreateOutcome::AlreadyExists)
    );
    assert_eq!(
        outcome(doc! {"key": {"x": -1}, "name": "x_1"}).map_err(|e| e.0),
        Err(86)
    );
    assert_eq!(
        outcome(doc! {"key": {"x": 1}, "name": "x_1", "unique": true}).map_err(|e| e.0),
        Err(86)
    );
    assert_eq!(
        outcome(doc! {"key": {"x": 1}, "name": "x_1", "expireAfterSeconds": 5}).map_err(|e| e.0),
        Err(85)
    );
    assert_eq!(
        outcome(doc! {"key": {"x": 1}, "name": "x_2"}),
        Err((
            85,
            "Index already exists with a different name: x_1".to_owned()
        ))
    );
    assert_eq!(
        outcome(doc! {"key": {"x": 1}, "name": "x_2", "expireAfterSeconds": 5}).map_err(|e| e.0),
        Err(85)
    );
    // A different signature (unique, sparse, partial filter) may share the key pattern.
    assert_eq!(
        outcome(doc! {"key": {"x": 1}, "name": "x_u", "unique": true}),
        Ok(CreateOutcome::Create)
    );
    assert_eq!(
        outcome(doc! {"key": {"x": 1}, "name": "p", "partialFilterExpression": {"a": {"$lt": 5}}}),
        Ok(CreateOutcome::Create)
    );
    assert_eq!(
        outcome(doc! {"key": {"y": 1}, "name": "y_1"}),
        Ok(CreateOutcome::Create)
    );
    let full: Vec<IndexSpec> = (0..64)
        .map(|i| spec(doc! {"key": {format!("f{i}"): 1}, "name": format!("f{i}")}))
        .collect();
    let error = check_conflict("db.c", &spec(doc! {"key": {"z": 1}, "name": "z"}), &full)
        .expect_err("full");
    assert_eq!(error.code().code(), 67);
}
