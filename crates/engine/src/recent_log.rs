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

/// Prints a line the engine logs itself (a slow operation) where the server prints its
/// own lines: the server installs it with [`RecentLog::echo_to`].
pub type Echo = Box<dyn Fn(&str) + Send + Sync>;

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
    /// document's order), and hands it to the echo if one is installed.
    pub(crate) fn record_attr(&self, line: LogLine<'_>, attr: &bson::Document) {
        let mut text = Self::format(line);
        text.pop();
        text.push_str(",\"attr\":");
        json_document(attr, &mut text);
        text.push('}');
        if let Some(echo) = &*self.echo.lock() {
            echo(&text);
        }
        self.push(text);
    }

    /// Records `line` in mongod's JSON shape, dropping the oldest beyond the bound.
    pub fn record(&self, line: LogLine<'_>) {
        self.push(Self::format(line));
    }

    fn format(line: LogLine<'_>) -> String {
        // Written by hand: the fields in mongod's order (a JSON map would sort them).
        let date = bson::DateTime::from_millis(line.millis)
            .try_to_rfc3339_string()
            .unwrap_or_default();
        format!(
            "{{\"t\":{{\"$date\":{}}},\"s\":{},\"c\":{},\"id\":{},\"ctx\":{},\"msg\":{}}}",
            quoted(&date),
            quoted(line.severity),
            quoted(line.component),
            line.id,
            quoted(line.ctx),
            quoted(line.message),
        )
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
