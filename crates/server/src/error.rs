//! What can stop the server from starting or running.

use std::net::SocketAddr;

/// A server failure. Per-connection problems are logged and close that connection;
/// only failures of the whole server surface here.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// Could not listen on an address.
    #[error("cannot listen on {address}: {source}")]
    Bind {
        /// The address asked for.
        address: SocketAddr,
        /// Why.
        source: std::io::Error,
    },
    /// The event loop's poller failed.
    #[error("event loop: {0}")]
    Poll(std::io::Error),
    /// Signal handlers could not be installed.
    #[error("installing signal handlers: {0}")]
    Signals(std::io::Error),
    /// A worker thread could not be started.
    #[error("starting worker threads: {0}")]
    Workers(std::io::Error),
    /// The TLS flags contradict each other, or a certificate or key file is unusable.
    #[error("TLS: {0}")]
    Tls(String),
    /// A flag's value is not one the server takes.
    #[error("{0}")]
    Config(String),
    /// The database file could not be opened or closed.
    #[error("{0}")]
    Database(String),
}
