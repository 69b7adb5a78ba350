//! MongoDB updates over raw BSON: operators, replacement documents and upsert seeding.
//!
//! An update is parsed once ([`Update::parse`]) and applied to each matched
//! document ([`Update::apply`]). Application decodes the document into a
//! `bson::Document`, edits it and re-encodes it; the result says whether the
//! bytes changed (so `nModified` is exact) and which paths changed (so the
//! engine only rewrites the index entries that need it).
//!
//! ```
//! use bson::rawdoc;
//! use update::{ApplyContext, Update, UpdateOptions};
//!
//! let update = Update::parse(&rawdoc! {"$inc": {"n": 1}}, UpdateOptions::default()).unwrap();
//! let applied = update.apply(&rawdoc! {"_id": 1, "n": 1}, &ApplyContext::default()).unwrap();
//! assert_eq!(applied.doc, rawdoc! {"_id": 1, "n": 2});
//! assert!(applied.modified);
//! assert_eq!(applied.changed_paths, vec!["n".to_owned()]);
//! ```
#![forbid(unsafe_code)]

mod apply;
mod array_ops;
pub mod error;
mod fields;
pub mod limits;
mod parse;
mod pipeline;
mod splice;
mod storage;
mod tree;
mod upsert;
mod value;

use bson::{Bson, Document, RawArray, RawDocument, RawDocumentBuf};
use query::Filter;

pub use error::UpdateError;
pub use parse::OPERATORS;
pub use upsert::{upsert_seed, upsert_seed_id};

use crate::apply::{Env, apply_op};
use crate::parse::{Op, OpKind};
use crate::tree::Component;

/// Options given with the update command.
#[derive(Debug, Clone, Default)]
pub struct UpdateOptions {
    /// The `arrayFilters` documents, in command order.
    pub array_filters: Vec<RawDocumentBuf>,
    /// The command's variables (`let`, `$$NOW`), read by a pipeline update's
    /// expressions.
    pub variables: query::Variables,
}

/// What one application sees besides the document.
#[derive(Debug, Clone, Copy, Default)]
pub struct ApplyContext<'a> {
    /// The query filter that selected the document: resolves the positional `$`.
    pub query: Option<&'a Filter>,
    /// The time `$currentDate` stores (the engine passes one per command).
    pub now: Option<bson::DateTime>,
    /// Whether this application builds the document an upsert inserts
    /// (`$setOnInsert` applies only then, and `_id` may be set).
    pub is_insert: bool,
}

/// The outcome of applying an update to one document.
#[derive(Debug, Clone, PartialEq)]
pub struct Applied {
    /// The document after the update.
    pub doc: RawDocumentBuf,
    /// Whether the bytes differ from the input (MongoDB's `nModified`).
    pub modified: bool,
    /// The concrete dotted paths whose values changed, in application order
    /// (all top-level fields for a replacement). Empty when not modified.
    pub changed_paths: Vec<String>,
}

/// A parsed update.
#[derive(Debug, Clone)]
pub struct Update {
    kind: Kind,
}

#[derive(Debug, Clone)]
enum Kind {
    /// Operations sorted in MongoDB's application order.
    Operators {
        ops: Vec<Op>,
        array_filters: Vec<(String, Filter)>,
    },
    Replacement(Document),
    Pipeline(Vec<pipeline::Stage>),
}

impl Update {
    /// Parses an update document: operators (`{$set: ..}`) or a replacement.
    pub fn parse(update: &RawDocument, options: UpdateOptions) -> Result<Update, UpdateError> {
        let first = match update.iter().next() {
            Some(Ok((key, _))) => key.as_str(),
            Some(Err(e)) => return Err(UpdateError::failed_to_parse(e.to_string())),
            None => "",
        };
        if !first.starts_with('$') {
            if !options.array_filters.is_empty() {
                return Err(UpdateError::FailedToParse(
                    "arrayFilters may not be specified for replacement-style updates".to_owned(),
                ));
            }
            return Update::replacement(update);
        }
        let mut ops = parse::parse_operators(update)?;
        parse::check_conflicts(&ops)?;
        let array_filters = parse_array_filters(&options.array_filters)?;
        check_identifiers(&ops, &array_filters, update)?;
        ops.sort_by(|a, b| tree::compare_paths(&sort_key(a), &sort_key(b)));
        Ok(Update {
            kind: Kind::Operators { ops, array_filters },
        })
    }

    /// Parses a pipeline-style update (`[{$set: ..}, {$unset: ..}, ..]`).
    pub fn parse_pipeline(
        stages: &RawArray,
        options: UpdateOptions,
    ) -> Result<Update, UpdateError> {
        if !options.array_filters.is_empty() {
            return Err(UpdateError::FailedToParse(
                "arrayFilters may not be specified for pipeline-style updates".to_owned(),
            ));
        }
        Ok(Update {
            kind: Kind::Pipeline(pipeline::parse_pipeline(stages, &options.variables)?),
        })
    }

