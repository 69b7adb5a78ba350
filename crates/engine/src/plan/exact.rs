//! Answers from index keys (issue 17): a count whose filter a walk's one range answers
//! exactly counts its entries without reading a record (mongod's COUNT_SCAN); a distinct
//! without a filter walks an index on its key distinct key by distinct key, reading one
//! document per key (DISTINCT_SCAN under a FETCH: the key encoding does not keep a
//! number's type, so the value is read from a document, as it is for covered queries,
//! which therefore are not done).
//!
//! Invariants:
//! - Exact only when every document in the range matches and every match is in it: the
//!   index is an ordinary ascending single-field index, neither multikey (each document
//!   has exactly one key, its field's value, never an element of an array), sparse nor
//!   partial; the walk is one range; and the filter names only that field, with an
//!   equality to, or bounds that include a lower one (`$gt`/`$gte`, with `$lt`/`$lte` or
//!   not), of numbers (not NaN) or of strings, one kind only. The bounds of such
//!   predicates are the predicates' own intervals in the key encoding, whose order within
//!   one type bracket is the filter's: no re-check can drop a counted key. (A `$lt` alone
//!   starts at the bracket's start, where NaN sorts, which it does not match: never exact.)

use super::IndexAccess;
use crate::index::spec::KeyKind;
use crate::store::{CollectionMeta, WalkTarget};
use bson::raw::RawBsonRef;
use bson::{Bson, Document, RawDocument, doc};

/// A count by index keys: the index, its one range and mongod's `indexBounds` for it.
#[derive(Debug, Clone)]
pub(crate) struct CountScan {
    pub(crate) index: String,
    pub(crate) access: IndexAccess,
    /// `{startKey, startKeyInclusive, endKey, endKeyInclusive}`.
    pub(crate) bounds: Document,
}

/// The kind of an operand a count by keys accepts.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
    Number,
    String,
}

fn kind_of(value: RawBsonRef<'_>) -> Option<Kind> {
    match value {
        RawBsonRef::Int32(_) | RawBsonRef::Int64(_) => Some(Kind::Number),
        RawBsonRef::Double(x) if !x.is_nan() => Some(Kind::Number),
        RawBsonRef::String(_) => Some(Kind::String),
        _ => None,
    }
}

