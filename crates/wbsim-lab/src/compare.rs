//! Real against simulated, figure by figure.

use std::collections::BTreeSet;
use std::fmt::Write as _;

use wbsim::report::series::{median, Series};
use wbsim::report::RunReport;

use crate::guest_report::ZONE_SUFFIXES;

/// One figure over the runs of each side (one value per run that has it).
#[derive(Debug, Clone, PartialEq)]
pub struct Figure {
    pub name: String,
    pub real: Vec<f64>,
    pub simulated: Vec<f64>,
}

fn min(xs: &[f64]) -> Option<f64> {
    xs.iter().copied().reduce(f64::min)
}

fn max(xs: &[f64]) -> Option<f64> {
    xs.iter().copied().reduce(f64::max)
}

fn mean(xs: &[f64]) -> Option<f64> {
    (!xs.is_empty()).then(|| xs.iter().sum::<f64>() / xs.len() as f64)
}

impl Figure {
    pub fn real_min(&self) -> Option<f64> {
        min(&self.real)
    }
    pub fn real_max(&self) -> Option<f64> {
        max(&self.real)
    }
    pub fn real_mean(&self) -> Option<f64> {
        mean(&self.real)
    }
    pub fn sim_min(&self) -> Option<f64> {
        min(&self.simulated)
    }
    pub fn sim_max(&self) -> Option<f64> {
        max(&self.simulated)
    }
    pub fn sim_mean(&self) -> Option<f64> {
        mean(&self.simulated)
    }

    /// Simulated mean / real mean; `None` when a side is empty or the real
    /// mean is 0.
    pub fn ratio(&self) -> Option<f64> {
        let (r, s) = (self.real_mean()?, self.sim_mean()?);
        (r != 0.0).then(|| s / r)
    }

    /// The simulated mean lies outside the real range widened by
    /// `tolerance` (a fraction) on each side: below
    /// `real_min − tolerance × |real_min|` or above
    /// `real_max + tolerance × |real_max|` (for positive figures,
    /// `[real_min × (1 − tol), real_max × (1 + tol)]`). Never flagged when
    /// a side has no value; a real 0 with a simulated 0 is inside.
    pub fn is_flagged(&self, tolerance: f64) -> bool {
        let (Some(lo), Some(hi), Some(s)) = (self.real_min(), self.real_max(), self.sim_mean())
        else {
            return false;
        };
        let lo = lo - tolerance * lo.abs();
        let hi = hi + tolerance * hi.abs();
        s < lo || s > hi
    }
}

/// A figure's value in one run, if the run has it.
type Extract = Box<dyn Fn(&RunReport) -> Option<f64>>;

fn counter(name: &str) -> Extract {
    let name = name.to_string();
    Box::new(move |r| r.vmstat.get(&name).map(|&v| v as f64))
}

/// Zone suffixes whose `<prefix>_<zone>` counter both sides report (in
/// any run).
fn common_zones(real: &[RunReport], sim: &[RunReport], prefix: &str) -> Vec<&'static str> {
    let has = |runs: &[RunReport], z: &str| {
        let k = format!("{prefix}_{z}");
        runs.iter().any(|r| r.vmstat.contains_key(&k))
    };
    ZONE_SUFFIXES
        .into_iter()
        .filter(|z| has(real, z) && has(sim, z))
        .collect()
}

/// The zone of a series the dirty-share figure reads: `Normal` when the
/// series has it, else the zone with the most pages (free + file) summed
/// over the samples.
fn dirty_share_zone(s: &Series) -> Option<usize> {
    if let Some(i) = s.zone_names.iter().position(|n| n == "Normal") {
        return Some(i);
    }
    (0..s.zone_names.len()).max_by_key(|&i| {
        let size = |z: &wbsim::report::series::ZoneSample| {
            z.free_pages + z.inactive_file_pages + z.active_file_pages
        };
        (s.samples.iter().map(|x| size(&x.zones[i])).sum::<u64>(), i)
    })
}

/// Median over the samples (those with inactive file pages) of the
/// zone's dirty pages as a percentage of its inactive file pages, and the
/// zone's name.
fn dirty_share(r: &RunReport) -> Option<(String, f64)> {
    let s = r.series.as_ref()?;
    let i = dirty_share_zone(s)?;
    let shares = s.samples.iter().filter_map(|x| {
        let z = x.zones.get(i)?;
        (z.inactive_file_pages > 0)
            .then(|| 100.0 * z.dirty_pages as f64 / z.inactive_file_pages as f64)
    });
    Some((s.zone_names[i].clone(), median(shares.collect())?))
}

