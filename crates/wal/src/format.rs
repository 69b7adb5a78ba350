//! Byte layout of the log file: file header, block header, block payload and records
//! (documented byte by byte in `docs/format.md`, "Write-ahead log").
//!
//! Invariants:
//! - Every encoded block starts and ends on a `BLOCK_ALIGN` boundary (zero padding).
//! - The checksum covers the block header fields and the payload exactly as stored, so
//!   the decompressor only ever sees bytes whose checksum already passed.
//! - A block's payload decodes to exactly `record_count` records filling `len_raw`.
//! - Decoding outside bytes never panics; every defect is a `&'static str` reason.

#![deny(clippy::indexing_slicing)]

use crate::Lsn;
use crate::limits::{
    BLOCK_ALIGN, BLOCK_HEADER_LEN, BLOCK_LEN_RAW_MAX, FILE_HEADER_LEN, RECORD_HEADER_LEN,
    RECORD_LEN_MAX,
};
use xxhash_rust::xxh3::{Xxh3, xxh3_64};

/// Magic of the file header.
pub const FILE_MAGIC: [u8; 8] = *b"MFDBWAL\0";
/// Current format version.
pub const FORMAT_VERSION: u32 = 1;
/// Magic of a block header.
pub const BLOCK_MAGIC: [u8; 4] = *b"WBLK";

const FILE_HEADER_USED: usize = 64;
const FILE_CHECKSUM_AT: usize = 56;
const BLOCK_CHECKSUM_AT: usize = 40;

/// How a block's payload is stored.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Codec {
    /// Stored as is.
    Raw,
    /// LZ4 block format.
    Lz4,
}

impl Codec {
    fn to_byte(self) -> u8 {
        match self {
            Codec::Raw => 0,
            Codec::Lz4 => 1,
        }
    }

    fn from_byte(byte: u8) -> Option<Codec> {
        match byte {
            0 => Some(Codec::Raw),
            1 => Some(Codec::Lz4),
            _ => None,
        }
    }
}

/// The decoded file header.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FileHeader {
    /// Codec the writer prefers.
    pub codec: Codec,
    /// LSN of the first record in this file.
    pub lsn_start: Lsn,
    /// Seed of every block checksum in this file.
    pub salt: u64,
    /// The writer's target raw block size.
    pub block_len_target: u32,
}

impl FileHeader {
    /// The 512-byte header region.
    #[expect(
        clippy::indexing_slicing,
        reason = "constant ranges into a buffer of FILE_HEADER_LEN bytes"
    )]
    pub fn encode(&self) -> Vec<u8> {
        let mut bytes = vec![0u8; FILE_HEADER_LEN as usize];
        bytes[0..8].copy_from_slice(&FILE_MAGIC);
        bytes[8..12].copy_from_slice(&FORMAT_VERSION.to_le_bytes());
        bytes[12..16].copy_from_slice(&u32::from(self.codec.to_byte()).to_le_bytes());
        bytes[16..24].copy_from_slice(&self.lsn_start.0.to_le_bytes());
        bytes[24..32].copy_from_slice(&self.salt.to_le_bytes());
        bytes[32..36].copy_from_slice(&self.block_len_target.to_le_bytes());
        bytes[36..40].copy_from_slice(&(BLOCK_ALIGN as u32).to_le_bytes());
        let checksum = xxh3_64(&bytes[..FILE_CHECKSUM_AT]);
        bytes[FILE_CHECKSUM_AT..FILE_HEADER_USED].copy_from_slice(&checksum.to_le_bytes());
        bytes
    }

    /// Parses the header region (at least 64 bytes).
    pub fn decode(bytes: &[u8]) -> Result<FileHeader, &'static str> {
        let Some(bytes) = bytes.get(..FILE_HEADER_USED) else {
            return Err("file shorter than its header");
        };
        if bytes.get(0..8) != Some(&FILE_MAGIC[..]) {
            return Err("bad file magic");
        }
        let stored = read_u64(bytes, FILE_CHECKSUM_AT);
        if Some(stored) != bytes.get(..FILE_CHECKSUM_AT).map(xxh3_64) {
            return Err("file header checksum mismatch");
        }
        if read_u32(bytes, 8) != FORMAT_VERSION {
            return Err("unknown format version");
        }
        if u64::from(read_u32(bytes, 36)) != BLOCK_ALIGN {
            return Err("unsupported block alignment");
        }
        let codec = u8::try_from(read_u32(bytes, 12))
            .ok()
            .and_then(Codec::from_byte)
            .ok_or("unknown file codec")?;
        let lsn_start = Lsn(read_u64(bytes, 16));
        if lsn_start.0 == 0 {
            return Err("lsn_start is zero");
        }
        Ok(FileHeader {
            codec,
            lsn_start,
            salt: read_u64(bytes, 24),
            block_len_target: read_u32(bytes, 32),
        })
    }
}

