//! The one-member replica set (issue 43): what makes a database a replica-set primary.
//!
//! A member is started on an open store ([`Member::start`]): the first start initiates the
//! set (its config in `local.system.replset`, the oplog `local.oplog.rs`, and an
//! "initiating set" entry); every start is an election the member wins at once, so the
//! term moves one up, is written back with the config, and a "new primary" entry opens
//! the term in the oplog. All of it is one write transaction: a crash leaves the previous
//! start's state or this one's.
//!
//! Invariants:
//! - The set's name, config version, term and `replicaSetId` persist in the database
//!   file and never go backwards: the term only grows (one per start), the version only
//!   grows (`replSetReconfig`, or the member's address changing between starts).
//! - The cluster time is the oplog's clock ([`crate::store::oplog::Clock`]): it is the
//!   last `ts` handed out, and every entry's `ts` is allocated under the write gate, so
//!   oplog order is commit order (the storage layer's invariant, relied on here).
//! - The store writes oplog entries only while a member runs on it: the start turns them
//!   on; a store recovered after a failure keeps the setting and the term (storage).
//! - A write is durable before it is acknowledged (the storage layer's commit), so a
//!   one-member set's majority is the member itself: `majorityOpTime` is the last
//!   committed position, and `w: "majority"` needs no more than `w: 1`.

pub(crate) mod retryable;

use crate::error::{Error, ErrorCode};
use crate::store::oplog::{self, Ts};
use crate::store::{Namespace, Store, StoreError};
use bson::oid::ObjectId;
use bson::{Bson, DateTime, Document, RawDocumentBuf, doc};
use parking_lot::Mutex;

/// The oplog's size when `--oplogSizeMB` is not given: mongod's lower bound for its
/// default (5% of the free disk space, at least 990 MB, at most 50 GB). Entries past it
/// are removed oldest first.
pub const OPLOG_SIZE_DEFAULT: u64 = 990 * 1024 * 1024;

/// The set's config collection.
pub(crate) fn config_namespace() -> Namespace {
    Namespace::new("local", "system.replset")
}

/// How a member starts.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Options {
    /// The set's name (`--replSet`).
    pub name: String,
    /// The member's address as clients reach it (`host:port`), which hello's `hosts`,
    /// `primary` and `me` report.
    pub host: String,
    /// The oplog's size in bytes when it is created (an existing oplog keeps its own).
    pub oplog_size_bytes: u64,
}

impl Options {
    /// A set named `name` whose member clients reach at `host`, with the default oplog
    /// size.
    #[must_use]
    pub fn new(name: &str, host: &str) -> Options {
        Options {
            name: name.to_owned(),
            host: host.to_owned(),
            oplog_size_bytes: OPLOG_SIZE_DEFAULT,
        }
    }
}

/// A running member: the primary of its set.
#[derive(Debug)]
pub struct Member {
    name: String,
    host: String,
    /// The config as stored (`replSetGetConfig`).
    config: Mutex<Document>,
    term: i64,
    /// When this start won its election (`electionDate`).
    elected_ms: i64,
    /// The position of the election's "new primary" entry (`electionTime`).
    election_ts: Ts,
}

fn from_store(error: StoreError) -> Error {
    Error::from(error)
}

/// The config of a new set named `name` whose one member is `host`.
fn initial_config(name: &str, host: &str, replica_set_id: ObjectId) -> Document {
    doc! {
        "_id": name,
        "version": 1,
        "term": 0_i64,
        "members": [member_config(host)],
        "protocolVersion": 1_i64,
        "writeConcernMajorityJournalDefault": true,
        "settings": {
            "chainingAllowed": true,
            "heartbeatIntervalMillis": 2000,
            "heartbeatTimeoutSecs": 10,
            "electionTimeoutMillis": 10000,
            "catchUpTimeoutMillis": -1,
            "catchUpTakeoverDelayMillis": 30000,
            "getLastErrorModes": {},
            "getLastErrorDefaults": { "w": 1, "wtimeout": 0 },
            "replicaSetId": replica_set_id,
        },
    }
}

