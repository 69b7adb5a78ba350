//! Data-driven cases for `$replaceOne`, `$replaceAll`, `$strcasecmp`, `$substrCP`,
//! `$indexOfCP` and `$indexOfBytes` (MongoDB manual examples; error codes from
//! `expression.cpp`).

use crate::support::{fails_with, yields};
use bson::{Bson, Document, doc};

fn d() -> Document {
    doc! {"item": "blue paint", "n": Bson::Null, "i": 2, "cafe": "café au lait", "arr": [1]}
}

fn text(s: &str) -> Bson {
    Bson::String(s.to_owned())
}

#[test]
fn replace_one_and_all_follow_the_manual() {
    let r = |expr: Document, expected: &str| yields(&d(), expr, text(expected));
    r(
        doc! {"$replaceOne": {"input": "$item", "find": "blue paint", "replacement": "red paint"}},
        "red paint",
    );
    r(
        doc! {"$replaceOne": {"input": "blue paint with blue paintbrush", "find": "blue paint",
        "replacement": "red paint"}},
        "red paint with blue paintbrush",
    );
    r(
        doc! {"$replaceAll": {"input": "blue paint with blue paintbrush", "find": "blue paint",
        "replacement": "red paint"}},
        "red paint with red paintbrush",
    );
    r(
        doc! {"$replaceOne": {"input": "$item", "find": "green", "replacement": "x"}},
        "blue paint",
    );
    r(
        doc! {"$replaceAll": {"input": "aaaa", "find": "aa", "replacement": "b"}},
        "bb",
    );
    // An empty `find` matches at the start (one) or between every character (all).
    r(
        doc! {"$replaceOne": {"input": "abc", "find": "", "replacement": "-"}},
        "-abc",
    );
    r(
        doc! {"$replaceAll": {"input": "abc", "find": "", "replacement": "-"}},
        "-a-b-c-",
    );
    r(
        doc! {"$replaceAll": {"input": "", "find": "", "replacement": "-"}},
        "-",
    );
    r(
        doc! {"$replaceAll": {"input": "café", "find": "é", "replacement": "e"}},
        "cafe",
    );
    // Matching is case and diacritic sensitive.
    r(
        doc! {"$replaceAll": {"input": "Café cafe", "find": "cafe", "replacement": "X"}},
        "Café X",
    );
    for name in ["$replaceOne", "$replaceAll"] {
        yields(
            &d(),
            doc! {name: {"input": "$n", "find": "a", "replacement": "b"}},
            Bson::Null,
        );
        yields(
            &d(),
            doc! {name: {"input": "a", "find": "$nope", "replacement": "b"}},
            Bson::Null,
        );
        yields(
            &d(),
            doc! {name: {"input": "a", "find": "a", "replacement": "$n"}},
            Bson::Null,
        );
        // Types are checked before nulls give null.
        fails_with(
            &d(),
            doc! {name: {"input": "$n", "find": 1, "replacement": "b"}},
            51745,
        );
        fails_with(
            &d(),
            doc! {name: {"input": 1, "find": "a", "replacement": "b"}},
            51746,
        );
        fails_with(
            &d(),
            doc! {name: {"input": "a", "find": "a", "replacement": 1}},
            51744,
        );
        fails_with(&d(), doc! {name: {"find": "a", "replacement": "b"}}, 51749);
        fails_with(&d(), doc! {name: {"input": "a", "replacement": "b"}}, 51748);
        fails_with(&d(), doc! {name: {"input": "a", "find": "a"}}, 51747);
        fails_with(
            &d(),
            doc! {name: {"input": "a", "find": "a", "replacement": "b", "x": 1}},
            51750,
        );
        fails_with(&d(), doc! {name: ["a", "a", "b"]}, 51751);
    }
}

