//! `$regexMatch`, `$regexFind` and `$regexFindAll`, on the workspace's PCRE-compatible
//! `regex` crate.
//!
//! Semantics and error codes follow MongoDB's `ExpressionRegex` in
//! `src/mongo/db/pipeline/expression.cpp` and `pcre_util::flagsToOptions`: options
//! `i m s x u`, a BSON regex's own flags (refused together with `options`, 51107), a
//! constant pattern compiled once when parsed (so an invalid constant pattern fails
//! the parse), `idx` counted in code points, and `$regexFindAll` moving one code
//! point past an empty match.

use super::ops::nullish;
use super::{Expr, ParseCtx, Scope, Value, parse_expr};
use crate::error::QueryError;
use crate::limits::REGEX_FIND_ALL_BYTES_MAX;
use bson::{Bson, Document, RawBsonRef};
use bson_canonical::compare::elements;
use std::sync::Arc;

type Result<T> = std::result::Result<T, QueryError>;

/// The operators of this module.
pub(super) const OPERATORS: &[&str] = &["$regexMatch", "$regexFind", "$regexFindAll"];

/// A parsed regex operator.
#[derive(Debug, Clone)]
pub(crate) struct RegexExpr {
    operator: &'static str,
    input: Expr,
    regex: Expr,
    options: Option<Expr>,
    /// For a constant `regex` and `options`: the compiled pattern, or `None` when
    /// the pattern is null.
    constant: Option<Option<Arc<regex::Regex>>>,
}

impl RegexExpr {
    /// The argument expressions.
    pub(super) fn children(&self) -> impl Iterator<Item = &Expr> {
        [&self.input, &self.regex].into_iter().chain(&self.options)
    }
}

fn operator_name(key: &str) -> &'static str {
    OPERATORS
        .iter()
        .find(|name| **name == key)
        .copied()
        .unwrap_or("$regexMatch")
}

/// Parses `{input, regex, options}`.
pub(super) fn parse(key: &str, arg: RawBsonRef<'_>, ctx: ParseCtx<'_>) -> Result<Expr> {
    let operator = operator_name(key);
    let RawBsonRef::Document(doc) = arg else {
        return Err(QueryError::location(
            51103,
            format!(
                "{operator} expects an object of named arguments but found: {}",
                crate::filter::types::type_name(crate::filter::types::type_code(&arg))
            ),
        ));
    };
    let (mut input, mut regex, mut options) = (None, None, None);
    for (field, value) in elements(doc) {
        let slot = match field {
            "input" => &mut input,
            "regex" => &mut regex,
            "options" => &mut options,
            _ => {
                return Err(QueryError::location(
                    31024,
                    format!("{operator} found an unknown argument: {field}"),
                ));
            }
        };
        *slot = Some(parse_expr(value, ctx.nested())?);
    }
    let input = input.ok_or_else(|| {
        QueryError::location(31022, format!("{operator} requires 'input' parameter"))
    })?;
    let regex = regex.ok_or_else(|| {
        QueryError::location(31023, format!("{operator} requires 'regex' parameter"))
    })?;
    let constant = match (&regex, &options) {
        (Expr::Literal(pattern), None) => Some(compile(operator, &Some(pattern.clone()), &None)?),
        (Expr::Literal(pattern), Some(Expr::Literal(flags))) => Some(compile(
            operator,
            &Some(pattern.clone()),
            &Some(flags.clone()),
        )?),
        _ => None,
    };
    Ok(Expr::Regex(Box::new(RegexExpr {
        operator,
        input,
        regex,
        options,
        constant,
    })))
}

/// The pattern and options of `regex` and `options`, compiled; `None` when the
/// pattern is null or missing (after the options have been checked).
fn compile(operator: &str, regex: &Value, options: &Value) -> Result<Option<Arc<regex::Regex>>> {
    let mut flags = match options {
        _ if nullish(options) => None,
        Some(Bson::String(text)) => Some(text.clone()),
        _ => {
            return Err(QueryError::location(
                51106,
                format!("{operator} needs 'options' to be of type string"),
            ));
        }
    };
    let pattern = match regex {
        _ if nullish(regex) => None,
        Some(Bson::String(text)) => Some(text.clone()),
        Some(Bson::RegularExpression(re)) => {
            if !re.options.is_empty() {
                if flags.is_some() {
                    return Err(QueryError::location(
                        51107,
                        format!(
                            "{operator}: found regex option(s) specified in both 'regex' and \
                             'option' fields"
                        ),
                    ));
                }
                flags = Some(re.options.as_str().to_owned());
            }
            Some(re.pattern.as_str().to_owned())
        }
        _ => {
            return Err(QueryError::location(
                51105,
                format!("{operator} needs 'regex' to be of type string or regex"),
            ));
        }
    };
    if pattern.as_ref().is_some_and(|p| p.contains('\0')) {
        return Err(QueryError::location(
            51109,
            format!("{operator}: regular expression cannot contain an embedded null byte"),
        ));
    }
    let flags = flags.unwrap_or_default();
    if flags.contains('\0') {
        return Err(QueryError::location(
            51110,
            format!("{operator}: regular expression options cannot contain an embedded null byte"),
        ));
    }
    let Some(pattern) = pattern else {
        return Ok(None);
    };
    if let Some(bad) = flags.chars().find(|c| !"imsxu".contains(*c)) {
        return Err(QueryError::location(
            51108,
            format!("{operator} invalid flag in regex options: {bad}"),
        ));
    }
    let compiled = regex::Regex::new(&pattern, &flags)
        .map_err(|e| QueryError::location(51111, format!("Invalid Regex in {operator}: {e}")))?;
    Ok(Some(Arc::new(compiled)))
}

