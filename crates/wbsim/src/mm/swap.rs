//! Anonymous memory and swap, Linux 3.0: the swap area and its slot
//! allocator (`mm/swapfile.c: scan_swap_map`, `swap_free`), the swap cache
//! (`mm/swap_state.c: add_to_swap`, `delete_from_swap_cache`,
//! `read_swap_cache_async`, `swapin_readahead`), `try_to_unmap` for the one
//! mapping a page has in the model, `swap_writepage` (`mm/page_io.c`) and
//! the anonymous fault paths of `mm/memory.c` (`do_anonymous_page`,
//! `do_swap_page`).
//!
//! Representation. An anonymous region (one process's heap) has a page
//! table ([`AnonRegion`]: per virtual page number, none, the frame of a
//! present page, or the swap entry of a swapped-out one), which a touch
//! reads, as the MMU does, and an inode of kind `Anon` whose page index is
//! the vpn and holds the same present pages (the reverse map's side: what
//! reclaim and the checks count). The swap cache is an inode of kind `Swap`
//! indexed by slot (the kernel's `swapper_space`). A page in the swap cache
//! and mapped belongs to its region (`page.inode` = region, `index` = vpn)
//! and records its slot in `System::page_swap_slot`; once unmapped it
//! belongs to the swap cache (`page.inode` = swap inode, `index` = slot).
//!
//! Swap is not accounted as file writeback: anonymous pages never enter the
//! dirty counts, and the swap `backing_dev_info` (`swap_backing_dev_info`,
//! BDI_CAP_NO_ACCT_AND_WRITEBACK) neither counts writeback nor earns a
//! writeback proportion, nor is it ever congested, so `may_write_to_queue`
//! always lets reclaim write to swap.

use crate::mm::filemap::Filemap;
use crate::mm::page::{flags, Pfn, NIL};
use crate::mm::page_alloc::PageAlloc;
use crate::mm::vmstat::Ev;
use crate::mm::Gfp;
use crate::mm::Memory;
use crate::mm::MemoryOps;
use crate::mm::MmHost;
use crate::sched::Step;

/// `page_cluster` default (3.0, `swap_setup`, more than 16 MiB of memory):
/// swap-in reads an aligned block of 2^3 slots.
pub const PAGE_CLUSTER: u32 = 3;

/// "No slot" in a region's swap PTE array or `page_swap_slot`.
pub const NO_SLOT: u32 = u32::MAX;

/// The swap area (one swap partition).
#[derive(Debug, Clone)]
pub struct SwapArea {
    pub device: usize,
    /// `swapper_space`: the swap cache, indexed by slot.
    pub inode: u32,
    /// Slots in use (`swap_map[slot] != 0`). Slot 0 is the header.
    in_use: Vec<bool>,
    pub nr_slots: u32,
    pub inuse_slots: u32,
    /// Where the next allocation scan starts (`si->cluster_next`).
    cluster_next: u32,
}

impl SwapArea {
    pub fn new(device: usize, inode: u32, nr_slots: u32) -> SwapArea {
        let mut in_use = vec![false; nr_slots as usize];
        in_use[0] = true;
        SwapArea {
            device,
            inode,
            in_use,
            nr_slots,
            inuse_slots: 1,
            cluster_next: 1,
        }
    }

    /// `scan_swap_map`: the next free slot at or after `cluster_next`,
    /// wrapping once; consecutive allocations are consecutive slots, so
    /// reclaim's swap writes are sequential on the device.
    pub fn alloc_slot(&mut self) -> Option<u32> {
        if self.inuse_slots >= self.nr_slots {
            return None;
        }
        let n = self.nr_slots;
        let mut s = self.cluster_next;
        for _ in 0..n {
            if s >= n {
                s = 1;
            }
            if !self.in_use[s as usize] {
                self.in_use[s as usize] = true;
                self.inuse_slots += 1;
                self.cluster_next = s + 1;
                return Some(s);
            }
            s += 1;
        }
        None
    }

    /// `swap_free`: the last reference to the slot went away.
    pub fn free_slot(&mut self, slot: u32) {
        debug_assert!(self.in_use[slot as usize]);
        self.in_use[slot as usize] = false;
        self.inuse_slots -= 1;
    }

    pub fn slot_in_use(&self, slot: u32) -> bool {
        self.in_use.get(slot as usize).copied().unwrap_or(false)
    }

    /// `nr_swap_pages`: free slots.
    pub fn free_slots(&self) -> u64 {
        (self.nr_slots - self.inuse_slots) as u64
    }

