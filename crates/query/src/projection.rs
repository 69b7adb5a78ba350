//! Find projections: inclusion, exclusion, `_id` rules, `$slice`, `$elemMatch`,
//! positional `$` and computed fields.
//!
//! A projection is parsed into a tree of paths. Inclusion keeps the named
//! fields in document order (computed fields follow, in projection order);
//! exclusion copies everything else. `_id` is kept unless excluded by name.
//! Inside arrays, a nested path applies to each element that is a document;
//! inclusion drops the other elements, exclusion keeps them.

use crate::error::QueryError;
use crate::expr::Expression;
use crate::filter::Filter;
use crate::variables::Variables;
use bson::raw::{RawDocument, RawDocumentBuf, cstr};
use bson::{Bson, Document, RawBsonRef};
use bson_canonical::compare::elements;

/// A parsed projection.
#[derive(Debug, Clone, Default)]
pub struct Projection {
    tree: Vec<(String, Node)>,
    inclusion: bool,
    id_excluded: bool,
    /// Whether sub-paths reach into arrays nested in arrays (aggregation) or
    /// leave them alone (find).
    nested_arrays: bool,
}

#[derive(Debug, Clone)]
enum Node {
    Include,
    Exclude,
    Slice(Vec<i64>),
    ElemMatch(Box<Filter>),
    Positional,
    Computed(Box<Expression>),
    Children(Vec<(String, Node)>),
}

fn collision(path: &str) -> QueryError {
    QueryError::Projection {
        code: 31250,
        message: format!("Path collision at {path}"),
    }
}

fn insert(tree: &mut Vec<(String, Node)>, path: &str, node: Node) -> Result<(), QueryError> {
    let (head, rest) = match path.split_once('.') {
        Some((h, r)) => (h, Some(r)),
        None => (path, None),
    };
    let position = tree.iter().position(|(k, _)| k == head);
    match (rest, position) {
        (None, None) => tree.push((head.to_owned(), node)),
        (None, Some(_)) => return Err(collision(path)),
        (Some(rest), None) => {
            let mut children = Vec::new();
            insert(&mut children, rest, node)?;
            tree.push((head.to_owned(), Node::Children(children)));
        }
        (Some(rest), Some(i)) => match &mut tree[i].1 {
            Node::Children(children) => insert(children, rest, node)?,
            _ => return Err(collision(path)),
        },
    }
    Ok(())
}

/// Which command a projection belongs to: `find` allows `$slice`,
/// `$elemMatch` and the positional `$`; an aggregation `$project` reads
/// `{$slice: ..}` as the expression and refuses the other two.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Mode {
    Find,
    Aggregation,
}

/// What the fields parsed so far make the projection.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
    Inclusion,
    Exclusion,
}

/// Parsing state: the kind so far and the find-only operators seen, which
/// decide the kind when no field does (MongoDB's `projection_ast` rules).
struct ParseState<'v> {
    mode: Mode,
    vars: &'v Variables,
    kind: Option<Kind>,
    id_included: bool,
    has_slice: bool,
    has_elem_match: bool,
}

impl ParseState<'_> {
    fn set_kind(
        &mut self,
        kind: Kind,
        error: impl FnOnce() -> QueryError,
    ) -> Result<(), QueryError> {
        match self.kind {
            Some(current) if current != kind => Err(error()),
            _ => {
                self.kind = Some(kind);
                Ok(())
            }
        }
    }
}

/// Whether a document value in a projection is a sub-projection
/// (`{a: {b: 1}}`) rather than an expression (one field named `$op`).
fn is_sub_projection(sub: &RawDocument) -> bool {
    let mut fields = elements(sub);
    match (fields.next(), fields.next()) {
        (Some((key, _)), None) => !key.starts_with('$'),
        _ => true,
    }
}

fn projection_error(code: i32, message: impl Into<String>) -> QueryError {
    QueryError::Projection {
        code,
        message: message.into(),
    }
}

