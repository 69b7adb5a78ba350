//! Data-driven aggregation expression cases: (document, expression, expected value or error code).

use crate::support::raw;
use bson::{Bson, Document, doc};
use query::Expression;

#[track_caller]
fn eval(doc: Document, expr: Bson) -> Result<Option<Bson>, query::QueryError> {
    let wrapper = doc! {"e": expr};
    let raw_wrapper = raw(&wrapper);
    let value = raw_wrapper.get("e").expect("valid").expect("present");
    Expression::parse(value)?.evaluate(&raw(&doc))
}

#[track_caller]
fn is(doc: Document, expr: Bson, expected: Bson) {
    let got = eval(doc, expr.clone()).unwrap_or_else(|e| panic!("{expr}: {e}"));
    assert_eq!(got, Some(expected), "{expr}");
}

#[track_caller]
fn missing(doc: Document, expr: Bson) {
    assert_eq!(eval(doc, expr.clone()).expect("evaluates"), None, "{expr}");
}

#[track_caller]
fn fails(doc: Document, expr: Bson, code: i32) {
    match eval(doc, expr.clone()) {
        Ok(v) => panic!("{expr} gave {v:?}, expected error {code}"),
        Err(e) => assert_eq!(e.code(), code, "{expr}: {e}"),
    }
}

fn d() -> Document {
    doc! {"a": 5, "b": 2.5, "s": "Hello", "n": Bson::Null, "arr": [1, 2, 3],
    "o": {"x": 1, "y": [{"z": 1}, {"z": 2}, {"w": 3}]}, "l": 3_000_000_000_i64,
    "when": bson::DateTime::from_millis(1_000)}
}

#[test]
fn field_paths_and_variables() {
    is(d(), Bson::String("$a".into()), Bson::Int32(5));
    is(d(), Bson::String("$o.x".into()), Bson::Int32(1));
    // Over arrays a path yields an array of what it reaches (manual, "Field Paths").
    is(
        d(),
        Bson::String("$o.y.z".into()),
        Bson::Array(vec![1.into(), 2.into()]),
    );
    missing(d(), Bson::String("$nope".into()));
    missing(d(), Bson::String("$a.b".into()));
    is(d(), Bson::String("$$ROOT.a".into()), Bson::Int32(5));
    is(
        d(),
        Bson::String("$$CURRENT.s".into()),
        Bson::String("Hello".into()),
    );
    missing(d(), Bson::String("$$REMOVE".into()));
    is(
        d(),
        Bson::String("plain".into()),
        Bson::String("plain".into()),
    );
    is(
        d(),
        Bson::Document(doc! {"$literal": "$a"}),
        Bson::String("$a".into()),
    );
    is(
        d(),
        Bson::Document(doc! {"$let": {"vars": {"x": "$a"}, "in": {"$add": ["$$x", 1]}}}),
        Bson::Int32(6),
    );
    is(
        d(),
        Bson::Document(doc! {"k": "$a", "m": "$nope"}),
        Bson::Document(doc! {"k": 5}),
    );
    is(
        d(),
        Bson::Array(vec!["$a".into(), "$nope".into()]),
        Bson::Array(vec![5.into(), Bson::Null]),
    );
    fails(d(), Bson::String("$$nope".into()), 17276);
    fails(d(), Bson::String("$".into()), 16872);
    fails(d(), Bson::Document(doc! {"$bogus": 1}), 168);
}

