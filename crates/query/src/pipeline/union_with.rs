//! `$unionWith`: after the pipeline's own documents, those of another collection of the
//! database, through an optional sub-pipeline. `{$unionWith: "coll"}` or
//! `{$unionWith: {coll, pipeline}}`; without `coll` the sub-pipeline must start with
//! `$documents`. The collection comes from the engine through [`Foreign`].

use super::stages::type_name;
use super::{Documents, Foreign, Pipeline, chain, fields, refuse_output_stages};
use crate::error::QueryError;
use crate::variables::Variables;
use bson::RawBsonRef;
use bson_canonical::compare::elements;
use std::collections::BTreeSet;

/// A parsed `$unionWith`.
#[derive(Debug, Clone)]
pub(crate) struct UnionWith {
    coll: Option<String>,
    pipeline: Option<Pipeline>,
}

fn failed(message: impl Into<String>) -> QueryError {
    QueryError::FailedToParse(message.into())
}

/// Parses the specification of a `$unionWith` stage.
pub(crate) fn parse(spec: RawBsonRef<'_>, vars: &Variables) -> Result<UnionWith, QueryError> {
    let spec = match spec {
        RawBsonRef::String(coll) => {
            return Ok(UnionWith {
                coll: Some(collection_name(coll)?),
                pipeline: None,
            });
        }
        RawBsonRef::Document(spec) => spec,
        other => {
            return Err(failed(format!(
                "the $unionWith stage specification must be an object or string, but found {}",
                type_name(other)
            )));
        }
    };
    let (mut coll, mut stages) = (None, None);
    for (name, value) in elements(spec) {
        match (name, value) {
            ("coll", RawBsonRef::String(text)) => coll = Some(collection_name(text)?),
            ("coll", _) => {
                return Err(failed(
                    "$unionWith object form requires a string 'coll' field",
                ));
            }
            ("pipeline", RawBsonRef::Array(array)) => stages = Some(array),
            ("pipeline", other) => {
                return Err(QueryError::TypeMismatch(format!(
                    "BSON field '$unionWith.pipeline' is the wrong type '{}', expected type \
                     'array'",
                    type_name(other)
                )));
            }
            _ => {
                return Err(QueryError::location(
                    40415,
                    format!("BSON field '$unionWith.{name}' is an unknown field."),
                ));
            }
        }
    }
    let pipeline = match stages {
        Some(stages) => {
            refuse_output_stages(stages, 31441, "within a $unionWith's sub-pipeline")?;
            Some(Pipeline::parse_with(stages, vars)?)
        }
        None => None,
    };
    if coll.is_none() && !pipeline.as_ref().is_some_and(Pipeline::is_collectionless) {
        return Err(failed(
            "$unionWith stage without explicit collection must have a pipeline with \
             $documents as first stage",
        ));
    }
    Ok(UnionWith { coll, pipeline })
}

fn collection_name(text: &str) -> Result<String, QueryError> {
    if text.is_empty() {
        return Err(QueryError::location(
            73,
            "Invalid $unionWith namespace: the collection name is empty",
        ));
    }
    // A name a `FieldPath` would refuse is still a valid collection name; only `$` at
    // the start is never one.
    if text.starts_with('$') {
        return Err(QueryError::location(
            73,
            format!(
                "Invalid collection name: {}",
                fields::show_raw(RawBsonRef::String(text))
            ),
        ));
    }
    Ok(text.to_owned())
}

impl UnionWith {
    /// Adds the collections this stage reads (its own and its sub-pipeline's).
    pub(crate) fn collections(&self, out: &mut BTreeSet<String>) {
        out.extend(self.coll.clone());
        if let Some(pipeline) = &self.pipeline {
            out.extend(pipeline.foreign_collections());
        }
    }

    /// `upstream`, then the collection's documents through the sub-pipeline (read only
    /// once `upstream` is exhausted).
    pub(crate) fn apply<'a>(
        &'a self,
        upstream: Documents<'a>,
        foreign: &'a dyn Foreign,
    ) -> Documents<'a> {
        let unioned = std::iter::once(()).flat_map(move |()| -> Documents<'a> {
            let docs: Documents<'a> = match &self.coll {
                Some(coll) => match foreign.scan(coll) {
                    Ok(docs) => docs,
                    Err(error) => return Box::new(std::iter::once(Err(error))),
                },
                None => Box::new(std::iter::empty()),
            };
            match &self.pipeline {
                Some(pipeline) => chain(&pipeline.stages, docs, foreign),
                None => docs,
            }
        });
        Box::new(upstream.chain(unioned))
    }
}
