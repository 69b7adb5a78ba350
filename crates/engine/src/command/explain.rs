//! `explain` (issue 17, first part): the plan the planner chooses for a find, count,
//! distinct, aggregate, update, delete or findAndModify, in mongod's shape
//! (`queryPlanner.winningPlan` as a stage tree, `rejectedPlans`, and at the
//! `executionStats`/`allPlansExecution` verbosities the counts of a run: `nReturned`,
//! `totalKeysExamined`, `totalDocsExamined`). Writes are not performed: their counts are
//! those of selecting the documents they would change.
//!
//! The stage tree of the access path is `plan::explain`'s; this module only parses the
//! explained command, wraps the tree in the stages the command adds (SORT, SKIP, LIMIT,
//! PROJECTION_*, COUNT, UPDATE, DELETE) and counts.

use super::args::{self, wrong_type};
use super::cursor::corrupt_record;
use super::find::SortedRead;
use super::read_args::{self, Hint};
use super::write::check_hint;
use super::{Request, name_of};
use crate::engine::Engine;
use crate::error::{Error, ErrorCode};
use crate::plan::{self, Access};
use crate::spill::{SortStats, Sorter};
use crate::store::{CollectionMeta, Namespace, Reader, WalkPosition};
use bson::raw::RawBsonRef;
use bson::{Bson, Document, RawDocument, doc};
use query::Filter;
use std::collections::HashSet;

/// What the explained command asks, as far as planning goes.
struct Explained<'a> {
    ns: Namespace,
    filter: Option<&'a RawDocument>,
    hint: Hint,
    sort: Option<&'a RawDocument>,
    projection: Option<&'a RawDocument>,
    skip: u64,
    limit: Option<u64>,
    /// The stage the command wraps the read in (`COUNT`, `UPDATE`, `DELETE`), if any.
    wrapper: Option<&'static str>,
    /// The stages after a leading `$match` (aggregate only).
    pipeline: Option<Vec<Bson>>,
    /// distinct's `key`.
    distinct_key: Option<&'a str>,
    /// find's `allowDiskUse`: whether the SORT stage may spill.
    allow_disk_use: bool,
    /// The SORT stage's memory limit (`memLimit`).
    bytes_max: usize,
    /// find's `min`/`max`: one range of the hinted index, shown as mongod shows a simple
    /// range (`indexBounds: {}`).
    min_max: plan::min_max::MinMax<'a>,
}

/// `explain: {<command>}, verbosity`.
pub(crate) fn explain(engine: &Engine, request: &Request<'_>) -> Result<Document, Error> {
    args::check_fields(request, &["verbosity"])?;
    let inner = match read_args::field(request, "explain")? {
        Some(RawBsonRef::Document(inner)) => inner,
        Some(other) => return Err(wrong_type(request, "explain", other, "object")),
        None => unreachable!("the command name is the first field"),
    };
    let verbosity = match read_args::field(request, "verbosity")? {
        None => "allPlansExecution",
        Some(RawBsonRef::String(v @ ("queryPlanner" | "executionStats" | "allPlansExecution"))) => {
            v
        }
        Some(RawBsonRef::String(other)) => {
            return Err(Error::new(
                ErrorCode::BadValue,
                format!(
                    "Enumeration value '{other}' for field 'explain.verbosity' is not a valid \
                     value."
                ),
            ));
        }
        Some(other) => return Err(wrong_type(request, "verbosity", other, "string")),
    };
    explain_command(engine, request, inner, verbosity)
}

