//! The TTL monitor (issue 26): a background thread that, every `--ttl-sweep-secs`
//! (mongod's `ttlMonitorSleepSecs`), visits every TTL index (`expireAfterSeconds`) of every
//! collection and deletes the documents that have expired, as mongod 7.0's `TTLMonitor`.
//!
//! One pass: for each TTL index, the index's entries in the date type bracket up to the
//! cutoff `now - expireAfterSeconds` (both ends included, as mongod's bounds
//! `[dawn of time, cutoff]`) propose candidates, read from a fresh snapshot in batches of
//! at most [`BATCH_DOCS`]; each batch is deleted in one write transaction.
//!
//! Invariants:
//! - Only dates expire: a document expires when the indexed field is a BSON date, or an
//!   array holding one, with `date + expireAfterSeconds <= now` (an array expires at its
//!   earliest date, which is the first of its keys the range meets). Other values, and a
//!   missing field, never expire: their keys lie outside the date bracket.
//! - Deletes go through the ordinary logged write path (`Writer::delete`, `commit`), so
//!   every index stays consistent with the documents, the deletes are durable when the
//!   pass reports them and recovery replays them.
//! - An index only proposes: under the writer each candidate is re-read and its keys
//!   regenerated from the index's current specification (so a `collMod` of
//!   `expireAfterSeconds`, an update that moved the date, or a document that left a
//!   partial index since the snapshot is honoured); only a document with a key in the
//!   expired range is deleted.
//! - A write transaction deletes at most `BATCH_DOCS` documents, which bounds how long a
//!   pass holds the write gate at a time; writers get in between batches.
//! - Only single-field ascending or descending indexes are swept (compound TTL indexes are
//!   refused at creation; a hashed one is skipped with a log line each pass, as mongod's
//!   "special index can't be used as a TTL index").
//! - The thread holds no strong reference to the store while it sleeps (a weak one to the
//!   engine's store slot), a failed or closed store is left alone (the next command
//!   recovers it; the pass after that sweeps the recovered one), errors are logged and the
//!   next pass retries, and a stop request (`Engine::close`, dropping the engine) wakes it
//!   at once and ends a pass between batches.

use crate::host::Host;
use crate::index::keys;
use crate::index::spec::{IndexSpec, KeyKind};
use crate::store::{Namespace, Store, StoreError};
use bson::DateTime;
use bson::raw::RawBsonRef;
use parking_lot::{Condvar, Mutex, RwLock};
use std::ops::Bound;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Weak};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};
use wal::crashpoint;

/// Documents deleted per write transaction at most. Measured on the development machine:
/// a batch of 1,024 deletes of 1 KiB documents under the TTL index and one other secondary
/// index holds the write gate 11-21 ms (12 ms typical; its log sync adds under 1 ms, after
/// the gate is released).
pub(crate) const BATCH_DOCS: usize = 1024;

/// The counters serverStatus reports as `metrics.ttl` (since the engine started).
#[derive(Debug, Default)]
pub(crate) struct Counters {
    passes: AtomicU64,
    sub_passes: AtomicU64,
    deleted: AtomicU64,
}

/// A copy of the TTL counters.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct CountersSnapshot {
    /// Passes started.
    pub(crate) passes: u64,
    /// Sub-passes (one per pass: every index is swept to its end within its pass).
    pub(crate) sub_passes: u64,
    /// Documents deleted.
    pub(crate) deleted: u64,
}

impl Counters {
    pub(crate) fn snapshot(&self) -> CountersSnapshot {
        CountersSnapshot {
            passes: self.passes.load(Ordering::Relaxed),
            sub_passes: self.sub_passes.load(Ordering::Relaxed),
            deleted: self.deleted.load(Ordering::Relaxed),
        }
    }
}

/// What one pass did.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct TtlPass {
    /// TTL indexes swept.
    pub indexes: u64,
    /// Documents deleted.
    pub deleted: u64,
}

