//! The [`Engine`] value: what a server or an embedding program holds, and its entry points.

use crate::command::registry::Registry;
use crate::command::{self, Request};
use crate::error::{Error, ErrorCode};
use crate::host::Host;
use crate::object_id::IdSource;
use crate::sessions::Sessions;
use crate::stats::Stats;
use crate::store::{Store, StoreOptions};
use crate::ttl::{self, TtlPass};
use bson::{Document, RawDocument, RawDocumentBuf};
use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

/// How the process was started, reported by getCmdLineOpts.
#[derive(Debug, Clone, Default)]
pub struct StartupOptions {
    /// The command line as given (`argv`).
    pub argv: Vec<String>,
    /// The options after parsing, in mongod's nested shape (e.g. `net.port`).
    pub parsed: Document,
}

/// Everything an [`Engine`] is built from.
#[derive(Clone)]
pub struct EngineOptions {
    /// Clock and machine facts.
    pub host: Arc<dyn Host>,
    /// The command line, for getCmdLineOpts.
    pub startup: StartupOptions,
    /// The most client connections the server accepts (serverStatus `connections.available`).
    pub connections_max: u64,
    /// Time between the TTL monitor's passes (`--ttl-sweep-secs`; mongod's
    /// `ttlMonitorSleepSecs`); `None` runs no monitor (passes only by
    /// [`Engine::run_ttl_pass`]).
    pub ttl_interval: Option<Duration>,
}

/// What the engine knows about the connection a command arrived on.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ConnectionContext {
    /// The server-assigned connection number (hello's `connectionId`).
    pub connection_id: i64,
    /// The client's address as `host:port` (whatsmyuri), empty when embedded.
    pub client_address: String,
    /// Who authenticated on the connection (shared by the context's clones).
    pub auth: crate::auth::AuthSession,
    /// The OP_COMPRESSED compressors the server enables, in its order (`hello` answers
    /// the ones the client names too); none when embedded.
    pub compressors: Arc<[wire::Compressor]>,
    /// What the connection's handshake said of its client (shared by the context's
    /// clones).
    pub client: ClientMetadata,
}

/// What a connection's first `hello` said of its client: the application name
/// (`client.application.name`), which fail points and `currentOp` match on.
#[derive(Debug, Clone, Default)]
pub struct ClientMetadata(Arc<parking_lot::Mutex<Option<String>>>);

impl ClientMetadata {
    /// The application name, if the handshake gave one.
    #[must_use]
    pub fn app_name(&self) -> Option<String> {
        self.0.lock().clone()
    }

    /// Records the handshake's application name.
    pub(crate) fn set_app_name(&self, name: &str) {
        *self.0.lock() = Some(name.to_owned());
    }
}

impl PartialEq for ClientMetadata {
    fn eq(&self, other: &ClientMetadata) -> bool {
        Arc::ptr_eq(&self.0, &other.0)
    }
}

impl Eq for ClientMetadata {}

