//! Wildcard indexes (`{"$**": 1}`, `{"a.$**": 1}`, `wildcardProjection`): the projection
//! that says which paths are indexed, its validation as mongod 7.0 does it
//! (`wildcard_validation.cpp`, the projection parser's wildcard policies), and mongod's
//! `WildcardKeyGenerator`: one key `(path, value)` per leaf of the projected document.
//!
//! The walk (`_traverseWildcard` over the projected document): fields whose name holds a
//! `.` are skipped (no query can name them); a sub-document is descended into, its fields'
//! paths dotted onto its own; an array is indexed element-wise under the array's own path
//! (element positions are not path components) and its path is recorded as multikey; an
//! array directly inside an array is not descended but indexed as a value; an empty
//! document is indexed as itself, an empty array (after projection) as `undefined`. Keys
//! are the path as a string followed by the value, each a `bson_canonical::key` field
//! encoding (the path always ascending, the value in the key pattern's direction), and a
//! document missing every projected path has no key: a wildcard index is sparse.
//!
//! The projection, as mongod's projection executor applies it with the wildcard policies
//! (`_id` excluded unless named, nested arrays not recursed into): an inclusion keeps the
//! named subtrees, and inside arrays the documents (projected) only; an exclusion drops the
//! named subtrees and keeps everything else, scalars and nested arrays of arrays included.
//! `a.$**` is the inclusion `{a: 1}`; `$**` without a projection is the exclusion
//! `{_id: 0}`.

use super::error;
use crate::error::Error;
use bson::raw::{RawArray, RawArrayBuf, RawBson, RawBsonRef, RawDocument, RawDocumentBuf};
use bson::{Bson, Document};
use bson_canonical::compare::elements;
use bson_canonical::key::{Direction, encode_field_into};
use std::collections::{BTreeMap, BTreeSet};

/// The last component of a key field that makes it a wildcard field.
const WILDCARD_PART: &str = "$**";

/// Whether a key pattern field is a wildcard field (`$**` or `path.$**`).
pub fn is_wildcard_field(name: &str) -> bool {
    name == WILDCARD_PART || name.ends_with(".$**")
}

/// One node of a projection tree: a named path (`Leaf`: included by an inclusion,
/// excluded by an exclusion) or the parent of named paths.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Node {
    Leaf,
    Children(BTreeMap<String, Node>),
}

/// Which paths a wildcard index indexes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Projection {
    /// An inclusion (the named paths) or an exclusion (all but the named paths).
    inclusion: bool,
    /// The named paths as a tree, `_id`'s default already applied.
    root: BTreeMap<String, Node>,
}

impl Projection {
    /// The projection of the wildcard key field `field` (`$**` or `a.b.$**`), with the
    /// index's `wildcardProjection` if any (only allowed with `$**`, checked earlier).
    pub fn of_key(field: &str, given: Option<&Document>) -> Result<Projection, Error> {
        match field.strip_suffix(".$**") {
            Some(root) => {
                let mut tree = BTreeMap::new();
                insert(&mut tree, &root.split('.').collect::<Vec<_>>(), root)?;
                Ok(Projection {
                    inclusion: true,
                    root: tree,
                })
            }
            None => match given {
                Some(spec) => Projection::parse(spec),
                None => Projection::parse(&bson::doc! {"_id": 0}),
            },
        }
    }

    /// Parses a `wildcardProjection` with the wildcard index policies: no computed fields
    /// (51271), no positional or `$` names, inclusion and exclusion not mixed (31253,
    /// 31254) except for `_id`, no path collisions (31249, 31250).
    pub fn parse(spec: &Document) -> Result<Projection, Error> {
        let mut parser = Parser::default();
        parser.level(spec, "")?;
        let inclusion = parser.inclusion.unwrap_or(parser.id == Some(true));
        let mut root = parser.tree;
        // A top-level `_id` named against the projection's kind is the default's opposite:
        // `{_id: 1, a: 0}` keeps `_id`, `{_id: 0, a: 1}` leaves it out.
        if let Some(id) = parser.id
            && id != inclusion
        {
            root.remove("_id");
        }
        // The wildcard policy leaves `_id` out unless the projection names it or a path
        // under it.
        if !inclusion && parser.id.is_none() && !root.contains_key("_id") {
            root.insert("_id".to_owned(), Node::Leaf);
        }
        Ok(Projection { inclusion, root })
    }

    /// Whether every value at `path` is indexed: what mongod's `applyProjectionToOneField`
    /// answers, so whether a predicate on `path` may use the index.
    pub fn covers(&self, path: &str) -> bool {
        let mut tree = &self.root;
        for component in path.split('.') {
            match tree.get(component) {
                None => return !self.inclusion,
                Some(Node::Leaf) => return self.inclusion,
                Some(Node::Children(children)) => tree = children,
            }
        }
        // `path` leads to named paths below it: an exclusion keeps its scalars, an
        // inclusion drops them.
        !self.inclusion
    }

