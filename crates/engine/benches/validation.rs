//! Inserts into a collection with a 10-property `$jsonSchema` validator beside the same
//! inserts into one without (issue 48's row: within 1.15x), in one run, on in-memory
//! engines so that the validator's cost is not hidden under an fsync: one small document
//! per `insert` command, and batches of 100.
//!
//! `cargo bench -p engine --bench validation`

use bson::{RawArrayBuf, RawDocumentBuf, rawdoc};
use criterion::{Criterion, criterion_group, criterion_main};
use engine::{ConnectionContext, Engine, EngineOptions, FixedHost, StartupOptions};
use std::sync::Arc;
use std::time::Duration;

fn options() -> EngineOptions {
    EngineOptions {
        host: Arc::new(FixedHost::default()),
        startup: StartupOptions::default(),
        connections_max: 10,
        ttl_interval: None,
    }
}

/// Runs `cmd` on `db` and asserts it succeeded (a refused document would fail the bench).
fn run(engine: &Engine, cmd: &RawDocumentBuf) -> RawDocumentBuf {
    let reply = engine.run_command("db", cmd, &ConnectionContext::default());
    assert_eq!(reply.get_f64("ok").ok(), Some(1.0), "{cmd:?} -> {reply:?}");
    assert!(
        reply.get("writeErrors").ok().flatten().is_none(),
        "{reply:?}"
    );
    reply
}

/// The schema: ten properties of the kinds applications declare.
fn schema() -> RawDocumentBuf {
    rawdoc! { "$jsonSchema": {
        "bsonType": "object",
        "required": ["name", "email", "age"],
        "properties": {
            "name": { "bsonType": "string", "minLength": 1, "maxLength": 100 },
            "email": { "bsonType": "string", "pattern": "^[^@]+@[^@]+$" },
            "age": { "bsonType": "int", "minimum": 0, "maximum": 150 },
            "active": { "bsonType": "bool" },
            "score": { "bsonType": "number", "minimum": 0 },
            "tags": { "bsonType": "array", "maxItems": 10, "items": { "bsonType": "string" } },
            "address": { "bsonType": "object", "required": ["city"],
                         "properties": { "city": { "bsonType": "string" } } },
            "created": { "bsonType": "date" },
            "kind": { "enum": ["free", "pro", "team"] },
            "visits": { "bsonType": ["int", "long"], "minimum": 0 },
        },
    } }
}

fn person(id: i64) -> RawDocumentBuf {
    rawdoc! {
        "_id": id,
        "name": "Ada Lovelace",
        "email": "ada@example.com",
        "age": 36,
        "active": true,
        "score": 97.5,
        "tags": ["math", "engines"],
        "address": { "city": "London", "street": "St James's Square" },
        "created": bson::DateTime::from_millis(1_700_000_000_000),
        "kind": "pro",
        "visits": 12_i64,
    }
}

fn engine_with(validated: bool) -> Engine {
    let engine = Engine::new(options());
    let mut create = rawdoc! { "create": "bench" };
    if validated {
        create.append(bson::raw::cstr!("validator"), schema());
    }
    run(&engine, &create);
    engine
}

fn inserts(c: &mut Criterion) {
    let mut group = c.benchmark_group("insert_validated");
    group
        .sample_size(30)
        .measurement_time(Duration::from_secs(5));
    for (name, validated) in [("plain", false), ("json_schema_10", true)] {
        let engine = engine_with(validated);
        let mut next = 0_i64;
        group.bench_function(format!("one/{name}"), |b| {
            b.iter(|| {
                next += 1;
                let mut insert = rawdoc! { "insert": "bench" };
                let mut documents = RawArrayBuf::new();
                documents.push(person(next));
                insert.append(bson::raw::cstr!("documents"), documents);
                run(&engine, &insert)
            });
        });
    }
    for (name, validated) in [("plain", false), ("json_schema_10", true)] {
        let engine = engine_with(validated);
        let mut next = 0_i64;
        group.bench_function(format!("batch_100/{name}"), |b| {
            b.iter(|| {
                let mut documents = RawArrayBuf::new();
                for _ in 0..100 {
                    next += 1;
                    documents.push(person(next));
                }
                let mut insert = rawdoc! { "insert": "bench" };
                insert.append(bson::raw::cstr!("documents"), documents);
                run(&engine, &insert)
            });
        });
    }
    group.finish();
}

criterion_group!(benches, inserts);
criterion_main!(benches);
