//! Reports: the per-run figures a kernel developer reads after `time dd`,
//! `/proc/vmstat` and `iostat`, as text and as a stable JSON document.
//!
//! JSON contract (kept stable; fields may be added, never renamed or
//! removed): `{ "source", "scenario", "kernel", "config", "profile", "runs": [ { "seed", "outcome",
//! "elapsed_seconds", "user_seconds", "system_seconds",
//! "kswapd_awake_seconds", "context_switches", "vmstat": { counter: delta },
//! "zoneinfo": { zone: { stat: value } }, "devices": [ {
//! "name", "write_iops", "write_mb_per_second", "avg_write_request_kib",
//! ... } ] } ] }`.

pub mod mmtests;
pub mod nodes;
pub use crate::system::series;
pub mod tools;
mod unit;

use std::collections::BTreeMap;
use std::fmt::Write as _;

use serde::Serialize;

use crate::block::BlockHost;
use crate::mm::vmstat::ZoneEv;
use crate::mm::MmHost;
use crate::reclaim::kswapd::Kswapd;
use crate::sched::HasCore;
use crate::sim::NS_PER_SEC;
use crate::system::{Outcome, System};
use crate::workload::WorkloadHost;
use crate::writeback::WritebackHost;

#[derive(Debug, Clone, Serialize)]
pub struct DeviceReport {
    pub name: String,
    pub write_iops: f64,
    pub write_mb_per_second: f64,
    /// Written MiB (2^20 bytes) per second: iostat's `wMB/s`, which
    /// divides kB by 1024 (`write_mb_per_second` is decimal MB, 10^6).
    pub write_mib_per_second: f64,
    pub avg_write_request_kib: f64,
    pub max_write_request_kib: f64,
    pub write_requests: u64,
    pub write_bytes: u64,
    /// Requests that continued where the previous one ended.
    pub sequential_fraction: f64,
    /// Fraction of the run the device was busy.
    pub utilisation: f64,
    pub merges: u64,
    /// Completed write requests carrying page-cache data (not log or
    /// metadata buffers), and their bytes.
    pub data_write_requests: u64,
    pub data_write_bytes: u64,
}

/// One run's figures. `Default` is a completed run with nothing counted
/// (for tests that state only the figures they read).
#[derive(Debug, Clone, Default, Serialize)]
pub struct RunReport {
    pub seed: u64,
    pub outcome: Outcome,
    /// The run stopped before its workload ended (time limit or event
    /// budget): its figures cover only part of the workload, so means
    /// leave it out unless asked (`TextOptions::include_cut`).
    pub cut: bool,
    pub elapsed_seconds: f64,
    pub user_seconds: f64,
    pub system_seconds: f64,
    pub kswapd_awake_seconds: f64,
    /// Voluntary sleeps of the workload tasks (perf's context-switches).
    pub context_switches: u64,
    /// /proc/vmstat counter deltas over the run.
    pub vmstat: BTreeMap<String, i64>,
    /// Per-zone statistics that /proc/vmstat prints only summed over the
    /// zones and /proc/zoneinfo prints per zone (`zone_stat_item`), by
    /// zone suffix (`dma`, `dma32`, `normal`): `nr_vmscan_write`, i.e.
    /// which zone reclaim wrote its pages from.
    pub zoneinfo: BTreeMap<String, BTreeMap<String, i64>>,
    pub devices: Vec<DeviceReport>,
    /// Engine events processed (a cost figure, not a kernel one).
    pub sim_events: u64,
    /// Figures derived from the time series (see `Series::stats`), when
    /// one was sampled.
    #[serde(skip_serializing_if = "BTreeMap::is_empty")]
    pub series_stats: BTreeMap<String, f64>,
    /// Totals of the vmscan/writeback tracepoints, as
    /// `trace-vmscan-postprocess.pl` and mmtests would compute them.
    pub ftrace: crate::trace::ReclaimTraceStats,
    /// The time series itself (written as CSV, not into the JSON report).
    #[serde(skip)]
    pub series: Option<series::Series>,
    /// fs_mark's output lines (Files/sec, App Overhead) of the first
    /// fs_mark task, one per loop; empty without fs_mark.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub fsmark: Vec<crate::workload::fsmark_run::FsMarkLoop>,
    /// IOzone's results, one per test and IOzone task, in the order run.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub iozone: Vec<crate::workload::iozone_run::IozoneResult>,
    /// Each NUMA node's figures (`[[machine.node]]`); absent on a
    /// one-node machine.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub nodes: Vec<nodes::NodeReport>,
    /// What the invariant checks of a checked run found
    /// (`RunOptions::check_every_event`); `None` for a plain run.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub check: Option<crate::system::check::CheckSummary>,
    /// Each workload task (a `[[task]]` the run waits for) and how it
    /// ended.
    pub tasks: Vec<TaskReport>,
}

