//! kswapd balancing its node, 4.12+ (read in 6.1 `mm/vmscan.c`:
//! `balance_pgdat`, `kswapd_shrink_node`, `pgdat_balanced`,
//! `prepare_kswapd_sleep`, `kswapd_try_to_sleep`, `wakeup_kswapd`),
//! order 0. Watermark boosting is not modelled: `boost_watermark` runs
//! only when an allocation steals a pageblock of another migratetype,
//! which a page cache on an unfragmented guest does not do.
//!
//! One step is one iteration of `balance_pgdat`'s priority loop: the
//! balance test, one `shrink_node` of the node's lists, and the priority
//! decision (after kswapd's `reclaim_throttle` when it met pages it had
//! already seen under writeback).

use super::kswapd::{Kswapd, KswapdState};
use super::lru_gen::LruGenReclaim;
use super::node::{NodeReclaim, MAX_RECLAIM_RETRIES};
use super::{ReclaimHost, ShrinkZone, SWAP_CLUSTER_MAX};
use crate::sched::Step;
use crate::trace::TraceEvent;

/// The highest zone of node `nid` kswapd balances for: page-cache
/// allocations may use every zone (`kswapd_highest_zoneidx` of a movable
/// allocation).
fn highest_zone<H: ReclaimHost + ?Sized>(sys: &H, nid: usize) -> usize {
    sys.mm().node_highest_zone(nid)
}

/// `balance_pgdat` of a node (4.12+).
pub trait KswapdNode: ReclaimHost {
    /// One iteration of the priority loop.
    fn balance_node_step(&mut self, tid: u32, k: &mut KswapdState) -> Step {
        let nid = k.nid;
        self.mm_mut().reclaim_wait_mut(nid).finish(tid);
        if k.after_wait {
            k.after_wait = false;
            return self.balance_node_next_priority(k);
        }
        let highest = highest_zone(self, nid);
        if self.pgdat_balanced(highest) {
            self.clear_node_flags(nid);
            return self.kswapd_done(k);
        }
        // kswapd_shrink_node: reclaim the eligible zones' high watermarks.
        let target: u64 = self
            .mm()
            .node_zones_through(highest)
            .map(|z| self.mm().zone(z))
            .filter(|z| z.present_pages > 0)
            .map(|z| z.wmark_high.max(SWAP_CLUSTER_MAX))
            .sum();
        if self.mm().lru_gen_enabled() {
            self.lru_gen_age_node(nid);
        }
        let mut sc = self.reclaim().kswapd_scan_control(tid, k);
        sc.nr_to_reclaim = target;
        sc.nr_reclaimed = 0;
        self.shrink_node(&mut sc);
        k.node_scanned_target = sc.nr_scanned >= target;
        k.node_reclaimed = sc.nr_reclaimed;
        k.nr_reclaimed += sc.nr_reclaimed;
        k.total_scanned += sc.nr_scanned;
        if let Some(step) = sc.stall {
            k.after_wait = true;
            return step;
        }
        self.balance_node_next_priority(k)
    }

    /// The end of an iteration: a lower priority unless the pass scanned
    /// its target and reclaimed something; after priority 1, the end of
    /// `balance_pgdat` (a failure if the call reclaimed nothing) and
    /// `kswapd_try_to_sleep`, which does not sleep on an unbalanced node
    /// kswapd has not given up on.
    fn balance_node_next_priority(&mut self, k: &mut KswapdState) -> Step {
        if !k.node_scanned_target || k.node_reclaimed == 0 {
            k.priority -= 1;
        }
        if k.priority >= 1 {
            return Step::Continue;
        }
        if k.nr_reclaimed == 0 {
            self.reclaim_mut().node[k.nid].kswapd_failures += 1;
        }
        if self.prepare_kswapd_sleep(k.nid) {
            return self.kswapd_done(k);
        }
        self.kswapd_trace_wake(k.nid);
        self.loop_again(k);
        Step::Continue
    }

    /// `prepare_kswapd_sleep` (order 0): kswapd may sleep when it has
    /// given up on the node or the node is balanced.
    fn prepare_kswapd_sleep(&self, nid: usize) -> bool {
        self.reclaim().node[nid].kswapd_failures >= MAX_RECLAIM_RETRIES
            || self.pgdat_balanced(highest_zone(self, nid))
    }
}

impl<T: ReclaimHost + ?Sized> KswapdNode for T {}

/// `wakeup_kswapd` of the node form, once per node (`wake_all_kswapds`
/// skips the zones of a node already asked): no wake when kswapd has given
/// up on the node or the node is balanced. Whether kswapd is to be woken.
pub fn wakeup_kswapd_node<H: ReclaimHost + ?Sized>(sys: &mut H, tid: u32, nid: usize) -> bool {
    let highest = highest_zone(sys, nid);
    if sys.reclaim().node[nid].kswapd_failures >= MAX_RECLAIM_RETRIES || sys.pgdat_balanced(highest)
    {
        return false;
    }
    let ev = TraceEvent::WakeupKswapd {
        nid: nid as u32,
        zid: sys.mm().zone_type(highest) as u32,
        order: 0,
    };
    sys.trace(tid, ev);
    true
}
