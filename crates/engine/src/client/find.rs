//! The reading builders (`find`, `find_one`, `aggregate`, `find_one_and_*`) and
//! [`Cursor<T>`], which fetches batches by `getMore` as it is iterated and decodes each
//! document into `T` as it is taken.

use super::collection::{Collection, UpdateModifications, check_replacement};
use super::error::{Error, Result};
use super::{Database, encode};
use bson::raw::RawBsonRef;
use bson::{Bson, Document, RawDocument, RawDocumentBuf, doc};
use serde::Serialize;
use serde::de::DeserializeOwned;
use std::borrow::Borrow;
use std::collections::VecDeque;
use std::marker::PhantomData;
use std::time::Duration;

impl<T: Send + Sync> Collection<T> {
    /// A query; set options on the returned [`Find`] and call [`Find::run`].
    pub fn find(&self, filter: Document) -> Find<'_, T> {
        Find {
            collection: self,
            command: doc! {"find": self.name(), "filter": filter},
        }
    }

    /// Runs an aggregation pipeline; its results are documents unless
    /// [`Aggregate::with_type`] says otherwise.
    pub fn aggregate(&self, pipeline: impl IntoIterator<Item = Document>) -> Aggregate<'_> {
        let pipeline: Vec<Bson> = pipeline.into_iter().map(Bson::Document).collect();
        Aggregate {
            database: self.database(),
            command: doc! {"aggregate": self.name(), "pipeline": pipeline},
            cursor: Document::new(),
            typed: PhantomData,
        }
    }
}

impl<T: DeserializeOwned + Send + Sync> Collection<T> {
    /// The first document matching `filter`.
    pub fn find_one(&self, filter: Document) -> FindOne<'_, T> {
        FindOne {
            collection: self,
            filter,
            options: Document::new(),
        }
    }

    /// Deletes the first match and returns it.
    pub fn find_one_and_delete(&self, filter: Document) -> FindOneAndDelete<'_, T> {
        FindOneAndDelete {
            modify: Modify::new(self, filter, Ok(doc! {"remove": true})),
        }
    }

    /// Updates the first match and returns it, as it was before unless
    /// [`FindOneAndUpdate::return_document`] asks for [`ReturnDocument::After`].
    pub fn find_one_and_update(
        &self,
        filter: Document,
        update: impl Into<UpdateModifications>,
    ) -> FindOneAndUpdate<'_, T> {
        let update = update.into().checked().map(|u| doc! {"update": u});
        FindOneAndUpdate {
            modify: Modify::new(self, filter, update),
        }
    }
}

impl<T: Serialize + DeserializeOwned + Send + Sync> Collection<T> {
    /// Replaces the first match and returns it (before the replacement, by default).
    pub fn find_one_and_replace(
        &self,
        filter: Document,
        replacement: impl Borrow<T>,
    ) -> FindOneAndReplace<'_, T> {
        let replacement = bson::serialize_to_document(replacement.borrow())
            .map_err(Error::from)
            .and_then(|r| check_replacement(&r).map(|()| doc! {"update": r}));
        FindOneAndReplace {
            modify: Modify::new(self, filter, replacement),
        }
    }
}

/// A query being built; build with [`Collection::find`].
#[must_use]
pub struct Find<'a, T> {
    collection: &'a Collection<T>,
    command: Document,
}

