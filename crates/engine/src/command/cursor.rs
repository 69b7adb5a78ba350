//! Cursors and their batches: what a cursor holds, how a batch is filled under the count and
//! byte caps, the `maxTimeMS` budget, and the getMore and killCursors commands.
//!
//! A cursor's results come from one of two sources. A natural-order scan remembers only the
//! record id it stopped after and opens a fresh snapshot for every batch, continuing after
//! that id: concurrent writes never make it fail or return a document twice (record ids only
//! grow, and updates keep them). Anything else (sorted results, pipelines, listings) is
//! computed whole when the cursor opens and handed out batch by batch. The cursor lifecycle
//! is drawn in the `registry` module.
//!
//! A tailable cursor (`tailable`, on a capped collection: the oplog) is a forward scan
//! that stays open when it reaches the end, unless the collection was empty (nothing to
//! resume after: mongod's dead cursor) or its limit is spent. Each getMore continues after
//! the last record examined; if that record was removed meanwhile (the capped collection
//! rolled over it) the cursor fails with 136 CappedPositionLost rather than skip what it
//! never saw. With `awaitData`, a getMore that finds nothing waits for the next commit,
//! up to its `maxTimeMS` (one second when not given), then answers an empty batch.

use super::args;
use super::read_args::{self, to_usize};
use super::{Reply, Request};
use crate::engine::Engine;
use crate::error::{Error, ErrorCode};
use crate::host::Host;
use crate::limits::{BATCH_BYTES_MAX, DEADLINE_CHECK_INTERVAL};
use crate::plan::IndexAccess;
use crate::store::{Namespace, WalkPosition, WalkTarget};
use bson::raw::{CStr, RawBsonRef, cstr};
use bson::{Document, RawDocument, RawDocumentBuf, doc};
use query::{Filter, Projection};
use std::cell::Cell;
use std::collections::{HashSet, VecDeque};

/// An open query: where its results come from and how they are shaped.
pub(crate) struct Cursor {
    /// The namespace the reply names (`db.coll`, or `db.$cmd.listCollections`).
    pub(crate) ns: Namespace,
    /// Where the remaining results come from.
    pub(crate) source: Source,
    /// The query filter: a scan matches with it; a projection's positional `$` needs it.
    pub(crate) filter: Option<Filter>,
    /// Applied to each document as it enters a batch.
    pub(crate) projection: Option<Projection>,
    /// What is left of the `maxTimeMS` budget (`None`: no limit).
    pub(crate) time_left_ms: Option<i64>,
    /// `noCursorTimeout`: never reaped for idleness.
    pub(crate) no_timeout: bool,
    /// The `planSummary` of the read it continues (each getMore reports it, as mongod's).
    pub(crate) plan_summary: Option<String>,
    /// A shaped document that did not fit in the last batch; it opens the next one.
    pending: Option<RawDocumentBuf>,
    /// Who opened it, `(user, db)`, under `--auth`: only that user may continue or kill
    /// it (from any connection), as mongod checks.
    pub(crate) owner: Option<(String, String)>,
    /// Set for a tailable cursor (its source is a forward [`Scan`]).
    pub(crate) tail: Option<Tail>,
}

/// What a tailable cursor keeps beyond its scan.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Tail {
    /// `awaitData`: an empty getMore waits for a commit.
    pub(crate) await_data: bool,
    /// The position the scan started after (a `ts` bound, not a record it examined):
    /// not checked for removal.
    pub(crate) start: Option<u64>,
}

/// How long an `awaitData` getMore without `maxTimeMS` waits (mongod's default).
pub(crate) const AWAIT_DATA_DEFAULT_MS: i64 = 1000;

