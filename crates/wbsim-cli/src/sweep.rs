//! Parameter sweeps: a grid of overrides, kernels and seeds over one
//! scenario, each run a row of parameters and headline figures, stored by
//! a key that names what was simulated, so a rerun skips what is stored
//! and shards of one sweep join into one table.
//!
//! `wbsim sweep SWEEP.toml --out DIR [--shard I/N]` runs the grid (a shard
//! takes every N-th run from the I-th, I counted from 0: a Slurm job
//! array's `$SLURM_ARRAY_TASK_ID`), writing `DIR/runs/KEY.json` per run;
//! `wbsim sweep --merge DIR` joins them into `DIR/sweep.csv`. The Python
//! package (`wbsim.sweep`) plans and runs through the same functions and
//! keys.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use rayon::prelude::*;
use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};

use crate::exit::Failure;

/// The figures of a row unless the sweep names its own (`metrics`): any
/// name `metric_value` reads.
pub const DEFAULT_METRICS: &[&str] = &[
    "elapsed_seconds",
    "system_seconds",
    "kswapd_awake_seconds",
    "vmstat.nr_dirtied",
    "vmstat.nr_written",
    "vmstat.nr_vmscan_write",
    "vmstat.pgscan_kswapd",
    "vmstat.pgsteal_kswapd",
    "vmstat.pgscan_direct",
    "vmstat.allocstall",
];

/// A sweep file: the scenario (relative to the file), the grid (key →
/// values; `kernel` and `seed` are the run's kernel preset and seed, other
/// keys `--set` overrides) and the figures of each row.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SweepFile {
    pub scenario: PathBuf,
    pub grid: BTreeMap<String, Vec<toml::Value>>,
    #[serde(default)]
    pub metrics: Option<Vec<String>>,
}

/// One run of a sweep, resolved.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct RunSpec {
    /// Its place in the grid (the order rows are merged in).
    pub index: usize,
    /// The grid's values for this run, as given (`kernel` and `seed`
    /// included).
    pub params: BTreeMap<String, String>,
    pub kernel: String,
    pub seed: u64,
    /// Hash of (resolved scenario, resolved profile, seed, wbsim version).
    pub key: String,
    /// The overrides, for running it (`KEY=VALUE`).
    pub sets: Vec<String>,
}

/// A grid value as `--set` takes it: strings bare, others as TOML.
fn value_text(v: &toml::Value) -> String {
    match v {
        toml::Value::String(s) => s.clone(),
        other => other.to_string(),
    }
}

/// Every run of `grid` over scenario `text` (from `file_name`), in a fixed
/// order: the grid's keys sorted, the last varying fastest. Each is
/// resolved (scenario and profile), so a bad key or value fails here,
/// before any run, naming the key.
pub fn plan(
    text: &str,
    file_name: &str,
    grid: &BTreeMap<String, Vec<String>>,
) -> Result<Vec<RunSpec>, String> {
    for (k, values) in grid {
        if values.is_empty() {
            return Err(format!("grid key `{k}`: no values"));
        }
    }
    let keys: Vec<&String> = grid.keys().collect();
    let total: usize = grid.values().map(Vec::len).product();
    let mut specs = Vec::with_capacity(total);
    for index in 0..total {
        let mut rest = index;
        let mut params = BTreeMap::new();
        for k in keys.iter().rev() {
            let values = &grid[*k];
            params.insert((*k).clone(), values[rest % values.len()].clone());
            rest /= values.len();
        }
        specs.push(resolve(text, file_name, index, params)?);
    }
    Ok(specs)
}

/// A run's scenario and profile from its parameters.
pub fn resolve_spec(
    text: &str,
    file_name: &str,
    params: &BTreeMap<String, String>,
) -> Result<
    (
        wbsim::scenario::Scenario,
        wbsim::kernel::KernelProfile,
        u64,
        Vec<String>,
    ),
    String,
> {
    let sets: Vec<String> = params
        .iter()
        .filter(|(k, _)| *k != "kernel" && *k != "seed")
        .map(|(k, v)| format!("{k}={v}"))
        .collect();
    let kernels: Vec<String> = params.get("kernel").cloned().into_iter().collect();
    let (sc, mut profiles) =
        crate::resolve_run(text, file_name, &kernels, &[], &sets).map_err(|e| e.to_string())?;
    let profile = profiles.pop().ok_or("no kernel")?;
    let seed = match params.get("seed") {
        Some(s) => s
            .parse::<u64>()
            .map_err(|_| format!("grid key `seed`: `{s}` is not a seed (0 to 2^64-1)"))?,
        None => sc.run.seed,
    };
    Ok((sc, profile, seed, sets))
}

fn resolve(
    text: &str,
    file_name: &str,
    index: usize,
    params: BTreeMap<String, String>,
) -> Result<RunSpec, String> {
    let (sc, profile, seed, sets) = resolve_spec(text, file_name, &params)?;
    Ok(RunSpec {
        index,
        kernel: profile.name.clone(),
        seed,
        key: run_key(&sc, &profile, seed),
        params,
        sets,
    })
}

