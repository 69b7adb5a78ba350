//! The 16-byte message header, the opcodes, and length-prefix framing for partial input.

use crate::Error;
use crate::limits::{HEADER_LEN, MESSAGE_LEN_MAX, MESSAGE_LEN_MIN};
use crate::reader::Reader;

/// The opcodes this crate knows by name. Everything else is refused by [`crate::decode`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum OpCode {
    /// OP_REPLY (1): the legacy reply, sent only in answer to OP_QUERY.
    Reply,
    /// OP_QUERY (2004): accepted only for the first handshake.
    Query,
    /// OP_MSG (2013): every modern command.
    Msg,
}

impl OpCode {
    /// The number on the wire.
    #[must_use]
    pub fn code(self) -> i32 {
        match self {
            OpCode::Reply => 1,
            OpCode::Query => 2004,
            OpCode::Msg => 2013,
        }
    }
}

/// The standard message header. Lengths and ids are signed 32-bit on the wire.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Header {
    /// Total frame length including this header.
    pub message_length: i32,
    /// The sender's id for this message.
    pub request_id: i32,
    /// For a reply, the `request_id` it answers; zero otherwise.
    pub response_to: i32,
    /// The raw opcode (not yet checked against the supported set).
    pub op_code: i32,
}

impl Header {
    pub(crate) fn read(reader: &mut Reader<'_>) -> Result<Header, Error> {
        Ok(Header {
            message_length: reader.i32_le("message length")?,
            request_id: reader.i32_le("request id")?,
            response_to: reader.i32_le("response to")?,
            op_code: reader.i32_le("opcode")?,
        })
    }

    /// Appends the header's 16 bytes, little-endian.
    pub fn write(&self, out: &mut Vec<u8>) {
        out.extend_from_slice(&self.message_length.to_le_bytes());
        out.extend_from_slice(&self.request_id.to_le_bytes());
        out.extend_from_slice(&self.response_to.to_le_bytes());
        out.extend_from_slice(&self.op_code.to_le_bytes());
    }
}

/// The length of the frame that starts `received`, once its 4-byte prefix has arrived.
///
/// Returns `Ok(None)` while fewer than four bytes are available, and an error as
/// soon as the prefix is outside `[MESSAGE_LEN_MIN, MESSAGE_LEN_MAX]`, so an event
/// loop can refuse a 2 GB prefix before buffering anything.
pub fn frame_length(received: &[u8]) -> Result<Option<usize>, Error> {
    let Some(prefix) = received.get(..4).and_then(|b| <[u8; 4]>::try_from(b).ok()) else {
        return Ok(None);
    };
    let length = i32::from_le_bytes(prefix);
    match usize::try_from(length) {
        Ok(length) if (MESSAGE_LEN_MIN..=MESSAGE_LEN_MAX).contains(&length) => Ok(Some(length)),
        _ => Err(Error::LengthOutOfRange {
            length: i64::from(length),
            min: MESSAGE_LEN_MIN,
            max: MESSAGE_LEN_MAX,
        }),
    }
}

const _: () = assert!(HEADER_LEN == 4 * 4);

#[cfg(test)]
mod tests {
    use super::frame_length;
    use crate::Error;

    #[test]
    fn frame_length_waits_for_the_prefix() {
        assert_eq!(frame_length(&[16, 0, 0]), Ok(None));
        assert_eq!(frame_length(&[16, 0, 0, 0]), Ok(Some(16)));
    }

    #[test]
    fn frame_length_refuses_out_of_range_prefixes() {
        for length in [-1i32, 0, 15, 48_000_001, i32::MAX, i32::MIN] {
            let result = frame_length(&length.to_le_bytes());
            assert!(
                matches!(result, Err(Error::LengthOutOfRange { .. })),
                "{length}"
            );
        }
        assert_eq!(
            frame_length(&48_000_000i32.to_le_bytes()),
            Ok(Some(48_000_000))
        );
    }
}
