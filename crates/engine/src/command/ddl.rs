//! Collection and database definition: create, drop, dropDatabase and renameCollection
//! (the index commands are in `indexes.rs`).
//!
//! Each runs in one store transaction and honours `writeConcern` like the write commands.
//! Features the storage cannot give yet (capped collections, views, time-series and
//! clustered collections, non-simple collations) are refused with `NotImplemented` (238)
//! rather than accepted and ignored. Validators (`validator`, `validationLevel`,
//! `validationAction`) are checked here ([`check_validation`], shared with collMod) and
//! enforced by the storage layer's writer (`storage::store::validation`).

use super::Request;
use super::args::{self, GENERIC_ARGS};
use super::write::{check_collation, missing, wrong_type};
use super::write_concern::WriteConcern;
use crate::engine::Engine;
use crate::error::{Error, ErrorCode};
use crate::store::Namespace;
use bson::raw::{CString, RawBsonRef};
use bson::{Document, RawDocumentBuf, doc};
use wal::crashpoint;

/// The options create takes besides the generic arguments.
const CREATE_FIELDS: &[&str] = &[
    "capped",
    "autoIndexId",
    "idIndex",
    "size",
    "max",
    "storageEngine",
    "validator",
    "validationLevel",
    "validationAction",
    "indexOptionDefaults",
    "viewOn",
    "pipeline",
    "collation",
    "timeseries",
    "expireAfterSeconds",
    "clusteredIndex",
    "changeStreamPreAndPostImages",
    "encryptedFields",
    "flags",
];

fn not_implemented(what: &str) -> Error {
    Error::new(
        ErrorCode::NotImplemented,
        format!("{what} are not supported yet"),
    )
}

fn bad_enum(request: &Request<'_>, key: &str, allowed: &[&str]) -> Result<(), Error> {
    match args::opt_str(request, key)? {
        Some(value) if !allowed.contains(&value) => Err(Error::new(
            ErrorCode::BadValue,
            format!("Enumeration value '{value}' for field '{key}' is not a valid value."),
        )),
        _ => Ok(()),
    }
}

/// create: an empty collection with the given options; succeeds without change when the
/// collection exists with identical options (MongoDB 7.0).
pub(super) fn create(engine: &Engine, request: &Request<'_>) -> Result<Document, Error> {
    args::check_fields(request, CREATE_FIELDS)?;
    let ns = args::collection(request)?;
    args::check_writable(&ns)?;
    let concern = WriteConcern::parse(request)?;
    check_create_options(request)?;
    let options = collection_options(request)?;
    let store = engine.store();
    let mut writer = store.write()?;
    if let Some(meta) = writer.collection(&ns)? {
        if meta.options == options {
            return Ok(Document::new());
        }
        return Err(Error::new(
            ErrorCode::NamespaceExists,
            format!("Collection {ns} already exists."),
        ));
    }
    writer.create_collection(&ns, options)?;
    crashpoint::hit("ddl.create.before_commit");
    concern.commit(writer)?;
    Ok(Document::new())
}

fn check_create_options(request: &Request<'_>) -> Result<(), Error> {
    if args::opt_bool(request, "capped")?.unwrap_or(false) {
        return Err(not_implemented("capped collections"));
    }
    args::opt_i64(request, "size")?;
    args::opt_i64(request, "max")?;
    args::opt_bool(request, "autoIndexId")?;
    check_validation(request)?;
    check_collation(args::opt_doc(request, "collation")?)?;
    let refused = [
        ("viewOn", "views"),
        ("pipeline", "views"),
        ("timeseries", "time-series collections"),
        ("clusteredIndex", "clustered collections"),
        ("expireAfterSeconds", "collections with expireAfterSeconds"),
        ("encryptedFields", "encrypted collections"),
    ];
    for (key, what) in refused {
        if request.body.get(key).ok().flatten().is_some() {
            return Err(not_implemented(what));
        }
    }
    let images = args::opt_doc(request, "changeStreamPreAndPostImages")?;
    if images.is_some_and(|d| super::flag(d, "enabled")) {
        return Err(not_implemented("change stream pre- and post-images"));
    }
    Ok(())
}

/// Checks the validation options of create or collMod: `validator` compiles as mongod
/// compiles it (refusing what a validator may not hold) and is not set on a collection of
/// `admin`, `local` or `config`, or on a `system.` collection; `validationLevel` and
/// `validationAction` are values mongod knows.
pub(super) fn check_validation(request: &Request<'_>) -> Result<(), Error> {
    if let Some(validator) = args::opt_doc(request, "validator")? {
        let ns = args::collection(request)?;
        if !validator.is_empty() {
            if matches!(ns.db.as_str(), "admin" | "local" | "config") {
                return Err(Error::new(
                    ErrorCode::InvalidOptions,
                    format!(
                        "Document validators are not allowed on collections in the {} database",
                        ns.db
                    ),
                ));
            }
            if ns.coll.starts_with("system.") {
                return Err(Error::new(
                    ErrorCode::InvalidOptions,
                    format!("Document validators not allowed on system collection {ns}"),
                ));
            }
        }
        query::Validator::parse(validator)?;
    }
    bad_enum(request, "validationLevel", &["off", "strict", "moderate"])?;
    bad_enum(
        request,
        "validationAction",
        &["error", "warn", "errorAndLog"],
    )?;
    Ok(())
}