/// Hands each top-level element of the document `bytes` (its length prefix checked) to
/// `visit` as its key and its whole bytes (type, key, value), in document order, until
/// `visit` answers `false`. Elements are skipped by their lengths and the terminating byte
/// is never read. `Ok(false)` when an element's type is one whose size the raw walk does
/// not compute (the caller parses the document instead); malformed bytes are an error.
fn top_level_elements(
    bytes: &[u8],
    mut visit: impl FnMut(&[u8], &[u8]) -> bool,
) -> Result<bool, QueryError> {
    use crate::raw::{Element, element_at};
    let malformed = || QueryError::bad_value("malformed document: an element runs past its end");
    let end = bytes.len().saturating_sub(1);
    let mut at = 4;
    while at < end {
        let (key, value_end) = match element_at(bytes, at) {
            Element::Known(_, key, value_start, size) => {
                let value_end = value_start.checked_add(size).filter(|&e| e <= end);
                (key, value_end.ok_or_else(malformed)?)
            }
            Element::Unknown => return Ok(false),
            Element::Malformed => return Err(malformed()),
        };
        if !visit(key, &bytes[at..value_end]) {
            return Ok(true);
        }
        at = value_end;
    }
    Ok(true)
}

impl Projection {
    /// Parses a `find` projection document.
    pub fn parse(spec: &RawDocument) -> Result<Projection, QueryError> {
        Self::parse_with(spec, &crate::variables::NO_VARIABLES)
    }

    /// Parses a `find` projection whose expressions may read the command's
    /// variables (`$$name` for a `let` variable, `$$NOW`).
    pub fn parse_with(spec: &RawDocument, vars: &Variables) -> Result<Projection, QueryError> {
        Self::parse_mode(spec, Mode::Find, vars)
    }

    /// Parses the specification of an aggregation `$project` stage: the
    /// positional `$` is refused (31324), `$elemMatch` is no expression
    /// (31325), `{$slice: ..}` is the `$slice` expression and an empty
    /// specification is refused (51272).
    pub fn parse_aggregation(spec: &RawDocument) -> Result<Projection, QueryError> {
        Self::parse_aggregation_with(spec, &crate::variables::NO_VARIABLES)
    }

    /// [`Projection::parse_aggregation`] with the command's variables in scope.
    pub fn parse_aggregation_with(
        spec: &RawDocument,
        vars: &Variables,
    ) -> Result<Projection, QueryError> {
        if spec.is_empty() {
            return Err(projection_error(
                51272,
                "projection specification must have at least one field",
            ));
        }
        Self::parse_mode(spec, Mode::Aggregation, vars)
    }

    fn parse_mode(
        spec: &RawDocument,
        mode: Mode,
        vars: &Variables,
    ) -> Result<Projection, QueryError> {
        let mut projection = Projection::default();
        let mut state = ParseState {
            mode,
            vars,
            kind: None,
            id_included: false,
            has_slice: false,
            has_elem_match: false,
        };
        projection.parse_level(spec, "", &mut state)?;
        // With no field deciding, find's rules: `{_id: 1}` includes, then
        // `$slice` excludes, then `$elemMatch` includes.
        let kind = state.kind.unwrap_or(
            if state.id_included || (state.has_elem_match && !state.has_slice) {
                Kind::Inclusion
            } else {
                Kind::Exclusion
            },
        );
        projection.inclusion = kind == Kind::Inclusion;
        projection.nested_arrays = mode == Mode::Aggregation;
        Ok(projection)
    }

