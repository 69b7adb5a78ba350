//! The `$group` accumulators that keep up to `n` values per group: `$firstN`,
//! `$lastN`, `$minN`, `$maxN`, `$topN`, `$bottomN` and their single-value
//! forms `$top` and `$bottom`, with MongoDB's arguments, codes and tie rules.
//!
//! `n` is an expression evaluated once per group with the group key as
//! `$$ROOT` (the `_id` document, or an empty document when `_id` is not one),
//! so it may depend on the key only; it must be a positive integral number.
//! `sortBy` is a `$sort` specification whose fields are read as `$path`
//! expressions and keyed as `$sort` keys them (an array sorts by its smallest
//! element ascending, its largest descending; missing sorts as null).
//!
//! Invariants:
//! - A [`Kept`] holds at most `n` entries, sorted ascending in its order
//!   (MongoDB's order of values for `$minN`/`$maxN`, the `sortBy` order for
//!   `$topN`/`$bottomN`); entries that compare equal stay in arrival order.
//! - An entry replaces a kept one only when strictly better than the worst
//!   kept, so ties at the boundary keep the earlier value, as MongoDB's
//!   multiset does; the one dropped is the worst kept (for `$maxN` and
//!   `$bottomN` the first of the smallest, for `$minN` and `$topN` the last
//!   of the largest).
//! - `bytes` is the size of the entries held, checked against the memory
//!   limit after every insertion.

use super::fields;
use super::group::{check_memory, value_size};
use crate::error::QueryError;
use crate::expr::{Expression, value_to_raw};
use crate::sort::{Direction, SortKey, SortSpec};
use crate::variables::Variables;
use bson::raw::{RawDocument, RawDocumentBuf};
use bson::{Bson, Document, RawBson, RawBsonRef};
use bson_canonical::compare::elements;
use std::cmp::Ordering;
use std::collections::VecDeque;

fn location(code: i32, message: impl Into<String>) -> QueryError {
    QueryError::location(code, message)
}

/// Where a group's `n` comes from.
#[derive(Debug, Clone)]
pub(super) enum Count {
    /// `$top` and `$bottom`: one.
    One,
    /// The `n` expression, evaluated against the group key.
    Of(Expression),
}

impl Count {
    /// The group's `n`, for the group whose `_id` is `id`.
    pub(super) fn evaluate(&self, id: &Bson) -> Result<usize, QueryError> {
        let expression = match self {
            Count::One => return Ok(1),
            Count::Of(expression) => expression,
        };
        let root = match id {
            Bson::Document(doc) => super::stages::to_raw(doc)?,
            _ => RawDocumentBuf::new(),
        };
        validate_n(expression.evaluate(&root)?)
    }
}

/// MongoDB's `AccumulatorN::validateN`: a number (5787902) with an integral
/// value (5787903) greater than zero (5787908).
fn validate_n(value: Option<Bson>) -> Result<usize, QueryError> {
    let shown = value
        .as_ref()
        .map_or_else(|| "missing".to_owned(), fields::show);
    let not_integral = || {
        location(
            5_787_902,
            format!("Value for 'n' must be of integral type, but found {shown}"),
        )
    };
    let n = match &value {
        Some(Bson::Int32(v)) => i64::from(*v),
        Some(Bson::Int64(v)) => *v,
        Some(number @ (Bson::Double(_) | Bson::Decimal128(_))) => {
            let raw = value_to_raw(number);
            let double = crate::value::as_f64(raw.as_raw_bson_ref()).ok_or_else(not_integral)?;
            crate::value::whole_f64_to_i64(double).ok_or_else(|| {
                location(
                    5_787_903,
                    format!("Value for 'n' must be of integral type, but found {shown}"),
                )
            })?
        }
        _ => return Err(not_integral()),
    };
    if n <= 0 {
        return Err(location(
            5_787_908,
            format!("'n' must be greater than 0, found {n}"),
        ));
    }
    Ok(usize::try_from(n).unwrap_or(usize::MAX))
}