/// How a workload task ended.
#[derive(Debug, Clone, Serialize)]
pub struct TaskReport {
    pub name: String,
    pub command: String,
    /// The exit status (128 + signal number when killed by a signal), -1
    /// if the task was still running when the run stopped.
    pub exit_status: i32,
    /// What the program printed on stderr; empty if nothing.
    pub message: String,
    /// Seconds from the task's start (0, or the exit of the task it runs
    /// `after`) to its exit; to the end of the run if it was still
    /// running, 0 if it never started.
    pub elapsed_seconds: f64,
}

#[derive(Debug, Clone, Serialize)]
pub struct Report {
    /// Where the figures come from: `simulator`, or `qemu` for a real
    /// kernel booted by `wbsim lab`.
    pub source: String,
    pub scenario: String,
    /// The kernel preset simulated, or the real kernel's release.
    pub kernel: String,
    /// The scenario as the simulator resolved it, every default filled in
    /// (gem5 writes each run's resolved config beside its stats): what
    /// was simulated, whatever the file left unsaid.
    pub config: crate::scenario::Scenario,
    /// The kernel profile as resolved (presets, bases, files, `--set`):
    /// with `config`, all it takes to rerun this report exactly. Absent
    /// for a real kernel.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub profile: Option<crate::kernel::KernelProfile>,
    pub runs: Vec<RunReport>,
    /// How a real kernel was run (`source` = `qemu`); absent for the
    /// simulator.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub lab: Option<LabInfo>,
}

/// The real machine behind a `qemu` report: which kernel, how QEMU was
/// started, and the zones the guest kernel really had.
#[derive(Debug, Clone, Serialize)]
pub struct LabInfo {
    /// `uname -r` inside the guest.
    pub kernel_release: String,
    /// The kernel image booted (`debian` or a path) and its SHA-256.
    pub kernel_image: String,
    pub kernel_image_sha256: String,
    /// `kvm` or `tcg`.
    pub accel: String,
    /// The QEMU command line, one argument per element.
    pub qemu_command: Vec<String>,
    /// The guest's zones from its /proc/zoneinfo, beside the scenario's.
    pub zones: Vec<LabZone>,
    /// What of the scenario the guest could not express, and how far off.
    pub notes: Vec<String>,
    /// Wall-clock seconds of each boot (QEMU start to exit).
    pub host_wall_seconds: Vec<f64>,
}

/// One zone of a real guest.
#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct LabZone {
    pub name: String,
    /// `spanned`, `present` and `managed` pages from /proc/zoneinfo
    /// (`managed` is 0 on kernels before 3.14, which do not print it).
    pub spanned_pages: u64,
    pub present_pages: u64,
    pub managed_pages: u64,
    /// The scenario's size of this zone, in 4 KiB pages (0 if it has none).
    pub scenario_pages: u64,
    /// What the guest's kernel held in the zone just before the workload
    /// started: `present` − `pages free` − the file LRU pages, from the
    /// zoneinfo snapshot taken then. Boot-time allocations (mem_map,
    /// per-CPU areas, hash tables), the lab's own ftrace ring buffer, the
    /// initramfs files, slab and anonymous pages: memory the workload's
    /// page cache cannot have. The simulator's `kernel_mib`.
    pub held_pages: u64,
}

