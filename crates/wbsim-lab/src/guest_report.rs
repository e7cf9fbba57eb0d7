//! The guest's records as a `wbsim::report::RunReport`, with the meanings
//! `wbsim::report::run_report` gives the simulator's figures.

pub mod series;
pub mod tool_output;
pub mod trace;
mod vmstat;

use std::collections::BTreeMap;

use wbsim::mm::page::PAGES_PER_MIB;
use wbsim::report::{DeviceReport, LabZone, RunReport, TaskReport};
use wbsim::scenario::{Program, Scenario};
use wbsim::system::Outcome;
use wbsim_guest::protocol::{kind, tag, Record, TaskEnd};

use crate::procfs::{parse_diskstat, parse_proc_stat, parse_vmstat, parse_zoneinfo, NodeInfo};

pub use vmstat::{derive_vmstat, ZONE_SUFFIXES};

/// USER_HZ: the clock ticks of /proc/PID/stat per second.
const USER_HZ: f64 = 100.0;

/// One real run, read back from the guest's records.
#[derive(Debug, Clone)]
pub struct GuestRun {
    /// The figures, as the simulator reports its own (see [`guest_run`]).
    pub report: RunReport,
    /// `uname -r` of the guest (empty if the guest did not record it).
    pub kernel_release: String,
    /// The guest's zones beside the scenario's.
    pub zones: Vec<LabZone>,
    /// Every `trace` record's text, in order.
    pub trace_text: String,
    /// The guest's `log` records, then notes of this parser (prefixed
    /// `wbsim-lab:`) on what it could not read.
    pub log: Vec<String>,
    /// A fatal guest error. [`guest_run`] returns the `error` records'
    /// message as its `Err` instead, so a `GuestRun` it returns has `None`.
    pub error: Option<String>,
}

/// The last record of `kind` with `tag`.
fn find<'a>(records: &'a [Record], k: &str, t: &str) -> Option<&'a Record> {
    records.iter().rev().find(|r| r.kind == k && r.tag == t)
}

