//! Find projections: inclusion, exclusion, `_id` rules, `$slice`, `$elemMatch`,
//! positional `$` and computed fields.
//!
//! A projection is parsed into a tree of paths. Inclusion keeps the named
//! fields in document order (computed fields follow, in projection order);
//! exclusion copies everything else. `_id` is kept unless excluded by name.
//! Inside arrays, a nested path applies to each element that is a document;
//! inclusion drops the other elements, exclusion keeps them.

use crate::error::QueryError;
use crate::expr::Expression;
use crate::filter::Filter;
use bson::raw::{RawDocument, RawDocumentBuf};
use bson::{Bson, Document, RawBsonRef};
use bson_canonical::compare::elements;

/// A parsed projection.
#[derive(Debug, Clone, Default)]
pub struct Projection {
    tree: Vec<(String, Node)>,
    inclusion: bool,
    id_excluded: bool,
}

#[derive(Debug, Clone)]
enum Node {
    Include,
    Exclude,
    Slice(Vec<i64>),
    ElemMatch(Box<Filter>),
    Positional,
    Computed(Box<Expression>),
    Children(Vec<(String, Node)>),
}

fn collision(path: &str) -> QueryError {
    QueryError::Projection {
        code: 31250,
        message: format!("Path collision at {path}"),
    }
}

fn insert(tree: &mut Vec<(String, Node)>, path: &str, node: Node) -> Result<(), QueryError> {
    let (head, rest) = match path.split_once('.') {
        Some((h, r)) => (h, Some(r)),
        None => (path, None),
    };
    let position = tree.iter().position(|(k, _)| k == head);
    match (rest, position) {
        (None, None) => tree.push((head.to_owned(), node)),
        (None, Some(_)) => return Err(collision(path)),
        (Some(rest), None) => {
            let mut children = Vec::new();
            insert(&mut children, rest, node)?;
            tree.push((head.to_owned(), Node::Children(children)));
        }
        (Some(rest), Some(i)) => match &mut tree[i].1 {
            Node::Children(children) => insert(children, rest, node)?,
            _ => return Err(collision(path)),
        },
    }
    Ok(())
}

impl Projection {
    /// Parses a projection document.
    pub fn parse(spec: &RawDocument) -> Result<Projection, QueryError> {
        let mut projection = Projection::default();
        let mut includes = None::<String>;
        let mut excludes = None::<String>;
        for (key, value) in elements(spec) {
            if key.is_empty() || key.starts_with('$') {
                return Err(QueryError::Projection {
                    code: 16410,
                    message: format!("FieldPath field names may not start with '$'. Got: {key}"),
                });
            }
            let (path, node) = Self::parse_field(key, value)?;
            match &node {
                Node::Exclude if path == "_id" => projection.id_excluded = true,
                Node::Include if path == "_id" => {}
                Node::Exclude => excludes = excludes.or(Some(path.clone())),
                Node::Include | Node::Positional | Node::Computed(_) | Node::ElemMatch(_) => {
                    includes = includes.or(Some(path.clone()));
                }
                _ => {}
            }
            if let (Some(_), Some(excluded)) = (&includes, &excludes) {
                return Err(QueryError::Projection {
                    code: 31254,
                    message: format!(
                        "Cannot do exclusion on field {excluded} in inclusion projection"
                    ),
                });
            }
            insert(&mut projection.tree, &path, node)?;
        }
        projection.inclusion = includes.is_some();
        Ok(projection)
    }

    fn parse_field(key: &str, value: RawBsonRef<'_>) -> Result<(String, Node), QueryError> {
        if let Some(array_path) = key.strip_suffix(".$") {
            if array_path.contains(".$") {
                return Err(QueryError::bad_value(
                    "Positional projection may only be used at the end",
                ));
            }
            return Ok((array_path.to_owned(), Node::Positional));
        }
        let node = match value {
            RawBsonRef::Boolean(b) => {
                if b {
                    Node::Include
                } else {
                    Node::Exclude
                }
            }
            RawBsonRef::Int32(_)
            | RawBsonRef::Int64(_)
            | RawBsonRef::Double(_)
            | RawBsonRef::Decimal128(_) => {
                if crate::value::true_value(value) {
                    Node::Include
                } else {
                    Node::Exclude
                }
            }
            RawBsonRef::Document(doc) => match elements(doc).next() {
                Some(("$slice", arg)) => Node::Slice(parse_slice(arg)?),
                Some(("$elemMatch", RawBsonRef::Document(filter))) => {
                    Node::ElemMatch(Box::new(Filter::parse(filter)?))
                }
                Some(("$elemMatch", _)) => {
                    return Err(QueryError::bad_value(
                        "elemMatch: Invalid argument, object required.",
                    ));
                }
                Some(("$meta", _)) => {
                    return Err(QueryError::bad_value("$meta projections are not supported"));
                }
                _ => Node::Computed(Box::new(Expression::parse(value)?)),
            },
            other => Node::Computed(Box::new(Expression::parse(other)?)),
        };
        Ok((key.to_owned(), node))
    }

    /// Whether this is an inclusion projection.
    pub fn is_inclusion(&self) -> bool {
        self.inclusion
    }

