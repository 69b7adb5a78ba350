//! The network thread: a mio poll loop that accepts, reads, frames, dispatches and writes.
//!
//! One thread owns every socket. It never blocks on a client: reads and writes
//! are non-blocking and partial frames wait in per-connection buffers, so a
//! client that trickles one byte a second or never speaks costs a buffer, not a
//! thread. Complete frames whose command the engine calls quick run inline
//! (a cross-thread hand-off costs more than they do: ≈45 µs per wake-up on the
//! CI machine); the rest go to the worker pool over a crossbeam channel and
//! come back through a mio `Waker`, so a slow command never stalls the loop.
//!
//! An awaitable hello is parked (no thread holds it) until its `maxAwaitTimeMS` passes,
//! on a timer the poll's timeout serves; an exhaust stream's next request runs when the
//! one before it has answered, as if the client had sent it (see `engine::streaming`).
//!
//! Shutdown (SIGTERM/SIGINT or [`ShutdownHandle::shutdown`]): stop accepting,
//! wait up to `SHUTDOWN_GRACE` for in-flight commands, flush, close all. SIGHUP reloads
//! the TLS certificate (`crate::tls`) for the handshakes after it.

use crate::config::{Config, Dispatch, LogLevel};
use crate::connection::{Connection, FrameState};
use crate::error::Error;
use crate::limits::{AWAIT_MAX, READ_CHUNK, SHUTDOWN_GRACE, TICK, WRITE_QUEUE_MAX};
use crate::tls::Tls;
use crate::worker::{self, Continuation, Done, Job, Outcome};
use crossbeam::channel::{self, Receiver, Sender};
use engine::{ConnectionContext, Engine};
use mio::net::{TcpListener, TcpStream};
use mio::{Events, Interest, Poll, Token, Waker};
use std::collections::BTreeSet;
use std::net::SocketAddr;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

const WAKER: Token = Token(usize::MAX - 1);

/// The close reason of a client that went away by itself (not logged as a reason).
const CLIENT_DISCONNECTED: &str = "client disconnected";

/// A count for a log attribute (mongod's are 64-bit).
fn count<N: TryInto<i64>>(n: N) -> i64 {
    n.try_into().unwrap_or(i64::MAX)
}
/// Connection tokens start here; tokens below are listeners.
const CONNECTION_BASE: usize = 1 << 16;

/// Stops a running [`Server`] from any thread.
#[derive(Clone)]
pub struct ShutdownHandle {
    requested: Arc<AtomicBool>,
    waker: Arc<Waker>,
    /// What SIGHUP reloads.
    tls: Option<Arc<Tls>>,
}

/// Workers when `--workers` is 0: sixteen per CPU, between 16 and 128. A durable write
/// holds its worker until its group commit's fdatasync returns, and the writes that share
/// one fdatasync are those waiting at once, so the pool bounds how many concurrent clients
/// can share a sync: one per CPU made 8 to 32 clients of durable inserts flat at about
/// 700 docs/s on 2 CPUs; 32 workers gave 1,000-1,400 (`cargo xtask gates`, three
/// interleaved pairs). Waiting workers cost a stack each, not CPU.
fn default_workers(cpus: usize) -> usize {
    (cpus * 16).clamp(16, 128)
}

impl ShutdownHandle {
    /// Asks the server to shut down gracefully.
    pub fn shutdown(&self) {
        self.requested.store(true, Ordering::SeqCst);
        if let Err(error) = self.waker.wake() {
            log_error!("cannot wake the event loop for shutdown: {error}");
        }
    }

    /// Calls [`ShutdownHandle::shutdown`] on SIGTERM or SIGINT, and reloads the TLS
    /// certificate on SIGHUP, from a helper thread.
    pub fn on_signals(&self) -> Result<SignalGuard, Error> {
        use signal_hook::consts::{SIGHUP, SIGINT, SIGTERM};
        let mut signals = signal_hook::iterator::Signals::new([SIGTERM, SIGINT, SIGHUP])
            .map_err(Error::Signals)?;
        let handle = signals.handle();
        let this = self.clone();
        std::thread::Builder::new()
            .name("signals".into())
            .spawn(move || {
                for signal in signals.forever() {
                    if signal == SIGHUP {
                        this.reload();
                        continue;
                    }
                    // mongod's line, with strsignal(3)'s text.
                    let error = if signal == SIGTERM {
                        "Terminated"
                    } else {
                        "Interrupt"
                    };
                    let attr = bson::doc! { "signal": signal, "error": error };
                    crate::log::event(
                        LogLevel::Info,
                        "CONTROL",
                        23_377,
                        "SignalHandler",
                        "Received signal",
                        Some(&attr),
                    );
                    this.shutdown();
                    return;
                }
            })
            .map_err(Error::Signals)?;
        Ok(SignalGuard { handle })
    }

