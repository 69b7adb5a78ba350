//! The expression operators: parsing their arguments and evaluating them.

use super::value::{Number, compare_bson, to_text, truthy, type_name};
use super::{Expr, ParseCtx, Scope, Value, parse_expr};
use crate::error::QueryError;
use bson::{Bson, RawBsonRef};
use std::cmp::Ordering;

type Result<T> = std::result::Result<T, QueryError>;

const POSITIONAL: &[&str] = &[
    "$add",
    "$subtract",
    "$multiply",
    "$divide",
    "$mod",
    "$abs",
    "$ceil",
    "$floor",
    "$round",
    "$trunc",
    "$eq",
    "$ne",
    "$gt",
    "$gte",
    "$lt",
    "$lte",
    "$cmp",
    "$and",
    "$or",
    "$not",
    "$ifNull",
    "$concat",
    "$substr",
    "$substrBytes",
    "$toLower",
    "$toUpper",
    "$strLenBytes",
    "$strLenCP",
    "$split",
    "$size",
    "$arrayElemAt",
    "$in",
    "$isArray",
    "$slice",
    "$type",
    "$toString",
    "$toInt",
    "$toDouble",
    "$toLong",
    "$toBool",
    "$toDecimal",
    "$toObjectId",
    "$toDate",
    "$isNumber",
    "$concatArrays",
    "$sqrt",
    "$max",
    "$min",
    "$sum",
    "$avg",
    "$first",
    "$last",
];

/// Expression operators MongoDB has that this crate does not: refused with NotImplemented
/// (238) rather than reported unknown (168), so a user can tell a gap from a typo.
const NOT_IMPLEMENTED: &[&str] = &[
    "$accumulator",
    "$function",
    "$median",
    "$meta",
    "$percentile",
    "$sampleRate",
    "$toHashedIndexKey",
    "$toUUID",
];

const NAMED: &[(&str, &[&str])] = &[
    ("$filter", &["input", "as", "cond", "limit"]),
    ("$map", &["input", "as", "in"]),
    ("$trim", &["input", "chars"]),
    ("$ltrim", &["input", "chars"]),
    ("$rtrim", &["input", "chars"]),
];

pub(super) fn parse_operator(key: &str, arg: RawBsonRef<'_>, ctx: ParseCtx<'_>) -> Result<Expr> {
    match key {
        "$literal" | "$const" => Ok(Expr::Literal(
            Bson::try_from(arg).map_err(|e| QueryError::bad_value(e.to_string()))?,
        )),
        "$rand" => parse_rand(arg),
        "$getField" => super::fields::parse_get_field(arg, ctx),
        "$setField" | "$unsetField" => super::fields::parse_set_field(key, arg, ctx),
        "$cond" => parse_cond(arg, ctx),
        "$let" => parse_let(arg, ctx),
        "$switch" => parse_switch(arg, ctx),
        "$convert" => super::convert::parse(arg, ctx),
        _ if super::date::is_named(key) => super::date::parse(key, arg, ctx),
        _ if super::dispatch::is_positional(key) => {
            super::dispatch::parse_positional(key, arg, ctx)
        }
        _ if super::dispatch::is_named(key) => super::dispatch::parse_named(key, arg, ctx),
        _ if POSITIONAL.contains(&key) || super::set::OPERATORS.contains(&key) => {
            let args = match arg {
                RawBsonRef::Array(items) => bson_canonical::compare::array_values(items)
                    .map(|item| parse_expr(item, ctx.nested()))
                    .collect::<Result<Vec<_>>>()?,
                other => vec![parse_expr(other, ctx.nested())?],
            };
            Ok(Expr::Call(key.to_owned(), args))
        }
        _ => match NAMED.iter().find(|(name, _)| *name == key) {
            Some((name, allowed)) => Ok(Expr::Named(
                (*name).to_owned(),
                parse_named(name, arg, allowed, ctx)?,
            )),
            None if NOT_IMPLEMENTED.contains(&key) => Err(QueryError::NotImplemented(format!(
                "the {key} expression operator is not implemented"
            ))),
            None => Err(QueryError::InvalidPipelineOperator(key.to_owned())),
        },
    }
}

