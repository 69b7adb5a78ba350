//! Operations in progress, as `currentOp` lists them: every command registers itself with
//! [`Operations::begin`] before its handler runs and is listed until the returned guard
//! drops; long work (index builds) publishes its progress on its entry.
//!
//! Invariants:
//! - An operation is listed exactly while its handler runs: the entry is added before the
//!   handler is called and removed when the guard drops, also on error or unwinding.
//! - Registering costs one short mutex hold and copies at most [`COMMAND_COPY_MAX`] bytes
//!   of the command body (mongod truncates `currentOp`'s `command` the same way); no lock
//!   of this module is held while a handler runs.
//! - Progress is written by the running thread and read by `currentOp` under the entry's
//!   own small lock; a reader never waits for the write gate.
//! - opids are unique for the life of the engine (a 32-bit counter, as mongod's).

use crate::error::{Error, ErrorCode};
use crate::latency::{Kind, Latencies};
use crate::store::{BuildObserver, BuildPhase};
use bson::{Document, doc};
use parking_lot::Mutex;
use std::cell::RefCell;
use std::collections::BTreeMap;
use std::sync::Arc;
use std::sync::atomic::{AtomicI32, AtomicU8, AtomicU64, Ordering};
use std::time::Instant;

/// The largest command body `currentOp` shows whole; a larger one is shown as mongod
/// shows it: `{$truncated: "<the start of it>", comment}`.
pub(crate) const COMMAND_COPY_MAX: usize = 1024;

/// The operations running now.
#[derive(Default)]
pub(crate) struct Operations {
    next_opid: AtomicI32,
    running: Mutex<BTreeMap<i32, Arc<Running>>>,
    /// `top`'s figures and the latencies per namespace (commands on `<db>.$cmd` are not
    /// counted, as mongod).
    top: Mutex<BTreeMap<String, NamespaceUsage>>,
    /// Every command's latency, for serverStatus `opLatencies`.
    latencies: Mutex<Latencies>,
    /// Called with every progress report, on the reporting thread (tests look at
    /// `currentOp` from inside a build this way).
    #[cfg(test)]
    pub(crate) on_progress: Mutex<Option<ProgressHook>>,
}

#[cfg(test)]
pub(crate) type ProgressHook = Arc<dyn Fn(Progress) + Send + Sync>;

/// One running operation.
pub(crate) struct Running {
    opid: i32,
    started: Instant,
    /// `currentOp`'s `op`: `insert`, `query`, `update`, `remove`, `getmore` or `command`.
    op: &'static str,
    /// The latency kind it counts under.
    latency_kind: Kind,
    ns: String,
    command: Document,
    connection_id: i64,
    client: String,
    progress: Mutex<Option<Progress>>,
    /// [`NOT_INTERRUPTED`], or why the operation must stop at its next check.
    interrupt: AtomicU8,
    /// When `maxTimeMS` runs out (the host's clock), if it was given.
    deadline: Option<(Arc<dyn crate::host::Host>, i64)>,
    /// Index keys and documents its reads examined so far (mongod's `keysExamined`,
    /// `docsExamined`), added by each read loop when it ends.
    keys_examined: AtomicU64,
    docs_examined: AtomicU64,
    /// mongod's `planSummary` of the plan its read runs (`COLLSCAN`, `IXSCAN { a: 1 }`).
    plan_summary: Mutex<Option<String>>,
    #[cfg(test)]
    on_progress: Option<ProgressHook>,
}

/// See [`Operations::count`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Active {
    pub(crate) total: u64,
    pub(crate) readers: u64,
    pub(crate) writers: u64,
}

const NOT_INTERRUPTED: u8 = 0;
const KILLED: u8 = 1;

thread_local! {
    /// The operation this thread runs now (set by [`Operations::begin`] for the guard's
    /// life), so loops deep in a command can check it without being handed it.
    static CURRENT: RefCell<Option<Arc<Running>>> = const { RefCell::new(None) };
}

/// Whether the operation this thread runs must stop: 11601 Interrupted after `killOp`,
/// 50 MaxTimeMSExpired once its `maxTimeMS` is spent; `Ok` outside any operation. One
/// atomic load (and a clock read under `maxTimeMS`): loops call it every few records.
pub(crate) fn check_current() -> Result<(), Error> {
    CURRENT.with(|current| match &*current.borrow() {
        Some(running) => running.check(),
        None => Ok(()),
    })
}

