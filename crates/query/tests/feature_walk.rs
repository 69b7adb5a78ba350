//! Regression (issue 23, item 4 and "hunt for the kind"): every query operator,
//! expression operator, accumulator and stage MongoDB 7.0 documents is either
//! implemented (it parses, or is refused for its arguments) or refused with
//! MongoDB's own "not here" answer: 238 NotImplemented naming it, 27 IndexNotFound
//! (`$text` without a text index), 291 NoQueryExecutionPlans (`$near` without a
//! geospatial index), or BadValue for `$where` (no JavaScript, as where mongod
//! disallows it). Never a generic "unknown operator" / "unrecognized expression" /
//! "unknown group operator" / "Unrecognized pipeline stage name". `$text` answered
//! 2 "unknown top level operator" before this test.
//!
//! The tables are the manual's lists ("Query and Projection Operators",
//! "Aggregation Pipeline Operators", "Aggregation Stages", MongoDB 7.0); window-only
//! operators are left out, as mongod itself answers 168 for them outside
//! `$setWindowFields`, which is refused as a whole.

use crate::support::raw;
use bson::{Bson, Document, RawArrayBuf, RawBsonRef, doc};
use query::{Expression, Filter, Pipeline, QueryError};

/// Field-level query operators with an argument of the right shape.
fn field_operators() -> Vec<(&'static str, Bson)> {
    let point = || Bson::Document(doc! {"type": "Point", "coordinates": [0, 0]});
    vec![
        ("$eq", 1.into()),
        ("$gt", 1.into()),
        ("$gte", 1.into()),
        ("$in", Bson::Array(vec![1.into()])),
        ("$lt", 1.into()),
        ("$lte", 1.into()),
        ("$ne", 1.into()),
        ("$nin", Bson::Array(vec![1.into()])),
        ("$not", Bson::Document(doc! {"$gt": 1})),
        ("$exists", true.into()),
        ("$type", "int".into()),
        ("$mod", Bson::Array(vec![2.into(), 0.into()])),
        ("$regex", "^a".into()),
        ("$all", Bson::Array(vec![1.into()])),
        ("$elemMatch", Bson::Document(doc! {"$gt": 1})),
        ("$size", 1.into()),
        ("$bitsAllClear", 1.into()),
        ("$bitsAllSet", 1.into()),
        ("$bitsAnyClear", 1.into()),
        ("$bitsAnySet", 1.into()),
        ("$comment", "x".into()),
        (
            "$geoIntersects",
            Bson::Document(doc! {"$geometry": point()}),
        ),
        (
            "$geoWithin",
            Bson::Document(doc! {"$centerSphere": [[0, 0], 1]}),
        ),
        ("$near", point()),
        ("$nearSphere", point()),
    ]
}

/// Top-level query operators with an argument of the right shape.
fn top_operators() -> Vec<(&'static str, Bson)> {
    vec![
        ("$and", Bson::Array(vec![Bson::Document(doc! {"a": 1})])),
        ("$or", Bson::Array(vec![Bson::Document(doc! {"a": 1})])),
        ("$nor", Bson::Array(vec![Bson::Document(doc! {"a": 1})])),
        ("$expr", Bson::Document(doc! {"$eq": ["$a", 1]})),
        ("$jsonSchema", Bson::Document(doc! {"required": ["a"]})),
        ("$text", Bson::Document(doc! {"$search": "coffee"})),
        ("$where", "this.a == 1".into()),
        ("$comment", "x".into()),
        ("$sampleRate", 0.5.into()),
    ]
}

