//! MongoDB wire messages: strict framing, OP_MSG, and the legacy OP_QUERY/OP_REPLY handshake pair.
//!
//! The crate turns one complete frame of bytes into a [`Message`] and back, and
//! nothing more: no sockets, no command semantics. Every way a frame can be
//! wrong is a typed [`Error`]; no input makes the decoder panic (a fuzz target in
//! `tests/fuzz` checks this). Framing works in two steps so an event loop can use
//! it on partial input: [`frame_length`] reads and checks the length prefix of
//! the bytes received so far, and [`decode`] parses one complete frame.
//!
//! Byte order on the wire is little-endian throughout; every conversion here
//! spells it out.
#![forbid(unsafe_code)]
#![cfg_attr(not(test), deny(clippy::indexing_slicing))]

mod bson_check;
pub mod buffers;
pub mod compression;
mod crc32c;
mod error;
mod header;
pub mod limits;
mod message;
mod op_msg;
mod op_query;
mod reader;

pub use compression::{Compressor, OP_COMPRESSED};
pub use crc32c::crc32c;
pub use error::Error;
pub use header::{Header, OpCode, frame_length};
pub use message::{Message, decode};
pub use op_msg::{DocumentSequence, MsgFlags, OpMsg, encode_reply_flagged_into, encode_reply_into};
pub use op_query::{OpQuery, OpReply};

/// A `Result` whose error is this crate's [`Error`].
pub type Result<T> = std::result::Result<T, Error>;
