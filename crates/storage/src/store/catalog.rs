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
//! - Each secondary index's tree holds exactly the keys its documents generate
//!   (`index::keys::index_keys`), each as `key ++ record id` (checked by `validate`); its
//!   `entries` counts them. An entry without `indexes` (written before indexes existed)
//!   reads as a collection with only `_id_`.

use super::StoreError;
use super::oplog::Kind;
use super::records::{Compressor, Records};
use crate::index::spec::{IndexSpec, ParseOptions};
use bson::spec::BinarySubtype;
use bson::{RawArrayBuf, RawDocument, RawDocumentBuf, cstr, rawdoc};
use btree::{Btree, Tree};
use std::collections::BTreeSet;
use std::sync::Arc;

/// The catalog tree.
pub const CATALOG: Btree = Btree::new(0);

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
    /// Records: record id (u64 big-endian) → document bytes, stored as the collection's
    /// compressor says ([`Records`]).
    pub records: Records,
    /// The `_id_` index: canonical key of `_id` → record id.
    pub ids: Tree,
    /// The id the next inserted record gets.
    pub next_rid: u64,
    /// Documents in the collection.
    pub count: u64,
    /// Bytes of all its documents (logical: as BSON).
    pub size: u64,
    /// Bytes its records take as stored (equal to `size` when stored raw).
    pub stored: u64,
    /// The options it was created with (`capped`, `validator`, ...), as given.
    pub options: RawDocumentBuf,
    /// The collection's UUID (listCollections `info.uuid`).
    pub uuid: [u8; 16],
    /// Its secondary indexes, in creation order (`_id_` is `ids`, not listed here).
    pub indexes: Vec<IndexMeta>,
    /// Documents, or the oplog (no `_id_` index, record id = `ts`: `super::oplog`).
    pub kind: Kind,
}

/// A secondary index as the catalog records it.
#[derive(Clone, Debug)]
pub struct IndexMeta {
    /// The validated specification (from its stored form).
    pub spec: Arc<IndexSpec>,
    /// Entries: index key ++ record id (u64 big-endian) → empty value.
    pub tree: Tree,
    /// Whether some document made the index multikey (never reset, as in mongod).
    pub multikey: bool,
    /// Per key field, the path components at which an array was met (mongod's
    /// multikey paths; the planner's bound rules need them).
    pub multikey_paths: Vec<BTreeSet<usize>>,
    /// For a wildcard index, the dotted paths at which an array was met (what mongod
    /// keeps as multikey metadata keys in the index itself; never reset either).
    pub wildcard_multikey: BTreeSet<String>,
    /// Entries in the tree.
    pub entries: u64,
    /// Bytes of their keys (record ids included), for the size estimates.
    pub key_bytes: u64,
}

impl IndexMeta {
    /// A new, empty index.
    pub fn new(spec: Arc<IndexSpec>) -> IndexMeta {
        let fields = spec.fields.len();
        IndexMeta {
            spec,
            tree: Tree::EMPTY,
            multikey: false,
            multikey_paths: vec![BTreeSet::new(); fields],
            wildcard_multikey: BTreeSet::new(),
            entries: 0,
            key_bytes: 0,
        }
    }

    /// The index name.
    pub fn name(&self) -> &str {
        &self.spec.name
    }

    /// Whether every array `keys` met is already recorded (so a write need not touch the
    /// entry for multikey's sake).
    pub fn records_multikey(&self, keys: &crate::index::keys::Keys) -> bool {
        self.multikey
            && keys.wildcard_multikey.is_subset(&self.wildcard_multikey)
            && keys
                .multikey_paths
                .iter()
                .zip(&self.multikey_paths)
                .all(|(theirs, mine)| theirs.is_subset(mine))
    }

    fn encode(&self) -> RawDocumentBuf {
        let mut paths = RawArrayBuf::new();
        for components in &self.multikey_paths {
            let mut list = RawArrayBuf::new();
            for &c in components {
                list.push(to_i64(c as u64));
            }
            paths.push(list);
        }
        let spec = RawDocumentBuf::try_from(&self.spec.stored)
            .expect("a validated index specification encodes as BSON");
        let mut out = rawdoc! {
            "spec": spec,
            "root": to_i64(self.tree.root()),
            "multikey": self.multikey,
            "paths": paths,
            "entries": to_i64(self.entries),
            "keyBytes": to_i64(self.key_bytes),
        };
        // Only wildcard indexes carry it, so other entries stay byte-identical.
        if self.spec.wildcard.is_some() {
            let mut wildcard = RawArrayBuf::new();
            for path in &self.wildcard_multikey {
                wildcard.push(path.as_str());
            }
            out.append(cstr!("wildcardPaths"), wildcard);
        }
        out
    }

