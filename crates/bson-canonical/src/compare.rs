//! MongoDB's canonical order over BSON values.
//!
//! Values first compare by the bracket of their type (MinKey < undefined <
//! null < numbers < strings and symbols < objects < arrays < binary < ObjectId <
//! bool < date < timestamp < regex < DBPointer < code < code with scope <
//! MaxKey); within a bracket, by value. Numbers compare by exact value across
//! their four types; strings by bytes; documents element by element (type
//! bracket, then field name, then value), shorter first when one is a prefix of
//! the other; binary by length, then subtype, then bytes.
//!
//! The key encoding in [`crate::key`] must agree with this order exactly; the
//! property test in `tests/order.rs` checks that they do.

use crate::number::{Exact, compare_f64, compare_i64_f64};
use bson::RawBsonRef;
use bson::raw::{RawArray, RawDocument};
use std::cmp::Ordering;

/// The type bracket of a value: the byte that opens its key encoding.
///
/// The numbers are MongoDB's canonical type numbers shifted by two so that the
/// smallest (MinKey, -1) is still above the key encoding's terminator byte 0.
pub fn type_bracket(value: &RawBsonRef<'_>) -> u8 {
    match value {
        RawBsonRef::MinKey => 1,
        RawBsonRef::Undefined => 2,
        RawBsonRef::Null => 7,
        RawBsonRef::Double(_)
        | RawBsonRef::Int32(_)
        | RawBsonRef::Int64(_)
        | RawBsonRef::Decimal128(_) => 12,
        RawBsonRef::String(_) | RawBsonRef::Symbol(_) => 17,
        RawBsonRef::Document(_) => 22,
        RawBsonRef::Array(_) => 27,
        RawBsonRef::Binary(_) => 32,
        RawBsonRef::ObjectId(_) => 37,
        RawBsonRef::Boolean(_) => 42,
        RawBsonRef::DateTime(_) => 47,
        RawBsonRef::Timestamp(_) => 49,
        RawBsonRef::RegularExpression(_) => 52,
        RawBsonRef::DbPointer(_) => 57,
        RawBsonRef::JavaScriptCode(_) => 62,
        RawBsonRef::JavaScriptCodeWithScope(_) => 67,
        RawBsonRef::MaxKey => 129,
    }
}

/// The bracket of null, which is also where a missing field sorts.
pub const NULL_BRACKET: u8 = 7;

/// Compares two values in MongoDB's canonical order.
pub fn compare_values(a: RawBsonRef<'_>, b: RawBsonRef<'_>) -> Ordering {
    let bracket = type_bracket(&a).cmp(&type_bracket(&b));
    if bracket != Ordering::Equal {
        return bracket;
    }
    match (a, b) {
        (
            RawBsonRef::String(x) | RawBsonRef::Symbol(x),
            RawBsonRef::String(y) | RawBsonRef::Symbol(y),
        ) => x.as_bytes().cmp(y.as_bytes()),
        (RawBsonRef::Document(x), RawBsonRef::Document(y)) => compare_documents(x, y),
        (RawBsonRef::Array(x), RawBsonRef::Array(y)) => compare_arrays(x, y),
        (RawBsonRef::Binary(x), RawBsonRef::Binary(y)) => x
            .bytes
            .len()
            .cmp(&y.bytes.len())
            .then_with(|| u8::from(x.subtype).cmp(&u8::from(y.subtype)))
            .then_with(|| x.bytes.cmp(y.bytes)),
        (RawBsonRef::ObjectId(x), RawBsonRef::ObjectId(y)) => x.bytes().cmp(&y.bytes()),
        (RawBsonRef::Boolean(x), RawBsonRef::Boolean(y)) => x.cmp(&y),
        (RawBsonRef::DateTime(x), RawBsonRef::DateTime(y)) => {
            x.timestamp_millis().cmp(&y.timestamp_millis())
        }
        (RawBsonRef::Timestamp(x), RawBsonRef::Timestamp(y)) => {
            (x.time, x.increment).cmp(&(y.time, y.increment))
        }
        (RawBsonRef::RegularExpression(x), RawBsonRef::RegularExpression(y)) => x
            .pattern
            .as_str()
            .as_bytes()
            .cmp(y.pattern.as_str().as_bytes())
            .then_with(|| {
                x.options
                    .as_str()
                    .as_bytes()
                    .cmp(y.options.as_str().as_bytes())
            }),
        (RawBsonRef::DbPointer(_), RawBsonRef::DbPointer(_)) => {
            let (x_ns, x_id) = db_pointer_parts(a);
            let (y_ns, y_id) = db_pointer_parts(b);
            x_ns.len()
                .cmp(&y_ns.len())
                .then_with(|| x_ns.cmp(&y_ns))
                .then_with(|| x_id.cmp(&y_id))
        }
        (RawBsonRef::JavaScriptCode(x), RawBsonRef::JavaScriptCode(y)) => {
            x.as_bytes().cmp(y.as_bytes())
        }
        (RawBsonRef::JavaScriptCodeWithScope(x), RawBsonRef::JavaScriptCodeWithScope(y)) => x
            .code
            .as_bytes()
            .cmp(y.code.as_bytes())
            .then_with(|| compare_documents(x.scope, y.scope)),
        _ => compare_numbers(a, b),
    }
}

