//! Fail points (issue 43; test commands): `configureFailPoint` with mongod's
//! `failCommand`, which the drivers' specification tests use to make the server fail,
//! stall or drop a connection on chosen commands.
//!
//! Only with `--setParameter enableTestCommands=1` (getParameter reports it); without it
//! `configureFailPoint` is 59 CommandNotFound, as on a mongod started without test
//! commands.
//!
//! `failCommand`'s `data`: `failCommands` (the command names it applies to, required),
//! `errorCode` (the command fails with it, `errmsg` "Failing command via 'failCommand'
//! failpoint"), `errorLabels` (the labels of that error, instead of the ones the error
//! would carry), `closeConnection` (the connection is closed without a reply),
//! `blockConnection` + `blockTimeMS` (the command waits that long first),
//! `writeConcernError` (the command runs and its reply carries this error), `appName`
//! (only connections whose handshake named this application), `namespace` (only
//! commands on that namespace). Modes: `alwaysOn`, `off`, `{times: n}` (the next n
//! matching commands), `{skip: n}` (all but the next n), `{activationProbability: p}`.
//!
//! `onPrimaryTransactionalWrite` (retryable writes): `data.closeConnection` (default
//! true: the write commits, then the connection closes without its reply, as if the
//! server died between apply and reply) and `data.failBeforeCommitExceptionCode` (the
//! write fails with that code and nothing commits), in the same modes.
//!
//! Invariants:
//! - A command the fail point does not name, or that `configureFailPoint` itself is,
//!   runs as if it were off: the fail point is checked after the command is found and
//!   authorized, before its session checks and handler.
//! - `times` counts only commands it acted on; `skip` counts only the commands it let
//!   through; both only commands that match `failCommands`, `appName` and `namespace`.
//! - The reply of `configureFailPoint` is `{count}`: how often the point had acted
//!   before this call, as mongod's `timesEntered`.

use crate::error::{Error, ErrorCode};
use bson::raw::RawBsonRef;
use bson::{Bson, Document, RawDocument};
use parking_lot::Mutex;

/// The fail points an engine has (only `failCommand`).
#[derive(Debug, Default)]
pub(crate) struct FailPoints {
    fail_command: Mutex<State>,
    transactional_write: Mutex<TransactionalState>,
}

/// `onPrimaryTransactionalWrite`'s state.
#[derive(Debug, Default)]
struct TransactionalState {
    mode: Mode,
    action: TransactionalAction,
    entered: u64,
}

/// What `onPrimaryTransactionalWrite` does to one retryable write.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub(crate) struct TransactionalAction {
    /// Commit, then close the connection without the reply.
    pub(crate) close_connection: bool,
    /// Fail with this code before anything commits.
    pub(crate) fail_before_commit: Option<i32>,
}

#[derive(Debug, Default)]
struct State {
    mode: Mode,
    data: Data,
    /// Times the point acted (`configureFailPoint`'s `count`).
    entered: u64,
}

#[derive(Debug, Default, Clone, Copy, PartialEq)]
enum Mode {
    #[default]
    Off,
    AlwaysOn,
    Times(u64),
    Skip(u64),
    Probability(f64),
}

#[derive(Debug, Default, Clone)]
struct Data {
    commands: Vec<String>,
    error_code: Option<i32>,
    error_labels: Option<Vec<String>>,
    close_connection: bool,
    block_ms: Option<u64>,
    write_concern_error: Option<Document>,
    app_name: Option<String>,
    namespace: Option<String>,
}

/// What the fail point does to one command.
#[derive(Debug, Default, Clone, PartialEq)]
pub(crate) struct Action {
    /// Wait this long before anything else.
    pub(crate) block_ms: Option<u64>,
    /// Close the connection without a reply.
    pub(crate) close_connection: bool,
    /// Fail with this error (code, labels).
    pub(crate) error: Option<(i32, Option<Vec<String>>)>,
    /// Run, then add this `writeConcernError` to the reply (with `errorLabels`, the
    /// reply's labels).
    pub(crate) write_concern_error: Option<Document>,
    /// `errorLabels`, when given.
    pub(crate) error_labels: Option<Vec<String>>,
}

