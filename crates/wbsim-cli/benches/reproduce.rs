//! Issue 31's goal 2 as a benchmark: `wbsim reproduce`'s work (every
//! built-in experiment, every run, in one pool over all cores, then the
//! cells), without printing the tables. Target: median ≤ 60 s on 2 cores,
//! peak RSS ≤ 1 GB, printed after the samples (`VmHWM`: the process's
//! peak, the same for one pass as for eleven, since nothing is kept
//! between passes).
//!
//! A pass takes about a minute, so the whole bench takes some 12 minutes:
//! `cargo bench -p wbsim-cli --bench reproduce`.

use std::time::Duration;

use criterion::{criterion_group, criterion_main, Criterion, SamplingMode};

fn reproduce_all(c: &mut Criterion) {
    let mut group = c.benchmark_group("reproduce");
    // One pass a sample, always: in flat sampling criterion runs
    // ceil(measurement time / (samples × a pass's time)) passes a
    // sample, so a measurement time below ten passes' keeps it at one
    // (criterion then warns that 10 samples will take longer than 60 s).
    // With 700 s, a pass that took 60 s in the warm-up gave two passes a
    // sample and a 21-minute bench.
    group.sampling_mode(SamplingMode::Flat);
    group.sample_size(10);
    group.warm_up_time(Duration::from_secs(1));
    group.measurement_time(Duration::from_secs(60));
    group.bench_function("all experiments", |b| {
        b.iter(|| wbsim_cli::reproduce::reproduce_all_value(None, false).unwrap())
    });
    group.finish();
    let status = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
    if let Some(line) = status.lines().find(|l| l.starts_with("VmHWM:")) {
        println!("reproduce: peak RSS ({line})");
    }
}

criterion_group!(benches, reproduce_all);
criterion_main!(benches);
