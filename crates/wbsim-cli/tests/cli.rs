//! End-to-end tests of the `wbsim` command: bad input gives one clear
//! message naming file, line and key, a non-zero exit and no panic; the JSON
//! report keeps its contract and is byte-identical for the same seed.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

const BIN: &str = env!("CARGO_BIN_EXE_wbsim");

fn example() -> String {
    let p = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../scenarios/zone-dirty-v2/xfs.toml");
    std::fs::read_to_string(p).unwrap()
}

/// A small, quick variant of the example: 64 MiB machine, 32 MiB dd.
fn quick() -> String {
    example()
        .replace("total_mib = 3765", "total_mib = 64")
        .replace("size_mib = 15", "size_mib = 16")
        .replace("size_mib = 3246", "size_mib = 32")
        .replace("size_mib = 504", "size_mib = 16")
        .replace("count=$((10 << 15))", "count=1024")
}

fn write_temp(dir: &tempfile::TempDir, name: &str, text: &str) -> PathBuf {
    let p = dir.path().join(name);
    std::fs::write(&p, text).unwrap();
    p
}

fn wbsim(args: &[&str]) -> Output {
    Command::new(BIN).args(args).output().unwrap()
}

/// Run on a scenario text and expect a failure whose one-line message names
/// the file, the line and the key.
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
    assert_eq!(err.trim().lines().count(), 1, "one message expected: {err}");
    assert!(
        err.contains(&format!("bad.toml:{line}:")),
        "no file:line {line} in: {err}"
    );
    assert!(err.contains(&format!("`{key}`")), "no key {key} in: {err}");
    assert!(err.contains(words), "no `{words}` in: {err}");
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
        "greater than 0",
    );
    let text = example().replace("capacity_gib = 16", "capacity_gib = 0");
    expect_error(
        &text,
        line_of(&text, "capacity_gib"),
        "device[0].capacity_gib",
        "greater than 0",
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
