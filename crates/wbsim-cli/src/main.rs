//! The `wbsim` command.

mod reproduce;

use std::path::{Path, PathBuf};
use std::process::ExitCode;

use clap::{Parser, Subcommand};
use rayon::prelude::*;

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
        /// Kernel preset overriding the scenario's `kernel`.
        #[arg(long)]
        kernel: Option<String>,
        /// Write the whole report as JSON to this file.
        #[arg(long)]
        json: Option<PathBuf>,
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
            check,
        } => cmd_run(
            &scenario,
            seed,
            runs,
            kernel.as_deref(),
            json.as_deref(),
            check,
        ),
        Command::Reproduce { id, runs, json } => {
            reproduce::cmd_reproduce(id.as_deref(), runs, json.as_deref())
        }
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

fn cmd_run(
    path: &Path,
    seed: Option<u64>,
    runs: Option<u32>,
    kernel: Option<&str>,
    json: Option<&Path>,
    check: bool,
) -> Result<(), String> {
    let sc = wbsim::scenario::load_scenario(path).map_err(|e| e.to_string())?;
    let profile = wbsim::resolve_profile(&sc, kernel).map_err(|e| {
        if kernel.is_some() {
            format!("--kernel: {e}")
        } else {
            format!("{}: key `kernel`: {e}", path.display())
        }
    })?;
    let runs = runs.unwrap_or(sc.run.runs);
    if runs == 0 {
        return Err("--runs must be at least 1".into());
    }
    let seeds = wbsim::run_seeds(seed.unwrap_or(sc.run.seed), runs);
    let opts = wbsim::RunOptions {
        check_every_event: check,
    };
    let reports: Vec<_> = seeds
        .par_iter()
        .map(|&s| wbsim::simulate(&sc, &profile, s, &opts))
        .collect();
    let report = wbsim::make_report(&sc, &profile, reports);
    print!("{}", wbsim::report::format_text(&report));
    if let Some(p) = json {
        let text = serde_json::to_string_pretty(&report).map_err(|e| e.to_string())?;
        write_atomically(p, &text)?;
    }
    Ok(())
}

/// Write a file via a temporary sibling and a rename, so that a failure
/// never leaves half a file behind.
pub fn write_atomically(path: &Path, text: &str) -> Result<(), String> {
    let dir = path
        .parent()
        .filter(|d| !d.as_os_str().is_empty())
        .unwrap_or(Path::new("."));
    let name = path
        .file_name()
        .ok_or_else(|| format!("{}: not a file name", path.display()))?;
    let tmp = dir.join(format!(
        ".{}.tmp{}",
        name.to_string_lossy(),
        std::process::id()
    ));
    std::fs::write(&tmp, text).map_err(|e| format!("{}: cannot write: {e}", path.display()))?;
    std::fs::rename(&tmp, path).map_err(|e| {
        let _ = std::fs::remove_file(&tmp);
        format!("{}: cannot write: {e}", path.display())
    })
}
