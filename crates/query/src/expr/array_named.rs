//! Array operators with named arguments: `$zip`, `$reduce`, `$sortArray` and the array
//! forms of `$firstN`, `$lastN`, `$maxN` and `$minN`.
//!
//! Semantics and error codes follow MongoDB's `src/mongo/db/pipeline/expression.cpp`
//! (`$zip`, `$reduce`, `$sortArray`) and `accumulator_multi.cpp` (the `N` operators).

use super::array::shown;
use super::date::named_fields;
use super::ops::nullish;
use super::value::{Number, to_raw, type_name};
use super::{Expr, ParseCtx, Scope, Value, parse_expr};
use crate::error::QueryError;
use crate::limits::EXPRESSION_ARRAY_ELEMENTS_MAX;
use bson::{Bson, RawBson, RawBsonRef};
use bson_canonical::compare::{array_values, elements};
use std::cmp::Ordering;
use std::collections::BTreeSet;

type Result<T> = std::result::Result<T, QueryError>;

/// The operators of this module.
pub(super) const OPERATORS: &[&str] = &[
    "$zip",
    "$reduce",
    "$sortArray",
    "$firstN",
    "$lastN",
    "$maxN",
    "$minN",
];

fn raw_type_name(arg: RawBsonRef<'_>) -> &'static str {
    crate::filter::types::type_name(crate::filter::types::type_code(&arg))
}

fn raw_shown(arg: RawBsonRef<'_>) -> String {
    bson::Bson::try_from(arg).map_or_else(|_| "?".to_owned(), |b| b.to_string())
}

/// Parses one of [`OPERATORS`].
pub(super) fn parse(key: &str, arg: RawBsonRef<'_>, ctx: ParseCtx<'_>) -> Result<Expr> {
    match key {
        "$zip" => parse_zip(arg, ctx),
        "$reduce" => parse_reduce(arg, ctx),
        "$sortArray" => parse_sort_array(arg, ctx),
        _ => parse_n(key, arg, ctx),
    }
}

/// Evaluates one of [`OPERATORS`].
pub(super) fn named(name: &str, args: &[(String, Expr)], scope: &mut Scope<'_>) -> Result<Value> {
    let get = |key: &str| args.iter().find(|(k, _)| k == key).map(|(_, e)| e);
    match name {
        "$zip" => zip(
            get("inputs"),
            get("defaults"),
            get("useLongestLength"),
            scope,
        ),
        "$reduce" => {
            let (Some(input), Some(initial), Some(body)) =
                (get("input"), get("initialValue"), get("in"))
            else {
                return Err(QueryError::location(
                    40079,
                    "$reduce requires 'in' to be specified",
                ));
            };
            reduce(input, initial, body, scope)
        }
        "$sortArray" => {
            let (Some(input), Some(Expr::Literal(sort_by))) = (get("input"), get("sortBy")) else {
                return Err(QueryError::location(
                    2_942_503,
                    "$sortArray requires 'sortBy' to be specified",
                ));
            };
            sort_array(&input.eval(scope)?, sort_by)
        }
        _ => {
            let (Some(n), Some(input)) = (get("n"), get("input")) else {
                return Err(QueryError::location(5_787_906, "Missing value for 'n'"));
            };
            let n = n_value(&n.eval(scope)?)?;
            let input = input.eval(scope)?;
            let Some(Bson::Array(items)) = input else {
                return Err(QueryError::location(5_788_200, "Input must be an array"));
            };
            Ok(Some(Bson::Array(take_n(name, n, items))))
        }
    }
}

fn parse_zip(arg: RawBsonRef<'_>, ctx: ParseCtx<'_>) -> Result<Expr> {
    let RawBsonRef::Document(doc) = arg else {
        return Err(QueryError::location(
            34460,
            format!(
                "$zip only supports an object as an argument, found {}",
                raw_type_name(arg)
            ),
        ));
    };
    let mut inputs = None;
    let mut defaults = None;
    let mut longest = false;
    for (key, value) in elements(doc) {
        match (key, value) {
            ("inputs" | "defaults", RawBsonRef::Array(items)) => {
                let parsed = array_values(items)
                    .map(|item| parse_expr(item, ctx.nested()))
                    .collect::<Result<Vec<_>>>()?;
                if key == "inputs" {
                    inputs = Some(parsed);
                } else {
                    defaults = Some(parsed);
                }
            }
            ("inputs" | "defaults", other) => {
                return Err(QueryError::location(
                    if key == "inputs" { 34461 } else { 34462 },
                    format!(
                        "{key} must be an array of expressions, found {}",
                        raw_type_name(other)
                    ),
                ));
            }
            ("useLongestLength", RawBsonRef::Boolean(b)) => longest = b,
            ("useLongestLength", other) => {
                return Err(QueryError::location(
                    34463,
                    format!(
                        "useLongestLength must be a bool, found {}",
                        raw_type_name(other)
                    ),
                ));
            }
            _ => {
                return Err(QueryError::location(
                    34464,
                    format!("$zip found an unknown argument: {key}"),
                ));
            }
        }
    }
    let inputs = inputs.unwrap_or_default();
    let defaults = defaults.unwrap_or_default();
    check_zip(&inputs, &defaults, longest)?;
    Ok(Expr::Named(
        "$zip".to_owned(),
        vec![
            ("inputs".to_owned(), Expr::Array(inputs)),
            ("defaults".to_owned(), Expr::Array(defaults)),
            (
                "useLongestLength".to_owned(),
                Expr::Literal(Bson::Boolean(longest)),
            ),
        ],
    ))
}

/// `$zip`'s checks across its fields: at least one input; defaults only with
/// `useLongestLength`, and one per input.
fn check_zip(inputs: &[Expr], defaults: &[Expr], longest: bool) -> Result<()> {
    if inputs.is_empty() {
        return Err(QueryError::location(
            34465,
            "$zip requires at least one input array",
        ));
    }
    if !longest && !defaults.is_empty() {
        return Err(QueryError::location(
            34466,
            "cannot specify defaults unless useLongestLength is true",
        ));
    }
    if !defaults.is_empty() && defaults.len() != inputs.len() {
        return Err(QueryError::location(
            34467,
            "defaults and inputs must have the same length",
        ));
    }
    Ok(())
}

fn zip(
    inputs: Option<&Expr>,
    defaults: Option<&Expr>,
    longest: Option<&Expr>,
    scope: &mut Scope<'_>,
) -> Result<Value> {
    let (Some(Expr::Array(inputs)), Some(Expr::Array(defaults))) = (inputs, defaults) else {
        return Err(QueryError::location(
            34465,
            "$zip requires at least one input array",
        ));
    };
    let longest = matches!(longest, Some(Expr::Literal(Bson::Boolean(true))));
    let mut arrays = Vec::with_capacity(inputs.len());
    for input in inputs {
        let value = input.eval(scope)?;
        if nullish(&value) {
            return Ok(Some(Bson::Null));
        }
        let Some(Bson::Array(items)) = value else {
            return Err(QueryError::location(
                34468,
                format!(
                    "$zip found a non-array expression in input: {}",
                    shown(&value)
                ),
            ));
        };
        arrays.push(items);
    }
    let shortest = arrays.iter().map(Vec::len).min().unwrap_or(0);
    let longest_len = arrays.iter().map(Vec::len).max().unwrap_or(0);
    // Defaults are evaluated only when the lengths differ, as in MongoDB.
    let mut fill = vec![Bson::Null; arrays.len()];
    if shortest != longest_len {
        for (slot, expr) in fill.iter_mut().zip(defaults) {
            *slot = expr.eval(scope)?.unwrap_or(Bson::Null);
        }
    }
    let rows = if longest { longest_len } else { shortest };
    if rows.saturating_mul(arrays.len()) > EXPRESSION_ARRAY_ELEMENTS_MAX {
        return Err(QueryError::ExceededMemoryLimit(format!(
            "$zip would build {rows} rows of {} elements, more than the limit of \
             {EXPRESSION_ARRAY_ELEMENTS_MAX} elements",
            arrays.len()
        )));
    }
    let out = (0..rows)
        .map(|row| {
            Bson::Array(
                arrays
                    .iter()
                    .zip(&fill)
                    .map(|(array, default)| array.get(row).unwrap_or(default).clone())
                    .collect(),
            )
        })
        .collect();
    Ok(Some(Bson::Array(out)))
}

fn parse_reduce(arg: RawBsonRef<'_>, ctx: ParseCtx<'_>) -> Result<Expr> {
    let RawBsonRef::Document(doc) = arg else {
        return Err(QueryError::location(
            40075,
            format!(
                "$reduce requires an object as an argument, found: {}",
                raw_type_name(arg)
            ),
        ));
    };
    let args = named_fields(doc, ctx, |field| {
        (!matches!(field, "input" | "initialValue" | "in")).then(|| {
            QueryError::location(40076, format!("$reduce found an unknown argument: {field}"))
        })
    })?;
    for (field, code) in [("input", 40077), ("initialValue", 40078), ("in", 40079)] {
        if !args.iter().any(|(k, _)| k == field) {
            return Err(QueryError::location(
                code,
                format!("$reduce requires '{field}' to be specified"),
            ));
        }
    }
    Ok(Expr::Named("$reduce".to_owned(), args))
}

/// `$reduce`: `in` evaluated once per element with `$$this` bound to the element
/// and `$$value` to the result so far (first `initialValue`).
fn reduce(input: &Expr, initial: &Expr, body: &Expr, scope: &mut Scope<'_>) -> Result<Value> {
    let input = input.eval(scope)?;
    if nullish(&input) {
        return Ok(Some(Bson::Null));
    }
    let Some(Bson::Array(items)) = input else {
        return Err(QueryError::location(
            40080,
            format!(
                "$reduce requires that 'input' be an array, found: {}",
                shown(&input)
            ),
        ));
    };
    let mut accumulated = initial.eval(scope)?;
    for item in items {
        let value = accumulated.take();
        accumulated = scope.with_var("this", Some(item), |s| {
            s.with_var("value", value, |s| body.eval(s))
        })?;
    }
    Ok(accumulated)
}

fn parse_sort_array(arg: RawBsonRef<'_>, ctx: ParseCtx<'_>) -> Result<Expr> {
    let RawBsonRef::Document(doc) = arg else {
        return Err(QueryError::location(
            2_942_500,
            format!(
                "$sortArray requires an object as an argument, found: {}",
                raw_type_name(arg)
            ),
        ));
    };
    let mut input = None;
    let mut sort_by = None;
    for (key, value) in elements(doc) {
        match key {
            "input" => input = Some(parse_expr(value, ctx.nested())?),
            "sortBy" => sort_by = Some(parse_sort_by(value)?),
            _ => {
                return Err(QueryError::location(
                    2_942_501,
                    format!("$sortArray found an unknown argument: {key}"),
                ));
            }
        }
    }
    let input = input.ok_or_else(|| {
        QueryError::location(2_942_502, "$sortArray requires 'input' to be specified")
    })?;
    let sort_by = sort_by.ok_or_else(|| {
        QueryError::location(2_942_503, "$sortArray requires 'sortBy' to be specified")
    })?;
    Ok(Expr::Named(
        "$sortArray".to_owned(),
        vec![
            ("input".to_owned(), input),
            ("sortBy".to_owned(), Expr::Literal(sort_by)),
        ],
    ))
}

/// `1` or `-1` as a number of any numeric type.
fn direction_of(value: RawBsonRef<'_>) -> Option<f64> {
    crate::value::as_f64(value).filter(|d| *d == 1.0 || *d == -1.0)
}

/// Checks `sortBy`: `1`/`-1` sorts whole elements, `{path: 1/-1, ...}` by fields.
/// Kept as `Double(direction)` or a document of `Double` directions.
fn parse_sort_by(value: RawBsonRef<'_>) -> Result<Bson> {
    let invalid = |message: &str| QueryError::location(2_942_505, message.to_owned());
    match value {
        RawBsonRef::Document(spec) => {
            let mut out = bson::Document::new();
            for (path, direction) in elements(spec) {
                let Some(direction) = direction_of(direction) else {
                    return Err(invalid("The $sort element value must be either 1 or -1"));
                };
                if path.is_empty() {
                    return Err(invalid("The $sort field cannot be empty"));
                }
                if path.split('.').any(str::is_empty) {
                    return Err(invalid(&format!(
                        "The $sort field is a dotted field but has an empty part: {path}"
                    )));
                }
                out.insert(path, Bson::Double(direction));
            }
            if out.is_empty() {
                return Err(invalid(
                    "The $sort pattern is empty when it should be a set of fields.",
                ));
            }
            Ok(Bson::Document(out))
        }
        RawBsonRef::Int32(_)
        | RawBsonRef::Int64(_)
        | RawBsonRef::Double(_)
        | RawBsonRef::Decimal128(_) => direction_of(value).map(Bson::Double).ok_or_else(|| {
            QueryError::location(2_942_506, "The $sort element value must be either 1 or -1")
        }),
        other => Err(QueryError::location(
            2_942_507,
            format!(
                "The $sort is invalid: use 1/-1 to sort the whole element, or {{field:1/-1}} to \
                 sort embedded fields (found {})",
                raw_shown(other)
            ),
        )),
    }
}

/// The value at a dotted path as MongoDB's sort-key extraction sees it: the whole
/// name as a field first, then the first component and the rest below it, where
/// an array's fields are its positions; `None` when absent.
fn dotted<'v>(doc: &'v bson::Document, path: &str) -> Option<&'v Bson> {
    if let Some(v) = doc.get(path) {
        return Some(v);
    }
    let (first, rest) = path.split_once('.')?;
    match doc.get(first)? {
        Bson::Document(sub) => dotted(sub, rest),
        Bson::Array(items) => dotted_in_array(items, rest),
        _ => None,
    }
}