    /// `vm_swap_full`: more than half the slots in use.
    pub fn full(&self) -> bool {
        self.inuse_slots * 2 > self.nr_slots
    }
}

/// One process's anonymous memory.
#[derive(Debug, Clone)]
pub struct AnonRegion {
    /// The region's inode (kind `Anon`): `pages[vpn]` are the present
    /// pages, as in `pte`.
    pub inode: u32,
    /// The page table: per vpn, [`PTE_NONE`], a present page's frame
    /// with its accessed bit ([`PTE_ACCESSED`]), or [`SWAP_ENTRY`] and the
    /// slot of a swapped-out page. A touch of a present page reads and
    /// sets only this, as the MMU walks the page table and sets the PTE's
    /// accessed bit without touching `struct page`: the frame is not on
    /// that path, and a hot set of thousands of pages touched at random
    /// stays in the host's cache (setting a flag in each touched frame
    /// missed it; that and the page-cache index's chain of lookups were
    /// a fifth of the reclaim-writeback fs_mark run's time, `perf
    /// record`).
    pte: Vec<u32>,
}

/// A page table entry never touched.
pub const PTE_NONE: u32 = u32::MAX;
/// The bit of a swap entry; the slot is in the bits below it. Slots are
/// below 2^28 (swap is at most 2^20 MiB, `[swap] size_mib`).
pub const SWAP_ENTRY: u32 = 1 << 31;
/// A present entry's accessed ("young") bit, `_PAGE_ACCESSED`: set by a
/// touch, tested and cleared by `page_referenced`. The frame is in the
/// bits below it (frames are below 2^24, `MAX_FRAMES`).
pub const PTE_ACCESSED: u32 = 1 << 30;

/// What a page table entry holds.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Pte {
    None,
    Present(Pfn),
    Swapped(u32),
}

impl AnonRegion {
    /// A region of `pages` pages, none touched, with inode `inode`.
    pub fn new(inode: u32, pages: usize) -> AnonRegion {
        AnonRegion {
            inode,
            pte: vec![PTE_NONE; pages],
        }
    }

    /// The entry of `vpn`.
    #[inline]
    pub fn pte(&self, vpn: u32) -> Pte {
        match self.pte[vpn as usize] {
            PTE_NONE => Pte::None,
            e if e & SWAP_ENTRY != 0 => Pte::Swapped(e & !SWAP_ENTRY),
            e => Pte::Present(e & !PTE_ACCESSED),
        }
    }

    /// A user access to `vpn`: the MMU sets the accessed bit of a present
    /// entry. Returns the entry as it was.
    #[inline]
    fn access(&mut self, vpn: u32) -> Pte {
        let e = &mut self.pte[vpn as usize];
        if *e & SWAP_ENTRY == 0 {
            *e |= PTE_ACCESSED;
            return Pte::Present(*e & !PTE_ACCESSED);
        }
        match *e {
            PTE_NONE => Pte::None,
            slot => Pte::Swapped(slot & !SWAP_ENTRY),
        }
    }

    /// Map `pfn` at `vpn` for the access that faulted it in (accessed).
    pub(crate) fn map(&mut self, vpn: u32, pfn: Pfn) {
        debug_assert!(pfn < PTE_ACCESSED);
        self.pte[vpn as usize] = pfn | PTE_ACCESSED;
    }

    /// Whether the entry of `vpn` is accessed ("young").
    pub fn young(&self, vpn: u32) -> bool {
        self.pte[vpn as usize] & (SWAP_ENTRY | PTE_ACCESSED) == PTE_ACCESSED
    }

    /// `ptep_test_and_clear_young`: whether the present entry of `vpn`
    /// was accessed; clears the bit.
    pub(crate) fn test_and_clear_young(&mut self, vpn: u32) -> bool {
        let young = self.young(vpn);
        if young {
            self.pte[vpn as usize] &= !PTE_ACCESSED;
        }
        young
    }

    /// Replace the page at `vpn` by the swap entry of `slot`.
    fn swap_out(&mut self, vpn: u32, slot: u32) {
        debug_assert!(slot < SWAP_ENTRY - 1);
        self.pte[vpn as usize] = SWAP_ENTRY | slot;
    }
}

/// Anonymous memory and swap: faults, swap-out and swap-in (`mm/memory.c`, `mm/swap_state.c`, `mm/page_io.c`).
pub trait Swap: MmHost {
    /// `swap_writepage`: write an unmapped swap-cache page to its slot.
    fn swap_writepage(&mut self, tid: u32, pfn: Pfn) {
        self.charge_sys(tid, self.cost().writeback_page_ns);
        self.submit_page_write(tid, pfn);
        self.mm_mut().vmstat.inc(Ev::PswpOut, 1);
    }