/// The database. Shared across threads by reference (`&Engine` is `Sync`).
pub struct Engine {
    pub(crate) host: Arc<dyn Host>,
    pub(crate) startup: StartupOptions,
    pub(crate) connections_max: u64,
    /// The storage, replaced by a recovered one after an I/O failure (`Engine::store`).
    /// Shared with the TTL monitor's thread, which holds it weakly.
    store: Arc<parking_lot::RwLock<Arc<Store>>>,
    /// Held while a failed store is recovered (one recovery at a time).
    recovering: parking_lot::Mutex<()>,
    pub(crate) cursors: Registry,
    /// ObjectIds for documents inserted without an `_id`.
    pub(crate) ids: IdSource,
    /// The sessions commands arrived with (`$listLocalSessions`).
    pub(crate) sessions: Sessions,
    stats: Stats,
    /// The TTL monitor (its thread, when enabled, and its counters).
    pub(crate) ttl: ttl::Monitor,
    /// The commands running now (`currentOp`).
    pub(crate) operations: crate::operations::Operations,
    /// Whether the database lives in memory only ([`Engine::new`]): serverStatus
    /// `storageEngine.persistent`.
    pub(crate) in_memory: bool,
    /// Runtime-settable parameters that are recorded, not consumed (see
    /// `command::parameters`).
    pub(crate) parameters: parking_lot::Mutex<std::collections::BTreeMap<&'static str, bson::Bson>>,
    /// fsyncLock's state.
    pub(crate) fsync_lock: crate::fsync_lock::FsyncLock,
    /// What the `shutdown` command calls: set by a server ([`Engine::on_shutdown`]).
    shutdown: parking_lot::Mutex<Option<ShutdownHook>>,
    /// The winners of plan trials, per collection and query shape.
    pub(crate) plans: crate::plan::PlanCache,
    /// Operations per index since start or creation (`$indexStats`).
    pub(crate) index_usage: crate::plan::IndexUsage,
    /// Blocking sorts' memory limit and spill files (`crate::spill`).
    pub(crate) sorting: crate::spill::Settings,
    /// Whether commands need authentication, and the users' generation.
    pub(crate) auth: crate::auth::Auth,
    /// hello's `topologyVersion.processId`: fixed for the life of the engine.
    pub(crate) process_id: bson::oid::ObjectId,
    /// The server's recent log lines (`getLog: 'global'`).
    pub(crate) recent_log: Arc<crate::recent_log::RecentLog>,
    /// Whether [`Engine::log_open_warnings`] has run.
    open_warnings_logged: std::sync::atomic::AtomicBool,
    /// The database profiler's settings (`profile`).
    pub(crate) profiler: crate::profile::Profiler,
    /// `--setParameter enableTestCommands=1`: `configureFailPoint` exists.
    pub(crate) test_commands: bool,
    /// The fail points (`configureFailPoint`; only with test commands).
    pub(crate) fail_points: crate::failpoint::FailPoints,
    /// The replica-set member this engine runs as, once started
    /// ([`Engine::start_replica_set`]); a standalone until then.
    pub(crate) repl: std::sync::OnceLock<crate::repl::Member>,
}

impl crate::auth::Stores for Engine {
    fn store(&self) -> Arc<Store> {
        Engine::store(self)
    }
}

/// mongod's `NotPrimaryError` and `ShutdownError` codes: errors that say the server's
/// state changed (here only a fail point raises them).
fn is_state_change(code: i32) -> bool {
    matches!(
        code,
        91 | 189 | 10058 | 10107 | 11600 | 11602 | 13435 | 13436
    )
}

/// Whether the command line enables test commands (`setParameter.enableTestCommands`
/// `1` or `true`, as mongod reads it).
fn test_commands_enabled(parsed: &Document) -> bool {
    parsed
        .get_document("setParameter")
        .ok()
        .and_then(|p| p.get("enableTestCommands"))
        .is_some_and(|value| match value {
            bson::Bson::String(s) => s == "1" || s == "true",
            bson::Bson::Boolean(b) => *b,
            bson::Bson::Int32(n) => *n != 0,
            _ => false,
        })
}

/// `options` with the engine's check of the waiting thread's operation (killOp,
/// maxTimeMS) while it waits for the write gate.
fn interruptible(options: StoreOptions) -> StoreOptions {
    StoreOptions {
        wait_check: crate::operations::check_current,
        ..options
    }
}

/// Where the storage layer's own lines go (a storage failure, a background checkpoint
/// that failed, a validation warning, the TTL monitor's): the engine's log, in mongod's
/// shape.
fn store_events(
    log: &Arc<crate::recent_log::RecentLog>,
    host: &Arc<dyn Host>,
) -> crate::store::EventSink {
    let log = Arc::clone(log);
    let host = Arc::clone(host);
    Arc::new(move |event| {
        let line = crate::LogLine {
            millis: host.now_millis(),
            severity: event.severity.letter(),
            component: event.component,
            id: event.id,
            ctx: "storage",
            message: event.message,
        };
        log.log(line, &event.attr);
    })
}

/// See [`Engine::on_shutdown`].
pub type ShutdownHook = Arc<dyn Fn() + Send + Sync>;

