//! Index helpers in the `mongodb` crate's shape: [`IndexModel`] and [`IndexOptions`] (with
//! their builders), `create_index`, `create_indexes`, `list_indexes`, `list_index_names`,
//! `drop_index` and `drop_indexes`, each a builder ending in `.run()`, sending the commands
//! a driver sends (`createIndexes`, `listIndexes`, `dropIndexes`).
//!
//! Invariants:
//! - An index is named as the driver names it when the model gives no name (`a_1_b_-1`,
//!   the driver's rule, which is also mongod's), so `create_index` returns the name mongod
//!   would list.
//! - `list_indexes` yields what `listIndexes` lists, deserialized as the driver's
//!   `IndexModel` is (`key` as `keys`, the options flattened beside it).

use super::error::{Error, Result};
use super::find::Cursor;
use super::{Collection, Database};
use bson::{Bson, Document, doc};
use serde::{Deserialize, Serialize};
use std::time::Duration;

/// An index to create or one `list_indexes` found: its key pattern and options (the
/// driver's `IndexModel`).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct IndexModel {
    /// The key pattern (`{a: 1, b: -1}`, `{h: "hashed"}`, `{"$**": 1}`).
    #[serde(rename = "key")]
    pub keys: Document,
    /// The options (`name`, `unique`, ...).
    #[serde(flatten)]
    pub options: Option<IndexOptions>,
}

impl IndexModel {
    /// A builder, as the driver's `IndexModel::builder()`.
    pub fn builder() -> IndexModelBuilder {
        IndexModelBuilder::default()
    }

    /// The name the driver and mongod give an index of these keys: each field and its
    /// value joined by `_` (`a_1_b_-1`).
    fn default_name(&self) -> String {
        let parts: Vec<String> = self
            .keys
            .iter()
            .map(|(field, value)| {
                let value = match value {
                    Bson::String(s) => s.clone(),
                    Bson::Int32(n) => n.to_string(),
                    Bson::Int64(n) => n.to_string(),
                    Bson::Double(n) if n.fract() == 0.0 => format!("{n:.0}"),
                    other => other.to_string(),
                };
                format!("{field}_{value}")
            })
            .collect();
        parts.join("_")
    }

    /// The name this model's index has (given, or the default).
    fn name(&self) -> String {
        self.options
            .as_ref()
            .and_then(|o| o.name.clone())
            .unwrap_or_else(|| self.default_name())
    }

    /// The entry of `createIndexes`' `indexes` array.
    fn spec(&self) -> Result<Document> {
        let mut spec = doc! { "key": self.keys.clone(), "name": self.name() };
        if let Some(options) = &self.options {
            let extra = bson::serialize_to_document(options).map_err(Error::from)?;
            for (field, value) in extra {
                if field != "name" {
                    spec.insert(field, value);
                }
            }
        }
        Ok(spec)
    }
}

/// Builds an [`IndexModel`].
#[derive(Debug, Default)]
#[must_use]
pub struct IndexModelBuilder {
    model: IndexModel,
}

impl IndexModelBuilder {
    /// The key pattern.
    pub fn keys(mut self, keys: Document) -> Self {
        self.model.keys = keys;
        self
    }

    /// The options.
    pub fn options(mut self, options: impl Into<Option<IndexOptions>>) -> Self {
        self.model.options = options.into();
        self
    }

    /// The model.
    pub fn build(self) -> IndexModel {
        self.model
    }
}

/// What an index is besides its keys (the driver's `IndexOptions`, the options this engine
/// builds; others are refused by `createIndexes` with mongod's error).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct IndexOptions {
    /// The index's name (default: the driver's, `a_1_b_-1`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    /// No two documents share a key.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub unique: Option<bool>,
    /// Documents without the indexed fields are left out.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub sparse: Option<bool>,
    /// TTL: documents expire this long after the date in the indexed field.
    #[serde(
        rename = "expireAfterSeconds",
        default,
        skip_serializing_if = "Option::is_none",
        with = "seconds"
    )]
    pub expire_after: Option<Duration>,
    /// Only documents matching this filter are indexed.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub partial_filter_expression: Option<Document>,
    /// Maintained but never chosen by the planner.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub hidden: Option<bool>,
    /// The fields a wildcard index covers or leaves out.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub wildcard_projection: Option<Document>,
    /// A collation (only the simple one is built; others are refused).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub collation: Option<Document>,
}

