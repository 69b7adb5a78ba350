//! Data-driven cases for pipeline-style updates and upsert documents.

use bson::doc;

use crate::support::{Code, Doc, check_pipeline, check_upsert};

#[test]
fn pipeline_cases() {
    check_pipeline(
        doc! {"_id": 1, "a": 1},
        vec![doc! {"$set": {"b": {"$add": ["$a", 1]}}}],
        Doc(doc! {"_id": 1, "a": 1, "b": 2}),
    );
    check_pipeline(
        doc! {"_id": 1, "a": 1},
        vec![doc! {"$addFields": {"a": "$$REMOVE"}}],
        Doc(doc! {"_id": 1}),
    );
    check_pipeline(
        doc! {"_id": 1, "a": {"c": 1}},
        vec![doc! {"$set": {"a": {"b": 2}}}],
        Doc(doc! {"_id": 1, "a": {"c": 1, "b": 2}}),
    );
    check_pipeline(
        doc! {"_id": 1, "a": 1},
        vec![doc! {"$set": {"x.y": "$a"}}],
        Doc(doc! {"_id": 1, "a": 1, "x": {"y": 1}}),
    );
    check_pipeline(
        doc! {"_id": 1, "a": 1, "b": 2},
        vec![doc! {"$set": {"a": "$b", "b": "$a"}}],
        Doc(doc! {"_id": 1, "a": 2, "b": 1}),
    );
    check_pipeline(
        doc! {"_id": 1, "a": 1, "b": 2},
        vec![doc! {"$unset": "a"}],
        Doc(doc! {"_id": 1, "b": 2}),
    );
    check_pipeline(
        doc! {"_id": 1, "a": 1, "b": 2},
        vec![doc! {"$unset": ["a", "b"]}],
        Doc(doc! {"_id": 1}),
    );
    check_pipeline(
        doc! {"_id": 1, "a": 1},
        vec![doc! {"$unset": 1}],
        Code(31120),
    );
    check_pipeline(
        doc! {"_id": 1, "a": 1},
        vec![doc! {"$unset": []}],
        Code(31119),
    );
    check_pipeline(
        doc! {"_id": 1, "a": 1, "b": 2},
        vec![doc! {"$project": {"b": 1}}],
        Doc(doc! {"_id": 1, "b": 2}),
    );
    check_pipeline(
        doc! {"_id": 1, "a": {"x": 5}},
        vec![doc! {"$replaceWith": "$a"}],
        Doc(doc! {"_id": 1, "x": 5}),
    );
    check_pipeline(
        doc! {"_id": 1, "a": {"x": 5}},
        vec![doc! {"$replaceRoot": {"newRoot": "$a"}}],
        Doc(doc! {"_id": 1, "x": 5}),
    );
    check_pipeline(
        doc! {"_id": 1, "a": 3},
        vec![doc! {"$replaceWith": "$a"}],
        Code(40228),
    );
    check_pipeline(
        doc! {"_id": 1, "a": 3},
        vec![doc! {"$replaceRoot": {}}],
        Code(40231),
    );
    check_pipeline(doc! {"_id": 1, "a": 3}, vec![doc! {"$match": {}}], Code(72));
    check_pipeline(
        doc! {"_id": 1, "a": 3},
        vec![doc! {"bogus": {}}],
        Code(40324),
    );
    check_pipeline(
        doc! {"_id": 1, "a": 3},
        vec![doc! {"$set": {"a": 1}, "$unset": "b"}],
        Code(40323),
    );
    check_pipeline(
        doc! {"_id": 1, "a": 3},
        vec![doc! {"$set": {"_id": 2}}],
        Code(66),
    );
    check_pipeline(
        doc! {"_id": 1, "a": 3},
        vec![doc! {"$set": {"a": {"$bogus": 1}}}],
        Code(168),
    );
    check_pipeline(
        doc! {"_id": 1, "a": 3},
        vec![
            doc! {"$set": {"b": 1}},
            doc! {"$set": {"c": {"$add": ["$b", "$a"]}}},
        ],
        Doc(doc! {"_id": 1, "a": 3, "b": 1, "c": 4}),
    );
    check_pipeline(
        doc! {"_id": 1, "a": 3},
        vec![],
        Doc(doc! {"_id": 1, "a": 3}),
    );
}

