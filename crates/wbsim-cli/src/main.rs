//! The `wbsim` command.

mod compare;
mod experiment;
mod output;
mod plot;
mod reproduce;

use std::path::{Path, PathBuf};
use std::process::ExitCode;

use clap::{Parser, Subcommand};
use rayon::prelude::*;

use output::write_atomically;

#[derive(Parser)]
#[command(
    name = "wbsim",
    version,
    about = "Simulate Linux page-cache writeback and reclaim"
)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Run a scenario and report elapsed time, vmstat deltas and device figures.
    Run {
        /// Scenario file (TOML).
        scenario: PathBuf,
        /// First seed (runs use seed, seed+1, ...); default from the scenario.
        #[arg(long)]
        seed: Option<u64>,
        /// Number of runs; default from the scenario.
        #[arg(long)]
        runs: Option<u32>,
        /// Kernel preset overriding the scenario's `kernel`; repeat it to
        /// run the scenario on several kernels (e.g. to plot them together).
        #[arg(long)]
        kernel: Vec<String>,
        /// Write the whole report as JSON to this file (an array of
        /// reports when several kernels are given).
        #[arg(long)]
        json: Option<PathBuf>,
        /// Write per-zone free, file LRU, dirty and writeback pages over
        /// simulated time as CSV (every run of every kernel), and each
        /// device's dirty-limit share and threshold beside it (`X.bdi.csv`).
        #[arg(long)]
        series: Option<PathBuf>,
        /// Plot each zone's dirty pages over time, one line per kernel
        /// (first seed), as SVG to this file and PNG beside it.
        #[arg(long)]
        plot: Option<PathBuf>,
        /// Sampling interval of the series, in milliseconds of simulated time.
        #[arg(long, default_value_t = 250)]
        sample_ms: u64,
        /// Write the vmscan and writeback tracepoints of the run as 3.0
        /// ftrace text (readable by trace-vmscan-postprocess.pl); needs a
        /// single run of a single kernel.
        #[arg(long)]
        trace: Option<PathBuf>,
        /// Check conservation invariants after every event (slow).
        #[arg(long)]
        check: bool,
    },
    /// Run the built-in experiments of the source documents and compare
    /// with the published figures.
    Reproduce {
        /// Experiment id (default: all).
        id: Option<String>,
        /// Runs per row (default: as published).
        #[arg(long)]
        runs: Option<u32>,
        /// Write the comparison as JSON to this file.
        #[arg(long)]
        json: Option<PathBuf>,
    },
    /// Run a scenario on several kernels and print an mmtests-style
    /// comparison, one column per kernel (the first is the baseline).
    Compare {
        /// Scenario file (TOML).
        scenario: PathBuf,
        /// Kernel presets, in column order; at least two.
        #[arg(long)]
        kernel: Vec<String>,
        /// Seed (default from the scenario).
        #[arg(long)]
        seed: Option<u64>,
        /// Also write the report to this file.
        #[arg(long)]
        out: Option<PathBuf>,
    },
    /// List the built-in kernel presets.
    Kernels,
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    let result = match cli.command {
        Command::Run {
            scenario,
            seed,
            runs,
            kernel,
            json,
            series,
            plot,
            sample_ms,
            trace,
            check,
        } => cmd_run(&RunArgs {
            path: &scenario,
            seed,
            runs,
            kernels: &kernel,
            json: json.as_deref(),
            series: series.as_deref(),
            plot: plot.as_deref(),
            sample_ms,
            trace: trace.as_deref(),
            check,
        }),
        Command::Reproduce { id, runs, json } => {
            reproduce::cmd_reproduce(id.as_deref(), runs, json.as_deref())
        }
        Command::Compare {
            scenario,
            kernel,
            seed,
            out,
        } => compare::cmd_compare(&scenario, &kernel, seed, out.as_deref()),
        Command::Kernels => {
            for name in wbsim::kernel::preset_names() {
                println!("{name}");
            }
            Ok(())
        }
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("wbsim: {e}");
            ExitCode::FAILURE
        }
    }
}

/// One run with its trace streamed to a temporary file, renamed into place
/// when complete.
fn run_traced(
    sc: &wbsim::scenario::Scenario,
    profile: &wbsim::kernel::KernelProfile,
    seed: u64,
    opts: &wbsim::RunOptions,
    path: &Path,
) -> Result<wbsim::report::RunReport, String> {
    let tmp = output::temp_path_for(path)?;
    let file = std::fs::File::create(&tmp)
        .map_err(|e| format!("--trace {}: cannot create: {e}", path.display()))?;
    let out = Box::new(std::io::BufWriter::with_capacity(1 << 20, file));
    match wbsim::simulate_traced(sc, profile, seed, opts, out) {
        Ok(r) => {
            output::publish(&tmp, path)?;
            Ok(r)
        }
        Err(e) => {
            let _ = std::fs::remove_file(&tmp);
            Err(format!("--trace {}: cannot write: {e}", path.display()))
        }
    }
}

