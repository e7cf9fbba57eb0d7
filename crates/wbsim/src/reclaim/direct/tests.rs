//! Direct reclaim's priority loop and the allocator's slow path on the
//! one-zone test machine (min 128, low 160, high 192 free pages).

use crate::block::BlockHost;
use crate::mm::page::flags;
use crate::mm::page_alloc::PageAlloc;
use crate::mm::page_alloc::{AllocPhase, AllocState};
use crate::mm::vmstat::{Ev, ZoneEv};
use crate::mm::Gfp;
use crate::mm::MmHost;
use crate::reclaim::tests::Machine;
use crate::reclaim::ReclaimHost;
use crate::reclaim::DEF_PRIORITY;
use crate::sched::HasCore;
use crate::sched::Step;
use crate::writeback::account::Account;
use crate::writeback::WritebackHost;

/// The state `__alloc_pages_slowpath` enters `do_try_to_free_pages` with.
fn entering(may_writepage: bool) -> AllocState {
    AllocState {
        phase: AllocPhase::Reclaim,
        priority: DEF_PRIORITY,
        may_writepage,
        ..AllocState::default()
    }
}

/// 3.0-vanilla with 500 dirty file pages all under writeback (nothing
/// reclaim can free) and 100 free pages, below min.
fn under_writeback_with_100_free() -> Machine {
    let mut m = Machine::new("3.0-vanilla");
    for pfn in m.file_pages(m.file, 500, true) {
        m.sys.start_page_writeback(pfn);
    }
    m.leave_free(100);
    m
}

impl Machine {
    /// One priority pass; it must not sleep.
    fn direct_pass(&mut self, st: &mut AllocState) {
        let step = self.sys.direct_reclaim_priority(self.tid, st);
        assert_eq!(step, None, "priority {}", st.priority);
    }

    fn alloc(&mut self) -> Result<u32, Step> {
        self.sys.alloc_page_for_task(self.tid, Gfp::movable(false))
    }
}

/// `do_try_to_free_pages` (3.0): the priority loop goes on from
/// DEF_PRIORITY while fewer than `SWAP_CLUSTER_MAX` pages are reclaimed
/// and ends with the pass that reaches it. A list of 2000 clean pages is
/// due `len >> priority` per pass, all freed: 0, 0, 1, 3, 7, 15, then
/// 1974 >> 6 = 30 at priority 6.
/// After each pass below DEF_PRIORITY - 2 that scanned something it naps in
/// `wait_iff_congested`, which only yields when nothing is congested.
#[test]
fn priority_loop_ends_with_the_pass_that_reclaims_swap_cluster_max() {
    let mut m = Machine::new("3.0-vanilla");
    m.file_pages(m.file, 2000, false);
    let mut st = entering(true);
    let mut reclaimed = vec![];
    while st.phase == AllocPhase::Reclaim {
        m.direct_pass(&mut st);
        reclaimed.push(st.nr_reclaimed);
    }
    assert_eq!(reclaimed, [0, 0, 1, 4, 11, 26, 56]);
    assert_eq!((st.phase, st.priority), (AllocPhase::AfterReclaim, 6));
    assert_eq!(m.zone_stat(ZoneEv::PgStealDirect), 56);
    let naps = m.sys.core().tracer().stats.totals.direct_wait_iff_congested;
    assert_eq!((naps.number, naps.delayed_us), (3, 0));
    m.check();
}

/// `do_try_to_free_pages` (3.0): with nothing reclaimable (every page
/// under writeback) the loop runs all 13 priorities down to 0 and returns
/// with no progress.
#[test]
fn priority_loop_without_progress_ends_after_priority_0() {
    let mut m = Machine::new("3.0-vanilla");
    for pfn in m.file_pages(m.file, 500, true) {
        m.sys.start_page_writeback(pfn);
    }
    let mut st = entering(true);
    let mut passes = 0;
    while st.phase == AllocPhase::Reclaim {
        m.direct_pass(&mut st);
        passes += 1;
    }
    assert_eq!(passes, DEF_PRIORITY + 1);
    assert_eq!((st.priority, st.nr_reclaimed), (0, 0));
    assert!(st.total_scanned >= 500);
    assert_eq!(
        m.zone().lruvec.lists[crate::mm::page::LRU_INACTIVE_FILE].len,
        500
    );
    m.check();
}

