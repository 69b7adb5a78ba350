//! Collection validators: a query document that may hold `$jsonSchema`, compiled once and
//! checked against every document a write would store, with mongod 5.0's explanation of a
//! failure (`errInfo.details`).
//!
//! What it implements:
//! - [`Validator::parse`]: the validator as mongod's `create`/`collMod` accept it: any query
//!   operator the filter matcher has, `$expr`, and `$jsonSchema` in MongoDB's dialect
//!   (`schema.rs`: `bsonType`, `type` without `integer`, `required`, `properties`,
//!   `patternProperties`, `additionalProperties`, `items`/`additionalItems`, the numeric,
//!   string, array and object bounds, `enum`, `allOf`/`anyOf`/`oneOf`/`not`,
//!   `dependencies`, `title`/`description`). `$where`, `$text`, `$near`, `$nearSphere` and
//!   `$geoNear` are refused (BadValue), as mongod refuses them in a validator; so are
//!   `$ref`, `$schema`, `default`, `definitions`, `format` and `id` inside a schema
//!   (FailedToParse, "is not currently supported").
//! - [`Validator::matches`]: the one check the write paths make; the operator part runs
//!   through [`Filter`], whose `$jsonSchema` node is this module's [`schema::Schema`].
//! - [`Validator::explain`]: only after a failure, the `details` document:
//!   `{operatorName, specifiedAs, reason, consideredValue}` for an operator,
//!   `{operatorName: "$and"/"$or"/"$nor", clausesNotSatisfied: [{index, details}]}`
//!   for several clauses, `{operatorName: "$jsonSchema", schemaRulesNotSatisfied}` for
//!   a schema (`keyword.rs`, `explain_schema.rs`).
//!
//! Invariants: a validator that parsed never fails at match time on its own account (a
//! run-time error inside `$expr` or a regex over its step budget counts as "does not
//! match", as mongod fails such a write); `matches` reads the document only; `explain`
//! is called only for a document `matches` refused and describes at least the operator
//! that failed; the empty validator `{}` matches every document.

mod explain_schema;
mod keyword;
pub(crate) mod schema;

use crate::error::QueryError;
use crate::filter::Filter;
use bson::raw::RawDocument;
use bson::{Bson, Document, RawBsonRef, RawDocumentBuf, doc};
use bson_canonical::compare::{array_values, elements};

/// A compiled collection validator.
#[derive(Debug, Clone)]
pub struct Validator {
    filter: Filter,
    spec: RawDocumentBuf,
}

/// Query operators mongod refuses inside a validator, with its message.
fn refused(operator: &str) -> Option<&'static str> {
    match operator {
        "$where" => Some("$where is not allowed in this context"),
        "$text" => Some("$text is not allowed in this context"),
        "$near" | "$nearSphere" | "$geoNear" => {
            Some("$geoNear, $near, and $nearSphere are not allowed in this context")
        }
        _ => None,
    }
}

/// Refuses the operators a validator may not hold, anywhere outside `$jsonSchema`/`$expr`.
fn check_operators(doc: &RawDocument) -> Result<(), QueryError> {
    for (key, value) in elements(doc) {
        if let Some(message) = refused(key) {
            return Err(QueryError::bad_value(message));
        }
        if matches!(key, "$jsonSchema" | "$expr") {
            continue;
        }
        match value {
            RawBsonRef::Document(sub) => check_operators(sub)?,
            RawBsonRef::Array(items) if key.starts_with('$') => {
                for item in array_values(items) {
                    if let RawBsonRef::Document(sub) = item {
                        check_operators(sub)?;
                    }
                }
            }
            _ => {}
        }
    }
    Ok(())
}

impl Validator {
    /// Compiles a validator document (`create`'s or `collMod`'s `validator`).
    pub fn parse(spec: &RawDocument) -> Result<Validator, QueryError> {
        check_operators(spec)?;
        Ok(Validator {
            filter: Filter::parse(spec)?,
            spec: spec.to_owned(),
        })
    }

    /// Whether `doc` satisfies the validator.
    pub fn matches(&self, doc: &RawDocument) -> bool {
        self.filter.matches(doc)
    }

    /// The validator as given.
    pub fn spec(&self) -> &RawDocument {
        &self.spec
    }

    /// mongod's `errInfo.details` for a document [`Validator::matches`] refused.
    pub fn explain(&self, doc: &RawDocument) -> Document {
        explain_filter(&self.spec, doc)
    }
}

/// One clause of a validator's query: a whole `$and`/`$or`/`$nor`/`$jsonSchema`/`$expr`
/// element, or one operator on one path.
struct Clause<'a> {
    operator: String,
    path: Option<&'a str>,
    /// The clause alone, as a filter document (`{a: {$gt: 1}}`), also its `specifiedAs`.
    alone: RawDocumentBuf,
    value: RawBsonRef<'a>,
}

fn cstr(key: &str) -> bson::raw::CString {
    // Field names read from a parsed document hold no NUL byte.
    bson::raw::CString::try_from(key).expect("a BSON field name has no NUL byte")
}

/// The one-field document `{key: value}`.
fn single<'v>(key: &str, value: impl Into<RawBsonRef<'v>>) -> RawDocumentBuf {
    let mut out = RawDocumentBuf::new();
    out.append(cstr(key), value.into());
    out
}

