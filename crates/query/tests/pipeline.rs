//! Data-driven aggregation pipeline cases: (input documents, pipeline,
//! expected output documents or MongoDB error code), one table for every
//! stage, accumulator and refusal; expectations from MongoDB's manual and
//! source (codes of `uassert`s).

use crate::support::raw;
use bson::{Bson, Document, RawArrayBuf, doc};
use query::{Pipeline, QueryError};
use std::cell::Cell;

enum Expect {
    Docs(Vec<Document>),
    Code(i32),
}

struct Case {
    name: &'static str,
    input: Vec<Document>,
    pipeline: Vec<Document>,
    expect: Expect,
}

fn dec(text: &str) -> bson::Decimal128 {
    text.parse().expect("a decimal literal")
}

fn ok(name: &'static str, input: &[Document], pipeline: &[Document], out: &[Document]) -> Case {
    Case {
        name,
        input: input.to_vec(),
        pipeline: pipeline.to_vec(),
        expect: Expect::Docs(out.to_vec()),
    }
}

fn err(name: &'static str, input: &[Document], pipeline: &[Document], code: i32) -> Case {
    Case {
        name,
        input: input.to_vec(),
        pipeline: pipeline.to_vec(),
        expect: Expect::Code(code),
    }
}

/// The stages as the raw `pipeline` array of an aggregate command.
pub fn stages(pipeline: &[Document]) -> RawArrayBuf {
    let mut array = RawArrayBuf::new();
    for stage in pipeline {
        array.push(raw(stage));
    }
    array
}

/// Parses and runs `pipeline` over `input`.
pub fn run(input: &[Document], pipeline: &[Document]) -> Result<Vec<Document>, QueryError> {
    let compiled = Pipeline::parse(&stages(pipeline))?;
    let out = compiled.run(input.iter().map(|d| Ok(raw(d))))?;
    Ok(out
        .iter()
        .map(|d| Document::try_from(d.as_ref()).expect("pipeline output is valid BSON"))
        .collect())
}

fn check(case: &Case) -> Result<(), String> {
    let got = run(&case.input, &case.pipeline);
    match (&case.expect, got) {
        (Expect::Docs(want), Ok(got)) if *want == got => Ok(()),
        (Expect::Code(code), Err(e)) if e.code() == *code => Ok(()),
        (Expect::Docs(want), got) => Err(format!("{}: want {want:?}, got {got:?}", case.name)),
        (Expect::Code(code), got) => Err(format!("{}: want code {code}, got {got:?}", case.name)),
    }
}

fn sales() -> Vec<Document> {
    vec![
        doc! {"_id": 1, "item": "a", "price": 10, "qty": 2, "tags": ["x", "y"]},
        doc! {"_id": 2, "item": "b", "price": 20, "qty": 1, "tags": []},
        doc! {"_id": 3, "item": "a", "price": 5, "qty": 10, "tags": "z"},
        doc! {"_id": 4, "item": "c", "price": 1.5, "qty": 4},
        doc! {"_id": 5, "item": "b", "price": 20, "qty": Bson::Null, "tags": Bson::Null},
    ]
}

fn ids(ids: &[i32]) -> Vec<Document> {
    let all = sales();
    ids.iter()
        .map(|id| all[usize::try_from(*id - 1).expect("id")].clone())
        .collect()
}