/// Where a cursor's remaining results come from.
pub(crate) enum Source {
    /// A natural-order scan, resumed from a fresh snapshot for each batch.
    Scan(Scan),
    /// An index walk in index order, resumed from a fresh snapshot for each batch.
    Index(IndexScan),
    /// Results computed when the cursor opened.
    Buffered(VecDeque<RawDocumentBuf>),
    /// A sort that spilled, merged from its file as batches are read (the file goes with
    /// the cursor).
    Merged(crate::spill::Merge),
}

/// The position and counters of a natural-order scan.
pub(crate) struct Scan {
    /// The collection's UUID when the scan began: a dropped (or renamed and recreated)
    /// collection ends the cursor instead of reading a stranger's records.
    pub(crate) uuid: [u8; 16],
    /// The last record id examined; the next batch continues after it (before it when
    /// `reverse`).
    pub(crate) after: Option<u64>,
    /// Descending record ids: `$natural: -1`, read backwards batch by batch like the
    /// forward scan (records inserted meanwhile have higher ids: never met).
    pub(crate) reverse: bool,
    /// Matches still to skip.
    pub(crate) skip: u64,
    /// Matches still to return (`None`: no limit).
    pub(crate) limit: Option<u64>,
}

/// The position and counters of an index walk.
pub(crate) struct IndexScan {
    /// The collection's UUID when the walk began (as [`Scan::uuid`]).
    pub(crate) uuid: [u8; 16],
    /// The index and its ranges.
    pub(crate) access: IndexAccess,
    /// The walks still to run after this one (the later branches of an `$or`).
    pub(crate) rest: VecDeque<IndexAccess>,
    /// Where the walk stands; the next batch continues after it.
    pub(crate) position: WalkPosition,
    /// Records already examined: a multikey index (or a document whose key moved forward
    /// between batches) names a record more than once; it is returned once.
    pub(crate) seen: HashSet<u64>,
    /// Matches still to skip.
    pub(crate) skip: u64,
    /// Matches still to return (`None`: no limit).
    pub(crate) limit: Option<u64>,
}

impl Cursor {
    /// A cursor over `source`, with no projection, filter or time limit.
    pub(crate) fn new(ns: Namespace, source: Source) -> Cursor {
        Cursor {
            ns,
            source,
            filter: None,
            projection: None,
            time_left_ms: None,
            no_timeout: false,
            plan_summary: None,
            pending: None,
            owner: None,
            tail: None,
        }
    }

    /// Whether a cursor that has read all there is now is finished: always, except a
    /// tailable one that has a position to resume from and no spent limit.
    fn ends_when_exhausted(&self) -> bool {
        match (&self.tail, &self.source) {
            (Some(_), Source::Scan(scan)) => scan.after.is_none() || scan.limit == Some(0),
            _ => true,
        }
    }

    /// The next batch of at most `count_max` documents (any number when `None`) and at most
    /// `BATCH_BYTES_MAX` bytes (but at least one document), and whether the cursor is
    /// finished (nothing is left; a tailable cursor: see [`Tail`]).
    pub(crate) fn next_batch(
        &mut self,
        engine: &Engine,
        count_max: Option<usize>,
    ) -> Result<(Vec<RawDocumentBuf>, bool), Error> {
        let deadline = Deadline::start(engine.host.as_ref(), self.time_left_ms);
        let mut batch = Batch::new(count_max);
        let exhausted = self.fill(engine, &mut batch, &deadline)?;
        self.time_left_ms = deadline.remaining();
        Ok((batch.docs, exhausted && self.ends_when_exhausted()))
    }

