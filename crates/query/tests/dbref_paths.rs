//! Regression (issue 23, item 2): DBRef field names in pipeline field paths.
//!
//! Beanie stores links as DBRefs (`{author: {$ref: "authors", $id: <id>}}`) and
//! fetches them with `$lookup` on `localField: "author.$id"`; `$unwind` and `$group`
//! use `"$author.$id"`. Every one answered 16410 ("FieldPath field names may not
//! start with '$'"). MongoDB's `FieldPath::uassertValidFieldName` allows exactly
//! the DBRef names `$id`, `$ref` and `$db`; any other `$` component stays 16410.

use crate::support::raw;
use bson::{Document, RawArrayBuf, RawDocumentBuf, doc, oid::ObjectId};
use query::{DocumentStream, Foreign, Pipeline, QueryError};

/// One foreign collection, `authors`.
struct Authors(Vec<Document>);

impl Foreign for Authors {
    fn scan(&self, name: &str) -> Result<DocumentStream<'_>, QueryError> {
        let docs: Vec<RawDocumentBuf> = if name == "authors" {
            self.0.iter().map(raw).collect()
        } else {
            Vec::new()
        };
        Ok(Box::new(docs.into_iter().map(Ok)))
    }
}

fn run(input: &[Document], pipeline: &[Document]) -> Result<Vec<Document>, QueryError> {
    let mut stages = RawArrayBuf::new();
    for stage in pipeline {
        stages.push(raw(stage));
    }
    let authors = Authors(vec![
        doc! {"_id": ObjectId::from_bytes([1; 12]), "name": "Ann"},
        doc! {"_id": ObjectId::from_bytes([2; 12]), "name": "Bob"},
    ]);
    let compiled = Pipeline::parse(&stages)?;
    let out = compiled
        .stream_with(input.iter().map(|d| Ok(raw(d))), &authors)
        .collect::<Result<Vec<_>, _>>()?;
    Ok(out
        .iter()
        .map(|d| Document::try_from(d.as_ref()).expect("output converts"))
        .collect())
}

fn books() -> Vec<Document> {
    let link = |n: u8| doc! {"$ref": "authors", "$id": ObjectId::from_bytes([n; 12])};
    vec![
        doc! {"_id": 1, "author": link(1)},
        doc! {"_id": 2, "author": link(2)},
        doc! {"_id": 3, "author": link(1)},
    ]
}

#[test]
fn lookup_joins_on_a_dbref_id() {
    let out = run(
        &books(),
        &[
            doc! {"$lookup": {"from": "authors", "localField": "author.$id", "foreignField": "_id", "as": "who"}},
            doc! {"$project": {"_id": 1, "name": {"$first": "$who.name"}}},
        ],
    )
    .expect("runs");
    assert_eq!(
        out,
        vec![
            doc! {"_id": 1, "name": "Ann"},
            doc! {"_id": 2, "name": "Bob"},
            doc! {"_id": 3, "name": "Ann"},
        ]
    );
}

#[test]
fn lookup_from_the_other_side_uses_a_dbref_foreign_field() {
    // Beanie's BackLink: the foreign documents hold the DBRef.
    let out = run(
        &[doc! {"_id": ObjectId::from_bytes([1; 12])}],
        &[
            doc! {"$lookup": {"from": "authors", "localField": "_id", "foreignField": "link.$id", "as": "x"}},
            doc! {"$project": {"_id": 0, "n": {"$size": "$x"}}},
        ],
    )
    .expect("runs");
    assert_eq!(out, vec![doc! {"n": 0}]);
}

#[test]
fn group_unwind_and_project_accept_dbref_names() {
    let out = run(
        &books(),
        &[
            doc! {"$group": {"_id": "$author.$id", "n": {"$sum": 1}, "refs": {"$addToSet": "$author.$ref"}}},
            doc! {"$sort": {"n": -1}},
            doc! {"$project": {"_id": 0, "n": 1, "refs": 1}},
        ],
    )
    .expect("runs");
    assert_eq!(
        out,
        vec![
            doc! {"n": 2, "refs": ["authors"]},
            doc! {"n": 1, "refs": ["authors"]}
        ]
    );
    let unwound = run(
        &[doc! {"_id": 1, "a": {"$id": [1, 2]}}],
        &[
            doc! {"$unwind": "$a.$id"},
            doc! {"$project": {"_id": 0, "a.$id": 1}},
        ],
    )
    .expect("runs");
    assert_eq!(
        unwound,
        vec![doc! {"a": {"$id": 1}}, doc! {"a": {"$id": 2}}]
    );
    let projected = run(
        &books(),
        &[
            doc! {"$limit": 1},
            doc! {"$project": {"_id": 0, "author.$ref": 1, "id": "$author.$id"}},
        ],
    )
    .expect("runs");
    assert_eq!(
        projected,
        vec![doc! {"author": {"$ref": "authors"}, "id": ObjectId::from_bytes([1; 12])}]
    );
}

#[test]
fn other_dollar_names_stay_refused() {
    for pipeline in [
        vec![doc! {"$group": {"_id": "$author.$name"}}],
        vec![doc! {"$unwind": "$a.$x"}],
        vec![
            doc! {"$lookup": {"from": "authors", "localField": "a.$x", "foreignField": "_id", "as": "j"}},
        ],
        vec![doc! {"$project": {"a": {"$x": 1}}}],
    ] {
        let e = run(&books(), &pipeline).expect_err("refused");
        assert!(
            [16410, 168, 31325].contains(&e.code()),
            "{pipeline:?}: {e} ({})",
            e.code()
        );
    }
    let e = run(&books(), &[doc! {"$group": {"_id": "$author.$name"}}]).expect_err("refused");
    assert_eq!(e.code(), 16410, "{e}");
}
