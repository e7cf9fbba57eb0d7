//! kswapd, Linux 3.0 (`mm/vmscan.c`: `kswapd`, `kswapd_try_to_sleep`,
//! `sleeping_prematurely`, `balance_pgdat`, `wakeup_kswapd`), order 0.
//! The `end_zone` bookkeeping (the classzone `balance_pgdat` hands to
//! `sleeping_prematurely`, lowered past all_unreclaimable zones) and the
//! all_unreclaimable test (`nr_slab == 0 && !zone_reclaimable`) were read
//! in 3.2.4; the presets from 3.0 on share them.

use super::kswapd_node::{wakeup_kswapd_node, KswapdNode};
use super::node::NodeReclaim;
use super::{ScanControl, DEF_PRIORITY};
use crate::mm::page::ScanLeft;
use crate::mm::slab::SlabShrink;
use crate::mm::vmstat::Ev;
use crate::reclaim::Reclaim;
use crate::reclaim::ReclaimHost;
use crate::reclaim::ShrinkZone;
use crate::sched::Step;
use crate::sim::Ns;
use crate::trace::{AllocGfp, TraceEvent};

#[cfg(test)]
mod tests;

#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(super) enum Phase {
    /// Asleep on `kswapd_wait` until `wakeup_kswapd`.
    #[default]
    Sleeping,
    /// The HZ/10 nap of `kswapd_try_to_sleep`, ending at `nap_end`.
    Napping,
    /// In `balance_pgdat`.
    Balance,
}

#[derive(Debug, Clone, Copy, Default)]
pub struct KswapdState {
    /// The node this kswapd balances.
    pub(super) nid: usize,
    pub(super) phase: Phase,
    pub(super) nap_end: Ns,
    pub(super) priority: u32,
    pub(super) total_scanned: u64,
    pub(super) nr_reclaimed: u64,
    pub(super) may_writepage: bool,
    /// Woke from the congestion wait at the end of a priority pass.
    pub(super) after_wait: bool,
    pub(super) awake_since: Ns,
    /// `balance_pgdat`'s `end_zone`: the highest zone the last search
    /// found below its high watermark (0 when a call found none), lowered
    /// past an all_unreclaimable zone. It is the classzone the call
    /// returns, up to which `sleeping_prematurely` then checks (3.1+).
    pub(super) end_zone: usize,
    /// The next zone of the priority pass in progress (`None`: the next
    /// step starts a pass with the end_zone search). A pass shrinks one
    /// zone per step, so what the zones below did, and what allocators
    /// did meanwhile, is seen by the checks of the zones above.
    pub(super) pass_zone: Option<usize>,
    /// The pass so far: every zone at high; some zone under min.
    pub(super) pass_all_ok: bool,
    pub(super) pass_under_min: bool,
    /// kswapd slept inside the `shrink_zone` of zone `pass_zone`
    /// (`wait_iff_congested` or `get_request_wait`): what it had left to
    /// scan there, and what it had scanned so far (for `shrink_slab`).
    pub(super) resume_scan: Option<ScanLeft>,
    pub(super) zone_scanned: u64,
    /// The node form's last `kswapd_shrink_node`: it scanned its target,
    /// and what it reclaimed (read after a throttle's sleep).
    pub(super) node_scanned_target: bool,
    pub(super) node_reclaimed: u64,
    /// The node form's `balance_pgdat(highest_zoneidx)`: the highest zone
    /// it balances, read from the node's pending request when kswapd
    /// next runs (`read_pending`).
    pub(super) highest_zone: usize,
    pub(super) read_pending: bool,
    /// Woken, not yet run: `mm_vmscan_kswapd_wake` is traced by kswapd
    /// itself once it runs (3.0 and 6.1 `kswapd()`, after it has read
    /// the pending order and zone), not by the waker.
    pub(super) trace_wake_on_run: bool,
    /// `nr_boost_reclaim`: boost still to reclaim; `zone_boosts`: each
    /// zone's boost when the call began (index: zone within the node),
    /// taken off the zones at its end (5.0+).
    pub(super) nr_boost_reclaim: u64,
    pub(super) zone_boosts: [u64; 4],
}

