//! The writing end of an aggregation: `$out` replaces a collection with the pipeline's
//! output, `$merge` merges the output into one.
//!
//! Both run inside one store write transaction, fed document by document while the
//! pipeline reads its own snapshot, and commit once at the end; any failure drops the
//! transaction, so the target is either fully written or untouched (mongod's `$merge`
//! commits in batches and can stop half way: this is stronger). A `whenMatched` pipeline
//! is an update pipeline (the update crate's) whose `let` values (`{new: "$$ROOT"}` by
//! default) are evaluated against each output document; it is compiled per match. `$out` builds the new
//! contents in a temporary collection `tmp.agg_out.<uuid>` of the target database (with
//! the target's options), then drops the target and renames the temporary collection over
//! it, as mongod does; the temporary name is never visible to other readers. A
//! transaction over 4 MiB of log is written as several log records, so a crash in the
//! middle of one can leave the temporary collection behind (the target stays as it was);
//! startup does not sweep such leftovers yet. `$merge` matches on `_id` by default, or on
//! `on` fields that a unique, non-partial index of the target makes unique (checked once
//! at `begin`, 51183 as mongod); the match is then a query through the planner, so through
//! that index.

use super::insert;
use super::update::check_storable;
use super::write::{self, Failure, duplicate_key};
use crate::engine::Engine;
use crate::error::{Error, ErrorCode};
use crate::index::spec::KeyKind;
use crate::plan::Hint;
use crate::store::{Namespace, StoreError, Writer};
use bson::raw::{CStr, cstr};
use bson::{Bson, DateTime, Document, RawArray, RawBson, RawBsonRef, RawDocument, RawDocumentBuf};
use query::{Expression, Filter, Merge, Output, Target, Variables, WhenMatched, WhenNotMatched};
use update::{ApplyContext, Update, UpdateOptions};

/// Databases a pipeline may not write to.
const INTERNAL_DATABASES: &[&str] = &["admin", "config", "local"];

/// Where the documents of a writing pipeline go, between `begin` and `finish`.
pub(super) struct Sink<'e, 'w, 's> {
    engine: &'e Engine,
    writer: &'w mut Writer<'s>,
    now: i64,
    mode: Mode,
}

enum Mode {
    /// `$out`: documents go to `temp`, which replaces `target` at the end.
    Out { target: Namespace, temp: Namespace },
    /// `$merge` into `target`; `vars` are the command's variables, which a `whenMatched`
    /// pipeline reads besides its own `let`.
    Merge {
        target: Namespace,
        merge: Box<Merge>,
        vars: Variables,
    },
}

/// The namespace a stage names, checked as mongod checks it.
fn target_namespace(stage: &str, target: &Target, db: &str) -> Result<Namespace, Error> {
    let ns = Namespace::new(target.db.as_deref().unwrap_or(db), target.coll.clone());
    let invalid = || {
        Error::new(
            ErrorCode::InvalidNamespace,
            format!("Invalid {stage} target namespace, {}", ns.full()),
        )
    };
    super::check_database_name(&ns.db).map_err(|_| invalid())?;
    super::args::check_namespace(&ns).map_err(|_| invalid())?;
    let (special, internal) = if stage == "$out" {
        (17385, 31321)
    } else {
        (31319, 31320)
    };
    let verb = if stage == "$out" { "Can't" } else { "Cannot" };
    if ns.coll.starts_with("system.") {
        return Err(Error::new(
            ErrorCode::Location(special),
            format!("{verb} {stage} to special collection: {}", ns.coll),
        ));
    }
    if INTERNAL_DATABASES.contains(&ns.db.as_str()) {
        return Err(Error::new(
            ErrorCode::Location(internal),
            format!("{verb} {stage} to internal database: {}", ns.db),
        ));
    }
    Ok(ns)
}

