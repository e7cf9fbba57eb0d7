//! Memory management: page frames, zones, the page allocator's fast path,
//! LRU lists with pagevec batching, page-state accounting, vmstat.

pub mod buddy;
pub mod buffer_head;
pub mod filemap;
pub mod frames;
pub mod free_counter;
pub mod inode;
pub mod inode_table;
pub mod lru_gen;
pub mod lruvec;
mod memory;
pub mod node;
pub mod page;
pub mod page_alloc;
pub mod page_index;
pub mod pcp;
pub mod reclaim_wait;
pub mod slab;
pub mod swap;
pub mod unit;
pub mod vmstat;
pub mod workingset;
pub mod zone;

use crate::kernel::LruScope;
use crate::sched::{HasCore, Step};
use page::{
    flags, list_add_head, list_add_tail, list_del, Holder, Pfn, LRU_INACTIVE_ANON,
    LRU_INACTIVE_FILE, NIL,
};
use vmstat::Ev;

pub use memory::Memory;

/// The machine as mm sees it: its own state, and the calls mm makes into
/// the subsystems above it (the machine forwards them).
pub trait MmHost: HasCore {
    fn mm(&self) -> &Memory;
    fn mm_mut(&mut self) -> &mut Memory;

    // block/
    /// Unplug the device under `bdi` (`blk_run_backing_dev`).
    fn flush_plug(&mut self, bdi: usize);
    /// `submit_bio(READ)` for a page-cache page.
    fn submit_page_read(&mut self, tid: u32, pfn: Pfn);
    /// Start the device's queue.
    fn kick_device(&mut self, dev: usize);

    // writeback/
    /// `set_page_dirty`: account and tag a page dirty; whether it was clean.
    fn set_page_dirty(&mut self, pfn: Pfn, tid: Option<u32>) -> bool;
    /// `clear_page_dirty_for_io`.
    fn clear_page_dirty_for_io(&mut self, pfn: Pfn);
    /// Put a page under writeback and submit it.
    fn submit_page_write(&mut self, tid: u32, pfn: Pfn);
    /// `balance_dirty_pages_ratelimited_nr`.
    fn balance_dirty_pages_ratelimited(&mut self, tid: u32, bdi: usize, nr_dirtied: u64);
    /// `bdi_start_background_writeback`.
    fn bdi_start_background_writeback(&mut self, bdi: usize);
    /// `zone_dirty_ok`: the zone is within its dirty limit (3.3+).
    fn zone_dirty_ok(&self, z: usize) -> bool;
    /// The scope of the dirty limits: per-zone limits steer `__GFP_WRITE`
    /// allocations (writeback/limits.rs decides).
    fn dirty_limit_scope(&self) -> crate::kernel::DirtyLimitScope;
    /// How many backing devices there are.
    fn nr_bdis(&self) -> usize;

    // fs/
    /// Whether the mapping's pages carry buffer heads once written (the
    /// filesystem's `write_begin` uses `block_write_begin`).
    fn mapping_has_buffer_heads(&self, ino: u32) -> bool;

    // reclaim/
    /// `wakeup_kswapd` for the zones of an allocation of `gfp`.
    fn wake_all_kswapd(&mut self, tid: u32, gfp: Gfp);
    /// `wakeup_kswapd(zone, 0, 0, zone_idx(zone))` from `rmqueue` after a
    /// fallback boosted zone `z`'s watermarks (5.0+).
    fn wakeup_kswapd_boosted(&mut self, tid: u32, z: usize);
    /// One priority of `try_to_free_pages` for an allocation in progress.
    fn direct_reclaim_priority(
        &mut self,
        tid: u32,
        st: &mut page_alloc::AllocState,
    ) -> Option<Step>;
    /// `wait_iff_congested`.
    fn wait_iff_congested(&mut self, tid: u32, zone: usize, timeout_ns: u64) -> Option<Step>;
    /// The retry after direct reclaim wakes kswapd again (5.16+).
    fn alloc_retry_wakes_kswapd(&self) -> bool;