    /// SIGHUP: new TLS handshakes use the certificate files as they are now; when they do
    /// not make a valid configuration, the one in use stays (and the failure is logged).
    fn reload(&self) {
        match &self.tls {
            None => log_info!("received SIGHUP: no TLS certificate to reload"),
            Some(tls) => {
                if let Err(error) = tls.reload() {
                    log_warn!("received SIGHUP: TLS certificate kept, reload failed: {error}");
                }
            }
        }
    }
}

/// Keeps the signal thread alive; [`SignalGuard::close`] releases it.
pub struct SignalGuard {
    handle: signal_hook::iterator::Handle,
}

impl SignalGuard {
    /// Stops listening for signals.
    pub fn close(self) {
        self.handle.close();
    }
}

/// A bound server, ready to [`Server::run`].
pub struct Server {
    engine: Arc<Engine>,
    poll: Poll,
    listeners: Vec<TcpListener>,
    addresses: Vec<SocketAddr>,
    shutdown: ShutdownHandle,
    connections_max: usize,
    frame_timeout: Option<Duration>,
    idle_timeout: Option<Duration>,
    /// With `--auth`, how long a connection that has not authenticated may stay quiet.
    unauthenticated_idle: Option<Duration>,
    dispatch: Dispatch,
    workers: usize,
    tls: Option<Arc<Tls>>,
    /// What `--networkMessageCompressors` enables, in its order.
    compressors: Arc<[wire::Compressor]>,
}

impl Server {
    /// Listens on every `--bind` address at `--port`, with the TLS settings of `config`.
    pub fn bind(config: &Config, engine: Arc<Engine>) -> Result<Server, Error> {
        let tls = Tls::from_config(config)?;
        Server::bind_with_tls(config, engine, tls)
    }

    /// [`Server::bind`] with TLS settings already loaded ([`Tls::from_config`]).
    pub fn bind_with_tls(
        config: &Config,
        engine: Arc<Engine>,
        tls: Option<Arc<Tls>>,
    ) -> Result<Server, Error> {
        crate::log::set_level(config.log_level);
        crate::log::set_format(config.log_format);
        crate::log::record_into(engine.recent_log());
        engine.recent_log().echo_to(Box::new(crate::log::echo));
        engine.log_open_warnings();
        let poll = Poll::new().map_err(Error::Poll)?;
        let waker = Arc::new(Waker::new(poll.registry(), WAKER).map_err(Error::Poll)?);
        let mut listeners = Vec::new();
        let mut addresses = Vec::new();
        for (index, ip) in config.bind.iter().enumerate() {
            let address = SocketAddr::new(*ip, config.port);
            let mut listener = listen(address).map_err(|source| Error::Bind { address, source })?;
            let local = listener
                .local_addr()
                .map_err(|source| Error::Bind { address, source })?;
            poll.registry()
                .register(&mut listener, Token(index), Interest::READABLE)
                .map_err(Error::Poll)?;
            listeners.push(listener);
            addresses.push(local);
        }
        start_replica_set(config, &engine, &addresses)?;
        let seconds = |s: u64| (s > 0).then(|| Duration::from_secs(s));
        let workers = if config.workers > 0 {
            config.workers
        } else {
            default_workers(std::thread::available_parallelism().map_or(2, |n| n.get()))
        };
        let shutdown = ShutdownHandle {
            requested: Arc::new(AtomicBool::new(false)),
            waker,
            tls: tls.clone(),
        };
        // The `shutdown` command stops this server as SIGTERM does.
        let handle = shutdown.clone();
        engine.on_shutdown(Arc::new(move || {
            let ctx = crate::log::thread_context();
            let message = "Terminating via shutdown command";
            crate::log::event(LogLevel::Info, "COMMAND", 4_695_400, &ctx, message, None);
            handle.shutdown();
        }));
        Ok(Server {
            engine,
            poll,
            listeners,
            addresses,
            shutdown,
            connections_max: config.max_connections,
            frame_timeout: seconds(config.frame_timeout_secs),
            idle_timeout: seconds(config.idle_timeout_secs),
            unauthenticated_idle: if config.auth {
                seconds(config.unauthenticated_idle_secs)
            } else {
                None
            },
            dispatch: config.dispatch,
            workers,
            tls,
            compressors: crate::compression::parse(&config.network_message_compressors)
                .map_err(Error::Config)?
                .into(),
        })
    }