#[rustfmt::skip]
fn match_sort_skip_limit(s: &[Document]) -> Vec<Case> {
    let near = doc! {"$match": {"loc": {"$near": [0, 0]}}};
    vec![
        ok("match equality", s, &[doc! {"$match": {"item": "a"}}], &ids(&[1, 3])),
        // Numbers sort above null, so 20 > null holds (manual, "Comparison/Sort Order").
        ok("match $expr", s, &[doc! {"$match": {"$expr": {"$gt": ["$price", "$qty"]}}}], &ids(&[1, 2, 5])),
        ok("match empty filter", s, &[doc! {"$match": {}}], s),
        err("match $where refused", s, &[doc! {"$match": {"$where": "true"}}], 2),
        err("match $near without a geospatial index", s, &[near], 291),
        err("match not an object", s, &[doc! {"$match": 1}], 15959),
        err("match $expr error at run time", s, &[doc! {"$match": {"$expr": {"$add": ["$item", 1]}}}], 14),
        ok("sort two keys", s, &[doc! {"$sort": {"price": -1, "_id": 1}}], &ids(&[2, 5, 1, 3, 4])),
        ok("sort then limit is top-k", s, &[doc! {"$sort": {"qty": 1}}, doc! {"$limit": 2}], &ids(&[5, 2])),
        ok("sort skip limit", s, &[doc! {"$sort": {"_id": -1}}, doc! {"$skip": 1}, doc! {"$limit": 2}], &ids(&[4, 3])),
        ok("sort limit skip limit", s, &[doc! {"$sort": {"_id": 1}}, doc! {"$limit": 4}, doc! {"$skip": 2}, doc! {"$limit": 5}], &ids(&[3, 4])),
        ok("sort by array uses its smallest element", &[doc! {"_id": 1, "a": [5, 0]}, doc! {"_id": 2, "a": 3}], &[doc! {"$sort": {"a": 1}}], &[doc! {"_id": 1, "a": [5, 0]}, doc! {"_id": 2, "a": 3}]),
        err("sort without keys", s, &[doc! {"$sort": {}}], 15976),
        err("sort not an object", s, &[doc! {"$sort": 1}], 15973),
        err("sort bad direction", s, &[doc! {"$sort": {"a": 2}}], 15975),
        ok("skip", s, &[doc! {"$skip": 3}], &ids(&[4, 5])),
        ok("skip zero", s, &[doc! {"$skip": 0_i64}], s),
        ok("skip past the end", s, &[doc! {"$skip": 99}], &[]),
        ok("limit", s, &[doc! {"$limit": 2}], &ids(&[1, 2])),
        ok("limit as a whole double", s, &[doc! {"$limit": 1.0}], &ids(&[1])),
        err("limit zero", s, &[doc! {"$limit": 0}], 15958),
        err("limit negative", s, &[doc! {"$limit": -1}], 5_107_201),
        err("limit not a number", s, &[doc! {"$limit": "x"}], 5_107_201),
        err("limit fractional", s, &[doc! {"$limit": 1.5}], 5_107_201),
        err("skip negative", s, &[doc! {"$skip": -1}], 5_107_200),
        err("skip NaN", s, &[doc! {"$skip": f64::NAN}], 5_107_200),
    ]
}

#[rustfmt::skip]
fn reshaping(s: &[Document]) -> Vec<Case> {
    let first = &[doc! {"$match": {"_id": 1}}];
    let with = |stage: Document| [first[0].clone(), stage];
    let nested = &[doc! {"_id": 1, "a": [{"b": 1}, {"b": 2}], "m": {"x": 1, "y": 2}}];
    vec![
        ok("project inclusion keeps _id", s, &with(doc! {"$project": {"item": 1}}), &[doc! {"_id": 1, "item": "a"}]),
        ok("project exclusion", s, &with(doc! {"$project": {"_id": 0, "tags": 0, "qty": 0}}), &[doc! {"item": "a", "price": 10}]),
        ok("project computed follows included", s, &with(doc! {"$project": {"total": {"$multiply": ["$price", "$qty"]}, "item": 1}}), &[doc! {"_id": 1, "item": "a", "total": 20}]),
        ok("project sub-projection", nested, &[doc! {"$project": {"m": {"y": 1}, "_id": 0}}], &[doc! {"m": {"y": 2}}]),
        ok("project $slice is the expression", s, &with(doc! {"$project": {"t": {"$slice": ["$tags", 1]}}}), &[doc! {"_id": 1, "t": ["x"]}]),
        err("project positional refused", s, &[doc! {"$project": {"tags.$": 1}}], 31324),
        err("project $elemMatch refused", s, &[doc! {"$project": {"tags": {"$elemMatch": {"$eq": "x"}}}}], 31325),
        err("project empty", s, &[doc! {"$project": {}}], 51272),
        err("project mixes exclusion into inclusion", s, &[doc! {"$project": {"a": 1, "b": 0}}], 31254),
        err("project mixes inclusion into exclusion", s, &[doc! {"$project": {"a": 0, "b": 1}}], 31253),
        err("project not an object", s, &[doc! {"$project": "a"}], 15969),
        ok("addFields appends", s, &with(doc! {"$addFields": {"total": {"$multiply": ["$price", "$qty"]}}}), &[doc! {"_id": 1, "item": "a", "price": 10, "qty": 2, "tags": ["x", "y"], "total": 20}]),
        ok("set replaces in place", s, &with(doc! {"$set": {"price": 0, "item": "$qty"}}), &[doc! {"_id": 1, "item": 2, "price": 0, "qty": 2, "tags": ["x", "y"]}]),
        ok("set sees the input document", &[doc! {"a": 1}], &[doc! {"$set": {"a": 2, "b": "$a"}}], &[doc! {"a": 2, "b": 1}]),
        ok("set nested path creates documents", &[doc! {"_id": 1}], &[doc! {"$set": {"m.x": 1, "n": {"y": 2}}}], &[doc! {"_id": 1, "m": {"x": 1}, "n": {"y": 2}}]),
        ok("set nested spec merges", nested, &[doc! {"$set": {"m": {"z": 3}}}, doc! {"$project": {"m": 1, "_id": 0}}], &[doc! {"m": {"x": 1, "y": 2, "z": 3}}]),
        ok("addFields through an array", nested, &[doc! {"$addFields": {"a.c": 5}}, doc! {"$project": {"a": 1}}], &[doc! {"_id": 1, "a": [{"b": 1, "c": 5}, {"b": 2, "c": 5}]}]),
        ok("addFields $$REMOVE removes", s, &with(doc! {"$addFields": {"qty": "$$REMOVE", "tags": "$missing"}}), &[doc! {"_id": 1, "item": "a", "price": 10}]),
        err("addFields path collision", s, &[doc! {"$addFields": {"a": 1, "a.b": 2}}], 31249),
        err("set not an object", s, &[doc! {"$set": 1}], 40272),
        err("addFields $-prefixed name", s, &[doc! {"$addFields": {"$a": 1}}], 16410),
        ok("unset one field", s, &with(doc! {"$unset": "tags"}), &[doc! {"_id": 1, "item": "a", "price": 10, "qty": 2}]),
        ok("unset several and nested", nested, &[doc! {"$unset": ["a.b", "m.x"]}], &[doc! {"_id": 1, "a": [{}, {}], "m": {"y": 2}}]),
        err("unset non-string", s, &[doc! {"$unset": ["a", 1]}], 31120),
        err("unset empty array", s, &[doc! {"$unset": []}], 31119),
        ok("replaceRoot", nested, &[doc! {"$replaceRoot": {"newRoot": "$m"}}], &[doc! {"x": 1, "y": 2}]),
        ok("replaceWith an object expression", s, &with(doc! {"$replaceWith": {"name": "$item", "n": {"$add": ["$qty", 1]}}}), &[doc! {"name": "a", "n": 3}]),
        err("replaceRoot to a scalar", s, &[doc! {"$replaceRoot": {"newRoot": "$item"}}], 40228),
        err("replaceWith to missing", s, &[doc! {"$replaceWith": "$nothing"}], 40228),
        err("replaceRoot without newRoot", s, &[doc! {"$replaceRoot": {}}], 40231),
        err("replaceRoot unknown option", s, &[doc! {"$replaceRoot": {"newRoot": "$m", "x": 1}}], 40230),
        err("replaceRoot not an object", s, &[doc! {"$replaceRoot": "$m"}], 40229),
    ]
}

