//! [`Memory`]: the state mm owns. Its fields are private to `mm/`; the
//! other subsystems use the accessors below.

use super::inode::Inode;
use super::lruvec::LruRules;
use super::page::Frames;
use super::page_alloc::AllocState;
use super::slab::VfsCaches;
use super::swap::{AnonRegion, SwapArea, NO_SLOT};
use super::vmstat::{PageGauges, Vmstat};
use super::zone::Zone;
use super::Pagevec;
use crate::kernel::LruScope;

/// Page frames, zones (with their free and LRU lists), the page cache's
/// mappings, swap, slab caches and the vmstat counters.
pub struct Memory {
    pub(super) pages: Frames,
    pub(super) zones: Vec<Zone>,
    pub(super) vmstat: Vmstat,
    pub(super) gauges: PageGauges,
    /// Per-CPU LRU-add pagevecs.
    pub(super) pagevecs: Vec<Pagevec>,
    /// Every mapping: file and block-device inodes, anonymous memory, the
    /// swap cache.
    pub(super) inodes: Vec<Inode>,
    /// The swap area, if the scenario has one.
    pub(super) swap: Option<SwapArea>,
    /// Anonymous memory of the processes that have some.
    pub(super) anon_regions: Vec<AnonRegion>,
    /// `page->private` of swap-cache pages: the slot (`NO_SLOT` otherwise).
    pub(super) page_swap_slot: Vec<u32>,
    /// Tasks waiting for a page's read to complete (`lock_page`).
    pub(super) read_waiters: Vec<(u32, u32)>,
    /// Dentry and inode caches (slab reclaim).
    pub(super) vfs: VfsCaches,
    /// Per task: its allocation in progress (direct reclaim).
    pub(super) task_alloc: Vec<AllocState>,
    /// The buffer_head slab cache of written file pages.
    pub(super) bh_cache: super::buffer_head::BufferHeadCache,
    /// Who owns the LRU lists: the zones, or the node (4.8+).
    pub(super) lru_scope: LruScope,
    /// 4.11+: the end of writeback rotates active PG_reclaim pages too.
    pub(super) rotate_deactivates: bool,
    /// MGLRU (6.1+): the node's pages are kept in generations.
    pub(super) lru_gen: bool,
    /// The node's LRU lists when `lru_scope` is `Node` (one node).
    pub(super) node_lruvec: super::lruvec::Lruvec,
    /// Reclaimers throttled until writeback completes (5.16+).
    pub(super) reclaim_wait: super::reclaim_wait::ReclaimWait,
}

impl Memory {
    /// Memory at boot: `pages` and `zones` set up, everything free.
    pub fn new(pages: Frames, zones: Vec<Zone>, cpus: usize, lru: LruRules) -> Memory {
        let nr_pages = pages.len();
        Memory {
            vmstat: Vmstat::new(zones.len()),
            pages,
            zones,
            gauges: PageGauges::default(),
            pagevecs: vec![Pagevec::default(); cpus],
            inodes: Vec::new(),
            swap: None,
            anon_regions: Vec::new(),
            page_swap_slot: vec![NO_SLOT; nr_pages],
            read_waiters: Vec::new(),
            vfs: VfsCaches::default(),
            task_alloc: Vec::new(),
            bh_cache: super::buffer_head::BufferHeadCache::new(nr_pages, cpus),
            lru_scope: lru.scope,
            rotate_deactivates: lru.rotate_deactivates,
            lru_gen: lru.generations,
            node_lruvec: super::lruvec::Lruvec::default(),
            reclaim_wait: super::reclaim_wait::ReclaimWait::default(),
        }
    }

    /// The node's reclaim wait queue for writeback (5.16+).
    pub fn reclaim_wait(&self) -> &super::reclaim_wait::ReclaimWait {
        &self.reclaim_wait
    }

    /// As [`Memory::reclaim_wait`], to change.
    pub fn reclaim_wait_mut(&mut self) -> &mut super::reclaim_wait::ReclaimWait {
        &mut self.reclaim_wait
    }