#[test]
fn arithmetic_follows_mongodb_type_rules() {
    is(
        d(),
        Bson::Document(doc! {"$add": ["$a", 1]}),
        Bson::Int32(6),
    );
    is(
        d(),
        Bson::Document(doc! {"$add": ["$a", "$b"]}),
        Bson::Double(7.5),
    );
    is(
        d(),
        Bson::Document(doc! {"$add": ["$a", "$l"]}),
        Bson::Int64(3_000_000_005),
    );
    // int + int overflowing int32 widens to long.
    is(
        d(),
        Bson::Document(doc! {"$add": [i32::MAX, 1]}),
        Bson::Int64(2_147_483_648),
    );
    is(d(), Bson::Document(doc! {"$add": ["$a", "$n"]}), Bson::Null);
    is(
        d(),
        Bson::Document(doc! {"$add": ["$a", "$nope"]}),
        Bson::Null,
    );
    is(
        d(),
        Bson::Document(doc! {"$add": ["$when", 500]}),
        Bson::DateTime(bson::DateTime::from_millis(1_500)),
    );
    fails(d(), Bson::Document(doc! {"$add": ["$a", "$s"]}), 14);
    fails(
        d(),
        Bson::Document(doc! {"$add": ["$when", "$when"]}),
        16612,
    );
    is(
        d(),
        Bson::Document(doc! {"$subtract": ["$a", 7]}),
        Bson::Int32(-2),
    );
    is(
        d(),
        Bson::Document(doc! {"$subtract": ["$when", "$when"]}),
        Bson::Int64(0),
    );
    fails(d(), Bson::Document(doc! {"$subtract": ["$a", "$s"]}), 14);
    fails(d(), Bson::Document(doc! {"$subtract": ["$a"]}), 16020);
    is(
        d(),
        Bson::Document(doc! {"$multiply": ["$a", 2, 1.5]}),
        Bson::Double(15.0),
    );
    is(
        d(),
        Bson::Document(doc! {"$multiply": ["$a", 2]}),
        Bson::Int32(10),
    );
    fails(d(), Bson::Document(doc! {"$multiply": ["$s", 2]}), 14);
    // $divide always returns a double.
    is(
        d(),
        Bson::Document(doc! {"$divide": [10, 4]}),
        Bson::Double(2.5),
    );
    is(
        d(),
        Bson::Document(doc! {"$divide": [10, 5]}),
        Bson::Double(2.0),
    );
    fails(d(), Bson::Document(doc! {"$divide": ["$a", 0]}), 2);
    fails(d(), Bson::Document(doc! {"$divide": ["$s", 1]}), 14);
    is(d(), Bson::Document(doc! {"$mod": [7, 3]}), Bson::Int32(1));
    is(d(), Bson::Document(doc! {"$mod": [-7, 3]}), Bson::Int32(-1));
    is(
        d(),
        Bson::Document(doc! {"$mod": [7.5, 2]}),
        Bson::Double(1.5),
    );
    fails(d(), Bson::Document(doc! {"$mod": [7, 0]}), 16610);
    fails(d(), Bson::Document(doc! {"$mod": [7, 0.0]}), 16610);
    fails(d(), Bson::Document(doc! {"$mod": ["$s", 2]}), 16611);
    is(d(), Bson::Document(doc! {"$abs": -3}), Bson::Int32(3));
    is(
        d(),
        Bson::Document(doc! {"$abs": i32::MIN}),
        Bson::Int64(2_147_483_648),
    );
    is(d(), Bson::Document(doc! {"$abs": "$n"}), Bson::Null);
    fails(d(), Bson::Document(doc! {"$abs": "$s"}), 28765);
    is(d(), Bson::Document(doc! {"$ceil": 2.1}), Bson::Double(3.0));
    is(
        d(),
        Bson::Document(doc! {"$floor": -2.1}),
        Bson::Double(-3.0),
    );
    is(d(), Bson::Document(doc! {"$floor": 4}), Bson::Int32(4));
    // $round rounds half to even (manual, "$round").
    is(
        d(),
        Bson::Document(doc! {"$round": [2.5]}),
        Bson::Double(2.0),
    );
    is(
        d(),
        Bson::Document(doc! {"$round": [3.5]}),
        Bson::Double(4.0),
    );
    is(
        d(),
        Bson::Document(doc! {"$round": [-2.5]}),
        Bson::Double(-2.0),
    );
    is(
        d(),
        Bson::Document(doc! {"$round": [1234, -2]}),
        Bson::Int32(1200),
    );
    is(
        d(),
        Bson::Document(doc! {"$trunc": [2.789, 1]}),
        Bson::Double(2.7),
    );
    is(
        d(),
        Bson::Document(doc! {"$trunc": [-2.7]}),
        Bson::Double(-2.0),
    );
}

