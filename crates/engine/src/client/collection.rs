//! `Collection<T>` and its write, count and catalog builders (`insert_one`, `insert_many`,
//! `update_*`, `replace_one`, `delete_*`, `count_documents`, `estimated_document_count`,
//! `distinct`, `drop`), plus the database- and client-level builders, each ending in
//! `.run()` as the driver's do.

use super::error::{self, Error, ErrorKind, IndexedWriteError, InsertManyError, Result};
use super::results::{DeleteResult, InsertManyResult, InsertOneResult, UpdateResult};
use super::{Client, DOCUMENT_SIZE_MAX, Database, MESSAGE_OVERHEAD, MESSAGE_SIZE_MAX};
use super::{WRITE_BATCH_SIZE_MAX, decode_reply};
use bson::raw::cstr;
use bson::{Bson, Document, RawArrayBuf, RawDocumentBuf, doc, rawdoc};
use serde::Serialize;
use std::borrow::Borrow;
use std::collections::HashMap;
use std::marker::PhantomData;
use std::sync::Arc;

/// A collection whose documents are read and written as `T` (the driver's
/// `Collection<T>`). Cheap to clone.
pub struct Collection<T> {
    database: Database,
    name: Arc<str>,
    typed: PhantomData<fn() -> T>,
}

impl<T> Clone for Collection<T> {
    fn clone(&self) -> Self {
        Collection {
            database: self.database.clone(),
            name: Arc::clone(&self.name),
            typed: PhantomData,
        }
    }
}

impl<T> std::fmt::Debug for Collection<T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Collection({}.{})", self.database.name(), self.name)
    }
}

impl<T> Collection<T> {
    pub(crate) fn new(database: Database, name: &str) -> Collection<T> {
        Collection {
            database,
            name: Arc::from(name),
            typed: PhantomData,
        }
    }

    /// The same collection, its documents read and written as `U`.
    #[must_use]
    pub fn clone_with_type<U: Send + Sync>(&self) -> Collection<U> {
        Collection::new(self.database.clone(), &self.name)
    }

    /// The collection's name.
    #[must_use]
    pub fn name(&self) -> &str {
        &self.name
    }

    pub(crate) fn database(&self) -> &Database {
        &self.database
    }

    /// Deletes the first document matching `query`.
    pub fn delete_one(&self, query: Document) -> Delete<'_> {
        Delete::new(self.untyped(), query, 1)
    }

    /// Deletes every document matching `query`.
    pub fn delete_many(&self, query: Document) -> Delete<'_> {
        Delete::new(self.untyped(), query, 0)
    }

    /// Applies update operators (a document) or a pipeline (`Vec<Document>`) to every match.
    pub fn update_many(
        &self,
        query: Document,
        update: impl Into<UpdateModifications>,
    ) -> Update<'_> {
        Update::new(self.untyped(), query, update.into(), true)
    }

    /// Applies update operators or a pipeline to the first match.
    pub fn update_one(
        &self,
        query: Document,
        update: impl Into<UpdateModifications>,
    ) -> Update<'_> {
        Update::new(self.untyped(), query, update.into(), false)
    }

    /// Counts the documents matching `filter` (an aggregation, as the driver counts).
    pub fn count_documents(&self, filter: Document) -> CountDocuments<'_> {
        CountDocuments {
            collection: self.untyped(),
            filter,
            skip: None,
            limit: None,
        }
    }

    /// The collection's document count from its metadata (the `count` command).
    pub fn estimated_document_count(&self) -> EstimatedDocumentCount<'_> {
        EstimatedDocumentCount {
            collection: self.untyped(),
        }
    }

    /// The distinct values of `field_name` among the documents matching `filter`.
    pub fn distinct(&self, field_name: impl AsRef<str>, filter: Document) -> Distinct<'_> {
        Distinct {
            collection: self.untyped(),
            field_name: field_name.as_ref().to_owned(),
            filter,
        }
    }

    /// Drops the collection (a collection that does not exist is no error).
    pub fn drop(&self) -> DropCollection<'_> {
        DropCollection {
            collection: self.untyped(),
        }
    }

    /// The view every untyped builder holds.
    fn untyped(&self) -> Untyped<'_> {
        Untyped {
            database: &self.database,
            name: &self.name,
        }
    }
}

