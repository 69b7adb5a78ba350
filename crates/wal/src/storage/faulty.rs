//! A storage that injects faults: fails the Nth operation of a kind, returns short
//! writes, reports ENOSPC or an fsync error.
//!
//! Invariants:
//! - Operations are counted per kind (`Op`), from zero, whether or not they fail.
//! - A fault fires on operation number `nth` of its kind and, when `sticky`, on every
//!   later one of that kind; before `nth` the wrapped storage is used unchanged.
//! - A failed operation does not reach the wrapped storage (a short write reaches it with
//!   a prefix of the buffer and reports that prefix's length).

use super::Storage;
use parking_lot::Mutex;
use std::io;

/// The kinds of operation a fault can target.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Op {
    /// `read_at`.
    Read,
    /// `write_at`.
    Write,
    /// `sync`.
    Sync,
    /// `len`.
    Len,
    /// `set_len`.
    SetLen,
}

impl Op {
    /// Every kind of operation.
    pub const ALL: [Op; 5] = [Op::Read, Op::Write, Op::Sync, Op::Len, Op::SetLen];

    fn index(self) -> usize {
        match self {
            Op::Read => 0,
            Op::Write => 1,
            Op::Sync => 2,
            Op::Len => 3,
            Op::SetLen => 4,
        }
    }
}

/// What an injected fault does.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FaultKind {
    /// The operation fails with EIO (for `Op::Sync`: an fsync error).
    Io,
    /// The operation fails with ENOSPC, writing nothing.
    NoSpace,
    /// A write stores only the first half of its buffer (at least one byte) and reports
    /// that count; on other operations this behaves like `Io`.
    ShortWrite,
}

/// One planned fault.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Fault {
    /// Which kind of operation it targets.
    pub op: Op,
    /// The zero-based count, among operations of that kind, at which it fires.
    pub nth: u64,
    /// What happens.
    pub kind: FaultKind,
    /// Whether every later operation of that kind fails too.
    pub sticky: bool,
}

#[derive(Debug, Default)]
struct State {
    fault: Option<Fault>,
    counts: [u64; 5],
    fired: u64,
}

/// Wraps a storage and injects the planned fault.
#[derive(Debug, Default)]
pub struct FaultyStorage<S> {
    inner: S,
    state: Mutex<State>,
}

impl<S: Storage> FaultyStorage<S> {
    /// Wraps `inner` with no fault planned.
    pub fn new(inner: S) -> Self {
        FaultyStorage {
            inner,
            state: Mutex::new(State::default()),
        }
    }

    /// Plans `fault`, replacing any earlier plan (counts keep running).
    pub fn inject(&self, fault: Fault) {
        self.state.lock().fault = Some(fault);
    }

    /// Removes the planned fault.
    pub fn clear(&self) {
        self.state.lock().fault = None;
    }

    /// How many operations of kind `op` have been attempted.
    pub fn count(&self, op: Op) -> u64 {
        self.state.lock().counts[op.index()]
    }

    /// How many operations have failed or been shortened so far.
    pub fn fired(&self) -> u64 {
        self.state.lock().fired
    }

    /// The wrapped storage.
    pub fn inner(&self) -> &S {
        &self.inner
    }

    /// Counts one operation and returns the fault to apply to it, if any.
    fn check(&self, op: Op) -> Option<FaultKind> {
        let mut state = self.state.lock();
        let number = state.counts[op.index()];
        state.counts[op.index()] += 1;
        let fault = state.fault?;
        let hit = fault.op == op && (number == fault.nth || (fault.sticky && number > fault.nth));
        if hit {
            state.fired += 1;
            Some(fault.kind)
        } else {
            None
        }
    }
}

fn error_of(kind: FaultKind) -> io::Error {
    match kind {
        FaultKind::NoSpace => io::Error::from_raw_os_error(28),
        FaultKind::Io | FaultKind::ShortWrite => io::Error::from_raw_os_error(5),
    }
}

impl<S: Storage> Storage for FaultyStorage<S> {
    fn read_at(&self, buf: &mut [u8], offset: u64) -> io::Result<usize> {
        match self.check(Op::Read) {
            Some(kind) => Err(error_of(kind)),
            None => self.inner.read_at(buf, offset),
        }
    }

    fn write_at(&self, buf: &[u8], offset: u64) -> io::Result<usize> {
        match self.check(Op::Write) {
            Some(FaultKind::ShortWrite) if !buf.is_empty() => {
                let len = (buf.len() / 2).max(1);
                self.inner.write_at(&buf[..len], offset)
            }
            Some(kind) => Err(error_of(kind)),
            None => self.inner.write_at(buf, offset),
        }
    }

    fn sync(&self) -> io::Result<()> {
        match self.check(Op::Sync) {
            Some(kind) => Err(error_of(kind)),
            None => self.inner.sync(),
        }
    }

    fn len(&self) -> io::Result<u64> {
        match self.check(Op::Len) {
            Some(kind) => Err(error_of(kind)),
            None => self.inner.len(),
        }
    }

    fn set_len(&self, len: u64) -> io::Result<()> {
        match self.check(Op::SetLen) {
            Some(kind) => Err(error_of(kind)),
            None => self.inner.set_len(len),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::storage::MemStorage;

    #[test]
    fn faulty_storage_fails_exactly_the_nth_write_unless_sticky() {
        let storage = FaultyStorage::new(MemStorage::new());
        storage.inject(Fault {
            op: Op::Write,
            nth: 1,
            kind: FaultKind::NoSpace,
            sticky: false,
        });
        assert!(storage.write_at(b"a", 0).is_ok());
        let error = storage.write_at(b"b", 1).expect_err("second write fails");
        assert_eq!(error.raw_os_error(), Some(28));
        assert!(storage.write_at(b"c", 1).is_ok());
        assert_eq!(storage.inner().snapshot(), b"ac");
        assert_eq!(storage.fired(), 1);
    }

    #[test]
    fn faulty_storage_short_write_stores_a_prefix() {
        let storage = FaultyStorage::new(MemStorage::new());
        storage.inject(Fault {
            op: Op::Write,
            nth: 0,
            kind: FaultKind::ShortWrite,
            sticky: true,
        });
        assert_eq!(storage.write_at(b"abcd", 0).expect("short"), 2);
        storage
            .write_all_at(b"wxyz", 0)
            .expect("write_all continues");
        assert_eq!(storage.inner().snapshot(), b"wxyz");
    }

    #[test]
    fn faulty_storage_reports_fsync_failure() {
        let storage = FaultyStorage::new(MemStorage::new());
        storage.inject(Fault {
            op: Op::Sync,
            nth: 0,
            kind: FaultKind::Io,
            sticky: false,
        });
        assert_eq!(storage.sync().expect_err("fails").raw_os_error(), Some(5));
        assert!(storage.sync().is_ok());
    }
}
