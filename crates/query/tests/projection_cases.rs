//! Data-driven projection cases: (document, projection, filter, expected document or error code).

use crate::support::raw;
use bson::{Document, doc};
use query::{Filter, Projection};

#[track_caller]
fn check(input: Document, projection: Document, filter: Option<Document>, expected: Document) {
    let spec = Projection::parse(&raw(&projection)).unwrap_or_else(|e| panic!("{projection}: {e}"));
    let filter = filter.map(|f| Filter::parse(&raw(&f)).expect("filter parses"));
    let out = spec
        .apply(&raw(&input), filter.as_ref())
        .unwrap_or_else(|e| panic!("{projection}: {e}"));
    let got = Document::try_from(out.as_ref()).expect("valid output");
    assert_eq!(got, expected, "projection {projection}");
}

#[track_caller]
fn refused(projection: Document, code: i32) {
    match Projection::parse(&raw(&projection)) {
        Ok(_) => panic!("{projection} accepted"),
        Err(e) => assert_eq!(e.code(), code, "{projection}: {e}"),
    }
}

fn d() -> Document {
    doc! {"_id": 1, "a": 1, "b": {"c": 2, "d": 3}, "arr": [{"x": 1, "y": 1}, {"x": 2, "y": 2}, 7], "s": [1, 2, 3, 4, 5]}
}

#[test]
fn inclusion_and_exclusion() {
    check(d(), doc! {"a": 1}, None, doc! {"_id": 1, "a": 1});
    check(d(), doc! {"a": true, "_id": 0}, None, doc! {"a": 1});
    check(d(), doc! {"b.c": 1}, None, doc! {"_id": 1, "b": {"c": 2}});
    // Inclusion inside an array keeps only element documents (manual,
    // "Project Specific Array Elements in the Returned Array").
    check(
        d(),
        doc! {"arr.x": 1},
        None,
        doc! {"_id": 1, "arr": [{"x": 1}, {"x": 2}]},
    );
    check(
        d(),
        doc! {"a": 0},
        None,
        doc! {"_id": 1, "b": {"c": 2, "d": 3}, "arr": [{"x": 1, "y": 1}, {"x": 2, "y": 2}, 7], "s": [1, 2, 3, 4, 5]},
    );
    check(
        d(),
        doc! {"b.c": 0, "arr": 0, "s": 0},
        None,
        doc! {"_id": 1, "a": 1, "b": {"d": 3}},
    );
    check(
        d(),
        doc! {"arr.x": 0, "b": 0, "s": 0},
        None,
        doc! {"_id": 1, "a": 1, "arr": [{"y": 1}, {"y": 2}, 7]},
    );
    check(
        d(),
        doc! {"_id": 0},
        None,
        doc! {"a": 1, "b": {"c": 2, "d": 3}, "arr": [{"x": 1, "y": 1}, {"x": 2, "y": 2}, 7], "s": [1, 2, 3, 4, 5]},
    );
    check(d(), doc! {"missing": 1}, None, doc! {"_id": 1});
    check(d(), doc! {"b.z": 1}, None, doc! {"_id": 1, "b": {}});
    check(d(), doc! {"a.z": 1}, None, doc! {"_id": 1});
    check(
        d(),
        doc! {"arr.z": 1},
        None,
        doc! {"_id": 1, "arr": [{}, {}]},
    );
    check(
        d(),
        doc! {"b": 1, "a": 1},
        None,
        doc! {"_id": 1, "a": 1, "b": {"c": 2, "d": 3}},
    );
}

#[test]
fn slice_elem_match_positional_and_computed() {
    check(
        d(),
        doc! {"s": {"$slice": 2}},
        None,
        doc! {"_id": 1, "a": 1, "b": {"c": 2, "d": 3}, "arr": [{"x": 1, "y": 1}, {"x": 2, "y": 2}, 7], "s": [1, 2]},
    );
    check(
        d(),
        doc! {"s": {"$slice": -2}, "_id": 0, "a": 0, "b": 0, "arr": 0},
        None,
        doc! {"s": [4, 5]},
    );
    check(
        d(),
        doc! {"s": {"$slice": [1, 2]}, "a": 1},
        None,
        doc! {"_id": 1, "a": 1, "s": [2, 3]},
    );
    check(
        d(),
        doc! {"arr": {"$elemMatch": {"x": 2}}},
        None,
        doc! {"_id": 1, "arr": [{"x": 2, "y": 2}]},
    );
    check(
        d(),
        doc! {"arr": {"$elemMatch": {"x": 9}}},
        None,
        doc! {"_id": 1},
    );
    check(
        d(),
        doc! {"arr.$": 1},
        Some(doc! {"arr.x": 2}),
        doc! {"_id": 1, "arr": [{"x": 2, "y": 2}]},
    );
    check(
        d(),
        doc! {"s.$": 1},
        Some(doc! {"s": {"$gt": 3}}),
        doc! {"_id": 1, "s": [4]},
    );
    check(
        d(),
        doc! {"total": {"$add": ["$a", "$b.c"]}},
        None,
        doc! {"_id": 1, "total": 3},
    );
    check(
        d(),
        doc! {"a": 1, "lit": "text"},
        None,
        doc! {"_id": 1, "a": 1, "lit": "text"},
    );
    check(
        d(),
        doc! {"a": {"$literal": 0}},
        None,
        doc! {"_id": 1, "a": 0},
    );
}

#[test]
fn bad_projections_are_refused() {
    refused(doc! {"a": 1, "b": 0}, 31254);
    refused(doc! {"a": 0, "b": 1}, 31254);
    refused(doc! {"a": 1, "a.b": 1}, 31250);
    refused(doc! {"$a": 1}, 16410);
    refused(doc! {"a": {"$meta": "textScore"}}, 2);
    refused(doc! {"s": {"$slice": [1, 0]}}, 28724);
    refused(doc! {"a": {"$elemMatch": 1}}, 2);
    let spec = Projection::parse(&raw(&doc! {"s.$": 1})).expect("parses");
    let e = spec.apply(&raw(&d()), None).expect_err("no filter for $");
    assert_eq!(e.code(), 51246);
}