    /// Whether the projection only leaves out the top-level `_id` (the default of `$**`):
    /// the document is walked as it is, `_id` skipped.
    fn only_excludes_id(&self) -> bool {
        !self.inclusion && self.root.len() == 1 && self.root.get("_id") == Some(&Node::Leaf)
    }

    /// The projected document.
    fn apply(&self, doc: &RawDocument) -> RawDocumentBuf {
        project_document(doc, &self.root, self.inclusion)
    }
}

/// A projection being parsed.
#[derive(Default)]
struct Parser {
    /// Decided by the first field other than a top-level `_id`.
    inclusion: Option<bool>,
    /// A top-level `_id: <bool>`.
    id: Option<bool>,
    tree: BTreeMap<String, Node>,
}

impl Parser {
    fn level(&mut self, spec: &Document, prefix: &str) -> Result<(), Error> {
        for (key, value) in spec {
            check_field_name(key)?;
            let path = if prefix.is_empty() {
                key.clone()
            } else {
                format!("{prefix}.{key}")
            };
            let include = match value {
                Bson::Document(sub) if sub.keys().next().is_some_and(|k| !k.starts_with('$')) => {
                    self.level(sub, &path)?;
                    continue;
                }
                Bson::Document(sub) if sub.is_empty() => {
                    return Err(error(
                        51270,
                        "Location51270",
                        format!(
                            "An empty sub-projection is not a valid value. Found empty object at \
                             path {path}"
                        ),
                    ));
                }
                Bson::Boolean(b) => *b,
                Bson::Int32(_) | Bson::Int64(_) | Bson::Double(_) | Bson::Decimal128(_) => {
                    super::truthy(value)
                }
                _ => {
                    return Err(error(
                        51271,
                        "Location51271",
                        "Bad projection specification, cannot use computed fields when parsing a \
                         spec in kBanComputedFields mode",
                    ));
                }
            };
            if path == "_id" {
                self.id = Some(include);
            } else {
                match self.inclusion {
                    None => self.inclusion = Some(include),
                    Some(true) if !include => {
                        return Err(error(
                            31254,
                            "Location31254",
                            format!("Cannot do exclusion on field {path} in inclusion projection"),
                        ));
                    }
                    Some(false) if include => {
                        return Err(error(
                            31253,
                            "Location31253",
                            format!("Cannot do inclusion on field {path} in exclusion projection"),
                        ));
                    }
                    Some(_) => {}
                }
            }
            insert(&mut self.tree, &path.split('.').collect::<Vec<_>>(), &path)?;
        }
        Ok(())
    }
}

/// The projection parser's field name rules (`FieldPath`).
fn check_field_name(key: &str) -> Result<(), Error> {
    for part in key.split('.') {
        if part.is_empty() {
            return Err(error(
                15998,
                "Location15998",
                "FieldPath field names may not be empty strings.",
            ));
        }
        if part == "$" {
            return Err(error(
                31324,
                "Location31324",
                "Cannot use positional projection in aggregation projection",
            ));
        }
        if part.starts_with('$') {
            return Err(error(
                16410,
                "Location16410",
                "FieldPath field names may not start with '$'. Consider using $getField or \
                 $setField.",
            ));
        }
    }
    Ok(())
}

/// Adds the named path `parts` (the dotted `full`) to `tree`.
fn insert(tree: &mut BTreeMap<String, Node>, parts: &[&str], full: &str) -> Result<(), Error> {
    let Some((head, rest)) = parts.split_first() else {
        return Ok(());
    };
    if rest.is_empty() {
        if tree.contains_key(*head) {
            return Err(error(
                31250,
                "Location31250",
                format!("Path collision at {full}"),
            ));
        }
        tree.insert((*head).to_owned(), Node::Leaf);
        return Ok(());
    }
    let node = tree
        .entry((*head).to_owned())
        .or_insert_with(|| Node::Children(BTreeMap::new()));
    match node {
        Node::Children(children) => insert(children, rest, full),
        Node::Leaf => Err(error(
            31249,
            "Location31249",
            format!(
                "Path collision at {full} remaining portion {}",
                rest.join(".")
            ),
        )),
    }
}

