//! The log itself: append, group commit, truncation, and the poisoned state.
//!
//! States of a `Wal` and the function behind each transition:
//!
//! ```text
//!   (closed) ──Wal::open (recover, sync)──▶ open
//!   open ──append──▶ open            (record buffered in memory, never synced)
//!   open ──commit──▶ open            (gather, then the leader seals, writes, fdatasyncs
//!                                     for everyone and rings the round's bell)
//!   open ──truncate_before──▶ open   (new file generation renamed into place)
//!   open ──any failed write/sync──▶ poisoned ──(drop, Wal::open)──▶ open
//! ```
//!
//! Group commit: one thread at a time holds the I/O token (`State::io_busy`). A committer
//! whose LSN is not durable and not in the batch being synced needs the next *round*. It
//! leads that round (takes the token, seals every buffered record into blocks, writes
//! them in one call and fdatasyncs once) as soon as the token is free and the round has
//! *gathered*: as many committers are waiting for it, itself included, as the last round
//! released plus those it left waiting (`Gather::expected`), so the committers one sync
//! releases append their next record into the same next sync instead of splitting into
//! two alternating halves. A gather lasts at most as long as the last write and sync
//! took (`Gather::wait_max`): the first committer to wait for the round sleeps until
//! then (`Gather::timer`) and leads whatever has gathered. The others sleep on the bell
//! of the round they wait for (`Bells` in module `group`: one per parity of the round
//! number, so the next round's waiters sleep through the ring of the one in flight); the
//! token holder publishes the outcome in `Published` and rings the round's bell once,
//! waking all of its committers with one call (none when no one waits), and each returns
//! without taking the state lock. When committers remain waiting for the next round, it
//! also wakes one of them to drive it.
//!
//! Invariants:
//! - `lsn_durable_end <= lsn_written_end <= lsn_next`; all three only grow.
//! - A committer's `commit` returns `Ok` only once `lsn_durable_end` passed its LSN, which
//!   only a successful sync (or the synced new generation of `truncate_before`) moves.
//! - `Published` is written under the state lock, after the state it mirrors; a ring
//!   follows the publication it announces.
//! - Only the token holder touches the file, so blocks are written in LSN order at
//!   increasing offsets, and `Io::synced_end <= Io::write_offset <= Io::allocated_len`.
//! - After a failed write or sync the log is poisoned: every later call fails with
//!   `WalError::Poisoned`, and the failed sync is never retried.

use crate::Lsn;
use crate::crashpoint;
use crate::error::{Result, WalError};
use crate::format::{self, BlockMeta, Codec, FileHeader};
use crate::group::{Bells, GATHER_WAIT_MAX, Gather, Published, parity};
use crate::limits::{
    BLOCK_ALIGN, BLOCK_LEN_RAW_MAX, BLOCK_LEN_TARGET, FILE_HEADER_LEN, PREALLOCATE_CHUNK_DEFAULT,
    RECORD_HEADER_LEN, RECORD_LEN_MAX, SEALED_BACKLOG_MAX,
};
use crate::recovery::{self, TornTail};
use crate::storage::{Dir, OsDir, Storage};
use parking_lot::{Condvar, Mutex, MutexGuard};
use std::io;
use std::path::Path;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::{Duration, Instant};

/// How a log is written.
#[derive(Debug, Clone)]
pub struct WalOptions {
    /// Codec for new blocks (LZ4 by default; a block is stored raw anyway when
    /// compression does not shrink it).
    pub codec: Codec,
    /// Raw size a block aims for.
    pub block_len_target: usize,
    /// The log file grows by writing this many zero bytes at a time.
    pub preallocate_chunk: u64,
    /// Sealed but unwritten bytes after which `append` writes them out (without a sync).
    pub flush_threshold: usize,
    /// The LSN of the first record when `open` creates the file (an engine whose data file
    /// already covers LSNs up to `n` creates its log at `n + 1`). Ignored for an existing log.
    pub lsn_first: Lsn,
}

impl Default for WalOptions {
    fn default() -> Self {
        WalOptions {
            codec: Codec::Lz4,
            block_len_target: BLOCK_LEN_TARGET,
            preallocate_chunk: PREALLOCATE_CHUNK_DEFAULT,
            flush_threshold: 1 << 20,
            lsn_first: Lsn(1),
        }
    }
}

/// What `Wal::open` recovered.
#[derive(Debug, Clone)]
pub struct Recovery {
    /// Every record in the log, in LSN order.
    pub records: Vec<(Lsn, Vec<u8>)>,
    /// The LSN of the first record the file can hold (records before it were truncated).
    pub lsn_start: Lsn,
    /// The LSN the next appended record gets.
    pub lsn_next: Lsn,
    /// Set when the log ended in a block torn by a crash (which was cut off).
    pub torn_tail: Option<TornTail>,
}

