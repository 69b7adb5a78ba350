//! When the disk fails (the failure model in docs/ARCHITECTURE.md): an error reply means
//! "not applied", an unknown outcome is never a definite error, no reader sees a write
//! whose reply was an error, every acknowledged write survives, and a full disk is
//! survived: reads go on, writes are refused with OutOfDiskSpace (14031) and resume once
//! space is free. Driven through a model disk under the storage seam.

use crate::support::options;
use bson::{Document, RawDocumentBuf, rawdoc};
use engine::store::StoreOptions;
use engine::{ConnectionContext, Engine, EngineOptions};
use parking_lot::Mutex;
use std::collections::BTreeSet;
use std::io;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::{Duration, Instant};
use wal::{MemDir, MemStorage, Storage};

/// A device every file of a directory lives on: a capacity in bytes (growing a file
/// past it fails with ENOSPC, writing nothing), and syncs that can be made to fail (EIO).
#[derive(Default)]
struct Device {
    capacity: AtomicU64,
    used: AtomicU64,
    fail_syncs: AtomicBool,
}

impl Device {
    fn grow(&self, by: u64) -> io::Result<()> {
        let mut used = self.used.load(Ordering::SeqCst);
        loop {
            if used + by > self.capacity.load(Ordering::SeqCst) {
                return Err(io::Error::from_raw_os_error(28));
            }
            match self
                .used
                .compare_exchange(used, used + by, Ordering::SeqCst, Ordering::SeqCst)
            {
                Ok(_) => return Ok(()),
                Err(now) => used = now,
            }
        }
    }
}

#[derive(Debug)]
struct DeviceFile {
    inner: MemStorage,
    device: Arc<DeviceRef>,
    len: Mutex<u64>,
}

struct DeviceRef(Arc<Device>);

impl std::fmt::Debug for DeviceRef {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Device")
    }
}

impl DeviceFile {
    fn resize(&self, new_len: u64) -> io::Result<()> {
        let mut len = self.len.lock();
        if new_len > *len {
            self.device.0.grow(new_len - *len)?;
        } else {
            self.device
                .0
                .used
                .fetch_sub(*len - new_len, Ordering::SeqCst);
        }
        *len = new_len;
        Ok(())
    }
}

impl Drop for DeviceFile {
    fn drop(&mut self) {
        let len = *self.len.lock();
        self.device.0.used.fetch_sub(len, Ordering::SeqCst);
    }
}

impl Storage for DeviceFile {
    fn read_at(&self, buf: &mut [u8], offset: u64) -> io::Result<usize> {
        self.inner.read_at(buf, offset)
    }
    fn write_at(&self, buf: &[u8], offset: u64) -> io::Result<usize> {
        let end = offset + buf.len() as u64;
        if end > *self.len.lock() {
            self.resize(end)?;
        }
        self.inner.write_at(buf, offset)
    }
    fn sync(&self) -> io::Result<()> {
        if self.device.0.fail_syncs.load(Ordering::SeqCst) {
            return Err(io::Error::from_raw_os_error(5));
        }
        self.inner.sync()
    }
    fn len(&self) -> io::Result<u64> {
        self.inner.len()
    }
    fn set_len(&self, len: u64) -> io::Result<()> {
        self.resize(len)?;
        self.inner.set_len(len)
    }
}

fn device_dir(device: &Arc<Device>) -> Arc<MemDir<DeviceFile>> {
    let device = Arc::clone(device);
    Arc::new(MemDir::with_factory(move || DeviceFile {
        inner: MemStorage::new(),
        device: Arc::new(DeviceRef(Arc::clone(&device))),
        len: Mutex::new(0),
    }))
}

fn store_options() -> StoreOptions {
    let mut options = StoreOptions {
        checkpoint_interval: None,
        ..StoreOptions::default()
    };
    options.pager.mmap = false;
    options.wal.preallocate_chunk = 256 << 10;
    options
}

fn open(dir: &Arc<MemDir<DeviceFile>>) -> Engine {
    Engine::open_in(
        Arc::clone(dir) as Arc<dyn wal::Dir>,
        "db.mfdb",
        options(),
        store_options(),
    )
    .expect("open")
}