/// The simulated runs with their series shown as the real ones are: on a
/// guest whose kernel counts dirty pages per node (4.8+), each sample's
/// dirty and writeback pages summed onto the zone with the most file
/// pages (`Series::dirty_per_node`), and the steady dirty shares read
/// from that, so the dirty-share figures compare like with like.
fn like_the_guests_series<'a>(
    real: &[RunReport],
    simulated: &'a [RunReport],
) -> std::borrow::Cow<'a, [RunReport]> {
    let per_node = real
        .iter()
        .any(|r| r.series.as_ref().is_some_and(|s| s.dirty_per_node));
    if !per_node {
        return std::borrow::Cow::Borrowed(simulated);
    }
    let folded = simulated.iter().map(|r| {
        let mut r = r.clone();
        if let Some(series) = r.series.as_ref() {
            let folded = series.dirty_per_node();
            for (key, value) in folded.stats() {
                if key.ends_with(".dirty_of_inactive_steady") {
                    r.series_stats.insert(key, value);
                }
            }
            r.series = Some(folded);
        }
        r
    });
    std::borrow::Cow::Owned(folded.collect())
}

/// The figures set side by side, in this order:
/// * `elapsed_seconds`;
/// * `<task> seconds`: each workload task's `elapsed_seconds` (its start
///   to its exit: dd's and sync's apart in `dd ...; sync`), tasks in the
///   order the runs list them;
/// * /proc/vmstat deltas: `pgalloc_<zone>` (each zone both sides report),
///   `pgscan_kswapd`, `pgscan_direct`, `pgsteal` (totals, each followed by
///   its `_<zone>` counters where both sides report them),
///   `nr_vmscan_write`, `nr_vmscan_immediate_reclaim`, `nr_dirtied`,
///   `nr_written`, `pgactivate`, `allocstall`;
/// * `pgalloc_<zone> share %`: the zone's share of Σ `pgalloc_<zone>`;
/// * `<zone> dirty/inactive_file % (median)`: over the time series, the
///   median of the zone's dirty pages over its inactive file pages, for
///   the zone `Normal` when the series has it, else its biggest zone (the
///   name lists the zones used when the runs differ); against a 4.8+
///   guest, the simulated dirty pages of all zones, as the guest's
///   zoneinfo gives only the node's;
/// * `<zone> dirty/inactive_file % (steady median)`: the same zone's
///   `series_stats["<zone>.dirty_of_inactive_steady"]` × 100, the median
///   from the first sample with kswapd awake to the first task's exit;
/// * `kswapd_awake_seconds`;
/// * `kswapd full sleeps`: `series_stats["kswapd_full_sleeps"]` (the
///   lab's), else `ftrace.kswapd_sleeps` (the simulator's);
/// * `kswapd wakeups (ftrace)`: `ftrace.kswapd_wakeups`, wakes after a full
///   sleep;
/// * `device write MB/s`: the busiest device's `write_mb_per_second`.
///
/// A run lacking a figure adds no value to its side; figures neither side
/// has are left out. Cut runs count like the others: pass only the runs
/// to compare.
pub fn figures(real: &[RunReport], simulated: &[RunReport]) -> Vec<Figure> {
    let simulated: &[RunReport] = &like_the_guests_series(real, simulated);
    let mut list: Vec<(String, Extract)> = vec![(
        "elapsed_seconds".into(),
        Box::new(|r: &RunReport| Some(r.elapsed_seconds)),
    )];
    let mut task_names: Vec<String> = Vec::new();
    for t in real.iter().chain(simulated).flat_map(|r| &r.tasks) {
        if !task_names.contains(&t.name) {
            task_names.push(t.name.clone());
        }
    }
    for name in task_names {
        list.push((
            format!("{name} seconds"),
            Box::new(move |r: &RunReport| {
                let t = r.tasks.iter().find(|t| t.name == name)?;
                Some(t.elapsed_seconds)
            }),
        ));
    }
    let alloc_zones = common_zones(real, simulated, "pgalloc");
    for z in &alloc_zones {
        let name = format!("pgalloc_{z}");
        list.push((name.clone(), counter(&name)));
    }
    for total in ["pgscan_kswapd", "pgscan_direct", "pgsteal"] {
        list.push((total.into(), counter(total)));
        for z in common_zones(real, simulated, total) {
            let name = format!("{total}_{z}");
            list.push((name.clone(), counter(&name)));
        }
    }
    for name in [
        "nr_vmscan_write",
        "nr_vmscan_immediate_reclaim",
        "nr_dirtied",
        "nr_written",
        "pgactivate",
        "allocstall",
    ] {
        list.push((name.into(), counter(name)));
    }
    for z in &alloc_zones {
        let zones = alloc_zones.clone();
        let z = z.to_string();
        list.push((
            format!("pgalloc_{z} share %"),
            Box::new(move |r: &RunReport| {
                let v = |z: &str| r.vmstat.get(&format!("pgalloc_{z}")).copied();
                let total: i64 = zones.iter().filter_map(|z| v(z)).sum();
                let own = v(&z)?;
                (total > 0).then(|| 100.0 * own as f64 / total as f64)
            }),
        ));
    }
    let share_zones: BTreeSet<String> = real
        .iter()
        .chain(simulated)
        .filter_map(|r| dirty_share(r).map(|(z, _)| z))
        .collect();
    let share_zones: Vec<String> = share_zones.into_iter().collect();
    list.push((
        format!("{} dirty/inactive_file % (median)", share_zones.join("/")),
        Box::new(|r: &RunReport| dirty_share(r).map(|(_, v)| v)),
    ));
    list.push((
        format!(
            "{} dirty/inactive_file % (steady median)",
            share_zones.join("/")
        ),
        Box::new(|r: &RunReport| {
            let (zone, _) = dirty_share(r)?;
            let key = format!("{zone}.dirty_of_inactive_steady");
            r.series_stats.get(&key).map(|v| 100.0 * v)
        }),
    ));
    list.push((
        "kswapd_awake_seconds".into(),
        Box::new(|r: &RunReport| Some(r.kswapd_awake_seconds)),
    ));
    list.push((
        "kswapd full sleeps".into(),
        Box::new(|r: &RunReport| {
            r.series_stats
                .get("kswapd_full_sleeps")
                .copied()
                .or(Some(r.ftrace.kswapd_sleeps as f64))
        }),
    ));
    list.push((
        "kswapd wakeups (ftrace)".into(),
        Box::new(|r: &RunReport| Some(r.ftrace.kswapd_wakeups as f64)),
    ));
    list.push((
        "device write MB/s".into(),
        Box::new(|r: &RunReport| {
            r.devices
                .iter()
                .map(|d| d.write_mb_per_second)
                .reduce(f64::max)
        }),
    ));
    list.into_iter()
        .map(|(name, f)| Figure {
            name,
            real: real.iter().filter_map(&f).collect(),
            simulated: simulated.iter().filter_map(&f).collect(),
        })
        .filter(|fig| !fig.real.is_empty() || !fig.simulated.is_empty())
        .collect()
}

