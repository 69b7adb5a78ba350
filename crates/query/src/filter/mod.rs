//! Filters: a query document compiled once into a plan, then matched against raw documents.
//!
//! [`Filter::parse`] checks the whole filter up front (unknown operators,
//! malformed arguments, invalid regular expressions) so that matching never
//! fails on the filter's account; [`Filter::matches`] walks only the fields the
//! plan names, skipping the rest of the document by length prefix.

mod eval;
mod parse;
pub(crate) use parse::compile_regex;
pub(crate) mod types;
pub(crate) use eval::walk;

use crate::error::QueryError;
use crate::expr::Expr;
use crate::validate::schema::Schema;
use crate::variables::Variables;
use bson::{RawBson, RawDocument};
use std::sync::Arc;
pub(crate) use types::TypeSelector;

/// A compiled filter.
#[derive(Debug, Clone)]
pub struct Filter {
    root: Node,
}

/// A node of the plan: a logical combination or one path's predicate.
#[derive(Debug, Clone)]
pub(crate) enum Node {
    /// Every child matches (an empty filter matches everything).
    And(Vec<Node>),
    /// Some child matches.
    Or(Vec<Node>),
    /// No child matches.
    Nor(Vec<Node>),
    /// The values at a dotted path satisfy a predicate.
    Path(String, Pred),
    /// `$expr`: an aggregation expression whose value is truthy.
    Expr(Box<Expr>),
    /// `$jsonSchema`.
    Schema(Arc<Schema>),
}

/// A comparison operator.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Comparison {
    Gt,
    Gte,
    Lt,
    Lte,
}

/// A bit-test operator.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum BitTest {
    AllSet,
    AnySet,
    AllClear,
    AnyClear,
}

/// A compiled regular expression with the source MongoDB compares regex values by.
#[derive(Debug)]
pub(crate) struct Pattern {
    pub(crate) regex: regex::Regex,
    pub(crate) source: String,
    pub(crate) options: String,
}

/// One `$in` member.
#[derive(Debug, Clone)]
pub(crate) enum InItem {
    Value(RawBson),
    Regex(Arc<Pattern>),
}

/// A predicate on the values one path reaches.
#[derive(Debug, Clone)]
pub(crate) enum Pred {
    Eq(RawBson),
    Compare(Comparison, RawBson),
    In(Vec<InItem>),
    Regex(Arc<Pattern>),
    Exists(bool),
    Type(Vec<TypeSelector>),
    Size(i64),
    /// `$all`: every member predicate holds (each on any element).
    All(Vec<Pred>),
    /// `$elemMatch` with a query: some array element, as a document, matches.
    ElemMatchObject(Box<Node>),
    /// `$elemMatch` with operators: some array element satisfies all of them.
    ElemMatchValue(Vec<Pred>),
    Mod(i64, i64),
    Bits(BitTest, Vec<u32>),
    /// The path predicate does not hold (`$not`, `$ne`, `$nin`).
    Not(Box<Pred>),
    /// Several operators on one path, each satisfied independently.
    And(Vec<Pred>),
}

impl Filter {
    /// Compiles a filter document.
    pub fn parse(filter: &RawDocument) -> Result<Filter, QueryError> {
        Filter::parse_with(filter, &crate::variables::NO_VARIABLES)
    }

    /// Compiles a filter whose `$expr` may read the command's variables
    /// (`$$name` for a `let` variable, `$$NOW`).
    pub fn parse_with(filter: &RawDocument, vars: &Variables) -> Result<Filter, QueryError> {
        Ok(Filter {
            root: parse::parse_document(filter, crate::expr::ParseCtx::top(vars))?,
        })
    }

    /// Whether the document matches. A run-time failure (a `$expr` type error,
    /// a regex over its step budget) counts as no match; use
    /// [`Filter::try_matches`] to see it.
    pub fn matches(&self, doc: &RawDocument) -> bool {
        self.try_matches(doc).unwrap_or(false)
    }

    /// Whether the document matches, or the error MongoDB would fail the query with.
    pub fn try_matches(&self, doc: &RawDocument) -> Result<bool, QueryError> {
        eval::node_matches(&self.root, doc.as_bytes())
    }

    /// [`Filter::try_matches`] over the bytes of one BSON document, read only as far as
    /// the fields the filter names: a stored 16 KiB document matched on its first fields
    /// costs the cache line they are in, not also its last page (which checking the
    /// terminating zero, as [`RawDocument::from_bytes`] does, would touch). The caller
    /// vouches that `bytes` is one well-formed document (stored documents are validated on
    /// the way in and checksummed at rest); only the length prefix is checked here, and
    /// bytes that fail it are an error, as [`RawDocument::from_bytes`] would report.
    pub fn try_matches_bytes(&self, bytes: &[u8]) -> Result<bool, QueryError> {
        if !crate::raw::is_framed(bytes) {
            let error = RawDocument::from_bytes(bytes).err();
            let message = error.map_or_else(|| "bad document length".to_owned(), |e| e.to_string());
            return Err(QueryError::bad_value(message));
        }
        eval::node_matches(&self.root, bytes)
    }

    /// The dotted paths the filter names at its top level with an equality or
    /// range predicate (for the engine's index selection), in filter order.
    pub fn top_level_paths(&self) -> Vec<&str> {
        let mut out = Vec::new();
        collect_paths(&self.root, &mut out);
        out
    }

    /// The top-level field names the filter reads (the first component of each path it
    /// names, anywhere in it); `None` when it may read the whole document (`$expr`,
    /// `$jsonSchema`). A document cut down to its first occurrences of these fields
    /// matches exactly when the whole one does.
    pub fn top_level_fields(&self) -> Option<std::collections::BTreeSet<String>> {
        let mut out = std::collections::BTreeSet::new();
        collect_fields(&self.root, &mut out).then_some(out)
    }

    /// The array position the positional projection operator `$` resolves to
    /// for `array_path` (the first array element that satisfies the filter's
    /// predicates on paths below `array_path`).
    pub fn positional_index(&self, doc: &RawDocument, array_path: &str) -> Option<usize> {
        eval::positional_index(&self.root, doc, array_path)
    }
}

fn collect_fields(node: &Node, out: &mut std::collections::BTreeSet<String>) -> bool {
    match node {
        Node::And(children) | Node::Or(children) | Node::Nor(children) => {
            children.iter().all(|c| collect_fields(c, out))
        }
        Node::Path(path, _) => {
            let first = path.split('.').next().unwrap_or(path);
            out.insert(first.to_owned());
            true
        }
        Node::Expr(_) | Node::Schema(_) => false,
    }
}

fn collect_paths<'a>(node: &'a Node, out: &mut Vec<&'a str>) {
    match node {
        Node::And(children) => children.iter().for_each(|c| collect_paths(c, out)),
        Node::Path(path, _) => out.push(path),
        _ => {}
    }
}