impl<T: Serialize + Send + Sync> Collection<T> {
    /// Inserts one document (an `_id` is generated when it has none).
    pub fn insert_one(&self, doc: impl Borrow<T>) -> InsertOne<'_> {
        InsertOne {
            collection: self.untyped(),
            document: serialize(doc.borrow()),
        }
    }

    /// Inserts documents, in batches as the driver splits them (ordered by default).
    pub fn insert_many(&self, docs: impl IntoIterator<Item = impl Borrow<T>>) -> InsertMany<'_> {
        InsertMany {
            collection: self.untyped(),
            documents: docs.into_iter().map(|d| serialize(d.borrow())).collect(),
            ordered: true,
        }
    }

    /// Replaces the first match with `replacement` (which may not hold update operators).
    pub fn replace_one(&self, query: Document, replacement: impl Borrow<T>) -> ReplaceOne<'_> {
        ReplaceOne {
            collection: self.untyped(),
            query,
            replacement: bson::serialize_to_document(replacement.borrow()).map_err(Error::from),
            upsert: false,
        }
    }
}

/// `value` as a BSON document.
pub(crate) fn serialize<T: Serialize>(value: &T) -> Result<RawDocumentBuf> {
    bson::serialize_to_raw_document_buf(value).map_err(Error::from)
}

/// What a builder needs of its collection, whatever its document type.
#[derive(Clone, Copy)]
pub(crate) struct Untyped<'a> {
    pub(crate) database: &'a Database,
    pub(crate) name: &'a str,
}

impl Untyped<'_> {
    fn write(&self, command: &Document) -> Result<Document> {
        let reply = self.database.command(command)?;
        match error::single_write_error(&reply) {
            Some(error) => Err(error),
            None => Ok(reply),
        }
    }
}

/// `document` with an `_id` (a new ObjectId placed first when it has none), and that `_id`.
pub(crate) fn with_id(document: RawDocumentBuf) -> Result<(Bson, RawDocumentBuf)> {
    if let Some(id) = document.get("_id").map_err(Error::from)? {
        let id = Bson::try_from(id).map_err(Error::from)?;
        return Ok((id, document));
    }
    let id = bson::oid::ObjectId::new();
    let mut with_id = rawdoc! {"_id": id};
    for element in &document {
        let (key, value) = element.map_err(Error::from)?;
        with_id.append(key, value);
    }
    Ok((Bson::ObjectId(id), with_id))
}

/// The driver's size check on each document it inserts.
pub(crate) fn check_size(document: &RawDocumentBuf) -> Result<()> {
    let size = document.as_bytes().len();
    if size > DOCUMENT_SIZE_MAX {
        return Err(Error::invalid_argument(format!(
            "insert document must be within {DOCUMENT_SIZE_MAX} bytes, but document provided \
             is {size} bytes"
        )));
    }
    Ok(())
}

/// Inserts one document; build with [`Collection::insert_one`].
#[must_use]
pub struct InsertOne<'a> {
    collection: Untyped<'a>,
    document: Result<RawDocumentBuf>,
}

impl InsertOne<'_> {
    /// Runs the insert.
    pub fn run(self) -> Result<InsertOneResult> {
        let (id, document) = with_id(self.document?)?;
        check_size(&document)?;
        let mut documents = RawArrayBuf::new();
        documents.push(document);
        let mut command = rawdoc! {"insert": self.collection.name, "ordered": true};
        command.append(cstr!("documents"), documents);
        let reply = self
            .collection
            .database
            .client()
            .command(self.collection.database.name(), &command)?;
        if let Some(error) = error::single_write_error(&decode_reply(&reply)?) {
            return Err(error);
        }
        Ok(InsertOneResult { inserted_id: id })
    }
}

