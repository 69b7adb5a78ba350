//! Sizes and checks: listDatabases, collStats, dbStats and validate.
//!
//! Counts and data sizes are exact (the catalog keeps them). Storage and index sizes are
//! estimates from those counters, in whole pages: measuring them means reading every page
//! of every tree, which only `validate` does. `validate` runs `Store::verify` (every tree,
//! the catalog counters, page ownership) and then checks that each record of the
//! collection is well-formed BSON that its `_id_` index entry points back to.

use super::Request;
use super::args;
use crate::engine::Engine;
use crate::error::{Error, ErrorCode};
use crate::store::CollectionMeta;
use bson::{Bson, Document, RawDocument, RawDocumentBuf, doc};
use pager::limits::{PAGE_PAYLOAD_SIZE, PAGE_SIZE};
use query::Filter;
use std::collections::BTreeMap;

/// Bytes an `_id_` index entry takes on average (key, record id, cell overhead).
const INDEX_ENTRY_BYTES: u64 = 32;

/// A number as mongod's `appendNumber` writes it: int when it fits, else long.
fn number(value: u64) -> Bson {
    match i32::try_from(value) {
        Ok(small) => Bson::Int32(small),
        Err(_) => Bson::Int64(i64::try_from(value).unwrap_or(i64::MAX)),
    }
}

/// Whole pages holding `bytes` of payload at about three-quarters fill, at least one.
fn pages_bytes(bytes: u64) -> u64 {
    let usable = (PAGE_PAYLOAD_SIZE as u64) * 3 / 4;
    bytes.div_ceil(usable).max(1) * PAGE_SIZE as u64
}

/// The estimated sizes of one collection.
#[derive(Default, Clone, Copy)]
struct Sizes {
    count: u64,
    data: u64,
    storage: u64,
    index: u64,
}

/// Estimated bytes of each index of `meta`, `_id_` first.
fn index_sizes(meta: &CollectionMeta) -> Vec<(String, u64)> {
    let mut out = vec![(
        "_id_".to_owned(),
        pages_bytes(meta.count * INDEX_ENTRY_BYTES),
    )];
    for index in &meta.indexes {
        // Per entry: the key and record id, plus the cell's header and slot.
        let bytes = index.key_bytes + index.entries * 4;
        out.push((index.name().to_owned(), pages_bytes(bytes)));
    }
    out
}

impl Sizes {
    fn of(meta: &CollectionMeta) -> Sizes {
        Sizes {
            count: meta.count,
            data: meta.size,
            storage: pages_bytes(meta.stored),
            index: index_sizes(meta).iter().map(|(_, bytes)| bytes).sum(),
        }
    }

    fn add(&mut self, other: Sizes) {
        self.count += other.count;
        self.data += other.data;
        self.storage += other.storage;
        self.index += other.index;
    }

    fn average(&self) -> u64 {
        self.data.checked_div(self.count).unwrap_or(0)
    }
}

/// listDatabases: each database with collections, its estimated size, and the total.
pub(super) fn list_databases(engine: &Engine, request: &Request<'_>) -> Result<Document, Error> {
    args::check_fields(request, &["filter", "nameOnly", "authorizedDatabases"])?;
    let filter = args::opt_doc(request, "filter")?
        .map(Filter::parse)
        .transpose()?;
    let name_only = args::opt_bool(request, "nameOnly")?.unwrap_or(false);
    // mongod's `authorizedDatabases`: a user without the cluster's listDatabases action
    // sees the databases it holds privileges on, and may not ask for all of them.
    let authorized_only = match args::opt_bool(request, "authorizedDatabases")? {
        Some(false)
            if !crate::auth::authorize::may_list_all(&engine.directory(), &request.asked())? =>
        {
            return Err(Error::new(
                ErrorCode::Unauthorized,
                "not authorized on admin to execute command { listDatabases: 1, authorizedDatabases: false }",
            ));
        }
        Some(false) => false,
        _ => !crate::auth::authorize::may_list_all(&engine.directory(), &request.asked())?,
    };
    let store = engine.store();
    let reader = store.read()?;
    let mut databases: BTreeMap<String, u64> = BTreeMap::new();
    for (ns, meta) in reader.collections(None)? {
        let sizes = Sizes::of(&meta);
        *databases.entry(ns.db).or_default() += sizes.storage + sizes.index;
    }
    let mut listed = Vec::new();
    let mut total = 0u64;
    for (name, size) in databases {
        if authorized_only
            && !crate::auth::authorize::holds_any_on(&engine.directory(), &request.asked(), &name)?
        {
            continue;
        }
        let entry = doc! {
            "name": name.as_str(),
            "sizeOnDisk": i64::try_from(size).unwrap_or(i64::MAX),
            "empty": size == 0,
        };
        if let Some(filter) = &filter {
            // With nameOnly, mongod matches the filter against `{name}` alone (sizes are
            // not computed), so a filter on a size matches nothing.
            let matched = if name_only {
                doc! { "name": name.as_str() }
            } else {
                entry.clone()
            };
            let raw = RawDocumentBuf::try_from(&matched)
                .map_err(|e| Error::new(ErrorCode::InternalError, e.to_string()))?;
            if !filter.try_matches(&raw)? {
                continue;
            }
        }
        total += size;
        listed.push(Bson::Document(if name_only {
            doc! { "name": name }
        } else {
            entry
        }));
    }
    if name_only {
        return Ok(doc! { "databases": listed });
    }
    Ok(doc! {
        "databases": listed,
        "totalSize": i64::try_from(total).unwrap_or(i64::MAX),
        "totalSizeMb": i64::try_from(total >> 20).unwrap_or(i64::MAX),
    })
}

