//! Tests of wildcard index specifications and keys: the key cases are the facts of mongod's
//! `wildcard_key_generator_test.cpp` (full document, single subtree, inclusion, exclusion,
//! `_id` rules, dotted field names), the specification cases those of
//! `wildcard_index_validindex.js` and `wildcard_validation.cpp`.

use super::keys::generate;
use super::spec::{Comparison, IndexSpec, ParseOptions};
use bson::{Bson, Document, doc};
use bson_canonical::key::{Direction, encode_field_into};
use std::collections::BTreeSet;

fn parse(raw: Document) -> Result<IndexSpec, crate::error::Error> {
    let raw = bson::RawDocumentBuf::try_from(&raw).expect("raw");
    IndexSpec::parse(&raw, ParseOptions::default())
}

fn index(key: Document, projection: Option<Document>) -> IndexSpec {
    let mut spec = doc! {"key": key, "name": "w"};
    if let Some(projection) = projection {
        spec.insert("wildcardProjection", projection);
    }
    parse(spec).expect("valid wildcard spec")
}

/// The encoded key `(path, value)`, ascending.
fn key(path: &str, value: Bson) -> Vec<u8> {
    let holder = bson::RawDocumentBuf::try_from(&doc! {"v": value}).expect("raw");
    let mut out = Vec::new();
    encode_field_into(
        Some(bson::RawBsonRef::String(path)),
        Direction::Ascending,
        &mut out,
    );
    encode_field_into(
        holder.get("v").expect("get"),
        Direction::Ascending,
        &mut out,
    );
    out
}

/// Checks the keys and multikey paths `doc` gives `spec` against mongod's expectations.
fn check(spec: &IndexSpec, doc: Document, keys: Vec<(&str, Bson)>, multikey: &[&str]) {
    let raw = bson::RawDocumentBuf::try_from(&doc).expect("raw");
    let got = generate(spec, &raw).expect("keys");
    let mut want: Vec<Vec<u8>> = keys.into_iter().map(|(p, v)| key(p, v)).collect();
    want.sort();
    want.dedup();
    let shown =
        |keys: &[Vec<u8>]| -> Vec<String> { keys.iter().map(|k| format!("{k:?}")).collect() };
    assert_eq!(
        shown(&got.keys),
        shown(&want),
        "keys of {doc:?} in {:?}",
        spec.stored
    );
    let multikey: BTreeSet<String> = multikey.iter().map(|p| (*p).to_owned()).collect();
    assert_eq!(got.wildcard_multikey, multikey, "multikey paths of {doc:?}");
}

/// mongod's shared test document.
fn big() -> Document {
    doc! {
        "a": [1, 2, {"b": "one", "c": 2}, {"c": 2, "d": 3}, {"c": "two", "d": 3, "e": [4, 5]},
              [6, 7, {"f": 8}]],
        "g": {"h": {"i": 9, "j": [10, {"k": 11}, {"k": [11.5]}], "k": 12.0}},
        "l": "string",
    }
}

fn nested() -> Bson {
    Bson::Array(vec![6.into(), 7.into(), Bson::Document(doc! {"f": 8})])
}

fn i(n: i32) -> Bson {
    Bson::Int32(n)
}

fn s(text: &str) -> Bson {
    Bson::String(text.to_owned())
}

#[test]
fn full_document_keys_follow_mongods_generator() {
    let all = index(doc! {"$**": 1}, None);
    check(&all, doc! {"a": 1}, vec![("a", i(1))], &[]);
    check(
        &all,
        doc! {"a": {"b": "one", "c": 2}},
        vec![("a.b", s("one")), ("a.c", i(2))],
        &[],
    );
    check(
        &all,
        doc! {"a": 1, "b": {}},
        vec![("a", i(1)), ("b", Bson::Document(doc! {}))],
        &[],
    );
    // Empty arrays index as undefined, but one nested in an array is a value.
    check(
        &all,
        doc! {"a": [], "b": {"c": []}, "d": [[], {"e": []}]},
        vec![
            ("a", Bson::Undefined),
            ("b.c", Bson::Undefined),
            ("d", Bson::Array(vec![])),
            ("d.e", Bson::Undefined),
        ],
        &["a", "b.c", "d", "d.e"],
    );
    check(
        &all,
        doc! {"a": [1, 2, {"b": "one", "c": 2}, {"c": 2, "d": 3}, {"d": 3}], "e": []},
        vec![
            ("a", i(1)),
            ("a", i(2)),
            ("a.b", s("one")),
            ("a.c", i(2)),
            ("a.d", i(3)),
            ("e", Bson::Undefined),
        ],
        &["a", "e"],
    );
    check(
        &all,
        big(),
        vec![
            ("a", i(1)),
            ("a", i(2)),
            ("a", nested()),
            ("a.b", s("one")),
            ("a.c", i(2)),
            ("a.c", s("two")),
            ("a.d", i(3)),
            ("a.e", i(4)),
            ("a.e", i(5)),
            ("g.h.i", i(9)),
            ("g.h.j", i(10)),
            ("g.h.j.k", i(11)),
            ("g.h.j.k", Bson::Double(11.5)),
            ("g.h.k", Bson::Double(12.0)),
            ("l", s("string")),
        ],
        &["a", "a.e", "g.h.j", "g.h.j.k"],
    );
}

