//! The buddy allocator with page mobility grouping, for the kernels whose
//! watermark boosting makes the grouping visible (5.0+; read in Debian's
//! 6.1.192 `mm/page_alloc.c`: `__free_one_page`, `expand`,
//! `__rmqueue_smallest`, `__rmqueue_fallback`, `find_suitable_fallback`,
//! `can_steal_fallback`, `steal_suitable_fallback`,
//! `move_freepages_block`, `boost_watermark`, `rmqueue`).
//!
//! Why it matters: every zone's free pages sit in buddies of order 0 to 10
//! on one list per migratetype, and each 512-page pageblock has a type.
//! When an allocation's type has no free buddy left, it takes one from
//! another type (a fallback); one that fragments a pageblock boosts the
//! zone's watermarks by a pageblock and wakes kswapd for that zone alone
//! (`ZONE_BOOSTED_WATERMARK`). On a small guest writing to ext4 the
//! buffer_head slab (RECLAIMABLE) and the page cache (MOVABLE) take one
//! DMA pageblock from each other again and again as the page cache first
//! reaches DMA: the real 6.1 boots of `real-6.1` show 5-20 such thefts
//! per boot (docs/lab-results.md).
//!
//! A free buddy's head page holds `HEAD | migratetype << 8 | order` in its
//! `index` (the kernel's PageBuddy and `page_private`); every page of a
//! buddy is `Holder::Free`. Order-0 allocations only (all the model's);
//! not modelled: ALLOC_NOFRAGMENT (zones below Normal of a machine with
//! one), MIGRATE_HIGHATOMIC, CMA and isolation, the buddy shuffling and
//! "to tail" placement of a free whose next-order buddy is free.

use super::page::{list_add_head, list_add_tail, list_del, Frames, Holder, ListHead, Pfn, NIL};
use super::Memory;

/// `MAX_ORDER` (6.1): orders 0 to 10.
pub const MAX_ORDER: usize = 11;
/// `pageblock_order` on x86-64 (`HUGETLB_PAGE_ORDER`).
pub const PAGEBLOCK_ORDER: usize = 9;
pub const PAGEBLOCK_PAGES: u64 = 1 << PAGEBLOCK_ORDER;
/// `MIGRATE_PCPTYPES`: the types with free lists and per-CPU lists.
pub const NR_MIGRATETYPES: usize = 3;

/// `enum migratetype`, the kernel's numbers.
pub const MIGRATE_UNMOVABLE: usize = 0;
pub const MIGRATE_MOVABLE: usize = 1;
pub const MIGRATE_RECLAIMABLE: usize = 2;

/// `fallbacks[]`: where each type looks, in order, when it has nothing.
const FALLBACKS: [[usize; 2]; NR_MIGRATETYPES] = [
    [MIGRATE_RECLAIMABLE, MIGRATE_MOVABLE],
    [MIGRATE_RECLAIMABLE, MIGRATE_UNMOVABLE],
    [MIGRATE_UNMOVABLE, MIGRATE_MOVABLE],
];

/// The physical pfn of the model's first page frame: x86-64 keeps the
/// first MiB out of the allocator (5.13+, "x86/setup: always reserve the
/// first 1M of RAM"; the real 6.1 guests' DMA has 3,840 managed pages,
/// pfn 0x100 – 0xfff), so the frames the model numbers from 0 sit 256
/// pages into DMA's first pageblock, and DMA32 begins at 0x1000 as on
/// the real machine. Only the buddies' and pageblocks' alignment reads it.
pub const FIRST_PFN: u32 = 256;

/// The head-of-buddy mark in a free page's `index`: the top bit of the
/// 28 a frame's index has (`page::MAX_PAGE_INDEX`).
const HEAD: u32 = 1 << 27;
const _: () = assert!(HEAD <= crate::mm::page::MAX_PAGE_INDEX);

/// The rule of a profile (chosen at build; this file is the dispatch
/// point): `Some(vm.watermark_boost_factor)` when the kernel groups pages
/// by mobility and boosts watermarks on fragmenting fallbacks (5.0+,
/// 1c30844d2dfe "mm: reclaim small amounts of memory when an external
/// fragmentation event occurs"); `None`: one free list per zone, as the
/// 2.6.24 – 3.x presets model it (their grouping changes no figure the
/// model reports: nothing there reacts to a fallback).
pub fn boost_factor(
    profile: &crate::kernel::KernelProfile,
    sysctl: &crate::kernel::SysctlConfig,
) -> Option<u32> {
    profile
        .watermark_boosting
        .then_some(sysctl.watermark_boost_factor)
}