#[rustfmt::skip]
fn grouping(s: &[Document]) -> Vec<Case> {
    let numbers = [doc! {"k": 1, "v": 1}, doc! {"k": 1.0, "v": 1.0}, doc! {"k": 1_i64, "v": 1_i64}, doc! {"k": 2, "v": 2}];
    let group = |spec: Document| [doc! {"$group": spec}];
    vec![
        ok("group sum by key in first-seen order", s, &group(doc! {"_id": "$item", "n": {"$sum": "$qty"}}), &[doc! {"_id": "a", "n": 12}, doc! {"_id": "b", "n": 1}, doc! {"_id": "c", "n": 4}]),
        ok("group $count and $avg", s, &group(doc! {"_id": null, "c": {"$count": {}}, "avg": {"$avg": "$price"}}), &[doc! {"_id": null, "c": 5, "avg": 11.3}]),
        ok("group $sum 1 counts", s, &group(doc! {"_id": null, "c": {"$sum": 1}}), &[doc! {"_id": null, "c": 5}]),
        ok("group $min $max skip null", s, &group(doc! {"_id": null, "lo": {"$min": "$qty"}, "hi": {"$max": "$qty"}}), &[doc! {"_id": null, "lo": 1, "hi": 10}]),
        ok("group $min across types", &[doc! {"v": "s"}, doc! {"v": 3}, doc! {"v": null}], &group(doc! {"_id": 0, "lo": {"$min": "$v"}, "hi": {"$max": "$v"}}), &[doc! {"_id": 0, "lo": 3, "hi": "s"}]),
        ok("group $min of nothing is null", &[doc! {"v": null}], &group(doc! {"_id": 0, "lo": {"$min": "$v"}}), &[doc! {"_id": 0, "lo": null}]),
        ok("group $first $last", s, &group(doc! {"_id": "$item", "f": {"$first": "$_id"}, "l": {"$last": "$_id"}}), &[doc! {"_id": "a", "f": 1, "l": 3}, doc! {"_id": "b", "f": 2, "l": 5}, doc! {"_id": "c", "f": 4, "l": 4}]),
        ok("group $first of missing is null", &[doc! {"k": 1}, doc! {"k": 1, "v": 2}], &group(doc! {"_id": "$k", "f": {"$first": "$v"}, "l": {"$last": "$v"}}), &[doc! {"_id": 1, "f": null, "l": 2}]),
        ok("group $push and $addToSet", s, &group(doc! {"_id": null, "all": {"$push": "$item"}, "set": {"$addToSet": "$item"}}), &[doc! {"_id": null, "all": ["a", "b", "a", "c", "b"], "set": ["a", "b", "c"]}]),
        ok("group $push skips missing, keeps null", s, &group(doc! {"_id": null, "t": {"$push": "$tags"}}), &[doc! {"_id": null, "t": [["x", "y"], [], "z", null]}]),
        ok("group $addToSet equal numbers once", &numbers, &group(doc! {"_id": 0, "set": {"$addToSet": "$v"}}), &[doc! {"_id": 0, "set": [1, 2]}]),
        ok("group keys 1, 1.0, NumberLong(1) are one group", &numbers, &group(doc! {"_id": "$k", "n": {"$count": {}}}), &[doc! {"_id": 1, "n": 3}, doc! {"_id": 2, "n": 1}]),
        ok("group $sum types widen to the widest", &numbers, &group(doc! {"_id": 0, "s": {"$sum": "$v"}}), &[doc! {"_id": 0, "s": 5.0}]),
        ok("group _id document", s, &group(doc! {"_id": {"i": "$item", "p": "$price"}, "n": {"$sum": 1}}), &[doc! {"_id": {"i": "a", "p": 10}, "n": 1}, doc! {"_id": {"i": "b", "p": 20}, "n": 2}, doc! {"_id": {"i": "a", "p": 5}, "n": 1}, doc! {"_id": {"i": "c", "p": 1.5}, "n": 1}]),
        ok("group _id document omits missing fields", &[doc! {"a": 1}, doc! {}, doc! {"a": null}], &group(doc! {"_id": {"a": "$a"}}), &[doc! {"_id": {"a": 1}}, doc! {"_id": {}}, doc! {"_id": {"a": null}}]),
        ok("group missing _id value is null", &[doc! {"x": null}, doc! {}], &group(doc! {"_id": "$x", "n": {"$sum": 1}}), &[doc! {"_id": null, "n": 2}]),
        ok("group int32 overflow becomes long", &[doc! {"v": i32::MAX}, doc! {"v": 1}], &group(doc! {"_id": 0, "s": {"$sum": "$v"}}), &[doc! {"_id": 0, "s": i64::from(i32::MAX) + 1}]),
        ok("group int64 overflow becomes double", &[doc! {"v": i64::MAX}, doc! {"v": i64::MAX}], &group(doc! {"_id": 0, "s": {"$sum": "$v"}}), &[doc! {"_id": 0, "s": 2.0 * 9_223_372_036_854_775_807.0}]),
        ok("group $sum ignores non-numbers", s, &group(doc! {"_id": 0, "s": {"$sum": "$item"}, "a": {"$avg": "$item"}}), &[doc! {"_id": 0, "s": 0, "a": null}]),
        ok("group $sum of an array field ignores it", &[doc! {"v": [1, 2]}], &group(doc! {"_id": 0, "s": {"$sum": "$v"}}), &[doc! {"_id": 0, "s": 0}]),
        ok("group of no documents is empty", &[], &group(doc! {"_id": null, "n": {"$sum": 1}}), &[]),
        err("group without _id", s, &group(doc! {"n": {"$sum": 1}}), 15955),
        err("group not an object", s, &[doc! {"$group": 1}], 15947),
        err("group unknown accumulator", s, &group(doc! {"_id": 0, "n": {"$foo": 1}}), 15952),
        err("group accumulator is unary", s, &group(doc! {"_id": 0, "n": {"$sum": [1, 2]}}), 40237),
        err("group two accumulators", s, &group(doc! {"_id": 0, "n": {"$sum": 1, "$avg": 1}}), 40238),
        err("group field name with a dot", s, &group(doc! {"_id": 0, "a.b": {"$sum": 1}}), 40235),
        err("group field name with $", s, &group(doc! {"_id": 0, "$a": {"$sum": 1}}), 40236),
        err("group field not an accumulator", s, &group(doc! {"_id": 0, "n": 1}), 40234),
        err("group $count takes no argument", s, &group(doc! {"_id": 0, "n": {"$count": {"a": 1}}}), 14),
        err("group $median not implemented", s, &group(doc! {"_id": 0, "n": {"$median": {"input": "$qty", "method": "approximate"}}}), 238),
        // Issue 23: a money aggregate over Decimal128 prices answered 238; MongoDB sums decimals exactly.
        ok("group $sum and $avg of Decimal128 prices by customer", &[doc! {"c": "ann", "p": dec("20.99")}, doc! {"c": "bob", "p": dec("5")}, doc! {"c": "ann", "p": dec("10.01")}, doc! {"c": "ann", "p": 1}], &group(doc! {"_id": "$c", "total": {"$sum": "$p"}, "mean": {"$avg": "$p"}, "top": {"$max": "$p"}}), &[doc! {"_id": "ann", "total": dec("32.00"), "mean": dec("10.66666666666666666666666666666667"), "top": dec("20.99")}, doc! {"_id": "bob", "total": dec("5"), "mean": dec("5"), "top": dec("5")}]),
        ok("group $sum of a double and a decimal is a decimal", &[doc! {"p": 0.1}, doc! {"p": dec("0.2")}], &group(doc! {"_id": 0, "s": {"$sum": "$p"}, "a": {"$avg": "$p"}}), &[doc! {"_id": 0, "s": dec("0.3000000000000000055511151231257827"), "a": dec("0.1500000000000000027755575615628914")}]),
    ]
}

