//! Matching a compiled plan against a raw document, with MongoDB's array and null semantics.
//!
//! A path is walked as MongoDB's classic matcher walks it: through documents
//! by field name; through an array by looking the rest of the path up in each
//! element that is a document (and, for a numeric component, also at that
//! position). An element document lacking the field reports "missing" (which
//! `null` equality matches); array elements that are not documents report
//! nothing. An array at the end of the path is offered whole and then element
//! by element, so `{a: 5}` matches `{a: [5, 6]}` and `{a: [5, 6]}` matches it too.

use super::{BitTest, Comparison, InItem, Node, Pattern, Pred};
use crate::error::QueryError;
use crate::raw::get_field_in;
use crate::value::{as_whole_i64, is_nan};
use bson::raw::{RawArray, RawDocument};
use bson::{RawBson, RawBsonRef};
use bson_canonical::compare::{array_values, type_bracket};
use bson_canonical::compare_values;
use bson_canonical::path::array_position;
use std::cmp::Ordering;
use std::ops::ControlFlow;

/// What a path reaches at one place: a value, or the absence of the field.
type Reached<'a> = Option<RawBsonRef<'a>>;

/// Whether the document whose bytes are `doc` (one BSON document, its length prefix
/// checked) matches `node`. Paths are looked up by length-skipping over the bytes, so only
/// the bytes up to the fields named are read; `$expr` and `$jsonSchema` see the whole
/// document.
pub(super) fn node_matches(node: &Node, doc: &[u8]) -> Result<bool, QueryError> {
    match node {
        Node::And(children) => {
            for child in children {
                if !node_matches(child, doc)? {
                    return Ok(false);
                }
            }
            Ok(true)
        }
        Node::Or(children) => {
            for child in children {
                if node_matches(child, doc)? {
                    return Ok(true);
                }
            }
            Ok(false)
        }
        Node::Nor(children) => {
            for child in children {
                if node_matches(child, doc)? {
                    return Ok(false);
                }
            }
            Ok(true)
        }
        Node::Path(path, pred) => path_matches(doc, path, pred),
        Node::Expr(expr) => expr.matches(whole(doc)?),
        Node::Schema(schema) => Ok(schema.matches(whole(doc)?)),
    }
}

/// The document `doc` is, checked whole (its terminating zero read).
fn whole(doc: &[u8]) -> Result<&RawDocument, QueryError> {
    RawDocument::from_bytes(doc).map_err(|e| QueryError::bad_value(e.to_string()))
}

/// Calls `visit` with everything `path` reaches in `doc` until it breaks.
pub(crate) fn walk<'a>(
    doc: &'a RawDocument,
    path: &str,
    visit: &mut dyn FnMut(Reached<'a>) -> ControlFlow<()>,
) -> ControlFlow<()> {
    walk_document(doc.as_bytes(), path, true, visit)
}

/// `report_missing` is false when a numeric component is looked up as a field
/// name in array elements: an element without that field is not a "missing"
/// value, as the component was (also) a position.
fn walk_document<'a>(
    doc: &'a [u8],
    path: &str,
    report_missing: bool,
    visit: &mut dyn FnMut(Reached<'a>) -> ControlFlow<()>,
) -> ControlFlow<()> {
    let (head, rest) = match path.split_once('.') {
        Some((head, rest)) => (head, Some(rest)),
        None => (path, None),
    };
    match get_field_in(doc, head) {
        None if report_missing => visit(None),
        None => ControlFlow::Continue(()),
        Some(value) => walk_value(value, rest, visit),
    }
}

fn walk_value<'a>(
    value: RawBsonRef<'a>,
    rest: Option<&str>,
    visit: &mut dyn FnMut(Reached<'a>) -> ControlFlow<()>,
) -> ControlFlow<()> {
    let Some(rest) = rest else {
        return visit(Some(value));
    };
    match value {
        RawBsonRef::Document(doc) => walk(doc, rest, visit),
        RawBsonRef::Array(array) => walk_array(array, rest, visit),
        _ => visit(None),
    }
}

fn walk_array<'a>(
    array: &'a RawArray,
    path: &str,
    visit: &mut dyn FnMut(Reached<'a>) -> ControlFlow<()>,
) -> ControlFlow<()> {
    let (head, rest) = match path.split_once('.') {
        Some((head, rest)) => (head, Some(rest)),
        None => (path, None),
    };
    let position = array_position(head);
    for (index, element) in array_values(array).enumerate() {
        if position == Some(index) {
            walk_value(element, rest, visit)?;
        }
        if let RawBsonRef::Document(doc) = element {
            walk_document(doc.as_bytes(), path, position.is_none(), visit)?;
        }
    }
    ControlFlow::Continue(())
}

