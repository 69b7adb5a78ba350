//! External merge sort (issue 17, `allowDiskUse`): a blocking sort that outgrows its memory
//! limit writes sorted runs to a temporary file beside the database (`<db>.sort-<n>`,
//! docs/format.md "Spill files") and merges them back, k-way, as its reader asks.
//!
//! States: building ([`Sorter::push`]) → finished ([`Sorter::finish`]): in memory
//! ([`Sorted::Memory`], no file was written) or spilled ([`Sorted::Spilled`], a [`Merge`]
//! over the runs) → dropped (the file removed: `SpillFile`'s `Drop`).
//!
//! Invariants:
//! - Stable: each run is the stable sort of a contiguous stretch of the input, runs are
//!   numbered in input order, and the merge takes, among equal keys, the head of the
//!   lowest-numbered run; so the output is the stable sort of the whole input, the order
//!   [`query::SortSpec::sort`] gives in memory (keys are [`query::SortSpec::key`]'s: type
//!   order, an array by its smallest or largest element by direction).
//! - With a bound `keep` (skip + limit), a run holds only its first `keep` documents: the
//!   first `keep` of the whole input are among the runs' first `keep`.
//! - Memory: while runs are built, at most `bytes_max` bytes of documents are held (more
//!   than that writes a run; with a bound, the buffer is first cut to `keep`, and a run is
//!   written only if the cut one still holds over half the limit); during the merge, one
//!   read buffer per run of `bytes_max / runs` bytes (within `READ_BUFFER_MIN..=MAX`) plus
//!   each run's head document.
//! - A spill file lives exactly as long as its `SpillFile`: dropped (the sort done, failed,
//!   its cursor drained, killed or reaped) it is removed; one a crash left is removed when
//!   the database next opens ([`remove_leftovers`]).
//! - What is read back is checked: each frame's length against its run's end, its
//!   checksum, and its BSON; a mismatch is 290 DataCorruptionDetected, never a wrong
//!   document or a panic. A failed write or read is an error (39 FileStreamFailed, or 14031
//!   OutOfDiskSpace) and is not retried; the file is still removed.
//! - Every byte goes through the storage seam (`wal::Dir`, `wal::Storage`), so the tests'
//!   fault models sit under the spill too.

use crate::error::{Error, ErrorCode};
use crate::store::Store;
use bson::{RawDocument, RawDocumentBuf};
use query::{SortKey, SortSpec};
use std::cmp::Ordering;
use std::io;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering as AtomicOrdering};
use wal::{Dir, Storage};

#[cfg(test)]
mod tests;

/// Frame header: the xxh3-64 of the document's bytes, little-endian.
const FRAME_HEADER_BYTES: usize = 8;
/// Bytes gathered before one write to the spill file.
const WRITE_BUFFER_BYTES: usize = 1 << 20;
/// The smallest and largest read buffer of one run during the merge.
const READ_BUFFER_MIN: usize = 4 << 10;
const READ_BUFFER_MAX: usize = 1 << 20;
/// The smallest document: its length and its terminating zero.
const DOCUMENT_BYTES_MIN: usize = 5;

const _: () = assert!(READ_BUFFER_MIN <= READ_BUFFER_MAX);
const _: () = assert!(FRAME_HEADER_BYTES + 4 <= READ_BUFFER_MIN);

/// The engine's sort settings: the memory limit and the spill files' numbering.
#[derive(Debug)]
pub struct Settings {
    bytes_max: AtomicUsize,
    group_bytes_max: AtomicUsize,
    sequence: AtomicU64,
}

impl Default for Settings {
    fn default() -> Self {
        Settings {
            bytes_max: AtomicUsize::new(crate::limits::SORT_BYTES_MAX),
            group_bytes_max: AtomicUsize::new(crate::limits::GROUP_BYTES_MAX),
            sequence: AtomicU64::new(0),
        }
    }
}

