//! getParameter and setParameter over one table of the server's parameters, answered as
//! mongod 7.0 answers: `getParameter: '*'` lists them all, `showDetails` adds
//! `settableAtRuntime`/`settableAtStartup`; setParameter replies `was` (the previous value),
//! refuses a startup-only parameter with 20 IllegalOperation, an unknown one or none with
//! 72 InvalidOptions, and a value of the wrong type with 2 BadValue.
//!
//! A settable parameter is either consumed (`cursorTimeoutMillis`: the cursor registry's
//! idle timeout; `internalQueryMaxBlockingSortMemoryUsageBytes`: blocking sorts' memory
//! limit; `internalDocumentSourceGroupMaxMemoryBytes`: a `$group`'s;
//! `scramIterationCount`/`scramSHA256IterationCount`: new credentials') or recorded and reported (`logLevel`, `quiet`,
//! `transactionLifetimeLimitSeconds`: the server's log verbosity is its own flag, and
//! transactions are refused on a standalone).

use super::Request;
use crate::engine::Engine;
use crate::error::{Error, ErrorCode};
use crate::version;
use bson::raw::RawBsonRef;
use bson::{Bson, Document, doc};

/// How a runtime-settable parameter's value is checked.
#[derive(Clone, Copy)]
enum Kind {
    Int,
    Long,
    Bool,
}

struct Parameter {
    name: &'static str,
    /// `None`: startup-only.
    settable: Option<Kind>,
    value: fn(&Engine) -> Bson,
}

const fn startup(name: &'static str, value: fn(&Engine) -> Bson) -> Parameter {
    Parameter {
        name,
        settable: None,
        value,
    }
}

const fn runtime(name: &'static str, kind: Kind, value: fn(&Engine) -> Bson) -> Parameter {
    Parameter {
        name,
        settable: Some(kind),
        value,
    }
}

fn recorded(engine: &Engine, name: &str, default: Bson) -> Bson {
    engine
        .parameters
        .lock()
        .get(name)
        .cloned()
        .unwrap_or(default)
}

fn ttl_sleep_secs(engine: &Engine) -> Bson {
    let secs = engine.ttl.interval().map_or(0, |interval| {
        i32::try_from(interval.as_secs_f64().ceil() as u64).unwrap_or(i32::MAX)
    });
    Bson::Int32(secs)
}

fn log_level(engine: &Engine) -> Bson {
    let started = engine
        .startup
        .parsed
        .get_document("systemLog")
        .ok()
        .and_then(|log| log.get_i32("verbosity").ok())
        .unwrap_or(0);
    recorded(engine, "logLevel", Bson::Int32(started))
}

