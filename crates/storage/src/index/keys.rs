//! Index keys of a document: mongod's `BtreeKeyGenerator` (`btree_key_generator.cpp`) and,
//! for hashed indexes, `ExpressionKeysPrivate::getHashKeys`, over raw BSON, producing the
//! byte keys of `bson_canonical::key` (one encoded value per key field, concatenated).
//!
//! The walk, as mongod's `_getKeysWithArray`: each key field's path is followed through
//! sub-documents (`extractElementAtPathOrArrayAlongPath`) until it ends, goes missing (the
//! value is null), or meets an array. At most one array may be expanded per level: two
//! fields meeting different arrays are 171 "cannot index parallel arrays [b] [a]" (the later
//! field first); fields meeting the same array expand in lockstep. Each element of the
//! array gives one key (a field whose path ended at the array takes the element itself; a
//! field with path left continues into the element if it is a document, else is missing).
//! An empty array is indexed as `undefined` where the path ends at it and makes the rest of
//! a longer path missing. A numeric component after an array (`a.0.b`) names the element at
//! that position; when the element is not there the component is looked up as a field name
//! in every element. Missing fields count as "not found": a sparse index skips a key whose
//! every field was not found. Keys of one document are deduplicated and sorted.
//!
//! Wildcard indexes have their own walk ([`super::wildcard`]).

use super::error;
use super::hash;
use super::spec::{IndexSpec, KeyKind};
use super::wildcard;
use crate::error::Error;
use bson::raw::{RawArray, RawDocument};
use bson::{Bson, RawBsonRef};
use bson_canonical::key::{Direction, encode_field_into};
use bson_canonical::path::{array_position, get_field};
use std::collections::BTreeSet;

/// The keys one document gives an index.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Keys {
    /// The encoded keys, deduplicated and in byte order.
    pub keys: Vec<Vec<u8>>,
    /// Per key field, the path components (0-based) at which an array was expanded:
    /// mongod's multikey paths (`{a.b: 1}` over `{a: [{b: 1}]}` gives `[{0}]`).
    pub multikey_paths: Vec<BTreeSet<usize>>,
    /// For a wildcard index, the dotted paths at which an array was met (mongod's
    /// multikey metadata keys).
    pub wildcard_multikey: BTreeSet<String>,
}

impl Keys {
    /// Whether the document makes the index multikey.
    pub fn is_multikey(&self) -> bool {
        !self.wildcard_multikey.is_empty()
            || self
                .multikey_paths
                .iter()
                .any(|components| !components.is_empty())
    }
}

/// The keys of `doc` in the index `spec`, or none when the document is outside a partial
/// index. Errors: 171 (parallel arrays), 16766 (an array in a hashed index), 16746 (a
/// numeric field name that is also an array position), a partial filter's run-time error.
pub fn index_keys(spec: &IndexSpec, doc: &RawDocument) -> Result<Keys, Error> {
    if let Some(partial) = &spec.partial
        && !partial.filter.try_matches(doc)?
    {
        return Ok(Keys {
            keys: Vec::new(),
            multikey_paths: vec![BTreeSet::new(); spec.fields.len()],
            wildcard_multikey: BTreeSet::new(),
        });
    }
    generate(spec, doc)
}

/// The keys of `doc`, the partial filter aside (the caller has decided the document is in).
pub fn generate(spec: &IndexSpec, doc: &RawDocument) -> Result<Keys, Error> {
    Ok(generate_with(spec, doc, None)?.0)
}

/// The values, one per key field, from which `doc` generates the encoded `key`, as
/// mongod's duplicate key errors show them (`keyValue`); `None` when `doc` has no such key.
/// Hashed fields show the hash (a 64-bit integer), as mongod's `keyValue` does.
pub fn key_values(spec: &IndexSpec, doc: &RawDocument, key: &[u8]) -> Option<Vec<Bson>> {
    if spec.fields.iter().any(|f| f.kind == KeyKind::Hashed) {
        return None;
    }
    generate_with(spec, doc, Some(key)).ok()?.1
}

