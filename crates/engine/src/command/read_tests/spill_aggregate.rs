//! aggregate's `allowDiskUse` (issue 17): a `$sort` over the memory limit (set small here
//! with setParameter `internalQueryMaxBlockingSortMemoryUsageBytes`) spills through
//! `crate::spill` and answers exactly what the in-memory sort answers, and an output over
//! the limit is held on disk for its cursor; without allowDiskUse the sort is 292 in
//! mongod's words for aggregate. The files are gone once the cursor is drained, killed or
//! reaped, and after a failure. Before this, the pipeline's `$sort` ignored the limit and
//! the whole output was held in memory, refused past it even with allowDiskUse.

use super::spill::{
    FaultyDir, engine_in, mixed, mixed_docs, set_group_limit, set_limit, spill_files,
};
use super::{batch, drain, engine, fails, insert, ok};
use crate::engine::Engine;
use crate::limits::CURSOR_IDLE_TIMEOUT_MS;
use bson::{Bson, Document, RawDocumentBuf, doc, rawdoc};
use proptest::prelude::*;
use std::sync::Arc;
use wal::{Fault, FaultKind, FaultyStorage, MemDir, MemStorage, Op};

/// The aggregate command of `pipeline` over `test.c`.
fn command(pipeline: &[Document], allow: bool, batch_size: i32) -> RawDocumentBuf {
    let stages: Vec<Bson> = pipeline.iter().cloned().map(Bson::Document).collect();
    let mut cmd = doc! {
        "aggregate": "c",
        "pipeline": stages,
        "cursor": { "batchSize": batch_size },
    };
    if allow {
        cmd.insert("allowDiskUse", true);
    }
    RawDocumentBuf::try_from(&cmd).expect("command")
}

/// Every output document of `pipeline`, drained in batches of 7.
fn aggregate_all(engine: &Engine, pipeline: &[Document], allow: bool) -> Vec<Document> {
    let first = ok(engine, command(pipeline, allow, 7));
    drain(engine, "c", &first, Some(7))
}

/// Pipelines whose `$sort`s (final, inside, after a `$group`, in a `$facet`) or whose
/// output alone pass a limit of 3000 bytes over `mixed_docs(400)`.
fn cases() -> Vec<Vec<Document>> {
    vec![
        vec![doc! { "$sort": { "k": 1 } }],
        vec![doc! { "$sort": { "k": -1 } }],
        vec![doc! { "$sort": { "k": 1, "_id": -1 } }],
        vec![doc! { "$sort": { "k": -1 } }, doc! { "$skip": 13 }],
        vec![
            doc! { "$sort": { "k": 1 } },
            doc! { "$skip": 5 },
            doc! { "$limit": 150 },
        ],
        // A skip after a limit shortens it (the limit is then not clamped again).
        vec![
            doc! { "$sort": { "k": -1 } },
            doc! { "$limit": 10 },
            doc! { "$skip": 3 },
        ],
        vec![
            doc! { "$sort": { "k": 1 } },
            doc! { "$limit": 390 },
            doc! { "$skip": 3 },
            doc! { "$limit": 200 },
        ],
        vec![
            doc! { "$match": { "_id": { "$gte": 100 } } },
            doc! { "$sort": { "k": 1 } },
            doc! { "$project": { "pad": 0 } },
        ],
        vec![
            doc! { "$sort": { "k": -1 } },
            doc! { "$addFields": { "x": "$pad" } },
            doc! { "$sort": { "pad": 1 } },
        ],
        vec![
            doc! { "$group": { "_id": "$pad", "ks": { "$push": "$k" } } },
            doc! { "$sort": { "ks": 1 } },
        ],
        vec![doc! { "$facet": { "a": [{ "$sort": { "k": 1 } }, { "$project": { "_id": 1 } }] } }],
        // No sort: only the output passes the limit, held on disk in output order.
        vec![doc! { "$addFields": { "y": 1 } }],
    ]
}

#[test]
fn a_spilled_aggregate_sort_answers_as_the_in_memory_sort() {
    let (engine, _) = engine();
    insert(&engine, "c", mixed_docs(400));
    let expected: Vec<Vec<Document>> = cases()
        .iter()
        .map(|p| aggregate_all(&engine, p, false))
        .collect();
    set_limit(&engine, 3000);
    for (pipeline, expected) in cases().iter().zip(&expected) {
        assert!(!expected.is_empty(), "{pipeline:?}");
        assert_eq!(
            &aggregate_all(&engine, pipeline, true),
            expected,
            "{pipeline:?}"
        );
        assert_eq!(spill_files(&engine), Vec::<String>::new(), "{pipeline:?}");
    }
}

