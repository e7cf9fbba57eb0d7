//! Tests of the mmtests report. The fixtures carry the figures of the XFS
//! fs_mark and MICRO tables of the July 2011 report, so the snapshots (in
//! `report/snapshots/`) read side by side with it.

use super::sections::*;
use super::*;

type TraceField = fn(&mut ReclaimTraceStats) -> &mut u64;

struct Fixture {
    labels: [&'static str; 6],
    user_sys: [f64; 6],
    elapsed: [f64; 6],
    vmstat: Vec<(&'static str, [i64; 6])>,
    trace: Vec<(TraceField, [u64; 6])>,
    /// Seconds, converted to the `_ns` fields.
    stall_s: [f64; 6],
    awake_s: [f64; 6],
    /// Files/s min, mean, max; Overhead min, mean, max.
    fsmark: Option<[[f64; 6]; 6]>,
}

/// 25 loops with the given min, mean and max.
fn loops(min: f64, mean: f64, max: f64) -> Vec<f64> {
    let rest = (25.0 * mean - min - max) / 23.0;
    let mut v = vec![min, max];
    v.extend(std::iter::repeat_n(rest, 23));
    v
}

fn build(f: &Fixture) -> Vec<MmtestsColumn> {
    (0..6)
        .map(|i| {
            let mut t = ReclaimTraceStats::default();
            for (field, v) in &f.trace {
                *field(&mut t) = v[i];
            }
            t.direct_stall_ns = (f.stall_s[i] * 1e9).round() as u64;
            t.kswapd_awake_ns = (f.awake_s[i] * 1e9).round() as u64;
            MmtestsColumn {
                label: f.labels[i].to_string(),
                user_sys_seconds: f.user_sys[i],
                elapsed_seconds: f.elapsed[i],
                vmstat: f
                    .vmstat
                    .iter()
                    .map(|(k, v)| (k.to_string(), v[i]))
                    .collect(),
                ftrace: t,
                fsmark: f.fsmark.map(|m| FsMarkLoops {
                    files_per_second: loops(m[0][i], m[1][i], m[2][i]),
                    overhead_us: loops(m[3][i], m[4][i], m[5][i]),
                }),
            }
        })
        .collect()
}

const PATCHES: [&str; 5] = [
    "3.0.0-rc6-nodirectwb-v1r3",
    "3.0.0-rc6-lesskswapdwb-v1r3",
    "3.0.0-rc6-throttle-v1r10",
    "3.0.0-rc6-immediate-v1r10",
    "3.0.0-rc6-prioinode-v1r10",
];

fn labels(first: &'static str) -> [&'static str; 6] {
    [
        first, PATCHES[0], PATCHES[1], PATCHES[2], PATCHES[3], PATCHES[4],
    ]
}

fn fsmark_fixture() -> Fixture {
    let direct_scanned: [u64; 6] = [4865170, 4903030, 1359813, 408460, 101716, 199483];
    let kswapd_scanned: [u64; 6] = [8202014, 8146467, 16980235, 19428420, 14269907, 14103872];
    let kswapd_reclaimed: [u64; 6] = [4700400, 4665093, 8205753, 9143997, 9449722, 9358347];
    let direct_reclaimed: [u64; 6] = [4864514, 4901411, 1359368, 407711, 100520, 198323];
    let pgsteal: [i64; 6] =
        std::array::from_fn(|i| (kswapd_reclaimed[i] + direct_reclaimed[i]) as i64);
    Fixture {
        labels: labels("fsmark-3.0.0-rc6-vanilla"),
        user_sys: [34.97, 35.31, 31.16, 30.47, 29.85, 29.66],
        elapsed: [567.08, 566.84, 551.75, 525.81, 534.91, 526.32],
        vmstat: vec![
            ("pgpgin", [189840, 196608, 189864, 128120, 126148, 151888]),
            (
                "pgpgout",
                [38439897, 38420872, 38422937, 38395008, 38367766, 38396612],
            ),
            ("pswpin", [19468, 20555, 20024, 4933, 3799, 4588]),
            ("pswpout", [10019, 10388, 10353, 4737, 3617, 4084]),
            ("pgscan_direct", direct_scanned.map(|x| x as i64)),
            ("pgscan_kswapd", kswapd_scanned.map(|x| x as i64)),
            ("kswapd_steal", kswapd_reclaimed.map(|x| x as i64)),
            ("pgsteal", pgsteal),
            ("nr_vmscan_write", [14511, 14721, 10387, 4819, 3617, 4084]),
            ("nr_vmscan_write_skip", [0, 30, 2300502, 2774735, 0, 0]),
            ("nr_vmscan_invalidate", [0, 0, 0, 0, 5155, 3509]),
            ("nr_vmscan_throttled", [0, 0, 0, 65112, 190, 190]),
            ("slabs_scanned", [16512, 17920, 18048, 17536, 16640, 17408]),
            ("kswapd_inodesteal", [5180, 5318, 5177, 5178, 5179, 5193]),
            ("kswapd_skip_congestion_wait", [131, 0, 4, 44, 0, 0]),
            ("compact_stall", [2, 2, 0, 0, 5, 1]),
            ("compact_success", [2, 2, 0, 0, 2, 1]),
            ("compact_fail", [0, 0, 0, 0, 3, 0]),
            ("compact_pages_moved", [0, 0, 0, 0, 1049, 0]),
            ("compact_pagemigrate_failed", [0, 0, 0, 0, 96, 0]),
        ],
        trace: vec![
            (
                |t| &mut t.direct_reclaims,
                [89145, 89785, 24921, 7546, 1954, 3747],
            ),
            (|t| &mut t.direct_pages_scanned, direct_scanned),
            (|t| &mut t.direct_pages_reclaimed, direct_reclaimed),
            (|t| &mut t.direct_writes.anon_async, [0, 0, 0, 3, 1, 0]),
            (
                |t| &mut t.wake_kswapd_requests,
                [11152, 11021, 21223, 24029, 26797, 26672],
            ),
            (|t| &mut t.kswapd_wakeups, [421, 397, 761, 778, 776, 742]),
            (|t| &mut t.kswapd_pages_scanned, kswapd_scanned),
            (|t| &mut t.kswapd_pages_reclaimed, kswapd_reclaimed),
            (
                |t| &mut t.kswapd_writes.file_async,
                [4483, 4286, 0, 1, 0, 0],
            ),
            (
                |t| &mut t.kswapd_writes.anon_async,
                [10027, 10435, 10387, 4815, 3616, 4084],
            ),
            (
                |t| &mut t.direct_wait_iff_congested.number,
                [0, 1, 0, 56, 8, 0],
            ),
            (|t| &mut t.kswapd_congestion_wait.number, [4, 0, 1, 0, 6, 0]),
            (
                |t| &mut t.kswapd_congestion_wait.delayed_us,
                [400_000, 0, 100_000, 0, 501_000, 0],
            ),
            (|t| &mut t.kswapd_congestion_wait.full, [4, 0, 1, 0, 5, 0]),
            (
                |t| &mut t.kswapd_wait_iff_congested.number,
                [0, 0, 0, 65056, 189, 190],
            ),
            (
                |t| &mut t.kswapd_wait_iff_congested.delayed_us,
                [0, 0, 0, 1_400, 0, 0],
            ),
        ],
        stall_s: [0.26, 0.25, 0.08, 0.05, 0.04, 0.08],
        awake_s: [493.26, 494.05, 430.09, 420.52, 428.55, 428.81],
        fsmark: Some([
            [5.30, 5.10, 5.40, 5.70, 5.80, 5.70],
            [6.93, 6.96, 7.11, 7.52, 7.44, 7.48],
            [8.10, 8.60, 8.20, 9.50, 9.00, 9.10],
            [6623.0, 6417.0, 6035.0, 6354.0, 6213.0, 6491.0],
            [29678.24, 40053.96, 18278.56, 16365.20, 11987.40, 15606.36],
            [339993.0, 588147.0, 148281.0, 140568.0, 77836.0, 124728.0],
        ]),
    }
}

/// MICRO, with the scan and steal counters given per zone (dma32 + normal)
/// to exercise the zone sums.
fn micro_fixture() -> Fixture {
    let direct_scanned: [u64; 6] = [1834430, 2016994, 1623675, 1843754, 1922668, 1941916];
    let kswapd_scanned: [u64; 6] = [1399007, 1272637, 1842874, 1810867, 1425366, 1426536];
    let kswapd_reclaimed: [u64; 6] = [637708, 657418, 860512, 884531, 906608, 927206];
    let direct_reclaimed: [u64; 6] = [536567, 517876, 314115, 289472, 272265, 252361];
    let pgsteal: [i64; 6] =
        std::array::from_fn(|i| (kswapd_reclaimed[i] + direct_reclaimed[i]) as i64);
    let dma32 = |v: [i64; 6]| v.map(|x| x / 3);
    let normal = |v: [i64; 6]| v.map(|x| x - x / 3);
    let (ds, ks) = (
        direct_scanned.map(|x| x as i64),
        kswapd_scanned.map(|x| x as i64),
    );
    Fixture {
        labels: labels("micro-3.0.0-rc6-vanilla"),
        user_sys: [6.95, 7.2, 6.84, 6.33, 5.97, 6.13],
        elapsed: [56.34, 65.04, 66.53, 63.24, 52.48, 63.00],
        vmstat: vec![
            ("pgpgin", [46928, 50660, 48504, 42888, 42648, 43036]),
            (
                "pgpgout",
                [4990816, 4994987, 4987572, 4999242, 4981324, 4990627],
            ),
            ("pswpin", [2573, 3234, 2470, 1396, 1352, 1297]),
            ("pswpout", [2316, 2578, 2360, 937, 912, 873]),
            ("pgscan_direct_dma32", dma32(ds)),
            ("pgscan_direct_normal", normal(ds)),
            ("pgscan_kswapd_dma32", dma32(ks)),
            ("pgscan_kswapd_normal", normal(ks)),
            ("kswapd_steal", kswapd_reclaimed.map(|x| x as i64)),
            ("pgsteal_dma32", dma32(pgsteal)),
            ("pgsteal_normal", normal(pgsteal)),
            ("nr_vmscan_write", [2706, 2910, 2416, 969, 912, 873]),
            ("nr_vmscan_write_skip", [0, 12640, 148339, 166844, 0, 0]),
            ("nr_vmscan_invalidate", [0, 0, 0, 0, 12, 58]),
            ("nr_vmscan_throttled", [0, 0, 0, 4788, 7, 9]),
            ("slabs_scanned", [4096, 5248, 5120, 6656, 4480, 16768]),
            ("pginodesteal", [531, 1189, 348, 1166, 700, 3783]),
            ("kswapd_inodesteal", [164, 0, 349, 0, 0, 9]),
            ("kswapd_skip_congestion_wait", [78, 35, 74, 51, 14, 10]),
            ("compact_stall", [0, 0, 1, 0, 0, 0]),
            ("compact_success", [0, 0, 1, 0, 0, 0]),
        ],
        trace: vec![
            (
                |t| &mut t.direct_reclaims,
                [9823, 9477, 5737, 5347, 5078, 4720],
            ),
            (|t| &mut t.direct_pages_scanned, direct_scanned),
            (|t| &mut t.direct_pages_reclaimed, direct_reclaimed),
            (|t| &mut t.direct_writes.anon_async, [0, 0, 0, 0, 16, 0]),
            (
                |t| &mut t.wake_kswapd_requests,
                [1636, 1692, 2177, 2403, 2707, 2757],
            ),
            (|t| &mut t.kswapd_wakeups, [28, 29, 30, 34, 15, 23]),
            (|t| &mut t.kswapd_pages_scanned, kswapd_scanned),
            (|t| &mut t.kswapd_pages_reclaimed, kswapd_reclaimed),
            (
                |t| &mut t.kswapd_writes.file_async,
                [380, 332, 56, 32, 0, 0],
            ),
            (
                |t| &mut t.kswapd_writes.anon_async,
                [2326, 2578, 2360, 937, 896, 873],
            ),
            (
                |t| &mut t.direct_wait_iff_congested.number,
                [768, 793, 704, 1359, 608, 674],
            ),
            (
                |t| &mut t.kswapd_congestion_wait.number,
                [41, 22, 58, 43, 78, 92],
            ),
            (
                |t| &mut t.kswapd_congestion_wait.delayed_us,
                [
                    2_937_500, 2_200_000, 4_543_000, 4_300_000, 7_800_000, 9_200_999,
                ],
            ),
            (
                |t| &mut t.kswapd_congestion_wait.full,
                [29, 22, 45, 43, 78, 92],
            ),
            (
                |t| &mut t.kswapd_wait_iff_congested.number,
                [0, 0, 0, 4284, 4, 9],
            ),
        ],
        stall_s: [2.06, 2.10, 1.62, 2.65, 2.25, 1.86],
        awake_s: [49.44, 56.39, 54.31, 55.45, 47.00, 56.74],
        fsmark: None,
    }
}

/// Blank-separated cells, `( 1.00%)` taken as one cell `(1.00%)`.
fn split_cells(s: &str) -> Vec<String> {
    let mut s = s.to_string();
    while s.contains("( ") {
        s = s.replace("( ", "(");
    }
    s.split_whitespace().map(String::from).collect()
}

/// The cells of the row named `label`.
fn cells(report: &str, label: &str) -> Vec<String> {
    let line = report
        .lines()
        .find(|l| l.starts_with(label) && l[label.len()..].starts_with("  "))
        .unwrap_or_else(|| panic!("no row {label:?} in\n{report}"));
    split_cells(&line[label.len()..])
}

fn assert_row(report: &str, label: &str, want: &str) {
    assert_eq!(cells(report, label), split_cells(want), "row {label:?}");
}

#[test]
fn fsmark_report_snapshot() {
    let report = render("FS-Mark", &build(&fsmark_fixture()));
    insta::with_settings!({ snapshot_path => "../snapshots" }, {
        insta::assert_snapshot!("mmtests_fsmark", report);
    });
}

#[test]
fn micro_report_snapshot() {
    let report = render("MICRO", &build(&micro_fixture()));
    insta::with_settings!({ snapshot_path => "../snapshots" }, {
        insta::assert_snapshot!("mmtests_micro", report);
    });
}

/// Rows whose figures the fixtures determine fully print what the 2011
/// report printed.
#[test]
fn reproduces_the_2011_figures() {
    let r = render("FS-Mark", &build(&fsmark_fixture()));
    let rows = [
        ("Files/s  min", "5.30 ( 0.00%) 5.10 ( -3.92%) 5.40 ( 1.85%) 5.70 ( 7.02%) 5.80 ( 8.62%) 5.70 ( 7.02%)"),
        ("Files/s  max", "8.10 ( 0.00%) 8.60 ( 5.81%) 8.20 ( 1.22%) 9.50 (14.74%) 9.00 (10.00%) 9.10 (10.99%)"),
        ("Overhead min", "6623.00 ( 0.00%) 6417.00 ( 3.21%) 6035.00 ( 9.74%) 6354.00 ( 4.23%) 6213.00 ( 6.60%) 6491.00 ( 2.03%)"),
            // Deltas wider than %5.2f widen every delta of the table.
        ("Overhead mean", "29678.24 (  0.00%) 40053.96 (-25.90%) 18278.56 ( 62.37%) 16365.20 ( 81.35%) 11987.40 (147.58%) 15606.36 ( 90.17%)"),
        ("Overhead max", "339993.00 (  0.00%) 588147.00 (-42.19%) 148281.00 (129.29%) 140568.00 (141.87%) 77836.00 (336.81%) 124728.00 (172.59%)"),
        ("Direct pages reclaimed", "4864514 4901411 1359368 407711 100520 198323"),
        ("Kswapd efficiency", "57% 57% 48% 47% 66% 66%"),
        ("Kswapd velocity", "14463.592 14371.722 30775.233 36949.506 26677.211 26797.142"),
        ("Direct efficiency", "99% 99% 99% 99% 98% 99%"),
        ("Direct velocity", "8579.336 8649.760 2464.546 776.821 190.155 379.015"),
        ("Percentage direct scans", "37% 37% 7% 2% 0% 1%"),
        ("Total pages scanned", "13067184 13049497 18340048 19836880 14371623 14303355"),
        ("Total pages reclaimed", "9564914 9566504 9565121 9551708 9550242 9556670"),
        ("%age total pages scanned/reclaimed", "73.20% 73.31% 52.15% 48.15% 66.45% 66.81%"),
        ("%age total pages scanned/written", "0.11% 0.11% 0.06% 0.02% 0.03% 0.03%"),
        ("%age  file pages scanned/written", "0.03% 0.03% 0.00% 0.00% 0.00% 0.00%"),
        ("Percentage Time Spent Direct Reclaim", "0.74% 0.70% 0.26% 0.16% 0.13% 0.27%"),
        ("Percentage Time kswapd Awake", "86.98% 87.16% 77.95% 79.98% 80.12% 81.47%"),
        ("KSwapd time   congest     waited", "400ms 0ms 100ms 0ms 501ms 0ms"),
        ("KSwapd time   conditional waited", "0ms 0ms 0ms 1ms 0ms 0ms"),
    ];
    for (label, want) in rows {
        assert_row(&r, label, want);
    }
    let r = render("MICRO", &build(&micro_fixture()));
    let rows = [
        (
            "User/Sys Time Running Test (seconds)",
            "6.95 7.2 6.84 6.33 5.97 6.13",
        ),
        (
            "Total Elapsed Time (seconds)",
            "56.34 65.04 66.53 63.24 52.48 63.00",
        ),
        (
            "Direct pages scanned",
            "1834430 2016994 1623675 1843754 1922668 1941916",
        ),
        (
            "Direct pages reclaimed",
            "536567 517876 314115 289472 272265 252361",
        ),
        ("Kswapd efficiency", "45% 51% 46% 48% 63% 64%"),
        (
            "Kswapd velocity",
            "24831.505 19566.990 27699.895 28634.836 27160.175 22643.429",
        ),
        ("Direct efficiency", "29% 25% 19% 15% 14% 12%"),
        (
            "Direct velocity",
            "32559.993 31011.593 24405.156 29154.870 36636.204 30824.063",
        ),
        ("Percentage direct scans", "56% 61% 46% 50% 57% 57%"),
        (
            "%age total pages scanned/reclaimed",
            "36.32% 35.73% 33.88% 32.12% 35.21% 35.02%",
        ),
        (
            "%age total pages scanned/written",
            "0.08% 0.09% 0.07% 0.03% 0.03% 0.03%",
        ),
        (
            "%age  file pages scanned/written",
            "0.01% 0.01% 0.00% 0.00% 0.00% 0.00%",
        ),
        (
            "Percentage Time Spent Direct Reclaim",
            "22.86% 22.58% 19.15% 29.51% 27.37% 23.28%",
        ),
        (
            "Percentage Time kswapd Awake",
            "87.75% 86.70% 81.63% 87.68% 89.56% 90.06%",
        ),
        (
            "KSwapd time   congest     waited",
            "2937ms 2200ms 4543ms 4300ms 7800ms 9200ms",
        ),
    ];
    for (label, want) in rows {
        assert_row(&r, label, want);
    }
}

#[test]
fn deltas_follow_the_2011_report() {
    let d = |base, new, better| format!("{:.2}", pct_delta(base, new, better));
    assert_eq!(d(5.30, 5.10, Better::Higher), "-3.92");
    assert_eq!(d(5.30, 5.40, Better::Higher), "1.85");
    assert_eq!(d(0.89, 0.99, Better::Higher), "10.10");
    assert_eq!(d(29678.24, 40053.96, Better::Lower), "-25.90");
    assert_eq!(d(29678.24, 11987.40, Better::Lower), "147.58");
    assert_eq!(d(339993.0, 77836.0, Better::Lower), "336.81");
}

#[test]
fn deltas_at_zero() {
    for better in [Better::Higher, Better::Lower] {
        assert_eq!(pct_delta(0.0, 0.0, better), 0.0);
        assert_eq!(pct_delta(3.0, 3.0, better), 0.0);
    }
    // Division by zero: mmtests' pndiff / pdiff values.
    assert_eq!(pct_delta(5.0, 0.0, Better::Higher), -99.0);
    assert_eq!(pct_delta(5.0, 0.0, Better::Lower), 100.0);
    // From nothing: the formula's value.
    assert_eq!(pct_delta(0.0, 5.0, Better::Higher), 100.0);
    assert_eq!(pct_delta(0.0, 5.0, Better::Lower), -100.0);
    assert!(pct_delta(1.0, 1e-300, Better::Lower).is_finite());
}

#[test]
fn population_stddev() {
    let s = summarise(&[2.0, 4.0, 4.0, 4.0, 5.0, 5.0, 7.0, 9.0]);
    assert_eq!(
        s,
        Summary {
            min: 2.0,
            mean: 5.0,
            stddev: 2.0,
            max: 9.0
        }
    );
    assert_eq!(summarise(&[]), Summary::default());
    assert_eq!(summarise(&[3.5]).stddev, 0.0);
}

#[test]
fn integer_percentages_truncate() {
    assert_eq!(int_pct(4864514, 4865170, 100), 99);
    assert_eq!(int_pct(101716, 101716 + 14269907, 0), 0);
    assert_eq!(int_pct(0, 0, 100), 100);
    assert_eq!(pct(1.0, 0.0), 0.0);
}

#[test]
fn missing_counters_are_zero() {
    let col = MmtestsColumn {
        label: "empty".into(),
        ..Default::default()
    };
    assert_eq!(
        VmReclaim::of(&col.vmstat),
        VmReclaim {
            direct_scanned: 0,
            kswapd_scanned: 0,
            kswapd_reclaimed: 0,
            direct_reclaimed: 0
        }
    );
    let r = render("MICRO", &[col]);
    for label in ["Page Ins", "Direct pages scanned", "Direct reclaims"] {
        assert_row(&r, label, "0");
    }
    // Compaction is not modelled: without its counters, no rows.
    assert!(!r.contains("Compaction"), "{r}");
    assert_row(&r, "Kswapd efficiency", "100%");
    assert_row(&r, "Direct efficiency", "100%");
    assert_row(&r, "Percentage direct scans", "0%");
    assert_row(&r, "Kswapd velocity", "0.000");
    assert_row(&r, "%age total pages scanned/reclaimed", "0.00%");
    assert_row(&r, "Percentage Time Spent Direct Reclaim", "0.00%");
    assert_row(&r, "Percentage Time kswapd Awake", "0.00%");
    assert_row(&r, "User/Sys Time Running Test (seconds)", "0");
    assert_row(&r, "Direct time   congest     waited", "0ms");
}

#[test]
fn zone_sums_and_later_names() {
    let v: BTreeMap<String, i64> = [
        ("pgscan_direct_dma", 1),
        ("pgscan_direct_dma32", 10),
        ("pgscan_direct_normal", 100),
        ("pgscan_direct_throttle", 5000), // not a zone
        ("pgscan_kswapd_normal", 7),
        ("pgsteal_kswapd_normal", 40), // 3.4+: no kswapd_steal, no pgsteal
        ("pgsteal_direct_dma32", 3),
        ("pgsteal_direct_normal", 30),
    ]
    .into_iter()
    .map(|(k, v)| (k.to_string(), v))
    .collect();
    let r = VmReclaim::of(&v);
    assert_eq!(
        r,
        VmReclaim {
            direct_scanned: 111,
            kswapd_scanned: 7,
            kswapd_reclaimed: 40,
            direct_reclaimed: 33
        }
    );
    // A total key wins over the zone keys.
    let mut v = v;
    v.insert("pgscan_direct".into(), 9);
    assert_eq!(VmReclaim::of(&v).direct_scanned, 9);
}

#[test]
fn labels_split_like_the_2011_headers() {
    let s = |l: &str| {
        let (a, b) = split_label(l);
        format!("{a}|{b}")
    };
    assert_eq!(s("fsmark-3.0.0-rc6-vanilla"), "fsmark-3.0.0|rc6-vanilla");
    assert_eq!(s("micro-3.0.0-rc6-vanilla"), "micro-3.0.0|rc6-vanilla");
    assert_eq!(s("3.0.0-rc6-nodirectwb-v1r3"), "3.0.0-rc6|nodirectwb-v1r3");
    assert_eq!(
        s("3.0.0-rc6-lesskswapdwb-v1r3"),
        "3.0.0-rc6|lesskswapdwb-v1r3"
    );
    assert_eq!(s("3.0.0-rc6-prioinode-v1r10"), "3.0.0-rc6|prioinode-v1r10");
    assert_eq!(s("vanilla"), "|vanilla");
    assert_eq!(s("a-b-c"), "a|b-c");
}

#[test]
fn user_sys_prints_like_perl() {
    assert_eq!(perl_2dp(7.2), "7.2");
    assert_eq!(perl_2dp(6.95), "6.95");
    assert_eq!(perl_2dp(350.9), "350.9");
    assert_eq!(perl_2dp(7.0), "7");
    assert_eq!(perl_2dp(0.0), "0");
    assert_eq!(perl_2dp(-0.001), "0");
    assert_eq!(perl_2dp(10.004), "10");
}

#[test]
fn header_aligns_with_columns() {
    let r = render("FS-Mark", &build(&fsmark_fixture()));
    let lines: Vec<&str> = r.lines().collect();
    // Header halves end where the cells below them end.
    let ends = |l: &str| -> Vec<usize> {
        let mut v = Vec::new();
        let b = l.as_bytes();
        for i in 0..b.len() {
            if b[i] != b' ' && b.get(i + 1).is_none_or(|&c| c == b' ') {
                v.push(i + 1);
            }
        }
        v
    };
    let vmscan = lines
        .iter()
        .position(|l| *l == "FTrace Reclaim Statistics: vmscan")
        .unwrap();
    assert_eq!(ends(lines[vmscan + 1]), ends(lines[vmscan + 2]));
    let head = ends(lines[vmscan + 2]);
    let row = ends(lines[vmscan + 3]);
    assert_eq!(head, row[row.len() - 6..].to_vec());
    assert!(r.lines().all(|l| !l.ends_with(' ')), "trailing blanks");
    assert!(r.ends_with('\n'));
    assert_eq!(render("MICRO", &[]), "MICRO\n");
}
