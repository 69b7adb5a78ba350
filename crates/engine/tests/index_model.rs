//! Differential property test of secondary index maintenance (issue 26): random documents
//! (arrays, nested documents, mixed types, missing fields), a random, changing set of
//! indexes (unique, sparse, partial, compound, multikey, hashed, wildcard), random inserts,
//! replacements, `$set`s, deletes, index builds and drops, and reopens that replay the
//! log. After every step `validate` must find every index holding exactly the entries its
//! documents generate (both directions), the contents must equal the model's, and each
//! write must fail exactly when the model predicts: 11000 when a unique index already
//! holds one of its keys for another document, 171 when it gives `{a: 1, b: 1}` two
//! arrays.

use crate::support::{contents, fails, ok, options, run, temp_db};
use bson::{Bson, Document, RawDocumentBuf, doc};
use engine::Engine;
use proptest::prelude::*;
use std::collections::BTreeSet;

/// The index pool: `(name, specification)`. Unique ones are what the model predicts
/// violations for; `ab` is the one that can meet parallel arrays.
fn pool() -> Vec<(&'static str, Document)> {
    vec![
        ("a_1", doc! { "key": { "a": 1 }, "name": "a_1" }),
        (
            "a_1_e_-1",
            doc! { "key": { "a": 1, "e": -1 }, "name": "a_1_e_-1" },
        ),
        ("cx", doc! { "key": { "c.x": 1 }, "name": "cx" }),
        ("ax", doc! { "key": { "a.x": -1 }, "name": "ax" }),
        ("ab", doc! { "key": { "a": 1, "b": 1 }, "name": "ab" }),
        (
            "e_hashed",
            doc! { "key": { "e": "hashed" }, "name": "e_hashed" },
        ),
        (
            "u_b",
            doc! { "key": { "b": 1 }, "name": "u_b", "unique": true },
        ),
        (
            "u_eb",
            doc! { "key": { "e": 1, "b": 1 }, "name": "u_eb", "unique": true },
        ),
        (
            "us_b",
            doc! { "key": { "b": -1 }, "name": "us_b", "unique": true, "sparse": true },
        ),
        (
            "up_e",
            doc! { "key": { "e": 1 }, "name": "up_e", "unique": true,
            "partialFilterExpression": { "e": { "$gt": 5 } } },
        ),
        ("w_all", doc! { "key": { "$**": 1 }, "name": "w_all" }),
        ("w_c", doc! { "key": { "c.$**": -1 }, "name": "w_c" }),
        (
            "w_proj",
            doc! { "key": { "$**": 1 }, "name": "w_proj",
            "wildcardProjection": { "a.x": 0, "b": 0 } },
        ),
    ]
}

fn scalar() -> impl Strategy<Value = Bson> {
    prop_oneof![
        (-2i32..3).prop_map(Bson::Int32),
        (-2i32..3).prop_map(|i| Bson::Double(f64::from(i))),
        prop_oneof![Just("x"), Just("y")].prop_map(|s| Bson::String(s.to_owned())),
        Just(Bson::Null),
        any::<bool>().prop_map(Bson::Boolean),
    ]
}

fn scalars() -> impl Strategy<Value = Bson> {
    prop::collection::vec(scalar(), 0..4).prop_map(Bson::Array)
}

fn sub_doc() -> impl Strategy<Value = Bson> {
    prop_oneof![scalar(), scalars()].prop_map(|x| Bson::Document(doc! { "x": x }))
}

/// `a`: scalar, array of scalars, a document `{x}`, or an array of such documents.
fn field_a() -> impl Strategy<Value = Option<Bson>> {
    prop::option::weighted(
        0.8,
        prop_oneof![
            scalar(),
            scalars(),
            sub_doc(),
            prop::collection::vec(sub_doc(), 0..3).prop_map(Bson::Array),
        ],
    )
}

fn field_b() -> impl Strategy<Value = Option<Bson>> {
    prop::option::weighted(0.7, prop_oneof![scalar(), scalar(), scalars()])
}

fn field_c() -> impl Strategy<Value = Option<Bson>> {
    prop::option::weighted(
        0.6,
        prop_oneof![
            sub_doc(),
            prop::collection::vec(sub_doc(), 0..3).prop_map(Bson::Array)
        ],
    )
}

fn field_e() -> impl Strategy<Value = Option<Bson>> {
    prop::option::weighted(0.7, (0i32..8).prop_map(Bson::Int32))
}

