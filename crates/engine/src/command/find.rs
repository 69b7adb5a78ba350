//! The find command: the planner's access path (`crate::plan`) turned into a cursor source
//! (a resumable collection scan or index walk, or buffered results), the sort an index
//! provides, the `_id` walk for a sort on `_id` with a limit, and blocking sorts under a
//! memory bound (shared with aggregate). Candidate streams live in `access`.
//!
//! An index only proposes: every document it names is checked against the whole filter,
//! like every scanned document.

use super::access::{self, Reading, fail_on, if_matches};
use super::args;
use super::cursor::{self, Cursor, Deadline, FirstBatch, IndexScan, Scan, Source};
use super::read_args::{self, Hint, to_usize};
use super::{Reply, Request};
use crate::engine::Engine;
use crate::error::{Error, ErrorCode};
use crate::limits::{BATCH_SIZE_DEFAULT, SORT_BYTES_MAX};
use crate::plan::{self, Access};
use crate::spill::{Sorted, Sorter};
use crate::store::{CollectionMeta, Namespace, Reader, WalkPosition};
use bson::{RawDocument, RawDocumentBuf};
use query::{Filter, Projection, SortSpec};
use std::cell::RefCell;
use std::collections::{HashSet, VecDeque};

/// The options of find besides the generic ones.
const FIND_FIELDS: &[&str] = &[
    "filter",
    "projection",
    "sort",
    "hint",
    "skip",
    "limit",
    "batchSize",
    "singleBatch",
    "allowDiskUse",
    "min",
    "max",
    "returnKey",
    "showRecordId",
    "tailable",
    "oplogReplay",
    "noCursorTimeout",
    "awaitData",
    "allowPartialResults",
    "let",
    "collation",
    "readOnce",
    "allowSpeculativeMajorityRead",
    "$_requestResumeToken",
    "$_resumeAfter",
    "$queryOptions",
    "term",
    "options",
    "collectionUUID",
];

/// The order results come in.
pub(super) enum Order {
    /// Natural (record id) order, forward when `true`.
    Natural(bool),
    /// A blocking sort.
    Sorted(SortSpec),
}

/// A parsed find command.
struct FindQuery<'a> {
    filter_spec: Option<&'a RawDocument>,
    sort_spec: Option<&'a RawDocument>,
    projection_spec: Option<&'a RawDocument>,
    filter: Option<Filter>,
    projection: Option<Projection>,
    order: Order,
    /// The sort is exactly `{_id: 1}` (true) or `{_id: -1}` (false).
    id_sort: Option<bool>,
    hint: Hint,
    /// `min`/`max`: one range of the hinted index (`plan::min_max`).
    min_max: plan::min_max::MinMax<'a>,
    skip: u64,
    limit: Option<u64>,
    first: FirstBatch,
    allow_disk_use: bool,
    no_timeout: bool,
    time_ms: Option<i64>,
}

impl FindQuery<'_> {
    /// The matches a limited query can use: `skip + limit` (`None`: no limit).
    fn keep(&self) -> Option<usize> {
        self.limit.map(|n| to_usize(n.saturating_add(self.skip)))
    }
}

/// Whether a find with `min`/`max` in `order` sorts (in memory) rather than walking its
/// range in index order; a reverse `$natural` order is 238, as mongod refuses it. Explain
/// asks the same question.
pub(super) fn min_max_sorts(order: &Order) -> Result<bool, Error> {
    match order {
        Order::Natural(true) => Ok(false),
        Order::Sorted(_) => Ok(true),
        Order::Natural(false) => Err(Error::new(
            ErrorCode::NotImplemented,
            "find with 'min' or 'max' and a reverse $natural sort is not supported",
        )),
    }
}