    fn fill(
        &mut self,
        engine: &Engine,
        batch: &mut Batch,
        deadline: &Deadline<'_>,
    ) -> Result<bool, Error> {
        if let Some(doc) = self.pending.take()
            && let Err(doc) = batch.offer(doc)
        {
            self.pending = Some(doc);
            return Ok(false);
        }
        let shape = Shape {
            filter: self.filter.as_ref(),
            projection: self.projection.as_ref(),
        };
        match &mut self.source {
            Source::Buffered(queue) => {
                while let Some(doc) = queue.pop_front() {
                    deadline.tick()?;
                    if let Err(doc) = batch.offer(shape.apply(&doc)?) {
                        self.pending = Some(doc);
                        return Ok(false);
                    }
                }
                Ok(true)
            }
            Source::Merged(merge) => {
                while let Some(doc) = merge.next_document()? {
                    deadline.tick()?;
                    if let Err(doc) = batch.offer(shape.apply(&doc)?) {
                        self.pending = Some(doc);
                        return Ok(false);
                    }
                }
                Ok(true)
            }
            Source::Scan(scan) => {
                // A tailable scan's last examined record must still be there (not its
                // starting `ts` bound, which names no record).
                let check = self
                    .tail
                    .and_then(|tail| scan.after.filter(|&rid| Some(rid) != tail.start));
                let pending = scan.fill(engine, &self.ns, shape, batch, deadline, check)?;
                let exhausted = pending.is_none();
                self.pending = pending;
                Ok(exhausted)
            }
            Source::Index(walk) => {
                let pending = walk.fill(engine, &self.ns, shape, batch, deadline)?;
                let exhausted = pending.is_none();
                self.pending = pending;
                Ok(exhausted)
            }
        }
    }
}

/// How documents are shaped on their way into a batch.
#[derive(Clone, Copy)]
struct Shape<'c> {
    filter: Option<&'c Filter>,
    projection: Option<&'c Projection>,
}

impl Shape<'_> {
    fn apply(&self, doc: &RawDocument) -> Result<RawDocumentBuf, Error> {
        match self.projection {
            Some(projection) => Ok(projection.apply(doc, self.filter)?),
            None => Ok(doc.to_owned()),
        }
    }

    /// [`Shape::apply`] to stored record `rid`, projected from its bytes where they lie.
    fn apply_stored(
        &self,
        ns: &Namespace,
        rid: u64,
        bytes: &[u8],
    ) -> Result<RawDocumentBuf, Error> {
        match self.projection {
            Some(projection) => Ok(projection.apply_bytes(bytes, self.filter)?),
            None => {
                let doc = RawDocument::from_bytes(bytes).map_err(|_| corrupt_record(ns, rid))?;
                Ok(doc.to_owned())
            }
        }
    }
}

impl Scan {
    /// Scans from `after` into `batch`; returns the shaped document that did not fit, or
    /// `None` when the scan is exhausted. `must_exist`: a tailable scan's last examined
    /// record, whose removal (a capped collection's rollover) is 136 CappedPositionLost.
    fn fill(
        &mut self,
        engine: &Engine,
        ns: &Namespace,
        shape: Shape<'_>,
        batch: &mut Batch,
        deadline: &Deadline<'_>,
        must_exist: Option<u64>,
    ) -> Result<Option<RawDocumentBuf>, Error> {
        if self.limit == Some(0) {
            return Ok(None);
        }
        let store = engine.store();
        let reader = store.read()?;
        let meta = same_collection(&reader, ns, self.uuid)?;
        if let Some(rid) = must_exist
            && reader.get(&meta, rid)?.is_none()
        {
            return Err(Error::new(
                ErrorCode::Other(136, "CappedPositionLost"),
                format!(
                    "CollectionScan died due to position in capped collection being deleted. \
                     Last seen record id: RecordId({rid})"
                ),
            ));
        }
        let records: Box<dyn Iterator<Item = _>> = if self.reverse {
            Box::new(reader.scan_back(&meta, self.after)?)
        } else {
            Box::new(reader.scan(&meta, self.after)?)
        };
        for entry in records {
            deadline.tick()?;
            let (rid, bytes) = entry?;
            deadline.doc_examined();
            self.after = Some(rid);
            match take(
                ns,
                rid,
                &bytes,
                shape,
                &mut self.skip,
                &mut self.limit,
                batch,
            )? {
                Step::Next => {}
                Step::Full(shaped) => return Ok(Some(shaped)),
                Step::Done => return Ok(None),
            }
        }
        Ok(None)
    }
}

