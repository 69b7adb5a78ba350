//! Data-driven cases for the array and object operators: `$arrayToObject`,
//! `$objectToArray`, `$mergeObjects`, `$indexOfArray`, `$range`, `$reverseArray`,
//! `$zip` and `$reduce`. Expected values are the MongoDB manual's examples and the
//! behaviour of `src/mongo/db/pipeline/expression.cpp`.

use crate::support::{evaluate, fails_with, yields, yields_missing};
use bson::{Bson, Document, doc};

fn d() -> Document {
    doc! {
        "pairs": [["item", "abc123"], ["qty", 25]],
        "kv": [{"k": "item", "v": "abc123"}, {"k": "qty", "v": 25}],
        "dims": {"l": 25, "w": 10, "uom": "cm"},
        "n": Bson::Null,
        "s": "text",
        "arr": [1, 2, 3],
        "docs": [{"a": 1, "b": 1}, {"b": 2}, Bson::Null, {"c": 3}],
        "words": ["one", "two", "three", "two"],
        "i": 2,
        "l": 3_i64,
    }
}

fn ints(values: &[i32]) -> Bson {
    Bson::Array(values.iter().map(|v| Bson::Int32(*v)).collect())
}

#[test]
fn array_to_object_follows_the_manual() {
    let expected = Bson::Document(doc! {"item": "abc123", "qty": 25});
    yields(&d(), doc! {"$arrayToObject": "$pairs"}, expected.clone());
    yields(&d(), doc! {"$arrayToObject": "$kv"}, expected.clone());
    yields(
        &d(),
        doc! {"$arrayToObject": {"$literal": [["item", "abc123"], ["qty", 25]]}},
        expected.clone(),
    );
    // The argument list form: one argument that is itself the array.
    yields(
        &d(),
        doc! {"$arrayToObject": [[["item", "abc123"], ["qty", 25]]]},
        expected,
    );
    // A repeated key keeps its first position and takes the last value.
    yields(
        &d(),
        doc! {"$arrayToObject": {"$literal": [["item", "abc123"], ["qty", 25], ["item", "def456"]]}},
        Bson::Document(doc! {"item": "def456", "qty": 25}),
    );
    yields(
        &d(),
        doc! {"$arrayToObject": {"$literal": []}},
        Bson::Document(doc! {}),
    );
    // Keys with dots and dollars are kept as they are.
    yields(
        &d(),
        doc! {"$arrayToObject": {"$literal": [["a.b", 1], ["$c", Bson::Null]]}},
        Bson::Document(doc! {"a.b": 1, "$c": Bson::Null}),
    );
    yields(&d(), doc! {"$arrayToObject": "$n"}, Bson::Null);
    yields(&d(), doc! {"$arrayToObject": "$nope"}, Bson::Null);
}

#[test]
fn array_to_object_refuses_malformed_input() {
    fails_with(&d(), doc! {"$arrayToObject": "$s"}, 40386);
    fails_with(&d(), doc! {"$arrayToObject": {"$literal": [1]}}, 40398);
    fails_with(
        &d(),
        doc! {"$arrayToObject": {"$literal": [["a", 1], {"k": "b", "v": 2}]}},
        40396,
    );
    fails_with(
        &d(),
        doc! {"$arrayToObject": {"$literal": [["a", 1, 2]]}},
        40397,
    );
    fails_with(&d(), doc! {"$arrayToObject": {"$literal": [[1, 1]]}}, 40395);
    fails_with(
        &d(),
        doc! {"$arrayToObject": {"$literal": [["a\0b", 1]]}},
        4_940_400,
    );
    fails_with(
        &d(),
        doc! {"$arrayToObject": {"$literal": [{"k": "a", "v": 1}, ["b", 2]]}},
        40391,
    );
    fails_with(
        &d(),
        doc! {"$arrayToObject": {"$literal": [{"k": "a", "v": 1, "x": 0}]}},
        40392,
    );
    fails_with(
        &d(),
        doc! {"$arrayToObject": {"$literal": [{"k": "a", "x": 1}]}},
        40393,
    );
    fails_with(
        &d(),
        doc! {"$arrayToObject": {"$literal": [{"k": 1, "v": 1}]}},
        40394,
    );
    fails_with(
        &d(),
        doc! {"$arrayToObject": {"$literal": [{"k": "a\0", "v": 1}]}},
        4_940_401,
    );
    // Argument count is checked when parsed.
    fails_with(&d(), doc! {"$arrayToObject": [[], []]}, 16020);
}

