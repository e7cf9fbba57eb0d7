//! End-to-end checks of the 3.0 model on a small machine: conservation
//! invariants after every event, determinism, and the filesystem
//! differences the mechanisms must produce.

mod common;

use common::{assert_no_violations, scenario, small, three_zone_machine, SMALL_DD_TASK};
use wbsim::mm::MmHost;
use wbsim::scenario::Scenario;
use wbsim::{kernel, simulate, simulate_system, RunOptions};

const FILESYSTEMS: [&str; 4] = ["xfs", "ext4", "btrfs", "fuse-ntfs"];

fn profile() -> kernel::KernelProfile {
    kernel::preset("3.0-vanilla").unwrap()
}

#[test]
fn invariants_hold_after_every_event() {
    for fs in FILESYSTEMS {
        let opts = RunOptions {
            check_every_event: true,
            ..RunOptions::default()
        };
        let r = simulate(&small(fs), &profile(), 3, &opts);
        assert_no_violations(&r, fs);
        assert_eq!(r.outcome, wbsim::system::Outcome::Completed, "{fs}");
    }
}

#[test]
fn invariants_hold_at_the_end_and_all_data_is_accounted() {
    for fs in FILESYSTEMS {
        let (sys, r) = simulate_system(&small(fs), &profile(), 1);
        sys.check_invariants()
            .unwrap_or_else(|e| panic!("{fs}: {e}"));
        let v = |k: &str| r.vmstat[k];
        // Every page dd wrote was dirtied at least once (512 MiB).
        // Every page dd wrote (160 MiB) was dirtied at least once (for
        // fuse-ntfs: the block-device page ntfs-3g wrote).
        let data_pages = 160 * 256;
        assert!(v("nr_dirtied") >= data_pages, "{fs}");
        // Written + still dirty or under writeback covers all data.
        assert!(
            v("nr_written") + v("nr_dirty") + v("nr_writeback") >= data_pages,
            "{fs}"
        );
        assert!(r.elapsed_seconds > 0.0);
    }
}

#[test]
fn same_seed_same_bytes_and_seeds_differ() {
    for fs in ["xfs", "fuse-ntfs"] {
        let sc = small(fs);
        let a =
            serde_json::to_string(&simulate(&sc, &profile(), 5, &RunOptions::default())).unwrap();
        let b =
            serde_json::to_string(&simulate(&sc, &profile(), 5, &RunOptions::default())).unwrap();
        assert_eq!(a, b, "{fs}: same seed must give byte-identical reports");
        let c =
            serde_json::to_string(&simulate(&sc, &profile(), 6, &RunOptions::default())).unwrap();
        assert_ne!(a, c, "{fs}: a different seed must change the run");
    }
}

/// A machine built on a thread that ran a larger one before (its frame
/// arrays reused, `mm::frames`) runs as one built on a fresh thread.
#[test]
fn a_machine_after_a_larger_one_runs_as_on_a_fresh_thread() {
    let run = |sc: &Scenario| {
        serde_json::to_string(&simulate(sc, &profile(), 5, &RunOptions::default())).unwrap()
    };
    let small_machine = small("xfs");
    let first = run(&small_machine);
    let larger = scenario(
        &three_zone_machine(2, 16, 96, 32),
        "xfs",
        SMALL_DD_TASK,
        "larger.toml",
    );
    let larger_report = run(&larger);
    assert_ne!(
        first, larger_report,
        "the larger machine must run differently"
    );
    assert_eq!(run(&small_machine), first);
}

/// `--check` only looks: a checked run reports the same figures, as JSON
/// and as text, as a plain one, plus the summary of its checks.
#[test]
fn a_checked_run_reports_the_same_figures_as_a_plain_one() {
    let sc = small("ext4");
    let plain = simulate(&sc, &profile(), 4, &RunOptions::default());
    assert!(plain.check.is_none());
    let opts = RunOptions {
        check_every_event: true,
        ..RunOptions::default()
    };
    let mut checked = simulate(&sc, &profile(), 4, &opts);
    assert_no_violations(&checked, "ext4");
    let summary = checked.check.take().unwrap();
    assert_eq!(summary.invariants, 18);
    let json = |r: &wbsim::report::RunReport| serde_json::to_string(r).unwrap();
    assert_eq!(json(&plain), json(&checked));
    let text = |r| wbsim::report::format_text(&wbsim::make_report(&sc, &profile(), vec![r]));
    assert_eq!(text(plain), text(checked));
}

/// The full-size zone-dirty-v2 scenario of one filesystem.
fn seed000(fs: &str) -> Scenario {
    let path = format!(
        "{}/../../scenarios/zone-dirty-v2/{fs}.toml",
        env!("CARGO_MANIFEST_DIR")
    );
    wbsim::scenario::load_scenario(std::path::Path::new(&path)).unwrap()
}

