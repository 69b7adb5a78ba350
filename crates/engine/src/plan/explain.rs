//! The access path as mongod's `explain` shows it (classic engine, `explainVersion: "1"`):
//! `COLLSCAN`, `IDHACK`, or `FETCH` over an `IXSCAN` with the index's key pattern, name,
//! multikey paths, flags, direction and bounds (mongod's interval strings), or over an
//! `OR` of one `IXSCAN` per `$or` branch (under `SUBPLAN` when the filter is that `$or`), or
//! over a `SORT_MERGE` of one `IXSCAN` per combination of pinned points. A wildcard
//! index shows as mongod expands it: the key pattern `{$_path: 1, <path>: <direction>}`
//! and the bounds of `$_path` and of the path's value.

use super::bounds::{self, FieldView};
use super::predicates::Predicates;
use super::{Access, Candidate, IndexAccess, wildcard};
use crate::store::{CollectionMeta, IndexMeta, WalkTarget};
use bson::raw::RawBsonRef;
use bson::{Bson, Document, RawDocument, doc};

/// The stage tree that reads the candidates: `filter` is the query (shown where mongod
/// shows the part the access path does not answer).
pub(crate) fn access_stage(
    meta: &CollectionMeta,
    access: &Access<'_>,
    filter: Option<&RawDocument>,
) -> Document {
    let shown = shown_filter(filter);
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
        Access::Index(index) => fetch(shown.as_ref(), scan_stage(meta, index, filter)),
        Access::Or(walks) => {
            // The walks are the `$or`'s branches, in order: each shows its own bounds.
            let branches: Vec<Option<&RawDocument>> = match filter.map(|f| f.get("$or")) {
                Some(Ok(Some(RawBsonRef::Array(list)))) => list
                    .into_iter()
                    .map(|b| b.ok().and_then(|b| b.as_document()))
                    .collect(),
                _ => Vec::new(),
            };
            let inputs: Vec<Bson> = walks
                .iter()
                .enumerate()
                .map(|(i, walk)| {
                    let branch = branches.get(i).copied().flatten();
                    Bson::Document(scan_stage(meta, walk, branch))
                })
                .collect();
            let or = doc! { "stage": "OR", "inputStages": inputs };
            let mut stage = fetch(shown.as_ref(), or);
            // A filter that is one `$or` is planned branch by branch (mongod's SUBPLAN).
            let rooted = shown.as_ref().is_some_and(|f| f.len() == 1);
            if rooted {
                stage = doc! { "stage": "SUBPLAN", "inputStage": stage };
            }
            stage
        }
    }
}

/// The stages of a merged sort (`super::sort_merge`): `FETCH` over a `SORT_MERGE` of one
/// `IXSCAN` per walk, each showing the points its leading fields are pinned to.
pub(crate) fn sort_merge_stage(
    meta: &CollectionMeta,
    merge: &super::SortMerge,
    filter: Option<&RawDocument>,
    sort: Document,
) -> Document {
    let inputs: Vec<Bson> = merge
        .walks
        .iter()
        .zip(&merge.pinned)
        .map(|(walk, pinned)| {
            let mut scan = scan_stage(meta, walk, filter);
            if let Ok(shown) = scan.get_document_mut("indexBounds") {
                for (path, interval) in pinned {
                    shown.insert(path.as_str(), vec![interval.as_str()]);
                }
            }
            Bson::Document(scan)
        })
        .collect();
    let merge = doc! { "stage": "SORT_MERGE", "sortPattern": sort, "inputStages": inputs };
    fetch(shown_filter(filter).as_ref(), merge)
}

/// The filter as a stage shows it: `None` when there is none or it is empty.
fn shown_filter(filter: Option<&RawDocument>) -> Option<Document> {
    filter
        .and_then(|f| Document::try_from(f).ok())
        .filter(|f| !f.is_empty())
}

/// A `FETCH` over `input`, with the filter it re-checks.
fn fetch(filter: Option<&Document>, input: Document) -> Document {
    let mut stage = doc! { "stage": "FETCH" };
    if let Some(filter) = filter {
        stage.insert("filter", filter.clone());
    }
    stage.insert("inputStage", input);
    stage
}

