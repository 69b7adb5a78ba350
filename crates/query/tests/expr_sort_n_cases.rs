//! Data-driven cases and properties for `$sortArray` and the array forms of `$firstN`,
//! `$lastN`, `$maxN` and `$minN` (MongoDB manual examples; `expression.cpp` and
//! `accumulator_multi.cpp` for the errors), with property tests of `$range`,
//! `$reverseArray`, `$indexOfArray`, `$zip`, `$sortArray` and the `N` operators
//! against simple models.

use crate::support::{evaluate, fails_with, yields};
use bson::{Bson, Document, doc};
use proptest::prelude::*;

fn d() -> Document {
    doc! {
        "team": [
            {"name": "pat", "age": 30, "address": {"street": "12 Baker St", "city": "London"}},
            {"name": "dallas", "age": 36, "address": {"street": "12 Cowper St", "city": "Palo Alto"}},
            {"name": "charlie", "age": 42, "address": {"street": "12 French St", "city": "New Brunswick"}},
        ],
        "nums": [1, 4, 1, 6, 12, 5],
        "n": Bson::Null,
        "s": "text",
    }
}

fn names(expr: Document) -> Vec<String> {
    match evaluate(&d(), Bson::Document(expr.clone())) {
        Ok(Some(Bson::Array(items))) => items
            .iter()
            .map(|item| match item {
                Bson::Document(doc) => doc.get_str("name").unwrap_or("?").to_owned(),
                other => other.to_string(),
            })
            .collect(),
        other => panic!("{expr}: {other:?}"),
    }
}

fn ints(values: &[i32]) -> Bson {
    Bson::Array(values.iter().map(|v| Bson::Int32(*v)).collect())
}

#[test]
fn sort_array_follows_the_manual() {
    assert_eq!(
        names(doc! {"$sortArray": {"input": "$team", "sortBy": {"name": 1}}}),
        ["charlie", "dallas", "pat"]
    );
    assert_eq!(
        names(doc! {"$sortArray": {"input": "$team", "sortBy": {"address.city": -1}}}),
        ["dallas", "charlie", "pat"]
    );
    assert_eq!(
        names(doc! {"$sortArray": {"input": "$team", "sortBy": {"age": -1, "name": 1}}}),
        ["charlie", "dallas", "pat"]
    );
    yields(
        &d(),
        doc! {"$sortArray": {"input": "$nums", "sortBy": 1}},
        ints(&[1, 1, 4, 5, 6, 12]),
    );
    yields(
        &d(),
        doc! {"$sortArray": {"input": "$nums", "sortBy": -1}},
        ints(&[12, 6, 5, 4, 1, 1]),
    );
    // Mixed types sort in BSON order (manual example).
    yields(
        &d(),
        doc! {"$sortArray": {"input": [20, 4, {"a": "Free"}, 6, 21, 5, "Gratis", {"a": Bson::Null},
                  {"a": {"sale": true, "price": 19}}, 10.23, {"a": "On sale"}],
        "sortBy": 1}},
        bson::bson!([4, 5, 6, 10.23, 20, 21, "Gratis", {"a": null}, {"a": "Free"},
                     {"a": "On sale"}, {"a": {"sale": true, "price": 19}}]),
    );
    // By a field: non-documents and documents without it sort as null; ties keep
    // their order.
    yields(
        &d(),
        doc! {"$sortArray": {"input": [{"a": 2}, 7, {"b": 1}, {"a": 1}, {"a": Bson::Null}],
        "sortBy": {"a": 1}}},
        bson::bson!([7, {"b": 1}, {"a": null}, {"a": 1}, {"a": 2}]),
    );
    // A path does not fan out over arrays: the array itself is compared, and a
    // numeric component picks an element.
    yields(
        &d(),
        doc! {"$sortArray": {"input": [{"a": [3]}, {"a": [1, 5]}, {"a": 2}], "sortBy": {"a": 1}}},
        bson::bson!([{"a": 2}, {"a": [1, 5]}, {"a": [3]}]),
    );
    yields(
        &d(),
        doc! {"$sortArray": {"input": [{"a": [9, 1]}, {"a": [2, 8]}], "sortBy": {"a.1": 1}}},
        bson::bson!([{"a": [9, 1]}, {"a": [2, 8]}]),
    );
    yields(
        &d(),
        doc! {"$sortArray": {"input": [], "sortBy": 1}},
        Bson::Array(vec![]),
    );
    // From MongoDB's jstests (aggregation/expressions/sortArray.js).
    let sorted = |input: Bson, sort_by: Bson, expected: Bson| {
        yields(
            &d(),
            doc! {"$sortArray": {"input": {"$literal": input}, "sortBy": sort_by}},
            expected,
        )
    };
    sorted(
        bson::bson!([{}, [], []]),
        Bson::Int32(-1),
        bson::bson!([[], [], {}]),
    );
    sorted(
        bson::bson!([{"a": 1}, {"b": 2}, {"c": 3}]),
        bson::bson!({"a": 1}),
        bson::bson!([{"b": 2}, {"c": 3}, {"a": 1}]),
    );
    sorted(
        bson::bson!([{"a": 1}, {"b": 2}, {"c": 3}]),
        Bson::Int32(-1),
        bson::bson!([{"c": 3}, {"b": 2}, {"a": 1}]),
    );
    sorted(
        bson::bson!([{"a": 1, "b": 2, "c": 1}, {"a": 1, "b": 3, "c": 4}, {"a": 1, "b": 3, "c": 5}]),
        bson::bson!({"a": 1, "b": 1, "c": -1}),
        bson::bson!([{"a": 1, "b": 2, "c": 1}, {"a": 1, "b": 3, "c": 5}, {"a": 1, "b": 3, "c": 4}]),
    );
    sorted(
        bson::bson!([2, 1, "hello", {"a": 6}, {"a": "hello"}, {"a": -1}, null]),
        Bson::Int32(1),
        bson::bson!([null, 1, 2, "hello", {"a": -1}, {"a": 6}, {"a": "hello"}]),
    );
    sorted(
        bson::bson!([[Bson::Decimal128("4".parse().expect("decimal"))], [1, 9, 8]]),
        Bson::Int32(1),
        bson::bson!([[1, 9, 8], [Bson::Decimal128("4".parse().expect("decimal"))]]),
    );
    yields(
        &d(),
        doc! {"$sortArray": {"input": "$n", "sortBy": 1}},
        Bson::Null,
    );
    yields(
        &d(),
        doc! {"$sortArray": {"input": "$nope", "sortBy": 1}},
        Bson::Null,
    );
}

