//! Aggregation pipelines: the `pipeline` array of an `aggregate` command
//! compiled once ([`Pipeline::parse`]) and run over documents the engine
//! supplies ([`Pipeline::run`], [`Pipeline::stream`]).
//!
//! Supported stages, with MongoDB's semantics and error codes:
//! `$match`, `$sort`, `$skip`, `$limit`, `$project`, `$addFields`/`$set`,
//! `$unset`, `$replaceRoot`/`$replaceWith`, `$group`, `$count`, `$unwind`,
//! `$sortByCount`, `$bucket`, `$bucketAuto` (without `granularity`), `$redact`, `$facet`, `$sample`, `$lookup` and `$unionWith` (the other collections come from the
//! engine through [`Foreign`]: [`Pipeline::stream_with`]) and `$documents`
//! (first stage only). `$group`
//! accumulators: `$sum`, `$avg`, `$min`, `$max`, `$first`, `$last`, `$push`,
//! `$addToSet`, `$count`, `$mergeObjects`, `$stdDevPop`, `$stdDevSamp`,
//! `$concatArrays`, `$setUnion`, `$firstN`, `$lastN`, `$minN`, `$maxN`,
//! `$top`, `$bottom`, `$topN` and `$bottomN`.
//!
//! Parsed here, carried out by the engine: a final `$out` or `$merge`
//! ([`Pipeline::output`]: [`Pipeline::run`] yields the documents they write)
//! and a leading `$listLocalSessions` ([`Pipeline::local_sessions`]: the
//! engine supplies the sessions as the input).
//!
//! Refused with NotImplemented (238), never answered wrongly: stages that
//! need the engine or that are not written yet (`$graphLookup`, `$geoNear`, `$collStats`, `$indexStats`,
//! `$currentOp`, `$changeStream`, `$search`, `$densify`, `$fill`,
//! `$setWindowFields`, ...),
//! the accumulators `$accumulator`, `$median` and `$percentile`, and
//! `$sum`/`$avg` over Decimal128 values. An unknown stage is 40324.
//!
//! Execution streams: `$match`, `$skip`, `$limit`, `$project`,
//! `$addFields`, `$unset`, `$replaceRoot`, `$unwind` and `$lookup` handle one document
//! at a time, and `$limit` stops pulling input once it has its documents.
//! `$sort`, `$group`, `$count`, `$facet` and `$sample` block: they drain their input
//! first. A `$sort` followed by `$skip`/`$limit` keeps only the documents
//! those can use (top-k). The first error ends the stream.

mod bucket;
mod bucket_auto;
mod fields;
mod group;
pub use group::GroupMemory;
mod group_n;
mod lookup;
mod output;
mod redact;
mod sample;
mod stages;
mod union_with;

use crate::error::QueryError;
use crate::filter::Filter;
use crate::limits::PIPELINE_DOCUMENT_BYTES_MAX;
use crate::sort::SortSpec;
use crate::variables::Variables;
use bson::RawBsonRef;
use bson::raw::{RawArray, RawDocumentBuf};
use stages::Stage;
use std::collections::BTreeSet;

pub use output::{
    CollStats, CurrentOp, LocalSessions, Merge, Output, Target, WhenMatched, WhenNotMatched,
};

/// A compiled aggregation pipeline.
///
/// ```
/// use bson::{rawdoc, RawArrayBuf, RawDocumentBuf};
/// use query::Pipeline;
///
/// let mut stages = RawArrayBuf::new();
/// stages.push(rawdoc! {"$match": {"n": {"$gt": 1}}});
/// stages.push(rawdoc! {"$group": {"_id": null, "total": {"$sum": "$n"}}});
/// let pipeline = Pipeline::parse(&stages).unwrap();
/// let input = (1..=3).map(|n| Ok(rawdoc! {"n": n}));
/// let out = pipeline.run(input).unwrap();
/// assert_eq!(out, vec![rawdoc! {"_id": null, "total": 5}]);
/// ```
#[derive(Debug, Clone)]
pub struct Pipeline {
    stages: Vec<Stage>,
    /// The name of the first stage as written (`None` for an empty pipeline).
    first: Option<String>,
    /// A leading `$listLocalSessions`, whose documents the engine supplies.
    local_sessions: Option<LocalSessions>,
    /// The leading stage was `$listSessions` (the sessions of `config.system.sessions`),
    /// not `$listLocalSessions`: it reads a collection.
    stored_sessions: bool,
    /// A leading `$currentOp`, whose documents (the operations running) the engine supplies.
    current_op: Option<CurrentOp>,
    /// A leading `$planCacheStats`.
    plan_cache_stats: bool,
    /// A leading `$indexStats`, whose documents (one per index) the engine supplies.
    index_stats: bool,
    /// A leading `$collStats`, whose one document the engine supplies.
    coll_stats: Option<CollStats>,
    /// A final `$out` or `$merge`, which the engine carries out.
    output: Option<Output>,
}

