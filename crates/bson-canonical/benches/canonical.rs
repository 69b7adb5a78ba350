//! Criterion benches: compare, key encoding and path lookup on a 16 KiB document.
//!
//! `cargo bench -p bson-canonical`. The path lookup touches one field near the
//! end of a document whose other fields (a 2 KiB string, an array of item
//! documents) it must skip; its cost should track the number of fields skipped,
//! not their bytes, which `lookup_after_big_string` vs `lookup_after_small_fields`
//! shows side by side.

use bson::{Bson, RawDocumentBuf, doc, rawdoc};
use bson_canonical::{compare_values, encode, get_path, path};
use criterion::{Criterion, criterion_group, criterion_main};
use std::hint::black_box;

/// A document of about 16 KiB shaped like the benchmark corpus in MACHINE.md.
fn sixteen_kib_document() -> RawDocumentBuf {
    let items: Vec<Bson> = (0..40)
        .map(|i| {
            Bson::Document(doc! {
                "sku": format!("SKU-{i:05}"), "qty": i, "price": 9.99 + f64::from(i),
                "currency": "EUR", "status": "shipped",
                "title": "quick brown fox", "desc": "lorem ipsum dolor sit amet ".repeat(8),
            })
        })
        .collect();
    let document = doc! {
        "_id": bson::oid::ObjectId::from_bytes([7; 12]),
        "createdAt": bson::DateTime::from_millis(1_700_000_000_000),
        "user": {"name": "alice", "email": "alice@example.com", "age": 30, "active": true},
        "tags": ["a", "b", "c", "d", "e"],
        "payload": "x".repeat(2048),
        "items": items,
        "k": 42,
    };
    RawDocumentBuf::try_from(&document).expect("raw")
}

fn benches(c: &mut Criterion) {
    let big = sixteen_kib_document();
    assert!(
        big.as_bytes().len() > 12 * 1024,
        "document is {} bytes",
        big.as_bytes().len()
    );
    let small_fields = rawdoc! {"a": 1, "b": 2, "c": 3, "d": 4, "e": 5, "f": 6, "k": 42};
    let big_string =
        rawdoc! {"a": 1, "b": 2, "c": 3, "d": 4, "e": 5, "s": "x".repeat(16 * 1024), "k": 42};

    c.bench_function("path/get_k_in_16KiB_doc", |b| {
        b.iter(|| get_path(black_box(&big), black_box("k")))
    });
    c.bench_function("path/values_items.sku_in_16KiB_doc", |b| {
        b.iter(|| path::values(black_box(&big), black_box("items.sku")).len())
    });
    c.bench_function("path/lookup_after_small_fields", |b| {
        b.iter(|| get_path(black_box(&small_fields), black_box("k")))
    });
    c.bench_function("path/lookup_after_big_string", |b| {
        b.iter(|| get_path(black_box(&big_string), black_box("k")))
    });

    let one = rawdoc! {"i": 1, "l": 1i64, "d": 1.5f64, "s": "hello world", "t": "hello worle",
    "dec": "1.25".parse::<bson::Decimal128>().expect("decimal")};
    let get = |k: &str| one.get(k).expect("get").expect("present");
    let (int, long, double, text, other_text, decimal) =
        (get("i"), get("l"), get("d"), get("s"), get("t"), get("dec"));
    c.bench_function("compare/int32_vs_double", |b| {
        b.iter(|| compare_values(black_box(int), black_box(double)))
    });
    c.bench_function("compare/string_vs_string", |b| {
        b.iter(|| compare_values(black_box(text), black_box(other_text)))
    });
    c.bench_function("compare/decimal_vs_double", |b| {
        b.iter(|| compare_values(black_box(decimal), black_box(double)))
    });
    let whole = bson::RawBsonRef::Document(&big);
    c.bench_function("compare/16KiB_doc_vs_itself", |b| {
        b.iter(|| compare_values(black_box(whole), black_box(whole)))
    });
    c.bench_function("encode/int64", |b| b.iter(|| encode(black_box(long))));
    c.bench_function("encode/double_fraction", |b| {
        b.iter(|| encode(black_box(double)))
    });
    c.bench_function("encode/string", |b| b.iter(|| encode(black_box(text))));
    c.bench_function("encode/16KiB_doc", |b| b.iter(|| encode(black_box(whole))));
}

criterion_group!(canonical, benches);
criterion_main!(canonical);
