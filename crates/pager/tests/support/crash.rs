//! The crash model of the pager's and B+tree's tests: `wal::CrashStorage` (every write
//! since the last sync kept, dropped or torn sector by sector, in any order) with the
//! schedule these tests need on top: power failing during the n-th sync from now, after
//! which every write and sync fails, and writes failing after the n-th.

use super::Rng;
use std::io;
use std::sync::{Mutex, MutexGuard};
use wal::Storage;

#[derive(Debug, Default)]
struct Plan {
    fail_writes_after: Option<u64>,
    writes: u64,
    syncs_until_crash: Option<u64>,
    crashed: bool,
}

/// An in-memory file that remembers what a crash could lose.
#[derive(Debug, Default)]
pub struct CrashStorage {
    model: wal::CrashStorage,
    plan: Mutex<Plan>,
}

impl CrashStorage {
    fn plan(&self) -> MutexGuard<'_, Plan> {
        self.plan.lock().expect("crash plan lock")
    }

    pub fn new() -> CrashStorage {
        CrashStorage::default()
    }

    /// Makes every write after the next `n` fail with an I/O error.
    pub fn fail_writes_after(&self, n: u64) {
        let mut plan = self.plan();
        plan.fail_writes_after = Some(plan.writes + n);
    }

    /// Power fails during the `n`-th sync from now (0 = the next): that sync and every
    /// later write and sync fail, and `crash` shows what the disk kept.
    pub fn crash_at_sync(&self, n: u64) {
        self.plan().syncs_until_crash = Some(n);
    }

    /// Whether the simulated power failure has happened.
    pub fn crashed(&self) -> bool {
        self.plan().crashed
    }

    /// Simulates power loss: returns the bytes a restarted machine would find (the
    /// model's choice of kept, dropped and torn writes is drawn from `rng`).
    pub fn crash(&self, rng: &mut Rng) -> Vec<u8> {
        self.model.crash(rng.next_u64())
    }
}

impl Storage for CrashStorage {
    fn read_at(&self, buf: &mut [u8], offset: u64) -> io::Result<usize> {
        self.model.read_at(buf, offset)
    }

    fn write_at(&self, buf: &[u8], offset: u64) -> io::Result<usize> {
        let mut plan = self.plan();
        if plan.crashed {
            return Err(io::Error::other("power failed"));
        }
        plan.writes += 1;
        if plan.fail_writes_after.is_some_and(|n| plan.writes > n) {
            return Err(io::Error::other("injected write failure"));
        }
        self.model.write_at(buf, offset)
    }

    fn sync(&self) -> io::Result<()> {
        let mut plan = self.plan();
        match plan.syncs_until_crash {
            _ if plan.crashed => return Err(io::Error::other("power failed")),
            Some(0) => {
                plan.crashed = true;
                return Err(io::Error::other("power failed during sync"));
            }
            Some(n) => plan.syncs_until_crash = Some(n - 1),
            None => {}
        }
        self.model.sync()
    }

    fn len(&self) -> io::Result<u64> {
        self.model.len()
    }

    fn set_len(&self, len: u64) -> io::Result<()> {
        if self.plan().crashed {
            return Err(io::Error::other("power failed"));
        }
        self.model.set_len(len)
    }
}