/// `__alloc_pages_slowpath` (3.0): a task that misses the low watermark
/// wakes kswapd and retries at min; only when that fails too does it
/// enter direct reclaim, counted once in allocstall (and one
/// mm_vmscan_direct_reclaim_begin) however many priorities it takes.
#[test]
fn allocstall_counts_each_slow_path_entry_into_direct_reclaim() {
    let mut m = Machine::new("3.0-vanilla");
    m.file_pages(m.file, 2000, false);
    m.leave_free(100);
    assert!(m.alloc().is_ok());
    assert!(m.sys.reclaim().kswapd_awake());
    assert_eq!(m.sys.mm().vmstat().get(Ev::AllocStall), 1);
    assert_eq!(m.sys.core().tracer().stats.totals.direct_reclaims, 1);
    assert_eq!(m.zone_stat(ZoneEv::PgStealDirect), 56);
    assert_eq!(m.sys.mm().task_alloc(m.tid).phase, AllocPhase::Start);

    // Below low but above min: the slow path's min retry succeeds.
    assert!(m.zone().nr_free() - 2 <= 160);
    assert!(m.alloc().is_ok());
    assert_eq!(m.sys.mm().vmstat().get(Ev::AllocStall), 1);

    m.leave_free(100);
    assert!(m.alloc().is_ok());
    assert_eq!(m.sys.mm().vmstat().get(Ev::AllocStall), 2);
    assert_eq!(m.sys.core().tracer().stats.totals.direct_reclaims, 2);
    m.check();
}

/// `__alloc_pages_slowpath` (3.x): direct reclaim that reclaimed nothing
/// still reports progress while some zone is not all_unreclaimable, so no
/// OOM: the per-CPU lists are drained, the min watermark tried,
/// `wait_iff_congested(HZ/50)` (nothing congested: it only yields) and
/// then `goto rebalance`: the min watermark and direct reclaim again,
/// with no second wake-up of kswapd and no try at the low watermark.
#[test]
fn reclaim_that_made_no_page_rebalances_without_waking_kswapd_again() {
    let mut m = under_writeback_with_100_free();
    assert_eq!(m.alloc(), Err(Step::Continue));
    let st = m.sys.mm().task_alloc(m.tid);
    assert_eq!((st.phase, st.nr_reclaimed), (AllocPhase::Rebalance, 0));
    assert_eq!(m.sys.mm().vmstat().get(Ev::AllocStall), 1);
    // kswapd, woken by the first slow-path entry, has gone back to sleep.
    m.sys.reclaim_mut().set_kswapd_state(Default::default());
    assert_eq!(m.alloc(), Err(Step::Continue));
    assert_eq!(m.sys.mm().vmstat().get(Ev::AllocStall), 2);
    assert_eq!(m.sys.core().tracer().stats.totals.direct_reclaims, 2);
    assert!(!m.sys.reclaim().kswapd_awake(), "rebalance woke kswapd");
    // Once writeback has ended, the next round reclaims and allocates.
    for pfn in 0..m.sys.mm().pages().len() as u32 {
        if m.has(pfn, flags::WRITEBACK) {
            m.sys.end_page_writeback(pfn);
        }
    }
    assert!(m.alloc().is_ok());
    assert_eq!(m.sys.mm().task_alloc(m.tid).phase, AllocPhase::Start);
    assert_eq!(m.sys.mm().vmstat().get(Ev::AllocStall), 3);
    m.check();
}

