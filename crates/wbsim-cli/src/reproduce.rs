//! `wbsim reproduce [ID]`: run the built-in experiments (see
//! `experiment.rs`), in parallel over all cores, and print published and
//! simulated figures side by side with each cell's band and verdict.

use std::path::Path;

use indicatif::{ProgressBar, ProgressStyle};
use rayon::prelude::*;
use serde::Serialize;

use crate::experiment::{self, Experiment, RunsByKey};

#[derive(Serialize)]
struct Cell {
    name: String,
    /// `null` where the source gives no number.
    published: Option<f64>,
    simulated: f64,
    /// `[low, high]`; an unbounded side is `null`.
    band: [Option<f64>; 2],
    pass: bool,
    /// Used to set an input parameter: shown, never counted as reproduced.
    calibration: bool,
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

pub fn cmd_reproduce(
    id: Option<&str>,
    runs: Option<u32>,
    json: Option<&Path>,
) -> Result<(), String> {
    let all = experiment::load_all()?;
    let missing = experiment::not_implemented(&all);
    let selected: Vec<&Experiment> = match id {
        None => all.iter().collect(),
        Some(id) => {
            if missing.iter().any(|m| m == id) {
                println!("{id}: not yet implemented");
                return Ok(());
            }
            let e = all.iter().find(|e| e.id == id).ok_or_else(|| {
                let mut known: Vec<&str> = all.iter().map(|e| e.id.as_str()).collect();
                known.extend(missing.iter().map(String::as_str));
                format!("unknown experiment `{id}`; known: {}", known.join(", "))
            })?;
            vec![e]
        }
    };
    if runs == Some(0) {
        return Err("--runs must be at least 1".into());
    }
    let mut results = Vec::new();
    for e in selected {
        let r = run_experiment(e, runs)?;
        print_experiment(&r);
        results.push(r);
    }
    if id.is_none() {
        for m in &missing {
            println!("{m}: not yet implemented");
        }
    }
    if let Some(p) = json {
        let cmp = Comparison {
            experiments: results,
            not_implemented: if id.is_none() { missing } else { Vec::new() },
        };
        let text = serde_json::to_string_pretty(&cmp).map_err(|e| e.to_string())?;
        crate::output::write_atomically(p, &text)?;
    }
    Ok(())
}

fn run_experiment(e: &Experiment, runs: Option<u32>) -> Result<ExperimentResult, String> {
    let runs = runs.unwrap_or(e.runs);
    let mut jobs = Vec::new();
    for s in &e.scenarios {
        let text = experiment::builtin(experiment::SCENARIO_FILES, &s.file)
            .ok_or_else(|| format!("{}: scenario `{}` is not built in", e.id, s.file))?;
        let sc = wbsim::scenario::parse_scenario(text, &format!("scenarios/{}", s.file))
            .map_err(|err| err.to_string())?;
        for (label, preset) in &e.kernels {
            let profile = wbsim::kernel::preset(preset)?;
            // A scenario published as fewer runs keeps its own count.
            let n = s.runs.map_or(runs, |r| r.min(runs));
            for seed in wbsim::run_seeds(sc.run.seed, n) {
                jobs.push((
                    s.label.clone(),
                    label.clone(),
                    sc.clone(),
                    profile.clone(),
                    seed,
                ));
            }
        }
    }
    let opts = wbsim::RunOptions {
        check_every_event: false,
        series_interval_ns: (e.series_interval_ms > 0).then_some(e.series_interval_ms * 1_000_000),
        ..Default::default()
    };
    let bar = ProgressBar::new(jobs.len() as u64);
    let template = format!("{} {{bar:30}} {{pos}}/{{len}} runs {{elapsed}}", e.id);
    bar.set_style(ProgressStyle::with_template(&template).map_err(|err| err.to_string())?);
    let reports: Vec<_> = jobs
        .par_iter()
        .map(|(_, _, sc, profile, seed)| {
            let mut r = wbsim::simulate(sc, profile, *seed, &opts);
            r.series = None;
            bar.inc(1);
            r
        })
        .collect();
    bar.finish_and_clear();
    let mut by_key = RunsByKey::new();
    for ((label, kernel, ..), r) in jobs.into_iter().zip(reports) {
        by_key.entry((label, kernel)).or_default().push(r);
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
            experiment::eval(&c.sim, &|t| experiment::sim_term(t, &by_key)).map_err(context)?;
        let published = match &c.published {
            Some(p) => Some(
                experiment::eval(p, &|t| experiment::published_term(t, &table)).map_err(context)?,
            ),
            None => None,
        };
        let [low, high] = match (c.band, c.within, published) {
            (Some(b), _, _) => b,
            (None, Some(w), Some(p)) => [p * (1.0 - w), p * (1.0 + w)],
            _ => return Err(context("needs `band`, or `within` and `published`".into())),
        };
        cells.push(Cell {
            name: c.name.clone(),
            published: published.and_then(finite),
            simulated,
            band: [finite(low), finite(high)],
            pass: simulated >= low && simulated <= high,
            calibration: c.calibration,
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
    println!(
        "  {:<52} {:>11} {:>11}  {:<23} verdict",
        "cell", "published", "simulated", "band"
    );
    let (mut passed, mut counted) = (0, 0);
    for c in &r.cells {
        let band = format!(
            "[{}, {}]",
            c.band[0].map_or("-inf".into(), |l| fmt_num(Some(l))),
            c.band[1].map_or("inf".into(), |h| fmt_num(Some(h)))
        );
        let verdict = match (c.calibration, c.pass) {
            (true, _) => "calibration",
            (false, true) => "pass",
            (false, false) => "FAIL",
        };
        if !c.calibration {
            counted += 1;
            passed += usize::from(c.pass);
        }
        println!(
            "  {:<52} {:>11} {:>11}  {:<23} {verdict}",
            c.name,
            fmt_num(c.published),
            match finite(c.simulated) {
                Some(v) => fmt_num(Some(v)),
                None => format!("{}", c.simulated),
            },
            band
        );
    }
    println!("  {passed} of {counted} cells pass\n");
}
