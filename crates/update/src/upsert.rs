//! The document an upsert starts from: the query's equality predicates.

use bson::{Bson, Document, RawDocument, RawDocumentBuf};

use crate::error::UpdateError;
use crate::tree::{self, Action};

/// The document an upsert inserts before the update applies: every equality
/// predicate of the filter (`{a: 1}`, `{a: {$eq: 1}}`, `{"a.b": 1}`, inside
/// top-level `$and`), with dotted paths expanded into sub-documents and `_id`
/// first. A replacement upsert keeps only `_id` of this (see [`crate::Update::is_replacement`]).
pub fn upsert_seed(filter: &RawDocument) -> Result<RawDocumentBuf, UpdateError> {
    let tree =
        Document::try_from(filter).map_err(|e| UpdateError::failed_to_parse(e.to_string()))?;
    let mut seed = Document::new();
    let mut seen: Vec<String> = Vec::new();
    collect(&tree, &mut seed, &mut seen)?;
    if let Some(id) = seed.remove("_id") {
        let mut ordered = Document::new();
        ordered.insert("_id", id);
        ordered.extend(seed);
        seed = ordered;
    }
    RawDocumentBuf::try_from(&seed).map_err(|e| UpdateError::bad_value(e.to_string()))
}

fn collect(
    filter: &Document,
    seed: &mut Document,
    seen: &mut Vec<String>,
) -> Result<(), UpdateError> {
    for (key, value) in filter {
        if key == "$and" {
            if let Bson::Array(clauses) = value {
                for clause in clauses {
                    if let Bson::Document(d) = clause {
                        collect(d, seed, seen)?;
                    }
                }
            }
            continue;
        }
        if key.starts_with('$') {
            continue;
        }
        let equal = match value {
            Bson::Document(d) if d.keys().next().is_some_and(|k| k.starts_with('$')) => {
                match (d.len(), d.get("$eq")) {
                    (1, Some(v)) => Some(v.clone()),
                    _ => None,
                }
            }
            Bson::RegularExpression(_) => None,
            other => Some(other.clone()),
        };
        let Some(equal) = equal else { continue };
        let prefix_clash = seen.iter().any(|p| {
            p == key || key.starts_with(&format!("{p}.")) || p.starts_with(&format!("{key}."))
        });
        if prefix_clash {
            return Err(UpdateError::NotSingleValueField(format!(
                "cannot infer query fields to set, path '{key}' is matched twice"
            )));
        }
        seen.push(key.clone());
        let path: Vec<String> = key.split('.').map(str::to_owned).collect();
        tree::modify(seed, &path, true, &mut |_| Ok(Action::Set(equal.clone())))?;
    }
    Ok(())
}
