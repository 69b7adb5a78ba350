//! Differential test: the raw-byte matcher against a small tree-based reference
//! matcher over `bson::Document`, on generated documents and filters.
//!
//! The reference is written independently of the crate: its own path walk, its
//! own type brackets and number comparison, its own operator semantics, from
//! MongoDB's manual. Generated filters are an AST rendered to a filter
//! document for the crate and interpreted directly by the reference.

use crate::support::raw;
use bson::{Bson, Document, doc};
use proptest::prelude::*;
use query::Filter;
use std::cmp::Ordering;

#[derive(Debug, Clone)]
enum Op {
    Eq(Bson),
    Ne(Bson),
    Cmp(&'static str, Bson),
    In(Vec<Bson>),
    Nin(Vec<Bson>),
    Exists(bool),
    Size(i32),
    Type(&'static str),
    All(Vec<Bson>),
    ElemValue(&'static str, Bson),
    ElemObject(String, Bson),
    Not(Box<Op>),
}

#[derive(Debug, Clone)]
enum F {
    Path(String, Op),
    And(Vec<F>),
    Or(Vec<F>),
    Nor(Vec<F>),
}

fn render_op(op: &Op) -> Bson {
    Bson::Document(match op {
        Op::Eq(v) => doc! {"$eq": v.clone()},
        Op::Ne(v) => doc! {"$ne": v.clone()},
        Op::Cmp(name, v) => doc! {*name: v.clone()},
        Op::In(vs) => doc! {"$in": vs.clone()},
        Op::Nin(vs) => doc! {"$nin": vs.clone()},
        Op::Exists(b) => doc! {"$exists": *b},
        Op::Size(n) => doc! {"$size": *n},
        Op::Type(t) => doc! {"$type": *t},
        Op::All(vs) => doc! {"$all": vs.clone()},
        Op::ElemValue(name, v) => doc! {"$elemMatch": {*name: v.clone()}},
        Op::ElemObject(field, v) => doc! {"$elemMatch": {field.clone(): v.clone()}},
        Op::Not(inner) => doc! {"$not": render_op(inner)},
    })
}

fn render(f: &F) -> Document {
    match f {
        F::Path(path, op) => doc! {path.clone(): render_op(op)},
        F::And(fs) => {
            doc! {"$and": fs.iter().map(|f| Bson::Document(render(f))).collect::<Vec<_>>()}
        }
        F::Or(fs) => doc! {"$or": fs.iter().map(|f| Bson::Document(render(f))).collect::<Vec<_>>()},
        F::Nor(fs) => {
            doc! {"$nor": fs.iter().map(|f| Bson::Document(render(f))).collect::<Vec<_>>()}
        }
    }
}

// ---- The reference matcher ----

fn bracket(v: &Bson) -> u8 {
    match v {
        Bson::Null => 1,
        Bson::Int32(_) | Bson::Int64(_) | Bson::Double(_) => 2,
        Bson::String(_) => 3,
        Bson::Document(_) => 4,
        Bson::Array(_) => 5,
        Bson::Boolean(_) => 6,
        _ => 9,
    }
}

fn num(v: &Bson) -> f64 {
    match v {
        Bson::Int32(i) => f64::from(*i),
        Bson::Int64(i) => *i as f64,
        Bson::Double(d) => *d,
        _ => 0.0,
    }
}

/// MongoDB's order for the generated value space (small numbers, so f64 is exact).
fn order(a: &Bson, b: &Bson) -> Ordering {
    let by_bracket = bracket(a).cmp(&bracket(b));
    if by_bracket != Ordering::Equal {
        return by_bracket;
    }
    match (a, b) {
        (Bson::String(x), Bson::String(y)) => x.cmp(y),
        (Bson::Boolean(x), Bson::Boolean(y)) => x.cmp(y),
        (Bson::Document(x), Bson::Document(y)) => {
            let mut xi = x.iter();
            let mut yi = y.iter();
            loop {
                match (xi.next(), yi.next()) {
                    (None, None) => return Ordering::Equal,
                    (None, Some(_)) => return Ordering::Less,
                    (Some(_), None) => return Ordering::Greater,
                    (Some((kx, vx)), Some((ky, vy))) => {
                        let o = bracket(vx)
                            .cmp(&bracket(vy))
                            .then(kx.cmp(ky))
                            .then_with(|| order(vx, vy));
                        if o != Ordering::Equal {
                            return o;
                        }
                    }
                }
            }
        }
        (Bson::Array(x), Bson::Array(y)) => {
            for (p, q) in x.iter().zip(y) {
                let o = order(p, q);
                if o != Ordering::Equal {
                    return o;
                }
            }
            x.len().cmp(&y.len())
        }
        (Bson::Null, Bson::Null) => Ordering::Equal,
        _ => {
            let (p, q) = (num(a), num(b));
            match (p.is_nan(), q.is_nan()) {
                (true, true) => Ordering::Equal,
                (true, false) => Ordering::Less,
                (false, true) => Ordering::Greater,
                _ => p.partial_cmp(&q).unwrap_or(Ordering::Equal),
            }
        }
    }
}

fn reach(doc: &Document, path: &str) -> Vec<Option<Bson>> {
    let parts: Vec<&str> = path.split('.').collect();
    let mut out = Vec::new();
    reach_doc(doc, &parts, true, &mut out);
    out
}

fn reach_doc(doc: &Document, parts: &[&str], report: bool, out: &mut Vec<Option<Bson>>) {
    match doc.get(parts[0]) {
        None if report => out.push(None),
        None => {}
        Some(v) => reach_value(v, &parts[1..], out),
    }
}

fn reach_value(v: &Bson, parts: &[&str], out: &mut Vec<Option<Bson>>) {
    if parts.is_empty() {
        out.push(Some(v.clone()));
        return;
    }
    match v {
        Bson::Document(d) => reach_doc(d, parts, true, out),
        Bson::Array(items) => {
            let position: Option<usize> = if parts[0].chars().all(|c| c.is_ascii_digit())
                && (parts[0] == "0" || !parts[0].starts_with('0'))
            {
                parts[0].parse().ok()
            } else {
                None
            };
            for (i, item) in items.iter().enumerate() {
                if position == Some(i) {
                    reach_value(item, &parts[1..], out);
                }
                if let Bson::Document(d) = item {
                    reach_doc(d, parts, position.is_none(), out);
                }
            }
        }
        _ => out.push(None),
    }
}

fn single(op: &Op, v: &Bson) -> bool {
    match op {
        Op::Eq(x) => bracket(v) == bracket(x) && order(v, x) == Ordering::Equal,
        Op::Cmp(name, x) => {
            if bracket(v) != bracket(x) {
                return false;
            }
            let nan = |b: &Bson| matches!(b, Bson::Double(d) if d.is_nan());
            if nan(v) || nan(x) {
                return nan(v) && nan(x) && (*name == "$gte" || *name == "$lte");
            }
            let o = order(v, x);
            match *name {
                "$gt" => o == Ordering::Greater,
                "$gte" => o != Ordering::Less,
                "$lt" => o == Ordering::Less,
                _ => o != Ordering::Greater,
            }
        }
        Op::In(xs) => xs.iter().any(|x| single(&Op::Eq(x.clone()), v)),
        Op::Size(n) => matches!(v, Bson::Array(items) if items.len() == *n as usize),
        Op::Type(t) => match *t {
            "number" => bracket(v) == 2,
            "string" => matches!(v, Bson::String(_)),
            "array" => matches!(v, Bson::Array(_)),
            "null" => matches!(v, Bson::Null),
            "object" => matches!(v, Bson::Document(_)),
            _ => matches!(v, Bson::Int32(_)),
        },
        Op::ElemValue(name, x) => match v {
            Bson::Array(items) => items.iter().any(|item| {
                let inner = if *name == "$eq" {
                    Op::Eq(x.clone())
                } else {
                    Op::Cmp(name, x.clone())
                };
                single(&inner, item)
            }),
            _ => false,
        },
        Op::ElemObject(field, x) => match v {
            Bson::Array(items) => items.iter().any(|item| match item {
                Bson::Document(d) => eval(&F::Path(field.clone(), Op::Eq(x.clone())), d),
                Bson::Array(inner) => {
                    let d: Document = inner
                        .iter()
                        .enumerate()
                        .map(|(i, b)| (i.to_string(), b.clone()))
                        .collect();
                    eval(&F::Path(field.clone(), Op::Eq(x.clone())), &d)
                }
                _ => false,
            }),
            _ => false,
        },
        _ => unreachable!("combinators are handled by path_eval"),
    }
}

fn missing_ok(op: &Op) -> bool {
    match op {
        Op::Eq(x) => matches!(x, Bson::Null),
        Op::Cmp(name, x) => matches!(x, Bson::Null) && (*name == "$gte" || *name == "$lte"),
        Op::In(xs) => xs.iter().any(|x| matches!(x, Bson::Null)),
        _ => false,
    }
}

fn path_eval(op: &Op, doc: &Document, path: &str) -> bool {
    match op {
        Op::Ne(x) => !path_eval(&Op::Eq(x.clone()), doc, path),
        Op::Nin(xs) => !path_eval(&Op::In(xs.clone()), doc, path),
        Op::Not(inner) => !path_eval(inner, doc, path),
        Op::Exists(b) => reach(doc, path).iter().any(Option::is_some) == *b,
        Op::All(xs) => {
            !xs.is_empty() && xs.iter().all(|x| path_eval(&Op::Eq(x.clone()), doc, path))
        }
        _ => reach(doc, path).iter().any(|r| match r {
            None => missing_ok(op),
            Some(v) => {
                single(op, v)
                    || (!matches!(op, Op::Size(_) | Op::ElemValue(..) | Op::ElemObject(..))
                        && matches!(v, Bson::Array(items) if items.iter().any(|i| single(op, i))))
            }
        }),
    }
}

fn eval(f: &F, doc: &Document) -> bool {
    match f {
        F::Path(path, op) => path_eval(op, doc, path),
        F::And(fs) => fs.iter().all(|f| eval(f, doc)),
        F::Or(fs) => fs.iter().any(|f| eval(f, doc)),
        F::Nor(fs) => !fs.iter().any(|f| eval(f, doc)),
    }
}

// ---- Generators ----

fn scalar() -> impl Strategy<Value = Bson> {
    prop_oneof![
        (-2..3i32).prop_map(Bson::Int32),
        (-2..3i64).prop_map(Bson::Int64),
        prop::sample::select(vec![-1.5, 0.0, 1.0, 2.5, f64::NAN]).prop_map(Bson::Double),
        prop::sample::select(vec!["", "a", "b"]).prop_map(|s| Bson::String(s.to_owned())),
        Just(Bson::Null),
        any::<bool>().prop_map(Bson::Boolean),
    ]
}

fn value() -> impl Strategy<Value = Bson> {
    scalar().prop_recursive(3, 16, 3, |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..3).prop_map(Bson::Array),
            prop::collection::vec((prop::sample::select(vec!["b", "c", "0"]), inner), 0..3)
                .prop_map(|fields| Bson::Document(
                    fields.into_iter().map(|(k, v)| (k.to_owned(), v)).collect()
                )),
        ]
    })
}

