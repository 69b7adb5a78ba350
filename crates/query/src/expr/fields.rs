//! `$getField`, `$setField` and `$unsetField`: reading and writing a field by its
//! literal name, so names with dots or a leading `$` can be reached.
//!
//! As in MongoDB 7.0, `field` must be a constant string (`"a.b"`, or
//! `{$literal: "$a"}` for a name starting with `$`): a field path or variable is
//! refused with a hint to use `$literal`, any other expression as non-constant.

use super::value::type_name;
use super::{Expr, ParseCtx, Scope, Value, parse_expr};
use crate::error::QueryError;
use bson::{Bson, RawBsonRef};
use bson_canonical::compare::elements;

type Result<T> = std::result::Result<T, QueryError>;

/// The error codes of one operator's checks on its `field` argument.
struct FieldCodes {
    path: i32,
    non_constant: i32,
    non_string: i32,
}

const GET_FIELD_CODES: FieldCodes = FieldCodes {
    path: 5_654_600,
    non_constant: 5_654_601,
    non_string: 5_654_602,
};

const SET_FIELD_CODES: FieldCodes = FieldCodes {
    path: 4_161_108,
    non_constant: 4_161_106,
    non_string: 4_161_107,
};

/// The constant field name `field` stands for, or MongoDB's parse error.
fn constant_name(operator: &str, field: Expr, codes: &FieldCodes) -> Result<String> {
    match field {
        Expr::Literal(Bson::String(name)) => Ok(name),
        Expr::Literal(other) => Err(QueryError::location(
            codes.non_string,
            format!(
                "{operator} requires 'field' to evaluate to type String, but got {}",
                type_name(&Some(other))
            ),
        )),
        Expr::Field(path) => Err(path_error(codes, &format!("${}", path.join(".")))),
        Expr::Variable(name, path, _) => {
            let mut text = format!("$${name}");
            for part in path {
                text.push('.');
                text.push_str(&part);
            }
            Err(path_error(codes, &text))
        }
        _ => Err(QueryError::location(
            codes.non_constant,
            format!(
                "{operator} requires 'field' to evaluate to a constant, but got a non-constant \
                 argument"
            ),
        )),
    }
}

fn path_error(codes: &FieldCodes, text: &str) -> QueryError {
    QueryError::location(
        codes.path,
        format!(
            "A field path reference which is not allowed in this context. Did you mean \
             {{$literal: '{text}'}}?"
        ),
    )
}

/// `$$CURRENT`, the input of `$getField`'s short form.
fn current() -> Expr {
    Expr::Variable("CURRENT".to_owned(), Vec::new(), None)
}

/// `{$getField: {field, input}}`, `{$getField: <field>}` (input `$$CURRENT`), and
/// `{$getField: {$literal: ...}}` (an expression as the field, input `$$CURRENT`).
pub(super) fn parse_get_field(arg: RawBsonRef<'_>, ctx: ParseCtx<'_>) -> Result<Expr> {
    let mut field = None;
    let mut input = None;
    match arg {
        RawBsonRef::Document(doc) => {
            for (key, value) in elements(doc) {
                if field.is_none() && input.is_none() && key.starts_with('$') {
                    // The whole argument is an expression naming the field.
                    field = Some(parse_expr(arg, ctx.nested())?);
                    input = Some(current());
                    break;
                }
                match key {
                    "field" => field = Some(parse_expr(value, ctx.nested())?),
                    "input" => input = Some(parse_expr(value, ctx.nested())?),
                    _ => {
                        return Err(QueryError::location(
                            3_041_701,
                            format!("$getField found an unknown argument: {key}"),
                        ));
                    }
                }
            }
        }
        other => {
            field = Some(parse_expr(other, ctx.nested())?);
            input = Some(current());
        }
    }
    let field = field.ok_or_else(|| {
        QueryError::location(3_041_702, "$getField requires 'field' to be specified")
    })?;
    let input = input.ok_or_else(|| {
        QueryError::location(3_041_703, "$getField requires 'input' to be specified")
    })?;
    let name = constant_name("$getField", field, &GET_FIELD_CODES)?;
    Ok(Expr::GetField(name, Box::new(input)))
}

/// `{$setField: {field, input, value}}` and `{$unsetField: {field, input}}`.
pub(super) fn parse_set_field(
    operator: &str,
    arg: RawBsonRef<'_>,
    ctx: ParseCtx<'_>,
) -> Result<Expr> {
    let setting = operator == "$setField";
    let RawBsonRef::Document(doc) = arg else {
        return Err(QueryError::location(
            4_161_100,
            format!("{operator} only supports an object as its argument"),
        ));
    };
    let mut field = None;
    let mut input = None;
    let mut value = None;
    for (key, item) in elements(doc) {
        match key {
            "field" => field = Some(parse_expr(item, ctx.nested())?),
            "input" => input = Some(parse_expr(item, ctx.nested())?),
            "value" if setting => value = Some(parse_expr(item, ctx.nested())?),
            _ => {
                return Err(QueryError::location(
                    4_161_101,
                    format!("{operator} found an unknown argument: {key}"),
                ));
            }
        }
    }
    let field = field.ok_or_else(|| {
        QueryError::location(
            4_161_102,
            format!("{operator} requires 'field' to be specified"),
        )
    })?;
    if setting && value.is_none() {
        return Err(QueryError::location(
            4_161_103,
            "$setField requires 'value' to be specified",
        ));
    }
    let input = input.ok_or_else(|| {
        QueryError::location(
            4_161_109,
            format!("{operator} requires 'input' to be specified"),
        )
    })?;
    let field = constant_name(operator, field, &SET_FIELD_CODES)?;
    Ok(Expr::SetField {
        field,
        input: Box::new(input),
        value: value.map(Box::new),
    })
}

/// `$getField`: missing input stays missing, null (or undefined) input gives
/// null, any other non-document input gives missing.
pub(super) fn get_field(field: &str, input: &Expr, scope: &mut Scope<'_>) -> Result<Value> {
    match input.eval(scope)? {
        None => Ok(None),
        Some(Bson::Null | Bson::Undefined) => Ok(Some(Bson::Null)),
        Some(Bson::Document(doc)) => Ok(doc.get(field).cloned()),
        Some(_) => Ok(None),
    }
}

/// `$setField`/`$unsetField`: null or missing input gives null; a missing value
/// (`$$REMOVE`, an absent field) removes the field; otherwise the field keeps its
/// position when present and is appended when not.
pub(super) fn set_field(
    field: &str,
    input: &Expr,
    value: Option<&Expr>,
    scope: &mut Scope<'_>,
) -> Result<Value> {
    let input = input.eval(scope)?;
    let mut doc = match input {
        None | Some(Bson::Null | Bson::Undefined) => return Ok(Some(Bson::Null)),
        Some(Bson::Document(doc)) => doc,
        Some(_) => {
            let operator = if value.is_some() {
                "$setField"
            } else {
                "$unsetField"
            };
            return Err(QueryError::location(
                4_161_105,
                format!("{operator} requires 'input' to evaluate to type Object"),
            ));
        }
    };
    let value = match value {
        Some(expr) => expr.eval(scope)?,
        None => None,
    };
    match value {
        Some(v) => {
            doc.insert(field.to_owned(), v);
        }
        None => {
            doc.remove(field);
        }
    }
    Ok(Some(Bson::Document(doc)))
}
