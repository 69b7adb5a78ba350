//! Compiling a `$jsonSchema` document into [`Schema`]: one [`Keyword`] per rule, checked and
//! refused as mongod's `JSONSchemaParser` refuses it (codes 9 FailedToParse, 14 TypeMismatch,
//! 2 BadValue, with mongod's messages).

use super::keyword::{Additional, Dependency, Keyword, eq_unordered};
use crate::error::QueryError;
use crate::filter::TypeSelector;
use crate::limits::FILTER_DEPTH_MAX;
use bson::raw::{RawArray, RawDocument};
use bson::{RawBson, RawBsonRef};
use bson_canonical::compare::{array_values, elements};

/// A compiled schema: its keywords in evaluation order, and the texts mongod copies into a
/// failure's details.
#[derive(Debug)]
pub(crate) struct Schema {
    pub(super) keywords: Vec<Keyword>,
    pub(super) title: Option<String>,
    pub(super) description: Option<String>,
}

/// Keywords mongod names and refuses ("is not currently supported").
const UNSUPPORTED: &[&str] = &["$ref", "$schema", "default", "definitions", "format", "id"];

/// Every keyword this dialect has, in the order [`Schema::parse`] compiles them (mongod's:
/// scalar, array, object, then logical keywords; the type last).
const KEYWORDS: &[&str] = &[
    "pattern",
    "maxLength",
    "minLength",
    "multipleOf",
    "maximum",
    "exclusiveMaximum",
    "minimum",
    "exclusiveMinimum",
    "minItems",
    "maxItems",
    "uniqueItems",
    "items",
    "additionalItems",
    "properties",
    "patternProperties",
    "additionalProperties",
    "required",
    "minProperties",
    "maxProperties",
    "dependencies",
    "allOf",
    "anyOf",
    "oneOf",
    "not",
    "enum",
    "bsonType",
    "type",
    "title",
    "description",
];

fn failed(message: impl Into<String>) -> QueryError {
    QueryError::FailedToParse(message.into())
}

fn mismatch(message: impl Into<String>) -> QueryError {
    QueryError::TypeMismatch(message.into())
}

/// The BSON type name mongod prints in its messages.
fn type_of(value: RawBsonRef<'_>) -> &'static str {
    crate::filter::types::type_name(crate::filter::types::type_code(&value))
}

/// The keywords of one schema document, looked up by name.
struct Found<'a> {
    slots: Vec<Option<RawBsonRef<'a>>>,
}

impl<'a> Found<'a> {
    fn get(&self, name: &str) -> Option<RawBsonRef<'a>> {
        let at = KEYWORDS.iter().position(|k| *k == name)?;
        self.slots.get(at).copied().flatten()
    }
}

fn collect(doc: &RawDocument) -> Result<Found<'_>, QueryError> {
    let mut slots = vec![None; KEYWORDS.len()];
    for element in doc.iter_elements() {
        let element = element.map_err(|e| QueryError::bad_value(e.to_string()))?;
        let key = element.key().as_str();
        let value = element
            .value()
            .map_err(|e| QueryError::bad_value(e.to_string()))?;
        let Some(at) = KEYWORDS.iter().position(|k| *k == key) else {
            if UNSUPPORTED.contains(&key) {
                return Err(failed(format!(
                    "$jsonSchema keyword '{key}' is not currently supported"
                )));
            }
            return Err(failed(format!("Unknown $jsonSchema keyword: {key}")));
        };
        let slot = slots.get_mut(at).expect("position is within KEYWORDS");
        if slot.is_some() {
            return Err(failed(format!("Duplicate $jsonSchema keyword: {key}")));
        }
        *slot = Some(value);
    }
    Ok(Found { slots })
}

/// A non-negative whole number (`minLength`, `maxItems`, ...), as mongod's
/// `parseIntegerElementToNonNegativeLong` reads it.
fn count(key: &str, value: RawBsonRef<'_>) -> Result<u64, QueryError> {
    if crate::value::as_f64(value).is_none() {
        return Err(failed(format!("Expected a number in: {key}")));
    }
    let whole = crate::value::as_whole_i64(value)
        .ok_or_else(|| failed(format!("Expected an integer: {key}")))?;
    u64::try_from(whole).map_err(|_| failed(format!("Expected a positive number in: {key}")))
}