/// `$rand` takes no arguments: `{}` or `[]`.
fn parse_rand(arg: RawBsonRef<'_>) -> Result<Expr> {
    let empty = match arg {
        RawBsonRef::Document(doc) => doc.is_empty(),
        RawBsonRef::Array(items) => items.is_empty(),
        _ => {
            return Err(QueryError::location(
                10065,
                "invalid parameter: expected an object ($rand)",
            ));
        }
    };
    if !empty {
        return Err(QueryError::location(
            3_040_501,
            "$rand does not currently accept arguments",
        ));
    }
    Ok(Expr::Call("$rand".to_owned(), Vec::new()))
}

fn parse_named(
    name: &str,
    arg: RawBsonRef<'_>,
    allowed: &[&str],
    ctx: ParseCtx<'_>,
) -> Result<Vec<(String, Expr)>> {
    let RawBsonRef::Document(doc) = arg else {
        return Err(QueryError::location(
            28646,
            format!("{name} only supports an object as its argument"),
        ));
    };
    let mut out = Vec::new();
    for (key, value) in bson_canonical::compare::elements(doc) {
        if !allowed.contains(&key) {
            return Err(QueryError::location(
                28647,
                format!("Unrecognized parameter to {name}: {key}"),
            ));
        }
        let expr = match (key, value) {
            ("as", RawBsonRef::String(s)) => Expr::Literal(Bson::String(s.to_owned())),
            _ => parse_expr(value, ctx.nested())?,
        };
        out.push((key.to_owned(), expr));
    }
    if !out.iter().any(|(k, _)| k == "input") {
        return Err(QueryError::location(
            28648,
            format!("Missing 'input' parameter to {name}"),
        ));
    }
    Ok(out)
}

fn parse_cond(arg: RawBsonRef<'_>, ctx: ParseCtx<'_>) -> Result<Expr> {
    let parts = match arg {
        RawBsonRef::Array(items) => {
            let items: Vec<_> = bson_canonical::compare::array_values(items).collect();
            if items.len() != 3 {
                return Err(arity("$cond", 3, items.len()));
            }
            items
        }
        RawBsonRef::Document(doc) => {
            let mut found = [None, None, None];
            for (key, value) in bson_canonical::compare::elements(doc) {
                let slot = match key {
                    "if" => 0,
                    "then" => 1,
                    "else" => 2,
                    _ => {
                        return Err(QueryError::location(
                            17083,
                            format!("Unrecognized parameter to $cond: {key}"),
                        ));
                    }
                };
                found[slot] = Some(value);
            }
            let names = [(17080, "if"), (17081, "then"), (17082, "else")];
            let mut parts = Vec::new();
            for (value, (code, name)) in found.into_iter().zip(names) {
                parts.push(value.ok_or_else(|| {
                    QueryError::location(code, format!("Missing '{name}' parameter to $cond"))
                })?);
            }
            parts
        }
        _ => return Err(arity("$cond", 3, 1)),
    };
    let args = parts
        .into_iter()
        .map(|p| parse_expr(p, ctx.nested()))
        .collect::<Result<Vec<_>>>()?;
    Ok(Expr::Call("$cond".to_owned(), args))
}

fn parse_let(arg: RawBsonRef<'_>, ctx: ParseCtx<'_>) -> Result<Expr> {
    let RawBsonRef::Document(doc) = arg else {
        return Err(QueryError::location(
            16874,
            "$let only supports an object as its argument",
        ));
    };
    let mut vars = None;
    let mut body = None;
    for (key, value) in bson_canonical::compare::elements(doc) {
        match (key, value) {
            ("vars", RawBsonRef::Document(v)) => {
                let mut out = Vec::new();
                for (name, expr) in bson_canonical::compare::elements(v) {
                    out.push((name.to_owned(), parse_expr(expr, ctx.nested())?));
                }
                vars = Some(out);
            }
            ("in", value) => body = Some(parse_expr(value, ctx.nested())?),
            _ => {
                return Err(QueryError::location(
                    16875,
                    format!("Unrecognized parameter to $let: {key}"),
                ));
            }
        }
    }
    let vars =
        vars.ok_or_else(|| QueryError::location(16876, "Missing 'vars' parameter to $let"))?;
    let body = body.ok_or_else(|| QueryError::location(16877, "Missing 'in' parameter to $let"))?;
    Ok(Expr::Let(vars, Box::new(body)))
}