#[test]
fn strcasecmp_compares_ascii_case_insensitively() {
    let c = |a: Bson, b: Bson, expected: i32| {
        yields(&d(), doc! {"$strcasecmp": [a, b]}, Bson::Int32(expected))
    };
    c(text("ABC"), text("abc"), 0);
    c(text("abc"), text("abd"), -1);
    c(text("b"), text("A"), 1);
    c(text("a"), text("ab"), -1);
    // Null and missing are the empty string; numbers are their text.
    c(text(""), Bson::Null, 0);
    c(text("a"), Bson::Null, 1);
    c(Bson::Int32(13), text("13"), 0);
    yields(&d(), doc! {"$strcasecmp": ["$nope", ""]}, Bson::Int32(0));
    // Only ASCII letters fold.
    c(text("É"), text("é"), -1);
    fails_with(&d(), doc! {"$strcasecmp": ["$arr", "a"]}, 16007);
    fails_with(&d(), doc! {"$strcasecmp": ["a"]}, 16020);
}

#[test]
fn substr_cp_counts_code_points() {
    let s = |expr: Document, expected: &str| yields(&d(), expr, text(expected));
    s(doc! {"$substrCP": ["$item", 0, 4]}, "blue");
    s(doc! {"$substrCP": ["$cafe", 3, 4]}, "é au");
    s(doc! {"$substrCP": ["寿司sushi", 0, 3]}, "寿司s");
    s(doc! {"$substrCP": ["abc", 1, 100]}, "bc");
    s(doc! {"$substrCP": ["abc", 5, 1]}, "");
    s(doc! {"$substrCP": ["abc", 1.0, 1_i64]}, "b");
    s(doc! {"$substrCP": ["$n", 0, 1]}, "");
    s(doc! {"$substrCP": [12345, 1, 2]}, "23");
    fails_with(&d(), doc! {"$substrCP": ["abc", "1", 1]}, 34450);
    fails_with(&d(), doc! {"$substrCP": ["abc", 0.5, 1]}, 34451);
    fails_with(&d(), doc! {"$substrCP": ["abc", 0, "$n"]}, 34452);
    fails_with(&d(), doc! {"$substrCP": ["abc", 0, 1.5]}, 34453);
    fails_with(&d(), doc! {"$substrCP": ["abc", 0, -1]}, 34454);
    fails_with(&d(), doc! {"$substrCP": ["abc", -1, 1]}, 34455);
    fails_with(&d(), doc! {"$substrCP": ["$arr", 0, 1]}, 16007);
    fails_with(&d(), doc! {"$substrCP": ["abc", 0]}, 16020);
}

