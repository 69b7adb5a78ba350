//! The stages that read other collections (`$lookup`, `$unionWith`, through
//! `Pipeline::stream_with` over collections held in a map) and `$sample` and `$bucket`:
//! the manual's examples, MongoDB's matching rules for `$lookup` (arrays, null and
//! missing, regular expressions), nesting, the parse errors with their codes, a proptest
//! of equality joins against a nested-loop model, and `$sample`'s frequencies.

use crate::support::raw;
use bson::{Bson, Document, RawArrayBuf, RawDocumentBuf, doc};
use proptest::prelude::*;
use query::{DocumentStream, Foreign, Pipeline, QueryError};
use std::cell::Cell;
use std::collections::BTreeMap;

/// Collections by name, counting the scans.
#[derive(Default)]
struct Db {
    collections: BTreeMap<String, Vec<Document>>,
    scans: Cell<usize>,
}

impl Db {
    fn with(mut self, name: &str, docs: &[Document]) -> Db {
        self.collections.insert(name.to_owned(), docs.to_vec());
        self
    }
}

impl Foreign for Db {
    fn scan(&self, name: &str) -> Result<DocumentStream<'_>, QueryError> {
        self.scans.set(self.scans.get() + 1);
        let docs: Vec<RawDocumentBuf> = self
            .collections
            .get(name)
            .map(|docs| docs.iter().map(raw).collect())
            .unwrap_or_default();
        Ok(Box::new(docs.into_iter().map(Ok)))
    }
}

fn stages(pipeline: &[Document]) -> RawArrayBuf {
    let mut array = RawArrayBuf::new();
    for stage in pipeline {
        array.push(raw(stage));
    }
    array
}

fn run(db: &Db, input: &[Document], pipeline: &[Document]) -> Result<Vec<Document>, QueryError> {
    let pipeline = Pipeline::parse(&stages(pipeline))?;
    let out = pipeline
        .stream_with(input.iter().map(|d| Ok(raw(d))), db)
        .collect::<Result<Vec<_>, _>>()?;
    Ok(out
        .iter()
        .map(|d| Document::try_from(d.as_ref()).expect("output converts"))
        .collect())
}

#[track_caller]
fn yields(db: &Db, input: &[Document], pipeline: &[Document], expected: &[Document]) {
    let got = run(db, input, pipeline).unwrap_or_else(|e| panic!("{pipeline:?}: {e}"));
    assert_eq!(got, expected, "{pipeline:?}");
}

#[track_caller]
fn fails(pipeline: &[Document], code: i32, text: &str) {
    match run(&Db::default(), &[doc! {"_id": 1}], pipeline) {
        Ok(out) => panic!("{pipeline:?} gave {out:?}; expected code {code}"),
        Err(e) => {
            assert_eq!(e.code(), code, "{pipeline:?}: {e}");
            assert!(
                e.to_string().contains(text),
                "{pipeline:?}: {e} lacks {text:?}"
            );
        }
    }
}

fn orders() -> Vec<Document> {
    vec![
        doc! {"_id": 1, "item": "almonds", "price": 12, "quantity": 2},
        doc! {"_id": 2, "item": "pecans", "price": 20, "quantity": 1},
        doc! {"_id": 3},
    ]
}

fn inventory() -> Vec<Document> {
    vec![
        doc! {"_id": 1, "sku": "almonds", "instock": 120},
        doc! {"_id": 2, "sku": "bread", "instock": 80},
        doc! {"_id": 3, "sku": "cashews", "instock": 60},
        doc! {"_id": 4, "sku": "pecans", "instock": 70},
        doc! {"_id": 5, "sku": null},
        doc! {"_id": 6},
    ]
}