#[test]
fn upsert_cases() {
    check_upsert(
        doc! {"a": 1},
        doc! {"$set": {"b": 2}},
        Doc(doc! {"a": 1, "b": 2}),
    );
    check_upsert(
        doc! {"_id": 5, "a": 1},
        doc! {"$set": {"b": 2}},
        Doc(doc! {"_id": 5, "a": 1, "b": 2}),
    );
    check_upsert(
        doc! {"a": 1, "_id": 5},
        doc! {"$inc": {"n": 1}},
        Doc(doc! {"_id": 5, "a": 1, "n": 1}),
    );
    check_upsert(
        doc! {"a.b": 1},
        doc! {"$set": {"c": 2}},
        Doc(doc! {"a": {"b": 1}, "c": 2}),
    );
    check_upsert(
        doc! {"a": {"$eq": 3}},
        doc! {"$set": {"c": 2}},
        Doc(doc! {"a": 3, "c": 2}),
    );
    check_upsert(
        doc! {"a": {"$gt": 3}},
        doc! {"$set": {"c": 2}},
        Doc(doc! {"c": 2}),
    );
    check_upsert(
        doc! {"$and": [{"a": 1}, {"b": 2}]},
        doc! {"$set": {"c": 3}},
        Doc(doc! {"a": 1, "b": 2, "c": 3}),
    );
    // The optimizer turns a one-clause `$or` into its clause (upsert_fields.js).
    check_upsert(
        doc! {"$or": [{"a": 1}]},
        doc! {"$set": {"c": 3}},
        Doc(doc! {"a": 1, "c": 3}),
    );
    check_upsert(
        doc! {"a": 1, "$and": [{"a": 2}]},
        doc! {"$set": {"c": 3}},
        Code(54),
    );
    check_upsert(
        doc! {"a": 1, "$and": [{"a.b": 2}]},
        doc! {"$set": {"c": 3}},
        Code(54),
    );
    check_upsert(
        doc! {"a": 1},
        doc! {"$setOnInsert": {"b": 2}},
        Doc(doc! {"a": 1, "b": 2}),
    );
    check_upsert(doc! {"a": 1}, doc! {"$set": {"a": 2}}, Doc(doc! {"a": 2}));
    check_upsert(
        doc! {"_id": 1, "a": 1},
        doc! {"b": 2},
        Doc(doc! {"_id": 1, "b": 2}),
    );
    check_upsert(doc! {"a": 1}, doc! {"b": 2}, Doc(doc! {"b": 2}));
    check_upsert(
        doc! {"a": {"b": 1}},
        doc! {"$set": {"a.c": 2}},
        Doc(doc! {"a": {"b": 1, "c": 2}}),
    );
    check_upsert(
        doc! {"a": {"$in": [1, 2]}},
        doc! {"$set": {"c": 2}},
        Doc(doc! {"c": 2}),
    );
    check_upsert(doc! {}, doc! {"$set": {"_id": 7}}, Doc(doc! {"_id": 7}));
    check_upsert(doc! {"_id": 1}, doc! {"$set": {"_id": 7}}, Code(66));
}

#[test]
fn growth_past_16_mib_is_refused() {
    let big = "x".repeat(9 * 1024 * 1024);
    crate::support::check(
        doc! {"_id": 1, "a": big.clone()},
        doc! {"$set": {"b": big.clone()}},
        Code(17419),
    );
    crate::support::check(
        doc! {"_id": 1, "a": big.clone()},
        doc! {"$set": {"a.b": 1, "c": big}},
        Code(28),
    );
}

