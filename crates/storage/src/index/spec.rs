//! Index specifications: a `createIndexes` index document parsed and validated as mongod 7.0
//! does, the stored form, the `listIndexes` form, MongoDB's default names, and the
//! same/equivalent/different comparison behind 85 IndexOptionsConflict and 86
//! IndexKeySpecsConflict.
//!
//! The order of the checks follows mongod, because the first failure is the one reported:
//! 1. `validateIndexSpecTTL` (the createIndexes command runs it first);
//! 2. `validateIndexSpec` (`index_key_validate.cpp`): field names, each field's type, the
//!    key pattern (`validateKeyPattern`), the required `key` and `name`; errors are prefixed
//!    "Error in specification <spec> :: caused by :: ";
//! 3. `parseAndValidateIndexSpecs`: the `_id` index rules, the reserved names `_id_` and `*`;
//! 4. `IndexCatalogImpl::_isSpecOk`: name, collation, index type, partial filter, storage
//!    engine options; then the access method's checks (hashed: 16764, 31303) and
//!    `Ordering::make` (13103, more than 32 fields).
//!
//! Wildcard indexes (`$**`, `a.$**`, `wildcardProjection`) are checked as mongod 7.0 checks
//! them (`validateWildcardIndex`, the projection parser, `_isSpecOk`'s sparse, unique and
//! TTL refusals); compound wildcard indexes pass every one of those checks and are then
//! refused with 238 NotImplemented, as are `text`, `2d`, `2dsphere` and `columnstore`
//! indexes, non-simple collations and `clustered` indexes: never accepted and ignored.

use super::display;
use super::error;
use super::partial;
use super::wildcard;
use crate::error::Error;
use bson::{Bson, Document, RawDocument};
use std::sync::Arc;

/// How one key field orders its values.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum KeyKind {
    /// A positive number in the key pattern.
    Ascending,
    /// A negative number.
    Descending,
    /// `"hashed"`: the field's value is replaced by its 64-bit hash.
    Hashed,
}

/// One field of a key pattern.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct KeyField {
    /// The dotted path.
    pub path: String,
    /// Its kind.
    pub kind: KeyKind,
}

/// A validated index specification.
#[derive(Debug, Clone)]
pub struct IndexSpec {
    /// The index name.
    pub name: String,
    /// The key pattern as given (field order and values as the client sent them).
    pub key_pattern: Document,
    /// The key pattern's fields in order.
    pub fields: Vec<KeyField>,
    /// `v`: 1 or 2 (explain's `indexVersion`).
    pub version: i32,
    /// `unique` (always true for the `_id` index).
    pub unique: bool,
    /// `prepareUnique`: new duplicate keys are refused (11000), existing ones stay (the
    /// step before `collMod` converts the index to unique).
    pub prepare_unique: bool,
    /// `sparse`.
    pub sparse: bool,
    /// `hidden`.
    pub hidden: bool,
    /// `partialFilterExpression`, with its compiled filter.
    pub partial: Option<PartialFilter>,
    /// For a wildcard index, the paths it indexes (from the key's `path.$**` or the
    /// `wildcardProjection`); its key field is the one whose path is a wildcard.
    pub wildcard: Option<Arc<wildcard::Projection>>,
    /// `expireAfterSeconds` (TTL), as mongod lists it (a 32-bit integer).
    pub expire_after_seconds: Option<i32>,
    /// The specification as mongod stores it (`_fixIndexSpec`'s order: `v`, `unique`,
    /// `hidden`, `prepareUnique`, `key`, `name`, then the other options as given).
    pub stored: Document,
}

/// A partial filter: the document (for listings and comparison) and the compiled filter.
#[derive(Debug, Clone)]
pub struct PartialFilter {
    /// The filter as given.
    pub document: Document,
    /// Compiled once; `Filter::try_matches` decides whether a document is indexed.
    pub filter: Arc<query::Filter>,
}

/// Options of the createIndexes command that change how a specification is read.
#[derive(Debug, Clone, Copy, Default)]
pub struct ParseOptions {
    /// `ignoreUnknownIndexOptions`: unknown fields are dropped instead of refused (197).
    pub ignore_unknown_options: bool,
}

/// The fields an index specification may hold (mongod's `allowedFieldNames`, the fields of
/// `NewIndexSpec` in `create_indexes.idl`, plus `_id`).
const ALLOWED_FIELDS: [&str; 30] = [
    "v",
    "key",
    "name",
    "ns",
    "background",
    "unique",
    "hidden",
    "partialFilterExpression",
    "sparse",
    "expireAfterSeconds",
    "storageEngine",
    "weights",
    "default_language",
    "language_override",
    "textIndexVersion",
    "2dsphereIndexVersion",
    "bits",
    "min",
    "max",
    "bucketSize",
    "collation",
    "wildcardProjection",
    "columnstoreProjection",
    "columnstoreCompressor",
    "coarsestIndexedLevel",
    "finestIndexedLevel",
    "dropDups",
    "originalSpec",
    "clustered",
    "prepareUnique",
];

/// Fields of an `_id` index specification (`allowedIdIndexFieldNames`).
const ID_INDEX_FIELDS: [&str; 6] = ["collation", "name", "v", "key", "ns", "_id"];

