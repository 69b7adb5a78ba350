//! Data-driven filter cases: (documents, filter, expected ids), one line each.
//!
//! Where MongoDB's behaviour is surprising the case says so, citing the page
//! of the MongoDB manual it follows.

use crate::support::{check, match_error, refused};
use bson::spec::BinarySubtype;
use bson::{Binary, Bson, Document, doc};

pub fn re(pattern: &str, options: &str) -> Bson {
    Bson::RegularExpression(bson::Regex {
        pattern: pattern.try_into().expect("cstr"),
        options: options.try_into().expect("cstr"),
    })
}

fn bin(bytes: &[u8]) -> Bson {
    Bson::Binary(Binary {
        subtype: BinarySubtype::Generic,
        bytes: bytes.to_vec(),
    })
}

fn shapes() -> Vec<Document> {
    vec![
        doc! {"_id": 1, "a": 1},
        doc! {"_id": 2, "a": Bson::Null},
        doc! {"_id": 3},
        doc! {"_id": 4, "a": [1, 2]},
        doc! {"_id": 5, "a": []},
        doc! {"_id": 6, "a": [Bson::Null]},
        doc! {"_id": 7, "a": "x"},
        doc! {"_id": 8, "a": {"b": 1}},
        doc! {"_id": 9, "a": [{"b": 1}, {"b": 2}]},
        doc! {"_id": 10, "a": [{"b": 1}, {"c": 2}]},
        doc! {"_id": 11, "a": 2.5},
        doc! {"_id": 12, "a": [[1, 2], 3]},
        doc! {"_id": 13, "a": Bson::Undefined},
        doc! {"_id": 14, "a": {"b": Bson::Null}},
        doc! {"_id": 15, "a": [1, "x"]},
    ]
}

#[test]
fn equality_and_arrays() {
    let d = shapes();
    check(
        &d,
        doc! {},
        &[1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15],
    );
    // An equality matches a scalar, or any element of an array at the path.
    check(&d, doc! {"a": 1}, &[1, 4, 15]);
    check(&d, doc! {"a": {"$eq": 1}}, &[1, 4, 15]);
    check(&d, doc! {"a": 1.0}, &[1, 4, 15]);
    check(&d, doc! {"a": 1_i64}, &[1, 4, 15]);
    check(&d, doc! {"a": 3}, &[12]);
    check(&d, doc! {"a": "x"}, &[7, 15]);
    // An array value matches the whole array, or an element that is that array
    // (manual: "Query an Array" - match an array).
    check(&d, doc! {"a": [1, 2]}, &[4, 12]);
    check(&d, doc! {"a": {"$eq": [1, 2]}}, &[4, 12]);
    check(&d, doc! {"a": [2, 1]}, &[]);
    check(&d, doc! {"a": []}, &[5]);
    // Embedded documents compare whole, field order included.
    check(&d, doc! {"a": {"b": 1}}, &[8, 9, 10]);
    check(&d, doc! {"a": {"b": Bson::Null}}, &[14]);
    check(&d, doc! {"a": {"c": 2}}, &[10]);
    check(
        &d,
        doc! {"a": {"$ne": 1}},
        &[2, 3, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14],
    );
    check(
        &d,
        doc! {"a": {"$ne": [1, 2]}},
        &[1, 2, 3, 5, 6, 7, 8, 9, 10, 11, 13, 14, 15],
    );
    check(
        &d,
        doc! {"a": {"$ne": "x"}},
        &[1, 2, 3, 4, 5, 6, 8, 9, 10, 11, 12, 13, 14],
    );
    check(&d, doc! {"a": 2}, &[4]);
    check(&d, doc! {"a": 2.5}, &[11]);
    check(&d, doc! {"a": true}, &[]);
    check(
        &d,
        doc! {"b": Bson::Null},
        &[1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15],
    );
}

