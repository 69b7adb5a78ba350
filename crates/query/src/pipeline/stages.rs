//! The stages of a pipeline other than `$group`: each stage document parsed
//! with MongoDB's checks and codes, and the per-document stages applied.

use super::Pipeline;
use super::fields::{self, PathSet};
use super::group::Group;
use crate::error::QueryError;
use crate::expr::Expression;
use crate::filter::Filter;
use crate::projection::Projection;
use crate::sort::SortSpec;
use crate::variables::Variables;
use bson::raw::{RawDocument, RawDocumentBuf};
use bson::{Bson, Document, RawBsonRef};
use bson_canonical::compare::elements;

/// One compiled stage.
#[derive(Debug, Clone)]
pub(crate) enum Stage {
    Match(Box<Filter>),
    /// `$sort`; `bound` is how many leading documents the `$skip`s and
    /// `$limit`s right after it can use, so a top-k selection is enough.
    Sort {
        spec: SortSpec,
        bound: Option<u64>,
    },
    Skip(u64),
    Limit(u64),
    /// `$project`, and `$unset` as the exclusion projection it is.
    Project(Box<Projection>),
    /// `$addFields` / `$set`: paths and the expressions they receive, all
    /// evaluated against the incoming document.
    AddFields(Vec<(Vec<String>, Expression)>),
    ReplaceRoot(Box<Expression>, ReplaceKind),
    Group(Box<Group>),
    Count(String),
    Unwind(Box<Unwind>),
    Facet(Vec<(String, Pipeline)>),
    Lookup(Box<super::lookup::Lookup>),
    UnionWith(Box<super::union_with::UnionWith>),
    /// `$sample`: this many documents drawn at random.
    Sample(u64),
    Redact(Box<super::redact::Redact>),
    BucketAuto(Box<super::bucket_auto::BucketAuto>),
    /// The start of `$documents`: one empty document, whatever comes from upstream
    /// (MongoDB's `$queue` of `[{}]`).
    Queue,
}

/// Which stage replaces the root: their messages name the expression differently.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum ReplaceKind {
    ReplaceRoot,
    ReplaceWith,
}

/// A parsed `$unwind`.
#[derive(Debug, Clone)]
pub(crate) struct Unwind {
    path: Vec<String>,
    index: Option<Vec<String>>,
    preserve: bool,
}

/// Stages MongoDB has that need the engine (other collections, indexes,
/// server state, search) or that this crate does not implement: refused
/// with NotImplemented rather than answered wrongly.
const REFUSED_STAGES: &[&str] = &[
    "$graphLookup",
    "$geoNear",
    "$indexStats",
    "$changeStreamSplitLargeEvent",
    "$search",
    "$searchMeta",
    "$vectorSearch",
    "$listSearchIndexes",
    "$listSessions",
    "$listSampledQueries",
    "$listCatalog",
    "$planCacheStats",
    "$shardedDataDistribution",
    "$querySettings",
    "$densify",
    "$fill",
    "$setWindowFields",
];

pub(super) fn location(code: i32, message: impl Into<String>) -> QueryError {
    QueryError::location(code, message)
}

