//! `guest_run` on records built from real kernels' text.

mod common;

use std::collections::BTreeMap;

use common::{fixture, ns, rec};
use wbsim::system::Outcome;
use wbsim_guest::protocol::{kind, tag, Record, TaskEnd};
use wbsim_lab::guest_report::guest_run;
use wbsim_lab::procfs::parse_vmstat;

fn scenario() -> wbsim::scenario::Scenario {
    wbsim::scenario::parse_scenario(&fixture("lab-2g.toml"), "lab-2g.toml").unwrap()
}

fn task_end(name: &str, cut: bool) -> String {
    serde_json::to_string(&TaskEnd {
        name: name.into(),
        exit_status: if cut { 137 } else { 0 },
        user_seconds: 0.25,
        system_seconds: 40.5,
        voluntary_context_switches: 1200,
        message: if cut {
            String::new()
        } else {
            "163840+0 records in".into()
        },
        cut,
    })
    .unwrap()
}

const KSWAPD_BEFORE: &str = "292 (kswapd0) S 2 0 0 0 -1 2149632 0 0 0 0 0 0 0 0 20 0 1 0 38\n";
const KSWAPD_AFTER: &str = "292 (kswapd0) S 2 0 0 0 -1 2149632 0 0 0 0 0 2190 0 0 20 0 1 0 38\n";
const DISK_BEFORE: &str = "337 0 674 10 100 5 800 50 0 40 90\n";
const DISK_AFTER: &str = "337 0 674 10 10368 205 10487696 39570970 0 240040 39571090\n";

/// A 3.2.4 run as the guest records it: snapshots from the lab's
/// 3.2.4-ext4-r1, dd from 3.77 s to 269.72 s, zoneinfo samples at 3.5 s
/// (before the start), 5 s and 100 s, the synthetic 3.2 trace in two
/// chunks.
fn records_3_2() -> Vec<Record> {
    let trace = fixture("3.2-trace");
    let lines: Vec<&str> = trace.lines().collect();
    let (a, b) = lines.split_at(10);
    let zi0 = fixture("3.2.4-zoneinfo.before");
    let zi1 = fixture("3.2.4-zoneinfo.after");
    vec![
        rec(kind::UNAME, tag::NONE, ns(1.0), "3.2.4\n"),
        rec(kind::CMDLINE, tag::NONE, ns(1.0), "console=ttyS0\n"),
        rec(
            kind::LOG,
            tag::NONE,
            ns(1.1),
            "trace: enabled vmscan/mm_vmscan_writepage\n",
        ),
        rec(
            kind::VMSTAT,
            tag::BEFORE,
            ns(3.0),
            &fixture("3.2.4-vmstat.before"),
        ),
        rec(kind::ZONEINFO, tag::BEFORE, ns(3.0), &zi0),
        rec(
            kind::MEMINFO,
            tag::BEFORE,
            ns(3.0),
            &fixture("3.2.4-meminfo.before"),
        ),
        rec(kind::DISKSTAT, tag::BEFORE, ns(3.0), DISK_BEFORE),
        rec(kind::KSWAPD, tag::BEFORE, ns(3.0), KSWAPD_BEFORE),
        rec(kind::ZONEINFO, tag::SAMPLE, ns(3.5), &zi0),
        rec(kind::TASK_START, tag::NONE, ns(3.77), "dd"),
        rec(kind::ZONEINFO, tag::SAMPLE, ns(5.0), &zi0),
        rec(kind::TRACE, tag::NONE, ns(90.0), &(a.join("\n") + "\n")),
        rec(kind::ZONEINFO, tag::SAMPLE, ns(100.0), &zi1),
        rec(kind::TRACE, tag::NONE, ns(100.0), &(b.join("\n") + "\n")),
        rec(
            kind::TASK_END,
            tag::NONE,
            ns(269.72),
            &task_end("dd", false),
        ),
        rec(
            kind::VMSTAT,
            tag::AFTER,
            ns(305.35),
            &fixture("3.2.4-vmstat.after"),
        ),
        rec(kind::ZONEINFO, tag::AFTER, ns(305.35), &zi1),
        rec(kind::DISKSTAT, tag::AFTER, ns(305.35), DISK_AFTER),
        rec(kind::KSWAPD, tag::AFTER, ns(305.35), KSWAPD_AFTER),
    ]
}

fn delta(before: &str, after: &str) -> BTreeMap<String, i64> {
    let (b, a) = (
        parse_vmstat(&fixture(before)),
        parse_vmstat(&fixture(after)),
    );
    a.iter().map(|(k, v)| (k.clone(), v - b[k])).collect()
}

