//! The server's recent log lines, kept in memory for `getLog: 'global'` as mongod keeps its
//! `global` RamLog, and the one place a log line is written out: mongod's structured-log
//! JSON (`{"t":{"$date":..},"s","c","id","ctx","msg","attr"}`), one string a line. The
//! server prints the very string recorded here, so `getLog` returns what was printed.
//!
//! Invariants:
//! - At most [`RECENT_LOG_LINES`] lines are held; the oldest go first.
//! - `total` counts every line recorded since start (getLog's `totalLinesWritten`), so it
//!   is never less than the lines held.
//! - A line is formatted once ([`RecentLog::format`]); what is recorded and what is handed
//!   to the echo are the same text.

use parking_lot::Mutex;
use std::collections::VecDeque;

/// Lines held (mongod's RamLog keeps 1024).
pub const RECENT_LOG_LINES: usize = 1024;

/// One log line as a server hands it over.
#[derive(Debug, Clone, Copy)]
pub struct LogLine<'a> {
    /// When, in milliseconds since the epoch.
    pub millis: i64,
    /// mongod's severity: `E`, `W`, `I` or `D1`.
    pub severity: &'a str,
    /// mongod's component (`NETWORK`, `COMMAND`, `CONTROL`, `-`).
    pub component: &'a str,
    /// mongod's id of the log statement.
    pub id: i32,
    /// The thread or connection (`conn12`, `listener`).
    pub ctx: &'a str,
    /// The message.
    pub message: &'a str,
}

/// Prints a line the engine logs itself (a slow operation, a failed login, an index build)
/// where the server prints its own lines: the server installs it with
/// [`RecentLog::echo_to`]. It gets the line's parts, its `attr` and the JSON text recorded.
pub type Echo = Box<dyn Fn(LogLine<'_>, Option<&bson::Document>, &str) + Send + Sync>;

/// The bounded ring of recent lines; a server records into it through [`RecentLog::record`].
#[derive(Default)]
pub struct RecentLog {
    inner: Mutex<Inner>,
    echo: Mutex<Option<Echo>>,
}

impl std::fmt::Debug for RecentLog {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RecentLog").finish_non_exhaustive()
    }
}

#[derive(Debug, Default)]
struct Inner {
    lines: VecDeque<String>,
    total: u64,
}

impl RecentLog {
    /// From now on, lines the engine logs itself are also handed to `echo`.
    pub fn echo_to(&self, echo: Echo) {
        *self.echo.lock() = Some(echo);
    }

    /// Records a line the engine itself logs, with mongod's `attr` object (fields in the
    /// document's order), and hands it to the echo if one is installed (embedded, nothing
    /// is printed: a slow operation is for `getLog` and the profiler).
    pub(crate) fn record_attr(&self, line: LogLine<'_>, attr: &bson::Document) {
        self.record_and_echo(line, attr, false);
    }

    /// As [`RecentLog::record_attr`], but without an echo (an embedded engine) the line is
    /// still written on stderr, as plain text: failures and long index builds.
    pub(crate) fn log(&self, line: LogLine<'_>, attr: &bson::Document) {
        self.record_and_echo(line, attr, true);
    }

    fn record_and_echo(&self, line: LogLine<'_>, attr: &bson::Document, always: bool) {
        let text = Self::format(line, Some(attr));
        if let Some(echo) = &*self.echo.lock() {
            echo(line, Some(attr), &text);
        } else if always {
            eprintln!("multiforadb: {} {}", line.message, plain_attr(attr));
        }
        self.push(text);
    }

    /// Records `line` (and its `attr`, if any) in mongod's JSON shape, dropping the oldest
    /// beyond the bound, and returns the text recorded: the line to print.
    pub fn record(&self, line: LogLine<'_>, attr: Option<&bson::Document>) -> String {
        let text = Self::format(line, attr);
        self.push(text.clone());
        text
    }

    /// `line` as mongod's structured log writes it, with `attr` when there is one.
    #[must_use]
    pub fn format(line: LogLine<'_>, attr: Option<&bson::Document>) -> String {
        // Written by hand: the fields in mongod's order (a JSON map would sort them).
        let mut text = format!(
            "{{\"t\":{{\"$date\":\"{}\"}},\"s\":{},\"c\":{},\"id\":{},\"ctx\":{},\"msg\":{}",
            log_date(line.millis),
            quoted(line.severity),
            quoted(line.component),
            line.id,
            quoted(line.ctx),
            quoted(line.message),
        );
        if let Some(attr) = attr {
            text.push_str(",\"attr\":");
            json_document(attr, &mut text);
        }
        text.push('}');
        text
    }

    fn push(&self, text: String) {
        let mut inner = self.inner.lock();
        if inner.lines.len() == RECENT_LOG_LINES {
            inner.lines.pop_front();
        }
        inner.lines.push_back(text);
        inner.total += 1;
        debug_assert!(inner.total >= inner.lines.len() as u64);
    }

    /// The lines held, oldest first, and the count of every line recorded.
    pub(crate) fn snapshot(&self) -> (Vec<String>, u64) {
        let inner = self.inner.lock();
        (inner.lines.iter().cloned().collect(), inner.total)
    }
}

/// `attr` as one JSON object (for plain-text lines); empty when there is none.
#[must_use]
pub fn plain_attr(attr: &bson::Document) -> String {
    let mut out = String::new();
    if !attr.is_empty() {
        json_document(attr, &mut out);
    }
    out
}