/// `find`: the first batch of a query and a cursor for the rest.
pub(crate) fn find(engine: &Engine, request: &Request<'_>) -> Result<Reply, Error> {
    args::check_fields(request, FIND_FIELDS)?;
    let ns = args::collection(request)?;
    let query = parse_find(request, engine.host.now_millis())?;
    let tail = check_tailable(request)?;
    let deadline = Deadline::start(engine.host.as_ref(), query.time_ms);
    let store = engine.store();
    let reader = store.read()?;
    let Some(meta) = reader.collection(&ns)? else {
        drop(reader);
        if let Some(docs) = crate::system_collections::documents(engine, &ns) {
            if tail.is_some() {
                return Err(refuse_tailable(&ns, &query));
            }
            return find_in(engine, request, ns, query, docs, &deadline);
        }
        return Ok(cursor::reply(&ns, 0, &[], bson::raw::cstr!("firstBatch")));
    };
    if let Some(await_data) = tail {
        drop(reader);
        return find_tailing(engine, request, ns, &meta, query, await_data);
    }
    let source = plan(engine, &reader, &meta, &ns, &query, &deadline)?;
    drop(reader);
    let mut cursor = Cursor::new(ns, source);
    cursor.filter = query.filter;
    cursor.projection = query.projection;
    cursor.time_left_ms = deadline.remaining();
    cursor.no_timeout = query.no_timeout;
    cursor.plan_summary = crate::operations::current().and_then(|op| op.plan_summary());
    cursor::open(engine, request, cursor, query.first)
}

/// A find over documents the engine holds itself (`crate::system_collections`): the same
/// filter, sort, skip, limit and projection as over a stored collection.
fn find_in(
    engine: &Engine,
    request: &Request<'_>,
    ns: Namespace,
    query: FindQuery<'_>,
    docs: Vec<RawDocumentBuf>,
    deadline: &Deadline<'_>,
) -> Result<Reply, Error> {
    if query.min_max.is_set() {
        let message = format!("find with 'min' or 'max' on {ns} is not supported");
        return Err(Error::new(ErrorCode::NotImplemented, message));
    }
    let mut matched = Vec::new();
    for doc in docs {
        deadline.tick()?;
        deadline.doc_examined();
        let keep = match &query.filter {
            Some(filter) => filter.try_matches(&doc)?,
            None => true,
        };
        if keep {
            matched.push(doc);
        }
    }
    let source = match &query.order {
        Order::Sorted(spec) => sorted_source(engine, matched.into_iter(), spec, &query)?,
        Order::Natural(_) => {
            let limit = query.limit.map_or(usize::MAX, to_usize);
            let docs = matched.into_iter().skip(to_usize(query.skip)).take(limit);
            Source::Buffered(docs.collect())
        }
    };
    crate::operations::set_current_plan_summary("COLLSCAN".to_owned());
    let mut cursor = Cursor::new(ns, source);
    cursor.filter = query.filter;
    cursor.projection = query.projection;
    cursor.time_left_ms = deadline.remaining();
    cursor::open(engine, request, cursor, query.first)
}

fn parse_find<'a>(request: &Request<'a>, now_ms: i64) -> Result<FindQuery<'a>, Error> {
    let vars = read_args::variables(request, now_ms)?;
    let filter_spec = read_args::object_or_null(request, "filter")?;
    let filter = filter_spec
        .map(|spec| Filter::parse_with(spec, &vars))
        .transpose()?;
    let projection_spec = read_args::object_or_null(request, "projection")?;
    let projection = projection_spec
        .map(|spec| Projection::parse_with(spec, &vars))
        .transpose()?;
    let sort = read_args::object_or_null(request, "sort")?;
    let skip = read_args::non_negative(request, "skip")?.unwrap_or(0);
    let limit = read_args::non_negative(request, "limit")?.filter(|&n| n > 0);
    let batch_size = read_args::non_negative(request, "batchSize")?;
    let single = args::opt_bool(request, "singleBatch")?.unwrap_or(false);
    let allow_disk_use = args::opt_bool(request, "allowDiskUse")?.unwrap_or(false);
    let no_timeout = args::opt_bool(request, "noCursorTimeout")?.unwrap_or(false);
    refuse_unsupported(request)?;
    read_args::check_collation(request)?;
    let time_ms = read_args::max_time_ms(request)?;
    let hint = read_args::hint(request)?;
    let min_max = plan::min_max::MinMax::new(
        read_args::object_or_null(request, "min")?,
        read_args::object_or_null(request, "max")?,
    )?;
    let order = parse_order(sort, &hint)?;
    let id_sort = sort.and_then(id_sort_direction);
    Ok(FindQuery {
        filter_spec,
        sort_spec: sort,
        projection_spec,
        filter,
        projection,
        order,
        id_sort,
        hint,
        min_max,
        skip,
        limit,
        first: FirstBatch {
            size: Some(batch_size.unwrap_or(BATCH_SIZE_DEFAULT as u64)),
            single,
        },
        allow_disk_use,
        no_timeout,
        time_ms,
    })
}