    /// Parses the fields of `spec`, a sub-projection at `prefix` when not empty.
    fn parse_level(
        &mut self,
        spec: &RawDocument,
        prefix: &str,
        state: &mut ParseState<'_>,
    ) -> Result<(), QueryError> {
        for (key, value) in elements(spec) {
            if key.is_empty() || (key.starts_with('$') && !crate::value::dollar_name_allowed(key)) {
                return Err(projection_error(
                    16410,
                    format!("FieldPath field names may not start with '$'. Got: {key}"),
                ));
            }
            let path = if prefix.is_empty() {
                key.to_owned()
            } else {
                format!("{prefix}.{key}")
            };
            if let RawBsonRef::Document(sub) = value
                && !key.ends_with(".$")
                && is_sub_projection(sub)
            {
                if sub.is_empty() {
                    return Err(projection_error(
                        51270,
                        format!(
                            "An empty sub-projection is not a valid value. Found empty object \
                             at path {path}"
                        ),
                    ));
                }
                self.parse_level(sub, &path, state)?;
                continue;
            }
            let (path, node) = Self::parse_field(&path, value, state.mode, state.vars)?;
            let top_level_id = path == "_id";
            match &node {
                Node::Exclude if top_level_id => self.id_excluded = true,
                Node::Include if top_level_id => state.id_included = true,
                Node::Exclude => state.set_kind(Kind::Exclusion, || {
                    projection_error(
                        31254,
                        format!("Cannot do exclusion on field {path} in inclusion projection"),
                    )
                })?,
                Node::Include | Node::Positional => state.set_kind(Kind::Inclusion, || {
                    projection_error(
                        31253,
                        format!("Cannot do inclusion on field {path} in exclusion projection"),
                    )
                })?,
                Node::Computed(_) => state.set_kind(Kind::Inclusion, || {
                    if matches!(value, RawBsonRef::Document(_)) {
                        projection_error(
                            31252,
                            "Cannot use expression other than $meta in exclusion projection",
                        )
                    } else {
                        let shown = Bson::try_from(value).map_or(String::new(), |v| v.to_string());
                        projection_error(
                            31310,
                            format!(
                                "Cannot use an expression {key}: {shown} in an exclusion projection"
                            ),
                        )
                    }
                })?,
                Node::Slice(_) => state.has_slice = true,
                Node::ElemMatch(_) => state.has_elem_match = true,
                Node::Children(_) => {}
            }
            insert(&mut self.tree, &path, node)?;
        }
        Ok(())
    }

    fn parse_field(
        key: &str,
        value: RawBsonRef<'_>,
        mode: Mode,
        vars: &Variables,
    ) -> Result<(String, Node), QueryError> {
        if let Some(array_path) = key.strip_suffix(".$") {
            if mode == Mode::Aggregation {
                return Err(projection_error(
                    31324,
                    "Cannot use positional projection in aggregation projection",
                ));
            }
            if array_path.contains(".$") {
                return Err(QueryError::bad_value(
                    "Positional projection may only be used at the end",
                ));
            }
            return Ok((array_path.to_owned(), Node::Positional));
        }
        if mode == Mode::Aggregation && (key.contains(".$.") || key == "$") {
            return Err(projection_error(
                31324,
                "Cannot use positional projection in aggregation projection",
            ));
        }
        let node = match value {
            RawBsonRef::Boolean(b) => {
                if b {
                    Node::Include
                } else {
                    Node::Exclude
                }
            }
            RawBsonRef::Int32(_)
            | RawBsonRef::Int64(_)
            | RawBsonRef::Double(_)
            | RawBsonRef::Decimal128(_) => {
                if crate::value::true_value(value) {
                    Node::Include
                } else {
                    Node::Exclude
                }
            }
            RawBsonRef::Document(doc) => match (mode, elements(doc).next()) {
                (Mode::Find, Some(("$slice", arg))) => Node::Slice(parse_slice(arg)?),
                (Mode::Find, Some(("$elemMatch", RawBsonRef::Document(filter)))) => {
                    Node::ElemMatch(Box::new(Filter::parse_with(filter, vars)?))
                }
                (Mode::Find, Some(("$elemMatch", _))) => {
                    return Err(QueryError::bad_value(
                        "elemMatch: Invalid argument, object required.",
                    ));
                }
                (Mode::Aggregation, Some(("$elemMatch", _))) => {
                    return Err(projection_error(31325, "Unknown expression $elemMatch"));
                }
                (_, Some(("$meta", _))) => {
                    return Err(QueryError::bad_value("$meta projections are not supported"));
                }
                _ => Node::Computed(Box::new(Expression::parse_with(value, vars)?)),
            },
            other => Node::Computed(Box::new(Expression::parse_with(other, vars)?)),
        };
        Ok((key.to_owned(), node))
    }

    /// Whether this is an inclusion projection.
    pub fn is_inclusion(&self) -> bool {
        self.inclusion
    }

    /// Projects `doc`. `filter` is the query's filter, which the positional
    /// `$` needs.
    pub fn apply(
        &self,
        doc: &RawDocument,
        filter: Option<&Filter>,
    ) -> Result<RawDocumentBuf, QueryError> {
        if self
            .tree
            .iter()
            .all(|(_, n)| matches!(n, Node::Include | Node::Exclude))
        {
            return self.apply_top_level(doc);
        }
        self.apply_tree(doc, filter)
    }