/// The decoded header of one block.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct BlockHeader {
    /// Payload bytes as stored.
    pub len_stored: u32,
    /// Payload bytes after decompression.
    pub len_raw: u32,
    /// Records in the block.
    pub record_count: u32,
    /// LSN of the first record.
    pub lsn_first: Lsn,
    /// Offset known durable when the block was written.
    pub synced_end: u64,
    /// The writer's session.
    pub session: u32,
    /// How the payload is stored.
    pub codec: Codec,
    /// The stored checksum.
    pub checksum: u64,
}

impl BlockHeader {
    /// The LSN after the block's last record.
    pub fn lsn_end(&self) -> Lsn {
        Lsn(self
            .lsn_first
            .0
            .saturating_add(u64::from(self.record_count)))
    }

    /// Bytes the block occupies in the file, padding included.
    pub fn len_on_disk(&self) -> u64 {
        align_up(BLOCK_HEADER_LEN as u64 + u64::from(self.len_stored))
    }

    /// Parses and sanity-checks a block header (the checksum is checked later, with the
    /// payload).
    pub fn decode(bytes: &[u8]) -> Result<BlockHeader, &'static str> {
        let Some(bytes) = bytes.get(..BLOCK_HEADER_LEN) else {
            return Err("short block header");
        };
        if bytes.get(0..4) != Some(&BLOCK_MAGIC[..]) {
            return Err("bad block magic");
        }
        if bytes.get(37..40) != Some(&[0u8, 0, 0][..]) {
            return Err("reserved block header bytes not zero");
        }
        let codec = bytes
            .get(36)
            .copied()
            .and_then(Codec::from_byte)
            .ok_or("unknown block codec")?;
        let header = BlockHeader {
            len_stored: read_u32(bytes, 4),
            len_raw: read_u32(bytes, 8),
            record_count: read_u32(bytes, 12),
            lsn_first: Lsn(read_u64(bytes, 16)),
            synced_end: read_u64(bytes, 24),
            session: read_u32(bytes, 32),
            codec,
            checksum: read_u64(bytes, BLOCK_CHECKSUM_AT),
        };
        let len_raw = header.len_raw as usize;
        if len_raw > BLOCK_LEN_RAW_MAX {
            return Err("impossible raw block length");
        }
        if header.len_stored > header.len_raw {
            return Err("stored length larger than raw length");
        }
        if codec == Codec::Raw && header.len_stored != header.len_raw {
            return Err("raw block with differing lengths");
        }
        if header.record_count == 0 {
            return Err("block without records");
        }
        if header.record_count as usize > len_raw / RECORD_HEADER_LEN {
            return Err("impossible record count");
        }
        if header
            .lsn_first
            .0
            .checked_add(u64::from(header.record_count))
            .is_none()
        {
            return Err("lsn overflow");
        }
        Ok(header)
    }
}

/// Everything needed to seal a block, besides its records.
#[derive(Debug, Clone, Copy)]
pub struct BlockMeta {
    /// LSN of the first record.
    pub lsn_first: Lsn,
    /// Records in the payload.
    pub record_count: u32,
    /// Offset known durable now.
    pub synced_end: u64,
    /// The writer's session.
    pub session: u32,
    /// Preferred codec.
    pub codec: Codec,
    /// The file's checksum seed.
    pub salt: u64,
}