    /// `mark_page_accessed` by task `tid`, on the CPU it runs on
    /// ([`Memory::mark_page_accessed_on`]).
    #[inline(always)]
    fn mark_page_accessed_by(&mut self, tid: u32, pfn: Pfn) {
        let cpu = self.task(tid).cpu;
        self.mm_mut().mark_page_accessed_on(cpu, pfn);
    }
}

/// `PAGEVEC_SIZE` (3.0).
pub const PAGEVEC_SIZE: usize = 14;

/// `SWAP_CLUSTER_MAX`, reclaim's batch, in 4 KiB pages: reclaim
/// (`crate::reclaim`) and the writeback throttle of reclaim
/// ([`reclaim_wait`]) take it in pages of the machine's unit
/// ([`unit::PageUnit::from_base_pages`]).
pub const SWAP_CLUSTER_MAX: u64 = 32;

/// Per-CPU LRU-add pagevec (`lru_add_pvecs`, `____pagevec_lru_add`).
#[derive(Debug, Clone, Default)]
pub struct Pagevec {
    pub pages: [u32; PAGEVEC_SIZE],
    pub len: usize,
}

/// The allocation flags the model distinguishes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Gfp {
    /// `__GFP_WRITE`: a page-cache page allocated to be written
    /// (`grab_cache_page_write_begin`, per-zone dirty limits series).
    pub write: bool,
    /// The page's mobility (`gfp_migratetype`): `__GFP_MOVABLE`,
    /// `__GFP_RECLAIMABLE` or neither.
    pub mobility: Mobility,
}

/// What `gfp_migratetype` reads from an allocation's flags.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Mobility {
    /// `__GFP_MOVABLE`: page-cache and anonymous pages of user data.
    Movable,
    /// `__GFP_RECLAIMABLE`: a page of a reclaimable slab cache
    /// (SLAB_RECLAIM_ACCOUNT, e.g. buffer heads).
    Reclaimable,
    /// Neither: a page the kernel cannot move, e.g. btrfs's tree blocks,
    /// whose btree inode's mapping is GFP_NOFS (6.1 fs/btrfs/disk-io.c
    /// `open_ctree`: `mapping_set_gfp_mask(btree_inode->i_mapping, GFP_NOFS)`).
    Unmovable,
}

impl Gfp {
    /// A page-cache or anonymous page (GFP_HIGHUSER_MOVABLE), with
    /// `__GFP_WRITE` when it is allocated to be written.
    pub const fn movable(write: bool) -> Gfp {
        Gfp {
            write,
            mobility: Mobility::Movable,
        }
    }

    /// A page of a reclaimable slab cache (`__GFP_RECLAIMABLE`).
    pub const fn reclaimable_slab() -> Gfp {
        Gfp {
            write: false,
            mobility: Mobility::Reclaimable,
        }
    }

    /// A page-cache page of a GFP_NOFS mapping (no `__GFP_MOVABLE`).
    pub const fn unmovable() -> Gfp {
        Gfp {
            write: false,
            mobility: Mobility::Unmovable,
        }
    }

    /// What a 6.1 tracepoint's `gfp_flags=` prints for this allocation.
    pub fn trace_alloc(self) -> crate::trace::AllocGfp {
        use crate::trace::AllocGfp;
        match (self.write, self.mobility) {
            (_, Mobility::Reclaimable) => AllocGfp::ReclaimableSlab,
            (_, Mobility::Unmovable) => AllocGfp::Nofs,
            (true, Mobility::Movable) => AllocGfp::PageCacheWrite,
            (false, Mobility::Movable) => AllocGfp::Movable,
        }
    }

    /// The allocation's migratetype (`gfp_migratetype`).
    pub fn migratetype(self) -> usize {
        match self.mobility {
            Mobility::Movable => buddy::MIGRATE_MOVABLE,
            Mobility::Reclaimable => buddy::MIGRATE_RECLAIMABLE,
            Mobility::Unmovable => buddy::MIGRATE_UNMOVABLE,
        }
    }
}

/// Which watermark an allocation attempt must respect.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Mark {
    /// Fast path, `ALLOC_WMARK_LOW`.
    Low,
    /// Slow path, `ALLOC_WMARK_MIN`.
    Min,
    /// `ALLOC_NO_WATERMARKS`.
    NoWatermarks,
}