/// The profiles named by repeated `--kernel` options, in order.
fn kernel_presets(
    sc: &wbsim::scenario::Scenario,
    kernels: &[String],
) -> Result<Vec<wbsim::kernel::KernelProfile>, String> {
    kernels
        .iter()
        .map(|k| wbsim::resolve_profile(sc, Some(k)).map_err(|e| format!("--kernel: {e}")))
        .collect()
}

struct RunArgs<'a> {
    path: &'a Path,
    seed: Option<u64>,
    runs: Option<u32>,
    kernels: &'a [String],
    json: Option<&'a Path>,
    series: Option<&'a Path>,
    plot: Option<&'a Path>,
    sample_ms: u64,
    trace: Option<&'a Path>,
    check: bool,
}

fn cmd_run(a: &RunArgs) -> Result<(), String> {
    let sc = wbsim::scenario::load_scenario(a.path).map_err(|e| e.to_string())?;
    let profiles = if a.kernels.is_empty() {
        vec![wbsim::resolve_profile(&sc, None)
            .map_err(|e| format!("{}: key `kernel`: {e}", a.path.display()))?]
    } else {
        kernel_presets(&sc, a.kernels)?
    };
    let runs = a.runs.unwrap_or(sc.run.runs);
    if runs == 0 {
        return Err("--runs must be at least 1".into());
    }
    if a.sample_ms == 0 {
        return Err("--sample-ms must be at least 1".into());
    }
    if let Some(p) = a.plot {
        plot::png_path_for(p).map_err(|e| format!("--plot: {e}"))?;
    }
    if a.trace.is_some() && (runs != 1 || profiles.len() != 1) {
        return Err(format!(
            "--trace needs a single run of a single kernel (got {runs} run(s) of {} kernel(s)); \
             add --runs 1 and at most one --kernel",
            profiles.len()
        ));
    }
    let seeds = wbsim::run_seeds(a.seed.unwrap_or(sc.run.seed), runs);
    let opts = wbsim::RunOptions {
        check_every_event: a.check,
        series_interval_ns: (a.series.is_some() || a.plot.is_some())
            .then_some(a.sample_ms * 1_000_000),
        ..Default::default()
    };
    let mut reports = Vec::new();
    for profile in &profiles {
        let runs: Vec<_> = match a.trace {
            Some(p) => vec![run_traced(&sc, profile, seeds[0], &opts, p)?],
            None => seeds
                .par_iter()
                .map(|&s| wbsim::simulate(&sc, profile, s, &opts))
                .collect(),
        };
        let report = wbsim::make_report(&sc, profile, runs);
        print!("{}", wbsim::report::format_text(&report));
        reports.push(report);
    }
    if let Some(p) = a.json {
        let text = if reports.len() == 1 {
            serde_json::to_string_pretty(&reports[0])
        } else {
            serde_json::to_string_pretty(&reports)
        }
        .map_err(|e| e.to_string())?;
        write_atomically(p, &text)?;
    }
    if let Some(p) = a.series {
        use wbsim::report::series::Series;
        type Rows = fn(&Series, &str, u64, &mut String);
        // Every run of every kernel; the per-device shares go beside the
        // zones: `X.csv` → `X.bdi.csv`.
        let csv = |header: &str, rows: Rows| {
            let mut out = format!("{header}\n");
            for r in &reports {
                for run in &r.runs {
                    if let Some(series) = &run.series {
                        rows(series, &r.kernel, run.seed, &mut out);
                    }
                }
            }
            out
        };
        write_atomically(p, csv(Series::CSV_HEADER, Series::write_csv_rows))?;
        let bdi = csv(Series::BDI_CSV_HEADER, Series::write_bdi_csv_rows);
        write_atomically(&p.with_extension("bdi.csv"), &bdi)?;
    }
    if let Some(p) = a.plot {
        let lines: Vec<(&str, &wbsim::report::series::Series)> = reports
            .iter()
            .filter_map(|r| Some((r.kernel.as_str(), r.runs.first()?.series.as_ref()?)))
            .collect();
        let title = format!("{}: dirty pages per zone (seed {})", sc.name, seeds[0]);
        plot::write_dirty_plot(p, &title, &lines)?;
    }
    Ok(())
}
