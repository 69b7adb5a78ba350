//! OP_MSG (opcode 2013): flag bits, the body section, document sequences, and the CRC-32C trailer.
//!
//! Layout after the header: `flagBits: u32`, then sections until the end of the
//! frame (or until the 4-byte checksum when `checksumPresent` is set). A kind-0
//! section is one BSON document (the command body, exactly one per message); a
//! kind-1 section is `size: i32` (counting itself), a C-string identifier, and
//! zero or more documents that must exactly fill `size`.

use crate::bson_check::validate;
use crate::crc32c::crc32c;
use crate::header::{Header, OpCode};
use crate::limits::{BSON_COMMAND_OVERHEAD, BSON_OBJECT_SIZE_MAX, HEADER_LEN, MESSAGE_LEN_MAX};
use crate::reader::Reader;
use crate::{Error, Result};
use bson::{RawDocument, RawDocumentBuf};
use std::borrow::Cow;

/// OP_MSG flag bits.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct MsgFlags(pub u32);

impl MsgFlags {
    /// Bit 0: the message ends with a CRC-32C of everything before it.
    pub const CHECKSUM_PRESENT: u32 = 1;
    /// Bit 1: the sender will send another message without waiting for a reply.
    pub const MORE_TO_COME: u32 = 1 << 1;
    /// Bit 16: the client accepts several replies to this request (exhaust cursors).
    pub const EXHAUST_ALLOWED: u32 = 1 << 16;
    /// Bits 0-15 must be understood by the receiver; these are the ones defined.
    const REQUIRED_KNOWN: u32 = Self::CHECKSUM_PRESENT | Self::MORE_TO_COME;
    const REQUIRED_MASK: u32 = 0xffff;

    /// Whether `checksumPresent` is set.
    #[must_use]
    pub fn checksum_present(self) -> bool {
        self.0 & Self::CHECKSUM_PRESENT != 0
    }

    /// Whether `moreToCome` is set (for a request: send no reply).
    #[must_use]
    pub fn more_to_come(self) -> bool {
        self.0 & Self::MORE_TO_COME != 0
    }

    /// Whether `exhaustAllowed` is set.
    #[must_use]
    pub fn exhaust_allowed(self) -> bool {
        self.0 & Self::EXHAUST_ALLOWED != 0
    }
}

/// A kind-1 section: documents sent beside the body under one identifier (e.g. `documents`).
#[derive(Debug, Clone, PartialEq)]
pub struct DocumentSequence {
    /// The field name the documents belong to in the command.
    pub identifier: String,
    /// The documents, each already validated.
    pub documents: Vec<RawDocumentBuf>,
}

/// A decoded OP_MSG.
#[derive(Debug, Clone, PartialEq)]
pub struct OpMsg {
    /// The flag bits as received (or to be sent).
    pub flags: MsgFlags,
    /// The kind-0 section: the command or reply document.
    pub body: RawDocumentBuf,
    /// The kind-1 sections, in message order.
    pub sequences: Vec<DocumentSequence>,
}

/// The largest body: a maximum user document plus room for the command around it.
const BODY_SIZE_MAX: usize = BSON_OBJECT_SIZE_MAX + BSON_COMMAND_OVERHEAD;

impl OpMsg {
    /// A message with just a body and no flags.
    #[must_use]
    pub fn new(body: RawDocumentBuf) -> OpMsg {
        OpMsg {
            flags: MsgFlags::default(),
            body,
            sequences: Vec::new(),
        }
    }

    /// Decodes the part of `frame` after the header. `frame` is the whole message.
    pub(crate) fn decode(frame: &[u8]) -> Result<OpMsg> {
        let after_header = frame.get(HEADER_LEN..).unwrap_or_default();
        let mut reader = Reader::new(after_header, HEADER_LEN);
        let flags = MsgFlags(reader.u32_le("flag bits")?);
        let unknown = flags.0 & MsgFlags::REQUIRED_MASK & !MsgFlags::REQUIRED_KNOWN;
        if unknown != 0 {
            return Err(Error::UnknownRequiredFlags { flags: unknown });
        }
        let sections_start = reader.offset();
        let sections_end = if flags.checksum_present() {
            verify_checksum(frame)?
        } else {
            frame.len()
        };
        let sections = frame
            .get(sections_start..sections_end)
            .ok_or(Error::Truncated {
                offset: sections_start,
                what: "checksum",
                needed: sections_start.saturating_sub(sections_end),
            })?;
        let (body, sequences) = decode_sections(sections, sections_start)?;
        Ok(OpMsg {
            flags,
            body,
            sequences,
        })
    }