impl IndexOptions {
    /// A builder, as the driver's `IndexOptions::builder()`.
    pub fn builder() -> IndexOptionsBuilder {
        IndexOptionsBuilder::default()
    }
}

/// `expireAfterSeconds` as whole seconds, as the driver writes and reads it.
mod seconds {
    use serde::{Deserialize, Deserializer, Serializer};
    use std::time::Duration;

    pub fn serialize<S: Serializer>(value: &Option<Duration>, s: S) -> Result<S::Ok, S::Error> {
        match value {
            Some(d) => s.serialize_i64(i64::try_from(d.as_secs()).unwrap_or(i64::MAX)),
            None => s.serialize_none(),
        }
    }

    pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<Option<Duration>, D::Error> {
        let value = Option::<f64>::deserialize(d)?;
        Ok(value.map(|secs| Duration::from_secs(secs.max(0.0) as u64)))
    }
}

/// Builds [`IndexOptions`]; each setter takes the value or an `Option` of it.
#[derive(Debug, Default)]
#[must_use]
pub struct IndexOptionsBuilder {
    options: IndexOptions,
}

impl IndexOptionsBuilder {
    /// The index's name.
    pub fn name(mut self, value: impl Into<Option<String>>) -> Self {
        self.options.name = value.into();
        self
    }

    /// Unique keys.
    pub fn unique(mut self, value: impl Into<Option<bool>>) -> Self {
        self.options.unique = value.into();
        self
    }

    /// Sparse.
    pub fn sparse(mut self, value: impl Into<Option<bool>>) -> Self {
        self.options.sparse = value.into();
        self
    }

    /// TTL.
    pub fn expire_after(mut self, value: impl Into<Option<Duration>>) -> Self {
        self.options.expire_after = value.into();
        self
    }

    /// Partial index filter.
    pub fn partial_filter_expression(mut self, value: impl Into<Option<Document>>) -> Self {
        self.options.partial_filter_expression = value.into();
        self
    }

    /// Hidden.
    pub fn hidden(mut self, value: impl Into<Option<bool>>) -> Self {
        self.options.hidden = value.into();
        self
    }

    /// Wildcard projection.
    pub fn wildcard_projection(mut self, value: impl Into<Option<Document>>) -> Self {
        self.options.wildcard_projection = value.into();
        self
    }

    /// Collation.
    pub fn collation(mut self, value: impl Into<Option<Document>>) -> Self {
        self.options.collation = value.into();
        self
    }

    /// The options.
    pub fn build(self) -> IndexOptions {
        self.options
    }
}

/// The result of `create_index` (the driver's `CreateIndexResult`).
#[derive(Clone, Debug, PartialEq)]
#[non_exhaustive]
pub struct CreateIndexResult {
    /// The index's name.
    pub index_name: String,
}

/// The result of `create_indexes` (the driver's `CreateIndexesResult`).
#[derive(Clone, Debug, PartialEq)]
#[non_exhaustive]
pub struct CreateIndexesResult {
    /// The indexes' names, in the call's order.
    pub index_names: Vec<String>,
}

