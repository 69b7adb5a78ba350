//! Secondary indexes in the store: the entries of one record's write (planned, checked,
//! then applied), index builds from a collection's records, the agreement check behind
//! `validate`, and the scan the planner will use.
//!
//! Layout: one B+tree per index whose keys are `index key ++ record id` (8 bytes,
//! big-endian) with empty values, for unique and non-unique indexes alike. Index keys are
//! prefix-free (`bson_canonical::key`), so the entries of one key are exactly the tree
//! keys that start with it, ordered by record id, and a uniqueness check is one seek.
//!
//! Invariants:
//! - An index holds exactly the keys its documents generate (`index::keys::index_keys`,
//!   deduplicated per document), each once per record that generates it.
//! - A unique index never holds one key for two records: `plan` refuses the write before
//!   anything changes (D25: a failed statement leaves nothing), and `build` refuses the
//!   whole index.
//! - Entries are derived from documents, never logged: applying the log's inserts,
//!   updates and deletes (live or at replay) regenerates them, and an index build applied
//!   at replay reads the same records the live build read.
//! - A build's entries do not depend on how its scan was split: a split scan reads one
//!   snapshot whose records are the building transaction's (checked by the caller), each
//!   record id in exactly one part; each part sorts its own run and the build merges the
//!   runs (`runs`), which gives the one sorted order whatever the split (D47).
//! - A build's observer only hears progress; it never changes what is built.

use super::catalog::{CollectionMeta, IndexMeta, Namespace, rid_key, rid_of};
use super::runs::{self, Run};
use super::{DuplicateKey, StoreError};
use crate::index::display;
use crate::index::keys::{self, Keys};
use crate::index::spec::IndexSpec;
use bson::{Document, RawDocument};
use btree::{PageRead, Tree};
use pager::{ReadTxn, WriteTxn};
use std::collections::BTreeSet;
use std::ops::Bound;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use wal::crashpoint;

/// Bytes of the record id at the end of every entry.
const RID_BYTES: usize = 8;

/// The tree key of `key` for record `rid`.
pub fn entry_key(key: &[u8], rid: u64) -> Vec<u8> {
    let mut out = Vec::with_capacity(key.len() + RID_BYTES);
    out.extend_from_slice(key);
    out.extend_from_slice(&rid_key(rid));
    out
}

/// Splits a tree key into the index key and the record id.
pub fn split_entry(entry: &[u8]) -> Result<(&[u8], u64), StoreError> {
    let at = entry
        .len()
        .checked_sub(RID_BYTES)
        .ok_or_else(|| StoreError::Corrupt("index entry shorter than a record id".into()))?;
    let (key, rid) = entry.split_at(at);
    Ok((key, rid_of(rid)?))
}

/// The keys `doc` gives `spec`; a document the index cannot hold is `Rejected`.
pub fn keys_of(spec: &IndexSpec, doc: &RawDocument) -> Result<Keys, StoreError> {
    keys::index_keys(spec, doc).map_err(StoreError::Rejected)
}

/// The record other than `rid` holding `key` in `tree`, if any.
fn holder<T: PageRead>(
    txn: &T,
    tree: Tree,
    key: &[u8],
    rid: u64,
) -> Result<Option<u64>, StoreError> {
    let lower = entry_key(key, 0);
    for entry in tree.range(txn, Bound::Included(&lower[..]), Bound::Unbounded)? {
        let (entry, _) = entry?;
        let (found, other) = split_entry(&entry)?;
        if found != key {
            return Ok(None);
        }
        if other != rid {
            return Ok(Some(other));
        }
    }
    Ok(None)
}

/// MongoDB's duplicate key error for `key` of `index`, which `doc` generates.
pub fn duplicate(ns: &Namespace, spec: &IndexSpec, doc: &RawDocument, key: &[u8]) -> StoreError {
    let values = keys::key_values(spec, doc, key).unwrap_or_default();
    let mut value = Document::new();
    for (i, field) in spec.fields.iter().enumerate() {
        value.insert(
            field.path.clone(),
            values.get(i).cloned().unwrap_or(bson::Bson::Null),
        );
    }
    StoreError::DuplicateKey(Box::new(DuplicateKey {
        ns: ns.clone(),
        index: spec.name.clone(),
        shown: display::document(&value),
        pattern: spec.key_pattern.clone(),
        value,
    }))
}

