//! Field paths of pipeline stages: MongoDB's `FieldPath` checks, path
//! collisions, nested reads and writes on documents, and values as text for
//! error messages.

use crate::error::QueryError;
use bson::raw::RawDocument;
use bson::{Bson, Document, RawBsonRef};

/// Splits and checks a field path the way MongoDB's `FieldPath` does.
pub(crate) fn field_path(text: &str) -> Result<Vec<String>, QueryError> {
    if text.is_empty() {
        return Err(QueryError::location(
            40352,
            "FieldPath cannot be constructed with empty string",
        ));
    }
    let mut parts = Vec::new();
    for part in text.split('.') {
        if part.is_empty() {
            return Err(QueryError::location(
                15998,
                "FieldPath field names may not be empty strings.",
            ));
        }
        if part.starts_with('$') && !crate::value::dollar_name_allowed(part) {
            return Err(QueryError::location(
                16410,
                format!(
                    "FieldPath field names may not start with '$'. Consider using $getField or \
                     $setField. ({text})"
                ),
            ));
        }
        parts.push(part.to_owned());
    }
    Ok(parts)
}

/// The paths a stage writes, as a tree, to find two that collide (`a` and
/// `a.b`) with MongoDB's codes: 31250 when a path ends on one already
/// named, 31249 when it runs through one.
#[derive(Debug, Default)]
pub(crate) struct PathSet {
    children: Vec<(String, Option<PathSet>)>,
}

impl PathSet {
    /// Adds `path`, or the collision it makes.
    pub(crate) fn add(&mut self, path: &[String]) -> Result<(), QueryError> {
        self.add_at(path, 0)
    }

    fn add_at(&mut self, path: &[String], depth: usize) -> Result<(), QueryError> {
        let Some(component) = path.get(depth) else {
            return Ok(());
        };
        let last = depth + 1 == path.len();
        let position = self.children.iter().position(|(name, _)| name == component);
        match (position, last) {
            (Some(_), true) => Err(QueryError::location(
                31250,
                format!("Path collision at {}", path.join(".")),
            )),
            (None, true) => {
                self.children.push((component.clone(), None));
                Ok(())
            }
            (None, false) => {
                let mut child = PathSet::default();
                child.add_at(path, depth + 1)?;
                self.children.push((component.clone(), Some(child)));
                Ok(())
            }
            (Some(i), false) => match self.children.get_mut(i) {
                Some((_, Some(child))) => child.add_at(path, depth + 1),
                _ => Err(QueryError::location(
                    31249,
                    format!(
                        "Path collision at {} remaining portion {}",
                        path.join("."),
                        path[depth + 1..].join(".")
                    ),
                )),
            },
        }
    }
}

/// The value at `path` through embedded documents only (arrays end the
/// walk with nothing), as `$unwind` reads its path.
pub(crate) fn get_nested<'a>(doc: &'a RawDocument, path: &[String]) -> Option<RawBsonRef<'a>> {
    let (first, rest) = path.split_first()?;
    let value = crate::raw::get_field(doc, first)?;
    if rest.is_empty() {
        return Some(value);
    }
    match value {
        RawBsonRef::Document(sub) => get_nested(sub, rest),
        _ => None,
    }
}

/// Sets `path` to `value`, replacing in place what is there and turning
/// anything on the way that is not a document into one.
pub(crate) fn set_nested(doc: &mut Document, path: &[String], value: Bson) {
    let Some((first, rest)) = path.split_first() else {
        return;
    };
    if rest.is_empty() {
        doc.insert(first.clone(), value);
        return;
    }
    if !matches!(doc.get(first), Some(Bson::Document(_))) {
        doc.insert(first.clone(), Document::new());
    }
    if let Some(Bson::Document(sub)) = doc.get_mut(first) {
        set_nested(sub, rest, value);
    }
}

/// Removes the field at `path` (through embedded documents only).
pub(crate) fn remove_nested(doc: &mut Document, path: &[String]) {
    match path {
        [] => {}
        [last] => {
            doc.remove(last);
        }
        [first, rest @ ..] => {
            if let Some(Bson::Document(sub)) = doc.get_mut(first) {
                remove_nested(sub, rest);
            }
        }
    }
}

