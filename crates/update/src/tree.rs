//! Paths over the editable tree: lookup, creation with null padding, and the
//! expansion of `$`, `$[]` and `$[<id>]` into concrete paths.

use std::cmp::Ordering;

use bson::{Bson, Document};

use crate::error::UpdateError;
use crate::limits::ARRAY_PAD_MAX;

/// What an operator does to the value at its path.
pub(crate) enum Action {
    /// Leave the value as it is.
    Keep,
    /// Store this value (creating the path when it is missing).
    Set(Bson),
    /// Remove the field (an array element becomes null, as in MongoDB).
    Remove,
}

/// An operator's work at one concrete path.
pub(crate) type LeafFn<'a> = dyn FnMut(Option<&Bson>) -> Result<Action, UpdateError> + 'a;

/// The array index a path component names: digits without a leading zero.
pub(crate) fn parse_index(component: &str) -> Option<usize> {
    let bytes = component.as_bytes();
    if bytes.is_empty() || !bytes.iter().all(u8::is_ascii_digit) {
        return None;
    }
    if bytes.len() > 1 && bytes.first() == Some(&b'0') {
        return None;
    }
    component.parse().ok()
}

/// Orders paths as MongoDB 5.0+ applies them: component by component, numeric
/// components numerically, others as strings.
pub(crate) fn compare_paths(a: &[String], b: &[String]) -> Ordering {
    for (x, y) in a.iter().zip(b) {
        let order = match (parse_index(x), parse_index(y)) {
            (Some(i), Some(j)) => i.cmp(&j),
            _ => x.cmp(y),
        };
        if order != Ordering::Equal {
            return order;
        }
    }
    a.len().cmp(&b.len())
}

/// The value at a concrete path, following numeric components into arrays.
pub(crate) fn get<'a>(root: &'a Document, path: &[String]) -> Option<&'a Bson> {
    let (first, rest) = path.split_first()?;
    let mut current = root.get(first)?;
    for component in rest {
        current = match current {
            Bson::Document(d) => d.get(component)?,
            Bson::Array(a) => a.get(parse_index(component)?)?,
            _ => return None,
        };
    }
    Some(current)
}

/// Runs `leaf` at `path` and stores what it returns. `creates` says whether a
/// missing path is created (`$set`) or left alone (`$unset`, `$pull`).
/// Returns whether the tree changed.
pub(crate) fn modify(
    root: &mut Document,
    path: &[String],
    creates: bool,
    leaf: &mut LeafFn<'_>,
) -> Result<bool, UpdateError> {
    let Some((first, rest)) = path.split_first() else {
        return Ok(false);
    };
    if rest.is_empty() {
        let action = leaf(root.get(first))?;
        return Ok(match action {
            Action::Keep => false,
            Action::Set(value) => {
                let changed = root.get(first) != Some(&value);
                root.insert(first.clone(), value);
                changed
            }
            Action::Remove => root.remove(first).is_some(),
        });
    }
    match root.get_mut(first) {
        Some(child @ (Bson::Document(_) | Bson::Array(_))) => {
            step(child, first, rest, creates, leaf)
        }
        Some(other) => not_viable(creates, rest, first, other),
        None if creates => {
            let mut child = Bson::Document(Document::new());
            let changed = step(&mut child, first, rest, creates, leaf)?;
            if changed {
                root.insert(first.clone(), child);
            }
            Ok(changed)
        }
        None => Ok(false),
    }
}

fn not_viable(
    creates: bool,
    rest: &[String],
    name: &str,
    value: &Bson,
) -> Result<bool, UpdateError> {
    if !creates {
        return Ok(false);
    }
    let next = rest.first().map(String::as_str).unwrap_or_default();
    Err(UpdateError::PathNotViable(format!(
        "Cannot create field '{next}' in element {{{name}: {value}}}"
    )))
}