/// Appends one encoded block (header, payload, zero padding) to `out`, which must end on
/// a `BLOCK_ALIGN` boundary; `raw` is the framed records.
#[expect(
    clippy::indexing_slicing,
    reason = "ranges into `out` after resizing it to cover them"
)]
pub fn encode_block(out: &mut Vec<u8>, raw: &[u8], meta: &BlockMeta) {
    assert!(
        (out.len() as u64).is_multiple_of(BLOCK_ALIGN),
        "block must start aligned, at {}",
        out.len()
    );
    assert!(
        raw.len() <= BLOCK_LEN_RAW_MAX,
        "raw block of {} bytes",
        raw.len()
    );
    assert!(meta.record_count > 0, "block without records");
    let start = out.len();
    let payload_at = start + BLOCK_HEADER_LEN;
    let mut codec = Codec::Raw;
    let mut len_stored = raw.len();
    if meta.codec == Codec::Lz4 {
        out.resize(
            payload_at + lz4_flex::block::get_maximum_output_size(raw.len()),
            0,
        );
        if let Ok(n) = lz4_flex::block::compress_into(raw, &mut out[payload_at..])
            && n < raw.len()
        {
            codec = Codec::Lz4;
            len_stored = n;
        }
    }
    out.resize(payload_at + len_stored, 0);
    if codec == Codec::Raw {
        out[payload_at..].copy_from_slice(raw);
    }
    let header = &mut out[start..payload_at];
    header[0..4].copy_from_slice(&BLOCK_MAGIC);
    header[4..8].copy_from_slice(&(len_stored as u32).to_le_bytes());
    header[8..12].copy_from_slice(&(raw.len() as u32).to_le_bytes());
    header[12..16].copy_from_slice(&meta.record_count.to_le_bytes());
    header[16..24].copy_from_slice(&meta.lsn_first.0.to_le_bytes());
    header[24..32].copy_from_slice(&meta.synced_end.to_le_bytes());
    header[32..36].copy_from_slice(&meta.session.to_le_bytes());
    header[36] = codec.to_byte();
    header[37..40].fill(0);
    let checksum = block_checksum(meta.salt, &out[start..start + BLOCK_CHECKSUM_AT], {
        &out[payload_at..]
    });
    out[start + BLOCK_CHECKSUM_AT..payload_at].copy_from_slice(&checksum.to_le_bytes());
    let end = align_up(out.len() as u64) as usize;
    out.resize(end, 0);
}

/// The checksum of a block: header bytes 0..40, then the stored payload.
pub fn block_checksum(salt: u64, header_fields: &[u8], payload: &[u8]) -> u64 {
    let mut hasher = Xxh3::with_seed(salt);
    hasher.update(header_fields);
    hasher.update(payload);
    hasher.digest()
}

/// Checks the checksum of a block whose header decoded to `header`; `block` holds the
/// header bytes followed by at least `len_stored` payload bytes.
pub fn verify_block(header: &BlockHeader, block: &[u8], salt: u64) -> Result<(), &'static str> {
    let end = BLOCK_HEADER_LEN + header.len_stored as usize;
    let (Some(fields), Some(payload)) = (
        block.get(..BLOCK_CHECKSUM_AT),
        block.get(BLOCK_HEADER_LEN..end),
    ) else {
        return Err("block shorter than its length");
    };
    if block_checksum(salt, fields, payload) != header.checksum {
        return Err("block checksum mismatch");
    }
    Ok(())
}

/// Decompresses the verified payload of a block into `raw` (cleared first) and checks
/// that it frames exactly `record_count` records.
pub fn decode_payload(
    header: &BlockHeader,
    payload: &[u8],
    raw: &mut Vec<u8>,
) -> Result<(), &'static str> {
    raw.clear();
    match header.codec {
        Codec::Raw => raw.extend_from_slice(payload),
        Codec::Lz4 => {
            raw.resize(header.len_raw as usize, 0);
            match lz4_flex::block::decompress_into(payload, raw) {
                Ok(n) if n == header.len_raw as usize => {}
                Ok(_) => return Err("decompressed length differs from header"),
                Err(_) => return Err("lz4 payload does not decode"),
            }
        }
    }
    if raw.len() != header.len_raw as usize {
        return Err("payload length differs from header");
    }
    let mut count = 0u32;
    for record in Records::new(raw) {
        record?;
        count += 1;
    }
    if count != header.record_count {
        return Err("record count differs from header");
    }
    Ok(())
}

/// Iterator over the framed records of a raw payload.
#[derive(Debug)]
pub struct Records<'a> {
    rest: &'a [u8],
}

impl<'a> Records<'a> {
    /// Records framed in `raw`.
    pub fn new(raw: &'a [u8]) -> Self {
        Records { rest: raw }
    }
}

impl<'a> Iterator for Records<'a> {
    type Item = Result<&'a [u8], &'static str>;

    fn next(&mut self) -> Option<Self::Item> {
        if self.rest.is_empty() {
            return None;
        }
        let Some(len_bytes) = self.rest.get(..RECORD_HEADER_LEN) else {
            self.rest = &[];
            return Some(Err("truncated record header"));
        };
        let len = read_u32(len_bytes, 0) as usize;
        if len > RECORD_LEN_MAX {
            self.rest = &[];
            return Some(Err("impossible record length"));
        }
        let Some(record) = self.rest.get(RECORD_HEADER_LEN..RECORD_HEADER_LEN + len) else {
            self.rest = &[];
            return Some(Err("record runs past its block"));
        };
        self.rest = self.rest.get(RECORD_HEADER_LEN + len..).unwrap_or_default();
        Some(Ok(record))
    }
}