/// The most fields a key pattern may have (`Ordering::make`).
pub const KEY_FIELDS_MAX: usize = 32;

/// The largest key pattern in bytes (`validateKeyPattern`).
const KEY_PATTERN_BYTES_MAX: usize = 2048;

/// The most indexes a collection may have, `_id_` included (`kMaxNumIndexesAllowed`).
pub const INDEXES_MAX: usize = 64;

/// Index types mongod knows (`IndexNames::isKnownName`).
const KNOWN_PLUGINS: [&str; 8] = [
    "2d",
    "2dsphere",
    "2dsphere_bucket",
    "text",
    "hashed",
    "wildcard",
    "columnstore",
    "geoHaystack",
];

fn cannot(message: impl Into<String>) -> Error {
    error(67, "CannotCreateIndex", message)
}

fn type_mismatch(message: impl Into<String>) -> Error {
    error(14, "TypeMismatch", message)
}

fn bad_value(message: impl Into<String>) -> Error {
    error(2, "BadValue", message)
}

fn not_implemented(message: impl Into<String>) -> Error {
    error(238, "NotImplemented", message)
}

/// Prefixes an error's message as mongod's `withContext` does.
fn in_context(context: &str, inner: Error) -> Error {
    let code = inner.code();
    Error::new(code, format!("{context} :: caused by :: {inner}"))
}

impl IndexSpec {
    /// The top-level fields the keys of a document (and the partial filter) are read
    /// from: the first component of each key path. `None` when they may be anywhere (a
    /// wildcard index, a partial filter that reads the whole document). A document cut
    /// down to its first occurrences of these fields gives the same keys as the whole one
    /// (the key walk, as the matcher, takes a field's first occurrence).
    pub fn read_fields(&self) -> Option<std::collections::BTreeSet<String>> {
        if self.wildcard.is_some() {
            return None;
        }
        let mut out = match &self.partial {
            Some(partial) => partial.filter.top_level_fields()?,
            None => std::collections::BTreeSet::new(),
        };
        for field in &self.fields {
            let head = field.path.split('.').next().unwrap_or_default();
            out.insert(head.to_owned());
        }
        Some(out)
    }

    /// Parses and validates one element of createIndexes' `indexes`.
    pub fn parse(raw: &RawDocument, options: ParseOptions) -> Result<IndexSpec, Error> {
        let mut given = Document::try_from(raw).map_err(|e| {
            error(
                22,
                "InvalidBSON",
                format!("invalid index specification: {e}"),
            )
        })?;
        if options.ignore_unknown_options {
            given = given
                .into_iter()
                .filter(|(key, _)| ALLOWED_FIELDS.contains(&key.as_str()) || key == "_id")
                .collect();
        }
        validate_ttl(&given)?;
        let context = format!("Error in specification {}", display::document(&given));
        let validated =
            validate_fields(raw, &given).map_err(|inner| in_context(&context, inner))?;
        let key = validated.get_document("key").cloned().unwrap_or_default();
        let name = validated.get_str("name").unwrap_or_default().to_owned();
        if is_id_pattern(&key) {
            validate_id_spec(&validated, &key)?;
        } else if name == "_id_" {
            return Err(bad_value(format!(
                "The index name '_id_' is reserved for the _id index, which must have key \
                 pattern {{_id: 1}}, found key: {}",
                display::document(&key)
            )));
        } else if name == "*" {
            return Err(bad_value("The index name '*' is not valid."));
        }
        let context = format!("Error in specification {}", display::document(&validated));
        let spec = check_catalog_rules(validated).map_err(|inner| in_context(&context, inner))?;
        spec.check_access_method()?;
        Ok(spec)
    }

    /// The `_id` index every collection has.
    pub fn id_index() -> IndexSpec {
        let stored = bson::doc! {"v": 2, "key": {"_id": 1}, "name": "_id_"};
        IndexSpec {
            name: "_id_".to_owned(),
            key_pattern: bson::doc! {"_id": 1},
            fields: vec![KeyField {
                path: "_id".to_owned(),
                kind: KeyKind::Ascending,
            }],
            version: 2,
            unique: true,
            prepare_unique: false,
            sparse: false,
            hidden: false,
            partial: None,
            wildcard: None,
            expire_after_seconds: None,
            stored,
        }
    }

    /// Whether this is the `_id` index.
    pub fn is_id(&self) -> bool {
        is_id_pattern(&self.key_pattern)
    }

    /// The index as `listIndexes` shows it: mongod's `ListIndexesReplyItem` order (`v`,
    /// `key`, `name`, `background`, `unique`, `hidden`, `partialFilterExpression`, `sparse`,
    /// `expireAfterSeconds`, `storageEngine`, ..., `collation`, ..., `prepareUnique`),
    /// booleans as booleans and `v`/`expireAfterSeconds` as 32-bit integers.
    pub fn list_entry(&self) -> Document {
        let mut out = Document::new();
        for field in LIST_ORDER {
            let Some(value) = self.stored.get(field) else {
                continue;
            };
            let value = match *field {
                "background" | "unique" | "hidden" | "sparse" | "dropDups" | "clustered"
                | "prepareUnique" => Bson::Boolean(truthy(value)),
                "v"
                | "expireAfterSeconds"
                | "textIndexVersion"
                | "2dsphereIndexVersion"
                | "bits"
                | "coarsestIndexedLevel"
                | "finestIndexedLevel" => Bson::Int32(safe_int(value)),
                "min" | "max" | "bucketSize" => Bson::Double(number(value).unwrap_or(0.0)),
                _ => value.clone(),
            };
            out.insert(*field, value);
        }
        out
    }

