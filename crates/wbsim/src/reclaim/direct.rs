//! The page allocator's slow path and direct reclaim, Linux 3.0
//! (`mm/page_alloc.c`: `__alloc_pages_nodemask`, `__alloc_pages_slowpath`,
//! `wake_all_kswapd`, `__alloc_pages_direct_reclaim`, `should_alloc_retry`;
//! `mm/vmscan.c`: `try_to_free_pages`, `do_try_to_free_pages`,
//! `shrink_zones`; `mm/backing-dev.c: wait_iff_congested`).
//!
//! Resumable: a task that sleeps in `wait_iff_congested` keeps its place in
//! the priority loop in `AllocState` and continues there when it wakes.

use super::{ScanControl, DEF_PRIORITY, SWAP_CLUSTER_MAX};
use crate::kernel::DirtyLimitScope;
use crate::mm::page::Pfn;
use crate::mm::vmstat::Ev;
use crate::mm::{Gfp, Mark};
use crate::system::task::Step;
use crate::system::System;
use crate::trace::{GfpMask, TraceEvent};

#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
enum Phase {
    /// Not allocating, or about to try the fast path.
    #[default]
    Start,
    /// Inside `do_try_to_free_pages` at `priority`.
    Reclaim,
    /// Direct reclaim done; retry the freelists at the min watermark.
    AfterReclaim,
}

#[derive(Debug, Clone, Copy, Default)]
pub struct AllocState {
    phase: Phase,
    priority: u32,
    total_scanned: u64,
    nr_reclaimed: u64,
    may_writepage: bool,
    /// Already stalled once for per-zone dirty limits (first version).
    dirty_stalled: bool,
}

impl System {
    /// Allocate one page-cache page for task `tid` (GFP_HIGHUSER_MOVABLE;
    /// may enter direct reclaim and sleep). `Err` when the task must sleep
    /// (direct reclaim throttling); call again after waking.
    pub fn alloc_page_for_task(&mut self, tid: u32, gfp: Gfp) -> Result<Pfn, Step> {
        // The fast path, without copying the task's slow-path state: a
        // task not inside the slow path takes a page at the low watermark.
        // (On failure this changes nothing; `alloc_loop` goes on from there.)
        if self.tasks[tid as usize].alloc.phase == Phase::Start {
            if let Some(pfn) = self.get_page_from_freelist(tid, Mark::Low, gfp) {
                self.tasks[tid as usize].alloc.dirty_stalled = false;
                self.charge_sys(tid, self.cost.page_alloc_ns);
                return Ok(pfn);
            }
        }
        let low_tried = self.tasks[tid as usize].alloc.phase == Phase::Start;
        let mut st = self.tasks[tid as usize].alloc;
        let r = self.alloc_loop(tid, &mut st, gfp, low_tried);
        self.tasks[tid as usize].alloc = st;
        if r.is_ok() {
            self.charge_sys(tid, self.cost.page_alloc_ns);
        }
        r
    }

    /// The allocation's state machine; `low_tried`: the fast path has
    /// just failed at the low watermark, so the first `Start` skips it.
    fn alloc_loop(
        &mut self,
        tid: u32,
        st: &mut AllocState,
        gfp: Gfp,
        mut low_tried: bool,
    ) -> Result<Pfn, Step> {
        loop {
            match st.phase {
                Phase::Start => {
                    if !std::mem::take(&mut low_tried) {
                        if let Some(pfn) = self.get_page_from_freelist(tid, Mark::Low, gfp) {
                            st.dirty_stalled = false;
                            return Ok(pfn);
                        }
                    }
                    if gfp.write
                        && self.profile.dirty_limit_scope == DirtyLimitScope::PerZoneFirstVersion
                        && !st.dirty_stalled
                        && self.all_zones_over_dirty_limit()
                    {
                        // First version: every zone is over its dirty share;
                        // wake the flushers and wait once.
                        st.dirty_stalled = true;
                        for bdi in 0..self.bdis.len() {
                            self.bdi_start_background_writeback(bdi);
                        }
                        let t = self.jiffies_ns(self.hz / 10);
                        return Err(self.congestion_wait(tid, t));
                    }
                    st.dirty_stalled = false;
                    // Slow path: wake kswapd, retry at min.
                    self.wake_all_kswapd(tid);
                    if let Some(pfn) = self.get_page_from_freelist(tid, Mark::Min, gfp) {
                        return Ok(pfn);
                    }
                    self.vmstat.inc(Ev::AllocStall, 1);
                    let ev = TraceEvent::DirectReclaimBegin {
                        order: 0,
                        may_writepage: !self.sysctl.laptop_mode,
                        gfp: GfpMask::HighuserMovable,
                    };
                    self.trace(tid, ev);
                    *st = AllocState {
                        phase: Phase::Reclaim,
                        priority: DEF_PRIORITY,
                        total_scanned: 0,
                        nr_reclaimed: 0,
                        may_writepage: !self.sysctl.laptop_mode,
                        dirty_stalled: false,
                    };
                }
                Phase::Reclaim => {
                    if let Some(step) = self.direct_reclaim_priority(tid, st) {
                        return Err(step);
                    }
                }
                Phase::AfterReclaim => {
                    let progress = st.nr_reclaimed > 0;
                    // __alloc_pages_direct_reclaim drains the per-CPU lists
                    // only after reclaim made progress.
                    let page = if progress {
                        self.get_page_after_drain(tid, Mark::Min, gfp)
                    } else {
                        self.get_page_from_freelist(tid, Mark::Min, gfp)
                    };
                    if let Some(pfn) = page {
                        *st = AllocState::default();
                        return Ok(pfn);
                    }
                    // should_alloc_retry → wait_iff_congested(HZ/50), rebalance.
                    st.phase = Phase::Start;
                    if !progress {
                        // No progress at all: the OOM path in the kernel; the
                        // model waits HZ/10 for writeback and retries.
                        let t = self.now + self.jiffies_ns(self.hz / 10);
                        return Err(Step::SleepUntil(t));
                    }
                    let t = self.jiffies_ns(self.hz.div_ceil(50));
                    let zone = self.preferred_zone();
                    if let Some(step) = self.wait_iff_congested(tid, zone, t) {
                        return Err(step);
                    }
                }
            }
        }
    }