fn run(engine: &Engine, cmd: RawDocumentBuf) -> Document {
    let reply = engine.run_command("test", &cmd, &ConnectionContext::default());
    Document::try_from(&reply).expect("reply")
}

fn insert(engine: &Engine, id: i64) -> Document {
    run(
        engine,
        rawdoc! { "insert": "c", "documents": [{ "_id": id, "pad": "x".repeat(3000) }] },
    )
}

fn ids(engine: &Engine) -> Result<BTreeSet<i64>, Document> {
    let reply = run(
        engine,
        rawdoc! { "find": "c", "batchSize": 100_000, "projection": { "_id": 1 } },
    );
    if reply.get_f64("ok").ok() != Some(1.0) {
        return Err(reply);
    }
    let batch = reply
        .get_document("cursor")
        .and_then(|c| c.get_array("firstBatch"))
        .expect("firstBatch");
    Ok(batch
        .iter()
        .filter_map(|d| d.as_document().and_then(|d| d.get_i64("_id").ok()))
        .collect())
}

/// What a writer was told.
#[derive(Default)]
struct Told {
    acked: BTreeSet<i64>,
    refused: BTreeSet<i64>,
    unknown: BTreeSet<i64>,
}

fn classify(reply: &Document, id: i64, told: &mut Told) {
    if reply.get_f64("ok").ok() == Some(1.0) && !reply.contains_key("writeErrors") {
        told.acked.insert(id);
    } else if Engine::is_outcome_unknown(&RawDocumentBuf::try_from(reply).expect("encode")) {
        told.unknown.insert(id);
    } else {
        told.refused.insert(id);
    }
}

#[test]
fn a_full_disk_refuses_writes_keeps_reads_and_resumes_when_space_is_freed() {
    let device = Arc::new(Device::default());
    device.capacity.store(u64::MAX, Ordering::SeqCst);
    let dir = device_dir(&device);
    let engine = open(&dir);
    let mut told = Told::default();
    for id in 0..200 {
        classify(&insert(&engine, id), id, &mut told);
    }
    assert_eq!(told.acked.len(), 200);
    // The disk fills up 1 MiB from here: four writers insert until each is refused.
    device.capacity.store(
        device.used.load(Ordering::SeqCst) + (1 << 20),
        Ordering::SeqCst,
    );
    let told = Mutex::new(told);
    std::thread::scope(|scope| {
        for writer in 0..4_i64 {
            let (engine, told) = (&engine, &told);
            scope.spawn(move || {
                let mut refusals = 0;
                for n in 0..2_000 {
                    let id = 1_000 + writer * 10_000 + n;
                    let reply = insert(engine, id);
                    classify(&reply, id, &mut told.lock());
                    if reply.get_f64("ok").ok() != Some(1.0) || reply.contains_key("writeErrors") {
                        refusals += 1;
                        if refusals == 3 {
                            return;
                        }
                    }
                }
            });
        }
    });
    let told = told.into_inner();
    assert!(!told.refused.is_empty(), "the disk filled up");
    // Reads of durable data go on, and never show a refused write.
    let seen = ids(&engine).expect("reads go on when the disk is full");
    assert!(
        told.acked.is_subset(&seen),
        "every acknowledged write is readable"
    );
    assert!(
        seen.is_disjoint(&told.refused),
        "no refused write is readable"
    );
    // Refusals are OutOfDiskSpace, with mongod's code.
    let reply = insert(&engine, 99_999);
    let code = reply
        .get_array("writeErrors")
        .ok()
        .and_then(|e| e.first())
        .and_then(|e| e.as_document())
        .and_then(|e| e.get_i32("code").ok())
        .or_else(|| reply.get_i32("code").ok());
    assert_eq!(code, Some(14031), "{reply:?}");
    // hello still says writable, as mongod's does: `isWritablePrimary` names the role (a
    // standalone is a writable primary), not the disk's state; the writes say that.
    let hello = run(&engine, rawdoc! { "hello": 1 });
    assert_eq!(
        hello.get_bool("isWritablePrimary").ok(),
        Some(true),
        "{hello:?}"
    );
    assert_eq!(hello.get_bool("readOnly").ok(), Some(false), "{hello:?}");
    // Free space: writes resume by themselves.
    device.capacity.store(u64::MAX, Ordering::SeqCst);
    let reply = insert(&engine, 100_000);
    assert_eq!(reply.get_i32("n").ok(), Some(1), "{reply:?}");
    engine.close().expect("close");
    drop(engine);
    let engine = open(&dir);
    let after = ids(&engine).expect("reopen");
    assert!(told.acked.is_subset(&after), "acknowledged writes survive");
    assert!(
        after.is_disjoint(&told.refused),
        "refused writes never appear"
    );
    assert!(after.contains(&100_000));
    assert!(!after.contains(&99_999));
}

