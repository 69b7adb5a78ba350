//! The legacy pair drivers still use for the first handshake: OP_QUERY (2004) in, OP_REPLY (1) out.
//!
//! OP_QUERY after the header: `flags: i32`, `fullCollectionName: cstring`,
//! `numberToSkip: i32`, `numberToReturn: i32`, `query: document`, and an optional
//! `returnFieldsSelector: document`. OP_REPLY: `responseFlags: i32`,
//! `cursorID: i64`, `startingFrom: i32`, `numberReturned: i32`, then the documents.

use crate::bson_check::validate;
use crate::header::{Header, OpCode};
use crate::limits::{BSON_COMMAND_OVERHEAD, BSON_OBJECT_SIZE_MAX, HEADER_LEN, MESSAGE_LEN_MAX};
use crate::reader::Reader;
use crate::{Error, Result};
use bson::RawDocumentBuf;

/// A decoded OP_QUERY.
#[derive(Debug, Clone, PartialEq)]
pub struct OpQuery {
    /// The legacy query flags (tailable, secondaryOk, ...), passed through unread.
    pub flags: i32,
    /// `db.collection`; a command goes to `db.$cmd`.
    pub full_collection_name: String,
    /// Documents to skip.
    pub number_to_skip: i32,
    /// Batch size requested.
    pub number_to_return: i32,
    /// The query or command document.
    pub query: RawDocumentBuf,
    /// The optional projection.
    pub return_fields_selector: Option<RawDocumentBuf>,
}

impl OpQuery {
    pub(crate) fn decode(frame: &[u8]) -> Result<OpQuery> {
        let after_header = frame.get(HEADER_LEN..).unwrap_or_default();
        let mut reader = Reader::new(after_header, HEADER_LEN);
        let flags = reader.i32_le("query flags")?;
        let full_collection_name = reader.cstring()?.to_owned();
        let number_to_skip = reader.i32_le("numberToSkip")?;
        let number_to_return = reader.i32_le("numberToReturn")?;
        let max = BSON_OBJECT_SIZE_MAX + BSON_COMMAND_OVERHEAD;
        let offset = reader.offset();
        let query = validate(reader.document_bytes(max)?, offset)?.to_owned();
        let return_fields_selector = if reader.is_empty() {
            None
        } else {
            let offset = reader.offset();
            Some(validate(reader.document_bytes(max)?, offset)?.to_owned())
        };
        if !reader.is_empty() {
            return Err(Error::SectionMismatch {
                offset: reader.offset(),
                reason: "bytes left over after the last OP_QUERY document",
            });
        }
        Ok(OpQuery {
            flags,
            full_collection_name,
            number_to_skip,
            number_to_return,
            query,
            return_fields_selector,
        })
    }

    /// The database part of `full_collection_name` (before the first dot).
    #[must_use]
    pub fn database(&self) -> &str {
        self.full_collection_name
            .split('.')
            .next()
            .unwrap_or_default()
    }

    /// The collection part of `full_collection_name` (after the first dot).
    #[must_use]
    pub fn collection(&self) -> &str {
        self.full_collection_name
            .split_once('.')
            .map(|(_, c)| c)
            .unwrap_or_default()
    }

    /// Encodes the query (clients and tests send these; the server only reads them).
    pub fn encode(&self, request_id: i32) -> Result<Vec<u8>> {
        let mut out = Vec::new();
        Header {
            message_length: 0,
            request_id,
            response_to: 0,
            op_code: OpCode::Query.code(),
        }
        .write(&mut out);
        out.extend_from_slice(&self.flags.to_le_bytes());
        out.extend_from_slice(self.full_collection_name.as_bytes());
        out.push(0);
        out.extend_from_slice(&self.number_to_skip.to_le_bytes());
        out.extend_from_slice(&self.number_to_return.to_le_bytes());
        out.extend_from_slice(self.query.as_bytes());
        if let Some(selector) = &self.return_fields_selector {
            out.extend_from_slice(selector.as_bytes());
        }
        patch_length(&mut out)?;
        Ok(out)
    }
}

/// An OP_REPLY: the answer to an OP_QUERY.
#[derive(Debug, Clone, PartialEq)]
pub struct OpReply {
    /// Response flags (bit 1 QueryFailure, bit 3 AwaitCapable).
    pub response_flags: i32,
    /// The cursor id; always zero for command replies.
    pub cursor_id: i64,
    /// Position of the first document in the cursor.
    pub starting_from: i32,
    /// The documents returned.
    pub documents: Vec<RawDocumentBuf>,
}

impl OpReply {
    /// `AwaitCapable`, which mongod sets on every reply.
    pub const AWAIT_CAPABLE: i32 = 1 << 3;
    /// `QueryFailure`: the single document is an `$err` document.
    pub const QUERY_FAILURE: i32 = 1 << 1;

    /// A reply carrying one command-reply document.
    #[must_use]
    pub fn single(document: RawDocumentBuf) -> OpReply {
        OpReply {
            response_flags: Self::AWAIT_CAPABLE,
            cursor_id: 0,
            starting_from: 0,
            documents: vec![document],
        }
    }

    /// Encodes the reply as an answer to `response_to`.
    pub fn encode(&self, request_id: i32, response_to: i32) -> Result<Vec<u8>> {
        let mut out = Vec::new();
        Header {
            message_length: 0,
            request_id,
            response_to,
            op_code: OpCode::Reply.code(),
        }
        .write(&mut out);
        out.extend_from_slice(&self.response_flags.to_le_bytes());
        out.extend_from_slice(&self.cursor_id.to_le_bytes());
        out.extend_from_slice(&self.starting_from.to_le_bytes());
        let count = i32::try_from(self.documents.len()).unwrap_or(i32::MAX);
        out.extend_from_slice(&count.to_le_bytes());
        for document in &self.documents {
            out.extend_from_slice(document.as_bytes());
        }
        patch_length(&mut out)?;
        Ok(out)
    }

    /// Decodes the part of `frame` after the header (clients and tests read these).
    pub(crate) fn decode(frame: &[u8]) -> Result<OpReply> {
        let after_header = frame.get(HEADER_LEN..).unwrap_or_default();
        let mut reader = Reader::new(after_header, HEADER_LEN);
        let response_flags = reader.i32_le("response flags")?;
        let cursor_id = reader.i64_le("cursor id")?;
        let starting_from = reader.i32_le("starting from")?;
        let declared = reader.i32_le("number returned")?;
        let mut documents = Vec::new();
        while !reader.is_empty() {
            let offset = reader.offset();
            documents.push(validate(reader.document_bytes(MESSAGE_LEN_MAX)?, offset)?.to_owned());
        }
        if usize::try_from(declared).ok() != Some(documents.len()) {
            return Err(Error::SectionMismatch {
                offset: HEADER_LEN + 16,
                reason: "numberReturned does not match the documents present",
            });
        }
        Ok(OpReply {
            response_flags,
            cursor_id,
            starting_from,
            documents,
        })
    }
}

fn patch_length(out: &mut [u8]) -> Result<()> {
    let size = out.len();
    let length = i32::try_from(size)
        .ok()
        .filter(|_| size <= MESSAGE_LEN_MAX)
        .ok_or(Error::MessageTooLarge {
            size,
            max: MESSAGE_LEN_MAX,
        })?;
    let slot = out.get_mut(..4).expect("header was written first");
    slot.copy_from_slice(&length.to_le_bytes());
    Ok(())
}
