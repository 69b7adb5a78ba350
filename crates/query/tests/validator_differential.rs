//! `$jsonSchema` differential: random small schemas × random documents, the validator
//! against a model evaluator written here as plainly as the keywords' definitions read
//! (JSON Schema: each rule applies only to values of its kind), over owned `Bson` values.

use bson::{Bson, Document, RawDocumentBuf, doc};
use proptest::prelude::*;
use query::Validator;

/// One rule of a model schema.
#[derive(Debug, Clone)]
enum Rule {
    BsonType(Vec<&'static str>),
    Minimum(i32, bool),
    Maximum(i32, bool),
    MinLength(usize),
    MaxLength(usize),
    Required(Vec<&'static str>),
    Properties(Vec<(&'static str, Vec<Rule>)>),
    NoAdditional,
    Items(Vec<Rule>),
    MinItems(usize),
    MaxItems(usize),
    Enum(Vec<Bson>),
    Not(Vec<Rule>),
    AnyOf(Vec<Vec<Rule>>),
    AllOf(Vec<Vec<Rule>>),
}

impl Rule {
    fn keyword(&self) -> &'static str {
        match self {
            Rule::BsonType(_) => "bsonType",
            Rule::Minimum(..) => "minimum",
            Rule::Maximum(..) => "maximum",
            Rule::MinLength(_) => "minLength",
            Rule::MaxLength(_) => "maxLength",
            Rule::Required(_) => "required",
            Rule::Properties(_) => "properties",
            Rule::NoAdditional => "additionalProperties",
            Rule::Items(_) => "items",
            Rule::MinItems(_) => "minItems",
            Rule::MaxItems(_) => "maxItems",
            Rule::Enum(_) => "enum",
            Rule::Not(_) => "not",
            Rule::AnyOf(_) => "anyOf",
            Rule::AllOf(_) => "allOf",
        }
    }
}

fn to_doc(rules: &[Rule]) -> Document {
    let mut out = Document::new();
    for rule in rules {
        let value: Bson = match rule {
            Rule::BsonType(names) => names
                .iter()
                .map(|n| Bson::String((*n).into()))
                .collect::<Vec<_>>()
                .into(),
            Rule::Minimum(m, exclusive) | Rule::Maximum(m, exclusive) => {
                if *exclusive {
                    let key = if matches!(rule, Rule::Minimum(..)) {
                        "exclusiveMinimum"
                    } else {
                        "exclusiveMaximum"
                    };
                    out.insert(key, true);
                }
                Bson::Int32(*m)
            }
            Rule::MinLength(n) | Rule::MaxLength(n) | Rule::MinItems(n) | Rule::MaxItems(n) => {
                Bson::Int64(*n as i64)
            }
            Rule::Required(names) => names
                .iter()
                .map(|n| Bson::String((*n).into()))
                .collect::<Vec<_>>()
                .into(),
            Rule::Properties(props) => {
                let mut d = Document::new();
                for (name, sub) in props {
                    d.insert(*name, to_doc(sub));
                }
                Bson::Document(d)
            }
            Rule::NoAdditional => Bson::Boolean(false),
            Rule::Items(sub) | Rule::Not(sub) => Bson::Document(to_doc(sub)),
            Rule::Enum(values) => Bson::Array(values.clone()),
            Rule::AnyOf(subs) | Rule::AllOf(subs) => subs
                .iter()
                .map(|s| Bson::Document(to_doc(s)))
                .collect::<Vec<_>>()
                .into(),
        };
        out.insert(rule.keyword(), value);
    }
    out
}

fn type_name(v: &Bson) -> &'static str {
    match v {
        Bson::Int32(_) => "int",
        Bson::Int64(_) => "long",
        Bson::Double(_) => "double",
        Bson::String(_) => "string",
        Bson::Document(_) => "object",
        Bson::Array(_) => "array",
        Bson::Boolean(_) => "bool",
        Bson::Null => "null",
        _ => "other",
    }
}

fn number(v: &Bson) -> Option<f64> {
    match v {
        Bson::Int32(n) => Some(f64::from(*n)),
        Bson::Int64(n) => Some(*n as f64),
        Bson::Double(n) => Some(*n),
        _ => None,
    }
}

fn same(a: &Bson, b: &Bson) -> bool {
    match (number(a), number(b)) {
        (Some(x), Some(y)) => x == y,
        _ => a == b,
    }
}

/// The model: `value` satisfies every rule of `schema`.
fn model(schema: &[Rule], value: &Bson) -> bool {
    schema.iter().all(|rule| match (rule, value) {
        (Rule::BsonType(names), v) => {
            names.contains(&type_name(v)) || (names.contains(&"number") && number(v).is_some())
        }
        (Rule::Minimum(m, exclusive), v) => {
            number(v).is_none_or(|n| n > f64::from(*m) || (!exclusive && n == f64::from(*m)))
        }
        (Rule::Maximum(m, exclusive), v) => {
            number(v).is_none_or(|n| n < f64::from(*m) || (!exclusive && n == f64::from(*m)))
        }
        (Rule::MinLength(n), Bson::String(s)) => s.chars().count() >= *n,
        (Rule::MaxLength(n), Bson::String(s)) => s.chars().count() <= *n,
        (Rule::Required(names), Bson::Document(d)) => names.iter().all(|n| d.contains_key(n)),
        (Rule::Properties(props), Bson::Document(d)) => props
            .iter()
            .all(|(name, sub)| d.get(*name).is_none_or(|v| model(sub, v))),
        (Rule::NoAdditional, Bson::Document(d)) => {
            let named: Vec<&str> = schema
                .iter()
                .filter_map(|r| match r {
                    Rule::Properties(props) => {
                        Some(props.iter().map(|(n, _)| *n).collect::<Vec<_>>())
                    }
                    _ => None,
                })
                .flatten()
                .collect();
            d.keys().all(|k| named.contains(&k.as_str()))
        }
        (Rule::Items(sub), Bson::Array(items)) => items.iter().all(|v| model(sub, v)),
        (Rule::MinItems(n), Bson::Array(items)) => items.len() >= *n,
        (Rule::MaxItems(n), Bson::Array(items)) => items.len() <= *n,
        (Rule::Enum(values), v) => values.iter().any(|a| same(a, v)),
        (Rule::Not(sub), v) => !model(sub, v),
        (Rule::AnyOf(subs), v) => subs.iter().any(|s| model(s, v)),
        (Rule::AllOf(subs), v) => subs.iter().all(|s| model(s, v)),
        _ => true,
    })
}

const NAMES: &[&str] = &["a", "b", "c"];

fn scalar() -> impl Strategy<Value = Bson> {
    prop_oneof![
        (-3i32..4).prop_map(Bson::Int32),
        (-3i64..4).prop_map(Bson::Int64),
        (-6i32..8).prop_map(|n| Bson::Double(f64::from(n) / 2.0)),
        "[aé]{0,4}".prop_map(Bson::String),
        any::<bool>().prop_map(Bson::Boolean),
        Just(Bson::Null),
    ]
}

fn value() -> impl Strategy<Value = Bson> {
    scalar().prop_recursive(2, 12, 4, |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..4).prop_map(Bson::Array),
            document_of(inner).prop_map(Bson::Document),
        ]
    })
}

