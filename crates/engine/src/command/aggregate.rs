//! The aggregate command: the pipeline runs when the command arrives, over a collection or
//! (`aggregate: 1`) over what its first stage supplies (`$documents`, `$listLocalSessions`),
//! and its output is handed out through a cursor, or written by a final `$out`/`$merge`
//! (`aggregate_output`).

use super::access::{Reading, candidates, each_match, each_match_split, fail_on, scan_parts};
use super::aggregate_output::Sink;
use super::args;
use super::cursor::{self, Cursor, Deadline, FirstBatch, Source};
use super::read_args::{self, Hint, number_i64, to_usize};
use super::write_concern::WriteConcern;
use super::{Reply, Request};
use crate::engine::Engine;
use crate::error::{Error, ErrorCode};
use crate::limits::BATCH_SIZE_DEFAULT;
use crate::plan::{self, Access};
use crate::spill::{AGGREGATE_CONTEXT, Sorted, Sorter};
use crate::store::{CollectionMeta, Namespace, Reader};
use bson::raw::cstr;
use bson::raw::{RawArray, RawBsonRef};
use bson::{RawDocument, RawDocumentBuf, doc};
use query::{
    DocumentStream, Foreign, GroupMemory, LocalSessions, Pipeline, QueryError, SortSpec,
    TrailingSort,
};
use std::cell::RefCell;
use std::collections::BTreeMap;

/// The options of aggregate besides the generic ones.
const AGGREGATE_FIELDS: &[&str] = &[
    "pipeline",
    "cursor",
    "explain",
    "allowDiskUse",
    "hint",
    "collation",
    "let",
    "bypassDocumentValidation",
    "$queryOptions",
];

/// What an aggregate reads: a collection, or (`aggregate: 1`) only what its first stage
/// supplies (`$documents`, `$listLocalSessions`).
enum Input {
    Collection(Namespace),
    Database(Namespace),
}

impl Input {
    /// The namespace the reply names: the collection, or `<db>.$cmd.aggregate`.
    fn ns(&self) -> &Namespace {
        match self {
            Input::Collection(ns) | Input::Database(ns) => ns,
        }
    }
}

/// `aggregate`: the first batch of a pipeline's output and a cursor for the rest; with a
/// final `$out` or `$merge`, the output is written and the cursor is empty.
pub(crate) fn aggregate(engine: &Engine, request: &Request<'_>) -> Result<Reply, Error> {
    args::check_fields(request, AGGREGATE_FIELDS)?;
    let input = target(request)?;
    let stages = read_args::required_array(request, "pipeline")?;
    if args::opt_bool(request, "explain")? == Some(true) {
        if let Input::Collection(_) = input {
            let reply =
                super::explain::explain_command(engine, request, request.body, "queryPlanner")?;
            return Ok(Reply::Doc(reply));
        }
        let message = "aggregate: 1 with explain is not supported";
        return Err(Error::new(ErrorCode::NotImplemented, message));
    }
    let Some(batch_size) = read_args::cursor_option(request)? else {
        return Err(Error::new(
            ErrorCode::FailedToParse,
            "The 'cursor' option is required, except for aggregate with the explain argument",
        ));
    };
    let allow_disk_use = args::opt_bool(request, "allowDiskUse")?.unwrap_or(false);
    args::bypass_validation(request)?;
    read_args::check_collation(request)?;
    let time_ms = read_args::max_time_ms(request)?;
    let hint = read_args::hint(request)?;
    let now = engine.host.now_millis();
    let vars = read_args::variables(request, now)?;
    let pipeline = Pipeline::parse_with(stages, &vars)?;
    check_input(&input, &pipeline)?;
    let deadline = Deadline::start(engine.host.as_ref(), time_ms);
    if let Some(output) = pipeline.output() {
        let run = Run {
            engine,
            input: &input,
            stages,
            pipeline: &pipeline,
            deadline: &deadline,
            hint,
            allow_disk_use,
        };
        let concern = WriteConcern::parse(request)?;
        let store = engine.store();
        let mut writer = store.write()?;
        writer.bypass_document_validation(args::bypass_validation(request)?);
        let mut sink = Sink::begin(engine, &mut writer, request.db, output, &vars, now)?;
        run.each(|doc| sink.write(doc))?;
        sink.finish()?;
        concern.commit(writer)?;
        return Ok(cursor::reply(input.ns(), 0, &[], cstr!("firstBatch")));
    }
    // A final `$sort` is the cursor's own: its result (in memory, or merged from its spill
    // file) is what the cursor hands out, never copied into a second buffer.
    let split = pipeline.split_trailing_sort();
    let run = Run {
        engine,
        input: &input,
        stages,
        pipeline: split.as_ref().map_or(&pipeline, |(head, _)| head),
        deadline: &deadline,
        hint,
        allow_disk_use,
    };
    let source = match split.as_ref() {
        Some((_, trailing)) => sorted_output(&run, trailing)?,
        None => held_output(&run)?,
    };
    let mut cursor = Cursor::new(input.ns().clone(), source);
    cursor.time_left_ms = deadline.remaining();
    let first = FirstBatch {
        size: Some(batch_size.unwrap_or(BATCH_SIZE_DEFAULT as u64)),
        single: false,
    };
    cursor::open(engine, request, cursor, first)
}

