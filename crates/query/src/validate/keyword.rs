//! One compiled `$jsonSchema` rule: whether a value satisfies it ([`Keyword::holds`]) and,
//! when it does not, mongod 5.0's description of why ([`Keyword::explain`]).
//!
//! Every rule except the type applies only to values of its kind (JSON Schema's meaning):
//! `minimum` to numbers, `pattern` to strings, `items` to arrays, `required` to objects; a
//! value of another kind satisfies it. A schema applies to a value as it is: arrays are
//! never traversed as a query path would be.

use super::schema::Schema;
use crate::filter::types::{type_code, type_name};
use crate::filter::{Pattern, TypeSelector};
use bson::raw::{RawArray, RawDocument};
use bson::{Bson, Document, RawBson, RawBsonRef, doc};
use bson_canonical::compare::{array_values, compare_values, elements};
use std::sync::Arc;

/// What `additionalProperties` / `additionalItems` allow.
#[derive(Debug)]
pub(crate) enum Additional {
    Allowed(bool),
    Schema(Box<Schema>),
}

/// One `dependencies` entry: when its property is present, these properties must be too,
/// or the whole object must satisfy this schema.
#[derive(Debug)]
pub(crate) enum Dependency {
    Properties(Vec<String>),
    Schema(Schema),
}

/// One rule of a schema.
#[derive(Debug)]
pub(crate) enum Keyword {
    /// `bsonType` or `type` (`name`), with the types it allows and its argument as given.
    Type {
        name: &'static str,
        types: Vec<TypeSelector>,
        spec: RawBson,
    },
    Minimum {
        limit: RawBson,
        exclusive: bool,
    },
    Maximum {
        limit: RawBson,
        exclusive: bool,
    },
    MultipleOf(RawBson),
    MinLength(u64),
    MaxLength(u64),
    Pattern(Arc<Pattern>),
    MinItems(u64),
    MaxItems(u64),
    UniqueItems,
    Items(Box<Schema>),
    ItemsTuple(Vec<Schema>),
    AdditionalItems {
        start: usize,
        additional: Additional,
    },
    Required(Vec<String>),
    Properties(Vec<(String, Schema)>),
    /// `patternProperties` and `additionalProperties`; `named` are the `properties` names.
    Allowed {
        named: Vec<String>,
        patterns: Vec<(Arc<Pattern>, Schema)>,
        additional: Option<Additional>,
    },
    MinProperties(u64),
    MaxProperties(u64),
    Dependencies(Vec<(String, Dependency)>),
    AllOf(Vec<Schema>),
    AnyOf(Vec<Schema>),
    OneOf(Vec<Schema>),
    Not(Box<Schema>),
    /// The allowed values, as the array given and one by one.
    Enum(RawBson, Vec<RawBson>),
}

/// Equality as `enum` and `uniqueItems` use it: numbers by value, documents regardless of
/// field order (mongod's `UnorderedFieldsBSONElementComparator`), arrays element by element.
pub(crate) fn eq_unordered(a: RawBsonRef<'_>, b: RawBsonRef<'_>) -> bool {
    match (a, b) {
        (RawBsonRef::Document(a), RawBsonRef::Document(b)) => {
            let count_a = elements(a).count();
            count_a == elements(b).count()
                && elements(a).all(|(name, value)| {
                    field(b, name).is_some_and(|other| eq_unordered(value, other))
                })
        }
        (RawBsonRef::Array(a), RawBsonRef::Array(b)) => {
            let count_a = array_values(a).count();
            count_a == array_values(b).count()
                && array_values(a)
                    .zip(array_values(b))
                    .all(|(x, y)| eq_unordered(x, y))
        }
        (RawBsonRef::Document(_) | RawBsonRef::Array(_), _)
        | (_, RawBsonRef::Document(_) | RawBsonRef::Array(_)) => false,
        _ => compare_values(a, b).is_eq(),
    }
}

/// A top-level field of `doc`, reading only the names of the fields before it.
fn field<'a>(doc: &'a RawDocument, name: &str) -> Option<RawBsonRef<'a>> {
    crate::raw::get_field(doc, name)
}