#[rustfmt::skip]
fn counting_and_unwinding(s: &[Document]) -> Vec<Case> {
    let unwind = |spec: Bson| [doc! {"$unwind": spec}, doc! {"$project": {"tags": 1, "i": 1}}];
    let deep = [doc! {"_id": 1, "a": {"b": [1, 2]}}, doc! {"_id": 2, "a": [{"b": [3]}]}];
    vec![
        ok("count", s, &[doc! {"$count": "n"}], &[doc! {"n": 5}]),
        ok("count of nothing is nothing", s, &[doc! {"$match": {"item": "z"}}, doc! {"$count": "n"}], &[]),
        err("count not a string", s, &[doc! {"$count": 1}], 40156),
        err("count empty", s, &[doc! {"$count": ""}], 40157),
        err("count $-prefixed", s, &[doc! {"$count": "$n"}], 40158),
        err("count with a dot", s, &[doc! {"$count": "a.b"}], 40160),
        ok("unwind drops empty, null and missing", s, &unwind(Bson::String("$tags".into())), &[doc! {"_id": 1, "tags": "x"}, doc! {"_id": 1, "tags": "y"}, doc! {"_id": 3, "tags": "z"}]),
        ok("unwind preserve with index", s, &unwind(Bson::Document(doc! {"path": "$tags", "includeArrayIndex": "i", "preserveNullAndEmptyArrays": true})), &[
            doc! {"_id": 1, "tags": "x", "i": 0_i64}, doc! {"_id": 1, "tags": "y", "i": 1_i64}, doc! {"_id": 2, "i": null},
            doc! {"_id": 3, "tags": "z", "i": null}, doc! {"_id": 4, "i": null}, doc! {"_id": 5, "tags": null, "i": null},
        ]),
        ok("unwind nested path, not through arrays", &deep, &[doc! {"$unwind": "$a.b"}], &[doc! {"_id": 1, "a": {"b": 1}}, doc! {"_id": 1, "a": {"b": 2}}]),
        err("unwind path without $", s, &[doc! {"$unwind": "tags"}], 28818),
        err("unwind spec a number", s, &[doc! {"$unwind": 1}], 15981),
        err("unwind unknown option", s, &[doc! {"$unwind": {"path": "$a", "x": 1}}], 28811),
        err("unwind path not a string", s, &[doc! {"$unwind": {"path": 1}}], 28808),
        err("unwind preserve not a bool", s, &[doc! {"$unwind": {"path": "$a", "preserveNullAndEmptyArrays": 1}}], 28809),
        err("unwind index with $", s, &[doc! {"$unwind": {"path": "$a", "includeArrayIndex": "$i"}}], 28822),
        err("unwind index empty", s, &[doc! {"$unwind": {"path": "$a", "includeArrayIndex": ""}}], 28810),
        err("unwind without path", s, &[doc! {"$unwind": {}}], 28812),
        ok("sortByCount", s, &[doc! {"$sortByCount": "$item"}], &[doc! {"_id": "a", "count": 2}, doc! {"_id": "b", "count": 2}, doc! {"_id": "c", "count": 1}]),
        ok("sortByCount expression", s, &[doc! {"$sortByCount": {"$gt": ["$price", 6]}}], &[doc! {"_id": true, "count": 3}, doc! {"_id": false, "count": 2}]),
        err("sortByCount plain string", s, &[doc! {"$sortByCount": "item"}], 40148),
        err("sortByCount number", s, &[doc! {"$sortByCount": 1}], 40149),
        err("sortByCount object without operator", s, &[doc! {"$sortByCount": {"a": 1}}], 40147),
        ok("facet", s, &[doc! {"$facet": {"n": [{"$count": "n"}], "top": [{"$sort": {"price": -1}}, {"$limit": 1}, {"$project": {"_id": 1}}]}}], &[doc! {"n": [{"n": 5}], "top": [{"_id": 2}]}]),
        err("facet inside facet", s, &[doc! {"$facet": {"a": [{"$facet": {"b": []}}]}}], 40600),
        err("facet argument not an array", s, &[doc! {"$facet": {"a": 1}}], 40170),
        err("facet empty", s, &[doc! {"$facet": {}}], 40169),
        err("facet element not a document", s, &[doc! {"$facet": {"a": [1]}}], 40171),
    ]
}

