//! `wbsim run`: simulate a scenario on one or more kernels and write the
//! text report, and on request the JSON report, the series CSV, the plot
//! and the ftrace text. Every output is checked before the first
//! simulated event and all are committed together at the end (`output`).

use std::io::Write as _;
use std::path::Path;

use rayon::prelude::*;

use crate::exit::{self, Failure};
use crate::output::Outputs;
use crate::plot;

/// `--sample-ms` accepts 1 ms to one hour of simulated time.
const SAMPLE_MS_RANGE: std::ops::RangeInclusive<u64> = 1..=3_600_000;
/// `--runs` accepts 1 to 10,000 runs.
const RUNS_RANGE: std::ops::RangeInclusive<u32> = 1..=10_000;

pub struct RunArgs<'a> {
    pub path: &'a Path,
    pub seed: Option<u64>,
    pub runs: Option<u32>,
    pub kernels: &'a [String],
    pub kernel_files: &'a [std::path::PathBuf],
    pub sets: &'a [String],
    pub json: Option<&'a Path>,
    pub series: Option<&'a Path>,
    pub plot: Option<&'a Path>,
    pub sample_ms: u64,
    pub trace: Option<&'a Path>,
    pub check: bool,
    pub include_cut: bool,
    pub max_memory_mib: Option<u64>,
}

/// Check a number given on the command line against its range.
pub fn in_range<T: PartialOrd + std::fmt::Display>(
    option: &str,
    value: T,
    range: &std::ops::RangeInclusive<T>,
) -> Result<T, String> {
    if range.contains(&value) {
        Ok(value)
    } else {
        Err(format!(
            "{option} {value}: out of range; allowed: {} to {}",
            range.start(),
            range.end()
        ))
    }
}

/// The output files of `wbsim run`, in the order they are planned.
fn plan_outputs(a: &RunArgs) -> Result<Outputs, String> {
    let mut requests: Vec<(&str, std::path::PathBuf)> = Vec::new();
    if let Some(p) = a.json {
        requests.push(("--json", p.to_path_buf()));
    }
    if let Some(p) = a.series {
        if p == Path::new("-") {
            return Err(
                "--series -: the series is two files (X.csv and X.bdi.csv); give a path".into(),
            );
        }
        requests.push(("--series", p.to_path_buf()));
        requests.push(("--series (devices)", p.with_extension("bdi.csv")));
    }
    if let Some(p) = a.plot {
        if p == Path::new("-") {
            return Err("--plot -: the plot is two files (SVG and PNG); give a path".into());
        }
        let png = plot::png_path_for(p).map_err(|e| format!("--plot: {e}"))?;
        requests.push(("--plot", p.to_path_buf()));
        requests.push(("--plot (PNG)", png));
    }
    if let Some(p) = a.trace {
        requests.push(("--trace", p.to_path_buf()));
    }
    let refs: Vec<(&str, &Path)> = requests.iter().map(|(l, p)| (*l, p.as_path())).collect();
    Outputs::plan(&refs, &[a.path])
}

pub fn cmd_run(a: &RunArgs) -> Result<u8, Failure> {
    let text = wbsim::scenario::read_scenario_text(a.path).map_err(|e| e.to_string())?;
    let file_name = a.path.display().to_string();
    let (sc, profiles) = crate::resolve_run(&text, &file_name, a.kernels, a.kernel_files, a.sets)
        .map_err(|e| e.to_string())?;
    let runs = in_range("--runs", a.runs.unwrap_or(sc.run.runs), &RUNS_RANGE)?;
    in_range("--sample-ms", a.sample_ms, &SAMPLE_MS_RANGE)?;
    if a.trace.is_some() && (runs != 1 || profiles.len() != 1) {
        return Err(format!(
            "--trace needs a single run of a single kernel (got {runs} run(s) of {} kernel(s)); \
             add --runs 1 and at most one --kernel",
            profiles.len()
        )
        .into());
    }
    if a.trace.is_some() && sc.machine.unit_kib != 4 {
        return Err(format!(
            "--trace needs page granularity, and {} has machine.unit_kib = {}: tracepoint \
             fields count pages as the kernel prints them; run it with --set \
             machine.unit_kib=4 to trace",
            a.path.display(),
            sc.machine.unit_kib
        )
        .into());
    }
    let opts = wbsim::RunOptions {
        check_every_event: a.check,
        series_interval_ns: (a.series.is_some() || a.plot.is_some())
            .then_some(a.sample_ms * 1_000_000),
        ..Default::default()
    };
    check_memory(&sc, &opts, runs, a.max_memory_mib)?;
    let mut outputs = plan_outputs(a)?;
    let seeds = wbsim::run_seeds(a.seed.unwrap_or(sc.run.seed), runs);
    let text_opts = wbsim::report::TextOptions {
        include_cut: a.include_cut,
    };
    let mut text_out: Box<dyn std::io::Write> = if outputs.uses_stdout() {
        Box::new(std::io::stderr())
    } else {
        Box::new(std::io::stdout())
    };
    let mut reports = Vec::new();
    for profile in &profiles {
        let runs: Vec<_> = match outputs.id("--trace") {
            Some(id) => {
                let out = outputs.stream(id)?;
                let r =
                    wbsim::simulate_traced(&sc, profile, seeds[0], &opts, out).map_err(|e| {
                        Failure::runtime(format!(
                            "--trace {}: cannot write: {}",
                            a.trace.unwrap_or(Path::new("")).display(),
                            wbsim::scenario::io_reason(&e)
                        ))
                    })?;
                vec![r]
            }
            None => seeds
                .par_iter()
                .map(|&s| wbsim::simulate(&sc, profile, s, &opts))
                .collect(),
        };
        let report = wbsim::make_report(&sc, profile, runs);
        let _ = write!(
            text_out,
            "{}",
            wbsim::report::format_text_with(&report, &text_opts)
        );
        for run in &report.runs {
            if let Some(check) = &run.check {
                let _ = writeln!(text_out, "seed {}: {}", run.seed, check.line());
            }
        }
        reports.push(report);
    }
    if let Some(id) = outputs.id("--json") {
        let text = if reports.len() == 1 {
            serde_json::to_string_pretty(&reports[0])
        } else {
            serde_json::to_string_pretty(&reports)
        }
        .map_err(|e| Failure::runtime(e.to_string()))?;
        outputs.put(id, text.as_bytes()).map_err(Failure::runtime)?;
    }
    if let Some(id) = outputs.id("--series") {
        write_series(&mut outputs, id, &reports).map_err(Failure::runtime)?;
    }
    if let Some(id) = outputs.id("--plot") {
        let lines: Vec<(&str, &wbsim::report::series::Series)> = reports
            .iter()
            .filter_map(|r| Some((r.kernel.as_str(), r.runs.first()?.series.as_ref()?)))
            .collect();
        let title = format!("{}: dirty pages per zone (seed {})", sc.name, seeds[0]);
        plot::put_plot(&mut outputs, id, &title, &lines).map_err(Failure::runtime)?;
    }
    outputs.commit().map_err(Failure::runtime)?;
    Ok(status_of(&reports))
}

