//! Page numbers, extents, and the common header every page or extent starts with.
//!
//! Layout of the header (little-endian, see `docs/format.md`, "Data file"):
//! checksum u64 @0, page id u32 @8, page count u32 @12, kind u8 @16, zero @17..24,
//! generation u64 @24.
//!
//! Invariants:
//! - The checksum covers every byte of the extent after the checksum field and is seeded
//!   with the page id, so an image written to the wrong place fails `check`.
//! - A sealed image is checked again right after sealing, before it reaches the seam.
//! - `page_count` of a valid extent is in `1..=EXTENT_PAGES_MAX`.

use crate::error::{Result, corrupt};
use crate::limits::{EXTENT_PAGES_MAX, PAGE_HEADER_SIZE, PAGE_SIZE};
use xxhash_rust::xxh3::xxh3_64_with_seed;

/// A page number in the data file. Page 0 and 1 hold the header slots.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct PageId(pub u32);

impl PageId {
    /// Byte offset of the page in the file.
    pub fn offset(self) -> u64 {
        u64::from(self.0) * PAGE_SIZE as u64
    }
}

/// A run of contiguous pages allocated or freed as a unit.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Extent {
    /// The first page.
    pub start: PageId,
    /// How many pages, at least one.
    pub pages: u32,
}

impl Extent {
    /// An extent of `pages` pages from `start`.
    pub fn new(start: PageId, pages: u32) -> Extent {
        Extent { start, pages }
    }

    /// One past the last page.
    pub fn end(self) -> u64 {
        u64::from(self.start.0) + u64::from(self.pages)
    }

    /// Its size in bytes.
    pub fn bytes(self) -> usize {
        self.pages as usize * PAGE_SIZE
    }
}

/// Pages needed for an extent holding `payload` bytes after the header.
pub fn pages_for_payload(payload: usize) -> u32 {
    let pages = (payload + PAGE_HEADER_SIZE).div_ceil(PAGE_SIZE);
    u32::try_from(pages.max(1)).unwrap_or(u32::MAX)
}

/// Page kinds the pager itself writes. User kinds start at [`KIND_USER_MIN`].
pub(crate) const KIND_FREE_LIST: u8 = 1;

/// The first page kind available to layers above the pager.
pub const KIND_USER_MIN: u8 = 16;

const CHECKSUM_SEED: u64 = 0x6d66_6462_7061_6765; // "mfdbpage"

/// The decoded header of a verified page or extent.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub(crate) struct PageHeader {
    pub(crate) pages: u32,
    pub(crate) kind: u8,
}

fn checksum(image: &[u8], id: PageId) -> u64 {
    xxh3_64_with_seed(&image[8..], CHECKSUM_SEED ^ u64::from(id.0))
}

/// Writes `kind` and the extent length into a fresh image (id and checksum come at seal time).
pub(crate) fn init(image: &mut [u8], kind: u8) {
    assert!(
        image.len().is_multiple_of(PAGE_SIZE),
        "image len {}",
        image.len()
    );
    let pages = u32::try_from(image.len() / PAGE_SIZE).expect("extent fits u32 pages");
    image[..PAGE_HEADER_SIZE].fill(0);
    image[12..16].copy_from_slice(&pages.to_le_bytes());
    image[16] = kind;
}

/// The kind recorded in an image.
pub(crate) fn kind_of(image: &[u8]) -> u8 {
    image[16]
}

/// Fills in page id, generation and checksum; the image is then ready for the seam.
pub(crate) fn seal(image: &mut [u8], id: PageId, generation: u64) {
    image[8..12].copy_from_slice(&id.0.to_le_bytes());
    image[24..32].copy_from_slice(&generation.to_le_bytes());
    let sum = checksum(image, id);
    image[0..8].copy_from_slice(&sum.to_le_bytes());
    // Re-hashing the image to check it doubles the cost of every commit; the header's
    // extent length is what `init` wrote, so the cheap part is checked in every build.
    debug_assert!(check(image, id).is_ok(), "a freshly sealed image verifies");
    assert_eq!(
        read_u32(image, 12) as usize * PAGE_SIZE,
        image.len(),
        "sealed extent length"
    );
}

/// Reads the extent length from the first page of an unverified image.
pub(crate) fn pages_claimed(first_page: &[u8], id: PageId) -> Result<u32> {
    let pages = read_u32(first_page, 12);
    if pages == 0 || pages > EXTENT_PAGES_MAX {
        return Err(corrupt(id.0, "extent length out of range"));
    }
    Ok(pages)
}

/// Verifies an image read from `id`: page id, length and checksum.
pub(crate) fn check(image: &[u8], id: PageId) -> Result<PageHeader> {
    if image.len() < PAGE_SIZE {
        return Err(corrupt(id.0, "short page image"));
    }
    if read_u32(image, 8) != id.0 {
        return Err(corrupt(id.0, "page id does not match its location"));
    }
    let pages = pages_claimed(image, id)?;
    if pages as usize * PAGE_SIZE != image.len() {
        return Err(corrupt(id.0, "extent length does not match"));
    }
    if read_u64(image, 0) != checksum(image, id) {
        return Err(corrupt(id.0, "page checksum mismatch"));
    }
    Ok(PageHeader {
        pages,
        kind: image[16],
    })
}

/// Reads a little-endian u32 at `at` (the caller guarantees the bounds).
pub(crate) fn read_u32(bytes: &[u8], at: usize) -> u32 {
    let mut word = [0u8; 4];
    word.copy_from_slice(&bytes[at..at + 4]);
    u32::from_le_bytes(word)
}

/// Reads a little-endian u64 at `at` (the caller guarantees the bounds).
pub(crate) fn read_u64(bytes: &[u8], at: usize) -> u64 {
    let mut word = [0u8; 8];
    word.copy_from_slice(&bytes[at..at + 8]);
    u64::from_le_bytes(word)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sealed_page_fails_check_at_another_location() {
        let mut image = vec![0u8; PAGE_SIZE];
        init(&mut image, KIND_USER_MIN);
        seal(&mut image, PageId(7), 1);
        assert!(check(&image, PageId(7)).is_ok());
        assert!(check(&image, PageId(8)).is_err());
        image[100] ^= 1;
        assert!(check(&image, PageId(7)).is_err());
    }

    #[test]
    fn checksum_depends_on_the_page_number_and_the_id_field() {
        let mut image = vec![0u8; PAGE_SIZE];
        init(&mut image, KIND_USER_MIN);
        image[8..12].copy_from_slice(&7u32.to_le_bytes());
        let at_seven = checksum(&image, PageId(7));
        assert_ne!(
            at_seven,
            checksum(&image, PageId(8)),
            "seeded with the page number"
        );
        image[8..12].copy_from_slice(&8u32.to_le_bytes());
        assert_ne!(at_seven, checksum(&image, PageId(7)), "covers the id field");
    }

    #[test]
    fn extent_header_covers_every_page() {
        let mut image = vec![0u8; 3 * PAGE_SIZE];
        init(&mut image, KIND_USER_MIN);
        seal(&mut image, PageId(9), 1);
        let header = check(&image, PageId(9)).expect("valid");
        assert_eq!(header.pages, 3);
        image[2 * PAGE_SIZE + 5] ^= 0x40;
        assert!(check(&image, PageId(9)).is_err());
    }
}