fn number(key: &str, value: RawBsonRef<'_>) -> Result<RawBson, QueryError> {
    if crate::value::as_f64(value).is_none() {
        return Err(mismatch(format!(
            "$jsonSchema keyword '{key}' must be a number"
        )));
    }
    Ok(crate::value::owned(value))
}

fn nested(key: &str, value: RawBsonRef<'_>, depth: usize) -> Result<Schema, QueryError> {
    let RawBsonRef::Document(sub) = value else {
        return Err(mismatch(format!(
            "$jsonSchema keyword '{key}' must be an object"
        )));
    };
    Schema::parse_at(sub, depth + 1)
}

fn string_list(key: &str, value: RawBsonRef<'_>) -> Result<Vec<String>, QueryError> {
    let RawBsonRef::Array(items) = value else {
        return Err(mismatch(format!(
            "$jsonSchema keyword '{key}' must be an array, but found an element of type {}",
            type_of(value)
        )));
    };
    let mut out: Vec<String> = Vec::new();
    for item in array_values(items) {
        let RawBsonRef::String(name) = item else {
            return Err(mismatch(format!(
                "$jsonSchema keyword '{key}' must be an array of strings, but found an element \
                 of type: {}",
                type_of(item)
            )));
        };
        if out.iter().any(|n| n == name) {
            return Err(failed(format!(
                "$jsonSchema keyword '{key}' array cannot contain duplicate values"
            )));
        }
        out.push(name.to_owned());
    }
    if out.is_empty() {
        return Err(failed(format!(
            "$jsonSchema keyword '{key}' cannot be an empty array"
        )));
    }
    Ok(out)
}

fn type_names(
    key: &'static str,
    value: RawBsonRef<'_>,
) -> Result<(Vec<TypeSelector>, RawBson), QueryError> {
    let names: Vec<&str> = match value {
        RawBsonRef::String(name) => vec![name],
        RawBsonRef::Array(items) => {
            let mut names = Vec::new();
            for item in array_values(items) {
                let RawBsonRef::String(name) = item else {
                    return Err(mismatch(format!(
                        "$jsonSchema keyword '{key}' array elements must be strings"
                    )));
                };
                if names.contains(&name) {
                    return Err(failed(format!(
                        "$jsonSchema keyword '{key}' has duplicate value: {name}"
                    )));
                }
                names.push(name);
            }
            names
        }
        _ => {
            return Err(mismatch(format!(
                "$jsonSchema keyword '{key}' must be either a string or an array of strings"
            )));
        }
    };
    if names.contains(&"integer") {
        return Err(failed(
            "$jsonSchema type 'integer' is not currently supported.",
        ));
    }
    let mut types = Vec::new();
    for name in names {
        types.push(match (key, name) {
            ("type", "object") => TypeSelector::Code(3),
            ("type", "array") => TypeSelector::Code(4),
            ("type", "number") => TypeSelector::Number,
            ("type", "boolean") => TypeSelector::Code(8),
            ("type", "string") => TypeSelector::Code(2),
            ("type", "null") => TypeSelector::Code(10),
            ("type", _) => {
                return Err(QueryError::bad_value(format!(
                    "Unknown type name alias: {name}"
                )));
            }
            _ => TypeSelector::parse(RawBsonRef::String(name))?,
        });
    }
    if types.is_empty() {
        return Err(failed(format!(
            "$jsonSchema keyword '{key}' must name at least one type"
        )));
    }
    Ok((types, crate::value::owned(value)))
}

fn schema_list(key: &str, value: RawBsonRef<'_>, depth: usize) -> Result<Vec<Schema>, QueryError> {
    let RawBsonRef::Array(items) = value else {
        return Err(mismatch(format!(
            "$jsonSchema keyword '{key}' must be an array"
        )));
    };
    let mut out = Vec::new();
    for item in array_values(items) {
        let RawBsonRef::Document(sub) = item else {
            return Err(mismatch(format!(
                "$jsonSchema keyword '{key}' must be an array of objects, but found an element \
                 of type {}",
                type_of(item)
            )));
        };
        out.push(Schema::parse_at(sub, depth + 1)?);
    }
    if out.is_empty() {
        return Err(QueryError::bad_value(format!(
            "$jsonSchema keyword '{key}' must be a non-empty array"
        )));
    }
    Ok(out)
}