/// `page_lru`: the list a page belongs on by its flags.
#[inline]
pub fn page_lru(p: &page::Page) -> usize {
    let base = if p.has(flags::ANON) {
        LRU_INACTIVE_ANON
    } else {
        LRU_INACTIVE_FILE
    };
    base + p.has(flags::ACTIVE) as usize
}

/// Page-level operations: the free lists, the LRU lists and their pagevecs, and the counts built on them (`mm/page_alloc.c`, `mm/swap.c`).
pub trait MemoryOps: MmHost {
    /// `get_page_from_freelist` for task `tid`: the first zone of the zonelist
    /// that passes the watermark gives a page from its CPU's per-CPU list
    /// (`buffered_rmqueue`); `None` if none. With per-zone dirty limits (3.3,
    /// Johannes Weiner) a `__GFP_WRITE` allocation in the fast path skips
    /// zones over their dirty limit (`zone_dirty_ok`); the slow path, at the
    /// min watermark, ignores dirty limits so allocations still succeed when
    /// every zone is over.
    #[inline(always)]
    fn get_page_from_freelist(&mut self, tid: u32, mark: Mark, gfp: Gfp) -> Option<Pfn> {
        let cpu = self.task(tid).cpu;
        let nid = self.mm().cpu_node(cpu);
        let mut last_node = None;
        let mut from = 0;
        // The zones that pass the tests, in zonelist order, until one
        // gives a page.
        while let Some((at, z)) = self.next_allowed_zone(nid, from, cpu, mark, gfp, &mut last_node)
        {
            from = at + 1;
            let page = self.mm_mut().rmqueue_pcp(cpu, z, gfp.migratetype());
            // What a buddy refill left to do (never without a buddy
            // allocator), read with one look at the zone.
            let zone = &self.mm().zones[z];
            let (fell_back, boosted_wake) = (!zone.fallbacks.is_empty(), zone.boosted_wake);
            if fell_back {
                self.trace_fallbacks(tid, z);
            }
            if let Some(pfn) = page {
                let p = &mut self.mm_mut().pages[pfn as usize];
                p.flags = 0;
                p.holder = Holder::Kernel;
                if boosted_wake {
                    self.mm_mut().zones[z].boosted_wake = false;
                    self.wakeup_kswapd_boosted(tid, z);
                }
                return Some(pfn);
            }
        }
        None
    }

    /// The first zone of node `nid`'s zonelist at or after position `from`
    /// that `get_page_from_freelist` may take a page from, with its
    /// position: under `mark` for `cpu`'s preferred zone, and, for a
    /// `__GFP_WRITE` allocation at the low mark with per-zone dirty limits,
    /// within its dirty limit. 4.8+ asks `node_dirty_ok` once per node
    /// (`last_pgdat_dirty_ok`): `last_node` keeps the last node's answer
    /// between calls. Only reads the machine: the zonelist stays borrowed
    /// for the whole walk.
    #[inline(always)]
    fn next_allowed_zone(
        &self,
        nid: usize,
        from: usize,
        cpu: usize,
        mark: Mark,
        gfp: Gfp,
        last_node: &mut Option<(usize, bool)>,
    ) -> Option<(usize, usize)> {
        let scope = self.dirty_limit_scope();
        let spread_dirty = gfp.write && mark == Mark::Low && scope.per_zone();
        let per_node = scope == crate::kernel::DirtyLimitScope::PerNode;
        let classzone = self.mm().preferred_zone(cpu);
        let zonelist = self.mm().nodes[nid].zonelist.get(from..).unwrap_or(&[]);
        for (at, &z) in (from..).zip(zonelist) {
            if spread_dirty {
                let ok = if per_node {
                    let zone_nid = self.mm().zone_node(z);
                    match *last_node {
                        Some((n, ok)) if n == zone_nid => ok,
                        _ => {
                            let ok = self.zone_dirty_ok(z);
                            *last_node = Some((zone_nid, ok));
                            ok
                        }
                    }
                } else {
                    self.zone_dirty_ok(z)
                };
                if !ok {
                    continue;
                }
            }
            if self.mm().zone_watermark_allows(z, mark, classzone) {
                return Some((at, z));
            }
        }
        None
    }

