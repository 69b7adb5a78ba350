//! The external sort against the in-memory sort (the oracle: `SortSpec::sort`), and what
//! a damaged or failing spill file does.

use super::*;
use bson::{Bson, doc, rawdoc};
use proptest::prelude::*;
use wal::{Fault, FaultKind, FaultyStorage, MemDir, MemStorage, Op};

fn dir() -> Arc<MemDir<FaultyStorage<MemStorage>>> {
    Arc::new(MemDir::with_factory(|| {
        FaultyStorage::new(MemStorage::default())
    }))
}

fn target(dir: &Arc<MemDir<FaultyStorage<MemStorage>>>) -> SpillTo {
    SpillTo {
        dir: Arc::clone(dir) as Arc<dyn Dir>,
        name: spill_name("db.mfdb", 1),
    }
}

/// Sorts `docs` through a [`Sorter`] and reads every result back.
fn external(
    docs: &[RawDocumentBuf],
    spec: &SortSpec,
    keep: Option<usize>,
    bytes_max: usize,
    to: Option<SpillTo>,
) -> Result<(Vec<RawDocumentBuf>, SortStats), Error> {
    let mut sorter = Sorter::new(spec, keep, bytes_max, to, crate::spill::FIND_CONTEXT);
    for doc in docs {
        sorter.push(doc.clone())?;
    }
    let sorted = sorter.finish()?;
    let stats = sorted.stats();
    match sorted {
        Sorted::Memory(out, _) => Ok((out, stats)),
        Sorted::Spilled(mut merge) => {
            let mut out = Vec::new();
            while let Some(doc) = merge.next_document()? {
                out.push(doc);
            }
            Ok((out, stats))
        }
    }
}

fn value() -> impl Strategy<Value = Bson> {
    let scalar = prop_oneof![
        (-5i32..5).prop_map(Bson::Int32),
        (-5i64..5).prop_map(Bson::Int64),
        (-5.0f64..5.0).prop_map(|f| Bson::Double((f * 2.0).round() / 2.0)),
        "[ab]{0,2}".prop_map(Bson::String),
        any::<bool>().prop_map(Bson::Boolean),
        Just(Bson::Null),
        Just(Bson::MinKey),
        Just(Bson::MaxKey),
    ];
    prop_oneof![
        4 => scalar.clone(),
        1 => prop::collection::vec(scalar, 0..3).prop_map(Bson::Array),
    ]
}

fn documents() -> impl Strategy<Value = Vec<RawDocumentBuf>> {
    prop::collection::vec((prop::option::of(value()), value(), 0usize..40), 0..120).prop_map(
        |rows| {
            rows.into_iter()
                .enumerate()
                .map(|(i, (a, b, pad))| {
                    let mut d = doc! { "i": i as i32, "pad": "x".repeat(pad) };
                    if let Some(a) = a {
                        d.insert("a", a);
                    }
                    d.insert("b", b);
                    RawDocumentBuf::try_from(&d).expect("a small document")
                })
                .collect()
        },
    )
}

fn spec(a: i32, b: i32) -> SortSpec {
    SortSpec::parse(&rawdoc! { "a": a, "b": b }).expect("a valid sort")
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 200, ..ProptestConfig::default() })]

    /// Spilled or not, the order (ties included) and the bound equal the in-memory sort's.
    #[test]
    fn spilled_sort_equals_the_in_memory_sort(
        docs in documents(),
        a in prop_oneof![Just(1), Just(-1)],
        b in prop_oneof![Just(1), Just(-1)],
        keep in prop::option::of(0usize..30),
        bytes_max in 100usize..3000,
    ) {
        let spec = spec(a, b);
        let expected = spec.sort(docs.iter().cloned(), keep, |d| d.as_ref());
        let dir = dir();
        let (got, stats) = external(&docs, &spec, keep, bytes_max, Some(target(&dir)))
            .expect("nothing fails");
        prop_assert_eq!(&got, &expected);
        let total: usize = docs.iter().map(|d| d.as_bytes().len()).sum();
        if keep.is_none() && total > bytes_max {
            prop_assert!(stats.spills >= 1, "{total} bytes over {bytes_max}: {stats:?}");
        }
        prop_assert_eq!(stats.bytes_sorted, total as u64);
        prop_assert!(dir.names().is_empty(), "left {:?}", dir.names());
    }
}

fn numbered(n: i32, pad: usize) -> Vec<RawDocumentBuf> {
    (0..n)
        .map(|i| rawdoc! { "a": (i * 7919) % n, "pad": "p".repeat(pad) })
        .collect()
}

#[test]
fn over_the_limit_without_a_target_is_292() {
    let docs = numbered(100, 50);
    let error = external(&docs, &spec(1, 1), None, 1000, None).expect_err("over the limit");
    assert_eq!(error.code().code(), 292, "{error:?}");
    // A bound whose documents fit is no error.
    let (got, stats) = external(&docs, &spec(1, 1), Some(5), 1000, None).expect("fits");
    assert_eq!(got.len(), 5);
    assert_eq!(stats.spills, 0);
}

#[test]
fn a_spill_file_is_removed_when_the_merge_is_dropped_early() {
    let dir = dir();
    let mut sorter = Sorter::new(
        &spec(1, 1),
        None,
        500,
        Some(target(&dir)),
        crate::spill::FIND_CONTEXT,
    );
    for doc in numbered(200, 20) {
        sorter.push(doc).expect("written");
    }
    let Sorted::Spilled(mut merge) = sorter.finish().expect("merged") else {
        panic!("200 documents over 500 bytes spill");
    };
    assert_eq!(dir.names(), vec!["db.mfdb.sort-1".to_owned()]);
    merge.next_document().expect("read").expect("a document");
    drop(merge);
    assert!(dir.names().is_empty(), "left {:?}", dir.names());
}

