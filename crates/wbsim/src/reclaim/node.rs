//! Node-based reclaim (4.8+), the dispatch point for the node's lists,
//! kswapd's balancing of the node and reclaim's throttling: the `pgdat`
//! flags `shrink_node` sets from a pass's counts (PGDAT_DIRTY,
//! PGDAT_WRITEBACK, LRUVEC_CONGESTED), `kswapd_failures`,
//! `pgdat_balanced` and `reclaim_throttle`. Read in 6.1 `mm/vmscan.c`
//! (`shrink_node`, `pgdat_balanced`, `reclaim_throttle`,
//! `consider_reclaim_throttle`, `skip_throttle_noprogress`); per node.

use super::{ReclaimHost, ScanControl};
use crate::kernel::{KernelProfile, KswapdBalance, WritebackInReclaim};
use crate::mm::lruvec::LruRules;
use crate::sched::Step;

/// `MAX_RECLAIM_RETRIES`: kswapd passes without progress before the node
/// is left to direct reclaim.
pub const MAX_RECLAIM_RETRIES: u32 = 16;

/// The LRU rules of the machine's memory (chosen at build): who owns the
/// lists, and whether a page whose writeback ends with PG_reclaim set
/// leaves the active list for the inactive tail (4.11+
/// `lru_move_tail_fn` clears PG_active, read in 6.1 mm/swap.c; before,
/// only inactive pages were rotated).
pub fn lru_rules(profile: &KernelProfile) -> LruRules {
    LruRules {
        scope: profile.lru_scope,
        rotate_deactivates: profile.writeback_page_in_reclaim == WritebackInReclaim::Activate,
        generations: profile.lru_generations,
        workingset: profile.workingset_refault,
        activate_in_pagevec: profile.mark_accessed_in_pagevec,
    }
}

/// The profile's node-reclaim rules (chosen at build).
#[derive(Debug, Clone, Copy)]
pub struct NodePolicy {
    pub(super) kswapd_balance: KswapdBalance,
    /// 5.16+: `reclaim_throttle` in place of the congestion waits.
    pub(super) reclaim_throttle: bool,
}

impl NodePolicy {
    pub fn from_profile(profile: &KernelProfile) -> NodePolicy {
        NodePolicy {
            kswapd_balance: profile.kswapd_balance,
            reclaim_throttle: profile.reclaim_throttle,
        }
    }
}

/// `sc->nr`: what `shrink_folio_list` met over a `shrink_node` call
/// (4.8+; each field the kernel's).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct ReclaimStat {
    /// File pages dirty or under writeback.
    pub dirty: u64,
    /// Dirty file pages not under writeback (no IO queued for them).
    pub unqueued_dirty: u64,
    /// File pages under writeback that already had PG_reclaim.
    pub congested: u64,
    /// Pages under writeback.
    pub writeback: u64,
    /// Pages under writeback kswapd met a second time on a PGDAT_WRITEBACK
    /// node.
    pub immediate: u64,
    /// Pages isolated, and file pages isolated.
    pub taken: u64,
    pub file_taken: u64,
}

/// The node's reclaim flags and kswapd's failure count.
#[derive(Debug, Clone, Copy, Default)]
pub struct NodeState {
    /// PGDAT_DIRTY: a kswapd pass found every file page it isolated dirty
    /// and not queued for IO; lets kswapd write pages it saw twice.
    pub(super) dirty: bool,
    /// PGDAT_WRITEBACK: every page of a kswapd pass was under writeback.
    pub(super) writeback: bool,
    /// LRUVEC_CONGESTED: every dirty page met was under writeback with
    /// PG_reclaim; direct reclaimers then throttle.
    pub(super) congested: bool,
    /// `pgdat->kswapd_failures`.
    pub(super) kswapd_failures: u32,
    /// `pgdat->kswapd_highest_zoneidx`: the highest zone asked for since
    /// kswapd last read it (`None`: MAX_NR_ZONES, nothing asked).
    pub(super) pending_zone: Option<usize>,
}

/// `pgdat_balanced`, `reclaim_throttle` and the flags of `shrink_node`.
pub trait NodeReclaim: ReclaimHost {
    /// kswapd balances the node (4.12+ form) rather than zone by zone.
    fn kswapd_balances_node(&self) -> bool {
        self.reclaim().node_policy.kswapd_balance == KswapdBalance::Node
    }

