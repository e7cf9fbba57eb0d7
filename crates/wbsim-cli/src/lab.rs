//! `wbsim lab`: run a scenario on a real kernel under QEMU (`run`), set
//! the real figures beside the simulator's (`compare`), and prepare the
//! host (`setup`). The work is in the `wbsim-lab` crate; this module is
//! the command line, progress display and output files.

use std::path::{Path, PathBuf};

use clap::{Args, Subcommand};
use wbsim_lab::kernel_image::{self, KernelImage};
use wbsim_lab::qemu::Accel;
use wbsim_lab::run::{
    default_guest_binary, default_lab_dir, kprobe_parts, run_lab, valid_trace_event, LabOptions,
    LabRun, Progress, KPROBE_FORMS,
};

use crate::exit::Failure;
use crate::output::Outputs;
use crate::plot;

#[derive(Subcommand)]
pub enum LabCommand {
    /// Check for QEMU and the mkfs tools (printing the apt-get line for
    /// what is missing), fetch Debian's kernel and build the guest binary.
    Setup {
        /// The lab's directory (kernel, results cache); default
        /// $WBSIM_LAB_DIR, else ~/.cache/wbsim/lab.
        #[arg(long)]
        lab_dir: Option<PathBuf>,
        /// Do not fetch Debian's kernel.
        #[arg(long)]
        no_debian: bool,
    },
    /// Boot a real kernel under QEMU, run the scenario's workload in it and
    /// write the same report as `wbsim run` ("source": "qemu").
    Run {
        #[command(flatten)]
        boot: BootArgs,
        /// Write the report as JSON.
        #[arg(long)]
        json: Option<PathBuf>,
        /// Write the guest's per-zone page counts over time as CSV.
        #[arg(long)]
        series: Option<PathBuf>,
        /// Write the guest's own ftrace text (vmscan and writeback
        /// tracepoints); needs --runs 1.
        #[arg(long)]
        trace: Option<PathBuf>,
        /// Also trace this tracepoint, as `system/event` (e.g.
        /// `sched/sched_switch`); repeatable; needs --trace. Events the
        /// kernel lacks are skipped and logged.
        #[arg(long = "trace-event", value_name = "SYSTEM/EVENT")]
        trace_events: Vec<String>,
        /// Also trace a dynamic probe: a line of the kernel's
        /// `kprobe_events`, `p:NAME SYMBOL [ARGS]` or `r:NAME SYMBOL [ARGS]`,
        /// optionally followed by ` if FILTER` (e.g. `r:tfb_fail
        /// try_to_free_buffers ret=$retval:u8 if ret == 0`); repeatable;
        /// needs --trace. A probe the kernel refuses is skipped and logged.
        #[arg(long = "kprobe", value_name = "PROBE")]
        kprobes: Vec<String>,
    },
    /// Run the scenario on a real kernel and on a simulated kernel preset
    /// and print, figure by figure, real, simulated, ratio and a marker
    /// where they differ by more than the tolerance.
    Compare {
        #[command(flatten)]
        boot: BootArgs,
        /// The simulator's kernel preset (`wbsim kernels`).
        #[arg(long)]
        kernel: String,
        /// Relative tolerance around the real spread (0.25 = 25 %).
        #[arg(long, default_value_t = 0.25)]
        tolerance: f64,
        /// Also write the table to this file.
        #[arg(long)]
        out: Option<PathBuf>,
        /// Plot the dirty pages of each zone over time, real and
        /// simulated (first run), as SVG and PNG beside it.
        #[arg(long)]
        plot: Option<PathBuf>,
        /// Simulate with the scenario's own `kernel_mib` in each zone. By
        /// default the simulation holds what the guest's kernel held
        /// before the workload (its boot allocations, the lab's ftrace
        /// ring buffer, the initramfs), so that both sides have the same
        /// memory for the page cache.
        #[arg(long)]
        keep_scenario_memory: bool,
    },
}

