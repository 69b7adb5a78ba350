//! Data-driven cases: (document, update, expected document or error code).

use bson::{Bson, doc};

use crate::support::{Code, Doc, check, check_with, empty};

#[test]
fn set_cases() {
    check(
        doc! {"_id": 1},
        doc! {"$set": {"a": 1}},
        Doc(doc! {"_id": 1, "a": 1}),
    );
    check(
        doc! {"_id": 1, "a": 0},
        doc! {"$set": {"a": 1}},
        Doc(doc! {"_id": 1, "a": 1}),
    );
    check(
        doc! {"_id": 1, "a": 1},
        doc! {"$set": {"a": 1}},
        Doc(doc! {"_id": 1, "a": 1}),
    );
    check(
        doc! {"_id": 1, "a": 1},
        doc! {"$set": {"a": 1.0}},
        Doc(doc! {"_id": 1, "a": 1.0}),
    );
    check(
        doc! {"_id": 1, "b": 1, "a": 2},
        doc! {"$set": {"a": 3}},
        Doc(doc! {"_id": 1, "b": 1, "a": 3}),
    );
    check(
        doc! {"_id": 1},
        doc! {"$set": {"b": 1, "a": 2}},
        Doc(doc! {"_id": 1, "a": 2, "b": 1}),
    );
    check(
        doc! {"_id": 1},
        doc! {"$set": {"a.b.c": 1}},
        Doc(doc! {"_id": 1, "a": {"b": {"c": 1}}}),
    );
    check(
        doc! {"_id": 1, "a": {"x": 1}},
        doc! {"$set": {"a.b": 1}},
        Doc(doc! {"_id": 1, "a": {"x": 1, "b": 1}}),
    );
    check(doc! {"_id": 1, "a": 5}, doc! {"$set": {"a.b": 1}}, Code(28));
    check(
        doc! {"_id": 1, "a": "s"},
        doc! {"$set": {"a.b.c": 1}},
        Code(28),
    );
    check(
        doc! {"_id": 1, "a": null},
        doc! {"$set": {"a.b": 1}},
        Code(28),
    );
    check(
        doc! {"_id": 1, "a": [1, 2]},
        doc! {"$set": {"a.b": 1}},
        Code(28),
    );
    check(
        doc! {"_id": 1, "a": [1, 2]},
        doc! {"$set": {"a.1": 5}},
        Doc(doc! {"_id": 1, "a": [1, 5]}),
    );
    check(
        doc! {"_id": 1, "a": [1, 2]},
        doc! {"$set": {"a.4": 5}},
        Doc(doc! {"_id": 1, "a": [1, 2, null, null, 5]}),
    );
    check(
        doc! {"_id": 1, "a": []},
        doc! {"$set": {"a.0": 5}},
        Doc(doc! {"_id": 1, "a": [5]}),
    );
    check(
        doc! {"_id": 1, "a": [1]},
        doc! {"$set": {"a.2.b": 5}},
        Doc(doc! {"_id": 1, "a": [1, null, {"b": 5}]}),
    );
    check(
        doc! {"_id": 1, "a": [{"b": 1}]},
        doc! {"$set": {"a.0.b": 2}},
        Doc(doc! {"_id": 1, "a": [{"b": 2}]}),
    );
    check(
        doc! {"_id": 1, "a": [[1, 2], [3]]},
        doc! {"$set": {"a.0.1": 9}},
        Doc(doc! {"_id": 1, "a": [[1, 9], [3]]}),
    );
    check(
        doc! {"_id": 1, "a": [1]},
        doc! {"$set": {"a.0.b": 5}},
        Code(28),
    );
    check(
        doc! {"_id": 1, "a": [1]},
        doc! {"$set": {"a.01": 5}},
        Code(28),
    );
    check(
        doc! {"_id": 1, "a": {}},
        doc! {"$set": {"a.0": 5}},
        Doc(doc! {"_id": 1, "a": {"0": 5}}),
    );
    check(
        doc! {"_id": 1},
        doc! {"$set": {"a.0": 5}},
        Doc(doc! {"_id": 1, "a": {"0": 5}}),
    );
    check(
        doc! {"_id": 1},
        doc! {"$set": {"a": {"b": [1, {"c": 2}]}}},
        Doc(doc! {"_id": 1, "a": {"b": [1, {"c": 2}]}}),
    );
    check(
        doc! {"_id": 1},
        doc! {"$set": {"a.2": 1, "a.10": 2}},
        Doc(doc! {"_id": 1, "a": {"2": 1, "10": 2}}),
    );
    check(
        doc! {"_id": 1, "a": []},
        doc! {"$set": {"a.10": 2, "a.2": 1}},
        Doc(doc! {"_id": 1, "a": [null, null, 1, null, null, null, null, null, null, null, 2]}),
    );
    check(doc! {"_id": 1}, doc! {"$set": {}}, Doc(doc! {"_id": 1}));
    check(doc! {"_id": 1}, doc! {"$set": {"": 1}}, Code(56));
    check(doc! {"_id": 1}, doc! {"$set": {"a..b": 1}}, Code(56));
    check(doc! {"_id": 1}, doc! {"$set": {"a.": 1}}, Code(56));
    check(doc! {"_id": 1}, doc! {"$set": {".a": 1}}, Code(56));
    // MongoDB 5.0+ stores `$`-prefixed names below the top level
    // (jstests/core/write/update/updateh.js: `{$set: {'a.$b': 1}}` works).
    check(
        doc! {"_id": 1},
        doc! {"$set": {"a.$x": 1}},
        Doc(doc! {"_id": 1, "a": {"$x": 1}}),
    );
    check(doc! {"_id": 1}, doc! {"$set": {"$x": 1}}, Code(52));
    check(doc! {"_id": 1}, doc! {"$set": 1}, Code(9));
    check(doc! {"_id": 1}, doc! {"$set": [1]}, Code(9));
    check(doc! {"_id": 1}, doc! {"$foo": {"a": 1}}, Code(9));
    check(doc! {"_id": 1}, doc! {"$set": {"a": 1}, "b": 2}, Code(9));
    check(doc! {"_id": 1}, doc! {"$set": {"a": 1, "a.b": 2}}, Code(40));
    check(
        doc! {"_id": 1},
        doc! {"$set": {"a.b": 1}, "$inc": {"a": 2}},
        Code(40),
    );
    check(
        doc! {"_id": 1},
        doc! {"$set": {"a": 1}, "$unset": {"a": 1}},
        Code(40),
    );
    check(
        doc! {"_id": 1},
        doc! {"$set": {"a.b": 1, "a.c": 2}},
        Doc(doc! {"_id": 1, "a": {"b": 1, "c": 2}}),
    );
    check(
        doc! {"_id": 1},
        doc! {"$set": {"ab": 1, "a": 2}},
        Doc(doc! {"_id": 1, "a": 2, "ab": 1}),
    );
    check(doc! {"_id": 1}, doc! {"$set": {"_id": 2}}, Code(66));
    check(
        doc! {"_id": 1},
        doc! {"$set": {"_id": 1}},
        Doc(doc! {"_id": 1}),
    );
    check(
        doc! {"_id": {"x": 1}},
        doc! {"$set": {"_id.x": 2}},
        Code(66),
    );
    check(doc! {"_id": 1}, doc! {"$set": {"_id.x": 2}}, Code(28));
    check(doc! {"_id": 1}, doc! {"$unset": {"_id": 1}}, Code(66));
    check(
        doc! {"_id": 1, "a": [1, [2, 3]]},
        doc! {"$set": {"a.1.5": 0}},
        Doc(doc! {"_id": 1, "a": [1, [2, 3, null, null, null, 0]]}),
    );
}