#[test]
fn run_of_3_2_4() {
    let g = guest_run(&scenario(), &records_3_2(), 3, 500).unwrap();
    assert_eq!(g.kernel_release, "3.2.4");
    assert_eq!(g.error, None);
    let r = &g.report;
    assert_eq!((r.seed, r.outcome, r.cut), (3, Outcome::Completed, false));
    assert!((r.elapsed_seconds - (269.72 - 3.77)).abs() < 1e-9);
    assert_eq!((r.user_seconds, r.system_seconds), (0.25, 40.5));
    assert_eq!(r.context_switches, 1200);

    // Counters: kernel names as deltas, plus the derived totals.
    let d = delta("3.2.4-vmstat.before", "3.2.4-vmstat.after");
    assert_eq!(r.vmstat["nr_dirtied"], d["nr_dirtied"]);
    assert_eq!(r.vmstat["pgscan_kswapd_normal"], d["pgscan_kswapd_normal"]);
    let sum = |p: &str| {
        ["dma", "dma32", "normal", "movable"]
            .map(|z| d[&format!("{p}_{z}")])
            .iter()
            .sum::<i64>()
    };
    assert_eq!(r.vmstat["pgscan_kswapd"], sum("pgscan_kswapd"));
    assert_eq!(r.vmstat["pgscan_direct"], sum("pgscan_direct"));
    assert_eq!(r.vmstat["pgsteal"], sum("pgsteal"));
    assert_eq!(r.vmstat["allocstall"], d["allocstall"]);
    // The lab's analysis of this run: 44620/715738/124180 scanned by kswapd.
    assert_eq!(r.vmstat["pgscan_kswapd"], 44620 + 715738 + 124180);

    // Per zone: zoneinfo deltas and reclaim writes by pfn.
    let imm: i64 = r
        .zoneinfo
        .values()
        .map(|m| m["nr_vmscan_immediate_reclaim"])
        .sum();
    assert_eq!(imm, d["nr_vmscan_immediate_reclaim"]);
    let writes: Vec<i64> = ["dma", "dma32", "normal"]
        .iter()
        .map(|z| r.zoneinfo[*z]["pgwrite_reclaim"])
        .collect();
    assert_eq!(writes, [1, 1, 2]);
    assert_eq!(r.zoneinfo["normal"]["nr_vmscan_write"], 0);

    // The disk.
    let dev = &r.devices[0];
    assert_eq!(dev.name, "vda");
    assert_eq!((dev.write_requests, dev.merges), (10268, 200));
    assert_eq!(dev.write_bytes, 10486896 * 512);
    assert!((dev.write_mb_per_second - 10486896.0 * 512.0 / 1e6 / r.elapsed_seconds).abs() < 1e-9);
    assert!((dev.avg_write_request_kib - 10486896.0 / 2.0 / 10268.0).abs() < 1e-9);
    assert!((dev.utilisation - 240.0 / r.elapsed_seconds).abs() < 1e-9);
    assert_eq!(
        (dev.max_write_request_kib, dev.sequential_fraction),
        (0.0, 0.0)
    );

    // kswapd: one closed interval, one open to the last sample (100 s).
    assert!((r.kswapd_awake_seconds - (92.315 - 81.071 + 5.0)).abs() < 1e-9);
    assert_eq!(r.ftrace.kswapd_wakeups, 2);
    assert_eq!(r.ftrace.kswapd_awake_ns, ns(r.kswapd_awake_seconds));
    assert_eq!(r.ftrace.direct_reclaims, 1);
    assert_eq!(r.ftrace.kswapd_writes.total(), 2);
    assert_eq!(r.ftrace.direct_writes.total(), 2);
    assert_eq!(r.series_stats["kswapd_full_sleeps"], 1.0);
    assert!((r.series_stats["kswapd_cpu_seconds"] - 21.9).abs() < 1e-9);

    // The series: the sample before the start is dropped.
    let s = r.series.as_ref().unwrap();
    assert_eq!(s.zone_names, ["DMA", "DMA32", "Normal"]);
    assert_eq!(s.interval_ns, 500_000_000);
    assert!(s.bdi_names.is_empty());
    let times: Vec<u64> = s.samples.iter().map(|x| x.time_ns).collect();
    assert_eq!(times, [ns(5.0) - ns(3.77), ns(100.0) - ns(3.77)]);
    let awake: Vec<bool> = s.samples.iter().map(|x| x.kswapd_awake).collect();
    assert_eq!(awake, [false, true]);
    let normal = s.samples[0].zones[2];
    assert_eq!(
        (normal.free_pages, normal.inactive_file_pages),
        (49871, 615)
    );
    assert_eq!(
        (normal.active_file_pages, normal.dirty_limit_pages),
        (151, 0)
    );
    assert_eq!(r.series_stats["kswapd_samples"], 1.0);
    assert!(r
        .series_stats
        .contains_key("Normal.dirty_of_inactive_kswapd"));
    // The steady window: the first sample with kswapd awake (100 s) to
    // dd's end; here that one sample.
    assert_eq!(s.first_workload_exit_ns, Some(ns(269.72) - ns(3.77)));
    assert_eq!(
        r.series_stats["Normal.dirty_of_inactive_steady"],
        r.series_stats["Normal.dirty_of_inactive_kswapd"]
    );

    // Tasks, zones, log.
    assert_eq!(r.tasks.len(), 1);
    assert_eq!(
        r.tasks[0].command,
        "dd if=/dev/zero of=mnt/zeroes bs=32k count=163840"
    );
    assert_eq!(r.tasks[0].message, "163840+0 records in");
    // From its task-start to its task-end.
    assert!((r.tasks[0].elapsed_seconds - (269.72 - 3.77)).abs() < 1e-9);
    let zones: Vec<(&str, u64, u64, u64)> = g
        .zones
        .iter()
        .map(|z| {
            (
                z.name.as_str(),
                z.spanned_pages,
                z.present_pages,
                z.scenario_pages,
            )
        })
        .collect();
    assert_eq!(
        zones,
        [
            ("DMA", 4080, 3917, 15 * 256),
            ("DMA32", 1044480, 438301, 1712 * 256),
            ("Normal", 65536, 64512, 252 * 256)
        ]
    );
    assert_eq!(g.log[0], "trace: enabled vmscan/mm_vmscan_writepage");
    assert!(g.log.iter().any(|l| l.contains("lost 3 events")));
    assert!(g.trace_text.contains("mm_vmscan_kswapd_sleep"));
    assert_eq!(
        g.trace_text.lines().count(),
        fixture("3.2-trace").lines().count()
    );
}

