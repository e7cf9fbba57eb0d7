//! Cost of `--check`: one plain run and one run checked after every event
//! of the same scenario, a 2-CPU, 128 MiB three-zone machine writing
//! 2 GiB with dd (xfs, 3.0) to the test suites' 20 MiB/s USB stick, so the
//! page cache fills, kswapd and direct reclaim run and pages are dirtied,
//! written back and freed. Target: the checked run at most 20× the plain
//! one (compare the two medians). Walking every frame after every event,
//! it was 72× (139 ms / 9.9 s); the incremental checker makes it ~1.7×.

use criterion::{criterion_group, criterion_main, Criterion};
use wbsim::RunOptions;

const USB_STICK_DEVICE: &str = include_str!("../tests/fixtures/usb-stick-device.toml");

fn scenario() -> wbsim::scenario::Scenario {
    let text = format!(
        r#"
kernel = "3.0-vanilla"
[machine]
cpus = 2
total_mib = 128
[[machine.zone]]
name = "DMA"
size_mib = 16
[[machine.zone]]
name = "DMA32"
size_mib = 80
[[machine.zone]]
name = "Normal"
size_mib = 32
{USB_STICK_DEVICE}
[[fs]]
type = "xfs"
device = "sdb"
mount = "disk"
[sysctl]
dirty_ratio = 40
[[task]]
command = "dd if=/dev/zero of=disk/f bs=32k count=65536"
"#
    );
    wbsim::scenario::parse_scenario(&text, "check-bench.toml").unwrap()
}

fn plain_and_checked(c: &mut Criterion) {
    let sc = scenario();
    let profile = wbsim::resolve_profile(&sc, None).unwrap();
    let mut group = c.benchmark_group("check");
    group.sample_size(10);
    group.measurement_time(std::time::Duration::from_secs(10));
    for (name, check_every_event) in [("plain", false), ("checked", true)] {
        let opts = RunOptions {
            check_every_event,
            ..RunOptions::default()
        };
        group.bench_function(name, |b| {
            b.iter(|| wbsim::simulate(&sc, &profile, 1, &opts))
        });
    }
    group.finish();
}

criterion_group!(benches, plain_and_checked);
criterion_main!(benches);
