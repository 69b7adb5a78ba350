//! fsyncLock: writes stopped, and the data file consistent on disk, until as many
//! fsyncUnlocks as there were locks.
//!
//! States: unlocked → [`FsyncLock::lock`] (a holder thread checkpoints and takes the
//! store's write gate: `Store::checkpoint_and_hold`) → locked, `count` ≥ 1 → each
//! [`FsyncLock::lock`] counts up, each [`FsyncLock::unlock`] down → at 0 the holder is
//! told to release the gate and joined → unlocked.
//!
//! Invariants:
//! - The holder thread exists exactly while `count` > 0, and holds the gate all that time:
//!   writers (commands, the TTL monitor, checkpoints) wait at the gate; readers go on.
//! - `lock` returns only once the gate is held, so `{fsync: 1, lock: true}` answering ok
//!   means the file may be copied.

use crate::store::{Store, StoreError};
use parking_lot::Mutex;
use std::sync::Arc;
use std::sync::mpsc;

/// The engine's fsync lock.
#[derive(Default)]
pub(crate) struct FsyncLock {
    state: Mutex<State>,
}

#[derive(Default)]
struct State {
    count: u32,
    /// Dropping it tells the holder to release the gate.
    release: Option<mpsc::Sender<()>>,
    holder: Option<std::thread::JoinHandle<()>>,
}

impl FsyncLock {
    /// Takes (or counts up) the lock; the count after.
    pub(crate) fn lock(&self, store: Arc<Store>) -> Result<u32, StoreError> {
        let mut state = self.state.lock();
        if state.count == 0 {
            let (locked_tx, locked_rx) = mpsc::channel();
            let (release_tx, release_rx) = mpsc::channel::<()>();
            let holder = std::thread::Builder::new()
                .name("fsync-lock".into())
                .spawn(move || match store.checkpoint_and_hold() {
                    Ok(gate) => {
                        let _ = locked_tx.send(Ok(()));
                        let _ = release_rx.recv();
                        drop(gate);
                    }
                    Err(error) => {
                        let _ = locked_tx.send(Err(error));
                    }
                })
                .map_err(|error| StoreError::Io(error.to_string()))?;
            let locked = locked_rx
                .recv()
                .unwrap_or_else(|_| Err(StoreError::Io("the fsync lock's thread ended".into())));
            if let Err(error) = locked {
                let _ = holder.join();
                return Err(error);
            }
            state.release = Some(release_tx);
            state.holder = Some(holder);
        }
        state.count += 1;
        Ok(state.count)
    }

    /// Counts the lock down, releasing writes at 0; the count after, `None` when it was
    /// not locked.
    pub(crate) fn unlock(&self) -> Option<u32> {
        let mut state = self.state.lock();
        if state.count == 0 {
            return None;
        }
        state.count -= 1;
        if state.count == 0 {
            state.release = None;
            if let Some(holder) = state.holder.take() {
                let _ = holder.join();
            }
        }
        Some(state.count)
    }

    /// Releases the lock whatever its count (closing the engine).
    pub(crate) fn release_all(&self) {
        while self.unlock().is_some_and(|count| count > 0) {}
    }

    /// The lock count now (0: unlocked).
    pub(crate) fn count(&self) -> u32 {
        self.state.lock().count
    }
}
