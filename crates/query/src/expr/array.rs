//! Array and object operators with positional arguments: `$arrayToObject`, `$objectToArray`,
//! `$mergeObjects`, `$indexOfArray`, `$range` and `$reverseArray`.
//!
//! Semantics and error codes follow MongoDB's `src/mongo/db/pipeline/expression.cpp`
//! (and `accumulator_merge_objects.cpp` for `$mergeObjects`).

use super::Value;
use super::ops::nullish;
use super::value::{Number, compare_bson, type_name};
use crate::error::QueryError;
use crate::limits::{RANGE_BYTES_MAX, RANGE_ELEMENT_BYTES, RANGE_OVERHEAD_BYTES};
use bson::{Bson, Document};

type Result<T> = std::result::Result<T, QueryError>;

/// The operators of this module with their least and greatest argument counts.
pub(super) const OPERATORS: &[(&str, usize, usize)] = &[
    ("$arrayToObject", 1, 1),
    ("$objectToArray", 1, 1),
    ("$mergeObjects", 0, usize::MAX),
    ("$indexOfArray", 2, 4),
    ("$range", 2, 3),
    ("$reverseArray", 1, 1),
];

/// Evaluates one of [`OPERATORS`] on its evaluated arguments (arity checked at parse time).
pub(super) fn call(name: &str, values: Vec<Value>) -> Result<Value> {
    match (name, values.as_slice()) {
        ("$arrayToObject", [v]) => array_to_object(v),
        ("$objectToArray", [v]) => object_to_array(v),
        ("$mergeObjects", _) => merge_objects(&values),
        ("$indexOfArray", [array, needle, bounds @ ..]) => index_of_array(array, needle, bounds),
        ("$range", [start, end, step @ ..]) => range(start, end, step.first()),
        ("$reverseArray", [v]) => reverse_array(v),
        _ => Err(super::dispatch::arity_error(name, values.len())),
    }
}

/// A value as MongoDB shows it in messages.
pub(super) fn shown(v: &Value) -> String {
    super::date::shown(v)
}

/// The value of `v` when it is a number that an int32 holds exactly (MongoDB's
/// `Value::integral`).
pub(super) fn int32_of(v: &Value) -> Option<i32> {
    let whole = Number::of(v.as_ref()?)?.whole_i64()?;
    i32::try_from(whole).ok()
}

fn array_to_object(input: &Value) -> Result<Value> {
    if nullish(input) {
        return Ok(Some(Bson::Null));
    }
    let Some(Bson::Array(items)) = input else {
        return Err(QueryError::location(
            40386,
            format!(
                "$arrayToObject requires an array input, found: {}",
                type_name(input)
            ),
        ));
    };
    let mut out = Document::new();
    // The first element decides the format: [key, value] pairs or {k, v} documents.
    let pairs = match items.first() {
        None => return Ok(Some(Bson::Document(out))),
        Some(Bson::Array(_)) => true,
        Some(Bson::Document(_)) => false,
        Some(other) => {
            return Err(QueryError::location(
                40398,
                format!(
                    "Unrecognised input type format for $arrayToObject: {}",
                    type_name(&Some(other.clone()))
                ),
            ));
        }
    };
    for item in items {
        let (key, value) = if pairs {
            pair_entry(item)?
        } else {
            kv_entry(item)?
        };
        // A repeated key keeps its first position and takes the last value.
        out.insert(key, value);
    }
    Ok(Some(Bson::Document(out)))
}