/// What one record's write changes in one index.
pub struct Change {
    /// Position of the index in `CollectionMeta::indexes`.
    index: usize,
    removed: Vec<Vec<u8>>,
    added: Vec<Vec<u8>>,
    /// The new document's multikey paths (merged into the index's).
    multikey_paths: Vec<BTreeSet<usize>>,
    /// The new document's wildcard multikey paths (merged into the index's).
    wildcard_multikey: BTreeSet<String>,
}

/// The index changes of replacing `old` by `new` in record `rid` (either may be absent:
/// an insert or a delete), checked against every unique index. Changes nothing.
pub fn plan<T: PageRead>(
    txn: &T,
    ns: &Namespace,
    meta: &CollectionMeta,
    rid: u64,
    old: Option<&RawDocument>,
    new: Option<&RawDocument>,
) -> Result<Vec<Change>, StoreError> {
    let mut changes = Vec::with_capacity(meta.indexes.len());
    for (position, index) in meta.indexes.iter().enumerate() {
        let spec = &index.spec;
        let old_keys = match old {
            Some(doc) => keys_of(spec, doc)?.keys,
            None => Vec::new(),
        };
        let (new_keys, multikey_paths, wildcard_multikey, multikey) = match new {
            Some(doc) => {
                let keys = keys_of(spec, doc)?;
                let multikey = keys.is_multikey() && !index.records_multikey(&keys);
                (
                    keys.keys,
                    keys.multikey_paths,
                    keys.wildcard_multikey,
                    multikey,
                )
            }
            None => (Vec::new(), Vec::new(), BTreeSet::new(), false),
        };
        // Both lists are sorted and deduplicated.
        let removed: Vec<Vec<u8>> = old_keys
            .iter()
            .filter(|k| new_keys.binary_search(k).is_err())
            .cloned()
            .collect();
        let added: Vec<Vec<u8>> = new_keys
            .into_iter()
            .filter(|k| old_keys.binary_search(k).is_err())
            .collect();
        if (spec.unique || spec.prepare_unique)
            && let Some(doc) = new
        {
            for key in &added {
                if holder(txn, index.tree, key, rid)?.is_some() {
                    return Err(duplicate(ns, spec, doc, key));
                }
            }
        }
        if !removed.is_empty() || !added.is_empty() || multikey {
            changes.push(Change {
                index: position,
                removed,
                added,
                multikey_paths,
                wildcard_multikey,
            });
        }
    }
    Ok(changes)
}

/// Applies planned changes to the trees and the entry.
pub fn apply(
    txn: &mut WriteTxn<'_>,
    meta: &mut CollectionMeta,
    rid: u64,
    changes: Vec<Change>,
) -> Result<(), StoreError> {
    for change in changes {
        let index = meta
            .indexes
            .get_mut(change.index)
            .expect("a change names an index of the same entry");
        for key in &change.removed {
            let entry = entry_key(key, rid);
            if !index.tree.remove(txn, &entry)? {
                return Err(StoreError::Corrupt(format!(
                    "index {} lacks an entry of record {rid}",
                    index.name()
                )));
            }
            index.entries -= 1;
            index.key_bytes -= entry.len() as u64;
        }
        for key in &change.added {
            let entry = entry_key(key, rid);
            index.tree.insert(txn, &entry, &[])?;
            index.entries += 1;
            index.key_bytes += entry.len() as u64;
        }
        merge_multikey(index, &change.multikey_paths, change.wildcard_multikey);
    }
    Ok(())
}

fn merge_multikey(index: &mut IndexMeta, paths: &[BTreeSet<usize>], wildcard: BTreeSet<String>) {
    for (mine, theirs) in index.multikey_paths.iter_mut().zip(paths) {
        if !theirs.is_empty() {
            index.multikey = true;
            mine.extend(theirs.iter().copied());
        }
    }
    if !wildcard.is_empty() {
        index.multikey = true;
        index.wildcard_multikey.extend(wildcard);
    }
}

