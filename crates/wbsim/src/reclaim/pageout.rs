//! The inactive lists, Linux 3.0 (`mm/vmscan.c`): `shrink_inactive_list`,
//! `shrink_page_list`, `page_check_references`, `pageout`,
//! `may_write_to_queue`, `putback_lru_pages`; with Gorman's Jul 2011 RFC
//! switches (see `KernelProfile`).

use super::dirty_pages::DirtyPages;
use super::node::ReclaimStat;
use super::{isolate_event, ScanControl, DEF_PRIORITY};
use crate::block::submit::Submit;
use crate::fs::Writepage;
use crate::fs::WritepageResult;
use crate::mm::page::{flags, Holder, LRU_INACTIVE_FILE, NIL};
use crate::mm::page_lru;
use crate::mm::swap::Swap;
use crate::mm::vmstat::{Ev, ZoneEv};
use crate::mm::MemoryOps;
use crate::reclaim::ReclaimHost;
use crate::trace::{IsolateMode, LruName, ReclaimFlags, ReclaimLru, ShrinkStat, TraceEvent};
use crate::writeback::flusher::Flushers;

#[cfg(test)]
mod tests;

/// `trace_reclaim_flags` / `trace_shrink_flags`, async (no lumpy reclaim).
fn async_flags(file: bool) -> ReclaimFlags {
    ReclaimFlags {
        lru: if file {
            ReclaimLru::File
        } else {
            ReclaimLru::Anon
        },
        sync: false,
    }
}

/// `enum page_references` (3.0).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum PageRef {
    Activate,
    Keep,
    Reclaim,
    ReclaimClean,
}

/// What `shrink_page_list` did with one page.
pub(super) enum Fate {
    Freed,
    Kept,
    Activated,
    /// Off the LRU for good (RFC patch 4, see `SkippedDirtyPage::Orphan`).
    Orphaned,
}

/// Tallies of one `shrink_page_list` call.
#[derive(Default)]
pub(super) struct Tally {
    pub(super) reclaimed: u64,
    dirty: u64,
    /// Pages found under writeback (`nr_writeback`, 3.2).
    writeback: u64,
    congested: u64,
    flush_first: u64,
    /// Activated file and anonymous pages, and pages referenced once and
    /// kept (6.1's `nr_activate`, `nr_ref_keep`).
    activated_file: u64,
    activated_anon: u64,
    ref_keep: u64,
}

/// One `shrink_page_list` call's counts as 6.1's `reclaim_stat`: `nr`
/// before and after it (`sc->nr`, file pages), the call's own tally.
fn shrink_stat(t: &Tally, before: &ReclaimStat, after: &ReclaimStat) -> ShrinkStat {
    let immediate = after.immediate - before.immediate;
    ShrinkStat {
        nr_dirty: after.dirty - before.dirty,
        nr_writeback: t.writeback.saturating_sub(immediate),
        nr_congested: after.congested - before.congested,
        nr_immediate: immediate,
        nr_activate_anon: t.activated_anon,
        nr_activate_file: t.activated_file,
        nr_ref_keep: t.ref_keep,
    }
}