#[test]
fn missing_snapshots_are_named() {
    let recs: Vec<Record> = records_3_2()
        .into_iter()
        .filter(|r| {
            !(r.kind == kind::VMSTAT && r.tag == tag::AFTER
                || r.kind == kind::DISKSTAT && r.tag == tag::BEFORE)
        })
        .collect();
    let e = guest_run(&scenario(), &recs, 0, 500).unwrap_err();
    assert!(e.contains("vmstat after"), "{e}");
    assert!(e.contains("diskstat before"), "{e}");
    assert!(!e.contains("zoneinfo"), "{e}");
}

#[test]
fn an_error_record_is_the_error() {
    let mut recs = records_3_2();
    recs.push(rec(
        kind::ERROR,
        tag::NONE,
        ns(2.0),
        "mount /dev/vda: invalid argument\n",
    ));
    let e = guest_run(&scenario(), &recs, 0, 500).unwrap_err();
    assert_eq!(e, "mount /dev/vda: invalid argument");
    // Even with the snapshots missing, the guest's own error comes first.
    let recs = vec![rec(kind::ERROR, tag::NONE, 1, "no results disk")];
    assert_eq!(
        guest_run(&scenario(), &recs, 0, 500).unwrap_err(),
        "no results disk"
    );
}

#[test]
fn a_cut_task_cuts_the_run() {
    let recs: Vec<Record> = records_3_2()
        .into_iter()
        .map(|r| match r.kind.as_str() {
            kind::TASK_END => rec(kind::TASK_END, tag::NONE, r.t_ns, &task_end("dd", true)),
            _ => r,
        })
        .collect();
    let g = guest_run(&scenario(), &recs, 0, 500).unwrap();
    assert_eq!((g.report.outcome, g.report.cut), (Outcome::TimeLimit, true));
    assert_eq!(g.report.tasks[0].exit_status, 137);
    // A task that started and never ended also cuts the run.
    let mut recs = records_3_2();
    recs.insert(10, rec(kind::TASK_START, tag::NONE, ns(4.0), "sync"));
    let g = guest_run(&scenario(), &recs, 0, 500).unwrap();
    assert!(g.report.cut);
    let t = &g.report.tasks[1];
    assert_eq!(
        (t.name.as_str(), t.exit_status, t.command.as_str()),
        ("sync", -1, "")
    );
    // Never ended: timed to the `after` snapshot (305.35 s).
    assert!((t.elapsed_seconds - (305.35 - 4.0)).abs() < 1e-9);
}

#[test]
fn a_bad_task_end_is_an_error() {
    let mut recs = records_3_2();
    recs.push(rec(kind::TASK_END, tag::NONE, ns(270.0), "{not json"));
    assert!(guest_run(&scenario(), &recs, 0, 500)
        .unwrap_err()
        .contains("task-end"));
}

