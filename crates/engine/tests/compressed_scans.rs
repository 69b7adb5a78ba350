//! Scans of LZ4-compressed records decode only the leading part of each document that the
//! filter and the visit read (D53): count and a leading `$group`, on one thread and split
//! over four, answer exactly as over the same documents stored raw, and index builds
//! (one thread and split) give the same entries. The documents vary
//! field order, miss fields, repeat names at depth, and carry long compressible padding
//! between the fields read.

use crate::support::{ok, options};
use bson::{Bson, Document, RawDocumentBuf, doc, rawdoc};
use engine::Engine;
use std::sync::Arc;

fn document(i: i32) -> Document {
    let pad = "padding ".repeat(40 + (i % 7) as usize * 30);
    let mut d = doc! { "_id": i };
    // Field order varies: some documents have `k` after the padding.
    if i % 3 == 0 {
        d.insert("pad", pad.clone());
        d.insert("k", i % 10);
    } else {
        d.insert("k", i % 10);
        d.insert("pad", pad.clone());
    }
    if i % 4 != 0 {
        d.insert("g", format!("g{}", i % 5));
    }
    d.insert("sub", doc! { "k": -1, "v": i });
    if i % 11 == 0 {
        d.insert("late", true);
    }
    d
}

fn load(engine: &Engine, coll: &str, compressor: &str, n: i32) {
    let create = rawdoc! {
        "create": coll, "storageEngine": { "multiforadb": { "compressor": compressor } },
    };
    ok(engine, "app", create);
    let mut start = 0;
    while start < n {
        let end = (start + 2000).min(n);
        let docs: Vec<Bson> = (start..end).map(|i| document(i).into()).collect();
        let cmd = doc! { "insert": coll, "documents": docs };
        ok(engine, "app", RawDocumentBuf::try_from(&cmd).expect("bson"));
        start = end;
    }
}

fn queries() -> Vec<(Document, Vec<Document>)> {
    let filters = [
        doc! {},
        doc! { "k": { "$gte": 3, "$lt": 7 } },
        doc! { "g": "g2" },
        doc! { "g": { "$exists": false } },
        doc! { "late": true },
        doc! { "sub.v": { "$gt": 500 } },
        doc! { "$or": [{ "k": 1 }, { "late": true }] },
        doc! { "$expr": { "$gt": ["$k", 5] } },
        doc! { "pad": { "$regex": "^padding" }, "k": 2 },
    ];
    let groups = [
        doc! { "$group": { "_id": "$k", "n": { "$sum": 1 } } },
        doc! { "$group": { "_id": "$g", "total": { "$sum": "$sub.v" } } },
        doc! { "$group": { "_id": null, "late": { "$sum": { "$cond": ["$late", 1, 0] } } } },
        doc! { "$group": { "_id": "$k", "first": { "$first": "$$ROOT.sub" } } },
    ];
    let mut out = Vec::new();
    for filter in filters {
        out.push((filter.clone(), Vec::new()));
        for group in &groups {
            out.push((
                filter.clone(),
                vec![
                    doc! { "$match": filter.clone() },
                    group.clone(),
                    doc! { "$sort": { "_id": 1 } },
                ],
            ));
        }
    }
    out
}

fn answers(engine: &Engine, coll: &str) -> Vec<Bson> {
    let mut out = Vec::new();
    for (filter, pipeline) in queries() {
        let reply = if pipeline.is_empty() {
            let cmd = doc! { "count": coll, "query": filter };
            ok(engine, "app", RawDocumentBuf::try_from(&cmd).expect("bson"))
        } else {
            let cmd = doc! { "aggregate": coll, "pipeline": pipeline, "cursor": {} };
            let reply = ok(engine, "app", RawDocumentBuf::try_from(&cmd).expect("bson"));
            let batch = reply
                .get_document("cursor")
                .and_then(|c| c.get_array("firstBatch"));
            doc! { "batch": batch.expect("one batch").clone() }
        };
        out.push(Bson::Document(reply));
    }
    out
}