fn g_subtree() -> Vec<(&'static str, Bson)> {
    vec![
        ("g.h.i", i(9)),
        ("g.h.j", i(10)),
        ("g.h.j.k", i(11)),
        ("g.h.j.k", Bson::Double(11.5)),
        ("g.h.k", Bson::Double(12.0)),
    ]
}

#[test]
fn a_subtree_or_an_inclusion_indexes_only_its_paths() {
    for spec in [
        index(doc! {"g.$**": 1}, None),
        index(doc! {"g.h.$**": 1}, None),
        index(doc! {"$**": 1}, Some(doc! {"g": 1})),
        index(doc! {"$**": 1}, Some(doc! {"g.h": 1})),
        index(doc! {"$**": 1}, Some(doc! {"g": {"h": true}})),
    ] {
        check(&spec, big(), g_subtree(), &["g.h.j", "g.h.j.k"]);
    }
    for spec in [
        index(doc! {"g.h.j.$**": 1}, None),
        index(doc! {"$**": 1}, Some(doc! {"g.h.j": 1})),
    ] {
        check(
            &spec,
            big(),
            vec![
                ("g.h.j", i(10)),
                ("g.h.j.k", i(11)),
                ("g.h.j.k", Bson::Double(11.5)),
            ],
            &["g.h.j", "g.h.j.k"],
        );
    }
    // Projected through the `a` array: its documents without `e` become `{}`, its scalars
    // and the array nested in it are dropped.
    for spec in [
        index(doc! {"a.e.$**": 1}, None),
        index(doc! {"$**": 1}, Some(doc! {"a.e": 1})),
    ] {
        check(
            &spec,
            big(),
            vec![("a", Bson::Document(doc! {})), ("a.e", i(4)), ("a.e", i(5))],
            &["a", "a.e"],
        );
    }
    let several = index(
        doc! {"$**": 1},
        Some(doc! {"a.b": 1, "a.c": 1, "a.e": 1, "g.h.i": 1}),
    );
    check(
        &several,
        big(),
        vec![
            ("a.b", s("one")),
            ("a.c", i(2)),
            ("a.c", s("two")),
            ("a.e", i(4)),
            ("a.e", i(5)),
            ("g.h.i", i(9)),
        ],
        &["a", "a.e"],
    );
}

fn a_keys() -> Vec<(&'static str, Bson)> {
    vec![
        ("a", i(1)),
        ("a", i(2)),
        ("a", nested()),
        ("a.b", s("one")),
        ("a.c", i(2)),
        ("a.c", s("two")),
        ("a.d", i(3)),
        ("a.e", i(4)),
        ("a.e", i(5)),
    ]
}

#[test]
fn an_exclusion_drops_its_paths_and_keeps_the_rest() {
    let mut keys = a_keys();
    keys.push(("l", s("string")));
    check(
        &index(doc! {"$**": 1}, Some(doc! {"g": 0})),
        big(),
        keys.clone(),
        &["a", "a.e"],
    );
    let mut with_g = keys.clone();
    with_g.push(("g", Bson::Document(doc! {})));
    check(
        &index(doc! {"$**": 1}, Some(doc! {"g.h": 0})),
        big(),
        with_g,
        &["a", "a.e"],
    );
    let mut without_j = keys.clone();
    without_j.extend([("g.h.i", i(9)), ("g.h.k", Bson::Double(12.0))]);
    check(
        &index(doc! {"$**": 1}, Some(doc! {"g.h.j": 0})),
        big(),
        without_j,
        &["a", "a.e"],
    );
    let mut without_ae: Vec<(&str, Bson)> =
        a_keys().into_iter().filter(|(p, _)| *p != "a.e").collect();
    without_ae.extend(g_subtree());
    without_ae.push(("l", s("string")));
    check(
        &index(doc! {"$**": 1}, Some(doc! {"a.e": 0})),
        big(),
        without_ae,
        &["a", "g.h.j", "g.h.j.k"],
    );
    let mut several = vec![
        ("a", i(1)),
        ("a", i(2)),
        ("a", Bson::Document(doc! {})),
        ("a", nested()),
        ("a.d", i(3)),
        ("g.h.j", i(10)),
        ("g.h.j.k", i(11)),
        ("g.h.j.k", Bson::Double(11.5)),
        ("g.h.k", Bson::Double(12.0)),
    ];
    several.push(("l", s("string")));
    check(
        &index(
            doc! {"$**": 1},
            Some(doc! {"a.b": 0, "a.c": 0, "a.e": 0, "g.h.i": 0}),
        ),
        big(),
        several,
        &["a", "g.h.j", "g.h.j.k"],
    );
}