/// Explains `inner` (a command of `request`'s database and connection) at `verbosity`;
/// also what `aggregate` with `explain: true` answers.
pub(crate) fn explain_command(
    engine: &Engine,
    request: &Request<'_>,
    inner: &RawDocument,
    verbosity: &str,
) -> Result<Document, Error> {
    let name = name_of(inner)?;
    let inner_request = Request::new(request.db, name, inner, request.ctx);
    let mut explained = parse(&inner_request)?;
    explained.bytes_max = engine.sorting.bytes_max();
    let compiled = explained.filter.map(Filter::parse).transpose()?;
    let started = engine.host.now_millis();
    let store = engine.store();
    let reader = store.read()?;
    let meta = reader.collection(&explained.ns)?;
    let mut tried = Tried::default();
    let (access_stage, counts) = match &meta {
        None => (doc! { "stage": "EOF" }, Counts::default()),
        Some(meta) => {
            let ordered = explained.sort.is_some() || explained.pipeline.is_some();
            let want = match (ordered, explained.limit) {
                (false, Some(limit)) => Some(limit.saturating_add(explained.skip)),
                _ => None,
            };
            let query = plan::Query {
                sort: explained.sort,
                projection: explained.projection,
                want,
                ..plan::Query::of(explained.filter, compiled.as_ref(), &explained.hint)
            };
            let mut walker = &reader;
            let mut planning = plan::Planning {
                meta,
                ns: &explained.ns,
                walker: &mut walker,
                cache: None,
                now_ms: started,
            };
            let planned = if explained.min_max.is_set() {
                // The one range `min`/`max` name, as find walks it: no choice, no cache.
                let walk = plan::min_max::access(
                    meta,
                    &explained.ns,
                    &explained.hint,
                    &explained.min_max,
                )?;
                let order = super::find::parse_order(explained.sort, &explained.hint)?;
                super::find::min_max_sorts(&order)?;
                plan::Planned {
                    access: Access::Index(walk),
                    trial: None,
                }
            } else {
                plan::choose(&mut planning, &query)?
            };
            let mut access = planned.access;
            let mut merge = None;
            if !explained.min_max.is_set() {
                match explained.sorted_walk(meta, &access)? {
                    Some(SortedRead::Walk(sorted)) => {
                        access = Access::Index(sorted);
                        explained.sort = None;
                    }
                    Some(SortedRead::Merge(merged)) => {
                        let sort = explained.sort.take().expect("a merged sort has a sort");
                        merge = Some((merged, sort));
                    }
                    None => {}
                }
            }
            let key =
                plan::cache::Key::of(meta, explained.filter, explained.sort, explained.projection);
            tried.hashes = Some((key.query_hash(), key.plan_cache_key(meta)));
            if let Some(trial) = &planned.trial {
                tried.plans = explained.tried(meta, trial, &access);
            }
            let by_keys = explained.distinct_key.and_then(|key| {
                plan::exact::distinct_scan(meta, key, explained.filter, &explained.hint)
            });
            let exact = match (&access, explained.wrapper) {
                (Access::Index(index), Some("COUNT")) => {
                    plan::exact::count_scan(meta, index, explained.filter)
                }
                _ => None,
            };
            if let Some((merged, sort)) = merge {
                let shown = Document::try_from(sort).unwrap_or_default();
                let stage = plan::explain::sort_merge_stage(meta, &merged, explained.filter, shown);
                let counts = if verbosity == "queryPlanner" {
                    Counts::default()
                } else {
                    explained.merge_counts(
                        engine,
                        &reader,
                        meta,
                        &merged,
                        sort,
                        compiled.as_ref(),
                    )?
                };
                (stage, counts)
            } else if let Some(index) = by_keys {
                let mut counts = Counts::default();
                if verbosity != "queryPlanner" {
                    let deadline = super::cursor::Deadline::start(engine.host.as_ref(), None);
                    let ns = &explained.ns;
                    let (keys, docs) = super::count::distinct_scan(
                        &reader,
                        meta,
                        ns,
                        index.name(),
                        &deadline,
                        |_| Ok(()),
                    )?;
                    counts = Counts {
                        keys,
                        docs,
                        matched: docs,
                        ..Counts::default()
                    };
                }
                (plan::exact::distinct_stage(index), counts)
            } else if let Some(scan) = exact {
                let mut counts = Counts::default();
                if verbosity != "queryPlanner" {
                    reader.walk_entries(meta, &scan.index, &scan.access.ranges, |_| {
                        counts.keys += 1;
                        Ok::<bool, Error>(true)
                    })?;
                    counts.matched = counts.keys;
                }
                (plan::exact::stage(meta, &scan), counts)
            } else {
                let mut stage = plan::explain::access_stage(meta, &access, explained.filter);
                if explained.min_max.is_set()
                    && let Ok(scan) = stage.get_document_mut("inputStage")
                {
                    // mongod's simple range: its bounds are `min`/`max`, not intervals.
                    scan.insert("indexBounds", Document::new());
                }
                let counts = if verbosity == "queryPlanner" {
                    Counts::default()
                } else {
                    let sorter = explained.sorter(engine)?;
                    count(
                        &reader,
                        meta,
                        &explained.ns,
                        &access,
                        compiled.as_ref(),
                        sorter,
                        explained.streamed_stop(),
                    )?
                };
                (stage, counts)
            }
        }
    };
    let returned = explained.returned(counts.matched);
    let winning = explained.wrap(access_stage);
    let mut planner = doc! {
        "namespace": explained.ns.full(),
        "indexFilterSet": false,
        "parsedQuery": explained
            .filter
            .and_then(|f| Document::try_from(f).ok())
            .unwrap_or_default(),
    };
    if let Some((query_hash, plan_cache_key)) = &tried.hashes {
        planner.insert("queryHash", query_hash);
        planner.insert("planCacheKey", plan_cache_key);
    }
    planner.insert("maxIndexedOrSolutionsReached", false);
    planner.insert("maxIndexedAndSolutionsReached", false);
    planner.insert("maxScansToExplodeReached", false);
    planner.insert("winningPlan", winning.clone());
    let rejected: Vec<Bson> = tried
        .plans
        .iter()
        .filter(|p| !p.won)
        .map(|p| Bson::Document(p.stage.clone()))
        .collect();
    planner.insert("rejectedPlans", rejected);
    let mut reply = doc! { "explainVersion": "1" };
    match &explained.pipeline {
        Some(stages) => {
            let mut all = vec![Bson::Document(
                doc! { "$cursor": { "queryPlanner": planner } },
            )];
            all.extend(stages.iter().cloned());
            reply.insert("stages", all);
        }
        None => {
            reply.insert("queryPlanner", planner);
        }
    }
    if verbosity != "queryPlanner" {
        let mut stats = match &counts.failure {
            None => doc! { "executionSuccess": true },
            Some(error) => doc! {
                "executionSuccess": false,
                "errorMessage": error.to_string(),
                "errorCode": error.code().code(),
            },
        };
        stats.extend(doc! {
            "nReturned": to_i64(returned),
            "executionTimeMillis": engine.host.now_millis().saturating_sub(started),
            "totalKeysExamined": to_i64(counts.keys),
            "totalDocsExamined": to_i64(counts.docs),
            "executionStages": annotate(winning, &counts, returned),
        });
        if verbosity == "allPlansExecution" {
            let all: Vec<Bson> = tried
                .plans
                .iter()
                .map(|p| Bson::Document(p.execution(&explained)))
                .collect();
            stats.insert("allPlansExecution", all);
        }
        reply.insert("executionStats", stats);
    }
    let mut command =
        Document::try_from(inner).map_err(|e| Error::new(ErrorCode::InvalidBson, e.to_string()))?;
    command.insert("$db", request.db);
    reply.insert("command", command);
    reply.insert(
        "serverInfo",
        doc! {
            "host": &engine.host.facts().hostname,
            "version": crate::version::SERVER_VERSION,
            "gitVersion": "",
        },
    );
    Ok(reply)
}

