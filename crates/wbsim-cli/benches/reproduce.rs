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

use criterion::{criterion_group, criterion_main, Criterion};

fn reproduce_all(c: &mut Criterion) {
    let mut group = c.benchmark_group("reproduce");
    group.sample_size(10);
    group.warm_up_time(Duration::from_secs(1));
    group.measurement_time(Duration::from_secs(700));
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
