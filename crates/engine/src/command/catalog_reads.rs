//! The catalog listings: listCollections and listIndexes, each a cursor over documents built
//! from the catalog.

use super::args;
use super::cursor::{self, Cursor, FirstBatch, Source};
use super::read_args;
use super::{Reply, Request};
use crate::engine::Engine;
use crate::error::{Error, ErrorCode};
use crate::store::{CollectionMeta, Namespace};
use bson::spec::BinarySubtype;
use bson::{Binary, Document, RawDocumentBuf, doc};
use query::Filter;
use std::collections::VecDeque;

/// The one index every collection has.
fn id_index() -> Document {
    doc! { "v": 2, "key": { "_id": 1 }, "name": "_id_" }
}

fn to_raw(doc: &Document) -> Result<RawDocumentBuf, Error> {
    RawDocumentBuf::try_from(doc).map_err(|e| Error::new(ErrorCode::InternalError, e.to_string()))
}

/// The listCollections entry of one collection.
fn collection_entry(name: &str, meta: &CollectionMeta) -> Result<Document, Error> {
    let options = Document::try_from(meta.options.as_ref())
        .map_err(|e| Error::new(ErrorCode::DataCorruptionDetected, e.to_string()))?;
    let uuid = Binary {
        subtype: BinarySubtype::Uuid,
        bytes: meta.uuid.to_vec(),
    };
    Ok(doc! {
        "name": name,
        "type": "collection",
        "options": options,
        "info": { "readOnly": false, "uuid": uuid },
        "idIndex": id_index(),
    })
}

/// `listCollections`: a cursor over the database's collections, in name order.
pub(crate) fn list_collections(engine: &Engine, request: &Request<'_>) -> Result<Reply, Error> {
    args::check_fields(
        request,
        &[
            "filter",
            "nameOnly",
            "authorizedCollections",
            "cursor",
            "includePendingDrops",
        ],
    )?;
    let filter = read_args::object_or_null(request, "filter")?
        .map(Filter::parse)
        .transpose()?;
    let name_only = args::opt_bool(request, "nameOnly")?.unwrap_or(false);
    args::opt_bool(request, "authorizedCollections")?;
    args::opt_bool(request, "includePendingDrops")?;
    let batch_size = read_args::cursor_option(request)?.flatten();
    let store = engine.store();
    let reader = store.read()?;
    let mut listed = Vec::new();
    for (ns, meta) in reader.collections(Some(request.db))? {
        let entry = collection_entry(&ns.coll, &meta)?;
        listed.push((ns.coll, entry));
    }
    drop(reader);
    // The collections mongod keeps itself, where nothing stored has their name.
    for (name, entry) in crate::system_collections::listed(engine, request.db) {
        if !listed.iter().any(|(stored, _)| stored == name) {
            listed.push((name.to_owned(), entry));
        }
    }
    listed.sort_by(|a, b| a.0.cmp(&b.0));
    let mut entries = VecDeque::new();
    for (name, entry) in listed {
        let entry = to_raw(&entry)?;
        if let Some(filter) = &filter
            && !filter.try_matches(&entry)?
        {
            continue;
        }
        entries.push_back(if name_only {
            to_raw(&doc! { "name": name.as_str(), "type": "collection" })?
        } else {
            entry
        });
    }
    let cursor = Cursor::new(
        Namespace::new(request.db, "$cmd.listCollections"),
        Source::Buffered(entries),
    );
    let first = FirstBatch {
        size: batch_size,
        single: false,
    };
    cursor::open(engine, request, cursor, first)
}

/// `listIndexes`: a cursor over a collection's indexes, `_id_` first, then in creation
/// order, each as mongod lists it (`IndexSpec::list_entry`).
pub(crate) fn list_indexes(engine: &Engine, request: &Request<'_>) -> Result<Reply, Error> {
    args::check_fields(
        request,
        &["cursor", "includeBuildUUIDs", "includeIndexBuildInfo"],
    )?;
    let ns = args::collection(request)?;
    let batch_size = read_args::cursor_option(request)?.flatten();
    let Some(meta) = engine.store().read()?.collection(&ns)? else {
        if let Some(indexes) = crate::system_collections::indexes(engine, &ns) {
            let entries = indexes.iter().map(to_raw).collect::<Result<_, _>>()?;
            let cursor = Cursor::new(
                Namespace::new(request.db, format!("$cmd.listIndexes.{}", ns.coll)),
                Source::Buffered(entries),
            );
            let first = FirstBatch {
                size: batch_size,
                single: false,
            };
            return cursor::open(engine, request, cursor, first);
        }
        let message = format!("ns does not exist: {ns}");
        return Err(Error::new(ErrorCode::NamespaceNotFound, message));
    };
    let mut entries = VecDeque::from([to_raw(&id_index())?]);
    for index in &meta.indexes {
        entries.push_back(to_raw(&index.spec.list_entry())?);
    }
    let listing = Namespace::new(request.db, format!("$cmd.listIndexes.{}", ns.coll));
    let cursor = Cursor::new(listing, Source::Buffered(entries));
    let first = FirstBatch {
        size: batch_size,
        single: false,
    };
    cursor::open(engine, request, cursor, first)
}