fn differential(cores: u32, n: i32) {
    let mut options = options();
    let mut host = engine::FixedHost::default();
    host.facts.cores = cores;
    options.host = Arc::new(host);
    let engine = Engine::new(options);
    load(&engine, "raw", "none", n);
    load(&engine, "packed", "lz4", n);
    let stats = ok(&engine, "app", rawdoc! { "collStats": "packed" });
    let section = stats.get_document("multiforadb").expect("section");
    assert_eq!(section.get_str("compressor").expect("compressor"), "lz4");
    let (raw, packed) = (answers(&engine, "raw"), answers(&engine, "packed"));
    for (i, (a, b)) in raw.iter().zip(&packed).enumerate() {
        assert_eq!(a, b, "query {i}: {:?}", queries()[i]);
    }
}

#[test]
fn compressed_scans_answer_as_raw_ones_on_one_thread() {
    differential(1, 600);
}

#[test]
fn compressed_scans_answer_as_raw_ones_split_over_four() {
    // 16,384 documents is where a scan splits (command::access).
    differential(4, 17_000);
}

/// Index builds read only the leading part of each LZ4 record that holds the key fields:
/// each index, built over the same documents stored raw and compressed, walks to the same
/// documents in the same order (a hinted find returns them in index order).
fn index_differential(n: i32) {
    let engine = Engine::new(options());
    load(&engine, "raw", "none", n);
    load(&engine, "packed", "lz4", n);
    let indexes = [
        doc! { "key": { "k": 1 }, "name": "k" },
        doc! { "key": { "g": -1, "k": 1 }, "name": "g_k" },
        doc! { "key": { "sub.v": 1 }, "name": "sub_v" },
        doc! { "key": { "late": 1 }, "name": "late", "sparse": true },
        doc! { "key": { "k": 1, "_id": 1 }, "name": "partial",
        "partialFilterExpression": { "g": { "$exists": true } } },
        doc! { "key": { "g": "hashed" }, "name": "hashed" },
        doc! { "key": { "pad": 1 }, "name": "pad" },
    ];
    let mut walks = Vec::new();
    for coll in ["raw", "packed"] {
        let cmd = doc! { "createIndexes": coll, "indexes": indexes.to_vec() };
        ok(
            &engine,
            "app",
            RawDocumentBuf::try_from(&cmd).expect("bson"),
        );
        let mut walk = Vec::new();
        for index in &indexes {
            let name = index.get_str("name").expect("name");
            let filter = if name == "partial" {
                doc! { "g": { "$exists": true } }
            } else {
                doc! {}
            };
            let cmd = doc! {
                "find": coll, "filter": filter, "hint": name,
                "projection": { "_id": 1 }, "batchSize": 100_000,
            };
            let reply = ok(
                &engine,
                "app",
                RawDocumentBuf::try_from(&cmd).expect("bson"),
            );
            let batch = reply
                .get_document("cursor")
                .and_then(|c| c.get_array("firstBatch"))
                .expect("one batch")
                .clone();
            walk.push((name.to_owned(), batch));
        }
        let valid = ok(&engine, "app", rawdoc! { "validate": coll, "full": true });
        assert!(valid.get_bool("valid").expect("valid"), "{coll}: {valid:?}");
        walks.push(walk);
    }
    for ((name, raw), (_, packed)) in walks[0].iter().zip(&walks[1]) {
        assert!(!raw.is_empty(), "{name}: the index walks to documents");
        assert_eq!(raw, packed, "index {name}");
    }
}

#[test]
fn index_builds_over_compressed_records_equal_raw_ones() {
    index_differential(600);
}

#[test]
fn split_index_builds_over_compressed_records_equal_raw_ones() {
    // Past `PARALLEL_SCAN_RECORDS_MIN` (4,096): the build's scan splits over the cores.
    index_differential(9_000);
}