    /// Projects `doc`. `filter` is the query's filter, which the positional
    /// `$` needs.
    pub fn apply(
        &self,
        doc: &RawDocument,
        filter: Option<&Filter>,
    ) -> Result<RawDocumentBuf, QueryError> {
        let tree = Document::try_from(doc).map_err(|e| QueryError::bad_value(e.to_string()))?;
        let mut out = Document::new();
        if self.inclusion
            && !self.id_excluded
            && let Some(id) = tree.get("_id")
        {
            out.insert("_id", id.clone());
        }
        let projected = self.project(&tree, &self.tree, doc, filter, "")?;
        for (key, value) in projected {
            if key == "_id" && (self.id_excluded || out.contains_key("_id")) {
                if !self.id_excluded {
                    out.insert("_id", value);
                }
                continue;
            }
            out.insert(key, value);
        }
        RawDocumentBuf::try_from(&out).map_err(|e| QueryError::bad_value(e.to_string()))
    }

    fn project(
        &self,
        doc: &Document,
        tree: &[(String, Node)],
        root: &RawDocument,
        filter: Option<&Filter>,
        prefix: &str,
    ) -> Result<Document, QueryError> {
        let mut out = Document::new();
        for (key, value) in doc {
            let node = tree.iter().find(|(k, _)| k == key).map(|(_, n)| n);
            let path = if prefix.is_empty() {
                key.clone()
            } else {
                format!("{prefix}.{key}")
            };
            let kept = match node {
                None if key == "_id" && prefix.is_empty() => {
                    (!self.id_excluded).then(|| value.clone())
                }
                None => (!self.inclusion).then(|| value.clone()),
                Some(node) => self.apply_node(node, value, root, filter, &path)?,
            };
            if let Some(v) = kept {
                out.insert(key.clone(), v);
            }
        }
        // Computed fields (and computed fields nested in sub-trees) appear
        // after the document's own fields when the document lacks them.
        for (key, node) in tree {
            if doc.contains_key(key) {
                continue;
            }
            if let Some(v) = self.computed_only(node, root)? {
                out.insert(key.clone(), v);
            }
        }
        Ok(out)
    }

    fn computed_only(&self, node: &Node, root: &RawDocument) -> Result<Option<Bson>, QueryError> {
        Ok(match node {
            Node::Computed(expr) => expr.evaluate(root)?,
            Node::Children(children) => {
                let mut sub = Document::new();
                for (key, child) in children {
                    if let Some(v) = self.computed_only(child, root)? {
                        sub.insert(key.clone(), v);
                    }
                }
                (!sub.is_empty()).then_some(Bson::Document(sub))
            }
            _ => None,
        })
    }

    fn apply_node(
        &self,
        node: &Node,
        value: &Bson,
        root: &RawDocument,
        filter: Option<&Filter>,
        path: &str,
    ) -> Result<Option<Bson>, QueryError> {
        Ok(match node {
            Node::Include => Some(value.clone()),
            Node::Exclude => None,
            Node::Computed(expr) => expr.evaluate(root)?,
            Node::Slice(numbers) => Some(match value {
                Bson::Array(items) => Bson::Array(crate::expr::slice_items(items, numbers)?),
                other => other.clone(),
            }),
            Node::ElemMatch(sub) => match value {
                Bson::Array(items) => items
                    .iter()
                    .find(|item| element_matches(sub, item))
                    .map(|item| Bson::Array(vec![item.clone()])),
                _ => None,
            },
            Node::Positional => {
                let Bson::Array(items) = value else {
                    return Ok(Some(value.clone()));
                };
                let index = filter.and_then(|f| f.positional_index(root, path)).ok_or_else(|| {
                    QueryError::location(
                        51246,
                        "Executor error during find command :: caused by :: positional operator \
                         '.$' couldn't find a matching element in the array",
                    )
                })?;
                items.get(index).map(|item| Bson::Array(vec![item.clone()]))
            }
            Node::Children(children) => match value {
                // An included path below a document that lacks it leaves the
                // document empty rather than dropping it, as MongoDB does.
                Bson::Document(sub) => Some(Bson::Document(
                    self.project(sub, children, root, filter, path)?,
                )),
                Bson::Array(items) => {
                    let mut out = Vec::new();
                    for item in items {
                        match item {
                            Bson::Document(sub) => out.push(Bson::Document(
                                self.project(sub, children, root, filter, path)?,
                            )),
                            Bson::Array(_) if !self.inclusion => out.push(item.clone()),
                            _ if !self.inclusion => out.push(item.clone()),
                            _ => {}
                        }
                    }
                    Some(Bson::Array(out))
                }
                other => (!self.inclusion).then(|| other.clone()),
            },
        })
    }
}

fn element_matches(filter: &Filter, item: &Bson) -> bool {
    let Bson::Document(doc) = item else {
        return false;
    };
    RawDocumentBuf::try_from(doc).is_ok_and(|raw| filter.matches(&raw))
}

fn parse_slice(arg: RawBsonRef<'_>) -> Result<Vec<i64>, QueryError> {
    let numbers: Vec<i64> = match arg {
        RawBsonRef::Array(items) => bson_canonical::compare::array_values(items)
            .map(|v| {
                crate::value::as_whole_i64(v).or_else(|| crate::value::as_f64(v).map(|f| f as i64))
            })
            .collect::<Option<_>>()
            .ok_or_else(|| QueryError::location(28724, "$slice arguments must be numbers"))?,
        other => vec![
            crate::value::as_f64(other)
                .map(|f| f as i64)
                .ok_or_else(|| {
                    QueryError::location(
                        28724,
                        "$slice only supports numbers and [skip, limit] arrays",
                    )
                })?,
        ],
    };
    if numbers.len() != 1 && numbers.len() != 2 {
        return Err(QueryError::location(
            28724,
            "$slice array argument must be of the form [skip, limit]",
        ));
    }
    if numbers.len() == 2 && numbers[1] <= 0 {
        return Err(QueryError::location(28724, "$slice limit must be positive"));
    }
    Ok(numbers)
}