/// Stages that start a pipeline from something other than a collection: valid only
/// first, never inside `$facet`, and what a collectionless `aggregate: 1` needs.
const SOURCE_STAGES: &[&str] = &["$documents", "$listLocalSessions", "$currentOp"];

/// A stream of documents between stages.
type Documents<'a> = Box<dyn Iterator<Item = Result<RawDocumentBuf, QueryError>> + 'a>;

/// A stream of documents, as [`Foreign::scan`] returns them.
pub type DocumentStream<'a> = Box<dyn Iterator<Item = Result<RawDocumentBuf, QueryError>> + 'a>;

/// What the engine supplies to a pipeline it runs ([`Pipeline::stream_with`]): the other
/// collections of its database, which `$lookup` and `$unionWith` read, and the blocking sort
/// that `$sort` runs on (in memory unless the engine gives its own, which keeps to a memory
/// limit and may spill to disk).
pub trait Foreign {
    /// Every document of collection `name`, in natural order; none when there is no such
    /// collection (as MongoDB's `$lookup` finds nothing there).
    fn scan(&self, name: &str) -> Result<DocumentStream<'_>, QueryError>;

    /// A blocking `$sort`: every document of `input` in `spec` order, ties in input order
    /// (a stable sort), only the first `keep` when the stages after it bound what they use
    /// (`$limit`). The first error of `input` is the sort's error. The default sorts in
    /// memory, with no limit but the memory there is.
    fn sort<'a>(
        &'a self,
        spec: &'a SortSpec,
        keep: Option<usize>,
        input: DocumentStream<'a>,
    ) -> Result<DocumentStream<'a>, QueryError> {
        memory_sort(spec, keep, input)
    }

    /// How much a `$group` may hold in memory and whether past that it sorts the rest of
    /// its input through [`Foreign::sort`] (`allowDiskUse`). The default: no limit.
    fn group_memory(&self) -> GroupMemory {
        GroupMemory::UNBOUNDED
    }
}

/// [`Foreign::sort`] in memory: `input` keyed, then top-k (all when `keep` is `None`).
fn memory_sort<'a>(
    spec: &SortSpec,
    keep: Option<usize>,
    input: DocumentStream<'a>,
) -> Result<DocumentStream<'a>, QueryError> {
    let mut failure = None;
    let keyed = input.map_while(|item| match item {
        Ok(doc) => Some((spec.key(&doc), doc)),
        Err(e) => {
            failure = Some(e);
            None
        }
    });
    let sorted = crate::sort::top_k(keyed, keep, |(a, _), (b, _)| spec.compare_keys(a, b));
    match failure {
        Some(e) => Err(e),
        None => Ok(Box::new(sorted.into_iter().map(|(_, doc)| Ok(doc)))),
    }
}

/// No other collection: what [`Pipeline::stream`] and [`Pipeline::run`] give a
/// `$lookup` that names one (NotImplemented: only the engine has collections).
struct NoForeign;

impl Foreign for NoForeign {
    fn scan(&self, name: &str) -> Result<DocumentStream<'_>, QueryError> {
        Err(QueryError::NotImplemented(format!(
            "$lookup from '{name}' needs the database's collections: run the pipeline with \
             Pipeline::stream_with"
        )))
    }
}

impl Pipeline {
    /// Parses the `pipeline` array of an aggregate command (each element a
    /// one-field stage document).
    pub fn parse(stages: &RawArray) -> Result<Pipeline, QueryError> {
        Self::parse_with(stages, &crate::variables::NO_VARIABLES)
    }

