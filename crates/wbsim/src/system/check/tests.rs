//! The checker: its running tally stays exact over whole runs of every
//! workload, and corruptions made between events are found where its doc
//! comment says.

use super::{CheckSummary, Invariant, Snap, Tally, ADD};
use crate::kernel::preset;
use crate::mm::page::{flags, Holder};
use crate::mm::MmHost;
use crate::scenario::{parse_scenario, Scenario};
use crate::sched::HasCore;
use crate::system::{build_system, Outcome, System};

const USB_STICK_DEVICE: &str = include_str!("../../../tests/fixtures/usb-stick-device.toml");

/// A 64 MiB, 2-CPU, three-zone machine whose DMA zone holds 1 MiB of
/// kernel-private pages (never touched by the run), on the test USB stick.
fn scenario(fs: &str, tasks: &str) -> Scenario {
    let text = format!(
        r#"
kernel = "3.0-vanilla"
[machine]
cpus = 2
total_mib = 64
[[machine.zone]]
name = "DMA"
size_mib = 16
kernel_mib = 1
[[machine.zone]]
name = "DMA32"
size_mib = 32
[[machine.zone]]
name = "Normal"
size_mib = 16
{USB_STICK_DEVICE}
[[fs]]
type = "{fs}"
device = "sdb"
mount = "disk"
[sysctl]
dirty_ratio = 40
{tasks}
"#
    );
    parse_scenario(&text, "check.toml").unwrap()
}

const DD: &str = "[[task]]\ncommand = \"dd if=/dev/zero of=disk/f bs=32k count=5120\"";

fn checked_system(sc: &Scenario, kernel: &str) -> System {
    let mut sys = build_system(sc, &preset(kernel).unwrap(), 1);
    sys.check_every_event = true;
    sys
}

/// Run `sys` (checked) to event number `last`, with `hook` run on it after
/// event 2000 and its check.
fn run_to(sys: &mut System, last: u64, hook: fn(&mut System)) -> CheckSummary {
    sys.core.set_max_events(last);
    sys.set_test_hook(2000, hook);
    assert_eq!(sys.run(), Outcome::EventBudget);
    sys.check_summary().unwrap()
}

fn kernel_page(sys: &System) -> usize {
    sys.mm()
        .pages()
        .iter()
        .position(|p| p.holder == Holder::Kernel)
        .unwrap()
}

/// With no full walks, the tally kept from the logged frame writes equals
/// a fresh count of every frame at the end of each run, and no check
/// found anything: every write that matters to the counts is logged.
#[test]
fn the_running_tally_matches_a_fresh_count_after_every_workload() {
    let swap = "[swap]\ndevice = \"sdb\"\nsize_mib = 256\n";
    let runs = [
        ("xfs", DD.to_string(), "3.0-vanilla"),
        ("ext4", DD.to_string(), "3.0-vanilla"),
        ("btrfs", DD.to_string(), "3.0-vanilla"),
        ("fuse-ntfs", DD.to_string(), "3.0-vanilla"),
        // Orphaned pages and throttled reclaim.
        ("xfs", DD.to_string(), "3.0-rc6+reclaim-1-5"),
        (
            "xfs",
            format!(
                "{swap}[[task]]\ncommand = \"memtouch -s 80M -H 60M -r 5000 -w 10\"\n\
                 [[task]]\ncommand = \"dd if=/dev/zero of=disk/f bs=1M count=48\""
            ),
            "3.0-rc6",
        ),
        (
            "xfs",
            "[[task]]\ncommand = \"mapwrite -s 96M disk/map\"".to_string(),
            "3.0-rc6",
        ),
        (
            "ext4",
            "[[task]]\ncommand = \"fs_mark -d disk/fm -D 4 -N 10 -n 20 -L 2 -t 1 -S0 -s 1048576\""
                .to_string(),
            "3.0-rc6",
        ),
    ];
    for (fs, tasks, kernel) in runs {
        let mut sys = checked_system(&scenario(fs, &tasks), kernel);
        sys.start_checking();
        sys.checker.as_mut().unwrap().walk_every = u64::MAX;
        assert_eq!(sys.run_events(), Outcome::Completed, "{fs} {tasks}");
        let c = sys.checker.as_ref().unwrap();
        let mut fresh = Tally::default();
        fresh.reset(sys.mm().nr_zones());
        for pfn in 0..sys.mm().pages().len() {
            fresh.count(Snap::of(sys.mm().pages(), pfn), ADD);
        }
        assert_eq!(c.tally, fresh, "{fs} {tasks}");
        assert!(c
            .snaps
            .iter()
            .enumerate()
            .all(|(pfn, s)| *s == Snap::of(sys.mm().pages(), pfn)));
        let s = &c.summary;
        assert_eq!(
            (s.violations, &s.first_violation),
            (0, &None),
            "{fs} {tasks}"
        );
        assert_eq!(
            s.events_checked,
            sys.core().events_processed(),
            "{fs} {tasks}"
        );
    }
}