/// Options find knows but this engine does not do; refused rather than ignored.
fn refuse_unsupported(request: &Request<'_>) -> Result<(), Error> {
    for key in ["returnKey", "showRecordId", "$_requestResumeToken"] {
        read_args::refuse_true(request, key)?;
    }
    for key in ["$_resumeAfter"] {
        if read_args::object_or_null(request, key)?.is_some() {
            let message = format!("find with '{key}' is not supported");
            return Err(Error::new(ErrorCode::NotImplemented, message));
        }
    }
    if read_args::field(request, "collectionUUID")?.is_some() {
        let message = "find with 'collectionUUID' is not supported";
        return Err(Error::new(ErrorCode::NotImplemented, message));
    }
    Ok(())
}

/// A tailable find on capped collection `meta`: a forward scan from the start (or from
/// the filter's lower bound on the oplog's `ts`) whose cursor stays open at the end
/// (`cursor::Tail`). Another order is mongod's BadValue.
fn find_tailing(
    engine: &Engine,
    request: &Request<'_>,
    ns: Namespace,
    meta: &CollectionMeta,
    query: FindQuery<'_>,
    await_data: bool,
) -> Result<Reply, Error> {
    if !meta.options.get_bool("capped").unwrap_or(false) {
        return Err(refuse_tailable(&ns, &query));
    }
    if !matches!(query.order, Order::Natural(true)) || query.min_max.is_set() {
        return Err(Error::new(
            ErrorCode::BadValue,
            "cannot use tailable option with a sort other than {$natural: 1}",
        ));
    }
    let start = match meta.kind {
        crate::store::oplog::Kind::Oplog => oplog_start(query.filter_spec),
        crate::store::oplog::Kind::Documents => None,
    };
    crate::operations::set_current_plan_summary("COLLSCAN".to_owned());
    let mut cursor = Cursor::new(
        ns,
        Source::Scan(Scan {
            uuid: meta.uuid,
            after: start,
            reverse: false,
            skip: query.skip,
            limit: query.limit,
        }),
    );
    cursor.filter = query.filter;
    cursor.projection = query.projection;
    cursor.no_timeout = query.no_timeout;
    cursor.tail = Some(cursor::Tail { await_data, start });
    cursor::open(engine, request, cursor, query.first)
}

/// Where a scan of the oplog may start for `filter`: just before the least `ts` its
/// top-level (or `$and`-ed) `ts` condition admits (`$gt`, `$gte`, equality). Record ids
/// are `ts` values, so the records before it cannot match; the filter is still applied
/// to every record read.
fn oplog_start(filter: Option<&RawDocument>) -> Option<u64> {
    use bson::raw::RawBsonRef;
    // The record id of the entry at `ts` (the oplog's key).
    fn rid(ts: bson::Timestamp) -> u64 {
        crate::store::oplog::Ts::from_timestamp(ts).0
    }
    fn bound(filter: &RawDocument) -> Option<u64> {
        let mut best: Option<u64> = None;
        let mut raise = |after: u64| best = Some(best.map_or(after, |b| b.max(after)));
        for element in filter.iter_elements().flatten() {
            match (element.key().as_str(), element.value().ok()?) {
                ("ts", RawBsonRef::Timestamp(ts)) => raise(rid(ts).saturating_sub(1)),
                ("ts", RawBsonRef::Document(ops)) => {
                    for op in ops.iter_elements().flatten() {
                        match (op.key().as_str(), op.value().ok()?) {
                            ("$gt", RawBsonRef::Timestamp(ts)) => raise(rid(ts)),
                            ("$gte" | "$eq", RawBsonRef::Timestamp(ts)) => {
                                raise(rid(ts).saturating_sub(1));
                            }
                            _ => {}
                        }
                    }
                }
                ("$and", RawBsonRef::Array(items)) => {
                    for item in items.into_iter().flatten() {
                        if let Some(after) = item.as_document().and_then(bound) {
                            raise(after);
                        }
                    }
                }
                _ => {}
            }
        }
        best.filter(|&after| after > 0)
    }
    bound(filter?)
}