/// The operation this thread runs now, if any (read loops add their counts to it).
pub(crate) fn current() -> Option<Arc<Running>> {
    CURRENT.with(|current| current.borrow().clone())
}

/// Sets the `planSummary` of the operation this thread runs (nothing outside one).
pub(crate) fn set_current_plan_summary(summary: String) {
    CURRENT.with(|current| {
        if let Some(running) = &*current.borrow() {
            *running.plan_summary.lock() = Some(summary);
        }
    });
}

/// What long work has done so far.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Progress {
    /// mongod's message for the phase.
    pub(crate) msg: &'static str,
    pub(crate) done: u64,
    pub(crate) total: u64,
}

/// Keeps an operation listed; dropping it ends the listing.
pub(crate) struct OpGuard<'o> {
    operations: &'o Operations,
    running: Arc<Running>,
    /// This thread's operation before this one (a command run inside another).
    outer: Option<Arc<Running>>,
}

impl Drop for OpGuard<'_> {
    fn drop(&mut self) {
        let outer = self.outer.take();
        CURRENT.with(|current| *current.borrow_mut() = outer);
        self.operations.running.lock().remove(&self.running.opid);
        let running = &self.running;
        let micros = u64::try_from(running.started.elapsed().as_micros()).unwrap_or(u64::MAX);
        self.operations
            .latencies
            .lock()
            .record(running.latency_kind, micros);
        if running.ns.ends_with(".$cmd") {
            return;
        }
        let kind = match running.op {
            "query" => 3,
            "getmore" => 4,
            "insert" => 5,
            "update" => 6,
            "remove" => 7,
            _ => 8,
        };
        let lock = if (5..=7).contains(&kind) { 2 } else { 1 };
        let mut top = self.operations.top.lock();
        // The namespace is copied once, when first seen, not per command.
        if !top.contains_key(&running.ns) {
            top.insert(running.ns.clone(), Default::default());
        }
        let entry = top
            .get_mut(&running.ns)
            .expect("the namespace was just inserted");
        entry.latencies.record(running.latency_kind, micros);
        let usage = &mut entry.top;
        for index in [0, lock, kind] {
            usage[index].time += micros;
            usage[index].count += 1;
        }
    }
}

/// `top`'s categories, in mongod's order.
const TOP_KINDS: [&str; 9] = [
    "total",
    "readLock",
    "writeLock",
    "queries",
    "getmore",
    "insert",
    "update",
    "remove",
    "commands",
];

/// What is counted per namespace: `top`'s categories and the latency histograms.
#[derive(Debug, Default, Clone, Copy)]
struct NamespaceUsage {
    top: [Usage; TOP_KINDS.len()],
    latencies: Latencies,
}

/// Time (microseconds) and count of one `top` category.
#[derive(Debug, Default, Clone, Copy)]
struct Usage {
    time: u64,
    count: u64,
}

impl OpGuard<'_> {
    /// The entry, for work that reports progress on it.
    pub(crate) fn running(&self) -> &Arc<Running> {
        &self.running
    }
}

/// A command as `currentOp` lists it: where it runs, what it is, whose connection.
#[derive(Clone, Copy)]
pub(crate) struct Started<'a> {
    /// The database it runs against.
    pub(crate) db: &'a str,
    /// Its name (the body's first field).
    pub(crate) name: &'a str,
    /// The whole command document.
    pub(crate) body: &'a bson::RawDocument,
    /// The connection's number.
    pub(crate) connection_id: i64,
    /// The connection's peer address (`host:port`).
    pub(crate) client: &'a str,
}

