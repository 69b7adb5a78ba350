//! The ways a wire frame can be wrong, as one typed error.

/// Why a frame was refused. Each variant says what was wrong and, where it
/// helps, where (a byte offset from the start of the frame).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// The length prefix is outside `[MESSAGE_LEN_MIN, MESSAGE_LEN_MAX]`.
    #[error("message length {length} is outside [{min}, {max}]")]
    LengthOutOfRange {
        /// The length the prefix claimed (as a signed 32-bit value).
        length: i64,
        /// The smallest legal length.
        min: usize,
        /// The largest legal length.
        max: usize,
    },
    /// The frame handed to the decoder is not as long as its length prefix says.
    #[error("frame length {actual} does not match its length prefix {declared}")]
    LengthMismatch {
        /// The length the prefix claimed.
        declared: usize,
        /// The bytes actually supplied.
        actual: usize,
    },
    /// The frame ended in the middle of a field.
    #[error("truncated at offset {offset}: {what} needs {needed} more byte(s)")]
    Truncated {
        /// Where reading stopped.
        offset: usize,
        /// Which field was being read.
        what: &'static str,
        /// How many more bytes it needed.
        needed: usize,
    },
    /// An opcode this server does not speak (only OP_MSG and OP_QUERY are accepted).
    #[error("unsupported opcode {opcode}")]
    UnsupportedOpcode {
        /// The opcode from the header.
        opcode: i32,
    },
    /// OP_MSG flag bits 0-15 must be understood; one of them was unknown.
    #[error("unknown required OP_MSG flag bits {flags:#010x}")]
    UnknownRequiredFlags {
        /// The offending bits.
        flags: u32,
    },
    /// The CRC-32C at the end of an OP_MSG does not match its contents.
    #[error(
        "OP_MSG checksum mismatch: frame says {declared:#010x}, contents give {computed:#010x}"
    )]
    ChecksumMismatch {
        /// The checksum carried by the frame.
        declared: u32,
        /// The checksum of the frame's bytes.
        computed: u32,
    },
    /// A section kind other than 0 (body) or 1 (document sequence).
    #[error("unknown OP_MSG section kind {kind} at offset {offset}")]
    UnknownSectionKind {
        /// The kind byte.
        kind: u8,
        /// Where the section starts.
        offset: usize,
    },
    /// An OP_MSG without exactly one body section.
    #[error("OP_MSG has {count} body sections; exactly one is required")]
    BodyCount {
        /// How many kind-0 sections were found.
        count: usize,
    },
    /// A section's length does not agree with its contents or the frame.
    #[error("section at offset {offset} does not add up: {reason}")]
    SectionMismatch {
        /// Where the section starts.
        offset: usize,
        /// What did not add up.
        reason: &'static str,
    },
    /// Two document sequences, or a sequence and a body field, share an identifier.
    #[error("duplicate document sequence identifier {identifier:?}")]
    DuplicateSequence {
        /// The repeated identifier.
        identifier: String,
    },
    /// A C string (field or collection name) without its terminating zero, or not UTF-8.
    #[error("bad C string at offset {offset}: {reason}")]
    BadCString {
        /// Where the string starts.
        offset: usize,
        /// Why it was refused.
        reason: &'static str,
    },
    /// A document that is not valid BSON.
    #[error("invalid BSON at offset {offset}: {reason}")]
    InvalidBson {
        /// Where the document starts in the frame.
        offset: usize,
        /// What was wrong.
        reason: String,
    },
    /// A document larger than the limit for its place in the message.
    #[error("document of {size} bytes at offset {offset} exceeds the limit of {max}")]
    DocumentTooLarge {
        /// Where the document starts.
        offset: usize,
        /// Its declared size.
        size: usize,
        /// The limit.
        max: usize,
    },
    /// A message that would be larger than `MESSAGE_LEN_MAX` when built.
    #[error("message of {size} bytes exceeds the limit of {max}")]
    MessageTooLarge {
        /// The size the message would have.
        size: usize,
        /// The limit.
        max: usize,
    },
    /// An OP_COMPRESSED naming a compressor this server does not have enabled (or none).
    #[error("unsupported or disabled compressor id {id}")]
    UnsupportedCompressor {
        /// The compressor id from the message.
        id: u8,
    },
    /// An OP_COMPRESSED whose announced uncompressed size is negative or past the limit.
    #[error("uncompressed size {size} is outside [0, {max}]")]
    UncompressedSizeOutOfRange {
        /// The size the message announced.
        size: i64,
        /// The largest legal size.
        max: usize,
    },
    /// A compressed payload that does not decompress to exactly its announced size.
    #[error("{compressor} payload decompresses to {actual} bytes, not the announced {declared}")]
    UncompressedSizeMismatch {
        /// The compressor's name.
        compressor: &'static str,
        /// The size the message announced.
        declared: usize,
        /// What the payload holds (one more than announced: at least that).
        actual: usize,
    },
    /// A compressed payload the decompressor refused.
    #[error("{compressor} payload does not decompress: {reason}")]
    Decompression {
        /// The compressor's name.
        compressor: &'static str,
        /// The decompressor's words.
        reason: String,
    },
    /// A message the compressor could not compress.
    #[error("{compressor} could not compress the message: {reason}")]
    Compression {
        /// The compressor's name.
        compressor: &'static str,
        /// The compressor's words.
        reason: String,
    },
    /// An OP_COMPRESSED wrapping another OP_COMPRESSED.
    #[error("an OP_COMPRESSED message may not wrap another")]
    NestedCompression,
}
