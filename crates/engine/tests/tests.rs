//! The engine's integration tests: one binary, one module per area.

mod admin;
mod aggregate_output;
mod bulk_write;
mod command_walk;
mod compressed_scans;
mod concerns_and_tailing;
mod ddl;
mod disk_failures;
mod embedded;
mod fail_points;
mod find_and_modify;
mod index_model;
mod indexes;
mod model;
mod planner;
mod replica_set;
mod restart;
mod sessions;
mod support;
mod transactions;
mod ttl;
mod updates;
mod validation;
mod variables;
mod wildcard;
mod writes;
