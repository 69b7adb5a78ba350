//! `Client::bulk_write`: the `mongodb` crate's (3.x) bulk write over several namespaces
//! (`WriteModel::{InsertOne, UpdateOne, UpdateMany, ReplaceOne, DeleteOne, DeleteMany}`, each
//! carrying its [`Namespace`]), run as drivers ran bulk writes before MongoDB 8.0's
//! `bulkWrite` command: consecutive models of one kind and namespace go as one `insert`,
//! `update` or `delete` command, split by `maxWriteBatchSize` and the message size.
//!
//! Invariants:
//! - Every model is checked as the driver checks it (updates are operators or a pipeline,
//!   replacements are not) before the first command runs: a refused model writes nothing.
//! - Ordered (the default): the first failed statement ends the call. Unordered: every
//!   statement is tried. A command that fails as a whole (`ok: 0`) always ends the call.
//! - The error of a call that wrote something is `ErrorKind::BulkWrite` with the write
//!   errors by model index and the counts of what was written (`partial_result`); a whole
//!   command's failure after earlier writes is that error's `source`, as the driver's.
//! - A model's builder has `build` only once every required field is set:
//!
//! ```
//! use bson::doc;
//! use engine::client::{Client, InsertOneModel, UpdateOneModel, WriteModel};
//!
//! let client = Client::memory();
//! let ns = client.database("db").collection::<bson::Document>("c").namespace();
//! let insert = InsertOneModel::builder().namespace(ns.clone()).document(doc! {"_id": 1});
//! let update = UpdateOneModel::builder()
//!     .namespace(ns)
//!     .filter(doc! {"_id": 1})
//!     .update(doc! {"$set": {"a": 1}})
//!     .upsert(true);
//! let models: [WriteModel; 2] = [insert.build().into(), update.build().into()];
//! let summary = client.bulk_write(models).run()?;
//! assert_eq!((summary.inserted_count, summary.modified_count), (1, 1));
//! # Ok::<(), engine::client::Error>(())
//! ```
//!
//! ```compile_fail,E0599
//! # use bson::doc;
//! # use engine::client::{Namespace, UpdateOneModel};
//! // No filter: does not compile (the driver's `TypedBuilder` refuses it alike).
//! let update = UpdateOneModel::builder()
//!     .namespace(Namespace::new("db", "c"))
//!     .update(doc! {"$set": {"a": 1}})
//!     .build();
//! ```

use super::collection::{Collection, UpdateModifications, check_replacement, check_size, with_id};
use super::error::{self, Error, ErrorKind, Result, WriteError};
use super::results::{DeleteResult, InsertOneResult, UpdateResult};
use super::{Client, MESSAGE_OVERHEAD, MESSAGE_SIZE_MAX, WRITE_BATCH_SIZE_MAX};
use bson::raw::cstr;
use bson::{Array, Bson, Document, RawArrayBuf, RawDocumentBuf, doc};
use serde::Serialize;
use std::borrow::Borrow;
use std::collections::HashMap;

/// A collection's full name (the driver's `Namespace`): the store's own.
pub use crate::store::Namespace;

impl<T> Collection<T> {
    /// The collection's namespace (for the models of [`Client::bulk_write`]).
    #[must_use]
    pub fn namespace(&self) -> Namespace {
        Namespace::new(self.database().name(), self.name())
    }
}

/// The model constructors of the driver's async `Collection` (its sync one has none).
impl<T: Serialize + Send + Sync> Collection<T> {
    /// An [`InsertOneModel`] of `document` into this collection.
    pub fn insert_one_model(&self, document: impl Borrow<T>) -> Result<InsertOneModel> {
        let document = bson::serialize_to_document(document.borrow())?;
        Ok(InsertOneModel {
            namespace: self.namespace(),
            document,
        })
    }

    /// A [`ReplaceOneModel`] of the first match of `filter` by `replacement`.
    pub fn replace_one_model(
        &self,
        filter: Document,
        replacement: impl Borrow<T>,
    ) -> Result<ReplaceOneModel> {
        let replacement = bson::serialize_to_document(replacement.borrow())?;
        Ok(ReplaceOneModel::builder()
            .namespace(self.namespace())
            .filter(filter)
            .replacement(replacement)
            .build())
    }
}

