//! The embedded client: the `mongodb` crate's sync API (`Client`, `Database`,
//! `Collection<T>`, `Cursor<T>`, builders ending in `.run()`, the driver's result and error
//! types) over a database file opened in this process.
//!
//! Code written against `mongodb::sync` moves here by changing its imports and the one
//! constructor (`Client::with_uri_str(uri)` becomes [`Client::open`]`(path)`), and back:
//!
//! ```
//! use bson::doc;
//! use engine::client::{Client, ReturnDocument};
//! use serde::{Deserialize, Serialize};
//!
//! #[derive(Debug, PartialEq, Serialize, Deserialize)]
//! struct User { _id: i32, name: String, visits: i32 }
//!
//! let path = std::env::temp_dir().join(format!("doc-{}.mfdb", std::process::id()));
//! let client = Client::open(&path)?;
//! let users = client.database("app").collection::<User>("users");
//! users.insert_one(User { _id: 1, name: "Ada".into(), visits: 0 }).run()?;
//! let after = users
//!     .find_one_and_update(doc! {"_id": 1}, doc! {"$inc": {"visits": 1}})
//!     .return_document(ReturnDocument::After)
//!     .run()?;
//! assert_eq!(after.map(|u| u.visits), Some(1));
//! for user in users.find(doc! {"name": "Ada"}).sort(doc! {"_id": -1}).run()? {
//!     println!("{:?}", user?);
//! }
//! client.close()?;
//! # drop(client);
//! # std::fs::remove_file(&path).ok();
//! # Ok::<(), engine::client::Error>(())
//! ```
//!
//! Every call builds the command document a driver sends and runs it through
//! [`Engine::run_command`] (PLAN.md D22), so the embedded and the network faces answer
//! alike; the one shortcut is `find_one` by `_id` (`command::point`: the same checks and
//! lookup without a cursor).
//!
//! Invariants:
//! - Every handle ([`Client`], [`Database`], [`Collection`], [`Cursor`]) is
//!   `Clone + Send + Sync + 'static` (cursors: `Send + Sync + 'static`); each holds the
//!   client's shared state by `Arc`, so the file stays open (and locked) until the last
//!   handle is dropped or [`Client::close`] is called; after `close` every call fails with
//!   [`ErrorKind::Closed`] and the lock goes when the calls in flight have returned.
//! - The checks the driver makes before sending (an update must be operators or a
//!   pipeline, a replacement must not be, `insert_many` needs a document) refuse with
//!   [`ErrorKind::InvalidArgument`] and the driver's message, before the engine is asked.
//! - `insert_many` sends batches of at most [`WRITE_BATCH_SIZE_MAX`] documents and
//!   [`MESSAGE_SIZE_MAX`] bytes as the driver splits them; an ordered call stops at the first
//!   failed batch; [`Client::bulk_write`] splits its runs of one kind and namespace alike.
//!
//! A [`Cursor`] moves through: open (first batch buffered) → more batches by `getMore`
//! as it is iterated → exhausted (cursor id 0), or dropped early (`killCursors`).

mod bulk;
mod collection;
mod error;
mod find;
mod index;
mod results;

pub use bulk::{
    BulkWrite, BulkWriteError, DeleteManyModel, DeleteManyModelBuilder, DeleteOneModel,
    DeleteOneModelBuilder, InsertOneModel, InsertOneModelBuilder, Namespace,
    PartialBulkWriteResult, ReplaceOneModel, ReplaceOneModelBuilder, SummaryBulkWriteResult,
    UpdateManyModel, UpdateManyModelBuilder, UpdateOneModel, UpdateOneModelBuilder,
    VerboseBulkWrite, VerboseBulkWriteResult, WriteModel,
};
pub use collection::{
    Collection, CountDocuments, CreateCollection, Delete, Distinct, DropCollection, DropDatabase,
    EstimatedDocumentCount, InsertMany, InsertOne, ListCollectionNames, ListDatabaseNames,
    ReplaceOne, RunCommand, Update, UpdateModifications,
};
pub use error::{
    CommandError, Error, ErrorKind, IndexedWriteError, InsertManyError, Result, WriteError,
    WriteFailure,
};
pub use find::{
    Aggregate, Cursor, Find, FindOne, FindOneAndDelete, FindOneAndReplace, FindOneAndUpdate,
    ReturnDocument,
};
pub use index::{
    CreateIndex, CreateIndexResult, CreateIndexes, CreateIndexesResult, DropIndex, IndexModel,
    IndexModelBuilder, IndexOptions, IndexOptionsBuilder, ListIndexNames, ListIndexes,
};
pub use results::{DeleteResult, InsertManyResult, InsertOneResult, UpdateResult};