#[test]
fn unset_cases() {
    check(
        doc! {"_id": 1, "a": 1, "b": 2},
        doc! {"$unset": {"a": ""}},
        Doc(doc! {"_id": 1, "b": 2}),
    );
    check(
        doc! {"_id": 1, "a": 1},
        doc! {"$unset": {"b": 1}},
        Doc(doc! {"_id": 1, "a": 1}),
    );
    check(
        doc! {"_id": 1, "a": {"b": 1, "c": 2}},
        doc! {"$unset": {"a.b": 1}},
        Doc(doc! {"_id": 1, "a": {"c": 2}}),
    );
    check(
        doc! {"_id": 1, "a": 5},
        doc! {"$unset": {"a.b": 1}},
        Doc(doc! {"_id": 1, "a": 5}),
    );
    check(
        doc! {"_id": 1, "a": [1, 2, 3]},
        doc! {"$unset": {"a.1": 1}},
        Doc(doc! {"_id": 1, "a": [1, null, 3]}),
    );
    check(
        doc! {"_id": 1, "a": [1, 2, 3]},
        doc! {"$unset": {"a.7": 1}},
        Doc(doc! {"_id": 1, "a": [1, 2, 3]}),
    );
    check(
        doc! {"_id": 1, "a": [1, 2, 3]},
        doc! {"$unset": {"a.x": 1}},
        Doc(doc! {"_id": 1, "a": [1, 2, 3]}),
    );
    check(
        doc! {"_id": 1, "a": [{"b": 1}]},
        doc! {"$unset": {"a.0.b": 1}},
        Doc(doc! {"_id": 1, "a": [{}]}),
    );
    check(
        doc! {"_id": 1},
        doc! {"$unset": {"a.b.c": 1}},
        Doc(doc! {"_id": 1}),
    );
    check(
        doc! {"_id": 1, "a": null},
        doc! {"$unset": {"a": 1}},
        Doc(doc! {"_id": 1}),
    );
    check(
        doc! {"_id": 1, "a": 1},
        doc! {"$unset": {"a": 1, "a.b": 1}},
        Code(40),
    );
}