#[test]
fn null_and_missing() {
    let d = shapes();
    // Manual, "Query for Null or Missing Fields": {a: null} matches null and
    // missing. Undefined matches too (MongoDB before 8.0; 8.0 dropped it).
    check(&d, doc! {"a": Bson::Null}, &[2, 3, 6, 13]);
    check(&d, doc! {"a": {"$eq": Bson::Null}}, &[2, 3, 6, 13]);
    check(
        &d,
        doc! {"a": {"$ne": Bson::Null}},
        &[1, 4, 5, 7, 8, 9, 10, 11, 12, 14, 15],
    );
    check(&d, doc! {"a": {"$in": [Bson::Null]}}, &[2, 3, 6, 13]);
    check(
        &d,
        doc! {"a": {"$nin": [Bson::Null]}},
        &[1, 4, 5, 7, 8, 9, 10, 11, 12, 14, 15],
    );
    // $gte/$lte null are equality with null; $gt/$lt null match nothing.
    check(&d, doc! {"a": {"$gte": Bson::Null}}, &[2, 3, 6, 13]);
    check(&d, doc! {"a": {"$lte": Bson::Null}}, &[2, 3, 6, 13]);
    check(&d, doc! {"a": {"$gt": Bson::Null}}, &[]);
    check(&d, doc! {"a": {"$lt": Bson::Null}}, &[]);
    check(
        &d,
        doc! {"a": {"$exists": true}},
        &[1, 2, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15],
    );
    check(&d, doc! {"a": {"$exists": false}}, &[3]);
    check(
        &d,
        doc! {"a": {"$exists": 1}},
        &[1, 2, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15],
    );
    check(&d, doc! {"a": {"$exists": 0}}, &[3]);
    check(&d, doc! {"a": {"$type": "null"}}, &[2, 6]);
    // A dotted path is missing where it cannot continue (a scalar, null) and
    // in each array element that lacks the field; array elements that are not
    // documents contribute nothing, so {a: [1, 2]} does not match.
    check(&d, doc! {"a.b": Bson::Null}, &[1, 2, 3, 7, 10, 11, 13, 14]);
    check(
        &d,
        doc! {"a.b": {"$ne": Bson::Null}},
        &[4, 5, 6, 8, 9, 12, 15],
    );
    check(&d, doc! {"a.b": {"$exists": true}}, &[8, 9, 10, 14]);
    check(
        &d,
        doc! {"a.b": {"$exists": false}},
        &[1, 2, 3, 4, 5, 6, 7, 11, 12, 13, 15],
    );
    check(&d, doc! {"a.c": {"$exists": true}}, &[10]);
    check(&d, doc! {"a.b": 1}, &[8, 9, 10]);
    check(&d, doc! {"a.b": 2}, &[9]);
    check(
        &d,
        doc! {"a.b": {"$in": [2, Bson::Null]}},
        &[1, 2, 3, 7, 9, 10, 11, 13, 14],
    );
    check(
        &d,
        doc! {"x.y.z": Bson::Null},
        &[1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15],
    );
    check(&d, doc! {"x.y.z": {"$exists": true}}, &[]);
}

#[test]
fn comparisons_stay_in_their_type_bracket() {
    let d = shapes();
    // Manual, "Comparison/Sort Order": $gt and kin only compare values of the
    // same type bracket; each array element is tried (multikey).
    check(&d, doc! {"a": {"$gt": 1}}, &[4, 11, 12]);
    check(&d, doc! {"a": {"$gte": 1}}, &[1, 4, 11, 12, 15]);
    check(&d, doc! {"a": {"$lt": 2}}, &[1, 4, 15]);
    check(&d, doc! {"a": {"$lte": 2}}, &[1, 4, 15]);
    check(&d, doc! {"a": {"$gt": 2.4, "$lt": 2.6}}, &[11]);
    check(&d, doc! {"a": {"$gt": "a"}}, &[7, 15]);
    check(&d, doc! {"a": {"$lt": "y"}}, &[7, 15]);
    check(&d, doc! {"a": {"$gt": {}}}, &[8, 9, 10, 14]);
    check(&d, doc! {"a": {"$gte": []}}, &[4, 5, 6, 9, 10, 12, 15]);
    check(&d, doc! {"a": {"$gt": [1]}}, &[4, 9, 10, 12, 15]);
    // Each bound may be satisfied by a different element of an array.
    check(&d, doc! {"a": {"$gt": 1, "$lt": 2}}, &[4]);
    check(&d, doc! {"a": {"$gt": 2, "$lt": 3}}, &[11]);
    // MinKey and MaxKey bounds compare across every bracket.
    check(
        &d,
        doc! {"a": {"$gt": Bson::MinKey}},
        &[1, 2, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15],
    );
    check(
        &d,
        doc! {"a": {"$lt": Bson::MaxKey}},
        &[1, 2, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15],
    );
    check(&d, doc! {"a": {"$lte": Bson::MinKey}}, &[]);
    check(&d, doc! {"a.b": {"$gt": 1}}, &[9]);
    check(&d, doc! {"a.b": {"$gte": 1}}, &[8, 9, 10]);
    check(&d, doc! {"a.b": {"$lt": 2}}, &[8, 9, 10]);
}

fn numbers() -> Vec<Document> {
    vec![
        doc! {"_id": 1, "n": 1},
        doc! {"_id": 2, "n": 1_i64},
        doc! {"_id": 3, "n": 1.0},
        doc! {"_id": 4, "n": 1.5},
        doc! {"_id": 5, "n": f64::NAN},
        doc! {"_id": 6, "n": -0.0},
        doc! {"_id": 7, "n": 0},
        doc! {"_id": 8, "n": i64::MAX},
        doc! {"_id": 9, "n": "1"},
        doc! {"_id": 10, "n": f64::INFINITY},
        doc! {"_id": 11, "n": f64::NEG_INFINITY},
        doc! {"_id": 12, "n": 9_007_199_254_740_993_i64},
    ]
}

