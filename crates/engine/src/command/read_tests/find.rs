//! find: results, options, batching and every refusal.

use super::{DB, batch, drain, engine, fails, field_values, insert, numbered, ok};
use crate::limits::BATCH_BYTES_MAX;
use bson::{Bson, doc, rawdoc};

fn ns_of(reply: &bson::Document) -> String {
    let cursor = reply.get_document("cursor").expect("cursor");
    cursor.get_str("ns").expect("ns").to_owned()
}

#[test]
fn find_returns_everything_in_natural_order_across_batches() {
    let (engine, _) = engine();
    insert(&engine, "c", numbered(0..250));
    let first = ok(&engine, rawdoc! { "find": "c" });
    let (docs, id) = batch(&first);
    assert_eq!(docs.len(), 101, "default first batch");
    assert_ne!(id, 0);
    assert_eq!(ns_of(&first), format!("{DB}.c"));
    let all = drain(&engine, "c", &first, None);
    let expected: Vec<Bson> = (0..250).map(Bson::Int32).collect();
    assert_eq!(field_values(&all, "_id"), expected);
    assert_eq!(engine.cursors.len(), 0, "an exhausted cursor is gone");
}

#[test]
fn find_filters_sorts_skips_limits_and_projects() {
    let (engine, _) = engine();
    insert(
        &engine,
        "c",
        (0..50).map(|i| rawdoc! { "_id": i, "g": i % 3, "k": 100 - i }),
    );
    let cmd = rawdoc! {
        "find": "c", "filter": { "g": 1 }, "sort": { "k": 1 }, "skip": 2, "limit": 5,
        "projection": { "k": 1, "_id": 0 }, "batchSize": 2,
    };
    let first = ok(&engine, cmd);
    assert_eq!(batch(&first).0.len(), 2);
    let all = drain(&engine, "c", &first, Some(2));
    // g == 1: i = 1, 4, ..., 49; k = 100 - i ascending means i descending: 49, 46, 43, ...
    let expected: Vec<_> = [43, 40, 37, 34, 31]
        .iter()
        .map(|i| doc! { "k": 100 - i })
        .collect();
    assert_eq!(all, expected);
}

#[test]
fn find_sort_with_limit_and_descending_keys() {
    let (engine, _) = engine();
    insert(
        &engine,
        "c",
        (0..30).map(|i| rawdoc! { "_id": i, "a": i % 7 }),
    );
    let reply = ok(
        &engine,
        rawdoc! { "find": "c", "sort": { "a": -1, "_id": 1 }, "limit": 4 },
    );
    let (docs, id) = batch(&reply);
    assert_eq!(id, 0, "a limit that is reached closes the cursor");
    assert_eq!(
        field_values(&docs, "_id"),
        vec![Bson::Int32(6), 13.into(), 20.into(), 27.into()]
    );
}

#[test]
fn find_on_a_missing_collection_is_empty_and_closed() {
    let (engine, _) = engine();
    // As mongod: a missing collection answers nothing without planning, so even a hint
    // naming no index is not refused there.
    let reply = ok(
        &engine,
        rawdoc! { "find": "nothing", "filter": { "a": 1 }, "hint": "a_1" },
    );
    assert_eq!(
        reply,
        doc! {
            "cursor": { "firstBatch": [], "id": 0i64, "ns": "test.nothing" }, "ok": 1.0,
        }
    );
}

#[test]
fn find_batch_size_zero_gives_an_empty_batch_and_an_open_cursor() {
    let (engine, _) = engine();
    insert(&engine, "c", numbered(0..5));
    let first = ok(&engine, rawdoc! { "find": "c", "batchSize": 0 });
    let (docs, id) = batch(&first);
    assert!(docs.is_empty());
    assert_ne!(id, 0);
    assert_eq!(drain(&engine, "c", &first, None).len(), 5);
}

#[test]
fn find_single_batch_closes_the_cursor() {
    let (engine, _) = engine();
    insert(&engine, "c", numbered(0..10));
    let reply = ok(
        &engine,
        rawdoc! { "find": "c", "batchSize": 3, "singleBatch": true },
    );
    let (docs, id) = batch(&reply);
    assert_eq!((docs.len(), id), (3, 0));
    assert_eq!(engine.cursors.len(), 0);
}

