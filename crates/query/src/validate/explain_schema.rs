//! The details of a failed `$jsonSchema` rule that holds other schemas (`properties`,
//! `items`, `allOf`, ...): which property, item or subschema failed, and why, nested as
//! mongod 5.0 nests them (`propertiesNotSatisfied`, `schemasNotSatisfied`, `details`).

use super::keyword::{Additional, Dependency, Keyword, count_bson, field_of, pattern_hit, to_bson};
use super::schema::Schema;
use bson::raw::RawDocument;
use bson::{Bson, Document, RawBsonRef, doc};
use bson_canonical::compare::{array_values, elements};

/// Fills `out` (already holding `operatorName`) for a composite rule `value` fails.
pub(super) fn explain_composite(keyword: &Keyword, value: RawBsonRef<'_>, out: &mut Document) {
    match (keyword, value) {
        (Keyword::Items(schema), RawBsonRef::Array(a)) => {
            out.insert("reason", "At least one item did not match the sub-schema");
            if let Some((i, item)) = array_values(a).enumerate().find(|(_, v)| !schema.holds(*v)) {
                out.insert("itemIndex", count_bson(i as u64));
                out.insert("details", schema.explain(item));
            }
        }
        (Keyword::ItemsTuple(schemas), RawBsonRef::Array(a)) => {
            let failing: Vec<Bson> = array_values(a)
                .zip(schemas)
                .enumerate()
                .filter(|(_, (v, s))| !s.holds(*v))
                .map(|(i, (v, s))| {
                    Bson::Document(
                        doc! { "itemIndex": count_bson(i as u64), "details": s.explain(v) },
                    )
                })
                .collect();
            out.insert("details", failing);
        }
        (Keyword::AdditionalItems { start, additional }, RawBsonRef::Array(a)) => {
            match additional {
                Additional::Allowed(_) => {
                    out.insert("specifiedAs", doc! { "additionalItems": false });
                    out.insert("reason", "found additional items");
                    let extra: Vec<Bson> = array_values(a).skip(*start).map(to_bson).collect();
                    out.insert("additionalItems", extra);
                }
                Additional::Schema(schema) => {
                    out.insert(
                        "reason",
                        "At least one additional item did not match the sub-schema",
                    );
                    let failing = array_values(a)
                        .enumerate()
                        .skip(*start)
                        .find(|(_, v)| !schema.holds(*v));
                    if let Some((i, item)) = failing {
                        out.insert("itemIndex", count_bson(i as u64));
                        out.insert("details", schema.explain(item));
                    }
                }
            }
        }
        (Keyword::Required(names), RawBsonRef::Document(d)) => {
            let specified: Vec<Bson> = names.iter().map(|n| Bson::String(n.clone())).collect();
            out.insert("specifiedAs", doc! { "required": specified });
            let missing: Vec<Bson> = names
                .iter()
                .filter(|n| field_of(d, n).is_none())
                .map(|n| Bson::String(n.clone()))
                .collect();
            out.insert("missingProperties", missing);
        }
        (Keyword::Properties(properties), RawBsonRef::Document(d)) => {
            let mut failing = Vec::new();
            for (name, schema) in properties {
                if let Some(v) = field_of(d, name)
                    && !schema.holds(v)
                {
                    failing.push(Bson::Document(property(name, schema, v)));
                }
            }
            out.insert("propertiesNotSatisfied", failing);
        }
        (Keyword::Allowed { .. }, RawBsonRef::Document(d)) => explain_allowed(keyword, d, out),
        (Keyword::Dependencies(list), RawBsonRef::Document(d)) => {
            let mut failing = Vec::new();
            for (name, dependency) in list {
                if field_of(d, name).is_none() {
                    continue;
                }
                match dependency {
                    Dependency::Properties(names) => {
                        let missing: Vec<Bson> = names
                            .iter()
                            .filter(|n| field_of(d, n).is_none())
                            .map(|n| Bson::String(n.clone()))
                            .collect();
                        if !missing.is_empty() {
                            failing.push(Bson::Document(
                                doc! { "conditionalProperty": name.clone(), "missingProperties": missing },
                            ));
                        }
                    }
                    Dependency::Schema(schema) if !schema.holds(value) => {
                        failing.push(Bson::Document(
                            doc! { "conditionalProperty": name.clone(), "details": schema.explain(value) },
                        ));
                    }
                    Dependency::Schema(_) => {}
                }
            }
            out.insert("failingDependencies", failing);
        }
        (Keyword::AllOf(schemas) | Keyword::AnyOf(schemas), _) => {
            out.insert("schemasNotSatisfied", not_satisfied(schemas, value));
        }
        (Keyword::OneOf(schemas), _) => {
            let matching: Vec<Bson> = schemas
                .iter()
                .enumerate()
                .filter(|(_, s)| s.holds(value))
                .map(|(i, _)| count_bson(i as u64))
                .collect();
            if matching.is_empty() {
                out.insert("schemasNotSatisfied", not_satisfied(schemas, value));
            } else {
                out.insert("reason", "more than one subschema matched");
                out.insert("matchingSchemaIndexes", matching);
            }
        }
        _ => {}
    }
}

fn not_satisfied(schemas: &[Schema], value: RawBsonRef<'_>) -> Vec<Bson> {
    schemas
        .iter()
        .enumerate()
        .filter(|(_, s)| !s.holds(value))
        .map(|(i, s)| {
            Bson::Document(doc! { "index": count_bson(i as u64), "details": s.explain(value) })
        })
        .collect()
}

/// One entry of `propertiesNotSatisfied`, with the subschema's title and description.
fn property(name: &str, schema: &Schema, value: RawBsonRef<'_>) -> Document {
    let mut entry = doc! { "propertyName": name };
    if let Some(title) = &schema.title {
        entry.insert("title", title.clone());
    }
    if let Some(description) = &schema.description {
        entry.insert("description", description.clone());
    }
    entry.insert("details", schema.explain(value));
    entry
}

fn explain_allowed(keyword: &Keyword, d: &RawDocument, out: &mut Document) {
    let Keyword::Allowed {
        named,
        patterns,
        additional,
    } = keyword
    else {
        return;
    };
    let mut pattern_failures = Vec::new();
    let mut extra = Vec::new();
    let mut extra_failure = None;
    for (name, v) in elements(d) {
        let mut matched = false;
        for (pattern, schema) in patterns {
            if pattern_hit(pattern, name) {
                matched = true;
                if !schema.holds(v) {
                    pattern_failures.push(Bson::Document(doc! {
                        "propertyName": name,
                        "regexMatched": pattern.source.clone(),
                        "details": schema.explain(v),
                    }));
                }
            }
        }
        if matched || named.iter().any(|n| n == name) {
            continue;
        }
        match additional {
            Some(Additional::Allowed(false)) => extra.push(Bson::String(name.to_owned())),
            Some(Additional::Schema(schema)) if extra_failure.is_none() && !schema.holds(v) => {
                extra_failure =
                    Some(doc! { "failingProperty": name, "details": schema.explain(v) });
            }
            _ => {}
        }
    }
    if !pattern_failures.is_empty() {
        out.insert("operatorName", "patternProperties");
        out.insert("details", pattern_failures);
    } else if !extra.is_empty() {
        out.insert("specifiedAs", doc! { "additionalProperties": false });
        out.insert("additionalProperties", extra);
    } else if let Some(failure) = extra_failure {
        out.insert(
            "reason",
            "at least one additional property did not match the subschema",
        );
        out.extend(failure);
    }
}
