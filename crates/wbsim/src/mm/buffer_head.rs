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
//! 3.x; SLUB packs 4096 / 104 objects). Each object remembers its slab
//! page, and the slab pages move between SLUB's lists as 3.2/3.3's
//! `mm/slub.c` moves them (read in the 3.3.8 tree):
//! - allocation (`__slab_alloc`): the CPU's slab until it is full (a full
//!   slab leaves every list); then the CPU's partial list, newest first;
//!   then the node's partial list from its head (`get_partial_node`, which
//!   also moves further slabs onto the CPU's partial list until more than
//!   `cpu_partial / 2` objects are free there); then `new_slab`;
//! - free (`__slab_free`): a frozen slab (a CPU's slab or on a CPU's
//!   partial list) just loses the object, even to empty; a full slab is
//!   frozen onto the freeing CPU's partial list (`put_cpu_partial`, which
//!   first moves the whole list to the node's tail, `unfreeze_partials`,
//!   once it holds more than `cpu_partial` free objects); a slab on the
//!   node's list that empties is given back (`discard_slab`) once the node
//!   keeps more than `min_partial` partial slabs.
//!
//! So freed objects are refilled in place and a slab page mixes objects of
//! every age: a burst of reclaim rarely empties one, and slab pages stay in
//! the zone they were first allocated in, as the real 3.3.8 guest's Normal
//! zone shows (6.8-9.2 K slab pages from the first fill of memory to the
//! end of a 5 GiB dd, lab boot, `zoneinfo` each second). The slab page is
//! allocated with `GFP_NOFS` (no `__GFP_WRITE`): the fast path at the low
//! watermark, then kswapd woken and the min watermark; should both fail the
//! object is counted but has no page (the real `alloc_buffer_head` would
//! enter direct reclaim). Not modelled: other slab caches (radix-tree
//! nodes, journal heads), debug caches; and the era before 3.2's per-CPU
//! partial lists (`slub: per cpu partial lists`), where a free to a full
//! slab put it straight on the node's list: every preset uses the 3.2
//! lists (a slab emptied by a burst of frees is given back either way).

use std::collections::VecDeque;
use std::mem::size_of;

use super::page::{flags, FrameWords, Holder, Pfn, NIL};
use super::{Gfp, Mark, MemoryOps, MmHost};

/// `struct buffer_head` objects in one order-0 SLUB slab (4096 / 104).
pub const BUFFER_HEADS_PER_SLAB_PAGE: u8 = 39;

/// `kmem_cache.cpu_partial` for objects under 256 bytes (3.2 – 3.x,
/// `kmem_cache_open`): free objects a CPU's partial list may hold.
const CPU_PARTIAL_OBJECTS: u32 = 30;

/// `kmem_cache.min_partial`: `ilog2(104) / 2` = 3, raised to
/// `MIN_PARTIAL` (5): partial slabs a node keeps even when empty.
const MIN_PARTIAL_SLABS: u32 = 5;

/// Host bytes the cache keeps per simulated page frame (its object's
/// slab, and as a slab page its objects in use and list), for the run's
/// memory estimate. All three start as zeroed memory, which the OS maps
/// only when written: a frame that never holds a buffer head or is never
/// a slab page costs no resident memory here.
pub const HOST_BYTES_PER_FRAME: u64 = (size_of::<u32>() + size_of::<u8>() + size_of::<u8>()) as u64;

/// Where a slab page of the cache is (`struct page` `frozen` and lists).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
#[repr(u8)]
enum SlabList {
    /// Not a slab page of this cache.
    #[default]
    None,
    /// Some CPU's slab (frozen).
    CpuSlab,
    /// On some CPU's partial list (frozen).
    CpuPartial,
    /// On the node's partial list.
    NodePartial,
    /// No free object: on no list.
    Full,
}

impl SlabList {
    fn from_u8(v: u8) -> SlabList {
        match v {
            1 => SlabList::CpuSlab,
            2 => SlabList::CpuPartial,
            3 => SlabList::NodePartial,
            4 => SlabList::Full,
            _ => SlabList::None,
        }
    }
}