#[test]
fn numbers_compare_by_value_across_types() {
    let d = numbers();
    check(&d, doc! {"n": 1}, &[1, 2, 3]);
    check(&d, doc! {"n": 1_i64}, &[1, 2, 3]);
    check(&d, doc! {"n": 1.0}, &[1, 2, 3]);
    check(&d, doc! {"n": "1"}, &[9]);
    check(&d, doc! {"n": 0}, &[6, 7]);
    check(&d, doc! {"n": -0.0}, &[6, 7]);
    check(&d, doc! {"n": {"$gt": 1}}, &[4, 8, 10, 12]);
    check(&d, doc! {"n": {"$gte": 1}}, &[1, 2, 3, 4, 8, 10, 12]);
    check(&d, doc! {"n": {"$lt": 1}}, &[6, 7, 11]);
    check(&d, doc! {"n": {"$lte": 0}}, &[6, 7, 11]);
    // NaN equals NaN, and range operators never match NaN except $gte/$lte NaN.
    check(&d, doc! {"n": f64::NAN}, &[5]);
    check(&d, doc! {"n": {"$gt": f64::NAN}}, &[]);
    check(&d, doc! {"n": {"$lt": f64::NAN}}, &[]);
    check(&d, doc! {"n": {"$gte": f64::NAN}}, &[5]);
    check(&d, doc! {"n": {"$lte": f64::NAN}}, &[5]);
    check(
        &d,
        doc! {"n": {"$gt": -1.0e308}},
        &[1, 2, 3, 4, 6, 7, 8, 10, 12],
    );
    check(&d, doc! {"n": {"$ne": 1}}, &[4, 5, 6, 7, 8, 9, 10, 11, 12]);
    check(
        &d,
        doc! {"n": {"$gt": 9_223_372_036_854_775_806_i64}},
        &[8, 10],
    );
    // Exact comparison: 2^53 + 1 as a long is above the double 2^53.
    check(
        &d,
        doc! {"n": {"$gt": 9_007_199_254_740_992.0}},
        &[8, 10, 12],
    );
    check(&d, doc! {"n": 9_007_199_254_740_992.0}, &[]);
    check(&d, doc! {"n": {"$in": [1.5, "1"]}}, &[4, 9]);
    check(
        &d,
        doc! {"n": {"$nin": [1.5, "1", 1]}},
        &[5, 6, 7, 8, 10, 11, 12],
    );
    check(&d, doc! {"n": {"$type": "long"}}, &[2, 8, 12]);
    check(&d, doc! {"n": {"$type": "int"}}, &[1, 7]);
    check(&d, doc! {"n": {"$type": 1}}, &[3, 4, 5, 6, 10, 11]);
    check(
        &d,
        doc! {"n": {"$type": "number"}},
        &[1, 2, 3, 4, 5, 6, 7, 8, 10, 11, 12],
    );
    check(&d, doc! {"n": {"$type": ["string", "int"]}}, &[1, 7, 9]);
    check(&d, doc! {"n": {"$type": 2}}, &[9]);
    check(
        &d,
        doc! {"n": {"$gt": Bson::MinKey}},
        &[1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12],
    );
}

#[test]
fn modulo() {
    let d = numbers();
    // Manual, "$mod": doubles are truncated toward zero (1.5 -> 1); infinities
    // and NaN never match.
    check(&d, doc! {"n": {"$mod": [2, 1]}}, &[1, 2, 3, 4, 8, 12]);
    check(&d, doc! {"n": {"$mod": [2, 0]}}, &[6, 7]);
    // The remainder takes the dividend's sign, as in C.
    check(&d, doc! {"n": {"$mod": [-2, 1]}}, &[1, 2, 3, 4, 8, 12]);
    check(&d, doc! {"n": {"$mod": [2.9, 1.1]}}, &[1, 2, 3, 4, 8, 12]);
    // 2^53 + 1 is a multiple of 3, and long arithmetic keeps it exact.
    check(&d, doc! {"n": {"$mod": [3, 0]}}, &[6, 7, 12]);
    let neg = vec![
        doc! {"_id": 1, "n": -3},
        doc! {"_id": 2, "n": [4, 7]},
        doc! {"_id": 3, "n": "7"},
    ];
    check(&neg, doc! {"n": {"$mod": [2, -1]}}, &[1]);
    check(&neg, doc! {"n": {"$mod": [3, 1]}}, &[2]);
    check(&neg, doc! {"n": {"$mod": [i64::MIN, 0]}}, &[]);
    check(&neg, doc! {"n": {"$not": {"$mod": [2, 0]}}}, &[1, 3]);
}

#[test]
fn bit_tests() {
    let d = vec![
        doc! {"_id": 1, "b": 0},
        doc! {"_id": 2, "b": 1},
        doc! {"_id": 3, "b": 54},
        doc! {"_id": 4, "b": -1},
        doc! {"_id": 5, "b": 2.0},
        doc! {"_id": 6, "b": 2.5},
        doc! {"_id": 7, "b": bin(&[0b101])},
        doc! {"_id": 8, "b": "x"},
        doc! {"_id": 9, "b": 1_i64 << 40},
    ];
    check(&d, doc! {"b": {"$bitsAllSet": [1, 2]}}, &[3, 4]);
    check(&d, doc! {"b": {"$bitsAllSet": 6}}, &[3, 4]);
    check(&d, doc! {"b": {"$bitsAllSet": 6.0}}, &[3, 4]);
    check(&d, doc! {"b": {"$bitsAnySet": [0, 40]}}, &[2, 4, 7, 9]);
    check(&d, doc! {"b": {"$bitsAllClear": [0]}}, &[1, 3, 5, 9]);
    check(
        &d,
        doc! {"b": {"$bitsAnyClear": [0, 1]}},
        &[1, 2, 3, 5, 7, 9],
    );
    // Negative numbers are sign-extended past bit 63 (manual, "$bitsAllSet").
    check(&d, doc! {"b": {"$bitsAllSet": [100]}}, &[4]);
    check(&d, doc! {"b": {"$bitsAllSet": []}}, &[1, 2, 3, 4, 5, 7, 9]);
    check(&d, doc! {"b": {"$bitsAnySet": []}}, &[]);
    check(&d, doc! {"b": {"$bitsAllSet": bin(&[0b101])}}, &[4, 7]);
    check(
        &d,
        doc! {"b": {"$bitsAllClear": bin(&[0b10])}},
        &[1, 2, 7, 9],
    );
}

