//! The `multiforadb` server: command-line flags, the mio event loop and the worker pool.
//!
//! The binary (`main.rs`) is a thin wrapper over [`run_cli`]. The library exists so
//! the integration tests and the ping benchmark can start the exact same server:
//! tests build a shim binary from [`run_cli`], the benchmark runs [`Server`] in
//! process. No other crate should depend on it (ARCHITECTURE.md: binary only).
#![forbid(unsafe_code)]

#[macro_use]
mod log;
mod compression;
mod config;
mod connection;
mod error;
mod event_loop;
mod host;
pub mod limits;
mod tls;
mod worker;

pub use config::{Config, Dispatch, LogLevel, TlsMode, TlsProtocol};
pub use error::Error;
pub use event_loop::{Server, ShutdownHandle};
pub use log::LogFormat;
pub use tls::Tls;

use clap::Parser;
use std::sync::Arc;

/// Parses the command line, starts the server, and runs it until SIGTERM or SIGINT. A
/// failure is logged (in the log's format) before it is returned, so the caller only
/// sets the exit status.
pub fn run_cli() -> Result<(), Error> {
    let config = Config::parse();
    log::set_level(config.log_level);
    log::set_format(config.log_format);
    let result = match start(&config) {
        Ok((engine, server)) => serve(&config, &engine, server),
        Err(error) => {
            // mongod's line for a failure that stops it starting.
            let attr = bson::doc! { "error": error.to_string() };
            let message = "DBException in initAndListen, terminating";
            log::event(
                LogLevel::Error,
                "STORAGE",
                20_557,
                "initandlisten",
                message,
                Some(&attr),
            );
            Err(error)
        }
    };
    // mongod's last two lines.
    let ctx = log::thread_context();
    log::event(LogLevel::Info, "CONTROL", 20_565, &ctx, "Now exiting", None);
    let attr = bson::doc! { "exitCode": i32::from(result.is_err()) };
    log::event(
        LogLevel::Info,
        "CONTROL",
        23_138,
        &ctx,
        "Shutting down",
        Some(&attr),
    );
    result
}

/// Checks the TLS files, opens the database and listens.
fn start(config: &Config) -> Result<(Arc<engine::Engine>, Server), Error> {
    // Certificates are checked before the database is opened: a bad file costs nothing.
    let tls = Tls::from_config(config)?;
    let argv: Vec<String> = std::env::args().collect();
    let engine = config.engine(argv).map_err(|error| {
        Error::Database(format!(
            "cannot open {}: {}: {error}",
            config.db.display(),
            error.code().name()
        ))
    })?;
    let engine = Arc::new(engine);
    let server = Server::bind_with_tls(config, Arc::clone(&engine), tls)?;
    Ok((engine, server))
}

/// Serves until a signal or the shutdown command, then closes the database.
fn serve(config: &Config, engine: &engine::Engine, server: Server) -> Result<(), Error> {
    let shutdown = server.shutdown_handle();
    let signals = shutdown.on_signals()?;
    let result = server.run();
    signals.close();
    // A clean stop checkpoints and removes the log: the database is one file again.
    let closed = engine
        .close()
        .map_err(|error| Error::Database(format!("closing {}: {error}", config.db.display())));
    let result = result.and(closed);
    if let Err(error) = &result {
        let attr = bson::doc! { "error": error.to_string() };
        let ctx = log::thread_context();
        log::event(
            LogLevel::Error,
            "CONTROL",
            0,
            &ctx,
            "Stopping on an error",
            Some(&attr),
        );
    }
    result
}
