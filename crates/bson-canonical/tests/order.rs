//! Property: the key encoding orders values exactly as the canonical comparison.
//!
//! Random BSON values (numbers drawn from a shared pool rendered as int32,
//! int64, double and Decimal128 so that cross-type equality is exercised, edge
//! numbers, strings with embedded NULs, nested documents and arrays, every other
//! type) are compared both ways. Mutation-checked: dropping the inversion of
//! negative magnitudes in the key encoding, dropping its 0x00 escape in strings
//! (which breaks prefix-freeness), or comparing binary bytes before lengths in
//! `compare_values` each turns this red. The absolute order of the type brackets
//! is pinned separately by `brackets_follow_mongodb_order` in `src/compare.rs`.

use bson::{Bson, Document, RawBsonRef, RawDocumentBuf, doc, oid::ObjectId};
use bson_canonical::{Direction, compare_values, encode, encode_compound};
use proptest::prelude::*;
use std::cmp::Ordering;

fn number() -> impl Strategy<Value = Bson> {
    let pool = prop_oneof![
        Just(0i64),
        Just(1),
        Just(-1),
        Just(2),
        Just(10),
        Just(100),
        Just((1 << 53) + 1),
        Just(1 << 53),
        Just(i64::MAX),
        Just(i64::MIN),
        Just(i64::from(i32::MAX)),
        -1000i64..1000,
    ];
    let from_pool = (pool, 0..4u8).prop_map(|(n, kind)| match kind {
        0 => i32::try_from(n).map(Bson::Int32).unwrap_or(Bson::Int64(n)),
        1 => Bson::Int64(n),
        2 => Bson::Double(n as f64),
        _ => Bson::Decimal128(n.to_string().parse().expect("decimal")),
    });
    let doubles = prop_oneof![
        Just(f64::NAN),
        Just(f64::INFINITY),
        Just(f64::NEG_INFINITY),
        Just(-0.0),
        Just(0.1),
        Just(-0.1),
        Just(0.5),
        Just(1.5),
        Just(f64::MIN_POSITIVE),
        Just(f64::from_bits(1)),
        Just(f64::MAX),
        Just(9_223_372_036_854_775_808.0),
        any::<f64>(),
        (-100.0f64..100.0),
    ]
    .prop_map(Bson::Double);
    let decimals = prop_oneof![
        Just("NaN".to_string()),
        Just("-Infinity".to_string()),
        Just("Infinity".to_string()),
        Just("0.1".to_string()),
        Just("-0.10".to_string()),
        Just("1.5".to_string()),
        Just("1E+6144".to_string()),
        Just("1E-6176".to_string()),
        (any::<i32>(), -40i32..40).prop_map(|(c, e)| format!("{c}E{e}")),
    ]
    .prop_map(|s| Bson::Decimal128(s.parse().expect("decimal")));
    prop_oneof![4 => from_pool, 2 => doubles, 1 => decimals]
}

/// Short strings over an alphabet where prefixes and embedded NULs are common.
fn text() -> impl Strategy<Value = String> + Clone {
    prop::collection::vec(
        prop_oneof![3 => Just('a'), 2 => Just('\0'), 1 => Just('b'), 1 => Just('é')],
        0..4,
    )
    .prop_map(|chars| chars.into_iter().collect::<String>())
}

fn binary() -> impl Strategy<Value = Bson> + Clone {
    (0..3u8, prop::collection::vec(0..3u8, 0..3)).prop_map(|(subtype, bytes)| {
        Bson::Binary(bson::Binary {
            subtype: subtype.into(),
            bytes,
        })
    })
}

