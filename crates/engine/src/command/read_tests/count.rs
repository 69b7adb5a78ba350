//! count and distinct.

use super::{engine, fails, insert, numbered, ok};
use bson::{Bson, doc, rawdoc};

#[test]
fn count_counts_with_and_without_a_query() {
    let (engine, _) = engine();
    insert(
        &engine,
        "c",
        (0..30).map(|i| rawdoc! { "_id": i, "g": i % 3 }),
    );
    let n = |cmd| ok(&engine, cmd).get("n").cloned();
    assert_eq!(n(rawdoc! { "count": "c" }), Some(Bson::Int32(30)));
    assert_eq!(
        n(rawdoc! { "count": "c", "query": {} }),
        Some(Bson::Int32(30))
    );
    assert_eq!(
        n(rawdoc! { "count": "c", "query": { "g": 1 } }),
        Some(Bson::Int32(10))
    );
    assert_eq!(
        n(rawdoc! { "count": "c", "query": { "g": 1 }, "skip": 4 }),
        Some(Bson::Int32(6))
    );
    assert_eq!(
        n(rawdoc! { "count": "c", "query": { "g": 1 }, "limit": 3 }),
        Some(Bson::Int32(3))
    );
    assert_eq!(
        n(rawdoc! { "count": "c", "limit": -7, "skip": 25 }),
        Some(Bson::Int32(5))
    );
    assert_eq!(
        n(rawdoc! { "count": "c", "skip": 40 }),
        Some(Bson::Int32(0))
    );
    assert_eq!(
        n(rawdoc! { "count": "c", "query": { "_id": 4, "g": 1 } }),
        Some(Bson::Int32(1))
    );
    assert_eq!(
        n(rawdoc! { "count": "c", "query": { "_id": 4, "g": 2 } }),
        Some(Bson::Int32(0))
    );
    assert_eq!(
        n(rawdoc! { "count": "c", "hint": "_id_", "limit": 0 }),
        Some(Bson::Int32(30))
    );
    assert_eq!(n(rawdoc! { "count": "none" }), Some(Bson::Int32(0)));
    assert_eq!(
        ok(&engine, rawdoc! { "count": "c", "fields": 1 }),
        doc! { "n": 30, "ok": 1.0 }
    );
}

#[test]
fn count_refuses_bad_arguments() {
    let (engine, _) = engine();
    insert(&engine, "c", numbered(0..3));
    assert_eq!(
        fails(&engine, rawdoc! { "count": "c", "skip": -1 }, 2),
        "skip value is negative in count query"
    );
    assert_eq!(
        fails(&engine, rawdoc! { "count": "c", "limit": "x" }, 2),
        "limit value is not a valid number"
    );
    fails(&engine, rawdoc! { "count": "c", "skip": "x" }, 2);
    fails(&engine, rawdoc! { "count": "c", "query": 1 }, 14);
    fails(&engine, rawdoc! { "count": "c", "query": { "$bad": 1 } }, 2);
    fails(&engine, rawdoc! { "count": "c", "hint": { "a": 1 } }, 2);
    fails(
        &engine,
        rawdoc! { "count": "c", "collation": { "locale": "de" } },
        238,
    );
    fails(&engine, rawdoc! { "count": "c", "nope": 1 }, 40415);
    fails(&engine, rawdoc! { "count": 5 }, 73);
}

#[test]
fn distinct_unwinds_arrays_and_orders_canonically() {
    let (engine, _) = engine();
    insert(
        &engine,
        "c",
        [
            rawdoc! { "_id": 1, "a": 3, "t": "x" },
            rawdoc! { "_id": 2, "a": [1, 3.0, [4]], "t": "x" },
            rawdoc! { "_id": 3, "a": "s", "t": "y" },
            rawdoc! { "_id": 4, "t": "x" },
            rawdoc! { "_id": 5, "a": null, "t": "x" },
            rawdoc! { "_id": 6, "a": 1i64, "t": "x" },
            rawdoc! { "_id": 7, "a": { "b": 2 }, "t": "y" },
        ],
    );
    let values = |cmd| {
        ok(&engine, cmd)
            .get_array("values")
            .expect("values")
            .clone()
    };
    assert_eq!(
        values(rawdoc! { "distinct": "c", "key": "a" }),
        vec![
            Bson::Null,
            Bson::Int32(1),
            Bson::Int32(3),
            Bson::String("s".into()),
            Bson::Document(doc! { "b": 2 }),
            Bson::Array(vec![Bson::Int32(4)]),
        ]
    );
    assert_eq!(
        values(rawdoc! { "distinct": "c", "key": "a", "query": { "t": "y" } }),
        vec![Bson::String("s".into()), Bson::Document(doc! { "b": 2 })]
    );
    assert_eq!(
        values(rawdoc! { "distinct": "c", "key": "a.b" }),
        vec![Bson::Int32(2)]
    );
    assert_eq!(
        values(rawdoc! { "distinct": "c", "key": "a", "query": { "_id": 2 } }).len(),
        3
    );
    assert_eq!(
        values(rawdoc! { "distinct": "none", "key": "a" }),
        Vec::<Bson>::new()
    );
    assert_eq!(
        values(rawdoc! { "distinct": "c", "key": "zz", "query": null }),
        Vec::<Bson>::new()
    );
}

#[test]
fn distinct_refuses_bad_arguments() {
    let (engine, _) = engine();
    insert(&engine, "c", numbered(0..3));
    assert_eq!(
        fails(&engine, rawdoc! { "distinct": "c" }, 40414),
        "BSON field 'distinct.key' is missing but a required field"
    );
    assert_eq!(
        fails(&engine, rawdoc! { "distinct": "c", "key": 1 }, 14),
        "BSON field 'distinct.key' is the wrong type 'int', expected type 'string'"
    );
    fails(
        &engine,
        rawdoc! { "distinct": "c", "key": "a", "query": 3 },
        14,
    );
    fails(
        &engine,
        rawdoc! { "distinct": "c", "key": "a", "query": { "$x": 1 } },
        2,
    );
    fails(
        &engine,
        rawdoc! { "distinct": "c", "key": "a", "hint": "nope" },
        2,
    );
    fails(
        &engine,
        rawdoc! { "distinct": "c", "key": "a", "other": 1 },
        40415,
    );
    fails(
        &engine,
        rawdoc! { "distinct": "c", "key": "a", "collation": { "locale": "en" } },
        238,
    );
}