/// A number for the table: integers as such, else 0-3 decimals by size.
fn num(x: f64) -> String {
    let a = x.abs();
    if x.fract() == 0.0 && a < 1e15 || a >= 1e5 {
        format!("{x:.0}")
    } else if a >= 1000.0 {
        format!("{x:.1}")
    } else if a >= 1.0 {
        format!("{x:.2}")
    } else if a >= 0.001 {
        format!("{x:.3}")
    } else {
        format!("{x:.2e}")
    }
}

/// `min–max`, or the value when they are equal; `-` for no value.
fn range(lo: Option<f64>, hi: Option<f64>) -> String {
    match (lo, hi) {
        (Some(lo), Some(hi)) if lo == hi => num(lo),
        (Some(lo), Some(hi)) => format!("{}–{}", num(lo), num(hi)),
        _ => "-".into(),
    }
}

/// Figures flagged at `tolerance` (see [`Figure::is_flagged`]).
pub fn flagged(figures: &[Figure], tolerance: f64) -> usize {
    figures.iter().filter(|f| f.is_flagged(tolerance)).count()
}

/// A fixed-width table: a header line naming both sides and the
/// tolerance, the column titles, one row per figure (`real`: the value,
/// or `min–max` over several runs; `simulated`: the value, or
/// `mean (min–max)`; `ratio`: simulated mean / real mean, `-` when the
/// real mean is 0; `<<` when [`Figure::is_flagged`]), and a last line
/// counting the flagged figures.
pub fn render(figures: &[Figure], tolerance: f64, real_label: &str, sim_label: &str) -> String {
    let mut rows: Vec<[String; 5]> = vec![[
        "figure".into(),
        "real".into(),
        "simulated".into(),
        "ratio".into(),
        String::new(),
    ]];
    for f in figures {
        let sim = match (f.sim_mean(), f.simulated.len()) {
            (Some(m), n) if n > 1 && f.sim_min() != f.sim_max() => {
                format!("{} ({})", num(m), range(f.sim_min(), f.sim_max()))
            }
            (Some(m), _) => num(m),
            (None, _) => "-".into(),
        };
        rows.push([
            f.name.clone(),
            range(f.real_min(), f.real_max()),
            sim,
            f.ratio().map_or("-".into(), |r| format!("{r:.2}")),
            if f.is_flagged(tolerance) { "<<" } else { "" }.into(),
        ]);
    }
    let width = |c: usize| rows.iter().map(|r| r[c].chars().count()).max().unwrap_or(0);
    let w = [width(0), width(1), width(2), width(3)];
    let mut s = String::new();
    let _ = writeln!(
        s,
        "real: {real_label}   simulated: {sim_label}   tolerance: ±{}%",
        num(tolerance * 100.0)
    );
    for r in &rows {
        let line = format!(
            "{:<w0$}  {:>w1$}  {:>w2$}  {:>w3$}  {}",
            r[0],
            r[1],
            r[2],
            r[3],
            r[4],
            w0 = w[0],
            w1 = w[1],
            w2 = w[2],
            w3 = w[3]
        );
        let _ = writeln!(s, "{}", line.trim_end());
    }
    let _ = writeln!(
        s,
        "{} of {} figures flagged (<<: simulated mean outside the real range ±{}%)",
        flagged(figures, tolerance),
        figures.len(),
        num(tolerance * 100.0)
    );
    s
}