fn dotted_in_array<'v>(items: &'v [Bson], path: &str) -> Option<&'v Bson> {
    let (first, rest) = match path.split_once('.') {
        Some((first, rest)) => (first, Some(rest)),
        None => (path, None),
    };
    // Only a canonical position names an element ("1", not "01").
    let index: usize = first
        .parse()
        .ok()
        .filter(|i: &usize| i.to_string() == first)?;
    let item = items.get(index)?;
    match (rest, item) {
        (None, item) => Some(item),
        (Some(rest), Bson::Document(sub)) => dotted(sub, rest),
        (Some(rest), Bson::Array(inner)) => dotted_in_array(inner, rest),
        _ => None,
    }
}

fn sort_array(input: &Value, sort_by: &Bson) -> Result<Value> {
    if nullish(input) {
        return Ok(Some(Bson::Null));
    }
    let Some(Bson::Array(items)) = input else {
        return Err(QueryError::location(
            2_942_504,
            format!(
                "The input argument to $sortArray must be an array, but was of type: {}",
                type_name(input)
            ),
        ));
    };
    // Keys are converted to raw BSON once, not at every comparison.
    let (keys, directions): (Vec<Vec<RawBson>>, Vec<bool>) = match sort_by {
        Bson::Document(spec) => (
            items
                .iter()
                .map(|item| {
                    spec.keys()
                        .map(|path| match item {
                            Bson::Document(doc) => dotted(doc, path).map_or(RawBson::Null, to_raw),
                            _ => RawBson::Null,
                        })
                        .collect()
                })
                .collect(),
            spec.values()
                .map(|d| matches!(d, Bson::Double(v) if *v < 0.0))
                .collect(),
        ),
        direction => (
            items.iter().map(|item| vec![to_raw(item)]).collect(),
            vec![matches!(direction, Bson::Double(v) if *v < 0.0)],
        ),
    };
    let mut order: Vec<usize> = (0..items.len()).collect();
    // A stable sort: elements with equal keys keep their order.
    order.sort_by(|&a, &b| {
        keys[a]
            .iter()
            .zip(&keys[b])
            .zip(&directions)
            .map(|((x, y), descending)| {
                let order = compare_raw(x, y);
                if *descending { order.reverse() } else { order }
            })
            .find(|o| o.is_ne())
            .unwrap_or(Ordering::Equal)
    });
    let items = order.into_iter().map(|i| items[i].clone()).collect();
    Ok(Some(Bson::Array(items)))
}