    /// Parses a pipeline whose expressions may read the command's variables
    /// (`$$name` for a `let` variable, `$$NOW`).
    pub fn parse_with(stages: &RawArray, vars: &Variables) -> Result<Pipeline, QueryError> {
        Self::parse_stages(stages, None, vars)
    }

    /// Parses the sub-pipeline of one `$facet` output field.
    fn parse_facet(
        name: &str,
        stages: &RawArray,
        vars: &Variables,
    ) -> Result<Pipeline, QueryError> {
        Self::parse_stages(stages, Some(name), vars)
    }

    /// `facet` names the `$facet` field whose sub-pipeline this is.
    fn parse_stages(
        stages: &RawArray,
        facet: Option<&str>,
        vars: &Variables,
    ) -> Result<Pipeline, QueryError> {
        let mut parsed = Vec::new();
        let mut pipeline = Pipeline {
            stages: Vec::new(),
            first: None,
            local_sessions: None,
            stored_sessions: false,
            current_op: None,
            plan_cache_stats: false,
            index_stats: false,
            coll_stats: None,
            output: None,
        };
        let count = stages.into_iter().count();
        for (index, element) in stages.into_iter().enumerate() {
            let element = element.map_err(|e| QueryError::bad_value(e.to_string()))?;
            let RawBsonRef::Document(stage) = element else {
                return Err(match facet {
                    Some(name) => QueryError::location(
                        40171,
                        format!(
                            "elements of arrays in $facet spec must be non-empty objects, {name} \
                             argument contained an element of type {}: {}",
                            crate::filter::types::type_name(crate::filter::types::type_code(
                                &element
                            )),
                            fields::show_raw(element)
                        ),
                    ),
                    None => QueryError::TypeMismatch(
                        "Each element of the 'pipeline' array must be an object".to_owned(),
                    ),
                });
            };
            let name = bson_canonical::compare::elements(stage)
                .next()
                .map(|(name, _)| name.to_owned());
            if index == 0 {
                pipeline.first.clone_from(&name);
            }
            let special = name.as_deref().filter(|n| {
                SOURCE_STAGES.contains(n)
                    || matches!(
                        *n,
                        "$out"
                            | "$merge"
                            | "$planCacheStats"
                            | "$collStats"
                            | "$indexStats"
                            | "$listSessions"
                    )
            });
            let Some(name) = special else {
                parsed.extend(stages::parse_stage(stage, facet.is_some(), vars)?);
                continue;
            };
            let spec = match bson_canonical::compare::elements(stage).collect::<Vec<_>>()[..] {
                [(_, spec)] => spec,
                _ => {
                    return Err(QueryError::location(
                        40323,
                        "A pipeline stage specification object must contain exactly one field.",
                    ));
                }
            };
            if facet.is_some() {
                return Err(QueryError::location(
                    40600,
                    format!("{name} is not allowed to be used within a $facet stage"),
                ));
            }
            match name {
                "$out" | "$merge" => {
                    if index + 1 != count {
                        return Err(QueryError::location(
                            40601,
                            format!("{name} can only be the final stage in the pipeline"),
                        ));
                    }
                    pipeline.output = Some(if name == "$out" {
                        output::parse_out(spec)?
                    } else {
                        output::parse_merge(spec)?
                    });
                }
                _ => {
                    if index != 0 {
                        return Err(QueryError::location(
                            40602,
                            format!("{name} is only valid as the first stage in a pipeline."),
                        ));
                    }
                    if name == "$documents" {
                        parsed.extend(stages::parse_documents(spec, vars)?);
                    } else if name == "$planCacheStats" {
                        if !matches!(spec, RawBsonRef::Document(_)) {
                            return Err(QueryError::TypeMismatch(
                                "$planCacheStats value must be an object".to_owned(),
                            ));
                        }
                        pipeline.plan_cache_stats = true;
                    } else if name == "$indexStats" {
                        if !matches!(spec, RawBsonRef::Document(d) if d.is_empty()) {
                            return Err(QueryError::location(
                                28803,
                                "The $indexStats stage specification must be an empty object",
                            ));
                        }
                        pipeline.index_stats = true;
                    } else if name == "$collStats" {
                        pipeline.coll_stats = Some(output::parse_coll_stats(spec)?);
                    } else if name == "$currentOp" {
                        pipeline.current_op = Some(output::parse_current_op(spec)?);
                    } else {
                        pipeline.local_sessions = Some(output::parse_local_sessions(name, spec)?);
                        pipeline.stored_sessions = name == "$listSessions";
                    }
                }
            }
        }
        bound_sorts(&mut parsed);
        pipeline.stages = parsed;
        Ok(pipeline)
    }