#[test]
fn a_failed_log_sync_is_an_unknown_outcome_and_no_reader_sees_it() {
    let device = Arc::new(Device::default());
    device.capacity.store(u64::MAX, Ordering::SeqCst);
    let dir = device_dir(&device);
    let engine = open(&dir);
    for id in 0..10 {
        assert_eq!(insert(&engine, id).get_i32("n").ok(), Some(1));
    }
    device.fail_syncs.store(true, Ordering::SeqCst);
    let reply = insert(&engine, 10);
    let raw = RawDocumentBuf::try_from(&reply).expect("encode");
    assert!(
        Engine::is_outcome_unknown(&raw),
        "never a definite error: {reply:?}"
    );
    // While the device keeps failing, recovery cannot finish, and nothing is read from
    // the failed state (which holds the write of unknown outcome).
    match ids(&engine) {
        Err(reply) => assert_eq!(reply.get_f64("ok").ok(), Some(0.0)),
        Ok(seen) => assert!(!seen.contains(&10), "a recovered store shows only the log"),
    }
    device.fail_syncs.store(false, Ordering::SeqCst);
    let seen = ids(&engine).expect("reads once the device works again");
    assert!(
        (0..10).all(|id| seen.contains(&id)),
        "acknowledged writes are there"
    );
    // Recovery decided the unknown write's fate, once: later reads agree with it and
    // with a reopen.
    let decided = seen.contains(&10);
    assert_eq!(
        insert(&engine, 11).get_i32("n").ok(),
        Some(1),
        "writes resume"
    );
    // The failure and the recovery are in the engine's log, in mongod's shape.
    let log = crate::support::ok(&engine, "admin", bson::rawdoc! { "getLog": "global" });
    let lines: Vec<String> = log
        .get_array("log")
        .expect("lines")
        .iter()
        .filter_map(|line| line.as_str().map(str::to_owned))
        .collect();
    for wanted in ["Storage failure", "Recovered the durable state"] {
        let line = lines
            .iter()
            .find(|line| line.contains(wanted))
            .unwrap_or_else(|| panic!("no {wanted:?} line in {lines:?}"));
        assert!(line.contains("\"c\":\"STORAGE\""), "{line}");
    }
    engine.close().expect("close");
    drop(engine);
    let after = ids(&open(&dir)).expect("reopen");
    assert_eq!(after.contains(&10), decided);
    assert!(after.contains(&11));
}

#[test]
fn a_refused_write_is_not_visible_even_before_recovery() {
    // The first failure is reported to one writer while others may be mid-command:
    // the failed store refuses reads at once (the engine then recovers it).
    let device = Arc::new(Device::default());
    device.capacity.store(u64::MAX, Ordering::SeqCst);
    let dir = device_dir(&device);
    let engine = open(&dir);
    insert(&engine, 0);
    let store = engine.store();
    device.fail_syncs.store(true, Ordering::SeqCst);
    let reply = insert(&engine, 1);
    assert_eq!(reply.get_f64("ok").ok(), Some(0.0), "{reply:?}");
    assert!(store.is_failed());
    assert!(store.read().is_err(), "the failed store serves no reader");
}

type FaultyDir = MemDir<wal::FaultyStorage<MemStorage>>;

