//! String, array and type-conversion expression operators.

use super::Value;
use super::ops::{arity, nullish, text_of};
use super::value::{Number, compare_bson, type_name};
use crate::error::QueryError;
use bson::Bson;

type Result<T> = std::result::Result<T, QueryError>;

fn exactly<const N: usize>(name: &str, values: Vec<Value>) -> Result<[Value; N]> {
    let got = values.len();
    values.try_into().map_err(|_| arity(name, N, got))
}

fn integer_arg(v: &Value) -> Option<i64> {
    Number::of(v.as_ref()?)?.whole_i64()
}

pub(super) fn call(name: &str, values: Vec<Value>) -> Result<Value> {
    match name {
        "$concat" => concat(values),
        "$substr" | "$substrBytes" => substr(exactly::<3>(name, values)?),
        "$toLower" | "$toUpper" => {
            let [v] = exactly::<1>(name, values)?;
            let text = match &v {
                _ if nullish(&v) => String::new(),
                Some(b) => text_of(b).ok_or_else(|| {
                    QueryError::location(
                        16007,
                        format!("can't convert from BSON type {} to String", type_name(&v)),
                    )
                })?,
                None => String::new(),
            };
            Ok(Some(Bson::String(if name == "$toLower" {
                text.to_ascii_lowercase()
            } else {
                text.to_ascii_uppercase()
            })))
        }
        "$strLenBytes" | "$strLenCP" => {
            let [v] = exactly::<1>(name, values)?;
            match &v {
                Some(Bson::String(s)) => {
                    let n = if name == "$strLenBytes" {
                        s.len()
                    } else {
                        s.chars().count()
                    };
                    Ok(Some(Bson::Int32(i32::try_from(n).unwrap_or(i32::MAX))))
                }
                _ => Err(QueryError::location(
                    if name == "$strLenBytes" { 34473 } else { 34471 },
                    format!(
                        "{name} requires a string argument, found: {}",
                        type_name(&v)
                    ),
                )),
            }
        }
        "$split" => split(exactly::<2>(name, values)?),
        "$size" => {
            let [v] = exactly::<1>(name, values)?;
            match &v {
                Some(Bson::Array(items)) => Ok(Some(Bson::Int32(
                    i32::try_from(items.len()).unwrap_or(i32::MAX),
                ))),
                _ => Err(QueryError::location(
                    17124,
                    format!(
                        "The argument to $size must be an array. Type of the argument was: {}.",
                        type_name(&v)
                    ),
                )),
            }
        }
        "$arrayElemAt" => array_elem_at(exactly::<2>(name, values)?),
        "$in" => {
            let [needle, haystack] = exactly::<2>(name, values)?;
            match &haystack {
                Some(Bson::Array(items)) => {
                    Ok(Some(Bson::Boolean(items.iter().any(|item| {
                        compare_bson(&Some(item.clone()), &needle).is_eq()
                    }))))
                }
                _ => Err(QueryError::location(
                    40081,
                    format!(
                        "$in requires an array as a second argument, found: {}",
                        type_name(&haystack)
                    ),
                )),
            }
        }
        "$isArray" => {
            let [v] = exactly::<1>(name, values)?;
            Ok(Some(Bson::Boolean(matches!(v, Some(Bson::Array(_))))))
        }
        "$concatArrays" => {
            let mut out = Vec::new();
            for v in &values {
                match v {
                    _ if nullish(v) => return Ok(Some(Bson::Null)),
                    Some(Bson::Array(items)) => out.extend(items.iter().cloned()),
                    _ => {
                        return Err(QueryError::location(
                            28664,
                            format!("$concatArrays only supports arrays, not {}", type_name(v)),
                        ));
                    }
                }
            }
            Ok(Some(Bson::Array(out)))
        }
        "$slice" => slice(values),
        "$type" => {
            let [v] = exactly::<1>(name, values)?;
            Ok(Some(Bson::String(type_name(&v).to_owned())))
        }
        _ if super::convert::SHORTHANDS.iter().any(|(n, _)| *n == name) => {
            let [v] = exactly::<1>(name, values)?;
            super::convert::shorthand(name, v)
        }
        "$isNumber" => {
            let [v] = exactly::<1>(name, values)?;
            Ok(super::convert::is_number(&v))
        }
        _ if super::set::OPERATORS.contains(&name) => super::set::call(name, values),
        _ => super::dispatch::call(name, values)
            .unwrap_or_else(|| Err(QueryError::InvalidPipelineOperator(name.to_owned()))),
    }
}

fn concat(values: Vec<Value>) -> Result<Value> {
    let mut out = String::new();
    for v in &values {
        match v {
            _ if nullish(v) => return Ok(Some(Bson::Null)),
            Some(Bson::String(s)) => out.push_str(s),
            _ => {
                return Err(QueryError::location(
                    16702,
                    format!("$concat only supports strings, not {}", type_name(v)),
                ));
            }
        }
    }
    Ok(Some(Bson::String(out)))
}

