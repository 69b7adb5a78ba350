//! Data-driven cases for `$regexMatch`, `$regexFind` and `$regexFindAll`: the MongoDB
//! manual's examples, options given as `options` or as a BSON regex's flags, and the
//! 51103..51111 errors of `ExpressionRegex` in `expression.cpp`.

use crate::support::{evaluate, fails_with, yields};
use bson::{Bson, Document, Regex, doc};

fn d() -> Document {
    doc! {
        "description": "Single LINE description.",
        "multi": "First lines\nsecond line",
        "cafe": "café",
        "n": Bson::Null,
        "i": 1,
        "pattern": "line",
        "flags": "i",
    }
}

fn regex(pattern: &str, options: &str) -> Bson {
    Bson::RegularExpression(Regex {
        pattern: pattern.try_into().expect("pattern"),
        options: options.try_into().expect("options"),
    })
}

fn found(matched: &str, idx: i32, captures: Vec<Bson>) -> Bson {
    Bson::Document(doc! {"match": matched, "idx": idx, "captures": captures})
}

#[test]
fn regex_match_follows_the_manual() {
    let m = |spec: Document, expected: bool| {
        yields(&d(), doc! {"$regexMatch": spec}, Bson::Boolean(expected))
    };
    m(doc! {"input": "$description", "regex": "line"}, false);
    m(
        doc! {"input": "$description", "regex": "line", "options": "i"},
        true,
    );
    m(
        doc! {"input": "$description", "regex": regex("line", "i")},
        true,
    );
    m(
        doc! {"input": "$description", "regex": regex("line", "")},
        false,
    );
    m(
        doc! {"input": "$description", "regex": regex("line", ""), "options": "i"},
        true,
    );
    m(
        doc! {"input": "$description", "regex": "$pattern", "options": "$flags"},
        true,
    );
    // m: anchors at line boundaries; s: dot matches a newline; x: whitespace ignored.
    m(doc! {"input": "$multi", "regex": "^second"}, false);
    m(
        doc! {"input": "$multi", "regex": "^second", "options": "m"},
        true,
    );
    m(doc! {"input": "$multi", "regex": "lines.second"}, false);
    m(
        doc! {"input": "$multi", "regex": "lines.second", "options": "s"},
        true,
    );
    m(
        doc! {"input": "$multi", "regex": "F i r s t # comment", "options": "x"},
        true,
    );
    m(
        doc! {"input": "$multi", "regex": "first", "options": "iu"},
        true,
    );
    m(doc! {"input": "$cafe", "regex": "^caf.$"}, true);
    // Null or missing input or pattern: false, after the options are checked.
    m(doc! {"input": "$n", "regex": "a"}, false);
    m(doc! {"input": "$nope", "regex": "a"}, false);
    m(doc! {"input": "a", "regex": "$n"}, false);
    m(doc! {"input": "a", "regex": "$nope", "options": "z"}, false);
    m(doc! {"input": "a", "regex": "a", "options": "$n"}, true);
}

#[test]
fn regex_find_reports_the_first_match() {
    let f = |spec: Document, expected: Bson| yields(&d(), doc! {"$regexFind": spec}, expected);
    f(
        doc! {"input": "$description", "regex": "line", "options": "i"},
        found("LINE", 7, vec![]),
    );
    f(
        doc! {"input": "$description", "regex": "(l)(i)(x)?ne", "options": "i"},
        found(
            "LINE",
            7,
            vec![
                Bson::String("L".into()),
                Bson::String("I".into()),
                Bson::Null,
            ],
        ),
    );
    // idx counts code points, not bytes.
    f(doc! {"input": "$cafe", "regex": "é"}, found("é", 3, vec![]));
    f(
        doc! {"input": "é日本語abc", "regex": "b"},
        found("b", 5, vec![]),
    );
    f(
        doc! {"input": "abc", "regex": "(?<first>a)(?<second>z)?"},
        found("a", 0, vec![Bson::String("a".into()), Bson::Null]),
    );
    f(doc! {"input": "", "regex": ""}, found("", 0, vec![]));
    f(doc! {"input": "$description", "regex": "xyz"}, Bson::Null);
    f(doc! {"input": "$n", "regex": "a"}, Bson::Null);
    f(doc! {"input": "a", "regex": "$nope"}, Bson::Null);
}

