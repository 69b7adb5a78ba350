//! Plan choice by trial (issue 17), as mongod's multi-planner does it in spirit: when
//! several index walks qualify ([`super::propose`]), each is run a little, round-robin, in
//! the query's snapshot, and the one that produces the most matches per unit of work wins.
//!
//! Invariants:
//! - A trial only reads: it counts keys, documents and matches, and hands nothing on. The
//!   command runs the winner afresh, re-checking every document against the whole filter.
//! - A trial is bounded: it ends when a plan has produced [`TRIAL_RESULTS`] matches (or
//!   the `want` the query needs), when a plan reaches the end of its ranges, or when every
//!   plan has spent the work budget (keys plus documents examined; at least
//!   [`TRIAL_WORKS_MIN`], else 29% of the collection, as mongod's
//!   `internalQueryPlanEvaluationWorks` and `...CollFraction`), checked at every key.
//!   Plans advance [`TRIAL_CHUNK`] keys per turn, so their work differs by at most a
//!   turn's.
//! - The score is matches / (keys + documents examined), plus 1 when the plan reached its
//!   end (it answered the whole query within the trial); equal scores go to the earlier
//!   plan of the static ranking.
//! - A filter that fails at run time, or a record that is not BSON, counts as no match in
//!   a trial: the command's own run meets it and reports it.

use super::{IndexAccess, cache};
use crate::error::Error;
use crate::store::{CollectionMeta, Namespace, Reader, WalkPosition, Writer};
use query::Filter;
use std::collections::HashSet;

/// A trial ends once a plan has produced this many matches (mongod's 101: a first batch).
pub(crate) const TRIAL_RESULTS: u64 = 101;

/// The least work budget of a trial, per plan (mongod's 10,000 works).
pub(crate) const TRIAL_WORKS_MIN: u64 = 10_000;

/// Keys a plan walks per turn.
const TRIAL_CHUNK: u64 = 8;

/// A cached plan is kept while it answers within this multiple of the work it took when
/// it won (mongod's replanning factor).
pub(crate) const REPLAN_FACTOR: u64 = 10;

/// What a walk hands each record to (record id, stored bytes); `false` stops it.
pub(crate) type Visit<'v> = dyn FnMut(u64, &[u8]) -> Result<bool, Error> + 'v;

/// Reads index walks for a trial: the read snapshot of a query, or a write's transaction.
pub(crate) trait Walker {
    /// [`Reader::walk`] of `access` over `meta` (named `ns`).
    fn walk_access(
        &mut self,
        meta: &CollectionMeta,
        ns: &Namespace,
        access: &IndexAccess,
        position: &mut WalkPosition,
        visit: &mut Visit<'_>,
    ) -> Result<(), Error>;
}

impl Walker for &Reader<'_> {
    fn walk_access(
        &mut self,
        meta: &CollectionMeta,
        _ns: &Namespace,
        access: &IndexAccess,
        position: &mut WalkPosition,
        visit: &mut Visit<'_>,
    ) -> Result<(), Error> {
        let target = &access.target;
        self.walk(
            meta,
            target,
            &access.ranges,
            access.reverse,
            position,
            visit,
        )
    }
}

impl Walker for Writer<'_> {
    fn walk_access(
        &mut self,
        _meta: &CollectionMeta,
        ns: &Namespace,
        access: &IndexAccess,
        position: &mut WalkPosition,
        visit: &mut Visit<'_>,
    ) -> Result<(), Error> {
        assert!(!access.reverse, "a write's selection walks forward");
        self.walk(ns, &access.target, &access.ranges, position, visit)
    }
}

/// What one plan did in a trial.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct TrialStats {
    /// Index keys examined.
    pub(crate) keys: u64,
    /// Documents fetched (each record once).
    pub(crate) docs: u64,
    /// Documents that matched the filter.
    pub(crate) results: u64,
    /// Whether the plan answered the whole query (its ranges ended, or it produced all the
    /// query wants).
    pub(crate) eof: bool,
}

impl TrialStats {
    /// Keys plus documents examined.
    pub(crate) fn works(&self) -> u64 {
        self.keys + self.docs
    }

