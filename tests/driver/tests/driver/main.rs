//! Integration tests: the server binary on a free port, driven by the official `mongodb`
//! crate, by raw sockets speaking the wire protocol, and by hostile clients.

mod auth;
mod bad_input;
mod client_parity;
mod compression;
mod crash;
mod diagnostics;
mod drivers;
mod fail_points;
mod full_disk;
mod harness;
mod indexes;
mod lock;
mod log_format;
mod profile;
mod protocol;
mod reads;
mod replica_set;
mod streaming;
mod surface;
mod tls;
mod ttl;
mod validation;
mod wildcard;
mod writes;
