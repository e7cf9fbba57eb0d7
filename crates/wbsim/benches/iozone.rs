//! Speed benchmark: the whole bdi-period-shift experiment, sequentially on
//! one core: both scenarios (iozone -s 1000m and -s 500m, each run after a
//! 2 GiB dd history on disk A) on all five kernels of
//! `validation/bdi-period-shift.bands.toml`, sampled every 100 ms as the
//! experiment does. Target (issue 6): under 30 s wall.

use criterion::{criterion_group, criterion_main, Criterion};

const KERNELS: [&str; 5] = [
    "2.6.24",
    "2.6.24+violation",
    "2.6.24+shift-12",
    "2.6.24+violation+shift-12",
    "3.7",
];

fn bdi_period_shift(c: &mut Criterion) {
    let mut group = c.benchmark_group("bdi-period-shift");
    group.sample_size(10);
    group.measurement_time(std::time::Duration::from_secs(30));
    let scenarios: Vec<_> = ["iozone-1000m", "iozone-500m"]
        .iter()
        .map(|name| {
            let path = format!(
                "{}/../../scenarios/bdi-period-shift/{name}.toml",
                env!("CARGO_MANIFEST_DIR")
            );
            wbsim::scenario::load_scenario(std::path::Path::new(&path)).unwrap()
        })
        .collect();
    let profiles: Vec<_> = KERNELS
        .iter()
        .map(|k| wbsim::kernel::preset(k).unwrap())
        .collect();
    let opts = wbsim::RunOptions {
        series_interval_ns: Some(100_000_000),
        ..wbsim::RunOptions::default()
    };
    group.bench_function("whole experiment (10 simulations)", |b| {
        b.iter(|| {
            for sc in &scenarios {
                for profile in &profiles {
                    wbsim::simulate(sc, profile, 1, &opts);
                }
            }
        })
    });
    group.finish();
}

criterion_group!(benches, bdi_period_shift);
criterion_main!(benches);
