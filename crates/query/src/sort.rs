//! Sorting: sort specifications, per-document sort keys and top-k selection.
//!
//! A document's key for one sort field is taken over every value the path
//! reaches, arrays expanded one level: the smallest for an ascending field and
//! the largest for a descending one (MongoDB's multikey rule). A missing
//! field (also missing inside an array element) sorts as null; an empty array
//! sorts below null, as MongoDB has it (it keys `[]` as undefined).

use crate::error::QueryError;
use bson::raw::RawDocument;
use bson::{RawBson, RawBsonRef};
use bson_canonical::compare::{array_values, elements};
use bson_canonical::compare_values;
use std::cmp::Ordering;
use std::ops::ControlFlow;

/// The direction of one sort field.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Direction {
    /// Smallest first.
    Ascending,
    /// Largest first.
    Descending,
}

/// A parsed sort specification (`{a: 1, "b.c": -1}`).
#[derive(Debug, Clone, Default)]
pub struct SortSpec {
    fields: Vec<(String, Direction)>,
}

/// The values a document sorts by, one per sort field.
#[derive(Debug, Clone, PartialEq)]
pub struct SortKey(Vec<RawBson>);

impl SortKey {
    /// The key's values, one per sort field.
    pub(crate) fn values(&self) -> &[RawBson] {
        &self.0
    }
}

impl SortSpec {
    /// Parses a sort document.
    pub fn parse(spec: &RawDocument) -> Result<SortSpec, QueryError> {
        let mut fields = Vec::new();
        for (key, value) in elements(spec) {
            if key.is_empty() || key.split('.').any(str::is_empty) {
                return Err(QueryError::location(
                    40352,
                    "FieldPath cannot be constructed with empty string",
                ));
            }
            let direction = match crate::value::as_whole_i64(value) {
                Some(1) => Direction::Ascending,
                Some(-1) => Direction::Descending,
                _ if matches!(value, RawBsonRef::Document(_)) => {
                    return Err(QueryError::bad_value(format!(
                        "$meta sort on '{key}' is not supported"
                    )));
                }
                _ => {
                    return Err(QueryError::location(
                        15975,
                        "$sort key ordering must be 1 (for ascending) or -1 (for descending)",
                    ));
                }
            };
            fields.push((key.to_owned(), direction));
        }
        Ok(SortSpec { fields })
    }

    /// A sort over the given fields, in order (paths already checked).
    pub(crate) fn from_fields(fields: Vec<(String, Direction)>) -> SortSpec {
        SortSpec { fields }
    }

    /// The sort fields in order.
    pub fn fields(&self) -> &[(String, Direction)] {
        &self.fields
    }

    /// Whether there is nothing to sort by.
    pub fn is_empty(&self) -> bool {
        self.fields.is_empty()
    }

    /// The key `doc` sorts by.
    pub fn key(&self, doc: &RawDocument) -> SortKey {
        SortKey(
            self.fields
                .iter()
                .map(|(path, direction)| field_key(doc, path, *direction))
                .collect(),
        )
    }

    /// Compares two keys made by [`SortSpec::key`].
    pub fn compare_keys(&self, a: &SortKey, b: &SortKey) -> Ordering {
        for (((x, y), (_, direction)), _) in a.0.iter().zip(&b.0).zip(&self.fields).zip(0..) {
            let order = compare_values(x.as_raw_bson_ref(), y.as_raw_bson_ref());
            let order = match direction {
                Direction::Ascending => order,
                Direction::Descending => order.reverse(),
            };
            if order.is_ne() {
                return order;
            }
        }
        Ordering::Equal
    }

    /// Compares two documents in this sort order.
    pub fn compare(&self, a: &RawDocument, b: &RawDocument) -> Ordering {
        self.compare_keys(&self.key(a), &self.key(b))
    }

    /// Sorts documents (stably), keeping only the first `limit` when given.
    pub fn sort<T>(
        &self,
        items: impl IntoIterator<Item = T>,
        limit: Option<usize>,
        doc_of: impl Fn(&T) -> &RawDocument,
    ) -> Vec<T> {
        let keyed = items
            .into_iter()
            .map(|item| (self.key(doc_of(&item)), item));
        top_k(keyed, limit, |(a, _), (b, _)| self.compare_keys(a, b))
            .into_iter()
            .map(|(_, item)| item)
            .collect()
    }
}

fn field_key<'a>(doc: &'a RawDocument, path: &str, direction: Direction) -> RawBson {
    let mut best: Option<RawBsonRef<'a>> = None;
    let mut consider = |candidate: RawBsonRef<'a>| {
        let better = match best {
            None => true,
            Some(current) => {
                let order = compare_values(candidate, current);
                match direction {
                    Direction::Ascending => order.is_lt(),
                    Direction::Descending => order.is_gt(),
                }
            }
        };
        if better {
            best = Some(candidate);
        }
    };
    let mut consider_reached = |reached: Option<RawBsonRef<'a>>| {
        match reached {
            None => consider(RawBsonRef::Null),
            Some(RawBsonRef::Array(array)) => {
                let mut any = false;
                for element in array_values(array) {
                    any = true;
                    consider(element);
                }
                if !any {
                    consider(RawBsonRef::Undefined);
                }
            }
            Some(value) => consider(value),
        }
        ControlFlow::Continue(())
    };
    let _ = crate::filter::walk(doc, path, &mut consider_reached);
    best.map_or(RawBson::Null, RawBson::from)
}

/// The `limit` smallest items in `compare` order (all of them when `limit` is
/// `None`), sorted, ties kept in input order.
///
/// With a limit this keeps at most `2 * limit` candidates, cutting back to
/// `limit` by selection when the buffer fills, so it takes O(n) comparisons
/// plus O(k log k) for the final sort and O(k) memory.
pub fn top_k<T>(
    items: impl IntoIterator<Item = T>,
    limit: Option<usize>,
    compare: impl Fn(&T, &T) -> Ordering,
) -> Vec<T> {
    let ordered = |a: &(usize, T), b: &(usize, T)| compare(&a.1, &b.1).then(a.0.cmp(&b.0));
    let Some(limit) = limit else {
        let mut all: Vec<(usize, T)> = items.into_iter().enumerate().collect();
        all.sort_by(ordered);
        return all.into_iter().map(|(_, item)| item).collect();
    };
    if limit == 0 {
        return Vec::new();
    }
    let capacity = limit.saturating_mul(2).max(16);
    let mut buffer: Vec<(usize, T)> = Vec::with_capacity(capacity);
    for entry in items.into_iter().enumerate() {
        if buffer.len() == capacity {
            buffer.select_nth_unstable_by(limit - 1, ordered);
            buffer.truncate(limit);
        }
        buffer.push(entry);
    }
    buffer.sort_by(ordered);
    buffer.truncate(limit);
    buffer.into_iter().map(|(_, item)| item).collect()
}
