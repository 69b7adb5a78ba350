//! The `$group` accumulators beyond the basic ones: `$mergeObjects`,
//! `$stdDevPop`, `$stdDevSamp`, `$concatArrays`, `$setUnion`, `$firstN`,
//! `$lastN`, `$minN`, `$maxN`, `$top`, `$bottom`, `$topN` and `$bottomN`.
//! Expected outputs from the MongoDB manual's examples (each cited) and from
//! the server source for error codes (`accumulator_multi.cpp`,
//! `accumulator_merge_objects.cpp`, `accumulator_concat_arrays.cpp`,
//! `accumulator_set_union.cpp`, `sort_pattern.cpp`); a proptest checks the N
//! accumulators against sorting the whole group and taking `n`.

use crate::pipeline::{run, stages};
use crate::support::raw;
use bson::{Bson, Document, doc};
use proptest::prelude::*;
use query::Pipeline;
use std::cmp::Ordering;

/// Runs a single `$group` stage.
fn group(input: &[Document], spec: Document) -> Result<Vec<Document>, query::QueryError> {
    run(input, &[doc! {"$group": spec}])
}

#[track_caller]
fn yields(input: &[Document], spec: Document, expected: &[Document]) {
    let got = group(input, spec.clone()).unwrap_or_else(|e| panic!("{spec}: error {e}"));
    assert_eq!(got, expected, "{spec}");
}

#[track_caller]
fn fails(input: &[Document], spec: Document, code: i32) {
    match group(input, spec.clone()) {
        Ok(out) => panic!("{spec}: gave {out:?}, expected code {code}"),
        Err(e) => assert_eq!(e.code(), code, "{spec}: {e}"),
    }
}

/// The `gamescores` collection of the manual's `$topN`, `$bottomN`, `$top`,
/// `$bottom`, `$firstN`, `$lastN`, `$minN` and `$maxN` pages.
fn gamescores() -> Vec<Document> {
    vec![
        doc! {"playerId": "PlayerA", "gameId": "G1", "score": 31},
        doc! {"playerId": "PlayerB", "gameId": "G1", "score": 33},
        doc! {"playerId": "PlayerC", "gameId": "G1", "score": 99},
        doc! {"playerId": "PlayerD", "gameId": "G1", "score": 1},
        doc! {"playerId": "PlayerA", "gameId": "G2", "score": 10},
        doc! {"playerId": "PlayerB", "gameId": "G2", "score": 14},
        doc! {"playerId": "PlayerC", "gameId": "G2", "score": 66},
        doc! {"playerId": "PlayerD", "gameId": "G2", "score": 80},
    ]
}

/// The null-and-missing documents of the same pages: PlayerD has no score,
/// PlayerE a null one.
fn with_nulls() -> Vec<Document> {
    vec![
        doc! {"playerId": "PlayerA", "gameId": "G1", "score": 1},
        doc! {"playerId": "PlayerB", "gameId": "G1", "score": 2},
        doc! {"playerId": "PlayerC", "gameId": "G1", "score": 3},
        doc! {"playerId": "PlayerD", "gameId": "G1"},
        doc! {"playerId": "PlayerE", "gameId": "G1", "score": Bson::Null},
    ]
}

fn pair(player: &str, score: i32) -> Bson {
    Bson::Array(vec![Bson::String(player.into()), Bson::Int32(score)])
}

fn pairs(items: &[(&str, i32)]) -> Bson {
    Bson::Array(items.iter().map(|(p, s)| pair(p, s.to_owned())).collect())
}

fn values(items: &[Bson]) -> Bson {
    Bson::Array(items.to_vec())
}

// https://www.mongodb.com/docs/manual/reference/operator/aggregation/topN/
#[test]
fn top_n_manual_examples() {
    let g = gamescores();
    yields(
        &g,
        doc! {"_id": "$gameId", "playerId": {"$topN": {"output": ["$playerId", "$score"], "sortBy": {"score": -1}, "n": 3}}},
        &[
            doc! {"_id": "G1", "playerId": pairs(&[("PlayerC", 99), ("PlayerB", 33), ("PlayerA", 31)])},
            doc! {"_id": "G2", "playerId": pairs(&[("PlayerD", 80), ("PlayerC", 66), ("PlayerB", 14)])},
        ],
    );
    // "Computing n Based on the Group Key": n from the _id document.
    yields(
        &g,
        doc! {"_id": {"gameId": "$gameId"}, "gamescores": {"$topN": {"output": "$score",
        "n": {"$cond": {"if": {"$eq": ["$gameId", "G2"]}, "then": 1, "else": 3}}, "sortBy": {"score": -1}}}},
        &[
            doc! {"_id": {"gameId": "G1"}, "gamescores": [99, 33, 31]},
            doc! {"_id": {"gameId": "G2"}, "gamescores": [80]},
        ],
    );
}

