//! The vmscan/writeback tracepoints: their totals (computed as
//! trace-vmscan-postprocess.pl computes them) agree with /proc/vmstat, and
//! the ftrace text is deterministic.

mod common;

use common::{dirty_heavy, SharedBuf};
use wbsim::{kernel, simulate_traced, RunOptions};

fn traced(preset: &str) -> (wbsim::report::RunReport, String) {
    traced_on(&dirty_heavy(), preset)
}

fn traced_on(sc: &wbsim::scenario::Scenario, preset: &str) -> (wbsim::report::RunReport, String) {
    let buf = SharedBuf::default();
    let profile = kernel::preset(preset).unwrap();
    let r = simulate_traced(
        sc,
        &profile,
        1,
        &RunOptions::default(),
        Box::new(buf.clone()),
    )
    .unwrap();
    let text = String::from_utf8(buf.0.lock().unwrap().clone()).unwrap();
    (r, text)
}

#[test]
fn trace_totals_equal_vmstat() {
    for preset in ["3.0-rc6", "3.0-rc6+reclaim-1-3"] {
        let (r, text) = traced(preset);
        let t = &r.ftrace;
        let v = |k: &str| r.vmstat[k] as u64;
        assert!(t.direct_reclaims > 0 && t.kswapd_wakeups > 0, "{preset}");
        assert_eq!(t.direct_reclaims, v("allocstall"), "{preset}");
        assert_eq!(t.direct_pages_scanned, v("pgscan_direct"), "{preset}");
        assert_eq!(t.kswapd_pages_scanned, v("pgscan_kswapd"), "{preset}");
        assert_eq!(t.kswapd_pages_reclaimed, v("kswapd_steal"), "{preset}");
        assert_eq!(
            t.direct_pages_reclaimed + t.kswapd_pages_reclaimed,
            v("pgsteal"),
            "{preset}"
        );
        let writes = t.direct_writes.total() + t.kswapd_writes.total();
        assert_eq!(writes, v("nr_vmscan_write"), "{preset}");
        // One line per event, each naming a known tracepoint.
        let events = text.lines().filter(|l| !l.starts_with('#')).count();
        assert!(events > 1000, "{preset}: {events}");
        assert!(text
            .lines()
            .filter(|l| !l.starts_with('#'))
            .all(|l| l.contains(": mm_vmscan_")
                || l.contains(": writeback_")
                || l.contains(": sched_")));
    }
}

#[test]
fn same_seed_same_trace() {
    let (_, a) = traced("3.0-rc6+reclaim-1-5");
    let (_, b) = traced("3.0-rc6+reclaim-1-5");
    assert_eq!(a, b);
}

/// The report has one kswapd-awake figure: `kswapd_awake_seconds` and the
/// mmtests total are the wake-to-sleep intervals of the trace file, plus
/// an interval still open when the run ends.
#[test]
fn one_kswapd_awake_figure() {
    let (r, text) = traced("3.0-rc6");
    // Σ (sleep − wake) read back from the ftrace text, as the perl script
    // does, and the interval still open at the end.
    let (mut closed_us, mut since_us) = (0.0f64, None);
    for line in text.lines().filter(|l| !l.starts_with('#')) {
        let us = |l: &str| {
            let t = l
                .split(": ")
                .next()
                .unwrap()
                .split_whitespace()
                .last()
                .unwrap();
            t.parse::<f64>().unwrap() * 1e6
        };
        if line.contains(": mm_vmscan_kswapd_wake:") && since_us.is_none() {
            since_us = Some(us(line));
        } else if line.contains(": mm_vmscan_kswapd_sleep:") {
            closed_us += us(line) - since_us.take().unwrap();
        }
    }
    let open_us = since_us.map_or(0.0, |s| r.elapsed_seconds * 1e6 - s);
    let from_trace_s = (closed_us + open_us) / 1e6;
    assert!(r.kswapd_awake_seconds > 0.0);
    assert!(
        (r.kswapd_awake_seconds - from_trace_s).abs()
            < 1e-5 * (1.0 + r.ftrace.kswapd_wakeups as f64),
        "{} vs {from_trace_s}",
        r.kswapd_awake_seconds
    );
    assert_eq!(
        (r.kswapd_awake_seconds * 1e9).round() as u64,
        r.ftrace.kswapd_awake_ns
    );
}