/// `{n, input}` of `$firstN`, `$lastN`, `$minN` and `$maxN`.
pub(super) fn parse_n_input(
    operator: &str,
    argument: RawBsonRef<'_>,
    vars: &Variables,
) -> Result<(Count, Expression), QueryError> {
    let RawBsonRef::Document(spec) = argument else {
        // $firstN/$lastN and $minN/$maxN check this in different places.
        let code = if matches!(operator, "$firstN" | "$lastN") {
            5_787_801
        } else {
            5_787_900
        };
        return Err(location(
            code,
            format!(
                "specification must be an object; found {operator}: {}",
                fields::show_raw(argument)
            ),
        ));
    };
    let (mut n, mut input) = (None, None);
    for (name, value) in elements(spec) {
        match name {
            "input" => input = Some(Expression::parse_with(value, vars)?),
            "n" => n = Some(Expression::parse_with(value, vars)?),
            _ => {
                return Err(location(
                    5_787_901,
                    format!("Unknown argument for 'n' operator: {name}"),
                ));
            }
        }
    }
    let n = n.ok_or_else(|| location(5_787_906, "Missing value for 'n'"))?;
    let input = input.ok_or_else(|| location(5_787_907, "Missing value for 'input'"))?;
    Ok((Count::Of(n), input))
}

/// `{output, sortBy}` of `$top`/`$bottom` (`single`) and `{output, sortBy, n}`
/// of `$topN`/`$bottomN`.
pub(super) fn parse_ranked(
    operator: &str,
    argument: RawBsonRef<'_>,
    single: bool,
    vars: &Variables,
) -> Result<(Count, Expression, SortBy), QueryError> {
    let RawBsonRef::Document(spec) = argument else {
        return Err(location(
            5_788_001,
            format!(
                "specification must be an object; found {operator}: {}",
                fields::show_raw(argument)
            ),
        ));
    };
    let (mut n, mut output, mut sort_by) = (None, None, None);
    for (name, value) in elements(spec) {
        match name {
            "n" if !single => n = Some(Expression::parse_with(value, vars)?),
            "output" => output = Some(value),
            "sortBy" => match value {
                RawBsonRef::Document(doc) => sort_by = Some(doc),
                _ => {
                    return Err(location(
                        10_065,
                        "invalid parameter: expected an object (sortBy)",
                    ));
                }
            },
            _ => {
                return Err(location(
                    5_788_002,
                    format!("Unknown argument to {operator} '{name}'"),
                ));
            }
        }
    }
    let count = if single {
        Count::One
    } else {
        Count::Of(n.ok_or_else(|| location(5_788_003, "Missing value for 'n'"))?)
    };
    let output = output.ok_or_else(|| location(5_788_004, "Missing value for 'output'"))?;
    let sort_by = sort_by.ok_or_else(|| location(5_788_005, "Missing value for 'sortBy'"))?;
    let sort_by = SortBy::parse(sort_by)?;
    Ok((count, Expression::parse_with(output, vars)?, sort_by))
}

/// A parsed `sortBy`: its fields as `$path` expressions and the order over
/// the keys they make.
#[derive(Debug, Clone)]
pub(super) struct SortBy {
    /// The `sortBy` order over a document of the evaluated paths, whose
    /// fields are named by position (`0`, `1`, ...).
    spec: SortSpec,
    /// One `$path` expression per sort field, in order.
    paths: Vec<Expression>,
}