#[test]
fn equality_join_from_the_manual() {
    let db = Db::default().with("inventory", &inventory());
    let lookup = doc! {"$lookup": {"from": "inventory", "localField": "item", "foreignField": "sku", "as": "inv"}};
    let inv = inventory();
    yields(
        &db,
        &orders(),
        &[lookup],
        &[
            doc! {"_id": 1, "item": "almonds", "price": 12, "quantity": 2, "inv": [inv[0].clone()]},
            doc! {"_id": 2, "item": "pecans", "price": 20, "quantity": 1, "inv": [inv[3].clone()]},
            // A missing local field is null: it joins null and missing foreign fields.
            doc! {"_id": 3, "inv": [inv[4].clone(), inv[5].clone()]},
        ],
    );
    assert_eq!(
        db.scans.get(),
        1,
        "the foreign collection is read once per run"
    );
}

#[test]
fn arrays_on_either_side_join_through_their_elements() {
    let db = Db::default().with(
        "f",
        &[
            doc! {"_id": 1, "k": 1},
            doc! {"_id": 2, "k": [2, 9]},
            doc! {"_id": 3, "k": [[1, 2]]},
            doc! {"_id": 4, "k": {"n": 2}},
            doc! {"_id": 5, "k": 2.0},
        ],
    );
    let lookup = |local: &str| {
        doc! {"$lookup": {"from": "f", "localField": local, "foreignField": "k", "as": "j"}}
    };
    let ids = |docs: Vec<Document>| -> Vec<Vec<i32>> {
        docs.iter()
            .map(|d| {
                d.get_array("j")
                    .expect("as is an array")
                    .iter()
                    .map(|j| {
                        j.as_document()
                            .and_then(|j| j.get_i32("_id").ok())
                            .expect("_id")
                    })
                    .collect()
            })
            .collect()
    };
    let input = [
        doc! {"_id": 10, "a": [1, 2]},
        doc! {"_id": 11, "a": [[1, 2]]},
        doc! {"_id": 12, "a": []},
        doc! {"_id": 13, "a": {"n": 2}},
    ];
    let got = ids(run(&db, &input, &[lookup("a")]).expect("runs"));
    // [1, 2] → $in [1, 2]: 1, the array holding 2, and 2.0 (numbers compare by value);
    // [[1, 2]] → $eq [1, 2]: the array holding it; [] → null: no foreign k is null or
    // missing; an embedded document compares whole.
    assert_eq!(got, vec![vec![1, 2, 5], vec![3], vec![], vec![4]]);
    // Through an array of documents on the way: each element's field.
    let input = [doc! {"_id": 20, "xs": [{"v": 1}, {"v": 9}, {"w": 1}]}];
    let got = ids(run(&db, &input, &[lookup("xs.v")]).expect("runs"));
    assert_eq!(got, vec![vec![1, 2]]);
}

#[test]
fn a_regular_expression_is_compared_not_run() {
    let regex = crate::filter_cases::re("^a", "");
    let db = Db::default().with(
        "f",
        &[
            doc! {"_id": 1, "k": "abc"},
            doc! {"_id": 2, "k": regex.clone()},
        ],
    );
    let lookup = doc! {"$lookup": {"from": "f", "localField": "r", "foreignField": "k", "as": "j"}};
    for local in [
        regex.clone(),
        Bson::Array(vec![regex.clone(), Bson::Int32(7)]),
    ] {
        let out = run(
            &db,
            &[doc! {"_id": 1, "r": local}],
            std::slice::from_ref(&lookup),
        )
        .expect("runs");
        let joined = out[0].get_array("j").expect("array");
        assert_eq!(joined.len(), 1, "{out:?}");
        assert_eq!(
            joined[0].as_document().and_then(|d| d.get_i32("_id").ok()),
            Some(2)
        );
    }
}

#[test]
fn pipeline_with_let_from_the_manual() {
    let db = Db::default().with("inventory", &inventory());
    let lookup = doc! {"$lookup": {
        "from": "inventory",
        "let": {"it": "$item", "q": "$quantity"},
        "pipeline": [
            {"$match": {"$expr": {"$and": [{"$eq": ["$sku", "$$it"]}, {"$gte": ["$instock", "$$q"]}]}}},
            {"$project": {"_id": 0, "sku": 1}},
        ],
        "as": "stock",
    }};
    yields(
        &db,
        &orders()[..2],
        &[lookup],
        &[
            doc! {"_id": 1, "item": "almonds", "price": 12, "quantity": 2, "stock": [{"sku": "almonds"}]},
            doc! {"_id": 2, "item": "pecans", "price": 20, "quantity": 1, "stock": [{"sku": "pecans"}]},
        ],
    );
}