#[test]
fn comparison_and_logic() {
    is(
        d(),
        Bson::Document(doc! {"$eq": ["$a", 5.0]}),
        Bson::Boolean(true),
    );
    is(
        d(),
        Bson::Document(doc! {"$eq": ["$n", "$nope"]}),
        Bson::Boolean(false),
    );
    is(
        d(),
        Bson::Document(doc! {"$gt": ["$n", "$nope"]}),
        Bson::Boolean(true),
    );
    // Across types the canonical order applies: strings above numbers.
    is(
        d(),
        Bson::Document(doc! {"$gt": ["$s", 1000]}),
        Bson::Boolean(true),
    );
    is(
        d(),
        Bson::Document(doc! {"$lt": ["$a", "$b"]}),
        Bson::Boolean(false),
    );
    is(
        d(),
        Bson::Document(doc! {"$lte": ["$a", 5]}),
        Bson::Boolean(true),
    );
    is(
        d(),
        Bson::Document(doc! {"$ne": ["$a", 5]}),
        Bson::Boolean(false),
    );
    is(
        d(),
        Bson::Document(doc! {"$cmp": ["$a", 7]}),
        Bson::Int32(-1),
    );
    is(
        d(),
        Bson::Document(doc! {"$cmp": ["$s", "Hello"]}),
        Bson::Int32(0),
    );
    fails(d(), Bson::Document(doc! {"$eq": ["$a"]}), 16020);
    is(
        d(),
        Bson::Document(doc! {"$and": [1, "$s", true]}),
        Bson::Boolean(true),
    );
    is(
        d(),
        Bson::Document(doc! {"$and": [1, 0]}),
        Bson::Boolean(false),
    );
    is(d(), Bson::Document(doc! {"$and": []}), Bson::Boolean(true));
    is(
        d(),
        Bson::Document(doc! {"$or": ["$n", "$nope", 0]}),
        Bson::Boolean(false),
    );
    is(
        d(),
        Bson::Document(doc! {"$or": ["$n", []]}),
        Bson::Boolean(true),
    );
    is(
        d(),
        Bson::Document(doc! {"$not": ["$n"]}),
        Bson::Boolean(true),
    );
    is(
        d(),
        Bson::Document(doc! {"$not": [""]}),
        Bson::Boolean(false),
    );
    is(
        d(),
        Bson::Document(doc! {"$cond": [{"$gt": ["$a", 3]}, "big", "small"]}),
        Bson::String("big".into()),
    );
    is(
        d(),
        Bson::Document(doc! {"$cond": {"if": "$n", "then": 1, "else": 2}}),
        Bson::Int32(2),
    );
    fails(
        d(),
        Bson::Document(doc! {"$cond": {"if": true, "then": 1}}),
        17082,
    );
    fails(d(), Bson::Document(doc! {"$cond": [true, 1]}), 16020);
    is(
        d(),
        Bson::Document(doc! {"$ifNull": ["$n", "$nope", "dflt"]}),
        Bson::String("dflt".into()),
    );
    is(
        d(),
        Bson::Document(doc! {"$ifNull": ["$a", "dflt"]}),
        Bson::Int32(5),
    );
    is(
        d(),
        Bson::Document(
            doc! {"$switch": {"branches": [{"case": {"$lt": ["$a", 0]}, "then": "neg"}, {"case": {"$gt": ["$a", 0]}, "then": "pos"}], "default": "zero"}},
        ),
        Bson::String("pos".into()),
    );
    is(
        d(),
        Bson::Document(doc! {"$switch": {"branches": [{"case": false, "then": 1}], "default": 2}}),
        Bson::Int32(2),
    );
    fails(
        d(),
        Bson::Document(doc! {"$switch": {"branches": [{"case": false, "then": 1}]}}),
        40066,
    );
    fails(
        d(),
        Bson::Document(doc! {"$switch": {"branches": []}}),
        40068,
    );
}

