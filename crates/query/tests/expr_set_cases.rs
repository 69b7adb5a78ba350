//! Data-driven cases for the set operators. MongoDB leaves the order of a set
//! result unspecified (manual, "$setUnion": "The order of the elements in the
//! output array is unspecified"), so set results are compared as sets.

use crate::support::{evaluate, fails_with, yields};
use bson::{Bson, Document, doc};

fn d() -> Document {
    doc! {"a": [1, 2, 3], "b": [2, 3, 4], "dup": [1, 1, 2, 2, 3, 3], "n": Bson::Null, "s": "123"}
}

/// Asserts that `expr` yields an array holding exactly `expected`, in any order.
#[track_caller]
fn set_is(expr: Document, expected: Bson) {
    let got =
        evaluate(&d(), Bson::Document(expr.clone())).unwrap_or_else(|e| panic!("{expr}: {e}"));
    let (Some(Bson::Array(mut got)), Bson::Array(mut want)) = (got.clone(), expected) else {
        panic!("{expr}: expected an array, got {got:?}");
    };
    let key = |b: &Bson| format!("{b:?}");
    got.sort_by_key(key);
    want.sort_by_key(key);
    assert_eq!(got, want, "{expr}");
}

fn ints(values: &[i32]) -> Bson {
    Bson::Array(values.iter().map(|v| Bson::Int32(*v)).collect())
}

#[test]
fn set_union() {
    set_is(doc! {"$setUnion": ["$a", "$b"]}, ints(&[1, 2, 3, 4]));
    set_is(doc! {"$setUnion": ["$dup"]}, ints(&[1, 2, 3]));
    set_is(doc! {"$setUnion": []}, ints(&[]));
    set_is(
        doc! {"$setUnion": ["$a", [900], "$b"]},
        ints(&[1, 2, 3, 4, 900]),
    );
    // 1 and 1.0 are one element; which survives is unspecified.
    let got = evaluate(&d(), Bson::Document(doc! {"$setUnion": [[1, 1.0]]})).expect("evaluates");
    assert!(
        matches!(&got, Some(Bson::Array(items)) if items.len() == 1),
        "{got:?}"
    );
    // Only the top level is a set: [1, 2] inside is one element.
    set_is(
        doc! {"$setUnion": [[[1, 2]], [[1, 2]]]},
        Bson::Array(vec![ints(&[1, 2])]),
    );
    yields(&d(), doc! {"$setUnion": ["$a", "$n"]}, Bson::Null);
    yields(&d(), doc! {"$setUnion": ["$a", "$nope"]}, Bson::Null);
    fails_with(&d(), doc! {"$setUnion": ["$a", "$s"]}, 17043);
}

#[test]
fn set_intersection_and_difference() {
    set_is(doc! {"$setIntersection": ["$a", "$b"]}, ints(&[2, 3]));
    set_is(
        doc! {"$setIntersection": ["$dup", [1, 2, 1, 890]]},
        ints(&[1, 2]),
    );
    set_is(doc! {"$setIntersection": []}, ints(&[]));
    set_is(doc! {"$setIntersection": ["$a", []]}, ints(&[]));
    yields(&d(), doc! {"$setIntersection": ["$n", "$a"]}, Bson::Null);
    fails_with(&d(), doc! {"$setIntersection": ["$a", "$s"]}, 17047);
    set_is(doc! {"$setDifference": ["$dup", [2]]}, ints(&[1, 3]));
    set_is(doc! {"$setDifference": ["$b", "$a"]}, ints(&[4]));
    set_is(doc! {"$setDifference": ["$a", "$dup"]}, ints(&[]));
    yields(&d(), doc! {"$setDifference": ["$a", "$nope"]}, Bson::Null);
    fails_with(&d(), doc! {"$setDifference": ["$s", "$a"]}, 17048);
    fails_with(&d(), doc! {"$setDifference": ["$a", "$s"]}, 17049);
    fails_with(&d(), doc! {"$setDifference": ["$a", "$a", "$a"]}, 16020);
}

#[test]
fn set_equals_and_is_subset() {
    let bool_of = |expr: Document, expected: bool| yields(&d(), expr, Bson::Boolean(expected));
    bool_of(doc! {"$setEquals": ["$a", "$dup"]}, true);
    bool_of(doc! {"$setEquals": ["$a", [3, 2, 1, 2.0]]}, true);
    bool_of(doc! {"$setEquals": ["$a", "$b"]}, false);
    bool_of(doc! {"$setEquals": ["$a", "$dup", [1, 2]]}, false);
    bool_of(doc! {"$setEquals": [[], []]}, true);
    // Unlike $setUnion, null and missing are errors here (jstest set.js).
    fails_with(&d(), doc! {"$setEquals": ["$a", "$n"]}, 17044);
    fails_with(&d(), doc! {"$setEquals": ["$nope", "$a"]}, 17044);
    fails_with(&d(), doc! {"$setEquals": ["$a"]}, 17045);
    bool_of(doc! {"$setIsSubset": [[1, 2], [2, 1, 3]]}, true);
    bool_of(doc! {"$setIsSubset": ["$dup", "$a"]}, true);
    bool_of(doc! {"$setIsSubset": [[], [1]]}, true);
    bool_of(doc! {"$setIsSubset": [[1, 4], [1, 2]]}, false);
    fails_with(&d(), doc! {"$setIsSubset": ["$n", "$a"]}, 17046);
    fails_with(&d(), doc! {"$setIsSubset": ["$a", "$nope"]}, 17042);
    fails_with(&d(), doc! {"$setIsSubset": ["$a"]}, 16020);
}

#[test]
fn any_and_all_elements_true() {
    let bool_of = |expr: Document, expected: bool| yields(&d(), expr, Bson::Boolean(expected));
    bool_of(doc! {"$anyElementTrue": [[false, 0, Bson::Null]]}, false);
    bool_of(doc! {"$anyElementTrue": [[false, 1]]}, true);
    bool_of(doc! {"$anyElementTrue": [[]]}, false);
    bool_of(doc! {"$anyElementTrue": "$a"}, true);
    bool_of(doc! {"$allElementsTrue": [[]]}, true);
    bool_of(doc! {"$allElementsTrue": [[true, 1, "x"]]}, true);
    bool_of(doc! {"$allElementsTrue": [[true, 0]]}, false);
    // A nested array is an element, and arrays are true even when empty.
    bool_of(doc! {"$allElementsTrue": [[true, [false], []]]}, true);
    fails_with(&d(), doc! {"$anyElementTrue": "$n"}, 17041);
    fails_with(&d(), doc! {"$allElementsTrue": "$nope"}, 17040);
    fails_with(&d(), doc! {"$allElementsTrue": [[1], [2]]}, 16020);
}
