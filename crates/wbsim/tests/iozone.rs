//! IOzone on two disks end to end: every test reports, runs are
//! deterministic, tasks start after one another, and the read path reads
//! evicted pages back with readahead.

use wbsim::block::BlockHost;
use wbsim::kernel::preset;
use wbsim::mm::MmHost;
use wbsim::scenario::parse_scenario;
use wbsim::sched::HasCore;
use wbsim::writeback::WritebackHost;

fn scenario(mib: u64, tasks: &str) -> String {
    format!(
        r#"
kernel = "2.6.24"
[machine]
cpus = 2
[[machine.zone]]
name = "DMA32"
size_mib = {mib}
[[device]]
name = "sda"
model = "disk"
capacity_gib = 16
seq_write_mib_per_s = 70.0
max_request_kib = 512
command_overhead_us = 100.0
small_write_penalty_us = 8000.0
[[device]]
name = "sdb"
model = "disk"
capacity_gib = 16
seq_write_mib_per_s = 70.0
max_request_kib = 512
command_overhead_us = 100.0
small_write_penalty_us = 8000.0
[[fs]]
type = "xfs"
device = "sda"
mount = "a"
[[fs]]
type = "xfs"
device = "sdb"
mount = "b"
{tasks}
"#
    )
}

const TWO_RUNS: &str = r#"
[[task]]
name = "history"
command = "dd if=/dev/zero of=a/f bs=1M count=64 conv=fsync"
[[task]]
name = "first"
after = "history"
command = "iozone -B -i 0 -i 2 -r 4k -s 32M -f b/iozone.tmp"
[[task]]
name = "second"
after = "first"
command = "iozone -B -i 0 -i 2 -r 4k -s 32M -f b/iozone.tmp"
"#;

#[test]
fn two_runs_after_a_history_report_every_test_deterministically() {
    let sc = parse_scenario(&scenario(512, TWO_RUNS), "t.toml").unwrap();
    let k = preset("2.6.24").unwrap();
    let (sys, r) = wbsim::simulate_system(&sc, &k, 7);
    let names: Vec<(String, &str)> = r
        .iozone
        .iter()
        .map(|x| (x.task.clone(), x.test.name()))
        .collect();
    let want: Vec<(String, &str)> = ["first", "second"]
        .iter()
        .flat_map(|t| ["write", "rewrite", "randread", "randwrite"].map(|n| (t.to_string(), n)))
        .collect();
    assert_eq!(names, want);
    assert!(r.iozone.iter().all(|x| x.kib_per_second > 0));
    // The second run starts only when the first has exited.
    let first = sys.tasks().iter().find(|t| t.name == "first").unwrap();
    let second = sys.tasks().iter().find(|t| t.name == "second").unwrap();
    assert_eq!(Some(second.started_ns), first.exited_ns);
    // Disk B earned a share: its completions are counted.
    let sdb = sys.wb().bdis().iter().find(|b| b.name == "sdb").unwrap();
    assert!(sdb.written_pages > 0);
    let again = wbsim::simulate_system(&sc, &k, 7).1;
    assert_eq!(
        serde_json::to_string(&r).unwrap(),
        serde_json::to_string(&again).unwrap()
    );
}

/// A file larger than memory read back with read(2): page-cache misses
/// go to the disk in readahead windows larger than one page.
#[test]
fn reads_of_evicted_pages_go_to_disk_with_readahead() {
    let tasks = r#"
[[task]]
command = "iozone -i 0 -i 1 -r 64k -s 96M -f b/big"
"#;
    let sc = parse_scenario(&scenario(64, tasks), "r.toml").unwrap();
    let (sys, r) = wbsim::simulate_system(&sc, &preset("2.6.24").unwrap(), 1);
    let read = r.iozone.iter().find(|x| x.test.name() == "read").unwrap();
    assert!(read.kib_per_second > 0);
    let sdb = &sys.block().device(1).stats;
    assert!(sdb.read_bytes > 0, "{sdb:?}");
    assert!(
        sdb.read_bytes / sdb.read_requests.max(1) > 4096,
        "reads are one page each: {sdb:?}"
    );
}

