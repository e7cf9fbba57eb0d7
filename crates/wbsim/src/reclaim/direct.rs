//! Direct reclaim, Linux 3.0 (`mm/vmscan.c`: `try_to_free_pages`,
//! `do_try_to_free_pages`, `shrink_zones`; `mm/backing-dev.c:
//! wait_iff_congested`), entered from the page allocator's slow path
//! (`crate::mm::page_alloc`).
//!
//! Resumable: a task that sleeps in `wait_iff_congested` keeps its place in
//! the priority loop in its `AllocState` and continues there when it wakes.

use super::{ScanControl, DEF_PRIORITY, SWAP_CLUSTER_MAX};
use crate::block::BlockHost;
use crate::mm::page_alloc::{AllocPhase, AllocState};
use crate::mm::slab::SlabShrink;
use crate::mm::MmHost;
use crate::sched::HasCore;
use crate::sched::Step;
use crate::system::System;
use crate::trace::TraceEvent;
use crate::writeback::flusher::Flushers;

#[cfg(test)]
mod tests;

impl System {
    /// One priority pass of `do_try_to_free_pages`; `Some(step)` when the
    /// task sleeps in `wait_iff_congested` before the next priority.
    pub(crate) fn direct_reclaim_priority(
        &mut self,
        tid: u32,
        st: &mut AllocState,
    ) -> Option<Step> {
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
        for z in (0..self.mm().nr_zones()).rev() {
            if self.mm().zone(z).present_pages == 0 {
                continue;
            }
            if self.mm().zone(z).all_unreclaimable && st.priority != DEF_PRIORITY {
                continue;
            }
            self.shrink_zone(z, &mut sc);
            if sc.stall.is_some() {
                break;
            }
        }
        if sc.stall.is_none() {
            let lru_pages = (0..self.mm().nr_zones())
                .map(|z| self.mm().zone_reclaimable_pages(z))
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
            let nr = if self.sysctl().laptop_mode {
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
            let zone = self.mm().preferred_zone();
            return self.wait_iff_congested(tid, zone, self.jiffies_ns(self.hz() / 10));
        }
        None
    }

    /// `do_try_to_free_pages` returns: `mm_vmscan_direct_reclaim_end`, then
    /// the freelists are retried.
    fn direct_reclaim_done(&mut self, tid: u32, st: &mut AllocState) {
        st.phase = AllocPhase::AfterReclaim;
        let ev = TraceEvent::DirectReclaimEnd {
            nr_reclaimed: st.nr_reclaimed,
        };
        self.trace(tid, ev);
    }

    /// `wait_iff_congested` (2.6.37 – 3.x): sleep like `congestion_wait` only
    /// if some device is congested and `zone` is flagged ZONE_CONGESTED;
    /// otherwise just yield.
    pub fn wait_iff_congested(&mut self, tid: u32, zone: usize, timeout_ns: u64) -> Option<Step> {
        let any_congested = self.block().queues().iter().any(|q| q.congested);
        if !any_congested || !self.mm().zone(zone).congested {
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