    /// A user access to anonymous page `vpn` of region `r` by task `tid`
    /// (`handle_mm_fault` when the PTE is not present or not writable).
    /// `Err(step)` when the task must sleep (allocation or swap-in read);
    /// it retries the access after waking.
    ///
    /// The present page without a fault is by far the most common touch
    /// (a hot set touched at a steady rate), so it is inlined and the
    /// faults are in [`Swap::fault_anon`], out of line.
    #[inline]
    fn touch_anon(&mut self, tid: u32, r: usize, vpn: u32, write: bool) -> Result<(), Step> {
        // Present: the MMU sets the accessed bit.
        let pfn = match self.mm_mut().anon_regions[r].access(vpn) {
            Pte::Present(pfn) => pfn,
            pte => return self.fault_anon(tid, r, vpn, pte, write),
        };
        if !write {
            return Ok(());
        }
        let p = &self.mm().pages[pfn as usize];
        if p.has(flags::SWAPCACHE) && !p.has(flags::WRITEBACK) {
            // do_wp_page → reuse_swap_page: the swap copy is stale now.
            self.mm_mut().vmstat.inc(Ev::PgFault, 1);
            self.mm_mut().drop_swap_copy(pfn);
        }
        Ok(())
    }

    /// A touch of page `vpn` (of region `r`, mapping `ino`) that is not
    /// present: a new zeroed page or a swap-in.
    #[inline(never)]
    fn fault_anon(
        &mut self,
        tid: u32,
        r: usize,
        vpn: u32,
        pte: Pte,
        write: bool,
    ) -> Result<(), Step> {
        self.mm_mut().vmstat.inc(Ev::PgFault, 1);
        match pte {
            Pte::Swapped(slot) => self.do_swap_page(tid, r, vpn, slot, write),
            _ => self.do_anonymous_page(tid, r, vpn),
        }
    }

    /// `do_anonymous_page` (3.0): a zeroed page, mapped, on the active anon
    /// list (`page_add_new_anon_rmap` → `lru_cache_add_lru(LRU_ACTIVE_ANON)`).
    fn do_anonymous_page(&mut self, tid: u32, r: usize, vpn: u32) -> Result<(), Step> {
        let ino = self.mm().anon_regions[r].inode;
        let pfn = self.alloc_page_for_task(tid, Gfp::movable(false))?;
        self.charge_sys(tid, self.cost().copy_per_kib_ns * 4);
        let p = &mut self.mm_mut().pages[pfn as usize];
        p.flags = flags::ANON | flags::UPTODATE | flags::ACTIVE | flags::PTE_MAPPED;
        p.set_mapping(ino, vpn);
        self.mm_mut().inodes[ino as usize].insert(vpn, pfn);
        self.mm_mut().anon_regions[r].map(vpn, pfn);
        let cpu = self.task(tid).cpu;
        self.mm_mut().lru_cache_add(cpu, pfn);
        Ok(())
    }

    /// `do_swap_page` (3.0): find the slot's page in the swap cache or read
    /// it (with `swapin_readahead`), wait for the read, then map it. A write
    /// access takes the page out of the swap cache (`reuse_swap_page`).
    fn do_swap_page(
        &mut self,
        tid: u32,
        r: usize,
        vpn: u32,
        slot: u32,
        write: bool,
    ) -> Result<(), Step> {
        let swap_ino = self.mm().swap.as_ref().map_or(NIL, |s| s.inode);
        let mut pfn = self.mm().inodes[swap_ino as usize].page(slot);
        if pfn == NIL {
            pfn = self.swapin_readahead(tid, slot)?;
            self.mm_mut().vmstat.inc(Ev::PgMajFault, 1);
        }
        if self.mm().pages[pfn as usize].has(flags::LOCKED) {
            // lock_page: wait for the read to complete.
            self.mm_mut().read_waiters.push((pfn, tid));
            return Err(Step::Wait(None));
        }
        let ino = self.mm().anon_regions[r].inode;
        self.mm_mut().anon_regions[r].map(vpn, pfn);
        let p = &mut self.mm_mut().pages[pfn as usize];
        p.set_mapping(ino, vpn);
        p.flags |= flags::PTE_MAPPED;
        self.mm_mut().inodes[ino as usize].insert(vpn, pfn);
        self.mm_mut().set_page_swap_slot(pfn, slot);
        let full = self.mm().swap.as_ref().is_some_and(SwapArea::full);
        if (write || full) && !self.mm().pages[pfn as usize].has(flags::WRITEBACK) {
            self.mm_mut().drop_swap_copy(pfn);
        }
        Ok(())
    }

