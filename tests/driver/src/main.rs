//! The server under test: `multiforadb`'s own entry point, built inside this package so
//! the integration tests always run a fresh binary (`CARGO_BIN_EXE_mfdb-server`).
#![forbid(unsafe_code)]

use std::process::ExitCode;

fn main() -> ExitCode {
    match server::run_cli() {
        Ok(()) => ExitCode::SUCCESS,
        // Logged by `run_cli` itself, in the log's format.
        Err(_) => ExitCode::FAILURE,
    }
}
