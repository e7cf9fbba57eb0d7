//! kswapd's wake-up, balance and sleep decisions on the one-zone test
//! machine (min 128, low 160, high 192 free pages; a watermark is met when
//! free − 2 is above it).

use super::Phase;
use crate::mm::page::flags;
use crate::mm::vmstat::{Ev, ZoneEv};
use crate::mm::MmHost;
use crate::reclaim::kswapd::Kswapd;
use crate::reclaim::tests::Machine;
use crate::reclaim::ReclaimHost;
use crate::reclaim::DEF_PRIORITY;
use crate::sched::HasCore;
use crate::sched::Step;
use crate::writeback::account::Account;

impl Machine {
    fn kswapd_phase(&self) -> Phase {
        self.sys.reclaim().kswapd_state(0).phase
    }

    fn kswapd_priority(&self) -> u32 {
        self.sys.reclaim().kswapd_state(0).priority
    }

    /// One step of kswapd.
    fn kswapd_step(&mut self) -> Step {
        let tid = self.sys.kswapd_task();
        self.sys.kswapd_step(tid)
    }

    /// The HZ/10 nap of `kswapd_try_to_sleep`, from now.
    fn nap_end(&self) -> u64 {
        self.sys.now() + self.sys.jiffies_ns(self.sys.hz() / 10)
    }
}

/// `wakeup_kswapd` (3.0): an allocation wakes kswapd only when a zone is
/// below its low watermark (not merely below high); the wake starts
/// `balance_pgdat` (pageoutrun).
#[test]
fn allocation_wakes_kswapd_only_below_the_low_watermark() {
    let mut m = Machine::new("3.0-vanilla");
    m.leave_free(170);
    m.sys.wake_all_kswapd(m.tid, crate::mm::Gfp::movable(true));
    assert!(!m.sys.reclaim().kswapd_awake());
    assert_eq!(m.kswapd_phase(), Phase::Sleeping);
    assert_eq!(m.sys.mm().vmstat().get(Ev::PageOutRun), 0);

    m.leave_free(150);
    m.sys.wake_all_kswapd(m.tid, crate::mm::Gfp::movable(true));
    assert!(m.sys.reclaim().kswapd_awake());
    assert_eq!(m.kswapd_phase(), Phase::Balance);
    assert_eq!(m.kswapd_priority(), DEF_PRIORITY);
    assert_eq!(m.sys.mm().vmstat().get(Ev::PageOutRun), 1);
}

/// `balance_pgdat` finds every zone at its high watermark and returns;
/// `kswapd_try_to_sleep` naps HZ/10, then, still balanced, traces
/// mm_vmscan_kswapd_sleep and sleeps until woken.
#[test]
fn balanced_kswapd_naps_then_sleeps() {
    let mut m = Machine::new("3.0-vanilla");
    let mut k = m.sys.reclaim().kswapd_state(0);
    k.phase = Phase::Balance;
    m.sys.reclaim_mut().set_kswapd_state(k);
    let nap_end = m.nap_end();
    assert_eq!(m.kswapd_step(), Step::SleepUntil(nap_end));
    assert_eq!(m.kswapd_phase(), Phase::Napping);
    assert_eq!(m.sys.core().tracer().stats.totals.kswapd_sleeps, 0);

    m.sys.core_mut().advance_to(nap_end);
    assert_eq!(m.kswapd_step(), Step::Wait(None));
    assert_eq!(m.kswapd_phase(), Phase::Sleeping);
    assert!(!m.sys.reclaim().kswapd_awake());
    assert_eq!(m.sys.core().tracer().stats.totals.kswapd_sleeps, 1);
    assert_eq!(m.zone_stat(ZoneEv::PgScanKswapd), 0);
}

/// `kswapd_try_to_sleep` (3.0): a zone below high when the nap ends
/// (`sleeping_prematurely`) counts kswapd_high_wmark_hit_quickly; a
/// wake-up during the nap counts kswapd_low_wmark_hit_quickly. Either way
/// kswapd balances again instead of sleeping.
#[test]
fn premature_sleep_is_counted_and_kswapd_balances_again() {
    let mut m = Machine::new("3.0-vanilla");
    let mut k = m.sys.reclaim().kswapd_state(0);
    k.phase = Phase::Napping;
    m.sys.reclaim_mut().set_kswapd_state(k);
    m.leave_free(180);
    assert_eq!(m.kswapd_step(), Step::Continue);
    assert_eq!(m.kswapd_phase(), Phase::Balance);
    assert_eq!(m.sys.mm().vmstat().get(Ev::KswapdHighWmarkHitQuickly), 1);
    assert_eq!(m.sys.mm().vmstat().get(Ev::PageOutRun), 1);

    k.phase = Phase::Napping;
    m.sys.reclaim_mut().set_kswapd_state(k);
    m.leave_free(150);
    m.sys.wake_all_kswapd(m.tid, crate::mm::Gfp::movable(true));
    assert_eq!(m.kswapd_phase(), Phase::Balance);
    assert_eq!(m.sys.mm().vmstat().get(Ev::KswapdLowWmarkHitQuickly), 1);
    assert_eq!(m.sys.core().tracer().stats.totals.kswapd_sleeps, 0);
}