#[rustfmt::skip]
fn pipeline_level(s: &[Document]) -> Vec<Case> {
    let mut cases = vec![
        ok("empty pipeline passes documents through", s, &[], s),
        err("unknown stage", s, &[doc! {"$foo": 1}], 40324),
        err("stage name without $", s, &[doc! {"match": {}}], 40324),
        err("two fields in a stage", s, &[doc! {"$match": {}, "$limit": 1}], 40323),
        err("empty stage", s, &[doc! {}], 40323),
    ];
    for stage in ["$graphLookup", "$geoNear", "$setWindowFields", "$densify", "$fill"] {
        cases.push(err("engine stage refused", s, &[doc! {stage: {}}], 238));
    }
    cases
}

/// `$out`/`$merge` (the engine writes; the pipeline yields what they receive) and the
/// source stages `$documents`/`$listLocalSessions`: positions, arguments, codes.
#[rustfmt::skip]
fn output_and_source_stages(s: &[Document]) -> Vec<Case> {
    let a = doc! {"$match": {"item": "a"}};
    vec![
        ok("out yields what it writes", s, &[a.clone(), doc! {"$out": "x"}], &ids(&[1, 3])),
        ok("out to another database", s, &[a.clone(), doc! {"$out": {"db": "d", "coll": "x"}}], &ids(&[1, 3])),
        ok("merge yields what it writes", s, &[a.clone(), doc! {"$merge": {"into": "x", "whenMatched": "replace"}}], &ids(&[1, 3])),
        err("out not last", s, &[doc! {"$out": "x"}, a.clone()], 40601),
        err("merge not last", s, &[doc! {"$merge": "x"}, a.clone()], 40601),
        err("out inside facet", s, &[doc! {"$facet": {"f": [{"$out": "x"}]}}], 40600),
        err("out of a number", s, &[doc! {"$out": 1}], 16990),
        err("out without coll", s, &[doc! {"$out": {"db": "d"}}], 40414),
        err("out without db", s, &[doc! {"$out": {"coll": "c"}}], 40414),
        err("out unknown field", s, &[doc! {"$out": {"db": "d", "coll": "c", "x": 1}}], 40415),
        err("out coll of a number", s, &[doc! {"$out": {"db": "d", "coll": 1}}], 14),
        err("merge of a number", s, &[doc! {"$merge": 1}], 51182),
        err("merge without into", s, &[doc! {"$merge": {"on": "_id"}}], 40414),
        err("merge into a number", s, &[doc! {"$merge": {"into": 1}}], 51178),
        err("merge on a number", s, &[doc! {"$merge": {"into": "x", "on": 1}}], 51186),
        err("merge on array of numbers", s, &[doc! {"$merge": {"into": "x", "on": [1]}}], 51134),
        err("merge unknown mode", s, &[doc! {"$merge": {"into": "x", "whenMatched": "twice"}}], 2),
        err("merge unknown not-matched mode", s, &[doc! {"$merge": {"into": "x", "whenNotMatched": "x"}}], 2),
        err("merge mode of a number", s, &[doc! {"$merge": {"into": "x", "whenMatched": 1}}], 51191),
        err("merge let without a pipeline", s, &[doc! {"$merge": {"into": "x", "let": {"a": 1}}}], 51199),
        err("merge unknown field", s, &[doc! {"$merge": {"into": "x", "y": 1}}], 40415),
        ok("documents replace the input", s, &[doc! {"$documents": [{"a": 1}, {"a": 2}]}], &[doc! {"a": 1}, doc! {"a": 2}]),
        ok("documents then stages", s, &[doc! {"$documents": [{"a": 1}, {"a": 2}]}, doc! {"$match": {"a": 2}}], &[doc! {"a": 2}]),
        ok("documents as an expression", s, &[doc! {"$documents": {"$concatArrays": [[{"a": 1}], [{"b": 2}]]}}], &[doc! {"a": 1}, doc! {"b": 2}]),
        ok("documents empty", s, &[doc! {"$documents": []}], &[]),
        ok("documents null", s, &[doc! {"$documents": Bson::Null}], &[]),
        err("documents of numbers", s, &[doc! {"$documents": [1]}], 40228),
        err("documents not first", s, &[a.clone(), doc! {"$documents": []}], 40602),
        err("documents inside facet", s, &[doc! {"$facet": {"f": [{"$documents": []}]}}], 40600),
        err("listLocalSessions not first", s, &[a, doc! {"$listLocalSessions": {}}], 40602),
        err("listLocalSessions of a number", s, &[doc! {"$listLocalSessions": 1}], 31102),
        err("listLocalSessions allUsers and users", s, &[doc! {"$listLocalSessions": {"allUsers": true, "users": []}}], 31113),
        err("listLocalSessions unknown field", s, &[doc! {"$listLocalSessions": {"x": 1}}], 40415),
    ]
}

