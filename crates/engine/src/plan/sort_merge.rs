//! Sorts provided by merging index walks (mongod's `SORT_MERGE`, issue 17): a find sorted on
//! fields an index holds right after leading fields that the filter pins to points, some
//! to several (`{a: {$in: [1, 2]}}` sorted by `b` over `{a: 1, b: 1}`).
//!
//! Each combination of the leading fields' points (one point per field) is one walk of the
//! index, its bounds clamped to the keys that start with that combination's encoded points
//! ([`bounds::clamp`]). Inside one combination the index orders its entries by the sort's
//! fields, as for a sort an index provides after fields pinned to one point (the same
//! fields, all in the sort's directions or all opposite, none multikey). So each walk
//! yields its matches in sort order, a merge of the walks by the sort yields them all in
//! sort order, and with a limit each walk can stop after `skip + limit` distinct matches
//! (the executor, `command::sort_merge`).
//!
//! Invariants:
//! - The walks cover exactly the index's bounds for the filter: every key those bounds
//!   hold starts with one combination of the leading points (each range is built from a
//!   full prefix of point encodings, `bounds`), so clamping to the combinations loses no
//!   key, and the combinations are disjoint, so no key is walked twice.
//! - The walks are in ascending order of their combinations' encodings; a merge that is
//!   stable in that order (ties to the earlier walk) and hands each record on once, at its
//!   first place, equals a stable in-memory sort of the unsplit walk.
//! - At most [`WALKS_MAX`] walks (mongod's `internalQueryMaxScansToExplode`); more, and
//!   the query sorts in memory.

use super::bounds;
use super::predicates::Predicates;
use super::{Error, Hint, IndexAccess, holds_every_match, sort_candidates, sort_direction};
use crate::store::{CollectionMeta, Namespace};
use bson::RawDocument;

/// The most walks one merged sort is split into.
pub(crate) const WALKS_MAX: usize = 200;

/// A sort provided by merging walks of one index.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct SortMerge {
    /// One walk per combination of the leading fields' points, in ascending order of the
    /// combinations' encodings.
    pub(crate) walks: Vec<IndexAccess>,
    /// Per walk, the leading fields' paths with the one interval each is pinned to, as
    /// explain shows them (`("a", "[1, 1]")`).
    pub(crate) pinned: Vec<Vec<(String, String)>>,
}

impl SortMerge {
    /// The index the walks read.
    pub(crate) fn index(&self) -> &IndexAccess {
        &self.walks[0]
    }
}

/// The merged walks of an index that provide `sort` (each field ascending when `true`)
/// for `filter`, if one does: its fields before the sort's are all pinned to points, their
/// combinations number 2 to [`WALKS_MAX`], its next fields are the sort's (as
/// [`super::choose_sorted`] requires), and it holds every match. Only the hinted index is
/// considered when there is a hint.
pub(crate) fn choose(
    meta: &CollectionMeta,
    ns: &Namespace,
    filter: Option<&RawDocument>,
    hint: &Hint,
    sort: &[(&str, bool)],
) -> Result<Option<SortMerge>, Error> {
    if sort.is_empty() {
        return Ok(None);
    }
    let predicates = Predicates::of(filter);
    for candidate in sort_candidates(meta, ns, hint)? {
        let Some(leading) = candidate.fields.iter().position(|f| f.path == sort[0].0) else {
            continue;
        };
        let (access, bounds) = candidate.access(&predicates);
        if leading == 0 || leading > bounds.point_fields {
            continue;
        }
        let combinations = bounds.point_keys[..leading]
            .iter()
            .try_fold(1usize, |n, points| n.checked_mul(points.len()));
        if !combinations.is_some_and(|n| (2..=WALKS_MAX).contains(&n)) {
            continue;
        }
        let Some(reverse) = sort_direction(&candidate.fields[leading..], sort) else {
            continue;
        };
        if *hint == Hint::None && !holds_every_match(&candidate, &bounds, filter, &predicates) {
            continue;
        }
        let mut walks = Vec::new();
        let mut pinned = Vec::new();
        // The combinations in ascending order: the last field's point varies fastest.
        let mut digits = vec![0usize; leading];
        loop {
            let mut prefix = Vec::new();
            let mut shown = Vec::new();
            for (field, &digit) in digits.iter().enumerate() {
                prefix.extend_from_slice(&bounds.point_keys[field][digit]);
                let (path, intervals) = &bounds.display[field];
                shown.push((path.clone(), intervals[digit].clone()));
            }
            walks.push(IndexAccess {
                ranges: bounds::clamp(&access.ranges, &prefix),
                reverse,
                ..access.clone()
            });
            pinned.push(shown);
            let Some(field) = (0..leading)
                .rev()
                .find(|&f| digits[f] + 1 < bounds.point_keys[f].len())
            else {
                break;
            };
            digits[field] += 1;
            digits[field + 1..].fill(0);
        }
        return Ok(Some(SortMerge { walks, pinned }));
    }
    Ok(None)
}