/// With every zone all_unreclaimable, reclaim that reclaimed nothing is
/// no progress: the kernel's OOM path, which the model stands in for by
/// waiting HZ/10 and starting the slow path over (`goto restart`).
#[test]
fn no_progress_with_every_zone_all_unreclaimable_sleeps_and_starts_over() {
    let mut m = under_writeback_with_100_free();
    for z in 0..m.sys.mm().nr_zones() {
        m.sys.mm_mut().zone_mut(z).all_unreclaimable = true;
    }
    let until = m.sys.now() + m.sys.jiffies_ns(m.sys.hz() / 10);
    assert_eq!(m.alloc(), Err(Step::SleepUntil(until)));
    let st = m.sys.mm().task_alloc(m.tid);
    assert_eq!((st.phase, st.nr_reclaimed), (AllocPhase::Start, 0));
    assert_eq!(m.sys.mm().vmstat().get(Ev::AllocStall), 1);
    m.check();
}

/// `do_try_to_free_pages` (3.0): once the passes have scanned more than
/// 1.5 × `SWAP_CLUSTER_MAX` pages, the flushers are woken (for all dirty
/// pages in laptop mode) and `may_writepage` is turned on, so that in
/// laptop mode dirty pages are written only from the next pass on.
#[test]
fn may_writepage_turns_on_after_scanning_one_and_a_half_swap_cluster_max() {
    let mut m = Machine::new("3.0-vanilla");
    m.sys.core_mut().sysctl_mut().laptop_mode = true;
    let pfns = m.file_pages(m.bdev, 2500, true);
    let bdi = m.sys.mm().inode(m.bdev).bdi();
    let mut st = entering(false);
    while st.priority > 5 {
        let could_write = st.may_writepage;
        m.direct_pass(&mut st);
        assert_eq!(st.may_writepage, st.total_scanned > 48, "{st:?}");
        assert_eq!(m.sys.wb().bdi(bdi).work.is_empty(), !st.may_writepage);
        if !could_write {
            assert_eq!(m.zone_stat(ZoneEv::NrVmscanWrite), 0);
        }
    }
    // The passes at 11 to 6 scanned 1 + 2 + 4 + 9 + 19 (35 in all: not
    // yet) + 39 pages of the 2500.
    assert_eq!(st.total_scanned, 74);
    assert_eq!(m.sys.wb().bdi(bdi).work[0].nr_pages, 2500);
    assert!(!m.has(pfns[74], flags::WRITEBACK));

    // Priority 5 writes the 78 pages it scans.
    m.direct_pass(&mut st);
    assert_eq!(m.zone_stat(ZoneEv::NrVmscanWrite), 78);
    assert!(m.has(pfns[74], flags::WRITEBACK));
    m.check();
}

/// A direct reclaimer that sleeps inside `shrink_zone` (3.2's
/// `wait_iff_congested` on a batch under writeback) goes on with the rest
/// of that zone's scan at the same priority when it wakes (3.0 – 3.x: the
/// sleep is inside `shrink_inactive_list`). At priority 5 the 2,000-page
/// list is due 62 pages: a first batch of 32, all under writeback (the
/// sleep), then the 30 left, all clean and freed.
#[test]
fn direct_reclaim_goes_on_with_the_zone_it_slept_in() {
    let mut m = Machine::new("3.2");
    m.congested_writeback_tail(2000, 32);
    m.leave_free(100);
    let mut st = AllocState {
        priority: 5,
        ..entering(true)
    };
    let scanned = |m: &Machine| m.zone_stat(ZoneEv::PgScanDirect);

    let step = m.sys.direct_reclaim_priority(m.tid, &mut st);
    assert!(matches!(step, Some(Step::Wait(Some(_)))), "{step:?}");
    assert_eq!((scanned(&m), st.priority), (32, 5));
    assert!(st.resume_scan.is_some());

    m.sys.direct_reclaim_priority(m.tid, &mut st);
    assert_eq!(scanned(&m), 62, "the 30 pages left, at priority 5");
    assert_eq!((st.nr_reclaimed, st.phase), (30, AllocPhase::Reclaim));
    assert_eq!(st.resume_scan, None);
}