fn strings() -> Vec<Document> {
    vec![
        doc! {"_id": 1, "s": "apple"},
        doc! {"_id": 2, "s": "Apple"},
        doc! {"_id": 3, "s": "banana"},
        doc! {"_id": 4, "s": ["cherry", "apricot"]},
        doc! {"_id": 5, "s": "a\nb"},
        doc! {"_id": 6, "s": re("ap", "")},
        doc! {"_id": 7, "s": 5},
        doc! {"_id": 8, "s": "ñandú"},
        doc! {"_id": 9, "s": Bson::Symbol("apse".to_owned())},
    ]
}

#[test]
fn regular_expressions() {
    let d = strings();
    check(&d, doc! {"s": re("^a", "")}, &[1, 4, 5, 9]);
    check(&d, doc! {"s": re("^a", "i")}, &[1, 2, 4, 5, 9]);
    check(&d, doc! {"s": {"$regex": "^b", "$options": "m"}}, &[3, 5]);
    check(&d, doc! {"s": {"$regex": "^b"}}, &[3]);
    check(&d, doc! {"s": {"$regex": "a.b", "$options": "s"}}, &[5]);
    check(&d, doc! {"s": {"$regex": "a.b"}}, &[]);
    check(&d, doc! {"s": {"$regex": re("^A", "")}}, &[2]);
    check(
        &d,
        doc! {"s": {"$regex": re("^A", ""), "$options": "i"}},
        &[1, 2, 4, 5, 9],
    );
    check(
        &d,
        doc! {"s": {"$options": "i", "$regex": "^A"}},
        &[1, 2, 4, 5, 9],
    );
    check(&d, doc! {"s": {"$in": [re("^b", ""), "apple"]}}, &[1, 3]);
    check(
        &d,
        doc! {"s": {"$nin": [re("an", "")]}},
        &[1, 2, 4, 5, 6, 7, 9],
    );
    check(&d, doc! {"s": {"$regex": "p{2}"}}, &[1, 2]);
    check(
        &d,
        doc! {"s": {"$regex": "a  p # comment", "$options": "x"}},
        &[1, 4, 9],
    );
    // A regex value in a filter also matches an equal regex stored in the field.
    check(&d, doc! {"s": re("ap", "")}, &[1, 4, 6, 9]);
    // $eq with a regex is plain equality (manual, "$eq": regex matching).
    check(&d, doc! {"s": {"$eq": re("ap", "")}}, &[6]);
    check(&d, doc! {"s": {"$in": [re("ap", "")]}}, &[1, 4, 6, 9]);
    check(&d, doc! {"s": {"$gt": "b"}}, &[3, 4, 8]);
    check(&d, doc! {"s": {"$regex": "^ñ"}}, &[8]);
    check(&d, doc! {"s": {"$regex": "^.and", "$options": "u"}}, &[8]);
    check(&d, doc! {"s": {"$not": {"$regex": "^a"}}}, &[2, 3, 6, 7, 8]);
    check(&d, doc! {"s": {"$not": re("^a", "i")}}, &[3, 6, 7, 8]);
    check(&d, doc! {"s": {"$all": [re("^c", ""), re("^a", "")]}}, &[4]);
    check(&d, doc! {"s": {"$regex": ""}}, &[1, 2, 3, 4, 5, 8, 9]);
    check(&d, doc! {"s": {"$type": "regex"}}, &[6]);
    check(&d, doc! {"s": {"$type": "symbol"}}, &[9]);
    check(&d, doc! {"s": {"$size": 2}}, &[4]);
    check(&d, doc! {"s": {"$elemMatch": {"$regex": "^c"}}}, &[4]);
}

fn items() -> Vec<Document> {
    vec![
        doc! {"_id": 1, "items": [{"k": "a", "v": 1}, {"k": "b", "v": 2}]},
        doc! {"_id": 2, "items": [{"k": "a", "v": 2}, {"k": "b", "v": 1}]},
        doc! {"_id": 3, "items": {"k": "a", "v": 1}},
        doc! {"_id": 4, "items": []},
        doc! {"_id": 5, "items": [{"k": "a", "v": [1, 5]}]},
        doc! {"_id": 6, "items": [[{"k": "a", "v": 1}]]},
    ]
}