/// `properties` in one pass over the object: each field's value is read only when a
/// property names it.
fn properties_hold(properties: &[(String, Schema)], doc: &RawDocument) -> bool {
    for (name, value) in elements(doc) {
        if let Some((_, schema)) = properties.iter().find(|(n, _)| n == name)
            && !schema.holds(value)
        {
            return false;
        }
    }
    true
}

fn is_number(value: RawBsonRef<'_>) -> bool {
    matches!(type_code(&value), 1 | 16 | 18 | 19)
}

/// A value as a `Bson` for a failure's details (stored values always convert).
pub(crate) fn to_bson(value: RawBsonRef<'_>) -> Bson {
    Bson::try_from(RawBson::from(value)).unwrap_or(Bson::Null)
}

fn owned_bson(value: &RawBson) -> Bson {
    to_bson(value.as_raw_bson_ref())
}

fn multiple_of(value: RawBsonRef<'_>, divisor: &RawBson) -> bool {
    let divisor = divisor.as_raw_bson_ref();
    if let (Some(v), Some(d)) = (
        bson_canonical::compare::whole_number(value),
        bson_canonical::compare::whole_number(divisor),
    ) {
        return d != 0 && v.checked_rem(d).is_none_or(|r| r == 0);
    }
    match (crate::value::as_f64(value), crate::value::as_f64(divisor)) {
        (Some(v), Some(d)) => (v % d) == 0.0,
        _ => false,
    }
}

fn pattern_matches(pattern: &Pattern, subject: &str) -> bool {
    pattern.regex.is_match(subject).unwrap_or(false)
}

fn first_duplicate(items: &RawArray) -> Option<RawBsonRef<'_>> {
    let values: Vec<RawBsonRef<'_>> = array_values(items).collect();
    values
        .iter()
        .enumerate()
        .find(|(i, a)| values.iter().skip(i + 1).any(|b| eq_unordered(**a, *b)))
        .map(|(_, a)| *a)
}

impl Schema {
    /// Whether `value` satisfies every rule.
    pub(crate) fn holds(&self, value: RawBsonRef<'_>) -> bool {
        self.keywords.iter().all(|k| k.holds(value))
    }

    /// Whether the document satisfies the schema (the filter's `$jsonSchema`).
    pub(crate) fn matches(&self, doc: &RawDocument) -> bool {
        self.holds(RawBsonRef::Document(doc))
    }

    /// The rules `value` does not satisfy, described as mongod's `schemaRulesNotSatisfied`.
    pub(crate) fn explain(&self, value: RawBsonRef<'_>) -> Vec<Bson> {
        self.keywords
            .iter()
            .filter(|k| !k.holds(value))
            .map(|k| Bson::Document(k.explain(value)))
            .collect()
    }
}

