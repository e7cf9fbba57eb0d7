//! End-to-end tests of the `wbsim` command: bad input gives one clear
//! message naming file, line and key, a non-zero exit and no panic; the JSON
//! report keeps its contract and is byte-identical for the same seed.

use std::path::PathBuf;
use std::process::{Command, Output};

mod common;

use common::{example, quick};

const BIN: &str = env!("CARGO_BIN_EXE_wbsim");

fn write_temp(dir: &tempfile::TempDir, name: &str, text: &str) -> PathBuf {
    let p = dir.path().join(name);
    std::fs::write(&p, text).unwrap();
    p
}

fn wbsim(args: &[&str]) -> Output {
    Command::new(BIN).args(args).output().unwrap()
}

/// Run on a scenario text and expect a failure with, among its problems
/// (one per line), one that names the file, the line and the key.
fn expect_error(text: &str, line: usize, key: &str, words: &str) {
    let dir = tempfile::tempdir().unwrap();
    let p = write_temp(&dir, "bad.toml", text);
    let out = wbsim(&["run", p.to_str().unwrap()]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        !out.status.success(),
        "expected failure, got success: {err}"
    );
    assert!(!err.contains("panicked"), "panic: {err}");
    assert!(
        err.trim()
            .lines()
            .any(|l| l.contains(&format!("bad.toml:{line}:"))
                && l.contains(&format!(": {key}: "))
                && l.contains(words)),
        "no line with bad.toml:{line}:, key {key} and `{words}` in: {err}"
    );
}

fn line_of(text: &str, needle: &str) -> usize {
    text.lines().position(|l| l.contains(needle)).unwrap() + 1
}

#[test]
fn unknown_key_is_named_with_its_line() {
    let text = example().replace("cpus = 4", "cpus = 4\nmemory_gib = 4");
    expect_error(
        &text,
        line_of(&text, "memory_gib"),
        "machine.memory_gib",
        "allowed keys",
    );
}

#[test]
fn negative_and_zero_sizes_are_rejected() {
    let text = example().replace("size_mib = 504", "size_mib = -504");
    expect_error(
        &text,
        line_of(&text, "-504"),
        "machine.zone[2].size_mib",
        "-504 is out of range; allowed: 1 to 16777216 MiB",
    );
    let text = example().replace("capacity_gib = 16", "capacity_gib = 0");
    expect_error(
        &text,
        line_of(&text, "capacity_gib"),
        "device[0].capacity_gib",
        "0 is out of range; allowed: 1 to 65536 GiB",
    );
}

/// A file with several mistakes reports all of them, one per line, in
/// line order; a kernel preset the file names that does not exist is one.
#[test]
fn every_problem_of_a_file_is_reported() {
    let text = example()
        .replace("cpus = 4", "cpus = 0")
        .replace("capacity_gib = 16", "capacity_gib = 0")
        .replace("kernel = \"3.1-mmotm\"", "kernel = \"2.4\"");
    let dir = tempfile::tempdir().unwrap();
    let p = write_temp(&dir, "bad.toml", &text);
    let out = wbsim(&["run", p.to_str().unwrap()]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success() && !err.contains("panicked"), "{err}");
    let lines: Vec<&str> = err.trim().lines().collect();
    assert_eq!(lines.len(), 3, "{err}");
    let kernel = line_of(&text, "kernel = ");
    assert!(
        lines[0].contains(&format!(
            "bad.toml:{kernel}:1: kernel: unknown kernel preset \"2.4\"; allowed: "
        )) && lines[0].contains("3.0-vanilla"),
        "{err}"
    );
    assert!(
        lines[1].contains(": machine.cpus: 0 is out of range"),
        "{err}"
    );
    assert!(
        lines[2].contains(": device[0].capacity_gib: 0 is out of range"),
        "{err}"
    );
}