/// What names a run: the resolved scenario and profile (every default
/// filled in), the seed and this wbsim's version, hashed (SHA-256, 32 hex
/// digits). Equal keys, byte-identical reports.
pub fn run_key(
    sc: &wbsim::scenario::Scenario,
    profile: &wbsim::kernel::KernelProfile,
    seed: u64,
) -> String {
    let mut h = Sha256::new();
    h.update(serde_json::to_string(sc).expect("scenario serialises"));
    h.update(b"\n");
    h.update(serde_json::to_string(profile).expect("profile serialises"));
    h.update(format!("\n{seed}\n{}", env!("CARGO_PKG_VERSION")));
    h.finalize()[..16]
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}

/// Run `spec` and return its row: `key`, `index`, the parameters, then
/// each metric (a metric that does not apply is left out).
pub fn run_row(
    text: &str,
    file_name: &str,
    spec: &RunSpec,
    metrics: &[String],
) -> Result<serde_json::Map<String, serde_json::Value>, String> {
    let (sc, profile, seed, _) = resolve_spec(text, file_name, &spec.params)?;
    let needs_series = metrics.iter().any(|m| m.starts_with("series."));
    let opts = wbsim::RunOptions {
        series_interval_ns: needs_series.then_some(250_000_000),
        ..Default::default()
    };
    let run = wbsim::simulate(&sc, &profile, seed, &opts);
    let mut row = serde_json::Map::new();
    row.insert("key".into(), spec.key.clone().into());
    row.insert("index".into(), spec.index.into());
    for (k, v) in &spec.params {
        row.insert(k.clone(), v.clone().into());
    }
    row.insert("kernel".into(), profile.name.into());
    row.insert("seed".into(), seed.into());
    row.insert("cut".into(), run.cut.into());
    for m in metrics {
        if let Ok(x) = crate::metric::metric_value(&run, m) {
            if let Some(n) = serde_json::Number::from_f64(x) {
                row.insert(m.clone(), n.into());
            }
        }
    }
    Ok(row)
}

/// `wbsim sweep FILE --out DIR [--shard I/N]`.
pub fn cmd_sweep(file: &Path, out: &Path, shard: Option<&str>) -> Result<u8, Failure> {
    let (i, n) = match shard {
        None => (0, 1),
        Some(s) => parse_shard(s)?,
    };
    let sweep_text = std::fs::read_to_string(file)
        .map_err(|e| format!("{}: cannot read: {}", file.display(), wbsim::io_reason(&e)))?;
    let sweep: SweepFile =
        toml::from_str(&sweep_text).map_err(|e| format!("{}: {e}", file.display()))?;
    let scenario_path = file
        .parent()
        .unwrap_or(Path::new("."))
        .join(&sweep.scenario);
    let text = wbsim::scenario::read_scenario_text(&scenario_path).map_err(|e| e.to_string())?;
    let file_name = scenario_path.display().to_string();
    let grid: BTreeMap<String, Vec<String>> = sweep
        .grid
        .iter()
        .map(|(k, v)| (k.clone(), v.iter().map(value_text).collect()))
        .collect();
    let metrics: Vec<String> = sweep
        .metrics
        .unwrap_or_else(|| DEFAULT_METRICS.iter().map(|m| m.to_string()).collect());
    let specs = plan(&text, &file_name, &grid).map_err(|e| format!("{}: {e}", file.display()))?;
    let runs_dir = out.join("runs");
    std::fs::create_dir_all(&runs_dir)
        .map_err(|e| format!("--out {}: {}", out.display(), wbsim::io_reason(&e)))?;
    let mine: Vec<&RunSpec> = specs
        .iter()
        .filter(|s| s.index % n == i && !runs_dir.join(format!("{}.json", s.key)).exists())
        .collect();
    let stored = specs.iter().filter(|s| s.index % n == i).count() - mine.len();
    eprintln!(
        "sweep: {} runs, shard {i}/{n}: {} to run, {stored} already stored",
        specs.len(),
        mine.len()
    );
    mine.par_iter()
        .map(|s| {
            let row = run_row(&text, &file_name, s, &metrics)?;
            store_row(&runs_dir, &s.key, &row)
        })
        .collect::<Result<Vec<()>, String>>()?;
    Ok(0)
}

/// Write one row as `DIR/KEY.json`, atomically (a killed sweep leaves no
/// half-written row: the rename is the commit).
fn store_row(
    dir: &Path,
    key: &str,
    row: &serde_json::Map<String, serde_json::Value>,
) -> Result<(), String> {
    let tmp = dir.join(format!(".{key}.json.tmp"));
    let text = serde_json::to_string(row).map_err(|e| e.to_string())?;
    std::fs::write(&tmp, text).map_err(|e| format!("{}: {}", tmp.display(), e))?;
    std::fs::rename(&tmp, dir.join(format!("{key}.json")))
        .map_err(|e| format!("{}: {}", dir.display(), e))
}