/// Whether the find asks for a tailable cursor (`Some(awaitData)`); `awaitData` without
/// `tailable` is mongod's FailedToParse.
fn check_tailable(request: &Request<'_>) -> Result<Option<bool>, Error> {
    let tailable = args::opt_bool(request, "tailable")?.unwrap_or(false);
    let await_data = args::opt_bool(request, "awaitData")?.unwrap_or(false);
    if await_data && !tailable {
        return Err(Error::new(
            ErrorCode::FailedToParse,
            "Cannot set 'awaitData' without also setting 'tailable'",
        ));
    }
    Ok(tailable.then_some(await_data))
}

/// A tailable find on an existing collection. As on mongod, a collection that does not
/// exist answers an empty, closed cursor (the caller's), and one that is not capped is
/// BadValue with the canonical query in the message (mongod's `toStringForErrorMsg`:
/// `ns=<ns>Tree: <filter tree>Sort: <sort>\nProj: <projection>\n`). `system.profile`
/// is capped on mongod but not stored as one here: tailing it is 238.
fn refuse_tailable(ns: &Namespace, query: &FindQuery<'_>) -> Error {
    if ns.coll == "system.profile" {
        return Error::new(
            ErrorCode::NotImplemented,
            "tailable cursors on system.profile are not supported",
        );
    }
    let shown = |spec: Option<&RawDocument>| match spec {
        Some(spec) if !spec.is_empty() => mongod_object_string(spec),
        _ => "{}".to_owned(),
    };
    let message = format!(
        "error processing query: ns={ns}Tree: {tree}Sort: {sort}\nProj: {projection}\n \
         tailable cursor requested on non capped collection",
        tree = filter_tree_string(query.filter_spec),
        sort = shown(query.sort_spec),
        projection = shown(query.projection_spec),
    );
    Error::new(ErrorCode::BadValue, message)
}

/// mongod's `MatchExpression::debugString` of a filter, for the common shapes: one line
/// per top-level condition (`a $eq 1`), under `$and` when there are several or none.
fn filter_tree_string(filter: Option<&RawDocument>) -> String {
    let mut lines = Vec::new();
    for element in filter.into_iter().flat_map(RawDocument::iter_elements) {
        let Ok(element) = element else { continue };
        let Ok(value) = element.value() else { continue };
        let key = element.key().as_str();
        let operators = match value {
            bson::raw::RawBsonRef::Document(inner)
                if inner
                    .iter_elements()
                    .flatten()
                    .all(|e| e.key().as_str().starts_with('$'))
                    && !inner.is_empty() =>
            {
                inner.iter_elements().flatten().collect::<Vec<_>>()
            }
            _ => {
                lines.push(format!("{key} $eq {}", mongod_value_string(value)));
                continue;
            }
        };
        for operator in operators {
            if let Ok(operand) = operator.value() {
                let op = operator.key().as_str();
                lines.push(format!("{key} {op} {}", mongod_value_string(operand)));
            }
        }
    }
    match lines.as_slice() {
        [one] => format!("{one}\n"),
        _ => {
            let mut out = String::from("$and\n");
            for line in &lines {
                out.push_str("    ");
                out.push_str(line);
                out.push('\n');
            }
            out
        }
    }
}

/// A value as mongod's `BSONElement::toString` prints it without its name.
fn mongod_value_string(value: bson::raw::RawBsonRef<'_>) -> String {
    bson::Bson::try_from(bson::RawBson::from(value)).map_or_else(
        |_| String::new(),
        |value| crate::index::display::value(&value),
    )
}

/// A document as mongod's `BSONObj::toString` prints it: `{ a: 1, b: "x" }`.
fn mongod_object_string(doc: &RawDocument) -> String {
    bson::Document::try_from(doc).map_or_else(
        |_| "{}".to_owned(),
        |doc| crate::index::display::document(&doc),
    )
}

/// `Some(true)` for a sort of exactly `{_id: 1}`, `Some(false)` for `{_id: -1}`.
fn id_sort_direction(spec: &RawDocument) -> Option<bool> {
    let mut elements = spec.iter_elements();
    let only = elements.next()?.ok()?;
    if elements.next().is_some() || only.key().as_str() != "_id" {
        return None;
    }
    match read_args::number_i64(only.value().ok()?)?.ok()? {
        1 => Some(true),
        -1 => Some(false),
        _ => None,
    }
}