/// What a resumable scan does after one examined record.
enum Step {
    /// Go on.
    Next,
    /// The batch is full: this shaped document opens the next one.
    Full(RawDocumentBuf),
    /// The limit is reached.
    Done,
}

/// One examined record of a resumable scan: matched against the filter, skipped or shaped
/// into `batch`, counted against `limit`.
fn take(
    ns: &Namespace,
    rid: u64,
    bytes: &[u8],
    shape: Shape<'_>,
    skip: &mut u64,
    limit: &mut Option<u64>,
    batch: &mut Batch,
) -> Result<Step, Error> {
    if !super::access::matches(ns, shape.filter, rid, bytes)? {
        return Ok(Step::Next);
    }
    if *skip > 0 {
        *skip -= 1;
        return Ok(Step::Next);
    }
    let shaped = shape.apply_stored(ns, rid, bytes)?;
    if let Some(limit) = limit.as_mut() {
        *limit -= 1;
    }
    if let Err(shaped) = batch.offer(shaped) {
        return Ok(Step::Full(shaped));
    }
    Ok(if *limit == Some(0) {
        Step::Done
    } else {
        Step::Next
    })
}

/// The catalog entry of `ns` if it is still the collection `uuid` names, else 175
/// QueryPlanKilled (dropped, or renamed and recreated, while the cursor was open).
fn same_collection(
    reader: &crate::store::Reader<'_>,
    ns: &Namespace,
    uuid: [u8; 16],
) -> Result<crate::store::CollectionMeta, Error> {
    match reader.collection(ns)? {
        Some(meta) if meta.uuid == uuid => Ok(meta),
        _ => {
            let message = format!("collection {ns} was dropped or renamed");
            Err(Error::new(
                ErrorCode::Other(175, "QueryPlanKilled"),
                message,
            ))
        }
    }
}

impl IndexScan {
    /// Walks on from the last position into `batch`; returns the shaped document that did
    /// not fit, or `None` when the walk is exhausted.
    fn fill(
        &mut self,
        engine: &Engine,
        ns: &Namespace,
        shape: Shape<'_>,
        batch: &mut Batch,
        deadline: &Deadline<'_>,
    ) -> Result<Option<RawDocumentBuf>, Error> {
        if self.limit == Some(0) {
            return Ok(None);
        }
        let store = engine.store();
        let reader = store.read()?;
        let meta = same_collection(&reader, ns, self.uuid)?;
        loop {
            if let WalkTarget::Index(name) = &self.access.target
                && meta.index(name).is_none()
            {
                let message = format!("index '{name}' dropped");
                return Err(Error::new(
                    ErrorCode::Other(175, "QueryPlanKilled"),
                    message,
                ));
            }
            let mut pending = None;
            let mut stopped = false;
            let (seen, skip, limit) = (&mut self.seen, &mut self.skip, &mut self.limit);
            reader.walk(
                &meta,
                &self.access.target,
                &self.access.ranges,
                self.access.reverse,
                &mut self.position,
                |rid, bytes| -> Result<bool, Error> {
                    deadline.tick()?;
                    deadline.key_examined();
                    if !seen.insert(rid) {
                        return Ok(true);
                    }
                    deadline.doc_examined();
                    let step = take(ns, rid, bytes, shape, skip, limit, batch)?;
                    stopped = !matches!(step, Step::Next);
                    if let Step::Full(shaped) = step {
                        pending = Some(shaped);
                    }
                    Ok(!stopped)
                },
            )?;
            // The walk ran out: the next branch of an `$or` (if any) from its start.
            if stopped {
                return Ok(pending);
            }
            let Some(next) = self.rest.pop_front() else {
                return Ok(pending);
            };
            self.access = next;
            self.position = WalkPosition::default();
        }
    }
}