/// Evaluates a regex operator.
pub(super) fn eval(expr: &RegexExpr, scope: &mut Scope<'_>) -> Result<Value> {
    let operator = expr.operator;
    let input = expr.input.eval(scope)?;
    let regex = match &expr.constant {
        Some(compiled) => compiled.clone(),
        None => {
            let pattern = expr.regex.eval(scope)?;
            let options = match &expr.options {
                Some(e) => e.eval(scope)?,
                None => None,
            };
            if !nullish(&input) && !matches!(input, Some(Bson::String(_))) {
                return Err(input_error(operator));
            }
            compile(operator, &pattern, &options)?
        }
    };
    let subject = match &input {
        Some(Bson::String(text)) => Some(text.as_str()),
        _ if nullish(&input) => None,
        _ => return Err(input_error(operator)),
    };
    let (Some(subject), Some(regex)) = (subject, regex) else {
        return Ok(Some(match operator {
            "$regexMatch" => Bson::Boolean(false),
            "$regexFind" => Bson::Null,
            _ => Bson::Array(Vec::new()),
        }));
    };
    let failed = |e: regex::RegexError| {
        QueryError::location(
            51156,
            format!(
                "Error occurred while executing the regular expression in {operator}. Result \
                 code: {e}"
            ),
        )
    };
    match operator {
        "$regexMatch" => Ok(Some(Bson::Boolean(
            regex.is_match(subject).map_err(failed)?,
        ))),
        "$regexFind" => {
            let found = regex.captures_at(subject, 0).map_err(failed)?;
            Ok(Some(found.map_or(Bson::Null, |caps| {
                let start = caps.get(0).map_or(0, |m| m.range().start);
                let idx = subject.get(..start).map_or(0, |s| s.chars().count());
                Bson::Document(match_document(subject, &caps, idx).0)
            })))
        }
        _ => find_all(operator, subject, &regex).map_err(|e| match e {
            FindAllError::Regex(e) => failed(e),
            FindAllError::Query(e) => e,
        }),
    }
}

fn input_error(operator: &str) -> QueryError {
    QueryError::location(
        51104,
        format!("{operator} needs 'input' to be of type string"),
    )
}

/// `{match, idx, captures}` for one match starting at code point `idx`, with its
/// approximate size in bytes.
fn match_document(subject: &str, caps: &regex::Captures, idx: usize) -> (Document, usize) {
    let text = |m: Option<regex::Match>| m.and_then(|m| subject.get(m.range()));
    let whole = text(caps.get(0)).unwrap_or_default();
    let mut size = 64 + whole.len();
    let captures: Vec<Bson> = (1..caps.len())
        .map(|g| match text(caps.get(g)) {
            Some(s) => {
                size += 16 + s.len();
                Bson::String(s.to_owned())
            }
            None => {
                size += 16;
                Bson::Null
            }
        })
        .collect();
    let mut doc = Document::new();
    doc.insert("match", whole);
    doc.insert("idx", Bson::Int32(i32::try_from(idx).unwrap_or(i32::MAX)));
    doc.insert("captures", captures);
    (doc, size)
}

enum FindAllError {
    Regex(regex::RegexError),
    Query(QueryError),
}

/// Every non-overlapping match, left to right; after an empty match the search
/// moves on one code point, and it stops once it reaches the end of the input.
fn find_all(
    operator: &str,
    subject: &str,
    regex: &regex::Regex,
) -> std::result::Result<Value, FindAllError> {
    let mut out = Vec::new();
    let mut total = 0usize;
    let mut at = 0usize;
    let mut idx = 0usize;
    while let Some(caps) = regex
        .captures_at(subject, at)
        .map_err(FindAllError::Regex)?
    {
        let Some(found) = caps.get(0).map(|m| m.range()) else {
            break;
        };
        idx += subject
            .get(at..found.start)
            .map_or(0, |s| s.chars().count());
        at = found.start;
        let (doc, size) = match_document(subject, &caps, idx);
        total += size;
        if total > REGEX_FIND_ALL_BYTES_MAX {
            return Err(FindAllError::Query(QueryError::location(
                51151,
                format!("{operator}: the size of buffer to store output exceeded the 64MB limit"),
            )));
        }
        out.push(Bson::Document(doc));
        if found.is_empty() {
            at += subject
                .get(at..)
                .and_then(|s| s.chars().next())
                .map_or(1, char::len_utf8);
            idx += 1;
        } else {
            idx += subject.get(found.clone()).map_or(0, |s| s.chars().count());
            at = found.end;
        }
        if at >= subject.len() {
            break;
        }
    }
    Ok(Some(Bson::Array(out)))
}