/// MongoDB's type name of `value`, for error messages.
pub(super) fn type_name(value: RawBsonRef<'_>) -> &'static str {
    crate::filter::types::type_name(crate::filter::types::type_code(&value))
}

/// Parses one stage document (`{$name: spec}`) into the stages it stands
/// for (`$sortByCount` is a `$group` and a `$sort`). `nested` is true
/// inside `$facet`.
pub(crate) fn parse_stage(
    stage: &RawDocument,
    nested: bool,
    vars: &Variables,
) -> Result<Vec<Stage>, QueryError> {
    let mut fields = elements(stage);
    let (name, spec) = match (fields.next(), fields.next()) {
        (Some(field), None) => field,
        _ => {
            return Err(location(
                40323,
                "A pipeline stage specification object must contain exactly one field.",
            ));
        }
    };
    Ok(vec![match name {
        "$match" => parse_match(spec, vars)?,
        "$sort" => parse_sort(spec)?,
        "$skip" => Stage::Skip(parse_count_argument("$skip", spec, 5_107_200)?),
        "$limit" => match parse_count_argument("$limit", spec, 5_107_201)? {
            0 => return Err(location(15958, "the limit must be positive")),
            n => Stage::Limit(n),
        },
        "$project" => parse_project(spec, vars).map_err(|e| e.context("Invalid $project"))?,
        "$addFields" | "$set" => {
            parse_add_fields(name, spec, vars).map_err(|e| e.context(format!("Invalid {name}")))?
        }
        "$unset" => parse_unset(spec).map_err(|e| e.context("Invalid $unset"))?,
        "$replaceRoot" => parse_replace_root(spec, vars)?,
        "$replaceWith" => Stage::ReplaceRoot(
            Box::new(Expression::parse_with(spec, vars)?),
            ReplaceKind::ReplaceWith,
        ),
        "$group" => Stage::Group(Box::new(Group::parse(spec, vars)?)),
        "$count" => parse_count(spec)?,
        "$unwind" => Stage::Unwind(Box::new(parse_unwind(spec)?)),
        "$sortByCount" => return parse_sort_by_count(spec, vars),
        "$facet" if nested => {
            return Err(location(
                40600,
                "$facet is not allowed to be used within a $facet stage",
            ));
        }
        "$facet" => parse_facet(spec, vars)?,
        "$lookup" => Stage::Lookup(Box::new(super::lookup::parse(spec, vars)?)),
        "$unionWith" => Stage::UnionWith(Box::new(super::union_with::parse(spec, vars)?)),
        "$sample" => Stage::Sample(super::sample::parse(spec)?),
        "$bucket" => return super::bucket::parse(spec, vars),
        "$redact" => Stage::Redact(Box::new(super::redact::parse(spec, vars)?)),
        "$bucketAuto" => Stage::BucketAuto(Box::new(super::bucket_auto::parse(spec, vars)?)),
        // The server is always a standalone (there is no replication), where mongod
        // refuses a change stream as soon as it parses the stage, whatever its options.
        "$changeStream" => {
            return Err(location(
                40573,
                "The $changeStream stage is only supported on replica sets",
            ));
        }
        _ if REFUSED_STAGES.contains(&name) => {
            return Err(QueryError::NotImplemented(format!(
                "the {name} aggregation stage is not implemented"
            )));
        }
        _ => {
            return Err(location(
                40324,
                format!("Unrecognized pipeline stage name: '{name}'"),
            ));
        }
    }])
}

/// MongoDB's `FieldPath::uassertValidFieldName`, for names that are one field.
fn validate_field_name(name: &str) -> Result<(), QueryError> {
    if name.contains('.') {
        return Err(location(
            16412,
            "FieldPath field names may not contain '.'.",
        ));
    }
    fields::field_path(name).map(|_| ())
}

/// The field `$documents` passes its array through, as MongoDB's desugaring does.
const DOCUMENTS_FIELD: &str = "$documents";

/// `$documents` as MongoDB 7.0 runs it: `[{$queue: [{}]}, {$project: {_id: true,
/// F: <spec>}}, {$unwind: "$F"}, {$replaceWith: "$F"}]`, so a missing, null or empty
/// value gives no documents and a non-document element fails `$replaceWith` (40228).
pub(crate) fn parse_documents(
    spec: RawBsonRef<'_>,
    vars: &Variables,
) -> Result<Vec<Stage>, QueryError> {
    let field = &DOCUMENTS_FIELD[1..];
    let mut projection = Document::new();
    projection.insert("_id", true);
    projection.insert(
        field,
        Bson::try_from(spec).map_err(|e| QueryError::bad_value(e.to_string()))?,
    );
    let projection = to_raw(&projection)?;
    let path = format!("${field}");
    Ok(vec![
        Stage::Queue,
        Stage::Project(Box::new(Projection::parse_aggregation_with(
            &projection,
            vars,
        )?)),
        Stage::Unwind(Box::new(parse_unwind(RawBsonRef::String(&path))?)),
        Stage::ReplaceRoot(
            Box::new(Expression::parse_with(RawBsonRef::String(&path), vars)?),
            ReplaceKind::ReplaceWith,
        ),
    ])
}

fn parse_match(spec: RawBsonRef<'_>, vars: &Variables) -> Result<Stage, QueryError> {
    let RawBsonRef::Document(filter) = spec else {
        return Err(location(
            15959,
            "the match filter must be an expression in an object",
        ));
    };
    Ok(Stage::Match(Box::new(Filter::parse_with(filter, vars)?)))
}

pub(super) fn parse_sort(spec: RawBsonRef<'_>) -> Result<Stage, QueryError> {
    let RawBsonRef::Document(keys) = spec else {
        return Err(location(
            15973,
            "the $sort key specification must be an object",
        ));
    };
    if keys.is_empty() {
        return Err(location(
            15976,
            "$sort stage must have at least one sort key",
        ));
    }
    Ok(Stage::Sort {
        spec: SortSpec::parse(keys)?,
        bound: None,
    })
}

/// The argument of `$skip` / `$limit`: a whole non-negative number, with
/// the messages of MongoDB's `parseIntegerElementToNonNegativeLong`.
fn parse_count_argument(stage: &str, value: RawBsonRef<'_>, code: i32) -> Result<u64, QueryError> {
    let shown = format!("{stage}: {}", fields::show_raw(value));
    let refuse = |reason: &str| {
        location(
            code,
            format!("invalid argument to {stage} stage: {reason}{shown}"),
        )
    };
    let whole = match value {
        RawBsonRef::Int32(v) => i64::from(v),
        RawBsonRef::Int64(v) => v,
        RawBsonRef::Double(_) | RawBsonRef::Decimal128(_) => {
            let v = crate::value::as_f64(value).unwrap_or(f64::NAN);
            if v.is_nan() {
                return Err(refuse("Expected an integer, but found NaN in: "));
            }
            // 2^63 as a double: the first value past the i64 range.
            if !(-9_223_372_036_854_775_808.0..9_223_372_036_854_775_808.0).contains(&v) {
                return Err(refuse("Cannot represent as a 64-bit integer: "));
            }
            crate::value::whole_f64_to_i64(v).ok_or_else(|| refuse("Expected an integer: "))?
        }
        _ => return Err(refuse("Expected a number in: ")),
    };
    u64::try_from(whole).map_err(|_| refuse("Expected a non-negative number in: "))
}

fn parse_project(spec: RawBsonRef<'_>, vars: &Variables) -> Result<Stage, QueryError> {
    let RawBsonRef::Document(fields) = spec else {
        return Err(location(15969, "$project specification must be an object"));
    };
    Ok(Stage::Project(Box::new(
        Projection::parse_aggregation_with(fields, vars)?,
    )))
}

fn parse_add_fields(
    name: &str,
    spec: RawBsonRef<'_>,
    vars: &Variables,
) -> Result<Stage, QueryError> {
    let RawBsonRef::Document(doc) = spec else {
        return Err(location(
            40272,
            format!(
                "{name} specification stage must be an object, got {}",
                type_name(spec)
            ),
        ));
    };
    let mut out = Vec::new();
    let mut paths = PathSet::default();
    flatten(doc, &[], &mut out, &mut paths, vars)?;
    Ok(Stage::AddFields(out))
}

/// Nested field specifications (`{a: {b: 1}}`) name paths, as in MongoDB's
/// `$addFields`; a document with one `$`-named field is an expression, and
/// an empty one the literal `{}`.
fn flatten(
    doc: &RawDocument,
    prefix: &[String],
    out: &mut Vec<(Vec<String>, Expression)>,
    paths: &mut PathSet,
    vars: &Variables,
) -> Result<(), QueryError> {
    for (key, value) in elements(doc) {
        let mut path = prefix.to_vec();
        path.extend(fields::field_path(key)?);
        let nested = match value {
            RawBsonRef::Document(sub) => {
                let first = elements(sub).next();
                first
                    .is_some_and(|(k, _)| !k.starts_with('$'))
                    .then_some(sub)
            }
            _ => None,
        };
        match nested {
            Some(sub) => flatten(sub, &path, out, paths, vars)?,
            None => {
                paths.add(&path)?;
                out.push((path, Expression::parse_with(value, vars)?));
            }
        }
    }
    Ok(())
}

fn parse_unset(spec: RawBsonRef<'_>) -> Result<Stage, QueryError> {
    let names: Vec<RawBsonRef<'_>> = match spec {
        RawBsonRef::Array(items) => bson_canonical::compare::array_values(items).collect(),
        one => vec![one],
    };
    if names.is_empty() {
        return Err(location(
            31119,
            "$unset specification must be a string or an array with at least one field",
        ));
    }
    let mut exclusion = Document::new();
    for name in names {
        let RawBsonRef::String(text) = name else {
            return Err(location(
                31120,
                "$unset specification must be a string or an array containing only string values",
            ));
        };
        fields::field_path(text)?;
        exclusion.insert(text, 0_i32);
    }
    Ok(Stage::Project(Box::new(Projection::parse_aggregation(
        &to_raw(&exclusion)?,
    )?)))
}