/// The error for a stored record that is not BSON.
pub(crate) fn corrupt_record(ns: &Namespace, rid: u64) -> Error {
    let message = format!("{ns}: record {rid} is not a BSON document");
    Error::new(ErrorCode::DataCorruptionDetected, message)
}

/// One batch being filled.
struct Batch {
    docs: Vec<RawDocumentBuf>,
    bytes: usize,
    count_max: Option<usize>,
}

impl Batch {
    fn new(count_max: Option<usize>) -> Batch {
        Batch {
            docs: Vec::new(),
            bytes: 0,
            count_max,
        }
    }

    /// Adds `doc`, or gives it back when the batch is full: it holds `count_max` documents,
    /// or `doc` would take it past `BATCH_BYTES_MAX` (an empty batch takes any document).
    fn offer(&mut self, doc: RawDocumentBuf) -> Result<(), RawDocumentBuf> {
        let len = doc.as_bytes().len();
        let full_count = self.count_max.is_some_and(|max| self.docs.len() >= max);
        let full_bytes = !self.docs.is_empty() && self.bytes + len > BATCH_BYTES_MAX;
        if full_count || full_bytes {
            return Err(doc);
        }
        self.bytes += len;
        self.docs.push(doc);
        Ok(())
    }
}

/// A `maxTimeMS` budget being spent, checked every `DEADLINE_CHECK_INTERVAL` documents. It
/// also counts the index keys and documents the loop it guards examines, and adds them to
/// the running operation when it drops (profile documents' `keysExamined`/`docsExamined`):
/// counted in cells, so a loop pays no atomic per record.
pub(crate) struct Deadline<'h> {
    host: &'h dyn Host,
    started_ms: i64,
    budget_ms: Option<i64>,
    ticks: Cell<usize>,
    keys_examined: Cell<u64>,
    docs_examined: Cell<u64>,
    /// The operation the counts go to (this thread's when started).
    operation: Option<std::sync::Arc<crate::operations::Running>>,
}

impl Drop for Deadline<'_> {
    fn drop(&mut self) {
        if let Some(operation) = &self.operation {
            operation.add_examined(self.keys_examined.get(), self.docs_examined.get());
        }
    }
}

impl<'h> Deadline<'h> {
    /// Starts spending `budget_ms` (`None`: no limit).
    pub(crate) fn start(host: &'h dyn Host, budget_ms: Option<i64>) -> Deadline<'h> {
        Deadline {
            host,
            started_ms: host.now_millis(),
            budget_ms,
            ticks: Cell::new(0),
            keys_examined: Cell::new(0),
            docs_examined: Cell::new(0),
            operation: crate::operations::current(),
        }
    }

    /// The same budget, counted separately: for another thread of the same command (its
    /// counts go to the same operation).
    pub(crate) fn fork(&self) -> Deadline<'h> {
        Deadline {
            host: self.host,
            started_ms: self.started_ms,
            budget_ms: self.budget_ms,
            ticks: Cell::new(0),
            keys_examined: Cell::new(0),
            docs_examined: Cell::new(0),
            operation: self.operation.clone(),
        }
    }

    /// Counts one index key examined.
    pub(crate) fn key_examined(&self) {
        self.keys_examined.set(self.keys_examined.get() + 1);
    }

    /// Counts one document examined (read from the records).
    pub(crate) fn doc_examined(&self) {
        self.docs_examined.set(self.docs_examined.get() + 1);
    }

    /// The index keys counted so far.
    pub(crate) fn keys(&self) -> u64 {
        self.keys_examined.get()
    }

    /// The documents counted so far.
    pub(crate) fn docs(&self) -> u64 {
        self.docs_examined.get()
    }