/// `shrink_inactive_list` and `shrink_page_list`: what becomes of each page reclaim isolates.
pub trait ShrinkList: ReclaimHost {
    /// `shrink_inactive_list` (3.0, order 0, async) on list `lru`.
    fn shrink_inactive_list(
        &mut self,
        zone: usize,
        lru: usize,
        nr_to_scan: u64,
        sc: &mut ScanControl,
    ) {
        let file = lru == LRU_INACTIVE_FILE;
        let cpu = self.task(sc.tid).cpu;
        self.mm_mut().lru_add_drain(cpu);
        // isolate_lru_pages from the tail.
        let mut buf = std::mem::take(&mut self.reclaim_mut().isolate_buf);
        buf.clear();
        let skipped = match sc.reclaim_idx {
            Some(idx) => self.isolate_eligible(zone, lru, nr_to_scan, idx, &mut buf),
            None => {
                self.mm_mut()
                    .isolate_lru_tail(zone, lru, nr_to_scan, &mut buf);
                0
            }
        };
        let nr_taken = buf.len() as u64;
        let z = self.mm_mut().zone_mut(zone);
        if file {
            z.nr_isolated_file += nr_taken;
        } else {
            z.nr_isolated_anon += nr_taken;
        }
        z.pages_scanned += nr_taken;
        self.mm_mut().lruvec_mut(zone).recent_scanned[file as usize] += nr_taken;
        self.count_scanned(zone, sc, nr_taken + skipped, file);
        let cost = self.cost();
        let ns = nr_taken * cost.scan_page_ns + skipped * cost.lru_skip_page_ns;
        self.charge_sys(sc.tid, ns);
        let classzone = super::scan_classzone(self, zone, sc);
        self.trace(
            sc.tid,
            isolate_event(
                IsolateMode::Inactive,
                nr_to_scan,
                nr_taken,
                (classzone, skipped, LruName::of_index(lru)),
            ),
        );

        sc.nr.taken += nr_taken;
        if file {
            sc.nr.file_taken += nr_taken;
        }
        let unqueued_before = sc.nr.unqueued_dirty;
        let nr_before = sc.nr;
        let t = self.shrink_page_list(zone, &buf, sc);
        if nr_taken > 0
            && sc.nr.unqueued_dirty - unqueued_before == nr_taken
            && self.wakes_flushers_on_unqueued_dirty()
        {
            self.wakeup_flusher_threads(0);
        }
        let z = self.mm_mut().zone_mut(zone);
        if file {
            z.nr_isolated_file -= nr_taken;
        } else {
            z.nr_isolated_anon -= nr_taken;
        }
        self.count_reclaimed(zone, sc, t.reclaimed, file);
        self.reclaim_mut().isolate_buf = buf;
        let ev = TraceEvent::LruShrinkInactive {
            nid: self.mm().zone_node(zone) as u32,
            zid: self.mm().zone_type(zone) as u32,
            nr_scanned: nr_taken,
            nr_reclaimed: t.reclaimed,
            priority: sc.priority,
            flags: async_flags(file),
            nr_skipped: skipped,
            stat: shrink_stat(&t, &nr_before, &sc.nr),
        };
        self.trace(sc.tid, ev);
        // Writes issued by pageout go to the devices now (no plug in 3.0
        // shrink_page_list).
        self.flush_all_plugs();
        // Gorman RFC patch 3: throttle a reclaimer whose batch was mostly
        // dirty (all of it at priority 12, half at 11, ...).
        let shift = DEF_PRIORITY - sc.priority;
        let throttle = self.throttle_dirty_batch(sc);
        if throttle && t.dirty > 0 && t.dirty >= nr_taken >> shift {
            self.mm_mut().vmstat_mut().inc(Ev::NrVmscanThrottled, 1);
            let timeout = self.jiffies_ns(self.hz() / 10);
            sc.stall = self.wait_iff_congested(sc.tid, zone, timeout);
        }
        // 3.2: the same back-off on pages under writeback.
        if self.throttle_writeback_batch(sc) && t.writeback > 0 && t.writeback >= nr_taken >> shift
        {
            let timeout = self.jiffies_ns(self.hz() / 10);
            sc.stall = self.wait_iff_congested(sc.tid, zone, timeout);
        }
    }

    /// `isolate_lru_folios` below the node's top zone (4.8+, read in 6.1):
    /// up to `nr_to_scan` pages of zones up to `reclaim_idx` from the tail
    /// of list `lru` into `buf`, walking past (and counting as scanned,
    /// and in `pgskip_<zone>`) the pages of higher zones, however many,
    /// which then go to the list's head in the order met. Returns the
    /// pages skipped.
    fn isolate_eligible(
        &mut self,
        zone: usize,
        lru: usize,
        nr_to_scan: u64,
        reclaim_idx: usize,
        buf: &mut Vec<u32>,
    ) -> u64 {
        let mut skip = std::mem::take(&mut self.reclaim_mut().skip_buf);
        skip.clear();
        while (buf.len() as u64) < nr_to_scan {
            let pfn = self.mm().lruvec(zone).lists[lru].tail;
            if pfn == NIL {
                break;
            }
            self.mm_mut().lru_unlink(pfn);
            let page_zone = self.mm().pages().zone_of(pfn);
            if page_zone > reclaim_idx {
                let zone_type = self.mm().zone_type(page_zone);
                self.mm_mut().vmstat_mut().skipped_by_zone_type[zone_type] += 1;
                skip.push(pfn);
                continue;
            }
            self.mm_mut().pages_mut()[pfn as usize].holder = Holder::Isolated;
            buf.push(pfn);
        }
        for &pfn in &skip {
            self.mm_mut().lru_link_head(pfn, lru);
        }
        let skipped = skip.len() as u64;
        self.reclaim_mut().skip_buf = skip;
        skipped
    }