pub(crate) fn secs(ns: u64) -> f64 {
    ns as f64 / NS_PER_SEC as f64
}

/// Gather the figures of a finished run.
pub fn run_report(sys: &System, seed: u64, outcome: Outcome) -> RunReport {
    let workload: Vec<_> = sys.tasks().iter().filter(|t| t.is_workload).collect();
    let end = workload
        .iter()
        .map(|t| t.exited_ns.unwrap_or(sys.now()))
        .max()
        .unwrap_or(sys.now());
    let elapsed = secs(end);
    let mut vmstat: BTreeMap<String, i64> = sys
        .mm()
        .vmstat()
        .events(&sys.zone_suffixes())
        .into_iter()
        .map(|(k, v)| (k, v as i64))
        .collect();
    // Gauges: deltas from boot (when nothing was dirty, all memory free).
    let total = sys.mm().pages().len() as i64;
    vmstat.insert("nr_dirty".into(), sys.mm().gauges().nr_dirty as i64);
    vmstat.insert("nr_writeback".into(), sys.mm().gauges().nr_writeback as i64);
    vmstat.insert(
        "nr_writeback_temp".into(),
        sys.mm().gauges().nr_writeback_temp as i64,
    );
    vmstat.insert(
        "nr_free_pages".into(),
        sys.mm().nr_free_pages() as i64 - total,
    );
    let lru_sum = |l: usize| {
        (0..sys.mm().nr_zones())
            .map(|z| sys.mm().zone(z).lru_pages[l] as i64)
            .sum::<i64>()
    };
    vmstat.insert("nr_inactive_file".into(), lru_sum(2));
    vmstat.insert("nr_active_file".into(), lru_sum(3));
    if let Some(w) = sys.mm().workingset_stats() {
        vmstat.insert("workingset_refault_file".into(), w.refault_file as i64);
        vmstat.insert("workingset_activate_file".into(), w.activate_file as i64);
    }
    if sys.mm().lru_scope() == crate::kernel::LruScope::Node {
        let stalls = sys.mm().vmstat().get(crate::mm::vmstat::Ev::AllocStall);
        for (name, n) in crate::mm::vmstat::allocstall_by_zone(stalls) {
            vmstat.insert(name.into(), n as i64);
        }
        // The by-type names are 5.8+; 6.1 is the node-LRU preset.
        for (name, n) in sys.mm().vmstat().by_type() {
            vmstat.insert(name.into(), n as i64);
        }
        for (name, n) in sys.mm().vmstat().skipped() {
            vmstat.insert(name.into(), n as i64);
        }
    }
    let devices = sys
        .block()
        .devices()
        .iter()
        .zip(sys.block().queues())
        .zip(sys.wb().bdis())
        .map(|((d, q), b)| {
            let reqs = d.stats.write_requests;
            DeviceReport {
                name: b.name.clone(),
                write_iops: reqs as f64 / elapsed.max(1e-9),
                write_mb_per_second: d.stats.write_bytes as f64 / 1e6 / elapsed.max(1e-9),
                write_mib_per_second: d.stats.write_bytes as f64
                    / f64::from(1u32 << 20)
                    / elapsed.max(1e-9),
                avg_write_request_kib: if reqs == 0 {
                    0.0
                } else {
                    d.stats.write_bytes as f64 / 1024.0 / reqs as f64
                },
                max_write_request_kib: d.stats.max_request_bytes as f64 / 1024.0,
                write_requests: reqs,
                write_bytes: d.stats.write_bytes,
                sequential_fraction: if reqs == 0 {
                    0.0
                } else {
                    d.stats.sequential_requests as f64 / reqs as f64
                },
                utilisation: secs(d.stats.busy_ns) / elapsed.max(1e-9),
                merges: q.stats.merges,
                data_write_requests: q.stats.data_write_requests,
                data_write_bytes: q.stats.data_write_bytes,
            }
        })
        .collect();
    let mut report = RunReport {
        seed,
        outcome,
        cut: outcome != Outcome::Completed,
        elapsed_seconds: elapsed,
        user_seconds: secs(workload.iter().map(|t| t.user_ns).sum()),
        system_seconds: secs(workload.iter().map(|t| t.sys_ns).sum()),
        kswapd_awake_seconds: secs(sys.kswapd_awake_total_ns()),
        context_switches: workload.iter().map(|t| t.nr_switches).sum(),
        vmstat,
        zoneinfo: zoneinfo(sys),
        devices,
        sim_events: sys.core().events_processed(),
        series_stats: BTreeMap::new(),
        ftrace: ftrace_totals(sys),
        series: None,
        fsmark: sys
            .workload()
            .fsmark_runs()
            .first()
            .map(|r| r.results.clone())
            .unwrap_or_default(),
        iozone: sys.workload().iozone_results().to_vec(),
        nodes: nodes::node_reports(sys),
        check: None,
        tasks: workload
            .iter()
            .filter(|t| !t.command.is_empty())
            .map(|t| TaskReport {
                name: t.name.clone(),
                command: t.command.clone(),
                exit_status: if t.exited_ns.is_some() {
                    t.exit_status
                } else {
                    -1
                },
                message: t.message.clone(),
                elapsed_seconds: task_elapsed_seconds(t, sys.now()),
            })
            .collect(),
    };
    unit::to_base_pages(&mut report, sys.mm().unit().base_pages());
    report
}

