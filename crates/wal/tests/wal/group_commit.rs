//! Many threads committing at once share writes and fsyncs, and each learns when its own
//! record is durable.

use super::{NAME, mem_dir_with, open, payload};
use parking_lot::{Condvar, Mutex};
use std::collections::VecDeque;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, mpsc};
use std::time::Duration;
use wal::{
    CrashStorage, Fault, FaultKind, FaultyStorage, Lsn, MemDir, MemStorage, Op, Storage, Wal,
    WalError,
};

/// A storage whose sync is slow, so committers pile up behind the leader.
#[derive(Debug, Default)]
struct SlowSync(MemStorage);

impl Storage for SlowSync {
    fn read_at(&self, buf: &mut [u8], offset: u64) -> std::io::Result<usize> {
        self.0.read_at(buf, offset)
    }
    fn write_at(&self, buf: &[u8], offset: u64) -> std::io::Result<usize> {
        self.0.write_at(buf, offset)
    }
    fn sync(&self) -> std::io::Result<()> {
        std::thread::sleep(std::time::Duration::from_micros(300));
        Ok(())
    }
    fn len(&self) -> std::io::Result<u64> {
        self.0.len()
    }
    fn set_len(&self, len: u64) -> std::io::Result<()> {
        self.0.set_len(len)
    }
}

#[test]
fn concurrent_commits_share_fsyncs_and_all_become_durable() {
    let dir = Arc::new(MemDir::with_factory(|| {
        FaultyStorage::new(SlowSync::default())
    }));
    let (wal, _) = open(&dir);
    let wal = Arc::new(wal);
    let file = dir.file(NAME).expect("file");
    let syncs_before = file.count(Op::Sync);
    let threads = 16;
    let per_thread = 50;
    let handles: Vec<_> = (0..threads)
        .map(|t| {
            let wal = Arc::clone(&wal);
            std::thread::spawn(move || {
                let mut mine = Vec::new();
                for i in 0..per_thread {
                    let record = payload(t * 1000 + i, 100);
                    let lsn = wal.append(&record).expect("append");
                    wal.commit(lsn).expect("commit");
                    assert!(wal.lsn_durable() >= lsn, "commit returned before durable");
                    mine.push((lsn, record));
                }
                mine
            })
        })
        .collect();
    let mut all: Vec<(Lsn, Vec<u8>)> = handles
        .into_iter()
        .flat_map(|h| h.join().expect("thread"))
        .collect();
    all.sort();
    let commits = threads * per_thread;
    let syncs = file.count(Op::Sync) - syncs_before;
    assert!(
        syncs * 2 < commits,
        "{syncs} fsyncs for {commits} commits: group commit is not grouping"
    );
    drop(wal);
    let (_, recovery) = open(&dir);
    assert_eq!(recovery.records, all);
}

#[test]
fn appends_racing_a_truncation_are_all_kept() {
    let dir = Arc::new(MemDir::<MemStorage>::new());
    let (wal, _) = open(&dir);
    let wal = Arc::new(wal);
    let stop = Arc::new(AtomicBool::new(false));
    let writer = {
        let wal = Arc::clone(&wal);
        let stop = Arc::clone(&stop);
        std::thread::spawn(move || {
            let mut count = 0u64;
            while !stop.load(Ordering::Relaxed) || count < 100 {
                let lsn = wal.append(&payload(count, 64)).expect("append");
                if count.is_multiple_of(3) {
                    wal.commit(lsn).expect("commit");
                }
                count += 1;
            }
            wal.commit_all().expect("commit");
            count
        })
    };
    for _ in 0..20 {
        let lsn = wal.lsn_durable();
        wal.truncate_before(Lsn(lsn.0.max(1))).expect("truncate");
    }
    stop.store(true, Ordering::Relaxed);
    let count = writer.join().expect("writer");
    let lsn_next = wal.lsn_next();
    assert_eq!(lsn_next, Lsn(count + 1));
    drop(wal);
    let (_, recovery) = open(&dir);
    assert_eq!(recovery.lsn_next, lsn_next);
    let first = recovery.lsn_start.0;
    for (lsn, record) in &recovery.records {
        assert_eq!(record, &payload(lsn.0 - 1, 64));
        assert!(lsn.0 >= first);
    }
}

/// A storage whose syncs, once armed, each wait for the test to hand them a result.
#[derive(Debug, Default)]
struct GatedSync {
    inner: MemStorage,
    armed: AtomicBool,
    gate: Mutex<Gate>,
    changed: Condvar,
}

