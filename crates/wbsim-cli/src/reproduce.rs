//! `wbsim reproduce [ID]`: run the built-in experiments (see
//! `experiment.rs`), in parallel over all cores, and print published and
//! simulated figures side by side with each cell's band and verdict.

use std::path::Path;

use indicatif::{ProgressBar, ProgressStyle};
use rayon::prelude::*;
use serde::Serialize;

use crate::exit::{self, Failure};
use crate::experiment::{self, Experiment, Figure, RunsByKey};
use crate::output::Outputs;

#[derive(Serialize)]
struct Cell {
    name: String,
    /// `null` where the source gives no number.
    published: Option<f64>,
    /// `null` when undefined (see `undefined_reason`).
    simulated: Option<f64>,
    /// `[low, high]`; an unbounded side is `null`.
    band: [Option<f64>; 2],
    pass: bool,
    /// Used to set an input parameter: shown, never counted as reproduced.
    calibration: bool,
    /// `pass`, `FAIL`, `undefined` or `calibration`.
    verdict: &'static str,
    /// Why the simulated figure has no value (x/0, every run cut).
    #[serde(skip_serializing_if = "Option::is_none")]
    undefined_reason: Option<String>,
    /// Runs cut by their time limit among those the cell reads.
    cut_runs: usize,
    /// For a cell that does not pass: what the published figure depends
    /// on outside the model, and the evidence (the band file's
    /// `outside_model`). The cell still counts as not reproduced.
    #[serde(skip_serializing_if = "Option::is_none")]
    outside_model: Option<String>,
}

#[derive(Serialize)]
struct ExperimentResult {
    id: String,
    title: String,
    runs_per_row: u32,
    kernels: std::collections::BTreeMap<String, String>,
    cells: Vec<Cell>,
}

#[derive(Serialize)]
struct Comparison {
    experiments: Vec<ExperimentResult>,
    not_implemented: Vec<String>,
}

fn finite(x: f64) -> Option<f64> {
    x.is_finite().then_some(x)
}

/// `wbsim reproduce --list`: each experiment's id, title and source.
pub fn cmd_list() -> Result<(), Failure> {
    let all = experiment::load_all()?;
    for e in &all {
        println!("{:<20} {}", e.id, e.title);
        println!("{:<20} source: {}", "", experiment::source_of(e));
    }
    for m in experiment::not_implemented(&all) {
        println!("{m:<20} (not yet implemented)");
    }
    Ok(())
}

/// Run the experiments; the status is 3 when any counted cell FAILed or
/// is undefined, 4 when runs were cut (and every cell passed).
pub fn cmd_reproduce(
    id: Option<&str>,
    runs: Option<u32>,
    json: Option<&Path>,
    include_cut: bool,
) -> Result<u8, Failure> {
    let all = experiment::load_all()?;
    let missing = experiment::not_implemented(&all);
    let selected = select(&all, &missing, id)?;
    if let Some(n) = runs {
        crate::run::in_range("--runs", n, &(1..=1_000))?;
    }
    let requests: Vec<(&str, &Path)> = json.map(|p| ("--json", p)).into_iter().collect();
    let mut outputs = Outputs::plan(&requests, &[])?;
    let all_selected = id.is_none();
    let results = run_and_evaluate(&selected, runs, include_cut)?;
    for r in &results {
        print_experiment(r);
    }
    if id.is_none() {
        for m in &missing {
            println!("{m}: not yet implemented");
        }
    }
    let counted = || {
        results
            .iter()
            .flat_map(|r| &r.cells)
            .filter(|c| !c.calibration)
    };
    let failed = counted().filter(|c| !c.pass).count();
    let cut = results
        .iter()
        .flat_map(|r| &r.cells)
        .any(|c| c.cut_runs > 0);
    println!(
        "{} of {} cells pass; {failed} FAIL or undefined",
        counted().filter(|c| c.pass).count(),
        counted().count()
    );
    if let Some(id) = outputs.id("--json") {
        let cmp = Comparison {
            experiments: results,
            not_implemented: if all_selected { missing } else { Vec::new() },
        };
        let text =
            serde_json::to_string_pretty(&cmp).map_err(|e| Failure::runtime(e.to_string()))?;
        outputs.put(id, text.as_bytes()).map_err(Failure::runtime)?;
    }
    outputs.commit().map_err(Failure::runtime)?;
    Ok(if failed > 0 {
        exit::FAILED_CELLS
    } else if cut {
        exit::CUT_RUNS
    } else {
        0
    })
}

/// Experiment `id` of `all`, or all of them when `id` is `None`.
fn select<'a>(
    all: &'a [Experiment],
    missing: &[String],
    id: Option<&str>,
) -> Result<Vec<&'a Experiment>, String> {
    Ok(match id {
        None => all.iter().collect(),
        Some(id) => vec![find_experiment(all, missing, id)?],
    })
}

