//! The query planner (issues 26 and 17): which access path answers a filter. A collection
//! scan, the `_id_` index's point lookup, or a walk over ranges of one index (`_id_` or
//! secondary), proposed from the filter's top-level conjunction ([`predicates`]), turned
//! into tree-key ranges per index ([`bounds`]; a wildcard index once per queried path it
//! covers, [`wildcard`]); among several, chosen by trial ([`trial`]) and cached per query
//! shape ([`cache`]). Every command plans through [`choose`]; [`exact`] says when a
//! count or a distinct is answered from index keys.
//!
//! Invariants:
//! - An index only proposes: every document an access path yields is re-checked against
//!   the whole filter by the caller. So a plan may be wider than the filter (it is an
//!   over-approximation), never narrower: every document the filter matches lies in the
//!   ranges of the chosen index ([`bounds`] states the rules that keep it so).
//! - An index is proposed without a hint only when it is sure to hold every match: never a
//!   hidden index, a sparse index only when a bounded field cannot match a missing field,
//!   a partial index only when the filter implies its `partialFilterExpression`
//!   ([`implies`]). A hint is obeyed as mongod obeys it (a sparse or partial index hinted
//!   answers from its entries); a hint naming no index (or a hidden one) is 2 BadValue.
//!   Unbounded indexes are never proposed: a collection scan reads less.
//! - `$or` per branch: when the top-level conjunction proposes only a collection scan and
//!   the filter has a top-level `$or` whose every branch proposes an index walk (its
//!   best-ranked one, by the rules above applied to the branch alone), the plan is one
//!   walk per branch ([`Access::Or`]): a document the filter matches matches some branch,
//!   so it lies in that branch's ranges. One branch without an index: a collection scan.
//!   Callers hand each record on once across the walks.
//! - Choice by trial: a hint, the `_id` point lookup, or a single qualifying index needs no
//!   choice. Several qualifying index walks are ranked statically (the index whose bounds
//!   pin the most leading fields first: a unique index pinned on every field, then the
//!   count of point fields, then a range on the next field; ties to `_id_`, then the older
//!   index, then a wildcard index, older first, then its paths in order), then run in a
//!   short trial ([`trial`]): the most matches per key and document examined wins, ties
//!   to the ranking. The winner is cached per collection and query shape ([`cache`]) and
//!   reused while the proposal still holds it and it answers within 10x the work it won
//!   with. A wildcard index never provides a sort.
//! - Planning reads only the catalog entry it is given and allocates per index, not per
//!   document; a trial reads at most its work budget of keys and documents per plan.

mod bounds;
pub(crate) mod cache;
pub(crate) mod exact;
pub(crate) mod explain;
mod implies;
pub(crate) mod min_max;
mod predicates;
pub(crate) mod sort_merge;
#[cfg(test)]
mod tests;
pub(crate) mod trial;
mod usage;
mod wildcard;

use crate::error::{Error, ErrorCode};
use crate::index::spec::KeyKind;
use crate::store::{CollectionMeta, IndexMeta, KeyRange, Namespace, WalkTarget};
use bounds::FieldView;
pub(crate) use bounds::successor;
use bson::raw::RawBsonRef;
use bson::{RawDocument, RawDocumentBuf};
pub(crate) use cache::PlanCache;
use predicates::Predicates;
pub(crate) use sort_merge::SortMerge;
use std::collections::BTreeSet;
pub(crate) use trial::{Trial, Walker};
pub(crate) use usage::IndexUsage;

/// A query's `hint`.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Hint {
    /// No hint: the planner chooses.
    None,
    /// `{$natural: 1}` or `{$natural: -1}`: a collection scan, forward when `true`.
    Natural(bool),
    /// The `_id_` index (by name or by key pattern `{_id: 1}`).
    Id,
    /// An index by name.
    Name(String),
    /// An index by key pattern.
    Pattern(RawDocumentBuf),
}

/// How a query reads its candidates.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Access<'f> {
    /// Every record, in record id order.
    Collection,
    /// The one record whose `_id` is this value (the `_id_` index's point lookup).
    Id(RawBsonRef<'f>),
    /// Ranges of one index, in index order.
    Index(IndexAccess),
    /// One index walk per branch of the filter's top-level `$or`, in branch order, each
    /// record handed on once (mongod's OR stage over IXSCANs).
    Or(Vec<IndexAccess>),
}

