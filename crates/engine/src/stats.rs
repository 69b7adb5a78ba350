//! Counters that serverStatus reports: connections, mongod's `opcounters`, `asserts`,
//! `network` and `metrics.document`.
//!
//! What each counter counts, as mongod 7.0 counts it:
//! - `opcounters.insert`: one per document of an `insert` command (whether or not it
//!   was written); `update` and `delete`: one per statement of an `update`/`delete`;
//!   `query`: one per `find` (and per legacy OP_QUERY); `getmore`: one per `getMore`;
//!   `command`: one per other command. The CRUD commands do not count as commands.
//! - `metrics.document`: documents `inserted` (the reply's `n`), `updated` (`nModified`),
//!   `deleted` (`n`) and `returned` (in `find`, `getMore` and `aggregate` batches).
//! - `asserts.user`: one per command that failed (mongod's `uassert`s, which is what a
//!   failed command raises); `regular`, `warning`, `msg`, `tripwire`: 0 (no such checks).
//! - `network`: bytes of the request and reply messages (`bytesIn`/`bytesOut`: as decoded
//!   and encoded, before compression; `physicalBytesIn`/`physicalBytesOut`: as they crossed
//!   the socket) and requests, as the server reports them (an embedding program sends no
//!   frames: all 0). `compression.<name>`: per compressor, the bytes its compressor took
//!   and gave (replies) and its decompressor took and gave (requests), as mongod counts
//!   them; `noop` is not reported.
//! - `transportSecurity`: TLS connections whose handshake completed since start, by the
//!   protocol version negotiated (mongod's cumulative counts; plain connections are not
//!   counted, and rustls negotiates only 1.2 and 1.3).

use std::sync::atomic::{AtomicU64, Ordering};

/// Server-wide counters. Updated with relaxed atomics: they are statistics, not
/// synchronisation, and a reader may see them a moment out of step.
#[derive(Debug, Default)]
pub struct Stats {
    connections_current: AtomicU64,
    connections_total: AtomicU64,
    requests: AtomicU64,
    counters: [AtomicU64; COUNTER_COUNT],
    tls: [AtomicU64; TLS_VERSIONS],
    /// Per compressor of [`COMPRESSORS`]: compressor in, out; decompressor in, out.
    compression: [[AtomicU64; 4]; 3],
}

/// The compressors serverStatus `network.compression` reports, in its order.
pub const COMPRESSORS: [wire::Compressor; 3] = [
    wire::Compressor::Snappy,
    wire::Compressor::Zstd,
    wire::Compressor::Zlib,
];

/// The bytes one compressor handled (serverStatus `network.compression.<name>`).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct CompressionBytes {
    /// Bytes given to the compressor (uncompressed replies).
    pub compressor_in: u64,
    /// Bytes it produced.
    pub compressor_out: u64,
    /// Bytes given to the decompressor (compressed requests).
    pub decompressor_in: u64,
    /// Bytes it produced.
    pub decompressor_out: u64,
}

/// A TLS protocol version, as serverStatus `transportSecurity` names them.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TlsVersion {
    /// TLS 1.0.
    V1_0,
    /// TLS 1.1.
    V1_1,
    /// TLS 1.2.
    V1_2,
    /// TLS 1.3.
    V1_3,
    /// Anything else.
    Unknown,
}

const TLS_VERSIONS: usize = TlsVersion::Unknown as usize + 1;

/// The counters kept in [`Stats::counters`], by index.
#[derive(Debug, Clone, Copy)]
pub(crate) enum Counter {
    OpInsert,
    OpQuery,
    OpUpdate,
    OpDelete,
    OpGetMore,
    OpCommand,
    DocumentInserted,
    DocumentUpdated,
    DocumentDeleted,
    DocumentReturned,
    AssertUser,
    BytesIn,
    BytesOut,
    PhysicalBytesIn,
    PhysicalBytesOut,
    NetworkRequests,
    MaxTimeExpired,
}

const COUNTER_COUNT: usize = Counter::MaxTimeExpired as usize + 1;