/// `$addFields` semantics for one path: documents on the way get the field,
/// arrays on the way get it in every element (scalars among them become
/// documents), a missing or scalar parent becomes a document; `None` (a
/// missing value) removes the field.
pub(crate) fn add_field(doc: &mut Document, path: &[String], value: &Option<Bson>) {
    let Some((first, rest)) = path.split_first() else {
        return;
    };
    if rest.is_empty() {
        match value {
            Some(v) => {
                doc.insert(first.clone(), v.clone());
            }
            None => {
                doc.remove(first);
            }
        }
        return;
    }
    match doc.get_mut(first) {
        Some(existing @ (Bson::Document(_) | Bson::Array(_))) => add_into(existing, rest, value),
        _ => {
            let mut sub = Document::new();
            add_field(&mut sub, rest, value);
            doc.insert(first.clone(), sub);
        }
    }
}

fn add_into(target: &mut Bson, path: &[String], value: &Option<Bson>) {
    match target {
        Bson::Document(doc) => add_field(doc, path, value),
        Bson::Array(items) => {
            for item in items {
                add_into(item, path, value);
            }
        }
        other => {
            let mut sub = Document::new();
            add_field(&mut sub, path, value);
            *other = Bson::Document(sub);
        }
    }
}

/// A value as MongoDB prints it in messages (`{a: 1, b: "x"}`, `[1, 2]`).
pub(crate) fn show(value: &Bson) -> String {
    match value {
        Bson::String(s) => format!("{s:?}"),
        Bson::Document(doc) => {
            let fields: Vec<String> = doc
                .iter()
                .map(|(key, value)| format!("{key}: {}", show(value)))
                .collect();
            format!("{{{}}}", fields.join(", "))
        }
        Bson::Array(items) => {
            let shown: Vec<String> = items.iter().map(show).collect();
            format!("[{}]", shown.join(", "))
        }
        Bson::Double(v) => format!("{v:?}"),
        Bson::Int32(v) => v.to_string(),
        Bson::Int64(v) => v.to_string(),
        Bson::Null => "null".to_owned(),
        Bson::Boolean(b) => b.to_string(),
        other => other.to_string(),
    }
}

/// A raw value as MongoDB prints it in messages.
pub(crate) fn show_raw(value: RawBsonRef<'_>) -> String {
    Bson::try_from(value).map_or_else(|_| "?".to_owned(), |v| show(&v))
}

/// A raw document as MongoDB prints it in messages.
pub(crate) fn show_document(doc: &RawDocument) -> String {
    show_raw(RawBsonRef::Document(doc))
}

#[cfg(test)]
mod tests {
    use super::*;
    use bson::doc;

    fn path(text: &str) -> Vec<String> {
        text.split('.').map(str::to_owned).collect()
    }

    #[test]
    fn path_collisions_name_the_later_path() {
        let mut set = PathSet::default();
        set.add(&path("a.b")).expect("first");
        set.add(&path("a.c")).expect("sibling");
        assert_eq!(set.add(&path("a.b")).expect_err("same").code(), 31250);
        assert_eq!(set.add(&path("a")).expect_err("prefix").code(), 31250);
        let mut set = PathSet::default();
        set.add(&path("a")).expect("first");
        let e = set.add(&path("a.b.c")).expect_err("through a leaf");
        assert_eq!(e.code(), 31249);
        assert!(e.to_string().contains("remaining portion b.c"), "{e}");
    }

    #[test]
    fn add_field_goes_through_arrays_and_replaces_scalars() {
        let mut d = doc! {"a": [{"x": 1}, 2, [{"y": 1}]], "b": 1};
        add_field(&mut d, &path("a.z"), &Some(Bson::Int32(7)));
        add_field(&mut d, &path("b.c"), &Some(Bson::Int32(8)));
        add_field(&mut d, &path("n.m"), &None);
        assert_eq!(
            d,
            doc! {"a": [{"x": 1, "z": 7}, {"z": 7}, [{"y": 1, "z": 7}]], "b": {"c": 8}, "n": {}}
        );
    }
}
