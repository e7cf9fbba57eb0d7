//! `wbsim compare`: one scenario on several kernels, printed as Mel
//! Gorman's mmtests reports print them (duration, vmstat, ftrace vmscan and
//! congestion_wait sections, one column per kernel).

use std::path::Path;

use rayon::prelude::*;
use wbsim::report::mmtests::{render, FsMarkLoops, MmtestsColumn};

use crate::exit::Failure;
use crate::output::Outputs;

pub fn cmd_compare(
    path: &Path,
    kernels: &[String],
    seed: Option<u64>,
    out: Option<&Path>,
) -> Result<u8, Failure> {
    let sc = wbsim::scenario::load_scenario(path).map_err(|e| e.to_string())?;
    if kernels.len() < 2 {
        return Err(
            "compare needs at least two --kernel presets (the first is the baseline)".into(),
        );
    }
    let profiles = crate::kernel_presets(&sc, kernels)?;
    let requests: Vec<(&str, &Path)> = out.map(|p| ("--out", p)).into_iter().collect();
    let mut outputs = Outputs::plan(&requests, &[path])?;
    let mut cut = false;
    let seed = seed.unwrap_or(sc.run.seed);
    let opts = wbsim::RunOptions::default();
    let columns: Vec<MmtestsColumn> = profiles
        .par_iter()
        .map(|p| {
            let r = wbsim::simulate(&sc, p, seed, &opts);
            (
                r.cut,
                MmtestsColumn {
                    label: p.name.clone(),
                    user_sys_seconds: r.user_seconds + r.system_seconds,
                    elapsed_seconds: r.elapsed_seconds,
                    vmstat: r.vmstat,
                    ftrace: r.ftrace,
                    fsmark: (!r.fsmark.is_empty()).then(|| FsMarkLoops {
                        files_per_second: r.fsmark.iter().map(|l| l.files_per_second).collect(),
                        overhead_us: r.fsmark.iter().map(|l| l.overhead_us).collect(),
                    }),
                },
            )
        })
        .collect::<Vec<_>>()
        .into_iter()
        .map(|(c, col)| {
            cut |= c;
            col
        })
        .collect();
    let text = render(&sc.name, &columns);
    outputs.print_text(&text);
    if let Some(id) = outputs.id("--out") {
        outputs.put(id, text.as_bytes()).map_err(Failure::runtime)?;
    }
    outputs.commit().map_err(Failure::runtime)?;
    if cut {
        eprintln!("wbsim: a kernel's run was cut by the time limit; its column covers part of the workload");
        return Ok(crate::exit::CUT_RUNS);
    }
    Ok(0)
}