fn parse_n(key: &str, arg: RawBsonRef<'_>, ctx: ParseCtx<'_>) -> Result<Expr> {
    let RawBsonRef::Document(doc) = arg else {
        let code = if matches!(key, "$firstN" | "$lastN") {
            5_787_801
        } else {
            5_787_900
        };
        return Err(QueryError::location(
            code,
            format!(
                "specification must be an object; found {key}: {}",
                raw_shown(arg)
            ),
        ));
    };
    let args = named_fields(doc, ctx, |field| {
        (!matches!(field, "n" | "input")).then(|| {
            QueryError::location(
                5_787_901,
                format!("Unknown argument for 'n' operator: {field}"),
            )
        })
    })?;
    for (field, code) in [("n", 5_787_906), ("input", 5_787_907)] {
        if !args.iter().any(|(k, _)| k == field) {
            return Err(QueryError::location(
                code,
                format!("Missing value for '{field}'"),
            ));
        }
    }
    Ok(Expr::Named(key.to_owned(), args))
}

/// MongoDB's checks on `n`: a number, integral, and positive.
fn n_value(n: &Value) -> Result<u64> {
    let Some(number) = n.as_ref().and_then(Number::of) else {
        return Err(QueryError::location(
            5_787_902,
            format!(
                "Value for 'n' must be of integral type, but found {}",
                shown(n)
            ),
        ));
    };
    let whole = number.whole_i64();
    let Some(whole) = whole else {
        return Err(QueryError::location(
            5_787_903,
            format!(
                "Value for 'n' must be of integral type, but found {}",
                shown(n)
            ),
        ));
    };
    u64::try_from(whole).ok().filter(|n| *n > 0).ok_or_else(|| {
        QueryError::location(
            5_787_908,
            format!("'n' must be greater than 0, found {whole}"),
        )
    })
}

