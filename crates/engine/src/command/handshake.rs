//! Commands every driver and mongosh send when a connection opens: hello, ping, buildInfo,
//! whatsmyuri, endSessions (and the transaction commands' standalone answer).

use super::{Request, flag};
use crate::engine::Engine;
use crate::error::{Error, ErrorCode};
use crate::limits::{
    BSON_OBJECT_SIZE_MAX, LOGICAL_SESSION_TIMEOUT_MINUTES, MESSAGE_SIZE_MAX, WRITE_BATCH_SIZE_MAX,
};
use crate::version;
use bson::{Bson, DateTime, Document, doc};

/// `i32` for limits that always fit; the constants are checked at compile time.
fn limit(value: usize) -> i32 {
    i32::try_from(value).expect("announced limits fit in i32")
}

/// hello / isMaster / ismaster: a standalone, writable primary, or the primary of a
/// one-member replica set ([`crate::repl`]).
///
/// Its `topologyVersion` invites drivers to the awaitable (streaming) hello protocol: a
/// hello naming it with `maxAwaitTimeMS` is held that long by the server before it runs
/// (see [`crate::streaming`]); here only its options are checked, as mongod checks them.
pub(super) fn hello(engine: &Engine, request: &Request<'_>) -> Result<Document, Error> {
    check_awaitable(engine, request)?;
    if let Ok(client) = request.body.get_document("client")
        && let Ok(application) = client.get_document("application")
        && let Ok(name) = application.get_str("name")
    {
        request.ctx.client.set_app_name(name);
    }
    let mut reply = Document::new();
    if flag(request.body, "helloOk") {
        reply.insert("helloOk", true);
    }
    let primary = if request.name == "hello" {
        "isWritablePrimary"
    } else {
        "ismaster"
    };
    match engine.replica_set() {
        Some(member) => {
            // mongod's order for a replica-set primary.
            let store = engine.store();
            reply.insert("topologyVersion", engine.topology_version());
            reply.insert("hosts", vec![member.host()]);
            reply.insert("setName", member.name());
            reply.insert("setVersion", member.version());
            reply.insert(primary, true);
            reply.insert("secondary", false);
            reply.insert("primary", member.host());
            reply.insert("me", member.host());
            reply.insert("electionId", member.election_id());
            let op_time = member.op_time(&store);
            let date = crate::repl::Member::last_write_date(&store);
            reply.insert(
                "lastWrite",
                doc! {
                    "opTime": op_time.clone(),
                    "lastWriteDate": date,
                    "majorityOpTime": op_time,
                    "majorityWriteDate": date,
                },
            );
        }
        None => {
            reply.insert(primary, true);
            reply.insert("topologyVersion", engine.topology_version());
        }
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
    if let Some(names) = negotiated_compressors(request)? {
        reply.insert("compression", names);
    }
    Ok(reply)
}

/// The compressors of the client's `compression` list (in its order) that the server
/// enables, as mongod negotiates OP_COMPRESSED; `None` when there are none in common (then
/// hello names none) or the client sent no list.
fn negotiated_compressors(request: &Request<'_>) -> Result<Option<Vec<Bson>>, Error> {
    use bson::raw::RawBsonRef;
    let Some(list) = request.field("compression")? else {
        return Ok(None);
    };
    let RawBsonRef::Array(list) = list else {
        let message = format!(
            "BSON field '{}.compression' is the wrong type, expected type 'array'",
            request.name
        );
        return Err(Error::new(ErrorCode::TypeMismatch, message));
    };
    let mut names: Vec<Bson> = Vec::new();
    for item in list {
        let Ok(RawBsonRef::String(name)) = item else {
            let message = format!(
                "BSON field '{}.compression' is the wrong type, expected type 'string'",
                request.name
            );
            return Err(Error::new(ErrorCode::TypeMismatch, message));
        };
        let enabled =
            wire::Compressor::from_name(name).is_some_and(|c| request.ctx.compressors.contains(&c));
        let named = Bson::String(name.to_owned());
        if enabled && !names.contains(&named) {
            names.push(named);
        }
    }
    Ok((!names.is_empty()).then_some(names))
}

/// The awaitable hello's options, checked as mongod 7.0 checks them: `topologyVersion`
/// and `maxAwaitTimeMS` come together, the counter and the wait are not negative, and a
/// counter of this process is not ahead of its own.
fn check_awaitable(engine: &Engine, request: &Request<'_>) -> Result<(), Error> {
    use bson::raw::RawBsonRef;
    let version = request.field("topologyVersion")?;
    let wait = request.field("maxAwaitTimeMS")?;
    let (version, wait) = match (version, wait) {
        (None, None) => return Ok(()),
        (Some(version), Some(wait)) => (version, wait),
        (Some(_), None) => {
            let message = "A request with a 'topologyVersion' must include 'maxAwaitTimeMS'";
            return Err(Error::new(ErrorCode::Location(31368), message));
        }
        (None, Some(_)) => {
            let message = "A request with 'maxAwaitTimeMS' must include a 'topologyVersion'";
            return Err(Error::new(ErrorCode::Location(31368), message));
        }
    };
    let RawBsonRef::Document(version) = version else {
        let message = "BSON field 'topologyVersion' is the wrong type, expected type 'object'";
        return Err(Error::new(ErrorCode::TypeMismatch, message));
    };
    let wait = match super::read_args::number_i64(wait) {
        Some(wait) => wait?,
        None => {
            let message = "BSON field 'maxAwaitTimeMS' is the wrong type, expected a number";
            return Err(Error::new(ErrorCode::TypeMismatch, message));
        }
    };
    if wait < 0 {
        let message =
            format!("BSON field 'maxAwaitTimeMS' value must be >= 0, actual value '{wait}'");
        return Err(Error::new(ErrorCode::Location(51024), message));
    }
    let counter = match version.get("counter") {
        Ok(Some(RawBsonRef::Int64(n))) => n,
        Ok(Some(RawBsonRef::Int32(n))) => i64::from(n),
        _ => {
            let message = "BSON field 'topologyVersion.counter' is missing but a required field";
            return Err(Error::new(ErrorCode::Location(40414), message));
        }
    };
    if counter < 0 {
        let message = "topologyVersion must have a non-negative counter";
        return Err(Error::new(ErrorCode::Location(31372), message));
    }
    let ours = matches!(version.get("processId"), Ok(Some(RawBsonRef::ObjectId(id))) if id == engine.process_id);
    if ours && counter > 0 {
        let message = format!(
            "Received a topology version with counter: {counter} which is greater than the \
             server topology version counter: 0"
        );
        return Err(Error::new(ErrorCode::Location(31382), message));
    }
    Ok(())
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
