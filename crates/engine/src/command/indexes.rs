//! The index commands: createIndexes, dropIndexes (and deleteIndexes) and collMod's
//! `index` option, thin over the store (`Writer::create_index`, `drop_index`,
//! `modify_index`) and the specification rules of `index::spec`.
//!
//! Each runs in one store transaction and commits once (a createIndexes of several
//! indexes builds them all or none: any failure drops the transaction), honouring
//! `writeConcern` like the write commands. A build holds the write gate for its whole
//! length (readers go on; writers wait: about 55-130 ms over 65,536 x 16 KiB documents,
//! D45) and publishes its progress on its `currentOp` entry; builds over
//! [`BUILD_LOG_DOCUMENTS_MIN`] documents or more are logged.

use super::Request;
use super::args;
use super::write::{array_values, missing, wrong_type};
use super::write_concern::WriteConcern;
use crate::engine::Engine;
use crate::error::{Error, ErrorCode};
use crate::index::display;
use crate::index::spec::{self, CreateOutcome, IndexSpec, ParseOptions};
use crate::store::{BuildObserver, CollectionMeta, Namespace};
use bson::raw::{CString, RawBsonRef};
use bson::{Bson, Document, RawDocument, RawDocumentBuf, doc};
use std::sync::Arc;
use std::time::Instant;
use wal::crashpoint;

/// Builds over this many documents or more are logged (start and end).
pub(crate) const BUILD_LOG_DOCUMENTS_MIN: u64 = 10_000;

/// Every index of a collection as specifications, `_id_` first.
pub(super) fn all_specs(meta: Option<&CollectionMeta>) -> Vec<Arc<IndexSpec>> {
    let mut out = vec![Arc::new(IndexSpec::id_index())];
    if let Some(meta) = meta {
        out.extend(meta.indexes.iter().map(|index| Arc::clone(&index.spec)));
    }
    out
}

fn number(value: usize) -> Bson {
    Bson::Int32(i32::try_from(value).unwrap_or(i32::MAX))
}