fn document_of(inner: impl Strategy<Value = Bson>) -> impl Strategy<Value = Document> {
    prop::collection::vec((prop::sample::select(NAMES), inner), 0..4).prop_map(|fields| {
        let mut d = Document::new();
        for (k, v) in fields {
            d.insert(k, v);
        }
        d
    })
}

fn names() -> impl Strategy<Value = Vec<&'static str>> {
    prop::sample::subsequence(NAMES, 1..=2)
}

fn leaf_rule() -> impl Strategy<Value = Rule> {
    prop_oneof![
        prop::sample::subsequence(
            &[
                "int", "long", "double", "string", "object", "array", "bool", "null", "number"
            ][..],
            1..=2
        )
        .prop_map(Rule::BsonType),
        (-2i32..3, any::<bool>()).prop_map(|(m, e)| Rule::Minimum(m, e)),
        (-2i32..3, any::<bool>()).prop_map(|(m, e)| Rule::Maximum(m, e)),
        (0usize..4).prop_map(Rule::MinLength),
        (0usize..4).prop_map(Rule::MaxLength),
        names().prop_map(Rule::Required),
        Just(Rule::NoAdditional),
        (0usize..3).prop_map(Rule::MinItems),
        (0usize..3).prop_map(Rule::MaxItems),
        prop::sample::subsequence(&[0i32, 1, 2][..], 1..=2).prop_map(|v| Rule::Enum(
            v.into_iter()
                .map(Bson::Int32)
                .chain([Bson::String("a".into())])
                .collect()
        )),
    ]
}