/// The phases of an index build, as `currentOp` names them.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum BuildPhase {
    /// Reading the collection's records and generating their keys (done/total: records).
    Scanning,
    /// Sorting the keys and loading them into the new tree (done/total: keys).
    Loading,
}

impl BuildPhase {
    /// mongod's `currentOp` message for the phase.
    pub fn message(self) -> &'static str {
        match self {
            BuildPhase::Scanning => "Index Build: scanning collection",
            BuildPhase::Loading => "Index Build: inserting keys from external sorter into index",
        }
    }
}

/// Told how a build advances (the running command's `currentOp` entry). Called on the
/// building thread with the write gate held: it must be quick and must not write.
pub trait BuildObserver: Send + Sync {
    /// `done` of `total` units of `phase` are complete. An `Err` stops the build with it
    /// (killOp, maxTimeMS), leaving nothing.
    fn progress(&self, phase: BuildPhase, done: u64, total: u64) -> Result<(), StoreError>;
}

/// Records scanned between two progress reports.
const PROGRESS_EVERY: u64 = 256;

/// By default, collections smaller than this are scanned by one thread.
pub const PARALLEL_SCAN_RECORDS_MIN: u64 = 4096;

/// Threads that scan one build's records at most by default.
pub const SCAN_THREADS_MAX: usize = 4;

/// How a build may split its scan.
#[derive(Debug, Clone, Copy)]
pub struct ParallelScan {
    /// Threads to scan with (1: the building thread alone).
    pub threads: usize,
    /// Collections with fewer records are scanned by one thread.
    pub records_min: u64,
}

/// The entries one part of a build's scan generated, and the multikey paths it saw.
struct Scanned {
    entries: Run,
    paths: Vec<BTreeSet<usize>>,
    /// The wildcard index paths at which an array was expanded.
    wildcard_paths: BTreeSet<String>,
}

/// Generates the entries of `spec` for the records of `meta` with record ids in
/// `[lower, upper)` (`None`: unbounded), reporting each [`PROGRESS_EVERY`] records to
/// `scanned` (shared by the parts of one build) and `report`.
fn scan_part<T: PageRead>(
    txn: &T,
    meta: &CollectionMeta,
    spec: &IndexSpec,
    (lower, upper): (Option<u64>, Option<u64>),
    scanned: &AtomicU64,
    report: &(dyn Fn(u64) -> Result<(), StoreError> + Sync),
) -> Result<Scanned, StoreError> {
    let lower = lower.map(rid_key);
    let upper = upper.map(rid_key);
    let lower = lower
        .as_ref()
        .map_or(Bound::Unbounded, |k| Bound::Included(&k[..]));
    let upper = upper
        .as_ref()
        .map_or(Bound::Unbounded, |k| Bound::Excluded(&k[..]));
    let mut out = Scanned {
        entries: Run::default(),
        paths: vec![BTreeSet::new(); spec.fields.len()],
        wildcard_paths: BTreeSet::new(),
    };
    let mut since_report = 0;
    // Only the leading part of each document that holds the key fields is decoded (an
    // LZ4 record's padding past them never is, D53).
    let fields = spec.read_fields();
    for record in meta
        .records
        .range_leading(txn, lower, upper, fields.as_ref())?
    {
        since_report += 1;
        if since_report == PROGRESS_EVERY {
            since_report = 0;
            report(scanned.fetch_add(PROGRESS_EVERY, Ordering::Relaxed) + PROGRESS_EVERY)?;
        }
        let (key, bytes) = record?;
        let rid = rid_of(&key)?;
        let not_bson = || StoreError::Corrupt(format!("record {rid} is not BSON"));
        if !query::is_framed(&bytes) {
            return Err(not_bson());
        }
        // The common case appends its one entry in place (`entry_key`'s layout: key ++
        // record id), reading only the document's leading fields; arrays, partial filters,
        // hashed and wildcard fields take the walk over the whole document.
        let start = out.entries.buffer().len();
        match keys::append_simple_key(spec, &bytes, out.entries.buffer()) {
            Some(true) => {
                out.entries.buffer().extend_from_slice(&rid_key(rid));
                out.entries.seal(start);
                continue;
            }
            Some(false) => continue,
            None => {}
        }
        let doc = RawDocument::from_bytes(&bytes).map_err(|_| not_bson())?;
        let keys = keys_of(spec, doc)?;
        for (mine, theirs) in out.paths.iter_mut().zip(&keys.multikey_paths) {
            mine.extend(theirs.iter().copied());
        }
        out.wildcard_paths.extend(keys.wildcard_multikey);
        for key in &keys.keys {
            out.entries.push(&entry_key(key, rid));
        }
    }
    // Sorted here, on the scanning thread: the parts of a split scan sort in parallel and
    // the build merges them.
    out.entries.sort();
    Ok(out)
}