    /// One priority pass of `do_try_to_free_pages`; `Some(step)` when the
    /// task sleeps in `wait_iff_congested` before the next priority.
    fn direct_reclaim_priority(&mut self, tid: u32, st: &mut AllocState) -> Option<Step> {
        let mut sc = ScanControl {
            tid,
            is_kswapd: false,
            may_writepage: st.may_writepage,
            nr_to_reclaim: SWAP_CLUSTER_MAX,
            nr_scanned: 0,
            nr_reclaimed: st.nr_reclaimed,
            priority: st.priority,
            stall: None,
            stall_same_priority: false,
        };
        // shrink_zones: every zone of the zonelist, highest first.
        for z in (0..self.zones.len()).rev() {
            if self.zones[z].present_pages == 0 {
                continue;
            }
            if self.zones[z].all_unreclaimable && st.priority != DEF_PRIORITY {
                continue;
            }
            self.shrink_zone(z, &mut sc);
            if sc.stall.is_some() {
                break;
            }
        }
        if sc.stall.is_none() {
            let lru_pages = (0..self.zones.len())
                .map(|z| self.zone_reclaimable_pages(z))
                .sum();
            self.shrink_slab(tid, false, sc.nr_scanned, lru_pages);
        }
        st.total_scanned += sc.nr_scanned;
        st.nr_reclaimed = sc.nr_reclaimed;
        if let Some(step) = sc.stall {
            // Throttled mid-pass (Gorman RFC patch 3): after the wait, go on
            // with the next priority, or retry the freelists.
            if st.nr_reclaimed >= SWAP_CLUSTER_MAX || st.priority == 0 {
                self.direct_reclaim_done(tid, st);
            } else if !sc.stall_same_priority {
                st.priority -= 1;
            }
            return Some(step);
        }
        if st.nr_reclaimed >= SWAP_CLUSTER_MAX {
            self.direct_reclaim_done(tid, st);
            return None;
        }
        // Scanned well past the target: ask the flushers for that much.
        if st.total_scanned > SWAP_CLUSTER_MAX + SWAP_CLUSTER_MAX / 2 {
            let nr = if self.sysctl.laptop_mode {
                0
            } else {
                st.total_scanned
            };
            self.wakeup_flusher_threads(nr);
            st.may_writepage = true;
        }
        if st.priority == 0 {
            // Gave up; progress if anything was reclaimed (else the OOM path,
            // which the model replaces by a retry after the congestion wait).
            self.direct_reclaim_done(tid, st);
            return None;
        }
        let nap = sc.nr_scanned > 0 && st.priority < DEF_PRIORITY - 2;
        st.priority -= 1;
        if nap {
            let zone = self.preferred_zone();
            return self.wait_iff_congested(tid, zone, self.jiffies_ns(self.hz / 10));
        }
        None
    }

    /// `do_try_to_free_pages` returns: `mm_vmscan_direct_reclaim_end`, then
    /// the freelists are retried.
    fn direct_reclaim_done(&mut self, tid: u32, st: &mut AllocState) {
        st.phase = Phase::AfterReclaim;
        let ev = TraceEvent::DirectReclaimEnd {
            nr_reclaimed: st.nr_reclaimed,
        };
        self.trace(tid, ev);
    }

    /// `wait_iff_congested` (2.6.37 – 3.x): sleep like `congestion_wait` only
    /// if some device is congested and `zone` is flagged ZONE_CONGESTED;
    /// otherwise just yield.
    pub fn wait_iff_congested(&mut self, tid: u32, zone: usize, timeout_ns: u64) -> Option<Step> {
        let any_congested = self.queues.iter().any(|q| q.congested);
        if !any_congested || !self.zones[zone].congested {
            // cond_resched() only: the tracepoint records no delay.
            let ev = TraceEvent::WaitIffCongested {
                usec_timeout: (timeout_ns / 1000) as u32,
                usec_delayed: 0,
            };
            self.trace(tid, ev);
            return None;
        }
        Some(self.congestion_sleep(tid, timeout_ns, true))
    }
}