fn to_i64(n: u64) -> i64 {
    i64::try_from(n).unwrap_or(i64::MAX)
}

/// Reads what the explained command names; options planning does not need are left to the
/// command itself (explain does not run it).
fn parse<'a>(request: &Request<'a>) -> Result<Explained<'a>, Error> {
    let ns = args::collection(request)?;
    let mut explained = Explained {
        ns,
        filter: None,
        hint: Hint::None,
        sort: None,
        projection: None,
        skip: 0,
        limit: None,
        wrapper: None,
        pipeline: None,
        distinct_key: None,
        allow_disk_use: false,
        bytes_max: crate::limits::SORT_BYTES_MAX,
        min_max: plan::min_max::MinMax::default(),
    };
    match request.name {
        "find" => {
            explained.filter = read_args::object_or_null(request, "filter")?;
            explained.sort = read_args::object_or_null(request, "sort")?.filter(|s| !s.is_empty());
            explained.projection = read_args::object_or_null(request, "projection")?;
            explained.skip = read_args::non_negative(request, "skip")?.unwrap_or(0);
            explained.limit = read_args::non_negative(request, "limit")?.filter(|&n| n > 0);
            explained.hint = read_args::hint(request)?;
            explained.allow_disk_use = args::opt_bool(request, "allowDiskUse")?.unwrap_or(false);
            explained.min_max = plan::min_max::MinMax::new(
                read_args::object_or_null(request, "min")?,
                read_args::object_or_null(request, "max")?,
            )?;
        }
        "count" => {
            explained.filter = read_args::object_or_null(request, "query")?;
            explained.skip = read_args::non_negative(request, "skip")?.unwrap_or(0);
            explained.limit = read_args::non_negative(request, "limit")?.filter(|&n| n > 0);
            explained.hint = read_args::hint(request)?;
            explained.wrapper = Some("COUNT");
        }
        "distinct" => {
            explained.distinct_key = Some(read_args::required_str(request, "key")?);
            explained.filter = read_args::object_or_null(request, "query")?;
            explained.hint = read_args::hint(request)?;
        }
        "aggregate" => {
            let stages = read_args::required_array(request, "pipeline")?;
            let mut rest = Vec::new();
            for (i, stage) in stages.into_iter().enumerate() {
                let stage = stage.map_err(|e| Error::new(ErrorCode::InvalidBson, e.to_string()))?;
                let RawBsonRef::Document(stage) = stage else {
                    return Err(wrong_type(
                        request,
                        &format!("pipeline.{i}"),
                        stage,
                        "object",
                    ));
                };
                if i == 0
                    && let Ok(Some(RawBsonRef::Document(filter))) = stage.get("$match")
                {
                    explained.filter = Some(filter);
                    continue;
                }
                let stage = Document::try_from(stage)
                    .map_err(|e| Error::new(ErrorCode::InvalidBson, e.to_string()))?;
                rest.push(Bson::Document(stage));
            }
            explained.hint = read_args::hint(request)?;
            explained.pipeline = Some(rest);
        }
        "update" | "delete" => {
            let list = if request.name == "update" {
                "updates"
            } else {
                "deletes"
            };
            let statements = read_args::required_array(request, list)?;
            let Some(Ok(RawBsonRef::Document(first))) = statements.into_iter().next() else {
                return Err(Error::new(
                    ErrorCode::Other(10, "InvalidLength"),
                    "Write batch sizes must be between 1 and 100000. Got 0 operations.",
                ));
            };
            explained.filter = match first.get("q") {
                Ok(Some(RawBsonRef::Document(q))) => Some(q),
                _ => None,
            };
            explained.hint = check_hint(first.get("hint").ok().flatten())?;
            let single = if request.name == "update" {
                !matches!(first.get("multi"), Ok(Some(RawBsonRef::Boolean(true))))
            } else {
                !matches!(first.get("limit"), Ok(Some(v)) if v.as_i32() == Some(0) || v.as_i64() == Some(0) || v.as_f64() == Some(0.0))
            };
            if single {
                explained.limit = Some(1);
            }
            explained.wrapper = Some(if request.name == "update" {
                "UPDATE"
            } else {
                "DELETE"
            });
        }
        "findAndModify" | "findandmodify" => {
            explained.filter = read_args::object_or_null(request, "query")?;
            explained.sort = read_args::object_or_null(request, "sort")?.filter(|s| !s.is_empty());
            explained.hint = check_hint(read_args::field(request, "hint")?)?;
            explained.limit = Some(1);
            let remove = matches!(
                read_args::field(request, "remove")?,
                Some(RawBsonRef::Boolean(true))
            );
            explained.wrapper = Some(if remove { "DELETE" } else { "UPDATE" });
        }
        other => {
            return Err(Error::new(
                ErrorCode::CommandNotFound,
                format!("Explain failed due to unknown command: {other}"),
            ));
        }
    }
    Ok(explained)
}

