//! Recovery: read the log forward, hand every record to the caller, and find where the
//! log ends, telling a torn tail from corruption.
//!
//! States of one recovery, and the function behind each transition:
//!
//! ```text
//!   header ──FileHeader::decode──▶ chain ──walk_chain──▶ end candidate x
//!   end candidate x ──classify_end──▶ clean end | torn tail | corruption
//! ```
//!
//! Invariants:
//! - The chain accepts a block only if its header is sane, its checksum passes with this
//!   file's salt, its `lsn_first` is the next expected LSN and its session does not go
//!   backwards; the decompressor runs only after all of that.
//! - Damage at `x` is corruption exactly when an intact block past `x` says the log was
//!   synced beyond `x` (`synced_end > x`); otherwise it is a torn tail (or zeros: the
//!   clean end). Never a silent skip, never a panic.
//! - A checksum-valid block whose payload does not decode is corruption, wherever it is.

#![deny(clippy::indexing_slicing)]

use crate::Lsn;
use crate::error::{Result, WalError};
use crate::format::{self, BlockHeader, FileHeader};
use crate::limits::{BLOCK_ALIGN, BLOCK_HEADER_LEN, FILE_HEADER_LEN};
use crate::storage::Storage;

/// Bytes read from the file at a time.
const WINDOW_LEN: usize = 1 << 20;

/// Where the log ended because its last block was torn by a crash.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TornTail {
    /// The file offset where the torn block starts; the log continues here.
    pub offset: u64,
    /// The LSN the torn block would have started with.
    pub lsn: Lsn,
    /// What was wrong with it.
    pub reason: &'static str,
    /// Bytes cut off: from `offset` to the last non-zero byte the crash left (set by
    /// `Wal::open`, which clears them).
    pub bytes: u64,
}

/// What a recovery found besides the records.
#[derive(Debug, Clone)]
pub(crate) struct Scan {
    pub header: FileHeader,
    /// Offset after the last good block: the next block goes here.
    pub end: u64,
    /// The LSN the next record gets.
    pub lsn_next: Lsn,
    /// The largest session of any intact block in the file.
    pub session_max: u32,
    /// Set when the end is a torn block rather than zeros.
    pub torn_tail: Option<TornTail>,
}

/// A read window over a storage, so that small blocks do not cost one read each.
struct Reader<'a> {
    storage: &'a dyn Storage,
    file_len: u64,
    window: Vec<u8>,
    window_at: u64,
}

impl<'a> Reader<'a> {
    fn new(storage: &'a dyn Storage, file_len: u64) -> Self {
        Reader {
            storage,
            file_len,
            window: Vec::new(),
            window_at: 0,
        }
    }

    /// `len` bytes at `offset`, or `None` when the file ends first.
    fn bytes(&mut self, offset: u64, len: usize) -> Result<Option<&[u8]>> {
        let Some(end) = offset.checked_add(len as u64) else {
            return Ok(None);
        };
        if end > self.file_len {
            return Ok(None);
        }
        let window_end = self.window_at + self.window.len() as u64;
        if offset < self.window_at || end > window_end {
            let want = (len.max(WINDOW_LEN) as u64).min(self.file_len - offset) as usize;
            self.window.resize(want, 0);
            self.storage.read_exact_at(&mut self.window, offset)?;
            self.window_at = offset;
        }
        let start = (offset - self.window_at) as usize;
        let bytes = self
            .window
            .get(start..start + len)
            .expect("the window was just filled to cover the range");
        Ok(Some(bytes))
    }
}