fn parse_switch(arg: RawBsonRef<'_>, ctx: ParseCtx<'_>) -> Result<Expr> {
    let RawBsonRef::Document(doc) = arg else {
        return Err(QueryError::location(
            40060,
            "$switch requires an object as an argument",
        ));
    };
    let mut branches = Vec::new();
    let mut default = None;
    for (key, value) in bson_canonical::compare::elements(doc) {
        match (key, value) {
            ("branches", RawBsonRef::Array(items)) => {
                for branch in bson_canonical::compare::array_values(items) {
                    let RawBsonRef::Document(branch) = branch else {
                        return Err(QueryError::location(
                            40062,
                            "$switch expected each branch to be an object",
                        ));
                    };
                    let mut case = None;
                    let mut then = None;
                    for (k, v) in bson_canonical::compare::elements(branch) {
                        match k {
                            "case" => case = Some(parse_expr(v, ctx.nested())?),
                            "then" => then = Some(parse_expr(v, ctx.nested())?),
                            _ => {
                                return Err(QueryError::location(
                                    40063,
                                    format!("$switch found an unknown argument to a branch: {k}"),
                                ));
                            }
                        }
                    }
                    let case = case.ok_or_else(|| {
                        QueryError::location(
                            40064,
                            "$switch requires each branch have a 'case' expression",
                        )
                    })?;
                    let then = then.ok_or_else(|| {
                        QueryError::location(
                            40065,
                            "$switch requires each branch have a 'then' expression.",
                        )
                    })?;
                    branches.push((case, then));
                }
            }
            ("branches", _) => {
                return Err(QueryError::location(
                    40061,
                    "$switch expected an array for 'branches'",
                ));
            }
            ("default", value) => default = Some(Box::new(parse_expr(value, ctx.nested())?)),
            _ => {
                return Err(QueryError::location(
                    40067,
                    format!("$switch found an unknown argument: {key}"),
                ));
            }
        }
    }
    if branches.is_empty() {
        return Err(QueryError::location(
            40068,
            "$switch requires at least one branch.",
        ));
    }
    Ok(Expr::Switch(branches, default))
}

/// MongoDB's error for an operator given the wrong number of arguments.
pub(super) fn arity(name: &str, wanted: usize, got: usize) -> QueryError {
    QueryError::location(
        16020,
        format!("Expression {name} takes exactly {wanted} arguments. {got} were passed in."),
    )
}

fn eval_all(args: &[Expr], scope: &mut Scope<'_>) -> Result<Vec<Value>> {
    args.iter().map(|a| a.eval(scope)).collect()
}

/// Null, undefined or missing: what most operators answer null for.
pub(super) fn nullish(v: &Value) -> bool {
    matches!(v, None | Some(Bson::Null | Bson::Undefined))
}

fn exactly<const N: usize>(name: &str, values: Vec<Value>) -> Result<[Value; N]> {
    let got = values.len();
    values.try_into().map_err(|_| arity(name, N, got))
}

pub(super) fn call(name: &str, args: &[Expr], scope: &mut Scope<'_>) -> Result<Value> {
    // Short-circuiting operators evaluate their own arguments.
    match name {
        "$and" => {
            for a in args {
                if !truthy(&a.eval(scope)?) {
                    return Ok(Some(Bson::Boolean(false)));
                }
            }
            return Ok(Some(Bson::Boolean(true)));
        }
        "$or" => {
            for a in args {
                if truthy(&a.eval(scope)?) {
                    return Ok(Some(Bson::Boolean(true)));
                }
            }
            return Ok(Some(Bson::Boolean(false)));
        }
        "$cond" => {
            let [test, then, otherwise] = args else {
                return Err(arity(name, 3, args.len()));
            };
            return if truthy(&test.eval(scope)?) {
                then.eval(scope)
            } else {
                otherwise.eval(scope)
            };
        }
        "$ifNull" => {
            if args.len() < 2 {
                return Err(QueryError::location(
                    1257300,
                    "$ifNull needs at least two arguments",
                ));
            }
            let (last, firsts) = args.split_last().unwrap_or((&args[0], &[]));
            for a in firsts {
                let v = a.eval(scope)?;
                if !nullish(&v) {
                    return Ok(v);
                }
            }
            return last.eval(scope);
        }
        _ => {}
    }
    if let Some(result) = super::dispatch::call_in_order(name, args, scope) {
        return result;
    }
    let values = eval_all(args, scope)?;
    match name {
        "$add" => super::arith::add(&values),
        "$subtract" => {
            let [a, b] = exactly::<2>(name, values)?;
            super::arith::subtract(&a, &b)
        }
        "$multiply" => super::arith::multiply(&values),
        "$divide" => {
            let [a, b] = exactly::<2>(name, values)?;
            super::arith::divide(&a, &b)
        }
        "$mod" => {
            let [a, b] = exactly::<2>(name, values)?;
            super::arith::modulo(&a, &b)
        }
        "$abs" | "$ceil" | "$floor" | "$sqrt" => {
            let [v] = exactly::<1>(name, values)?;
            super::arith::unary(name, &v)
        }
        "$round" | "$trunc" => super::arith::round(name, &values),
        "$eq" | "$ne" | "$gt" | "$gte" | "$lt" | "$lte" | "$cmp" => {
            let [a, b] = exactly::<2>(name, values)?;
            Ok(Some(compare_op(name, &a, &b)))
        }
        "$not" => {
            let [v] = exactly::<1>(name, values)?;
            Ok(Some(Bson::Boolean(!truthy(&v))))
        }
        "$max" | "$min" | "$sum" | "$avg" | "$first" | "$last" => accumulate(name, values),
        "$rand" => Ok(Some(Bson::Double(random_unit()))),
        _ => super::ops_more::call(name, values),
    }
}

