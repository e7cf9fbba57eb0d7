//! Speed benchmark: one run of each reclaim-writeback scenario on one core
//! (fs_mark: 25 loops of 150 × 10 MiB files, 9.6 M pages; micro: a 4.75 GiB
//! mapping), 3.0-rc6. The experiment runs six kernels of each on two cores;
//! its target is under 60 s wall.

use criterion::{criterion_group, criterion_main, Criterion};

fn reclaim_writeback(c: &mut Criterion) {
    let mut group = c.benchmark_group("reclaim-writeback");
    group.sample_size(10);
    group.measurement_time(std::time::Duration::from_secs(20));
    for name in ["fsmark", "micro"] {
        let path = format!(
            "{}/../../scenarios/reclaim-writeback/{name}.toml",
            env!("CARGO_MANIFEST_DIR")
        );
        let sc = wbsim::scenario::load_scenario(std::path::Path::new(&path)).unwrap();
        let profile = wbsim::resolve_profile(&sc, None).unwrap();
        group.bench_function(name, |b| {
            b.iter(|| wbsim::simulate(&sc, &profile, 1, &wbsim::RunOptions::default()))
        });
    }
    group.finish();
}

criterion_group!(benches, reclaim_writeback);
criterion_main!(benches);