#[test]
fn output_stages_parse_into_what_the_engine_writes() {
    use query::{Merge, Output, Target, WhenMatched, WhenNotMatched};
    let parse = |stage: Document| Pipeline::parse(&stages(&[stage])).expect("parses");
    let merge = parse(doc! {"$merge": "t"});
    assert_eq!(
        merge.output(),
        Some(&Output::Merge(Box::new(Merge {
            into: Target {
                db: None,
                coll: "t".into()
            },
            on: vec!["_id".into()],
            when_matched: WhenMatched::Merge,
            when_not_matched: WhenNotMatched::Insert,
        })))
    );
    let merge = parse(
        doc! {"$merge": {"into": {"db": "d", "coll": "t"}, "on": ["a", "b"],
        "whenMatched": "fail", "whenNotMatched": "discard"}},
    );
    assert_eq!(
        merge.output(),
        Some(&Output::Merge(Box::new(Merge {
            into: Target {
                db: Some("d".into()),
                coll: "t".into()
            },
            on: vec!["a".into(), "b".into()],
            when_matched: WhenMatched::Fail,
            when_not_matched: WhenNotMatched::Discard,
        })))
    );
    let out = parse(doc! {"$out": {"db": "d", "coll": "t"}});
    assert_eq!(
        out.output(),
        Some(&Output::Out(Target {
            db: Some("d".into()),
            coll: "t".into()
        }))
    );
    assert!(!out.is_collectionless());
    let sessions = parse(doc! {"$listLocalSessions": {"allUsers": true}});
    assert!(sessions.is_collectionless());
    assert_eq!(
        sessions.local_sessions(),
        Some(&query::LocalSessions::AllUsers)
    );
    assert!(parse(doc! {"$documents": []}).is_collectionless());
    assert_eq!(parse(doc! {"$match": {}}).first_stage(), Some("$match"));
}