#[derive(Debug, Default)]
struct Gate {
    /// Syncs that reached the gate.
    entered: u64,
    /// Results handed out, in order, to the syncs waiting at the gate.
    results: VecDeque<bool>,
}

const GATE_TIMEOUT: Duration = Duration::from_secs(20);

impl GatedSync {
    /// Waits until `count` syncs reached the gate.
    fn wait_entered(&self, count: u64) {
        let mut gate = self.gate.lock();
        while gate.entered < count {
            let timed_out = self.changed.wait_for(&mut gate, GATE_TIMEOUT).timed_out();
            assert!(!timed_out, "sync {count} never came ({})", gate.entered);
        }
    }

    /// Lets the oldest waiting sync finish, successfully or with EIO.
    fn release(&self, ok: bool) {
        self.gate.lock().results.push_back(ok);
        self.changed.notify_all();
    }

    fn entered(&self) -> u64 {
        self.gate.lock().entered
    }
}

impl Storage for GatedSync {
    fn read_at(&self, buf: &mut [u8], offset: u64) -> std::io::Result<usize> {
        self.inner.read_at(buf, offset)
    }
    fn write_at(&self, buf: &[u8], offset: u64) -> std::io::Result<usize> {
        self.inner.write_at(buf, offset)
    }
    fn sync(&self) -> std::io::Result<()> {
        if !self.armed.load(Ordering::SeqCst) {
            return self.inner.sync();
        }
        let mut gate = self.gate.lock();
        gate.entered += 1;
        self.changed.notify_all();
        loop {
            if let Some(ok) = gate.results.pop_front() {
                return match ok {
                    true => self.inner.sync(),
                    false => Err(std::io::Error::other("injected fsync failure")),
                };
            }
            let timed_out = self.changed.wait_for(&mut gate, GATE_TIMEOUT).timed_out();
            assert!(!timed_out, "the test never released sync {}", gate.entered);
        }
    }
    fn len(&self) -> std::io::Result<u64> {
        self.inner.len()
    }
    fn set_len(&self, len: u64) -> std::io::Result<()> {
        self.inner.set_len(len)
    }
}

/// Commits `lsn` on another thread; its outcome arrives on the returned channel.
fn commit_on_thread(wal: &Arc<Wal>, lsn: Lsn) -> mpsc::Receiver<Result<(), WalError>> {
    let (send, receive) = mpsc::channel();
    let wal = Arc::clone(wal);
    std::thread::spawn(move || send.send(wal.commit(lsn)).expect("send"));
    receive
}

fn outcome(receive: &mpsc::Receiver<Result<(), WalError>>) -> Result<(), WalError> {
    receive
        .recv_timeout(GATE_TIMEOUT)
        .expect("a committer never returned")
}

/// One round is being synced while committers wait both inside it and for the next
/// round. The first sync succeeds: exactly its committers return `Ok`. The next round's
/// sync fails: every committer of that round gets the error, the log refuses all later
/// work, and the failed sync is never retried.
#[test]
fn a_failed_sync_fails_every_committer_of_its_round_and_only_those() {
    let dir = Arc::new(MemDir::<GatedSync>::new());
    let (wal, _) = open(&dir);
    let wal = Arc::new(wal);
    let file = dir.file(NAME).expect("file");
    file.armed.store(true, Ordering::SeqCst);
    let first: Vec<Lsn> = (0..4)
        .map(|i| wal.append(&payload(i, 80)).expect("append"))
        .collect();
    // The leader seals all four records, then blocks in its sync.
    let leader = commit_on_thread(&wal, first[0]);
    file.wait_entered(1);
    // Committers of the round in flight, and of the next one.
    let inside: Vec<_> = first[1..]
        .iter()
        .map(|&lsn| commit_on_thread(&wal, lsn))
        .collect();
    let next: Vec<_> = (0..4)
        .map(|i| {
            let lsn = wal.append(&payload(10 + i, 80)).expect("append");
            assert!(lsn > first[3], "appended after the seal");
            commit_on_thread(&wal, lsn)
        })
        .collect();
    std::thread::sleep(Duration::from_millis(30));
    file.release(true);
    let result = outcome(&leader);
    assert!(result.is_ok(), "leader of the synced round got {result:?}");
    for receive in &inside {
        let result = outcome(receive);
        assert!(
            result.is_ok(),
            "committer of the synced round got {result:?}"
        );
    }
    assert!(wal.lsn_durable() >= first[3]);
    file.wait_entered(2);
    assert_eq!(
        wal.lsn_durable(),
        first[3],
        "durable before its sync returned"
    );
    // A committer arriving while the failing round is in flight waits for it.
    let late = commit_on_thread(&wal, Lsn(wal.lsn_next().0 - 1));
    std::thread::sleep(Duration::from_millis(30));
    file.release(false);
    let result = outcome(&late);
    assert!(
        matches!(result, Err(WalError::Poisoned)),
        "committer inside the failed round got {result:?}"
    );
    let mut io_errors = 0;
    for receive in &next {
        match outcome(receive) {
            Err(WalError::Io(_)) => io_errors += 1,
            Err(WalError::Poisoned) => {}
            other => panic!("committer of the failed round got {other:?}"),
        }
    }
    assert_eq!(
        io_errors, 1,
        "the leader sees the I/O error, the others Poisoned"
    );
    assert!(wal.is_poisoned());
    assert!(matches!(wal.append(b"x"), Err(WalError::Poisoned)));
    assert!(matches!(wal.commit(first[0]), Err(WalError::Poisoned)));
    assert!(matches!(wal.commit_all(), Err(WalError::Poisoned)));
    std::thread::sleep(Duration::from_millis(20));
    assert_eq!(file.entered(), 2, "the failed sync was retried");
}

