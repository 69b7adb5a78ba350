//! The aggregate command over one collection: the pipeline runs when the command arrives, and
//! its output is handed out through a cursor.

use super::args;
use super::cursor::{self, Cursor, Deadline, FirstBatch, Source};
use super::find::{candidates, fail_on, id_equality};
use super::read_args::{self, Hint, number_i64};
use super::{Reply, Request};
use crate::engine::Engine;
use crate::error::{Error, ErrorCode};
use crate::limits::{BATCH_SIZE_DEFAULT, SORT_BYTES_MAX};
use crate::store::Namespace;
use bson::raw::{RawArray, RawBsonRef};
use bson::{RawDocument, RawDocumentBuf};
use query::{Pipeline, QueryError};
use std::cell::RefCell;

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

/// `aggregate`: the first batch of a pipeline's output and a cursor for the rest.
pub(crate) fn aggregate(engine: &Engine, request: &Request<'_>) -> Result<Reply, Error> {
    args::check_fields(request, AGGREGATE_FIELDS)?;
    let ns = target(request)?;
    let stages = read_args::required_array(request, "pipeline")?;
    if args::opt_bool(request, "explain")? == Some(true) {
        let message = "aggregate with explain is not supported";
        return Err(Error::new(ErrorCode::NotImplemented, message));
    }
    let Some(batch_size) = read_args::cursor_option(request)? else {
        return Err(Error::new(
            ErrorCode::FailedToParse,
            "The 'cursor' option is required, except for aggregate with the explain argument",
        ));
    };
    let allow_disk_use = args::opt_bool(request, "allowDiskUse")?.unwrap_or(false);
    args::opt_bool(request, "bypassDocumentValidation")?;
    read_args::check_collation(request)?;
    let time_ms = read_args::max_time_ms(request)?;
    let hint = read_args::hint(request)?;
    let vars = read_args::variables(request, engine.host.now_millis())?;
    let pipeline = Pipeline::parse_with(stages, &vars)?;
    let deadline = Deadline::start(engine.host.as_ref(), time_ms);
    let docs = run(
        engine,
        &ns,
        stages,
        &pipeline,
        &deadline,
        hint,
        allow_disk_use,
    )?;
    let mut cursor = Cursor::new(ns, Source::Buffered(docs.into()));
    cursor.time_left_ms = deadline.remaining();
    let first = FirstBatch {
        size: Some(batch_size.unwrap_or(BATCH_SIZE_DEFAULT as u64)),
        single: false,
    };
    cursor::open(engine, cursor, first)
}

/// The collection an aggregate names. `aggregate: 1` (collectionless stages such as
/// `$currentOp` or `$documents`) is not supported.
fn target(request: &Request<'_>) -> Result<Namespace, Error> {
    match read_args::field(request, "aggregate")? {
        Some(RawBsonRef::String(_)) => args::collection(request),
        Some(value) if matches!(number_i64(value), Some(Ok(1))) => Err(Error::new(
            ErrorCode::NotImplemented,
            "aggregate: 1 (collectionless pipelines such as $currentOp or $documents) is not \
             supported",
        )),
        _ => Err(Error::new(
            ErrorCode::FailedToParse,
            "Invalid command format: the 'aggregate' field must specify a collection name or 1",
        )),
    }
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

/// Runs `pipeline` over the collection (only the document an `_id` equality in a leading
/// `$match` names, when there is one) and collects its output.
fn run(
    engine: &Engine,
    ns: &Namespace,
    stages: &RawArray,
    pipeline: &Pipeline,
    deadline: &Deadline<'_>,
    hint: Hint,
    allow_disk_use: bool,
) -> Result<Vec<RawDocumentBuf>, Error> {
    let reader = engine.store.read()?;
    let Some(meta) = reader.collection(ns)? else {
        let nothing = std::iter::empty::<Result<RawDocumentBuf, QueryError>>();
        return Ok(pipeline.run(nothing)?);
    };
    hint.check(ns)?;
    let id = leading_match(stages).and_then(id_equality);
    let failure = RefCell::new(None);
    let input = candidates(&reader, &meta, ns, None, id, deadline, &failure).map(Ok);
    let mut out = Vec::new();
    let mut bytes = 0usize;
    for doc in pipeline.stream(input) {
        let doc = match doc {
            Ok(doc) => doc,
            Err(error) => {
                // A storage failure or timeout underneath explains the error better.
                fail_on(&failure)?;
                return Err(error.into());
            }
        };
        bytes += doc.as_bytes().len();
        if bytes > SORT_BYTES_MAX {
            return Err(output_too_large(allow_disk_use));
        }
        out.push(doc);
    }
    fail_on(&failure)?;
    Ok(out)
}

fn output_too_large(allow_disk_use: bool) -> Error {
    let advice = if allow_disk_use {
        ""
    } else {
        " (allowDiskUse would not help: results are held in memory)"
    };
    Error::new(
        ErrorCode::Other(146, "ExceededMemoryLimit"),
        format!(
            "aggregate output exceeded {SORT_BYTES_MAX} bytes held for its cursor; narrow the \
             pipeline or add $limit{advice}"
        ),
    )
}
