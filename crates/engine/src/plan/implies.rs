//! Whether a query is sure to select only documents a partial index holds: the query
//! implies the index's `partialFilterExpression`. Sound, not complete: `false` only means
//! the index is not used without a hint.
//!
//! A partial filter is a conjunction of clauses on paths (`$and` flattened); each clause
//! must follow from the query's predicates on the same path:
//! - the same clause appears in the query's top-level conjunction (canonical equality);
//! - `$exists: true` follows from any equality without null or from any comparison;
//! - `$eq`/`$gt`/`$gte`/`$lt`/`$lte` follow from an equality whose every value is a plain
//!   scalar satisfying the clause (some element equals the value, so that element satisfies
//!   the clause), or from a comparison of the same direction and bracket at least as tight.
//!
//! `$type`, `$in` and `$or` clauses follow only by the first rule (a value equal to the
//! query's may be of another numeric type).

use super::predicates::{Compare, Predicate, Predicates};
use bson::raw::RawBsonRef;
use bson::{Bson, Document, RawDocument, RawDocumentBuf, rawdoc};
use bson_canonical::compare::{compare_values, type_bracket};
use std::cmp::Ordering;

/// Whether every document `query` (with its `predicates`) matches is matched by `partial`.
pub(crate) fn implies(
    query: Option<&RawDocument>,
    predicates: &Predicates<'_>,
    partial: &Document,
) -> bool {
    let conjuncts = query.map(top_level).unwrap_or_default();
    clauses_hold(partial, &conjuncts, predicates, 0)
}

fn clauses_hold(
    partial: &Document,
    conjuncts: &[(String, Vec<u8>)],
    predicates: &Predicates<'_>,
    depth: usize,
) -> bool {
    if depth > 8 {
        return false;
    }
    partial.iter().all(|(path, clause)| {
        if path == "$and" {
            let Bson::Array(items) = clause else {
                return false;
            };
            return items.iter().all(|item| match item {
                Bson::Document(sub) => clauses_hold(sub, conjuncts, predicates, depth + 1),
                _ => false,
            });
        }
        if path.starts_with('$') {
            return false;
        }
        let key = canonical(clause);
        if conjuncts.iter().any(|(p, c)| p == path && *c == key) {
            return true;
        }
        let operators = match clause {
            Bson::Document(doc) if doc.keys().next().is_some_and(|k| k.starts_with('$')) => {
                doc.clone()
            }
            value => {
                let mut doc = Document::new();
                doc.insert("$eq", value.clone());
                doc
            }
        };
        operators
            .iter()
            .all(|(op, operand)| operator_holds(path, op, operand, predicates))
    })
}

/// The top-level conjuncts of `query` (with `$and` members), each as path and the
/// canonical key of its value.
fn top_level(query: &RawDocument) -> Vec<(String, Vec<u8>)> {
    let mut out = Vec::new();
    collect(query, &mut out, 0);
    out
}

fn collect(query: &RawDocument, out: &mut Vec<(String, Vec<u8>)>, depth: usize) {
    if depth > 8 {
        return;
    }
    for element in query.iter_elements().flatten() {
        let Ok(value) = element.value() else { continue };
        let key = element.key().as_str();
        if key == "$and" {
            if let RawBsonRef::Array(items) = value {
                for item in items.into_iter().flatten() {
                    if let RawBsonRef::Document(sub) = item {
                        collect(sub, out, depth + 1);
                    }
                }
            }
        } else if !key.starts_with('$') {
            out.push((key.to_owned(), bson_canonical::encode(value)));
        }
    }
}

fn canonical(value: &Bson) -> Vec<u8> {
    crate::index::canonical_key(value)
}

fn operator_holds(path: &str, op: &str, operand: &Bson, predicates: &Predicates<'_>) -> bool {
    let on_path = predicates.on(path);
    if op == "$exists" {
        return crate::index::truthy(operand)
            && on_path.iter().any(|p| match p {
                Predicate::Equal(values) => {
                    !values.is_empty()
                        && values
                            .iter()
                            .all(|v| !matches!(v, RawBsonRef::Null | RawBsonRef::Undefined))
                }
                Predicate::Compare(..) | Predicate::Exists => true,
            });
    }
    let wanted = match op {
        "$eq" => None,
        "$gt" => Some(Compare::Gt),
        "$gte" => Some(Compare::Gte),
        "$lt" => Some(Compare::Lt),
        "$lte" => Some(Compare::Lte),
        _ => return false,
    };
    let Ok(holder) = RawDocumentBuf::try_from(&bson::doc! { "v": operand.clone() }) else {
        return false;
    };
    let Ok(Some(operand_raw)) = holder.get("v") else {
        return false;
    };
    on_path.iter().any(|p| match p {
        Predicate::Equal(values) => {
            !values.is_empty() && values.iter().all(|&v| scalar_satisfies(v, op, operand))
        }
        Predicate::Compare(have, bound) => {
            wanted.is_some_and(|want| tighter(*have, *bound, want, operand_raw))
        }
        Predicate::Exists => false,
    })
}

/// Whether a plain scalar `value` satisfies `{v: {op: operand}}`.
fn scalar_satisfies(value: RawBsonRef<'_>, op: &str, operand: &Bson) -> bool {
    if matches!(
        value,
        RawBsonRef::Array(_)
            | RawBsonRef::Document(_)
            | RawBsonRef::Null
            | RawBsonRef::Undefined
            | RawBsonRef::RegularExpression(_)
    ) {
        return false;
    }
    let Ok(filter) = RawDocumentBuf::try_from(&bson::doc! { "v": { op: operand.clone() } }) else {
        return false;
    };
    let Ok(filter) = query::Filter::parse(&filter) else {
        return false;
    };
    let mut doc = rawdoc! {};
    doc.append(bson::raw::cstr!("v"), value);
    filter.matches(&doc)
}

/// Whether the query's `have bound` is at least as tight as the clause's `want operand`:
/// every value that satisfies the first satisfies the second.
fn tighter(have: Compare, bound: RawBsonRef<'_>, want: Compare, operand: RawBsonRef<'_>) -> bool {
    if type_bracket(&bound) != type_bracket(&operand) {
        return false;
    }
    let order = compare_values(bound, operand);
    match (have, want) {
        (Compare::Gt, Compare::Gt | Compare::Gte) | (Compare::Gte, Compare::Gte) => {
            order == Ordering::Greater || order == Ordering::Equal
        }
        (Compare::Gte, Compare::Gt) => order == Ordering::Greater,
        (Compare::Lt, Compare::Lt | Compare::Lte) | (Compare::Lte, Compare::Lte) => {
            order == Ordering::Less || order == Ordering::Equal
        }
        (Compare::Lte, Compare::Lt) => order == Ordering::Less,
        _ => false,
    }
}
