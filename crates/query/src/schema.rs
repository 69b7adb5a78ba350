//! `$jsonSchema`: the common subset of MongoDB's JSON Schema draft 4 dialect.
//!
//! Supported keywords: `bsonType`, `type`, `required`, `properties`,
//! `minimum`/`maximum` (with `exclusiveMinimum`/`exclusiveMaximum`), `enum`,
//! `minLength`/`maxLength`, `pattern`, `items` (one schema), `minItems`/
//! `maxItems`, `additionalProperties` (boolean or schema), `title` and
//! `description`. Other keywords are refused at parse time rather than ignored,
//! so a validator never silently accepts more than it says.

use crate::error::QueryError;
use crate::expr::compare_bson;
use crate::filter::TypeSelector;
use crate::filter::types::type_code;
use bson::raw::RawDocument;
use bson::{Bson, RawBsonRef};
use bson_canonical::compare::{array_values, elements};
use std::sync::Arc;

/// A compiled schema.
#[derive(Debug, Default)]
pub(crate) struct Schema {
    types: Option<Vec<TypeSelector>>,
    required: Vec<String>,
    properties: Vec<(String, Schema)>,
    additional: Option<Additional>,
    minimum: Option<(Bson, bool)>,
    maximum: Option<(Bson, bool)>,
    allowed: Option<Vec<Bson>>,
    length_min: Option<usize>,
    length_max: Option<usize>,
    pattern: Option<Arc<crate::filter::Pattern>>,
    items: Option<Box<Schema>>,
    items_min: Option<usize>,
    items_max: Option<usize>,
}

#[derive(Debug)]
enum Additional {
    Allowed(bool),
    Schema(Box<Schema>),
}

fn failed(message: impl Into<String>) -> QueryError {
    QueryError::FailedToParse(message.into())
}

fn count(key: &str, value: RawBsonRef<'_>) -> Result<usize, QueryError> {
    crate::value::as_whole_i64(value)
        .and_then(|v| usize::try_from(v).ok())
        .ok_or_else(|| {
            failed(format!(
                "$jsonSchema keyword '{key}' must be a non-negative integer"
            ))
        })
}

fn json_type(name: &str) -> Result<Vec<TypeSelector>, QueryError> {
    Ok(match name {
        "object" => vec![TypeSelector::Code(3)],
        "array" => vec![TypeSelector::Code(4)],
        "number" => vec![TypeSelector::Number],
        "boolean" => vec![TypeSelector::Code(8)],
        "string" => vec![TypeSelector::Code(2)],
        "null" => vec![TypeSelector::Code(10)],
        _ => return Err(failed(format!("Unknown type name alias: {name}"))),
    })
}

fn type_list(
    value: RawBsonRef<'_>,
    one: impl Fn(&str) -> Result<Vec<TypeSelector>, QueryError>,
) -> Result<Vec<TypeSelector>, QueryError> {
    let mut out = Vec::new();
    match value {
        RawBsonRef::String(s) => out.extend(one(s)?),
        RawBsonRef::Array(items) => {
            for item in array_values(items) {
                let RawBsonRef::String(s) = item else {
                    return Err(QueryError::TypeMismatch(
                        "type names must be strings".to_owned(),
                    ));
                };
                out.extend(one(s)?);
            }
        }
        _ => {
            return Err(QueryError::TypeMismatch(
                "type must be a string or an array".to_owned(),
            ));
        }
    }
    Ok(out)
}

fn to_bson(value: RawBsonRef<'_>) -> Result<Bson, QueryError> {
    Bson::try_from(value).map_err(|e| QueryError::bad_value(e.to_string()))
}

