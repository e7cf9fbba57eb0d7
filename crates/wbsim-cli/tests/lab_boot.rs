//! Boots Debian's kernel under QEMU on the smallest lab scenario (a 256 MiB
//! guest writing 96 MiB with dd to a throttled ext4 disk) and checks the
//! real report against what dd did. Needs QEMU, the mkfs tools, Debian's
//! kernel and the guest binary (`wbsim lab setup`), so it is ignored by
//! default; `.ci/run` runs it with `--ignored` after setting the lab up.

use std::path::Path;
use std::process::Command;

const SCENARIO: &str = "scenarios/lab/ci-dd-96m-ext4.toml";
const DD_BYTES: f64 = 96.0 * 1_048_576.0;
const PAGE: f64 = 4096.0;

fn wbsim(args: &[&str]) -> std::process::Output {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    let out = Command::new(env!("CARGO_BIN_EXE_wbsim"))
        .args(args)
        .current_dir(&root)
        .output()
        .expect("wbsim runs");
    eprintln!("{}", String::from_utf8_lossy(&out.stderr));
    out
}

#[test]
#[ignore = "boots a real kernel: run after `wbsim lab setup` with --ignored"]
fn debian_kernel_reports_what_dd_wrote_and_compares() {
    let dir = tempfile::tempdir().unwrap();
    let json = dir.path().join("real.json");
    let out = wbsim(&[
        "lab",
        "run",
        SCENARIO,
        "--kernel-image",
        "debian",
        "--rerun",
        "--json",
        json.to_str().unwrap(),
    ]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stdout)
    );
    let r: serde_json::Value = serde_json::from_slice(&std::fs::read(&json).unwrap()).unwrap();
    assert_eq!(r["source"], "qemu");
    assert!(r["lab"]["kernel_release"]
        .as_str()
        .unwrap()
        .starts_with("6.1"));
    let vm = &r["runs"][0]["vmstat"];
    let dirtied = vm["nr_dirtied"].as_f64().unwrap() * PAGE;
    let written = vm["nr_written"].as_f64().unwrap() * PAGE;
    // Every byte dd wrote was dirtied once; the filesystem's own
    // metadata and journal add a little, and /proc/vmstat may not have
    // folded in the last per-CPU deltas (up to a few dozen pages).
    assert!(
        (DD_BYTES - 64.0 * PAGE..=DD_BYTES * 1.10).contains(&dirtied),
        "nr_dirtied {dirtied} bytes for {DD_BYTES} written by dd"
    );
    // What was not written back yet at dd's end is still dirty or under
    // writeback.
    let pending = (vm["nr_dirty"].as_f64().unwrap() + vm["nr_writeback"].as_f64().unwrap()) * PAGE;
    assert!(
        written <= dirtied,
        "nr_written {written} > nr_dirtied {dirtied}"
    );
    assert!(
        (written + pending - dirtied).abs() <= 0.05 * DD_BYTES,
        "nr_written {written} + still dirty/writeback {pending} vs nr_dirtied {dirtied}"
    );

    let out = wbsim(&[
        "lab",
        "compare",
        SCENARIO,
        "--kernel-image",
        "debian",
        "--kernel",
        "3.10",
    ]);
    assert!(out.status.success());
    let table = String::from_utf8_lossy(&out.stdout);
    assert!(
        table.contains("nr_dirtied") && table.contains("elapsed"),
        "{table}"
    );
    assert!(
        table.contains("from the cache"),
        "the compare reuses the run's boot: {table}"
    );
}
