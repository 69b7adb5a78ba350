//! `$redact`: the expression, evaluated with `$$CURRENT` at the document and then at each
//! embedded document it descends into, answers `$$KEEP` (the subtree stays whole),
//! `$$PRUNE` (it goes) or `$$DESCEND` (its fields stay, and embedded documents, alone or
//! in arrays, are redacted in turn). `$$ROOT` stays the whole document throughout.
//! Following MongoDB, the three variables are the strings "keep", "prune" and "descend".

use crate::error::QueryError;
use crate::expr::Expression;
use crate::variables::Variables;
use bson::raw::{RawDocument, RawDocumentBuf};
use bson::{Bson, Document, RawBsonRef};

const KEEP: &str = "keep";
const PRUNE: &str = "prune";
const DESCEND: &str = "descend";

/// A parsed `$redact`.
#[derive(Debug, Clone)]
pub(crate) struct Redact {
    expression: Expression,
}

/// Parses the expression of a `$redact` stage, with `$$KEEP`, `$$PRUNE` and `$$DESCEND`
/// defined.
pub(crate) fn parse(spec: RawBsonRef<'_>, vars: &Variables) -> Result<Redact, QueryError> {
    let vars = vars.with_values(
        [("KEEP", KEEP), ("PRUNE", PRUNE), ("DESCEND", DESCEND)]
            .into_iter()
            .map(|(name, value)| (name.to_owned(), Some(Bson::String(value.to_owned()))))
            .collect(),
    );
    Ok(Redact {
        expression: Expression::parse_with(spec, &vars)?,
    })
}

impl Redact {
    /// The document as the expression leaves it, or `None` when it is pruned.
    pub(crate) fn apply(&self, doc: RawDocumentBuf) -> Result<Option<RawDocumentBuf>, QueryError> {
        let tree = super::stages::to_tree(&doc)?;
        match self.object(&doc, tree)? {
            Some(kept) => super::stages::to_raw(&kept).map(Some),
            None => Ok(None),
        }
    }

    fn object(
        &self,
        root: &RawDocument,
        current: Document,
    ) -> Result<Option<Document>, QueryError> {
        let verdict = self
            .expression
            .evaluate_at(root, Bson::Document(current.clone()))?;
        match verdict {
            Some(Bson::String(word)) if word == KEEP => Ok(Some(current)),
            Some(Bson::String(word)) if word == PRUNE => Ok(None),
            Some(Bson::String(word)) if word == DESCEND => {
                let mut out = Document::new();
                for (name, value) in current {
                    match value {
                        Bson::Document(sub) => {
                            if let Some(kept) = self.object(root, sub)? {
                                out.insert(name, kept);
                            }
                        }
                        Bson::Array(items) => {
                            out.insert(name, self.array(root, items)?);
                        }
                        other => {
                            out.insert(name, other);
                        }
                    }
                }
                Ok(Some(out))
            }
            other => Err(QueryError::location(
                17053,
                format!(
                    "$redact's expression should not return anything aside from the variables \
                     $$KEEP, $$DESCEND, and $$PRUNE, but returned {}",
                    other
                        .as_ref()
                        .map_or_else(|| "MISSING".to_owned(), super::fields::show)
                ),
            )),
        }
    }

    /// An array's elements: documents redacted (pruned ones dropped), arrays in turn,
    /// anything else kept.
    fn array(&self, root: &RawDocument, items: Vec<Bson>) -> Result<Bson, QueryError> {
        let mut out = Vec::with_capacity(items.len());
        for item in items {
            match item {
                Bson::Document(sub) => {
                    if let Some(kept) = self.object(root, sub)? {
                        out.push(Bson::Document(kept));
                    }
                }
                Bson::Array(inner) => out.push(self.array(root, inner)?),
                other => out.push(other),
            }
        }
        Ok(Bson::Array(out))
    }
}