#[test]
fn an_aggregate_sort_over_the_limit_without_allow_disk_use_is_292() {
    let (engine, _) = engine();
    insert(&engine, "c", mixed_docs(400));
    set_limit(&engine, 3000);
    let refused: &[&[Document]] = &[
        &[doc! { "$sort": { "k": 1 } }],
        &[
            doc! { "$sort": { "k": 1 } },
            doc! { "$project": { "pad": 0 } },
        ],
        &[doc! { "$facet": { "a": [{ "$sort": { "k": 1 } }] } }],
    ];
    for pipeline in refused {
        let message = fails(&engine, command(pipeline, false, 7), 292);
        assert_eq!(
            message,
            "PlanExecutor error during aggregation :: caused by :: Sort exceeded memory limit \
             of 3000 bytes, but did not opt in to external sorting.",
            "{pipeline:?}"
        );
    }
    let reply = super::run(&engine, command(&[doc! { "$sort": { "k": 1 } }], false, 7));
    assert_eq!(
        reply.get_str("codeName").ok(),
        Some("QueryExceededMemoryLimitNoDiskUseAllowed")
    );
    // A bound keeps only what the `$limit` uses: no spill, no refusal.
    let top = [doc! { "$sort": { "k": 1 } }, doc! { "$limit": 5 }];
    assert_eq!(aggregate_all(&engine, &top, false).len(), 5);
    // An output over the limit without a sort keeps its own refusal, which names the way out.
    let message = fails(&engine, command(&[doc! { "$match": {} }], false, 7), 146);
    assert!(message.contains("allowDiskUse: true"), "{message}");
    assert_eq!(spill_files(&engine), Vec::<String>::new());
}

#[test]
fn a_spilled_aggregate_cursor_removes_its_file_when_killed_or_reaped() {
    let (engine, clock) = engine();
    insert(&engine, "c", mixed_docs(300));
    set_limit(&engine, 2000);
    let pipelines: &[&[Document]] = &[
        &[doc! { "$sort": { "k": 1 } }],
        &[
            doc! { "$sort": { "k": 1 } },
            doc! { "$project": { "pad": 0 } },
        ],
        &[doc! { "$addFields": { "y": 1 } }],
    ];
    for pipeline in pipelines {
        let (_, id) = batch(&ok(&engine, command(pipeline, true, 3)));
        assert_ne!(id, 0);
        // One file: the cursor's (a sort inside the pipeline is done with its own).
        assert_eq!(spill_files(&engine).len(), 1, "{pipeline:?}");
        ok(&engine, rawdoc! { "killCursors": "c", "cursors": [id] });
        assert_eq!(spill_files(&engine), Vec::<String>::new(), "{pipeline:?}");
    }
    let (_, id) = batch(&ok(&engine, command(pipelines[0], true, 3)));
    assert_eq!(spill_files(&engine).len(), 1);
    clock.advance(CURSOR_IDLE_TIMEOUT_MS + 1000);
    fails(&engine, rawdoc! { "getMore": id, "collection": "c" }, 43);
    assert_eq!(spill_files(&engine), Vec::<String>::new());
}

/// `engine_in(dir)` with `mixed_docs(200)` in `test.c` and a limit of 1500 bytes.
fn faulty_engine(dir: &Arc<FaultyDir>) -> Engine {
    let engine = engine_in(dir);
    insert(&engine, "c", mixed_docs(200));
    set_limit(&engine, 1500);
    engine
}

#[test]
fn a_failed_aggregate_spill_write_is_a_clean_error_and_the_file_goes() {
    let dir: Arc<FaultyDir> = Arc::new(MemDir::with_factory(|| {
        FaultyStorage::new(MemStorage::default())
    }));
    let engine = faulty_engine(&dir);
    let file = dir.insert("t.mfdb.sort-1", FaultyStorage::new(MemStorage::default()));
    file.inject(Fault {
        op: Op::Write,
        nth: 2,
        kind: FaultKind::Io,
        sticky: true,
    });
    let pipeline = [
        doc! { "$sort": { "k": 1 } },
        doc! { "$project": { "pad": 0 } },
    ];
    let message = fails(&engine, command(&pipeline, true, 7), 39);
    assert!(
        message.contains("error writing to file \"t.mfdb.sort-1\""),
        "{message}"
    );
    assert_eq!(spill_files(&engine), Vec::<String>::new());
    assert!(!engine.store().is_failed());
    // The next aggregate spills to new files and answers in full.
    let first = ok(&engine, command(&pipeline, true, 7));
    assert_eq!(drain(&engine, "c", &first, None).len(), 200);
    assert_eq!(spill_files(&engine), Vec::<String>::new());
}