fn parse_replace_root(spec: RawBsonRef<'_>, vars: &Variables) -> Result<Stage, QueryError> {
    let RawBsonRef::Document(options) = spec else {
        return Err(location(
            40229,
            format!(
                "expected an object as specification for $replaceRoot stage, got {}",
                type_name(spec)
            ),
        ));
    };
    let mut new_root = None;
    for (key, value) in elements(options) {
        if key != "newRoot" {
            return Err(location(
                40230,
                format!(
                    "unrecognized option to $replaceRoot stage: {key}, only valid option is \
                     'newRoot'."
                ),
            ));
        }
        new_root = Some(value);
    }
    let Some(new_root) = new_root else {
        return Err(location(
            40231,
            "no newRoot specified for the $replaceRoot stage",
        ));
    };
    Ok(Stage::ReplaceRoot(
        Box::new(Expression::parse_with(new_root, vars)?),
        ReplaceKind::ReplaceRoot,
    ))
}

fn parse_count(spec: RawBsonRef<'_>) -> Result<Stage, QueryError> {
    let RawBsonRef::String(name) = spec else {
        return Err(location(
            40156,
            "the count field must be a non-empty string",
        ));
    };
    if name.is_empty() {
        return Err(location(
            40157,
            "the count field must be a non-empty string",
        ));
    }
    if name.starts_with('$') {
        return Err(location(
            40158,
            "the count field cannot be a $-prefixed path",
        ));
    }
    if name.contains('\0') {
        return Err(location(
            40159,
            "the count field cannot contain a null byte",
        ));
    }
    if name.contains('.') {
        return Err(location(40160, "the count field cannot contain '.'"));
    }
    if name == "_id" {
        // MongoDB's $count is a $group whose count field is named by the
        // argument, and a group's _id may be given only once.
        return Err(location(15948, "a group's _id may only be specified once"));
    }
    Ok(Stage::Count(name.to_owned()))
}

