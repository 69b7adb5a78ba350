//! `find` with `min`/`max` (issue 17): one range of the hinted index, in index order,
//! against a model that orders the documents' keys itself; mongod's refusals.

use super::{drain, engine, fails, insert, ok};
use crate::Engine;
use bson::{Bson, Document, RawDocumentBuf, rawdoc};
use std::cmp::Ordering;

/// `{_id: i, a, b}` for i in 0..120: `a` is `i % 7` or missing (every 11th), `b` is `i`
/// or null (every 13th); index `a_1_b_-1`.
fn data() -> (Engine, Vec<Document>) {
    let (engine, _clock) = engine();
    let mut docs = Vec::new();
    for i in 0..120 {
        let mut doc = bson::doc! { "_id": i };
        if i % 11 != 5 {
            doc.insert("a", i % 7);
        }
        doc.insert(
            "b",
            if i % 13 == 4 {
                Bson::Null
            } else {
                Bson::Int32(i)
            },
        );
        docs.push(doc);
    }
    let raw: Vec<RawDocumentBuf> = docs
        .iter()
        .map(|d| RawDocumentBuf::try_from(d).expect("raw"))
        .collect();
    insert(&engine, "c", raw);
    ok(
        &engine,
        rawdoc! { "createIndexes": "c", "indexes": [
            { "key": { "a": 1, "b": -1 }, "name": "a_1_b_-1" },
            { "key": { "h": "hashed" }, "name": "h_hashed" },
            { "key": { "$**": 1 }, "name": "$**_1" },
        ] },
    );
    (engine, docs)
}

/// A key field as the model orders it: null (missing too) before every number.
fn value(doc: &Document, field: &str) -> Option<i32> {
    doc.get_i32(field).ok()
}

/// The model's key order over `(a ascending, b descending)`.
fn key_order(x: (Option<i32>, Option<i32>), y: (Option<i32>, Option<i32>)) -> Ordering {
    x.0.cmp(&y.0).then(y.1.cmp(&x.1))
}

fn key(doc: &Document) -> (Option<i32>, Option<i32>) {
    (value(doc, "a"), value(doc, "b"))
}

fn bound(key: (Option<i32>, Option<i32>)) -> Document {
    let shown = |v: Option<i32>| v.map_or(Bson::Null, Bson::Int32);
    bson::doc! { "a": shown(key.0), "b": shown(key.1) }
}

/// The ids the model gives for `[min, max)`, in index order (ties by `_id`: record order).
fn model(
    docs: &[Document],
    min: Option<(Option<i32>, Option<i32>)>,
    max: Option<(Option<i32>, Option<i32>)>,
) -> Vec<i32> {
    let mut inside: Vec<&Document> = docs
        .iter()
        .filter(|d| min.is_none_or(|m| key_order(key(d), m) != Ordering::Less))
        .filter(|d| max.is_none_or(|m| key_order(key(d), m) == Ordering::Less))
        .collect();
    inside.sort_by(|x, y| {
        key_order(key(x), key(y)).then(x.get_i32("_id").unwrap().cmp(&y.get_i32("_id").unwrap()))
    });
    inside.iter().map(|d| d.get_i32("_id").unwrap()).collect()
}

fn ids(docs: &[Document]) -> Vec<i32> {
    docs.iter().map(|d| d.get_i32("_id").unwrap()).collect()
}

fn find(engine: &Engine, extra: Document) -> Vec<Document> {
    let mut cmd = bson::doc! { "find": "c", "hint": "a_1_b_-1", "batchSize": 7 };
    cmd.extend(extra);
    let cmd = RawDocumentBuf::try_from(&cmd).unwrap();
    let first = ok(engine, cmd);
    drain(engine, "c", &first, Some(5))
}

#[test]
fn min_max_walk_one_range_of_the_hinted_index_in_its_order() {
    let (engine, docs) = data();
    // Pseudo-random bounds over the keys' space, nulls included; min before max only.
    let mut seed = 0x2545_f491_u64;
    let mut next = |n: u64| {
        seed = seed
            .wrapping_mul(6_364_136_223_846_793_005)
            .wrapping_add(1_442_695_040_888_963_407);
        (seed >> 33) % n
    };
    let pick = |next: &mut dyn FnMut(u64) -> u64| {
        let a = match next(9) {
            0 => None,
            n => Some(i32::try_from(n).unwrap() - 2),
        };
        let b = match next(10) {
            0 => None,
            _ => Some(i32::try_from(next(130)).unwrap()),
        };
        (a, b)
    };
    let mut checked = 0;
    for _ in 0..60 {
        let lo = pick(&mut next);
        let hi = pick(&mut next);
        let use_min = next(4) != 0;
        let use_max = next(4) != 0;
        if !use_min && !use_max {
            continue;
        }
        if use_min && use_max && key_order(lo, hi) != Ordering::Less {
            continue;
        }
        let mut extra = Document::new();
        if use_min {
            extra.insert("min", bound(lo));
        }
        if use_max {
            extra.insert("max", bound(hi));
        }
        let expected = model(&docs, use_min.then_some(lo), use_max.then_some(hi));
        assert_eq!(ids(&find(&engine, extra.clone())), expected, "{extra}");
        checked += 1;
    }
    assert!(checked > 20, "only {checked} cases");
}

