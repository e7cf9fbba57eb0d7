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

impl Machine {
    fn kswapd_phase(&self) -> Phase {
        self.sys.reclaim().kswapd_state().phase
    }

    fn kswapd_priority(&self) -> u32 {
        self.sys.reclaim().kswapd_state().priority
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
    m.sys.wake_all_kswapd(m.tid);
    assert!(!m.sys.reclaim().kswapd_awake());
    assert_eq!(m.kswapd_phase(), Phase::Sleeping);
    assert_eq!(m.sys.mm().vmstat().get(Ev::PageOutRun), 0);

    m.leave_free(150);
    m.sys.wake_all_kswapd(m.tid);
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
    let mut k = m.sys.reclaim().kswapd_state();
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
    let mut k = m.sys.reclaim().kswapd_state();
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
    m.sys.wake_all_kswapd(m.tid);
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
    m.sys.wake_all_kswapd(m.tid);

    assert_eq!(m.kswapd_step(), Step::Continue);
    assert_eq!(m.zone().nr_free(), 182);
    assert_eq!(m.kswapd_phase(), Phase::Balance);
    assert_eq!(m.kswapd_priority(), DEF_PRIORITY);
    assert_eq!(m.sys.mm().vmstat().get(Ev::PageOutRun), 2);

    let nap_end = m.nap_end();
    assert_eq!(m.kswapd_step(), Step::SleepUntil(nap_end));
    assert_eq!(m.zone().nr_free(), 214);
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
    m.sys.wake_all_kswapd(m.tid);
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
    m.sys.wake_all_kswapd(m.tid);
    assert!(!m.sys.reclaim().kswapd_state().may_writepage);
    for (scanned, may_write) in [(32, false), (64, false), (96, true)] {
        assert_eq!(m.kswapd_step(), Step::Continue);
        let k = m.sys.reclaim().kswapd_state();
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