    /// The addresses actually listened on (with the real port when `--port 0`).
    #[must_use]
    pub fn local_addresses(&self) -> &[SocketAddr] {
        &self.addresses
    }

    /// A handle that stops the server.
    #[must_use]
    pub fn shutdown_handle(&self) -> ShutdownHandle {
        self.shutdown.clone()
    }

    /// Serves until shutdown is requested.
    pub fn run(self) -> Result<(), Error> {
        let (job_sender, job_receiver) = channel::unbounded::<Job>();
        let (done_sender, done_receiver) = channel::unbounded::<Done>();
        let pool = worker::spawn_pool(
            self.workers,
            &self.engine,
            &job_receiver,
            &done_sender,
            &self.shutdown.waker,
        )
        .map_err(Error::Workers)?;
        drop((done_sender, job_receiver));
        // mongod's two lines: each address (without the port), then the port.
        for address in &self.addresses {
            let attr = bson::doc! { "address": address.ip().to_string() };
            let message = "Listening on";
            crate::log::event(
                LogLevel::Info,
                "NETWORK",
                23_015,
                "listener",
                message,
                Some(&attr),
            );
        }
        if let Some(first) = self.addresses.first() {
            let ssl = if self.tls.is_some() { "on" } else { "off" };
            let attr = bson::doc! { "port": i32::from(first.port()), "ssl": ssl };
            let message = "Waiting for connections";
            crate::log::event(
                LogLevel::Info,
                "NETWORK",
                23_016,
                "listener",
                message,
                Some(&attr),
            );
        }
        let mut state = LoopState {
            scratch: vec![0; READ_CHUNK],
            connections: Vec::new(),
            free: Vec::new(),
            open: 0,
            next_connection_id: 1,
            jobs: Some(job_sender),
            done: done_receiver,
            parked: BTreeSet::new(),
            server: self,
        };
        let result = state.serve();
        state.close_all();
        // Dropping the job sender ends the workers' loops.
        state.jobs = None;
        for handle in pool {
            if handle.join().is_err() {
                log_error!("a worker thread panicked");
            }
        }
        result
    }
}

/// With `--replSet`, makes the engine the primary of its set, now that the address
/// clients reach it at is known; without it, says so when the file was a member's, as
/// mongod does.
fn start_replica_set(
    config: &Config,
    engine: &Engine,
    addresses: &[SocketAddr],
) -> Result<(), Error> {
    match config.replica_set(addresses) {
        Some(options) if engine.replica_set().is_none() => {
            engine
                .start_replica_set(&options)
                .map_err(|error| Error::Database(format!("--replSet {}: {error}", options.name)))?;
            let member = engine.replica_set();
            log_info!(
                "replica set {}: this server is its primary at {} (term {})",
                options.name,
                options.host,
                member.map_or(0, engine::repl::Member::term)
            );
        }
        Some(_) => {}
        None => {
            if let Ok(Some(name)) = engine.stored_replica_set_name() {
                log_warn!(
                    "this database was a member of replica set '{name}', but the server \
                     started without --replSet: it runs as a standalone (no oplog entries, \
                     no retryable writes); restart with --replSet {name} to serve the set"
                );
            }
        }
    }
    Ok(())
}

fn listen(address: SocketAddr) -> std::io::Result<TcpListener> {
    let listener = std::net::TcpListener::bind(address)?;
    listener.set_nonblocking(true)?;
    Ok(TcpListener::from_std(listener))
}

