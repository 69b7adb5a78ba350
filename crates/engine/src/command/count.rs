//! The count and distinct commands: a number or a set of values, no cursor.

use super::Request;
use super::access::{Reading, each_match, each_match_split, fail_on, scan_parts};
use super::args;
use super::cursor::{Deadline, corrupt_record};
use super::read_args::{self, number_i64};
use crate::engine::Engine;
use crate::error::{Error, ErrorCode};
use crate::limits::DISTINCT_BYTES_MAX;
use crate::plan::{self, Access};
use crate::store::{CollectionMeta, KeyRange, Namespace, Reader};
use bson::raw::{RawArray, RawBsonRef, RawIter};
use bson::{Bson, Document, RawDocument, doc};
use query::Filter;
use std::cell::RefCell;
use std::collections::BTreeMap;

/// `count`: `{n}`, the documents matching `query` after `skip`, at most `limit`.
pub(crate) fn count(engine: &Engine, request: &Request<'_>) -> Result<Document, Error> {
    args::check_fields(
        request,
        &[
            "query",
            "limit",
            "skip",
            "hint",
            "collation",
            "fields",
            "$queryOptions",
            "encryptionInformation",
        ],
    )?;
    let ns = args::collection(request)?;
    let spec = args::opt_doc(request, "query")?.filter(|spec| !spec.is_empty());
    let filter = spec.map(Filter::parse).transpose()?;
    // As mongod: a negative limit counts like its absolute value, and 0 is no limit.
    let limit = count_number(request, "limit")?
        .map(i64::unsigned_abs)
        .filter(|&n| n > 0);
    let skip = match count_number(request, "skip")? {
        Some(skip) => u64::try_from(skip).map_err(|_| {
            Error::new(ErrorCode::BadValue, "skip value is negative in count query")
        })?,
        None => 0,
    };
    read_args::check_collation(request)?;
    let time_ms = read_args::max_time_ms(request)?;
    let hint = read_args::hint(request)?;
    let deadline = Deadline::start(engine.host.as_ref(), time_ms);
    let store = engine.store();
    let reader = store.read()?;
    let meta = reader.collection(&ns)?;
    if let Some(meta) = &meta {
        plan::check_hint(meta, &ns, &hint)?;
    }
    let total = match (meta, &filter) {
        (None, _) => 0,
        (Some(meta), None) => meta.count,
        (Some(meta), Some(filter)) => {
            let query = plan::Query {
                want: limit.map(|n| n.saturating_add(skip)),
                ..plan::Query::of(spec, Some(filter), &hint)
            };
            let access = super::access::plan(engine, &reader, &meta, &ns, &query)?.access;
            engine.index_usage.used_by(&meta, &access);
            let wanted = limit.map_or(u64::MAX, |n| n.saturating_add(skip));
            let exact = match &access {
                Access::Index(index) => plan::exact::count_scan(&meta, index, spec),
                _ => None,
            };
            if let Some(scan) = exact {
                // Every key in the range is a match: counted without reading a record.
                let mut counted = 0u64;
                if wanted > 0 {
                    reader.walk_entries(&meta, &scan.index, &scan.access.ranges, |_| {
                        deadline.tick()?;
                        deadline.key_examined();
                        counted += 1;
                        Ok::<bool, Error>(counted < wanted)
                    })?;
                }
                return Ok(count_reply(counted, skip, limit));
            }
            let failure = RefCell::new(None);
            let wanted = limit.map_or(u64::MAX, |n| n.saturating_add(skip));
            let nothing = std::collections::BTreeSet::new();
            let reading = Reading {
                reader: &reader,
                meta: &meta,
                ns: &ns,
                filter: Some(filter),
                deadline: &deadline,
                failure: &failure,
                // Counting reads no field of its own (only the filter's).
                fields: Some(&nothing),
            };
            // Counting copies nothing: each match is looked at where it is stored.
            let parts = scan_parts(&reading, &access, engine.host.facts().cores);
            let mut counted = 0u64;
            if limit.is_none() && parts.len() > 1 {
                // Without a limit, a large collection is counted in parts on several threads.
                let visit = |n: &mut u64, _: u64, _: &[u8]| {
                    *n += 1;
                    Ok(true)
                };
                let counts = each_match_split(&reading, &parts, vec![0; parts.len()], &visit)?;
                counted = counts.iter().sum();
            } else if wanted > 0 {
                each_match(&reading, &access, |_, _| {
                    counted += 1;
                    Ok(counted < wanted)
                })?;
            }
            counted
        }
    };
    Ok(count_reply(total, skip, limit))
}