/// Experiment `id` of `all`; `missing` are those named but not yet
/// implemented.
fn find_experiment<'a>(
    all: &'a [Experiment],
    missing: &[String],
    id: &str,
) -> Result<&'a Experiment, String> {
    if missing.iter().any(|m| m == id) {
        return Err(format!("{id}: not yet implemented"));
    }
    all.iter().find(|e| e.id == id).ok_or_else(|| {
        let mut known: Vec<&str> = all.iter().map(|e| e.id.as_str()).collect();
        known.extend(missing.iter().map(String::as_str));
        format!("unknown experiment `{id}`; known: {}", known.join(", "))
    })
}

/// Experiment `id` run and compared, as the JSON `wbsim reproduce ID
/// --json` writes (without printing the table): for the Python package.
pub fn reproduce_value(
    id: &str,
    runs: Option<u32>,
    include_cut: bool,
) -> Result<serde_json::Value, String> {
    comparison_value(Some(id), runs, include_cut)
}

/// Every built-in experiment run and compared, as `wbsim reproduce
/// --json` writes (without printing the table): what the `reproduce`
/// benchmark times (issue 31's goal 2).
pub fn reproduce_all_value(
    runs: Option<u32>,
    include_cut: bool,
) -> Result<serde_json::Value, String> {
    comparison_value(None, runs, include_cut)
}

/// Experiment `id` (every one when `None`) run and compared, as the JSON
/// `wbsim reproduce [ID] --json` writes: the experiments not yet
/// implemented are listed only when all were asked for.
fn comparison_value(
    id: Option<&str>,
    runs: Option<u32>,
    include_cut: bool,
) -> Result<serde_json::Value, String> {
    let all = experiment::load_all()?;
    let missing = experiment::not_implemented(&all);
    let selected = select(&all, &missing, id)?;
    if let Some(n) = runs {
        crate::run::in_range("runs", n, &(1..=1_000))?;
    }
    serde_json::to_value(Comparison {
        experiments: run_and_evaluate(&selected, runs, include_cut)?,
        not_implemented: if id.is_none() { missing } else { Vec::new() },
    })
    .map_err(|e| e.to_string())
}

/// The experiments' runs in one pool ([`run_all`]), then each
/// experiment's cells, in the order given.
fn run_and_evaluate(
    selected: &[&Experiment],
    runs: Option<u32>,
    include_cut: bool,
) -> Result<Vec<ExperimentResult>, String> {
    let plans = selected
        .iter()
        .map(|e| plan_experiment(e, runs))
        .collect::<Result<Vec<_>, _>>()?;
    let mut reports = run_all(&plans)?.into_iter();
    plans
        .into_iter()
        .map(|plan| {
            let own: Vec<_> = reports.by_ref().take(plan.jobs.len()).collect();
            evaluate_experiment(plan, own, include_cut)
        })
        .collect()
}

/// The ids of the built-in experiments.
pub fn experiment_ids() -> Result<Vec<String>, String> {
    Ok(experiment::load_all()?.into_iter().map(|e| e.id).collect())
}

/// One simulated run a cell reads.
struct Job {
    /// The scenario's label in the experiment.
    label: String,
    /// The kernel's label in the experiment.
    kernel: String,
    sc: wbsim::scenario::Scenario,
    profile: wbsim::kernel::KernelProfile,
    seed: u64,
}

/// An experiment's runs, before they are run.
struct Plan<'a> {
    e: &'a Experiment,
    runs: u32,
    jobs: Vec<Job>,
    opts: wbsim::RunOptions,
}

/// The runs of experiment `e`, `runs` per row unless it says fewer.
fn plan_experiment(e: &Experiment, runs: Option<u32>) -> Result<Plan<'_>, String> {
    let runs = runs.unwrap_or(e.runs);
    let mut jobs = Vec::new();
    for s in &e.scenarios {
        let text = experiment::builtin(experiment::SCENARIO_FILES, &s.file)
            .ok_or_else(|| format!("{}: scenario `{}` is not built in", e.id, s.file))?;
        let sc = wbsim::scenario::parse_scenario(text, &format!("scenarios/{}", s.file))
            .map_err(|err| err.to_string())?;
        if let Some(ks) = &s.kernels {
            if let Some(k) = ks.iter().find(|k| !e.kernels.contains_key(*k)) {
                return Err(format!(
                    "{}: scenario `{}`: kernel `{k}` is not one of the experiment's kernels ({})",
                    e.id,
                    s.label,
                    e.kernels.keys().cloned().collect::<Vec<_>>().join(", ")
                ));
            }
        }
        let on = |label: &String| s.kernels.as_ref().is_none_or(|ks| ks.contains(label));
        for (label, preset) in e.kernels.iter().filter(|(l, _)| on(l)) {
            let profile = wbsim::kernel::preset(preset)?;
            // A scenario published as fewer runs keeps its own count.
            let n = s.runs.map_or(runs, |r| r.min(runs));
            for seed in wbsim::run_seeds(sc.run.seed, n) {
                jobs.push(Job {
                    label: s.label.clone(),
                    kernel: label.clone(),
                    sc: sc.clone(),
                    profile: profile.clone(),
                    seed,
                });
            }
        }
    }
    let opts = wbsim::RunOptions {
        check_every_event: false,
        series_interval_ns: (e.series_interval_ms > 0).then_some(e.series_interval_ms * 1_000_000),
        ..Default::default()
    };
    Ok(Plan {
        e,
        runs,
        jobs,
        opts,
    })
}

