//! `partialFilterExpression`: which filters mongod 7.0 accepts, and when two are the same.
//!
//! mongod parses the filter with every special feature banned (`$expr`, `$where`, `$text`,
//! `$jsonSchema`: 224 QueryFeatureNotAllowed), then walks the match tree
//! (`_checkValidFilterExpressions` in `index_catalog_impl.cpp`): `$and`, `$or`, equality,
//! `$lt`/`$lte`/`$gt`/`$gte`, `$exists: true`, `$type`, `$in` (and `$geoWithin`) are allowed
//! at any depth up to `internalPartialFilterExpressionMaxDepth` (4); anything else is 67
//! CannotCreateIndex "Expression not supported in partial index: ...". A document of one
//! clause is that clause (no `$and` level), as mongod's parser returns it; the operators of
//! one field join their document's `$and`.

use super::display;
use super::error;
use crate::error::Error;
use bson::{Bson, Document};
use std::cmp::Ordering;

/// mongod's `internalPartialFilterExpressionMaxDepth` default.
pub const DEPTH_MAX: usize = 4;

/// The special features mongod bans in a partial filter, with the error it gives.
const BANNED: [&str; 4] = ["$expr", "$where", "$text", "$jsonSchema"];

/// Checks a partial filter as mongod does after parsing it; `Err` carries mongod's code.
pub fn check(filter: &Document) -> Result<(), Error> {
    check_banned(filter)?;
    let children = clauses(filter)?;
    check_group(&children, 0)
}

/// One node of the match tree mongod builds: the operator and, for leaves, the path and
/// argument (used only for the refusal message).
#[derive(Debug, Clone)]
enum Node {
    And(Vec<Node>),
    Or(Vec<Node>),
    Allowed,
    Refused(String),
}

/// The features mongod bans before it parses the filter (`kBanAllSpecialFeatures`).
pub fn check_banned(doc: &Document) -> Result<(), Error> {
    for (key, value) in doc {
        if let Some(name) = BANNED.iter().find(|name| **name == key) {
            return Err(error(
                224,
                "QueryFeatureNotAllowed",
                format!("{name} is not allowed in this context"),
            ));
        }
        match value {
            Bson::Document(sub) => check_banned(sub)?,
            Bson::Array(items) => {
                for item in items {
                    if let Bson::Document(sub) = item {
                        check_banned(sub)?;
                    }
                }
            }
            _ => {}
        }
    }
    Ok(())
}

/// The nodes a filter document contributes to its enclosing `$and`.
fn clauses(doc: &Document) -> Result<Vec<Node>, Error> {
    let mut nodes = Vec::new();
    for (key, value) in doc {
        match key.as_str() {
            "$comment" => {}
            "$and" | "$or" => {
                let mut children = Vec::new();
                if let Bson::Array(items) = value {
                    for item in items {
                        if let Bson::Document(sub) = item {
                            children.push(group(clauses(sub)?));
                        }
                    }
                }
                nodes.push(if key == "$and" {
                    Node::And(children)
                } else {
                    Node::Or(children)
                });
            }
            other if other.starts_with('$') => {
                nodes.push(Node::Refused(format!("{other} {}", display::value(value))));
            }
            path => field(path, value, &mut nodes),
        }
    }
    Ok(nodes)
}

/// A document's nodes as one node: a lone clause stands for itself.
fn group(mut nodes: Vec<Node>) -> Node {
    if nodes.len() == 1 {
        nodes.pop().unwrap_or(Node::Allowed)
    } else {
        Node::And(nodes)
    }
}

fn is_operator_document(value: &Bson) -> Option<&Document> {
    match value {
        Bson::Document(doc) if doc.keys().next().is_some_and(|k| k.starts_with('$')) => Some(doc),
        _ => None,
    }
}