/// `I/N`, 0 ≤ I < N.
fn parse_shard(s: &str) -> Result<(usize, usize), String> {
    let bad = || format!("--shard {s}: expected I/N with 0 <= I < N, e.g. 0/4");
    let (i, n) = s.split_once('/').ok_or_else(bad)?;
    let (i, n) = (
        i.parse::<usize>().map_err(|_| bad())?,
        n.parse::<usize>().map_err(|_| bad())?,
    );
    if n == 0 || i >= n {
        return Err(bad());
    }
    Ok((i, n))
}

/// `wbsim sweep --merge DIR`: every stored row, in grid order, as
/// `DIR/sweep.csv` (columns: the union of the rows' keys).
pub fn cmd_merge(dir: &Path) -> Result<u8, Failure> {
    let runs_dir = dir.join("runs");
    let entries = std::fs::read_dir(&runs_dir)
        .map_err(|e| format!("--merge {}: {}", runs_dir.display(), wbsim::io_reason(&e)))?;
    let mut rows: Vec<serde_json::Map<String, serde_json::Value>> = Vec::new();
    for e in entries {
        let p = e.map_err(|e| e.to_string())?.path();
        if p.extension().is_some_and(|x| x == "json") {
            let text = std::fs::read_to_string(&p).map_err(|e| format!("{}: {e}", p.display()))?;
            rows.push(serde_json::from_str(&text).map_err(|e| format!("{}: {e}", p.display()))?);
        }
    }
    rows.sort_by_key(|r| r.get("index").and_then(|v| v.as_u64()).unwrap_or(u64::MAX));
    let mut columns: Vec<String> = vec!["index".into(), "key".into()];
    for r in &rows {
        for k in r.keys() {
            if !columns.contains(k) {
                columns.push(k.clone());
            }
        }
    }
    let cell = |v: Option<&serde_json::Value>| match v {
        None | Some(serde_json::Value::Null) => String::new(),
        Some(serde_json::Value::String(s)) if s.contains([',', '"', '\n']) => {
            format!("\"{}\"", s.replace('"', "\"\""))
        }
        Some(serde_json::Value::String(s)) => s.clone(),
        Some(other) => other.to_string(),
    };
    let mut csv = columns.join(",") + "\n";
    for r in &rows {
        let line: Vec<String> = columns.iter().map(|c| cell(r.get(c))).collect();
        csv += &(line.join(",") + "\n");
    }
    let out = dir.join("sweep.csv");
    std::fs::write(&out, csv).map_err(|e| format!("{}: {e}", out.display()))?;
    eprintln!("sweep: {} rows → {}", rows.len(), out.display());
    Ok(0)
}

#[cfg(test)]
mod tests {
    use super::*;

    const SC: &str = "scenarios/zone-dirty-v2/xfs.toml";

    fn text() -> String {
        std::fs::read_to_string(format!("{}/../../{SC}", env!("CARGO_MANIFEST_DIR"))).unwrap()
    }

    fn grid(pairs: &[(&str, &[&str])]) -> BTreeMap<String, Vec<String>> {
        pairs
            .iter()
            .map(|(k, v)| (k.to_string(), v.iter().map(|s| s.to_string()).collect()))
            .collect()
    }

    #[test]
    fn a_grid_expands_in_a_fixed_order_with_one_key_per_run() {
        let g = grid(&[
            ("kernel", &["3.2", "3.3"]),
            ("seed", &["1", "2"]),
            ("sysctl.dirty_ratio", &["10", "20"]),
        ]);
        let specs = plan(&text(), SC, &g).unwrap();
        assert_eq!(specs.len(), 8);
        assert_eq!(specs[1].params["sysctl.dirty_ratio"], "20");
        assert_eq!(specs[2].seed, 2);
        assert_eq!(specs[4].kernel, "3.3");
        let keys: std::collections::BTreeSet<&str> = specs.iter().map(|s| s.key.as_str()).collect();
        assert_eq!(keys.len(), 8);
        // The key names what is simulated, not how it was asked for.
        let again = plan(
            &text(),
            SC,
            &grid(&[
                ("seed", &["2"]),
                ("kernel", &["3.2"]),
                ("sysctl.dirty_ratio", &["10"]),
            ]),
        )
        .unwrap();
        assert_eq!(again[0].key, specs[2].key);
    }

    #[test]
    fn a_bad_grid_names_the_key() {
        let err = plan(&text(), SC, &grid(&[("sysctl.dirty_ratio", &["400"])])).unwrap_err();
        assert!(err.contains("dirty_ratio"), "{err}");
        let err = plan(&text(), SC, &grid(&[("seed", &["x"])])).unwrap_err();
        assert!(err.contains("grid key `seed`"), "{err}");
        let err = plan(&text(), SC, &grid(&[("kernel", &["9.9"])])).unwrap_err();
        assert!(err.contains("9.9"), "{err}");
        let err = plan(&text(), SC, &grid(&[("sysctl.dirty_ratio", &[])])).unwrap_err();
        assert!(err.contains("no values"), "{err}");
    }

    #[test]
    fn shards_are_checked() {
        assert_eq!(parse_shard("1/4").unwrap(), (1, 4));
        assert!(parse_shard("4/4").is_err() && parse_shard("1").is_err());
    }
}