/// createIndexes: parses every requested index first (the first bad one is the error),
/// skips those that exist identically, refuses conflicts (85/86), creates the collection
/// if needed and builds the rest.
pub(super) fn create_indexes(engine: &Engine, request: &Request<'_>) -> Result<Document, Error> {
    args::check_fields(
        request,
        &[
            "indexes",
            "commitQuorum",
            "ignoreUnknownIndexOptions",
            "isTimeseriesNamespace",
        ],
    )?;
    let ns = args::collection(request)?;
    args::check_writable(&ns)?;
    let concern = WriteConcern::parse(request)?;
    let options = ParseOptions {
        ignore_unknown_options: args::opt_bool(request, "ignoreUnknownIndexOptions")?
            .unwrap_or(false),
    };
    let Some(indexes) = args::opt_array(request, "indexes")? else {
        return Err(missing("createIndexes.indexes"));
    };
    let values = array_values(indexes)?;
    if values.is_empty() {
        return Err(Error::new(
            ErrorCode::BadValue,
            "Must specify at least one index to create",
        ));
    }
    let mut requested = Vec::new();
    for (position, value) in values.into_iter().enumerate() {
        let RawBsonRef::Document(raw) = value else {
            return Err(wrong_type(
                &format!("createIndexes.indexes.{position}"),
                value,
                "object",
            ));
        };
        requested.push(IndexSpec::parse(raw, options)?);
    }
    let store = engine.store();
    let mut writer = store.write()?;
    let meta = writer.collection(&ns)?;
    let existing = all_specs(meta.as_ref());
    let before = existing.len();
    let mut known: Vec<IndexSpec> = existing.iter().map(|s| (**s).clone()).collect();
    let mut to_build = Vec::new();
    let requested_count = requested.len();
    for candidate in requested {
        if spec::check_conflict(&ns.full(), &candidate, &known)? == CreateOutcome::Create {
            known.push(candidate.clone());
            to_build.push(candidate);
        }
    }
    let created = meta.is_none();
    if created {
        writer.ensure_collection(&ns)?;
    }
    if to_build.is_empty() {
        concern.commit(writer)?;
        let mut reply = doc! {
            "numIndexesBefore": number(before),
            "numIndexesAfter": number(before),
        };
        if created {
            reply.insert("createdCollectionAutomatically", true);
        }
        reply.insert("note", "all indexes already exist");
        return Ok(reply);
    }
    let target = writer.collection(&ns)?;
    let uuid = target.as_ref().map(|m| m.uuid).unwrap_or_default();
    let documents = target.as_ref().map_or(0, |m| m.count);
    if let Some(running) = request.running() {
        writer.observe_builds(Arc::clone(running) as Arc<dyn BuildObserver>);
    }
    // Long builds are logged as mongod logs them (start, and done with the time taken).
    let logged = documents >= BUILD_LOG_DOCUMENTS_MIN;
    let started = Instant::now();
    let ctx = format!("conn{}", request.ctx.connection_id);
    let index_line = |id: i32, message: &'static str| crate::LogLine {
        millis: engine.host.now_millis(),
        severity: "I",
        component: "INDEX",
        id,
        ctx: &ctx,
        message,
    };
    for candidate in &to_build {
        if logged {
            let attr = doc! {
                "collectionUUID": uuid_text(uuid),
                "namespace": ns.full(),
                "properties": { "name": &candidate.name },
                "documents": i64::try_from(documents).unwrap_or(i64::MAX),
            };
            engine
                .recent_log
                .log(index_line(20_384, "Index build: starting"), &attr);
        }
        if let Err(error) = writer.create_index(&ns, candidate) {
            if logged {
                let attr = doc! {
                    "collectionUUID": uuid_text(uuid),
                    "namespace": ns.full(),
                    "index": &candidate.name,
                    "error": error.to_string(),
                };
                engine
                    .recent_log
                    .log(index_line(20_649, "Index build: failed"), &attr);
            }
            return Err(build_failed(store.new_uuid(), &ns, uuid, error.into()));
        }
    }
    crashpoint::hit("ddl.create_index.before_commit");
    concern.commit(writer)?;
    let now = engine.host.now_millis();
    for candidate in &to_build {
        engine.index_usage.created(uuid, &candidate.name, now);
    }
    if logged {
        let names: Vec<&str> = to_build.iter().map(|c| c.name.as_str()).collect();
        let attr = doc! {
            "collectionUUID": uuid_text(uuid),
            "namespace": ns.full(),
            "indexesBuilt": names,
            "durationMillis": i64::try_from(started.elapsed().as_millis()).unwrap_or(i64::MAX),
        };
        engine.recent_log.log(
            index_line(20_663, "Index build: completed successfully"),
            &attr,
        );
    }
    let mut reply = doc! {
        "numIndexesBefore": number(before),
        "numIndexesAfter": number(before + to_build.len()),
        "createdCollectionAutomatically": created,
    };
    if to_build.len() < requested_count {
        reply.insert("note", "index already exists");
    }
    Ok(reply)
}

/// A UUID as mongod prints it: 8-4-4-4-12 lowercase hex digits.
fn uuid_text(uuid: [u8; 16]) -> String {
    let hex: String = uuid.iter().map(|b| format!("{b:02x}")).collect();
    format!(
        "{}-{}-{}-{}-{}",
        &hex[..8],
        &hex[8..12],
        &hex[12..16],
        &hex[16..20],
        &hex[20..]
    )
}

/// A failed build's error as mongod's index build coordinator reports it: the cause
/// (a duplicate key, a document the index refuses) with the build's context before it.
fn build_failed(build: [u8; 16], ns: &Namespace, collection: [u8; 16], cause: Error) -> Error {
    let message = format!(
        "Index build failed: {}: Collection {ns} ( {} ) :: caused by :: {cause}",
        uuid_text(build),
        uuid_text(collection)
    );
    match cause {
        Error::WithInfo { code, info, .. } => Error::WithInfo {
            code,
            message,
            info,
        },
        other => Error::new(other.code(), message),
    }
}