impl<T: Send + Sync> Find<'_, T> {
    /// Sort order, e.g. `doc! {"age": -1}`.
    pub fn sort(mut self, value: Document) -> Self {
        self.command.insert("sort", value);
        self
    }

    /// Skips the first `value` results.
    pub fn skip(mut self, value: u64) -> Self {
        self.command
            .insert("skip", i64::try_from(value).unwrap_or(i64::MAX));
        self
    }

    /// Returns at most `value` results; a negative limit returns at most `-value` in one
    /// batch and closes the cursor, as the driver reads it.
    pub fn limit(mut self, value: i64) -> Self {
        if value < 0 {
            self.command.insert("singleBatch", true);
        }
        self.command.insert("limit", value.saturating_abs());
        self
    }

    /// Shapes each result, e.g. `doc! {"name": 1, "_id": 0}`.
    pub fn projection(mut self, value: Document) -> Self {
        self.command.insert("projection", value);
        self
    }

    /// Documents fetched per batch.
    pub fn batch_size(mut self, value: u32) -> Self {
        self.command.insert("batchSize", i64::from(value));
        self
    }

    /// Variables the filter can read as `$$name`.
    pub fn let_vars(mut self, value: Document) -> Self {
        self.command.insert("let", value);
        self
    }

    /// A comment recorded with the operation.
    pub fn comment(mut self, value: impl Into<Bson>) -> Self {
        self.command.insert("comment", value.into());
        self
    }

    /// The longest the query may run.
    pub fn max_time(mut self, value: Duration) -> Self {
        self.command.insert("maxTimeMS", duration_ms(value));
        self
    }

    /// Runs the query; the cursor fetches further batches as it is iterated.
    pub fn run(self) -> Result<Cursor<T>> {
        Cursor::start(self.collection.database().clone(), &encode(&self.command)?)
    }
}

fn duration_ms(value: Duration) -> i64 {
    i64::try_from(value.as_millis()).unwrap_or(i64::MAX)
}

/// A query for one document; build with [`Collection::find_one`].
#[must_use]
pub struct FindOne<'a, T> {
    collection: &'a Collection<T>,
    filter: Document,
    options: Document,
}

impl<T: DeserializeOwned + Send + Sync> FindOne<'_, T> {
    /// Which match comes first, e.g. `doc! {"age": -1}`.
    pub fn sort(mut self, value: Document) -> Self {
        self.options.insert("sort", value);
        self
    }

    /// Skips the first `value` matches.
    pub fn skip(mut self, value: u64) -> Self {
        self.options
            .insert("skip", i64::try_from(value).unwrap_or(i64::MAX));
        self
    }

    /// Shapes the result.
    pub fn projection(mut self, value: Document) -> Self {
        self.options.insert("projection", value);
        self
    }

    /// Runs the query.
    pub fn run(self) -> Result<Option<T>> {
        let database = self.collection.database();
        if self.options.is_empty() {
            // An `_id` equality skips the command and its cursor (the same checks, lookup
            // and re-check of the filter; see `command::point`).
            let filter = encode(&self.filter)?;
            let engine = database.client().engine()?;
            let found = crate::command::point::find_by_id(
                &engine,
                database.name(),
                self.collection.name(),
                &filter,
            );
            // On an error the find command below reports the same one, in its shape.
            if let Ok(Some(found)) = found {
                engine.stats().request_ran();
                engine.stats().add(crate::stats::Counter::OpQuery, 1);
                engine
                    .stats()
                    .add(crate::stats::Counter::DocumentReturned, 1);
                return found.map(|d| decode(&d)).transpose();
            }
        }
        let mut command = doc! {
            "find": self.collection.name(), "filter": self.filter, "limit": 1_i64,
            "singleBatch": true,
        };
        command.extend(self.options);
        let mut cursor = Cursor::<T>::start(database.clone(), &encode(&command)?)?;
        cursor.next().transpose()
    }
}

/// A stored document decoded as `T`.
fn decode<T: DeserializeOwned>(document: &RawDocument) -> Result<T> {
    bson::deserialize_from_slice(document.as_bytes()).map_err(Error::from)
}

/// An aggregation being built; build with [`Collection::aggregate`].
#[must_use]
pub struct Aggregate<'a, T = Document> {
    database: &'a Database,
    command: Document,
    cursor: Document,
    typed: PhantomData<fn() -> T>,
}

