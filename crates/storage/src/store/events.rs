//! What a running store reports (a storage failure, a checkpoint that could not truncate
//! the log, a log replaced under it, a background task that failed): lines for the layer
//! above to write in its own log format, as mongod's STORAGE component. While no sink is
//! installed ([`crate::store::Store::set_event_sink`]) a line goes to stderr as plain
//! text, so an embedded store that nobody listens to still says what went wrong.

use bson::Document;
use parking_lot::Mutex;
use std::sync::Arc;

/// How grave a reported line is (mongod's `s`: `E`, `W`, `I`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Severity {
    /// Something failed.
    Error,
    /// Something is wrong but handled.
    Warning,
    /// For information.
    Info,
}

impl Severity {
    /// mongod's letter for it.
    #[must_use]
    pub fn letter(self) -> &'static str {
        match self {
            Severity::Error => "E",
            Severity::Warning => "W",
            Severity::Info => "I",
        }
    }
}

/// One line the store reports.
#[derive(Debug, Clone, PartialEq)]
pub struct Event<'a> {
    /// How grave it is.
    pub severity: Severity,
    /// mongod's component (`STORAGE`; `INDEX` for the TTL monitor's lines).
    pub component: &'a str,
    /// mongod's id for the line where it has one, else 0.
    pub id: i32,
    /// What happened, in a sentence.
    pub message: &'a str,
    /// The details, as mongod's `attr`.
    pub attr: Document,
}

/// Where a store's lines go.
pub type EventSink = Arc<dyn Fn(&Event<'_>) + Send + Sync>;

/// The installed sink, if any.
#[derive(Default)]
pub(crate) struct Events {
    sink: Mutex<Option<EventSink>>,
}

impl Events {
    pub(crate) fn set(&self, sink: Option<EventSink>) {
        *self.sink.lock() = sink;
    }

    pub(crate) fn sink(&self) -> Option<EventSink> {
        self.sink.lock().clone()
    }

    /// Hands `event` to the sink, or prints it on stderr when there is none.
    pub(crate) fn emit(&self, event: &Event<'_>) {
        match self.sink() {
            Some(sink) => sink(event),
            None => eprintln!("multiforadb: {} {}", event.message, event.attr),
        }
    }
}
