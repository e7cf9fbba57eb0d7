//! Real against simulated: the figures and the table.

mod common;

use wbsim::report::series::{Sample, Series, ZoneSample};
use wbsim::report::{DeviceReport, RunReport};
use wbsim_lab::compare::{figures, flagged, render, Figure};

fn fig(name: &str, real: &[f64], simulated: &[f64]) -> Figure {
    Figure {
        name: name.into(),
        real: real.to_vec(),
        simulated: simulated.to_vec(),
    }
}

fn device(name: &str, mb_s: f64) -> DeviceReport {
    DeviceReport {
        name: name.into(),
        write_iops: 0.0,
        write_mb_per_second: mb_s,
        write_mib_per_second: 0.0,
        avg_write_request_kib: 0.0,
        max_write_request_kib: 0.0,
        write_requests: 0,
        write_bytes: 0,
        sequential_fraction: 0.0,
        utilisation: 0.0,
        merges: 0,
        data_write_requests: 0,
        data_write_bytes: 0,
    }
}

fn run(elapsed: f64, vmstat: &[(&str, i64)]) -> RunReport {
    RunReport {
        elapsed_seconds: elapsed,
        kswapd_awake_seconds: 10.0,
        vmstat: vmstat.iter().map(|(k, v)| (k.to_string(), *v)).collect(),
        devices: vec![device("vda", 18.0)],
        ..Default::default()
    }
}

/// Samples of (zone name, [(inactive, dirty)] per sample).
fn series(zones: &[(&str, &[(u64, u64)])]) -> Series {
    let n = zones[0].1.len();
    Series {
        zone_names: zones.iter().map(|(z, _)| z.to_string()).collect(),
        bdi_names: Vec::new(),
        interval_ns: 1,
        samples: (0..n)
            .map(|i| Sample {
                time_ns: i as u64,
                kswapd_awake: false,
                zones: zones
                    .iter()
                    .map(|(_, s)| ZoneSample {
                        free_pages: 10,
                        inactive_file_pages: s[i].0,
                        dirty_pages: s[i].1,
                        ..ZoneSample::default()
                    })
                    .collect(),
                bdis: Vec::new(),
            })
            .collect(),
        first_workload_exit_ns: None,
        dirty_per_node: false,
    }
}

#[test]
fn helpers_and_ratio() {
    let f = fig("x", &[100.0, 120.0], &[90.0, 150.0, 120.0]);
    assert_eq!(
        (f.real_min(), f.real_max(), f.real_mean()),
        (Some(100.0), Some(120.0), Some(110.0))
    );
    assert_eq!(
        (f.sim_min(), f.sim_max(), f.sim_mean()),
        (Some(90.0), Some(150.0), Some(120.0))
    );
    assert!((f.ratio().unwrap() - 120.0 / 110.0).abs() < 1e-12);
    assert_eq!(fig("z", &[0.0], &[3.0]).ratio(), None);
    assert_eq!(fig("e", &[], &[3.0]).ratio(), None);
    assert_eq!(fig("e", &[], &[]).real_mean(), None);
}

#[test]
fn the_real_spread_widens_the_band() {
    // Band at 10 %: [100 × 0.9, 120 × 1.1] = [90, 132].
    let f = |s: f64| fig("x", &[100.0, 120.0], &[s]);
    assert!(!f(125.0).is_flagged(0.1));
    assert!(!f(131.9).is_flagged(0.1));
    assert!(f(132.1).is_flagged(0.1));
    assert!(!f(90.5).is_flagged(0.1));
    assert!(f(89.0).is_flagged(0.1));
    // One real run: the band is the value ± 10 %.
    assert!(fig("x", &[100.0], &[111.0]).is_flagged(0.1));
    // The simulated mean is what is judged, not its spread.
    assert!(!fig("x", &[100.0], &[50.0, 150.0]).is_flagged(0.1));
    // Negative figures widen outwards too.
    assert!(!fig("x", &[-100.0], &[-105.0]).is_flagged(0.1));
    assert!(fig("x", &[-100.0], &[-115.0]).is_flagged(0.1));
}

#[test]
fn zero_real_and_empty_sides() {
    assert!(!fig("z", &[0.0, 0.0], &[0.0]).is_flagged(0.5));
    assert!(fig("z", &[0.0, 0.0], &[1.0]).is_flagged(0.5));
    assert!(!fig("z", &[], &[1.0]).is_flagged(0.5));
    assert!(!fig("z", &[1.0], &[]).is_flagged(0.5));
}