#[test]
fn inc_cases() {
    check(
        doc! {"_id": 1, "a": 1},
        doc! {"$inc": {"a": 2}},
        Doc(doc! {"_id": 1, "a": 3}),
    );
    check(
        doc! {"_id": 1},
        doc! {"$inc": {"a": 2}},
        Doc(doc! {"_id": 1, "a": 2}),
    );
    check(
        doc! {"_id": 1},
        doc! {"$inc": {"a.b": 2_i64}},
        Doc(doc! {"_id": 1, "a": {"b": 2_i64}}),
    );
    check(
        doc! {"_id": 1, "a": 1},
        doc! {"$inc": {"a": 0.5}},
        Doc(doc! {"_id": 1, "a": 1.5}),
    );
    check(
        doc! {"_id": 1, "a": 1.5},
        doc! {"$inc": {"a": 1}},
        Doc(doc! {"_id": 1, "a": 2.5}),
    );
    check(
        doc! {"_id": 1, "a": 1},
        doc! {"$inc": {"a": 1_i64}},
        Doc(doc! {"_id": 1, "a": 2_i64}),
    );
    check(
        doc! {"_id": 1, "a": 1_i64},
        doc! {"$inc": {"a": 1}},
        Doc(doc! {"_id": 1, "a": 2_i64}),
    );
    check(
        doc! {"_id": 1, "a": i32::MAX},
        doc! {"$inc": {"a": 1}},
        Doc(doc! {"_id": 1, "a": i64::from(i32::MAX) + 1}),
    );
    check(
        doc! {"_id": 1, "a": i32::MIN},
        doc! {"$inc": {"a": -1}},
        Doc(doc! {"_id": 1, "a": i64::from(i32::MIN) - 1}),
    );
    check(
        doc! {"_id": 1, "a": i64::MAX},
        doc! {"$inc": {"a": 1}},
        Code(2),
    );
    check(
        doc! {"_id": 1, "a": 1},
        doc! {"$inc": {"a": 0}},
        Doc(doc! {"_id": 1, "a": 1}),
    );
    check(doc! {"_id": 1, "a": "x"}, doc! {"$inc": {"a": 1}}, Code(14));
    check(
        doc! {"_id": 1, "a": null},
        doc! {"$inc": {"a": 1}},
        Code(14),
    );
    check(doc! {"_id": 1, "a": [1]}, doc! {"$inc": {"a": 1}}, Code(14));
    check(doc! {"_id": 1, "a": 1}, doc! {"$inc": {"a": "1"}}, Code(14));
    check(
        doc! {"_id": 1, "a": 1},
        doc! {"$inc": {"a": null}},
        Code(14),
    );
    check(
        doc! {"_id": 1, "a": [1, 2]},
        doc! {"$inc": {"a.1": 10}},
        Doc(doc! {"_id": 1, "a": [1, 12]}),
    );
    check(
        doc! {"_id": 1, "a": [1, 2]},
        doc! {"$inc": {"a.3": 10}},
        Doc(doc! {"_id": 1, "a": [1, 2, null, 10]}),
    );
    check(doc! {"_id": 1, "a": 1}, doc! {"$inc": {"a.b": 1}}, Code(28));
    check(
        doc! {"_id": 1, "a": 1, "b": 1},
        doc! {"$inc": {"b": 1, "a": 1}},
        Doc(doc! {"_id": 1, "a": 2, "b": 2}),
    );
}

#[test]
fn mul_cases() {
    check(
        doc! {"_id": 1, "a": 3},
        doc! {"$mul": {"a": 2}},
        Doc(doc! {"_id": 1, "a": 6}),
    );
    check(
        doc! {"_id": 1},
        doc! {"$mul": {"a": 2}},
        Doc(doc! {"_id": 1, "a": 0}),
    );
    check(
        doc! {"_id": 1},
        doc! {"$mul": {"a": 2_i64}},
        Doc(doc! {"_id": 1, "a": 0_i64}),
    );
    check(
        doc! {"_id": 1},
        doc! {"$mul": {"a": 2.5}},
        Doc(doc! {"_id": 1, "a": 0.0}),
    );
    check(
        doc! {"_id": 1, "a": 3},
        doc! {"$mul": {"a": 1.5}},
        Doc(doc! {"_id": 1, "a": 4.5}),
    );
    check(
        doc! {"_id": 1, "a": 1 << 20},
        doc! {"$mul": {"a": 1 << 20}},
        Doc(doc! {"_id": 1, "a": 1_i64 << 40}),
    );
    check(
        doc! {"_id": 1, "a": i64::MAX},
        doc! {"$mul": {"a": 2}},
        Code(2),
    );
    check(doc! {"_id": 1, "a": "x"}, doc! {"$mul": {"a": 2}}, Code(14));
    check(doc! {"_id": 1, "a": 3}, doc! {"$mul": {"a": "2"}}, Code(14));
    check(
        doc! {"_id": 1, "a": 3},
        doc! {"$mul": {"a": 1}},
        Doc(doc! {"_id": 1, "a": 3}),
    );
}

#[test]
fn min_max_cases() {
    check(
        doc! {"_id": 1, "a": 5},
        doc! {"$min": {"a": 3}},
        Doc(doc! {"_id": 1, "a": 3}),
    );
    check(
        doc! {"_id": 1, "a": 5},
        doc! {"$min": {"a": 7}},
        Doc(doc! {"_id": 1, "a": 5}),
    );
    check(
        doc! {"_id": 1, "a": 5},
        doc! {"$max": {"a": 7}},
        Doc(doc! {"_id": 1, "a": 7}),
    );
    check(
        doc! {"_id": 1, "a": 5},
        doc! {"$max": {"a": 3}},
        Doc(doc! {"_id": 1, "a": 5}),
    );
    check(
        doc! {"_id": 1},
        doc! {"$min": {"a": 3}},
        Doc(doc! {"_id": 1, "a": 3}),
    );
    check(
        doc! {"_id": 1},
        doc! {"$max": {"a.b": 3}},
        Doc(doc! {"_id": 1, "a": {"b": 3}}),
    );
    check(
        doc! {"_id": 1, "a": 5},
        doc! {"$min": {"a": 5.0}},
        Doc(doc! {"_id": 1, "a": 5}),
    );
    check(
        doc! {"_id": 1, "a": 5},
        doc! {"$min": {"a": "x"}},
        Doc(doc! {"_id": 1, "a": 5}),
    );
    check(
        doc! {"_id": 1, "a": 5},
        doc! {"$max": {"a": "x"}},
        Doc(doc! {"_id": 1, "a": "x"}),
    );
    check(
        doc! {"_id": 1, "a": 5},
        doc! {"$min": {"a": null}},
        Doc(doc! {"_id": 1, "a": null}),
    );
    check(
        doc! {"_id": 1, "a": [1]},
        doc! {"$max": {"a": 1}},
        Doc(doc! {"_id": 1, "a": [1]}),
    );
    check(
        doc! {"_id": 1, "a": 5},
        doc! {"$max": {"a": 5.5}},
        Doc(doc! {"_id": 1, "a": 5.5}),
    );
}

