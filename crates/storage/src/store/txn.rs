//! Reading and writing the database: `Reader` (a snapshot) and `Writer` (the one write
//! transaction, logged).
//!
//! A `Writer` moves through: Open (`Store::write`: takes the write gate, begins the pager
//! write transaction) → operations applied to the trees and collected as log `Op`s →
//! `commit` (catalog entries written back, one or more WAL records appended, the pager
//! transaction published, the gate released, then the group commit waited for) or
//! dropped (everything discarded, nothing logged).
//!
//! Invariants:
//! - Every change a `Writer` makes goes through `apply`, the same function replay uses,
//!   so the live state and the replayed state cannot differ.
//! - The `_id_` index holds exactly one entry per record, keyed by the canonical key of
//!   its `_id`: 1, 1i64 and 1.0 are one key.
//! - Every secondary index changes only inside `apply`, derived from the document change
//!   being applied (`indexes::plan`, then `indexes::apply`), so replay regenerates every
//!   entry; an operation refused by a unique index or by key generation is refused before
//!   its first change.

use super::catalog::{CATALOG, CollectionMeta, Namespace, rid_key, rid_of};
use super::indexes::{self, BuildObserver, IndexCheck, KeyRange, WalkPosition, WalkTarget};
use super::log::{Op, Patch};
use super::meta_cache::MetaCache;
use super::oplog::{self, Entry, Kind};
use super::records::Records;
use super::{Store, StoreError};
use crate::index::spec::{IndexSpec, ParseOptions};
use bson::raw::RawBsonRef;
use bson::{RawDocument, RawDocumentBuf, rawdoc};
use btree::PageRead;
use pager::{ReadTxn, WriteTxn};
use parking_lot::MutexGuard;
use std::borrow::Cow;
use std::collections::{BTreeMap, HashMap};
use std::ops::Bound;
use std::sync::Arc;
use wal::crashpoint;

/// A record: its id and its document bytes, borrowed from the file when possible.
pub type Record<'t> = (u64, Cow<'t, [u8]>);

/// The canonical `_id_` index key of a document's `_id` (missing `_id` indexes as null).
pub fn id_key(doc: &RawDocument) -> Vec<u8> {
    match doc.get("_id") {
        Ok(Some(value)) => bson_canonical::encode(value),
        _ => bson_canonical::encode(RawBsonRef::Null),
    }
}

/// Reads one collection entry from the catalog.
fn load_meta<T: PageRead>(txn: &T, ns: &Namespace) -> Result<Option<CollectionMeta>, StoreError> {
    match CATALOG.get(txn, ns.full().as_bytes())? {
        Some(bytes) => CollectionMeta::decode(&bytes).map(Some),
        None => Ok(None),
    }
}

/// Every collection entry of database `db` (all databases when `None`), in name order.
fn list_metas<T: PageRead>(
    txn: &T,
    db: Option<&str>,
) -> Result<Vec<(Namespace, CollectionMeta)>, StoreError> {
    let prefix = db.map(|db| format!("{db}."));
    let lower = prefix
        .as_deref()
        .map_or(Bound::Unbounded, |p| Bound::Included(p.as_bytes()));
    let mut out = Vec::new();
    for entry in CATALOG.range(txn, lower, Bound::Unbounded)? {
        let (key, value) = entry?;
        if let Some(prefix) = &prefix
            && !key.starts_with(prefix.as_bytes())
        {
            break;
        }
        let name = std::str::from_utf8(&key)
            .ok()
            .and_then(Namespace::parse)
            .ok_or_else(|| StoreError::Corrupt("catalog key is not a namespace".into()))?;
        out.push((name, CollectionMeta::decode(&value)?));
    }
    Ok(out)
}

/// The record whose `_id` equals `id` (canonically), with its id.
fn lookup_id<'t, T: PageRead>(
    txn: &'t T,
    meta: &CollectionMeta,
    id: RawBsonRef<'_>,
) -> Result<Option<Record<'t>>, StoreError> {
    let Some(rid) = meta.ids.get(txn, &bson_canonical::encode(id))? else {
        return Ok(None);
    };
    indexed_record(txn, meta.records, &rid).map(Some)
}

/// The record an `_id_` entry's value `rid` names in `records`; its absence is corruption.
fn indexed_record<'t, T: PageRead>(
    txn: &'t T,
    records: Records,
    rid: &[u8],
) -> Result<Record<'t>, StoreError> {
    let rid = rid_of(rid)?;
    match records.get(txn, &rid_key(rid))? {
        Some(doc) => Ok((rid, doc)),
        None => Err(StoreError::Corrupt(format!(
            "_id_ index names record {rid}, which does not exist"
        ))),
    }
}

/// A consistent snapshot of the whole database.
pub struct Reader<'s> {
    pub(crate) txn: ReadTxn<'s>,
    pub(crate) metas: &'s MetaCache,
}