    /// `reclaim_throttle` (5.16+) replaces the congestion waits.
    fn uses_reclaim_throttle(&self) -> bool {
        self.reclaim().node_policy.reclaim_throttle
    }

    /// `pgdat_balanced` (order 0): some populated zone of its node up to
    /// `highest_zone` meets its high watermark, with the lowmem reserve it
    /// keeps against allocations of `highest_zone` (`zone_watermark_ok_safe`).
    fn pgdat_balanced(&self, highest_zone: usize) -> bool {
        self.mm()
            .node_zones_through(highest_zone)
            .map(|z| self.mm().zone(z))
            .any(|z| z.present_pages > 0 && z.watermark_ok_safe(z.wmark_high, highest_zone))
    }

    /// `pgdat_watermark_boosted`: some zone of the node up to
    /// `highest_zone` has its watermarks boosted.
    fn pgdat_watermark_boosted(&self, highest_zone: usize) -> bool {
        self.mm()
            .node_zones_through(highest_zone)
            .any(|z| self.mm().zone(z).watermark_boost > 0)
    }

    /// The end of `shrink_node` (6.1): set the node's flags from the
    /// pass's counts; kswapd throttles when it met pages it had already
    /// seen under writeback, direct reclaim when the node is congested.
    fn shrink_node_flags(&mut self, sc: &mut ScanControl, reclaimed: u64) {
        let nr = sc.nr;
        let node = &mut self.reclaim_mut().node[sc.nid];
        if sc.is_kswapd {
            if nr.writeback > 0 && nr.writeback == nr.taken {
                node.writeback = true;
            }
            if nr.unqueued_dirty == nr.file_taken {
                node.dirty = true;
            }
            if nr.dirty > 0 && nr.dirty == nr.congested {
                node.congested = true;
            }
        }
        if reclaimed > 0 {
            node.kswapd_failures = 0;
        }
        if sc.stall.is_some() {
            return;
        }
        if sc.is_kswapd && nr.immediate > 0 {
            sc.stall = Some(self.reclaim_throttle_writeback(sc.tid, sc.nid));
        } else if !sc.is_kswapd && self.reclaim().node[sc.nid].congested {
            sc.stall = self.reclaim_throttle_jiffy(sc.nid);
        }
    }

    /// `clear_pgdat_congested`: kswapd found the node balanced.
    fn clear_node_flags(&mut self, nid: usize) {
        let node = &mut self.reclaim_mut().node[nid];
        node.dirty = false;
        node.writeback = false;
        node.congested = false;
    }

    /// `reclaim_throttle(VMSCAN_THROTTLE_WRITEBACK)`: sleep up to HZ/10,
    /// or until writeback completions wake the queue.
    fn reclaim_throttle_writeback(&mut self, tid: u32, nid: usize) -> Step {
        self.mm_mut().reclaim_wait_mut(nid).sleep(tid);
        let t = self.now() + self.jiffies_ns(self.hz() / 10);
        Step::Wait(Some(t))
    }

    /// `reclaim_throttle` for CONGESTED or NOPROGRESS: one jiffy, unless
    /// `skip_throttle_noprogress` (kswapd has given up on the node, or
    /// dirty and writeback pages are at most half the reclaimable ones).
    fn reclaim_throttle_jiffy(&mut self, nid: usize) -> Option<Step> {
        if self.reclaim().node[nid].kswapd_failures >= MAX_RECLAIM_RETRIES {
            return None;
        }
        let zones = self.mm().node_zones(nid);
        let reclaimable: u64 = zones
            .clone()
            .map(|z| self.mm().zone_reclaimable_pages(z))
            .sum();
        let write_pending: u64 = zones
            .map(|z| self.mm().zone(z))
            .map(|z| z.nr_dirty + z.nr_writeback)
            .sum();
        if 2 * write_pending <= reclaimable {
            return None;
        }
        Some(Step::SleepUntil(self.now() + self.jiffies_ns(1)))
    }

    /// `consider_reclaim_throttle` (direct reclaim): no progress at
    /// priority 1 sleeps a jiffy (NOPROGRESS).
    fn consider_reclaim_throttle(&mut self, sc: &ScanControl) -> Option<Step> {
        if sc.is_kswapd || sc.priority != 1 || sc.nr_reclaimed > 0 {
            return None;
        }
        self.reclaim_throttle_jiffy(sc.nid)
    }
}

impl<T: ReclaimHost + ?Sized> NodeReclaim for T {}