#[test]
fn elem_match_and_multikey() {
    let d = items();
    // Manual, "Query an Array of Embedded Documents": without $elemMatch each
    // condition may be met by a different element; with it, one element must
    // meet them all.
    check(&d, doc! {"items.k": "a", "items.v": 1}, &[1, 2, 3, 5]);
    check(
        &d,
        doc! {"items": {"$elemMatch": {"k": "a", "v": 1}}},
        &[1, 5],
    );
    check(
        &d,
        doc! {"items": {"$elemMatch": {"k": "a", "v": {"$gt": 1}}}},
        &[2, 5],
    );
    check(
        &d,
        doc! {"items": {"$elemMatch": {"v": {"$gt": 1, "$lt": 5}}}},
        &[1, 2, 5],
    );
    check(
        &d,
        doc! {"items.v": {"$elemMatch": {"$gt": 1, "$lt": 5}}},
        &[],
    );
    check(
        &d,
        doc! {"items.v": {"$elemMatch": {"$gte": 1, "$lt": 5}}},
        &[5],
    );
    check(
        &d,
        doc! {"items": {"$all": [{"$elemMatch": {"k": "a"}}, {"$elemMatch": {"k": "b"}}]}},
        &[1, 2],
    );
    check(&d, doc! {"items": {"$size": 2}}, &[1, 2]);
    check(&d, doc! {"items": {"$size": 1}}, &[5, 6]);
    check(&d, doc! {"items": {"$size": 0}}, &[4]);
    check(&d, doc! {"items.1.k": "b"}, &[1, 2]);
    check(&d, doc! {"items.0.v": 2}, &[2]);
    check(&d, doc! {"items.0.v": 5}, &[5]);
    check(
        &d,
        doc! {"items": {"$elemMatch": {"$or": [{"k": "b"}, {"v": 5}]}}},
        &[1, 2, 5],
    );
    check(
        &d,
        doc! {"$or": [{"items": {"$size": 0}}, {"items.k": "z"}]},
        &[4],
    );
    check(&d, doc! {"items.k": {"$all": ["a", "b"]}}, &[1, 2]);
    check(&d, doc! {"items": {"k": "a", "v": 1}}, &[1, 3]);
    check(&d, doc! {"items": {"v": 1, "k": "a"}}, &[]);
    // Nested arrays are not entered by a field name (items.k over [[{k}]]).
    check(&d, doc! {"items.k": "a"}, &[1, 2, 3, 5]);
    check(&d, doc! {"items.0.0.k": "a"}, &[6]);
    // $elemMatch over an element that is itself an array treats it as a document
    // with fields "0", "1", ...
    check(&d, doc! {"items": {"$elemMatch": {"0.k": "a"}}}, &[6]);
    check(&d, doc! {"items": {"$elemMatch": {}}}, &[1, 2, 5, 6]);
    check(
        &d,
        doc! {"items": {"$elemMatch": {"k": {"$exists": false}}}},
        &[6],
    );
    check(
        &d,
        doc! {"items": {"$not": {"$elemMatch": {"k": "b"}}}},
        &[3, 4, 5, 6],
    );
    check(&d, doc! {"items.v": {"$all": [1, 5]}}, &[5]);
    check(&d, doc! {"items.v": {"$all": [1, 2]}}, &[1, 2]);
    check(&d, doc! {"items.v": [1, 5]}, &[5]);
    check(&d, doc! {"items.v": {"$size": 2}}, &[5]);
    check(&d, doc! {"items": {"$all": []}}, &[]);
    check(&d, doc! {"items": {"$type": "object"}}, &[1, 2, 3, 5]);
    check(&d, doc! {"items": {"$type": "array"}}, &[1, 2, 4, 5, 6]);
}

#[test]
fn value_form_elem_match_and_all() {
    let d = shapes();
    check(&d, doc! {"a": {"$elemMatch": {"$gt": 1}}}, &[4, 12]);
    check(&d, doc! {"a": {"$elemMatch": {"$gt": 1, "$lt": 2}}}, &[]);
    check(
        &d,
        doc! {"a": {"$elemMatch": {"$gte": 1, "$lt": 2}}},
        &[4, 15],
    );
    check(&d, doc! {"a": {"$elemMatch": {"b": 1}}}, &[9, 10]);
    check(&d, doc! {"a": {"$elemMatch": {}}}, &[9, 10, 12]);
    check(&d, doc! {"a": {"$elemMatch": {"$eq": Bson::Null}}}, &[6]);
    check(
        &d,
        doc! {"a": {"$elemMatch": {"$ne": 1}}},
        &[4, 6, 9, 10, 12, 15],
    );
    check(&d, doc! {"a": {"$elemMatch": {"$type": "string"}}}, &[15]);
    check(&d, doc! {"a": {"$elemMatch": {"$in": [3, "x"]}}}, &[12, 15]);
    check(&d, doc! {"a": {"$elemMatch": {"$size": 2}}}, &[12]);
    check(&d, doc! {"a": {"$all": [1, 2]}}, &[4]);
    check(&d, doc! {"a": {"$all": [1]}}, &[1, 4, 15]);
    // $all with one array element also matches the whole array (manual, "$all":
    // behaviour since 2.6 equals an $and of equalities).
    check(&d, doc! {"a": {"$all": [[1, 2]]}}, &[4, 12]);
    check(&d, doc! {"a": {"$all": []}}, &[]);
    check(&d, doc! {"a": {"$all": [Bson::Null]}}, &[2, 3, 6, 13]);
    check(&d, doc! {"a": {"$all": [1, "x"]}}, &[15]);
    // $size looks at the array itself, never at arrays nested in it (found by
    // the differential test when element expansion was allowed for $size).
    let nested = vec![doc! {"_id": 1, "a": [0, [0]]}, doc! {"_id": 2, "a": [[0]]}];
    check(&nested, doc! {"a": {"$size": 1}}, &[2]);
    check(&nested, doc! {"a": {"$not": {"$size": 1}}}, &[1]);
}