    /// Whether the pipeline starts from a stage of its own (`$documents`,
    /// `$listLocalSessions`) rather than a collection: what `aggregate: 1` requires.
    pub fn is_collectionless(&self) -> bool {
        self.first
            .as_deref()
            .is_some_and(|name| SOURCE_STAGES.contains(&name))
    }

    /// The name of the pipeline's first stage, as written.
    pub fn first_stage(&self) -> Option<&str> {
        self.first.as_deref()
    }

    /// Whether the pipeline starts with `$planCacheStats`: the engine passes the plan
    /// cache's entries of the collection to [`Pipeline::run`] as the input.
    pub fn plan_cache_stats(&self) -> bool {
        self.plan_cache_stats
    }

    /// Whether the pipeline starts with `$indexStats`: the engine passes one document per
    /// index of the collection (name, key, host, accesses, spec) as the input.
    pub fn index_stats(&self) -> bool {
        self.index_stats
    }

    /// The leading `$collStats`, when there is one: the engine passes the one document it
    /// makes of the collection's statistics to [`Pipeline::run`] as the input.
    pub fn coll_stats(&self) -> Option<&CollStats> {
        self.coll_stats.as_ref()
    }

    /// The leading `$currentOp`, when there is one: the engine passes the operations
    /// running to [`Pipeline::run`] as the input.
    pub fn current_op(&self) -> Option<&CurrentOp> {
        self.current_op.as_ref()
    }

    /// The leading `$listLocalSessions`, when there is one: the engine passes the
    /// sessions it selects to [`Pipeline::run`] as the input.
    pub fn local_sessions(&self) -> Option<&LocalSessions> {
        self.local_sessions.as_ref()
    }

    /// Whether the leading sessions stage is `$listSessions` (run on
    /// `config.system.sessions`) rather than `$listLocalSessions` (run with
    /// `{aggregate: 1}`); [`Pipeline::local_sessions`] holds its options either way.
    pub fn lists_stored_sessions(&self) -> bool {
        self.stored_sessions
    }

    /// The final `$out` or `$merge`, when there is one: [`Pipeline::run`] produces the
    /// documents it writes; the engine writes them.
    pub fn output(&self) -> Option<&Output> {
        self.output.as_ref()
    }

    /// The filter of the first stage when it is a `$match`, for the engine
    /// to choose an index or narrow its scan. Purely advisory: [`Pipeline::run`]
    /// applies it again.
    pub fn leading_match(&self) -> Option<&Filter> {
        if self.local_sessions.is_some() {
            return None;
        }
        match self.stages.first() {
            Some(Stage::Match(filter)) => Some(filter),
            _ => None,
        }
    }

    /// The top-level fields the documents entering the pipeline need when its first stage
    /// after a leading `$match` reads only those (`$group`, `$count`); `None` when stages
    /// may read whole documents. A caller that applies the leading `$match` itself (with
    /// the whole document) may hand [`Pipeline::stream_after_match`] documents cut down to
    /// these fields.
    pub fn input_fields(&self) -> Option<BTreeSet<String>> {
        if self.local_sessions.is_some() || self.output.is_some() {
            return None;
        }
        let mut stages = self.stages.iter();
        let mut first = stages.next()?;
        if let Stage::Match(_) = first {
            first = stages.next()?;
        }
        let mut fields = BTreeSet::new();
        match first {
            Stage::Count(_) => Some(fields),
            Stage::Group(group) => group.top_fields(&mut fields).then_some(fields),
            _ => None,
        }
    }

