//! The database engine: the MongoDB commands and cursors over durable storage ([`store`],
//! the `storage` crate: catalog, write-ahead log, recovery, checkpoints), and the embedded client
//! ([`client`]: the `mongodb` crate's sync API in this process).
//!
#![doc = include_str!("../README.md")]
//!
//! # Inside
//!
//! The embedded client and the network server share one entry point,
//! [`Engine::run_command`]: a database name, a command document and the
//! caller's [`ConnectionContext`] in, a reply document out. Failures are never
//! Rust errors at that boundary: they are MongoDB error replies
//! (`{ok: 0, errmsg, code, codeName}`), built only here, from [`Error`].
//!
//! Everything the engine needs from the outside world (the clock, host and
//! process facts) comes in through the [`Host`] trait, so tests can pin it.
#![forbid(unsafe_code)]

mod auth;
pub mod client;
pub mod command;
mod engine;
mod failpoint;
mod fields;
mod fsync_lock;
mod host;
mod latency;
mod object_id;
mod operations;
mod plan;
mod profile;
mod recent_log;
pub mod repl;
mod sessions;
mod stats;
mod streaming;
mod system_collections;
mod ttl;
pub mod version;

// The storage layer (`storage`), under the paths the engine and its users have always used.
use storage::{error, index, spill};
pub use storage::{limits, store};

pub use auth::AuthSession;
pub use client::Client;
pub use engine::{
    ClientMetadata, ConnectionContext, Engine, EngineOptions, ShutdownHook, StartupOptions,
};
pub use error::{Error, ErrorCode};
pub use host::{FileSystemFacts, FixedHost, Host, HostFacts, MemoryFacts};
pub use recent_log::{Echo, LogLine, RECENT_LOG_LINES, RecentLog, log_date, plain_attr};
pub use stats::{Stats, TlsVersion};
pub use ttl::TtlPass;
/// Named crash points (the `crash-points` feature; see `cargo xtask crash`).
pub use wal::crashpoint;