#[test]
fn changed_paths_name_concrete_positions() {
    use update::{ApplyContext, Update, UpdateOptions};
    let raw = crate::support::raw;
    let cases: &[(bson::Document, bson::Document, &[&str])] = &[
        (
            doc! {"_id": 1, "a": [1, 2]},
            doc! {"$set": {"a.$[]": 2}},
            &["a.0"],
        ),
        (doc! {"_id": 1, "a": 1}, doc! {"$set": {"a": 1}}, &[]),
        (
            doc! {"_id": 1, "a": 1},
            doc! {"$inc": {"a": 1}, "$set": {"b.c": 1}},
            &["a", "b.c"],
        ),
        (
            doc! {"_id": 1, "a": 1},
            doc! {"$rename": {"a": "z"}},
            // Both ends change: an index on `z` needs the new entry as much as `a` the old.
            &["a", "z"],
        ),
        (doc! {"_id": 1, "a": 1}, doc! {"b": 1}, &["a", "b"]),
    ];
    for (doc, update, want) in cases {
        let applied = Update::parse(&raw(update), UpdateOptions::default())
            .and_then(|u| u.apply(&raw(doc), &ApplyContext::default()))
            .expect("applies");
        assert_eq!(applied.changed_paths, *want, "doc {doc} update {update}");
    }
}

/// Regression: a pipeline `$set` or `$unset` through an array failed with
/// PathNotViable (28) or treated a numeric component as a position. Aggregation
/// maps the path over the array: `$set` sets the field in each document element
/// and replaces every other element (and a scalar) with a document of the new
/// fields (mongodb/mongo `src/mongo/db/exec/projection_node.cpp`,
/// `applyExpressionsToValue`); `$unset` removes it from each document element.
#[test]
fn pipeline_set_maps_over_arrays() {
    check_pipeline(
        doc! {"_id": 1, "a": [{"b": 0, "c": 1}, {"c": 2}]},
        vec![doc! {"$set": {"a.b": 1}}],
        Doc(doc! {"_id": 1, "a": [{"b": 1, "c": 1}, {"c": 2, "b": 1}]}),
    );
    check_pipeline(
        doc! {"_id": 1, "a": [1, {"c": 2}, [3, {"d": 4}]]},
        vec![doc! {"$set": {"a.b": 1}}],
        Doc(doc! {"_id": 1, "a": [{"b": 1}, {"c": 2, "b": 1}, [{"b": 1}, {"d": 4, "b": 1}]]}),
    );
    check_pipeline(
        doc! {"_id": 1, "a": 5},
        vec![doc! {"$set": {"a.b": 1}}],
        Doc(doc! {"_id": 1, "a": {"b": 1}}),
    );
    check_pipeline(
        doc! {"_id": 1, "a": [1, 2]},
        vec![doc! {"$set": {"a.0": 9}}],
        Doc(doc! {"_id": 1, "a": [{"0": 9}, {"0": 9}]}),
    );
    check_pipeline(
        doc! {"_id": 1, "a": [{"b": 1}]},
        vec![doc! {"$set": {"a.c": "$a.b"}}],
        Doc(doc! {"_id": 1, "a": [{"b": 1, "c": [1]}]}),
    );
    check_pipeline(
        doc! {"_id": 1, "a": [{"b": 1, "c": 1}]},
        vec![doc! {"$set": {"a.b": "$$REMOVE"}}],
        Doc(doc! {"_id": 1, "a": [{"c": 1}]}),
    );
    check_pipeline(
        doc! {"_id": 1},
        vec![doc! {"$set": {"x.y": "$$REMOVE"}}],
        Doc(doc! {"_id": 1, "x": {}}),
    );
    check_pipeline(
        doc! {"_id": 1, "a": {"c": 1}},
        vec![doc! {"$set": {"a": {"b": 2}, "a.d": 3}}],
        Doc(doc! {"_id": 1, "a": {"c": 1, "b": 2, "d": 3}}),
    );
    check_pipeline(
        doc! {"_id": 1, "a": 1, "b": 2},
        vec![doc! {"$set": {"c": 1, "a": 5}}],
        Doc(doc! {"_id": 1, "a": 5, "b": 2, "c": 1}),
    );
    check_pipeline(
        doc! {"_id": 1},
        vec![doc! {"$set": {"a": 1, "a.b": 2}}],
        Code(40176),
    );
    check_pipeline(
        doc! {"_id": 1},
        vec![doc! {"$set": {"a": {"b": 1}, "a.b": 2}}],
        Code(40176),
    );
    // A pipeline may write top-level `$` names (`allowTopLevelDollarPrefixedFields`).
    check_pipeline(
        doc! {"_id": 1},
        vec![doc! {"$replaceWith": {"$literal": {"_id": 1, "$x": 1}}}],
        Doc(doc! {"_id": 1, "$x": 1}),
    );
}

