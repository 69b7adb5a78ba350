//! The bytes fast path: an update whose operations all lie under one top-level
//! field (not `_id`) runs on a one-field tree, and the new element is spliced
//! into the raw document, so the rest of the document is never decoded.

use bson::{Bson, Document, RawDocument, RawDocumentBuf};

use crate::apply::{Env, apply_op};
use crate::error::UpdateError;
use crate::parse::{Op, OpKind};
use crate::tree::Component;

/// The top-level field every operation is confined to, when there is one.
pub(crate) fn single_field(ops: &[Op]) -> Option<&str> {
    let mut field: Option<&str> = None;
    for op in ops {
        if let OpKind::Rename(_) = op.kind {
            return None;
        }
        let Some(Component::Field(first)) = op.path.first() else {
            return None;
        };
        match field {
            Some(seen) if seen != first => return None,
            _ => field = Some(first),
        }
    }
    // `_id` needs the immutability check and a top-level `$` name the DBRef
    // sibling checks: both look at the whole document.
    field.filter(|f| *f != "_id" && !f.starts_with('$'))
}

/// Applies `ops` (all under `field`) to `doc` by splicing bytes. Returns the
/// new bytes and the changed paths.
pub(crate) fn apply(
    ops: &[Op],
    field: &str,
    doc: &RawDocument,
    env: &Env<'_>,
) -> Result<(Vec<u8>, Vec<String>), UpdateError> {
    let bytes = doc.as_bytes();
    let mut offset = 4;
    let mut found: Option<(usize, usize, Bson)> = None;
    for element in doc.iter_elements() {
        let element = element.map_err(|e| UpdateError::bad_value(e.to_string()))?;
        let key = element.key().as_str();
        let value_start = offset + 1 + key.len() + 1;
        let end = value_start + element.size();
        if key == field {
            let value =
                Bson::try_from(element).map_err(|e| UpdateError::bad_value(e.to_string()))?;
            found = Some((offset, end, value));
            break;
        }
        offset = end;
    }
    let mut mini = Document::new();
    let (start, end) = match found {
        Some((start, end, value)) => {
            mini.insert(field, value);
            (start, end)
        }
        // A new field goes last, before the terminating NUL.
        None => (bytes.len() - 1, bytes.len() - 1),
    };
    let mut changed = Vec::new();
    for op in ops {
        apply_op(&mut mini, op, env, &mut changed)?;
    }
    let element = if mini.is_empty() {
        Vec::new()
    } else {
        let encoded =
            RawDocumentBuf::try_from(&mini).map_err(|e| UpdateError::bad_value(e.to_string()))?;
        // The one-field document nests exactly as the field does in the whole one.
        crate::storage::check_depth(encoded.as_bytes())?;
        let inner = encoded.as_bytes();
        inner.get(4..inner.len() - 1).unwrap_or_default().to_vec()
    };
    let mut out = Vec::with_capacity(bytes.len() + element.len());
    out.extend_from_slice(bytes.get(..start).unwrap_or_default());
    out.extend_from_slice(&element);
    out.extend_from_slice(bytes.get(end..).unwrap_or_default());
    let length = i32::try_from(out.len()).unwrap_or(i32::MAX);
    if let Some(header) = out.get_mut(..4) {
        header.copy_from_slice(&length.to_le_bytes());
    }
    Ok((out, changed))
}
