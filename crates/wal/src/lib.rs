//! The write-ahead log and the storage seam that every file access goes through.
#![forbid(unsafe_code)]

pub mod storage;

pub use storage::{MemStorage, OsStorage, Storage};