pub(super) fn parse_order(sort: Option<&RawDocument>, hint: &Hint) -> Result<Order, Error> {
    let Some(spec) = sort else {
        return Ok(Order::Natural(*hint != Hint::Natural(false)));
    };
    if spec.get("$natural").ok().flatten().is_none() {
        return Ok(Order::Sorted(SortSpec::parse(spec)?));
    }
    let value = spec.get("$natural").ok().flatten();
    let direction = value.and_then(read_args::number_i64).and_then(Result::ok);
    match (direction, spec.iter_elements().count()) {
        (Some(1), 1) => Ok(Order::Natural(true)),
        (Some(-1), 1) => Ok(Order::Natural(false)),
        _ => Err(Error::new(
            ErrorCode::BadValue,
            "$natural sort must be 1 or -1 and the only sort field",
        )),
    }
}

/// Chooses how the results are produced: a resumable scan (of the collection or of an
/// index) when results come in the order they are read, else the candidates buffered
/// (and sorted).
fn plan(
    engine: &Engine,
    reader: &Reader<'_>,
    meta: &CollectionMeta,
    ns: &Namespace,
    query: &FindQuery<'_>,
    deadline: &Deadline<'_>,
) -> Result<Source, Error> {
    let want = match query.order {
        Order::Natural(true) => query.limit.map(|n| n.saturating_add(query.skip)),
        _ => None,
    };
    let planning = plan::Query {
        sort: query.sort_spec,
        projection: query.projection_spec,
        want,
        ..plan::Query::of(query.filter_spec, query.filter.as_ref(), &query.hint)
    };
    if query.min_max.is_set() {
        return min_max_source(engine, reader, meta, ns, query, deadline);
    }
    let mut access = access::plan(engine, reader, meta, ns, &planning)?.access;
    if let Order::Natural(false) = query.order {
        // A reverse natural order is the collection's, read backwards.
        access = Access::Collection;
    }
    let summary = |text: String| crate::operations::set_current_plan_summary(text);
    summary(plan::explain::summary(meta, &access));
    match (&access, &query.order) {
        (Access::Collection, Order::Natural(forward)) => {
            return Ok(Source::Scan(Scan {
                uuid: meta.uuid,
                after: None,
                reverse: !*forward,
                skip: query.skip,
                limit: query.limit,
            }));
        }
        (Access::Index(_) | Access::Or(_), Order::Natural(true)) => {
            engine.index_usage.used_by(meta, &access);
            let mut walks: VecDeque<plan::IndexAccess> = access.walks().iter().cloned().collect();
            let first = walks.pop_front().expect("an index plan walks an index");
            return Ok(index_scan(meta, first, walks, query));
        }
        _ => {}
    }
    if let Order::Sorted(spec) = &query.order {
        let sorted = sorted_walk(
            meta,
            ns,
            query.filter_spec,
            &query.hint,
            query.limit.is_some(),
            &access,
            spec,
        )?;
        match sorted {
            Some(SortedRead::Walk(sorted)) => {
                summary(plan::explain::walk_summary(meta, &sorted));
                engine.index_usage.used(meta.uuid, &sorted.name);
                return Ok(index_scan(meta, sorted, VecDeque::new(), query));
            }
            Some(SortedRead::Merge(merge)) => {
                let filter = query.filter.as_ref();
                let bytes_max = engine.sorting.bytes_max();
                let run = super::sort_merge::run(
                    reader,
                    meta,
                    ns,
                    filter,
                    &merge,
                    spec,
                    query.keep(),
                    bytes_max,
                    deadline,
                )?;
                if let Some(mut merged) = run {
                    summary(plan::explain::walks_summary(meta, &merge.walks));
                    engine.index_usage.used(meta.uuid, &merge.index().name);
                    let skip = to_usize(query.skip).min(merged.docs.len());
                    merged.docs.drain(..skip);
                    return Ok(Source::Buffered(merged.docs));
                }
                // Past the sort memory limit: sorted as without the merge (spilling, or 292).
            }
            None => {}
        }
    }
    if let (Access::Collection, Some(forward), Some(limit)) = (&access, query.id_sort, query.limit)
        && matches!(query.hint, Hint::None | Hint::Id)
    {
        summary("IXSCAN { _id: 1 }".to_owned());
        engine.index_usage.used(meta.uuid, "_id_");
        return walk_id_index(reader, meta, ns, query, deadline, forward, limit);
    }
    engine.index_usage.used_by(meta, &access);
    buffered(engine, reader, meta, ns, query, deadline, &access)
}