/// A sealed block not yet written: framed records and their first LSN.
#[derive(Debug)]
struct RawBlock {
    raw: Vec<u8>,
    lsn_first: Lsn,
    record_count: u32,
}

/// Shared state, under `Wal::state`.
#[derive(Debug)]
struct State {
    poisoned: bool,
    io_busy: bool,
    /// The end of the batch the token holder is making durable, while it does.
    lsn_sync_end: Option<Lsn>,
    /// The number of the next commit round (the one in flight, if any, is one less).
    round_next: u64,
    /// Committers asleep in `commit`, by the parity of the round they wait for.
    waiting: [usize; 2],
    gather: Gather,
    lsn_next: Lsn,
    lsn_written_end: Lsn,
    lsn_durable_end: Lsn,
    open: RawBlock,
    sealed: Vec<RawBlock>,
    sealed_len: usize,
    spare: Vec<Vec<u8>>,
}

/// File state, touched only by the holder of the I/O token.
#[derive(Debug)]
struct Io {
    storage: Arc<dyn Storage>,
    header: FileHeader,
    session: u32,
    write_offset: u64,
    synced_end: u64,
    allocated_len: u64,
    encoded: Vec<u8>,
}

/// The write-ahead log. `Send + Sync`: share it behind an `Arc`.
///
/// Dropping it writes nothing: records appended but not committed may be lost.
#[derive(Debug)]
pub struct Wal {
    dir: Arc<dyn Dir>,
    name: String,
    options: WalOptions,
    state: Mutex<State>,
    /// Signalled when the I/O token is returned (for `append` backpressure and
    /// `truncate_before`; committers sleep on their own thread instead).
    changed: Condvar,
    published: Published,
    bells: Bells,
    io: Mutex<Io>,
    /// Held by a truncation from preparing its new generation to installing it (one
    /// truncation at a time owns the temporary file).
    truncating: Mutex<()>,
}

/// `Wal` is shared between threads.
const _: () = {
    const fn assert_send_sync<T: Send + Sync>() {}
    assert_send_sync::<Wal>();
};

impl Wal {
    /// Opens (or creates) the log `name` in the OS directory `dir`.
    pub fn open_path(dir: &Path, name: &str, options: WalOptions) -> Result<(Wal, Recovery)> {
        Wal::open(Arc::new(OsDir::new(dir)), name, options)
    }

    /// Opens (or creates) the log `name` in `dir`, recovers it and returns every record.
    ///
    /// A torn tail is cut off (reported in `Recovery::torn_tail`); damage before the tail
    /// fails with `WalError::Corrupt`.
    pub fn open(dir: Arc<dyn Dir>, name: &str, options: WalOptions) -> Result<(Wal, Recovery)> {
        assert!(options.block_len_target > 0, "block_len_target is zero");
        assert!(
            options.block_len_target <= BLOCK_LEN_RAW_MAX,
            "block_len_target {} above {BLOCK_LEN_RAW_MAX}",
            options.block_len_target
        );
        assert!(options.preallocate_chunk > 0, "preallocate_chunk is zero");
        assert!(
            options.preallocate_chunk.is_multiple_of(BLOCK_ALIGN),
            "preallocate_chunk {} is not a multiple of {BLOCK_ALIGN}",
            options.preallocate_chunk
        );
        let temp = temp_name(name);
        dir.remove(&temp)?;
        if !dir.exists(name)? {
            assert!(options.lsn_first.0 >= 1, "lsn 0 is reserved");
            create_file(
                dir.as_ref(),
                name,
                options.lsn_first,
                0,
                &options,
                &[],
                false,
                None,
            )?;
        }
        let storage = dir.open(name)?;
        let mut records = Vec::new();
        let mut scan = recovery::recover(storage.as_ref(), Lsn(0), None, &mut |lsn, record| {
            records.push((lsn, record.to_vec()));
        })?;
        let allocated_len = storage.len()?;
        if let Some(tail) = &mut scan.torn_tail {
            tail.bytes = nonzero_len(storage.as_ref(), scan.end, allocated_len)?;
            // Clear what the crash left past the end, so no later open can mistake it for
            // log (the session check guards against that too).
            write_zeros(storage.as_ref(), scan.end, allocated_len)?;
        }
        // What recovery read may sit only in the page cache (a process exit without a
        // sync); make it durable before new blocks claim it was.
        storage.sync()?;
        let io = Io {
            storage,
            header: scan.header,
            session: scan.session_max.saturating_add(1),
            write_offset: scan.end,
            synced_end: scan.end,
            allocated_len,
            encoded: Vec::new(),
        };
        let state = State {
            poisoned: false,
            io_busy: false,
            lsn_sync_end: None,
            round_next: 0,
            waiting: [0; 2],
            gather: Gather {
                expected: 1,
                start: Instant::now(),
                wait_max: Duration::ZERO,
                timer: None,
            },
            lsn_next: scan.lsn_next,
            lsn_written_end: scan.lsn_next,
            lsn_durable_end: scan.lsn_next,
            open: RawBlock {
                raw: Vec::new(),
                lsn_first: scan.lsn_next,
                record_count: 0,
            },
            sealed: Vec::new(),
            sealed_len: 0,
            spare: Vec::new(),
        };
        let recovered = Recovery {
            records,
            lsn_start: scan.header.lsn_start,
            lsn_next: scan.lsn_next,
            torn_tail: scan.torn_tail,
        };
        let wal = Wal {
            dir,
            name: name.to_owned(),
            options,
            state: Mutex::new(state),
            changed: Condvar::new(),
            published: Published {
                lsn_durable_end: AtomicU64::new(scan.lsn_next.0),
                poisoned: AtomicBool::new(false),
                lsn_unwritten_from: AtomicU64::new(u64::MAX),
                errno: std::sync::atomic::AtomicI32::new(0),
            },
            bells: Bells::default(),
            io: Mutex::new(io),
            truncating: Mutex::new(()),
        };
        Ok((wal, recovered))
    }