    fn check_access_method(&self) -> Result<(), Error> {
        let hashed = self
            .fields
            .iter()
            .filter(|f| f.kind == KeyKind::Hashed)
            .count();
        if hashed > 0 && self.unique {
            return Err(error(
                16764,
                "Location16764",
                "Currently hashed indexes cannot guarantee uniqueness. Use a regular index.",
            ));
        }
        if hashed > 1 {
            return Err(error(
                31303,
                "Location31303",
                format!(
                    "A maximum of one index field is allowed to be hashed but found {hashed} \
                     for 'key' {}",
                    display::document(&self.key_pattern)
                ),
            ));
        }
        if self.fields.len() > KEY_FIELDS_MAX {
            return Err(error(13103, "Location13103", "too many compound keys"));
        }
        if self.wildcard.is_some() && self.fields.len() > 1 {
            return Err(not_implemented(
                "compound wildcard indexes are not supported yet: use a wildcard index alone",
            ));
        }
        Ok(())
    }
}

/// `ListIndexesReplyItem`'s field order (`list_indexes.idl`).
const LIST_ORDER: &[&str] = &[
    "v",
    "key",
    "name",
    "background",
    "unique",
    "hidden",
    "partialFilterExpression",
    "sparse",
    "expireAfterSeconds",
    "storageEngine",
    "weights",
    "default_language",
    "language_override",
    "textIndexVersion",
    "2dsphereIndexVersion",
    "bits",
    "min",
    "max",
    "bucketSize",
    "collation",
    "wildcardProjection",
    "columnstoreProjection",
    "coarsestIndexedLevel",
    "finestIndexedLevel",
    "dropDups",
    "originalSpec",
    "clustered",
    "prepareUnique",
];

/// mongod's `isIdIndexPattern`: `{_id: n}` with `n` truncating to 1 or -1.
pub fn is_id_pattern(key: &Document) -> bool {
    let mut fields = key.iter();
    let Some((name, value)) = fields.next() else {
        return false;
    };
    let n = number(value).map_or(0, |x| x as i64);
    fields.next().is_none() && name == "_id" && (n == 1 || n == -1)
}

/// `BSONElement::number()` for numeric values.
fn number(value: &Bson) -> Option<f64> {
    match value {
        Bson::Int32(n) => Some(f64::from(*n)),
        Bson::Int64(n) => Some(*n as f64),
        Bson::Double(x) => Some(*x),
        Bson::Decimal128(d) => d.to_string().parse().ok(),
        _ => None,
    }
}

/// `BSONElement::trueValue()`.
pub fn truthy(value: &Bson) -> bool {
    match value {
        Bson::Boolean(b) => *b,
        Bson::Null | Bson::Undefined => false,
        other => number(other).is_none_or(|x| x != 0.0),
    }
}

/// `safeNumberLong()` for the TTL rules: NaN 0, truncation, clamping.
fn safe_long(value: &Bson) -> i64 {
    match value {
        Bson::Int32(n) => i64::from(*n),
        Bson::Int64(n) => *n,
        other => {
            let x = number(other).unwrap_or(0.0);
            if x.is_nan() { 0 } else { x as i64 }
        }
    }
}

/// `safeNumberInt()`: `safeNumberLong` clamped to 32 bits.
fn safe_int(value: &Bson) -> i32 {
    safe_long(value).clamp(i64::from(i32::MIN), i64::from(i32::MAX)) as i32
}

/// `validateIndexSpecTTL`, as the createIndexes command runs it on every index first.
fn validate_ttl(spec: &Document) -> Result<(), Error> {
    let Some(expire) = spec.get("expireAfterSeconds") else {
        return Ok(());
    };
    let context = format!(". Index spec: {}", display::document(spec));
    let reason = if number(expire).is_none() {
        Some(format!(
            "TTL index 'expireAfterSeconds' option must be numeric, but received a type of '{}'",
            display::type_name(expire)
        ))
    } else if number(expire).is_some_and(f64::is_nan) {
        Some("TTL index 'expireAfterSeconds' option must not be NaN".to_owned())
    } else if i64::from(safe_int(expire)) != safe_long(expire) {
        Some("TTL index 'expireAfterSeconds' must be within the range of a 32-bit integer".into())
    } else if safe_long(expire) < 0 {
        Some("TTL index 'expireAfterSeconds' option cannot be less than 0".to_owned())
    } else {
        None
    };
    if let Some(reason) = reason {
        return Err(in_context(&context, cannot(reason)));
    }
    if let Ok(key) = spec.get_document("key")
        && key.len() != 1
    {
        return Err(cannot(format!(
            "TTL indexes are single-field indexes, compound indexes do not support TTL. \
             Index spec: {}",
            display::document(spec)
        )));
    }
    Ok(())
}