#[test]
fn strings() {
    is(
        d(),
        Bson::Document(doc! {"$concat": ["$s", ", ", "world"]}),
        Bson::String("Hello, world".into()),
    );
    is(
        d(),
        Bson::Document(doc! {"$concat": ["$s", "$nope"]}),
        Bson::Null,
    );
    fails(d(), Bson::Document(doc! {"$concat": ["$s", "$a"]}), 16702);
    is(
        d(),
        Bson::Document(doc! {"$substr": ["$s", 1, 3]}),
        Bson::String("ell".into()),
    );
    is(
        d(),
        Bson::Document(doc! {"$substrBytes": ["$s", 2, -1]}),
        Bson::String("llo".into()),
    );
    is(
        d(),
        Bson::Document(doc! {"$substrBytes": ["$s", 10, 2]}),
        Bson::String("".into()),
    );
    fails(
        d(),
        Bson::Document(doc! {"$substrBytes": ["é", 1, 1]}),
        28656,
    );
    fails(
        d(),
        Bson::Document(doc! {"$substrBytes": ["é", 0, 1]}),
        28657,
    );
    is(
        d(),
        Bson::Document(doc! {"$toLower": "$s"}),
        Bson::String("hello".into()),
    );
    is(
        d(),
        Bson::Document(doc! {"$toUpper": "$s"}),
        Bson::String("HELLO".into()),
    );
    is(
        d(),
        Bson::Document(doc! {"$toUpper": "$n"}),
        Bson::String("".into()),
    );
    is(
        d(),
        Bson::Document(doc! {"$toLower": 12}),
        Bson::String("12".into()),
    );
    is(
        d(),
        Bson::Document(doc! {"$strLenBytes": "héllo"}),
        Bson::Int32(6),
    );
    is(
        d(),
        Bson::Document(doc! {"$strLenCP": "héllo"}),
        Bson::Int32(5),
    );
    fails(d(), Bson::Document(doc! {"$strLenBytes": "$a"}), 34473);
    is(
        d(),
        Bson::Document(doc! {"$split": ["a,b,,c", ","]}),
        Bson::Array(vec!["a".into(), "b".into(), "".into(), "c".into()]),
    );
    fails(d(), Bson::Document(doc! {"$split": ["a", ""]}), 40087);
    fails(d(), Bson::Document(doc! {"$split": [1, ","]}), 16994);
    is(
        d(),
        Bson::Document(doc! {"$trim": {"input": "  hi \n"}}),
        Bson::String("hi".into()),
    );
    is(
        d(),
        Bson::Document(doc! {"$ltrim": {"input": "xxhixx", "chars": "x"}}),
        Bson::String("hixx".into()),
    );
    is(
        d(),
        Bson::Document(doc! {"$rtrim": {"input": "xxhixx", "chars": "x"}}),
        Bson::String("xxhi".into()),
    );
    fails(d(), Bson::Document(doc! {"$trim": {"input": 5}}), 50699);
}

