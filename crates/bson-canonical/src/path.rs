//! Field-path lookup on raw documents with MongoDB's array semantics.
//!
//! A dotted path such as `a.b.c` names values inside a document. Where a
//! component meets an array, MongoDB looks through it:
//! - a non-numeric component (`b` in `a.b` over `{a: [{b: 1}, {b: 2}]}`) is
//!   looked up in every element that is a document (arrays nested directly
//!   inside the array are not entered);
//! - a numeric component (`1` in `a.1`) names the element at that position
//!   *and* the field of that name in every element that is a document, so
//!   `a.0.b` reaches `{a: [{b: 1}]}` and `{a: [{"0": {b: 1}}]}` alike.
//!
//! The visitor receives each value the path reaches, borrowed from the
//! document, without building a tree; an array at the end of the path is
//! passed whole (callers that match against its elements expand it). Fields the
//! path does not name are skipped by their length prefix, so the cost of a
//! lookup does not grow with the size of what it skips.

use bson::RawBsonRef;
use bson::raw::{RawArray, RawDocument};
use std::ops::ControlFlow;

/// One value reached by a path.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct PathValue<'a> {
    /// The value.
    pub value: RawBsonRef<'a>,
    /// Whether the walk passed through an array to reach it (the value is one
    /// of several candidates, as in a multikey index).
    pub through_array: bool,
}

/// The value of a top-level field, or `None` when it is missing.
pub fn get_field<'a>(doc: &'a RawDocument, name: &str) -> Option<RawBsonRef<'a>> {
    for element in doc.iter_elements() {
        let Ok(element) = element else { return None };
        if element.key().as_str() == name {
            return element.value().ok();
        }
    }
    None
}

/// The first value `path` reaches without passing through an array, or `None`.
/// This is the lookup for paths such as `_id` or `a.b` in documents known not
/// to hold arrays on the way; use [`for_each_value`] for MongoDB's full semantics.
pub fn get_path<'a>(doc: &'a RawDocument, path: &str) -> Option<RawBsonRef<'a>> {
    let mut current = doc;
    let mut components = path.split('.').peekable();
    while let Some(component) = components.next() {
        let value = get_field(current, component)?;
        if components.peek().is_none() {
            return Some(value);
        }
        current = value.as_document()?;
    }
    None
}

/// Calls `visit` with every value `path` reaches in `doc`, in document order,
/// until `visit` breaks. Returns whether it broke.
pub fn for_each_value<'a, F>(doc: &'a RawDocument, path: &str, mut visit: F) -> ControlFlow<()>
where
    F: FnMut(PathValue<'a>) -> ControlFlow<()>,
{
    walk_document(doc, path, false, &mut visit)
}

/// All values `path` reaches, collected (a convenience over [`for_each_value`]).
pub fn values<'a>(doc: &'a RawDocument, path: &str) -> Vec<PathValue<'a>> {
    let mut out = Vec::new();
    let _ = for_each_value(doc, path, |value| {
        out.push(value);
        ControlFlow::Continue(())
    });
    out
}

fn split_first(path: &str) -> (&str, Option<&str>) {
    match path.split_once('.') {
        Some((head, rest)) => (head, Some(rest)),
        None => (path, None),
    }
}

fn walk_document<'a, F>(
    doc: &'a RawDocument,
    path: &str,
    through_array: bool,
    visit: &mut F,
) -> ControlFlow<()>
where
    F: FnMut(PathValue<'a>) -> ControlFlow<()>,
{
    let (head, rest) = split_first(path);
    match get_field(doc, head) {
        Some(value) => walk_value(value, rest, through_array, visit),
        None => ControlFlow::Continue(()),
    }
}

fn walk_value<'a, F>(
    value: RawBsonRef<'a>,
    rest: Option<&str>,
    through_array: bool,
    visit: &mut F,
) -> ControlFlow<()>
where
    F: FnMut(PathValue<'a>) -> ControlFlow<()>,
{
    let Some(rest) = rest else {
        return visit(PathValue {
            value,
            through_array,
        });
    };
    match value {
        RawBsonRef::Document(doc) => walk_document(doc, rest, through_array, visit),
        RawBsonRef::Array(array) => walk_array(array, rest, visit),
        _ => ControlFlow::Continue(()),
    }
}

fn walk_array<'a, F>(array: &'a RawArray, path: &str, visit: &mut F) -> ControlFlow<()>
where
    F: FnMut(PathValue<'a>) -> ControlFlow<()>,
{
    let (head, rest) = split_first(path);
    if let Some(position) = array_position(head) {
        for (index, element) in array.iter_elements().enumerate() {
            let Ok(element) = element else { break };
            if index == position {
                if let Ok(value) = element.value() {
                    walk_value(value, rest, true, visit)?;
                }
                break;
            }
        }
    }
    for element in array.iter_elements() {
        let Ok(element) = element else { break };
        if let Ok(RawBsonRef::Document(doc)) = element.value() {
            walk_document(doc, path, true, visit)?;
        }
    }
    ControlFlow::Continue(())
}

/// The array position a path component names, if it is a plain decimal index.
/// MongoDB treats `01` as a field name, not a position.
pub fn array_position(component: &str) -> Option<usize> {
    let bytes = component.as_bytes();
    let plain = !bytes.is_empty()
        && bytes.iter().all(u8::is_ascii_digit)
        && (bytes.len() == 1 || bytes.first() != Some(&b'0'));
    if plain { component.parse().ok() } else { None }
}

#[cfg(test)]
mod tests {
    use super::*;
    use bson::{Bson, doc, rawdoc};

    fn reached(doc: &RawDocument, path: &str) -> Vec<Bson> {
        values(doc, path)
            .into_iter()
            .map(|v| Bson::try_from(v.value).expect("bson"))
            .collect()
    }

    #[test]
    fn dotted_paths_reach_into_documents() {
        let doc = rawdoc! {"a": {"b": {"c": 7}}, "x": 1};
        assert_eq!(reached(&doc, "a.b.c"), vec![Bson::Int32(7)]);
        assert_eq!(get_path(&doc, "a.b.c"), Some(RawBsonRef::Int32(7)));
        assert!(reached(&doc, "a.z").is_empty());
        assert!(reached(&doc, "x.y").is_empty());
    }

    #[test]
    fn arrays_of_documents_are_traversed_but_nested_arrays_are_not() {
        let doc = rawdoc! {"a": [{"b": 1}, {"b": 2}, 3, [{"b": 4}]]};
        assert_eq!(reached(&doc, "a.b"), vec![Bson::Int32(1), Bson::Int32(2)]);
        assert!(values(&doc, "a.b").iter().all(|v| v.through_array));
    }

    #[test]
    fn numeric_components_are_positions_and_field_names() {
        let doc = rawdoc! {"a": [{"b": 1}, {"0": {"b": 9}}]};
        assert_eq!(reached(&doc, "a.0.b"), vec![Bson::Int32(1), Bson::Int32(9)]);
        let plain = rawdoc! {"a": [10, 20]};
        assert_eq!(reached(&plain, "a.1"), vec![Bson::Int32(20)]);
        assert!(reached(&plain, "a.01").is_empty());
        assert!(reached(&plain, "a.5").is_empty());
    }

    #[test]
    fn a_leaf_array_is_passed_whole() {
        let doc = rawdoc! {"a": [1, 2]};
        let expected = doc! {"v": [1, 2]};
        assert_eq!(
            reached(&doc, "a"),
            vec![expected.get("v").expect("v").clone()]
        );
    }
}