fn compare_op(name: &str, a: &Value, b: &Value) -> Bson {
    let order = compare_bson(a, b);
    match name {
        "$cmp" => Bson::Int32(match order {
            Ordering::Less => -1,
            Ordering::Equal => 0,
            Ordering::Greater => 1,
        }),
        "$eq" => Bson::Boolean(order.is_eq()),
        "$ne" => Bson::Boolean(order.is_ne()),
        "$gt" => Bson::Boolean(order.is_gt()),
        "$gte" => Bson::Boolean(order.is_ge()),
        "$lt" => Bson::Boolean(order.is_lt()),
        _ => Bson::Boolean(order.is_le()),
    }
}

fn accumulate(name: &str, values: Vec<Value>) -> Result<Value> {
    // With one array argument these operate on its elements.
    let items: Vec<Value> = match values.as_slice() {
        [Some(Bson::Array(items))] => items.iter().cloned().map(Some).collect(),
        _ => values,
    };
    match name {
        "$max" | "$min" => {
            let present = items.into_iter().filter(|v| !nullish(v));
            let pick = if name == "$max" {
                present.max_by(compare_bson)
            } else {
                present.min_by(compare_bson)
            };
            Ok(Some(pick.flatten().unwrap_or(Bson::Null)))
        }
        "$sum" | "$avg" => {
            let mut total = super::Total::new();
            items.iter().flatten().for_each(|v| total.add(v));
            Ok(Some(if name == "$sum" {
                total.sum()
            } else {
                total.average()
            }))
        }
        "$first" => Ok(items.into_iter().next().flatten()),
        _ => Ok(items.into_iter().last().flatten()),
    }
}

pub(super) fn named(name: &str, args: &[(String, Expr)], scope: &mut Scope<'_>) -> Result<Value> {
    let get = |key: &str| args.iter().find(|(k, _)| k == key).map(|(_, e)| e);
    match name {
        "$filter" | "$map" => {
            let input = match get("input") {
                Some(e) => e.eval(scope)?,
                None => None,
            };
            if nullish(&input) {
                return Ok(Some(Bson::Null));
            }
            let Some(Bson::Array(items)) = input else {
                let (code, what) = if name == "$filter" {
                    (28651, "$filter")
                } else {
                    (16883, "$map")
                };
                return Err(QueryError::location(
                    code,
                    format!("input to {what} must be an array not {}", type_name(&input)),
                ));
            };
            let var = match get("as") {
                Some(Expr::Literal(Bson::String(s))) => s.clone(),
                _ => "this".to_owned(),
            };
            let body = get(if name == "$filter" { "cond" } else { "in" }).ok_or_else(|| {
                QueryError::location(28650, format!("Missing parameter to {name}"))
            })?;
            let limit = match get("limit") {
                Some(e) => e
                    .eval(scope)?
                    .as_ref()
                    .and_then(Number::of)
                    .and_then(Number::as_i64),
                None => None,
            };
            let mut out = Vec::new();
            for item in items {
                let result = scope.with_var(&var, Some(item.clone()), |s| body.eval(s))?;
                if name == "$map" {
                    out.push(result.unwrap_or(Bson::Null));
                } else if truthy(&result) {
                    out.push(item);
                    if limit.is_some_and(|l| i64::try_from(out.len()).is_ok_and(|n| n >= l)) {
                        break;
                    }
                }
            }
            Ok(Some(Bson::Array(out)))
        }
        _ => {
            let input = match get("input") {
                Some(e) => e.eval(scope)?,
                None => None,
            };
            let chars = match get("chars") {
                Some(e) => e.eval(scope)?,
                None => None,
            };
            if nullish(&input) {
                return Ok(Some(Bson::Null));
            }
            let Some(Bson::String(text)) = &input else {
                return Err(QueryError::location(
                    50699,
                    format!(
                        "{name} requires its input to be a string, got {} instead.",
                        type_name(&input)
                    ),
                ));
            };
            let set: Vec<char> = match &chars {
                Some(Bson::String(c)) => c.chars().collect(),
                None | Some(Bson::Null) => vec![
                    '\0', ' ', '\t', '\n', '\u{b}', '\u{c}', '\r', '\u{a0}', '\u{1680}',
                    '\u{2000}', '\u{2001}', '\u{2002}', '\u{2003}', '\u{2004}', '\u{2005}',
                    '\u{2006}', '\u{2007}', '\u{2008}', '\u{2009}', '\u{200a}',
                ],
                _ => {
                    return Err(QueryError::location(
                        50700,
                        format!(
                            "{name} requires 'chars' to be a string, got {} instead.",
                            type_name(&chars)
                        ),
                    ));
                }
            };
            let trimmed = match name {
                "$ltrim" => text.trim_start_matches(set.as_slice()),
                "$rtrim" => text.trim_end_matches(set.as_slice()),
                _ => text.trim_matches(set.as_slice()),
            };
            Ok(Some(Bson::String(trimmed.to_owned())))
        }
    }
}

