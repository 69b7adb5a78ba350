//! `$lookup`: each input document gets, as an array field, the documents of another
//! collection of its database that it joins with. Both of MongoDB's forms and the two
//! together: equality (`localField`/`foreignField`), a sub-pipeline (`pipeline`, reading
//! the input document through `let` variables as `$$name`), and equality then
//! sub-pipeline. The collection's documents come from the engine through [`Foreign`]; a
//! `$lookup` without `from` runs its pipeline, which must start with `$documents`, over
//! nothing.
//!
//! Matching follows MongoDB's `makeMatchStageFromInput`: every value at `localField`
//! (arrays on the way and at the end give their elements), null when there is none, each
//! compared with `foreignField` by `$eq`: a foreign array matches through an element,
//! null matches a missing field, and a regular expression is compared, not run.
//!
//! Invariants:
//! - The foreign collection is read once per run and kept while it stays under
//!   `LOOKUP_CACHE_BYTES`; past that, each input document reads it again (memory stays
//!   bounded, as MongoDB's nested-loop join does).
//! - A sub-pipeline with `let` variables is parsed again for each input document with
//!   that document's values (variables are bound when a pipeline is parsed); one without
//!   is parsed once.

use super::stages::{to_raw, to_tree, type_name};
use super::{Foreign, Pipeline, chain, fields, refuse_output_stages, stage_names};
use crate::error::QueryError;
use crate::expr::Expression;
use crate::filter::Filter;
use crate::variables::{self, Variables};
use bson::raw::{RawArrayBuf, RawDocument, RawDocumentBuf};
use bson::{Bson, RawBsonRef, doc};
use bson_canonical::compare::elements;
use std::collections::BTreeSet;

/// Bytes of foreign documents a `$lookup` keeps in memory between input documents.
const LOOKUP_CACHE_BYTES: usize = 64 << 20;

/// Largest total size of the documents one input document joins with (MongoDB's
/// `BSONObjMaxInternalSize`).
const LOOKUP_RESULT_BYTES_MAX: usize = 16 * 1024 * 1024 + 16 * 1024;

/// A parsed `$lookup`.
#[derive(Debug, Clone)]
pub(crate) struct Lookup {
    /// The foreign collection; `None` for a pipeline that starts with `$documents`.
    from: Option<String>,
    as_path: Vec<String>,
    /// `localField` (split) and `foreignField` (as written, for the join filter).
    join: Option<(Vec<String>, String)>,
    lets: Vec<(String, Expression)>,
    stages: Option<RawArrayBuf>,
    /// The sub-pipeline parsed once, with every `let` name bound to nothing: the one
    /// that runs when there is no `let`, and what `collections` walks.
    template: Option<Pipeline>,
    vars: Variables,
}

/// The foreign documents one run of a `$lookup` keeps between input documents.
#[derive(Debug, Default)]
pub(crate) enum Cache {
    #[default]
    Unread,
    Held(Vec<RawDocumentBuf>),
    /// Over `LOOKUP_CACHE_BYTES`: read again for every input document.
    TooLarge,
}

fn failed(message: impl Into<String>) -> QueryError {
    QueryError::FailedToParse(message.into())
}

