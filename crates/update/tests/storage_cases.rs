//! Data-driven cases for what an update may store: `$`-prefixed field names,
//! nesting depth, and `$push` of a document whose fields look like modifiers.
//!
//! Regression: `$`-prefixed names were refused in every path component and never
//! checked in written values, and nesting was never checked. MongoDB 5.0+ refuses
//! a `$` name only at the top level of a stored document, outside DBRef order
//! (mongodb/mongo `src/mongo/db/update/storage_validation.cpp`; the manual's
//! "Dollar-Prefixed Field Names"; jstests/core/write/update/updateh.js), and
//! refuses nesting past the storage limit with Overflow (15).

use bson::{Bson, Document, doc};

use crate::support::{Code, Doc, check, check_upsert};

#[test]
fn dollar_prefixed_field_cases() {
    // Below the top level a `$` name is an ordinary field name.
    check(
        doc! {"_id": 1},
        doc! {"$set": {"a": {"$z": 1}}},
        Doc(doc! {"_id": 1, "a": {"$z": 1}}),
    );
    check(
        doc! {"_id": 1},
        doc! {"$set": {"secret.agent$.$x": 1}},
        Doc(doc! {"_id": 1, "secret": {"agent$": {"$x": 1}}}),
    );
    check(
        doc! {"_id": 1, "a": []},
        doc! {"$push": {"a": {"$each": [{"$b": 1}]}}},
        Doc(doc! {"_id": 1, "a": [{"$b": 1}]}),
    );
    check(
        doc! {"_id": 1},
        doc! {"$set": {"x": {"$ref": "c", "$id": 1, "$db": "d"}}},
        Doc(doc! {"_id": 1, "x": {"$ref": "c", "$id": 1, "$db": "d"}}),
    );
    check(
        doc! {"_id": 1},
        doc! {"$set": {"ke$sha": 1}},
        Doc(doc! {"_id": 1, "ke$sha": 1}),
    );
    // Creating or replacing a top-level `$` field is refused.
    check(doc! {"_id": 1}, doc! {"$set": {"$x": 1}}, Code(52));
    check(doc! {"_id": 1}, doc! {"$inc": {"$z": 1}}, Code(52));
    check(
        doc! {"_id": 1},
        doc! {"$set": {"$secret.agent.x": 1}},
        Code(52),
    );
    check(doc! {"_id": 1}, doc! {"$set": {"$reffoo": 1}}, Code(52));
    check(
        doc! {"_id": 1, "a": 1},
        doc! {"$rename": {"a": "$b"}},
        Code(52),
    );
    check(doc! {"_id": 1, "$x": 1}, doc! {"$set": {"$x": 2}}, Code(52));
    // An existing top-level `$` field may be left alone, removed, or reached through.
    check(
        doc! {"_id": 1, "$x": 1},
        doc! {"$set": {"a": 1}},
        Doc(doc! {"_id": 1, "$x": 1, "a": 1}),
    );
    check(
        doc! {"_id": 1, "$x": 1},
        doc! {"$unset": {"$x": 1}},
        Doc(doc! {"_id": 1}),
    );
    check(
        doc! {"_id": 1, "$x": {"a": 1}},
        doc! {"$set": {"$x.b": 2}},
        Doc(doc! {"_id": 1, "$x": {"a": 1, "b": 2}}),
    );
    // DBRef fields out of order are InvalidDBRef (55).
    check(doc! {"_id": 1}, doc! {"$set": {"$id": 1}}, Code(55));
    check(doc! {"_id": 1}, doc! {"$set": {"$db": "d"}}, Code(55));
    check(doc! {"_id": 1}, doc! {"$set": {"$ref": "c"}}, Code(55));
    // Replacement documents: top-level `$` refused, DBRef order allowed, nested free.
    check(doc! {"_id": 1}, doc! {"a": 1, "$x": 1}, Code(52));
    check(
        doc! {"_id": 1},
        doc! {"a": 1, "$ref": "c", "$id": 2},
        Doc(doc! {"_id": 1, "a": 1, "$ref": "c", "$id": 2}),
    );
    check(
        doc! {"_id": 1},
        doc! {"a": 1, "$ref": 5, "$id": 2},
        Code(55),
    );
    check(
        doc! {"_id": 1},
        doc! {"a": {"$x": 1}},
        Doc(doc! {"_id": 1, "a": {"$x": 1}}),
    );
    // The document an upsert inserts is validated as an insert: top-level `$` allowed.
    check_upsert(
        doc! {"date": "2021-07-07"},
        doc! {"$set": {"phone": 25, "$hotel": 320}},
        Doc(doc! {"date": "2021-07-07", "$hotel": 320, "phone": 25}),
    );
    check_upsert(
        doc! {"_id": 1},
        doc! {"a": 1, "$x": 1},
        Doc(doc! {"_id": 1, "a": 1, "$x": 1}),
    );
}