/// One run of the sweep: a fault armed on one file at its `nth` operation `op`, two
/// writers inserting while a checkpoint and a clean close run; then a reopen with the
/// fault gone. Every reply is checked against what the reopened database holds.
fn sweep_run(file: &str, op: wal::Op, nth: u64, kind: wal::FaultKind) {
    let dir: Arc<FaultyDir> = Arc::new(MemDir::with_factory(|| {
        wal::FaultyStorage::new(MemStorage::new())
    }));
    let mut store = store_options();
    store.wal.preallocate_chunk = 64 << 10;
    let open = |dir: &Arc<FaultyDir>| {
        Engine::open_in(
            Arc::clone(dir) as Arc<dyn wal::Dir>,
            "db.mfdb",
            options(),
            store.clone(),
        )
        .expect("open")
    };
    let engine = open(&dir);
    let target = dir.file(file).expect("file");
    target.inject(wal::Fault {
        op,
        nth: target.count(op) + nth,
        kind,
        sticky: kind == wal::FaultKind::NoSpace,
    });
    let told = Mutex::new(Told::default());
    std::thread::scope(|scope| {
        for writer in 0..2_i64 {
            let (engine, told) = (&engine, &told);
            scope.spawn(move || {
                for n in 0..30 {
                    let id = writer * 1_000 + n;
                    let reply = insert(engine, id);
                    classify(&reply, id, &mut told.lock());
                    if n == 15 && writer == 0 {
                        let _ = engine.store().checkpoint();
                    }
                }
            });
        }
    });
    let told = told.into_inner();
    // Before any recovery: what a reader sees now never includes a refused write.
    if let Ok(seen) = ids(&engine) {
        assert!(
            seen.is_disjoint(&told.refused),
            "{file} {op:?}#{nth} {kind:?}: a refused write is readable"
        );
    }
    let _ = engine.close();
    drop(engine);
    for name in dir.names() {
        if let Some(f) = dir.file(&name) {
            f.clear();
        }
    }
    let after = ids(&open(&dir)).expect("reopen");
    assert!(
        told.acked.is_subset(&after),
        "{file} {op:?}#{nth} {kind:?}: acknowledged writes lost: {:?}",
        told.acked.difference(&after).collect::<Vec<_>>()
    );
    assert!(
        after.is_disjoint(&told.refused),
        "{file} {op:?}#{nth} {kind:?}: refused writes applied: {:?}",
        after.intersection(&told.refused).collect::<Vec<_>>()
    );
}

#[test]
fn every_fault_at_every_io_point_keeps_acknowledged_writes_and_refused_ones_out() {
    let mut runs = 0;
    for file in ["db.mfdb", "db.mfdb-wal"] {
        for op in [wal::Op::Write, wal::Op::Sync, wal::Op::SetLen] {
            for nth in [0, 1, 2, 3, 5, 8, 13, 21] {
                for kind in [
                    wal::FaultKind::Io,
                    wal::FaultKind::NoSpace,
                    wal::FaultKind::ShortWrite,
                ] {
                    sweep_run(file, op, nth, kind);
                    runs += 1;
                }
            }
        }
    }
    assert_eq!(runs, 144);
}