/// Every parameter, in name order (as mongod lists them).
const PARAMETERS: &[Parameter] = &[
    startup("authenticationMechanisms", |_| {
        Bson::from(vec!["SCRAM-SHA-1", "SCRAM-SHA-256"])
    }),
    runtime("cursorTimeoutMillis", Kind::Long, |engine| {
        Bson::Int64(engine.cursors.idle_timeout_ms())
    }),
    startup("enableTestCommands", |engine| {
        Bson::Boolean(engine.test_commands)
    }),
    startup("featureCompatibilityVersion", |_| {
        Bson::Document(doc! { "version": version::FEATURE_COMPATIBILITY_VERSION })
    }),
    startup("localLogicalSessionTimeoutMinutes", |_| {
        Bson::Int32(crate::limits::LOGICAL_SESSION_TIMEOUT_MINUTES)
    }),
    // Consumed: blocking sorts' memory limit (`crate::spill`).
    runtime(
        "internalQueryMaxBlockingSortMemoryUsageBytes",
        Kind::Int,
        |engine| Bson::Int32(i32::try_from(engine.sorting.bytes_max()).unwrap_or(i32::MAX)),
    ),
    // Consumed: a `$group`'s memory limit (`query::GroupMemory`).
    runtime(
        "internalDocumentSourceGroupMaxMemoryBytes",
        Kind::Long,
        |engine| Bson::Int64(i64::try_from(engine.sorting.group_bytes_max()).unwrap_or(i64::MAX)),
    ),
    runtime("logLevel", Kind::Int, log_level),
    startup("maxBSONObjectSize", |_| {
        Bson::Int32(i32::try_from(crate::limits::BSON_OBJECT_SIZE_MAX).unwrap_or(i32::MAX))
    }),
    runtime("quiet", Kind::Bool, |engine| {
        recorded(engine, "quiet", Bson::Boolean(false))
    }),
    // The iteration counts of new SCRAM credentials (`auth::users::iteration_count`).
    runtime("scramIterationCount", Kind::Int, |engine| {
        recorded(engine, "scramIterationCount", Bson::Int32(10_000))
    }),
    runtime("scramSHA256IterationCount", Kind::Int, |engine| {
        recorded(engine, "scramSHA256IterationCount", Bson::Int32(15_000))
    }),
    runtime("transactionLifetimeLimitSeconds", Kind::Int, |engine| {
        recorded(engine, "transactionLifetimeLimitSeconds", Bson::Int32(60))
    }),
    // `--ttl-sweep-secs` (0: the monitor is off, and ttlMonitorEnabled false).
    startup("ttlMonitorEnabled", |engine| {
        Bson::Boolean(engine.ttl.interval().is_some())
    }),
    startup("ttlMonitorSleepSecs", ttl_sleep_secs),
];

fn lookup(name: &str) -> Option<&'static Parameter> {
    PARAMETERS.iter().find(|parameter| parameter.name == name)
}

/// Fields of a getParameter/setParameter body that name no parameter.
fn is_option(key: &str) -> bool {
    key.starts_with('$') || super::args::GENERIC_ARGS.contains(&key) || key == "showDetails"
}

fn shown(engine: &Engine, parameter: &Parameter, details: bool) -> Bson {
    let value = (parameter.value)(engine);
    if !details {
        return value;
    }
    Bson::Document(doc! {
        "value": value,
        "settableAtRuntime": parameter.settable.is_some(),
        "settableAtStartup": true,
    })
}

/// getParameter: `{getParameter: 1, name: 1, ...}`, `{getParameter: '*'}`, or
/// `{getParameter: {showDetails: true, allParameters: true}, ...}`.
pub(super) fn get_parameter(engine: &Engine, request: &Request<'_>) -> Result<Document, Error> {
    let (everything, details) = match request.field("getParameter")? {
        Some(RawBsonRef::String("*")) => (true, false),
        Some(RawBsonRef::Document(options)) => (
            super::flag(options, "allParameters"),
            super::flag(options, "showDetails"),
        ),
        _ => (false, false),
    };
    let mut reply = Document::new();
    if everything {
        for parameter in PARAMETERS {
            reply.insert(parameter.name, shown(engine, parameter, details));
        }
        return Ok(reply);
    }
    for element in request.body.iter().skip(1) {
        let (key, _) = element.map_err(|e| Error::new(ErrorCode::InvalidBson, e.to_string()))?;
        if is_option(key.as_str()) {
            continue;
        }
        if let Some(parameter) = lookup(key.as_str()) {
            reply.insert(parameter.name, shown(engine, parameter, details));
        }
    }
    if reply.is_empty() {
        return Err(Error::new(
            ErrorCode::InvalidOptions,
            "no option found to get",
        ));
    }
    Ok(reply)
}

