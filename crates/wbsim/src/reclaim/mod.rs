//! Page reclaim core, Linux 3.0 (`mm/vmscan.c`): `shrink_zone`,
//! `get_scan_count`, `shrink_inactive_list`, `shrink_active_list`,
//! `shrink_page_list`, `page_check_references`, `pageout`,
//! `may_write_to_queue`.
//!
//! Isolation and the per-page decisions of one batch happen within one
//! engine step, so `too_many_isolated` never triggers (one reclaimer holds
//! isolated pages at a time); lumpy reclaim is not modelled (all reference
//! workloads allocate order-0 pages).

use crate::reclaim::pageout::ShrinkList;

pub mod direct;
mod dirty_pages;
pub mod kswapd;
mod kswapd_node;
pub(crate) mod lru_gen;
pub mod node;
mod pageout;
mod state;
#[cfg(test)]
mod tests;
#[cfg(test)]
mod tests_node;

use crate::fs::FsHost;
use crate::kernel::{KswapdForceScan, LruScope};
use crate::mm::page::{
    flags, ScanLeft, LRU_ACTIVE_ANON, LRU_ACTIVE_FILE, LRU_INACTIVE_ANON, LRU_INACTIVE_FILE, NIL,
    NR_LRU_LISTS,
};
use crate::mm::slab::SlabShrink;
use crate::mm::vmstat::{Ev, ZoneEv};
use crate::sched::Step;
use crate::trace::{IsolateMode, LruName, TraceEvent};
use lru_gen::LruGenReclaim;
use node::NodeReclaim;

/// `mm_vmscan_lru_isolate` for an order-0 isolation (no lumpy pages);
/// `(classzone, nr_skipped, lru)` are the fields 6.1 adds.
fn isolate_event(
    mode: IsolateMode,
    nr_requested: u64,
    nr_taken: u64,
    (classzone, nr_skipped, lru): (u32, u64, LruName),
) -> TraceEvent {
    TraceEvent::LruIsolate {
        isolate_mode: mode,
        order: 0,
        nr_requested,
        nr_scanned: nr_taken,
        nr_taken,
        contig_taken: 0,
        contig_dirty: 0,
        contig_failed: 0,
        classzone,
        nr_skipped,
        lru,
    }
}

/// The zone type a scan of `zone`'s lruvec reclaims up to (6.1's
/// `classzone=`, `sc->reclaim_idx`): the node's highest zone unless the
/// scan is limited below it.
fn scan_classzone<H: ReclaimHost + ?Sized>(sys: &H, zone: usize, sc: &ScanControl) -> u32 {
    let mm = sys.mm();
    let idx = sc
        .reclaim_idx
        .unwrap_or_else(|| mm.node_highest_zone(mm.zone_node(zone)));
    mm.zone_type(idx) as u32
}

pub use crate::kernel::DEF_PRIORITY;
pub use state::Reclaim;

/// The machine as page reclaim sees it: its own state and everything
/// below it (filesystems, writeback, block, mm). Reclaim calls nothing
/// above it.
pub trait ReclaimHost: FsHost {
    fn reclaim(&self) -> &Reclaim;
    fn reclaim_mut(&mut self) -> &mut Reclaim;

    /// `SWAP_CLUSTER_MAX` in pages of the machine's unit: as many bytes
    /// as the 4 KiB kernel's 32 pages, at least one page
    /// ([`crate::mm::unit`]).
    #[inline]
    fn swap_cluster_max(&self) -> u64 {
        self.mm().swap_cluster_max()
    }
}
pub use crate::mm::SWAP_CLUSTER_MAX;

/// `struct scan_control` (the fields the model uses).
#[derive(Debug, Clone, Copy)]
pub struct ScanControl {
    pub tid: u32,
    /// The node `shrink_node` works on (4.8+); kswapd's own node.
    pub nid: usize,
    pub is_kswapd: bool,
    pub may_writepage: bool,
    pub nr_to_reclaim: u64,
    pub nr_scanned: u64,
    pub nr_reclaimed: u64,
    pub priority: u32,
    /// The reclaimer must sleep in the middle of a pass: a throttle
    /// (`wait_iff_congested` in `shrink_inactive_list`, Gorman RFC patch 3
    /// and 3.2) or `get_request_wait` for a write `pageout` issued to a
    /// full request queue (the batch's writes are issued; the pool may
    /// overrun by a request per writer). The caller returns this step and,
    /// as the kernel's task does, goes on where it slept ([`ScanLeft`]).
    pub stall: Option<Step>,
    /// `sc->nr`: what the pages met so far in this `shrink_node` were (4.8+).
    pub nr: node::ReclaimStat,
    /// `sc->reclaim_idx` when it is below the node's highest zone (kswapd
    /// balancing for a lower zone, 4.8+): pages of the zones above are
    /// skipped (`pgskip_*`) and the lists' sizes count the zones up to it.
    /// `None`: every zone of the node is eligible.
    pub reclaim_idx: Option<usize>,
}