/// `balance_pgdat` (3.0): a priority pass that reclaims `SWAP_CLUSTER_MAX`
/// pages starts over at DEF_PRIORITY (`loop_again`, pageoutrun) while a
/// zone is below high; the pass that leaves every zone above high ends
/// balancing. From 150 free pages: 182 after one pass, 214 after two.
#[test]
fn kswapd_balances_until_every_zone_is_above_high() {
    let mut m = Machine::new("3.0-vanilla");
    m.file_pages(m.file, 1000, false);
    m.leave_free(150);
    m.sys.wake_all_kswapd(m.tid, crate::mm::Gfp::movable(true));

    assert_eq!(m.kswapd_step(), Step::Continue);
    // The buddy lists (the counter lags by the CPU's unfolded delta).
    assert_eq!(m.zone().nr_free_snapshot(), 182);
    assert_eq!(m.kswapd_phase(), Phase::Balance);
    assert_eq!(m.kswapd_priority(), DEF_PRIORITY);
    assert_eq!(m.sys.mm().vmstat().get(Ev::PageOutRun), 2);

    let nap_end = m.nap_end();
    assert_eq!(m.kswapd_step(), Step::SleepUntil(nap_end));
    assert_eq!(m.zone().nr_free_snapshot(), 214);
    assert_eq!(m.kswapd_phase(), Phase::Napping);
    assert_eq!(m.zone_stat(ZoneEv::PgStealKswapd), 64);
    assert_eq!(m.sys.mm().vmstat().get(Ev::KswapdSteal), 64);
    m.check();
}

/// `balance_pgdat` (3.0): a pass that reclaims fewer than
/// `SWAP_CLUSTER_MAX` pages goes on at the next priority. Under 3.1-mmotm
/// kswapd skips dirty file pages at priorities 12 to 10 and writes them at
/// 9; below DEF_PRIORITY - 2 a pass that scanned anything without meeting
/// the high watermarks (and no zone under min) ends in
/// `congestion_wait(HZ/10)`.
#[test]
fn kswapd_priority_drops_while_passes_reclaim_too_little() {
    let mut m = Machine::new("3.1-mmotm");
    m.file_pages(m.file, 1000, true);
    m.leave_free(150);
    m.sys.wake_all_kswapd(m.tid, crate::mm::Gfp::movable(true));
    for priority in [11, 10, 9] {
        assert_eq!(m.kswapd_step(), Step::Continue);
        assert_eq!(m.kswapd_priority(), priority);
    }
    assert_eq!(m.sys.mm().vmstat().get(Ev::PageOutRun), 1);
    assert_eq!(
        m.sys
            .mm()
            .vmstat()
            .zone_sum(ZoneEv::NrVmscanImmediateReclaim),
        96
    );
    assert_eq!(m.zone_stat(ZoneEv::NrVmscanWrite), 0);

    // Priority 9: written, and a congestion wait before priority 8.
    let step = m.kswapd_step();
    assert!(matches!(step, Step::Wait(Some(_))), "{step:?}");
    assert!(m.zone_stat(ZoneEv::NrVmscanWrite) > 0);
    assert!(m
        .sys
        .core()
        .congestion_waiters()
        .contains(&m.sys.kswapd_task()));
    assert_eq!(m.kswapd_step(), Step::Continue);
    assert_eq!(m.kswapd_priority(), 8);
    m.check();
}

/// `balance_pgdat` (3.0) in laptop mode starts with `may_writepage` off
/// and turns it on once it has scanned more than 2 × `SWAP_CLUSTER_MAX`
/// pages and more than 1.5 × those it reclaimed; dirty pages are written
/// only from the pass after.
#[test]
fn laptop_mode_kswapd_writes_after_scanning_twice_swap_cluster_max() {
    let mut m = Machine::new("3.0-vanilla");
    m.sys.core_mut().sysctl_mut().laptop_mode = true;
    let pfns = m.file_pages(m.bdev, 1000, true);
    m.leave_free(150);
    m.sys.wake_all_kswapd(m.tid, crate::mm::Gfp::movable(true));
    assert!(!m.sys.reclaim().kswapd_state(0).may_writepage);
    for (scanned, may_write) in [(32, false), (64, false), (96, true)] {
        assert_eq!(m.kswapd_step(), Step::Continue);
        let k = m.sys.reclaim().kswapd_state(0);
        assert_eq!((k.total_scanned, k.may_writepage), (scanned, may_write));
        assert_eq!(m.zone_stat(ZoneEv::NrVmscanWrite), 0);
    }
    // Priority 9: 1000 >> 9 = 1 page is due (no forced batch), the one at
    // the tail, and it is written.
    m.kswapd_step();
    assert_eq!(m.zone_stat(ZoneEv::NrVmscanWrite), 1);
    assert!(m.has(pfns[96], flags::WRITEBACK));
    assert!(!m.has(pfns[97], flags::WRITEBACK));
    m.check();
}