#[test]
fn pipeline_unset_maps_over_arrays() {
    check_pipeline(
        doc! {"_id": 1, "a": [{"b": 1, "c": 1}, 2, [{"b": 2}]]},
        vec![doc! {"$unset": "a.b"}],
        Doc(doc! {"_id": 1, "a": [{"c": 1}, 2, [{}]]}),
    );
    check_pipeline(
        doc! {"_id": 1, "a": [1, 2]},
        vec![doc! {"$unset": "a.0"}],
        Doc(doc! {"_id": 1, "a": [1, 2]}),
    );
    check_pipeline(
        doc! {"_id": 1, "a": 5},
        vec![doc! {"$unset": "a.b"}],
        Doc(doc! {"_id": 1, "a": 5}),
    );
    check_pipeline(
        doc! {"_id": 1, "a": {"b": 1}, "c": 1},
        vec![doc! {"$unset": ["a.b", "a"]}],
        Doc(doc! {"_id": 1, "c": 1}),
    );
}

/// Regression: the seed ignored single-value `$in`, `$all`, `$eq` beside other
/// operators and one-clause `$or`, and kept filter order. MongoDB seeds every
/// equality of the canonicalized filter, in path order
/// (jstests/core/write/update/upsert_fields.js, upsert_and.js,
/// upsert_fields_duplicate_or.js; mongodb/mongo `src/mongo/db/update/path_support.cpp`).
#[test]
fn upsert_seed_cases() {
    let regex = |pattern: &str| bson::Regex {
        pattern: pattern.try_into().expect("pattern"),
        options: "".try_into().expect("options"),
    };
    let set = || doc! {"$set": {"c": 2}};
    check_upsert(doc! {"a": {"$in": [5]}}, set(), Doc(doc! {"a": 5, "c": 2}));
    check_upsert(
        doc! {"a": {"$in": [5, 5.0]}},
        set(),
        Doc(doc! {"a": 5, "c": 2}),
    );
    check_upsert(doc! {"a": {"$in": [regex("x")]}}, set(), Doc(doc! {"c": 2}));
    check_upsert(doc! {"a": {"$all": [5]}}, set(), Doc(doc! {"a": 5, "c": 2}));
    check_upsert(doc! {"a": {"$all": [1, 2]}}, set(), Code(54));
    check_upsert(
        doc! {"a": {"$elemMatch": {"$eq": 1}}},
        set(),
        Doc(doc! {"c": 2}),
    );
    check_upsert(
        doc! {"a": {"$eq": 1, "$gt": 0}},
        set(),
        Doc(doc! {"a": 1, "c": 2}),
    );
    check_upsert(
        doc! {"$and": [{"a": 1}, {"$and": [{"b": 2}]}]},
        set(),
        Doc(doc! {"a": 1, "b": 2, "c": 2}),
    );
    check_upsert(
        doc! {"$or": [{"a": 1}, {"a": 1}]},
        set(),
        Doc(doc! {"a": 1, "c": 2}),
    );
    check_upsert(
        doc! {"$or": [{"a": 1}, {"b": 2}]},
        set(),
        Doc(doc! {"c": 2}),
    );
    check_upsert(doc! {"$nor": [{"a": 1}]}, set(), Doc(doc! {"c": 2}));
    check_upsert(
        doc! {"$and": [{"c": 1}, {"d": 1}], "$or": [{"x": 1}, {"x": 2}]},
        doc! {"$set": {"e": 1}},
        Doc(doc! {"c": 1, "d": 1, "e": 1}),
    );
    check_upsert(
        doc! {"b": 1, "a": 2},
        set(),
        Doc(doc! {"a": 2, "b": 1, "c": 2}),
    );
    check_upsert(
        doc! {"_id": {"$in": [1]}},
        set(),
        Doc(doc! {"_id": 1, "c": 2}),
    );
    check_upsert(
        doc! {"_id.x": 1, "_id.y": 2},
        set(),
        Doc(doc! {"_id": {"x": 1, "y": 2}, "c": 2}),
    );
    check_upsert(
        doc! {"x.x": {"$all": [1]}},
        set(),
        Doc(doc! {"x": {"x": 1}, "c": 2}),
    );
    check_upsert(doc! {"x": [1, {"x": 1}], "x.x": 1}, set(), Code(54));
}