/// Every run of every kernel as CSV; the per-device shares go beside the
/// zones: `X.csv` → `X.bdi.csv`.
fn write_series(
    outputs: &mut Outputs,
    id: crate::output::OutputId,
    reports: &[wbsim::report::Report],
) -> Result<(), String> {
    use wbsim::report::series::Series;
    type Rows = fn(&Series, &str, u64, &mut String);
    let csv = |header: &str, rows: Rows| {
        let mut out = format!("{header}\n");
        for r in reports {
            for run in &r.runs {
                if let Some(series) = &run.series {
                    rows(series, &r.kernel, run.seed, &mut out);
                }
            }
        }
        out
    };
    outputs.put(
        id,
        csv(Series::CSV_HEADER, Series::write_csv_rows).as_bytes(),
    )?;
    let bdi_id = outputs
        .id("--series (devices)")
        .ok_or("--series: no device CSV planned")?;
    outputs.put(
        bdi_id,
        csv(Series::BDI_CSV_HEADER, Series::write_bdi_csv_rows).as_bytes(),
    )
}

/// The exit status the runs call for: 5 when `--check` found a
/// violation, 4 when a run was cut, else 0.
fn status_of(reports: &[wbsim::report::Report]) -> u8 {
    let runs = || reports.iter().flat_map(|r| &r.runs);
    if runs().any(|r| r.check.as_ref().is_some_and(|c| c.violations > 0)) {
        exit::CHECK_VIOLATION
    } else if runs().any(|r| r.cut) {
        exit::CUT_RUNS
    } else {
        0
    }
}

/// Refuse a run whose estimated host memory exceeds `--max-memory` or the
/// memory available now (MemAvailable of /proc/meminfo).
fn check_memory(
    sc: &wbsim::scenario::Scenario,
    opts: &wbsim::RunOptions,
    runs: u32,
    max_memory_mib: Option<u64>,
) -> Result<(), String> {
    let one = wbsim::estimate::run_memory(sc, opts);
    let parallel = u64::from(runs)
        .min(rayon::current_num_threads() as u64)
        .max(1);
    let need = one.total_bytes().saturating_mul(parallel);
    let (limit, source) = match max_memory_mib {
        Some(m) => (m.saturating_mul(1 << 20), "--max-memory".to_string()),
        None => match available_memory_bytes() {
            Some(b) => (b, "the memory available now (MemAvailable)".to_string()),
            None => return Ok(()),
        },
    };
    if need > limit {
        return Err(format!(
            "{}: the run needs an estimated {} MiB of host memory ({parallel} run(s) at once, \
             each {}), more than {source}, {} MiB; give --max-memory MIB to allow more, \
             or fewer --runs",
            sc.name,
            need >> 20,
            one.describe(),
            limit >> 20
        ));
    }
    Ok(())
}

/// MemAvailable from /proc/meminfo, in bytes.
fn available_memory_bytes() -> Option<u64> {
    let text = std::fs::read_to_string("/proc/meminfo").ok()?;
    let line = text.lines().find(|l| l.starts_with("MemAvailable:"))?;
    let kib: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kib * 1024)
}