impl Settings {
    /// The most document bytes a blocking sort holds in memory (mongod's
    /// `internalQueryMaxBlockingSortMemoryUsageBytes`).
    pub fn bytes_max(&self) -> usize {
        self.bytes_max.load(AtomicOrdering::Relaxed)
    }

    /// Sets [`Settings::bytes_max`].
    pub fn set_bytes_max(&self, bytes: usize) {
        self.bytes_max.store(bytes, AtomicOrdering::Relaxed);
    }

    /// The most estimated bytes of groups a `$group` holds in memory (mongod's
    /// `internalDocumentSourceGroupMaxMemoryBytes`): past it the rest of its input is
    /// sorted by group key with `allowDiskUse`, else it fails with 292.
    pub fn group_bytes_max(&self) -> usize {
        self.group_bytes_max.load(AtomicOrdering::Relaxed)
    }

    /// Sets [`Settings::group_bytes_max`].
    pub fn set_group_bytes_max(&self, bytes: usize) {
        self.group_bytes_max.store(bytes, AtomicOrdering::Relaxed);
    }
}

/// What a sort did, for explain's SORT stage.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct SortStats {
    /// Bytes of every document the sort was given (`totalDataSizeSorted`).
    pub bytes_sorted: u64,
    /// Runs written to the spill file (`spills`; `usedDisk` when not zero).
    pub spills: u64,
}

/// Where a sort may spill: the database's directory and the file name to use there, or
/// nowhere (no `allowDiskUse`).
pub struct SpillTo {
    dir: Arc<dyn Dir>,
    name: String,
}

impl SpillTo {
    /// The next spill file of `store`'s database, numbered by `settings`, if `allowed`.
    pub fn of(store: &Store, settings: &Settings, allowed: bool) -> Option<SpillTo> {
        if !allowed {
            return None;
        }
        let (dir, data_name) = store.files();
        let n = settings.sequence.fetch_add(1, AtomicOrdering::Relaxed) + 1;
        Some(SpillTo {
            dir: Arc::clone(dir),
            name: spill_name(data_name, n),
        })
    }
}

/// The name of spill file `n` of data file `data_name`.
fn spill_name(data_name: &str, n: u64) -> String {
    format!("{data_name}.sort-{n}")
}

/// Removes the spill files a crash left beside data file `data_name` in `dir`.
pub fn remove_leftovers(dir: &dyn Dir, data_name: &str) -> io::Result<usize> {
    let prefix = format!("{data_name}.sort-");
    let mut removed = 0;
    for name in dir.list()? {
        let Some(number) = name.strip_prefix(&prefix) else {
            continue;
        };
        if number.is_empty() || !number.bytes().all(|b| b.is_ascii_digit()) {
            continue;
        }
        dir.remove(&name)?;
        removed += 1;
    }
    Ok(removed)
}

/// How mongod's find prefixes an error of its plan ([`exceeded`]'s context).
pub const FIND_CONTEXT: &str = "Executor error during find command";
/// How mongod's aggregate prefixes an error of its pipeline.
pub const AGGREGATE_CONTEXT: &str = "PlanExecutor error during aggregation";

/// The error of a sort over its memory limit without `allowDiskUse`; `context` is how
/// mongod prefixes the command's errors ([`FIND_CONTEXT`], [`AGGREGATE_CONTEXT`]).
pub fn exceeded(bytes_max: usize, context: &str) -> Error {
    Error::new(
        ErrorCode::Other(292, "QueryExceededMemoryLimitNoDiskUseAllowed"),
        format!(
            "{context} :: caused by :: Sort exceeded memory limit of {bytes_max} bytes, but did \
             not opt in to external sorting."
        ),
    )
}

/// One buffered document with its key and its position in the input.
struct Entry {
    key: SortKey,
    position: u64,
    doc: RawDocumentBuf,
}