fn document() -> impl Strategy<Value = Document> {
    (prop::option::of(value()), prop::option::of(value())).prop_map(|(a, c)| {
        let mut d = doc! {"_id": 0};
        if let Some(a) = a {
            d.insert("a", a);
        }
        if let Some(c) = c {
            d.insert("c", c);
        }
        d
    })
}

fn op() -> impl Strategy<Value = Op> {
    let cmp = prop::sample::select(vec!["$gt", "$gte", "$lt", "$lte"]);
    let leaf = prop_oneof![
        value().prop_map(Op::Eq),
        value().prop_map(Op::Ne),
        (cmp.clone(), scalar()).prop_map(|(n, v)| Op::Cmp(n, v)),
        prop::collection::vec(scalar(), 0..3).prop_map(Op::In),
        prop::collection::vec(scalar(), 0..3).prop_map(Op::Nin),
        any::<bool>().prop_map(Op::Exists),
        (0..3i32).prop_map(Op::Size),
        prop::sample::select(vec!["number", "string", "array", "null", "object", "int"])
            .prop_map(Op::Type),
        prop::collection::vec(scalar(), 0..3).prop_map(Op::All),
        (
            prop::sample::select(vec!["$eq", "$gt", "$lt", "$gte"]),
            scalar()
        )
            .prop_map(|(n, v)| Op::ElemValue(n, v)),
        (prop::sample::select(vec!["b", "c", "b.c", "0"]), scalar())
            .prop_map(|(f, v)| Op::ElemObject(f.to_owned(), v)),
    ];
    leaf.prop_recursive(1, 4, 1, |inner| inner.prop_map(|o| Op::Not(Box::new(o))))
}