// https://www.mongodb.com/docs/manual/reference/operator/aggregation/bottomN/
#[test]
fn bottom_n_manual_examples() {
    let g = gamescores();
    yields(
        &g,
        doc! {"_id": "$gameId", "playerId": {"$bottomN": {"output": ["$playerId", "$score"], "sortBy": {"score": -1}, "n": 3}}},
        &[
            doc! {"_id": "G1", "playerId": pairs(&[("PlayerB", 33), ("PlayerA", 31), ("PlayerD", 1)])},
            doc! {"_id": "G2", "playerId": pairs(&[("PlayerC", 66), ("PlayerB", 14), ("PlayerA", 10)])},
        ],
    );
    // "Null and Missing Values": missing and null sort alike, below numbers.
    let player_d = Bson::Array(vec![Bson::String("PlayerD".into()), Bson::Null]);
    let player_e = Bson::Array(vec![Bson::String("PlayerE".into()), Bson::Null]);
    yields(
        &with_nulls(),
        doc! {"_id": "$gameId", "playerId": {"$bottomN": {"output": ["$playerId", "$score"], "sortBy": {"score": -1}, "n": 3}}},
        &[doc! {"_id": "G1", "playerId": [pair("PlayerA", 1), player_d, player_e]}],
    );
}

// https://www.mongodb.com/docs/manual/reference/operator/aggregation/top/ and .../bottom/
#[test]
fn top_and_bottom_return_one_value() {
    let g = gamescores();
    yields(
        &g,
        doc! {"_id": "$gameId", "playerId": {"$top": {"output": ["$playerId", "$score"], "sortBy": {"score": -1}}}},
        &[
            doc! {"_id": "G1", "playerId": pair("PlayerC", 99)},
            doc! {"_id": "G2", "playerId": pair("PlayerD", 80)},
        ],
    );
    yields(
        &g,
        doc! {"_id": "$gameId", "playerId": {"$bottom": {"output": ["$playerId", "$score"], "sortBy": {"score": -1}}}},
        &[
            doc! {"_id": "G1", "playerId": pair("PlayerD", 1)},
            doc! {"_id": "G2", "playerId": pair("PlayerA", 10)},
        ],
    );
    // $bottom's "Null and Missing Values": PlayerD (missing) and PlayerE (null) tie for
    // the bottom; PlayerD, the first seen, is returned.
    yields(
        &with_nulls(),
        doc! {"_id": "$gameId", "playerId": {"$bottom": {"output": ["$playerId", "$score"], "sortBy": {"score": -1}}}},
        &[doc! {"_id": "G1", "playerId": ["PlayerD", Bson::Null]}],
    );
    // A missing output is null.
    yields(
        &with_nulls(),
        doc! {"_id": null, "t": {"$top": {"output": "$score", "sortBy": {"score": 1}}}},
        &[doc! {"_id": null, "t": null}],
    );
}

// https://www.mongodb.com/docs/manual/reference/operator/aggregation/firstN/ and .../lastN/
#[test]
fn first_n_and_last_n_manual_examples() {
    let g = gamescores();
    yields(
        &g,
        doc! {"_id": "$gameId", "playerId": {"$firstN": {"input": ["$playerId", "$score"], "n": 3}}},
        &[
            doc! {"_id": "G1", "playerId": pairs(&[("PlayerA", 31), ("PlayerB", 33), ("PlayerC", 99)])},
            doc! {"_id": "G2", "playerId": pairs(&[("PlayerA", 10), ("PlayerB", 14), ("PlayerC", 66)])},
        ],
    );
    yields(
        &g,
        doc! {"_id": "$gameId", "playerId": {"$lastN": {"input": ["$playerId", "$score"], "n": 3}}},
        &[
            doc! {"_id": "G1", "playerId": pairs(&[("PlayerB", 33), ("PlayerC", 99), ("PlayerD", 1)])},
            doc! {"_id": "G2", "playerId": pairs(&[("PlayerB", 14), ("PlayerC", 66), ("PlayerD", 80)])},
        ],
    );
    // "Null and Missing Values": nulls kept, missing converted to null.
    yields(
        &with_nulls(),
        doc! {"_id": "$gameId", "firstFiveScores": {"$firstN": {"input": "$score", "n": 5}}},
        &[doc! {"_id": "G1", "firstFiveScores": [1, 2, 3, Bson::Null, Bson::Null]}],
    );
    yields(
        &with_nulls(),
        doc! {"_id": "$gameId", "l": {"$lastN": {"input": "$score", "n": 3}}},
        &[doc! {"_id": "G1", "l": [3, Bson::Null, Bson::Null]}],
    );
    // "Computing n Based on the Group Key" ($firstN page).
    yields(
        &g,
        doc! {"_id": {"gameId": "$gameId"}, "gamescores": {"$firstN": {"input": "$score",
        "n": {"$cond": {"if": {"$eq": ["$gameId", "G2"]}, "then": 1, "else": 3}}}}},
        &[
            doc! {"_id": {"gameId": "G1"}, "gamescores": [31, 33, 99]},
            doc! {"_id": {"gameId": "G2"}, "gamescores": [10]},
        ],
    );
}