/// The TTL monitor's pass meets a failing disk: it neither panics nor stops for good. The
/// failed store is left alone (the next command recovers it) and a later pass deletes.
#[test]
fn the_ttl_monitor_survives_a_failed_store_and_sweeps_after_recovery() {
    let device = Arc::new(Device::default());
    device.capacity.store(u64::MAX, Ordering::SeqCst);
    let dir = device_dir(&device);
    let clock = crate::ttl::Clock::at(1_700_000_000_000);
    let options = EngineOptions {
        host: Arc::clone(&clock) as Arc<dyn engine::Host>,
        ttl_interval: Some(Duration::from_millis(10)),
        ..options()
    };
    let engine = Engine::open_in(
        Arc::clone(&dir) as Arc<dyn wal::Dir>,
        "db.mfdb",
        options,
        store_options(),
    )
    .expect("open");
    let reply = run(
        &engine,
        rawdoc! { "createIndexes": "c", "indexes": [
            { "key": { "t": 1 }, "name": "t_1", "expireAfterSeconds": 0 },
        ] },
    );
    assert_eq!(reply.get_f64("ok").ok(), Some(1.0), "{reply:?}");
    let soon = bson::DateTime::from_millis(1_700_000_000_000 + 3_600_000);
    let reply = run(
        &engine,
        rawdoc! { "insert": "c", "documents": [{ "_id": 1_i64, "t": soon }, { "_id": 2_i64 }] },
    );
    assert_eq!(reply.get_i32("n").ok(), Some(2), "{reply:?}");
    let passes = || {
        let status = run(&engine, rawdoc! { "serverStatus": 1 });
        let ttl = status
            .get_document("metrics")
            .and_then(|m| m.get_document("ttl"));
        ttl.and_then(|t| t.get_i64("passes"))
            .expect("metrics.ttl.passes")
    };
    device.fail_syncs.store(true, Ordering::SeqCst);
    clock.advance(2 * 3_600_000);
    // A pass meets the failing device: its commit fails and the store with it. Later
    // passes leave the failed store alone (no pass is counted) and nothing panics.
    let before = passes();
    let deadline = Instant::now() + Duration::from_secs(3);
    while passes() == before && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(5));
    }
    std::thread::sleep(Duration::from_millis(100));
    let failed = passes();
    assert!(failed > before, "a pass ran on the failing device");
    assert!(failed <= before + 2, "the failed store is left alone");
    device.fail_syncs.store(false, Ordering::SeqCst);
    // A command recovers the store; a pass over the recovered one deletes the document
    // (unless recovery replayed the failed pass's logged delete already).
    let deadline = Instant::now() + Duration::from_secs(3);
    let mut seen = ids(&engine);
    while seen.as_ref().map_or(true, |s| s.contains(&1)) && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(5));
        seen = ids(&engine);
    }
    assert_eq!(seen.expect("reads"), BTreeSet::from([2]));
    let deadline = Instant::now() + Duration::from_secs(3);
    while passes() <= failed && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(5));
    }
    assert!(passes() > failed, "the monitor sweeps the recovered store");
    let report = run(&engine, rawdoc! { "validate": "c" });
    assert_eq!(report.get_bool("valid").ok(), Some(true), "{report:?}");
    engine.close().expect("close");
}

/// A checkpoint, as a client asks for one.
fn fsync(engine: &Engine) -> Document {
    let reply = engine.run_command(
        "admin",
        &rawdoc! { "fsync": 1 },
        &ConnectionContext::default(),
    );
    Document::try_from(&reply).expect("reply")
}

fn delete(engine: &Engine, id: i64) -> Document {
    run(
        engine,
        rawdoc! { "delete": "c", "deletes": [{ "q": { "_id": id }, "limit": 1 }] },
    )
}