impl Operations {
    /// Lists `request` as running until the guard drops, as this thread's operation, with
    /// `deadline` (the host and the clock time `maxTimeMS` runs out at) if given.
    pub(crate) fn begin(
        &self,
        request: &Started<'_>,
        deadline: Option<(Arc<dyn crate::host::Host>, i64)>,
    ) -> OpGuard<'_> {
        let opid = self
            .next_opid
            .fetch_add(1, Ordering::Relaxed)
            .wrapping_add(1);
        let collection = match request.body.get(request.name) {
            Ok(Some(bson::RawBsonRef::String(name))) => name,
            _ => "$cmd",
        };
        let running = Arc::new(Running {
            opid,
            started: Instant::now(),
            op: op_kind(request.name),
            latency_kind: Kind::of(request.name),
            ns: format!("{}.{collection}", request.db),
            command: shown_command(request.body),
            connection_id: request.connection_id,
            client: request.client.to_owned(),
            progress: Mutex::new(None),
            interrupt: AtomicU8::new(NOT_INTERRUPTED),
            deadline,
            keys_examined: AtomicU64::new(0),
            docs_examined: AtomicU64::new(0),
            plan_summary: Mutex::new(None),
            #[cfg(test)]
            on_progress: self.on_progress.lock().clone(),
        });
        self.running.lock().insert(opid, Arc::clone(&running));
        let outer = CURRENT.with(|current| current.borrow_mut().replace(Arc::clone(&running)));
        OpGuard {
            operations: self,
            running,
            outer,
        }
    }

    /// killOp: marks operation `opid` to stop at its next check; whether it was running.
    pub(crate) fn kill(&self, opid: i32) -> bool {
        let running = self.running.lock().get(&opid).cloned();
        running.is_some_and(|running| {
            running.interrupt.store(KILLED, Ordering::Release);
            true
        })
    }

    /// How many run now, and of them how many read and how many write (serverStatus
    /// `globalLock.activeClients`).
    pub(crate) fn count(&self) -> Active {
        let running = self.running.lock();
        let writers = running
            .values()
            .filter(|op| matches!(op.op, "insert" | "update" | "remove"))
            .count() as u64;
        let readers = running
            .values()
            .filter(|op| matches!(op.op, "query" | "getmore"))
            .count() as u64;
        Active {
            total: running.len() as u64,
            readers,
            writers,
        }
    }

    /// `top`'s `totals` per namespace: `{total: {time, count}, readLock: ..., ...}`.
    pub(crate) fn top(&self) -> Document {
        let top = self.operations_top();
        let mut out = Document::new();
        for (ns, usage) in top {
            let mut entry = Document::new();
            for (name, usage) in TOP_KINDS.iter().zip(usage) {
                let number = |n: u64| i64::try_from(n).unwrap_or(i64::MAX);
                entry.insert(
                    *name,
                    doc! { "time": number(usage.time), "count": number(usage.count) },
                );
            }
            out.insert(ns, entry);
        }
        out
    }

    /// `$collStats`'s `latencyStats` of `ns` (histograms when asked).
    pub(crate) fn latency_stats(&self, ns: &str, histograms: bool) -> Document {
        let latencies = self
            .top
            .lock()
            .get(ns)
            .map_or_else(Latencies::default, |usage| usage.latencies);
        latencies.report(histograms)
    }

    /// serverStatus `opLatencies`: every command's (histograms when asked), as raw BSON.
    pub(crate) fn op_latencies(&self, histograms: bool) -> Result<bson::RawDocumentBuf, Error> {
        let latencies = *self.latencies.lock();
        latencies
            .report_raw(histograms)
            .map_err(|error| Error::new(ErrorCode::InternalError, error.to_string()))
    }

    fn operations_top(&self) -> Vec<(String, [Usage; TOP_KINDS.len()])> {
        self.top
            .lock()
            .iter()
            .map(|(ns, usage)| (ns.clone(), usage.top))
            .collect()
    }

    /// The entries, in opid order, as `currentOp` reports each.
    pub(crate) fn report(&self, now_millis: i64) -> Vec<Document> {
        let running: Vec<Arc<Running>> = self.running.lock().values().cloned().collect();
        running.iter().map(|op| op.report(now_millis)).collect()
    }
}

impl Running {
    /// See [`check_current`].
    pub(crate) fn check(&self) -> Result<(), Error> {
        if self.interrupt.load(Ordering::Acquire) == KILLED {
            return Err(Error::new(
                ErrorCode::Other(11601, "Interrupted"),
                "operation was interrupted",
            ));
        }
        if let Some((host, deadline_ms)) = &self.deadline
            && host.now_millis() >= *deadline_ms
        {
            return Err(Error::new(
                ErrorCode::Other(50, "MaxTimeMSExpired"),
                "operation exceeded time limit",
            ));
        }
        Ok(())
    }