    /// A feed for the documents entering the pipeline when its first stage after a leading
    /// `$match` (which the caller applies) is `$group`: each is folded into the groups
    /// from its stored bytes ([`GroupFeed::add`]), without a copy; `None` for other
    /// pipelines.
    ///
    /// `memory` bounds the groups as [`Foreign::group_memory`] does: past it
    /// [`GroupFeed::add`] fails with 292, or with spilling says to stop (the caller then
    /// runs the pipeline over its input again through [`Pipeline::stream_after_match_with`],
    /// whose `$group` spills).
    pub fn group_feed(&self, memory: GroupMemory) -> Option<GroupFeed<'_>> {
        if self.local_sessions.is_some() {
            return None;
        }
        let at = usize::from(matches!(self.stages.first(), Some(Stage::Match(_))));
        match self.stages.get(at) {
            Some(Stage::Group(group)) => Some(GroupFeed {
                pipeline: self,
                after: at + 1,
                grouping: group::Grouping::new(group),
                memory,
            }),
            _ => None,
        }
    }

    /// [`Pipeline::stream`] without a leading `$match`, for a caller that applied it.
    pub fn stream_after_match<'a, I>(
        &'a self,
        input: I,
    ) -> impl Iterator<Item = Result<RawDocumentBuf, QueryError>> + 'a
    where
        I: Iterator<Item = Result<RawDocumentBuf, QueryError>> + 'a,
    {
        self.stream_after_match_with(input, &NoForeign)
    }

    /// [`Pipeline::stream_after_match`] with the database's other collections.
    pub fn stream_after_match_with<'a, I>(
        &'a self,
        input: I,
        foreign: &'a dyn Foreign,
    ) -> impl Iterator<Item = Result<RawDocumentBuf, QueryError>> + 'a
    where
        I: Iterator<Item = Result<RawDocumentBuf, QueryError>> + 'a,
    {
        let skip = usize::from(matches!(self.stages.first(), Some(Stage::Match(_))));
        guarded(chain(&self.stages[skip..], Box::new(input), foreign))
    }

    /// Runs the pipeline over the input documents (a collection scan in
    /// natural order) and collects the output, or the first error.
    pub fn run<I>(&self, input: I) -> Result<Vec<RawDocumentBuf>, QueryError>
    where
        I: Iterator<Item = Result<RawDocumentBuf, QueryError>>,
    {
        self.stream(input).collect()
    }

    /// Runs the pipeline lazily: documents come out as the stages produce
    /// them, and input is pulled only as needed. The stream ends after the
    /// first error it yields.
    pub fn stream<'a, I>(
        &'a self,
        input: I,
    ) -> impl Iterator<Item = Result<RawDocumentBuf, QueryError>> + 'a
    where
        I: Iterator<Item = Result<RawDocumentBuf, QueryError>> + 'a,
    {
        self.stream_with(input, &NoForeign)
    }

    /// [`Pipeline::stream`] for a pipeline that may read other collections of its
    /// database (`$lookup`): `foreign` supplies them.
    pub fn stream_with<'a, I>(
        &'a self,
        input: I,
        foreign: &'a dyn Foreign,
    ) -> impl Iterator<Item = Result<RawDocumentBuf, QueryError>> + 'a
    where
        I: Iterator<Item = Result<RawDocumentBuf, QueryError>> + 'a,
    {
        guarded(chain(&self.stages, Box::new(input), foreign))
    }

    /// The pipeline without its final `$sort` and the `$skip`s and `$limit`s after it, and
    /// what they do ([`TrailingSort`]), for a caller that sorts the output itself (the engine,
    /// whose sort may hand its result to a cursor from disk); `None` when the pipeline does not
    /// end that way or ends in `$out`/`$merge`. Running the first and then the second gives
    /// what the whole pipeline gives.
    pub fn split_trailing_sort(&self) -> Option<(Pipeline, TrailingSort)> {
        if self.output.is_some() {
            return None;
        }
        let at = self
            .stages
            .iter()
            .rposition(|stage| !matches!(stage, Stage::Skip(_) | Stage::Limit(_)))?;
        let Some(Stage::Sort { spec, .. }) = self.stages.get(at) else {
            return None;
        };
        let mut trailing = TrailingSort {
            spec: spec.clone(),
            skip: 0,
            limit: None,
        };
        for stage in &self.stages[at + 1..] {
            match stage {
                Stage::Skip(n) => {
                    trailing.skip = trailing.skip.saturating_add(*n);
                    trailing.limit = trailing.limit.map(|left| left.saturating_sub(*n));
                }
                Stage::Limit(n) => {
                    trailing.limit = Some(trailing.limit.map_or(*n, |left| left.min(*n)));
                }
                _ => unreachable!("only $skip and $limit follow the trailing sort"),
            }
        }
        let mut head = self.clone();
        head.stages.truncate(at);
        Some((head, trailing))
    }

    /// The collections the pipeline reads besides its input (`$lookup`'s `from`, in
    /// sub-pipelines and `$facet`s too), for the engine to resolve before it runs.
    pub fn foreign_collections(&self) -> BTreeSet<String> {
        let mut out = BTreeSet::new();
        for stage in &self.stages {
            match stage {
                Stage::Lookup(lookup) => lookup.collections(&mut out),
                Stage::UnionWith(union) => union.collections(&mut out),
                Stage::Facet(facets) => {
                    for (_, pipeline) in facets {
                        out.extend(pipeline.foreign_collections());
                    }
                }
                _ => {}
            }
        }
        out
    }
}