/// Parses the specification of a `$lookup` stage.
pub(crate) fn parse(spec: RawBsonRef<'_>, vars: &Variables) -> Result<Lookup, QueryError> {
    let RawBsonRef::Document(spec) = spec else {
        return Err(failed("the $lookup specification must be an Object"));
    };
    let (mut from, mut as_field, mut local, mut foreign) = (None, None, None, None);
    let (mut let_spec, mut stages) = (None, None);
    for (name, value) in elements(spec) {
        match name {
            "pipeline" => {
                let RawBsonRef::Array(array) = value else {
                    return Err(QueryError::TypeMismatch(
                        "'pipeline' option must be specified as an array".to_owned(),
                    ));
                };
                stages = Some(array.to_owned());
            }
            "let" => {
                let RawBsonRef::Document(doc) = value else {
                    return Err(failed(format!(
                        "$lookup argument 'let: {}' must be an object, is type {}",
                        fields::show_raw(value),
                        type_name(value)
                    )));
                };
                let_spec = Some(doc);
            }
            "from" => from = Some(parse_from(value)?),
            _ => {
                let RawBsonRef::String(text) = value else {
                    return Err(failed(format!(
                        "$lookup argument '{name}' must be a string, found {name}: {}: {}",
                        fields::show_raw(value),
                        type_name(value)
                    )));
                };
                match name {
                    "as" => as_field = Some(text),
                    "localField" => local = Some(text),
                    "foreignField" => foreign = Some(text),
                    _ => return Err(failed(format!("unknown argument to $lookup: {name}"))),
                }
            }
        }
    }
    if from.is_none() {
        let starts_with_documents = stages
            .as_ref()
            .is_some_and(|stages| stage_names(stages).next() == Some("$documents"));
        if !starts_with_documents {
            return Err(failed(
                "$lookup stage without explicit collection must have a pipeline with \
                 $documents as first stage",
            ));
        }
    }
    let Some(as_field) = as_field else {
        return Err(failed("must specify 'as' field for a $lookup"));
    };
    let join = match (local, foreign, &stages) {
        (Some(local), Some(foreign), _) => {
            fields::field_path(foreign)?;
            Some((fields::field_path(local)?, foreign.to_owned()))
        }
        (None, None, Some(_)) => None,
        (_, _, Some(_)) => {
            return Err(failed(
                "$lookup requires both or neither of 'localField' and 'foreignField' to be \
                 specified",
            ));
        }
        (_, _, None) => {
            return Err(failed(
                "$lookup requires either 'pipeline' or both 'localField' and 'foreignField' \
                 to be specified",
            ));
        }
    };
    if stages.is_none() && let_spec.is_some() {
        return Err(failed(
            "$lookup with a 'let' argument must also specify 'pipeline'",
        ));
    }
    let mut lets = Vec::new();
    for (name, value) in let_spec.map(elements).into_iter().flatten() {
        variables::check_user_name(name)?;
        lets.push((name.to_owned(), Expression::parse_with(value, vars)?));
    }
    let template = match &stages {
        Some(stages) => {
            refuse_output_stages(stages, 51047, "to be used within a $lookup stage")?;
            let unbound = lets.iter().map(|(name, _)| (name.clone(), None)).collect();
            Some(Pipeline::parse_with(stages, &vars.with_values(unbound))?)
        }
        None => None,
    };
    Ok(Lookup {
        from,
        as_path: fields::field_path(as_field)?,
        join,
        lets,
        stages,
        template,
        vars: vars.clone(),
    })
}

/// `from`: a collection name of the pipeline's database.
fn parse_from(value: RawBsonRef<'_>) -> Result<String, QueryError> {
    match value {
        RawBsonRef::String(name) if !name.is_empty() => Ok(name.to_owned()),
        RawBsonRef::String(_) => Err(QueryError::location(
            73,
            "Invalid $lookup namespace: the collection name is empty",
        )),
        RawBsonRef::Document(spec) => {
            // MongoDB allows `{db, coll}` only for a few internal collections.
            let part = |key: &str| {
                crate::raw::get_field(spec, key)
                    .and_then(|v| v.as_str())
                    .unwrap_or("")
                    .to_owned()
            };
            Err(failed(format!(
                "$lookup with syntax {{from: {{db:<>, coll:<>}},..}} is not supported for db: \
                 {} and coll: {}",
                part("db"),
                part("coll")
            )))
        }
        other => Err(failed(format!(
            "$lookup 'from' field must be a string or an object, but found {}",
            type_name(other)
        ))),
    }
}

impl Lookup {
    /// Adds the collections this stage reads (its own and its sub-pipeline's).
    pub(crate) fn collections(&self, out: &mut BTreeSet<String>) {
        out.extend(self.from.clone());
        if let Some(template) = &self.template {
            out.extend(template.foreign_collections());
        }
    }