#[test]
fn zone_larger_than_memory_is_rejected() {
    let text = example().replace("size_mib = 3246", "size_mib = 4000");
    expect_error(
        &text,
        line_of(&text, "4000"),
        "machine.zone[1].size_mib",
        "total_mib",
    );
}

#[test]
fn malformed_dd_block_size_is_rejected() {
    let text = example().replace("bs=32k", "bs=32q");
    expect_error(&text, line_of(&text, "bs=32q"), "task[0].command", "bs=32q");
}

#[test]
fn missing_file_is_reported() {
    let out = wbsim(&["run", "/nonexistent/zone.toml"]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success());
    assert!(
        err.contains("/nonexistent/zone.toml") && err.contains("cannot read"),
        "{err}"
    );
    assert!(!err.contains("panicked"));
}

#[test]
fn unknown_kernel_preset_lists_the_known_ones() {
    let dir = tempfile::tempdir().unwrap();
    let p = write_temp(&dir, "q.toml", &quick());
    let out = wbsim(&["run", p.to_str().unwrap(), "--kernel", "2.4"]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success());
    assert!(
        err.contains("--kernel") && err.contains("3.0-vanilla"),
        "{err}"
    );
}

#[test]
fn json_contract_and_determinism() {
    let dir = tempfile::tempdir().unwrap();
    let p = write_temp(&dir, "q.toml", &quick());
    let (a, b) = (dir.path().join("a.json"), dir.path().join("b.json"));
    for out in [&a, &b] {
        let o = wbsim(&[
            "run",
            p.to_str().unwrap(),
            "--runs",
            "2",
            "--seed",
            "9",
            "--json",
            out.to_str().unwrap(),
        ]);
        assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
        let text = String::from_utf8_lossy(&o.stdout);
        assert!(
            text.contains("elapsed") && text.contains("nr_vmscan_write"),
            "{text}"
        );
    }
    let (ta, tb) = (std::fs::read(&a).unwrap(), std::fs::read(&b).unwrap());
    assert_eq!(ta, tb, "same seeds must give byte-identical JSON");
    let v: serde_json::Value = serde_json::from_slice(&ta).unwrap();
    let runs = v["runs"].as_array().unwrap();
    assert_eq!(runs.len(), 2);
    assert_eq!(runs[0]["seed"], 9);
    assert_eq!(runs[1]["seed"], 10);
    for r in runs {
        for k in ["elapsed_seconds", "user_seconds", "system_seconds"] {
            assert!(r[k].as_f64().unwrap() > 0.0, "{k}");
        }
        let vm = r["vmstat"].as_object().unwrap();
        for k in [
            "nr_vmscan_write",
            "pgactivate",
            "pgscan_kswapd",
            "pgscan_direct",
            "pgsteal",
            "allocstall",
            "nr_dirty",
            "nr_writeback",
            "nr_dirtied",
            "nr_written",
        ] {
            assert!(vm.contains_key(k), "vmstat lacks {k}");
        }
        assert_eq!(
            vm["nr_dirtied"].as_i64().unwrap(),
            32 * 256,
            "32 MiB dirtied once"
        );
        let d = &r["devices"][0];
        for k in ["write_iops", "write_mb_per_second", "avg_write_request_kib"] {
            assert!(d[k].as_f64().unwrap() > 0.0, "{k}");
        }
        assert!(d["avg_write_request_kib"].as_f64().unwrap() <= 120.0);
    }
}

#[test]
fn failed_json_write_leaves_nothing_behind() {
    let dir = tempfile::tempdir().unwrap();
    let p = write_temp(&dir, "q.toml", &quick());
    let target = dir.path().join("no/such/dir/out.json");
    let o = wbsim(&[
        "run",
        p.to_str().unwrap(),
        "--json",
        target.to_str().unwrap(),
    ]);
    assert!(!o.status.success());
    assert!(String::from_utf8_lossy(&o.stderr).contains("cannot write"));
    assert!(!target.exists());
}