/// A blocking sort under a memory limit, spilling runs when allowed.
pub struct Sorter {
    spec: SortSpec,
    keep: Option<usize>,
    bytes_max: usize,
    context: &'static str,
    spill_to: Option<SpillTo>,
    buffer: Vec<Entry>,
    bytes: usize,
    position: u64,
    file: Option<SpillFile>,
    runs: Vec<Run>,
    stats: SortStats,
}

impl Sorter {
    /// A sort by `spec` keeping the first `keep` documents (all when `None`), holding at
    /// most `bytes_max` bytes in memory, spilling to `spill_to` (over the limit without
    /// one: [`exceeded`] with `context`).
    pub fn new(
        spec: &SortSpec,
        keep: Option<usize>,
        bytes_max: usize,
        spill_to: Option<SpillTo>,
        context: &'static str,
    ) -> Sorter {
        Sorter {
            spec: spec.clone(),
            keep,
            bytes_max,
            context,
            spill_to,
            buffer: Vec::new(),
            bytes: 0,
            position: 0,
            file: None,
            runs: Vec::new(),
            stats: SortStats::default(),
        }
    }

    /// Adds one document.
    pub fn push(&mut self, doc: RawDocumentBuf) -> Result<(), Error> {
        let len = doc.as_bytes().len();
        self.stats.bytes_sorted += len as u64;
        self.bytes += len;
        let key = self.spec.key(&doc);
        self.buffer.push(Entry {
            key,
            position: self.position,
            doc,
        });
        self.position += 1;
        if let Some(keep) = self.keep
            && self.buffer.len() >= keep.saturating_mul(2).max(16)
        {
            self.cut(keep);
        }
        if self.bytes > self.bytes_max {
            self.relieve()?;
        }
        Ok(())
    }

    /// What the sort did so far.
    pub fn stats(&self) -> SortStats {
        self.stats
    }

    /// Keeps the first `keep` buffered documents in sort order (by selection: unsorted).
    fn cut(&mut self, keep: usize) {
        if self.buffer.len() <= keep {
            return;
        }
        let spec = &self.spec;
        if keep == 0 {
            self.buffer.clear();
        } else {
            self.buffer
                .select_nth_unstable_by(keep - 1, |a, b| order(spec, a, b));
            self.buffer.truncate(keep);
        }
        self.bytes = self.buffer.iter().map(|e| e.doc.as_bytes().len()).sum();
    }

    /// The buffer passed the limit: cut it to the bound, else write it out as a run.
    fn relieve(&mut self) -> Result<(), Error> {
        if let Some(keep) = self.keep {
            self.cut(keep);
            let enough = match self.spill_to {
                // Spill only a cut buffer that still holds over half the limit, so the
                // next documents do not cut again at once.
                Some(_) => self.bytes_max / 2,
                None => self.bytes_max,
            };
            if self.bytes <= enough {
                return Ok(());
            }
        }
        if self.spill_to.is_none() {
            return Err(exceeded(self.bytes_max, self.context));
        }
        self.write_run()
    }

    /// Sorts the buffer and appends it to the spill file as the next run.
    fn write_run(&mut self) -> Result<(), Error> {
        self.sort_buffer();
        let file = match &mut self.file {
            Some(file) => file,
            None => {
                let to = self
                    .spill_to
                    .as_ref()
                    .expect("write_run runs only with a spill target");
                self.file.insert(SpillFile::create(to)?)
            }
        };
        let offset = file.len;
        let mut pending = Vec::with_capacity(WRITE_BUFFER_BYTES.min(self.bytes + 64));
        let count = self.buffer.len() as u64;
        for entry in self.buffer.drain(..) {
            let bytes = entry.doc.as_bytes();
            pending.extend_from_slice(&xxhash_rust::xxh3::xxh3_64(bytes).to_le_bytes());
            pending.extend_from_slice(bytes);
            if pending.len() >= WRITE_BUFFER_BYTES {
                file.append(&pending)?;
                pending.clear();
            }
        }
        file.append(&pending)?;
        self.runs.push(Run {
            offset,
            end: file.len,
            count,
        });
        self.bytes = 0;
        self.stats.spills += 1;
        Ok(())
    }