fn enum_values(value: RawBsonRef<'_>) -> Result<Keyword, QueryError> {
    let RawBsonRef::Array(items) = value else {
        return Err(mismatch(format!(
            "$jsonSchema keyword 'enum' must be an array, but found an element of type {}",
            type_of(value)
        )));
    };
    let values: Vec<RawBsonRef<'_>> = array_values(items).collect();
    if values.is_empty() {
        return Err(failed(
            "$jsonSchema keyword 'enum' cannot be an empty array",
        ));
    }
    for (i, a) in values.iter().enumerate() {
        if values.iter().skip(i + 1).any(|b| eq_unordered(*a, *b)) {
            return Err(failed(
                "$jsonSchema keyword 'enum' array cannot contain duplicate values.",
            ));
        }
    }
    let owned = values.iter().map(|v| crate::value::owned(*v)).collect();
    Ok(Keyword::Enum(crate::value::owned(value), owned))
}

fn bound(
    found: &Found<'_>,
    key: &'static str,
    exclusive_key: &'static str,
) -> Result<Option<Keyword>, QueryError> {
    let exclusive = match found.get(exclusive_key) {
        Some(RawBsonRef::Boolean(b)) => b,
        Some(_) => {
            return Err(mismatch(format!(
                "$jsonSchema keyword '{exclusive_key}' must be a boolean"
            )));
        }
        None => false,
    };
    let Some(value) = found.get(key) else {
        if found.get(exclusive_key).is_some() {
            return Err(failed(format!(
                "$jsonSchema keyword '{key}' must be a present if {exclusive_key} is present"
            )));
        }
        return Ok(None);
    };
    let limit = number(key, value)?;
    Ok(Some(if key == "maximum" {
        Keyword::Maximum { limit, exclusive }
    } else {
        Keyword::Minimum { limit, exclusive }
    }))
}

impl Schema {
    /// Compiles a top-level `$jsonSchema` document.
    pub(crate) fn parse(doc: &RawDocument) -> Result<Schema, QueryError> {
        Schema::parse_at(doc, 0)
    }

    fn parse_at(doc: &RawDocument, depth: usize) -> Result<Schema, QueryError> {
        if depth > FILTER_DEPTH_MAX {
            return Err(QueryError::bad_value(format!(
                "exceeded maximum filter depth of {FILTER_DEPTH_MAX}"
            )));
        }
        let found = collect(doc)?;
        let mut schema = Schema {
            keywords: Vec::new(),
            title: None,
            description: None,
        };
        for key in ["description", "title"] {
            match found.get(key) {
                Some(RawBsonRef::String(text)) if key == "title" => {
                    schema.title = Some(text.to_owned())
                }
                Some(RawBsonRef::String(text)) => schema.description = Some(text.to_owned()),
                Some(_) => {
                    return Err(mismatch(format!(
                        "$jsonSchema keyword '{key}' must be of type string"
                    )));
                }
                None => {}
            }
        }
        if found.get("type").is_some() && found.get("bsonType").is_some() {
            return Err(failed(
                "Cannot specify both $jsonSchema keywords 'type' and 'bsonType'",
            ));
        }
        let keywords = &mut schema.keywords;
        scalar_keywords(&found, keywords)?;
        array_keywords(&found, keywords, depth)?;
        object_keywords(&found, keywords, depth)?;
        logical_keywords(&found, keywords, depth)?;
        for key in ["bsonType", "type"] {
            if let Some(value) = found.get(key) {
                let (types, spec) = type_names(key, value)?;
                let name = if key == "type" { "type" } else { "bsonType" };
                keywords.push(Keyword::Type { name, types, spec });
            }
        }
        Ok(schema)
    }
}

fn scalar_keywords(found: &Found<'_>, out: &mut Vec<Keyword>) -> Result<(), QueryError> {
    if let Some(value) = found.get("pattern") {
        let RawBsonRef::String(source) = value else {
            return Err(mismatch("$jsonSchema keyword 'pattern' must be a string"));
        };
        out.push(Keyword::Pattern(crate::filter::compile_regex(source, "")?));
    }
    if let Some(value) = found.get("maxLength") {
        out.push(Keyword::MaxLength(count("maxLength", value)?));
    }
    if let Some(value) = found.get("minLength") {
        out.push(Keyword::MinLength(count("minLength", value)?));
    }
    if let Some(value) = found.get("multipleOf") {
        let divisor = number("multipleOf", value)?;
        if crate::value::as_f64(value).is_none_or(|v| v.is_nan() || v <= 0.0) {
            return Err(failed(
                "$jsonSchema keyword 'multipleOf' must have a positive value",
            ));
        }
        out.push(Keyword::MultipleOf(divisor));
    }
    out.extend(bound(found, "maximum", "exclusiveMaximum")?);
    out.extend(bound(found, "minimum", "exclusiveMinimum")?);
    Ok(())
}