/// The value `raw` as parameter `name` of `kind` takes it, or mongod's BadValue.
fn checked(name: &str, kind: Kind, raw: RawBsonRef<'_>) -> Result<Bson, Error> {
    let number = match raw {
        RawBsonRef::Int32(n) => Some(i64::from(n)),
        RawBsonRef::Int64(n) => Some(n),
        RawBsonRef::Double(d) if d.fract() == 0.0 && d.abs() < 9.0e15 => Some(d as i64),
        _ => None,
    };
    let value = match (kind, raw, number) {
        (Kind::Bool, RawBsonRef::Boolean(b), _) => Some(Bson::Boolean(b)),
        (Kind::Bool, _, Some(n)) => Some(Bson::Boolean(n != 0)),
        (Kind::Int, _, Some(n)) => i32::try_from(n).ok().map(Bson::Int32),
        (Kind::Long, _, Some(n)) => Some(Bson::Int64(n)),
        _ => None,
    };
    let value = value.ok_or_else(|| {
        Error::new(
            ErrorCode::BadValue,
            format!("Invalid value for {name}: {raw:?}"),
        )
    })?;
    let bytes = match (name, &value) {
        ("internalQueryMaxBlockingSortMemoryUsageBytes", Bson::Int32(bytes)) => {
            Some(i64::from(*bytes))
        }
        ("internalDocumentSourceGroupMaxMemoryBytes", Bson::Int64(bytes)) => Some(*bytes),
        _ => None,
    };
    if let Some(bytes) = bytes
        && bytes < 0
    {
        return Err(Error::new(
            ErrorCode::BadValue,
            format!(
                "Invalid value for parameter {name}: {bytes} is not greater than or equal to 0"
            ),
        ));
    }
    // mongod's floor for SCRAM iteration counts.
    let scram = matches!(name, "scramIterationCount" | "scramSHA256IterationCount");
    if let (true, Bson::Int32(count)) = (scram, &value)
        && *count < 5000
    {
        return Err(Error::new(
            ErrorCode::BadValue,
            format!(
                "Invalid value for parameter {name}: {count} is not greater than or equal to 5000"
            ),
        ));
    }
    Ok(value)
}

/// setParameter: `{setParameter: 1, name: value, ...}`, every name checked before any is
/// set; the reply's `was` is the previous value (of the last one named, as mongod's).
pub(super) fn set_parameter(engine: &Engine, request: &Request<'_>) -> Result<Document, Error> {
    let mut changes = Vec::new();
    for element in request.body.iter().skip(1) {
        let (key, value) =
            element.map_err(|e| Error::new(ErrorCode::InvalidBson, e.to_string()))?;
        let key = key.as_str();
        if is_option(key) {
            continue;
        }
        let Some(parameter) = lookup(key) else {
            let message = format!(
                "attempted to set unrecognized parameter [{key}], use help:true to see options "
            );
            return Err(Error::new(ErrorCode::InvalidOptions, message));
        };
        let Some(kind) = parameter.settable else {
            let message = format!("not allowed to change [{key}] at runtime");
            return Err(Error::new(ErrorCode::IllegalOperation, message));
        };
        changes.push((parameter, checked(key, kind, value)?));
    }
    if changes.is_empty() {
        return Err(Error::new(
            ErrorCode::InvalidOptions,
            "no option found to set, use help:true to see options ",
        ));
    }
    let mut was = Bson::Null;
    for (parameter, value) in changes {
        was = (parameter.value)(engine);
        match (parameter.name, &value) {
            ("cursorTimeoutMillis", Bson::Int64(ms)) => engine.cursors.set_idle_timeout_ms(*ms),
            ("internalQueryMaxBlockingSortMemoryUsageBytes", Bson::Int32(bytes)) => {
                engine
                    .sorting
                    .set_bytes_max(usize::try_from(*bytes).unwrap_or(0));
            }
            ("internalDocumentSourceGroupMaxMemoryBytes", Bson::Int64(bytes)) => {
                engine
                    .sorting
                    .set_group_bytes_max(usize::try_from(*bytes).unwrap_or(0));
            }
            _ => {
                engine.parameters.lock().insert(parameter.name, value);
            }
        }
    }
    Ok(doc! { "was": was })
}
