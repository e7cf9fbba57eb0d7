//! `wbsim reproduce` end to end, at full size (10 GiB and 8 GiB runs and
//! 25 fs_mark loops, as published): the JSON comparison keeps its contract, and every cell's
//! verdict is what the model gives today. Cells listed in `KNOWN_FAILING`
//! are the model's open fidelity gaps (see the issue notes); the test fails
//! if one of them starts passing (update the list) or any other cell fails.
//! Also `wbsim run --series --plot` end to end.

use std::process::Command;

const BIN: &str = env!("CARGO_BIN_EXE_wbsim");

/// Cells the model does not reproduce yet: vanilla reclaim writes need the
/// Normal zone to be refilled faster than its size share; in seed 004, the
/// RFC's patches make the model swap more, not less, with a ratio that
/// follows the seed machine's anonymous memory, which the seed does not
/// give (marked outside the model); in seed 001, the plug saves the
/// writers too little system time of their own (about 0.954 of unpatched,
/// band 0.75-0.95) at the scenario's estimated interrupt cost, on which
/// the ratio depends (marked outside the model); in seed 002, the
/// model's first 500 MiB write on the baseline is throttled by disk B's
/// small share (see notes). Seed 003's "largest zone dirty / zone share"
/// is set by the 15 MiB DMA zone, whose per-zone limit is 45-47 pages
/// with 48 pages under writeback: since NR_FREE_PAGES is counted through
/// per-CPU deltas (as the kernel does) it reads 1.10-1.13 as the engine
/// changes, where it read 1.075 before (band 1.10; the zone is over its
/// limit in ~80% of samples either way); real 3.3.8 goes over by more
/// (DMA 1.07 / 1.44, Normal 1.19 / 1.24; the band file says how). Seed
/// 004's "fs_mark immediate/vanilla direct pages scanned" (band 0.1)
/// fails on its one run (seed 1, 0.130): the model's direct reclaims
/// there are a hundred or two per run against the seed's tens of
/// thousands, and the ratio moves with each. Since writeback submits
/// bios of many pages (`wbsim::block::bio`) it is 0.060-0.130 over seeds
/// 1-9, 0.106 from the medians (before: 0.049-0.110, 0.077; seed 1
/// passed at 0.054), the band file says more. real-3x's "3.3 kswapd
/// awake / dd seconds" (band 0.42-0.66, real 0.538) sits on the band's
/// edge: 0.638-0.670 over seeds 1-9, median 0.663 (before the bios:
/// 0.627-0.676, median 0.659, passing on its runs).
/// (real-6.1's "xfs-256m-fast pgsteal_kswapd", once outside the model at
/// 87,645 against the band's 86,979, passes at 81,588 since the scenarios
/// describe the lab's TCG guest: its CPU costs and idle vCPU wake-up
/// latency give the real direct reclaim, 6,696 pages against 9-14 K.)
const KNOWN_FAILING: &[&str] = &[
    "micro throttle/vanilla swap outs",
    "micro immediate/vanilla swap outs",
    "micro prioinode/vanilla swap outs",
    "fuse-ntfs vanilla nr_vmscan_write (median)",
    "fuse-ntfs seconds vanilla/per-zone",
    "btrfs vanilla nr_vmscan_write (median)",
    "ext4 vanilla nr_vmscan_write (median)",
    "copy seconds vanilla/per-zone",
    "copy vanilla nr_vmscan_write (median)",
    "vanilla Normal dirty / Normal inactive (kswapd)",
    "per-zone: largest zone dirty / zone share",
    "system time plugged/unpatched",
    "500M first write baseline/shift-12",
    "fs_mark immediate/vanilla direct pages scanned",
    "3.3 kswapd awake / dd seconds",
];

/// Failing cells whose band file names what the published figure depends
/// on outside the model (`outside_model`: from a lab run of a real kernel,
/// or a sweep of an input the source does not give, docs/sensitivity.md):
/// the report prints it below the cell.
const OUTSIDE_MODEL: &[&str] = &[
    "ext4 vanilla nr_vmscan_write (median)",
    "micro throttle/vanilla swap outs",
    "micro immediate/vanilla swap outs",
    "micro prioinode/vanilla swap outs",
    "system time plugged/unpatched",
    "copy seconds vanilla/per-zone",
    "copy vanilla nr_vmscan_write (median)",
    "vanilla Normal dirty / Normal inactive (kswapd)",
];

/// Cells whose simulated figure is undefined today, each a quotient by a
/// model figure of 0 (they "passed" on infinity before undefined figures
/// were told apart): the per-zone kernel's reclaim writes in the fs_mark
/// run of seed 003, and xfs's pgactivate in seed 000's dd runs.
const KNOWN_UNDEFINED: &[&str] = &[
    "fs_mark vanilla/per-zone nr_vmscan_write",
    "pgactivate median btrfs/xfs",
    "pgactivate median ext4/xfs",
];

/// Run `wbsim` and return its standard output; fail on a non-zero exit.
fn wbsim_ok(args: &[&str]) -> String {
    let out = Command::new(BIN).args(args).output().unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).unwrap()
}