#[test]
fn rename_cases() {
    check(
        doc! {"_id": 1, "a": 1, "b": 2},
        doc! {"$rename": {"a": "c"}},
        Doc(doc! {"_id": 1, "b": 2, "c": 1}),
    );
    check(
        doc! {"_id": 1, "a": 1, "b": 2},
        doc! {"$rename": {"a": "b"}},
        Doc(doc! {"_id": 1, "b": 1}),
    );
    check(
        doc! {"_id": 1, "b": 2},
        doc! {"$rename": {"a": "c"}},
        Doc(doc! {"_id": 1, "b": 2}),
    );
    check(
        doc! {"_id": 1, "a": {"b": 1}},
        doc! {"$rename": {"a.b": "c.d"}},
        Doc(doc! {"_id": 1, "a": {}, "c": {"d": 1}}),
    );
    check(
        doc! {"_id": 1, "a": [{"b": 1}]},
        doc! {"$rename": {"a.0.b": "c"}},
        Code(2),
    );
    check(
        doc! {"_id": 1, "a": 1, "c": [1]},
        doc! {"$rename": {"a": "c.0"}},
        Code(2),
    );
    check(
        doc! {"_id": 1, "a": 1},
        doc! {"$rename": {"a": "a"}},
        Code(2),
    );
    check(doc! {"_id": 1, "a": 1}, doc! {"$rename": {"a": 1}}, Code(2));
    check(
        doc! {"_id": 1, "a": 1},
        doc! {"$rename": {"a": "a.b"}},
        Code(2),
    );
    check(
        doc! {"_id": 1, "a": 1},
        doc! {"$rename": {"a.b": "a"}},
        Code(2),
    );
    check(
        doc! {"_id": 1, "a": [1]},
        doc! {"$rename": {"a.$": "b"}},
        Code(2),
    );
    check(
        doc! {"_id": 1, "a": 1},
        doc! {"$rename": {"a": "b.$"}},
        Code(2),
    );
    check(
        doc! {"_id": 1, "a": 1},
        doc! {"$rename": {"a": "b"}, "$set": {"b": 2}},
        Code(40),
    );
    check(
        doc! {"_id": 1, "a": 1},
        doc! {"$rename": {"a": "b"}, "$set": {"a": 2}},
        Code(40),
    );
    check(
        doc! {"_id": 1, "a": 1, "b": 5},
        doc! {"$rename": {"a": "b.c"}},
        Code(28),
    );
    check(
        doc! {"_id": 1, "a": [1, 2]},
        doc! {"$rename": {"a": "z"}},
        Doc(doc! {"_id": 1, "z": [1, 2]}),
    );
    check(
        doc! {"_id": 1, "a": 2},
        doc! {"$rename": {"a": "_id"}},
        Code(66),
    );
    check(
        doc! {"_id": 1, "a": 1},
        doc! {"$rename": {"a": ""}},
        Code(56),
    );
}

#[test]
fn current_date_and_set_on_insert_cases() {
    let now = bson::DateTime::from_millis(1_700_000_000_000);
    let ts = bson::Timestamp {
        time: 1_700_000_000,
        increment: 1,
    };
    check(
        doc! {"_id": 1},
        doc! {"$currentDate": {"a": true}},
        Doc(doc! {"_id": 1, "a": now}),
    );
    check(
        doc! {"_id": 1},
        doc! {"$currentDate": {"a": false}},
        Doc(doc! {"_id": 1, "a": now}),
    );
    check(
        doc! {"_id": 1},
        doc! {"$currentDate": {"a": {"$type": "date"}}},
        Doc(doc! {"_id": 1, "a": now}),
    );
    check(
        doc! {"_id": 1},
        doc! {"$currentDate": {"a.b": {"$type": "timestamp"}}},
        Doc(doc! {"_id": 1, "a": {"b": ts}}),
    );
    check(
        doc! {"_id": 1},
        doc! {"$currentDate": {"a": {"$type": "x"}}},
        Code(2),
    );
    check(
        doc! {"_id": 1},
        doc! {"$currentDate": {"a": {"x": 1}}},
        Code(2),
    );
    check(doc! {"_id": 1}, doc! {"$currentDate": {"a": 1}}, Code(2));
    check(doc! {"_id": 1}, doc! {"$currentDate": {"a": {}}}, Code(2));
    check(
        doc! {"_id": 1},
        doc! {"$setOnInsert": {"a": 1}},
        Doc(doc! {"_id": 1}),
    );
    check(
        doc! {"_id": 1},
        doc! {"$setOnInsert": {"a": 1}, "$set": {"a": 2}},
        Code(40),
    );
}