#[test]
fn find_that_fits_one_batch_closes_the_cursor() {
    let (engine, _) = engine();
    insert(&engine, "c", numbered(0..3));
    let (docs, id) = batch(&ok(&engine, rawdoc! { "find": "c", "batchSize": 3 }));
    assert_eq!(
        (docs.len(), id),
        (3, 0),
        "nothing is left, so no getMore is needed"
    );
    let (docs, id) = batch(&ok(
        &engine,
        rawdoc! { "find": "c", "filter": { "n": { "$gt": 5 } } },
    ));
    assert_eq!((docs.len(), id), (0, 0));
}

#[test]
fn find_by_id_uses_the_index_but_checks_the_whole_filter() {
    let (engine, _) = engine();
    insert(
        &engine,
        "c",
        (0..20).map(|i| rawdoc! { "_id": i, "a": i * 10 }),
    );
    let hit = ok(
        &engine,
        rawdoc! { "find": "c", "filter": { "_id": 7.0, "a": 70 } },
    );
    assert_eq!(batch(&hit), (vec![doc! { "_id": 7, "a": 70 }], 0));
    let miss = ok(
        &engine,
        rawdoc! { "find": "c", "filter": { "_id": 7, "a": 71 } },
    );
    assert_eq!(batch(&miss), (vec![], 0));
    let eq = ok(
        &engine,
        rawdoc! { "find": "c", "filter": { "_id": { "$eq": 3i64 } } },
    );
    assert_eq!(batch(&eq).0, vec![doc! { "_id": 3, "a": 30 }]);
    let absent = ok(&engine, rawdoc! { "find": "c", "filter": { "_id": 99 } });
    assert_eq!(batch(&absent), (vec![], 0));
    let skipped = ok(
        &engine,
        rawdoc! { "find": "c", "filter": { "_id": 3 }, "skip": 1 },
    );
    assert_eq!(batch(&skipped), (vec![], 0));
}

#[test]
fn find_natural_order_hints_and_sorts() {
    let (engine, _) = engine();
    insert(&engine, "c", numbered([5, 1, 9, 3]));
    let ids = |cmd| field_values(&batch(&ok(&engine, cmd)).0, "_id");
    let reversed = vec![Bson::Int32(3), 9.into(), 1.into(), 5.into()];
    assert_eq!(
        ids(rawdoc! { "find": "c", "hint": { "$natural": -1 } }),
        reversed
    );
    assert_eq!(
        ids(rawdoc! { "find": "c", "sort": { "$natural": -1 } }),
        reversed
    );
    let forward = vec![Bson::Int32(5), 1.into(), 9.into(), 3.into()];
    assert_eq!(
        ids(rawdoc! { "find": "c", "sort": { "$natural": 1 } }),
        forward
    );
    // A hinted index is walked, as mongod walks it: `_id` order.
    let by_id = vec![Bson::Int32(1), 3.into(), 5.into(), 9.into()];
    assert_eq!(ids(rawdoc! { "find": "c", "hint": "_id_" }), by_id);
    assert_eq!(ids(rawdoc! { "find": "c", "hint": { "_id": 1 } }), by_id);
    assert_eq!(
        ids(rawdoc! { "find": "c", "hint": { "$natural": -1 }, "limit": 2, "skip": 1 }),
        vec![Bson::Int32(9), 1.into()]
    );
}

#[test]
fn a_reverse_natural_scan_reads_each_batch_from_a_fresh_snapshot() {
    // `$natural: -1` is read backwards batch by batch, as the forward scan is read
    // forwards (it is not held whole, so it has no memory limit): a document deleted
    // before the scan reaches it is not returned, one updated meanwhile comes back as it
    // is now, one inserted meanwhile (a higher record id) is never met, and none twice.
    let (engine, _) = engine();
    for (coll, filter) in [("c", rawdoc! {}), ("d", rawdoc! { "_id": { "$lt": 90 } })] {
        insert(&engine, coll, numbered(0..100));
        let cmd = rawdoc! {
            "find": coll, "sort": { "$natural": -1 }, "batchSize": 10, "filter": filter,
        };
        let first = ok(&engine, cmd.clone());
        let (docs, id) = batch(&first);
        assert_ne!(id, 0);
        let top = docs[0].get_i32("_id").expect("_id");
        let delete = rawdoc! { "delete": coll, "deletes": [{ "q": { "_id": 5 }, "limit": 1 }] };
        ok(&engine, delete);
        let set = rawdoc! { "$set": { "seen": true } };
        let update = rawdoc! { "update": coll, "updates": [{ "q": { "_id": 7 }, "u": set }] };
        ok(&engine, update);
        ok(
            &engine,
            rawdoc! { "insert": coll, "documents": [{ "_id": 1000 }] },
        );
        let all = drain(&engine, coll, &first, Some(10));
        let got: Vec<i32> = all.iter().map(|d| d.get_i32("_id").expect("_id")).collect();
        let expected: Vec<i32> = (0..=top).rev().filter(|&i| i != 5).collect();
        assert_eq!(got, expected, "{cmd:?}");
        let seven = all.iter().find(|d| d.get_i32("_id").ok() == Some(7));
        assert_eq!(seven.and_then(|d| d.get_bool("seen").ok()), Some(true));
    }
}

