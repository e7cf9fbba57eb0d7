//! Built-in experiments as data: `validation/<id>.bands.toml` names the
//! published table (`validation/<id>.toml`), the scenarios and kernels to
//! run, and the cells to compare, each with the band it must fall in.
//!
//! A cell's simulated value is an expression over run statistics, such as
//! `median(fuse-ntfs/vanilla/vmstat.nr_vmscan_write)` or
//! `mean(a/vanilla/elapsed_seconds) / mean(a/per-zone-dirty/elapsed_seconds)`;
//! its published value is an expression over paths into the published
//! table, such as `result[fs=xfs,kernel=vanilla].nr_vmscan_write[1]`.
//! Nothing here knows any experiment: it all comes from the files.

use std::collections::BTreeMap;

use serde::Deserialize;
use wbsim::report::RunReport;

pub use crate::metric::metric_value;

include!(concat!(env!("OUT_DIR"), "/builtin_files.rs"));

/// A built-in file's text by its path relative to `validation/` or
/// `scenarios/`.
pub fn builtin(table: &[(&'static str, &'static str)], path: &str) -> Option<&'static str> {
    table.iter().find(|(p, _)| *p == path).map(|(_, t)| *t)
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Experiment {
    pub id: String,
    pub title: String,
    /// The published table, relative to `validation/`.
    pub published: String,
    /// Runs per scenario and kernel (as published).
    pub runs: u32,
    /// Sample the per-zone series every this many ms (for `series.*`
    /// metrics); 0 = no series.
    #[serde(default)]
    pub series_interval_ms: u64,
    /// Published kernel label → kernel preset.
    pub kernels: BTreeMap<String, String>,
    #[serde(rename = "scenario")]
    pub scenarios: Vec<ScenarioRef>,
    #[serde(rename = "cell")]
    pub cells: Vec<CellDef>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ScenarioRef {
    pub label: String,
    /// Relative to `scenarios/`.
    pub file: String,
    /// Runs of this scenario when the source published fewer than the
    /// experiment's `runs` (at most `--runs` when that is given).
    #[serde(default)]
    pub runs: Option<u32>,
    /// The kernel labels this scenario runs on (default: every one of
    /// the experiment's), when the source ran each configuration on one
    /// kernel only.
    #[serde(default)]
    pub kernels: Option<Vec<String>>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CellDef {
    pub name: String,
    pub sim: String,
    /// Expression over the published table; absent when the source gives
    /// no number (a qualitative claim).
    pub published: Option<String>,
    /// Absolute band `[low, high]` (`inf` allowed).
    pub band: Option<[f64; 2]>,
    /// Band relative to the published value: ± this fraction.
    pub within: Option<f64>,
    /// The row was used to set an input; shown, never counted.
    #[serde(default)]
    pub calibration: bool,
    /// What the published figure depends on that the model does not
    /// have, with the evidence (a lab run of a real kernel, or a sweep of
    /// an input the source does not give): printed
    /// beside the cell when it does not pass, which still counts as not
    /// reproduced.
    #[serde(default)]
    pub outside_model: Option<String>,
}

/// Runs of one scenario on one kernel label.
pub type RunsByKey = BTreeMap<(String, String), Vec<RunReport>>;

/// Load the experiment definitions, sorted by id.
/// The source document of an experiment: the `source` of its published
/// table (file name, title, date).
pub fn source_of(e: &Experiment) -> String {
    builtin(VALIDATION_FILES, &e.published)
        .and_then(|text| toml::from_str::<toml::Value>(text).ok())
        .and_then(|v| Some(v.get("source")?.as_str()?.to_string()))
        .unwrap_or_else(|| "(not given)".to_string())
}

pub fn load_all() -> Result<Vec<Experiment>, String> {
    let mut out = Vec::new();
    for (path, text) in VALIDATION_FILES {
        if !path.ends_with(".bands.toml") || !is_top_level(path) {
            continue;
        }
        let e: Experiment =
            toml::from_str(text).map_err(|err| format!("validation/{path}: {err}"))?;
        out.push(e);
    }
    out.sort_by(|a, b| a.id.cmp(&b.id));
    Ok(out)
}

/// Experiments and published tables are the files directly in
/// `validation/`; a subfolder holds an experiment's raw data (such as
/// `real-3x/`, the real runs behind `real-3x.toml`), never an experiment.
fn is_top_level(path: &str) -> bool {
    !path.contains('/')
}

/// Ids of the published tables that have no experiment definition yet.
pub fn not_implemented(defined: &[Experiment]) -> Vec<String> {
    VALIDATION_FILES
        .iter()
        .filter(|(p, _)| p.ends_with(".toml") && !p.ends_with(".bands.toml") && is_top_level(p))
        .filter_map(|(_, text)| toml::from_str::<toml::Value>(text).ok())
        .filter_map(|v| v.get("id")?.as_str().map(str::to_string))
        .filter(|id| defined.iter().all(|e| &e.id != id))
        .collect()
}

/// A cell's figure: a number, or undefined with the reason (a quotient by
/// zero, a statistic over no runs). An undefined figure is never a pass.
#[derive(Debug, Clone, PartialEq)]
pub enum Figure {
    Value(f64),
    Undefined(String),
}

/// Evaluate `expr`: terms separated by `/`, `*`, `+` or `-`, applied left
/// to right (no precedence), each a number or resolved by `term`. A
/// division by zero or a term without a value makes the whole figure
/// undefined; an expression that cannot be read is an error.
pub fn eval(expr: &str, term: &dyn Fn(&str) -> Result<Figure, String>) -> Result<Figure, String> {
    let mut value: Option<f64> = None;
    let mut op = '*';
    let mut rest = expr.trim();
    loop {
        let cut = rest.find([' ', '\t']).unwrap_or(rest.len());
        let (tok, tail) = rest.split_at(cut);
        let x = match tok.parse::<f64>() {
            Ok(x) => x,
            Err(_) => match term(tok)? {
                Figure::Value(x) if x.is_finite() => x,
                Figure::Value(x) => {
                    return Ok(Figure::Undefined(format!("`{tok}` is {x}")));
                }
                undefined => return Ok(undefined),
            },
        };
        value = Some(match (value, op) {
            (None, _) => x,
            (Some(_), '/') if x == 0.0 => {
                return Ok(Figure::Undefined(format!("division by zero: `{tok}` is 0")));
            }
            (Some(v), '/') => v / x,
            (Some(v), '+') => v + x,
            (Some(v), '-') => v - x,
            (Some(v), _) => v * x,
        });
        let tail = tail.trim_start();
        if tail.is_empty() {
            return Ok(match value {
                Some(v) if v.is_finite() => Figure::Value(v),
                other => Figure::Undefined(format!("`{expr}` has no finite value ({other:?})")),
            });
        }
        op = tail.chars().next().unwrap_or(' ');
        if !"/*+-".contains(op) {
            return Err(format!(
                "`{expr}`: expected `/`, `*`, `+` or `-` before `{tail}`"
            ));
        }
        rest = tail[1..].trim_start();
    }
}

/// `stat(label/kernel/metric)` over the runs of one scenario and kernel.
/// Runs cut by their time limit are left out unless `include_cut`; a
/// statistic over no runs is undefined.
///
/// Two forms are for figures whose real runs fall in two modes (a race
/// that some boots win and others lose), where a median over all runs
/// says nothing:
/// - `stat(label/kernel/metric|test)` takes only the runs that pass
///   `test`, such as `median(a/6.1/vmstat.pgactivate|vmstat.pgskip_dma32>0)`;
/// - `share(label/kernel/test)` is the fraction of runs that pass `test`.
///
/// A test is `metric>x`, `metric<x` or `metric=x`.
pub fn sim_term(tok: &str, runs: &RunsByKey, include_cut: bool) -> Result<Figure, String> {
    let (stat, inner) = tok
        .strip_suffix(')')
        .and_then(|t| t.split_once('('))
        .ok_or_else(|| format!("`{tok}`: expected stat(scenario/kernel/metric)"))?;
    let mut parts = inner.splitn(3, '/');
    let (Some(label), Some(kernel), Some(metric)) = (parts.next(), parts.next(), parts.next())
    else {
        return Err(format!("`{tok}`: expected stat(scenario/kernel/metric)"));
    };
    if !["mean", "median", "min", "max", "share"].contains(&stat) {
        return Err(format!(
            "`{tok}`: unknown statistic `{stat}` (mean, median, min, max, share)"
        ));
    }
    let reports = runs
        .get(&(label.to_string(), kernel.to_string()))
        .ok_or_else(|| format!("`{tok}`: no runs of scenario `{label}` on kernel `{kernel}`"))?;
    let counted: Vec<&RunReport> = reports.iter().filter(|r| include_cut || !r.cut).collect();
    if counted.is_empty() {
        return Ok(Figure::Undefined(format!(
            "`{tok}`: every run of {label} on {kernel} was cut by its time limit \
             (--include-cut counts them)"
        )));
    }
    if stat == "share" {
        let test = RunTest::parse(metric).map_err(|e| format!("`{tok}`: {e}"))?;
        let mut passed = 0usize;
        for r in &counted {
            passed += usize::from(test.holds(r)?);
        }
        return Ok(Figure::Value(passed as f64 / counted.len() as f64));
    }
    let (metric, test) = match metric.split_once('|') {
        Some((m, t)) => (
            m,
            Some(RunTest::parse(t).map_err(|e| format!("`{tok}`: {e}"))?),
        ),
        None => (metric, None),
    };
    let mut values = Vec::with_capacity(counted.len());
    for r in counted {
        if test.as_ref().map_or(Ok(true), |t| t.holds(r))? {
            values.push(metric_value(r, metric)?);
        }
    }
    if values.is_empty() {
        return Ok(Figure::Undefined(format!(
            "`{tok}`: no run of {label} on {kernel} passes the test"
        )));
    }
    let n = values.len() as f64;
    Ok(Figure::Value(match stat {
        "mean" => values.iter().sum::<f64>() / n,
        "median" => wbsim::report::series::median(values).unwrap_or(f64::NAN),
        "min" => values.into_iter().fold(f64::INFINITY, f64::min),
        _ => values.into_iter().fold(f64::NEG_INFINITY, f64::max),
    }))
}

/// A test on one run's figure: `metric>x`, `metric<x` or `metric=x`.
struct RunTest<'a> {
    metric: &'a str,
    op: char,
    value: f64,
}

impl<'a> RunTest<'a> {
    fn parse(text: &'a str) -> Result<Self, String> {
        let at = text.find(['>', '<', '=']).ok_or_else(|| {
            format!("`{text}`: expected a test `metric>x`, `metric<x` or `metric=x`")
        })?;
        let value = text[at + 1..]
            .parse::<f64>()
            .map_err(|_| format!("`{text}`: `{}` is not a number", &text[at + 1..]))?;
        Ok(Self {
            metric: &text[..at],
            op: text[at..].chars().next().unwrap_or('='),
            value,
        })
    }

    fn holds(&self, r: &RunReport) -> Result<bool, String> {
        let x = metric_value(r, self.metric)?;
        Ok(match self.op {
            '>' => x > self.value,
            '<' => x < self.value,
            _ => x == self.value,
        })
    }
}

/// A path into the published table: `a.b[key=value,...].c[index]`.
/// Selector values may contain dots (`result[kernel=3.2.4].dd_seconds`):
/// only a dot outside brackets separates segments.
pub fn published_term(tok: &str, table: &toml::Value) -> Result<f64, String> {
    let mut v = table;
    for seg in path_segments(tok) {
        let (key, mut selectors) = match seg.find('[') {
            Some(i) => (&seg[..i], &seg[i..]),
            None => (seg, ""),
        };
        v = v
            .get(key)
            .ok_or_else(|| format!("`{tok}`: no key `{key}`"))?;
        while let Some(end) = selectors.find(']') {
            let sel = &selectors[1..end];
            selectors = &selectors[end + 1..];
            v = if let Ok(i) = sel.parse::<usize>() {
                v.get(i).ok_or_else(|| format!("`{tok}`: no element {i}"))?
            } else {
                let arr = v
                    .as_array()
                    .ok_or_else(|| format!("`{tok}`: `{key}` is not a list"))?;
                arr.iter()
                    .find(|item| {
                        sel.split(',').all(|kv| {
                            let (k, want) = kv.split_once('=').unwrap_or((kv, ""));
                            match item.get(k) {
                                Some(toml::Value::String(x)) => x == want,
                                Some(toml::Value::Integer(i)) => i.to_string() == want,
                                _ => false,
                            }
                        })
                    })
                    .ok_or_else(|| format!("`{tok}`: no `{key}` entry with {sel}"))?
            };
        }
    }
    v.as_float()
        .or_else(|| v.as_integer().map(|i| i as f64))
        .ok_or_else(|| format!("`{tok}`: not a number"))
}

/// `a.b[k=1.2].c` → `a`, `b[k=1.2]`, `c`.
fn path_segments(path: &str) -> Vec<&str> {
    let (mut out, mut depth, mut start) = (Vec::new(), 0usize, 0);
    for (i, c) in path.char_indices() {
        match c {
            '[' => depth += 1,
            ']' => depth = depth.saturating_sub(1),
            '.' if depth == 0 => {
                out.push(&path[start..i]);
                start = i + 1;
            }
            _ => {}
        }
    }
    out.push(&path[start..]);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn published_paths_select_rows_and_indices() {
        let t: toml::Value = toml::from_str(
            "[[result]]\nfs = \"a\"\nkernel = \"k\"\nx = [1, 2, 3]\n[[result]]\nfs = \"b\"\nkernel = \"k\"\nx = [4.5, 5, 6]\n[p]\nq = 7",
        )
        .unwrap();
        let term = |s: &str| published_term(s, &t).map(Figure::Value);
        let v = Figure::Value;
        assert_eq!(eval("result[fs=b,kernel=k].x[0]", &term), Ok(v(4.5)));
        assert_eq!(eval("result[fs=a].x[2] / p.q", &term), Ok(v(3.0 / 7.0)));
        assert_eq!(eval("2 * p.q", &term), Ok(v(14.0)));
        assert!(eval("result[fs=c].x[0]", &term)
            .unwrap_err()
            .contains("no `result` entry"));
        assert_eq!(eval("p.q + 1 - 2", &term), Ok(v(6.0)));
        assert!(eval("p.q % 1", &term).is_err());
    }

    /// Selector values with dots (kernel releases) stay one segment.
    #[test]
    fn published_selectors_may_hold_dots() {
        let t: toml::Value = toml::from_str(
            "[[result]]\nkernel = \"3.2.4\"\nrun = \"r1\"\ns = 265.95\n\
             [[result]]\nkernel = \"3.3.8\"\nrun = \"r1\"\ns = 270.98",
        )
        .unwrap();
        let term = |s: &str| published_term(s, &t).map(Figure::Value);
        assert_eq!(
            eval("result[kernel=3.3.8,run=r1].s", &term),
            Ok(Figure::Value(270.98))
        );
        assert_eq!(path_segments("a.b[k=1.2].c[0]"), ["a", "b[k=1.2]", "c[0]"]);
    }

    /// x/0 is undefined, not infinity (which used to pass an open band).
    #[test]
    fn a_quotient_by_zero_is_undefined() {
        let t: toml::Value = toml::from_str("z = 0\nq = 3").unwrap();
        let term = |s: &str| published_term(s, &t).map(Figure::Value);
        match eval("q / z", &term).unwrap() {
            Figure::Undefined(why) => assert!(why.contains("division by zero"), "{why}"),
            other => panic!("expected undefined, got {other:?}"),
        }
        assert!(matches!(eval("z / q", &term), Ok(Figure::Value(x)) if x == 0.0));
    }

    fn run_with(pgskip: i64, pgactivate: i64, cut: bool) -> RunReport {
        RunReport {
            cut,
            vmstat: [("pgskip_dma32", pgskip), ("pgactivate", pgactivate)]
                .into_iter()
                .map(|(k, v)| (k.to_string(), v))
                .collect(),
            ..Default::default()
        }
    }

    /// A race's two modes: `share` counts the runs that pass a test and
    /// `stat(...|test)` takes only those; cut runs are left out of both.
    #[test]
    fn share_and_run_tests_split_the_runs_of_a_race() {
        let mut runs = RunsByKey::new();
        runs.insert(
            ("a".into(), "6.1".into()),
            vec![
                run_with(0, 200, false),
                run_with(99_000, 5_000, false),
                run_with(0, 210, false),
                run_with(101_000, 7_000, false),
                run_with(98_000, 1, true),
            ],
        );
        let value = |tok: &str| match sim_term(tok, &runs, false).unwrap() {
            Figure::Value(x) => x,
            other => panic!("{tok}: {other:?}"),
        };
        assert_eq!(value("share(a/6.1/vmstat.pgskip_dma32>0)"), 0.5);
        assert_eq!(
            value("median(a/6.1/vmstat.pgactivate|vmstat.pgskip_dma32>0)"),
            6_000.0
        );
        assert_eq!(
            value("max(a/6.1/vmstat.pgactivate|vmstat.pgskip_dma32=0)"),
            210.0
        );
        assert_eq!(
            value("min(a/6.1/vmstat.pgactivate|vmstat.pgactivate<205)"),
            200.0
        );
        assert!(matches!(
            sim_term("median(a/6.1/vmstat.pgactivate|vmstat.pgactivate>1e9)", &runs, false),
            Ok(Figure::Undefined(why)) if why.contains("passes the test")
        ));
        let err = sim_term("share(a/6.1/vmstat.pgskip_dma32)", &runs, false).unwrap_err();
        assert!(err.contains("expected a test"), "{err}");
        let err = sim_term("share(a/6.1/vmstat.pgskip_dma32>x)", &runs, false).unwrap_err();
        assert!(err.contains("not a number"), "{err}");
    }

    /// Raw data folders under validation/ are neither embedded (only
    /// `.toml` files are) nor taken for experiments or published tables.
    #[test]
    fn raw_data_folders_are_not_experiments() {
        assert!(is_top_level("real-3x.toml") && !is_top_level("real-3x/x.toml"));
        for (path, _) in VALIDATION_FILES {
            assert!(path.ends_with(".toml"), "{path}");
            assert!(!path.starts_with("real-3x/"), "{path} is raw data");
        }
        let ids: Vec<String> = load_all().unwrap().into_iter().map(|e| e.id).collect();
        assert!(ids.iter().all(|id| !id.contains('/')), "{ids:?}");
    }

    #[test]
    fn every_builtin_experiment_parses_and_resolves_its_published_values() {
        let all = load_all().unwrap();
        assert!(!all.is_empty());
        for e in &all {
            let text = builtin(VALIDATION_FILES, &e.published).expect("published table");
            let table: toml::Value = toml::from_str(text).unwrap();
            for c in &e.cells {
                if let Some(p) = &c.published {
                    eval(p, &|s| published_term(s, &table).map(Figure::Value))
                        .unwrap_or_else(|err| panic!("{}: {}: {err}", e.id, c.name));
                }
                assert!(
                    c.band.is_some() || c.within.is_some(),
                    "{}: {}",
                    e.id,
                    c.name
                );
            }
            for s in &e.scenarios {
                assert!(builtin(SCENARIO_FILES, &s.file).is_some(), "{}", s.file);
            }
            assert!(
                source_of(e).ends_with(')') || source_of(e).contains(".txt"),
                "{}",
                e.id
            );
        }
    }
}
