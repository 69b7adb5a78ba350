//! Collections mongod keeps for itself, answered from the engine's own state rather than
//! stored: `admin.system.version` (the featureCompatibilityVersion document) and
//! `config.system.sessions` (the logical sessions, with mongod's `lsidTTLIndex`).
//!
//! Invariants:
//! - A stored collection of the same name always wins: these answer only where the store
//!   has nothing, so nothing written is ever hidden.
//! - `config.system.sessions` exists (is listed) exactly while sessions are live, as mongod
//!   creates it on the first session refresh; `admin.system.version` always exists.
//! - Their UUIDs are fixed, so a client comparing listings across calls sees one collection.

use crate::engine::Engine;
use crate::store::Namespace;
use crate::version;
use bson::spec::BinarySubtype;
use bson::{Binary, Document, RawDocumentBuf, doc, rawdoc};

/// mongod's `_id` of the FCV document.
const FCV_ID: &str = "featureCompatibilityVersion";

/// The fixed UUIDs these collections are listed with.
const VERSION_UUID: [u8; 16] = *b"mfdb.sys.version";
const SESSIONS_UUID: [u8; 16] = *b"mfdb.sys.session";

/// The documents of `ns` when it is one of these collections (and exists now), else `None`.
pub(crate) fn documents(engine: &Engine, ns: &Namespace) -> Option<Vec<RawDocumentBuf>> {
    match (ns.db.as_str(), ns.coll.as_str()) {
        ("admin", "system.version") => Some(vec![rawdoc! {
            "_id": FCV_ID,
            "version": version::FEATURE_COMPATIBILITY_VERSION,
        }]),
        ("config", "system.sessions") => {
            let sessions = engine.sessions.list(engine.host.now_millis());
            (!sessions.is_empty()).then_some(sessions)
        }
        _ => None,
    }
}

/// `listCollections` entries of these collections in database `db` (those that exist now),
/// in mongod's shape.
pub(crate) fn listed(engine: &Engine, db: &str) -> Vec<(&'static str, Document)> {
    let entry = |name: &'static str, uuid: [u8; 16]| {
        let uuid = Binary {
            subtype: BinarySubtype::Uuid,
            bytes: uuid.to_vec(),
        };
        doc! {
            "name": name,
            "type": "collection",
            "options": {},
            "info": { "readOnly": false, "uuid": uuid },
            "idIndex": { "v": 2, "key": { "_id": 1 }, "name": "_id_" },
        }
    };
    match db {
        "admin" => vec![("system.version", entry("system.version", VERSION_UUID))],
        "config" if documents(engine, &Namespace::new("config", "system.sessions")).is_some() => {
            vec![("system.sessions", entry("system.sessions", SESSIONS_UUID))]
        }
        _ => Vec::new(),
    }
}

/// `listIndexes` entries beyond `_id_` of these collections: mongod's `lsidTTLIndex` on
/// `config.system.sessions`; `None` when `ns` is not one of them.
pub(crate) fn indexes(engine: &Engine, ns: &Namespace) -> Option<Vec<Document>> {
    documents(engine, ns)?;
    let mut out = vec![doc! { "v": 2, "key": { "_id": 1 }, "name": "_id_" }];
    if ns.coll == "system.sessions" {
        out.push(doc! {
            "v": 2,
            "key": { "lastUse": 1 },
            "name": "lsidTTLIndex",
            "expireAfterSeconds": crate::limits::LOGICAL_SESSION_TIMEOUT_MINUTES * 60,
        });
    }
    Some(out)
}
