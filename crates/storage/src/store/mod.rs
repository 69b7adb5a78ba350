//! Durable storage for the engine: the data file (pager + B+trees), the write-ahead log,
//! the catalog, recovery and checkpoints.
//!
//! Lifecycle of a [`Store`]:
//!
//! ```text
//!   Store::open ── pager opened at its last checkpoint; log opened; records after
//!                  checkpoint_lsn replayed ──▶ open
//!   open ──Store::write → Writer::commit──▶ open   (logged, group-committed)
//!   open ──Store::checkpoint──▶ open               (data file durable, log truncated)
//!   open ──Store::close──▶ closed                  (checkpoint; the log file removed)
//!   open ──any failed write or sync──▶ failed      (every later write refused; reopen)
//! ```
//!
//! Lock order (see docs/ARCHITECTURE.md): the write gate, then the pager's writer lock,
//! then the pager's published-snapshot lock; the log's own locks are leaves. Readers take
//! only the published-snapshot lock, briefly, so readers never wait for writers.
//!
//! Invariants:
//! - A checkpoint records LSN `L` only while holding the write gate, after the log is
//!   durable through `L`, so the data file holds exactly the changes of records `<= L`.
//! - A new log starts at `checkpoint_lsn + 1`, so no record after a checkpoint is skipped.
//! - After an I/O failure nothing is written again until the store is reopened.

mod catalog;
mod events;
mod indexes;
mod log;
mod meta_cache;
pub mod oplog;
mod records;
mod runs;
mod txn;
mod validation;

pub use catalog::{CollectionMeta, IndexMeta, Namespace};
pub use events::{Event, EventSink, Severity};
pub use indexes::{BuildObserver, BuildPhase, IndexCheck, KeyRange, WalkPosition, WalkTarget};
pub use records::{Compressor, Records};
pub use txn::{Reader, Record, Writer};

use parking_lot::{Condvar, Mutex};
use std::ops::Bound;
use std::path::Path;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Weak};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};
use wal::{Dir, Lsn, OsDir, Wal, WalOptions, crashpoint};

/// Pages freed since the last checkpoint below which space alone never triggers one (8 MiB).
const CHECKPOINT_PENDING_PAGES_MIN: u64 = 2048;

/// Data-file bytes written since the last sync, or waiting in the pager's write-back
/// buffer, at which the checkpointer writes and syncs them ahead of the checkpoint
/// (`Pager::sync_ahead`). A commit's log sync queues behind a
/// data-file sync running on the same device, so the syncs are kept small. The gate's
/// 6,144 sequential 16 KiB inserts (PLAN D30), longest / p99 insert: only before the
/// checkpoint 161 / 6.1 ms; every 4 MiB 27-34 / 9-10 ms; every 16 MiB 25-26 / 7-8 ms.
const SYNC_AHEAD_BYTES: u64 = 16 << 20;

/// What a duplicate key error reports.
#[derive(Debug, Clone, PartialEq)]
pub struct DuplicateKey {
    /// The collection.
    pub ns: Namespace,
    /// The index name.
    pub index: String,
    /// The key as MongoDB prints it (`{ a: 1 }`).
    pub shown: String,
    /// The index's key pattern (`keyPattern` of the error).
    pub pattern: bson::Document,
    /// The key's values by field (`keyValue`).
    pub value: bson::Document,
}

/// A storage failure, mapped to a MongoDB error by the command layer.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[non_exhaustive]
pub enum StoreError {
    /// A document with an equal key exists in a unique index (`_id_` or a secondary one).
    #[error(
        "E11000 duplicate key error collection: {} index: {} dup key: {}",
        .0.ns,
        .0.index,
        .0.shown
    )]
    DuplicateKey(Box<DuplicateKey>),
    /// A document an index cannot hold (171 parallel arrays, 16766 an array in a hashed
    /// index, ...), or an index build refused: mongod's error, nothing changed.
    #[error("{0}")]
    Rejected(crate::error::Error),
    /// The collection does not exist.
    #[error("ns not found: {0}")]
    NamespaceNotFound(Namespace),
    /// The collection exists already.
    #[error("Collection {0} already exists.")]
    NamespaceExists(Namespace),
    /// Bytes in the data file or log are damaged.
    #[error("data corruption: {0}")]
    Corrupt(String),
    /// A read, write or sync failed.
    #[error("storage i/o failure: {0}")]
    Io(String),
    /// The file is not a database at all (not damage: nothing was read as pages).
    #[error("{0}")]
    NotDatabase(String),
    /// An earlier write or sync failed: the database refuses every command, reads
    /// included (what it holds in memory may include writes whose outcome is unknown),
    /// until it is reopened and recovers its durable state.
    #[error(
        "the database stopped after an i/o failure and refuses reads and writes until it \
         has recovered its durable state (the server does so at the next command; an \
         embedded database must be reopened)"
    )]
    Failed,
    /// The disk is full: the write was not applied (nothing of it reached the log).
    #[error("{0}")]
    OutOfDiskSpace(String),
    /// A write or sync of the log failed after the write's record may have reached it:
    /// whether it is applied is decided by recovery. Never sent as a definitive error:
    /// the server closes the connection instead, as mongod's fail-stop does.
    #[error("the outcome of this write is unknown: {0}")]
    OutcomeUnknown(String),
    /// The store was closed.
    #[error("the database is closed")]
    Closed,
    /// Another opener holds the database file (`wal::LockError`): a second opener
    /// would corrupt it, so it is refused. Worded as mongod's DBPathInUse.
    #[error(
        "Unable to lock the database file {path} ({reason}). Another multiforadb server or \
         program already has it open; stop that one first"
    )]
    InUse {
        /// The data file.
        path: String,
        /// Who holds it, or why the lock could not be taken.
        reason: String,
    },
}