/// What every boot needs.
#[derive(Args)]
pub struct BootArgs {
    /// Scenario file (TOML).
    scenario: PathBuf,
    /// `debian` (fetched by `wbsim lab setup`) or the path of an x86-64
    /// bzImage with virtio-blk, the filesystem, ftrace events, initramfs
    /// and devtmpfs built in (see the README's lab section).
    #[arg(long)]
    kernel_image: String,
    /// Boots to run; real runs vary, so compare reports each figure's spread.
    #[arg(long, default_value_t = 1)]
    runs: u32,
    /// Sampling interval of /proc/vmstat and /proc/zoneinfo in the guest,
    /// milliseconds (100 to 60,000).
    #[arg(long, default_value_t = 1000)]
    sample_ms: u64,
    /// Boot again even when the cache holds this boot's results.
    #[arg(long)]
    rerun: bool,
    /// `auto` (KVM when /dev/kvm is usable, else TCG), `kvm` or `tcg`.
    #[arg(long, default_value = "auto")]
    accel: String,
    /// Kill a guest still running after this many wall-clock seconds
    /// (default: the scenario's time_limit_s + 180).
    #[arg(long)]
    wall_limit_s: Option<u64>,
    /// The lab's directory (default $WBSIM_LAB_DIR, else ~/.cache/wbsim/lab).
    #[arg(long)]
    lab_dir: Option<PathBuf>,
    /// The guest binary (default: the one `wbsim lab setup` builds).
    #[arg(long)]
    guest: Option<PathBuf>,
    /// A static ntfs-3g for fuse-ntfs scenarios (the guest has no FUSE
    /// daemon of its own; the README's lab section builds one).
    #[arg(long = "ntfs-3g", value_name = "PATH")]
    ntfs_3g: Option<PathBuf>,
    /// Print the guest's serial console on stderr as it boots.
    #[arg(long)]
    verbose: bool,
}

pub fn cmd_lab(cmd: LabCommand) -> Result<u8, Failure> {
    match cmd {
        LabCommand::Setup { lab_dir, no_debian } => setup(lab_dir, no_debian),
        LabCommand::Run {
            boot,
            json,
            series,
            trace,
            trace_events,
            kprobes,
        } => lab_run(
            &boot,
            json.as_deref(),
            series.as_deref(),
            trace.as_deref(),
            &trace_events,
            &kprobes,
        ),
        LabCommand::Compare {
            boot,
            kernel,
            tolerance,
            out,
            plot,
            keep_scenario_memory,
        } => lab_compare(
            &boot,
            &kernel,
            tolerance,
            out.as_deref(),
            plot.as_deref(),
            keep_scenario_memory,
        ),
    }
}

fn setup(lab_dir: Option<PathBuf>, no_debian: bool) -> Result<u8, Failure> {
    use wbsim_lab::setup;
    let lab_dir = lab_dir.unwrap_or_else(default_lab_dir);
    let missing = setup::missing_tools();
    for t in setup::TOOLS {
        let ok = !missing.iter().any(|m| m.command == t.command);
        println!(
            "{:<20} {:<8} {}",
            t.command,
            if ok { "ok" } else { "MISSING" },
            t.why
        );
    }
    if !missing.is_empty() {
        return Err(format!(
            "missing tools; install them with:\n    {}",
            setup::apt_line(&missing)
        )
        .into());
    }
    if !no_debian {
        let release = kernel_image::fetch_debian(&lab_dir).map_err(Failure::runtime)?;
        println!(
            "debian kernel        ok       {release} in {}",
            lab_dir.join("debian").display()
        );
    }
    setup::build_guest(&wbsim_lab::run::workspace_dir(), &mut |l| println!("{l}"))
        .map_err(Failure::runtime)?;
    println!(
        "guest binary         ok       {}",
        default_guest_binary().display()
    );
    println!("lab directory                 {}", lab_dir.display());
    Ok(0)
}

