//! Authentication and authorization (issue 20): SCRAM conversations, the users and roles
//! stored in `admin.system.users` / `admin.system.roles`, and the one table that says
//! which action on which resource each command needs.
//!
//! What it owns: each connection's [`AuthSession`] (who is authenticated, the SASL
//! conversation in progress, the privileges computed for the user) and the engine-wide
//! [`Auth`] state (whether `--auth` is on, and a generation counter that every committed
//! user or role change bumps).
//!
//! Invariants:
//! - With authentication off nothing here refuses anything; with it on, every command
//!   passes [`authorize::check`] before its handler, and a command without a row in
//!   [`authorize::RULES`] is refused (a test checks that every registered command has one).
//! - Users are stored as mongod stores them, with salted, iterated keys only
//!   ([`scram::Credential`]); no password is ever stored or logged.
//! - Cached privileges are used only while their generation equals [`Auth::generation`]:
//!   a user or role command that commits makes every session recompute them.
//! - A failed authentication tells the client only 18 AuthenticationFailed; the reason goes
//!   to the server's log.
//!
//! Lock order: a session's mutex is taken after no other lock and released before the
//! store is read (privileges are computed outside it, then stored).
//!
//! What it reads of the rest of the engine is narrow, and `cargo xtask tidy` keeps it so
//! (this folder never names `command` or `Engine`): a command as [`Asked`] (its database,
//! name, body and connection) and the engine as a [`Directory`] (the store, the [`Auth`]
//! state, the host, the recorded parameters).

pub(crate) mod authorize;
pub(crate) mod roles;
pub(crate) mod sasl;
pub(crate) mod scram;
pub(crate) mod users;

#[cfg(test)]
mod tests;

use crate::host::Host;
use crate::store::Store;
use bson::RawDocument;
use roles::{Privilege, RoleName};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};

/// A command as authorization reads it.
#[derive(Clone, Copy)]
pub(crate) struct Asked<'a> {
    /// The database it runs against.
    pub(crate) db: &'a str,
    /// Its name (the body's first field).
    pub(crate) name: &'a str,
    /// The whole command document (namespaces and options are read from it).
    pub(crate) body: &'a RawDocument,
    /// The connection's authentication state.
    pub(crate) session: &'a AuthSession,
    /// The connection's peer address (`host:port`), for the localhost exception.
    pub(crate) client_address: &'a str,
}

/// Where the store comes from: the engine's current store (reopened after a failure).
pub(crate) trait Stores {
    /// The store to read and write users and roles through now.
    fn store(&self) -> Arc<Store>;
}

/// What authentication and authorization use of the engine.
pub(crate) struct Directory<'a> {
    /// The engine's store, asked for at each use.
    pub(crate) stores: &'a dyn Stores,
    /// The engine-wide authentication state.
    pub(crate) auth: &'a Auth,
    /// The clock and the random numbers (salts, nonces).
    pub(crate) host: &'a dyn Host,
    /// Runtime parameters (`scramIterationCount`, `scramSHA256IterationCount`).
    pub(crate) parameters:
        &'a parking_lot::Mutex<std::collections::BTreeMap<&'static str, bson::Bson>>,
    /// Where logins are logged (mongod's ACCESS lines).
    pub(crate) log: &'a crate::RecentLog,
}

impl Directory<'_> {
    /// The store to read and write users and roles through now.
    pub(crate) fn store(&self) -> Arc<Store> {
        self.stores.store()
    }
}

/// The engine-wide authentication state.
#[derive(Debug, Default)]
pub(crate) struct Auth {
    enabled: AtomicBool,
    generation: AtomicU64,
}

impl Auth {
    /// Whether commands need an authenticated, authorized user (`--auth`).
    pub(crate) fn enabled(&self) -> bool {
        self.enabled.load(Ordering::Acquire)
    }

    pub(crate) fn set_enabled(&self, enabled: bool) {
        self.enabled.store(enabled, Ordering::Release);
    }

    /// Bumped after every committed change to users or roles.
    pub(crate) fn generation(&self) -> u64 {
        self.generation.load(Ordering::Acquire)
    }

    /// Makes every session's cached privileges stale.
    pub(crate) fn invalidate(&self) {
        self.generation.fetch_add(1, Ordering::AcqRel);
    }
}

/// One connection's authentication state. Clones share it (the server hands a clone of
/// the connection's context to the worker that runs a command).
#[derive(Debug, Clone, Default)]
pub struct AuthSession(Arc<parking_lot::Mutex<SessionState>>);

impl PartialEq for AuthSession {
    fn eq(&self, other: &AuthSession) -> bool {
        Arc::ptr_eq(&self.0, &other.0)
    }
}