impl StoreError {
    fn in_use(path: &str, error: &wal::LockError) -> StoreError {
        let reason = match error {
            wal::LockError::Held { .. } => error.to_string(),
            wal::LockError::Unsupported(_) => format!(
                "{error}; a file system without working locks (some network and FUSE \
                 mounts) cannot keep a second opener out, so MultiforaDB does not open \
                 databases there"
            ),
        };
        StoreError::InUse {
            path: path.to_owned(),
            reason,
        }
    }

    fn duplicate(ns: &Namespace, doc: &bson::RawDocument) -> StoreError {
        let id = match doc.get("_id") {
            Ok(Some(bson::raw::RawBsonRef::Double(x))) if x.is_finite() && x.fract() == 0.0 => {
                format!("{x:.1}")
            }
            // mongod prints ObjectIds with single quotes.
            Ok(Some(bson::raw::RawBsonRef::ObjectId(oid))) => format!("ObjectId('{oid}')"),
            Ok(Some(value)) => bson::Bson::try_from(bson::RawBson::from(value))
                .map_or_else(|_| "?".to_owned(), |v| v.to_string()),
            _ => "null".to_owned(),
        };
        let value = match doc.get("_id") {
            Ok(Some(value)) => bson::Bson::try_from(value).unwrap_or(bson::Bson::Null),
            _ => bson::Bson::Null,
        };
        StoreError::DuplicateKey(Box::new(DuplicateKey {
            ns: ns.clone(),
            index: "_id_".to_owned(),
            shown: format!("{{ _id: {id} }}"),
            pattern: bson::doc! { "_id": 1 },
            value: bson::doc! { "_id": value },
        }))
    }
}

impl From<pager::Error> for StoreError {
    fn from(error: pager::Error) -> StoreError {
        match error {
            pager::Error::Corrupt { .. } | pager::Error::Version { .. } => {
                StoreError::Corrupt(error.to_string())
            }
            pager::Error::NotDatabase => StoreError::NotDatabase(error.to_string()),
            pager::Error::PreviousIo => StoreError::Failed,
            // Data-file writes happen before the log record is appended or inside the
            // transaction's own commit: nothing of the write is logged yet.
            pager::Error::Io(cause) if is_disk_full(&cause) => StoreError::OutOfDiskSpace(format!(
                "the write was not applied: the disk is full ({cause})"
            )),
            other => StoreError::Io(other.to_string()),
        }
    }
}

impl From<btree::Error> for StoreError {
    fn from(error: btree::Error) -> StoreError {
        match error {
            btree::Error::Pager(inner) => inner.into(),
            other => StoreError::Corrupt(other.to_string()),
        }
    }
}

impl From<wal::WalError> for StoreError {
    fn from(error: wal::WalError) -> StoreError {
        match error {
            wal::WalError::Corrupt { .. } => StoreError::Corrupt(error.to_string()),
            wal::WalError::Poisoned => StoreError::Failed,
            other => StoreError::Io(other.to_string()),
        }
    }
}

/// Advice for a log that cannot belong to its data file.
fn what_to_do(dir: &Arc<dyn Dir>, name: &str, wal_name: &str) -> String {
    format!(
        "If {} was closed cleanly, its log is not needed: move {} aside and open again. \
         Otherwise the writes after its last checkpoint are in that log and cannot be \
         replayed onto this file; keep both files for inspection",
        dir.display(name),
        dir.display(wal_name)
    )
}

/// A log whose header is unreadable (empty, or not a log) is reported with what to do,
/// never replaced: it may be the only copy of acknowledged writes.
fn foreign_log(dir: &Arc<dyn Dir>, name: &str, wal_name: &str, error: wal::WalError) -> StoreError {
    match error {
        wal::WalError::Corrupt {
            offset: 0, reason, ..
        } => StoreError::Corrupt(format!(
            "the log {} is not a MultiforaDB log ({reason}). {}",
            dir.display(wal_name),
            what_to_do(dir, name, wal_name)
        )),
        wal::WalError::Io(cause) => StoreError::Io(format!(
            "cannot open the log {}: {cause}",
            dir.display(wal_name)
        )),
        other => StoreError::from(other),
    }
}

/// Whether an OS error means the disk (or the user's quota) is full.
fn is_disk_full(error: &std::io::Error) -> bool {
    const ENOSPC: i32 = 28;
    const EDQUOT: i32 = 122;
    matches!(error.raw_os_error(), Some(ENOSPC | EDQUOT))
}

/// What a committer is told when its log commit failed: a definite "not applied" only
/// when no byte of its record reached the file, else "outcome unknown".
fn commit_failure(error: wal::WalError) -> StoreError {
    match error {
        wal::WalError::NotWritten(cause) if is_disk_full(&cause) => StoreError::OutOfDiskSpace(
            format!("the write was not applied: the disk is full ({cause})"),
        ),
        wal::WalError::NotWritten(cause) => {
            StoreError::Io(format!("the write was not applied: {cause}"))
        }
        wal::WalError::Corrupt { .. } => StoreError::Corrupt(error.to_string()),
        other => StoreError::OutcomeUnknown(other.to_string()),
    }
}

/// How a store runs.
#[derive(Clone, Debug)]
pub struct StoreOptions {
    /// Time between background checkpoints (`None`: only on log size and on close).
    pub checkpoint_interval: Option<Duration>,
    /// Log bytes after which a checkpoint runs.
    pub checkpoint_log_bytes: u64,
    /// Pager options (mmap, dirty memory bound).
    pub pager: pager::Options,
    /// Log options (`lsn_first` is set by the store; blocks are stored raw by default).
    pub wal: WalOptions,
    /// How collections created without a `storageEngine` option store their records.
    pub compressor: Compressor,
    /// Asked every [`GATE_CHECK_MS`] while a writer waits for the write gate: an error
    /// ends the wait with it (`StoreError::Rejected`). The engine passes its check of
    /// the thread's operation (killOp, maxTimeMS); the default never interrupts.
    pub wait_check: WaitCheck,
}