/// The mechanisms behind the rows of seed 000 at full size (10 GiB dd,
/// 3765 MiB): btrfs and ext4 refuse every reclaim write and re-dirty the
/// page, so they are met again and again; xfs lets kswapd write and
/// clusters 32 pages, so few dirty pages stay at the LRU tail; the block
/// device under ntfs-3g accepts every reclaim write. btrfs activates its
/// checksum-tree pages; xfs metadata is not on the LRU.
#[test]
fn filesystems_answer_reclaim_differently() {
    let run = |fs| {
        let (sys, r) = simulate_system(&seed000(fs), &profile(), 1);
        sys.check_invariants()
            .unwrap_or_else(|e| panic!("{fs}: {e}"));
        r
    };
    let (xfs, ext4, btrfs, fuse) = (run("xfs"), run("ext4"), run("btrfs"), run("fuse-ntfs"));
    let data_pages = 10 << 18; // 10 GiB in pages
    for (name, r) in [("ext4", &ext4), ("btrfs", &btrfs)] {
        let writes = r.vmstat["nr_vmscan_write"];
        assert!(
            writes > 20 * xfs.vmstat["nr_vmscan_write"],
            "{name}: {writes}"
        );
        // Each refused call re-dirtied its page: counted in nr_dirtied.
        assert!(r.vmstat["nr_dirtied"] >= data_pages + writes, "{name}");
    }
    assert!(fuse.vmstat["nr_vmscan_write"] > xfs.vmstat["nr_vmscan_write"]);
    // Accepted reclaim writes do not re-dirty: only ntfs-3g's own metadata
    // updates add to the data pages.
    assert!(fuse.vmstat["nr_dirtied"] < data_pages + fuse.vmstat["nr_vmscan_write"]);
    assert!(
        btrfs.vmstat["pgactivate"] > 100,
        "{}",
        btrfs.vmstat["pgactivate"]
    );
    assert_eq!(xfs.vmstat["pgactivate"], 0);
    for r in [&xfs, &ext4, &btrfs, &fuse] {
        // No request exceeds usb-storage's 120 KiB.
        assert!(r.devices[0].max_write_request_kib <= 120.0);
        assert_eq!(r.outcome, wbsim::system::Outcome::Completed);
        assert!(r.elapsed_seconds > 400.0 && r.elapsed_seconds < 2000.0);
    }
}

/// Two dd processes that never wait for IO (64 MiB each into a 1 GiB
/// machine) are CPU-bound: on one CPU they take twice as long as on two.
#[test]
fn tasks_share_a_cpu_and_use_several() {
    let machine =
        |cpus: u32| format!("cpus = {cpus}\n[[machine.zone]]\nname = \"DMA32\"\nsize_mib = 1024");
    let tasks = r#"[[task]]
command = "dd if=/dev/zero of=disk/a bs=32k count=2048"
[[task]]
command = "dd if=/dev/zero of=disk/b bs=32k count=2048""#;
    let on = |cpus| scenario(&machine(cpus), "xfs", tasks, "cpu.toml");
    let one = simulate(&on(1), &profile(), 1, &RunOptions::default());
    let two = simulate(&on(2), &profile(), 1, &RunOptions::default());
    let cpu = one.user_seconds + one.system_seconds;
    assert!(
        (one.elapsed_seconds - cpu).abs() < 0.05 * cpu,
        "one CPU: {one:?}"
    );
    assert!(
        (two.elapsed_seconds - cpu / 2.0).abs() < 0.05 * cpu,
        "two CPUs: {two:?}"
    );
}

/// Per-zone dirty limits (seed 000's series): `__GFP_WRITE` allocations
/// skip zones over their share, so reclaim stops meeting dirty pages:
/// more than ten times fewer reclaim writes. (fuse-ntfs on vanilla gives
/// ~3 K since the buffer_head slab keeps its pages in the Normal zone,
/// ~10 K before; btrfs ~240 K.)
#[test]
fn per_zone_dirty_limits_stop_reclaim_writes() {
    let per_zone = kernel::preset("3.0+per-zone-dirty").unwrap();
    for fs in ["btrfs", "fuse-ntfs"] {
        let sc = seed000(fs);
        let vanilla = simulate(&sc, &profile(), 1, &RunOptions::default());
        let patched = simulate(&sc, &per_zone, 1, &RunOptions::default());
        let (v, p) = (
            vanilla.vmstat["nr_vmscan_write"],
            patched.vmstat["nr_vmscan_write"],
        );
        assert!(v > 1_000 && v > 10 * p, "{fs}: vanilla {v}, per-zone {p}");
        assert!(p < 1_000, "{fs} per-zone: {p}");
    }
}

/// Per-CPU page lists (`per_cpu_pages`): on zones of 64 MiB and more the
/// lists hold pages the watermarks do not see. Conservation holds after
/// every event, reclaim leaves pages on the lists, and no list ever ends
/// above its `high` mark.
#[test]
fn per_cpu_lists_hold_freed_pages_within_their_high_mark() {
    let task = r#"[[task]]
command = "dd if=/dev/zero of=disk/f bs=32k count=8192""#;
    let sc = scenario(&three_zone_machine(2, 16, 96, 64), "xfs", task, "pcp.toml");
    let opts = RunOptions {
        check_every_event: true,
        ..RunOptions::default()
    };
    let r = simulate(&sc, &profile(), 2, &opts);
    assert_no_violations(&r, "pcp");
    assert_eq!(r.outcome, wbsim::system::Outcome::Completed);
    let (sys, r) = simulate_system(&sc, &profile(), 2);
    assert!(r.vmstat["pgsteal"] > 0, "reclaim must run");
    let dma32 = sys.mm().zone(1);
    // 96 MiB: 24576 / 1024 = 24, / 4 = 6, rounddown_pow_of_two(9) - 1 = 7.
    assert_eq!((dma32.pcp_high, dma32.pcp_batch), (42, 7));
    for z in sys.mm().zones() {
        for list in &z.pcp {
            assert!(list.count() <= z.pcp_high, "{}: {}", z.name, list.count());
        }
    }
    assert!(
        sys.mm().nr_pcp_pages() > 0,
        "freed pages wait on per-CPU lists"
    );
}

#[test]
fn an_event_budget_stops_the_run_at_that_many_events() {
    let opts = RunOptions {
        max_events: Some(1_000),
        ..RunOptions::default()
    };
    let r = simulate(&small("xfs"), &profile(), 1, &opts);
    assert_eq!(r.outcome, wbsim::system::Outcome::EventBudget);
    assert_eq!(r.sim_events, 1_000);
}