/// Compares two numbers (any of int32, int64, double, Decimal128) by exact value.
/// Values of other types compare equal; callers only pass numbers.
pub fn compare_numbers(a: RawBsonRef<'_>, b: RawBsonRef<'_>) -> Ordering {
    use RawBsonRef::{Decimal128, Double, Int32, Int64};
    let integer = |v: RawBsonRef<'_>| match v {
        Int32(i) => Some(i64::from(i)),
        Int64(i) => Some(i),
        _ => None,
    };
    match (a, b) {
        (Double(x), Double(y)) => compare_f64(x, y),
        (Double(x), other) => match integer(other) {
            Some(i) => compare_i64_f64(i, x).reverse(),
            None => exact(a).compare(&exact(b)),
        },
        (other, Double(y)) => match integer(other) {
            Some(i) => compare_i64_f64(i, y),
            None => exact(a).compare(&exact(b)),
        },
        (Decimal128(_), _) | (_, Decimal128(_)) => exact(a).compare(&exact(b)),
        _ => integer(a).cmp(&integer(b)),
    }
}

/// The value of a number that is a whole number within `i64` (int32, int64, an integral
/// double or Decimal128 of that size), or `None` (a fraction, a larger magnitude, NaN, an
/// infinity, a non-number). Two numbers that compare equal both give the same `Some` or
/// both give `None`, so a map keyed by it, beside one keyed by [`crate::encode`] for the
/// rest, groups numbers exactly as the canonical encoding does.
pub fn whole_number(value: RawBsonRef<'_>) -> Option<i64> {
    match value {
        RawBsonRef::Int32(i) => Some(i64::from(i)),
        RawBsonRef::Int64(i) => Some(i),
        // -2^63 is the smallest whole double in range; 2^63 the first one past it.
        RawBsonRef::Double(d)
            if d.fract() == 0.0
                && (-9_223_372_036_854_775_808.0..9_223_372_036_854_775_808.0).contains(&d) =>
        {
            Some(d as i64)
        }
        RawBsonRef::Decimal128(_) => exact(value).whole(),
        _ => None,
    }
}

/// The exact value of a number (zero for a non-number).
pub(crate) fn exact(value: RawBsonRef<'_>) -> Exact {
    match value {
        RawBsonRef::Int32(i) => Exact::from_i64(i64::from(i)),
        RawBsonRef::Int64(i) => Exact::from_i64(i),
        RawBsonRef::Double(d) => Exact::from_f64(d),
        RawBsonRef::Decimal128(d) => Exact::from_decimal128(d),
        _ => Exact::from_i64(0),
    }
}