/// Whether the values at `path` satisfy `pred`.
pub(super) fn path_matches(doc: &[u8], path: &str, pred: &Pred) -> Result<bool, QueryError> {
    if !path.as_bytes().contains(&b'.') {
        // A top-level path reaches exactly one thing, the field's value or its absence:
        // looked up once for every operator on the path.
        return reached_satisfies(pred, get_field_in(doc, path));
    }
    match pred {
        Pred::Not(inner) => Ok(!path_matches(doc, path, inner)?),
        Pred::And(preds) => {
            for p in preds {
                if !path_matches(doc, path, p)? {
                    return Ok(false);
                }
            }
            Ok(true)
        }
        Pred::All(preds) => {
            if preds.is_empty() {
                return Ok(false);
            }
            for p in preds {
                if !path_matches(doc, path, p)? {
                    return Ok(false);
                }
            }
            Ok(true)
        }
        Pred::Exists(wanted) => {
            let mut found = false;
            let _ = walk_document(doc, path, true, &mut |reached| {
                if reached.is_some() {
                    found = true;
                    return ControlFlow::Break(());
                }
                ControlFlow::Continue(())
            });
            Ok(found == *wanted)
        }
        _ => {
            let mut result = Ok(false);
            let _ = walk_document(doc, path, true, &mut |reached| match reached_matches(
                pred, reached,
            ) {
                Ok(false) => ControlFlow::Continue(()),
                other => {
                    result = other;
                    ControlFlow::Break(())
                }
            });
            result
        }
    }
}

/// [`path_matches`] for a path that reaches only `reached`: the combinators combine what
/// their operators make of that one value, as they combine whole-path results.
fn reached_satisfies(pred: &Pred, reached: Reached<'_>) -> Result<bool, QueryError> {
    match pred {
        Pred::Not(inner) => Ok(!reached_satisfies(inner, reached)?),
        Pred::And(preds) => {
            for p in preds {
                if !reached_satisfies(p, reached)? {
                    return Ok(false);
                }
            }
            Ok(true)
        }
        Pred::All(preds) => {
            if preds.is_empty() {
                return Ok(false);
            }
            for p in preds {
                if !reached_satisfies(p, reached)? {
                    return Ok(false);
                }
            }
            Ok(true)
        }
        Pred::Exists(wanted) => Ok(reached.is_some() == *wanted),
        // A range bound on a number field: the commonest scan filter, answered without the
        // general dispatch (a number is not an array, so it is compared once, whole).
        Pred::Compare(op, operand) => match reached {
            Some(value) => match compare_plain_numbers(value, operand.as_raw_bson_ref()) {
                Some(order) => Ok(compare_order(*op, order)),
                None => reached_matches(pred, reached),
            },
            None => reached_matches(pred, reached),
        },
        _ => reached_matches(pred, reached),
    }
}

/// Whether one reached value (or its absence) satisfies `pred`; an array is
/// tried whole and then element by element unless the operator looks at arrays.
fn reached_matches(pred: &Pred, reached: Reached<'_>) -> Result<bool, QueryError> {
    let Some(value) = reached else {
        return Ok(missing_matches(pred));
    };
    if value_matches(pred, value)? {
        return Ok(true);
    }
    let RawBsonRef::Array(array) = value else {
        return Ok(false);
    };
    match pred {
        Pred::Size(_) | Pred::ElemMatchObject(_) | Pred::ElemMatchValue(_) => Ok(false),
        _ => {
            for element in array_values(array) {
                if value_matches(pred, element)? {
                    return Ok(true);
                }
            }
            Ok(false)
        }
    }
}

/// Whether a missing field satisfies `pred`: only a null equality does.
fn missing_matches(pred: &Pred) -> bool {
    match pred {
        Pred::Eq(operand) => matches!(operand, RawBson::Null),
        Pred::Compare(Comparison::Gte | Comparison::Lte, operand) => {
            matches!(operand, RawBson::Null)
        }
        Pred::In(items) => items
            .iter()
            .any(|item| matches!(item, InItem::Value(RawBson::Null))),
        _ => false,
    }
}

