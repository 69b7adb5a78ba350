//! The update command, and applying one update to stored documents or building the
//! document an upsert inserts (shared with findAndModify).
//!
//! A multi-update first collects the records its filter selects, then rewrites each: the
//! set is fixed before the first change, so a document an update moves into the filter's
//! range is not visited twice. A document the update leaves byte-for-byte unchanged is not
//! written and does not count in `nModified`.

use super::Request;
use super::args;
use super::insert;
use super::retry::Retry;
use super::write::{
    BatchErrors, Failure, Fields, check_collation, check_hint, command_variables, count, reply,
    select_ids, statements,
};
use super::write_concern::WriteConcern;
use crate::engine::Engine;
use crate::error::{Error, ErrorCode};
use crate::store::{Namespace, StoreError, Writer};
use bson::raw::RawBsonRef;
use bson::{Bson, DateTime, Document, RawArray, RawDocument, RawDocumentBuf, doc};
use query::{Filter, Variables};
use update::{Applied, ApplyContext, Update, UpdateOptions};

/// The arguments update takes besides the generic ones.
const FIELDS: &[&str] = &[
    "updates",
    "ordered",
    "bypassDocumentValidation",
    "let",
    "stmtId",
    "stmtIds",
    "isTimeseriesNamespace",
];

/// The fields of one update statement.
const STATEMENT_FIELDS: &[&str] = &[
    "q",
    "u",
    "c",
    "arrayFilters",
    "hint",
    "multi",
    "upsert",
    "upsertSupplied",
    "collation",
    "sampleId",
];