/// The encoded index keys that have expired at `now_millis` under `spec`, as an inclusive
/// `(lower, upper)` byte range of the index's keys; `None` for an index that is not a TTL
/// index the monitor sweeps.
fn expired_range(spec: &IndexSpec, now_millis: i64) -> Option<(Vec<u8>, Vec<u8>)> {
    let seconds = spec.expire_after_seconds?;
    let [field] = spec.fields.as_slice() else {
        return None;
    };
    // `date + expireAfterSeconds <= now`, i.e. `date <= now - expireAfterSeconds`.
    let cutoff = now_millis.saturating_sub(i64::from(seconds).saturating_mul(1000));
    let date =
        |millis| bson_canonical::key::encode(RawBsonRef::DateTime(DateTime::from_millis(millis)));
    let (earliest, latest) = (date(i64::MIN), date(cutoff));
    match field.kind {
        KeyKind::Ascending => Some((earliest, latest)),
        // A descending field's encoding is byte-inverted: the order reverses.
        KeyKind::Descending => Some((inverted(latest), inverted(earliest))),
        KeyKind::Hashed => None,
    }
}

fn inverted(mut key: Vec<u8>) -> Vec<u8> {
    for byte in &mut key {
        *byte = !*byte;
    }
    key
}

/// Whether `key` lies in the inclusive range `(lower, upper)`.
fn in_range(key: &[u8], (lower, upper): &(Vec<u8>, Vec<u8>)) -> bool {
    lower.as_slice() <= key && key <= upper.as_slice()
}

/// Runs one pass over every TTL index of `store` at time `now_millis`; `stop` is asked
/// between batches and ends the pass early. An error in one index is logged and the pass
/// goes on with the next, unless the store has failed or closed; the first error is
/// returned.
pub(crate) fn pass(
    store: &Store,
    now_millis: i64,
    stop: &dyn Fn() -> bool,
    counters: &Counters,
) -> Result<TtlPass, StoreError> {
    counters.passes.fetch_add(1, Ordering::Relaxed);
    counters.sub_passes.fetch_add(1, Ordering::Relaxed);
    let mut report = TtlPass::default();
    let targets: Vec<(Namespace, String, bool)> = {
        let reader = store.read()?;
        let mut targets = Vec::new();
        for (ns, meta) in reader.collections(None)? {
            for index in &meta.indexes {
                if index.spec.expire_after_seconds.is_some() {
                    let hashed = index.spec.fields.iter().any(|f| f.kind == KeyKind::Hashed);
                    targets.push((ns.clone(), index.name().to_owned(), hashed));
                }
            }
        }
        targets
    };
    let mut first_error = None;
    for (ns, name, hashed) in targets {
        if stop() {
            break;
        }
        if hashed {
            store.report(&ttl_line(
                crate::store::Severity::Error,
                "Special index can't be used as a TTL index, skipping TTL job",
                bson::doc! { "ns": ns.to_string(), "index": name.clone() },
            ));
            continue;
        }
        report.indexes += 1;
        match sweep(store, &ns, &name, now_millis, stop, counters) {
            Ok(deleted) => report.deleted += deleted,
            Err(error) => {
                store.report(&ttl_line(
                    crate::store::Severity::Error,
                    "TTL deletes failed",
                    bson::doc! {
                        "ns": ns.to_string(),
                        "index": name.clone(),
                        "error": error.to_string(),
                    },
                ));
                let fatal = store.is_failed() || store.is_closed();
                first_error.get_or_insert(error);
                if fatal {
                    break;
                }
            }
        }
    }
    match first_error {
        Some(error) => Err(error),
        None => Ok(report),
    }
}

/// A TTL monitor line (mongod's INDEX component), reported through the store's lines.
fn ttl_line(
    severity: crate::store::Severity,
    message: &str,
    attr: bson::Document,
) -> crate::store::Event<'_> {
    crate::store::Event {
        severity,
        component: "INDEX",
        id: 0,
        message,
        attr,
    }
}