impl Explained<'_> {
    /// The SORT stage's sort, run at the `executionStats` verbosities over the matches
    /// (it may spill, as the command would), for its counters.
    fn sorter(&self, engine: &Engine) -> Result<Option<Sorter>, Error> {
        let Some(sort) = self.sort else {
            return Ok(None);
        };
        if self.pipeline.is_some() || self.wrapper.is_some() {
            return Ok(None);
        }
        let spec = query::SortSpec::parse(sort)?;
        let spill_to = engine.spill_to(self.allow_disk_use);
        let sorter = Sorter::new(
            &spec,
            self.keep(),
            self.bytes_max,
            spill_to,
            crate::spill::FIND_CONTEXT,
        );
        Ok(Some(sorter))
    }

    /// A merged sort run as `find` runs it, for its counts: each walk's keys and distinct
    /// records, the documents fetched, the merge's duplicates.
    fn merge_counts(
        &self,
        engine: &Engine,
        reader: &Reader<'_>,
        meta: &CollectionMeta,
        merge: &plan::SortMerge,
        sort: &RawDocument,
        filter: Option<&Filter>,
    ) -> Result<Counts, Error> {
        let spec = query::SortSpec::parse(sort)?;
        let deadline = super::cursor::Deadline::start(engine.host.as_ref(), None);
        let run = super::sort_merge::run(
            reader,
            meta,
            &self.ns,
            filter,
            merge,
            &spec,
            self.keep(),
            usize::MAX,
            &deadline,
        )?;
        let merged = run.expect("an unbounded merge always runs");
        Ok(Counts {
            keys: deadline.keys(),
            docs: deadline.docs(),
            matched: merged.docs.len() as u64,
            branches: merged
                .walks
                .iter()
                .map(|&(keys, unique)| Branch { keys, unique })
                .collect(),
            merge: Some((merged.dups_tested, merged.dups_dropped)),
            ..Counts::default()
        })
    }

    /// The index walk (or merged walks) that provide a find's sort, as `find` chooses it.
    fn sorted_walk(
        &self,
        meta: &CollectionMeta,
        access: &Access<'_>,
    ) -> Result<Option<SortedRead>, Error> {
        let Some(sort) = self
            .sort
            .filter(|_| self.wrapper.is_none() && self.pipeline.is_none())
        else {
            return Ok(None);
        };
        let spec = query::SortSpec::parse(sort)?;
        super::find::sorted_walk(
            meta,
            &self.ns,
            self.filter,
            &self.hint,
            self.limit.is_some(),
            access,
            &spec,
        )
    }

    /// The plans of `trial`, the one that runs (`chosen`) first, each in its stage tree.
    fn tried(
        &self,
        meta: &CollectionMeta,
        trial: &plan::Trial,
        chosen: &Access<'_>,
    ) -> Vec<TriedPlan> {
        let won = |p: &plan::IndexAccess| matches!(chosen, Access::Index(c) if c.name == p.name && c.wildcard_path == p.wildcard_path);
        let mut order: Vec<usize> = (0..trial.plans.len()).collect();
        order.sort_by_key(|&i| !won(&trial.plans[i]));
        order
            .into_iter()
            .map(|i| {
                let access = Access::Index(trial.plans[i].clone());
                let stage = plan::explain::access_stage(meta, &access, self.filter);
                TriedPlan {
                    stage: self.wrap(stage),
                    stats: trial.stats[i].clone(),
                    won: won(&trial.plans[i]),
                }
            })
            .collect()
    }

    /// The matches a limited find can use: `skip + limit` (`None`: no limit).
    fn keep(&self) -> Option<usize> {
        self.limit
            .map(|n| usize::try_from(n.saturating_add(self.skip)).unwrap_or(usize::MAX))
    }

    /// Where a find that streams its results in access order (no blocking sort, no
    /// wrapping command or pipeline) stops reading: after `skip + limit` matches.
    fn streamed_stop(&self) -> Option<u64> {
        let streams = self.sort.is_none() && self.wrapper.is_none() && self.pipeline.is_none();
        self.limit
            .filter(|_| streams)
            .map(|limit| limit.saturating_add(self.skip))
    }

    /// The documents the command hands on, of `matched` matches.
    fn returned(&self, matched: u64) -> u64 {
        let n = matched.saturating_sub(self.skip);
        self.limit.map_or(n, |limit| n.min(limit))
    }

    /// The access path's stage inside the stages this command adds, innermost first.
    fn wrap(&self, mut stage: Document) -> Document {
        if let Some(sort) = self.sort.and_then(|s| Document::try_from(s).ok()) {
            let mut sorted = doc! {
                "stage": "SORT",
                "sortPattern": sort,
                "memLimit": to_i64(self.bytes_max as u64),
            };
            if let Some(limit) = self.limit {
                sorted.insert("limitAmount", to_i64(limit.saturating_add(self.skip)));
            }
            sorted.insert("type", "simple");
            sorted.insert("inputStage", stage);
            stage = sorted;
        }
        if self.skip > 0 {
            stage = doc! { "stage": "SKIP", "skipAmount": to_i64(self.skip), "inputStage": stage };
        }
        if let (Some(limit), None, None) = (self.limit, self.sort, self.wrapper) {
            stage = doc! { "stage": "LIMIT", "limitAmount": to_i64(limit), "inputStage": stage };
        }
        if let Some(projection) = self.projection.and_then(|p| Document::try_from(p).ok())
            && !projection.is_empty()
        {
            stage = doc! {
                "stage": "PROJECTION_DEFAULT",
                "transformBy": projection,
                "inputStage": stage,
            };
        }
        if let Some(wrapper) = self.wrapper {
            stage = doc! { "stage": wrapper, "inputStage": stage };
        }
        stage
    }
}