/// The `buffer_head` cache.
#[derive(Debug, Clone, Default)]
pub struct BufferHeadCache {
    /// Live objects.
    pub objects: u64,
    /// Per page frame of a page-cache page: the slab page holding its
    /// buffer head (NIL: none, or no slab page could be had).
    slab_of_page: FrameWords,
    /// Per slab page frame: objects in use.
    inuse: Vec<u8>,
    /// Per slab page frame: which list it is on (a [`SlabList`] as `u8`,
    /// 0 = none, zeroed memory too).
    list: Vec<u8>,
    /// Per CPU: its slab (NIL: none).
    cpu_slab: Vec<Pfn>,
    /// Per CPU: its partial list, head last, each with the free objects of
    /// the list up to it when it was pushed (`page->pobjects`).
    cpu_partial: Vec<Vec<(Pfn, u32)>>,
    /// The node's partial list, head first.
    node_partial: VecDeque<Pfn>,
    /// Slab pages the last free emptied, in order, for the caller to give
    /// back (kept between frees: no allocation per free).
    discard: Vec<Pfn>,
}

impl BufferHeadCache {
    /// An empty cache for `nr_pages` page frames and `cpus` CPUs.
    pub fn new(nr_pages: usize, cpus: usize) -> BufferHeadCache {
        BufferHeadCache {
            objects: 0,
            slab_of_page: FrameWords::none(nr_pages),
            inuse: vec![0; nr_pages],
            list: vec![SlabList::None as u8; nr_pages],
            cpu_slab: vec![NIL; cpus],
            cpu_partial: (0..cpus).map(|_| Vec::with_capacity(64)).collect(),
            node_partial: VecDeque::new(),
            discard: Vec::with_capacity(64),
        }
    }

    /// Slab pages the cache holds.
    #[cfg(test)]
    fn slab_pages(&self) -> usize {
        self.list
            .iter()
            .filter(|&&l| l != SlabList::None as u8)
            .count()
    }

    /// The slab page holding the buffer head of page `pfn`, `NIL` if none.
    #[inline]
    fn slab_of(&self, pfn: Pfn) -> Pfn {
        self.slab_of_page.get(pfn)
    }

    #[inline]
    fn set_slab_of(&mut self, pfn: Pfn, slab: Pfn) {
        self.slab_of_page.set(pfn, slab);
    }

    #[inline]
    fn list_of(&self, slab: Pfn) -> SlabList {
        SlabList::from_u8(self.list[slab as usize])
    }

    #[inline]
    fn set_list(&mut self, slab: Pfn, list: SlabList) {
        self.list[slab as usize] = list as u8;
    }

    /// The next slab to allocate from on `cpu` (not the CPU slab, which is
    /// full or absent): `c->partial`, then `get_partial_node`. None: a
    /// new slab is needed.
    fn next_partial_slab(&mut self, cpu: usize) -> Option<Pfn> {
        if let Some((slab, _)) = self.cpu_partial[cpu].pop() {
            return Some(slab);
        }
        let first = self.node_partial.pop_front()?;
        let mut available = u32::from(BUFFER_HEADS_PER_SLAB_PAGE - self.inuse[first as usize]);
        while available <= CPU_PARTIAL_OBJECTS / 2 {
            let Some(more) = self.node_partial.pop_front() else {
                break;
            };
            available = self.push_cpu_partial(cpu, more);
        }
        Some(first)
    }

    /// `put_cpu_partial` without the drain: `slab` onto `cpu`'s partial
    /// list; the list's free objects.
    fn push_cpu_partial(&mut self, cpu: usize, slab: Pfn) -> u32 {
        let before = self.cpu_partial[cpu].last().map_or(0, |&(_, n)| n);
        let pobjects = before + u32::from(BUFFER_HEADS_PER_SLAB_PAGE - self.inuse[slab as usize]);
        self.set_list(slab, SlabList::CpuPartial);
        self.cpu_partial[cpu].push((slab, pobjects));
        pobjects
    }

    /// `unfreeze_partials`: `cpu`'s partial list, head first, to the
    /// node's tail; an empty slab goes to `discard` instead when the node
    /// keeps enough partial slabs (or, as in the source, when it comes
    /// before the node's list is first touched).
    fn unfreeze_partials(&mut self, cpu: usize) {
        let mut node_touched = false;
        while let Some((slab, _)) = self.cpu_partial[cpu].pop() {
            let empty = self.inuse[slab as usize] == 0;
            if empty && (!node_touched || self.node_partial.len() as u32 > MIN_PARTIAL_SLABS) {
                self.set_list(slab, SlabList::None);
                self.discard.push(slab);
            } else {
                node_touched = true;
                self.set_list(slab, SlabList::NodePartial);
                self.node_partial.push_back(slab);
            }
        }
    }

