//! MongoDB's hash of a BSON value for hashed indexes (`BSONElementHasher::hash64`, mongod's
//! `hasher.cpp`): MD5 over the seed (i32 little-endian), then per value its canonical type
//! (i32 little-endian), for numbers the value squashed to an i64 (`safeNumberLongForHash`),
//! for documents and arrays every element with its field name and a closing EOO element,
//! otherwise the value's BSON bytes; the first 8 digest bytes, little-endian, are the hash.
//!
//! The vectors in the tests are mongod's own (`src/mongo/db/hasher_test.cpp`), so the
//! result equals `convertShardKeyToHashed` for every type. The digest comes from the
//! RustCrypto `md-5` crate (PLAN.md: cryptography is never written by hand here).

use bson::RawBsonRef;
use bson::raw::{RawArray, RawDocument};
use md5::{Digest, Md5};

/// The seed mongod uses for every hashed index (`BSONElementHasher::DEFAULT_HASH_SEED`).
pub const SEED_DEFAULT: i32 = 0;

/// The hash of `value` with `seed`, as mongod computes it.
pub fn hash64(value: RawBsonRef<'_>, seed: i32) -> i64 {
    let mut md5 = Md5::new();
    md5.update(seed.to_le_bytes());
    hash_value(&mut md5, value, None);
    let digest = md5.finalize();
    let mut first = [0u8; 8];
    first.copy_from_slice(&digest[..8]);
    i64::from_le_bytes(first)
}

/// mongod's `canonicalizeBSONType` (the key encoding's type bracket minus 2).
fn canonical_type(value: &RawBsonRef<'_>) -> i32 {
    i32::from(bson_canonical::compare::type_bracket(value)) - 2
}

fn hash_value(md5: &mut Md5, value: RawBsonRef<'_>, field_name: Option<&str>) {
    md5.update(canonical_type(&value).to_le_bytes());
    if let Some(name) = field_name {
        md5.update(name.as_bytes());
        md5.update([0u8]);
    }
    match value {
        RawBsonRef::Double(_)
        | RawBsonRef::Int32(_)
        | RawBsonRef::Int64(_)
        | RawBsonRef::Decimal128(_) => md5.update(number_for_hash(value).to_le_bytes()),
        RawBsonRef::Document(doc) => hash_elements(md5, doc),
        RawBsonRef::Array(array) => hash_array(md5, array),
        RawBsonRef::JavaScriptCodeWithScope(code) => {
            // mongod hashes the code with its terminator (no length), then the scope.
            md5.update(code.code.as_bytes());
            md5.update([0u8]);
            hash_elements(md5, code.scope);
        }
        RawBsonRef::String(s) | RawBsonRef::Symbol(s) | RawBsonRef::JavaScriptCode(s) => {
            string_bytes(md5, s);
        }
        RawBsonRef::Boolean(b) => md5.update([u8::from(b)]),
        RawBsonRef::DateTime(date) => md5.update(date.timestamp_millis().to_le_bytes()),
        RawBsonRef::Timestamp(ts) => {
            md5.update(ts.increment.to_le_bytes());
            md5.update(ts.time.to_le_bytes());
        }
        RawBsonRef::ObjectId(id) => md5.update(id.bytes()),
        RawBsonRef::Binary(binary) => {
            let subtype = u8::from(binary.subtype);
            let old = binary.subtype == bson::spec::BinarySubtype::BinaryOld;
            let inner = i32::try_from(binary.bytes.len()).unwrap_or(i32::MAX);
            let outer = if old { inner.saturating_add(4) } else { inner };
            md5.update(outer.to_le_bytes());
            md5.update([subtype]);
            if old {
                md5.update(inner.to_le_bytes());
            }
            md5.update(binary.bytes);
        }
        RawBsonRef::RegularExpression(regex) => {
            md5.update(regex.pattern.as_str().as_bytes());
            md5.update([0u8]);
            md5.update(regex.options.as_str().as_bytes());
            md5.update([0u8]);
        }
        RawBsonRef::DbPointer(_) => {
            let (namespace, id) = db_pointer_parts(value);
            let length = i32::try_from(namespace.len() + 1).unwrap_or(i32::MAX);
            md5.update(length.to_le_bytes());
            md5.update(namespace.as_bytes());
            md5.update([0u8]);
            md5.update(id);
        }
        RawBsonRef::Null | RawBsonRef::Undefined | RawBsonRef::MinKey | RawBsonRef::MaxKey => {}
    }
}

/// A DBPointer's namespace and ObjectId. `bson` keeps its fields private, so they are read
/// through Extended JSON (as bson-canonical does; DBPointers are deprecated and rare).
fn db_pointer_parts(value: RawBsonRef<'_>) -> (String, [u8; 12]) {
    let json = bson::Bson::try_from(bson::RawBson::from(value))
        .map(bson::Bson::into_canonical_extjson)
        .unwrap_or_default();
    let pointer = &json["$dbPointer"];
    let namespace = pointer["$ref"].as_str().unwrap_or_default().to_owned();
    let id = pointer["$id"]["$oid"]
        .as_str()
        .and_then(|hex| bson::oid::ObjectId::parse_str(hex).ok())
        .map_or([0u8; 12], |oid| oid.bytes());
    (namespace, id)
}

