//! kswapd balancing its node, 4.12+ (read in 6.1 `mm/vmscan.c`:
//! `balance_pgdat`, `kswapd_shrink_node`, `pgdat_balanced`,
//! `prepare_kswapd_sleep`, `kswapd_try_to_sleep`, `wakeup_kswapd`),
//! order 0, with 5.0+'s watermark boosting (`nr_boost_reclaim`, the boost
//! taken off at `out:`) and the node's pending zone, which `wakeup_kswapd`
//! only raises and kswapd reads and resets when it runs: a wake-up for a
//! boosted DMA alone balances DMA alone (reclaim_idx 0) unless an
//! allocation asked for more before kswapd ran.
//!
//! One step is one iteration of `balance_pgdat`'s priority loop: the
//! balance test, one `shrink_node` of the node's lists, and the priority
//! decision (after kswapd's `reclaim_throttle` when it met pages it had
//! already seen under writeback).

use super::kswapd::{Kswapd, KswapdState};
use super::lru_gen::LruGenReclaim;
use super::node::{NodeReclaim, MAX_RECLAIM_RETRIES};
use super::{ReclaimHost, ShrinkZone};
use crate::sched::Step;
use crate::trace::{AllocGfp, TraceEvent};

/// `balance_pgdat` of a node (4.12+).
pub trait KswapdNode: ReclaimHost {
    /// The start of a `balance_pgdat` call, when kswapd runs after a
    /// wake-up or an unfinished call: it reads and resets the node's
    /// pending zone (`kswapd_highest_zoneidx`, keeping its last one when
    /// none was asked), and takes the boost of the zones up to it as what
    /// to reclaim first (`nr_boost_reclaim`, 5.0+).
    fn balance_node_begin(&mut self, k: &mut KswapdState) {
        k.read_pending = false;
        let highest = self.kswapd_next_zone(k);
        self.reclaim_mut().node[k.nid].pending_zone = None;
        k.highest_zone = highest;
        let first = self.mm().node_zones(k.nid).start;
        k.zone_boosts = [0; 4];
        for z in self.mm().node_zones_through(highest) {
            k.zone_boosts[z - first] = self.mm().zone(z).watermark_boost;
        }
        k.nr_boost_reclaim = k.zone_boosts.iter().sum();
        let zones = self.mm().node_zones_through(highest);
        self.mm_mut().set_reclaim_active(zones, true);
    }

