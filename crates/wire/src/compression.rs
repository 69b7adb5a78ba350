//! OP_COMPRESSED (opcode 2012): one message of another opcode with its body compressed by
//! snappy, zlib or zstd (or `noop`), as the wire protocol's compression specification
//! defines it.
//!
//! Invariants:
//! - The announced uncompressed size is checked against [`MESSAGE_LEN_MAX`] before anything
//!   is allocated; the buffer is exactly that size plus the header.
//! - A decompressor's output must be exactly the announced size: shorter or longer is
//!   refused ([`Error::UncompressedSizeMismatch`]), and no byte of the result is one the
//!   decompressor did not write (the buffer starts zeroed and every byte is then
//!   overwritten or the frame refused): the bug class of CVE-2025-14847, where a server
//!   handed out uninitialised heap bytes after a lying zlib size.
//! - Only the compressors the caller enables are accepted; an OP_COMPRESSED inside an
//!   OP_COMPRESSED is refused.

use crate::header::Header;
use crate::limits::{HEADER_LEN, MESSAGE_LEN_MAX};
use crate::reader::Reader;
use crate::{Error, frame_length};
use std::io::Write;

/// The opcode of a compressed message.
pub const OP_COMPRESSED: i32 = 2012;

/// Bytes between the header and the compressed payload: original opcode, uncompressed
/// size, compressor id.
const PREFIX_LEN: usize = 4 + 4 + 1;

/// zstd's level for replies: its fastest standard level (a reply is compressed once, on
/// the request's time).
const ZSTD_LEVEL: i32 = 1;

/// zlib's level for replies: its fastest (level 6, zlib's default, took 16x as long as
/// sending 16 MB uncompressed over loopback; level 1 compresses text nearly as well).
const ZLIB_LEVEL: u32 = 1;

/// A compressor of the wire protocol, by its id on the wire and its name in `hello`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Compressor {
    /// Id 0: the payload is stored as it is (for tests).
    Noop,
    /// Id 1: snappy's raw (unframed) format.
    Snappy,
    /// Id 2: zlib (RFC 1950: deflate with its header and Adler-32).
    Zlib,
    /// Id 3: a zstd frame.
    Zstd,
}

impl Compressor {
    /// mongod's default `net.compression.compressors`: `snappy,zstd,zlib`.
    pub const DEFAULT: [Compressor; 3] = [Compressor::Snappy, Compressor::Zstd, Compressor::Zlib];

    /// The id on the wire.
    #[must_use]
    pub fn id(self) -> u8 {
        match self {
            Compressor::Noop => 0,
            Compressor::Snappy => 1,
            Compressor::Zlib => 2,
            Compressor::Zstd => 3,
        }
    }

    /// The compressor with wire id `id`.
    #[must_use]
    pub fn from_id(id: u8) -> Option<Compressor> {
        match id {
            0 => Some(Compressor::Noop),
            1 => Some(Compressor::Snappy),
            2 => Some(Compressor::Zlib),
            3 => Some(Compressor::Zstd),
            _ => None,
        }
    }

    /// The name `hello`'s `compression` array and `--networkMessageCompressors` use.
    #[must_use]
    pub fn name(self) -> &'static str {
        match self {
            Compressor::Noop => "noop",
            Compressor::Snappy => "snappy",
            Compressor::Zlib => "zlib",
            Compressor::Zstd => "zstd",
        }
    }

    /// The compressor named `name`.
    #[must_use]
    pub fn from_name(name: &str) -> Option<Compressor> {
        [
            Compressor::Noop,
            Compressor::Snappy,
            Compressor::Zlib,
            Compressor::Zstd,
        ]
        .into_iter()
        .find(|c| c.name() == name)
    }
}

/// Whether `frame` (at least a header) is an OP_COMPRESSED message.
#[must_use]
pub fn is_compressed(frame: &[u8]) -> bool {
    frame
        .get(12..16)
        .and_then(|b| <[u8; 4]>::try_from(b).ok())
        .is_some_and(|code| i32::from_le_bytes(code) == OP_COMPRESSED)
}

/// The message a complete OP_COMPRESSED `frame` wraps, as the uncompressed frame it stands
/// for (the same request id and `responseTo`, the original opcode, its length), and the
/// compressor it came with. Refused: a compressor not in `enabled`, a size past the
/// message limit, a payload that does not decompress to exactly the announced size, a
/// compressed message inside one. As with [`crate::decode`], the header comes back with the
/// error when it could be read.
pub fn decompress(
    frame: &[u8],
    enabled: &[Compressor],
) -> Result<(Vec<u8>, Compressor), (Option<Header>, Error)> {
    let declared = match frame_length(frame) {
        Ok(Some(length)) => length,
        Ok(None) => {
            let error = Error::Truncated {
                offset: frame.len(),
                what: "message length",
                needed: 4 - frame.len(),
            };
            return Err((None, error));
        }
        Err(error) => return Err((None, error)),
    };
    if declared != frame.len() {
        let error = Error::LengthMismatch {
            declared,
            actual: frame.len(),
        };
        return Err((None, error));
    }
    let mut reader = Reader::new(frame, 0);
    let header = Header::read(&mut reader).map_err(|error| (None, error))?;
    decompress_body(header, &mut reader, enabled).map_err(|error| (Some(header), error))
}