/// A consistent-enough copy of [`Stats`] for one reply.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct StatsSnapshot {
    /// Open client connections.
    pub connections_current: u64,
    /// Connections accepted since start.
    pub connections_total: u64,
    /// Commands and legacy queries run, of every kind.
    pub requests: u64,
    counters: [u64; COUNTER_COUNT],
    /// TLS connections by protocol version, in [`TlsVersion`] order.
    pub tls: [u64; TLS_VERSIONS],
    /// Per compressor of [`COMPRESSORS`], in its order.
    pub compression: [CompressionBytes; 3],
}

impl StatsSnapshot {
    pub(crate) fn get(&self, counter: Counter) -> u64 {
        self.counters[counter as usize]
    }
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

    /// Records a connection whose TLS handshake completed with `version`.
    pub fn tls_connection(&self, version: TlsVersion) {
        self.tls[version as usize].fetch_add(1, Ordering::Relaxed);
    }

    /// Records one request message of `bytes_in` answered by `bytes_out` bytes (0: no
    /// reply), both before compression, and the `physical_out` bytes the reply took on the
    /// wire, for serverStatus `network`.
    pub fn network_request(&self, bytes_in: u64, bytes_out: u64, physical_out: u64) {
        self.add(Counter::BytesIn, bytes_in);
        self.add(Counter::BytesOut, bytes_out);
        self.add(Counter::PhysicalBytesOut, physical_out);
        self.add(Counter::NetworkRequests, 1);
    }

    /// Records a frame of `bytes` read from a socket (`physicalBytesIn`).
    pub fn frame_read(&self, bytes: u64) {
        self.add(Counter::PhysicalBytesIn, bytes);
    }

    /// Records `compressor` turning `bytes_in` reply bytes into `bytes_out`.
    pub fn compressed(&self, compressor: wire::Compressor, bytes_in: u64, bytes_out: u64) {
        if let Some(slot) = COMPRESSORS.iter().position(|c| *c == compressor) {
            self.compression[slot][0].fetch_add(bytes_in, Ordering::Relaxed);
            self.compression[slot][1].fetch_add(bytes_out, Ordering::Relaxed);
        }
    }

    /// Records `compressor` turning `bytes_in` request bytes into `bytes_out`.
    pub fn decompressed(&self, compressor: wire::Compressor, bytes_in: u64, bytes_out: u64) {
        if let Some(slot) = COMPRESSORS.iter().position(|c| *c == compressor) {
            self.compression[slot][2].fetch_add(bytes_in, Ordering::Relaxed);
            self.compression[slot][3].fetch_add(bytes_out, Ordering::Relaxed);
        }
    }

    pub(crate) fn request_ran(&self) {
        self.requests.fetch_add(1, Ordering::Relaxed);
    }

    pub(crate) fn add(&self, counter: Counter, value: u64) {
        self.counters[counter as usize].fetch_add(value, Ordering::Relaxed);
    }

    /// The counters now.
    #[must_use]
    pub fn snapshot(&self) -> StatsSnapshot {
        StatsSnapshot {
            connections_current: self.connections_current.load(Ordering::Relaxed),
            connections_total: self.connections_total.load(Ordering::Relaxed),
            requests: self.requests.load(Ordering::Relaxed),
            counters: std::array::from_fn(|i| self.counters[i].load(Ordering::Relaxed)),
            tls: std::array::from_fn(|i| self.tls[i].load(Ordering::Relaxed)),
            compression: std::array::from_fn(|i| {
                let [a, b, c, d] = &self.compression[i];
                CompressionBytes {
                    compressor_in: a.load(Ordering::Relaxed),
                    compressor_out: b.load(Ordering::Relaxed),
                    decompressor_in: c.load(Ordering::Relaxed),
                    decompressor_out: d.load(Ordering::Relaxed),
                }
            }),
        }
    }
}

/// The opcounter a command counts under, as mongod's `shouldAffectCommandCounter` and
/// the CRUD paths divide them.
pub(crate) fn op_counter(name: &str) -> Counter {
    match name {
        "insert" => Counter::OpInsert,
        "update" => Counter::OpUpdate,
        "delete" => Counter::OpDelete,
        "find" => Counter::OpQuery,
        "getMore" => Counter::OpGetMore,
        _ => Counter::OpCommand,
    }
}