// https://www.mongodb.com/docs/manual/reference/operator/aggregation/minN/ and .../maxN/
#[test]
fn min_n_and_max_n_manual_examples() {
    let g = gamescores();
    let row = |s: i32, p: &str| Bson::Array(vec![Bson::Int32(s), Bson::String(p.into())]);
    yields(
        &g,
        doc! {"_id": "$gameId", "maxThreeScores": {"$maxN": {"input": ["$score", "$playerId"], "n": 3}}},
        &[
            doc! {"_id": "G1", "maxThreeScores": [row(99, "PlayerC"), row(33, "PlayerB"), row(31, "PlayerA")]},
            doc! {"_id": "G2", "maxThreeScores": [row(80, "PlayerD"), row(66, "PlayerC"), row(14, "PlayerB")]},
        ],
    );
    yields(
        &g,
        doc! {"_id": "$gameId", "minScores": {"$minN": {"input": ["$score", "$playerId"], "n": 3}}},
        &[
            doc! {"_id": "G1", "minScores": [row(1, "PlayerD"), row(31, "PlayerA"), row(33, "PlayerB")]},
            doc! {"_id": "G2", "minScores": [row(10, "PlayerA"), row(14, "PlayerB"), row(66, "PlayerC")]},
        ],
    );
    // "Null and Missing Values": $minN/$maxN filter out null and missing.
    yields(
        &with_nulls(),
        doc! {"_id": "$gameId", "mi": {"$minN": {"input": "$score", "n": 4}}, "ma": {"$maxN": {"input": "$score", "n": 4}}},
        &[doc! {"_id": "G1", "mi": [1, 2, 3], "ma": [3, 2, 1]}],
    );
    // "Computing n Based on the Group Key" ($maxN page).
    yields(
        &g,
        doc! {"_id": {"gameId": "$gameId"}, "gamescores": {"$maxN": {"input": ["$score", "$playerId"],
        "n": {"$cond": {"if": {"$eq": ["$gameId", "G2"]}, "then": 1, "else": 3}}}}},
        &[
            doc! {"_id": {"gameId": "G1"}, "gamescores": [row(99, "PlayerC"), row(33, "PlayerB"), row(31, "PlayerA")]},
            doc! {"_id": {"gameId": "G2"}, "gamescores": [row(80, "PlayerD")]},
        ],
    );
}

#[test]
fn min_n_and_max_n_order_mixed_types_as_bson() {
    // Numbers < strings < objects < arrays < booleans (manual, "Comparison/Sort Order").
    let input: Vec<Document> = [
        Bson::String("s".into()),
        Bson::Int32(3),
        Bson::Null,
        Bson::Document(doc! {"a": 1}),
        Bson::Array(vec![Bson::Int32(1)]),
        Bson::Boolean(true),
        Bson::Double(2.5),
    ]
    .into_iter()
    .map(|v| doc! {"v": v})
    .chain([doc! {}])
    .collect();
    yields(
        &input,
        doc! {"_id": 0, "lo": {"$minN": {"input": "$v", "n": 3}}, "hi": {"$maxN": {"input": "$v", "n": 2}}},
        &[doc! {"_id": 0, "lo": [2.5, 3, "s"], "hi": [true, [1]]}],
    );
    // An equal later value does not replace a kept one: 1 stays, 1.0 is dropped.
    let equal = [doc! {"v": 1}, doc! {"v": 1.0}, doc! {"v": 1_i64}];
    yields(
        &equal,
        doc! {"_id": 0, "lo": {"$minN": {"input": "$v", "n": 1}}, "hi": {"$maxN": {"input": "$v", "n": 1}}},
        &[doc! {"_id": 0, "lo": [1], "hi": [1]}],
    );
    // Only nulls: an empty array.
    yields(
        &[doc! {"v": null}, doc! {}],
        doc! {"_id": 0, "lo": {"$minN": {"input": "$v", "n": 2}}},
        &[doc! {"_id": 0, "lo": []}],
    );
}

#[test]
fn n_larger_than_the_group_returns_all() {
    let input = [doc! {"v": 2, "s": 1}, doc! {"v": 1, "s": 2}];
    yields(
        &input,
        doc! {"_id": 0,
        "f": {"$firstN": {"input": "$v", "n": 10}},
        "l": {"$lastN": {"input": "$v", "n": 10_i64}},
        "mi": {"$minN": {"input": "$v", "n": 10.0}},
        "ma": {"$maxN": {"input": "$v", "n": 10}},
        "t": {"$topN": {"output": "$v", "sortBy": {"s": -1}, "n": 10}},
        "b": {"$bottomN": {"output": "$v", "sortBy": {"s": -1}, "n": 10}}},
        &[
            doc! {"_id": 0, "f": [2, 1], "l": [2, 1], "mi": [1, 2], "ma": [2, 1], "t": [1, 2], "b": [1, 2]},
        ],
    );
}

