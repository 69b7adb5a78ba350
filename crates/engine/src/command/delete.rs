//! The delete command: `{delete, deletes: [{q, limit, hint, collation}], ordered}` → `{n}`.

use super::Request;
use super::args;
use super::retry::Retry;
use super::write::{
    BatchErrors, Failure, Fields, check_collation, check_hint, command_variables, count, reply,
    select_ids, statements,
};
use super::write_concern::WriteConcern;
use crate::engine::Engine;
use crate::error::{Error, ErrorCode};
use crate::store::{Namespace, Writer};
use bson::raw::RawBsonRef;
use bson::{Document, RawDocument, doc};
use query::{Filter, Variables};

/// The arguments delete takes besides the generic ones.
const FIELDS: &[&str] = &[
    "deletes",
    "ordered",
    "let",
    "stmtId",
    "stmtIds",
    "isTimeseriesNamespace",
];

/// The fields of one delete statement.
const STATEMENT_FIELDS: &[&str] = &["q", "limit", "hint", "collation", "sampleId"];

/// One parsed entry of `deletes`.
struct Statement<'a> {
    filter: &'a RawDocument,
    /// `limit: 1`: delete only the first match.
    first_only: bool,
    hint: Option<RawBsonRef<'a>>,
    collation: Option<&'a RawDocument>,
}

/// delete: removes the documents each statement's filter selects.
pub(super) fn delete(engine: &Engine, request: &Request<'_>) -> Result<Document, Error> {
    args::check_fields(request, FIELDS)?;
    let ns = args::collection(request)?;
    args::check_writable(&ns)?;
    let concern = WriteConcern::parse(request)?;
    let ordered = args::opt_bool(request, "ordered")?.unwrap_or(true);
    let vars = command_variables(request, engine.host.now_millis())?;
    let parsed = statements(request, "deletes")?
        .into_iter()
        .map(parse_statement)
        .collect::<Result<Vec<_>, Error>>()?;
    let store = engine.store();
    let mut writer = store.write()?;
    let mut retry = Retry::begin(engine, request, &mut writer)?;
    if retry.is_some() && parsed.iter().any(|statement| !statement.first_only) {
        return Err(super::retry::refuse_multi("limit=0"));
    }
    let mut deleted = 0;
    let mut errors = BatchErrors::default();
    for (index, statement) in parsed.iter().enumerate() {
        // killOp / maxTimeMS end the command; its transaction is dropped whole.
        crate::operations::check_current()?;
        if let Some(retry) = &mut retry
            && let Some(previous) = retry.previous(index, &mut writer)
        {
            deleted += usize::try_from(previous.get_i32("n").unwrap_or(0)).unwrap_or(0);
            continue;
        }
        match errors.take(
            index,
            run_statement(&mut writer, engine, &ns, statement, &vars),
        )? {
            Some(n) => {
                deleted += n;
                if let Some(retry) = &mut retry {
                    let n = i32::try_from(n).unwrap_or(i32::MAX);
                    retry.ran(index, Some(doc! { "n": n }));
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
        ("n", Some(count(deleted))),
        ("writeErrors", errors.field()),
        ("retriedStmtIds", retried),
    ]))
}

fn parse_statement(doc: &RawDocument) -> Result<Statement<'_>, Error> {
    let fields = Fields::new(doc, "delete.deletes".to_owned(), STATEMENT_FIELDS)?;
    let filter = fields.required_doc("q")?;
    let limit = match fields.get("limit")? {
        None => return Err(super::write::missing(&fields.path("limit"))),
        Some(RawBsonRef::Int32(v)) => f64::from(v),
        Some(RawBsonRef::Int64(v)) => v as f64,
        Some(RawBsonRef::Double(v)) => v,
        Some(other) => {
            return Err(super::write::wrong_type(
                &fields.path("limit"),
                other,
                "long",
            ));
        }
    };
    if limit != 0.0 && limit != 1.0 {
        return Err(Error::new(
            ErrorCode::FailedToParse,
            format!("The limit field in delete objects must be 0 or 1. Got {limit}"),
        ));
    }
    Ok(Statement {
        filter,
        first_only: limit == 1.0,
        hint: fields.get("hint")?,
        collation: fields.doc_field("collation")?,
    })
}

fn run_statement(
    writer: &mut Writer<'_>,
    engine: &Engine,
    ns: &Namespace,
    statement: &Statement<'_>,
    vars: &Variables,
) -> Result<usize, Failure> {
    let hint = check_hint(statement.hint)?;
    check_collation(statement.collation)?;
    let filter = Filter::parse_with(statement.filter, vars)?;
    let selected = select_ids(
        writer,
        engine,
        ns,
        &filter,
        statement.filter,
        &hint,
        statement.first_only,
    )?;
    for &rid in &selected {
        writer.delete(ns, rid).map_err(Failure::fatal)?;
    }
    Ok(selected.len())
}
