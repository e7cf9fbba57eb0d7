//! Anonymous memory and swap, fs_mark and the mapped-file writer end to
//! end on small machines, with every invariant checked after every event.

mod common;

use wbsim::fs::FsHost;
use wbsim::scenario::Scenario;
use wbsim::{kernel, simulate, RunOptions};

const MACHINE_64M: &str = r#"cpus = 1
total_mib = 64
[[machine.zone]]
name = "DMA"
size_mib = 15
[[machine.zone]]
name = "DMA32"
size_mib = 49"#;

const SWAP: &str = "[swap]\ndevice = \"sdb\"\nsize_mib = 256\n";

fn with_tasks(tasks: &str, name: &str) -> Scenario {
    common::scenario(MACHINE_64M, "xfs", tasks, name)
}

fn run_checked(sc: &Scenario, kernel_name: &str) -> wbsim::report::RunReport {
    let opts = RunOptions {
        check_every_event: true,
        series_interval_ns: None,
        ..Default::default()
    };
    let r = simulate(sc, &kernel::preset(kernel_name).unwrap(), 1, &opts);
    common::assert_no_violations(&r, &sc.name);
    r
}

fn v(r: &wbsim::report::RunReport, k: &str) -> i64 {
    r.vmstat.get(k).copied().unwrap_or(0)
}

#[test]
fn anonymous_memory_larger_than_ram_swaps_out_and_back_in() {
    let tasks = format!(
        "{SWAP}[[task]]\ncommand = \"memtouch -s 80M -H 60M -r 5000 -w 10\"\n\
         [[task]]\ncommand = \"dd if=/dev/zero of=disk/f bs=1M count=96\""
    );
    let r = run_checked(&with_tasks(&tasks, "swap.toml"), "3.0-rc6");
    let (out, inn, maj) = (v(&r, "pswpout"), v(&r, "pswpin"), v(&r, "pgmajfault"));
    assert!(out > 1000, "pswpout {out}");
    assert!(maj > 0 && inn >= maj, "pswpin {inn} pgmajfault {maj}");
    // Readahead reads at most 2^page_cluster slots per major fault.
    assert!(inn <= 8 * maj, "pswpin {inn} pgmajfault {maj}");
    assert_eq!(v(&r, "pgpgin"), 4 * inn, "pgpgin is in KiB");
    // Every swap write is a reclaim write, traced as anon.
    let writes = r.ftrace.kswapd_writes.anon_async + r.ftrace.direct_writes.anon_async;
    assert_eq!(writes as i64, out);
    assert!(v(&r, "nr_vmscan_write") >= out);
}

#[test]
fn without_swap_anonymous_pages_stay_and_file_pages_are_reclaimed() {
    let tasks = "[[task]]\ncommand = \"memtouch -s 24M -H 8M -r 2000 -w 10\"\n\
                 [[task]]\ncommand = \"dd if=/dev/zero of=disk/f bs=1M count=128\"";
    let r = run_checked(&with_tasks(tasks, "noswap.toml"), "3.0-rc6");
    assert_eq!(v(&r, "pswpout"), 0);
    assert_eq!(v(&r, "pswpin"), 0);
    assert!(v(&r, "pgsteal") > 10_000, "file pages were reclaimed");
}

#[test]
fn fs_mark_reports_one_line_per_loop_and_keeps_its_files() {
    let tasks =
        "[[task]]\ncommand = \"fs_mark -d disk/fm -D 4 -N 10 -n 20 -L 3 -t 1 -S0 -s 1048576\"";
    let r = run_checked(&with_tasks(tasks, "fsmark.toml"), "3.0-rc6");
    assert_eq!(r.fsmark.len(), 3);
    for l in &r.fsmark {
        assert!(l.files_per_second > 0.0 && l.overhead_us > 0.0, "{l:?}");
    }
    // 60 files of 1 MiB, never deleted: every page dirtied once.
    assert_eq!(v(&r, "nr_dirtied"), 60 * 256);
    // The loop time bounds the rate: 20 files can't take less than their
    // data at the device's 20 MiB/s, give or take what the cache absorbs.
    let files_per_s: f64 = r.fsmark.iter().map(|l| l.files_per_second).sum::<f64>() / 3.0;
    assert!(files_per_s < 200.0, "{files_per_s}");
}

