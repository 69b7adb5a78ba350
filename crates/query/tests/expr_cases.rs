//! Placeholder until the cases land.