/// kswapd: `balance_pgdat`, `kswapd_try_to_sleep`, `wakeup_kswapd`.
pub trait Kswapd: ReclaimHost {
    /// Time the kswapds have been awake so far, including periods still
    /// open, summed over the nodes.
    fn kswapd_awake_total_ns(&self) -> Ns {
        (0..self.mm().nr_nodes())
            .map(|nid| self.kswapd_awake_node_ns(nid))
            .sum()
    }

    /// Time node `nid`'s kswapd has been awake so far.
    fn kswapd_awake_node_ns(&self, nid: usize) -> Ns {
        let k = self.reclaim().kswapd_state(nid);
        let open = if k.phase == Phase::Sleeping {
            0
        } else {
            self.now().saturating_sub(k.awake_since)
        };
        self.reclaim().kswapd_awake_ns[nid] + open
    }

    /// `mm_vmscan_kswapd_wake`: kswapd() emits it before every
    /// `balance_pgdat` call, including after a premature nap (3.0 – 6.1).
    fn kswapd_trace_wake(&mut self, nid: usize) {
        let ev = TraceEvent::KswapdWake {
            nid: nid as u32,
            order: 0,
        };
        self.trace(self.kswapd_task_of(nid), ev);
    }

    /// The start of a `balance_pgdat` call (3.0: also each `loop_again`).
    fn loop_again(&mut self, k: &mut KswapdState) {
        k.priority = DEF_PRIORITY;
        k.total_scanned = 0;
        k.nr_reclaimed = 0;
        k.may_writepage = !self.sysctl().laptop_mode;
        k.after_wait = false;
        k.pass_zone = None;
        k.resume_scan = None;
        k.zone_scanned = 0;
        self.mm_mut().vmstat_mut().inc(Ev::PageOutRun, 1);
    }

    /// `sleeping_prematurely` (order 0, 3.1 – 3.x): some populated zone up
    /// to `classzone` (the last `balance_pgdat`'s `end_zone`) that is not
    /// all_unreclaimable is below its high watermark. Zones above the
    /// classzone are not looked at: a balance that found them at high and
    /// worked on lower zones lets kswapd sleep whatever they do meanwhile.
    fn kswapd_premature(&self, classzone: usize) -> bool {
        self.mm().node_zones_through(classzone).any(|i| {
            let z = self.mm().zone(i);
            z.present_pages > 0 && !z.all_unreclaimable && !z.watermark_ok_safe(z.wmark_high, i)
        })
    }

    #[inline(never)]
    fn kswapd_step(&mut self, tid: u32) -> Step {
        let nid = self.kswapd_node_of(tid);
        let mut k = self.reclaim().kswapd_state(nid);
        if std::mem::take(&mut k.trace_wake_on_run) {
            self.kswapd_trace_wake(nid);
        }
        let step = match k.phase {
            Phase::Sleeping => Step::Wait(None),
            Phase::Napping => {
                let premature = if self.kswapd_balances_node() {
                    !self.prepare_kswapd_sleep(&k)
                } else {
                    self.kswapd_premature(k.end_zone)
                };
                if premature {
                    self.mm_mut()
                        .vmstat_mut()
                        .inc(Ev::KswapdHighWmarkHitQuickly, 1);
                    k.phase = Phase::Balance;
                    k.end_zone = self.mm().node_zones(nid).start;
                    k.read_pending = true;
                    self.kswapd_trace_wake(nid);
                    self.loop_again(&mut k);
                    Step::Continue
                } else {
                    k.phase = Phase::Sleeping;
                    let ev = TraceEvent::KswapdSleep { nid: nid as u32 };
                    self.trace(tid, ev);
                    // Normal per-CPU thresholds while asleep.
                    self.mm_mut().set_percpu_threshold_pressure(nid, false);
                    self.reclaim_mut().kswapd_awake_ns[nid] += self.now() - k.awake_since;
                    Step::Wait(None)
                }
            }
            Phase::Balance if self.kswapd_balances_node() => self.balance_node_step(tid, &mut k),
            Phase::Balance => self.balance_pgdat_step(tid, &mut k),
        };
        self.reclaim_mut().set_kswapd_state(k);
        step
    }

