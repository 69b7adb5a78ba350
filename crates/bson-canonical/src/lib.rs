//! MongoDB's semantics over BSON: canonical order, key encoding, paths, validation.
#![forbid(unsafe_code)]