#[test]
fn top_n_sort_semantics() {
    // Ties keep the first seen; a missing sort field sorts as null, below numbers.
    let input = [
        doc! {"o": "a", "s": 1},
        doc! {"o": "b", "s": 1},
        doc! {"o": "c"},
        doc! {"o": "d", "s": 1},
        doc! {"o": "e", "s": 0},
    ];
    yields(
        &input,
        doc! {"_id": 0, "t": {"$topN": {"output": "$o", "sortBy": {"s": 1}, "n": 3}},
        "d": {"$topN": {"output": "$o", "sortBy": {"s": -1}, "n": 2}}},
        &[doc! {"_id": 0, "t": ["c", "e", "a"], "d": ["a", "b"]}],
    );
    // An array sorts by its smallest element ascending, its largest descending, as $sort:
    // [5, 0] keys as 0 ascending (so 3 is the bottom) and as 5 descending.
    let arrays = [doc! {"o": "x", "s": [5, 0]}, doc! {"o": "y", "s": 3}];
    yields(
        &arrays,
        doc! {"_id": 0, "asc": {"$top": {"output": "$o", "sortBy": {"s": 1}}},
        "desc": {"$top": {"output": "$o", "sortBy": {"s": -1}}},
        "b": {"$bottom": {"output": "$o", "sortBy": {"s": 1}}}},
        &[doc! {"_id": 0, "asc": "x", "desc": "x", "b": "y"}],
    );
    // Two sort keys and a dotted path.
    let nested = [
        doc! {"o": 1, "a": {"b": 2}, "c": 1},
        doc! {"o": 2, "a": {"b": 1}, "c": 5},
        doc! {"o": 3, "a": {"b": 2}, "c": 9},
    ];
    yields(
        &nested,
        doc! {"_id": 0, "t": {"$topN": {"output": "$o", "sortBy": {"a.b": -1, "c": -1}, "n": 3}}},
        &[doc! {"_id": 0, "t": [3, 1, 2]}],
    );
    // Sort keys compare across types in BSON order: numbers before strings.
    let mixed = [doc! {"o": 1, "s": "a"}, doc! {"o": 2, "s": 10}];
    yields(
        &mixed,
        doc! {"_id": 0, "t": {"$topN": {"output": "$o", "sortBy": {"s": 1}, "n": 1}}},
        &[doc! {"_id": 0, "t": [2]}],
    );
}

#[test]
fn n_is_validated_per_group() {
    let g = gamescores();
    let first_n = |n: Bson| doc! {"_id": "$gameId", "f": {"$firstN": {"input": "$score", "n": n}}};
    fails(&g, first_n(Bson::Int32(0)), 5_787_908);
    fails(&g, first_n(Bson::Int64(-1)), 5_787_908);
    fails(&g, first_n(Bson::Double(1.5)), 5_787_903);
    fails(&g, first_n(Bson::String("1".into())), 5_787_902);
    fails(&g, first_n(Bson::Null), 5_787_902);
    // n is evaluated against the group key: a plain _id has no fields, a document field is
    // missing unless it is in the key.
    fails(&g, first_n(Bson::String("$score".into())), 5_787_902);
    fails(
        &g,
        doc! {"_id": {"g": "$gameId"}, "f": {"$minN": {"input": "$score", "n": "$score"}}},
        5_787_902,
    );
    yields(
        &[
            doc! {"k": 2, "v": 1},
            doc! {"k": 2, "v": 2},
            doc! {"k": 2, "v": 3},
        ],
        doc! {"_id": {"k": "$k"}, "f": {"$maxN": {"input": "$v", "n": "$k"}}},
        &[doc! {"_id": {"k": 2}, "f": [3, 2]}],
    );
    let top_n = |n: Bson| doc! {"_id": 0, "t": {"$topN": {"output": "$score", "sortBy": {"score": 1}, "n": n}}};
    fails(&g, top_n(Bson::Int32(-3)), 5_787_908);
    fails(&g, top_n(Bson::Double(0.5)), 5_787_903);
    yields(
        &g,
        top_n(Bson::Double(2.0)),
        &[doc! {"_id": 0, "t": [1, 10]}],
    );
}

#[test]
fn bad_arguments_fail_with_mongodb_codes() {
    let g = gamescores();
    let spec = |op: &str, arg: Bson| doc! {"_id": 0, "x": {op: arg}};
    let d = |d: Document| Bson::Document(d);
    // accumulator_multi.cpp: AccumulatorN::parseArgs and the parse functions.
    fails(&g, spec("$firstN", Bson::Int32(1)), 5_787_801);
    fails(&g, spec("$lastN", Bson::Int32(1)), 5_787_801);
    fails(&g, spec("$minN", Bson::Int32(1)), 5_787_900);
    fails(&g, spec("$maxN", Bson::String("x".into())), 5_787_900);
    fails(
        &g,
        spec("$firstN", d(doc! {"input": "$a", "n": 1, "x": 1})),
        5_787_901,
    );
    fails(&g, spec("$lastN", d(doc! {"input": "$a"})), 5_787_906);
    fails(&g, spec("$maxN", d(doc! {"n": 1})), 5_787_907);
    // accumulatorNParseArgs for $top/$bottom/$topN/$bottomN.
    fails(&g, spec("$topN", Bson::Int32(1)), 5_788_001);
    fails(&g, spec("$bottom", Bson::Int32(1)), 5_788_001);
    fails(
        &g,
        spec("$top", d(doc! {"output": "$a", "sortBy": {"a": 1}, "n": 1})),
        5_788_002,
    );
    fails(
        &g,
        spec(
            "$topN",
            d(doc! {"output": "$a", "sortBy": {"a": 1}, "x": 1, "n": 1}),
        ),
        5_788_002,
    );
    fails(
        &g,
        spec("$bottomN", d(doc! {"output": "$a", "sortBy": {"a": 1}})),
        5_788_003,
    );
    fails(
        &g,
        spec("$topN", d(doc! {"sortBy": {"a": 1}, "n": 1})),
        5_788_004,
    );
    fails(&g, spec("$bottom", d(doc! {"output": "$a"})), 5_788_005);
    // sortBy: BSONElement::Obj() and SortPattern's checks.
    fails(
        &g,
        spec("$top", d(doc! {"output": "$a", "sortBy": 1})),
        10_065,
    );
    fails(
        &g,
        spec("$top", d(doc! {"output": "$a", "sortBy": {"a": 2}})),
        15_975,
    );
    fails(
        &g,
        spec("$top", d(doc! {"output": "$a", "sortBy": {"a": "x"}})),
        15_974,
    );
    fails(
        &g,
        spec("$top", d(doc! {"output": "$a", "sortBy": {"$a": 1}})),
        16_410,
    );
    fails(
        &g,
        spec("$top", d(doc! {"output": "$a", "sortBy": {"a..b": 1}})),
        15_998,
    );
    // Unary: an array argument is refused before the accumulator parses it.
    fails(&g, spec("$topN", Bson::Array(vec![])), 40_237);
    // Still refused: JavaScript and the approximate percentiles.
    fails(&g, spec("$accumulator", d(doc! {})), 238);
    fails(
        &g,
        spec("$median", d(doc! {"input": "$a", "method": "approximate"})),
        238,
    );
    fails(
        &g,
        spec(
            "$percentile",
            d(doc! {"input": "$a", "p": [0.5], "method": "approximate"}),
        ),
        238,
    );
}

