//! The `multiforadb` binary: a MongoDB-compatible server on one database file.
#![forbid(unsafe_code)]

use std::process::ExitCode;

fn main() -> ExitCode {
    // A failure has been logged by `run_cli` itself, in the log's format.
    match server::run_cli() {
        Ok(()) => ExitCode::SUCCESS,
        Err(_) => ExitCode::FAILURE,
    }
}
