//! Data-driven sort cases: (documents, sort spec, limit, expected id order).

use crate::support::raw;
use bson::{Bson, Document, doc};
use query::{SortSpec, top_k};

#[track_caller]
fn check(docs: &[Document], spec: Document, limit: Option<usize>, expected: &[i32]) {
    let spec = SortSpec::parse(&raw(&spec)).expect("sort parses");
    let raws: Vec<_> = docs.iter().map(raw).collect();
    let sorted = spec.sort(raws.iter(), limit, |d| d.as_ref());
    let got: Vec<i32> = sorted
        .iter()
        .map(|d| d.get_i32("_id").expect("int _id"))
        .collect();
    assert_eq!(got, expected, "sort {spec:?} limit {limit:?}");
}

fn docs() -> Vec<Document> {
    vec![
        doc! {"_id": 1, "a": 3},
        doc! {"_id": 2, "a": [1, 5]},
        doc! {"_id": 3},
        doc! {"_id": 4, "a": Bson::Null},
        doc! {"_id": 5, "a": "x"},
        doc! {"_id": 6, "a": []},
        doc! {"_id": 7, "a": 2.5},
        doc! {"_id": 8, "a": {"b": 1}},
        doc! {"_id": 9, "a": [[0], 4]},
    ]
}

#[test]
fn multikey_and_missing() {
    let d = docs();
    // Manual, "cursor.sort()": an array sorts by its smallest element ascending
    // and its largest descending; missing sorts as null (ties keep input
    // order); an empty array sorts below null.
    check(&d, doc! {"a": 1}, None, &[6, 3, 4, 2, 7, 1, 9, 5, 8]);
    check(&d, doc! {"a": -1}, None, &[9, 8, 5, 2, 1, 7, 3, 4, 6]);
    check(&d, doc! {"a": 1}, Some(3), &[6, 3, 4]);
    check(&d, doc! {"a": -1}, Some(2), &[9, 8]);
    check(&d, doc! {"a": 1}, Some(0), &[]);
    check(&d, doc! {}, None, &[1, 2, 3, 4, 5, 6, 7, 8, 9]);
    check(
        &d,
        doc! {"a.b": 1, "_id": -1},
        None,
        &[9, 7, 6, 5, 4, 3, 2, 1, 8],
    );
}

#[test]
fn compound_and_nested() {
    let d = vec![
        doc! {"_id": 1, "x": 1, "y": "b"},
        doc! {"_id": 2, "x": 1, "y": "a"},
        doc! {"_id": 3, "x": 0, "y": "c"},
        doc! {"_id": 4, "x": 1.0, "y": "a"},
        doc! {"_id": 5, "x": [{"z": 3}, {"z": 1}]},
        doc! {"_id": 6, "x": {"z": 2}},
    ];
    // Element documents sort in the object bracket, above every number.
    check(&d, doc! {"x": 1, "y": 1}, None, &[3, 2, 4, 1, 5, 6]);
    check(&d, doc! {"x": 1, "y": -1}, None, &[3, 1, 2, 4, 5, 6]);
    check(&d, doc! {"y": 1, "_id": -1}, None, &[6, 5, 4, 2, 1, 3]);
    check(&d, doc! {"x.z": 1}, None, &[1, 2, 3, 4, 5, 6]);
    check(&d, doc! {"x.z": -1}, None, &[5, 6, 1, 2, 3, 4]);
    check(&d, doc! {"x.z": 1}, Some(5), &[1, 2, 3, 4, 5]);
}

#[test]
fn bad_sort_specs_are_refused() {
    for (spec, code) in [
        (doc! {"a": 2}, 15975),
        (doc! {"a": "x"}, 15975),
        (doc! {"a": 0}, 15975),
        (doc! {"a": {"$meta": "textScore"}}, 2),
        (doc! {"": 1}, 40352),
        (doc! {"a..b": 1}, 40352),
    ] {
        let e = SortSpec::parse(&raw(&spec)).expect_err("refused");
        assert_eq!(e.code(), code, "{spec}");
    }
    assert!(SortSpec::parse(&raw(&doc! {"a": 1.0, "b": -1_i64})).is_ok());
}

#[test]
fn top_k_equals_full_sort_prefix() {
    let values: Vec<u64> = (0..5000u64).map(|i| (i * 7919) % 1013).collect();
    for limit in [1, 2, 20, 100, 1013, 6000] {
        let mut full: Vec<(u64, usize)> = values.iter().copied().zip(0..).collect();
        full.sort();
        full.truncate(limit);
        let keyed: Vec<(u64, usize)> = values.iter().copied().zip(0..).collect();
        let top = top_k(keyed, Some(limit), |a, b| a.0.cmp(&b.0));
        assert_eq!(top, full, "limit {limit}");
    }
}
