//! The registry of fuzz targets: one entry per decoder of outside bytes.
//!
//! A target takes arbitrary bytes and must return normally (any `Err` is fine);
//! a panic, an abort or a hang is a bug. Each entry also names seed inputs that
//! reach deep into the decoder, which the driver mutates.

/// A registered fuzz target.
pub struct Target {
    /// The name used on the command line (`cargo xtask fuzz <name>`).
    pub name: &'static str,
    /// Valid or nearly valid inputs for the driver to start from.
    pub seeds: fn() -> Vec<Vec<u8>>,
    /// The code under test.
    pub run: fn(&[u8]),
}

/// Every fuzz target of the workspace.
pub const TARGETS: &[Target] = &[Target {
    name: "bson-validate",
    seeds: bson_seeds,
    run: bson_validate,
}];

fn bson_seeds() -> Vec<Vec<u8>> {
    let docs = [
        bson::rawdoc! {"_id": 1, "a": "text", "b": {"c": [1, 2.5, {"d": true}]}},
        bson::rawdoc! {"bin": bson::Binary { subtype: bson::spec::BinarySubtype::Generic, bytes: vec![1, 2] }},
        bson::rawdoc! {"r": bson::Regex { pattern: "a.*".try_into().expect("cstr"), options: "i".try_into().expect("cstr") }},
        bson::rawdoc! {"n": bson::RawBson::Null, "t": bson::Timestamp { time: 1, increment: 2 }},
    ];
    docs.iter().map(|d| d.as_bytes().to_vec()).collect()
}

/// Validation must never panic; whatever it accepts, the order functions, the
/// key encoding and path lookup must handle without panicking either.
fn bson_validate(data: &[u8]) {
    check_document(data);
    // Most mutations break the outer length first; also try the bytes with it
    // repaired, so the walk reaches the nested elements.
    if data.len() >= 5 {
        let mut repaired = data.to_vec();
        let length = u32::try_from(data.len()).unwrap_or(u32::MAX);
        repaired[..4].copy_from_slice(&length.to_le_bytes());
        check_document(&repaired);
    }
}

fn check_document(data: &[u8]) {
    let depth = bson_canonical::limits::WIRE_NESTING_DEPTH_MAX;
    if bson_canonical::validate_bson(data, depth).is_err() {
        return;
    }
    let Ok(doc) = bson::RawDocument::from_bytes(data) else {
        panic!("validated bytes are not a raw document");
    };
    let whole = bson::RawBsonRef::Document(doc);
    assert_eq!(
        bson_canonical::compare_values(whole, whole),
        std::cmp::Ordering::Equal
    );
    let _ = bson_canonical::encode(whole);
    let _ = bson_canonical::path::values(doc, "a.b.0.c");
    let _ = bson_canonical::validate_for_storage(data);
}