impl Access<'_> {
    /// The index walks of an index or `$or` plan, in the order they run.
    pub(crate) fn walks(&self) -> &[IndexAccess] {
        match self {
            Access::Index(index) => std::slice::from_ref(index),
            Access::Or(branches) => branches,
            Access::Collection | Access::Id(_) => &[],
        }
    }
}

/// A walk over ranges of one index.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct IndexAccess {
    /// The tree walked.
    pub(crate) target: WalkTarget,
    /// The index name (`_id_` for the `_id_` index).
    pub(crate) name: String,
    /// The tree-key ranges, sorted and disjoint.
    pub(crate) ranges: Vec<KeyRange>,
    /// Whether one record may appear under several keys (callers deduplicate).
    pub(crate) multikey: bool,
    /// Walk the ranges in descending key order (an index read backwards for a sort).
    pub(crate) reverse: bool,
    /// For a wildcard index, the one path its ranges bound (explain shows it).
    pub(crate) wildcard_path: Option<String>,
}

/// No array seen anywhere (the `_id_` index: `_id` is never an array).
static NO_ARRAYS: BTreeSet<usize> = BTreeSet::new();

/// One index as the planner weighs it.
struct Candidate<'m> {
    name: &'m str,
    target: WalkTarget,
    fields: Vec<FieldView<'m>>,
    unique: bool,
    multikey: bool,
    index: Option<&'m IndexMeta>,
}

impl<'m> Candidate<'m> {
    fn id() -> Candidate<'static> {
        Candidate {
            name: "_id_",
            target: WalkTarget::Id,
            fields: vec![FieldView {
                path: "_id",
                kind: KeyKind::Ascending,
                multikey: &NO_ARRAYS,
            }],
            unique: true,
            multikey: false,
            index: None,
        }
    }

    fn secondary(index: &'m IndexMeta) -> Candidate<'m> {
        let fields = index
            .spec
            .fields
            .iter()
            .zip(&index.multikey_paths)
            .map(|(field, multikey)| FieldView {
                path: &field.path,
                kind: field.kind,
                multikey,
            })
            .collect();
        Candidate {
            name: index.name(),
            target: WalkTarget::Index(index.name().to_owned()),
            fields,
            unique: index.spec.unique,
            multikey: index.multikey,
            index: Some(index),
        }
    }

    fn access(&self, predicates: &Predicates<'_>) -> (IndexAccess, bounds::Bounds) {
        let bounds = bounds::bounds(&self.fields, predicates);
        let access = IndexAccess {
            target: self.target.clone(),
            name: self.name.to_owned(),
            ranges: bounds.ranges.clone(),
            multikey: self.multikey,
            reverse: false,
            wildcard_path: None,
        };
        (access, bounds)
    }
}