/// Builds `spec` over the records of `meta`: every entry generated, sorted once, checked
/// for duplicates (unique), then bulk-loaded into a new tree. Any refusal comes before the
/// first page is written, so a failed build leaves nothing. `observer`, when given, hears
/// the progress of each phase.
///
/// `base`, when given, is a snapshot holding exactly the records `txn` sees for `meta`
/// (the caller checked that this transaction has not changed them) and a thread count: a
/// large collection's records are then scanned by that many threads through it, split by
/// record id, and their entries merged; the result is the same entries as one scan (the
/// sort orders them).
pub fn build(
    txn: &mut WriteTxn<'_>,
    ns: &Namespace,
    meta: &CollectionMeta,
    spec: Arc<IndexSpec>,
    observer: Option<&dyn BuildObserver>,
    base: Option<(&ReadTxn<'_>, ParallelScan)>,
) -> Result<IndexMeta, StoreError> {
    let mut index = IndexMeta::new(Arc::clone(&spec));
    let report = |phase, done, total| match observer {
        Some(observer) => observer.progress(phase, done, total),
        None => Ok(()),
    };
    let total = meta.count;
    report(BuildPhase::Scanning, 0, total)?;
    let scanned = AtomicU64::new(0);
    let report_scan = |done: u64| report(BuildPhase::Scanning, done.min(total), total);
    let parts = match base {
        Some((
            base,
            ParallelScan {
                threads,
                records_min,
            },
        )) if threads > 1 && total >= records_min => {
            let first = match meta.records.iter(base)?.next() {
                Some(record) => rid_of(&record?.0)?,
                None => 0,
            };
            let span = meta.next_rid.saturating_sub(first).max(1);
            let step = span.div_ceil(threads as u64);
            let bounds: Vec<(Option<u64>, Option<u64>)> = (0..threads as u64)
                .map(|part| {
                    let lower = (part > 0).then(|| first + part * step);
                    let upper = (part + 1 < threads as u64).then(|| first + (part + 1) * step);
                    (lower, upper)
                })
                .collect();
            std::thread::scope(|scope| {
                let handles: Vec<_> = bounds
                    .iter()
                    .map(|&range| {
                        let (spec, scanned, report_scan) = (&*spec, &scanned, &report_scan);
                        scope
                            .spawn(move || scan_part(base, meta, spec, range, scanned, report_scan))
                    })
                    .collect();
                handles
                    .into_iter()
                    .map(|handle| {
                        handle.join().unwrap_or_else(|_| {
                            Err(StoreError::Corrupt("an index build thread panicked".into()))
                        })
                    })
                    .collect::<Result<Vec<Scanned>, StoreError>>()
            })?
        }
        _ => vec![scan_part(
            &*txn,
            meta,
            &spec,
            (None, None),
            &scanned,
            &report_scan,
        )?],
    };
    let mut paths = vec![BTreeSet::new(); spec.fields.len()];
    let mut wildcard_paths = BTreeSet::new();
    let mut runs = Vec::with_capacity(parts.len());
    for part in parts {
        for (mine, theirs) in paths.iter_mut().zip(&part.paths) {
            mine.extend(theirs.iter().copied());
        }
        wildcard_paths.extend(part.wildcard_paths);
        runs.push(part.entries);
    }
    report(BuildPhase::Scanning, total, total)?;
    let keys = runs.iter().map(|r| r.len() as u64).sum::<u64>();
    report(BuildPhase::Loading, 0, keys)?;
    let entries = runs::merged(&runs);
    if spec.unique {
        for pair in entries.windows(2) {
            let (a, _) = split_entry(pair[0])?;
            let (b, rid) = split_entry(pair[1])?;
            if a == b {
                let bytes = meta
                    .records
                    .get(&*txn, &rid_key(rid))?
                    .ok_or_else(|| StoreError::Corrupt(format!("no record {rid}")))?;
                let doc = RawDocument::from_bytes(&bytes)
                    .map_err(|_| StoreError::Corrupt(format!("record {rid} is not BSON")))?;
                return Err(duplicate(ns, &spec, doc, b));
            }
        }
    }
    crashpoint::hit("ddl.create_index.before_load");
    index.entries = index
        .tree
        .bulk_load(txn, entries.iter().map(|e| (*e, &[][..])))?;
    index.key_bytes = entries.iter().map(|e| e.len() as u64).sum();
    merge_multikey(&mut index, &paths, wildcard_paths);
    report(BuildPhase::Loading, keys, keys)?;
    Ok(index)
}

/// What `check` found in one index.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct IndexCheck {
    /// Entries in the tree.
    pub keys: u64,
    /// Entries the documents generate that the tree lacks (record ids).
    pub missing: Vec<u64>,
    /// Entries the tree holds that no document generates (record ids).
    pub extra: Vec<u64>,
    /// Documents whose keys could not be generated, and why.
    pub errors: Vec<String>,
}