    /// The node kswapd task `tid` balances.
    fn kswapd_node_of(&self, tid: u32) -> usize {
        (0..self.mm().nr_nodes())
            .find(|&nid| self.kswapd_task_of(nid) == tid)
            .unwrap_or(0)
    }

    /// One step of a priority pass of `balance_pgdat` (3.0): the end_zone
    /// search and the first zone's work, or the next zone's.
    fn balance_pgdat_step(&mut self, tid: u32, k: &mut KswapdState) -> Step {
        if k.after_wait {
            k.after_wait = false;
            return self.balance_next_priority(k);
        }
        let i = match k.pass_zone.take() {
            Some(i) => i,
            None => match self.balance_pgdat_search(tid, k) {
                Some(step) => return step,
                None => self.mm().node_zones(k.nid).start,
            },
        };
        self.balance_pgdat_zones(tid, k, i)
    }

    /// The search of a pass: `end_zone` is the highest zone below its high
    /// watermark; none means balanced (`goto out`, returned as a step).
    fn balance_pgdat_search(&mut self, tid: u32, k: &mut KswapdState) -> Option<Step> {
        let zones = self.mm().node_zones(k.nid);
        // Find end_zone: highest zone below its high watermark, ageing the
        // active anon list of each zone looked at on the way.
        let mut end_zone = None;
        for i in zones.clone().rev() {
            let z = self.mm().zone(i);
            if z.present_pages == 0 || (z.all_unreclaimable && k.priority != DEF_PRIORITY) {
                continue;
            }
            let mut sc = self.reclaim().kswapd_scan_control(tid, k);
            self.age_active_anon(i, &mut sc);
            let z = self.mm().zone(i);
            if !z.watermark_ok_safe(z.wmark_high, zones.start) {
                end_zone = Some(i);
                break;
            }
        }
        let Some(found) = end_zone else {
            // `goto out`: end_zone keeps what this call last set.
            return Some(self.kswapd_done(k));
        };
        k.end_zone = found;
        k.pass_all_ok = true;
        k.pass_under_min = false;
        None
    }