/// Every plan's runs in one pool over all cores (no core waits at the
/// end of one experiment for the next), in plan and job order.
fn run_all(plans: &[Plan]) -> Result<Vec<wbsim::report::RunReport>, String> {
    let jobs: Vec<(&Plan, &Job)> = plans
        .iter()
        .flat_map(|p| p.jobs.iter().map(move |j| (p, j)))
        .collect();
    let ids: Vec<&str> = plans.iter().map(|p| p.e.id.as_str()).collect();
    let bar = ProgressBar::new(jobs.len() as u64);
    let template = format!(
        "{} {{bar:30}} {{pos}}/{{len}} runs {{elapsed}}",
        ids.join(" ")
    );
    bar.set_style(ProgressStyle::with_template(&template).map_err(|err| err.to_string())?);
    let reports = jobs
        .par_iter()
        .with_max_len(1)
        .map(|(plan, job)| {
            let mut r = wbsim::simulate(&job.sc, &job.profile, job.seed, &plan.opts);
            r.series = None;
            bar.inc(1);
            r
        })
        .collect();
    bar.finish_and_clear();
    Ok(reports)
}

/// The cells of a plan's experiment from its runs' reports (in job order).
fn evaluate_experiment(
    plan: Plan,
    reports: Vec<wbsim::report::RunReport>,
    include_cut: bool,
) -> Result<ExperimentResult, String> {
    let Plan { e, runs, jobs, .. } = plan;
    let mut by_key = RunsByKey::new();
    for (job, r) in jobs.into_iter().zip(reports) {
        by_key.entry((job.label, job.kernel)).or_default().push(r);
    }

    let text =
        experiment::builtin(experiment::VALIDATION_FILES, &e.published).ok_or_else(|| {
            format!(
                "{}: published table `{}` is not built in",
                e.id, e.published
            )
        })?;
    let table: toml::Value =
        toml::from_str(text).map_err(|err| format!("validation/{}: {err}", e.published))?;
    let mut cells = Vec::new();
    for c in &e.cells {
        let context =
            |err: String| format!("validation/{}.bands.toml: cell `{}`: {err}", e.id, c.name);
        let simulated =
            experiment::eval(&c.sim, &|t| experiment::sim_term(t, &by_key, include_cut))
                .map_err(context)?;
        let published = match &c.published {
            Some(p) => match experiment::eval(p, &|t| {
                experiment::published_term(t, &table).map(Figure::Value)
            })
            .map_err(context)?
            {
                Figure::Value(v) => Some(v),
                Figure::Undefined(why) => return Err(context(format!("published value: {why}"))),
            },
            None => None,
        };
        let [low, high] = match (c.band, c.within, published) {
            (Some(b), _, _) => b,
            (None, Some(w), Some(p)) => [p * (1.0 - w), p * (1.0 + w)],
            _ => return Err(context("needs `band`, or `within` and `published`".into())),
        };
        let (value, undefined_reason) = match simulated {
            Figure::Value(v) => (Some(v), None),
            Figure::Undefined(why) => (None, Some(why)),
        };
        let pass = value.is_some_and(|v| v >= low && v <= high);
        cells.push(Cell {
            name: c.name.clone(),
            published: published.and_then(finite),
            simulated: value,
            band: [finite(low), finite(high)],
            pass,
            calibration: c.calibration,
            verdict: match (c.calibration, value, pass) {
                (true, ..) => "calibration",
                (false, None, _) => "undefined",
                (false, Some(_), true) => "pass",
                (false, Some(_), false) => "FAIL",
            },
            undefined_reason,
            cut_runs: cut_runs_of(&c.sim, &by_key),
            outside_model: c.outside_model.clone().filter(|_| !pass),
        });
    }
    Ok(ExperimentResult {
        id: e.id.clone(),
        title: e.title.clone(),
        runs_per_row: runs,
        kernels: e.kernels.clone(),
        cells,
    })
}

