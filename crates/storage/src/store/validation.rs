//! Document validation at the write path: every document [`Writer::insert`] or
//! [`Writer::update`] would store is checked against its collection's `validator`, as
//! mongod's `CollectionImpl::checkValidation` does, so every command that writes (insert,
//! update and upsert, findAndModify, `$out`'s temporary collection, `$merge`) is checked
//! in this one place.
//!
//! The collection's options say how (`validator`, `validationLevel`, `validationAction`,
//! stored as `create`/`collMod` gave them): level `off` checks nothing; `strict` (the
//! default) every insert and update; `moderate` lets an update through when the document
//! it replaces already failed. Action `error` (the default) refuses the statement with 121
//! DocumentValidationFailure and `errInfo: {failingDocumentId, details}`; `warn` lets it
//! through and logs mongod's STORAGE 20294 "Document would fail validation" line through
//! the store's event sink (`super::events`); `errorAndLog` does both.
//!
//! Invariants:
//! - Replay never validates: recovery applies logged operations (`Writer::apply`), which
//!   were validated when they were first written.
//! - A writer with [`Writer::bypass_document_validation`] set checks nothing (the
//!   command's `bypassDocumentValidation`, whose privilege the engine checked).
//! - The compiled validator of a collection is cached by namespace and reused only while
//!   the stored `validator` bytes are identical, so a `collMod` takes effect at once.

use super::{Namespace, StoreError, Writer};
use crate::error::{Error, ErrorCode};
use bson::raw::RawDocument;
use bson::{Document, RawBsonRef, doc};
use parking_lot::Mutex;
use query::Validator;
use std::collections::HashMap;
use std::sync::Arc;

/// A collection's validator as stored (its bytes) and compiled.
type Compiled = (Vec<u8>, Arc<Validator>);

/// Compiled validators by collection.
#[derive(Default)]
pub(crate) struct Validators {
    compiled: Mutex<HashMap<Namespace, Compiled>>,
}

/// Collections whose validators stay compiled (more start the cache over).
const COMPILED_MAX: usize = 256;

impl Validators {
    /// The compiled form of `spec`, the validator `ns` has now.
    fn get(&self, ns: &Namespace, spec: &RawDocument) -> Result<Arc<Validator>, StoreError> {
        let mut compiled = self.compiled.lock();
        if let Some((bytes, validator)) = compiled.get(ns)
            && bytes.as_slice() == spec.as_bytes()
        {
            return Ok(Arc::clone(validator));
        }
        let validator =
            Arc::new(Validator::parse(spec).map_err(|e| StoreError::Rejected(Error::from(e)))?);
        if compiled.len() >= COMPILED_MAX {
            compiled.clear();
        }
        compiled.insert(
            ns.clone(),
            (spec.as_bytes().to_vec(), Arc::clone(&validator)),
        );
        Ok(validator)
    }
}

/// What a collection's options ask of validation.
struct Rules<'a> {
    spec: &'a RawDocument,
    moderate: bool,
    action: &'a str,
}

fn rules(options: &RawDocument) -> Option<Rules<'_>> {
    let Ok(Some(RawBsonRef::Document(spec))) = options.get("validator") else {
        return None;
    };
    if spec.is_empty() {
        return None;
    }
    let level = options.get_str("validationLevel").unwrap_or("strict");
    if level == "off" {
        return None;
    }
    Some(Rules {
        spec,
        moderate: level == "moderate",
        action: options.get_str("validationAction").unwrap_or("error"),
    })
}

impl Writer<'_> {
    /// From now on this writer stores documents without validating them
    /// (`bypassDocumentValidation: true`).
    pub fn bypass_document_validation(&mut self, bypass: bool) {
        self.bypass_validation = bypass;
    }

    /// Checks `doc`, about to be stored in `ns` (replacing record `old` for an update),
    /// against the collection's validator: `Ok` to store it, or the statement's 121.
    pub(super) fn validate(
        &mut self,
        ns: &Namespace,
        old: Option<u64>,
        doc: &RawDocument,
    ) -> Result<(), StoreError> {
        if self.bypass_validation {
            return Ok(());
        }
        let store = self.store;
        let (validator, moderate, action) = {
            let Some(meta) = self.meta(ns)? else {
                return Ok(());
            };
            let Some(rules) = rules(&meta.options) else {
                return Ok(());
            };
            let validator = store.validators.get(ns, rules.spec)?;
            (validator, rules.moderate, rules.action.to_owned())
        };
        if validator.matches(doc) {
            return Ok(());
        }
        if moderate
            && let Some(rid) = old
            && let Some(stored) = self.get(ns, rid)?
            && !validator.matches(&stored)
        {
            return Ok(());
        }
        let id = doc
            .get("_id")
            .ok()
            .flatten()
            .map_or(bson::Bson::Null, query_value);
        let info = doc! { "failingDocumentId": id.clone(), "details": validator.explain(doc) };
        if action != "error" {
            let document = Document::try_from(doc).unwrap_or_else(|_| doc! { "_id": id });
            let attr = doc! {
                "namespace": ns.full(),
                "document": document,
                "errInfo": info.clone(),
            };
            store.report(&super::Event {
                severity: super::Severity::Warning,
                component: "STORAGE",
                id: 20294,
                message: "Document would fail validation",
                attr,
            });
        }
        if action == "warn" {
            return Ok(());
        }
        Err(StoreError::Rejected(Error::WithInfo {
            code: ErrorCode::from_parts(121, "DocumentValidationFailure"),
            message: "Document failed validation".to_owned(),
            info: Box::new(doc! { "errInfo": info }),
        }))
    }
}

fn query_value(value: RawBsonRef<'_>) -> bson::Bson {
    bson::Bson::try_from(bson::RawBson::from(value)).unwrap_or(bson::Bson::Null)
}