#[test]
fn pipeline_table() {
    let s = sales();
    let cases: Vec<Case> = [
        match_sort_skip_limit(&s),
        reshaping(&s),
        grouping(&s),
        counting_and_unwinding(&s),
        pipeline_level(&s),
        output_and_source_stages(&s),
    ]
    .into_iter()
    .flatten()
    .collect();
    assert!(cases.len() >= 60, "only {} cases", cases.len());
    let failures: Vec<String> = cases.iter().filter_map(|c| check(c).err()).collect();
    assert!(
        failures.is_empty(),
        "{} of {} cases failed:\n{}",
        failures.len(),
        cases.len(),
        failures.join("\n")
    );
}

#[test]
fn errors_carry_mongodb_messages() {
    let message = |pipeline: &[Document]| run(&sales(), pipeline).expect_err("fails").to_string();
    assert_eq!(
        message(&[doc! {"$foo": 1}]),
        "Unrecognized pipeline stage name: '$foo'"
    );
    assert_eq!(
        message(&[doc! {"$match": {}, "$skip": 1}]),
        "A pipeline stage specification object must contain exactly one field."
    );
    assert_eq!(message(&[doc! {"$limit": 0}]), "the limit must be positive");
    assert_eq!(
        message(&[doc! {"$skip": -1}]),
        "invalid argument to $skip stage: Expected a non-negative number in: $skip: -1"
    );
    assert_eq!(
        message(&[doc! {"$count": "$n"}]),
        "the count field cannot be a $-prefixed path"
    );
    assert!(message(&[doc! {"$lookup": {}}]).contains("$lookup"));
    assert!(
        message(&[doc! {"$project": {"a.$": 1}}])
            .starts_with("Invalid $project :: caused by :: Cannot use positional")
    );
    let replace = message(&[
        doc! {"$match": {"_id": 4}},
        doc! {"$replaceRoot": {"newRoot": "$item"}},
    ]);
    assert_eq!(
        replace,
        "'newRoot' expression  must evaluate to an object, but resulting value was: \"c\". Type of resulting value: 'string'. Input document: {_id: 4, item: \"c\", price: 1.5, qty: 4}"
    );
    let e = run(
        &sales(),
        &[doc! {"$group": {"_id": 0, "x": {"$median": "$a"}}}],
    )
    .expect_err("refused");
    assert_eq!((e.code(), e.code_name()), (238, "NotImplemented"));
}

