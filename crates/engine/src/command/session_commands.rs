//! The logical session commands (issue 43): `startSession`, `refreshSessions`,
//! `killSessions` and `killAllSessionsByPattern`, thin over `crate::sessions`
//! (`endSessions` and `killAllSessions` answer with the handshake commands).
//!
//! Without authentication every session belongs to the one unauthenticated user, so a
//! pattern naming that user's `uid`, or any user, kills every session, as mongod's does.

use super::Request;
use crate::engine::Engine;
use crate::error::{Error, ErrorCode};
use crate::limits::LOGICAL_SESSION_TIMEOUT_MINUTES;
use bson::raw::RawBsonRef;
use bson::spec::BinarySubtype;
use bson::{Binary, Document, doc};

/// `startSession`: a new session id (a random version-4 UUID), recorded as used now.
pub(super) fn start_session(engine: &Engine, _: &Request<'_>) -> Result<Document, Error> {
    let mut id = [0u8; 16];
    engine
        .host
        .fill_random(&mut id)
        .map_err(|error| Error::new(ErrorCode::InternalError, error.to_string()))?;
    id[6] = (id[6] & 0x0f) | 0x40;
    id[8] = (id[8] & 0x3f) | 0x80;
    let lsid = doc! { "id": Binary { subtype: BinarySubtype::Uuid, bytes: id.to_vec() } };
    let raw = bson::RawDocumentBuf::try_from(&lsid)
        .map_err(|error| Error::new(ErrorCode::InternalError, error.to_string()))?;
    engine.sessions.touch(&raw, engine.host.now_millis());
    Ok(doc! { "id": lsid, "timeoutMinutes": LOGICAL_SESSION_TIMEOUT_MINUTES })
}

/// The session ids of `request`'s argument: an array of `{id: UUID}` documents.
fn listed<'a>(request: &Request<'a>) -> Result<Vec<&'a bson::RawDocument>, Error> {
    let Some(RawBsonRef::Array(ids)) = request.field(request.name)? else {
        let message = format!(
            "BSON field '{}.{}' is the wrong type, expected type 'array'",
            request.name, request.name
        );
        return Err(Error::new(ErrorCode::TypeMismatch, message));
    };
    let mut out = Vec::new();
    for id in ids {
        match id {
            Ok(RawBsonRef::Document(lsid)) => out.push(lsid),
            _ => {
                let message = format!(
                    "BSON field '{}.{}' is the wrong type, expected type 'object'",
                    request.name, request.name
                );
                return Err(Error::new(ErrorCode::TypeMismatch, message));
            }
        }
    }
    Ok(out)
}

/// `refreshSessions: [lsid, ...]`: each session is used now (recorded if new).
pub(super) fn refresh_sessions(engine: &Engine, request: &Request<'_>) -> Result<Document, Error> {
    let now = engine.host.now_millis();
    for lsid in listed(request)? {
        engine.sessions.touch(lsid, now);
    }
    Ok(Document::new())
}

/// `killSessions: [lsid, ...]`: each session ends.
pub(super) fn kill_sessions(engine: &Engine, request: &Request<'_>) -> Result<Document, Error> {
    for lsid in listed(request)? {
        engine.sessions.end(lsid);
    }
    Ok(Document::new())
}

/// `killAllSessionsByPattern: [pattern, ...]`: `{lsid}` ends that session; `{uid}`,
/// `{users}` or `{roles}` (or an empty pattern, or an empty list) end every session of
/// the matching owners, here every session.
pub(super) fn kill_all_sessions_by_pattern(
    engine: &Engine,
    request: &Request<'_>,
) -> Result<Document, Error> {
    let patterns = listed(request)?;
    if patterns.is_empty() {
        engine.sessions.clear();
        return Ok(Document::new());
    }
    for pattern in patterns {
        match pattern.get("lsid") {
            Ok(Some(RawBsonRef::Document(lsid))) => engine.sessions.end(lsid),
            Ok(None) => {
                for field in pattern {
                    let (key, _) =
                        field.map_err(|e| Error::new(ErrorCode::InvalidBson, e.to_string()))?;
                    if !matches!(key.as_str(), "uid" | "users" | "roles") {
                        let message = format!(
                            "BSON field 'KillAllSessionsByPattern.{key}' is an unknown field."
                        );
                        return Err(Error::new(ErrorCode::Location(40415), message));
                    }
                }
                engine.sessions.clear();
            }
            _ => {
                let message = "BSON field 'KillAllSessionsByPattern.lsid' is the wrong type, \
                               expected type 'object'";
                return Err(Error::new(ErrorCode::TypeMismatch, message));
            }
        }
    }
    Ok(Document::new())
}
