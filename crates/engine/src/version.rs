//! The MongoDB version this server presents itself as, kept in one place so hello's wire
//! versions and buildInfo's version string cannot drift apart.

/// The version string in buildInfo and serverStatus.
pub const SERVER_VERSION: &str = "7.0.0";

/// The same version as buildInfo's `versionArray`.
pub const SERVER_VERSION_ARRAY: [i32; 4] = [7, 0, 0, 0];

/// The wire version MongoDB 7.0 announces (`maxWireVersion` in hello).
pub const MAX_WIRE_VERSION: i32 = 21;

/// The oldest wire version accepted: 0, as mongod, so old handshakes still connect.
pub const MIN_WIRE_VERSION: i32 = 0;

/// `featureCompatibilityVersion` reported by getParameter.
pub const FEATURE_COMPATIBILITY_VERSION: &str = "7.0";

/// This project's own version, reported beside the MongoDB one.
pub const MULTIFORADB_VERSION: &str = env!("CARGO_PKG_VERSION");

/// The wire version each MongoDB major.minor announces (from the MongoDB wire
/// protocol specification); the pair above must be one of these rows.
const WIRE_VERSIONS: &[([i32; 2], i32)] = &[([5, 0], 13), ([6, 0], 17), ([7, 0], 21), ([8, 0], 25)];

const fn wire_version_matches() -> bool {
    let mut index = 0;
    while index < WIRE_VERSIONS.len() {
        let ([major, minor], wire) = WIRE_VERSIONS[index];
        if major == SERVER_VERSION_ARRAY[0] && minor == SERVER_VERSION_ARRAY[1] {
            return wire == MAX_WIRE_VERSION;
        }
        index += 1;
    }
    false
}

const _: () = assert!(
    wire_version_matches(),
    "maxWireVersion must match the version"
);
const _: () = assert!(SERVER_VERSION_ARRAY[0] >= 7, "present a modern MongoDB");

#[cfg(test)]
mod tests {
    #[test]
    fn version_string_matches_version_array() {
        let parts: Vec<i32> = super::SERVER_VERSION
            .split('.')
            .map(|p| p.parse().expect("numeric"))
            .collect();
        assert_eq!(parts, super::SERVER_VERSION_ARRAY[..3]);
        assert!(super::FEATURE_COMPATIBILITY_VERSION.starts_with(&format!("{}.", parts[0])));
    }
}
