//! Differential tests of pipelines against small reference models on
//! generated documents: `$group` with `$sum` and `$count` against a map
//! keyed by MongoDB's value equality, and `$sort` + `$skip` + `$limit`
//! against a `Vec` sorted by a hand-written type-bracket order.

use crate::pipeline::run;
use bson::{Bson, Document, doc};
use proptest::prelude::*;
use std::cmp::Ordering;
use std::collections::HashMap;

/// A group key value; numbers are whole so equal ones are easy to spot.
fn key_value() -> impl Strategy<Value = Option<Bson>> {
    prop_oneof![
        Just(None),
        Just(Some(Bson::Null)),
        (0..3_i32).prop_map(|n| Some(Bson::Int32(n))),
        (0..3_i64).prop_map(|n| Some(Bson::Int64(n))),
        (0..3_i32).prop_map(|n| Some(Bson::Double(f64::from(n)))),
        prop::sample::select(vec!["a", "b"]).prop_map(|s| Some(Bson::String(s.to_owned()))),
    ]
}

/// A summed value: small and huge numbers of each type, and non-numbers.
fn sum_value() -> impl Strategy<Value = Option<Bson>> {
    prop_oneof![
        Just(None),
        Just(Some(Bson::Null)),
        Just(Some(Bson::String("7".to_owned()))),
        (-5..5_i32).prop_map(|n| Some(Bson::Int32(n))),
        prop::sample::select(vec![i32::MAX, i32::MIN]).prop_map(|n| Some(Bson::Int32(n))),
        (-5..5_i64).prop_map(|n| Some(Bson::Int64(n))),
        prop::sample::select(vec![i64::MAX / 2, i64::MIN / 2, i64::MAX])
            .prop_map(|n| Some(Bson::Int64(n))),
        (-5..5_i32).prop_map(|n| Some(Bson::Double(f64::from(n) / 2.0))),
    ]
}

fn document(fields: &[(&str, &Option<Bson>)]) -> Document {
    let mut doc = Document::new();
    for (name, value) in fields {
        if let Some(v) = value {
            doc.insert(*name, v.clone());
        }
    }
    doc
}

/// The reference's notion of equal group keys: null and missing are one
/// key; whole numbers of any type are one key per value.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
enum Key {
    Null,
    Number(i64),
    Text(String),
}

fn key_of(value: &Option<Bson>) -> Key {
    match value {
        None | Some(Bson::Null) => Key::Null,
        Some(Bson::Int32(n)) => Key::Number(i64::from(*n)),
        Some(Bson::Int64(n)) => Key::Number(*n),
        Some(Bson::Double(v)) => Key::Number(*v as i64),
        Some(Bson::String(s)) => Key::Text(s.clone()),
        Some(other) => panic!("no such generated key {other:?}"),
    }
}

/// The reference `$sum`: exact integers, the widest type seen, MongoDB's
/// manual's result types (int, then long, then double).
#[derive(Default)]
struct Sum {
    integer: i128,
    double: f64,
    saw_long: bool,
    saw_double: bool,
}

impl Sum {
    fn add(&mut self, value: &Option<Bson>) {
        match value {
            Some(Bson::Int32(n)) => self.integer += i128::from(*n),
            Some(Bson::Int64(n)) => {
                self.integer += i128::from(*n);
                self.saw_long = true;
            }
            Some(Bson::Double(v)) => {
                self.double += v;
                self.saw_double = true;
            }
            _ => {}
        }
    }

    fn result(&self) -> Bson {
        let as_double = Bson::Double(self.integer as f64 + self.double);
        if self.saw_double {
            return as_double;
        }
        match (i32::try_from(self.integer), i64::try_from(self.integer)) {
            (Ok(small), _) if !self.saw_long => Bson::Int32(small),
            (_, Ok(long)) => Bson::Int64(long),
            _ => as_double,
        }
    }
}

fn reference_group(rows: &[(Option<Bson>, Option<Bson>)]) -> Vec<Document> {
    let mut order: Vec<(Bson, Sum, i32)> = Vec::new();
    let mut index: HashMap<Key, usize> = HashMap::new();
    for (k, v) in rows {
        let at = *index.entry(key_of(k)).or_insert_with(|| {
            order.push((k.clone().unwrap_or(Bson::Null), Sum::default(), 0));
            order.len() - 1
        });
        order[at].1.add(v);
        order[at].2 += 1;
    }
    order
        .into_iter()
        .map(|(id, sum, count)| doc! {"_id": id, "s": sum.result(), "c": count})
        .collect()
}