struct LoopState {
    /// The buffer every socket read goes through before landing in a connection.
    scratch: Vec<u8>,
    connections: Vec<Option<Connection>>,
    free: Vec<usize>,
    open: usize,
    next_connection_id: i64,
    jobs: Option<Sender<Job>>,
    done: Receiver<Done>,
    /// Parked hellos by when they run: (due, slot, connection id); an entry whose
    /// connection has gone is skipped when it comes due.
    parked: BTreeSet<(Instant, usize, i64)>,
    server: Server,
}

/// What runs one request for a connection: the parts of the loop's state it needs.
struct Starter<'a> {
    engine: &'a Arc<Engine>,
    dispatch: Dispatch,
    jobs: Option<&'a Sender<Job>>,
    parked: &'a mut BTreeSet<(Instant, usize, i64)>,
}

impl Starter<'_> {
    /// Runs a request (a frame the client sent, or an exhaust stream's next one) inline or
    /// at a worker, or parks it when it is an awaitable hello that has not `waited`.
    /// `Err` is the reason to close the connection.
    fn start(
        &mut self,
        connection: &mut Connection,
        slot: usize,
        (header, message): (wire::Header, wire::Message),
        compressor: Option<wire::Compressor>,
        waited: bool,
    ) -> Result<(), String> {
        let wait = match &message {
            wire::Message::Msg(msg) if !waited => self.engine.reply_wait_ms(&msg.body),
            _ => None,
        };
        if let Some(wait) = wait.filter(|&ms| ms > 0) {
            let now = Instant::now();
            let due = now
                .checked_add(Duration::from_millis(wait))
                .unwrap_or(now + AWAIT_MAX);
            self.parked
                .insert((due.min(now + AWAIT_MAX), slot, connection.ctx.connection_id));
            connection.parked = Some((header, message));
            return Ok(());
        }
        if self.dispatch == Dispatch::Auto && is_quick(self.engine, &message) {
            let outcome =
                worker::execute(self.engine, &header, &message, &connection.ctx, compressor);
            return deliver(connection, outcome);
        }
        let Some(jobs) = self.jobs else {
            return Ok(());
        };
        connection.in_flight = true;
        let job = Job {
            token: slot,
            connection_id: connection.ctx.connection_id,
            header,
            message,
            ctx: connection.ctx.clone(),
            compressor,
        };
        jobs.send(job).map_err(|_| "worker pool stopped".to_owned())
    }
}

/// Queues what a request produced on its connection; `Err` is the reason to close it.
fn deliver(connection: &mut Connection, outcome: Outcome) -> Result<(), String> {
    match outcome {
        Outcome::Reply(bytes) => connection.queue(bytes),
        Outcome::Stream(bytes, next) => {
            connection.queue(bytes);
            connection.continuation = Some(next);
        }
        Outcome::Silent => {}
        Outcome::Close(reason) => return Err(reason),
    }
    Ok(())
}

/// Releases what an exhaust stream that will not go on holds (its cursor).
fn abandon(engine: &Engine, next: &Continuation) {
    if let Some(body) = next.body() {
        engine.abandon_stream(body);
    }
}

impl LoopState {
    fn serve(&mut self) -> Result<(), Error> {
        let mut events = Events::with_capacity(1024);
        let mut shutdown_started: Option<Instant> = None;
        loop {
            let ticking = shutdown_started.is_some() || self.needs_ticks();
            let timeout = self.poll_timeout(ticking);
            if let Err(error) = self.server.poll.poll(&mut events, timeout) {
                if error.kind() == std::io::ErrorKind::Interrupted {
                    continue;
                }
                return Err(Error::Poll(error));
            }
            for event in &events {
                match event.token() {
                    WAKER => self.collect_done(),
                    Token(index) if index < CONNECTION_BASE => {
                        if shutdown_started.is_none() {
                            self.accept(index);
                        }
                    }
                    Token(token) => self.drive(token - CONNECTION_BASE),
                }
            }
            self.wake_parked();
            if ticking {
                self.check_deadlines();
            }
            if self.server.shutdown.requested.load(Ordering::SeqCst) {
                let started = *shutdown_started.get_or_insert_with(Instant::now);
                self.stop_listening();
                // Parked hellos and streams wait on nothing: they are closed as they are.
                let busy = self.connections.iter().flatten().any(|c| c.in_flight);
                if !busy || started.elapsed() > SHUTDOWN_GRACE {
                    return Ok(());
                }
            }
        }
    }