#[test]
fn push_cases() {
    check(
        doc! {"_id": 1, "a": [1]},
        doc! {"$push": {"a": 2}},
        Doc(doc! {"_id": 1, "a": [1, 2]}),
    );
    check(
        doc! {"_id": 1},
        doc! {"$push": {"a": 2}},
        Doc(doc! {"_id": 1, "a": [2]}),
    );
    check(
        doc! {"_id": 1},
        doc! {"$push": {"a.b": 2}},
        Doc(doc! {"_id": 1, "a": {"b": [2]}}),
    );
    check(
        doc! {"_id": 1, "a": [1]},
        doc! {"$push": {"a": [2, 3]}},
        Doc(doc! {"_id": 1, "a": [1, [2, 3]]}),
    );
    check(doc! {"_id": 1, "a": 1}, doc! {"$push": {"a": 2}}, Code(2));
    check(
        doc! {"_id": 1, "a": [1]},
        doc! {"$push": {"a": {"$each": [2, 3]}}},
        Doc(doc! {"_id": 1, "a": [1, 2, 3]}),
    );
    check(
        doc! {"_id": 1, "a": [1]},
        doc! {"$push": {"a": {"$each": []}}},
        Doc(doc! {"_id": 1, "a": [1]}),
    );
    check(
        doc! {"_id": 1},
        doc! {"$push": {"a": {"$each": []}}},
        Doc(doc! {"_id": 1, "a": []}),
    );
    check(
        doc! {"_id": 1, "a": [1]},
        doc! {"$push": {"a": {"$each": 2}}},
        Code(2),
    );
    check(
        doc! {"_id": 1, "a": [1, 2]},
        doc! {"$push": {"a": {"$each": [3], "$position": 0}}},
        Doc(doc! {"_id": 1, "a": [3, 1, 2]}),
    );
    check(
        doc! {"_id": 1, "a": [1, 2]},
        doc! {"$push": {"a": {"$each": [3], "$position": 1}}},
        Doc(doc! {"_id": 1, "a": [1, 3, 2]}),
    );
    check(
        doc! {"_id": 1, "a": [1, 2]},
        doc! {"$push": {"a": {"$each": [3], "$position": 9}}},
        Doc(doc! {"_id": 1, "a": [1, 2, 3]}),
    );
    check(
        doc! {"_id": 1, "a": [1, 2]},
        doc! {"$push": {"a": {"$each": [3], "$position": -1}}},
        Doc(doc! {"_id": 1, "a": [1, 3, 2]}),
    );
    check(
        doc! {"_id": 1, "a": [1, 2]},
        doc! {"$push": {"a": {"$each": [3], "$position": -9}}},
        Doc(doc! {"_id": 1, "a": [3, 1, 2]}),
    );
    check(
        doc! {"_id": 1, "a": [1, 2]},
        doc! {"$push": {"a": {"$each": [3], "$position": 0.5}}},
        Code(2),
    );
    check(
        doc! {"_id": 1, "a": [1, 2]},
        doc! {"$push": {"a": {"$each": [3], "$slice": 2}}},
        Doc(doc! {"_id": 1, "a": [1, 2]}),
    );
    check(
        doc! {"_id": 1, "a": [1, 2]},
        doc! {"$push": {"a": {"$each": [3], "$slice": -2}}},
        Doc(doc! {"_id": 1, "a": [2, 3]}),
    );
    check(
        doc! {"_id": 1, "a": [1, 2]},
        doc! {"$push": {"a": {"$each": [3], "$slice": 0}}},
        Doc(doc! {"_id": 1, "a": []}),
    );
    check(
        doc! {"_id": 1, "a": [1, 2]},
        doc! {"$push": {"a": {"$each": [3], "$slice": 10}}},
        Doc(doc! {"_id": 1, "a": [1, 2, 3]}),
    );
    check(
        doc! {"_id": 1, "a": [1, 2]},
        doc! {"$push": {"a": {"$each": [3], "$slice": "x"}}},
        Code(2),
    );
    check(
        doc! {"_id": 1, "a": [3, 1]},
        doc! {"$push": {"a": {"$each": [2], "$sort": 1}}},
        Doc(doc! {"_id": 1, "a": [1, 2, 3]}),
    );
    check(
        doc! {"_id": 1, "a": [3, 1]},
        doc! {"$push": {"a": {"$each": [2], "$sort": -1}}},
        Doc(doc! {"_id": 1, "a": [3, 2, 1]}),
    );
    check(
        doc! {"_id": 1, "a": [3, "x", 1]},
        doc! {"$push": {"a": {"$each": [], "$sort": 1}}},
        Doc(doc! {"_id": 1, "a": [1, 3, "x"]}),
    );
    check(
        doc! {"_id": 1, "a": [{"s": 3}, {"s": 1}]},
        doc! {"$push": {"a": {"$each": [{"s": 2}], "$sort": {"s": 1}}}},
        Doc(doc! {"_id": 1, "a": [{"s": 1}, {"s": 2}, {"s": 3}]}),
    );
    check(
        doc! {"_id": 1, "a": [{"s": 3}, {"s": 1}]},
        doc! {"$push": {"a": {"$each": [{"s": 2}], "$sort": {"s": -1}, "$slice": 2}}},
        Doc(doc! {"_id": 1, "a": [{"s": 3}, {"s": 2}]}),
    );
    check(
        doc! {"_id": 1, "a": [{"s": {"t": 2}}, {"s": {"t": 1}}]},
        doc! {"$push": {"a": {"$each": [], "$sort": {"s.t": 1}}}},
        Doc(doc! {"_id": 1, "a": [{"s": {"t": 1}}, {"s": {"t": 2}}]}),
    );
    check(
        doc! {"_id": 1, "a": [1]},
        doc! {"$push": {"a": {"$each": [2], "$sort": 2}}},
        Code(2),
    );
    check(
        doc! {"_id": 1, "a": [1]},
        doc! {"$push": {"a": {"$each": [2], "$sort": {}}}},
        Code(2),
    );
    check(
        doc! {"_id": 1, "a": [1]},
        doc! {"$push": {"a": {"$each": [2], "$sort": {"s": 2}}}},
        Code(2),
    );
    check(
        doc! {"_id": 1, "a": [1]},
        doc! {"$push": {"a": {"$each": [2], "$bogus": 1}}},
        Code(2),
    );
    check(
        doc! {"_id": 1, "a": [1]},
        doc! {"$push": {"a": {"b": 1}}},
        Doc(doc! {"_id": 1, "a": [1, {"b": 1}]}),
    );
    check(
        doc! {"_id": 1, "a": [1]},
        doc! {"$push": {"a": 2, "a.0": 1}},
        Code(40),
    );
    check(
        doc! {"_id": 1, "a": [[1]]},
        doc! {"$push": {"a.0": 2}},
        Doc(doc! {"_id": 1, "a": [[1, 2]]}),
    );
}