/// The candidates of `access`, checked against the filter and held for the cursor:
/// sorted as asked (spilling past the memory limit with `allowDiskUse`), or in natural
/// order, then skipped and limited.
fn buffered(
    engine: &Engine,
    reader: &Reader<'_>,
    meta: &CollectionMeta,
    ns: &Namespace,
    query: &FindQuery<'_>,
    deadline: &Deadline<'_>,
    access: &Access<'_>,
) -> Result<Source, Error> {
    let failure = RefCell::new(None);
    let reading = Reading {
        reader,
        meta,
        ns,
        filter: query.filter.as_ref(),
        deadline,
        failure: &failure,
        fields: None,
    };
    let found = access::candidates(reading, access);
    let docs = match &query.order {
        Order::Sorted(spec) => {
            let sorted = sorted_source(engine, found, spec, query);
            fail_on(&failure)?;
            return sorted;
        }
        Order::Natural(forward) => {
            let all = collect_bounded(found, query.allow_disk_use);
            fail_on(&failure)?;
            let mut all = all?;
            if !*forward {
                all.reverse();
            }
            all
        }
    };
    let limit = query.limit.map_or(usize::MAX, to_usize);
    let docs = docs.into_iter().skip(to_usize(query.skip)).take(limit);
    Ok(Source::Buffered(docs.collect::<VecDeque<_>>()))
}

/// `docs` in `spec` order after the query's skip, up to its limit: sorted in memory, or
/// merged from a spill file when they pass the memory limit and `allowDiskUse` is given
/// (`crate::spill`).
fn sorted_source(
    engine: &Engine,
    docs: impl Iterator<Item = RawDocumentBuf>,
    spec: &SortSpec,
    query: &FindQuery<'_>,
) -> Result<Source, Error> {
    let keep = query.keep();
    let spill_to = engine.spill_to(query.allow_disk_use);
    let bytes_max = engine.sorting.bytes_max();
    let mut sorter = Sorter::new(spec, keep, bytes_max, spill_to, crate::spill::FIND_CONTEXT);
    for doc in docs {
        sorter.push(doc)?;
    }
    match sorter.finish()? {
        Sorted::Memory(docs, _) => {
            let docs = docs.into_iter().skip(to_usize(query.skip));
            Ok(Source::Buffered(docs.collect()))
        }
        Sorted::Spilled(mut merge) => {
            merge.skip(to_usize(query.skip))?;
            Ok(Source::Merged(merge))
        }
    }
}

/// How a sort is read in order from an index instead of sorted in memory.
#[derive(Debug)]
pub(super) enum SortedRead {
    /// One walk yields the order.
    Walk(plan::IndexAccess),
    /// Walks per combination of pinned points, merged (mongod's `SORT_MERGE`).
    Merge(plan::SortMerge),
}

/// An index walk that already yields `spec`'s order, instead of a blocking sort, or else
/// walks of one index merged into it: taken when the filter alone would scan the
/// collection, when a limit lets the walks stop early, or when it is the index the filter
/// chose anyway (never over an `_id` point lookup); a merge only with a limit (without
/// one it reads and holds what the sort would). Explain asks the same question.
pub(super) fn sorted_walk(
    meta: &CollectionMeta,
    ns: &Namespace,
    filter: Option<&RawDocument>,
    hint: &Hint,
    limited: bool,
    access: &Access<'_>,
    spec: &SortSpec,
) -> Result<Option<SortedRead>, Error> {
    if matches!(access, Access::Id(_)) {
        return Ok(None);
    }
    let wanted: Vec<(&str, bool)> = spec
        .fields()
        .iter()
        .map(|(path, direction)| (path.as_str(), *direction == query::Direction::Ascending))
        .collect();
    let worth = |target: &crate::store::WalkTarget| {
        let same = matches!(access, Access::Index(chosen) if chosen.target == *target);
        matches!(access, Access::Collection) || limited || same
    };
    if let Some(sorted) = plan::choose_sorted(meta, ns, filter, hint, &wanted)? {
        return Ok(worth(&sorted.target).then_some(SortedRead::Walk(sorted)));
    }
    if !limited {
        return Ok(None);
    }
    let merge = plan::sort_merge::choose(meta, ns, filter, hint, &wanted)?;
    Ok(merge.map(SortedRead::Merge))
}