    /// `mm_page_alloc_extfrag` for each fallback of zone `z`'s last
    /// per-CPU refill (`__rmqueue_fallback`, 2.6.35+, 6.1's layout).
    fn trace_fallbacks(&mut self, tid: u32, z: usize) {
        let mut fallbacks = std::mem::take(&mut self.mm_mut().zones[z].fallbacks);
        let (first_pfn, pageblock_order) = self.mm().zones[z]
            .buddy
            .as_ref()
            .map_or((buddy::FIRST_PFN, buddy::PAGEBLOCK_ORDER), |b| {
                (b.first_pfn(), b.pageblock_order())
            });
        for f in fallbacks.drain(..) {
            let ev = crate::trace::TraceEvent::PageAllocExtfrag(crate::trace::PageAllocExtfrag {
                pfn: u64::from(f.pfn + first_pfn),
                alloc_order: 0,
                fallback_order: f.order as u32,
                pageblock_order: pageblock_order as u32,
                alloc_migratetype: f.to as u32,
                fallback_migratetype: f.from as u32,
                change_ownership: f.change_ownership,
            });
            self.trace(tid, ev);
        }
        // The emptied list keeps its capacity for the next refill.
        self.mm_mut().zones[z].fallbacks = fallbacks;
    }

    /// Whether every populated zone of the zonelist is over its dirty share:
    /// the case in which the first version of per-zone dirty limits (seed
    /// 003) woke the flushers and stalled the writer. Johannes Weiner's v2
    /// cover letter describes that code as being for "NUMA setups where the
    /// load is bound to a node that is in itself not large enough to reach
    /// the global dirty limits", i.e. when no allowed zone can take another
    /// dirty page; a zone that is under its share but merely short of free
    /// pages is left to kswapd and direct reclaim as usual.
    fn all_zones_over_dirty_limit(&self) -> bool {
        (0..self.mm().zones.len())
            .filter(|&z| self.mm().zones[z].present_pages > 0)
            .all(|z| !self.zone_dirty_ok(z))
    }

    /// Free a page frame freed by task `tid` (`free_hot_cold_page`: onto
    /// the per-CPU list of the task's CPU).
    #[inline(always)]
    fn free_page(&mut self, tid: u32, pfn: Pfn) {
        if self.mm().pages[pfn as usize].has(flags::PRIVATE) {
            buffer_head::BufferHeads::release_buffer_heads(self, tid, pfn);
        }
        let p = &mut self.mm_mut().pages[pfn as usize];
        p.flags = 0;
        p.set_inode(NIL);
        let cpu = self.task(tid).cpu;
        self.mm_mut().free_to_pcp(cpu, pfn);
    }

    /// `add_to_page_cache_lru`: page `pfn` becomes page `idx` of mapping
    /// `ino` (up to date), and is queued for the LRU on `tid`'s CPU.
    #[inline(always)]
    fn add_to_page_cache_lru(&mut self, tid: u32, pfn: Pfn, ino: u32, idx: u32) {
        let pg = &mut self.mm_mut().pages[pfn as usize];
        pg.set_mapping(ino, idx);
        pg.flags |= page::flags::UPTODATE;
        self.mm_mut().inodes[ino as usize].insert(idx, pfn);
        let cpu = self.task(tid).cpu;
        self.mm_mut().lru_cache_add(cpu, pfn);
        self.charge_sys(tid, self.cost().page_cache_add_ns);
    }
}

impl<T: MmHost + ?Sized> MemoryOps for T {}

impl Memory {
    /// The LRU lists reclaim scans for `zone`: the one place that says
    /// who owns them (the zone itself, 2.6.24 – 4.7; its node, 4.8+, where
    /// every zone's pages share the node's lists).
    pub fn lruvec(&self, zone: usize) -> &lruvec::Lruvec {
        match self.lru_scope {
            LruScope::Zone => &self.zones[zone].lruvec,
            LruScope::Node => &self.nodes[self.zone_node[zone]].lruvec,
        }
    }

