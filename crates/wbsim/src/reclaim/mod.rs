//! Page reclaim core, Linux 3.0 (`mm/vmscan.c`): `shrink_zone`,
//! `get_scan_count`, `shrink_inactive_list`, `shrink_active_list`,
//! `shrink_page_list`, `page_check_references`, `pageout`,
//! `may_write_to_queue`.
//!
//! Isolation and the per-page decisions of one batch happen within one
//! engine step, so `too_many_isolated` never triggers (one reclaimer holds
//! isolated pages at a time); lumpy reclaim is not modelled (all reference
//! workloads allocate order-0 pages).

pub mod direct;
pub mod kswapd;

use crate::fs::WritepageResult;
use crate::kernel::SkippedDirtyPage;
use crate::mm::page::{flags, Holder, LRU_ACTIVE_FILE, LRU_INACTIVE_FILE, NIL};
use crate::mm::vmstat::{Ev, ZoneEv};
use crate::system::task::Step;
use crate::system::System;
use crate::trace::{IsolateMode, ReclaimFlags, ReclaimLru, TraceEvent};

/// `trace_reclaim_flags` / `trace_shrink_flags` for file pages, async (no
/// lumpy reclaim in the model).
const FILE_ASYNC: ReclaimFlags = ReclaimFlags {
    lru: ReclaimLru::File,
    sync: false,
};

/// `mm_vmscan_lru_isolate` for an order-0 isolation (no lumpy pages).
fn isolate_event(mode: IsolateMode, nr_requested: u64, nr_taken: u64) -> TraceEvent {
    TraceEvent::LruIsolate {
        isolate_mode: mode,
        order: 0,
        nr_requested,
        nr_scanned: nr_taken,
        nr_taken,
        contig_taken: 0,
        contig_dirty: 0,
        contig_failed: 0,
    }
}

/// `DEF_PRIORITY`.
pub const DEF_PRIORITY: u32 = 12;
/// `SWAP_CLUSTER_MAX`.
pub const SWAP_CLUSTER_MAX: u64 = 32;

/// `struct scan_control` (the fields the model uses).
#[derive(Debug, Clone, Copy)]
pub struct ScanControl {
    pub tid: u32,
    pub is_kswapd: bool,
    pub may_writepage: bool,
    pub nr_to_reclaim: u64,
    pub nr_scanned: u64,
    pub nr_reclaimed: u64,
    pub priority: u32,
    /// A throttle (Gorman RFC patch 3) put the reclaimer to sleep in the
    /// middle of a pass: the caller returns this step and resumes with the
    /// next priority (the rest of the pass is dropped).
    pub stall: Option<Step>,
}

impl System {
    /// `shrink_zone` (3.0) for the file lists (no swap: anon is never
    /// scanned, `get_scan_count` gives it no share).
    pub fn shrink_zone(&mut self, zone: usize, sc: &mut ScanControl) {
        let z = &self.zones[zone];
        let file = z.nr_file_lru();
        let force_scan = sc.is_kswapd && (file >> sc.priority) < SWAP_CLUSTER_MAX;
        let mut nr = [0u64; 2]; // [inactive_file, active_file]
        for (i, lru) in [LRU_INACTIVE_FILE, LRU_ACTIVE_FILE].into_iter().enumerate() {
            let size = z.lru[lru].len;
            let mut scan = if sc.priority == 0 {
                size
            } else {
                size >> sc.priority
            };
            if scan == 0 && force_scan {
                scan = SWAP_CLUSTER_MAX.min(size);
            }
            nr[i] = scan;
        }
        while nr[0] > 0 || nr[1] > 0 {
            for i in [1usize, 0] {
                if nr[i] == 0 {
                    continue;
                }
                let n = nr[i].min(SWAP_CLUSTER_MAX);
                nr[i] -= n;
                if i == 1 {
                    // shrink_list: the active file list only when the
                    // inactive one is low (`inactive_file_is_low`).
                    let z = &self.zones[zone];
                    if z.lru[LRU_ACTIVE_FILE].len > z.lru[LRU_INACTIVE_FILE].len {
                        self.shrink_active_list(zone, n, sc);
                    }
                } else {
                    self.shrink_inactive_list(zone, n, sc);
                }
            }
            if sc.stall.is_some()
                || (sc.nr_reclaimed >= sc.nr_to_reclaim && sc.priority < DEF_PRIORITY)
            {
                break;
            }
        }
    }