    /// Buffers one record and returns its LSN. Never syncs; the record is durable once
    /// `commit` for its LSN (or a later one) returns `Ok`.
    pub fn append(&self, payload: &[u8]) -> Result<Lsn> {
        if payload.len() > RECORD_LEN_MAX {
            return Err(WalError::RecordTooLarge {
                len: payload.len(),
                max: RECORD_LEN_MAX,
            });
        }
        let mut state = self.state.lock();
        if state.poisoned {
            return Err(WalError::Poisoned);
        }
        let len_framed = RECORD_HEADER_LEN + payload.len();
        if state.open.record_count > 0
            && state.open.raw.len() + len_framed > self.options.block_len_target
        {
            seal(&mut state);
        }
        let lsn = state.lsn_next;
        let Some(lsn_after) = lsn.0.checked_add(1) else {
            return Err(WalError::LsnOutOfRange {
                lsn,
                reason: "the lsn space is exhausted",
            });
        };
        if state.open.raw.capacity() == 0 {
            let spare = state.spare.pop().unwrap_or_default();
            state.open.raw = spare;
        }
        format::push_record(&mut state.open.raw, payload);
        state.open.record_count += 1;
        state.lsn_next = Lsn(lsn_after);
        // Write sealed blocks out (without a sync) once enough are queued; when another
        // thread holds the I/O token and the queue is far too long, wait for it.
        while state.sealed_len >= self.options.flush_threshold {
            if state.poisoned {
                return Err(WalError::Poisoned);
            }
            if !state.io_busy {
                self.write_out(state, false, false)?;
                crashpoint::hit("wal.append.after_flush");
                break;
            }
            if state.sealed_len < SEALED_BACKLOG_MAX {
                break;
            }
            self.changed.wait(&mut state);
        }
        Ok(lsn)
    }

    /// Blocks until every record up to and including `lsn` is durable. Concurrent
    /// committers share one write and one fdatasync.
    pub fn commit(&self, lsn: Lsn) -> Result<()> {
        let mut state = self.state.lock();
        if lsn >= state.lsn_next {
            return Err(WalError::LsnOutOfRange {
                lsn,
                reason: "not appended yet",
            });
        }
        loop {
            if state.poisoned {
                return Err(self.poisoned_outcome(lsn, WalError::Poisoned));
            }
            if lsn < state.lsn_durable_end {
                return Ok(());
            }
            let covered = state.lsn_sync_end.is_some_and(|end| lsn < end);
            let round = state.round_next - u64::from(covered);
            let mut due = None;
            if !covered && !state.io_busy {
                // This commit needs a round no one has started: lead it once the
                // committers the last round released are back, or at the deadline.
                let gathered = state.waiting[parity(round)] + 1 >= state.gather.expected;
                let deadline = state.gather.start + state.gather.wait_max;
                if gathered || Instant::now() >= deadline {
                    if let Err(error) = self.write_out(state, true, true) {
                        return Err(self.poisoned_outcome(lsn, error));
                    }
                    debug_assert!(
                        lsn.0 < self.published.lsn_durable_end.load(Ordering::Acquire),
                        "the leader's own lsn {lsn:?} is durable"
                    );
                    return Ok(());
                }
                if state.gather.timer.is_none() {
                    state.gather.timer = Some(round);
                    due = Some(deadline);
                }
            }
            state.waiting[parity(round)] += 1;
            let rung = self.bells.rings[parity(round)].load(Ordering::Acquire);
            drop(state);
            self.bells.sleep(round, rung, due);
            if let Some(outcome) = self.outcome(lsn) {
                // The leader counted this committer out when it published the outcome.
                return outcome;
            }
            // Woken before the outcome (the gather deadline, a call to drive the next
            // round, or a spurious wake-up): count this committer out and decide again.
            state = self.state.lock();
            if state.poisoned || lsn < state.lsn_durable_end {
                continue;
            }
            state.waiting[parity(round)] -= 1;
            if due.is_some() {
                state.gather.timer = None;
            }
        }
    }