/// A pipeline's final `$sort` and the `$skip`s and `$limit`s after it
/// ([`Pipeline::split_trailing_sort`]): the output is the input in `spec` order (stable),
/// the first `skip` dropped, then at most `limit` kept.
#[derive(Debug, Clone)]
pub struct TrailingSort {
    /// The sort.
    pub spec: SortSpec,
    /// Documents dropped from the front of the sorted input.
    pub skip: u64,
    /// Documents kept after the skip (`None`: all).
    pub limit: Option<u64>,
}

/// A pipeline's leading `$group` fed one stored document at a time
/// ([`Pipeline::group_feed`]); its output, run through the stages after the `$group`,
/// comes from [`GroupFeed::finish_with`]. The same output as [`Pipeline::stream_after_match`]
/// over the same documents.
pub struct GroupFeed<'p> {
    pipeline: &'p Pipeline,
    /// The stages after the `$group`.
    after: usize,
    grouping: group::Grouping<'p>,
    memory: GroupMemory,
}

impl<'p> GroupFeed<'p> {
    /// Folds in one document: the bytes of one well-formed BSON document (a stored one:
    /// validated on the way in), read only as far as the fields the `$group` names when its
    /// `_id` and arguments are constants or top-level fields. Then [`GroupFeed::within`].
    pub fn add(&mut self, doc: &[u8]) -> Result<bool, QueryError> {
        self.grouping.add_bytes(doc)?;
        self.within()
    }

    /// Whether the groups fit the feed's memory: `false` when they do not and may spill
    /// (the caller stops feeding and runs the pipeline again, [`Pipeline::group_feed`]),
    /// 292 when they do not and may not.
    pub fn within(&self) -> Result<bool, QueryError> {
        if self.grouping.bytes() <= self.memory.bytes_max {
            return Ok(true);
        }
        if self.memory.spill {
            return Ok(false);
        }
        Err(group::memory_exceeded())
    }

    /// An empty feed of the same pipeline for a later run of the input (a scan split in
    /// record-id ranges), when the two merge into exactly what one feed of both gives
    /// (counts, `$min`, `$max`, `$first`, `$last`); `None` otherwise.
    pub fn fork(&self) -> Option<GroupFeed<'p>> {
        Some(GroupFeed {
            pipeline: self.pipeline,
            after: self.after,
            grouping: self.grouping.fork()?,
            memory: self.memory,
        })
    }

    /// Folds in `later`, a [`GroupFeed::fork`] of this feed fed the documents that come
    /// after this feed's.
    pub fn merge(&mut self, later: GroupFeed<'p>) {
        self.grouping.merge(later.grouping);
    }

    /// The pipeline's output: the groups, in order of first appearance, through the
    /// stages after the `$group`.
    pub fn finish_with(
        self,
        foreign: &'p dyn Foreign,
    ) -> impl Iterator<Item = Result<RawDocumentBuf, QueryError>> + 'p {
        let groups: Documents<'p> = match self.grouping.finish() {
            Ok(docs) => Box::new(docs.into_iter().map(Ok)),
            Err(error) => Box::new(std::iter::once(Err(error))),
        };
        guarded(chain(&self.pipeline.stages[self.after..], groups, foreign))
    }

    /// [`GroupFeed::finish_with`] for a pipeline that reads no other collection.
    pub fn finish(self) -> impl Iterator<Item = Result<RawDocumentBuf, QueryError>> + 'p {
        self.finish_with(&NoForeign)
    }
}

