//! Storage validation of what an update writes: MongoDB's nesting limit and its
//! rule for top-level `$`-prefixed field names.
//!
//! Since 5.0 MongoDB stores `$`-prefixed names anywhere below the top level, and
//! at the top level only where no update operator could be meant: an operator
//! update may not create or replace a top-level `$` field and a replacement
//! document may not hold one, but pipeline updates and the document an upsert
//! inserts may (mongodb/mongo `src/mongo/db/update/storage_validation.cpp`,
//! `modifier_node.cpp`, `object_replace_executor.cpp`,
//! `produce_document_for_upsert.cpp`; the manual's "Dollar-Prefixed Field Names").
//! The DBRef names `$ref`, `$id` and `$db` stay allowed in DBRef order.

use bson::{Bson, Document, RawDocument};

use crate::error::UpdateError;
use crate::value::type_name;

/// Refuses a document nesting deeper than a stored document may.
///
/// The limit is the documented 100 levels, counted as `bson_canonical` counts
/// them for inserts, so an update can never store what an insert would refuse.
/// (The server's own check, `recursionLevel <= BSONDepth::getMaxDepthForUserStorage()`
/// in `storage_validation.cpp`, allows 200 - 20 = 180 levels; the manual's
/// "Nested Depth for BSON Documents" promises 100, and that is what we enforce.)
pub(crate) fn check_depth(bytes: &[u8]) -> Result<(), UpdateError> {
    let depth_max = bson_canonical::limits::NESTING_DEPTH_MAX;
    match bson_canonical::validate_bson(bytes, depth_max) {
        Ok(()) => Ok(()),
        Err(bson_canonical::ValidationError::TooDeep { max }) => Err(UpdateError::Overflow(
            format!("Document exceeds maximum nesting depth of {max}"),
        )),
        Err(other) => Err(UpdateError::bad_value(other.to_string())),
    }
}

/// Checks every top-level `$`-prefixed field of a replacement document.
pub(crate) fn check_replacement(doc: &Document) -> Result<(), UpdateError> {
    let names: Vec<&String> = doc.keys().collect();
    for (index, name) in names.iter().enumerate() {
        if name.starts_with('$') {
            check_dollar_field(doc, &names, index)?;
        }
    }
    Ok(())
}

/// Checks the top-level `$`-prefixed fields an operator update created, or
/// replaced through a one-component path (`direct`); a `$` field that is only
/// reached through (`{$set: {"$a.b": 1}}` on an existing `$a`) is not revalidated,
/// as MongoDB validates only the element an operator created or modified.
pub(crate) fn check_operator_result(
    before: &RawDocument,
    after: &Document,
    direct: &[&str],
) -> Result<(), UpdateError> {
    let names: Vec<&String> = after.keys().collect();
    for (index, name) in names.iter().enumerate() {
        if !name.starts_with('$') {
            continue;
        }
        let old = before.get(name.as_str()).ok().flatten();
        let created = old.is_none();
        let replaced = direct.contains(&name.as_str())
            && old.and_then(|v| Bson::try_from(v).ok()).as_ref() != after.get(name.as_str());
        if created || replaced {
            check_dollar_field(after, &names, index)?;
        }
    }
    Ok(())
}

/// MongoDB's `validateDollarPrefixElement`: a `$db` must follow `$id`, which must
/// follow `$ref`, which must be a string followed by `$id`; any other `$` name is
/// refused.
fn check_dollar_field(doc: &Document, names: &[&String], index: usize) -> Result<(), UpdateError> {
    let name_at = |i: Option<usize>| i.and_then(|i| names.get(i)).map(|n| n.as_str());
    let mut at = index;
    let mut name = name_at(Some(at)).unwrap_or_default();
    if name == "$db" {
        if let Some(value) = doc.get("$db")
            && !matches!(value, Bson::String(_))
        {
            return Err(dbref(format!(
                "The DBRef $db field must be a String, not a {}",
                type_name(value)
            )));
        }
        if name_at(at.checked_sub(1)) != Some("$id") {
            return Err(dbref(
                "Found $db field without a $id before it, which is invalid.",
            ));
        }
        at -= 1;
        name = "$id";
    }
    if name == "$id" {
        if name_at(at.checked_sub(1)) != Some("$ref") {
            return Err(dbref(
                "Found $id field without a $ref before it, which is invalid.",
            ));
        }
        at -= 1;
        name = "$ref";
    }
    if name == "$ref" {
        if let Some(value) = doc.get("$ref")
            && !matches!(value, Bson::String(_))
        {
            return Err(dbref(format!(
                "The DBRef $ref field must be a String, not a {}",
                type_name(value)
            )));
        }
        if name_at(Some(at + 1)) != Some("$id") {
            return Err(dbref(
                "The DBRef $ref field must be followed by a $id field",
            ));
        }
        return Ok(());
    }
    let original = name_at(Some(index)).unwrap_or_default();
    Err(UpdateError::DollarPrefixedFieldName(format!(
        "The dollar ($) prefixed field '{original}' in '{original}' is not allowed in the context of an update's replacement document. Consider using an aggregation pipeline with $replaceWith."
    )))
}

fn dbref(message: impl Into<String>) -> UpdateError {
    UpdateError::InvalidDbRef(message.into())
}
