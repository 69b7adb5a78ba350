//! The database profiler: per-database levels (0 off, 1 slow operations, 2 all) and the
//! global `slowms`/`sampleRate`, set by the `profile` command, and the `<db>.system.profile`
//! documents it writes after each command, in mongod's shape (`op`, `ns`, `command`,
//! `keysExamined`, `docsExamined`, `nreturned`, `responseLength`, `millis`, `planSummary`,
//! `ts`, `client`, `allUsers`, `user`); the counts are what the command's read loops
//! examined (`cursor::Deadline` counts them).
//!
//! Invariants:
//! - A database's profile documents describe only commands that ran on that database, and
//!   nothing that reads or writes `system.profile` itself is profiled (so profiling never
//!   feeds on itself).
//! - A `filter` replaces `slowms` and `sampleRate` for its database, as in mongod: the
//!   profile document is written when the filter matches it.
//! - Sampling is a deterministic fraction (the running count times `sampleRate` crossing
//!   an integer), not a coin: the same operations give the same profile.
//! - Profiling never blocks a command: while `fsyncLock` holds writes, nothing is written.
//! - `system.profile` is bounded as mongod's capped 1 MB collection is: past
//!   [`PROFILE_DOCUMENTS_MAX`] documents the oldest are removed.

use crate::engine::Engine;
use crate::error::Error;
use crate::store::Namespace;
use bson::{Bson, Document, doc};
use parking_lot::Mutex;
use std::collections::BTreeMap;

/// mongod's default `slowms`.
const SLOW_MS_DEFAULT: i64 = 100;

/// The most documents a `system.profile` keeps (mongod caps it at 1 MB).
pub(crate) const PROFILE_DOCUMENTS_MAX: u64 = 1000;

/// The profiler's settings.
#[derive(Debug)]
pub(crate) struct Profiler {
    inner: Mutex<Settings>,
}

#[derive(Debug)]
struct Settings {
    /// Per database: its level and filter (absent: level 0, no filter).
    databases: BTreeMap<String, (i32, Option<Document>)>,
    slow_ms: i64,
    sample_rate: f64,
    /// Operations seen by sampling so far.
    sampled: u64,
}

impl Default for Profiler {
    fn default() -> Profiler {
        Profiler {
            inner: Mutex::new(Settings {
                databases: BTreeMap::new(),
                slow_ms: SLOW_MS_DEFAULT,
                sample_rate: 1.0,
                sampled: 0,
            }),
        }
    }
}

/// A `profile` command's changes (each `None` left as it is).
#[derive(Debug, Default)]
pub(crate) struct Change {
    /// `-1` reads only.
    pub(crate) level: i32,
    pub(crate) slow_ms: Option<i64>,
    pub(crate) sample_rate: Option<f64>,
    /// `Some(None)`: `filter: "unset"`.
    pub(crate) filter: Option<Option<Document>>,
}

impl Profiler {
    /// Applies `change` to database `db` and returns the settings before it, as the
    /// `profile` command reports them (`was`, `slowms`, `sampleRate`, `filter`).
    pub(crate) fn set(&self, db: &str, change: Change) -> Document {
        let mut settings = self.inner.lock();
        let (level, filter) = settings.databases.get(db).cloned().unwrap_or((0, None));
        let mut before = doc! {
            "was": level,
            "slowms": i32::try_from(settings.slow_ms).map_or(Bson::Int64(settings.slow_ms), Bson::Int32),
            "sampleRate": settings.sample_rate,
        };
        if let Some(filter) = &filter {
            before.insert("filter", filter.clone());
        }
        if let Some(slow_ms) = change.slow_ms {
            settings.slow_ms = slow_ms;
        }
        if let Some(rate) = change.sample_rate {
            settings.sample_rate = rate;
        }
        let level = if change.level >= 0 {
            change.level
        } else {
            level
        };
        let filter = change.filter.unwrap_or(filter);
        if level == 0 && filter.is_none() {
            settings.databases.remove(db);
        } else {
            settings.databases.insert(db.to_owned(), (level, filter));
        }
        before
    }

    /// Whether an operation of `millis` on `db` is profiled, and the filter that decides
    /// when there is one (its match is checked against the profile document).
    /// The global `slowms`: operations at least this long are logged as slow.
    fn slow_ms(&self) -> i64 {
        self.inner.lock().slow_ms
    }

    fn decide(&self, db: &str, millis: i64) -> Decision {
        let mut settings = self.inner.lock();
        let Some((level, filter)) = settings.databases.get(db).cloned() else {
            return Decision::No;
        };
        if level == 0 {
            return Decision::No;
        }
        if let Some(filter) = filter {
            return Decision::IfMatches(filter);
        }
        if level == 1 && millis < settings.slow_ms {
            return Decision::No;
        }
        let rate = settings.sample_rate;
        let seen = settings.sampled;
        settings.sampled += 1;
        let crossed = ((seen + 1) as f64 * rate).floor() > (seen as f64 * rate).floor();
        if crossed { Decision::Yes } else { Decision::No }
    }
}

enum Decision {
    No,
    Yes,
    IfMatches(Document),
}

/// What a finished command left for the profiler.
pub(crate) struct Finished<'a> {
    pub(crate) db: &'a str,
    pub(crate) running: &'a crate::operations::Running,
    pub(crate) millis: i64,
    pub(crate) nreturned: Option<u64>,
    pub(crate) response_length: Option<u64>,
    pub(crate) user: String,
}