    /// Sorts the buffer stably and cuts it to the bound.
    fn sort_buffer(&mut self) {
        let spec = &self.spec;
        self.buffer.sort_unstable_by(|a, b| order(spec, a, b));
        if let Some(keep) = self.keep {
            self.buffer.truncate(keep);
        }
    }

    /// The sorted documents: in memory if nothing was spilled, else a merge of the runs.
    pub fn finish(mut self) -> Result<Sorted, Error> {
        let Some(_) = &self.file else {
            self.sort_buffer();
            let docs = self.buffer.into_iter().map(|entry| entry.doc).collect();
            return Ok(Sorted::Memory(docs, self.stats));
        };
        if !self.buffer.is_empty() {
            self.write_run()?;
        }
        let file = self.file.take().expect("a spilled sort has its file");
        Merge::start(
            file,
            self.spec,
            self.runs,
            self.keep,
            self.bytes_max,
            self.stats,
        )
        .map(Sorted::Spilled)
    }
}

/// Entries in sort order, ties by input position (a stable sort).
fn order(spec: &SortSpec, a: &Entry, b: &Entry) -> Ordering {
    spec.compare_keys(&a.key, &b.key)
        .then(a.position.cmp(&b.position))
}

/// The result of a [`Sorter`].
pub enum Sorted {
    /// Nothing was spilled: the documents in order.
    Memory(Vec<RawDocumentBuf>, SortStats),
    /// Runs were spilled: their merge.
    Spilled(Merge),
}

impl Sorted {
    /// What the sort did.
    pub fn stats(&self) -> SortStats {
        match self {
            Sorted::Memory(_, stats) => *stats,
            Sorted::Spilled(merge) => merge.stats,
        }
    }
}

/// One sorted run in the spill file: bytes `offset..end`, `count` frames.
#[derive(Debug, Clone, Copy)]
struct Run {
    offset: u64,
    end: u64,
    count: u64,
}

/// A temporary file of runs; removed when dropped.
struct SpillFile {
    dir: Arc<dyn Dir>,
    name: String,
    storage: Arc<dyn Storage>,
    len: u64,
}

impl SpillFile {
    fn create(to: &SpillTo) -> Result<SpillFile, Error> {
        let storage = to
            .dir
            .open(&to.name)
            .map_err(|e| io_error("creating", &to.dir.display(&to.name), &e))?;
        let file = SpillFile {
            dir: Arc::clone(&to.dir),
            name: to.name.clone(),
            storage,
            len: 0,
        };
        // A file of that name is a stranger's leftover: start empty.
        file.storage
            .set_len(0)
            .map_err(|e| io_error("truncating", &file.path(), &e))?;
        Ok(file)
    }

    fn path(&self) -> String {
        self.dir.display(&self.name)
    }

    /// Appends `bytes` (a short write is continued; none at all is an error).
    fn append(&mut self, mut bytes: &[u8]) -> Result<(), Error> {
        while !bytes.is_empty() {
            let written = self
                .storage
                .write_at(bytes, self.len)
                .map_err(|e| io_error("writing to", &self.path(), &e))?;
            if written == 0 {
                let e = io::Error::new(io::ErrorKind::WriteZero, "wrote nothing");
                return Err(io_error("writing to", &self.path(), &e));
            }
            self.len += written as u64;
            bytes = bytes.get(written..).unwrap_or_default();
        }
        Ok(())
    }

    /// Fills `buf` from `offset`; the file ending first is corruption.
    fn read_exact(&self, mut buf: &mut [u8], mut offset: u64) -> Result<(), Error> {
        while !buf.is_empty() {
            let read = self
                .storage
                .read_at(buf, offset)
                .map_err(|e| io_error("reading", &self.path(), &e))?;
            if read == 0 {
                return Err(self.corrupt(offset, "the file ends inside a run"));
            }
            offset += read as u64;
            buf = &mut buf[read..];
        }
        Ok(())
    }

