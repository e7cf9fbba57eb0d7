//! [`Memory`]: the state mm owns. Its fields are private to `mm/`; the
//! other subsystems use the accessors below.

use super::inode::Inode;
use super::inode_table::InodeTable;
use super::lruvec::LruRules;
use super::page::{FrameWords, Frames, NIL};
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
    /// swap cache; evicted inodes hold no memory.
    pub(super) inodes: InodeTable,
    /// The swap area, if the scenario has one.
    pub(super) swap: Option<SwapArea>,
    /// Anonymous memory of the processes that have some.
    pub(super) anon_regions: Vec<AnonRegion>,
    /// `page->private` of swap-cache pages: the slot (`NO_SLOT`
    /// otherwise). Allocated with the swap area: empty without one.
    page_swap_slot: FrameWords,
    /// Tasks waiting for a page's read to complete (`lock_page`).
    pub(super) read_waiters: Vec<(u32, u32)>,
    /// Dentry and inode caches (slab reclaim).
    pub(super) vfs: VfsCaches,
    /// Per task: its allocation in progress (direct reclaim).
    pub(super) task_alloc: Vec<AllocState>,
    /// Per task: the `file_ra_state` of the file it reads with `read(2)`
    /// (no workload task reads two files at once).
    pub(super) task_ra: Vec<super::filemap::FileRaState>,
    /// The buffer_head slab cache of written file pages.
    pub(super) bh_cache: super::buffer_head::BufferHeadCache,
    /// Who owns the LRU lists: the zones, or the node (4.8+).
    pub(super) lru_scope: LruScope,
    /// 4.11+: the end of writeback rotates active PG_reclaim pages too.
    pub(super) rotate_deactivates: bool,
    /// MGLRU (6.1+): the node's pages are kept in generations.
    pub(super) lru_gen: bool,
    /// 3.11+: `mark_page_accessed` activates a page in the CPU's pagevec.
    pub(super) activate_in_pagevec: bool,
    /// Reclaim leaves shadow entries of file pages (3.15+), and what
    /// their refaults did.
    pub(super) workingset: bool,
    pub(super) workingset_stats: super::workingset::WorkingsetStats,
    /// The NUMA nodes: their zones, CPUs, zonelists, and (4.8+) LRU lists.
    pub(super) nodes: Vec<super::node::MemNode>,
    /// The node of each zone.
    pub(super) zone_node: Vec<usize>,
    /// The node of each CPU.
    pub(super) cpu_node: Vec<usize>,
    /// Each CPU's preferred zone, the first of its node's zonelist
    /// (computed once: every page-cache allocation reads it).
    pub(super) cpu_preferred_zone: Vec<usize>,
    /// `vm.watermark_boost_factor` when the zones group their free pages
    /// by mobility ([`super::buddy`]; 0: they do not, or do not boost).
    pub(super) boost_factor: u32,
    /// 5.14+ per-CPU list rules ([`crate::mm::pcp`]): hot frees,
    /// `free_factor`, `high` capped while reclaim is active.
    pub(super) pcp_scaled: bool,
    /// The simulated page's size (`[machine] unit_kib`).
    pub(super) unit: super::unit::PageUnit,
    /// `PAGEVEC_SIZE` and `SWAP_CLUSTER_MAX` in pages of the unit (as
    /// many bytes as the 4 KiB kernel's), computed once for the hot paths.
    pub(super) pagevec_pages: usize,
    pub(super) swap_cluster_max: u64,
}

