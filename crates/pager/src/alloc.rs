//! Free space: coalesced extents, indexed by start and by size for best-fit allocation.
//!
//! Invariants:
//! - The two indexes hold the same extents (asserted in debug builds after each change).
//! - Free extents never overlap and never touch: adjacent runs are merged on insert.
//! - Allocation takes the smallest extent that fits (lowest start on ties), so single-page
//!   requests use single-page holes and do not shave the large extents overflow needs.

use crate::page::{Extent, PageId};
use std::collections::{BTreeMap, BTreeSet, VecDeque};

/// A set of free page runs.
#[derive(Debug, Default, Clone)]
pub(crate) struct FreeSpace {
    by_start: BTreeMap<u32, u32>,
    by_size: BTreeSet<(u32, u32)>,
    pages: u64,
}

/// Inserting an extent that overlaps free space (reported, so disk data can be rejected).
#[derive(Debug)]
pub(crate) struct Overlap;

impl FreeSpace {
    /// Free pages in total.
    pub(crate) fn pages(&self) -> u64 {
        self.pages
    }

    /// Number of separate free extents.
    pub(crate) fn extent_count(&self) -> usize {
        self.by_start.len()
    }

    /// Pages of the largest free extent (0 when there is none).
    pub(crate) fn largest(&self) -> u32 {
        self.by_size
            .iter()
            .next_back()
            .map_or(0, |&(pages, _)| pages)
    }

    /// Every free extent in page order.
    pub(crate) fn iter(&self) -> impl Iterator<Item = Extent> + '_ {
        self.by_start
            .iter()
            .map(|(&start, &pages)| Extent::new(PageId(start), pages))
    }

    /// Adds `extent`, merging with neighbours. Overlap with existing free space is an error.
    pub(crate) fn insert(&mut self, extent: Extent) -> Result<(), Overlap> {
        assert!(extent.pages > 0, "empty extent {extent:?}");
        let mut start = extent.start.0;
        let mut end = extent.end();
        if let Some((&before, &pages)) = self.by_start.range(..=start).next_back() {
            let before_end = u64::from(before) + u64::from(pages);
            if before_end > u64::from(start) {
                return Err(Overlap);
            }
            if before_end == u64::from(start) {
                self.remove(before, pages);
                start = before;
            }
        }
        if let Some((&after, &pages)) = self.by_start.range(extent.start.0..).next() {
            if u64::from(after) < end {
                return Err(Overlap);
            }
            if u64::from(after) == end {
                self.remove(after, pages);
                end += u64::from(pages);
            }
        }
        let pages = u32::try_from(end - u64::from(start)).expect("free extent fits u32 pages");
        self.by_start.insert(start, pages);
        self.by_size.insert((pages, start));
        self.pages += u64::from(pages);
        self.debug_check();
        Ok(())
    }

    fn remove(&mut self, start: u32, pages: u32) {
        let removed = self.by_start.remove(&start);
        assert_eq!(removed, Some(pages), "free extent at {start}");
        assert!(
            self.by_size.remove(&(pages, start)),
            "size index at {start}"
        );
        self.pages -= u64::from(pages);
    }

    /// Takes `pages` pages from the smallest free extent that holds them.
    pub(crate) fn take(&mut self, pages: u32) -> Option<PageId> {
        assert!(pages > 0, "zero-page allocation");
        let &(size, start) = self.by_size.range((pages, 0)..).next()?;
        self.remove(start, size);
        if size > pages {
            let rest = start + pages;
            self.by_start.insert(rest, size - pages);
            self.by_size.insert((size - pages, rest));
            self.pages += u64::from(size - pages);
        }
        self.debug_check();
        Some(PageId(start))
    }

    /// Removes the free pages from `floor` up to `end`, where free space ends in an extent
    /// reaching `end`, and returns the new end: how an aborted transaction hands back the
    /// pages it grew the file by (they are all free again, and above `floor`).
    pub(crate) fn trim_tail(&mut self, end: u32, floor: u32) -> u32 {
        let Some((&start, &pages)) = self.by_start.iter().next_back() else {
            return end;
        };
        if u64::from(start) + u64::from(pages) != u64::from(end) || end <= floor {
            return end;
        }
        self.remove(start, pages);
        let cut = start.max(floor);
        if start < cut {
            self.by_start.insert(start, cut - start);
            self.by_size.insert((cut - start, start));
            self.pages += u64::from(cut - start);
        }
        self.debug_check();
        cut
    }

    fn debug_check(&self) {
        #[cfg(debug_assertions)]
        {
            assert_eq!(self.by_start.len(), self.by_size.len(), "free index sizes");
            let total: u64 = self.by_start.values().map(|&p| u64::from(p)).sum();
            assert_eq!(total, self.pages, "free page total");
        }
    }
}