#[test]
fn object_to_array_follows_the_manual() {
    yields(
        &d(),
        doc! {"$objectToArray": "$dims"},
        bson::bson!([{"k": "l", "v": 25}, {"k": "w", "v": 10}, {"k": "uom", "v": "cm"}]),
    );
    yields(&d(), doc! {"$objectToArray": {}}, Bson::Array(vec![]));
    yields(
        &d(),
        doc! {"$objectToArray": {"a": {"b": 1}}},
        bson::bson!([{"k": "a", "v": {"b": 1}}]),
    );
    yields(&d(), doc! {"$objectToArray": "$n"}, Bson::Null);
    yields(&d(), doc! {"$objectToArray": "$nope"}, Bson::Null);
    fails_with(&d(), doc! {"$objectToArray": "$arr"}, 40390);
    // Round trip.
    yields(
        &d(),
        doc! {"$arrayToObject": {"$objectToArray": "$dims"}},
        Bson::Document(doc! {"l": 25, "w": 10, "uom": "cm"}),
    );
}

#[test]
fn merge_objects_follows_the_manual() {
    yields(
        &d(),
        doc! {"$mergeObjects": [{"a": 1, "b": 1}, {"b": 2, "c": 3}]},
        Bson::Document(doc! {"a": 1, "b": 2, "c": 3}),
    );
    // One array argument merges its elements, skipping nulls.
    yields(
        &d(),
        doc! {"$mergeObjects": "$docs"},
        Bson::Document(doc! {"a": 1, "b": 2, "c": 3}),
    );
    yields(
        &d(),
        doc! {"$mergeObjects": [{"a": 1}, "$n", "$nope", {"a": Bson::Null}]},
        Bson::Document(doc! {"a": Bson::Null}),
    );
    yields(&d(), doc! {"$mergeObjects": []}, Bson::Document(doc! {}));
    yields(&d(), doc! {"$mergeObjects": "$n"}, Bson::Document(doc! {}));
    yields(
        &d(),
        doc! {"$mergeObjects": ["$dims", {"w": 11}]},
        Bson::Document(doc! {"l": 25, "w": 11, "uom": "cm"}),
    );
    fails_with(&d(), doc! {"$mergeObjects": [{"a": 1}, "$s"]}, 40400);
    // An array among several arguments is not merged element by element.
    fails_with(&d(), doc! {"$mergeObjects": ["$docs", {"a": 1}]}, 40400);
    fails_with(&d(), doc! {"$mergeObjects": "$arr"}, 40400);
}

