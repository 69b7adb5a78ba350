//! `$bucketAuto`: documents sorted by `groupBy` and cut into `buckets` runs of about equal
//! size, as MongoDB's `populateBuckets` does (a run takes `round(n / buckets)` documents,
//! then every further document with the same key; the last run takes the rest), each
//! run's `_id` its `{min, max}` (a run's `max` is the next run's `min`; the last run's is
//! its largest key) and its fields the `output` accumulators (a count by default).
//! `granularity` (preferred number series) is refused with NotImplemented.

use super::group::Group;
use super::stages::{location, to_raw, to_tree, type_name};
use crate::error::QueryError;
use crate::expr::Expression;
use crate::variables::Variables;
use bson::raw::RawDocumentBuf;
use bson::{Bson, RawBsonRef, doc};
use bson_canonical::compare::elements;

/// A parsed `$bucketAuto`.
#[derive(Debug, Clone)]
pub(crate) struct BucketAuto {
    group_by: Expression,
    buckets: usize,
    /// A `$group` with `_id: null` and the `output` accumulators, run once per bucket.
    group: Box<Group>,
}

/// Parses the specification of a `$bucketAuto` stage.
pub(crate) fn parse(spec: RawBsonRef<'_>, vars: &Variables) -> Result<BucketAuto, QueryError> {
    let RawBsonRef::Document(spec) = spec else {
        return Err(location(
            40240,
            format!(
                "The argument to $bucketAuto must be an object, but found type: {}",
                type_name(spec)
            ),
        ));
    };
    let (mut group_by, mut buckets, mut output) = (None, None, None);
    for (name, value) in elements(spec) {
        match name {
            "groupBy" => {
                let expression_like = match value {
                    RawBsonRef::String(text) => text.starts_with('$'),
                    RawBsonRef::Document(doc) => elements(doc)
                        .next()
                        .is_some_and(|(key, _)| key.starts_with('$')),
                    _ => false,
                };
                if !expression_like {
                    return Err(location(
                        40239,
                        format!(
                            "The $bucketAuto 'groupBy' field must be defined as a $-prefixed path \
                             or an expression object, but found: {}",
                            super::fields::show_raw(value)
                        ),
                    ));
                }
                group_by = Some(Expression::parse_with(value, vars)?);
            }
            "buckets" => buckets = Some(parse_buckets(value)?),
            "output" => {
                let RawBsonRef::Document(doc) = value else {
                    return Err(location(
                        40244,
                        format!(
                            "The $bucketAuto 'output' field must be an object, but found type: {}",
                            type_name(value)
                        ),
                    ));
                };
                output = Some(to_tree(doc)?);
            }
            "granularity" => {
                if !matches!(value, RawBsonRef::String(_)) {
                    return Err(location(
                        40261,
                        format!(
                            "The $bucketAuto 'granularity' field must be a string, but found \
                             type: {}",
                            type_name(value)
                        ),
                    ));
                }
                return Err(QueryError::NotImplemented(
                    "$bucketAuto's 'granularity' is not implemented".to_owned(),
                ));
            }
            _ => {
                return Err(location(
                    40245,
                    format!("Unrecognized option to $bucketAuto: {name}"),
                ));
            }
        }
    }
    let (Some(group_by), Some(buckets)) = (group_by, buckets) else {
        return Err(location(
            40246,
            "$bucketAuto requires 'groupBy' and 'buckets' to be specified",
        ));
    };
    let output = output
        .filter(|o| !o.is_empty())
        .unwrap_or_else(|| doc! {"count": {"$sum": 1}});
    let mut spec = doc! {"_id": null};
    spec.extend(output);
    let spec = to_raw(&spec)?;
    Ok(BucketAuto {
        group_by,
        buckets,
        group: Box::new(Group::parse(RawBsonRef::Document(&spec), vars)?),
    })
}

/// `buckets`: a positive number that is a 32-bit integer.
fn parse_buckets(value: RawBsonRef<'_>) -> Result<usize, QueryError> {
    let number = match value {
        RawBsonRef::Int32(n) => f64::from(n),
        #[allow(clippy::cast_precision_loss)]
        RawBsonRef::Int64(n) => n as f64,
        RawBsonRef::Double(d) => d,
        RawBsonRef::Decimal128(d) => d.to_string().parse::<f64>().unwrap_or(f64::NAN),
        _ => {
            return Err(location(
                40241,
                format!(
                    "The $bucketAuto 'buckets' field must be a numeric value, but found type: {}",
                    type_name(value)
                ),
            ));
        }
    };
    if number.fract() != 0.0 || number.is_nan() || number.abs() > f64::from(i32::MAX) {
        return Err(location(
            40242,
            format!(
                "The $bucketAuto 'buckets' field must be representable as a 32-bit integer, but \
                 found {number}"
            ),
        ));
    }
    if number <= 0.0 {
        return Err(location(
            40243,
            format!("The $bucketAuto 'buckets' field must be greater than 0, but found: {number}"),
        ));
    }
    #[allow(clippy::cast_possible_truncation, clippy::cast_sign_loss)]
    Ok(number as usize)
}

impl BucketAuto {
    /// The buckets of `input`, in key order.
    pub(crate) fn run(
        &self,
        input: impl Iterator<Item = Result<RawDocumentBuf, QueryError>>,
    ) -> Result<Vec<RawDocumentBuf>, QueryError> {
        let mut keyed: Vec<(Vec<u8>, Bson, RawDocumentBuf)> = Vec::new();
        for doc in input {
            let doc = doc?;
            let key = self.group_by.evaluate(&doc)?.unwrap_or(Bson::Null);
            let raw = bson::RawBson::try_from(key.clone())
                .map_err(|e| QueryError::bad_value(e.to_string()))?;
            keyed.push((bson_canonical::encode(raw.as_raw_bson_ref()), key, doc));
        }
        // Stable: documents with equal keys keep their input order.
        keyed.sort_by(|a, b| a.0.cmp(&b.0));
        let size = ((keyed.len() as f64 / self.buckets as f64).round() as usize).max(1);
        let mut runs: Vec<(Bson, Bson, Vec<RawDocumentBuf>)> = Vec::new();
        let mut rest = keyed.into_iter().peekable();
        for bucket in 0..self.buckets {
            let Some((mut last, min, first)) = rest.next() else {
                break;
            };
            let mut max = min.clone();
            let mut docs = vec![first];
            let last_bucket = bucket + 1 == self.buckets;
            while let Some((key, _, _)) = rest.peek() {
                let take = last_bucket || docs.len() < size || *key == last;
                if !take {
                    break;
                }
                let (key, value, doc) = rest.next().expect("peeked");
                last = key;
                max = value;
                docs.push(doc);
            }
            if let Some(previous) = runs.last_mut() {
                previous.1 = min.clone();
            }
            runs.push((min, max, docs));
        }
        let mut out = Vec::with_capacity(runs.len());
        for (min, max, docs) in runs {
            let grouped = self.group.run(docs.into_iter().map(Ok))?;
            let Some(fields) = grouped.into_iter().next() else {
                continue;
            };
            let mut tree = to_tree(&fields)?;
            tree.insert("_id", doc! {"min": min, "max": max});
            out.push(to_raw(&tree)?);
        }
        Ok(out)
    }
}