    fn corrupt(&self, offset: u64, reason: &str) -> Error {
        Error::new(
            ErrorCode::DataCorruptionDetected,
            format!(
                "the sort's spill file {} is damaged at offset {offset}: {reason}",
                self.path()
            ),
        )
    }
}

impl Drop for SpillFile {
    fn drop(&mut self) {
        // Freed at once even if the directory entry stays (a reader holds no handle).
        let truncated = self.storage.set_len(0);
        if let Err(error) = self.dir.remove(&self.name).and(truncated) {
            eprintln!(
                "multiforadb: warning: could not remove the sort's spill file {}: {error} \
                 (it is removed when the database next opens)",
                self.path()
            );
        }
    }
}

/// `error` of the spill file at `path` as a reply: a full disk is 14031, anything else
/// mongod's sorter error, 39 FileStreamFailed.
fn io_error(doing: &str, path: &str, error: &io::Error) -> Error {
    let full = error.raw_os_error() == Some(28) || error.kind() == io::ErrorKind::StorageFull;
    let code = if full {
        ErrorCode::OutOfDiskSpace
    } else {
        ErrorCode::Other(39, "FileStreamFailed")
    };
    Error::new(code, format!("error {doing} file \"{path}\": {error}"))
}

/// A run being read back: the bytes read ahead of its next frame.
struct RunReader {
    run: Run,
    /// The file offset just past `buffer`.
    next: u64,
    buffer: Vec<u8>,
    /// Where the next frame starts in `buffer`.
    start: usize,
    capacity: usize,
    frames_read: u64,
}

impl RunReader {
    /// The run's next document, `None` at its end.
    fn next(&mut self, file: &SpillFile) -> Result<Option<RawDocumentBuf>, Error> {
        if self.frames_read == self.run.count {
            let left = self.next - self.start_offset();
            let at = self.start_offset();
            if left != 0 || self.next != self.run.end {
                return Err(file.corrupt(at, "a run holds more bytes than its documents"));
            }
            return Ok(None);
        }
        let at = self.start_offset();
        self.fill(file, FRAME_HEADER_BYTES + 4, at)?;
        let header = self.window(FRAME_HEADER_BYTES + 4);
        let (hash, len) = header.split_at(FRAME_HEADER_BYTES);
        let hash = u64::from_le_bytes(hash.try_into().expect("eight bytes"));
        let len = i32::from_le_bytes(len.try_into().expect("four bytes"));
        let len = usize::try_from(len).unwrap_or(0);
        if len < DOCUMENT_BYTES_MIN || (FRAME_HEADER_BYTES + len) as u64 > self.run.end - at {
            return Err(file.corrupt(at, "a document's length passes its run's end"));
        }
        self.fill(file, FRAME_HEADER_BYTES + len, at)?;
        let frame = self.window(FRAME_HEADER_BYTES + len);
        let bytes = frame.get(FRAME_HEADER_BYTES..).unwrap_or_default();
        if xxhash_rust::xxh3::xxh3_64(bytes) != hash {
            return Err(file.corrupt(at, "a document's checksum does not match"));
        }
        let doc = RawDocument::from_bytes(bytes)
            .map_err(|_| file.corrupt(at, "a document is not valid BSON"))?
            .to_owned();
        self.start += FRAME_HEADER_BYTES + len;
        self.frames_read += 1;
        Ok(Some(doc))
    }

    /// The file offset of the next frame.
    fn start_offset(&self) -> u64 {
        self.next - (self.buffer.len() - self.start) as u64
    }

    /// The next `n` buffered bytes (present: [`RunReader::fill`] ran).
    fn window(&self, n: usize) -> &[u8] {
        self.buffer
            .get(self.start..self.start + n)
            .expect("fill buffered the bytes")
    }