    fn decode(doc: &RawDocument) -> Result<IndexMeta, StoreError> {
        let bad = |what: &str| StoreError::Corrupt(format!("catalog index entry: {what}"));
        let int = |key: &str| -> Result<u64, StoreError> {
            let value = doc.get_i64(key).map_err(|_| bad(key))?;
            u64::try_from(value).map_err(|_| bad(key))
        };
        let stored = doc.get_document("spec").map_err(|_| bad("spec"))?;
        let spec = IndexSpec::parse(stored, ParseOptions::default())
            .map_err(|e| bad(&format!("spec ({e})")))?;
        let mut multikey_paths = Vec::new();
        for field in doc.get_array("paths").map_err(|_| bad("paths"))? {
            let Ok(bson::RawBsonRef::Array(list)) = field else {
                return Err(bad("paths"));
            };
            let mut components = BTreeSet::new();
            for c in list {
                let c = c
                    .ok()
                    .and_then(|c| c.as_i64())
                    .ok_or_else(|| bad("paths"))?;
                components.insert(usize::try_from(c).map_err(|_| bad("paths"))?);
            }
            multikey_paths.push(components);
        }
        if multikey_paths.len() != spec.fields.len() {
            return Err(bad("paths length"));
        }
        let mut wildcard_multikey = BTreeSet::new();
        if let Ok(Some(bson::RawBsonRef::Array(list))) = doc.get("wildcardPaths") {
            for path in list {
                let Ok(bson::RawBsonRef::String(path)) = path else {
                    return Err(bad("wildcardPaths"));
                };
                wildcard_multikey.insert(path.to_owned());
            }
        }
        Ok(IndexMeta {
            spec: Arc::new(spec),
            tree: Tree::from_root(int("root")?),
            multikey: doc.get_bool("multikey").map_err(|_| bad("multikey"))?,
            multikey_paths,
            wildcard_multikey,
            entries: int("entries")?,
            key_bytes: int("keyBytes")?,
        })
    }
}

impl PartialEq for IndexMeta {
    fn eq(&self, other: &IndexMeta) -> bool {
        self.spec.stored == other.spec.stored
            && self.tree == other.tree
            && self.multikey == other.multikey
            && self.multikey_paths == other.multikey_paths
            && self.wildcard_multikey == other.wildcard_multikey
            && self.entries == other.entries
            && self.key_bytes == other.key_bytes
    }
}

impl CollectionMeta {
    /// A new, empty collection.
    pub fn new(options: RawDocumentBuf, uuid: [u8; 16], compressor: Compressor) -> CollectionMeta {
        CollectionMeta {
            records: Records::empty(compressor),
            ids: Tree::EMPTY,
            next_rid: 1,
            count: 0,
            size: 0,
            stored: 0,
            options,
            uuid,
            indexes: Vec::new(),
            kind: Kind::Documents,
        }
    }

    /// The secondary index named `name`.
    pub fn index(&self, name: &str) -> Option<&IndexMeta> {
        self.indexes.iter().find(|index| index.name() == name)
    }

    pub(crate) fn encode(&self) -> RawDocumentBuf {
        let mut doc = rawdoc! {
            "records": to_i64(self.records.root()),
            "ids": to_i64(self.ids.root()),
            "next": to_i64(self.next_rid),
            "count": to_i64(self.count),
            "size": to_i64(self.size),
            "options": self.options.clone(),
            "uuid": bson::Binary { subtype: BinarySubtype::Uuid, bytes: self.uuid.to_vec() },
        };
        // Absent for raw records: such an entry is byte-identical to format 2's.
        if self.records.compressor() != Compressor::None {
            doc.append(cstr!("compressor"), self.records.compressor().name());
            doc.append(cstr!("stored"), to_i64(self.stored));
        }
        // Absent while there are none: such an entry is byte-identical to format 1.
        if !self.indexes.is_empty() {
            let mut list = RawArrayBuf::new();
            for index in &self.indexes {
                list.push(index.encode());
            }
            doc.append(cstr!("indexes"), list);
        }
        // Absent for documents: such an entry is byte-identical to format 3's.
        if self.kind == Kind::Oplog {
            doc.append(cstr!("kind"), "oplog");
        }
        doc
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
        let mut indexes = Vec::new();
        match doc.get("indexes") {
            Ok(None) => {}
            Ok(Some(bson::RawBsonRef::Array(list))) => {
                for index in list {
                    let Ok(bson::RawBsonRef::Document(index)) = index else {
                        return Err(bad("indexes"));
                    };
                    indexes.push(IndexMeta::decode(index)?);
                }
            }
            _ => return Err(bad("indexes")),
        }
        let compressor = match doc.get("compressor") {
            Ok(None) => Compressor::None,
            Ok(Some(bson::RawBsonRef::String(name))) => {
                Compressor::from_name(name).ok_or_else(|| bad("unknown compressor"))?
            }
            _ => return Err(bad("compressor")),
        };
        let kind = match doc.get("kind") {
            Ok(None) => Kind::Documents,
            Ok(Some(bson::RawBsonRef::String("oplog"))) => Kind::Oplog,
            _ => return Err(bad("kind")),
        };
        let size = int("size")?;
        let stored = match compressor {
            Compressor::None => size,
            _ => int("stored")?,
        };
        Ok(CollectionMeta {
            records: Records::from_root(int("records")?, compressor),
            ids: Tree::from_root(int("ids")?),
            next_rid: int("next")?,
            count: int("count")?,
            size,
            stored,
            options: doc
                .get_document("options")
                .map_err(|_| bad("options"))?
                .to_owned(),
            uuid,
            indexes,
            kind,
        })
    }
}

