//! A crash model behind the storage seam: every write since the last sync is, at a crash,
//! kept, dropped or torn (a random prefix of its 512-byte sectors survives), chunk by chunk.
//!
//! Local to the pager's tests until `wal`'s own `CrashStorage` merges; it implements the
//! same `wal::Storage` trait, so swapping it is a one-line change.

use super::Rng;
use std::io;
use std::sync::{Mutex, MutexGuard};
use wal::Storage;

const SECTOR: usize = 512;
const CHUNK: usize = 4096;

#[derive(Debug, Default)]
struct State {
    durable: Vec<u8>,
    volatile: Vec<u8>,
    unsynced: Vec<(usize, Vec<u8>)>,
    fail_writes_after: Option<u64>,
    writes: u64,
    syncs_until_crash: Option<u64>,
    crashed: bool,
}

/// An in-memory file that remembers what a crash could lose.
#[derive(Debug, Default)]
pub struct CrashStorage {
    state: Mutex<State>,
}

fn put(file: &mut Vec<u8>, at: usize, bytes: &[u8]) {
    if file.len() < at + bytes.len() {
        file.resize(at + bytes.len(), 0);
    }
    file[at..at + bytes.len()].copy_from_slice(bytes);
}

impl CrashStorage {
    fn lock(&self) -> MutexGuard<'_, State> {
        self.state.lock().expect("crash storage lock")
    }

    pub fn new() -> CrashStorage {
        CrashStorage::default()
    }

    /// Makes every write after the next `n` fail with an I/O error.
    pub fn fail_writes_after(&self, n: u64) {
        let mut state = self.lock();
        state.fail_writes_after = Some(state.writes + n);
    }

    /// Power fails during the `n`-th sync from now (0 = the next): that sync and every
    /// later call fail, and `crash` shows what the disk kept.
    pub fn crash_at_sync(&self, n: u64) {
        self.lock().syncs_until_crash = Some(n);
    }

    /// Whether the simulated power failure has happened.
    pub fn crashed(&self) -> bool {
        self.lock().crashed
    }

    /// Simulates power loss: returns the bytes a restarted machine would find.
    pub fn crash(&self, rng: &mut Rng) -> Vec<u8> {
        let state = self.lock();
        let mut file = state.durable.clone();
        for (at, bytes) in &state.unsynced {
            for (i, chunk) in bytes.chunks(CHUNK).enumerate() {
                let at = at + i * CHUNK;
                match rng.below(3) {
                    0 => {}
                    1 => put(&mut file, at, chunk),
                    _ => {
                        let sectors = chunk.len().div_ceil(SECTOR) as u64;
                        let keep = (rng.below(sectors + 1) as usize * SECTOR).min(chunk.len());
                        put(&mut file, at, &chunk[..keep]);
                    }
                }
            }
        }
        file
    }
}

impl Storage for CrashStorage {
    fn read_at(&self, buf: &mut [u8], offset: u64) -> io::Result<usize> {
        let state = self.lock();
        let at = offset as usize;
        if at >= state.volatile.len() {
            return Ok(0);
        }
        let n = buf.len().min(state.volatile.len() - at);
        buf[..n].copy_from_slice(&state.volatile[at..at + n]);
        Ok(n)
    }

    fn write_at(&self, buf: &[u8], offset: u64) -> io::Result<usize> {
        let mut state = self.lock();
        if state.crashed {
            return Err(io::Error::other("power failed"));
        }
        state.writes += 1;
        if state.fail_writes_after.is_some_and(|n| state.writes > n) {
            return Err(io::Error::other("injected write failure"));
        }
        put(&mut state.volatile, offset as usize, buf);
        state.unsynced.push((offset as usize, buf.to_vec()));
        Ok(buf.len())
    }

    fn sync(&self) -> io::Result<()> {
        let mut state = self.lock();
        match state.syncs_until_crash {
            _ if state.crashed => return Err(io::Error::other("power failed")),
            Some(0) => {
                state.crashed = true;
                return Err(io::Error::other("power failed during sync"));
            }
            Some(n) => state.syncs_until_crash = Some(n - 1),
            None => {}
        }
        state.durable = state.volatile.clone();
        state.unsynced.clear();
        Ok(())
    }

    fn len(&self) -> io::Result<u64> {
        Ok(self.lock().volatile.len() as u64)
    }

    fn set_len(&self, len: u64) -> io::Result<()> {
        let mut state = self.lock();
        state.volatile.resize(len as usize, 0);
        Ok(())
    }
}
