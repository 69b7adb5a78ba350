//! The field trees of pipeline `$set`/`$addFields` and `$unset`, applied with
//! aggregation's semantics: a dotted path maps over every element of an array it
//! passes through.
//!
//! `$set: {"a.b": v}` sets `b` in each document element of an array `a`, replaces
//! each other element (and a scalar or missing `a`) with `{b: v}`, and descends
//! into nested arrays (mongodb/mongo `src/mongo/db/exec/projection_node.cpp`,
//! `ProjectionNode::applyExpressionsToValue`). `$unset: "a.b"` removes `b` from
//! each document element and leaves every other value as it is (the exclusion
//! projection it stands for). A numeric component names a field, never an
//! array position.

use bson::{Bson, Document, RawDocument};
use query::Expression;

use crate::error::UpdateError;

/// What `$set` puts at one name: a value, or fields below it.
#[derive(Debug, Clone)]
pub(crate) enum SetNode {
    Value(Expression),
    Fields(Vec<(String, SetNode)>),
}

/// The fields of one `$set` stage, in the order MongoDB processes them (first
/// appearance in the specification).
#[derive(Debug, Clone, Default)]
pub(crate) struct SetTree {
    fields: Vec<(String, SetNode)>,
}

/// A `$set` tree with its expressions evaluated; `None` removes the field (`$$REMOVE`).
enum Evaluated {
    Value(Option<Bson>),
    Fields(Vec<(String, Evaluated)>),
}

impl SetTree {
    /// Adds `path`, refusing a path equal to, inside or above one already given
    /// (MongoDB's 40176; `spec` is the stage text for the message).
    pub(crate) fn add(
        &mut self,
        path: &[String],
        expression: Expression,
        spec: &str,
    ) -> Result<(), UpdateError> {
        let conflict = |other: String| UpdateError::Location {
            code: 40176,
            message: format!(
                "specification contains two conflicting paths. Cannot specify both '{}' and '{other}': {spec}",
                path.join(".")
            ),
        };
        let Some((last, parents)) = path.split_last() else {
            return Ok(());
        };
        let mut fields = &mut self.fields;
        for (depth, name) in parents.iter().enumerate() {
            let index = match fields.iter().position(|(n, _)| n == name) {
                Some(index) => index,
                None => {
                    fields.push((name.clone(), SetNode::Fields(Vec::new())));
                    fields.len() - 1
                }
            };
            let Some((_, node)) = fields.get_mut(index) else {
                return Ok(());
            };
            match node {
                SetNode::Fields(children) => fields = children,
                SetNode::Value(_) => {
                    return Err(conflict(path.get(..=depth).unwrap_or(path).join(".")));
                }
            }
        }
        if let Some((_, existing)) = fields.iter().find(|(n, _)| n == last) {
            let mut other = path.to_vec();
            other.extend(first_leaf(existing));
            return Err(conflict(other.join(".")));
        }
        fields.push((last.clone(), SetNode::Value(expression)));
        Ok(())
    }

    /// Evaluates every expression against `root`, then applies the values to `doc`.
    pub(crate) fn apply(&self, root: &RawDocument, doc: &mut Document) -> Result<(), UpdateError> {
        let values = evaluate(&self.fields, root)?;
        set_fields(doc, &values);
        Ok(())
    }
}

/// The path from `node` down to its first value (empty for a value).
fn first_leaf(node: &SetNode) -> Vec<String> {
    match node {
        SetNode::Value(_) => Vec::new(),
        SetNode::Fields(children) => match children.first() {
            Some((name, child)) => {
                let mut path = vec![name.clone()];
                path.extend(first_leaf(child));
                path
            }
            None => Vec::new(),
        },
    }
}

fn evaluate(
    fields: &[(String, SetNode)],
    root: &RawDocument,
) -> Result<Vec<(String, Evaluated)>, UpdateError> {
    let mut out = Vec::with_capacity(fields.len());
    for (name, node) in fields {
        let value = match node {
            SetNode::Value(expression) => Evaluated::Value(expression.evaluate(root)?),
            SetNode::Fields(children) => Evaluated::Fields(evaluate(children, root)?),
        };
        out.push((name.clone(), value));
    }
    Ok(out)
}

fn set_fields(doc: &mut Document, fields: &[(String, Evaluated)]) {
    for (name, node) in fields {
        match node {
            Evaluated::Value(Some(value)) => {
                doc.insert(name.clone(), value.clone());
            }
            Evaluated::Value(None) => {
                doc.remove(name);
            }
            Evaluated::Fields(children) => match doc.get_mut(name) {
                Some(slot) => {
                    let current = std::mem::replace(slot, Bson::Null);
                    *slot = set_in_value(current, children);
                }
                None => {
                    doc.insert(name.clone(), set_in_value(Bson::Null, children));
                }
            },
        }
    }
}

/// `$addFields` below a value: into a document, over an array's elements, and
/// otherwise a new document of the computed fields.
fn set_in_value(value: Bson, children: &[(String, Evaluated)]) -> Bson {
    match value {
        Bson::Document(mut doc) => {
            set_fields(&mut doc, children);
            Bson::Document(doc)
        }
        Bson::Array(items) => Bson::Array(
            items
                .into_iter()
                .map(|item| set_in_value(item, children))
                .collect(),
        ),
        _ => {
            let mut doc = Document::new();
            set_fields(&mut doc, children);
            Bson::Document(doc)
        }
    }
}

/// What `$unset` removes at one name: the field, or fields below it.
#[derive(Debug, Clone)]
enum UnsetNode {
    Remove,
    Fields(Vec<(String, UnsetNode)>),
}

/// The paths of one `$unset` stage.
#[derive(Debug, Clone, Default)]
pub(crate) struct UnsetTree {
    fields: Vec<(String, UnsetNode)>,
}

impl UnsetTree {
    /// Adds a path; a shorter path already given covers it, and a shorter path
    /// added later replaces the longer ones below it.
    pub(crate) fn add(&mut self, path: &[String]) {
        let Some((last, parents)) = path.split_last() else {
            return;
        };
        let mut fields = &mut self.fields;
        for name in parents {
            let index = match fields.iter().position(|(n, _)| n == name) {
                Some(index) => index,
                None => {
                    fields.push((name.clone(), UnsetNode::Fields(Vec::new())));
                    fields.len() - 1
                }
            };
            let Some((_, node)) = fields.get_mut(index) else {
                return;
            };
            match node {
                UnsetNode::Fields(children) => fields = children,
                UnsetNode::Remove => return,
            }
        }
        match fields.iter_mut().find(|(n, _)| n == last) {
            Some((_, node)) => *node = UnsetNode::Remove,
            None => fields.push((last.clone(), UnsetNode::Remove)),
        }
    }

    /// Removes the paths from `doc`.
    pub(crate) fn apply(&self, doc: &mut Document) {
        unset_fields(doc, &self.fields);
    }
}

fn unset_fields(doc: &mut Document, fields: &[(String, UnsetNode)]) {
    for (name, node) in fields {
        match node {
            UnsetNode::Remove => {
                doc.remove(name);
            }
            UnsetNode::Fields(children) => {
                if let Some(value) = doc.get_mut(name) {
                    unset_in_value(value, children);
                }
            }
        }
    }
}

fn unset_in_value(value: &mut Bson, children: &[(String, UnsetNode)]) {
    match value {
        Bson::Document(doc) => unset_fields(doc, children),
        Bson::Array(items) => {
            for item in items {
                unset_in_value(item, children);
            }
        }
        _ => {}
    }
}