fn field(path: &str, value: &Bson, nodes: &mut Vec<Node>) {
    let Some(operators) = is_operator_document(value) else {
        nodes.push(match value {
            Bson::RegularExpression(regex) => {
                Node::Refused(format!("{path} regex /{}/{}", regex.pattern, regex.options))
            }
            _ => Node::Allowed,
        });
        return;
    };
    for (operator, argument) in operators {
        let leaf = || format!("{path} {operator} {}", display::value(argument));
        nodes.push(match operator.as_str() {
            "$eq" | "$gt" | "$gte" | "$lt" | "$lte" | "$type" | "$in" | "$geoWithin" => {
                Node::Allowed
            }
            "$exists" if truthy(argument) => Node::Allowed,
            "$exists" => Node::Refused(format!("$not\n    {path} exists")),
            "$all" => all(path, argument),
            "$options" => continue,
            "$ne" | "$nin" | "$not" => Node::Refused(format!("$not\n    {}", leaf())),
            _ => Node::Refused(leaf()),
        });
    }
}

/// `$all` parses to an `$and` of equalities (an empty one matches nothing).
fn all(path: &str, argument: &Bson) -> Node {
    let Bson::Array(items) = argument else {
        return Node::Refused(format!("{path} $all"));
    };
    if items.is_empty() {
        return Node::Refused("$alwaysFalse".to_owned());
    }
    let children = items
        .iter()
        .map(|item| match item {
            Bson::RegularExpression(_) => Node::Refused(format!("{path} regex")),
            Bson::Document(doc) if doc.contains_key("$elemMatch") => {
                Node::Refused(format!("{path} $elemMatch"))
            }
            _ => Node::Allowed,
        })
        .collect();
    Node::And(children)
}

fn truthy(value: &Bson) -> bool {
    match value {
        Bson::Boolean(b) => *b,
        Bson::Int32(n) => *n != 0,
        Bson::Int64(n) => *n != 0,
        Bson::Double(x) => *x != 0.0,
        Bson::Null | Bson::Undefined => false,
        _ => true,
    }
}

fn check_group(children: &[Node], level: usize) -> Result<(), Error> {
    match children {
        [only] => check_node(only, level),
        _ => check_node(&Node::And(children.to_vec()), level),
    }
}

fn check_node(node: &Node, level: usize) -> Result<(), Error> {
    if level + 1 > DEPTH_MAX {
        return Err(cannot(format!(
            "partialFilterExpression depth may not exceed {DEPTH_MAX}"
        )));
    }
    match node {
        Node::And(children) | Node::Or(children) => {
            for child in children {
                check_node(child, level + 1)?;
            }
            Ok(())
        }
        Node::Allowed => Ok(()),
        Node::Refused(debug) => Err(cannot(format!(
            "Expression not supported in partial index: {debug}\n"
        ))),
    }
}

fn cannot(message: String) -> Error {
    error(67, "CannotCreateIndex", message)
}

/// A filter in a normal form for mongod's `MatchExpression::equivalent` after
/// `parseAndNormalize`: `$and`s flattened, children sorted, values compared by MongoDB's
/// order (so `{a: 1}` and `{a: 1.0}`, or `{a: 1, b: 2}` and `{b: 2, a: 1}`, are one filter).
pub fn equivalent(a: &Document, b: &Document) -> bool {
    normal(a) == normal(b)
}

#[derive(Debug, PartialEq, Eq, PartialOrd, Ord)]
enum Normal {
    Leaf(String, String, Vec<u8>),
    And(Vec<Normal>),
    Or(Vec<Normal>),
}

fn normal(doc: &Document) -> Normal {
    let mut children = Vec::new();
    normal_clauses(doc, &mut children);
    collapse(Normal::And(children))
}

fn normal_clauses(doc: &Document, out: &mut Vec<Normal>) {
    for (key, value) in doc {
        match (key.as_str(), value) {
            ("$comment", _) => {}
            ("$and", Bson::Array(items)) => {
                for item in items {
                    if let Bson::Document(sub) = item {
                        normal_clauses(sub, out);
                    }
                }
            }
            ("$or", Bson::Array(items)) => {
                let children = items
                    .iter()
                    .filter_map(|item| match item {
                        Bson::Document(sub) => Some(normal(sub)),
                        _ => None,
                    })
                    .collect();
                out.push(collapse(Normal::Or(children)));
            }
            (path, value) => match is_operator_document(value) {
                Some(operators) => {
                    for (operator, argument) in operators {
                        let op = if operator == "$eq" {
                            "$eq"
                        } else {
                            operator.as_str()
                        };
                        out.push(Normal::Leaf(
                            path.to_owned(),
                            op.to_owned(),
                            key_of(argument),
                        ));
                    }
                }
                None => out.push(Normal::Leaf(
                    path.to_owned(),
                    "$eq".to_owned(),
                    key_of(value),
                )),
            },
        }
    }
}

