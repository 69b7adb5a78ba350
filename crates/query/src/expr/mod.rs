//! The aggregation expression language: parsing and evaluation with MongoDB's type rules.
//!
//! An expression is parsed once into a tree ([`Expression::parse`]) and
//! evaluated against a document ([`Expression::evaluate`]). Values are
//! `Option<Bson>`, where `None` is a missing field: MongoDB distinguishes
//! missing from null (`{$eq: ["$x", null]}` is false when `x` is missing, and
//! missing sorts below every value).

mod ops;
mod ops_more;
mod value;

use crate::error::QueryError;
use crate::limits::EXPRESSION_DEPTH_MAX;
use bson::raw::RawDocument;
use bson::{Bson, RawBsonRef};
use bson_canonical::path::get_field;

pub(crate) use ops_more::slice_items;
pub(crate) use value::{
    compare_bson, to_raw as value_to_raw, truthy, type_name as value_type_name,
};

/// A value during evaluation: `None` is a missing field.
pub type Value = Option<Bson>;

/// A parsed aggregation expression.
#[derive(Debug, Clone)]
pub struct Expression {
    node: Expr,
}

/// A node of an expression tree.
#[derive(Debug, Clone)]
pub(crate) enum Expr {
    Literal(Bson),
    /// `$a.b`: a path from `$$CURRENT`.
    Field(Vec<String>),
    /// `$$name.a.b`.
    Variable(String, Vec<String>),
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
}

/// The variables in scope during evaluation.
pub(crate) struct Scope<'a> {
    root: &'a RawDocument,
    root_tree: std::cell::OnceCell<Bson>,
    vars: Vec<(String, Value)>,
}

impl Expression {
    /// Parses an expression (a document, a `$path` string, an array or a literal).
    pub fn parse(value: RawBsonRef<'_>) -> Result<Expression, QueryError> {
        Ok(Expression {
            node: parse_expr(value, 0)?,
        })
    }

    /// Evaluates the expression with `doc` as `$$ROOT` and `$$CURRENT`.
    pub fn evaluate(&self, doc: &RawDocument) -> Result<Value, QueryError> {
        let mut scope = Scope::new(doc);
        self.node.eval(&mut scope)
    }
}

impl Expr {
    /// Parses the argument of `$expr`.
    pub(crate) fn parse_top(value: RawBsonRef<'_>) -> Result<Expr, QueryError> {
        parse_expr(value, 0)
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
            Expr::Variable(name, path) => scope.variable(name, path),
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
            Expr::Named(name, args) => ops::named(name, args, scope),
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

    fn variable(&self, name: &str, path: &[String]) -> Result<Value, QueryError> {
        if let Some((_, bound)) = self.vars.iter().rev().find(|(n, _)| n == name) {
            return Ok(bound.as_ref().and_then(|v| value::walk(v, path)));
        }
        match name {
            "ROOT" | "CURRENT" => Ok(value::walk(self.root_tree(), path)),
            "REMOVE" => Ok(None),
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
    Ok(parts)
}

pub(crate) fn parse_expr(value: RawBsonRef<'_>, depth: usize) -> Result<Expr, QueryError> {
    if depth > EXPRESSION_DEPTH_MAX {
        return Err(QueryError::bad_value("expression nested too deeply"));
    }
    match value {
        RawBsonRef::String(s) => {
            if let Some(var) = s.strip_prefix("$$") {
                let mut parts = split_path(var)?;
                let name = parts.remove(0);
                Ok(Expr::Variable(name, parts))
            } else if let Some(path) = s.strip_prefix('$') {
                Ok(Expr::Field(split_path(path)?))
            } else {
                Ok(Expr::Literal(Bson::String(s.to_owned())))
            }
        }
        RawBsonRef::Array(items) => {
            let mut out = Vec::new();
            for item in bson_canonical::compare::array_values(items) {
                out.push(parse_expr(item, depth + 1)?);
            }
            Ok(Expr::Array(out))
        }
        RawBsonRef::Document(doc) => parse_object(doc, depth),
        other => Ok(Expr::Literal(
            Bson::try_from(other).map_err(|e| QueryError::bad_value(e.to_string()))?,
        )),
    }
}

fn parse_object(doc: &RawDocument, depth: usize) -> Result<Expr, QueryError> {
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
            ops::parse_operator(key, arg, depth + 1)
        }
        _ => {
            let mut out = Vec::new();
            for (key, value) in fields {
                if key.starts_with('$') {
                    return Err(QueryError::location(
                        16410,
                        format!("FieldPath field names may not start with '$'. Got: {key}"),
                    ));
                }
                out.push((key.to_owned(), parse_expr(value, depth + 1)?));
            }
            Ok(Expr::Object(out))
        }
    }
}