/// `validateIndexSpec`: field names and types, the key pattern, `key` and `name` present.
/// Returns the specification with `ns` dropped and `v` added (2) when missing.
fn validate_fields(raw: &RawDocument, spec: &Document) -> Result<Document, Error> {
    let clustered = spec.contains_key("clustered");
    for key in spec.keys() {
        let allowed = if clustered {
            ["name", "unique", "v", "key", "clustered"].contains(&key.as_str())
        } else {
            ALLOWED_FIELDS.contains(&key.as_str()) || key == "_id"
        };
        if !allowed {
            let kind = if clustered {
                "a clustered index"
            } else {
                "an index"
            };
            return Err(error(
                197,
                "InvalidIndexSpecificationOption",
                format!(
                    "The field '{key}' is not valid for {kind} specification. Specification: {}",
                    display::document(spec)
                ),
            ));
        }
    }
    let mut version = 2;
    let (mut has_key, mut has_name, mut unique, mut prepare_unique) = (false, false, false, false);
    for (field, value) in spec {
        match field.as_str() {
            "key" => {
                let Bson::Document(key) = value else {
                    return Err(type_mismatch(format!(
                        "The field 'key' must be an object, but got {}",
                        display::type_name(value)
                    )));
                };
                check_duplicate_key_fields(raw, key)?;
                validate_key_pattern(key)?;
                validate_key_values(key, spec)?;
                has_key = true;
            }
            "name" => {
                if !matches!(value, Bson::String(_)) {
                    return Err(type_mismatch(format!(
                        "The field 'name' must be a string, but got {}",
                        display::type_name(value)
                    )));
                }
                has_name = true;
            }
            // mongod's message names 'name' here too (index_key_validate.cpp).
            "hidden" if !matches!(value, Bson::Boolean(_)) => {
                return Err(type_mismatch(format!(
                    "The field 'name' must be a bool, but got {}",
                    display::type_name(value)
                )));
            }
            "v" => version = validate_version(value, spec)?,
            "originalSpec" | "collation" => validate_object_option(field, value)?,
            "partialFilterExpression" => validate_partial(value)?,
            "wildcardProjection" | "columnstoreProjection" => {
                validate_projection_option(field, value, spec)?;
            }
            "weights" if !matches!(value, Bson::Document(_) | Bson::String(_)) => {
                return Err(type_mismatch(format!(
                    "The field 'weights' must be an object, but got {}",
                    display::type_name(value)
                )));
            }
            "background" | "unique" | "sparse" | "dropDups" | "prepareUnique" | "clustered" => {
                if number(value).is_none() && !matches!(value, Bson::Boolean(_)) {
                    return Err(type_mismatch(format!(
                        "The field '{field} has value {field}: {}, which is not convertible to \
                         bool",
                        display::value(value)
                    )));
                }
                unique |= field == "unique" && truthy(value);
                prepare_unique |= field == "prepareUnique" && truthy(value);
            }
            "default_language" | "language_override" if !matches!(value, Bson::String(_)) => {
                return Err(type_mismatch(format!(
                    "The field '{field}' must be a string, but got {}",
                    display::type_name(value)
                )));
            }
            "2dsphereIndexVersion"
            | "textIndexVersion"
            | "bits"
            | "min"
            | "max"
            | "coarsestIndexedLevel"
            | "finestIndexedLevel"
                if number(value).is_none() =>
            {
                return Err(type_mismatch(format!(
                    "The field '{field}' must be a number, but got {}",
                    display::type_name(value)
                )));
            }
            _ => {}
        }
    }
    if !has_key {
        return Err(error(
            9,
            "FailedToParse",
            "The 'key' field is a required property of an index specification",
        ));
    }
    if !has_name {
        return Err(error(
            9,
            "FailedToParse",
            "The 'name' field is a required property of an index specification",
        ));
    }
    if let Some(clustered) = spec.get("clustered") {
        if !truthy(clustered) {
            return Err(error(
                6492800,
                "Location6492800",
                "Value 'false' for field 'clustered' is invalid",
            ));
        }
        if !unique {
            return Err(cannot(
                "The 'unique' field is required when 'clustered' is specified",
            ));
        }
    }
    let spec_text = display::document(spec);
    if spec.contains_key("collation") && version < 2 {
        return Err(cannot(format!(
            "Invalid index specification {spec_text}; cannot create an index with the \
             'collation' option and v={version}"
        )));
    }
    let text = plugin(spec.get_document("key").ok()).as_deref() == Some("text");
    if spec.contains_key("weights") && !text {
        return Err(cannot(format!(
            "Invalid index specification {spec_text}; the field 'weights' can only be \
             specified with text indexes"
        )));
    }
    if unique && prepare_unique {
        return Err(cannot(format!(
            "Invalid index specification {spec_text}; cannot create an index with the 'unique' \
             option and the 'prepareUnique' option"
        )));
    }
    let mut validated = spec.clone();
    validated.remove("ns");
    if !validated.contains_key("v") {
        validated.insert("v", 2);
    }
    Ok(validated)
}

fn validate_version(value: &Bson, spec: &Document) -> Result<i32, Error> {
    let Some(x) = number(value) else {
        return Err(type_mismatch(format!(
            "The field 'v' must be a number, but got {}",
            display::type_name(value)
        )));
    };
    if x.fract() != 0.0 || x < f64::from(i32::MIN) || x > f64::from(i32::MAX) {
        return Err(bad_value(format!(
            "Index version must be representable as a 32-bit integer, but got {}",
            display::value(value)
        )));
    }
    let version = x as i32;
    if version != 1 && version != 2 {
        return Err(cannot(format!(
            "Invalid index specification {}; cannot create an index with v={version}",
            display::document(spec)
        )));
    }
    Ok(version)
}