/// Used by the string operators.
pub(super) fn text_of(v: &Bson) -> Option<String> {
    to_text(v)
}

/// A uniformly distributed double in [0, 1): 53 bits of a SipHash keyed by the
/// standard library's per-process random keys (a fresh key per call) over a counter.
fn random_unit() -> f64 {
    use std::hash::{BuildHasher, Hasher};
    use std::sync::atomic::{AtomicU64, Ordering as AtomicOrdering};
    static COUNTER: AtomicU64 = AtomicU64::new(0);
    let mut hasher = std::collections::hash_map::RandomState::new().build_hasher();
    hasher.write_u64(COUNTER.fetch_add(1, AtomicOrdering::Relaxed));
    (hasher.finish() >> 11) as f64 / (1u64 << 53) as f64
}

#[cfg(test)]
mod tests {
    use super::NOT_IMPLEMENTED;
    use crate::{Expression, QueryError};
    use bson::{RawBsonRef, RawDocumentBuf, doc};

    fn parse(operator: &str) -> Result<Expression, QueryError> {
        let spec = RawDocumentBuf::try_from(&doc! { operator: [1, 2] }).expect("document");
        Expression::parse(RawBsonRef::Document(&spec))
    }

    /// Every operator on the list is refused as not implemented (238), so the list holds
    /// only what is missing: implementing one makes this fail until it leaves the list.
    /// A name MongoDB does not have stays unknown (168).
    #[test]
    fn operators_mongodb_has_and_this_crate_lacks_are_not_implemented() {
        for operator in NOT_IMPLEMENTED {
            match parse(operator) {
                Err(QueryError::NotImplemented(message)) => {
                    assert!(message.contains(operator), "{message}");
                }
                other => panic!("{operator}: {other:?}"),
            }
        }
        assert!(matches!(
            parse("$bogus"),
            Err(QueryError::InvalidPipelineOperator(_))
        ));
    }

    /// Every operator routed through `dispatch` is known: it parses, or is refused for
    /// its arguments, but is neither unknown (168) nor not implemented (238).
    #[test]
    fn dispatched_operators_are_recognised() {
        let positional = [
            super::super::array::OPERATORS,
            super::super::math::OPERATORS,
            super::super::text::OPERATORS,
        ];
        let names = positional
            .iter()
            .flat_map(|list| list.iter().map(|(name, _, _)| *name))
            .chain(super::super::array_named::OPERATORS.iter().copied())
            .chain(super::super::regex_ops::OPERATORS.iter().copied())
            .chain(super::super::text::NAMED.iter().copied());
        for operator in names {
            assert!(!NOT_IMPLEMENTED.contains(&operator), "{operator}");
            if let Err(QueryError::NotImplemented(m) | QueryError::InvalidPipelineOperator(m)) =
                parse(operator)
            {
                panic!("{operator}: {m}");
            }
        }
    }
}