/// The output of `run` followed by `trailing` (the pipeline's final sort), sorted under the
/// memory limit: in memory, or with `allowDiskUse` merged from a spill file as the cursor
/// reads it.
fn sorted_output(run: &Run<'_>, trailing: &TrailingSort) -> Result<Source, Error> {
    let keep = trailing
        .limit
        .map(|limit| to_usize(limit.saturating_add(trailing.skip)));
    let mut sorter = run.sorter(&trailing.spec, keep);
    run.each(|doc| sorter.push(doc))?;
    let skip = to_usize(trailing.skip);
    match sorter.finish()? {
        Sorted::Memory(docs, _) => Ok(Source::Buffered(docs.into_iter().skip(skip).collect())),
        Sorted::Spilled(mut merge) => {
            merge.skip(skip)?;
            Ok(Source::Merged(merge))
        }
    }
}

/// The output of `run`, held for the cursor: in memory up to the memory limit; past it,
/// with `allowDiskUse`, in a spill file in output order (a sort by nothing: the spill's
/// merge is stable), else refused.
fn held_output(run: &Run<'_>) -> Result<Source, Error> {
    let bytes_max = run.engine.sorting.bytes_max();
    if run.allow_disk_use {
        let mut spool = run.sorter(&SortSpec::default(), None);
        run.each(|doc| spool.push(doc))?;
        return Ok(match spool.finish()? {
            Sorted::Memory(docs, _) => Source::Buffered(docs.into()),
            Sorted::Spilled(merge) => Source::Merged(merge),
        });
    }
    let mut docs = Vec::new();
    let mut bytes = 0usize;
    run.each(|doc| {
        bytes += doc.as_bytes().len();
        if bytes > bytes_max {
            return Err(output_too_large(bytes_max));
        }
        docs.push(doc);
        Ok(())
    })?;
    Ok(Source::Buffered(docs.into()))
}

/// `$indexStats`' input: one document per index of `meta`'s collection, `_id_` first, in
/// mongod's shape (`name`, `key`, `host`, `accesses: {ops, since}`, `spec`).
fn index_stats(
    engine: &Engine,
    meta: &CollectionMeta,
    host: &str,
) -> Result<Vec<RawDocumentBuf>, Error> {
    super::indexes::all_specs(Some(meta))
        .iter()
        .map(|spec| {
            let counter = engine.index_usage.counter(meta, &spec.name);
            let shown = doc! {
                "name": spec.name.as_str(),
                "key": spec.key_pattern.clone(),
                "host": host,
                "accesses": {
                    "ops": counter.ops,
                    "since": bson::DateTime::from_millis(counter.since_ms),
                },
                "spec": spec.list_entry(),
            };
            RawDocumentBuf::try_from(&shown)
                .map_err(|e| Error::new(ErrorCode::InternalError, e.to_string()))
        })
        .collect()
}

/// What an aggregate reads: the collection it names, or with `aggregate: 1` the database.
fn target(request: &Request<'_>) -> Result<Input, Error> {
    match read_args::field(request, "aggregate")? {
        Some(RawBsonRef::String(_)) => args::collection(request).map(Input::Collection),
        Some(value) if matches!(number_i64(value), Some(Ok(1))) => Ok(Input::Database(
            Namespace::new(request.db, "$cmd.aggregate"),
        )),
        _ => Err(Error::new(
            ErrorCode::FailedToParse,
            "Invalid command format: the 'aggregate' field must specify a collection name or 1",
        )),
    }
}