fn id_doc() -> Document {
    doc! {
        "_id": {"id1": 1, "id2": 2},
        "a": [1, {"b": 1, "e": [4]}, [6, 7, {"f": 8}]],
        "g": {"h": {"i": 9, "k": 12.0}},
    }
}

#[test]
fn id_is_left_out_unless_the_projection_names_it() {
    let a = vec![("a", i(1)), ("a", nested()), ("a.b", i(1)), ("a.e", i(4))];
    let g = vec![("g.h.i", i(9)), ("g.h.k", Bson::Double(12.0))];
    let ids = vec![("_id.id1", i(1)), ("_id.id2", i(2))];
    let both = [a.clone(), g.clone()].concat();
    check(&index(doc! {"$**": 1}, None), id_doc(), both, &["a", "a.e"]);
    check(
        &index(doc! {"a.$**": 1}, None),
        id_doc(),
        a.clone(),
        &["a", "a.e"],
    );
    check(
        &index(doc! {"_id.$**": 1}, None),
        id_doc(),
        ids.clone(),
        &[],
    );
    check(
        &index(doc! {"_id.id1.$**": 1}, None),
        id_doc(),
        vec![("_id.id1", i(1))],
        &[],
    );
    check(
        &index(doc! {"$**": 1}, Some(doc! {"a": 1})),
        id_doc(),
        a.clone(),
        &["a", "a.e"],
    );
    check(
        &index(doc! {"$**": 1}, Some(doc! {"_id.id1": 1})),
        id_doc(),
        vec![("_id.id1", i(1))],
        &[],
    );
    check(
        &index(doc! {"$**": 1}, Some(doc! {"a": 0})),
        id_doc(),
        g.clone(),
        &[],
    );
    check(
        &index(doc! {"$**": 1}, Some(doc! {"_id.id1": 0})),
        id_doc(),
        [vec![("_id.id2", i(2))], a.clone(), g.clone()].concat(),
        &["a", "a.e"],
    );
    check(
        &index(doc! {"$**": 1}, Some(doc! {"_id": 1, "a": 1})),
        id_doc(),
        [ids.clone(), a.clone()].concat(),
        &["a", "a.e"],
    );
    check(
        &index(doc! {"$**": 1}, Some(doc! {"_id": 0, "a": 1})),
        id_doc(),
        a,
        &["a", "a.e"],
    );
    check(
        &index(doc! {"$**": 1}, Some(doc! {"_id": 1, "a": 0})),
        id_doc(),
        [ids, g].concat(),
        &[],
    );
}

#[test]
fn dotted_field_names_are_not_indexed() {
    let all = index(doc! {"$**": 1}, None);
    check(
        &all,
        doc! {
            "a.b": 0, ".b": 1, "b.": 2,
            "a": {".b": 3, "b.": 4, "b.c": 5, "q": 6},
            "b": [{"d.e": 7}, {"r": 8}, [{"a.b": 9}]],
            "c": 10,
        },
        vec![
            ("a.q", i(6)),
            ("b.r", i(8)),
            ("b", Bson::Array(vec![Bson::Document(doc! {"a.b": 9})])),
            ("c", i(10)),
        ],
        &["b"],
    );
    check(
        &index(doc! {"a.b.$**": 1}, None),
        doc! {"a.b": 0},
        vec![],
        &[],
    );
}

