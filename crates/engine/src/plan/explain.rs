//! The access path as mongod's `explain` shows it (classic engine, `explainVersion: "1"`):
//! `COLLSCAN`, `IDHACK`, or `FETCH` over an `IXSCAN` with the index's key pattern, name,
//! multikey paths, flags, direction and bounds (mongod's interval strings).

use super::bounds::{self, FieldView};
use super::predicates::Predicates;
use super::{Access, Candidate};
use crate::store::{CollectionMeta, WalkTarget};
use bson::{Bson, Document, RawDocument, doc};

/// The stage tree that reads the candidates: `filter` is the query (shown where mongod
/// shows the part the access path does not answer).
pub(crate) fn access_stage(
    meta: &CollectionMeta,
    access: &Access<'_>,
    filter: Option<&RawDocument>,
) -> Document {
    let shown = filter
        .and_then(|f| Document::try_from(f).ok())
        .filter(|f| !f.is_empty());
    match access {
        Access::Collection => {
            let mut stage = doc! { "stage": "COLLSCAN" };
            if let Some(filter) = shown {
                stage.insert("filter", filter);
            }
            stage.insert("direction", "forward");
            stage
        }
        Access::Id(_) => doc! { "stage": "IDHACK" },
        Access::Index(index) => {
            let candidate = match &index.target {
                WalkTarget::Id => Some(Candidate::id()),
                WalkTarget::Index(name) => meta.index(name).map(Candidate::secondary),
            };
            let mut scan = candidate.map_or_else(
                || doc! { "stage": "IXSCAN", "indexName": &index.name },
                |c| index_scan(&c, filter),
            );
            if index.reverse {
                scan.insert("direction", "backward");
            }
            let mut stage = doc! { "stage": "FETCH" };
            if let Some(filter) = shown {
                stage.insert("filter", filter);
            }
            stage.insert("inputStage", scan);
            stage
        }
    }
}

fn index_scan(candidate: &Candidate<'_>, filter: Option<&RawDocument>) -> Document {
    let predicates = Predicates::of(filter);
    let computed = bounds::bounds(&candidate.fields, &predicates);
    let key_pattern = match candidate.index {
        Some(index) => index.spec.key_pattern.clone(),
        None => doc! { "_id": 1 },
    };
    let mut paths = Document::new();
    for field in &candidate.fields {
        paths.insert(field.path, multikey_components(field));
    }
    let mut shown_bounds = Document::new();
    for (path, intervals) in computed.display {
        shown_bounds.insert(path, intervals);
    }
    let (sparse, partial, version) = match candidate.index {
        Some(index) => (
            index.spec.sparse,
            index.spec.partial.is_some(),
            index.spec.version,
        ),
        None => (false, false, 2),
    };
    doc! {
        "stage": "IXSCAN",
        "keyPattern": key_pattern,
        "indexName": candidate.name,
        "isMultiKey": candidate.multikey,
        "multiKeyPaths": paths,
        "isUnique": candidate.unique,
        "isSparse": sparse,
        "isPartial": partial,
        "indexVersion": version,
        "direction": "forward",
        "indexBounds": shown_bounds,
    }
}

/// A field's multikey path components as mongod lists them: the dotted prefixes at which
/// an array was met (`{a.b: ["a"]}`).
fn multikey_components(field: &FieldView<'_>) -> Bson {
    let parts: Vec<&str> = field.path.split('.').collect();
    Bson::Array(
        field
            .multikey
            .iter()
            .filter(|&&c| c < parts.len())
            .map(|&c| Bson::String(parts[..=c].join(".")))
            .collect(),
    )
}
