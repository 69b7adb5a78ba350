//! Index bounds: from a filter's predicates to ranges of tree keys of one index.
//!
//! Each key field gets one of: a list of points (the keys an equality looks up), one
//! range inside a type bracket (comparisons), or everything. The ranges of the whole key
//! are the product of the leading point fields, then the first range field, as tree-key
//! ranges `[lower, upper)`; the fields after that are unconstrained. Every bound is built
//! from complete field encodings (`bson_canonical::key`, prefix-free), so a key lies in a
//! range exactly when its entry does, record id suffix and all.
//!
//! Rules that keep the bounds an over-approximation of the matches:
//! - An equality to `v` looks up `v`'s key, and for an array also its first element's key
//!   (`[]`: undefined's), for null also undefined's (the rule `index::keys` is tested to).
//! - Two predicates on one multikey field are never intersected: different elements of
//!   one array may satisfy each (`{a: [1, 9]}` matches `a > 5` and `a < 3`). One predicate
//!   bounds the field; the re-check does the rest.
//! - Two fields whose paths share a prefix at which some document had an array are not
//!   compounded (the elements that satisfy each may be different ones): the later field is
//!   unconstrained.
//! - Paths with a numeric component (`a.0`) are not bounded (positional paths).

use super::predicates::{Compare, Predicate, Predicates};
use crate::index::spec::KeyKind;
use crate::store::KeyRange;
use bson::raw::RawBsonRef;
use bson_canonical::compare::compare_values;
use bson_canonical::key::{Direction, encode_field_into};
use std::cmp::Ordering;
use std::collections::{BTreeMap, BTreeSet};

/// The most ranges one index scan is split into (the product of `$in` lists); past it the
/// later fields are left unconstrained.
pub(crate) const RANGES_MAX: usize = 4096;

/// One key field as the planner sees it.
#[derive(Debug, Clone)]
pub(crate) struct FieldView<'m> {
    pub(crate) path: &'m str,
    pub(crate) kind: KeyKind,
    /// Path components at which some document had an array (mongod's multikey paths).
    pub(crate) multikey: &'m BTreeSet<usize>,
}

/// The bounds of one index for one filter.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Bounds {
    /// Tree-key ranges, sorted and disjoint.
    pub(crate) ranges: Vec<KeyRange>,
    /// Leading fields bounded by points.
    pub(crate) point_fields: usize,
    /// The points of each of them: the field's encodings, sorted (the order of its
    /// `display` intervals).
    pub(crate) point_keys: Vec<Vec<Vec<u8>>>,
    /// Whether the field after them is bounded by a range.
    pub(crate) range_field: bool,
    /// Whether some bounded field's predicate cannot match a missing field (so a sparse
    /// index, which leaves out documents missing every field, still holds every match).
    pub(crate) excludes_missing: bool,
    /// Per key field, its intervals as mongod's explain prints them (`"[1, 1]"`,
    /// `"(5, inf.0]"`, `"[MinKey, MaxKey]"`), in key order.
    pub(crate) display: Vec<(String, Vec<String>)>,
}

impl Bounds {
    /// Whether no field is bounded: the whole index.
    pub(crate) fn is_unbounded(&self) -> bool {
        self.point_fields == 0 && !self.range_field
    }
}

/// What bounds one field.
pub(super) enum FieldBound {
    /// The field's encodings (direction applied), sorted and deduplicated, with their
    /// display in the same order, and whether none of them matches a missing field.
    Points(Vec<Vec<u8>>, Vec<String>, bool),
    /// `[lower, upper)` over the field's encoding (direction applied), and its display.
    Range(Vec<u8>, Option<Vec<u8>>, String),
    All,
}

/// Every value of a field, as explain prints it.
pub(super) const ALL_VALUES: &str = "[MinKey, MaxKey]";

