//! The coarse unit (`[machine] unit_kib`, `mm::unit`): a 64 GiB machine
//! simulated at 64 KiB (and at 1 MiB) pages stands for the same machine at
//! 4 KiB pages; a 16 TiB machine runs at 1 MiB.

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
    run_on(sc, &sc.kernel)
}

fn run_on(sc: &Scenario, preset: &str) -> RunReport {
    let profile = kernel::preset(preset).unwrap();
    simulate(sc, &profile, 1, &RunOptions::default())
}

fn within_2_percent(what: &str, fine: f64, coarse: f64, coarse_kib: u64) {
    let off = (coarse - fine).abs() / fine.abs().max(f64::MIN_POSITIVE);
    assert!(
        (fine == 0.0 && coarse == 0.0) || off <= 0.02,
        "{what}: {fine} at 4 KiB, {coarse} at {coarse_kib} KiB ({:+.2} %)",
        (coarse / fine - 1.0) * 100.0
    );
}

/// The check on kernel `preset` at each unit of `coarse_kibs`
/// against one run at 4 KiB: elapsed time, nr_dirtied, nr_written and
/// each zone's pgscan (kswapd and direct) within 2 % of the 4 KiB run;
/// and the run reclaimed (the 80 GiB dd overflows the 64 GiB of memory),
/// so pgscan is tested on something. Returns each zone's pages scanned
/// at 4 KiB.
fn agrees_within_2_percent_at(preset: &str, coarse_kibs: &[u64]) -> Vec<(String, f64)> {
    let fine = run_on(&at_unit(4), preset);
    let v = |r: &RunReport, k: &str| r.vmstat.get(k).copied().unwrap_or(0) as f64;
    for &coarse_kib in coarse_kibs {
        let coarse = run_on(&at_unit(coarse_kib), preset);
        let within =
            |what: &str, fine: f64, coarse: f64| within_2_percent(what, fine, coarse, coarse_kib);
        within("elapsed", fine.elapsed_seconds, coarse.elapsed_seconds);
        for k in ["nr_dirtied", "nr_written"] {
            within(k, v(&fine, k), v(&coarse, k));
        }
        // 80 GiB in 4 KiB pages, counted as such at every unit.
        assert_eq!(v(&coarse, "nr_dirtied"), (80u64 << 18) as f64);
        for zone in ["dma", "dma32", "normal"] {
            for k in ["pgscan_kswapd", "pgscan_direct"] {
                let name = format!("{k}_{zone}");
                within(&name, v(&fine, &name), v(&coarse, &name));
            }
        }
    }
    let scanned: Vec<(String, f64)> = ["dma", "dma32", "normal"]
        .iter()
        .map(|zone| {
            let pages = ["pgscan_kswapd", "pgscan_direct"]
                .iter()
                .map(|k| v(&fine, &format!("{k}_{zone}")))
                .sum();
            (zone.to_string(), pages)
        })
        .collect();
    let total: f64 = scanned.iter().map(|(_, n)| n).sum();
    assert!(total > 1e6, "reclaim scanned only {total} pages");
    scanned
}

/// The scenario's unit, 64 KiB, and the largest, 1 MiB (256 pages of
/// 4 KiB a frame), which a 16 TiB machine needs to fit the 16 Mi frames.
const COARSE_KIBS: [u64; 2] = [64, 1024];

/// The scenario's kernel, 3.3 (also that of `xfs-16tib.toml`): reclaim
/// scans Normal alone.
#[test]
fn a_64_gib_machine_at_64_kib_and_1_mib_agrees_with_4_kib_on_3_3() {
    agrees_within_2_percent_at("3.3", &COARSE_KIBS);
}

/// 3.0 reclaims DMA32 too (280 K pages of it): its share of each pass,
/// `size >> priority` of a list 16 (or 256) times shorter at the coarse
/// unit, must not lose the remainder (`Lruvec::scan_in_units`).
#[test]
fn a_64_gib_machine_at_64_kib_and_1_mib_agrees_with_4_kib_on_3_0_in_every_zone() {
    let scanned = agrees_within_2_percent_at("3.0-vanilla", &COARSE_KIBS);
    let dma32 = scanned.iter().find(|(z, _)| z == "dma32").unwrap().1;
    assert!(dma32 > 1e5, "DMA32 scanned {dma32} pages");
}

/// 6.1: node LRU, watermark boosting, 5.14+ per-CPU lists; kswapd's
/// naps depend on the per-CPU vmstat thresholds, kept in bytes.
#[test]
fn a_64_gib_machine_at_64_kib_and_1_mib_agrees_with_4_kib_on_6_1() {
    agrees_within_2_percent_at("6.1", &COARSE_KIBS);
}

/// The largest machine a run may have, 16 TiB at 1 MiB
/// (`scenarios/large-machine/xfs-16tib.toml`): its dd of 16 TiB less
/// 1 MiB ends, every 4 KiB page of the file is counted dirtied, and
/// kswapd reclaimed (the file is larger than memory less the reserves).
#[test]
fn a_16_tib_machine_at_1_mib_writes_its_file_and_reclaims() {
    let text = include_str!("../../../scenarios/large-machine/xfs-16tib.toml");
    let sc = parse_scenario(text, "xfs-16tib.toml").unwrap();
    assert_eq!(sc.machine.unit_kib, 1024);
    let r = run(&sc);
    assert!(!r.cut, "cut at {} s", r.elapsed_seconds);
    let file_pages = ((16u64 << 20) - 1) << 8;
    assert_eq!(r.vmstat["nr_dirtied"], file_pages as i64);
    assert!(
        r.vmstat["pgscan_kswapd_normal"] > 1_000_000,
        "kswapd scanned {} pages of Normal",
        r.vmstat["pgscan_kswapd_normal"]
    );
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