/// The names of a raw pipeline's stages (each stage document's first field), for the
/// checks `$lookup` and `$unionWith` make before parsing their sub-pipelines.
fn stage_names(stages: &RawArray) -> impl Iterator<Item = &str> {
    stages.into_iter().filter_map(|stage| {
        let stage = stage.ok()?.as_document()?;
        bson_canonical::compare::elements(stage)
            .next()
            .map(|(name, _)| name)
    })
}

/// Refuses `$out` and `$merge` in a sub-pipeline: `code`, "`<stage>` is not allowed
/// `<place>`".
fn refuse_output_stages(stages: &RawArray, code: i32, place: &str) -> Result<(), QueryError> {
    match stage_names(stages).find(|name| matches!(*name, "$out" | "$merge")) {
        Some(name) => Err(QueryError::location(
            code,
            format!("{name} is not allowed {place}"),
        )),
        None => Ok(()),
    }
}

/// `stages` wrapped around `input`, one iterator each.
fn chain<'a>(stages: &'a [Stage], input: Documents<'a>, foreign: &'a dyn Foreign) -> Documents<'a> {
    stages
        .iter()
        .fold(input, |upstream, stage| apply(stage, upstream, foreign))
}

/// Output documents checked against the BSON size limit; the stream ends after the first
/// error it yields.
fn guarded<'a>(
    mut documents: Documents<'a>,
) -> impl Iterator<Item = Result<RawDocumentBuf, QueryError>> + 'a {
    let mut failed = false;
    std::iter::from_fn(move || {
        if failed {
            return None;
        }
        let next = documents.next()?.and_then(check_size);
        failed = next.is_err();
        Some(next)
    })
}

/// Tells each `$sort` how many leading documents the `$skip`s and `$limit`s
/// right after it can use: skips add up until a limit caps them.
fn bound_sorts(stages: &mut [Stage]) {
    for i in 0..stages.len() {
        let mut skipped: u64 = 0;
        let mut bound: Option<u64> = None;
        for next in &stages[i + 1..] {
            match next {
                Stage::Skip(n) => skipped = skipped.saturating_add(*n),
                Stage::Limit(n) => {
                    let reach = skipped.saturating_add(*n);
                    bound = Some(bound.map_or(reach, |b| b.min(reach)));
                }
                _ => break,
            }
        }
        if let Some(Stage::Sort { bound: slot, .. }) = stages.get_mut(i) {
            *slot = bound;
        }
    }
}

/// Fails a document larger than BSON allows, as MongoDB does when it
/// serialises a pipeline's output.
fn check_size(doc: RawDocumentBuf) -> Result<RawDocumentBuf, QueryError> {
    let size = doc.as_bytes().len();
    if size <= PIPELINE_DOCUMENT_BYTES_MAX {
        return Ok(doc);
    }
    let first = doc
        .iter()
        .next()
        .and_then(Result::ok)
        .map_or_else(String::new, |(key, value)| {
            format!("{key}: {}", fields::show_raw(value))
        });
    Err(QueryError::BsonObjectTooLarge(format!(
        "BSONObj size: {size} (0x{size:X}) is invalid. Size must be between 0 and \
         {PIPELINE_DOCUMENT_BYTES_MAX}(16MB) First element: {first}"
    )))
}