impl<T> Collection<T> {
    /// Creates an index (an existing identical one is no error).
    pub fn create_index(&self, model: IndexModel) -> CreateIndex<'_> {
        CreateIndex {
            database: self.database(),
            collection: self.name(),
            model,
        }
    }

    /// Creates several indexes in one `createIndexes`.
    pub fn create_indexes(
        &self,
        models: impl IntoIterator<Item = IndexModel>,
    ) -> CreateIndexes<'_> {
        CreateIndexes {
            database: self.database(),
            collection: self.name(),
            models: models.into_iter().collect(),
        }
    }

    /// The collection's indexes, as `listIndexes` lists them.
    pub fn list_indexes(&self) -> ListIndexes<'_> {
        ListIndexes {
            database: self.database(),
            collection: self.name(),
        }
    }

    /// The names of the collection's indexes.
    pub fn list_index_names(&self) -> ListIndexNames<'_> {
        ListIndexNames {
            inner: self.list_indexes(),
        }
    }

    /// Drops the index `name`.
    pub fn drop_index(&self, name: impl AsRef<str>) -> DropIndex<'_> {
        DropIndex {
            database: self.database(),
            collection: self.name(),
            index: Bson::String(name.as_ref().to_owned()),
        }
    }

    /// Drops every index but `_id_`.
    pub fn drop_indexes(&self) -> DropIndex<'_> {
        DropIndex {
            database: self.database(),
            collection: self.name(),
            index: Bson::String("*".into()),
        }
    }
}

/// Creates one index; build with [`Collection::create_index`].
#[must_use]
pub struct CreateIndex<'a> {
    database: &'a Database,
    collection: &'a str,
    model: IndexModel,
}

impl CreateIndex<'_> {
    /// Runs the create.
    pub fn run(self) -> Result<CreateIndexResult> {
        let names = create(self.database, self.collection, &[self.model])?;
        let index_name = names.into_iter().next().unwrap_or_default();
        Ok(CreateIndexResult { index_name })
    }
}

/// Creates several indexes; build with [`Collection::create_indexes`].
#[must_use]
pub struct CreateIndexes<'a> {
    database: &'a Database,
    collection: &'a str,
    models: Vec<IndexModel>,
}

impl CreateIndexes<'_> {
    /// Runs the create.
    pub fn run(self) -> Result<CreateIndexesResult> {
        let index_names = create(self.database, self.collection, &self.models)?;
        Ok(CreateIndexesResult { index_names })
    }
}

fn create(database: &Database, collection: &str, models: &[IndexModel]) -> Result<Vec<String>> {
    let specs = models
        .iter()
        .map(|m| m.spec().map(Bson::Document))
        .collect::<Result<Vec<_>>>()?;
    database.command(&doc! { "createIndexes": collection, "indexes": specs })?;
    Ok(models.iter().map(IndexModel::name).collect())
}

/// Lists the indexes; build with [`Collection::list_indexes`].
#[must_use]
pub struct ListIndexes<'a> {
    database: &'a Database,
    collection: &'a str,
}

impl ListIndexes<'_> {
    /// Runs the listing: a cursor of [`IndexModel`]s.
    pub fn run(self) -> Result<Cursor<IndexModel>> {
        let command = doc! { "listIndexes": self.collection };
        Cursor::<IndexModel>::start(
            self.database.clone(),
            &bson::RawDocumentBuf::try_from(&command).map_err(Error::from)?,
        )
    }
}

/// Lists the index names; build with [`Collection::list_index_names`].
#[must_use]
pub struct ListIndexNames<'a> {
    inner: ListIndexes<'a>,
}

impl ListIndexNames<'_> {
    /// Runs the listing.
    pub fn run(self) -> Result<Vec<String>> {
        self.inner
            .run()?
            .map(|model| model.map(|m| m.options.and_then(|o| o.name).unwrap_or_default()))
            .collect()
    }
}

/// Drops an index (or all but `_id_`); build with [`Collection::drop_index`] or
/// [`Collection::drop_indexes`].
#[must_use]
pub struct DropIndex<'a> {
    database: &'a Database,
    collection: &'a str,
    index: Bson,
}

impl DropIndex<'_> {
    /// Runs the drop.
    pub fn run(self) -> Result<()> {
        self.database
            .command(&doc! { "dropIndexes": self.collection, "index": self.index })
            .map(|_| ())
    }
}
