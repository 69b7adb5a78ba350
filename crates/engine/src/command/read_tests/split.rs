//! Scans split in record-id parts on several threads (`access::each_match_split`): the
//! parts together visit exactly what one scan of the same snapshot visits, in order, while
//! writers commit; and count and aggregate answer the same with several cores as with one.

use super::{Clock, DB, insert, ok};
use crate::command::access::{Reading, each_match, each_match_split};
use crate::command::cursor::Deadline;
use crate::host::Host;
use crate::plan::Access;
use crate::store::Namespace;
use crate::{Engine, EngineOptions, StartupOptions};
use bson::{RawDocumentBuf, rawdoc};
use query::Filter;
use std::cell::RefCell;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

/// An in-memory engine whose host reports `cores` CPUs.
fn engine_with(cores: u32) -> Engine {
    let mut clock = Clock::default();
    clock.facts.cores = cores;
    clock.advance(1_700_000_000_000);
    Engine::new(EngineOptions {
        host: Arc::new(clock) as Arc<dyn Host>,
        startup: StartupOptions::default(),
        connections_max: 10,
        ttl_interval: None,
    })
}

fn document(i: i32) -> RawDocumentBuf {
    let text = "x".repeat(usize::try_from(i % 7).unwrap_or(0) * 40);
    rawdoc! { "_id": i, "k": i % 13, "v": i % 101, "s": format!("s{}", i % 5), "t": text }
}

#[test]
fn split_scan_parts_visit_one_snapshot_in_order_under_concurrent_writes() {
    let engine = engine_with(1);
    insert(&engine, "c", (0..3_000).map(document));
    let ns = Namespace::new(DB, "c");
    let stop = AtomicBool::new(false);
    let filter = Filter::parse(&rawdoc! { "v": { "$lt": 60 } }).expect("filter");
    /// Stops the writer when the readers end, also by a failed assertion.
    struct Stop<'a>(&'a AtomicBool);
    impl Drop for Stop<'_> {
        fn drop(&mut self) {
            self.0.store(true, Ordering::SeqCst);
        }
    }
    std::thread::scope(|scope| {
        // A writer deleting and inserting all along (bounded, in case the readers hang).
        scope.spawn(|| {
            let mut next = 3_000;
            while !stop.load(Ordering::SeqCst) && next < 200_000 {
                let store = engine.store();
                let mut writer = store.write().expect("write");
                let victim = bson::raw::RawBsonRef::Int32(next - 2_990);
                if let Some((rid, _)) = writer.find_id(&ns, victim).expect("find_id") {
                    writer.delete(&ns, rid).expect("delete");
                }
                writer.insert(&ns, &document(next)).expect("insert");
                writer.commit().expect("commit");
                next += 1;
            }
        });
        let _stop = Stop(&stop);
        for round in 0..20_u64 {
            let store = engine.store();
            let reader = store.read().expect("read");
            let meta = reader.collection(&ns).expect("meta").expect("exists");
            let deadline = Deadline::start(engine.host.as_ref(), None);
            let failure = RefCell::new(None);
            let reading = Reading {
                reader: &reader,
                meta: &meta,
                ns: &ns,
                filter: Some(&filter),
                deadline: &deadline,
                failure: &failure,
                fields: None,
            };
            let mut whole = Vec::new();
            each_match(&reading, &Access::Collection, |rid, bytes| {
                whole.push((rid, bytes.to_vec()));
                Ok(true)
            })
            .expect("scan");
            // Parts of uneven sizes, some empty, one past the last record id.
            let cut = |n: u64| Some(meta.next_rid * n / 7 + round);
            let parts = [
                (None, cut(1)),
                (cut(1), cut(1)),
                (cut(1), cut(5)),
                (cut(5), cut(9)),
                (cut(9), None),
            ];
            let visit = |seen: &mut Vec<(u64, Vec<u8>)>, rid: u64, bytes: &[u8]| {
                seen.push((rid, bytes.to_vec()));
                Ok(true)
            };
            let split = each_match_split(&reading, &parts, vec![Vec::new(); parts.len()], &visit)
                .expect("split scan");
            let joined: Vec<_> = split.into_iter().flatten().collect();
            assert_eq!(joined, whole, "round {round}");
        }
    });
}

#[test]
fn count_and_aggregate_answer_the_same_on_several_cores() {
    // Above the size at which scans split (`SPLIT_DOCS_MIN`).
    let docs: Vec<RawDocumentBuf> = (0..20_000).map(document).collect();
    let one = engine_with(1);
    let four = engine_with(4);
    insert(&one, "c", docs.iter().cloned());
    insert(&four, "c", docs);
    let commands = [
        rawdoc! { "count": "c", "query": { "v": { "$gte": 10, "$lt": 50 } } },
        rawdoc! { "count": "c", "query": { "s": "s3" }, "skip": 7 },
        rawdoc! { "count": "c", "query": { "v": 5 }, "limit": 30 },
        rawdoc! { "aggregate": "c", "pipeline": [
            { "$match": { "v": { "$gte": 10 } } },
            { "$group": { "_id": 1, "n": { "$sum": 1 } } },
        ], "cursor": {} },
        rawdoc! { "aggregate": "c", "pipeline": [
            { "$group": {
                "_id": "$k", "n": { "$count": {} }, "lo": { "$min": "$v" }, "hi": { "$max": "$s" },
                "first": { "$first": "$_id" }, "last": { "$last": "$_id" }, "avg": { "$avg": 2 },
            } },
            { "$sort": { "_id": 1 } },
        ], "cursor": { "batchSize": 1000 } },
        // Groups in order of first appearance, no sort: the merge keeps the scan's order.
        rawdoc! { "aggregate": "c", "pipeline": [
            { "$group": { "_id": "$s", "first": { "$first": "$_id" } } },
        ], "cursor": {} },
        // Not mergeable (a double sum, a collected array): one thread, same answer.
        rawdoc! { "aggregate": "c", "pipeline": [
            { "$match": { "v": { "$lt": 3 } } },
            { "$group": { "_id": "$k", "total": { "$sum": "$v" }, "ids": { "$push": "$_id" } } },
        ], "cursor": { "batchSize": 1000 } },
    ];
    for cmd in commands {
        let (a, b) = (ok(&one, cmd.clone()), ok(&four, cmd.clone()));
        let strip = |mut d: bson::Document| {
            if let Ok(cursor) = d.get_document_mut("cursor") {
                cursor.remove("id");
            }
            d
        };
        assert_eq!(strip(a), strip(b), "{cmd:?}");
    }
    let reply = ok(&four, rawdoc! { "count": "c" });
    assert_eq!(reply.get_i32("n").ok(), Some(20_000));
}