/// What a hint names.
enum Hinted<'m> {
    /// `_id_` or an ordinary secondary index.
    Index(Candidate<'m>),
    /// A wildcard index: the planner still picks the path.
    Wildcard(&'m IndexMeta),
}

/// mongod's 291 when a hinted wildcard index covers none of the filter's paths.
fn no_solutions(ns: &Namespace) -> Error {
    Error::new(
        ErrorCode::Other(291, "NoQueryExecutionPlans"),
        format!(
            "error processing query: ns={ns} planner returned error :: caused by :: No query \
             solutions"
        ),
    )
}

/// The best path of the wildcard `index` for `predicates`, with its score.
fn wildcard_access(
    index: &IndexMeta,
    predicates: &Predicates<'_>,
) -> Option<((bool, usize, bool, bool), IndexAccess)> {
    let mut best: Option<((bool, usize, bool, bool), IndexAccess)> = None;
    for (path, on_path) in &predicates.by_path {
        let Some(found) = wildcard::path_bounds(index, path, on_path) else {
            continue;
        };
        let score = found.score();
        if best.as_ref().is_none_or(|(top, _)| score > *top) {
            let access = IndexAccess {
                target: WalkTarget::Index(index.name().to_owned()),
                name: index.name().to_owned(),
                ranges: found.ranges,
                // A walk over a path and its subpaths meets a document once per key; and
                // a path may turn multikey between two batches of one cursor.
                multikey: true,
                reverse: false,
                wildcard_path: Some((*path).to_owned()),
            };
            best = Some((score, access));
        }
    }
    best
}

/// What the planner proposes for a filter.
#[derive(Debug)]
pub(crate) enum Proposal<'f> {
    /// One access path: a hint, the `_id` point lookup, the one index that qualifies, or
    /// none (a collection scan).
    One(Access<'f>),
    /// Several index walks qualify, best ranked first ([`trial`] chooses among them; the
    /// ranking breaks its ties).
    Several(Vec<IndexAccess>),
}

/// The access paths for `filter` over the collection `meta` of `ns`, obeying `hint`: those
/// of its top-level conjunction, else, when that leaves a collection scan and the filter
/// has a top-level `$or` whose every branch is indexed, one walk per branch.
pub(crate) fn propose<'f>(
    meta: &CollectionMeta,
    ns: &Namespace,
    filter: Option<&'f RawDocument>,
    hint: &Hint,
) -> Result<Proposal<'f>, Error> {
    let proposal = propose_conjunction(meta, ns, filter, hint)?;
    if *hint != Hint::None || !matches!(proposal, Proposal::One(Access::Collection)) {
        return Ok(proposal);
    }
    let Some(Ok(Some(RawBsonRef::Array(branches)))) = filter.map(|f| f.get("$or")) else {
        return Ok(proposal);
    };
    let mut walks = Vec::new();
    for branch in branches {
        let Ok(RawBsonRef::Document(branch)) = branch else {
            return Ok(proposal);
        };
        let walk = match propose_conjunction(meta, ns, Some(branch), hint)? {
            Proposal::One(Access::Index(walk)) => walk,
            Proposal::Several(mut ranked) => ranked.remove(0),
            Proposal::One(Access::Id(_)) => Candidate::id().access(&Predicates::of(Some(branch))).0,
            Proposal::One(Access::Collection | Access::Or(_)) => return Ok(proposal),
        };
        walks.push(walk);
    }
    Ok(match walks.len() {
        0 => proposal,
        _ => Proposal::One(Access::Or(walks)),
    })
}

/// [`propose`] from the top-level conjunction alone.
fn propose_conjunction<'f>(
    meta: &CollectionMeta,
    ns: &Namespace,
    filter: Option<&'f RawDocument>,
    hint: &Hint,
) -> Result<Proposal<'f>, Error> {
    let forced = match hint {
        Hint::Natural(_) => return Ok(Proposal::One(Access::Collection)),
        Hint::None => None,
        forced => Some(hinted(meta, ns, forced)?),
    };
    match forced {
        Some(Hinted::Index(candidate)) => {
            let access = candidate.access(&Predicates::of(filter)).0;
            return Ok(Proposal::One(Access::Index(access)));
        }
        Some(Hinted::Wildcard(index)) => {
            let predicates = Predicates::of(filter);
            return match wildcard_access(index, &predicates) {
                Some((_, access)) => Ok(Proposal::One(Access::Index(access))),
                None => Err(no_solutions(ns)),
            };
        }
        None => {}
    }
    // The point lookup first: the hot path of `findOne({_id})` reads nothing else.
    if let Some(id) = filter.and_then(id_equality) {
        return Ok(Proposal::One(Access::Id(id)));
    }
    let predicates = Predicates::of(filter);
    let mut ranked: Vec<((bool, usize, bool, bool), IndexAccess)> = Vec::new();
    let candidates = std::iter::once(Candidate::id())
        .chain(ordinary(meta).map(Candidate::secondary))
        .filter(|c| c.index.is_none_or(|index| !index.spec.hidden));
    for candidate in candidates {
        let (access, bounds) = candidate.access(&predicates);
        if bounds.is_unbounded() || !holds_every_match(&candidate, &bounds, filter, &predicates) {
            continue;
        }
        let pinned = candidate.unique && bounds.point_fields == candidate.fields.len();
        ranked.push((
            (pinned, bounds.point_fields, bounds.range_field, true),
            access,
        ));
    }
    let wildcards = meta
        .indexes
        .iter()
        .filter(|i| i.spec.wildcard.is_some() && !i.spec.hidden);
    for index in wildcards {
        let implied = match &index.spec.partial {
            Some(partial) => implies::implies(filter, &predicates, &partial.document),
            None => true,
        };
        if !implied {
            continue;
        }
        if let Some(found) = wildcard_access(index, &predicates) {
            ranked.push(found);
        }
    }
    // Stable: among equal scores the earlier stays first (`_id_`, then older indexes,
    // then wildcard indexes).
    ranked.sort_by_key(|r| std::cmp::Reverse(r.0));
    let mut plans: Vec<IndexAccess> = ranked.into_iter().map(|(_, access)| access).collect();
    Ok(match plans.len() {
        0 => Proposal::One(Access::Collection),
        1 => Proposal::One(Access::Index(plans.remove(0))),
        _ => Proposal::Several(plans),
    })
}

