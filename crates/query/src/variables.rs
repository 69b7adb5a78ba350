//! Command-level variables: a command's `let` constants and `$$NOW`, fixed when the
//! command is parsed and read by every expression in it.
//!
//! MongoDB evaluates a command's `let` once, before any document is examined, so its
//! values are constants; they are bound while the command's filter, projection,
//! pipeline or update is parsed ([`crate::Filter::parse_with`] and kin). A variable
//! that an expression binds itself (`$let`, `$map`, `$filter`) shadows a `let`
//! variable of the same name, as in MongoDB.

use crate::error::QueryError;
use crate::expr::{Expr, ParseCtx, Scope};
use bson::raw::RawDocument;
use bson::{Bson, DateTime, rawdoc};
use std::sync::Arc;

/// System variables a client cannot set through `let` (MongoDB's
/// `kSystemVarValidators`).
const SYSTEM_VARIABLES: &[&str] = &[
    "NOW",
    "CLUSTER_TIME",
    "USER_ROLES",
    "SEARCH_META",
    "IS_MR",
    "JS_SCOPE",
];

/// The variables of one command: its `let` values and the time `$$NOW` stands for.
///
/// ```
/// use bson::rawdoc;
/// use query::{Filter, Variables};
///
/// let vars = Variables::from_let(&rawdoc! {"id": {"$add": [1, 1]}}).unwrap();
/// let filter =
///     Filter::parse_with(&rawdoc! {"$expr": {"$eq": ["$_id", "$$id"]}}, &vars).unwrap();
/// assert!(filter.matches(&rawdoc! {"_id": 2}));
/// ```
#[derive(Debug, Clone, Default)]
pub struct Variables {
    user: Vec<(String, Arc<Option<Bson>>)>,
    /// `None`: `$$NOW` reads the clock when an expression naming it is parsed.
    now: Option<DateTime>,
}

/// No `let` variables, `$$NOW` read at parse time: what [`crate::Filter::parse`] and
/// the other plain parse functions use.
pub(crate) static NO_VARIABLES: Variables = Variables {
    user: Vec::new(),
    now: None,
};

impl Variables {
    /// No `let` variables; `$$NOW` is the current time, fixed for every expression
    /// parsed with these variables.
    pub fn new() -> Variables {
        Variables::at(DateTime::now())
    }

    /// No `let` variables; `$$NOW` is `now`.
    pub fn at(now: DateTime) -> Variables {
        Variables {
            user: Vec::new(),
            now: Some(now),
        }
    }

    /// Evaluates a command's `let` document, with `$$NOW` the current time.
    /// See [`Variables::from_let_at`].
    pub fn from_let(spec: &RawDocument) -> Result<Variables, QueryError> {
        Variables::from_let_at(spec, DateTime::now())
    }

    /// Evaluates a command's `let` document: each value is an expression evaluated
    /// once, against no document, in order (a later value may read an earlier
    /// one). Names must be valid user variable names (`FailedToParse` under
    /// "Invalid 'let' parameter"); system variables cannot be set (4738901); an
    /// expression that reads a field or `$$ROOT`/`$$CURRENT` is refused (4890500).
    pub fn from_let_at(spec: &RawDocument, now: DateTime) -> Result<Variables, QueryError> {
        let mut vars = Variables::at(now);
        let empty = rawdoc! {};
        for element in spec.iter_elements() {
            let element = element.map_err(|e| QueryError::bad_value(e.to_string()))?;
            let name = element.key().as_str();
            let value = element
                .value()
                .map_err(|e| QueryError::bad_value(e.to_string()))?;
            check_user_name(name)?;
            let expr = crate::expr::parse_expr(value, ParseCtx::top(&vars))?;
            if expr.reads_document() {
                return Err(QueryError::location(
                    4_890_500,
                    "Command let Expression tried to access a field, but this is not allowed \
                     because Command let Expressions run before the query examines any \
                     documents.",
                ));
            }
            let result = expr.eval(&mut Scope::new(&empty))?;
            vars.user.retain(|(existing, _)| existing != name);
            vars.user.push((name.to_owned(), Arc::new(result)));
        }
        Ok(vars)
    }