/// What a fallback did: whether it fragmented a pageblock (and so boosts
/// the zone's watermarks); what `mm_page_alloc_extfrag` prints of it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Fallback {
    pub from: usize,
    pub to: usize,
    pub order: usize,
    pub fragmenting: bool,
    /// The head frame of the buddy taken.
    pub pfn: Pfn,
    /// The buddy's pageblock is the allocation's type after the steal.
    pub change_ownership: bool,
}

/// A zone's buddy lists and pageblock types.
#[derive(Debug, Clone)]
pub struct Buddy {
    start_pfn: Pfn,
    end_pfn: Pfn,
    /// `free_area[order].free_list[migratetype]`.
    free_area: [[ListHead; NR_MIGRATETYPES]; MAX_ORDER],
    /// Pages in buddies.
    pub nr_free: u64,
    /// Each pageblock's type, from the block holding `start_pfn`.
    block_type: Vec<u8>,
    /// The geometry in pages of the machine's unit: `pageblock_order`,
    /// the orders buddies merge up to (below `max_order`), and
    /// [`FIRST_PFN`] ([`Buddy::at_unit`]).
    pageblock_order: usize,
    max_order: usize,
    first_pfn: Pfn,
}

impl Buddy {
    /// Empty lists for the zone's pfns `start..end`, every pageblock
    /// MOVABLE (`memmap_init_range`).
    #[cfg(test)]
    pub fn new(start_pfn: Pfn, end_pfn: Pfn) -> Buddy {
        Buddy::at_unit(start_pfn, end_pfn, super::unit::PageUnit::BASE)
    }

    /// As [`Buddy::new`], for pages of `unit`: a pageblock, the largest
    /// buddy and the reserved first MiB keep their 4 KiB kernel's bytes
    /// (2 MiB, 4 MiB, 1 MiB; [`crate::mm::unit`]), in fewer, larger pages.
    pub fn at_unit(start_pfn: Pfn, end_pfn: Pfn, unit: super::unit::PageUnit) -> Buddy {
        let coarser = (unit.shift() - super::unit::BASE_PAGE_SHIFT) as usize;
        let pageblock_order = PAGEBLOCK_ORDER - coarser;
        let first_pfn = FIRST_PFN >> coarser;
        let (first, end) = ((start_pfn + first_pfn) as u64, (end_pfn + first_pfn) as u64);
        let blocks = (end.div_ceil(1 << pageblock_order)) - (first >> pageblock_order);
        Buddy {
            start_pfn,
            end_pfn,
            free_area: Default::default(),
            nr_free: 0,
            block_type: vec![MIGRATE_MOVABLE as u8; blocks as usize],
            pageblock_order,
            max_order: MAX_ORDER - coarser,
            first_pfn,
        }
    }

    /// `pageblock_nr_pages`.
    pub fn pageblock_pages(&self) -> u64 {
        1 << self.pageblock_order
    }

    /// `pageblock_order`.
    pub fn pageblock_order(&self) -> usize {
        self.pageblock_order
    }

    /// The physical pfn of the model's frame 0 ([`FIRST_PFN`]).
    pub fn first_pfn(&self) -> Pfn {
        self.first_pfn
    }

    fn block_index(&self, pfn: Pfn) -> usize {
        let o = self.pageblock_order;
        (((pfn + self.first_pfn) >> o) - ((self.start_pfn + self.first_pfn) >> o)) as usize
    }

    /// `get_pageblock_migratetype`.
    pub fn block_type(&self, pfn: Pfn) -> usize {
        self.block_type[self.block_index(pfn)] as usize
    }

    pub fn set_block_type(&mut self, pfn: Pfn, mt: usize) {
        let i = self.block_index(pfn);
        self.block_type[i] = mt as u8;
    }

    /// Pageblocks of each type (`/proc/pagetypeinfo`'s "Number of blocks").
    #[cfg(test)]
    pub fn blocks_of_type(&self, mt: usize) -> u64 {
        self.block_type
            .iter()
            .filter(|&&t| t as usize == mt)
            .count() as u64
    }

    /// Free pages on the lists of `mt`.
    #[cfg(test)]
    pub fn free_of_type(&self, mt: usize) -> u64 {
        (0..MAX_ORDER).map(|o| self.free_area[o][mt].len << o).sum()
    }

    fn in_zone(&self, pfn: Pfn) -> bool {
        pfn >= self.start_pfn && pfn < self.end_pfn
    }

    /// `page_is_buddy`: `pfn` heads a free buddy of `order`.
    fn is_buddy(&self, pages: &Frames, pfn: Pfn, order: usize) -> bool {
        if !self.in_zone(pfn) {
            return false;
        }
        let p = &pages[pfn as usize];
        p.holder == Holder::Free && p.index() & HEAD != 0 && (p.index() & 0xff) as usize == order
    }