fn kernel_of(arg: &str, lab_dir: &Path) -> Result<KernelImage, String> {
    if arg == "debian" {
        kernel_image::debian(lab_dir)
    } else {
        kernel_image::from_path(Path::new(arg))
    }
}

/// Boot (or read from the cache) the runs of `b`, with a progress line.
/// `lru_generations`: the simulated profile's MGLRU switch, which the real
/// kernel is given too (`None`: the scenario's own kernel decides).
fn boot_runs(
    b: &BootArgs,
    trace: bool,
    extra_trace_events: &[String],
    kprobes: &[String],
    lru_generations: Option<bool>,
) -> Result<(wbsim::scenario::Scenario, LabRun), Failure> {
    let sc = wbsim::scenario::load_scenario(&b.scenario).map_err(|e| e.to_string())?;
    if sc.machine.unit_kib != 4 {
        return Err(format!(
            "{}: machine.unit_kib = {}; allowed: 4 (a lab guest's kernel has 4 KiB pages)",
            b.scenario.display(),
            sc.machine.unit_kib
        )
        .into());
    }
    let lru_gen = match lru_generations {
        Some(on) => on,
        None => wbsim::resolve_profile(&sc, None)?.lru_generations,
    };
    crate::run::in_range("--runs", b.runs, &(1..=100))?;
    crate::run::in_range("--sample-ms", b.sample_ms, &(100..=60_000))?;
    let accel = match b.accel.as_str() {
        "auto" => None,
        "kvm" => Some(Accel::Kvm),
        "tcg" => Some(Accel::Tcg),
        other => {
            return Err(Failure {
                status: crate::exit::USAGE,
                message: format!("--accel {other:?}: allowed: auto, kvm, tcg"),
            })
        }
    };
    let lab_dir = b.lab_dir.clone().unwrap_or_else(default_lab_dir);
    let kernel = kernel_of(&b.kernel_image, &lab_dir)?;
    let opts = LabOptions {
        lab_dir,
        guest_binary: b.guest.clone().unwrap_or_else(default_guest_binary),
        runs: b.runs,
        sample_ms: b.sample_ms,
        trace,
        extra_trace_events: extra_trace_events.to_vec(),
        kprobes: kprobes.to_vec(),
        ntfs_3g: b.ntfs_3g.clone(),
        rerun: b.rerun,
        accel,
        wall_limit_s: b.wall_limit_s,
        lru_gen: Some(lru_gen),
    };
    let bar = indicatif::ProgressBar::new_spinner();
    bar.enable_steady_tick(std::time::Duration::from_millis(250));
    let verbose = b.verbose;
    let mib = |x: u64| x as f64 / 1_048_576.0;
    let result = run_lab(&sc, &kernel, &opts, &mut |p| match p {
        Progress::Boot { run, runs, cached } => bar.set_message(format!(
            "boot {}/{runs} of {}: {}",
            run + 1,
            kernel.release(),
            if cached { "from the cache" } else { "booting" }
        )),
        Progress::Guest {
            run,
            t_s,
            dirtied_bytes,
            written_bytes,
        } => bar.set_message(format!(
            "boot {}/{}: guest {t_s:.0} s, dirtied {:.0} MiB, written {:.0} MiB",
            run + 1,
            opts.runs,
            mib(dirtied_bytes),
            mib(written_bytes)
        )),
        Progress::Console { line, .. } => {
            if verbose {
                bar.suspend(|| eprintln!("guest: {line}"));
            }
        }
    });
    bar.finish_and_clear();
    Ok((sc, result.map_err(Failure::runtime)?))
}