fn substr([text, start, length]: [Value; 3]) -> Result<Value> {
    let text = match &text {
        _ if nullish(&text) => String::new(),
        Some(b) => text_of(b).ok_or_else(|| {
            QueryError::location(
                16007,
                format!(
                    "can't convert from BSON type {} to String",
                    type_name(&text)
                ),
            )
        })?,
        None => String::new(),
    };
    let start = integer_arg(&start).ok_or_else(|| {
        QueryError::location(
            16034,
            format!(
                "$substrBytes: starting index must be a numeric type (is BSON type {})",
                type_name(&start)
            ),
        )
    })?;
    let length = integer_arg(&length).ok_or_else(|| {
        QueryError::location(
            16035,
            format!(
                "$substrBytes: length must be a numeric type (is BSON type {})",
                type_name(&length)
            ),
        )
    })?;
    let start = usize::try_from(start).unwrap_or(0).min(text.len());
    let end = match usize::try_from(length) {
        Ok(l) => start.saturating_add(l).min(text.len()),
        Err(_) => text.len(),
    };
    if !text.is_char_boundary(start) {
        return Err(QueryError::location(
            28656,
            "$substrBytes:  Invalid range, starting index is a UTF-8 continuation byte.",
        ));
    }
    if !text.is_char_boundary(end) {
        return Err(QueryError::location(
            28657,
            "$substrBytes:  Invalid range, ending index is in the middle of a UTF-8 character.",
        ));
    }
    Ok(Some(Bson::String(
        text.get(start..end).unwrap_or_default().to_owned(),
    )))
}

fn split([text, delimiter]: [Value; 2]) -> Result<Value> {
    if nullish(&text) || nullish(&delimiter) {
        return Ok(Some(Bson::Null));
    }
    let Some(Bson::String(text)) = &text else {
        return Err(QueryError::location(
            16994,
            format!(
                "$split requires an expression that evaluates to a string as a first argument, found: {}",
                type_name(&text)
            ),
        ));
    };
    let Some(Bson::String(delimiter)) = &delimiter else {
        return Err(QueryError::location(
            16995,
            format!(
                "$split requires an expression that evaluates to a string as a second argument, found: {}",
                type_name(&delimiter)
            ),
        ));
    };
    if delimiter.is_empty() {
        return Err(QueryError::location(
            40087,
            "$split requires a non-empty separator",
        ));
    }
    Ok(Some(Bson::Array(
        text.split(delimiter.as_str())
            .map(|p| Bson::String(p.to_owned()))
            .collect(),
    )))
}

fn array_elem_at([array, index]: [Value; 2]) -> Result<Value> {
    if nullish(&array) || nullish(&index) {
        return Ok(Some(Bson::Null));
    }
    let Some(Bson::Array(items)) = &array else {
        return Err(QueryError::location(
            28689,
            format!(
                "$arrayElemAt's first argument must be an array, but is {}",
                type_name(&array)
            ),
        ));
    };
    if index.as_ref().and_then(Number::of).is_none() {
        return Err(QueryError::location(
            28690,
            format!(
                "$arrayElemAt's second argument must be a numeric value, but is {}",
                type_name(&index)
            ),
        ));
    }
    let Some(i) = integer_arg(&index).filter(|i| i32::try_from(*i).is_ok()) else {
        return Err(QueryError::location(
            28691,
            "$arrayElemAt's second argument must be representable as a 32-bit integer",
        ));
    };
    let len = i64::try_from(items.len()).unwrap_or(i64::MAX);
    let position = if i < 0 { len + i } else { i };
    Ok(usize::try_from(position)
        .ok()
        .and_then(|p| items.get(p))
        .cloned())
}

fn slice(values: Vec<Value>) -> Result<Value> {
    if values.len() != 2 && values.len() != 3 {
        return Err(QueryError::location(
            28667,
            format!(
                "Expression $slice takes at least 2 arguments, and at most 3, but {} were passed in.",
                values.len()
            ),
        ));
    }
    if values.iter().any(nullish) {
        return Ok(Some(Bson::Null));
    }
    let Some(Bson::Array(items)) = &values[0] else {
        return Err(QueryError::location(
            28724,
            format!(
                "First argument to $slice must be an array, but is of type: {}",
                type_name(&values[0])
            ),
        ));
    };
    let numbers: Vec<i64> = values[1..]
        .iter()
        .map(|v| {
            integer_arg(v).ok_or_else(|| {
                QueryError::location(
                    28725,
                    format!(
                        "Second argument to $slice must be a numeric value, but is of type: {}",
                        type_name(v)
                    ),
                )
            })
        })
        .collect::<Result<_>>()?;
    Ok(Some(Bson::Array(slice_items(items, &numbers)?)))
}

/// `$slice` over a list: `[n]` (first n, or last -n) or `[skip, n]`.
pub(crate) fn slice_items(items: &[Bson], numbers: &[i64]) -> Result<Vec<Bson>> {
    let len = i64::try_from(items.len()).unwrap_or(i64::MAX);
    let (start, count) = match numbers {
        [n] if *n >= 0 => (0, *n),
        [n] => ((len + n).max(0), n.saturating_neg()),
        [skip, n] => {
            if *n <= 0 {
                return Err(QueryError::location(
                    28729,
                    format!("Third argument to $slice must be positive: {n}"),
                ));
            }
            let start = if *skip < 0 {
                (len + skip).max(0)
            } else {
                (*skip).min(len)
            };
            (start, *n)
        }
        _ => (0, len),
    };
    let start = usize::try_from(start).unwrap_or(0);
    let count = usize::try_from(count).unwrap_or(0);
    Ok(items.iter().skip(start).take(count).cloned().collect())
}
