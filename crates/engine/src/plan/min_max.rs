//! `min` and `max` (issue 17): a find bounded to one range of the hinted index, from the
//! key `min` names (inclusive) to the key `max` names (exclusive), in the index's own key
//! order, as mongod's planner builds it for these options.
//!
//! Invariants:
//! - The range is of index keys, not of the filter: the filter is still checked on every
//!   document, and a document lies in the range exactly when the index key it has there
//!   compares, field by field under the key pattern's directions, at or after `min` and
//!   before `max` (the tree keys are `bson_canonical::key` encodings, which order as
//!   mongod's key comparison does; an entry's record id suffix keeps an entry equal to
//!   `max` out and one equal to `min` in).
//! - mongod's refusals, in its order and with its codes: `min` and `max` naming different
//!   fields (51176), no index hint (51173), a `$natural` hint (291), a hinted index whose
//!   key pattern is not exactly the fields of `min`/`max` in order or a wildcard index
//!   (51174), `min` not before `max` (51175). A hashed index (keys are hashes, so the
//!   values would be compared as hashes) is refused with 238, never answered wrongly.

use super::{Candidate, Hint, Hinted, IndexAccess, hinted};
use crate::error::{Error, ErrorCode};
use crate::index::spec::KeyKind;
use crate::store::{CollectionMeta, KeyRange, Namespace};
use bson::RawDocument;
use bson_canonical::key::{Direction, encode_field_into};

/// `min` and `max` of a find, as given (an empty document is absent).
#[derive(Debug, Clone, Copy, Default)]
pub(crate) struct MinMax<'a> {
    pub(crate) min: Option<&'a RawDocument>,
    pub(crate) max: Option<&'a RawDocument>,
}

impl<'a> MinMax<'a> {
    /// The options of a find, checked as mongod checks them when it parses the command:
    /// both given means the same field names in the same order (51176).
    pub(crate) fn new(
        min: Option<&'a RawDocument>,
        max: Option<&'a RawDocument>,
    ) -> Result<MinMax<'a>, Error> {
        let min = min.filter(|d| !d.is_empty());
        let max = max.filter(|d| !d.is_empty());
        if let (Some(min), Some(max)) = (min, max) {
            let names = |d: &RawDocument| -> Vec<String> {
                d.iter()
                    .filter_map(Result::ok)
                    .map(|(name, _)| name.as_str().to_owned())
                    .collect()
            };
            if names(min) != names(max) {
                return Err(Error::new(
                    ErrorCode::Location(51176),
                    "min and max must have the same field names",
                ));
            }
        }
        Ok(MinMax { min, max })
    }

    /// Whether either is given.
    pub(crate) fn is_set(&self) -> bool {
        self.min.is_some() || self.max.is_some()
    }
}

/// The planner's error, worded as mongod wraps it.
fn planner_error(ns: &Namespace, code: ErrorCode, reason: &str) -> Error {
    Error::new(
        code,
        format!("error processing query: ns={ns} planner returned error :: caused by :: {reason}"),
    )
}

/// The walk `bounds` asks for over the hinted index of `meta`.
pub(crate) fn access(
    meta: &CollectionMeta,
    ns: &Namespace,
    hint: &Hint,
    bounds: &MinMax<'_>,
) -> Result<IndexAccess, Error> {
    let candidate: Candidate<'_> = match hint {
        Hint::None => {
            return Err(planner_error(
                ns,
                ErrorCode::Location(51173),
                "When using min()/max() a hint of which index to use must be provided",
            ));
        }
        Hint::Natural(_) => {
            return Err(planner_error(
                ns,
                ErrorCode::Other(291, "NoQueryExecutionPlans"),
                "min and max are incompatible with $natural",
            ));
        }
        Hint::Id | Hint::Name(_) | Hint::Pattern(_) => match hinted(meta, ns, hint)? {
            Hinted::Index(candidate) => candidate,
            Hinted::Wildcard(_) => return Err(incompatible(ns)),
        },
    };
    let mut keys = [None, None];
    for (slot, given) in keys.iter_mut().zip([bounds.min, bounds.max]) {
        if let Some(given) = given {
            *slot = Some(key_of(&candidate, given).ok_or_else(|| incompatible(ns))?);
        }
    }
    if candidate.fields.iter().any(|f| f.kind == KeyKind::Hashed) {
        return Err(Error::new(
            ErrorCode::NotImplemented,
            "min/max over a hashed index is not supported",
        ));
    }
    let [lower, upper] = keys;
    if let (Some(lower), Some(upper)) = (&lower, &upper)
        && lower >= upper
    {
        return Err(planner_error(
            ns,
            ErrorCode::Location(51175),
            "The value provided for min() does not come before the value provided for max() in \
             the hinted index",
        ));
    }
    Ok(IndexAccess {
        target: candidate.target.clone(),
        name: candidate.name.to_owned(),
        ranges: vec![KeyRange {
            lower: lower.unwrap_or_default(),
            upper,
        }],
        multikey: candidate.multikey,
        reverse: false,
        wildcard_path: None,
    })
}

fn incompatible(ns: &Namespace) -> Error {
    planner_error(
        ns,
        ErrorCode::Location(51174),
        "The index chosen is not compatible with min/max",
    )
}

/// The index key `given` names: one encoding per key field, in key-pattern order; `None`
/// when its fields are not exactly the key pattern's, in order.
fn key_of(candidate: &Candidate<'_>, given: &RawDocument) -> Option<Vec<u8>> {
    let values: Vec<_> = given.iter().collect::<Result<_, _>>().ok()?;
    if values.len() != candidate.fields.len() {
        return None;
    }
    let mut key = Vec::new();
    for ((name, value), field) in values.into_iter().zip(&candidate.fields) {
        if name != field.path {
            return None;
        }
        let direction = match field.kind {
            KeyKind::Descending => Direction::Descending,
            KeyKind::Ascending | KeyKind::Hashed => Direction::Ascending,
        };
        encode_field_into(Some(value), direction, &mut key);
    }
    Some(key)
}
