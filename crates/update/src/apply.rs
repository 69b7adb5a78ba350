//! Applying parsed operations to the editable tree, one concrete path at a time.

use bson::{Bson, Document, RawDocument, RawDocumentBuf, Timestamp};
use query::Filter;

use crate::array_ops::{add_to_set, pop, pull, pull_all};
use crate::error::UpdateError;
use crate::parse::{BitOp, Op, OpKind};
use crate::tree::{self, Action, Component};
use crate::value::{Arith, arith, compare, identical, is_number, type_name, zero_like};

/// What the operations of one update see besides the document.
pub(crate) struct Env<'a> {
    pub(crate) original: &'a RawDocument,
    pub(crate) query: Option<&'a Filter>,
    pub(crate) array_filters: &'a [(String, Filter)],
    pub(crate) now: bson::DateTime,
    pub(crate) is_insert: bool,
    /// `_id` as text for error messages.
    pub(crate) id_text: String,
}

/// Applies one operation, recording the concrete paths it changed.
pub(crate) fn apply_op(
    root: &mut Document,
    op: &Op,
    env: &Env<'_>,
    changed: &mut Vec<String>,
) -> Result<(), UpdateError> {
    if let OpKind::SetOnInsert(_) = op.kind
        && !env.is_insert
    {
        return Ok(());
    }
    let paths = concrete_paths(root, &op.path, env)?;
    for path in paths {
        if let OpKind::Rename(to) = &op.kind {
            if rename(root, &path, to, env)? {
                changed.push(path.join("."));
                changed.push(to.join("."));
            }
        } else if apply_at(root, op, &path, env)? {
            changed.push(path.join("."));
        }
    }
    Ok(())
}

fn concrete_paths(
    root: &Document,
    components: &[Component],
    env: &Env<'_>,
) -> Result<Vec<Vec<String>>, UpdateError> {
    if let Some(path) = components
        .iter()
        .map(|c| match c {
            Component::Field(name) => Some(name.clone()),
            _ => None,
        })
        .collect::<Option<Vec<String>>>()
    {
        return Ok(vec![path]);
    }
    let mut positional = |prefix: &str| {
        env.query
            .and_then(|q| q.positional_index(env.original, prefix))
            .ok_or_else(|| {
                UpdateError::bad_value(
                    "The positional operator did not find the match needed from the query.",
                )
            })
    };
    let mut pick = |array: &[Bson], id: Option<&str>| -> Result<Vec<usize>, UpdateError> {
        let Some(id) = id else {
            return Ok((0..array.len()).collect());
        };
        let Some((_, filter)) = env.array_filters.iter().find(|(name, _)| name == id) else {
            return Err(UpdateError::bad_value(format!(
                "No array filter found for identifier '{id}'"
            )));
        };
        let mut hits = Vec::new();
        for (index, element) in array.iter().enumerate() {
            let mut wrapped = Document::new();
            wrapped.insert(id, element.clone());
            let raw = RawDocumentBuf::try_from(&wrapped)
                .map_err(|e| UpdateError::bad_value(e.to_string()))?;
            if filter.try_matches(&raw)? {
                hits.push(index);
            }
        }
        Ok(hits)
    };
    tree::expand(root, components, &mut positional, &mut pick)
}

fn last_name(path: &[String]) -> &str {
    path.last().map(String::as_str).unwrap_or_default()
}

