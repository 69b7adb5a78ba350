//! The two file header slots (pages 0 and 1) that name the last durable checkpoint.
//!
//! Invariants:
//! - A checkpoint writes the slot its counter selects (`counter % 2`), so the other slot
//!   keeps the previous durable checkpoint and a torn header write loses at most the newest.
//! - A slot is valid only if magic, version, page size and checksum all agree; the valid
//!   slot with the higher counter wins.
//! - Decoding never panics on any bytes.

use crate::error::{Error, Result, corrupt};
use crate::limits::{HEADER_PAGES, PAGE_SIZE, ROOT_SLOTS};
use crate::page::{Extent, PageId, read_u32, read_u64};
use xxhash_rust::xxh3::xxh3_64_with_seed;

pub(crate) const MAGIC: &[u8; 8] = b"MFDBDATA";

/// The format version this build writes. It reads every version from 1 on:
/// - 1: the first format;
/// - 2: B+tree cells may carry varint lengths (cell flag 4); a file that holds such a cell
///   says 2, so a build that reads only 1 refuses it;
/// - 3: pages unchanged; the engine may store record values compressed (issue 18), so a
///   build that reads only up to 2 refuses the file instead of misreading its records.
pub const FORMAT_VERSION: u32 = 3;

const ROOTS_AT: usize = 64;
const CHECKSUM_AT: usize = PAGE_SIZE - 8;

/// The content of one header slot: everything needed to open the checkpoint.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct HeaderSlot {
    pub(crate) counter: u64,
    pub(crate) lsn: u64,
    pub(crate) page_count: u32,
    pub(crate) free_list: Option<Extent>,
    pub(crate) roots: [u64; ROOT_SLOTS],
}

impl HeaderSlot {
    pub(crate) fn encode(&self) -> Vec<u8> {
        let mut page = vec![0u8; PAGE_SIZE];
        page[0..8].copy_from_slice(MAGIC);
        page[8..12].copy_from_slice(&FORMAT_VERSION.to_le_bytes());
        page[12..16].copy_from_slice(&(PAGE_SIZE as u32).to_le_bytes());
        page[16..24].copy_from_slice(&self.counter.to_le_bytes());
        page[24..32].copy_from_slice(&self.lsn.to_le_bytes());
        page[32..36].copy_from_slice(&self.page_count.to_le_bytes());
        let (start, pages) = self.free_list.map_or((0, 0), |e| (e.start.0, e.pages));
        page[36..40].copy_from_slice(&start.to_le_bytes());
        page[40..44].copy_from_slice(&pages.to_le_bytes());
        for (i, root) in self.roots.iter().enumerate() {
            let at = ROOTS_AT + i * 8;
            page[at..at + 8].copy_from_slice(&root.to_le_bytes());
        }
        let sum = xxh3_64_with_seed(&page[..CHECKSUM_AT], self.slot());
        page[CHECKSUM_AT..].copy_from_slice(&sum.to_le_bytes());
        assert_eq!(Self::decode(&page, self.slot()).ok().as_ref(), Some(self));
        page
    }

    /// The slot (0 or 1) this checkpoint is written to.
    pub(crate) fn slot(&self) -> u64 {
        self.counter % 2
    }

    /// Decodes slot `slot` from its page; any damage is an error.
    pub(crate) fn decode(page: &[u8], slot: u64) -> Result<HeaderSlot> {
        let at = u32::try_from(slot).unwrap_or(u32::MAX);
        if page.len() != PAGE_SIZE || &page[0..8] != MAGIC {
            return Err(corrupt(at, "header slot magic"));
        }
        let sum = xxh3_64_with_seed(&page[..CHECKSUM_AT], slot);
        if read_u64(page, CHECKSUM_AT) != sum {
            return Err(corrupt(at, "header slot checksum"));
        }
        let version = read_u32(page, 8);
        if version == 0 || version > FORMAT_VERSION {
            return Err(Error::Version {
                found: version,
                expected: FORMAT_VERSION,
            });
        }
        if read_u32(page, 12) as usize != PAGE_SIZE {
            return Err(corrupt(at, "header page size"));
        }
        let counter = read_u64(page, 16);
        if counter % 2 != slot {
            return Err(corrupt(at, "header counter in the wrong slot"));
        }
        let page_count = read_u32(page, 32);
        if page_count < HEADER_PAGES {
            return Err(corrupt(at, "header page count"));
        }
        let (start, pages) = (read_u32(page, 36), read_u32(page, 40));
        let free_list = match (start, pages) {
            (0, 0) => None,
            (start, pages) if start >= HEADER_PAGES && pages > 0 => {
                let extent = Extent::new(PageId(start), pages);
                if extent.end() > u64::from(page_count) {
                    return Err(corrupt(at, "free list past the end of the file"));
                }
                Some(extent)
            }
            _ => return Err(corrupt(at, "header free list extent")),
        };
        let mut roots = [0u64; ROOT_SLOTS];
        for (i, root) in roots.iter_mut().enumerate() {
            *root = read_u64(page, ROOTS_AT + i * 8);
        }
        Ok(HeaderSlot {
            counter,
            lsn: read_u64(page, 24),
            page_count,
            free_list,
            roots,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn slot_round_trips_and_rejects_a_flipped_bit() {
        let mut roots = [0u64; ROOT_SLOTS];
        roots[3] = 77;
        let slot = HeaderSlot {
            counter: 5,
            lsn: 99,
            page_count: 40,
            free_list: Some(Extent::new(PageId(30), 2)),
            roots,
        };
        let mut page = slot.encode();
        assert_eq!(HeaderSlot::decode(&page, 1).expect("valid"), slot);
        assert!(HeaderSlot::decode(&page, 0).is_err());
        page[20] ^= 4;
        assert!(HeaderSlot::decode(&page, 1).is_err());
    }
}
