//! Speed benchmark: one 10 GiB dd through FUSE (ntfs-3g) of the
//! zone-dirty-v2 fuse-ntfs scenario on one core, on its own kernel
//! (3.1-mmotm). Each page is a round trip, writer to daemon and back, so
//! this run weighs the engine (wake-ups, the scheduler's pick, the event
//! queue) more than the xfs dd of `benches/dd.rs` does; the FUSE runs are
//! about a fifth of `wbsim reproduce`.

use criterion::{criterion_group, criterion_main, Criterion};

fn dd_10gib_fuse(c: &mut Criterion) {
    let path = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../scenarios/zone-dirty-v2/fuse-ntfs.toml"
    );
    let sc = wbsim::scenario::load_scenario(std::path::Path::new(path)).unwrap();
    let profile = wbsim::resolve_profile(&sc, None).unwrap();
    let mut group = c.benchmark_group("fuse");
    group.sample_size(10);
    group.measurement_time(std::time::Duration::from_secs(12));
    group.bench_function(
        format!("zone-dirty-v2/fuse-ntfs 10 GiB {}", profile.name),
        |b| b.iter(|| wbsim::simulate(&sc, &profile, 1, &wbsim::RunOptions::default())),
    );
    group.finish();
}

criterion_group!(benches, dd_10gib_fuse);
criterion_main!(benches);