#[test]
fn index_of_array_follows_the_manual() {
    let idx = |expr: Document, expected: i32| yields(&d(), expr, Bson::Int32(expected));
    idx(doc! {"$indexOfArray": ["$words", "one"]}, 0);
    idx(doc! {"$indexOfArray": ["$words", "two"]}, 1);
    idx(doc! {"$indexOfArray": ["$words", "two", 2]}, 3);
    idx(doc! {"$indexOfArray": ["$words", "two", 2, 3]}, -1);
    idx(doc! {"$indexOfArray": ["$words", "two", 0, 100]}, 1);
    idx(doc! {"$indexOfArray": ["$words", "four"]}, -1);
    idx(doc! {"$indexOfArray": ["$words", "one", 10]}, -1);
    idx(doc! {"$indexOfArray": ["$words", "one", 2, 1]}, -1);
    // Numeric equality across types; a whole double or long is a valid index.
    idx(doc! {"$indexOfArray": ["$arr", 2.0]}, 1);
    idx(doc! {"$indexOfArray": ["$arr", 3_i64, 1.0, "$l"]}, 2);
    idx(doc! {"$indexOfArray": [[1, [2], 3], [2]]}, 1);
    // A null needle is searched for like any value.
    idx(doc! {"$indexOfArray": [[1, Bson::Null], Bson::Null]}, 1);
    idx(doc! {"$indexOfArray": [[], 1]}, -1);
    yields(&d(), doc! {"$indexOfArray": ["$n", 1]}, Bson::Null);
    yields(
        &d(),
        doc! {"$indexOfArray": ["$nope", 1, "bad"]},
        Bson::Null,
    );
    fails_with(&d(), doc! {"$indexOfArray": ["$s", 1]}, 40090);
    fails_with(&d(), doc! {"$indexOfArray": ["$arr", 1, 1.5]}, 40096);
    fails_with(&d(), doc! {"$indexOfArray": ["$arr", 1, "$n"]}, 40096);
    fails_with(
        &d(),
        doc! {"$indexOfArray": ["$arr", 1, 3_000_000_000_i64]},
        40096,
    );
    fails_with(&d(), doc! {"$indexOfArray": ["$arr", 1, -1]}, 40097);
    fails_with(&d(), doc! {"$indexOfArray": ["$arr", 1, 0, -1]}, 40097);
    fails_with(&d(), doc! {"$indexOfArray": ["$arr", 1, 0, "x"]}, 40096);
    fails_with(&d(), doc! {"$indexOfArray": ["$arr"]}, 28667);
    // A null array answers null before the other arguments are evaluated; the
    // bounds are evaluated (and checked) before the value looked for.
    yields(
        &d(),
        doc! {"$indexOfArray": ["$n", {"$divide": [1, 0]}]},
        Bson::Null,
    );
    fails_with(
        &d(),
        doc! {"$indexOfArray": ["$arr", {"$divide": [1, 0]}, -1]},
        40097,
    );
    fails_with(
        &d(),
        doc! {"$indexOfArray": ["$arr", {"$divide": [1, 0]}, 0]},
        2,
    );
    fails_with(&d(), doc! {"$indexOfArray": ["$arr", 1, 0, 1, 2]}, 28667);
}

#[test]
fn range_follows_the_manual() {
    yields(&d(), doc! {"$range": [0, 10, 2]}, ints(&[0, 2, 4, 6, 8]));
    yields(&d(), doc! {"$range": [10, 0, -2]}, ints(&[10, 8, 6, 4, 2]));
    yields(&d(), doc! {"$range": [0, 10, -2]}, ints(&[]));
    yields(&d(), doc! {"$range": [0, 5]}, ints(&[0, 1, 2, 3, 4]));
    yields(&d(), doc! {"$range": [5, 5]}, ints(&[]));
    yields(&d(), doc! {"$range": [-2, 1]}, ints(&[-2, -1, 0]));
    yields(&d(), doc! {"$range": [1.0, "$l", 1_i64]}, ints(&[1, 2]));
    yields(&d(), doc! {"$range": [0, 10, 20]}, ints(&[0]));
    yields(
        &d(),
        doc! {"$range": [i32::MAX - 2, i32::MAX]},
        ints(&[i32::MAX - 2, i32::MAX - 1]),
    );
    yields(
        &d(),
        doc! {"$range": [i32::MIN, i32::MAX, i32::MAX]},
        ints(&[i32::MIN, -1, i32::MAX - 1]),
    );
    // Null does not propagate: every argument must be a number.
    fails_with(&d(), doc! {"$range": ["$n", 5]}, 34443);
    fails_with(&d(), doc! {"$range": ["$nope", 5]}, 34443);
    fails_with(&d(), doc! {"$range": [0.5, 5]}, 34444);
    fails_with(&d(), doc! {"$range": [3_000_000_000_i64, 5]}, 34444);
    fails_with(&d(), doc! {"$range": [0, "5"]}, 34445);
    fails_with(&d(), doc! {"$range": [0, 5.5]}, 34446);
    fails_with(&d(), doc! {"$range": [0, 5, Bson::Null]}, 34447);
    fails_with(&d(), doc! {"$range": [0, 5, 1.5]}, 34448);
    fails_with(&d(), doc! {"$range": [0, 5, 0]}, 34449);
    fails_with(&d(), doc! {"$range": [0]}, 28667);
    fails_with(&d(), doc! {"$range": [0, 1, 1, 1]}, 28667);
}