impl Keyword {
    /// Whether `value` satisfies this rule.
    pub(crate) fn holds(&self, value: RawBsonRef<'_>) -> bool {
        match (self, value) {
            (Keyword::Type { types, .. }, _) => types.iter().any(|t| t.matches(&value)),
            (Keyword::Minimum { limit, exclusive }, _) if is_number(value) => {
                let order = compare_values(value, limit.as_raw_bson_ref());
                order.is_gt() || (!exclusive && order.is_eq())
            }
            (Keyword::Maximum { limit, exclusive }, _) if is_number(value) => {
                let order = compare_values(value, limit.as_raw_bson_ref());
                order.is_lt() || (!exclusive && order.is_eq())
            }
            (Keyword::MultipleOf(divisor), _) if is_number(value) => multiple_of(value, divisor),
            (Keyword::MinLength(n), RawBsonRef::String(s)) => s.chars().count() as u64 >= *n,
            (Keyword::MaxLength(n), RawBsonRef::String(s)) => s.chars().count() as u64 <= *n,
            (Keyword::Pattern(p), RawBsonRef::String(s)) => pattern_matches(p, s),
            (Keyword::MinItems(n), RawBsonRef::Array(a)) => array_values(a).count() as u64 >= *n,
            (Keyword::MaxItems(n), RawBsonRef::Array(a)) => array_values(a).count() as u64 <= *n,
            (Keyword::UniqueItems, RawBsonRef::Array(a)) => first_duplicate(a).is_none(),
            (Keyword::Items(schema), RawBsonRef::Array(a)) => {
                array_values(a).all(|v| schema.holds(v))
            }
            (Keyword::ItemsTuple(schemas), RawBsonRef::Array(a)) => {
                array_values(a).zip(schemas).all(|(v, s)| s.holds(v))
            }
            (Keyword::AdditionalItems { start, additional }, RawBsonRef::Array(a)) => {
                array_values(a).skip(*start).all(|v| match additional {
                    Additional::Allowed(allowed) => *allowed,
                    Additional::Schema(schema) => schema.holds(v),
                })
            }
            (Keyword::Required(names), RawBsonRef::Document(d)) => {
                names.iter().all(|n| field(d, n).is_some())
            }
            (Keyword::Properties(properties), RawBsonRef::Document(d)) => {
                properties_hold(properties, d)
            }
            (Keyword::Allowed { .. }, RawBsonRef::Document(d)) => {
                elements(d).all(|(name, v)| self.allows_property(name, v))
            }
            (Keyword::MinProperties(n), RawBsonRef::Document(d)) => {
                elements(d).count() as u64 >= *n
            }
            (Keyword::MaxProperties(n), RawBsonRef::Document(d)) => {
                elements(d).count() as u64 <= *n
            }
            (Keyword::Dependencies(list), RawBsonRef::Document(d)) => {
                list.iter().all(|(name, dependency)| {
                    field(d, name).is_none() || dependency_holds(dependency, d, value)
                })
            }
            (Keyword::AllOf(schemas), _) => schemas.iter().all(|s| s.holds(value)),
            (Keyword::AnyOf(schemas), _) => schemas.iter().any(|s| s.holds(value)),
            (Keyword::OneOf(schemas), _) => schemas.iter().filter(|s| s.holds(value)).count() == 1,
            (Keyword::Not(schema), _) => !schema.holds(value),
            (Keyword::Enum(_, values), _) => values
                .iter()
                .any(|a| eq_unordered(a.as_raw_bson_ref(), value)),
            // A rule meets a value of another kind: it does not apply.
            _ => true,
        }
    }

    /// `patternProperties`/`additionalProperties` for one property of an object.
    fn allows_property(&self, name: &str, value: RawBsonRef<'_>) -> bool {
        let Keyword::Allowed {
            named,
            patterns,
            additional,
        } = self
        else {
            return true;
        };
        let mut matched = false;
        for (pattern, schema) in patterns {
            if pattern_matches(pattern, name) {
                matched = true;
                if !schema.holds(value) {
                    return false;
                }
            }
        }
        if matched || named.iter().any(|n| n == name) {
            return true;
        }
        match additional {
            None | Some(Additional::Allowed(true)) => true,
            Some(Additional::Allowed(false)) => false,
            Some(Additional::Schema(schema)) => schema.holds(value),
        }
    }

