//! The aggregation expression language: parsing and evaluation with MongoDB's type rules.
//!
//! An expression is parsed once into a tree ([`Expression::parse`]) and
//! evaluated against a document ([`Expression::evaluate`]). Values are
//! `Option<Bson>`, where `None` is a missing field: MongoDB distinguishes
//! missing from null (`{$eq: ["$x", null]}` is false when `x` is missing, and
//! missing sorts below every value).

mod arith;
mod array;
mod array_named;
mod civil;
mod convert;
mod date;
mod date_math;
mod date_text;
mod dispatch;
mod fields;
mod math;
mod ops;
mod ops_more;
mod regex_ops;
mod set;
mod text;
mod total;
mod value;

use crate::error::QueryError;
use crate::limits::EXPRESSION_DEPTH_MAX;
use crate::variables::{NO_VARIABLES, Variables};
use bson::raw::RawDocument;
use bson::{Bson, RawBsonRef};
use bson_canonical::path::get_field;
use std::collections::BTreeSet;
use std::sync::Arc;

pub(crate) use math::Deviation;
pub(crate) use ops_more::slice_items;
pub(crate) use total::Total;
pub(crate) use value::{to_raw as value_to_raw, truthy, type_name as value_type_name};

/// A value during evaluation: `None` is a missing field.
pub type Value = Option<Bson>;

/// A parsed aggregation expression.
#[derive(Debug, Clone)]
pub struct Expression {
    node: Expr,
}

/// What [`Expression::simple`] finds.
#[derive(Debug, Clone, Copy)]
pub(crate) enum Simple<'e> {
    Constant(&'e Bson),
    Field(&'e str),
}

/// A node of an expression tree.
#[derive(Debug, Clone)]
pub(crate) enum Expr {
    Literal(Bson),
    /// `$a.b`: a path from `$$CURRENT`.
    Field(Vec<String>),
    /// `$$name.a.b`, with the value of the command's variable `name` when the
    /// command defines one (`let`, `$$NOW`): used unless an enclosing `$let`,
    /// `$map` or `$filter` binds `name` itself.
    Variable(String, Vec<String>, Option<Arc<Value>>),
    Array(Vec<Expr>),
    Object(Vec<(String, Expr)>),
    /// An operator with positional arguments.
    Call(String, Vec<Expr>),
    /// An operator with named arguments (`$cond` object form, `$filter`, `$map`, ...).
    Named(String, Vec<(String, Expr)>),
    /// `$let`.
    Let(Vec<(String, Expr)>, Box<Expr>),
    /// `$switch`.
    Switch(Vec<(Expr, Expr)>, Option<Box<Expr>>),
    /// `$getField`: a field named literally (dots and `$` included) of `input`.
    GetField(String, Box<Expr>),
    /// `$setField` (`Some` value) and `$unsetField` (`None`): `input` with the
    /// field named literally set or removed.
    SetField {
        field: String,
        input: Box<Expr>,
        value: Option<Box<Expr>>,
    },
    /// `$regexMatch`, `$regexFind`, `$regexFindAll`, with a constant pattern compiled.
    Regex(Box<regex_ops::RegexExpr>),
}

impl Expr {
    fn top_fields(&self, out: &mut BTreeSet<String>) -> bool {
        /// The first component of a path from the document; the whole document if none.
        fn note(path: &[String], out: &mut BTreeSet<String>) -> bool {
            let Some(first) = path.first() else {
                return false;
            };
            out.insert(first.clone());
            true
        }
        fn all<'e>(items: impl IntoIterator<Item = &'e Expr>, out: &mut BTreeSet<String>) -> bool {
            items.into_iter().all(|e| e.top_fields(out))
        }
        match self {
            Expr::Literal(_) => true,
            Expr::Field(path) => note(path, out),
            Expr::Variable(name, path, _) => {
                if name != "ROOT" && name != "CURRENT" {
                    // A command variable or one bound by `$let`/`$map`/`$filter`: its
                    // value's own expression is walked where it is bound.
                    return true;
                }
                note(path, out)
            }
            Expr::Array(items) | Expr::Call(_, items) => all(items, out),
            // A variable bound here (even one named `CURRENT`) holds the value of an
            // expression walked here too, so its fields are already counted.
            Expr::Object(fields) | Expr::Named(_, fields) => {
                all(fields.iter().map(|(_, e)| e), out)
            }
            Expr::Let(vars, body) => all(vars.iter().map(|(_, e)| e), out) && body.top_fields(out),
            Expr::Switch(branches, default) => {
                all(branches.iter().flat_map(|(c, v)| [c, v]), out)
                    && default.as_ref().is_none_or(|d| d.top_fields(out))
            }
            Expr::GetField(_, input) => input.top_fields(out),
            Expr::SetField { input, value, .. } => {
                input.top_fields(out) && value.as_ref().is_none_or(|v| v.top_fields(out))
            }
            Expr::Regex(regex) => all(regex.children(), out),
        }
    }
}