#[test]
fn equality_then_pipeline_and_collectionless_documents() {
    let db = Db::default().with("inventory", &inventory());
    let lookup = doc! {"$lookup": {
        "from": "inventory", "localField": "item", "foreignField": "sku",
        "pipeline": [{"$project": {"_id": 0, "instock": 1}}], "as": "x",
    }};
    yields(
        &db,
        &orders()[..1],
        &[lookup],
        &[doc! {"_id": 1, "item": "almonds", "price": 12, "quantity": 2, "x": [{"instock": 120}]}],
    );
    let lookup = doc! {"$lookup": {
        "let": {"n": "$_id"},
        "pipeline": [{"$documents": [{"a": 1}, {"a": 2}]}, {"$match": {"$expr": {"$eq": ["$a", "$$n"]}}}],
        "as": "d",
    }};
    yields(
        &Db::default(),
        &[doc! {"_id": 2}, doc! {"_id": 3}],
        &[lookup],
        &[doc! {"_id": 2, "d": [{"a": 2}]}, doc! {"_id": 3, "d": []}],
    );
}

#[test]
fn nested_lookups_facets_and_dotted_as() {
    let db = Db::default()
        .with("b", &[doc! {"_id": 1, "c": 5}])
        .with("c", &[doc! {"_id": 5, "name": "five"}]);
    let inner =
        doc! {"$lookup": {"from": "c", "localField": "c", "foreignField": "_id", "as": "cs"}};
    let outer = doc! {"$lookup": {"from": "b", "localField": "b", "foreignField": "_id", "pipeline": [inner], "as": "x.bs"}};
    let expected = doc! {"_id": 1, "b": 1, "x": {"bs": [{"_id": 1, "c": 5, "cs": [{"_id": 5, "name": "five"}]}]}};
    // `as` through a scalar replaces it with a document.
    yields(
        &db,
        &[doc! {"_id": 1, "b": 1, "x": 3}],
        std::slice::from_ref(&outer),
        std::slice::from_ref(&expected),
    );
    let facet = doc! {"$facet": {"joined": [outer.clone()]}};
    yields(
        &db,
        &[doc! {"_id": 1, "b": 1, "x": 3}],
        &[facet],
        &[doc! {"joined": [expected]}],
    );
    let pipeline = Pipeline::parse(&stages(&[doc! {"$facet": {"j": [outer]}}])).expect("parses");
    let names: Vec<String> = pipeline.foreign_collections().into_iter().collect();
    assert_eq!(names, ["b", "c"]);
}

#[test]
fn without_the_engine_a_lookup_is_refused() {
    let lookup = doc! {"$lookup": {"from": "f", "localField": "a", "foreignField": "b", "as": "j"}};
    let pipeline = Pipeline::parse(&stages(&[lookup])).expect("parses");
    let error = pipeline
        .run(std::iter::once(Ok(raw(&doc! {"a": 1}))))
        .expect_err("no collections");
    assert_eq!(error.code(), 238);
}