/// The lab lines of a text report: kernel, accelerator, zones, notes.
fn lab_text(lab: &LabRun) -> String {
    use std::fmt::Write as _;
    let mut s = String::new();
    let Some(info) = &lab.report.lab else {
        return s;
    };
    let _ = writeln!(
        s,
        "real kernel {} ({}), {}, {} boot(s), {} from the cache",
        info.kernel_release,
        info.kernel_image,
        info.accel,
        lab.cached.len(),
        lab.cached.iter().filter(|c| **c).count()
    );
    let _ = writeln!(
        s,
        "guest zones (pages; held: neither free nor file LRU before the workload): \
         zone present managed scenario held"
    );
    for z in &info.zones {
        let _ = writeln!(
            s,
            "  {:<8} {:>9} {:>9} {:>9} {:>9}",
            z.name, z.present_pages, z.managed_pages, z.scenario_pages, z.held_pages
        );
    }
    for n in &info.notes {
        let _ = writeln!(s, "note: {n}");
    }
    s
}

/// An option of `wbsim lab run` that adds records to `--trace`'s file:
/// it needs `--trace`, and each of its values must be well formed.
struct TraceAddition<'a> {
    option: &'static str,
    values: &'a [String],
    valid: fn(&str) -> bool,
    /// What a value should look like, for the refusal.
    expected: String,
}

fn lab_run(
    b: &BootArgs,
    json: Option<&Path>,
    series: Option<&Path>,
    trace: Option<&Path>,
    trace_events: &[String],
    kprobes: &[String],
) -> Result<u8, Failure> {
    if trace.is_some() && b.runs != 1 {
        return Err("--trace needs --runs 1 (one boot's trace)".into());
    }
    let additions = [
        TraceAddition {
            option: "--trace-event",
            values: trace_events,
            valid: valid_trace_event,
            expected: "SYSTEM/EVENT as under /sys/kernel/tracing/events (letters, digits, \
                       underscores), e.g. sched/sched_switch"
                .into(),
        },
        TraceAddition {
            option: "--kprobe",
            values: kprobes,
            valid: |p| kprobe_parts(p).is_some(),
            expected: format!(
                "a kprobe_events line with a name, {KPROBE_FORMS}, \
                 e.g. `r:tfb_fail try_to_free_buffers ret=$retval:u8 if ret == 0`"
            ),
        },
    ];
    for a in &additions {
        if !a.values.is_empty() && trace.is_none() {
            return Err(format!("{} needs --trace (the file the events go to)", a.option).into());
        }
    }
    for a in &additions {
        if let Some(bad) = a.values.iter().find(|v| !(a.valid)(v)) {
            return Err(Failure {
                status: crate::exit::USAGE,
                message: format!("{} {bad:?}: expected {}", a.option, a.expected),
            });
        }
    }
    let mut requests: Vec<(&str, &Path)> = Vec::new();
    for (l, p) in [("--json", json), ("--series", series), ("--trace", trace)] {
        if let Some(p) = p {
            requests.push((l, p));
        }
    }
    let mut outputs = Outputs::plan(&requests, &[&b.scenario])?;
    let (_sc, lab) = boot_runs(b, trace.is_some(), trace_events, kprobes, None)?;
    let text = format!(
        "{}{}",
        lab_text(&lab),
        wbsim::report::format_text_with(
            &lab.report,
            &wbsim::report::TextOptions { include_cut: false }
        )
    );
    outputs.print_text(&text);
    if let Some(id) = outputs.id("--json") {
        let j = serde_json::to_string_pretty(&lab.report)
            .map_err(|e| Failure::runtime(e.to_string()))?;
        outputs.put(id, j.as_bytes()).map_err(Failure::runtime)?;
    }
    if let Some(id) = outputs.id("--series") {
        let mut csv = format!("{}\n", wbsim::report::series::Series::CSV_HEADER);
        for run in &lab.report.runs {
            if let Some(s) = &run.series {
                s.write_csv_rows(&lab.report.kernel, run.seed, &mut csv);
            }
        }
        outputs.put(id, csv.as_bytes()).map_err(Failure::runtime)?;
    }
    if let Some(id) = outputs.id("--trace") {
        outputs
            .put(id, lab.traces[0].as_bytes())
            .map_err(Failure::runtime)?;
    }
    outputs.commit().map_err(Failure::runtime)?;
    Ok(if lab.report.runs.iter().any(|r| r.cut) {
        crate::exit::CUT_RUNS
    } else {
        0
    })
}