fn decompress_body(
    header: Header,
    reader: &mut Reader<'_>,
    enabled: &[Compressor],
) -> Result<(Vec<u8>, Compressor), Error> {
    let original = reader.i32_le("original opcode")?;
    let size = reader.i32_le("uncompressed size")?;
    let id = reader.u8("compressor id")?;
    let payload = reader.take(reader.remaining(), "compressed message")?;
    if original == OP_COMPRESSED {
        return Err(Error::NestedCompression);
    }
    let size = usize::try_from(size)
        .ok()
        .filter(|&size| size <= MESSAGE_LEN_MAX - HEADER_LEN)
        .ok_or(Error::UncompressedSizeOutOfRange {
            size: i64::from(size),
            max: MESSAGE_LEN_MAX - HEADER_LEN,
        })?;
    let compressor = Compressor::from_id(id)
        .filter(|c| enabled.contains(c))
        .ok_or(Error::UnsupportedCompressor { id })?;
    let length = HEADER_LEN + size;
    let inner = Header {
        message_length: i32::try_from(length).expect("bounded by MESSAGE_LEN_MAX"),
        op_code: original,
        ..header
    };
    let mut out = Vec::with_capacity(length);
    inner.write(&mut out);
    out.resize(length, 0);
    let body = out.get_mut(HEADER_LEN..).expect("the header was written");
    let written = decompress_into(compressor, payload, body)?;
    if written != size {
        return Err(Error::UncompressedSizeMismatch {
            compressor: compressor.name(),
            declared: size,
            actual: written,
        });
    }
    Ok((out, compressor))
}

/// Decompresses `payload` into `out` (the announced size); returns the bytes the payload
/// holds, `out.len() + 1` when it holds more than fit (a longer message than announced).
fn decompress_into(compressor: Compressor, payload: &[u8], out: &mut [u8]) -> Result<usize, Error> {
    let failed = |reason: String| Error::Decompression {
        compressor: compressor.name(),
        reason,
    };
    match compressor {
        Compressor::Noop => {
            if payload.len() == out.len() {
                out.copy_from_slice(payload);
            }
            Ok(payload.len())
        }
        Compressor::Snappy => {
            // Snappy's raw format starts with its decompressed length: checked first, so
            // the decoder never writes past what was announced.
            let len = snap::raw::decompress_len(payload).map_err(|e| failed(e.to_string()))?;
            if len != out.len() {
                return Ok(len);
            }
            snap::raw::Decoder::new()
                .decompress(payload, out)
                .map_err(|e| failed(e.to_string()))
        }
        Compressor::Zlib => {
            let mut inflate = flate2::Decompress::new(true);
            let status = inflate
                .decompress(payload, out, flate2::FlushDecompress::Finish)
                .map_err(|e| failed(e.to_string()))?;
            let written = usize::try_from(inflate.total_out()).unwrap_or(usize::MAX);
            match status {
                flate2::Status::StreamEnd => Ok(written),
                // The output is full and the stream goes on: longer than announced.
                _ if written == out.len() => Ok(out.len() + 1),
                _ => Err(failed("the zlib stream ends early".into())),
            }
        }
        Compressor::Zstd => {
            // A frame that names its content size is checked against it before decoding.
            if let Ok(Some(len)) = zstd::zstd_safe::get_frame_content_size(payload)
                && len != out.len() as u64
            {
                return Ok(usize::try_from(len).unwrap_or(usize::MAX));
            }
            let mut decoder = zstd::bulk::Decompressor::new().map_err(|e| failed(e.to_string()))?;
            match decoder.decompress_to_buffer(payload, out) {
                Ok(written) => Ok(written),
                // zstd says the destination is too small: more than announced.
                Err(error) if error.to_string().contains("too small") => Ok(out.len() + 1),
                Err(error) => Err(failed(error.to_string())),
            }
        }
    }
}

/// `frame` (a complete message of another opcode) as an OP_COMPRESSED message with the same
/// request id and `responseTo`. Fails when the result would exceed the message limit (a
/// payload that does not compress); the caller then sends `frame` as it is.
pub fn compress(frame: &[u8], compressor: Compressor) -> Result<Vec<u8>, Error> {
    let mut reader = Reader::new(frame, 0);
    let header = Header::read(&mut reader)?;
    if header.op_code == OP_COMPRESSED {
        return Err(Error::NestedCompression);
    }
    let body = reader.take(reader.remaining(), "message body")?;
    let size = i32::try_from(body.len()).map_err(|_| Error::MessageTooLarge {
        size: frame.len(),
        max: MESSAGE_LEN_MAX,
    })?;
    let failed = |reason: String| Error::Compression {
        compressor: compressor.name(),
        reason,
    };
    let payload = match compressor {
        Compressor::Noop => body.to_vec(),
        Compressor::Snappy => snap::raw::Encoder::new()
            .compress_vec(body)
            .map_err(|e| failed(e.to_string()))?,
        Compressor::Zlib => {
            let buffer = Vec::with_capacity(body.len() / 2);
            let mut encoder =
                flate2::write::ZlibEncoder::new(buffer, flate2::Compression::new(ZLIB_LEVEL));
            encoder.write_all(body).map_err(|e| failed(e.to_string()))?;
            encoder.finish().map_err(|e| failed(e.to_string()))?
        }
        Compressor::Zstd => {
            zstd::bulk::compress(body, ZSTD_LEVEL).map_err(|e| failed(e.to_string()))?
        }
    };
    let length = HEADER_LEN + PREFIX_LEN + payload.len();
    if length > MESSAGE_LEN_MAX {
        return Err(Error::MessageTooLarge {
            size: length,
            max: MESSAGE_LEN_MAX,
        });
    }
    let outer = Header {
        message_length: i32::try_from(length).expect("bounded by MESSAGE_LEN_MAX"),
        op_code: OP_COMPRESSED,
        ..header
    };
    let mut out = Vec::with_capacity(length);
    outer.write(&mut out);
    out.extend_from_slice(&header.op_code.to_le_bytes());
    out.extend_from_slice(&size.to_le_bytes());
    out.push(compressor.id());
    out.extend_from_slice(&payload);
    Ok(out)
}