    /// The command as one document: the body with each document sequence added as
    /// an array field named by its identifier, the shape command handlers expect.
    /// Without sequences this borrows the body (the common case costs no copy).
    pub fn command_document(&self) -> Result<Cow<'_, RawDocument>> {
        if self.sequences.is_empty() {
            return Ok(Cow::Borrowed(&self.body));
        }
        let body = self.body.as_bytes();
        let mut out = Vec::with_capacity(body.len() + self.sequences_len());
        out.extend_from_slice(&[0, 0, 0, 0]);
        out.extend_from_slice(body.get(4..body.len() - 1).unwrap_or_default());
        for sequence in &self.sequences {
            if self.body.get(&sequence.identifier).ok().flatten().is_some() {
                return Err(Error::DuplicateSequence {
                    identifier: sequence.identifier.clone(),
                });
            }
            out.push(0x04);
            out.extend_from_slice(sequence.identifier.as_bytes());
            out.push(0);
            write_array(&mut out, &sequence.documents);
        }
        out.push(0);
        let length = i32::try_from(out.len()).map_err(|_| Error::MessageTooLarge {
            size: out.len(),
            max: MESSAGE_LEN_MAX,
        })?;
        out.splice(0..4, length.to_le_bytes());
        RawDocumentBuf::from_bytes(out)
            .map(Cow::Owned)
            .map_err(|error| Error::InvalidBson {
                offset: 0,
                reason: error.to_string(),
            })
    }

    fn sequences_len(&self) -> usize {
        let documents = self.sequences.iter().flat_map(|s| &s.documents);
        documents.map(|d| d.as_bytes().len() + 16).sum::<usize>() + 64 * self.sequences.len()
    }

    /// Encodes the message with the given ids, adding a checksum if the flag asks for one.
    pub fn encode(&self, request_id: i32, response_to: i32) -> Result<Vec<u8>> {
        let mut out = Vec::with_capacity(HEADER_LEN + 5 + self.body.as_bytes().len());
        Header {
            message_length: 0,
            request_id,
            response_to,
            op_code: OpCode::Msg.code(),
        }
        .write(&mut out);
        out.extend_from_slice(&self.flags.0.to_le_bytes());
        out.push(0);
        out.extend_from_slice(self.body.as_bytes());
        for sequence in &self.sequences {
            let start = out.len();
            out.push(1);
            out.extend_from_slice(&[0, 0, 0, 0]);
            out.extend_from_slice(sequence.identifier.as_bytes());
            out.push(0);
            for document in &sequence.documents {
                out.extend_from_slice(document.as_bytes());
            }
            let size = out.len() - start - 1;
            patch_i32(&mut out, start + 1, size)?;
        }
        if self.flags.checksum_present() {
            out.extend_from_slice(&[0, 0, 0, 0]);
        }
        let total = out.len();
        patch_i32(&mut out, 0, total)?;
        if self.flags.checksum_present() {
            let body_end = total - 4;
            let checksum = crc32c(out.get(..body_end).unwrap_or_default());
            out.truncate(body_end);
            out.extend_from_slice(&checksum.to_le_bytes());
        }
        Ok(out)
    }
}

/// Appends one OP_MSG reply (no flags, one body) to `out`: the allocation-light path
/// the server uses for every reply.
pub fn encode_reply_into(
    out: &mut Vec<u8>,
    request_id: i32,
    response_to: i32,
    body: &RawDocument,
) -> Result<()> {
    encode_reply_flagged_into(out, request_id, response_to, MsgFlags::default(), body)
}

/// [`encode_reply_into`] with `flags` (`moreToCome` on the replies of an exhaust stream but
/// its last); a checksum flag is not honoured here (no trailer is written).
pub fn encode_reply_flagged_into(
    out: &mut Vec<u8>,
    request_id: i32,
    response_to: i32,
    flags: MsgFlags,
    body: &RawDocument,
) -> Result<()> {
    assert!(
        !flags.checksum_present(),
        "reply flags {:#x} ask for a checksum",
        flags.0
    );
    let start = out.len();
    let total = HEADER_LEN + 4 + 1 + body.as_bytes().len();
    let length = i32::try_from(total)
        .ok()
        .filter(|&l| l as usize <= MESSAGE_LEN_MAX)
        .ok_or(Error::MessageTooLarge {
            size: total,
            max: MESSAGE_LEN_MAX,
        })?;
    out.reserve(total);
    Header {
        message_length: length,
        request_id,
        response_to,
        op_code: OpCode::Msg.code(),
    }
    .write(out);
    out.extend_from_slice(&flags.0.to_le_bytes());
    out.push(0);
    out.extend_from_slice(body.as_bytes());
    assert_eq!(out.len() - start, total, "reply length");
    Ok(())
}