impl<'s> Reader<'s> {
    /// The pager transaction, for iterating a collection's trees.
    pub fn txn(&self) -> &ReadTxn<'s> {
        &self.txn
    }

    /// The catalog entry of `ns`.
    pub fn collection(&self, ns: &Namespace) -> Result<Option<CollectionMeta>, StoreError> {
        let seq = self.txn.seq();
        if let Some(meta) = self.metas.get(seq, ns) {
            return Ok(Some(meta));
        }
        let meta = load_meta(&self.txn, ns)?;
        if let Some(meta) = &meta {
            self.metas.put(seq, ns, meta);
        }
        Ok(meta)
    }

    /// The collections of `db` (every database when `None`), in name order.
    pub fn collections(
        &self,
        db: Option<&str>,
    ) -> Result<Vec<(Namespace, CollectionMeta)>, StoreError> {
        list_metas(&self.txn, db)
    }

    /// The record `rid` of a collection.
    pub fn get(
        &self,
        meta: &CollectionMeta,
        rid: u64,
    ) -> Result<Option<Cow<'_, [u8]>>, StoreError> {
        meta.records.get(&self.txn, &rid_key(rid))
    }

    /// The record whose `_id` is `id`.
    pub fn find_id(
        &self,
        meta: &CollectionMeta,
        id: RawBsonRef<'_>,
    ) -> Result<Option<Record<'_>>, StoreError> {
        lookup_id(&self.txn, meta, id)
    }

    /// Every record in `_id` order (descending when `forward` is false), walking the `_id_`
    /// index: lazily, so a caller that needs the first few stops after them.
    pub fn by_id_order(
        &self,
        meta: &CollectionMeta,
        forward: bool,
    ) -> Result<impl Iterator<Item = Result<Record<'_>, StoreError>> + '_, StoreError> {
        let entries = meta.ids.iter(&self.txn)?;
        let entries: Box<dyn Iterator<Item = _> + '_> = if forward {
            Box::new(entries)
        } else {
            Box::new(entries.rev())
        };
        let records = meta.records;
        Ok(entries.map(move |entry| {
            let (_, rid) = entry?;
            indexed_record(&self.txn, records, &rid)
        }))
    }

    /// Entries of the secondary index `name` whose encoded key lies within
    /// `(lower, upper)`, as (index key, record id) in key order: the planner's seam. The
    /// keys are `bson_canonical::key` encodings, one per key field, concatenated.
    pub fn index_scan(
        &self,
        meta: &CollectionMeta,
        name: &str,
        lower: Bound<&[u8]>,
        upper: Bound<&[u8]>,
    ) -> Result<impl Iterator<Item = Result<(Vec<u8>, u64), StoreError>> + '_, StoreError> {
        let index = meta
            .index(name)
            .ok_or_else(|| StoreError::Corrupt(format!("no index {name}")))?;
        indexes::scan(&self.txn, index, lower, upper)
    }

    /// Walks `ranges` of `target` from `position` (in descending key order when
    /// `reverse`), handing each entry's record (id and bytes) to `visit` until it answers
    /// `false`: the planner's access path. Records an
    /// index names more than once (multikey) are handed over each time.
    pub fn walk<E: From<StoreError>>(
        &self,
        meta: &CollectionMeta,
        target: &WalkTarget,
        ranges: &[KeyRange],
        reverse: bool,
        position: &mut WalkPosition,
        visit: impl FnMut(u64, &[u8]) -> Result<bool, E>,
    ) -> Result<(), E> {
        indexes::walk(&self.txn, meta, target, ranges, reverse, position, visit)
    }

    /// Hands each entry (index key and record id) of the secondary index `name` in
    /// `ranges` to `visit` without reading its record, until `visit` answers `false`.
    pub fn walk_entries<E: From<StoreError>>(
        &self,
        meta: &CollectionMeta,
        name: &str,
        ranges: &[KeyRange],
        visit: impl FnMut(&[u8]) -> Result<bool, E>,
    ) -> Result<(), E> {
        indexes::walk_entries(&self.txn, meta, name, ranges, visit)
    }

    /// Compares the secondary index `name` with the entries its documents generate.
    pub fn check_index(&self, meta: &CollectionMeta, name: &str) -> Result<IndexCheck, StoreError> {
        let index = meta
            .index(name)
            .ok_or_else(|| StoreError::Corrupt(format!("no index {name}")))?;
        indexes::check(&self.txn, meta, index)
    }

    /// Records with ids after `after` (from the start when `None`), in id order.
    pub fn scan(
        &self,
        meta: &CollectionMeta,
        after: Option<u64>,
    ) -> Result<impl Iterator<Item = Result<Record<'_>, StoreError>> + '_, StoreError> {
        scan_records(&self.txn, meta, after)
    }

    /// Records with ids before `before` (from the end when `None`), in descending id order:
    /// a reverse natural-order scan.
    pub fn scan_back(
        &self,
        meta: &CollectionMeta,
        before: Option<u64>,
    ) -> Result<impl Iterator<Item = Result<Record<'_>, StoreError>> + '_, StoreError> {
        let key = before.map(rid_key);
        let upper = excluding(key.as_ref());
        Ok(records_between(&self.txn, meta, Bound::Unbounded, upper)?.rev())
    }

    /// Records with ids after `after` (from the start when `None`) and up to `through`
    /// (to the end when `None`), in id order (one part of a scan split by record id), each
    /// document cut down to its leading part holding the top-level `fields` (where it is
    /// stored compressed, only that part is decompressed; see
    /// [`super::Compressor::decode_leading`]); whole documents when `fields` is `None`.
    pub fn scan_leading<'f>(
        &self,
        meta: &CollectionMeta,
        after: Option<u64>,
        through: Option<u64>,
        fields: Option<&'f std::collections::BTreeSet<String>>,
    ) -> Result<impl Iterator<Item = Result<Record<'_>, StoreError>> + use<'_, 'f, 's>, StoreError>
    {
        let (lower, upper) = (after.map(rid_key), through.map(rid_key));
        let lower = lower
            .as_ref()
            .map_or(Bound::Unbounded, |k| Bound::Excluded(&k[..]));
        let upper = upper
            .as_ref()
            .map_or(Bound::Unbounded, |k| Bound::Included(&k[..]));
        let range = meta
            .records
            .range_leading(&self.txn, lower, upper, fields)?;
        Ok(range.map(|entry| {
            let (key, value) = entry?;
            Ok((rid_of(&key)?, value))
        }))
    }
}

fn scan_records<'t, T: PageRead>(
    txn: &'t T,
    meta: &CollectionMeta,
    after: Option<u64>,
) -> Result<impl Iterator<Item = Result<Record<'t>, StoreError>> + 't, StoreError> {
    let key = after.map(rid_key);
    records_between(txn, meta, excluding(key.as_ref()), Bound::Unbounded)
}

/// The tree-key bound that leaves out record `key` (none when `None`).
fn excluding(key: Option<&[u8; 8]>) -> Bound<&[u8]> {
    key.map_or(Bound::Unbounded, |k| Bound::Excluded(&k[..]))
}

/// The records with ids between the tree-key bounds, with their ids, either way round.
fn records_between<'t, T: PageRead>(
    txn: &'t T,
    meta: &CollectionMeta,
    lower: Bound<&[u8]>,
    upper: Bound<&[u8]>,
) -> Result<impl DoubleEndedIterator<Item = Result<Record<'t>, StoreError>> + use<'t, T>, StoreError>
{
    let range = meta.records.range(txn, lower, upper)?;
    Ok(range.map(|entry| {
        let (key, value) = entry?;
        Ok((rid_of(&key)?, value))
    }))
}