#[test]
fn add_to_set_cases() {
    check(
        doc! {"_id": 1, "a": [1]},
        doc! {"$addToSet": {"a": 2}},
        Doc(doc! {"_id": 1, "a": [1, 2]}),
    );
    check(
        doc! {"_id": 1, "a": [1]},
        doc! {"$addToSet": {"a": 1}},
        Doc(doc! {"_id": 1, "a": [1]}),
    );
    check(
        doc! {"_id": 1, "a": [1]},
        doc! {"$addToSet": {"a": 1.0}},
        Doc(doc! {"_id": 1, "a": [1]}),
    );
    check(
        doc! {"_id": 1},
        doc! {"$addToSet": {"a": 1}},
        Doc(doc! {"_id": 1, "a": [1]}),
    );
    check(
        doc! {"_id": 1, "a": [1]},
        doc! {"$addToSet": {"a": {"$each": [1, 2, 2, 3]}}},
        Doc(doc! {"_id": 1, "a": [1, 2, 3]}),
    );
    check(
        doc! {"_id": 1, "a": [1]},
        doc! {"$addToSet": {"a": [1, 2]}},
        Doc(doc! {"_id": 1, "a": [1, [1, 2]]}),
    );
    check(
        doc! {"_id": 1, "a": [{"b": 1, "c": 2}]},
        doc! {"$addToSet": {"a": {"c": 2, "b": 1}}},
        Doc(doc! {"_id": 1, "a": [{"b": 1, "c": 2}, {"c": 2, "b": 1}]}),
    );
    check(
        doc! {"_id": 1, "a": [{"b": 1}]},
        doc! {"$addToSet": {"a": {"b": 1}}},
        Doc(doc! {"_id": 1, "a": [{"b": 1}]}),
    );
    check(
        doc! {"_id": 1, "a": 5},
        doc! {"$addToSet": {"a": 1}},
        Code(2),
    );
    check(
        doc! {"_id": 1, "a": [1]},
        doc! {"$addToSet": {"a": {"$each": 1}}},
        Code(14),
    );
}

#[test]
fn pop_cases() {
    check(
        doc! {"_id": 1, "a": [1, 2, 3]},
        doc! {"$pop": {"a": 1}},
        Doc(doc! {"_id": 1, "a": [1, 2]}),
    );
    check(
        doc! {"_id": 1, "a": [1, 2, 3]},
        doc! {"$pop": {"a": -1}},
        Doc(doc! {"_id": 1, "a": [2, 3]}),
    );
    check(
        doc! {"_id": 1, "a": [1, 2, 3]},
        doc! {"$pop": {"a": 1.0}},
        Doc(doc! {"_id": 1, "a": [1, 2]}),
    );
    check(
        doc! {"_id": 1, "a": []},
        doc! {"$pop": {"a": 1}},
        Doc(doc! {"_id": 1, "a": []}),
    );
    check(
        doc! {"_id": 1},
        doc! {"$pop": {"a": 1}},
        Doc(doc! {"_id": 1}),
    );
    check(doc! {"_id": 1, "a": 5}, doc! {"$pop": {"a": 1}}, Code(14));
    check(doc! {"_id": 1, "a": [1]}, doc! {"$pop": {"a": 2}}, Code(9));
    check(
        doc! {"_id": 1, "a": [1]},
        doc! {"$pop": {"a": "x"}},
        Code(14),
    );
    check(
        doc! {"_id": 1, "a": {"b": [1, 2]}},
        doc! {"$pop": {"a.b": -1}},
        Doc(doc! {"_id": 1, "a": {"b": [2]}}),
    );
}

#[test]
fn pull_cases() {
    check(
        doc! {"_id": 1, "a": [1, 2, 1, 3]},
        doc! {"$pull": {"a": 1}},
        Doc(doc! {"_id": 1, "a": [2, 3]}),
    );
    check(
        doc! {"_id": 1, "a": [1, 2, 1.0, 3]},
        doc! {"$pull": {"a": 1}},
        Doc(doc! {"_id": 1, "a": [2, 3]}),
    );
    check(
        doc! {"_id": 1, "a": [1, 2, 3, 4]},
        doc! {"$pull": {"a": {"$gte": 3}}},
        Doc(doc! {"_id": 1, "a": [1, 2]}),
    );
    check(
        doc! {"_id": 1, "a": [1, "x", 3]},
        doc! {"$pull": {"a": {"$in": ["x", 3]}}},
        Doc(doc! {"_id": 1, "a": [1]}),
    );
    check(
        doc! {"_id": 1, "a": [{"b": 1, "c": 1}, {"b": 2}]},
        doc! {"$pull": {"a": {"b": 1}}},
        Doc(doc! {"_id": 1, "a": [{"b": 2}]}),
    );
    check(
        doc! {"_id": 1, "a": [{"b": 1}, {"b": 5}, 7]},
        doc! {"$pull": {"a": {"b": {"$gt": 2}}}},
        Doc(doc! {"_id": 1, "a": [{"b": 1}, 7]}),
    );
    check(
        doc! {"_id": 1, "a": [[1, 2], [3]]},
        doc! {"$pull": {"a": [1, 2]}},
        Doc(doc! {"_id": 1, "a": [[3]]}),
    );
    check(
        doc! {"_id": 1, "a": [1]},
        doc! {"$pull": {"a": 9}},
        Doc(doc! {"_id": 1, "a": [1]}),
    );
    check(
        doc! {"_id": 1},
        doc! {"$pull": {"a": 9}},
        Doc(doc! {"_id": 1}),
    );
    check(doc! {"_id": 1, "a": 5}, doc! {"$pull": {"a": 5}}, Code(2));
    check(
        doc! {"_id": 1, "a": [1]},
        doc! {"$pull": {"a": {"$bogus": 1}}},
        Code(2),
    );
    check(
        doc! {"_id": 1, "a": [{"b": 1}, {"b": 2}]},
        doc! {"$pull": {"a": {"$or": [{"b": 1}, {"b": 2}]}}},
        Doc(doc! {"_id": 1, "a": []}),
    );
    check(
        doc! {"_id": 1, "a": [1, 2, 3]},
        doc! {"$pullAll": {"a": [1, 3]}},
        Doc(doc! {"_id": 1, "a": [2]}),
    );
    check(
        doc! {"_id": 1, "a": [1, 2, 3]},
        doc! {"$pullAll": {"a": []}},
        Doc(doc! {"_id": 1, "a": [1, 2, 3]}),
    );
    check(
        doc! {"_id": 1, "a": [1, 2, 3]},
        doc! {"$pullAll": {"a": 1}},
        Code(2),
    );
    check(
        doc! {"_id": 1, "a": 1},
        doc! {"$pullAll": {"a": [1]}},
        Code(2),
    );
    check(
        doc! {"_id": 1},
        doc! {"$pullAll": {"a": [1]}},
        Doc(doc! {"_id": 1}),
    );
    check(
        doc! {"_id": 1, "a": [{"b": 1}]},
        doc! {"$pullAll": {"a": [{"b": 1}]}},
        Doc(doc! {"_id": 1, "a": []}),
    );
}

