//! The `wbsim` command's library: each subcommand's module, shared with
//! the Python package (`crates/wbsim-py`), which runs scenarios and
//! reproduces experiments through the same code.

pub mod compare;
pub mod exit;
pub mod experiment;
pub mod kernels;
pub mod lab;
pub mod metric;
pub mod output;
pub mod plot;
pub mod reproduce;
pub mod run;
pub mod sweep;

use std::path::PathBuf;

/// The kernels of `wbsim run`: the `--kernel` presets, then the
/// `--kernel-file` profiles (the scenario's kernel when there are none),
/// each with the `--set` overrides applied.
pub fn run_profiles(
    sc: &wbsim::scenario::Scenario,
    kernels: &[String],
    files: &[PathBuf],
    sets: &[String],
) -> Result<Vec<wbsim::kernel::KernelProfile>, String> {
    use wbsim::kernel::layers;
    let mut bases = Vec::new();
    for k in kernels {
        bases.push(layers::resolve_preset(k).map_err(|e| format!("--kernel: {e}"))?);
    }
    for f in files {
        bases.push(layers::resolve_file(f).map_err(|e| format!("--kernel-file: {e}"))?);
    }
    if bases.is_empty() {
        bases.push(layers::resolve_preset(&sc.kernel).map_err(|e| format!("key `kernel`: {e}"))?);
    }
    bases
        .iter()
        .map(|b| layers::apply_sets(b, sets).map(|r| r.profile))
        .collect()
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