/// `balance_pgdat` (3.x) marks a zone all_unreclaimable when it has been
/// scanned six times over (`!zone_reclaimable`) and the slab shrink that
/// followed freed nothing; a shrink that took dentries off their LRU
/// keeps the zone reclaimable.
#[test]
fn all_unreclaimable_needs_a_slab_shrink_that_freed_nothing() {
    for dentries in [0, 1000] {
        let mut m = Machine::new("3.2");
        for pfn in m.file_pages(m.file, 100, true) {
            m.sys.start_page_writeback(pfn);
        }
        for _ in 0..dentries {
            m.sys.mm_mut().icache_release(m.file);
        }
        m.leave_free(150);
        m.sys
            .mm_mut()
            .zone_mut(crate::reclaim::tests::ZONE)
            .pages_scanned = 6 * 100;
        m.sys.wake_all_kswapd(m.tid, crate::mm::Gfp::movable(true));
        m.kswapd_step();
        assert_eq!(
            m.zone().all_unreclaimable,
            dentries == 0,
            "{dentries} dentries"
        );
    }
}

/// A machine of two 16 MiB zones, DMA32 (0) and Normal (1), on `kernel`.
fn two_zones(kernel: &str) -> crate::system::System {
    use crate::scenario::{ZoneConfig, ZoneKind};
    let mut sc = crate::test_support::usb_stick_scenario(kernel, "xfs", 1, &["f"]);
    sc.machine.zones[0].size_mib = 16;
    sc.machine.zones.push(ZoneConfig {
        kind: ZoneKind::Normal,
        size_mib: 16,
        kernel_mib: 0,
        kernel_kib: 0,
        managed_mib: None,
    });
    crate::system::build_system(&sc, &crate::kernel::preset(kernel).unwrap(), 1)
}

/// `n` clean pages of the machine's regular file, indices `from..`, taken
/// from zone `z` onto the inactive file list.
fn clean_file_pages_in(sys: &mut crate::system::System, z: usize, from: u32, n: u32) {
    let file = (0..sys.mm().nr_inodes() as u32)
        .find(|&i| sys.mm().inode(i).kind == crate::mm::inode::MappingKind::Regular)
        .unwrap();
    for idx in from..from + n {
        let pfn = sys.mm_mut().take_free_page(z).expect("a free page");
        let p = &mut sys.mm_mut().pages_mut()[pfn as usize];
        p.flags = flags::UPTODATE;
        p.set_mapping(file, idx);
        sys.mm_mut().inode_mut(file).insert(idx, pfn);
        sys.mm_mut()
            .lru_link_head(pfn, crate::mm::page::LRU_INACTIVE_FILE);
    }
}

/// Take free pages of zone `z` away until `n` are left.
fn leave_free_in(sys: &mut crate::system::System, z: usize, n: u64) {
    while sys.mm().zone(z).nr_free() > n {
        sys.mm_mut().take_free_page(z).expect("a free page");
    }
}

/// `sleeping_prematurely` (3.1 – 3.x) looks at the zones up to the
/// classzone `balance_pgdat` returned, its last `end_zone`: after a
/// balance that ended at DMA32, a Normal zone below its high watermark
/// does not keep kswapd awake; after one that ended at Normal it does.
#[test]
fn sleeping_prematurely_checks_zones_up_to_the_last_end_zone() {
    for (end_zone, sleeps) in [(0, true), (1, false)] {
        let mut sys = two_zones("3.2");
        let low = sys.mm().zone(1).wmark_low;
        leave_free_in(&mut sys, 1, low);
        let mut k = sys.reclaim().kswapd_state(0);
        k.phase = Phase::Napping;
        k.end_zone = end_zone;
        sys.reclaim_mut().set_kswapd_state(k);
        let step = sys.kswapd_step(sys.kswapd_task());
        assert_eq!(step == Step::Wait(None), sleeps, "end_zone {end_zone}");
        let phase = sys.reclaim().kswapd_state(0).phase;
        let expected = if sleeps {
            Phase::Sleeping
        } else {
            Phase::Balance
        };
        assert_eq!(phase, expected, "end_zone {end_zone}");
    }
}

