//! Compiling a filter document into a plan, with MongoDB's checks and messages.

use super::{BitTest, Comparison, InItem, Node, Pattern, Pred, TypeSelector};
use crate::error::QueryError;
use crate::expr::ParseCtx;
use crate::limits::{BIT_POSITION_MAX, FILTER_DEPTH_MAX};
use crate::value::{as_whole_i64, owned, true_value};
use bson::RawBsonRef;
use bson::raw::{RawArray, RawDocument};
use bson_canonical::compare::{array_values, elements};
use std::sync::Arc;

fn check_depth(ctx: ParseCtx<'_>) -> Result<(), QueryError> {
    if ctx.depth > FILTER_DEPTH_MAX {
        return Err(QueryError::bad_value(format!(
            "exceeded maximum filter depth of {FILTER_DEPTH_MAX}"
        )));
    }
    Ok(())
}

/// Parses a whole filter document (the top level or an `$and` member).
pub(super) fn parse_document(doc: &RawDocument, ctx: ParseCtx<'_>) -> Result<Node, QueryError> {
    check_depth(ctx)?;
    let mut nodes = Vec::new();
    for element in doc.iter_elements() {
        let element = element.map_err(|e| QueryError::bad_value(e.to_string()))?;
        let key = element.key().as_str();
        let value = element
            .value()
            .map_err(|e| QueryError::bad_value(e.to_string()))?;
        if let Some(operator) = key.strip_prefix('$') {
            if let Some(node) = parse_top_operator(operator, key, value, ctx)? {
                nodes.push(node);
            }
        } else {
            nodes.push(Node::Path(key.to_owned(), parse_field(value, ctx)?));
        }
    }
    Ok(match nodes.len() {
        1 => nodes.pop().unwrap_or(Node::And(Vec::new())),
        _ => Node::And(nodes),
    })
}

fn parse_top_operator(
    operator: &str,
    key: &str,
    value: RawBsonRef<'_>,
    ctx: ParseCtx<'_>,
) -> Result<Option<Node>, QueryError> {
    Ok(Some(match operator {
        "and" => Node::And(parse_logical_members(key, value, ctx)?),
        "or" => Node::Or(parse_logical_members(key, value, ctx)?),
        "nor" => Node::Nor(parse_logical_members(key, value, ctx)?),
        "comment" => return Ok(None),
        "where" => {
            // No JavaScript engine here: MongoDB answers the same way where
            // $where is disallowed (BadValue).
            return Err(QueryError::bad_value(
                "$where is not allowed in this context",
            ));
        }
        "expr" => Node::Expr(Box::new(crate::expr::Expr::parse_top(value, ctx.vars)?)),
        "jsonSchema" => {
            let RawBsonRef::Document(schema) = value else {
                return Err(QueryError::TypeMismatch(
                    "$jsonSchema must be an object".to_owned(),
                ));
            };
            Node::Schema(Arc::new(crate::validate::schema::Schema::parse(schema)?))
        }
        // mongod's answers when the feature is missing: no text index exists here.
        "text" => {
            return Err(QueryError::IndexNotFound(
                "text index required for $text query".to_owned(),
            ));
        }
        "sampleRate" => {
            return Err(QueryError::NotImplemented(
                "the $sampleRate query operator is not implemented".to_owned(),
            ));
        }
        "alwaysTrue" => Node::And(Vec::new()),
        "alwaysFalse" => Node::Or(Vec::new()),
        _ => {
            return Err(QueryError::bad_value(format!(
                "unknown top level operator: {key}. If you have a field name that starts with a \
                 '$' symbol, consider using $getField or $setField."
            )));
        }
    }))
}

fn parse_logical_members(
    key: &str,
    value: RawBsonRef<'_>,
    ctx: ParseCtx<'_>,
) -> Result<Vec<Node>, QueryError> {
    let RawBsonRef::Array(members) = value else {
        return Err(QueryError::bad_value(format!("{key} must be an array")));
    };
    let mut out = Vec::new();
    for member in array_values(members) {
        let RawBsonRef::Document(doc) = member else {
            return Err(QueryError::bad_value(format!(
                "{key} argument's entries must be objects"
            )));
        };
        out.push(parse_document(doc, ctx.nested())?);
    }
    if out.is_empty() {
        return Err(QueryError::bad_value(
            "$and/$or/$nor must be a nonempty array",
        ));
    }
    Ok(out)
}

/// Whether a document is an operator object (`{$gt: 1}`): its first field starts with `$`.
fn is_operator_object(doc: &RawDocument) -> bool {
    elements(doc)
        .next()
        .is_some_and(|(key, _)| key.starts_with('$'))
}

