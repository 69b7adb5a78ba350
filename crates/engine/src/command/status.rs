//! serverStatus: the sections monitoring tools read, in mongod 7.0's shape (`host`,
//! `uptime`, `localTime`, `connections`, `opcounters`, `opLatencies`, `asserts`, `network`,
//! `globalLock`, `storageEngine`, `metrics`, `mem`). What each counter counts is in [`crate::stats`].

use super::{Reply, Request};
use crate::engine::Engine;
use crate::error::Error;
use crate::stats::Counter;
use crate::version;
use bson::{DateTime, RawDocumentBuf, rawdoc};

fn int64(value: u64) -> i64 {
    i64::try_from(value).unwrap_or(i64::MAX)
}

/// serverStatus. Built as raw BSON, in one buffer per section, rather than as a
/// `Document` serialized afterwards: its ~70 fields were most of the command's cost
/// against a ping (each key an allocation and a hash, then copied again).
pub(super) fn server_status(engine: &Engine, request: &Request<'_>) -> Result<Reply, Error> {
    // `opLatencies: {histograms: true}` adds the buckets, as on mongod.
    let histograms = match request.body.get("opLatencies") {
        Ok(Some(bson::raw::RawBsonRef::Document(options))) => {
            matches!(
                options.get("histograms"),
                Ok(Some(bson::raw::RawBsonRef::Boolean(true)))
            )
        }
        _ => false,
    };
    let latencies = engine.operations.op_latencies(histograms)?;
    let facts = engine.host.facts();
    let stats = engine.stats().snapshot();
    let count = |counter| int64(stats.get(counter));
    let memory = engine.host.memory();
    let ttl = engine.ttl.counters().snapshot();
    let cursors = engine.cursors.counts();
    let uptime_millis = engine.host.uptime_millis();
    let available = engine
        .connections_max
        .saturating_sub(stats.connections_current);
    let active = engine.operations.count();
    let network_bytes_in = count(Counter::BytesIn);
    let network_bytes_out = count(Counter::BytesOut);
    Ok(Reply::Raw(rawdoc! {
        "host": facts.hostname.as_str(),
        "version": version::SERVER_VERSION,
        "process": "mongod",
        "pid": i64::from(facts.process_id),
        "uptime": uptime_millis as f64 / 1000.0,
        "uptimeMillis": int64(uptime_millis),
        "uptimeEstimate": int64(uptime_millis / 1000),
        "localTime": DateTime::from_millis(engine.host.now_millis()),
        "asserts": {
            "regular": 0, "warning": 0, "msg": 0,
            "user": count(Counter::AssertUser), "tripwire": 0, "rollovers": 0,
        },
        "connections": {
            "current": int64(stats.connections_current),
            "available": int64(available),
            "totalCreated": int64(stats.connections_total),
            "active": int64(active.total),
        },
        "globalLock": {
            "totalTime": int64(uptime_millis.saturating_mul(1000)),
            "currentQueue": { "total": 0, "readers": 0, "writers": 0 },
            "activeClients": {
                "total": int64(active.total),
                "readers": int64(active.readers),
                "writers": int64(active.writers),
            },
        },
        "network": {
            "bytesIn": network_bytes_in,
            "bytesOut": network_bytes_out,
            "physicalBytesIn": count(Counter::PhysicalBytesIn),
            "physicalBytesOut": count(Counter::PhysicalBytesOut),
            "numRequests": count(Counter::NetworkRequests),
            "compression": compression(&stats),
        },
        "opLatencies": latencies,
        "transportSecurity": transport_security(&stats),
        "opcounters": {
            "insert": count(Counter::OpInsert),
            "query": count(Counter::OpQuery),
            "update": count(Counter::OpUpdate),
            "delete": count(Counter::OpDelete),
            "getmore": count(Counter::OpGetMore),
            "command": count(Counter::OpCommand),
        },
        "storageEngine": {
            "name": "multiforadb",
            "supportsCommittedReads": true,
            "oldestRequiredTimestampForCrashRecovery": bson::Timestamp { time: 0, increment: 0 },
            "supportsPendingDrops": false,
            "dropPendingIdents": 0i64,
            "supportsSnapshotReadConcern": false,
            "readOnly": false,
            "persistent": !engine.in_memory,
            "backupCursorOpen": false,
        },
        "metrics": {
            "cursor": {
                "timedOut": int64(cursors.timed_out),
                "totalOpened": int64(cursors.opened),
                "open": {
                    "noTimeout": int64(cursors.no_timeout),
                    "pinned": int64(cursors.pinned),
                    "total": int64(cursors.open),
                },
            },
            "document": {
                "deleted": count(Counter::DocumentDeleted),
                "inserted": count(Counter::DocumentInserted),
                "returned": count(Counter::DocumentReturned),
                "updated": count(Counter::DocumentUpdated),
            },
            "operation": {
                "scanAndOrder": 0i64,
                "writeConflicts": 0i64,
                "killedDueToMaxTimeMSExpired": count(Counter::MaxTimeExpired),
            },
            "ttl": {
                "deletedDocuments": int64(ttl.deleted),
                "passes": int64(ttl.passes),
                "subPasses": int64(ttl.sub_passes),
            },
        },
        "mem": {
            "bits": 64,
            "resident": int64(memory.resident_mb),
            "virtual": int64(memory.virtual_mb),
            "supported": true,
        },
    }))
}

/// `transportSecurity`: `{"1.0": n, "1.1": n, "1.2": n, "1.3": n, "unknown": n}` (64-bit
/// counts, as mongod reports them), in [`crate::stats::TlsVersion`] order.
fn transport_security(stats: &crate::stats::StatsSnapshot) -> bson::RawDocumentBuf {
    let [v1_0, v1_1, v1_2, v1_3, unknown] = stats.tls.map(int64);
    rawdoc! { "1.0": v1_0, "1.1": v1_1, "1.2": v1_2, "1.3": v1_3, "unknown": unknown }
}

/// serverStatus `network.compression`: per compressor, what its compressor and
/// decompressor took in and gave out (mongod's shape, longs).
fn compression(stats: &crate::stats::StatsSnapshot) -> RawDocumentBuf {
    let mut out = RawDocumentBuf::new();
    for (compressor, bytes) in crate::stats::COMPRESSORS.iter().zip(&stats.compression) {
        let entry = rawdoc! {
            "compressor": {
                "bytesIn": int64(bytes.compressor_in),
                "bytesOut": int64(bytes.compressor_out),
            },
            "decompressor": {
                "bytesIn": int64(bytes.decompressor_in),
                "bytesOut": int64(bytes.decompressor_out),
            },
        };
        out.append(
            bson::raw::CString::try_from(compressor.name()).expect("a compressor's name"),
            entry,
        );
    }
    out
}
