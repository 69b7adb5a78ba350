//! Secondary indexes (issue 26): specifications and key generation.
#![allow(dead_code)]

mod display;
mod hash;