/// Whether a single value (not expanded) satisfies `pred`.
pub(super) fn value_matches(pred: &Pred, value: RawBsonRef<'_>) -> Result<bool, QueryError> {
    Ok(match pred {
        Pred::Eq(operand) => equals(value, operand.as_raw_bson_ref()),
        Pred::Compare(op, operand) => compare_matches(*op, value, operand.as_raw_bson_ref()),
        Pred::In(items) => {
            for item in items {
                let hit = match item {
                    InItem::Value(v) => equals(value, v.as_raw_bson_ref()),
                    InItem::Regex(pattern) => regex_matches(pattern, value)?,
                };
                if hit {
                    return Ok(true);
                }
            }
            false
        }
        Pred::Regex(pattern) => regex_matches(pattern, value)?,
        Pred::Type(selectors) => selectors.iter().any(|s| s.matches(&value)),
        Pred::Size(size) => match value {
            RawBsonRef::Array(array) => {
                i64::try_from(array_values(array).count()).is_ok_and(|n| n == *size)
            }
            _ => false,
        },
        Pred::ElemMatchObject(node) => match value {
            RawBsonRef::Array(array) => {
                for element in array_values(array) {
                    let doc = match element {
                        RawBsonRef::Document(doc) => doc,
                        RawBsonRef::Array(inner) => match RawDocument::from_bytes(inner.as_bytes())
                        {
                            Ok(doc) => doc,
                            Err(_) => continue,
                        },
                        _ => continue,
                    };
                    if node_matches(node, doc.as_bytes())? {
                        return Ok(true);
                    }
                }
                false
            }
            _ => false,
        },
        Pred::ElemMatchValue(preds) => match value {
            RawBsonRef::Array(array) => {
                'elements: for element in array_values(array) {
                    for p in preds {
                        if !element_satisfies(p, element)? {
                            continue 'elements;
                        }
                    }
                    return Ok(true);
                }
                false
            }
            _ => false,
        },
        Pred::Mod(divisor, remainder) => mod_matches(value, *divisor, *remainder),
        Pred::Bits(test, positions) => bits_match(value, *test, positions),
        // These combine whole-path results and are handled by `path_matches`;
        // inside `$elemMatch` they are applied to the element by `element_satisfies`.
        Pred::Not(_) | Pred::And(_) | Pred::All(_) | Pred::Exists(_) => {
            element_satisfies(pred, value)?
        }
    })
}

/// Whether an array element satisfies one `$elemMatch` value-form operator,
/// treating the element as the value at a path (nested arrays expand).
fn element_satisfies(pred: &Pred, element: RawBsonRef<'_>) -> Result<bool, QueryError> {
    match pred {
        Pred::Not(inner) => Ok(!element_satisfies(inner, element)?),
        Pred::Exists(wanted) => Ok(*wanted),
        Pred::And(preds) | Pred::All(preds) => {
            if preds.is_empty() {
                return Ok(matches!(pred, Pred::And(_)));
            }
            for p in preds {
                if !element_satisfies(p, element)? {
                    return Ok(false);
                }
            }
            Ok(true)
        }
        _ => value_matches(pred, element),
    }
}

/// Equality within a type bracket; `null` also equals `undefined` (MongoDB
/// before 8.0: a null query matches undefined values).
fn equals(value: RawBsonRef<'_>, operand: RawBsonRef<'_>) -> bool {
    if let Some(order) = compare_plain_numbers(value, operand) {
        return order.is_eq();
    }
    if matches!(operand, RawBsonRef::Null) && matches!(value, RawBsonRef::Undefined) {
        return true;
    }
    type_bracket(&value) == type_bracket(&operand) && compare_values(value, operand).is_eq()
}

fn compare_matches(op: Comparison, value: RawBsonRef<'_>, operand: RawBsonRef<'_>) -> bool {
    if let Some(order) = compare_plain_numbers(value, operand) {
        return compare_order(op, order);
    }
    if matches!(operand, RawBsonRef::MinKey | RawBsonRef::MaxKey) {
        return compare_order(op, compare_values(value, operand));
    }
    if type_bracket(&value) != type_bracket(&operand) {
        // A null operand with $gte/$lte also matches undefined, as equality does.
        return matches!(operand, RawBsonRef::Null)
            && matches!(value, RawBsonRef::Undefined)
            && matches!(op, Comparison::Gte | Comparison::Lte);
    }
    // NaN is only equal to NaN for range operators: `$gt: NaN` and `$lt: NaN`
    // match nothing, `$gte: NaN` matches NaN.
    if is_nan(value) || is_nan(operand) {
        return is_nan(value) && is_nan(operand) && matches!(op, Comparison::Gte | Comparison::Lte);
    }
    compare_order(op, compare_values(value, operand))
}

