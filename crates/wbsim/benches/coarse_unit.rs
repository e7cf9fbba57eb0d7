//! The coarse unit (`[machine] unit_kib`): a 64 GiB machine writing 80 GiB
//! with dd to xfs (3.3), simulated at 64 KiB pages, next to the same run at
//! 4 KiB pages (`scenarios/large-machine/xfs-64gib.toml`; the two agree
//! within 0.4 %, `tests/coarse_unit.rs`). Compare the two medians: the
//! coarse run does a sixteenth of the page events.

use criterion::{criterion_group, criterion_main, Criterion};
use wbsim::RunOptions;

const SCENARIO: &str = include_str!("../../../scenarios/large-machine/xfs-64gib.toml");

fn at_unit(kib: u64) -> wbsim::scenario::Scenario {
    let text = SCENARIO.replace("unit_kib = 64", &format!("unit_kib = {kib}"));
    wbsim::scenario::parse_scenario(&text, "xfs-64gib.toml").unwrap()
}

fn fine_and_coarse(c: &mut Criterion) {
    let mut group = c.benchmark_group("unit_64gib_80gib_dd");
    group.sample_size(10);
    group.measurement_time(std::time::Duration::from_secs(20));
    for kib in [64, 4] {
        let sc = at_unit(kib);
        let profile = wbsim::resolve_profile(&sc, None).unwrap();
        group.bench_function(format!("{kib}_kib"), |b| {
            b.iter(|| wbsim::simulate(&sc, &profile, 1, &RunOptions::default()))
        });
    }
    group.finish();
}

criterion_group!(benches, fine_and_coarse);
criterion_main!(benches);