/// See [`StoreOptions::wait_check`].
pub type WaitCheck = fn() -> Result<(), crate::error::Error>;

impl Default for StoreOptions {
    fn default() -> Self {
        StoreOptions {
            checkpoint_interval: Some(Duration::from_secs(60)),
            checkpoint_log_bytes: 64 << 20,
            pager: pager::Options::default(),
            // The log stores blocks raw (D46): on this hardware writing and syncing a
            // block's bytes costs less than compressing them, and the log is transient.
            wal: WalOptions {
                codec: wal::Codec::Raw,
                ..WalOptions::default()
            },
            compressor: Compressor::default(),
            wait_check: || Ok(()),
        }
    }
}

/// What `Store::open` found and did.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct OpenReport {
    /// Log records replayed onto the checkpoint.
    pub replayed: u64,
    /// Whether the log ended in a torn block (cut off).
    pub torn_tail: bool,
    /// Records at the log's end of a transaction whose last record never reached the log
    /// (it was never acknowledged): not applied, and covered by a checkpoint at open.
    pub unfinished: u64,
    /// What recovery dropped or repaired, in words: logged at open and shown by
    /// `getLog: "startupWarnings"`.
    pub warnings: Vec<String>,
}

#[derive(Default)]
struct Signal {
    stop: bool,
    /// A checkpoint is due.
    wake: bool,
    /// The data file has `SYNC_AHEAD_BYTES` unsynced.
    sync: bool,
    /// The log's preallocated space is under a chunk: grow it before a commit must.
    grow: bool,
}

/// What wakes the checkpointer thread. It lives outside the `Store` so that the thread
/// can sleep on it holding only a weak reference: a dropped `Store` is freed (and its
/// file lock released) at once, not when the thread's interval next ends.
#[derive(Default)]
struct Wakeup {
    signal: Mutex<Signal>,
    cv: Condvar,
}

/// How often a writer waiting at the write gate checks its operation's interruption.
const GATE_CHECK_MS: u64 = 10;

/// The database's storage: one data file and its log.
pub struct Store {
    pager: pager::Pager,
    wal: Wal,
    dir: Arc<dyn Dir>,
    wal_name: String,
    gate: Mutex<()>,
    failed: AtomicBool,
    closed: AtomicBool,
    log_bytes: AtomicU64,
    uuid_seq: AtomicU64,
    options: StoreOptions,
    wakeup: Arc<Wakeup>,
    checkpointer: Mutex<Option<JoinHandle<()>>>,
    report: OpenReport,
    /// Decoded catalog entries of the newest snapshot read.
    metas: meta_cache::MetaCache,
    /// Threads an index build scans with (0: one per core, at most four).
    build_threads: std::sync::atomic::AtomicUsize,
    /// The oplog's clock: the last `ts` handed out (`oplog`).
    oplog_clock: oplog::Clock,
    /// The replica-set term new oplog entries carry (`t`).
    term: std::sync::atomic::AtomicI64,
    /// Whether writers add oplog entries when the oplog exists (`set_oplog_writes`).
    oplog_writes: AtomicBool,
    /// Logged commits so far, and the condition waiters for the next one wait on
    /// (`wait_for_commit`: tailable cursors).
    commits: (Mutex<u64>, Condvar),
    /// Compiled collection validators (`validation`).
    validators: validation::Validators,
    /// Where the lines it reports go (`events`).
    events: events::Events,
}

impl std::fmt::Debug for Store {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Store")
            .field("wal_name", &self.wal_name)
            .finish_non_exhaustive()
    }
}

impl Store {
    /// Opens (or creates) the database file at `path`; its log is `<path>-wal` beside it.
    pub fn open_path(path: &Path, options: StoreOptions) -> Result<Arc<Store>, StoreError> {
        let name = path
            .file_name()
            .and_then(|n| n.to_str())
            .ok_or_else(|| StoreError::Io(format!("not a file path: {}", path.display())))?;
        let parent = match path.parent() {
            Some(p) if !p.as_os_str().is_empty() => p.to_path_buf(),
            _ => std::path::PathBuf::from("."),
        };
        Store::open(Arc::new(OsDir::new(parent)), name, options)
    }

    /// Opens (or creates) database file `name` in `dir`, replaying its log.
    pub fn open(
        dir: Arc<dyn Dir>,
        name: &str,
        options: StoreOptions,
    ) -> Result<Arc<Store>, StoreError> {
        let file = dir
            .open(name)
            .map_err(|e| StoreError::Io(format!("cannot open {}: {e}", dir.display(name))))?;
        // Claimed before anything is read: recovery writes (it zeroes a torn log tail).
        file.try_lock()
            .map_err(|error| StoreError::in_use(&dir.display(name), &error))?;
        Store::open_locked(dir, name, file, options)
    }

    /// The directory the database's files live in and the data file's name there:
    /// temporary files (a sort's spill, `crate::spill`) go beside it.
    pub fn files(&self) -> (&Arc<dyn Dir>, &str) {
        let name = self.wal_name.strip_suffix("-wal").unwrap_or(&self.wal_name);
        (&self.dir, name)
    }

