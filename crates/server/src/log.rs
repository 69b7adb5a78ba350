//! Human-readable log lines on stderr: `2026-11-29T19:00:00.123Z INFO  message`.

use crate::config::LogLevel;
use std::sync::atomic::{AtomicU8, Ordering};
use std::time::{SystemTime, UNIX_EPOCH};

static LEVEL: AtomicU8 = AtomicU8::new(LogLevel::Info as u8);

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

pub(crate) fn write(level: LogLevel, message: std::fmt::Arguments<'_>) {
    let label = match level {
        LogLevel::Error => "ERROR",
        LogLevel::Warn => "WARN ",
        LogLevel::Info => "INFO ",
        LogLevel::Debug => "DEBUG",
    };
    eprintln!("{} {label} {message}", timestamp());
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

/// Now as an ISO 8601 UTC timestamp with milliseconds.
fn timestamp() -> String {
    let now = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .unwrap_or_default();
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
    fn civil_from_days_known_dates() {
        assert_eq!(super::civil_from_days(0), (1970, 1, 1));
        assert_eq!(super::civil_from_days(19_723), (2024, 1, 1));
        assert_eq!(super::civil_from_days(20_786), (2026, 11, 29));
    }
}
