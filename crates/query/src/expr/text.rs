//! More string operators: `$replaceOne`, `$replaceAll`, `$strcasecmp`, `$substrCP`,
//! `$indexOfCP` and `$indexOfBytes`.
//!
//! Semantics and error codes follow MongoDB's `src/mongo/db/pipeline/expression.cpp`.

use super::array::{index_bound, int32_of, shown};
use super::date::named_fields;
use super::ops::{nullish, text_of};
use super::value::{Number, type_name};
use super::{Expr, ParseCtx, Scope, Value};
use crate::error::QueryError;
use bson::{Bson, RawBsonRef};
use std::cmp::Ordering;

type Result<T> = std::result::Result<T, QueryError>;

/// The positional operators of this module with their least and greatest argument counts.
pub(super) const OPERATORS: &[(&str, usize, usize)] = &[
    ("$strcasecmp", 2, 2),
    ("$substrCP", 3, 3),
    ("$indexOfCP", 2, 4),
    ("$indexOfBytes", 2, 4),
];

/// The named-argument operators of this module.
pub(super) const NAMED: &[&str] = &["$replaceOne", "$replaceAll"];

/// The longest string `$replaceAll` and `$replaceOne` build: MongoDB's string
/// builder refuses to grow past 64 MiB (13548).
const BUILT_STRING_BYTES_MAX: usize = 64 * 1024 * 1024;

/// Evaluates one of [`OPERATORS`] on its evaluated arguments (arity checked at parse time).
pub(super) fn call(name: &str, values: Vec<Value>) -> Result<Value> {
    match (name, values.as_slice()) {
        ("$strcasecmp", [a, b]) => {
            let (a, b) = (coerce_text(a)?, coerce_text(b)?);
            let order = a.to_ascii_uppercase().cmp(&b.to_ascii_uppercase());
            Ok(Some(Bson::Int32(match order {
                Ordering::Less => -1,
                Ordering::Equal => 0,
                Ordering::Greater => 1,
            })))
        }
        ("$substrCP", [text, start, length]) => substr_cp(text, start, length),
        ("$indexOfBytes" | "$indexOfCP", [text, token, bounds @ ..]) => {
            index_of(name, text, token, bounds)
        }
        _ => Err(super::dispatch::arity_error(name, values.len())),
    }
}

/// MongoDB's string coercion: null and missing are the empty string.
fn coerce_text(v: &Value) -> Result<String> {
    match v {
        _ if nullish(v) => Ok(String::new()),
        Some(b) => text_of(b).ok_or_else(|| {
            QueryError::location(
                16007,
                format!("can't convert from BSON type {} to String", type_name(v)),
            )
        }),
        None => Ok(String::new()),
    }
}

fn substr_cp(text: &Value, start: &Value, length: &Value) -> Result<Value> {
    let text = coerce_text(text)?;
    let numeric = |v: &Value| v.as_ref().and_then(Number::of).is_some();
    if !numeric(start) {
        return Err(QueryError::location(
            34450,
            format!(
                "$substrCP: starting index must be a numeric type (is BSON type {})",
                type_name(start)
            ),
        ));
    }
    let Some(start) = int32_of(start) else {
        return Err(QueryError::location(
            34451,
            format!(
                "$substrCP: starting index cannot be represented as a 32-bit integral value: {}",
                shown(start)
            ),
        ));
    };
    if !numeric(length) {
        return Err(QueryError::location(
            34452,
            format!(
                "$substrCP: length must be a numeric type (is BSON type {})",
                type_name(length)
            ),
        ));
    }
    let Some(length) = int32_of(length) else {
        return Err(QueryError::location(
            34453,
            format!(
                "$substrCP: length cannot be represented as a 32-bit integral value: {}",
                shown(length)
            ),
        ));
    };
    let Ok(length) = usize::try_from(length) else {
        return Err(QueryError::location(
            34454,
            "$substrCP: length must be a nonnegative integer.",
        ));
    };
    let Ok(start) = usize::try_from(start) else {
        return Err(QueryError::location(
            34455,
            "$substrCP: the starting index must be nonnegative integer.",
        ));
    };
    Ok(Some(Bson::String(
        text.chars().skip(start).take(length).collect(),
    )))
}

fn index_of(name: &str, text: &Value, token: &Value, bounds: &[Value]) -> Result<Value> {
    let bytes = name == "$indexOfBytes";
    if nullish(text) {
        return Ok(Some(Bson::Null));
    }
    let (text_code, token_code) = if bytes {
        (40091, 40092)
    } else {
        (40093, 40094)
    };
    let Some(Bson::String(text)) = text else {
        return Err(QueryError::location(
            text_code,
            format!(
                "{name} requires a string as the first argument, found: {}",
                type_name(text)
            ),
        ));
    };
    let Some(Bson::String(token)) = token else {
        return Err(QueryError::location(
            token_code,
            format!(
                "{name} requires a string as the second argument, found: {}",
                type_name(token)
            ),
        ));
    };
    let start = match bounds.first() {
        Some(v) => index_bound(name, "starting index", v)?,
        None => 0,
    };
    let end = match bounds.get(1) {
        Some(v) => Some(index_bound(name, "ending index", v)?),
        None => None,
    };
    let found = if bytes {
        index_of_bytes(text.as_bytes(), token.as_bytes(), start, end)
    } else {
        index_of_code_points(text, token, start, end)
    };
    Ok(Some(Bson::Int32(
        found.and_then(|i| i32::try_from(i).ok()).unwrap_or(-1),
    )))
}

