//! 3.2's first form of IO-less throttling against 3.3's: on a slow stick a
//! lone 3.2 writer sleeps about 20 ms at a time (`bdi_max_pause` of 3.2)
//! and dirties a few pages between, where 3.3's pauses reach 200 ms and
//! the writer dirties its pages in bursts between them (read in 3.2.4 and
//! 3.3.8 `mm/page-writeback.c`).

mod common;

use common::{scenario, three_zone_machine};
use wbsim::kernel::{self, DirtyThrottle};
use wbsim::{simulate, RunOptions};

/// Pages dirtied in the busiest 10 ms of the throttled steady state, and
/// the run's elapsed seconds, on a 1 MiB/s stick.
fn busiest_10ms(throttle: DirtyThrottle) -> (u64, f64) {
    let mut sc = scenario(
        &three_zone_machine(2, 15, 240, 0)
            .replace("[[machine.zone]]\nname = \"Normal\"\nsize_mib = 0", ""),
        "ext4",
        "[[task]]\ncommand = \"dd if=/dev/zero of=disk/f bs=32k count=4096\"",
        "slow.toml",
    );
    sc.devices[0].seq_write_mib_per_s = 1.0;
    let mut profile = kernel::preset("3.2").unwrap();
    profile.dirty_throttle = throttle;
    let opts = RunOptions {
        series_interval_ns: Some(10_000_000),
        ..RunOptions::default()
    };
    let r = simulate(&sc, &profile, 1, &opts);
    let s = r.series.expect("series sampled");
    let dirty: Vec<u64> = s
        .samples
        .iter()
        .map(|x| {
            x.zones
                .iter()
                .map(|z| z.dirty_pages + z.writeback_pages)
                .sum()
        })
        .collect();
    // After the first 30 s (past the freerun area), before dd ends.
    let steady = &dirty[3000..dirty.len() - 100];
    let busiest = steady
        .windows(2)
        .map(|w| w[1].saturating_sub(w[0]))
        .max()
        .unwrap();
    (busiest, r.elapsed_seconds)
}

#[test]
fn a_32_writer_dirties_in_small_steps_a_33_writer_in_bursts() {
    let (first, first_s) = busiest_10ms(DirtyThrottle::IoLessFirst);
    let (later, later_s) = busiest_10ms(DirtyThrottle::IoLess);
    assert!(
        first * 3 <= later,
        "3.2: {first} pages in the busiest 10 ms; 3.3: {later}"
    );
    // 3.2 charges the writer's own time between calls on top of each
    // pause (3.3's `dirty_paused_when` credits it), so its dd is slower.
    assert!(first_s > later_s, "{first_s} s against {later_s} s");
    eprintln!("busiest 10 ms: 3.2 {first} pages, 3.3 {later}; dd {first_s:.1} s, {later_s:.1} s");
}