#[test]
fn plot_path_ending_in_png_is_rejected_before_running() {
    let dir = tempfile::tempdir().unwrap();
    let p = write_temp(&dir, "q.toml", &quick());
    let target = dir.path().join("dirty.png");
    let o = wbsim(&[
        "run",
        p.to_str().unwrap(),
        "--plot",
        target.to_str().unwrap(),
    ]);
    assert!(!o.status.success());
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(
        err.contains("--plot") && err.contains("must not end in .png"),
        "{err}"
    );
    // Rejected before simulating: nothing was printed.
    assert!(o.stdout.is_empty());
    assert!(!target.exists());
}

/// `wbsim compare` over the six kernels of seed 004 prints the mmtests
/// sections with the seed's row names in the seed's order.
#[test]
fn compare_prints_the_seed_rows_in_order() {
    let dir = tempfile::tempdir().unwrap();
    let p = write_temp(&dir, "quick.toml", &quick());
    let mut args = vec!["compare", p.to_str().unwrap()];
    for k in [
        "3.0-rc6",
        "3.0-rc6+reclaim-1",
        "3.0-rc6+reclaim-1-2",
        "3.0-rc6+reclaim-1-3",
        "3.0-rc6+reclaim-1-4",
        "3.0-rc6+reclaim-1-5",
    ] {
        args.extend(["--kernel", k]);
    }
    let out = wbsim(&args);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let text = String::from_utf8(out.stdout).unwrap();
    let rows = [
        "MMTests Statistics: duration",
        "User/Sys Time Running Test (seconds)",
        "Total Elapsed Time (seconds)",
        "MMTests Statistics: vmstat",
        "Page Ins",
        "Page Outs",
        "Swap Ins",
        "Swap Outs",
        "Direct pages scanned",
        "Kswapd pages scanned",
        "Kswapd pages reclaimed",
        "Direct pages reclaimed",
        "Kswapd efficiency",
        "Kswapd velocity",
        "Direct efficiency",
        "Direct velocity",
        "Percentage direct scans",
        "Page writes by reclaim",
        "Page writes skipped",
        "Page reclaim invalidate",
        "Page reclaim throttled",
        "Slabs scanned",
        "Direct inode steals",
        "Kswapd inode steals",
        "Kswapd skipped wait",
        "FTrace Reclaim Statistics: vmscan",
        "Direct reclaims",
        "Direct reclaim pages scanned",
        "Direct reclaim pages reclaimed",
        "Direct reclaim write file async I/O",
        "Direct reclaim write anon async I/O",
        "Direct reclaim write file sync I/O",
        "Direct reclaim write anon sync I/O",
        "Wake kswapd requests",
        "Kswapd wakeups",
        "Kswapd pages scanned",
        "Kswapd pages reclaimed",
        "Kswapd reclaim write file async I/O",
        "Kswapd reclaim write anon async I/O",
        "Kswapd reclaim write file sync I/O",
        "Kswapd reclaim write anon sync I/O",
        "Time stalled direct reclaim (seconds)",
        "Time kswapd awake (seconds)",
        "Total pages scanned",
        "Total pages reclaimed",
        "%age total pages scanned/reclaimed",
        "%age total pages scanned/written",
        "%age  file pages scanned/written",
        "Percentage Time Spent Direct Reclaim",
        "Percentage Time kswapd Awake",
        "FTrace Reclaim Statistics: congestion_wait",
        "Direct number congest     waited",
        "Direct time   congest     waited",
        "Direct full   congest     waited",
        "Direct number conditional waited",
        "Direct time   conditional waited",
        "Direct full   conditional waited",
        "KSwapd number congest     waited",
        "KSwapd time   congest     waited",
        "KSwapd full   congest     waited",
        "KSwapd number conditional waited",
        "KSwapd time   conditional waited",
        "KSwapd full   conditional waited",
    ];
    let lines: Vec<&str> = text.lines().collect();
    let mut at = 0;
    for row in rows {
        let found = lines[at..].iter().position(|l| l.starts_with(row));
        let Some(i) = found else {
            panic!("row `{row}` missing or out of order:\n{text}");
        };
        at += i + 1;
        // Data rows carry one value per kernel.
        if !row.contains("Statistics") {
            let values = lines[at - 1][row.len()..].split_whitespace().count();
            assert_eq!(values, 6, "{row}");
        }
    }
    // Compaction is not modelled: no rows for it.
    assert!(!text.contains("Compaction"), "{text}");
    // Fewer than two kernels is an error, not a one-column report.
    let out = wbsim(&["compare", p.to_str().unwrap(), "--kernel", "3.0-rc6"]);
    assert!(!out.status.success());
    assert!(String::from_utf8_lossy(&out.stderr).contains("at least two --kernel"));
}

