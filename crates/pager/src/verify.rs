//! `Pager::verify`: every page has exactly one owner, free space is disjoint, checksums hold.
//!
//! Invariants:
//! - The header pages, the durable free-list extent, free space, pending frees and the
//!   extents the caller reports as reachable partition `0..page_count`; any page claimed
//!   twice or by nobody is reported as corruption, with its number.
//! - Every reachable extent is re-read and its checksum re-checked, bypassing the
//!   verified-page cache.

use crate::error::{Result, corrupt};
use crate::limits::{HEADER_PAGES, PAGE_SIZE};
use crate::page::{Extent, PageId};
use crate::pager::Pager;
use crate::view::read_extent;

/// What `verify` counted.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct VerifyReport {
    /// Pages below the high-water mark.
    pub page_count: u32,
    /// Pages in extents reported reachable.
    pub owned_pages: u64,
    /// Pages free now.
    pub free_pages: u64,
    /// Pages freed but waiting for readers or a checkpoint.
    pub pending_pages: u64,
    /// Pages of the durable free list.
    pub free_list_pages: u64,
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum Owner {
    Nobody,
    Header,
    FreeList,
    Free,
    Pending,
    Reachable,
}

fn claim(owners: &mut [Owner], extent: Extent, owner: Owner) -> Result<u64> {
    if extent.pages == 0 || extent.end() > owners.len() as u64 {
        return Err(corrupt(extent.start.0, "extent outside the file"));
    }
    for page in extent.start.0..extent.start.0 + extent.pages {
        let slot = &mut owners[page as usize];
        if *slot != Owner::Nobody {
            return Err(corrupt(page, "page has two owners"));
        }
        *slot = owner;
    }
    Ok(u64::from(extent.pages))
}

impl Pager {
    /// Checks page ownership against `reachable`, the extents the layers above can reach
    /// from the last commit's roots (each B+tree's `verify` lists them), plus checksums.
    /// Waits for the writer, so it sees a quiet state.
    pub fn verify(&self, reachable: &[Extent]) -> Result<VerifyReport> {
        self.check_failed()?;
        let w = self.writer.lock();
        let snapshot = std::sync::Arc::clone(&self.published.lock().snapshot);
        let mut owners = vec![Owner::Nobody; w.page_count as usize];
        let mut report = VerifyReport {
            page_count: w.page_count,
            ..VerifyReport::default()
        };
        claim(
            &mut owners,
            Extent::new(PageId(0), HEADER_PAGES),
            Owner::Header,
        )?;
        if let Some(extent) = w.free_list {
            report.free_list_pages = claim(&mut owners, extent, Owner::FreeList)?;
        }
        for extent in w.free.iter() {
            report.free_pages += claim(&mut owners, extent, Owner::Free)?;
        }
        for freed in w.pending.iter() {
            report.pending_pages += claim(&mut owners, freed.extent, Owner::Pending)?;
        }
        for &extent in reachable {
            report.owned_pages += claim(&mut owners, extent, Owner::Reachable)?;
            let view = snapshot.view.as_deref();
            let image = read_extent(
                &*self.storage,
                Some(&self.write_back),
                view,
                snapshot.page_count,
                extent.start,
                true,
            )?;
            if image.len() != extent.pages as usize * PAGE_SIZE {
                return Err(corrupt(
                    extent.start.0,
                    "extent length differs from its owner",
                ));
            }
        }
        if let Some(page) = owners.iter().position(|o| *o == Owner::Nobody) {
            let page = u32::try_from(page).expect("page numbers fit u32");
            return Err(corrupt(page, "page is neither reachable nor free (leak)"));
        }
        Ok(report)
    }
}
