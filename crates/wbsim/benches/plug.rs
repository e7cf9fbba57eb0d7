//! Speed benchmark: one fs_mark run of the writeback-plug experiment (8
//! threads, 16 GiB machine, the published 120 loops of 8 × 10,000 4 KiB
//! files: 9.6 M files and pages, with reclaim from loop ~40 on) per kernel,
//! on one core. Target: under 10 s each.

use criterion::{criterion_group, criterion_main, Criterion};

fn writeback_plug(c: &mut Criterion) {
    let mut group = c.benchmark_group("writeback-plug");
    group.sample_size(10);
    group.measurement_time(std::time::Duration::from_secs(100));
    let path = format!(
        "{}/../../scenarios/writeback-plug/fsmark-xfs-raid0.toml",
        env!("CARGO_MANIFEST_DIR")
    );
    let sc = wbsim::scenario::load_scenario(std::path::Path::new(&path)).unwrap();
    for kernel in ["3.10", "3.10+writeback-plug"] {
        let profile = wbsim::kernel::preset(kernel).unwrap();
        group.bench_function(kernel, |b| {
            b.iter(|| wbsim::simulate(&sc, &profile, 1, &wbsim::RunOptions::default()))
        });
    }
    group.finish();
}

criterion_group!(benches, writeback_plug);
criterion_main!(benches);
