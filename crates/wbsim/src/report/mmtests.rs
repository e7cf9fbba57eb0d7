//! mmtests-style comparison report (`compare-kernels.sh` layout).
//!
//! Renders the text Mel Gorman's mmtests printed in July 2011 ("[RFC PATCH
//! 0/5] Reduce filesystem writeback from page reclaim (again)", linux-mm,
//! 2011-07-13): one column per kernel, the first column the baseline.
//! Sections, in order (row names and order exactly as that report):
//!
//! 1. the benchmark title (`FS-Mark`, `MICRO`, ...), then the column header;
//! 2. for fs_mark only: `Files/s` and `Overhead` min/mean/stddev/max over the
//!    loops, each with a `( x.xx%)` delta against the first column;
//! 3. `MMTests Statistics: duration` (from [`MmtestsColumn::user_sys_seconds`]
//!    and [`MmtestsColumn::elapsed_seconds`]);
//! 4. `MMTests Statistics: vmstat` (from [`MmtestsColumn::vmstat`]);
//! 5. `FTrace Reclaim Statistics: vmscan` (from [`MmtestsColumn::ftrace`]);
//! 6. `FTrace Reclaim Statistics: congestion_wait` (from
//!    [`MmtestsColumn::ftrace`]).
//!
//! The rows of sections 3–6 are built in `mmtests/sections.rs`, whose
//! functions document the counter or field behind each row.
//!
//! # Arithmetic
//!
//! Worked out from the 2011 report's own numbers, then compared with
//! mmtests' `bin/lib/VMR/Stat.pm` and `MonitorMmtestsvmstat.pm`:
//!
//! * Delta `( x.xx%)` of a column (`new`) against the first (`base`) divides
//!   by `new`. Higher is better (Files/s): `(new − base) / new × 100`
//!   (5.30 → 5.10 prints −3.92%). Lower is better (Overhead):
//!   `(base − new) / new × 100` (29678.24 → 40053.96 prints −25.90%). These
//!   are mmtests' `pndiff(base, new)` and `pdiff(base, new)`. The stddev row
//!   keeps its metric's direction (Files/s stddev 0.89 → 0.99 prints +10.62%).
//! * Zeros: equal values → 0.00%. `new == 0` (division by zero) → −99.00%
//!   when higher is better and 100.00% when lower is better (what `pndiff` /
//!   `pdiff` return). `base == 0`, `new != 0` is no division by zero and
//!   prints the formula's value (+100.00% or −100.00%); mmtests' `pdiff`
//!   printed 0.00% there, which hid a regression from nothing.
//! * stddev is the population standard deviation (÷ n), as the VMR::Stat
//!   `calc_stddev` of that era; later mmtests divides by n − 1.
//! * Integer percentages (efficiency, direct share) are truncated, not
//!   rounded (4864514 / 4865170 prints 99%, 101716 / 14371623 prints 0%).
//!   Nothing scanned → efficiency 100%, direct share 0% (as mmtests).
//! * Other divisions by zero (velocity, `%age` and `Percentage` rows) print 0.
//!
//! # Layout
//!
//! Labels split over two header lines at the `-` that makes the longer half
//! shortest (first such `-` on a tie; no `-` → one line), which reproduces
//! every header of the 2011 report (`3.0.0-rc6` / `nodirectwb-v1r3`). Each
//! half is right-aligned over its column. Column widths grow to fit the
//! widest value, delta or header half, so wide numbers never push a column
//! out of line (the 2011 output drifted there). Lines carry no trailing
//! blanks (the 2011 vmscan rows ended in one).

use std::collections::BTreeMap;
use std::fmt::Write as _;

use crate::trace::stats::ReclaimTraceStats;

mod sections;
use sections::{congestion_lines, duration_lines, vmscan_lines, vmstat_lines};

/// One kernel (preset) of the comparison.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct MmtestsColumn {
    /// Kernel/preset name for the column header.
    pub label: String,
    /// User + system CPU seconds of the benchmark.
    pub user_sys_seconds: f64,
    /// Wall-clock seconds of the benchmark.
    pub elapsed_seconds: f64,
    /// /proc/vmstat deltas over the benchmark, 3.0 names; a missing key is 0.
    pub vmstat: BTreeMap<String, i64>,
    /// vmscan / writeback tracepoint totals.
    pub ftrace: ReclaimTraceStats,
    /// Per-loop figures when the benchmark is fs_mark.
    pub fsmark: Option<FsMarkLoops>,
}