/// Inserts documents; build with [`Collection::insert_many`].
#[must_use]
pub struct InsertMany<'a> {
    collection: Untyped<'a>,
    documents: Vec<Result<RawDocumentBuf>>,
    ordered: bool,
}

impl InsertMany<'_> {
    /// Whether to stop at the first failed document (the default) or insert the rest.
    pub fn ordered(mut self, value: bool) -> Self {
        self.ordered = value;
        self
    }

    /// Runs the inserts, batch by batch.
    pub fn run(self) -> Result<InsertManyResult> {
        if self.documents.is_empty() {
            return Err(Error::invalid_argument(
                "No documents provided to insert_many",
            ));
        }
        let mut documents = Vec::with_capacity(self.documents.len());
        for document in self.documents {
            documents.push(with_id(document?)?);
        }
        let head = rawdoc! {"insert": self.collection.name, "ordered": self.ordered};
        let sequence_max = MESSAGE_SIZE_MAX - MESSAGE_OVERHEAD - head.as_bytes().len();
        let mut inserted = HashMap::new();
        let mut failed: Vec<IndexedWriteError> = Vec::new();
        let mut start = 0;
        while start < documents.len() {
            let mut batch = RawArrayBuf::new();
            let mut bytes = 0;
            let mut end = start;
            for (_, document) in documents.iter().skip(start).take(WRITE_BATCH_SIZE_MAX) {
                check_size(document)?;
                bytes += document.as_bytes().len();
                if bytes > sequence_max {
                    break;
                }
                batch.push(document.as_ref());
                end += 1;
            }
            let mut command = head.clone();
            command.append(cstr!("documents"), batch);
            let reply = self
                .collection
                .database
                .client()
                .command(self.collection.database.name(), &command)?;
            let errors = error::write_errors(&decode_reply(&reply)?);
            for (index, (id, _)) in documents.iter().enumerate().take(end).skip(start) {
                if !errors.iter().any(|e| e.index + start == index)
                    && (!self.ordered || errors.first().is_none_or(|e| index < e.index + start))
                {
                    inserted.insert(index, id.clone());
                }
            }
            let stop = self.ordered && !errors.is_empty();
            failed.extend(errors.into_iter().map(|e| IndexedWriteError {
                index: e.index + start,
                ..e
            }));
            if stop {
                break;
            }
            start = end;
        }
        if failed.is_empty() {
            return Ok(InsertManyResult {
                inserted_ids: inserted,
            });
        }
        Err(Error::new(ErrorKind::InsertMany(InsertManyError {
            write_errors: Some(failed),
            inserted_ids: inserted,
        })))
    }
}

/// An update: operators (a document whose keys start with `$`) or a pipeline.
#[derive(Clone, Debug, PartialEq)]
#[non_exhaustive]
pub enum UpdateModifications {
    /// Update operators, e.g. `doc! {"$set": {"a": 1}}`.
    Document(Document),
    /// An aggregation pipeline of `$set`, `$unset`, `$replaceWith`, ... stages.
    Pipeline(Vec<Document>),
}

impl From<Document> for UpdateModifications {
    fn from(document: Document) -> Self {
        UpdateModifications::Document(document)
    }
}

impl From<Vec<Document>> for UpdateModifications {
    fn from(pipeline: Vec<Document>) -> Self {
        UpdateModifications::Pipeline(pipeline)
    }
}

impl UpdateModifications {
    /// The update as a command field, refused (as the driver refuses it) when a document
    /// is empty or holds anything but operators.
    pub(crate) fn checked(self) -> Result<Bson> {
        match self {
            UpdateModifications::Document(document) => {
                match document.keys().next() {
                    None => {
                        return Err(Error::invalid_argument("update document must not be empty"));
                    }
                    Some(key) if !key.starts_with('$') => {
                        return Err(Error::invalid_argument(
                            "update document must only contain update modifiers",
                        ));
                    }
                    Some(_) => {}
                }
                Ok(Bson::Document(document))
            }
            UpdateModifications::Pipeline(stages) => Ok(Bson::Array(
                stages.into_iter().map(Bson::Document).collect(),
            )),
        }
    }
}