fn properties(inner: impl Strategy<Value = Vec<Rule>>) -> impl Strategy<Value = Rule> {
    prop::collection::vec((prop::sample::select(NAMES), inner), 1..4).prop_map(|props| {
        let mut out: Vec<(&'static str, Vec<Rule>)> = Vec::new();
        for (name, sub) in props {
            if !out.iter().any(|(n, _)| *n == name) {
                out.push((name, sub));
            }
        }
        Rule::Properties(out)
    })
}

/// A schema: rules with distinct keywords (a keyword may appear once).
fn nested_schema() -> impl Strategy<Value = Vec<Rule>> {
    let leaves = prop::collection::vec(leaf_rule(), 1..4).prop_map(dedup);
    leaves.prop_recursive(2, 24, 3, |inner| {
        let nested = prop::collection::vec(
            prop_oneof![
                3 => leaf_rule(),
                1 => properties(inner.clone()),
                1 => inner.clone().prop_map(Rule::Items),
                1 => inner.clone().prop_map(Rule::Not),
                1 => prop::collection::vec(inner.clone(), 1..3).prop_map(Rule::AnyOf),
                1 => prop::collection::vec(inner, 1..3).prop_map(Rule::AllOf),
            ],
            1..4,
        );
        nested.prop_map(dedup)
    })
}

/// A top-level schema: always `properties` (the rules that reach values), maybe others.
fn schema() -> impl Strategy<Value = Vec<Rule>> {
    (
        properties(nested_schema()),
        prop::collection::vec(leaf_rule(), 0..3),
    )
        .prop_map(|(props, rest)| dedup(std::iter::once(props).chain(rest).collect()))
}

fn dedup(rules: Vec<Rule>) -> Vec<Rule> {
    let mut out: Vec<Rule> = Vec::new();
    for rule in rules {
        if !out.iter().any(|r| r.keyword() == rule.keyword()) {
            out.push(rule);
        }
    }
    out
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(
        std::env::var("MFDB_SCHEMA_CASES").ok().and_then(|v| v.parse().ok()).unwrap_or(5000)
    ))]

    #[test]
    fn validator_agrees_with_the_model(rules in schema(), docs in prop::collection::vec(document_of(value()), 1..6)) {
        let spec = doc! {"$jsonSchema": to_doc(&rules)};
        let validator = Validator::parse(&RawDocumentBuf::try_from(&spec).expect("spec"))
            .unwrap_or_else(|e| panic!("{spec}: {e}"));
        for d in docs {
            let expected = model(&rules, &Bson::Document(d.clone()));
            let raw = RawDocumentBuf::try_from(&d).expect("doc");
            prop_assert_eq!(validator.matches(&raw), expected, "schema {} on {}", spec, d);
            if !expected {
                let details = validator.explain(&raw);
                let rules = details.get_array("schemaRulesNotSatisfied").map(|r| r.len()).unwrap_or(0);
                prop_assert!(rules > 0, "no rule named: {} on {}: {}", spec, d, details);
            }
        }
    }
}