#[test]
fn sort_array_refuses_malformed_specifications() {
    fails_with(&d(), doc! {"$sortArray": [1]}, 2_942_500);
    fails_with(
        &d(),
        doc! {"$sortArray": {"input": [], "sortBy": 1, "x": 1}},
        2_942_501,
    );
    fails_with(&d(), doc! {"$sortArray": {"sortBy": 1}}, 2_942_502);
    fails_with(&d(), doc! {"$sortArray": {"input": []}}, 2_942_503);
    fails_with(
        &d(),
        doc! {"$sortArray": {"input": "$s", "sortBy": 1}},
        2_942_504,
    );
    fails_with(
        &d(),
        doc! {"$sortArray": {"input": [], "sortBy": {}}},
        2_942_505,
    );
    fails_with(
        &d(),
        doc! {"$sortArray": {"input": [], "sortBy": {"a": 2}}},
        2_942_505,
    );
    fails_with(
        &d(),
        doc! {"$sortArray": {"input": [], "sortBy": {"a": "x"}}},
        2_942_505,
    );
    fails_with(
        &d(),
        doc! {"$sortArray": {"input": [], "sortBy": {"a..b": 1}}},
        2_942_505,
    );
    fails_with(
        &d(),
        doc! {"$sortArray": {"input": [], "sortBy": 0}},
        2_942_506,
    );
    fails_with(
        &d(),
        doc! {"$sortArray": {"input": [], "sortBy": "a"}},
        2_942_507,
    );
    // sortBy is a specification, not an expression.
    fails_with(
        &d(),
        doc! {"$sortArray": {"input": [], "sortBy": "$nums"}},
        2_942_507,
    );
}

