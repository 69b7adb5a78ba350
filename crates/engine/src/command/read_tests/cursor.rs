//! getMore and killCursors: the cursor lifecycle, reaping, concurrent writes and refusals.

use super::{batch, delete, drain, engine, fails, field_values, insert, numbered, ok};
use crate::limits::CURSOR_IDLE_TIMEOUT_MS;
use bson::{Bson, doc, rawdoc};
use std::collections::BTreeSet;

fn open(engine: &crate::Engine, coll: &str, batch_size: i32) -> i64 {
    let (_, id) = batch(&ok(
        engine,
        rawdoc! { "find": coll, "batchSize": batch_size },
    ));
    assert_ne!(id, 0);
    id
}

#[test]
fn get_more_continues_where_the_last_batch_stopped() {
    let (engine, _) = engine();
    insert(&engine, "c", numbered(0..10));
    let id = open(&engine, "c", 3);
    let reply = ok(
        &engine,
        rawdoc! { "getMore": id, "collection": "c", "batchSize": 4 },
    );
    assert_eq!(
        reply.get_document("cursor").expect("cursor"),
        &doc! {
            "nextBatch": (3..7).map(|i| doc! { "_id": i, "n": i }).collect::<Vec<_>>(),
            "id": id,
            "ns": "test.c",
        }
    );
    // batchSize 0 (or none) on getMore means "as many as fit".
    let rest = ok(
        &engine,
        rawdoc! { "getMore": id, "collection": "c", "batchSize": 0 },
    );
    let (docs, next) = batch(&rest);
    assert_eq!((docs.len(), next), (3, 0));
    let message = fails(&engine, rawdoc! { "getMore": id, "collection": "c" }, 43);
    assert_eq!(message, format!("cursor id {id} not found"));
}

#[test]
fn get_more_refuses_unknown_ids_and_other_namespaces() {
    let (engine, _) = engine();
    insert(&engine, "c", numbered(0..10));
    insert(&engine, "d", numbered(0..1));
    assert_eq!(
        fails(
            &engine,
            rawdoc! { "getMore": 1234i64, "collection": "c" },
            43
        ),
        "cursor id 1234 not found"
    );
    fails(&engine, rawdoc! { "getMore": 0i64, "collection": "c" }, 43);
    let id = open(&engine, "c", 2);
    let message = fails(&engine, rawdoc! { "getMore": id, "collection": "d" }, 13);
    assert_eq!(
        message,
        "Requested getMore on namespace 'test.d', but cursor belongs to a different namespace test.c"
    );
    // The refusal leaves the cursor open for its owner.
    let (docs, _) = batch(&ok(
        &engine,
        rawdoc! { "getMore": id, "collection": "c", "batchSize": 1 },
    ));
    assert_eq!(field_values(&docs, "_id"), vec![Bson::Int32(2)]);
}

#[test]
fn get_more_refuses_bad_arguments() {
    let (engine, _) = engine();
    insert(&engine, "c", numbered(0..10));
    let id = open(&engine, "c", 1);
    let cases = [
        (rawdoc! { "getMore": 5, "collection": "c" }, 14),
        (rawdoc! { "getMore": "x", "collection": "c" }, 14),
        (rawdoc! { "getMore": id }, 40414),
        (rawdoc! { "getMore": id, "collection": {} }, 14),
        (rawdoc! { "getMore": id, "collection": "" }, 73),
        (
            rawdoc! { "getMore": id, "collection": "c", "batchSize": -1 },
            51024,
        ),
        (
            rawdoc! { "getMore": id, "collection": "c", "batchSize": false },
            14,
        ),
        (
            rawdoc! { "getMore": id, "collection": "c", "frob": 1 },
            40415,
        ),
        (
            rawdoc! { "getMore": id, "collection": "c", "maxTimeMS": 10 },
            2,
        ),
    ];
    for (cmd, code) in cases {
        fails(&engine, cmd, code);
    }
    assert_eq!(
        fails(&engine, rawdoc! { "getMore": 5, "collection": "c" }, 14),
        "BSON field 'getMore.getMore' is the wrong type 'int', expected type 'long'"
    );
    assert_eq!(
        fails(&engine, rawdoc! { "getMore": id }, 40414),
        "BSON field 'getMore.collection' is missing but a required field"
    );
    // None of those refusals closed the cursor.
    let all = drain(
        &engine,
        "c",
        &ok(&engine, rawdoc! { "getMore": id, "collection": "c" }),
        None,
    );
    assert_eq!(all.len(), 9);
}