fn cannot_drop_id() -> Error {
    Error::new(ErrorCode::InvalidOptions, "cannot drop _id index")
}

fn index_not_found(message: String) -> Error {
    Error::new(ErrorCode::Other(27, "IndexNotFound"), message)
}

/// The names of the indexes whose key pattern equals `key` (values compared as numbers,
/// as mongod's simple comparator does: `{a: 1}` finds `{a: 1.0}`).
fn by_key_pattern(specs: &[Arc<IndexSpec>], key: &Document) -> Vec<Arc<IndexSpec>> {
    specs
        .iter()
        .filter(|spec| {
            spec.key_pattern.len() == key.len()
                && spec
                    .key_pattern
                    .iter()
                    .zip(key.iter())
                    .all(|((a, x), (b, y))| {
                        a == b
                            && bson_canonical::compare_values(raw(x).as_ref(), raw(y).as_ref())
                                .is_eq()
                    })
        })
        .cloned()
        .collect()
}

/// A value as raw BSON for the canonical comparison.
fn raw(value: &Bson) -> RawValue {
    RawValue(bson::RawBson::try_from(value.clone()).unwrap_or(bson::RawBson::Null))
}

struct RawValue(bson::RawBson);

impl RawValue {
    fn as_ref(&self) -> RawBsonRef<'_> {
        self.0.as_raw_bson_ref()
    }
}

/// The indexes a dropIndexes `index` argument names (never `_id_`), in catalog order.
fn named_for_drop(specs: &[Arc<IndexSpec>], index: RawBsonRef<'_>) -> Result<Vec<String>, Error> {
    let find_name = |name: &str| -> Result<String, Error> {
        if name == "_id_" {
            return Err(cannot_drop_id());
        }
        specs
            .iter()
            .find(|s| s.name == name)
            .map(|s| s.name.clone())
            .ok_or_else(|| index_not_found(format!("index not found with name [{name}]")))
    };
    match index {
        RawBsonRef::String("*") => Ok(specs
            .iter()
            .filter(|s| !s.is_id())
            .map(|s| s.name.clone())
            .collect()),
        RawBsonRef::String(name) => Ok(vec![find_name(name)?]),
        RawBsonRef::Document(key) => {
            let key = Document::try_from(key)
                .map_err(|e| Error::new(ErrorCode::InvalidBson, e.to_string()))?;
            let found = by_key_pattern(specs, &key);
            match found.as_slice() {
                [] => Err(index_not_found(format!(
                    "can't find index with key: {}",
                    display::document(&key)
                ))),
                [one] if one.is_id() => Err(cannot_drop_id()),
                [one] => Ok(vec![one.name.clone()]),
                several => Err(Error::new(
                    ErrorCode::Other(289, "AmbiguousIndexKeyPattern"),
                    format!(
                        "{} indexes found for key: {}, identify by name instead. Conflicting \
                         indexes: {}",
                        several.len(),
                        display::document(&key),
                        several
                            .iter()
                            .map(|s| display::document(&s.stored))
                            .collect::<Vec<_>>()
                            .join(", ")
                    ),
                )),
            }
        }
        RawBsonRef::Array(names) => {
            let mut out = Vec::new();
            for name in array_values(names)? {
                match name {
                    RawBsonRef::String(name) => out.push(find_name(name)?),
                    other => return Err(wrong_type("dropIndexes.index", other, "string")),
                }
            }
            Ok(out)
        }
        other => Err(wrong_type("dropIndexes.index", other, "string")),
    }
}