#[test]
fn a_failed_read_of_the_cursor_spill_ends_the_cursor_and_the_file_goes() {
    let dir: Arc<FaultyDir> = Arc::new(MemDir::with_factory(|| {
        FaultyStorage::new(MemStorage::default())
    }));
    // Runs of 20000 bytes read back through buffers of 4 KiB: getMores read the file.
    let engine = engine_in(&dir);
    insert(&engine, "c", mixed_docs(3000));
    set_limit(&engine, 20_000);
    let file = dir.insert("t.mfdb.sort-1", FaultyStorage::new(MemStorage::default()));
    let first = ok(&engine, command(&[doc! { "$sort": { "k": 1 } }], true, 2));
    let (_, id) = batch(&first);
    assert_ne!(id, 0);
    file.inject(Fault {
        op: Op::Read,
        nth: 1,
        kind: FaultKind::Io,
        sticky: true,
    });
    let message = fails(
        &engine,
        rawdoc! { "getMore": id, "collection": "c", "batchSize": 500 },
        39,
    );
    assert!(message.contains("error reading file"), "{message}");
    assert_eq!(spill_files(&engine), Vec::<String>::new());
    fails(&engine, rawdoc! { "getMore": id, "collection": "c" }, 43);
}

/// Random documents: `a` and `b` of mixed types (arrays, missing, ties), a varying pad.
fn random_docs(seed: i32, n: i32) -> Vec<RawDocumentBuf> {
    (0..n)
        .map(|i| {
            let mut d = doc! { "_id": i, "pad": "p".repeat(((i * 7 + seed) % 23) as usize) };
            if let Some(a) = mixed((i * 37 + seed) % 101) {
                d.insert("a", a);
            }
            if let Some(b) = mixed((i * 11 + seed * 3) % 29) {
                d.insert("b", b);
            }
            RawDocumentBuf::try_from(&d).expect("small")
        })
        .collect()
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 24, ..ProptestConfig::default() })]

    /// Spilled and in-memory aggregates agree on random mixed-type data: one or two sort
    /// fields in either direction, ties kept in input order, a skip and a limit, the sort
    /// final or followed by a stage (then the output is held on disk too).
    #[test]
    fn spilled_and_in_memory_aggregates_agree(
        seed in 0i32..1000,
        n in 1i32..250,
        fields in prop::collection::vec(
            (prop_oneof![Just("a"), Just("b")], prop_oneof![Just(1), Just(-1)]),
            1..3,
        ),
        skip in prop::option::of(0i64..40),
        limit in prop::option::of(1i64..60),
        after in any::<bool>(),
        limit_bytes in 300i32..4000,
    ) {
        let (engine, _) = engine();
        insert(&engine, "c", random_docs(seed, n));
        let mut spec = Document::new();
        for (field, direction) in fields {
            spec.entry(field.to_owned()).or_insert(Bson::Int32(direction));
        }
        let mut pipeline = vec![doc! { "$sort": spec }];
        if let Some(skip) = skip {
            pipeline.push(doc! { "$skip": skip });
        }
        if let Some(limit) = limit {
            pipeline.push(doc! { "$limit": limit });
        }
        if after {
            pipeline.push(doc! { "$addFields": { "z": "$_id" } });
        }
        let expected = aggregate_all(&engine, &pipeline, false);
        set_limit(&engine, limit_bytes);
        prop_assert_eq!(aggregate_all(&engine, &pipeline, true), expected);
        prop_assert!(spill_files(&engine).is_empty());
    }
}

/// `docs` in the order of their bytes: `$group`'s output order is unspecified.
fn as_set(mut docs: Vec<Document>) -> Vec<Document> {
    docs.sort_by_cached_key(|d| RawDocumentBuf::try_from(d).expect("encodes").into_bytes());
    docs
}

/// `$group`s with many groups: leading (fed from the stored bytes), after a stage, and
/// collecting values.
fn group_cases() -> Vec<Vec<Document>> {
    vec![
        vec![doc! { "$group": { "_id": "$_id", "n": { "$sum": 1 } } }],
        vec![
            doc! { "$match": { "_id": { "$gte": 50 } } },
            doc! { "$group": { "_id": { "$mod": ["$_id", 97] }, "ks": { "$push": "$k" } } },
        ],
        vec![
            doc! { "$addFields": { "g": { "$concat": ["$pad", "x"] } } },
            doc! { "$group": { "_id": { "g": "$g", "k": "$k" }, "first": { "$first": "$_id" },
            "last": { "$last": "$_id" }, "set": { "$addToSet": "$k" } } },
            doc! { "$project": { "first": 1, "last": 1, "n": { "$size": "$set" } } },
        ],
    ]
}