#[test]
fn logical_operators() {
    let d = shapes();
    check(&d, doc! {"$or": [{"a": 1}, {"a": "x"}]}, &[1, 4, 7, 15]);
    check(
        &d,
        doc! {"$and": [{"a": {"$gt": 0}}, {"a": {"$lt": 2}}]},
        &[1, 4, 15],
    );
    check(&d, doc! {"$nor": [{"a": {"$exists": true}}]}, &[3]);
    check(
        &d,
        doc! {"$nor": [{"a": 1}, {"a": Bson::Null}]},
        &[5, 7, 8, 9, 10, 11, 12, 14],
    );
    check(&d, doc! {"$and": [{"a": 1}, {"a": 2}]}, &[4]);
    check(&d, doc! {"a": 1, "$or": [{"a": 2}, {"a": "x"}]}, &[4, 15]);
    check(
        &d,
        doc! {"$or": [{"$and": [{"a": 1}, {"a": 2}]}, {"a": 2.5}]},
        &[4, 11],
    );
    check(
        &d,
        doc! {"a": {"$not": {"$gt": 1}}},
        &[1, 2, 3, 5, 6, 7, 8, 9, 10, 13, 14, 15],
    );
    check(
        &d,
        doc! {"a": {"$not": re("x", "")}},
        &[1, 2, 3, 4, 5, 6, 8, 9, 10, 11, 12, 13, 14],
    );
    check(
        &d,
        doc! {"a": {"$not": {"$eq": Bson::Null}}},
        &[1, 4, 5, 7, 8, 9, 10, 11, 12, 14, 15],
    );
    check(
        &d,
        doc! {"a": {"$not": {"$size": 2}}},
        &[1, 2, 3, 5, 6, 7, 8, 11, 13, 14],
    );
    check(
        &d,
        doc! {"a": {"$not": {"$not": {"$size": 2}}}},
        &[4, 9, 10, 12, 15],
    );
    check(&d, doc! {"a": 1, "$comment": "ignored"}, &[1, 4, 15]);
    check(
        &d,
        doc! {"a": {"$eq": 1, "$comment": "ignored"}},
        &[1, 4, 15],
    );
    check(&d, doc! {"$alwaysFalse": 1}, &[]);
    check(&d, doc! {"a": {"$in": [1, "x"], "$nin": [2]}}, &[1, 7, 15]);
    check(&d, doc! {"a": {"$in": []}}, &[]);
    check(
        &d,
        doc! {"a": {"$nin": []}},
        &[1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15],
    );
    check(
        &d,
        doc! {"a": {"$in": [[1, 2], {"b": 1}]}},
        &[4, 8, 9, 10, 12],
    );
}

#[test]
fn numeric_path_components() {
    let d = vec![
        doc! {"_id": 1, "a": [10, 20]},
        doc! {"_id": 2, "a": {"0": 10}},
        doc! {"_id": 3, "a": [{"0": 20}, 10]},
        doc! {"_id": 4, "a": [[10], 20]},
        doc! {"_id": 5, "a": {"01": 10}},
    ];
    // A numeric component names a position and also a field of that name in
    // element documents (manual, "Dot Notation").
    check(&d, doc! {"a.0": 10}, &[1, 2, 4]);
    check(&d, doc! {"a.0": 20}, &[3]);
    check(&d, doc! {"a.1": 20}, &[1, 4]);
    check(&d, doc! {"a.1": 10}, &[3]);
    check(&d, doc! {"a.01": 10}, &[5]);
    check(&d, doc! {"a.0.0": 10}, &[4]);
    check(&d, doc! {"a.5": {"$exists": true}}, &[]);
    check(&d, doc! {"a.0": {"$exists": true}}, &[1, 2, 3, 4]);
    check(&d, doc! {"a.0": {"$gt": 15}}, &[3]);
    check(&d, doc! {"a.0": {"$type": "array"}}, &[4]);
}