/// One `[key, value]` element of `$arrayToObject`'s input.
fn pair_entry(item: &Bson) -> Result<(String, Bson)> {
    let Bson::Array(pair) = item else {
        return Err(QueryError::location(
            40396,
            format!(
                "$arrayToObject requires a consistent input format. Elements must all be arrays \
                 or all be objects. Array was detected, now found: {}",
                type_name(&Some(item.clone()))
            ),
        ));
    };
    let [key, value] = pair.as_slice() else {
        return Err(QueryError::location(
            40397,
            format!(
                "$arrayToObject requires an array of size 2 arrays,found array of size: {}",
                pair.len()
            ),
        ));
    };
    let Bson::String(key) = key else {
        return Err(QueryError::location(
            40395,
            format!(
                "$arrayToObject requires an array of key-value pairs, where the key must be of \
                 type string. Found key type: {}",
                type_name(&Some(key.clone()))
            ),
        ));
    };
    if key.contains('\0') {
        return Err(QueryError::location(
            4_940_400,
            "Key field cannot contain an embedded null byte",
        ));
    }
    Ok((key.clone(), value.clone()))
}

/// One `{k: key, v: value}` element of `$arrayToObject`'s input.
fn kv_entry(item: &Bson) -> Result<(String, Bson)> {
    let Bson::Document(entry) = item else {
        return Err(QueryError::location(
            40391,
            format!(
                "$arrayToObject requires a consistent input format. Elements must all be arrays \
                 or all be objects. Object was detected, now found: {}",
                type_name(&Some(item.clone()))
            ),
        ));
    };
    if entry.len() != 2 {
        return Err(QueryError::location(
            40392,
            format!(
                "$arrayToObject requires an object keys of 'k' and 'v'. Found incorrect number \
                 of keys:{}",
                entry.len()
            ),
        ));
    }
    let (Some(key), Some(value)) = (entry.get("k"), entry.get("v")) else {
        return Err(QueryError::location(
            40393,
            format!(
                "$arrayToObject requires an object with keys 'k' and 'v'. Missing either or both \
                 keys from: {entry}"
            ),
        ));
    };
    let Bson::String(key) = key else {
        return Err(QueryError::location(
            40394,
            format!(
                "$arrayToObject requires an object with keys 'k' and 'v', where the value of 'k' \
                 must be of type string. Found type: {}",
                type_name(&Some(key.clone()))
            ),
        ));
    };
    if key.contains('\0') {
        return Err(QueryError::location(
            4_940_401,
            "Key field cannot contain an embedded null byte",
        ));
    }
    Ok((key.clone(), value.clone()))
}

fn object_to_array(input: &Value) -> Result<Value> {
    if nullish(input) {
        return Ok(Some(Bson::Null));
    }
    let Some(Bson::Document(doc)) = input else {
        return Err(QueryError::location(
            40390,
            format!(
                "$objectToArray requires a document input, found: {}",
                type_name(input)
            ),
        ));
    };
    let entries = doc
        .iter()
        .map(|(k, v)| {
            let mut entry = Document::new();
            entry.insert("k", Bson::String(k.clone()));
            entry.insert("v", v.clone());
            Bson::Document(entry)
        })
        .collect();
    Ok(Some(Bson::Array(entries)))
}

/// `$mergeObjects`: one array argument merges its elements; null and missing
/// inputs are skipped; later fields overwrite earlier ones in place.
fn merge_objects(values: &[Value]) -> Result<Value> {
    let inputs: Vec<&Value> = values.iter().collect();
    let mut out = Document::new();
    let mut merge = |input: &Value| -> Result<()> {
        if nullish(input) {
            return Ok(());
        }
        let Some(Bson::Document(doc)) = input else {
            return Err(QueryError::location(
                40400,
                format!(
                    "$mergeObjects requires object inputs, but input {} is of type {}",
                    shown(input),
                    type_name(input)
                ),
            ));
        };
        for (k, v) in doc {
            out.insert(k.clone(), v.clone());
        }
        Ok(())
    };
    match inputs.as_slice() {
        [Some(Bson::Array(items))] => {
            for item in items {
                merge(&Some(item.clone()))?;
            }
        }
        _ => {
            for input in inputs {
                merge(input)?;
            }
        }
    }
    Ok(Some(Bson::Document(out)))
}