    /// The outcome of `commit(lsn)` as published, when there is one.
    fn outcome(&self, lsn: Lsn) -> Option<Result<()>> {
        if self.published.poisoned.load(Ordering::Acquire) {
            return Some(Err(self.poisoned_outcome(lsn, WalError::Poisoned)));
        }
        if lsn.0 < self.published.lsn_durable_end.load(Ordering::Acquire) {
            return Some(Ok(()));
        }
        None
    }

    /// What a committer of `lsn` is told once the log is poisoned: `NotWritten` when no
    /// byte of its record reached the file (a definite "not in the log"), else `unknown`
    /// (the failure itself, or `Poisoned`: the record may or may not be in the log).
    fn poisoned_outcome(&self, lsn: Lsn, unknown: WalError) -> WalError {
        if lsn.0 >= self.published.lsn_unwritten_from.load(Ordering::Acquire) {
            let errno = self.published.errno.load(Ordering::Acquire);
            let error = if errno > 0 {
                std::io::Error::from_raw_os_error(errno)
            } else {
                std::io::Error::other("the log failed before this record was written")
            };
            return WalError::NotWritten(error);
        }
        match unknown {
            WalError::NotWritten(error) => WalError::Io(error),
            other => other,
        }
    }

    /// Makes every record appended so far durable.
    pub fn commit_all(&self) -> Result<()> {
        let lsn_next = self.state.lock().lsn_next;
        if lsn_next.0 == 0 {
            return Ok(());
        }
        match self.commit(Lsn(lsn_next.0 - 1)) {
            Err(WalError::LsnOutOfRange { .. }) => Ok(()),
            other => other,
        }
    }

    /// The LSN the next appended record gets.
    pub fn lsn_next(&self) -> Lsn {
        self.state.lock().lsn_next
    }

    /// The largest durable LSN (`Lsn(0)` when no record is durable yet): every record up
    /// to it survives a crash.
    pub fn lsn_durable(&self) -> Lsn {
        Lsn(self.state.lock().lsn_durable_end.0.saturating_sub(1))
    }

    /// Whether the file at the log's path is still the one it writes. `false` means the
    /// log was deleted or replaced behind its back: records it holds survive only in the
    /// open file, and a crash now would lose them, so the caller must make them safe (a
    /// checkpoint, whose truncation puts a fresh log at the path). Storages without
    /// identities always answer `true`.
    pub fn is_current(&self) -> bool {
        let io = self.io.lock();
        let Some(open) = io.storage.identity() else {
            return true;
        };
        match self.dir.identity(&self.name) {
            Ok(at_path) => at_path == Some(open),
            Err(_) => true,
        }
    }

    /// Whether the preallocated space past the log's end is under a quarter chunk (what a
    /// fresh log file starts with at least), so that a commit soon would grow the file
    /// itself ([`Wal::grow_ahead`] does it off the commit path). `false` while an I/O
    /// holds the log (asked again later).
    pub fn needs_growth(&self) -> bool {
        let Some(io) = self.io.try_lock() else {
            return false;
        };
        headroom_low(&io, self.options.preallocate_chunk)
    }

    /// Grows the preallocated space by real zeros, synced, by a chunk when under a quarter
    /// chunk is left ([`Wal::needs_growth`]), so the commits that follow overwrite allocated blocks (D12) without
    /// writing the zeros themselves. Takes the I/O token, or returns `Ok(false)` at once
    /// when a write holds it (commits never wait behind this call for long: one chunk).
    /// A poisoned log is left alone, and a failed zero write changes nothing (`Ok(false)`:
    /// zeros past the end are the end, and a commit that needs the space grows the file
    /// and reports a failure itself); a failed sync poisons the log as any failed sync
    /// does, since it may have covered written, unsynced records.
    pub fn grow_ahead(&self) -> Result<bool> {
        let mut state = self.state.lock();
        if state.poisoned || state.io_busy {
            return Ok(false);
        }
        state.io_busy = true;
        drop(state);
        let result = {
            let mut io = self.io.lock();
            let chunk = self.options.preallocate_chunk;
            if !headroom_low(&io, chunk) {
                Ok(false)
            } else {
                let from = io.allocated_len.max(io.write_offset);
                let target = (from + chunk).next_multiple_of(chunk);
                match write_zeros(io.storage.as_ref(), from, target) {
                    Err(_) => Ok(false),
                    Ok(()) => io.storage.sync().map(|()| {
                        io.allocated_len = target;
                        true
                    }),
                }
            }
        };
        let state = self.state.lock();
        let lsn_written_end = state.lsn_written_end;
        match result {
            Ok(grew) => self
                .finish_io(state, Vec::new(), lsn_written_end, None, Ok(()))
                .map(|()| grew),
            Err(error) => {
                let error = WalError::Io(error);
                self.finish_io(state, Vec::new(), lsn_written_end, None, Err(error))
                    .map(|()| false)
            }
        }
    }