/// Refault detection (3.15+, on in 6.1): the read and the reread of a
/// file half again as large as memory read back pages reclaim evicted,
/// each a refault (`workingset_refault_file`), too far back to be
/// activated (`workingset_activate_file` 0: the distance is about the
/// file, the active list a few pages). 2.6.24 has no such counters.
#[test]
fn reading_back_evicted_pages_counts_refaults_from_3_15() {
    let tasks = r#"
[[task]]
command = "iozone -i 0 -i 1 -r 64k -s 96M -f b/big"
"#;
    let sc = parse_scenario(&scenario(64, tasks), "r.toml").unwrap();
    let (_, r) = wbsim::simulate_system(&sc, &preset("6.1").unwrap(), 1);
    let file_pages = 96 * 256;
    let refaults = r.vmstat["workingset_refault_file"];
    assert!(
        refaults > file_pages && refaults <= 2 * file_pages,
        "{refaults}"
    );
    assert_eq!(r.vmstat["workingset_activate_file"], 0);
    // 5.8+ names: every page reclaim took was a file page (no swap).
    let v = |k: &str| r.vmstat[k];
    assert_eq!(v("pgscan_file"), v("pgscan_kswapd") + v("pgscan_direct"));
    assert_eq!(v("pgsteal_file"), v("pgsteal_kswapd") + v("pgsteal_direct"));
    assert_eq!((v("pgscan_anon"), v("pgsteal_anon")), (0, 0));
    assert!(v("pgsteal_file") > file_pages);
    let (_, old) = wbsim::simulate_system(&sc, &preset("2.6.24").unwrap(), 1);
    assert!(!old.vmstat.contains_key("workingset_refault_file"));
}

#[test]
fn after_must_name_an_earlier_task() {
    let tasks = r#"
[[task]]
name = "x"
after = "y"
command = "iozone -B -i 0 -r 4k -s 1M -f b/f"
"#;
    let e = parse_scenario(&scenario(256, tasks), "bad.toml")
        .unwrap_err()
        .to_string();
    assert!(e.contains("bad.toml") && e.contains("after"), "{e}");
    assert!(e.contains("not an earlier task"), "{e}");
}

#[test]
fn bad_iozone_lines_are_clear_errors() {
    for (cmd, want) in [
        ("iozone -B -i 14 -r 4k -s 1M -f b/f", "unknown test number"),
        ("iozone -B -i 0 -r 2m -s 1M -f b/f", "larger than the file"),
    ] {
        let tasks = format!("[[task]]\ncommand = \"{cmd}\"\n");
        let e = parse_scenario(&scenario(256, &tasks), "bad.toml")
            .unwrap_err()
            .to_string();
        assert!(e.contains(want) && e.contains("command"), "{e}");
    }
}

/// IOzone (3.222 to 3.469) msyncs a `-B` file after every pass, so the
/// random-write pass starts clean and dirties only the distinct pages it
/// draws: `lrand48() % numrecs` with replacement visits about 1 - 1/e of
/// the records. Nothing else writes, so nr_dirtied counts them.
#[test]
fn mmap_random_write_dirties_the_distinct_records_it_draws() {
    let tasks = r#"
[[task]]
name = "iozone"
command = "iozone -B -i 0 -i 2 -r 4k -s 32M -f b/iozone.tmp -w"
"#;
    let sc = parse_scenario(&scenario(512, tasks), "t.toml").unwrap();
    let (sys, r) = wbsim::simulate_system(&sc, &preset("2.6.24").unwrap(), 3);
    // Every -B pass ends clean (the file is kept with -w).
    assert_eq!(sys.mm().gauges().nr_dirty, 0);
    let pages = 32 * 256;
    // write + rewrite dirty every page; randwrite its distinct draws.
    let random = r.vmstat["nr_dirtied"] - 2 * pages;
    let fraction = random as f64 / pages as f64;
    println!("random write dirtied {random} of {pages} pages ({fraction:.3})");
    assert!((0.60..0.665).contains(&fraction), "{fraction}");
}