    /// Counts one unit of work; every `DEADLINE_CHECK_INTERVAL`-th (the first included)
    /// fails with MaxTimeMSExpired (50) once the budget is spent, or with the running
    /// operation's interruption (11601 after killOp).
    pub(crate) fn tick(&self) -> Result<(), Error> {
        let ticks = self.ticks.get();
        self.ticks.set(ticks.wrapping_add(1));
        if !ticks.is_multiple_of(DEADLINE_CHECK_INTERVAL) {
            return Ok(());
        }
        // killOp (and the command's own maxTimeMS) stop the read loops here.
        crate::operations::check_current()?;
        let Some(budget) = self.budget_ms else {
            return Ok(());
        };
        if self.host.now_millis().saturating_sub(self.started_ms) >= budget {
            let code = ErrorCode::Other(50, "MaxTimeMSExpired");
            return Err(Error::new(code, "operation exceeded time limit"));
        }
        Ok(())
    }

    /// What is left of the budget now (`None`: no limit).
    pub(crate) fn remaining(&self) -> Option<i64> {
        let elapsed = self.host.now_millis().saturating_sub(self.started_ms);
        self.budget_ms
            .map(|budget| budget.saturating_sub(elapsed.max(0)).max(0))
    }
}

/// How the first batch of a new cursor is cut.
#[derive(Debug, Clone, Copy, Default)]
pub(crate) struct FirstBatch {
    /// Documents in the first batch (`None`: as many as fit).
    pub(crate) size: Option<u64>,
    /// Close the cursor after the first batch.
    pub(crate) single: bool,
}

/// Answers the first batch of `cursor` and keeps it open (registered) if anything is left.
pub(crate) fn open(
    engine: &Engine,
    request: &Request<'_>,
    mut cursor: Cursor,
    first: FirstBatch,
) -> Result<Reply, Error> {
    if engine.auth.enabled() {
        cursor.owner = request.ctx.auth.user();
    }
    let (docs, exhausted) = match first.size {
        // batchSize 0 asks for an empty first batch and does no work yet.
        Some(0) => (
            Vec::new(),
            matches!(&cursor.source, Source::Buffered(q) if q.is_empty()),
        ),
        size => cursor.next_batch(engine, size.map(to_usize))?,
    };
    let ns = cursor.ns.clone();
    let id = if exhausted || first.single {
        0
    } else {
        engine.cursors.register(cursor, engine.host.now_millis())
    };
    Ok(reply(&ns, id, &docs, cstr!("firstBatch")))
}

/// `{cursor: {<batch_field>: [...], id, ns}}`, encoded directly: one buffer of the exact
/// size (with room for the `ok` the dispatcher appends), each document copied into it once
/// as the bytes it already is.
pub(crate) fn reply(ns: &Namespace, id: i64, docs: &[RawDocumentBuf], batch_field: &CStr) -> Reply {
    let ns = ns.full();
    let mut index = ArrayKeys::default();
    let array_len = 4
        + 1
        + docs
            .iter()
            .enumerate()
            .map(|(i, doc)| 1 + index.name(i).len() + 1 + doc.as_bytes().len())
            .sum::<usize>();
    let batch_field = batch_field.as_str();
    let cursor_len = 4
        + (1 + batch_field.len() + 1 + array_len)
        + (1 + 2 + 1 + 8)
        + (1 + 2 + 1 + 4 + ns.len() + 1)
        + 1;
    let reply_len = 4 + (1 + 6 + 1 + cursor_len) + 1;
    // The dispatcher's `ok: 1.0`: type, "ok\0", a double.
    let mut out = wire::buffers::take(reply_len + 1 + 3 + 8);
    put_len(&mut out, reply_len);
    put_head(&mut out, 0x03, "cursor");
    put_len(&mut out, cursor_len);
    put_head(&mut out, 0x04, batch_field);
    put_len(&mut out, array_len);
    for (i, doc) in docs.iter().enumerate() {
        put_head(&mut out, 0x03, index.name(i));
        out.extend_from_slice(doc.as_bytes());
    }
    out.push(0);
    put_head(&mut out, 0x12, "id");
    out.extend_from_slice(&id.to_le_bytes());
    put_head(&mut out, 0x02, "ns");
    put_len(&mut out, ns.len() + 1);
    out.extend_from_slice(ns.as_bytes());
    out.push(0);
    out.push(0);
    out.push(0);
    assert_eq!(out.len(), reply_len, "cursor reply length");
    let reply = RawDocumentBuf::from_bytes(out).expect("a cursor reply is one BSON document");
    Reply::Raw(reply)
}