/// Files written, closed and reclaimed are never read again: their
/// inodes leave host memory (`mm::inode_table`), the run's figures and
/// invariants (the filesystem's used blocks among them) unchanged.
#[test]
fn closed_files_whose_pages_are_reclaimed_leave_host_memory() {
    use wbsim::mm::MmHost;
    // 64,000 one-page files through a 64 MiB machine (16,384 frames).
    let tasks =
        "[[task]]\ncommand = \"fs_mark -d disk/fm -D 4 -N 10 -n 8000 -L 8 -t 1 -S0 -s 4096\"";
    let sc = with_tasks(tasks, "fsmark-many.toml");
    let checked = run_checked(&sc, "3.0-rc6");
    let (sys, plain) = wbsim::simulate_system(&sc, &kernel::preset("3.0-rc6").unwrap(), 1);
    assert_eq!(checked.vmstat, plain.vmstat);
    let inodes = sys.mm().inodes();
    assert!(inodes.len() > 64_000, "{} inodes", inodes.len());
    assert!(
        inodes.nr_live() < 16_384 && inodes.nr_live() < inodes.len() / 4,
        "{} of {} inodes held: more than there are frames",
        inodes.nr_live(),
        inodes.len()
    );
}

#[test]
fn two_fs_mark_threads_sum_their_rates() {
    let one = "[[task]]\ncommand = \"fs_mark -d disk/a -n 10 -L 2 -S0 -s 65536\"";
    let two = "[[task]]\ncommand = \"fs_mark -d disk/a -d disk/b -n 10 -L 2 -S0 -s 65536\"";
    let r1 = run_checked(&with_tasks(one, "one.toml"), "3.0-rc6");
    let r2 = run_checked(&with_tasks(two, "two.toml"), "3.0-rc6");
    assert_eq!((r1.fsmark.len(), r2.fsmark.len()), (2, 2));
    assert_eq!(v(&r2, "nr_dirtied"), 2 * v(&r1, "nr_dirtied"));
    // Small files fit in the cache. The two threads share one CPU, but a
    // loop of ten 64 KiB files is shorter than a CFS slice (3 ms), so each
    // thread runs its loop without being preempted, measures one thread's
    // rate, and fs_mark's sum over threads is about twice that.
    let (a, b) = (r1.fsmark[1].files_per_second, r2.fsmark[1].files_per_second);
    assert!(b > 1.5 * a && b < 2.5 * a, "one {a} two {b}");
}

#[test]
fn mapped_writes_dirty_pages_through_faults() {
    let tasks = "[[task]]\ncommand = \"mapwrite -s 96M disk/map\"";
    let r = run_checked(&with_tasks(tasks, "map.toml"), "3.0-rc6");
    assert_eq!(v(&r, "nr_dirtied"), 96 * 256);
    assert!(v(&r, "pgfault") >= 96 * 256);
    // The mapping is larger than memory: reclaim met mapped pages.
    assert!(v(&r, "pgsteal") > 0);
}

#[test]
fn same_seed_same_figures_with_swap_and_fs_mark() {
    let tasks = format!(
        "{SWAP}[[task]]\ncommand = \"memtouch -s 40M -H 30M -r 3000 -w 20\"\n\
         [[task]]\ncommand = \"fs_mark -d disk/fm -n 20 -L 2 -S0 -s 1048576\""
    );
    let sc = with_tasks(&tasks, "det.toml");
    let p = kernel::preset("3.0-rc6+reclaim-1-5").unwrap();
    let a = serde_json::to_string(&simulate(&sc, &p, 7, &RunOptions::default())).unwrap();
    let b = serde_json::to_string(&simulate(&sc, &p, 7, &RunOptions::default())).unwrap();
    assert_eq!(a, b);
}

