//! The rows of the statistics sections of the mmtests report: duration,
//! vmstat, ftrace vmscan and ftrace congestion_wait. Each function's
//! documentation says where its rows come from.

use std::collections::BTreeMap;

use super::{row, Line, MmtestsColumn};
use crate::report::ZONE_SUFFIXES;
use crate::trace::stats::{ReclaimTraceStats, ReclaimWrites, WaitTotals};

/// A sum of two 2-decimal figures as Perl prints it: at most two decimals,
/// trailing zeros dropped (the 2011 report prints `7.2`).
pub(super) fn perl_2dp(x: f64) -> String {
    let s = format!("{x:.2}");
    let s = s.trim_end_matches('0').trim_end_matches('.');
    if s == "-0" {
        "0".to_string()
    } else {
        s.to_string()
    }
}

/// `num * 100 / den`, 0 when `den` is 0.
pub(super) fn pct(num: f64, den: f64) -> f64 {
    if den == 0.0 {
        0.0
    } else {
        num * 100.0 / den
    }
}

/// `num * 100 / den` truncated, `if_zero` when `den` is 0.
pub(super) fn int_pct(num: i64, den: i64, if_zero: i64) -> i64 {
    if den == 0 {
        if_zero
    } else {
        (num as i128 * 100 / den as i128) as i64
    }
}

/// Duration rows: `User/Sys Time Running Test (seconds)` =
/// `user_sys_seconds` (printed as Perl prints a number, see [`perl_2dp`]);
/// `Total Elapsed Time (seconds)` = `elapsed_seconds`, `%.2f`.
pub(super) fn duration_lines(cols: &[MmtestsColumn]) -> Vec<Line> {
    vec![
        row("User/Sys Time Running Test (seconds)", cols, |c| {
            perl_2dp(c.user_sys_seconds)
        }),
        row("Total Elapsed Time (seconds)", cols, |c| {
            format!("{:.2}", c.elapsed_seconds)
        }),
    ]
}

/// A /proc/vmstat counter: the key itself, else the sum of its per-zone
/// keys (`<name>_dma`, `_dma32`, `_normal`, `_high`, `_movable`), else 0.
fn counter(v: &BTreeMap<String, i64>, name: &str) -> i64 {
    match v.get(name) {
        Some(&x) => x,
        None => ZONE_SUFFIXES
            .iter()
            .filter_map(|z| v.get(&format!("{name}_{z}")))
            .sum(),
    }
}

fn has_counter(v: &BTreeMap<String, i64>, name: &str) -> bool {
    v.contains_key(name)
        || ZONE_SUFFIXES
            .iter()
            .any(|z| v.contains_key(&format!("{name}_{z}")))
}

/// Reclaim figures derived from /proc/vmstat.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct VmReclaim {
    pub(super) direct_scanned: i64,
    pub(super) kswapd_scanned: i64,
    pub(super) kswapd_reclaimed: i64,
    pub(super) direct_reclaimed: i64,
}

impl VmReclaim {
    /// Scans: `pgscan_direct` / `pgscan_kswapd` (or their zone sums).
    /// Kswapd reclaimed: `kswapd_steal` (3.0; else `pgsteal_kswapd`, 3.4+).
    /// Direct reclaimed: `pgsteal − kswapd reclaimed` (3.0 `pgsteal` counts
    /// every reclaimer; else `pgsteal_direct`, 3.4+).
    pub(super) fn of(v: &BTreeMap<String, i64>) -> Self {
        let kswapd_reclaimed = match v.get("kswapd_steal") {
            Some(&x) => x,
            None => counter(v, "pgsteal_kswapd"),
        };
        let direct_reclaimed = if has_counter(v, "pgsteal") {
            counter(v, "pgsteal") - kswapd_reclaimed
        } else {
            counter(v, "pgsteal_direct")
        };
        VmReclaim {
            direct_scanned: counter(v, "pgscan_direct"),
            kswapd_scanned: counter(v, "pgscan_kswapd"),
            kswapd_reclaimed,
            direct_reclaimed,
        }
    }
}