impl Memory {
    /// Memory at boot: `pages` and `zones` set up, everything free;
    /// `nodes` as [`super::node::build_nodes`] made them; pages of `unit`.
    pub fn new(
        pages: Frames,
        zones: Vec<Zone>,
        nodes: Vec<super::node::MemNode>,
        lru: LruRules,
        unit: super::unit::PageUnit,
    ) -> Memory {
        let nr_pages = pages.len();
        let cpus = nodes.last().map_or(1, |n| n.cpus.end);
        let zone_node = super::node::zone_nodes(&nodes);
        let cpu_node: Vec<usize> = (0..cpus)
            .map(|c| nodes.iter().position(|n| n.cpus.contains(&c)).unwrap_or(0))
            .collect();
        let cpu_preferred_zone = cpu_node.iter().map(|&n| nodes[n].zonelist[0]).collect();
        Memory {
            vmstat: Vmstat::new(zones.len()),
            pages,
            zones,
            gauges: PageGauges::default(),
            pagevecs: vec![Pagevec::default(); cpus],
            inodes: InodeTable::default(),
            swap: None,
            anon_regions: Vec::new(),
            page_swap_slot: FrameWords::default(),
            read_waiters: Vec::new(),
            vfs: VfsCaches::default(),
            task_alloc: Vec::new(),
            task_ra: Vec::new(),
            bh_cache: super::buffer_head::BufferHeadCache::new(nr_pages, cpus),
            lru_scope: lru.scope,
            rotate_deactivates: lru.rotate_deactivates,
            lru_gen: lru.generations,
            activate_in_pagevec: lru.activate_in_pagevec,
            workingset: lru.workingset,
            workingset_stats: Default::default(),
            nodes,
            zone_node,
            cpu_node,
            cpu_preferred_zone,
            boost_factor: 0,
            pcp_scaled: false,
            unit,
            pagevec_pages: unit.from_base_pages(super::PAGEVEC_SIZE as u64) as usize,
            swap_cluster_max: unit.from_base_pages(super::SWAP_CLUSTER_MAX),
        }
    }

    /// The simulated page's size.
    #[inline]
    pub fn unit(&self) -> super::unit::PageUnit {
        self.unit
    }

    /// `SWAP_CLUSTER_MAX` in pages of the unit: as many bytes as the
    /// 4 KiB kernel's 32 pages, at least one page ([`super::unit`]).
    #[inline]
    pub fn swap_cluster_max(&self) -> u64 {
        self.swap_cluster_max
    }

    /// Node `nid`'s reclaim wait queue for writeback (5.16+).
    pub fn reclaim_wait(&self, nid: usize) -> &super::reclaim_wait::ReclaimWait {
        &self.nodes[nid].reclaim_wait
    }

    /// As [`Memory::reclaim_wait`], to change.
    pub fn reclaim_wait_mut(&mut self, nid: usize) -> &mut super::reclaim_wait::ReclaimWait {
        &mut self.nodes[nid].reclaim_wait
    }

    /// The nodes.
    pub fn nodes(&self) -> &[super::node::MemNode] {
        &self.nodes
    }

    /// How many nodes the machine has.
    pub fn nr_nodes(&self) -> usize {
        self.nodes.len()
    }

    /// The node of zone `z`.
    pub fn zone_node(&self, z: usize) -> usize {
        self.zone_node[z]
    }

    /// The node of CPU `cpu` (`cpu_to_node`).
    pub fn cpu_node(&self, cpu: usize) -> usize {
        self.cpu_node[cpu]
    }

    /// Node `nid`'s zones.
    pub fn node_zones(&self, nid: usize) -> std::ops::Range<usize> {
        self.nodes[nid].zones.clone()
    }

    /// Node `nid`'s highest populated zone: the classzone of its
    /// page-cache allocations and the highest zone its kswapd balances.
    pub fn node_highest_zone(&self, nid: usize) -> usize {
        let zones = self.node_zones(nid);
        zones
            .clone()
            .rev()
            .find(|&z| self.zones[z].present_pages > 0)
            .unwrap_or(zones.end - 1)
    }

    /// Zone `z`'s position among its node's zones (the model's per-node
    /// lists are indexed by it).
    pub fn zone_idx(&self, z: usize) -> usize {
        z - self.nodes[self.zone_node[z]].zones.start
    }

    /// Zone `z`'s type, as the kernel's `zone_idx` numbers it (ZONE_DMA
    /// 0, ZONE_DMA32 1, ZONE_NORMAL 2): the `zid` of the tracepoints.
    pub fn zone_type(&self, z: usize) -> usize {
        self.zones[z].zone_type()
    }