/// The driver's check on a replacement: no update operators.
pub(crate) fn check_replacement(replacement: &Document) -> Result<()> {
    if replacement
        .keys()
        .next()
        .is_some_and(|key| key.starts_with('$'))
    {
        return Err(Error::invalid_argument(
            "replacement document must not contain update modifiers",
        ));
    }
    Ok(())
}

fn update_result(reply: &Document) -> UpdateResult {
    let upserted_id = reply
        .get_array("upserted")
        .ok()
        .and_then(|u| u.first())
        .and_then(Bson::as_document)
        .and_then(|u| u.get("_id").cloned());
    let count = |field: &str| u64::try_from(reply.get_i32(field).unwrap_or(0)).unwrap_or(0);
    UpdateResult {
        matched_count: if upserted_id.is_some() { 0 } else { count("n") },
        modified_count: count("nModified"),
        upserted_id,
    }
}

/// Updates documents; build with [`Collection::update_one`] or [`Collection::update_many`].
#[must_use]
pub struct Update<'a> {
    collection: Untyped<'a>,
    statement: Document,
    update: UpdateModifications,
    let_vars: Option<Document>,
}

impl<'a> Update<'a> {
    fn new(
        collection: Untyped<'a>,
        query: Document,
        update: UpdateModifications,
        multi: bool,
    ) -> Self {
        Update {
            collection,
            statement: doc! {"q": query, "multi": multi},
            update,
            let_vars: None,
        }
    }

    /// Inserts the document the filter and update describe when nothing matches.
    pub fn upsert(mut self, value: bool) -> Self {
        self.statement.insert("upsert", value);
        self
    }

    /// Filters naming the array elements `$[<identifier>]` updates.
    pub fn array_filters(mut self, value: impl IntoIterator<Item = Document>) -> Self {
        let filters: Vec<Bson> = value.into_iter().map(Bson::Document).collect();
        self.statement.insert("arrayFilters", filters);
        self
    }

    /// Variables the filter and update can read as `$$name`.
    pub fn let_vars(mut self, value: Document) -> Self {
        self.let_vars = Some(value);
        self
    }

    /// Runs the update.
    pub fn run(mut self) -> Result<UpdateResult> {
        self.statement.insert("u", self.update.checked()?);
        let mut command = doc! {
            "update": self.collection.name, "updates": [self.statement], "ordered": true,
        };
        if let Some(vars) = self.let_vars {
            command.insert("let", vars);
        }
        Ok(update_result(&self.collection.write(&command)?))
    }
}

/// Replaces a document; build with [`Collection::replace_one`].
#[must_use]
pub struct ReplaceOne<'a> {
    collection: Untyped<'a>,
    query: Document,
    replacement: Result<Document>,
    upsert: bool,
}

impl ReplaceOne<'_> {
    /// Inserts the replacement when nothing matches.
    pub fn upsert(mut self, value: bool) -> Self {
        self.upsert = value;
        self
    }

    /// Runs the replacement.
    pub fn run(self) -> Result<UpdateResult> {
        let replacement = self.replacement?;
        check_replacement(&replacement)?;
        let statement =
            doc! {"q": self.query, "u": replacement, "multi": false, "upsert": self.upsert};
        let command =
            doc! {"update": self.collection.name, "updates": [statement], "ordered": true};
        Ok(update_result(&self.collection.write(&command)?))
    }
}

/// Deletes documents; build with [`Collection::delete_one`] or [`Collection::delete_many`].
#[must_use]
pub struct Delete<'a> {
    collection: Untyped<'a>,
    statement: Document,
}

impl<'a> Delete<'a> {
    fn new(collection: Untyped<'a>, query: Document, limit: i32) -> Self {
        Delete {
            collection,
            statement: doc! {"q": query, "limit": limit},
        }
    }

