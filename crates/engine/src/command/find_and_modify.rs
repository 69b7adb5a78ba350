//! findAndModify (and its lowercase alias): update, replace, upsert or remove one document
//! and return it, before or after the change, projected.
//!
//! Unlike the batch write commands, a failure here is the command's error (a duplicate key
//! carries `keyPattern`/`keyValue` at the top level), and nothing is written.

use super::Request;
use super::args;
use super::retry::Retry;
use super::update::{UpdateSpec, apply_stored, id_of, upsert_document};
use super::write::{Failure, check_collation, check_hint, command_variables, documents_of, select};
use super::write_concern::WriteConcern;
use crate::engine::Engine;
use crate::error::{Error, ErrorCode};
use crate::store::{Namespace, Writer};
use bson::{Bson, Document, RawDocument, RawDocumentBuf, doc};
use query::{Filter, Projection, SortSpec};

/// The arguments findAndModify takes besides the generic ones.
const FIELDS: &[&str] = &[
    "query",
    "sort",
    "remove",
    "update",
    "new",
    "fields",
    "upsert",
    "bypassDocumentValidation",
    "arrayFilters",
    "hint",
    "collation",
    "let",
    "stmtId",
];

/// The empty document: the filter when `query` is absent.
const EMPTY: &[u8] = &[5, 0, 0, 0, 0];

/// The parsed options of one findAndModify.
struct Plan<'a> {
    filter_doc: &'a RawDocument,
    filter: Filter,
    sort: Option<SortSpec>,
    projection: Option<Projection>,
    /// `None`: remove.
    update: Option<update::Update>,
    return_new: bool,
    upsert: bool,
    hint: super::read_args::Hint,
}

/// findAndModify: `{lastErrorObject: {n, updatedExisting?, upserted?}, value}`.
pub(super) fn find_and_modify(engine: &Engine, request: &Request<'_>) -> Result<Document, Error> {
    args::check_fields(request, FIELDS)?;
    let ns = args::collection(request)?;
    args::check_writable(&ns)?;
    let concern = WriteConcern::parse(request)?;
    let now = engine.host.now_millis();
    let plan = parse(request, now)?;
    let store = engine.store();
    let mut writer = store.write()?;
    writer.bypass_document_validation(args::bypass_validation(request)?);
    let mut retry = Retry::begin(engine, request, &mut writer)?;
    if let Some(retry) = &mut retry
        && let Some(mut previous) = retry.previous(0, &mut writer)
    {
        // Ran before: its first reply, and which statement that was.
        let retried = retry.stmt_id(0);
        previous.insert("retriedStmtId", retried);
        return Ok(previous);
    }
    let result = run(engine, &mut writer, &ns, &plan, now).map_err(|failure| match failure {
        Failure::Statement(error) | Failure::Fatal(error) => error,
    })?;
    let saved = match retry {
        Some(mut retry) => {
            retry.ran(0, Some(result.clone()));
            Some(retry.save(engine, &mut writer)?)
        }
        None => None,
    };
    concern.commit(writer)?;
    super::retry::after_commit(saved.as_ref())?;
    Ok(result)
}

fn failed(message: &str) -> Error {
    Error::new(ErrorCode::FailedToParse, message)
}