/// A pipeline may produce `$`-prefixed and dotted field names with `$setField`
/// (MongoDB 5.0+), at the top level and inside embedded documents; `$unsetField`
/// removes them again.
#[test]
fn pipeline_set_field_writes_dotted_and_dollar_names() {
    check_pipeline(
        doc! {"_id": 1, "foo": {}},
        vec![
            doc! {"$replaceWith": {"$setField": {"field": {"$literal": "$a"}, "value": 1, "input": "$$ROOT"}}},
        ],
        Doc(doc! {"_id": 1, "foo": {}, "$a": 1}),
    );
    check_pipeline(
        doc! {"_id": 1, "foo": {}},
        vec![
            doc! {"$replaceWith": {"$setField": {"field": {"$literal": "a.b"}, "value": 1, "input": "$$ROOT"}}},
        ],
        Doc(doc! {"_id": 1, "foo": {}, "a.b": 1}),
    );
    check_pipeline(
        doc! {"_id": 1, "foo": {}},
        vec![
            doc! {"$set": {"foo": {"$setField": {"field": {"$literal": "$a"}, "value": 1, "input": "$foo"}}}},
        ],
        Doc(doc! {"_id": 1, "foo": {"$a": 1}}),
    );
    check_pipeline(
        doc! {"_id": 1, "foo": {"a.b": 1, "c": 2}, "$x": 3},
        vec![
            doc! {"$set": {"foo": {"$unsetField": {"field": "a.b", "input": "$foo"}}}},
            doc! {"$replaceWith": {"$unsetField": {"field": {"$literal": "$x"}, "input": "$$ROOT"}}},
        ],
        Doc(doc! {"_id": 1, "foo": {"c": 2}}),
    );
}

/// A pipeline update reads the command's `let` variables.
#[test]
fn pipeline_reads_command_variables() {
    use update::{ApplyContext, Update, UpdateOptions};
    let raw = crate::support::raw;
    let variables =
        query::Variables::from_let(&raw(&doc! {"x": "bar", "n": {"$add": [1, 2]}})).expect("let");
    let options = UpdateOptions {
        variables,
        ..UpdateOptions::default()
    };
    let stages: bson::RawArrayBuf = [doc! {"$set": {"foo": "$$x", "m": {"$add": ["$m", "$$n"]}}}]
        .iter()
        .map(raw)
        .collect();
    let applied = Update::parse_pipeline(&stages, options)
        .and_then(|u| u.apply(&raw(&doc! {"_id": 1, "m": 1}), &ApplyContext::default()))
        .expect("applies");
    assert_eq!(applied.doc, raw(&doc! {"_id": 1, "m": 4, "foo": "bar"}));
    // Without them the variable is undefined.
    let failed = Update::parse_pipeline(&stages, UpdateOptions::default())
        .and_then(|u| u.apply(&raw(&doc! {"_id": 1, "m": 1}), &ApplyContext::default()))
        .expect_err("undefined variable");
    assert_eq!(failed.code(), 17276);
}