#[test]
fn render_marks_and_counts() {
    let figs = [
        fig("elapsed_seconds", &[265.95, 267.77], &[250.0]),
        fig("nr_vmscan_write", &[0.0, 0.0], &[1200.0, 1400.0]),
        fig("allocstall", &[0.0], &[0.0]),
        fig("kswapd full sleeps", &[10.0, 12.0], &[]),
    ];
    let t = render(&figs, 0.1, "3.2.4 (qemu)", "3.2-vanilla");
    let lines: Vec<&str> = t.lines().collect();
    assert_eq!(lines.len(), 1 + 1 + figs.len() + 1, "{t}");
    assert!(lines[0].contains("3.2.4 (qemu)") && lines[0].contains("3.2-vanilla"));
    assert!(lines[0].contains("±10%"), "{}", lines[0]);
    assert!(lines[1].starts_with("figure") && lines[1].contains("ratio"));
    // elapsed: 250 < 265.95 × 0.9 = 239.4? No: inside, no marker.
    assert!(lines[2].contains("265.95–267.77"), "{}", lines[2]);
    assert!(!lines[2].ends_with("<<"));
    assert!(lines[2].contains("0.94"));
    // Real 0, simulated 1300: flagged, ratio "-", mean with its range.
    assert!(lines[3].ends_with("<<"), "{}", lines[3]);
    assert!(lines[3].contains("1300 (1200–1400)"));
    let cols: Vec<&str> = lines[3].split_whitespace().collect();
    assert_eq!(cols[cols.len() - 2], "-");
    // Both 0: no marker.
    assert!(!lines[4].ends_with("<<"));
    // No simulated value: "-" and no marker.
    assert!(lines[5].contains("10–12") && !lines[5].ends_with("<<"));
    assert_eq!(
        lines[6],
        "1 of 4 figures flagged (<<: simulated mean outside the real range ±10%)"
    );
    // Fixed width: the real column ends at the same place on every row.
    let end_of_real = |l: &str, v: &str| l.find(v).unwrap() + v.len();
    let a = end_of_real(lines[2], "265.95–267.77");
    let b = end_of_real(lines[5], "10–12");
    let c = end_of_real(lines[1], "real");
    let chars = |l: &str, byte: usize| l[..byte].chars().count();
    assert_eq!(chars(lines[2], a), chars(lines[5], b));
    assert_eq!(chars(lines[2], a), chars(lines[1], c));
    assert_eq!(flagged(&figs, 0.1), 1);
    assert_eq!(flagged(&figs, 0.01), 2);
}