    /// The poll's timeout: the tick while deadlines are checked, and no later than the
    /// first parked hello's due time.
    fn poll_timeout(&self, ticking: bool) -> Option<Duration> {
        let tick = ticking.then_some(TICK);
        let Some(&(due, _, _)) = self.parked.first() else {
            return tick;
        };
        let until = due.saturating_duration_since(Instant::now());
        Some(tick.map_or(until, |tick| tick.min(until)))
    }

    /// Runs the parked hellos whose wait is over.
    fn wake_parked(&mut self) {
        let now = Instant::now();
        while let Some(&(due, slot, id)) = self.parked.first() {
            if due > now {
                return;
            }
            self.parked.pop_first();
            let Some(Some(connection)) = self.connections.get_mut(slot) else {
                continue;
            };
            if connection.ctx.connection_id != id {
                continue;
            }
            let Some(request) = connection.parked.take() else {
                continue;
            };
            let mut starter = Starter {
                engine: &self.server.engine,
                dispatch: self.server.dispatch,
                jobs: self.jobs.as_ref(),
                parked: &mut self.parked,
            };
            // A hello is never compressed, so a parked one has no compressor to keep.
            if let Err(reason) = starter.start(connection, slot, request, None, true) {
                self.close(slot, &reason);
                continue;
            }
            self.drive(slot);
        }
    }

    fn needs_ticks(&self) -> bool {
        self.server.idle_timeout.is_some()
            || self.server.unauthenticated_idle.is_some()
            || (self.server.frame_timeout.is_some()
                && self
                    .connections
                    .iter()
                    .flatten()
                    .any(Connection::has_partial_frame))
    }

    fn stop_listening(&mut self) {
        for mut listener in self.server.listeners.drain(..) {
            let _ = self.server.poll.registry().deregister(&mut listener);
        }
    }

    fn accept(&mut self, index: usize) {
        loop {
            let Some(listener) = self.server.listeners.get(index) else {
                return;
            };
            match listener.accept() {
                Ok((stream, peer)) => self.admit(stream, peer),
                Err(error) if error.kind() == std::io::ErrorKind::WouldBlock => return,
                Err(error) if error.kind() == std::io::ErrorKind::Interrupted => {}
                Err(error) => {
                    // EMFILE and friends: log and wait for the next readiness edge
                    // rather than spin; open connections keep being served.
                    log_warn!("accept failed: {error}");
                    return;
                }
            }
        }
    }

    fn admit(&mut self, mut stream: TcpStream, peer: SocketAddr) {
        if self.open >= self.server.connections_max {
            if crate::log::enabled(LogLevel::Info) {
                // mongod's line, at its level; `limit` is not mongod's attribute.
                let attr = bson::doc! {
                    "remote": peer.to_string(),
                    "isLoadBalanced": false,
                    "connectionCount": count(self.open),
                    "limit": count(self.server.connections_max),
                };
                let message = "Connection refused because there are too many open connections";
                crate::log::event(
                    LogLevel::Info,
                    "NETWORK",
                    22_942,
                    "listener",
                    message,
                    Some(&attr),
                );
            }
            drop(stream);
            return;
        }
        // Requests and replies are small and latency-bound; never wait for Nagle.
        if let Err(error) = stream.set_nodelay(true) {
            log_debug!("set_nodelay for {peer}: {error}");
        }
        let slot = self.free.pop().unwrap_or_else(|| {
            self.connections.push(None);
            self.connections.len() - 1
        });
        let token = Token(slot + CONNECTION_BASE);
        let interest = Interest::READABLE | Interest::WRITABLE;
        if let Err(error) = self
            .server
            .poll
            .registry()
            .register(&mut stream, token, interest)
        {
            log_warn!("cannot register connection from {peer}: {error}");
            self.free.push(slot);
            return;
        }
        let connection_id = self.next_connection_id;
        self.next_connection_id += 1;
        let ctx = ConnectionContext {
            connection_id,
            client_address: peer.to_string(),
            auth: engine::AuthSession::default(),
            compressors: Arc::clone(&self.server.compressors),
            client: engine::ClientMetadata::default(),
        };
        if let Some(entry) = self.connections.get_mut(slot) {
            let transport = Tls::transport(self.server.tls.as_deref());
            *entry = Some(Connection::new(stream, transport, ctx));
        }
        self.open += 1;
        self.server.engine.stats().connection_opened();
        if crate::log::enabled(LogLevel::Info) {
            let attr = bson::doc! {
                "remote": peer.to_string(),
                "isLoadBalanced": false,
                "connectionId": count(connection_id),
                "connectionCount": count(self.open),
            };
            let message = "Connection accepted";
            crate::log::event(
                LogLevel::Info,
                "NETWORK",
                22_943,
                "listener",
                message,
                Some(&attr),
            );
        }
        self.drive(slot);
    }