/// dropIndexes (and deleteIndexes): by name, by key pattern, a list of names or `"*"`
/// (every index but `_id_`); `_id_` is refused with 72, an unknown index is 27.
pub(super) fn drop_indexes(engine: &Engine, request: &Request<'_>) -> Result<Document, Error> {
    args::check_fields(request, &["index", "isTimeseriesNamespace"])?;
    let ns = args::collection(request)?;
    args::check_writable(&ns)?;
    let concern = WriteConcern::parse(request)?;
    let index = match request.body.get("index") {
        Ok(Some(index)) => index,
        _ => return Err(missing(&format!("{}.index", request.name))),
    };
    let store = engine.store();
    let mut writer = store.write()?;
    let Some(meta) = writer.collection(&ns)? else {
        return Err(Error::new(
            ErrorCode::NamespaceNotFound,
            format!("ns not found {ns}"),
        ));
    };
    let specs = all_specs(Some(&meta));
    let names = named_for_drop(&specs, index)?;
    for name in &names {
        writer.drop_index(&ns, name)?;
    }
    crashpoint::hit("ddl.drop_index.before_commit");
    concern.commit(writer)?;
    let mut reply = doc! { "nIndexesWas": number(specs.len()) };
    if matches!(index, RawBsonRef::String("*")) {
        reply.insert("msg", "non-_id indexes dropped for collection");
    }
    Ok(reply)
}

