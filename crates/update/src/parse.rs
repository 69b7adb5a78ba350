//! Parsing an update-operator document into operations, with MongoDB's
//! errors for malformed updates and conflicting paths.

use bson::{Bson, RawBsonRef, RawDocument};

use crate::array_ops::{PullCondition, PushSpec};
use crate::error::UpdateError;
use crate::limits::PATH_COMPONENTS_MAX;
use crate::tree::Component;
use crate::value::{to_bson, type_name};

/// A bitwise operation of `$bit`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum BitOp {
    And,
    Or,
    Xor,
}

/// What one operation does.
#[derive(Debug, Clone)]
pub(crate) enum OpKind {
    Set(Bson),
    Unset,
    Inc(Bson),
    Mul(Bson),
    Min(Bson),
    Max(Bson),
    /// The destination path.
    Rename(Vec<String>),
    /// `true` for a timestamp, `false` for a date.
    CurrentDate(bool),
    SetOnInsert(Bson),
    Push(PushSpec),
    AddToSet(Vec<Bson>),
    /// `true` removes the first element.
    Pop(bool),
    Pull(PullCondition),
    PullAll(Vec<Bson>),
    Bit(Vec<(BitOp, Bson)>),
}

/// One operator applied to one path.
#[derive(Debug, Clone)]
pub(crate) struct Op {
    pub(crate) path: Vec<Component>,
    pub(crate) path_text: String,
    pub(crate) kind: OpKind,
}

/// Every update operator this crate implements, as a client spells it.
pub const OPERATORS: &[&str] = &[
    "$set",
    "$unset",
    "$inc",
    "$mul",
    "$min",
    "$max",
    "$rename",
    "$currentDate",
    "$setOnInsert",
    "$push",
    "$addToSet",
    "$pop",
    "$pull",
    "$pullAll",
    "$bit",
];

/// Parses `{$op: {path: arg, ..}, ..}` into operations in document order.
pub(crate) fn parse_operators(update: &RawDocument) -> Result<Vec<Op>, UpdateError> {
    let mut ops = Vec::new();
    for element in update {
        let (operator, argument) =
            element.map_err(|e| UpdateError::failed_to_parse(e.to_string()))?;
        let operator = operator.as_str();
        let Some(name) = OPERATORS.iter().copied().find(|o| *o == operator) else {
            return Err(UpdateError::failed_to_parse(format!(
                "Unknown modifier: {operator}. Expected a valid update modifier or pipeline-style update specified as an array"
            )));
        };
        let RawBsonRef::Document(fields) = argument else {
            return Err(UpdateError::failed_to_parse(format!(
                "Modifiers operate on fields but we found type {} instead. For example: {{$mod: {{<field>: ...}}}} not {{{operator}: {}}}",
                type_name(&to_bson(argument)?),
                to_bson(argument)?
            )));
        };
        for field in fields {
            let (path_text, value) =
                field.map_err(|e| UpdateError::failed_to_parse(e.to_string()))?;
            let path_text = path_text.as_str();
            let path = parse_path(path_text)?;
            let kind = parse_kind(name, path_text, value)?;
            if let OpKind::Rename(_) = kind {
                check_rename_source(&path, path_text, value)?;
            }
            ops.push(Op {
                path,
                path_text: path_text.to_owned(),
                kind,
            });
        }
    }
    Ok(ops)
}

/// Splits a dotted update path, refusing empty components.
pub(crate) fn parse_path(text: &str) -> Result<Vec<Component>, UpdateError> {
    if text.is_empty() {
        return Err(UpdateError::EmptyFieldName(
            "An empty update path is not valid.".to_owned(),
        ));
    }
    let mut components = Vec::new();
    let mut positional = 0;
    for part in text.split('.') {
        if part.is_empty() {
            return Err(UpdateError::EmptyFieldName(format!(
                "The update path '{text}' contains an empty field name, which is not allowed."
            )));
        }
        let component = if part == "$" {
            positional += 1;
            Component::Positional
        } else if part == "$[]" {
            Component::All
        } else if let Some(id) = part.strip_prefix("$[").and_then(|p| p.strip_suffix(']')) {
            Component::Filtered(id.to_owned())
        } else {
            // Other `$`-prefixed names are field names (MongoDB 5.0+): allowed below
            // the top level, checked at the top level when written (`storage`).
            Component::Field(part.to_owned())
        };
        if components.is_empty() && component != Component::Field(part.to_owned()) {
            return Err(UpdateError::bad_value(format!(
                "Cannot have array filter identifier (i.e. '$[<id>]') or positional operator (i.e. '$') element in the first component in path '{text}'"
            )));
        }
        components.push(component);
    }
    if positional > 1 {
        return Err(UpdateError::bad_value(format!(
            "Too many positional (i.e. '$') elements found in path '{text}'"
        )));
    }
    if components.len() > PATH_COMPONENTS_MAX {
        return Err(UpdateError::bad_value(format!(
            "The update path '{text}' has too many components"
        )));
    }
    Ok(components)
}