/// What parsing an expression carries down the tree: the nesting depth and the
/// command's variables.
#[derive(Debug, Clone, Copy)]
pub(crate) struct ParseCtx<'v> {
    pub(crate) depth: usize,
    pub(crate) vars: &'v Variables,
}

impl<'v> ParseCtx<'v> {
    /// The top of an expression, with `vars` in scope.
    pub(crate) fn top(vars: &'v Variables) -> ParseCtx<'v> {
        ParseCtx { depth: 0, vars }
    }

    /// One level further down.
    pub(crate) fn nested(self) -> ParseCtx<'v> {
        ParseCtx {
            depth: self.depth + 1,
            vars: self.vars,
        }
    }
}

/// The variables in scope during evaluation.
pub(crate) struct Scope<'a> {
    root: &'a RawDocument,
    root_tree: std::cell::OnceCell<Bson>,
    vars: Vec<(String, Value)>,
}

impl Expression {
    /// Adds to `out` the top-level fields of the document this expression reads; `false`
    /// when it may read the whole document (`$$ROOT`, `$$CURRENT`).
    /// Over-approximates: a field named here may go unread, never the reverse.
    pub fn top_fields(&self, out: &mut BTreeSet<String>) -> bool {
        self.node.top_fields(out)
    }

    /// How the expression reads a document when that is trivially: a constant (what
    /// `evaluate` returns for any document), or a top-level field path `$name` (what
    /// `evaluate` returns is that field's value, `None` when it is missing).
    pub(crate) fn simple(&self) -> Option<Simple<'_>> {
        match &self.node {
            Expr::Literal(value) => Some(Simple::Constant(value)),
            Expr::Field(path) => match path.as_slice() {
                [name] => Some(Simple::Field(name)),
                _ => None,
            },
            _ => None,
        }
    }

    /// Parses an expression (a document, a `$path` string, an array or a literal).
    pub fn parse(value: RawBsonRef<'_>) -> Result<Expression, QueryError> {
        Expression::parse_with(value, &NO_VARIABLES)
    }

    /// Parses an expression that may read the command's variables (`$$name` for a
    /// `let` variable, `$$NOW`).
    pub fn parse_with(value: RawBsonRef<'_>, vars: &Variables) -> Result<Expression, QueryError> {
        Ok(Expression {
            node: parse_expr(value, ParseCtx::top(vars))?,
        })
    }

    /// Evaluates the expression with `doc` as `$$ROOT` and `$$CURRENT`.
    pub fn evaluate(&self, doc: &RawDocument) -> Result<Value, QueryError> {
        let mut scope = Scope::new(doc);
        self.node.eval(&mut scope)
    }

    /// Evaluates the expression with `root` as `$$ROOT` and `current` as `$$CURRENT`
    /// (what field paths read): `$redact` on an embedded document.
    pub(crate) fn evaluate_at(
        &self,
        root: &RawDocument,
        current: Bson,
    ) -> Result<Value, QueryError> {
        let mut scope = Scope::new(root);
        scope.vars.push(("CURRENT".to_owned(), Some(current)));
        self.node.eval(&mut scope)
    }
}

impl Expr {
    /// Parses the argument of `$expr`.
    pub(crate) fn parse_top(value: RawBsonRef<'_>, vars: &Variables) -> Result<Expr, QueryError> {
        parse_expr(value, ParseCtx::top(vars))
    }