/// `validateWildcardIndex`: one wildcard field (7246201, 7246202), and, with no
/// projection, no other key field under the wildcard's own path (7246204).
pub fn validate_key_pattern(key: &Document) -> Result<(), Error> {
    let mut wildcard: Option<&str> = None;
    let mut others = Vec::new();
    for name in key.keys() {
        if is_wildcard_field(name) {
            if wildcard.is_some() {
                return Err(error(
                    7246201,
                    "Location7246201",
                    "Index Key can contain only one wildcard index field",
                ));
            }
            wildcard = Some(name);
        } else {
            others.push(name.as_str());
        }
    }
    let Some(wildcard) = wildcard else {
        return Err(error(
            7246202,
            "Location7246202",
            "No wildcard index field is specified for the wildcard index",
        ));
    };
    let root: Vec<&str> = wildcard.split('.').collect();
    let root = &root[..root.len() - 1];
    for field in others {
        let parts: Vec<&str> = field.split('.').collect();
        if !root.is_empty() && parts.starts_with(root) {
            return Err(error(
                7246204,
                "Location7246204",
                format!(
                    "A wildcard index field should not overlap with and index key fields if \
                     wildcard projection is empty, however '{field}' is overlapping with the \
                     wildcard index field."
                ),
            ));
        }
    }
    Ok(())
}

/// `validateWildcardProjection` for a compound wildcard index (7246200, 7246205-7246211).
pub fn validate_compound_projection(key: &Document, projection: &Document) -> Result<(), Error> {
    if projection.is_empty() {
        return Err(error(
            7246205,
            "Location7246205",
            "WildcardProjection must be non-empty if specified.",
        ));
    }
    validate_key_pattern(key)?;
    let wildcard = key
        .keys()
        .find(|k| is_wildcard_field(k))
        .map_or("", String::as_str);
    if wildcard != WILDCARD_PART {
        return Err(error(
            7246206,
            "Location7246206",
            "Wildcard index field must be always '$**' if wildcardProjection is specified",
        ));
    }
    let split = |s: &str| s.split('.').map(str::to_owned).collect::<Vec<String>>();
    let mut fields: Vec<Vec<String>> = key
        .keys()
        .filter(|k| !is_wildcard_field(k))
        .map(|k| split(k))
        .collect();
    let (mut included, mut excluded): (Vec<Vec<String>>, Vec<Vec<String>>) =
        (Vec::new(), Vec::new());
    for (name, value) in projection {
        if super::truthy(value) {
            included.push(split(name));
        } else {
            excluded.push(split(name));
        }
    }
    fields.sort();
    included.sort();
    excluded.sort();
    no_overlap(&included)?;
    no_overlap(&excluded)?;
    let dotted = |p: &[String]| p.join(".");
    let (mut i, mut j) = (0, 0);
    while i < fields.len() && j < included.len() {
        if fields[i].starts_with(&included[j]) {
            return Err(error(
                7246208,
                "Location7246208",
                format!(
                    "Index Key and Wildcard Projection cannot contain overlapping fields, however \
                     '{}' index field is ovverlapping with '{}' wildcardProjection path.",
                    dotted(&fields[i]),
                    dotted(&included[j])
                ),
            ));
        }
        if included[j] < fields[i] {
            j += 1;
        } else {
            i += 1;
        }
    }
    let id = vec!["_id".to_owned()];
    let id_only_exclusion = excluded.len() == 1 && excluded[0] == id;
    if !excluded.is_empty() && !id_only_exclusion {
        let (mut i, mut j) = (0, 0);
        while i < fields.len() && j < excluded.len() {
            if fields[i].starts_with(&excluded[j]) {
                i += 1;
            } else if excluded[j] < fields[i] {
                j += 1;
            } else {
                return Err(not_excluded(7246209, &dotted(&fields[i])));
            }
        }
        if i < fields.len() {
            return Err(not_excluded(7246210, &dotted(&fields[i])));
        }
    }
    if !included.is_empty() && !excluded.is_empty() {
        let id_only_inclusion = included.len() == 1 && included[0] == id;
        if !id_only_exclusion && !id_only_inclusion {
            return Err(error(
                7246211,
                "Location7246211",
                "Inclusion and exclusion statements cannot combine in the wildcardProjection with \
                 an exception of explicitly including _id field",
            ));
        }
    }
    Ok(())
}

fn no_overlap(sorted: &[Vec<String>]) -> Result<(), Error> {
    for pair in sorted.windows(2) {
        if pair[1].starts_with(&pair[0]) || pair[0].starts_with(&pair[1]) {
            return Err(error(
                7246200,
                "Location7246200",
                format!(
                    "Fields in Wildcard Projection cannot overlap, however '{}' is overlapped with \
                     '{}",
                    pair[0].join("."),
                    pair[1].join(".")
                ),
            ));
        }
    }
    Ok(())
}

fn not_excluded(code: i32, field: &str) -> Error {
    let name = if code == 7246209 {
        "Location7246209"
    } else {
        "Location7246210"
    };
    error(
        code,
        name,
        format!(
            "wildcardProjection paths must exclude all regular index fields, however \
             '{field}'is not excluded."
        ),
    )
}