/// An update as given: a document (operators or a replacement) or a pipeline.
#[derive(Clone, Copy)]
pub(super) enum UpdateSpec<'a> {
    /// `{$set: ...}` or a replacement document.
    Document(&'a RawDocument),
    /// `[{$set: ...}, ...]`.
    Pipeline(&'a RawArray),
}

impl<'a> UpdateSpec<'a> {
    /// Reads an update argument (`u`, findAndModify's `update`).
    pub(super) fn read(value: RawBsonRef<'a>) -> Result<UpdateSpec<'a>, Error> {
        match value {
            RawBsonRef::Document(doc) => Ok(UpdateSpec::Document(doc)),
            RawBsonRef::Array(array) => Ok(UpdateSpec::Pipeline(array)),
            _ => Err(Error::new(
                ErrorCode::FailedToParse,
                "Update argument must be either an object or an array",
            )),
        }
    }

    /// Compiles the update with its `arrayFilters` and the command's variables.
    pub(super) fn compile(
        self,
        array_filters: Vec<RawDocumentBuf>,
        variables: &Variables,
    ) -> Result<Update, Error> {
        let options = UpdateOptions {
            array_filters,
            variables: variables.clone(),
        };
        let update = match self {
            UpdateSpec::Document(doc) => Update::parse(doc, options),
            UpdateSpec::Pipeline(stages) => Update::parse_pipeline(stages, options),
        };
        update.map_err(Error::from)
    }
}

/// One parsed entry of `updates`.
struct Statement<'a> {
    filter: &'a RawDocument,
    update: UpdateSpec<'a>,
    constants: Option<&'a RawDocument>,
    array_filters: Vec<RawDocumentBuf>,
    hint: Option<RawBsonRef<'a>>,
    multi: bool,
    upsert: bool,
    collation: Option<&'a RawDocument>,
}

/// What one statement did.
#[derive(Default)]
struct Outcome {
    matched: usize,
    modified: usize,
    upserted: Option<Bson>,
}

impl Outcome {
    /// What a retryable write records of the statement (`crate::repl::retryable`).
    fn record(&self) -> Document {
        let mut record = doc! {
            "n": i64::try_from(self.matched).unwrap_or(i64::MAX),
            "m": i64::try_from(self.modified).unwrap_or(i64::MAX),
        };
        if let Some(id) = &self.upserted {
            record.insert("u", id.clone());
        }
        record
    }

    /// The outcome a statement recorded when it ran.
    fn recorded(record: &Document) -> Outcome {
        let number = |key| usize::try_from(record.get_i64(key).unwrap_or(0)).unwrap_or(0);
        Outcome {
            matched: number("n"),
            modified: number("m"),
            upserted: record.get("u").cloned(),
        }
    }
}

/// update: `{update, updates, ordered}` → `{n, writeErrors?, upserted?, nModified}`.
pub(super) fn update(engine: &Engine, request: &Request<'_>) -> Result<Document, Error> {
    args::check_fields(request, FIELDS)?;
    let ns = args::collection(request)?;
    args::check_writable(&ns)?;
    let concern = WriteConcern::parse(request)?;
    let ordered = args::opt_bool(request, "ordered")?.unwrap_or(true);
    args::bypass_validation(request)?;
    let now = engine.host.now_millis();
    let vars = command_variables(request, now)?;
    let parsed = statements(request, "updates")?
        .into_iter()
        .map(parse_statement)
        .collect::<Result<Vec<_>, Error>>()?;
    let store = engine.store();
    let mut writer = store.write()?;
    writer.bypass_document_validation(args::bypass_validation(request)?);
    let mut retry = Retry::begin(engine, request, &mut writer)?;
    if retry.is_some() && parsed.iter().any(|statement| statement.multi) {
        return Err(super::retry::refuse_multi("multi=true"));
    }
    let (mut matched, mut modified) = (0, 0);
    let mut upserted = Vec::new();
    let mut errors = BatchErrors::default();
    for (index, statement) in parsed.iter().enumerate() {
        // killOp / maxTimeMS end the command; its transaction is dropped whole.
        crate::operations::check_current()?;
        let outcome = match &mut retry {
            Some(retry) => retry
                .previous(index, &mut writer)
                .map(|previous| Outcome::recorded(&previous)),
            None => None,
        };
        let outcome = match outcome {
            Some(outcome) => Some(outcome),
            None => {
                let ran = errors.take(
                    index,
                    run_statement(engine, &mut writer, &ns, statement, &vars, now),
                )?;
                if let (Some(retry), Some(outcome)) = (&mut retry, &ran) {
                    retry.ran(index, Some(outcome.record()));
                }
                ran
            }
        };
        match outcome {
            Some(outcome) => {
                matched += outcome.matched;
                modified += outcome.modified;
                if let Some(id) = outcome.upserted {
                    matched += 1;
                    let index = i32::try_from(index).unwrap_or(i32::MAX);
                    upserted.push(Bson::Document(doc! { "index": index, "_id": id }));
                }
            }
            None if ordered => break,
            None => {}
        }
    }
    let saved = match retry {
        Some(retry) => Some(retry.save(engine, &mut writer)?),
        None => None,
    };
    concern.commit(writer)?;
    let retried = super::retry::after_commit(saved.as_ref())?;
    Ok(reply(vec![
        ("n", Some(count(matched))),
        ("writeErrors", errors.field()),
        (
            "upserted",
            (!upserted.is_empty()).then_some(Bson::Array(upserted)),
        ),
        ("nModified", Some(count(modified))),
        ("retriedStmtIds", retried),
    ]))
}

fn parse_statement(doc: &RawDocument) -> Result<Statement<'_>, Error> {
    let fields = Fields::new(doc, "update.updates".to_owned(), STATEMENT_FIELDS)?;
    let filter = fields.required_doc("q")?;
    let update = match fields.get("u")? {
        Some(value) => UpdateSpec::read(value)?,
        None => return Err(super::write::missing(&fields.path("u"))),
    };
    fields.bool_field("upsertSupplied")?;
    Ok(Statement {
        filter,
        update,
        constants: fields.doc_field("c")?,
        array_filters: fields.doc_array("arrayFilters")?.unwrap_or_default(),
        hint: fields.get("hint")?,
        multi: fields.bool_field("multi")?.unwrap_or(false),
        upsert: fields.bool_field("upsert")?.unwrap_or(false),
        collation: fields.doc_field("collation")?,
    })
}