impl<'a, T> Aggregate<'a, T> {
    /// The same aggregation, its results decoded as `U`.
    pub fn with_type<U>(self) -> Aggregate<'a, U> {
        Aggregate {
            database: self.database,
            command: self.command,
            cursor: self.cursor,
            typed: PhantomData,
        }
    }

    /// Documents fetched per batch.
    pub fn batch_size(mut self, value: u32) -> Self {
        self.cursor.insert("batchSize", i64::from(value));
        self
    }

    /// Variables the pipeline can read as `$$name`.
    pub fn let_vars(mut self, value: Document) -> Self {
        self.command.insert("let", value);
        self
    }

    /// Allows stages to spill to disk (accepted; this engine's limits are its own).
    pub fn allow_disk_use(mut self, value: bool) -> Self {
        self.command.insert("allowDiskUse", value);
        self
    }

    /// A comment recorded with the operation.
    pub fn comment(mut self, value: impl Into<Bson>) -> Self {
        self.command.insert("comment", value.into());
        self
    }

    /// The longest the aggregation may run.
    pub fn max_time(mut self, value: Duration) -> Self {
        self.command.insert("maxTimeMS", duration_ms(value));
        self
    }

    /// Runs the aggregation.
    pub fn run(mut self) -> Result<Cursor<T>> {
        self.command.insert("cursor", self.cursor);
        Cursor::start(self.database.clone(), &encode(&self.command)?)
    }
}

/// Which version of the document a `find_one_and_*` returns.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum ReturnDocument {
    /// The document after the change.
    After,
    /// The document before the change (the default).
    Before,
}

/// The findAndModify command the three `find_one_and_*` builders share.
struct Modify<'a, T> {
    collection: &'a Collection<T>,
    command: Result<Document>,
}

impl<'a, T: DeserializeOwned + Send + Sync> Modify<'a, T> {
    fn new(collection: &'a Collection<T>, filter: Document, change: Result<Document>) -> Self {
        let command = change.map(|change| {
            let mut command = doc! {"findAndModify": collection.name(), "query": filter};
            command.extend(change);
            command
        });
        Modify {
            collection,
            command,
        }
    }

    fn set(&mut self, key: &str, value: impl Into<Bson>) {
        if let Ok(command) = &mut self.command {
            command.insert(key, value.into());
        }
    }

    fn run(self) -> Result<Option<T>> {
        let reply = self.collection.database().command(&self.command?)?;
        match reply.get("value") {
            Some(Bson::Document(document)) => bson::deserialize_from_document(document.clone())
                .map(Some)
                .map_err(Error::from),
            _ => Ok(None),
        }
    }
}

macro_rules! modify_setters {
    ($builder:ident) => {
        impl<T: DeserializeOwned + Send + Sync> $builder<'_, T> {
            /// Which match is changed when several match, e.g. `doc! {"age": -1}`.
            pub fn sort(mut self, value: Document) -> Self {
                self.modify.set("sort", value);
                self
            }

            /// Shapes the returned document.
            pub fn projection(mut self, value: Document) -> Self {
                self.modify.set("fields", value);
                self
            }

            /// Variables the filter and change can read as `$$name`.
            pub fn let_vars(mut self, value: Document) -> Self {
                self.modify.set("let", value);
                self
            }

            /// Runs the command: the document, or `None` when nothing matched.
            pub fn run(self) -> Result<Option<T>> {
                self.modify.run()
            }
        }
    };
}

/// Deletes and returns a document; build with [`Collection::find_one_and_delete`].
#[must_use]
pub struct FindOneAndDelete<'a, T> {
    modify: Modify<'a, T>,
}

/// Updates and returns a document; build with [`Collection::find_one_and_update`].
#[must_use]
pub struct FindOneAndUpdate<'a, T> {
    modify: Modify<'a, T>,
}

/// Replaces and returns a document; build with [`Collection::find_one_and_replace`].
#[must_use]
pub struct FindOneAndReplace<'a, T> {
    modify: Modify<'a, T>,
}

modify_setters!(FindOneAndDelete);
modify_setters!(FindOneAndUpdate);
modify_setters!(FindOneAndReplace);

