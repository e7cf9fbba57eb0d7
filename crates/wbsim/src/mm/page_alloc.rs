//! The page allocator's entry and slow path, Linux 3.0
//! (`mm/page_alloc.c`: `__alloc_pages_nodemask`, `__alloc_pages_slowpath`,
//! `wake_all_kswapd`, `__alloc_pages_direct_reclaim`, `should_alloc_retry`):
//! the fast path at the low watermark, kswapd woken and the min
//! watermark, then direct reclaim (`crate::reclaim::direct`).
//!
//! Resumable: a task that sleeps inside the slow path keeps its place in
//! its [`AllocState`] and continues there when it wakes.

use crate::kernel::DirtyLimitScope;
use crate::kernel::DEF_PRIORITY;
use crate::mm::page::Pfn;
use crate::mm::pcp::PerCpuLists;
use crate::mm::vmstat::Ev;
use crate::mm::MemoryOps;
use crate::mm::MmHost;
use crate::mm::{Gfp, Mark};
use crate::sched::Step;
use crate::trace::{GfpMask, TraceEvent};

#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum AllocPhase {
    /// Not allocating, or about to try the fast path.
    #[default]
    Start,
    /// Inside `do_try_to_free_pages` at `priority`.
    Reclaim,
    /// Direct reclaim done; retry the freelists at the min watermark.
    AfterReclaim,
    /// Reclaim made progress but no page came of it: after
    /// `wait_iff_congested(HZ/50)`, the min watermark and direct reclaim
    /// again (`goto rebalance`, 2.6.24 – 3.x), without waking kswapd.
    Rebalance,
}

#[derive(Debug, Clone, Copy, Default)]
pub struct AllocState {
    pub(crate) phase: AllocPhase,
    pub(crate) priority: u32,
    pub(crate) total_scanned: u64,
    pub(crate) nr_reclaimed: u64,
    pub(crate) may_writepage: bool,
    /// Already stalled once for per-zone dirty limits (first version).
    pub(crate) dirty_stalled: bool,
    /// Direct reclaim slept inside the `shrink_zone` of this zone: what it
    /// had left to scan there (it goes on with it when it wakes), and what
    /// the pass had scanned before the sleep (for `shrink_slab`).
    pub(crate) resume_scan: Option<(usize, crate::mm::page::ScanLeft, u64)>,
}