/// A task's [`TaskReport::elapsed_seconds`] in a run that ended at `end`.
fn task_elapsed_seconds(t: &crate::sched::Task, end: u64) -> f64 {
    if t.start_after.is_some() {
        return 0.0;
    }
    secs(t.exited_ns.unwrap_or(end).saturating_sub(t.started_ns))
}

/// The tracepoint totals, with the one kswapd-awake figure of the run:
/// Σ (mm_vmscan_kswapd_sleep − mm_vmscan_kswapd_wake), as
/// trace-vmscan-postprocess.pl and mmtests count it, plus an interval
/// still open when the run ends (counted to the end of the run, which the
/// script, reading a trace that stops there, leaves out). The text
/// report's `kswapd_s`, the JSON's `kswapd_awake_seconds` and `wbsim
/// compare`'s "Time kswapd awake" are this one figure.
fn ftrace_totals(sys: &System) -> crate::trace::ReclaimTraceStats {
    let mut totals = sys.core().tracer().stats.totals;
    totals.kswapd_awake_ns = sys.kswapd_awake_total_ns();
    totals
}

/// The per-zone statistics of [`RunReport::zoneinfo`].
fn zoneinfo(sys: &System) -> BTreeMap<String, BTreeMap<String, i64>> {
    (0..sys.mm().nr_zones())
        .map(|z| {
            let stat = |e: ZoneEv| sys.mm().vmstat().zone_stat(z, e) as i64;
            let stats = BTreeMap::from([
                ("nr_vmscan_write".to_string(), stat(ZoneEv::NrVmscanWrite)),
                (
                    "nr_vmscan_immediate_reclaim".to_string(),
                    stat(ZoneEv::NrVmscanImmediateReclaim),
                ),
                (
                    "nr_slab_reclaimable".to_string(),
                    sys.mm().zone(z).nr_slab_reclaimable as i64,
                ),
            ]);
            (nodes::zone_key(sys, z), stats)
        })
        .collect()
}

/// Counters printed in the text summary, in this order.
pub const SUMMARY_COUNTERS: &[&str] = &[
    "pgpgin",
    "pswpin",
    "pswpout",
    "pgmajfault",
    "slabs_scanned",
    "kswapd_inodesteal",
    "nr_dirtied",
    "nr_written",
    "nr_vmscan_write",
    "pgactivate",
    "pgdeactivate",
    "pgrotated",
    "pgscan_kswapd",
    "pgscan_direct",
    "pgsteal",
    "kswapd_steal",
    "allocstall",
    "pageoutrun",
];

