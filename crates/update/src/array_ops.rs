//! The array operators: `$push` with its modifiers, `$addToSet`, `$pop`,
//! `$pull` (values or query conditions) and `$pullAll`.

use std::cmp::Ordering;

use bson::{Bson, Document, RawDocumentBuf};
use query::Filter;

use crate::error::UpdateError;
use crate::value::{as_whole, compare, equal, type_name};

/// How `$push` orders the array after inserting (`$sort`).
#[derive(Debug, Clone)]
pub(crate) enum PushSort {
    /// Sort whole elements; `true` is descending.
    Whole(bool),
    /// Sort document elements by dotted fields; `true` is descending.
    Fields(Vec<(String, bool)>),
}

/// A parsed `$push` argument.
#[derive(Debug, Clone)]
pub(crate) struct PushSpec {
    each: Vec<Bson>,
    slice: Option<i64>,
    sort: Option<PushSort>,
    position: Option<i64>,
}

const SORT_INVALID: &str = "The $sort is invalid: use 1/-1 to sort the whole element, or {field:1/-1} to sort embedded fields";

impl PushSpec {
    /// Parses a value or a `{$each, $slice, $sort, $position}` document.
    pub(crate) fn parse(value: &Bson) -> Result<PushSpec, UpdateError> {
        let mut spec = PushSpec {
            each: vec![value.clone()],
            slice: None,
            sort: None,
            position: None,
        };
        let Bson::Document(doc) = value else {
            return Ok(spec);
        };
        if !doc.contains_key("$each") {
            return Ok(spec);
        }
        for (key, arg) in doc {
            match key.as_str() {
                "$each" => match arg {
                    Bson::Array(items) => spec.each = items.clone(),
                    other => {
                        return Err(UpdateError::bad_value(format!(
                            "The argument to $each in $push must be an array but it was of type: {}",
                            type_name(other)
                        )));
                    }
                },
                "$slice" => {
                    spec.slice = Some(as_whole(arg).ok_or_else(|| {
                        UpdateError::bad_value(format!(
                            "The value for $slice must be an integer value but was given type: {}",
                            type_name(arg)
                        ))
                    })?);
                }
                "$position" => {
                    spec.position = Some(as_whole(arg).ok_or_else(|| {
                        UpdateError::bad_value(format!(
                            "The value for $position must be an integer value, not of type: {}",
                            type_name(arg)
                        ))
                    })?);
                }
                "$sort" => spec.sort = Some(parse_sort(arg)?),
                other => {
                    return Err(UpdateError::bad_value(format!(
                        "Unrecognized clause in $push: {other}"
                    )));
                }
            }
        }
        Ok(spec)
    }

    /// The array after the push; `current` is `None` for a missing field.
    pub(crate) fn apply(
        &self,
        current: Option<&Bson>,
        path: &str,
        id: &str,
    ) -> Result<Bson, UpdateError> {
        let mut array = match current {
            None => Vec::new(),
            Some(Bson::Array(a)) => a.clone(),
            Some(other) => {
                return Err(UpdateError::bad_value(format!(
                    "The field '{path}' must be an array but is of type {} in document {{_id: {id}}}",
                    type_name(other)
                )));
            }
        };
        let len = i64::try_from(array.len()).unwrap_or(i64::MAX);
        let at = match self.position {
            None => len,
            Some(p) if p < 0 => (len + p).max(0),
            Some(p) => p.min(len),
        };
        let at = usize::try_from(at).unwrap_or(array.len()).min(array.len());
        array.splice(at..at, self.each.iter().cloned());
        if let Some(sort) = &self.sort {
            array.sort_by(|a, b| sort_order(sort, a, b));
        }
        if let Some(n) = self.slice {
            let keep = usize::try_from(n.unsigned_abs()).unwrap_or(usize::MAX);
            if n >= 0 {
                array.truncate(keep);
            } else if array.len() > keep {
                array.drain(..array.len() - keep);
            }
        }
        Ok(Bson::Array(array))
    }
}

fn parse_sort(arg: &Bson) -> Result<PushSort, UpdateError> {
    match arg {
        Bson::Document(fields) => {
            if fields.is_empty() {
                return Err(UpdateError::bad_value(
                    "The $sort pattern is empty when it should be a set of fields.",
                ));
            }
            let mut keys = Vec::new();
            for (field, direction) in fields {
                if field.is_empty() || field.starts_with('$') || field.split('.').any(str::is_empty)
                {
                    return Err(UpdateError::bad_value(SORT_INVALID));
                }
                match as_whole(direction) {
                    Some(1) => keys.push((field.clone(), false)),
                    Some(-1) => keys.push((field.clone(), true)),
                    _ => {
                        return Err(UpdateError::bad_value(
                            "The $sort element value must be either 1 or -1",
                        ));
                    }
                }
            }
            Ok(PushSort::Fields(keys))
        }
        other => match as_whole(other) {
            Some(1) => Ok(PushSort::Whole(false)),
            Some(-1) => Ok(PushSort::Whole(true)),
            _ => Err(UpdateError::bad_value(SORT_INVALID)),
        },
    }
}

fn sort_order(sort: &PushSort, a: &Bson, b: &Bson) -> Ordering {
    match sort {
        PushSort::Whole(descending) => directed(compare(a, b), *descending),
        PushSort::Fields(keys) => {
            for (field, descending) in keys {
                let order = compare(&field_of(a, field), &field_of(b, field));
                if order != Ordering::Equal {
                    return directed(order, *descending);
                }
            }
            Ordering::Equal
        }
    }
}