#[test]
fn figures_of_real_and_simulated_runs() {
    // A 3.x guest (pgalloc_movable, per-zone counters) and the simulator
    // (no movable zone).
    let mut real = run(
        266.0,
        &[
            ("pgalloc_dma", 2692),
            ("pgalloc_dma32", 1175578),
            ("pgalloc_normal", 189107),
            ("pgalloc_movable", 0),
            ("pgscan_kswapd", 884538),
            ("pgscan_kswapd_normal", 124180),
            ("pgscan_direct", 114),
            ("pgsteal", 840137),
            ("nr_vmscan_write", 0),
            ("nr_dirtied", 2095290),
            ("allocstall", 1),
        ],
    );
    real.series_stats.insert("kswapd_full_sleeps".into(), 10.0);
    real.series = Some(series(&[
        ("DMA32", &[(1000, 100), (1000, 200), (1000, 300)]),
        ("Normal", &[(100, 30), (100, 40), (0, 0)]),
    ]));
    real.ftrace.kswapd_wakeups = 10;
    let mut sim = run(
        250.0,
        &[
            ("pgalloc_dma", 1000),
            ("pgalloc_dma32", 800000),
            ("pgalloc_normal", 199000),
            ("pgscan_kswapd", 900000),
            ("pgscan_kswapd_normal", 100000),
            ("pgscan_direct", 0),
            ("pgsteal", 800000),
            ("nr_vmscan_write", 5000),
            ("nr_dirtied", 2000000),
            ("allocstall", 0),
        ],
    );
    sim.devices = vec![device("sdb", 17.0), device("sdc", 3.0)];
    sim.series = Some(series(&[
        ("DMA32", &[(1000, 500)]),
        ("Normal", &[(200, 100)]),
    ]));
    sim.ftrace.kswapd_wakeups = 12;
    let figs = figures(&[real], &[sim]);
    let names: Vec<&str> = figs.iter().map(|f| f.name.as_str()).collect();
    assert_eq!(
        names,
        [
            "elapsed_seconds",
            "pgalloc_dma",
            "pgalloc_dma32",
            "pgalloc_normal",
            "pgscan_kswapd",
            "pgscan_kswapd_normal",
            "pgscan_direct",
            "pgsteal",
            "nr_vmscan_write",
            "nr_dirtied",
            "allocstall",
            "pgalloc_dma share %",
            "pgalloc_dma32 share %",
            "pgalloc_normal share %",
            "Normal dirty/inactive_file % (median)",
            "kswapd_awake_seconds",
            "kswapd full sleeps",
            "kswapd wakeups (ftrace)",
            "device write MB/s",
        ]
    );
    let get = |n: &str| figs.iter().find(|f| f.name == n).unwrap();
    let share = get("pgalloc_normal share %");
    assert!((share.real[0] - 100.0 * 189107.0 / 1367377.0).abs() < 1e-9);
    assert!((share.simulated[0] - 19.9).abs() < 1e-9);
    // Median of 30 % and 40 % (the sample without inactive pages is out).
    let dirty = get("Normal dirty/inactive_file % (median)");
    assert_eq!(
        (dirty.real.as_slice(), dirty.simulated.as_slice()),
        (&[35.0][..], &[50.0][..])
    );
    // The lab's count from its series stats; the simulator's from ftrace.
    let sleeps = get("kswapd full sleeps");
    assert_eq!(sleeps.real.as_slice(), &[10.0][..]);
    assert_eq!(sleeps.simulated.len(), 1);
    assert_eq!(get("device write MB/s").simulated, [17.0]);
    assert_eq!(get("kswapd wakeups (ftrace)").simulated, [12.0]);
    assert!(get("nr_vmscan_write").is_flagged(0.25));
    assert!(!get("pgscan_kswapd").is_flagged(0.25));
}

/// `dd ...; sync`: each task's seconds, and the steady-state dirty share
/// from the series stats, side by side.
#[test]
fn task_seconds_and_the_steady_dirty_share() {
    let task = |name: &str, secs: f64| wbsim::report::TaskReport {
        name: name.into(),
        command: String::new(),
        exit_status: 0,
        message: String::new(),
        elapsed_seconds: secs,
    };
    let mut real = run(301.58, &[]);
    real.tasks = vec![task("dd", 265.95), task("sync", 35.63)];
    real.series = Some(series(&[("Normal", &[(100, 40)])]));
    real.series_stats
        .insert("Normal.dirty_of_inactive_steady".into(), 0.401);
    let mut sim = run(299.0, &[]);
    sim.tasks = vec![task("dd", 261.5)];
    sim.series = real.series.clone();
    let figs = figures(&[real], &[sim]);
    let get = |n: &str| figs.iter().find(|f| f.name == n).unwrap();
    assert_eq!(figs[1].name, "dd seconds");
    assert_eq!(get("dd seconds").real, [265.95]);
    assert_eq!(get("dd seconds").simulated, [261.5]);
    assert_eq!(get("sync seconds").real, [35.63]);
    assert!(get("sync seconds").simulated.is_empty());
    let steady = get("Normal dirty/inactive_file % (steady median)");
    assert!((steady.real[0] - 40.1).abs() < 1e-9);
    assert!(steady.simulated.is_empty());
}

#[test]
fn dirty_share_falls_back_to_the_biggest_zone() {
    let mut r = run(1.0, &[]);
    r.series = Some(series(&[("DMA", &[(10, 10)]), ("DMA32", &[(1000, 250)])]));
    let figs = figures(&[r.clone()], &[r]);
    let f = figs
        .iter()
        .find(|f| f.name.contains("dirty/inactive_file"))
        .unwrap();
    assert_eq!(f.name, "DMA32 dirty/inactive_file % (median)");
    assert_eq!(f.real, [25.0]);
}