/// `aggregate: 1` needs a pipeline that starts from its own documents; a collection
/// aggregate cannot list sessions.
fn check_input(input: &Input, pipeline: &Pipeline) -> Result<(), Error> {
    match input {
        Input::Database(_) if !pipeline.is_collectionless() => {
            let what = pipeline.first_stage().map_or_else(
                || "an empty pipeline".to_owned(),
                |name| format!("'{name}'"),
            );
            Err(Error::new(
                ErrorCode::InvalidNamespace,
                format!("{{aggregate: 1}} is not valid for {what}; a collection is required."),
            ))
        }
        Input::Collection(_) if pipeline.current_op().is_some() => Err(current_op_misplaced()),
        Input::Database(ns) if pipeline.current_op().is_some() && ns.db != "admin" => {
            Err(current_op_misplaced())
        }
        Input::Collection(ns) if pipeline.lists_stored_sessions() => {
            if ns.db == "config" && ns.coll == "system.sessions" {
                return Ok(());
            }
            Err(Error::new(
                ErrorCode::InvalidNamespace,
                "$listSessions may only be run against config.system.sessions",
            ))
        }
        Input::Collection(_) if pipeline.local_sessions().is_some() => Err(Error::new(
            ErrorCode::InvalidNamespace,
            "$listLocalSessions must be run against the database with {aggregate: 1}, not a \
             collection",
        )),
        _ => Ok(()),
    }
}

/// mongod's refusal of a `$currentOp` outside `{aggregate: 1}` on `admin`.
fn current_op_misplaced() -> Error {
    Error::new(
        ErrorCode::InvalidNamespace,
        "$currentOp must be run against the 'admin' database with {aggregate: 1}",
    )
}

/// The filter of a leading `$match` stage, as written.
fn leading_match(stages: &RawArray) -> Option<&RawDocument> {
    let first = stages.into_iter().next()?.ok()?;
    let stage = first.as_document()?;
    let mut elements = stage.iter_elements();
    let only = elements.next()?.ok()?;
    if elements.next().is_some() || only.key().as_str() != "$match" {
        return None;
    }
    only.value().ok()?.as_document()
}

/// The output of `[{$match: {}}?, {$group: {_id: <constant>, <name>: {$sum: 1}, ...}}]`
/// over a collection of `count` documents (what drivers send for `countDocuments({})`),
/// without reading a document: `None` when the pipeline has another shape, `Some(None)`
/// when the collection is empty (a `$group` over no input emits nothing). `$sum` of int 1s
/// is an int while it fits, as in the general `$group`.
fn count_from_catalog(
    stages: &RawArray,
    count: u64,
) -> Option<Result<Option<RawDocumentBuf>, Error>> {
    let mut stages = stages.into_iter();
    let mut stage = stages.next()?.ok()?.as_document()?;
    if let Some(filter) = only_field(stage, "$match") {
        if !filter.as_document()?.is_empty() {
            return None;
        }
        stage = stages.next()?.ok()?.as_document()?;
    }
    let group = only_field(stage, "$group")?.as_document()?;
    if stages.next().is_some() {
        return None;
    }
    let mut out = RawDocumentBuf::new();
    let mut saw_id = false;
    for element in group.iter_elements() {
        let element = element.ok()?;
        let value = element.value().ok()?;
        if element.key().as_str() == "_id" {
            let constant = match value {
                RawBsonRef::String(s) => !s.starts_with('$'),
                RawBsonRef::Document(_) | RawBsonRef::Array(_) => false,
                _ => true,
            };
            if !constant || saw_id {
                return None;
            }
            saw_id = true;
            out.append(cstr!("_id"), value);
            continue;
        }
        let accumulator = value.as_document()?;
        // Only an int 1: a long or double 1 sums to a long or double (left to `$group`).
        if !matches!(only_field(accumulator, "$sum")?, RawBsonRef::Int32(1)) {
            return None;
        }
        let key = element.key();
        match i32::try_from(count) {
            Ok(n) => out.append(key, n),
            Err(_) => out.append(key, i64::try_from(count).unwrap_or(i64::MAX)),
        }
    }
    if !saw_id {
        return None;
    }
    Some(Ok((count > 0).then_some(out)))
}