/// Scan counts per LRU list from `get_scan_count` (3.0), in 4 KiB pages
/// for a list of `size` pages of `unit` (at a coarse unit the caller
/// takes whole pages of it and carries the rest, [`Lruvec::scan_in_units`]).
fn scan_fraction(
    size: u64,
    priority: u32,
    fraction: u64,
    denominator: u64,
    full: bool,
    unit: crate::mm::unit::PageUnit,
) -> u64 {
    let size = size * unit.base_pages();
    if full {
        return size;
    }
    let scan = if priority == 0 {
        size
    } else {
        size >> priority
    };
    ((scan as u128 * fraction as u128) / denominator.max(1) as u128) as u64
}

/// `shrink_zone`: how much of each LRU list to scan, and the scan itself (`mm/vmscan.c`).
pub trait ShrinkZone: ReclaimHost {
    /// `get_scan_count` (3.0): how many pages of each LRU list to scan at
    /// this priority. Anon and file are balanced by swappiness and by how
    /// many of each kind's recently scanned pages were rotated (referenced);
    /// without free swap only file pages are scanned, and when file plus
    /// free pages are below the high watermark only anon pages.
    fn get_scan_count(&mut self, zone: usize, sc: &ScanControl) -> [u64; NR_LRU_LISTS] {
        let noswap = self.mm().nr_swap_pages() == 0;
        let anon_prio = self.sysctl().swappiness as u64;
        // The lists' owner: the zone, or (4.8+) the node and all its zones.
        let owners = match self.mm().lru_scope() {
            LruScope::Zone => zone..=zone,
            LruScope::Node => {
                let zones = self.mm().node_zones(self.mm().zone_node(zone));
                zones.start..=zones.end - 1
            }
        };
        let zones = &self.mm().zones()[owners];
        let anon: u64 = zones.iter().map(|z| z.nr_anon_lru()).sum();
        let file: u64 = zones.iter().map(|z| z.nr_file_lru()).sum();
        let free: u64 = zones.iter().map(|z| z.nr_free()).sum();
        let wmark_high: u64 = zones.iter().map(|z| z.wmark_high).sum();
        let all_unreclaimable = zones.iter().all(|z| z.all_unreclaimable);
        let force_scan = sc.is_kswapd
            && match self.profile().kswapd_force_scan {
                KswapdForceScan::SmallZone => {
                    let base = self.mm().unit().base_pages();
                    (((anon + file) * base) >> sc.priority) < SWAP_CLUSTER_MAX
                }
                KswapdForceScan::Always => true,
                KswapdForceScan::AllUnreclaimable => all_unreclaimable,
            };
        let (fraction, denominator) = if noswap {
            ([0, 1], 1)
        } else if file + free <= wmark_high {
            ([1, 0], 1)
        } else {
            let file_prio = 200 - anon_prio;
            let lv = self.mm_mut().lruvec_mut(zone);
            for (i, size) in [anon, file].into_iter().enumerate() {
                if lv.recent_scanned[i] > size / 4 {
                    lv.recent_scanned[i] /= 2;
                    lv.recent_rotated[i] /= 2;
                }
            }
            let ap = (anon_prio + 1) * (lv.recent_scanned[0] + 1) / (lv.recent_rotated[0] + 1);
            let fp = (file_prio + 1) * (lv.recent_scanned[1] + 1) / (lv.recent_rotated[1] + 1);
            ([ap, fp], ap + fp + 1)
        };
        let mut nr = [0u64; NR_LRU_LISTS];
        let full = sc.priority == 0 && !noswap;
        let by_fraction = self.profile().kswapd_force_scan_by_fraction;
        for (lru, n) in nr.iter_mut().enumerate() {
            let f = (lru >= LRU_INACTIVE_FILE) as usize;
            // `lruvec_lru_size(lruvec, lru, sc->reclaim_idx)`.
            let len = match sc.reclaim_idx {
                Some(idx) => self
                    .mm()
                    .node_zones_through(idx)
                    .map(|z| self.mm().zone(z).lru_pages[lru])
                    .sum(),
                None => self.mm().lruvec(zone).lists[lru].len,
            };
            let unit = self.mm().unit();
            let mut scan = scan_fraction(len, sc.priority, fraction[f], denominator, full, unit);
            // 3.0 ("memcg: fix get_scan_count() for small targets",
            // 246e87a93934) forces a full batch after the anon/file
            // fraction was applied, so kswapd scans 32 anon pages of a small
            // zone even when the fraction gives anon nothing. 3.1 ("memcg:
            // fix vmscan count in small memcgs", 4508378b9523, whose posting
            // quotes the 3.0 code) and later scale the forced batch by the
            // fraction. 3.2+ forces when the list's size shifted by the
            // priority is zero, before the fraction (3.1.0 forced when the
            // scaled share was zero; the model uses the 3.2 form for
            // 3.1-mmotm too).
            if by_fraction {
                if force_scan
                    && !full
                    && sc.priority > 0
                    && (len * unit.base_pages()) >> sc.priority == 0
                {
                    let cluster = self.swap_cluster_max();
                    scan = scan_fraction(cluster, 0, fraction[f], denominator, false, unit);
                }
            } else if scan == 0 && force_scan && (f == 1 || !noswap) {
                scan = self.swap_cluster_max() * unit.base_pages();
            }
            *n = self
                .mm_mut()
                .lruvec_mut(zone)
                .scan_in_units(lru, scan, unit);
        }
        nr
    }