#[test]
fn kill_cursors_reports_killed_and_not_found() {
    let (engine, _) = engine();
    insert(&engine, "c", numbered(0..10));
    let first = open(&engine, "c", 1);
    let second = open(&engine, "c", 1);
    let reply = ok(
        &engine,
        rawdoc! { "killCursors": "c", "cursors": [first, 100_500i64] },
    );
    assert_eq!(
        reply,
        doc! {
            "cursorsKilled": [first], "cursorsNotFound": [100_500i64],
            "cursorsAlive": [], "cursorsUnknown": [], "ok": 1.0,
        }
    );
    fails(&engine, rawdoc! { "getMore": first, "collection": "c" }, 43);
    // A cursor is only killed through its own namespace.
    let other = ok(&engine, rawdoc! { "killCursors": "d", "cursors": [second] });
    assert_eq!(
        other.get_array("cursorsNotFound").expect("list"),
        &vec![Bson::Int64(second)]
    );
    let empty = ok(&engine, rawdoc! { "killCursors": "c", "cursors": [] });
    assert_eq!(empty.get_array("cursorsKilled").expect("list").len(), 0);
    ok(
        &engine,
        rawdoc! { "getMore": second, "collection": "c", "batchSize": 1 },
    );
}

#[test]
fn kill_cursors_refuses_bad_arguments() {
    let (engine, _) = engine();
    insert(&engine, "c", numbered(0..10));
    let id = open(&engine, "c", 1);
    assert_eq!(
        fails(
            &engine,
            rawdoc! { "killCursors": "c", "cursors": [id, 5] },
            14
        ),
        "BSON field 'killCursors.cursors.1' is the wrong type 'int', expected type 'long'"
    );
    fails(&engine, rawdoc! { "killCursors": "c" }, 40414);
    fails(&engine, rawdoc! { "killCursors": "c", "cursors": 5 }, 14);
    fails(&engine, rawdoc! { "killCursors": "", "cursors": [] }, 73);
    fails(&engine, rawdoc! { "killCursors": 3, "cursors": [] }, 73);
    fails(
        &engine,
        rawdoc! { "killCursors": "c", "cursors": [], "x": 1 },
        40415,
    );
    // The refused kill with a good id in it killed nothing.
    ok(
        &engine,
        rawdoc! { "getMore": id, "collection": "c", "batchSize": 1 },
    );
}

#[test]
fn idle_cursors_are_reaped_after_ten_minutes() {
    let (engine, clock) = engine();
    insert(&engine, "c", numbered(0..10));
    let idle = open(&engine, "c", 1);
    let busy = open(&engine, "c", 1);
    let pinned = {
        let reply = ok(
            &engine,
            rawdoc! { "find": "c", "batchSize": 1, "noCursorTimeout": true },
        );
        batch(&reply).1
    };
    clock.advance(CURSOR_IDLE_TIMEOUT_MS - 1000);
    ok(
        &engine,
        rawdoc! { "getMore": busy, "collection": "c", "batchSize": 1 },
    );
    clock.advance(2000);
    fails(&engine, rawdoc! { "getMore": idle, "collection": "c" }, 43);
    ok(
        &engine,
        rawdoc! { "getMore": busy, "collection": "c", "batchSize": 1 },
    );
    clock.advance(CURSOR_IDLE_TIMEOUT_MS * 3);
    fails(&engine, rawdoc! { "getMore": busy, "collection": "c" }, 43);
    ok(
        &engine,
        rawdoc! { "getMore": pinned, "collection": "c", "batchSize": 1 },
    );
    assert_eq!(engine.cursors.len(), 1);
}