    /// Makes at least `n` bytes from the next frame (at file offset `at`) buffered.
    fn fill(&mut self, file: &SpillFile, n: usize, at: u64) -> Result<(), Error> {
        let held = self.buffer.len() - self.start;
        if held >= n {
            return Ok(());
        }
        self.buffer.drain(..self.start);
        self.start = 0;
        let left_in_run = self.run.end - self.next;
        let wanted = (n - held).max(self.capacity) as u64;
        let read = wanted.min(left_in_run);
        if read < (n - held) as u64 {
            return Err(file.corrupt(at, "a frame passes its run's end"));
        }
        let read = usize::try_from(read).expect("at most a frame or a buffer");
        let old = self.buffer.len();
        self.buffer.resize(old + read, 0);
        file.read_exact(&mut self.buffer[old..], self.next)?;
        self.next += read as u64;
        Ok(())
    }
}

/// The k-way merge of a spilled sort's runs.
pub struct Merge {
    file: SpillFile,
    spec: SortSpec,
    readers: Vec<RunReader>,
    /// Each run's next document and its key (`None`: the run is done).
    heads: Vec<Option<(SortKey, RawDocumentBuf)>>,
    /// Documents still to hand out (`None`: all).
    remaining: Option<usize>,
    stats: SortStats,
}

impl Merge {
    fn start(
        file: SpillFile,
        spec: SortSpec,
        runs: Vec<Run>,
        keep: Option<usize>,
        bytes_max: usize,
        stats: SortStats,
    ) -> Result<Merge, Error> {
        let per_run = bytes_max / runs.len().max(1);
        let capacity = per_run.clamp(READ_BUFFER_MIN, READ_BUFFER_MAX);
        let readers = runs
            .into_iter()
            .map(|run| RunReader {
                run,
                next: run.offset,
                buffer: Vec::new(),
                start: 0,
                capacity,
                frames_read: 0,
            })
            .collect();
        let mut merge = Merge {
            file,
            spec,
            readers,
            heads: Vec::new(),
            remaining: keep,
            stats,
        };
        for i in 0..merge.readers.len() {
            let head = merge.read_head(i)?;
            merge.heads.push(head);
        }
        Ok(merge)
    }

    fn read_head(&mut self, run: usize) -> Result<Option<(SortKey, RawDocumentBuf)>, Error> {
        let reader = self.readers.get_mut(run).expect("a head per run");
        let doc = reader.next(&self.file)?;
        Ok(doc.map(|doc| (self.spec.key(&doc), doc)))
    }

    /// Drops the first `n` documents (a skip).
    pub fn skip(&mut self, n: usize) -> Result<(), Error> {
        for _ in 0..n {
            if self.next_document()?.is_none() {
                break;
            }
        }
        Ok(())
    }

    /// The next document in sort order, `None` when every run is done.
    pub fn next_document(&mut self) -> Result<Option<RawDocumentBuf>, Error> {
        if self.remaining == Some(0) {
            return Ok(None);
        }
        // The smallest head; on a tie the earliest run's (stability). Runs are few (the
        // input over the memory limit), so a scan beats a heap's bookkeeping.
        let mut best: Option<usize> = None;
        for (i, head) in self.heads.iter().enumerate() {
            let Some((key, _)) = head else { continue };
            let better = match best
                .and_then(|b| self.heads.get(b))
                .and_then(Option::as_ref)
            {
                None => true,
                Some((best_key, _)) => self.spec.compare_keys(key, best_key).is_lt(),
            };
            if better {
                best = Some(i);
            }
        }
        let Some(best) = best else {
            return Ok(None);
        };
        let next = self.read_head(best)?;
        let slot = self.heads.get_mut(best).expect("a head per run");
        let (_, doc) = std::mem::replace(slot, next).expect("the best head is present");
        if let Some(remaining) = &mut self.remaining {
            *remaining -= 1;
        }
        Ok(Some(doc))
    }
}
