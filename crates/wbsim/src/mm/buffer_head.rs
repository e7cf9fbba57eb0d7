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
//! 3.x; SLUB packs 4096 / 104 objects). A streaming writer's pages, and
//! their buffer heads, are reclaimed in about the order they were made, so
//! a freed object leaves its hole in the oldest slab page; SLUB fills its
//! CPU slab (the newest page) and then its partial slabs (`get_partial`)
//! before it takes a new page (`new_slab`), and gives back a slab page only
//! once it is empty (`discard_slab`). So the slab pages stay where they
//! were first allocated while the page cache keeps its size: the real
//! 3.3.8 guest's Normal zone holds 6.8-9.2 K slab pages from the first
//! fill of memory to the end of a 5 GiB dd (lab boot, `zoneinfo` each
//! second). The slab page is
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
/// oldest first, each with its live objects. Only the oldest (partial,
/// holes from frees) and the newest (CPU slab, being filled) can have room.
#[derive(Debug, Clone, Default)]
pub struct BufferHeadCache {
    pub objects: u64,
    pub slab_pages: VecDeque<(Pfn, u8)>,
    /// Objects whose slab page could not be allocated (no free page).
    unplaced: u64,
}

/// Buffer heads on page-cache pages (`PG_private`).
pub trait BufferHeads: MmHost {
    /// `create_empty_buffers` from the `write_begin` of mapping `ino`: page
    /// `pfn` gets its buffer head, once, if the mapping's filesystem uses
    /// them; a full cache first takes a slab page.
    fn attach_buffer_heads(&mut self, tid: u32, ino: u32, pfn: Pfn) {
        if self.mm().pages[pfn as usize].has(flags::PRIVATE) || !self.mapping_has_buffer_heads(ino)
        {
            return;
        }
        self.mm_mut().pages[pfn as usize].flags |= flags::PRIVATE;
        let full = BUFFER_HEADS_PER_SLAB_PAGE as u8;
        let cache = &mut self.mm_mut().bh_cache;
        cache.objects += 1;
        // The CPU slab, then the oldest partial one, then a new page.
        if let Some(last) = cache.slab_pages.back_mut().filter(|s| s.1 < full) {
            last.1 += 1;
        } else if let Some(first) = cache.slab_pages.front_mut().filter(|s| s.1 < full) {
            first.1 += 1;
        } else if !self.new_buffer_head_slab(tid) {
            self.mm_mut().bh_cache.unplaced += 1;
        }
    }

    /// `new_slab` for the buffer_head cache (GFP_NOFS, order 0), holding
    /// one object; false if no page could be had.
    fn new_buffer_head_slab(&mut self, tid: u32) -> bool {
        let gfp = Gfp { write: false };
        let pfn = match self.get_page_from_freelist(tid, Mark::Low, gfp) {
            Some(pfn) => pfn,
            None => {
                self.wake_all_kswapd(tid);
                match self.get_page_from_freelist(tid, Mark::Min, gfp) {
                    Some(pfn) => pfn,
                    None => return false,
                }
            }
        };
        let mm = self.mm_mut();
        mm.pages[pfn as usize].holder = Holder::Kernel;
        let z = mm.pages[pfn as usize].zone as usize;
        mm.zones[z].nr_slab_reclaimable += 1;
        mm.bh_cache.slab_pages.push_back((pfn, 1));
        true
    }

    /// `try_to_free_buffers` → `free_buffer_head` as the page leaves the
    /// page cache: a hole in the oldest slab page; a slab page left empty
    /// goes back to the allocator (`discard_slab`, onto `tid`'s CPU list
    /// like any freed page) unless it is the only one.
    fn release_buffer_heads(&mut self, tid: u32, pfn: Pfn) {
        let mm = self.mm_mut();
        mm.pages[pfn as usize].flags &= !flags::PRIVATE;
        let cache = &mut mm.bh_cache;
        cache.objects = cache.objects.saturating_sub(1);
        if cache.unplaced > 0 {
            cache.unplaced -= 1;
            return;
        }
        // The front page is the oldest non-empty one (empty ones are
        // given back), but for the last page, kept when empty.
        let Some(i) = cache.slab_pages.iter().position(|s| s.1 > 0) else {
            return;
        };
        cache.slab_pages[i].1 -= 1;
        if cache.slab_pages[i].1 == 0 && cache.slab_pages.len() > 1 {
            let Some((slab, _)) = cache.slab_pages.remove(i) else {
                return;
            };
            let z = mm.pages[slab as usize].zone as usize;
            mm.zones[z].nr_slab_reclaimable -= 1;
            self.free_page(tid, slab);
        }
    }
}

impl<T: MmHost + ?Sized> BufferHeads for T {}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::test_support;

    #[test]
    fn slab_pages_are_refilled_in_place_and_given_back_only_when_empty() {
        let (mut sys, files) = test_support::usb_stick_files("3.2", "ext4", &["a"]);
        let ino = files[0];
        let top = sys.mm().nr_zones() - 1;
        let pages: Vec<Pfn> = (0..80)
            .map(|_| sys.mm_mut().take_free_page(top).expect("a free page"))
            .collect();
        let slab_of = |sys: &crate::system::System| -> u64 {
            (0..sys.mm().nr_zones())
                .map(|z| sys.mm().zone(z).nr_slab_reclaimable)
                .sum()
        };
        let live = |sys: &crate::system::System| -> Vec<u8> {
            sys.mm().bh_cache.slab_pages.iter().map(|s| s.1).collect()
        };
        for &p in &pages[..39] {
            sys.attach_buffer_heads(0, ino, p);
        }
        // Twice on one page attaches once.
        sys.attach_buffer_heads(0, ino, pages[0]);
        assert_eq!(sys.mm().bh_cache.objects, 39);
        assert_eq!(slab_of(&sys), 1);
        assert_eq!(
            sys.mm().zone(top).nr_slab_reclaimable,
            1,
            "zonelist order: top zone first"
        );
        // The 40th takes a second page.
        sys.attach_buffer_heads(0, ino, pages[39]);
        assert_eq!(live(&sys), [39, 1]);
        // Frees leave holes in the oldest page; the newest (CPU slab)
        // fills first, then the holes: no page comes or goes.
        for &p in &pages[..5] {
            sys.release_buffer_heads(0, p);
        }
        assert!(!sys.mm().pages()[pages[0] as usize].has(flags::PRIVATE));
        assert_eq!(live(&sys), [34, 1]);
        for &p in &pages[40..78] {
            sys.attach_buffer_heads(0, ino, p);
        }
        assert_eq!(live(&sys), [34, 39]);
        for &p in &pages[78..80] {
            sys.attach_buffer_heads(0, ino, p);
        }
        assert_eq!((live(&sys), slab_of(&sys)), (vec![36, 39], 2));
        // The oldest page, emptied, goes back (onto the CPU's list).
        let first_slab = sys.mm().bh_cache.slab_pages[0].0;
        let in_first: Vec<Pfn> = pages[5..39].iter().chain(&pages[78..80]).copied().collect();
        for &p in &in_first {
            sys.release_buffer_heads(0, p);
        }
        assert_eq!((live(&sys), slab_of(&sys)), (vec![39], 1));
        assert_eq!(sys.mm().pages()[first_slab as usize].holder, Holder::PerCpu);
        // The last page is kept even when empty.
        for &p in &pages[39..78] {
            sys.release_buffer_heads(0, p);
        }
        assert_eq!((sys.mm().bh_cache.objects, slab_of(&sys)), (0, 1));
    }
}
