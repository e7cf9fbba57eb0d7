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

/// Why a run cannot be set up: its scenario (with the scenario-key
/// overrides), or its kernels (presets, files, profile-key overrides).
#[derive(Debug)]
pub enum SetupError {
    Scenario(wbsim::scenario::ScenarioError),
    Kernels(String),
}

impl std::fmt::Display for SetupError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            SetupError::Scenario(e) => write!(f, "{e}"),
            SetupError::Kernels(e) => write!(f, "{e}"),
        }
    }
}

/// Scenario `text` (from `file_name`) and its kernels as `wbsim run`,
/// a sweep's run and the Python package take them: `sets` split into
/// scenario keys (applied to the scenario) and profile keys (applied to
/// every kernel; see [`run_profiles`]).
pub fn resolve_run(
    text: &str,
    file_name: &str,
    kernels: &[String],
    kernel_files: &[PathBuf],
    sets: &[String],
) -> Result<(wbsim::scenario::Scenario, Vec<wbsim::kernel::KernelProfile>), SetupError> {
    use wbsim::scenario::overrides;
    let (scenario_sets, profile_sets): (Vec<String>, Vec<String>) = sets
        .iter()
        .cloned()
        .partition(|s| overrides::is_scenario_key(s));
    let sc = overrides::parse_with_overrides(text, file_name, &scenario_sets)
        .map_err(SetupError::Scenario)?;
    let profiles = run_profiles(&sc, kernels, kernel_files, &profile_sets).map_err(|e| {
        // The scenario's own `kernel` key: say which file.
        SetupError::Kernels(if e.starts_with("key `kernel`") {
            format!("{file_name}: {e}")
        } else {
            e
        })
    })?;
    Ok((sc, profiles))
}

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
