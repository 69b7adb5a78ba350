//! Wildcard indexes in the planner (mongod's `expandWildcardIndexEntry` and
//! `planner_wildcard_helpers`): a wildcard index is weighed once per queried path `p` its
//! projection covers, as if it were the index `{$_path: 1, p: <direction>}` with `$_path`
//! pinned to `"p"`; one path per access.
//!
//! Rules that keep the ranges an over-approximation of the matches (the index holds no key
//! for a document without a value at any covered path: it is sparse, and non-empty
//! documents are only indexed through their leaves):
//! - Predicates that a missing field can satisfy are not used (`{p: null}`; `$ne`, `$nin`,
//!   `$not` and `$exists: false` are never bounding predicates), nor equality to a non-empty
//!   document or array, as mongod's `canUseWildcardIndex` has it (`{}` and `[]` are indexed
//!   as values, `[]` as undefined).
//! - `$exists: true` alone bounds `$_path` to `"p"` and to every path under it
//!   (`["p.", "p/")`: the strings that start with `p.`), every value.
//! - A path with a numeric component after a prefix at which some document had an array
//!   (`a.0` when `a` is multikey) is not used: the element `a.0` names is indexed under `a`.
//! - The value bounds follow the ordinary rules (`bounds::field_bound`), with the path's
//!   multikey components from the index's recorded multikey paths: two predicates on a
//!   multikey path are never intersected.

use super::bounds::{self, FieldBound, FieldView, successor};
use super::predicates::Predicate;
use crate::store::{IndexMeta, KeyRange};
use bson::raw::RawBsonRef;
use bson_canonical::key::{Direction, encode_field_into};
use std::collections::BTreeSet;

/// One wildcard index bounded on one path.
#[derive(Debug, Clone)]
pub(crate) struct PathBounds {
    /// The tree-key ranges, sorted and disjoint.
    pub(crate) ranges: Vec<KeyRange>,
    /// Whether the value is bounded by points (equalities).
    pub(crate) points: bool,
    /// Whether only the path is bounded (`$exists: true`): the path and its subpaths.
    pub(crate) subpaths: bool,
    /// The intervals as mongod's explain prints them: `$_path`'s, then the value's.
    pub(crate) display: (Vec<String>, Vec<String>),
}

impl PathBounds {
    /// The planner's score, comparable with an ordinary index's: (pinned on every field,
    /// point fields, a range field, precise). `$_path` does not count: a wildcard index
    /// ties with an ordinary index on the same predicate, and ties go to the ordinary one.
    pub(crate) fn score(&self) -> (bool, usize, bool, bool) {
        (
            false,
            usize::from(self.points),
            !self.points,
            !self.subpaths,
        )
    }
}

/// The components of `path` at which some document of `index` had an array.
pub(crate) fn multikey_components(index: &IndexMeta, path: &str) -> BTreeSet<usize> {
    let mut out = BTreeSet::new();
    let mut end = 0;
    for (i, part) in path.split('.').enumerate() {
        end += part.len() + usize::from(i > 0);
        if index.wildcard_multikey.contains(&path[..end]) {
            out.insert(i);
        }
    }
    out
}

/// Whether a component of `path` is an array position following a multikey prefix.
fn positional_through_array(path: &str, multikey: &BTreeSet<usize>) -> bool {
    path.split('.').enumerate().any(|(i, part)| {
        i > 0 && multikey.contains(&(i - 1)) && part.bytes().all(|b| b.is_ascii_digit())
    })
}

/// Whether a wildcard index can use `predicate` (`canUseWildcardIndex` and the sparse
/// rules).
fn usable(predicate: &Predicate<'_>) -> bool {
    match predicate {
        Predicate::Equal(values) => values.iter().all(|v| match v {
            RawBsonRef::Null | RawBsonRef::Undefined => false,
            RawBsonRef::Document(doc) => doc.is_empty(),
            RawBsonRef::Array(array) => array.is_empty(),
            _ => true,
        }),
        // Comparisons carry bracketed operands only: never null, arrays or documents.
        Predicate::Compare(..) | Predicate::Exists => true,
    }
}