fn validate_object_option(field: &str, value: &Bson) -> Result<(), Error> {
    match value {
        Bson::Document(doc) if doc.is_empty() => Err(bad_value(format!(
            "The field '{field}' cannot be an empty object."
        ))),
        Bson::Document(_) => Ok(()),
        other => Err(type_mismatch(format!(
            "The field '{field}' must be an object, but got {}",
            display::type_name(other)
        ))),
    }
}

fn validate_partial(value: &Bson) -> Result<(), Error> {
    let Bson::Document(filter) = value else {
        return Err(type_mismatch(format!(
            "The field 'partialFilterExpression' must be an object, but got {}",
            display::type_name(value)
        )));
    };
    partial::check_banned(filter)?;
    let raw = bson::RawDocumentBuf::try_from(filter)
        .map_err(|e| bad_value(format!("invalid partialFilterExpression: {e}")))?;
    query::Filter::parse(&raw)?;
    Ok(())
}

fn validate_projection_option(field: &str, value: &Bson, spec: &Document) -> Result<(), Error> {
    let key = spec.get_document("key").ok();
    let wildcard = field == "wildcardProjection";
    let wanted = if wildcard { "wildcard" } else { "columnstore" };
    if plugin(key).as_deref() != Some(wanted) {
        let message = format!("The field '{field}' is only allowed in '{wanted}' indexes");
        return Err(if wildcard {
            bad_value(message)
        } else {
            error(197, "InvalidIndexSpecificationOption", message)
        });
    }
    let Bson::Document(projection) = value else {
        return Err(type_mismatch(format!(
            "The field '{field}' must be a non-empty object, but got {}",
            display::type_name(value)
        )));
    };
    let key = key.cloned().unwrap_or_default();
    if !key.contains_key("$**") {
        return Err(error(
            9,
            "FailedToParse",
            format!(
                "The field '{field}' is only allowed when 'key' is {{\"$**\": \u{b1}1}} or \
                 {{\"$**\": \"columnstore\"}}"
            ),
        ));
    }
    if projection.is_empty() {
        return Err(error(
            9,
            "FailedToParse",
            format!("The '{field}' field can't be an empty object"),
        ));
    }
    if !wildcard {
        return Ok(());
    }
    if key.len() > 1 {
        wildcard::validate_compound_projection(&key, projection)?;
    }
    wildcard::Projection::parse(projection)
        .map(|_| ())
        .map_err(|e| in_context("Failed to parse projection: wildcardProjection", e))
}

/// Field names repeated in the key pattern (`bson::Document` keeps only one, so this reads
/// the raw bytes).
fn check_duplicate_key_fields(raw: &RawDocument, key: &Document) -> Result<(), Error> {
    let Ok(Some(bson::RawBsonRef::Document(raw_key))) = raw.get("key") else {
        return Ok(());
    };
    let mut seen: Vec<&str> = Vec::new();
    for element in raw_key.iter_elements() {
        let Ok(element) = element else { break };
        let name = element.key().as_str();
        if seen.contains(&name) {
            let _ = key;
            return Err(bad_value(format!(
                "The field '{name}' appears multiple times in the index key pattern {}",
                raw_key_text(raw_key)
            )));
        }
        seen.push(name);
    }
    Ok(())
}

fn raw_key_text(raw: &RawDocument) -> String {
    let mut parts = Vec::new();
    for element in raw.iter_elements() {
        let Ok(element) = element else { break };
        let value = element
            .value()
            .ok()
            .and_then(|v| Bson::try_from(bson::RawBson::from(v)).ok())
            .map_or_else(|| "?".to_owned(), |v| display::value(&v));
        parts.push(format!("{}: {value}", element.key().as_str()));
    }
    format!("{{ {} }}", parts.join(", "))
}

/// `IndexNames::findPluginName`: the first string value, or "wildcard" for a `$**` field.
pub fn plugin(key: Option<&Document>) -> Option<String> {
    for (field, value) in key? {
        if let Bson::String(s) = value {
            return Some(s.clone());
        }
        if field == "$**" || field.ends_with(".$**") {
            return Some("wildcard".to_owned());
        }
    }
    None
}