impl Eq for AuthSession {}

#[derive(Debug, Default)]
struct SessionState {
    user: Option<Authenticated>,
    pending: Option<sasl::Pending>,
    /// The subject (RFC 2253) of the client certificate the TLS handshake verified.
    certificate_subject: Option<String>,
    /// Failed authentication attempts since the connection's last success.
    failures: u32,
}

/// The user a connection authenticated as.
#[derive(Debug, Clone)]
pub(crate) struct Authenticated {
    pub(crate) db: String,
    pub(crate) user: String,
    /// The privileges and roles computed at `generation` (`None`: not yet computed).
    cache: Option<(u64, Arc<Grants>)>,
}

/// What a user holds: its roles (direct and inherited) and their privileges.
#[derive(Debug, Default)]
pub(crate) struct Grants {
    pub(crate) roles: Vec<RoleName>,
    pub(crate) privileges: Vec<Privilege>,
}

impl AuthSession {
    /// The authenticated user, as `(user, db)`.
    pub(crate) fn user(&self) -> Option<(String, String)> {
        let state = self.0.lock();
        state
            .user
            .as_ref()
            .map(|user| (user.user.clone(), user.db.clone()))
    }

    /// Whether a user is authenticated on the connection.
    pub fn is_authenticated(&self) -> bool {
        self.0.lock().user.is_some()
    }

    /// Counts one failed authentication attempt; returns how many there were since the
    /// last success.
    pub(crate) fn note_failure(&self) -> u32 {
        let mut state = self.0.lock();
        state.failures = state.failures.saturating_add(1);
        state.failures
    }

    /// Failed attempts since the last success.
    pub(crate) fn failures(&self) -> u32 {
        self.0.lock().failures
    }

    /// Replaces the authenticated user (a connection authenticates as one user at a time).
    pub(crate) fn login(&self, db: &str, user: &str) {
        let mut state = self.0.lock();
        state.failures = 0;
        state.pending = None;
        state.user = Some(Authenticated {
            db: db.to_owned(),
            user: user.to_owned(),
            cache: None,
        });
    }

    /// Forgets the user authenticated on `db` (logout).
    pub(crate) fn logout(&self, db: &str) {
        let mut state = self.0.lock();
        if state.user.as_ref().is_some_and(|user| user.db == db) {
            state.user = None;
        }
        state.pending = None;
    }

    /// Records the subject of the client certificate the connection's TLS handshake
    /// verified (the server calls it once the handshake completes; `None`: no
    /// certificate). Only a verified certificate may be named here: MONGODB-X509 trusts it.
    pub fn set_certificate_subject(&self, subject: Option<String>) {
        self.0.lock().certificate_subject = subject;
    }

    /// The verified client certificate's subject, if any.
    pub(crate) fn certificate_subject(&self) -> Option<String> {
        self.0.lock().certificate_subject.clone()
    }

    pub(crate) fn take_pending(&self) -> Option<sasl::Pending> {
        self.0.lock().pending.take()
    }

    pub(crate) fn set_pending(&self, pending: sasl::Pending) {
        self.0.lock().pending = Some(pending);
    }

    /// The cached grants if they are from `generation`.
    fn cached(&self, generation: u64) -> Option<Arc<Grants>> {
        let state = self.0.lock();
        let (at, grants) = state.user.as_ref()?.cache.as_ref()?;
        (*at == generation).then(|| Arc::clone(grants))
    }

    fn store_cache(&self, user: &(String, String), generation: u64, grants: Arc<Grants>) {
        let mut state = self.0.lock();
        if let Some(current) = state.user.as_mut()
            && current.user == user.0
            && current.db == user.1
        {
            current.cache = Some((generation, grants));
        }
    }
}

/// The grants of the session's user (`None` when nobody is authenticated), recomputed
/// from the stored users and roles when a user or role command committed since.
pub(crate) fn grants(
    directory: &Directory<'_>,
    session: &AuthSession,
) -> Result<Option<Arc<Grants>>, crate::error::Error> {
    let Some(user) = session.user() else {
        return Ok(None);
    };
    let generation = directory.auth.generation();
    if let Some(grants) = session.cached(generation) {
        return Ok(Some(grants));
    }
    let store = directory.store();
    let grants = match users::find(&store, &user.1, &user.0)? {
        Some(found) => Arc::new(roles::resolve(&store, &found.roles)?),
        // A dropped user keeps its connection but holds nothing.
        None => Arc::new(Grants::default()),
    };
    session.store_cache(&user, generation, Arc::clone(&grants));
    Ok(Some(grants))
}
