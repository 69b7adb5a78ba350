//! The local logical session cache: the sessions (`lsid`) commands arrived with, and when
//! each was last used. `$listLocalSessions` reads it; `endSessions` removes entries.
//!
//! Sessions carry no other server state yet (no transactions, no retryable writes). An
//! entry expires after `LOGICAL_SESSION_TIMEOUT_MINUTES` without use, as mongod's cache
//! forgets a session after its timeout; the cache holds at most `SESSIONS_MAX` entries
//! (mongod's `maxSessions` default), and a new session beyond that is not recorded.

use crate::limits::LOGICAL_SESSION_TIMEOUT_MINUTES;
use bson::raw::RawBsonRef;
use bson::spec::BinarySubtype;
use bson::{Binary, DateTime, RawDocument, RawDocumentBuf, rawdoc};
use parking_lot::Mutex;
use std::collections::HashMap;

/// The most sessions the cache records.
pub(crate) const SESSIONS_MAX: usize = 1_000_000;

/// The session owner's id when authentication is off: SHA-256 of the empty user name,
/// as mongod computes it.
const UNAUTHENTICATED_UID: [u8; 32] = [
    0xe3, 0xb0, 0xc4, 0x42, 0x98, 0xfc, 0x1c, 0x14, 0x9a, 0xfb, 0xf4, 0xc8, 0x99, 0x6f, 0xb9, 0x24,
    0x27, 0xae, 0x41, 0xe4, 0x64, 0x9b, 0x93, 0x4c, 0xa4, 0x95, 0x99, 0x1b, 0x78, 0x52, 0xb8, 0x55,
];

const TIMEOUT_MS: i64 = LOGICAL_SESSION_TIMEOUT_MINUTES as i64 * 60 * 1000;

/// Session UUID bytes → last use (milliseconds since the epoch).
#[derive(Default)]
pub(crate) struct Sessions {
    entries: Mutex<HashMap<Vec<u8>, i64>>,
}

/// The UUID of an `lsid` document (`{id: UUID}`), when it has one.
fn session_id(lsid: &RawDocument) -> Option<&[u8]> {
    match lsid.get("id") {
        Ok(Some(RawBsonRef::Binary(binary))) if binary.subtype == BinarySubtype::Uuid => {
            Some(binary.bytes)
        }
        _ => None,
    }
}

impl Sessions {
    /// Records that a command used the session `lsid` at `now_ms`.
    pub(crate) fn touch(&self, lsid: &RawDocument, now_ms: i64) {
        let Some(id) = session_id(lsid) else {
            return;
        };
        let mut entries = self.entries.lock();
        if let Some(last_use) = entries.get_mut(id) {
            *last_use = (*last_use).max(now_ms);
            return;
        }
        if entries.len() >= SESSIONS_MAX {
            entries.retain(|_, last_use| now_ms - *last_use < TIMEOUT_MS);
            if entries.len() >= SESSIONS_MAX {
                return;
            }
        }
        entries.insert(id.to_vec(), now_ms);
    }

    /// Forgets the session `lsid` (`endSessions`).
    pub(crate) fn end(&self, lsid: &RawDocument) {
        if let Some(id) = session_id(lsid) {
            self.entries.lock().remove(id);
        }
    }

    /// Forgets every session (`killAllSessions`).
    pub(crate) fn clear(&self) {
        self.entries.lock().clear();
    }

    /// The live sessions as `$listLocalSessions` returns them, `{_id: {id, uid}, lastUse}`,
    /// oldest use first; expired entries are dropped on the way.
    pub(crate) fn list(&self, now_ms: i64) -> Vec<RawDocumentBuf> {
        let mut entries = self.entries.lock();
        entries.retain(|_, last_use| now_ms - *last_use < TIMEOUT_MS);
        let mut live: Vec<(&Vec<u8>, &i64)> = entries.iter().collect();
        live.sort_by_key(|(id, last_use)| (**last_use, (*id).clone()));
        live.into_iter()
            .map(|(id, last_use)| {
                let id = Binary {
                    subtype: BinarySubtype::Uuid,
                    bytes: id.clone(),
                };
                let uid = Binary {
                    subtype: BinarySubtype::Generic,
                    bytes: UNAUTHENTICATED_UID.to_vec(),
                };
                rawdoc! {
                    "_id": { "id": id, "uid": uid },
                    "lastUse": DateTime::from_millis(*last_use),
                }
            })
            .collect()
    }
}

/// The session id as mongod keeps it in its records and oplog entries: `{id, uid}`, the
/// client's `id` and the owner's `uid` (here always the unauthenticated owner's: sessions
/// have no owner yet).
pub(crate) fn owned_session_id(lsid: &RawDocument) -> RawDocumentBuf {
    let mut owned = RawDocumentBuf::new();
    if let Ok(Some(id)) = lsid.get("id") {
        owned.append(bson::raw::cstr!("id"), id);
    }
    owned.append(
        bson::raw::cstr!("uid"),
        Binary {
            subtype: BinarySubtype::Generic,
            bytes: UNAUTHENTICATED_UID.to_vec(),
        },
    );
    owned
}

