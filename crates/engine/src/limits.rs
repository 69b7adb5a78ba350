//! Limits the engine announces to clients (hello) and enforces on commands.

/// `maxBsonObjectSize` in hello: the largest document a client may store.
pub const BSON_OBJECT_SIZE_MAX: usize = wire::limits::BSON_OBJECT_SIZE_MAX;

/// `maxMessageSizeBytes` in hello: the largest wire message.
pub const MESSAGE_SIZE_MAX: usize = wire::limits::MESSAGE_LEN_MAX;

/// `maxWriteBatchSize` in hello: the most write operations in one command.
pub const WRITE_BATCH_SIZE_MAX: usize = wire::limits::WRITE_BATCH_SIZE_MAX;

/// `logicalSessionTimeoutMinutes` in hello. Announcing it tells drivers sessions are
/// supported; they then send `lsid` on commands and `endSessions` on close.
pub const LOGICAL_SESSION_TIMEOUT_MINUTES: i32 = 30;

/// The longest database name MongoDB accepts (in bytes).
pub const DATABASE_NAME_LEN_MAX: usize = 63;

const _: () = assert!(BSON_OBJECT_SIZE_MAX == 16 * 1024 * 1024);
const _: () = assert!(MESSAGE_SIZE_MAX == 48_000_000);
const _: () = assert!(WRITE_BATCH_SIZE_MAX == 100_000);
