//! Criterion benchmarks: one-field `$set` and `$inc` on a 16 KiB document,
//! against decoding to `bson::Document`, editing and re-encoding by hand.

use bson::{Bson, Document, RawDocumentBuf, doc, rawdoc};
use criterion::{Criterion, criterion_group, criterion_main};
use std::hint::black_box;
use update::{ApplyContext, Update, UpdateOptions};

fn document_16k() -> RawDocumentBuf {
    let mut d = doc! {"_id": 1, "n": 1};
    let mut i = 0;
    while RawDocumentBuf::try_from(&d).map_or(0, |r| r.as_bytes().len()) < 16 * 1024 {
        d.insert(
            format!("field{i}"),
            doc! {"s": "some text value here", "k": i, "f": 1.5},
        );
        i += 1;
    }
    RawDocumentBuf::try_from(&d).expect("bench document encodes")
}

fn bench(c: &mut Criterion) {
    let doc = document_16k();
    let context = ApplyContext::default();
    let set = Update::parse(
        &rawdoc! {"$set": {"field10.s": "changed"}},
        UpdateOptions::default(),
    )
    .expect("bench update parses");
    let inc = Update::parse(&rawdoc! {"$inc": {"n": 1}}, UpdateOptions::default())
        .expect("bench update parses");
    c.bench_function("set_one_field_16k", |b| {
        b.iter(|| set.apply(black_box(&doc), &context).expect("applies"))
    });
    c.bench_function("inc_one_field_16k", |b| {
        b.iter(|| inc.apply(black_box(&doc), &context).expect("applies"))
    });
    c.bench_function("baseline_decode_edit_encode_16k", |b| {
        b.iter(|| {
            let mut d = Document::try_from(black_box(doc.as_ref())).expect("decodes");
            if let Some(Bson::Int32(n)) = d.get("n").cloned() {
                d.insert("n", n + 1);
            }
            RawDocumentBuf::try_from(&d).expect("encodes")
        })
    });
}

criterion_group!(benches, bench);
criterion_main!(benches);