    /// `shrink_zone` (3.0 – 3.x): scan the lists in batches of
    /// `SWAP_CLUSTER_MAX` in `enum lru_list` order until each has had its
    /// share (active anon does not keep the loop going), stopping early
    /// once direct reclaim has reclaimed its target in this call (the
    /// local `nr_reclaimed`, from 0; pages of earlier priorities do not
    /// count); then keep the anon lists balanced (`inactive_anon_is_low`).
    fn shrink_zone(&mut self, zone: usize, sc: &mut ScanControl) -> Option<ScanLeft> {
        let nr = self.get_scan_count(zone, sc);
        self.shrink_zone_lists(zone, sc, nr)
    }

    /// The loop of `shrink_zone` with `nr` pages of each list still to
    /// scan. When the reclaimer must sleep in the middle of it
    /// (`sc.stall`), returns what is left: the kernel's task sleeps inside
    /// the loop and goes on with the rest of it when it wakes.
    fn shrink_zone_lists(
        &mut self,
        zone: usize,
        sc: &mut ScanControl,
        nr: ScanLeft,
    ) -> Option<ScanLeft> {
        self.shrink_lists_until_target(zone, sc, nr, false)
    }

    /// The batches of `shrink_zone` / `shrink_lruvec` over the lists of
    /// `zone`'s lruvec: `SWAP_CLUSTER_MAX` of each list in turn until each
    /// has had its share or this call has reclaimed `sc.nr_to_reclaim`,
    /// which ends the scan below DEF_PRIORITY, or at any priority when
    /// `stop_at_def_priority` (6.1's kswapd; its direct reclaim does a
    /// whole pass at DEF_PRIORITY). Returns what is left after a sleep.
    #[allow(clippy::needless_range_loop)] // `lru` is also the list number
    fn shrink_lists_until_target(
        &mut self,
        zone: usize,
        sc: &mut ScanControl,
        mut nr: ScanLeft,
        stop_at_def_priority: bool,
    ) -> Option<ScanLeft> {
        let reclaimed_before = sc.nr_reclaimed;
        while nr[LRU_INACTIVE_ANON] > 0 || nr[LRU_INACTIVE_FILE] > 0 || nr[LRU_ACTIVE_FILE] > 0 {
            for lru in 0..NR_LRU_LISTS {
                let n = nr[lru].min(self.swap_cluster_max());
                if n == 0 {
                    continue;
                }
                nr[lru] -= n;
                self.shrink_list(zone, lru, n, sc);
                if sc.stall.is_some() {
                    return Some(nr);
                }
            }
            let reclaimed = sc.nr_reclaimed - reclaimed_before;
            let may_stop = sc.priority < DEF_PRIORITY || stop_at_def_priority;
            if reclaimed >= sc.nr_to_reclaim && may_stop {
                break;
            }
        }
        self.age_active_anon(zone, sc);
        None
    }