#[test]
fn expr_and_json_schema() {
    let d = vec![
        doc! {"_id": 1, "x": 1, "y": 2},
        doc! {"_id": 2, "x": 5, "y": 2},
        doc! {"_id": 3, "x": "a", "y": "b"},
        doc! {"_id": 4, "x": Bson::Null},
        doc! {"_id": 5},
    ];
    // Aggregation comparison orders missing below null (manual, "$expr").
    check(&d, doc! {"$expr": {"$gt": ["$x", "$y"]}}, &[2, 4]);
    check(&d, doc! {"$expr": {"$eq": ["$x", Bson::Null]}}, &[4]);
    check(
        &d,
        doc! {"$expr": {"$eq": [{"$multiply": ["$x", 2]}, 10]}},
        &[2],
    );
    check(&d, doc! {"$expr": "$x"}, &[1, 2, 3]);
    check(
        &d,
        doc! {"$expr": {"$lt": ["$x", "$y"]}, "x": {"$type": "number"}},
        &[1],
    );
    check(
        &d,
        doc! {"$expr": {"$and": [{"$gte": ["$x", 1]}, {"$lte": ["$x", 5]}]}},
        &[1, 2],
    );
    check(&d, doc! {"$expr": true}, &[1, 2, 3, 4, 5]);
    let people = vec![
        doc! {"_id": 1, "name": "al", "age": 30},
        doc! {"_id": 2, "name": "bob"},
        doc! {"_id": 3, "name": 5, "age": 10},
        doc! {"_id": 4, "name": "zed", "age": -1, "extra": true},
    ];
    check(
        &people,
        doc! {"$jsonSchema": {"required": ["name", "age"]}},
        &[1, 3, 4],
    );
    check(
        &people,
        doc! {"$jsonSchema": {"properties": {"name": {"bsonType": "string"}}}},
        &[1, 2, 4],
    );
    check(
        &people,
        doc! {"$jsonSchema": {"properties": {"age": {"minimum": 0}}}},
        &[1, 2, 3],
    );
    check(
        &people,
        doc! {"$jsonSchema": {"properties": {"age": {"maximum": 10, "exclusiveMaximum": true}}}},
        &[2, 4],
    );
    check(
        &people,
        doc! {"$jsonSchema": {"properties": {"name": {"type": "string", "minLength": 3}}}},
        &[2, 4],
    );
    check(
        &people,
        doc! {"$jsonSchema": {"properties": {"name": {"enum": ["al", "bob"]}}}},
        &[1, 2],
    );
    check(
        &people,
        doc! {"$jsonSchema": {"additionalProperties": false, "properties": {"_id": {}, "name": {}, "age": {}}}},
        &[1, 2, 3],
    );
    check(
        &people,
        doc! {"$jsonSchema": {"properties": {"name": {"pattern": "^b"}}}},
        &[2, 3],
    );
    check(
        &people,
        doc! {"$jsonSchema": {"bsonType": "object", "properties": {"age": {"bsonType": ["int", "long"]}}}},
        &[1, 2, 3, 4],
    );
    check(
        &people,
        doc! {"$jsonSchema": {"properties": {"extra": {"type": "boolean"}}}},
        &[1, 2, 3, 4],
    );
}

#[test]
fn refused_filters_carry_mongodb_codes() {
    refused(doc! {"$foo": 1}, 2, "unknown top level operator: $foo");
    refused(doc! {"a": {"$foo": 1}}, 2, "unknown operator: $foo");
    refused(doc! {"a": {"$gt": 1, "b": 1}}, 2, "unknown operator: b");
    refused(
        doc! {"$where": "this.a == 1"},
        2,
        "$where is not allowed in this context",
    );
    refused(doc! {"a": {"$in": 1}}, 2, "$in needs an array");
    refused(doc! {"a": {"$nin": 1}}, 2, "$nin needs an array");
    refused(
        doc! {"a": {"$in": [{"$gt": 1}]}},
        2,
        "cannot nest $ under $in",
    );
    refused(doc! {"a": {"$size": "x"}}, 2, "$size needs a number");
    refused(
        doc! {"a": {"$size": 1.5}},
        2,
        "$size must be a whole number",
    );
    refused(doc! {"a": {"$size": -1}}, 2, "$size may not be negative");
    refused(doc! {"a": {"$all": 1}}, 2, "$all needs an array");
    refused(
        doc! {"a": {"$all": [{"$elemMatch": {"b": 1}}, 1]}},
        2,
        "$all/$elemMatch has to be consistent",
    );
    refused(
        doc! {"a": {"$all": [{"$gt": 1}]}},
        2,
        "no $ expressions in $all",
    );
    refused(
        doc! {"a": {"$elemMatch": 1}},
        2,
        "$elemMatch needs an Object",
    );
    refused(
        doc! {"a": {"$mod": 1}},
        2,
        "malformed mod, needs to be an array",
    );
    refused(
        doc! {"a": {"$mod": [1]}},
        2,
        "malformed mod, not enough elements",
    );
    refused(
        doc! {"a": {"$mod": [1, 2, 3]}},
        2,
        "malformed mod, too many elements",
    );
    refused(doc! {"a": {"$mod": [0, 1]}}, 2, "divisor cannot be 0");
    refused(doc! {"a": {"$mod": ["x", 1]}}, 2, "malformed mod");
    refused(doc! {"a": {"$mod": [f64::NAN, 1]}}, 2, "malformed mod");
    refused(
        doc! {"a": {"$not": 1}},
        2,
        "$not needs a regex or a document",
    );
    refused(doc! {"a": {"$not": {}}}, 2, "$not cannot be empty");
    refused(
        doc! {"$and": []},
        2,
        "$and/$or/$nor must be a nonempty array",
    );
    refused(doc! {"$or": 1}, 2, "$or must be an array");
    refused(
        doc! {"$nor": [1]},
        2,
        "$nor argument's entries must be objects",
    );
    refused(
        doc! {"a": {"$type": "foo"}},
        2,
        "Unknown type name alias: foo",
    );
    refused(
        doc! {"a": {"$type": 100}},
        2,
        "Invalid numerical type code: 100",
    );
    refused(
        doc! {"a": {"$type": true}},
        14,
        "type must be represented as a number or a string",
    );
    refused(
        doc! {"a": {"$regex": "("}},
        51091,
        "Regular expression is invalid",
    );
    refused(
        doc! {"a": re("(", "")},
        51091,
        "Regular expression is invalid",
    );
    refused(
        doc! {"a": {"$regex": "a", "$options": "z"}},
        51108,
        "invalid flag in regex options: z",
    );
    refused(doc! {"a": {"$options": "i"}}, 2, "$options needs a $regex");
    refused(doc! {"a": {"$regex": 1}}, 2, "$regex has to be a string");
    refused(
        doc! {"a": {"$regex": re("a", "i"), "$options": "m"}},
        2,
        "options set in both $regex and $options",
    );
    refused(
        doc! {"a": {"$bitsAllSet": "x"}},
        2,
        "takes an Array, a number, or a BinData",
    );
    refused(
        doc! {"a": {"$bitsAllSet": [-1]}},
        2,
        "bit positions must be >= 0",
    );
    refused(doc! {"a": {"$bitsAnySet": -1}}, 2, "non-negative");
    refused(doc! {"a": {"$bitsAnySet": 1.5}}, 2, "64-bit signed integer");
    refused(
        doc! {"$expr": {"$foo": 1}},
        168,
        "Unrecognized expression '$foo'",
    );
    refused(
        doc! {"$expr": {"$add": 1, "$x": 2}},
        15983,
        "exactly one field",
    );
    refused(
        doc! {"$jsonSchema": {"foo": 1}},
        9,
        "Unknown $jsonSchema keyword: foo",
    );
    refused(doc! {"$jsonSchema": 1}, 14, "$jsonSchema must be an object");
    let mut deep = doc! {"a": 1};
    for _ in 0..120 {
        deep = doc! {"$and": [deep]};
    }
    refused(deep, 2, "depth");
}