#[test]
fn a_group_over_its_limit_is_292_or_spills_with_allow_disk_use() {
    let (engine, _) = engine();
    insert(&engine, "c", mixed_docs(400));
    let expected: Vec<Vec<Document>> = group_cases()
        .iter()
        .map(|p| as_set(aggregate_all(&engine, p, false)))
        .collect();
    set_group_limit(&engine, 3000);
    // The sort of the groups that did not fit spills too.
    set_limit(&engine, 3000);
    for (pipeline, expected) in group_cases().iter().zip(&expected) {
        assert!(expected.len() > 50, "{pipeline:?}");
        let message = fails(&engine, command(pipeline, false, 7), 292);
        assert_eq!(
            message,
            "PlanExecutor error during aggregation :: caused by :: Exceeded memory limit for \
             $group, but didn't allow external sort. Pass allowDiskUse:true to opt in.",
            "{pipeline:?}"
        );
        let spilled = as_set(aggregate_all(&engine, pipeline, true));
        assert_eq!(&spilled, expected, "{pipeline:?}");
        assert_eq!(spill_files(&engine), Vec::<String>::new(), "{pipeline:?}");
    }
    let reply = super::run(&engine, command(&group_cases()[0], false, 7));
    assert_eq!(
        reply.get_str("codeName").ok(),
        Some("QueryExceededMemoryLimitNoDiskUseAllowed")
    );
    // getParameter reports the limit as mongod does, a long.
    let cmd = rawdoc! { "getParameter": 1, "internalDocumentSourceGroupMaxMemoryBytes": 1 };
    let reply = engine.run_command("admin", &cmd, &crate::ConnectionContext::default());
    assert_eq!(
        reply
            .get_i64("internalDocumentSourceGroupMaxMemoryBytes")
            .ok(),
        Some(3000)
    );
}

#[test]
fn a_spilling_group_goes_through_the_spill_file_and_a_failed_write_is_a_clean_error() {
    let dir: Arc<FaultyDir> = Arc::new(MemDir::with_factory(|| {
        FaultyStorage::new(MemStorage::default())
    }));
    let engine = faulty_engine(&dir);
    set_group_limit(&engine, 1500);
    let file = dir.insert("t.mfdb.sort-1", FaultyStorage::new(MemStorage::default()));
    file.inject(Fault {
        op: Op::Write,
        nth: 1,
        kind: FaultKind::Io,
        sticky: true,
    });
    let pipeline = [doc! { "$group": { "_id": "$_id", "pad": { "$first": "$pad" } } }];
    let message = fails(&engine, command(&pipeline, true, 7), 39);
    assert!(
        message.contains("error writing to file \"t.mfdb.sort-1\""),
        "{message}"
    );
    assert_eq!(spill_files(&engine), Vec::<String>::new());
    let first = ok(&engine, command(&pipeline, true, 7));
    assert_eq!(drain(&engine, "c", &first, None).len(), 200);
    assert_eq!(spill_files(&engine), Vec::<String>::new());
}

#[test]
fn skips_and_limits_after_a_final_sort_slice_the_sorted_output_in_their_order() {
    let (engine, _) = engine();
    insert(&engine, "c", mixed_docs(120));
    let sort = doc! { "$sort": { "k": -1, "_id": 1 } };
    let sorted = aggregate_all(&engine, std::slice::from_ref(&sort), false);
    assert_eq!(sorted.len(), 120);
    let tails: &[&[(&str, usize)]] = &[
        &[("$limit", 10), ("$skip", 3)],
        &[("$skip", 3), ("$limit", 10)],
        &[("$limit", 50), ("$skip", 7), ("$limit", 20), ("$skip", 5)],
        &[("$skip", 200)],
        &[("$limit", 5), ("$skip", 9)],
    ];
    for tail in tails {
        let mut pipeline = vec![sort.clone()];
        let mut expected: &[Document] = &sorted;
        for &(stage, n) in *tail {
            pipeline.push(doc! { stage: n as i64 });
            expected = match stage {
                "$skip" => &expected[n.min(expected.len())..],
                _ => &expected[..n.min(expected.len())],
            };
        }
        for allow in [false, true] {
            assert_eq!(
                aggregate_all(&engine, &pipeline, allow),
                expected,
                "{tail:?}"
            );
        }
    }
}
