//! Projection by byte ranges (`Projection::apply_bytes`: a stored document's kept
//! top-level elements copied as bytes) against decode-and-project: the document decoded to
//! a tree, projected by a model of MongoDB's top-level rules, re-encoded; and against
//! `Projection::apply` on the parsed document (which also sees duplicate field names).

use crate::support::raw;
use bson::{Bson, Document, RawDocumentBuf, doc};
use proptest::prelude::*;
use query::Projection;

const NAMES: [&str; 5] = ["_id", "a", "b", "c", "payload"];

fn value() -> impl Strategy<Value = Bson> {
    prop_oneof![
        any::<i32>().prop_map(Bson::Int32),
        any::<i64>().prop_map(Bson::Int64),
        any::<f64>().prop_map(Bson::Double),
        "[a-z]{0,12}".prop_map(Bson::String),
        Just(Bson::Null),
        any::<bool>().prop_map(Bson::Boolean),
        prop::collection::vec(any::<i32>().prop_map(Bson::Int32), 0..3).prop_map(Bson::Array),
        any::<i32>().prop_map(|n| Bson::Document(doc! {"x": n, "y": [n]})),
        Just(Bson::Binary(bson::Binary {
            subtype: bson::spec::BinarySubtype::Generic,
            bytes: vec![1, 2, 3],
        })),
        Just(Bson::DateTime(bson::DateTime::from_millis(7))),
        Just(Bson::ObjectId(bson::oid::ObjectId::from_bytes([5; 12]))),
    ]
}

/// A document of some of `NAMES` in a random order (`_id` anywhere, or missing).
fn document() -> impl Strategy<Value = Document> {
    prop::collection::vec((prop::sample::select(NAMES.to_vec()), value()), 0..6).prop_map(
        |fields| {
            let mut doc = Document::new();
            for (name, value) in fields {
                doc.insert(name, value);
            }
            doc
        },
    )
}

/// A top-level projection: inclusion or exclusion of some names, `_id` kept or dropped.
fn projection() -> impl Strategy<Value = Document> {
    (
        any::<bool>(),
        prop::collection::btree_set(prop::sample::select(NAMES[1..].to_vec()), 0..4),
        prop::option::of(any::<bool>()),
    )
        .prop_map(|(inclusion, names, id)| {
            let mut spec = Document::new();
            for name in names {
                spec.insert(name, if inclusion { 1 } else { 0 });
            }
            if let Some(id) = id {
                spec.insert("_id", i32::from(id));
            }
            spec
        })
}

/// MongoDB's top-level projection on a decoded document: an inclusion keeps `_id` (first)
/// unless excluded and the named fields in document order; an exclusion drops the named
/// fields (and `_id` when excluded).
fn decode_and_project(doc: &Document, spec: &Document) -> Document {
    let id_rule = spec.get("_id").map(|v| matches!(v, Bson::Int32(1)));
    let inclusion = spec
        .iter()
        .any(|(k, v)| k != "_id" && matches!(v, Bson::Int32(1)))
        || (spec.keys().all(|k| k == "_id") && id_rule == Some(true));
    let mut out = Document::new();
    if inclusion
        && id_rule != Some(false)
        && let Some(id) = doc.get("_id")
    {
        out.insert("_id", id.clone());
    }
    for (key, value) in doc {
        if key == "_id" {
            if !inclusion && id_rule != Some(false) {
                out.insert(key.clone(), value.clone());
            }
            continue;
        }
        let named = spec.contains_key(key);
        if named == inclusion {
            out.insert(key.clone(), value.clone());
        }
    }
    out
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 2000, ..ProptestConfig::default() })]

    #[test]
    fn projection_by_byte_ranges_agrees_with_decode_and_project(
        doc in document(),
        spec in projection(),
        duplicate in prop::option::of((prop::sample::select(NAMES.to_vec()), value())),
    ) {
        let Ok(projection) = Projection::parse(&raw(&spec)) else {
            // `{a: 0, _id: 1}` and kin: refused by the parser, nothing to compare.
            return Ok(());
        };
        let mut stored = raw(&doc);
        if duplicate.is_none() {
            let got = projection.apply_bytes(stored.as_bytes(), None).expect("projects");
            let expected = raw(&decode_and_project(&doc, &spec));
            prop_assert_eq!(&got, &expected, "doc {} projection {}", doc, spec);
        }
        if let Some((name, value)) = duplicate {
            // A second field of the same name, which a tree document cannot hold.
            let value = bson::RawBson::try_from(value).expect("converts");
            let name: &bson::raw::CStr = name.try_into().expect("a key without zero bytes");
            stored.append(name, value);
        }
        let got = projection.apply_bytes(stored.as_bytes(), None).expect("projects");
        let parsed = projection.apply(&stored, None).expect("projects");
        prop_assert_eq!(got, parsed, "doc {:?} projection {}", stored, spec);
    }
}

/// The kept elements are copied without reading past them to the document's end: a
/// stored document whose terminating byte is damaged still projects its first fields.
#[test]
fn projection_by_byte_ranges_never_reads_the_last_byte() {
    let projection = Projection::parse(&raw(&doc! {"k": 1})).expect("parses");
    let mut bytes = raw(&doc! {"_id": 1, "k": 2, "payload": "x".repeat(64)}).into_bytes();
    let last = bytes.len() - 1;
    bytes[last] = 0xFF;
    let got = projection.apply_bytes(&bytes, None).expect("projects");
    let expected: RawDocumentBuf = raw(&doc! {"_id": 1, "k": 2});
    assert_eq!(got, expected);
}