    /// [`Projection::apply`] over the bytes of one well-formed BSON document (a stored
    /// one: validated on the way in). A projection that only keeps or drops top-level
    /// fields copies the kept elements' byte ranges straight into the output, skipping the
    /// others by their lengths, and never reads the document's terminating byte: `{k: 1,
    /// p: 1}` of a 16 KiB document reads its first cache lines, not its last page. Other
    /// projections parse the document and go through `apply`.
    pub fn apply_bytes(
        &self,
        bytes: &[u8],
        filter: Option<&Filter>,
    ) -> Result<RawDocumentBuf, QueryError> {
        if crate::raw::is_framed(bytes)
            && self.is_top_level()
            && let Some(out) = self.copy_top_level(bytes)?
        {
            return Ok(out);
        }
        let doc =
            RawDocument::from_bytes(bytes).map_err(|e| QueryError::bad_value(e.to_string()))?;
        self.apply(doc, filter)
    }

    /// Whether every field of the projection keeps or drops a top-level field.
    fn is_top_level(&self) -> bool {
        self.tree
            .iter()
            .all(|(_, n)| matches!(n, Node::Include | Node::Exclude))
    }

    /// Whether the top-level field `key` is kept, as `apply_top_level` decides it, with
    /// `_id` copied separately first when `id_first`.
    fn keeps(&self, key: &[u8], id_first: bool) -> bool {
        let node = self
            .tree
            .iter()
            .find(|(k, _)| crate::raw::same_key(k.as_bytes(), key))
            .map(|(_, n)| n);
        let is_id = crate::raw::same_key(key, b"_id");
        let kept = match node {
            None if is_id => !self.id_excluded,
            None => !self.inclusion,
            Some(node) => matches!(node, Node::Include),
        };
        kept && !(is_id && (id_first || self.id_excluded))
    }

    /// `apply_top_level` by byte ranges; `None` when the document holds a type whose size
    /// the raw walk does not compute (the caller parses it instead).
    fn copy_top_level(&self, bytes: &[u8]) -> Result<Option<RawDocumentBuf>, QueryError> {
        let id_first = self.inclusion && !self.id_excluded;
        let mut out = Vec::with_capacity(64);
        out.extend_from_slice(&[0; 4]);
        // In an inclusion `_id` comes first: the first one, wherever it is.
        if id_first {
            let walked = top_level_elements(bytes, |key, element| {
                if crate::raw::same_key(key, b"_id") {
                    out.extend_from_slice(element);
                    return false;
                }
                true
            })?;
            if !walked {
                return Ok(None);
            }
        }
        let walked = top_level_elements(bytes, |key, element| {
            if self.keeps(key, id_first) {
                out.extend_from_slice(element);
            }
            true
        })?;
        if !walked {
            return Ok(None);
        }
        out.push(0);
        let length = i32::try_from(out.len())
            .map_err(|_| QueryError::bad_value("projected document too large"))?;
        out[..4].copy_from_slice(&length.to_le_bytes());
        RawDocumentBuf::from_bytes(out)
            .map(Some)
            .map_err(|e| QueryError::bad_value(e.to_string()))
    }

    /// `apply` for a projection that only keeps or drops top-level fields: the kept
    /// elements are copied as raw bytes, nothing is decoded. Same output as `apply_tree`:
    /// `_id` first in an inclusion, then the document's fields in its own order.
    fn apply_top_level(&self, doc: &RawDocument) -> Result<RawDocumentBuf, QueryError> {
        let bad = |e: bson::error::Error| QueryError::bad_value(e.to_string());
        let mut out = RawDocumentBuf::new();
        let id_first = self.inclusion && !self.id_excluded;
        if id_first && let Some(id) = doc.get("_id").map_err(bad)? {
            out.append(cstr!("_id"), id);
        }
        for element in doc.iter_elements() {
            let element = element.map_err(bad)?;
            let key = element.key().as_str();
            let kept = match self.tree.iter().find(|(k, _)| k == key).map(|(_, n)| n) {
                None if key == "_id" => !self.id_excluded,
                None => !self.inclusion,
                Some(node) => matches!(node, Node::Include),
            };
            if !kept || (key == "_id" && (id_first || self.id_excluded)) {
                continue;
            }
            out.append(element.key(), element.value().map_err(bad)?);
        }
        Ok(out)
    }