/// Appends one framed record to a raw block payload.
pub fn push_record(raw: &mut Vec<u8>, payload: &[u8]) {
    assert!(
        payload.len() <= RECORD_LEN_MAX,
        "record of {} bytes",
        payload.len()
    );
    raw.extend_from_slice(&(payload.len() as u32).to_le_bytes());
    raw.extend_from_slice(payload);
}

/// Decodes one whole block from outside bytes (header at offset 0) and returns its
/// records; this is the entry point of the block decoder's fuzz target.
pub fn decode_block(bytes: &[u8], salt: u64) -> Result<(BlockHeader, Vec<Vec<u8>>), &'static str> {
    let header = BlockHeader::decode(bytes)?;
    verify_block(&header, bytes, salt)?;
    let payload = bytes
        .get(BLOCK_HEADER_LEN..BLOCK_HEADER_LEN + header.len_stored as usize)
        .ok_or("block shorter than its length")?;
    let mut raw = Vec::new();
    decode_payload(&header, payload, &mut raw)?;
    let records = Records::new(&raw)
        .map(|record| record.map(<[u8]>::to_vec))
        .collect::<Result<Vec<_>, _>>()?;
    Ok((header, records))
}

/// Rounds `offset` up to the next multiple of `BLOCK_ALIGN`.
pub fn align_up(offset: u64) -> u64 {
    offset.div_ceil(BLOCK_ALIGN) * BLOCK_ALIGN
}

/// A little-endian `u32` field; callers have checked that `bytes` covers it.
fn read_u32(bytes: &[u8], at: usize) -> u32 {
    let word = bytes
        .get(at..at + 4)
        .and_then(|word| <[u8; 4]>::try_from(word).ok())
        .expect("field lies inside a length-checked header");
    u32::from_le_bytes(word)
}

/// A little-endian `u64` field; callers have checked that `bytes` covers it.
fn read_u64(bytes: &[u8], at: usize) -> u64 {
    let word = bytes
        .get(at..at + 8)
        .and_then(|word| <[u8; 8]>::try_from(word).ok())
        .expect("field lies inside a length-checked header");
    u64::from_le_bytes(word)
}

#[cfg(test)]
#[expect(clippy::indexing_slicing, reason = "tests index buffers they built")]
mod tests {
    use super::*;

    fn meta(codec: Codec, count: u32) -> BlockMeta {
        BlockMeta {
            lsn_first: Lsn(7),
            record_count: count,
            synced_end: 512,
            session: 3,
            codec,
            salt: 99,
        }
    }

    #[test]
    fn block_round_trips_with_both_codecs() {
        for codec in [Codec::Raw, Codec::Lz4] {
            let mut raw = Vec::new();
            push_record(&mut raw, &[b'a'; 300]);
            push_record(&mut raw, b"");
            push_record(&mut raw, b"xyz");
            let mut out = Vec::new();
            encode_block(&mut out, &raw, &meta(codec, 3));
            assert_eq!(out.len() as u64 % BLOCK_ALIGN, 0);
            let (header, records) = decode_block(&out, 99).expect("decode");
            assert_eq!(header.codec, codec);
            assert_eq!(header.lsn_first, Lsn(7));
            assert_eq!(records, vec![vec![b'a'; 300], vec![], b"xyz".to_vec()]);
        }
    }

    #[test]
    fn incompressible_payload_is_stored_raw() {
        let mut raw = Vec::new();
        let noise: Vec<u8> = (0u32..64)
            .map(|i| (i.wrapping_mul(2_654_435_761) >> 13) as u8)
            .collect();
        push_record(&mut raw, &noise);
        let mut out = Vec::new();
        encode_block(&mut out, &raw, &meta(Codec::Lz4, 1));
        let header = BlockHeader::decode(&out).expect("header");
        assert_eq!(header.codec, Codec::Raw);
    }

    #[test]
    fn block_with_wrong_salt_fails_its_checksum() {
        let mut raw = Vec::new();
        push_record(&mut raw, b"hello");
        let mut out = Vec::new();
        encode_block(&mut out, &raw, &meta(Codec::Lz4, 1));
        assert_eq!(
            decode_block(&out, 98).err(),
            Some("block checksum mismatch")
        );
    }

    #[test]
    fn file_header_round_trips_and_rejects_a_flipped_byte() {
        let header = FileHeader {
            codec: Codec::Lz4,
            lsn_start: Lsn(42),
            salt: 7,
            block_len_target: 1024,
        };
        let mut bytes = header.encode();
        assert_eq!(FileHeader::decode(&bytes), Ok(header));
        bytes[17] ^= 1;
        assert!(FileHeader::decode(&bytes).is_err());
    }
}
