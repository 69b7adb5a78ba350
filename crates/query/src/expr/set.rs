//! The set expression operators: arrays treated as sets.
//!
//! Duplicates are removed and only the top level is looked at (an array inside
//! an array is one element) (manual, "Set Expression Operators"). MongoDB
//! leaves the order of `$setUnion`, `$setIntersection` and `$setDifference`
//! unspecified; ours is MongoDB's value order, so results are deterministic.
//! Equality is MongoDB's value equality (`1` equals `1.0`).

use super::Value;
use super::ops::{arity, nullish};
use super::value::{compare_bson, truthy, type_name};
use crate::error::QueryError;
use bson::Bson;

type Result<T> = std::result::Result<T, QueryError>;

/// The operators of this module.
pub(super) const OPERATORS: &[&str] = &[
    "$setUnion",
    "$setIntersection",
    "$setDifference",
    "$setEquals",
    "$setIsSubset",
    "$anyElementTrue",
    "$allElementsTrue",
];

/// The distinct elements of an array, in MongoDB's value order.
fn distinct(items: &[Bson]) -> Vec<Bson> {
    let mut out: Vec<Bson> = items.to_vec();
    out.sort_by(|a, b| compare_bson(&Some(a.clone()), &Some(b.clone())));
    out.dedup_by(|a, b| compare_bson(&Some(a.clone()), &Some(b.clone())).is_eq());
    out
}

fn contains(set: &[Bson], item: &Bson) -> bool {
    let item = Some(item.clone());
    set.binary_search_by(|probe| compare_bson(&Some(probe.clone()), &item))
        .is_ok()
}

/// The array in `value`, or the error `code` with `message` followed by its type.
fn array_or<'v>(value: &'v Value, code: i32, message: &str) -> Result<&'v [Bson]> {
    match value {
        Some(Bson::Array(items)) => Ok(items),
        _ => Err(QueryError::location(
            code,
            format!("{message}{}", type_name(value)),
        )),
    }
}

/// Evaluates one of [`OPERATORS`] on its evaluated arguments.
pub(super) fn call(name: &str, values: Vec<Value>) -> Result<Value> {
    match name {
        "$setUnion" => {
            let mut all = Vec::new();
            for v in &values {
                if nullish(v) {
                    return Ok(Some(Bson::Null));
                }
                let items = array_or(
                    v,
                    17043,
                    "All operands of $setUnion must be arrays. One argument is of type: ",
                )?;
                all.extend(items.iter().cloned());
            }
            Ok(Some(Bson::Array(distinct(&all))))
        }
        "$setIntersection" => {
            let mut result: Option<Vec<Bson>> = None;
            for v in &values {
                if nullish(v) {
                    return Ok(Some(Bson::Null));
                }
                let items = distinct(array_or(
                    v,
                    17047,
                    "All operands of $setIntersection must be arrays. One argument is of type: ",
                )?);
                result = Some(match result {
                    None => items,
                    Some(so_far) => so_far.into_iter().filter(|x| contains(&items, x)).collect(),
                });
            }
            Ok(Some(Bson::Array(result.unwrap_or_default())))
        }
        "$setDifference" => {
            let [left, right]: [Value; 2] = values
                .try_into()
                .map_err(|v: Vec<Value>| arity(name, 2, v.len()))?;
            if nullish(&left) || nullish(&right) {
                return Ok(Some(Bson::Null));
            }
            let left = array_or(
                &left,
                17048,
                "both operands of $setDifference must be arrays. First argument is of type: ",
            )?;
            let right = distinct(array_or(
                &right,
                17049,
                "both operands of $setDifference must be arrays. Second argument is of type: ",
            )?);
            Ok(Some(Bson::Array(
                distinct(left)
                    .into_iter()
                    .filter(|x| !contains(&right, x))
                    .collect(),
            )))
        }
        "$setEquals" => {
            if values.len() < 2 {
                return Err(QueryError::location(
                    17045,
                    format!(
                        "$setEquals needs at least two arguments had: {}",
                        values.len()
                    ),
                ));
            }
            let mut first: Option<Vec<Bson>> = None;
            let mut equal = true;
            for v in &values {
                // Null and missing are errors here, not null (unlike $setUnion).
                let items = distinct(array_or(
                    v,
                    17044,
                    "All operands of $setEquals must be arrays. One argument is of type: ",
                )?);
                match &first {
                    None => first = Some(items),
                    Some(f) => {
                        equal = equal
                            && f.len() == items.len()
                            && f.iter().zip(&items).all(|(a, b)| {
                                compare_bson(&Some(a.clone()), &Some(b.clone())).is_eq()
                            });
                    }
                }
            }
            Ok(Some(Bson::Boolean(equal)))
        }
        "$setIsSubset" => {
            let [left, right]: [Value; 2] = values
                .try_into()
                .map_err(|v: Vec<Value>| arity(name, 2, v.len()))?;
            let left = array_or(
                &left,
                17046,
                "both operands of $setIsSubset must be arrays. First argument is of type: ",
            )?;
            let right = distinct(array_or(
                &right,
                17042,
                "both operands of $setIsSubset must be arrays. Second argument is of type: ",
            )?);
            Ok(Some(Bson::Boolean(
                left.iter().all(|x| contains(&right, x)),
            )))
        }
        _ => {
            let any = name == "$anyElementTrue";
            let [value]: [Value; 1] = values
                .try_into()
                .map_err(|v: Vec<Value>| arity(name, 1, v.len()))?;
            let (code, message) = if any {
                (
                    17041,
                    "$anyElementTrue's argument must be an array, but is ",
                )
            } else {
                (
                    17040,
                    "$allElementsTrue's argument must be an array, but is ",
                )
            };
            let items = array_or(&value, code, message)?;
            let mut truths = items.iter().map(|x| truthy(&Some(x.clone())));
            Ok(Some(Bson::Boolean(if any {
                truths.any(|t| t)
            } else {
                truths.all(|t| t)
            })))
        }
    }
}