#[test]
fn n_operators_follow_the_manual() {
    let n = |expr: Document, expected: Bson| yields(&d(), expr, expected);
    n(
        doc! {"$firstN": {"n": 2, "input": [10, 20, 30, 40]}},
        ints(&[10, 20]),
    );
    n(
        doc! {"$lastN": {"n": 2, "input": [10, 20, 30, 40]}},
        ints(&[30, 40]),
    );
    n(
        doc! {"$firstN": {"n": 10, "input": "$nums"}},
        ints(&[1, 4, 1, 6, 12, 5]),
    );
    n(doc! {"$lastN": {"n": 10_i64, "input": [1]}}, ints(&[1]));
    n(doc! {"$firstN": {"n": 2.0, "input": []}}, ints(&[]));
    // $firstN and $lastN keep nulls; $maxN and $minN skip them.
    n(
        doc! {"$firstN": {"n": 2, "input": [Bson::Null, 1, 2]}},
        bson::bson!([null, 1]),
    );
    n(
        doc! {"$maxN": {"n": 2, "input": [Bson::Null, 1, 3, 2]}},
        ints(&[3, 2]),
    );
    n(
        doc! {"$minN": {"n": 2, "input": [Bson::Null, 3, 1, 2]}},
        ints(&[1, 2]),
    );
    n(
        doc! {"$maxN": {"n": 3, "input": "$nums"}},
        ints(&[12, 6, 5]),
    );
    n(doc! {"$minN": {"n": 3, "input": "$nums"}}, ints(&[1, 1, 4]));
    n(doc! {"$maxN": {"n": 5, "input": [Bson::Null]}}, ints(&[]));
    n(
        doc! {"$maxN": {"n": 2, "input": [1, "a", [1], {"x": 1}]}},
        bson::bson!([[1], {"x": 1}]),
    );
    // Values that compare equal but differ (1, 1.0, long 1): $maxN replaces its
    // least element only for a strictly greater one, evicting the earliest of equal
    // least ones; $minN evicts the latest of equal greatest ones.
    n(doc! {"$maxN": {"n": 1, "input": [1, 1.0]}}, ints(&[1]));
    n(doc! {"$minN": {"n": 1, "input": [1, 1.0]}}, ints(&[1]));
    n(
        doc! {"$maxN": {"n": 2, "input": [1, 1_i64, 2]}},
        bson::bson!([2, 1_i64]),
    );
    n(
        doc! {"$minN": {"n": 2, "input": [1, 1_i64, 0]}},
        ints(&[0, 1]),
    );
    n(
        doc! {"$maxN": {"n": 3, "input": [1, 1_i64, 1.0]}},
        bson::bson!([1.0, 1_i64, 1]),
    );
    // `n` may be computed.
    n(
        doc! {"$firstN": {"n": {"$size": "$nums"}, "input": [1, 2]}},
        ints(&[1, 2]),
    );
}

#[test]
fn n_operators_refuse_bad_arguments() {
    fails_with(&d(), doc! {"$firstN": [1, 2]}, 5_787_801);
    fails_with(&d(), doc! {"$lastN": 3}, 5_787_801);
    fails_with(&d(), doc! {"$maxN": [1, 2]}, 5_787_900);
    fails_with(&d(), doc! {"$minN": "x"}, 5_787_900);
    fails_with(
        &d(),
        doc! {"$firstN": {"n": 1, "input": [], "x": 1}},
        5_787_901,
    );
    fails_with(&d(), doc! {"$firstN": {"input": []}}, 5_787_906);
    fails_with(&d(), doc! {"$maxN": {"n": 1}}, 5_787_907);
    fails_with(&d(), doc! {"$firstN": {"n": "1", "input": []}}, 5_787_902);
    fails_with(&d(), doc! {"$firstN": {"n": "$n", "input": []}}, 5_787_902);
    fails_with(&d(), doc! {"$minN": {"n": 1.5, "input": []}}, 5_787_903);
    fails_with(&d(), doc! {"$lastN": {"n": 0, "input": []}}, 5_787_908);
    fails_with(&d(), doc! {"$maxN": {"n": -1, "input": []}}, 5_787_908);
    fails_with(&d(), doc! {"$firstN": {"n": 1, "input": "$s"}}, 5_788_200);
    // Unlike most operators, a null input is an error.
    fails_with(&d(), doc! {"$firstN": {"n": 1, "input": "$n"}}, 5_788_200);
    fails_with(&d(), doc! {"$minN": {"n": 1, "input": "$nope"}}, 5_788_200);
    // `n` is checked before `input`.
    fails_with(&d(), doc! {"$firstN": {"n": 0, "input": "$s"}}, 5_787_908);
}

fn eval_array(expr: Document) -> Vec<Bson> {
    match evaluate(&doc! {}, Bson::Document(expr.clone())) {
        Ok(Some(Bson::Array(items))) => items,
        other => panic!("{expr}: {other:?}"),
    }
}

fn eval_value(expr: Document) -> Option<Bson> {
    evaluate(&doc! {}, Bson::Document(expr.clone())).unwrap_or_else(|e| panic!("{expr}: {e}"))
}

fn int_array(values: &[i32]) -> Bson {
    Bson::Array(values.iter().copied().map(Bson::Int32).collect())
}