/// The one member's entry in the config, with mongod's defaults.
fn member_config(host: &str) -> Document {
    doc! {
        "_id": 0,
        "host": host,
        "arbiterOnly": false,
        "buildIndexes": true,
        "hidden": false,
        "priority": 1.0,
        "tags": {},
        "secondaryDelaySecs": 0_i64,
        "votes": 1,
    }
}

/// A config's `term` (mongod stores it as a long; an int is read too).
fn term_of(config: &Document) -> i64 {
    match config.get("term") {
        Some(Bson::Int64(term)) => *term,
        Some(Bson::Int32(term)) => i64::from(*term),
        _ => 0,
    }
}

/// A config's `version`.
fn version_of(config: &Document) -> i32 {
    match config.get("version") {
        Some(Bson::Int32(version)) => *version,
        Some(Bson::Int64(version)) => i32::try_from(*version).unwrap_or(i32::MAX),
        _ => 1,
    }
}

/// The first member's `host` in a config.
fn host_of(config: &Document) -> Option<&str> {
    let members = config.get_array("members").ok()?;
    match members.first()? {
        Bson::Document(member) => member.get_str("host").ok(),
        _ => None,
    }
}

/// The set name stored in the database file, if it was ever a member's (a standalone
/// start reports it, as mongod does).
pub fn stored_set_name(store: &Store) -> Result<Option<String>, Error> {
    Ok(stored_config(store)?.and_then(|config| config.get_str("_id").ok().map(str::to_owned)))
}

fn stored_config(store: &Store) -> Result<Option<Document>, Error> {
    let mut writer = store.write().map_err(from_store)?;
    let found = writer
        .find_first(&config_namespace(), None, |_, _| Ok(true))
        .map_err(from_store)?;
    drop(writer);
    found
        .map(|(_, raw)| Document::try_from(raw.as_ref()))
        .transpose()
        .map_err(|error| Error::new(ErrorCode::InternalError, error.to_string()))
}

impl Member {
    /// Starts the member on `store` at wall time `now_ms`: initiates the set on the
    /// first start, wins the election (term + 1), and turns the oplog's writes on.
    /// A database that belongs to another set is refused (mongod would not serve it as
    /// this set's member either).
    /// `set_id` is the new set's `replicaSetId` (unused when the set exists).
    pub fn start(
        store: &Store,
        options: &Options,
        now_ms: i64,
        set_id: ObjectId,
    ) -> Result<Member, Error> {
        let stored = stored_config(store)?;
        if let Some(config) = &stored
            && config.get_str("_id").ok() != Some(options.name.as_str())
        {
            let message = format!(
                "this database belongs to replica set '{}', not '{}' (start it with \
                 --replSet {} or without --replSet)",
                config.get_str("_id").unwrap_or_default(),
                options.name,
                config.get_str("_id").unwrap_or_default(),
            );
            return Err(Error::new(ErrorCode::InvalidOptions, message));
        }
        let initiating = stored.is_none();
        let mut config = match stored {
            Some(config) => config,
            None => initial_config(&options.name, &options.host, set_id),
        };
        if host_of(&config) != Some(options.host.as_str()) {
            // The file moved (another port or machine): the one member is this one.
            config.insert(
                "members",
                vec![Bson::Document(member_config(&options.host))],
            );
            config.insert("version", version_of(&config).saturating_add(1));
        }
        let term = term_of(&config).saturating_add(1);
        config.insert("term", term);
        store.set_oplog_writes(true);
        store.set_term(term);
        let mut writer = store.write().map_err(from_store)?;
        if writer
            .collection(&oplog::namespace())
            .map_err(from_store)?
            .is_none()
        {
            let size = i64::try_from(options.oplog_size_bytes).unwrap_or(i64::MAX);
            writer
                .create_collection(
                    &oplog::namespace(),
                    bson::rawdoc! { "capped": true, "size": size },
                )
                .map_err(from_store)?;
        }
        let raw = RawDocumentBuf::try_from(&config)
            .map_err(|error| Error::new(ErrorCode::InternalError, error.to_string()))?;
        put_by_id(&mut writer, &config_namespace(), &raw)?;
        if initiating {
            writer
                .oplog_note(bson::rawdoc! { "msg": "initiating set" })
                .map_err(from_store)?;
        }
        writer
            .oplog_note(bson::rawdoc! { "msg": "new primary" })
            .map_err(from_store)?;
        writer.commit().map_err(from_store)?;
        Ok(Member {
            name: options.name.clone(),
            host: options.host.clone(),
            config: Mutex::new(config),
            term,
            elected_ms: now_ms,
            election_ts: store.oplog_clock().last(),
        })
    }

