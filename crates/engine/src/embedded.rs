//! The embedded API: a database file opened in-process, collections with insert, find,
//! update, delete, count and aggregate, and any command by document.
//!
//! Every call runs the same command the server would run for a driver (through
//! [`Engine::run_command`]), so the embedded and network faces cannot disagree.
//!
//! ```no_run
//! use bson::doc;
//! use engine::Database;
//!
//! let db = Database::open("app.mfdb")?;
//! let users = db.collection("users");
//! users.insert_one(doc! {"_id": 1, "name": "Ada"})?;
//! for user in users.find(doc! {"name": "Ada"}).sort(doc! {"_id": -1}).limit(10).run()? {
//!     println!("{}", user?);
//! }
//! db.close()?;
//! # Ok::<(), engine::DbError>(())
//! ```
//!
//! A [`Cursor`] moves through: open (first batch buffered) → more batches by `getMore`
//! as it is iterated → exhausted (server cursor id 0), or dropped early (`killCursors`).

use crate::engine::{ConnectionContext, Engine};
use bson::raw::RawBsonRef;
use bson::{Bson, Document, RawDocumentBuf, doc};
use std::collections::VecDeque;
use std::path::Path;
use std::sync::Arc;

/// The database every [`Database::collection`] call uses.
pub const DEFAULT_DATABASE: &str = "test";

/// A failed embedded call: MongoDB's code, code name and message, and for a write error
/// the failing statement and the fields mongod adds to it.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[error("{message} (code {code}, {code_name})")]
pub struct DbError {
    /// MongoDB's numeric code (11000 for a duplicate key).
    pub code: i32,
    /// MongoDB's code name.
    pub code_name: String,
    /// The message a driver would show.
    pub message: String,
    /// For a write error: the position of the failing statement in its batch.
    pub index: Option<usize>,
    /// For a write error: the fields besides `index`, `code` and `errmsg` (a duplicate
    /// key's `keyPattern` and `keyValue`, a validation failure's `errInfo`); boxed so
    /// results stay small.
    pub details: Option<Box<Document>>,
}

impl DbError {
    /// An error with a code, its name and a message, and no write details.
    pub fn new(code: i32, code_name: &str, message: impl Into<String>) -> DbError {
        DbError {
            code,
            code_name: code_name.into(),
            message: message.into(),
            index: None,
            details: None,
        }
    }
}

impl From<crate::Error> for DbError {
    fn from(error: crate::Error) -> DbError {
        let code = error.code();
        DbError {
            details: error.info().cloned().map(Box::new),
            ..DbError::new(code.code(), &code.name(), error.to_string())
        }
    }
}

fn encode(document: &Document) -> Result<RawDocumentBuf, DbError> {
    RawDocumentBuf::try_from(document).map_err(|e| DbError::new(22, "InvalidBSON", e.to_string()))
}

/// A call the official drivers refuse before sending anything, with their message.
/// The drivers' error has no server code; BadValue (2) is the server's for the same.
fn invalid_argument(message: &str) -> DbError {
    DbError::new(2, "BadValue", message)
}

/// An update must be operators (its first key starts with `$`, as the drivers check)
/// or a pipeline: a plain document would silently replace the match.
fn operators_only(update: Bson) -> Result<Bson, DbError> {
    if let Bson::Document(document) = &update {
        match document.keys().next() {
            None => return Err(invalid_argument("update document must not be empty")),
            Some(key) if !key.starts_with('$') => {
                return Err(invalid_argument(
                    "update document must only contain update modifiers",
                ));
            }
            Some(_) => {}
        }
    }
    Ok(update)
}

fn internal(error: impl std::fmt::Display) -> DbError {
    DbError::new(1, "InternalError", error.to_string())
}

/// The error of an `ok: 0` reply or of one `writeErrors` entry. Write errors carry no
/// `codeName` on the wire (as mongod sends them), so the name comes from the code.
fn reply_error(reply: &Document) -> DbError {
    let code = reply.get_i32("code").unwrap_or(8);
    let code_name = match reply.get_str("codeName") {
        Ok(name) => name.to_owned(),
        Err(_) => crate::error::code_name(code).into_owned(),
    };
    let index = reply
        .get_i32("index")
        .ok()
        .and_then(|i| usize::try_from(i).ok());
    let details: Document = reply
        .iter()
        .filter(|(key, _)| {
            !matches!(
                key.as_str(),
                "ok" | "code" | "codeName" | "errmsg" | "index" | "$clusterTime" | "operationTime"
            )
        })
        .map(|(key, value)| (key.clone(), value.clone()))
        .collect();
    DbError {
        index,
        details: (!details.is_empty()).then(|| Box::new(details)),
        ..DbError::new(
            code,
            &code_name,
            reply.get_str("errmsg").unwrap_or("command failed"),
        )
    }
}