/// `{a: {a: … {a: leaf}}}` with `levels` embedded documents.
fn nested(levels: usize, leaf: Bson) -> Bson {
    let mut value = leaf;
    for _ in 0..levels {
        value = Bson::Document(doc! {"a": value});
    }
    value
}

fn nested_path(components: usize) -> String {
    vec!["a"; components].join(".")
}

#[test]
fn nesting_depth_cases() {
    // 100 embedded levels are storable (bson_canonical's count for inserts); 101 are not.
    let at_limit = nested(100, Bson::Int32(1));
    check(
        doc! {"_id": 1},
        doc! {"$set": {"x": at_limit.clone()}},
        Doc(doc! {"_id": 1, "x": at_limit}),
    );
    check(
        doc! {"_id": 1},
        doc! {"$set": {"x": nested(101, Bson::Int32(1))}},
        Code(15),
    );
    check(
        doc! {"_id": 1, "y": 1},
        doc! {"$set": {"x": nested(101, Bson::Int32(1))}, "$inc": {"y": 1}},
        Code(15),
    );
    // Depth counts the path as well as the value.
    check(
        doc! {"_id": 1},
        doc! {"$set": {nested_path(101): 1}},
        Doc(doc! {"_id": 1, "a": nested(100, Bson::Int32(1))}),
    );
    check(
        doc! {"_id": 1},
        doc! {"$set": {nested_path(102): 1}},
        Code(15),
    );
    check(
        doc! {"_id": 1},
        doc! {"$push": {"x": nested(100, Bson::Int32(1))}},
        Code(15),
    );
    check(
        doc! {"_id": 1},
        doc! {"$push": {"x": nested(99, Bson::Int32(1))}},
        Doc(doc! {"_id": 1, "x": [nested(99, Bson::Int32(1))]}),
    );
    let mut deep = Document::new();
    deep.insert("x", nested(101, Bson::Int32(1)));
    check(doc! {"_id": 1}, deep, Code(15));
}

#[test]
fn push_without_each_pushes_the_document() {
    // Without `$each` the argument is the value pushed, whatever its field names
    // (mongodb/mongo `src/mongo/db/update/push_node.cpp`: "No $each clause. We treat
    // the value of $push as the element to add to the array"), and MongoDB 5.0+
    // stores `$`-prefixed names below the top level.
    check(
        doc! {"_id": 1, "a": [1]},
        doc! {"$push": {"a": {"$slice": 2}}},
        Doc(doc! {"_id": 1, "a": [1, {"$slice": 2}]}),
    );
    check(
        doc! {"_id": 1},
        doc! {"$push": {"a": {"$sort": 1, "$position": 0}}},
        Doc(doc! {"_id": 1, "a": [{"$sort": 1, "$position": 0}]}),
    );
    // `$each` anywhere in the argument makes every field a modifier.
    check(
        doc! {"_id": 1, "a": [1]},
        doc! {"$push": {"a": {"$slice": 1, "$each": [2]}}},
        Doc(doc! {"_id": 1, "a": [1]}),
    );
    check(
        doc! {"_id": 1, "a": [1]},
        doc! {"$push": {"a": {"x": 1, "$each": [2]}}},
        Code(2),
    );
    check(doc! {"_id": 1}, doc! {"$push": {"$a": 1}}, Code(52));
}