    /// Recovers a failed store in place of a restart: a new store over the same files,
    /// reopened from what is durable (the data file's checkpoint and the log's records,
    /// replayed), exactly as after a crash. The data file's handle, and with it the lock,
    /// passes to the new store; the old one must not be used again.
    pub fn recover(&self) -> Result<Arc<Store>, StoreError> {
        self.stop_checkpointer();
        self.failed.store(true, Ordering::Release);
        // The old store must write nothing more: a transaction or checkpoint under way
        // finishes first (the gate), and its log stops, with any write in flight done, so
        // a committer still waiting on it can never append behind the new log's back
        // (it is told its outcome is unknown). Found by the fault sweep: an acknowledged
        // write was lost when the old log wrote after the new one had opened the file.
        let _gate = self.gate.lock();
        self.wal.poison();
        let name = self
            .wal_name
            .strip_suffix("-wal")
            .ok_or_else(|| StoreError::Io(format!("log name {} has no -wal", self.wal_name)))?;
        let file = Arc::clone(self.pager.storage());
        let recovered =
            Store::open_locked(Arc::clone(&self.dir), name, file, self.options.clone())?;
        recovered.set_term(self.term());
        recovered.set_oplog_writes(self.oplog_writes());
        recovered.set_event_sink(self.events.sink());
        Ok(recovered)
    }

    /// [`Store::open`] on a data file this process has locked.
    fn open_locked(
        dir: Arc<dyn Dir>,
        name: &str,
        file: Arc<dyn wal::Storage>,
        options: StoreOptions,
    ) -> Result<Arc<Store>, StoreError> {
        let pager = pager::Pager::open(file, options.pager.clone())?;
        let covered = pager.checkpoint_lsn();
        let wal_name = format!("{name}-wal");
        let wal_options = WalOptions {
            lsn_first: Lsn(covered + 1),
            ..options.wal.clone()
        };
        let (mut wal, mut recovery) = Wal::open(Arc::clone(&dir), &wal_name, wal_options.clone())
            .map_err(|error| foreign_log(&dir, name, &wal_name, error))?;
        if recovery.lsn_next.0 < covered + 1 {
            // Every record in this log is covered by the checkpoint: start a fresh log
            // after it (the log was removed or replaced after the checkpoint).
            drop(wal);
            dir.remove(&wal_name)
                .map_err(|e| StoreError::Io(e.to_string()))?;
            (wal, recovery) = Wal::open(Arc::clone(&dir), &wal_name, wal_options)?;
        }
        let first_needed = recovery.records.first().map(|(lsn, _)| lsn.0);
        if first_needed.is_some_and(|first| first > covered + 1) {
            return Err(StoreError::Corrupt(format!(
                "the log {} starts at lsn {} but the data file covers only up to lsn {covered}: \
                 it belongs to another database or to a later state of this one. {}",
                dir.display(&wal_name),
                first_needed.unwrap_or(0),
                what_to_do(&dir, name, &wal_name),
            )));
        }
        let mut warnings = Vec::new();
        if let Some(tail) = &recovery.torn_tail {
            // A crash mid-write leaves a torn last block; it is cut off as designed, but
            // never silently: a damaged block that had been synced reads the same way
            // when no later block vouches for it (docs/format.md, "Recovery").
            let warning = format!(
                "the log {} ended in a damaged block ({}): cut off {} bytes at offset {}, \
                 holding the records from lsn {} on (the data covers up to lsn {}); if \
                 writes were acknowledged after that, this is data loss, not a torn write",
                dir.display(&wal_name),
                tail.reason,
                tail.bytes,
                tail.offset,
                tail.lsn.0,
                tail.lsn.0.saturating_sub(1),
            );
            // Reported by the layer above, in its log, once it has one
            // (`OpenReport::warnings`).
            warnings.push(warning);
        }
        let report = OpenReport {
            replayed: 0,
            torn_tail: recovery.torn_tail.is_some(),
            unfinished: 0,
            warnings,
        };
        let store = Arc::new(Store {
            pager,
            wal,
            dir,
            wal_name,
            gate: Mutex::new(()),
            failed: AtomicBool::new(false),
            closed: AtomicBool::new(false),
            log_bytes: AtomicU64::new(0),
            uuid_seq: AtomicU64::new(0),
            options,
            wakeup: Arc::default(),
            checkpointer: Mutex::new(None),
            report,
            metas: meta_cache::MetaCache::default(),
            build_threads: std::sync::atomic::AtomicUsize::new(0),
            oplog_clock: oplog::Clock::default(),
            term: std::sync::atomic::AtomicI64::new(1),
            oplog_writes: AtomicBool::new(false),
            commits: (Mutex::new(0), Condvar::new()),
            validators: validation::Validators::default(),
            events: events::Events::default(),
        });
        let (replayed, unfinished) = store.replay(&recovery.records, covered)?;
        // Safe to mutate through a fresh Arc only before anyone else holds it.
        let store = match Arc::try_unwrap(store) {
            Ok(mut inner) => {
                inner.report.replayed = replayed;
                inner.report.unfinished = unfinished;
                Arc::new(inner)
            }
            Err(_) => unreachable!("no other reference exists yet"),
        };
        if unfinished > 0 {
            // The log ends inside a transaction (a crash came between its records). Cover
            // those records by a checkpoint that does not hold them, so they are never
            // read as the start of the next transaction logged after them.
            crashpoint::hit("recovery.unfinished.before_checkpoint");
            store.checkpoint()?;
        }
        crashpoint::hit("recovery.after_replay");
        store.load_oplog_clock()?;
        store.start_checkpointer();
        Ok(store)
    }

    /// Moves the oplog clock to the last entry's `ts` (replay moved it to the last stamp
    /// it applied; entries before the checkpoint are only in the file).
    fn load_oplog_clock(&self) -> Result<(), StoreError> {
        let reader = self.read()?;
        if let Some(meta) = reader.collection(&oplog::namespace())? {
            let range = meta
                .records
                .range(reader.txn(), Bound::Unbounded, Bound::Unbounded)?;
            if let Some(last) = range.last() {
                self.oplog_clock
                    .observe(oplog::Ts(catalog::rid_of(&last?.0)?));
            }
        }
        Ok(())
    }