#[test]
fn on_one_cpu_a_woken_kswapd_preempts_the_writer_and_does_most_reclaim() {
    // CFS places the woken kswapd half a latency period behind the writer,
    // so it runs at the end of the writer's current step and keeps the free
    // pages above the minimum: the writer seldom reclaims for itself. (A
    // 512 MiB machine: on a tiny one kswapd soon drops below priority 10
    // and naps in congestion_wait, and the writer must reclaim.)
    let machine = "cpus = 1\ntotal_mib = 512\n[[machine.zone]]\nname = \"DMA\"\nsize_mib = 16\n\
                   [[machine.zone]]\nname = \"DMA32\"\nsize_mib = 496";
    let tasks = "[[task]]\ncommand = \"dd if=/dev/zero of=disk/f bs=1M count=1024\"";
    let mut sc = common::scenario(machine, "xfs", tasks, "dd.toml");
    sc.sysctl.dirty_ratio = 10;
    let opts = RunOptions {
        check_every_event: false,
        series_interval_ns: None,
        ..Default::default()
    };
    let r = simulate(&sc, &kernel::preset("3.0-vanilla").unwrap(), 1, &opts);
    let (kswapd, direct) = (v(&r, "pgscan_kswapd"), v(&r, "pgscan_direct"));
    assert!(
        kswapd > 100_000,
        "reclaim ran: kswapd {kswapd} direct {direct}"
    );
    assert!(direct * 10 < kswapd, "kswapd {kswapd} direct {direct}");
}

/// `dd conv=fsync` on fuse-ntfs flushed the FUSE file's own pages, of which
/// there are none (they are written through to ntfs-3g): the fsync was a
/// no-op. ntfs-3g's fsync syncs the whole volume, so the block device's
/// dirty pages are written and waited for before dd exits.
#[test]
fn dd_conv_fsync_on_fuse_ntfs_syncs_the_volume() {
    let run = |conv: &str| {
        let tasks =
            format!("[[task]]\ncommand = \"dd if=/dev/zero of=disk/f bs=1M count=8{conv}\"");
        let sc = common::scenario(MACHINE_64M, "fuse-ntfs", &tasks, "fuse.toml");
        run_checked(&sc, "3.0-vanilla")
    };
    let (plain, synced) = (run(""), run(" conv=fsync"));
    // 8 MiB of data: 2048 pages written by the end only with the fsync,
    // which also takes the stick's time (20 MiB/s: 0.4 s at least).
    assert!(
        v(&synced, "nr_written") >= 2048,
        "{}",
        v(&synced, "nr_written")
    );
    assert!(
        v(&plain, "nr_written") < 2048,
        "{}",
        v(&plain, "nr_written")
    );
    assert!(synced.elapsed_seconds > 0.4, "{}", synced.elapsed_seconds);
    assert!(synced.elapsed_seconds > plain.elapsed_seconds + 0.2);
}

/// `iozone -i 2` built its whole random order (one entry per record) before
/// the run: a 16 TiB file took 16 GiB and minutes up front. The records are
/// drawn as the pass runs now, so an event budget stops the run at once,
/// on the largest file a frame's page index allows (1 TiB at 4 KiB).
#[test]
fn iozone_on_the_largest_file_prepares_nothing_up_front() {
    let tasks = "[[task]]\ncommand = \"iozone -i 0 -i 2 -r 4k -s 1073741824k -f disk/io\"";
    let sc = with_tasks(tasks, "io.toml");
    let opts = RunOptions {
        max_events: Some(1_000),
        series_interval_ns: None,
        ..Default::default()
    };
    let started = std::time::Instant::now();
    let r = simulate(&sc, &kernel::preset("3.0-rc6").unwrap(), 1, &opts);
    assert_eq!(r.outcome, wbsim::system::Outcome::EventBudget);
    assert!(started.elapsed().as_secs() < 30, "{:?}", started.elapsed());
}

/// `with_tasks` on a 1 GiB stick with the filesystem `fs`, a time limit
/// of 600 s.
fn on_small_stick(fs: &str, tasks: &str, name: &str) -> Scenario {
    let mut sc = common::scenario(MACHINE_64M, fs, tasks, name);
    sc.devices[0].capacity_gib = 1;
    sc.run.time_limit_s = 600;
    sc
}

/// Run `sc` with every invariant checked after every event, its first
/// filesystem cut to `fs_mib` (as a partition of that size would be;
/// scenario files only give whole-GiB devices).
fn run_checked_on_fs_of(
    sc: &Scenario,
    kernel_name: &str,
    fs_mib: u64,
) -> (wbsim::system::System, wbsim::report::RunReport) {
    let mut sys = wbsim::system::build_system(sc, &kernel::preset(kernel_name).unwrap(), 1);
    sys.fs_mut().get_mut(0).capacity_blocks = fs_mib * 256;
    sys.set_check_every_event(true);
    let outcome = sys.run();
    sys.check_invariants().unwrap();
    let r = wbsim::report::run_report(&sys, 1, outcome);
    (sys, r)
}

