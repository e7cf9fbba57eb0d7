//! The memory buffer heads hold: the `buffer_head` slab cache behind
//! every page-cache page of a block-based filesystem (`fs/buffer.c`:
//! `create_empty_buffers`, `alloc_buffer_head`, `try_to_free_buffers`,
//! `free_buffer_head`; SLUB's `new_slab` / `discard_slab`), 2.6.24 – 3.x.
//!
//! Why it matters: ext4 (`ext4_da_write_begin` → `__block_write_begin`)
//! and xfs (`xfs_vm_write_begin` → `block_write_begin`, until its iomap
//! conversion) attach a buffer head to each page they write, and the
//! buffer_head cache takes its slab pages from the page allocator like any
//! kernel allocation: the zonelist from the top, so a small top zone
//! (seeds 000 and 003's Normal) loses LRU room to them as the page cache
//! grows. The kernel-lab's real 3.2.4 / 3.3.8 runs show it
//! (`validation/real-3x/*/zoneinfo.*`): nr_slab_reclaimable grows from
//! ~0.6 K to 2.6–12 K pages per zone during a 5 GiB dd, and Normal's
//! file LRU stays ~44 K pages of its 50 K free at boot. A smaller LRU is a
//! smaller `zone_dirtyable_memory`, hence (3.3) a smaller zone dirty limit.
//!
//! The model: one buffer head per 4 KiB page (blocksize 4096), 39 per
//! order-0 slab page (`sizeof(struct buffer_head)` 104 bytes on x86-64 in
//! 3.x; SLUB packs 4096 / 104 objects). Objects are packed: the cache
//! holds `ceil(objects / 39)` slab pages, takes a new one when its pages
//! are full and gives back its oldest when a whole page's worth of objects
//! has been freed (a streaming writer's pages, and their buffer heads, are
//! reclaimed in about the order they were made). The slab page is
//! allocated with `GFP_NOFS` (no `__GFP_WRITE`): the fast path at the low
//! watermark, then kswapd woken and the min watermark; should both fail the
//! cache stays a page short until its next allocation (the real
//! `alloc_buffer_head` would enter direct reclaim). Not modelled: partial
//! slabs kept by SLUB (`min_partial`), fragmentation, other slab caches.

use std::collections::VecDeque;

use super::page::{flags, Holder, Pfn};
use super::{Gfp, Mark, MemoryOps, MmHost};

/// `struct buffer_head` objects in one order-0 SLUB slab (4096 / 104).
pub const BUFFER_HEADS_PER_SLAB_PAGE: u64 = 39;

/// The `buffer_head` cache: live objects and the slab pages holding them,
/// oldest first.
#[derive(Debug, Clone, Default)]
pub struct BufferHeadCache {
    pub objects: u64,
    pub slab_pages: VecDeque<Pfn>,
}

/// Buffer heads on page-cache pages (`PG_private`).
pub trait BufferHeads: MmHost {
    /// `create_empty_buffers`: page `pfn` gets its buffer head (once); a
    /// full cache first takes a slab page.
    fn attach_buffer_heads(&mut self, tid: u32, pfn: Pfn) {
        if self.mm().pages[pfn as usize].has(flags::PRIVATE) {
            return;
        }
        self.mm_mut().pages[pfn as usize].flags |= flags::PRIVATE;
        let cache = &self.mm().bh_cache;
        if cache.objects >= cache.slab_pages.len() as u64 * BUFFER_HEADS_PER_SLAB_PAGE {
            self.new_buffer_head_slab(tid);
        }
        self.mm_mut().bh_cache.objects += 1;
    }

    /// `new_slab` for the buffer_head cache (GFP_NOFS, order 0).
    fn new_buffer_head_slab(&mut self, tid: u32) {
        let gfp = Gfp { write: false };
        let pfn = match self.get_page_from_freelist(tid, Mark::Low, gfp) {
            Some(pfn) => pfn,
            None => {
                self.wake_all_kswapd(tid);
                match self.get_page_from_freelist(tid, Mark::Min, gfp) {
                    Some(pfn) => pfn,
                    None => return,
                }
            }
        };
        let mm = self.mm_mut();
        mm.pages[pfn as usize].holder = Holder::Kernel;
        let z = mm.pages[pfn as usize].zone as usize;
        mm.zones[z].nr_slab_reclaimable += 1;
        mm.bh_cache.slab_pages.push_back(pfn);
    }

    /// `try_to_free_buffers` → `free_buffer_head` as the page leaves the
    /// page cache; once a whole slab page's worth is free, the oldest slab
    /// page goes back to the allocator (`discard_slab`, onto `tid`'s CPU
    /// list like any freed page).
    fn release_buffer_heads(&mut self, tid: u32, pfn: Pfn) {
        let mm = self.mm_mut();
        mm.pages[pfn as usize].flags &= !flags::PRIVATE;
        mm.bh_cache.objects = mm.bh_cache.objects.saturating_sub(1);
        let cache = &mm.bh_cache;
        let needed = cache.objects.div_ceil(BUFFER_HEADS_PER_SLAB_PAGE);
        if (cache.slab_pages.len() as u64) > needed {
            if let Some(slab) = mm.bh_cache.slab_pages.pop_front() {
                let z = mm.pages[slab as usize].zone as usize;
                mm.zones[z].nr_slab_reclaimable -= 1;
                self.free_page(tid, slab);
            }
        }
    }
}

impl<T: MmHost + ?Sized> BufferHeads for T {}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::test_support;

    #[test]
    fn a_slab_page_per_39_buffer_heads_taken_from_the_top_zone_and_given_back() {
        let (mut sys, _) = test_support::usb_stick_files("3.2", "ext4", &["a"]);
        let top = sys.mm().nr_zones() - 1;
        let pages: Vec<Pfn> = (0..40)
            .map(|_| sys.mm_mut().take_free_page(top).expect("a free page"))
            .collect();
        let slab_of = |sys: &crate::system::System| -> u64 {
            (0..sys.mm().nr_zones())
                .map(|z| sys.mm().zone(z).nr_slab_reclaimable)
                .sum()
        };
        for &p in &pages[..39] {
            sys.attach_buffer_heads(0, p);
        }
        // Twice on one page attaches once.
        sys.attach_buffer_heads(0, pages[0]);
        assert_eq!(sys.mm().bh_cache.objects, 39);
        assert_eq!(slab_of(&sys), 1);
        assert_eq!(
            sys.mm().zone(top).nr_slab_reclaimable,
            1,
            "zonelist order: top zone first"
        );
        sys.attach_buffer_heads(0, pages[39]);
        assert_eq!(slab_of(&sys), 2);
        let first_slab = sys.mm().bh_cache.slab_pages[0];
        // Freeing one object keeps both pages (40 -> 39 still needs 1 page
        // only: the oldest goes back).
        sys.release_buffer_heads(0, pages[0]);
        assert_eq!(sys.mm().bh_cache.objects, 39);
        assert_eq!(slab_of(&sys), 1);
        assert!(!sys.mm().bh_cache.slab_pages.contains(&first_slab));
        assert_eq!(sys.mm().pages()[first_slab as usize].holder, Holder::PerCpu);
        assert!(!sys.mm().pages()[pages[0] as usize].has(flags::PRIVATE));
        for &p in &pages[1..40] {
            sys.release_buffer_heads(0, p);
        }
        assert_eq!(sys.mm().bh_cache.objects, 0);
        assert_eq!(slab_of(&sys), 0);
    }
}