/// One write of a [`Client::bulk_write`].
#[derive(Clone, Debug)]
#[non_exhaustive]
#[allow(missing_docs, reason = "each variant is its model, documented there")]
pub enum WriteModel {
    InsertOne(InsertOneModel),
    UpdateOne(UpdateOneModel),
    UpdateMany(UpdateManyModel),
    ReplaceOne(ReplaceOneModel),
    DeleteOne(DeleteOneModel),
    DeleteMany(DeleteManyModel),
}

/// Builders as the driver's (`Model::builder().namespace(..)...build()`): each required
/// field is a type parameter, `()` until it is set, and `build` exists only when every
/// required field is set, so a model missing one does not compile.
macro_rules! optional_setters {
    ($($(#[$doc:meta])* $field:ident: $ty:ty),* $(,)?) => {
        $(
            $(#[$doc])*
            pub fn $field(mut self, value: impl Into<Option<$ty>>) -> Self {
                self.$field = value.into();
                self
            }
        )*
    };
}

/// Inserts one document.
#[derive(Clone, Debug)]
#[non_exhaustive]
pub struct InsertOneModel {
    /// Where to insert.
    pub namespace: Namespace,
    /// The document (an `_id` is generated when it has none).
    pub document: Document,
}

impl InsertOneModel {
    /// A builder: `namespace` and `document` are required.
    pub fn builder() -> InsertOneModelBuilder<(), ()> {
        InsertOneModelBuilder {
            namespace: (),
            document: (),
        }
    }
}

/// Builds an [`InsertOneModel`].
#[must_use]
pub struct InsertOneModelBuilder<N, D> {
    namespace: N,
    document: D,
}

impl<D> InsertOneModelBuilder<(), D> {
    /// Where to insert.
    pub fn namespace(self, value: impl Into<Namespace>) -> InsertOneModelBuilder<Namespace, D> {
        InsertOneModelBuilder {
            namespace: value.into(),
            document: self.document,
        }
    }
}

impl<N> InsertOneModelBuilder<N, ()> {
    /// The document.
    pub fn document(self, value: impl Into<Document>) -> InsertOneModelBuilder<N, Document> {
        InsertOneModelBuilder {
            namespace: self.namespace,
            document: value.into(),
        }
    }
}

impl InsertOneModelBuilder<Namespace, Document> {
    /// The model.
    pub fn build(self) -> InsertOneModel {
        InsertOneModel {
            namespace: self.namespace,
            document: self.document,
        }
    }
}

/// The options every filtered model may carry.
macro_rules! filtered_model {
    (
        $(#[$doc:meta])* $model:ident, $variant:ident, $builder:ident,
        $change:ident: $change_ty:ty,
        { $($(#[$odoc:meta])* $opt:ident: $opt_ty:ty),* $(,)? }
    ) => {
        $(#[$doc])*
        #[derive(Clone, Debug)]
        #[non_exhaustive]
        pub struct $model {
            /// Where to write.
            pub namespace: Namespace,
            /// Which documents.
            pub filter: Document,
            /// The change.
            pub $change: $change_ty,
            $($(#[$odoc])* pub $opt: Option<$opt_ty>,)*
        }

        impl $model {
            /// A builder: `namespace`, `filter` and the change are required.
            pub fn builder() -> $builder<(), (), ()> {
                $builder {
                    namespace: (),
                    filter: (),
                    $change: (),
                    $($opt: None,)*
                }
            }
        }

        #[doc = concat!("Builds an [`", stringify!($model), "`].")]
        #[must_use]
        pub struct $builder<N, F, C> {
            namespace: N,
            filter: F,
            $change: C,
            $($opt: Option<$opt_ty>,)*
        }

        impl<F, C> $builder<(), F, C> {
            /// Where to write.
            pub fn namespace(self, value: impl Into<Namespace>) -> $builder<Namespace, F, C> {
                $builder {
                    namespace: value.into(),
                    filter: self.filter,
                    $change: self.$change,
                    $($opt: self.$opt,)*
                }
            }
        }

        impl<N, C> $builder<N, (), C> {
            /// Which documents.
            pub fn filter(self, value: impl Into<Document>) -> $builder<N, Document, C> {
                $builder {
                    namespace: self.namespace,
                    filter: value.into(),
                    $change: self.$change,
                    $($opt: self.$opt,)*
                }
            }
        }

        impl<N, F> $builder<N, F, ()> {
            /// The change.
            pub fn $change(self, value: impl Into<$change_ty>) -> $builder<N, F, $change_ty> {
                $builder {
                    namespace: self.namespace,
                    filter: self.filter,
                    $change: value.into(),
                    $($opt: self.$opt,)*
                }
            }
        }

        impl<N, F, C> $builder<N, F, C> {
            optional_setters!($($(#[$odoc])* $opt: $opt_ty),*);
        }

        impl $builder<Namespace, Document, $change_ty> {
            /// The model.
            pub fn build(self) -> $model {
                $model {
                    namespace: self.namespace,
                    filter: self.filter,
                    $change: self.$change,
                    $($opt: self.$opt,)*
                }
            }
        }

        impl From<$model> for WriteModel {
            fn from(model: $model) -> WriteModel {
                WriteModel::$variant(model)
            }
        }
    };
}

/// Models without a change (the deletes): `namespace` and `filter` required.
macro_rules! delete_model {
    ($(#[$doc:meta])* $model:ident, $variant:ident, $builder:ident) => {
        $(#[$doc])*
        #[derive(Clone, Debug)]
        #[non_exhaustive]
        pub struct $model {
            /// Where to delete.
            pub namespace: Namespace,
            /// Which documents.
            pub filter: Document,
            /// The collation (only the simple one is supported).
            pub collation: Option<Document>,
            /// The index to use, by name or key pattern.
            pub hint: Option<Bson>,
        }

        impl $model {
            /// A builder: `namespace` and `filter` are required.
            pub fn builder() -> $builder<(), ()> {
                $builder {
                    namespace: (),
                    filter: (),
                    collation: None,
                    hint: None,
                }
            }
        }

        #[doc = concat!("Builds a [`", stringify!($model), "`].")]
        #[must_use]
        pub struct $builder<N, F> {
            namespace: N,
            filter: F,
            collation: Option<Document>,
            hint: Option<Bson>,
        }

        impl<F> $builder<(), F> {
            /// Where to delete.
            pub fn namespace(self, value: impl Into<Namespace>) -> $builder<Namespace, F> {
                $builder {
                    namespace: value.into(),
                    filter: self.filter,
                    collation: self.collation,
                    hint: self.hint,
                }
            }
        }

        impl<N> $builder<N, ()> {
            /// Which documents.
            pub fn filter(self, value: impl Into<Document>) -> $builder<N, Document> {
                $builder {
                    namespace: self.namespace,
                    filter: value.into(),
                    collation: self.collation,
                    hint: self.hint,
                }
            }
        }

        impl<N, F> $builder<N, F> {
            optional_setters!(
                /// The collation (only the simple one is supported).
                collation: Document,
                /// The index to use, by name or key pattern.
                hint: Bson,
            );
        }

        impl $builder<Namespace, Document> {
            /// The model.
            pub fn build(self) -> $model {
                $model {
                    namespace: self.namespace,
                    filter: self.filter,
                    collation: self.collation,
                    hint: self.hint,
                }
            }
        }

        impl From<$model> for WriteModel {
            fn from(model: $model) -> WriteModel {
                WriteModel::$variant(model)
            }
        }
    };
}

filtered_model!(
    /// Updates the first match (operators or a pipeline).
    UpdateOneModel, UpdateOne, UpdateOneModelBuilder,
    update: UpdateModifications, {
        /// Filters naming the array elements `$[<identifier>]` updates.
        array_filters: Array,
        /// The collation (only the simple one is supported).
        collation: Document,
        /// The index to use, by name or key pattern.
        hint: Bson,
        /// Whether to insert when nothing matches.
        upsert: bool,
        /// Which match is updated (MongoDB 8.0; refused by this engine's `update`).
        sort: Document,
    }
);

filtered_model!(
    /// Updates every match (operators or a pipeline).
    UpdateManyModel, UpdateMany, UpdateManyModelBuilder,
    update: UpdateModifications, {
        /// Filters naming the array elements `$[<identifier>]` updates.
        array_filters: Array,
        /// The collation (only the simple one is supported).
        collation: Document,
        /// The index to use, by name or key pattern.
        hint: Bson,
        /// Whether to insert when nothing matches.
        upsert: bool,
    }
);

filtered_model!(
    /// Replaces the first match (the replacement may not hold update operators).
    ReplaceOneModel, ReplaceOne, ReplaceOneModelBuilder,
    replacement: Document, {
        /// The collation (only the simple one is supported).
        collation: Document,
        /// The index to use, by name or key pattern.
        hint: Bson,
        /// Whether to insert when nothing matches.
        upsert: bool,
        /// Which match is replaced (MongoDB 8.0; refused by this engine's `update`).
        sort: Document,
    }
);

delete_model!(
    /// Deletes the first match.
    DeleteOneModel,
    DeleteOne,
    DeleteOneModelBuilder
);

delete_model!(
    /// Deletes every match.
    DeleteManyModel,
    DeleteMany,
    DeleteManyModelBuilder
);

impl From<InsertOneModel> for WriteModel {
    fn from(model: InsertOneModel) -> WriteModel {
        WriteModel::InsertOne(model)
    }
}

/// What a [`Client::bulk_write`] wrote, in total (the driver's summary result).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct SummaryBulkWriteResult {
    /// Documents inserted.
    pub inserted_count: i64,
    /// Documents the update and replace filters matched (upserts not counted).
    pub matched_count: i64,
    /// Documents changed by updates and replacements.
    pub modified_count: i64,
    /// Documents inserted by upserts.
    pub upserted_count: i64,
    /// Documents deleted.
    pub deleted_count: i64,
}

/// What a [`Client::bulk_write`] with [`BulkWrite::verbose_results`] wrote: the summary
/// and each successful model's own result, by its position in the call (the driver's).
#[derive(Clone, Debug, Default, PartialEq)]
#[non_exhaustive]
pub struct VerboseBulkWriteResult {
    /// The totals.
    pub summary: SummaryBulkWriteResult,
    /// Each insert's result.
    pub insert_results: HashMap<usize, InsertOneResult>,
    /// Each update's and replacement's result.
    pub update_results: HashMap<usize, UpdateResult>,
    /// Each delete's result.
    pub delete_results: HashMap<usize, DeleteResult>,
}

/// What a failed bulk write had written (the driver's).
#[derive(Clone, Debug, PartialEq)]
#[non_exhaustive]
pub enum PartialBulkWriteResult {
    /// The counts of what was written before and around the failures.
    Summary(SummaryBulkWriteResult),
    /// With [`BulkWrite::verbose_results`]: also each successful model's result.
    Verbose(VerboseBulkWriteResult),
}

/// The failures of a [`Client::bulk_write`] (`ErrorKind::BulkWrite`).
#[derive(Clone, Debug, Default, PartialEq)]
#[non_exhaustive]
pub struct BulkWriteError {
    /// The failed models' errors, by the model's position in the call.
    pub write_errors: HashMap<usize, WriteError>,
    /// What was written, when anything was.
    pub partial_result: Option<PartialBulkWriteResult>,
}

/// A bulk write being built; build with [`Client::bulk_write`].
#[must_use]
pub struct BulkWrite<'a> {
    client: &'a Client,
    models: Vec<WriteModel>,
    ordered: bool,
    bypass_document_validation: Option<bool>,
    comment: Option<Bson>,
    let_vars: Option<Document>,
}

impl Client {
    /// Runs `models` (inserts, updates, replacements and deletes, in any namespaces) in
    /// order; see [`BulkWrite`].
    pub fn bulk_write(
        &self,
        models: impl IntoIterator<Item = impl Into<WriteModel>>,
    ) -> BulkWrite<'_> {
        BulkWrite {
            client: self,
            models: models.into_iter().map(Into::into).collect(),
            ordered: true,
            bypass_document_validation: None,
            comment: None,
            let_vars: None,
        }
    }
}

/// The command kinds a model runs as.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Kind {
    Insert,
    Update,
    Delete,
}

impl Kind {
    /// The command's name.
    fn name(self) -> &'static str {
        match self {
            Kind::Insert => "insert",
            Kind::Update => "update",
            Kind::Delete => "delete",
        }
    }
}

/// Sets `key` in `statement` when `value` is set.
fn put(statement: &mut Document, key: &str, value: Option<impl Into<Bson>>) {
    if let Some(value) = value {
        statement.insert(key, value.into());
    }
}

/// A model as its command's kind, namespace and statement (and an insert's `_id`), checked
/// as the driver checks it.
fn statement(model: WriteModel) -> Result<(Kind, Namespace, RawDocumentBuf, Option<Bson>)> {
    let (kind, namespace, statement) = match model {
        WriteModel::InsertOne(m) => {
            let (id, document) = with_id(super::encode(&m.document)?)?;
            check_size(&document)?;
            return Ok((Kind::Insert, m.namespace, document, Some(id)));
        }
        WriteModel::UpdateOne(m) => {
            let mut s = doc! {"q": m.filter, "u": m.update.checked()?, "multi": false};
            put(&mut s, "arrayFilters", m.array_filters);
            put(&mut s, "collation", m.collation);
            put(&mut s, "hint", m.hint);
            put(&mut s, "upsert", m.upsert);
            put(&mut s, "sort", m.sort);
            (Kind::Update, m.namespace, s)
        }
        WriteModel::UpdateMany(m) => {
            let mut s = doc! {"q": m.filter, "u": m.update.checked()?, "multi": true};
            put(&mut s, "arrayFilters", m.array_filters);
            put(&mut s, "collation", m.collation);
            put(&mut s, "hint", m.hint);
            put(&mut s, "upsert", m.upsert);
            (Kind::Update, m.namespace, s)
        }
        WriteModel::ReplaceOne(m) => {
            check_replacement(&m.replacement)?;
            let mut s = doc! {"q": m.filter, "u": m.replacement, "multi": false};
            put(&mut s, "collation", m.collation);
            put(&mut s, "hint", m.hint);
            put(&mut s, "upsert", m.upsert);
            put(&mut s, "sort", m.sort);
            (Kind::Update, m.namespace, s)
        }
        WriteModel::DeleteOne(m) => {
            let mut s = doc! {"q": m.filter, "limit": 1};
            put(&mut s, "collation", m.collation);
            put(&mut s, "hint", m.hint);
            (Kind::Delete, m.namespace, s)
        }
        WriteModel::DeleteMany(m) => {
            let mut s = doc! {"q": m.filter, "limit": 0};
            put(&mut s, "collation", m.collation);
            put(&mut s, "hint", m.hint);
            (Kind::Delete, m.namespace, s)
        }
    };
    Ok((kind, namespace, super::encode(&statement)?, None))
}

/// What a batch leaves of a message for its command's other fields (the name, `ordered`,
/// a comment, `let`).
const HEAD_MAX: usize = 16 * 1024;

/// One command's worth of consecutive statements of one kind and namespace.
struct Batch {
    kind: Kind,
    namespace: Namespace,
    /// The position of the first statement in the call.
    first: usize,
    statements: Vec<RawDocumentBuf>,
    /// The inserts' `_id`s, by statement.
    ids: Vec<Option<Bson>>,
}

/// What the batches have written so far.
#[derive(Default)]
struct Progress {
    summary: SummaryBulkWriteResult,
    /// Each model's result, when the call asked for them.
    verbose: Option<VerboseBulkWriteResult>,
    write_errors: HashMap<usize, WriteError>,
    /// Statements that succeeded.
    succeeded: usize,
}

impl Progress {
    /// The failure of the call: a `BulkWrite` error when anything was written or a
    /// statement failed, else `top` (a whole command's failure) alone.
    fn into_error(self, top: Option<Error>) -> Error {
        let top = match top {
            Some(top) if self.write_errors.is_empty() && self.succeeded == 0 => return top,
            other => other,
        };
        let error = Error::new(ErrorKind::BulkWrite(BulkWriteError {
            write_errors: self.write_errors,
            partial_result: (self.succeeded > 0).then(|| match self.verbose {
                Some(mut verbose) => {
                    verbose.summary = self.summary;
                    PartialBulkWriteResult::Verbose(verbose)
                }
                None => PartialBulkWriteResult::Summary(self.summary),
            }),
        }));
        match top {
            Some(top) => error.with_source(top),
            None => error,
        }
    }
}

fn count(reply: &Document, field: &str) -> i64 {
    i64::try_from(super::collection::count_of(reply.get(field))).unwrap_or(i64::MAX)
}

impl<'a> BulkWrite<'a> {
    /// Whether to stop at the first failed model (the default) or try every one.
    pub fn ordered(mut self, value: bool) -> Self {
        self.ordered = value;
        self
    }

    /// Skips document validation (`bypassDocumentValidation`).
    pub fn bypass_document_validation(mut self, value: bool) -> Self {
        self.bypass_document_validation = Some(value);
        self
    }

    /// A comment recorded with each command.
    pub fn comment(mut self, value: impl Into<Bson>) -> Self {
        self.comment = Some(value.into());
        self
    }

    /// Variables the updates' and deletes' filters and changes can read as `$$name`.
    pub fn let_vars(mut self, value: Document) -> Self {
        self.let_vars = Some(value);
        self
    }

    /// Asks for each model's result beside the totals (the driver's `verbose_results`).
    /// Updates and deletes then run one statement per command, since a command's reply
    /// counts only its whole batch.
    pub fn verbose_results(self) -> VerboseBulkWrite<'a> {
        VerboseBulkWrite { inner: self }
    }

    /// The batches: consecutive statements of one kind and namespace, split by count and
    /// size as the driver splits them (updates and deletes alone when `verbose`).
    fn batches(models: Vec<WriteModel>, verbose: bool) -> Result<Vec<Batch>> {
        let mut batches: Vec<Batch> = Vec::new();
        let mut bytes = 0;
        for (index, model) in models.into_iter().enumerate() {
            let (kind, namespace, statement, id) = statement(model)?;
            let size = statement.as_bytes().len();
            let joins = batches.last().is_some_and(|b| {
                (kind == Kind::Insert || !verbose)
                    && b.kind == kind
                    && b.namespace == namespace
                    && b.statements.len() < WRITE_BATCH_SIZE_MAX
                    && bytes + size <= MESSAGE_SIZE_MAX - MESSAGE_OVERHEAD - HEAD_MAX
            });
            match batches.last_mut() {
                Some(batch) if joins => {
                    batch.statements.push(statement);
                    batch.ids.push(id);
                }
                _ => {
                    bytes = 0;
                    batches.push(Batch {
                        kind,
                        namespace,
                        first: index,
                        statements: vec![statement],
                        ids: vec![id],
                    });
                }
            }
            bytes += size;
        }
        Ok(batches)
    }

    /// The command of `batch`, with the call's options.
    fn command(&self, batch: &Batch) -> Result<RawDocumentBuf> {
        let mut head =
            doc! {batch.kind.name(): batch.namespace.coll.as_str(), "ordered": self.ordered};
        if let (Some(value), Kind::Insert | Kind::Update) =
            (self.bypass_document_validation, batch.kind)
        {
            head.insert("bypassDocumentValidation", value);
        }
        put(&mut head, "comment", self.comment.clone());
        if let (Some(vars), Kind::Update | Kind::Delete) = (&self.let_vars, batch.kind) {
            head.insert("let", vars.clone());
        }
        let mut command = super::encode(&head)?;
        let mut statements = RawArrayBuf::new();
        for statement in &batch.statements {
            statements.push(statement.as_ref());
        }
        match batch.kind {
            Kind::Insert => command.append(cstr!("documents"), statements),
            Kind::Update => command.append(cstr!("updates"), statements),
            Kind::Delete => command.append(cstr!("deletes"), statements),
        }
        Ok(command)
    }

    /// Runs the writes, batch by batch: the summary, or the failures and what was written.
    pub fn run(self) -> Result<SummaryBulkWriteResult> {
        self.execute(false).map(|progress| progress.summary)
    }

    fn execute(mut self, verbose: bool) -> Result<Progress> {
        if self.models.is_empty() {
            return Err(Error::invalid_argument(
                "bulk_write must be provided at least one write operation",
            ));
        }
        let models = std::mem::take(&mut self.models);
        let batches = Self::batches(models, verbose)?;
        let mut progress = Progress {
            verbose: verbose.then(VerboseBulkWriteResult::default),
            ..Progress::default()
        };
        for batch in &batches {
            let command = self.command(batch)?;
            let reply = match self.client.command(&batch.namespace.db, &command) {
                Ok(reply) => super::decode_reply(&reply)?,
                Err(error) => return Err(progress.into_error(Some(error))),
            };
            let errors = error::write_errors(&reply);
            let s = &mut progress.summary;
            match batch.kind {
                Kind::Insert => s.inserted_count += count(&reply, "n"),
                Kind::Delete => s.deleted_count += count(&reply, "n"),
                Kind::Update => {
                    let upserted = reply.get_array("upserted").map_or(0, Vec::len);
                    let upserted = i64::try_from(upserted).unwrap_or(i64::MAX);
                    s.upserted_count += upserted;
                    s.matched_count += count(&reply, "n") - upserted;
                    s.modified_count += count(&reply, "nModified");
                }
            }
            let attempted = match (self.ordered, errors.first()) {
                (true, Some(first)) => first.index,
                _ => batch.statements.len() - errors.len(),
            };
            progress.succeeded += attempted;
            if let Some(verbose) = &mut progress.verbose {
                record(verbose, batch, &reply, &errors, self.ordered);
            }
            let stop = self.ordered && !errors.is_empty();
            for error in errors {
                progress
                    .write_errors
                    .insert(batch.first + error.index, error.into());
            }
            if stop {
                break;
            }
        }
        if progress.write_errors.is_empty() {
            return Ok(progress);
        }
        Err(progress.into_error(None))
    }
}

/// Each successful statement's result of `batch` (updates and deletes come one per batch
/// in verbose mode), from its command's `reply`.
fn record(
    verbose: &mut VerboseBulkWriteResult,
    batch: &Batch,
    reply: &Document,
    errors: &[error::IndexedWriteError],
    ordered: bool,
) {
    let failed = |i: usize| errors.iter().any(|e| e.index == i);
    let stopped_at = if ordered {
        errors.first().map(|e| e.index)
    } else {
        None
    };
    for (i, id) in batch.ids.iter().enumerate() {
        if failed(i) || stopped_at.is_some_and(|stop| i > stop) {
            continue;
        }
        let at = batch.first + i;
        match batch.kind {
            Kind::Insert => {
                let inserted_id = id.clone().unwrap_or(Bson::Null);
                verbose
                    .insert_results
                    .insert(at, InsertOneResult { inserted_id });
            }
            Kind::Update => {
                let upserted_id = reply
                    .get_array("upserted")
                    .ok()
                    .and_then(|u| u.first())
                    .and_then(Bson::as_document)
                    .and_then(|u| u.get("_id").cloned());
                let n = count(reply, "n");
                let matched = n - i64::from(upserted_id.is_some());
                verbose.update_results.insert(
                    at,
                    UpdateResult {
                        matched_count: u64::try_from(matched).unwrap_or(0),
                        modified_count: u64::try_from(count(reply, "nModified")).unwrap_or(0),
                        upserted_id,
                    },
                );
            }
            Kind::Delete => {
                let deleted_count = u64::try_from(count(reply, "n")).unwrap_or(0);
                verbose
                    .delete_results
                    .insert(at, DeleteResult { deleted_count });
            }
        }
    }
}

/// A [`BulkWrite`] that reports each model's result; build with
/// [`BulkWrite::verbose_results`].
#[must_use]
pub struct VerboseBulkWrite<'a> {
    inner: BulkWrite<'a>,
}

impl VerboseBulkWrite<'_> {
    /// As [`BulkWrite::ordered`].
    pub fn ordered(mut self, value: bool) -> Self {
        self.inner = self.inner.ordered(value);
        self
    }

    /// As [`BulkWrite::comment`].
    pub fn comment(mut self, value: impl Into<Bson>) -> Self {
        self.inner = self.inner.comment(value);
        self
    }

    /// As [`BulkWrite::let_vars`].
    pub fn let_vars(mut self, value: Document) -> Self {
        self.inner = self.inner.let_vars(value);
        self
    }

    /// Runs the writes: the totals and each model's result, or the failures and what was
    /// written (`PartialBulkWriteResult::Verbose`).
    pub fn run(self) -> Result<VerboseBulkWriteResult> {
        let progress = self.inner.execute(true)?;
        let mut verbose = progress.verbose.unwrap_or_default();
        verbose.summary = progress.summary;
        Ok(verbose)
    }
}