#[test]
fn index_of_bytes_and_code_points_follow_the_manual() {
    let i = |expr: Document, expected: i32| yields(&d(), expr, Bson::Int32(expected));
    i(doc! {"$indexOfBytes": ["cafeteria", "e"]}, 3);
    i(doc! {"$indexOfBytes": ["cafétéria", "é"]}, 3);
    i(doc! {"$indexOfBytes": ["cafétéria", "e"]}, -1);
    i(doc! {"$indexOfBytes": ["cafétéria", "t"]}, 5);
    i(doc! {"$indexOfBytes": ["foo.bar.fi", ".", 5]}, 7);
    i(doc! {"$indexOfBytes": ["vanilla", "ll", 0, 2]}, -1);
    i(doc! {"$indexOfBytes": ["vanilla", "ll", 0, 6]}, 4);
    i(doc! {"$indexOfBytes": ["vanilla", "ll", -0.0, 5]}, -1);
    i(doc! {"$indexOfBytes": ["vanilla", "nilla", 3]}, -1);
    i(doc! {"$indexOfBytes": ["vanilla", "", 3]}, 3);
    i(doc! {"$indexOfBytes": ["abc", "", 3]}, 3);
    i(doc! {"$indexOfBytes": ["abc", "", 4]}, -1);
    i(doc! {"$indexOfBytes": ["abc", "b", 2, 1]}, -1);
    i(doc! {"$indexOfBytes": ["", ""]}, 0);

    i(doc! {"$indexOfCP": ["cafeteria", "e"]}, 3);
    i(doc! {"$indexOfCP": ["cafétéria", "é"]}, 3);
    i(doc! {"$indexOfCP": ["cafétéria", "e"]}, -1);
    i(doc! {"$indexOfCP": ["cafétéria", "t"]}, 4);
    i(doc! {"$indexOfCP": ["foo.bar.fi", ".", 5]}, 7);
    i(doc! {"$indexOfCP": ["vanilla", "ll", 0, 2]}, -1);
    i(doc! {"$indexOfCP": ["vanilla", "ll", 0, 3]}, -1);
    // The match may run past the end bound; only its start must be before it.
    i(doc! {"$indexOfCP": ["vanilla", "ll", 0, 5]}, 4);
    i(doc! {"$indexOfCP": ["寿司sushi", "s", 1]}, 2);
    i(doc! {"$indexOfCP": ["abc", "", 1]}, 1);
    // Unlike $indexOfBytes, the empty string is not found at the very end...
    i(doc! {"$indexOfCP": ["abc", "", 3]}, -1);
    // ...except in the empty string.
    i(doc! {"$indexOfCP": ["", ""]}, 0);
    i(doc! {"$indexOfCP": ["", "", 1]}, -1);

    // From MongoDB's jstests (aggregation/expressions/indexof_*.js).
    i(doc! {"$indexOfBytes": ["a∫∫b", "b"]}, 7);
    i(doc! {"$indexOfBytes": ["a∫∫b", "b", 6]}, 7);
    i(doc! {"$indexOfBytes": ["ab∫c", "c", 0, 3]}, -1);
    i(doc! {"$indexOfBytes": ["abc∫b∫", "b∫"]}, 6);
    i(doc! {"$indexOfBytes": ["abc\0d\0", "d", 5, 6]}, -1);
    i(doc! {"$indexOfCP": ["∫aƒ", "ƒ"]}, 2);
    i(doc! {"$indexOfCP": ["∫b∫ba", "b", 2]}, 3);
    i(doc! {"$indexOfCP": ["ab∫de", "d", 0, 3]}, -1);
    i(doc! {"$indexOfCP": ["ab∫de", "d", 0, 4]}, 3);
    i(doc! {"$indexOfCP": ["øøc", "ø", 1]}, 1);
    i(doc! {"$indexOfCP": ["abcbabc", "b", 2, 4]}, 3);
    i(doc! {"$indexOfCP": ["a∫b", "b", 3, 5]}, -1);
    i(doc! {"$indexOfCP": ["", "", 3]}, -1);
    i(doc! {"$indexOfCP": ["", "", 3, 1]}, -1);
    i(doc! {"$indexOfCP": ["ab∫\0d", "d"]}, 4);
    i(doc! {"$indexOfCP": ["πbƒ\0d\0", "d", 5, 6]}, -1);

    for name in ["$indexOfBytes", "$indexOfCP"] {
        yields(&d(), doc! {name: ["$n", "a"]}, Bson::Null);
        yields(&d(), doc! {name: ["$nope", 1]}, Bson::Null);
        fails_with(&d(), doc! {name: ["a", "a", -1]}, 40097);
        fails_with(&d(), doc! {name: ["a", "a", 0, -1]}, 40097);
        fails_with(&d(), doc! {name: ["a", "a", 0.5]}, 40096);
        fails_with(&d(), doc! {name: ["a", "a", "$n"]}, 40096);
        fails_with(&d(), doc! {name: ["a"]}, 28667);
        fails_with(&d(), doc! {name: ["a", "a", 1, 1, 1]}, 28667);
    }
    for name in ["$indexOfBytes", "$indexOfCP"] {
        // A null string answers null before the other arguments are evaluated.
        yields(&d(), doc! {name: ["$n", {"$divide": [1, 0]}]}, Bson::Null);
    }
    fails_with(&d(), doc! {"$indexOfBytes": [1, "a"]}, 40091);
    fails_with(&d(), doc! {"$indexOfBytes": ["a", "$n"]}, 40092);
    fails_with(&d(), doc! {"$indexOfCP": [1, "a"]}, 40093);
    fails_with(&d(), doc! {"$indexOfCP": ["a", 1]}, 40094);
}