    /// `apply` through a decoded document, for projections with sub-paths, computed
    /// fields, `$slice`, `$elemMatch` or the positional `$`.
    fn apply_tree(
        &self,
        doc: &RawDocument,
        filter: Option<&Filter>,
    ) -> Result<RawDocumentBuf, QueryError> {
        let tree = Document::try_from(doc).map_err(|e| QueryError::bad_value(e.to_string()))?;
        let mut out = Document::new();
        if self.inclusion
            && !self.id_excluded
            && let Some(id) = tree.get("_id")
        {
            out.insert("_id", id.clone());
        }
        let projected = self.project(&tree, &self.tree, doc, filter, "")?;
        for (key, value) in projected {
            if key == "_id" && (self.id_excluded || out.contains_key("_id")) {
                if !self.id_excluded {
                    out.insert("_id", value);
                }
                continue;
            }
            out.insert(key, value);
        }
        RawDocumentBuf::try_from(&out).map_err(|e| QueryError::bad_value(e.to_string()))
    }

    fn project(
        &self,
        doc: &Document,
        tree: &[(String, Node)],
        root: &RawDocument,
        filter: Option<&Filter>,
        prefix: &str,
    ) -> Result<Document, QueryError> {
        let mut out = Document::new();
        for (key, value) in doc {
            let node = tree.iter().find(|(k, _)| k == key).map(|(_, n)| n);
            let path = if prefix.is_empty() {
                key.clone()
            } else {
                format!("{prefix}.{key}")
            };
            let kept = match node {
                None if key == "_id" && prefix.is_empty() => {
                    (!self.id_excluded).then(|| value.clone())
                }
                None => (!self.inclusion).then(|| value.clone()),
                // Computed fields are appended below, as MongoDB does.
                Some(Node::Computed(_)) => None,
                Some(node) => self.apply_node(node, value, root, filter, &path)?,
            };
            if let Some(v) = kept {
                out.insert(key.clone(), v);
            }
        }
        // Computed fields follow the document's own fields in projection
        // order, and so do sub-trees with computed fields that the document
        // lacks.
        for (key, node) in tree {
            let value = match node {
                Node::Computed(expr) => expr.evaluate(root)?,
                Node::Children(_) if !doc.contains_key(key) => self.computed_only(node, root)?,
                _ => None,
            };
            if let Some(v) = value {
                out.insert(key.clone(), v);
            }
        }
        Ok(out)
    }

    /// The computed fields of a sub-tree on their own: a document of them
    /// when the sub-tree has any (empty when all are missing), else nothing.
    fn computed_only(&self, node: &Node, root: &RawDocument) -> Result<Option<Bson>, QueryError> {
        Ok(match node {
            Node::Computed(expr) => expr.evaluate(root)?,
            Node::Children(children) if has_computed(children) => {
                let mut sub = Document::new();
                for (key, child) in children {
                    if let Some(v) = self.computed_only(child, root)? {
                        sub.insert(key.clone(), v);
                    }
                }
                Some(Bson::Document(sub))
            }
            _ => None,
        })
    }

    fn apply_node(
        &self,
        node: &Node,
        value: &Bson,
        root: &RawDocument,
        filter: Option<&Filter>,
        path: &str,
    ) -> Result<Option<Bson>, QueryError> {
        Ok(match node {
            Node::Include => Some(value.clone()),
            Node::Exclude => None,
            Node::Computed(expr) => expr.evaluate(root)?,
            Node::Slice(numbers) => Some(match value {
                Bson::Array(items) => Bson::Array(crate::expr::slice_items(items, numbers)?),
                other => other.clone(),
            }),
            Node::ElemMatch(sub) => match value {
                Bson::Array(items) => items
                    .iter()
                    .find(|item| element_matches(sub, item))
                    .map(|item| Bson::Array(vec![item.clone()])),
                _ => None,
            },
            Node::Positional => {
                let Bson::Array(items) = value else {
                    return Ok(Some(value.clone()));
                };
                let index = filter.and_then(|f| f.positional_index(root, path)).ok_or_else(|| {
                    QueryError::location(
                        51246,
                        "Executor error during find command :: caused by :: positional operator \
                         '.$' couldn't find a matching element in the array",
                    )
                })?;
                items.get(index).map(|item| Bson::Array(vec![item.clone()]))
            }
            Node::Children(children) => match value {
                // An included path below a document that lacks it leaves the
                // document empty rather than dropping it, as MongoDB does.
                Bson::Document(sub) => Some(Bson::Document(
                    self.project(sub, children, root, filter, path)?,
                )),
                Bson::Array(items) => {
                    let mut out = Vec::new();
                    for item in items {
                        match item {
                            Bson::Document(sub) => out.push(Bson::Document(
                                self.project(sub, children, root, filter, path)?,
                            )),
                            Bson::Array(_) if self.nested_arrays => {
                                if let Some(v) = self.apply_node(node, item, root, filter, path)? {
                                    out.push(v);
                                }
                            }
                            Bson::Array(_) if !self.inclusion => out.push(item.clone()),
                            _ if !self.inclusion => out.push(item.clone()),
                            _ => {}
                        }
                    }
                    Some(Bson::Array(out))
                }
                // A scalar where the projection has sub-fields: kept by an
                // exclusion; replaced by the computed sub-fields, if any, in
                // an inclusion ({"a.b": {$literal: 1}} makes {a: 2} {a: {b: 1}}).
                other if !self.inclusion => Some(other.clone()),
                _ => self.computed_only(node, root)?,
            },
        })
    }
}

