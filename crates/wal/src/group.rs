//! Group commit's meeting points: how a round gathers its committers, what a woken
//! committer reads without the state lock, and the bells committers sleep on.
//!
//! Invariants:
//! - A round's committers all sleep on `Bells::rounds[round % 2]`; a round two later
//!   cannot start before every one of them was rung awake, so the parity is enough.
//! - A committer sleeps only if its bell did not ring since it counted itself in, under
//!   the state lock; `Bells::ring` bumps `Bells::rings` before it takes `Bells::lock`, so
//!   no ring is lost between that check and the wait.
//! - `Bells::lock` is a leaf: no other lock of the log is held while it is.

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Condvar, Mutex, PoisonError};
use std::time::{Duration, Instant};

/// The longest a gather waits for the committers it expects, whatever the last sync took.
pub(crate) const GATHER_WAIT_MAX: Duration = Duration::from_millis(2);

/// How the next commit round gathers its committers (see the module docs of `wal`).
#[derive(Debug)]
pub(crate) struct Gather {
    /// Committers the next round waits for: those the last sync released (its leader
    /// included) plus those still waiting.
    pub(crate) expected: usize,
    /// When the last I/O ended: the gather of the next round began then.
    pub(crate) start: Instant,
    /// How long the gather may last: what the last commit's write and sync took, at
    /// most `GATHER_WAIT_MAX`.
    pub(crate) wait_max: Duration,
    /// The round whose gather a waiter times with a timeout, to lead it at the deadline.
    pub(crate) timer: Option<u64>,
}

/// What a woken committer reads without taking `Wal::state`; written under it, after
/// the state it mirrors.
#[derive(Debug)]
pub(crate) struct Published {
    pub(crate) lsn_durable_end: AtomicU64,
    pub(crate) poisoned: AtomicBool,
    /// Once poisoned: the first LSN none of whose bytes reached the file (records from
    /// here on are certainly not in the log; those before it may or may not be).
    pub(crate) lsn_unwritten_from: AtomicU64,
    /// Once poisoned: the OS error number of the failure (0 when it had none).
    pub(crate) errno: std::sync::atomic::AtomicI32,
}

/// Where committers sleep: round `r` on `rounds[r % 2]` (a round's waiters are all
/// asleep before the round two later can start). A committer sleeps only if its bell
/// has not rung (`rings`) since it counted itself in `State::waiting` under the state
/// lock; a ring bumps `rings`, then takes `lock`, so it cannot fall between that check
/// and the wait.
#[derive(Debug, Default)]
pub(crate) struct Bells {
    pub(crate) lock: Mutex<()>,
    pub(crate) rounds: [Condvar; 2],
    pub(crate) rings: [AtomicU64; 2],
}

impl Bells {
    /// Wakes every committer asleep on round `round`'s bell (or one, with `all` false).
    pub(crate) fn ring(&self, round: u64, all: bool) {
        let bell = parity(round);
        self.rings[bell].fetch_add(1, Ordering::AcqRel);
        drop(self.lock.lock().unwrap_or_else(PoisonError::into_inner));
        if all {
            self.rounds[bell].notify_all();
        } else {
            self.rounds[bell].notify_one();
        }
    }

    /// Sleeps on round `round`'s bell unless it rang since `rings[..]` read `rung`;
    /// until `due` when given. Returns on any wake-up, which may be spurious.
    pub(crate) fn sleep(&self, round: u64, rung: u64, due: Option<Instant>) {
        let bell = parity(round);
        let guard = self.lock.lock().unwrap_or_else(PoisonError::into_inner);
        if self.rings[bell].load(Ordering::Acquire) != rung {
            return;
        }
        let condvar = &self.rounds[bell];
        drop(match due {
            None => condvar.wait(guard).unwrap_or_else(PoisonError::into_inner),
            Some(due) => {
                let timeout = due.saturating_duration_since(Instant::now());
                condvar
                    .wait_timeout(guard, timeout)
                    .unwrap_or_else(PoisonError::into_inner)
                    .0
            }
        });
    }
}

/// The bell of round `round`.
pub(crate) fn parity(round: u64) -> usize {
    (round % 2) as usize
}