fn generate_with(
    spec: &IndexSpec,
    doc: &RawDocument,
    wanted: Option<&[u8]>,
) -> Result<(Keys, Option<Vec<Bson>>), Error> {
    if spec.fields.iter().any(|f| f.kind == KeyKind::Hashed) {
        return Ok((hashed_keys(spec, doc)?, None));
    }
    if let Some(projection) = &spec.wildcard {
        let direction = match spec.fields.first().map(|f| f.kind) {
            Some(KeyKind::Descending) => Direction::Descending,
            _ => Direction::Ascending,
        };
        let found = wildcard::keys(projection, direction, doc);
        let keys = Keys {
            keys: found.keys.into_iter().collect(),
            multikey_paths: vec![BTreeSet::new(); spec.fields.len()],
            wildcard_multikey: found.multikey,
        };
        return Ok((keys, None));
    }
    if wanted.is_none()
        && let Some(keys) = simple_keys(spec, doc)
    {
        return Ok((keys, None));
    }
    walk_keys(spec, doc, wanted)
}

/// The keys of a document none of whose key paths meets an array: the one key of the
/// values found (null where missing; none for a sparse index missing every field), exactly
/// what the general walk gives such a document, without its allocations (index builds
/// spend most of their time here). `None` when a path meets an array: the walk expands it.
fn simple_keys(spec: &IndexSpec, doc: &RawDocument) -> Option<Keys> {
    let mut key = Vec::new();
    let keys = if simple_key_into(spec, doc.as_bytes(), &mut key)? {
        vec![key]
    } else {
        Vec::new()
    };
    Some(Keys {
        keys,
        multikey_paths: vec![BTreeSet::new(); spec.fields.len()],
        wildcard_multikey: BTreeSet::new(),
    })
}

/// For an index build's scan: appends the one key of the document `framed` to `out` when
/// the index is a plain one (no partial filter, hashed field or wildcard) and no key path
/// meets an array, returning whether there was a key (a sparse index skips a document
/// missing every field); `None`, with `out` as it was, when [`index_keys`] must decide.
/// The key is the one [`index_keys`] gives such a document, and such a document is not
/// multikey. `framed` is a document's bytes whose length prefix the caller checked
/// (`query::is_framed`): the top-level lookups skip elements by their lengths and never
/// read the terminating byte, so a 16 KiB document's last page is not touched for keys
/// on its first fields.
pub fn append_simple_key(spec: &IndexSpec, framed: &[u8], out: &mut Vec<u8>) -> Option<bool> {
    if spec.partial.is_some()
        || spec.wildcard.is_some()
        || spec.fields.iter().any(|f| f.kind == KeyKind::Hashed)
    {
        return None;
    }
    let start = out.len();
    let found = simple_key_into(spec, framed, out);
    if found != Some(true) {
        out.truncate(start);
    }
    found
}

/// Encodes the key of `doc` onto `out` (see [`simple_keys`]): `Some(true)` with the key
/// appended, `Some(false)` when a sparse index has none, `None` when a path meets an array
/// (`out` then holds a partial key the caller drops).
fn simple_key_into(spec: &IndexSpec, framed: &[u8], out: &mut Vec<u8>) -> Option<bool> {
    let mut missing = 0;
    for field in &spec.fields {
        let value = match extract(framed, &field.path).0 {
            Some(RawBsonRef::Array(_)) => return None,
            Some(value) => value,
            None => {
                missing += 1;
                RawBsonRef::Null
            }
        };
        let direction = if field.kind == KeyKind::Descending {
            Direction::Descending
        } else {
            Direction::Ascending
        };
        encode_field_into(Some(value), direction, out);
    }
    Some(!(spec.sparse && missing == spec.fields.len()))
}