/// A BSON string value: its length with the terminator (i32 LE), the bytes, the terminator.
fn string_bytes(md5: &mut Md5, s: &str) {
    let length = i32::try_from(s.len() + 1).unwrap_or(i32::MAX);
    md5.update(length.to_le_bytes());
    md5.update(s.as_bytes());
    md5.update([0u8]);
}

/// The closing EOO element: its canonical type alone (an EOO has no name and no value).
const EOO: [u8; 4] = 0i32.to_le_bytes();

/// Every element with its name, then the EOO element.
fn hash_elements(md5: &mut Md5, doc: &RawDocument) {
    for element in doc.iter_elements() {
        let Ok(element) = element else { break };
        if let Ok(value) = element.value() {
            hash_value(md5, value, Some(element.key().as_str()));
        }
    }
    md5.update(EOO);
}

fn hash_array(md5: &mut Md5, array: &RawArray) {
    for (index, value) in array.into_iter().enumerate() {
        let Ok(value) = value else { break };
        hash_value(md5, value, Some(&index.to_string()));
    }
    md5.update(EOO);
}

/// mongod's `safeNumberLongForHash`: NaN is 0, doubles truncate toward zero and clamp
/// (2^63 exactly wraps to i64::MIN, as older versions did), Decimal128 rounds half to even
/// (`Decimal128::toLong`'s default) and clamps.
pub fn number_for_hash(value: RawBsonRef<'_>) -> i64 {
    const TWO_POW_63: f64 = 9_223_372_036_854_775_808.0;
    match value {
        RawBsonRef::Int32(n) => i64::from(n),
        RawBsonRef::Int64(n) => n,
        RawBsonRef::Double(d) => {
            if d.is_nan() {
                0
            } else if d == TWO_POW_63 {
                i64::MIN
            } else if d >= TWO_POW_63 {
                i64::MAX
            } else if d < -TWO_POW_63 {
                i64::MIN
            } else {
                d as i64
            }
        }
        RawBsonRef::Decimal128(d) => decimal_to_i64(&d.to_string()),
        _ => 0,
    }
}

/// A Decimal128's string form (`1.5`, `-2E+3`, `Infinity`, `NaN`) rounded half to even and
/// clamped to i64.
fn decimal_to_i64(text: &str) -> i64 {
    let (negative, body) = match text.strip_prefix('-') {
        Some(rest) => (true, rest),
        None => (false, text.strip_prefix('+').unwrap_or(text)),
    };
    let clamp = if negative { i64::MIN } else { i64::MAX };
    if body.eq_ignore_ascii_case("nan") {
        return 0;
    }
    if body.eq_ignore_ascii_case("infinity") || body.eq_ignore_ascii_case("inf") {
        return clamp;
    }
    let (mantissa, exponent) = match body.split_once(['E', 'e']) {
        Some((m, e)) => (m, e.parse::<i64>().unwrap_or(0)),
        None => (body, 0),
    };
    let (whole, fraction) = mantissa.split_once('.').unwrap_or((mantissa, ""));
    let digits: Vec<u8> = whole
        .bytes()
        .chain(fraction.bytes())
        .filter(u8::is_ascii_digit)
        .map(|b| b - b'0')
        .collect();
    // The value is digits × 10^(exponent - fraction digits); split at the decimal point.
    let point = i64::try_from(whole.len())
        .unwrap_or(i64::MAX)
        .saturating_add(exponent);
    let mut integer: i128 = 0;
    let mut rest = Vec::new();
    for (index, digit) in digits.iter().enumerate() {
        if i64::try_from(index).unwrap_or(i64::MAX) < point {
            integer = integer
                .saturating_mul(10)
                .saturating_add(i128::from(*digit));
            if integer > i128::from(i64::MAX) + 1 {
                return clamp;
            }
        } else {
            rest.push(*digit);
        }
    }
    for _ in 0..point
        .saturating_sub(i64::try_from(digits.len()).unwrap_or(0))
        .min(40)
    {
        integer = integer.saturating_mul(10);
        if integer > i128::from(i64::MAX) + 1 {
            return clamp;
        }
    }
    let first = rest.first().copied().unwrap_or(0);
    let beyond = rest.iter().skip(1).any(|&d| d != 0);
    let round_up = first > 5 || (first == 5 && (beyond || integer % 2 == 1));
    if round_up {
        integer += 1;
    }
    let signed = if negative { -integer } else { integer };
    i64::try_from(signed).unwrap_or(clamp)
}

#[cfg(test)]
mod tests {
    use super::*;
    use bson::{Bson, doc};

    fn hash(value: Bson) -> i64 {
        let raw = bson::RawDocumentBuf::try_from(&doc! {"check": value}).expect("raw");
        hash64(
            raw.get("check").expect("get").expect("present"),
            SEED_DEFAULT,
        )
    }

