//! Routing for the operators kept in `array`, `array_named`, `math`, `regex_ops` and `text`:
//! positional operators have their argument count checked when parsed (as MongoDB
//! does), named-argument operators are parsed by their module.

use super::value::Number;
use super::{Expr, ParseCtx, Scope, Value, parse_expr};
use crate::error::QueryError;
use bson::{Bson, RawBsonRef};

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

/// Evaluates the operators whose arguments MongoDB evaluates one by one, stopping
/// early, so a later argument that would fail is never evaluated: `$indexOfArray`,
/// `$indexOfBytes` and `$indexOfCP` answer null for a null first argument (and
/// `$indexOfArray` evaluates its bounds before the value it looks for), `$atan2`
/// checks its first argument before evaluating the second, and the bitwise folds
/// stop at the first null or non-integer. `None` for every other operator.
pub(super) fn call_in_order(
    name: &str,
    args: &[Expr],
    scope: &mut Scope<'_>,
) -> Option<Result<Value>> {
    let run = |scope: &mut Scope<'_>| -> Result<Value> {
        match name {
            "$bitAnd" | "$bitOr" | "$bitXor" => {
                let mut values = Vec::with_capacity(args.len());
                for arg in args {
                    let value = arg.eval(scope)?;
                    let last = !matches!(value, Some(Bson::Int32(_) | Bson::Int64(_)));
                    values.push(value);
                    if last {
                        break;
                    }
                }
                super::math::call(name, values)
            }
            _ => {
                let Some((first, rest)) = args.split_first() else {
                    return Err(arity_error(name, 0));
                };
                let first = first.eval(scope)?;
                if super::ops::nullish(&first) {
                    return Ok(Some(Bson::Null));
                }
                if name == "$atan2" && first.as_ref().and_then(Number::of).is_none() {
                    return super::math::call(name, vec![first, None]);
                }
                let mut values = vec![first];
                if name == "$indexOfArray" {
                    // The bounds, each checked as it is evaluated, then the value
                    // looked for.
                    let bounds = rest.get(1..).unwrap_or_default();
                    let mut evaluated = Vec::with_capacity(bounds.len());
                    for (bound, what) in bounds.iter().zip(["starting index", "ending index"]) {
                        let value = bound.eval(scope)?;
                        super::array::index_bound(name, what, &value)?;
                        evaluated.push(value);
                    }
                    values.push(match rest.first() {
                        Some(needle) => needle.eval(scope)?,
                        None => None,
                    });
                    values.extend(evaluated);
                } else {
                    for arg in rest {
                        values.push(arg.eval(scope)?);
                    }
                }
                call(name, values).unwrap_or_else(|| Err(arity_error(name, args.len())))
            }
        }
    };
    matches!(
        name,
        "$indexOfArray"
            | "$indexOfBytes"
            | "$indexOfCP"
            | "$atan2"
            | "$bitAnd"
            | "$bitOr"
            | "$bitXor"
    )
    .then(|| run(scope))
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