/// A database file opened in this process.
pub struct Database {
    engine: Arc<Engine>,
}

impl Database {
    /// Opens (or creates) the database file at `path`, recovering it after a crash.
    pub fn open(path: impl AsRef<Path>) -> Result<Database, DbError> {
        let engine = Engine::open(path.as_ref(), crate::client::embedded_options())?;
        Ok(Database {
            engine: Arc::new(engine),
        })
    }

    /// A database that lives in memory only.
    #[must_use]
    pub fn memory() -> Database {
        Database {
            engine: Arc::new(Engine::new(crate::client::embedded_options())),
        }
    }

    /// The engine underneath (for `run_command` with raw documents, or to serve it).
    #[must_use]
    pub fn engine(&self) -> &Arc<Engine> {
        &self.engine
    }

    /// Collection `name` of the default database (`test`).
    #[must_use]
    pub fn collection(&self, name: &str) -> Collection<'_> {
        self.collection_in(DEFAULT_DATABASE, name)
    }

    /// Collection `name` of database `db`.
    #[must_use]
    pub fn collection_in(&self, db: &str, name: &str) -> Collection<'_> {
        Collection {
            database: self,
            db: db.to_owned(),
            name: name.to_owned(),
        }
    }

    /// Runs any command against database `db`; an `ok: 0` reply becomes the error.
    pub fn run_command(&self, db: &str, command: Document) -> Result<Document, DbError> {
        let reply = self.run_raw(db, &command)?;
        Document::try_from(&reply).map_err(internal)
    }

    /// [`Database::run_command`] without decoding the reply (cursors decode their batch
    /// one document at a time).
    fn run_raw(&self, db: &str, command: &Document) -> Result<RawDocumentBuf, DbError> {
        let raw = encode(command)?;
        let reply = self
            .engine
            .run_command(db, &raw, &ConnectionContext::default());
        let ok = match reply.get("ok") {
            Ok(Some(RawBsonRef::Double(ok))) => ok == 1.0,
            _ => false,
        };
        if !ok {
            let reply = Document::try_from(&reply).map_err(internal)?;
            return Err(reply_error(&reply));
        }
        Ok(reply)
    }

    /// Checkpoints and closes the file: afterwards it is one file, and calls fail.
    pub fn close(&self) -> Result<(), DbError> {
        Ok(self.engine.close()?)
    }
}

/// What an update did.
#[derive(Debug, Clone, PartialEq)]
pub struct UpdateResult {
    /// Documents the filter matched.
    pub matched: u64,
    /// Documents actually changed.
    pub modified: u64,
    /// The `_id` of the document an upsert inserted.
    pub upserted_id: Option<Bson>,
}

/// A collection handle (cheap; holds only names).
pub struct Collection<'d> {
    database: &'d Database,
    db: String,
    name: String,
}

/// `document` with an `_id` (a new ObjectId, placed first, when it has none), and that `_id`.
fn with_id(document: Document) -> (Bson, Document) {
    if let Some(id) = document.get("_id") {
        return (id.clone(), document);
    }
    let id = Bson::ObjectId(bson::oid::ObjectId::new());
    let mut with_id = doc! {"_id": id.clone()};
    with_id.extend(document);
    (id, with_id)
}

fn first_write_error(reply: &Document) -> Option<DbError> {
    let errors = reply.get_array("writeErrors").ok()?;
    let first = errors.first()?.as_document()?;
    Some(reply_error(first))
}

impl<'d> Collection<'d> {
    fn run(&self, command: Document) -> Result<Document, DbError> {
        let reply = self.database.run_command(&self.db, command)?;
        match first_write_error(&reply) {
            Some(error) => Err(error),
            None => Ok(reply),
        }
    }

    /// Inserts one document (an `_id` is generated when missing); returns its `_id`.
    pub fn insert_one(&self, document: Document) -> Result<Bson, DbError> {
        let (id, document) = with_id(document);
        self.run(doc! {"insert": &self.name, "documents": [document]})?;
        Ok(id)
    }

    /// Inserts many documents in one durable batch (ordered); returns their `_id`s.
    pub fn insert_many(
        &self,
        documents: impl IntoIterator<Item = Document>,
    ) -> Result<Vec<Bson>, DbError> {
        let mut ids = Vec::new();
        let documents: Vec<Bson> = documents
            .into_iter()
            .map(|document| {
                let (id, document) = with_id(document);
                ids.push(id);
                Bson::Document(document)
            })
            .collect();
        self.run(doc! {"insert": &self.name, "documents": documents})?;
        Ok(ids)
    }