    fn regex(pattern: &str, options: &str) -> bson::Regex {
        bson::Regex {
            pattern: bson::raw::CString::try_from(pattern).expect("pattern"),
            options: bson::raw::CString::try_from(options).expect("options"),
        }
    }

    /// mongod's `hasher_test.cpp`, value for value.
    #[test]
    fn hashes_equal_mongods_test_vectors() {
        for (value, expected) in [
            (Bson::Int32(42), -944302157085130861),
            (Bson::Double(42.123), -944302157085130861),
            (Bson::Int64(42), -944302157085130861),
            (Bson::Int32(0), 4854801880128277513),
            (Bson::Double(0.456), 4854801880128277513),
            (Bson::Double(f64::NAN), 4854801880128277513),
            (Bson::Int32(1), 5902408780260971510),
            (Bson::Double(1.987), 5902408780260971510),
            (Bson::Int32(-1), 1140205862565771219),
            (Bson::Double(-1.789), 1140205862565771219),
            (Bson::Int32(i32::MIN), 6165898260261354870),
            (Bson::Double(f64::from(i32::MIN)), 6165898260261354870),
            (Bson::Int32(i32::MAX), 1143184177162245883),
            (Bson::Double(f64::MAX), 921523596458303250),
            (Bson::Int64(i64::MAX), 921523596458303250),
            (Bson::Double(-f64::MAX), 4532067210535695462),
            (Bson::Int64(i64::MIN), 4532067210535695462),
            (Bson::MinKey, 7961148599568647290),
            (Bson::MaxKey, 5504842513779440750),
            (Bson::Undefined, 40158834000849533),
            (Bson::String("abc".into()), 8478485326885698097),
            (Bson::Symbol("abc".into()), 8478485326885698097),
            (Bson::String(String::new()), 2049396243249673340),
            (
                Bson::Document(doc! {"a": "abc", "b": 123i64}),
                4771603801758380216,
            ),
            (Bson::Document(doc! {}), 7980500913326740417),
            (
                Bson::Array(vec!["bar".into(), "baz".into(), "qux".into()]),
                -2938911267422831539,
            ),
            (Bson::Array(vec![]), 8849948234993459283),
            (Bson::Boolean(true), 6405873908747105701),
            (Bson::Boolean(false), 6289544573401934092),
            (
                Bson::DateTime(bson::DateTime::from_millis(0x5566_7788_1122_3344)),
                4476222765095560467,
            ),
            (
                Bson::DateTime(bson::DateTime::from_millis(0)),
                -1178696894582842035,
            ),
            (
                Bson::RegularExpression(regex("mongodb", "")),
                -7275792090268217043,
            ),
            (
                Bson::RegularExpression(regex(".*", "i")),
                7095855029187981886,
            ),
            (
                Bson::JavaScriptCode("func f() { return 1; }".into()),
                6861638109178014270,
            ),
        ] {
            assert_eq!(hash(value.clone()), expected, "hash of {value:?}");
        }
    }

    #[test]
    fn binary_and_object_id_hashes_equal_mongods() {
        let bytes = vec![0u8, 1, 2, 3, 4, 6];
        let general = bson::Binary {
            subtype: bson::spec::BinarySubtype::Generic,
            bytes: bytes.clone(),
        };
        assert_eq!(hash(Bson::Binary(general)), 7252465090394235301);
        let custom = bson::Binary {
            subtype: bson::spec::BinarySubtype::UserDefined(0x80),
            bytes,
        };
        assert_eq!(hash(Bson::Binary(custom)), 5736670452907618262);
        let uuid = bson::Binary {
            subtype: bson::spec::BinarySubtype::Uuid,
            bytes: (0u8..16).collect(),
        };
        assert_eq!(hash(Bson::Binary(uuid)), 6084661258071355978);
        let oid = bson::oid::ObjectId::parse_str("010203040506070809101112").expect("oid");
        assert_eq!(hash(Bson::ObjectId(oid)), -5588663249627035708);
        let zero = bson::oid::ObjectId::parse_str("000000000000000000000000").expect("oid");
        assert_eq!(hash(Bson::ObjectId(zero)), -4293118519463489418);
        let code = bson::JavaScriptCodeWithScope {
            code: "func f() { return 1; }".into(),
            scope: doc! {"c": true},
        };
        assert_eq!(
            hash(Bson::JavaScriptCodeWithScope(code)),
            501342939894575968
        );
    }

    #[test]
    fn decimals_round_half_to_even_and_clamp() {
        assert_eq!(decimal_to_i64("1.5"), 2);
        assert_eq!(decimal_to_i64("2.5"), 2);
        assert_eq!(decimal_to_i64("-2.51"), -3);
        assert_eq!(decimal_to_i64("1.2E+3"), 1200);
        assert_eq!(decimal_to_i64("12E-1"), 1);
        assert_eq!(decimal_to_i64("1E+40"), i64::MAX);
        assert_eq!(decimal_to_i64("-Infinity"), i64::MIN);
        assert_eq!(decimal_to_i64("NaN"), 0);
        assert_eq!(
            number_for_hash(RawBsonRef::Double(9_223_372_036_854_775_808.0)),
            i64::MIN
        );
    }
}