#[test]
fn values_keep_their_types_and_a_document_without_paths_has_no_key() {
    let all = index(doc! {"$**": 1}, None);
    check(
        &all,
        doc! {"a": [1, Bson::Null, {"d": bson::DateTime::from_millis(5)}], "u": Bson::Undefined},
        vec![
            ("a", i(1)),
            ("a", Bson::Null),
            ("a.d", Bson::DateTime(bson::DateTime::from_millis(5))),
            ("u", Bson::Undefined),
        ],
        &["a"],
    );
    check(&all, doc! {"_id": 1}, vec![], &[]);
    check(&index(doc! {"x.$**": 1}, None), doc! {"a": 1}, vec![], &[]);
    // An inclusion through a scalar or an array of scalars: the scalar is dropped, the
    // array left empty (and indexed as undefined), a document left empty.
    let through = index(doc! {"$**": 1}, Some(doc! {"a.b": 1}));
    check(&through, doc! {"a": 5}, vec![], &[]);
    check(
        &through,
        doc! {"a": [5]},
        vec![("a", Bson::Undefined)],
        &["a"],
    );
    check(
        &through,
        doc! {"a": {"c": 1}},
        vec![("a", Bson::Document(doc! {}))],
        &[],
    );
}

#[test]
fn a_descending_wildcard_orders_values_descending() {
    let spec = index(doc! {"$**": -1}, None);
    let raw = bson::RawDocumentBuf::try_from(&doc! {"a": 1}).expect("raw");
    let got = generate(&spec, &raw).expect("keys");
    let mut want = Vec::new();
    encode_field_into(
        Some(bson::RawBsonRef::String("a")),
        Direction::Ascending,
        &mut want,
    );
    encode_field_into(
        Some(bson::RawBsonRef::Int32(1)),
        Direction::Descending,
        &mut want,
    );
    assert_eq!(got.keys, vec![want]);
}

#[test]
fn the_projection_says_which_paths_a_query_may_use() {
    let covers = |key: Document, projection: Option<Document>, path: &str| {
        index(key, projection)
            .wildcard
            .expect("a wildcard index")
            .covers(path)
    };
    assert!(covers(doc! {"$**": 1}, None, "a.b"));
    assert!(!covers(doc! {"$**": 1}, None, "_id"));
    assert!(!covers(doc! {"$**": 1}, None, "_id.x"));
    assert!(covers(doc! {"a.$**": 1}, None, "a"));
    assert!(covers(doc! {"a.$**": 1}, None, "a.b"));
    assert!(!covers(doc! {"a.$**": 1}, None, "ab"));
    assert!(!covers(doc! {"a.b.$**": 1}, None, "a"));
    let inclusion = Some(doc! {"_id": 1, "subpath": 1});
    assert!(covers(doc! {"$**": 1}, inclusion.clone(), "_id"));
    assert!(covers(doc! {"$**": 1}, inclusion.clone(), "subpath.abc"));
    assert!(!covers(doc! {"$**": 1}, inclusion, "abc"));
    let exclusion = Some(doc! {"a.b": 0});
    assert!(covers(doc! {"$**": 1}, exclusion.clone(), "a"));
    assert!(!covers(doc! {"$**": 1}, exclusion.clone(), "a.b"));
    assert!(!covers(doc! {"$**": 1}, exclusion.clone(), "a.b.c"));
    assert!(covers(doc! {"$**": 1}, exclusion, "a.c"));
    assert!(!covers(doc! {"$**": 1}, Some(doc! {"a.e": 1}), "a"));
}

fn code(raw: Document) -> i32 {
    parse(raw).map_or_else(|e| e.code().code(), |_| 0)
}

