//! Criterion benches: parse and build of a typical command (a driver's `find` with filter and options).

use bson::rawdoc;
use criterion::{Criterion, criterion_group, criterion_main};
use std::hint::black_box;
use wire::{OpMsg, decode};

fn typical_command() -> OpMsg {
    OpMsg::new(rawdoc! {
        "find": "users",
        "filter": { "age": { "$gt": 25 }, "status": "active" },
        "sort": { "createdAt": -1 },
        "limit": 20,
        "lsid": { "id": bson::Binary { subtype: bson::spec::BinarySubtype::Uuid, bytes: vec![7; 16] } },
        "$db": "app",
    })
}

fn bench(c: &mut Criterion) {
    let msg = typical_command();
    let frame = msg.encode(1, 0).expect("encodes");
    c.bench_function("op_msg_decode_find", |b| {
        b.iter(|| decode(black_box(&frame)))
    });
    c.bench_function("op_msg_encode_find", |b| {
        b.iter(|| black_box(&msg).encode(1, 0))
    });
    let reply = rawdoc! { "ok": 1.0 };
    let mut out = Vec::with_capacity(64);
    c.bench_function("op_msg_encode_reply_into_ok", |b| {
        b.iter(|| {
            out.clear();
            wire::encode_reply_into(&mut out, 2, 1, black_box(&reply))
        })
    });
}

criterion_group!(benches, bench);
criterion_main!(benches);