impl SortBy {
    fn parse(spec: &RawDocument) -> Result<SortBy, QueryError> {
        let mut seen = std::collections::HashSet::new();
        let mut order = Vec::new();
        let mut paths = Vec::new();
        for (position, (name, value)) in elements(spec).enumerate() {
            let direction = match value {
                RawBsonRef::Document(_) => {
                    return Err(QueryError::bad_value(format!(
                        "$meta sort on '{name}' is not supported"
                    )));
                }
                RawBsonRef::Int32(_)
                | RawBsonRef::Int64(_)
                | RawBsonRef::Double(_)
                | RawBsonRef::Decimal128(_) => match crate::value::as_whole_i64(value) {
                    Some(1) => Direction::Ascending,
                    Some(-1) => Direction::Descending,
                    _ => {
                        return Err(location(
                            15_975,
                            "$sort key ordering must be 1 (for ascending) or -1 (for descending)",
                        ));
                    }
                },
                _ => {
                    return Err(location(
                        15_974,
                        format!(
                            "Illegal key in $sort specification: {name}: {}",
                            fields::show_raw(value)
                        ),
                    ));
                }
            };
            fields::field_path(name)?;
            if !seen.insert(name) {
                return Err(location(
                    7_472_500,
                    format!("$sort key must not contain duplicate keys (duplicate: '{name}')"),
                ));
            }
            order.push((position.to_string(), direction));
            paths.push(Expression::parse(RawBsonRef::String(&format!("${name}")))?);
        }
        Ok(SortBy {
            spec: SortSpec::from_fields(order),
            paths,
        })
    }

    /// The key `doc` sorts by.
    pub(super) fn key(&self, doc: &RawDocument) -> Result<SortKey, QueryError> {
        let mut values = Document::new();
        for (position, path) in self.paths.iter().enumerate() {
            if let Some(value) = path.evaluate(doc)? {
                values.insert(position.to_string(), value);
            }
        }
        Ok(self.spec.key(&super::stages::to_raw(&values)?))
    }

    /// Adds the top-level input fields the sort reads to `out`.
    pub(super) fn top_fields(&self, out: &mut std::collections::BTreeSet<String>) -> bool {
        self.paths.iter().all(|p| p.top_fields(out))
    }

    fn compare(&self, a: &SortKey, b: &SortKey) -> Ordering {
        self.spec.compare_keys(a, b)
    }
}

/// Which end of its order an accumulator keeps.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum End {
    /// The smallest (`$minN`, `$topN`, `$top`).
    Low,
    /// The largest (`$maxN`, `$bottomN`, `$bottom`).
    High,
}

/// The `n` best entries of a group; see the module's invariants.
#[derive(Debug, Clone)]
pub(super) struct Kept<K> {
    n: usize,
    end: End,
    /// A deque: `$maxN` and `$bottomN` drop from the front, and on input
    /// that arrives in order every value drops one.
    entries: VecDeque<(K, Bson, usize)>,
    bytes: usize,
}

impl<K> Kept<K> {
    pub(super) fn new(n: usize, end: End) -> Kept<K> {
        Kept {
            n,
            end,
            entries: VecDeque::new(),
            bytes: 0,
        }
    }

    /// Offers `value` with its `key`; `bytes` is what holding it costs.
    fn offer(
        &mut self,
        key: K,
        value: Bson,
        bytes: usize,
        compare: impl Fn(&K, &K) -> Ordering,
        name: &str,
        bytes_max: usize,
    ) -> Result<(), QueryError> {
        if self.entries.len() >= self.n {
            let worst = match self.end {
                End::Low => self.entries.len().checked_sub(1),
                End::High => Some(0),
            };
            let Some(worst) = worst else {
                return Ok(());
            };
            let order = compare(&key, &self.entries[worst].0);
            let better = match self.end {
                End::Low => order.is_lt(),
                End::High => order.is_gt(),
            };
            if !better {
                return Ok(());
            }
            if let Some((_, _, dropped)) = self.entries.remove(worst) {
                self.bytes = self.bytes.saturating_sub(dropped);
            }
        }
        // After the entries not greater than it: equal ones keep arrival order.
        let at = self
            .entries
            .partition_point(|(k, _, _)| compare(k, &key) != Ordering::Greater);
        self.entries.insert(at, (key, value, bytes));
        self.bytes = self.bytes.saturating_add(bytes);
        check_memory(name, self.bytes, bytes_max)
    }

    /// The kept values, best first for `$minN`/`$maxN`, in sort order for
    /// `$topN`/`$bottomN`.
    fn values(self, best_first: bool) -> Vec<Bson> {
        let values = self.entries.into_iter().map(|(_, v, _)| v);
        if best_first && self.end == End::High {
            values.rev().collect()
        } else {
            values.collect()
        }
    }
}