    fn head_type(pages: &Frames, pfn: Pfn) -> usize {
        ((pages[pfn as usize].index() >> 8) & 0xff) as usize
    }

    /// Put a buddy on a list (`add_to_free_list`); `tail`: at the tail
    /// (`move_to_free_list` moves to the tail).
    fn add(&mut self, pages: &mut Frames, pfn: Pfn, order: usize, mt: usize, tail: bool) {
        let p = &mut pages[pfn as usize];
        p.holder = Holder::Free;
        p.set_index(HEAD | (mt as u32) << 8 | order as u32);
        let list = &mut self.free_area[order][mt];
        if tail {
            list_add_tail(pages, list, pfn);
        } else {
            list_add_head(pages, list, pfn);
        }
    }

    fn del(&mut self, pages: &mut Frames, pfn: Pfn, order: usize) {
        let mt = Self::head_type(pages, pfn);
        list_del(pages, &mut self.free_area[order][mt], pfn);
        pages[pfn as usize].set_index(0);
    }

    /// `__free_one_page`: page `pfn` (order 0) joins its buddies as far
    /// as they are free, onto `mt`'s list.
    pub fn free_page(&mut self, pages: &mut Frames, pfn: Pfn, mt: usize) {
        self.free_one(pages, pfn, mt, false);
    }

    /// `__free_one_page`, at the list's tail with `to_tail` (FPI_TO_TAIL:
    /// the boot's `memblock_free_all`).
    fn free_one(&mut self, pages: &mut Frames, pfn: Pfn, mt: usize, to_tail: bool) {
        let (mut pfn, mut order) = (pfn, 0);
        pages[pfn as usize].holder = Holder::Free;
        while order < self.max_order - 1 {
            // Below the zone's first frame the buddy wraps to a pfn
            // `is_buddy` finds out of the zone.
            let buddy = ((pfn + self.first_pfn) ^ (1 << order)).wrapping_sub(self.first_pfn);
            if !self.is_buddy(pages, buddy, order) {
                break;
            }
            self.del(pages, buddy, order);
            pfn = pfn.min(buddy);
            order += 1;
        }
        self.add(pages, pfn, order, mt, to_tail);
        self.nr_free += 1;
    }

    /// `__rmqueue_smallest` for order 0: the smallest buddy of `mt`, split
    /// down (`expand` puts each upper half back on the list).
    fn rmqueue_smallest(&mut self, pages: &mut Frames, mt: usize) -> Option<Pfn> {
        let order = (0..MAX_ORDER).find(|&o| self.free_area[o][mt].head != NIL)?;
        let pfn = self.free_area[order][mt].head;
        self.del(pages, pfn, order);
        for low in (0..order).rev() {
            self.add(pages, pfn + (1 << low), low, mt, false);
        }
        self.nr_free -= 1;
        Some(pfn)
    }

    /// `__rmqueue` for order 0: the type's own buddies, else a fallback
    /// and another try. The page is left `Holder::Free`; the caller takes
    /// it. Returns the page and the fallback taken on the way.
    pub fn rmqueue(&mut self, pages: &mut Frames, mt: usize) -> Option<(Pfn, Option<Fallback>)> {
        if let Some(pfn) = self.rmqueue_smallest(pages, mt) {
            return Some((pfn, None));
        }
        let fallback = self.rmqueue_fallback(pages, mt)?;
        self.rmqueue_smallest(pages, mt)
            .map(|pfn| (pfn, Some(fallback)))
    }

    /// `find_suitable_fallback`: the first type of `start`'s fallbacks
    /// with a buddy of `order`.
    fn suitable_fallback(&self, order: usize, start: usize) -> Option<usize> {
        FALLBACKS[start]
            .into_iter()
            .find(|&f| self.free_area[order][f].head != NIL)
    }

    /// `__rmqueue_fallback` (order 0, no ALLOC_NOFRAGMENT): the largest
    /// buddy of another type; but a movable allocation that may not take
    /// the whole block takes the smallest one instead.
    fn rmqueue_fallback(&mut self, pages: &mut Frames, start: usize) -> Option<Fallback> {
        let mut pick = None;
        for order in (0..MAX_ORDER).rev() {
            if let Some(from) = self.suitable_fallback(order, start) {
                pick = Some((order, from));
                break;
            }
        }
        let (mut order, mut from) = pick?;
        if !self.can_steal_fallback(order, start) && start == MIGRATE_MOVABLE && order > 0 {
            // find_smallest
            (order, from) = (0..MAX_ORDER)
                .find_map(|o| self.suitable_fallback(o, start).map(|f| (o, f)))
                .expect("a buddy of that type exists");
        }
        let whole_block = self.can_steal_fallback(order, start);
        let pfn = self.free_area[order][from].head;
        let fragmenting = self.steal_suitable_fallback(pages, pfn, order, start, whole_block);
        Some(Fallback {
            from,
            to: start,
            order,
            fragmenting,
            pfn,
            change_ownership: self.block_type(pfn) == start,
        })
    }