/// Against a guest that counts dirty pages per node (4.8+: its series
/// puts the node's on its biggest zone), the simulated dirty pages of
/// every zone count on that zone too; against a 3.x guest, each zone's
/// own.
#[test]
fn a_per_node_guest_sees_the_simulated_dirty_pages_of_all_zones() {
    let mut real = run(1.0, &[]);
    real.series = Some(series(&[("DMA", &[(10, 0)]), ("DMA32", &[(1000, 300)])]));
    let mut sim = run(1.0, &[]);
    sim.series = Some(series(&[("DMA", &[(10, 50)]), ("DMA32", &[(1000, 200)])]));
    let share = |real: &wbsim::report::RunReport| {
        let figs = figures(std::slice::from_ref(real), std::slice::from_ref(&sim));
        let f = figs
            .into_iter()
            .find(|f| f.name.contains("dirty/inactive_file % (median)"))
            .unwrap();
        (f.real, f.simulated)
    };
    assert_eq!(share(&real), (vec![30.0], vec![20.0]), "3.x: per zone");
    real.series.as_mut().unwrap().dirty_per_node = true;
    assert_eq!(share(&real), (vec![30.0], vec![25.0]), "4.8+: per node");
}

/// A real 3.2.4 run (records from the lab's snapshots) beside a short
/// simulation of the same machine: the figures line up by name.
#[test]
fn guest_run_beside_a_simulation() {
    use common::{fixture, ns, rec};
    use wbsim_guest::protocol::{kind, tag};
    let text = fixture("lab-2g.toml").replace("count=163840", "count=4096");
    let sc = wbsim::scenario::parse_scenario(&text, "lab-2g.toml").unwrap();
    let profile = wbsim::resolve_profile(&sc, None).unwrap();
    let opts = wbsim::RunOptions {
        series_interval_ns: Some(100_000_000),
        ..Default::default()
    };
    let sim = wbsim::simulate(&sc, &profile, 1, &opts);
    let end = serde_json::json!({"name": "dd", "exit_status": 0, "user_seconds": 0.1,
        "system_seconds": 1.0, "voluntary_context_switches": 5, "message": "", "cut": false});
    let zi0 = fixture("3.2.4-zoneinfo.before");
    let records = vec![
        rec(
            kind::VMSTAT,
            tag::BEFORE,
            ns(1.0),
            &fixture("3.2.4-vmstat.before"),
        ),
        rec(kind::ZONEINFO, tag::BEFORE, ns(1.0), &zi0),
        rec(
            kind::DISKSTAT,
            tag::BEFORE,
            ns(1.0),
            "0 0 0 0 0 0 0 0 0 0 0",
        ),
        rec(kind::TASK_START, tag::NONE, ns(2.0), "dd"),
        rec(kind::ZONEINFO, tag::SAMPLE, ns(3.0), &zi0),
        rec(kind::TASK_END, tag::NONE, ns(12.0), &end.to_string()),
        rec(
            kind::VMSTAT,
            tag::AFTER,
            ns(13.0),
            &fixture("3.2.4-vmstat.after"),
        ),
        rec(
            kind::ZONEINFO,
            tag::AFTER,
            ns(13.0),
            &fixture("3.2.4-zoneinfo.after"),
        ),
        rec(
            kind::DISKSTAT,
            tag::AFTER,
            ns(13.0),
            "0 0 0 0 100 0 204800 0 0 9000 0",
        ),
    ];
    let real = wbsim_lab::guest_report::guest_run(&sc, &records, 0, 100).unwrap();
    let figs = figures(&[real.report], &[sim]);
    let t = render(&figs, 0.25, "3.2.4 (qemu)", "simulator");
    for name in [
        "pgalloc_dma32",
        "pgscan_kswapd_dma32",
        "pgsteal_normal",
        "pgalloc_normal share %",
        "Normal dirty/inactive_file % (median)",
        "device write MB/s",
    ] {
        assert!(figs.iter().any(|f| f.name == name), "{name}\n{t}");
    }
    assert!(!figs.iter().any(|f| f.name == "pgalloc_movable"), "{t}");
    let mbs = figs.iter().find(|f| f.name == "device write MB/s").unwrap();
    assert!((mbs.real[0] - 204800.0 * 512.0 / 1e6 / 10.0).abs() < 1e-9);
    assert_eq!(
        flagged(&figs, 0.25),
        t.lines().filter(|l| l.ends_with("<<")).count()
    );
    println!("{t}");
}