#[test]
fn find_accepts_the_options_it_ignores() {
    let (engine, _) = engine();
    insert(&engine, "c", numbered(0..3));
    let cmd = rawdoc! {
        "find": "c", "filter": null, "sort": {}, "projection": null, "comment": "hi",
        "readConcern": { "level": "local" }, "allowDiskUse": true, "noCursorTimeout": false,
        "collation": { "locale": "simple" }, "let": {}, "allowPartialResults": true,
        "maxTimeMS": 1000, "returnKey": false, "tailable": false, "lsid": { "id": 1 },
    };
    assert_eq!(batch(&ok(&engine, cmd)).0.len(), 3);
}

#[test]
fn find_refuses_bad_and_unsupported_options() {
    let (engine, _) = engine();
    insert(&engine, "c", numbered(0..3));
    let cases = [
        (rawdoc! { "find": "c", "limit": -1 }, 51024),
        (rawdoc! { "find": "c", "skip": -2 }, 51024),
        (rawdoc! { "find": "c", "batchSize": -1 }, 51024),
        (rawdoc! { "find": "c", "limit": "x" }, 14),
        (rawdoc! { "find": "c", "skip": {} }, 14),
        (rawdoc! { "find": "c", "filter": 1 }, 14),
        (rawdoc! { "find": "c", "sort": [1] }, 14),
        (rawdoc! { "find": "c", "projection": "a" }, 14),
        (rawdoc! { "find": "c", "singleBatch": "yes" }, 14),
        (rawdoc! { "find": "c", "frobnicate": 1 }, 40415),
        (rawdoc! { "find": "c", "ntoreturn": 1 }, 40415),
        (rawdoc! { "find": "c", "hint": { "a": 1 } }, 2),
        (rawdoc! { "find": "c", "hint": "a_1" }, 2),
        (rawdoc! { "find": "c", "hint": { "_id": -1 } }, 2),
        (rawdoc! { "find": "c", "hint": 5 }, 9),
        (rawdoc! { "find": "c", "hint": { "$natural": 2 } }, 2),
        (
            rawdoc! { "find": "c", "sort": { "$natural": 1, "a": 1 } },
            2,
        ),
        (rawdoc! { "find": "c", "sort": { "a": 2 } }, 15975),
        (rawdoc! { "find": "c", "filter": { "$frob": 1 } }, 2),
        (
            rawdoc! { "find": "c", "projection": { "a": 1, "b": 0 } },
            31254,
        ),
        (rawdoc! { "find": "c", "returnKey": true }, 238),
        (rawdoc! { "find": "c", "showRecordId": true }, 238),
        // A collection that is not capped: mongod's BadValue (issue 22).
        (rawdoc! { "find": "c", "tailable": true }, 2),
        (
            rawdoc! { "find": "c", "tailable": true, "awaitData": true },
            2,
        ),
        (rawdoc! { "find": "c", "awaitData": true }, 9),
        (
            rawdoc! { "find": "c", "collation": { "locale": "fr" } },
            238,
        ),
        (rawdoc! { "find": "c", "let": { "x-y": 1 } }, 9),
        (rawdoc! { "find": "c", "let": { "NOW": 1 } }, 4_738_901),
        (
            rawdoc! { "find": "c", "let": { "x": 1 }, "filter": { "$expr": "$$y" } },
            17276,
        ),
        (rawdoc! { "find": "c", "min": { "_id": 1 } }, 51173),
        (rawdoc! { "find": "c", "collectionUUID": 1 }, 238),
        (rawdoc! { "find": "c", "maxTimeMS": -1 }, 51024),
        (rawdoc! { "find": "c", "maxTimeMS": "x" }, 2),
        (rawdoc! { "find": "c", "maxTimeMS": 1.5 }, 2),
        (rawdoc! { "find": "c", "maxTimeMS": 3_000_000_000i64 }, 2),
        (rawdoc! { "find": 1 }, 73),
        (rawdoc! { "find": "" }, 73),
        (rawdoc! { "find": "a$b" }, 73),
    ];
    for (cmd, code) in cases {
        fails(&engine, cmd, code);
    }
    assert_eq!(
        fails(&engine, rawdoc! { "find": "c", "limit": -1 }, 51024),
        "BSON field 'limit' value must be >= 0, actual value '-1'"
    );
    let hint = fails(&engine, rawdoc! { "find": "c", "hint": { "b": 1 } }, 2);
    assert!(
        hint.ends_with("hint provided does not correspond to an existing index"),
        "{hint}"
    );
    assert_eq!(
        fails(&engine, rawdoc! { "find": "c", "x": 1 }, 40415),
        "BSON field 'find.x' is an unknown field."
    );
}

