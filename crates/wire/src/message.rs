//! One complete frame to a [`Message`]: header checks, then dispatch on the opcode.

use crate::header::{Header, OpCode};
use crate::op_msg::OpMsg;
use crate::op_query::{OpQuery, OpReply};
use crate::reader::Reader;
use crate::{Error, Result, frame_length};

/// A decoded message of one of the supported kinds.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub enum Message {
    /// OP_MSG: every modern request and reply.
    Msg(OpMsg),
    /// OP_QUERY: the legacy handshake.
    Query(OpQuery),
    /// OP_REPLY: what the server sends back to OP_QUERY (decoded for clients and tests).
    Reply(OpReply),
}

/// Decodes one complete frame (its length prefix must equal `frame.len()`).
///
/// The header is returned even for a refused opcode or a bad body when it could be
/// read, so a server can still answer with `responseTo` set: the error comes back
/// with the header in `Err((Some(header), error))`.
pub fn decode(frame: &[u8]) -> std::result::Result<(Header, Message), (Option<Header>, Error)> {
    let declared = match frame_length(frame) {
        Ok(Some(length)) => length,
        Ok(None) => {
            let needed = 4 - frame.len();
            let error = Error::Truncated {
                offset: frame.len(),
                what: "message length",
                needed,
            };
            return Err((None, error));
        }
        Err(error) => return Err((None, error)),
    };
    if declared != frame.len() {
        return Err((
            None,
            Error::LengthMismatch {
                declared,
                actual: frame.len(),
            },
        ));
    }
    let header = Header::read(&mut Reader::new(frame, 0)).map_err(|error| (None, error))?;
    decode_body(header, frame)
        .map(|message| (header, message))
        .map_err(|e| (Some(header), e))
}

fn decode_body(header: Header, frame: &[u8]) -> Result<Message> {
    match header.op_code {
        code if code == OpCode::Msg.code() => OpMsg::decode(frame).map(Message::Msg),
        code if code == OpCode::Query.code() => OpQuery::decode(frame).map(Message::Query),
        code if code == OpCode::Reply.code() => OpReply::decode(frame).map(Message::Reply),
        opcode => Err(Error::UnsupportedOpcode { opcode }),
    }
}