/// The label of the reply a server does not send but closes the connection for
/// (`closeConnection`); the embedded client sees it as an error with this label.
pub const CLOSE_LABEL: &str = "MultiforaDBCloseConnection";

/// The error standing for `closeConnection`.
pub(crate) fn close() -> Error {
    let mut info = Document::new();
    info.insert("errorLabels", vec![Bson::String(CLOSE_LABEL.to_owned())]);
    Error::WithInfo {
        code: ErrorCode::Other(9001, "SocketException"),
        message: "connection closed by the 'failCommand' failpoint".to_owned(),
        info: Box::new(info),
    }
}

/// The message of an error the fail point causes, as mongod words it.
pub(crate) const MESSAGE: &str = "Failing command via 'failCommand' failpoint";

impl FailPoints {
    /// `configureFailPoint: name, mode, data`: sets the point and returns how often it
    /// had acted.
    pub(crate) fn configure(&self, body: &RawDocument) -> Result<i64, Error> {
        let name = body
            .get_str("configureFailPoint")
            .map_err(|_| bad_value("configureFailPoint must be a string naming a fail point"))?;
        if name == "onPrimaryTransactionalWrite" {
            return self.configure_transactional(body);
        }
        if name != "failCommand" {
            let code = ErrorCode::Other(266, "FailPointSetFailed");
            return Err(Error::new(code, format!("{name} not found")));
        }
        let mode = parse_mode(body.get("mode").ok().flatten())?;
        let data = match body.get("data").ok().flatten() {
            Some(RawBsonRef::Document(data)) => parse_data(data)?,
            None => Data::default(),
            Some(_) => return Err(bad_value("the 'data' option must be a document")),
        };
        if mode != Mode::Off && data.commands.is_empty() {
            return Err(bad_value(
                "'failCommands' must be a non-empty array of strings",
            ));
        }
        let mut state = self.fail_command.lock();
        let count = state.entered;
        *state = State {
            mode,
            data,
            entered: 0,
        };
        Ok(i64::try_from(count).unwrap_or(i64::MAX))
    }

    fn configure_transactional(&self, body: &RawDocument) -> Result<i64, Error> {
        let mode = parse_mode(body.get("mode").ok().flatten())?;
        let mut action = TransactionalAction {
            close_connection: true,
            fail_before_commit: None,
        };
        match body.get("data").ok().flatten() {
            Some(RawBsonRef::Document(data)) => {
                for field in data {
                    let (key, value) =
                        field.map_err(|e| Error::new(ErrorCode::InvalidBson, e.to_string()))?;
                    match (key.as_str(), value) {
                        ("closeConnection", RawBsonRef::Boolean(close)) => {
                            action.close_connection = close;
                        }
                        ("failBeforeCommitExceptionCode", RawBsonRef::Int32(code)) => {
                            action.fail_before_commit = Some(code);
                        }
                        (other, _) => {
                            return Err(bad_value(&format!(
                                "onPrimaryTransactionalWrite: unknown or mistyped option '{other}'"
                            )));
                        }
                    }
                }
            }
            None => {}
            Some(_) => return Err(bad_value("the 'data' option must be a document")),
        }
        let mut state = self.transactional_write.lock();
        let count = state.entered;
        *state = TransactionalState {
            mode,
            action,
            entered: 0,
        };
        Ok(i64::try_from(count).unwrap_or(i64::MAX))
    }

    /// What `onPrimaryTransactionalWrite` does to the retryable write committing now;
    /// `None`: nothing.
    pub(crate) fn transactional_write(&self, random: f64) -> Option<TransactionalAction> {
        let mut state = self.transactional_write.lock();
        if !advance(&mut state.mode, random) {
            return None;
        }
        state.entered += 1;
        Some(state.action)
    }

    /// Whether the point is set at all (a cheap check before gathering what
    /// [`FailPoints::check`] matches on).
    pub(crate) fn is_on(&self) -> bool {
        self.fail_command.lock().mode != Mode::Off
    }

