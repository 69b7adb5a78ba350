//! The stages at the ends of a pipeline that this crate parses but the engine carries
//! out: `$out` and `$merge` (the final stage: they write a collection) and
//! `$listLocalSessions` (a first stage fed from the server's session cache).
//!
//! Checks and codes follow MongoDB 7.0's parsers (`DocumentSourceOut`,
//! `DocumentSourceMerge`, their IDL specs); checks that need the catalog (the target
//! namespace, a unique index for `on`) are the engine's.

use crate::error::QueryError;
use crate::filter::types::{type_code, type_name};
use bson::RawBsonRef;
use bson::raw::{RawArrayBuf, RawDocument, RawDocumentBuf};
use bson_canonical::compare::{array_values, elements};

/// A collection a pipeline writes to. `db` is `None` for the command's own database.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Target {
    /// The database, when the stage names one.
    pub db: Option<String>,
    /// The collection.
    pub coll: String,
}

/// What `$merge` does with an output document whose `on` fields match a stored one.
#[derive(Debug, Clone, PartialEq)]
pub enum WhenMatched {
    /// Replace the stored document with the output document.
    Replace,
    /// Keep the stored document unchanged.
    KeepExisting,
    /// Set the output document's top-level fields in the stored one (the default).
    Merge,
    /// Fail the aggregation with a duplicate key error.
    Fail,
    /// Update the stored document with this update pipeline (`$$new` is the output
    /// document unless `let` says otherwise).
    Pipeline {
        /// The update pipeline as written.
        stages: RawArrayBuf,
        /// The stage's `let`, as written.
        variables: Option<RawDocumentBuf>,
    },
}

/// What `$merge` does with an output document that matches no stored one.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum WhenNotMatched {
    /// Insert it (the default).
    Insert,
    /// Drop it.
    Discard,
    /// Fail the aggregation (13113).
    Fail,
}

/// A parsed `$merge`.
#[derive(Debug, Clone, PartialEq)]
pub struct Merge {
    /// The collection merged into.
    pub into: Target,
    /// The fields that identify a document (`["_id"]` by default).
    pub on: Vec<String>,
    /// The action on a match.
    pub when_matched: WhenMatched,
    /// The action without a match.
    pub when_not_matched: WhenNotMatched,
}

/// The final stage of a pipeline that writes its output somewhere.
#[derive(Debug, Clone, PartialEq)]
pub enum Output {
    /// `$out`: replace the target collection's contents with the output.
    Out(Target),
    /// `$merge`: merge the output into the target collection.
    Merge(Box<Merge>),
}

impl Output {
    /// The stage's name as written in a pipeline.
    pub fn stage_name(&self) -> &'static str {
        match self {
            Output::Out(_) => "$out",
            Output::Merge(_) => "$merge",
        }
    }
}

/// A parsed `$listLocalSessions`: which users' sessions to list.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum LocalSessions {
    /// `{}`: the current user's sessions (every session, with authentication off).
    CurrentUser,
    /// `{allUsers: true}`.
    AllUsers,
    /// `{users: [{user, db}, ...]}`.
    Users(Vec<(String, String)>),
}

/// A parsed `$currentOp`: its options as given (without users or idle connections to
/// list, the engine lists the same operations whatever they say).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct CurrentOp {
    /// `allUsers`.
    pub all_users: bool,
    /// `idleConnections`.
    pub idle_connections: bool,
    /// `idleCursors`.
    pub idle_cursors: bool,
    /// `idleSessions` (true by default, as mongod's).
    pub idle_sessions: bool,
    /// `localOps`.
    pub local_ops: bool,
    /// `truncateOps`.
    pub truncate_ops: bool,
}

/// `{$currentOp: {allUsers, idleConnections, idleCursors, idleSessions, localOps,
/// truncateOps, backtrace}}`: every option a bool, as mongod's IDL parses them.
pub(crate) fn parse_current_op(spec: RawBsonRef<'_>) -> Result<CurrentOp, QueryError> {
    const STAGE: &str = "$currentOp";
    let RawBsonRef::Document(doc) = spec else {
        // 9 FailedToParse, as mongod's.
        return Err(location(
            9,
            format!(
                "$currentOp options must be specified in an object, but found: {}",
                kind(spec)
            ),
        ));
    };
    let mut out = CurrentOp {
        idle_sessions: true,
        ..CurrentOp::default()
    };
    for (key, value) in elements(doc) {
        let slot = match key {
            "allUsers" => &mut out.all_users,
            "idleConnections" => &mut out.idle_connections,
            "idleCursors" => &mut out.idle_cursors,
            "idleSessions" => &mut out.idle_sessions,
            "localOps" => &mut out.local_ops,
            "truncateOps" => &mut out.truncate_ops,
            "backtrace" | "targetAllNodes" => {
                if !matches!(value, RawBsonRef::Boolean(_)) {
                    return Err(wrong_type(STAGE, key, value, "bool"));
                }
                continue;
            }
            _ => return Err(unknown_field(STAGE, key)),
        };
        match value {
            RawBsonRef::Boolean(b) => *slot = b,
            other => return Err(wrong_type(STAGE, key, other, "bool")),
        }
    }
    Ok(out)
}