/// MongoDB estimates 16 bytes per element plus 24 for the array, for one element
/// more than `(end - start) / step`, against `internalQueryMaxRangeBytes` (100 MiB).
#[test]
fn range_past_the_memory_limit_fails_before_building() {
    fails_with(&d(), doc! {"$range": [0, i32::MAX]}, 146);
    fails_with(&d(), doc! {"$range": [i32::MAX, i32::MIN, -1]}, 146);
    // 24 + 16 * 6553598 = 104857592 < 104857600; one more element crosses it.
    fails_with(&d(), doc! {"$range": [0, 6_553_598]}, 146);
    let got = evaluate(&d(), Bson::Document(doc! {"$range": [0, 6_553_597, 100]}))
        .expect("within the limit");
    assert!(matches!(got, Some(Bson::Array(items)) if items.len() == 65_536));
    // A range that goes nowhere is empty whatever its bounds.
    yields(&d(), doc! {"$range": [i32::MAX, i32::MIN]}, ints(&[]));
}

#[test]
fn reverse_array_follows_the_manual() {
    yields(&d(), doc! {"$reverseArray": "$arr"}, ints(&[3, 2, 1]));
    yields(&d(), doc! {"$reverseArray": {"$literal": []}}, ints(&[]));
    yields(
        &d(),
        doc! {"$reverseArray": [[[1, 2, 3], [4, 5, 6]]]},
        bson::bson!([[4, 5, 6], [1, 2, 3]]),
    );
    yields(&d(), doc! {"$reverseArray": "$n"}, Bson::Null);
    yields(&d(), doc! {"$reverseArray": "$nope"}, Bson::Null);
    fails_with(&d(), doc! {"$reverseArray": "$s"}, 34435);
    fails_with(&d(), doc! {"$reverseArray": [1, 2]}, 16020);
}

#[test]
fn zip_follows_the_manual() {
    let z = |spec: Document, expected: Bson| yields(&d(), doc! {"$zip": spec}, expected);
    z(
        doc! {"inputs": ["$arr", ["a", "b"]]},
        bson::bson!([[1, "a"], [2, "b"]]),
    );
    z(
        doc! {"inputs": ["$arr", ["a", "b"]], "useLongestLength": true},
        bson::bson!([[1, "a"], [2, "b"], [3, null]]),
    );
    z(
        doc! {"inputs": ["$arr", ["a", "b"]], "useLongestLength": true, "defaults": [0, "z"]},
        bson::bson!([[1, "a"], [2, "b"], [3, "z"]]),
    );
    z(doc! {"inputs": ["$arr", [], "$arr"]}, Bson::Array(vec![]));
    z(doc! {"inputs": ["$arr"]}, bson::bson!([[1], [2], [3]]));
    // Transposing a matrix (manual).
    z(
        doc! {"inputs": [[1, 2], [3, 4], [5, 6]]},
        bson::bson!([[1, 3, 5], [2, 4, 6]]),
    );
    // Defaults are evaluated only when the lengths differ.
    z(
        doc! {"inputs": ["$arr", "$arr"], "useLongestLength": true,
        "defaults": [{"$divide": [1, 0]}, 0]},
        bson::bson!([[1, 1], [2, 2], [3, 3]]),
    );
    z(doc! {"inputs": ["$arr", "$n"]}, Bson::Null);
    z(doc! {"inputs": ["$nope", "$arr"]}, Bson::Null);
}