/// On the IO-less kernels the dirty-throttling tracepoints follow the
/// writer: `global_dirty_state` counts what vmstat counts, every pause is
/// at most MAX_PAUSE (200 ms), and each kernel prints its own layout.
#[test]
fn dirty_throttling_events() {
    for (preset, marker) in [("3.3", " unstable=0 "), ("6.1", " cgroup_ino=1")] {
        let (r, text) = traced(preset);
        let body = |name: &str| -> Vec<&str> {
            let tag = format!(": {name}: ");
            text.lines()
                .filter_map(|l| l.split_once(tag.as_str()).map(|(_, b)| b))
                .collect()
        };
        let field = |b: &str, key: &str| -> i64 {
            // " key=": `pause=` is also the end of `dirtied_pause=`.
            let key = format!(" {key}=");
            let at = b.find(key.as_str()).unwrap() + key.len();
            b[at..].split(' ').next().unwrap().parse().unwrap()
        };
        let states = body("global_dirty_state");
        let bdp = body("balance_dirty_pages");
        let rates = body("bdi_dirty_ratelimit");
        assert!(
            !states.is_empty() && !bdp.is_empty() && !rates.is_empty(),
            "{preset}"
        );
        let dirtied: Vec<i64> = states.iter().map(|b| field(b, "dirtied")).collect();
        assert!(dirtied.windows(2).all(|w| w[0] <= w[1]), "{preset}");
        assert!(
            *dirtied.last().unwrap() <= r.vmstat["nr_dirtied"],
            "{preset}"
        );
        let pauses: Vec<i64> = bdp.iter().map(|b| field(b, "pause")).collect();
        assert!(pauses.iter().any(|&p| p > 0), "{preset}: nobody slept");
        let longest = pauses.iter().max().unwrap();
        assert!(*longest <= 200, "{preset}: {longest}");
        assert!(states.iter().any(|b| b.contains(" unstable=0 ")) == (preset == "3.3"));
        assert!(bdp
            .iter()
            .all(|b| b.ends_with(marker) || marker.starts_with(" unstable")));
        assert!(rates.iter().all(|b| b.starts_with("bdi 8:")), "{preset}");
    }
}

/// 6.1 groups pages by mobility: each fallback onto another migratetype's
/// buddy is an `mm_page_alloc_extfrag` line (one that fragments a
/// pageblock, a buddy under order 9, is what boosts the watermarks); the
/// 3.x presets keep one free list and print none.
#[test]
fn extfrag_events_follow_the_fallbacks() {
    // ext4: its buffer heads are the RECLAIMABLE pages (6.1's xfs has none).
    let (_, text) = traced_on(&common::small("ext4"), "6.1");
    let lines: Vec<&str> = text
        .lines()
        .filter_map(|l| l.split_once(": mm_page_alloc_extfrag: ").map(|(_, b)| b))
        .collect();
    assert!(!lines.is_empty(), "no fallback in a 6.1 run");
    let field = |b: &str, key: &str| -> u64 {
        let key = format!(" {key}=");
        let at = b.find(key.as_str()).unwrap() + key.len();
        b[at..].split(' ').next().unwrap().parse().unwrap()
    };
    for b in &lines {
        assert_ne!(
            field(b, "alloc_migratetype"),
            field(b, "fallback_migratetype"),
            "{b}"
        );
        assert_eq!(
            field(b, "fragmenting"),
            u64::from(field(b, "fallback_order") < 9),
            "{b}"
        );
    }
    let (_, old) = traced_on(&common::small("ext4"), "3.3");
    assert!(!old.contains("mm_page_alloc_extfrag"));
}