/// A full disk never blocks the checkpoint or the clean close, however large the free
/// list (#24). Thousands of single deletes since the last checkpoint leave as many
/// separate pending extents (a free list of several pages), and inserting until the
/// disk refuses uses up the growth slack; the checkpoint then needs those pages and may
/// not grow the file. Every commit keeps them past the mark (`free_list_reserve` in the
/// pager), and the log's truncation, which needs a new file, is deferred rather than
/// failing the store. Red without the reserve: the checkpoint fails growing the file.
#[test]
fn a_full_disk_never_blocks_a_checkpoint_or_a_clean_close_with_a_large_free_list() {
    let device = Arc::new(Device::default());
    device.capacity.store(u64::MAX, Ordering::SeqCst);
    let dir = device_dir(&device);
    // The log preallocates far ahead, so the data file is the one the full disk stops.
    let mut store = store_options();
    store.wal.preallocate_chunk = 8 << 20;
    let open = |dir: &Arc<MemDir<DeviceFile>>| {
        let dir = Arc::clone(dir) as Arc<dyn wal::Dir>;
        Engine::open_in(dir, "db.mfdb", options(), store.clone()).expect("open")
    };
    let engine = open(&dir);
    let documents: i64 = 8_000;
    for start in (0..documents).step_by(500) {
        let batch: Vec<bson::Bson> = (start..start + 500)
            .map(|id| bson::Bson::Document(bson::doc! { "_id": id, "pad": "x".repeat(1500) }))
            .collect();
        let cmd = bson::doc! { "insert": "c", "documents": batch };
        let cmd = RawDocumentBuf::try_from(&cmd).expect("encode");
        assert_eq!(run(&engine, cmd).get_i32("n").ok(), Some(500));
    }
    let reply = fsync(&engine);
    assert_eq!(reply.get_f64("ok").ok(), Some(1.0), "{reply:?}");
    // Two documents a leaf: every fourth deleted frees every other leaf, so the freed
    // pages do not merge into runs.
    for id in (0..documents).step_by(4) {
        assert_eq!(
            delete(&engine, id).get_i32("n").ok(),
            Some(1),
            "delete {id}"
        );
    }
    let pending = engine.store().pager_stats().expect("stats").pending_pages;
    assert!(pending >= 2_000, "{pending} pages wait for the checkpoint");
    // The disk is full from here: inserts go on until the data file or the log has to
    // grow, which is refused.
    device
        .capacity
        .store(device.used.load(Ordering::SeqCst), Ordering::SeqCst);
    let mut told = Told::default();
    for id in 100_000..120_000 {
        let reply = insert(&engine, id);
        classify(&reply, id, &mut told);
        if !told.refused.is_empty() || !told.unknown.is_empty() {
            break;
        }
    }
    assert!(!told.refused.is_empty(), "the disk filled up");
    assert!(told.unknown.is_empty(), "a full disk is a definite refusal");
    let checkpoint = fsync(&engine);
    assert_eq!(checkpoint.get_f64("ok").ok(), Some(1.0), "{checkpoint:?}");
    let stats = engine.store().pager_stats().expect("stats");
    assert_eq!(stats.pending_pages, 0, "the checkpoint is durable");
    engine.close().expect("a clean close on the full disk");
    drop(engine);
    assert_eq!(dir.names(), vec!["db.mfdb".to_string()], "one file left");
    device.capacity.store(u64::MAX, Ordering::SeqCst);
    let engine = open(&dir);
    let after = ids(&engine).expect("reopen");
    let expected: BTreeSet<i64> = (0..documents)
        .filter(|id| id % 4 != 0)
        .chain(told.acked.iter().copied())
        .collect();
    assert_eq!(after, expected, "every acknowledged write, nothing refused");
    engine.close().expect("close");
}

/// A damaged last log block found at open is cut off and said in the engine's log, once,
/// as a STORAGE warning, when the opener asks for it (a server once its log prints in
/// its own format, the embedded client as it opens).
#[test]
fn a_log_tail_cut_off_at_open_is_logged_once() {
    let dir = Arc::new(MemDir::<MemStorage>::new());
    let open_mem = || {
        Engine::open_in(
            Arc::clone(&dir) as Arc<dyn wal::Dir>,
            "db.mfdb",
            options(),
            StoreOptions {
                checkpoint_interval: None,
                ..StoreOptions::default()
            },
        )
        .expect("open")
    };
    let engine = open_mem();
    for batch in 0..3 {
        let docs: Vec<Document> = (0..20)
            .map(|i| bson::doc! { "_id": batch * 100 + i, "pad": "p".repeat(200) })
            .collect();
        let cmd = bson::doc! { "insert": "c", "documents": docs };
        crate::support::ok(&engine, "db", RawDocumentBuf::try_from(&cmd).expect("raw"));
    }
    drop(engine); // as after kill -9: the log holds the three batches
    let log = dir.file("db.mfdb-wal").expect("log");
    let len = log
        .snapshot()
        .iter()
        .rposition(|&b| b != 0)
        .expect("log bytes");
    let mut byte = [0u8];
    log.read_at(&mut byte, len as u64 - 8).expect("read");
    byte[0] ^= 0xff;
    log.write_at(&byte, len as u64 - 8).expect("write");
    let engine = open_mem();
    let lines = |engine: &Engine| -> Vec<String> {
        crate::support::ok(engine, "admin", rawdoc! { "getLog": "global" })
            .get_array("log")
            .expect("lines")
            .iter()
            .filter_map(|line| line.as_str().map(str::to_owned))
            .filter(|line| line.contains("damaged block"))
            .collect()
    };
    assert!(lines(&engine).is_empty(), "not before it is asked for");
    engine.log_open_warnings();
    engine.log_open_warnings();
    let found = lines(&engine);
    assert_eq!(found.len(), 1, "{found:?}");
    assert!(found[0].contains("\"s\":\"W\"") && found[0].contains("\"c\":\"STORAGE\""));
}