impl Engine {
    /// An engine over an in-memory database (nothing survives the process): for tests
    /// and scratch work.
    #[must_use]
    pub fn new(options: EngineOptions) -> Engine {
        let dir = Arc::new(wal::MemDir::<wal::MemStorage>::new());
        let store_options = StoreOptions {
            checkpoint_interval: None,
            pager: pager::Options {
                mmap: false,
                ..pager::Options::default()
            },
            ..StoreOptions::default()
        };
        let store = Store::open(dir, "memory.mfdb", interruptible(store_options))
            .expect("an empty in-memory database opens");
        let mut engine = Engine::with_store(options, store);
        engine.in_memory = true;
        engine
    }

    /// Opens (or creates) the database file at `path` (its log is `<path>-wal`), replaying
    /// the log after the last checkpoint.
    pub fn open(path: &Path, options: EngineOptions) -> Result<Engine, Error> {
        Engine::open_with(path, options, StoreOptions::default())
    }

    /// [`Engine::open`] with explicit storage options.
    pub fn open_with(
        path: &Path,
        options: EngineOptions,
        store_options: StoreOptions,
    ) -> Result<Engine, Error> {
        let store = Store::open_path(path, interruptible(store_options)).map_err(Error::from)?;
        drop_leftover_temporaries(&store)?;
        Ok(Engine::with_store(options, store))
    }

    /// Opens (or creates) database file `name` in `dir`, any implementation of the storage
    /// seam (the fault and disk models of the tests among them).
    pub fn open_in(
        dir: Arc<dyn wal::Dir>,
        name: &str,
        options: EngineOptions,
        store_options: StoreOptions,
    ) -> Result<Engine, Error> {
        let store = Store::open(dir, name, interruptible(store_options)).map_err(Error::from)?;
        drop_leftover_temporaries(&store)?;
        Ok(Engine::with_store(options, store))
    }

    fn with_store(options: EngineOptions, store: Arc<Store>) -> Engine {
        let store = Arc::new(parking_lot::RwLock::new(store));
        let ttl = ttl::Monitor::start(
            options.ttl_interval,
            Arc::clone(&options.host),
            Arc::downgrade(&store),
        );
        let ids = IdSource::new(options.host.as_ref());
        let started_ms = options.host.now_millis();
        let recent_log: Arc<crate::recent_log::RecentLog> = Arc::default();
        store
            .read()
            .set_event_sink(Some(store_events(&recent_log, &options.host)));
        Engine {
            cursors: Registry::new(options.host.now_millis()),
            process_id: ids.object_id(options.host.now_millis()),
            recent_log,
            open_warnings_logged: std::sync::atomic::AtomicBool::new(false),
            profiler: crate::profile::Profiler::default(),
            test_commands: test_commands_enabled(&options.startup.parsed),
            fail_points: crate::failpoint::FailPoints::default(),
            repl: std::sync::OnceLock::new(),
            ids,
            host: options.host,
            startup: options.startup,
            connections_max: options.connections_max,
            store,
            recovering: parking_lot::Mutex::new(()),
            sessions: Sessions::default(),
            stats: Stats::default(),
            ttl,
            operations: crate::operations::Operations::default(),
            in_memory: false,
            parameters: parking_lot::Mutex::default(),
            fsync_lock: crate::fsync_lock::FsyncLock::default(),
            shutdown: parking_lot::Mutex::new(None),
            plans: crate::plan::PlanCache::default(),
            index_usage: crate::plan::IndexUsage::new(started_ms),
            sorting: crate::spill::Settings::default(),
            auth: crate::auth::Auth::default(),
        }
    }

    /// Makes this engine the primary of the one-member replica set `options` names (see
    /// [`crate::repl`]): initiated on the database's first start as a member, its term
    /// one up on every start. From here on hello reports the set, every reply carries
    /// `$clusterTime` and `operationTime`, and each write is recorded in the oplog. Once
    /// per engine.
    pub fn start_replica_set(&self, options: &crate::repl::Options) -> Result<(), Error> {
        if self.repl.get().is_some() {
            let message = "already initialized";
            return Err(Error::new(
                ErrorCode::Other(23, "AlreadyInitialized"),
                message,
            ));
        }
        let store = self.store();
        let now = self.host.now_millis();
        let member = crate::repl::Member::start(&store, options, now, self.ids.object_id(now))?;
        let _ = self.repl.set(member);
        Ok(())
    }

    /// The replica-set member this engine runs as, if any.
    #[must_use]
    pub fn replica_set(&self) -> Option<&crate::repl::Member> {
        self.repl.get()
    }

