//! End-to-end: a command's output files are checked before it simulates,
//! replaced only when all are written, never replaced when they are not
//! regular files, and left as they were on failure or SIGINT/SIGTERM; the
//! exit status says what happened.

use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::time::{Duration, Instant};

const BIN: &str = env!("CARGO_BIN_EXE_wbsim");

mod common;

use common::{example, quick};

/// The full-size example (10 GiB through a USB stick): it runs long
/// enough to be interrupted.
fn slow() -> String {
    example()
}

fn write_temp(dir: &Path, name: &str, text: &str) -> PathBuf {
    let p = dir.join(name);
    std::fs::write(&p, text).unwrap();
    p
}

fn wbsim(args: &[&str]) -> Output {
    Command::new(BIN).args(args).output().unwrap()
}

/// Wait (at most 20 s) until `dir` holds `n` entries: a run has planned
/// its outputs and started writing.
fn wait_for_entries(dir: &Path, n: usize) {
    let t0 = Instant::now();
    while names_in(dir).len() < n && t0.elapsed() < Duration::from_secs(20) {
        std::thread::sleep(Duration::from_millis(20));
    }
}

fn names_in(dir: &Path) -> Vec<String> {
    let mut v: Vec<String> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    v.sort();
    v
}

#[test]
fn an_unwritable_output_is_refused_before_the_run() {
    let dir = tempfile::tempdir().unwrap();
    let s = write_temp(dir.path(), "s.toml", &slow());
    let json = dir.path().join("no/such/dir/out.json");
    let t0 = Instant::now();
    let o = wbsim(&["run", s.to_str().unwrap(), "--json", json.to_str().unwrap()]);
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(2), "{err}");
    assert!(
        err.contains("--json") && err.contains("does not exist"),
        "{err}"
    );
    // The 10 GiB run was never started: no report, and far quicker.
    assert!(o.stdout.is_empty());
    assert!(t0.elapsed() < Duration::from_secs(2), "{:?}", t0.elapsed());
}

#[test]
fn two_outputs_on_one_path_and_an_output_over_the_input_are_refused() {
    let dir = tempfile::tempdir().unwrap();
    let s = write_temp(dir.path(), "s.toml", &quick());
    let a = dir.path().join("a.json");
    let a_str = a.to_str().unwrap();
    let o = wbsim(&[
        "run",
        s.to_str().unwrap(),
        "--json",
        a_str,
        "--trace",
        a_str,
    ]);
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(2), "{err}");
    assert!(err.contains("the same file as --json"), "{err}");
    let o = wbsim(&["run", s.to_str().unwrap(), "--json", s.to_str().unwrap()]);
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(err.contains("the input"), "{err}");
    assert_eq!(
        std::fs::read_to_string(&s).unwrap(),
        quick(),
        "input untouched"
    );
    // A series X.csv writes X.bdi.csv beside it: that name is taken too.
    let csv = dir.path().join("x.csv");
    let bdi = dir.path().join("x.bdi.csv");
    let o = wbsim(&[
        "run",
        s.to_str().unwrap(),
        "--series",
        csv.to_str().unwrap(),
        "--json",
        bdi.to_str().unwrap(),
    ]);
    assert_eq!(o.status.code(), Some(2));
    assert_eq!(names_in(dir.path()), ["s.toml"]);
}

#[test]
fn a_replaced_report_keeps_its_mode_and_a_device_is_written_through() {
    let dir = tempfile::tempdir().unwrap();
    let s = write_temp(dir.path(), "s.toml", &quick());
    let json = write_temp(dir.path(), "r.json", "old");
    std::fs::set_permissions(&json, std::fs::Permissions::from_mode(0o600)).unwrap();
    let o = wbsim(&[
        "run",
        s.to_str().unwrap(),
        "--runs",
        "1",
        "--json",
        json.to_str().unwrap(),
        "--trace",
        "/dev/null",
    ]);
    assert_eq!(
        o.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
    let mode = std::fs::metadata(&json).unwrap().permissions().mode() & 0o777;
    assert_eq!(mode, 0o600);
    assert!(std::fs::read_to_string(&json).unwrap().starts_with('{'));
    use std::os::unix::fs::FileTypeExt;
    assert!(std::fs::metadata("/dev/null")
        .unwrap()
        .file_type()
        .is_char_device());
    assert_eq!(names_in(dir.path()), ["r.json", "s.toml"], "no temp left");
}

#[test]
fn dash_is_standard_output_and_the_text_report_moves_to_stderr() {
    let dir = tempfile::tempdir().unwrap();
    let s = write_temp(dir.path(), "s.toml", &quick());
    let o = wbsim(&["run", s.to_str().unwrap(), "--json", "-"]);
    assert_eq!(o.status.code(), Some(0));
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).expect("stdout is the JSON");
    assert_eq!(v["scenario"], "s");
    assert!(String::from_utf8_lossy(&o.stderr).contains("vmstat deltas"));
}