fn fmt_num(x: Option<f64>) -> String {
    match x {
        None => "-".into(),
        Some(v) if v.abs() >= 1000.0 || v == v.trunc() => format!("{v:.0}"),
        Some(v) => format!("{v:.3}"),
    }
}

fn print_experiment(r: &ExperimentResult) {
    println!("{}: {}", r.id, r.title);
    let kernels: Vec<String> = r
        .kernels
        .iter()
        .map(|(l, p)| format!("{l} = {p}"))
        .collect();
    println!(
        "  {} runs per row; kernels: {}",
        r.runs_per_row,
        kernels.join(", ")
    );
    // The name column fits the experiment's longest cell name.
    let w = r
        .cells
        .iter()
        .map(|c| c.name.len())
        .max()
        .unwrap_or(0)
        .max(52);
    println!(
        "  {:<w$} {:>11} {:>11}  {:<23} verdict",
        "cell", "published", "simulated", "band"
    );
    let (mut passed, mut counted) = (0, 0);
    for c in &r.cells {
        let band = format!(
            "[{}, {}]",
            c.band[0].map_or("-inf".into(), |l| fmt_num(Some(l))),
            c.band[1].map_or("inf".into(), |h| fmt_num(Some(h)))
        );
        let verdict = c.verdict;
        if !c.calibration {
            counted += 1;
            passed += usize::from(c.pass);
        }
        println!(
            "  {:<w$} {:>11} {:>11}  {:<23} {verdict}",
            c.name,
            fmt_num(c.published),
            match c.simulated {
                Some(v) => fmt_num(Some(v)),
                None => "undefined".to_string(),
            },
            band
        );
        if let Some(why) = &c.undefined_reason {
            println!("  {:<w$} ({why})", "");
        }
        if c.cut_runs > 0 {
            println!("  {:<w$} ({} run(s) cut by the time limit)", "", c.cut_runs);
        }
        if let Some(what) = &c.outside_model {
            for line in wrap(&format!("outside the model, not reproduced: {what}"), 96) {
                println!("      {line}");
            }
        }
    }
    println!("  {passed} of {counted} cells pass\n");
}

/// `text` in lines of at most `width` characters, broken at spaces (a
/// longer word stands alone).
fn wrap(text: &str, width: usize) -> Vec<String> {
    let mut lines = vec![String::new()];
    for word in text.split_whitespace() {
        let line = lines.last_mut().expect("one line at least");
        if !line.is_empty() && line.len() + 1 + word.len() > width {
            lines.push(word.to_string());
        } else {
            if !line.is_empty() {
                line.push(' ');
            }
            line.push_str(word);
        }
    }
    lines
}

/// Runs cut by their time limit among the runs a cell's expression reads.
fn cut_runs_of(expr: &str, by_key: &RunsByKey) -> usize {
    by_key
        .iter()
        .filter(|((label, kernel), _)| expr.contains(&format!("({label}/{kernel}/")))
        .map(|(_, runs)| runs.iter().filter(|r| r.cut).count())
        .sum()
}

#[cfg(test)]
mod tests {
    use super::{plan_experiment, wrap};
    use crate::experiment::Experiment;

    fn experiment(kernels_of_scenario: &str) -> Experiment {
        toml::from_str(&format!(
            r#"
id = "t"
title = "t"
published = "real-6.1.toml"
runs = 2
[kernels]
"6.1" = "6.1"
"6.1+mglru" = "6.1+mglru"
[[scenario]]
label = "a"
file = "real-6.1/ext4-256m.toml"
{kernels_of_scenario}
[[cell]]
name = "c"
sim = "median(a/6.1/vmstat.pgactivate)"
band = [0, 1]
"#
        ))
        .unwrap()
    }

    /// A scenario runs on every kernel of its experiment unless it names
    /// some (`real-6.1` runs each configuration on the kernel it booted);
    /// a label the experiment lacks is refused, naming the ones it has.
    #[test]
    fn a_scenario_runs_on_the_kernels_it_names() {
        let all = experiment("");
        assert_eq!(plan_experiment(&all, None).unwrap().jobs.len(), 4);
        let one = experiment("kernels = [\"6.1+mglru\"]");
        let plan = plan_experiment(&one, None).unwrap();
        assert_eq!(plan.jobs.len(), 2);
        assert!(plan.jobs.iter().all(|j| j.kernel == "6.1+mglru"));
        let bad = experiment("kernels = [\"6.2\"]");
        let e = plan_experiment(&bad, None).err().unwrap();
        assert!(e.contains("`6.2`") && e.contains("6.1, 6.1+mglru"), "{e}");
    }

    #[test]
    fn notes_wrap_at_spaces() {
        let lines = wrap("aa bb cc dddddddd e", 5);
        assert_eq!(lines, ["aa bb", "cc", "dddddddd", "e"]);
        assert!(wrap("a b c", 80).len() == 1);
    }
}