#[test]
fn parse_errors_carry_mongodb_codes() {
    let l = |spec: Document| vec![doc! {"$lookup": spec}];
    fails(
        &l(doc! {"from": "f", "localField": "a", "foreignField": "b"}),
        9,
        "must specify 'as' field",
    );
    fails(
        &l(doc! {"from": "f", "as": "j"}),
        9,
        "requires either 'pipeline' or both",
    );
    fails(
        &l(doc! {"from": "f", "as": "j", "localField": "a"}),
        9,
        "requires either 'pipeline' or both",
    );
    fails(
        &l(doc! {"from": "f", "as": "j", "localField": "a", "pipeline": []}),
        9,
        "both or neither",
    );
    fails(
        &l(doc! {"from": "f", "as": "j", "localField": "a", "foreignField": "b", "let": {"x": 1}}),
        9,
        "must also specify 'pipeline'",
    );
    fails(
        &l(doc! {"from": "f", "as": "j", "localField": "a", "foreignField": "b", "z": "y"}),
        9,
        "unknown argument to $lookup: z",
    );
    fails(
        &l(doc! {"as": "j", "localField": "a", "foreignField": "b"}),
        9,
        "must have a pipeline with $documents",
    );
    fails(
        &l(doc! {"from": "f", "as": 1, "localField": "a", "foreignField": "b"}),
        9,
        "must be a string",
    );
    fails(
        &l(doc! {"from": 1, "as": "j", "localField": "a", "foreignField": "b"}),
        9,
        "must be a string or an object",
    );
    fails(
        &l(
            doc! {"from": {"db": "d", "coll": "c"}, "as": "j", "localField": "a", "foreignField": "b"},
        ),
        9,
        "is not supported for db: d and coll: c",
    );
    fails(
        &l(doc! {"from": "f", "as": "j", "pipeline": {}}),
        14,
        "must be specified as an array",
    );
    fails(
        &l(doc! {"from": "f", "as": "j", "pipeline": [], "let": 1}),
        9,
        "must be an object",
    );
    fails(
        &l(doc! {"from": "f", "as": "j", "pipeline": [], "let": {"Bad": 1}}),
        9,
        "Invalid 'let' parameter",
    );
    fails(
        &l(doc! {"from": "f", "as": "$j", "pipeline": []}),
        16410,
        "may not start with '$'",
    );
    fails(
        &l(doc! {"from": "f", "as": "j", "pipeline": [{"$out": "x"}]}),
        51047,
        "$out is not allowed",
    );
    fails(
        &l(doc! {"from": "f", "as": "j", "pipeline": [{"$bogus": 1}]}),
        40324,
        "Unrecognized pipeline stage",
    );
}

/// A value of the model's small domain, `None` for a missing field.
fn value() -> impl Strategy<Value = Option<Bson>> {
    let scalar = prop_oneof![(0..4i32).prop_map(Bson::Int32), Just(Bson::Null)];
    prop_oneof![
        Just(None),
        scalar.clone().prop_map(Some),
        prop::collection::vec(scalar, 0..3).prop_map(|v| Some(Bson::Array(v))),
    ]
}

fn with_field(id: i32, name: &str, value: &Option<Bson>) -> Document {
    let mut doc = doc! {"_id": id};
    if let Some(value) = value {
        doc.insert(name, value.clone());
    }
    doc
}

/// The join keys a value stands for: the elements of an array (the array itself too on
/// the foreign side, which `$eq` compares whole), null for missing, or the value.
fn keys(value: &Option<Bson>, foreign: bool) -> Vec<Bson> {
    match value {
        None => vec![Bson::Null],
        Some(Bson::Array(items)) if foreign => {
            let mut keys = items.clone();
            keys.push(Bson::Array(items.clone()));
            keys
        }
        Some(Bson::Array(items)) if items.is_empty() => vec![Bson::Null],
        Some(Bson::Array(items)) => items.clone(),
        Some(v) => vec![v.clone()],
    }
}

proptest! {
    #[test]
    fn equality_joins_match_a_nested_loop(
        local in prop::collection::vec(value(), 1..6),
        foreign in prop::collection::vec(value(), 0..8),
    ) {
        let input: Vec<Document> =
            local.iter().enumerate().map(|(i, v)| with_field(i as i32, "a", v)).collect();
        let foreign_docs: Vec<Document> =
            foreign.iter().enumerate().map(|(i, v)| with_field(100 + i as i32, "k", v)).collect();
        let db = Db::default().with("f", &foreign_docs);
        let lookup = doc! {"$lookup": {"from": "f", "localField": "a", "foreignField": "k", "as": "j"}};
        let out = run(&db, &input, &[lookup]).expect("runs");
        for (i, doc) in out.iter().enumerate() {
            let wanted = keys(&local[i], false);
            let expected: Vec<Bson> = foreign_docs
                .iter()
                .zip(&foreign)
                .filter(|(_, v)| {
                    // An array foreign field that holds null does not match a missing local
                    // field's null by its elements alone: $eq null matches an array element
                    // that is null, so the key lists cover it.
                    keys(v, true).iter().any(|k| wanted.contains(k))
                })
                .map(|(d, _)| Bson::Document(d.clone()))
                .collect();
            prop_assert_eq!(doc.get_array("j").expect("array"), &expected, "input {:?}", doc);
        }
    }
}