#[test]
fn run_time_errors_fail_the_match() {
    let e = match_error(doc! {"$expr": {"$add": ["$x", 1]}}, doc! {"x": "s"});
    assert_eq!(
        (e.code(), e.to_string().as_str()),
        (14, "$add only supports numeric or date types, not string")
    );
    let e = match_error(doc! {"$expr": {"$divide": [1, "$x"]}}, doc! {"x": 0});
    assert_eq!(e.code(), 2);
}

#[test]
fn other_type_brackets() {
    let oid = bson::oid::ObjectId::from_bytes([7; 12]);
    let d = vec![
        doc! {"_id": 1, "v": true},
        doc! {"_id": 2, "v": false},
        doc! {"_id": 3, "v": bson::DateTime::from_millis(1000)},
        doc! {"_id": 4, "v": bson::DateTime::from_millis(2000)},
        doc! {"_id": 5, "v": oid},
        doc! {"_id": 6, "v": bson::Timestamp { time: 1, increment: 1 }},
        doc! {"_id": 7, "v": Bson::MinKey},
        doc! {"_id": 8, "v": Bson::MaxKey},
        doc! {"_id": 9, "v": 0},
        doc! {"_id": 10, "v": bin(&[1])},
    ];
    check(&d, doc! {"v": true}, &[1]);
    check(&d, doc! {"v": {"$gt": false}}, &[1]);
    check(&d, doc! {"v": {"$gte": false}}, &[1, 2]);
    // Booleans are not numbers: {v: 1} does not match true.
    check(&d, doc! {"v": 1}, &[]);
    check(&d, doc! {"v": 0}, &[9]);
    check(
        &d,
        doc! {"v": {"$gt": bson::DateTime::from_millis(1500)}},
        &[4],
    );
    check(
        &d,
        doc! {"v": {"$lt": bson::DateTime::from_millis(1500)}},
        &[3],
    );
    check(&d, doc! {"v": {"$type": "date"}}, &[3, 4]);
    check(&d, doc! {"v": {"$type": "bool"}}, &[1, 2]);
    check(&d, doc! {"v": {"$type": "timestamp"}}, &[6]);
    check(&d, doc! {"v": {"$type": "minKey"}}, &[7]);
    check(&d, doc! {"v": {"$type": 127}}, &[8]);
    check(&d, doc! {"v": {"$type": -1}}, &[7]);
    check(&d, doc! {"v": {"$type": "objectId"}}, &[5]);
    check(&d, doc! {"v": {"$type": "binData"}}, &[10]);
    check(&d, doc! {"v": Bson::MinKey}, &[7]);
    check(&d, doc! {"v": oid}, &[5]);
    check(
        &d,
        doc! {"v": {"$gt": bson::Timestamp { time: 0, increment: 0 }}},
        &[6],
    );
    check(
        &d,
        doc! {"v": {"$lt": Bson::MaxKey}},
        &[1, 2, 3, 4, 5, 6, 7, 9, 10],
    );
    check(
        &d,
        doc! {"v": {"$gt": Bson::MinKey}},
        &[1, 2, 3, 4, 5, 6, 8, 9, 10],
    );
    check(
        &d,
        doc! {"v": {"$gte": Bson::MinKey}},
        &[1, 2, 3, 4, 5, 6, 7, 8, 9, 10],
    );
    check(&d, doc! {"v": {"$gt": bin(&[0])}}, &[10]);
    check(&d, doc! {"v": {"$in": [true, 0]}}, &[1, 9]);
    check(
        &d,
        doc! {"v": {"$exists": true, "$ne": false}},
        &[1, 3, 4, 5, 6, 7, 8, 9, 10],
    );
    check(&d, doc! {"v": {"$bitsAllSet": [0]}}, &[10]);
}