    /// Runs the delete.
    pub fn run(self) -> Result<DeleteResult> {
        let command = doc! {
            "delete": self.collection.name, "deletes": [self.statement], "ordered": true,
        };
        let reply = self.collection.write(&command)?;
        Ok(DeleteResult {
            deleted_count: u64::try_from(reply.get_i32("n").unwrap_or(0)).unwrap_or(0),
        })
    }
}

/// A number in a reply, whichever numeric type it came as.
pub(crate) fn count_of(value: Option<&Bson>) -> u64 {
    let n = match value {
        Some(Bson::Int32(n)) => i64::from(*n),
        Some(Bson::Int64(n)) => *n,
        #[expect(clippy::cast_possible_truncation, reason = "counts are whole numbers")]
        Some(Bson::Double(n)) => *n as i64,
        _ => 0,
    };
    u64::try_from(n).unwrap_or(0)
}

/// Counts matching documents; build with [`Collection::count_documents`].
#[must_use]
pub struct CountDocuments<'a> {
    collection: Untyped<'a>,
    filter: Document,
    skip: Option<u64>,
    limit: Option<u64>,
}

impl CountDocuments<'_> {
    /// Skips the first `value` matches.
    pub fn skip(mut self, value: u64) -> Self {
        self.skip = Some(value);
        self
    }

    /// Counts at most `value` matches.
    pub fn limit(mut self, value: u64) -> Self {
        self.limit = Some(value);
        self
    }

    /// Runs the count.
    pub fn run(self) -> Result<u64> {
        let mut pipeline = vec![Bson::Document(doc! {"$match": self.filter})];
        for (stage, value) in [("$skip", self.skip), ("$limit", self.limit)] {
            if let Some(value) = value {
                let value = i64::try_from(value).map_err(|_| {
                    let name = &stage[1..];
                    Error::invalid_argument(format!("{name} exceeds range of i64: {value}"))
                })?;
                pipeline.push(Bson::Document(doc! {stage: value}));
            }
        }
        pipeline.push(Bson::Document(
            doc! {"$group": {"_id": 1, "n": {"$sum": 1}}},
        ));
        let command = doc! {"aggregate": self.collection.name, "pipeline": pipeline, "cursor": {}};
        let reply = self.collection.database.command(&command)?;
        let first = reply
            .get_document("cursor")
            .and_then(|c| c.get_array("firstBatch"))
            .map_err(|e| Error::invalid_response(e.to_string()))?
            .first()
            .and_then(Bson::as_document)
            .map(|d| count_of(d.get("n")));
        Ok(first.unwrap_or(0))
    }
}

/// The metadata count; build with [`Collection::estimated_document_count`].
#[must_use]
pub struct EstimatedDocumentCount<'a> {
    collection: Untyped<'a>,
}

impl EstimatedDocumentCount<'_> {
    /// Runs the count.
    pub fn run(self) -> Result<u64> {
        let reply = self
            .collection
            .database
            .command(&doc! {"count": self.collection.name})?;
        Ok(count_of(reply.get("n")))
    }
}

/// Distinct values; build with [`Collection::distinct`].
#[must_use]
pub struct Distinct<'a> {
    collection: Untyped<'a>,
    field_name: String,
    filter: Document,
}

impl Distinct<'_> {
    /// Runs the query.
    pub fn run(self) -> Result<Vec<Bson>> {
        let command = doc! {
            "distinct": self.collection.name, "key": self.field_name, "query": self.filter,
        };
        let reply = self.collection.database.command(&command)?;
        let values = reply
            .get_array("values")
            .map_err(|e| Error::invalid_response(e.to_string()))?;
        Ok(values.clone())
    }
}

/// Drops a collection; build with [`Collection::drop`].
#[must_use]
pub struct DropCollection<'a> {
    collection: Untyped<'a>,
}