#[test]
fn arrays_and_types() {
    is(d(), Bson::Document(doc! {"$size": "$arr"}), Bson::Int32(3));
    fails(d(), Bson::Document(doc! {"$size": "$a"}), 17124);
    fails(d(), Bson::Document(doc! {"$size": "$nope"}), 17124);
    is(
        d(),
        Bson::Document(doc! {"$arrayElemAt": ["$arr", 0]}),
        Bson::Int32(1),
    );
    is(
        d(),
        Bson::Document(doc! {"$arrayElemAt": ["$arr", -1]}),
        Bson::Int32(3),
    );
    missing(d(), Bson::Document(doc! {"$arrayElemAt": ["$arr", 5]}));
    fails(d(), Bson::Document(doc! {"$arrayElemAt": ["$s", 0]}), 28689);
    fails(
        d(),
        Bson::Document(doc! {"$arrayElemAt": ["$arr", 0.5]}),
        28691,
    );
    is(
        d(),
        Bson::Document(doc! {"$in": [2, "$arr"]}),
        Bson::Boolean(true),
    );
    is(
        d(),
        Bson::Document(doc! {"$in": [2.0, "$arr"]}),
        Bson::Boolean(true),
    );
    is(
        d(),
        Bson::Document(doc! {"$in": [9, "$arr"]}),
        Bson::Boolean(false),
    );
    fails(d(), Bson::Document(doc! {"$in": [9, "$a"]}), 40081);
    is(
        d(),
        Bson::Document(doc! {"$isArray": ["$arr"]}),
        Bson::Boolean(true),
    );
    is(
        d(),
        Bson::Document(doc! {"$isArray": ["$a"]}),
        Bson::Boolean(false),
    );
    is(
        d(),
        Bson::Document(doc! {"$filter": {"input": "$arr", "as": "x", "cond": {"$gt": ["$$x", 1]}}}),
        Bson::Array(vec![2.into(), 3.into()]),
    );
    is(
        d(),
        Bson::Document(
            doc! {"$filter": {"input": "$arr", "cond": {"$gt": ["$$this", 1]}, "limit": 1}},
        ),
        Bson::Array(vec![2.into()]),
    );
    is(
        d(),
        Bson::Document(doc! {"$filter": {"input": "$nope", "cond": true}}),
        Bson::Null,
    );
    fails(
        d(),
        Bson::Document(doc! {"$filter": {"input": "$a", "cond": true}}),
        28651,
    );
    is(
        d(),
        Bson::Document(
            doc! {"$map": {"input": "$arr", "as": "x", "in": {"$multiply": ["$$x", 10]}}},
        ),
        Bson::Array(vec![10.into(), 20.into(), 30.into()]),
    );
    fails(
        d(),
        Bson::Document(doc! {"$map": {"input": "$s", "in": 1}}),
        16883,
    );
    is(
        d(),
        Bson::Document(doc! {"$slice": ["$arr", 2]}),
        Bson::Array(vec![1.into(), 2.into()]),
    );
    is(
        d(),
        Bson::Document(doc! {"$slice": ["$arr", -1]}),
        Bson::Array(vec![3.into()]),
    );
    is(
        d(),
        Bson::Document(doc! {"$slice": ["$arr", 1, 5]}),
        Bson::Array(vec![2.into(), 3.into()]),
    );
    is(
        d(),
        Bson::Document(doc! {"$slice": ["$arr", -2, 1]}),
        Bson::Array(vec![2.into()]),
    );
    fails(d(), Bson::Document(doc! {"$slice": ["$s", 1]}), 28724);
    is(
        d(),
        Bson::Document(doc! {"$slice": ["$arr", i64::MIN]}),
        Bson::Array(vec![1.into(), 2.into(), 3.into()]),
    );
    is(
        d(),
        Bson::Document(doc! {"$concatArrays": ["$arr", [4]]}),
        Bson::Array(vec![1.into(), 2.into(), 3.into(), 4.into()]),
    );
    is(
        d(),
        Bson::Document(doc! {"$type": "$a"}),
        Bson::String("int".into()),
    );
    is(
        d(),
        Bson::Document(doc! {"$type": "$nope"}),
        Bson::String("missing".into()),
    );
    is(
        d(),
        Bson::Document(doc! {"$type": "$l"}),
        Bson::String("long".into()),
    );
    is(
        d(),
        Bson::Document(doc! {"$toString": "$a"}),
        Bson::String("5".into()),
    );
    is(
        d(),
        Bson::Document(doc! {"$toString": 2.0}),
        Bson::String("2".into()),
    );
    is(d(), Bson::Document(doc! {"$toInt": "42"}), Bson::Int32(42));
    is(d(), Bson::Document(doc! {"$toInt": 2.9}), Bson::Int32(2));
    is(d(), Bson::Document(doc! {"$toInt": "$n"}), Bson::Null);
    fails(d(), Bson::Document(doc! {"$toInt": "x"}), 241);
    fails(d(), Bson::Document(doc! {"$toInt": "$l"}), 241);
    is(d(), Bson::Document(doc! {"$toLong": "$a"}), Bson::Int64(5));
    is(
        d(),
        Bson::Document(doc! {"$toDouble": "2.5"}),
        Bson::Double(2.5),
    );
    is(
        d(),
        Bson::Document(doc! {"$toDouble": true}),
        Bson::Double(1.0),
    );
    fails(d(), Bson::Document(doc! {"$toDouble": [[1]]}), 241);
    is(d(), Bson::Document(doc! {"$max": "$arr"}), Bson::Int32(3));
    is(
        d(),
        Bson::Document(doc! {"$min": [4, "$n", 2]}),
        Bson::Int32(2),
    );
    is(d(), Bson::Document(doc! {"$sum": "$arr"}), Bson::Int32(6));
    is(
        d(),
        Bson::Document(doc! {"$avg": "$arr"}),
        Bson::Double(2.0),
    );
}