#[test]
fn zip_refuses_malformed_specifications() {
    fails_with(&d(), doc! {"$zip": [1]}, 34460);
    fails_with(&d(), doc! {"$zip": {"inputs": "$arr"}}, 34461);
    fails_with(
        &d(),
        doc! {"$zip": {"inputs": ["$arr"], "defaults": 1}},
        34462,
    );
    fails_with(
        &d(),
        doc! {"$zip": {"inputs": ["$arr"], "useLongestLength": 1}},
        34463,
    );
    fails_with(&d(), doc! {"$zip": {"inputs": ["$arr"], "bogus": 1}}, 34464);
    fails_with(&d(), doc! {"$zip": {"inputs": []}}, 34465);
    fails_with(&d(), doc! {"$zip": {}}, 34465);
    fails_with(
        &d(),
        doc! {"$zip": {"inputs": ["$arr"], "defaults": [1]}},
        34466,
    );
    fails_with(
        &d(),
        doc! {"$zip": {"inputs": ["$arr"], "defaults": [1, 2], "useLongestLength": true}},
        34467,
    );
    fails_with(&d(), doc! {"$zip": {"inputs": ["$arr", "$s"]}}, 34468);
}

#[test]
fn reduce_follows_the_manual() {
    let r = |spec: Document, expected: Bson| yields(&d(), doc! {"$reduce": spec}, expected);
    r(
        doc! {"input": ["a", "b", "c"], "initialValue": "",
        "in": {"$concat": ["$$value", "$$this"]}},
        Bson::String("abc".into()),
    );
    r(
        doc! {"input": [1, 2, 3, 4], "initialValue": {"sum": 5, "product": 2},
        "in": {"sum": {"$add": ["$$value.sum", "$$this"]},
               "product": {"$multiply": ["$$value.product", "$$this"]}}},
        Bson::Document(doc! {"sum": 15, "product": 48}),
    );
    r(
        doc! {"input": [[3, 4], [5, 6]], "initialValue": [1, 2],
        "in": {"$concatArrays": ["$$value", "$$this"]}},
        ints(&[1, 2, 3, 4, 5, 6]),
    );
    r(
        doc! {"input": [], "initialValue": 7, "in": {"$add": ["$$value", "$$this"]}},
        Bson::Int32(7),
    );
    r(
        doc! {"input": "$n", "initialValue": 7, "in": "$$value"},
        Bson::Null,
    );
    r(
        doc! {"input": "$nope", "initialValue": 7, "in": "$$value"},
        Bson::Null,
    );
    // Nested $reduce: the inner one's $$this and $$value shadow the outer ones.
    r(
        doc! {"input": [[1, 2], [3]], "initialValue": 0,
        "in": {"$add": ["$$value", {"$reduce": {"input": "$$this", "initialValue": 0,
                                               "in": {"$add": ["$$value", "$$this"]}}}]}},
        Bson::Int32(6),
    );
    // Fields of the document stay reachable.
    r(
        doc! {"input": "$arr", "initialValue": 0,
        "in": {"$add": ["$$value", {"$multiply": ["$$this", "$i"]}]}},
        Bson::Int32(12),
    );
    yields_missing(
        &d(),
        doc! {"$reduce": {"input": [], "initialValue": "$nope", "in": "$$value"}},
    );
    yields_missing(
        &d(),
        doc! {"$reduce": {"input": [1], "initialValue": 0, "in": "$nope"}},
    );
}

#[test]
fn reduce_refuses_malformed_specifications() {
    fails_with(&d(), doc! {"$reduce": [1]}, 40075);
    fails_with(
        &d(),
        doc! {"$reduce": {"input": [], "initialValue": 0, "in": 0, "x": 1}},
        40076,
    );
    fails_with(&d(), doc! {"$reduce": {"initialValue": 0, "in": 0}}, 40077);
    fails_with(&d(), doc! {"$reduce": {"input": [], "in": 0}}, 40078);
    fails_with(
        &d(),
        doc! {"$reduce": {"input": [], "initialValue": 0}},
        40079,
    );
    fails_with(
        &d(),
        doc! {"$reduce": {"input": "$s", "initialValue": 0, "in": 0}},
        40080,
    );
    // $$this and $$value exist only inside `in`.
    fails_with(
        &d(),
        doc! {"$reduce": {"input": [1], "initialValue": "$$value", "in": 0}},
        17276,
    );
}
