//! Human-readable log lines on stderr: `2026-11-29T19:00:00.123Z INFO  message`, each also
//! recorded (in mongod's JSON shape, with the component, id and context mongod would give
//! it) in the engine's [`engine::RecentLog`] for `getLog: 'global'`.

use crate::config::LogLevel;
use std::sync::atomic::{AtomicU8, Ordering};
use std::sync::{Arc, RwLock};
use std::time::{SystemTime, UNIX_EPOCH};

static LEVEL: AtomicU8 = AtomicU8::new(LogLevel::Info as u8);

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

pub(crate) fn enabled(level: LogLevel) -> bool {
    level as u8 <= LEVEL.load(Ordering::Relaxed)
}

/// Whether debug lines are printed (to skip building their arguments).
pub(crate) fn debug_enabled() -> bool {
    enabled(LogLevel::Debug)
}

/// Prints a line on stderr only: for lines the engine has recorded itself (its slow
/// operations, in mongod's JSON shape), handed over through [`engine::RecentLog::echo_to`].
pub(crate) fn print_only(level: LogLevel, message: &str) {
    if enabled(level) {
        print_at(level, SystemTime::now(), format_args!("{message}"));
    }
}

fn print_at(level: LogLevel, at: SystemTime, message: std::fmt::Arguments<'_>) {
    let label = match level {
        LogLevel::Error => "ERROR",
        LogLevel::Warn => "WARN ",
        LogLevel::Info => "INFO ",
        LogLevel::Debug => "DEBUG",
    };
    let now = at.duration_since(UNIX_EPOCH).unwrap_or_default();
    eprintln!("{} {label} {message}", timestamp(now));
}

pub(crate) fn write(level: LogLevel, message: std::fmt::Arguments<'_>) {
    let at = SystemTime::now();
    print_at(level, at, message);
    let now = at.duration_since(UNIX_EPOCH).unwrap_or_default();
    let Ok(recent) = RECENT.read() else {
        return;
    };
    let Some(recent) = recent.as_ref() else {
        return;
    };
    let text = message.to_string();
    let (ctx, rest) = context(&text);
    let (component, id) = component(rest);
    let severity = match level {
        LogLevel::Error => "E",
        LogLevel::Warn => "W",
        LogLevel::Info => "I",
        LogLevel::Debug => "D1",
    };
    recent.record(engine::LogLine {
        millis: i64::try_from(now.as_millis()).unwrap_or(i64::MAX),
        severity,
        component,
        id,
        ctx: &ctx,
        message: rest,
    });
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
    let thread = std::thread::current();
    let name = match thread.name() {
        Some("main") | None => "listener",
        Some(name) => name,
    };
    (name.to_owned(), text)
}

/// mongod's component and log id for a message of this server's (`-` and 0 for those
/// mongod has no counterpart of).
fn component(message: &str) -> (&'static str, i32) {
    if message.starts_with("accepted from") {
        ("NETWORK", 22943)
    } else if message.starts_with("closed") {
        ("NETWORK", 22944)
    } else if message.starts_with("listening on") {
        ("NETWORK", 23016)
    } else if message.starts_with("command ") {
        ("COMMAND", 51803)
    } else if message.contains("shutting down") || message.starts_with("shutdown") {
        ("CONTROL", 20565)
    } else if message.contains("read error") || message.contains("refused message") {
        ("NETWORK", 22988)
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

/// `now` (since the epoch) as an ISO 8601 UTC timestamp with milliseconds.
fn timestamp(now: std::time::Duration) -> String {
    let seconds = now.as_secs();
    let (year, month, day) = civil_from_days(seconds / 86_400);
    let of_day = seconds % 86_400;
    format!(
        "{year:04}-{month:02}-{day:02}T{:02}:{:02}:{:02}.{:03}Z",
        of_day / 3600,
        of_day / 60 % 60,
        of_day % 60,
        now.subsec_millis()
    )
}

/// Days since 1970-01-01 to (year, month, day), after Howard Hinnant's civil calendar algorithm.
fn civil_from_days(days: u64) -> (u64, u64, u64) {
    let z = days + 719_468;
    let era = z / 146_097;
    let day_of_era = z % 146_097;
    let year_of_era =
        (day_of_era - day_of_era / 1460 + day_of_era / 36_524 - day_of_era / 146_096) / 365;
    let day_of_year = day_of_era - (365 * year_of_era + year_of_era / 4 - year_of_era / 100);
    let month_index = (5 * day_of_year + 2) / 153;
    let day = day_of_year - (153 * month_index + 2) / 5 + 1;
    let month = if month_index < 10 {
        month_index + 3
    } else {
        month_index - 9
    };
    let year = year_of_era + era * 400 + u64::from(month <= 2);
    (year, month, day)
}

#[cfg(test)]
mod tests {
    #[test]
    fn lines_get_mongod_s_context_and_component() {
        assert_eq!(
            super::context("conn12 accepted from 1.2.3.4:5 (1 open)"),
            ("conn12".to_owned(), "accepted from 1.2.3.4:5 (1 open)")
        );
        assert_eq!(super::context("connection x").1, "connection x");
        assert_eq!(super::component("accepted from x"), ("NETWORK", 22943));
        assert_eq!(super::component("command find"), ("COMMAND", 51803));
        assert_eq!(super::component("something else"), ("-", 0));
    }

    #[test]
    fn civil_from_days_known_dates() {
        assert_eq!(super::civil_from_days(0), (1970, 1, 1));
        assert_eq!(super::civil_from_days(19_723), (2024, 1, 1));
        assert_eq!(super::civil_from_days(20_786), (2026, 11, 29));
    }
}
