//! The `wbsim` command.

use wbsim_cli::{compare, exit, kernels, lab, output, reproduce, run, sweep};

use std::path::PathBuf;
use std::process::ExitCode;

use clap::{Parser, Subcommand};

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
        /// A kernel profile file of your own (the keys of a preset, usually
        /// on `base = "PRESET"`); repeat it, or mix it with --kernel, to
        /// run several.
        #[arg(long, value_name = "FILE")]
        kernel_file: Vec<PathBuf>,
        /// Override one key (repeatable): a scenario key, e.g.
        /// `--set sysctl.dirty_ratio=40` or `--set device[0].seq_write_mib_per_s=5`
        /// (docs/scenario-reference.md; a list of tables takes an index), or
        /// a profile key of every kernel run, e.g.
        /// `--set reclaim.kswapd_writepage_max_priority=9` (`wbsim kernels
        /// --show NAME` lists them).
        #[arg(long = "set", value_name = "KEY=VALUE")]
        set: Vec<String>,
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
        /// Sampling interval of the series, in milliseconds of simulated
        /// time (1 to 3,600,000).
        #[arg(long, default_value_t = 250)]
        sample_ms: u64,
        /// Write the vmscan and writeback tracepoints of the run as 3.0
        /// ftrace text (readable by trace-vmscan-postprocess.pl), with the
        /// dirty-throttling events of IO-less kernels (global_dirty_state,
        /// bdi_dirty_ratelimit, balance_dirty_pages); needs a single run
        /// of a single kernel.
        #[arg(long)]
        trace: Option<PathBuf>,
        /// Check the conservation invariants after every event (about 2x
        /// the time of a plain run); each run ends with a line of events
        /// checked, invariants and violations (exit status 5 on a violation).
        #[arg(long)]
        check: bool,
        /// Count runs cut by their time limit in the means (they are
        /// always flagged, and make the exit status 4).
        #[arg(long)]
        include_cut: bool,
        /// Refuse to start when the estimated host memory of the runs
        /// exceeds this many MiB (default: the memory available now).
        #[arg(long, value_name = "MIB")]
        max_memory: Option<u64>,
    },
    /// Run a parameter sweep (a grid of `--set` keys, kernels and seeds
    /// over one scenario; see README, "Sweeps"), one stored row per run:
    /// a rerun skips stored runs, shards split one sweep between jobs.
    Sweep {
        /// The sweep file (TOML: `scenario`, `[grid]`, optional `metrics`).
        #[arg(required_unless_present = "merge")]
        file: Option<PathBuf>,
        /// Directory of the stored rows (DIR/runs/KEY.json).
        #[arg(long, required_unless_present = "merge")]
        out: Option<PathBuf>,
        /// Run only every N-th run from the I-th (I from 0), e.g. a Slurm
        /// array task's `--shard $SLURM_ARRAY_TASK_ID/$SLURM_ARRAY_TASK_COUNT`.
        #[arg(long, value_name = "I/N")]
        shard: Option<String>,
        /// Join the rows stored under DIR into DIR/sweep.csv, in grid order.
        #[arg(long, value_name = "DIR", conflicts_with_all = ["file", "out", "shard"])]
        merge: Option<PathBuf>,
    },
    /// Run the built-in experiments of the source documents and compare
    /// with the published figures.
    Reproduce {
        /// Experiment id (default: all).
        id: Option<String>,
        /// List the experiments (id, title, source document) and exit.
        #[arg(long)]
        list: bool,
        /// Count runs cut by their time limit in the cells' statistics.
        #[arg(long)]
        include_cut: bool,
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
    /// Run a scenario on a real Linux kernel under QEMU and set its
    /// figures beside the simulator's (setup, run, compare).
    Lab {
        #[command(subcommand)]
        command: lab::LabCommand,
    },
    /// List the built-in kernel presets, one line each: name and what it
    /// is; or show one resolved profile, key by key, with where each value
    /// comes from; or the keys two profiles differ in.
    Kernels {
        /// A preset name or a profile file to show resolved.
        #[arg(long, value_name = "NAME|FILE")]
        show: Option<String>,
        /// Two presets or profile files: print the keys whose values differ,
        /// each side's value and where it comes from.
        #[arg(
            long,
            num_args = 2,
            value_names = ["A", "B"],
            action = clap::ArgAction::Set,
            conflicts_with = "show"
        )]
        diff: Vec<String>,
        /// With --show: override keys as `wbsim run --set` does; with
        /// --diff: override them on both sides.
        #[arg(long = "set", value_name = "KEY=VALUE")]
        set: Vec<String>,
    },
    /// Describe the scenario file format.
    Scenario {
        /// Print the reference of every section and key (Markdown), as
        /// checked in at docs/scenario-reference.md.
        #[arg(long, required = true)]
        reference: bool,
    },
}