#[test]
fn wildcard_specifications_are_checked_as_mongod_checks_them() {
    let k = |key: Document| doc! {"key": key, "name": "n"};
    let p =
        |projection: Bson| doc! {"key": {"$**": 1}, "name": "n", "wildcardProjection": projection};
    for (raw, want) in [
        (k(doc! {"$**": 1}), 0),
        (k(doc! {"$**": -1}), 0),
        (k(doc! {"a.$**": 1}), 0),
        (k(doc! {"a.b.$**": 1.5}), 0),
        (k(doc! {"$**": 0}), 67),
        (k(doc! {"$**": "hashed"}), 67),
        (k(doc! {"$**": "2dsphere"}), 67),
        (k(doc! {"a.$**": "text"}), 67),
        (k(doc! {"$**": "wildcard"}), 67),
        (k(doc! {"a": "wildcard"}), 7246202),
        (k(doc! {"$**": "hello"}), 67),
        (k(doc! {"a.$**.$**": 1}), 67),
        (k(doc! {"$**.$**": 1}), 67),
        (k(doc! {"a.$**": 1, "$**": 1}), 7246201),
        (k(doc! {"a.$**": 1, "a.b": 1}), 7246204),
        (k(doc! {"a": 1, "$**": 1}), 67),
        (k(doc! {"a": 1, "b.$**": 1}), 238),
        (doc! {"key": {"$**": 1}, "name": "n", "sparse": true}, 67),
        (doc! {"key": {"$**": 1}, "name": "n", "unique": true}, 67),
        (
            doc! {"key": {"$**": 1}, "name": "n", "expireAfterSeconds": 10},
            67,
        ),
        (doc! {"key": {"$**": 1}, "name": "n", "v": 1}, 67),
        (
            doc! {"key": {"$**": 1}, "name": "n", "partialFilterExpression": {"a": {"$gt": 0}}},
            0,
        ),
        (p(Bson::Document(doc! {"a": 1, "b": 1})), 0),
        (p(Bson::Document(doc! {"a": 0, "b": 0})), 0),
        (p(Bson::Document(doc! {"_id": 1, "a": 0})), 0),
        (p(Bson::Document(doc! {"_id": 0, "a": 1})), 0),
        (p(Bson::Document(doc! {"a": 1, "b": 0})), 31254),
        (p(Bson::Document(doc! {"a": 0, "b": 1})), 31253),
        (p(Bson::Document(doc! {"a": 1, "b": "string"})), 51271),
        (p(Bson::Document(doc! {"a": {"$add": [1, 2]}})), 51271),
        (p(Bson::Document(doc! {"a": {}})), 51270),
        (p(Bson::Document(doc! {"a": 1, "a.b": 1})), 31249),
        (p(Bson::Document(doc! {"a.b": 1, "a": 1})), 31250),
        (p(Bson::Document(doc! {"$a": 1})), 16410),
        (p(Bson::Document(doc! {})), 9),
        (p(Bson::String("string".into())), 14),
        (
            doc! {"key": {"a.$**": 1}, "name": "n", "wildcardProjection": {"a": 1}},
            9,
        ),
        (
            doc! {"key": {"a": 1}, "name": "n", "wildcardProjection": {"a": 1}},
            2,
        ),
        (
            doc! {"key": {"$**": "text"}, "name": "n", "wildcardProjection": {"a": 1}},
            2,
        ),
        // Compound: mongod's projection rules first, then this server's 238.
        (
            doc! {"key": {"a": 1, "$**": 1}, "name": "n", "wildcardProjection": {"a": 0}},
            238,
        ),
        (
            doc! {"key": {"a": 1, "$**": 1}, "name": "n", "wildcardProjection": {"a": 1}},
            7246208,
        ),
        (
            doc! {"key": {"a": 1, "$**": 1}, "name": "n", "wildcardProjection": {"b": 0}},
            7246209,
        ),
        (
            doc! {"key": {"z": 1, "$**": 1}, "name": "n", "wildcardProjection": {"a": 0}},
            7246210,
        ),
        (
            doc! {"key": {"a": 1, "$**": 1}, "name": "n", "wildcardProjection": {"b": 1, "b.c": 1}},
            7246200,
        ),
    ] {
        assert_eq!(code(raw.clone()), want, "{raw:?}");
    }
    let error = parse(p(Bson::Document(doc! {"a": 1, "b": 0}))).expect_err("mixed");
    assert_eq!(
        error.to_string(),
        "Error in specification { key: { $**: 1 }, name: \"n\", wildcardProjection: { a: 1, b: \
         0 } } :: caused by :: Failed to parse projection: wildcardProjection :: caused by :: \
         Cannot do exclusion on field b in inclusion projection"
    );
    let error = parse(doc! {"key": {"$**": 1}, "name": "n", "sparse": true}).expect_err("sparse");
    assert!(
        error
            .to_string()
            .ends_with("Index type 'wildcard' does not support the sparse option"),
        "{error}"
    );
}

#[test]
fn the_projection_is_part_of_the_signature() {
    let with = |projection: Option<Document>| index(doc! {"$**": 1}, projection);
    let a = with(Some(doc! {"a": 1}));
    assert_eq!(
        a.compare(&with(Some(doc! {"a": true}))),
        Comparison::Identical
    );
    assert_eq!(
        a.compare(&with(Some(doc! {"a": 1.0}))),
        Comparison::Identical
    );
    assert_eq!(a.compare(&with(Some(doc! {"b": 1}))), Comparison::Different);
    assert_eq!(a.compare(&with(None)), Comparison::Different);
    assert_eq!(with(None).compare(&with(None)), Comparison::Identical);
    // The listing keeps the projection as it was submitted (mongod 6.3 and later).
    assert_eq!(
        a.list_entry(),
        doc! {"v": 2, "key": {"$**": 1}, "name": "w", "wildcardProjection": {"a": 1}}
    );
}