    /// The name of the replica set the database file was last a member of, if any (a
    /// server started without `--replSet` on such a file says so in its log, as mongod
    /// does).
    pub fn stored_replica_set_name(&self) -> Result<Option<String>, Error> {
        crate::repl::stored_set_name(&self.store())
    }

    /// Adds `$clusterTime` and `operationTime` to a reply, as a replica-set member's
    /// replies (errors included) carry them.
    fn add_cluster_time(&self, reply: &mut RawDocumentBuf) {
        if self.repl.get().is_none() {
            return;
        }
        let ts = self.store().oplog_clock().last();
        if let Ok(time) = RawDocumentBuf::try_from(&crate::repl::cluster_time(ts)) {
            reply.append(bson::raw::cstr!("$clusterTime"), time);
            reply.append(bson::raw::cstr!("operationTime"), ts.timestamp());
        }
    }

    /// Sets the most document bytes a blocking sort holds in memory (default 100 MiB,
    /// mongod's `internalQueryMaxBlockingSortMemoryUsageBytes`, also settable with
    /// setParameter): past it a sort spills to disk with `allowDiskUse`, else fails with
    /// 292 QueryExceededMemoryLimitNoDiskUseAllowed.
    pub fn set_sort_bytes_max(&self, bytes: usize) {
        self.sorting.set_bytes_max(bytes);
    }