use crate::engine::{ConnectionContext, Engine, EngineOptions, StartupOptions};
use crate::host::{Host, HostFacts, MemoryFacts};
use bson::raw::RawBsonRef;
use bson::{Document, RawDocument, RawDocumentBuf};
use parking_lot::RwLock;
use std::path::Path;
use std::sync::Arc;
use std::time::Instant;

/// The largest message (`maxMessageSizeBytes`): the driver fills a batch's documents up
/// to this less the command and `MESSAGE_OVERHEAD` (1,000 bytes).
pub use crate::limits::MESSAGE_SIZE_MAX;
/// The most documents one write command carries (`maxWriteBatchSize`).
pub use crate::limits::WRITE_BATCH_SIZE_MAX;
/// What the driver reserves of a message for its framing.
const MESSAGE_OVERHEAD: usize = 1_000;
/// The largest document (`maxBsonObjectSize`).
pub use crate::limits::BSON_OBJECT_SIZE_MAX as DOCUMENT_SIZE_MAX;

/// The host of an embedded engine: the real clock, no machine facts.
struct EmbeddedHost {
    started: Instant,
    facts: HostFacts,
}

impl Host for EmbeddedHost {
    fn now_millis(&self) -> i64 {
        std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| i64::try_from(d.as_millis()).unwrap_or(i64::MAX))
    }
    fn uptime_millis(&self) -> u64 {
        u64::try_from(self.started.elapsed().as_millis()).unwrap_or(u64::MAX)
    }
    fn memory(&self) -> MemoryFacts {
        MemoryFacts::default()
    }
    fn facts(&self) -> &HostFacts {
        &self.facts
    }
}

/// The options of an engine opened in this process.
pub(crate) fn embedded_options() -> EngineOptions {
    EngineOptions {
        host: Arc::new(EmbeddedHost {
            started: Instant::now(),
            facts: HostFacts::default(),
        }),
        startup: StartupOptions::default(),
        connections_max: 0,
        // As mongod's default `ttlMonitorSleepSecs`.
        ttl_interval: Some(std::time::Duration::from_secs(60)),
    }
}

/// How [`Client::open_with_options`] opens a database: the driver's `ClientOptions`,
/// for what applies in-process.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ClientOptions {
    /// Opens the database as the primary of a one-member replica set of this name (the
    /// driver's `repl_set_name`, a URI's `replicaSet=`): initiated on the file's first
    /// such open, as a `multiforadb --replSet NAME` server initiates it, so the oplog
    /// and retryable writes work in-process. The member's address is
    /// [`EMBEDDED_MEMBER_HOST`]. A file opened either way opens the other way too.
    pub repl_set_name: Option<String>,
}

/// The address an embedded replica-set member reports (hello's `me`): it listens on no
/// port; a server started on the file later advertises its own.
pub const EMBEDDED_MEMBER_HOST: &str = "localhost:27017";

/// A database file opened in this process (the driver's `Client`). Cheap to clone: clones
/// share the open file.
#[derive(Clone)]
pub struct Client {
    shared: Arc<Shared>,
}

/// What every clone of a [`Client`] shares: the engine until [`Client::close`] lets go
/// of it.
struct Shared {
    engine: RwLock<Option<Arc<Engine>>>,
}

impl std::fmt::Debug for Client {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Client").finish_non_exhaustive()
    }
}

impl Client {
    fn with_engine(engine: Engine) -> Client {
        Client {
            shared: Arc::new(Shared {
                engine: RwLock::new(Some(Arc::new(engine))),
            }),
        }
    }

    /// Opens (or creates) the database file at `path`, recovering it after a crash. The
    /// file is locked: a second opener, here or in another process, gets
    /// [`ErrorKind::Locked`].
    pub fn open(path: impl AsRef<Path>) -> Result<Client> {
        let engine =
            Engine::open(path.as_ref(), embedded_options()).map_err(|e| error::from_engine(&e))?;
        engine.log_open_warnings();
        Ok(Client::with_engine(engine))
    }