#[test]
fn union_with_appends_another_collection_through_its_pipeline() {
    let db = Db::default()
        .with("q2", &[doc! {"_id": 10, "n": 5}, doc! {"_id": 11, "n": 50}])
        .with("q3", &[doc! {"_id": 20, "n": 7}]);
    let input = [doc! {"_id": 1, "n": 1}];
    yields(
        &db,
        &input,
        &[doc! {"$unionWith": "q2"}],
        &[
            doc! {"_id": 1, "n": 1},
            doc! {"_id": 10, "n": 5},
            doc! {"_id": 11, "n": 50},
        ],
    );
    // The sub-pipeline sees only the other collection; stages after see everything.
    yields(
        &db,
        &input,
        &[
            doc! {"$unionWith": {"coll": "q2", "pipeline": [{"$match": {"n": {"$gt": 10}}}, {"$unionWith": "q3"}]}},
            doc! {"$group": {"_id": null, "total": {"$sum": "$n"}}},
        ],
        &[doc! {"_id": null, "total": 1 + 50 + 7}],
    );
    yields(&db, &input, &[doc! {"$unionWith": "nope"}], &input);
    yields(
        &Db::default(),
        &input,
        &[doc! {"$unionWith": {"pipeline": [{"$documents": [{"d": 1}]}]}}],
        &[doc! {"_id": 1, "n": 1}, doc! {"d": 1}],
    );
    let pipeline = Pipeline::parse(&stages(&[
        doc! {"$unionWith": {"coll": "a", "pipeline": [{"$lookup": {"from": "b", "localField": "x", "foreignField": "y", "as": "z"}}]}},
    ]))
    .expect("parses");
    assert_eq!(
        pipeline
            .foreign_collections()
            .into_iter()
            .collect::<Vec<_>>(),
        ["a", "b"]
    );
}

#[test]
fn union_with_parse_errors_carry_mongodb_codes() {
    fails(&[doc! {"$unionWith": 1}], 9, "must be an object or string");
    fails(
        &[doc! {"$unionWith": {"coll": 1}}],
        9,
        "requires a string 'coll' field",
    );
    fails(
        &[doc! {"$unionWith": {"coll": "c", "x": 1}}],
        40415,
        "'$unionWith.x' is an unknown field",
    );
    fails(
        &[doc! {"$unionWith": {"coll": "c", "pipeline": 1}}],
        14,
        "expected type 'array'",
    );
    fails(
        &[doc! {"$unionWith": {"pipeline": []}}],
        9,
        "must have a pipeline with $documents",
    );
    fails(
        &[doc! {"$unionWith": {"coll": "c", "pipeline": [{"$out": "x"}]}}],
        31441,
        "$out is not allowed",
    );
    fails(&[doc! {"$unionWith": ""}], 73, "empty");
}

fn sample_ids(size: i32, n: i32) -> Vec<i32> {
    let input: Vec<Document> = (0..n).map(|i| doc! {"_id": i}).collect();
    run(&Db::default(), &input, &[doc! {"$sample": {"size": size}}])
        .expect("runs")
        .iter()
        .map(|d| d.get_i32("_id").expect("_id"))
        .collect()
}

#[test]
fn sample_draws_distinct_documents_uniformly_in_random_order() {
    let mut all = sample_ids(10, 4);
    all.sort_unstable();
    assert_eq!(
        all,
        [0, 1, 2, 3],
        "fewer documents than the size: all of them"
    );
    assert!(sample_ids(0, 4).is_empty());
    let trials = 4000;
    let (mut chosen, mut first) = ([0u32; 8], [0u32; 4]);
    for _ in 0..trials {
        let two = sample_ids(2, 8);
        assert_eq!(two.len(), 2);
        assert_ne!(two[0], two[1], "without replacement");
        for id in two {
            chosen[id as usize] += 1;
        }
        first[sample_ids(4, 4)[0] as usize] += 1;
    }
    // Each of 8 documents is in a sample of 2 with probability 1/4, and each of 4 comes
    // first with probability 1/4: 4,000 trials put both within ±0.05 (over 7 standard
    // deviations).
    for count in chosen.iter().chain(&first) {
        let share = f64::from(*count) / f64::from(trials);
        assert!(
            (0.2..0.3).contains(&share),
            "chosen {chosen:?}, first {first:?}"
        );
    }
}

