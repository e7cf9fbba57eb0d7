//! Direct reclaim, Linux 3.0 (`mm/vmscan.c`: `try_to_free_pages`,
//! `do_try_to_free_pages`, `shrink_zones`; `mm/backing-dev.c:
//! wait_iff_congested`), entered from the page allocator's slow path
//! (`crate::mm::page_alloc`).
//!
//! Resumable: a task that sleeps in `wait_iff_congested` keeps its place in
//! the priority loop in its `AllocState` and continues there when it wakes;
//! one that sleeps inside a zone's `shrink_zone` (a throttle in
//! `shrink_inactive_list`, or `get_request_wait`) goes on with the rest of
//! that zone's scan and of the pass, at the same priority, as in 3.0 – 3.x.
//! (The zone's early stop then counts the pages reclaimed since the wake.)

use super::node::NodeReclaim;
use super::{ScanControl, DEF_PRIORITY};
use crate::kernel::LruScope;
use crate::mm::page_alloc::{AllocPhase, AllocState};
use crate::mm::slab::SlabShrink;
use crate::reclaim::ReclaimHost;
use crate::reclaim::ShrinkZone;
use crate::sched::Step;
use crate::trace::TraceEvent;
use crate::writeback::flusher::Flushers;

#[cfg(test)]
mod tests;

/// Direct reclaim from the allocator (`try_to_free_pages`) and its waits.
pub trait DirectReclaim: ReclaimHost {
    /// `do_try_to_free_pages` returns: `mm_vmscan_direct_reclaim_end`, then
    /// the freelists are retried.
    fn direct_reclaim_done(&mut self, tid: u32, st: &mut AllocState) {
        st.phase = AllocPhase::AfterReclaim;
        let ev = TraceEvent::DirectReclaimEnd {
            nr_reclaimed: st.nr_reclaimed,
        };
        self.trace(tid, ev);
    }
}

impl<T: ReclaimHost + ?Sized> DirectReclaim for T {}

/// Direct reclaim's `scan_control` for the allocation in progress.
fn direct_scan_control(tid: u32, st: &AllocState, swap_cluster_max: u64) -> ScanControl {
    ScanControl {
        tid,
        nid: 0,
        is_kswapd: false,
        may_writepage: st.may_writepage,
        nr_to_reclaim: swap_cluster_max,
        nr_scanned: 0,
        nr_reclaimed: st.nr_reclaimed,
        priority: st.priority,
        stall: None,
        nr: Default::default(),
        reclaim_idx: None,
    }
}

/// One priority pass of `do_try_to_free_pages`; `Some(step)` when the
/// task sleeps in `wait_iff_congested` before the next priority.
pub fn direct_reclaim_priority<H: ReclaimHost + ?Sized>(
    sys: &mut H,
    tid: u32,
    st: &mut AllocState,
) -> Option<Step> {
    if sys.mm().lru_scope() == LruScope::Node {
        return direct_reclaim_node_priority(sys, tid, st);
    }
    let mut sc = direct_scan_control(tid, st, sys.swap_cluster_max());
    // shrink_zones: every zone of the zonelist, the local node's highest
    // first; after a sleep inside a zone's shrink_zone, from the rest of
    // that zone on.
    let cpu = sys.task(tid).cpu;
    let resume = st.resume_scan.take();
    let first = resume.map_or(0, |(z, _, _)| {
        let zonelist = sys.mm().zonelist(cpu);
        zonelist.iter().position(|&x| x == z).unwrap_or(0)
    });
    let scanned_before = resume.map_or(0, |(_, _, n)| n);
    for i in first..sys.mm().zonelist(cpu).len() {
        let z = sys.mm().zonelist(cpu)[i];
        let left = match resume {
            Some((rz, nr, _)) if rz == z => sys.shrink_zone_lists(z, &mut sc, nr),
            _ => {
                let zone = sys.mm().zone(z);
                if zone.present_pages == 0
                    || (zone.all_unreclaimable && st.priority != DEF_PRIORITY)
                {
                    continue;
                }
                sys.shrink_zone(z, &mut sc)
            }
        };
        if sc.stall.is_some() {
            st.resume_scan = left.map(|nr| (z, nr, scanned_before + sc.nr_scanned));
            break;
        }
    }
    st.total_scanned += sc.nr_scanned;
    st.nr_reclaimed = sc.nr_reclaimed;
    if let Some(step) = sc.stall {
        // Asleep inside shrink_zone (a throttle or get_request_wait): the
        // rest of the pass comes after the wait, at the same priority.
        return Some(step);
    }
    let lru_pages = (0..sys.mm().nr_zones())
        .map(|z| sys.mm().zone_reclaimable_pages(z))
        .sum();
    sys.shrink_slab(tid, false, scanned_before + sc.nr_scanned, lru_pages);
    if st.nr_reclaimed >= sys.swap_cluster_max() {
        sys.direct_reclaim_done(tid, st);
        return None;
    }
    // Scanned well past the target: ask the flushers for that much.
    let cluster = sys.swap_cluster_max();
    if st.total_scanned > cluster + cluster / 2 {
        let nr = if sys.sysctl().laptop_mode {
            0
        } else {
            st.total_scanned
        };
        sys.wakeup_flusher_threads(nr);
        st.may_writepage = true;
    }
    if st.priority == 0 {
        // Gave up; progress if anything was reclaimed (else the OOM path,
        // which the model replaces by a retry after the congestion wait).
        sys.direct_reclaim_done(tid, st);
        return None;
    }
    let nap = sc.nr_scanned > 0 && st.priority < DEF_PRIORITY - 2;
    st.priority -= 1;
    if nap {
        let zone = sys.mm().preferred_zone(cpu);
        return sys.wait_iff_congested(tid, zone, sys.jiffies_ns(sys.hz() / 10));
    }
    None
}