/// Parses the value of a field in a filter: an operator object, a regex or an equality.
fn parse_field(value: RawBsonRef<'_>, ctx: ParseCtx<'_>) -> Result<Pred, QueryError> {
    match value {
        RawBsonRef::Document(doc) if is_operator_object(doc) => parse_operators(doc, ctx.nested()),
        RawBsonRef::RegularExpression(regex) => Ok(Pred::Regex(compile_regex(
            regex.pattern.as_str(),
            regex.options.as_str(),
        )?)),
        other => Ok(Pred::Eq(owned(other))),
    }
}

/// Parses an operator object (`{$gt: 1, $lt: 5}`) into one predicate.
fn parse_operators(doc: &RawDocument, ctx: ParseCtx<'_>) -> Result<Pred, QueryError> {
    check_depth(ctx)?;
    let mut preds = Vec::new();
    let mut regex: Option<(String, String)> = None;
    let mut options: Option<String> = None;
    for element in doc.iter_elements() {
        let element = element.map_err(|e| QueryError::bad_value(e.to_string()))?;
        let key = element.key().as_str();
        let value = element
            .value()
            .map_err(|e| QueryError::bad_value(e.to_string()))?;
        match key {
            "$regex" => {
                regex = Some(match value {
                    RawBsonRef::String(s) => (s.to_owned(), String::new()),
                    RawBsonRef::RegularExpression(r) => {
                        (r.pattern.as_str().to_owned(), r.options.as_str().to_owned())
                    }
                    _ => return Err(QueryError::bad_value("$regex has to be a string")),
                });
            }
            "$options" => {
                let RawBsonRef::String(s) = value else {
                    return Err(QueryError::bad_value("$options has to be a string"));
                };
                options = Some(s.to_owned());
            }
            _ => preds.push(parse_operator(key, value, ctx)?),
        }
    }
    match (regex, options) {
        (Some((pattern, inline)), options) => {
            let options = match options {
                Some(o) if !inline.is_empty() && !o.is_empty() => {
                    return Err(QueryError::bad_value(
                        "options set in both $regex and $options",
                    ));
                }
                Some(o) if !o.is_empty() => o,
                _ => inline,
            };
            preds.push(Pred::Regex(compile_regex(&pattern, &options)?));
        }
        (None, Some(_)) => return Err(QueryError::bad_value("$options needs a $regex")),
        (None, None) => {}
    }
    Ok(match preds.len() {
        1 => preds.pop().unwrap_or(Pred::And(Vec::new())),
        _ => Pred::And(preds),
    })
}

/// Compiles a regular expression with MongoDB's errors.
pub(crate) fn compile_regex(pattern: &str, options: &str) -> Result<Arc<Pattern>, QueryError> {
    if let Some(bad) = options.chars().find(|c| !"imsxu".contains(*c)) {
        return Err(QueryError::location(
            51108,
            format!("invalid flag in regex options: {bad}"),
        ));
    }
    if pattern.contains('\0') {
        return Err(QueryError::bad_value(
            "Regular expression cannot contain an embedded null byte",
        ));
    }
    let regex = regex::Regex::new(pattern, options)
        .map_err(|e| QueryError::location(51091, format!("Regular expression is invalid: {e}")))?;
    Ok(Arc::new(Pattern {
        regex,
        source: pattern.to_owned(),
        options: options.to_owned(),
    }))
}

fn parse_operator(key: &str, value: RawBsonRef<'_>, ctx: ParseCtx<'_>) -> Result<Pred, QueryError> {
    Ok(match key {
        "$eq" => Pred::Eq(owned(value)),
        "$ne" => Pred::Not(Box::new(Pred::Eq(owned(value)))),
        "$gt" => Pred::Compare(Comparison::Gt, owned(value)),
        "$gte" => Pred::Compare(Comparison::Gte, owned(value)),
        "$lt" => Pred::Compare(Comparison::Lt, owned(value)),
        "$lte" => Pred::Compare(Comparison::Lte, owned(value)),
        "$in" => Pred::In(parse_in(key, value)?),
        "$nin" => Pred::Not(Box::new(Pred::In(parse_in(key, value)?))),
        "$exists" => Pred::Exists(true_value(value)),
        "$type" => Pred::Type(parse_type(value)?),
        "$size" => Pred::Size(parse_size(value)?),
        "$all" => parse_all(value, ctx)?,
        "$elemMatch" => parse_elem_match(value, ctx)?,
        "$mod" => parse_mod(value)?,
        "$bitsAllSet" => Pred::Bits(BitTest::AllSet, parse_bits(key, value)?),
        "$bitsAnySet" => Pred::Bits(BitTest::AnySet, parse_bits(key, value)?),
        "$bitsAllClear" => Pred::Bits(BitTest::AllClear, parse_bits(key, value)?),
        "$bitsAnyClear" => Pred::Bits(BitTest::AnyClear, parse_bits(key, value)?),
        "$not" => Pred::Not(Box::new(parse_not(value, ctx)?)),
        "$comment" => Pred::And(Vec::new()),
        // No geospatial index exists here: mongod's planner answers 291 for the
        // operators that need one; the others work without an index in mongod, and
        // this crate does not implement them.
        "$near" | "$nearSphere" => {
            return Err(QueryError::NoQueryExecutionPlans(
                "error processing query: planner returned error :: caused by :: unable to find \
                 index for $geoNear query"
                    .to_owned(),
            ));
        }
        "$geoWithin" | "$within" | "$geoIntersects" => {
            return Err(QueryError::NotImplemented(format!(
                "the {key} query operator is not implemented"
            )));
        }
        _ => return Err(QueryError::bad_value(format!("unknown operator: {key}"))),
    })
}

