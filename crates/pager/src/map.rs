//! The read-only memory map of the data file and its prefetch hint: the pager's only
//! `unsafe` code.
//!
//! Invariants:
//! - A `Mapping` is never longer than the file was when it was created, and the pager never
//!   shrinks the file, so every byte of a live mapping is backed by the file.
//! - The pager never writes, through the seam, a page that a live reader can reach
//!   (copy-on-write plus reader-gated reuse), so bytes behind a `&[u8]` handed out from a
//!   mapping do not change while the borrow lives.
//! - Growth creates a new `Mapping`; old ones stay valid until the last `Arc` holder drops.

use memmap2::{Mmap, MmapOptions};
use std::fs::File;
use std::io;

/// A read-only shared mapping of the first `len` bytes of a file.
#[derive(Debug)]
pub(crate) struct Mapping {
    map: Mmap,
}

impl Mapping {
    /// Maps the first `len` bytes of `file` read-only.
    pub(crate) fn new(file: &File, len: usize) -> io::Result<Mapping> {
        let file_len = file.metadata()?.len();
        assert!(
            len as u64 <= file_len,
            "map len {len} > file len {file_len}"
        );
        // memmap2 requires that the mapped file is not truncated or modified in a way that
        // breaks Rust aliasing while the map is alive. The pager never shrinks the file (so
        // no access can SIGBUS past EOF), maps only `len <= file length` bytes, and only
        // rewrites pages no live reader can reach (module invariants, `docs/format.md`);
        // other processes must not write the file (one opener per file).
        // SAFETY: no shrink, len <= file length, reachable pages never rewritten (above).
        let map = unsafe { MmapOptions::new().len(len).map(file)? };
        Ok(Mapping { map })
    }

    /// The mapped bytes.
    pub(crate) fn bytes(&self) -> &[u8] {
        &self.map
    }

    /// Asks the CPU to start loading the cache line at `offset` (a hint: nothing is read
    /// into the program, and an offset past the mapping is ignored). A scan that knows the
    /// pages it reads next overlaps their cache and TLB misses with its work this way.
    pub(crate) fn prefetch(&self, offset: usize) {
        let Some(byte) = self.map.get(offset) else {
            return;
        };
        // `prefetcht0` only hints the cache: it never faults and reads nothing into the
        // program.
        #[cfg(target_arch = "x86_64")]
        // SAFETY: a hint (above), given an address of a live `&u8` into the mapping.
        unsafe {
            std::arch::x86_64::_mm_prefetch::<{ std::arch::x86_64::_MM_HINT_T0 }>(
                std::ptr::from_ref(byte).cast(),
            );
        }
        #[cfg(not(target_arch = "x86_64"))]
        let _ = byte;
    }
}