#[test]
fn sample_parse_errors_carry_mongodb_codes() {
    fails(&[doc! {"$sample": 1}], 28745, "must be an object");
    fails(
        &[doc! {"$sample": {"size": "x"}}],
        28746,
        "must be a number",
    );
    fails(
        &[doc! {"$sample": {"size": -1}}],
        28747,
        "must not be negative",
    );
    fails(
        &[doc! {"$sample": {"size": 1, "x": 1}}],
        28748,
        "unrecognized option to $sample: x",
    );
    fails(&[doc! {"$sample": {}}], 28749, "must specify a size");
    assert_eq!(sample_ids_double(2.9), 2, "a double size truncates");
}

fn sample_ids_double(size: f64) -> usize {
    let input: Vec<Document> = (0..5).map(|i| doc! {"_id": i}).collect();
    run(&Db::default(), &input, &[doc! {"$sample": {"size": size}}])
        .expect("runs")
        .len()
}

#[test]
fn bucket_groups_by_ranges_as_the_manual_shows() {
    let artists = [
        doc! {"_id": 1, "first": "Emil", "born": 1868},
        doc! {"_id": 2, "first": "Joszef", "born": 1861},
        doc! {"_id": 3, "first": "Anna", "born": 1871},
        doc! {"_id": 4, "first": "Vincent", "born": 1853},
        doc! {"_id": 5, "first": "Alfred", "born": 1868},
        doc! {"_id": 6, "first": "Edvard", "born": 1863},
        doc! {"_id": 7, "first": "Odilon", "born": 1840},
        doc! {"_id": 8, "first": "Edvard", "born": 1855},
        doc! {"_id": 9, "first": "Nobody"},
    ];
    let db = Db::default();
    yields(
        &db,
        &artists,
        &[doc! {"$bucket": {
            "groupBy": "$born", "boundaries": [1840, 1850, 1860, 1870, 1880], "default": "Other",
            "output": {"count": {"$sum": 1}, "names": {"$push": "$first"}},
        }}],
        &[
            doc! {"_id": 1840, "count": 1, "names": ["Odilon"]},
            doc! {"_id": 1850, "count": 2, "names": ["Vincent", "Edvard"]},
            doc! {"_id": 1860, "count": 4, "names": ["Emil", "Joszef", "Alfred", "Edvard"]},
            doc! {"_id": 1870, "count": 1, "names": ["Anna"]},
            // A missing value sorts below every number: the default bucket.
            doc! {"_id": "Other", "count": 1, "names": ["Nobody"]},
        ],
    );
    // The default output is a count; an int and a double boundary are one type.
    yields(
        &db,
        &artists[..8],
        &[doc! {"$bucket": {"groupBy": "$born", "boundaries": [1800, 1860.5, 2000]}}],
        &[
            doc! {"_id": 1800, "count": 3},
            doc! {"_id": 1860.5, "count": 5},
        ],
    );
    let error = run(
        &db,
        &artists,
        &[doc! {"$bucket": {"groupBy": "$born", "boundaries": [1800, 2000]}}],
    )
    .expect_err("no bucket for a missing year and no default");
    assert_eq!(error.code(), 40066);
}