    /// Parses a replacement document (`replaceOne`, `findOneAndReplace`).
    ///
    /// A top-level `$`-prefixed field is refused (52) when the replacement is
    /// applied to a stored document, not here: the document an upsert inserts
    /// may hold one, as in MongoDB 5.0+.
    pub fn replacement(doc: &RawDocument) -> Result<Update, UpdateError> {
        let tree =
            Document::try_from(doc).map_err(|e| UpdateError::failed_to_parse(e.to_string()))?;
        Ok(Update {
            kind: Kind::Replacement(tree),
        })
    }

    /// Whether this is a replacement rather than an operator update.
    pub fn is_replacement(&self) -> bool {
        matches!(self.kind, Kind::Replacement(_))
    }

    /// Applies the update to `doc`.
    pub fn apply(
        &self,
        doc: &RawDocument,
        context: &ApplyContext<'_>,
    ) -> Result<Applied, UpdateError> {
        if let Kind::Operators { ops, array_filters } = &self.kind
            && let Some(field) = splice::single_field(ops)
        {
            let env = Env {
                original: doc,
                query: context.query,
                array_filters,
                now: context.now.unwrap_or_else(bson::DateTime::now),
                is_insert: context.is_insert,
                id_text: id_text(doc),
            };
            let (bytes, changed) = splice::apply(ops, field, doc, &env)?;
            return finish(bytes, doc, changed);
        }
        self.apply_tree(doc, context)
    }

    /// Applies the update by decoding the whole document: the reference the
    /// bytes fast path of [`Update::apply`] is tested against.
    pub fn apply_tree(
        &self,
        doc: &RawDocument,
        context: &ApplyContext<'_>,
    ) -> Result<Applied, UpdateError> {
        let mut tree =
            Document::try_from(doc).map_err(|e| UpdateError::bad_value(e.to_string()))?;
        let id_before = tree.get("_id").cloned();
        let mut changed = Vec::new();
        match &self.kind {
            Kind::Replacement(replacement) => {
                let mut out = Document::new();
                if let Some(id) = replacement.get("_id").or(id_before.as_ref()) {
                    out.insert("_id", id.clone());
                }
                for (key, value) in replacement {
                    if key != "_id" {
                        out.insert(key.clone(), value.clone());
                    }
                }
                if let (Some(before), Some(after)) = (&id_before, out.get("_id"))
                    && before != after
                    && !context.is_insert
                {
                    return Err(UpdateError::ImmutableField(format!(
                        "After applying the update, the (immutable) field '_id' was found to have been altered to _id: {after}"
                    )));
                }
                if !context.is_insert {
                    storage::check_replacement(&out)?;
                }
                changed = differing_keys(&tree, &out);
                tree = out;
            }
            Kind::Pipeline(stages) => {
                let mut out = pipeline::run(stages, tree.clone(), context.query)?;
                if let Some(id) = &id_before
                    && !out.contains_key("_id")
                {
                    let mut ordered = Document::new();
                    ordered.insert("_id", id.clone());
                    ordered.extend(out);
                    out = ordered;
                }
                check_id(id_before.as_ref(), &out, context.is_insert)?;
                changed = differing_keys(&tree, &out);
                tree = out;
            }
            Kind::Operators { ops, array_filters } => {
                let env = Env {
                    original: doc,
                    query: context.query,
                    array_filters,
                    now: context.now.unwrap_or_else(bson::DateTime::now),
                    is_insert: context.is_insert,
                    id_text: id_before.as_ref().map_or_else(String::new, Bson::to_string),
                };
                for op in ops {
                    apply_op(&mut tree, op, &env, &mut changed)?;
                }
                check_id(id_before.as_ref(), &tree, context.is_insert)?;
                if !context.is_insert {
                    storage::check_operator_result(doc, &tree, &direct_dollar_names(ops))?;
                }
            }
        }
        let out =
            RawDocumentBuf::try_from(&tree).map_err(|e| UpdateError::bad_value(e.to_string()))?;
        storage::check_depth(out.as_bytes())?;
        finish(out.into_bytes(), doc, changed)
    }
}

fn id_text(doc: &RawDocument) -> String {
    match doc.get("_id") {
        Ok(Some(id)) => Bson::try_from(id).map_or_else(|_| String::new(), |b| b.to_string()),
        _ => String::new(),
    }
}