/// Deletes the expired documents of index `name` of `ns`, batch by batch; returns how
/// many it deleted.
fn sweep(
    store: &Store,
    ns: &Namespace,
    name: &str,
    now_millis: i64,
    stop: &dyn Fn() -> bool,
    counters: &Counters,
) -> Result<u64, StoreError> {
    let mut deleted = 0;
    // The last entry proposed: the next batch starts after it, so a candidate the writer
    // keeps is not proposed again within the pass.
    let mut after: Option<(Vec<u8>, u64)> = None;
    loop {
        let (candidates, full) = {
            let reader = store.read()?;
            let Some(meta) = reader.collection(ns)? else {
                return Ok(deleted);
            };
            let Some(range) = meta
                .index(name)
                .and_then(|i| expired_range(&i.spec, now_millis))
            else {
                return Ok(deleted);
            };
            let lower = after.as_ref().map_or(range.0.as_slice(), |(key, _)| key);
            let mut candidates = Vec::new();
            for entry in reader.index_scan(
                &meta,
                name,
                Bound::Included(lower),
                Bound::Included(&range.1),
            )? {
                let (key, rid) = entry?;
                if let Some((last_key, last_rid)) = &after
                    && (key.as_slice(), rid) <= (last_key.as_slice(), *last_rid)
                {
                    continue;
                }
                candidates.push((key, rid));
                if candidates.len() >= BATCH_DOCS {
                    break;
                }
            }
            let full = candidates.len() >= BATCH_DOCS;
            (candidates, full)
        };
        let Some(last) = candidates.last().cloned() else {
            return Ok(deleted);
        };
        after = Some(last);
        let mut rids: Vec<u64> = candidates.into_iter().map(|(_, rid)| rid).collect();
        rids.sort_unstable();
        rids.dedup();
        let n = delete_batch(store, ns, name, now_millis, &rids)?;
        deleted += n;
        counters.deleted.fetch_add(n, Ordering::Relaxed);
        if !full || stop() {
            return Ok(deleted);
        }
    }
}

/// Deletes, in one write transaction, those of records `rids` of `ns` that have expired
/// under index `name` as the writer sees them (re-read, keys regenerated from the current
/// specification). Returns how many it deleted.
fn delete_batch(
    store: &Store,
    ns: &Namespace,
    name: &str,
    now_millis: i64,
    rids: &[u64],
) -> Result<u64, StoreError> {
    let mut writer = store.write()?;
    let Some(meta) = writer.collection(ns)? else {
        return Ok(0);
    };
    let Some(index) = meta.index(name) else {
        return Ok(0);
    };
    let spec = Arc::clone(&index.spec);
    let Some(range) = expired_range(&spec, now_millis) else {
        return Ok(0);
    };
    let mut deleted = 0;
    for &rid in rids {
        let Some(doc) = writer.get(ns, rid)? else {
            continue; // deleted since the snapshot (or an earlier key of the same array)
        };
        // A document the index cannot hold has no entry, so it was not proposed by one.
        let Ok(generated) = keys::index_keys(&spec, &doc) else {
            continue;
        };
        if generated.keys.iter().any(|key| in_range(key, &range)) {
            writer.delete(ns, rid)?;
            deleted += 1;
        }
    }
    if deleted == 0 {
        return Ok(0); // nothing to log: the transaction is dropped
    }
    crashpoint::hit("ttl.before_commit");
    writer.commit()?;
    Ok(deleted)
}

/// What wakes the monitor: a stop request. Outside the engine, so the sleeping thread
/// holds only it and weak references.
#[derive(Default)]
struct Wakeup {
    stop: Mutex<bool>,
    cv: Condvar,
}

impl Wakeup {
    fn stopping(&self) -> bool {
        *self.stop.lock()
    }
}