fn lab_compare(
    b: &BootArgs,
    preset: &str,
    tolerance: f64,
    out: Option<&Path>,
    plot_path: Option<&Path>,
    keep_scenario_memory: bool,
) -> Result<u8, Failure> {
    if !(0.0..=10.0).contains(&tolerance) {
        return Err(
            format!("--tolerance {tolerance}: allowed 0 to 10 (a fraction; 0.25 = 25 %)").into(),
        );
    }
    let mut requests: Vec<(&str, PathBuf)> = Vec::new();
    if let Some(p) = out {
        requests.push(("--out", p.to_path_buf()));
    }
    if let Some(p) = plot_path {
        requests.push(("--plot", p.to_path_buf()));
        requests.push((
            "--plot (PNG)",
            plot::png_path_for(p).map_err(|e| format!("--plot: {e}"))?,
        ));
    }
    let refs: Vec<(&str, &Path)> = requests.iter().map(|(l, p)| (*l, p.as_path())).collect();
    let mut outputs = Outputs::plan(&refs, &[&b.scenario])?;
    let sc0 = wbsim::scenario::load_scenario(&b.scenario).map_err(|e| e.to_string())?;
    let profile =
        wbsim::resolve_profile(&sc0, Some(preset)).map_err(|e| format!("--kernel: {e}"))?;
    let (booted, mut lab) = boot_runs(b, false, &[], &[], Some(profile.lru_generations))?;
    // The same machine on both sides: unless asked not to, the simulation
    // holds in each zone what the guest's kernel held.
    let sc = match (&mut lab.report.lab, keep_scenario_memory) {
        (Some(info), false) => {
            let (sc, note) = wbsim_lab::held::with_guest_held(&booted, &info.zones);
            info.notes.extend(note);
            sc
        }
        _ => booted,
    };
    let opts = wbsim::RunOptions {
        series_interval_ns: Some(b.sample_ms * 1_000_000),
        ..Default::default()
    };
    use rayon::prelude::*;
    let sim: Vec<_> = wbsim::run_seeds(sc.run.seed, b.runs)
        .par_iter()
        .map(|&s| wbsim::simulate(&sc, &profile, s, &opts))
        .collect();
    let figures = wbsim_lab::compare::figures(&lab.report.runs, &sim);
    let real_label = format!(
        "real {} ({} boot(s))",
        lab.report.kernel,
        lab.report.runs.len()
    );
    let sim_label = format!("wbsim {} ({} seed(s))", profile.name, sim.len());
    let text = format!(
        "{}{}",
        lab_text(&lab),
        wbsim_lab::compare::render(&figures, tolerance, &real_label, &sim_label)
    );
    outputs.print_text(&text);
    if let Some(id) = outputs.id("--out") {
        outputs.put(id, text.as_bytes()).map_err(Failure::runtime)?;
    }
    if let Some(id) = outputs.id("--plot") {
        let real_series = lab.report.runs.first().and_then(|r| r.series.as_ref());
        let sim_series = sim.first().and_then(|r| r.series.as_ref());
        let lines: Vec<(&str, &wbsim::report::series::Series)> = [
            (real_label.as_str(), real_series),
            (sim_label.as_str(), sim_series),
        ]
        .into_iter()
        .filter_map(|(l, s)| Some((l, s?)))
        .collect();
        let title = format!("{}: dirty pages per zone, real and simulated", sc.name);
        plot::put_plot(&mut outputs, id, &title, &lines).map_err(Failure::runtime)?;
    }
    outputs.commit().map_err(Failure::runtime)?;
    Ok(0)
}
