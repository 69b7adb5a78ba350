//! `$bucket`: MongoDB desugars it into a `$group` keyed by a `$switch` over the
//! boundaries (each document goes to the lower boundary of its range, or to `default`)
//! followed by a `$sort` on that key, and so does this module, after MongoDB's checks.

use super::group::Group;
use super::stages::{Stage, location, parse_sort, to_raw, to_tree, type_name};
use crate::error::QueryError;
use crate::variables::Variables;
use bson::raw::RawDocumentBuf;
use bson::{Bson, RawBsonRef, doc};
use bson_canonical::compare::{array_values, compare_values, elements, type_bracket};
use std::cmp::Ordering;

fn to_bson(value: RawBsonRef<'_>) -> Result<Bson, QueryError> {
    Bson::try_from(value).map_err(|e| QueryError::bad_value(e.to_string()))
}

fn show(value: RawBsonRef<'_>) -> String {
    super::fields::show_raw(value)
}

/// Parses `$bucket` into the `$group` and `$sort` it stands for.
pub(crate) fn parse(spec: RawBsonRef<'_>, vars: &Variables) -> Result<Vec<Stage>, QueryError> {
    let RawBsonRef::Document(spec) = spec else {
        return Err(location(
            40201,
            format!(
                "Argument to $bucket stage must be an object, but found type: {}.",
                type_name(spec)
            ),
        ));
    };
    let (mut group_by, mut boundaries, mut default, mut output) = (None, None, None, None);
    for (name, value) in elements(spec) {
        match name {
            "groupBy" => group_by = Some(value),
            "boundaries" => boundaries = Some(value),
            "default" => default = Some(value),
            "output" => output = Some(value),
            _ => {
                return Err(location(
                    40197,
                    format!("Unrecognized option to $bucket: {name}."),
                ));
            }
        }
    }
    let (Some(group_by), Some(boundaries)) = (group_by, boundaries) else {
        return Err(location(
            40198,
            "$bucket requires 'groupBy' and 'boundaries' to be specified.",
        ));
    };
    match group_by {
        RawBsonRef::String(text) if text.starts_with('$') => {}
        RawBsonRef::Document(_) => {}
        other => {
            return Err(location(
                40202,
                format!(
                    "The $bucket 'groupBy' field must be defined as a $-prefixed path or an \
                     expression, but found: {}.",
                    show(other)
                ),
            ));
        }
    }
    let RawBsonRef::Array(boundaries) = boundaries else {
        return Err(location(
            40200,
            format!(
                "The $bucket 'boundaries' field must be an array, but found type: {}.",
                type_name(boundaries)
            ),
        ));
    };
    let bounds: Vec<RawBsonRef<'_>> = array_values(boundaries).collect();
    if bounds.len() < 2 {
        return Err(location(
            40192,
            format!(
                "The $bucket 'boundaries' field must have at least 2 values, but found {} \
                 value(s).",
                bounds.len()
            ),
        ));
    }
    for (i, pair) in bounds.windows(2).enumerate() {
        let (low, high) = (pair[0], pair[1]);
        if type_bracket(&low) != type_bracket(&high) {
            return Err(location(
                40193,
                format!(
                    "All values in the the 'boundaries' option to $bucket must have the same \
                     type. Found conflicting types {} and {}.",
                    type_name(low),
                    type_name(high)
                ),
            ));
        }
        if compare_values(low, high) != Ordering::Less {
            return Err(location(
                40194,
                format!(
                    "The 'boundaries' option to $bucket must be sorted, but elements {} and {} \
                     are not in ascending order ({} is not less than {}).",
                    i,
                    i + 1,
                    show(low),
                    show(high)
                ),
            ));
        }
    }
    if let Some(default) = default {
        let (first, last) = (bounds[0], bounds[bounds.len() - 1]);
        if type_bracket(&default) == type_bracket(&first)
            && compare_values(default, first) != Ordering::Less
            && compare_values(default, last) == Ordering::Less
        {
            return Err(location(
                40199,
                "The $bucket 'default' field must be less than the lowest boundary or greater \
                 than or equal to the highest boundary.",
            ));
        }
    }
    let output = match output {
        None => doc! {"count": {"$sum": 1}},
        Some(RawBsonRef::Document(output)) => to_tree(output)?,
        Some(other) => {
            return Err(location(
                40196,
                format!(
                    "The $bucket 'output' field must be an object, but found type: {}.",
                    type_name(other)
                ),
            ));
        }
    };
    let group_by = to_bson(group_by)?;
    let mut branches = Vec::with_capacity(bounds.len() - 1);
    for pair in bounds.windows(2) {
        let (low, high) = (to_bson(pair[0])?, to_bson(pair[1])?);
        branches.push(Bson::Document(doc! {
            "case": {"$and": [
                {"$gte": [group_by.clone(), {"$literal": low.clone()}]},
                {"$lt": [group_by.clone(), {"$literal": high}]},
            ]},
            "then": {"$literal": low},
        }));
    }
    let mut switch = doc! {"branches": branches};
    if let Some(default) = default {
        switch.insert("default", doc! {"$literal": to_bson(default)?});
    }
    let mut group = doc! {"_id": {"$switch": switch}};
    for (name, accumulator) in output {
        group.insert(name, accumulator);
    }
    let group: RawDocumentBuf = to_raw(&group)?;
    let sort = bson::rawdoc! {"_id": 1};
    Ok(vec![
        Stage::Group(Box::new(Group::parse(RawBsonRef::Document(&group), vars)?)),
        parse_sort(RawBsonRef::Document(&sort))?,
    ])
}