    /// One of the pages the kernel holds since boot (`kernel_mib`),
    /// handed over to a use the model follows (a program's text); a free
    /// page when none is held.
    pub fn take_held_page(&mut self) -> Option<u32> {
        let z = self.zones.len() - 1;
        let start = self.zones[z].start_pfn as usize;
        let end = start + self.zones[z].present_pages as usize;
        let held = (start..end).find(|&pfn| {
            self.pages[pfn].holder == super::page::Holder::Kernel
                && self.pages[pfn].inode == super::page::NIL
                && self.pages[pfn].flags == 0
        });
        match held {
            Some(pfn) => Some(pfn as u32),
            None => self.take_free_page(z),
        }
    }

    /// A new task's allocation state.
    pub fn add_task(&mut self) {
        self.task_alloc.push(AllocState::default());
    }

    /// Take a page off the zone's buddy list for the kernel's own use
    /// (boot allocations; tests that shrink free memory).
    pub fn take_free_page(&mut self, z: usize) -> Option<u32> {
        let zone = &mut self.zones[z];
        let pfn = zone.free.head;
        if pfn == super::page::NIL {
            return None;
        }
        super::page::list_del(&mut self.pages, &mut zone.free, pfn);
        self.pages[pfn as usize].holder = super::page::Holder::Kernel;
        Some(pfn)
    }

    pub fn pages(&self) -> &Frames {
        &self.pages
    }

    pub fn pages_mut(&mut self) -> &mut Frames {
        &mut self.pages
    }

    pub fn zone(&self, z: usize) -> &Zone {
        &self.zones[z]
    }

    pub fn zone_mut(&mut self, z: usize) -> &mut Zone {
        &mut self.zones[z]
    }

    pub fn zones(&self) -> &[Zone] {
        &self.zones
    }

    pub fn nr_zones(&self) -> usize {
        self.zones.len()
    }

    pub fn vmstat(&self) -> &Vmstat {
        &self.vmstat
    }

    pub fn vmstat_mut(&mut self) -> &mut Vmstat {
        &mut self.vmstat
    }

    pub fn gauges(&self) -> &PageGauges {
        &self.gauges
    }

    pub fn gauges_mut(&mut self) -> &mut PageGauges {
        &mut self.gauges
    }

    pub fn inode(&self, ino: u32) -> &Inode {
        &self.inodes[ino as usize]
    }

    pub fn inode_mut(&mut self, ino: u32) -> &mut Inode {
        &mut self.inodes[ino as usize]
    }

    pub fn inodes(&self) -> &[Inode] {
        &self.inodes
    }

    pub fn nr_inodes(&self) -> usize {
        self.inodes.len()
    }

    /// Add a mapping; returns its inode number.
    pub fn add_inode(&mut self, inode: Inode) -> u32 {
        let id = self.inodes.len() as u32;
        self.inodes.push(inode);
        id
    }

    pub fn swap(&self) -> Option<&SwapArea> {
        self.swap.as_ref()
    }

    /// The scenario's swap area (at boot).
    pub fn set_swap(&mut self, swap: SwapArea) {
        self.swap = Some(swap);
    }

    pub fn anon_regions(&self) -> &[AnonRegion] {
        &self.anon_regions
    }

    /// A process's anonymous memory (at boot); returns its index.
    pub fn add_anon_region(&mut self, region: AnonRegion) -> usize {
        self.anon_regions.push(region);
        self.anon_regions.len() - 1
    }

    pub fn vfs(&self) -> &VfsCaches {
        &self.vfs
    }

    pub fn pagevecs(&self) -> &[Pagevec] {
        &self.pagevecs
    }

    pub fn page_swap_slot(&self, pfn: u32) -> u32 {
        self.page_swap_slot[pfn as usize]
    }

    pub fn task_alloc(&self, tid: u32) -> &super::page_alloc::AllocState {
        &self.task_alloc[tid as usize]
    }
}