fn apply_at(
    root: &mut Document,
    op: &Op,
    path: &[String],
    env: &Env<'_>,
) -> Result<bool, UpdateError> {
    let text = path.join(".");
    let field = last_name(path);
    let id = env.id_text.as_str();
    let creates = !matches!(
        op.kind,
        OpKind::Unset | OpKind::Pop(_) | OpKind::Pull(_) | OpKind::PullAll(_)
    );
    let mut leaf = |current: Option<&Bson>| -> Result<Action, UpdateError> {
        Ok(match (&op.kind, current) {
            (OpKind::Set(v) | OpKind::SetOnInsert(v), _) => Action::Set(v.clone()),
            (OpKind::Unset, Some(_)) => Action::Remove,
            (OpKind::Inc(v), None) => Action::Set(v.clone()),
            (OpKind::Mul(v), None) => Action::Set(zero_like(v)),
            (OpKind::Inc(v) | OpKind::Mul(v), Some(cur)) => {
                let (name, how) = match op.kind {
                    OpKind::Inc(_) => ("$inc", Arith::Add),
                    _ => ("$mul", Arith::Multiply),
                };
                if !is_number(cur) {
                    return Err(UpdateError::type_mismatch(format!(
                        "Cannot apply {name} to a value of non-numeric type. {{_id: {id}}} has the field '{field}' of non-numeric type {}",
                        type_name(cur)
                    )));
                }
                match arith(how, cur, v)? {
                    Some(result) if identical(cur, &result) => Action::Keep,
                    Some(result) => Action::Set(result),
                    None => {
                        return Err(UpdateError::bad_value(format!(
                            "Failed to apply {name} operations to current value ((NumberLong){cur}) for document {{_id: {id}}}"
                        )));
                    }
                }
            }
            (OpKind::Min(v) | OpKind::Max(v), None) => Action::Set(v.clone()),
            (OpKind::Min(v), Some(cur)) if compare(v, cur).is_lt() => Action::Set(v.clone()),
            (OpKind::Max(v), Some(cur)) if compare(v, cur).is_gt() => Action::Set(v.clone()),
            (OpKind::CurrentDate(timestamp), _) => Action::Set(if *timestamp {
                let seconds = env.now.timestamp_millis().div_euclid(1000);
                Bson::Timestamp(Timestamp {
                    time: u32::try_from(seconds).unwrap_or(0),
                    increment: 1,
                })
            } else {
                Bson::DateTime(env.now)
            }),
            (OpKind::Push(spec), cur) => Action::Set(spec.apply(cur, &text, id)?),
            (OpKind::AddToSet(items), cur) => Action::Set(add_to_set(cur, items, field)?),
            (OpKind::Pop(first), Some(cur)) => Action::Set(pop(cur, *first, &text)?),
            (OpKind::Pull(condition), Some(cur)) => Action::Set(pull(cur, condition)?),
            (OpKind::PullAll(values), Some(cur)) => Action::Set(pull_all(cur, values)?),
            (OpKind::Bit(bits), cur) => Action::Set(bit(cur, bits, field, id)?),
            _ => Action::Keep,
        })
    };
    tree::modify(root, path, creates, &mut leaf)
}

fn bit(
    current: Option<&Bson>,
    bits: &[(BitOp, Bson)],
    field: &str,
    id: &str,
) -> Result<Bson, UpdateError> {
    let mut value = match current {
        None => Bson::Int32(0),
        Some(v @ (Bson::Int32(_) | Bson::Int64(_))) => v.clone(),
        Some(other) => {
            return Err(UpdateError::bad_value(format!(
                "Cannot apply $bit to a value of non-integral type.{{_id: {id}}} has the field {field} of non-integer type {}",
                type_name(other)
            )));
        }
    };
    for (op, operand) in bits {
        value = match (&value, operand) {
            (Bson::Int32(a), Bson::Int32(b)) => {
                Bson::Int32(bit_op(*op, i64::from(*a), i64::from(*b)) as i32)
            }
            (a, b) => {
                let (Some(x), Some(y)) = (int_of(a), int_of(b)) else {
                    return Ok(value);
                };
                Bson::Int64(bit_op(*op, x, y))
            }
        };
    }
    Ok(value)
}

fn int_of(value: &Bson) -> Option<i64> {
    match value {
        Bson::Int32(v) => Some(i64::from(*v)),
        Bson::Int64(v) => Some(*v),
        _ => None,
    }
}

fn bit_op(op: BitOp, a: i64, b: i64) -> i64 {
    match op {
        BitOp::And => a & b,
        BitOp::Or => a | b,
        BitOp::Xor => a ^ b,
    }
}

/// `$rename`: neither path may pass through an array.
fn rename(
    root: &mut Document,
    from: &[String],
    to: &[String],
    env: &Env<'_>,
) -> Result<bool, UpdateError> {
    let id = &env.id_text;
    if let Some(array) = array_on_path(root, from) {
        return Err(UpdateError::bad_value(format!(
            "The source field cannot be an array element, '{}' in doc with _id: {id} has an array field called '{array}'",
            from.join(".")
        )));
    }
    let Some(value) = tree::get(root, from).cloned() else {
        return Ok(false);
    };
    if let Some(array) = array_on_path(root, to) {
        return Err(UpdateError::bad_value(format!(
            "The destination field cannot be an array element, '{}' in doc with _id: {id} has an array field called '{array}'",
            to.join(".")
        )));
    }
    tree::modify(root, from, false, &mut |_| Ok(Action::Remove))?;
    tree::modify(root, to, true, &mut |_| Ok(Action::Set(value.clone())))?;
    Ok(true)
}

/// The name of an array met strictly above the last component of `path`.
fn array_on_path(root: &Document, path: &[String]) -> Option<String> {
    let mut current = root;
    let parents = path.len().saturating_sub(1);
    for name in path.iter().take(parents) {
        match current.get(name) {
            Some(Bson::Document(d)) => current = d,
            Some(Bson::Array(_)) => return Some(name.clone()),
            _ => return None,
        }
    }
    None
}