impl<'e, 'w, 's> Sink<'e, 'w, 's> {
    /// Checks the stage's target and prepares to write: `$out` creates its temporary
    /// collection here, so an empty output still leaves an (empty) target.
    pub(super) fn begin(
        engine: &'e Engine,
        writer: &'w mut Writer<'s>,
        db: &str,
        output: &Output,
        vars: &Variables,
        now: i64,
    ) -> Result<Sink<'e, 'w, 's>, Error> {
        let mode = match output {
            Output::Out(target) => {
                let target = target_namespace("$out", target, db)?;
                let existing = writer.collection(&target)?;
                let options = existing
                    .as_ref()
                    .map_or_else(RawDocumentBuf::new, |meta| meta.options.clone());
                let temp = Namespace::new(
                    target.db.clone(),
                    format!("tmp.agg_out.{}", engine.ids.object_id(now).to_hex()),
                );
                writer.create_collection(&temp, options)?;
                // The target keeps its indexes, as mongod's `$out` copies them onto the
                // temporary collection first: a unique one is enforced on the output.
                for index in existing.iter().flat_map(|meta| &meta.indexes) {
                    writer.create_index(&temp, &index.spec)?;
                }
                Mode::Out { target, temp }
            }
            Output::Merge(merge) => {
                let target = target_namespace("$merge", &merge.into, db)?;
                check_on_fields(writer, &target, &merge.on)?;
                if let WhenMatched::Pipeline { stages, variables } = &merge.when_matched {
                    // Parsed once up front (its `let` names bound to null) so a bad
                    // pipeline fails even when nothing matches.
                    let names = let_spec(variables.as_deref())?
                        .into_iter()
                        .map(|(name, _)| (name, Bson::Null))
                        .collect::<Document>();
                    update_pipeline(stages, &with_values(vars, &names)?)?;
                }
                Mode::Merge {
                    target,
                    merge: merge.clone(),
                    vars: vars.clone(),
                }
            }
        };
        Ok(Sink {
            engine,
            writer,
            now,
            mode,
        })
    }

    /// Writes one output document.
    pub(super) fn write(&mut self, doc: RawDocumentBuf) -> Result<(), Error> {
        match &self.mode {
            Mode::Out { temp, .. } => {
                // A document without `_id` gets one, as an insert would give it.
                let doc = insert::prepare(self.engine, &doc, self.now)?.into_owned();
                self.writer
                    .insert(temp, &doc)
                    .map_err(|error| store_error(error, &doc))?;
                Ok(())
            }
            Mode::Merge {
                target,
                merge,
                vars,
            } => {
                // mongod gives an `_id` up front only when `on` includes it; otherwise
                // a replacement without one keeps the matched document's, and only an
                // inserted document gets a new one.
                let doc = if merge.on.iter().any(|field| field == "_id") {
                    insert::prepare(self.engine, &doc, self.now)?.into_owned()
                } else {
                    doc
                };
                let found = find_match(self.writer, self.engine, target, &merge.on, &doc)?;
                let doc = if found.is_none() {
                    insert::prepare(self.engine, &doc, self.now)?.into_owned()
                } else {
                    doc
                };
                merge_one(self.writer, target, merge, vars, found, doc, self.now)
            }
        }
    }

    /// Completes the write: `$out` drops the old target and renames the temporary
    /// collection over it.
    pub(super) fn finish(self) -> Result<(), Error> {
        if let Mode::Out { target, temp } = &self.mode {
            self.writer.drop_collection(target)?;
            self.writer.rename_collection(temp, target)?;
        }
        Ok(())
    }
}

/// A store failure while writing `doc`: a duplicate `_id` carries what drivers read.
fn store_error(error: StoreError, doc: &RawDocument) -> Error {
    match error {
        StoreError::DuplicateKey(_) | StoreError::Rejected(_) => duplicate_key(&error, doc),
        other => other.into(),
    }
}

/// Checks that `on` identifies at most one document of `target`, as mongod checks it: `_id`
/// always does; other fields need a unique index of `target` (not partial, every key field
/// ascending or descending) whose fields are exactly `on`'s, in any order (51183 without
/// one, also when `target` does not exist yet), and no field may be named twice (31465).
fn check_on_fields(
    writer: &mut Writer<'_>,
    target: &Namespace,
    on: &[String],
) -> Result<(), Error> {
    let mut fields = std::collections::BTreeSet::new();
    for field in on {
        if !fields.insert(field.as_str()) {
            return Err(Error::new(
                ErrorCode::Location(31465),
                format!("Found a duplicate field '{field}'"),
            ));
        }
    }
    if on == ["_id"] {
        return Ok(());
    }
    let supported = writer.collection(target)?.is_some_and(|meta| {
        meta.indexes.iter().any(|index| {
            let spec = &index.spec;
            spec.unique
                && spec.partial.is_none()
                && spec
                    .fields
                    .iter()
                    .all(|key| matches!(key.kind, KeyKind::Ascending | KeyKind::Descending))
                && spec.fields.len() == fields.len()
                && spec
                    .fields
                    .iter()
                    .all(|key| fields.contains(key.path.as_str()))
        })
    });
    if supported {
        Ok(())
    } else {
        Err(Error::new(
            ErrorCode::Location(51183),
            "Cannot find index to verify that join fields will be unique",
        ))
    }
}