    /// `shrink_active_list` (3.0): unmapped file pages are always moved to
    /// the inactive list when scanned.
    pub fn shrink_active_list(&mut self, zone: usize, nr_to_scan: u64, sc: &mut ScanControl) {
        let cpu = self.tasks[sc.tid as usize].cpu;
        self.lru_add_drain(cpu);
        let mut moved = 0;
        for _ in 0..nr_to_scan {
            let pfn = self.zones[zone].lru[LRU_ACTIVE_FILE].tail;
            if pfn == NIL {
                break;
            }
            self.lru_unlink(pfn);
            self.pages[pfn as usize].flags &= !flags::ACTIVE;
            self.lru_link_head(pfn, LRU_INACTIVE_FILE);
            moved += 1;
        }
        self.charge_sys(sc.tid, moved * self.cost.scan_page_ns);
        self.trace(
            sc.tid,
            isolate_event(IsolateMode::Active, nr_to_scan, moved),
        );
        self.zones[zone].recent_scanned[1] += moved;
        self.vmstat.zinc(zone, ZoneEv::PgRefill, moved);
        self.vmstat.inc(Ev::PgDeactivate, moved);
    }

    /// `shrink_inactive_list` + `shrink_page_list` (3.0, order 0, async).
    pub fn shrink_inactive_list(&mut self, zone: usize, nr_to_scan: u64, sc: &mut ScanControl) {
        let cpu = self.tasks[sc.tid as usize].cpu;
        self.lru_add_drain(cpu);
        // isolate_lru_pages from the tail.
        let mut buf = std::mem::take(&mut self.isolate_buf);
        buf.clear();
        for _ in 0..nr_to_scan {
            let pfn = self.zones[zone].lru[LRU_INACTIVE_FILE].tail;
            if pfn == NIL {
                break;
            }
            self.lru_unlink(pfn);
            self.pages[pfn as usize].holder = Holder::Isolated;
            buf.push(pfn);
        }
        let nr_taken = buf.len() as u64;
        let z = &mut self.zones[zone];
        z.nr_isolated_file += nr_taken;
        z.pages_scanned += nr_taken;
        z.recent_scanned[1] += nr_taken;
        let scan_ev = if sc.is_kswapd {
            ZoneEv::PgScanKswapd
        } else {
            ZoneEv::PgScanDirect
        };
        self.vmstat.zinc(zone, scan_ev, nr_taken);
        sc.nr_scanned += nr_taken;
        self.charge_sys(sc.tid, nr_taken * self.cost.scan_page_ns);
        self.trace(
            sc.tid,
            isolate_event(IsolateMode::Inactive, nr_to_scan, nr_taken),
        );

        let (reclaimed, nr_dirty) = self.shrink_page_list(zone, &buf, sc);
        self.zones[zone].nr_isolated_file -= nr_taken;
        sc.nr_reclaimed += reclaimed;
        let steal_ev = if sc.is_kswapd {
            ZoneEv::PgStealKswapd
        } else {
            ZoneEv::PgStealDirect
        };
        self.vmstat.zinc(zone, steal_ev, reclaimed);
        if sc.is_kswapd {
            self.vmstat.inc(Ev::KswapdSteal, reclaimed);
        }
        self.isolate_buf = buf;
        let ev = TraceEvent::LruShrinkInactive {
            nid: 0,
            zid: zone as u32,
            nr_scanned: nr_taken,
            nr_reclaimed: reclaimed,
            priority: sc.priority,
            flags: FILE_ASYNC,
        };
        self.trace(sc.tid, ev);
        // Writes issued by pageout go to the devices now (no plug in 3.0
        // shrink_page_list).
        self.flush_all_plugs();
        // Gorman RFC patch 3: throttle a reclaimer whose batch was mostly
        // dirty (all of it at priority 12, half at 11, ...).
        let shift = DEF_PRIORITY - sc.priority;
        if self.profile.throttle_on_dirty_isolated && nr_dirty > 0 && nr_dirty >= nr_taken >> shift
        {
            self.vmstat.inc(Ev::NrVmscanThrottled, 1);
            let timeout = self.jiffies_ns(self.hz / 10);
            sc.stall = self.wait_iff_congested(sc.tid, zone, timeout);
        }
    }