/// Build the report of one guest run (`seed` is the run's index).
///
/// Errors: the guest's `error` records (their message, as written; several
/// joined by `; `); a missing `before` or `after` snapshot of vmstat,
/// zoneinfo or diskstat (all missing ones named); snapshot text or a
/// `task-end` record that does not parse.
///
/// Times are the guest's CLOCK_MONOTONIC. The run starts at the first
/// `task-start` and ends at the last `task-end` (the `before`/`after`
/// vmstat snapshots stand in when there are none).
///
/// * `outcome`: `TimeLimit` (and `cut`) when a task was cut at the time
///   limit, or started and never ended; else `Completed`.
/// * `elapsed_seconds`: run end − run start; `user_seconds`,
///   `system_seconds`, `context_switches` (voluntary): Σ over the tasks'
///   `TaskEnd` (their `wait4` rusage).
/// * `vmstat`: after − before of every counter in both snapshots, plus
///   the derived names of [`derive_vmstat`].
/// * `zoneinfo`: per populated zone (by lower-case suffix):
///   `nr_vmscan_write` and `nr_vmscan_immediate_reclaim`, after − before,
///   where the zone prints them (3.x; 4.8+ count them per node only), and
///   `pgwrite_reclaim`: reclaim writes (`mm_vmscan_writepage` or
///   `mm_vmscan_write_folio` events in the run) of pages in the zone's pfn
///   range (`start_pfn` and `spanned`).
/// * `devices`: the data disk `vda`, see [`disk_report`].
/// * `kswapd_awake_seconds`, `ftrace`: see [`trace::digest_trace`]; an
///   interval open at the end runs to the last sample (else to the
///   `after` zoneinfo snapshot).
/// * `series`: the `sample` zoneinfo records, see [`series::build_series`]
///   (its steady window ends at the first `task-end` of a workload task,
///   memtouch being a background one);
///   `series_stats`: `Series::stats()` of it (as the simulator fills it),
///   plus `kswapd_full_sleeps` (`mm_vmscan_kswapd_sleep` events in the
///   run) and `kswapd_cpu_seconds` (kswapd0's utime + stime, after −
///   before, over USER_HZ 100; only with both `kswapd` snapshots).
/// * `tasks`: one per `task-end`, in record order, the command from the
///   scenario's task of that name; then tasks that started and never
///   ended, with exit status −1. `elapsed_seconds`: from the task's
///   `task-start` to its `task-end` (for one that never ended, to the
///   later of the run end and the `after` vmstat snapshot).
/// * `fsmark`, `iozone`: the tools' result lines from the `task-output`
///   records, see [`tool_output`]; `sim_events` 0; `check` none.
pub fn guest_run(
    sc: &Scenario,
    records: &[Record],
    seed: u64,
    sample_ms: u64,
) -> Result<GuestRun, String> {
    let errors: Vec<String> = records
        .iter()
        .filter(|r| r.kind == kind::ERROR)
        .map(|r| r.text().trim().to_string())
        .collect();
    if !errors.is_empty() {
        return Err(errors.join("; "));
    }
    let mut missing = Vec::new();
    let mut snap = |k: &str, t: &str| {
        let r = find(records, k, t);
        if r.is_none() {
            missing.push(format!("{k} {t}"));
        }
        r
    };
    let snaps = [
        snap(kind::VMSTAT, tag::BEFORE),
        snap(kind::VMSTAT, tag::AFTER),
        snap(kind::ZONEINFO, tag::BEFORE),
        snap(kind::ZONEINFO, tag::AFTER),
        snap(kind::DISKSTAT, tag::BEFORE),
        snap(kind::DISKSTAT, tag::AFTER),
    ];
    let [Some(vm0), Some(vm1), Some(zi0), Some(zi1), Some(ds0), Some(ds1)] = snaps else {
        return Err(format!(
            "the guest's records lack the snapshot(s): {}",
            missing.join(", ")
        ));
    };
    let mut log: Vec<String> = records
        .iter()
        .filter(|r| r.kind == kind::LOG)
        .map(|r| r.text().trim_end().to_string())
        .collect();
    let zoneinfo =
        |r: &Record| parse_zoneinfo(&r.text()).map_err(|e| format!("zoneinfo {}: {e}", r.tag));
    let (node0, node1) = (zoneinfo(zi0)?, zoneinfo(zi1)?);
    let diskstat =
        |r: &Record| parse_diskstat(&r.text()).map_err(|e| format!("diskstat {}: {e}", r.tag));
    let (disk0, disk1) = (diskstat(ds0)?, diskstat(ds1)?);

    // The run's span and its tasks.
    let starts: Vec<&Record> = records
        .iter()
        .filter(|r| r.kind == kind::TASK_START)
        .collect();
    let mut ends: Vec<(u64, TaskEnd)> = Vec::new();
    for r in records.iter().filter(|r| r.kind == kind::TASK_END) {
        let end: TaskEnd = serde_json::from_slice(&r.payload)
            .map_err(|e| format!("task-end record at {} ns: {e}", r.t_ns))?;
        ends.push((r.t_ns, end));
    }
    let start_ns = starts.iter().map(|r| r.t_ns).min().unwrap_or(vm0.t_ns);
    let end_ns = ends.iter().map(|(t, _)| *t).max().unwrap_or(vm1.t_ns);
    let elapsed = end_ns.saturating_sub(start_ns) as f64 / 1e9;
    let unfinished: Vec<String> = starts
        .iter()
        .map(|r| r.text().trim().to_string())
        .filter(|name| !ends.iter().any(|(_, e)| &e.name == name))
        .collect();
    let cut = ends.iter().any(|(_, e)| e.cut) || !unfinished.is_empty();
    let command = |name: &str| {
        let t = sc.tasks.iter().find(|t| t.name == name);
        t.map(|t| t.command.clone()).unwrap_or_default()
    };
    // A task's seconds from its task-start record to `until`.
    let task_seconds = |name: &str, until: u64| {
        let start = starts.iter().find(|r| r.text().trim() == name);
        start.map_or(0.0, |r| until.saturating_sub(r.t_ns) as f64 / 1e9)
    };
    let mut tasks: Vec<TaskReport> = ends
        .iter()
        .map(|(t_ns, e)| TaskReport {
            name: e.name.clone(),
            command: command(&e.name),
            exit_status: e.exit_status,
            message: e.message.clone(),
            elapsed_seconds: task_seconds(&e.name, *t_ns),
        })
        .collect();
    tasks.extend(unfinished.iter().map(|name| TaskReport {
        name: name.clone(),
        command: command(name),
        exit_status: -1,
        message: String::new(),
        elapsed_seconds: task_seconds(name, end_ns.max(vm1.t_ns)),
    }));

    // Samples and the trace.
    let mut samples: Vec<(u64, NodeInfo)> = Vec::new();
    for r in records
        .iter()
        .filter(|r| r.kind == kind::ZONEINFO && r.tag == tag::SAMPLE)
    {
        match parse_zoneinfo(&r.text()) {
            Ok(n) => samples.push((r.t_ns, n)),
            Err(e) => log.push(format!(
                "wbsim-lab: zoneinfo sample at {} ns skipped: {e}",
                r.t_ns
            )),
        }
    }
    let last_sample_ns = samples.iter().map(|(t, _)| *t).max().unwrap_or(zi1.t_ns);
    let trace_text: String = records
        .iter()
        .filter(|r| r.kind == kind::TRACE)
        .map(Record::text)
        .collect();
    let digest = trace::digest_trace(&trace_text, &node0.zones, start_ns, last_sample_ns);
    if digest.lost_events > 0 {
        log.push(format!(
            "wbsim-lab: the trace lost {} events (ring buffer overrun); its totals are low",
            digest.lost_events
        ));
    }

    // Counters.
    let (before, after) = (parse_vmstat(&vm0.text()), parse_vmstat(&vm1.text()));
    let mut vm: BTreeMap<String, i64> = after
        .iter()
        .filter_map(|(k, v1)| Some((k.clone(), v1 - before.get(k)?)))
        .collect();
    derive_vmstat(&mut vm);
    let populated: Vec<&crate::procfs::ZoneInfo> =
        node0.zones.iter().filter(|z| z.present_pages > 0).collect();
    let mut zoneinfo_report = BTreeMap::new();
    for z0 in &populated {
        let mut m = BTreeMap::new();
        if let Some(z1) = node1.zone(&z0.name) {
            for k in ["nr_vmscan_write", "nr_vmscan_immediate_reclaim"] {
                if let (Some(a), Some(b)) = (z0.stats.get(k), z1.stats.get(k)) {
                    m.insert(k.to_string(), b - a);
                }
            }
        }
        let writes = digest.writes_by_zone.get(&z0.suffix()).copied();
        m.insert("pgwrite_reclaim".to_string(), writes.unwrap_or(0));
        zoneinfo_report.insert(z0.suffix(), m);
    }

    // Series and its figures.
    let zone_names: Vec<String> = populated.iter().map(|z| z.name.clone()).collect();
    // The first workload task to end (memtouch runs in the background).
    let background = |name: &str| {
        let t = sc.tasks.iter().find(|t| t.name == name);
        t.is_some_and(|t| matches!(t.program, Program::MemTouch(_)))
    };
    let first_exit_ns = ends
        .iter()
        .filter(|(_, e)| !background(&e.name))
        .map(|(t, _)| *t)
        .min();
    let series = series::build_series(
        &samples,
        &zone_names,
        sample_ms.saturating_mul(1_000_000),
        start_ns,
        first_exit_ns,
        &digest.kswapd,
    );
    let mut series_stats = series.stats();
    series_stats.insert(
        "kswapd_full_sleeps".to_string(),
        digest.kswapd.full_sleeps as f64,
    );
    if let (Some(k0), Some(k1)) = (
        find(records, kind::KSWAPD, tag::BEFORE),
        find(records, kind::KSWAPD, tag::AFTER),
    ) {
        match (parse_proc_stat(&k0.text()), parse_proc_stat(&k1.text())) {
            (Ok(a), Ok(b)) => {
                let ticks = |p: &crate::procfs::ProcStat| p.utime_ticks + p.stime_ticks;
                let cpu = ticks(&b).saturating_sub(ticks(&a)) as f64 / USER_HZ;
                series_stats.insert("kswapd_cpu_seconds".to_string(), cpu);
            }
            (Err(e), _) | (_, Err(e)) => log.push(format!("wbsim-lab: kswapd stat: {e}")),
        }
    }

    let ends_only = ends.iter().map(|(_, e)| e);
    let report = RunReport {
        seed,
        outcome: if cut {
            Outcome::TimeLimit
        } else {
            Outcome::Completed
        },
        cut,
        elapsed_seconds: elapsed,
        user_seconds: ends_only.clone().map(|e| e.user_seconds).sum(),
        system_seconds: ends_only.clone().map(|e| e.system_seconds).sum(),
        kswapd_awake_seconds: digest.kswapd.total_ns() as f64 / 1e9,
        context_switches: ends_only.map(|e| e.voluntary_context_switches).sum(),
        vmstat: vm,
        zoneinfo: zoneinfo_report,
        devices: vec![disk_report("vda", &disk0, &disk1, elapsed)],
        sim_events: 0,
        series_stats,
        ftrace: digest.stats,
        series: Some(series),
        fsmark: tool_output::fsmark_loops(records),
        iozone: tool_output::iozone_results(records),
        nodes: Vec::new(),
        check: None,
        tasks,
    };
    Ok(GuestRun {
        report,
        kernel_release: find(records, kind::UNAME, tag::NONE)
            .or_else(|| records.iter().find(|r| r.kind == kind::UNAME))
            .map(|r| r.text().trim().to_string())
            .unwrap_or_default(),
        zones: lab_zones(sc, &node0),
        trace_text,
        log,
        error: None,
    })
}