    /// The set's name.
    #[must_use]
    pub fn name(&self) -> &str {
        &self.name
    }

    /// The member's address (`host:port`).
    #[must_use]
    pub fn host(&self) -> &str {
        &self.host
    }

    /// The current term.
    #[must_use]
    pub fn term(&self) -> i64 {
        self.term
    }

    /// The config as stored.
    #[must_use]
    pub fn config(&self) -> Document {
        self.config.lock().clone()
    }

    /// The config's version (hello's `setVersion`).
    #[must_use]
    pub fn version(&self) -> i32 {
        version_of(&self.config.lock())
    }

    /// hello's `electionId`: mongod's `ObjectId("7fffffff" + term)`.
    #[must_use]
    pub fn election_id(&self) -> ObjectId {
        let mut bytes = [0u8; 12];
        bytes[..4].copy_from_slice(&0x7fff_ffff_u32.to_be_bytes());
        bytes[4..].copy_from_slice(&self.term.to_be_bytes());
        ObjectId::from_bytes(bytes)
    }

    /// When this start won its election.
    #[must_use]
    pub fn elected(&self) -> DateTime {
        DateTime::from_millis(self.elected_ms)
    }

    /// The position of the entry that opened this term (`electionTime`).
    #[must_use]
    pub fn election_time(&self) -> bson::Timestamp {
        self.election_ts.timestamp()
    }

    /// The position of the last write (`{ts, t}`), which a one-member set's majority has
    /// too.
    #[must_use]
    pub fn op_time(&self, store: &Store) -> Document {
        doc! { "ts": store.oplog_clock().last().timestamp(), "t": self.term }
    }

    /// The last write's wall time (its `ts` seconds).
    #[must_use]
    pub fn last_write_date(store: &Store) -> DateTime {
        DateTime::from_millis(i64::from(store.oplog_clock().last().secs()) * 1000)
    }

    /// Replaces the config with `config` (checked by the caller) and stores it.
    pub fn reconfigure(&self, store: &Store, config: Document) -> Result<(), Error> {
        let mut current = self.config.lock();
        let raw = RawDocumentBuf::try_from(&config)
            .map_err(|error| Error::new(ErrorCode::InternalError, error.to_string()))?;
        let mut writer = store.write().map_err(from_store)?;
        put_by_id(&mut writer, &config_namespace(), &raw)?;
        writer
            .oplog_note(bson::rawdoc! { "msg": "Reconfig set", "version": version_of(&config) })
            .map_err(from_store)?;
        writer.commit().map_err(from_store)?;
        *current = config;
        Ok(())
    }
}

/// Writes `doc` into `ns` in `writer`'s transaction, replacing the document with its
/// `_id` if there is one (the set's config, a session's retryable-write record).
pub(crate) fn put_by_id(
    writer: &mut crate::store::Writer<'_>,
    ns: &Namespace,
    doc: &bson::RawDocument,
) -> Result<(), Error> {
    let id = doc
        .get("_id")
        .ok()
        .flatten()
        .unwrap_or(bson::RawBsonRef::Null);
    match writer.find_id(ns, id).map_err(from_store)? {
        Some((rid, _)) => writer.update(ns, rid, doc).map_err(from_store),
        None => writer.insert(ns, doc).map(|_| ()).map_err(from_store),
    }
}

/// The `$clusterTime` a reply carries: the cluster time, unsigned (a hash of zeros and
/// key id 0, as mongod answers without a keyfile).
#[must_use]
pub fn cluster_time(ts: Ts) -> Document {
    doc! {
        "clusterTime": ts.timestamp(),
        "signature": {
            "hash": bson::Binary { subtype: bson::spec::BinarySubtype::Generic, bytes: vec![0; 20] },
            "keyId": 0_i64,
        },
    }
}