impl IndexCheck {
    /// Whether the index agrees with its documents.
    pub fn is_valid(&self) -> bool {
        self.missing.is_empty() && self.extra.is_empty() && self.errors.is_empty()
    }
}

/// Compares `index` with what the records of `meta` generate, in both directions.
pub fn check<T: PageRead>(
    txn: &T,
    meta: &CollectionMeta,
    index: &IndexMeta,
) -> Result<IndexCheck, StoreError> {
    let mut report = IndexCheck::default();
    let mut expected: BTreeSet<Vec<u8>> = BTreeSet::new();
    let mut paths = vec![BTreeSet::new(); index.spec.fields.len()];
    let mut wildcard_paths: BTreeSet<String> = BTreeSet::new();
    for record in meta.records.iter(txn)? {
        let (key, bytes) = record?;
        let rid = rid_of(&key)?;
        let Ok(doc) = RawDocument::from_bytes(&bytes) else {
            report.errors.push(format!("record {rid} is not BSON"));
            continue;
        };
        match keys::index_keys(&index.spec, doc) {
            Ok(keys) => {
                expected.extend(keys.keys.iter().map(|k| entry_key(k, rid)));
                for (all, mine) in paths.iter_mut().zip(keys.multikey_paths) {
                    all.extend(mine);
                }
                wildcard_paths.extend(keys.wildcard_multikey);
            }
            Err(error) => report.errors.push(format!("record {rid}: {error}")),
        }
    }
    let mut expected = expected.into_iter().peekable();
    for entry in index.tree.iter(txn)? {
        let (entry, _) = entry?;
        report.keys += 1;
        while let Some(wanted) = expected.next_if(|wanted| wanted.as_slice() < &entry[..]) {
            report.missing.push(split_entry(&wanted)?.1);
        }
        if expected
            .next_if(|wanted| wanted.as_slice() == &entry[..])
            .is_none()
        {
            report.extra.push(split_entry(&entry)?.1);
        }
    }
    for wanted in expected {
        report.missing.push(split_entry(&wanted)?.1);
    }
    // As mongod's validate: a document may not be multikey where the index is not.
    for (field, (found, recorded)) in paths.iter().zip(&index.multikey_paths).enumerate() {
        if !found.is_subset(recorded) || (!found.is_empty() && !index.multikey) {
            report.errors.push(format!(
                "documents are multikey at components {found:?} of key field {field} but the \
                 index records {recorded:?}"
            ));
        }
    }
    if !wildcard_paths.is_subset(&index.wildcard_multikey)
        || (!wildcard_paths.is_empty() && !index.multikey)
    {
        let unrecorded: Vec<&String> = wildcard_paths
            .difference(&index.wildcard_multikey)
            .collect();
        report.errors.push(format!(
            "documents are multikey at paths {unrecorded:?} that the wildcard index does not \
             record"
        ));
    }
    if report.keys != index.entries {
        report.errors.push(format!(
            "the catalog counts {} entries but the tree holds {}",
            index.entries, report.keys
        ));
    }
    Ok(report)
}

