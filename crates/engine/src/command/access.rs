//! Candidate documents for the read commands (find, count, distinct, aggregate's input):
//! the planner's access path ([`crate::plan::Access`]) run over one snapshot, every
//! document checked against the whole filter before it is handed on.
//!
//! Invariants:
//! - Nothing reaches a caller unchecked: an index walk, the `_id_` lookup and the scan all
//!   end in [`if_matches_cut`].
//! - An index walk hands each record on at most once (a multikey index names a record
//!   once per key, and the walks of an `$or`'s branches may meet a record in several;
//!   the stream remembers the ids it has handed on).

use super::cursor::{Deadline, corrupt_record};
use crate::error::Error;
use crate::plan::{self, Access, IndexAccess};
use crate::store::{CollectionMeta, Namespace, Reader, WalkPosition};
use bson::{RawDocument, RawDocumentBuf};
use query::Filter;
use std::cell::RefCell;
use std::collections::{BTreeSet, HashSet, VecDeque};

/// The plan of `query` over `meta` in `reader`'s snapshot, through the engine's plan cache:
/// what every read command plans with.
pub(crate) fn plan<'f>(
    engine: &crate::engine::Engine,
    reader: &Reader<'_>,
    meta: &CollectionMeta,
    ns: &Namespace,
    query: &plan::Query<'f, '_>,
) -> Result<plan::Planned<'f>, Error> {
    let mut walker = reader;
    let mut planning = plan::Planning {
        meta,
        ns,
        walker: &mut walker,
        cache: Some(&engine.plans),
        now_ms: engine.host.now_millis(),
    };
    plan::choose(&mut planning, query)
}

/// Documents an index walk buffers before handing them on.
const WALK_CHUNK: usize = 64;

/// Whether stored record `rid` of `ns` matches `filter` (every record does when `None`),
/// read from its bytes only as far as the fields the filter names (no copy, and the
/// document's last bytes are not touched when the filter does not need them).
pub(crate) fn matches(
    ns: &Namespace,
    filter: Option<&Filter>,
    rid: u64,
    bytes: &[u8],
) -> Result<bool, Error> {
    if !query::is_framed(bytes) {
        return Err(corrupt_record(ns, rid));
    }
    match filter {
        Some(filter) => Ok(filter.try_matches_bytes(bytes)?),
        None => Ok(true),
    }
}

/// Stored record `rid` of `ns`, copied out when it matches `filter` (every record when
/// `None`): the check every candidate an index proposes goes through.
pub(crate) fn if_matches(
    ns: &Namespace,
    filter: Option<&Filter>,
    rid: u64,
    bytes: &[u8],
) -> Result<Option<RawDocumentBuf>, Error> {
    if_matches_cut(ns, filter, rid, bytes, None)
}

/// [`if_matches`], copying out only the top-level `fields` when given (in document order;
/// the filter still sees the whole document).
fn if_matches_cut(
    ns: &Namespace,
    filter: Option<&Filter>,
    rid: u64,
    bytes: &[u8],
    fields: Option<&BTreeSet<String>>,
) -> Result<Option<RawDocumentBuf>, Error> {
    if !matches(ns, filter, rid, bytes)? {
        return Ok(None);
    }
    let doc = RawDocument::from_bytes(bytes).map_err(|_| corrupt_record(ns, rid))?;
    let Some(fields) = fields else {
        return Ok(Some(doc.to_owned()));
    };
    let mut cut = RawDocumentBuf::new();
    for element in doc.iter_elements() {
        let element = element.map_err(|_| corrupt_record(ns, rid))?;
        if fields.contains(element.key().as_str()) {
            let value = element.value().map_err(|_| corrupt_record(ns, rid))?;
            cut.append(element.key(), value);
        }
    }
    Ok(Some(cut))
}

/// Returns the error a candidate stream left behind, if any.
pub(crate) fn fail_on(failure: &RefCell<Option<Error>>) -> Result<(), Error> {
    match failure.borrow_mut().take() {
        Some(error) => Err(error),
        None => Ok(()),
    }
}

/// What a candidate stream reads and how it checks and cuts what it reads.
pub(crate) struct Reading<'r> {
    pub(crate) reader: &'r Reader<'r>,
    pub(crate) meta: &'r CollectionMeta,
    pub(crate) ns: &'r Namespace,
    pub(crate) filter: Option<&'r Filter>,
    pub(crate) deadline: &'r Deadline<'r>,
    /// Where a failure (storage, deadline, filter evaluation) is left; it ends the stream.
    pub(crate) failure: &'r RefCell<Option<Error>>,
    /// Top-level fields to copy out (`None`: the whole document); for [`each_match`] and
    /// [`each_match_split`], the top-level fields their `visit` reads.
    pub(crate) fields: Option<&'r BTreeSet<String>>,
}

/// The top-level fields a collection scan for `reading` must decode (D53): those its visit
/// reads and those its filter reads; `None` (whole documents) when either may read more.
fn scan_fields(reading: &Reading<'_>) -> Option<BTreeSet<String>> {
    let mut fields = reading.fields?.clone();
    if let Some(filter) = reading.filter {
        fields.extend(filter.top_level_fields()?);
    }
    Some(fields)
}