/// A document whose names need `$getField`/`$setField`: dots and a leading `$`.
fn odd() -> Document {
    doc! {"_id": 0, "a.b": "dotted", "$x": 10, "plain": {"$in": 1, "k": 2}, "n": Bson::Null,
    "num": 7}
}

#[test]
fn get_field_reads_names_literally() {
    is(
        odd(),
        Bson::Document(doc! {"$getField": "a.b"}),
        Bson::String("dotted".into()),
    );
    is(
        odd(),
        Bson::Document(doc! {"$getField": {"$literal": "$x"}}),
        Bson::Int32(10),
    );
    is(
        odd(),
        Bson::Document(doc! {"$getField": {"field": {"$literal": "$in"}, "input": "$plain"}}),
        Bson::Int32(1),
    );
    is(
        odd(),
        Bson::Document(doc! {"$getField": {"field": "k", "input": {"k": "$num"}}}),
        Bson::Int32(7),
    );
    // An absent field, a missing input and a non-document input are missing; null is null.
    missing(odd(), Bson::Document(doc! {"$getField": "nope"}));
    missing(
        odd(),
        Bson::Document(doc! {"$getField": {"field": "k", "input": "$nope"}}),
    );
    missing(
        odd(),
        Bson::Document(doc! {"$getField": {"field": "k", "input": "$num"}}),
    );
    is(
        odd(),
        Bson::Document(doc! {"$getField": {"field": "k", "input": "$n"}}),
        Bson::Null,
    );
    // `field` must be a constant string (MongoDB 7.0).
    fails(odd(), Bson::Document(doc! {"$getField": "$x"}), 5_654_600);
    fails(
        odd(),
        Bson::Document(doc! {"$getField": "$$ROOT"}),
        5_654_600,
    );
    fails(
        odd(),
        Bson::Document(doc! {"$getField": {"$concat": ["a", "b"]}}),
        5_654_601,
    );
    fails(odd(), Bson::Document(doc! {"$getField": 5}), 5_654_602);
    fails(
        odd(),
        Bson::Document(doc! {"$getField": {"field": {"$literal": 5}, "input": {}}}),
        5_654_602,
    );
    fails(
        odd(),
        Bson::Document(doc! {"$getField": {"k": 1}}),
        3_041_701,
    );
    fails(
        odd(),
        Bson::Document(doc! {"$getField": {"input": {}}}),
        3_041_702,
    );
    fails(
        odd(),
        Bson::Document(doc! {"$getField": {"field": "s"}}),
        3_041_703,
    );
}