#[test]
fn bit_cases() {
    check(
        doc! {"_id": 1, "a": 13},
        doc! {"$bit": {"a": {"and": 10}}},
        Doc(doc! {"_id": 1, "a": 8}),
    );
    check(
        doc! {"_id": 1, "a": 13},
        doc! {"$bit": {"a": {"or": 5}}},
        Doc(doc! {"_id": 1, "a": 13}),
    );
    check(
        doc! {"_id": 1, "a": 13},
        doc! {"$bit": {"a": {"xor": 5}}},
        Doc(doc! {"_id": 1, "a": 8}),
    );
    check(
        doc! {"_id": 1, "a": 13},
        doc! {"$bit": {"a": {"or": 2_i64}}},
        Doc(doc! {"_id": 1, "a": 15_i64}),
    );
    check(
        doc! {"_id": 1},
        doc! {"$bit": {"a": {"or": 5}}},
        Doc(doc! {"_id": 1, "a": 5}),
    );
    check(
        doc! {"_id": 1, "a": 13},
        doc! {"$bit": {"a": {"and": 1.0}}},
        Code(2),
    );
    check(
        doc! {"_id": 1, "a": 13},
        doc! {"$bit": {"a": {"not": 1}}},
        Code(2),
    );
    check(doc! {"_id": 1, "a": 13}, doc! {"$bit": {"a": 1}}, Code(2));
    check(doc! {"_id": 1, "a": 13}, doc! {"$bit": {"a": {}}}, Code(2));
    check(
        doc! {"_id": 1, "a": 1.5},
        doc! {"$bit": {"a": {"and": 1}}},
        Code(2),
    );
    check(
        doc! {"_id": 1, "a": 12},
        doc! {"$bit": {"a": {"and": 10, "or": 1}}},
        Doc(doc! {"_id": 1, "a": 9}),
    );
}

