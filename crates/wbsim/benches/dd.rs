//! Speed benchmark: one 10 GiB dd run of the zone-dirty-v2 xfs scenario
//! (3765 MiB machine) on one core. Target: median under 1.0 s. The same
//! run on presets 3.3 and 6.1: issue 29 asks 6.1 (node LRU, node kswapd)
//! to stay within 1.5x of 3.3.

use criterion::{criterion_group, criterion_main, Criterion};

fn dd_10gib_xfs(c: &mut Criterion) {
    let path = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../scenarios/zone-dirty-v2/xfs.toml"
    );
    let sc = wbsim::scenario::load_scenario(std::path::Path::new(path)).unwrap();
    let mut group = c.benchmark_group("dd");
    group.sample_size(10);
    group.measurement_time(std::time::Duration::from_secs(8));
    for kernel in [None, Some("3.3"), Some("6.1"), Some("6.1+mglru")] {
        let profile = wbsim::resolve_profile(&sc, kernel).unwrap();
        let name = format!("zone-dirty-v2/xfs 10 GiB {}", profile.name);
        group.bench_function(name, |b| {
            b.iter(|| wbsim::simulate(&sc, &profile, 1, &wbsim::RunOptions::default()))
        });
    }
    group.finish();
}

criterion_group!(benches, dd_10gib_xfs);
criterion_main!(benches);