fn main() -> ExitCode {
    output::install_signal_cleanup();
    let cli = Cli::parse();
    let result = match cli.command {
        Command::Run {
            scenario,
            seed,
            runs,
            kernel,
            kernel_file,
            set,
            json,
            series,
            plot,
            sample_ms,
            trace,
            check,
            include_cut,
            max_memory,
        } => run::cmd_run(&run::RunArgs {
            path: &scenario,
            seed,
            runs,
            kernels: &kernel,
            kernel_files: &kernel_file,
            sets: &set,
            json: json.as_deref(),
            series: series.as_deref(),
            plot: plot.as_deref(),
            sample_ms,
            trace: trace.as_deref(),
            check,
            include_cut,
            max_memory_mib: max_memory,
        }),
        Command::Sweep {
            file,
            out,
            shard,
            merge,
        } => match (merge, file, out) {
            (Some(dir), _, _) => sweep::cmd_merge(&dir),
            (None, Some(f), Some(o)) => sweep::cmd_sweep(&f, &o, shard.as_deref()),
            _ => Err("sweep: give FILE and --out DIR, or --merge DIR".into()),
        },
        Command::Reproduce {
            id,
            list,
            include_cut,
            runs,
            json,
        } => {
            if list {
                reproduce::cmd_list().map(|()| 0)
            } else {
                reproduce::cmd_reproduce(id.as_deref(), runs, json.as_deref(), include_cut)
            }
        }
        Command::Compare {
            scenario,
            kernel,
            seed,
            out,
        } => compare::cmd_compare(&scenario, &kernel, seed, out.as_deref()),
        Command::Lab { command } => lab::cmd_lab(command),
        Command::Kernels {
            show: None,
            diff,
            set,
        } if diff.is_empty() && set.is_empty() => {
            for (name, what) in wbsim::kernel::preset_descriptions() {
                println!("{name:<28} {what}");
            }
            Ok(0)
        }
        Command::Kernels { diff, set, .. } if diff.len() == 2 => {
            kernels::cmd_diff(&diff[0], &diff[1], &set)
        }
        Command::Kernels { show, set, .. } => show_kernel(show.as_deref(), &set),
        Command::Scenario { .. } => {
            print!("{}", wbsim::scenario::reference_markdown());
            Ok(0)
        }
    };
    while output::interrupted() {
        // The signal handler exits the process with 130 once it has
        // cleaned up; a failure its cleanup caused must not exit first.
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
    match result {
        Ok(status) => ExitCode::from(status),
        Err(f) => {
            eprintln!("wbsim: {}", f.message);
            ExitCode::from(f.status)
        }
    }
}

/// `wbsim kernels --show NAME|FILE [--set K=V]...`.
fn show_kernel(show: Option<&str>, sets: &[String]) -> Result<u8, exit::Failure> {
    use wbsim::kernel::layers;
    let Some(what) = show else {
        return Err("--set needs --show NAME|FILE or --diff A B (the profiles to change)".into());
    };
    let r = layers::apply_sets(&kernels::resolve(what)?, sets)?;
    print!("{}", layers::show(&r));
    Ok(0)
}