    /// Matches per unit of work, plus 1 for a plan that reached its end.
    pub(crate) fn score(&self) -> f64 {
        let productivity = self.results as f64 / self.works().max(1) as f64;
        productivity + if self.eof { 1.0 } else { 0.0 }
    }
}

/// The plans of a trial and what each did (in the same order).
#[derive(Debug, Clone)]
pub(crate) struct Trial {
    pub(crate) plans: Vec<IndexAccess>,
    pub(crate) stats: Vec<TrialStats>,
}

/// The work budget of a full trial over `meta`.
pub(crate) fn budget(meta: &CollectionMeta) -> u64 {
    TRIAL_WORKS_MIN.max(meta.count.saturating_mul(29) / 100)
}

/// One plan's walk during a trial.
struct Running {
    position: WalkPosition,
    seen: HashSet<u64>,
    stats: TrialStats,
}

/// Runs `plans` round-robin until one produces `TRIAL_RESULTS` matches (or `want`,
/// which ends that plan), one reaches its end, or each has spent `budget` works.
pub(crate) fn run(
    walker: &mut dyn Walker,
    meta: &CollectionMeta,
    ns: &Namespace,
    filter: Option<&Filter>,
    plans: &[IndexAccess],
    budget: u64,
    want: Option<u64>,
) -> Result<Vec<TrialStats>, Error> {
    let enough = want.map_or(TRIAL_RESULTS, |w| w.min(TRIAL_RESULTS));
    let mut running: Vec<Running> = plans
        .iter()
        .map(|_| Running {
            position: WalkPosition::default(),
            seen: HashSet::new(),
            stats: TrialStats::default(),
        })
        .collect();
    loop {
        for (plan, state) in plans.iter().zip(running.iter_mut()) {
            if state.stats.works() >= budget {
                continue;
            }
            let (mut walked, mut stopped) = (0u64, false);
            let Running {
                position,
                seen,
                stats,
            } = state;
            walker.walk_access(meta, ns, plan, position, &mut |rid, bytes| {
                stats.keys += 1;
                walked += 1;
                if stats
                    .keys
                    .is_multiple_of(crate::limits::DEADLINE_CHECK_INTERVAL as u64)
                {
                    crate::operations::check_current()?;
                }
                if seen.insert(rid) {
                    stats.docs += 1;
                    if matches(filter, bytes) {
                        stats.results += 1;
                    }
                }
                stopped =
                    stats.results >= enough || walked >= TRIAL_CHUNK || stats.works() >= budget;
                Ok(!stopped)
            })?;
            let complete = want.is_some_and(|w| stats.results >= w);
            if !stopped || complete {
                stats.eof = true;
            }
        }
        let over = running
            .iter()
            .any(|r| r.stats.eof || r.stats.results >= enough);
        if over || running.iter().all(|r| r.stats.works() >= budget) {
            return Ok(running.into_iter().map(|r| r.stats).collect());
        }
    }
}

/// Whether stored `bytes` match `filter`; a failure or a malformed record is no match.
fn matches(filter: Option<&Filter>, bytes: &[u8]) -> bool {
    if !query::is_framed(bytes) {
        return false;
    }
    filter.is_none_or(|f| f.try_matches_bytes(bytes).unwrap_or(false))
}

/// The plan of `stats` with the best score, the earliest among equals.
pub(crate) fn best(stats: &[TrialStats]) -> usize {
    let mut winner = 0;
    for (i, s) in stats.iter().enumerate().skip(1) {
        if s.score() > stats[winner].score() {
            winner = i;
        }
    }
    winner
}

/// Whether a cached plan's run within its replanning budget (`stats`) answered as a
/// trial would: it produced a trial's worth of matches, or reached its end.
pub(crate) fn still_good(stats: &TrialStats, want: Option<u64>) -> bool {
    let enough = want.map_or(TRIAL_RESULTS, |w| w.min(TRIAL_RESULTS));
    stats.eof || stats.results >= enough
}

/// The budget a cached plan that took `works` gets before the query is planned again.
pub(crate) fn replan_budget(entry: &cache::Cached) -> u64 {
    entry.works.max(1).saturating_mul(REPLAN_FACTOR)
}