    /// One iteration of the priority loop.
    fn balance_node_step(&mut self, tid: u32, k: &mut KswapdState) -> Step {
        let nid = k.nid;
        self.mm_mut().reclaim_wait_mut(nid).finish(tid);
        if k.after_wait {
            k.after_wait = false;
            return self.balance_node_next_priority(k);
        }
        if k.read_pending {
            self.balance_node_begin(k);
        }
        let highest = k.highest_zone;
        let balanced = self.pgdat_balanced(highest);
        if !balanced && k.nr_boost_reclaim > 0 {
            // An imbalanced node: ordinary reclaim, from DEF_PRIORITY.
            k.nr_boost_reclaim = 0;
            k.priority = crate::kernel::DEF_PRIORITY;
        }
        if balanced && k.nr_boost_reclaim == 0 {
            self.clear_node_flags(nid);
            self.balance_node_out(k);
            return self.kswapd_done(k);
        }
        // Boosted reclaim neither writes nor swaps.
        k.may_writepage = k.nr_boost_reclaim == 0 || k.priority < crate::kernel::DEF_PRIORITY - 2;
        // kswapd_shrink_node: reclaim the eligible zones' high watermarks.
        let cluster = self.swap_cluster_max();
        let target: u64 = self
            .mm()
            .node_zones_through(highest)
            .map(|z| self.mm().zone(z))
            .filter(|z| z.present_pages > 0)
            .map(|z| z.wmark_high.max(cluster))
            .sum();
        if self.mm().lru_gen_enabled() {
            self.lru_gen_age_node(nid);
        }
        let mut sc = self.reclaim().kswapd_scan_control(tid, k);
        let top = self.mm().node_highest_zone(nid);
        sc.reclaim_idx = (highest < top).then_some(highest);
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
    /// its target and reclaimed something (a boosted pass stays at
    /// DEF_PRIORITY - 2; one that reclaimed nothing ends the call); after
    /// priority 1, the end of `balance_pgdat` (a failure if the call
    /// reclaimed nothing) and `kswapd_try_to_sleep`, which does not sleep
    /// on an unbalanced node kswapd has not given up on.
    fn balance_node_next_priority(&mut self, k: &mut KswapdState) -> Step {
        let boosting = k.nr_boost_reclaim > 0;
        k.nr_boost_reclaim -= k.nr_boost_reclaim.min(k.node_reclaimed);
        let boost_stuck = k.nr_boost_reclaim > 0 && k.node_reclaimed == 0;
        let hold = boosting && k.priority == crate::kernel::DEF_PRIORITY - 2;
        if !boost_stuck && ((!k.node_scanned_target && !hold) || k.node_reclaimed == 0) {
            k.priority -= 1;
        }
        if k.priority >= 1 && !boost_stuck {
            return Step::Continue;
        }
        if k.nr_reclaimed == 0 {
            self.reclaim_mut().node[k.nid].kswapd_failures += 1;
        }
        self.balance_node_out(k);
        if self.prepare_kswapd_sleep(k) {
            return self.kswapd_done(k);
        }
        self.kswapd_trace_wake(k.nid);
        self.loop_again(k);
        k.read_pending = true;
        Step::Continue
    }

    /// `balance_pgdat`'s `out:`: the boost the call began with is taken
    /// off its zones (what was boosted meanwhile stays).
    fn balance_node_out(&mut self, k: &mut KswapdState) {
        let zones = self.mm().node_zones(k.nid);
        let first = zones.start;
        self.mm_mut().set_reclaim_active(zones, false);
        for (i, boost) in std::mem::take(&mut k.zone_boosts).into_iter().enumerate() {
            if boost > 0 {
                let zone = self.mm_mut().zone_mut(first + i);
                zone.set_watermark_boost(zone.watermark_boost - zone.watermark_boost.min(boost));
            }
        }
        k.nr_boost_reclaim = 0;
    }

    /// `prepare_kswapd_sleep` (order 0): kswapd may sleep when it has
    /// given up on the node or the node is balanced up to the zone it
    /// would balance next (the pending one, or its last).
    fn prepare_kswapd_sleep(&self, k: &KswapdState) -> bool {
        self.reclaim().node[k.nid].kswapd_failures >= MAX_RECLAIM_RETRIES
            || self.pgdat_balanced(self.kswapd_next_zone(k))
    }

    /// `kswapd_highest_zoneidx(pgdat, prev)`: the zone kswapd's next
    /// balance would go up to, the node's pending request or else its
    /// last (`MAX_NR_ZONES - 1` at first: the node's top zone).
    fn kswapd_next_zone(&self, k: &KswapdState) -> usize {
        let top = self.mm().node_highest_zone(k.nid);
        let pending = self.reclaim().node[k.nid].pending_zone;
        pending.unwrap_or(k.highest_zone).min(top)
    }
}

impl<T: ReclaimHost + ?Sized> KswapdNode for T {}

/// Whether `wakeup_kswapd` of the node form, for an allocation that may
/// use the node's zones up to `highest`, wakes a waiting kswapd: not when
/// kswapd has given up on the node, or the node is balanced up to
/// `highest` and none of those zones is boosted. A wake is traced.
pub fn wakeup_kswapd_node<H: ReclaimHost + ?Sized>(
    sys: &mut H,
    tid: u32,
    nid: usize,
    highest: usize,
    gfp: AllocGfp,
) -> bool {
    if sys.reclaim().node[nid].kswapd_failures >= MAX_RECLAIM_RETRIES
        || (sys.pgdat_balanced(highest) && !sys.pgdat_watermark_boosted(highest))
    {
        return false;
    }
    let ev = TraceEvent::WakeupKswapd {
        nid: nid as u32,
        zid: sys.mm().zone_type(highest) as u32,
        order: 0,
        gfp,
    };
    sys.trace(tid, ev);
    true
}
