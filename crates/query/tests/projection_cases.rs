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
fn sub_projections_and_computed_order() {
    // Manual, "Project fields" (4.4+): {a: {b: 1}} is {"a.b": 1}.
    check(
        d(),
        doc! {"b": {"c": 1}},
        None,
        doc! {"_id": 1, "b": {"c": 2}},
    );
    check(
        d(),
        doc! {"b": {"c": 0}, "arr": 0, "s": 0},
        None,
        doc! {"_id": 1, "a": 1, "b": {"d": 3}},
    );
    check(
        d(),
        doc! {"b": {"z": "$a"}, "a": 1},
        None,
        doc! {"_id": 1, "a": 1, "b": {"z": 1}},
    );
    // Computed fields follow the included ones, in projection order, even
    // where the document has the field (projection_node.cpp).
    check(
        d(),
        doc! {"a": {"$add": ["$a", 1]}, "s": 1},
        None,
        doc! {"_id": 1, "s": [1, 2, 3, 4, 5], "a": 2},
    );
    // A scalar under computed sub-fields becomes a document of them.
    check(
        d(),
        doc! {"a.b": {"$literal": 1}},
        None,
        doc! {"_id": 1, "a": {"b": 1}},
    );
}

#[test]
fn aggregation_projection_rules() {
    let agg = |projection: Document| Projection::parse_aggregation(&raw(&projection));
    assert_eq!(
        agg(doc! {"arr.$": 1}).expect_err("positional").code(),
        31324
    );
    assert_eq!(
        agg(doc! {"arr": {"$elemMatch": {"x": 1}}})
            .expect_err("elemMatch")
            .code(),
        31325
    );
    assert_eq!(agg(doc! {}).expect_err("empty").code(), 51272);
    // {$slice: [..]} is the expression, not find's operator.
    let spec = agg(doc! {"s": {"$slice": ["$s", 1, 2]}}).expect("slice expression");
    let out = spec.apply(&raw(&d()), None).expect("applies");
    assert_eq!(
        Document::try_from(out.as_ref()).expect("valid"),
        doc! {"_id": 1, "s": [2, 3]}
    );
    // Aggregation reaches into arrays nested in arrays; find leaves them out.
    let nested = doc! {"_id": 1, "a": [[{"b": 1, "c": 2}], {"b": 3}]};
    let spec = agg(doc! {"a.b": 1}).expect("parses");
    let out = spec.apply(&raw(&nested), None).expect("applies");
    assert_eq!(
        Document::try_from(out.as_ref()).expect("valid"),
        doc! {"_id": 1, "a": [[{"b": 1}], {"b": 3}]}
    );
    check(
        nested,
        doc! {"a.b": 1},
        None,
        doc! {"_id": 1, "a": [{"b": 3}]},
    );
}

#[test]
fn bad_projections_are_refused() {
    refused(doc! {"a": 1, "b": 0}, 31254);
    // MongoDB names the field that breaks the kind the earlier fields set.
    refused(doc! {"a": 0, "b": 1}, 31253);
    refused(doc! {"a": 0, "b": "$x"}, 31310);
    refused(doc! {"a": 0, "b": {"$add": [1, 1]}}, 31252);
    refused(doc! {"a": {}}, 51270);
    refused(doc! {"a": 1, "a.b": 1}, 31250);
    refused(doc! {"$a": 1}, 16410);
    refused(doc! {"a": {"$meta": "textScore"}}, 2);
    refused(doc! {"s": {"$slice": [1, 0]}}, 28724);
    refused(doc! {"a": {"$elemMatch": 1}}, 2);
    let spec = Projection::parse(&raw(&doc! {"s.$": 1})).expect("parses");
    let e = spec.apply(&raw(&d()), None).expect_err("no filter for $");
    assert_eq!(e.code(), 51246);
}