    /// [`Client::open`] with `options`: as a replica-set member when
    /// [`ClientOptions::repl_set_name`] names a set.
    pub fn open_with_options(path: impl AsRef<Path>, options: &ClientOptions) -> Result<Client> {
        let engine =
            Engine::open(path.as_ref(), embedded_options()).map_err(|e| error::from_engine(&e))?;
        engine.log_open_warnings();
        if let Some(name) = &options.repl_set_name {
            let member = crate::repl::Options::new(name, EMBEDDED_MEMBER_HOST);
            engine
                .start_replica_set(&member)
                .map_err(|e| error::from_engine(&e))?;
        }
        Ok(Client::with_engine(engine))
    }

    /// A database that lives in memory only.
    #[must_use]
    pub fn memory() -> Client {
        Client::with_engine(Engine::new(embedded_options()))
    }

    /// The engine underneath (to serve it over the network, or for raw commands);
    /// [`ErrorKind::Closed`] after [`Client::close`].
    pub fn engine(&self) -> Result<Arc<Engine>> {
        self.shared
            .engine
            .read()
            .clone()
            .ok_or_else(|| Error::new(ErrorKind::Closed))
    }

    /// Database `name`.
    #[must_use]
    pub fn database(&self, name: &str) -> Database {
        Database {
            client: self.clone(),
            name: Arc::from(name),
        }
    }

    /// The names of the databases that hold collections.
    pub fn list_database_names(&self) -> ListDatabaseNames<'_> {
        ListDatabaseNames::new(self)
    }

    /// Checkpoints and closes the file (afterwards it is one file) and releases it: every
    /// later call of any handle of this client fails with [`ErrorKind::Closed`], and the
    /// file can be opened again as soon as the calls already running have returned.
    /// Closing a closed client does nothing.
    pub fn close(&self) -> Result<()> {
        let engine = self.shared.engine.write().take();
        match engine {
            Some(engine) => engine.close().map_err(|e| error::from_engine(&e)),
            None => Ok(()),
        }
    }

    /// Runs `command` against `db`: the reply when `ok: 1`, its command error otherwise.
    pub(crate) fn command(&self, db: &str, command: &RawDocument) -> Result<RawDocumentBuf> {
        let engine = self.engine()?;
        let reply = engine.run_command(db, command, &ConnectionContext::default());
        if matches!(reply.get("ok"), Ok(Some(RawBsonRef::Double(ok))) if ok == 1.0) {
            return Ok(reply);
        }
        if engine.store().is_closed() {
            return Err(Error::new(ErrorKind::Closed));
        }
        Err(error::command_error(&decode_reply(&reply)?))
    }

    /// [`Client::command`] with the command and its reply as documents.
    pub(crate) fn command_document(&self, db: &str, command: &Document) -> Result<Document> {
        let reply = self.command(db, &encode(command)?)?;
        decode_reply(&reply)
    }
}

/// `document` as raw bytes; a document that cannot be encoded (a key with a NUL) is a
/// bson error.
pub(crate) fn encode(document: &Document) -> Result<RawDocumentBuf> {
    RawDocumentBuf::try_from(document).map_err(Error::from)
}

pub(crate) fn decode_reply(reply: &RawDocument) -> Result<Document> {
    Document::try_from(reply).map_err(|e| Error::invalid_response(e.to_string()))
}

/// A database of a [`Client`] (the driver's `Database`): a name and the shared file.
#[derive(Clone, Debug)]
pub struct Database {
    client: Client,
    name: Arc<str>,
}

impl Database {
    /// The database's name.
    #[must_use]
    pub fn name(&self) -> &str {
        &self.name
    }

    /// Collection `name`, whose documents are read and written as `T`
    /// (`Collection<Document>` for untyped access).
    #[must_use]
    pub fn collection<T: Send + Sync>(&self, name: &str) -> Collection<T> {
        Collection::new(self.clone(), name)
    }

    /// Creates collection `name` (NamespaceExists, 48, when it exists).
    pub fn create_collection(&self, name: impl Into<String>) -> CreateCollection<'_> {
        CreateCollection::new(self, name.into())
    }

    /// The names of the database's collections.
    pub fn list_collection_names(&self) -> ListCollectionNames<'_> {
        ListCollectionNames::new(self)
    }

    /// Drops the database and every collection in it.
    pub fn drop(&self) -> DropDatabase<'_> {
        DropDatabase::new(self)
    }

    /// Runs any command against this database; an `ok: 0` reply is the error.
    pub fn run_command(&self, command: Document) -> RunCommand<'_> {
        RunCommand::new(self, command)
    }

    pub(crate) fn client(&self) -> &Client {
        &self.client
    }

    pub(crate) fn command(&self, command: &Document) -> Result<Document> {
        self.client.command_document(&self.name, command)
    }
}

#[cfg(test)]
mod tests;