/// Expression operators (usable outside `$setWindowFields`).
const EXPRESSIONS: &[&str] = &[
    "$abs",
    "$accumulator",
    "$acos",
    "$acosh",
    "$add",
    "$allElementsTrue",
    "$and",
    "$anyElementTrue",
    "$arrayElemAt",
    "$arrayToObject",
    "$asin",
    "$asinh",
    "$atan",
    "$atan2",
    "$atanh",
    "$avg",
    "$binarySize",
    "$bitAnd",
    "$bitNot",
    "$bitOr",
    "$bitXor",
    "$bsonSize",
    "$ceil",
    "$cmp",
    "$concat",
    "$concatArrays",
    "$cond",
    "$convert",
    "$cos",
    "$cosh",
    "$dateAdd",
    "$dateDiff",
    "$dateFromParts",
    "$dateFromString",
    "$dateSubtract",
    "$dateToParts",
    "$dateToString",
    "$dateTrunc",
    "$dayOfMonth",
    "$dayOfWeek",
    "$dayOfYear",
    "$degreesToRadians",
    "$divide",
    "$eq",
    "$exp",
    "$filter",
    "$first",
    "$firstN",
    "$floor",
    "$function",
    "$getField",
    "$gt",
    "$gte",
    "$hour",
    "$ifNull",
    "$in",
    "$indexOfArray",
    "$indexOfBytes",
    "$indexOfCP",
    "$isArray",
    "$isNumber",
    "$isoDayOfWeek",
    "$isoWeek",
    "$isoWeekYear",
    "$last",
    "$lastN",
    "$let",
    "$literal",
    "$ln",
    "$log",
    "$log10",
    "$lt",
    "$lte",
    "$ltrim",
    "$map",
    "$max",
    "$maxN",
    "$median",
    "$mergeObjects",
    "$meta",
    "$millisecond",
    "$min",
    "$minN",
    "$minute",
    "$mod",
    "$month",
    "$multiply",
    "$ne",
    "$not",
    "$objectToArray",
    "$or",
    "$percentile",
    "$pow",
    "$radiansToDegrees",
    "$rand",
    "$range",
    "$reduce",
    "$regexFind",
    "$regexFindAll",
    "$regexMatch",
    "$replaceAll",
    "$replaceOne",
    "$reverseArray",
    "$round",
    "$rtrim",
    "$sampleRate",
    "$second",
    "$setDifference",
    "$setEquals",
    "$setField",
    "$setIntersection",
    "$setIsSubset",
    "$setUnion",
    "$sin",
    "$sinh",
    "$size",
    "$slice",
    "$sortArray",
    "$split",
    "$sqrt",
    "$stdDevPop",
    "$stdDevSamp",
    "$strcasecmp",
    "$strLenBytes",
    "$strLenCP",
    "$substr",
    "$substrBytes",
    "$substrCP",
    "$subtract",
    "$sum",
    "$switch",
    "$tan",
    "$tanh",
    "$toBool",
    "$toDate",
    "$toDecimal",
    "$toDouble",
    "$toHashedIndexKey",
    "$toInt",
    "$toLong",
    "$toLower",
    "$toObjectId",
    "$toString",
    "$toUpper",
    "$trim",
    "$trunc",
    "$tsIncrement",
    "$tsSecond",
    "$type",
    "$unsetField",
    "$week",
    "$year",
    "$zip",
];

/// `$group` accumulators.
const ACCUMULATORS: &[&str] = &[
    "$accumulator",
    "$addToSet",
    "$avg",
    "$bottom",
    "$bottomN",
    "$count",
    "$first",
    "$firstN",
    "$last",
    "$lastN",
    "$max",
    "$maxN",
    "$median",
    "$mergeObjects",
    "$min",
    "$minN",
    "$percentile",
    "$push",
    "$stdDevPop",
    "$stdDevSamp",
    "$sum",
    "$top",
    "$topN",
];

/// Aggregation stages.
const STAGES: &[&str] = &[
    "$addFields",
    "$bucket",
    "$bucketAuto",
    "$changeStream",
    "$changeStreamSplitLargeEvent",
    "$collStats",
    "$count",
    "$currentOp",
    "$densify",
    "$documents",
    "$facet",
    "$fill",
    "$geoNear",
    "$graphLookup",
    "$group",
    "$indexStats",
    "$limit",
    "$listLocalSessions",
    "$listSampledQueries",
    "$listSearchIndexes",
    "$listSessions",
    "$lookup",
    "$match",
    "$merge",
    "$out",
    "$planCacheStats",
    "$project",
    "$redact",
    "$replaceRoot",
    "$replaceWith",
    "$sample",
    "$search",
    "$searchMeta",
    "$set",
    "$setWindowFields",
    "$shardedDataDistribution",
    "$skip",
    "$sort",
    "$sortByCount",
    "$unionWith",
    "$unset",
    "$unwind",
    "$vectorSearch",
];