/// `validateKeyPattern` (mongod 7.0, compound wildcard indexes enabled).
fn validate_key_pattern(key: &Document) -> Result<(), Error> {
    let size = bson::RawDocumentBuf::try_from(key).map_or(0, |raw| raw.as_bytes().len());
    if size > KEY_PATTERN_BYTES_MAX {
        return Err(cannot("Index key pattern too large."));
    }
    if key.is_empty() {
        return Err(cannot("Index keys cannot be empty."));
    }
    let plugin_name = plugin(Some(key)).unwrap_or_default();
    if !plugin_name.is_empty() {
        if plugin_name == "geoHaystack" {
            return Err(cannot(
                "GeoHaystack indexes cannot be created in version 5.0 and above",
            ));
        }
        if !KNOWN_PLUGINS.contains(&plugin_name.as_str()) {
            return Err(cannot(format!("Unknown index plugin '{plugin_name}'")));
        }
    }
    if plugin_name == "wildcard" {
        wildcard::validate_key_pattern(key)?;
    }
    for (field, value) in key {
        match value {
            Bson::String(s) if *s != plugin_name => {
                return Err(cannot(
                    "Can't use more than one index plugin for a single index.",
                ));
            }
            Bson::String(s) if s == "wildcard" => {
                return Err(cannot(
                    "The key pattern value for an 'wildcard' index must be a non-zero number, \
                     not a string.",
                ));
            }
            Bson::String(_) => {}
            other => match number(other) {
                Some(x) if x.is_nan() => {
                    return Err(cannot("Values in the index key pattern cannot be NaN."));
                }
                Some(0.0) => {
                    return Err(cannot("Values in the index key pattern cannot be 0."));
                }
                Some(_) => {}
                None => {
                    return Err(cannot(format!(
                        "Values in v:2 index key pattern cannot be of type {}. Only numbers > 0, \
                         numbers < 0, and strings are allowed.",
                        display::type_name(other)
                    )));
                }
            },
        }
        validate_key_field_name(field, value, &plugin_name)?;
    }
    Ok(())
}

fn validate_key_field_name(field: &str, value: &Bson, plugin_name: &str) -> Result<(), Error> {
    if field.is_empty() {
        return Err(cannot("Index keys cannot be an empty field."));
    }
    let string = match value {
        Bson::String(s) => s.as_str(),
        _ => "",
    };
    if field == "$**" && (number(value).is_some() || string == "text" || string == "columnstore") {
        return Ok(());
    }
    if field == "_fts" && string != "text" {
        return Err(cannot("Index key contains an illegal field name: '_fts'"));
    }
    let parts: Vec<&str> = field.split('.').collect();
    for (index, part) in parts.iter().enumerate() {
        if part.is_empty() {
            return Err(cannot("Index keys cannot contain an empty field."));
        }
        if !part.starts_with('$') {
            continue;
        }
        let db_ref = index != 0 && ["$db", "$id", "$ref"].contains(part);
        let wildcard = index == parts.len() - 1
            && *part == "$**"
            && (plugin_name == "wildcard" || plugin_name == "columnstore");
        if !db_ref && !wildcard {
            return Err(cannot(
                "Index key contains an illegal field name: field name starts with '$'.",
            ));
        }
    }
    Ok(())
}

/// The checks `validateIndexSpec` runs on the key pattern after `validateKeyPattern`.
fn validate_key_values(key: &Document, spec: &Document) -> Result<(), Error> {
    let wildcard = plugin(Some(key)).as_deref() == Some("wildcard");
    for (field, value) in key {
        if matches!(value, Bson::String(s) if s.is_empty()) {
            return Err(cannot(
                "Values in the index key pattern cannot be empty strings",
            ));
        }
        if wildcard && field == "$**" && key.len() > 1 && !spec.contains_key("wildcardProjection") {
            return Err(cannot(
                "Compound wildcard indexes on all fields must also specify 'wildcardProjection' \
                 option",
            ));
        }
    }
    Ok(())
}

/// `validateIdIndexSpec`.
fn validate_id_spec(spec: &Document, key: &Document) -> Result<(), Error> {
    for field in spec.keys() {
        if !ID_INDEX_FIELDS.contains(&field.as_str()) {
            return Err(error(
                197,
                "InvalidIndexSpecificationOption",
                format!(
                    "The field '{field}' is not valid for an _id index specification. \
                     Specification: {}",
                    display::document(spec)
                ),
            ));
        }
    }
    let exact = key.len() == 1 && key.get("_id").and_then(number) == Some(1.0);
    if !exact {
        return Err(bad_value(format!(
            "The field 'key' for an _id index must be {{_id: 1}}, but got {}",
            display::document(key)
        )));
    }
    Ok(())
}