    /// A query; set options on the returned [`Find`] and call [`Find::run`].
    #[must_use]
    pub fn find(&self, filter: Document) -> Find<'_, 'd> {
        Find {
            collection: self,
            command: doc! {"find": &self.name, "filter": filter},
        }
    }

    /// The first document matching `filter`.
    pub fn find_one(&self, filter: Document) -> Result<Option<Document>, DbError> {
        // An `_id` equality skips the command and its cursor (same checks, same
        // lookup, same re-check of the filter; see `command::point`).
        let raw = encode(&filter)?;
        let engine = &self.database.engine;
        if let Some(found) = crate::command::point::find_by_id(engine, &self.db, &self.name, &raw)?
        {
            engine.stats().command_ran();
            return found
                .map(|doc| Document::try_from(&doc).map_err(internal))
                .transpose();
        }
        let mut find = self.find(filter).limit(1);
        find.command.insert("singleBatch", true);
        find.run()?.next().transpose()
    }

    fn update(
        &self,
        filter: Document,
        update: Bson,
        multi: bool,
        upsert: bool,
    ) -> Result<UpdateResult, DbError> {
        let statement = doc! {"q": filter, "u": update, "multi": multi, "upsert": upsert};
        let reply = self.run(doc! {"update": &self.name, "updates": [statement]})?;
        let upserted_id = reply
            .get_array("upserted")
            .ok()
            .and_then(|u| u.first())
            .and_then(Bson::as_document)
            .and_then(|u| u.get("_id").cloned());
        let n = reply.get_i32("n").map_or(0, i64::from);
        let matched = u64::try_from(n).unwrap_or(0) - u64::from(upserted_id.is_some());
        Ok(UpdateResult {
            matched,
            modified: u64::try_from(reply.get_i32("nModified").unwrap_or(0)).unwrap_or(0),
            upserted_id,
        })
    }

    /// Applies update operators (or a pipeline as `Bson::Array`) to the first match.
    /// A document without operators is refused, as the drivers refuse it (use
    /// [`Collection::replace_one`] to replace).
    pub fn update_one(
        &self,
        filter: Document,
        update: impl Into<Bson>,
    ) -> Result<UpdateResult, DbError> {
        let update = operators_only(update.into())?;
        self.update(filter, update, false, false)
    }

    /// Applies update operators (or a pipeline) to every match.
    pub fn update_many(
        &self,
        filter: Document,
        update: impl Into<Bson>,
    ) -> Result<UpdateResult, DbError> {
        let update = operators_only(update.into())?;
        self.update(filter, update, true, false)
    }

    /// Updates the first match, or inserts the document the filter and update describe.
    pub fn upsert_one(
        &self,
        filter: Document,
        update: impl Into<Bson>,
    ) -> Result<UpdateResult, DbError> {
        let update = operators_only(update.into())?;
        self.update(filter, update, false, true)
    }

    /// Replaces the first match with `replacement`, which may not hold update operators.
    pub fn replace_one(
        &self,
        filter: Document,
        replacement: Document,
    ) -> Result<UpdateResult, DbError> {
        if replacement
            .keys()
            .next()
            .is_some_and(|key| key.starts_with('$'))
        {
            return Err(invalid_argument(
                "replacement document must not contain update modifiers",
            ));
        }
        self.update(filter, Bson::Document(replacement), false, false)
    }

    fn delete(&self, filter: Document, limit: i32) -> Result<u64, DbError> {
        let statement = doc! {"q": filter, "limit": limit};
        let reply = self.run(doc! {"delete": &self.name, "deletes": [statement]})?;
        Ok(u64::try_from(reply.get_i32("n").unwrap_or(0)).unwrap_or(0))
    }

    /// Deletes the first match; returns how many were deleted (0 or 1).
    pub fn delete_one(&self, filter: Document) -> Result<u64, DbError> {
        self.delete(filter, 1)
    }

    /// Deletes every match; returns how many.
    pub fn delete_many(&self, filter: Document) -> Result<u64, DbError> {
        self.delete(filter, 0)
    }

    /// Documents matching `filter`.
    pub fn count_documents(&self, filter: Document) -> Result<u64, DbError> {
        let reply = self.run(doc! {"count": &self.name, "query": filter})?;
        let n = match reply.get("n") {
            Some(Bson::Int32(n)) => i64::from(*n),
            Some(Bson::Int64(n)) => *n,
            Some(Bson::Double(n)) => *n as i64,
            _ => 0,
        };
        Ok(u64::try_from(n).unwrap_or(0))
    }