/// MongoDB's order of two values already in raw form.
fn compare_raw(a: &RawBson, b: &RawBson) -> Ordering {
    bson_canonical::compare_values(a.as_raw_bson_ref(), b.as_raw_bson_ref())
}

/// An element in a `$minN`/`$maxN` set: ordered by value, then arrival.
struct Ranked {
    value: Bson,
    raw: RawBson,
    arrival: usize,
}

impl PartialEq for Ranked {
    fn eq(&self, other: &Self) -> bool {
        self.cmp(other).is_eq()
    }
}

impl Eq for Ranked {}

impl PartialOrd for Ranked {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

impl Ord for Ranked {
    fn cmp(&self, other: &Self) -> Ordering {
        compare_raw(&self.raw, &other.raw).then(self.arrival.cmp(&other.arrival))
    }
}

/// The result of `name` (`$firstN`, `$lastN`, `$minN`, `$maxN`) over `items`.
fn take_n(name: &str, n: u64, items: Vec<Bson>) -> Vec<Bson> {
    let n = usize::try_from(n).unwrap_or(usize::MAX);
    match name {
        "$firstN" => items.into_iter().take(n).collect(),
        "$lastN" => {
            let skip = items.len().saturating_sub(n);
            items.into_iter().skip(skip).collect()
        }
        _ => {
            // MongoDB keeps a multiset ordered by value (ties by arrival): $minN
            // evicts its greatest element for a strictly smaller one, $maxN its
            // least for a strictly greater one. Null and undefined are skipped.
            let max = name == "$maxN";
            let mut set = BTreeSet::<Ranked>::new();
            for (arrival, value) in items.into_iter().enumerate() {
                if nullish(&Some(value.clone())) {
                    continue;
                }
                let raw = to_raw(&value);
                let candidate = Ranked {
                    value,
                    raw,
                    arrival,
                };
                if set.len() == n {
                    let victim = if max { set.first() } else { set.last() };
                    let Some(victim) = victim else { continue };
                    let order = compare_raw(&victim.raw, &candidate.raw);
                    let replace = if max { order.is_lt() } else { order.is_gt() };
                    if !replace {
                        continue;
                    }
                    if max {
                        set.pop_first();
                    } else {
                        set.pop_last();
                    }
                }
                set.insert(candidate);
            }
            let sorted = set.into_iter().map(|r| r.value);
            if max {
                sorted.rev().collect()
            } else {
                sorted.collect()
            }
        }
    }
}