/// The count by keys of `access` for `filter` over `meta`, when it is exact.
pub(crate) fn count_scan(
    meta: &CollectionMeta,
    access: &IndexAccess,
    filter: Option<&RawDocument>,
) -> Option<CountScan> {
    let WalkTarget::Index(name) = &access.target else {
        return None;
    };
    let index = meta.index(name)?;
    let spec = &index.spec;
    let [field] = spec.fields.as_slice() else {
        return None;
    };
    let plain = spec.wildcard.is_none() && !spec.sparse && spec.partial.is_none();
    if !plain || index.multikey || field.kind != KeyKind::Ascending || access.ranges.len() != 1 {
        return None;
    }
    let filter = filter?;
    let mut low: Option<(RawBsonRef<'_>, bool)> = None;
    let mut high: Option<(RawBsonRef<'_>, bool)> = None;
    let mut kind = None;
    let mut same = |value: RawBsonRef<'_>| -> Option<()> {
        let k = kind_of(value)?;
        (*kind.get_or_insert(k) == k).then_some(())
    };
    for element in filter.iter_elements() {
        let element = element.ok()?;
        if element.key().as_str() != field.path {
            return None;
        }
        let value = element.value().ok()?;
        let operators = match value {
            RawBsonRef::Document(ops) if is_operators(ops) => ops,
            value => {
                same(value)?;
                set(&mut low, value, true)?;
                set(&mut high, value, true)?;
                continue;
            }
        };
        for op in operators.iter_elements() {
            let op = op.ok()?;
            let operand = op.value().ok()?;
            same(operand)?;
            match op.key().as_str() {
                "$eq" => {
                    set(&mut low, operand, true)?;
                    set(&mut high, operand, true)?;
                }
                "$gt" => set(&mut low, operand, false)?,
                "$gte" => set(&mut low, operand, true)?,
                "$lt" => set(&mut high, operand, false)?,
                "$lte" => set(&mut high, operand, true)?,
                _ => return None,
            }
        }
    }
    let (start, start_inclusive) = low?;
    let (end, end_inclusive) = match (high, kind?) {
        (Some((value, inclusive)), _) => (Bson::try_from(value).ok()?, inclusive),
        (None, Kind::Number) => (Bson::Double(f64::INFINITY), true),
        (None, Kind::String) => (Bson::Document(Document::new()), false),
    };
    let mut start_key = Document::new();
    start_key.insert(field.path.as_str(), Bson::try_from(start).ok()?);
    let mut end_key = Document::new();
    end_key.insert(field.path.as_str(), end);
    Some(CountScan {
        index: name.clone(),
        access: access.clone(),
        bounds: doc! {
            "startKey": start_key,
            "startKeyInclusive": start_inclusive,
            "endKey": end_key,
            "endKeyInclusive": end_inclusive,
        },
    })
}

/// Bounds `side` by `value` (inclusive or not); `None` when it is bounded already (each
/// side bounded once: the shown bounds are then the walk's range).
fn set<'a>(
    side: &mut Option<(RawBsonRef<'a>, bool)>,
    value: RawBsonRef<'a>,
    inclusive: bool,
) -> Option<()> {
    side.is_none().then_some(())?;
    *side = Some((value, inclusive));
    Some(())
}

/// Whether `doc` is an operator document (`{$gt: 1}`), not a value to equal.
fn is_operators(doc: &RawDocument) -> bool {
    doc.iter_elements()
        .next()
        .and_then(Result::ok)
        .is_some_and(|e| e.key().as_str().starts_with('$'))
}

/// The `COUNT_SCAN` stage of `scan` over `meta`.
pub(crate) fn stage(meta: &CollectionMeta, scan: &CountScan) -> Document {
    let Some(index) = meta.index(&scan.index) else {
        return doc! { "stage": "COUNT_SCAN", "indexName": &scan.index };
    };
    let mut paths = Document::new();
    for field in &index.spec.fields {
        paths.insert(field.path.as_str(), Bson::Array(Vec::new()));
    }
    doc! {
        "stage": "COUNT_SCAN",
        "keyPattern": index.spec.key_pattern.clone(),
        "indexName": &scan.index,
        "isMultiKey": false,
        "multiKeyPaths": paths,
        "isUnique": index.spec.unique,
        "isSparse": false,
        "isPartial": false,
        "indexVersion": index.spec.version,
        "indexBounds": scan.bounds.clone(),
    }
}

/// The index a `distinct` on `key` walks distinct key by distinct key (mongod's
/// DISTINCT_SCAN), if any: without a filter or hint, an ordinary ascending single-field
/// index on `key`, not multikey (so each document has one key, its value at `key`, and
/// the documents under one key have values equal to it), not partial (a sparse index
/// leaves out only documents without the field, which give no value).
pub(crate) fn distinct_scan<'m>(
    meta: &'m CollectionMeta,
    key: &str,
    filter: Option<&RawDocument>,
    hint: &super::Hint,
) -> Option<&'m crate::store::IndexMeta> {
    if filter.is_some_and(|f| !f.is_empty()) || *hint != super::Hint::None {
        return None;
    }
    meta.indexes.iter().find(|index| {
        let spec = &index.spec;
        matches!(spec.fields.as_slice(), [field] if field.path == key && field.kind == KeyKind::Ascending)
            && spec.wildcard.is_none()
            && spec.partial.is_none()
            && !spec.hidden
            && !index.multikey
    })
}

/// The `DISTINCT_SCAN` stage of `index` (under the FETCH that reads one document per key).
pub(crate) fn distinct_stage(index: &crate::store::IndexMeta) -> Document {
    let mut paths = Document::new();
    let mut bounds = Document::new();
    for field in &index.spec.fields {
        paths.insert(field.path.as_str(), Bson::Array(Vec::new()));
        bounds.insert(field.path.as_str(), vec![super::bounds::ALL_VALUES]);
    }
    doc! {
        "stage": "FETCH",
        "inputStage": {
            "stage": "DISTINCT_SCAN",
            "keyPattern": index.spec.key_pattern.clone(),
            "indexName": index.name(),
            "isMultiKey": false,
            "multiKeyPaths": paths,
            "isUnique": index.spec.unique,
            "isSparse": index.spec.sparse,
            "isPartial": false,
            "indexVersion": index.spec.version,
            "direction": "forward",
            "indexBounds": bounds,
        },
    }
}
