#![allow(unexpected_cfgs)] // pyo3 0.22's create_exception! checks a `gil-refs` feature this crate does not have
#![allow(clippy::useless_conversion)] // pyo3 0.22's #[pyfunction] expansion converts PyErr into itself
//! `wbsim._native`: the Rust side of the Python package. Each function
//! takes plain strings and numbers and returns JSON (or CSV) text, which
//! `wbsim/__init__.py` turns into pandas objects; runs release the GIL;
//! every error is a `WbsimError` (a `ValueError`) carrying `file`, `line`,
//! `key` and `message`, never a panic.

use std::collections::BTreeMap;

use pyo3::create_exception;
use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;

create_exception!(
    _native,
    WbsimError,
    PyValueError,
    "A bad scenario, override, kernel or grid: `file`, `line`, `key` and `message` say which and why."
);

/// An error on its way to Python.
struct Fail {
    text: String,
    file: Option<String>,
    line: Option<usize>,
    key: Option<String>,
    message: String,
}

impl From<String> for Fail {
    fn from(message: String) -> Self {
        Fail {
            text: message.clone(),
            file: None,
            line: None,
            key: None,
            message,
        }
    }
}

impl From<wbsim::scenario::ScenarioError> for Fail {
    fn from(e: wbsim::scenario::ScenarioError) -> Self {
        let first = e.problems.first();
        Fail {
            text: e.to_string(),
            file: first.map(|p| p.file.clone()),
            line: first.and_then(|p| p.line),
            key: first.and_then(|p| p.key.clone()),
            message: first.map_or_else(|| e.to_string(), |p| p.message.clone()),
        }
    }
}

impl From<wbsim_cli::SetupError> for Fail {
    fn from(e: wbsim_cli::SetupError) -> Self {
        match e {
            wbsim_cli::SetupError::Scenario(e) => e.into(),
            wbsim_cli::SetupError::Kernels(e) => e.into(),
        }
    }
}

impl Fail {
    fn into_py(self, py: Python<'_>) -> PyErr {
        let err = WbsimError::new_err(self.text);
        let v = err.value_bound(py);
        let _ = v.setattr("file", self.file);
        let _ = v.setattr("line", self.line);
        let _ = v.setattr("key", self.key);
        let _ = v.setattr("message", self.message);
        err
    }
}

/// Scenario text and the file name errors name: `kind` is `path` (read
/// the file), `text` (TOML) or `json` (a dict, as JSON).
fn scenario_source(source: &str, kind: &str) -> Result<(String, String), Fail> {
    match kind {
        "path" => Ok((
            wbsim::scenario::read_scenario_text(std::path::Path::new(source))?,
            source.to_string(),
        )),
        "text" => Ok((source.to_string(), "<scenario>".to_string())),
        "json" => {
            let v: toml::Value =
                serde_json::from_str(source).map_err(|e| format!("scenario dict: {e}"))?;
            let text = toml::to_string(&v).map_err(|e| format!("scenario dict: {e}"))?;
            Ok((text, "<scenario dict>".to_string()))
        }
        other => Err(format!("scenario kind `{other}`: expected path, text or json").into()),
    }
}

/// One run: the CLI's JSON report (`wbsim run --json`) and the series CSV
/// (`--series`, empty when `sample_ms` is 0).
fn run_inner(
    text: &str,
    file_name: &str,
    kernel: Option<String>,
    seed: Option<u64>,
    sets: &[String],
    sample_ms: u64,
) -> Result<(String, String), Fail> {
    let kernels: Vec<String> = kernel.into_iter().collect();
    let (sc, mut profiles) = wbsim_cli::resolve_run(text, file_name, &kernels, &[], sets)?;
    let profile = profiles.pop().ok_or_else(|| "no kernel".to_string())?;
    let opts = wbsim::RunOptions {
        series_interval_ns: (sample_ms > 0).then_some(sample_ms * 1_000_000),
        ..Default::default()
    };
    let seed = seed.unwrap_or(sc.run.seed);
    let run = wbsim::simulate(&sc, &profile, seed, &opts);
    let report = wbsim::make_report(&sc, &profile, vec![run]);
    let json = serde_json::to_string_pretty(&report).map_err(|e| e.to_string())?;
    let mut csv = String::new();
    if let Some(series) = report.runs[0].series.as_ref() {
        use wbsim::report::series::Series;
        csv.push_str(Series::CSV_HEADER);
        csv.push('\n');
        Series::write_csv_rows(series, &report.kernel, seed, &mut csv);
    }
    Ok((json, csv))
}

