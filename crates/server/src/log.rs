//! The server's log on stderr: by default one JSON object a line in mongod's structured
//! shape (`{"t":{"$date":..},"s","c","id","ctx","msg","attr"}`), with mongod's component,
//! message id and context where mongod has a counterpart of the line (`-` and id 0 where it
//! has none); `--logFormat plain` prints `<date> <LEVEL> <COMPONENT> [<ctx>] <msg> <attr>`
//! instead. Every printed line is also recorded, as JSON, in the engine's
//! [`engine::RecentLog`] for `getLog: 'global'`.
//!
//! Invariants:
//! - A line is formatted once, by [`engine::RecentLog::format`]: in JSON format the text
//!   printed is the text `getLog` returns.
//! - A line is printed with a single write (one `eprintln!`), so lines from several threads
//!   never interleave within a line; the server's own lines are recorded and printed under
//!   one lock, so they print in the order `getLog` holds them.
//! - Nothing is printed below the level set by `--log-level` (and such lines are not
//!   recorded either, as mongod's RamLog holds only what passes its verbosity).

use crate::config::LogLevel;
use clap::ValueEnum;
use engine::LogLine;
use std::sync::atomic::{AtomicU8, Ordering};
use std::sync::{Arc, Mutex, PoisonError, RwLock};
use std::time::{SystemTime, UNIX_EPOCH};

/// How log lines are written on stderr (`--logFormat`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
#[repr(u8)]
pub enum LogFormat {
    /// mongod's structured JSON, one object a line (the default, as mongod 4.4 and later).
    Json = 0,
    /// Human-readable text: date, level, component, context, message, attributes.
    Plain = 1,
}

impl LogFormat {
    /// The flag's spelling (what getCmdLineOpts reports).
    #[must_use]
    pub fn name(self) -> &'static str {
        match self {
            LogFormat::Json => "json",
            LogFormat::Plain => "plain",
        }
    }
}

/// Held while a line is recorded and printed, so lines print in the order `getLog` holds.
static WRITING: Mutex<()> = Mutex::new(());

static LEVEL: AtomicU8 = AtomicU8::new(LogLevel::Info as u8);
static FORMAT: AtomicU8 = AtomicU8::new(LogFormat::Json as u8);

/// Where printed lines are also recorded (the last server bound in this process).
static RECENT: RwLock<Option<Arc<engine::RecentLog>>> = RwLock::new(None);

/// Records every printed line in `recent` from now on.
pub(crate) fn record_into(recent: Arc<engine::RecentLog>) {
    if let Ok(mut slot) = RECENT.write() {
        *slot = Some(recent);
    }
}

/// Sets the most verbose level printed.
pub(crate) fn set_level(level: LogLevel) {
    LEVEL.store(level as u8, Ordering::Relaxed);
}

/// Sets how lines are printed.
pub(crate) fn set_format(format: LogFormat) {
    FORMAT.store(format as u8, Ordering::Relaxed);
}

fn format() -> LogFormat {
    if FORMAT.load(Ordering::Relaxed) == LogFormat::Plain as u8 {
        LogFormat::Plain
    } else {
        LogFormat::Json
    }
}

pub(crate) fn enabled(level: LogLevel) -> bool {
    level as u8 <= LEVEL.load(Ordering::Relaxed)
}

/// Whether debug lines are printed (to skip building their arguments).
pub(crate) fn debug_enabled() -> bool {
    enabled(LogLevel::Debug)
}

/// mongod's severity letter for a level (its debug levels are `D1`..`D5`).
fn severity(level: LogLevel) -> &'static str {
    match level {
        LogLevel::Error => "E",
        LogLevel::Warn => "W",
        LogLevel::Info => "I",
        LogLevel::Debug => "D1",
    }
}

/// Prints a line the engine has recorded itself (a slow operation, a login, an index
/// build), handed over through [`engine::RecentLog::echo_to`] with its JSON text.
pub(crate) fn echo(line: LogLine<'_>, attr: Option<&bson::Document>, json: &str) {
    let level = match line.severity {
        "E" | "F" => LogLevel::Error,
        "W" => LogLevel::Warn,
        "I" => LogLevel::Info,
        _ => LogLevel::Debug,
    };
    if enabled(level) {
        print(level, line, attr, json);
    }
}

fn print(level: LogLevel, line: LogLine<'_>, attr: Option<&bson::Document>, json: &str) {
    match format() {
        LogFormat::Json => eprintln!("{json}"),
        LogFormat::Plain => eprintln!("{}", plain(level, line, attr)),
    }
}

/// `line` as `--logFormat plain` prints it.
fn plain(level: LogLevel, line: LogLine<'_>, attr: Option<&bson::Document>) -> String {
    let label = match level {
        LogLevel::Error => "ERROR",
        LogLevel::Warn => "WARN ",
        LogLevel::Info => "INFO ",
        LogLevel::Debug => "DEBUG",
    };
    let mut text = format!(
        "{} {label} {:<8} [{}] {}",
        engine::log_date(line.millis),
        line.component,
        line.ctx,
        line.message
    );
    if let Some(attr) = attr.filter(|attr| !attr.is_empty()) {
        text.push(' ');
        text.push_str(&engine::plain_attr(attr));
    }
    text
}