    /// Zone `z`'s node's zones from the lowest up to `z`: what reclaim
    /// and kswapd sum over for a node balanced up to `z`.
    pub fn node_zones_through(&self, z: usize) -> std::ops::RangeInclusive<usize> {
        self.nodes[self.zone_node[z]].zones.start..=z
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
                && self.pages[pfn].inode() == NIL
                && self.pages[pfn].flags == 0
        });
        match held {
            Some(pfn) => Some(pfn as u32),
            None => self.take_free_page(z),
        }
    }

    /// A page-cache page a filesystem reads at mount: page `index` of
    /// mapping `ino`, up to date with `extra_flags`, taken from the free
    /// pages of the highest zone and put on the LRU; `None` if none is
    /// free.
    pub fn add_page_at_mount(&mut self, ino: u32, index: u32, extra_flags: u16) -> Option<u32> {
        let pfn = self.take_free_page(self.zones.len() - 1)?;
        let p = &mut self.pages[pfn as usize];
        p.set_mapping(ino, index);
        p.flags = super::page::flags::UPTODATE | extra_flags;
        self.inodes[ino as usize].insert(index, pfn);
        self.lru_add(pfn);
        Some(pfn)
    }

    /// A new task's allocation and readahead state.
    pub fn add_task(&mut self) {
        self.task_alloc.push(AllocState::default());
        self.task_ra.push(super::filemap::FileRaState::default());
    }

    /// Task `tid` opens a file to read it: `file_ra_state_init`, a fresh
    /// readahead state (the kernel keeps one per open file, in `struct
    /// file`, not in the inode).
    pub fn open_for_read(&mut self, tid: u32) {
        self.task_ra[tid as usize] = super::filemap::FileRaState::default();
    }

    /// Take a page off the zone's buddy list for the kernel's own use
    /// (boot allocations; tests that shrink free memory).
    pub fn take_free_page(&mut self, z: usize) -> Option<u32> {
        let zone = &mut self.zones[z];
        if let Some(buddy) = zone.buddy.as_mut() {
            let (pfn, _) = buddy.rmqueue(&mut self.pages, super::buddy::MIGRATE_MOVABLE)?;
            self.pages[pfn as usize].holder = super::page::Holder::Kernel;
            return Some(pfn);
        }
        let pfn = zone.free.head;
        if pfn == NIL {
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

    #[inline]
    pub fn inode(&self, ino: u32) -> &Inode {
        &self.inodes[ino as usize]
    }

    #[inline]
    pub fn inode_mut(&mut self, ino: u32) -> &mut Inode {
        &mut self.inodes[ino as usize]
    }

    /// Closed inode `ino` may now be frozen ([`InodeTable::note_idle`]).
    pub fn note_idle_inode(&mut self, ino: u32) {
        self.inodes.note_idle(ino);
    }

    /// Before reading inode `ino` where it may be frozen (a closed file's
    /// page met by reclaim or the icache shrinker, a journal commit's
    /// ordered inode): give it its [`Inode`] back ([`InodeTable::thaw`]).
    #[inline]
    pub fn thaw_inode(&mut self, ino: u32) {
        if self.inodes.is_frozen(ino) {
            self.inodes.thaw(ino);
        }
    }

    pub fn inodes(&self) -> &InodeTable {
        &self.inodes
    }

    pub fn nr_inodes(&self) -> usize {
        self.inodes.len()
    }

    /// Add a mapping; returns its inode number.
    pub fn add_inode(&mut self, inode: Inode) -> u32 {
        self.inodes.add(inode)
    }

    /// Reclaim just took a page of `ino`, a closed file (the caller read
    /// its `unused`): if that was its last, nothing reads its state again
    /// (no workload reopens a closed file), so its host memory goes
    /// ([`InodeTable::retire`]).
    pub fn retire_unused_inode(&mut self, ino: u32) {
        self.inodes.retire(ino);
    }

    pub fn swap(&self) -> Option<&SwapArea> {
        self.swap.as_ref()
    }

    /// The scenario's swap area (at boot).
    pub fn set_swap(&mut self, swap: SwapArea) {
        self.swap = Some(swap);
        self.page_swap_slot = FrameWords::none(self.pages.len());
    }

    pub fn anon_regions(&self) -> &[AnonRegion] {
        &self.anon_regions
    }

    #[cfg(test)]
    pub(crate) fn anon_region_mut(&mut self, r: usize) -> &mut AnonRegion {
        &mut self.anon_regions[r]
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

    /// The swap slot of a swap-cache page (`NO_SLOT`: none, or no swap).
    pub fn page_swap_slot(&self, pfn: u32) -> u32 {
        // `FrameWords` reads its "none", NIL, as NO_SLOT.
        const _: () = assert!(NO_SLOT == NIL);
        if self.page_swap_slot.is_empty() {
            return NO_SLOT;
        }
        self.page_swap_slot.get(pfn)
    }

    /// Record frame `pfn`'s swap slot (`NO_SLOT`: none).
    pub fn set_page_swap_slot(&mut self, pfn: u32, slot: u32) {
        self.page_swap_slot.set(pfn, slot);
    }

    pub fn task_alloc(&self, tid: u32) -> &super::page_alloc::AllocState {
        &self.task_alloc[tid as usize]
    }
}