/// count's reply for `total` matches under `skip` and `limit`.
fn count_reply(total: u64, skip: u64, limit: Option<u64>) -> Document {
    let n = total.saturating_sub(skip);
    let n = limit.map_or(n, |limit| n.min(limit));
    match i32::try_from(n) {
        Ok(n) => doc! { "n": n },
        Err(_) => doc! { "n": i64::try_from(n).unwrap_or(i64::MAX) },
    }
}

/// A number option of count, read the way mongod's count parser reads it.
fn count_number(request: &Request<'_>, key: &str) -> Result<Option<i64>, Error> {
    let Some(value) = read_args::field(request, key)? else {
        return Ok(None);
    };
    match number_i64(value) {
        Some(number) => number.map(Some),
        None => {
            let message = format!("{key} value is not a valid number");
            Err(Error::new(ErrorCode::BadValue, message))
        }
    }
}

/// `distinct`: `{values}`, the distinct values `key` reaches in the documents matching
/// `query`, arrays unwound one level, in canonical order (as mongod's value set).
pub(crate) fn distinct(engine: &Engine, request: &Request<'_>) -> Result<Document, Error> {
    args::check_fields(
        request,
        &[
            "key",
            "query",
            "collation",
            "hint",
            "$queryOptions",
            "mirrored",
            "sampleId",
        ],
    )?;
    let ns = args::collection(request)?;
    let key = read_args::required_str(request, "key")?;
    let spec = read_args::object_or_null(request, "query")?;
    let filter = spec.map(Filter::parse).transpose()?;
    read_args::check_collation(request)?;
    let time_ms = read_args::max_time_ms(request)?;
    let hint = read_args::hint(request)?;
    let deadline = Deadline::start(engine.host.as_ref(), time_ms);
    let store = engine.store();
    let reader = store.read()?;
    let Some(meta) = reader.collection(&ns)? else {
        return Ok(doc! { "values": [] });
    };
    if let Some(index) = plan::exact::distinct_scan(&meta, key, spec, &hint) {
        engine.index_usage.used(meta.uuid, index.name());
        let mut set = DistinctSet::default();
        distinct_scan(&reader, &meta, &ns, index.name(), &deadline, |doc| {
            let mut reached = Vec::new();
            extract(Container::Document(doc), key, &mut reached);
            reached.into_iter().try_for_each(|value| set.insert(value))
        })?;
        return Ok(doc! { "values": set.into_values() });
    }
    let query = plan::Query::of(spec, filter.as_ref(), &hint);
    let access = super::access::plan(engine, &reader, &meta, &ns, &query)?.access;
    engine.index_usage.used_by(&meta, &access);
    let failure = RefCell::new(None);
    let reading = Reading {
        reader: &reader,
        meta: &meta,
        ns: &ns,
        filter: filter.as_ref(),
        deadline: &deadline,
        failure: &failure,
        fields: None,
    };
    let mut set = DistinctSet::default();
    each_match(&reading, &access, |rid, bytes| {
        let doc = RawDocument::from_bytes(bytes).map_err(|_| corrupt_record(&ns, rid))?;
        let mut reached = Vec::new();
        extract(Container::Document(doc), key, &mut reached);
        for value in reached {
            set.insert(value)?;
        }
        Ok(true)
    })?;
    fail_on(&failure)?;
    Ok(doc! { "values": set.into_values() })
}