    /// The oplog's clock (`oplog::Clock`): the last `ts` handed out or found at open.
    pub fn oplog_clock(&self) -> &oplog::Clock {
        &self.oplog_clock
    }

    /// The term new oplog entries carry.
    pub fn term(&self) -> i64 {
        self.term.load(Ordering::Acquire)
    }

    /// Where the lines the store reports as it runs go (`None`: stderr, as plain text);
    /// a store recovered from this one keeps it.
    pub fn set_event_sink(&self, sink: Option<EventSink>) {
        self.events.set(sink);
    }

    /// Sets the term new oplog entries carry (the replica-set layer's, persisted there).
    pub fn set_term(&self, term: i64) {
        self.term.store(term, Ordering::Release);
    }

    /// Whether writers add an oplog entry for each change while `local.oplog.rs` exists.
    pub fn oplog_writes(&self) -> bool {
        self.oplog_writes.load(Ordering::Acquire)
    }

    /// Turns the oplog's writes on or off (off at open: the replica-set layer turns them
    /// on; a store recovered after a failure keeps the setting and the term). Replay
    /// rebuilds the logged entries either way.
    pub fn set_oplog_writes(&self, on: bool) {
        self.oplog_writes.store(on, Ordering::Release);
    }

    /// How many logged commits this store has published (a value to pass to
    /// [`Store::wait_for_commit`]).
    pub fn commit_count(&self) -> u64 {
        *self.commits.0.lock()
    }

    /// Waits until a commit after `seen` (a [`Store::commit_count`]) has been published,
    /// or `timeout` has passed; returns the count then. A commit is visible to readers
    /// started after it is counted, though it may not be durable yet.
    pub fn wait_for_commit(&self, seen: u64, timeout: Duration) -> u64 {
        let deadline = Instant::now() + timeout;
        let mut count = self.commits.0.lock();
        while *count <= seen && !self.is_closed() {
            if self.commits.1.wait_until(&mut count, deadline).timed_out() {
                break;
            }
        }
        *count
    }

    /// Counts a published commit and wakes its waiters.
    fn count_commit(&self) {
        *self.commits.0.lock() += 1;
        self.commits.1.notify_all();
    }

    /// Replays the records after `covered`, one transaction at a time: a transaction
    /// spanning several records is applied when its last record is read. Returns the
    /// records applied and those of a transaction whose last record is missing (the log
    /// ends inside it: never acknowledged, so not applied).
    fn replay(&self, records: &[(Lsn, Vec<u8>)], covered: u64) -> Result<(u64, u64), StoreError> {
        crashpoint::hit("recovery.before_replay");
        let mut replayed = 0;
        let to_replay = records.iter().filter(|(lsn, _)| lsn.0 > covered).count() as u64;
        let mut pending: Vec<log::Op> = Vec::new();
        let (mut pending_records, mut pending_bytes) = (0u64, 0u64);
        for (lsn, record) in records {
            if lsn.0 <= covered {
                continue;
            }
            if replayed + pending_records == to_replay / 2 {
                crashpoint::hit("recovery.replay.mid");
            }
            let (ops, continued) = log::decode(record).map_err(|e| match e {
                StoreError::Corrupt(m) => StoreError::Corrupt(format!("lsn {}: {m}", lsn.0)),
                other => other,
            })?;
            pending.extend(ops);
            pending_records += 1;
            pending_bytes += record.len() as u64;
            if continued {
                continue;
            }
            let mut writer = self.begin(false)?;
            for op in pending.drain(..) {
                writer.apply(op)?;
            }
            writer.commit_nowait()?;
            self.log_bytes.fetch_add(pending_bytes, Ordering::Relaxed);
            replayed += pending_records;
            (pending_records, pending_bytes) = (0, 0);
        }
        Ok((replayed, pending_records))
    }

    /// What opening found.
    pub fn open_report(&self) -> &OpenReport {
        &self.report
    }

