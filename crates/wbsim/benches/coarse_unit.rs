//! The coarse unit (`[machine] unit_kib`): a 64 GiB machine writing 80 GiB
//! with dd to xfs (3.3), simulated at 64 KiB pages, next to the same run at
//! 4 KiB pages (`scenarios/large-machine/xfs-64gib.toml`; the two agree
//! within 0.4 %, `tests/coarse_unit.rs`). Compare the two medians: the
//! coarse run does a sixteenth of the page events.
//!
//! Then issue 31's goal 3b on large machines: 1 TiB at 64 KiB and 16 TiB
//! at 1 MiB (`xfs-1tib.toml`, `xfs-16tib.toml`), each dd writing more
//! than memory, with each machine's peak RSS printed after its samples.

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

/// Linux: the process's peak RSS (`VmHWM`) from now on is what it holds
/// now (`echo 5 > /proc/self/clear_refs`, Linux 4.0+). False elsewhere.
fn reset_peak_rss() -> bool {
    std::fs::write("/proc/self/clear_refs", "5").is_ok()
}

fn peak_rss_line() -> Option<String> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    status
        .lines()
        .find(|l| l.starts_with("VmHWM:"))
        .map(|l| l.split_whitespace().collect::<Vec<_>>().join(" "))
}

fn large_machines(c: &mut Criterion) {
    let machines = [
        (
            "1tib_at_64_kib",
            include_str!("../../../scenarios/large-machine/xfs-1tib.toml"),
        ),
        (
            "16tib_at_1_mib",
            include_str!("../../../scenarios/large-machine/xfs-16tib.toml"),
        ),
    ];
    for (name, text) in machines {
        let sc = wbsim::scenario::parse_scenario(text, name).unwrap();
        let profile = wbsim::resolve_profile(&sc, None).unwrap();
        let mut group = c.benchmark_group("large_machine_dd");
        group.sample_size(10);
        group.measurement_time(std::time::Duration::from_secs(50));
        let reset = reset_peak_rss();
        group.bench_function(name, |b| {
            b.iter(|| wbsim::simulate(&sc, &profile, 1, &RunOptions::default()))
        });
        group.finish();
        if let (true, Some(line)) = (reset, peak_rss_line()) {
            println!("large_machine_dd/{name}: peak RSS ({line})");
        }
    }
}

criterion_group!(benches, fine_and_coarse, large_machines);
criterion_main!(benches);