fn run_statement(
    engine: &Engine,
    writer: &mut Writer<'_>,
    ns: &Namespace,
    statement: &Statement<'_>,
    vars: &Variables,
    now: i64,
) -> Result<Outcome, Failure> {
    let hint = check_hint(statement.hint)?;
    check_collation(statement.collation)?;
    let filter = Filter::parse_with(statement.filter, vars)?;
    let update = match statement.constants {
        None => statement
            .update
            .compile(statement.array_filters.clone(), vars)?,
        Some(constants) => {
            if !matches!(statement.update, UpdateSpec::Pipeline(_)) {
                return Err(Failure::Statement(Error::new(
                    ErrorCode::Location(51198),
                    "Constant values may only be specified for pipeline updates",
                )));
            }
            let with_constants = vars.with_constants(constants)?;
            statement
                .update
                .compile(statement.array_filters.clone(), &with_constants)?
        }
    };
    if statement.multi && update.is_replacement() {
        return Err(Failure::Statement(Error::new(
            ErrorCode::FailedToParse,
            "multi update is not supported for replacement-style update",
        )));
    }
    let selected = select_ids(
        writer,
        engine,
        ns,
        &filter,
        statement.filter,
        &hint,
        !statement.multi,
    )?;
    let mut outcome = Outcome::default();
    if selected.is_empty() {
        if statement.upsert {
            let doc = upsert_document(engine, &update, &filter, statement.filter, now)?;
            writer
                .insert(ns, &doc)
                .map_err(|error| Failure::store(error, &doc))?;
            outcome.upserted = Some(id_of(&doc));
        }
        return Ok(outcome);
    }
    for &rid in &selected {
        outcome.matched += 1;
        if apply_record(writer, ns, rid, &update, &filter, now)? {
            outcome.modified += 1;
        }
    }
    Ok(outcome)
}

/// The `_id` of a stored document.
pub(super) fn id_of(doc: &RawDocument) -> Bson {
    match doc.get("_id") {
        Ok(Some(id)) => Bson::try_from(id).unwrap_or(Bson::Null),
        _ => Bson::Null,
    }
}

fn context(filter: &Filter, now: i64, is_insert: bool) -> ApplyContext<'_> {
    ApplyContext {
        query: Some(filter),
        now: Some(DateTime::from_millis(now)),
        is_insert,
    }
}

/// Applies `update` to the stored record `rid` (whose document is `doc`) and writes the
/// result; `None` when the update changes nothing (then nothing is written).
pub(super) fn apply_stored(
    writer: &mut Writer<'_>,
    ns: &Namespace,
    rid: u64,
    doc: &RawDocument,
    update: &Update,
    filter: &Filter,
    now: i64,
) -> Result<Option<RawDocumentBuf>, Failure> {
    let applied = update.apply(doc, &context(filter, now, false))?;
    write_applied(writer, ns, rid, applied)
}

/// [`apply_stored`] reading record `rid` where it is stored (no copy of the old
/// document); whether it changed.
fn apply_record(
    writer: &mut Writer<'_>,
    ns: &Namespace,
    rid: u64,
    update: &Update,
    filter: &Filter,
    now: i64,
) -> Result<bool, Failure> {
    let applied = writer
        .with_record(ns, rid, |doc| {
            update.apply(doc, &context(filter, now, false))
        })
        .map_err(Failure::fatal)?
        .ok_or_else(|| {
            Failure::fatal(StoreError::Corrupt(format!(
                "{ns}: selected record {rid} vanished"
            )))
        })??;
    Ok(write_applied(writer, ns, rid, applied)?.is_some())
}

/// Writes an applied update over record `rid`; `None` when it changed nothing.
fn write_applied(
    writer: &mut Writer<'_>,
    ns: &Namespace,
    rid: u64,
    applied: Applied,
) -> Result<Option<RawDocumentBuf>, Failure> {
    if !applied.modified {
        return Ok(None);
    }
    check_storable(&applied.doc)?;
    writer
        .update(ns, rid, &applied.doc)
        .map_err(|error| Failure::store(error, &applied.doc))?;
    Ok(Some(applied.doc))
}

/// The document an upsert inserts: the filter's equality fields (only its `_id` for a
/// replacement), the update applied as an insert, an `_id` generated when none results.
pub(super) fn upsert_document(
    engine: &Engine,
    update: &Update,
    filter: &Filter,
    filter_doc: &RawDocument,
    now: i64,
) -> Result<RawDocumentBuf, Failure> {
    let base = if update.is_replacement() {
        update::upsert_seed_id(filter_doc)?
    } else {
        update::upsert_seed(filter_doc)?
    };
    let applied = update.apply(&base, &context(filter, now, true))?;
    check_storable(&applied.doc)?;
    Ok(insert::prepare(engine, &applied.doc, now)?.into_owned())
}

/// The storage rules an updated document must still meet (nesting depth, `_id` type).
pub(super) fn check_storable(doc: &RawDocument) -> Result<(), Error> {
    bson_canonical::validate_for_storage(doc.as_bytes()).map_err(|error| {
        Error::new(
            ErrorCode::from_parts(error.code(), error.code_name()),
            error.to_string(),
        )
    })?;
    if let Ok(Some(id)) = doc.get("_id") {
        insert::check_id(id)?;
    }
    Ok(())
}