    /// `__slab_free` of the object of page-cache page `pfn` on `cpu`: the
    /// slab pages to give back (`discard_slab`) go to `discard`.
    #[inline(always)]
    fn free_object(&mut self, cpu: usize, pfn: Pfn) {
        let slab = self.slab_of(pfn);
        self.set_slab_of(pfn, NIL);
        if slab == NIL {
            return;
        }
        let s = slab as usize;
        self.inuse[s] -= 1;
        match self.list_of(slab) {
            SlabList::CpuSlab | SlabList::CpuPartial | SlabList::None => {}
            SlabList::Full => {
                // Frozen onto this CPU's list: put_cpu_partial(drain = 1).
                let pobjects = self.cpu_partial[cpu].last().map_or(0, |&(_, n)| n);
                if pobjects > CPU_PARTIAL_OBJECTS {
                    self.unfreeze_partials(cpu);
                }
                self.push_cpu_partial(cpu, slab);
            }
            SlabList::NodePartial => {
                if self.inuse[s] == 0 && self.node_partial.len() as u32 > MIN_PARTIAL_SLABS {
                    if let Some(i) = self.node_partial.iter().position(|&p| p == slab) {
                        self.node_partial.remove(i);
                    }
                    self.set_list(slab, SlabList::None);
                    self.discard.push(slab);
                }
            }
        }
    }
}

/// Buffer heads on page-cache pages (`PG_private`).
pub trait BufferHeads: MmHost {
    /// `create_empty_buffers` from the `write_begin` of mapping `ino`: page
    /// `pfn` gets its buffer head, once, if the mapping's filesystem uses
    /// them (`alloc_buffer_head` on the task's CPU).
    #[inline(always)]
    fn attach_buffer_heads(&mut self, tid: u32, ino: u32, pfn: Pfn) {
        if self.mm().pages[pfn as usize].has(flags::PRIVATE) || !self.mapping_has_buffer_heads(ino)
        {
            return;
        }
        self.mm_mut().pages[pfn as usize].flags |= flags::PRIVATE;
        let cpu = self.task(tid).cpu;
        self.mm_mut().bh_cache.objects += 1;
        loop {
            let cache = &mut self.mm_mut().bh_cache;
            let slab = cache.cpu_slab[cpu];
            if slab != NIL {
                let s = slab as usize;
                if cache.inuse[s] < BUFFER_HEADS_PER_SLAB_PAGE {
                    cache.inuse[s] += 1;
                    cache.set_slab_of(pfn, slab);
                    return;
                }
                // Exhausted: the slab is full and on no list.
                cache.set_list(slab, SlabList::Full);
                cache.cpu_slab[cpu] = NIL;
            }
            let next = match cache.next_partial_slab(cpu) {
                Some(partial) => partial,
                None => match self.new_buffer_head_slab(tid) {
                    Some(new) => new,
                    None => return,
                },
            };
            let cache = &mut self.mm_mut().bh_cache;
            cache.set_list(next, SlabList::CpuSlab);
            cache.cpu_slab[cpu] = next;
        }
    }

    /// `new_slab` for the buffer_head cache (GFP_NOFS, order 0, a
    /// SLAB_RECLAIM_ACCOUNT cache: `__GFP_RECLAIMABLE`); None if no page
    /// could be had.
    fn new_buffer_head_slab(&mut self, tid: u32) -> Option<Pfn> {
        let gfp = Gfp::reclaimable_slab();
        let pfn = match self.get_page_from_freelist(tid, Mark::Low, gfp) {
            Some(pfn) => pfn,
            None => {
                self.wake_all_kswapd(tid, gfp);
                self.get_page_from_freelist(tid, Mark::Min, gfp)?
            }
        };
        let mm = self.mm_mut();
        mm.pages[pfn as usize].holder = Holder::Kernel;
        let z = mm.pages.zone_of(pfn);
        mm.zones[z].nr_slab_reclaimable += 1;
        mm.bh_cache.inuse[pfn as usize] = 0;
        Some(pfn)
    }

    /// `try_to_free_buffers` → `free_buffer_head` as page `pfn` leaves the
    /// page cache, on `tid`'s CPU; an emptied slab page goes back to the
    /// allocator (`discard_slab`, onto the CPU's list like any freed page).
    #[inline(always)]
    fn release_buffer_heads(&mut self, tid: u32, pfn: Pfn) {
        let cpu = self.task(tid).cpu;
        let mm = self.mm_mut();
        mm.pages[pfn as usize].flags &= !flags::PRIVATE;
        mm.bh_cache.objects = mm.bh_cache.objects.saturating_sub(1);
        mm.bh_cache.free_object(cpu, pfn);
        if !self.mm().bh_cache.discard.is_empty() {
            self.discard_slabs(tid);
        }
    }