/// `millis` since the epoch as mongod's log dates it: `2026-12-07T19:00:00.123+00:00`
/// (UTC, milliseconds always present; before 1970 is written as 1970).
#[must_use]
pub fn log_date(millis: i64) -> String {
    let millis = u64::try_from(millis).unwrap_or(0);
    let seconds = millis / 1000;
    let (year, month, day) = civil_from_days(seconds / 86_400);
    let of_day = seconds % 86_400;
    format!(
        "{year:04}-{month:02}-{day:02}T{:02}:{:02}:{:02}.{:03}+00:00",
        of_day / 3600,
        of_day / 60 % 60,
        of_day % 60,
        millis % 1000
    )
}

/// Days since 1970-01-01 to (year, month, day), after Howard Hinnant's civil calendar
/// algorithm.
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

/// `doc` as mongod's log writes it: relaxed Extended JSON, fields in document order.
fn json_document(doc: &bson::Document, out: &mut String) {
    out.push('{');
    for (index, (key, value)) in doc.iter().enumerate() {
        if index > 0 {
            out.push(',');
        }
        out.push_str(&quoted(key));
        out.push(':');
        json_value(value, out);
    }
    out.push('}');
}

fn json_value(value: &bson::Bson, out: &mut String) {
    match value {
        bson::Bson::Document(doc) => json_document(doc, out),
        bson::Bson::Array(items) => {
            out.push('[');
            for (index, item) in items.iter().enumerate() {
                if index > 0 {
                    out.push(',');
                }
                json_value(item, out);
            }
            out.push(']');
        }
        bson::Bson::String(text) => out.push_str(&quoted(text)),
        // Scalars and the `$`-wrapped types: their few keys are in canonical order already.
        other => out.push_str(&other.clone().into_relaxed_extjson().to_string()),
    }
}

/// `text` as a JSON string (quotes, backslashes and control characters escaped).
fn quoted(text: &str) -> String {
    let mut out = String::with_capacity(text.len() + 2);
    out.push('"');
    for c in text.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            c if u32::from(c) < 0x20 => out.push_str(&format!("\\u{:04x}", u32::from(c))),
            c => out.push(c),
        }
    }
    out.push('"');
    out
}

#[cfg(test)]
mod tests {
    #[test]
    fn attributes_keep_their_order_as_relaxed_extended_json() {
        let log = super::RecentLog::default();
        let attr = bson::doc! {
            "type": "command",
            "command": { "find": "c", "filter": { "b": 1, "a": [1, "x"] }, "comment": "hi" },
            "n": 5i64,
            "f": 1.5,
        };
        log.record_attr(line("Slow query"), &attr);
        let (lines, _) = log.snapshot();
        assert!(
            lines[0].ends_with(
                "\"msg\":\"Slow query\",\"attr\":{\"type\":\"command\",\"command\":{\"find\":\"c\",\
                 \"filter\":{\"b\":1,\"a\":[1,\"x\"]},\"comment\":\"hi\"},\"n\":5,\"f\":1.5}}"
            ),
            "{}",
            lines[0]
        );
    }

    #[test]
    fn dates_are_mongod_s_with_milliseconds_and_offset() {
        assert_eq!(super::log_date(0), "1970-01-01T00:00:00.000+00:00");
        // 2026-11-29 is day 20,786; 19:00:00.123 into it.
        let millis = 20_786 * 86_400_000 + 19 * 3_600_000 + 123;
        assert_eq!(super::log_date(millis), "2026-11-29T19:00:00.123+00:00");
        assert_eq!(super::log_date(-5), "1970-01-01T00:00:00.000+00:00");
        assert_eq!(super::civil_from_days(19_723), (2024, 1, 1));
    }

    #[test]
    fn the_recorded_text_is_the_text_returned() {
        let log = super::RecentLog::default();
        let attr = bson::doc! { "remote": "1.2.3.4:5", "connectionId": 1i64 };
        let text = log.record(line("Connection accepted"), Some(&attr));
        assert!(
            text.ends_with("\"msg\":\"Connection accepted\",\"attr\":{\"remote\":\"1.2.3.4:5\",\"connectionId\":1}}"),
            "{text}"
        );
        assert_eq!(log.snapshot().0, vec![text]);
    }

    #[test]
    fn messages_are_escaped_as_json_strings() {
        assert_eq!(
            super::quoted("a\"b\\c\nd\u{1}"),
            "\"a\\\"b\\\\c\\nd\\u0001\""
        );
    }

    use super::{LogLine, RECENT_LOG_LINES, RecentLog};

    fn line(message: &str) -> LogLine<'_> {
        LogLine {
            millis: 0,
            severity: "I",
            component: "NETWORK",
            id: 22943,
            ctx: "conn1",
            message,
        }
    }

    #[test]
    fn the_ring_keeps_the_newest_lines_and_counts_all() {
        let log = RecentLog::default();
        for n in 0..RECENT_LOG_LINES + 5 {
            log.record(line(&format!("m{n}")), None);
        }
        let (lines, total) = log.snapshot();
        assert_eq!(lines.len(), RECENT_LOG_LINES);
        assert_eq!(total, RECENT_LOG_LINES as u64 + 5);
        assert!(lines[0].contains("\"msg\":\"m5\""), "{}", lines[0]);
        assert_eq!(
            lines[RECENT_LOG_LINES - 1],
            format!(
                "{{\"t\":{{\"$date\":\"1970-01-01T00:00:00.000+00:00\"}},\"s\":\"I\",\"c\":\"NETWORK\",\
                 \"id\":22943,\"ctx\":\"conn1\",\"msg\":\"m{}\"}}",
                RECENT_LOG_LINES + 4
            )
        );
    }
}