/// The data disk's figures from its /sys/block stat, after − before, over
/// `elapsed` seconds: write requests and bytes (sectors × 512), IOPS,
/// MB/s (10^6) and MiB/s, average request size, write merges, and
/// utilisation = io_ticks / elapsed (the snapshots may bracket a little
/// more than the run, so it can pass 1 slightly).
///
/// Left 0, since the kernel's counters cannot give them:
/// `max_write_request_kib`, `sequential_fraction`, `data_write_requests`,
/// `data_write_bytes` (blktrace would).
pub fn disk_report(
    name: &str,
    before: &crate::procfs::DiskStat,
    after: &crate::procfs::DiskStat,
    elapsed: f64,
) -> DeviceReport {
    let reqs = after.writes.saturating_sub(before.writes);
    let bytes = after.write_sectors.saturating_sub(before.write_sectors) * 512;
    let secs = elapsed.max(1e-9);
    DeviceReport {
        name: name.to_string(),
        write_iops: reqs as f64 / secs,
        write_mb_per_second: bytes as f64 / 1e6 / secs,
        write_mib_per_second: bytes as f64 / f64::from(1u32 << 20) / secs,
        avg_write_request_kib: if reqs == 0 {
            0.0
        } else {
            bytes as f64 / 1024.0 / reqs as f64
        },
        max_write_request_kib: 0.0,
        write_requests: reqs,
        write_bytes: bytes,
        sequential_fraction: 0.0,
        utilisation: after.io_ticks_ms.saturating_sub(before.io_ticks_ms) as f64 / 1e3 / secs,
        merges: after.write_merges.saturating_sub(before.write_merges),
        data_write_requests: 0,
        data_write_bytes: 0,
    }
}