    /// A snapshot of the last committed state. Never waits for a writer.
    pub fn read(&self) -> Result<Reader<'_>, StoreError> {
        // A failed store refuses reads too: its newest snapshot may hold writes that were
        // reported failed (or whose outcome is unknown), and no reader may see those.
        self.check_open()?;
        Ok(Reader {
            txn: self.pager.begin_read()?,
            metas: &self.metas,
        })
    }

    /// Sets the threads index builds scan a collection with (`0`: the default, one per
    /// core, at most four, for collections of 4,096 records or more; `1`: one scan on the
    /// building thread; more: the scan split by record id over that many threads sharing
    /// one read snapshot, whatever the size). For benchmarks and tests: the result never
    /// depends on it.
    pub fn set_index_build_threads(&self, threads: usize) {
        self.build_threads.store(threads, Ordering::Relaxed);
    }

    /// How index builds scan now: the threads, for collections of at least how many
    /// records (a count set explicitly applies to every size).
    pub fn index_build_scan(&self) -> indexes::ParallelScan {
        match self.build_threads.load(Ordering::Relaxed) {
            0 => indexes::ParallelScan {
                threads: std::thread::available_parallelism()
                    .map_or(1, usize::from)
                    .min(indexes::SCAN_THREADS_MAX),
                records_min: indexes::PARALLEL_SCAN_RECORDS_MIN,
            },
            threads => indexes::ParallelScan {
                threads,
                records_min: 0,
            },
        }
    }

    /// The write transaction (one at a time; waits for the current one).
    pub fn write(&self) -> Result<Writer<'_>, StoreError> {
        self.begin(true)
    }

    fn begin(&self, logged: bool) -> Result<Writer<'_>, StoreError> {
        self.check_open()?;
        let gate = self.gate_interruptibly()?;
        self.check_open()?;
        let txn = self.pager.begin_write()?;
        Ok(Writer::new(self, gate, txn, logged))
    }

    /// The write gate. While another holds it (a long write, or fsyncLock for as long as
    /// it lasts) the waiting thread's operation is checked every [`GATE_CHECK_MS`]: a
    /// killOp or a spent maxTimeMS ends the wait with its error (`Rejected`), as mongod's
    /// interruptible lock waits do ([`StoreOptions::wait_check`]). Outside an operation
    /// (checkpoints, the TTL monitor) the engine's check always passes.
    fn gate_interruptibly(&self) -> Result<parking_lot::MutexGuard<'_, ()>, StoreError> {
        if let Some(gate) = self.gate.try_lock() {
            return Ok(gate);
        }
        loop {
            (self.options.wait_check)().map_err(StoreError::Rejected)?;
            let wait = std::time::Duration::from_millis(GATE_CHECK_MS);
            if let Some(gate) = self.gate.try_lock_for(wait) {
                return Ok(gate);
            }
        }
    }

    fn check_open(&self) -> Result<(), StoreError> {
        if self.closed.load(Ordering::Acquire) {
            return Err(StoreError::Closed);
        }
        if self.is_failed() {
            return Err(StoreError::Failed);
        }
        Ok(())
    }

    /// Marks the store failed on an I/O error (the first failure is logged loudly).
    pub fn fail(&self, error: StoreError) -> StoreError {
        let stops = matches!(
            error,
            StoreError::Io(_)
                | StoreError::Failed
                | StoreError::OutOfDiskSpace(_)
                | StoreError::OutcomeUnknown(_)
        );
        if stops && !self.failed.swap(true, Ordering::AcqRel) {
            self.events.emit(&Event {
                severity: Severity::Error,
                component: "STORAGE",
                id: 0,
                message: "Storage failure; refusing commands until the durable state is \
                          recovered",
                attr: bson::doc! {
                    "log": self.dir.display(&self.wal_name),
                    "error": error.to_string(),
                },
            });
        }
        error
    }

    /// Reports `event` as this store's lines go (the sink, else stderr): for the layers
    /// above whose work on the store has something to say (the TTL monitor).
    pub fn report(&self, event: &Event<'_>) {
        self.events.emit(event);
    }

    /// Reports a background task's failure (`message`) as an error line.
    fn report_failure(&self, message: &str, error: &StoreError) {
        self.events.emit(&Event {
            severity: Severity::Error,
            component: "STORAGE",
            id: 0,
            message,
            attr: bson::doc! { "error": error.to_string() },
        });
    }

    fn check_io<T>(&self, result: Result<T, StoreError>) -> Result<T, StoreError> {
        result.map_err(|error| self.fail(error))
    }

    /// Whether the store was closed.
    pub fn is_closed(&self) -> bool {
        self.closed.load(Ordering::Acquire)
    }

    /// Whether an I/O failure has stopped this store (it refuses every command; the
    /// engine recovers by reopening, see `Engine::store`).
    pub fn is_failed(&self) -> bool {
        self.failed.load(Ordering::Acquire) || self.pager.is_failed() || self.wal.is_poisoned()
    }

    /// Appends `ops` as log records (split below the record limit); the last LSN.
    fn log_ops(&self, ops: &[log::Op]) -> Result<Option<Lsn>, StoreError> {
        const RECORD_TARGET: usize = 4 << 20;
        let mut last = None;
        // Sized once for the ops (up to one record's target), not grown by doubling.
        let hint: usize = ops.iter().map(log::Op::size_hint).sum();
        let mut record = Vec::with_capacity(hint.min(RECORD_TARGET + (RECORD_TARGET >> 3)));
        let mut flush = |record: &mut Vec<u8>| -> Result<(), StoreError> {
            if !record.is_empty() {
                let lsn = self.check_io(self.wal.append(record).map_err(StoreError::from))?;
                self.log_bytes
                    .fetch_add(record.len() as u64, Ordering::Relaxed);
                last = Some(lsn);
                record.clear();
            }
            Ok(())
        };
        for op in ops {
            if !record.is_empty() && record.len() + op.size_hint() > RECORD_TARGET {
                // Replay waits for the transaction's last record (the one without it).
                log::encode_continued(&mut record);
                flush(&mut record)?;
            }
            op.encode_into(&mut record);
        }
        flush(&mut record)?;
        Ok(last)
    }

    /// Waits until the log is durable through `lsn` (shared fsyncs: group commit).
    pub fn wait_durable(&self, lsn: Lsn) -> Result<(), StoreError> {
        self.check_io(self.wal.commit(lsn).map_err(commit_failure))
    }

    /// Whether freed-but-unreusable pages call for a checkpoint: the pager's 1/32 rule,
    /// but never for less than `CHECKPOINT_PENDING_PAGES_MIN` (a small file would
    /// otherwise checkpoint after every few commits).
    fn space_due(&self) -> bool {
        self.pager.checkpoint_due()
            && self
                .pager
                .stats()
                .is_ok_and(|s| s.pending_pages >= CHECKPOINT_PENDING_PAGES_MIN)
    }

    fn after_commit(&self) {
        self.count_commit();
        let due = self.log_bytes.load(Ordering::Relaxed) >= self.options.checkpoint_log_bytes;
        if due || self.space_due() {
            self.wakeup.signal.lock().wake = true;
            self.wakeup.cv.notify_all();
        } else if self.pager.unsynced_bytes() >= SYNC_AHEAD_BYTES {
            let mut signal = self.wakeup.signal.lock();
            if !signal.sync {
                signal.sync = true;
                self.wakeup.cv.notify_all();
            }
        }
        // The log's zeros are written here, off the commit path (D12): a commit that
        // finds no preallocated space writes them itself, on its client's time.
        if self.wal.needs_growth() {
            let mut signal = self.wakeup.signal.lock();
            if !signal.grow {
                signal.grow = true;
                self.wakeup.cv.notify_all();
            }
        }
    }

    /// Grows the log's preallocated space ahead of the commits (the checkpointer does this
    /// when a commit finds it under a chunk).
    fn grow_log_ahead(&self) -> Result<(), StoreError> {
        self.check_open()?;
        let result = self.wal.grow_ahead().map(|_| ()).map_err(commit_failure);
        self.check_io(result)
    }

    /// Syncs the data pages written so far without holding up writers (the checkpointer
    /// does this every `SYNC_AHEAD_BYTES`, and before each checkpoint).
    fn sync_ahead(&self) -> Result<(), StoreError> {
        self.check_open()?;
        let result = self.pager.sync_ahead().map_err(StoreError::from);
        self.check_io(result)
    }

    /// A fresh random-looking version-4 UUID (the clock and a sequence, hashed): distinct
    /// for every call on this store.
    pub fn new_uuid(&self) -> [u8; 16] {
        let seq = self.uuid_seq.fetch_add(1, Ordering::Relaxed);
        let nanos = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_nanos());
        let a = xxhash_rust::xxh3::xxh3_64(
            &[nanos.to_le_bytes().as_slice(), &seq.to_le_bytes()].concat(),
        );
        let b = xxhash_rust::xxh3::xxh3_64(&[a.to_le_bytes(), seq.to_le_bytes()].concat());
        let mut uuid = [0u8; 16];
        uuid[..8].copy_from_slice(&a.to_le_bytes());
        uuid[8..].copy_from_slice(&b.to_le_bytes());
        uuid[6] = (uuid[6] & 0x0f) | 0x40;
        uuid[8] = (uuid[8] & 0x3f) | 0x80;
        uuid
    }

    /// Makes the data file hold everything committed so far and truncates the log.
    pub fn checkpoint(&self) -> Result<(), StoreError> {
        let lsn = self.checkpoint_data()?;
        let result = match self.wal.truncate_before(Lsn(lsn.0 + 1)) {
            // The data file holds every write: the log keeps its covered records until a
            // later checkpoint finds room for the new generation (a full disk). Replay
            // skips what the data file covers, so the checkpoint stands.
            Err(wal::WalError::TruncationNotDone(cause)) => {
                self.events.emit(&Event {
                    severity: Severity::Warning,
                    component: "STORAGE",
                    id: 0,
                    message: "Checkpoint done, but the log was not truncated; it is kept and \
                              truncated at a later checkpoint",
                    attr: bson::doc! {
                        "log": self.dir.display(&self.wal_name),
                        "error": cause.to_string(),
                    },
                });
                Ok(())
            }
            other => other.map_err(StoreError::from),
        };
        self.check_io(result)?;
        crashpoint::hit("checkpoint.after_truncate");
        Ok(())
    }

    /// Checkpoints and then holds the write gate until the guard drops: the data file holds
    /// every committed write, and no write, checkpoint or TTL pass changes it meanwhile, so
    /// a copy of the one file is a valid database (fsyncLock). Retries if a write commits
    /// between the checkpoint and taking the gate.
    pub fn checkpoint_and_hold(&self) -> Result<parking_lot::MutexGuard<'_, ()>, StoreError> {
        loop {
            self.checkpoint()?;
            let gate = self.gate.lock();
            if self.log_bytes.load(Ordering::Relaxed) == 0 {
                return Ok(gate);
            }
        }
    }

    /// The first half of a checkpoint: the data file made durable as of the log's last
    /// LSN, which it returns. The log is left as it is (`close` removes it instead of
    /// truncating it, which would write a new log generation: room a full disk may lack).
    fn checkpoint_data(&self) -> Result<Lsn, StoreError> {
        self.check_open()?;
        // The data pages written since the last checkpoint go to disk first, while writers
        // go on; the syncs under the gate then have little left (the longest insert across
        // a checkpoint was mostly this sync).
        self.sync_ahead()?;
        let _gate = self.gate.lock();
        crashpoint::hit("checkpoint.start");
        let last = Lsn(self.wal.lsn_next().0 - 1);
        if last.0 > 0 {
            self.wait_durable(last)?;
        }
        let result = self.pager.checkpoint(last.0).map_err(StoreError::from);
        self.check_io(result)?;
        crashpoint::hit("checkpoint.after_header");
        self.log_bytes.store(0, Ordering::Relaxed);
        Ok(last)
    }

    /// Checkpoints and removes the log: a cleanly closed database is one file. Later calls
    /// fail with `Closed`.
    pub fn close(&self) -> Result<(), StoreError> {
        if self.closed.load(Ordering::Acquire) {
            return Ok(());
        }
        self.stop_checkpointer();
        self.checkpoint_data()?;
        let _gate = self.gate.lock();
        self.closed.store(true, Ordering::Release);
        self.commits.1.notify_all();
        crashpoint::hit("close.before_remove_log");
        self.dir
            .remove(&self.wal_name)
            .and_then(|()| self.dir.sync())
            .map_err(|e| StoreError::Io(e.to_string()))
    }

    /// Bytes of log records appended since the last checkpoint.
    pub fn logged_bytes(&self) -> u64 {
        self.log_bytes.load(Ordering::Relaxed)
    }

    /// Bytes of the data file.
    pub fn file_bytes(&self) -> u64 {
        self.pager.stats().map_or(0, |s| s.file_bytes)
    }

    /// Pager counters.
    pub fn pager_stats(&self) -> Result<pager::Stats, StoreError> {
        Ok(self.pager.stats()?)
    }

    /// Checks every tree of every collection, the catalog counters and the ownership of
    /// every page of the file.
    pub fn verify(&self) -> Result<VerifyReport, StoreError> {
        let reader = self.read()?;
        let mut report = VerifyReport::default();
        let catalog = catalog::CATALOG.verify(reader.txn())?;
        let mut extents = catalog.extents;
        for (ns, meta) in reader.collections(None)? {
            let records = meta.records.verify(reader.txn())?;
            let ids = meta.ids.verify(reader.txn())?;
            // The oplog has no `_id_` index (`oplog::Kind`).
            let id_entries = match meta.kind {
                oplog::Kind::Documents => meta.count,
                oplog::Kind::Oplog => 0,
            };
            if records.entries != meta.count || ids.entries != id_entries {
                return Err(StoreError::Corrupt(format!(
                    "{ns}: catalog count {} but {} records and {} _id_ entries",
                    meta.count, records.entries, ids.entries
                )));
            }
            if meta.records.compressor() != Compressor::None {
                // Every stored value decodes, and the stored sizes add up.
                let (stored, size) = meta.records.sizes(reader.txn())?;
                if stored != meta.stored || size != meta.size {
                    return Err(StoreError::Corrupt(format!(
                        "{ns}: catalog sizes {} stored / {} logical but the records take {} \
                         / {}",
                        meta.stored, meta.size, stored, size
                    )));
                }
            }
            report.collections += 1;
            report.documents += meta.count;
            extents.extend(records.extents);
            extents.extend(ids.extents);
            for index in &meta.indexes {
                let tree = index.tree.verify(reader.txn())?;
                if tree.entries != index.entries {
                    return Err(StoreError::Corrupt(format!(
                        "{ns}: index {} counts {} entries but its tree holds {}",
                        index.name(),
                        index.entries,
                        tree.entries
                    )));
                }
                extents.extend(tree.extents);
            }
        }
        drop(reader);
        let pages = self.pager.verify(&extents)?;
        report.pages = u64::from(pages.page_count);
        report.free_pages = pages.free_pages;
        Ok(report)
    }

    fn start_checkpointer(self: &Arc<Self>) {
        let Some(interval) = self.options.checkpoint_interval else {
            return;
        };
        let weak: Weak<Store> = Arc::downgrade(self);
        let wakeup = Arc::clone(&self.wakeup);
        let handle = std::thread::Builder::new()
            .name("mfdb-checkpoint".into())
            .spawn(move || checkpoint_loop(&wakeup, &weak, interval));
        if let Ok(handle) = handle {
            *self.checkpointer.lock() = Some(handle);
        }
    }

    /// Stops the background checkpointer and waits for its thread (unless called from it).
    pub fn stop_checkpointer(&self) {
        self.wakeup.signal.lock().stop = true;
        self.wakeup.cv.notify_all();
        let handle = self.checkpointer.lock().take();
        if let Some(handle) = handle
            && handle.thread().id() != std::thread::current().id()
        {
            let _ = handle.join();
        }
    }
}