fn parse_kind(name: &str, path: &str, value: RawBsonRef<'_>) -> Result<OpKind, UpdateError> {
    let bson = to_bson(value)?;
    Ok(match name {
        "$set" => OpKind::Set(bson),
        "$unset" => OpKind::Unset,
        "$inc" | "$mul" => {
            if !crate::value::is_number(&bson) {
                let verb = if name == "$inc" {
                    "increment"
                } else {
                    "multiply"
                };
                return Err(UpdateError::type_mismatch(format!(
                    "Cannot {verb} with non-numeric argument: {{{path}: {bson}}}"
                )));
            }
            if name == "$inc" {
                OpKind::Inc(bson)
            } else {
                OpKind::Mul(bson)
            }
        }
        "$min" => OpKind::Min(bson),
        "$max" => OpKind::Max(bson),
        "$setOnInsert" => OpKind::SetOnInsert(bson),
        "$rename" => parse_rename(path, &bson)?,
        "$currentDate" => parse_current_date(path, &bson)?,
        "$push" => OpKind::Push(PushSpec::parse(&bson)?),
        "$addToSet" => OpKind::AddToSet(crate::array_ops::parse_add_to_set(&bson)?),
        "$pop" => parse_pop(&bson)?,
        "$pull" => OpKind::Pull(PullCondition::parse(&bson)?),
        "$pullAll" => match bson {
            Bson::Array(values) => OpKind::PullAll(values),
            other => {
                return Err(UpdateError::bad_value(format!(
                    "$pullAll requires an array argument but was given a {}",
                    type_name(&other)
                )));
            }
        },
        _ => parse_bit(path, &bson)?,
    })
}

fn parse_rename(path: &str, value: &Bson) -> Result<OpKind, UpdateError> {
    let Bson::String(to) = value else {
        return Err(UpdateError::bad_value(format!(
            "The 'to' field for $rename must be a string: {path}: {value}"
        )));
    };
    if to == path {
        return Err(UpdateError::bad_value(format!(
            "The source and target field for $rename must differ: {path}: \"{to}\""
        )));
    }
    let target = parse_path(to)?;
    let mut parts = Vec::with_capacity(target.len());
    for component in target {
        match component {
            Component::Field(name) => parts.push(name),
            _ => {
                return Err(UpdateError::bad_value(format!(
                    "The destination field for $rename may not be dynamic: {to}"
                )));
            }
        }
    }
    let source_prefix = format!("{path}.");
    let target_prefix = format!("{to}.");
    if to.starts_with(&source_prefix) || path.starts_with(&target_prefix) {
        return Err(UpdateError::bad_value(format!(
            "The source and target field for $rename must not be on the same path: {path}: \"{to}\""
        )));
    }
    Ok(OpKind::Rename(parts))
}

fn check_rename_source(
    path: &[Component],
    text: &str,
    _value: RawBsonRef<'_>,
) -> Result<(), UpdateError> {
    if path.iter().any(|c| !matches!(c, Component::Field(_))) {
        return Err(UpdateError::bad_value(format!(
            "The source field for $rename may not be dynamic: {text}"
        )));
    }
    Ok(())
}