#[test]
fn duplicate_sort_by_keys_fail_with_7472500() {
    // A Document cannot hold a duplicate key, so build the raw stage by hand.
    let mut sort_by = bson::RawDocumentBuf::new();
    let a = <&bson::raw::CStr>::try_from("a").expect("name");
    sort_by.append(a, 1);
    sort_by.append(a, -1);
    let mut top = bson::RawDocumentBuf::new();
    top.append(<&bson::raw::CStr>::try_from("output").expect("name"), "$a");
    top.append(
        <&bson::raw::CStr>::try_from("sortBy").expect("name"),
        sort_by,
    );
    let mut field = bson::RawDocumentBuf::new();
    field.append(<&bson::raw::CStr>::try_from("$top").expect("name"), top);
    let mut spec = raw(&doc! {"_id": 0});
    spec.append(<&bson::raw::CStr>::try_from("t").expect("name"), field);
    let mut stage = bson::RawDocumentBuf::new();
    stage.append(<&bson::raw::CStr>::try_from("$group").expect("name"), spec);
    let mut pipeline = bson::RawArrayBuf::new();
    pipeline.push(stage);
    let e = Pipeline::parse(&pipeline).expect_err("duplicate key");
    assert_eq!(e.code(), 7_472_500, "{e}");
}

// https://www.mongodb.com/docs/manual/reference/operator/aggregation/stdDevPop/
#[test]
fn std_dev_manual_example_and_edges() {
    let users = [
        doc! {"_id": 1, "name": "dave123", "quiz": 1, "score": 85},
        doc! {"_id": 2, "name": "dave2", "quiz": 1, "score": 90},
        doc! {"_id": 3, "name": "ahn", "quiz": 1, "score": 71},
        doc! {"_id": 4, "name": "li", "quiz": 2, "score": 96},
        doc! {"_id": 5, "name": "annT", "quiz": 2, "score": 77},
        doc! {"_id": 6, "name": "ty", "quiz": 2, "score": 82},
    ];
    yields(
        &users,
        doc! {"_id": "$quiz", "stdDev": {"$stdDevPop": "$score"}},
        &[
            doc! {"_id": 1, "stdDev": 8.041_558_721_209_88},
            doc! {"_id": 2, "stdDev": 8.041_558_721_209_88},
        ],
    );
    // Sample: the sum of squared deviations (194) over n - 1.
    yields(
        &users[..3],
        doc! {"_id": null, "s": {"$stdDevSamp": "$score"}},
        &[doc! {"_id": null, "s": 97.0_f64.sqrt()}],
    );
    // Non-numbers are ignored; no numbers is null; one number is 0 for Pop, null for Samp.
    let mixed = [
        doc! {"v": "9"},
        doc! {"v": null},
        doc! {},
        doc! {"v": [1, 2]},
        doc! {"v": 4_i64},
        doc! {"v": 2.0},
        doc! {"v": 0},
    ];
    yields(
        &mixed,
        doc! {"_id": null, "p": {"$stdDevPop": "$v"}, "s": {"$stdDevSamp": "$v"}},
        &[doc! {"_id": null, "p": (8.0_f64 / 3.0).sqrt(), "s": 2.0}],
    );
    yields(
        &mixed[..4],
        doc! {"_id": null, "p": {"$stdDevPop": "$v"}, "s": {"$stdDevSamp": "$v"}},
        &[doc! {"_id": null, "p": null, "s": null}],
    );
    yields(
        &mixed[4..5],
        doc! {"_id": null, "p": {"$stdDevPop": "$v"}, "s": {"$stdDevSamp": "$v"}},
        &[doc! {"_id": null, "p": 0.0, "s": null}],
    );
}