#[test]
fn the_filter_sort_skip_and_limit_still_apply() {
    let (engine, docs) = data();
    let (min, max) = ((Some(2), Some(60)), (Some(5), Some(40)));
    let inside = model(&docs, Some(min), Some(max));
    let filtered: Vec<i32> = inside.iter().copied().filter(|&i| i % 2 == 0).collect();
    let got = find(
        &engine,
        bson::doc! { "min": bound(min), "max": bound(max), "filter": { "_id": { "$mod": [2, 0] } } },
    );
    assert_eq!(ids(&got), filtered);
    let got = find(
        &engine,
        bson::doc! { "min": bound(min), "max": bound(max), "sort": { "_id": -1 }, "skip": 2, "limit": 5 },
    );
    let mut sorted = inside.clone();
    sorted.sort_unstable_by(|x, y| y.cmp(x));
    assert_eq!(ids(&got), sorted[2..7]);
    let got = find(
        &engine,
        bson::doc! { "min": bound(min), "max": bound(max), "skip": 3, "limit": 4 },
    );
    assert_eq!(ids(&got), inside[3..7]);
}

#[test]
fn the_id_index_takes_min_and_max_too() {
    let (engine, _docs) = data();
    let first = ok(
        &engine,
        rawdoc! { "find": "c", "hint": { "_id": 1 }, "min": { "_id": 10 }, "max": { "_id": 20 } },
    );
    assert_eq!(
        ids(&drain(&engine, "c", &first, None)),
        (10..20).collect::<Vec<_>>()
    );
}

#[test]
fn refusals_carry_mongods_codes() {
    let (engine, _docs) = data();
    let run = |cmd: RawDocumentBuf, code: i32| fails(&engine, cmd, code);
    let message = run(rawdoc! { "find": "c", "min": { "a": 1, "b": 1 } }, 51173);
    assert!(
        message.contains("a hint of which index to use must be provided"),
        "{message}"
    );
    run(
        rawdoc! { "find": "c", "hint": { "$natural": 1 }, "max": { "a": 1, "b": 1 } },
        291,
    );
    for wrong in [
        rawdoc! { "a": 1 },
        rawdoc! { "b": 1, "a": 1 },
        rawdoc! { "a": 1, "b": 1, "c": 1 },
    ] {
        run(
            rawdoc! { "find": "c", "hint": "a_1_b_-1", "min": wrong.clone() },
            51174,
        );
    }
    run(
        rawdoc! { "find": "c", "hint": "$**_1", "min": { "a": 1 } },
        51174,
    );
    run(
        rawdoc! { "find": "c", "hint": "a_1_b_-1", "min": { "a": 3, "b": 5 }, "max": { "a": 3, "b": 5 } },
        51175,
    );
    // b descends: {a: 3, b: 5} comes after {a: 3, b: 9}.
    run(
        rawdoc! { "find": "c", "hint": "a_1_b_-1", "min": { "a": 3, "b": 5 }, "max": { "a": 3, "b": 9 } },
        51175,
    );
    run(
        rawdoc! { "find": "c", "hint": "a_1_b_-1", "min": { "a": 3, "b": 5 }, "max": { "a": 4 } },
        51176,
    );
    run(
        rawdoc! { "find": "c", "hint": "h_hashed", "min": { "h": 1 } },
        238,
    );
    run(
        rawdoc! { "find": "c", "hint": "nope", "min": { "a": 1, "b": 1 } },
        2,
    );
    // Explain refuses what find refuses.
    run(
        rawdoc! { "explain": { "find": "c", "min": { "a": 1, "b": 1 } } },
        51173,
    );
}

#[test]
fn explain_shows_the_range_as_mongod_shows_a_simple_range() {
    let (engine, docs) = data();
    let (min, max) = (rawdoc! { "a": 2, "b": 50 }, rawdoc! { "a": 4, "b": 90 });
    let find = rawdoc! {
        "find": "c", "hint": "a_1_b_-1", "min": min.clone(), "max": max.clone(),
        "filter": { "_id": { "$mod": [2, 0] } },
    };
    let expected = drain(&engine, "c", &ok(&engine, find.clone()), None).len();
    // The model: documents whose key lies in [min, max) under (a asc, b desc).
    let lo = (Some(2), Some(50));
    let hi = (Some(4), Some(90));
    let in_range = docs
        .iter()
        .filter(|d| {
            key_order(key(d), lo) != Ordering::Less && key_order(key(d), hi) == Ordering::Less
        })
        .count();
    assert!(expected > 0 && in_range > expected);
    let explained = ok(
        &engine,
        rawdoc! { "explain": find, "verbosity": "executionStats" },
    );
    let winning = explained
        .get_document("queryPlanner")
        .and_then(|p| p.get_document("winningPlan"))
        .expect("winningPlan");
    assert_eq!(winning.get_str("stage").ok(), Some("FETCH"), "{winning:?}");
    let scan = winning.get_document("inputStage").expect("IXSCAN");
    assert_eq!(scan.get_str("stage").ok(), Some("IXSCAN"));
    assert_eq!(scan.get_str("indexName").ok(), Some("a_1_b_-1"));
    assert_eq!(
        scan.get_document("indexBounds").ok(),
        Some(&Document::new())
    );
    let stats = explained.get_document("executionStats").expect("stats");
    let number = |name: &str| {
        stats
            .get_i32(name)
            .map(i64::from)
            .or_else(|_| stats.get_i64(name))
    };
    assert_eq!(number("nReturned").ok(), Some(expected as i64));
    assert_eq!(number("totalKeysExamined").ok(), Some(in_range as i64));
    assert_eq!(number("totalDocsExamined").ok(), Some(in_range as i64));
}