/// `options` with each of `fields` replaced where it is, or appended; an empty `validator`
/// removes the validator (mongod lists none then).
fn with_fields(
    options: &RawDocument,
    fields: &[(CString, RawBsonRef<'_>)],
) -> Result<RawDocumentBuf, Error> {
    let mut out = RawDocumentBuf::new();
    for element in options.iter() {
        let (key, value) =
            element.map_err(|e| Error::new(ErrorCode::InvalidBson, e.to_string()))?;
        let value = fields
            .iter()
            .find(|(k, _)| k.as_str() == key.as_str())
            .map_or(value, |(_, v)| *v);
        if !empty_validator(key.as_str(), value) {
            out.append(key, value);
        }
    }
    for (key, value) in fields {
        let present = options.get(key.as_str()).ok().flatten().is_some();
        if !present && !empty_validator(key.as_str(), *value) {
            out.append(key.clone(), *value);
        }
    }
    Ok(out)
}

fn empty_validator(key: &str, value: RawBsonRef<'_>) -> bool {
    key == "validator" && matches!(value, RawBsonRef::Document(d) if d.is_empty())
}

/// collMod's `index` option: `{keyPattern | name, hidden, expireAfterSeconds}`. Returns
/// the reply fields mongod adds (`hidden_old`/`hidden_new`,
/// `expireAfterSeconds_old`/`_new`), or `None` when the request has no `index`.
pub(super) fn coll_mod_index(
    writer: &mut crate::store::Writer<'_>,
    ns: &Namespace,
    meta: &CollectionMeta,
    index: &RawDocument,
) -> Result<Document, Error> {
    let specs = all_specs(Some(meta));
    let mut target = None;
    let mut hidden = None;
    let mut expire = None;
    let mut prepare_unique = None;
    let mut unique = None;
    for element in index {
        let (key, value) =
            element.map_err(|e| Error::new(ErrorCode::InvalidBson, e.to_string()))?;
        match key.as_str() {
            "name" => {
                let RawBsonRef::String(name) = value else {
                    return Err(wrong_type("collMod.index.name", value, "string"));
                };
                target = Some(
                    specs
                        .iter()
                        .find(|s| s.name == name)
                        .cloned()
                        .ok_or_else(|| {
                            index_not_found(format!("cannot find index {name} for ns {ns}"))
                        })?,
                );
            }
            "keyPattern" => {
                let RawBsonRef::Document(key) = value else {
                    return Err(wrong_type("collMod.index.keyPattern", value, "object"));
                };
                let key = Document::try_from(key)
                    .map_err(|e| Error::new(ErrorCode::InvalidBson, e.to_string()))?;
                let found = by_key_pattern(&specs, &key);
                target = Some(found.first().cloned().ok_or_else(|| {
                    index_not_found(format!(
                        "cannot find index {} for ns {ns}",
                        display::document(&key)
                    ))
                })?);
            }
            "hidden" => match value {
                RawBsonRef::Boolean(flag) => hidden = Some(flag),
                other => return Err(wrong_type("collMod.index.hidden", other, "bool")),
            },
            "prepareUnique" => match value {
                RawBsonRef::Boolean(flag) => prepare_unique = Some(flag),
                other => return Err(wrong_type("collMod.index.prepareUnique", other, "bool")),
            },
            "unique" => match value {
                RawBsonRef::Boolean(flag) => unique = Some(flag),
                other => return Err(wrong_type("collMod.index.unique", other, "bool")),
            },
            "expireAfterSeconds" => {
                expire = Some(
                    value
                        .as_i64()
                        .or_else(|| value.as_i32().map(i64::from))
                        .or_else(|| value.as_f64().map(|x| x as i64))
                        .ok_or_else(|| {
                            wrong_type("collMod.index.expireAfterSeconds", value, "long")
                        })?,
                )
            }
            other => {
                return Err(Error::new(
                    ErrorCode::Location(40415),
                    format!("BSON field 'collMod.index.{other}' is an unknown field."),
                ));
            }
        }
    }
    let Some(target) = target else {
        return Err(Error::new(
            ErrorCode::InvalidOptions,
            "must specify either index name or key pattern for collMod",
        ));
    };
    if hidden.is_none() && expire.is_none() && prepare_unique.is_none() && unique.is_none() {
        return Err(Error::new(
            ErrorCode::InvalidOptions,
            "no expireAfterSeconds, hidden, prepareUnique or unique field",
        ));
    }
    if target.is_id() && hidden.is_some() {
        return Err(Error::new(ErrorCode::BadValue, "can't hide _id index"));
    }
    let mut stored = target.stored.clone();
    let mut reply = Document::new();
    if let Some(expire) = expire {
        let Some(old) = target.expire_after_seconds else {
            return Err(Error::new(
                ErrorCode::InvalidOptions,
                "no expireAfterSeconds field to update",
            ));
        };
        if !(0..=i64::from(i32::MAX)).contains(&expire) {
            return Err(Error::new(
                ErrorCode::InvalidOptions,
                "TTL index 'expireAfterSeconds' option must be within an acceptable range, \
                 try a lower number",
            ));
        }
        if i64::from(old) != expire {
            reply.insert("expireAfterSeconds_old", i64::from(old));
            reply.insert("expireAfterSeconds_new", expire);
            stored.insert("expireAfterSeconds", expire);
        }
    }
    if let Some(hidden) = hidden
        && hidden != target.hidden
    {
        reply.insert("hidden_old", target.hidden);
        reply.insert("hidden_new", hidden);
        if hidden {
            stored.insert("hidden", true);
        } else {
            stored.remove("hidden");
        }
    }
    if let Some(prepare) = prepare_unique {
        if target.is_id() {
            return Err(Error::new(
                ErrorCode::BadValue,
                "can't modify unique or prepareUnique settings on _id index",
            ));
        }
        if prepare != target.prepare_unique && !target.unique {
            reply.insert("prepareUnique_old", target.prepare_unique);
            reply.insert("prepareUnique_new", prepare);
            if prepare {
                stored.insert("prepareUnique", true);
            } else {
                stored.remove("prepareUnique");
            }
        }
    }
    if let Some(unique) = unique {
        if target.is_id() {
            return Err(Error::new(
                ErrorCode::BadValue,
                "can't modify unique or prepareUnique settings on _id index",
            ));
        }
        if !unique {
            // mongod 7.0 converts only toward unique.
            return Err(Error::new(
                ErrorCode::BadValue,
                "Cannot make index non-unique",
            ));
        }
        if !target.unique {
            let prepared = target.prepare_unique || prepare_unique == Some(true);
            if !prepared {
                return Err(Error::new(
                    ErrorCode::InvalidOptions,
                    "Cannot make index unique with 'prepareUnique: false'. Run collMod to set \
                     it first.",
                ));
            }
            let groups = writer.duplicate_groups(ns, &target.name)?;
            if !groups.is_empty() {
                return Err(cannot_convert(writer, ns, groups)?);
            }
            reply.insert("unique_new", true);
            stored.insert("unique", true);
            stored.remove("prepareUnique");
        }
    }
    if !reply.is_empty() {
        let raw = bson::RawDocumentBuf::try_from(&stored)
            .map_err(|e| Error::new(ErrorCode::InternalError, e.to_string()))?;
        let spec = IndexSpec::parse(&raw, ParseOptions::default())?;
        writer.modify_index(ns, &target.name, &spec)?;
    }
    Ok(reply)
}

/// mongod's 359 CannotConvertIndexToUnique, listing the `_id`s of each group of
/// documents that share a key (`violations: [{ids: [...]}, ...]`).
fn cannot_convert(
    writer: &mut crate::store::Writer<'_>,
    ns: &Namespace,
    groups: Vec<Vec<u64>>,
) -> Result<Error, Error> {
    let mut violations = Vec::new();
    for group in groups {
        let mut ids = Vec::new();
        for rid in group {
            let Some(doc) = writer.get(ns, rid)? else {
                continue;
            };
            let id = doc
                .get("_id")
                .ok()
                .flatten()
                .and_then(|id| Bson::try_from(id).ok())
                .unwrap_or(Bson::Null);
            ids.push(id);
        }
        violations.push(Bson::Document(bson::doc! { "ids": ids }));
    }
    Ok(Error::WithInfo {
        code: ErrorCode::Other(359, "CannotConvertIndexToUnique"),
        message: "Cannot convert the index to unique. Please resolve conflicting documents \
                  before running collMod again."
            .to_owned(),
        info: Box::new(bson::doc! { "violations": violations }),
    })
}

/// collMod: the `index` option (hidden, expireAfterSeconds, prepareUnique, unique) and
/// the validation options (`validator`, `validationLevel`, `validationAction`, checked as
/// `create` checks them); views, time-series and the rest are refused with 238 rather than
/// accepted and ignored, unknown options with 40415 as mongod refuses them.
pub(super) fn coll_mod(engine: &Engine, request: &Request<'_>) -> Result<Document, Error> {
    let ns = args::collection(request)?;
    args::check_writable(&ns)?;
    let concern = WriteConcern::parse(request)?;
    let mut index = None;
    let mut validation = Vec::new();
    for element in request.body.iter().skip(1) {
        let (key, value) =
            element.map_err(|e| Error::new(ErrorCode::InvalidBson, e.to_string()))?;
        if args::GENERIC_ARGS.contains(&key.as_str()) {
            continue;
        }
        match (key.as_str(), value) {
            ("index", RawBsonRef::Document(doc)) => index = Some(doc),
            ("index", other) => return Err(wrong_type("collMod.index", other, "object")),
            ("validator" | "validationLevel" | "validationAction", _) => {
                let key = CString::try_from(key.as_str())
                    .map_err(|e| Error::new(ErrorCode::InvalidBson, e.to_string()))?;
                validation.push((key, value));
            }
            (
                "viewOn"
                | "pipeline"
                | "expireAfterSeconds"
                | "changeStreamPreAndPostImages"
                | "timeseries"
                | "clusteredIndex"
                | "cappedSize"
                | "cappedMax"
                | "dryRun",
                _,
            ) => {
                return Err(Error::new(
                    ErrorCode::NotImplemented,
                    format!("collMod option '{key}' is not supported yet"),
                ));
            }
            (other, _) => {
                return Err(Error::new(
                    ErrorCode::Location(40415),
                    format!("BSON field 'collMod.{other}' is an unknown field."),
                ));
            }
        }
    }
    super::ddl::check_validation(request)?;
    let store = engine.store();
    let mut writer = store.write()?;
    let Some(meta) = writer.collection(&ns)? else {
        return Err(Error::new(
            ErrorCode::NamespaceNotFound,
            format!("ns does not exist: {ns}"),
        ));
    };
    let reply = match index {
        Some(index) => coll_mod_index(&mut writer, &ns, &meta, index)?,
        None => Document::new(),
    };
    if !validation.is_empty() {
        let options = with_fields(&meta.options, &validation)?;
        writer.modify_options(&ns, options)?;
    }
    concern.commit(writer)?;
    Ok(reply)
}