#[test]
fn bucket_parse_errors_carry_mongodb_codes() {
    let b = |spec: Document| vec![doc! {"$bucket": spec}];
    fails(&[doc! {"$bucket": 1}], 40201, "must be an object");
    fails(
        &b(doc! {"groupBy": "$a", "boundaries": [0, 1], "x": 1}),
        40197,
        "Unrecognized option to $bucket: x",
    );
    fails(
        &b(doc! {"groupBy": "$a"}),
        40198,
        "requires 'groupBy' and 'boundaries'",
    );
    fails(
        &b(doc! {"groupBy": [1, 2], "boundaries": [0, 1]}),
        40202,
        "$-prefixed path or an expression",
    );
    fails(
        &b(doc! {"groupBy": "a", "boundaries": [0, 1]}),
        40202,
        "$-prefixed path",
    );
    fails(
        &b(doc! {"groupBy": "$a", "boundaries": "abc"}),
        40200,
        "must be an array, but found type: string",
    );
    fails(
        &b(doc! {"groupBy": "$a", "boundaries": [0]}),
        40192,
        "at least 2 values, but found 1 value(s)",
    );
    fails(
        &b(doc! {"groupBy": "$a", "boundaries": [0, "a"]}),
        40193,
        "must have the same type",
    );
    fails(
        &b(doc! {"groupBy": "$a", "boundaries": [0, 400, 200]}),
        40194,
        "elements 1 and 2 are not in ascending order (400 is not less than 200)",
    );
    fails(
        &b(doc! {"groupBy": "$a", "boundaries": [0, 10], "default": 5}),
        40199,
        "'default' field must be less than the lowest boundary",
    );
    fails(
        &b(doc! {"groupBy": "$a", "boundaries": [0, 10], "output": "a"}),
        40196,
        "must be an object, but found type: string",
    );
}

#[test]
fn redact_descends_prunes_and_keeps_as_the_manual_shows() {
    let report = doc! {
        "_id": 1, "title": "123 Department Report", "tags": ["G", "STLW"], "year": 2014,
        "subsections": [
            {"subtitle": "Section 1", "tags": ["SI", "G"], "content": "one"},
            {"subtitle": "Section 2", "tags": ["STLW"], "content": "two"},
            {"subtitle": "Section 3", "tags": ["TK"], "content": {"text": "three", "tags": ["HCS"]}},
        ],
    };
    let access = doc! {"$redact": {"$cond": {
        "if": {"$gt": [{"$size": {"$setIntersection": ["$tags", ["STLW", "G"]]}}, 0]},
        "then": "$$DESCEND", "else": "$$PRUNE",
    }}};
    let mut expected = report.clone();
    let sections = expected.get_array_mut("subsections").expect("array");
    sections.truncate(2);
    yields(&Db::default(), &[report], &[access], &[expected]);

    let account = doc! {
        "_id": 1, "level": 1, "acct_id": "xyz123",
        "cc": {"level": 5, "type": "yy", "shipping_addr": [{"level": 3, "city": "Sydney"}]},
        "status": "A",
    };
    let levels = doc! {"$redact": {"$cond": {"if": {"$eq": ["$level", 5]}, "then": "$$PRUNE", "else": "$$DESCEND"}}};
    yields(
        &Db::default(),
        std::slice::from_ref(&account),
        &[levels],
        &[doc! {"_id": 1, "level": 1, "acct_id": "xyz123", "status": "A"}],
    );
    // $$KEEP keeps a subtree whole; $$ROOT is the whole document at every depth; a pruned
    // top-level document is dropped; arrays of arrays are walked.
    let docs = [
        doc! {"_id": 1, "keep": true, "a": {"x": 1, "b": {"hide": true}}},
        doc! {"_id": 2, "hide": true},
        doc! {"_id": 3, "n": [[{"hide": true}, {"y": 2}], 7]},
    ];
    let stage = doc! {"$redact": {"$switch": {"branches": [
        {"case": {"$eq": ["$$ROOT.keep", true]}, "then": "$$KEEP"},
        {"case": {"$eq": ["$hide", true]}, "then": "$$PRUNE"},
    ], "default": "$$DESCEND"}}};
    yields(
        &Db::default(),
        &docs,
        &[stage],
        &[docs[0].clone(), doc! {"_id": 3, "n": [[{"y": 2}], 7]}],
    );
    fails(&[doc! {"$redact": 1}], 17053, "but returned 1");
}