/// The bounds `predicates` give an index with key fields `fields`.
pub(crate) fn bounds(fields: &[FieldView<'_>], predicates: &Predicates<'_>) -> Bounds {
    let mut prefixes: Vec<Vec<u8>> = vec![Vec::new()];
    let mut point_fields = 0;
    let mut point_keys = Vec::new();
    let mut excludes_missing = false;
    let mut tail: Option<(Vec<u8>, Option<Vec<u8>>)> = None;
    let mut display: Vec<(String, Vec<String>)> = fields
        .iter()
        .map(|f| {
            let all = match f.kind {
                KeyKind::Descending => "[MaxKey, MinKey]",
                KeyKind::Ascending | KeyKind::Hashed => ALL_VALUES,
            };
            (f.path.to_owned(), vec![all.to_owned()])
        })
        .collect();
    for (i, field) in fields.iter().enumerate() {
        let shares_array = fields[..i]
            .iter()
            .any(|earlier| shares_array(earlier, field));
        let bound = if shares_array || has_numeric_component(field.path) {
            FieldBound::All
        } else {
            field_bound(field, predicates.on(field.path))
        };
        match bound {
            FieldBound::Points(points, shown, excludes) => {
                if prefixes.len().saturating_mul(points.len()) > RANGES_MAX {
                    break;
                }
                display[i].1 = shown;
                prefixes = prefixes
                    .iter()
                    .flat_map(|prefix| {
                        points.iter().map(move |point| {
                            let mut key = prefix.clone();
                            key.extend_from_slice(point);
                            key
                        })
                    })
                    .collect();
                point_fields += 1;
                point_keys.push(points);
                excludes_missing |= excludes;
            }
            FieldBound::Range(lower, upper, shown) => {
                display[i].1 = vec![shown];
                tail = Some((lower, upper));
                excludes_missing = true;
                break;
            }
            FieldBound::All => break,
        }
    }
    let range_field = tail.is_some();
    let mut ranges: Vec<KeyRange> = prefixes
        .into_iter()
        .map(|prefix| match &tail {
            Some((lower, upper)) => {
                let mut start = prefix.clone();
                start.extend_from_slice(lower);
                let end = match upper {
                    Some(upper) => {
                        let mut end = prefix.clone();
                        end.extend_from_slice(upper);
                        Some(end)
                    }
                    None => successor(&prefix),
                };
                KeyRange {
                    lower: start,
                    upper: end,
                }
            }
            None => KeyRange {
                upper: successor(&prefix),
                lower: prefix,
            },
        })
        .collect();
    ranges.sort_by(|a, b| a.lower.cmp(&b.lower));
    Bounds {
        ranges: merge(ranges),
        point_fields,
        point_keys,
        range_field,
        excludes_missing,
        display,
    }
}

/// The parts of `ranges` (sorted, disjoint) inside `[prefix, successor(prefix))`: the keys
/// that start with `prefix`, in the same order.
pub(crate) fn clamp(ranges: &[KeyRange], prefix: &[u8]) -> Vec<KeyRange> {
    let end = successor(prefix);
    ranges
        .iter()
        .filter_map(|range| {
            let lower = range.lower.as_slice().max(prefix).to_vec();
            let upper = match (&range.upper, &end) {
                (Some(a), Some(b)) => Some(a.min(b).clone()),
                (Some(a), None) => Some(a.clone()),
                (None, b) => b.clone(),
            };
            let empty = upper.as_ref().is_some_and(|upper| lower >= *upper);
            (!empty).then_some(KeyRange { lower, upper })
        })
        .collect()
}

/// Sorted ranges with overlapping or touching ones joined.
pub(super) fn merge(ranges: Vec<KeyRange>) -> Vec<KeyRange> {
    let mut out: Vec<KeyRange> = Vec::with_capacity(ranges.len());
    for range in ranges {
        if let Some(upper) = &range.upper
            && range.lower >= *upper
        {
            continue;
        }
        if let Some(last) = out.last_mut() {
            let touches = match &last.upper {
                None => true,
                Some(end) => range.lower <= *end,
            };
            if touches {
                last.upper = match (&last.upper, &range.upper) {
                    (Some(a), Some(b)) => Some(a.max(b).clone()),
                    _ => None,
                };
                continue;
            }
        }
        out.push(range);
    }
    out
}

/// The smallest byte string greater than every string that starts with `prefix` (`None`:
/// there is none; every key is below the end of the tree).
pub(crate) fn successor(prefix: &[u8]) -> Option<Vec<u8>> {
    let mut out = prefix.to_vec();
    while let Some(last) = out.pop() {
        if last < u8::MAX {
            out.push(last + 1);
            return Some(out);
        }
    }
    None
}

/// Whether `a` and `b` share a path prefix at which some document had an array.
fn shares_array(a: &FieldView<'_>, b: &FieldView<'_>) -> bool {
    let common = a
        .path
        .split('.')
        .zip(b.path.split('.'))
        .take_while(|(x, y)| x == y)
        .count();
    a.multikey
        .iter()
        .chain(b.multikey.iter())
        .any(|&component| component < common)
}

fn has_numeric_component(path: &str) -> bool {
    path.split('.')
        .any(|part| !part.is_empty() && part.bytes().all(|b| b.is_ascii_digit()))
}

fn direction(kind: KeyKind) -> Direction {
    match kind {
        KeyKind::Descending => Direction::Descending,
        KeyKind::Ascending | KeyKind::Hashed => Direction::Ascending,
    }
}

fn encode(value: RawBsonRef<'_>, direction: Direction) -> Vec<u8> {
    let mut out = Vec::new();
    encode_field_into(Some(value), direction, &mut out);
    out
}

pub(super) fn field_bound(field: &FieldView<'_>, predicates: &[Predicate<'_>]) -> FieldBound {
    // The equality with the fewest values bounds the field (one predicate is always
    // sound; intersecting two is not on a multikey field).
    let equal = predicates
        .iter()
        .filter_map(|p| match p {
            Predicate::Equal(values) => Some(values),
            Predicate::Compare(..) | Predicate::Exists => None,
        })
        .min_by_key(|values| values.len());
    if let Some(values) = equal {
        return match field.kind {
            KeyKind::Hashed => hashed_points(values),
            KeyKind::Ascending | KeyKind::Descending => {
                let direction = direction(field.kind);
                let mut points = BTreeMap::new();
                let mut excludes_missing = true;
                for &value in values {
                    for looked_up in lookup_values(value) {
                        let shown = show(looked_up);
                        points
                            .entry(encode(looked_up, direction))
                            .or_insert_with(|| format!("[{shown}, {shown}]"));
                    }
                    excludes_missing &= !matches!(value, RawBsonRef::Null | RawBsonRef::Undefined);
                }
                let (keys, shown) = points.into_iter().unzip();
                FieldBound::Points(keys, shown, excludes_missing)
            }
        };
    }
    if field.kind == KeyKind::Hashed {
        return FieldBound::All;
    }
    let mut compares = predicates.iter().filter_map(|p| match p {
        Predicate::Compare(op, operand) => Some((*op, *operand)),
        Predicate::Equal(_) | Predicate::Exists => None,
    });
    let Some(first) = compares.next() else {
        return FieldBound::All;
    };
    let mut range = ValueRange::of(first);
    if field.multikey.is_empty() {
        for next in compares {
            range.intersect(ValueRange::of(next));
        }
    }
    range.encode(direction(field.kind))
}

