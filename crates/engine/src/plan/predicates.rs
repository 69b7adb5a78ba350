//! What a filter says about each path, read from its top-level conjunction: the
//! equalities (`{p: v}`, `$eq`, `$in`) and comparisons (`$gt`, `$gte`, `$lt`, `$lte`) an
//! index can bound, and `$exists: true` (which only a wildcard index bounds: by the
//! path). Everything else (`$or`, `$nor`, `$not`, `$ne`, `$elemMatch`, `$expr`,
//! regular expressions, comparisons with operands whose matches cross type brackets) says
//! nothing here: the full filter is re-checked on every fetched document, so leaving a
//! predicate out only widens the scan.

use bson::RawDocument;
use bson::raw::RawBsonRef;
use std::collections::BTreeMap;

/// A comparison operator.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Compare {
    Gt,
    Gte,
    Lt,
    Lte,
}

/// One predicate on one path.
#[derive(Debug, Clone)]
pub(crate) enum Predicate<'a> {
    /// Some value at the path equals one of these (an empty list matches nothing).
    Equal(Vec<RawBsonRef<'a>>),
    /// Some value at the path compares so with the operand, within the operand's type
    /// bracket (MongoDB's type bracketing).
    Compare(Compare, RawBsonRef<'a>),
    /// The path has a value (`$exists` with a true operand).
    Exists,
}

/// The predicates of a filter's top-level conjunction, by path, in filter order.
#[derive(Debug, Default)]
pub(crate) struct Predicates<'a> {
    pub(crate) by_path: BTreeMap<&'a str, Vec<Predicate<'a>>>,
}

impl<'a> Predicates<'a> {
    /// Reads `filter` (already parsed successfully by `query::Filter`).
    pub(crate) fn of(filter: Option<&'a RawDocument>) -> Predicates<'a> {
        let mut out = Predicates::default();
        if let Some(filter) = filter {
            out.conjunction(filter, 0);
        }
        out
    }

    /// The predicates on `path`.
    pub(crate) fn on(&self, path: &str) -> &[Predicate<'a>] {
        self.by_path.get(path).map_or(&[], Vec::as_slice)
    }

    fn conjunction(&mut self, filter: &'a RawDocument, depth: usize) {
        // `$and` nests no deeper than a filter can; the bound keeps a hostile one cheap.
        if depth > 32 {
            return;
        }
        for element in filter.iter_elements() {
            let Ok(element) = element else { return };
            let Ok(value) = element.value() else { return };
            let key = element.key().as_str();
            if key == "$and" {
                if let RawBsonRef::Array(items) = value {
                    for item in items.into_iter().flatten() {
                        if let RawBsonRef::Document(sub) = item {
                            self.conjunction(sub, depth + 1);
                        }
                    }
                }
                continue;
            }
            if key.starts_with('$') {
                continue;
            }
            self.field(key, value);
        }
    }

    fn push(&mut self, path: &'a str, predicate: Predicate<'a>) {
        self.by_path.entry(path).or_default().push(predicate);
    }

    fn field(&mut self, path: &'a str, value: RawBsonRef<'a>) {
        let operators = match value {
            RawBsonRef::Document(doc) if is_operator_object(doc) => doc,
            RawBsonRef::RegularExpression(_) => return,
            value => {
                self.push(path, Predicate::Equal(vec![value]));
                return;
            }
        };
        for element in operators.iter_elements() {
            let Ok(element) = element else { return };
            let Ok(operand) = element.value() else { return };
            let compare = match element.key().as_str() {
                "$eq" => {
                    if !matches!(operand, RawBsonRef::RegularExpression(_)) {
                        self.push(path, Predicate::Equal(vec![operand]));
                    }
                    continue;
                }
                "$in" => {
                    if let Some(values) = in_values(operand) {
                        self.push(path, Predicate::Equal(values));
                    }
                    continue;
                }
                "$exists" => {
                    let present = bson::Bson::try_from(operand)
                        .is_ok_and(|operand| crate::index::truthy(&operand));
                    if present {
                        self.push(path, Predicate::Exists);
                    }
                    continue;
                }
                "$gt" => Compare::Gt,
                "$gte" => Compare::Gte,
                "$lt" => Compare::Lt,
                "$lte" => Compare::Lte,
                _ => continue,
            };
            if bracketed(operand) {
                self.push(path, Predicate::Compare(compare, operand));
            }
        }
    }
}

/// A document whose first field is an operator (`{$gt: 1}`), as the matcher reads it.
fn is_operator_object(doc: &RawDocument) -> bool {
    doc.iter_elements()
        .next()
        .and_then(Result::ok)
        .is_some_and(|first| first.key().as_str().starts_with('$'))
}

/// The values of an `$in` list, unless one is a regular expression (which matches
/// strings by pattern, not by equality).
fn in_values(operand: RawBsonRef<'_>) -> Option<Vec<RawBsonRef<'_>>> {
    let RawBsonRef::Array(items) = operand else {
        return None;
    };
    let mut out = Vec::new();
    for item in items {
        match item.ok()? {
            RawBsonRef::RegularExpression(_) => return None,
            value => out.push(value),
        }
    }
    Some(out)
}

/// Operands whose comparisons stay inside their own type bracket and whose bracket the
/// index encoding keeps contiguous. Null, MinKey, MaxKey, arrays, documents, regular
/// expressions and NaN are left to the re-check.
fn bracketed(operand: RawBsonRef<'_>) -> bool {
    match operand {
        // The number class byte follows the bracket byte; NaN's is 1.
        RawBsonRef::Double(_) | RawBsonRef::Decimal128(_) => {
            bson_canonical::encode(operand).get(1) != Some(&1)
        }
        RawBsonRef::Int32(_)
        | RawBsonRef::Int64(_)
        | RawBsonRef::String(_)
        | RawBsonRef::ObjectId(_)
        | RawBsonRef::Boolean(_)
        | RawBsonRef::DateTime(_)
        | RawBsonRef::Timestamp(_)
        | RawBsonRef::Binary(_) => true,
        _ => false,
    }
}