/// Commands mongod runs without authentication (`requiresAuth() == false`): they may
/// carry an `lsid` but never transaction fields.
const NO_AUTH_COMMANDS: &[&str] = &[
    "hello",
    "isMaster",
    "ismaster",
    "ping",
    "buildInfo",
    "buildinfo",
    "whatsmyuri",
    "connectionStatus",
];

/// The commands a retryable write may be (`txnNumber` without `autocommit`).
const RETRYABLE_WRITE_COMMANDS: &[&str] = &[
    "insert",
    "update",
    "delete",
    "findAndModify",
    "findandmodify",
];

/// The operation session fields of a command, checked as mongod's
/// `initializeOperationSessionInfo` checks them.
///
/// On a standalone (`member` false) there are no transactions and no retryable writes,
/// so a command carrying `txnNumber` is refused (IllegalOperation, as mongod refuses it)
/// and never applied as if the field were absent. On a replica-set member, `txnNumber`
/// makes a write command retryable; with `autocommit: false` it would be a multi-document
/// transaction, which is not built yet (238, never run as if it were not one).
/// `autocommit` and `startTransaction` cannot be valid without a `txnNumber`, so they are
/// refused with mongod's own messages.
pub(crate) fn check_operation_session_info(
    command: &str,
    member: bool,
    lsid: bool,
    txn_number: Option<RawBsonRef<'_>>,
    autocommit: Option<RawBsonRef<'_>>,
    start_transaction: Option<RawBsonRef<'_>>,
) -> Result<(), crate::Error> {
    use crate::error::{Error, ErrorCode};
    if NO_AUTH_COMMANDS.contains(&command) {
        if autocommit.is_some() {
            return Err(Error::new(
                ErrorCode::Other(263, "OperationNotSupportedInTransaction"),
                "This command is not supported in transactions",
            ));
        }
        if txn_number.is_some() {
            return Err(Error::new(
                ErrorCode::Location(50889),
                "It is illegal to provide a txnNumber for this command",
            ));
        }
    }
    if txn_number.is_some() {
        if !lsid {
            return Err(Error::new(
                ErrorCode::InvalidOptions,
                "Transaction number requires a session ID to also be specified",
            ));
        }
        if !member {
            return Err(Error::new(
                ErrorCode::IllegalOperation,
                "Transaction numbers are only allowed on a replica set member or mongos",
            ));
        }
        match autocommit {
            None if RETRYABLE_WRITE_COMMANDS.contains(&command) => {}
            None => {
                let message = format!(
                    "txnNumber may only be provided for multi-document transactions and \
                     retryable write commands. autocommit:false was not provided, and {command} \
                     is not a retryable write command."
                );
                return Err(Error::new(
                    ErrorCode::Other(50768, "NotARetryableWriteCommand"),
                    message,
                ));
            }
            Some(RawBsonRef::Boolean(false)) => {
                return Err(Error::new(
                    ErrorCode::NotImplemented,
                    "multi-document transactions are not supported yet (the replica set \
                     runs retryable writes; transactions are PLAN.md #44)",
                ));
            }
            Some(_) => {
                return Err(Error::new(
                    ErrorCode::InvalidOptions,
                    "Specifying autocommit=true is not allowed.",
                ));
            }
        }
        return Ok(());
    }
    if autocommit.is_some() {
        return Err(Error::new(
            ErrorCode::InvalidOptions,
            "'autocommit' field requires a transaction number to also be specified",
        ));
    }
    if start_transaction.is_some() {
        return Err(Error::new(
            ErrorCode::InvalidOptions,
            "'startTransaction' field requires 'autocommit' field to also be specified",
        ));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn lsid(byte: u8) -> RawDocumentBuf {
        rawdoc! { "id": Binary { subtype: BinarySubtype::Uuid, bytes: vec![byte; 16] } }
    }

    #[test]
    fn sessions_are_listed_until_ended_or_expired() {
        let sessions = Sessions::default();
        sessions.touch(&lsid(1), 1_000);
        sessions.touch(&lsid(2), 2_000);
        sessions.touch(&lsid(1), 3_000);
        // Not a UUID: not a session.
        sessions.touch(&rawdoc! { "id": 1 }, 3_000);
        let listed = sessions.list(3_000);
        assert_eq!(listed.len(), 2);
        assert_eq!(
            listed[0].get_datetime("lastUse").ok(),
            Some(DateTime::from_millis(2_000))
        );
        sessions.end(&lsid(2));
        assert_eq!(sessions.list(3_000).len(), 1);
        assert!(sessions.list(3_000 + TIMEOUT_MS).is_empty());
    }
}