#[pyfunction]
#[pyo3(signature = (source, kind, kernel=None, seed=None, sets=Vec::new(), sample_ms=250))]
fn run(
    py: Python<'_>,
    source: String,
    kind: String,
    kernel: Option<String>,
    seed: Option<u64>,
    sets: Vec<String>,
    sample_ms: u64,
) -> PyResult<(String, String)> {
    py.allow_threads(|| {
        let (text, file_name) = scenario_source(&source, &kind)?;
        run_inner(&text, &file_name, kernel, seed, &sets, sample_ms)
    })
    .map_err(|f| f.into_py(py))
}

/// The presets: JSON list of [name, description].
#[pyfunction]
fn kernels() -> PyResult<String> {
    let list: Vec<(String, String)> = wbsim::kernel::preset_descriptions()
        .into_iter()
        .map(|(n, w)| (n.to_string(), w.to_string()))
        .collect();
    serde_json::to_string(&list).map_err(|e| PyValueError::new_err(e.to_string()))
}

/// Experiment `id` compared: `wbsim reproduce ID --json`'s JSON.
#[pyfunction]
#[pyo3(signature = (id, runs=None, include_cut=false))]
fn reproduce(py: Python<'_>, id: String, runs: Option<u32>, include_cut: bool) -> PyResult<String> {
    py.allow_threads(|| {
        wbsim_cli::reproduce::reproduce_value(&id, runs, include_cut)
            .map(|v| v.to_string())
            .map_err(Fail::from)
    })
    .map_err(|f| f.into_py(py))
}

/// The built-in experiments' ids, as JSON.
#[pyfunction]
fn experiments() -> PyResult<String> {
    wbsim_cli::reproduce::experiment_ids()
        .map(|ids| serde_json::to_string(&ids).unwrap_or_default())
        .map_err(PyValueError::new_err)
}

/// A sweep's runs: scenario `source` of `kind`, `grid_json` an object of
/// key → list of values (strings). Returns (scenario text, file name,
/// JSON list of run specs).
#[pyfunction]
fn sweep_plan(
    py: Python<'_>,
    source: String,
    kind: String,
    grid_json: String,
) -> PyResult<(String, String, String)> {
    py.allow_threads(|| {
        let (text, file_name) = scenario_source(&source, &kind)?;
        let grid: BTreeMap<String, Vec<String>> =
            serde_json::from_str(&grid_json).map_err(|e| format!("grid: {e}"))?;
        let specs = wbsim_cli::sweep::plan(&text, &file_name, &grid).map_err(|e| {
            let key = e
                .strip_prefix("grid key `")
                .and_then(|r| r.split('`').next())
                .map(str::to_string)
                .or_else(|| grid.keys().find(|k| e.contains(k.as_str())).cloned());
            Fail {
                text: e.clone(),
                file: Some(file_name.clone()),
                line: None,
                key,
                message: e,
            }
        })?;
        let json = serde_json::to_string(&specs).map_err(|e| e.to_string())?;
        Ok::<_, Fail>((text, file_name, json))
    })
    .map_err(|f| f.into_py(py))
}

/// Run one planned run; its row as JSON.
#[pyfunction]
fn sweep_run(
    py: Python<'_>,
    text: String,
    file_name: String,
    spec_json: String,
    metrics: Vec<String>,
) -> PyResult<String> {
    py.allow_threads(|| {
        let spec: wbsim_cli::sweep::RunSpec =
            serde_json::from_str(&spec_json).map_err(|e| format!("run spec: {e}"))?;
        let metrics = if metrics.is_empty() {
            wbsim_cli::sweep::DEFAULT_METRICS
                .iter()
                .map(|m| m.to_string())
                .collect()
        } else {
            metrics
        };
        let row = wbsim_cli::sweep::run_row(&text, &file_name, &spec, &metrics)?;
        Ok::<_, Fail>(serde_json::Value::Object(row).to_string())
    })
    .map_err(|f| f.into_py(py))
}

#[pymodule]
fn _native(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add("WbsimError", m.py().get_type_bound::<WbsimError>())?;
    m.add("__version__", env!("CARGO_PKG_VERSION"))?;
    m.add_function(wrap_pyfunction!(run, m)?)?;
    m.add_function(wrap_pyfunction!(kernels, m)?)?;
    m.add_function(wrap_pyfunction!(reproduce, m)?)?;
    m.add_function(wrap_pyfunction!(experiments, m)?)?;
    m.add_function(wrap_pyfunction!(sweep_plan, m)?)?;
    m.add_function(wrap_pyfunction!(sweep_run, m)?)?;
    Ok(())
}