fn to_i64(value: u64) -> i64 {
    i64::try_from(value).expect("catalog counters stay below 2^63")
}

/// The key of record `rid` in a records tree.
pub fn rid_key(rid: u64) -> [u8; 8] {
    rid.to_be_bytes()
}

/// The record id stored under a records-tree key or as an `_id_` index value.
pub fn rid_of(bytes: &[u8]) -> Result<u64, StoreError> {
    let bytes: [u8; 8] = bytes
        .try_into()
        .map_err(|_| StoreError::Corrupt("record id is not 8 bytes".into()))?;
    Ok(u64::from_be_bytes(bytes))
}

#[cfg(test)]
mod tests {
    use super::{CollectionMeta, IndexMeta};
    use crate::index::spec::{IndexSpec, ParseOptions};
    use bson::rawdoc;
    use btree::Tree;
    use std::sync::Arc;

    /// An entry as format 1 (before issue 26) wrote it, field for field.
    fn format_1_entry() -> bson::RawDocumentBuf {
        rawdoc! {
            "records": 12_i64, "ids": 13_i64, "next": 4_i64, "count": 3_i64, "size": 99_i64,
            "options": { "validationLevel": "strict" },
            "uuid": bson::Binary { subtype: bson::spec::BinarySubtype::Uuid, bytes: vec![7; 16] },
        }
    }

    #[test]
    fn format_1_entries_read_and_are_written_unchanged() {
        let old = format_1_entry();
        let meta = CollectionMeta::decode(old.as_bytes()).expect("format 1 decodes");
        assert!(meta.indexes.is_empty());
        assert_eq!(meta.count, 3);
        assert_eq!(meta.encode(), old, "no indexes: byte-identical to format 1");
    }

    #[test]
    fn compressed_entries_round_trip_and_raw_ones_stay_unchanged() {
        let mut meta = CollectionMeta::decode(format_1_entry().as_bytes()).expect("decodes");
        assert_eq!(
            meta.stored, meta.size,
            "raw records: stored is the logical size"
        );
        meta.records = super::Records::from_root(12, super::Compressor::Lz4);
        meta.stored = 40;
        let bytes = meta.encode();
        assert_eq!(bytes.get_str("compressor").unwrap(), "lz4");
        let back = CollectionMeta::decode(bytes.as_bytes()).expect("decodes");
        assert_eq!(back, meta);
        let mut unknown = bson::RawDocumentBuf::new();
        for element in &bytes {
            let (key, value) = element.unwrap();
            if key.as_str() != "compressor" {
                unknown.append(key, value);
            }
        }
        unknown.append(bson::cstr!("compressor"), "brotli");
        assert!(CollectionMeta::decode(unknown.as_bytes()).is_err());
    }

    #[test]
    fn index_entries_round_trip() {
        let mut meta = CollectionMeta::decode(format_1_entry().as_bytes()).expect("decodes");
        let spec = rawdoc! {
            "key": { "a.b": 1, "c": -1 }, "name": "abc", "unique": true,
            "partialFilterExpression": { "c": { "$gt": 1 } },
        };
        let spec = IndexSpec::parse(&spec, ParseOptions::default()).expect("valid spec");
        let mut index = IndexMeta::new(Arc::new(spec));
        index.tree = Tree::from_root(77);
        index.multikey = true;
        index.multikey_paths[0].insert(1);
        index.entries = 5;
        index.key_bytes = 120;
        meta.indexes.push(index);
        let bytes = meta.encode();
        let back = CollectionMeta::decode(bytes.as_bytes()).expect("decodes");
        assert_eq!(back, meta);
        assert_eq!(back.indexes[0].spec.stored, meta.indexes[0].spec.stored);
        assert!(back.indexes[0].spec.partial.is_some());
        // Damage is corruption, never a panic.
        let mut bad = bytes.clone();
        bad.append(bson::cstr!("extra"), 1);
        assert!(
            CollectionMeta::decode(bad.as_bytes()).is_ok(),
            "unknown fields are ignored"
        );
        let broken = rawdoc! {
            "records": 0_i64, "ids": 0_i64, "next": 1_i64, "count": 0_i64, "size": 0_i64,
            "options": {},
            "uuid": bson::Binary { subtype: bson::spec::BinarySubtype::Uuid, bytes: vec![0; 16] },
            "indexes": [{ "spec": { "key": {}, "name": "x" }, "root": 0_i64 }],
        };
        assert!(CollectionMeta::decode(broken.as_bytes()).is_err());
    }
}