#[test]
fn set_field_and_unset_field_write_names_literally() {
    // A new name is appended; an existing one keeps its place.
    is(
        odd(),
        Bson::Document(
            doc! {"$setField": {"field": {"$literal": "$a"}, "value": 1, "input": "$$ROOT"}},
        ),
        Bson::Document(doc! {"_id": 0, "a.b": "dotted", "$x": 10,
        "plain": {"$in": 1, "k": 2}, "n": Bson::Null, "num": 7, "$a": 1}),
    );
    is(
        odd(),
        Bson::Document(doc! {"$setField": {"field": "a.b", "value": "$num", "input": "$$ROOT"}}),
        Bson::Document(doc! {"_id": 0, "a.b": 7, "$x": 10,
        "plain": {"$in": 1, "k": 2}, "n": Bson::Null, "num": 7}),
    );
    is(
        odd(),
        Bson::Document(doc! {"$setField": {"field": "c.d", "value": [1], "input": {}}}),
        Bson::Document(doc! {"c.d": [1]}),
    );
    // A missing value ($$REMOVE, an absent path) removes the field.
    is(
        odd(),
        Bson::Document(
            doc! {"$setField": {"field": {"$literal": "$in"}, "value": "$$REMOVE", "input": "$plain"}},
        ),
        Bson::Document(doc! {"k": 2}),
    );
    is(
        odd(),
        Bson::Document(doc! {"$setField": {"field": "k", "value": "$nope", "input": "$plain"}}),
        Bson::Document(doc! {"$in": 1}),
    );
    is(
        odd(),
        Bson::Document(doc! {"$unsetField": {"field": {"$literal": "$x"}, "input": "$$ROOT"}}),
        Bson::Document(doc! {"_id": 0, "a.b": "dotted",
        "plain": {"$in": 1, "k": 2}, "n": Bson::Null, "num": 7}),
    );
    is(
        odd(),
        Bson::Document(doc! {"$unsetField": {"field": "absent", "input": {"q": 1}}}),
        Bson::Document(doc! {"q": 1}),
    );
    // Null or missing input gives null; any other non-document fails at run time.
    is(
        odd(),
        Bson::Document(doc! {"$setField": {"field": "k", "value": 1, "input": "$n"}}),
        Bson::Null,
    );
    is(
        odd(),
        Bson::Document(doc! {"$unsetField": {"field": "k", "input": "$nope"}}),
        Bson::Null,
    );
    fails(
        odd(),
        Bson::Document(doc! {"$setField": {"field": "k", "value": 1, "input": "$num"}}),
        4_161_105,
    );
    // Parse errors, in MongoDB's order and with its codes.
    fails(odd(), Bson::Document(doc! {"$setField": 1}), 4_161_100);
    fails(odd(), Bson::Document(doc! {"$unsetField": [1]}), 4_161_100);
    fails(
        odd(),
        Bson::Document(doc! {"$setField": {"field": "k", "value": 1, "input": {}, "x": 1}}),
        4_161_101,
    );
    fails(
        odd(),
        Bson::Document(doc! {"$unsetField": {"field": "k", "value": 1, "input": {}}}),
        4_161_101,
    );
    fails(
        odd(),
        Bson::Document(doc! {"$setField": {"value": 1, "input": {}}}),
        4_161_102,
    );
    fails(
        odd(),
        Bson::Document(doc! {"$setField": {"field": "k", "input": {}}}),
        4_161_103,
    );
    fails(
        odd(),
        Bson::Document(doc! {"$setField": {"field": "k", "value": 1}}),
        4_161_109,
    );
    fails(
        odd(),
        Bson::Document(doc! {"$unsetField": {"field": "k"}}),
        4_161_109,
    );
    fails(
        odd(),
        Bson::Document(doc! {"$setField": {"field": {"a": 1}, "value": 1, "input": {}}}),
        4_161_106,
    );
    fails(
        odd(),
        Bson::Document(doc! {"$setField": {"field": true, "value": 1, "input": {}}}),
        4_161_107,
    );
    fails(
        odd(),
        Bson::Document(doc! {"$setField": {"field": "$a", "value": 1, "input": {}}}),
        4_161_108,
    );
    fails(
        odd(),
        Bson::Document(doc! {"$unsetField": {"field": "$$x", "input": {}}}),
        4_161_108,
    );
}

#[track_caller]
fn eval_with(vars: &query::Variables, doc: Document, expr: Bson) -> Option<Bson> {
    let wrapper = doc! {"e": expr.clone()};
    let raw_wrapper = raw(&wrapper);
    let value = raw_wrapper.get("e").expect("valid").expect("present");
    Expression::parse_with(value, vars)
        .and_then(|e| e.evaluate(&raw(&doc)))
        .unwrap_or_else(|e| panic!("{expr}: {e}"))
}