/// Many committers through the crash model; at a random sync the file starts failing
/// every sync, and then the machine crashes. Every record whose commit returned `Ok`
/// is recovered, and the log is a dense prefix of what was appended.
#[test]
fn many_committers_then_a_failed_sync_and_a_crash_keep_every_acknowledged_record() {
    for seed in 0..12u64 {
        let dir = Arc::new(MemDir::with_factory(|| {
            FaultyStorage::new(CrashStorage::new())
        }));
        let (wal, _) = open(&dir);
        let wal = Arc::new(wal);
        let file = dir.file(NAME).expect("file");
        file.inject(Fault {
            op: Op::Sync,
            nth: file.count(Op::Sync) + 3 + seed * 7,
            kind: FaultKind::Io,
            sticky: true,
        });
        let handles: Vec<_> = (0..32u64)
            .map(|t| {
                let wal = Arc::clone(&wal);
                std::thread::spawn(move || {
                    let (mut appended, mut acknowledged) = (Vec::new(), Vec::new());
                    for i in 0..40u64 {
                        let record = payload(t * 1000 + i, 20 + ((t * 31 + i * 17) % 300) as usize);
                        let Ok(lsn) = wal.append(&record) else { break };
                        appended.push((lsn, record.clone()));
                        match wal.commit(lsn) {
                            Ok(()) => acknowledged.push((lsn, record)),
                            Err(_) => break,
                        }
                    }
                    (appended, acknowledged)
                })
            })
            .collect();
        let (mut appended, mut acknowledged) = (Vec::new(), Vec::new());
        for handle in handles {
            let (a, b) = handle.join().expect("committer");
            appended.extend(a);
            acknowledged.extend(b);
        }
        assert!(wal.is_poisoned(), "seed {seed}: the fault never fired");
        drop(wal);
        file.clear();
        file.inner().crash(seed);
        let (_, recovery) = open(&dir);
        appended.sort();
        for (index, (lsn, record)) in recovery.records.iter().enumerate() {
            assert_eq!(*lsn, Lsn(index as u64 + 1), "seed {seed}: lsns are dense");
            assert_eq!(
                appended.get(index),
                Some(&(*lsn, record.clone())),
                "seed {seed}: recovered a record never appended"
            );
        }
        for (lsn, record) in &acknowledged {
            assert_eq!(
                recovery.records.get((lsn.0 - 1) as usize),
                Some(&(*lsn, record.clone())),
                "seed {seed}: acknowledged {lsn:?} lost"
            );
        }
    }
}

/// A storage whose syncs each take a random while (now and then longer than any
/// committer waits awake) before the inner sync makes anything durable.
#[derive(Debug, Default)]
struct JitterySync(CrashStorage);