/// `balance_pgdat` (3.x): the search sets `end_zone` to the highest zone
/// below its high watermark; a zone found all_unreclaimable in the pass
/// lowers `end_zone` past itself, so the balance ends (DMA32 is at high)
/// and returns DMA32 as the classzone for kswapd's sleep.
#[test]
fn balance_lowers_end_zone_past_an_all_unreclaimable_zone() {
    let mut sys = two_zones("3.2");
    let low = sys.mm().zone(1).wmark_low;
    leave_free_in(&mut sys, 1, low);
    sys.mm_mut().zone_mut(1).all_unreclaimable = true;
    sys.wake_all_kswapd(0, crate::mm::Gfp::movable(true));
    assert_eq!(sys.reclaim().kswapd_state(0).phase, Phase::Balance);
    let tid = sys.kswapd_task();
    // At DEF_PRIORITY the all_unreclaimable Normal zone is still searched:
    // end_zone = Normal, then lowered to DMA32; DMA32 is balanced.
    assert!(matches!(sys.kswapd_step(tid), Step::SleepUntil(_)));
    let k = sys.reclaim().kswapd_state(0);
    assert_eq!((k.phase, k.end_zone), (Phase::Napping, 0));
    // With 400 clean file pages on Normal's LRU the zone is reclaimable:
    // kswapd reclaims a batch of them and returns Normal as end_zone.
    let mut sys = two_zones("3.2");
    clean_file_pages_in(&mut sys, 1, 0, 400);
    leave_free_in(&mut sys, 1, low);
    sys.wake_all_kswapd(0, crate::mm::Gfp::movable(true));
    assert!(matches!(sys.kswapd_step(tid), Step::SleepUntil(_)));
    let k = sys.reclaim().kswapd_state(0);
    assert_eq!((k.phase, k.end_zone), (Phase::Napping, 1));
    assert!(!sys.mm().zone(1).all_unreclaimable);
}

/// `balance_pgdat` scans over time: a pass that shrinks DMA32 ends its
/// step there (its CPU time runs first) and looks at Normal in the next
/// step, so an allocation in between is seen by Normal's checks.
#[test]
fn a_pass_shrinks_one_zone_per_step() {
    let mut sys = two_zones("3.2");
    clean_file_pages_in(&mut sys, 0, 0, 400);
    clean_file_pages_in(&mut sys, 1, 400, 400);
    for z in [0, 1] {
        let low = sys.mm().zone(z).wmark_low;
        leave_free_in(&mut sys, z, low);
    }
    sys.wake_all_kswapd(0, crate::mm::Gfp::movable(true));
    let tid = sys.kswapd_task();
    let scanned = |sys: &crate::system::System, z: usize| {
        sys.mm().vmstat().zone_stat(z, ZoneEv::PgScanKswapd)
    };
    assert_eq!(sys.kswapd_step(tid), Step::Continue);
    let k = sys.reclaim().kswapd_state(0);
    assert_eq!((k.end_zone, k.pass_zone), (1, Some(1)));
    assert!(scanned(&sys, 0) > 0);
    assert_eq!(scanned(&sys, 1), 0, "Normal waits for the next step");
    sys.kswapd_step(tid);
    assert!(scanned(&sys, 1) > 0);
    assert_eq!(sys.reclaim().kswapd_state(0).pass_zone, None);
}

/// kswapd that sleeps inside `shrink_zone` (3.2's `wait_iff_congested`
/// on a batch under writeback; likewise `get_request_wait`) goes on with
/// the rest of that zone's scan at the same priority when it wakes, as
/// the kernel's task does: the sleep is inside `shrink_inactive_list`.
/// At priority 5 the 2,000-page list is scanned 62 pages: a first batch
/// of 32 (all under writeback: the sleep), then the 30 left.
#[test]
fn kswapd_goes_on_with_the_zone_it_slept_in() {
    let mut m = Machine::new("3.2");
    m.congested_writeback_tail(2000, 32);
    m.leave_free(150);
    m.sys.wake_all_kswapd(m.tid, crate::mm::Gfp::movable(true));
    let mut k = m.sys.reclaim().kswapd_state(0);
    k.priority = 5;
    m.sys.reclaim_mut().set_kswapd_state(k);
    let scanned = |m: &Machine| m.zone_stat(ZoneEv::PgScanKswapd);

    let step = m.kswapd_step();
    assert!(matches!(step, Step::Wait(Some(_))), "{step:?}");
    assert_eq!(scanned(&m), 32);
    let k = m.sys.reclaim().kswapd_state(0);
    assert_eq!((k.priority, k.pass_zone), (5, Some(0)));
    let left = k.resume_scan.expect("the rest of the zone's scan");
    assert_eq!(left[crate::mm::page::LRU_INACTIVE_FILE], 30);

    m.kswapd_step();
    assert_eq!(scanned(&m), 62, "the 30 pages left, at priority 5");
    assert_eq!(m.sys.reclaim().kswapd_state(0).resume_scan, None);
}