/// The plans a trial weighed, as explain shows them.
#[derive(Default)]
struct Tried {
    /// mongod's `queryHash` and `planCacheKey` of the query.
    hashes: Option<(String, String)>,
    /// Each plan of the trial, the winner first.
    plans: Vec<TriedPlan>,
}

/// One plan of a trial: its stage tree and what it did in the trial.
struct TriedPlan {
    stage: Document,
    stats: plan::trial::TrialStats,
    /// Whether it is the plan that runs.
    won: bool,
}

impl TriedPlan {
    /// The plan's entry of `allPlansExecution`: its trial's counts.
    fn execution(&self, explained: &Explained<'_>) -> Document {
        let counts = Counts {
            keys: self.stats.keys,
            docs: self.stats.docs,
            matched: self.stats.results,
            ..Counts::default()
        };
        let returned = explained.returned(counts.matched);
        doc! {
            "nReturned": to_i64(returned),
            "executionTimeMillisEstimate": 0i64,
            "totalKeysExamined": to_i64(counts.keys),
            "totalDocsExamined": to_i64(counts.docs),
            "executionStages": annotate(self.stage.clone(), &counts, returned),
        }
    }
}

/// What a run of the access path examined.
#[derive(Debug, Default)]
struct Counts {
    keys: u64,
    docs: u64,
    matched: u64,
    /// Per walk of an `$or` plan, in branch order.
    branches: Vec<Branch>,
    /// What the SORT stage did, when it ran.
    sort: Option<SortStats>,
    /// A SORT_MERGE's records tested for duplicates and dropped as duplicates.
    merge: Option<(u64, u64)>,
    /// Why the run stopped (a sort over its memory limit), if it did.
    failure: Option<Error>,
}