    fn close(&mut self, slot: usize, reason: &str) {
        let Some(entry) = self.connections.get_mut(slot) else {
            return;
        };
        let Some(mut connection) = entry.take() else {
            return;
        };
        if let Some(next) = connection.continuation.take() {
            abandon(&self.server.engine, &next);
        }
        connection.transport.close(&mut connection.stream);
        let _ = self
            .server
            .poll
            .registry()
            .deregister(&mut connection.stream);
        self.free.push(slot);
        self.open -= 1;
        self.server.engine.stats().connection_closed();
        if crate::log::enabled(LogLevel::Info) {
            let id = connection.ctx.connection_id;
            let mut attr = bson::doc! {
                "remote": &connection.ctx.client_address,
                "isLoadBalanced": false,
                "connectionId": count(id),
                "connectionCount": count(self.open),
            };
            // Not mongod's: why the server ended it, when the client did not.
            if reason != CLIENT_DISCONNECTED {
                attr.insert("reason", reason);
            }
            let ctx = format!("conn{id}");
            let message = "Connection ended";
            crate::log::event(
                LogLevel::Info,
                "NETWORK",
                22_944,
                &ctx,
                message,
                Some(&attr),
            );
        }
    }

    /// Reads, answers and writes for one connection until it would block.
    fn drive(&mut self, slot: usize) {
        let Some(Some(connection)) = self.connections.get_mut(slot) else {
            return;
        };
        let engine = Arc::clone(&self.server.engine);
        let mut starter = Starter {
            engine: &engine,
            dispatch: self.server.dispatch,
            jobs: self.jobs.as_ref(),
            parked: &mut self.parked,
        };
        let mut close_reason: Option<String> = None;
        loop {
            if connection.continuation.is_some() && !connection.in_flight {
                // An exhaust stream: its batches go out as they are made, and the next
                // waits while the client is not reading them.
                if let Err(error) = connection.flush() {
                    close_reason = Some(format!("write failed: {error}"));
                    break;
                }
                if connection.peer_closed {
                    close_reason = Some("client closed an exhaust stream".into());
                    break;
                }
                if connection.write_pending() < WRITE_QUEUE_MAX
                    && let Some(next) = connection.continuation.take()
                {
                    let Continuation {
                        header,
                        message,
                        compressor,
                    } = *next;
                    let request = (header, message);
                    if let Err(reason) = starter.start(connection, slot, request, compressor, false)
                    {
                        close_reason = Some(reason);
                        break;
                    }
                    continue;
                }
            }
            match connection.next_frame() {
                FrameState::Bad(error) => {
                    close_reason = Some(format!("unframeable input: {error}"));
                    break;
                }
                FrameState::Ready(frame) => {
                    engine.stats().frame_read(frame.len() as u64);
                    let (frame, compressor) = match uncompressed(&engine, connection, frame) {
                        Ok(uncompressed) => uncompressed,
                        Err(reason) => {
                            close_reason = Some(reason);
                            break;
                        }
                    };
                    match wire::decode(&frame) {
                        Ok(request) => {
                            if let Err(reason) =
                                starter.start(connection, slot, request, compressor, false)
                            {
                                close_reason = Some(reason);
                                break;
                            }
                        }
                        Err((Some(header), error)) => {
                            log_debug!(
                                "conn{} refused message: {error}",
                                connection.ctx.connection_id
                            );
                            if let Outcome::Reply(bytes) = worker::refuse(&engine, &header, &error)
                            {
                                connection.queue(bytes);
                            }
                        }
                        Err((None, error)) => {
                            close_reason = Some(format!("undecodable frame: {error}"));
                            break;
                        }
                    }
                    continue;
                }
                FrameState::Partial => {}
            }
            if !connection.fill(&mut self.scratch, engine.stats()) {
                break;
            }
        }
        if close_reason.is_none()
            && let Err(error) = connection.flush()
        {
            close_reason = Some(format!("write failed: {error}"));
        }
        if close_reason.is_none() && connection.finished() {
            close_reason = Some(
                connection
                    .closed_reason
                    .take()
                    .unwrap_or_else(|| CLIENT_DISCONNECTED.into()),
            );
        }
        if let Some(reason) = close_reason {
            self.close(slot, &reason);
        }
    }