/// A value as explain prints it.
pub(super) fn show(value: RawBsonRef<'_>) -> String {
    match bson::Bson::try_from(value) {
        Ok(value) => crate::index::display::value(&value),
        Err(_) => "?".to_owned(),
    }
}

/// The ends of a type bracket as mongod prints open bounds: (text, inclusive) for the low
/// and the high end.
fn bracket_ends(bracket: u8) -> ((String, bool), (String, bool)) {
    let pair = |low: &str, low_inclusive, high: &str, high_inclusive| {
        (
            (low.to_owned(), low_inclusive),
            (high.to_owned(), high_inclusive),
        )
    };
    match bracket {
        12 => pair("-inf.0", true, "inf.0", true),
        17 => pair("\"\"", true, "{}", false),
        37 => pair(
            "ObjectId('000000000000000000000000')",
            true,
            "ObjectId('ffffffffffffffffffffffff')",
            true,
        ),
        42 => pair("false", true, "true", true),
        47 => pair(
            "new Date(-9223372036854775808)",
            true,
            "new Date(9223372036854775807)",
            true,
        ),
        49 => pair(
            "Timestamp(0, 0)",
            true,
            "Timestamp(4294967295, 4294967295)",
            true,
        ),
        _ => pair("MinKey", true, "MaxKey", true),
    }
}