    /// The pass's zones from `i` up: `for (i = 0; i <= end_zone; i++)`
    /// with end_zone lowered inside; a step ends after a zone it shrank.
    fn balance_pgdat_zones(&mut self, tid: u32, k: &mut KswapdState, mut i: usize) -> Step {
        let first = self.mm().node_zones(k.nid).start;
        while i <= k.end_zone {
            let mut shrank = false;
            let z = self.mm().zone(i);
            // A zone kswapd slept in is gone on with whatever its state.
            let resume = k.resume_scan.take();
            if resume.is_none()
                && (z.present_pages == 0 || (z.all_unreclaimable && k.priority != DEF_PRIORITY))
            {
                i += 1;
                continue;
            }
            let balance_gap = z.wmark_low.min(z.present_pages.div_ceil(100));
            if resume.is_some() || !z.watermark_ok_safe(z.wmark_high + balance_gap, k.end_zone) {
                let mut sc = self.reclaim().kswapd_scan_control(tid, k);
                let left = match resume {
                    Some(nr) => self.shrink_zone_lists(i, &mut sc, nr),
                    None => self.shrink_zone(i, &mut sc),
                };
                shrank = true;
                k.total_scanned += sc.nr_scanned;
                k.nr_reclaimed = sc.nr_reclaimed;
                if let Some(step) = sc.stall {
                    // Asleep inside shrink_zone: the rest of this zone's
                    // scan, and of the pass, comes after the wait.
                    k.zone_scanned += sc.nr_scanned;
                    k.resume_scan = left;
                    k.pass_zone = Some(i);
                    return step;
                }
                let zone_scanned = std::mem::take(&mut k.zone_scanned) + sc.nr_scanned;
                let lru_pages = self
                    .mm()
                    .node_zones_through(k.end_zone)
                    .map(|z| self.mm().zone_reclaimable_pages(z))
                    .sum();
                let nr_slab = self.shrink_slab(tid, true, zone_scanned, lru_pages);
                let reclaimable = self.mm().zone_reclaimable_pages(i);
                let z = self.mm_mut().zone_mut(i);
                // 3.x: `nr_slab == 0 && !zone_reclaimable(zone)`.
                if nr_slab == 0 && z.pages_scanned >= 6 * reclaimable {
                    z.all_unreclaimable = true;
                }
            }
            let cluster = self.swap_cluster_max();
            if k.total_scanned > 2 * cluster && k.total_scanned > k.nr_reclaimed * 3 / 2 {
                k.may_writepage = true;
            }
            let end_zone = k.end_zone;
            let z = self.mm_mut().zone_mut(i);
            if z.all_unreclaimable {
                if end_zone > first && end_zone == i {
                    k.end_zone -= 1;
                }
            } else if !z.watermark_ok_safe(z.wmark_high, end_zone) {
                k.pass_all_ok = false;
                if !z.watermark_ok_safe(z.wmark_min, end_zone) {
                    k.pass_under_min = true;
                }
            } else {
                z.congested = false;
            }
            i += 1;
            if shrank && i <= k.end_zone {
                // The zone's reclaim took this step's CPU time; the next
                // zone is looked at when it is over.
                k.pass_zone = Some(i);
                return Step::Continue;
            }
        }
        if k.pass_all_ok {
            return self.kswapd_done(k);
        }
        if k.total_scanned > 0 && k.priority < DEF_PRIORITY - 2 {
            if k.pass_under_min {
                self.mm_mut()
                    .vmstat_mut()
                    .inc(Ev::KswapdSkipCongestionWait, 1);
            } else {
                k.after_wait = true;
                return self.congestion_wait(tid, self.jiffies_ns(self.hz() / 10));
            }
        }
        self.balance_next_priority(k)
    }

    fn balance_next_priority(&mut self, k: &mut KswapdState) -> Step {
        if k.nr_reclaimed >= self.swap_cluster_max() || k.priority == 0 {
            self.loop_again(k);
        } else {
            k.priority -= 1;
        }
        Step::Continue
    }

    /// Balanced: `kswapd_try_to_sleep` naps HZ/10 first.
    fn kswapd_done(&mut self, k: &mut KswapdState) -> Step {
        k.phase = Phase::Napping;
        k.nap_end = self.now() + self.jiffies_ns(self.hz() / 10);
        Step::SleepUntil(k.nap_end)
    }
}

impl<T: ReclaimHost + ?Sized> Kswapd for T {}

impl Reclaim {
    /// Node `nid`'s kswapd.
    pub fn kswapd_state(&self, nid: usize) -> KswapdState {
        self.kswapd[nid]
    }

    pub fn set_kswapd_state(&mut self, k: KswapdState) {
        self.kswapd[k.nid] = k;
    }

    /// Some kswapd is awake: in `balance_pgdat` or in the HZ/10 nap of
    /// `kswapd_try_to_sleep` between two balancing runs (a balancing run
    /// itself takes microseconds of CPU, so "reclaim is going on" is the
    /// awake period).
    pub fn kswapd_awake(&self) -> bool {
        self.kswapd.iter().any(|k| k.phase != Phase::Sleeping)
    }

    pub fn kswapd_scan_control(&self, tid: u32, k: &KswapdState) -> ScanControl {
        ScanControl {
            tid,
            nid: k.nid,
            is_kswapd: true,
            may_writepage: k.may_writepage,
            nr_to_reclaim: u64::MAX,
            nr_scanned: 0,
            nr_reclaimed: k.nr_reclaimed,
            priority: k.priority,
            stall: None,
            nr: Default::default(),
            reclaim_idx: None,
        }
    }
}