// https://www.mongodb.com/docs/manual/reference/operator/aggregation/mergeObjects/
#[test]
fn merge_objects_manual_example_and_edges() {
    let sales = [
        doc! {"_id": 1, "year": 2017, "item": "A", "quantity": {"2017Q1": 500, "2017Q2": 500}},
        doc! {"_id": 2, "year": 2016, "item": "A", "quantity": {"2016Q1": 400, "2016Q2": 300, "2016Q3": 0, "2016Q4": 0}},
        doc! {"_id": 3, "year": 2017, "item": "B", "quantity": {"2017Q1": 300}},
        doc! {"_id": 4, "year": 2016, "item": "B", "quantity": {"2016Q3": 100, "2016Q4": 250}},
    ];
    yields(
        &sales,
        doc! {"_id": "$item", "mergedSales": {"$mergeObjects": "$quantity"}},
        &[
            doc! {"_id": "A", "mergedSales": {"2017Q1": 500, "2017Q2": 500, "2016Q1": 400, "2016Q2": 300, "2016Q3": 0, "2016Q4": 0}},
            doc! {"_id": "B", "mergedSales": {"2017Q1": 300, "2016Q3": 100, "2016Q4": 250}},
        ],
    );
    // Null and missing are ignored; a later value replaces an earlier one in place,
    // null values inside the objects included.
    let input = [
        doc! {"m": {"a": 1, "b": 2}},
        doc! {"m": null},
        doc! {},
        doc! {"m": {"c": 3, "a": null}},
    ];
    yields(
        &input,
        doc! {"_id": 0, "m": {"$mergeObjects": "$m"}},
        &[doc! {"_id": 0, "m": {"a": null, "b": 2, "c": 3}}],
    );
    yields(
        &input[1..3],
        doc! {"_id": 0, "m": {"$mergeObjects": "$m"}},
        &[doc! {"_id": 0, "m": {}}],
    );
    fails(
        &[doc! {"m": {"a": 1}}, doc! {"m": 1}],
        doc! {"_id": 0, "m": {"$mergeObjects": "$m"}},
        40_400,
    );
    let e = group(
        &[doc! {"m": [1]}],
        doc! {"_id": 0, "m": {"$mergeObjects": "$m"}},
    )
    .expect_err("not an object");
    assert!(
        e.to_string()
            .starts_with("$mergeObjects requires object inputs, but input [1] is of type array"),
        "{e}"
    );
}

// https://www.mongodb.com/docs/manual/reference/operator/aggregation/concatArrays/ (8.1 accumulator)
#[test]
fn concat_arrays_accumulates_in_order() {
    let input = [
        doc! {"k": 1, "a": [1, 2]},
        doc! {"k": 1},
        doc! {"k": 1, "a": []},
        doc! {"k": 1, "a": [[3], 1]},
    ];
    yields(
        &input,
        doc! {"_id": "$k", "all": {"$concatArrays": "$a"}},
        &[doc! {"_id": 1, "all": [1, 2, [3], 1]}],
    );
    fails(
        &[doc! {"a": null}],
        doc! {"_id": 0, "all": {"$concatArrays": "$a"}},
        14,
    );
    fails(
        &[doc! {"a": [1]}, doc! {"a": 1}],
        doc! {"_id": 0, "all": {"$concatArrays": "$a"}},
        14,
    );
}

// https://www.mongodb.com/docs/manual/reference/operator/aggregation/setUnion/ (8.1 accumulator)
#[test]
fn set_union_is_a_set_of_the_elements() {
    let input = [
        doc! {"a": [1, 2]},
        doc! {},
        doc! {"a": [2.0, "x", [1]]},
        doc! {"a": [1_i64, "x"]},
    ];
    let out = group(&input, doc! {"_id": 0, "u": {"$setUnion": "$a"}}).expect("runs");
    let Some(Bson::Array(mut got)) = out[0].get("u").cloned() else {
        panic!("no array in {out:?}");
    };
    // The order is unspecified: compare as sets (MongoDB's tests do too).
    got.sort_by_key(|v| format!("{v:?}"));
    let mut want = vec![
        Bson::Int32(1),
        Bson::Int32(2),
        Bson::String("x".into()),
        values(&[Bson::Int32(1)]),
    ];
    want.sort_by_key(|v| format!("{v:?}"));
    assert_eq!(got, want);
    fails(
        &[doc! {"a": null}],
        doc! {"_id": 0, "u": {"$setUnion": "$a"}},
        14,
    );
    fails(
        &[doc! {"a": "x"}],
        doc! {"_id": 0, "u": {"$setUnion": "$a"}},
        14,
    );
}