/// Wraps `upstream` in the iterator that runs `stage`.
fn apply<'a>(
    stage: &'a Stage,
    mut upstream: Documents<'a>,
    foreign: &'a dyn Foreign,
) -> Documents<'a> {
    match stage {
        Stage::UnionWith(union) => union.apply(upstream, foreign),
        Stage::Lookup(lookup) => {
            let mut cache = lookup::Cache::default();
            Box::new(
                upstream
                    .map(move |item| item.and_then(|doc| lookup.apply(doc, foreign, &mut cache))),
            )
        }
        Stage::Skip(n) => {
            let mut left = *n;
            Box::new(upstream.filter(move |item| {
                let skip = item.is_ok() && left > 0;
                if skip {
                    left -= 1;
                }
                !skip
            }))
        }
        Stage::Limit(n) => {
            let mut left = *n;
            Box::new(std::iter::from_fn(move || {
                if left == 0 {
                    return None;
                }
                let item = upstream.next()?;
                if item.is_ok() {
                    left -= 1;
                }
                Some(item)
            }))
        }
        Stage::Queue => {
            drop(upstream);
            Box::new(std::iter::once(Ok(RawDocumentBuf::new())))
        }
        Stage::Unwind(unwind) => Box::new(upstream.flat_map(move |item| {
            let out: Vec<Result<RawDocumentBuf, QueryError>> =
                match item.and_then(|doc| unwind.apply(doc)) {
                    Ok(docs) => docs.into_iter().map(Ok).collect(),
                    Err(e) => vec![Err(e)],
                };
            out
        })),
        Stage::Sort { spec, bound } => {
            let keep = bound.map(|b| usize::try_from(b).unwrap_or(usize::MAX));
            let mut pending = Some(upstream);
            let mut output: Documents<'a> = Box::new(std::iter::empty());
            Box::new(std::iter::from_fn(move || {
                if let Some(input) = pending.take() {
                    match foreign.sort(spec, keep, input) {
                        Ok(sorted) => output = sorted,
                        Err(e) => return Some(Err(e)),
                    }
                }
                output.next()
            }))
        }
        Stage::Group(group) => {
            let mut pending = Some(upstream);
            let mut output: Documents<'a> = Box::new(std::iter::empty());
            Box::new(std::iter::from_fn(move || {
                if let Some(input) = pending.take() {
                    match group.output(input, foreign) {
                        Ok(groups) => output = groups,
                        Err(e) => return Some(Err(e)),
                    }
                }
                output.next()
            }))
        }
        Stage::Count(_) | Stage::Facet(_) | Stage::Sample(_) | Stage::BucketAuto(_) => {
            let mut pending = Some(upstream);
            let mut output = Vec::new().into_iter();
            Box::new(std::iter::from_fn(move || {
                if let Some(input) = pending.take() {
                    match run_blocking(stage, input, foreign) {
                        Ok(docs) => output = docs.into_iter(),
                        Err(e) => return Some(Err(e)),
                    }
                }
                output.next().map(Ok)
            }))
        }
        Stage::Match(_)
        | Stage::Project(_)
        | Stage::AddFields(_)
        | Stage::ReplaceRoot(..)
        | Stage::Redact(_) => Box::new(
            upstream.filter_map(move |item| item.and_then(|doc| stage.apply_one(doc)).transpose()),
        ),
    }
}

/// Runs a stage that needs all of its input before it can answer.
fn run_blocking<'a>(
    stage: &'a Stage,
    input: Documents<'a>,
    foreign: &'a dyn Foreign,
) -> Result<Vec<RawDocumentBuf>, QueryError> {
    match stage {
        Stage::Group(group) => group.output(input, foreign)?.collect(),
        Stage::Sample(size) => sample::run(*size, input),
        Stage::BucketAuto(bucket_auto) => bucket_auto.run(input),
        Stage::Count(name) => {
            let mut count: i64 = 0;
            for item in input {
                item?;
                count += 1;
            }
            if count == 0 {
                return Ok(Vec::new());
            }
            let mut doc = bson::Document::new();
            match i32::try_from(count) {
                Ok(small) => doc.insert(name.clone(), small),
                Err(_) => doc.insert(name.clone(), count),
            };
            Ok(vec![stages::to_raw(&doc)?])
        }
        Stage::Facet(facets) => {
            let docs = input.collect::<Result<Vec<_>, _>>()?;
            let mut out = bson::Document::new();
            for (name, pipeline) in facets {
                let input = Box::new(docs.iter().cloned().map(Ok));
                let results = guarded(chain(&pipeline.stages, input, foreign))
                    .collect::<Result<Vec<_>, _>>()?;
                let mut array = Vec::with_capacity(results.len());
                for doc in results {
                    let tree = bson::Document::try_from(doc.as_ref())
                        .map_err(|e| QueryError::bad_value(e.to_string()))?;
                    array.push(bson::Bson::Document(tree));
                }
                out.insert(name.clone(), array);
            }
            Ok(vec![stages::to_raw(&out)?])
        }
        _ => unreachable!("run_blocking is called for blocking stages only"),
    }
}