/// The value at a dotted `path` of `doc`; a path through an array finds nothing, as
/// mongod's `getNestedField` does.
fn nested<'a>(doc: &'a RawDocument, path: &str) -> Option<RawBsonRef<'a>> {
    let mut current = doc;
    let mut parts = path.split('.').peekable();
    while let Some(part) = parts.next() {
        let value = current.get(part).ok()??;
        if parts.peek().is_none() {
            return Some(value);
        }
        match value {
            RawBsonRef::Document(inner) => current = inner,
            _ => return None,
        }
    }
    None
}

/// The target document `doc` merges with: the one whose `on` fields equal `doc`'s (each
/// present, neither null, undefined nor an array: 51132 / 51185). `on` is unique in the
/// target (`check_on_fields`), so there is at most one; the lookup goes through the planner,
/// hence through that unique index.
fn find_match(
    writer: &mut Writer<'_>,
    engine: &Engine,
    target: &Namespace,
    on: &[String],
    doc: &RawDocument,
) -> Result<Option<(u64, RawDocumentBuf)>, Error> {
    if on == ["_id"] {
        let id = match doc.get("_id") {
            Ok(Some(id)) => id,
            _ => return Err(Error::new(ErrorCode::InternalError, "no _id to merge on")),
        };
        return Ok(writer.find_id(target, id)?);
    }
    let mut filter_doc = RawDocumentBuf::new();
    for field in on {
        let value = nested(doc, field);
        if let Some(RawBsonRef::Array(_)) = value {
            return Err(Error::new(
                ErrorCode::Location(51185),
                format!("$merge write error: 'on' field '{field}' is an array"),
            ));
        }
        let Some(value) = value.filter(|v| !matches!(v, RawBsonRef::Null | RawBsonRef::Undefined))
        else {
            return Err(Error::new(
                ErrorCode::Location(51132),
                format!(
                    "$merge write error: 'on' field '{field}' cannot be missing, null, \
                     undefined or an array"
                ),
            ));
        };
        let mut eq = RawDocumentBuf::new();
        eq.append(cstr!("$eq"), value);
        let key = <&CStr>::try_from(field.as_str())
            .map_err(|e| Error::new(ErrorCode::FailedToParse, e.to_string()))?;
        filter_doc.append(key, eq);
    }
    let filter = Filter::parse(&filter_doc)?;
    let found = write::select(
        writer,
        engine,
        target,
        &filter,
        &filter_doc,
        &Hint::None,
        true,
    )
    .map_err(|failure| match failure {
        Failure::Statement(error) | Failure::Fatal(error) => error,
    })?;
    Ok(found.into_iter().next())
}

/// mongod's refusal when a matched document would get another `_id`.
fn check_same_id(stored: &RawDocument, doc: &RawDocument) -> Result<(), Error> {
    match doc.get("_id") {
        Ok(Some(id)) if Some(id) != stored.get("_id").ok().flatten() => Err(Error::new(
            ErrorCode::Other(66, "ImmutableField"),
            "$merge failed to update the matching document, did you attempt to modify the _id \
             or the shard key? :: caused by :: Performing an update on the path '_id' would \
             modify the immutable field '_id'",
        )),
        _ => Ok(()),
    }
}