/// A starting or ending index of `$indexOf*`: an integral, non-negative int32.
pub(super) fn index_bound(operator: &str, what: &str, v: &Value) -> Result<usize> {
    let Some(index) = int32_of(v) else {
        return Err(QueryError::location(
            40096,
            format!(
                "{operator} requires an integral {what}, found a value of type: {}, with value: {}",
                type_name(v),
                shown(v)
            ),
        ));
    };
    usize::try_from(index).map_err(|_| {
        QueryError::location(
            40097,
            format!("{operator} requires a nonnegative {what}, found: {index}"),
        )
    })
}

fn index_of_array(array: &Value, needle: &Value, bounds: &[Value]) -> Result<Value> {
    if nullish(array) {
        return Ok(Some(Bson::Null));
    }
    let Some(Bson::Array(items)) = array else {
        return Err(QueryError::location(
            40090,
            format!(
                "$indexOfArray requires an array as a first argument, found: {}",
                type_name(array)
            ),
        ));
    };
    let start = match bounds.first() {
        Some(v) => index_bound("$indexOfArray", "starting index", v)?,
        None => 0,
    };
    let end = match bounds.get(1) {
        Some(v) => index_bound("$indexOfArray", "ending index", v)?.min(items.len()),
        None => items.len(),
    };
    let found = items
        .iter()
        .enumerate()
        .take(end)
        .skip(start)
        .find(|(_, item)| compare_bson(&Some((*item).clone()), needle).is_eq())
        .and_then(|(i, _)| i32::try_from(i).ok());
    Ok(Some(Bson::Int32(found.unwrap_or(-1))))
}

/// One bound of `$range`: numeric (`type_code`) and an int32 (`range_code`).
fn range_bound(v: &Value, what: &str, type_code: i32, range_code: i32) -> Result<i64> {
    if v.as_ref().and_then(Number::of).is_none() {
        return Err(QueryError::location(
            type_code,
            format!(
                "$range requires a numeric {what} value, found value of type: {}",
                type_name(v)
            ),
        ));
    }
    int32_of(v).map(i64::from).ok_or_else(|| {
        QueryError::location(
            range_code,
            format!(
                "$range requires a {what} value that can be represented as a 32-bit integer, \
                 found value: {}",
                shown(v)
            ),
        )
    })
}

fn range(start: &Value, end: &Value, step: Option<&Value>) -> Result<Value> {
    let start = range_bound(start, "starting", 34443, 34444)?;
    let end = range_bound(end, "ending", 34445, 34446)?;
    let step = match step {
        Some(v) => {
            let step = range_bound(v, "step", 34447, 34448)?;
            if step == 0 {
                return Err(QueryError::location(
                    34449,
                    "$range requires a non-zero step value",
                ));
            }
            step
        }
        None => 1,
    };
    // MongoDB's estimate (one more element than a range ending exactly on `end`
    // holds), checked before anything is built.
    let steps = (end - start) / step;
    let length = if steps >= 0 { steps + 1 } else { 0 };
    let bytes = RANGE_OVERHEAD_BYTES + length * RANGE_ELEMENT_BYTES;
    if bytes >= RANGE_BYTES_MAX {
        return Err(QueryError::ExceededMemoryLimit(format!(
            "$range would use too much memory ({bytes} bytes) and cannot spill to disk. Memory \
             limit: {RANGE_BYTES_MAX} bytes"
        )));
    }
    let mut out = Vec::with_capacity(usize::try_from(length).unwrap_or(0));
    let mut current = start;
    while if step > 0 {
        current < end
    } else {
        current > end
    } {
        // `current` lies between two int32 values here.
        out.push(Bson::Int32(i32::try_from(current).unwrap_or_default()));
        current += step;
    }
    Ok(Some(Bson::Array(out)))
}

fn reverse_array(input: &Value) -> Result<Value> {
    if nullish(input) {
        return Ok(Some(Bson::Null));
    }
    let Some(Bson::Array(items)) = input else {
        return Err(QueryError::location(
            34435,
            format!(
                "The argument to $reverseArray must be an array, but was of type: {}",
                type_name(input)
            ),
        ));
    };
    Ok(Some(Bson::Array(items.iter().rev().cloned().collect())))
}