/// vmstat rows printed straight from one counter, before the reclaim rows.
const VMSTAT_HEAD: [(&str, &str); 4] = [
    ("Page Ins", "pgpgin"),
    ("Page Outs", "pgpgout"),
    ("Swap Ins", "pswpin"),
    ("Swap Outs", "pswpout"),
];

/// vmstat rows printed straight from one counter, after the reclaim rows.
/// `nr_vmscan_write_skip`, `nr_vmscan_invalidate` and `nr_vmscan_throttled`
/// came with the 2011 series, not with 3.0.
const VMSTAT_TAIL: [(&str, &str); 8] = [
    ("Page writes by reclaim", "nr_vmscan_write"),
    ("Page writes skipped", "nr_vmscan_write_skip"),
    ("Page reclaim invalidate", "nr_vmscan_invalidate"),
    ("Page reclaim throttled", "nr_vmscan_throttled"),
    ("Slabs scanned", "slabs_scanned"),
    ("Direct inode steals", "pginodesteal"),
    ("Kswapd inode steals", "kswapd_inodesteal"),
    ("Kswapd skipped wait", "kswapd_skip_congestion_wait"),
];

/// mmtests' compaction rows. wbsim does not model compaction (no
/// `compact_*` counter is ever counted), so these print only for columns
/// that carry the counters, i.e. a real kernel's vmstat.
const VMSTAT_COMPACTION: [(&str, &str); 5] = [
    ("Compaction stalls", "compact_stall"),
    ("Compaction success", "compact_success"),
    ("Compaction failures", "compact_fail"),
    ("Compaction pages moved", "compact_pages_moved"),
    ("Compaction move failure", "compact_pagemigrate_failed"),
];

/// The vmstat rows: [`VMSTAT_HEAD`], then the reclaim rows from
/// [`VmReclaim`] — pages scanned and reclaimed; efficiency = reclaimed ×
/// 100 / scanned (`%d%%`); velocity = scanned / elapsed seconds (`%.3f`);
/// `Percentage direct scans` = direct × 100 / (direct + kswapd) scanned —
/// then [`VMSTAT_TAIL`].
pub(super) fn vmstat_lines(cols: &[MmtestsColumn]) -> Vec<Line> {
    let flat = |(label, key): (&'static str, &'static str)| {
        row(label, cols, move |c| {
            c.vmstat.get(key).copied().unwrap_or(0).to_string()
        })
    };
    let rec = |label, f: fn(&VmReclaim, f64) -> String| {
        row(label, cols, move |c| {
            f(&VmReclaim::of(&c.vmstat), c.elapsed_seconds)
        })
    };
    let mut lines: Vec<Line> = VMSTAT_HEAD.into_iter().map(flat).collect();
    lines.extend([
        rec("Direct pages scanned", |r, _| r.direct_scanned.to_string()),
        rec("Kswapd pages scanned", |r, _| r.kswapd_scanned.to_string()),
        rec("Kswapd pages reclaimed", |r, _| {
            r.kswapd_reclaimed.to_string()
        }),
        rec("Direct pages reclaimed", |r, _| {
            r.direct_reclaimed.to_string()
        }),
        rec("Kswapd efficiency", |r, _| {
            format!("{}%", int_pct(r.kswapd_reclaimed, r.kswapd_scanned, 100))
        }),
        rec("Kswapd velocity", |r, e| velocity(r.kswapd_scanned, e)),
        rec("Direct efficiency", |r, _| {
            format!("{}%", int_pct(r.direct_reclaimed, r.direct_scanned, 100))
        }),
        rec("Direct velocity", |r, e| velocity(r.direct_scanned, e)),
        rec("Percentage direct scans", |r, _| {
            let total = r.direct_scanned + r.kswapd_scanned;
            format!("{}%", int_pct(r.direct_scanned, total, 0))
        }),
    ]);
    lines.extend(VMSTAT_TAIL.into_iter().map(flat));
    let compaction_counted = cols.iter().any(|c| {
        VMSTAT_COMPACTION
            .iter()
            .any(|(_, key)| c.vmstat.contains_key(*key))
    });
    if compaction_counted {
        lines.extend(VMSTAT_COMPACTION.into_iter().map(flat));
    }
    lines
}