/// Compares two documents element by element: type bracket, field name, value.
pub fn compare_documents(a: &RawDocument, b: &RawDocument) -> Ordering {
    let mut left = elements(a);
    let mut right = elements(b);
    loop {
        match (left.next(), right.next()) {
            (None, None) => return Ordering::Equal,
            (None, Some(_)) => return Ordering::Less,
            (Some(_), None) => return Ordering::Greater,
            (Some((x_key, x)), Some((y_key, y))) => {
                let order = type_bracket(&x)
                    .cmp(&type_bracket(&y))
                    .then_with(|| x_key.as_bytes().cmp(y_key.as_bytes()))
                    .then_with(|| compare_values(x, y));
                if order != Ordering::Equal {
                    return order;
                }
            }
        }
    }
}

/// Compares two arrays element by element.
pub fn compare_arrays(a: &RawArray, b: &RawArray) -> Ordering {
    let mut left = array_values(a);
    let mut right = array_values(b);
    loop {
        match (left.next(), right.next()) {
            (None, None) => return Ordering::Equal,
            (None, Some(_)) => return Ordering::Less,
            (Some(_), None) => return Ordering::Greater,
            (Some(x), Some(y)) => {
                let order = compare_values(x, y);
                if order != Ordering::Equal {
                    return order;
                }
            }
        }
    }
}

/// The elements of a document as (field name, value), stopping at the first
/// malformed element. Documents reaching this crate's order functions were
/// validated on arrival; the stop keeps a damaged one from causing a panic,
/// and [`crate::key`] stops at the same place, so the two orders still agree.
pub fn elements(doc: &RawDocument) -> impl Iterator<Item = (&str, RawBsonRef<'_>)> {
    doc.iter_elements().map_while(|element| {
        let element = element.ok()?;
        let value = element.value().ok()?;
        Some((element.key().as_str(), value))
    })
}

/// The values of an array, stopping at the first malformed element.
pub fn array_values(array: &RawArray) -> impl Iterator<Item = RawBsonRef<'_>> {
    array
        .iter_elements()
        .map_while(|element| element.ok()?.value().ok())
}

/// The namespace and ObjectId of a DBPointer (the `bson` crate keeps its fields
/// private, so they are read back through Extended JSON; DBPointers are rare).
pub(crate) fn db_pointer_parts(value: RawBsonRef<'_>) -> (Vec<u8>, Vec<u8>) {
    let Ok(bson) = bson::Bson::try_from(value) else {
        return (Vec::new(), Vec::new());
    };
    let json = bson.into_canonical_extjson();
    let pointer = &json["$dbPointer"];
    let namespace = pointer["$ref"]
        .as_str()
        .unwrap_or_default()
        .as_bytes()
        .to_vec();
    let hex = pointer["$id"]["$oid"].as_str().unwrap_or_default();
    let id = bson::oid::ObjectId::parse_str(hex)
        .map(|id| id.bytes().to_vec())
        .unwrap_or_default();
    (namespace, id)
}

#[cfg(test)]
mod tests {
    use super::*;
    use bson::{Bson, doc};
    use proptest::prelude::*;

    /// Numbers of every type, many of them whole, some equal across types.
    fn number() -> impl Strategy<Value = Bson> {
        let mantissa = prop_oneof![
            -1000_i64..1000,
            any::<i64>(),
            Just(i64::MIN),
            Just(i64::MAX)
        ];
        prop_oneof![
            mantissa.clone().prop_map(Bson::Int64),
            any::<i32>().prop_map(Bson::Int32),
            mantissa.clone().prop_map(|m| Bson::Double(m as f64)),
            (-1000_i32..1000).prop_map(|m| Bson::Double(f64::from(m) / 4.0)),
            prop::sample::select(vec![f64::NAN, f64::INFINITY, -0.0, 9.3e18, -9.3e18, 2e300])
                .prop_map(Bson::Double),
            (mantissa, -3_i32..22).prop_map(|(m, e)| {
                let text = format!("{m}E{e}");
                Bson::Decimal128(text.parse().expect("a decimal"))
            }),
            (-1000_i64..1000, 0_i32..4).prop_map(|(m, e)| {
                Bson::Decimal128(format!("{m}E-{e}").parse().expect("a decimal"))
            }),
        ]
    }

    fn raw_of(value: &Bson) -> bson::RawBson {
        bson::RawBson::try_from(value.clone()).expect("converts")
    }