/// Walks the single-field index `name` of `meta` distinct key by distinct key (mongod's
/// DISTINCT_SCAN, see `plan::exact::distinct_scan`), handing `visit` the first document
/// under each key, and every document under the keys of null, undefined and a missing
/// field (which documents with and without a value share). Returns the keys and
/// documents examined.
pub(super) fn distinct_scan(
    reader: &Reader<'_>,
    meta: &CollectionMeta,
    ns: &Namespace,
    name: &str,
    deadline: &Deadline<'_>,
    mut visit: impl FnMut(&RawDocument) -> Result<(), Error>,
) -> Result<(u64, u64), Error> {
    let mut missing = Vec::new();
    bson_canonical::key::encode_missing_into(&mut missing);
    let shared = [
        bson_canonical::key::encode(RawBsonRef::Null),
        bson_canonical::key::encode(RawBsonRef::Undefined),
        missing,
    ];
    let (mut keys, mut docs) = (0u64, 0u64);
    let mut fetch = |rid: u64, docs: &mut u64| -> Result<(), Error> {
        deadline.tick()?;
        deadline.key_examined();
        deadline.doc_examined();
        *docs += 1;
        let bytes = reader
            .get(meta, rid)?
            .ok_or_else(|| corrupt_record(ns, rid))?;
        let doc = RawDocument::from_bytes(&bytes).map_err(|_| corrupt_record(ns, rid))?;
        visit(doc)
    };
    let mut lower = Vec::new();
    loop {
        let mut first = None;
        let from = [KeyRange {
            lower: lower.clone(),
            upper: None,
        }];
        reader.walk_entries(meta, name, &from, |entry| {
            first = Some(entry_parts(ns, entry)?);
            Ok::<bool, Error>(false)
        })?;
        let Some((key, rid)) = first else {
            return Ok((keys, docs));
        };
        let next = plan::successor(&key);
        if shared.contains(&key) {
            let under = [KeyRange {
                lower: key.clone(),
                upper: next.clone(),
            }];
            reader.walk_entries(meta, name, &under, |entry| {
                keys += 1;
                fetch(entry_parts(ns, entry)?.1, &mut docs)?;
                Ok::<bool, Error>(true)
            })?;
        } else {
            keys += 1;
            fetch(rid, &mut docs)?;
        }
        match next {
            Some(next) => lower = next,
            None => return Ok((keys, docs)),
        }
    }
}

/// An index entry's key and record id (its last eight bytes, big-endian).
fn entry_parts(ns: &Namespace, entry: &[u8]) -> Result<(Vec<u8>, u64), Error> {
    let at = entry.len().checked_sub(8).ok_or_else(|| {
        let message = format!("{ns}: an index entry is shorter than a record id");
        Error::new(ErrorCode::DataCorruptionDetected, message)
    })?;
    let (key, rid) = entry.split_at(at);
    let rid: [u8; 8] = rid.try_into().expect("eight bytes");
    Ok((key.to_vec(), u64::from_be_bytes(rid)))
}

/// Distinct values keyed by their canonical encoding: equal values (1, 1.0, 1L) are one,
/// the first seen is kept, and the key order is MongoDB's value order.
#[derive(Default)]
struct DistinctSet {
    values: BTreeMap<Vec<u8>, Bson>,
    bytes: usize,
}

impl DistinctSet {
    fn insert(&mut self, value: RawBsonRef<'_>) -> Result<(), Error> {
        let key = bson_canonical::encode(value);
        if self.values.contains_key(&key) {
            return Ok(());
        }
        // mongod counts each value's BSON size; the canonical key is about as long.
        self.bytes += key.len();
        if self.bytes >= DISTINCT_BYTES_MAX {
            let message = "distinct too big, 16mb cap";
            return Err(Error::new(ErrorCode::Location(17217), message));
        }
        let value = Bson::try_from(value)
            .map_err(|e| Error::new(ErrorCode::InternalError, e.to_string()))?;
        self.values.insert(key, value);
        Ok(())
    }

    fn into_values(self) -> Vec<Bson> {
        self.values.into_values().collect()
    }
}