    /// `shrink_page_list` (3.0): decide each isolated page's fate; kept
    /// pages go back to the head of their inactive list, activated ones to
    /// the active list (`putback_lru_pages`).
    fn shrink_page_list(&mut self, zone: usize, isolated: &[u32], sc: &mut ScanControl) -> Tally {
        let mut t = Tally::default();
        for &pfn in isolated {
            match self.reclaim_one_page(zone, pfn, sc, &mut t) {
                Fate::Freed => {
                    self.free_page(sc.tid, pfn);
                    self.charge_sys(sc.tid, self.cost().page_free_ns);
                    t.reclaimed += 1;
                }
                Fate::Kept => self.putback(pfn),
                Fate::Activated => {
                    let p = &mut self.mm_mut().pages_mut()[pfn as usize];
                    p.flags |= flags::ACTIVE;
                    let file = !p.has(flags::ANON) as usize;
                    match file {
                        1 => t.activated_file += 1,
                        _ => t.activated_anon += 1,
                    }
                    self.mm_mut().vmstat_mut().inc(Ev::PgActivate, 1);
                    self.mm_mut().lruvec_mut(zone).recent_rotated[file] += 1;
                    self.putback(pfn);
                }
                Fate::Orphaned => self.mm_mut().pages_mut()[pfn as usize].holder = Holder::Orphaned,
            }
        }
        // Global reclaim only (no memcg in the model).
        if t.dirty > 0 && t.dirty == t.congested {
            self.mm_mut().zone_mut(zone).congested = true;
        }
        if t.flush_first > 0 {
            // Gorman RFC patch 5: wake the flushers for the inodes just marked.
            self.wakeup_flusher_threads(t.flush_first);
        }
        t
    }