/// The values an equality to `value` looks up (see the module header).
fn lookup_values(value: RawBsonRef<'_>) -> Vec<RawBsonRef<'_>> {
    let mut out = vec![value];
    match value {
        RawBsonRef::Array(items) => match items.into_iter().next() {
            Some(Ok(first)) => out.push(first),
            Some(Err(_)) => {}
            None => out.push(RawBsonRef::Undefined),
        },
        RawBsonRef::Null => out.push(RawBsonRef::Undefined),
        RawBsonRef::Undefined => out.push(RawBsonRef::Null),
        _ => {}
    }
    out
}

/// The hashed keys of an equality's values; a hashed index holds no arrays, so an array
/// value (which matches only through an array) leaves the field unbounded.
fn hashed_points(values: &[RawBsonRef<'_>]) -> FieldBound {
    let mut points = BTreeMap::new();
    let mut excludes_missing = true;
    for &value in values {
        let looked_up = match value {
            RawBsonRef::Array(_) => return FieldBound::All,
            RawBsonRef::Null | RawBsonRef::Undefined => {
                excludes_missing = false;
                vec![RawBsonRef::Null, RawBsonRef::Undefined]
            }
            value => vec![value],
        };
        for v in looked_up {
            let hashed = crate::index::hash_key(v);
            points
                .entry(encode(RawBsonRef::Int64(hashed), Direction::Ascending))
                .or_insert_with(|| format!("[{hashed}, {hashed}]"));
        }
    }
    let (keys, shown) = points.into_iter().unzip();
    FieldBound::Points(keys, shown, excludes_missing)
}

/// Comparisons on one field within one type bracket, in value terms.
struct ValueRange<'a> {
    bracket: u8,
    lower: Option<(RawBsonRef<'a>, bool)>,
    upper: Option<(RawBsonRef<'a>, bool)>,
}

impl<'a> ValueRange<'a> {
    fn of((op, operand): (Compare, RawBsonRef<'a>)) -> ValueRange<'a> {
        let bracket = bson_canonical::compare::type_bracket(&operand);
        let (lower, upper) = match op {
            Compare::Gt => (Some((operand, false)), None),
            Compare::Gte => (Some((operand, true)), None),
            Compare::Lt => (None, Some((operand, false))),
            Compare::Lte => (None, Some((operand, true))),
        };
        ValueRange {
            bracket,
            lower,
            upper,
        }
    }

    /// Narrows to `other` when it is in the same bracket (one in another bracket matches
    /// nothing together with this one on a field without arrays; keeping this alone is
    /// still sound).
    fn intersect(&mut self, other: ValueRange<'a>) {
        if other.bracket != self.bracket {
            return;
        }
        if let Some((v, inclusive)) = other.lower {
            self.lower = Some(match self.lower {
                None => (v, inclusive),
                Some((w, w_inclusive)) => match compare_values(v, w) {
                    Ordering::Greater => (v, inclusive),
                    Ordering::Less => (w, w_inclusive),
                    Ordering::Equal => (w, w_inclusive && inclusive),
                },
            });
        }
        if let Some((v, inclusive)) = other.upper {
            self.upper = Some(match self.upper {
                None => (v, inclusive),
                Some((w, w_inclusive)) => match compare_values(v, w) {
                    Ordering::Less => (v, inclusive),
                    Ordering::Greater => (w, w_inclusive),
                    Ordering::Equal => (w, w_inclusive && inclusive),
                },
            });
        }
    }

    /// The field-encoding range; descending fields are byte-inverted, which reverses the
    /// order: the value range's upper end becomes the key range's lower end.
    fn encode(&self, direction: Direction) -> FieldBound {
        let b = self.bracket;
        let (start, end) = match direction {
            Direction::Ascending => {
                let start = match self.lower {
                    None => Some(vec![b]),
                    Some((v, true)) => Some(encode(v, direction)),
                    Some((v, false)) => successor(&encode(v, direction)),
                };
                let end = match self.upper {
                    None => Some(vec![b + 1]),
                    Some((v, true)) => successor(&encode(v, direction)),
                    Some((v, false)) => Some(encode(v, direction)),
                };
                (start, end)
            }
            Direction::Descending => {
                let start = match self.upper {
                    None => Some(vec![!b]),
                    Some((v, true)) => Some(encode(v, direction)),
                    Some((v, false)) => successor(&encode(v, direction)),
                };
                let end = match self.lower {
                    None => Some(vec![(!b).wrapping_add(1)]),
                    Some((v, true)) => successor(&encode(v, direction)),
                    Some((v, false)) => Some(encode(v, direction)),
                };
                (start, end)
            }
        };
        match start {
            Some(start) => FieldBound::Range(start, end, self.show(direction)),
            // Nothing lies past an all-0xFF key: the range is empty.
            None => FieldBound::Points(Vec::new(), Vec::new(), true),
        }
    }

    /// The interval as mongod's explain prints it: the bracket's own ends where a side is
    /// open (`inf.0`, `""` and `{}`, the extreme dates), reversed for a descending field.
    fn show(&self, direction: Direction) -> String {
        let (low_end, high_end) = bracket_ends(self.bracket);
        let (low, low_inclusive) = match self.lower {
            Some((v, inclusive)) => (show(v), inclusive),
            None => low_end,
        };
        let (high, high_inclusive) = match self.upper {
            Some((v, inclusive)) => (show(v), inclusive),
            None => high_end,
        };
        let open = |inclusive: bool| if inclusive { '[' } else { '(' };
        let close = |inclusive: bool| if inclusive { ']' } else { ')' };
        match direction {
            Direction::Ascending => format!(
                "{}{low}, {high}{}",
                open(low_inclusive),
                close(high_inclusive)
            ),
            Direction::Descending => format!(
                "{}{high}, {low}{}",
                open(high_inclusive),
                close(low_inclusive)
            ),
        }
    }
}