/// SIGINT or SIGTERM in the middle of a run: the previous outputs stay as
/// they were, no temporary file is left, and the status is 130.
#[test]
fn an_interrupted_run_leaves_the_previous_outputs_intact() {
    for signal in ["-INT", "-TERM"] {
        let dir = tempfile::tempdir().unwrap();
        let s = write_temp(dir.path(), "s.toml", &slow());
        let json = write_temp(dir.path(), "r.json", "previous");
        let trace = write_temp(dir.path(), "t.txt", "previous trace");
        let mut child = Command::new(BIN)
            .args([
                "run",
                s.to_str().unwrap(),
                "--runs",
                "1",
                "--json",
                json.to_str().unwrap(),
                "--trace",
                trace.to_str().unwrap(),
            ])
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::piped())
            .spawn()
            .unwrap();
        // Wait until the run has started streaming its trace.
        wait_for_entries(dir.path(), 5);
        std::thread::sleep(Duration::from_millis(300));
        let k = Command::new("kill")
            .args([signal, &child.id().to_string()])
            .status()
            .unwrap();
        assert!(k.success());
        let status = child.wait().unwrap();
        assert_eq!(status.code(), Some(130), "{signal}");
        assert_eq!(std::fs::read_to_string(&json).unwrap(), "previous");
        assert_eq!(std::fs::read_to_string(&trace).unwrap(), "previous trace");
        assert_eq!(
            names_in(dir.path()),
            ["r.json", "s.toml", "t.txt"],
            "{signal}"
        );
    }
}

/// Temporary files left by a SIGKILL are recognised and removed by the
/// next run that writes the same output.
#[test]
fn temps_left_by_a_killed_run_are_removed_by_the_next() {
    let dir = tempfile::tempdir().unwrap();
    let s = write_temp(dir.path(), "s.toml", &slow());
    let trace = dir.path().join("t.txt");
    let mut child = Command::new(BIN)
        .args([
            "run",
            s.to_str().unwrap(),
            "--runs",
            "1",
            "--trace",
            trace.to_str().unwrap(),
        ])
        .stdout(std::process::Stdio::null())
        .spawn()
        .unwrap();
    wait_for_entries(dir.path(), 2);
    child.kill().unwrap();
    child.wait().unwrap();
    let left = names_in(dir.path());
    assert_eq!(left.len(), 2, "a temp file is left by SIGKILL: {left:?}");
    assert!(
        left.iter().any(|n| n.starts_with(".t.txt.wbsim-tmp-")),
        "{left:?}"
    );
    let q = write_temp(dir.path(), "s.toml", &quick());
    let o = wbsim(&[
        "run",
        q.to_str().unwrap(),
        "--runs",
        "1",
        "--trace",
        trace.to_str().unwrap(),
    ]);
    assert_eq!(o.status.code(), Some(0));
    assert_eq!(names_in(dir.path()), ["s.toml", "t.txt"]);
}