    fn collect_done(&mut self) {
        while let Ok(done) = self.done.try_recv() {
            let live = matches!(
                self.connections.get(done.token),
                Some(Some(connection)) if connection.ctx.connection_id == done.connection_id
            );
            if !live {
                // The client left while its request ran: a stream it started ends here.
                if let Outcome::Stream(_, next) = &done.outcome {
                    abandon(&self.server.engine, next);
                }
                continue;
            }
            let Some(Some(connection)) = self.connections.get_mut(done.token) else {
                continue;
            };
            connection.in_flight = false;
            if let Err(reason) = deliver(connection, done.outcome) {
                self.close(done.token, &reason);
                continue;
            }
            self.drive(done.token);
        }
    }

    fn check_deadlines(&mut self) {
        let now = Instant::now();
        let mut expired = Vec::new();
        for (slot, connection) in self.connections.iter().enumerate() {
            let Some(connection) = connection else {
                continue;
            };
            if let (Some(limit), Some(started)) =
                (self.server.frame_timeout, connection.frame_started)
                && connection.has_partial_frame()
                && now.duration_since(started) > limit
            {
                let what = if connection.transport.is_handshaking() {
                    "TLS handshake"
                } else {
                    "message"
                };
                expired.push((
                    slot,
                    format!("{what} incomplete after {}s", limit.as_secs()),
                ));
            } else if let Some(limit) = self.server.idle_timeout
                && !connection.busy()
                && now.duration_since(connection.last_read) > limit
            {
                expired.push((slot, format!("idle for {}s", limit.as_secs())));
            } else if let Some(limit) = self.server.unauthenticated_idle
                && !connection.busy()
                && !connection.ctx.auth.is_authenticated()
                && now.duration_since(connection.last_read) > limit
            {
                let reason = format!("not authenticated and idle for {}s", limit.as_secs());
                expired.push((slot, reason));
            }
        }
        for (slot, reason) in expired {
            self.close(slot, &reason);
        }
    }

    fn close_all(&mut self) {
        for slot in 0..self.connections.len() {
            if let Some(Some(connection)) = self.connections.get_mut(slot) {
                let _ = connection.flush();
            }
            self.close(slot, "server shutting down");
        }
    }
}

/// The frame an OP_COMPRESSED `frame` wraps and its compressor (any other frame as it is);
/// `Err` (logged) is the reason to close the connection: a compressed message that does not
/// decompress to exactly its announced size, or names a compressor not enabled here.
/// What the decompressor took and gave is counted for serverStatus `network.compression`.
fn uncompressed(
    engine: &Engine,
    connection: &Connection,
    frame: Vec<u8>,
) -> Result<(Vec<u8>, Option<wire::Compressor>), String> {
    if !wire::compression::is_compressed(&frame) {
        return Ok((frame, None));
    }
    match wire::compression::decompress(&frame, &connection.ctx.compressors) {
        Ok((inner, compressor)) => {
            let (taken, given) = (frame.len() as u64, inner.len() as u64);
            engine.stats().decompressed(compressor, taken, given);
            Ok((inner, Some(compressor)))
        }
        Err((_, error)) => {
            log_error!(
                "conn{} refused a compressed message: {error}",
                connection.ctx.connection_id
            );
            Err(format!("bad compressed message: {error}"))
        }
    }
}

fn is_quick(engine: &Engine, message: &wire::Message) -> bool {
    match message {
        wire::Message::Msg(msg) => msg.sequences.is_empty() && engine.is_quick(&msg.body),
        // The legacy handshake is always hello/isMaster or a refusal.
        _ => true,
    }
}

#[cfg(test)]
mod tests {
    use super::default_workers;

    #[test]
    fn the_default_pool_lets_concurrent_durable_writes_share_a_sync() {
        assert_eq!(default_workers(1), 16);
        assert_eq!(default_workers(2), 32);
        assert_eq!(default_workers(64), 128);
    }
}