fn small_values() -> impl Strategy<Value = Vec<i32>> {
    prop::collection::vec(-5..5i32, 0..12)
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 300, failure_persistence: None, ..ProptestConfig::default() })]

    #[test]
    fn range_matches_a_model(start in -50..50i32, end in -50..50i32,
                             step in prop::sample::select(vec![-7, -3, -1, 1, 2, 5])) {
        let mut model = Vec::new();
        let mut at = start;
        while (step > 0 && at < end) || (step < 0 && at > end) {
            model.push(Bson::Int32(at));
            at += step;
        }
        prop_assert_eq!(eval_array(doc! {"$range": [start, end, step]}), model);
    }

    #[test]
    fn reverse_array_matches_a_model(values in small_values()) {
        let mut model: Vec<Bson> = values.iter().copied().map(Bson::Int32).collect();
        model.reverse();
        prop_assert_eq!(
            eval_array(doc! {"$reverseArray": {"$literal": int_array(&values)}}),
            model
        );
    }

    #[test]
    fn index_of_array_matches_a_model(values in small_values(), needle in -5..5i32,
                                      start in 0..14usize, end in 0..14usize) {
        let model = values
            .iter()
            .enumerate()
            .take(end)
            .skip(start)
            .find(|(_, v)| **v == needle)
            .map_or(-1, |(i, _)| i32::try_from(i).unwrap_or(-1));
        // As a double the needle still matches the ints.
        let expr = doc! {"$indexOfArray": [{"$literal": int_array(&values)}, f64::from(needle),
                                           start as i64, end as i32]};
        prop_assert_eq!(eval_value(expr), Some(Bson::Int32(model)));
    }

    #[test]
    fn zip_matches_a_model(a in small_values(), b in small_values(), longest in any::<bool>()) {
        let rows = if longest { a.len().max(b.len()) } else { a.len().min(b.len()) };
        let pick = |v: &[i32], i: usize| v.get(i).map_or(Bson::Int32(100), |x| Bson::Int32(*x));
        let model: Vec<Bson> = (0..rows)
            .map(|i| Bson::Array(vec![pick(&a, i), pick(&b, i)]))
            .collect();
        let mut spec = doc! {"inputs": [{"$literal": int_array(&a)}, {"$literal": int_array(&b)}],
                             "useLongestLength": longest};
        if longest {
            spec.insert("defaults", vec![100, 100]);
        }
        prop_assert_eq!(eval_array(doc! {"$zip": spec}), model);
    }

    #[test]
    fn sort_array_matches_a_model(values in small_values(), descending in any::<bool>()) {
        let mut model = values.clone();
        model.sort_unstable();
        if descending {
            model.reverse();
        }
        let direction = if descending { -1 } else { 1 };
        prop_assert_eq!(
            eval_array(doc! {"$sortArray": {"input": {"$literal": int_array(&values)},
                                            "sortBy": direction}}),
            model.into_iter().map(Bson::Int32).collect::<Vec<_>>()
        );
        // By a field, ties keep their order (a stable sort on the key alone).
        let docs: Vec<Bson> = values
            .iter()
            .enumerate()
            .map(|(i, v)| Bson::Document(doc! {"k": *v, "i": i as i32}))
            .collect();
        let mut by_key = docs.clone();
        by_key.sort_by_key(|d| match d {
            Bson::Document(d) => {
                let k = d.get_i32("k").unwrap_or(0);
                if descending { -k } else { k }
            }
            _ => 0,
        });
        prop_assert_eq!(
            eval_array(doc! {"$sortArray": {"input": {"$literal": docs}, "sortBy": {"k": direction}}}),
            by_key
        );
    }

    #[test]
    fn n_operators_match_a_model(values in small_values(), n in 1..15usize) {
        let literal = int_array(&values);
        let first: Vec<Bson> = values.iter().take(n).copied().map(Bson::Int32).collect();
        let last: Vec<Bson> = values
            .iter()
            .skip(values.len().saturating_sub(n))
            .copied()
            .map(Bson::Int32)
            .collect();
        let mut sorted = values.clone();
        sorted.sort_unstable();
        let min: Vec<Bson> = sorted.iter().take(n).copied().map(Bson::Int32).collect();
        let max: Vec<Bson> = sorted.iter().rev().take(n).copied().map(Bson::Int32).collect();
        let n = n as i32;
        for (op, model) in [("$firstN", first), ("$lastN", last), ("$minN", min), ("$maxN", max)] {
            let expr = doc! {op: {"n": n, "input": {"$literal": literal.clone()}}};
            prop_assert_eq!(eval_array(expr), model, "{}", op);
        }
    }
}