/// Checks the size of the result and works out `modified`.
fn finish(
    bytes: Vec<u8>,
    doc: &RawDocument,
    mut changed: Vec<String>,
) -> Result<Applied, UpdateError> {
    {
        if bytes.len() > limits::DOCUMENT_SIZE_MAX {
            return Err(UpdateError::Location {
                code: 17419,
                message: format!(
                    "Resulting document after update is larger than {}",
                    limits::DOCUMENT_SIZE_MAX
                ),
            });
        }
        let modified = bytes != doc.as_bytes();
        if !modified {
            changed.clear();
        }
        let out =
            RawDocumentBuf::from_bytes(bytes).map_err(|e| UpdateError::bad_value(e.to_string()))?;
        Ok(Applied {
            doc: out,
            modified,
            changed_paths: changed,
        })
    }
}

/// The top-level fields whose values differ between two documents.
fn differing_keys(before: &Document, after: &Document) -> Vec<String> {
    let mut keys: Vec<String> = after
        .iter()
        .filter(|(k, v)| before.get(k.as_str()) != Some(*v))
        .map(|(k, _)| k.clone())
        .chain(
            before
                .keys()
                .filter(|k| !after.contains_key(k.as_str()))
                .cloned(),
        )
        .collect();
    keys.sort();
    keys
}

/// The top-level `$`-prefixed fields some operation writes whole (a one-component
/// path or `$rename` target): replacing one is validated like creating it.
fn direct_dollar_names(ops: &[Op]) -> Vec<&str> {
    let mut names = Vec::new();
    for op in ops {
        if let [Component::Field(name)] = op.path.as_slice()
            && name.starts_with('$')
        {
            names.push(name.as_str());
        }
        if let OpKind::Rename(to) = &op.kind
            && let [name] = to.as_slice()
            && name.starts_with('$')
        {
            names.push(name.as_str());
        }
    }
    names
}

fn sort_key(op: &Op) -> Vec<String> {
    op.path
        .iter()
        .map(|c| match c {
            Component::Field(name) => name.clone(),
            Component::Positional => "$".to_owned(),
            Component::All => "$[]".to_owned(),
            Component::Filtered(id) => format!("$[{id}]"),
        })
        .collect()
}

fn check_id(before: Option<&Bson>, after: &Document, is_insert: bool) -> Result<(), UpdateError> {
    let now = after.get("_id");
    if before.is_none() && is_insert {
        return Ok(());
    }
    if before != now {
        return Err(UpdateError::ImmutableField(
            "Performing an update on the path '_id' would modify the immutable field '_id'"
                .to_owned(),
        ));
    }
    Ok(())
}

fn parse_array_filters(filters: &[RawDocumentBuf]) -> Result<Vec<(String, Filter)>, UpdateError> {
    let mut parsed: Vec<(String, Filter)> = Vec::new();
    for filter in filters {
        let mut id: Option<String> = None;
        for element in filter {
            let (key, _) = element.map_err(|e| UpdateError::failed_to_parse(e.to_string()))?;
            let name = key.as_str().split('.').next().unwrap_or_default();
            let valid = name.chars().next().is_some_and(|c| c.is_ascii_lowercase())
                && name.chars().all(|c| c.is_ascii_alphanumeric());
            if !valid {
                return Err(UpdateError::bad_value(format!(
                    "Error parsing array filter :: caused by :: The top-level field name must be an alphanumeric string beginning with a lowercase letter, found '{name}'"
                )));
            }
            match &id {
                Some(seen) if seen != name => {
                    return Err(UpdateError::failed_to_parse(format!(
                        "Error parsing array filter :: caused by :: Expected a single top-level field name, found '{seen}' and '{name}'"
                    )));
                }
                _ => id = Some(name.to_owned()),
            }
        }
        let Some(id) = id else {
            return Err(UpdateError::failed_to_parse(
                "Cannot use an expression without a top-level field name in arrayFilters",
            ));
        };
        if parsed.iter().any(|(seen, _)| *seen == id) {
            return Err(UpdateError::failed_to_parse(format!(
                "Found multiple array filters with the same top-level field name {id}"
            )));
        }
        parsed.push((id, Filter::parse(filter)?));
    }
    Ok(parsed)
}

fn check_identifiers(
    ops: &[Op],
    filters: &[(String, Filter)],
    update: &RawDocument,
) -> Result<(), UpdateError> {
    let used = |id: &str| {
        ops.iter().any(|op| {
            op.path
                .iter()
                .any(|c| matches!(c, Component::Filtered(x) if x == id))
        })
    };
    for op in ops {
        for component in &op.path {
            if let Component::Filtered(id) = component
                && !filters.iter().any(|(name, _)| name == id)
            {
                return Err(UpdateError::bad_value(format!(
                    "No array filter found for identifier '{id}' in path '{}'",
                    op.path_text
                )));
            }
        }
    }
    if let Some((id, _)) = filters.iter().find(|(id, _)| !used(id)) {
        let text = Document::try_from(update).map_or_else(|_| String::new(), |d| d.to_string());
        return Err(UpdateError::failed_to_parse(format!(
            "The array filter for identifier '{id}' was not used in the update {text}"
        )));
    }
    Ok(())
}
