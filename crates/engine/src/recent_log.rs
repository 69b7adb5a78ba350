//! The server's recent log lines, kept in memory for `getLog: 'global'` as mongod keeps its
//! `global` RamLog: mongod's structured-log JSON (`{"t":{"$date":..},"s","c","id","ctx",
//! "msg"}`), one string a line.
//!
//! Invariants:
//! - At most [`RECENT_LOG_LINES`] lines are held; the oldest go first.
//! - `total` counts every line recorded since start (getLog's `totalLinesWritten`), so it
//!   is never less than the lines held.

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

/// The bounded ring of recent lines; a server records into it through [`RecentLog::record`].
#[derive(Debug, Default)]
pub struct RecentLog {
    inner: Mutex<Inner>,
}

#[derive(Debug, Default)]
struct Inner {
    lines: VecDeque<String>,
    total: u64,
}

impl RecentLog {
    /// Records `line` in mongod's JSON shape, dropping the oldest beyond the bound.
    pub fn record(&self, line: LogLine<'_>) {
        // Written by hand: the fields in mongod's order (a JSON map would sort them).
        let date = bson::DateTime::from_millis(line.millis)
            .try_to_rfc3339_string()
            .unwrap_or_default();
        let text = format!(
            "{{\"t\":{{\"$date\":{}}},\"s\":{},\"c\":{},\"id\":{},\"ctx\":{},\"msg\":{}}}",
            quoted(&date),
            quoted(line.severity),
            quoted(line.component),
            line.id,
            quoted(line.ctx),
            quoted(line.message),
        );
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
            log.record(line(&format!("m{n}")));
        }
        let (lines, total) = log.snapshot();
        assert_eq!(lines.len(), RECENT_LOG_LINES);
        assert_eq!(total, RECENT_LOG_LINES as u64 + 5);
        assert!(lines[0].contains("\"msg\":\"m5\""), "{}", lines[0]);
        assert_eq!(
            lines[RECENT_LOG_LINES - 1],
            format!(
                "{{\"t\":{{\"$date\":\"1970-01-01T00:00:00Z\"}},\"s\":\"I\",\"c\":\"NETWORK\",\
                 \"id\":22943,\"ctx\":\"conn1\",\"msg\":\"m{}\"}}",
                RECENT_LOG_LINES + 4
            )
        );
    }
}