/// A parsed `$collStats`: which sections the engine reports.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct CollStats {
    /// `latencyStats`, and whether it asks for `histograms`.
    pub latency: Option<bool>,
    /// `storageStats`, and its `scale` (1 when absent).
    pub storage: Option<u64>,
    /// `count`.
    pub count: bool,
    /// `queryExecStats`.
    pub query_exec: bool,
}

/// `{$collStats: {latencyStats: {histograms}, storageStats: {scale, verbose, waitForLock,
/// numericOnly}, count: {}, queryExecStats: {}}}`, checked as mongod's IDL checks it.
pub(crate) fn parse_coll_stats(spec: RawBsonRef<'_>) -> Result<CollStats, QueryError> {
    const STAGE: &str = "$collStats";
    let RawBsonRef::Document(doc) = spec else {
        return Err(location(
            5_447_000,
            format!(
                "$collStats must take a nested object but found: {}",
                kind(spec)
            ),
        ));
    };
    let mut out = CollStats::default();
    for (key, value) in elements(doc) {
        let RawBsonRef::Document(section) = value else {
            return Err(wrong_type(STAGE, key, value, "object"));
        };
        let path = format!("{STAGE}.{key}");
        match key {
            "latencyStats" => {
                let mut histograms = false;
                for (name, value) in elements(section) {
                    match (name, value) {
                        ("histograms", RawBsonRef::Boolean(b)) => histograms = b,
                        ("histograms", other) => {
                            return Err(wrong_type(&path, name, other, "bool"));
                        }
                        _ => return Err(unknown_field(&path, name)),
                    }
                }
                out.latency = Some(histograms);
            }
            "storageStats" => {
                let mut scale = 1;
                for (name, value) in elements(section) {
                    match name {
                        "scale" => {
                            let number = match value {
                                RawBsonRef::Int32(n) => i64::from(n),
                                RawBsonRef::Int64(n) => n,
                                RawBsonRef::Double(n) if n.fract() == 0.0 => n as i64,
                                other => return Err(wrong_type(&path, name, other, "int")),
                            };
                            if number < 1 {
                                return Err(location(
                                    51024,
                                    format!(
                                        "BSON field 'scale' value must be >= 1, actual value \
                                         '{number}'"
                                    ),
                                ));
                            }
                            scale = number.unsigned_abs();
                        }
                        "verbose" | "waitForLock" | "numericOnly" => {
                            if !matches!(value, RawBsonRef::Boolean(_)) {
                                return Err(wrong_type(&path, name, value, "bool"));
                            }
                        }
                        _ => return Err(unknown_field(&path, name)),
                    }
                }
                out.storage = Some(scale);
            }
            "count" | "queryExecStats" => {
                if let Some((name, _)) = elements(section).next() {
                    return Err(unknown_field(&path, name));
                }
                if key == "count" {
                    out.count = true;
                } else {
                    out.query_exec = true;
                }
            }
            _ => return Err(unknown_field(STAGE, key)),
        }
    }
    Ok(out)
}

fn location(code: i32, message: impl Into<String>) -> QueryError {
    QueryError::location(code, message)
}