impl<'r> Reading<'r> {
    fn fail(&self, error: Error) {
        *self.failure.borrow_mut() = Some(error);
    }

    fn keep(&self, rid: u64, bytes: &[u8]) -> Result<Option<RawDocumentBuf>, Error> {
        self.deadline.tick()?;
        self.deadline.doc_examined();
        if_matches_cut(self.ns, self.filter, rid, bytes, self.fields)
    }
}

/// The documents of `reading.meta` that match its filter, read by `access`: in natural
/// order for a scan, in index order for an index walk.
pub(crate) fn candidates<'r>(
    reading: Reading<'r>,
    access: &Access<'r>,
) -> Box<dyn Iterator<Item = RawDocumentBuf> + 'r> {
    match access {
        Access::Id(id) => match reading.reader.find_id(reading.meta, *id) {
            Ok(None) => Box::new(std::iter::empty()),
            Ok(Some((rid, bytes))) => {
                reading.deadline.key_examined();
                match reading.keep(rid, &bytes) {
                    Ok(doc) => Box::new(doc.into_iter()),
                    Err(error) => {
                        reading.fail(error);
                        Box::new(std::iter::empty())
                    }
                }
            }
            Err(error) => {
                reading.fail(error.into());
                Box::new(std::iter::empty())
            }
        },
        Access::Index(_) | Access::Or(_) => Box::new(IndexStream {
            reading,
            walks: access.walks().to_vec(),
            at: 0,
            position: WalkPosition::default(),
            seen: HashSet::new(),
            buffer: VecDeque::new(),
            done: false,
        }),
        Access::Collection => {
            let scan = match reading.reader.scan(reading.meta, None) {
                Ok(scan) => scan,
                Err(error) => {
                    reading.fail(error.into());
                    return Box::new(std::iter::empty());
                }
            };
            let step = move |entry: Result<crate::store::Record<'r>, crate::store::StoreError>| {
                let result = entry
                    .map_err(Error::from)
                    .and_then(|(rid, bytes)| reading.keep(rid, &bytes));
                match result {
                    Ok(doc) => Some(doc),
                    Err(error) => {
                        reading.fail(error);
                        None
                    }
                }
            };
            Box::new(scan.map_while(step).flatten())
        }
    }
}

/// Hands the stored bytes of each document of `reading.meta` that matches its filter to
/// `visit`, in the order [`candidates`] yields them, until `visit` answers `false`: the
/// same access path without a copy or an allocation per document (count, `$group`).
/// `reading.fields` names what `visit` reads: a collection scan of compressed records
/// decodes only the leading part of each document that holds those and the filter's.
pub(crate) fn each_match(
    reading: &Reading<'_>,
    access: &Access<'_>,
    mut visit: impl FnMut(u64, &[u8]) -> Result<bool, Error>,
) -> Result<(), Error> {
    let mut check = |rid: u64, bytes: &[u8]| -> Result<bool, Error> {
        reading.deadline.tick()?;
        reading.deadline.doc_examined();
        if !matches(reading.ns, reading.filter, rid, bytes)? {
            return Ok(true);
        }
        visit(rid, bytes)
    };
    match access {
        Access::Id(id) => {
            if let Some((rid, bytes)) = reading.reader.find_id(reading.meta, *id)? {
                reading.deadline.key_examined();
                check(rid, &bytes)?;
            }
            Ok(())
        }
        Access::Index(_) | Access::Or(_) => {
            let mut seen = HashSet::new();
            let dedup = access.walks().len() > 1;
            for index in access.walks() {
                let mut more = true;
                reading.reader.walk(
                    reading.meta,
                    &index.target,
                    &index.ranges,
                    index.reverse,
                    &mut WalkPosition::default(),
                    |rid, bytes| -> Result<bool, Error> {
                        reading.deadline.key_examined();
                        if (dedup || index.multikey) && !seen.insert(rid) {
                            return Ok(true);
                        }
                        more = check(rid, bytes)?;
                        Ok(more)
                    },
                )?;
                if !more {
                    break;
                }
            }
            Ok(())
        }
        Access::Collection => {
            let fields = scan_fields(reading);
            for entry in reading
                .reader
                .scan_leading(reading.meta, None, None, fields.as_ref())?
            {
                let (rid, bytes) = entry?;
                if !check(rid, &bytes)? {
                    break;
                }
            }
            Ok(())
        }
    }
}

/// Collections with fewer documents are scanned on one thread: starting another costs tens
/// of microseconds, which a scan this small does not win back.
const SPLIT_DOCS_MIN: u64 = 16_384;

/// At most this many threads scan one collection.
const SPLIT_PARTS_MAX: usize = 4;

/// A part of a collection scan: the records with ids after the first bound (from the start
/// when `None`) up to the second (to the end when `None`).
pub(crate) type ScanPart = (Option<u64>, Option<u64>);