fn keyed(keys: &[Bson]) -> Vec<Document> {
    keys.iter()
        .enumerate()
        .map(|(i, k)| {
            let mut doc = doc! {"_id": i as i32};
            if k != &Bson::Undefined {
                doc.insert("k", k.clone());
            }
            doc
        })
        .collect()
}

#[test]
fn bucket_auto_cuts_sorted_runs_as_mongodb_does() {
    let prices: Vec<Bson> = [199.99, 280.0, 76.04, 167.3, 483.0, 385.0, 159.0, 118.42]
        .into_iter()
        .map(Bson::Double)
        .collect();
    let auto = |buckets: i32| doc! {"$bucketAuto": {"groupBy": "$k", "buckets": buckets}};
    yields(
        &Db::default(),
        &keyed(&prices),
        &[auto(4)],
        &[
            doc! {"_id": {"min": 76.04, "max": 159.0}, "count": 2},
            doc! {"_id": {"min": 159.0, "max": 199.99}, "count": 2},
            doc! {"_id": {"min": 199.99, "max": 385.0}, "count": 2},
            doc! {"_id": {"min": 385.0, "max": 483.0}, "count": 2},
        ],
    );
    let ints = |v: &[i32]| keyed(&v.iter().map(|&n| Bson::Int32(n)).collect::<Vec<_>>());
    // round(5 / 2) = 3 per run; equal keys stay in one run.
    yields(
        &Db::default(),
        &ints(&[2, 1, 3, 1, 1]),
        &[auto(2)],
        &[
            doc! {"_id": {"min": 1, "max": 2}, "count": 3},
            doc! {"_id": {"min": 2, "max": 3}, "count": 2},
        ],
    );
    yields(
        &Db::default(),
        &ints(&[1, 1, 2, 1, 1]),
        &[auto(2)],
        &[
            doc! {"_id": {"min": 1, "max": 2}, "count": 4},
            doc! {"_id": {"min": 2, "max": 2}, "count": 1},
        ],
    );
    // More buckets than documents: one each; a missing key is null and sorts first.
    let mixed = keyed(&[Bson::Int32(5), Bson::Undefined, Bson::Int32(3)]);
    let out = run(
        &Db::default(),
        &mixed,
        &[doc! {"$bucketAuto": {"groupBy": "$k", "buckets": 5, "output": {"ids": {"$push": "$_id"}}}}],
    )
    .expect("runs");
    assert_eq!(
        out,
        [
            doc! {"_id": {"min": null, "max": 3}, "ids": [1]},
            doc! {"_id": {"min": 3, "max": 5}, "ids": [2]},
            doc! {"_id": {"min": 5, "max": 5}, "ids": [0]},
        ]
    );
}

#[test]
fn bucket_auto_parse_errors_carry_mongodb_codes() {
    let a = |spec: Document| vec![doc! {"$bucketAuto": spec}];
    fails(&[doc! {"$bucketAuto": 1}], 40240, "must be an object");
    fails(
        &a(doc! {"groupBy": "k", "buckets": 2}),
        40239,
        "$-prefixed path",
    );
    fails(
        &a(doc! {"groupBy": "$k", "buckets": "2"}),
        40241,
        "must be a numeric value",
    );
    fails(
        &a(doc! {"groupBy": "$k", "buckets": 2.5}),
        40242,
        "32-bit integer",
    );
    fails(
        &a(doc! {"groupBy": "$k", "buckets": 0}),
        40243,
        "greater than 0",
    );
    fails(
        &a(doc! {"groupBy": "$k", "buckets": 2, "output": 1}),
        40244,
        "must be an object",
    );
    fails(
        &a(doc! {"groupBy": "$k", "buckets": 2, "x": 1}),
        40245,
        "Unrecognized option to $bucketAuto: x",
    );
    fails(
        &a(doc! {"groupBy": "$k"}),
        40246,
        "requires 'groupBy' and 'buckets'",
    );
    fails(
        &a(doc! {"groupBy": "$k", "buckets": 2, "granularity": 1}),
        40261,
        "must be a string",
    );
    fails(
        &a(doc! {"groupBy": "$k", "buckets": 2, "granularity": "R5"}),
        238,
        "granularity",
    );
}
