//! Counters that serverStatus reports: connections and operation counts.

use std::sync::atomic::{AtomicU64, Ordering};

/// Server-wide counters. Updated with relaxed atomics: they are statistics, not
/// synchronisation, and a reader may see them a moment out of step.
#[derive(Debug, Default)]
pub struct Stats {
    connections_current: AtomicU64,
    connections_total: AtomicU64,
    commands: AtomicU64,
    queries: AtomicU64,
}

/// A consistent-enough copy of [`Stats`] for one reply.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct StatsSnapshot {
    /// Open client connections.
    pub connections_current: u64,
    /// Connections accepted since start.
    pub connections_total: u64,
    /// Commands run (opcounters.command).
    pub commands: u64,
    /// Legacy queries (opcounters.query).
    pub queries: u64,
}

impl Stats {
    /// Records an accepted connection.
    pub fn connection_opened(&self) {
        self.connections_current.fetch_add(1, Ordering::Relaxed);
        self.connections_total.fetch_add(1, Ordering::Relaxed);
    }

    /// Records a closed connection.
    pub fn connection_closed(&self) {
        let previous = self.connections_current.fetch_sub(1, Ordering::Relaxed);
        assert!(
            previous > 0,
            "connection_closed without a matching connection_opened"
        );
    }

    pub(crate) fn command_ran(&self) {
        self.commands.fetch_add(1, Ordering::Relaxed);
    }

    pub(crate) fn query_ran(&self) {
        self.queries.fetch_add(1, Ordering::Relaxed);
    }

    /// The counters now.
    #[must_use]
    pub fn snapshot(&self) -> StatsSnapshot {
        StatsSnapshot {
            connections_current: self.connections_current.load(Ordering::Relaxed),
            connections_total: self.connections_total.load(Ordering::Relaxed),
            commands: self.commands.load(Ordering::Relaxed),
            queries: self.queries.load(Ordering::Relaxed),
        }
    }
}