    /// Adds `keys` index keys and `docs` documents examined by one read loop.
    pub(crate) fn add_examined(&self, keys: u64, docs: u64) {
        self.keys_examined.fetch_add(keys, Ordering::Relaxed);
        self.docs_examined.fetch_add(docs, Ordering::Relaxed);
    }

    /// Index keys and documents examined so far.
    pub(crate) fn examined(&self) -> (u64, u64) {
        (
            self.keys_examined.load(Ordering::Relaxed),
            self.docs_examined.load(Ordering::Relaxed),
        )
    }

    /// The `planSummary` of its read, once planned.
    pub(crate) fn plan_summary(&self) -> Option<String> {
        self.plan_summary.lock().clone()
    }

    /// `currentOp`'s `op`.
    pub(crate) fn op(&self) -> &'static str {
        self.op
    }

    /// The namespace it works on.
    pub(crate) fn ns(&self) -> &str {
        &self.ns
    }

    /// The command as `currentOp` shows it (long bodies truncated).
    pub(crate) fn command_shown(&self) -> bson::Bson {
        bson::Bson::Document(self.command.clone())
    }

    /// The connection it arrived on (0 when embedded).
    pub(crate) fn connection_id(&self) -> i64 {
        self.connection_id
    }

    /// The client's address with its port (empty when embedded).
    pub(crate) fn client(&self) -> &str {
        &self.client
    }

    /// The client's host, without its port (as mongod's profiler gives `client`).
    pub(crate) fn client_host(&self) -> &str {
        self.client
            .rsplit_once(':')
            .map_or(self.client.as_str(), |(host, _)| host)
    }

    /// Whole milliseconds since it began.
    pub(crate) fn millis(&self) -> i64 {
        i64::try_from(self.started.elapsed().as_millis()).unwrap_or(i64::MAX)
    }

    fn report(&self, now_millis: i64) -> Document {
        let elapsed = self.started.elapsed();
        let micros = i64::try_from(elapsed.as_micros()).unwrap_or(i64::MAX);
        let mut out = doc! {
            "type": "op",
            "desc": format!("conn{}", self.connection_id),
            "connectionId": self.connection_id,
            "active": true,
            "currentOpTime": bson::DateTime::from_millis(now_millis)
                .try_to_rfc3339_string()
                .unwrap_or_default(),
            "opid": self.opid,
            "secs_running": micros / 1_000_000,
            "microsecs_running": micros,
            "op": self.op,
            "ns": self.ns.clone(),
            "redacted": false,
            "command": self.command.clone(),
            "numYields": 0,
            "locks": {},
            "waitingForLock": false,
            "lockStats": {},
        };
        if !self.client.is_empty() {
            out.insert("client", self.client.clone());
        }
        if let Some(summary) = self.plan_summary() {
            out.insert("planSummary", summary);
        }
        if self.interrupt.load(Ordering::Relaxed) == KILLED {
            out.insert("killPending", true);
        }
        if let Some(progress) = *self.progress.lock() {
            let percent = (progress.done * 100)
                .checked_div(progress.total)
                .unwrap_or(100);
            out.insert(
                "msg",
                format!(
                    "{msg} {msg}: {done}/{total} {percent}%",
                    msg = progress.msg,
                    done = progress.done,
                    total = progress.total,
                ),
            );
            out.insert(
                "progress",
                doc! {
                    "done": i64::try_from(progress.done).unwrap_or(i64::MAX),
                    "total": i64::try_from(progress.total).unwrap_or(i64::MAX),
                },
            );
        }
        out
    }
}

impl BuildObserver for Running {
    fn progress(
        &self,
        phase: BuildPhase,
        done: u64,
        total: u64,
    ) -> Result<(), crate::store::StoreError> {
        let progress = Progress {
            msg: phase.message(),
            done,
            total,
        };
        *self.progress.lock() = Some(progress);
        #[cfg(test)]
        if let Some(hook) = &self.on_progress {
            hook(progress);
        }
        self.check().map_err(crate::store::StoreError::Rejected)
    }
}

