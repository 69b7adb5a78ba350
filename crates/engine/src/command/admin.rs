//! Administration commands: hostInfo, getCmdLineOpts, getLog, currentOp, killOp.

use super::Request;
use crate::engine::Engine;
use crate::error::{Error, ErrorCode};
use bson::raw::RawBsonRef;
use bson::{Bson, DateTime, Document, doc};

fn int64(value: u64) -> Bson {
    Bson::Int64(i64::try_from(value).unwrap_or(i64::MAX))
}

/// hostInfo: the machine, from the host facts the server passed in.
pub(super) fn host_info(engine: &Engine, _request: &Request<'_>) -> Result<Document, Error> {
    let facts = engine.host.facts();
    Ok(doc! {
        "system": {
            "currentTime": DateTime::from_millis(engine.host.now_millis()),
            "hostname": facts.hostname.as_str(),
            "cpuAddrSize": 64,
            "memSizeMB": int64(facts.memory_mb),
            "memLimitMB": int64(facts.memory_mb),
            "numCores": i64::from(facts.cores),
            "cpuArch": facts.cpu_arch.as_str(),
            "numaEnabled": false,
        },
        "os": {
            "type": facts.os_type.as_str(),
            "name": facts.os_name.as_str(),
            "version": facts.os_version.as_str(),
        },
        "extra": {
            "versionString": facts.version_string.as_str(),
            "kernelVersion": facts.os_version.as_str(),
            "cpuString": facts.cpu_string.as_str(),
            "cpuFrequencyMHz": facts.cpu_frequency_mhz.as_str(),
            "cpuFeatures": facts.cpu_features.as_str(),
            "numCores": i64::from(facts.cores),
            "maxOpenFiles": int64(facts.max_open_files),
        },
    })
}

/// getCmdLineOpts: the command line as started, and its parsed form.
pub(super) fn get_cmd_line_opts(
    engine: &Engine,
    _request: &Request<'_>,
) -> Result<Document, Error> {
    let argv: Vec<Bson> = engine
        .startup
        .argv
        .iter()
        .map(|a| Bson::String(a.clone()))
        .collect();
    Ok(doc! { "argv": argv, "parsed": engine.startup.parsed.clone() })
}

/// getLog: the in-memory logs mongod keeps: `global`, the server's recent lines (what a
/// server recorded in [`crate::RecentLog`], with the engine's own lines: logins, long index
/// builds, slow operations), and `startupWarnings`
/// (mongosh reads it on connect and prints nothing for an empty log).
pub(super) fn get_log(engine: &Engine, request: &Request<'_>) -> Result<Document, Error> {
    match request.body.get("getLog") {
        Ok(Some(RawBsonRef::String("*"))) => Ok(doc! { "names": ["global", "startupWarnings"] }),
        Ok(Some(RawBsonRef::String("global"))) => {
            let (lines, total) = engine.recent_log.snapshot();
            let total = i32::try_from(total).map_or_else(
                |_| Bson::Int64(i64::try_from(total).unwrap_or(i64::MAX)),
                Bson::Int32,
            );
            Ok(doc! { "totalLinesWritten": total, "log": lines })
        }
        Ok(Some(RawBsonRef::String("startupWarnings"))) => {
            // mongod's lines are structured-log JSON documents, as strings.
            let lines: Vec<String> = engine
                .store()
                .open_report()
                .warnings
                .iter()
                .map(|warning| startup_warning_line(engine, warning))
                .collect();
            Ok(
                doc! { "totalLinesWritten": i32::try_from(lines.len()).unwrap_or(i32::MAX), "log": lines },
            )
        }
        Ok(Some(RawBsonRef::String(name))) => Err(Error::new(
            ErrorCode::OperationFailed,
            format!("no RamLog named: {name}"),
        )),
        _ => Err(Error::new(
            ErrorCode::TypeMismatch,
            "Argument to getLog must be of type String",
        )),
    }
}

/// One startup warning as mongod writes its log lines (`{"t", "s", "c", "id", "ctx",
/// "msg"}`), so tools that parse `getLog` output read it.
fn startup_warning_line(engine: &Engine, warning: &str) -> String {
    let line = doc! {
        "t": bson::DateTime::from_millis(engine.host.now_millis()),
        "s": "W",
        "c": "STORAGE",
        "id": 22_120,
        "ctx": "initandlisten",
        "msg": warning,
        "tags": ["startupWarnings"],
    };
    Bson::Document(line).into_relaxed_extjson().to_string()
}

/// Fields of a `currentOp` command that are options, not part of its filter.
const CURRENT_OP_OPTIONS: &[&str] = &["currentOp", "$all", "$ownOps", "$truncateOps"];

/// `currentOp`: the operations running now (this one included), those matching the
/// command's other fields as a query filter (`{ns: "db.c", op: "command"}`), as mongod's.
/// Every listed operation is active, so `$all` changes nothing; without users every
/// operation is one's own, so `$ownOps` neither.
pub(super) fn current_op(engine: &Engine, request: &Request<'_>) -> Result<Document, Error> {
    let mut filter = bson::RawDocumentBuf::new();
    for element in request.body {
        let (name, value) =
            element.map_err(|e| Error::new(ErrorCode::InvalidBson, e.to_string()))?;
        let name_str = name.as_str();
        if CURRENT_OP_OPTIONS.contains(&name_str) || super::args::GENERIC_ARGS.contains(&name_str) {
            continue;
        }
        filter.append(name, value);
    }
    let filter = query::Filter::parse(&filter)?;
    let mut inprog = Vec::new();
    for op in engine.operations.report(engine.host.now_millis()) {
        let raw = bson::RawDocumentBuf::try_from(&op)
            .map_err(|e| Error::new(ErrorCode::InternalError, e.to_string()))?;
        if filter.try_matches(&raw)? {
            inprog.push(op);
        }
    }
    let mut reply = doc! { "inprog": inprog };
    if engine.fsync_lock.count() > 0 {
        reply.insert("fsyncLock", true);
    }
    Ok(reply)
}

/// killOp: `{killOp: 1, op: <opid>}` marks the operation to stop at its next check (it
/// fails with 11601 Interrupted); mongod answers ok whether or not it was running.
pub(super) fn kill_op(engine: &Engine, request: &Request<'_>) -> Result<Document, Error> {
    let opid = match request.field("op")? {
        Some(RawBsonRef::Int32(opid)) => i64::from(opid),
        Some(RawBsonRef::Int64(opid)) => opid,
        Some(RawBsonRef::Double(opid)) if opid.fract() == 0.0 => opid as i64,
        Some(_) => {
            return Err(Error::new(
                ErrorCode::TypeMismatch,
                "Expected field \"op\" to have numeric type",
            ));
        }
        None => {
            return Err(Error::new(
                ErrorCode::BadValue,
                "Did not provide \"op\" field",
            ));
        }
    };
    if let Ok(opid) = i32::try_from(opid) {
        engine.operations.kill(opid);
    }
    Ok(doc! { "info": "attempting to kill op" })
}