    /// `steal_suitable_fallback`: a buddy of a pageblock or more changes
    /// its blocks' type outright; a smaller one fragments the block (the
    /// zone's watermarks are boosted: returns true), and the whole block's
    /// free pages move to `start` when allowed, the block changing type if
    /// at least half of it is free or of `start`'s kind.
    fn steal_suitable_fallback(
        &mut self,
        pages: &mut Frames,
        pfn: Pfn,
        order: usize,
        start: usize,
        whole_block: bool,
    ) -> bool {
        let old_type = self.block_type(pfn);
        let block_order = self.pageblock_order;
        if order >= block_order {
            // change_pageblock_range
            for b in 0..1u32 << (order - block_order) {
                self.set_block_type(pfn + (b << block_order), start);
            }
            self.move_buddy(pages, pfn, order, start);
            return false;
        }
        if whole_block {
            let (free, movable) = self.move_freepages_block(pages, pfn, start);
            if free > 0 {
                let alike = if start == MIGRATE_MOVABLE {
                    movable
                } else if old_type == MIGRATE_MOVABLE {
                    self.pageblock_pages() - free - movable
                } else {
                    0
                };
                if free + alike >= self.pageblock_pages() / 2 {
                    self.set_block_type(pfn, start);
                }
                return true;
            }
        }
        self.move_buddy(pages, pfn, order, start);
        true
    }

    /// `can_steal_fallback`: whether an allocation of type `start` falling
    /// back on a buddy of `order` may take the whole pageblock.
    fn can_steal_fallback(&self, order: usize, start: usize) -> bool {
        order >= self.pageblock_order
            || order >= self.pageblock_order / 2
            || start == MIGRATE_RECLAIMABLE
            || start == MIGRATE_UNMOVABLE
    }

    fn move_buddy(&mut self, pages: &mut Frames, pfn: Pfn, order: usize, mt: usize) {
        self.del(pages, pfn, order);
        self.add(pages, pfn, order, mt, true);
    }

    /// `move_freepages_block`: every free buddy of `pfn`'s pageblock (in
    /// the zone) to `mt`'s lists. Returns the pages moved and the block's
    /// pages in use that are movable (on an LRU list).
    fn move_freepages_block(&mut self, pages: &mut Frames, pfn: Pfn, mt: usize) -> (u64, u64) {
        let phys = pfn + self.first_pfn;
        let mask = self.pageblock_pages() as u32 - 1;
        let block_start = (phys & !mask).saturating_sub(self.first_pfn);
        let start = block_start.max(self.start_pfn);
        let end = ((phys | mask) + 1 - self.first_pfn).min(self.end_pfn);
        let (mut moved, mut movable) = (0, 0);
        let mut p = start;
        while p < end {
            let page = &pages[p as usize];
            if page.holder == Holder::Free && page.index() & HEAD != 0 {
                let order = (page.index() & 0xff) as usize;
                self.move_buddy(pages, p, order, mt);
                moved += 1 << order;
                p += 1 << order;
                continue;
            }
            if page.holder.lru().is_some() {
                movable += 1;
            }
            p += 1;
        }
        (moved, movable)
    }
}

impl Memory {
    /// Group the zones' free pages by mobility (at build, after the boot
    /// allocations, `vm.watermark_boost_factor` = `factor`): a pageblock
    /// holding pages the kernel took at boot is UNMOVABLE (as the first
    /// DMA block of the real 6.1 guests is), the others MOVABLE, and the
    /// free pages go to the buddy lists in pfn order, at the tail
    /// (`memblock_free_all`).
    pub fn enable_page_mobility(&mut self, factor: u32) {
        self.boost_factor = factor;
        for zone in &mut self.zones {
            let start = zone.start_pfn;
            let end = start + zone.present_pages as u32;
            let mut buddy = Buddy::at_unit(start, end, self.unit);
            while zone.free.head != NIL {
                let pfn = zone.free.head;
                list_del(&mut self.pages, &mut zone.free, pfn);
            }
            for pfn in start..end {
                if self.pages[pfn as usize].holder == Holder::Kernel {
                    buddy.set_block_type(pfn, MIGRATE_UNMOVABLE);
                }
            }
            for pfn in start..end {
                if self.pages[pfn as usize].holder == Holder::Free {
                    self.pages[pfn as usize].set_index(0);
                    let mt = buddy.block_type(pfn);
                    buddy.free_one(&mut self.pages, pfn, mt, true);
                }
            }
            zone.buddy = Some(buddy);
        }
    }
}

#[cfg(test)]
mod tests;
