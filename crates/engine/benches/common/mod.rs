//! What the engine's benches share: options, a command that must succeed, and a load of
//! 16 KiB documents shaped as the gates' (`{_id, k, p, ..., payload}`).

use bson::{RawDocumentBuf, rawdoc};
use engine::{ConnectionContext, Engine, EngineOptions, FixedHost, StartupOptions};
use std::sync::Arc;

/// The documents' size, as the gates'.
pub const DOC_SIZE: usize = 16 * 1024;

/// An engine's options for a bench: a fixed host, no TTL monitor.
pub fn options() -> EngineOptions {
    EngineOptions {
        host: Arc::new(FixedHost::default()),
        startup: StartupOptions::default(),
        connections_max: 10,
        ttl_interval: None,
    }
}

/// Runs `cmd` on `db` and asserts it succeeded.
pub fn run(engine: &Engine, cmd: &RawDocumentBuf) -> RawDocumentBuf {
    let reply = engine.run_command("db", cmd, &ConnectionContext::default());
    assert_eq!(reply.get_f64("ok").ok(), Some(1.0), "{cmd:?} -> {reply:?}");
    reply
}

/// Inserts `docs` documents into `db.bench` in batches of 256: `{_id: i, k: i % 1000, p,
/// ...extra, payload}` padded to [`DOC_SIZE`].
pub fn load(engine: &Engine, docs: u32, extra: &RawDocumentBuf) {
    let payload = "lorem ipsum dolor sit amet ".repeat(DOC_SIZE / 27);
    for start in (0..docs).step_by(256) {
        let mut array = bson::RawArrayBuf::new();
        for i in start..(start + 256).min(docs) {
            let p = (u64::from(i) * 2_654_435_761) % 1_000_000;
            let mut doc = rawdoc! { "_id": i64::from(i), "k": i64::from(i % 1000), "p": p as i64 };
            for element in extra {
                let (key, value) = element.expect("extra field");
                doc.append(key, value);
            }
            let pad = DOC_SIZE.saturating_sub(doc.as_bytes().len() + 20);
            doc.append(
                bson::raw::cstr!("payload"),
                &payload[..pad.min(payload.len())],
            );
            array.push(doc);
        }
        let mut insert = rawdoc! { "insert": "bench" };
        insert.append(bson::raw::cstr!("documents"), array);
        run(engine, &insert);
    }
}