#[test]
fn find_max_time_ms_expires_while_scanning() {
    let (engine, clock) = engine();
    insert(&engine, "c", numbered(0..500));
    clock.set_step(10);
    let message = fails(
        &engine,
        rawdoc! { "find": "c", "filter": { "n": -1 }, "maxTimeMS": 5 },
        50,
    );
    assert_eq!(message, "operation exceeded time limit");
    fails(
        &engine,
        rawdoc! { "find": "c", "sort": { "n": -1 }, "maxTimeMS": 5 },
        50,
    );
    // A generous budget is not spent by a small query, even on a moving clock.
    let reply = ok(
        &engine,
        rawdoc! { "find": "c", "batchSize": 10, "maxTimeMS": 100_000 },
    );
    assert_eq!(batch(&reply).0.len(), 10);
}

#[test]
fn find_time_budget_carries_over_to_get_more() {
    let (engine, clock) = engine();
    insert(&engine, "c", numbered(0..300));
    let first = ok(
        &engine,
        rawdoc! { "find": "c", "batchSize": 1, "maxTimeMS": 50 },
    );
    let (_, id) = batch(&first);
    clock.set_step(100);
    fails(&engine, rawdoc! { "getMore": id, "collection": "c" }, 50);
    clock.set_step(0);
    // A getMore that fails kills the cursor.
    fails(&engine, rawdoc! { "getMore": id, "collection": "c" }, 43);
}

#[test]
fn find_batches_stay_under_16_mib_however_large_the_documents() {
    let (engine, _) = engine();
    let big = "x".repeat(6 * 1024 * 1024);
    insert(
        &engine,
        "big",
        (0..5).map(|i| rawdoc! { "_id": i, "pad": big.as_str() }),
    );
    let first = ok(&engine, rawdoc! { "find": "big" });
    let mut seen = Vec::new();
    let mut reply = first;
    loop {
        let bytes = bson::RawDocumentBuf::try_from(&reply)
            .expect("encode")
            .as_bytes()
            .len();
        assert!(bytes <= BATCH_BYTES_MAX + 1024, "reply of {bytes} bytes");
        let (docs, id) = batch(&reply);
        assert!(
            !docs.is_empty() || id == 0,
            "every batch but a final one carries documents"
        );
        assert!(
            docs.len() <= 2,
            "three 6 MiB documents do not fit in 16 MiB"
        );
        seen.extend(field_values(&docs, "_id"));
        if id == 0 {
            break;
        }
        reply = ok(&engine, rawdoc! { "getMore": id, "collection": "big" });
    }
    assert_eq!(seen, (0..5).map(Bson::Int32).collect::<Vec<_>>());
}

#[test]
fn find_returns_a_document_near_16_mib_alone() {
    let (engine, _) = engine();
    let huge = "y".repeat(16 * 1024 * 1024 - 100);
    let small = "z".repeat(200);
    insert(
        &engine,
        "huge",
        [
            rawdoc! { "_id": 1, "pad": huge.as_str() },
            rawdoc! { "_id": 2, "pad": small.as_str() },
        ],
    );
    let first = ok(&engine, rawdoc! { "find": "huge" });
    let (docs, id) = batch(&first);
    assert_eq!(docs.len(), 1, "a batch always takes its first document");
    assert_ne!(id, 0);
    assert_eq!(drain(&engine, "huge", &first, None).len(), 2);
}