/// Entries of `index` whose index key lies within `(lower, upper)` (encoded keys, as
/// `bson_canonical::key` writes them), in key order then record id order: the planner's
/// seam. Yields each entry's index key and record id.
pub fn scan<'t, T: PageRead>(
    txn: &'t T,
    index: &IndexMeta,
    lower: Bound<&[u8]>,
    upper: Bound<&[u8]>,
) -> Result<impl Iterator<Item = Result<(Vec<u8>, u64), StoreError>> + 't, StoreError> {
    // Keys are prefix-free: `k ++ rid` for every rid lies in [k ++ 0, k ++ MAX].
    let lower = match lower {
        Bound::Included(k) => Bound::Included(entry_key(k, 0)),
        Bound::Excluded(k) => Bound::Excluded(entry_key(k, u64::MAX)),
        Bound::Unbounded => Bound::Unbounded,
    };
    let upper = match upper {
        Bound::Included(k) => Bound::Included(entry_key(k, u64::MAX)),
        Bound::Excluded(k) => Bound::Excluded(entry_key(k, 0)),
        Bound::Unbounded => Bound::Unbounded,
    };
    let range = index.tree.range(txn, as_slice(&lower), as_slice(&upper))?;
    Ok(range.map(|entry| {
        let (entry, _) = entry?;
        let (key, rid) = split_entry(&entry)?;
        Ok((key.to_vec(), rid))
    }))
}

fn as_slice(bound: &Bound<Vec<u8>>) -> Bound<&[u8]> {
    match bound {
        Bound::Included(k) => Bound::Included(k.as_slice()),
        Bound::Excluded(k) => Bound::Excluded(k.as_slice()),
        Bound::Unbounded => Bound::Unbounded,
    }
}

/// The tree an index walk reads: the `_id_` index or a secondary index by name.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum WalkTarget {
    /// `_id_`: keys are the canonical encodings of `_id`, values the record ids.
    Id,
    /// A secondary index: keys are `index key ++ record id`.
    Index(String),
}

/// A half-open range of tree keys, `[lower, upper)` (`upper: None`: to the end). The
/// planner builds them from complete field encodings, so an index key lies in a range
/// exactly when its entry (the key followed by its record id) does.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct KeyRange {
    /// The first tree key in the range (inclusive).
    pub lower: Vec<u8>,
    /// The first tree key past it (exclusive); `None`: the end of the tree.
    pub upper: Option<Vec<u8>>,
}

/// Where a walk over ranges stands: the range it is in and the last tree key it read, so
/// a walk resumed in a later snapshot continues after it.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct WalkPosition {
    /// The index of the range being walked.
    pub range: usize,
    /// The last tree key read (`None`: nothing read yet).
    pub after: Option<Vec<u8>>,
}