fn parse_unwind(spec: RawBsonRef<'_>) -> Result<Unwind, QueryError> {
    let mut path_text = "";
    let mut preserve = false;
    let mut index = None;
    match spec {
        RawBsonRef::String(text) => path_text = text,
        RawBsonRef::Document(options) => {
            for (key, value) in elements(options) {
                match (key, value) {
                    ("path", RawBsonRef::String(text)) => path_text = text,
                    ("path", other) => {
                        return Err(location(
                            28808,
                            format!(
                                "expected a string as the path for $unwind stage, got {}",
                                type_name(other)
                            ),
                        ));
                    }
                    ("preserveNullAndEmptyArrays", RawBsonRef::Boolean(b)) => preserve = b,
                    ("preserveNullAndEmptyArrays", other) => {
                        return Err(location(
                            28809,
                            format!(
                                "expected a boolean for the preserveNullAndEmptyArrays option \
                                 to $unwind stage, got {}",
                                type_name(other)
                            ),
                        ));
                    }
                    ("includeArrayIndex", RawBsonRef::String(text)) if !text.is_empty() => {
                        if text.starts_with('$') {
                            return Err(location(
                                28822,
                                format!(
                                    "includeArrayIndex option to $unwind stage should not be \
                                     prefixed with a '$': {text}"
                                ),
                            ));
                        }
                        index = Some(fields::field_path(text)?);
                    }
                    ("includeArrayIndex", other) => {
                        return Err(location(
                            28810,
                            format!(
                                "expected a non-empty string for the includeArrayIndex  option \
                                 to $unwind stage, got {}",
                                type_name(other)
                            ),
                        ));
                    }
                    _ => {
                        return Err(location(
                            28811,
                            format!("unrecognized option to $unwind stage: {key}"),
                        ));
                    }
                }
            }
        }
        other => {
            return Err(location(
                15981,
                format!(
                    "expected either a string or an object as specification for $unwind stage, \
                     got {}",
                    type_name(other)
                ),
            ));
        }
    }
    if path_text.is_empty() {
        return Err(location(28812, "no path specified to $unwind stage"));
    }
    let Some(path) = path_text.strip_prefix('$') else {
        return Err(location(
            28818,
            format!("path option to $unwind stage should be prefixed with a '$': {path_text}"),
        ));
    };
    Ok(Unwind {
        path: fields::field_path(path)?,
        index,
        preserve,
    })
}