/// How often the checkpointer checks that the file at the log's path is the log.
const LOG_CHECK_INTERVAL: Duration = Duration::from_secs(1);

fn checkpoint_loop(wakeup: &Wakeup, weak: &Weak<Store>, interval: Duration) {
    let mut last_checkpoint = Instant::now();
    let mut log_missing = false;
    loop {
        let (wake, sync, grow) = {
            let mut signal = wakeup.signal.lock();
            if !signal.stop && !signal.wake && !signal.sync && !signal.grow {
                let until_due = interval.saturating_sub(last_checkpoint.elapsed());
                wakeup
                    .cv
                    .wait_for(&mut signal, until_due.min(LOG_CHECK_INTERVAL));
            }
            if signal.stop {
                return;
            }
            (
                std::mem::take(&mut signal.wake),
                std::mem::take(&mut signal.sync),
                std::mem::take(&mut signal.grow),
            )
        };
        // Held only while working, never while asleep.
        let Some(store) = weak.upgrade() else {
            return;
        };
        // A log deleted or replaced behind our back holds acknowledged records that only
        // the open file has: a crash would lose them. Make them safe at once: the
        // checkpoint puts them in the data file and its truncation a fresh log at the path.
        let replaced = !store.wal.is_current();
        if replaced && !log_missing {
            store.events.emit(&Event {
                severity: Severity::Error,
                component: "STORAGE",
                id: 0,
                message: "The log was deleted or replaced while the database is open; \
                          checkpointing now so no acknowledged write depends on it",
                attr: bson::doc! { "log": store.dir.display(&store.wal_name) },
            });
        }
        log_missing = replaced;
        if wake || replaced || last_checkpoint.elapsed() >= interval {
            last_checkpoint = Instant::now();
            let dirty =
                replaced || store.log_bytes.load(Ordering::Relaxed) > 0 || store.space_due();
            if dirty && let Err(error) = store.checkpoint() {
                store.report_failure("Background checkpoint failed", &error);
            }
        } else if sync && let Err(error) = store.sync_ahead() {
            store.report_failure("Background sync of the data file failed", &error);
        }
        if grow && let Err(error) = store.grow_log_ahead() {
            store.report_failure("Background growth of the log failed", &error);
        }
    }
}

impl Drop for Store {
    fn drop(&mut self) {
        self.stop_checkpointer();
    }
}

/// What `Store::verify` checked.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct VerifyReport {
    /// Collections checked.
    pub collections: u64,
    /// Documents across them.
    pub documents: u64,
    /// Pages in the file.
    pub pages: u64,
    /// Pages free for reuse.
    pub free_pages: u64,
}