    /// What the point does to command `name` on namespace `ns` from a connection whose
    /// handshake named `app_name`; `None`: the command runs as usual. `random` is a
    /// number in `[0, 1)` for `activationProbability`.
    pub(crate) fn check(
        &self,
        name: &str,
        ns: &str,
        app_name: Option<&str>,
        random: f64,
    ) -> Option<Action> {
        if name == "configureFailPoint" {
            return None;
        }
        let mut state = self.fail_command.lock();
        if state.mode == Mode::Off {
            return None;
        }
        let data = &state.data;
        let matches = data.commands.iter().any(|c| c == name)
            && data
                .app_name
                .as_deref()
                .is_none_or(|app| Some(app) == app_name)
            && data.namespace.as_deref().is_none_or(|wanted| wanted == ns);
        if !matches {
            return None;
        }
        if !advance(&mut state.mode, random) {
            return None;
        }
        state.entered += 1;
        let data = &state.data;
        Some(Action {
            block_ms: data.block_ms,
            close_connection: data.close_connection,
            error: data
                .error_code
                .map(|code| (code, data.error_labels.clone())),
            write_concern_error: data.write_concern_error.clone(),
            error_labels: data.error_labels.clone(),
        })
    }
}

/// Whether a point in `mode` acts on the matching event now, counting it down.
fn advance(mode: &mut Mode, random: f64) -> bool {
    let acts = match mode {
        Mode::Off => false,
        Mode::AlwaysOn => true,
        Mode::Times(n) => {
            *n -= 1;
            true
        }
        Mode::Skip(n) if *n > 0 => {
            *n -= 1;
            false
        }
        Mode::Skip(_) => true,
        Mode::Probability(p) => random < *p,
    };
    if *mode == Mode::Times(0) {
        *mode = Mode::Off;
    }
    acts
}

fn bad_value(message: &str) -> Error {
    Error::new(ErrorCode::BadValue, message)
}

fn parse_mode(mode: Option<RawBsonRef<'_>>) -> Result<Mode, Error> {
    let count = |value: RawBsonRef<'_>, what: &str| -> Result<u64, Error> {
        let n = match value {
            RawBsonRef::Int32(n) => i64::from(n),
            RawBsonRef::Int64(n) => n,
            RawBsonRef::Double(n) if n.fract() == 0.0 => n as i64,
            _ => return Err(bad_value(&format!("'{what}' must be a number"))),
        };
        u64::try_from(n).map_err(|_| bad_value(&format!("'{what}' must be non-negative")))
    };
    match mode {
        Some(RawBsonRef::String("alwaysOn")) => Ok(Mode::AlwaysOn),
        Some(RawBsonRef::String("off")) => Ok(Mode::Off),
        Some(RawBsonRef::Document(mode)) => {
            if let Ok(Some(times)) = mode.get("times") {
                let n = count(times, "times")?;
                return Ok(if n == 0 { Mode::Off } else { Mode::Times(n) });
            }
            if let Ok(Some(skip)) = mode.get("skip") {
                return Ok(Mode::Skip(count(skip, "skip")?));
            }
            if let Ok(Some(p)) = mode.get("activationProbability") {
                let p = match p {
                    RawBsonRef::Double(p) => p,
                    RawBsonRef::Int32(p) => f64::from(p),
                    RawBsonRef::Int64(p) => p as f64,
                    _ => return Err(bad_value("'activationProbability' must be a number")),
                };
                if !(0.0..=1.0).contains(&p) {
                    return Err(bad_value("'activationProbability' must be between 0 and 1"));
                }
                return Ok(Mode::Probability(p));
            }
            Err(bad_value(
                "'mode' must be one of 'off', 'alwaysOn', 'times', 'skip' or \
                 'activationProbability'",
            ))
        }
        _ => Err(bad_value(
            "'mode' must be one of 'off', 'alwaysOn', 'times', 'skip' or \
             'activationProbability'",
        )),
    }
}