    /// These variables and an update statement's constants (`c`): literal values, not
    /// expressions, whose names follow MongoDB's rules for reading a variable
    /// (`FailedToParse`). A constant shadows a `let` variable of the same name.
    pub fn with_constants(&self, constants: &RawDocument) -> Result<Variables, QueryError> {
        let mut vars = self.clone();
        for element in constants.iter_elements() {
            let element = element.map_err(|e| QueryError::bad_value(e.to_string()))?;
            let name = element.key().as_str();
            check_name(name, |first| first.is_ascii_alphabetic(), "a variable name")
                .map_err(QueryError::FailedToParse)?;
            let value = element
                .value()
                .ok()
                .and_then(|v| Bson::try_from(v).ok())
                .ok_or_else(|| QueryError::bad_value(format!("invalid constant {name}")))?;
            vars.user.retain(|(existing, _)| existing != name);
            vars.user.push((name.to_owned(), Arc::new(Some(value))));
        }
        Ok(vars)
    }

    /// These variables and `values` bound as further `let` variables (a value of `None`
    /// is a variable that reads as missing), each shadowing one of the same name: what a
    /// `$lookup`'s `let` binds for its sub-pipeline, per input document.
    pub(crate) fn with_values(&self, values: Vec<(String, Option<Bson>)>) -> Variables {
        let mut vars = self.clone();
        for (name, value) in values {
            vars.user.retain(|(existing, _)| *existing != name);
            vars.user.push((name, Arc::new(value)));
        }
        vars
    }

    /// Whether no `let` variable is defined.
    pub fn is_empty(&self) -> bool {
        self.user.is_empty()
    }

    /// The value `$$name` stands for when no expression binds `name` itself:
    /// a `let` variable or `$$NOW`. `None` for any other name.
    pub(crate) fn lookup(&self, name: &str) -> Option<Arc<Option<Bson>>> {
        if let Some((_, value)) = self.user.iter().rev().find(|(n, _)| n == name) {
            return Some(Arc::clone(value));
        }
        (name == "NOW")
            .then(|| Arc::new(Some(Bson::DateTime(self.now.unwrap_or_else(DateTime::now)))))
    }
}

/// MongoDB's `validateNameForUserWrite` for a `let` name, with its context.
pub(crate) fn check_user_name(name: &str) -> Result<(), QueryError> {
    if SYSTEM_VARIABLES.contains(&name) {
        return Err(QueryError::location(
            4_738_901,
            format!("Attempt to set internal constant: {name}"),
        ));
    }
    if name == "CURRENT" {
        return Ok(());
    }
    check_name(
        name,
        |first| first.is_ascii_lowercase(),
        "a user variable name",
    )
    .map_err(|message| QueryError::FailedToParse(message).context("Invalid 'let' parameter"))
}

/// MongoDB's variable name rule: a first character that `first_ok` accepts (or any
/// non-ASCII one), then ASCII letters, digits, `_` or non-ASCII characters.
fn check_name(name: &str, first_ok: fn(char) -> bool, what: &str) -> Result<(), String> {
    let mut chars = name.chars();
    let Some(first) = chars.next() else {
        return Err("empty variable names are not allowed".to_owned());
    };
    if !first_ok(first) && first.is_ascii() {
        return Err(format!(
            "'{name}' starts with an invalid character for {what}"
        ));
    }
    if let Some(bad) = chars.find(|c| !(c.is_ascii_alphanumeric() || *c == '_' || !c.is_ascii())) {
        return Err(format!(
            "'{name}' contains an invalid character for a variable name: '{bad}'"
        ));
    }
    Ok(())
}

impl Expr {
    /// Whether evaluating the expression reads the document: a field path, or
    /// `$$ROOT`/`$$CURRENT`.
    pub(crate) fn reads_document(&self) -> bool {
        self.any(&mut |node| match node {
            Expr::Field(_) => true,
            Expr::Variable(name, _, preset) => {
                preset.is_none() && matches!(name.as_str(), "ROOT" | "CURRENT")
            }
            _ => false,
        })
    }
}