/// Walks `ranges` (sorted and disjoint) of `target` from `position`, in key order or, when
/// `reverse`, in descending key order (the last range first), handing each entry's record
/// to `visit` until it answers `false` (the position then names that entry: the walk
/// resumes after it) or the ranges end.
pub fn walk<T: PageRead, E: From<StoreError>>(
    txn: &T,
    meta: &CollectionMeta,
    target: &WalkTarget,
    ranges: &[KeyRange],
    reverse: bool,
    position: &mut WalkPosition,
    mut visit: impl FnMut(u64, &[u8]) -> Result<bool, E>,
) -> Result<(), E> {
    let (tree, is_id) = match target {
        WalkTarget::Id => (meta.ids, true),
        WalkTarget::Index(name) => match meta.index(name) {
            Some(index) => (index.tree, false),
            None => return Err(StoreError::Corrupt(format!("no index {name}")).into()),
        },
    };
    while position.range < ranges.len() {
        let range = if reverse {
            &ranges[ranges.len() - 1 - position.range]
        } else {
            &ranges[position.range]
        };
        let after = position.after.as_deref();
        let (lower, upper) = if reverse {
            let upper = match (after, &range.upper) {
                (Some(after), Some(end)) if after < end.as_slice() => Bound::Excluded(after),
                (Some(after), None) => Bound::Excluded(after),
                (_, end) => end.as_deref().map_or(Bound::Unbounded, Bound::Excluded),
            };
            (Bound::Included(range.lower.as_slice()), upper)
        } else {
            let lower = match after {
                Some(after) if after >= range.lower.as_slice() => Bound::Excluded(after),
                _ => Bound::Included(range.lower.as_slice()),
            };
            (
                lower,
                range
                    .upper
                    .as_deref()
                    .map_or(Bound::Unbounded, Bound::Excluded),
            )
        };
        let empty = match (lower, upper) {
            (Bound::Included(l) | Bound::Excluded(l), Bound::Excluded(u)) => l >= u,
            _ => false,
        };
        if !empty {
            let entries = tree.range(txn, lower, upper).map_err(StoreError::from)?;
            let entries: Box<dyn Iterator<Item = _>> = if reverse {
                Box::new(entries.rev())
            } else {
                Box::new(entries)
            };
            let mut stopped = false;
            let mut last = None;
            for entry in entries {
                let (key, value) = entry.map_err(StoreError::from)?;
                let rid = if is_id {
                    rid_of(&value)?
                } else {
                    split_entry(&key)?.1
                };
                last = Some(key.to_vec());
                let Some(bytes) = meta.records.get(txn, &rid_key(rid))? else {
                    let message = format!("an index names record {rid}, which does not exist");
                    return Err(StoreError::Corrupt(message).into());
                };
                if !visit(rid, &bytes)? {
                    stopped = true;
                    break;
                }
            }
            if last.is_some() {
                position.after = last;
            }
            if stopped {
                return Ok(());
            }
        }
        position.range += 1;
    }
    Ok(())
}

/// Hands each entry of the secondary index `name` in `ranges` (sorted and disjoint) to
/// `visit`, in key order, without reading its record, until `visit` answers `false`:
/// what a count answered from the index alone (COUNT_SCAN) reads.
pub fn walk_entries<T: PageRead, E: From<StoreError>>(
    txn: &T,
    meta: &CollectionMeta,
    name: &str,
    ranges: &[KeyRange],
    mut visit: impl FnMut(&[u8]) -> Result<bool, E>,
) -> Result<(), E> {
    let Some(index) = meta.index(name) else {
        return Err(StoreError::Corrupt(format!("no index {name}")).into());
    };
    for range in ranges {
        let lower = Bound::Included(range.lower.as_slice());
        let upper = range
            .upper
            .as_deref()
            .map_or(Bound::Unbounded, Bound::Excluded);
        if matches!(upper, Bound::Excluded(u) if range.lower.as_slice() >= u) {
            continue;
        }
        for entry in index
            .tree
            .range(txn, lower, upper)
            .map_err(StoreError::from)?
        {
            let (key, _) = entry.map_err(StoreError::from)?;
            if !visit(&key)? {
                return Ok(());
            }
        }
    }
    Ok(())
}

/// The groups of records that share a key in `index` (each group's record ids in order),
/// in key order: what stands between an index and `unique`.
pub fn duplicate_groups<T: PageRead>(
    txn: &T,
    index: &IndexMeta,
) -> Result<Vec<Vec<u64>>, StoreError> {
    let mut groups = Vec::new();
    let mut current: Option<(Vec<u8>, Vec<u64>)> = None;
    for entry in index.tree.iter(txn)? {
        let (entry, _) = entry?;
        let (key, rid) = split_entry(&entry)?;
        match &mut current {
            Some((last, rids)) if last.as_slice() == key => rids.push(rid),
            _ => {
                if let Some((_, rids)) = current.take()
                    && rids.len() > 1
                {
                    groups.push(rids);
                }
                current = Some((key.to_vec(), vec![rid]));
            }
        }
    }
    if let Some((_, rids)) = current
        && rids.len() > 1
    {
        groups.push(rids);
    }
    Ok(groups)
}