/// The value of `stage`'s only field when that field is `name`.
fn only_field<'a>(stage: &'a RawDocument, name: &str) -> Option<RawBsonRef<'a>> {
    let mut elements = stage.iter_elements();
    let only = elements.next()?.ok()?;
    if elements.next().is_some() || only.key().as_str() != name {
        return None;
    }
    only.value().ok()
}

/// One run of a parsed pipeline over its input.
struct Run<'a> {
    engine: &'a Engine,
    input: &'a Input,
    stages: &'a RawArray,
    pipeline: &'a Pipeline,
    deadline: &'a Deadline<'a>,
    hint: Hint,
    /// `allowDiskUse`: whether blocking sorts and the held output may spill.
    allow_disk_use: bool,
}

impl Run<'_> {
    /// A blocking sort by `spec` under the engine's memory limit, spilling when allowed.
    fn sorter(&self, spec: &SortSpec, keep: Option<usize>) -> Sorter {
        let spill_to = self.engine.spill_to(self.allow_disk_use);
        let bytes_max = self.engine.sorting.bytes_max();
        Sorter::new(spec, keep, bytes_max, spill_to, AGGREGATE_CONTEXT)
    }

    /// How much a `$group` of this run may hold ([`query::Foreign::group_memory`]).
    fn group_memory(&self) -> GroupMemory {
        GroupMemory {
            bytes_max: self.engine.sorting.group_bytes_max(),
            spill: self.allow_disk_use,
        }
    }

    /// Runs the pipeline (over only the document an `_id` equality in a leading `$match`
    /// names, when there is one, and only the documents that `$match` keeps) and hands
    /// each output document to `sink`.
    fn each(&self, mut sink: impl FnMut(RawDocumentBuf) -> Result<(), Error>) -> Result<(), Error> {
        let store = self.engine.store();
        let reader = store.read()?;
        let failure = RefCell::new(None);
        let (Input::Database(ns) | Input::Collection(ns)) = self.input;
        let foreign = Collections::resolve(
            &reader,
            self,
            &ns.db,
            self.pipeline.foreign_collections(),
            &failure,
        )?;
        let ns = match self.input {
            Input::Database(_) => {
                let now = self.engine.host.now_millis();
                let sessions = match self.pipeline.local_sessions() {
                    Some(LocalSessions::Users(_)) => Vec::new(),
                    Some(_) => self.engine.sessions.list(now),
                    None if self.pipeline.current_op().is_some() => self
                        .engine
                        .operations
                        .report(now)
                        .iter()
                        .filter_map(|op| RawDocumentBuf::try_from(op).ok())
                        .collect(),
                    None => Vec::new(),
                };
                for doc in self
                    .pipeline
                    .stream_with(sessions.into_iter().map(Ok), &foreign)
                {
                    sink(finish(doc, &failure)?)?;
                }
                return fail_on(&failure);
            }
            Input::Collection(ns) => ns,
        };
        // Collections the engine holds itself (`config.system.sessions`, which
        // `$listSessions` reads; `admin.system.version`).
        if let Some(docs) = crate::system_collections::documents(self.engine, ns) {
            let docs = match self.pipeline.local_sessions() {
                Some(LocalSessions::Users(_)) => Vec::new(),
                _ => docs,
            };
            for doc in self
                .pipeline
                .stream_with(docs.into_iter().map(Ok), &foreign)
            {
                sink(finish(doc, &failure)?)?;
            }
            return fail_on(&failure);
        }
        if let Some(spec) = self.pipeline.coll_stats() {
            let meta = reader.collection(ns)?;
            let stats = super::stats::coll_stats_stage(self.engine, ns, meta.as_ref(), spec)?;
            let stats = RawDocumentBuf::try_from(&stats)
                .map_err(|e| Error::new(ErrorCode::InternalError, e.to_string()))?;
            for doc in self
                .pipeline
                .stream_with(std::iter::once(Ok(stats)), &foreign)
            {
                sink(finish(doc, &failure)?)?;
            }
            return fail_on(&failure);
        }
        let Some(meta) = reader.collection(ns)? else {
            let nothing = std::iter::empty::<Result<RawDocumentBuf, QueryError>>();
            for doc in self.pipeline.stream_with(nothing, &foreign) {
                sink(finish(doc, &failure)?)?;
            }
            return fail_on(&failure);
        };
        plan::check_hint(&meta, ns, &self.hint)?;
        if self.pipeline.plan_cache_stats() {
            let host = &self.engine.host.facts().hostname;
            let entries: Vec<RawDocumentBuf> = self
                .engine
                .plans
                .entries(&meta)
                .iter()
                .filter_map(|(key, entry)| {
                    let shown = plan::cache::stats_document(&meta, key, entry, host);
                    RawDocumentBuf::try_from(&shown).ok()
                })
                .collect();
            for doc in self
                .pipeline
                .stream_with(entries.into_iter().map(Ok), &foreign)
            {
                sink(finish(doc, &failure)?)?;
            }
            return fail_on(&failure);
        }
        if self.pipeline.index_stats() {
            let host = self.engine.host.facts().hostname.clone();
            let entries = index_stats(self.engine, &meta, &host)?;
            for doc in self
                .pipeline
                .stream_with(entries.into_iter().map(Ok), &foreign)
            {
                sink(finish(doc, &failure)?)?;
            }
            return fail_on(&failure);
        }
        if let Some(counted) = count_from_catalog(self.stages, meta.count) {
            // Every driver's countDocuments({}): answered from the catalog's count.
            if let Some(doc) = counted? {
                sink(doc)?;
            }
            return Ok(());
        }
        // The leading `$match` also filters at the scan, so documents it drops are never
        // copied out of the store (the stage still runs; matching twice is idempotent).
        let filter = self.pipeline.leading_match();
        let query = plan::Query::of(leading_match(self.stages), filter, &self.hint);
        let access = super::access::plan(self.engine, &reader, &meta, ns, &query)?.access;
        self.engine.index_usage.used_by(&meta, &access);
        if let Some(mut feed) = self.pipeline.group_feed(self.group_memory()) {
            // A leading `$group` folds each match in where it is stored: no copy; it reads
            // only its input fields, so compressed records are decoded only that far.
            let input = self.pipeline.input_fields();
            let reading = Reading {
                reader: &reader,
                meta: &meta,
                ns,
                filter,
                deadline: self.deadline,
                failure: &failure,
                fields: input.as_ref(),
            };
            let parts = scan_parts(&reading, &access, self.engine.host.facts().cores);
            let forks = (parts.len() > 1)
                .then(|| {
                    parts[1..]
                        .iter()
                        .map(|_| feed.fork())
                        .collect::<Option<Vec<_>>>()
                })
                .flatten();
            match forks {
                // A large collection scanned in record-id parts on several threads, the
                // parts' groups merged in scan order (only where that is exact).
                Some(forks) => {
                    let states = std::iter::once(feed).chain(forks).collect();
                    let visit = |feed: &mut query::GroupFeed<'_>, _: u64, bytes: &[u8]| {
                        Ok(feed.add(bytes)?)
                    };
                    let mut parts = each_match_split(&reading, &parts, states, &visit)?.into_iter();
                    feed = parts.next().expect("one feed per part");
                    for later in parts {
                        feed.merge(later);
                    }
                }
                None => each_match(&reading, &access, |_, bytes| Ok(feed.add(bytes)?))?,
            }
            fail_on(&failure)?;
            // Groups past the memory limit with `allowDiskUse` stopped the feed: the
            // general path below runs the pipeline again from the same snapshot, and its
            // `$group` spills.
            if feed.within()? {
                for doc in feed.finish_with(&foreign) {
                    sink(finish(doc, &failure)?)?;
                }
                return fail_on(&failure);
            }
        }
        // A leading `$group` or `$count` reads a few fields: only those are copied out of
        // the store (the leading `$match`, already applied to whole documents, is skipped).
        let fields = self.pipeline.input_fields();
        let reading = Reading {
            reader: &reader,
            meta: &meta,
            ns,
            filter,
            deadline: self.deadline,
            failure: &failure,
            fields: fields.as_ref(),
        };
        let input = candidates(reading, &access).map(Ok);
        let output: Box<dyn Iterator<Item = Result<RawDocumentBuf, QueryError>>> = match fields {
            Some(_) => Box::new(self.pipeline.stream_after_match_with(input, &foreign)),
            None => Box::new(self.pipeline.stream_with(input, &foreign)),
        };
        for doc in output {
            sink(finish(doc, &failure)?)?;
        }
        fail_on(&failure)?;
        Ok(())
    }
}

