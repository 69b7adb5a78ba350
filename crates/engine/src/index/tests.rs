//! Tests of index specifications and key generation against mongod's rules and jstests.

use super::keys::{Keys, generate};
use super::spec::{IndexSpec, ParseOptions};
use bson::{Bson, Document, doc};

fn spec(raw: Document) -> IndexSpec {
    let raw = bson::RawDocumentBuf::try_from(&raw).expect("raw");
    IndexSpec::parse(&raw, ParseOptions::default()).expect("valid spec")
}

fn keys(index: Document, doc: Document) -> Keys {
    let raw = bson::RawDocumentBuf::try_from(&doc).expect("raw");
    generate(&spec(index), &raw).expect("keys")
}

#[test]
fn smoke() {
    let k = keys(doc! {"key": {"a": 1}, "name": "a_1"}, doc! {"a": [1, 2, 2]});
    assert_eq!(k.keys.len(), 2);
    assert!(k.is_multikey());
    let _ = Bson::Null;
}