    /// Poisons the log without I/O and returns once no write of it is in flight: from
    /// here on it writes nothing, and every committer not yet told its outcome gets
    /// `Poisoned` (unknown). For a store being recovered in place, whose new log must be
    /// the only writer of the file.
    pub fn poison(&self) {
        let mut state = self.state.lock();
        if !state.poisoned {
            state.poisoned = true;
            state.gather.timer = None;
            self.published.poisoned.store(true, Ordering::Release);
        }
        while state.io_busy {
            self.changed.wait(&mut state);
        }
        self.changed.notify_all();
        drop(state);
        self.bells.ring(0, true);
        self.bells.ring(1, true);
    }

    /// Whether an earlier I/O failure poisoned the log.
    pub fn is_poisoned(&self) -> bool {
        self.published.poisoned.load(Ordering::Acquire)
    }

    /// Drops every record with an LSN below `lsn` (the engine calls this after a
    /// checkpoint that covers them). Writes a new file generation holding the records
    /// from `lsn` on, syncs it and renames it over the log; crash-safe at every step.
    /// Everything appended before the call is durable when it returns, also when it
    /// returns `TruncationNotDone` (the new file could not be written; the old one stays).
    pub fn truncate_before(&self, lsn: Lsn) -> Result<()> {
        let _truncating = self.truncating.lock();
        // The new generation's preallocated zeros are written and synced before the I/O
        // token is taken, so commits go on meanwhile (they used to wait behind the whole
        // chunk's write and sync). When that fails, the truncation writes them under the
        // token, as before, and reports what that finds.
        let prepared = prepare_file(self.dir.as_ref(), &self.name, &self.options).ok();
        let mut state = self.state.lock();
        loop {
            if state.poisoned {
                return Err(WalError::Poisoned);
            }
            if !state.io_busy {
                break;
            }
            self.changed.wait(&mut state);
        }
        if lsn > state.lsn_next {
            return Err(WalError::LsnOutOfRange {
                lsn,
                reason: "truncation past the next lsn",
            });
        }
        let blocks = take_blocks(&mut state);
        let lsn_end = state.lsn_next;
        state.io_busy = true;
        state.lsn_sync_end = Some(lsn_end);
        state.round_next += 1;
        drop(state);
        let result = self
            .write_blocks(&blocks, false)
            .and_then(|()| self.replace_file(lsn, lsn_end, prepared));
        // The new generation could not be written, the old file is untouched: it stays
        // the log, with the blocks just written made durable in it (a failed sync
        // poisons, as any does), and the caller learns the truncation did not happen.
        let (result, not_done) = match result {
            Err(WalError::TruncationNotDone(cause)) => (self.write_blocks(&[], true), Some(cause)),
            other => (other, None),
        };
        let state = self.state.lock();
        self.finish_io(state, blocks, lsn_end, Some((None, 0)), result)?;
        match not_done {
            Some(cause) => Err(WalError::TruncationNotDone(cause)),
            None => Ok(()),
        }
    }

    /// Takes the I/O token, writes every sealed block (and, when `sync`, the open one and
    /// an fdatasync), returns the token and wakes the committers this concerns. Called
    /// with the state locked and the token free; returns with it unlocked. `leader`: the
    /// caller is a committer (it counts in the next round's gather).
    fn write_out(&self, mut state: MutexGuard<'_, State>, sync: bool, leader: bool) -> Result<()> {
        debug_assert!(!state.io_busy, "token must be free");
        if sync {
            seal(&mut state);
        }
        let blocks = std::mem::take(&mut state.sealed);
        state.sealed_len = 0;
        let lsn_end = blocks.last().map_or(state.lsn_written_end, |b| {
            Lsn(b.lsn_first.0 + u64::from(b.record_count))
        });
        state.io_busy = true;
        if sync {
            state.lsn_sync_end = Some(lsn_end);
            state.round_next += 1;
        }
        drop(state);
        let start = Instant::now();
        let result = self.write_blocks(&blocks, sync);
        let took = sync.then(|| (Some(start.elapsed()), usize::from(leader)));
        let state = self.state.lock();
        self.finish_io(state, blocks, lsn_end, took, result)
    }