/// The state of one N accumulator in one group.
#[derive(Debug, Clone)]
pub(super) enum NState {
    /// `$firstN`: the first `n` values, missing as null.
    First(usize, Vec<Bson>, usize),
    /// `$lastN`: the last `n` values, missing as null.
    Last(usize, VecDeque<(Bson, usize)>, usize),
    /// `$minN` (`Low`) / `$maxN` (`High`): null, undefined and missing skipped.
    Extreme(Kept<RawBson>),
    /// `$topN`/`$top` (`Low`) and `$bottomN`/`$bottom` (`High`); `true` for the
    /// single-value forms.
    Ranked(Kept<SortKey>, bool),
}

impl NState {
    /// The bytes of the values kept, for the `$group`'s memory estimate.
    pub(super) fn held(&self) -> usize {
        match self {
            NState::First(_, _, bytes) | NState::Last(_, _, bytes) => *bytes,
            NState::Extreme(kept) => kept.bytes,
            NState::Ranked(kept, _) => kept.bytes,
        }
    }

    /// Folds in one document's value (`None`: missing) and, for the ranked
    /// accumulators, its sort key.
    pub(super) fn add(
        &mut self,
        name: &str,
        value: Option<Bson>,
        key: Option<(&SortBy, SortKey)>,
        bytes_max: usize,
    ) -> Result<(), QueryError> {
        match self {
            NState::First(n, items, bytes) => {
                if items.len() < *n {
                    let v = value.unwrap_or(Bson::Null);
                    *bytes = bytes.saturating_add(value_size(&v));
                    check_memory(name, *bytes, bytes_max)?;
                    items.push(v);
                }
            }
            NState::Last(n, items, bytes) => {
                let v = value.unwrap_or(Bson::Null);
                let size = value_size(&v);
                if items.len() >= *n
                    && let Some((_, dropped)) = items.pop_front()
                {
                    *bytes = bytes.saturating_sub(dropped);
                }
                items.push_back((v, size));
                *bytes = bytes.saturating_add(size);
                check_memory(name, *bytes, bytes_max)?;
            }
            NState::Extreme(kept) => {
                let Some(v) = value.filter(|v| !matches!(v, Bson::Null | Bson::Undefined)) else {
                    return Ok(());
                };
                let size = value_size(&v);
                // The key is the value itself, in raw form for the comparison.
                kept.offer(
                    value_to_raw(&v),
                    v,
                    size,
                    |a, b| bson_canonical::compare_values(a.as_raw_bson_ref(), b.as_raw_bson_ref()),
                    name,
                    bytes_max,
                )?;
            }
            NState::Ranked(kept, _) => {
                let Some((sort_by, key)) = key else {
                    return Ok(());
                };
                let v = value.unwrap_or(Bson::Null);
                let size = value_size(&v).saturating_add(key_size(&key));
                kept.offer(key, v, size, |a, b| sort_by.compare(a, b), name, bytes_max)?;
            }
        }
        Ok(())
    }

    /// The accumulator's result.
    pub(super) fn finish(self) -> Bson {
        match self {
            NState::First(_, items, _) => Bson::Array(items),
            NState::Last(_, items, _) => Bson::Array(items.into_iter().map(|(v, _)| v).collect()),
            NState::Extreme(kept) => Bson::Array(kept.values(true)),
            NState::Ranked(kept, single) => {
                let mut values = kept.values(false);
                if single {
                    // A group has at least one document, so one value is kept.
                    if values.is_empty() {
                        Bson::Null
                    } else {
                        values.swap_remove(0)
                    }
                } else {
                    Bson::Array(values)
                }
            }
        }
    }
}

/// The size of a sort key, for the memory limit.
fn key_size(key: &SortKey) -> usize {
    key.values()
        .iter()
        .map(|v| {
            Bson::try_from(v.clone())
                .map(|b| value_size(&b))
                .unwrap_or(0)
        })
        .sum()
}