    proptest! {
        /// `whole_number` agrees with comparison: equal numbers give the same answer, and a
        /// whole number equals the int64 it gives.
        #[test]
        fn whole_numbers_follow_equality(a in number(), b in number()) {
            let (a, b) = (raw_of(&a), raw_of(&b));
            let (a, b) = (a.as_raw_bson_ref(), b.as_raw_bson_ref());
            if compare_values(a, b) == Ordering::Equal {
                prop_assert_eq!(whole_number(a), whole_number(b), "{:?} {:?}", a, b);
            }
            if let Some(n) = whole_number(a) {
                prop_assert_eq!(compare_values(a, RawBsonRef::Int64(n)), Ordering::Equal, "{:?}", a);
            } else if let RawBsonRef::Int32(_) | RawBsonRef::Int64(_) = a {
                prop_assert!(false, "an integer is whole: {:?}", a);
            }
        }
    }

    fn cmp(a: Bson, b: Bson) -> Ordering {
        let a_doc = doc! {"v": a};
        let b_doc = doc! {"v": b};
        let a_raw = bson::RawDocumentBuf::try_from(&a_doc).expect("raw");
        let b_raw = bson::RawDocumentBuf::try_from(&b_doc).expect("raw");
        let x = a_raw.get("v").expect("get").expect("present");
        let y = b_raw.get("v").expect("get").expect("present");
        compare_values(x, y)
    }

    #[test]
    fn brackets_follow_mongodb_order() {
        let ascending = [
            Bson::MinKey,
            Bson::Undefined,
            Bson::Null,
            Bson::Int32(5),
            Bson::String("a".into()),
            Bson::Document(doc! {}),
            Bson::Array(vec![]),
            Bson::ObjectId(bson::oid::ObjectId::from_bytes([0; 12])),
            Bson::Boolean(false),
            Bson::DateTime(bson::DateTime::from_millis(0)),
            Bson::Timestamp(bson::Timestamp {
                time: 0,
                increment: 0,
            }),
            Bson::MaxKey,
        ];
        for pair in ascending.windows(2) {
            assert_eq!(
                cmp(pair[0].clone(), pair[1].clone()),
                Ordering::Less,
                "{pair:?}"
            );
        }
    }

    #[test]
    fn numbers_compare_across_types_and_strings_by_bytes() {
        assert_eq!(cmp(Bson::Int32(1), Bson::Double(1.0)), Ordering::Equal);
        assert_eq!(cmp(Bson::Int64(2), Bson::Double(1.5)), Ordering::Greater);
        assert_eq!(
            cmp(Bson::Double(f64::NAN), Bson::Int64(i64::MIN)),
            Ordering::Less
        );
        assert_eq!(
            cmp(Bson::String("B".into()), Bson::String("a".into())),
            Ordering::Less
        );
        assert_eq!(
            cmp(Bson::Symbol("a".into()), Bson::String("a".into())),
            Ordering::Equal
        );
    }

    #[test]
    fn documents_compare_type_then_name_then_value() {
        // A number field sorts before a string field whatever the names.
        assert_eq!(
            cmp(doc! {"z": 1}.into(), doc! {"a": "x"}.into()),
            Ordering::Less
        );
        assert_eq!(
            cmp(doc! {"a": 1}.into(), doc! {"b": 0}.into()),
            Ordering::Less
        );
        assert_eq!(
            cmp(doc! {"a": 1}.into(), doc! {"a": 1, "b": 0}.into()),
            Ordering::Less
        );
    }

    #[test]
    fn binary_compares_length_before_subtype_before_bytes() {
        let bin = |subtype: u8, bytes: &[u8]| {
            Bson::Binary(bson::Binary {
                subtype: subtype.into(),
                bytes: bytes.to_vec(),
            })
        };
        assert_eq!(cmp(bin(5, b"z"), bin(0, b"aa")), Ordering::Less);
        assert_eq!(cmp(bin(0, b"z"), bin(5, b"a")), Ordering::Less);
        assert_eq!(cmp(bin(0, b"a"), bin(0, b"b")), Ordering::Less);
    }
}