#[test]
fn regex_find_all_reports_every_match() {
    let all = |spec: Document, expected: Vec<Bson>| {
        yields(&d(), doc! {"$regexFindAll": spec}, Bson::Array(expected))
    };
    all(
        doc! {"input": "$multi", "regex": "line", "options": "i"},
        vec![found("line", 6, vec![]), found("line", 19, vec![])],
    );
    all(
        doc! {"input": "a1b22c333", "regex": "([a-z])(\\d+)"},
        vec![
            found("a1", 0, vec!["a".into(), "1".into()]),
            found("b22", 2, vec!["b".into(), "22".into()]),
            found("c333", 5, vec!["c".into(), "333".into()]),
        ],
    );
    // Matches do not overlap.
    all(
        doc! {"input": "aaaa", "regex": "aa"},
        vec![found("aa", 0, vec![]), found("aa", 2, vec![])],
    );
    // ^ without m matches only at the start of the whole input.
    all(
        doc! {"input": "aaa", "regex": "^a"},
        vec![found("a", 0, vec![])],
    );
    all(
        doc! {"input": "$multi", "regex": "^\\w", "options": "m"},
        vec![found("F", 0, vec![]), found("s", 12, vec![])],
    );
    // Word boundaries see the text before the search position.
    all(doc! {"input": "ab ab", "regex": "\\bb"}, vec![]);
    // An empty match moves on one code point; none is reported at the very end.
    all(
        doc! {"input": "ab", "regex": "x*"},
        vec![found("", 0, vec![]), found("", 1, vec![])],
    );
    all(
        doc! {"input": "éa", "regex": "a*"},
        vec![found("", 0, vec![]), found("a", 1, vec![])],
    );
    all(
        doc! {"input": "", "regex": "x*"},
        vec![found("", 0, vec![])],
    );
    all(doc! {"input": "", "regex": "x"}, vec![]);
    // From MongoDB's jstests (aggregation/expressions/regex.js): lazy and empty
    // groups capture the empty string at every position but the end.
    let empties = |n: i32, captures: Vec<Bson>| -> Vec<Bson> {
        (0..n).map(|i| found("", i, captures.clone())).collect()
    };
    all(
        doc! {"input": "aaa aa", "regex": "(a*?)"},
        empties(6, vec!["".into()]),
    );
    all(
        doc! {"input": "bbbb", "regex": "()"},
        empties(4, vec!["".into()]),
    );
    all(
        doc! {"input": "aaaaa aaaa", "regex": "(aa)+"},
        vec![
            found("aaaa", 0, vec!["aa".into()]),
            found("aaaa", 6, vec!["aa".into()]),
        ],
    );
    all(
        doc! {"input": "Foo line1\nFoo line2\nFoo line3", "regex": "Foo.*line", "options": "s"},
        vec![found("Foo line1\nFoo line2\nFoo line", 0, vec![])],
    );
    all(
        doc! {"input": "मा०गो डीबि", "regex": "(गो )"},
        vec![found("गो ", 3, vec!["गो ".into()])],
    );
    all(doc! {"input": "$n", "regex": "a"}, vec![]);
    all(doc! {"input": "a", "regex": "$n"}, vec![]);
}

#[test]
fn regex_operators_refuse_bad_arguments() {
    for name in ["$regexMatch", "$regexFind", "$regexFindAll"] {
        fails_with(&d(), doc! {name: "a"}, 51103);
        fails_with(
            &d(),
            doc! {name: {"input": "a", "regex": "a", "x": 1}},
            31024,
        );
        fails_with(&d(), doc! {name: {"regex": "a"}}, 31022);
        fails_with(&d(), doc! {name: {"input": "a"}}, 31023);
        fails_with(&d(), doc! {name: {"input": "$i", "regex": "a"}}, 51104);
        fails_with(&d(), doc! {name: {"input": "a", "regex": 1}}, 51105);
        fails_with(&d(), doc! {name: {"input": "a", "regex": "$i"}}, 51105);
        fails_with(
            &d(),
            doc! {name: {"input": "a", "regex": "a", "options": 1}},
            51106,
        );
        fails_with(
            &d(),
            doc! {name: {"input": "a", "regex": regex("a", "i"), "options": "m"}},
            51107,
        );
        fails_with(
            &d(),
            doc! {name: {"input": "a", "regex": regex("a", "i"), "options": ""}},
            51107,
        );
        fails_with(
            &d(),
            doc! {name: {"input": "a", "regex": "a", "options": "g"}},
            51108,
        );
        fails_with(
            &d(),
            doc! {name: {"input": "a", "regex": "$pattern", "options": "q"}},
            51108,
        );
        fails_with(&d(), doc! {name: {"input": "a", "regex": "a\0b"}}, 51109);
        fails_with(
            &d(),
            doc! {name: {"input": "a", "regex": "a", "options": "i\0"}},
            51110,
        );
        fails_with(&d(), doc! {name: {"input": "a", "regex": "(a"}}, 51111);
        fails_with(
            &d(),
            doc! {name: {"input": "a", "regex": "$pattern", "options": "$i"}},
            51106,
        );
        // The input is checked even when the pattern is null.
        fails_with(&d(), doc! {name: {"input": 1, "regex": "$n"}}, 51104);
    }
    // A constant invalid pattern fails when parsed, whatever the input.
    let refused = query::Expression::parse(bson::RawBsonRef::Document(
        &bson::rawdoc! {"$regexMatch": {"input": "$nope", "regex": "(a"}},
    ));
    assert_eq!(refused.map(|_| ()).map_err(|e| e.code()), Err(51111));
}

#[test]
fn regex_find_all_stays_within_its_output_limit() {
    // 2 million empty matches make well over 64 MiB of match documents.
    let input = "x".repeat(2_000_000);
    let got = evaluate(
        &doc! {"s": input},
        Bson::Document(doc! {"$regexFindAll": {"input": "$s", "regex": "y*"}}),
    );
    assert_eq!(got.map_err(|e| e.code()).map(|_| ()), Err(51151));
}

#[test]
fn a_runaway_pattern_fails_with_mongodbs_execution_error() {
    // The backreference needs the backtracker, whose step budget runs out here;
    // MongoDB reports PCRE's match-limit failure as 51156.
    let input = format!("{}b", "a".repeat(40));
    for name in ["$regexMatch", "$regexFind", "$regexFindAll"] {
        fails_with(
            &doc! {"s": input.clone()},
            doc! {name: {"input": "$s", "regex": "^(a+)+\\1$"}},
            51156,
        );
    }
}

#[test]
fn regex_operators_report_the_fields_they_read() {
    let spec = bson::rawdoc! {"$regexFind": {"input": "$a.x", "regex": "$b", "options": "$c"}};
    let expr = query::Expression::parse(bson::RawBsonRef::Document(&spec)).expect("parses");
    let mut fields = std::collections::BTreeSet::new();
    assert!(expr.top_fields(&mut fields));
    assert_eq!(fields.into_iter().collect::<Vec<_>>(), ["a", "b", "c"]);
}