impl DropCollection<'_> {
    /// Runs the drop.
    pub fn run(self) -> Result<()> {
        match self
            .collection
            .database
            .command(&doc! {"drop": self.collection.name})
        {
            Err(error) if is_namespace_not_found(&error) => Ok(()),
            other => other.map(|_| ()),
        }
    }
}

fn is_namespace_not_found(error: &Error) -> bool {
    matches!(&*error.kind, ErrorKind::Command(c) if c.code == 26)
}

/// Creates a collection; build with [`Database::create_collection`].
#[must_use]
pub struct CreateCollection<'a> {
    database: &'a Database,
    command: Document,
}

impl<'a> CreateCollection<'a> {
    pub(crate) fn new(database: &'a Database, name: String) -> Self {
        CreateCollection {
            database,
            command: doc! {"create": name},
        }
    }

    /// Runs the create.
    pub fn run(self) -> Result<()> {
        self.database.command(&self.command).map(|_| ())
    }
}

/// Lists collection names; build with [`Database::list_collection_names`].
#[must_use]
pub struct ListCollectionNames<'a> {
    database: &'a Database,
    filter: Option<Document>,
}

impl<'a> ListCollectionNames<'a> {
    pub(crate) fn new(database: &'a Database) -> Self {
        ListCollectionNames {
            database,
            filter: None,
        }
    }

    /// Lists only the collections matching `value` (on `name`, `type`, `options`, ...).
    pub fn filter(mut self, value: Document) -> Self {
        self.filter = Some(value);
        self
    }

    /// Runs the listing.
    pub fn run(self) -> Result<Vec<String>> {
        let name_only = self
            .filter
            .as_ref()
            .is_none_or(|f| f.keys().all(|k| k == "name"));
        let mut command = doc! {"listCollections": 1, "nameOnly": name_only};
        if let Some(filter) = self.filter {
            command.insert("filter", filter);
        }
        let cursor = super::find::Cursor::<Document>::start(
            self.database.clone(),
            &bson::RawDocumentBuf::try_from(&command).map_err(Error::from)?,
        )?;
        cursor
            .map(|entry| {
                let entry = entry?;
                entry
                    .get_str("name")
                    .map(str::to_owned)
                    .map_err(|e| Error::invalid_response(e.to_string()))
            })
            .collect()
    }
}

/// Drops a database; build with [`Database::drop`].
#[must_use]
pub struct DropDatabase<'a> {
    database: &'a Database,
}

impl<'a> DropDatabase<'a> {
    pub(crate) fn new(database: &'a Database) -> Self {
        DropDatabase { database }
    }

    /// Runs the drop.
    pub fn run(self) -> Result<()> {
        self.database.command(&doc! {"dropDatabase": 1}).map(|_| ())
    }
}

/// Runs a command; build with [`Database::run_command`].
#[must_use]
pub struct RunCommand<'a> {
    database: &'a Database,
    command: Document,
}

impl<'a> RunCommand<'a> {
    pub(crate) fn new(database: &'a Database, command: Document) -> Self {
        RunCommand { database, command }
    }

    /// Runs the command: its reply, or its error when `ok: 0`.
    pub fn run(self) -> Result<Document> {
        self.database.command(&self.command)
    }
}

/// Lists database names; build with [`Client::list_database_names`].
#[must_use]
pub struct ListDatabaseNames<'a> {
    client: &'a Client,
}

impl<'a> ListDatabaseNames<'a> {
    pub(crate) fn new(client: &'a Client) -> Self {
        ListDatabaseNames { client }
    }

    /// Runs the listing.
    pub fn run(self) -> Result<Vec<String>> {
        let reply = self
            .client
            .command_document("admin", &doc! {"listDatabases": 1, "nameOnly": true})?;
        let databases = reply
            .get_array("databases")
            .map_err(|e| Error::invalid_response(e.to_string()))?;
        Ok(databases
            .iter()
            .filter_map(Bson::as_document)
            .filter_map(|d| d.get_str("name").ok().map(str::to_owned))
            .collect())
    }
}
