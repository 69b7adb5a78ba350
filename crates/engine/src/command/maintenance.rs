//! mongosh's admin helpers: fsync / fsyncLock / fsyncUnlock, shutdown, logRotate, top,
//! dbHash, compact.

use super::{Request, flag};
use crate::engine::Engine;
use crate::error::{Error, ErrorCode};
use bson::raw::RawBsonRef;
use bson::spec::BinarySubtype;
use bson::{Binary, Bson, Document, doc};
use md5::{Digest, Md5};

/// fsync: a checkpoint (the data file holds every committed write); with `lock: true`,
/// also stop writes until fsyncUnlock (see [`crate::fsync_lock`]).
pub(super) fn fsync(engine: &Engine, request: &Request<'_>) -> Result<Document, Error> {
    if !flag(request.body, "lock") {
        engine.store().checkpoint().map_err(Error::from)?;
        return Ok(doc! { "numFiles": 1 });
    }
    let count = engine
        .fsync_lock
        .lock(engine.store())
        .map_err(Error::from)?;
    Ok(doc! {
        "info": "now locked against writes, use db.fsyncUnlock() to unlock",
        "lockCount": i64::from(count),
        "seeAlso": "http://dochub.mongodb.org/core/fsynccommand",
    })
}

/// fsyncUnlock: one lock fewer; writes resume at none.
pub(super) fn fsync_unlock(engine: &Engine, _: &Request<'_>) -> Result<Document, Error> {
    match engine.fsync_lock.unlock() {
        Some(count) => Ok(doc! { "info": "fsyncUnlock completed", "lockCount": i64::from(count) }),
        None => Err(Error::new(
            ErrorCode::IllegalOperation,
            "fsyncUnlock called when not locked",
        )),
    }
}

/// shutdown (`force`, `timeoutSecs`): asks the server that installed a shutdown hook to
/// stop cleanly (its clean stop checkpoints and closes the file); an embedded engine has
/// no server to stop and refuses.
pub(super) fn shutdown(engine: &Engine, request: &Request<'_>) -> Result<Document, Error> {
    match request.field("timeoutSecs")? {
        None | Some(RawBsonRef::Int32(_) | RawBsonRef::Int64(_) | RawBsonRef::Double(_)) => {}
        Some(other) => {
            let message = format!(
                "BSON field 'shutdown.timeoutSecs' is the wrong type '{:?}', expected types '[long, int, decimal, double]'",
                other.element_type()
            );
            return Err(Error::new(ErrorCode::TypeMismatch, message));
        }
    }
    let Some(hook) = engine.shutdown_hook() else {
        return Err(Error::new(
            ErrorCode::IllegalOperation,
            "shutdown: this engine is embedded, with no server to stop; close the Engine instead",
        ));
    };
    // Writes held by fsyncLock would never drain: a shutdown releases the lock, as mongod's.
    engine.fsync_lock.release_all();
    hook();
    Ok(Document::new())
}

/// logRotate: the server logs to its standard error, which has no file to reopen.
pub(super) fn log_rotate(_: &Engine, _: &Request<'_>) -> Result<Document, Error> {
    Ok(Document::new())
}

/// top: time and count per namespace and kind of operation since start.
pub(super) fn top(engine: &Engine, _: &Request<'_>) -> Result<Document, Error> {
    let mut totals = doc! { "note": "all times in microseconds" };
    totals.extend(engine.operations.top());
    Ok(doc! { "totals": totals })
}

