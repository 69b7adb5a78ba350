//! The machine's own ceiling for the concurrency ratio: group commit with nothing but
//! its skeleton, measured beside the log in the same run.
//!
//! Each committer takes a ticket and blocks until a sync covers it, over and over, as the
//! log's committers do. A sync is one write of as many bytes as the log writes for the
//! round (a block header and 100 bytes per commit), sequential in preallocated space,
//! plus an fdatasync; no encoding, no checksums, no compression. Three ways to run a round:
//! - `Eager`: the first committer to find no sync running leads at once; those arriving
//!   during a sync wait for the next one (the textbook leader/follower);
//! - `Gathered`: the leader waits until every committer of the run holds a ticket (or
//!   2 ms pass), so each round carries all of them: with one commit in flight per thread
//!   no design gathers more, so this is the most one fsync can carry here;
//! - `NoIo`: gathered rounds without the write and the sync, which prices a round's
//!   wake-ups alone.
//!
//! What is left between two syncs is the cost of waking the committers and having them
//! come back: if even this skeleton's ratio stays under the goal, that cost belongs to
//! the machine, not to the log.

use parking_lot::Mutex;
use std::fs::File;
use std::os::unix::fs::FileExt;
use std::path::Path;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

/// How a round is led (see the module docs).
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Lead {
    Eager,
    Gathered,
    /// Gathered rounds with no write and no sync: what a round costs the machine in
    /// wake-ups and lock hand-offs alone.
    NoIo,
}

/// Preallocated space the syncs cycle through, so no sync changes the file's size.
const SPACE: u64 = 16 << 20;
/// A round writes a block header and 100 bytes per commit, as the log does for the
/// bench's records.
const BLOCK_HEADER: usize = 64;
const RECORD: usize = 100;
const GATHER_MAX: Duration = Duration::from_millis(2);

#[derive(Default)]
struct State {
    /// The next ticket handed out.
    next: u64,
    syncing: bool,
    /// Where the next write goes.
    offset: u64,
}

/// A file and the skeleton's shared state. Followers sleep on `bell` (with its own
/// lock) and learn their outcome from `durable` without taking `state`, as the log's
/// committers do (`wal::group`); a notify-all on the state lock's condvar would have
/// them file through that lock one by one.
pub struct Skeleton {
    file: File,
    state: Mutex<State>,
    /// Every ticket below this one is durable.
    durable: AtomicU64,
    rings: AtomicU64,
    bell_lock: std::sync::Mutex<()>,
    bell: std::sync::Condvar,
    lead: Lead,
    /// What a round writes (a prefix of it).
    bytes: Vec<u8>,
}

impl Skeleton {
    /// A skeleton over a fresh preallocated file at `path` (zeros written and synced).
    pub fn new(path: &Path, lead: Lead) -> Skeleton {
        let file = File::options()
            .read(true)
            .write(true)
            .create(true)
            .truncate(true)
            .open(path)
            .expect("create");
        let zeros = vec![0u8; 1 << 20];
        for at in (0..SPACE).step_by(zeros.len()) {
            file.write_all_at(&zeros, at).expect("preallocate");
        }
        file.sync_all().expect("sync");
        Skeleton {
            file,
            state: Mutex::new(State::default()),
            durable: AtomicU64::new(0),
            rings: AtomicU64::new(0),
            bell_lock: std::sync::Mutex::new(()),
            bell: std::sync::Condvar::new(),
            lead,
            bytes: vec![0x5a; BLOCK_HEADER + RECORD * 1024],
        }
    }

    /// Blocks until a sync covers a new ticket; `threads` committers are running. In a
    /// gathered round the committer whose ticket completes the gather leads it (as the
    /// log's does), so a round costs one wake-up per follower and no more.
    pub fn commit(&self, threads: u64) {
        let mut state = self.state.lock();
        let ticket = state.next;
        state.next += 1;
        let deadline = Instant::now() + GATHER_MAX;
        loop {
            let durable = self.durable.load(Ordering::Acquire);
            if ticket < durable {
                return;
            }
            let eager = matches!(self.lead, Lead::Eager);
            if !state.syncing
                && (eager || state.next - durable >= threads || Instant::now() >= deadline)
            {
                state.syncing = true;
                let end = state.next;
                // What the log writes for a round: a block header and the records.
                let len = BLOCK_HEADER + RECORD * (end - durable) as usize;
                let mut offset = state.offset;
                if offset + len as u64 > SPACE {
                    offset = 0;
                }
                state.offset = offset + len as u64;
                drop(state);
                if self.lead != Lead::NoIo {
                    self.file
                        .write_all_at(&self.bytes[..len.min(self.bytes.len())], offset)
                        .expect("write");
                    self.file.sync_data().expect("fdatasync");
                }
                self.durable.store(end, Ordering::Release);
                self.state.lock().syncing = false;
                self.rings.fetch_add(1, Ordering::AcqRel);
                drop(self.bell_lock.lock().expect("bell"));
                self.bell.notify_all();
                return;
            }
            let rung = self.rings.load(Ordering::Acquire);
            drop(state);
            {
                let guard = self.bell_lock.lock().expect("bell");
                if self.rings.load(Ordering::Acquire) == rung {
                    let wait = deadline.saturating_duration_since(Instant::now());
                    let wait = if eager {
                        Duration::from_millis(50)
                    } else {
                        wait.max(Duration::from_micros(50))
                    };
                    drop(self.bell.wait_timeout(guard, wait).expect("bell"));
                }
            }
            if ticket < self.durable.load(Ordering::Acquire) {
                return;
            }
            state = self.state.lock();
        }
    }
}