/// A run cut by its time limit is flagged, left out of the mean, and
/// makes the status 4; `--include-cut` counts it in the mean.
#[test]
fn a_cut_run_is_flagged_and_sets_the_exit_status() {
    let dir = tempfile::tempdir().unwrap();
    let text = quick().replace("time_limit_s = 7200", "time_limit_s = 1");
    assert!(text.contains("time_limit_s = 1\n"));
    let s = write_temp(
        dir.path(),
        "s.toml",
        &text.replace("count=1024", "count=4096"),
    );
    let json = dir.path().join("r.json");
    let o = wbsim(&[
        "run",
        s.to_str().unwrap(),
        "--runs",
        "2",
        "--json",
        json.to_str().unwrap(),
    ]);
    let out = String::from_utf8_lossy(&o.stdout);
    assert_eq!(o.status.code(), Some(4), "{out}");
    assert!(out.contains("CUT: seed 1"), "{out}");
    assert!(out.contains("elapsed: no mean: every run was cut"), "{out}");
    let v: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
    assert_eq!(v["runs"][0]["cut"], true);
    assert_eq!(v["runs"][0]["outcome"], "time-limit");
    let o = wbsim(&["run", s.to_str().unwrap(), "--runs", "2", "--include-cut"]);
    let out = String::from_utf8_lossy(&o.stdout);
    assert_eq!(o.status.code(), Some(4));
    assert!(out.contains("(including 2 cut run(s))"), "{out}");
}

/// A run that would need more host memory than allowed is refused at
/// once, with the estimate and the option that allows it.
#[test]
fn a_run_too_big_for_the_host_is_refused_with_the_estimate() {
    let dir = tempfile::tempdir().unwrap();
    let s = write_temp(dir.path(), "s.toml", &example());
    let o = wbsim(&["run", s.to_str().unwrap(), "--max-memory", "64"]);
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(2), "{err}");
    assert!(
        err.contains("estimated") && err.contains("--max-memory"),
        "{err}"
    );
    assert!(o.stdout.is_empty());
}

#[test]
fn out_of_range_options_name_the_range() {
    let dir = tempfile::tempdir().unwrap();
    let s = write_temp(dir.path(), "s.toml", &quick());
    for (args, words) in [
        (
            vec!["--sample-ms", "0"],
            "--sample-ms 0: out of range; allowed: 1 to 3600000",
        ),
        (
            vec!["--sample-ms", "18446744073709551615"],
            "--sample-ms 18446744073709551615: out of range",
        ),
        (
            vec!["--runs", "0"],
            "--runs 0: out of range; allowed: 1 to 10000",
        ),
    ] {
        let mut a = vec!["run", s.to_str().unwrap()];
        a.extend(args);
        let o = wbsim(&a);
        let err = String::from_utf8_lossy(&o.stderr);
        assert_eq!(o.status.code(), Some(2), "{err}");
        assert!(err.contains(words), "{err}");
    }
}

#[test]
fn kernels_and_experiments_are_listed_one_line_each() {
    let o = wbsim(&["kernels"]);
    assert_eq!(o.status.code(), Some(0));
    let text = String::from_utf8_lossy(&o.stdout);
    let line = text
        .lines()
        .find(|l| l.starts_with("3.10+writeback-plug "))
        .unwrap();
    assert!(line.contains("plug"), "{line}");
    // One line per built-in preset, nothing else.
    assert_eq!(text.lines().count(), wbsim::kernel::preset_names().len());
    assert!(text.lines().any(|l| l.starts_with("3.3 ")), "{text}");
    let o = wbsim(&["reproduce", "--list"]);
    assert_eq!(o.status.code(), Some(0));
    let text = String::from_utf8_lossy(&o.stdout);
    assert!(text.contains("zone-dirty-v2 "), "{text}");
    assert!(text.contains("source: 000_d39bd0a3d74c4e30.txt"), "{text}");
}

/// `--check` ends each run with one line: events checked, invariants,
/// violations.
#[test]
fn check_ends_with_one_summary_line() {
    let dir = tempfile::tempdir().unwrap();
    let s = write_temp(dir.path(), "s.toml", &quick());
    let o = wbsim(&["run", s.to_str().unwrap(), "--runs", "1", "--check"]);
    assert_eq!(o.status.code(), Some(0));
    let out = String::from_utf8_lossy(&o.stdout);
    let last = out.lines().last().unwrap();
    assert!(
        last.starts_with("seed 1: check: ") && last.ends_with(" invariants, 0 violations"),
        "{last}"
    );
}