/// `--trace` needs one run of one kernel; the trace is written atomically.
#[test]
fn trace_is_written_for_a_single_run() {
    let dir = tempfile::tempdir().unwrap();
    // 160 MiB through the 64 MiB machine, so reclaim runs.
    let p = write_temp(
        &dir,
        "quick.toml",
        &quick().replace("count=1024", "count=5120"),
    );
    let t = dir.path().join("trace.txt");
    let out = wbsim(&[
        "run",
        p.to_str().unwrap(),
        "--runs",
        "2",
        "--trace",
        t.to_str().unwrap(),
    ]);
    assert!(!out.status.success());
    assert!(String::from_utf8_lossy(&out.stderr).contains("--trace needs a single run"));
    assert!(!t.exists());
    let out = wbsim(&[
        "run",
        p.to_str().unwrap(),
        "--runs",
        "1",
        "--trace",
        t.to_str().unwrap(),
    ]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let text = std::fs::read_to_string(&t).unwrap();
    assert!(text.starts_with("# tracer: nop"));
    assert!(text.contains(": mm_vmscan_kswapd_wake: nid=0 order=0"));
    // Only the trace itself is left in the directory (no temporary file).
    assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 2);
}

/// The text report's per-zone table prints the zones' own /proc/vmstat
/// counters (the JSON ones) and allocation shares that add up to 100%.
#[test]
fn text_report_has_per_zone_allocation_table() {
    let dir = tempfile::tempdir().unwrap();
    let p = write_temp(&dir, "quick.toml", &quick());
    let json = dir.path().join("r.json");
    let out = wbsim(&["run", p.to_str().unwrap(), "--json", json.to_str().unwrap()]);
    assert!(out.status.success());
    let text = String::from_utf8(out.stdout).unwrap();
    let report: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
    let vmstat = &report["runs"][0]["vmstat"];
    let table: Vec<&str> = text
        .lines()
        .skip_while(|l| !l.starts_with("zones (seed"))
        .skip(2)
        .take_while(|l| !l.trim().is_empty())
        .collect();
    let names: Vec<&str> = table
        .iter()
        .map(|l| l.split_whitespace().next().unwrap())
        .collect();
    assert_eq!(names, ["dma", "dma32", "normal"], "{text}");
    let mut share_sum = 0.0;
    for row in &table {
        let f: Vec<&str> = row.split_whitespace().collect();
        let zone = f[0];
        // A counter that never moved is left out of the JSON map.
        let counter = |k: &str| {
            vmstat[format!("{k}_{zone}")]
                .as_i64()
                .unwrap_or(0)
                .to_string()
        };
        assert_eq!(f[1], counter("pgalloc"), "{row}");
        assert_eq!(f[2], counter("pgscan_kswapd"), "{row}");
        assert_eq!(f[5], counter("nr_vmscan_write"), "{row}");
        share_sum += f[6].trim_end_matches('%').parse::<f64>().unwrap();
    }
    assert!(vmstat["pgalloc_dma32"].as_i64().unwrap() > 0);
    assert!(
        (share_sum - 100.0).abs() < 0.25,
        "shares sum to {share_sum}"
    );
}

