//! The open cursors of an engine: id assignment, checkout for getMore, killCursors, and the
//! reaping of idle cursors.
//!
//! Lifecycle of a cursor (the transitions and the functions behind them):
//!
//! ```text
//!   find / aggregate / listCollections / listIndexes
//!     │ first batch (cursor::open → Cursor::next_batch)
//!     ├── nothing left, or singleBatch ─────────────────────────▶ exhausted (id 0, never stored)
//!     ▼ Registry::register
//!   open ──getMore: Registry::checkout → Cursor::next_batch → Registry::checkin──▶ open
//!     ├── getMore whose batch drains it: Registry::release ─────▶ exhausted
//!     ├── getMore that fails: Registry::release ─────────────────▶ killed
//!     ├── killCursors: Registry::kill ──────────────────────────▶ killed
//!     └── idle for CURSOR_IDLE_TIMEOUT_MS: Registry::sweep ─────▶ reaped
//! ```
//!
//! A checked-out cursor (one a getMore is working on) keeps its entry, empty: a second
//! getMore for its id finds nothing, a killCursors marks it to die when the getMore returns
//! it, and the sweep leaves it alone. Cursors opened with `noCursorTimeout` are never reaped. The sweep is lazy: it runs on registry
//! calls, at most once per `CURSOR_SWEEP_INTERVAL_MS` of the engine's clock.
//!
//! Invariants:
//! - An id is never 0 (0 means "exhausted" on the wire) and never names two cursors; a
//!   checked-out cursor's id stays reserved until it is checked in or released.
//! - Ids are a keyed hash of a counter: one client cannot guess the ids of another's cursors.
//! - Under `--auth` an entry keeps the user who opened it (`Entry::owner`): getMore and
//!   killCursors of another user answer 13 and leave the cursor as it was.

use super::cursor::Cursor;
use crate::limits::{CURSOR_IDLE_TIMEOUT_MS, CURSOR_SWEEP_INTERVAL_MS};
use crate::store::Namespace;
use parking_lot::Mutex;
use std::collections::HashMap;
use std::collections::hash_map::RandomState;

/// The engine's open cursors.
pub(crate) struct Registry {
    inner: Mutex<Inner>,
    /// How long a cursor may sit idle before it is reaped (`cursorTimeoutMillis`).
    idle_timeout_ms: std::sync::atomic::AtomicI64,
}

struct Inner {
    open: HashMap<i64, Entry>,
    /// Cursors reaped for idleness since start (serverStatus `metrics.cursor.timedOut`).
    timed_out: u64,
    counter: u64,
    key: u64,
    swept_ms: i64,
}

/// A registered cursor; `cursor` is `None` while a getMore has it checked out.
struct Entry {
    cursor: Option<Cursor>,
    ns: Namespace,
    no_timeout: bool,
    used_ms: i64,
    /// killCursors arrived while the cursor was checked out: drop it at checkin.
    killed: bool,
    /// The cursor's owner (`Cursor::owner`), kept while it is checked out.
    owner: Option<(String, String)>,
}

impl Registry {
    /// An empty registry. Its id key mixes `seed` (the engine's start time) with the
    /// process's random hasher keys, so ids differ between processes and runs.
    pub(crate) fn new(seed: i64) -> Registry {
        let key = std::hash::BuildHasher::hash_one(&RandomState::new(), seed);
        Registry {
            idle_timeout_ms: std::sync::atomic::AtomicI64::new(CURSOR_IDLE_TIMEOUT_MS),
            inner: Mutex::new(Inner {
                open: HashMap::new(),
                timed_out: 0,
                counter: 0,
                key,
                swept_ms: i64::MIN,
            }),
        }
    }

    /// Stores `cursor` as open and returns its new id.
    pub(crate) fn register(&self, cursor: Cursor, now_ms: i64) -> i64 {
        let mut inner = self.inner.lock();
        inner.sweep(now_ms, self.idle_timeout_ms());
        let id = loop {
            inner.counter += 1;
            let hash =
                xxhash_rust::xxh3::xxh3_64_with_seed(&inner.counter.to_le_bytes(), inner.key);
            let id = i64::try_from(hash >> 1).expect("a 63-bit value fits in an i64");
            if id != 0 && !inner.open.contains_key(&id) {
                break id;
            }
        };
        let entry = Entry {
            ns: cursor.ns.clone(),
            no_timeout: cursor.no_timeout,
            owner: cursor.owner.clone(),
            cursor: Some(cursor),
            used_ms: now_ms,
            killed: false,
        };
        inner.open.insert(id, entry);
        id
    }

    /// Takes cursor `id` for a getMore; `None` if it is not open (or another getMore has
    /// it). The id stays reserved until [`Registry::checkin`] or [`Registry::release`].
    pub(crate) fn checkout(&self, id: i64, now_ms: i64) -> Option<Cursor> {
        let mut inner = self.inner.lock();
        inner.sweep(now_ms, self.idle_timeout_ms());
        inner.open.get_mut(&id)?.cursor.take()
    }

    /// The owner of open cursor `id` (`None`: no such cursor).
    pub(crate) fn owner(&self, id: i64) -> Option<Option<(String, String)>> {
        self.inner
            .lock()
            .open
            .get(&id)
            .map(|entry| entry.owner.clone())
    }