#[test]
fn reproduce_both_experiments_full_size() {
    let dir = tempfile::tempdir().unwrap();
    let json = dir.path().join("cmp.json");
    let out = Command::new(BIN)
        .args(["reproduce", "--json", json.to_str().unwrap()])
        .output()
        .unwrap();
    let text = String::from_utf8(out.stdout).unwrap();
    print!("{text}");
    // Some cells FAIL today, so the status is 3 (FAIL or undefined cells).
    assert_eq!(
        out.status.code(),
        Some(3),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(!text.contains("not yet implemented"), "{text}");
    assert_eq!(
        text.matches("outside the model, not reproduced:").count(),
        OUTSIDE_MODEL.len(),
        "{text}"
    );
    let v: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
    let experiments = v["experiments"].as_array().unwrap();
    let ids: Vec<&str> = experiments
        .iter()
        .map(|e| e["id"].as_str().unwrap())
        .collect();
    assert_eq!(
        ids,
        [
            "bdi-period-shift",
            "real-3x",
            "real-6.1",
            "reclaim-writeback",
            "writeback-plug",
            "zone-dirty-v1",
            "zone-dirty-v2"
        ]
    );
    let mut unexpected = Vec::new();
    for e in experiments {
        let cells = e["cells"].as_array().unwrap();
        assert!(cells.len() >= 7, "{}", e["id"]);
        for c in cells {
            let name = c["name"].as_str().unwrap();
            let band = c["band"].as_array().unwrap();
            assert_eq!(band.len(), 2, "{name}");
            assert!(
                c["simulated"].is_number() || c["simulated"].is_null(),
                "{name}"
            );
            assert!(c.get("published").is_some(), "{name}");
            let pass = c["pass"].as_bool().unwrap();
            let calibration = c["calibration"].as_bool().unwrap();
            let verdict = c["verdict"].as_str().unwrap();
            let expected = if calibration {
                "calibration"
            } else if KNOWN_FAILING.contains(&name) {
                "FAIL"
            } else if KNOWN_UNDEFINED.contains(&name) {
                "undefined"
            } else {
                "pass"
            };
            if verdict != expected {
                unexpected.push(format!("{name}: {verdict}, expected {expected}"));
            }
            assert_eq!(pass, verdict == "pass" || (calibration && pass), "{name}");
            if verdict == "undefined" {
                assert!(c["simulated"].is_null(), "{name}");
                assert!(c["undefined_reason"].is_string(), "{name}");
            }
            let outside = OUTSIDE_MODEL.contains(&name);
            assert_eq!(c["outside_model"].is_string(), outside, "{name}");
            if outside {
                assert!(
                    KNOWN_FAILING.contains(&name),
                    "{name} still counts as failing"
                );
            }
        }
    }
    assert!(unexpected.is_empty(), "verdicts changed: {unexpected:?}");
}

#[test]
fn series_csv_and_plot() {
    let dir = tempfile::tempdir().unwrap();
    let scenario = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../scenarios/zone-dirty-v2/xfs.toml");
    let small = std::fs::read_to_string(scenario)
        .unwrap()
        .replace("count=$((10 << 15))", "count=65536");
    let sc = dir.path().join("s.toml");
    std::fs::write(&sc, small).unwrap();
    let csv = dir.path().join("s.csv");
    let svg = dir.path().join("s.svg");
    wbsim_ok(&[
        "run",
        sc.to_str().unwrap(),
        "--kernel",
        "3.1-mmotm",
        "--kernel",
        "3.1-mmotm+per-zone-dirty",
        "--series",
        csv.to_str().unwrap(),
        "--plot",
        svg.to_str().unwrap(),
    ]);
    let text = std::fs::read_to_string(&csv).unwrap();
    let mut lines = text.lines();
    assert_eq!(
        lines.next().unwrap(),
        "kernel,seed,time_s,zone,free_pages,inactive_file_pages,active_file_pages,dirty_pages,writeback_pages,dirty_limit_pages,slab_reclaimable_pages,kswapd_awake"
    );
    let rows: Vec<&str> = lines.collect();
    for kernel in ["3.1-mmotm,", "3.1-mmotm+per-zone-dirty,"] {
        for zone in [",DMA,", ",DMA32,", ",Normal,"] {
            assert!(
                rows.iter()
                    .any(|r| r.starts_with(kernel) && r.contains(zone)),
                "{kernel}{zone}"
            );
        }
    }
    // The run writes 2 GiB into a 3.7 GiB machine: dirty pages appear.
    assert!(rows.iter().any(|r| r.split(',').nth(7).unwrap() != "0"));
    let svg_text = std::fs::read_to_string(&svg).unwrap();
    assert!(svg_text.contains("<svg") && svg_text.contains("per-zone-dirty"));
    let png = std::fs::read(svg.with_extension("png")).unwrap();
    assert_eq!(&png[..8], b"\x89PNG\r\n\x1a\n");
}