/// The write transaction: every change is applied to the trees and logged.
pub struct Writer<'s> {
    pub(crate) store: &'s Store,
    pub(crate) txn: WriteTxn<'s>,
    pub(crate) _gate: MutexGuard<'s, ()>,
    /// Catalog entries touched by this transaction (`None`: dropped).
    metas: BTreeMap<Namespace, Option<CollectionMeta>>,
    /// The entries of `metas` as the base snapshot had them, where they were read from it:
    /// an entry still equal to its loaded state is not rewritten at commit.
    loaded: HashMap<Namespace, Option<CollectionMeta>>,
    ops: Vec<Op>,
    logged: bool,
    /// Hears the progress of the index builds this transaction runs.
    observer: Option<Arc<dyn BuildObserver>>,
    /// What the statement being written tells its oplog entries.
    oplog_context: oplog::Context,
    /// The stamp applied for the change that follows it (consumed by that change).
    stamp: Option<oplog::Stamp>,
    /// Whether `local.oplog.rs` exists, once asked (a create, drop or rename of it
    /// forgets the answer).
    oplog_exists: Option<bool>,
    /// Whether documents are stored without validation (`validation`).
    pub(super) bypass_validation: bool,
}

impl<'s> Writer<'s> {
    pub(crate) fn new(
        store: &'s Store,
        gate: MutexGuard<'s, ()>,
        txn: WriteTxn<'s>,
        logged: bool,
    ) -> Writer<'s> {
        Writer {
            store,
            txn,
            _gate: gate,
            metas: BTreeMap::new(),
            loaded: HashMap::new(),
            ops: Vec::new(),
            logged,
            observer: None,
            oplog_context: oplog::Context::default(),
            stamp: None,
            oplog_exists: None,
            bypass_validation: false,
        }
    }

    /// What the statements written from here on tell their oplog entries (session fields,
    /// `stmtId`, wall time, replacement), until set again.
    pub fn set_oplog_context(&mut self, context: oplog::Context) {
        self.oplog_context = context;
    }

    /// Before a change to `ns`: when the oplog exists and records `ns`, hands out the next
    /// `ts` and applies its stamp, which the change then consumes (`super::oplog`).
    fn stamp(&mut self, ns: &Namespace) -> Result<(), StoreError> {
        if !self.logged || !oplog::records(ns) || !self.store.oplog_writes() {
            return Ok(());
        }
        let exists = match self.oplog_exists {
            Some(exists) => exists,
            None => self.meta(&oplog::namespace())?.is_some(),
        };
        self.oplog_exists = Some(exists);
        if !exists {
            return Ok(());
        }
        let wall = self.oplog_context.wall_millis.unwrap_or_else(now_millis);
        let ts = self.store.oplog_clock().next(wall);
        let stamp = oplog::Stamp::new(ts, wall, self.store.term(), &self.oplog_context);
        self.apply(Op::Stamp(stamp))
    }

    /// Writes a no-op oplog entry (`op: "n"`) with object `o` (the replica-set layer's
    /// notes), when the oplog exists and its writes are on; else does nothing.
    pub fn oplog_note(&mut self, o: RawDocumentBuf) -> Result<(), StoreError> {
        self.stamp(&Namespace::new("admin", "$cmd"))?;
        if self.stamp.is_none() {
            return Ok(());
        }
        self.apply(Op::Note { o })
    }

    /// Appends the oplog entry of `change` to `ns` (UUID `uuid`) when a stamp stands for
    /// it, and removes the oldest entries past the oplog's `size`.
    fn oplog_append(
        &mut self,
        ns: &Namespace,
        uuid: [u8; 16],
        change: &Entry<'_>,
    ) -> Result<(), StoreError> {
        let Some(stamp) = self.stamp.take() else {
            return Ok(());
        };
        let entry = oplog::entry(&stamp, ns, uuid, change);
        let oplog_ns = oplog::namespace();
        let (meta, txn) = self.meta_and_txn(&oplog_ns)?;
        meta.stored += meta
            .records
            .insert(txn, &rid_key(stamp.ts.0), entry.as_bytes())?;
        meta.count += 1;
        meta.size += entry.as_bytes().len() as u64;
        let cap = capped_size(&meta.options);
        while meta.count > 1 && cap.is_some_and(|cap| meta.size > cap) {
            let Some((key, len, stored)) = meta.records.first_sized(&*txn)? else {
                break;
            };
            meta.records.remove(txn, &key)?;
            meta.count -= 1;
            meta.size -= len;
            meta.stored -= stored;
        }
        Ok(())
    }

    /// Reports the progress of the index builds that follow to `observer`.
    pub fn observe_builds(&mut self, observer: Arc<dyn BuildObserver>) {
        self.observer = Some(observer);
    }

    /// The pager transaction, for iterating a collection's trees (as this writer sees them).
    pub fn txn(&self) -> &WriteTxn<'s> {
        &self.txn
    }

    /// The catalog entry of `ns` as this transaction sees it.
    pub fn collection(&mut self, ns: &Namespace) -> Result<Option<CollectionMeta>, StoreError> {
        Ok(self.meta(ns)?.cloned())
    }

    /// The UUID of collection `ns`, if it exists (no copy of its catalog entry).
    pub fn uuid(&mut self, ns: &Namespace) -> Result<Option<[u8; 16]>, StoreError> {
        Ok(self.meta(ns)?.map(|meta| meta.uuid))
    }

    pub(super) fn meta(&mut self, ns: &Namespace) -> Result<Option<&CollectionMeta>, StoreError> {
        if !self.metas.contains_key(ns) {
            // The readers' cache holds the entries of the newest snapshot, which is this
            // transaction's base (and `commit_nowait` fills it for the next one).
            let seq = self.txn.base_seq();
            let meta = match self.store.metas.get(seq, ns) {
                Some(meta) => Some(meta),
                None => load_meta(&self.txn, ns)?,
            };
            self.loaded.insert(ns.clone(), meta.clone());
            self.metas.insert(ns.clone(), meta);
        }
        Ok(self.metas.get(ns).and_then(Option::as_ref))
    }

    fn meta_mut(&mut self, ns: &Namespace) -> Result<&mut CollectionMeta, StoreError> {
        self.meta(ns)?;
        self.metas
            .get_mut(ns)
            .and_then(Option::as_mut)
            .ok_or_else(|| StoreError::NamespaceNotFound(ns.clone()))
    }

    /// The cached entry of `ns` and the pager transaction, borrowed together.
    fn meta_and_txn(
        &mut self,
        ns: &Namespace,
    ) -> Result<(&mut CollectionMeta, &mut WriteTxn<'s>), StoreError> {
        self.meta(ns)?;
        let Writer { metas, txn, .. } = self;
        let meta = metas.get_mut(ns).and_then(Option::as_mut);
        let meta = meta.ok_or_else(|| StoreError::NamespaceNotFound(ns.clone()))?;
        Ok((meta, txn))
    }

    /// The cached entry of `ns` (`None`: no such collection) and the pager transaction, for
    /// reading both without copying the entry.
    fn meta_and_view(
        &mut self,
        ns: &Namespace,
    ) -> Result<Option<(&CollectionMeta, &WriteTxn<'s>)>, StoreError> {
        self.meta(ns)?;
        let Writer { metas, txn, .. } = self;
        Ok(metas
            .get(ns)
            .and_then(Option::as_ref)
            .map(|meta| (meta, &*txn)))
    }

    /// The collections of `db` (every database when `None`) as this transaction sees them.
    pub fn collections(
        &mut self,
        db: Option<&str>,
    ) -> Result<Vec<(Namespace, CollectionMeta)>, StoreError> {
        let mut all: BTreeMap<Namespace, CollectionMeta> =
            list_metas(&self.txn, db)?.into_iter().collect();
        for (ns, meta) in &self.metas {
            if db.is_some_and(|db| db != ns.db) {
                continue;
            }
            match meta {
                Some(meta) => all.insert(ns.clone(), meta.clone()),
                None => all.remove(ns),
            };
        }
        Ok(all.into_iter().collect())
    }

    /// The record `rid` of `ns`.
    pub fn get(&mut self, ns: &Namespace, rid: u64) -> Result<Option<RawDocumentBuf>, StoreError> {
        self.with_record(ns, rid, RawDocument::to_owned)
    }

    /// What `read` makes of record `rid` of `ns`, borrowed where it is stored (`None`
    /// when there is no such record or collection).
    pub fn with_record<T>(
        &mut self,
        ns: &Namespace,
        rid: u64,
        read: impl FnOnce(&RawDocument) -> T,
    ) -> Result<Option<T>, StoreError> {
        let Some((meta, txn)) = self.meta_and_view(ns)? else {
            return Ok(None);
        };
        match meta.records.get(txn, &rid_key(rid))? {
            Some(bytes) => Ok(Some(read(record_doc(rid, &bytes)?))),
            None => Ok(None),
        }
    }

    /// The record of `ns` whose `_id` is `id`.
    pub fn find_id(
        &mut self,
        ns: &Namespace,
        id: RawBsonRef<'_>,
    ) -> Result<Option<(u64, RawDocumentBuf)>, StoreError> {
        self.with_id(ns, id, |rid, doc| (rid, doc.to_owned()))
    }

    /// What `read` makes of the record of `ns` whose `_id` is `id` (its record id and
    /// document, borrowed where it is stored).
    pub fn with_id<T>(
        &mut self,
        ns: &Namespace,
        id: RawBsonRef<'_>,
        read: impl FnOnce(u64, &RawDocument) -> T,
    ) -> Result<Option<T>, StoreError> {
        let Some((meta, txn)) = self.meta_and_view(ns)? else {
            return Ok(None);
        };
        match lookup_id(txn, meta, id)? {
            Some((rid, bytes)) => Ok(Some(read(rid, record_doc(rid, &bytes)?))),
            None => Ok(None),
        }
    }

    /// [`Reader::walk`] inside this transaction (its own changes included); nothing when
    /// `ns` does not exist.
    pub fn walk<E: From<StoreError>>(
        &mut self,
        ns: &Namespace,
        target: &WalkTarget,
        ranges: &[KeyRange],
        position: &mut WalkPosition,
        visit: impl FnMut(u64, &[u8]) -> Result<bool, E>,
    ) -> Result<(), E> {
        let Some((meta, txn)) = self.meta_and_view(ns)? else {
            return Ok(());
        };
        indexes::walk(txn, meta, target, ranges, false, position, visit)
    }

    /// The groups of records of `ns` that share a key in index `name` (see
    /// `collMod`'s conversion to unique).
    pub fn duplicate_groups(
        &mut self,
        ns: &Namespace,
        name: &str,
    ) -> Result<Vec<Vec<u64>>, StoreError> {
        let Some(meta) = self.meta(ns)?.cloned() else {
            return Ok(Vec::new());
        };
        let index = meta
            .index(name)
            .ok_or_else(|| StoreError::Corrupt(format!("no index {name}")))?;
        indexes::duplicate_groups(&self.txn, index)
    }

    /// Records of `ns` after `after` for which `keep` holds, in id order. An error from
    /// `keep` (an interrupted operation) stops the scan at that record and is returned.
    pub fn scan_while(
        &mut self,
        ns: &Namespace,
        after: Option<u64>,
        mut keep: impl FnMut(u64, &RawDocument) -> Result<bool, StoreError>,
    ) -> Result<Vec<(u64, RawDocumentBuf)>, StoreError> {
        self.scan_taking(ns, after, usize::MAX, |rid, doc| {
            Ok(keep(rid, doc)?.then(|| (rid, doc.to_owned())))
        })
    }

    /// The first record of `ns` after `after` for which `keep` holds, in id order; reading
    /// stops at that record (or at an error from `keep`, returned).
    pub fn find_first(
        &mut self,
        ns: &Namespace,
        after: Option<u64>,
        mut keep: impl FnMut(u64, &RawDocument) -> Result<bool, StoreError>,
    ) -> Result<Option<(u64, RawDocumentBuf)>, StoreError> {
        let found = self.scan_taking(ns, after, 1, |rid, doc| {
            Ok(keep(rid, doc)?.then(|| (rid, doc.to_owned())))
        })?;
        Ok(found.into_iter().next())
    }

    /// What `take` makes of up to `limit` records of `ns` after `after`, in id order: a
    /// record counts when `take` returns something for it (borrowed, so a caller that
    /// keeps only record ids copies no document). An error from `take` stops the scan.
    pub fn scan_taking<T>(
        &mut self,
        ns: &Namespace,
        after: Option<u64>,
        limit: usize,
        mut take: impl FnMut(u64, &RawDocument) -> Result<Option<T>, StoreError>,
    ) -> Result<Vec<T>, StoreError> {
        let Some((meta, txn)) = self.meta_and_view(ns)? else {
            return Ok(Vec::new());
        };
        let mut out = Vec::new();
        for entry in scan_records(txn, meta, after)? {
            if out.len() >= limit {
                break;
            }
            let (rid, bytes) = entry?;
            if let Some(item) = take(rid, record_doc(rid, &bytes)?)? {
                out.push(item);
            }
        }
        Ok(out)
    }

    /// Creates collection `ns`; `NamespaceExists` if it exists.
    pub fn create_collection(
        &mut self,
        ns: &Namespace,
        options: RawDocumentBuf,
    ) -> Result<(), StoreError> {
        if self.meta(ns)?.is_some() {
            return Err(StoreError::NamespaceExists(ns.clone()));
        }
        let uuid = self.store.new_uuid();
        let compressor = super::records::requested(&options)
            .map_err(StoreError::Rejected)?
            .unwrap_or(self.store.options.compressor);
        self.stamp(ns)?;
        self.apply(Op::Create {
            ns: ns.clone(),
            options,
            uuid,
            compressor,
        })
    }

    /// Creates `ns` with default options unless it exists (implicit creation on insert).
    pub fn ensure_collection(&mut self, ns: &Namespace) -> Result<(), StoreError> {
        if self.meta(ns)?.is_none() {
            self.create_collection(ns, RawDocumentBuf::new())?;
        }
        Ok(())
    }

    /// Inserts `doc` (which must carry its `_id`) into `ns`, creating the collection if
    /// needed; `DuplicateKey` when a document with an equal `_id` exists.
    pub fn insert(&mut self, ns: &Namespace, doc: &RawDocument) -> Result<u64, StoreError> {
        self.ensure_collection(ns)?;
        self.validate(ns, None, doc)?;
        let (meta, txn) = self.meta_and_txn(ns)?;
        refuse_oplog(ns, meta)?;
        if meta.ids.get(&*txn, &id_key(doc))?.is_some() {
            return Err(StoreError::duplicate(ns, doc));
        }
        let rid = meta.next_rid;
        self.stamp(ns)?;
        self.apply(Op::Insert {
            ns: ns.clone(),
            rid,
            doc: doc.to_owned(),
        })?;
        Ok(rid)
    }

    /// Replaces record `rid` of `ns` with `doc`; `DuplicateKey` when `doc`'s `_id` differs
    /// from the old one and belongs to another document.
    pub fn update(
        &mut self,
        ns: &Namespace,
        rid: u64,
        doc: &RawDocument,
    ) -> Result<(), StoreError> {
        // Refuses an `_id` another record has before it changes anything. The document
        // is copied into the log's operation only when no patch stands for it.
        refuse_oplog(ns, self.meta_mut(ns)?)?;
        self.validate(ns, Some(rid), doc)?;
        self.stamp(ns)?;
        let patch = self.update_record(ns, rid, doc)?;
        if self.logged {
            self.ops.push(match patch {
                Some(patch) => Op::Patch {
                    ns: ns.clone(),
                    rid,
                    patch,
                },
                None => Op::Update {
                    ns: ns.clone(),
                    rid,
                    doc: doc.to_owned(),
                },
            });
        }
        Ok(())
    }

    /// Deletes record `rid` of `ns`.
    pub fn delete(&mut self, ns: &Namespace, rid: u64) -> Result<(), StoreError> {
        refuse_oplog(ns, self.meta_mut(ns)?)?;
        self.stamp(ns)?;
        self.apply(Op::Delete {
            ns: ns.clone(),
            rid,
        })
    }

    /// Drops `ns` and frees its pages; returns whether it existed.
    pub fn drop_collection(&mut self, ns: &Namespace) -> Result<bool, StoreError> {
        if self.meta(ns)?.is_none() {
            return Ok(false);
        }
        self.stamp(ns)?;
        self.apply(Op::Drop { ns: ns.clone() })?;
        Ok(true)
    }

    /// Renames `from` to `to`; `NamespaceNotFound` / `NamespaceExists` as MongoDB.
    pub fn rename_collection(
        &mut self,
        from: &Namespace,
        to: &Namespace,
    ) -> Result<(), StoreError> {
        if self.meta(from)?.is_none() {
            return Err(StoreError::NamespaceNotFound(from.clone()));
        }
        if self.meta(to)?.is_some() {
            return Err(StoreError::NamespaceExists(to.clone()));
        }
        self.stamp(from)?;
        self.apply(Op::Rename {
            from: from.clone(),
            to: to.clone(),
        })
    }

    /// Builds the secondary index `spec` over `ns`'s records (the caller has checked it
    /// against the existing ones); a unique index over duplicates is `DuplicateKey`, a
    /// document the index cannot hold `Rejected`, and then nothing changed.
    pub fn create_index(&mut self, ns: &Namespace, spec: &IndexSpec) -> Result<(), StoreError> {
        let spec = bson::RawDocumentBuf::try_from(&spec.stored)
            .map_err(|e| StoreError::Corrupt(format!("index specification: {e}")))?;
        self.stamp(ns)?;
        self.apply(Op::CreateIndex {
            ns: ns.clone(),
            spec,
        })
    }

    /// Drops the secondary index `name` of `ns` and frees its pages.
    pub fn drop_index(&mut self, ns: &Namespace, name: &str) -> Result<(), StoreError> {
        self.stamp(ns)?;
        self.apply(Op::DropIndex {
            ns: ns.clone(),
            name: name.to_owned(),
        })
    }

    /// Replaces the specification of index `name` (collMod: `hidden`,
    /// `expireAfterSeconds`); its key pattern and entries stay.
    pub fn modify_index(
        &mut self,
        ns: &Namespace,
        name: &str,
        spec: &IndexSpec,
    ) -> Result<(), StoreError> {
        let spec = bson::RawDocumentBuf::try_from(&spec.stored)
            .map_err(|e| StoreError::Corrupt(format!("index specification: {e}")))?;
        self.stamp(ns)?;
        self.apply(Op::ModifyIndex {
            ns: ns.clone(),
            name: name.to_owned(),
            spec,
        })
    }

    /// Replaces the options of `ns` (collMod of `validator`, `validationLevel`,
    /// `validationAction`); the caller checked them.
    pub fn modify_options(
        &mut self,
        ns: &Namespace,
        options: RawDocumentBuf,
    ) -> Result<(), StoreError> {
        if self.meta(ns)?.is_none() {
            return Err(StoreError::NamespaceNotFound(ns.clone()));
        }
        self.stamp(ns)?;
        self.apply(Op::ModifyOptions {
            ns: ns.clone(),
            options,
        })
    }

    /// Replaces record `rid` of `ns` with `doc` (the `Update` and `Patch` operations);
    /// returns the edit that turns the old record into `doc` when one is worth logging.
    fn update_record(
        &mut self,
        ns: &Namespace,
        rid: u64,
        doc: &RawDocument,
    ) -> Result<Option<Patch>, StoreError> {
        let logged = self.logged;
        let keep_old = self.stamp.is_some();
        let (meta, txn) = self.meta_and_txn(ns)?;
        let old = stored_record(txn, ns, meta, rid, Some(doc), logged, keep_old)?;
        let new_key = id_key(doc);
        if old.id_key != new_key {
            meta.ids.remove(txn, &old.id_key)?;
            meta.ids.insert(txn, &new_key, &rid_key(rid))?;
        }
        let stored = meta.records.insert(txn, &rid_key(rid), doc.as_bytes())?;
        indexes::apply(txn, meta, rid, old.changes)?;
        meta.size = meta.size - old.len + doc.as_bytes().len() as u64;
        meta.stored = meta.stored - old.stored + stored;
        let uuid = meta.uuid;
        if let Some(before) = &old.old {
            self.oplog_append(
                ns,
                uuid,
                &Entry::Update {
                    old: before,
                    new: doc,
                },
            )?;
        }
        Ok(old.patch)
    }

    /// Applies one operation to the trees and the cached catalog, and logs it (an update
    /// whose edit is small is logged as a `Patch`).
    pub fn apply(&mut self, op: Op) -> Result<(), StoreError> {
        if let Op::Create { ns, .. } | Op::Drop { ns } | Op::Rename { from: ns, .. } = &op
            && ns.db == oplog::OPLOG_DB
        {
            self.oplog_exists = None;
        }
        if let Op::Rename { to, .. } = &op
            && to.db == oplog::OPLOG_DB
        {
            self.oplog_exists = None;
        }
        match &op {
            Op::Create {
                ns,
                options,
                uuid,
                compressor,
            } => {
                let mut meta = CollectionMeta::new(options.clone(), *uuid, *compressor);
                if *ns == oplog::namespace() {
                    meta.kind = Kind::Oplog;
                }
                self.metas.insert(ns.clone(), Some(meta));
                let mut o = rawdoc! { "create": ns.coll.as_str() };
                for field in options {
                    let (key, value) = field.map_err(|_| bad_options(ns))?;
                    o.append(key, value);
                }
                o.append(
                    bson::cstr!("idIndex"),
                    rawdoc! { "v": 2, "key": { "_id": 1 }, "name": "_id_" },
                );
                self.oplog_append(ns, *uuid, &Entry::Command { o, o2: None })?;
            }
            Op::Drop { ns } => {
                let (meta, txn) = self.meta_and_txn(ns)?;
                meta.records.destroy(txn)?;
                meta.ids.destroy(txn)?;
                for index in &mut meta.indexes {
                    index.tree.destroy(txn)?;
                }
                let (uuid, count) = (meta.uuid, meta.count);
                self.metas.insert(ns.clone(), None);
                let o = rawdoc! { "drop": ns.coll.as_str() };
                let o2 = Some(rawdoc! { "numRecords": i64::try_from(count).unwrap_or(i64::MAX) });
                self.oplog_append(ns, uuid, &Entry::Command { o, o2 })?;
            }
            Op::Rename { from, to } => {
                let uuid = self.meta_mut(from)?.uuid;
                let meta = self.metas.insert(from.clone(), None).flatten();
                self.metas.insert(to.clone(), meta);
                let o = rawdoc! {
                    "renameCollection": from.full(), "to": to.full(), "stayTemp": false,
                };
                self.oplog_append(from, uuid, &Entry::Command { o, o2: None })?;
            }
            Op::Insert { ns, rid, doc } => {
                let (meta, txn) = self.meta_and_txn(ns)?;
                // Every refusal comes before the first change.
                let changes = indexes::plan(&*txn, ns, meta, *rid, None, Some(doc))?;
                meta.ids.insert(txn, &id_key(doc), &rid_key(*rid))?;
                meta.stored += meta.records.insert(txn, &rid_key(*rid), doc.as_bytes())?;
                indexes::apply(txn, meta, *rid, changes)?;
                meta.count += 1;
                meta.size += doc.as_bytes().len() as u64;
                meta.next_rid = meta.next_rid.max(rid + 1);
                let uuid = meta.uuid;
                self.oplog_append(ns, uuid, &Entry::Insert { doc })?;
            }
            Op::Update { ns, rid, doc } => {
                // A patch comes back only for a logged writer (`update_record`).
                if let Some(patch) = self.update_record(ns, *rid, doc)? {
                    self.ops.push(Op::Patch {
                        ns: ns.clone(),
                        rid: *rid,
                        patch,
                    });
                    return Ok(());
                }
            }
            Op::Patch { ns, rid, patch } => {
                let (meta, txn) = self.meta_and_txn(ns)?;
                let old = meta.records.get(&*txn, &rid_key(*rid))?;
                let old = old.ok_or_else(|| StoreError::Corrupt(format!("no record {rid}")))?;
                let doc = patch.apply(&old)?;
                self.update_record(ns, *rid, &doc)?;
            }
            Op::Delete { ns, rid } => {
                let keep_old = self.stamp.is_some();
                let (meta, txn) = self.meta_and_txn(ns)?;
                let old = stored_record(txn, ns, meta, *rid, None, false, keep_old)?;
                meta.ids.remove(txn, &old.id_key)?;
                meta.records.remove(txn, &rid_key(*rid))?;
                indexes::apply(txn, meta, *rid, old.changes)?;
                meta.count -= 1;
                meta.size -= old.len;
                meta.stored -= old.stored;
                let uuid = meta.uuid;
                if let Some(before) = &old.old {
                    self.oplog_append(ns, uuid, &Entry::Delete { old: before })?;
                }
            }
            Op::CreateIndex { ns, spec } => {
                let spec = IndexSpec::parse(spec, ParseOptions::default())
                    .map_err(StoreError::Rejected)?;
                let observer = self.observer.clone();
                // A snapshot for a parallel scan, when it holds exactly the records this
                // transaction sees: its base, and the records tree untouched since (a
                // copy-on-write tree whose root page is clean is the base's tree).
                let scan = self.store.index_build_scan();
                let base = match self.store.pager.begin_read() {
                    Ok(base) if scan.threads > 1 && base.seq() == self.txn.base_seq() => Some(base),
                    _ => None,
                };
                let (meta, txn) = self.meta_and_txn(ns)?;
                let untouched = u32::try_from(meta.records.root())
                    .is_ok_and(|root| root != 0 && !txn.is_dirty(pager::PageId(root)));
                let base = base.filter(|_| untouched);
                if meta.index(&spec.name).is_some() {
                    return Err(StoreError::Corrupt(format!(
                        "{ns}: index {} created twice",
                        spec.name
                    )));
                }
                let stored = bson::RawDocumentBuf::try_from(&spec.stored).ok();
                let index = indexes::build(
                    txn,
                    ns,
                    meta,
                    Arc::new(spec),
                    observer.as_deref(),
                    base.as_ref().map(|base| (base, scan)),
                )?;
                meta.indexes.push(index);
                let uuid = meta.uuid;
                let mut o = rawdoc! { "createIndexes": ns.coll.as_str() };
                for field in stored.iter().flat_map(|spec| spec.iter()) {
                    let (key, value) = field.map_err(|_| bad_options(ns))?;
                    o.append(key, value);
                }
                self.oplog_append(ns, uuid, &Entry::Command { o, o2: None })?;
            }
            Op::DropIndex { ns, name } => {
                let (meta, txn) = self.meta_and_txn(ns)?;
                let position = index_position(meta, ns, name)?;
                let mut index = meta.indexes.remove(position);
                index.tree.destroy(txn)?;
                let uuid = meta.uuid;
                let o = rawdoc! { "dropIndexes": ns.coll.as_str(), "index": name.as_str() };
                let o2 = bson::RawDocumentBuf::try_from(&index.spec.stored).ok();
                self.oplog_append(ns, uuid, &Entry::Command { o, o2 })?;
            }
            Op::ModifyOptions { ns, options } => {
                let meta = self.meta_mut(ns)?;
                meta.options = options.clone();
                let uuid = meta.uuid;
                let mut o = rawdoc! { "collMod": ns.coll.as_str() };
                for key in ["validator", "validationLevel", "validationAction"] {
                    if let Ok(Some(value)) = options.get(key) {
                        o.append(
                            bson::raw::CString::try_from(key).map_err(|_| bad_options(ns))?,
                            value,
                        );
                    }
                }
                self.oplog_append(ns, uuid, &Entry::Command { o, o2: None })?;
            }
            Op::ModifyIndex { ns, name, spec } => {
                let spec = IndexSpec::parse(spec, ParseOptions::default())
                    .map_err(StoreError::Rejected)?;
                let meta = self.meta_mut(ns)?;
                let position = index_position(meta, ns, name)?;
                let index = &mut meta.indexes[position];
                if index.spec.key_pattern != spec.key_pattern {
                    return Err(StoreError::Corrupt(format!(
                        "{ns}: collMod changes the key of index {name}"
                    )));
                }
                let mut changed = rawdoc! { "name": name.as_str() };
                for key in ["hidden", "expireAfterSeconds", "prepareUnique", "unique"] {
                    if let Some(value) = spec.stored.get(key) {
                        let value =
                            bson::RawBson::try_from(value.clone()).map_err(|_| bad_options(ns))?;
                        changed.append(
                            bson::raw::CString::try_from(key).map_err(|_| bad_options(ns))?,
                            value,
                        );
                    }
                }
                index.spec = Arc::new(spec);
                let uuid = meta.uuid;
                let o = rawdoc! { "collMod": ns.coll.as_str(), "index": changed };
                self.oplog_append(ns, uuid, &Entry::Command { o, o2: None })?;
            }
            Op::Note { o } => {
                let ns = Namespace::new("", "");
                self.oplog_append(&ns, [0; 16], &Entry::Noop { o: o.clone() })?;
            }
            Op::Stamp(stamp) => {
                self.store.oplog_clock().observe(stamp.ts);
                self.stamp = Some(stamp.clone());
            }
        }
        if self.logged {
            self.ops.push(op);
        }
        Ok(())
    }

    /// Whether this (logged) transaction has changed nothing: committing it would only
    /// rewrite the catalog entries it read, so a caller may drop it instead.
    pub fn is_unchanged(&self) -> bool {
        self.logged && self.ops.is_empty()
    }

    /// Publishes the transaction and waits until it is durable.
    pub fn commit(self) -> Result<(), StoreError> {
        let store = self.store;
        if let Some(lsn) = self.commit_nowait()? {
            store.wait_durable(lsn)?;
            crashpoint::hit("txn.commit.after_sync");
        }
        Ok(())
    }

    /// Publishes the transaction; returns the LSN to wait for (`None` if nothing was logged).
    pub fn commit_nowait(mut self) -> Result<Option<wal::Lsn>, StoreError> {
        let logged = self.logged && !self.ops.is_empty();
        let metas = std::mem::take(&mut self.metas);
        let changed = metas
            .iter()
            .filter(|&(ns, meta)| self.loaded.get(ns) != Some(meta));
        for (i, (ns, meta)) in changed.enumerate() {
            if i > 0 && logged {
                crashpoint::hit("catalog.commit.between_entries");
            }
            let key = ns.full();
            match meta {
                Some(meta) => {
                    CATALOG.insert(&mut self.txn, key.as_bytes(), meta.encode().as_bytes())?;
                }
                None => {
                    CATALOG.remove(&mut self.txn, key.as_bytes())?;
                }
            }
        }
        // The snapshot this commit publishes: the next writer finds its entries here.
        let published = self.txn.base_seq() + 1;
        let store = self.store;
        // Published before it is logged: if publishing fails, nothing of the transaction
        // is in the log, so its error is a definite "not applied"; if logging fails after
        // publishing, the store fails (no reader sees the unlogged pages) and recovers.
        if let Err(error) = self.txn.commit() {
            return Err(store.fail(StoreError::from(error)));
        }
        if logged {
            crashpoint::hit("txn.commit.before_append");
        }
        let lsn = match store.log_ops(&self.ops) {
            Ok(lsn) => lsn,
            Err(error) => return Err(store.fail(error)),
        };
        if logged {
            crashpoint::hit("txn.commit.after_append");
        }
        for (ns, meta) in &metas {
            if let Some(meta) = meta {
                store.metas.put(published, ns, meta);
            }
        }
        if lsn.is_some() {
            crashpoint::hit("txn.commit.after_publish");
            store.after_commit();
        }
        Ok(lsn)
    }
}

