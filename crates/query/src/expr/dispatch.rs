//! Routing for the operators kept in `array`, `array_named`, `math`, `regex_ops` and `text`:
//! positional operators have their argument count checked when parsed (as MongoDB
//! does), named-argument operators are parsed by their module.

use super::{Expr, ParseCtx, Scope, Value, parse_expr};
use crate::error::QueryError;
use bson::RawBsonRef;

type Result<T> = std::result::Result<T, QueryError>;

/// The least and greatest argument counts of a positional operator of these modules.
fn arity_of(name: &str) -> Option<(usize, usize)> {
    [
        super::array::OPERATORS,
        super::math::OPERATORS,
        super::text::OPERATORS,
    ]
    .iter()
    .flat_map(|list| list.iter())
    .find(|(n, _, _)| *n == name)
    .map(|(_, least, most)| (*least, *most))
}

/// Whether `name` is a positional operator of these modules.
pub(super) fn is_positional(name: &str) -> bool {
    arity_of(name).is_some()
}

/// MongoDB's error for `got` arguments to `name`: 16020 for a fixed count,
/// 28667 for a range.
pub(super) fn arity_error(name: &str, got: usize) -> QueryError {
    match arity_of(name) {
        Some((least, most)) if least != most => QueryError::location(
            28667,
            format!(
                "Expression {name} takes at least {least} arguments, and at most {most}, but \
                 {got} were passed in."
            ),
        ),
        Some((least, _)) => super::ops::arity(name, least, got),
        None => QueryError::InvalidPipelineOperator(name.to_owned()),
    }
}

/// Parses a positional operator: an array is its argument list, anything else its
/// one argument.
pub(super) fn parse_positional(key: &str, arg: RawBsonRef<'_>, ctx: ParseCtx<'_>) -> Result<Expr> {
    let args = match arg {
        RawBsonRef::Array(items) => bson_canonical::compare::array_values(items)
            .map(|item| parse_expr(item, ctx.nested()))
            .collect::<Result<Vec<_>>>()?,
        other => vec![parse_expr(other, ctx.nested())?],
    };
    if let Some((least, most)) = arity_of(key)
        && !(least..=most).contains(&args.len())
    {
        return Err(arity_error(key, args.len()));
    }
    Ok(Expr::Call(key.to_owned(), args))
}

/// Evaluates a positional operator of these modules; `None` when `name` is not one.
pub(super) fn call(name: &str, values: Vec<Value>) -> Option<Result<Value>> {
    let has = |list: &[(&str, usize, usize)]| list.iter().any(|(n, _, _)| *n == name);
    Some(if has(super::array::OPERATORS) {
        super::array::call(name, values)
    } else if has(super::math::OPERATORS) {
        super::math::call(name, values)
    } else if has(super::text::OPERATORS) {
        super::text::call(name, values)
    } else {
        return None;
    })
}

/// Whether `name` is a named-argument operator of these modules.
pub(super) fn is_named(name: &str) -> bool {
    super::array_named::OPERATORS.contains(&name)
        || super::regex_ops::OPERATORS.contains(&name)
        || super::text::NAMED.contains(&name)
}

/// Parses a named-argument operator of these modules.
pub(super) fn parse_named(key: &str, arg: RawBsonRef<'_>, ctx: ParseCtx<'_>) -> Result<Expr> {
    if super::regex_ops::OPERATORS.contains(&key) {
        super::regex_ops::parse(key, arg, ctx)
    } else if super::text::NAMED.contains(&key) {
        super::text::parse(key, arg, ctx)
    } else {
        super::array_named::parse(key, arg, ctx)
    }
}

/// Evaluates a named-argument operator of these modules.
pub(super) fn named(name: &str, args: &[(String, Expr)], scope: &mut Scope<'_>) -> Result<Value> {
    if super::text::NAMED.contains(&name) {
        super::text::named(name, args, scope)
    } else {
        super::array_named::named(name, args, scope)
    }
}