/// The `IXSCAN` of one index walk, its bounds shown as `filter` makes them.
fn scan_stage(
    meta: &CollectionMeta,
    index: &IndexAccess,
    filter: Option<&RawDocument>,
) -> Document {
    let candidate = match &index.target {
        WalkTarget::Id => Some(Candidate::id()),
        WalkTarget::Index(name) => meta.index(name).map(Candidate::secondary),
    };
    let wildcard = match (&index.target, &index.wildcard_path) {
        (WalkTarget::Index(name), Some(path)) => meta.index(name).map(|i| (i, path)),
        _ => None,
    };
    let mut scan = match (wildcard, candidate) {
        (Some((wildcard, path)), _) => wildcard_scan(wildcard, path, filter),
        (None, Some(c)) => index_scan(&c, filter),
        (None, None) => doc! { "stage": "IXSCAN", "indexName": &index.name },
    };
    if index.reverse {
        scan.insert("direction", "backward");
    }
    scan
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

/// The `IXSCAN` of a wildcard index walked on `path`.
fn wildcard_scan(index: &IndexMeta, path: &str, filter: Option<&RawDocument>) -> Document {
    let predicates = Predicates::of(filter);
    let found = wildcard::path_bounds(index, path, predicates.on(path));
    let direction = index
        .spec
        .key_pattern
        .iter()
        .next()
        .map_or(Bson::Int32(1), |(_, v)| v.clone());
    let mut key_pattern = doc! { "$_path": 1 };
    key_pattern.insert(path, direction);
    let multikey = wildcard::multikey_components(index, path);
    let parts: Vec<&str> = path.split('.').collect();
    let prefixes: Vec<Bson> = multikey
        .iter()
        .filter(|&&c| c < parts.len())
        .map(|&c| Bson::String(parts[..=c].join(".")))
        .collect();
    let mut paths = doc! { "$_path": Bson::Array(Vec::new()) };
    paths.insert(path, prefixes);
    let (path_bounds, value_bounds) = found.map_or_else(
        || {
            (
                vec![bounds::ALL_VALUES.to_owned()],
                vec![bounds::ALL_VALUES.to_owned()],
            )
        },
        |found| found.display,
    );
    let mut shown_bounds = doc! { "$_path": path_bounds };
    shown_bounds.insert(path, value_bounds);
    doc! {
        "stage": "IXSCAN",
        "keyPattern": key_pattern,
        "indexName": index.name(),
        "isMultiKey": !multikey.is_empty(),
        "multiKeyPaths": paths,
        "isUnique": false,
        "isSparse": false,
        "isPartial": index.spec.partial.is_some(),
        "indexVersion": index.spec.version,
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

/// mongod's `planSummary` of `access`: its leaf stages, `COLLSCAN`, `IDHACK` or `IXSCAN`
/// with the key pattern (`IXSCAN { a: 1 }`), joined by `, ` for an `$or`'s walks.
pub(crate) fn summary(meta: &CollectionMeta, access: &Access<'_>) -> String {
    match access {
        Access::Collection => "COLLSCAN".to_owned(),
        Access::Id(_) => "IDHACK".to_owned(),
        Access::Index(_) | Access::Or(_) => walks_summary(meta, access.walks()),
    }
}

/// The `planSummary` of index walks read together (an `$or`'s, a merged sort's): each
/// walk's, joined by `, `.
pub(crate) fn walks_summary(meta: &CollectionMeta, walks: &[IndexAccess]) -> String {
    walks
        .iter()
        .map(|walk| walk_summary(meta, walk))
        .collect::<Vec<_>>()
        .join(", ")
}

/// `IXSCAN { <key pattern> }` of one index walk, as mongod's `planSummary` names it.
pub(crate) fn walk_summary(meta: &CollectionMeta, walk: &IndexAccess) -> String {
    let pattern = match (&walk.target, &walk.wildcard_path) {
        (WalkTarget::Id, _) => doc! { "_id": 1 },
        (WalkTarget::Index(name), Some(path)) => {
            let mut pattern = doc! { "$_path": 1 };
            let direction = meta
                .index(name)
                .and_then(|index| index.spec.key_pattern.iter().next().map(|(_, v)| v.clone()))
                .unwrap_or(Bson::Int32(1));
            pattern.insert(path.as_str(), direction);
            pattern
        }
        (WalkTarget::Index(name), None) => meta
            .index(name)
            .map_or_else(Document::new, |index| index.spec.key_pattern.clone()),
    };
    format!("IXSCAN {}", pattern_string(&pattern))
}

/// A key pattern as mongod's `BSONObj::toString` prints it: `{ a: 1, b: "hashed" }`.
fn pattern_string(pattern: &Document) -> String {
    let fields: Vec<String> = pattern
        .iter()
        .map(|(key, value)| match value {
            Bson::String(text) => format!("{key}: \"{text}\""),
            Bson::Int32(n) => format!("{key}: {n}"),
            Bson::Int64(n) => format!("{key}: {n}"),
            Bson::Double(n) => format!("{key}: {n}"),
            other => format!("{key}: {other}"),
        })
        .collect();
    if fields.is_empty() {
        "{}".to_owned()
    } else {
        format!("{{ {} }}", fields.join(", "))
    }
}