/// The guest's zones that are populated or that the scenario has, in the
/// kernel's order, then scenario zones the guest lacks entirely (with 0
/// guest pages). `scenario_pages` = the scenario zone's `size_mib` in pages.
pub fn lab_zones(sc: &Scenario, node: &NodeInfo) -> Vec<LabZone> {
    let scenario_pages = |name: &str| {
        let z = sc.machine.zones.iter().find(|z| z.kind.as_str() == name);
        z.map_or(0, |z| z.size_mib * PAGES_PER_MIB)
    };
    let mut out: Vec<LabZone> = node
        .zones
        .iter()
        .filter(|z| z.present_pages > 0 || scenario_pages(&z.name) > 0)
        .map(|z| LabZone {
            name: z.name.clone(),
            spanned_pages: z.spanned_pages,
            present_pages: z.present_pages,
            managed_pages: z.managed_pages,
            scenario_pages: scenario_pages(&z.name),
            held_pages: z.held_pages(),
        })
        .collect();
    for z in &sc.machine.zones {
        if node.zone(z.kind.as_str()).is_none() {
            out.push(LabZone {
                name: z.kind.as_str().to_string(),
                spanned_pages: 0,
                present_pages: 0,
                managed_pages: 0,
                scenario_pages: z.size_mib * PAGES_PER_MIB,
                held_pages: 0,
            });
        }
    }
    out
}
