//! The coarse unit (`[machine] unit_kib`, `mm::unit`): a 64 GiB machine
//! simulated at 64 KiB pages stands for the same machine at 4 KiB pages.

use wbsim::report::RunReport;
use wbsim::scenario::{parse_scenario, Scenario};
use wbsim::{kernel, simulate, RunOptions};

const SCENARIO: &str = include_str!("../../../scenarios/large-machine/xfs-64gib.toml");

fn at_unit(kib: u64) -> Scenario {
    let text = SCENARIO.replace("unit_kib = 64", &format!("unit_kib = {kib}"));
    let sc = parse_scenario(&text, "xfs-64gib.toml").unwrap();
    assert_eq!(sc.machine.unit_kib, kib);
    sc
}

fn run(sc: &Scenario) -> RunReport {
    let profile = kernel::preset(&sc.kernel).unwrap();
    simulate(sc, &profile, 1, &RunOptions::default())
}

fn within_2_percent(what: &str, fine: f64, coarse: f64) {
    let off = (coarse - fine).abs() / fine.abs().max(f64::MIN_POSITIVE);
    assert!(
        (fine == 0.0 && coarse == 0.0) || off <= 0.02,
        "{what}: {fine} at 4 KiB, {coarse} at 64 KiB ({:+.2} %)",
        (coarse / fine - 1.0) * 100.0
    );
}

/// The check: elapsed time, nr_dirtied, nr_written and each
/// zone's pgscan (kswapd and direct) within 2 % of the 4 KiB run; and
/// the run reclaimed (the 80 GiB dd overflows the 64 GiB of memory), so
/// pgscan is tested on something.
#[test]
fn a_64_gib_machine_at_64_kib_agrees_with_4_kib_within_2_percent() {
    let fine = run(&at_unit(4));
    let coarse = run(&at_unit(64));
    within_2_percent("elapsed", fine.elapsed_seconds, coarse.elapsed_seconds);
    let v = |r: &RunReport, k: &str| r.vmstat.get(k).copied().unwrap_or(0) as f64;
    for k in ["nr_dirtied", "nr_written"] {
        within_2_percent(k, v(&fine, k), v(&coarse, k));
    }
    // 80 GiB in 4 KiB pages, counted as such at both units.
    assert_eq!(v(&coarse, "nr_dirtied"), (80u64 << 18) as f64);
    let mut scanned = 0.0;
    for zone in ["dma", "dma32", "normal"] {
        for k in ["pgscan_kswapd", "pgscan_direct"] {
            let name = format!("{k}_{zone}");
            within_2_percent(&name, v(&fine, &name), v(&coarse, &name));
            scanned += v(&fine, &name);
        }
    }
    assert!(scanned > 1e6, "reclaim scanned only {scanned} pages");
}

/// A coarse run is deterministic like any other, and counts KiB as KiB
/// and pages as 4 KiB pages: `pgpgout` (KiB written) is four times
/// `nr_written` plus the filesystem's own writes, and the device wrote
/// those bytes but the ones still in flight.
#[test]
fn a_coarse_run_is_deterministic_and_reports_4_kib_pages() {
    let sc = at_unit(64);
    let a = serde_json::to_string(&run(&sc)).unwrap();
    let b = run(&sc);
    assert_eq!(a, serde_json::to_string(&b).unwrap());
    let written_kib = b.vmstat["nr_written"] * 4;
    let pgpgout = b.vmstat["pgpgout"];
    assert!(
        pgpgout >= written_kib && pgpgout < written_kib + written_kib / 100,
        "pgpgout {pgpgout} KiB, nr_written {} pages",
        b.vmstat["nr_written"]
    );
    // Submitted (pgpgout) less completed (the device's bytes) is what is
    // still in flight at the end, under writeback.
    let device_kib = (b.devices[0].write_bytes / 1024) as i64;
    let in_flight_kib = pgpgout - device_kib;
    assert!(
        (0..=b.vmstat["nr_writeback"] * 4).contains(&in_flight_kib),
        "{in_flight_kib} KiB in flight, nr_writeback {}",
        b.vmstat["nr_writeback"]
    );
    // Events are not scaled: kswapd's passes are counted once each.
    assert!(
        b.vmstat["pageoutrun"] < 10_000,
        "{}",
        b.vmstat["pageoutrun"]
    );
}