/// What one walk of an `$or` plan examined.
#[derive(Debug, Default, Clone, Copy)]
struct Branch {
    keys: u64,
    /// Distinct records among its keys (what its IXSCAN hands the OR).
    unique: u64,
}

/// Runs the access path once, counting index keys, fetched documents and matches; with
/// `stop`, only until that many matches (a find that streams its results stops there).
fn count(
    reader: &Reader<'_>,
    meta: &CollectionMeta,
    ns: &Namespace,
    access: &Access<'_>,
    filter: Option<&Filter>,
    mut sorter: Option<Sorter>,
    stop: Option<u64>,
) -> Result<Counts, Error> {
    let more = |counts: &Counts| stop.is_none_or(|stop| counts.matched < stop);
    let mut counts = Counts::default();
    let mut test = |rid: u64, bytes: &[u8], counts: &mut Counts| -> Result<(), Error> {
        counts.docs += 1;
        let doc = RawDocument::from_bytes(bytes).map_err(|_| corrupt_record(ns, rid))?;
        if filter.map_or(Ok(true), |f| f.try_matches(doc))? {
            counts.matched += 1;
            if let Some(sorting) = &mut sorter
                && counts.failure.is_none()
                && let Err(error) = sorting.push(doc.to_owned())
            {
                counts.failure = Some(error);
            }
        }
        Ok(())
    };
    match access {
        Access::Collection => {
            for record in reader.scan(meta, None)? {
                if !more(&counts) {
                    break;
                }
                let (rid, bytes) = record?;
                test(rid, &bytes, &mut counts)?;
            }
        }
        Access::Id(id) => {
            if let Some((rid, bytes)) = reader.find_id(meta, *id)? {
                counts.keys += 1;
                test(rid, &bytes, &mut counts)?;
            }
        }
        Access::Index(_) | Access::Or(_) => {
            let mut seen = HashSet::new();
            for index in access.walks() {
                if !more(&counts) {
                    break;
                }
                let mut branch = Branch::default();
                let mut mine = HashSet::new();
                let mut position = WalkPosition::default();
                reader.walk(
                    meta,
                    &index.target,
                    &index.ranges,
                    index.reverse,
                    &mut position,
                    |rid, bytes| -> Result<bool, Error> {
                        counts.keys += 1;
                        branch.keys += 1;
                        if mine.insert(rid) {
                            branch.unique += 1;
                        }
                        if seen.insert(rid) {
                            test(rid, bytes, &mut counts)?;
                        }
                        Ok(more(&counts))
                    },
                )?;
                counts.branches.push(branch);
            }
        }
    }
    if let Some(sorting) = sorter {
        counts.sort = Some(sorting.stats());
        if counts.failure.is_none() {
            match sorting.finish() {
                // Dropped at once: a spill file goes with it.
                Ok(sorted) => counts.sort = Some(sorted.stats()),
                Err(error) => counts.failure = Some(error),
            }
        }
    }
    Ok(counts)
}