/// The engine's TTL monitor: its thread (when enabled), its counters and its interval.
pub(crate) struct Monitor {
    interval: Option<Duration>,
    wakeup: Arc<Wakeup>,
    handle: Mutex<Option<JoinHandle<()>>>,
    pub(crate) counters: Arc<Counters>,
}

impl Monitor {
    /// Starts the monitor thread, which sweeps the store in `slot` every `interval`
    /// (`None`: no thread; passes run only when asked for).
    pub(crate) fn start(
        interval: Option<Duration>,
        host: Arc<dyn Host>,
        slot: Weak<RwLock<Arc<Store>>>,
    ) -> Monitor {
        let monitor = Monitor {
            interval,
            wakeup: Arc::new(Wakeup::default()),
            handle: Mutex::new(None),
            counters: Arc::new(Counters::default()),
        };
        if let Some(interval) = interval {
            let wakeup = Arc::clone(&monitor.wakeup);
            let counters = Arc::clone(&monitor.counters);
            let spawned = std::thread::Builder::new()
                .name("mfdb-ttl".into())
                .spawn(move || monitor_loop(&wakeup, &slot, host.as_ref(), &counters, interval));
            match spawned {
                Ok(handle) => *monitor.handle.lock() = Some(handle),
                Err(error) => eprintln!(
                    "multiforadb: error: the TTL monitor thread did not start ({error}); \
                     expired documents are not deleted"
                ),
            }
        }
        monitor
    }

    /// The time between passes (`None`: disabled).
    pub(crate) fn interval(&self) -> Option<Duration> {
        self.interval
    }

    /// The counters the passes since start have kept.
    pub(crate) fn counters(&self) -> &Counters {
        &self.counters
    }

    /// Stops the thread (at once when asleep, between batches during a pass) and waits
    /// for it.
    pub(crate) fn stop(&self) {
        *self.wakeup.stop.lock() = true;
        self.wakeup.cv.notify_all();
        let handle = self.handle.lock().take();
        if let Some(handle) = handle
            && handle.thread().id() != std::thread::current().id()
        {
            let _ = handle.join();
        }
    }
}

fn monitor_loop(
    wakeup: &Wakeup,
    slot: &Weak<RwLock<Arc<Store>>>,
    host: &dyn Host,
    counters: &Counters,
    interval: Duration,
) {
    loop {
        {
            let deadline = Instant::now() + interval;
            let mut stop = wakeup.stop.lock();
            while !*stop && !wakeup.cv.wait_until(&mut stop, deadline).timed_out() {}
            if *stop {
                return;
            }
        }
        // Strong only while working, never while asleep.
        let Some(slot) = slot.upgrade() else {
            return;
        };
        let store = Arc::clone(&slot.read());
        drop(slot);
        if store.is_failed() || store.is_closed() {
            continue;
        }
        let stop = || wakeup.stopping();
        if let Err(error) = pass(&store, host.now_millis(), &stop, counters)
            && !stop()
        {
            eprintln!(
                "multiforadb: TTL pass failed: {error}; the next pass in {} s retries",
                interval.as_secs_f64()
            );
        }
    }
}

#[cfg(test)]
mod tests {
    use super::{delete_batch, expired_range, in_range, inverted};
    use crate::index::spec::{IndexSpec, ParseOptions};
    use crate::store::Namespace;
    use crate::{ConnectionContext, Engine, EngineOptions, FixedHost, StartupOptions};
    use bson::raw::RawBsonRef;
    use bson::{DateTime, RawDocumentBuf, rawdoc};
    use std::sync::Arc;

    fn spec(raw: RawDocumentBuf) -> IndexSpec {
        IndexSpec::parse(&raw, ParseOptions::default()).expect("valid spec")
    }

    fn date_key(millis: i64) -> Vec<u8> {
        bson_canonical::key::encode(RawBsonRef::DateTime(DateTime::from_millis(millis)))
    }

