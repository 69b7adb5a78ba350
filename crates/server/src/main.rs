//! The `multiforadb` binary: a MongoDB-compatible server on one database file.
#![forbid(unsafe_code)]

fn main() -> anyhow::Result<()> {
    server::run_cli().map_err(|error| anyhow::anyhow!("multiforadb: {error}"))
}