    /// Returns the I/O token, publishes the outcome of a write, wakes every committer it
    /// concerns (after unlocking) and restarts the gather. `sync`: the write was made
    /// durable (taking this long, when it was a commit round), by a token holder that
    /// counts as this many committers.
    fn finish_io(
        &self,
        mut guard: MutexGuard<'_, State>,
        blocks: Vec<RawBlock>,
        lsn_end: Lsn,
        sync: Option<(Option<Duration>, usize)>,
        result: Result<()>,
    ) -> Result<()> {
        let state = &mut *guard;
        state.io_busy = false;
        let round_done = state.lsn_sync_end.take().map(|_| state.round_next - 1);
        self.changed.notify_all();
        if let Err(error) = result {
            // Records of this write are unknown (partly written, or written and not
            // synced) unless the failure came before its first byte; later ones were
            // never written.
            let unwritten_from = match &error {
                WalError::NotWritten(_) => state.lsn_written_end,
                _ => lsn_end,
            };
            let errno = match &error {
                WalError::NotWritten(e) | WalError::Io(e) => e.raw_os_error().unwrap_or(0),
                _ => 0,
            };
            state.poisoned = true;
            state.gather.timer = None;
            self.published
                .lsn_unwritten_from
                .store(unwritten_from.0, Ordering::Release);
            self.published.errno.store(errno, Ordering::Release);
            self.published.poisoned.store(true, Ordering::Release);
            drop(guard);
            self.bells.ring(0, true);
            self.bells.ring(1, true);
            return Err(error);
        }
        assert!(lsn_end >= state.lsn_written_end, "written end went back");
        state.lsn_written_end = lsn_end;
        let mut ring = None;
        if let Some((took, leader)) = sync {
            let round = round_done.expect("a durable write is a round");
            state.lsn_durable_end = lsn_end;
            let released = std::mem::take(&mut state.waiting[parity(round)]);
            // No committer counted in, none asleep on the bell: a lone committer's
            // round costs no wake-up call.
            ring = (released > 0).then_some(round);
            state.gather.expected = released + leader + state.waiting[parity(round + 1)];
            if let Some(took) = took {
                state.gather.wait_max = took.min(GATHER_WAIT_MAX);
            }
            if state.gather.timer == Some(round) {
                state.gather.timer = None;
            }
            self.published
                .lsn_durable_end
                .store(lsn_end.0, Ordering::Release);
        }
        state.gather.start = Instant::now();
        // Committers left waiting for the next round need one of them awake to drive it.
        let drive = state.gather.timer.is_none() && state.waiting[parity(state.round_next)] > 0;
        let round_next = state.round_next;
        for mut block in blocks {
            if state.spare.len() < 8 {
                block.raw.clear();
                state.spare.push(block.raw);
            }
        }
        drop(guard);
        if let Some(round) = ring {
            self.bells.ring(round, true);
        }
        if drive {
            self.bells.ring(round_next, false);
        }
        Ok(())
    }

    /// Encodes `blocks` and writes them in one call at the end of the log; with `sync`,
    /// then fdatasyncs. Only the token holder calls this.
    fn write_blocks(&self, blocks: &[RawBlock], sync: bool) -> Result<()> {
        let mut io = self.io.lock();
        let io = &mut *io;
        if blocks.is_empty() && (!sync || io.synced_end == io.write_offset) {
            return Ok(());
        }
        io.encoded.clear();
        for block in blocks {
            let meta = BlockMeta {
                lsn_first: block.lsn_first,
                record_count: block.record_count,
                synced_end: io.synced_end,
                session: io.session,
                codec: self.options.codec,
                salt: io.header.salt,
            };
            format::encode_block(&mut io.encoded, &block.raw, &meta);
        }
        #[cfg(debug_assertions)]
        check_encoded(&io.encoded, io.header.salt, blocks);
        let end = io.write_offset + io.encoded.len() as u64;
        if end > io.allocated_len {
            if sync {
                // A commit about to fdatasync: grow by a chunk of real zeros, so the next
                // commits overwrite allocated space and their fdatasync needs no journal
                // commit for a size change.
                let target = end.next_multiple_of(self.options.preallocate_chunk);
                // Zeros past the log's end are its end: a failure here leaves every
                // record of this write out of the file (ENOSPC lands here, as a rule).
                write_zeros(io.storage.as_ref(), io.allocated_len, target)
                    .map_err(WalError::NotWritten)?;
                io.allocated_len = target;
            } else {
                // A bulk write without a sync: the data itself grows the file; zeros
                // written first would only double the bytes written.
                io.allocated_len = end;
            }
        }
        if sync {
            crashpoint::hit("wal.commit.before_write");
        }
        io.storage.write_all_at(&io.encoded, io.write_offset)?;
        io.write_offset = end;
        if sync {
            crashpoint::hit("wal.commit.before_sync");
            io.storage.sync()?;
            io.synced_end = end;
            crashpoint::hit("wal.commit.after_sync");
        }
        Ok(())
    }