    /// `doc` with the `as` field set to the documents it joins with.
    pub(crate) fn apply(
        &self,
        doc: RawDocumentBuf,
        foreign: &dyn Foreign,
        cache: &mut Cache,
    ) -> Result<RawDocumentBuf, QueryError> {
        let filter = match &self.join {
            Some((local, foreign_field)) => Some(join_filter(&doc, local, foreign_field)?),
            None => None,
        };
        let keep = |candidate: &RawDocument| -> Result<bool, QueryError> {
            match &filter {
                Some(filter) => filter.try_matches(candidate),
                None => Ok(true),
            }
        };
        let mut joined: Vec<RawDocumentBuf> = Vec::new();
        match &self.from {
            None => {}
            Some(from) => {
                if let Cache::Unread = cache {
                    *cache = read_all(foreign, from)?;
                }
                match cache {
                    Cache::Held(docs) => {
                        for candidate in docs.iter() {
                            if keep(candidate)? {
                                joined.push(candidate.clone());
                            }
                        }
                    }
                    _ => {
                        for candidate in foreign.scan(from)? {
                            let candidate = candidate?;
                            if keep(&candidate)? {
                                joined.push(candidate);
                            }
                        }
                    }
                }
            }
        }
        let results = match &self.template {
            None => joined,
            Some(template) => {
                let input = Box::new(joined.into_iter().map(Ok));
                if self.lets.is_empty() {
                    chain(&template.stages, input, foreign).collect::<Result<Vec<_>, _>>()?
                } else {
                    let mut values = Vec::with_capacity(self.lets.len());
                    for (name, expression) in &self.lets {
                        values.push((name.clone(), expression.evaluate(&doc)?));
                    }
                    let stages = self.stages.as_ref().expect("a template has its stages");
                    let pipeline = Pipeline::parse_with(stages, &self.vars.with_values(values))?;
                    chain(&pipeline.stages, input, foreign).collect::<Result<Vec<_>, _>>()?
                }
            }
        };
        let total: usize = results.iter().map(|d| d.as_bytes().len()).sum();
        if total > LOOKUP_RESULT_BYTES_MAX {
            return Err(QueryError::location(
                4568,
                format!(
                    "Total size of documents in {} matching pipeline's $lookup stage exceeds \
                     {LOOKUP_RESULT_BYTES_MAX} bytes",
                    self.from.as_deref().unwrap_or("$documents")
                ),
            ));
        }
        let mut array = Vec::with_capacity(results.len());
        for result in results {
            array.push(Bson::Document(to_tree(&result)?));
        }
        let mut tree = to_tree(&doc)?;
        fields::set_nested(&mut tree, &self.as_path, Bson::Array(array));
        to_raw(&tree)
    }
}

/// Every document of `from`, kept when they fit in `LOOKUP_CACHE_BYTES`.
fn read_all(foreign: &dyn Foreign, from: &str) -> Result<Cache, QueryError> {
    let mut docs = Vec::new();
    let mut bytes = 0usize;
    for doc in foreign.scan(from)? {
        let doc = doc?;
        bytes += doc.as_bytes().len();
        if bytes > LOOKUP_CACHE_BYTES {
            return Ok(Cache::TooLarge);
        }
        docs.push(doc);
    }
    Ok(Cache::Held(docs))
}

/// The filter a foreign document passes to join with `doc`: `foreignField` equal to one
/// of the values at `local` (null when there is none).
fn join_filter(
    doc: &RawDocument,
    local: &[String],
    foreign_field: &str,
) -> Result<Filter, QueryError> {
    let mut values = Vec::new();
    collect_values(RawBsonRef::Document(doc), local, &mut values);
    let mut bson_values = Vec::with_capacity(values.len().max(1));
    for value in values {
        bson_values.push(Bson::try_from(value).map_err(|e| QueryError::bad_value(e.to_string()))?);
    }
    if bson_values.is_empty() {
        bson_values.push(Bson::Null);
    }
    let spec = match &bson_values[..] {
        [single] => doc! {foreign_field: {"$eq": single.clone()}},
        _ if bson_values
            .iter()
            .any(|v| matches!(v, Bson::RegularExpression(_))) =>
        {
            let branches: Vec<Bson> = bson_values
                .into_iter()
                .map(|v| Bson::Document(doc! {foreign_field: {"$eq": v}}))
                .collect();
            doc! {"$or": branches}
        }
        _ => doc! {foreign_field: {"$in": bson_values}},
    };
    let raw = to_raw(&spec)?;
    Filter::parse(&raw)
}

/// MongoDB's `visitAllValuesAtPath`: the values at `path`, through documents and the
/// document elements of arrays on the way, an array at the end giving its elements.
fn collect_values<'a>(value: RawBsonRef<'a>, path: &[String], out: &mut Vec<RawBsonRef<'a>>) {
    match (path.split_first(), value) {
        (None, RawBsonRef::Array(items)) => out.extend(items.into_iter().filter_map(Result::ok)),
        (None, value) => out.push(value),
        (Some((first, rest)), RawBsonRef::Document(doc)) => {
            if let Some(next) = crate::raw::get_field(doc, first) {
                collect_values(next, rest, out);
            }
        }
        (Some(_), RawBsonRef::Array(items)) => {
            for item in items.into_iter().filter_map(Result::ok) {
                if let RawBsonRef::Document(_) = item {
                    collect_values(item, path, out);
                }
            }
        }
        (Some(_), _) => {}
    }
}