/// mongod's `BtreeKeyGenerator` walk (`_getKeysWithArray`), and the values of `wanted`.
fn walk_keys(
    spec: &IndexSpec,
    doc: &RawDocument,
    wanted: Option<&[u8]>,
) -> Result<(Keys, Option<Vec<Bson>>), Error> {
    let mut generator = Generator {
        spec,
        wanted,
        found: None,
        keys: BTreeSet::new(),
        multikey_paths: vec![BTreeSet::new(); spec.fields.len()],
        path_lengths: spec
            .fields
            .iter()
            .map(|f| f.path.split('.').count())
            .collect(),
    };
    let fields: Vec<&str> = spec.fields.iter().map(|f| f.path.as_str()).collect();
    let fixed = vec![RawBsonRef::Null; fields.len()];
    let positional = vec![Positional::default(); fields.len()];
    generator.walk(fields, fixed, Some(doc), 0, &positional)?;
    if generator.keys.is_empty() && !spec.sparse {
        let nulls = vec![RawBsonRef::Null; spec.fields.len()];
        generator.insert(&nulls);
    }
    let keys = Keys {
        keys: generator.keys.into_iter().collect(),
        multikey_paths: generator.multikey_paths,
        wildcard_multikey: BTreeSet::new(),
    };
    Ok((keys, generator.found))
}

/// mongod's `PositionalPathInfo`: for a field whose next component is a position in the
/// array being expanded, the element at that position and the value the rest of the path
/// reaches from the array.
#[derive(Debug, Clone, Copy, Default)]
struct Positional<'a, 's> {
    element: Option<RawBsonRef<'a>>,
    remaining: &'s str,
    dotted: Option<RawBsonRef<'a>>,
}

struct Generator<'p> {
    spec: &'p IndexSpec,
    /// A key whose values to capture (`key_values`).
    wanted: Option<&'p [u8]>,
    found: Option<Vec<Bson>>,
    keys: BTreeSet<Vec<u8>>,
    multikey_paths: Vec<BTreeSet<usize>>,
    path_lengths: Vec<usize>,
}

fn same_array(a: &RawArray, b: &RawArray) -> bool {
    std::ptr::eq(a.as_bytes().as_ptr(), b.as_bytes().as_ptr())
}

fn component_count(path: &str) -> usize {
    if path.is_empty() {
        0
    } else {
        path.split('.').count()
    }
}

fn last_component(path: &str) -> &str {
    path.rsplit('.').next().unwrap_or(path)
}

/// `extractElementAtPathOrArrayAlongPath`: follows `path` through documents; stops at an
/// array (returning it and the rest of the path after it) or at the end. `framed` is a
/// document's bytes whose length prefix was checked (`query::is_framed`): each component
/// is looked up by skipping elements by their lengths, never reading the terminating byte
/// (a stored document's last page is not touched for keys on its first fields, D76).
fn extract<'a, 's>(framed: &'a [u8], path: &'s str) -> (Option<RawBsonRef<'a>>, &'s str) {
    let (head, rest) = match path.split_once('.') {
        Some((head, rest)) => (head, rest),
        None => (path, ""),
    };
    match query::get_field_in(framed, head) {
        None => (None, rest),
        Some(value @ RawBsonRef::Array(_)) => (Some(value), rest),
        Some(value) if rest.is_empty() => (Some(value), rest),
        Some(RawBsonRef::Document(sub)) => extract(sub.as_bytes(), rest),
        Some(_) => (None, rest),
    }
}

/// `extractElementAtPathOrArrayAlongPath` over an array: its fields are named by position.
fn extract_in_array<'a, 's>(
    array: &'a RawArray,
    path: &'s str,
) -> (Option<RawBsonRef<'a>>, &'s str) {
    let (head, rest) = match path.split_once('.') {
        Some((head, rest)) => (head, rest),
        None => (path, ""),
    };
    let element = array_position(head).and_then(|i| array.get(i).ok().flatten());
    match element {
        None => (None, rest),
        Some(value @ RawBsonRef::Array(_)) => (Some(value), rest),
        Some(value) if rest.is_empty() => (Some(value), rest),
        Some(RawBsonRef::Document(sub)) => extract(sub.as_bytes(), rest),
        Some(_) => (None, rest),
    }
}