/// fs_mark's per-loop output columns.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct FsMarkLoops {
    /// "Files/sec" of each loop.
    pub files_per_second: Vec<f64>,
    /// "App Overhead" (microseconds) of each loop.
    pub overhead_us: Vec<f64>,
}

/// Render the report: `benchmark_title` on the first line, then the
/// sections listed in the module documentation. `columns[0]` is the
/// baseline of the deltas. Ends with a newline.
pub fn render(benchmark_title: &str, columns: &[MmtestsColumn]) -> String {
    let mut out = format!("{benchmark_title}\n");
    if columns.is_empty() {
        return out;
    }
    let heads: Vec<(String, String)> = columns.iter().map(|c| split_label(&c.label)).collect();
    let mut lines = vec![Line::Title("MMTests Statistics: duration")];
    lines.extend(duration_lines(columns));
    lines.extend([Line::Blank, Line::Title("MMTests Statistics: vmstat")]);
    lines.extend(vmstat_lines(columns));
    lines.extend([
        Line::Blank,
        Line::Title("FTrace Reclaim Statistics: vmscan"),
    ]);
    lines.push(Line::Header);
    lines.extend(vmscan_lines(columns));
    lines.extend([
        Line::Blank,
        Line::Title("FTrace Reclaim Statistics: congestion_wait"),
    ]);
    lines.extend(congestion_lines(columns));

    let label_w = lines
        .iter()
        .map(|l| match l {
            Line::Row(label, _) => label.len() + 1,
            _ => 0,
        })
        .fold(STATS_LABEL_WIDTH, usize::max);
    let col_w = lines
        .iter()
        .flat_map(|l| match l {
            Line::Row(_, cells) => cells.as_slice(),
            _ => &[],
        })
        .map(|s| s.chars().count() + 1)
        .chain(
            heads
                .iter()
                .map(|(a, b)| a.chars().count().max(b.chars().count()) + 1),
        )
        .fold(STATS_COLUMN_WIDTH, usize::max);

    if columns.iter().any(|c| c.fsmark.is_some()) {
        render_fsmark(&mut out, columns, &heads);
    } else {
        write_header(&mut out, &heads, label_w + col_w, col_w);
    }
    for line in &lines {
        match line {
            Line::Blank => out.push('\n'),
            Line::Title(t) => {
                out.push_str(t);
                out.push('\n');
            }
            Line::Header => write_header(&mut out, &heads, label_w + col_w, col_w),
            Line::Row(label, cells) => {
                let _ = write!(out, "{label:<label_w$}");
                for cell in cells {
                    let _ = write!(out, "{cell:>col_w$}");
                }
                out.push('\n');
            }
        }
    }
    out
}

/// Width of the row-name field of the statistics sections (values of the
/// first column end at 50 as in the 2011 report).
const STATS_LABEL_WIDTH: usize = 40;
/// Minimum width of a statistics column.
const STATS_COLUMN_WIDTH: usize = 10;
/// Width of the row-name field of the fs_mark table.
const FSMARK_LABEL_WIDTH: usize = 18;
/// Minimum widths of the fs_mark value and delta (`%5.2f` as mmtests).
const FSMARK_VALUE_WIDTH: usize = 9;
const FSMARK_DELTA_WIDTH: usize = 5;
/// Blanks between fs_mark cells.
const FSMARK_GAP: usize = 3;