    /// As [`Memory::lruvec`], to change.
    pub fn lruvec_mut(&mut self, zone: usize) -> &mut lruvec::Lruvec {
        self.frames_and_lruvec_mut(zone).1
    }

    /// `zone`'s lruvec (the zone's, or its node's) beside the frames its
    /// lists link, to change both.
    #[inline(always)]
    fn frames_and_lruvec_mut(&mut self, zone: usize) -> (&mut page::Frames, &mut lruvec::Lruvec) {
        let lv = match self.lru_scope {
            LruScope::Zone => &mut self.zones[zone].lruvec,
            LruScope::Node => &mut self.nodes[self.zone_node[zone]].lruvec,
        };
        (&mut self.pages, lv)
    }

    /// Who owns the LRU lists.
    pub fn lru_scope(&self) -> LruScope {
        self.lru_scope
    }

    /// One LRU list of `zone`'s lruvec with the frames its links live in,
    /// to link or unlink a page.
    fn lru_list_mut(
        &mut self,
        zone: usize,
        lru: usize,
    ) -> (&mut page::Frames, &mut page::ListHead) {
        let (pages, lv) = self.frames_and_lruvec_mut(zone);
        (pages, &mut lv.lists[lru])
    }

    /// `all_unreclaimable` (3.x `mm/vmscan.c`): every populated zone of the
    /// zonelist is marked all_unreclaimable (by kswapd).
    pub fn all_zones_unreclaimable(&self) -> bool {
        self.zones
            .iter()
            .filter(|z| z.present_pages > 0)
            .all(|z| z.all_unreclaimable)
    }

    /// The preferred zone of a page-cache allocation on CPU `cpu`: the
    /// first of its node's zonelist (Normal → DMA32 → DMA).
    #[inline(always)]
    pub fn preferred_zone(&self, cpu: usize) -> usize {
        self.cpu_preferred_zone[cpu]
    }

    /// The zonelist of a page-cache allocation on CPU `cpu`.
    pub fn zonelist(&self, cpu: usize) -> &[usize] {
        &self.nodes[self.cpu_node[cpu]].zonelist
    }

    /// The zone has a free page above `mark` for a page-cache allocation
    /// whose preferred zone is `classzone` (so `lowmem_reserve` applies).
    #[inline(always)]
    pub fn zone_watermark_allows(&self, z: usize, mark: Mark, classzone: usize) -> bool {
        let zone = &self.zones[z];
        if zone.present_pages == 0 {
            return false;
        }
        match mark {
            Mark::Low => zone.watermark_ok(zone.wmark_low, classzone),
            Mark::Min => zone.watermark_ok(zone.wmark_min, classzone),
            Mark::NoWatermarks => true,
        }
    }

    /// `lru_cache_add_file`: queue a new page-cache page on this CPU's
    /// pagevec; the batch goes onto the LRU when the pagevec fills.
    #[inline(always)]
    pub fn lru_cache_add(&mut self, cpu: usize, pfn: Pfn) {
        self.pages[pfn as usize].holder = Holder::Pagevec;
        let pv = &mut self.pagevecs[cpu];
        pv.pages[pv.len] = pfn;
        pv.len += 1;
        // As many bytes as 14 pages of 4 KiB, at a coarse unit.
        if pv.len >= self.pagevec_pages {
            self.lru_add_drain(cpu);
        }
    }