/// A page freed by a commit, waiting until no reader and no durable checkpoint needs it.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Freed {
    /// The commit that freed it: readers of snapshots before this one may still read it.
    pub(crate) seq: u64,
    pub(crate) extent: Extent,
    /// Whether the durable checkpoint references it.
    pub(crate) durable: bool,
}

/// Frees waiting for readers (a queue in commit order) or for a checkpoint (a list in
/// commit order). Both release from the front, so each release costs only what it frees.
#[derive(Debug, Default)]
pub(crate) struct PendingFrees {
    readers: VecDeque<Freed>,
    checkpoint: VecDeque<Freed>,
    pages: u64,
}

impl PendingFrees {
    pub(crate) fn push(&mut self, freed: Freed) {
        self.pages += u64::from(freed.extent.pages);
        if freed.durable {
            self.checkpoint.push_back(freed);
        } else {
            self.readers.push_back(freed);
        }
    }

    /// Pages waiting in total.
    pub(crate) fn pages(&self) -> u64 {
        self.pages
    }

    /// Extents waiting (each is at most one entry of the next free list).
    pub(crate) fn len(&self) -> usize {
        self.readers.len() + self.checkpoint.len()
    }

    pub(crate) fn iter(&self) -> impl Iterator<Item = &Freed> + '_ {
        self.readers.iter().chain(&self.checkpoint)
    }

    /// Moves to `free` every extent freed at or before `oldest_reader` (no registered
    /// reader can see it) and, if the durable checkpoint referenced it, at or before
    /// `checkpoint_seq` (a newer checkpoint is durable).
    pub(crate) fn release(
        &mut self,
        oldest_reader: u64,
        checkpoint_seq: u64,
        free: &mut FreeSpace,
    ) {
        while self
            .checkpoint
            .front()
            .is_some_and(|f| f.seq <= checkpoint_seq)
        {
            let freed = self.checkpoint.pop_front().expect("front exists");
            self.readers.push_back(freed);
        }
        // Commit order makes seqs non-decreasing in each queue; entries moved over from the
        // checkpoint queue can only be older, which delays them, never frees them early.
        while self.readers.front().is_some_and(|f| f.seq <= oldest_reader) {
            let freed = self.readers.pop_front().expect("front exists");
            assert!(
                !freed.durable || freed.seq <= checkpoint_seq,
                "checkpoint gate"
            );
            free.insert(freed.extent)
                .expect("a freed extent is not already free");
            self.pages -= u64::from(freed.extent.pages);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ext(start: u32, pages: u32) -> Extent {
        Extent::new(PageId(start), pages)
    }

    #[test]
    fn neighbours_coalesce_and_overlap_is_rejected() {
        let mut free = FreeSpace::default();
        free.insert(ext(10, 2)).expect("fresh");
        free.insert(ext(14, 2)).expect("fresh");
        free.insert(ext(12, 2)).expect("fills the gap");
        assert_eq!(free.iter().collect::<Vec<_>>(), vec![ext(10, 6)]);
        assert!(free.insert(ext(15, 1)).is_err());
        assert!(free.insert(ext(9, 2)).is_err());
    }

    #[test]
    fn best_fit_keeps_large_extents_whole() {
        let mut free = FreeSpace::default();
        free.insert(ext(10, 64)).expect("fresh");
        free.insert(ext(100, 1)).expect("fresh");
        free.insert(ext(200, 3)).expect("fresh");
        assert_eq!(
            free.take(1),
            Some(PageId(100)),
            "the one-page hole, not the first fit"
        );
        assert_eq!(free.take(2), Some(PageId(200)));
        assert_eq!(free.take(65), None);
        assert_eq!(free.take(60), Some(PageId(10)));
        assert_eq!(free.pages(), 1 + 4);
    }
}