/// The projected document: mongod's inclusion and exclusion nodes with
/// `kDoNotRecurseNestedArrays`.
fn project_document(
    doc: &RawDocument,
    tree: &BTreeMap<String, Node>,
    inclusion: bool,
) -> RawDocumentBuf {
    let mut out = RawDocumentBuf::new();
    for element in doc.iter_elements() {
        let Ok(element) = element else { break };
        let Ok(value) = element.value() else { break };
        let name = element.key();
        match tree.get(name.as_str()) {
            None if inclusion => {}
            None => out.append(name, value),
            Some(Node::Leaf) if inclusion => out.append(name, value),
            Some(Node::Leaf) => {}
            Some(Node::Children(children)) => {
                if let Some(projected) = project_value(value, children, inclusion, false) {
                    out.append(name, projected);
                }
            }
        }
    }
    out
}

/// A value at a path that leads to named paths below it; `None`: the value is dropped.
fn project_value(
    value: RawBsonRef<'_>,
    tree: &BTreeMap<String, Node>,
    inclusion: bool,
    in_array: bool,
) -> Option<RawBson> {
    match value {
        RawBsonRef::Document(doc) => {
            Some(RawBson::Document(project_document(doc, tree, inclusion)))
        }
        // An array in an array is not recursed into: an inclusion drops it, an exclusion
        // keeps it as it is.
        RawBsonRef::Array(array) if in_array => {
            (!inclusion).then(|| RawBson::Array(array.to_owned()))
        }
        RawBsonRef::Array(array) => Some(RawBson::Array(project_array(array, tree, inclusion))),
        // A scalar where the projection names paths below it: dropped by an inclusion, kept
        // by an exclusion.
        other => (!inclusion).then(|| RawBson::from(other)),
    }
}

fn project_array(array: &RawArray, tree: &BTreeMap<String, Node>, inclusion: bool) -> RawArrayBuf {
    let mut out = RawArrayBuf::new();
    for element in array {
        let Ok(element) = element else { break };
        if let Some(projected) = project_value(element, tree, inclusion, true) {
            out.push(projected);
        }
    }
    out
}

/// The keys one document gives a wildcard index.
#[derive(Debug, Default)]
pub struct WildcardKeys {
    /// Encoded keys, deduplicated and in byte order.
    pub keys: BTreeSet<Vec<u8>>,
    /// The dotted paths at which the walk met an array.
    pub multikey: BTreeSet<String>,
}

/// The keys of `doc` in a wildcard index with `projection`, its values ordered `direction`.
pub fn keys(projection: &Projection, direction: Direction, doc: &RawDocument) -> WildcardKeys {
    let mut walk = Walk {
        direction,
        path: String::new(),
        out: WildcardKeys::default(),
    };
    if projection.only_excludes_id() {
        walk.fields(elements(doc).filter(|(name, _)| *name != "_id"), false);
    } else {
        let projected = projection.apply(doc);
        walk.fields(elements(&projected), false);
    }
    walk.out
}

struct Walk {
    direction: Direction,
    path: String,
    out: WildcardKeys,
}

impl Walk {
    /// `_traverseWildcard` over the fields of a document or, `in_array`, the elements of an
    /// array (whose names are positions, not path components).
    fn fields<'a>(
        &mut self,
        fields: impl Iterator<Item = (&'a str, RawBsonRef<'a>)>,
        in_array: bool,
    ) {
        for (name, value) in fields {
            if name.contains('.') {
                continue;
            }
            let length = self.path.len();
            if !in_array {
                if !self.path.is_empty() {
                    self.path.push('.');
                }
                self.path.push_str(name);
            }
            match value {
                RawBsonRef::Array(_) if in_array => self.key(value),
                RawBsonRef::Array(array) => {
                    self.out.multikey.insert(self.path.clone());
                    let mut items = array_fields(array).peekable();
                    if items.peek().is_none() {
                        self.key(RawBsonRef::Undefined);
                    } else {
                        self.fields(items, true);
                    }
                }
                RawBsonRef::Document(sub) if sub.is_empty() => self.key(value),
                RawBsonRef::Document(sub) => self.fields(elements(sub), false),
                _ => self.key(value),
            }
            self.path.truncate(length);
        }
    }

    fn key(&mut self, value: RawBsonRef<'_>) {
        let mut key = Vec::with_capacity(self.path.len() + 16);
        encode_field_into(
            Some(RawBsonRef::String(&self.path)),
            Direction::Ascending,
            &mut key,
        );
        encode_field_into(Some(value), self.direction, &mut key);
        self.out.keys.insert(key);
    }
}

/// An array's elements as (position, value), stopping at the first malformed one.
fn array_fields(array: &RawArray) -> impl Iterator<Item = (&str, RawBsonRef<'_>)> {
    array.iter_elements().map_while(|element| {
        let element = element.ok()?;
        let value = element.value().ok()?;
        Some((element.key().as_str(), value))
    })
}