/// One priority of `do_try_to_free_pages` over the nodes (4.8+, read in
/// 6.1): `shrink_zones` shrinks each node of the zonelist once
/// (`shrink_node`), the local node first, then `consider_reclaim_throttle`
/// on the first node; no flusher wake-up and no congestion wait between
/// priorities (both gone by 5.16). A throttle's sleep ends the priority
/// (the nodes after it are not shrunk at this priority): the task goes
/// on with the next one when it wakes.
fn direct_reclaim_node_priority<H: ReclaimHost + ?Sized>(
    sys: &mut H,
    tid: u32,
    st: &mut AllocState,
) -> Option<Step> {
    let mut sc = direct_scan_control(tid, st, sys.swap_cluster_max());
    let local = sys.mm().cpu_node(sys.task(tid).cpu);
    let nr_nodes = sys.mm().nr_nodes();
    for i in 0..nr_nodes {
        sc.nid = (local + i) % nr_nodes;
        sys.shrink_node(&mut sc);
        if sc.stall.is_some() {
            break;
        }
    }
    sc.nid = local;
    let stall = sc.stall.or_else(|| sys.consider_reclaim_throttle(&sc));
    st.total_scanned += sc.nr_scanned;
    st.nr_reclaimed = sc.nr_reclaimed;
    if st.nr_reclaimed >= sys.swap_cluster_max() || st.priority == 0 {
        sys.direct_reclaim_done(tid, st);
        return stall;
    }
    if st.priority < DEF_PRIORITY - 2 {
        st.may_writepage = true;
    }
    st.priority -= 1;
    stall
}

/// Whether the allocator's retry after direct reclaim wakes kswapd again
/// and goes on without a wait (5.16+ `__alloc_pages_slowpath`: `retry:`
/// calls `wake_all_kswapds`, and `should_reclaim_retry` no longer waits).
pub fn alloc_retry_wakes_kswapd<H: ReclaimHost + ?Sized>(sys: &H) -> bool {
    sys.uses_reclaim_throttle()
}

/// `wait_iff_congested` (2.6.37 – 3.x): sleep like `congestion_wait` only
/// if some device is congested and `zone` is flagged ZONE_CONGESTED;
/// otherwise just yield. 5.16+ has none (`reclaim_throttle` instead):
/// the caller goes straight on.
pub fn wait_iff_congested<H: ReclaimHost + ?Sized>(
    sys: &mut H,
    tid: u32,
    zone: usize,
    timeout_ns: u64,
) -> Option<Step> {
    if sys.uses_reclaim_throttle() {
        return None;
    }
    if !sys.block().any_congested() || !sys.mm().zone(zone).congested {
        // cond_resched() only: the tracepoint records no delay.
        let ev = TraceEvent::WaitIffCongested {
            usec_timeout: (timeout_ns / 1000) as u32,
            usec_delayed: 0,
        };
        sys.trace(tid, ev);
        return None;
    }
    Some(sys.congestion_sleep(tid, timeout_ns, true))
}
