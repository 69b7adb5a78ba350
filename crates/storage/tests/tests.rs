//! The storage layer's integration tests: one binary, one module per area.

mod oplog;
mod store;
mod store_concurrency;

/// A fresh, empty directory for test `name`; returns the path of database file `file` in it.
pub fn temp_db(name: &str, file: &str) -> std::path::PathBuf {
    let dir = std::env::temp_dir().join(format!("mfdb-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).expect("temp dir");
    dir.join(file)
}