/// The expressions of the new accumulators, `sortBy` included, report the
/// fields they read: a `$group` fed documents cut to `input_fields` gives
/// what it gives on whole documents.
#[test]
fn new_accumulators_report_the_fields_they_read() {
    let group = doc! {"$group": {"_id": "$k",
    "t": {"$topN": {"output": "$o", "sortBy": {"s.x": -1, "r": 1}, "n": 2}},
    "b": {"$bottom": {"output": "$o", "sortBy": {"q": 1}}},
    "f": {"$firstN": {"input": "$f", "n": 2}},
    "m": {"$maxN": {"input": "$mx", "n": {"$add": [1, 1]}}},
    "mo": {"$mergeObjects": "$obj"},
    "sd": {"$stdDevPop": "$num"},
    "ca": {"$concatArrays": "$arr"},
    "su": {"$setUnion": "$arr2"}}};
    let pipeline = Pipeline::parse(&stages(std::slice::from_ref(&group))).expect("parses");
    let fields = pipeline.input_fields().expect("reads named fields only");
    let want: Vec<&str> = vec![
        "arr", "arr2", "f", "k", "mx", "num", "o", "obj", "q", "r", "s",
    ];
    assert_eq!(fields.iter().map(String::as_str).collect::<Vec<_>>(), want);
    let input: Vec<Document> = (0..6)
        .map(|i| {
            doc! {"k": i % 2, "o": i, "s": {"x": i % 3}, "r": -i, "q": 10 - i, "f": i * 2,
            "mx": i, "obj": {format!("f{i}"): i}, "num": i, "arr": [i], "arr2": [i % 2],
            "unread": "x"}
        })
        .collect();
    let whole = run(&input, std::slice::from_ref(&group)).expect("runs");
    let cut: Vec<_> = input
        .iter()
        .map(|d| {
            let mut c = Document::new();
            for (k, v) in d {
                if fields.contains(k) {
                    c.insert(k.clone(), v.clone());
                }
            }
            Ok(raw(&c))
        })
        .collect();
    let streamed: Vec<Document> = pipeline
        .stream_after_match(cut.into_iter())
        .map(|d| Document::try_from(d.expect("runs").as_ref()).expect("valid"))
        .collect();
    assert_eq!(streamed, whole);
    // The expected values, so a wrong cut cannot pass by yielding the same nulls.
    assert_eq!(
        whole[0].get("t"),
        Some(&Bson::Array(vec![Bson::Int32(2), Bson::Int32(4)]))
    );
    assert_eq!(whole[0].get("b"), Some(&Bson::Int32(0)));
}

/// A value of the generated domain: small ints, a few strings, null, missing.
fn n_value() -> impl Strategy<Value = Option<Bson>> {
    prop_oneof![
        Just(None),
        Just(Some(Bson::Null)),
        (-3..3_i32).prop_map(|n| Some(Bson::Int32(n))),
        prop::sample::select(vec!["a", "b", "c"]).prop_map(|s| Some(Bson::String(s.to_owned()))),
    ]
}

/// MongoDB's order over the generated domain: null (missing) < numbers < strings.
fn model_order(a: &Option<Bson>, b: &Option<Bson>) -> Ordering {
    fn rank(v: &Option<Bson>) -> (u8, i32, String) {
        match v {
            None | Some(Bson::Null) => (0, 0, String::new()),
            Some(Bson::Int32(n)) => (1, *n, String::new()),
            Some(Bson::String(s)) => (2, 0, s.clone()),
            Some(other) => panic!("not generated: {other:?}"),
        }
    }
    rank(a).cmp(&rank(b))
}

fn model_group(rows: &[(i32, Option<Bson>, Option<Bson>)], n: usize) -> Vec<Document> {
    let mut keys: Vec<i32> = Vec::new();
    for (k, _, _) in rows {
        if !keys.contains(k) {
            keys.push(*k);
        }
    }
    keys.iter()
        .map(|key| {
            // (position in the input, value, sort value, distinct sort value)
            let group: Vec<(usize, &Option<Bson>, &Option<Bson>)> = rows
                .iter()
                .enumerate()
                .filter(|(_, (k, _, _))| k == key)
                .map(|(i, (_, v, s))| (i, v, s))
                .collect();
            let as_null = |v: &Option<Bson>| v.clone().unwrap_or(Bson::Null);
            let first: Vec<Bson> = group.iter().take(n).map(|(_, v, _)| as_null(v)).collect();
            let last: Vec<Bson> = group
                .iter()
                .skip(group.len().saturating_sub(n))
                .map(|(_, v, _)| as_null(v))
                .collect();
            let mut present: Vec<Bson> = group
                .iter()
                .filter_map(|(_, v, _)| (*v).clone().filter(|v| *v != Bson::Null))
                .collect();
            present.sort_by(|a, b| model_order(&Some(a.clone()), &Some(b.clone())));
            let min: Vec<Bson> = present.iter().take(n).cloned().collect();
            let max: Vec<Bson> = present.iter().rev().take(n).cloned().collect();
            // Stable sorts: ties keep input order, as $topN keeps the first seen.
            let mut asc = group.clone();
            asc.sort_by(|a, b| model_order(a.2, b.2));
            let top: Vec<Bson> = asc.iter().take(n).map(|(i, _, _)| pos(*i)).collect();
            let mut desc = group.clone();
            desc.sort_by(|a, b| model_order(b.2, a.2));
            let top_desc: Vec<Bson> = desc.iter().take(n).map(|(i, _, _)| pos(*i)).collect();
            // $bottomN by a distinct key (the position scrambled): the last n in sort order.
            let mut by_u = group.clone();
            by_u.sort_by_key(|(i, _, _)| scrambled(*i));
            let bottom: Vec<Bson> = by_u
                .iter()
                .skip(by_u.len().saturating_sub(n))
                .map(|(i, _, _)| pos(*i))
                .collect();
            let one = top.first().cloned().unwrap_or(Bson::Null);
            let last_one = bottom.last().cloned().unwrap_or(Bson::Null);
            doc! {"_id": key, "f": first, "l": last, "mi": min, "ma": max,
            "t": top, "td": top_desc, "b": bottom,
            "one": one, "last": last_one}
        })
        .collect()
}

