//! Mel Gorman's "Reduce filesystem writeback from page reclaim (again)"
//! (RFC, Jul 2011, seed 004) as five stacked profile switches: each preset
//! must show its own counter and leave the earlier ones' behaviour intact.

mod common;

use common::{assert_no_violations, dirty_heavy};
use wbsim::mm::page::Holder;
use wbsim::mm::MmHost;
use wbsim::report::RunReport;
use wbsim::{kernel, simulate_system};

const PRESETS: [&str; 6] = [
    "3.0-rc6",
    "3.0-rc6+reclaim-1",
    "3.0-rc6+reclaim-1-2",
    "3.0-rc6+reclaim-1-3",
    "3.0-rc6+reclaim-1-4",
    "3.0-rc6+reclaim-1-5",
];

fn run_all() -> Vec<(RunReport, u64)> {
    let sc = dirty_heavy();
    PRESETS
        .iter()
        .map(|name| {
            let (sys, r) = simulate_system(&sc, &kernel::preset(name).unwrap(), 1);
            sys.check_invariants()
                .unwrap_or_else(|e| panic!("{name}: {e}"));
            let orphaned = sys
                .mm()
                .pages()
                .iter()
                .filter(|p| p.holder == Holder::Orphaned)
                .count() as u64;
            (r, orphaned)
        })
        .collect()
}

#[test]
fn each_patch_shows_its_counter() {
    let runs = run_all();
    let v = |i: usize, k: &str| runs[i].0.vmstat[k];
    // 3.0-rc6: none of the RFC counters move.
    for k in [
        "nr_vmscan_write_skip",
        "nr_vmscan_throttled",
        "nr_vmscan_invalidate",
    ] {
        assert_eq!(v(0, k), 0, "{k}");
    }
    // Patch 1: direct reclaim skips the dirty file pages it meets.
    assert!(v(1, "nr_vmscan_write_skip") > 0);
    assert!(v(1, "pgscan_direct") > 0);
    // Patch 2: kswapd skips them too at priorities 12–10.
    assert!(v(2, "nr_vmscan_write_skip") > v(1, "nr_vmscan_write_skip"));
    // Patch 3: the same skips, and batches that were mostly dirty throttle.
    assert_eq!(v(3, "nr_vmscan_write_skip"), v(2, "nr_vmscan_write_skip"));
    assert!(v(3, "nr_vmscan_throttled") > 0);
    for (i, name) in PRESETS.iter().enumerate().take(3) {
        assert_eq!(v(i, "nr_vmscan_throttled"), 0, "{name}");
    }
    // Patch 4: the skip becomes an invalidation that takes the page off the
    // LRU for good; each such page is met once, so there are fewer of them
    // than patch 3's skips, and exactly that many pages end up orphaned.
    for i in [4, 5] {
        assert_eq!(v(i, "nr_vmscan_write_skip"), 0);
        assert!(v(i, "nr_vmscan_invalidate") > 0);
        assert!(v(i, "nr_vmscan_invalidate") < v(3, "nr_vmscan_write_skip"));
        assert_eq!(v(i, "nr_vmscan_invalidate") as u64, runs[i].1);
    }
    for ((_, orphaned), name) in runs.iter().zip(PRESETS).take(4) {
        assert_eq!(*orphaned, 0, "{name}");
    }
}

/// Orphaned pages (patch 4) and throttled reclaimers (patch 3) keep every
/// conservation invariant, checked after every event.
#[test]
fn invariants_hold_with_orphaned_pages() {
    let opts = wbsim::RunOptions {
        check_every_event: true,
        ..Default::default()
    };
    let profile = kernel::preset("3.0-rc6+reclaim-1-5").unwrap();
    let r = wbsim::simulate(&dirty_heavy(), &profile, 2, &opts);
    assert_no_violations(&r, "3.0-rc6+reclaim-1-5");
    assert_eq!(r.outcome, wbsim::system::Outcome::Completed);
    assert!(r.vmstat["nr_vmscan_invalidate"] > 0);
}