    /// Writes the records from `lsn` on into a new file generation and renames it over
    /// the log. Only the token holder calls this, after every block was written.
    fn replace_file(&self, lsn: Lsn, lsn_end: Lsn, prepared: Option<Prepared>) -> Result<()> {
        let mut io = self.io.lock();
        let lsn = lsn.max(io.header.lsn_start);
        let mut retained: Vec<(Lsn, Vec<u8>)> = Vec::new();
        // Truncating before the next LSN keeps nothing (a checkpoint's usual case): the old
        // log is not read back.
        if lsn < lsn_end {
            let scan = recovery::recover(
                io.storage.as_ref(),
                lsn,
                Some(io.write_offset),
                &mut |l, r| {
                    retained.push((l, r.to_vec()));
                },
            )?;
            assert!(
                scan.end == io.write_offset,
                "live log end {} differs from the writer's {}",
                scan.end,
                io.write_offset
            );
        }
        let (storage, header, end) = create_file(
            self.dir.as_ref(),
            &self.name,
            lsn,
            io.header.salt,
            &self.options,
            &retained,
            true,
            prepared,
        )?;
        io.allocated_len = storage.len()?;
        let old = std::mem::replace(&mut io.storage, storage);
        retire(old);
        io.header = header;
        io.write_offset = end;
        io.synced_end = end;
        Ok(())
    }
}

/// Drops the replaced generation's file on a thread of its own: the rename unlinked it,
/// so its last close frees all its blocks (56 ms for a 64 MiB log on this machine's
/// ext4), and commits wait for the I/O token while the truncation holds it.
fn retire(old: Arc<dyn Storage>) {
    let spawned = std::thread::Builder::new()
        .name("mfdb-wal-retire".into())
        .spawn(move || drop(old));
    // Without a thread, the closure (and the file) was dropped inside `spawn`, as the
    // close always used to happen: here.
    drop(spawned);
}

/// Debug builds re-read every block just before it is written: it must verify and hold
/// the records it was made from.
#[cfg(debug_assertions)]
fn check_encoded(encoded: &[u8], salt: u64, blocks: &[RawBlock]) {
    let mut rest = encoded;
    for block in blocks {
        let (header, records) = format::decode_block(rest, salt).expect("encoded block decodes");
        assert_eq!(header.lsn_first, block.lsn_first, "encoded block lsn");
        assert_eq!(
            records.len() as u32,
            block.record_count,
            "encoded record count"
        );
        let len = header.len_on_disk() as usize;
        rest = rest.get(len..).expect("encoded blocks are whole");
    }
    assert!(rest.is_empty(), "{} stray encoded bytes", rest.len());
}

/// Closes the open block and queues it for writing.
fn seal(state: &mut State) {
    if state.open.record_count == 0 {
        return;
    }
    let lsn_next = state.lsn_next;
    let raw = state.spare.pop().unwrap_or_default();
    let block = std::mem::replace(
        &mut state.open,
        RawBlock {
            raw,
            lsn_first: lsn_next,
            record_count: 0,
        },
    );
    state.sealed_len += block.raw.len();
    state.sealed.push(block);
}

fn take_blocks(state: &mut State) -> Vec<RawBlock> {
    seal(state);
    state.sealed_len = 0;
    std::mem::take(&mut state.sealed)
}

/// Whether under a quarter of `chunk` is preallocated past the log's end.
fn headroom_low(io: &Io, chunk: u64) -> bool {
    io.allocated_len.saturating_sub(io.write_offset) < chunk / 4
}

fn temp_name(name: &str) -> String {
    format!("{name}.tmp")
}

/// Writes zero bytes over `[from, to)`, growing the file (real writes, not a hole, so a
/// later fdatasync over this range needs no metadata journal commit).
/// How many bytes from `from` to the last non-zero byte before `to` (0 if all are zero).
fn nonzero_len(storage: &dyn Storage, from: u64, to: u64) -> std::io::Result<u64> {
    const PIECE: u64 = 1 << 20;
    let mut last = None;
    let mut at = from;
    let mut buf = vec![0u8; PIECE as usize];
    while at < to {
        let len = (to - at).min(PIECE) as usize;
        let piece = buf.get_mut(..len).unwrap_or_default();
        storage.read_exact_at(piece, at)?;
        if let Some(i) = piece.iter().rposition(|&b| b != 0) {
            last = Some(at + i as u64);
        }
        at += len as u64;
    }
    Ok(last.map_or(0, |last| last + 1 - from))
}

fn write_zeros(storage: &dyn Storage, from: u64, to: u64) -> std::io::Result<()> {
    const PIECE: usize = 1 << 20;
    if to <= from {
        // The last block's padding may run past a file cut short; nothing to clear.
        return Ok(());
    }
    let zeros = vec![0u8; PIECE.min((to - from) as usize)];
    let mut at = from;
    while at < to {
        let len = ((to - at) as usize).min(PIECE);
        storage.write_all_at(&zeros[..len], at)?;
        at += len as u64;
    }
    Ok(())
}

