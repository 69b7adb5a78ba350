//! Running a merged sort (`plan::sort_merge`): each walk's matches in index order, then
//! their merge by the sort.
//!
//! Invariants:
//! - Every document handed on was checked against the whole filter (`access::if_matches`).
//! - With `keep` (`skip + limit`), a walk stops after `keep` distinct matches: a match
//!   further along its walk has `keep` distinct documents before it in sort order, so it
//!   is not among the first `keep` of the merge.
//! - The merge takes the smallest head by the sort, ties to the earlier walk, and hands
//!   each record on once (a multikey leading field names a record in several walks):
//!   equal to a stable in-memory sort of the walks' concatenation.
//! - What the walks hold stays within the sort memory limit; past it the run gives up
//!   (`None`) and the caller sorts as it would have without the merge (spilling or 292).

use super::access::if_matches;
use super::cursor::Deadline;
use crate::error::Error;
use crate::plan::SortMerge;
use crate::store::{CollectionMeta, Namespace, Reader, WalkPosition};
use bson::RawDocumentBuf;
use query::{Filter, SortKey, SortSpec};
use std::cmp::Ordering;
use std::collections::{BinaryHeap, HashSet, VecDeque};

/// What a merged sort produced and examined.
pub(crate) struct Merged {
    /// The first `keep` documents of the merge (all without `keep`), in sort order.
    pub(crate) docs: VecDeque<RawDocumentBuf>,
    /// Per walk: keys examined and distinct records among them.
    pub(crate) walks: Vec<(u64, u64)>,
    /// Records the merge took from the walks, and those it dropped as already handed on.
    pub(crate) dups_tested: u64,
    pub(crate) dups_dropped: u64,
}

/// One walk's next match in the merge's heap (smallest key first, then earliest walk).
struct Head<'s> {
    spec: &'s SortSpec,
    key: SortKey,
    walk: usize,
}

impl Ord for Head<'_> {
    fn cmp(&self, other: &Self) -> Ordering {
        // Reversed: `BinaryHeap` pops its greatest.
        self.spec
            .compare_keys(&other.key, &self.key)
            .then(other.walk.cmp(&self.walk))
    }
}

impl PartialOrd for Head<'_> {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

impl PartialEq for Head<'_> {
    fn eq(&self, other: &Self) -> bool {
        self.cmp(other) == Ordering::Equal
    }
}

impl Eq for Head<'_> {}

/// Runs `merge` over `meta` in `reader`'s snapshot: the first `keep` matches of `filter`
/// in `spec` order (all when `None`), counting keys and documents on `deadline`; `None`
/// when the walks' matches pass `bytes_max` together.
#[allow(clippy::too_many_arguments)]
pub(crate) fn run(
    reader: &Reader<'_>,
    meta: &CollectionMeta,
    ns: &Namespace,
    filter: Option<&Filter>,
    merge: &SortMerge,
    spec: &SortSpec,
    keep: Option<usize>,
    bytes_max: usize,
    deadline: &Deadline<'_>,
) -> Result<Option<Merged>, Error> {
    let mut runs: Vec<VecDeque<(u64, RawDocumentBuf)>> = Vec::with_capacity(merge.walks.len());
    let mut walks = Vec::with_capacity(merge.walks.len());
    let mut held = 0usize;
    for walk in &merge.walks {
        let mut run = VecDeque::new();
        let mut mine = HashSet::new();
        let (mut keys, mut over) = (0u64, false);
        reader.walk(
            meta,
            &walk.target,
            &walk.ranges,
            walk.reverse,
            &mut WalkPosition::default(),
            |rid, bytes| -> Result<bool, Error> {
                deadline.tick()?;
                deadline.key_examined();
                keys += 1;
                if !mine.insert(rid) {
                    return Ok(true);
                }
                deadline.doc_examined();
                if let Some(doc) = if_matches(ns, filter, rid, bytes)? {
                    held += doc.as_bytes().len();
                    run.push_back((rid, doc));
                }
                over = held > bytes_max;
                Ok(!over && keep.is_none_or(|keep| run.len() < keep))
            },
        )?;
        if over {
            return Ok(None);
        }
        walks.push((keys, mine.len() as u64));
        runs.push(run);
    }
    let mut heap = BinaryHeap::with_capacity(runs.len());
    for (walk, run) in runs.iter().enumerate() {
        if let Some((_, doc)) = run.front() {
            heap.push(Head {
                spec,
                key: spec.key(doc),
                walk,
            });
        }
    }
    let mut merged = Merged {
        docs: VecDeque::new(),
        walks,
        dups_tested: 0,
        dups_dropped: 0,
    };
    let mut seen = HashSet::new();
    while keep.is_none_or(|keep| merged.docs.len() < keep) {
        let Some(head) = heap.pop() else {
            break;
        };
        let run = &mut runs[head.walk];
        let (rid, doc) = run.pop_front().expect("a head is its run's front");
        if let Some((_, next)) = run.front() {
            heap.push(Head {
                spec,
                key: spec.key(next),
                walk: head.walk,
            });
        }
        merged.dups_tested += 1;
        if seen.insert(rid) {
            merged.docs.push_back(doc);
        } else {
            merged.dups_dropped += 1;
        }
    }
    Ok(Some(merged))
}