/// What a query asks, as far as choosing its plan goes.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Query<'f, 'q> {
    /// The filter as written.
    pub(crate) filter: Option<&'f RawDocument>,
    /// The filter compiled (a trial counts its matches).
    pub(crate) compiled: Option<&'q query::Filter>,
    pub(crate) hint: &'q Hint,
    /// The sort and projection as written (part of the query shape).
    pub(crate) sort: Option<&'q RawDocument>,
    pub(crate) projection: Option<&'q RawDocument>,
    /// The most matches the query can use (`skip + limit`; `None`: all).
    pub(crate) want: Option<u64>,
}

impl<'f, 'q> Query<'f, 'q> {
    /// A query of `filter` alone (compiled as `compiled`) under `hint`.
    pub(crate) fn of(
        filter: Option<&'f RawDocument>,
        compiled: Option<&'q query::Filter>,
        hint: &'q Hint,
    ) -> Query<'f, 'q> {
        Query {
            filter,
            compiled,
            hint,
            sort: None,
            projection: None,
            want: None,
        }
    }
}

/// Where a plan is chosen: the collection, the snapshot a trial reads, and the cache (none
/// for explain, which always runs the trial and leaves the cache alone).
pub(crate) struct Planning<'a> {
    pub(crate) meta: &'a CollectionMeta,
    pub(crate) ns: &'a Namespace,
    pub(crate) walker: &'a mut dyn Walker,
    pub(crate) cache: Option<&'a PlanCache>,
    /// The host's time, for the cache entry's `timeOfCreation`.
    pub(crate) now_ms: i64,
}

/// The plan chosen for a query.
#[derive(Debug)]
pub(crate) struct Planned<'f> {
    pub(crate) access: Access<'f>,
    /// The trial that chose it, when one ran.
    pub(crate) trial: Option<Trial>,
}

/// The one entry every command plans through: the proposal ([`propose`]), and when several
/// index walks qualify, the cached winner of the query's shape while it stays good, else a
/// trial ([`trial`]) whose winner is cached.
pub(crate) fn choose<'f>(
    planning: &mut Planning<'_>,
    query: &Query<'f, '_>,
) -> Result<Planned<'f>, Error> {
    let (meta, ns) = (planning.meta, planning.ns);
    let plans = match propose(meta, ns, query.filter, query.hint)? {
        Proposal::One(access) => {
            return Ok(Planned {
                access,
                trial: None,
            });
        }
        Proposal::Several(plans) => plans,
    };
    let key = cache::Key::of(meta, query.filter, query.sort, query.projection);
    if let Some(cache) = planning.cache
        && let Some(entry) = cache.lookup(&key, meta)
    {
        let same =
            |p: &IndexAccess| p.name == entry.index && p.wildcard_path == entry.wildcard_path;
        if let Some(i) = plans.iter().position(same) {
            let budget = trial::replan_budget(&entry);
            let one = std::slice::from_ref(&plans[i]);
            let stats = trial::run(
                planning.walker,
                meta,
                ns,
                query.compiled,
                one,
                budget,
                query.want,
            )?;
            if trial::still_good(&stats[0], query.want) {
                cache.hit();
                let mut plans = plans;
                return Ok(Planned {
                    access: Access::Index(plans.swap_remove(i)),
                    trial: None,
                });
            }
        }
        cache.remove(&key);
    }
    let budget = trial::budget(meta);
    let stats = trial::run(
        planning.walker,
        meta,
        ns,
        query.compiled,
        &plans,
        budget,
        query.want,
    )?;
    let winner = trial::best(&stats);
    if let Some(cache) = planning.cache {
        let chosen = &plans[winner];
        let shown = |d: Option<&RawDocument>| {
            d.and_then(|d| bson::Document::try_from(d).ok())
                .unwrap_or_default()
        };
        let entry = cache::Cached::new(
            meta,
            &chosen.name,
            chosen.wildcard_path.as_deref(),
            stats[winner].works(),
            planning.now_ms,
            bson::doc! {
                "query": shown(query.filter),
                "sort": shown(query.sort),
                "projection": shown(query.projection),
            },
        );
        cache.insert(key, entry);
    }
    Ok(Planned {
        access: Access::Index(plans[winner].clone()),
        trial: Some(Trial { plans, stats }),
    })
}