fn clauses(spec: &RawDocument) -> Vec<Clause<'_>> {
    let mut out = Vec::new();
    for (key, value) in elements(spec) {
        if key == "$comment" {
            continue;
        }
        let operator_object = match value {
            RawBsonRef::Document(d) => elements(d).next().is_some_and(|(k, _)| k.starts_with('$')),
            _ => false,
        };
        if key.starts_with('$') || !operator_object {
            let alone = single(key, value);
            let operator = if key.starts_with('$') { key } else { "$eq" };
            let path = (!key.starts_with('$')).then_some(key);
            out.push(Clause {
                operator: operator.to_owned(),
                path,
                alone,
                value,
            });
            continue;
        }
        let RawBsonRef::Document(operators) = value else {
            continue;
        };
        let options = elements(operators)
            .find(|(k, _)| *k == "$options")
            .map(|(_, v)| v);
        for (operator, argument) in elements(operators) {
            if operator == "$options" {
                continue;
            }
            let mut inner = single(operator, argument);
            if operator == "$regex"
                && let Some(options) = options
            {
                inner.append(cstr("$options"), options);
            }
            let alone = single(key, &inner);
            out.push(Clause {
                operator: operator.to_owned(),
                path: Some(key),
                alone,
                value: argument,
            });
        }
    }
    out
}

fn clause_holds(clause: &Clause<'_>, doc: &RawDocument) -> bool {
    Filter::parse(&clause.alone).is_ok_and(|f| f.matches(doc))
}

/// The details for `doc` failing the query document `spec` (a validator or a member of
/// its `$and`/`$or`/`$nor`).
fn explain_filter(spec: &RawDocument, doc: &RawDocument) -> Document {
    let all = clauses(spec);
    if let [only] = all.as_slice() {
        return explain_clause(only, doc);
    }
    let failing: Vec<Bson> = all
        .iter()
        .enumerate()
        .filter(|(_, c)| !clause_holds(c, doc))
        .map(|(i, c)| Bson::Document(doc! { "index": i as i32, "details": explain_clause(c, doc) }))
        .collect();
    doc! { "operatorName": "$and", "clausesNotSatisfied": failing }
}

fn explain_clause(clause: &Clause<'_>, doc: &RawDocument) -> Document {
    let operator = clause.operator.as_str();
    let mut out = doc! { "operatorName": operator };
    match (operator, clause.value) {
        ("$and" | "$or", RawBsonRef::Array(members)) => {
            let failing: Vec<Bson> = array_values(members)
                .enumerate()
                .filter_map(|(i, m)| match m {
                    RawBsonRef::Document(m) if !Filter::parse(m).is_ok_and(|f| f.matches(doc)) => {
                        Some(Bson::Document(
                            doc! { "index": i as i32, "details": explain_filter(m, doc) },
                        ))
                    }
                    _ => None,
                })
                .collect();
            out.insert("clausesNotSatisfied", failing);
        }
        ("$nor", RawBsonRef::Array(members)) => {
            let satisfied: Vec<Bson> = array_values(members)
                .enumerate()
                .filter_map(|(i, m)| match m {
                    RawBsonRef::Document(m) if Filter::parse(m).is_ok_and(|f| f.matches(doc)) => {
                        Some(Bson::Document(doc! { "index": i as i32, "details": {
                            "specifiedAs": keyword::to_bson(RawBsonRef::Document(m)),
                            "reason": "expression matched",
                        } }))
                    }
                    _ => None,
                })
                .collect();
            out.insert("clausesSatisfied", satisfied);
        }
        ("$jsonSchema", RawBsonRef::Document(spec)) => {
            if let Ok(schema) = schema::Schema::parse(spec) {
                if let Some(title) = &schema.title {
                    out.insert("title", title.clone());
                }
                if let Some(description) = &schema.description {
                    out.insert("description", description.clone());
                }
                out.insert(
                    "schemaRulesNotSatisfied",
                    schema.explain(RawBsonRef::Document(doc)),
                );
            }
        }
        ("$expr", value) => {
            out.insert(
                "specifiedAs",
                keyword::to_bson(RawBsonRef::Document(&clause.alone)),
            );
            out.insert("reason", "expression did not match");
            if let Ok(Some(result)) = crate::Expression::parse(value).and_then(|e| e.evaluate(doc))
            {
                out.insert("expressionResult", result);
            }
        }
        _ => explain_leaf(clause, doc, &mut out),
    }
    out
}

fn explain_leaf(clause: &Clause<'_>, doc: &RawDocument, out: &mut Document) {
    out.insert(
        "specifiedAs",
        keyword::to_bson(RawBsonRef::Document(&clause.alone)),
    );
    let considered = clause
        .path
        .and_then(|p| bson_canonical::path::get_path(doc, p));
    let Some(considered) = considered else {
        let reason = match (clause.operator.as_str(), clause.value) {
            ("$exists", v) if crate::value::true_value(v) => "path does not exist",
            _ => "field was missing",
        };
        out.insert("reason", reason);
        return;
    };
    let reason = match clause.operator.as_str() {
        "$eq" | "$ne" | "$gt" | "$gte" | "$lt" | "$lte" => "comparison failed",
        "$in" => "no matching value found in array",
        "$nin" => "matching value found in array",
        "$exists" => "path does exist",
        "$type" => "type did not match",
        "$regex" => "regular expression did not match",
        "$size" => "array length was not equal to given size",
        "$mod" => "$mod did not evaluate to expected remainder",
        "$all" => "array did not contain all specified values",
        "$elemMatch" => "array did not satisfy the child predicate",
        "$not" => "child expression matched",
        _ => "expression did not match",
    };
    out.insert("reason", reason);
    out.insert("consideredValue", keyword::to_bson(considered));
    if clause.operator == "$type" {
        let code = crate::filter::types::type_code(&considered);
        out.insert("consideredType", crate::filter::types::type_name(code));
    }
}