#[test]
fn a_failed_spill_write_is_an_error_and_leaves_no_file() {
    for kind in [FaultKind::Io, FaultKind::NoSpace] {
        let dir = dir();
        let file = dir.insert("db.mfdb.sort-1", FaultyStorage::new(MemStorage::default()));
        file.inject(Fault {
            op: Op::Write,
            nth: 1,
            kind,
            sticky: true,
        });
        let result = external(
            &numbered(300, 30),
            &spec(1, 1),
            None,
            600,
            Some(target(&dir)),
        );
        let error = result.expect_err("the second write fails");
        let code = if kind == FaultKind::NoSpace {
            14031
        } else {
            39
        };
        assert_eq!(error.code().code(), code, "{kind:?}: {error:?}");
        assert!(dir.names().is_empty(), "{kind:?} left {:?}", dir.names());
    }
}

#[test]
fn short_spill_writes_are_continued() {
    let dir = dir();
    let file = dir.insert("db.mfdb.sort-1", FaultyStorage::new(MemStorage::default()));
    file.inject(Fault {
        op: Op::Write,
        nth: 0,
        kind: FaultKind::ShortWrite,
        sticky: true,
    });
    let docs = numbered(300, 30);
    let spec = spec(1, 1);
    let expected = spec.sort(docs.iter().cloned(), None, |d| d.as_ref());
    let (got, stats) = external(&docs, &spec, None, 600, Some(target(&dir))).expect("continued");
    assert!(stats.spills > 1);
    assert_eq!(got, expected);
    assert!(dir.names().is_empty(), "left {:?}", dir.names());
}

#[test]
fn a_failed_spill_read_is_an_error_and_leaves_no_file() {
    let dir = dir();
    let file = dir.insert("db.mfdb.sort-1", FaultyStorage::new(MemStorage::default()));
    file.inject(Fault {
        op: Op::Read,
        nth: 3,
        kind: FaultKind::Io,
        sticky: false,
    });
    let result = external(
        &numbered(300, 30),
        &spec(1, 1),
        None,
        600,
        Some(target(&dir)),
    );
    assert_eq!(result.expect_err("a read fails").code().code(), 39);
    assert!(dir.names().is_empty(), "left {:?}", dir.names());
}

#[test]
fn a_damaged_spill_file_is_290_not_a_wrong_document() {
    // Each byte of the first run's frames flipped in turn: every damage is caught.
    let docs = numbered(40, 10);
    let spec = spec(1, 1);
    let clean = external(&docs, &spec, None, 300, Some(target(&dir()))).expect("clean");
    for at in 0..120u64 {
        let dir = dir();
        let mut sorter = Sorter::new(
            &spec,
            None,
            300,
            Some(target(&dir)),
            crate::spill::FIND_CONTEXT,
        );
        for doc in &docs {
            sorter.push(doc.clone()).expect("written");
        }
        // Damaged after the runs are written and before any is read back.
        let file = dir.file("db.mfdb.sort-1").expect("the spill file");
        let mut byte = [0u8; 1];
        file.read_at(&mut byte, at).expect("read");
        file.write_at(&[byte[0] ^ 0x40], at).expect("write");
        let mut got = Vec::new();
        let outcome = match sorter.finish() {
            Ok(Sorted::Spilled(mut merge)) => loop {
                match merge.next_document() {
                    Ok(Some(doc)) => got.push(doc),
                    Ok(None) => break Ok(()),
                    Err(error) => break Err(error),
                }
            },
            Ok(Sorted::Memory(..)) => panic!("spills"),
            Err(error) => Err(error),
        };
        match outcome {
            Ok(()) => assert_eq!(got, clean.0, "damage at {at} went unseen"),
            Err(error) => assert_eq!(error.code().code(), 290, "at {at}: {error:?}"),
        }
        for doc in &got {
            assert!(clean.0.contains(doc), "at {at}: {doc:?} was never sorted");
        }
    }
}

#[test]
fn leftovers_are_removed_by_name() {
    let dir = dir();
    for name in [
        "db.mfdb.sort-3",
        "db.mfdb.sort-x",
        "db.mfdb",
        "other.sort-1",
        "db.mfdb.sort-",
    ] {
        dir.insert(name, FaultyStorage::new(MemStorage::default()));
    }
    assert_eq!(
        remove_leftovers(dir.as_ref(), "db.mfdb").expect("listed"),
        1
    );
    assert_eq!(
        dir.names(),
        ["db.mfdb", "db.mfdb.sort-", "db.mfdb.sort-x", "other.sort-1"]
    );
}

#[test]
fn arrays_sort_by_their_smallest_or_largest_element_when_spilled() {
    let docs: Vec<RawDocumentBuf> = [vec![5, 1], vec![3], vec![0, 9], vec![4, 4]]
        .iter()
        .cycle()
        .take(40)
        .map(|a| {
            let d = doc! { "a": a.clone(), "pad": "q".repeat(30) };
            RawDocumentBuf::try_from(&d).expect("small")
        })
        .collect();
    for direction in [1, -1] {
        let spec = SortSpec::parse(&rawdoc! { "a": direction }).expect("valid");
        let expected = spec.sort(docs.iter().cloned(), None, |d| d.as_ref());
        let (got, stats) = external(&docs, &spec, None, 400, Some(target(&dir()))).expect("ok");
        assert!(stats.spills > 1);
        assert_eq!(got, expected, "direction {direction}");
    }
}