    /// `lru_add_drain`: move this CPU's pagevec pages to the head of their
    /// zone's list: anon or file by PG_swapbacked, active or inactive by
    /// PG_active (`page_lru`).
    pub fn lru_add_drain(&mut self, cpu: usize) {
        let len = self.pagevecs[cpu].len;
        for i in 0..len {
            let pfn = self.pagevecs[cpu].pages[i];
            if self.lru_gen {
                self.lru_gen_add(pfn, false);
                continue;
            }
            // `lru_add_fn` with `update_page_reclaim_stat` (an added page
            // counts as scanned, an active one as rotated too), the page
            // and its lruvec each looked at once.
            let z = self.pages.zone_of(pfn);
            let p = &mut self.pages[pfn as usize];
            let lru = page_lru(p);
            let (file, active) = (!p.has(flags::ANON), p.has(flags::ACTIVE));
            p.holder = Holder::from_lru(lru);
            p.flags |= flags::LRU;
            let (pages, lv) = self.frames_and_lruvec_mut(z);
            list_add_head(pages, &mut lv.lists[lru], pfn);
            lv.recent_scanned[file as usize] += 1;
            lv.recent_rotated[file as usize] += active as u64;
            self.zones[z].lru_pages[lru] += 1;
        }
        self.pagevecs[cpu].len = 0;
    }

    /// `lru_add_fn`: a page onto the LRU, on the list its flags name
    /// (`page_lru`), or into its generation with MGLRU.
    #[inline(always)]
    pub fn lru_add(&mut self, pfn: Pfn) {
        if self.lru_gen {
            self.lru_gen_add(pfn, false);
        } else {
            let lru = page_lru(&self.pages[pfn as usize]);
            self.lru_link_head(pfn, lru);
        }
    }

    /// Put a page on the head of an LRU list and mark it PageLRU.
    #[inline(always)]
    pub fn lru_link_head(&mut self, pfn: Pfn, lru: usize) {
        self.lru_link(pfn, lru, false);
    }

    /// Put a page on list `list` of its lruvec (a classic list or a
    /// generation's), at the head or the tail, and mark it PageLRU.
    #[inline(always)]
    fn lru_link(&mut self, pfn: Pfn, list: usize, tail: bool) {
        let z = self.pages.zone_of(pfn);
        let p = &mut self.pages[pfn as usize];
        p.holder = Holder::from_lru(list);
        p.flags |= flags::LRU;
        let (pages, head) = self.lru_list_mut(z, list);
        if tail {
            list_add_tail(pages, head, pfn);
        } else {
            list_add_head(pages, head, pfn);
        }
        self.zones[z].lru_pages[page::counted_lru(list)] += 1;
    }

    /// `isolate_lru_pages` (order 0, every page taken): up to `n` pages
    /// off the tail of list `lru` of `zone`'s lruvec, each marked isolated
    /// (PageLRU cleared) and pushed on `taken` in the order taken. With
    /// per-zone lists the run is taken at once ([`page::list_take_tail_run`]);
    /// a node's list, whose pages are counted in their own zones, is
    /// taken a page at a time.
    pub fn isolate_lru_tail(&mut self, zone: usize, lru: usize, n: u64, taken: &mut Vec<Pfn>) {
        if self.lru_scope == LruScope::Node {
            for _ in 0..n {
                let pfn = self.lruvec(zone).lists[lru].tail;
                if pfn == NIL {
                    break;
                }
                self.lru_unlink(pfn);
                self.pages[pfn as usize].holder = Holder::Isolated;
                taken.push(pfn);
            }
            return;
        }
        let z = &mut self.zones[zone];
        let nr =
            page::list_take_tail_run(&mut self.pages, &mut z.lruvec.lists[lru], n, |pfn, p| {
                p.flags &= !flags::LRU;
                p.holder = Holder::Isolated;
                taken.push(pfn);
            });
        z.lru_pages[page::counted_lru(lru)] -= nr;
    }

    /// Take a page off whatever LRU list it is on.
    #[inline(always)]
    pub fn lru_unlink(&mut self, pfn: Pfn) {
        let p = self.pages[pfn as usize];
        let lru = p.holder.lru().expect("page not on an LRU list");
        let z = self.pages.zone_of(pfn);
        let (pages, list) = self.lru_list_mut(z, lru);
        list_del(pages, list, pfn);
        self.zones[z].lru_pages[page::counted_lru(lru)] -= 1;
        self.pages[pfn as usize].flags &= !flags::LRU;
    }