/// A new generation's file made ahead of a truncation: `name.tmp` holding one chunk of
/// zeros, synced.
struct Prepared {
    storage: Arc<dyn Storage>,
    zeros: u64,
}

/// Writes `name.tmp` as one preallocation chunk of zeros and syncs it (a truncation's new
/// generation before it has a header: never read, removed by the next open).
fn prepare_file(dir: &dyn Dir, name: &str, options: &WalOptions) -> std::io::Result<Prepared> {
    let temp = temp_name(name);
    dir.remove(&temp)?;
    let storage = dir.open(&temp)?;
    write_zeros(storage.as_ref(), 0, options.preallocate_chunk)?;
    storage.sync()?;
    Ok(Prepared {
        storage,
        zeros: options.preallocate_chunk,
    })
}

/// Writes a new log file generation (`header`, `records` as blocks, zero preallocation)
/// to `name.tmp` (over the zeros of `prepared` when given), syncs it, renames it over
/// `name` and syncs the directory. Returns the new file, its header and the offset after
/// its last block.
#[allow(clippy::too_many_arguments)]
fn create_file(
    dir: &dyn Dir,
    name: &str,
    lsn_start: Lsn,
    salt_previous: u64,
    options: &WalOptions,
    records: &[(Lsn, Vec<u8>)],
    truncating: bool,
    prepared: Option<Prepared>,
) -> Result<(Arc<dyn Storage>, FileHeader, u64)> {
    let salt = xxhash_rust::xxh3::xxh3_64(
        &[
            salt_previous.to_le_bytes(),
            lsn_start.0.to_le_bytes(),
            nanos_now().to_le_bytes(),
        ]
        .concat(),
    );
    let header = FileHeader {
        codec: options.codec,
        lsn_start,
        salt,
        block_len_target: options.block_len_target as u32,
    };
    let mut bytes = header.encode();
    let mut raw = Vec::new();
    let mut block_first = lsn_start;
    let mut count = 0u32;
    for (index, (lsn, record)) in records.iter().enumerate() {
        assert_eq!(
            *lsn,
            Lsn(lsn_start.0 + index as u64),
            "retained records must be dense"
        );
        if count > 0 && raw.len() + RECORD_HEADER_LEN + record.len() > options.block_len_target {
            encode_retained(&mut bytes, &raw, block_first, count, &header);
            raw.clear();
            block_first = *lsn;
            count = 0;
        }
        format::push_record(&mut raw, record);
        count += 1;
    }
    if count > 0 {
        encode_retained(&mut bytes, &raw, block_first, count, &header);
    }
    let end = bytes.len() as u64;
    let temp = temp_name(name);
    let written = (|| {
        let (storage, zeros) = match prepared {
            Some(Prepared { storage, zeros }) => (storage, zeros),
            None => {
                dir.remove(&temp)?;
                (dir.open(&temp)?, 0)
            }
        };
        storage.write_all_at(&bytes, 0)?;
        // Up to the chunk multiple that leaves at least a quarter of a chunk past the
        // records: one chunk for a fresh log (not two: the zeros' fdatasync is most of an
        // open's time). Zeros a prepared file already holds are not written again.
        let allocated =
            (end + options.preallocate_chunk / 4).next_multiple_of(options.preallocate_chunk);
        write_zeros(storage.as_ref(), end.max(zeros), allocated)?;
        storage.sync()?;
        Ok::<_, io::Error>(storage)
    })();
    let storage = match written {
        Ok(storage) => storage,
        // Before the rename the log at `name` is untouched: a truncation that finds no
        // room for the new generation (ENOSPC, EDQUOT) leaves it in place. The partial
        // file goes, to give its blocks back (best effort: it is never read). Any other
        // failure (EIO, a failed sync) says the device is failing: it poisons, as before.
        Err(error) if truncating && matches!(error.raw_os_error(), Some(28 | 122)) => {
            let _ = dir.remove(&temp);
            return Err(WalError::TruncationNotDone(error));
        }
        Err(error) => return Err(error.into()),
    };
    if truncating {
        crashpoint::hit("wal.truncate.before_rename");
    }
    dir.rename(&temp, name)?;
    if truncating {
        crashpoint::hit("wal.truncate.after_rename");
    }
    dir.sync()?;
    debug_assert!(end >= FILE_HEADER_LEN, "file shorter than its header");
    Ok((storage, header, end))
}

fn encode_retained(out: &mut Vec<u8>, raw: &[u8], lsn_first: Lsn, count: u32, header: &FileHeader) {
    let meta = BlockMeta {
        lsn_first,
        record_count: count,
        synced_end: 0,
        session: 0,
        codec: header.codec,
        salt: header.salt,
    };
    format::encode_block(out, raw, &meta);
}

fn nanos_now() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_nanos() as u64)
}