/// An output document, or its error (a storage failure or timeout underneath, recorded
/// in `failure`, explains an error better than what the pipeline made of it).
fn finish(
    doc: Result<RawDocumentBuf, QueryError>,
    failure: &RefCell<Option<Error>>,
) -> Result<RawDocumentBuf, Error> {
    doc.or_else(|error| {
        fail_on(failure)?;
        Err(error.into())
    })
}

/// The collections of the pipeline's database that its `$lookup`s read, resolved in
/// the reader's snapshot before the pipeline runs.
struct Collections<'r> {
    reader: &'r Reader<'r>,
    known: BTreeMap<String, (Namespace, CollectionMeta)>,
    deadline: &'r Deadline<'r>,
    failure: &'r RefCell<Option<Error>>,
    /// The run: its `$sort`s sort under the engine's memory limit ([`Run::sorter`]).
    run: &'r Run<'r>,
}

impl<'r> Collections<'r> {
    fn resolve(
        reader: &'r Reader<'r>,
        run: &'r Run<'r>,
        db: &str,
        names: std::collections::BTreeSet<String>,
        failure: &'r RefCell<Option<Error>>,
    ) -> Result<Collections<'r>, Error> {
        let mut known = BTreeMap::new();
        for name in names {
            let ns = Namespace::new(db, &name);
            if let Some(meta) = reader.collection(&ns)? {
                known.insert(name, (ns, meta));
            }
        }
        Ok(Collections {
            reader,
            known,
            deadline: run.deadline,
            failure,
            run,
        })
    }

    /// `error` recorded as the run's failure (it explains itself better than any
    /// [`QueryError`] could: its code is the engine's), and the pipeline's stand-in for it.
    fn fail(&self, error: Error) -> QueryError {
        let stand_in = QueryError::Location {
            code: error.code().code(),
            message: error.to_string(),
        };
        self.failure.borrow_mut().get_or_insert(error);
        stand_in
    }
}