    /// `swapin_readahead` (3.0 `valid_swaphandles`): read the slot and the
    /// other in-use slots of its aligned block of 2^`PAGE_CLUSTER` that
    /// are not cached. The faulting slot's page may enter direct reclaim;
    /// readahead pages are allocated only if free pages are at hand.
    /// Returns the faulting slot's page (locked until its read completes).
    fn swapin_readahead(&mut self, tid: u32, slot: u32) -> Result<Pfn, Step> {
        let target = self.alloc_page_for_task(tid, Gfp::movable(false))?;
        self.read_swap_page(tid, target, slot);
        let block = 1u32 << PAGE_CLUSTER;
        let first = (slot & !(block - 1)).max(1);
        let swap = self.mm().swap.as_ref().expect("swap pte without swap");
        let (swap_ino, nr_slots) = (swap.inode, swap.nr_slots);
        for s in first..(first + block).min(nr_slots) {
            let cached = self.mm().inodes[swap_ino as usize].page(s) != NIL;
            let in_use = self.mm().swap.as_ref().is_some_and(|a| a.slot_in_use(s));
            if s == slot || cached || !in_use {
                continue;
            }
            let Some(pfn) = self.alloc_readahead_page(tid) else {
                break;
            };
            self.read_swap_page(tid, pfn, s);
        }
        let dev = self.mm().swap.as_ref().map_or(0, |a| a.device);
        self.kick_device(dev);
        Ok(target)
    }

    /// `read_swap_cache_async` for one slot: the new page enters the swap
    /// cache locked, goes on the inactive anon list, and a read is queued.
    fn read_swap_page(&mut self, tid: u32, pfn: Pfn, slot: u32) {
        let swap_ino = self.mm().swap.as_ref().map_or(NIL, |s| s.inode);
        self.mm_mut().pages[pfn as usize].flags = flags::ANON | flags::SWAPCACHE | flags::LOCKED;
        self.mm_mut().set_page_swap_slot(pfn, slot);
        self.add_to_page_cache_lru(tid, pfn, swap_ino, slot);
        self.submit_page_read(tid, pfn);
        self.mm_mut().vmstat.inc(Ev::PswpIn, 1);
    }

    /// A read completed: unlock the page and wake whoever waits on it.
    fn end_page_read(&mut self, pfn: Pfn) {
        self.mm_mut().pages[pfn as usize].flags &= !flags::LOCKED;
        let mut i = 0;
        while i < self.mm().read_waiters.len() {
            if self.mm().read_waiters[i].0 == pfn {
                let (_, tid) = self.mm_mut().read_waiters.swap_remove(i);
                self.wake_task(tid);
            } else {
                i += 1;
            }
        }
    }
}

impl<T: MmHost + ?Sized> Swap for T {}

impl Memory {
    /// `page_referenced`'s test of the accessed bit of the page's one
    /// mapping, cleared as it is tested: an anonymous page's PTE is in its
    /// region's page table, a mapped file page's bit is its frame's
    /// `PTE_YOUNG`.
    pub fn test_and_clear_young(&mut self, pfn: Pfn) -> bool {
        let p = self.pages[pfn as usize];
        if p.has(flags::ANON) {
            if !p.has(flags::PTE_MAPPED) {
                return false;
            }
            let r = self.region_of_inode(p.inode());
            return self.anon_regions[r].test_and_clear_young(p.index());
        }
        let young = p.has(flags::PTE_YOUNG);
        if young {
            self.pages[pfn as usize].flags &= !flags::PTE_YOUNG;
        }
        young
    }

    /// Free swap slots (`nr_swap_pages`), 0 without a swap area.
    pub fn nr_swap_pages(&self) -> u64 {
        self.swap.as_ref().map_or(0, SwapArea::free_slots)
    }

    pub fn region_of_inode(&self, ino: u32) -> usize {
        self.find_region_of_inode(ino)
            .expect("anonymous page outside every region")
    }

    /// The anonymous region whose inode is `ino`, if any.
    pub fn find_region_of_inode(&self, ino: u32) -> Option<usize> {
        self.anon_regions.iter().position(|r| r.inode == ino)
    }