/// Pages scanned per second of `elapsed`, `%.3f`; 0 without elapsed time.
fn velocity(scanned: i64, elapsed: f64) -> String {
    let v = if elapsed > 0.0 {
        scanned as f64 / elapsed
    } else {
        0.0
    };
    format!("{v:.3}")
}

fn all_writes(w: &ReclaimWrites) -> u64 {
    w.file_async + w.anon_async + w.file_sync + w.anon_sync
}

fn file_writes(w: &ReclaimWrites) -> u64 {
    w.file_async + w.file_sync
}

fn ns_to_s(ns: u64) -> f64 {
    ns as f64 / 1e9
}

type TraceCount = fn(&ReclaimTraceStats) -> u64;

/// The vmscan rows, all from [`ReclaimTraceStats`]: the tracepoint totals
/// (times `%.2f` seconds from the `_ns` sums), a blank line, then derived
/// rows — totals are direct + kswapd; `%age total pages scanned/reclaimed`
/// = reclaimed × 100 / scanned; `.../written` = every reclaim write (file
/// and anon, async and sync, direct and kswapd) × 100 / scanned; `%age
/// file ...` = file writes only; `Percentage Time Spent Direct Reclaim` =
/// stall / (user+sys + stall) and `Percentage Time kswapd Awake` = awake /
/// elapsed (both reproduce the 2011 figures, e.g. 0.26 s stall with 34.97 s
/// user+sys prints 0.74%, 2.06 s with 6.95 s prints 22.86%).
pub(super) fn vmscan_lines(cols: &[MmtestsColumn]) -> Vec<Line> {
    let counts: [(&'static str, TraceCount); 17] = [
        ("Direct reclaims", |t| t.direct_reclaims),
        ("Direct reclaim pages scanned", |t| t.direct_pages_scanned),
        ("Direct reclaim pages reclaimed", |t| {
            t.direct_pages_reclaimed
        }),
        ("Direct reclaim write file async I/O", |t| {
            t.direct_writes.file_async
        }),
        ("Direct reclaim write anon async I/O", |t| {
            t.direct_writes.anon_async
        }),
        ("Direct reclaim write file sync I/O", |t| {
            t.direct_writes.file_sync
        }),
        ("Direct reclaim write anon sync I/O", |t| {
            t.direct_writes.anon_sync
        }),
        ("Wake kswapd requests", |t| t.wake_kswapd_requests),
        ("Kswapd wakeups", |t| t.kswapd_wakeups),
        ("Kswapd pages scanned", |t| t.kswapd_pages_scanned),
        ("Kswapd pages reclaimed", |t| t.kswapd_pages_reclaimed),
        ("Kswapd reclaim write file async I/O", |t| {
            t.kswapd_writes.file_async
        }),
        ("Kswapd reclaim write anon async I/O", |t| {
            t.kswapd_writes.anon_async
        }),
        ("Kswapd reclaim write file sync I/O", |t| {
            t.kswapd_writes.file_sync
        }),
        ("Kswapd reclaim write anon sync I/O", |t| {
            t.kswapd_writes.anon_sync
        }),
        ("Total pages scanned", |t| {
            t.direct_pages_scanned + t.kswapd_pages_scanned
        }),
        ("Total pages reclaimed", |t| {
            t.direct_pages_reclaimed + t.kswapd_pages_reclaimed
        }),
    ];
    let count = |(label, f): (&'static str, TraceCount)| {
        row(label, cols, move |c| f(&c.ftrace).to_string())
    };
    let scanned = |t: &ReclaimTraceStats| (t.direct_pages_scanned + t.kswapd_pages_scanned) as f64;
    let mut lines: Vec<Line> = counts[..15].iter().copied().map(count).collect();
    lines.extend([
        row("Time stalled direct reclaim (seconds)", cols, |c| {
            format!("{:.2}", ns_to_s(c.ftrace.direct_stall_ns))
        }),
        row("Time kswapd awake (seconds)", cols, |c| {
            format!("{:.2}", ns_to_s(c.ftrace.kswapd_awake_ns))
        }),
        Line::Blank,
    ]);
    lines.extend(counts[15..].iter().copied().map(count));
    lines.extend([
        row("%age total pages scanned/reclaimed", cols, |c| {
            let t = &c.ftrace;
            let reclaimed = t.direct_pages_reclaimed + t.kswapd_pages_reclaimed;
            format!("{:.2}%", pct(reclaimed as f64, scanned(t)))
        }),
        row("%age total pages scanned/written", cols, |c| {
            let t = &c.ftrace;
            let written = all_writes(&t.direct_writes) + all_writes(&t.kswapd_writes);
            format!("{:.2}%", pct(written as f64, scanned(t)))
        }),
        row("%age  file pages scanned/written", cols, |c| {
            let t = &c.ftrace;
            let written = file_writes(&t.direct_writes) + file_writes(&t.kswapd_writes);
            format!("{:.2}%", pct(written as f64, scanned(t)))
        }),
        row("Percentage Time Spent Direct Reclaim", cols, |c| {
            let stall = ns_to_s(c.ftrace.direct_stall_ns);
            format!("{:.2}%", pct(stall, c.user_sys_seconds + stall))
        }),
        row("Percentage Time kswapd Awake", cols, |c| {
            let awake = ns_to_s(c.ftrace.kswapd_awake_ns);
            format!("{:.2}%", pct(awake, c.elapsed_seconds))
        }),
    ]);
    lines
}

type WaitOf = fn(&ReclaimTraceStats) -> &WaitTotals;

/// The congestion_wait rows: for direct reclaimers and kswapd, for
/// `congestion_wait()` ("congest") and `wait_iff_congested()`
/// ("conditional"): the number of waits ([`WaitTotals::number`]), the time
/// slept ([`WaitTotals::delayed_us`] in whole milliseconds, truncated) and
/// the waits that slept their full timeout ([`WaitTotals::full`]).
pub(super) fn congestion_lines(cols: &[MmtestsColumn]) -> Vec<Line> {
    let groups: [[&'static str; 3]; 4] = [
        [
            "Direct number congest     waited",
            "Direct time   congest     waited",
            "Direct full   congest     waited",
        ],
        [
            "Direct number conditional waited",
            "Direct time   conditional waited",
            "Direct full   conditional waited",
        ],
        [
            "KSwapd number congest     waited",
            "KSwapd time   congest     waited",
            "KSwapd full   congest     waited",
        ],
        [
            "KSwapd number conditional waited",
            "KSwapd time   conditional waited",
            "KSwapd full   conditional waited",
        ],
    ];
    let waits: [WaitOf; 4] = [
        |t| &t.direct_congestion_wait,
        |t| &t.direct_wait_iff_congested,
        |t| &t.kswapd_congestion_wait,
        |t| &t.kswapd_wait_iff_congested,
    ];
    let mut lines = Vec::new();
    for ([number, time, full], wait) in groups.into_iter().zip(waits) {
        lines.push(row(number, cols, |c| wait(&c.ftrace).number.to_string()));
        lines.push(row(time, cols, |c| {
            format!("{}ms", wait(&c.ftrace).delayed_us / 1000)
        }));
        lines.push(row(full, cols, |c| wait(&c.ftrace).full.to_string()));
    }
    lines
}