impl Foreign for Collections<'_> {
    fn scan(&self, name: &str) -> Result<DocumentStream<'_>, QueryError> {
        let Some((ns, meta)) = self.known.get(name) else {
            return Ok(Box::new(std::iter::empty()));
        };
        let reading = Reading {
            reader: self.reader,
            meta,
            ns,
            filter: None,
            deadline: self.deadline,
            failure: self.failure,
            fields: None,
        };
        let docs = candidates(reading, &Access::Collection);
        Ok(Box::new(docs.map(Ok)))
    }

    /// The engine's blocking sort ([`Sorter`]): at most its memory limit held, spilled
    /// past it with `allowDiskUse`, else 292.
    fn sort<'a>(
        &'a self,
        spec: &'a SortSpec,
        keep: Option<usize>,
        input: DocumentStream<'a>,
    ) -> Result<DocumentStream<'a>, QueryError> {
        let mut sorter = self.run.sorter(spec, keep);
        for doc in input {
            sorter.push(doc?).map_err(|e| self.fail(e))?;
        }
        match sorter.finish().map_err(|e| self.fail(e))? {
            Sorted::Memory(docs, _) => Ok(Box::new(docs.into_iter().map(Ok))),
            Sorted::Spilled(mut merge) => Ok(Box::new(std::iter::from_fn(move || {
                let next = merge.next_document().map_err(|e| self.fail(e));
                next.transpose()
            }))),
        }
    }

    /// The engine's `$group` limit (`internalDocumentSourceGroupMaxMemoryBytes`); past it
    /// a `$group` sorts the rest of its input through [`Foreign::sort`] with `allowDiskUse`.
    fn group_memory(&self) -> GroupMemory {
        self.run.group_memory()
    }
}

/// The refusal of an output over the memory limit without `allowDiskUse` (mongod streams
/// it; here a cursor holds what it hands out, on disk only when allowed).
fn output_too_large(bytes_max: usize) -> Error {
    Error::new(
        ErrorCode::Other(146, "ExceededMemoryLimit"),
        format!(
            "aggregate output exceeded {bytes_max} bytes held for its cursor; pass \
             allowDiskUse: true to hold it on disk, or narrow the pipeline or add $limit"
        ),
    )
}