fn leaf() -> impl Strategy<Value = Bson> {
    let text = text();
    let cstring = prop::collection::vec(prop_oneof![Just('a'), Just('b'), Just('i')], 0..3)
        .prop_map(|chars| chars.into_iter().collect::<String>());
    prop_oneof![
        6 => number(),
        3 => text.clone().prop_map(Bson::String),
        1 => text.clone().prop_map(Bson::Symbol),
        1 => Just(Bson::Null),
        1 => Just(Bson::Undefined),
        1 => Just(Bson::MinKey),
        1 => Just(Bson::MaxKey),
        1 => any::<bool>().prop_map(Bson::Boolean),
        1 => prop_oneof![Just(i64::MIN), Just(-1), Just(0), Just(1), any::<i64>()]
            .prop_map(|ms| Bson::DateTime(bson::DateTime::from_millis(ms))),
        1 => (0..3u32, 0..3u32).prop_map(|(time, increment)| Bson::Timestamp(bson::Timestamp { time, increment })),
        1 => prop::array::uniform12(0..3u8).prop_map(|b| Bson::ObjectId(ObjectId::from_bytes(b))),
        1 => binary(),
        1 => (cstring.clone(), cstring.clone()).prop_map(|(pattern, options)| {
            Bson::RegularExpression(bson::Regex {
                pattern: pattern.try_into().expect("cstring"),
                options: options.try_into().expect("cstring"),
            })
        }),
        1 => text.clone().prop_map(Bson::JavaScriptCode),
        1 => (text.clone(), prop::collection::vec(0..3i32, 0..2)).prop_map(|(code, values)| {
            let mut scope = Document::new();
            for (i, v) in values.into_iter().enumerate() {
                scope.insert(format!("k{i}"), v);
            }
            Bson::JavaScriptCodeWithScope(bson::JavaScriptCodeWithScope { code, scope })
        }),
    ]
}

fn value() -> impl Strategy<Value = Bson> {
    leaf().prop_recursive(3, 24, 4, |inner| {
        let key = prop_oneof![Just("a"), Just("b"), Just("ab"), Just("")];
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..4).prop_map(Bson::Array),
            prop::collection::vec((key, inner), 0..4).prop_map(|fields| {
                let mut doc = Document::new();
                for (k, v) in fields {
                    doc.insert(k, v);
                }
                Bson::Document(doc)
            }),
        ]
    })
}

fn raw(value: &Bson) -> RawDocumentBuf {
    RawDocumentBuf::try_from(&doc! {"v": value.clone()}).expect("raw document")
}

fn get(doc: &RawDocumentBuf) -> RawBsonRef<'_> {
    doc.get("v").expect("get").expect("present")
}

/// Pairs of values, often of the same type bracket so that the within-bracket
/// rules (not just the bracket order) are exercised.
fn pair() -> impl Strategy<Value = (Bson, Bson)> {
    let doc_of = |v: BoxedStrategy<Bson>| {
        (prop_oneof![Just("a"), Just("b")], v.clone(), v).prop_map(|(k, x, y)| {
            let mut doc = Document::new();
            doc.insert(k, x);
            doc.insert("z", y);
            Bson::Document(doc)
        })
    };
    prop_oneof![
        3 => (value(), value()),
        2 => (number(), number()),
        2 => (text().prop_map(Bson::String), text().prop_map(Bson::String)),
        1 => (binary(), binary()),
        2 => (doc_of(text().prop_map(Bson::String).boxed()), doc_of(text().prop_map(Bson::String).boxed())),
        2 => (doc_of(number().boxed()), doc_of(number().boxed())),
        1 => (doc_of(binary().boxed()), doc_of(binary().boxed())),
    ]
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(4000))]

    #[test]
    fn key_order_equals_canonical_order((a, b) in pair()) {
        let (x, y) = (raw(&a), raw(&b));
        let order = compare_values(get(&x), get(&y));
        let key_order = encode(get(&x)).cmp(&encode(get(&y)));
        prop_assert_eq!(order, key_order, "a = {:?}, b = {:?}", a, b);
        prop_assert_eq!(compare_values(get(&y), get(&x)), order.reverse());
    }

    #[test]
    fn compound_keys_order_as_tuples_with_directions(
        (a0, b0) in pair(), (a1, b1) in pair(), descending in any::<(bool, bool)>()
    ) {
        let direction = |d: bool| if d { Direction::Descending } else { Direction::Ascending };
        let (a0, a1, b0, b1) = (raw(&a0), raw(&a1), raw(&b0), raw(&b1));
        let flip = |o: Ordering, d: bool| if d { o.reverse() } else { o };
        let expected = flip(compare_values(get(&a0), get(&b0)), descending.0)
            .then(flip(compare_values(get(&a1), get(&b1)), descending.1));
        let key_a = encode_compound(&[(Some(get(&a0)), direction(descending.0)), (Some(get(&a1)), direction(descending.1))]);
        let key_b = encode_compound(&[(Some(get(&b0)), direction(descending.0)), (Some(get(&b1)), direction(descending.1))]);
        prop_assert_eq!(key_a.cmp(&key_b), expected);
    }
}
