//! Seed 001's mechanism: small files written back under one plug per
//! mapping go out one request per file; under a plug spanning the
//! flusher's pass, consecutive files' bios merge into large requests.

use wbsim::kernel::preset;
use wbsim::report::RunReport;
use wbsim::scenario::parse_scenario;
use wbsim::{simulate, RunOptions};

/// The built-in writeback-plug scenario, shortened to 14 loops (the dirty
/// limits are reached after ~10).
fn run(kernel: &str, seed: u64) -> RunReport {
    let path = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../scenarios/writeback-plug/fsmark-xfs-raid0.toml"
    );
    let text = std::fs::read_to_string(path)
        .unwrap()
        .replace("-L 120", "-L 14");
    assert!(text.contains("-L 14"));
    let sc = parse_scenario(&text, "fsmark-xfs-raid0.toml").unwrap();
    simulate(&sc, &preset(kernel).unwrap(), seed, &RunOptions::default())
}

fn avg_data_request_kib(r: &RunReport) -> f64 {
    let n: u64 = r.devices.iter().map(|d| d.data_write_requests).sum();
    let b: u64 = r.devices.iter().map(|d| d.data_write_bytes).sum();
    assert!(n > 0, "no data writeback at all");
    b as f64 / 1024.0 / n as f64
}

#[test]
fn plugging_the_writeback_pass_merges_small_files_into_large_requests() {
    let unpatched = run("3.10", 1);
    let plugged = run("3.10+writeback-plug", 1);
    let (u, p) = (
        avg_data_request_kib(&unpatched),
        avg_data_request_kib(&plugged),
    );
    // One 4 KiB file per request without the high-level plug...
    assert!(u < 6.0, "unpatched data requests average {u:.1} KiB");
    // ...and at least ten times larger with it.
    assert!(p >= 10.0 * u, "plugged {p:.1} KiB vs unpatched {u:.1} KiB");
    let iops = |r: &RunReport| r.devices.iter().map(|d| d.write_iops).sum::<f64>();
    assert!(iops(&unpatched) > 8.0 * iops(&plugged));
}

#[test]
fn the_same_seed_gives_the_same_run() {
    let a = serde_json::to_string(&run("3.10+writeback-plug", 7)).unwrap();
    let b = serde_json::to_string(&run("3.10+writeback-plug", 7)).unwrap();
    assert_eq!(a, b);
}