/// A random number from a sequence shared by every thread (the order is up to them).
fn jitter(below: u64) -> u64 {
    static STATE: AtomicU64 = AtomicU64::new(0x2545_f491_4f6c_dd1d);
    let mut x = STATE.fetch_add(0x9e37_79b9_7f4a_7c15, Ordering::Relaxed);
    x = (x ^ (x >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    x = (x ^ (x >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    (x ^ (x >> 31)) % below
}

impl Storage for JitterySync {
    fn read_at(&self, buf: &mut [u8], offset: u64) -> std::io::Result<usize> {
        self.0.read_at(buf, offset)
    }
    fn write_at(&self, buf: &[u8], offset: u64) -> std::io::Result<usize> {
        self.0.write_at(buf, offset)
    }
    fn sync(&self) -> std::io::Result<()> {
        let micros = match jitter(20) {
            0 => 4_000 + jitter(3_000),
            1..=4 => 0,
            _ => jitter(500),
        };
        std::thread::sleep(Duration::from_micros(micros));
        self.0.sync()
    }
    fn len(&self) -> std::io::Result<u64> {
        self.0.len()
    }
    fn set_len(&self, len: u64) -> std::io::Result<()> {
        self.0.set_len(len)
    }
}

/// Whether `lsn` survives a crash of `file` now: the log recovered from only the bytes
/// its completed syncs made durable holds it.
fn survives_crash(file: &FaultyStorage<JitterySync>, lsn: Lsn) -> bool {
    let (_, recovery) = open(&mem_dir_with(file.inner().0.durable_snapshot()));
    recovery.lsn_next > lsn
}

/// 32 committers with random pauses, syncs of random length (some far longer than a
/// committer waits awake, so committers also fall asleep and must be woken), and in
/// every other seed a sync failing for good. Every `commit` returns (none sleeps
/// forever), returns `Ok` only once its record survives a crash, and after the failure
/// every call fails; a crash at the end keeps every acknowledged record.
#[test]
fn committers_return_ok_only_once_durable_and_never_sleep_forever() {
    for seed in 0..8u64 {
        let dir = Arc::new(MemDir::with_factory(|| {
            FaultyStorage::new(JitterySync::default())
        }));
        let (wal, _) = open(&dir);
        let wal = Arc::new(wal);
        let file = dir.file(NAME).expect("file");
        let failing = seed % 2 == 1;
        if failing {
            file.inject(Fault {
                op: Op::Sync,
                nth: file.count(Op::Sync) + 3 + seed * 2,
                kind: FaultKind::Io,
                sticky: true,
            });
        }
        let (send, receive) = mpsc::channel();
        for t in 0..32u64 {
            let (wal, file, send) = (Arc::clone(&wal), Arc::clone(&file), send.clone());
            std::thread::spawn(move || {
                let (mut acknowledged, mut early) = (Vec::new(), Vec::new());
                let mut failed = false;
                for i in 0..30u64 {
                    let record = payload(seed * 100_000 + t * 1000 + i, 30 + (i % 7) as usize * 40);
                    let Ok(lsn) = wal.append(&record) else {
                        failed = true;
                        break;
                    };
                    match jitter(4) {
                        0 => std::thread::yield_now(),
                        1 => std::thread::sleep(Duration::from_micros(jitter(300))),
                        _ => {}
                    }
                    match wal.commit(lsn) {
                        Ok(()) => {
                            if !survives_crash(&file, lsn) {
                                early.push(lsn);
                            }
                            acknowledged.push((lsn, record));
                        }
                        Err(_) => {
                            failed = true;
                            break;
                        }
                    }
                }
                send.send((acknowledged, early, failed)).expect("send");
            });
        }
        drop(send);
        let mut acknowledged = Vec::new();
        let mut failures = 0;
        for _ in 0..32 {
            let (ack, early, failed) = receive
                .recv_timeout(GATE_TIMEOUT)
                .unwrap_or_else(|_| panic!("seed {seed}: a committer never returned"));
            assert!(
                early.is_empty(),
                "seed {seed}: commit returned Ok before {early:?} was durable"
            );
            acknowledged.extend(ack);
            failures += usize::from(failed);
        }
        if failing {
            assert!(wal.is_poisoned(), "seed {seed}: the fault never fired");
            assert_eq!(
                failures, 32,
                "seed {seed}: a committer went on after the failure"
            );
            assert!(matches!(
                wal.commit_all(),
                Err(WalError::Poisoned | WalError::NotWritten(_))
            ));
        } else {
            assert_eq!(failures, 0, "seed {seed}: a commit failed without a fault");
            assert_eq!(acknowledged.len(), 32 * 30);
        }
        drop(wal);
        file.clear();
        let (_, recovery) = open(&mem_dir_with(file.inner().0.crash(seed)));
        for (lsn, record) in &acknowledged {
            assert_eq!(
                recovery.records.get((lsn.0 - 1) as usize),
                Some(&(*lsn, record.clone())),
                "seed {seed}: acknowledged {lsn:?} lost"
            );
        }
    }
}

/// Whether a gated sync was entered, and whether the test released it; and its signal.
type SyncGate = (Mutex<(bool, bool)>, Condvar);

/// A file whose syncs wait for the test's release when it belongs to a gated directory's
/// later files (the log file itself, created first, is never gated).
#[derive(Debug)]
struct FirstSyncGate {
    inner: MemStorage,
    gate: Option<Arc<SyncGate>>,
}

impl Storage for FirstSyncGate {
    fn read_at(&self, buf: &mut [u8], offset: u64) -> std::io::Result<usize> {
        self.inner.read_at(buf, offset)
    }
    fn write_at(&self, buf: &[u8], offset: u64) -> std::io::Result<usize> {
        self.inner.write_at(buf, offset)
    }
    fn sync(&self) -> std::io::Result<()> {
        if let Some(gate) = &self.gate {
            let (state, changed) = &**gate;
            let mut state = state.lock();
            // (entered, released)
            state.0 = true;
            changed.notify_all();
            while !state.1 {
                let timed_out = changed.wait_for(&mut state, GATE_TIMEOUT).timed_out();
                assert!(
                    !timed_out,
                    "the test never released the new generation's sync"
                );
            }
        }
        self.inner.sync()
    }
    fn len(&self) -> std::io::Result<u64> {
        self.inner.len()
    }
    fn set_len(&self, len: u64) -> std::io::Result<()> {
        self.inner.set_len(len)
    }
}

/// A truncation writes and syncs its new generation's preallocated zeros before it takes
/// the I/O token: while that sync is held, a commit on the log still completes (it used to
/// wait behind the truncation's whole chunk write and sync).
#[test]
fn a_commit_does_not_wait_for_a_truncations_zeros() {
    let gate: Arc<SyncGate> = Arc::new((Mutex::new((false, false)), Condvar::new()));
    let files = Arc::new(AtomicU64::new(0));
    let dir = {
        let gate = Arc::clone(&gate);
        let files = Arc::clone(&files);
        Arc::new(MemDir::with_factory(move || FirstSyncGate {
            inner: MemStorage::default(),
            gate: (files.fetch_add(1, Ordering::SeqCst) > 0).then(|| Arc::clone(&gate)),
        }))
    };
    let (wal, _) = open(&dir);
    let wal = Arc::new(wal);
    for seed in 0..20 {
        wal.append(&payload(seed, 300)).expect("append");
    }
    let last = wal.append(&payload(20, 300)).expect("append");
    wal.commit(last).expect("commit");
    let truncation = {
        let wal = Arc::clone(&wal);
        std::thread::spawn(move || wal.truncate_before(Lsn(last.0 + 1)))
    };
    {
        let (state, changed) = &*gate;
        let mut state = state.lock();
        while !state.0 {
            let timed_out = changed.wait_for(&mut state, GATE_TIMEOUT).timed_out();
            assert!(!timed_out, "the truncation never synced a new file");
        }
    }
    // The new generation's first sync is held: a commit must not need the truncation.
    let lsn = wal
        .append(&payload(21, 300))
        .expect("append during the truncation");
    let committed = commit_on_thread(&wal, lsn);
    let outcome = committed.recv_timeout(Duration::from_secs(10));
    {
        let (state, changed) = &*gate;
        state.lock().1 = true;
        changed.notify_all();
    }
    assert!(
        matches!(outcome, Ok(Ok(()))),
        "a commit waited behind the truncation's zeros: {outcome:?}"
    );
    truncation.join().expect("joins").expect("truncation");
    let more = wal.append(&payload(22, 300)).expect("append after");
    wal.commit(more).expect("commit after");
    drop(wal);
    let (_, recovery) = open(&dir);
    let lsns: Vec<u64> = recovery.records.iter().map(|(l, _)| l.0).collect();
    assert_eq!(
        lsns,
        vec![lsn.0, more.0],
        "the records after the truncation survive"
    );
}