#[test]
fn kernel_files_set_and_show_resolve_layered_profiles() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("mine.toml");
    std::fs::write(
        &file,
        "base = \"3.0-vanilla\"\nkswapd_writepage_max_priority = 9\n",
    )
    .unwrap();
    let wbsim = env!("CARGO_BIN_EXE_wbsim");
    let show = Command::new(wbsim)
        .args([
            "kernels",
            "--show",
            file.to_str().unwrap(),
            "--set",
            "reclaim.throttle_on_dirty_isolated=true",
        ])
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&show.stdout);
    assert!(
        show.status.success(),
        "{}",
        String::from_utf8_lossy(&show.stderr)
    );
    assert!(text.contains("reclaim.kswapd_writepage_max_priority = 9") && text.contains("# file "));
    assert!(text.contains("reclaim.throttle_on_dirty_isolated = true") && text.contains("# --set"));
    assert!(
        text.contains("writeback.task_dirty_limit = true") && text.contains("# base 3.0-vanilla")
    );

    let scenario = dir.path().join("q.toml");
    std::fs::write(&scenario, common::quick()).unwrap();
    let json = dir.path().join("r.json");
    let run = Command::new(wbsim)
        .arg("run")
        .arg(&scenario)
        .args([
            "--kernel",
            "3.0-vanilla",
            "--kernel-file",
            file.to_str().unwrap(),
        ])
        .args([
            "--set",
            "writeback.task_dirty_limit=false",
            "--json",
            json.to_str().unwrap(),
        ])
        .output()
        .unwrap();
    assert!(
        run.status.success(),
        "{}",
        String::from_utf8_lossy(&run.stderr)
    );
    let r: serde_json::Value = serde_json::from_slice(&std::fs::read(&json).unwrap()).unwrap();
    assert_eq!(r[0]["kernel"], "3.0-vanilla --set task_dirty_limit=false");
    assert_eq!(r[1]["profile"]["kswapd_writepage_max_priority"], 9);
    assert_eq!(r[1]["profile"]["task_dirty_limit"], false);

    for (args, want) in [
        (vec!["--set", "reclaim.nosuch=1"], "unknown key `nosuch`"),
        (
            vec!["--set", "writeback.kswapd_writepage_max_priority=9"],
            "section `reclaim`",
        ),
        (
            vec![
                "--set",
                "proportions=flexible",
                "--set",
                "proportion_shift_fixed=12",
            ],
            "proportion_shift_fixed",
        ),
    ] {
        let o = Command::new(wbsim)
            .arg("run")
            .arg(&scenario)
            .args(&args)
            .output()
            .unwrap();
        assert_eq!(o.status.code(), Some(2), "{args:?}");
        let e = String::from_utf8_lossy(&o.stderr);
        assert!(e.contains(want), "{args:?}: {e}");
    }
}

/// `kernels --diff` lists the keys two presets differ in and ends with
/// the count; an unknown name is an input error naming it.
#[test]
fn kernels_diff_lists_the_keys_two_presets_differ_in() {
    let out = wbsim(&["kernels", "--diff", "3.2", "3.3"]);
    let text = String::from_utf8_lossy(&out.stdout);
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(
        text.lines()
            .any(|l| l.starts_with("writeback.dirty_limit_scope") && l.contains("preset 3.3")),
        "{text}"
    );
    assert!(
        text.lines().last().unwrap_or("").ends_with("keys differ"),
        "{text}"
    );

    let out = wbsim(&["kernels", "--diff", "3.2", "2.4-nosuch"]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(
        err.contains("2.4-nosuch") && err.contains("3.0-vanilla"),
        "{err}"
    );
    assert!(!err.contains("panicked"), "{err}");
}