/// The plan the static ranking alone picks (the first of a proposal).
#[cfg(test)]
pub(crate) fn static_choice<'f>(
    meta: &CollectionMeta,
    ns: &Namespace,
    filter: Option<&'f RawDocument>,
    hint: &Hint,
) -> Result<Access<'f>, Error> {
    Ok(match propose(meta, ns, filter, hint)? {
        Proposal::One(access) => access,
        Proposal::Several(mut plans) => Access::Index(plans.remove(0)),
    })
}

/// The secondary indexes other than wildcard indexes.
fn ordinary(meta: &CollectionMeta) -> impl Iterator<Item = &IndexMeta> {
    meta.indexes.iter().filter(|i| i.spec.wildcard.is_none())
}

/// An index walk that yields the filter's candidates already in `sort` order (each field
/// ascending when `true`), if an index provides it: its key pattern continues, after
/// leading fields each pinned to one value, with exactly the sort's fields, all in the
/// sort's directions (walked forward) or all opposite (walked backward); none of the sort
/// fields is multikey (an array sorts by its smallest or largest element, which is not
/// where a bounded walk first meets it); and it holds every match. Only the hinted index
/// is considered when there is a hint. `_id_` is left to the command's own `_id` walk.
pub(crate) fn choose_sorted(
    meta: &CollectionMeta,
    ns: &Namespace,
    filter: Option<&RawDocument>,
    hint: &Hint,
    sort: &[(&str, bool)],
) -> Result<Option<IndexAccess>, Error> {
    if sort.is_empty() {
        return Ok(None);
    }
    let candidates = sort_candidates(meta, ns, hint)?;
    let predicates = Predicates::of(filter);
    for candidate in candidates {
        let (mut access, bounds) = candidate.access(&predicates);
        let Some(reverse) = provides(&candidate, &bounds, sort) else {
            continue;
        };
        if *hint == Hint::None && !holds_every_match(&candidate, &bounds, filter, &predicates) {
            continue;
        }
        access.reverse = reverse;
        return Ok(Some(access));
    }
    Ok(None)
}

/// The indexes that may provide a sort: the hinted one, else every ordinary index that is
/// not hidden (none for a `$natural` or `_id_` hint, or a hinted wildcard index).
fn sort_candidates<'m>(
    meta: &'m CollectionMeta,
    ns: &Namespace,
    hint: &Hint,
) -> Result<Vec<Candidate<'m>>, Error> {
    Ok(match hint {
        Hint::Natural(_) | Hint::Id => Vec::new(),
        Hint::None => ordinary(meta)
            .filter(|i| !i.spec.hidden)
            .map(Candidate::secondary)
            .collect(),
        forced => match hinted(meta, ns, forced)? {
            Hinted::Index(candidate) => vec![candidate],
            Hinted::Wildcard(_) => Vec::new(),
        },
    })
}

/// `Some(reverse)` when walking `candidate` within `bounds` yields `sort` order.
fn provides(
    candidate: &Candidate<'_>,
    bounds: &bounds::Bounds,
    sort: &[(&str, bool)],
) -> Option<bool> {
    let start = candidate.fields.iter().position(|f| f.path == sort[0].0)?;
    if start > bounds.point_fields || bounds.point_keys[..start].iter().any(|p| p.len() != 1) {
        return None;
    }
    sort_direction(&candidate.fields[start..], sort)
}