/// dbHash: per collection the md5 of its documents' bytes in `_id` order, and the md5 of
/// those hex digests in name order, as mongod computes them (`collections` limits it).
pub(super) fn db_hash(engine: &Engine, request: &Request<'_>) -> Result<Document, Error> {
    let wanted: Option<Vec<String>> = match request.field("collections")? {
        Some(RawBsonRef::Array(names)) => Some(
            names
                .into_iter()
                .filter_map(|name| name.ok().and_then(|n| n.as_str().map(str::to_owned)))
                .collect(),
        ),
        _ => None,
    };
    let store = engine.store();
    let reader = store.read().map_err(Error::from)?;
    let mut collections = Document::new();
    let mut uuids = Document::new();
    let mut capped = Vec::new();
    let mut whole = Md5::new();
    for (ns, meta) in reader.collections(Some(request.db)).map_err(Error::from)? {
        let skipped = ns.coll.starts_with("system.") && ns.coll != "system.js";
        if skipped || wanted.as_ref().is_some_and(|w| !w.contains(&ns.coll)) {
            continue;
        }
        if flag(&meta.options, "capped") {
            capped.push(Bson::String(ns.coll.clone()));
        }
        let mut hash = Md5::new();
        for record in reader.by_id_order(&meta, true).map_err(Error::from)? {
            let (_, bytes) = record.map_err(Error::from)?;
            hash.update(&bytes);
        }
        let hex = hex(&hash.finalize());
        whole.update(hex.as_bytes());
        collections.insert(ns.coll.clone(), hex);
        let uuid = Binary {
            subtype: BinarySubtype::Uuid,
            bytes: meta.uuid.to_vec(),
        };
        uuids.insert(ns.coll.clone(), uuid);
    }
    Ok(doc! {
        "host": engine.host.facts().hostname.as_str(),
        "collections": collections,
        "capped": capped,
        "uuids": uuids,
        "md5": hex(&whole.finalize()),
        "timeMillis": 0,
    })
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

/// compact: the file's free pages are reused by later writes, so there is nothing to
/// move; mongod's reply shape with nothing freed.
pub(super) fn compact(engine: &Engine, request: &Request<'_>) -> Result<Document, Error> {
    let Some(RawBsonRef::String(coll)) = request.field("compact")? else {
        return Err(Error::new(
            ErrorCode::InvalidNamespace,
            "collection name has invalid type",
        ));
    };
    let ns = crate::store::Namespace::new(request.db, coll);
    let store = engine.store();
    let reader = store.read().map_err(Error::from)?;
    if reader.collection(&ns).map_err(Error::from)?.is_none() {
        return Err(Error::new(
            ErrorCode::NamespaceNotFound,
            format!("collection does not exist: {}.{coll}", request.db),
        ));
    }
    Ok(doc! { "bytesFreed": 0_i64 })
}

/// profile: sets this database's profiling level (0 off, 1 slow operations, 2 all; -1 only
/// reads), the global `slowms` and `sampleRate`, and the database's `filter` (`"unset"`
/// removes it); answers with the settings before, as mongod does (see [`crate::profile`]).
pub(super) fn profile(engine: &Engine, request: &Request<'_>) -> Result<Document, Error> {
    super::args::check_fields(request, &["slowms", "sampleRate", "filter"])?;
    let number = |key: &str| -> Result<Option<f64>, Error> {
        match request.field(key)? {
            None => Ok(None),
            Some(RawBsonRef::Int32(n)) => Ok(Some(f64::from(n))),
            Some(RawBsonRef::Int64(n)) => Ok(Some(n as f64)),
            Some(RawBsonRef::Double(n)) => Ok(Some(n)),
            Some(_) => Err(Error::new(
                ErrorCode::TypeMismatch,
                format!("BSON field 'profile.{key}' is the wrong type, expected a number"),
            )),
        }
    };
    let level = number("profile")?.unwrap_or(0.0);
    if !matches!(level, -1.0 | 0.0 | 1.0 | 2.0) {
        return Err(Error::new(
            ErrorCode::BadValue,
            format!("Profiling level must be one of -1, 0, 1 or 2, not {level}"),
        ));
    }
    let sample_rate = number("sampleRate")?;
    if sample_rate.is_some_and(|rate| !(0.0..=1.0).contains(&rate)) {
        return Err(Error::new(
            ErrorCode::BadValue,
            "'sampleRate' must be between 0.0 and 1.0 inclusive",
        ));
    }
    let filter = match request.field("filter")? {
        None => None,
        Some(RawBsonRef::String("unset")) => Some(None),
        Some(RawBsonRef::Document(filter)) => {
            // Parsed now, so a bad filter is refused here rather than ignored later.
            query::Filter::parse(filter)?;
            Some(Some(Document::try_from(filter).map_err(|e| {
                Error::new(ErrorCode::InvalidBson, e.to_string())
            })?))
        }
        Some(_) => {
            return Err(Error::new(
                ErrorCode::BadValue,
                "the profiling filter must be an object or the string 'unset'",
            ));
        }
    };
    let setting_filter = matches!(filter, Some(Some(_)));
    let change = crate::profile::Change {
        level: level as i32,
        slow_ms: number("slowms")?.map(|ms| ms as i64),
        sample_rate,
        filter,
    };
    let mut before = engine.profiler.set(request.db, change);
    if setting_filter {
        before.insert(
            "note",
            "When a filter expression is set, slowms and sampleRate are not used for profiling \
             and slow-query log lines.",
        );
    }
    Ok(before)
}
