//! `wbsim reproduce [ID]`: run the built-in experiment of a source document
//! and print the published and simulated figures side by side.
//!
//! This first version runs the vanilla rows of `zone-dirty-v2` (seed 000)
//! on the 3.0 model. Acceptance bands and verdicts, the per-zone-dirty
//! kernel and the other four experiments are not implemented yet and are
//! listed as such; the xfs vanilla row is the device calibration and is
//! never counted as reproduced.

use std::path::Path;

use indicatif::{ProgressBar, ProgressStyle};
use rayon::prelude::*;
use serde::Serialize;

/// Built-in scenarios (copied into the binary; no files needed at run time).
const ZONE_DIRTY_V2: &[(&str, &str)] = &[
    (
        "xfs",
        include_str!("../../../scenarios/zone-dirty-v2/xfs.toml"),
    ),
    (
        "fuse-ntfs",
        include_str!("../../../scenarios/zone-dirty-v2/fuse-ntfs.toml"),
    ),
    (
        "btrfs",
        include_str!("../../../scenarios/zone-dirty-v2/btrfs.toml"),
    ),
    (
        "ext4",
        include_str!("../../../scenarios/zone-dirty-v2/ext4.toml"),
    ),
];
const ZONE_DIRTY_V2_TARGETS: &str = include_str!("../../../validation/zone-dirty-v2.toml");
const NOT_YET: &[&str] = &[
    "writeback-plug",
    "bdi-period-shift",
    "zone-dirty-v1",
    "reclaim-writeback",
];

#[derive(Serialize)]
struct Cell {
    name: String,
    published: f64,
    simulated: f64,
    band: Option<[f64; 2]>,
    pass: Option<bool>,
    note: String,
}

#[derive(Serialize)]
struct Experiment {
    id: String,
    cells: Vec<Cell>,
}

#[derive(Serialize)]
struct Comparison {
    experiments: Vec<Experiment>,
    not_implemented: Vec<String>,
}

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(|a, b| a.total_cmp(b));
    let n = v.len();
    if n % 2 == 1 {
        v[n / 2]
    } else {
        (v[n / 2 - 1] + v[n / 2]) / 2.0
    }
}

pub fn cmd_reproduce(
    id: Option<&str>,
    runs: Option<u32>,
    json: Option<&Path>,
) -> Result<(), String> {
    let known: Vec<&str> = std::iter::once("zone-dirty-v2")
        .chain(NOT_YET.iter().copied())
        .collect();
    if let Some(id) = id {
        if !known.contains(&id) {
            return Err(format!(
                "unknown experiment `{id}`; known: {}",
                known.join(", ")
            ));
        }
        if id != "zone-dirty-v2" {
            println!("{id}: not yet implemented");
            return Ok(());
        }
    }
    let targets: toml::Value = toml::from_str(ZONE_DIRTY_V2_TARGETS).map_err(|e| e.to_string())?;
    let published_runs = targets
        .get("workload")
        .and_then(|w| w.get("runs"))
        .and_then(|r| r.as_integer())
        .unwrap_or(10) as u32;
    let runs = runs.unwrap_or(published_runs).max(1);
    let mut jobs = Vec::new();
    for (fs, text) in ZONE_DIRTY_V2 {
        let sc = wbsim::scenario::parse_scenario(text, &format!("zone-dirty-v2/{fs}.toml"))
            .map_err(|e| e.to_string())?;
        let profile = wbsim::resolve_profile(&sc, None)?;
        for seed in wbsim::run_seeds(sc.run.seed, runs) {
            jobs.push((fs.to_string(), sc.clone(), profile.clone(), seed));
        }
    }
    let bar = ProgressBar::new(jobs.len() as u64);
    bar.set_style(
        ProgressStyle::with_template("zone-dirty-v2 {bar:30} {pos}/{len} runs {elapsed}")
            .map_err(|e| e.to_string())?,
    );
    let results: Vec<(String, wbsim::report::RunReport)> = jobs
        .par_iter()
        .map(|(fs, sc, p, seed)| {
            let r = wbsim::simulate(sc, p, *seed, &wbsim::RunOptions::default());
            bar.inc(1);
            (fs.clone(), r)
        })
        .collect();
    bar.finish_and_clear();

    let mut cells = Vec::new();
    let rows = targets
        .get("result")
        .and_then(|r| r.as_array())
        .cloned()
        .unwrap_or_default();
    println!("zone-dirty-v2 (seed 000): 10 GiB dd to a USB stick, {runs} runs per row, kernel 3.0-vanilla");
    println!(
        "{:<40} {:>12} {:>12}  note",
        "cell", "published", "simulated"
    );
    for row in rows {
        let fs = row.get("fs").and_then(|v| v.as_str()).unwrap_or("");
        let kernel = row.get("kernel").and_then(|v| v.as_str()).unwrap_or("");
        if kernel != "vanilla" {
            continue;
        }
        let mine: Vec<_> = results
            .iter()
            .filter(|(f, _)| f == fs)
            .map(|(_, r)| r)
            .collect();
        let secs: Vec<f64> = mine.iter().map(|r| r.elapsed_seconds).collect();
        let writes: Vec<f64> = mine
            .iter()
            .map(|r| r.vmstat.get("nr_vmscan_write").copied().unwrap_or(0) as f64)
            .collect();
        let pub_secs = row
            .get("seconds")
            .and_then(|v| v.as_float())
            .unwrap_or(f64::NAN);
        let pub_writes = row
            .get("nr_vmscan_write")
            .and_then(|v| v.as_array())
            .and_then(|a| a.get(1))
            .and_then(|v| v.as_integer().map(|i| i as f64).or_else(|| v.as_float()))
            .unwrap_or(f64::NAN);
        let no_band = "no band yet (issue: per-zone dirty limits)";
        let secs_note = if fs == "xfs" {
            "calibration (device bandwidth), not a result"
        } else {
            no_band
        };
        let mean = secs.iter().sum::<f64>() / secs.len() as f64;
        for (name, published, simulated, note) in [
            (format!("{fs}/{kernel}/seconds"), pub_secs, mean, secs_note),
            (
                format!("{fs}/{kernel}/nr_vmscan_write_median"),
                pub_writes,
                median(writes),
                no_band,
            ),
        ] {
            let note = note.to_string();
            println!("{name:<40} {published:>12.1} {simulated:>12.1}  {note}");
            cells.push(Cell {
                name,
                published,
                simulated,
                band: None,
                pass: None,
                note: note.clone(),
            });
        }
    }
    println!("per-zone-dirty rows: not yet implemented");
    for other in NOT_YET {
        println!("{other}: not yet implemented");
    }
    if let Some(p) = json {
        let cmp = Comparison {
            experiments: vec![Experiment {
                id: "zone-dirty-v2".into(),
                cells,
            }],
            not_implemented: NOT_YET.iter().map(|s| s.to_string()).collect(),
        };
        let text = serde_json::to_string_pretty(&cmp).map_err(|e| e.to_string())?;
        crate::write_atomically(p, &text)?;
    }
    Ok(())
}