fn patch_i32(out: &mut [u8], at: usize, value: usize) -> Result<()> {
    if value > MESSAGE_LEN_MAX {
        return Err(Error::MessageTooLarge {
            size: value,
            max: MESSAGE_LEN_MAX,
        });
    }
    let bytes = i32::try_from(value)
        .map_err(|_| Error::MessageTooLarge {
            size: value,
            max: MESSAGE_LEN_MAX,
        })?
        .to_le_bytes();
    let slot = out
        .get_mut(at..at + 4)
        .expect("patched field was written before");
    slot.copy_from_slice(&bytes);
    Ok(())
}

/// Checks the trailing CRC-32C and returns where the sections end.
fn verify_checksum(frame: &[u8]) -> Result<usize> {
    let Some(end) = frame
        .len()
        .checked_sub(4)
        .filter(|&end| end >= HEADER_LEN + 4)
    else {
        return Err(Error::Truncated {
            offset: frame.len(),
            what: "checksum",
            needed: 4,
        });
    };
    let (covered, trailer) = frame.split_at(end);
    let declared = trailer
        .try_into()
        .map(u32::from_le_bytes)
        .map_err(|_| Error::Truncated {
            offset: end,
            what: "checksum",
            needed: 4,
        })?;
    let computed = crc32c(covered);
    if declared != computed {
        return Err(Error::ChecksumMismatch { declared, computed });
    }
    Ok(end)
}

fn decode_sections(
    sections: &[u8],
    base: usize,
) -> Result<(RawDocumentBuf, Vec<DocumentSequence>)> {
    let mut reader = Reader::new(sections, base);
    let mut body: Option<RawDocumentBuf> = None;
    let mut body_count = 0;
    let mut sequences: Vec<DocumentSequence> = Vec::new();
    while !reader.is_empty() {
        let offset = reader.offset();
        match reader.u8("section kind")? {
            0 => {
                let document_offset = reader.offset();
                let bytes = reader.document_bytes(BODY_SIZE_MAX)?;
                body_count += 1;
                let document = validate(bytes, document_offset)?;
                body.get_or_insert_with(|| document.to_owned());
            }
            1 => {
                let sequence = decode_sequence(&mut reader, offset)?;
                if sequences
                    .iter()
                    .any(|s| s.identifier == sequence.identifier)
                {
                    return Err(Error::DuplicateSequence {
                        identifier: sequence.identifier,
                    });
                }
                sequences.push(sequence);
            }
            kind => return Err(Error::UnknownSectionKind { kind, offset }),
        }
    }
    match body {
        Some(body) if body_count == 1 => Ok((body, sequences)),
        _ => Err(Error::BodyCount { count: body_count }),
    }
}

fn decode_sequence(reader: &mut Reader<'_>, offset: usize) -> Result<DocumentSequence> {
    let declared = reader.i32_le("sequence size")?;
    let Some(payload_len) = usize::try_from(declared)
        .ok()
        .and_then(|s| s.checked_sub(4))
    else {
        return Err(Error::SectionMismatch {
            offset,
            reason: "size is smaller than its own field",
        });
    };
    if payload_len > reader.remaining() {
        return Err(Error::SectionMismatch {
            offset,
            reason: "size runs past the end of the message",
        });
    }
    let payload_offset = reader.offset();
    let mut inner = Reader::new(
        reader.take(payload_len, "document sequence")?,
        payload_offset,
    );
    let identifier = inner.cstring().map_err(|_| Error::SectionMismatch {
        offset,
        reason: "identifier is not a terminated UTF-8 string within the section",
    })?;
    let mut documents = Vec::new();
    while !inner.is_empty() {
        let document_offset = inner.offset();
        let bytes = inner
            // mongod's internal size, as for the body: a document over the 16 MiB a stored
            // document may have is the engine's to refuse, as a write error for itself.
            .document_bytes(BODY_SIZE_MAX)
            .map_err(|error| match error {
                Error::Truncated { .. } => Error::SectionMismatch {
                    offset,
                    reason: "documents do not exactly fill the declared size",
                },
                other => other,
            })?;
        documents.push(validate(bytes, document_offset)?.to_owned());
    }
    Ok(DocumentSequence {
        identifier: identifier.to_owned(),
        documents,
    })
}

fn write_array(out: &mut Vec<u8>, documents: &[RawDocumentBuf]) {
    let start = out.len();
    out.extend_from_slice(&[0, 0, 0, 0]);
    for (index, document) in documents.iter().enumerate() {
        out.push(0x03);
        out.extend_from_slice(index.to_string().as_bytes());
        out.push(0);
        out.extend_from_slice(document.as_bytes());
    }
    out.push(0);
    let length = i32::try_from(out.len() - start).unwrap_or(i32::MAX);
    out.splice(start..start + 4, length.to_le_bytes());
}
