//! MongoDB's BSON corpus (`../shared/spec-tests/bson-corpus/`), read at test time.
//!
//! Valid cases: the canonical bytes pass [`validate_bson`], decode and re-encode
//! byte for byte through the `bson` crate, and compare equal to themselves in
//! the canonical order with a stable key encoding. Decode-error cases: the
//! validator rejects them. The files are MongoDB's (CC BY-NC-SA), so they are
//! read from the shared folder and never copied into this repository.

use bson_canonical::{compare_documents, key, validate_bson};
use std::cmp::Ordering;
use std::path::PathBuf;

fn corpus_dir() -> PathBuf {
    let manifest = PathBuf::from(env!("CARGO_MANIFEST_DIR"));
    let from_env = std::env::var_os("MFDB_SPEC_TESTS").map(PathBuf::from);
    from_env
        .unwrap_or_else(|| manifest.join("../../../shared/spec-tests"))
        .join("bson-corpus")
}

fn hex(text: &str) -> Vec<u8> {
    (0..text.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(&text[i..i + 2], 16).expect("hex digit pair"))
        .collect()
}

#[derive(Default)]
struct Tally {
    valid_passed: usize,
    valid_total: usize,
    decode_passed: usize,
    decode_total: usize,
    failures: Vec<String>,
}

fn check_valid(case: &serde_json::Value, file: &str, tally: &mut Tally) {
    let description = case["description"].as_str().unwrap_or("?");
    let bytes = hex(case["canonical_bson"].as_str().expect("canonical_bson"));
    tally.valid_total += 1;
    let fail = |tally: &mut Tally, why: String| {
        tally.failures.push(format!("{file}: {description}: {why}"))
    };
    if let Err(error) = validate_bson(&bytes, bson_canonical::limits::WIRE_NESTING_DEPTH_MAX) {
        return fail(tally, format!("validator rejected valid bytes: {error}"));
    }
    let decoded = match bson::Document::from_reader(&mut bytes.as_slice()) {
        Ok(doc) => doc,
        Err(error) => return fail(tally, format!("bson decode failed: {error}")),
    };
    match decoded.to_vec() {
        Ok(encoded) if encoded == bytes => {}
        Ok(_) => return fail(tally, "re-encoded bytes differ".into()),
        Err(error) => return fail(tally, format!("bson encode failed: {error}")),
    }
    let raw = bson::RawDocument::from_bytes(&bytes).expect("validated");
    if compare_documents(raw, raw) != Ordering::Equal {
        return fail(tally, "document does not compare equal to itself".into());
    }
    let as_value = bson::RawBsonRef::Document(raw);
    if key::encode(as_value) != key::encode(as_value) {
        return fail(tally, "key encoding is not deterministic".into());
    }
    tally.valid_passed += 1;
}

#[test]
fn bson_corpus_round_trips_and_rejects_decode_errors() {
    let dir = corpus_dir();
    let mut entries: Vec<_> = std::fs::read_dir(&dir)
        .unwrap_or_else(|e| panic!("cannot read the BSON corpus at {}: {e}", dir.display()))
        .map(|entry| entry.expect("dir entry").path())
        .filter(|path| path.extension().is_some_and(|e| e == "json"))
        .collect();
    entries.sort();
    assert!(
        entries.len() >= 30,
        "expected the whole corpus, found {} files",
        entries.len()
    );
    let mut tally = Tally::default();
    for path in &entries {
        let file = path
            .file_name()
            .and_then(|n| n.to_str())
            .unwrap_or("?")
            .to_string();
        let text = std::fs::read_to_string(path).expect("read corpus file");
        let json: serde_json::Value = serde_json::from_str(&text).expect("corpus JSON");
        for case in json["valid"].as_array().into_iter().flatten() {
            check_valid(case, &file, &mut tally);
        }
        for case in json["decodeErrors"].as_array().into_iter().flatten() {
            tally.decode_total += 1;
            let bytes = hex(case["bson"].as_str().expect("bson"));
            if validate_bson(&bytes, bson_canonical::limits::WIRE_NESTING_DEPTH_MAX).is_err() {
                tally.decode_passed += 1;
            } else {
                let description = case["description"].as_str().unwrap_or("?");
                tally
                    .failures
                    .push(format!("{file}: {description}: accepted invalid bytes"));
            }
        }
    }
    println!(
        "BSON corpus: valid {}/{} round-trip, decodeErrors {}/{} rejected",
        tally.valid_passed, tally.valid_total, tally.decode_passed, tally.decode_total
    );
    for failure in &tally.failures {
        println!("  not passed: {failure}");
    }
    assert!(
        tally.failures.is_empty(),
        "{} corpus cases not passed",
        tally.failures.len()
    );
    assert_eq!(tally.valid_total, 728);
    assert_eq!(tally.decode_total, 75);
}