/// Writes `finished`'s profile document when its database's settings ask for it. Errors
/// are the profiler's own (a failed write of `system.profile`): they never fail the
/// command, which has already run; the caller drops them.
pub(crate) fn record(engine: &Engine, finished: &Finished<'_>) -> Result<(), Error> {
    let ns = finished.running.ns();
    if ns.ends_with(".system.profile") || engine.fsync_lock.count() > 0 {
        return Ok(());
    }
    if let Bson::Document(command) = finished.running.command_shown()
        && command.get_str("find").ok() == Some("system.profile")
    {
        return Ok(());
    }
    let decision = engine.profiler.decide(finished.db, finished.millis);
    if matches!(decision, Decision::No) {
        return Ok(());
    }
    // mongod writes these counts as 32-bit integers while they fit.
    let long = |n: u64| {
        i32::try_from(n).map_or_else(
            |_| Bson::Int64(i64::try_from(n).unwrap_or(i64::MAX)),
            Bson::Int32,
        )
    };
    let mut profile = doc! {
        "op": finished.running.op(),
        "ns": ns,
        "command": finished.running.command_shown(),
    };
    // mongod's order: the execution counts, then what was returned, the time, the plan.
    let (keys, docs) = finished.running.examined();
    let read = matches!(finished.running.op(), "query" | "getmore");
    if read || keys > 0 || docs > 0 {
        profile.insert("keysExamined", long(keys));
        profile.insert("docsExamined", long(docs));
    }
    if let Some(n) = finished.nreturned {
        profile.insert("nreturned", long(n));
    }
    if let Some(n) = finished.response_length {
        profile.insert("responseLength", long(n));
    }
    profile.insert("millis", long(finished.millis.unsigned_abs()));
    if let Some(summary) = finished.running.plan_summary() {
        profile.insert("planSummary", summary);
    }
    profile.extend(doc! {
        "ts": bson::DateTime::from_millis(engine.host.now_millis()),
        "client": finished.running.client_host(),
        "allUsers": [],
        "user": finished.user.as_str(),
    });
    let raw = bson::RawDocumentBuf::try_from(&profile)
        .map_err(|e| Error::new(crate::error::ErrorCode::InternalError, e.to_string()))?;
    if let Decision::IfMatches(filter) = decision {
        let filter = bson::RawDocumentBuf::try_from(&filter)
            .map_err(|e| Error::new(crate::error::ErrorCode::InternalError, e.to_string()))?;
        if !query::Filter::parse(&filter)?.try_matches(&raw)? {
            return Ok(());
        }
    }
    let target = Namespace::new(finished.db, "system.profile");
    // The store keys records by `_id`; mongod's profile documents have none, so the one
    // given here is the profiler's (an ObjectId, first as mongod would put it).
    let mut stored = bson::RawDocumentBuf::new();
    stored.append(
        bson::raw::cstr!("_id"),
        engine.ids.object_id(engine.host.now_millis()),
    );
    for element in raw.iter_elements() {
        let element = element
            .map_err(|e| Error::new(crate::error::ErrorCode::InternalError, e.to_string()))?;
        let value = element
            .value()
            .map_err(|e| Error::new(crate::error::ErrorCode::InternalError, e.to_string()))?;
        stored.append(element.key(), value);
    }
    let store = engine.store();
    let mut writer = store.write()?;
    writer.insert(&target, &stored)?;
    let count = writer.collection(&target)?.map_or(0, |meta| meta.count);
    if count > PROFILE_DOCUMENTS_MAX {
        let excess = usize::try_from(count - PROFILE_DOCUMENTS_MAX).unwrap_or(usize::MAX);
        let mut taken = 0usize;
        let doomed = writer.scan_while(&target, None, |_, _| {
            taken += 1;
            Ok(taken <= excess)
        })?;
        for (rid, _) in doomed {
            writer.delete(&target, rid)?;
        }
    }
    // Not waited for: a profile document is a diagnostic, durable with the next sync.
    writer.commit_nowait()?;
    Ok(())
}

/// mongod's id of the slow operation log line (`"msg":"Slow query"`).
const SLOW_QUERY_LOG_ID: i32 = 51803;

/// Logs `finished` as mongod logs an operation of at least `slowms` (profiling on or off):
/// one `COMMAND` line, `"msg":"Slow query"`, whose `attr` has the command as it ran (with
/// its `comment`), the plan, the counts, the reply's size and `durationMillis`.
pub(crate) fn log_slow(engine: &Engine, finished: &Finished<'_>) {
    if finished.millis < engine.profiler.slow_ms() {
        return;
    }
    let running = finished.running;
    let long = |n: u64| i64::try_from(n).unwrap_or(i64::MAX);
    let mut attr = doc! {
        "type": "command",
        "ns": running.ns(),
        "command": running.command_shown(),
    };
    if let Some(summary) = running.plan_summary() {
        attr.insert("planSummary", summary);
    }
    let (keys, docs) = running.examined();
    if matches!(running.op(), "query" | "getmore") || keys > 0 || docs > 0 {
        attr.insert("keysExamined", long(keys));
        attr.insert("docsExamined", long(docs));
    }
    attr.insert("numYields", 0);
    if let Some(n) = finished.nreturned {
        attr.insert("nreturned", long(n));
    }
    if let Some(n) = finished.response_length {
        attr.insert("reslen", long(n));
    }
    if !running.client().is_empty() {
        attr.insert("remote", running.client());
    }
    attr.insert("protocol", "op_msg");
    attr.insert("durationMillis", finished.millis);
    let ctx = format!("conn{}", running.connection_id());
    let line = crate::recent_log::LogLine {
        millis: engine.host.now_millis(),
        severity: "I",
        component: "COMMAND",
        id: SLOW_QUERY_LOG_ID,
        ctx: &ctx,
        message: "Slow query",
    };
    engine.recent_log.record_attr(line, &attr);
}