fn parse_in(key: &str, value: RawBsonRef<'_>) -> Result<Vec<InItem>, QueryError> {
    let RawBsonRef::Array(members) = value else {
        return Err(QueryError::bad_value(format!("{key} needs an array")));
    };
    let mut out = Vec::new();
    for member in array_values(members) {
        out.push(match member {
            RawBsonRef::RegularExpression(r) => {
                InItem::Regex(compile_regex(r.pattern.as_str(), r.options.as_str())?)
            }
            RawBsonRef::Document(doc) if is_operator_object(doc) => {
                return Err(QueryError::bad_value("cannot nest $ under $in"));
            }
            other => InItem::Value(owned(other)),
        });
    }
    Ok(out)
}

fn parse_type(value: RawBsonRef<'_>) -> Result<Vec<TypeSelector>, QueryError> {
    match value {
        RawBsonRef::Array(members) => array_values(members).map(TypeSelector::parse).collect(),
        other => Ok(vec![TypeSelector::parse(other)?]),
    }
}

fn parse_size(value: RawBsonRef<'_>) -> Result<i64, QueryError> {
    match value {
        RawBsonRef::Int32(_)
        | RawBsonRef::Int64(_)
        | RawBsonRef::Double(_)
        | RawBsonRef::Decimal128(_) => {
            let size = as_whole_i64(value)
                .ok_or_else(|| QueryError::bad_value("$size must be a whole number"))?;
            if size < 0 {
                return Err(QueryError::bad_value("$size may not be negative"));
            }
            Ok(size)
        }
        _ => Err(QueryError::bad_value("$size needs a number")),
    }
}

fn parse_all(value: RawBsonRef<'_>, ctx: ParseCtx<'_>) -> Result<Pred, QueryError> {
    let RawBsonRef::Array(members) = value else {
        return Err(QueryError::bad_value("$all needs an array"));
    };
    let mut preds = Vec::new();
    let mut elem_matches = 0usize;
    for member in array_values(members) {
        preds.push(match member {
            RawBsonRef::Document(doc) if is_operator_object(doc) => {
                let mut fields = elements(doc);
                match fields.next() {
                    Some(("$elemMatch", inner)) if fields.next().is_none() => {
                        elem_matches += 1;
                        parse_elem_match(inner, ctx)?
                    }
                    _ => return Err(QueryError::bad_value("no $ expressions in $all")),
                }
            }
            RawBsonRef::RegularExpression(r) => {
                Pred::Regex(compile_regex(r.pattern.as_str(), r.options.as_str())?)
            }
            other => Pred::Eq(owned(other)),
        });
    }
    if elem_matches != 0 && elem_matches != preds.len() {
        return Err(QueryError::bad_value(
            "$all/$elemMatch has to be consistent",
        ));
    }
    Ok(Pred::All(preds))
}

fn parse_elem_match(value: RawBsonRef<'_>, ctx: ParseCtx<'_>) -> Result<Pred, QueryError> {
    let RawBsonRef::Document(doc) = value else {
        return Err(QueryError::bad_value("$elemMatch needs an Object"));
    };
    let first = elements(doc).next().map(|(key, _)| key);
    let value_form = first.is_some_and(|key| {
        key.starts_with('$')
            && !matches!(
                key,
                "$and" | "$or" | "$nor" | "$expr" | "$where" | "$jsonSchema" | "$comment"
            )
    });
    if value_form {
        return Ok(match parse_operators(doc, ctx.nested())? {
            Pred::And(preds) => Pred::ElemMatchValue(preds),
            pred => Pred::ElemMatchValue(vec![pred]),
        });
    }
    if first == Some("$where") {
        return Err(QueryError::bad_value(
            "$where is not allowed in this context",
        ));
    }
    Ok(Pred::ElemMatchObject(Box::new(parse_document(
        doc,
        ctx.nested(),
    )?)))
}

