//! serverStatus: the sections monitoring tools read, in mongod 7.0's shape (`host`,
//! `uptime`, `localTime`, `connections`, `opcounters`, `asserts`, `network`, `globalLock`,
//! `storageEngine`, `metrics`, `mem`). What each counter counts is in [`crate::stats`].

use super::Request;
use crate::engine::Engine;
use crate::error::Error;
use crate::stats::Counter;
use crate::version;
use bson::{Bson, DateTime, Document, doc};

fn int64(value: u64) -> Bson {
    Bson::Int64(i64::try_from(value).unwrap_or(i64::MAX))
}

/// serverStatus.
pub(super) fn server_status(engine: &Engine, _request: &Request<'_>) -> Result<Document, Error> {
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
    Ok(doc! {
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
            "bytesIn": count(Counter::BytesIn),
            "bytesOut": count(Counter::BytesOut),
            "physicalBytesIn": count(Counter::BytesIn),
            "physicalBytesOut": count(Counter::BytesOut),
            "numRequests": count(Counter::NetworkRequests),
        },
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
    })
}