/// Logs one line of mongod's: its component, message id, context (`listener`, `connN`,
/// `SignalHandler`), message and attributes. Callers check [`enabled`] first when the
/// attributes cost something to build.
pub(crate) fn event(
    level: LogLevel,
    component: &'static str,
    id: i32,
    ctx: &str,
    message: &str,
    attr: Option<&bson::Document>,
) {
    if !enabled(level) {
        return;
    }
    let now = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .unwrap_or_default();
    let line = LogLine {
        millis: i64::try_from(now.as_millis()).unwrap_or(i64::MAX),
        severity: severity(level),
        component,
        id,
        ctx,
        message,
    };
    let recent = RECENT.read().ok().and_then(|slot| slot.clone());
    let _writing = WRITING.lock().unwrap_or_else(PoisonError::into_inner);
    let json = match recent {
        Some(recent) => recent.record(line, attr),
        None => engine::RecentLog::format(line, attr),
    };
    print(level, line, attr, &json);
}

/// Logs a free-text line of this server's (the `log_*!` macros): its context is the
/// connection it names (a leading `connN `) or the thread, its component and id mongod's
/// when [`component`] knows a counterpart.
pub(crate) fn write(level: LogLevel, message: std::fmt::Arguments<'_>) {
    let text = message.to_string();
    let (ctx, rest) = context(&text);
    let (component, id) = component(rest);
    event(level, component, id, &ctx, rest, None);
}

/// A line's context as mongod names it: `connN` for a line about a connection (its
/// leading `connN ` is taken off the message), else the thread's name.
fn context(text: &str) -> (String, &str) {
    if let Some((first, rest)) = text.split_once(' ')
        && let Some(number) = first.strip_prefix("conn")
        && !number.is_empty()
        && number.bytes().all(|b| b.is_ascii_digit())
    {
        return (first.to_owned(), rest);
    }
    (thread_context(), text)
}

/// The calling thread's context: `listener` for the main thread (the event loop).
pub(crate) fn thread_context() -> String {
    let thread = std::thread::current();
    match thread.name() {
        Some("main") | None => "listener".to_owned(),
        Some(name) => name.to_owned(),
    }
}

/// mongod's component for a free-text line of this server's, and its id (0: mongod has
/// no such line; the lines it has are logged through [`event`] with their own ids).
fn component(message: &str) -> (&'static str, i32) {
    const CONTROL: [&str; 4] = ["worker", "shut", "SIGHUP", "event loop"];
    const NETWORK: [&str; 6] = [
        "TLS",
        "connection",
        "read side",
        "refus",
        "accept",
        "set_nodelay",
    ];
    if CONTROL.iter().any(|word| message.contains(word)) {
        ("CONTROL", 0)
    } else if NETWORK.iter().any(|word| message.contains(word)) {
        ("NETWORK", 0)
    } else if message.starts_with("command") || message.starts_with("legacy") {
        ("COMMAND", 0)
    } else {
        ("-", 0)
    }
}

macro_rules! log_at {
    ($level:expr, $($arg:tt)*) => {
        if $crate::log::enabled($level) {
            $crate::log::write($level, format_args!($($arg)*));
        }
    };
}
macro_rules! log_error { ($($arg:tt)*) => { log_at!($crate::config::LogLevel::Error, $($arg)*) }; }
macro_rules! log_warn { ($($arg:tt)*) => { log_at!($crate::config::LogLevel::Warn, $($arg)*) }; }
macro_rules! log_info { ($($arg:tt)*) => { log_at!($crate::config::LogLevel::Info, $($arg)*) }; }
macro_rules! log_debug { ($($arg:tt)*) => { log_at!($crate::config::LogLevel::Debug, $($arg)*) }; }

#[cfg(test)]
mod tests {
    use crate::config::LogLevel;
    use engine::LogLine;

    #[test]
    fn lines_get_mongod_s_context_and_component() {
        assert_eq!(
            super::context("conn12 refused message: x"),
            ("conn12".to_owned(), "refused message: x")
        );
        assert_eq!(super::context("connection x").1, "connection x");
        assert_eq!(super::component("TLS: reloaded x"), ("NETWORK", 0));
        assert_eq!(super::component("a worker thread panicked"), ("CONTROL", 0));
        assert_eq!(super::component("something else"), ("-", 0));
    }

    #[test]
    fn plain_lines_carry_level_component_context_message_and_attributes() {
        let line = LogLine {
            millis: 0,
            severity: "I",
            component: "NETWORK",
            id: 22943,
            ctx: "listener",
            message: "Connection accepted",
        };
        let attr = bson::doc! { "remote": "1.2.3.4:5", "connectionCount": 1i64 };
        assert_eq!(
            super::plain(LogLevel::Info, line, Some(&attr)),
            "1970-01-01T00:00:00.000+00:00 INFO  NETWORK  [listener] Connection accepted \
             {\"remote\":\"1.2.3.4:5\",\"connectionCount\":1}"
        );
        assert_eq!(
            super::plain(LogLevel::Warn, line, None),
            "1970-01-01T00:00:00.000+00:00 WARN  NETWORK  [listener] Connection accepted"
        );
    }
}
