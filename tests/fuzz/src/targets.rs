//! The registry of fuzz targets: one entry per decoder of outside bytes.
//!
//! A target takes arbitrary bytes and must return normally (any `Err` is fine);
//! a panic, an abort or a hang is a bug. Each entry also names seed inputs that
//! reach deep into the decoder, which the driver mutates.

/// A registered fuzz target.
pub struct Target {
    /// The name used on the command line (`cargo xtask fuzz <name>`).
    pub name: &'static str,
    /// Valid or nearly valid inputs for the driver to start from.
    pub seeds: fn() -> Vec<Vec<u8>>,
    /// The code under test.
    pub run: fn(&[u8]),
}

/// Every fuzz target of the workspace.
pub const TARGETS: &[Target] = &[
    Target {
        name: "pager_open",
        seeds: crate::storage_targets::data_file_seeds,
        run: crate::storage_targets::open_damaged_data_file,
    },
    Target {
        name: "btree_node",
        seeds: crate::storage_targets::node_seeds,
        run: crate::storage_targets::read_damaged_node,
    },
];
