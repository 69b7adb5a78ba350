//! The integration tests of `wal`: one binary made of modules (see `wal/mod.rs`).

mod wal;