fn parse_sort_by_count(spec: RawBsonRef<'_>, vars: &Variables) -> Result<Vec<Stage>, QueryError> {
    match spec {
        RawBsonRef::Document(doc)
            if elements(doc)
                .next()
                .is_some_and(|(key, _)| key.starts_with('$')) => {}
        RawBsonRef::Document(_) => {
            return Err(location(
                40147,
                "the sortByCount field must be defined as a $-prefixed path or an expression \
                 inside an object",
            ));
        }
        RawBsonRef::String(text) if text.starts_with('$') => {}
        RawBsonRef::String(_) => {
            return Err(location(
                40148,
                "the sortByCount field must be defined as a $-prefixed path or an expression \
                 inside an object",
            ));
        }
        _ => {
            return Err(location(
                40149,
                "the sortByCount field must be specified as a string or as an object",
            ));
        }
    }
    let count_descending = bson::rawdoc! {"count": -1};
    Ok(vec![
        Stage::Group(Box::new(Group::count_by(Expression::parse_with(
            spec, vars,
        )?))),
        Stage::Sort {
            spec: SortSpec::parse(&count_descending)?,
            bound: None,
        },
    ])
}

fn parse_facet(spec: RawBsonRef<'_>, vars: &Variables) -> Result<Stage, QueryError> {
    let facets = match spec {
        RawBsonRef::Document(doc) if !doc.is_empty() => doc,
        _ => {
            return Err(location(
                40169,
                "the $facet specification must be a non-empty object",
            ));
        }
    };
    let mut out = Vec::new();
    for (name, value) in elements(facets) {
        validate_field_name(name)?;
        let RawBsonRef::Array(stages) = value else {
            return Err(location(
                40170,
                format!(
                    "arguments to $facet must be arrays, {name} is type {}",
                    type_name(value)
                ),
            ));
        };
        out.push((name.to_owned(), Pipeline::parse_facet(name, stages, vars)?));
    }
    Ok(Stage::Facet(out))
}

impl Stage {
    /// Applies a per-document stage: the output document, or `None` when
    /// the document is dropped.
    pub(crate) fn apply_one(
        &self,
        doc: RawDocumentBuf,
    ) -> Result<Option<RawDocumentBuf>, QueryError> {
        match self {
            Stage::Match(filter) => Ok(filter.try_matches(&doc)?.then_some(doc)),
            Stage::Project(projection) => projection.apply(&doc, None).map(Some),
            Stage::AddFields(fields) => add_fields(fields, &doc).map(Some),
            Stage::ReplaceRoot(expression, kind) => replace_root(expression, *kind, &doc).map(Some),
            Stage::Redact(redact) => redact.apply(doc),
            _ => unreachable!("apply_one is called for per-document stages only"),
        }
    }
}