#[test]
fn cursor_ids_are_distinct_nonzero_and_not_sequential() {
    let (engine, _) = engine();
    insert(&engine, "c", numbered(0..10));
    let ids: Vec<i64> = (0..50).map(|_| open(&engine, "c", 1)).collect();
    let distinct: BTreeSet<i64> = ids.iter().copied().collect();
    assert_eq!(distinct.len(), ids.len());
    assert!(ids.iter().all(|&id| id > 0));
    let steps_of_one = ids.windows(2).filter(|w| w[1] - w[0] == 1).count();
    assert_eq!(steps_of_one, 0, "{ids:?}");
}

/// Writes between getMores: documents deleted before the cursor's position and inserted
/// after it. A natural-order cursor resumes after the last record it examined, so nothing
/// comes back twice, deleted documents ahead of it never come, and new ones do.
#[test]
fn writes_between_get_mores_return_no_document_twice() {
    let (engine, _) = engine();
    insert(&engine, "c", numbered(0..20));
    let first = ok(&engine, rawdoc! { "find": "c", "batchSize": 5 });
    let mut seen = field_values(&batch(&first).0, "_id");
    let mut id = batch(&first).1;
    let mut next_new = 100;
    let mut round = 0;
    while id != 0 {
        // Behind the cursor: delete something it returned. Ahead: delete one, add two.
        if round < 3 {
            delete(&engine, "c", round);
            delete(&engine, "c", 19 - round);
            insert(&engine, "c", numbered([next_new, next_new + 1]));
            next_new += 2;
        }
        round += 1;
        let reply = ok(
            &engine,
            rawdoc! { "getMore": id, "collection": "c", "batchSize": 5 },
        );
        let (docs, next) = batch(&reply);
        seen.extend(field_values(&docs, "_id"));
        id = next;
    }
    let unique: BTreeSet<String> = seen.iter().map(ToString::to_string).collect();
    assert_eq!(
        unique.len(),
        seen.len(),
        "a document came back twice: {seen:?}"
    );
    for gone in [19, 18, 17] {
        assert!(
            !seen.contains(&Bson::Int32(gone)),
            "{gone} was deleted before it was reached"
        );
    }
    for new in 100..106 {
        assert!(
            seen.contains(&Bson::Int32(new)),
            "{new} was inserted ahead of the cursor"
        );
    }
}

#[test]
fn dropping_the_collection_kills_a_scan_cursor() {
    let (engine, _) = engine();
    insert(&engine, "c", numbered(0..10));
    let id = open(&engine, "c", 2);
    let ns = crate::store::Namespace::new(super::DB, "c");
    let store = engine.store();
    let mut writer = store.write().expect("write");
    writer.drop_collection(&ns).expect("drop");
    writer.commit().expect("commit");
    insert(&engine, "c", numbered(0..10));
    fails(&engine, rawdoc! { "getMore": id, "collection": "c" }, 175);
    fails(&engine, rawdoc! { "getMore": id, "collection": "c" }, 43);
}

#[test]
fn sorted_cursors_are_unaffected_by_later_writes() {
    let (engine, _) = engine();
    insert(&engine, "c", numbered(0..10));
    let first = ok(
        &engine,
        rawdoc! { "find": "c", "sort": { "n": -1 }, "batchSize": 3 },
    );
    delete(&engine, "c", 0);
    insert(&engine, "c", numbered([50]));
    let all = drain(&engine, "c", &first, Some(3));
    assert_eq!(
        field_values(&all, "_id"),
        (0..10).rev().map(Bson::Int32).collect::<Vec<_>>()
    );
}