/// The position of index `name` in `meta`; its absence is corruption (the caller checked).
fn index_position(meta: &CollectionMeta, ns: &Namespace, name: &str) -> Result<usize, StoreError> {
    meta.indexes
        .iter()
        .position(|index| index.name() == name)
        .ok_or_else(|| StoreError::Corrupt(format!("{ns}: no index {name}")))
}

/// What a write needs of the record it replaces or deletes.
struct Stored {
    id_key: Vec<u8>,
    len: u64,
    /// Bytes the record takes as stored (its length when raw).
    stored: u64,
    /// The secondary-index changes from this record to its replacement (or its removal).
    changes: Vec<indexes::Change>,
    /// The edit from this record to the one replacing it, when asked for and worth it.
    patch: Option<Patch>,
    /// The record's document, when asked for (its oplog entry needs it).
    old: Option<RawDocumentBuf>,
}

/// Record `rid` as stored: its `_id_` key, byte length, the index changes from it to `new`
/// (`None`: a delete), planned while the record is borrowed, so the old document is never
/// copied (a `new` whose `_id` another record has is `DuplicateKey`); with `diff`, also the edit from it to `new` when one is worth logging
/// (`Patch::diff`). Every refusal (a unique key) comes before the caller changes anything.
fn stored_record(
    txn: &WriteTxn<'_>,
    ns: &Namespace,
    meta: &CollectionMeta,
    rid: u64,
    new: Option<&RawDocument>,
    diff: bool,
    keep: bool,
) -> Result<Stored, StoreError> {
    let record = meta.records.get_sized(txn, &rid_key(rid))?;
    let (bytes, stored) = record.ok_or_else(|| StoreError::Corrupt(format!("no record {rid}")))?;
    let doc = RawDocument::from_bytes(&bytes)
        .map_err(|_| StoreError::Corrupt(format!("record {rid} is not BSON")))?;
    let old_key = id_key(doc);
    // The `_id_` index refuses first, as mongod's does.
    if let Some(new) = new {
        let new_key = id_key(new);
        if new_key != old_key && meta.ids.get(txn, &new_key)?.is_some() {
            return Err(StoreError::duplicate(ns, new));
        }
    }
    let changes = if meta.indexes.is_empty() {
        Vec::new()
    } else {
        indexes::plan(txn, ns, meta, rid, Some(doc), new)?
    };
    Ok(Stored {
        id_key: old_key,
        len: bytes.len() as u64,
        stored,
        changes,
        patch: new
            .filter(|_| diff)
            .and_then(|new| Patch::diff(&bytes, new.as_bytes())),
        old: keep.then(|| doc.to_owned()),
    })
}

