//! Benchmarks: one-field match on a 16 KiB raw document against decoding it
//! first, and top-k selection against a full sort.

use bson::{Bson, RawBson, RawDocumentBuf};
use criterion::{Criterion, criterion_group, criterion_main};
use query::{Filter, top_k};
use std::hint::black_box;
use std::time::Duration;

/// A document of about 16 KiB: 210 string fields of 64 bytes, then the field
/// the filter looks at, so the matcher must skip everything before it.
fn big_document() -> RawDocumentBuf {
    let mut d = bson::Document::new();
    for i in 0..210 {
        d.insert(format!("field_{i:03}"), "x".repeat(64));
    }
    d.insert("target", 42);
    let raw = RawDocumentBuf::try_from(&d).expect("document converts");
    assert!(
        raw.as_bytes().len() >= 16 * 1024,
        "{}",
        raw.as_bytes().len()
    );
    raw
}

fn match_one_field(c: &mut Criterion) {
    let raw = big_document();
    let filter = Filter::parse(&bson::rawdoc! {"target": {"$eq": 42}}).expect("filter");
    let mut group = c.benchmark_group("match_16k");
    group.bench_function("raw_filter", |b| {
        b.iter(|| assert!(filter.matches(black_box(&raw))));
    });
    group.bench_function("decode_then_match", |b| {
        b.iter(|| {
            let tree = bson::Document::try_from(black_box(raw.as_ref())).expect("decodes");
            assert!(tree.get("target") == Some(&Bson::Int32(42)));
        });
    });
    group.finish();
}

fn keys() -> Vec<RawBson> {
    let mut state = 0x9E37_79B9_7F4A_7C15_u64;
    (0..1_000_000)
        .map(|i| {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            let v = (state >> 11) as i64;
            if i % 2 == 0 {
                RawBson::Int64(v)
            } else {
                RawBson::Double(v as f64 + 0.5)
            }
        })
        .collect()
}

fn sort_top_k(c: &mut Criterion) {
    let keys = keys();
    let compare = |a: &&RawBson, b: &&RawBson| {
        bson_canonical::compare_values(a.as_raw_bson_ref(), b.as_raw_bson_ref())
    };
    let mut group = c.benchmark_group("sort_1m");
    group.sample_size(10);
    group.bench_function("top_20", |b| {
        b.iter(|| black_box(top_k(keys.iter(), Some(20), compare)).len());
    });
    group.bench_function("full_sort", |b| {
        b.iter(|| black_box(top_k(keys.iter(), None, compare)).len());
    });
    group.finish();
}

criterion_group! {
    name = benches;
    config = Criterion::default()
        .warm_up_time(Duration::from_millis(500))
        .measurement_time(Duration::from_secs(3));
    targets = match_one_field, sort_top_k
}
criterion_main!(benches);