#[test]
fn blocking_sorts_refuse_to_buffer_more_than_100_mib() {
    let (engine, _) = engine();
    let pad = "s".repeat(4 * 1024 * 1024);
    insert(
        &engine,
        "s",
        (0..26).map(|i| rawdoc! { "_id": i, "n": 26 - i, "pad": pad.as_str() }),
    );
    let message = fails(&engine, rawdoc! { "find": "s", "sort": { "n": 1 } }, 292);
    assert!(
        message.contains("Sort exceeded memory limit of 104857600 bytes"),
        "{message}"
    );
    // allowDiskUse spills (read_tests::spill has the rest).
    let spilled = ok(
        &engine,
        rawdoc! {
            "find": "s", "sort": { "n": 1 }, "allowDiskUse": true, "projection": { "pad": 0 },
            "batchSize": 1000,
        },
    );
    let expected: Vec<Bson> = (1..=26).map(Bson::Int32).collect();
    assert_eq!(field_values(&batch(&spilled).0, "n"), expected);
    // A reverse natural scan is read backwards batch by batch, not held: no limit.
    let backwards = ok(
        &engine,
        rawdoc! { "find": "s", "hint": { "$natural": -1 }, "projection": { "n": 1 } },
    );
    let ns: Vec<Bson> = field_values(&drain(&engine, "s", &backwards, None), "n");
    assert_eq!(ns, (1..=26).map(Bson::Int32).collect::<Vec<_>>());
    let aggregate = rawdoc! { "aggregate": "s", "pipeline": [], "cursor": {} };
    fails(&engine, aggregate, 146);
    // With a limit only the top documents are kept, and a scan buffers nothing.
    let top = ok(
        &engine,
        rawdoc! { "find": "s", "sort": { "n": 1 }, "limit": 2, "projection": { "pad": 0 } },
    );
    assert_eq!(
        batch(&top).0,
        vec![doc! { "_id": 25, "n": 1 }, doc! { "_id": 24, "n": 2 }]
    );
    let scan = ok(&engine, rawdoc! { "find": "s", "projection": { "n": 1 } });
    assert_eq!(drain(&engine, "s", &scan, None).len(), 26);
}

#[test]
fn sort_by_id_with_a_limit_walks_the_index_and_agrees_with_the_blocking_sort() {
    // `{_id: ±1}` with a limit walks `_id_`; `{_id: ±1, g: 1}` sorts every document. `_id`
    // is unique, so both orders are the same: mixed types, inserted out of order, with
    // filters, skips and limits that run past the end.
    let (engine, _) = engine();
    let ids: Vec<Bson> = vec![
        Bson::Int32(5),
        Bson::String("b".into()),
        Bson::Double(2.5),
        Bson::Null,
        Bson::Int64(-3),
        Bson::Document(doc! { "x": 1 }),
        Bson::String("a".into()),
        Bson::Int32(40),
        Bson::Boolean(true),
        Bson::Double(-0.5),
        Bson::Int32(7),
        Bson::Document(doc! { "a": 9 }),
    ];
    let docs = ids.iter().enumerate().map(|(i, id)| {
        let i = i32::try_from(i).expect("small");
        let doc = doc! { "_id": id.clone(), "g": i % 3 };
        bson::RawDocumentBuf::try_from(&doc).expect("encodes")
    });
    insert(&engine, "c", docs);
    for direction in [1, -1] {
        for filter in [doc! {}, doc! { "g": 1 }, doc! { "g": { "$ne": 2 } }] {
            for (skip, limit) in [(0, 1), (0, 4), (2, 3), (5, 20), (11, 1), (13, 2)] {
                let fast = doc! {
                    "find": "c", "filter": filter.clone(), "sort": { "_id": direction },
                    "skip": skip, "limit": limit,
                };
                let slow = doc! {
                    "find": "c", "filter": filter.clone(),
                    "sort": { "_id": direction, "g": 1 }, "skip": skip, "limit": limit,
                };
                let run = |cmd: bson::Document| {
                    let reply = ok(&engine, bson::RawDocumentBuf::try_from(&cmd).expect("raw"));
                    drain(&engine, "c", &reply, None)
                };
                assert_eq!(run(fast), run(slow), "{direction} {filter} {skip} {limit}");
            }
        }
    }
}