fn pos(i: usize) -> Bson {
    Bson::Int64(i64::try_from(i).expect("small"))
}

/// A key distinct per position (7 is invertible modulo 101; inputs are shorter).
fn scrambled(i: usize) -> usize {
    (i * 7) % 101
}

proptest! {
    #[test]
    fn n_accumulators_agree_with_sorting_the_group(
        rows in prop::collection::vec((0..3_i32, n_value(), n_value()), 1..40),
        n in 1..6_usize,
    ) {
        let input: Vec<Document> = rows
            .iter()
            .enumerate()
            .map(|(i, (k, v, s))| {
                let mut d = doc! {"k": k, "i": pos(i), "u": pos(scrambled(i))};
                if let Some(v) = v {
                    d.insert("v", v.clone());
                }
                if let Some(s) = s {
                    d.insert("s", s.clone());
                }
                d
            })
            .collect();
        let n = i64::try_from(n).expect("small");
        let spec = doc! {"_id": "$k",
            "f": {"$firstN": {"input": "$v", "n": n}},
            "l": {"$lastN": {"input": "$v", "n": n}},
            "mi": {"$minN": {"input": "$v", "n": n}},
            "ma": {"$maxN": {"input": "$v", "n": n}},
            "t": {"$topN": {"output": "$i", "sortBy": {"s": 1}, "n": n}},
            "td": {"$topN": {"output": "$i", "sortBy": {"s": -1}, "n": n}},
            "b": {"$bottomN": {"output": "$i", "sortBy": {"u": 1}, "n": n}},
            "one": {"$top": {"output": "$i", "sortBy": {"s": 1}}},
            "last": {"$bottom": {"output": "$i", "sortBy": {"u": 1}}}};
        let got = group(&input, spec).expect("group runs");
        prop_assert_eq!(got, model_group(&rows, usize::try_from(n).expect("small")));
    }

    #[test]
    fn std_dev_agrees_with_the_two_pass_formula(
        values in prop::collection::vec(-1000..1000_i32, 0..30),
    ) {
        let input: Vec<Document> = values.iter().map(|v| doc! {"v": v}).collect();
        let spec = doc! {"_id": null, "p": {"$stdDevPop": "$v"}, "s": {"$stdDevSamp": "$v"}};
        let got = group(&input, spec).expect("group runs");
        if values.is_empty() {
            prop_assert!(got.is_empty());
            return Ok(());
        }
        let count = values.len() as f64;
        let mean = values.iter().map(|v| f64::from(*v)).sum::<f64>() / count;
        let squares: f64 = values.iter().map(|v| (f64::from(*v) - mean).powi(2)).sum();
        let pop = got[0].get_f64("p").expect("a double");
        prop_assert!((pop - (squares / count).sqrt()).abs() <= 1e-9 * (1.0 + pop));
        match got[0].get("s") {
            Some(Bson::Null) => prop_assert_eq!(values.len(), 1),
            Some(Bson::Double(samp)) => {
                let want = (squares / (count - 1.0)).sqrt();
                prop_assert!((samp - want).abs() <= 1e-9 * (1.0 + want));
            }
            other => prop_assert!(false, "unexpected {:?}", other),
        }
    }
}

#[test]
fn n_errors_carry_mongodb_messages() {
    let message = |n: Bson| {
        group(
            &gamescores(),
            doc! {"_id": 0, "f": {"$firstN": {"input": "$score", "n": n}}},
        )
        .expect_err("bad n")
        .to_string()
    };
    // accumulator_multi.cpp, AccumulatorN::validateN.
    assert_eq!(
        message(Bson::Int32(0)),
        "'n' must be greater than 0, found 0"
    );
    assert_eq!(
        message(Bson::Double(1.5)),
        "Value for 'n' must be of integral type, but found 1.5"
    );
    let e = group(
        &gamescores(),
        doc! {"_id": 0, "t": {"$topN": {"output": "$a", "sortBy": {"a": 1}, "m": 1, "n": 1}}},
    )
    .expect_err("unknown argument");
    assert_eq!(e.to_string(), "Unknown argument to $topN 'm'");
    let e = group(&[doc! {"a": 1}], doc! {"_id": 0, "u": {"$setUnion": "$a"}})
        .expect_err("not an array");
    assert_eq!(
        e.to_string(),
        "$setUnion requires array inputs, but input 1 is of type int"
    );
}

/// `n`, `input`, `output` may read the command's `let` variables.
#[test]
fn let_variables_reach_n_and_output() {
    let vars = query::Variables::from_let(&raw(&doc! {"lim": 2, "tag": "t"})).expect("let");
    let stage = doc! {"$group": {"_id": null,
    "f": {"$firstN": {"input": "$$tag", "n": "$$lim"}},
    "t": {"$topN": {"output": ["$score", "$$tag"], "sortBy": {"score": -1}, "n": "$$lim"}}}};
    let pipeline = Pipeline::parse_with(&stages(&[stage]), &vars).expect("parses");
    let out = pipeline
        .run(gamescores().iter().map(|d| Ok(raw(d))))
        .expect("runs");
    let got = Document::try_from(out[0].as_ref()).expect("valid");
    assert_eq!(
        got,
        doc! {"_id": null, "f": ["t", "t"], "t": [[99, "t"], [80, "t"]]}
    );
}