#[test]
fn dd_of_2_gib_to_a_1_gib_device_fails_with_enospc() {
    let task = "[[task]]\ncommand = \"dd if=/dev/zero of=disk/f bs=1M count=2048\"";
    let sc = on_small_stick("xfs", task, "full.toml");
    let (sys, r) = wbsim::simulate_system(&sc, &kernel::preset("3.0-vanilla").unwrap(), 1);
    assert_eq!(r.outcome, wbsim::system::Outcome::Completed);
    assert!(r.elapsed_seconds < 120.0, "{}", r.elapsed_seconds);
    let t = &r.tasks[0];
    assert_eq!(t.exit_status, 1);
    assert!(
        t.message.starts_with(
            "dd: error writing 'disk/f': No space left on device\n\
             1025+0 records in\n1024+0 records out\n\
             1073741824 bytes (1.1 GB) copied, "
        ),
        "{}",
        t.message
    );
    assert!(t.message.ends_with(" MB/s"), "{}", t.message);
    let fs = &sys.fs().get(0);
    assert_eq!(fs.capacity_blocks, 1 << 18);
    assert_eq!(fs.used_blocks, fs.capacity_blocks);
    assert!(v(&r, "nr_dirtied") <= 1 << 18, "{}", v(&r, "nr_dirtied"));
}

#[test]
fn swap_on_the_device_is_not_filesystem_space() {
    let tasks = format!("{SWAP}[[task]]\ncommand = \"dd if=/dev/zero of=disk/f bs=1M count=1\"");
    let sc = on_small_stick("ext4", &tasks, "swap.toml");
    let sys = wbsim::system::build_system(&sc, &kernel::preset("3.0-vanilla").unwrap(), 1);
    assert_eq!(sys.fs().get(0).capacity_blocks, (1024 - 256) * 256);
}

#[test]
fn every_filesystem_fails_the_write_that_finds_it_full() {
    let task = "[[task]]\ncommand = \"dd if=/dev/zero of=disk/f bs=64k count=2048\"";
    for fs in ["xfs", "ext4", "btrfs", "fuse-ntfs"] {
        let (sys, r) =
            run_checked_on_fs_of(&on_small_stick(fs, task, "full.toml"), "3.0-vanilla", 64);
        assert_eq!(r.outcome, wbsim::system::Outcome::Completed, "{fs}");
        assert_eq!(r.tasks[0].exit_status, 1, "{fs}");
        assert!(
            r.tasks[0].message.contains(
                "No space left on device\n1025+0 records in\n1024+0 records out\n\
                 67108864 bytes (67 MB) copied, "
            ),
            "{fs}: {}",
            r.tasks[0].message
        );
        assert_eq!(sys.fs().get(0).used_blocks, 64 * 256, "{fs}");
    }
}

#[test]
fn a_write_fault_on_a_full_filesystem_gets_sigbus() {
    let task = "[[task]]\ncommand = \"mapwrite -s 128M disk/map\"";
    let (_, r) = run_checked_on_fs_of(&on_small_stick("ext4", task, "map.toml"), "3.0-rc6", 64);
    assert_eq!(r.outcome, wbsim::system::Outcome::Completed);
    assert_eq!(
        (r.tasks[0].exit_status, r.tasks[0].message.as_str()),
        (135, "")
    );
    assert_eq!(v(&r, "nr_dirtied"), 64 * 256);
}