/// `currentOp`'s `op` for a command, as mongod names it.
fn op_kind(name: &str) -> &'static str {
    match name {
        "insert" => "insert",
        "find" => "query",
        "update" => "update",
        "delete" => "remove",
        "getMore" => "getmore",
        _ => "command",
    }
}

/// The command as `currentOp` shows it: whole up to [`COMMAND_COPY_MAX`] bytes, otherwise
/// its start as a string under `$truncated`, and the `comment` if any.
fn shown_command(body: &bson::RawDocument) -> Document {
    let bytes = body.as_bytes();
    if bytes.len() <= COMMAND_COPY_MAX
        && let Ok(whole) = Document::try_from(body)
    {
        return whole;
    }
    let mut out = Document::new();
    let start = match body.iter().next() {
        Some(Ok((name, value))) => format!("{{ {name}: {value:?}, ... }}"),
        _ => String::new(),
    };
    let start: String = start.chars().take(COMMAND_COPY_MAX).collect();
    out.insert("$truncated", start);
    if let Ok(Some(comment)) = body.get("comment")
        && let Ok(comment) = bson::Bson::try_from(bson::RawBson::from(comment))
    {
        out.insert("comment", comment);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::{ConnectionContext, Engine, EngineOptions};
    use crate::{FixedHost, StartupOptions};
    use bson::{RawDocumentBuf, rawdoc};

    fn engine() -> Engine {
        Engine::new(EngineOptions {
            host: Arc::new(FixedHost::default()),
            startup: StartupOptions::default(),
            connections_max: 10,
            ttl_interval: None,
        })
    }

    fn run(engine: &Engine, db: &str, cmd: RawDocumentBuf) -> Document {
        let reply = engine.run_command(db, &cmd, &ConnectionContext::default());
        Document::try_from(&reply).expect("reply")
    }

    fn inprog(reply: &Document) -> Vec<Document> {
        reply
            .get_array("inprog")
            .expect("inprog")
            .iter()
            .map(|op| op.as_document().expect("op").clone())
            .collect()
    }

    #[test]
    fn current_op_lists_itself_and_filters() {
        let engine = engine();
        let reply = run(&engine, "admin", rawdoc! { "currentOp": 1 });
        let ops = inprog(&reply);
        assert_eq!(ops.len(), 1, "{reply:?}");
        let me = &ops[0];
        assert_eq!(me.get_str("op").ok(), Some("command"));
        assert_eq!(me.get_str("ns").ok(), Some("admin.$cmd"));
        assert_eq!(me.get_bool("active").ok(), Some(true));
        assert!(me.get_i32("opid").is_ok(), "{me:?}");
        assert_eq!(
            me.get_document("command").ok(),
            Some(&doc! { "currentOp": 1 })
        );
        // The other fields filter.
        let reply = run(&engine, "admin", rawdoc! { "currentOp": 1, "op": "insert" });
        assert_eq!(inprog(&reply), Vec::<Document>::new());
        let reply = run(
            &engine,
            "admin",
            rawdoc! { "currentOp": 1, "$all": true, "command.currentOp": { "$exists": true } },
        );
        assert_eq!(inprog(&reply).len(), 1);
        // Only on admin, as mongod.
        let reply = run(&engine, "db", rawdoc! { "currentOp": 1 });
        assert_eq!(reply.get_i32("code").ok(), Some(13), "{reply:?}");
        // Nothing stays listed after its command.
        let reply = run(&engine, "admin", rawdoc! { "currentOp": 1 });
        assert_eq!(inprog(&reply).len(), 1);
        assert!(engine.operations.running.lock().is_empty());
    }

    /// mongosh's `db.currentOp()` runs `$currentOp` on admin and `$match`es its filter.
    #[test]
    fn the_current_op_stage_lists_operations() {
        let engine = engine();
        let reply = run(
            &engine,
            "admin",
            rawdoc! { "aggregate": 1, "pipeline": [
                { "$currentOp": { "allUsers": true, "idleConnections": false } },
                { "$match": { "command.aggregate": 1 } },
            ], "cursor": {} },
        );
        let batch = reply
            .get_document("cursor")
            .and_then(|c| c.get_array("firstBatch"))
            .expect("batch");
        assert_eq!(batch.len(), 1, "{reply:?}");
        let op = batch[0].as_document().expect("op");
        assert_eq!(op.get_str("ns").ok(), Some("admin.$cmd"));
        assert_eq!(op.get_str("op").ok(), Some("command"));
        for (db, pipeline, code) in [
            ("db", rawdoc! { "$currentOp": {} }, 73),
            ("admin", rawdoc! { "$currentOp": 1 }, 9),
            ("admin", rawdoc! { "$currentOp": { "frob": true } }, 40415),
            ("admin", rawdoc! { "$currentOp": { "allUsers": 1 } }, 14),
        ] {
            let mut stages = bson::RawArrayBuf::new();
            stages.push(pipeline.clone());
            let mut cmd = rawdoc! { "aggregate": 1, "cursor": {} };
            cmd.append(bson::raw::cstr!("pipeline"), stages);
            let reply = run(&engine, db, cmd);
            assert_eq!(
                reply.get_i32("code").ok(),
                Some(code),
                "{db} {pipeline:?}: {reply:?}"
            );
        }
    }

    #[test]
    fn large_commands_are_shown_truncated() {
        let body =
            rawdoc! { "insert": "c", "documents": [{ "pad": "x".repeat(4000) }], "comment": "big" };
        let shown = shown_command(&body);
        assert!(
            shown
                .get_str("$truncated")
                .is_ok_and(|s| s.starts_with("{ insert:")),
            "{shown:?}"
        );
        assert_eq!(shown.get_str("comment").ok(), Some("big"));
        let small = rawdoc! { "find": "c", "filter": { "a": 1 } };
        let shown = shown_command(&small);
        assert_eq!(shown, doc! { "find": "c", "filter": { "a": 1 } });
    }

    /// An index build is listed with its progress while it runs: `currentOp` is run from
    /// inside the build (the progress hook), on the building thread, which holds the write
    /// gate (so `currentOp` must not need it).
    #[test]
    fn an_index_build_shows_its_progress() {
        let engine: &'static Engine = Box::leak(Box::new(engine()));
        let docs: Vec<RawDocumentBuf> = (0..2000)
            .map(|i| rawdoc! { "_id": i, "k": i % 7 })
            .collect();
        let mut insert = rawdoc! { "insert": "c" };
        let mut array = bson::RawArrayBuf::new();
        for doc in &docs {
            array.push(doc.clone());
        }
        insert.append(bson::raw::cstr!("documents"), array);
        assert_eq!(run(engine, "db", insert).get_f64("ok").ok(), Some(1.0));
        type Seen = Vec<(Progress, Vec<Document>)>;
        let seen: Arc<Mutex<Seen>> = Arc::default();
        let record = Arc::clone(&seen);
        *engine.operations.on_progress.lock() = Some(Arc::new(move |progress: Progress| {
            if progress.msg == BuildPhase::Scanning.message() && progress.done == 1024 {
                let reply = run(
                    engine,
                    "admin",
                    rawdoc! { "currentOp": 1, "command.createIndexes": "c" },
                );
                record.lock().push((progress, inprog(&reply)));
            }
            if progress.msg == BuildPhase::Loading.message() {
                record.lock().push((progress, Vec::new()));
            }
        }));
        let reply = run(
            engine,
            "db",
            rawdoc! { "createIndexes": "c", "indexes": [{ "key": { "k": 1 }, "name": "k_1" }] },
        );
        assert_eq!(reply.get_f64("ok").ok(), Some(1.0), "{reply:?}");
        let seen = seen.lock();
        assert_eq!(seen.len(), 3, "{seen:?}");
        let (_, ops) = &seen[0];
        assert_eq!(ops.len(), 1, "{ops:?}");
        let op = &ops[0];
        assert_eq!(op.get_str("ns").ok(), Some("db.c"));
        assert_eq!(
            op.get_document("progress").ok(),
            Some(&doc! { "done": 1024_i64, "total": 2000_i64 })
        );
        assert_eq!(
            op.get_str("msg").ok(),
            Some(
                "Index Build: scanning collection Index Build: scanning collection: 1024/2000 51%"
            )
        );
        // Loading: from none of the 2,000 keys to all of them.
        assert_eq!((seen[1].0.done, seen[1].0.total), (0, 2000));
        assert_eq!((seen[2].0.done, seen[2].0.total), (2000, 2000));
    }
}
