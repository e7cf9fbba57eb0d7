//! wbsim: a deterministic simulator of Linux page-cache writeback and
//! memory reclaim.
//!
//! A scenario (machine, devices, filesystems, sysctls, workload) and a
//! kernel profile go in; the figures the real experiment prints come out:
//! elapsed/user/system time, /proc/vmstat deltas and device statistics.

use crate::sched::HasCore;
pub mod block;
pub mod device;
pub mod estimate;
pub mod fs;
pub mod kernel;
pub mod mm;
pub mod reclaim;
pub mod report;
pub mod scenario;
pub mod sched;
pub mod sim;
pub mod system;
#[cfg(test)]
mod test_support;
pub mod trace;
pub mod workload;
pub mod writeback;

use kernel::KernelProfile;
use report::{Report, RunReport};
use scenario::Scenario;

/// Options of one simulation.
#[derive(Debug, Clone, Default)]
pub struct RunOptions {
    /// Check the conservation invariants after every event
    /// ([`system::check::Checker`]); what they find is in
    /// `RunReport::check`. Results are the same as unchecked.
    pub check_every_event: bool,
    /// Sample per-zone page state every this many ns of simulated time
    /// (`RunReport::series` and `series_stats`).
    pub series_interval_ns: Option<u64>,
    /// Stop after this many engine events ([`system::Outcome::EventBudget`]);
    /// `None` runs to completion or the time limit.
    pub max_events: Option<u64>,
}

/// Simulate one run of `sc` on `profile` with `seed`.
pub fn simulate(sc: &Scenario, profile: &KernelProfile, seed: u64, opts: &RunOptions) -> RunReport {
    simulate_inner(sc, profile, seed, opts, None).0
}

/// As [`simulate`], also writing the vmscan and writeback tracepoints as a
/// 3.0 ftrace text file to `trace_out`.
pub fn simulate_traced(
    sc: &Scenario,
    profile: &KernelProfile,
    seed: u64,
    opts: &RunOptions,
    trace_out: Box<dyn std::io::Write + Send>,
) -> std::io::Result<RunReport> {
    let (r, written) = simulate_inner(sc, profile, seed, opts, Some(trace_out));
    written.map(|()| r)
}

fn simulate_inner(
    sc: &Scenario,
    profile: &KernelProfile,
    seed: u64,
    opts: &RunOptions,
    trace_out: Option<Box<dyn std::io::Write + Send>>,
) -> (RunReport, std::io::Result<()>) {
    let mut sys = system::build_system(sc, profile, seed);
    if let Some(out) = trace_out {
        sys.core_mut().tracer_mut().write_to(out);
    }
    sys.set_check_every_event(opts.check_every_event);
    sys.core_mut()
        .set_max_events(opts.max_events.unwrap_or(u64::MAX));
    if let Some(interval_ns) = opts.series_interval_ns {
        sys.record_series(interval_ns);
    }
    let outcome = sys.run();
    let mut r = report::run_report(&sys, seed, outcome);
    r.check = sys.check_summary();
    if let Some(mut series) = sys.take_series() {
        series.to_base_pages(crate::mm::MmHost::mm(&sys).unit().base_pages());
        r.series_stats = series.stats();
        r.series = Some(series);
    }
    let written = sys.core_mut().tracer_mut().finish();
    (r, written)
}

/// Simulate and return the final machine state too (tests, invariants).
pub fn simulate_system(
    sc: &Scenario,
    profile: &KernelProfile,
    seed: u64,
) -> (system::System, RunReport) {
    let mut sys = system::build_system(sc, profile, seed);
    let outcome = sys.run();
    let r = report::run_report(&sys, seed, outcome);
    (sys, r)
}

/// The seeds of a scenario's runs: `seed, seed + 1, ...`.
pub fn run_seeds(first: u64, runs: u32) -> Vec<u64> {
    (0..runs as u64).map(|i| first.wrapping_add(i)).collect()
}

/// Resolve the kernel profile: an override preset name, else the scenario's.
pub fn resolve_profile(
    sc: &Scenario,
    kernel_override: Option<&str>,
) -> Result<KernelProfile, String> {
    kernel::preset(kernel_override.unwrap_or(&sc.kernel))
}

/// Assemble a report from runs in seed order.
pub fn make_report(sc: &Scenario, profile: &KernelProfile, runs: Vec<RunReport>) -> Report {
    Report {
        source: "simulator".into(),
        scenario: sc.name.clone(),
        kernel: profile.name.clone(),
        config: sc.clone(),
        profile: Some(profile.clone()),
        runs,
        lab: None,
    }
}

/// The OS error text without the trailing " (os error N)", for messages
/// about files (scenario files here, output files in the command).
pub fn io_reason(e: &std::io::Error) -> String {
    let text = e.to_string();
    match text.find(" (os error ") {
        Some(i) => text[..i].to_string(),
        None => text,
    }
}