fn filter() -> impl Strategy<Value = F> {
    let path = prop::sample::select(vec!["a", "a.b", "a.0", "c", "a.b.c", "a.0.b", "a.c"]);
    let leaf = (path, op()).prop_map(|(p, o)| F::Path(p.to_owned(), o));
    leaf.prop_recursive(2, 8, 3, |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 1..3).prop_map(F::And),
            prop::collection::vec(inner.clone(), 1..3).prop_map(F::Or),
            prop::collection::vec(inner, 1..3).prop_map(F::Nor),
        ]
    })
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 3000, failure_persistence: None, ..ProptestConfig::default() })]

    /// For each generated filter, the crate and the reference agree on every
    /// document of a generated corpus of 12.
    #[test]
    fn byte_matcher_agrees_with_tree_reference(
        f in filter(),
        docs in prop::collection::vec(document(), 12),
    ) {
        let rendered = render(&f);
        let compiled = Filter::parse(&raw(&rendered)).expect("generated filters are valid");
        for d in &docs {
            let bytes = raw(d);
            let expected = eval(&f, d);
            prop_assert_eq!(compiled.matches(&bytes), expected, "filter {} doc {}", rendered, d);
            // Stored documents are matched from their bytes, never reading the last one.
            let from_bytes = compiled.try_matches_bytes(bytes.as_bytes()).unwrap_or(false);
            prop_assert_eq!(from_bytes, expected, "bytes: filter {} doc {}", rendered, d);
        }
    }
}
