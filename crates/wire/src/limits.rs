//! The size limits the wire layer enforces, shared with the server and the engine's hello reply.

/// Bytes in the standard message header (length, requestID, responseTo, opCode).
pub const HEADER_LEN: usize = 16;

/// The smallest legal frame: a bare header.
pub const MESSAGE_LEN_MIN: usize = HEADER_LEN;

/// The largest frame accepted or produced (`maxMessageSizeBytes` in hello).
pub const MESSAGE_LEN_MAX: usize = 48_000_000;

/// The largest BSON document a client may send (`maxBsonObjectSize` in hello).
pub const BSON_OBJECT_SIZE_MAX: usize = 16 * 1024 * 1024;

/// Command bodies may exceed `BSON_OBJECT_SIZE_MAX` by this much, as in mongod, so a
/// command wrapping a maximum-size document still fits.
pub const BSON_COMMAND_OVERHEAD: usize = 16 * 1024;

/// Nesting depth past which a document is refused (mongod allows 100 levels of user
/// data plus some for command wrappers). It also bounds the validator's recursion.
pub const BSON_DEPTH_MAX: usize = 180;

/// Documents in one OP_MSG batch (`maxWriteBatchSize` in hello).
pub const WRITE_BATCH_SIZE_MAX: usize = 100_000;

/// The smallest BSON document: a length and the terminating zero.
pub const BSON_DOCUMENT_LEN_MIN: usize = 5;

const _: () = assert!(MESSAGE_LEN_MIN == HEADER_LEN);
const _: () = assert!(BSON_OBJECT_SIZE_MAX + BSON_COMMAND_OVERHEAD < MESSAGE_LEN_MAX);
const _: () = assert!(MESSAGE_LEN_MAX <= i32::MAX as usize);