/// A find with `min`/`max`: the one range of the hinted index they name, in index order
/// (or sorted as asked, in memory), every document checked against the whole filter.
fn min_max_source(
    engine: &Engine,
    reader: &Reader<'_>,
    meta: &CollectionMeta,
    ns: &Namespace,
    query: &FindQuery<'_>,
    deadline: &Deadline<'_>,
) -> Result<Source, Error> {
    let walk = plan::min_max::access(meta, ns, &query.hint, &query.min_max)?;
    let sorted = min_max_sorts(&query.order)?;
    crate::operations::set_current_plan_summary(plan::explain::walk_summary(meta, &walk));
    engine.index_usage.used(meta.uuid, &walk.name);
    if !sorted {
        return Ok(index_scan(meta, walk, VecDeque::new(), query));
    };
    buffered(
        engine,
        reader,
        meta,
        ns,
        query,
        deadline,
        &Access::Index(walk),
    )
}

/// A cursor over the walk `first`, then the walks `rest`, from their start.
fn index_scan(
    meta: &CollectionMeta,
    first: plan::IndexAccess,
    rest: VecDeque<plan::IndexAccess>,
    query: &FindQuery<'_>,
) -> Source {
    Source::Index(IndexScan {
        uuid: meta.uuid,
        access: first,
        rest,
        position: WalkPosition::default(),
        seen: HashSet::new(),
        skip: query.skip,
        limit: query.limit,
    })
}

/// A sort on `_id` alone with a limit: the `_id_` index in the requested direction, stopping
/// once `skip + limit` documents matched, instead of sorting the whole collection. `_id_`
/// keys order as the sort does (canonical order; `_id` is unique, so there are no ties), and
/// every document is checked against the whole filter.
fn walk_id_index(
    reader: &Reader<'_>,
    meta: &CollectionMeta,
    ns: &Namespace,
    query: &FindQuery<'_>,
    deadline: &Deadline<'_>,
    forward: bool,
    limit: u64,
) -> Result<Source, Error> {
    let keep = to_usize(limit.saturating_add(query.skip));
    let mut docs = VecDeque::new();
    for record in reader.by_id_order(meta, forward)? {
        if docs.len() >= keep {
            break;
        }
        deadline.tick()?;
        let (rid, bytes) = record?;
        deadline.key_examined();
        deadline.doc_examined();
        docs.extend(if_matches(ns, query.filter.as_ref(), rid, &bytes)?);
    }
    docs.drain(..to_usize(query.skip).min(docs.len()));
    Ok(Source::Buffered(docs))
}

/// The error for a blocking stage that outgrew `SORT_BYTES_MAX`.
pub(crate) fn memory_exceeded(allow_disk_use: bool) -> Error {
    if allow_disk_use {
        Error::new(
            ErrorCode::Other(146, "ExceededMemoryLimit"),
            format!(
                "Sort exceeded memory limit of {SORT_BYTES_MAX} bytes, and spilling to disk \
                 is not supported"
            ),
        )
    } else {
        Error::new(
            ErrorCode::Other(292, "QueryExceededMemoryLimitNoDiskUseAllowed"),
            format!(
                "Executor error during find command :: caused by :: Sort exceeded memory limit \
                 of {SORT_BYTES_MAX} bytes, but did not opt in to external sorting."
            ),
        )
    }
}

/// Every document of `docs`, failing once they pass `SORT_BYTES_MAX` together.
pub(crate) fn collect_bounded(
    docs: impl Iterator<Item = RawDocumentBuf>,
    allow_disk_use: bool,
) -> Result<Vec<RawDocumentBuf>, Error> {
    let mut bytes = 0usize;
    let mut out = Vec::new();
    for doc in docs {
        bytes += doc.as_bytes().len();
        if bytes > SORT_BYTES_MAX {
            return Err(memory_exceeded(allow_disk_use));
        }
        out.push(doc);
    }
    Ok(out)
}