    #[test]
    fn the_range_ends_at_now_minus_expire_after_seconds_inclusive() {
        let ttl = spec(rawdoc! { "key": { "t": 1 }, "name": "t_1", "expireAfterSeconds": 10 });
        let range = expired_range(&ttl, 100_000).expect("a TTL index");
        assert!(in_range(&date_key(90_000), &range), "exactly at the cutoff");
        assert!(in_range(&date_key(i64::MIN), &range));
        assert!(in_range(&date_key(-5), &range), "dates before 1970");
        assert!(!in_range(&date_key(90_001), &range), "one ms too young");
        let number = bson_canonical::key::encode(RawBsonRef::Int64(0));
        let null = bson_canonical::key::encode(RawBsonRef::Null);
        assert!(!in_range(&number, &range) && !in_range(&null, &range));
    }

    #[test]
    fn a_descending_index_inverts_the_range() {
        let ttl = spec(rawdoc! { "key": { "t": -1 }, "name": "t_-1", "expireAfterSeconds": 0 });
        let range = expired_range(&ttl, 1_000).expect("a TTL index");
        assert!(in_range(&inverted(date_key(1_000)), &range));
        assert!(in_range(&inverted(date_key(0)), &range));
        assert!(!in_range(&inverted(date_key(1_001)), &range));
        assert!(!in_range(&date_key(0), &range), "an ascending encoding");
    }

    #[test]
    fn only_ttl_btree_indexes_have_a_range() {
        let plain = spec(rawdoc! { "key": { "t": 1 }, "name": "t_1" });
        assert!(expired_range(&plain, 0).is_none());
        let hashed =
            spec(rawdoc! { "key": { "t": "hashed" }, "name": "t_h", "expireAfterSeconds": 0 });
        assert!(expired_range(&hashed, 0).is_none());
    }

    /// The index only proposes: a candidate the writer finds unexpired (here proposed
    /// directly, as a stale snapshot would) is kept, an expired one deleted.
    #[test]
    fn the_writer_deletes_only_candidates_it_finds_expired() {
        let engine = Engine::new(EngineOptions {
            host: Arc::new(FixedHost::default()),
            startup: StartupOptions::default(),
            connections_max: 1,
            ttl_interval: None,
        });
        let ctx = ConnectionContext::default();
        let reply = engine.run_command(
            "db",
            &rawdoc! { "createIndexes": "c", "indexes": [
                { "key": { "t": 1 }, "name": "t_1", "expireAfterSeconds": 0 },
            ] },
            &ctx,
        );
        assert_eq!(reply.get_f64("ok").ok(), Some(1.0), "{reply:?}");
        let reply = engine.run_command(
            "db",
            &rawdoc! { "insert": "c", "documents": [
                { "_id": 0, "t": DateTime::from_millis(10) },
                { "_id": 1, "t": DateTime::from_millis(2_000) },
                { "_id": 2, "t": "not a date" },
                { "_id": 3, "t": [DateTime::from_millis(5_000), DateTime::from_millis(999)] },
            ] },
            &ctx,
        );
        assert_eq!(reply.get_i32("n").ok(), Some(4), "{reply:?}");
        let store = engine.store();
        let ns = Namespace::new("db", "c");
        let rids = |store: &crate::store::Store| -> Vec<u64> {
            let reader = store.read().expect("read");
            let meta = reader
                .collection(&ns)
                .expect("catalog")
                .expect("collection");
            reader
                .scan(&meta, None)
                .expect("scan")
                .map(|r| r.expect("record").0)
                .collect()
        };
        let all = rids(&store);
        let mut proposed = all.clone();
        proposed.push(all[3] + 100); // a record that no longer exists
        let deleted = delete_batch(&store, &ns, "t_1", 1_000, &proposed).expect("batch");
        assert_eq!(deleted, 2);
        assert_eq!(rids(&store), [all[1], all[2]]);
    }
}