    /// `discard_slab` of each emptied slab page: back to the allocator.
    /// Out of line, as it frees pages itself (`free_page` calls the
    /// function above, which may call this).
    #[inline(never)]
    fn discard_slabs(&mut self, tid: u32) {
        for i in 0..self.mm().bh_cache.discard.len() {
            let slab = self.mm().bh_cache.discard[i];
            let z = self.mm().pages.zone_of(slab);
            self.mm_mut().zones[z].nr_slab_reclaimable -= 1;
            self.free_page(tid, slab);
        }
        self.mm_mut().bh_cache.discard.clear();
    }
}

impl<T: MmHost + ?Sized> BufferHeads for T {}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sched::HasCore;
    use crate::system::System;
    use crate::test_support;

    /// A two-CPU machine with an ext4 file, its tasks 0 (dd, CPU 0) and 1
    /// (dd, CPU 1), and `n` free page frames to stand for page-cache pages.
    fn machine(n: usize) -> (System, u32, Vec<Pfn>) {
        let sc = test_support::usb_stick_scenario("3.3", "ext4", 2, &["a", "b"]);
        let sys = crate::system::build_system(&sc, &crate::kernel::preset("3.3").unwrap(), 1);
        let ino = (0..sys.mm().nr_inodes() as u32)
            .find(|&i| sys.mm().inode(i).kind == crate::mm::inode::MappingKind::Regular)
            .expect("a regular file");
        let mut sys = sys;
        let top = sys.mm().nr_zones() - 1;
        let pages = (0..n)
            .map(|_| sys.mm_mut().take_free_page(top).expect("a free page"))
            .collect();
        (sys, ino, pages)
    }

    fn slab_pages_in_zones(sys: &System) -> u64 {
        (0..sys.mm().nr_zones())
            .map(|z| sys.mm().zone(z).nr_slab_reclaimable)
            .sum()
    }

    fn cache(sys: &System) -> &BufferHeadCache {
        &sys.mm().bh_cache
    }

    /// The per-frame bookkeeping starts as zeroed memory, which the OS
    /// maps only when written (so a 64 GiB machine whose page cache never
    /// fills it pays for the frames used), and zero reads as "none".
    #[test]
    fn a_new_cache_is_zeroed_memory_and_reads_as_empty() {
        let cache = BufferHeadCache::new(1000, 2);
        assert!(cache.slab_of_page.is_zeroed());
        assert!(cache.inuse.iter().chain(&cache.list).all(|&b| b == 0));
        assert_eq!(cache.slab_of(999), NIL);
        assert_eq!(cache.list_of(999), SlabList::None);
        let mut cache = cache;
        cache.set_slab_of(5, 0);
        cache.set_list(0, SlabList::NodePartial);
        assert_eq!(
            (cache.slab_of(5), cache.list_of(0)),
            (0, SlabList::NodePartial)
        );
    }

    #[test]
    fn the_cpu_slab_fills_first_and_a_page_gets_one_buffer_head_once() {
        let (mut sys, ino, pages) = machine(40);
        for &p in &pages[..39] {
            sys.attach_buffer_heads(0, ino, p);
        }
        sys.attach_buffer_heads(0, ino, pages[0]);
        assert_eq!(cache(&sys).objects, 39);
        assert_eq!(slab_pages_in_zones(&sys), 1);
        let top = sys.mm().nr_zones() - 1;
        assert_eq!(sys.mm().zone(top).nr_slab_reclaimable, 1, "zonelist order");
        let first = cache(&sys).cpu_slab[0];
        assert!(pages[..39].iter().all(|&p| cache(&sys).slab_of(p) == first));
        // The 40th: the CPU slab is full (on no list), a new one is taken.
        sys.attach_buffer_heads(0, ino, pages[39]);
        assert_eq!(cache(&sys).list_of(first), SlabList::Full);
        assert_ne!(cache(&sys).cpu_slab[0], first);
        assert_eq!(cache(&sys).slab_pages(), 2);
    }

    /// A free from a full slab freezes it onto the freeing CPU's partial
    /// list; that CPU's next allocations refill it in place, newest
    /// partial first, before any new slab.
    #[test]
    fn freed_objects_are_refilled_in_place_newest_partial_first() {
        let (mut sys, ino, pages) = machine(39 * 3 + 2);
        for &p in &pages[..39 * 3] {
            sys.attach_buffer_heads(0, ino, p);
        }
        let slab = |i: usize, sys: &System| cache(sys).slab_of(pages[i]);
        let (a, b) = (slab(0, &sys), slab(39, &sys));
        // One free in each of the two full slabs, on CPU 0.
        sys.release_buffer_heads(0, pages[0]);
        sys.release_buffer_heads(0, pages[39]);
        assert!(!sys.mm().pages()[pages[0] as usize].has(flags::PRIVATE));
        assert_eq!(cache(&sys).list_of(a), SlabList::CpuPartial);
        assert_eq!(cache(&sys).cpu_partial[0], vec![(a, 1), (b, 2)]);
        // The CPU slab is full too: the next two objects go to b, then a.
        let new = &pages[39 * 3..];
        sys.attach_buffer_heads(0, ino, new[0]);
        sys.attach_buffer_heads(0, ino, new[1]);
        assert_eq!(cache(&sys).slab_of(new[0]), b);
        assert_eq!(cache(&sys).slab_of(new[1]), a);
        assert_eq!(cache(&sys).slab_pages(), 3, "no page came or went");
    }

    /// A frozen slab is not given back even when empty. A CPU's partial
    /// list goes to the node's tail once it holds more than `cpu_partial`
    /// free objects, its empty slabs given back; a slab on the node's list
    /// that empties is given back while the node keeps more than
    /// `min_partial`; allocations take the node's list from its head.
    #[test]
    fn partial_lists_drain_to_the_node_and_empty_slabs_go_back() {
        let per = BUFFER_HEADS_PER_SLAB_PAGE as usize;
        let (mut sys, ino, pages) = machine(per * 72 + 1);
        for &p in &pages[..per * 72] {
            sys.attach_buffer_heads(0, ino, p);
        }
        assert_eq!(cache(&sys).slab_pages(), 72);
        let slab_nr = |k: usize, sys: &System| cache(sys).slab_of(pages[k * per]);
        let slabs: Vec<Pfn> = (0..72).map(|k| slab_nr(k, &sys)).collect();
        // Task 1 runs on CPU 1 (kswapd's role: it frees, never allocates).
        sys.task_mut(1).cpu = 1;
        // Slabs 0-31 emptied from CPU 1: each first free freezes one onto
        // CPU 1's list (one free object each), where it empties; the 32nd
        // push finds 31 free objects there, more than 30, and unfreezes
        // the 31 before the node's list is touched: all given back.
        for &p in &pages[..per * 32] {
            sys.release_buffer_heads(1, p);
        }
        assert_eq!(cache(&sys).cpu_partial[1], vec![(slabs[31], 1)]);
        assert!(cache(&sys).node_partial.is_empty());
        assert_eq!(cache(&sys).slab_pages(), 72 - 31);
        assert_eq!(slab_pages_in_zones(&sys), 72 - 31);
        let holder = |p: Pfn, sys: &System| sys.mm().pages()[p as usize].holder;
        assert_eq!(
            holder(slabs[0], &sys),
            Holder::PerCpu,
            "onto the CPU's list"
        );
        assert_eq!(
            holder(slabs[31], &sys),
            Holder::Kernel,
            "frozen, kept empty"
        );
        // Slabs 32-62 keep one object each: the 31st push drains CPU 1's
        // list, newest first: slabs 61-32 to the node's tail, then slab
        // 31, empty, given back (the node holds more than 5).
        for k in 32..63 {
            for &p in &pages[k * per..(k + 1) * per - 1] {
                sys.release_buffer_heads(1, p);
            }
        }
        assert_eq!(cache(&sys).cpu_partial[1].len(), 1);
        let node: Vec<Pfn> = cache(&sys).node_partial.iter().copied().collect();
        assert_eq!(node, (32..62).rev().map(|k| slabs[k]).collect::<Vec<_>>());
        assert_eq!(cache(&sys).slab_pages(), 72 - 32);
        // CPU 0's slab (slab 71) is full: its next object goes to the
        // node's head (38 free there: no more slabs are moved).
        let p = pages[per * 72];
        sys.attach_buffer_heads(0, ino, p);
        assert_eq!(cache(&sys).slab_of(p), slabs[61]);
        assert_eq!(cache(&sys).node_partial.len(), 29);
        assert_eq!(cache(&sys).list_of(slabs[71]), SlabList::Full);
        // Emptying the node's 29 slabs gives back all but `min_partial`.
        for k in 32..61 {
            sys.release_buffer_heads(0, pages[(k + 1) * per - 1]);
        }
        assert_eq!(cache(&sys).node_partial.len(), 5);
        assert_eq!(cache(&sys).slab_pages(), 72 - 32 - 24);
        assert_eq!(slab_pages_in_zones(&sys), 72 - 32 - 24);
    }
}
