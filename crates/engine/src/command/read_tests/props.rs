//! A differential property: random documents written to the store, random simple filters,
//! sorts, skips and limits, read with find and getMores of random batch sizes, concatenated,
//! must equal a reference computed over a plain `Vec` by hand-written predicates and orders.

use super::{batch, engine, insert, ok};
use bson::{Bson, RawDocumentBuf, rawdoc};
use proptest::prelude::*;
use std::cmp::Ordering;

#[derive(Clone, Debug)]
struct Row {
    id: i32,
    a: Option<i32>,
    b: i32,
}

impl Row {
    fn to_doc(&self) -> RawDocumentBuf {
        let mut doc = rawdoc! { "_id": self.id };
        if let Some(a) = self.a {
            doc.append(bson::raw::cstr!("a"), a);
        }
        doc.append(bson::raw::cstr!("b"), self.b);
        doc.append(
            bson::raw::cstr!("pad"),
            "p".repeat(usize::try_from(self.b).unwrap_or(0) * 7),
        );
        doc
    }
}

#[derive(Clone, Debug)]
enum Query {
    All,
    AEquals(i32),
    BAbove(i32),
    AIn(Vec<i32>),
    AOrBBelow(i32, i32),
    Id(i32),
}

impl Query {
    fn spec(&self) -> RawDocumentBuf {
        match self {
            Query::All => rawdoc! {},
            Query::AEquals(k) => rawdoc! { "a": *k },
            Query::BAbove(k) => rawdoc! { "b": { "$gt": *k } },
            Query::AIn(list) => {
                let list: Vec<Bson> = list.iter().map(|&v| Bson::Int32(v)).collect();
                rawdoc! { "a": { "$in": bson::RawBson::try_from(Bson::Array(list)).expect("array") } }
            }
            Query::AOrBBelow(a, b) => rawdoc! { "$or": [{ "a": *a }, { "b": { "$lt": *b } }] },
            Query::Id(id) => rawdoc! { "_id": *id },
        }
    }

    fn matches(&self, row: &Row) -> bool {
        match self {
            Query::All => true,
            Query::AEquals(k) => row.a == Some(*k),
            Query::BAbove(k) => row.b > *k,
            Query::AIn(list) => row.a.is_some_and(|a| list.contains(&a)),
            Query::AOrBBelow(a, b) => row.a == Some(*a) || row.b < *b,
            Query::Id(id) => row.id == *id,
        }
    }
}

#[derive(Clone, Copy, Debug)]
enum Sort {
    Natural,
    BAscending,
    BDescendingIdAscending,
    AAscendingBDescending,
}

impl Sort {
    fn spec(self) -> Option<RawDocumentBuf> {
        match self {
            Sort::Natural => None,
            Sort::BAscending => Some(rawdoc! { "b": 1 }),
            Sort::BDescendingIdAscending => Some(rawdoc! { "b": -1, "_id": 1 }),
            Sort::AAscendingBDescending => Some(rawdoc! { "a": 1, "b": -1 }),
        }
    }

    /// A missing `a` sorts as null, below every number.
    fn compare(self, x: &Row, y: &Row) -> Ordering {
        match self {
            Sort::Natural => Ordering::Equal,
            Sort::BAscending => x.b.cmp(&y.b),
            Sort::BDescendingIdAscending => y.b.cmp(&x.b).then(x.id.cmp(&y.id)),
            Sort::AAscendingBDescending => x.a.cmp(&y.a).then(y.b.cmp(&x.b)),
        }
    }
}

fn rows() -> impl Strategy<Value = Vec<Row>> {
    prop::collection::vec((prop::option::weighted(0.8, 0..5i32), 0..20i32), 0..80).prop_map(
        |cells| {
            cells
                .into_iter()
                .enumerate()
                .map(|(i, (a, b))| Row {
                    id: i32::try_from(i).expect("small") * 3 % 97,
                    a,
                    b,
                })
                .collect()
        },
    )
}

fn query() -> impl Strategy<Value = Query> {
    prop_oneof![
        Just(Query::All),
        (0..5i32).prop_map(Query::AEquals),
        (0..20i32).prop_map(Query::BAbove),
        prop::collection::vec(0..5i32, 0..3).prop_map(Query::AIn),
        (0..5i32, 0..20i32).prop_map(|(a, b)| Query::AOrBBelow(a, b)),
        (0..100i32).prop_map(Query::Id),
    ]
}

fn sort() -> impl Strategy<Value = Sort> {
    prop_oneof![
        Just(Sort::Natural),
        Just(Sort::BAscending),
        Just(Sort::BDescendingIdAscending),
        Just(Sort::AAscendingBDescending),
    ]
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 64, ..ProptestConfig::default() })]

    #[test]
    fn find_and_get_more_equal_the_reference(
        rows in rows(),
        query in query(),
        sort in sort(),
        skip in prop::option::of(0..12i64),
        limit in prop::option::of(0..25i64),
        first_batch in prop::option::of(0..8i64),
        batches in prop::collection::vec(0..6i64, 1..8),
    ) {
        // Ids repeat when there are more rows than residues; keep the first of each.
        let mut seen = std::collections::BTreeSet::new();
        let rows: Vec<Row> = rows.into_iter().filter(|row| seen.insert(row.id)).collect();
        let (engine, _) = engine();
        insert(&engine, "p", rows.iter().map(Row::to_doc));

        let mut expected: Vec<&Row> = rows.iter().filter(|row| query.matches(row)).collect();
        expected.sort_by(|x, y| sort.compare(x, y));
        let skip_n = usize::try_from(skip.unwrap_or(0)).expect("small");
        let limit_n = limit.filter(|&n| n > 0).map_or(usize::MAX, |n| usize::try_from(n).expect("small"));
        let expected: Vec<i32> = expected.into_iter().skip(skip_n).take(limit_n).map(|row| row.id).collect();

        let mut cmd = rawdoc! { "find": "p", "filter": query.spec() };
        if let Some(spec) = sort.spec() {
            cmd.append(bson::raw::cstr!("sort"), spec);
        }
        if let Some(skip) = skip {
            cmd.append(bson::raw::cstr!("skip"), skip);
        }
        if let Some(limit) = limit {
            cmd.append(bson::raw::cstr!("limit"), limit);
        }
        if let Some(size) = first_batch {
            cmd.append(bson::raw::cstr!("batchSize"), size);
        }
        let reply = ok(&engine, cmd);
        let (docs, mut id) = batch(&reply);
        let mut got: Vec<i32> = docs.iter().map(|d| d.get_i32("_id").expect("_id")).collect();
        let first_max = usize::try_from(first_batch.unwrap_or(101)).expect("small");
        prop_assert!(got.len() <= first_max);
        let mut round = 0;
        while id != 0 {
            let size = batches[round % batches.len()];
            round += 1;
            prop_assert!(round < 1000, "cursor never ends");
            let reply = ok(&engine, rawdoc! { "getMore": id, "collection": "p", "batchSize": size });
            let (docs, next) = batch(&reply);
            if size > 0 {
                prop_assert!(docs.len() <= usize::try_from(size).expect("small"));
            }
            got.extend(docs.iter().map(|d| d.get_i32("_id").expect("_id")));
            id = next;
        }
        prop_assert_eq!(got, expected);
        prop_assert_eq!(engine.cursors.len(), 0);
    }
}