fn mean_stddev(xs: &[f64]) -> (f64, f64) {
    let n = xs.len() as f64;
    let mean = xs.iter().sum::<f64>() / n;
    let var = xs.iter().map(|x| (x - mean).powi(2)).sum::<f64>() / n;
    (mean, var.sqrt())
}

/// Zone suffixes of per-zone /proc/vmstat counters, in zone order (3.0
/// `TEXTS_FOR_ZONES`).
pub(crate) const ZONE_SUFFIXES: [&str; 5] = ["dma", "dma32", "normal", "high", "movable"];

/// Per-zone event counters of the text summary (the /proc/vmstat names
/// with the zone suffix), then the per-zone `nr_vmscan_write` of
/// /proc/zoneinfo and each zone's share of all page allocations: which zone
/// the page allocator and reclaim favour is what decides where dirty pages
/// collect (seeds 000 and 003).
const ZONE_COUNTERS: &[&str] = &["pgalloc", "pgscan_kswapd", "pgscan_direct", "pgsteal"];

fn format_zones(s: &mut String, run: &RunReport) {
    let zones: Vec<&str> = ZONE_SUFFIXES
        .into_iter()
        .filter(|z| run.vmstat.contains_key(&format!("pgalloc_{z}")))
        .collect();
    let v = |k: &str, z: &str| run.vmstat.get(&format!("{k}_{z}")).copied().unwrap_or(0);
    let total_alloc: i64 = zones.iter().map(|z| v("pgalloc", z)).sum();
    let _ = write!(s, "\nzones (seed {}):\n  {:<8}", run.seed, "zone");
    for k in ZONE_COUNTERS {
        let _ = write!(s, " {k:>15}");
    }
    let _ = writeln!(s, " {:>15} {:>11}", "nr_vmscan_write", "alloc_share");
    for z in zones {
        let _ = write!(s, "  {z:<8}");
        for k in ZONE_COUNTERS {
            let _ = write!(s, " {:>15}", v(k, z));
        }
        // Every node's zone of this type (`normal`, `node1_normal`).
        let writes: i64 = run
            .zoneinfo
            .iter()
            .filter(|(k, _)| *k == z || k.ends_with(&format!("_{z}")))
            .filter_map(|(_, m)| m.get("nr_vmscan_write"))
            .sum();
        let _ = write!(s, " {writes:>15}");
        let share = v("pgalloc", z) as f64 / total_alloc.max(1) as f64;
        let _ = writeln!(s, " {:>10.1}%", share * 100.0);
    }
}

/// How the text summary treats its runs.
#[derive(Debug, Clone, Copy, Default)]
pub struct TextOptions {
    /// Count runs cut by their time limit in the means.
    pub include_cut: bool,
}

/// The text summary with default options (cut runs left out of the means).
pub fn format_text(r: &Report) -> String {
    format_text_with(r, &TextOptions::default())
}