/// The page allocator's entry and slow path (`__alloc_pages_nodemask`).
pub trait PageAlloc: MmHost {
    /// Allocate one page-cache page for task `tid` (GFP_HIGHUSER_MOVABLE;
    /// may enter direct reclaim and sleep). `Err` when the task must sleep
    /// (direct reclaim throttling); call again after waking.
    #[inline(always)]
    fn alloc_page_for_task(&mut self, tid: u32, gfp: Gfp) -> Result<Pfn, Step> {
        // The fast path, without copying the task's slow-path state: a
        // task not inside the slow path takes a page at the low watermark.
        // (On failure this changes nothing; `alloc_loop` goes on from there.)
        let st = &self.mm().task_alloc[tid as usize];
        if st.phase == AllocPhase::Start {
            // Written only when it changes: nearly every allocation finds
            // it false.
            let dirty_stalled = st.dirty_stalled;
            if let Some(pfn) = self.get_page_from_freelist(tid, Mark::Low, gfp) {
                if dirty_stalled {
                    self.mm_mut().task_alloc[tid as usize].dirty_stalled = false;
                }
                self.charge_sys(tid, self.cost().page_alloc_ns);
                return Ok(pfn);
            }
        }
        let low_tried = self.mm().task_alloc[tid as usize].phase == AllocPhase::Start;
        let mut st = self.mm().task_alloc[tid as usize];
        let r = self.alloc_loop(tid, &mut st, gfp, low_tried);
        self.mm_mut().task_alloc[tid as usize] = st;
        if r.is_ok() {
            self.charge_sys(tid, self.cost().page_alloc_ns);
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
                AllocPhase::Start => {
                    if !std::mem::take(&mut low_tried) {
                        if let Some(pfn) = self.get_page_from_freelist(tid, Mark::Low, gfp) {
                            st.dirty_stalled = false;
                            return Ok(pfn);
                        }
                    }
                    if gfp.write
                        && self.dirty_limit_scope() == DirtyLimitScope::PerZoneFirstVersion
                        && !st.dirty_stalled
                        && self.all_zones_over_dirty_limit()
                    {
                        // First version: every zone is over its dirty share;
                        // wake the flushers and wait once.
                        st.dirty_stalled = true;
                        for bdi in 0..self.nr_bdis() {
                            self.bdi_start_background_writeback(bdi);
                        }
                        let t = self.jiffies_ns(self.hz() / 10);
                        return Err(self.congestion_wait(tid, t));
                    }
                    st.dirty_stalled = false;
                    // Slow path: wake kswapd, retry at min.
                    self.wake_all_kswapd(tid, gfp);
                    if let Some(pfn) = self.get_page_from_freelist(tid, Mark::Min, gfp) {
                        return Ok(pfn);
                    }
                    self.begin_direct_reclaim(tid, st, gfp);
                }
                AllocPhase::Rebalance => {
                    // `rebalance:` the min watermark once more, then
                    // direct reclaim again; kswapd is not woken again
                    // (5.16+: `retry:` wakes it first).
                    if self.alloc_retry_wakes_kswapd() {
                        self.wake_all_kswapd(tid, gfp);
                    }
                    if let Some(pfn) = self.get_page_from_freelist(tid, Mark::Min, gfp) {
                        *st = AllocState::default();
                        return Ok(pfn);
                    }
                    self.begin_direct_reclaim(tid, st, gfp);
                }
                AllocPhase::Reclaim => {
                    if let Some(step) = self.direct_reclaim_priority(tid, st) {
                        return Err(step);
                    }
                }
                AllocPhase::AfterReclaim => {
                    // do_try_to_free_pages reports progress when it
                    // reclaimed something, or when some zone is not
                    // all_unreclaimable ("top priority shrink_zones still
                    // had more to do? don't OOM, then").
                    let progress = st.nr_reclaimed > 0 || !self.mm().all_zones_unreclaimable();
                    if !progress {
                        // The OOM path in the kernel (`goto restart`); the
                        // model waits HZ/10 for writeback and starts over.
                        st.phase = AllocPhase::Start;
                        let t = self.now() + self.jiffies_ns(self.hz() / 10);
                        return Err(Step::SleepUntil(t));
                    }
                    // __alloc_pages_direct_reclaim: the freelists at min,
                    // and once more after draining the per-CPU lists.
                    if let Some(pfn) = self.get_page_after_drain(tid, Mark::Min, gfp) {
                        *st = AllocState::default();
                        return Ok(pfn);
                    }
                    // should_alloc_retry (always, order 0) →
                    // wait_iff_congested(HZ/50) → `goto rebalance`.
                    st.phase = AllocPhase::Rebalance;
                    let t = self.jiffies_ns(self.hz().div_ceil(50));
                    let zone = self.mm().preferred_zone(self.task(tid).cpu);
                    if let Some(step) = self.wait_iff_congested(tid, zone, t) {
                        return Err(step);
                    }
                    // Not congested: wait_iff_congested only yields the CPU
                    // (cond_resched); the task goes on at its next step.
                    return Err(Step::Continue);
                }
            }
        }
    }

    /// Enter `try_to_free_pages`: counted in allocstall (3.x
    /// `do_try_to_free_pages`, once per call) and traced.
    fn begin_direct_reclaim(&mut self, tid: u32, st: &mut AllocState, gfp: Gfp) {
        self.mm_mut().vmstat.inc(Ev::AllocStall, 1);
        let ev = TraceEvent::DirectReclaimBegin {
            order: 0,
            may_writepage: !self.sysctl().laptop_mode,
            gfp: GfpMask::HighuserMovable,
            alloc: gfp.trace_alloc(),
        };
        self.trace(tid, ev);
        *st = AllocState {
            phase: AllocPhase::Reclaim,
            priority: DEF_PRIORITY,
            total_scanned: 0,
            nr_reclaimed: 0,
            may_writepage: !self.sysctl().laptop_mode,
            dirty_stalled: false,
            resume_scan: None,
        };
    }
}

impl<T: MmHost + ?Sized> PageAlloc for T {}