    /// `shrink_node` (4.8+, read in 6.1 `shrink_node`, `shrink_lruvec`):
    /// the node's lists in batches of `SWAP_CLUSTER_MAX` until each has
    /// had its share, stopping once this call has reclaimed
    /// `sc.nr_to_reclaim` (direct reclaim at DEF_PRIORITY does a whole
    /// pass), then the slab caches, then the node's flags and throttles
    /// (`shrink_node_flags`). A sleep for a request in the middle of the
    /// lists (`pageout` to a full queue) ends the pass there.
    fn shrink_node(&mut self, sc: &mut ScanControl) {
        let zone = self.mm().node_highest_zone(sc.nid);
        sc.nr = node::ReclaimStat::default();
        let (reclaimed_before, scanned_before) = (sc.nr_reclaimed, sc.nr_scanned);
        if self.mm().lru_gen_enabled() {
            self.lru_gen_shrink_node(sc);
            // MGLRU fills none of `sc->nr` (6.1): the flags see zeros.
            sc.nr = node::ReclaimStat::default();
        } else {
            let nr = self.get_scan_count(zone, sc);
            // A sleep for a request ends the pass (what is left is dropped).
            let _ = self.shrink_lists_until_target(zone, sc, nr, sc.is_kswapd);
        }
        let lru_pages = self
            .mm()
            .node_zones_through(zone)
            .map(|z| self.mm().zone_reclaimable_pages(z))
            .sum();
        let scanned = sc.nr_scanned - scanned_before;
        self.shrink_slab(sc.tid, sc.is_kswapd, scanned, lru_pages);
        self.shrink_node_flags(sc, sc.nr_reclaimed - reclaimed_before);
    }

    /// Move active anon pages to the inactive list when it is too small
    /// (end of `shrink_zone`; `balance_pgdat` does it for every zone).
    fn age_active_anon(&mut self, zone: usize, sc: &mut ScanControl) {
        if sc.stall.is_none()
            && self.mm().nr_swap_pages() > 0
            && self.mm().zone(zone).inactive_anon_is_low()
        {
            let cluster = self.swap_cluster_max();
            self.shrink_active_list(zone, LRU_ACTIVE_ANON, cluster, sc);
        }
    }

    /// `shrink_list`: an active list only when its inactive list is low.
    fn shrink_list(&mut self, zone: usize, lru: usize, n: u64, sc: &mut ScanControl) {
        let z = self.mm().zone(zone);
        let lists = &self.mm().lruvec(zone).lists;
        match lru {
            LRU_ACTIVE_FILE => {
                if lists[LRU_ACTIVE_FILE].len > lists[LRU_INACTIVE_FILE].len {
                    self.shrink_active_list(zone, lru, n, sc);
                }
            }
            LRU_ACTIVE_ANON => {
                if self.mm().nr_swap_pages() > 0 && z.inactive_anon_is_low() {
                    self.shrink_active_list(zone, lru, n, sc);
                }
            }
            _ => self.shrink_inactive_list(zone, lru, n, sc),
        }
    }

    /// `shrink_active_list` (3.0): every page taken goes to the inactive
    /// list (executable file pages, which alone stay active when
    /// referenced, are not modelled); referenced ones (a young PTE) count
    /// as rotated, which steers `get_scan_count` away from that kind.
    fn shrink_active_list(
        &mut self,
        zone: usize,
        lru: usize,
        nr_to_scan: u64,
        sc: &mut ScanControl,
    ) {
        let cpu = self.task(sc.tid).cpu;
        self.mm_mut().lru_add_drain(cpu);
        let (mut moved, mut rotated) = (0u64, 0u64);
        for _ in 0..nr_to_scan {
            let pfn = self.mm().lruvec(zone).lists[lru].tail;
            if pfn == NIL {
                break;
            }
            self.mm_mut().lru_unlink(pfn);
            // page_referenced: test and clear the accessed bit.
            if self.mm_mut().test_and_clear_young(pfn) {
                rotated += 1;
            }
            self.mm_mut().pages_mut()[pfn as usize].flags &= !flags::ACTIVE;
            self.mm_mut().lru_link_head(pfn, lru - 1);
            moved += 1;
        }
        self.charge_sys(sc.tid, moved * self.cost().scan_page_ns);
        let classzone = scan_classzone(self, zone, sc);
        self.trace(
            sc.tid,
            isolate_event(
                IsolateMode::Active,
                nr_to_scan,
                moved,
                (classzone, 0, LruName::of_index(lru)),
            ),
        );
        let file = (lru == LRU_ACTIVE_FILE) as usize;
        let lv = self.mm_mut().lruvec_mut(zone);
        lv.recent_scanned[file] += moved;
        lv.recent_rotated[file] += rotated;
        self.mm_mut()
            .vmstat_mut()
            .zinc(zone, ZoneEv::PgRefill, moved);
        self.mm_mut().vmstat_mut().inc(Ev::PgDeactivate, moved);
    }
}

impl<T: ReclaimHost + ?Sized> ShrinkZone for T {}
