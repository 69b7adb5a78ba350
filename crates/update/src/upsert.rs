//! The document an upsert starts from: the query's equality predicates.
//!
//! MongoDB canonicalizes the filter and then keeps only equality predicates and
//! `$and`s of them (mongodb/mongo `src/mongo/db/update/update_driver.cpp`,
//! `populateDocumentWithQueryFields`; `path_support.cpp`, `extractEqualityMatches`).
//! Canonicalization is what makes more than `{a: 1}` and `{a: {$eq: 1}}` count:
//! a single-value `$in` becomes an equality, `$all` is an `$and` of equalities,
//! and an `$or` left with one distinct clause is that clause. `$elemMatch`,
//! ranges, `$ne`, `$nor`, `$not` and regular expressions seed nothing
//! (jstests/core/write/update/upsert_fields.js, upsert_and.js,
//! upsert_fields_duplicate_or.js).

use bson::{Bson, Document, RawDocument, RawDocumentBuf};

use crate::error::UpdateError;
use crate::tree::{self, Action};
use crate::value::equal;

/// The document an upsert inserts before the update applies: every equality the
/// filter implies (`{a: 1}`, `{a: {$eq: 1}}`, `{a: {$in: [1]}}`, `{a: {$all: [1]}}`,
/// `{"a.b": 1}`, inside `$and` and a one-clause `$or`), with dotted paths expanded
/// into sub-documents, fields in path order (MongoDB keeps them in a map keyed by
/// path) and `_id` first. Two equalities on one path, or on a path and its
/// prefix, are refused with `NotSingleValueField`. A replacement upsert uses
/// [`upsert_seed_id`] instead.
pub fn upsert_seed(filter: &RawDocument) -> Result<RawDocumentBuf, UpdateError> {
    seed(filter, |_| true)
}

/// The seed of a replacement upsert: only the equalities on `_id` (and paths inside it),
/// since the replacement supplies every other field. As in mongod, equalities on other
/// paths are ignored, so two of them on one path are no conflict.
pub fn upsert_seed_id(filter: &RawDocument) -> Result<RawDocumentBuf, UpdateError> {
    seed(filter, |path| path == "_id" || path.starts_with("_id."))
}

fn seed(filter: &RawDocument, keep: impl Fn(&str) -> bool) -> Result<RawDocumentBuf, UpdateError> {
    let tree =
        Document::try_from(filter).map_err(|e| UpdateError::failed_to_parse(e.to_string()))?;
    let mut equalities: Vec<(String, Bson)> = Vec::new();
    collect(&tree, &mut equalities);
    equalities.retain(|(path, _)| keep(path));
    equalities.sort_by(|a, b| a.0.as_bytes().cmp(b.0.as_bytes()));
    let mut seed = Document::new();
    let mut seen: Vec<&str> = Vec::new();
    for (path, value) in &equalities {
        check_conflict(&seen, path)?;
        seen.push(path);
        let parts: Vec<String> = path.split('.').map(str::to_owned).collect();
        tree::modify(&mut seed, &parts, true, &mut |_| {
            Ok(Action::Set(value.clone()))
        })?;
    }
    if let Some(id) = seed.remove("_id") {
        let mut ordered = Document::new();
        ordered.insert("_id", id);
        ordered.extend(seed);
        seed = ordered;
    }
    RawDocumentBuf::try_from(&seed).map_err(|e| UpdateError::bad_value(e.to_string()))
}

/// MongoDB's `checkEqualityConflicts`: the path itself or a prefix of it already
/// seeded. Paths arrive sorted, so a prefix always comes first.
fn check_conflict(seen: &[&str], path: &str) -> Result<(), UpdateError> {
    for earlier in seen {
        if *earlier == path {
            return Err(UpdateError::NotSingleValueField(format!(
                "cannot infer query fields to set, path '{path}' is matched twice"
            )));
        }
        if path.starts_with(&format!("{earlier}.")) {
            return Err(UpdateError::NotSingleValueField(format!(
                "cannot infer query fields to set, both paths '{path}' and '{earlier}' are matched"
            )));
        }
    }
    Ok(())
}

fn collect(filter: &Document, out: &mut Vec<(String, Bson)>) {
    for (key, value) in filter {
        match key.as_str() {
            "$and" => {
                for clause in clauses(value) {
                    collect(clause, out);
                }
            }
            "$or" => {
                // The optimizer drops repeated clauses (7.3+) and replaces an
                // `$or` of one clause by the clause.
                let mut distinct: Vec<&Document> = Vec::new();
                for clause in clauses(value) {
                    let repeated = distinct.iter().any(|seen| {
                        equal(
                            &Bson::Document((*seen).clone()),
                            &Bson::Document(clause.clone()),
                        )
                    });
                    if !repeated {
                        distinct.push(clause);
                    }
                }
                if let [only] = distinct.as_slice() {
                    collect(only, out);
                }
            }
            name if name.starts_with('$') => {}
            _ => {
                for value in equalities(value) {
                    out.push((key.clone(), value));
                }
            }
        }
    }
}

fn clauses(value: &Bson) -> impl Iterator<Item = &Document> {
    let items = match value {
        Bson::Array(items) => items.as_slice(),
        _ => &[],
    };
    items.iter().filter_map(|item| match item {
        Bson::Document(clause) => Some(clause),
        _ => None,
    })
}

/// The values a field's predicate pins it to.
fn equalities(value: &Bson) -> Vec<Bson> {
    let operators = match value {
        Bson::Document(d) if d.keys().next().is_some_and(|k| k.starts_with('$')) => d,
        Bson::RegularExpression(_) => return Vec::new(),
        other => return vec![other.clone()],
    };
    let mut out = Vec::new();
    for (operator, argument) in operators {
        match (operator.as_str(), argument) {
            ("$eq", v) => out.push(v.clone()),
            // `$in` with one distinct value and no regular expression is `$eq`.
            ("$in", Bson::Array(items)) => {
                let mut distinct: Vec<&Bson> = Vec::new();
                for item in items {
                    if !distinct.iter().any(|seen| equal(seen, item)) {
                        distinct.push(item);
                    }
                }
                if let [only] = distinct.as_slice()
                    && !matches!(only, Bson::RegularExpression(_))
                {
                    out.push((*only).clone());
                }
            }
            // `$all: [x, y]` is `{$and: [{f: x}, {f: y}]}`; `$elemMatch` members are not equalities.
            ("$all", Bson::Array(items)) => {
                for item in items {
                    let elem_match = matches!(
                        item,
                        Bson::Document(d) if d.keys().next().is_some_and(|k| k == "$elemMatch")
                    );
                    if !elem_match && !matches!(item, Bson::RegularExpression(_)) {
                        out.push(item.clone());
                    }
                }
            }
            _ => {}
        }
    }
    out
}