fn kind(value: RawBsonRef<'_>) -> &'static str {
    type_name(type_code(&value))
}

fn unknown_field(stage: &str, key: &str) -> QueryError {
    location(
        40415,
        format!("BSON field '{stage}.{key}' is an unknown field."),
    )
}

fn missing_field(stage: &str, key: &str) -> QueryError {
    location(
        40414,
        format!("BSON field '{stage}.{key}' is missing but a required field"),
    )
}

fn wrong_type(stage: &str, key: &str, value: RawBsonRef<'_>, expected: &str) -> QueryError {
    QueryError::TypeMismatch(format!(
        "BSON field '{stage}.{key}' is the wrong type '{}', expected type '{expected}'",
        kind(value)
    ))
}

/// `{$out: "coll"}` or `{$out: {db, coll}}`.
pub(crate) fn parse_out(spec: RawBsonRef<'_>) -> Result<Output, QueryError> {
    match spec {
        RawBsonRef::String(coll) => Ok(Output::Out(Target {
            db: None,
            coll: coll.to_owned(),
        })),
        RawBsonRef::Document(doc) => {
            let mut db = None;
            let mut coll = None;
            for (key, value) in elements(doc) {
                match (key, value) {
                    ("db", RawBsonRef::String(name)) => db = Some(name.to_owned()),
                    ("coll", RawBsonRef::String(name)) => coll = Some(name.to_owned()),
                    ("db" | "coll", other) => {
                        return Err(wrong_type("$out", key, other, "string"));
                    }
                    ("timeseries", _) => {
                        return Err(QueryError::NotImplemented(
                            "$out to a time-series collection is not supported".to_owned(),
                        ));
                    }
                    _ => return Err(unknown_field("$out", key)),
                }
            }
            let db = db.ok_or_else(|| missing_field("$out", "db"))?;
            let coll = coll.ok_or_else(|| missing_field("$out", "coll"))?;
            Ok(Output::Out(Target { db: Some(db), coll }))
        }
        other => Err(location(
            16990,
            format!(
                "$out only supports a string or object argument, but found {}",
                kind(other)
            ),
        )),
    }
}

/// `{$merge: "coll"}` or `{$merge: {into, on, let, whenMatched, whenNotMatched}}`.
pub(crate) fn parse_merge(spec: RawBsonRef<'_>) -> Result<Output, QueryError> {
    let doc = match spec {
        RawBsonRef::String(coll) => {
            return Ok(Output::Merge(Box::new(Merge {
                into: Target {
                    db: None,
                    coll: coll.to_owned(),
                },
                on: vec!["_id".to_owned()],
                when_matched: WhenMatched::Merge,
                when_not_matched: WhenNotMatched::Insert,
            })));
        }
        RawBsonRef::Document(doc) => doc,
        other => {
            return Err(location(
                51182,
                format!(
                    "$merge only supports a string or object argument, not {}",
                    kind(other)
                ),
            ));
        }
    };
    let mut into = None;
    let mut on = None;
    let mut variables = None;
    let mut when_matched = None;
    let mut when_not_matched = WhenNotMatched::Insert;
    for (key, value) in elements(doc) {
        match key {
            "into" => into = Some(parse_into(value)?),
            "on" => on = Some(parse_on(value)?),
            "let" => match value {
                RawBsonRef::Document(vars) => variables = Some(vars.to_owned()),
                RawBsonRef::Null => {}
                other => return Err(wrong_type("$merge", key, other, "object")),
            },
            "whenMatched" => when_matched = Some(parse_when_matched(value)?),
            "whenNotMatched" => when_not_matched = parse_when_not_matched(value)?,
            "targetCollectionVersion" => {}
            _ => return Err(unknown_field("$merge", key)),
        }
    }
    let into = into.ok_or_else(|| missing_field("$merge", "into"))?;
    let when_matched = match when_matched {
        Some(WhenMatched::Pipeline { stages, .. }) => WhenMatched::Pipeline { stages, variables },
        Some(mode) if variables.is_some() => {
            return Err(location(
                51199,
                format!(
                    "Cannot use 'let' variables with 'whenMatched: {}' mode",
                    mode_name(&mode)
                ),
            ));
        }
        Some(mode) => mode,
        None if variables.is_some() => {
            return Err(location(
                51199,
                "Cannot use 'let' variables with 'whenMatched: merge' mode",
            ));
        }
        None => WhenMatched::Merge,
    };
    Ok(Output::Merge(Box::new(Merge {
        into,
        on: on.unwrap_or_else(|| vec!["_id".to_owned()]),
        when_matched,
        when_not_matched,
    })))
}

fn mode_name(mode: &WhenMatched) -> &'static str {
    match mode {
        WhenMatched::Replace => "replace",
        WhenMatched::KeepExisting => "keepExisting",
        WhenMatched::Merge => "merge",
        WhenMatched::Fail => "fail",
        WhenMatched::Pipeline { .. } => "pipeline",
    }
}

fn parse_into(value: RawBsonRef<'_>) -> Result<Target, QueryError> {
    match value {
        RawBsonRef::String(coll) => Ok(Target {
            db: None,
            coll: coll.to_owned(),
        }),
        RawBsonRef::Document(doc) => {
            let mut db = None;
            let mut coll = None;
            for (key, item) in elements(doc) {
                match (key, item) {
                    ("db", RawBsonRef::String(name)) => db = Some(name.to_owned()),
                    ("coll", RawBsonRef::String(name)) => coll = Some(name.to_owned()),
                    ("db" | "coll", other) => {
                        return Err(wrong_type("into", key, other, "string"));
                    }
                    _ => return Err(unknown_field("into", key)),
                }
            }
            let coll = coll.ok_or_else(|| missing_field("into", "coll"))?;
            Ok(Target { db, coll })
        }
        other => Err(location(
            51178,
            format!(
                "$merge 'into' field  must be either a string or an object, but found {}",
                kind(other)
            ),
        )),
    }
}