    /// `add_to_swap`: give an anonymous page a slot and put it in the swap
    /// cache, dirty (it must be written before it can be freed). False
    /// when swap is full or absent.
    pub fn add_to_swap(&mut self, pfn: Pfn) -> bool {
        let Some(slot) = self.swap.as_mut().and_then(SwapArea::alloc_slot) else {
            return false;
        };
        let swap_ino = self.swap.as_ref().map_or(NIL, |s| s.inode);
        self.inodes[swap_ino as usize].insert(slot, pfn);
        self.set_page_swap_slot(pfn, slot);
        self.pages[pfn as usize].flags |= flags::SWAPCACHE | flags::DIRTY;
        true
    }

    /// `delete_from_swap_cache` + `swap_free` (`try_to_free_swap`,
    /// `reuse_swap_page`): the page no longer has a copy in swap.
    pub fn drop_swap_copy(&mut self, pfn: Pfn) {
        let slot = self.page_swap_slot(pfn);
        let swap = self.swap.as_mut().expect("swap cache page without swap");
        swap.free_slot(slot);
        let swap_ino = swap.inode;
        self.inodes[swap_ino as usize].remove(slot);
        self.set_page_swap_slot(pfn, NO_SLOT);
        self.pages[pfn as usize].flags &= !flags::SWAPCACHE;
    }

    /// `try_to_unmap` of the page's one mapping. An anonymous page's PTE
    /// becomes its swap entry and the page now belongs to the swap cache; a
    /// file page just loses its PTE (the PTE dirty bit was moved to the page
    /// by the fault that dirtied it).
    pub fn try_to_unmap(&mut self, pfn: Pfn) {
        let p = self.pages[pfn as usize];
        debug_assert!(p.has(flags::PTE_MAPPED));
        self.pages[pfn as usize].flags &= !(flags::PTE_MAPPED | flags::PTE_YOUNG);
        if !p.has(flags::ANON) {
            return;
        }
        let slot = self.page_swap_slot(pfn);
        let r = self.region_of_inode(p.inode());
        self.anon_regions[r].swap_out(p.index(), slot);
        self.inodes[p.inode() as usize].remove(p.index());
        let swap_ino = self.swap.as_ref().map_or(NIL, |s| s.inode);
        let pg = &mut self.pages[pfn as usize];
        pg.set_mapping(swap_ino, slot);
    }

    /// Free a clean, unmapped swap-cache page (`__remove_mapping` on
    /// `swapper_space`): the data stays in its slot for the PTE to find.
    pub fn remove_from_swap_cache(&mut self, pfn: Pfn) {
        let p = self.pages[pfn as usize];
        self.inodes[p.inode() as usize].remove(p.index());
        self.set_page_swap_slot(pfn, NO_SLOT);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn slots_are_allocated_in_order_and_reused_after_wrap() {
        let mut a = SwapArea::new(0, 0, 5);
        assert_eq!(a.alloc_slot(), Some(1));
        assert_eq!(a.alloc_slot(), Some(2));
        a.free_slot(1);
        assert_eq!(a.alloc_slot(), Some(3));
        assert_eq!(a.alloc_slot(), Some(4));
        // Wraps to the freed slot 1; then the area is full.
        assert_eq!(a.alloc_slot(), Some(1));
        assert_eq!(a.alloc_slot(), None);
        assert_eq!(a.free_slots(), 0);
        assert!(a.full());
    }

    /// A page table entry through a page's life: none, faulted in
    /// (accessed), aged by reclaim, touched again, swapped out.
    #[test]
    fn a_pte_keeps_its_frame_accessed_bit_and_swap_entry_apart() {
        let mut r = AnonRegion::new(7, 4);
        assert_eq!(r.access(2), Pte::None);
        let last_frame = (1 << 24) - 1;
        r.map(2, last_frame);
        assert_eq!(r.pte(2), Pte::Present(last_frame));
        assert!(r.test_and_clear_young(2));
        assert!(!r.young(2) && !r.test_and_clear_young(2));
        assert_eq!(r.access(2), Pte::Present(last_frame));
        assert!(r.young(2));
        let last_slot = (1 << 28) - 1;
        r.swap_out(2, last_slot);
        assert_eq!(r.pte(2), Pte::Swapped(last_slot));
        assert_eq!(r.access(2), Pte::Swapped(last_slot));
        assert!(!r.young(2) && !r.test_and_clear_young(2));
        assert_eq!((r.pte(0), r.pte(3)), (Pte::None, Pte::None));
    }
}