/// A sortable scalar; arrays stay out so the multikey rule does not enter.
fn sort_value() -> impl Strategy<Value = Option<Bson>> {
    prop_oneof![
        Just(None),
        Just(Some(Bson::Null)),
        (-3..3_i32).prop_map(|n| Some(Bson::Int32(n))),
        (-3..3_i64).prop_map(|n| Some(Bson::Int64(n))),
        (-6..6_i32).prop_map(|n| Some(Bson::Double(f64::from(n) / 2.0))),
        prop::sample::select(vec!["", "a", "ab", "b"])
            .prop_map(|s| Some(Bson::String(s.to_owned()))),
        any::<bool>().prop_map(|b| Some(Bson::Boolean(b))),
    ]
}

/// MongoDB's order for the generated scalars: missing and null alike, then
/// numbers by value, then strings by bytes, then booleans.
fn reference_order(a: &Option<Bson>, b: &Option<Bson>) -> Ordering {
    fn rank(v: &Option<Bson>) -> (u8, f64, String) {
        match v {
            None | Some(Bson::Null) => (0, 0.0, String::new()),
            Some(Bson::Int32(n)) => (1, f64::from(*n), String::new()),
            Some(Bson::Int64(n)) => (1, *n as f64, String::new()),
            Some(Bson::Double(x)) => (1, *x, String::new()),
            Some(Bson::String(s)) => (2, 0.0, s.clone()),
            Some(Bson::Boolean(b)) => (3, f64::from(u8::from(*b)), String::new()),
            Some(other) => panic!("no such generated value {other:?}"),
        }
    }
    let (x, y) = (rank(a), rank(b));
    x.0.cmp(&y.0)
        .then(x.1.total_cmp(&y.1))
        .then_with(|| x.2.cmp(&y.2))
}

proptest! {
    #[test]
    fn group_sum_and_count_agree_with_a_map(
        rows in prop::collection::vec((key_value(), sum_value()), 0..40),
    ) {
        let input: Vec<Document> = rows
            .iter()
            .map(|(k, v)| document(&[("k", k), ("v", v)]))
            .collect();
        let pipeline = [doc! {"$group": {"_id": "$k", "s": {"$sum": "$v"}, "c": {"$count": {}}}}];
        let got = run(&input, &pipeline).expect("group runs");
        prop_assert_eq!(got, reference_group(&rows));
    }

    #[test]
    fn sort_skip_limit_agree_with_a_sorted_vec(
        values in prop::collection::vec(sort_value(), 0..40),
        descending in any::<bool>(),
        skip in prop::option::of(0..45_u64),
        limit in prop::option::of(1..45_u64),
    ) {
        let input: Vec<Document> = values
            .iter()
            .zip(0..)
            .map(|(v, id)| {
                let mut d = doc! {"_id": id};
                if let Some(v) = v {
                    d.insert("a", v.clone());
                }
                d
            })
            .collect();
        let direction = if descending { -1 } else { 1 };
        let mut pipeline = vec![doc! {"$sort": {"a": direction}}];
        pipeline.extend(skip.map(|n| doc! {"$skip": n as i64}));
        pipeline.extend(limit.map(|n| doc! {"$limit": n as i64}));
        let got: Vec<i32> = run(&input, &pipeline)
            .expect("sort runs")
            .iter()
            .map(|d| d.get_i32("_id").expect("int _id"))
            .collect();

        // Vec::sort_by is stable, as the pipeline's sort is: ties keep input order.
        let mut expected: Vec<(i32, &Option<Bson>)> = (0..).zip(values.iter()).collect();
        expected.sort_by(|(_, a), (_, b)| {
            let order = reference_order(a, b);
            if descending { order.reverse() } else { order }
        });
        let expected: Vec<i32> = expected
            .into_iter()
            .map(|(id, _)| id)
            .skip(usize::try_from(skip.unwrap_or(0)).expect("small"))
            .take(usize::try_from(limit.unwrap_or(u64::MAX)).unwrap_or(usize::MAX))
            .collect();
        prop_assert_eq!(got, expected);
    }
}