    /// `mark_page_accessed` by a task on CPU `cpu`: as
    /// `mark_page_accessed` (3.0) below, and, 3.11+, a referenced page
    /// still in a pagevec is marked active if it is in `cpu`'s
    /// (`__lru_cache_activate_folio`; its referenced bit is cleared
    /// wherever it is), so it goes onto the active list when the pagevec
    /// drains. Not counted in `pgactivate` (`lru_add_fn` counts nothing).
    #[inline(always)]
    pub fn mark_page_accessed_on(&mut self, cpu: usize, pfn: Pfn) {
        let p = self.pages[pfn as usize];
        let in_pagevec = p.holder == Holder::Pagevec && !self.lru_gen;
        if !(self.activate_in_pagevec && in_pagevec && p.has(flags::REFERENCED)) {
            self.mark_page_accessed(pfn);
            return;
        }
        if p.has(flags::ACTIVE) {
            return;
        }
        let pv = &self.pagevecs[cpu];
        let local = pv.pages[..pv.len].contains(&pfn);
        let pg = &mut self.pages[pfn as usize];
        pg.flags &= !flags::REFERENCED;
        if local {
            pg.flags |= flags::ACTIVE;
        }
        self.workingset_activation(pfn);
    }

    /// `mark_page_accessed` (3.0): inactive+referenced+on LRU → activate;
    /// otherwise set Referenced. A page still in a pagevec is not activated.
    #[inline(always)]
    fn mark_page_accessed(&mut self, pfn: Pfn) {
        let p = self.pages[pfn as usize];
        if !p.has(flags::ACTIVE) && p.has(flags::REFERENCED) && p.has(flags::LRU) {
            if matches!(p.holder, Holder::InactiveFile | Holder::InactiveAnon) {
                self.lru_unlink(pfn);
                let pg = &mut self.pages[pfn as usize];
                pg.flags |= flags::ACTIVE;
                pg.flags &= !flags::REFERENCED;
                let lru = page_lru(pg);
                self.lru_link_head(pfn, lru);
                let file = !p.has(flags::ANON) as usize;
                self.lruvec_mut(self.pages.zone_of(pfn)).recent_rotated[file] += 1;
                self.vmstat.inc(Ev::PgActivate, 1);
                self.workingset_activation(pfn);
            }
        } else if !p.has(flags::REFERENCED) {
            self.pages[pfn as usize].flags |= flags::REFERENCED;
        }
    }

    /// `rotate_reclaimable_page`: a PG_reclaim page whose writeback ended is
    /// moved to the inactive tail so the next scan frees it first. 4.11+
    /// (`folio_rotate_reclaimable` → `lru_move_tail_fn`, read in 6.1) does
    /// so for an active page too, clearing PG_active: reclaim activated it
    /// only to keep it out of the way while it was written.
    pub fn rotate_reclaimable_page(&mut self, pfn: Pfn) {
        let p = self.pages[pfn as usize];
        if p.has(flags::DIRTY) || !p.has(flags::LRU) {
            return;
        }
        let active = matches!(p.holder, Holder::ActiveFile | Holder::ActiveAnon);
        if active && !self.rotate_deactivates {
            return;
        }
        self.lru_unlink(pfn);
        self.vmstat.inc(Ev::PgRotated, 1);
        if self.lru_gen {
            // `lru_move_tail_fn` → `lru_gen_add_folio(reclaiming)`.
            self.lru_gen_add(pfn, true);
            return;
        }
        self.pages[pfn as usize].flags &= !flags::ACTIVE;
        let lru = page_lru(&self.pages[pfn as usize]);
        self.lru_link(pfn, lru, true);
    }

    /// Total free pages.
    pub fn nr_free_pages(&self) -> u64 {
        self.zones.iter().map(|z| z.nr_free()).sum()
    }

    /// `global_reclaimable_pages`: the file LRU lists, and the anon ones
    /// while swap has free slots.
    pub fn global_reclaimable_pages(&self) -> u64 {
        let swap = self.nr_swap_pages() > 0;
        self.zones.iter().map(|z| z.reclaimable_pages(swap)).sum()
    }

    /// `zone_reclaimable_pages`.
    pub fn zone_reclaimable_pages(&self, z: usize) -> u64 {
        self.zones[z].reclaimable_pages(self.nr_swap_pages() > 0)
    }
}
