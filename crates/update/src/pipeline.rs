//! Pipeline-style updates: `$set`/`$addFields`, `$unset`, `$project` and
//! `$replaceRoot`/`$replaceWith`, with the query crate's expressions (the field
//! semantics of `$set` and `$unset` live in [`crate::fields`]).

use bson::{Bson, Document, RawArray, RawBsonRef, RawDocumentBuf};
use query::{Expression, Projection, Variables};

use crate::error::UpdateError;
use crate::fields::{SetTree, UnsetTree};
use crate::value::to_bson;

/// One stage of an update pipeline.
#[derive(Debug, Clone)]
pub(crate) enum Stage {
    /// `$set` / `$addFields`: dotted paths and the expressions they receive.
    Set(SetTree),
    /// `$unset`: paths to remove.
    Unset(UnsetTree),
    Project(Box<Projection>),
    /// `$replaceRoot: {newRoot}` / `$replaceWith`.
    ReplaceWith(Expression),
}

fn location(code: i32, message: impl Into<String>) -> UpdateError {
    UpdateError::Location {
        code,
        message: message.into(),
    }
}

/// Parses an update pipeline (an array of single-stage documents).
pub(crate) fn parse_pipeline(
    stages: &RawArray,
    vars: &Variables,
) -> Result<Vec<Stage>, UpdateError> {
    let mut parsed = Vec::new();
    for element in stages {
        let element = element.map_err(|e| UpdateError::failed_to_parse(e.to_string()))?;
        let RawBsonRef::Document(stage) = element else {
            return Err(UpdateError::failed_to_parse(
                "Each element of the 'pipeline' array must be an object",
            ));
        };
        let mut fields = stage.into_iter();
        let (name, spec) = match (fields.next(), fields.next()) {
            (Some(Ok((name, spec))), None) => (name.as_str(), spec),
            _ => {
                return Err(location(
                    40323,
                    "A pipeline stage specification object must contain exactly one field.",
                ));
            }
        };
        parsed.push(match name {
            "$set" | "$addFields" => parse_set(name, spec, vars)?,
            "$unset" => parse_unset(spec)?,
            "$project" => match spec {
                RawBsonRef::Document(d) => {
                    Stage::Project(Box::new(Projection::parse_with(d, vars)?))
                }
                _ => return Err(location(15969, "$project specification must be an object")),
            },
            "$replaceWith" => Stage::ReplaceWith(Expression::parse_with(spec, vars)?),
            "$replaceRoot" => {
                let new_root = match spec {
                    RawBsonRef::Document(d) => d.get("newRoot").ok().flatten(),
                    _ => None,
                };
                let Some(new_root) = new_root else {
                    return Err(location(
                        40231,
                        "no newRoot specified for the $replaceRoot stage",
                    ));
                };
                Stage::ReplaceWith(Expression::parse_with(new_root, vars)?)
            }
            other if other.starts_with('$') => {
                return Err(location(
                    72,
                    format!("{other} is not allowed to be used within an update"),
                ));
            }
            other => {
                return Err(location(
                    40324,
                    format!("Unrecognized pipeline stage name: '{other}'"),
                ));
            }
        });
    }
    Ok(parsed)
}

fn field_path(text: &str) -> Result<Vec<String>, UpdateError> {
    if text.is_empty() || text.split('.').any(str::is_empty) {
        return Err(location(
            40352,
            "FieldPath cannot be constructed with empty string",
        ));
    }
    if text.starts_with('$') {
        return Err(location(
            16410,
            format!(
                "FieldPath field names may not start with '$'. Consider using $getField or $setField. ({text})"
            ),
        ));
    }
    Ok(text.split('.').map(str::to_owned).collect())
}

fn parse_set(name: &str, spec: RawBsonRef<'_>, vars: &Variables) -> Result<Stage, UpdateError> {
    let RawBsonRef::Document(fields) = spec else {
        return Err(location(
            40272,
            format!(
                "{name} specification stage must be an object, got {:?}",
                spec.element_type()
            ),
        ));
    };
    let mut out = Vec::new();
    flatten(fields, &[], &mut out, vars)?;
    let spec_text = Document::try_from(fields).map_or_else(|_| String::new(), |d| d.to_string());
    let mut tree = SetTree::default();
    for (path, expression) in out {
        tree.add(&path, expression, &spec_text)?;
    }
    Ok(Stage::Set(tree))
}

/// Nested field specs (`{a: {b: 1}}`) name paths, as in `$addFields`.
fn flatten(
    fields: &bson::RawDocument,
    prefix: &[String],
    out: &mut Vec<(Vec<String>, Expression)>,
    vars: &Variables,
) -> Result<(), UpdateError> {
    for field in fields {
        let (key, value) = field.map_err(|e| UpdateError::failed_to_parse(e.to_string()))?;
        let mut path = prefix.to_vec();
        path.extend(field_path(key.as_str())?);
        match value {
            RawBsonRef::Document(d)
                if !d.is_empty()
                    && d.iter()
                        .next()
                        .and_then(Result::ok)
                        .is_some_and(|(k, _)| !k.as_str().starts_with('$')) =>
            {
                flatten(d, &path, out, vars)?;
            }
            _ => out.push((path, Expression::parse_with(value, vars)?)),
        }
    }
    Ok(())
}

fn parse_unset(spec: RawBsonRef<'_>) -> Result<Stage, UpdateError> {
    let names: Vec<Bson> = match to_bson(spec)? {
        Bson::Array(items) => items,
        one => vec![one],
    };
    let mut paths = UnsetTree::default();
    let mut count = 0;
    for name in names {
        let Bson::String(text) = name else {
            return Err(location(
                31120,
                "$unset specification must be a string or an array containing only string values",
            ));
        };
        paths.add(&field_path(&text)?);
        count += 1;
    }
    if count == 0 {
        return Err(location(
            31119,
            "$unset specification must be a string or an array with at least one field",
        ));
    }
    Ok(Stage::Unset(paths))
}

fn encode(doc: &Document) -> Result<RawDocumentBuf, UpdateError> {
    RawDocumentBuf::try_from(doc).map_err(|e| UpdateError::bad_value(e.to_string()))
}

/// Runs the stages over `doc`.
pub(crate) fn run(
    stages: &[Stage],
    mut doc: Document,
    query: Option<&query::Filter>,
) -> Result<Document, UpdateError> {
    for stage in stages {
        let raw = encode(&doc)?;
        match stage {
            Stage::Set(fields) => fields.apply(&raw, &mut doc)?,
            Stage::Unset(paths) => paths.apply(&mut doc),
            Stage::Project(projection) => {
                let out = projection.apply(&raw, query)?;
                doc = Document::try_from(out.as_ref())
                    .map_err(|e| UpdateError::bad_value(e.to_string()))?;
            }
            Stage::ReplaceWith(expression) => match expression.evaluate(&raw)? {
                Some(Bson::Document(d)) => doc = d,
                other => {
                    let (shown, kind) = match &other {
                        Some(v) => (v.to_string(), crate::value::type_name(v)),
                        None => ("MISSING".to_owned(), "missing"),
                    };
                    return Err(location(
                        40228,
                        format!(
                            "'replacement document' must evaluate to an object, but resulting value was: {shown}. Type of resulting value: '{kind}'."
                        ),
                    ));
                }
            },
        }
    }
    Ok(doc)
}