/// A document, or an array seen as the document of its positions.
#[derive(Clone, Copy)]
enum Container<'a> {
    Document(&'a RawDocument),
    Array(&'a RawArray),
}

impl<'a> Container<'a> {
    fn get(self, name: &str) -> Option<RawBsonRef<'a>> {
        let elements: RawIter<'a> = match self {
            Container::Document(doc) => doc.iter_elements(),
            Container::Array(array) => array.iter_elements(),
        };
        for element in elements {
            let element = element.ok()?;
            if element.key().as_str() == name {
                return element.value().ok();
            }
        }
        None
    }
}

/// Collects the values `path` reaches in `container` the way mongod's distinct does
/// (`extractAllElementsAlongPath`): a field literally named `path` wins; an array at the end
/// of the path gives its elements; an array in the middle is entered element by element,
/// unless the next component is numeric, which indexes it; missing fields give nothing.
fn extract<'a>(container: Container<'a>, path: &str, out: &mut Vec<RawBsonRef<'a>>) {
    if let Some(value) = container.get(path) {
        match value {
            RawBsonRef::Array(array) => {
                out.extend(bson_canonical::compare::array_values(array));
            }
            value => out.push(value),
        }
        return;
    }
    let Some((left, next)) = path.split_once('.') else {
        return;
    };
    match container.get(left) {
        Some(RawBsonRef::Document(doc)) => extract(Container::Document(doc), next, out),
        Some(RawBsonRef::Array(array)) => {
            let first = next.split('.').next().unwrap_or_default();
            let numeric = !first.is_empty() && first.bytes().all(|b| b.is_ascii_digit());
            if numeric {
                extract(Container::Array(array), next, out);
                return;
            }
            for element in bson_canonical::compare::array_values(array) {
                match element {
                    RawBsonRef::Document(doc) => extract(Container::Document(doc), next, out),
                    RawBsonRef::Array(inner) => extract(Container::Array(inner), next, out),
                    _ => {}
                }
            }
        }
        _ => {}
    }
}

#[cfg(test)]
mod tests {
    use super::{Container, extract};
    use bson::{Bson, RawDocumentBuf, rawdoc};

    fn check(doc: RawDocumentBuf, path: &str, expected: Vec<Bson>) {
        let mut out = Vec::new();
        extract(Container::Document(&doc), path, &mut out);
        let got: Vec<Bson> = out
            .into_iter()
            .map(|v| Bson::try_from(v).expect("bson"))
            .collect();
        assert_eq!(got, expected, "{path} in {doc:?}");
    }

    #[test]
    fn distinct_paths_follow_mongod() {
        check(rawdoc! { "a": 1 }, "a", vec![Bson::Int32(1)]);
        check(rawdoc! { "b": 1 }, "a", vec![]);
        check(rawdoc! { "a": null }, "a", vec![Bson::Null]);
        check(
            rawdoc! { "a": [1, [2, 3]] },
            "a",
            vec![1.into(), Bson::Array(vec![2.into(), 3.into()])],
        );
        check(rawdoc! { "a": [] }, "a", vec![]);
        check(
            rawdoc! { "a": { "b": [4, 5] } },
            "a.b",
            vec![4.into(), 5.into()],
        );
        check(
            rawdoc! { "a": [{ "b": 1 }, { "b": [2] }, 3, { "c": 4 }] },
            "a.b",
            vec![1.into(), 2.into()],
        );
        check(rawdoc! { "a": [[{ "b": 7 }]] }, "a.b", vec![]);
        check(rawdoc! { "a": [5, 6] }, "a.1", vec![6.into()]);
        check(
            rawdoc! { "a": [{ "b": 1 }, { "b": 2 }] },
            "a.1.b",
            vec![2.into()],
        );
        check(
            rawdoc! { "a": [{ "0": 9 }] },
            "a.0",
            vec![Bson::Document(bson::doc! { "0": 9 })],
        );
        check(rawdoc! { "a.b": 8, "a": { "b": 9 } }, "a.b", vec![8.into()]);
        check(rawdoc! { "a": 1 }, "a.b", vec![]);
    }
}