/// The order of two integers, or of two doubles neither of which is NaN: what
/// `compare_values` answers for them, without its general dispatch (a range filter over a
/// scan compares one such pair per operator per document).
fn compare_plain_numbers(value: RawBsonRef<'_>, operand: RawBsonRef<'_>) -> Option<Ordering> {
    let integer = |v: RawBsonRef<'_>| match v {
        RawBsonRef::Int32(i) => Some(i64::from(i)),
        RawBsonRef::Int64(i) => Some(i),
        _ => None,
    };
    if let (Some(a), Some(b)) = (integer(value), integer(operand)) {
        return Some(a.cmp(&b));
    }
    match (value, operand) {
        (RawBsonRef::Double(a), RawBsonRef::Double(b)) => a.partial_cmp(&b),
        _ => None,
    }
}

fn compare_order(op: Comparison, order: Ordering) -> bool {
    match op {
        Comparison::Gt => order == Ordering::Greater,
        Comparison::Gte => order != Ordering::Less,
        Comparison::Lt => order == Ordering::Less,
        Comparison::Lte => order != Ordering::Greater,
    }
}

/// A regex matches strings and symbols by content, and regex values by equal
/// pattern and options.
fn regex_matches(pattern: &Pattern, value: RawBsonRef<'_>) -> Result<bool, QueryError> {
    match value {
        RawBsonRef::String(s) | RawBsonRef::Symbol(s) => pattern
            .regex
            .is_match(s)
            .map_err(|e| QueryError::RegexTooComplex(e.to_string())),
        RawBsonRef::RegularExpression(r) => {
            Ok(r.pattern.as_str() == pattern.source && r.options.as_str() == pattern.options)
        }
        _ => Ok(false),
    }
}

fn mod_matches(value: RawBsonRef<'_>, divisor: i64, remainder: i64) -> bool {
    let dividend = match value {
        RawBsonRef::Int32(v) => i64::from(v),
        RawBsonRef::Int64(v) => v,
        RawBsonRef::Double(_) | RawBsonRef::Decimal128(_) => match crate::value::as_f64(value) {
            Some(v) if v.is_finite() => v.trunc() as i64,
            _ => return false,
        },
        _ => return false,
    };
    dividend.checked_rem(divisor).unwrap_or(0) == remainder
}

fn bits_match(value: RawBsonRef<'_>, test: BitTest, positions: &[u32]) -> bool {
    let bit_set: Box<dyn Fn(u32) -> bool + '_> = match value {
        RawBsonRef::Int32(_) | RawBsonRef::Int64(_) | RawBsonRef::Double(_) => {
            let Some(number) = as_whole_i64(value) else {
                return false;
            };
            // Two's complement, sign-extended past bit 63.
            Box::new(move |bit| {
                if bit >= 64 {
                    number < 0
                } else {
                    number >> bit & 1 == 1
                }
            })
        }
        RawBsonRef::Binary(binary) => Box::new(move |bit| {
            let byte = usize::try_from(bit / 8)
                .ok()
                .and_then(|i| binary.bytes.get(i));
            byte.is_some_and(|b| b >> (bit % 8) & 1 == 1)
        }),
        _ => return false,
    };
    match test {
        BitTest::AllSet => positions.iter().all(|&b| bit_set(b)),
        BitTest::AnySet => positions.iter().any(|&b| bit_set(b)),
        BitTest::AllClear => positions.iter().all(|&b| !bit_set(b)),
        BitTest::AnyClear => positions.iter().any(|&b| !bit_set(b)),
    }
}

/// The first position of the array at `array_path` whose element satisfies
/// the filter's path predicates below that array (the positional `$`).
pub(super) fn positional_index(node: &Node, doc: &RawDocument, array_path: &str) -> Option<usize> {
    let RawBsonRef::Array(array) = bson_canonical::path::get_path(doc, array_path)? else {
        return None;
    };
    let mut candidates = Vec::new();
    collect_positional(node, array_path, &mut candidates);
    if candidates.is_empty() {
        return None;
    }
    array_values(array).position(|element| {
        candidates.iter().all(|(rest, pred)| match element {
            _ if rest.is_empty() => reached_matches(pred, Some(element)).unwrap_or(false),
            RawBsonRef::Document(d) => path_matches(d.as_bytes(), rest, pred).unwrap_or(false),
            _ => false,
        })
    })
}

fn collect_positional<'a>(node: &'a Node, array_path: &str, out: &mut Vec<(&'a str, &'a Pred)>) {
    match node {
        Node::And(children) => children
            .iter()
            .for_each(|c| collect_positional(c, array_path, out)),
        Node::Path(path, pred) => {
            if path == array_path {
                out.push(("", pred));
            } else if let Some(rest) = path
                .strip_prefix(array_path)
                .and_then(|r| r.strip_prefix('.'))
            {
                out.push((rest, pred));
            }
        }
        _ => {}
    }
}