#[test]
fn a_group_output_over_16_mib_fails_with_10334() {
    let big = "x".repeat(1024 * 1024);
    let input: Vec<Document> = (0..17).map(|_| doc! {"s": big.clone()}).collect();
    let e = run(
        &input,
        &[doc! {"$group": {"_id": Bson::Null, "all": {"$push": "$s"}}}],
    )
    .expect_err("too large");
    assert_eq!((e.code(), e.code_name()), (10334, "BSONObjectTooLarge"));
    // The intermediate document may be large when a later stage shrinks it, as in MongoDB.
    let out = run(
        &input,
        &[
            doc! {"$group": {"_id": Bson::Null, "all": {"$push": "$s"}}},
            doc! {"$project": {"n": {"$size": "$all"}}},
        ],
    )
    .expect("fits");
    assert_eq!(out, vec![doc! {"_id": Bson::Null, "n": 17}]);
}

#[test]
fn leading_match_is_the_first_stage_only() {
    let first =
        Pipeline::parse(&stages(&[doc! {"$match": {"a": 1}}, doc! {"$limit": 1}])).expect("parses");
    let matcher = first.leading_match().expect("leading $match");
    assert!(matcher.matches(&raw(&doc! {"a": 1})));
    let later =
        Pipeline::parse(&stages(&[doc! {"$limit": 1}, doc! {"$match": {"a": 1}}])).expect("parses");
    assert!(later.leading_match().is_none());
}

#[test]
fn limit_stops_pulling_input_and_errors_end_the_stream() {
    let pulled = Cell::new(0);
    let input = (0..1000).map(|i| {
        pulled.set(pulled.get() + 1);
        Ok(raw(&doc! {"i": i}))
    });
    let pipeline = Pipeline::parse(&stages(&[
        doc! {"$match": {"i": {"$gte": 10}}},
        doc! {"$limit": 3},
    ]))
    .expect("parses");
    assert_eq!(pipeline.run(input).expect("runs").len(), 3);
    assert_eq!(pulled.get(), 13, "reads only the documents it needs");
    // An input error fails the run, even behind a blocking stage.
    let failing = vec![
        Ok(raw(&doc! {"i": 1})),
        Err(QueryError::BadValue("disk".into())),
        Ok(raw(&doc! {"i": 2})),
    ];
    let pipeline = Pipeline::parse(&stages(&[doc! {"$sort": {"i": 1}}])).expect("parses");
    assert_eq!(
        pipeline.run(failing.clone().into_iter()),
        Err(QueryError::BadValue("disk".into()))
    );
    let streamed: Vec<_> = Pipeline::parse(&stages(&[]))
        .expect("parses")
        .stream(failing.into_iter())
        .collect();
    assert_eq!(streamed.len(), 2, "the stream ends after its first error");
}

/// A command's `let` variables reach every stage that holds expressions.
#[test]
fn let_variables_reach_every_stage() {
    let vars = query::Variables::from_let(&raw(&doc! {"min": 2, "tag": "t", "factor": 10}))
        .expect("let evaluates");
    let pipeline = [
        doc! {"$match": {"$expr": {"$gte": ["$n", "$$min"]}}},
        doc! {"$addFields": {"label": "$$tag"}},
        doc! {"$project": {"n": 1, "label": 1, "scaled": {"$multiply": ["$n", "$$factor"]}}},
        doc! {"$facet": {"total": [
            {"$group": {"_id": "$$tag", "sum": {"$sum": "$$factor"}}},
        ]}},
    ];
    let compiled = Pipeline::parse_with(&stages(&pipeline), &vars).expect("pipeline parses");
    let input = (1..=3).map(|n| doc! {"_id": n, "n": n});
    let out = compiled
        .run(input.map(|d| Ok(raw(&d))))
        .expect("pipeline runs");
    let got: Vec<Document> = out
        .iter()
        .map(|d| Document::try_from(d.as_ref()).expect("valid"))
        .collect();
    assert_eq!(got, vec![doc! {"total": [{"_id": "t", "sum": 20}]}]);
    let filter = query::Filter::parse_with(&raw(&doc! {"$expr": {"$eq": ["$n", "$$min"]}}), &vars)
        .expect("filter parses");
    assert!(filter.matches(&raw(&doc! {"n": 2})));
    assert!(!filter.matches(&raw(&doc! {"n": 3})));
    // Without the variables, the same pipeline fails on the undefined name.
    let plain = Pipeline::parse(&stages(&pipeline[..1])).expect("parses");
    let error = plain
        .run(std::iter::once(Ok(raw(&doc! {"n": 1}))))
        .expect_err("undefined variable");
    assert_eq!(error.code(), 17276);
}