impl Schema {
    /// Compiles a schema document.
    pub(crate) fn parse(doc: &RawDocument) -> Result<Schema, QueryError> {
        let mut schema = Schema::default();
        let mut exclusive_min = false;
        let mut exclusive_max = false;
        for (key, value) in elements(doc) {
            match key {
                "bsonType" => {
                    schema.types = Some(type_list(value, |s| {
                        Ok(vec![TypeSelector::parse(RawBsonRef::String(s))?])
                    })?);
                }
                "type" => schema.types = Some(type_list(value, json_type)?),
                "required" => {
                    let RawBsonRef::Array(items) = value else {
                        return Err(failed("$jsonSchema keyword 'required' must be an array"));
                    };
                    for item in array_values(items) {
                        let RawBsonRef::String(s) = item else {
                            return Err(failed(
                                "$jsonSchema keyword 'required' must be an array of strings",
                            ));
                        };
                        schema.required.push(s.to_owned());
                    }
                }
                "properties" => {
                    let RawBsonRef::Document(props) = value else {
                        return Err(failed("$jsonSchema keyword 'properties' must be an object"));
                    };
                    for (name, sub) in elements(props) {
                        let RawBsonRef::Document(sub) = sub else {
                            return Err(failed(format!(
                                "Nested schema for $jsonSchema property '{name}' must be an object"
                            )));
                        };
                        schema
                            .properties
                            .push((name.to_owned(), Schema::parse(sub)?));
                    }
                }
                "additionalProperties" => {
                    schema.additional = Some(match value {
                        RawBsonRef::Boolean(b) => Additional::Allowed(b),
                        RawBsonRef::Document(sub) => {
                            Additional::Schema(Box::new(Schema::parse(sub)?))
                        }
                        _ => {
                            return Err(failed(
                                "$jsonSchema keyword 'additionalProperties' must be either an object or a boolean",
                            ));
                        }
                    });
                }
                "minimum" | "maximum" => {
                    if crate::value::as_f64(value).is_none() {
                        return Err(failed(format!(
                            "$jsonSchema keyword '{key}' must be a number"
                        )));
                    }
                    let bound = Some((to_bson(value)?, false));
                    if key == "minimum" {
                        schema.minimum = bound
                    } else {
                        schema.maximum = bound
                    }
                }
                "exclusiveMinimum" => exclusive_min = crate::value::true_value(value),
                "exclusiveMaximum" => exclusive_max = crate::value::true_value(value),
                "enum" => {
                    let RawBsonRef::Array(items) = value else {
                        return Err(failed("$jsonSchema keyword 'enum' must be an array"));
                    };
                    schema.allowed =
                        Some(array_values(items).map(to_bson).collect::<Result<_, _>>()?);
                }
                "minLength" => schema.length_min = Some(count(key, value)?),
                "maxLength" => schema.length_max = Some(count(key, value)?),
                "minItems" => schema.items_min = Some(count(key, value)?),
                "maxItems" => schema.items_max = Some(count(key, value)?),
                "pattern" => {
                    let RawBsonRef::String(p) = value else {
                        return Err(failed("$jsonSchema keyword 'pattern' must be a string"));
                    };
                    schema.pattern = Some(crate::filter::compile_regex(p, "")?);
                }
                "items" => {
                    let RawBsonRef::Document(sub) = value else {
                        return Err(failed(
                            "$jsonSchema keyword 'items' must be an object (arrays of schemas are not supported)",
                        ));
                    };
                    schema.items = Some(Box::new(Schema::parse(sub)?));
                }
                "title" | "description" => {}
                _ => return Err(failed(format!("Unknown $jsonSchema keyword: {key}"))),
            }
        }
        if let Some(m) = &mut schema.minimum {
            m.1 = exclusive_min;
        }
        if let Some(m) = &mut schema.maximum {
            m.1 = exclusive_max;
        }
        Ok(schema)
    }

    /// Whether the document satisfies the schema.
    pub(crate) fn matches(&self, doc: &RawDocument) -> bool {
        bson::Document::try_from(doc).is_ok_and(|d| self.accepts(&Bson::Document(d)))
    }

    fn accepts(&self, value: &Bson) -> bool {
        let raw = crate::expr::value_to_raw(value);
        let raw_ref = raw.as_raw_bson_ref();
        if let Some(types) = &self.types
            && !types.iter().any(|t| t.matches(&raw_ref))
        {
            return false;
        }
        if let Some(allowed) = &self.allowed {
            let here = Some(value.clone());
            if !allowed
                .iter()
                .any(|a| compare_bson(&Some(a.clone()), &here).is_eq())
            {
                return false;
            }
        }
        // Keywords apply only to values of their kind (JSON Schema semantics).
        if matches!(type_code(&raw_ref), 1 | 16 | 18 | 19) {
            let here = Some(value.clone());
            if let Some((bound, exclusive)) = &self.minimum {
                let order = compare_bson(&here, &Some(bound.clone()));
                if order.is_lt() || (*exclusive && order.is_eq()) {
                    return false;
                }
            }
            if let Some((bound, exclusive)) = &self.maximum {
                let order = compare_bson(&here, &Some(bound.clone()));
                if order.is_gt() || (*exclusive && order.is_eq()) {
                    return false;
                }
            }
        }
        match value {
            Bson::String(s) => self.accepts_string(s),
            Bson::Array(items) => self.accepts_array(items),
            Bson::Document(doc) => self.accepts_document(doc),
            _ => true,
        }
    }

    fn accepts_string(&self, s: &str) -> bool {
        let length = s.chars().count();
        if self.length_min.is_some_and(|m| length < m)
            || self.length_max.is_some_and(|m| length > m)
        {
            return false;
        }
        match &self.pattern {
            Some(p) => p.regex.is_match(s).unwrap_or(false),
            None => true,
        }
    }

    fn accepts_array(&self, items: &[Bson]) -> bool {
        if self.items_min.is_some_and(|m| items.len() < m)
            || self.items_max.is_some_and(|m| items.len() > m)
        {
            return false;
        }
        match &self.items {
            Some(schema) => items.iter().all(|item| schema.accepts(item)),
            None => true,
        }
    }

    fn accepts_document(&self, doc: &bson::Document) -> bool {
        if !self.required.iter().all(|name| doc.contains_key(name)) {
            return false;
        }
        for (name, value) in doc {
            match self.properties.iter().find(|(n, _)| n == name) {
                Some((_, schema)) => {
                    if !schema.accepts(value) {
                        return false;
                    }
                }
                None => match &self.additional {
                    Some(Additional::Allowed(false)) => return false,
                    Some(Additional::Schema(schema)) if !schema.accepts(value) => return false,
                    _ => {}
                },
            }
        }
        true
    }
}