/// `_isSpecOk` and `_fixIndexSpec`: builds the specification from a validated document.
fn check_catalog_rules(mut spec: Document) -> Result<IndexSpec, Error> {
    let name = spec.get_str("name").unwrap_or_default().to_owned();
    if name.contains('\0') {
        return Err(cannot("index name cannot contain NUL bytes"));
    }
    if name.is_empty() {
        return Err(cannot("index name cannot be empty"));
    }
    let key = spec.get_document("key").cloned().unwrap_or_default();
    if let Some(collation) = spec.get("collation") {
        let simple = matches!(collation, Bson::Document(c)
            if c.len() == 1 && c.get_str("locale").is_ok_and(|l| l == "simple"));
        if !simple {
            return Err(not_implemented(format!(
                "collation {} is not supported: only the simple collation is",
                display::value(collation)
            )));
        }
        // mongod drops the simple collation from the stored specification.
        spec.remove("collation");
    }
    let sparse = spec.get("sparse").is_some_and(truthy);
    let mut projection = None;
    match plugin(Some(&key)).as_deref() {
        None | Some("hashed") => {}
        Some("wildcard") => {
            check_wildcard_options(&spec, sparse)?;
            let (field, _) = key
                .iter()
                .find(|(name, _)| wildcard::is_wildcard_field(name))
                .expect("validateWildcardIndex found one wildcard field");
            let given = spec.get_document("wildcardProjection").ok();
            projection = Some(Arc::new(wildcard::Projection::of_key(field, given)?));
        }
        Some(other) => {
            return Err(not_implemented(format!(
                "{other} indexes are not supported yet"
            )));
        }
    }
    if spec.contains_key("clustered") {
        return Err(error(
            6479600,
            "Location6479600",
            "Cannot create an index with 'clustered' in the spec on a collection that is not \
             clustered",
        ));
    }
    let partial = match spec.get("partialFilterExpression") {
        Some(Bson::Document(filter)) => {
            if sparse {
                return Err(cannot(
                    "cannot mix \"partialFilterExpression\" and \"sparse\" options",
                ));
            }
            partial::check(filter)?;
            let raw = bson::RawDocumentBuf::try_from(filter)
                .map_err(|e| bad_value(format!("invalid partialFilterExpression: {e}")))?;
            Some(PartialFilter {
                document: filter.clone(),
                filter: Arc::new(query::Filter::parse(&raw)?),
            })
        }
        _ => None,
    };
    validate_storage_engine(spec.get("storageEngine"))?;
    let fields = key
        .iter()
        .map(|(path, value)| KeyField {
            path: path.clone(),
            kind: match value {
                Bson::String(_) => KeyKind::Hashed,
                other if number(other).is_some_and(|x| x < 0.0) => KeyKind::Descending,
                _ => KeyKind::Ascending,
            },
        })
        .collect();
    let version = spec.get("v").map_or(2, safe_int);
    Ok(IndexSpec {
        unique: is_id_pattern(&key) || spec.get("unique").is_some_and(truthy),
        prepare_unique: spec.get("prepareUnique").is_some_and(truthy),
        hidden: spec.get("hidden").is_some_and(truthy),
        expire_after_seconds: spec.get("expireAfterSeconds").map(safe_int),
        stored: fixed_spec(&spec, version),
        name,
        key_pattern: key,
        fields,
        version,
        sparse,
        partial,
        wildcard: projection,
    })
}

/// `_isSpecOk`'s refusals for wildcard indexes, and the index version they need.
fn check_wildcard_options(spec: &Document, sparse: bool) -> Result<(), Error> {
    if spec.get("v").map_or(2, safe_int) < 2 {
        return Err(cannot(
            "Index version v=1 does not support wildcard indexes; use v=2",
        ));
    }
    if sparse {
        return Err(cannot(
            "Index type 'wildcard' does not support the sparse option",
        ));
    }
    if spec.get("unique").is_some_and(truthy) {
        return Err(cannot(
            "Index type 'wildcard' does not support the unique option",
        ));
    }
    if spec.contains_key("expireAfterSeconds") {
        return Err(cannot("Index type 'wildcard' cannot be a TTL index"));
    }
    Ok(())
}

fn validate_storage_engine(value: Option<&Bson>) -> Result<(), Error> {
    let Some(value) = value else { return Ok(()) };
    let Bson::Document(options) = value else {
        return Err(cannot(
            "\"storageEngine\" options must be a document if present",
        ));
    };
    if options.is_empty() {
        return Err(cannot(
            "Empty \"storageEngine\" options are invalid. Please remove the field or include \
             valid options.",
        ));
    }
    for (engine, settings) in options {
        if engine != "wiredTiger" {
            return Err(error(
                72,
                "InvalidOptions",
                format!("{engine} is not a registered storage engine for this server"),
            ));
        }
        if !matches!(settings, Bson::Document(_)) {
            return Err(bad_value(format!(
                "'storageEngine.{engine}' has to be an embedded document."
            )));
        }
    }
    Ok(())
}

/// `_fixIndexSpec`: `v` as an int, `unique`/`hidden`/`prepareUnique` only when true and
/// normalised to `true`, `key`, `name` (`_id_` for the `_id` index), then the remaining
/// options in the order given; `_id`, `dropDups` and `ns` are dropped.
fn fixed_spec(spec: &Document, version: i32) -> Document {
    let mut out = Document::new();
    out.insert("v", version);
    for flag in ["unique", "hidden", "prepareUnique"] {
        if spec.get(flag).is_some_and(truthy) {
            out.insert(flag, true);
        }
    }
    let key = spec.get_document("key").cloned().unwrap_or_default();
    let name = if is_id_pattern(&key) {
        "_id_".to_owned()
    } else {
        spec.get_str("name").unwrap_or_default().to_owned()
    };
    let key = if is_id_pattern(&key) {
        bson::doc! {"_id": 1}
    } else {
        key
    };
    out.insert("key", key);
    out.insert("name", name);
    for (field, value) in spec {
        let skip = [
            "_id",
            "dropDups",
            "ns",
            "v",
            "unique",
            "key",
            "name",
            "hidden",
            "prepareUnique",
        ];
        if !skip.contains(&field.as_str()) {
            out.insert(field.clone(), value.clone());
        }
    }
    out
}

/// The name drivers and the shell give an index when the client names none:
/// `<field>_<value>` per key field, joined by `_` (`a_1_b_-1`, `a_hashed`, `$**_1`).
/// Numbers print as JavaScript prints them (`1`, `-1`, `1.5`).
pub fn default_name(key: &Document) -> String {
    let parts: Vec<String> = key
        .iter()
        .map(|(field, value)| {
            let value = match value {
                Bson::String(s) => s.clone(),
                Bson::Int32(n) => n.to_string(),
                Bson::Int64(n) => n.to_string(),
                Bson::Double(x) if x.fract() == 0.0 && x.abs() < 1e21 => format!("{x:.0}"),
                Bson::Double(x) => x.to_string(),
                other => display::value(other),
            };
            format!("{field}_{value}")
        })
        .collect();
    parts.join("_")
}