/// `$merge` of one document with its match in the target (`found`), if any.
fn merge_one(
    writer: &mut Writer<'_>,
    target: &Namespace,
    merge: &Merge,
    vars: &Variables,
    found: Option<(u64, RawDocumentBuf)>,
    doc: RawDocumentBuf,
    now: i64,
) -> Result<(), Error> {
    match (found, &merge.when_matched, merge.when_not_matched) {
        (Some(_), WhenMatched::KeepExisting, _) => Ok(()),
        // The insert meets the stored `_id`: mongod's duplicate key error, as it reports it.
        (Some(_), WhenMatched::Fail, _) => writer
            .insert(target, &doc)
            .map(|_| ())
            .map_err(|error| store_error(error, &doc)),
        (Some((rid, stored)), WhenMatched::Replace, _) => {
            check_same_id(&stored, &doc)?;
            let doc = with_id_of(&stored, doc)?;
            writer
                .update(target, rid, &doc)
                .map_err(|error| store_error(error, &doc))
        }
        (Some((rid, stored)), WhenMatched::Pipeline { stages, variables }, _) => {
            let mut values = Document::new();
            for (name, expression) in let_spec(variables.as_deref())? {
                let value =
                    Expression::parse_with(expression.as_raw_bson_ref(), vars)?.evaluate(&doc)?;
                values.insert(name, value.unwrap_or(Bson::Null));
            }
            let update = update_pipeline(stages, &with_values(vars, &values)?)?;
            let context = ApplyContext {
                now: Some(DateTime::from_millis(now)),
                ..ApplyContext::default()
            };
            let applied = update.apply(&stored, &context)?;
            if !applied.modified {
                return Ok(());
            }
            check_storable(&applied.doc)?;
            writer
                .update(target, rid, &applied.doc)
                .map_err(|error| store_error(error, &applied.doc))
        }
        (Some((rid, stored)), _, _) => {
            check_same_id(&stored, &doc)?;
            let merged = merged(&stored, &doc)?;
            writer
                .update(target, rid, &merged)
                .map_err(|error| store_error(error, &merged))
        }
        (None, _, WhenNotMatched::Insert) => writer
            .insert(target, &doc)
            .map(|_| ())
            .map_err(|error| store_error(error, &doc)),
        (None, _, WhenNotMatched::Discard) => Ok(()),
        (None, _, WhenNotMatched::Fail) => Err(Error::new(
            ErrorCode::Location(13113),
            "$merge could not find a matching document in the target collection for at least \
             one document in the source collection",
        )),
    }
}

/// A replacement keeps the matched document's `_id` (first, as a stored document has it)
/// when it has none of its own.
fn with_id_of(stored: &RawDocument, doc: RawDocumentBuf) -> Result<RawDocumentBuf, Error> {
    if doc.get("_id").ok().flatten().is_some() {
        return Ok(doc);
    }
    let Some(id) = stored.get("_id").ok().flatten() else {
        return Ok(doc);
    };
    let mut out = RawDocumentBuf::new();
    out.append(cstr!("_id"), id);
    for element in &doc {
        let (key, value) =
            element.map_err(|e| Error::new(ErrorCode::InvalidBson, e.to_string()))?;
        out.append(key, value);
    }
    Ok(out)
}

/// A `whenMatched` pipeline's `let` (`{new: "$$ROOT"}` when absent): names and the
/// expressions evaluated against each output document.
fn let_spec(variables: Option<&RawDocument>) -> Result<Vec<(String, RawBson)>, Error> {
    let Some(spec) = variables else {
        return Ok(vec![(
            "new".to_owned(),
            RawBson::String("$$ROOT".to_owned()),
        )]);
    };
    let mut out = Vec::new();
    for element in spec {
        let (name, value) =
            element.map_err(|e| Error::new(ErrorCode::InvalidBson, e.to_string()))?;
        out.push((name.as_str().to_owned(), RawBson::from(value)));
    }
    Ok(out)
}

/// The command's variables with `values` bound as constants.
fn with_values(vars: &Variables, values: &Document) -> Result<Variables, Error> {
    let raw = RawDocumentBuf::try_from(values)
        .map_err(|e| Error::new(ErrorCode::InternalError, e.to_string()))?;
    Ok(vars.with_constants(&raw)?)
}

/// A `whenMatched` pipeline compiled with `vars`.
fn update_pipeline(stages: &RawArray, vars: &Variables) -> Result<Update, Error> {
    let options = UpdateOptions {
        variables: vars.clone(),
        ..UpdateOptions::default()
    };
    Ok(Update::parse_pipeline(stages, options)?)
}

/// `whenMatched: "merge"`: the stored document with each top-level field of `doc` set
/// (present fields keep their place, new ones are appended).
fn merged(stored: &RawDocument, doc: &RawDocument) -> Result<RawDocumentBuf, Error> {
    let decode = |raw: &RawDocument| {
        Document::try_from(raw).map_err(|e| Error::new(ErrorCode::InvalidBson, e.to_string()))
    };
    let mut out = decode(stored)?;
    for (key, value) in decode(doc)? {
        out.insert(key, value);
    }
    let out = RawDocumentBuf::try_from(&out)
        .map_err(|e| Error::new(ErrorCode::InternalError, e.to_string()))?;
    let size = out.as_bytes().len();
    if size > crate::limits::BSON_OBJECT_SIZE_MAX {
        return Err(Error::new(
            ErrorCode::Other(10334, "BSONObjectTooLarge"),
            format!("$merge result document is too large: {size} bytes"),
        ));
    }
    Ok(out)
}