macro_rules! change_setters {
    ($builder:ident) => {
        impl<T: DeserializeOwned + Send + Sync> $builder<'_, T> {
            /// Whether to return the document before (the default) or after the change.
            pub fn return_document(mut self, value: ReturnDocument) -> Self {
                self.modify.set("new", value == ReturnDocument::After);
                self
            }

            /// Inserts a document when nothing matches.
            pub fn upsert(mut self, value: bool) -> Self {
                self.modify.set("upsert", value);
                self
            }
        }
    };
}

change_setters!(FindOneAndUpdate);
change_setters!(FindOneAndReplace);

impl<T: DeserializeOwned + Send + Sync> FindOneAndUpdate<'_, T> {
    /// Filters naming the array elements `$[<identifier>]` updates.
    pub fn array_filters(mut self, value: impl IntoIterator<Item = Document>) -> Self {
        let filters: Vec<Bson> = value.into_iter().map(Bson::Document).collect();
        self.modify.set("arrayFilters", filters);
        self
    }
}

/// Results of a query or aggregation, fetched batch by batch and decoded as `T`.
pub struct Cursor<T> {
    database: Database,
    collection: String,
    id: i64,
    batch: VecDeque<RawDocumentBuf>,
    typed: PhantomData<fn() -> T>,
}

impl<T> std::fmt::Debug for Cursor<T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Cursor")
            .field("id", &self.id)
            .field("buffered", &self.batch.len())
            .finish_non_exhaustive()
    }
}

impl<T> Cursor<T> {
    /// Runs a cursor command (find, aggregate, listCollections) and buffers its first batch.
    pub(crate) fn start(database: Database, command: &RawDocument) -> Result<Cursor<T>> {
        let reply = database.client().command(database.name(), command)?;
        let mut cursor = Cursor {
            database,
            collection: String::new(),
            id: 0,
            batch: VecDeque::new(),
            typed: PhantomData,
        };
        cursor.absorb(&reply, "firstBatch")?;
        Ok(cursor)
    }

    fn absorb(&mut self, reply: &RawDocument, field: &str) -> Result<()> {
        let malformed = || Error::invalid_response("reply without a cursor");
        let Ok(Some(RawBsonRef::Document(cursor))) = reply.get("cursor") else {
            return Err(malformed());
        };
        let Ok(Some(RawBsonRef::Int64(id))) = cursor.get("id") else {
            return Err(malformed());
        };
        self.id = id;
        if let Ok(Some(RawBsonRef::String(ns))) = cursor.get("ns") {
            self.collection = ns.split_once('.').map_or(ns, |(_, c)| c).to_owned();
        }
        let Ok(Some(RawBsonRef::Array(batch))) = cursor.get(field) else {
            return Err(malformed());
        };
        for element in batch {
            match element.map_err(|e| Error::invalid_response(e.to_string()))? {
                RawBsonRef::Document(document) => self.batch.push_back(document.to_owned()),
                other => {
                    let message = format!("cursor returned a non-document: {other:?}");
                    return Err(Error::invalid_response(message));
                }
            }
        }
        Ok(())
    }

    fn more(&mut self) -> Result<()> {
        let command = doc! {"getMore": self.id, "collection": &self.collection};
        let reply = self
            .database
            .client()
            .command(self.database.name(), &encode(&command)?)?;
        self.absorb(&reply, "nextBatch")
    }
}

impl<T: DeserializeOwned> Iterator for Cursor<T> {
    type Item = Result<T>;

    fn next(&mut self) -> Option<Self::Item> {
        while self.batch.is_empty() && self.id != 0 {
            if let Err(error) = self.more() {
                self.id = 0;
                return Some(Err(error));
            }
        }
        self.batch.pop_front().map(|document| decode(&document))
    }
}

impl<T> Drop for Cursor<T> {
    fn drop(&mut self) {
        if self.id != 0 {
            let command = doc! {"killCursors": &self.collection, "cursors": [self.id]};
            // Best effort, as a driver's: the engine reaps idle cursors anyway.
            let _ = self.database.command(&command);
        }
    }
}