/// The record-id ranges a scan of `reading.meta` by `access` splits into, one per core
/// (`cores`, the host's), in id order; one part when it is not split: not a collection
/// scan, fewer than `SPLIT_DOCS_MIN` documents, or one core.
pub(crate) fn scan_parts(reading: &Reading<'_>, access: &Access<'_>, cores: u32) -> Vec<ScanPart> {
    let parts = usize::try_from(cores)
        .unwrap_or(1)
        .clamp(1, SPLIT_PARTS_MAX);
    let collection = matches!(access, Access::Collection);
    if parts < 2 || !collection || reading.meta.count < SPLIT_DOCS_MIN {
        return vec![(None, None)];
    }
    // Record ids are below `next_rid` and mostly dense (ids only grow), so equal id ranges
    // hold about equal numbers of documents.
    let step = reading.meta.next_rid / parts as u64;
    (0..parts as u64)
        .map(|i| {
            let after = (i > 0).then_some(step * i);
            let through = (i + 1 < parts as u64).then_some(step * (i + 1));
            (after, through)
        })
        .collect()
}

/// What each part of a split scan calls with its state and each match (record id,
/// stored bytes); `false` ends the part.
pub(crate) type PartVisit<S> = dyn Fn(&mut S, u64, &[u8]) -> Result<bool, Error> + Sync;

/// [`each_match`] of a collection scan split into `parts` (from [`scan_parts`]): the first
/// part on this thread, each other on a scoped thread of its own, all over the one snapshot
/// of `reading.reader`; part `i` visits with `states[i]`. Returns the states in part order,
/// which is the scan's order, for the caller to merge. A visit answering `false` ends only
/// its part; a failure in any part fails the whole, and a panic is resumed here.
pub(crate) fn each_match_split<S: Send>(
    reading: &Reading<'_>,
    parts: &[ScanPart],
    states: Vec<S>,
    visit: &PartVisit<S>,
) -> Result<Vec<S>, Error> {
    assert_eq!(parts.len(), states.len(), "one state per part");
    let (reader, meta, ns, filter) = (reading.reader, reading.meta, reading.ns, reading.filter);
    let fields = scan_fields(reading);
    let fields = fields.as_ref();
    let scan = |(after, through): ScanPart, deadline: Deadline<'_>, mut state: S| {
        for entry in reader.scan_leading(meta, after, through, fields)? {
            let (rid, bytes) = entry?;
            deadline.tick()?;
            deadline.doc_examined();
            if matches(ns, filter, rid, &bytes)? && !visit(&mut state, rid, &bytes)? {
                break;
            }
        }
        Ok::<S, Error>(state)
    };
    std::thread::scope(|scope| {
        let mut states = states.into_iter();
        let first = states.next().expect("at least one part");
        let others: Vec<_> = parts
            .iter()
            .skip(1)
            .zip(states)
            .map(|(&part, state)| {
                let deadline = reading.deadline.fork();
                let scan = &scan;
                scope.spawn(move || scan(part, deadline, state))
            })
            .collect();
        let mut out = vec![scan(parts[0], reading.deadline.fork(), first)];
        for handle in others {
            match handle.join() {
                Ok(result) => out.push(result),
                Err(panic) => std::panic::resume_unwind(panic),
            }
        }
        out.into_iter().collect()
    })
}

/// Index walks (one, or one per `$or` branch, in turn) read a chunk at a time, in index
/// order, each record once.
struct IndexStream<'r> {
    reading: Reading<'r>,
    walks: Vec<IndexAccess>,
    /// The walk being read.
    at: usize,
    position: WalkPosition,
    seen: HashSet<u64>,
    buffer: VecDeque<RawDocumentBuf>,
    done: bool,
}

impl IndexStream<'_> {
    fn refill(&mut self) -> Result<(), Error> {
        let mut found = false;
        let reading = &self.reading;
        let Some(access) = self.walks.get(self.at) else {
            self.done = true;
            return Ok(());
        };
        let dedup = access.multikey || self.walks.len() > 1;
        let (seen, buffer) = (&mut self.seen, &mut self.buffer);
        reading.reader.walk(
            reading.meta,
            &access.target,
            &access.ranges,
            access.reverse,
            &mut self.position,
            |rid, bytes| -> Result<bool, Error> {
                found = true;
                reading.deadline.key_examined();
                if dedup && !seen.insert(rid) {
                    return Ok(true);
                }
                buffer.extend(reading.keep(rid, bytes)?);
                Ok(buffer.len() < WALK_CHUNK)
            },
        )?;
        // A walk that stopped early names its last entry; one that ran out did not stop:
        // the next walk (if any) starts from its beginning.
        if self.buffer.len() < WALK_CHUNK || !found {
            self.at += 1;
            self.position = WalkPosition::default();
            self.done = self.at >= self.walks.len();
        }
        Ok(())
    }
}

impl Iterator for IndexStream<'_> {
    type Item = RawDocumentBuf;

    fn next(&mut self) -> Option<RawDocumentBuf> {
        while self.buffer.is_empty() && !self.done {
            if let Err(error) = self.refill() {
                self.reading.fail(error);
                self.done = true;
            }
        }
        self.buffer.pop_front()
    }
}