/// How a requested index compares with an existing one (`IndexDescriptor::Comparison`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Comparison {
    /// The key pattern or an identifying option differs: both may exist (under two names).
    Different,
    /// Same key and identifying options, other options differ: they cannot coexist.
    Equivalent,
    /// The same index: creating it again is a no-op.
    Identical,
}

/// Options that identify an index or are compared separately, so are left out of the
/// identical-or-equivalent comparison (`populateOptionsMapForEqualityCheck`, mongod 5.0-7.0;
/// `hidden` is not considered).
const NOT_COMPARED: [&str; 14] = [
    "key",
    "ns",
    "name",
    "v",
    "textIndexVersion",
    "2dsphereIndexVersion",
    "background",
    "dropDups",
    "hidden",
    "collation",
    "partialFilterExpression",
    "unique",
    "sparse",
    "wildcardProjection",
];

impl IndexSpec {
    /// `compareIndexOptions`: the key pattern (exactly, values by MongoDB's order), then
    /// `unique`, `sparse`, the collation (always simple here) and the partial filter
    /// (equivalent as normalised filters), then every other option.
    pub fn compare(&self, existing: &IndexSpec) -> Comparison {
        let keys_equal = self.key_pattern.len() == existing.key_pattern.len()
            && self
                .key_pattern
                .iter()
                .zip(existing.key_pattern.iter())
                .all(|((a, x), (b, y))| a == b && partial::compare(x, y).is_eq());
        if !keys_equal || self.unique != existing.unique || self.sparse != existing.sparse {
            return Comparison::Different;
        }
        match (&self.partial, &existing.partial) {
            (None, None) => {}
            (Some(a), Some(b)) if partial::equivalent(&a.document, &b.document) => {}
            _ => return Comparison::Different,
        }
        // Since 5.0 the wildcard projection is part of the index signature, compared in
        // its normalized form.
        if self.wildcard != existing.wildcard {
            return Comparison::Different;
        }
        let options = |spec: &Document| {
            let mut list: Vec<(String, Bson)> = spec
                .iter()
                .filter(|(k, _)| !NOT_COMPARED.contains(&k.as_str()))
                .map(|(k, v)| (k.clone(), v.clone()))
                .collect();
            list.sort_by(|a, b| a.0.cmp(&b.0));
            list
        };
        let (mine, theirs) = (options(&self.stored), options(&existing.stored));
        let identical = mine.len() == theirs.len()
            && mine
                .iter()
                .zip(theirs.iter())
                .all(|(a, b)| a.0 == b.0 && partial::compare(&a.1, &b.1).is_eq());
        if identical {
            Comparison::Identical
        } else {
            Comparison::Equivalent
        }
    }
}

/// What createIndexes does with a requested index, given the collection's indexes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum CreateOutcome {
    /// Build it.
    Create,
    /// An identical index of that name exists: nothing to do.
    AlreadyExists,
}

/// `_doesSpecConflictWithExisting`: by name first (86 if the key or an identifying option
/// differs, 85 if only other options do), then by key pattern and identifying options under
/// another name (85), then the 64-index limit (67). `namespace` is `db.coll`.
pub fn check_conflict(
    namespace: &str,
    candidate: &IndexSpec,
    existing: &[IndexSpec],
) -> Result<CreateOutcome, Error> {
    let requested = display::document(&candidate.stored);
    if let Some(same_name) = existing.iter().find(|e| e.name == candidate.name) {
        let other = display::document(&same_name.stored);
        return match candidate.compare(same_name) {
            Comparison::Different => Err(error(
                86,
                "IndexKeySpecsConflict",
                format!(
                    "An existing index has the same name as the requested index. When index \
                     names are not specified, they are auto generated and can cause conflicts. \
                     Please refer to our documentation. Requested index: {requested}, existing \
                     index: {other}"
                ),
            )),
            Comparison::Equivalent => Err(error(
                85,
                "IndexOptionsConflict",
                format!(
                    "An equivalent index already exists with the same name but different \
                     options. Requested index: {requested}, existing index: {other}"
                ),
            )),
            Comparison::Identical => Ok(CreateOutcome::AlreadyExists),
        };
    }
    for index in existing {
        match candidate.compare(index) {
            Comparison::Different => {}
            Comparison::Equivalent => {
                return Err(error(
                    85,
                    "IndexOptionsConflict",
                    format!(
                        "An equivalent index already exists with a different name and options. \
                         Requested index: {requested}, existing index: {}",
                        display::document(&index.stored)
                    ),
                ));
            }
            Comparison::Identical => {
                return Err(error(
                    85,
                    "IndexOptionsConflict",
                    format!("Index already exists with a different name: {}", index.name),
                ));
            }
        }
    }
    if existing.len() >= INDEXES_MAX {
        return Err(cannot(format!(
            "add index fails, too many indexes for {namespace} key:{}",
            display::document(&candidate.key_pattern)
        )));
    }
    Ok(CreateOutcome::Create)
}