    /// The name mongod reports this rule under.
    fn operator_name(&self) -> &'static str {
        match self {
            Keyword::Type { name, .. } => name,
            Keyword::Minimum { .. } => "minimum",
            Keyword::Maximum { .. } => "maximum",
            Keyword::MultipleOf(_) => "multipleOf",
            Keyword::MinLength(_) => "minLength",
            Keyword::MaxLength(_) => "maxLength",
            Keyword::Pattern(_) => "pattern",
            Keyword::MinItems(_) => "minItems",
            Keyword::MaxItems(_) => "maxItems",
            Keyword::UniqueItems => "uniqueItems",
            Keyword::Items(_) | Keyword::ItemsTuple(_) => "items",
            Keyword::AdditionalItems { .. } => "additionalItems",
            Keyword::Required(_) => "required",
            Keyword::Properties(_) => "properties",
            Keyword::Allowed { .. } => "additionalProperties",
            Keyword::MinProperties(_) => "minProperties",
            Keyword::MaxProperties(_) => "maxProperties",
            Keyword::Dependencies(_) => "dependencies",
            Keyword::AllOf(_) => "allOf",
            Keyword::AnyOf(_) => "anyOf",
            Keyword::OneOf(_) => "oneOf",
            Keyword::Not(_) => "not",
            Keyword::Enum(..) => "enum",
        }
    }

    /// Why `value` fails this rule, in mongod 5.0's shape (only called when it fails).
    pub(crate) fn explain(&self, value: RawBsonRef<'_>) -> Document {
        let mut out = doc! { "operatorName": self.operator_name() };
        let considered = to_bson(value);
        match self {
            Keyword::Type { name, spec, .. } => {
                out.insert("specifiedAs", doc! { *name: owned_bson(spec) });
                out.insert("reason", "type did not match");
                out.insert("consideredValue", considered);
                out.insert("consideredType", type_name(type_code(&value)));
            }
            Keyword::Minimum { limit, exclusive } | Keyword::Maximum { limit, exclusive } => {
                let mut specified = doc! { self.operator_name(): owned_bson(limit) };
                if *exclusive {
                    let key = if matches!(self, Keyword::Minimum { .. }) {
                        "exclusiveMinimum"
                    } else {
                        "exclusiveMaximum"
                    };
                    specified.insert(key, true);
                }
                out.insert("specifiedAs", specified);
                out.insert("reason", "comparison failed");
                out.insert("consideredValue", considered);
            }
            Keyword::MultipleOf(divisor) => {
                out.insert("specifiedAs", doc! { "multipleOf": owned_bson(divisor) });
                out.insert(
                    "reason",
                    "considered value is not a multiple of the specified value",
                );
                out.insert("consideredValue", considered);
            }
            Keyword::MinLength(n) | Keyword::MaxLength(n) => {
                out.insert("specifiedAs", doc! { self.operator_name(): count_bson(*n) });
                out.insert("reason", "specified string length was not satisfied");
                out.insert("consideredValue", considered);
            }
            Keyword::Pattern(p) => {
                out.insert("specifiedAs", doc! { "pattern": p.source.clone() });
                out.insert("reason", "regular expression did not match");
                out.insert("consideredValue", considered);
            }
            Keyword::MinItems(n) | Keyword::MaxItems(n) => {
                out.insert("specifiedAs", doc! { self.operator_name(): count_bson(*n) });
                out.insert("reason", "array did not match specified length");
                out.insert("consideredValue", considered);
            }
            Keyword::UniqueItems => {
                out.insert("specifiedAs", doc! { "uniqueItems": true });
                out.insert("reason", "found a duplicate item");
                out.insert("consideredValue", considered);
                if let RawBsonRef::Array(a) = value
                    && let Some(duplicate) = first_duplicate(a)
                {
                    out.insert("duplicatedValue", to_bson(duplicate));
                }
            }
            Keyword::MinProperties(n) | Keyword::MaxProperties(n) => {
                out.insert("specifiedAs", doc! { self.operator_name(): count_bson(*n) });
                out.insert("reason", "specified number of properties was not satisfied");
                if let RawBsonRef::Document(d) = value {
                    out.insert("numberOfProperties", count_bson(elements(d).count() as u64));
                }
            }
            Keyword::Enum(allowed, _) => {
                out.insert("specifiedAs", doc! { "enum": owned_bson(allowed) });
                out.insert("reason", "value was not found in enum");
                out.insert("consideredValue", considered);
            }
            Keyword::Not(_) => {
                out.insert("reason", "child expression matched");
            }
            _ => super::explain_schema::explain_composite(self, value, &mut out),
        }
        out
    }
}

fn dependency_holds(dependency: &Dependency, doc: &RawDocument, value: RawBsonRef<'_>) -> bool {
    match dependency {
        Dependency::Properties(names) => names.iter().all(|n| field(doc, n).is_some()),
        Dependency::Schema(schema) => schema.holds(value),
    }
}

/// A count as mongod reports it: an int32 when it fits.
pub(super) fn count_bson(n: u64) -> Bson {
    match i32::try_from(n) {
        Ok(small) => Bson::Int32(small),
        Err(_) => Bson::Int64(i64::try_from(n).unwrap_or(i64::MAX)),
    }
}

/// A top-level field of `doc` (for the details of composite rules).
pub(super) fn field_of<'a>(doc: &'a RawDocument, name: &str) -> Option<RawBsonRef<'a>> {
    field(doc, name)
}

/// Whether `pattern` finds a match in `subject` (a regex over its budget does not).
pub(super) fn pattern_hit(pattern: &Pattern, subject: &str) -> bool {
    pattern_matches(pattern, subject)
}