    /// Whether `test` holds for this node or any node below it.
    pub(crate) fn any(&self, test: &mut impl FnMut(&Expr) -> bool) -> bool {
        if test(self) {
            return true;
        }
        match self {
            Expr::Literal(_) | Expr::Field(_) | Expr::Variable(..) => false,
            Expr::Array(items) | Expr::Call(_, items) => items.iter().any(|e| e.any(test)),
            Expr::Object(fields) | Expr::Named(_, fields) => {
                fields.iter().any(|(_, e)| e.any(test))
            }
            Expr::Let(vars, body) => vars.iter().any(|(_, e)| e.any(test)) || body.any(test),
            Expr::Switch(branches, default) => {
                branches.iter().any(|(c, t)| c.any(test) || t.any(test))
                    || default.as_ref().is_some_and(|d| d.any(test))
            }
            Expr::GetField(_, input) => input.any(test),
            Expr::SetField { input, value, .. } => {
                input.any(test) || value.as_ref().is_some_and(|v| v.any(test))
            }
            Expr::Regex(regex) => regex.children().any(|e| e.any(test)),
        }
    }

    /// Whether `$expr` holds for `doc`.
    pub(crate) fn matches(&self, doc: &RawDocument) -> Result<bool, QueryError> {
        let mut scope = Scope::new(doc);
        Ok(truthy(&self.eval(&mut scope)?))
    }

    pub(crate) fn eval(&self, scope: &mut Scope<'_>) -> Result<Value, QueryError> {
        match self {
            Expr::Literal(v) => Ok(Some(v.clone())),
            Expr::Field(path) => Ok(scope.field(path)),
            Expr::Variable(name, path, preset) => scope.variable(name, path, preset.as_deref()),
            Expr::Array(items) => {
                let mut out = Vec::with_capacity(items.len());
                for item in items {
                    // A missing value in an array literal becomes null.
                    out.push(item.eval(scope)?.unwrap_or(Bson::Null));
                }
                Ok(Some(Bson::Array(out)))
            }
            Expr::Object(fields) => {
                let mut out = bson::Document::new();
                for (key, expr) in fields {
                    if let Some(v) = expr.eval(scope)? {
                        out.insert(key.clone(), v);
                    }
                }
                Ok(Some(Bson::Document(out)))
            }
            Expr::Call(name, args) => ops::call(name, args, scope),
            Expr::Named(name, args) => match name.as_str() {
                "$convert" => convert::named(args, scope),
                n if date::is_named(n) => date::named(n, args, scope),
                n if dispatch::is_named(n) => dispatch::named(n, args, scope),
                _ => ops::named(name, args, scope),
            },
            Expr::Let(vars, body) => {
                let mut values = Vec::with_capacity(vars.len());
                for (name, expr) in vars {
                    values.push((name.clone(), expr.eval(scope)?));
                }
                let depth = scope.vars.len();
                scope.vars.extend(values);
                let result = body.eval(scope);
                scope.vars.truncate(depth);
                result
            }
            Expr::Switch(branches, default) => {
                for (case, then) in branches {
                    if truthy(&case.eval(scope)?) {
                        return then.eval(scope);
                    }
                }
                match default {
                    Some(d) => d.eval(scope),
                    None => Err(QueryError::location(
                        40066,
                        "$switch could not find a matching branch for an input, and no default \
                         was specified.",
                    )),
                }
            }
            Expr::GetField(field, input) => fields::get_field(field, input, scope),
            Expr::SetField {
                field,
                input,
                value,
            } => fields::set_field(field, input, value.as_deref(), scope),
            Expr::Regex(regex) => regex_ops::eval(regex, scope),
        }
    }
}