/// The text summary: one line per run, then the mean and stddev.
pub fn format_text_with(r: &Report, opts: &TextOptions) -> String {
    let mut s = String::new();
    let _ = writeln!(
        s,
        "scenario {}  kernel {}  runs {}",
        r.scenario,
        r.kernel,
        r.runs.len()
    );
    let clock = if r.source == "qemu" {
        "the real guest's time (seed: boot number)"
    } else {
        "simulated time"
    };
    let _ = writeln!(
        s,
        "(times in seconds of {clock}: elapsed wall, the workload's user and \
         system CPU, kswapd awake; counts are /proc/vmstat deltas)"
    );
    let _ = writeln!(
        s,
        "{:>6} {:>10} {:>8} {:>8} {:>8} {:>13} {:>10} {:>9} {:>9}",
        "seed",
        "elapsed_s",
        "user_s",
        "sys_s",
        "kswapd_s",
        "nr_vmscan_wr",
        "pgactivate",
        "allocstal",
        "outcome"
    );
    for run in &r.runs {
        let v = |k: &str| run.vmstat.get(k).copied().unwrap_or(0);
        let _ = writeln!(
            s,
            "{:>6} {:>10.3} {:>8.3} {:>8.3} {:>8.3} {:>13} {:>10} {:>9} {:>9}",
            run.seed,
            run.elapsed_seconds,
            run.user_seconds,
            run.system_seconds,
            run.kswapd_awake_seconds,
            v("nr_vmscan_write"),
            v("pgactivate"),
            v("allocstall"),
            match run.outcome {
                Outcome::Completed => "done",
                Outcome::TimeLimit => "CUT",
                Outcome::EventBudget => "CUT",
            }
        );
    }
    for run in &r.runs {
        for t in run.tasks.iter().filter(|t| t.exit_status > 0) {
            let what = match t.exit_status {
                st if t.message.is_empty() && st > 128 => format!("killed by signal {}", st - 128),
                _ => t.message.replace('\n', "\n    "),
            };
            let _ = writeln!(
                s,
                "  seed {} task {} exited {}: {what}",
                run.seed, t.name, t.exit_status
            );
        }
    }
    let cut = r.runs.iter().filter(|x| x.cut).count();
    let el: Vec<f64> = r
        .runs
        .iter()
        .filter(|x| opts.include_cut || !x.cut)
        .map(|x| x.elapsed_seconds)
        .collect();
    if !el.is_empty() {
        let (m, sd) = mean_stddev(&el);
        let _ = write!(s, "elapsed: mean {m:.3} s  stddev {sd:.3} s");
        match (cut, opts.include_cut) {
            (0, _) => {}
            (n, true) => {
                let _ = write!(s, "  (including {n} cut run(s))");
            }
            (n, false) => {
                let _ = write!(s, "  (over {} run(s); {n} cut run(s) left out)", el.len());
            }
        }
        let _ = writeln!(s);
    } else if cut > 0 {
        let _ = writeln!(
            s,
            "elapsed: no mean: every run was cut (--include-cut counts them)"
        );
    }
    for run in r.runs.iter().filter(|x| x.cut) {
        let why = match run.outcome {
            Outcome::EventBudget => "its event budget",
            _ => "the scenario's time limit (run.time_limit_s)",
        };
        let _ = writeln!(
            s,
            "CUT: seed {} stopped at {:.3} s by {why} with workload tasks still running; \
             its figures cover only part of the workload",
            run.seed, run.elapsed_seconds
        );
    }
    if let Some(last) = r.runs.last() {
        tools::format_fsmark(&mut s, &r.config, last);
        tools::format_iozone(&mut s, &r.config, last);
        let _ = writeln!(s, "\nvmstat deltas (seed {}):", last.seed);
        for k in SUMMARY_COUNTERS {
            let _ = writeln!(
                s,
                "  {:<24} {}",
                k,
                last.vmstat.get(*k).copied().unwrap_or(0)
            );
        }
        format_zones(&mut s, last);
        nodes::format_nodes(&mut s, last.seed, &last.nodes);
        let _ = writeln!(
            s,
            "\ndevices (seed {}; w/s: write requests per second; wMB/s: MiB per second, \
             as iostat -m prints it; avgrq: KiB per request):",
            last.seed
        );
        for d in &last.devices {
            let _ = writeln!(
                s,
                "  {:<8} w/s {:>9.1}  wMB/s {:>7.2}  avgrq {:>6.1} KiB  seq {:>5.1}%  util {:>5.1}%",
                d.name,
                d.write_iops,
                d.write_mib_per_second,
                d.avg_write_request_kib,
                d.sequential_fraction * 100.0,
                d.utilisation * 100.0
            );
        }
    }
    s
}