fn parse_mod(value: RawBsonRef<'_>) -> Result<Pred, QueryError> {
    let RawBsonRef::Array(members) = value else {
        return Err(QueryError::bad_value("malformed mod, needs to be an array"));
    };
    let parts: Vec<RawBsonRef<'_>> = array_values(members).collect();
    let (divisor, remainder) = match parts.as_slice() {
        [] | [_] => return Err(QueryError::bad_value("malformed mod, not enough elements")),
        [d, r] => (*d, *r),
        _ => return Err(QueryError::bad_value("malformed mod, too many elements")),
    };
    let divisor = mod_operand(divisor, "divisor")?;
    let remainder = mod_operand(remainder, "remainder")?;
    if divisor == 0 {
        return Err(QueryError::bad_value("divisor cannot be 0"));
    }
    Ok(Pred::Mod(divisor, remainder))
}

/// A `$mod` operand: any finite number, truncated toward zero.
fn mod_operand(value: RawBsonRef<'_>, what: &str) -> Result<i64, QueryError> {
    let invalid = || {
        QueryError::bad_value(format!(
            "malformed mod, {what} not a number or is NaN/Infinity"
        ))
    };
    match value {
        RawBsonRef::Int32(v) => Ok(i64::from(v)),
        RawBsonRef::Int64(v) => Ok(v),
        RawBsonRef::Double(_) | RawBsonRef::Decimal128(_) => {
            let v = crate::value::as_f64(value).ok_or_else(invalid)?;
            if !v.is_finite() {
                return Err(invalid());
            }
            // Truncation toward zero, saturating, as MongoDB 5.0+ does.
            Ok(v.trunc() as i64)
        }
        _ => Err(invalid()),
    }
}

fn parse_bits(key: &str, value: RawBsonRef<'_>) -> Result<Vec<u32>, QueryError> {
    match value {
        RawBsonRef::Int32(_)
        | RawBsonRef::Int64(_)
        | RawBsonRef::Double(_)
        | RawBsonRef::Decimal128(_) => {
            let mask = as_whole_i64(value).ok_or_else(|| {
                QueryError::bad_value(format!(
                    "{key} mask must be a 64-bit signed integer representable value"
                ))
            })?;
            if mask < 0 {
                return Err(QueryError::bad_value(format!(
                    "{key} mask must be a non-negative number"
                )));
            }
            Ok((0..63).filter(|bit| mask >> bit & 1 == 1).collect())
        }
        RawBsonRef::Binary(binary) => Ok(binary
            .bytes
            .iter()
            .enumerate()
            .flat_map(|(index, byte)| {
                (0..8u32).filter_map(move |bit| {
                    let position = u32::try_from(index)
                        .ok()?
                        .checked_mul(8)?
                        .checked_add(bit)?;
                    (byte >> bit & 1 == 1).then_some(position)
                })
            })
            .collect()),
        RawBsonRef::Array(positions) => parse_bit_positions(key, positions),
        _ => Err(QueryError::bad_value(format!(
            "{key} takes an Array, a number, or a BinData but received: {}",
            crate::filter::types::type_name(crate::filter::types::type_code(&value))
        ))),
    }
}

fn parse_bit_positions(key: &str, positions: &RawArray) -> Result<Vec<u32>, QueryError> {
    let mut out = Vec::new();
    for position in array_values(positions) {
        let bit = as_whole_i64(position).ok_or_else(|| {
            QueryError::bad_value(format!("bit positions must be an integer but got: {key}"))
        })?;
        if !(0..=BIT_POSITION_MAX).contains(&bit) {
            return Err(QueryError::bad_value(format!(
                "bit positions must be >= 0 but got: {key}: {bit}"
            )));
        }
        out.push(u32::try_from(bit).map_err(|_| QueryError::bad_value("bit position too large"))?);
    }
    Ok(out)
}

fn parse_not(value: RawBsonRef<'_>, ctx: ParseCtx<'_>) -> Result<Pred, QueryError> {
    match value {
        RawBsonRef::RegularExpression(r) => Ok(Pred::Regex(compile_regex(
            r.pattern.as_str(),
            r.options.as_str(),
        )?)),
        RawBsonRef::Document(doc) => {
            if elements(doc).next().is_none() {
                return Err(QueryError::bad_value("$not cannot be empty"));
            }
            if !is_operator_object(doc) {
                let key = elements(doc).next().map_or("", |(k, _)| k).to_owned();
                return Err(QueryError::bad_value(format!("unknown operator: {key}")));
            }
            parse_operators(doc, ctx.nested())
        }
        _ => Err(QueryError::bad_value("$not needs a regex or a document")),
    }
}