impl<'p> Generator<'p> {
    /// Adds the key of `values`, capturing them when it is the wanted key.
    fn insert(&mut self, values: &[RawBsonRef<'_>]) {
        let key = self.encode(values);
        if self.found.is_none() && self.wanted == Some(key.as_slice()) {
            let values = values
                .iter()
                .map(|v| Bson::try_from(*v).unwrap_or(Bson::Null))
                .collect();
            self.found = Some(values);
        }
        self.keys.insert(key);
    }

    fn encode(&self, values: &[RawBsonRef<'_>]) -> Vec<u8> {
        let mut out = Vec::new();
        for (field, value) in self.spec.fields.iter().zip(values) {
            let direction = if field.kind == KeyKind::Descending {
                Direction::Descending
            } else {
                Direction::Ascending
            };
            encode_field_into(Some(*value), direction, &mut out);
        }
        out
    }

    /// `_getKeysWithArray`.
    fn walk<'a, 's>(
        &mut self,
        mut fields: Vec<&'s str>,
        mut fixed: Vec<RawBsonRef<'a>>,
        doc: Option<&'a RawDocument>,
        mut not_found: usize,
        positional: &[Positional<'a, 's>],
    ) -> Result<(), Error> {
        let mut array: Option<(&'a RawArray, &'s str)> = None;
        let mut array_fields: BTreeSet<usize> = BTreeSet::new();
        let mut components: Vec<Option<usize>> = vec![None; fields.len()];
        let mut expand_unembedded = true;
        for i in 0..fields.len() {
            if fields[i].is_empty() {
                continue;
            }
            let full = fields[i];
            let (element, nested_array) = self.next_element(doc, &positional[i], &mut fields[i])?;
            match element {
                None => {
                    fixed[i] = RawBsonRef::Null;
                    fields[i] = "";
                    not_found += 1;
                }
                Some(RawBsonRef::Array(found)) => {
                    array_fields.insert(i);
                    // The array's own field name: the component before the rest of the path.
                    let consumed = &full[..full.len().saturating_sub(fields[i].len())];
                    let name = last_component(consumed.trim_end_matches('.'));
                    match array {
                        None => array = Some((found, name)),
                        Some((first, first_name)) if !same_array(first, found) => {
                            return Err(error(
                                171,
                                "CannotIndexParallelArrays",
                                format!("cannot index parallel arrays [{name}] [{first_name}]"),
                            ));
                        }
                        Some(_) => {}
                    }
                    if nested_array {
                        expand_unembedded = false;
                    }
                }
                Some(value) => fixed[i] = value,
            }
        }
        let Some((array, _)) = array else {
            if self.spec.sparse && not_found == fields.len() {
                return Ok(());
            }
            self.insert(&fixed);
            return Ok(());
        };
        let mut elements = array.into_iter().filter_map(Result::ok).peekable();
        if elements.peek().is_none() {
            if expand_unembedded {
                for &i in &array_fields {
                    let suffix = component_count(fields[i]);
                    components[i] = Some(self.path_lengths[i] - suffix - 1);
                }
            }
            let undefined = RawBsonRef::Undefined;
            let none = vec![Positional::default(); fields.len()];
            self.expand_element(
                &fields,
                &fixed,
                undefined,
                array,
                not_found,
                &array_fields,
                true,
                &none,
            )?;
        } else {
            let mut sub: Vec<Positional<'a, 's>> = vec![Positional::default(); fields.len()];
            for &i in &array_fields {
                if fields[i].is_empty() {
                    if expand_unembedded {
                        components[i] = Some(self.path_lengths[i] - 1);
                    }
                    continue;
                }
                let part = fields[i].split('.').next().unwrap_or("");
                let element = array_position(part).and_then(|p| array.get(p).ok().flatten());
                match element {
                    None => {
                        let suffix = component_count(fields[i]);
                        components[i] = Some(self.path_lengths[i] - suffix - 1);
                    }
                    Some(element) => {
                        let (dotted, remaining) = extract_in_array(array, fields[i]);
                        sub[i] = Positional {
                            element: Some(element),
                            remaining,
                            dotted,
                        };
                    }
                }
            }
            for element in elements {
                self.expand_element(
                    &fields,
                    &fixed,
                    element,
                    array,
                    not_found,
                    &array_fields,
                    expand_unembedded,
                    &sub,
                )?;
            }
        }
        for (i, component) in components.into_iter().enumerate() {
            if let Some(component) = component {
                self.multikey_paths[i].insert(component);
            }
        }
        Ok(())
    }

    /// `_getKeysArrEltFixed`: one element of the array being expanded.
    #[allow(clippy::too_many_arguments)]
    fn expand_element<'a, 's>(
        &mut self,
        fields: &[&'s str],
        fixed: &[RawBsonRef<'a>],
        element: RawBsonRef<'a>,
        array: &'a RawArray,
        not_found: usize,
        array_fields: &BTreeSet<usize>,
        expand_unembedded: bool,
        positional: &[Positional<'a, 's>],
    ) -> Result<(), Error> {
        let mut fixed = fixed.to_vec();
        for &i in array_fields {
            if fields[i].is_empty() {
                fixed[i] = if expand_unembedded {
                    element
                } else {
                    RawBsonRef::Array(array)
                };
            }
        }
        let doc = match element {
            RawBsonRef::Document(doc) => Some(doc),
            _ => None,
        };
        self.walk(fields.to_vec(), fixed, doc, not_found, positional)
    }

    /// `_extractNextElement`: the value a field's path reaches in `doc`, or, for a positional
    /// component, the value found when the array was entered. Returns the value and whether
    /// the positional element was itself an array.
    fn next_element<'a, 's>(
        &self,
        doc: Option<&'a RawDocument>,
        positional: &Positional<'a, 's>,
        field: &mut &'s str,
    ) -> Result<(Option<RawBsonRef<'a>>, bool), Error> {
        let first = field.split('.').next().unwrap_or("");
        let in_doc = doc.is_some_and(|d| get_field(d, first).is_some());
        if in_doc && positional.element.is_some() {
            return Err(error(
                16746,
                "Location16746",
                format!(
                    "Ambiguous field name found in array (do not use numeric field names in \
                     embedded elements in an array), field: '{first}'"
                ),
            ));
        }
        if let (true, Some(doc)) = (in_doc, doc) {
            let (value, rest) = extract(doc.as_bytes(), field);
            *field = rest;
            return Ok((value, false));
        }
        if let Some(element) = positional.element {
            *field = positional.remaining;
            return Ok((positional.dotted, matches!(element, RawBsonRef::Array(_))));
        }
        Ok((None, false))
    }
}

/// `getHashKeys`: one key; a hashed field's value is `NumberLong(hash64(value))`, other
/// fields their value; no field may meet an array (16766); a missing field is null; a
/// sparse index skips a document with every field missing.
fn hashed_keys(spec: &IndexSpec, doc: &RawDocument) -> Result<Keys, Error> {
    let mut out = Vec::new();
    let mut found = false;
    for field in &spec.fields {
        let (value, rest) = extract(doc.as_bytes(), &field.path);
        if let Some(RawBsonRef::Array(_)) = value {
            let at = &field.path[..field.path.len() - rest.len()];
            return Err(error(
                16766,
                "Location16766",
                format!(
                    "Error: hashed indexes do not currently support array values. Found array \
                     at path: {}",
                    at.trim_end_matches('.')
                ),
            ));
        }
        found |= value.is_some();
        let value = value.unwrap_or(RawBsonRef::Null);
        match field.kind {
            KeyKind::Hashed => {
                let hashed = RawBsonRef::Int64(hash::hash64(value, hash::SEED_DEFAULT));
                encode_field_into(Some(hashed), Direction::Ascending, &mut out);
            }
            KeyKind::Ascending => encode_field_into(Some(value), Direction::Ascending, &mut out),
            KeyKind::Descending => encode_field_into(Some(value), Direction::Descending, &mut out),
        }
    }
    let keys = if spec.sparse && !found {
        Vec::new()
    } else {
        vec![out]
    };
    Ok(Keys {
        keys,
        multikey_paths: vec![BTreeSet::new(); spec.fields.len()],
        wildcard_multikey: BTreeSet::new(),
    })
}

/// The fast path alone, for the property test that holds it to the walk.
#[cfg(test)]
pub fn simple_keys_for_tests(spec: &IndexSpec, doc: &RawDocument) -> Option<Keys> {
    simple_keys(spec, doc)
}

/// The general walk alone, for the same test.
#[cfg(test)]
pub fn walk_keys_for_tests(spec: &IndexSpec, doc: &RawDocument) -> Result<Keys, Error> {
    Ok(walk_keys(spec, doc, None)?.0)
}