/// The `scale` option: a positive divisor for byte counts (1 when absent).
fn scale(request: &Request<'_>) -> Result<u64, Error> {
    match args::opt_i64(request, "scale")? {
        None => Ok(1),
        Some(scale) if scale > 0 => Ok(scale.unsigned_abs()),
        Some(_) => Err(Error::new(ErrorCode::BadValue, "scale has to be > 0")),
    }
}

/// collStats: counts and sizes of one collection (zeros for a missing one, as mongod).
pub(super) fn coll_stats(engine: &Engine, request: &Request<'_>) -> Result<Document, Error> {
    args::check_fields(request, &["scale", "verbose", "waitForLock"])?;
    let ns = args::collection(request)?;
    let scale = scale(request)?;
    let store = engine.store();
    let reader = store.read()?;
    let meta = reader.collection(&ns)?;
    let mut reply = doc! { "ns": ns.full() };
    reply.extend(storage_stats(meta.as_ref(), scale));
    Ok(reply)
}

/// The sizes of a collection as collStats and `$collStats`'s `storageStats` give them.
fn storage_stats(meta: Option<&crate::store::CollectionMeta>, scale: u64) -> Document {
    let sizes = meta.map(Sizes::of).unwrap_or_default();
    let mut reply = doc! {
        "size": number(sizes.data / scale),
        "count": number(sizes.count),
    };
    if sizes.count > 0 {
        reply.insert("avgObjSize", number(sizes.average()));
    }
    let indexes = meta.map_or(0, |m| 1 + m.indexes.len() as u64);
    let (storage, index) = if meta.is_some() {
        (sizes.storage / scale, sizes.index / scale)
    } else {
        (0, 0)
    };
    let mut index_sizes_doc = Document::new();
    for (name, bytes) in meta.map(index_sizes).unwrap_or_default() {
        index_sizes_doc.insert(name, number(bytes / scale));
    }
    reply.extend(doc! {
        "numOrphanDocs": 0,
        "storageSize": number(storage),
        "freeStorageSize": 0,
        "capped": false,
        "nindexes": number(indexes),
        "indexBuilds": [],
        "totalIndexSize": number(index),
        "totalSize": number(storage + index),
        "indexSizes": index_sizes_doc,
        "scaleFactor": number(scale),
    });
    if let Some(meta) = meta {
        // Where mongod puts its engine's section (`wiredTiger`): how records are stored.
        reply.insert(
            "multiforadb",
            doc! {
                "compressor": meta.records.compressor().name(),
                "storedBytes": number(meta.stored / scale),
            },
        );
    }
    reply
}