/// `Some(reverse)` when index fields `fields` begin with exactly the fields of `sort`, none
/// multikey, none hashed, all in the sort's directions (walked forward, `false`) or all
/// opposite (walked backward, `true`).
fn sort_direction(fields: &[FieldView<'_>], sort: &[(&str, bool)]) -> Option<bool> {
    let fields = fields.get(..sort.len())?;
    let mut reverse = None;
    for (field, (path, ascending)) in fields.iter().zip(sort) {
        if field.path != *path || !field.multikey.is_empty() {
            return None;
        }
        let forward = match field.kind {
            KeyKind::Ascending => *ascending,
            KeyKind::Descending => !*ascending,
            KeyKind::Hashed => return None,
        };
        match reverse {
            None => reverse = Some(!forward),
            Some(r) if r != forward => {}
            Some(_) => return None,
        }
    }
    reverse
}

/// Validates `hint` against the collection (for commands that may not plan at all, such
/// as a count without a filter).
pub(crate) fn check_hint(meta: &CollectionMeta, ns: &Namespace, hint: &Hint) -> Result<(), Error> {
    match hint {
        Hint::None | Hint::Natural(_) | Hint::Id => Ok(()),
        other => hinted(meta, ns, other).map(|_| ()),
    }
}

/// The index a hint names; 2 BadValue as mongod words it when none does.
fn hinted<'m>(meta: &'m CollectionMeta, ns: &Namespace, hint: &Hint) -> Result<Hinted<'m>, Error> {
    let found = match hint {
        Hint::Id => return Ok(Hinted::Index(Candidate::id())),
        Hint::Name(name) => meta.indexes.iter().find(|i| i.name() == name),
        Hint::Pattern(pattern) => {
            let wanted = bson::Document::try_from(pattern.as_ref())
                .map(|p| crate::index::canonical_key(&bson::Bson::Document(p)))
                .ok();
            meta.indexes.iter().find(|i| {
                wanted.as_ref().is_some_and(|w| {
                    *w == crate::index::canonical_key(&bson::Bson::Document(
                        i.spec.key_pattern.clone(),
                    ))
                })
            })
        }
        Hint::None | Hint::Natural(_) => None,
    };
    match found {
        Some(index) if !index.spec.hidden && index.spec.wildcard.is_some() => {
            Ok(Hinted::Wildcard(index))
        }
        Some(index) if !index.spec.hidden => Ok(Hinted::Index(Candidate::secondary(index))),
        _ => Err(Error::new(
            ErrorCode::BadValue,
            format!(
                "error processing query: ns={ns} planner returned error :: caused by :: hint \
                 provided does not correspond to an existing index"
            ),
        )),
    }
}

/// Whether `candidate` holds an entry for every document the filter matches (sparse and
/// partial indexes leave some documents out).
fn holds_every_match(
    candidate: &Candidate<'_>,
    bounds: &bounds::Bounds,
    filter: Option<&RawDocument>,
    predicates: &Predicates<'_>,
) -> bool {
    let Some(index) = candidate.index else {
        return true;
    };
    if index.spec.sparse && !bounds.excludes_missing {
        return false;
    }
    match &index.spec.partial {
        Some(partial) => implies::implies(filter, predicates, &partial.document),
        None => true,
    }
}

/// The value of an `_id` equality at the top level of `filter` (`{_id: v}` or
/// `{_id: {$eq: v}}`), for the `_id_` index to propose the one candidate. Regular
/// expressions, arrays and other operators are left to the other paths.
pub(crate) fn id_equality(filter: &RawDocument) -> Option<RawBsonRef<'_>> {
    let value = filter.get("_id").ok()??;
    let value = match value {
        RawBsonRef::Document(spec) => {
            let mut elements = spec.iter_elements();
            let first = elements.next()?.ok()?;
            if !first.key().as_str().starts_with('$') {
                value
            } else if first.key().as_str() == "$eq" && elements.next().is_none() {
                first.value().ok()?
            } else {
                return None;
            }
        }
        other => other,
    };
    match value {
        RawBsonRef::RegularExpression(_) | RawBsonRef::Array(_) => None,
        value => Some(value),
    }
}