/// A 6.x guest: node-based counters, no per-zone scan/steal names,
/// per-zone allocstall, dirty pages only per node.
#[test]
fn run_of_a_6_x_kernel() {
    let before = fixture("6.18-vmstat");
    let bump = |name: &str, by: i64, text: &str| -> String {
        text.lines()
            .map(|l| match l.split_once(' ') {
                Some((k, v)) if k == name => format!("{k} {}", v.parse::<i64>().unwrap() + by),
                _ => l.to_string(),
            })
            .collect::<Vec<_>>()
            .join("\n")
    };
    let mut after = before.clone();
    for (k, by) in [
        ("pgscan_kswapd", 5000),
        ("pgsteal_kswapd", 4000),
        ("pgsteal_direct", 30),
        ("pgscan_direct", 40),
        ("allocstall_normal", 2),
        ("allocstall_movable", 1),
        ("pgalloc_normal", 9000),
        ("pgalloc_dma32", 1000),
    ] {
        after = bump(k, by, &after);
    }
    let zi = fixture("6.18-zoneinfo");
    let recs = vec![
        rec(kind::UNAME, tag::NONE, 1, "6.1.0-18-cloud-amd64\n"),
        rec(kind::VMSTAT, tag::BEFORE, ns(2.0), &before),
        rec(kind::ZONEINFO, tag::BEFORE, ns(2.0), &zi),
        rec(
            kind::DISKSTAT,
            tag::BEFORE,
            ns(2.0),
            &fixture("6.18-vda.stat"),
        ),
        rec(kind::TASK_START, tag::NONE, ns(2.5), "dd"),
        rec(kind::ZONEINFO, tag::SAMPLE, ns(3.0), &zi),
        rec(kind::TRACE, tag::NONE, ns(3.0), &fixture("6.1-trace")),
        rec(kind::TASK_END, tag::NONE, ns(22.5), &task_end("dd", false)),
        rec(kind::VMSTAT, tag::AFTER, ns(23.0), &after),
        rec(kind::ZONEINFO, tag::AFTER, ns(23.0), &zi),
        rec(
            kind::DISKSTAT,
            tag::AFTER,
            ns(23.0),
            &fixture("6.18-vda.stat"),
        ),
    ];
    let g = guest_run(&scenario(), &recs, 0, 1000).unwrap();
    let r = &g.report;
    assert_eq!(g.kernel_release, "6.1.0-18-cloud-amd64");
    assert_eq!(r.elapsed_seconds, 20.0);
    assert_eq!(r.vmstat["pgscan_kswapd"], 5000);
    assert_eq!(r.vmstat["pgscan_direct"], 40);
    assert_eq!(r.vmstat["pgsteal"], 4030);
    assert_eq!(r.vmstat["allocstall"], 3);
    assert_eq!(r.vmstat["pgalloc_normal"], 9000);
    assert!(!r.vmstat.contains_key("pgscan_kswapd_normal"));
    assert!(!r.vmstat.contains_key("pgsteal_normal"));
    // No per-zone vmscan counters on 4.8+, only the writes by pfn.
    assert_eq!(r.zoneinfo["normal"].len(), 1);
    assert_eq!(r.zoneinfo["normal"]["pgwrite_reclaim"], 1);
    assert!(!r.zoneinfo.contains_key("movable"));
    // Same disk counters before and after: nothing written.
    assert_eq!(
        (
            r.devices[0].write_requests,
            r.devices[0].write_mb_per_second
        ),
        (0, 0.0)
    );
    // The node's dirty pages go to the zone with the most file pages.
    let s = r.series.as_ref().unwrap();
    assert_eq!(s.zone_names, ["DMA", "DMA32", "Normal"]);
    let z = &s.samples[0].zones;
    assert_eq!(
        (z[2].dirty_pages, z[2].inactive_file_pages),
        (18816, 856807)
    );
    assert_eq!(z[2].active_file_pages, 587436);
    assert_eq!((z[0].dirty_pages, z[1].dirty_pages), (0, 0));
    assert_eq!(z[1].free_pages, 772915);
    // The trace clock runs 0.05 s ahead of the records' (its marker).
    assert!((r.kswapd_awake_seconds - (13.0 - 12.345678)).abs() < 1e-9);
    assert_eq!(r.series_stats["kswapd_full_sleeps"], 1.0);
    assert!(!r.series_stats.contains_key("kswapd_cpu_seconds"));
    let managed: Vec<u64> = g.zones.iter().map(|z| z.managed_pages).collect();
    assert_eq!(managed, [3840, 772915, 3047424]);
}
