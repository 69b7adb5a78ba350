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

/// Documents in a first batch (find, aggregate) when the client names no `batchSize`.
pub const BATCH_SIZE_DEFAULT: usize = 101;

/// The most document bytes one cursor batch carries, as mongod: a batch stops before the
/// document that would pass this, but always holds at least one document.
pub const BATCH_BYTES_MAX: usize = BSON_OBJECT_SIZE_MAX;

/// How long a cursor may sit idle before it is reaped (mongod's `cursorTimeoutMillis`).
pub const CURSOR_IDLE_TIMEOUT_MS: i64 = 10 * 60 * 1000;

/// How often, at most, the cursor registry looks for idle cursors.
pub const CURSOR_SWEEP_INTERVAL_MS: i64 = 1000;

/// The most bytes a blocking sort (or any result held whole for a cursor) may buffer,
/// mongod's `internalQueryMaxBlockingSortMemoryUsageBytes`.
pub const SORT_BYTES_MAX: usize = 100 * 1024 * 1024;

/// The most estimated bytes of groups a `$group` holds in memory, mongod's
/// `internalDocumentSourceGroupMaxMemoryBytes`.
pub const GROUP_BYTES_MAX: usize = 100 * 1024 * 1024;

/// The most bytes of values `distinct` returns (mongod's "distinct too big, 16mb cap").
pub const DISTINCT_BYTES_MAX: usize = BSON_OBJECT_SIZE_MAX;

/// Documents examined between two looks at the clock for `maxTimeMS`.
pub const DEADLINE_CHECK_INTERVAL: usize = 64;

/// The largest length a compressed record may claim: no stored document is larger than a
/// wire message, so a larger claim is corruption (and never an allocation).
pub const STORED_RECORD_MAX: usize = MESSAGE_SIZE_MAX;

const _: () = assert!(BSON_OBJECT_SIZE_MAX == 16 * 1024 * 1024);
const _: () = assert!(STORED_RECORD_MAX > BSON_OBJECT_SIZE_MAX);
const _: () = assert!(BATCH_BYTES_MAX < MESSAGE_SIZE_MAX / 2);
const _: () = assert!(CURSOR_SWEEP_INTERVAL_MS < CURSOR_IDLE_TIMEOUT_MS);
const _: () = assert!(DEADLINE_CHECK_INTERVAL > 0);
const _: () = assert!(MESSAGE_SIZE_MAX == 48_000_000);
const _: () = assert!(WRITE_BATCH_SIZE_MAX == 100_000);