#[test]
fn positional_cases() {
    let q = |d: bson::Document| Some(d);
    check_with(
        doc! {"_id": 1, "a": [1, 2, 3]},
        doc! {"$set": {"a.$": 9}},
        &[],
        q(doc! {"a": 2}),
        Doc(doc! {"_id": 1, "a": [1, 9, 3]}),
    );
    check_with(
        doc! {"_id": 1, "a": [{"b": 1}, {"b": 2}]},
        doc! {"$inc": {"a.$.b": 5}},
        &[],
        q(doc! {"a.b": 2}),
        Doc(doc! {"_id": 1, "a": [{"b": 1}, {"b": 7}]}),
    );
    check_with(
        doc! {"_id": 1, "a": [1, 2, 3]},
        doc! {"$set": {"a.$": 9}},
        &[],
        q(doc! {"_id": 1}),
        Code(2),
    );
    check_with(
        doc! {"_id": 1, "a": [1, 2, 3]},
        doc! {"$set": {"a.$": 9}},
        &[],
        None,
        Code(2),
    );
    check_with(
        doc! {"_id": 1, "a": [1]},
        doc! {"$set": {"a.$.$": 9}},
        &[],
        q(doc! {"a": 1}),
        Code(2),
    );
    check_with(
        doc! {"_id": 1, "a": [1]},
        doc! {"$set": {"$": 9}},
        &[],
        q(doc! {"a": 1}),
        Code(2),
    );
    check_with(
        doc! {"_id": 1, "a": [1, 2, 3]},
        doc! {"$set": {"a.$[]": 0}},
        &[],
        None,
        Doc(doc! {"_id": 1, "a": [0, 0, 0]}),
    );
    check_with(
        doc! {"_id": 1, "a": []},
        doc! {"$set": {"a.$[]": 0}},
        &[],
        None,
        Doc(doc! {"_id": 1, "a": []}),
    );
    check_with(
        doc! {"_id": 1},
        doc! {"$set": {"a.$[]": 0}},
        &[],
        None,
        Code(2),
    );
    check_with(
        doc! {"_id": 1, "a": 5},
        doc! {"$set": {"a.$[]": 0}},
        &[],
        None,
        Code(2),
    );
    check_with(
        doc! {"_id": 1, "a": [{"b": 1}, {"b": 2}]},
        doc! {"$inc": {"a.$[].b": 1}},
        &[],
        None,
        Doc(doc! {"_id": 1, "a": [{"b": 2}, {"b": 3}]}),
    );
    check_with(
        doc! {"_id": 1, "a": [[1, 2], [3]]},
        doc! {"$inc": {"a.$[].$[]": 1}},
        &[],
        None,
        Doc(doc! {"_id": 1, "a": [[2, 3], [4]]}),
    );
    check_with(
        doc! {"_id": 1, "a": [{"b": 1}, 5]},
        doc! {"$set": {"a.$[].b": 1}},
        &[],
        None,
        Code(28),
    );
    check_with(
        doc! {"_id": 1, "a": [1, 5, 9]},
        doc! {"$set": {"a.$[x]": 0}},
        &[doc! {"x": {"$gt": 4}}],
        None,
        Doc(doc! {"_id": 1, "a": [1, 0, 0]}),
    );
    check_with(
        doc! {"_id": 1, "a": [1, 5, 9]},
        doc! {"$set": {"a.$[x]": 0}},
        &[doc! {"x": {"$gt": 40}}],
        None,
        Doc(doc! {"_id": 1, "a": [1, 5, 9]}),
    );
    check_with(
        doc! {"_id": 1, "a": [{"b": 1}, {"b": 5}]},
        doc! {"$set": {"a.$[e].c": 0}},
        &[doc! {"e.b": 5}],
        None,
        Doc(doc! {"_id": 1, "a": [{"b": 1}, {"b": 5, "c": 0}]}),
    );
    check_with(
        doc! {"_id": 1, "a": [1]},
        doc! {"$set": {"a.$[x]": 0}},
        &[],
        None,
        Code(2),
    );
    check_with(
        doc! {"_id": 1, "a": [1]},
        doc! {"$set": {"a.0": 0}},
        &[doc! {"x": 1}],
        None,
        Code(9),
    );
    check_with(
        doc! {"_id": 1, "a": [1]},
        doc! {"$set": {"a.$[x]": 0}},
        &[doc! {"x": 1}, doc! {"x": 2}],
        None,
        Code(9),
    );
    check_with(
        doc! {"_id": 1, "a": [1]},
        doc! {"$set": {"a.$[X]": 0}},
        &[doc! {"X": 1}],
        None,
        Code(2),
    );
    check_with(
        doc! {"_id": 1, "a": [1]},
        doc! {"$set": {"a.$[x]": 0}},
        &[doc! {"x": 1, "y": 1}],
        None,
        Code(9),
    );
    check_with(
        doc! {"_id": 1, "a": [1]},
        doc! {"$set": {"a.$[x]": 0}},
        &[doc! {}],
        None,
        Code(9),
    );
    check_with(
        doc! {"_id": 1, "a": [[1, 7], [8]]},
        doc! {"$set": {"a.$[].$[y]": 0}},
        &[doc! {"y": {"$gte": 7}}],
        None,
        Doc(doc! {"_id": 1, "a": [[1, 0], [0]]}),
    );
    check_with(
        doc! {"_id": 1, "a": [1, 2]},
        doc! {"$set": {"a.$[x]": 0, "a.$[y]": 5}},
        &[doc! {"x": 1}, doc! {"y": 2}],
        None,
        Doc(doc! {"_id": 1, "a": [0, 5]}),
    );
    check_with(
        doc! {"_id": 1, "a": [1, 2]},
        doc! {"$set": {"a.$[]": 0, "a.0": 5}},
        &[],
        None,
        Doc(doc! {"_id": 1, "a": [5, 0]}),
    );
}

#[test]
fn replacement_cases() {
    check(
        doc! {"_id": 1, "a": 1},
        doc! {"b": 2},
        Doc(doc! {"_id": 1, "b": 2}),
    );
    check(
        doc! {"_id": 1, "a": 1},
        doc! {"b": 2, "_id": 1},
        Doc(doc! {"_id": 1, "b": 2}),
    );
    check(doc! {"_id": 1, "a": 1}, doc! {"_id": 2}, Code(66));
    check(doc! {"_id": 1, "a": 1}, doc! {}, Doc(doc! {"_id": 1}));
    check(
        doc! {"_id": 1, "a": 1},
        doc! {"a": 1},
        Doc(doc! {"_id": 1, "a": 1}),
    );
    check(
        doc! {"_id": 1, "a": 1},
        doc! {"a": 1, "$set": {"b": 1}},
        Code(52),
    );
    check(
        doc! {"_id": 1, "a": 1},
        doc! {"a": {"b.c": 1}},
        Doc(doc! {"_id": 1, "a": {"b.c": 1}}),
    );
    check(empty(), doc! {"a": 1}, Doc(doc! {"a": 1}));
}

#[test]
fn order_and_noop_cases() {
    check(
        doc! {"_id": 1, "z": 1, "a": 1},
        doc! {"$set": {"m": 1, "b": 1}},
        Doc(doc! {"_id": 1, "z": 1, "a": 1, "b": 1, "m": 1}),
    );
    check(
        doc! {"_id": 1, "a": {"z": 1}},
        doc! {"$set": {"a.y": 1, "a.x": 1}},
        Doc(doc! {"_id": 1, "a": {"z": 1, "x": 1, "y": 1}}),
    );
    check(
        doc! {"_id": 1, "a": 1.0},
        doc! {"$set": {"a": 1}},
        Doc(doc! {"_id": 1, "a": 1}),
    );
    check(
        doc! {"_id": 1, "a": Bson::Double(f64::NAN)},
        doc! {"$set": {"a": Bson::Double(f64::NAN)}},
        Doc(doc! {"_id": 1, "a": Bson::Double(f64::NAN)}),
    );
}