/// A document body (without `_id`).
fn body() -> impl Strategy<Value = Document> {
    (field_a(), field_b(), field_c(), field_e()).prop_map(|(a, b, c, e)| {
        let mut doc = Document::new();
        for (name, value) in [("a", a), ("b", b), ("c", c), ("e", e)] {
            if let Some(value) = value {
                doc.insert(name, value);
            }
        }
        doc
    })
}

#[derive(Debug, Clone)]
enum Step {
    Insert(Document),
    Replace(usize, Document),
    SetB(usize, Option<Bson>),
    Delete(usize),
    CreateIndex(usize),
    DropIndex(usize),
    Reopen,
}

fn step() -> impl Strategy<Value = Step> {
    prop_oneof![
        5 => body().prop_map(Step::Insert),
        2 => (any::<usize>(), body()).prop_map(|(i, d)| Step::Replace(i, d)),
        2 => (any::<usize>(), field_b()).prop_map(|(i, b)| Step::SetB(i, b)),
        1 => any::<usize>().prop_map(Step::Delete),
        2 => any::<usize>().prop_map(Step::CreateIndex),
        1 => any::<usize>().prop_map(Step::DropIndex),
        1 => Just(Step::Reopen),
    ]
}

fn key(value: &Bson) -> Vec<u8> {
    let raw = bson::RawBson::try_from(value.clone()).expect("model values convert");
    bson_canonical::encode(raw.as_raw_bson_ref())
}

/// The model's keys of one field: missing is null (or nothing when `sparse`), an empty
/// array undefined, an array its distinct elements.
fn field_keys(value: Option<&Bson>, sparse: bool) -> BTreeSet<Vec<u8>> {
    match value {
        None if sparse => BTreeSet::new(),
        None => BTreeSet::from([key(&Bson::Null)]),
        Some(Bson::Array(items)) if items.is_empty() => BTreeSet::from([key(&Bson::Undefined)]),
        Some(Bson::Array(items)) => items.iter().map(key).collect(),
        Some(value) => BTreeSet::from([key(value)]),
    }
}

/// The keys a document gives a unique index of the pool, as the model sees them.
fn unique_keys(name: &str, doc: &Document) -> BTreeSet<Vec<u8>> {
    match name {
        "u_b" => field_keys(doc.get("b"), false),
        "us_b" => field_keys(doc.get("b"), true),
        "u_eb" => {
            let e = field_keys(doc.get("e"), false);
            let b = field_keys(doc.get("b"), false);
            e.iter()
                .flat_map(|e| b.iter().map(move |b| [e.as_slice(), b].concat()))
                .collect()
        }
        "up_e" => match doc.get("e") {
            Some(Bson::Int32(e)) if *e > 5 => field_keys(doc.get("e"), false),
            _ => BTreeSet::new(),
        },
        _ => BTreeSet::new(),
    }
}

fn parallel(name: &str, doc: &Document) -> bool {
    name == "ab"
        && matches!(doc.get("a"), Some(Bson::Array(_)))
        && matches!(doc.get("b"), Some(Bson::Array(_)))
}

struct Model {
    docs: Vec<Document>,
    /// Pool positions of the existing indexes, in creation order.
    indexes: Vec<usize>,
}

impl Model {
    /// The code writing `doc` (replacing the document with `_id` `id`, if any) fails
    /// with, in index order as the store checks them.
    fn refusal(&self, id: i32, doc: &Document) -> Option<i32> {
        let pool = pool();
        for &position in &self.indexes {
            let name = pool[position].0;
            if parallel(name, doc) {
                return Some(171);
            }
            let mine = unique_keys(name, doc);
            let taken = self
                .docs
                .iter()
                .filter(|other| other.get_i32("_id").ok() != Some(id))
                .any(|other| !unique_keys(name, other).is_disjoint(&mine));
            if taken {
                return Some(11000);
            }
        }
        None
    }

    /// The code building index `position` over the documents fails with.
    fn build_refusal(&self, position: usize) -> Option<i32> {
        let name = pool()[position].0;
        if self.docs.iter().any(|doc| parallel(name, doc)) {
            return Some(171);
        }
        let mut seen = BTreeSet::new();
        for doc in &self.docs {
            for key in unique_keys(name, doc) {
                if !seen.insert(key) {
                    return Some(11000);
                }
            }
        }
        None
    }
}

fn raw(doc: Document) -> RawDocumentBuf {
    RawDocumentBuf::try_from(&doc).expect("encodes")
}

fn write_code(reply: &Document) -> Option<i32> {
    assert_eq!(reply.get_f64("ok").ok(), Some(1.0), "{reply:?}");
    let errors = reply.get_array("writeErrors").ok()?;
    errors[0].as_document()?.get_i32("code").ok()
}