/// The one document of a `$collStats` stage over `ns`, as mongod shapes it: `ns`, `host`,
/// `localTime`, then the sections asked for. `latencyStats` comes from the operations
/// registry's per-namespace latencies (`crate::latency`, mongod's histogram buckets);
/// `queryExecStats` counts no scans (none are counted per collection). `storageStats`
/// and `count` of a missing collection fail with 26, as mongod's do.
pub(super) fn coll_stats_stage(
    engine: &Engine,
    ns: &crate::store::Namespace,
    meta: Option<&crate::store::CollectionMeta>,
    spec: &query::CollStats,
) -> Result<Document, Error> {
    let long = |n: u64| i64::try_from(n).unwrap_or(i64::MAX);
    let mut out = doc! {
        "ns": ns.full(),
        "host": engine.host.facts().hostname.as_str(),
        "localTime": bson::DateTime::from_millis(engine.host.now_millis()),
    };
    if let Some(histograms) = spec.latency {
        out.insert(
            "latencyStats",
            engine.operations.latency_stats(&ns.full(), histograms),
        );
    }
    let missing = || {
        Error::new(
            ErrorCode::NamespaceNotFound,
            format!(
                "Unable to retrieve storageStats in $collStats stage :: caused by :: \
                 Collection [{}] not found.",
                ns.full()
            ),
        )
    };
    if let Some(scale) = spec.storage {
        if meta.is_none() {
            return Err(missing());
        }
        out.insert("storageStats", storage_stats(meta, scale));
    }
    if spec.count {
        let Some(meta) = meta else {
            return Err(missing());
        };
        out.insert("count", long(meta.count));
    }
    if spec.query_exec {
        out.insert(
            "queryExecStats",
            doc! { "collectionScans": { "total": 0i64, "nonTailable": 0i64 } },
        );
    }
    Ok(out)
}

/// dbStats: the database's collections, objects and sizes.
pub(super) fn db_stats(engine: &Engine, request: &Request<'_>) -> Result<Document, Error> {
    args::check_fields(request, &["scale", "freeStorage"])?;
    let scale = scale(request)?;
    let store = engine.store();
    let reader = store.read()?;
    let collections = reader.collections(Some(request.db))?;
    let mut total = Sizes::default();
    for (_, meta) in &collections {
        total.add(Sizes::of(meta));
    }
    let average = if total.count == 0 {
        0.0
    } else {
        total.data as f64 / total.count as f64
    };
    let mut reply = doc! {
        "db": request.db,
        "collections": number(collections.len() as u64),
        "views": 0,
        "objects": number(total.count),
        "avgObjSize": average,
        "dataSize": number(total.data / scale),
        "storageSize": number(total.storage / scale),
        "indexes": number(collections.iter().map(|(_, m)| 1 + m.indexes.len() as u64).sum()),
        "indexSize": number(total.index / scale),
        "totalSize": number((total.storage + total.index) / scale),
        "scaleFactor": number(scale),
    };
    if let Some(fs) = engine.host.file_system() {
        reply.insert("fsUsedSize", number(fs.used_bytes / scale));
        reply.insert("fsTotalSize", number(fs.total_bytes / scale));
    }
    Ok(reply)
}