fn path_key(path: &str) -> Vec<u8> {
    let mut out = Vec::new();
    encode_field_into(
        Some(RawBsonRef::String(path)),
        Direction::Ascending,
        &mut out,
    );
    out
}

fn joined(prefix: &[u8], suffix: &[u8]) -> Vec<u8> {
    let mut out = Vec::with_capacity(prefix.len() + suffix.len());
    out.extend_from_slice(prefix);
    out.extend_from_slice(suffix);
    out
}

/// The bounds of the wildcard `index` for the predicates `on_path` of `path`; `None` when
/// the index cannot answer them.
pub(crate) fn path_bounds(
    index: &IndexMeta,
    path: &str,
    on_path: &[Predicate<'_>],
) -> Option<PathBounds> {
    let projection = index.spec.wildcard.as_ref()?;
    if path.is_empty() || !projection.covers(path) {
        return None;
    }
    let multikey = multikey_components(index, path);
    if positional_through_array(path, &multikey) {
        return None;
    }
    let usable: Vec<Predicate<'_>> = on_path.iter().filter(|p| usable(p)).cloned().collect();
    let values: Vec<Predicate<'_>> = usable
        .iter()
        .filter(|p| !matches!(p, Predicate::Exists))
        .cloned()
        .collect();
    let kind = index.spec.fields.first()?.kind;
    let prefix = path_key(path);
    let shown_path = bounds::show(RawBsonRef::String(path));
    let path_interval = format!("[{shown_path}, {shown_path}]");
    if values.is_empty() {
        // `$exists: true` alone (or nothing usable).
        return (!usable.is_empty()).then(|| exists_bounds(path, prefix, kind, path_interval));
    }
    let view = FieldView {
        path,
        kind,
        multikey: &multikey,
    };
    let (ranges, points, shown) = match bounds::field_bound(&view, &values) {
        FieldBound::Points(points, shown, _) => {
            let ranges = points
                .iter()
                .map(|point| {
                    let lower = joined(&prefix, point);
                    KeyRange {
                        upper: successor(&lower),
                        lower,
                    }
                })
                .collect();
            (ranges, true, shown)
        }
        FieldBound::Range(lower, upper, shown) => {
            let range = KeyRange {
                lower: joined(&prefix, &lower),
                upper: match upper {
                    Some(upper) => Some(joined(&prefix, &upper)),
                    None => successor(&prefix),
                },
            };
            (vec![range], false, vec![shown])
        }
        FieldBound::All => return None,
    };
    Some(PathBounds {
        ranges: bounds::merge(ranges),
        points,
        subpaths: false,
        display: (vec![path_interval], shown),
    })
}

/// `$exists: true`: the path with every value, and every path under it.
fn exists_bounds(
    path: &str,
    prefix: Vec<u8>,
    kind: crate::index::spec::KeyKind,
    path_interval: String,
) -> PathBounds {
    let under = format!("{path}.");
    let past = format!("{path}/");
    let all = match kind {
        crate::index::spec::KeyKind::Descending => "[MaxKey, MinKey]",
        _ => bounds::ALL_VALUES,
    };
    let subpaths = format!(
        "[{}, {})",
        bounds::show(RawBsonRef::String(&under)),
        bounds::show(RawBsonRef::String(&past))
    );
    PathBounds {
        ranges: bounds::merge(vec![
            KeyRange {
                upper: successor(&prefix),
                lower: prefix,
            },
            KeyRange {
                lower: path_key(&under),
                upper: Some(path_key(&past)),
            },
        ]),
        points: false,
        subpaths: true,
        display: (vec![path_interval, subpaths], vec![all.to_owned()]),
    }
}