fn parse<'a>(request: &Request<'a>, now_ms: i64) -> Result<Plan<'a>, Error> {
    let filter_doc = match args::opt_doc(request, "query")? {
        Some(query) => query,
        None => RawDocument::from_bytes(EMPTY).expect("five bytes are the empty document"),
    };
    let sort = args::opt_doc(request, "sort")?;
    let remove = args::opt_bool(request, "remove")?.unwrap_or(false);
    let update = match request.body.get("update") {
        Ok(Some(value)) => Some(UpdateSpec::read(value)?),
        Ok(None) => None,
        Err(error) => return Err(Error::new(ErrorCode::InvalidBson, error.to_string())),
    };
    let return_new = args::opt_bool(request, "new")?.unwrap_or(false);
    let fields = args::opt_doc(request, "fields")?;
    let upsert = args::opt_bool(request, "upsert")?.unwrap_or(false);
    args::bypass_validation(request)?;
    let array_filters = args::opt_array(request, "arrayFilters")?
        .map(|array| documents_of(array, &format!("{}.arrayFilters", request.name)))
        .transpose()?;
    let hint = check_hint(request.body.get("hint").ok().flatten())?;
    check_collation(args::opt_doc(request, "collation")?)?;
    let vars = command_variables(request, now_ms)?;
    if !remove && update.is_none() {
        return Err(failed("Either an update or remove=true must be specified"));
    }
    if remove {
        if update.is_some() {
            return Err(failed("Cannot specify both an update and remove=true"));
        }
        if upsert {
            return Err(failed("Cannot specify both upsert=true and remove=true"));
        }
        if return_new {
            return Err(failed(
                "Cannot specify both new=true and remove=true; 'remove' always returns the \
                 deleted document",
            ));
        }
        if array_filters.is_some() {
            return Err(failed("Cannot specify arrayFilters and remove=true"));
        }
    }
    if matches!(update, Some(UpdateSpec::Pipeline(_))) && array_filters.is_some() {
        return Err(failed("Cannot specify arrayFilters and a pipeline update"));
    }
    Ok(Plan {
        filter_doc,
        filter: Filter::parse_with(filter_doc, &vars)?,
        sort: sort
            .filter(|sort| !sort.is_empty())
            .map(SortSpec::parse)
            .transpose()?,
        projection: fields
            .map(|spec| Projection::parse_with(spec, &vars))
            .transpose()?,
        update: update
            .map(|spec| spec.compile(array_filters.unwrap_or_default(), &vars))
            .transpose()?,
        return_new,
        upsert,
        hint,
    })
}

/// The document the command acts on: the first match in sort order (natural order
/// without a sort).
fn target(
    writer: &mut Writer<'_>,
    engine: &Engine,
    ns: &Namespace,
    plan: &Plan<'_>,
) -> Result<Option<(u64, RawDocumentBuf)>, Failure> {
    match &plan.sort {
        None => Ok(select(
            writer,
            engine,
            ns,
            &plan.filter,
            plan.filter_doc,
            &plan.hint,
            true,
        )?
        .into_iter()
        .next()),
        Some(sort) => {
            let all = select(
                writer,
                engine,
                ns,
                &plan.filter,
                plan.filter_doc,
                &plan.hint,
                false,
            )?;
            Ok(sort.sort(all, Some(1), |item| &*item.1).into_iter().next())
        }
    }
}

fn run(
    engine: &Engine,
    writer: &mut Writer<'_>,
    ns: &Namespace,
    plan: &Plan<'_>,
    now: i64,
) -> Result<Document, Failure> {
    let found = target(writer, engine, ns, plan)?;
    let Some(update) = &plan.update else {
        let Some((rid, old)) = found else {
            return Ok(doc! { "lastErrorObject": { "n": 0 }, "value": Bson::Null });
        };
        writer.delete(ns, rid).map_err(Failure::fatal)?;
        let value = project(plan, &old)?;
        return Ok(doc! { "lastErrorObject": { "n": 1 }, "value": value });
    };
    match found {
        Some((rid, old)) => {
            let new = apply_stored(writer, ns, rid, &old, update, &plan.filter, now)?;
            let value = match (plan.return_new, &new) {
                (true, Some(new)) => project(plan, new)?,
                _ => project(plan, &old)?,
            };
            Ok(doc! {
                "lastErrorObject": { "n": 1, "updatedExisting": true },
                "value": value,
            })
        }
        None if plan.upsert => {
            let doc = upsert_document(engine, update, &plan.filter, plan.filter_doc, now)?;
            writer
                .insert(ns, &doc)
                .map_err(|error| Failure::store(error, &doc))?;
            let value = if plan.return_new {
                project(plan, &doc)?
            } else {
                Bson::Null
            };
            Ok(doc! {
                "lastErrorObject": { "n": 1, "updatedExisting": false, "upserted": id_of(&doc) },
                "value": value,
            })
        }
        None => Ok(doc! {
            "lastErrorObject": { "n": 0, "updatedExisting": false },
            "value": Bson::Null,
        }),
    }
}

/// The returned document, through `fields` when given.
fn project(plan: &Plan<'_>, doc: &RawDocument) -> Result<Bson, Failure> {
    let shown = match &plan.projection {
        Some(projection) => projection.apply(doc, Some(&plan.filter))?,
        None => doc.to_owned(),
    };
    let tree = Document::try_from(&*shown)
        .map_err(|e| Error::new(ErrorCode::InvalidBson, e.to_string()))?;
    Ok(Bson::Document(tree))
}