/// validate: the store's structural check plus this collection's record/index agreement.
pub(super) fn validate(engine: &Engine, request: &Request<'_>) -> Result<Document, Error> {
    const FLAGS: &[&str] = &[
        "full",
        "background",
        "repair",
        "metadata",
        "checkBSONConformance",
        "enforceFastCount",
        "scandata",
    ];
    args::check_fields(request, FLAGS)?;
    let ns = args::collection(request)?;
    let mut set = Vec::new();
    for &key in FLAGS {
        if args::opt_bool(request, key)? == Some(true) {
            set.push(key);
        }
    }
    check_validate_options(&set)?;
    let mut errors: Vec<String> = Vec::new();
    if let Err(error) = engine.store().verify() {
        errors.push(error.to_string());
    }
    let store = engine.store();
    let reader = store.read()?;
    let Some(meta) = reader.collection(&ns)? else {
        return Err(Error::new(
            ErrorCode::NamespaceNotFound,
            format!("Collection '{ns}' does not exist to validate."),
        ));
    };
    let mut records = 0u64;
    let mut invalid = 0u64;
    for entry in reader.scan(&meta, None)? {
        let (rid, bytes) = match entry {
            Ok(record) => record,
            Err(error) => {
                errors.push(error.to_string());
                break;
            }
        };
        records += 1;
        if let Some(problem) = check_record(&reader, &meta, rid, &bytes) {
            invalid += 1;
            errors.push(problem);
        }
    }
    if records != meta.count {
        errors.push(format!(
            "the catalog counts {} documents but {records} records exist",
            meta.count
        ));
    }
    let id_valid = errors.is_empty();
    let mut keys_per_index = doc! { "_id_": number(meta.count) };
    let mut details = doc! { "_id_": { "valid": id_valid } };
    let (mut extra, mut missing) = (Vec::new(), Vec::new());
    for index in &meta.indexes {
        let name = index.name();
        let check = reader.check_index(&meta, name)?;
        keys_per_index.insert(name, number(check.keys));
        details.insert(name, doc! { "valid": check.is_valid() });
        let entry = |rid: u64| doc! { "indexName": name, "recordId": i64::try_from(rid).unwrap_or(i64::MAX) };
        if !check.missing.is_empty() {
            errors.push(format!(
                "index {name} lacks {} entries its documents generate",
                check.missing.len()
            ));
        }
        if !check.extra.is_empty() {
            errors.push(format!(
                "index {name} holds {} entries no document generates",
                check.extra.len()
            ));
        }
        errors.extend(check.errors.iter().map(|e| format!("index {name}: {e}")));
        missing.extend(check.missing.iter().map(|&rid| Bson::Document(entry(rid))));
        extra.extend(check.extra.iter().map(|&rid| Bson::Document(entry(rid))));
    }
    let valid = errors.is_empty();
    let errors: Vec<Bson> = errors.into_iter().map(Bson::String).collect();
    Ok(doc! {
        "ns": ns.full(),
        "nInvalidDocuments": number(invalid),
        "nNonCompliantDocuments": number(invalid),
        "nrecords": number(records),
        "nIndexes": number(1 + meta.indexes.len() as u64),
        "keysPerIndex": keys_per_index,
        "indexDetails": details,
        "valid": valid,
        "repaired": false,
        "warnings": [],
        "errors": errors,
        "extraIndexEntries": extra,
        "missingIndexEntries": missing,
        "corruptRecords": [],
    })
}

/// validate's option rules, as mongod 7.0 checks them (72 InvalidOptions). Every check
/// this server has runs whatever the options say (`full`, `checkBSONConformance`,
/// `scandata` and `background` change nothing); `repair` rewrites a collection in
/// place, which mongod does only on a node taking no other writes, and this server
/// refuses on a running server.
fn check_validate_options(set: &[&str]) -> Result<(), Error> {
    let has = |key: &str| set.contains(&key);
    let refuse = |message: &str| Err(Error::new(ErrorCode::InvalidOptions, message));
    if has("metadata")
        && set
            .iter()
            .any(|key| !matches!(*key, "metadata" | "scandata"))
    {
        return refuse(
            "Running the validate command with { metadata: true } is not supported with any \
             other options",
        );
    }
    if has("background") && has("full") {
        return refuse(
            "Running the validate command with both { background: true } and { full: true } \
             is not supported.",
        );
    }
    if has("background") && has("repair") {
        return refuse(
            "Running the validate command with both { background: true } and { repair: true } \
             is not supported.",
        );
    }
    if has("repair") {
        return refuse(
            "Running the validate command with { repair: true } is not supported on a running \
             server: stop it and open the file again, which recovers it",
        );
    }
    Ok(())
}

/// What is wrong with record `rid`, if anything: bytes that are not a BSON document, or an
/// `_id_` index entry that does not lead back to it.
fn check_record(
    reader: &crate::store::Reader<'_>,
    meta: &CollectionMeta,
    rid: u64,
    bytes: &[u8],
) -> Option<String> {
    let depth = bson_canonical::limits::WIRE_NESTING_DEPTH_MAX;
    if let Err(error) = bson_canonical::validate_bson(bytes, depth) {
        return Some(format!("record {rid} is not a valid document: {error}"));
    }
    let doc = RawDocument::from_bytes(bytes).ok()?;
    let id = match doc.get("_id") {
        Ok(Some(id)) => id,
        _ => return Some(format!("record {rid} has no _id")),
    };
    match reader.find_id(meta, id) {
        Ok(Some((found, _))) if found == rid => None,
        Ok(Some((found, _))) => Some(format!(
            "the _id_ index entry of record {rid} points to record {found}"
        )),
        Ok(None) => Some(format!("record {rid} is missing from the _id_ index")),
        Err(error) => Some(error.to_string()),
    }
}