fn parse_data(data: &RawDocument) -> Result<Data, Error> {
    let strings = |value: RawBsonRef<'_>, what: &str| -> Result<Vec<String>, Error> {
        let RawBsonRef::Array(list) = value else {
            return Err(bad_value(&format!("'{what}' must be an array of strings")));
        };
        list.into_iter()
            .map(|item| match item {
                Ok(RawBsonRef::String(s)) => Ok(s.to_owned()),
                _ => Err(bad_value(&format!("'{what}' must be an array of strings"))),
            })
            .collect()
    };
    let mut out = Data::default();
    for field in data {
        let (key, value) = field.map_err(|e| Error::new(ErrorCode::InvalidBson, e.to_string()))?;
        match key.as_str() {
            "failCommands" => out.commands = strings(value, "failCommands")?,
            "errorCode" => {
                out.error_code = Some(match value {
                    RawBsonRef::Int32(n) => n,
                    RawBsonRef::Int64(n) => i32::try_from(n).map_err(|_| bad_value("errorCode"))?,
                    RawBsonRef::Double(n) if n.fract() == 0.0 => n as i32,
                    _ => return Err(bad_value("'errorCode' must be a number")),
                });
            }
            "errorLabels" => out.error_labels = Some(strings(value, "errorLabels")?),
            "closeConnection" => out.close_connection = truthy(value),
            "blockConnection" => {
                if !truthy(value) {
                    out.block_ms = None;
                } else if out.block_ms.is_none() {
                    out.block_ms = Some(0);
                }
            }
            "blockTimeMS" => {
                let ms = match value {
                    RawBsonRef::Int32(n) => i64::from(n),
                    RawBsonRef::Int64(n) => n,
                    RawBsonRef::Double(n) => n as i64,
                    _ => return Err(bad_value("'blockTimeMS' must be a number")),
                };
                let ms = u64::try_from(ms).map_err(|_| bad_value("'blockTimeMS' must be >= 0"))?;
                if data
                    .get("blockConnection")
                    .ok()
                    .flatten()
                    .is_some_and(truthy)
                {
                    out.block_ms = Some(ms);
                }
            }
            "writeConcernError" => {
                let RawBsonRef::Document(error) = value else {
                    return Err(bad_value("'writeConcernError' must be a document"));
                };
                let error = Document::try_from(error)
                    .map_err(|e| Error::new(ErrorCode::InvalidBson, e.to_string()))?;
                out.write_concern_error = Some(error);
            }
            "appName" => match value {
                RawBsonRef::String(name) => out.app_name = Some(name.to_owned()),
                _ => return Err(bad_value("'appName' must be a string")),
            },
            "namespace" => match value {
                RawBsonRef::String(ns) => out.namespace = Some(ns.to_owned()),
                _ => return Err(bad_value("'namespace' must be a string")),
            },
            // Accepted and without effect here: every command comes from a client, and
            // the server has no other threads that run commands.
            "failInternalCommands" | "threadName" | "errorExtraInfo" => {}
            other => {
                return Err(bad_value(&format!(
                    "unknown 'failCommand' option '{other}'"
                )));
            }
        }
    }
    Ok(out)
}

fn truthy(value: RawBsonRef<'_>) -> bool {
    match value {
        RawBsonRef::Boolean(b) => b,
        RawBsonRef::Int32(n) => n != 0,
        RawBsonRef::Int64(n) => n != 0,
        RawBsonRef::Double(n) => n != 0.0,
        _ => false,
    }
}