    /// Runs an aggregation pipeline.
    pub fn aggregate(
        &self,
        pipeline: impl IntoIterator<Item = Document>,
    ) -> Result<Cursor<'d>, DbError> {
        let pipeline: Vec<Bson> = pipeline.into_iter().map(Bson::Document).collect();
        let command = doc! {"aggregate": &self.name, "pipeline": pipeline, "cursor": {}};
        Cursor::start(self.database, &self.db, command)
    }

    /// Drops the collection.
    pub fn drop(&self) -> Result<(), DbError> {
        self.run(doc! {"drop": &self.name}).map(|_| ())
    }
}

/// A query being built: `sort`, `skip`, `limit`, `projection`, `batch_size`, then `run`.
pub struct Find<'c, 'd> {
    collection: &'c Collection<'d>,
    command: Document,
}

impl<'d> Find<'_, 'd> {
    /// Sort order, e.g. `doc! {"age": -1}`.
    #[must_use]
    pub fn sort(mut self, sort: Document) -> Self {
        self.command.insert("sort", sort);
        self
    }

    /// Skips the first `n` results.
    #[must_use]
    pub fn skip(mut self, n: u64) -> Self {
        self.command
            .insert("skip", i64::try_from(n).unwrap_or(i64::MAX));
        self
    }

    /// Returns at most `n` results.
    #[must_use]
    pub fn limit(mut self, n: u64) -> Self {
        self.command
            .insert("limit", i64::try_from(n).unwrap_or(i64::MAX));
        self
    }

    /// Shapes each result, e.g. `doc! {"name": 1, "_id": 0}`.
    #[must_use]
    pub fn projection(mut self, projection: Document) -> Self {
        self.command.insert("projection", projection);
        self
    }

    /// Documents fetched per batch.
    #[must_use]
    pub fn batch_size(mut self, n: u32) -> Self {
        self.command.insert("batchSize", i64::from(n));
        self
    }

    /// Runs the query; the cursor fetches further batches as it is iterated.
    pub fn run(self) -> Result<Cursor<'d>, DbError> {
        Cursor::start(self.collection.database, &self.collection.db, self.command)
    }
}

/// Query results, fetched batch by batch.
pub struct Cursor<'d> {
    database: &'d Database,
    db: String,
    collection: String,
    id: i64,
    batch: VecDeque<Document>,
}

impl<'d> Cursor<'d> {
    fn start(database: &'d Database, db: &str, command: Document) -> Result<Cursor<'d>, DbError> {
        let reply = database.run_raw(db, &command)?;
        let mut cursor = Cursor {
            database,
            db: db.to_owned(),
            collection: String::new(),
            id: 0,
            batch: VecDeque::new(),
        };
        cursor.absorb(reply, "firstBatch")?;
        Ok(cursor)
    }

    fn absorb(&mut self, reply: RawDocumentBuf, field: &str) -> Result<(), DbError> {
        let malformed = || internal("reply without a cursor");
        let cursor = match reply.get("cursor") {
            Ok(Some(RawBsonRef::Document(cursor))) => cursor,
            _ => return Err(malformed()),
        };
        self.id = match cursor.get("id") {
            Ok(Some(RawBsonRef::Int64(id))) => id,
            _ => return Err(malformed()),
        };
        if let Ok(Some(RawBsonRef::String(ns))) = cursor.get("ns") {
            self.collection = ns.split_once('.').map_or(ns, |(_, c)| c).to_owned();
        }
        let Ok(Some(RawBsonRef::Array(batch))) = cursor.get(field) else {
            return Err(malformed());
        };
        for element in batch {
            self.batch.push_back(match element.map_err(internal)? {
                RawBsonRef::Document(doc) => Document::try_from(doc).map_err(internal)?,
                other => {
                    let message = format!("cursor returned a non-document: {other:?}");
                    return Err(internal(message));
                }
            });
        }
        Ok(())
    }

    fn more(&mut self) -> Result<(), DbError> {
        let command = doc! {"getMore": self.id, "collection": &self.collection};
        let reply = self.database.run_raw(&self.db, &command)?;
        self.absorb(reply, "nextBatch")
    }
}

impl Iterator for Cursor<'_> {
    type Item = Result<Document, DbError>;

    fn next(&mut self) -> Option<Self::Item> {
        while self.batch.is_empty() && self.id != 0 {
            if let Err(error) = self.more() {
                self.id = 0;
                return Some(Err(error));
            }
        }
        self.batch.pop_front().map(Ok)
    }
}

impl Drop for Cursor<'_> {
    fn drop(&mut self) {
        if self.id != 0 {
            let command = doc! {"killCursors": &self.collection, "cursors": [self.id]};
            let _ = self.database.run_command(&self.db, command);
        }
    }
}