/// `wake_all_kswapd` → `wakeup_kswapd` for each zone of the allocation's
/// zonelist: wake the zone's node's kswapd if it is waiting (asleep or
/// napping) and the zone is below its low watermark; each such zone is
/// one `mm_vmscan_wakeup_kswapd` event of the allocating task `tid`.
/// The zonelist holds every node's zones, the local node's first. `gfp`:
/// the allocation, as 6.1's event prints it.
pub fn wake_all_kswapd<H: ReclaimHost + ?Sized>(sys: &mut H, tid: u32, gfp: AllocGfp) {
    let local = sys.mm().cpu_node(sys.task(tid).cpu);
    let nr_nodes = sys.mm().nr_nodes();
    for i in 0..nr_nodes {
        wake_node_kswapd(sys, tid, (local + i) % nr_nodes, gfp);
    }
}

/// `wakeup_kswapd` for the zones of node `nid`.
fn wake_node_kswapd<H: ReclaimHost + ?Sized>(sys: &mut H, tid: u32, nid: usize, gfp: AllocGfp) {
    if sys.kswapd_balances_node() {
        // The allocation may use every zone of the node.
        let highest = sys.mm().node_highest_zone(nid);
        wakeup_kswapd_up_to(sys, tid, nid, highest, gfp);
        return;
    }
    let mut k = sys.reclaim().kswapd_state(nid);
    if k.phase == Phase::Balance {
        return;
    }
    let zones = sys.mm().node_zones(nid);
    let mut below_low = false;
    for zid in zones.clone().rev() {
        let z = sys.mm().zone(zid);
        if z.present_pages > 0 && !z.watermark_ok_safe(z.wmark_low, zones.start) {
            below_low = true;
            let ev = TraceEvent::WakeupKswapd {
                nid: nid as u32,
                zid: sys.mm().zone_type(zid) as u32,
                order: 0,
                gfp,
            };
            sys.trace(tid, ev);
        }
    }
    if !below_low {
        return;
    }
    wake_kswapd(sys, &mut k);
}

/// `wakeup_kswapd(zone, 0, 0, zone_idx(zone))` from `rmqueue` after a
/// fallback boosted zone `z` (5.0+).
pub fn wakeup_kswapd_boosted<H: ReclaimHost + ?Sized>(sys: &mut H, tid: u32, z: usize) {
    let nid = sys.mm().zone_node(z);
    wakeup_kswapd_up_to(sys, tid, nid, z, AllocGfp::None);
}

/// `wakeup_kswapd` of the node form (4.12+) for a request up to zone
/// `highest` of node `nid`: the node's pending zone is raised to it at
/// least, and kswapd woken unless it is running, has given up, or finds
/// its zones up to `highest` balanced and none boosted.
fn wakeup_kswapd_up_to<H: ReclaimHost + ?Sized>(
    sys: &mut H,
    tid: u32,
    nid: usize,
    highest: usize,
    gfp: AllocGfp,
) {
    sys.reclaim_mut().raise_kswapd_zone(nid, highest);
    let mut k = sys.reclaim().kswapd_state(nid);
    if k.phase == Phase::Balance || !wakeup_kswapd_node(sys, tid, nid, highest, gfp) {
        return;
    }
    wake_kswapd(sys, &mut k);
}

/// kswapd, asleep or napping, is woken into `balance_pgdat`; it reads the
/// node's pending zone when it runs.
fn wake_kswapd<H: ReclaimHost + ?Sized>(sys: &mut H, k: &mut KswapdState) {
    if k.phase == Phase::Sleeping {
        k.awake_since = sys.now();
        // Pressure thresholds while awake (zones with a drift mark).
        sys.mm_mut().set_percpu_threshold_pressure(k.nid, true);
    }
    // A napping kswapd sees the wake-up as "low watermark hit quickly".
    if k.phase == Phase::Napping {
        sys.mm_mut()
            .vmstat_mut()
            .inc(Ev::KswapdLowWmarkHitQuickly, 1);
    }
    k.phase = Phase::Balance;
    k.end_zone = sys.mm().node_zones(k.nid).start;
    k.read_pending = true;
    k.trace_wake_on_run = true;
    sys.loop_again(k);
    sys.reclaim_mut().set_kswapd_state(*k);
    sys.wake_task(sys.kswapd_task_of(k.nid));
}
