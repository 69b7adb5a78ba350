//! Commands every driver and mongosh send when a connection opens: hello, ping, buildInfo,
//! whatsmyuri, endSessions (and the transaction commands' standalone answer).

use super::{Request, flag};
use crate::engine::Engine;
use crate::error::Error;
use crate::limits::{
    BSON_OBJECT_SIZE_MAX, LOGICAL_SESSION_TIMEOUT_MINUTES, MESSAGE_SIZE_MAX, WRITE_BATCH_SIZE_MAX,
};
use crate::version;
use bson::{Bson, DateTime, Document, doc};

/// `i32` for limits that always fit; the constants are checked at compile time.
fn limit(value: usize) -> i32 {
    i32::try_from(value).expect("announced limits fit in i32")
}

/// hello / isMaster / ismaster: a standalone, writable primary.
///
/// `topologyVersion` is deliberately absent: announcing it invites drivers to use
/// the streaming (awaitable) hello protocol, which needs the server to hold the
/// request for `maxAwaitTimeMS`. Without it drivers poll every
/// heartbeatFrequencyMS, which is correct for a standalone.
pub(super) fn hello(engine: &Engine, request: &Request<'_>) -> Result<Document, Error> {
    let mut reply = Document::new();
    if flag(request.body, "helloOk") {
        reply.insert("helloOk", true);
    }
    if request.name == "hello" {
        reply.insert("isWritablePrimary", true);
    } else {
        reply.insert("ismaster", true);
    }
    reply.insert("maxBsonObjectSize", limit(BSON_OBJECT_SIZE_MAX));
    reply.insert("maxMessageSizeBytes", limit(MESSAGE_SIZE_MAX));
    reply.insert("maxWriteBatchSize", limit(WRITE_BATCH_SIZE_MAX));
    reply.insert("localTime", DateTime::from_millis(engine.host.now_millis()));
    reply.insert(
        "logicalSessionTimeoutMinutes",
        LOGICAL_SESSION_TIMEOUT_MINUTES,
    );
    reply.insert("connectionId", connection_id(request.ctx.connection_id));
    reply.insert("minWireVersion", version::MIN_WIRE_VERSION);
    reply.insert("maxWireVersion", version::MAX_WIRE_VERSION);
    reply.insert("readOnly", false);
    if let Some(mechanisms) = super::authentication::supported_mechanisms(engine, request) {
        reply.insert("saslSupportedMechs", mechanisms);
    }
    if let Some(step) = super::authentication::speculative(engine, request) {
        reply.insert("speculativeAuthenticate", step);
    }
    Ok(reply)
}

/// mongod sends `connectionId` as a 32-bit integer while it fits.
fn connection_id(id: i64) -> Bson {
    i32::try_from(id).map_or(Bson::Int64(id), Bson::Int32)
}

/// ping: `{ok: 1}`.
pub(super) fn ping(_engine: &Engine, _request: &Request<'_>) -> Result<Document, Error> {
    Ok(Document::new())
}

/// buildInfo: the MongoDB version presented (see [`crate::version`]) and this build.
pub(super) fn build_info(_engine: &Engine, _request: &Request<'_>) -> Result<Document, Error> {
    let [major, minor, patch, extra] = version::SERVER_VERSION_ARRAY;
    Ok(doc! {
        "version": version::SERVER_VERSION,
        "gitVersion": format!("multiforadb-{}", version::MULTIFORADB_VERSION),
        "modules": [],
        "allocator": "system",
        "javascriptEngine": "none",
        "sysInfo": "deprecated",
        "versionArray": [major, minor, patch, extra],
        "openssl": { "running": "disabled", "compiled": "disabled" },
        "buildEnvironment": {
            "distmod": "multiforadb",
            "distarch": std::env::consts::ARCH,
            "target_arch": std::env::consts::ARCH,
            "target_os": std::env::consts::OS,
        },
        "bits": 64,
        "debug": cfg!(debug_assertions),
        "maxBsonObjectSize": limit(BSON_OBJECT_SIZE_MAX),
        "storageEngines": ["multiforadb"],
        "multiforadbVersion": version::MULTIFORADB_VERSION,
    })
}

/// whatsmyuri: the client's own address as the server sees it.
pub(super) fn whats_my_uri(_engine: &Engine, request: &Request<'_>) -> Result<Document, Error> {
    Ok(doc! { "you": request.ctx.client_address.as_str() })
}

/// commitTransaction / abortTransaction on a standalone: no transaction can be open (a
/// command carrying `txnNumber` was refused before it ran), so mongod's answer for a
/// session outside a transaction.
pub(super) fn outside_transaction(
    _engine: &Engine,
    request: &Request<'_>,
) -> Result<Document, Error> {
    Err(Error::new(
        crate::error::ErrorCode::Other(125, "CommandFailed"),
        format!("{} must be run within a transaction", request.name),
    ))
}

/// endSessions / killAllSessions: the named sessions leave the session cache (they
/// carry no other server state yet); drivers send endSessions on close and expect `ok: 1`.
pub(super) fn end_sessions(engine: &Engine, request: &Request<'_>) -> Result<Document, Error> {
    if request.name == "killAllSessions" {
        // Without authentication every session is every user's: all of them end.
        engine.sessions.clear();
        return Ok(Document::new());
    }
    if let Some(bson::raw::RawBsonRef::Array(ids)) = request.field(request.name)? {
        for id in ids.into_iter().flatten() {
            if let bson::raw::RawBsonRef::Document(lsid) = id {
                engine.sessions.end(lsid);
            }
        }
    }
    Ok(Document::new())
}