fn parse_current_date(path: &str, value: &Bson) -> Result<OpKind, UpdateError> {
    match value {
        Bson::Boolean(_) => Ok(OpKind::CurrentDate(false)),
        Bson::Document(spec) => {
            let mut timestamp = None;
            for (key, v) in spec {
                if key != "$type" {
                    return Err(UpdateError::bad_value(format!(
                        "Unrecognized $currentDate option: {key}"
                    )));
                }
                timestamp = match v {
                    Bson::String(s) if s == "date" => Some(false),
                    Bson::String(s) if s == "timestamp" => Some(true),
                    _ => {
                        return Err(UpdateError::bad_value(
                            "The '$type' string field is required to be 'date' or 'timestamp': {$currentDate: {field : {$type: 'date'}}}",
                        ));
                    }
                };
            }
            timestamp.map(OpKind::CurrentDate).ok_or_else(|| {
                UpdateError::bad_value(
                    "The '$type' string field is required to be 'date' or 'timestamp': {$currentDate: {field : {$type: 'date'}}}",
                )
            })
        }
        other => Err(UpdateError::bad_value(format!(
            "{path} is not valid type for $currentDate. Please use a boolean ('true') or a $type expression ({{$type: 'timestamp/date'}}), found {}",
            type_name(other)
        ))),
    }
}

fn parse_pop(value: &Bson) -> Result<OpKind, UpdateError> {
    match crate::value::as_whole(value) {
        Some(1) => Ok(OpKind::Pop(false)),
        Some(-1) => Ok(OpKind::Pop(true)),
        _ if crate::value::is_number(value) => Err(UpdateError::failed_to_parse(format!(
            "$pop expects 1 or -1, found: {value}"
        ))),
        _ => Err(UpdateError::type_mismatch(format!(
            "Expected a number in: {value}"
        ))),
    }
}

fn parse_bit(path: &str, value: &Bson) -> Result<OpKind, UpdateError> {
    let Bson::Document(spec) = value else {
        return Err(UpdateError::bad_value(format!(
            "The $bit modifier is not compatible with a {}. You must pass in an embedded document: {{$bit: {{field: {{and/or/xor: #}}}}",
            type_name(value)
        )));
    };
    let mut bits = Vec::new();
    for (key, operand) in spec {
        let op = match key.as_str() {
            "and" => BitOp::And,
            "or" => BitOp::Or,
            "xor" => BitOp::Xor,
            _ => {
                return Err(UpdateError::bad_value(format!(
                    "The $bit modifier only supports 'and', 'or', and 'xor', not '{key}' which is an unknown operator: {{{key}: {operand}}}"
                )));
            }
        };
        if !matches!(operand, Bson::Int32(_) | Bson::Int64(_)) {
            return Err(UpdateError::bad_value(format!(
                "The $bit modifier field must be an Integer(32/64 bit); a '{}' is not supported here: {{{key}: {operand}}}",
                type_name(operand)
            )));
        }
        bits.push((op, operand.clone()));
    }
    if bits.is_empty() {
        return Err(UpdateError::bad_value(format!(
            "You must pass in at least one bitwise operation. The format is: {{$bit: {{field: {{and/or/xor: #}}}}, found {path}"
        )));
    }
    Ok(OpKind::Bit(bits))
}

/// Refuses two operations whose paths are equal or one a prefix of the other
/// (`ConflictingUpdateOperators`), in MongoDB's wording.
pub(crate) fn check_conflicts(ops: &[Op]) -> Result<(), UpdateError> {
    let mut seen: Vec<(Vec<Component>, String)> = Vec::new();
    for op in ops {
        let mut paths = vec![(op.path.clone(), op.path_text.clone())];
        if let OpKind::Rename(to) = &op.kind {
            let target: Vec<Component> = to.iter().cloned().map(Component::Field).collect();
            paths.push((target, to.join(".")));
        }
        for (path, text) in paths {
            for (earlier, earlier_text) in &seen {
                let shorter = earlier.len().min(path.len());
                if earlier.get(..shorter) == path.get(..shorter) {
                    let at = if earlier.len() <= path.len() {
                        earlier_text
                    } else {
                        &text
                    };
                    return Err(UpdateError::ConflictingUpdateOperators(format!(
                        "Updating the path '{text}' would create a conflict at '{at}'"
                    )));
                }
            }
            seen.push((path, text));
        }
    }
    Ok(())
}