/// The error a fail point's `errorCode` makes: mongod's message, the code, and the
/// labels it was given (none when given an empty list).
pub(crate) fn error(code: i32, labels: Option<Vec<String>>) -> Error {
    let mut info = Document::new();
    if let Some(labels) = labels {
        info.insert(
            "errorLabels",
            Bson::Array(labels.into_iter().map(Bson::String).collect()),
        );
    }
    let code = match crate::error::code_name(code) {
        std::borrow::Cow::Borrowed(name) => ErrorCode::Other(code, name),
        std::borrow::Cow::Owned(_) => ErrorCode::Location(code),
    };
    if info.is_empty() {
        return Error::new(code, MESSAGE);
    }
    Error::WithInfo {
        code,
        message: MESSAGE.to_owned(),
        info: Box::new(info),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use bson::rawdoc;

    fn configure(points: &FailPoints, body: bson::RawDocumentBuf) -> Result<i64, Error> {
        points.configure(&body)
    }

    #[test]
    fn times_acts_on_the_next_matching_commands_then_turns_off() {
        let points = FailPoints::default();
        let body = rawdoc! {
            "configureFailPoint": "failCommand", "mode": { "times": 2 },
            "data": { "failCommands": ["insert"], "errorCode": 91 },
        };
        assert_eq!(configure(&points, body).ok(), Some(0));
        assert_eq!(points.check("find", "db.c", None, 0.0), None);
        let acted = points.check("insert", "db.c", None, 0.0).expect("acts");
        assert_eq!(acted.error, Some((91, None)));
        assert!(points.check("insert", "db.c", None, 0.0).is_some());
        assert_eq!(
            points.check("insert", "db.c", None, 0.0),
            None,
            "off after two"
        );
        let off = rawdoc! { "configureFailPoint": "failCommand", "mode": "off" };
        assert_eq!(
            configure(&points, off).ok(),
            Some(2),
            "count of times it acted"
        );
    }

    #[test]
    fn skip_app_name_and_namespace_narrow_what_it_acts_on() {
        let points = FailPoints::default();
        let body = rawdoc! {
            "configureFailPoint": "failCommand", "mode": { "skip": 1 },
            "data": {
                "failCommands": ["find"], "closeConnection": true, "appName": "app",
                "namespace": "db.c",
            },
        };
        configure(&points, body).expect("configured");
        assert_eq!(points.check("find", "db.c", Some("other"), 0.0), None);
        assert_eq!(points.check("find", "db.d", Some("app"), 0.0), None);
        assert_eq!(
            points.check("find", "db.c", Some("app"), 0.0),
            None,
            "skipped"
        );
        let acted = points
            .check("find", "db.c", Some("app"), 0.0)
            .expect("acts");
        assert!(acted.close_connection);
        assert!(points.check("find", "db.c", Some("app"), 0.0).is_some());
    }

    #[test]
    fn blocking_and_write_concern_errors_are_carried_and_bad_input_is_refused() {
        let points = FailPoints::default();
        let body = rawdoc! {
            "configureFailPoint": "failCommand", "mode": "alwaysOn",
            "data": {
                "failCommands": ["ping"], "blockConnection": true, "blockTimeMS": 50,
                "writeConcernError": { "code": 91, "errmsg": "Replication is being shut down" },
            },
        };
        configure(&points, body).expect("configured");
        let acted = points.check("ping", "admin.$cmd", None, 0.0).expect("acts");
        assert_eq!(acted.block_ms, Some(50));
        assert_eq!(
            acted
                .write_concern_error
                .and_then(|e| e.get_i32("code").ok()),
            Some(91)
        );
        let unknown = rawdoc! { "configureFailPoint": "noSuchPoint", "mode": "alwaysOn" };
        assert!(configure(&points, unknown).is_err());
        let bad_mode = rawdoc! { "configureFailPoint": "failCommand", "mode": "sometimes" };
        assert_eq!(
            configure(&points, bad_mode).err().map(|e| e.code()),
            Some(ErrorCode::BadValue)
        );
        let no_commands =
            rawdoc! { "configureFailPoint": "failCommand", "mode": "alwaysOn", "data": {} };
        assert!(configure(&points, no_commands).is_err());
        let probability = rawdoc! {
            "configureFailPoint": "failCommand", "mode": { "activationProbability": 0.5 },
            "data": { "failCommands": ["ping"], "errorCode": 2 },
        };
        configure(&points, probability).expect("configured");
        assert!(points.check("ping", "admin.$cmd", None, 0.25).is_some());
        assert!(points.check("ping", "admin.$cmd", None, 0.75).is_none());
    }

    #[test]
    fn its_error_carries_the_given_code_message_and_labels() {
        let reply = error(10107, Some(vec!["RetryableWriteError".into()])).to_reply();
        assert_eq!(reply.get_i32("code").ok(), Some(10107));
        assert_eq!(reply.get_str("codeName").ok(), Some("NotWritablePrimary"));
        assert_eq!(reply.get_str("errmsg").ok(), Some(MESSAGE));
        let labels = reply.get_array("errorLabels").expect("labels");
        assert_eq!(labels.into_iter().count(), 1);
    }
}