#[track_caller]
fn let_fails(spec: Document, code: i32) {
    match query::Variables::from_let(&raw(&spec)) {
        Ok(_) => panic!("let {spec} accepted, expected {code}"),
        Err(e) => assert_eq!(e.code(), code, "let {spec}: {e}"),
    }
}

#[test]
fn command_variables_are_constants_bound_at_parse_time() {
    let now = bson::DateTime::from_millis(1_700_000_000_000);
    let spec = doc! {"id": {"$add": [1, 1]}, "twice": {"$multiply": ["$$id", 2]},
    "o": {"k": [1, 2]}, "gone": "$$REMOVE", "when": "$$NOW"};
    let vars = query::Variables::from_let_at(&raw(&spec), now).expect("let evaluates");
    assert_eq!(
        eval_with(&vars, d(), Bson::String("$$id".into())),
        Some(Bson::Int32(2))
    );
    // A later value reads an earlier one; paths reach into values.
    assert_eq!(
        eval_with(&vars, d(), Bson::String("$$twice".into())),
        Some(Bson::Int32(4))
    );
    assert_eq!(
        eval_with(&vars, d(), Bson::String("$$o.k".into())),
        Some(Bson::Array(vec![1.into(), 2.into()]))
    );
    assert_eq!(eval_with(&vars, d(), Bson::String("$$gone".into())), None);
    assert_eq!(
        eval_with(&vars, d(), Bson::String("$$when".into())),
        Some(Bson::DateTime(now))
    );
    assert_eq!(
        eval_with(&vars, d(), Bson::String("$$NOW".into())),
        Some(Bson::DateTime(now))
    );
    // An expression's own binding shadows the command's.
    assert_eq!(
        eval_with(
            &vars,
            d(),
            Bson::Document(doc! {"$let": {"vars": {"id": "$a"}, "in": "$$id"}})
        ),
        Some(Bson::Int32(5))
    );
    assert_eq!(
        eval_with(
            &vars,
            d(),
            Bson::Document(doc! {"$map": {"input": "$arr", "as": "id", "in": "$$id"}})
        ),
        Some(Bson::Array(vec![1.into(), 2.into(), 3.into()]))
    );
    // Without the variables the name is undefined.
    fails(d(), Bson::String("$$id".into()), 17276);
    fails(d(), Bson::String("$$CLUSTER_TIME".into()), 51144);
    // Names: MongoDB's user-variable rules; system variables cannot be set.
    let_fails(doc! {"Id": 1}, 9);
    let_fails(doc! {"_x": 1}, 9);
    let_fails(doc! {"a-b": 1}, 9);
    let_fails(doc! {"": 1}, 9);
    let_fails(doc! {"NOW": 1}, 4_738_901);
    // Values cannot read a document.
    let_fails(doc! {"x": "$a"}, 4_890_500);
    let_fails(doc! {"x": {"$add": ["$$ROOT.a", 1]}}, 4_890_500);
    let_fails(doc! {"x": "$$undefinedName"}, 17276);
    let vars = query::Variables::from_let(&raw(&doc! {"é_1": 3, "aB9": 4})).expect("valid names");
    assert_eq!(
        eval_with(&vars, d(), Bson::String("$$é_1".into())),
        Some(Bson::Int32(3))
    );
}

#[test]
fn rand_is_a_double_in_the_unit_interval() {
    let mut seen = std::collections::HashSet::new();
    for spec in [doc! {"$rand": {}}, doc! {"$rand": []}] {
        for _ in 0..50 {
            match eval(d(), Bson::Document(spec.clone())) {
                Ok(Some(Bson::Double(v))) => {
                    assert!((0.0..1.0).contains(&v), "{v}");
                    seen.insert(v.to_bits());
                }
                other => panic!("$rand gave {other:?}"),
            }
        }
    }
    assert!(seen.len() > 90, "values repeat: {} distinct", seen.len());
    fails(d(), Bson::Document(doc! {"$rand": [1]}), 3_040_501);
    fails(d(), Bson::Document(doc! {"$rand": {"a": 1}}), 3_040_501);
    fails(d(), Bson::Document(doc! {"$rand": 0}), 10065);
}