fn parse_on(value: RawBsonRef<'_>) -> Result<Vec<String>, QueryError> {
    let names = match value {
        RawBsonRef::String(name) => vec![name.to_owned()],
        RawBsonRef::Array(items) => {
            let mut names = Vec::new();
            for item in array_values(items) {
                let RawBsonRef::String(name) = item else {
                    return Err(location(
                        51134,
                        format!(
                            "$merge 'on' array elements must be strings, but found {}",
                            kind(item)
                        ),
                    ));
                };
                names.push(name.to_owned());
            }
            if names.is_empty() {
                return Err(location(
                    51187,
                    "If explicitly specifying $merge 'on', must include at least one field",
                ));
            }
            names
        }
        other => {
            return Err(location(
                51186,
                format!(
                    "$merge 'on' field  must be either a string or an array of strings, but \
                     found {}",
                    kind(other)
                ),
            ));
        }
    };
    for name in &names {
        super::fields::field_path(name)?;
    }
    Ok(names)
}

fn parse_when_matched(value: RawBsonRef<'_>) -> Result<WhenMatched, QueryError> {
    match value {
        RawBsonRef::String("replace") => Ok(WhenMatched::Replace),
        RawBsonRef::String("keepExisting") => Ok(WhenMatched::KeepExisting),
        RawBsonRef::String("merge") => Ok(WhenMatched::Merge),
        RawBsonRef::String("fail") => Ok(WhenMatched::Fail),
        RawBsonRef::String(other) => Err(QueryError::BadValue(format!(
            "Enumeration value '{other}' for field 'whenMatched' is not a valid value."
        ))),
        RawBsonRef::Array(stages) => Ok(WhenMatched::Pipeline {
            stages: stages.to_owned(),
            variables: None,
        }),
        other => Err(location(
            51191,
            format!(
                "$merge 'whenMatched' field  must be either a string or an array, but found {}",
                kind(other)
            ),
        )),
    }
}

fn parse_when_not_matched(value: RawBsonRef<'_>) -> Result<WhenNotMatched, QueryError> {
    match value {
        RawBsonRef::String("insert") => Ok(WhenNotMatched::Insert),
        RawBsonRef::String("discard") => Ok(WhenNotMatched::Discard),
        RawBsonRef::String("fail") => Ok(WhenNotMatched::Fail),
        RawBsonRef::String(other) => Err(QueryError::BadValue(format!(
            "Enumeration value '{other}' for field 'whenNotMatched' is not a valid value."
        ))),
        other => Err(wrong_type("$merge", "whenNotMatched", other, "string")),
    }
}

/// `{$listLocalSessions: {}}` (or `$listSessions`, `STAGE`), `{allUsers: true}` or
/// `{users: [{user, db}]}`.
pub(crate) fn parse_local_sessions(
    stage: &str,
    spec: RawBsonRef<'_>,
) -> Result<LocalSessions, QueryError> {
    let RawBsonRef::Document(doc) = spec else {
        return Err(location(
            31102,
            format!(
                "{stage} options must be specified in an object, but found: {}",
                kind(spec)
            ),
        ));
    };
    let mut all_users = false;
    let mut users = None;
    for (key, value) in elements(doc) {
        match (key, value) {
            ("allUsers", RawBsonRef::Boolean(b)) => all_users = b,
            ("allUsers", other) => return Err(wrong_type(stage, key, other, "bool")),
            ("users", RawBsonRef::Array(items)) => users = Some(parse_users(stage, items)?),
            ("users", other) => return Err(wrong_type(stage, key, other, "array")),
            ("$_internalPredicate", _) => {}
            _ => return Err(unknown_field(stage, key)),
        }
    }
    match (all_users, users) {
        (true, Some(_)) => Err(location(
            31113,
            format!("{stage} may not specify allUsers and users together"),
        )),
        (true, None) => Ok(LocalSessions::AllUsers),
        (false, Some(users)) => Ok(LocalSessions::Users(users)),
        (false, None) => Ok(LocalSessions::CurrentUser),
    }
}

fn parse_users(stage: &str, items: &bson::RawArray) -> Result<Vec<(String, String)>, QueryError> {
    let mut users = Vec::new();
    for item in array_values(items) {
        let RawBsonRef::Document(user) = item else {
            return Err(wrong_type(stage, "users", item, "object"));
        };
        users.push((text_field(user, "user")?, text_field(user, "db")?));
    }
    Ok(users)
}

fn text_field(doc: &RawDocument, key: &str) -> Result<String, QueryError> {
    match doc.get(key) {
        Ok(Some(RawBsonRef::String(text))) => Ok(text.to_owned()),
        Ok(Some(other)) => Err(wrong_type("users", key, other, "string")),
        _ => Err(missing_field("users", key)),
    }
}