    /// Returns a checked-out cursor, marked as used now; a cursor killed meanwhile is
    /// dropped instead.
    pub(crate) fn checkin(&self, id: i64, cursor: Cursor, now_ms: i64) {
        let mut inner = self.inner.lock();
        let entry = inner
            .open
            .get_mut(&id)
            .expect("a checked-out cursor keeps its entry");
        assert!(entry.cursor.is_none(), "cursor {id} was checked in twice");
        if entry.killed {
            inner.open.remove(&id);
            return;
        }
        entry.cursor = Some(cursor);
        entry.used_ms = now_ms;
    }

    /// Forgets a checked-out cursor that is exhausted or failed.
    pub(crate) fn release(&self, id: i64) {
        let removed = self.inner.lock().open.remove(&id);
        assert!(
            removed.is_some_and(|entry| entry.cursor.is_none()),
            "cursor {id} was released without being checked out"
        );
    }

    /// Kills cursor `id` if it is open on `ns`; whether it was. A checked-out cursor dies
    /// when its getMore returns it.
    pub(crate) fn kill(&self, id: i64, ns: &Namespace, now_ms: i64) -> bool {
        let mut inner = self.inner.lock();
        inner.sweep(now_ms, self.idle_timeout_ms());
        let Some(entry) = inner.open.get_mut(&id) else {
            return false;
        };
        if entry.ns != *ns {
            return false;
        }
        if entry.cursor.is_some() {
            inner.open.remove(&id);
        } else {
            entry.killed = true;
        }
        true
    }

    /// The idle time after which cursors are reaped (setParameter `cursorTimeoutMillis`).
    pub(crate) fn idle_timeout_ms(&self) -> i64 {
        self.idle_timeout_ms
            .load(std::sync::atomic::Ordering::Relaxed)
    }

    /// Sets [`Registry::idle_timeout_ms`].
    pub(crate) fn set_idle_timeout_ms(&self, timeout_ms: i64) {
        self.idle_timeout_ms
            .store(timeout_ms, std::sync::atomic::Ordering::Relaxed);
    }

    /// Registered cursors (checked-out ones included).
    #[cfg(test)]
    pub(crate) fn len(&self) -> usize {
        self.inner.lock().open.len()
    }

    /// serverStatus `metrics.cursor`'s figures: open, of which `noCursorTimeout`, of which
    /// pinned (checked out by a getMore), opened since start (the counter of ids) and
    /// reaped for idleness.
    pub(crate) fn counts(&self) -> CursorCounts {
        let inner = self.inner.lock();
        CursorCounts {
            open: inner.open.len() as u64,
            no_timeout: inner.open.values().filter(|e| e.no_timeout).count() as u64,
            pinned: inner.open.values().filter(|e| e.cursor.is_none()).count() as u64,
            opened: inner.counter,
            timed_out: inner.timed_out,
        }
    }
}

/// See [`Registry::counts`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct CursorCounts {
    pub(crate) open: u64,
    pub(crate) no_timeout: u64,
    pub(crate) pinned: u64,
    pub(crate) opened: u64,
    pub(crate) timed_out: u64,
}

impl Inner {
    /// Reaps cursors idle for `idle_timeout_ms`, at most once per sweep interval.
    fn sweep(&mut self, now_ms: i64, idle_timeout_ms: i64) {
        let due = now_ms.saturating_sub(self.swept_ms) >= CURSOR_SWEEP_INTERVAL_MS;
        if !due && now_ms >= self.swept_ms {
            return;
        }
        self.swept_ms = now_ms;
        let before = self.open.len();
        self.open.retain(|_, entry| {
            entry.cursor.is_none()
                || entry.no_timeout
                || now_ms.saturating_sub(entry.used_ms) < idle_timeout_ms
        });
        self.timed_out += (before - self.open.len()) as u64;
    }
}

#[cfg(test)]
mod tests {
    use super::Registry;
    use crate::command::cursor::{Cursor, Source};
    use crate::store::Namespace;
    use std::collections::VecDeque;

    fn cursor(coll: &str) -> Cursor {
        Cursor::new(
            Namespace::new("db", coll),
            Source::Buffered(VecDeque::new()),
        )
    }

    #[test]
    fn a_cursor_killed_during_its_get_more_dies_at_checkin() {
        let registry = Registry::new(0);
        let id = registry.register(cursor("c"), 0);
        let taken = registry.checkout(id, 1).expect("open");
        assert!(registry.checkout(id, 1).is_none(), "one getMore at a time");
        assert!(
            !registry.kill(id, &Namespace::new("db", "d"), 1),
            "other namespace"
        );
        assert!(registry.kill(id, &Namespace::new("db", "c"), 1));
        registry.checkin(id, taken, 2);
        assert_eq!(registry.len(), 0);
        assert!(registry.checkout(id, 3).is_none());
    }

    #[test]
    fn a_checked_out_cursor_is_not_reaped_and_keeps_its_id() {
        let registry = Registry::new(0);
        let id = registry.register(cursor("c"), 0);
        let taken = registry.checkout(id, 0).expect("open");
        let later = crate::limits::CURSOR_IDLE_TIMEOUT_MS * 2;
        let other = registry.register(cursor("c"), later);
        assert_ne!(other, id);
        registry.checkin(id, taken, later);
        assert!(registry.checkout(id, later + 1).is_some());
        registry.release(id);
        assert_eq!(registry.len(), 1);
    }
}