impl<'a> Scope<'a> {
    pub(crate) fn new(root: &'a RawDocument) -> Scope<'a> {
        Scope {
            root,
            root_tree: std::cell::OnceCell::new(),
            vars: Vec::new(),
        }
    }

    fn root_tree(&self) -> &Bson {
        self.root_tree
            .get_or_init(|| bson::Document::try_from(self.root).map_or(Bson::Null, Bson::Document))
    }

    /// A field path from `$$CURRENT` (the root unless rebound).
    fn field(&self, path: &[String]) -> Value {
        if let Some((_, current)) = self.vars.iter().rev().find(|(n, _)| n == "CURRENT") {
            return value::walk(current.as_ref()?, path);
        }
        let (first, rest) = path.split_first()?;
        let raw = get_field(self.root, first)?;
        let value = Bson::try_from(raw).ok()?;
        value::walk(&value, rest)
    }

    fn variable(
        &self,
        name: &str,
        path: &[String],
        preset: Option<&Value>,
    ) -> Result<Value, QueryError> {
        if let Some((_, bound)) = self.vars.iter().rev().find(|(n, _)| n == name) {
            return Ok(bound.as_ref().and_then(|v| value::walk(v, path)));
        }
        if let Some(value) = preset {
            return Ok(value.as_ref().and_then(|v| value::walk(v, path)));
        }
        match name {
            "ROOT" | "CURRENT" => Ok(value::walk(self.root_tree(), path)),
            "REMOVE" => Ok(None),
            // A standalone has no cluster time.
            "CLUSTER_TIME" => Err(QueryError::location(
                51144,
                "Builtin variable '$$CLUSTER_TIME' is not available",
            )),
            _ => Err(QueryError::location(
                17276,
                format!("Use of undefined variable: {name}"),
            )),
        }
    }

    /// Binds a variable for the duration of `f`.
    pub(crate) fn with_var<T>(
        &mut self,
        name: &str,
        value: Value,
        f: impl FnOnce(&mut Scope<'a>) -> T,
    ) -> T {
        self.vars.push((name.to_owned(), value));
        let result = f(self);
        self.vars.pop();
        result
    }
}

fn split_path(path: &str) -> Result<Vec<String>, QueryError> {
    if path.is_empty() {
        return Err(QueryError::location(
            16872,
            "'$' by itself is not a valid FieldPath",
        ));
    }
    let parts: Vec<String> = path.split('.').map(str::to_owned).collect();
    if parts.iter().any(String::is_empty) {
        return Err(QueryError::location(
            15998,
            "FieldPath field names may not be empty strings.",
        ));
    }
    // After the first component (a field or a variable name), a `$` name must be a
    // DBRef field, as in MongoDB's FieldPath.
    if let Some(bad) = parts
        .iter()
        .skip(1)
        .find(|p| p.starts_with('$') && !crate::value::dollar_name_allowed(p))
    {
        return Err(QueryError::location(
            16410,
            format!(
                "FieldPath field names may not start with '$'. Consider using $getField or \
                 $setField. ({bad})"
            ),
        ));
    }
    Ok(parts)
}

pub(crate) fn parse_expr(value: RawBsonRef<'_>, ctx: ParseCtx<'_>) -> Result<Expr, QueryError> {
    if ctx.depth > EXPRESSION_DEPTH_MAX {
        return Err(QueryError::bad_value("expression nested too deeply"));
    }
    match value {
        RawBsonRef::String(s) => {
            if let Some(var) = s.strip_prefix("$$") {
                let mut parts = split_path(var)?;
                let name = parts.remove(0);
                let preset = ctx.vars.lookup(&name);
                Ok(Expr::Variable(name, parts, preset))
            } else if let Some(path) = s.strip_prefix('$') {
                Ok(Expr::Field(split_path(path)?))
            } else {
                Ok(Expr::Literal(Bson::String(s.to_owned())))
            }
        }
        RawBsonRef::Array(items) => {
            let mut out = Vec::new();
            for item in bson_canonical::compare::array_values(items) {
                out.push(parse_expr(item, ctx.nested())?);
            }
            Ok(Expr::Array(out))
        }
        RawBsonRef::Document(doc) => parse_object(doc, ctx),
        other => Ok(Expr::Literal(
            Bson::try_from(other).map_err(|e| QueryError::bad_value(e.to_string()))?,
        )),
    }
}

fn parse_object(doc: &RawDocument, ctx: ParseCtx<'_>) -> Result<Expr, QueryError> {
    let fields: Vec<(&str, RawBsonRef<'_>)> = bson_canonical::compare::elements(doc).collect();
    match fields.first() {
        Some((key, _)) if key.starts_with('$') => {
            if fields.len() != 1 {
                return Err(QueryError::location(
                    15983,
                    format!(
                        "an expression specification must contain exactly one field, the name \
                         of the expression. Found {} fields",
                        fields.len()
                    ),
                ));
            }
            let (key, arg) = fields[0];
            ops::parse_operator(key, arg, ctx.nested())
        }
        _ => {
            let mut out = Vec::new();
            for (key, value) in fields {
                if key.starts_with('$') && !crate::value::dollar_name_allowed(key) {
                    return Err(QueryError::location(
                        16410,
                        format!("FieldPath field names may not start with '$'. Got: {key}"),
                    ));
                }
                out.push((key.to_owned(), parse_expr(value, ctx.nested())?));
            }
            Ok(Expr::Object(out))
        }
    }
}