    /// One page of `shrink_page_list`.
    fn reclaim_one_page(
        &mut self,
        zone: usize,
        pfn: u32,
        sc: &mut ScanControl,
        t: &mut Tally,
    ) -> Fate {
        let p = self.mm().pages()[pfn as usize];
        // A closed file's inode may be frozen (`mm::inode_table`).
        self.mm_mut().thaw_inode(p.inode());
        if p.has(flags::LOCKED) {
            // trylock_page failed: a read is in flight.
            return Fate::Kept;
        }
        if p.has(flags::PTE_MAPPED) || p.has(flags::SWAPCACHE) {
            // "Double the slab pressure for mapped and swapcache pages."
            sc.nr_scanned += 1;
        }
        // `folio_check_dirty_writeback` (4.8+ counts; file pages only).
        let (dirty, writeback) = (p.has(flags::DIRTY), p.has(flags::WRITEBACK));
        if !p.has(flags::ANON) {
            sc.nr.dirty += (dirty || writeback) as u64;
            sc.nr.unqueued_dirty += (dirty && !writeback) as u64;
            sc.nr.congested += (writeback && p.has(flags::RECLAIM)) as u64;
        }
        if writeback {
            t.writeback += 1;
            sc.nr.writeback += 1;
            return self.writeback_page_met(pfn, sc);
        }
        let refs = self.page_check_references(pfn);
        match refs {
            PageRef::Activate => return Fate::Activated,
            PageRef::Keep => {
                t.ref_keep += 1;
                return Fate::Kept;
            }
            PageRef::Reclaim | PageRef::ReclaimClean => {}
        }
        let anon = p.has(flags::ANON);
        if anon && !p.has(flags::SWAPCACHE) && !self.mm_mut().add_to_swap(pfn) {
            return Fate::Activated;
        }
        if self.mm().pages()[pfn as usize].has(flags::PTE_MAPPED) {
            self.mm_mut().try_to_unmap(pfn);
        }
        if self.mm().pages()[pfn as usize].has(flags::DIRTY) {
            t.dirty += 1;
            if !anon && !self.reclaim_may_write_file(sc, pfn) {
                // Gorman RFC patches 1-2 (3.2 order: before RECLAIM_CLEAN).
                if self.flag_inode_for_writeback(p.inode()) {
                    t.flush_first += 1;
                }
                return self.skip_dirty_file_page(pfn);
            }
            if refs == PageRef::ReclaimClean || !sc.may_writepage {
                return Fate::Kept;
            }
            self.wait_for_request_before_write(sc, pfn);
            if anon {
                // pageout → swap_writepage; the swap bdi is never congested.
                self.mm_mut().pages_mut()[pfn as usize].flags |= flags::RECLAIM;
                self.swap_writepage(sc.tid, pfn);
                self.mm_mut()
                    .vmstat_mut()
                    .zinc(zone, ZoneEv::NrVmscanWrite, 1);
                self.trace(
                    sc.tid,
                    TraceEvent::writepage(pfn as u64, async_flags(false)),
                );
                return Fate::Kept;
            }
            let bdi = self.mm().inode(p.inode()).bdi();
            if !self.may_write_to_queue(sc, bdi) {
                t.congested += 1;
                return Fate::Kept;
            }
            // pageout(): no ->writepage (6.1 xfs, btrfs) is PAGE_ACTIVATE.
            if self.pageout_has_no_writepage(pfn) {
                return Fate::Activated;
            }
            // pageout(): clear dirty for IO, set PG_reclaim, ->writepage.
            self.mm_mut().pages_mut()[pfn as usize].flags |= flags::RECLAIM;
            let result = self.fs_writepage_reclaim(sc.tid, pfn, sc.is_kswapd);
            self.mm_mut()
                .vmstat_mut()
                .zinc(zone, ZoneEv::NrVmscanWrite, 1);
            self.trace(sc.tid, TraceEvent::writepage(pfn as u64, async_flags(true)));
            match result {
                WritepageResult::Redirtied | WritepageResult::Submitted => {
                    if !self.mm().pages()[pfn as usize].has(flags::WRITEBACK) {
                        self.mm_mut().pages_mut()[pfn as usize].flags &= !flags::RECLAIM;
                    }
                    return Fate::Kept;
                }
                WritepageResult::CompletedSync => {
                    self.mm_mut().pages_mut()[pfn as usize].flags &= !flags::RECLAIM;
                }
            }
        }
        // `try_to_release_page` fails on buffers the filesystem holds:
        // `goto activate_locked`.
        if self.mm().pages()[pfn as usize].has(flags::PINNED) {
            return Fate::Activated;
        }
        // Clean: __remove_mapping from the page cache or the swap cache.
        let p = self.mm().pages()[pfn as usize];
        if anon {
            self.mm_mut().remove_from_swap_cache(pfn);
            return Fate::Freed;
        }
        let shadow = match self.mm().workingset_enabled() {
            true => Some(self.mm_mut().workingset_eviction(pfn)),
            false => None,
        };
        let inode = self.mm_mut().inode_mut(p.inode());
        match shadow {
            Some(shadow) => inode.remove_leaving_shadow(p.index(), shadow),
            None => inode.remove(p.index()),
        }
        if inode.unused {
            self.mm_mut().retire_unused_inode(p.inode());
        }
        Fate::Freed
    }

    /// `pageout` → `submit_bio` → `get_request_wait`: when the page's
    /// queue has no free request and the bio cannot merge, the reclaimer
    /// sleeps until a request completes (the first time in a batch; the
    /// write itself is issued now). kswapd in 3.0 is blocked this way while
    /// the flushers keep the queue full.
    fn wait_for_request_before_write(&mut self, sc: &mut ScanControl, pfn: u32) {
        if sc.stall.is_some() {
            return;
        }
        // A dirty anonymous page is unmapped by now: its mapping is the
        // swap cache and its index the slot, which is where it is written.
        let p = self.mm().pages()[pfn as usize];
        // wbt: kswapd gets the whole depth; direct reclaim as any writer.
        let class = if sc.is_kswapd {
            crate::block::wbt::WbtClass::Max
        } else {
            self.wbt_class(self.mm().inode(p.inode()).bdi(), false)
        };
        if self.must_wait_for_request_of(sc.tid, p.inode(), p.index(), class) {
            sc.stall = Some(crate::sched::Step::Wait(None));
        }
    }