pub(super) fn to_tree(doc: &RawDocument) -> Result<Document, QueryError> {
    Document::try_from(doc).map_err(|e| QueryError::bad_value(e.to_string()))
}

pub(crate) fn to_raw(doc: &Document) -> Result<RawDocumentBuf, QueryError> {
    RawDocumentBuf::try_from(doc).map_err(|e| QueryError::bad_value(e.to_string()))
}

fn add_fields(
    fields: &[(Vec<String>, Expression)],
    doc: &RawDocument,
) -> Result<RawDocumentBuf, QueryError> {
    let mut values = Vec::with_capacity(fields.len());
    for (path, expression) in fields {
        values.push((path, expression.evaluate(doc)?));
    }
    let mut tree = to_tree(doc)?;
    for (path, value) in values {
        fields::add_field(&mut tree, path, &value);
    }
    to_raw(&tree)
}

fn replace_root(
    expression: &Expression,
    kind: ReplaceKind,
    doc: &RawDocument,
) -> Result<RawDocumentBuf, QueryError> {
    let value = expression.evaluate(doc)?;
    if let Some(Bson::Document(root)) = &value {
        return to_raw(root);
    }
    let what = match kind {
        ReplaceKind::ReplaceRoot => "'newRoot' expression ",
        ReplaceKind::ReplaceWith => "'replacement document'",
    };
    let shown = value
        .as_ref()
        .map_or_else(|| "MISSING".to_owned(), fields::show);
    Err(location(
        40228,
        format!(
            "{what} must evaluate to an object, but resulting value was: {shown}. Type of \
             resulting value: '{}'. Input document: {}",
            crate::expr::value_type_name(&value),
            fields::show_document(doc)
        ),
    ))
}

impl Unwind {
    /// The documents one input document unwinds to.
    pub(crate) fn apply(&self, doc: RawDocumentBuf) -> Result<Vec<RawDocumentBuf>, QueryError> {
        let items: Vec<Bson> = match fields::get_nested(&doc, &self.path) {
            Some(RawBsonRef::Array(array)) => {
                let mut items = Vec::new();
                for item in bson_canonical::compare::array_values(array) {
                    items.push(
                        Bson::try_from(item).map_err(|e| QueryError::bad_value(e.to_string()))?,
                    );
                }
                items
            }
            None | Some(RawBsonRef::Null | RawBsonRef::Undefined) => {
                return self.pass_through(doc, !self.preserve);
            }
            Some(_) => return self.pass_through(doc, false),
        };
        if items.is_empty() {
            if !self.preserve {
                return Ok(Vec::new());
            }
            // MongoDB removes the empty array from the preserved document.
            let mut tree = to_tree(&doc)?;
            fields::remove_nested(&mut tree, &self.path);
            if let Some(index) = &self.index {
                fields::set_nested(&mut tree, index, Bson::Null);
            }
            return Ok(vec![to_raw(&tree)?]);
        }
        let tree = to_tree(&doc)?;
        let mut out = Vec::with_capacity(items.len());
        for (position, item) in (0_i64..).zip(items) {
            let mut copy = tree.clone();
            fields::set_nested(&mut copy, &self.path, item);
            if let Some(index) = &self.index {
                fields::set_nested(&mut copy, index, Bson::Int64(position));
            }
            out.push(to_raw(&copy)?);
        }
        Ok(out)
    }

    /// A document whose path is not an array: dropped, or kept with a null index.
    fn pass_through(
        &self,
        doc: RawDocumentBuf,
        drop: bool,
    ) -> Result<Vec<RawDocumentBuf>, QueryError> {
        if drop {
            return Ok(Vec::new());
        }
        let Some(index) = &self.index else {
            return Ok(vec![doc]);
        };
        let mut tree = to_tree(&doc)?;
        fields::set_nested(&mut tree, index, Bson::Null);
        Ok(vec![to_raw(&tree)?])
    }
}