/// `sched_switch` and `sched_wakeup` tell one consistent story per CPU:
/// each switch leaves the task the CPU's previous switch brought in (the
/// idle task at first), a task is switched in only on the CPU its last
/// wake-up targeted, and a preempted task (`R+`) is back in before it is
/// woken again; 6.1 prints no `success=` field, 3.x does.
#[test]
fn sched_events_follow_each_cpu() {
    let one_cpu = common::scenario(
        &common::three_zone_machine(1, 16, 32, 16),
        "ext4",
        common::SMALL_DD_TASK,
        "one-cpu.toml",
    );
    let runs = [
        ("6.1", false, common::small("ext4")),
        ("3.3", true, common::small("ext4")),
        ("6.1", false, one_cpu),
    ];
    for (preset, success, sc) in runs {
        let (_, text) = traced_on(&sc, preset);
        let cpus = sc.machine.cpus as usize;
        let mut on_cpu: Vec<String> = vec!["swapper/0 0".into(), "swapper/1 0".into()];
        let mut woken_to: std::collections::HashMap<String, String> = Default::default();
        let mut preempted: std::collections::HashSet<String> = Default::default();
        let (mut switches, mut wakeups, mut preemptions) = (0, 0, 0);
        let field = |b: &str, key: &str| -> String {
            let key = format!("{key}=");
            let at = b.find(key.as_str()).unwrap() + key.len();
            b[at..].split(' ').next().unwrap().to_string()
        };
        for line in text.lines().filter(|l| !l.starts_with('#')) {
            let cpu = &line[line.find('[').unwrap() + 1..line.find(']').unwrap()];
            let cpu: usize = cpu.parse().unwrap();
            if let Some((_, b)) = line.split_once(": sched_switch: ") {
                switches += 1;
                let prev = format!("{} {}", field(b, "prev_comm"), field(b, "prev_pid"));
                let next = format!("{} {}", field(b, "next_comm"), field(b, "next_pid"));
                assert_eq!(on_cpu[cpu], prev, "{preset}: {line}");
                if field(b, "next_pid") != "0" {
                    let target = woken_to.get(&next).map(String::as_str);
                    assert_eq!(
                        target,
                        Some(format!("{cpu:03}").as_str()),
                        "{preset}: {line}"
                    );
                }
                if field(b, "prev_state") == "R+" {
                    preemptions += 1;
                    preempted.insert(prev);
                }
                preempted.remove(&next);
                on_cpu[cpu] = next;
            } else if let Some((_, b)) = line.split_once(": sched_wakeup: ") {
                wakeups += 1;
                assert_eq!(b.contains(" success=1 "), success, "{preset}: {line}");
                let woken = format!("{} {}", field(b, "comm"), field(b, "pid"));
                assert!(
                    !preempted.contains(&woken),
                    "{preset}: a runnable task woken: {line}"
                );
                woken_to.insert(woken, field(b, "target_cpu"));
            }
        }
        assert!(
            switches > 100 && wakeups > 50,
            "{preset}: {switches} {wakeups}"
        );
        // One CPU: a woken kswapd preempts dd.
        assert!(
            cpus > 1 || preemptions > 0,
            "{preset}: no preemption on one CPU"
        );
    }
}

/// On 6.1 the vmscan events print 6.1's field lists: `mm_vmscan_lru_shrink_inactive`
/// without `zid=` and with its `reclaim_stat`, whose nr_scanned (the
/// walk, skipped pages included) and nr_reclaimed add up to pgscan and
/// pgsteal, and `mm_vmscan_wakeup_kswapd` with the allocation's gfp flags.
#[test]
fn vmscan_events_print_6_1_fields_on_6_1() {
    let (r, text) = traced("6.1");
    let v = |k: &str| r.vmstat[k] as u64;
    let field = |l: &str, k: &str| -> u64 {
        let at = l
            .find(&format!(" {k}="))
            .unwrap_or_else(|| panic!("{k} in {l}"));
        let rest = &l[at + k.len() + 2..];
        rest.split(' ').next().unwrap().parse().unwrap()
    };
    let shrinks: Vec<&str> = text
        .lines()
        .filter(|l| l.contains(": mm_vmscan_lru_shrink_inactive: "))
        .collect();
    assert!(shrinks.len() > 100, "{}", shrinks.len());
    assert!(shrinks
        .iter()
        .all(|l| !l.contains(" zid=") && l.contains(" nr_ref_keep=")));
    let scanned: u64 = shrinks.iter().map(|l| field(l, "nr_scanned")).sum();
    let reclaimed: u64 = shrinks.iter().map(|l| field(l, "nr_reclaimed")).sum();
    assert_eq!(scanned, v("pgscan_kswapd") + v("pgscan_direct"));
    assert_eq!(reclaimed, v("pgsteal_kswapd") + v("pgsteal_direct"));
    let activated: u64 = shrinks
        .iter()
        .map(|l| field(l, "nr_activate_file") + field(l, "nr_activate_anon"))
        .sum();
    assert!(activated <= v("pgactivate"));
    let wakes: Vec<&str> = text
        .lines()
        .filter(|l| l.contains(": mm_vmscan_wakeup_kswapd: "))
        .collect();
    assert!(!wakes.is_empty());
    assert!(wakes
        .iter()
        .all(|l| l.contains(" gfp_flags=") && !l.contains(" zid=")));
    let (_, old) = traced("3.3");
    assert!(old.contains(": mm_vmscan_lru_shrink_inactive: nid=0 zid="));
}