fn directed(order: Ordering, descending: bool) -> Ordering {
    if descending { order.reverse() } else { order }
}

/// The dotted field of a document element; null when missing or not a document.
fn field_of(value: &Bson, path: &str) -> Bson {
    let mut current = value;
    for part in path.split('.') {
        match current {
            Bson::Document(d) => match d.get(part) {
                Some(v) => current = v,
                None => return Bson::Null,
            },
            _ => return Bson::Null,
        }
    }
    current.clone()
}

/// Parses the `$addToSet` argument: a value or `{$each: [..]}`.
pub(crate) fn parse_add_to_set(value: &Bson) -> Result<Vec<Bson>, UpdateError> {
    if let Bson::Document(doc) = value
        && let Some(each) = doc.get("$each")
    {
        return match each {
            Bson::Array(items) if doc.len() == 1 => Ok(items.clone()),
            Bson::Array(_) => Err(UpdateError::bad_value(format!(
                "Found unexpected fields after $each in $addToSet: {value}"
            ))),
            other => Err(UpdateError::type_mismatch(format!(
                "The argument to $each in $addToSet must be an array but it was of type {}",
                type_name(other)
            ))),
        };
    }
    Ok(vec![value.clone()])
}

/// The array after `$addToSet`.
pub(crate) fn add_to_set(
    current: Option<&Bson>,
    items: &[Bson],
    path: &str,
) -> Result<Bson, UpdateError> {
    let mut array = match current {
        None => Vec::new(),
        Some(Bson::Array(a)) => a.clone(),
        Some(other) => {
            return Err(UpdateError::bad_value(format!(
                "Cannot apply $addToSet to non-array field. Field named '{path}' has non-array type {}",
                type_name(other)
            )));
        }
    };
    for item in items {
        if !array.iter().any(|existing| equal(existing, item)) {
            array.push(item.clone());
        }
    }
    Ok(Bson::Array(array))
}

/// What `$pull` removes.
#[derive(Debug, Clone)]
pub(crate) enum PullCondition {
    /// Elements equal to the value.
    Equal(Bson),
    /// Elements that satisfy operators (`{$gte: 6}`), matched as `{v: element}`.
    Operators(Box<Filter>),
    /// Document elements that match a query (`{score: 8, item: "B"}`).
    Query(Box<Filter>),
}

impl PullCondition {
    /// Parses a `$pull` argument.
    pub(crate) fn parse(value: &Bson) -> Result<PullCondition, UpdateError> {
        let Bson::Document(doc) = value else {
            return Ok(PullCondition::Equal(value.clone()));
        };
        let first = doc.keys().next().map(String::as_str).unwrap_or_default();
        let logical = matches!(
            first,
            "$and" | "$or" | "$nor" | "$expr" | "$where" | "$text" | "$comment"
        );
        if first.starts_with('$') && !logical {
            let mut wrapped = Document::new();
            wrapped.insert("v", doc.clone());
            Ok(PullCondition::Operators(Box::new(Filter::parse(&raw(
                &wrapped,
            )?)?)))
        } else {
            Ok(PullCondition::Query(Box::new(Filter::parse(&raw(doc)?)?)))
        }
    }

    fn removes(&self, element: &Bson) -> Result<bool, UpdateError> {
        Ok(match self {
            PullCondition::Equal(value) => equal(element, value),
            PullCondition::Operators(filter) => {
                let mut wrapped = Document::new();
                wrapped.insert("v", element.clone());
                filter.try_matches(&raw(&wrapped)?)?
            }
            PullCondition::Query(filter) => match element {
                Bson::Document(d) => filter.try_matches(&raw(d)?)?,
                _ => false,
            },
        })
    }
}

fn raw(doc: &Document) -> Result<RawDocumentBuf, UpdateError> {
    RawDocumentBuf::try_from(doc).map_err(|e| UpdateError::bad_value(e.to_string()))
}

/// The array after `$pull`; `None` when the field is not an array of the right kind.
pub(crate) fn pull(current: &Bson, condition: &PullCondition) -> Result<Bson, UpdateError> {
    let Bson::Array(array) = current else {
        return Err(UpdateError::bad_value(
            "Cannot apply $pull to a non-array value",
        ));
    };
    let mut kept = Vec::with_capacity(array.len());
    for element in array {
        if !condition.removes(element)? {
            kept.push(element.clone());
        }
    }
    Ok(Bson::Array(kept))
}

/// The array after `$pullAll`.
pub(crate) fn pull_all(current: &Bson, values: &[Bson]) -> Result<Bson, UpdateError> {
    let Bson::Array(array) = current else {
        return Err(UpdateError::bad_value(
            "Cannot apply $pullAll to a non-array value",
        ));
    };
    Ok(Bson::Array(
        array
            .iter()
            .filter(|e| !values.iter().any(|v| equal(e, v)))
            .cloned()
            .collect(),
    ))
}

/// The array after `$pop`.
pub(crate) fn pop(current: &Bson, first: bool, path: &str) -> Result<Bson, UpdateError> {
    let Bson::Array(array) = current else {
        return Err(UpdateError::type_mismatch(format!(
            "Path '{path}' contains an element of non-array type '{}'",
            type_name(current)
        )));
    };
    let mut array = array.clone();
    if !array.is_empty() {
        if first {
            array.remove(0);
        } else {
            array.pop();
        }
    }
    Ok(Bson::Array(array))
}