/// `$indexOfBytes`: the first byte offset in `[start, end)` where `token` starts
/// and ends by `end` (an empty token is found at `start` itself, even at the end).
fn index_of_bytes(text: &[u8], token: &[u8], start: usize, end: Option<usize>) -> Option<usize> {
    let end = end.map_or(text.len(), |e| e.min(text.len()));
    if start > text.len() || end < start {
        return None;
    }
    let window = text.get(..end)?;
    (start..=end).find(|at| {
        window
            .get(*at..)
            .is_some_and(|rest| rest.starts_with(token))
    })
}

/// `$indexOfCP`: the first code point position in `[start, end)` where `token`
/// starts (it may run past `end`); the empty string is found in the empty string.
fn index_of_code_points(
    text: &str,
    token: &str,
    start: usize,
    end: Option<usize>,
) -> Option<usize> {
    let length = text.chars().count();
    let end = end.map_or(length, |e| e.min(length));
    if end < start {
        return None;
    }
    if start == 0 && text.is_empty() && token.is_empty() {
        return Some(0);
    }
    text.char_indices()
        .enumerate()
        .take(end)
        .skip(start)
        .find(|(_, (at, _))| text.get(*at..).is_some_and(|rest| rest.starts_with(token)))
        .map(|(position, _)| position)
}

fn raw_type_name(arg: RawBsonRef<'_>) -> &'static str {
    crate::filter::types::type_name(crate::filter::types::type_code(&arg))
}

/// Parses `{input, find, replacement}`.
pub(super) fn parse(key: &str, arg: RawBsonRef<'_>, ctx: ParseCtx<'_>) -> Result<Expr> {
    let RawBsonRef::Document(doc) = arg else {
        return Err(QueryError::location(
            51751,
            format!(
                "{key} requires an object as an argument, found: {}",
                raw_type_name(arg)
            ),
        ));
    };
    let args = named_fields(doc, ctx, |field| {
        (!matches!(field, "input" | "find" | "replacement")).then(|| {
            QueryError::location(51750, format!("{key} found an unknown argument: {field}"))
        })
    })?;
    for (field, code) in [("input", 51749), ("find", 51748), ("replacement", 51747)] {
        if !args.iter().any(|(k, _)| k == field) {
            return Err(QueryError::location(
                code,
                format!("{key} requires '{field}' to be specified"),
            ));
        }
    }
    Ok(Expr::Named(key.to_owned(), args))
}

/// Evaluates `$replaceOne` or `$replaceAll`: every argument must be a string or
/// nullish (checked before any null gives null).
pub(super) fn named(name: &str, args: &[(String, Expr)], scope: &mut Scope<'_>) -> Result<Value> {
    let mut values = Vec::with_capacity(3);
    for field in ["input", "find", "replacement"] {
        values.push(match args.iter().find(|(k, _)| k == field) {
            Some((_, e)) => e.eval(scope)?,
            None => None,
        });
    }
    let mut texts = Vec::with_capacity(3);
    for (v, (field, code)) in
        values
            .iter()
            .zip([("input", 51746), ("find", 51745), ("replacement", 51744)])
    {
        match v {
            Some(Bson::String(s)) => texts.push(Some(s.as_str())),
            _ if nullish(v) => texts.push(None),
            _ => {
                return Err(QueryError::location(
                    code,
                    format!(
                        "{name} requires that '{field}' be a string, found: {}",
                        shown(v)
                    ),
                ));
            }
        }
    }
    let [Some(input), Some(find), Some(replacement)] = texts.as_slice() else {
        return Ok(Some(Bson::Null));
    };
    let count = if name == "$replaceOne" {
        usize::from(input.contains(find))
    } else if find.is_empty() {
        input.chars().count() + 1
    } else {
        input.matches(find).count()
    };
    let size = input.len() - count * find.len() + count.saturating_mul(replacement.len());
    if size > BUILT_STRING_BYTES_MAX {
        return Err(QueryError::location(
            13548,
            format!("BufBuilder attempted to grow() to {size} bytes, past the 64MB limit."),
        ));
    }
    Ok(Some(Bson::String(if name == "$replaceOne" {
        input.replacen(find, replacement, 1)
    } else {
        input.replace(find, replacement)
    })))
}