#[test]
fn fs_mark_and_iozone_report_enospc_as_the_real_tools_do() {
    let fsmark = "[[task]]\ncommand = \"fs_mark -d disk/fm -d disk/fn -n 20 -L 2 -S0 -s 4194304\"";
    let (_, r) = run_checked_on_fs_of(&on_small_stick("xfs", fsmark, "fm.toml"), "3.0-rc6", 64);
    assert_eq!(r.outcome, wbsim::system::Outcome::Completed);
    assert_eq!(r.tasks.len(), 1);
    assert_eq!(r.tasks[0].exit_status, 1);
    // A 16 KiB write(2) that found room for part of it (how much depends
    // on how the two threads' writes interleave): a short write, which
    // fs_mark reports with the count and the untouched errno.
    let short =
        ["4096", "8192", "12288"].map(|n| format!("fs_mark: write_file write failed: {n} Success"));
    assert!(
        short.contains(&r.tasks[0].message),
        "{}",
        r.tasks[0].message
    );
    let iozone = "[[task]]\ncommand = \"iozone -i 0 -r 4k -s 96m -f disk/f\"";
    let (sys, r) = run_checked_on_fs_of(&on_small_stick("xfs", iozone, "ioz.toml"), "3.0-rc6", 64);
    assert_eq!(r.outcome, wbsim::system::Outcome::Completed);
    assert_eq!(r.tasks[0].exit_status, 0);
    assert_eq!(r.tasks[0].message, "write: No space left on device");
    assert!(r.iozone.is_empty());
    // IOzone's signal_handler unlinked the file: its blocks are free again.
    assert_eq!(sys.fs().get(0).used_blocks, 0);
}

/// A FUSE scenario running `cmd` on `machine`, with a 300 s time limit.
fn fuse(machine: &str, cmd: &str) -> Scenario {
    let mut sc = common::scenario(
        machine,
        "fuse-ntfs",
        &format!("[[task]]\ncommand = \"{cmd}\""),
        "fuse.toml",
    );
    sc.run.time_limit_s = 300;
    sc
}

const FUSE_WRITERS: [&str; 3] = [
    "mapwrite -s 64M disk/map",
    "iozone -i 0 -r 4k -s 64m -f disk/f",
    "iozone -i 0 -r 4k -s 64m -f disk/f -B",
];

#[test]
fn fuse_ntfs_mapped_and_iozone_writes_finish_writeback() {
    let machine = "cpus = 2\ntotal_mib = 256\n[[machine.zone]]\nname = \"DMA\"\nsize_mib = 16\n\
                   [[machine.zone]]\nname = \"DMA32\"\nsize_mib = 240";
    for cmd in FUSE_WRITERS {
        let p = kernel::preset("3.0-vanilla").unwrap();
        let (sys, r) = wbsim::simulate_system(&fuse(machine, cmd), &p, 1);
        assert_eq!(r.outcome, wbsim::system::Outcome::Completed, "{cmd}");
        assert!(r.elapsed_seconds < 30.0, "{cmd}: {}", r.elapsed_seconds);
        assert_eq!(r.tasks[0].exit_status, 0, "{cmd}");
        // The daemon wrote the data through the block device's cache.
        assert!(v(&r, "nr_written") > 0, "{cmd}");
        sys.check_invariants().unwrap();
    }
}

#[test]
fn fuse_ntfs_mapped_writes_on_a_small_machine_pass_every_check() {
    for cmd in FUSE_WRITERS {
        let cmd = cmd.replace("64", "32");
        let r = run_checked(&fuse(MACHINE_64M, &cmd), "3.0-vanilla");
        assert_eq!(r.outcome, wbsim::system::Outcome::Completed, "{cmd}");
        assert_eq!(r.tasks[0].exit_status, 0, "{cmd}");
    }
}

/// `dd ...; sync`: sync starts when dd exits and ends when every page
/// is on disk; each task's `elapsed_seconds` runs from its own start, so
/// the two add up to the run's.
#[test]
fn sync_after_dd_is_timed_from_dd_exit_to_the_last_write() {
    let tasks = "[[task]]\nname = \"dd\"\ncommand = \"dd if=/dev/zero of=disk/f bs=1M count=24\"\n\
                 [[task]]\nname = \"sync\"\ncommand = \"sync\"\nafter = \"dd\"\n";
    let r = run_checked(&with_tasks(tasks, "sync.toml"), "3.2");
    let [dd, sync] = &r.tasks[..] else {
        panic!("{:?}", r.tasks)
    };
    assert_eq!((dd.exit_status, sync.exit_status), (0, 0));
    assert!(dd.elapsed_seconds > 0.0 && sync.elapsed_seconds > 0.0);
    let sum = dd.elapsed_seconds + sync.elapsed_seconds;
    assert!(
        (sum - r.elapsed_seconds).abs() < 1e-9,
        "{sum} {}",
        r.elapsed_seconds
    );
    assert_eq!(v(&r, "nr_dirty"), 0);
    assert_eq!(v(&r, "nr_writeback"), 0);
    assert!(v(&r, "nr_written") >= 24 * 256);
}
