//! The catalog: one entry per collection in the B+tree of pager root slot 0, keyed by its
//! namespace, holding the roots of the collection's trees and its counters.
//!
//! Invariants:
//! - The catalog tree is the only tree in a root slot; every other tree's root lives in a
//!   catalog entry, so a reader's snapshot gives it consistent roots for every collection.
//! - An entry's `count` and `size` equal the number and total bytes of its records
//!   (checked by `validate`).
//! - `next_rid` is greater than every record id the collection has used, so ids are never
//!   reused within a collection's life.

use super::StoreError;
use bson::spec::BinarySubtype;
use bson::{RawDocument, RawDocumentBuf, rawdoc};
use btree::{Btree, Tree};

/// The catalog tree.
pub(crate) const CATALOG: Btree = Btree::new(0);

/// A collection's name: database and collection.
#[derive(Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Namespace {
    /// The database name.
    pub db: String,
    /// The collection name (may contain dots).
    pub coll: String,
}

impl Namespace {
    /// The namespace `db.coll`.
    pub fn new(db: impl Into<String>, coll: impl Into<String>) -> Namespace {
        Namespace {
            db: db.into(),
            coll: coll.into(),
        }
    }

    /// Splits `db.coll` at the first dot (database names hold no dots).
    pub fn parse(full: &str) -> Option<Namespace> {
        let (db, coll) = full.split_once('.')?;
        Some(Namespace::new(db, coll))
    }

    /// `db.coll`, the catalog key and MongoDB's spelling.
    pub fn full(&self) -> String {
        format!("{}.{}", self.db, self.coll)
    }
}

impl std::fmt::Display for Namespace {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}.{}", self.db, self.coll)
    }
}

/// What the catalog records about one collection.
#[derive(Clone, Debug, PartialEq)]
pub struct CollectionMeta {
    /// Records: record id (u64 big-endian) → document bytes.
    pub records: Tree,
    /// The `_id_` index: canonical key of `_id` → record id.
    pub ids: Tree,
    /// The id the next inserted record gets.
    pub next_rid: u64,
    /// Documents in the collection.
    pub count: u64,
    /// Bytes of all its documents.
    pub size: u64,
    /// The options it was created with (`capped`, `validator`, ...), as given.
    pub options: RawDocumentBuf,
    /// The collection's UUID (listCollections `info.uuid`).
    pub uuid: [u8; 16],
}

impl CollectionMeta {
    /// A new, empty collection.
    pub(crate) fn new(options: RawDocumentBuf, uuid: [u8; 16]) -> CollectionMeta {
        CollectionMeta {
            records: Tree::EMPTY,
            ids: Tree::EMPTY,
            next_rid: 1,
            count: 0,
            size: 0,
            options,
            uuid,
        }
    }

    pub(crate) fn encode(&self) -> RawDocumentBuf {
        rawdoc! {
            "records": to_i64(self.records.root()),
            "ids": to_i64(self.ids.root()),
            "next": to_i64(self.next_rid),
            "count": to_i64(self.count),
            "size": to_i64(self.size),
            "options": self.options.clone(),
            "uuid": bson::Binary { subtype: BinarySubtype::Uuid, bytes: self.uuid.to_vec() },
        }
    }

    pub(crate) fn decode(bytes: &[u8]) -> Result<CollectionMeta, StoreError> {
        let bad = |what: &str| StoreError::Corrupt(format!("catalog entry: {what}"));
        let doc = RawDocument::from_bytes(bytes).map_err(|_| bad("not BSON"))?;
        let int = |key: &str| -> Result<u64, StoreError> {
            let value = doc.get_i64(key).map_err(|_| bad(key))?;
            u64::try_from(value).map_err(|_| bad(key))
        };
        let uuid = doc.get_binary("uuid").map_err(|_| bad("uuid"))?;
        let uuid: [u8; 16] = uuid.bytes.try_into().map_err(|_| bad("uuid length"))?;
        Ok(CollectionMeta {
            records: Tree::from_root(int("records")?),
            ids: Tree::from_root(int("ids")?),
            next_rid: int("next")?,
            count: int("count")?,
            size: int("size")?,
            options: doc
                .get_document("options")
                .map_err(|_| bad("options"))?
                .to_owned(),
            uuid,
        })
    }
}

fn to_i64(value: u64) -> i64 {
    i64::try_from(value).expect("catalog counters stay below 2^63")
}

/// The key of record `rid` in a records tree.
pub(crate) fn rid_key(rid: u64) -> [u8; 8] {
    rid.to_be_bytes()
}

/// The record id stored under a records-tree key or as an `_id_` index value.
pub(crate) fn rid_of(bytes: &[u8]) -> Result<u64, StoreError> {
    let bytes: [u8; 8] = bytes
        .try_into()
        .map_err(|_| StoreError::Corrupt("record id is not 8 bytes".into()))?;
    Ok(u64::from_be_bytes(bytes))
}