/// Whether an error is a generic "I do not know this name" answer.
fn is_unknown_name(e: &QueryError) -> bool {
    let text = e.to_string();
    matches!(e.code(), 168 | 15952 | 40324)
        || text.contains("unknown operator")
        || text.contains("unknown top level operator")
}

/// The answers a missing feature may give: 238 naming it, or mongod's own.
fn refused_as_mongod_does(name: &str, e: &QueryError) -> bool {
    match e.code() {
        238 => e.to_string().contains(name),
        27 => name == "$text",
        291 => name == "$near" || name == "$nearSphere",
        2 => name == "$where" && e.to_string().contains("$where"),
        _ => !is_unknown_name(e),
    }
}

/// Records `name` in `bad` when `result` refuses it as an unknown name.
fn note<T>(bad: &mut Vec<String>, name: &str, result: Result<T, QueryError>) {
    if let Err(e) = result
        && !refused_as_mongod_does(name, &e)
    {
        bad.push(format!("{name}: {} {e}", e.code()));
    }
}

#[test]
fn every_query_operator_is_implemented_or_refused_as_mongod_refuses_it() {
    let mut bad = Vec::new();
    let mut check = |name: &str, filter: Document| {
        note(&mut bad, name, Filter::parse(&raw(&filter)));
    };
    for (name, arg) in field_operators() {
        let mut inner = Document::new();
        inner.insert(name, arg);
        check(name, doc! {"a": inner});
    }
    for (name, arg) in top_operators() {
        let mut filter = Document::new();
        filter.insert(name, arg);
        check(name, filter);
    }
    assert!(bad.is_empty(), "{bad:#?}");
    let text = Filter::parse(&raw(&doc! {"$text": {"$search": "x"}})).expect_err("no index");
    assert_eq!((text.code(), text.code_name()), (27, "IndexNotFound"));
    assert_eq!(text.to_string(), "text index required for $text query");
    let near = Filter::parse(&raw(&doc! {"a": {"$near": [0, 0]}})).expect_err("no index");
    assert_eq!(
        (near.code(), near.code_name()),
        (291, "NoQueryExecutionPlans")
    );
}

#[test]
fn every_expression_operator_is_implemented_or_refused_with_238() {
    let mut bad = Vec::new();
    for &name in EXPRESSIONS {
        // Each shape in turn; the operator is known if any parses or none is
        // refused as an unknown name.
        let shapes = [
            Bson::Array(vec![1.into(), 2.into()]),
            Bson::Document(doc! {}),
            "$a".into(),
        ];
        for arg in shapes {
            let mut spec = Document::new();
            spec.insert(name, arg);
            let spec = raw(&spec);
            note(
                &mut bad,
                name,
                Expression::parse(RawBsonRef::Document(&spec)),
            );
        }
    }
    assert!(bad.is_empty(), "{bad:#?}");
}

fn pipeline(stages: &[Document]) -> Result<Pipeline, QueryError> {
    let mut array = RawArrayBuf::new();
    for stage in stages {
        array.push(raw(stage));
    }
    Pipeline::parse(&array)
}

#[test]
fn every_accumulator_is_implemented_or_refused_with_238() {
    let mut bad = Vec::new();
    for &name in ACCUMULATORS {
        for arg in [Bson::from("$a"), Bson::Document(doc! {})] {
            let mut accumulator = Document::new();
            accumulator.insert(name, arg);
            note(
                &mut bad,
                name,
                pipeline(&[doc! {"$group": {"_id": null, "x": accumulator}}]),
            );
        }
    }
    assert!(bad.is_empty(), "{bad:#?}");
}

#[test]
fn every_stage_is_implemented_or_refused_with_238() {
    let mut bad = Vec::new();
    for &name in STAGES {
        let mut stage = Document::new();
        stage.insert(name, Document::new());
        note(&mut bad, name, pipeline(&[stage]));
    }
    assert!(bad.is_empty(), "{bad:#?}");
}