#[test]
fn a_counter_corrupted_between_events_is_found_at_the_next_event() {
    let mut sys = checked_system(&scenario("xfs", DD), "3.0-vanilla");
    let s = run_to(&mut sys, 2001, |sys| {
        assert_eq!(sys.check_summary().unwrap().violations, 0);
        sys.mm_mut().gauges_mut().nr_dirty += 1;
    });
    // After event 2001 and at the end-of-run walk.
    assert_eq!(s.violations, 2);
    let first = s.first_violation.unwrap();
    assert!(
        first.contains(" ns (after event 2001): global-dirty-writeback: nr_dirty"),
        "{first}"
    );
}

#[test]
fn a_page_corrupted_between_events_is_found_at_the_next_event() {
    let mut sys = checked_system(&scenario("xfs", DD), "3.0-vanilla");
    let s = run_to(&mut sys, 2001, |sys| {
        assert_eq!(sys.check_summary().unwrap().violations, 0);
        let pfn = kernel_page(sys);
        sys.mm_mut().pages_mut()[pfn].flags |= flags::DIRTY;
    });
    let first = s.first_violation.unwrap();
    let pfn = kernel_page(&sys);
    let what = format!(" ns (after event 2001): dirty-frame-mapped: page {pfn} is dirty");
    assert!(first.contains(&what), "{first}");
    assert!(sys.check_invariants().is_err());
}

/// A write that bypasses the log (here, a test-only unlogged access) is
/// not seen by the per-event checks, only by the next full walk.
#[test]
fn an_unlogged_write_is_found_at_the_next_full_walk() {
    let mut sys = checked_system(&scenario("xfs", DD), "3.0-vanilla");
    sys.start_checking();
    // Walks after events 100, 200, ... 2000, 2100.
    sys.checker.as_mut().unwrap().walk_every = 100;
    let s = run_to(&mut sys, 2150, |sys| {
        assert_eq!(sys.check_summary().unwrap().violations, 0);
        let pfn = kernel_page(sys);
        sys.mm_mut().pages_mut().unlogged_mut(pfn).flags |= flags::WRITEBACK;
    });
    let first = s.first_violation.unwrap();
    assert!(
        first.contains("(after event 2100, full walk): dirty-frame-mapped"),
        "{first}"
    );
    // The walk at 2100, every later event (the counts the walk rebuilt
    // disagree with nr_writeback) and the end-of-run walk.
    assert_eq!(s.violations, 1 + 50 + 1);
    assert!(sys.check_invariants().is_err());
}

/// An anonymous page mapped by its inode but not by its region's page
/// table (the two a touch and reclaim read) is found by a walk.
#[test]
fn an_anonymous_page_missing_from_its_page_table_is_found() {
    let tasks = format!("[[task]]\ncommand = \"memtouch -s 8M -H 8M -r 5000 -w 10\"\n{DD}");
    let mut sys = checked_system(&scenario("xfs", &tasks), "3.0-rc6");
    sys.check_every_event = false;
    sys.core.set_max_events(1000);
    assert_eq!(sys.run(), Outcome::EventBudget);
    assert_eq!(sys.check_invariants(), Ok(()));
    let (pfn, vpn) = sys
        .mm()
        .pages()
        .iter()
        .enumerate()
        .find(|(_, p)| p.has(flags::ANON) && p.has(flags::PTE_MAPPED))
        .map(|(pfn, p)| (pfn, p.index()))
        .unwrap();
    sys.mm_mut().anon_region_mut(0).map(vpn, pfn as u32 + 1);
    let err = sys.check_invariants().unwrap_err();
    let what = format!("frame-in-its-mapping: mapped anonymous page {pfn} is not in its region's page table at {vpn}");
    assert!(err.contains(&what), "{err}");
}

#[test]
fn the_summary_is_one_line() {
    let mut s = CheckSummary {
        events_checked: 1234567,
        invariants: Invariant::ALL.len() as u32,
        violations: 0,
        first_violation: None,
    };
    assert_eq!(
        s.line(),
        "check: 1234567 events checked, 18 invariants, 0 violations"
    );
    s.violations = 1;
    s.first_violation = Some("at 5 ns (after event 1): no-wrap: x".into());
    assert_eq!(
        s.line(),
        "check: 1234567 events checked, 18 invariants, 1 violation; \
         first at 5 ns (after event 1): no-wrap: x"
    );
    let json = serde_json::to_value(&s).unwrap();
    assert_eq!(json["violations"], 1);
}