enum Line {
    Blank,
    Title(&'static str),
    Header,
    Row(&'static str, Vec<String>),
}

fn row(label: &'static str, cols: &[MmtestsColumn], f: impl Fn(&MmtestsColumn) -> String) -> Line {
    Line::Row(label, cols.iter().map(f).collect())
}

/// Split a label over the two header lines: at the `-` that makes the
/// longer half shortest (the first such `-`); no `-` → `("", label)`.
fn split_label(label: &str) -> (String, String) {
    let mut best: Option<(usize, usize)> = None;
    for (i, ch) in label.char_indices() {
        if ch != '-' {
            continue;
        }
        let longer = label[..i]
            .chars()
            .count()
            .max(label[i + 1..].chars().count());
        if best.is_none_or(|(b, _)| longer < b) {
            best = Some((longer, i));
        }
    }
    match best {
        Some((_, i)) => (label[..i].to_string(), label[i + 1..].to_string()),
        None => (String::new(), label.to_string()),
    }
}

/// The two header lines, each half right-aligned to its column's end: the
/// first column ends at `first_w`, the others every `w`. A first line with
/// nothing on it is left out.
fn write_header(out: &mut String, heads: &[(String, String)], first_w: usize, w: usize) {
    for line in 0..2 {
        let half = |h: &(String, String)| if line == 0 { h.0.clone() } else { h.1.clone() };
        if heads.iter().all(|h| half(h).is_empty()) {
            continue;
        }
        for (i, h) in heads.iter().enumerate() {
            let width = if i == 0 { first_w } else { w };
            let _ = write!(out, "{:>width$}", half(h));
        }
        out.push('\n');
    }
}

/// Which way a benchmark figure improves.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Better {
    Higher,
    Lower,
}

/// The `( x.xx%)` delta of `new` against `base` (see the module docs).
fn pct_delta(base: f64, new: f64, better: Better) -> f64 {
    if base == new {
        return 0.0;
    }
    match (better, new == 0.0) {
        (Better::Higher, true) => -99.0,
        (Better::Lower, true) => 100.0,
        (Better::Higher, false) => (new - base) * 100.0 / new,
        (Better::Lower, false) => (base - new) * 100.0 / new,
    }
}

#[derive(Debug, Clone, Copy, Default, PartialEq)]
struct Summary {
    min: f64,
    mean: f64,
    stddev: f64,
    max: f64,
}

/// min / mean / population stddev / max; all 0 for no loops.
fn summarise(xs: &[f64]) -> Summary {
    if xs.is_empty() {
        return Summary::default();
    }
    let n = xs.len() as f64;
    let mean = xs.iter().sum::<f64>() / n;
    let var = xs.iter().map(|x| (x - mean).powi(2)).sum::<f64>() / n;
    Summary {
        min: xs.iter().copied().fold(f64::INFINITY, f64::min),
        mean,
        stddev: var.sqrt(),
        max: xs.iter().copied().fold(f64::NEG_INFINITY, f64::max),
    }
}

type LoopsOf = fn(&FsMarkLoops) -> &[f64];
type StatOf = fn(&Summary) -> f64;

/// The fs_mark table with its own header: `Files/s` (fs_mark's Files/sec,
/// higher is better) and `Overhead` (App Overhead in µs, lower is better),
/// min/mean/stddev/max over each column's loops. A column without loops
/// prints 0.00.
fn render_fsmark(out: &mut String, cols: &[MmtestsColumn], heads: &[(String, String)]) {
    let metrics: [(&str, Better, LoopsOf); 2] = [
        ("Files/s", Better::Higher, |l| &l.files_per_second),
        ("Overhead", Better::Lower, |l| &l.overhead_us),
    ];
    let stats: [(&str, StatOf); 4] = [
        ("min", |s| s.min),
        ("mean", |s| s.mean),
        ("stddev", |s| s.stddev),
        ("max", |s| s.max),
    ];
    let mut rows: Vec<(String, Vec<(String, String)>)> = Vec::new();
    for (metric, better, loops) in metrics {
        let sums: Vec<Summary> = cols
            .iter()
            .map(|c| {
                c.fsmark
                    .as_ref()
                    .map(|l| summarise(loops(l)))
                    .unwrap_or_default()
            })
            .collect();
        for (stat, pick) in stats {
            let base = pick(&sums[0]);
            let cells = sums
                .iter()
                .map(|s| {
                    let v = pick(s);
                    (
                        format!("{v:.2}"),
                        format!("{:.2}", pct_delta(base, v, better)),
                    )
                })
                .collect();
            rows.push((format!("{metric:<8} {stat}"), cells));
        }
    }
    let cells = || rows.iter().flat_map(|r| r.1.iter());
    let dw = cells()
        .map(|c| c.1.len())
        .fold(FSMARK_DELTA_WIDTH, usize::max);
    let mut vw = cells()
        .map(|c| c.0.len())
        .fold(FSMARK_VALUE_WIDTH, usize::max);
    let widest_head = heads
        .iter()
        .map(|(a, b)| a.chars().count().max(b.chars().count()))
        .max()
        .unwrap_or(0);
    // A cell is "value (delta%)"; a header half needs a blank before it.
    vw = vw.max((widest_head + 1).saturating_sub(FSMARK_GAP + dw + 4));
    let cell_w = vw + dw + 4;
    write_header(out, heads, FSMARK_LABEL_WIDTH + cell_w, FSMARK_GAP + cell_w);
    for (label, cells) in &rows {
        let _ = write!(out, "{label:<FSMARK_LABEL_WIDTH$}");
        for (i, (v, d)) in cells.iter().enumerate() {
            let gap = if i == 0 { 0 } else { FSMARK_GAP };
            let _ = write!(out, "{:gap$}{v:>vw$} ({d:>dw$}%)", "");
        }
        out.push('\n');
    }
}

#[cfg(test)]
mod tests;