/// Refuses a user write to the oplog, as a replica-set member does.
fn refuse_oplog(ns: &Namespace, meta: &CollectionMeta) -> Result<(), StoreError> {
    if meta.kind == Kind::Oplog {
        let message = format!("cannot write to '{ns}'");
        return Err(StoreError::Rejected(crate::error::Error::new(
            crate::error::ErrorCode::InvalidNamespace,
            message,
        )));
    }
    Ok(())
}

/// A collection's `size` option in bytes (a capped collection's, the oplog's bound).
fn capped_size(options: &RawDocument) -> Option<u64> {
    match options.get("size").ok().flatten()? {
        RawBsonRef::Int32(n) => u64::try_from(n).ok(),
        RawBsonRef::Int64(n) => u64::try_from(n).ok(),
        RawBsonRef::Double(n) if n.is_finite() && n >= 0.0 => Some(n as u64),
        _ => None,
    }
}

/// A stored option or specification that does not read back as BSON: corruption.
fn bad_options(ns: &Namespace) -> StoreError {
    StoreError::Corrupt(format!("{ns}: options or index specification are not BSON"))
}

/// Now, in milliseconds since the epoch (an oplog entry's default wall time).
fn now_millis() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| i64::try_from(d.as_millis()).unwrap_or(i64::MAX))
}

/// Record `rid`'s stored bytes as a document; bytes that are not one are corruption.
fn record_doc(rid: u64, bytes: &[u8]) -> Result<&RawDocument, StoreError> {
    RawDocument::from_bytes(bytes)
        .map_err(|_| StoreError::Corrupt(format!("record {rid} is not BSON")))
}