/// Outcome of looking at one block position.
enum Probe {
    /// An intact block (checksum passed).
    Block(BlockHeader, Vec<u8>),
    /// Nothing but zeros where a header would be, or the file ends.
    Zeros,
    /// Something that is not an intact block.
    Damaged(&'static str),
}

fn probe(reader: &mut Reader<'_>, offset: u64, salt: u64) -> Result<Probe> {
    let Some(header_bytes) = reader.bytes(offset, BLOCK_HEADER_LEN)? else {
        return Ok(Probe::Zeros);
    };
    if header_bytes.iter().all(|&b| b == 0) {
        return Ok(Probe::Zeros);
    }
    let header = match BlockHeader::decode(header_bytes) {
        Ok(header) => header,
        Err(reason) => return Ok(Probe::Damaged(reason)),
    };
    let len = BLOCK_HEADER_LEN + header.len_stored as usize;
    let Some(block) = reader.bytes(offset, len)? else {
        return Ok(Probe::Damaged("block runs past the end of the file"));
    };
    if let Err(reason) = format::verify_block(&header, block, salt) {
        return Ok(Probe::Damaged(reason));
    }
    let payload = block.get(BLOCK_HEADER_LEN..).unwrap_or_default();
    Ok(Probe::Block(header, payload.to_vec()))
}

/// Reads the file header and walks the log, calling `sink` for every record with an LSN
/// at or after `lsn_from`. With `stop_at`, the walk stops there (a live log's end) and
/// the end is not classified.
pub(crate) fn recover(
    storage: &dyn Storage,
    lsn_from: Lsn,
    stop_at: Option<u64>,
    sink: &mut dyn FnMut(Lsn, &[u8]),
) -> Result<Scan> {
    let file_len = storage.len()?;
    let mut reader = Reader::new(storage, file_len);
    let header_bytes = reader
        .bytes(0, FILE_HEADER_LEN as usize)?
        .ok_or(WalError::Corrupt {
            offset: 0,
            lsn: None,
            reason: "file shorter than its header",
        })?;
    let header = FileHeader::decode(header_bytes).map_err(|reason| WalError::Corrupt {
        offset: 0,
        lsn: None,
        reason,
    })?;
    let mut scan = Scan {
        header,
        end: FILE_HEADER_LEN,
        lsn_next: header.lsn_start,
        session_max: 0,
        torn_tail: None,
    };
    let reason = walk_chain(&mut reader, &mut scan, lsn_from, stop_at, sink)?;
    if stop_at.is_none() {
        classify_end(&mut reader, &mut scan, reason)?;
    }
    Ok(scan)
}

/// Follows the chain of blocks from the header; returns why it stopped (`None`: zeros).
fn walk_chain(
    reader: &mut Reader<'_>,
    scan: &mut Scan,
    lsn_from: Lsn,
    stop_at: Option<u64>,
    sink: &mut dyn FnMut(Lsn, &[u8]),
) -> Result<Option<&'static str>> {
    let salt = scan.header.salt;
    let mut session_prev = 0u32;
    let mut raw = Vec::new();
    loop {
        if stop_at.is_some_and(|stop| scan.end >= stop) {
            return Ok(None);
        }
        let (header, payload) = match probe(reader, scan.end, salt)? {
            Probe::Zeros => return Ok(None),
            Probe::Damaged(reason) => return Ok(Some(reason)),
            Probe::Block(header, payload) => (header, payload),
        };
        if header.lsn_first != scan.lsn_next {
            return Ok(Some("block lsn does not follow the previous block"));
        }
        if header.session < session_prev {
            return Ok(Some("block session goes backwards"));
        }
        if let Err(reason) = format::decode_payload(&header, &payload, &mut raw) {
            return Err(WalError::Corrupt {
                offset: scan.end,
                lsn: Some(scan.lsn_next),
                reason,
            });
        }
        for (i, record) in format::Records::new(&raw).enumerate() {
            let record = record.expect("decode_payload validated the framing");
            let lsn = Lsn(header.lsn_first.0 + i as u64);
            if lsn >= lsn_from {
                sink(lsn, record);
            }
        }
        session_prev = header.session;
        scan.session_max = scan.session_max.max(header.session);
        scan.lsn_next = header.lsn_end();
        scan.end += header.len_on_disk();
    }
}

/// Decides whether the end of the chain is the clean end, a torn tail or corruption, by
/// looking at every intact block past it.
fn classify_end(
    reader: &mut Reader<'_>,
    scan: &mut Scan,
    reason: Option<&'static str>,
) -> Result<()> {
    let x = scan.end;
    let salt = scan.header.salt;
    let mut offset = x + BLOCK_ALIGN;
    while offset + BLOCK_HEADER_LEN as u64 <= reader.file_len {
        let is_candidate = reader
            .bytes(offset, 4)?
            .is_some_and(|magic| magic == format::BLOCK_MAGIC);
        if !is_candidate {
            offset += BLOCK_ALIGN;
            continue;
        }
        match probe(reader, offset, salt)? {
            Probe::Block(header, _) => {
                if header.synced_end > x {
                    return Err(WalError::Corrupt {
                        offset: x,
                        lsn: Some(scan.lsn_next),
                        reason: reason.unwrap_or("durable block overwritten with zeros"),
                    });
                }
                scan.session_max = scan.session_max.max(header.session);
                offset += header.len_on_disk();
            }
            Probe::Zeros | Probe::Damaged(_) => offset += BLOCK_ALIGN,
        }
    }
    scan.torn_tail = reason.map(|reason| TornTail {
        offset: x,
        lsn: scan.lsn_next,
        reason,
        bytes: 0,
    });
    Ok(())
}