fn array_keywords(
    found: &Found<'_>,
    out: &mut Vec<Keyword>,
    depth: usize,
) -> Result<(), QueryError> {
    if let Some(value) = found.get("minItems") {
        out.push(Keyword::MinItems(count("minItems", value)?));
    }
    if let Some(value) = found.get("maxItems") {
        out.push(Keyword::MaxItems(count("maxItems", value)?));
    }
    match found.get("uniqueItems") {
        Some(RawBsonRef::Boolean(true)) => out.push(Keyword::UniqueItems),
        Some(RawBsonRef::Boolean(false)) | None => {}
        Some(_) => {
            return Err(mismatch(
                "$jsonSchema keyword 'uniqueItems' must be a boolean",
            ));
        }
    }
    let mut tuple_len = None;
    match found.get("items") {
        Some(RawBsonRef::Document(sub)) => {
            out.push(Keyword::Items(Box::new(Schema::parse_at(sub, depth + 1)?)));
        }
        Some(RawBsonRef::Array(items)) => {
            let schemas = tuple(items, depth)?;
            tuple_len = Some(schemas.len());
            out.push(Keyword::ItemsTuple(schemas));
        }
        Some(other) => {
            return Err(mismatch(format!(
                "$jsonSchema keyword 'items' must be an array or an object, not {}",
                type_of(other)
            )));
        }
        None => {}
    }
    if let Some(value) = found.get("additionalItems") {
        let additional = match value {
            RawBsonRef::Boolean(b) => Additional::Allowed(b),
            RawBsonRef::Document(sub) => {
                Additional::Schema(Box::new(Schema::parse_at(sub, depth + 1)?))
            }
            other => {
                return Err(mismatch(format!(
                    "$jsonSchema keyword 'additionalItems' must be either an object or a \
                     boolean, but got a {}",
                    type_of(other)
                )));
            }
        };
        // Without an `items` array there is no position where additional items start.
        if let Some(start) = tuple_len {
            out.push(Keyword::AdditionalItems { start, additional });
        }
    }
    Ok(())
}

fn tuple(items: &RawArray, depth: usize) -> Result<Vec<Schema>, QueryError> {
    let mut out = Vec::new();
    for item in array_values(items) {
        let RawBsonRef::Document(sub) = item else {
            return Err(mismatch(format!(
                "$jsonSchema keyword 'items' requires that each element of the array is an \
                 object, but found a {}",
                type_of(item)
            )));
        };
        out.push(Schema::parse_at(sub, depth + 1)?);
    }
    Ok(out)
}

fn object_keywords(
    found: &Found<'_>,
    out: &mut Vec<Keyword>,
    depth: usize,
) -> Result<(), QueryError> {
    let required = found
        .get("required")
        .map(|value| string_list("required", value))
        .transpose()?;
    let mut names = Vec::new();
    if let Some(value) = found.get("properties") {
        let RawBsonRef::Document(props) = value else {
            return Err(mismatch(
                "$jsonSchema keyword 'properties' must be an object",
            ));
        };
        let mut properties = Vec::new();
        for (name, sub) in elements(props) {
            let RawBsonRef::Document(sub) = sub else {
                return Err(mismatch(format!(
                    "Nested schema for $jsonSchema property '{name}' must be an object"
                )));
            };
            names.push(name.to_owned());
            properties.push((name.to_owned(), Schema::parse_at(sub, depth + 1)?));
        }
        out.push(Keyword::Properties(properties));
    }
    let patterns = found.get("patternProperties");
    let additional = found.get("additionalProperties");
    if patterns.is_some() || additional.is_some() {
        out.push(allowed(patterns, additional, names, depth)?);
    }
    if let Some(required) = required {
        out.push(Keyword::Required(required));
    }
    if let Some(value) = found.get("minProperties") {
        out.push(Keyword::MinProperties(count("minProperties", value)?));
    }
    if let Some(value) = found.get("maxProperties") {
        out.push(Keyword::MaxProperties(count("maxProperties", value)?));
    }
    if let Some(value) = found.get("dependencies") {
        out.push(Keyword::Dependencies(dependencies(value, depth)?));
    }
    Ok(())
}

