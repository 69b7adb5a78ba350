//! Secondary indexes (issue 26): specifications and key generation.
#![allow(dead_code)]

mod display;
mod hash;
mod partial;
mod keys;
mod spec;
#[cfg(test)]
mod tests;

use crate::error::{Error, ErrorCode};

/// An error with MongoDB's code, name and message.
fn error(code: i32, name: &'static str, message: impl Into<String>) -> Error {
    Error::new(ErrorCode::from_parts(code, name), message)
}