    /// `page_check_references` (3.0): a young PTE activates an anon page
    /// and gives a file page a second round (PG_referenced set, kept); a
    /// file page seen referenced twice is activated. A file page with only
    /// PG_referenced may be freed if clean but is not written.
    fn page_check_references(&mut self, pfn: u32) -> PageRef {
        let referenced_ptes = self.mm().pages()[pfn as usize].has(flags::PTE_MAPPED)
            && self.mm_mut().test_and_clear_young(pfn);
        let p = &mut self.mm_mut().pages_mut()[pfn as usize];
        let referenced_page = p.has(flags::REFERENCED);
        p.flags &= !(flags::PTE_YOUNG | flags::REFERENCED);
        if referenced_ptes {
            if p.has(flags::ANON) {
                return PageRef::Activate;
            }
            p.flags |= flags::REFERENCED;
            return if referenced_page {
                PageRef::Activate
            } else {
                PageRef::Keep
            };
        }
        if referenced_page && !p.has(flags::ANON) {
            return PageRef::ReclaimClean;
        }
        PageRef::Reclaim
    }

    /// `may_write_to_queue`: kswapd (PF_SWAPWRITE) always; others only to an
    /// uncongested device or the one they are writing to themselves.
    fn may_write_to_queue(&self, sc: &ScanControl, bdi: usize) -> bool {
        if sc.is_kswapd {
            return true;
        }
        let congested = self
            .wb()
            .bdi(bdi)
            .device
            .is_some_and(|d| self.block().queue(d).congested);
        !congested || self.wb().task_backing_dev(sc.tid) == Some(bdi)
    }

    /// `PGSCAN_KSWAPD` / `PGSCAN_DIRECT`: `n` pages this reclaimer isolated,
    /// of one type (`PGSCAN_ANON` / `PGSCAN_FILE`).
    fn count_scanned(&mut self, zone: usize, sc: &mut ScanControl, n: u64, file: bool) {
        let ev = if sc.is_kswapd {
            ZoneEv::PgScanKswapd
        } else {
            ZoneEv::PgScanDirect
        };
        self.mm_mut().vmstat_mut().zinc(zone, ev, n);
        self.mm_mut().vmstat_mut().scanned_by_type[file as usize] += n;
        sc.nr_scanned += n;
    }

    /// `PGSTEAL_KSWAPD` / `PGSTEAL_DIRECT` (and 3.x's `kswapd_steal`): `n`
    /// pages this reclaimer freed, of one type (`PGSTEAL_ANON` / `PGSTEAL_FILE`).
    fn count_reclaimed(&mut self, zone: usize, sc: &mut ScanControl, n: u64, file: bool) {
        sc.nr_reclaimed += n;
        self.mm_mut().vmstat_mut().stolen_by_type[file as usize] += n;
        let ev = if sc.is_kswapd {
            ZoneEv::PgStealKswapd
        } else {
            ZoneEv::PgStealDirect
        };
        self.mm_mut().vmstat_mut().zinc(zone, ev, n);
        if sc.is_kswapd {
            self.mm_mut().vmstat_mut().inc(Ev::KswapdSteal, n);
        }
    }

    /// `putback_lru_pages`: back to the head of the list its flags name.
    /// With MGLRU (`evict_folios`' putback) every page reclaim kept or
    /// activated goes to the youngest generation (PG_active forced).
    fn putback(&mut self, pfn: u32) {
        if self.mm().lru_gen_enabled() {
            self.mm_mut().pages_mut()[pfn as usize].flags |= flags::ACTIVE;
            self.mm_mut().lru_gen_add(pfn, false);
            return;
        }
        let lru = page_lru(&self.mm().pages()[pfn as usize]);
        self.mm_mut().lru_link_head(pfn, lru);
    }
}

impl<T: ReclaimHost + ?Sized> ShrinkList for T {}