fn collapse(node: Normal) -> Normal {
    match node {
        Normal::And(mut children) | Normal::Or(mut children) if children.len() == 1 => {
            children.pop().map_or(Normal::And(Vec::new()), collapse)
        }
        Normal::And(mut children) => {
            children.sort();
            children.dedup();
            Normal::And(children)
        }
        Normal::Or(mut children) => {
            children.sort();
            children.dedup();
            Normal::Or(children)
        }
        leaf => leaf,
    }
}

/// The canonical key encoding of a value: equal exactly when MongoDB's order says equal.
pub fn key_of(value: &Bson) -> Vec<u8> {
    let holder = bson::RawDocumentBuf::try_from(&bson::doc! {"v": value.clone()});
    match holder {
        Ok(raw) => match raw.get("v") {
            Ok(Some(v)) => bson_canonical::key::encode(v),
            _ => Vec::new(),
        },
        Err(_) => Vec::new(),
    }
}

/// MongoDB's order over two values.
pub fn compare(a: &Bson, b: &Bson) -> Ordering {
    key_of(a).cmp(&key_of(b))
}

#[cfg(test)]
mod tests {
    use super::*;
    use bson::doc;

    fn code(filter: Document) -> i32 {
        check(&filter).map_or_else(|e| e.code().code(), |()| 0)
    }

    #[test]
    fn allowed_expressions_pass_and_others_are_67() {
        for allowed in [
            doc! {"a": 1},
            doc! {"a": {"$eq": null}},
            doc! {"a": {"$exists": true}, "b": {"$gt": 5, "$lt": 9}},
            doc! {"a": {"$type": "string"}},
            doc! {"$and": [{"a": 1}, {"b": {"$lte": 2}}]},
            doc! {"$or": [{"a": 1}, {"b": {"$in": [1, 2]}}]},
            doc! {"a": {"$all": [1, 2]}},
            doc! {"$and": [{"$and": [{"$and": [{"x": 3}]}]}]},
        ] {
            assert_eq!(code(allowed.clone()), 0, "{allowed:?}");
        }
        for refused in [
            doc! {"a": {"$ne": 1}},
            doc! {"a": {"$exists": false}},
            doc! {"a": {"$nin": [1]}},
            doc! {"a": bson::Regex { pattern: "abc".try_into().expect("p"), options: "".try_into().expect("o") }},
            doc! {"a": {"$regex": "abc"}},
            doc! {"a": {"$elemMatch": {"b": 1}}},
            doc! {"a": {"$size": 1}},
            doc! {"$nor": [{"a": 1}]},
            doc! {"a": {"$not": {"$gt": 1}}},
            doc! {"$and": [{"$and": [{"$and": [{"$and": [{"x": 3}]}]}]}]},
        ] {
            assert_eq!(code(refused.clone()), 67, "{refused:?}");
        }
        assert_eq!(code(doc! {"$expr": {"$eq": ["$x", 5]}}), 224);
        assert_eq!(code(doc! {"a": 1, "$where": "true"}), 224);
    }

    #[test]
    fn equivalent_filters_ignore_order_and_number_types() {
        assert!(equivalent(&doc! {"a": 1, "b": 2}, &doc! {"b": 2.0, "a": 1}));
        assert!(equivalent(
            &doc! {"$and": [{"a": 1}, {"b": 2}]},
            &doc! {"a": 1, "b": 2}
        ));
        assert!(equivalent(&doc! {"a": {"$eq": 1}}, &doc! {"a": 1}));
        assert!(!equivalent(
            &doc! {"a": {"$gt": 1}},
            &doc! {"a": {"$gte": 1}}
        ));
        assert!(!equivalent(&doc! {"a": 1}, &doc! {"a": 2}));
    }
}