    /// What authentication and authorization use of the engine.
    pub(crate) fn directory(&self) -> crate::auth::Directory<'_> {
        crate::auth::Directory {
            stores: self,
            auth: &self.auth,
            host: &*self.host,
            parameters: &self.parameters,
            log: &self.recent_log,
        }
    }

    /// The next spill file of this database for a sort, if `allowed` (`allowDiskUse`).
    pub(crate) fn spill_to(&self, allowed: bool) -> Option<crate::spill::SpillTo> {
        crate::spill::SpillTo::of(&self.store(), &self.sorting, allowed)
    }

    /// The storage layer. After an I/O failure the failed store refuses every command
    /// (reads too: it may hold writes whose outcome is unknown) and this recovers in
    /// place of a restart: the files are reopened and the log replayed, as after a
    /// crash, so reads of durable data go on and writes resume once the disk allows
    /// (a full disk refuses them with OutOfDiskSpace, each try costing one recovery).
    /// While recovery fails (the device is gone, the file system read-only), commands are
    /// refused, and each tries it again. The handle keeps the database file (and its lock)
    /// open while it is held: drop it with the engine.
    #[must_use]
    pub fn store(&self) -> Arc<Store> {
        let store = Arc::clone(&self.store.read());
        if !store.is_failed() || store.is_closed() {
            return store;
        }
        let _recovering = self.recovering.lock();
        let current = Arc::clone(&self.store.read());
        if !Arc::ptr_eq(&current, &store) {
            return current; // another thread recovered it meanwhile
        }
        match store.recover() {
            Ok(recovered) => {
                self.storage_line(
                    "I",
                    "Recovered the durable state after the storage failure",
                    bson::doc! {},
                );
                *self.store.write() = Arc::clone(&recovered);
                recovered
            }
            Err(error) => {
                let attr = bson::doc! { "error": error.to_string() };
                self.storage_line("E", "Recovery after the storage failure failed", attr);
                store
            }
        }
    }

    /// Logs what opening the store warned about (a damaged log tail cut off), once, as
    /// STORAGE warnings: a server calls it once its log prints in its format, the
    /// embedded client as it opens.
    pub fn log_open_warnings(&self) {
        if self
            .open_warnings_logged
            .swap(true, std::sync::atomic::Ordering::AcqRel)
        {
            return;
        }
        let store = self.store();
        for warning in &store.open_report().warnings {
            self.storage_line(
                "W",
                "Opening the database found a problem",
                bson::doc! { "warning": warning },
            );
        }
    }

    /// Logs a line of the storage component from the engine (recovery).
    fn storage_line(&self, severity: &str, message: &str, attr: bson::Document) {
        let line = crate::LogLine {
            millis: self.host.now_millis(),
            severity,
            component: "STORAGE",
            id: 0,
            ctx: "storage",
            message,
        };
        self.recent_log.log(line, &attr);
    }

    /// Installs what the `shutdown` command calls (a server stops itself there, and then
    /// closes the engine). Without one, `shutdown` is refused: an embedding program closes
    /// the engine itself.
    pub fn on_shutdown(&self, hook: ShutdownHook) {
        *self.shutdown.lock() = Some(hook);
    }

    /// Turns authentication and authorization on or off (`--auth`; off by default). A
    /// server sets it before it accepts connections; an embedded engine leaves it off.
    pub fn set_auth_required(&self, required: bool) {
        self.auth.set_enabled(required);
    }

    pub(crate) fn shutdown_hook(&self) -> Option<ShutdownHook> {
        self.shutdown.lock().clone()
    }

    /// Checkpoints and closes the database: afterwards it is a single file. Commands run
    /// after this fail. An fsyncLock is released first.
    pub fn close(&self) -> Result<(), Error> {
        self.fsync_lock.release_all();
        // The monitor first: it is woken at once, or ends its pass after the current batch.
        self.ttl.stop();
        // A failed store is recovered first, so a clean close still leaves one file.
        self.store().close().map_err(Error::from)
    }

    /// Runs one TTL pass now, at the host's time: every TTL index of every collection
    /// deletes its expired documents, as the monitor does every `ttl_interval` (see the
    /// `ttl` module). Counted in serverStatus `metrics.ttl` like the monitor's passes.
    pub fn run_ttl_pass(&self) -> Result<TtlPass, Error> {
        let store = self.store();
        ttl::pass(
            &store,
            self.host.now_millis(),
            &|| false,
            self.ttl.counters(),
        )
        .map_err(Error::from)
    }

    /// The live counters (the server records connections here).
    #[must_use]
    pub fn stats(&self) -> &Stats {
        &self.stats
    }

    /// Where a server records its log lines for `getLog: 'global'`.
    #[must_use]
    pub fn recent_log(&self) -> Arc<crate::recent_log::RecentLog> {
        Arc::clone(&self.recent_log)
    }

    /// Runs one command against database `db` and returns the reply document:
    /// `{..., ok: 1.0}` on success, `{ok: 0.0, errmsg, code, codeName}` on failure.
    #[must_use]
    pub fn run_command(
        &self,
        db: &str,
        cmd: &RawDocument,
        ctx: &ConnectionContext,
    ) -> RawDocumentBuf {
        self.stats.request_ran();
        let result = command::name_of(cmd)
            .and_then(|name| command::dispatch(self, &Request::new(db, name, cmd, ctx)));
        let mut reply = result.unwrap_or_else(|error| {
            self.stats.add(crate::stats::Counter::AssertUser, 1);
            let mut reply = error.to_reply();
            if is_state_change(error.code().code())
                && let Ok(version) = RawDocumentBuf::try_from(&self.topology_version())
            {
                // As mongod: drivers compare it with their monitor's to tell a stale
                // state-change error from a new one.
                reply.append(bson::raw::cstr!("topologyVersion"), version);
            }
            reply
        });
        if self.repl.get().is_some()
            && let Ok(name) = command::name_of(cmd)
        {
            crate::repl::retryable::label(name, cmd, &mut reply);
        }
        self.add_cluster_time(&mut reply);
        reply
    }

    /// Runs an OP_MSG command body, taking the database from its `$db` field.
    #[must_use]
    pub fn run_message(&self, cmd: &RawDocument, ctx: &ConnectionContext) -> RawDocumentBuf {
        match cmd.get_str("$db") {
            Ok(db) => self.run_command(db, cmd, ctx),
            Err(_) => {
                self.stats.request_ran();
                self.stats.add(crate::stats::Counter::OpCommand, 1);
                self.stats.add(crate::stats::Counter::AssertUser, 1);
                let message = "OP_MSG requests require a $db argument of type string";
                Error::new(ErrorCode::FailedToParse, message).to_reply()
            }
        }
    }

    /// Runs a legacy OP_QUERY, which is accepted only for the connection handshake
    /// (hello / isMaster on `<db>.$cmd`), as in MongoDB 5.1 and later.
    #[must_use]
    pub fn run_legacy_query(
        &self,
        query: &wire::OpQuery,
        ctx: &ConnectionContext,
    ) -> RawDocumentBuf {
        // The handshake counts as a command (in dispatch), as mongod counts it.
        self.stats.request_ran();
        let mut reply = command::run_legacy(self, query, ctx).unwrap_or_else(|error| {
            self.stats.add(crate::stats::Counter::AssertUser, 1);
            error.to_reply()
        });
        self.add_cluster_time(&mut reply);
        reply
    }

    /// The reply for a message that was framed correctly but could not be decoded.
    #[must_use]
    pub fn protocol_error_reply(&self, error: &wire::Error) -> RawDocumentBuf {
        Error::from(error.clone()).to_reply()
    }

    /// Whether `reply` reports a write whose outcome is unknown: a server must not send
    /// it as a definite failure, but close the connection (drivers then treat the
    /// outcome as unknown, as when mongod fail-stops on a failed journal write).
    #[must_use]
    pub fn is_outcome_unknown(reply: &RawDocument) -> bool {
        reply.get_array("errorLabels").ok().is_some_and(|labels| {
            labels.into_iter().any(|label| {
                label.ok().and_then(|l| l.as_str()) == Some(crate::error::OUTCOME_UNKNOWN_LABEL)
            })
        })
    }

    /// Why a server must close the connection instead of sending `reply`: a write whose
    /// outcome is unknown ([`Engine::is_outcome_unknown`]), or the `failCommand` fail
    /// point's `closeConnection`. `None`: send it.
    #[must_use]
    pub fn closes_connection(reply: &RawDocument) -> Option<&'static str> {
        let labels = reply.get_array("errorLabels").ok()?;
        labels
            .into_iter()
            .find_map(|label| match label.ok().and_then(|l| l.as_str())? {
                crate::error::OUTCOME_UNKNOWN_LABEL => Some("the outcome of its write is unknown"),
                crate::failpoint::CLOSE_LABEL => Some("the failCommand fail point closes it"),
                _ => None,
            })
    }

    /// Whether `cmd` is bounded, cheap work (no I/O, no waiting) that a server may run
    /// inline on its network thread instead of handing it to a worker.
    #[must_use]
    pub fn is_quick(&self, cmd: &RawDocument) -> bool {
        command::name_of(cmd)
            .ok()
            .and_then(command::find)
            .is_some_and(|spec| spec.quick)
    }
}