fn check(engine: &Engine, model: &Model) {
    let reply = ok(engine, "db", raw(doc! { "validate": "c" }));
    assert_eq!(reply.get_bool("valid").ok(), Some(true), "{reply:?}");
    assert_eq!(
        reply.get_i32("nIndexes").ok(),
        Some(1 + model.indexes.len() as i32),
        "{reply:?}"
    );
    assert_eq!(contents(engine, "db", "c"), model.docs);
}

fn run_steps(steps: Vec<Step>, case: u64) {
    let path = temp_db(&format!("index-model-{case}"), "data.mfdb");
    let mut engine = Engine::open(&path, options()).expect("open");
    ok(&engine, "db", raw(doc! { "create": "c" }));
    let mut model = Model {
        docs: Vec::new(),
        indexes: Vec::new(),
    };
    let mut next_id = 0;
    for step in steps {
        match step {
            Step::Insert(body) => {
                let mut doc = doc! { "_id": next_id };
                doc.extend(body);
                next_id += 1;
                let expected = model.refusal(-1, &doc);
                let reply = run(
                    &engine,
                    "db",
                    raw(doc! { "insert": "c", "documents": [doc.clone()] }),
                );
                assert_eq!(write_code(&reply), expected, "insert {doc:?}");
                if expected.is_none() {
                    model.docs.push(doc);
                }
            }
            Step::Replace(i, body) if !model.docs.is_empty() => {
                let at = i % model.docs.len();
                let id = model.docs[at].get_i32("_id").expect("_id");
                let mut doc = doc! { "_id": id };
                doc.extend(body.clone());
                let expected = model.refusal(id, &doc);
                let reply = run(
                    &engine,
                    "db",
                    raw(doc! { "update": "c", "updates": [{ "q": { "_id": id }, "u": body }] }),
                );
                assert_eq!(write_code(&reply), expected, "replace by {doc:?}");
                if expected.is_none() {
                    model.docs[at] = doc;
                }
            }
            Step::SetB(i, b) if !model.docs.is_empty() => {
                let at = i % model.docs.len();
                let id = model.docs[at].get_i32("_id").expect("_id");
                let mut doc = model.docs[at].clone();
                let update = match &b {
                    Some(b) => {
                        doc.insert("b", b.clone());
                        doc! { "$set": { "b": b.clone() } }
                    }
                    None => {
                        doc.remove("b");
                        doc! { "$unset": { "b": 1 } }
                    }
                };
                let expected = model.refusal(id, &doc);
                let reply = run(
                    &engine,
                    "db",
                    raw(doc! { "update": "c", "updates": [{ "q": { "_id": id }, "u": update }] }),
                );
                assert_eq!(write_code(&reply), expected, "set b in {doc:?}");
                if expected.is_none() {
                    model.docs[at] = doc;
                }
            }
            Step::Delete(i) if !model.docs.is_empty() => {
                let at = i % model.docs.len();
                let id = model.docs[at].get_i32("_id").expect("_id");
                let reply = run(
                    &engine,
                    "db",
                    raw(doc! { "delete": "c", "deletes": [{ "q": { "_id": id }, "limit": 1 }] }),
                );
                assert_eq!(write_code(&reply), None);
                model.docs.remove(at);
            }
            Step::CreateIndex(i) => {
                let position = i % pool().len();
                if model.indexes.contains(&position) {
                    continue;
                }
                let spec = pool()[position].1.clone();
                let cmd = raw(doc! { "createIndexes": "c", "indexes": [spec] });
                match model.build_refusal(position) {
                    Some(code) => {
                        fails(&engine, "db", cmd, code);
                    }
                    None => {
                        ok(&engine, "db", cmd);
                        model.indexes.push(position);
                    }
                }
            }
            Step::DropIndex(i) if !model.indexes.is_empty() => {
                let at = i % model.indexes.len();
                let name = pool()[model.indexes[at]].0;
                ok(
                    &engine,
                    "db",
                    raw(doc! { "dropIndexes": "c", "index": name }),
                );
                model.indexes.remove(at);
            }
            Step::Reopen => {
                // Dropped without a clean close: the next open replays the log.
                drop(engine);
                engine = Engine::open(&path, options()).expect("reopen");
            }
            _ => continue,
        }
        check(&engine, &model);
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 40, ..ProptestConfig::default() })]

    #[test]
    fn index_entries_always_equal_what_the_documents_generate(
        steps in prop::collection::vec(step(), 1..45),
        case in any::<u64>(),
    ) {
        run_steps(steps, case);
    }
}