/// An element's type byte and its key (a name without zero bytes).
fn put_head(out: &mut Vec<u8>, kind: u8, key: &str) {
    out.push(kind);
    out.extend_from_slice(key.as_bytes());
    out.push(0);
}

/// A BSON length (documents, arrays, strings), little-endian.
fn put_len(out: &mut Vec<u8>, len: usize) {
    let len = i32::try_from(len).expect("a reply is smaller than 2 GiB");
    out.extend_from_slice(&len.to_le_bytes());
}

/// An array's field names (`"0"`, `"1"`, ...), written without the formatting machinery
/// (a batch of 1,000 documents names each twice: its length, then its bytes).
#[derive(Default)]
struct ArrayKeys {
    digits: [u8; 20],
}

impl ArrayKeys {
    fn name(&mut self, i: usize) -> &str {
        let mut n = i;
        let mut at = self.digits.len();
        loop {
            at -= 1;
            self.digits[at] = b'0' + (n % 10) as u8;
            n /= 10;
            if n == 0 {
                break;
            }
        }
        std::str::from_utf8(&self.digits[at..]).expect("ASCII digits")
    }
}

/// `getMore`: the next batch of an open cursor.
pub(crate) fn get_more(engine: &Engine, request: &Request<'_>) -> Result<Reply, Error> {
    args::check_fields(
        request,
        &[
            "collection",
            "batchSize",
            "term",
            "lastKnownCommittedOpTime",
        ],
    )?;
    let id = match read_args::field(request, "getMore")? {
        Some(RawBsonRef::Int64(id)) => id,
        Some(other) => {
            return Err(Error::new(
                ErrorCode::TypeMismatch,
                format!(
                    "BSON field 'getMore.getMore' is the wrong type '{}', expected type 'long'",
                    args::bson_type_name(other)
                ),
            ));
        }
        None => unreachable!("the command name is the first field"),
    };
    let ns = read_args::cursor_namespace(request, "collection")?;
    let batch_size = read_args::non_negative(request, "batchSize")?.filter(|&n| n > 0);
    let Some(mut cursor) = engine.cursors.checkout(id, engine.host.now_millis()) else {
        let message = format!("cursor id {id} not found");
        return Err(Error::new(ErrorCode::CursorNotFound, message));
    };
    if cursor.ns != ns {
        let message = format!(
            "Requested getMore on namespace '{ns}', but cursor belongs to a different \
             namespace {}",
            cursor.ns
        );
        engine.cursors.checkin(id, cursor, engine.host.now_millis());
        return Err(Error::new(ErrorCode::Unauthorized, message));
    }
    if !owned_by_caller(engine, request, cursor.owner.as_ref()) {
        // Refused without harm: the owner's next getMore goes on.
        engine.cursors.checkin(id, cursor, engine.host.now_millis());
        let message = format!("cursor id {id} was not created by the authenticated user");
        return Err(Error::new(ErrorCode::Unauthorized, message));
    }
    let awaits = cursor.tail.is_some_and(|tail| tail.await_data);
    let await_ms = match read_args::max_time_ms(request)? {
        Some(_) if !awaits => {
            engine.cursors.checkin(id, cursor, engine.host.now_millis());
            let message = "cannot set maxTimeMS on getMore command for a non-awaitData cursor";
            return Err(Error::new(ErrorCode::BadValue, message));
        }
        Some(ms) => ms,
        None => AWAIT_DATA_DEFAULT_MS,
    };
    if let Some(summary) = &cursor.plan_summary {
        crate::operations::set_current_plan_summary(summary.clone());
    }
    let batch = if awaits {
        next_batch_awaiting(engine, &mut cursor, batch_size.map(to_usize), await_ms)
    } else {
        cursor.next_batch(engine, batch_size.map(to_usize))
    };
    let (docs, exhausted) = match batch {
        Ok(batch) => batch,
        Err(error) => {
            // A failed getMore kills the cursor, as in mongod.
            engine.cursors.release(id);
            return Err(error);
        }
    };
    let id = if exhausted {
        engine.cursors.release(id);
        0
    } else {
        engine.cursors.checkin(id, cursor, engine.host.now_millis());
        id
    };
    Ok(reply(&ns, id, &docs, cstr!("nextBatch")))
}