fn has_computed(tree: &[(String, Node)]) -> bool {
    tree.iter().any(|(_, node)| match node {
        Node::Computed(_) => true,
        Node::Children(children) => has_computed(children),
        _ => false,
    })
}

fn element_matches(filter: &Filter, item: &Bson) -> bool {
    let Bson::Document(doc) = item else {
        return false;
    };
    RawDocumentBuf::try_from(doc).is_ok_and(|raw| filter.matches(&raw))
}

fn parse_slice(arg: RawBsonRef<'_>) -> Result<Vec<i64>, QueryError> {
    let numbers: Vec<i64> = match arg {
        RawBsonRef::Array(items) => bson_canonical::compare::array_values(items)
            .map(|v| {
                crate::value::as_whole_i64(v).or_else(|| crate::value::as_f64(v).map(|f| f as i64))
            })
            .collect::<Option<_>>()
            .ok_or_else(|| QueryError::location(28724, "$slice arguments must be numbers"))?,
        other => vec![
            crate::value::as_f64(other)
                .map(|f| f as i64)
                .ok_or_else(|| {
                    QueryError::location(
                        28724,
                        "$slice only supports numbers and [skip, limit] arrays",
                    )
                })?,
        ],
    };
    if numbers.len() != 1 && numbers.len() != 2 {
        return Err(QueryError::location(
            28724,
            "$slice array argument must be of the form [skip, limit]",
        ));
    }
    if numbers.len() == 2 && numbers[1] <= 0 {
        return Err(QueryError::location(28724, "$slice limit must be positive"));
    }
    Ok(numbers)
}

#[cfg(test)]
mod tests {
    use super::*;
    use bson::rawdoc;

    #[test]
    fn top_level_projections_copy_raw_bytes_as_the_tree_path_would() {
        let docs = [
            rawdoc! { "_id": 1, "a": 1, "b": { "c": 2 }, "d": [1, 2], "e": "x" },
            rawdoc! { "a": 1, "_id": "late", "e": null },
            rawdoc! { "b": 2.5, "d": { "_id": 3 } },
            rawdoc! {},
        ];
        let projections = [
            rawdoc! { "a": 1 },
            rawdoc! { "a": 1, "_id": 0 },
            rawdoc! { "_id": 1 },
            rawdoc! { "_id": 0 },
            rawdoc! { "a": 0 },
            rawdoc! { "a": 0, "_id": 0 },
            rawdoc! { "e": 1, "d": 1, "a": true },
            rawdoc! { "b": false, "e": 0 },
            rawdoc! { "missing": 1 },
        ];
        for projection in &projections {
            let parsed = Projection::parse(projection).expect("projection");
            assert!(
                parsed
                    .tree
                    .iter()
                    .all(|(_, n)| matches!(n, Node::Include | Node::Exclude)),
                "{projection:?} takes the raw path"
            );
            for doc in &docs {
                let fast = parsed.apply_top_level(doc).expect("raw path");
                let slow = parsed.apply_tree(doc, None).expect("tree path");
                assert_eq!(fast, slow, "{projection:?} of {doc:?}");
            }
        }
    }
}