    /// `shrink_page_list` (3.0): decide each isolated page's fate. Returns
    /// pages freed and dirty pages met; kept pages go back to the inactive
    /// head, activated ones to the active head.
    fn shrink_page_list(
        &mut self,
        zone: usize,
        isolated: &[u32],
        sc: &mut ScanControl,
    ) -> (u64, u64) {
        let (mut nr_dirty, mut nr_congested, mut reclaimed) = (0u64, 0u64, 0u64);
        let mut nr_flush_first = 0u64;
        for &pfn in isolated {
            let p = self.pages[pfn as usize];
            if p.has(flags::WRITEBACK) {
                self.putback(pfn);
                continue;
            }
            // page_check_references for an unmapped file page: a set
            // Referenced bit (test-and-cleared) means RECLAIM_CLEAN.
            let referenced = p.has(flags::REFERENCED);
            self.pages[pfn as usize].flags &= !flags::REFERENCED;
            if p.has(flags::DIRTY) {
                nr_dirty += 1;
                // 3.2 order: the file-page rule comes before RECLAIM_CLEAN.
                if !self.reclaim_may_write_file(sc) {
                    if self.profile.flush_reclaim_inodes_first {
                        self.inodes[p.inode as usize].dirty_reclaim = true;
                        nr_flush_first += 1;
                    }
                    self.skip_dirty_file_page(pfn);
                    continue;
                }
                if referenced {
                    self.putback(pfn);
                    continue;
                }
                if !sc.may_writepage {
                    self.putback(pfn);
                    continue;
                }
                let bdi = self.inodes[p.inode as usize].bdi;
                if !self.may_write_to_queue(sc, bdi) {
                    nr_congested += 1;
                    self.putback(pfn);
                    continue;
                }
                // pageout(): clear dirty for IO, set PG_reclaim, ->writepage.
                self.pages[pfn as usize].flags |= flags::RECLAIM;
                let result = self.fs_writepage_reclaim(sc.tid, pfn, sc.is_kswapd);
                self.vmstat.zinc(zone, ZoneEv::NrVmscanWrite, 1);
                self.trace(sc.tid, TraceEvent::writepage(pfn as u64, FILE_ASYNC));
                match result {
                    WritepageResult::Redirtied | WritepageResult::Submitted => {
                        if !self.pages[pfn as usize].has(flags::WRITEBACK) {
                            self.pages[pfn as usize].flags &= !flags::RECLAIM;
                        }
                        self.putback(pfn);
                        continue;
                    }
                    WritepageResult::CompletedSync => {
                        self.pages[pfn as usize].flags &= !flags::RECLAIM;
                    }
                }
            }
            // Clean: __remove_mapping and free.
            let p = self.pages[pfn as usize];
            self.inodes[p.inode as usize].remove(p.index);
            self.free_page(pfn);
            self.charge_sys(sc.tid, self.cost.page_free_ns);
            reclaimed += 1;
        }
        // Global reclaim only (no memcg in the model).
        if nr_dirty > 0 && nr_dirty == nr_congested {
            self.zones[zone].congested = true;
        }
        if nr_flush_first > 0 {
            // Gorman RFC patch 5: wake the flushers for the inodes just marked.
            self.wakeup_flusher_threads(nr_flush_first);
        }
        (reclaimed, nr_dirty)
    }

    /// A dirty file page reclaim may not write (see `SkippedDirtyPage`).
    fn skip_dirty_file_page(&mut self, pfn: u32) {
        match self.profile.skipped_dirty_file_page {
            SkippedDirtyPage::Keep => {
                self.vmstat.inc(Ev::NrVmscanWriteSkip, 1);
                self.putback(pfn);
            }
            SkippedDirtyPage::ImmediateReclaim => {
                self.pages[pfn as usize].flags |= flags::RECLAIM;
                self.vmstat.inc(Ev::NrVmscanImmediateReclaim, 1);
                self.putback(pfn);
            }
            SkippedDirtyPage::Orphan => {
                self.vmstat.inc(Ev::NrVmscanInvalidate, 1);
                self.pages[pfn as usize].holder = Holder::Orphaned;
            }
        }
    }

    /// Profile switches on file writeback from reclaim (3.0: always).
    fn reclaim_may_write_file(&self, sc: &ScanControl) -> bool {
        if sc.is_kswapd {
            sc.priority <= self.profile.kswapd_writepage_max_priority
        } else {
            self.profile.direct_reclaim_writes_file_pages
        }
    }

    /// `may_write_to_queue`: kswapd (PF_SWAPWRITE) always; others only to an
    /// uncongested device or the one they are writing to themselves.
    fn may_write_to_queue(&self, sc: &ScanControl, bdi: usize) -> bool {
        if sc.is_kswapd {
            return true;
        }
        let congested = self.bdis[bdi]
            .device
            .is_some_and(|d| self.queues[d].congested);
        !congested || self.tasks[sc.tid as usize].backing_dev == Some(bdi)
    }

    /// `putback_lru_pages`: a kept page goes back to the inactive head.
    fn putback(&mut self, pfn: u32) {
        self.lru_link_head(pfn, LRU_INACTIVE_FILE);
    }
}