impl Drop for Engine {
    fn drop(&mut self) {
        // The thread holds the store only during a pass; this waits for that to end.
        self.ttl.stop();
        self.fsync_lock.release_all();
        // The checkpointer holds the store during a pass (a checkpoint, a sync, the log's
        // growth): waiting for the pass here makes this drop the store's last, so the
        // file lock is released before `drop` returns and a reopen right after succeeds.
        self.store.read().stop_checkpointer();
    }
}

/// Removes what a crash can leave behind: sorts' spill files (`crate::spill`) and `$out`'s
/// temporary collections. As mongod does with its `_tmp` directory and temporary
/// collections at startup.
fn drop_leftover_temporaries(store: &Store) -> Result<(), Error> {
    let (dir, name) = store.files();
    crate::spill::remove_leftovers(dir.as_ref(), name).map_err(|e| {
        let message = format!("cannot remove a sort's leftover spill files: {e}");
        Error::new(ErrorCode::InternalError, message)
    })?;
    drop_leftover_collections(store).map_err(Error::from)
}

/// Drops the `tmp.agg_out.*` collections an interrupted `$out` left (its output goes to
/// one of those and is renamed over the target in the same transaction, so one can only
/// be left by a file from a build that wrote them otherwise, or by a bug).
fn drop_leftover_collections(store: &Store) -> Result<(), crate::store::StoreError> {
    let leftovers: Vec<_> = {
        let reader = store.read()?;
        reader
            .collections(None)?
            .into_iter()
            .map(|(ns, _)| ns)
            .filter(|ns| ns.coll.starts_with("tmp.agg_out."))
            .collect()
    };
    if leftovers.is_empty() {
        return Ok(());
    }
    let mut writer = store.write()?;
    for ns in &leftovers {
        writer.drop_collection(ns)?;
    }
    writer.commit()
}