/// The winning plan with each stage's counts (`executionStages`).
fn annotate(mut stage: Document, counts: &Counts, returned: u64) -> Document {
    let kind = stage.get_str("stage").unwrap_or_default().to_owned();
    let (n, extra) = match kind.as_str() {
        "IXSCAN" => (counts.docs, Some(("keysExamined", counts.keys))),
        "COLLSCAN" | "FETCH" => (counts.matched, Some(("docsExamined", counts.docs))),
        "IDHACK" => (counts.matched, Some(("docsExamined", counts.docs))),
        "SUBPLAN" => (counts.matched, None),
        "COUNT_SCAN" => (counts.keys, Some(("keysExamined", counts.keys))),
        "DISTINCT_SCAN" => (counts.docs, Some(("keysExamined", counts.keys))),
        "OR" => {
            let tested: u64 = counts.branches.iter().map(|b| b.unique).sum();
            stage.insert("dupsTested", to_i64(tested));
            stage.insert("dupsDropped", to_i64(tested.saturating_sub(counts.docs)));
            (counts.docs, None)
        }
        "SORT_MERGE" => {
            let (tested, dropped) = counts.merge.unwrap_or_default();
            stage.insert("dupsTested", to_i64(tested));
            stage.insert("dupsDropped", to_i64(dropped));
            (counts.matched, None)
        }
        "SORT" => {
            if let Some(sort) = counts.sort {
                stage.insert("totalDataSizeSorted", to_i64(sort.bytes_sorted));
                stage.insert("usedDisk", sort.spills > 0);
                stage.insert("spills", to_i64(sort.spills));
            }
            (returned, None)
        }
        "SKIP" | "LIMIT" | "PROJECTION_DEFAULT" | "COUNT" | "UPDATE" | "DELETE" => (returned, None),
        _ => (0, None),
    };
    stage.insert("nReturned", to_i64(n));
    stage.insert("executionTimeMillisEstimate", 0i64);
    if let Some((name, value)) = extra {
        stage.insert(name, to_i64(value));
    }
    if kind == "IDHACK" {
        stage.insert("keysExamined", to_i64(counts.keys));
    }
    if let Ok(input) = stage.get_document("inputStage") {
        let input = annotate(input.clone(), counts, returned);
        stage.insert("inputStage", input);
    }
    if let Ok(inputs) = stage.get_array("inputStages") {
        let inputs: Vec<Bson> = inputs
            .iter()
            .enumerate()
            .map(|(i, input)| {
                let branch = counts.branches.get(i).copied().unwrap_or_default();
                let counts = Counts {
                    keys: branch.keys,
                    docs: branch.unique,
                    ..Counts::default()
                };
                let input = input.as_document().cloned().unwrap_or_default();
                Bson::Document(annotate(input, &counts, returned))
            })
            .collect();
        stage.insert("inputStages", inputs);
    }
    stage
}