/// One step below a document or array `current` (named `name`).
fn step(
    current: &mut Bson,
    name: &str,
    path: &[String],
    creates: bool,
    leaf: &mut LeafFn<'_>,
) -> Result<bool, UpdateError> {
    let Some((first, rest)) = path.split_first() else {
        return Ok(false);
    };
    let array = match current {
        Bson::Document(doc) => return modify(doc, path, creates, leaf),
        Bson::Array(array) => array,
        other => return not_viable(creates, path, name, other),
    };
    let Some(index) = parse_index(first) else {
        return not_viable(creates, path, name, current);
    };
    if index >= array.len() {
        if !creates {
            return Ok(false);
        }
        if index > ARRAY_PAD_MAX {
            return Err(UpdateError::bad_value(format!(
                "can't backfill array to larger than {ARRAY_PAD_MAX} elements"
            )));
        }
        let mut child = if rest.is_empty() {
            match leaf(None)? {
                Action::Set(value) => value,
                Action::Keep | Action::Remove => return Ok(false),
            }
        } else {
            let mut child = Bson::Document(Document::new());
            if !step(&mut child, first, rest, creates, leaf)? {
                return Ok(false);
            }
            child
        };
        array.resize(index, Bson::Null);
        array.push(std::mem::take(&mut child));
        return Ok(true);
    }
    let Some(element) = array.get_mut(index) else {
        return Ok(false);
    };
    if rest.is_empty() {
        return Ok(match leaf(Some(element))? {
            Action::Keep => false,
            Action::Set(value) => {
                let changed = *element != value;
                *element = value;
                changed
            }
            Action::Remove => {
                let changed = *element != Bson::Null;
                *element = Bson::Null;
                changed
            }
        });
    }
    match element {
        Bson::Document(_) | Bson::Array(_) => step(element, first, rest, creates, leaf),
        other => not_viable(creates, rest, first, other),
    }
}

/// A component of a parsed update path.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Component {
    Field(String),
    /// `$`: the array position the query matched.
    Positional,
    /// `$[]`: every element.
    All,
    /// `$[id]`: every element the array filter `id` matches.
    Filtered(String),
}

/// Chooses the positions of an array that `$[]` (no identifier) or `$[id]` names.
pub(crate) type PickFn<'a> =
    dyn FnMut(&[Bson], Option<&str>) -> Result<Vec<usize>, UpdateError> + 'a;

/// Resolves the array positions a path names, calling `pick` for `$[]` and
/// `$[id]` (with the array and the identifier) and `positional` for `$`.
pub(crate) fn expand(
    root: &Document,
    components: &[Component],
    positional: &mut dyn FnMut(&str) -> Result<usize, UpdateError>,
    pick: &mut PickFn<'_>,
) -> Result<Vec<Vec<String>>, UpdateError> {
    let mut done: Vec<Vec<String>> = vec![Vec::new()];
    for component in components {
        let mut next = Vec::with_capacity(done.len());
        for prefix in done {
            match component {
                Component::Field(name) => {
                    let mut path = prefix;
                    path.push(name.clone());
                    next.push(path);
                }
                Component::Positional => {
                    let index = positional(&prefix.join("."))?;
                    let mut path = prefix;
                    path.push(index.to_string());
                    next.push(path);
                }
                Component::All | Component::Filtered(_) => {
                    let joined = prefix.join(".");
                    let array = match get(root, &prefix) {
                        Some(Bson::Array(array)) => array,
                        Some(other) => {
                            return Err(UpdateError::bad_value(format!(
                                "Cannot apply array updates to non-array element {joined}: {other}"
                            )));
                        }
                        None => {
                            return Err(UpdateError::bad_value(format!(
                                "The path '{joined}' must exist in the document in order to apply array updates."
                            )));
                        }
                    };
                    let id = match component {
                        Component::Filtered(id) => Some(id.as_str()),
                        _ => None,
                    };
                    for index in pick(array, id)? {
                        let mut path = prefix.clone();
                        path.push(index.to_string());
                        next.push(path);
                    }
                }
            }
        }
        done = next;
    }
    Ok(done)
}