/// An `awaitData` cursor's next batch: when there is nothing new, waits for commits (up
/// to `await_ms` in all) until one brings something, then answers what there is.
fn next_batch_awaiting(
    engine: &Engine,
    cursor: &mut Cursor,
    count_max: Option<usize>,
    await_ms: i64,
) -> Result<(Vec<RawDocumentBuf>, bool), Error> {
    // Real time, not the host's clock: the wait is on a condition variable.
    let now = std::time::Instant::now();
    let until = now
        .checked_add(std::time::Duration::from_millis(
            u64::try_from(await_ms).unwrap_or(0),
        ))
        .unwrap_or(now);
    loop {
        // Counted before the read: a commit after it is one this read may have missed.
        let seen = engine.store().commit_count();
        let (docs, finished) = cursor.next_batch(engine, count_max)?;
        let wait = until.saturating_duration_since(std::time::Instant::now());
        if !docs.is_empty() || finished || wait.is_zero() {
            return Ok((docs, finished));
        }
        crate::operations::check_current()?;
        engine.store().wait_for_commit(seen, wait);
    }
}

/// Whether the request's user may use a cursor opened by `owner`: always with
/// authentication off; with it on, only the same user (on any connection).
fn owned_by_caller(
    engine: &Engine,
    request: &Request<'_>,
    owner: Option<&(String, String)>,
) -> bool {
    !engine.auth.enabled() || owner == request.ctx.auth.user().as_ref()
}

/// `killCursors`: closes the listed cursors of one collection.
pub(crate) fn kill_cursors(engine: &Engine, request: &Request<'_>) -> Result<Document, Error> {
    args::check_fields(request, &["cursors"])?;
    let ns = read_args::cursor_namespace(request, "killCursors")?;
    let list = read_args::required_array(request, "cursors")?;
    let mut ids = Vec::new();
    for (index, element) in list.into_iter().enumerate() {
        let element = element.map_err(|e| Error::new(ErrorCode::InvalidBson, e.to_string()))?;
        let RawBsonRef::Int64(id) = element else {
            return Err(Error::new(
                ErrorCode::TypeMismatch,
                format!(
                    "BSON field 'killCursors.cursors.{index}' is the wrong type '{}', expected \
                     type 'long'",
                    args::bson_type_name(element)
                ),
            ));
        };
        ids.push(id);
    }
    for &id in &ids {
        if let Some(owner) = engine.cursors.owner(id)
            && !owned_by_caller(engine, request, owner.as_ref())
        {
            let message = format!("not authorized to kill cursor on {ns} with id {id}");
            return Err(Error::new(ErrorCode::Unauthorized, message));
        }
    }
    let now = engine.host.now_millis();
    let (killed, not_found): (Vec<i64>, Vec<i64>) = ids
        .into_iter()
        .partition(|&id| engine.cursors.kill(id, &ns, now));
    Ok(doc! {
        "cursorsKilled": killed,
        "cursorsNotFound": not_found,
        "cursorsAlive": [],
        "cursorsUnknown": [],
    })
}