/// The options a collection records (listCollections `options`): the command's fields
/// except its name and the generic arguments, as given.
fn collection_options(request: &Request<'_>) -> Result<RawDocumentBuf, Error> {
    let mut options = RawDocumentBuf::new();
    for element in request.body.iter().skip(1) {
        let (key, value) =
            element.map_err(|e| Error::new(ErrorCode::InvalidBson, e.to_string()))?;
        if GENERIC_ARGS.contains(&key.as_str()) {
            continue;
        }
        let key = CString::try_from(key.as_str())
            .map_err(|e| Error::new(ErrorCode::InvalidBson, e.to_string()))?;
        options.append(key, value);
    }
    Ok(options)
}

/// drop: `{nIndexesWas, ns}`; dropping a missing collection succeeds (MongoDB 7.0).
pub(super) fn drop(engine: &Engine, request: &Request<'_>) -> Result<Document, Error> {
    args::check_fields(request, &[])?;
    let ns = args::collection(request)?;
    args::check_writable(&ns)?;
    let concern = WriteConcern::parse(request)?;
    let store = engine.store();
    let mut writer = store.write()?;
    let meta_indexes = writer.collection(&ns)?.map_or(0, |m| m.indexes.len());
    if !writer.drop_collection(&ns)? {
        return Ok(Document::new());
    }
    crashpoint::hit("ddl.drop.before_commit");
    concern.commit(writer)?;
    let indexes = 1 + meta_indexes;
    Ok(doc! { "nIndexesWas": i32::try_from(indexes).unwrap_or(i32::MAX), "ns": ns.full() })
}

/// dropDatabase: drops every collection of the database in one transaction.
pub(super) fn drop_database(engine: &Engine, request: &Request<'_>) -> Result<Document, Error> {
    args::check_fields(request, &[])?;
    if request.db == "admin" {
        return Err(Error::new(
            ErrorCode::IllegalOperation,
            "Dropping the 'admin' database is prohibited.",
        ));
    }
    let concern = WriteConcern::parse(request)?;
    let store = engine.store();
    let mut writer = store.write()?;
    for (i, (ns, _)) in writer
        .collections(Some(request.db))?
        .into_iter()
        .enumerate()
    {
        if i > 0 {
            crashpoint::hit("ddl.drop_database.between_drops");
        }
        writer.drop_collection(&ns)?;
    }
    crashpoint::hit("ddl.drop_database.before_commit");
    concern.commit(writer)?;
    Ok(doc! { "dropped": request.db })
}

fn namespace_arg(
    value: Option<RawBsonRef<'_>>,
    path: &str,
    role: &str,
) -> Result<Namespace, Error> {
    let text = match value {
        Some(RawBsonRef::String(text)) => text,
        Some(other) => return Err(wrong_type(path, other, "string")),
        None => return Err(missing(path)),
    };
    let invalid = || {
        Error::new(
            ErrorCode::InvalidNamespace,
            format!("Invalid {role} namespace: {text}"),
        )
    };
    let ns = Namespace::parse(text).ok_or_else(invalid)?;
    if ns.db.is_empty() || ns.db.contains(['/', '\\', ' ', '"', '$', '\0']) {
        return Err(invalid());
    }
    args::check_namespace(&ns)?;
    args::check_writable(&ns)?;
    Ok(ns)
}

/// renameCollection (admin): `{renameCollection: "db.a", to: "db.b", dropTarget}`, within
/// or across databases.
pub(super) fn rename_collection(engine: &Engine, request: &Request<'_>) -> Result<Document, Error> {
    args::check_fields(request, &["to", "dropTarget", "stayTemp"])?;
    let from = namespace_arg(
        request.body.get(request.name).ok().flatten(),
        "renameCollection.renameCollection",
        "source",
    )?;
    let to = namespace_arg(
        request.body.get("to").ok().flatten(),
        "renameCollection.to",
        "target",
    )?;
    let drop_target = args::opt_bool(request, "dropTarget")?.unwrap_or(false);
    args::opt_bool(request, "stayTemp")?;
    let concern = WriteConcern::parse(request)?;
    if from == to {
        return Err(Error::new(
            ErrorCode::IllegalOperation,
            "Can't rename a collection to itself",
        ));
    }
    let store = engine.store();
    let mut writer = store.write()?;
    if writer.collection(&from)?.is_none() {
        return Err(Error::new(
            ErrorCode::NamespaceNotFound,
            format!("Source collection {from} does not exist"),
        ));
    }
    if writer.collection(&to)?.is_some() {
        if !drop_target {
            return Err(Error::new(
                ErrorCode::NamespaceExists,
                "target namespace exists",
            ));
        }
        writer.drop_collection(&to)?;
        crashpoint::hit("ddl.rename.after_drop_target");
    }
    writer.rename_collection(&from, &to)?;
    crashpoint::hit("ddl.rename.before_commit");
    concern.commit(writer)?;
    Ok(Document::new())
}