fn allowed(
    patterns: Option<RawBsonRef<'_>>,
    additional: Option<RawBsonRef<'_>>,
    named: Vec<String>,
    depth: usize,
) -> Result<Keyword, QueryError> {
    let mut compiled = Vec::new();
    match patterns {
        Some(RawBsonRef::Document(doc)) => {
            for (source, sub) in elements(doc) {
                let RawBsonRef::Document(sub) = sub else {
                    return Err(mismatch(format!(
                        "$jsonSchema keyword 'patternProperties' has property '{source}' which \
                         is not an object"
                    )));
                };
                let pattern = crate::filter::compile_regex(source, "")?;
                compiled.push((pattern, Schema::parse_at(sub, depth + 1)?));
            }
        }
        Some(_) => {
            return Err(mismatch(
                "$jsonSchema keyword 'patternProperties' must be an object",
            ));
        }
        None => {}
    }
    let additional = match additional {
        None => None,
        Some(RawBsonRef::Boolean(b)) => Some(Additional::Allowed(b)),
        Some(RawBsonRef::Document(sub)) => Some(Additional::Schema(Box::new(Schema::parse_at(
            sub,
            depth + 1,
        )?))),
        Some(_) => {
            return Err(mismatch(
                "$jsonSchema keyword 'additionalProperties' must be an object or a boolean",
            ));
        }
    };
    Ok(Keyword::Allowed {
        named,
        patterns: compiled,
        additional,
    })
}

fn dependencies(
    value: RawBsonRef<'_>,
    depth: usize,
) -> Result<Vec<(String, Dependency)>, QueryError> {
    let RawBsonRef::Document(doc) = value else {
        return Err(mismatch(
            "$jsonSchema keyword 'dependencies' must be an object",
        ));
    };
    let mut out = Vec::new();
    for (name, dependency) in elements(doc) {
        let dependency = match dependency {
            RawBsonRef::Document(sub) => Dependency::Schema(Schema::parse_at(sub, depth + 1)?),
            RawBsonRef::Array(items) => Dependency::Properties(property_dependency(name, items)?),
            _ => {
                return Err(mismatch(format!(
                    "property '{name}' in $jsonSchema keyword 'dependencies' must be either an \
                     object or an array"
                )));
            }
        };
        out.push((name.to_owned(), dependency));
    }
    Ok(out)
}

fn property_dependency(name: &str, items: &RawArray) -> Result<Vec<String>, QueryError> {
    let mut out: Vec<String> = Vec::new();
    for item in array_values(items) {
        let RawBsonRef::String(property) = item else {
            return Err(mismatch(format!(
                "array '{name}' in $jsonSchema keyword 'dependencies' can only contain strings, \
                 but found element of type: {}",
                type_of(item)
            )));
        };
        if out.iter().any(|p| p == property) {
            return Err(failed(format!(
                "array '{name}' in $jsonSchema keyword 'dependencies' contains duplicate \
                 element: {property}"
            )));
        }
        out.push(property.to_owned());
    }
    if out.is_empty() {
        return Err(failed(format!(
            "property '{name}' in $jsonSchema keyword 'dependencies' cannot be an empty array"
        )));
    }
    Ok(out)
}

fn logical_keywords(
    found: &Found<'_>,
    out: &mut Vec<Keyword>,
    depth: usize,
) -> Result<(), QueryError> {
    if let Some(value) = found.get("allOf") {
        out.push(Keyword::AllOf(schema_list("allOf", value, depth)?));
    }
    if let Some(value) = found.get("anyOf") {
        out.push(Keyword::AnyOf(schema_list("anyOf", value, depth)?));
    }
    if let Some(value) = found.get("oneOf") {
        out.push(Keyword::OneOf(schema_list("oneOf", value, depth)?));
    }
    if let Some(value) = found.get("not") {
        if !matches!(value, RawBsonRef::Document(_)) {
            return Err(mismatch(format!(
                "$jsonSchema keyword 'not' must be an object, but found an element of type {}",
                type_of(value)
            )));
        }
        out.push(Keyword::Not(Box::new(nested("not", value, depth)?)));
    }
    if let Some(value) = found.get("enum") {
        out.push(enum_values(value)?);
    }
    Ok(())
}
