//! ftrace lines and what the guest report makes of them.

mod common;

use common::{fixture, ns};
use wbsim_lab::guest_report::trace::{digest_trace, kswapd_awake};
use wbsim_lab::procfs::{
    parse_trace_line, parse_trace_marker, parse_trace_record, parse_zoneinfo, TraceEvent,
};

#[test]
fn lines_of_3_2() {
    let text = fixture("3.2-trace");
    let recs: Vec<_> = text.lines().filter_map(parse_trace_record).collect();
    assert_eq!(recs.len(), 12);
    let first = &recs[0];
    assert_eq!((first.task.as_str(), first.pid, first.cpu), ("dd", 301, 1));
    assert_eq!(
        first.event,
        TraceEvent::WakeupKswapd {
            t_s: 81.07099,
            pid: 301,
            zid: Some(2),
            order: 0
        }
    );
    assert_eq!(recs[1].event, TraceEvent::KswapdWake { t_s: 81.071 });
    assert!(recs[1].task_is_kswapd());
    assert_eq!(
        recs[2].event,
        TraceEvent::Writepage {
            t_s: 81.2,
            pfn: 1048700,
            file: true,
            sync: false
        }
    );
    assert_eq!((recs[3].task.as_str(), recs[3].pid), ("<...>", 292));
    assert_eq!(
        recs[4].event,
        TraceEvent::DirectReclaimBegin {
            t_s: 82.0,
            pid: 301
        }
    );
    assert_eq!(
        recs[6].event,
        TraceEvent::Writepage {
            t_s: 82.0002,
            pfn: 20,
            file: false,
            sync: true
        }
    );
    assert_eq!(
        recs[7].event,
        TraceEvent::DirectReclaimEnd {
            t_s: 82.0025,
            pid: 301,
            nr_reclaimed: 32
        }
    );
    assert_eq!(recs[9].event, TraceEvent::KswapdSleep { t_s: 92.315 });
    // A comm with a dash and a colon.
    assert_eq!((recs[10].task.as_str(), recs[10].pid), ("flush-253:0", 305));
    assert_eq!(recs[11].event, TraceEvent::KswapdWake { t_s: 95.0 });
}

#[test]
fn lines_of_6_1() {
    let text = fixture("6.1-trace");
    let recs: Vec<_> = text.lines().filter_map(parse_trace_record).collect();
    // kswapd1 (node 1) and the marker are not vmscan events of node 0.
    assert_eq!(recs.len(), 6);
    assert_eq!(recs[0].event, TraceEvent::KswapdWake { t_s: 12.345678 });
    assert_eq!(
        recs[1].event,
        TraceEvent::Writepage {
            t_s: 12.5,
            pfn: 0x100fa0,
            file: true,
            sync: false
        }
    );
    // A comm with a space and a dash, with the tgid column.
    assert_eq!(
        (recs[2].task.as_str(), recs[2].pid, recs[2].cpu),
        ("my task-1", 777, 1)
    );
    assert_eq!(
        recs[3].event,
        TraceEvent::WakeupKswapd {
            t_s: 12.6001,
            pid: 777,
            zid: None,
            order: 0
        }
    );
    assert_eq!(
        recs[4].event,
        TraceEvent::DirectReclaimEnd {
            t_s: 12.7,
            pid: 777,
            nr_reclaimed: 17
        }
    );
    assert_eq!(recs[5].event, TraceEvent::KswapdSleep { t_s: 13.0 });
    let marker = text.lines().find_map(parse_trace_marker).unwrap();
    assert_eq!(marker, (13.2, "wbsim_mono_ns=13150000000".to_string()));
}

#[test]
fn other_lines_are_ignored() {
    for line in [
        "",
        "# tracer: nop",
        "CPU:1 [LOST 3 EVENTS]",
        "garbage",
        "  kworker/0:1-12 [000] 93.500000: mm_vmscan_lru_isolate: isolate_mode=0",
        "  dd-1 [000] 1.000000: mm_vmscan_writepage: page=ffff flags=RECLAIM_WB_FILE",
        "  dd-1 [000] 1.000000: mm_vmscan_memcg_reclaim_begin: order=0",
        "  dd-1 [000] 1.000000 mm_vmscan_kswapd_wake: nid=0 order=0",
        "  dd-x [000] 1.000000: mm_vmscan_kswapd_wake: nid=0 order=0",
    ] {
        assert_eq!(parse_trace_line(line), None, "{line:?}");
    }
    // Irq-info flags of 3.x (`....`) and a bare comm without padding.
    assert_eq!(
        parse_trace_line("<...>-22 [001] .... 123.456789: mm_vmscan_kswapd_wake: nid=0 order=0"),
        Some(TraceEvent::KswapdWake { t_s: 123.456789 })
    );
    // 3.1's marker form.
    let m = parse_trace_marker("  sh-1 [000] 2.000000: 0: KLAB_END");
    assert_eq!(m, Some((2.0, "KLAB_END".to_string())));
}

/// The simulator's own 3.0-layout trace lines parse to the same events.
#[test]
fn simulator_trace_lines_parse() {
    use wbsim::trace::{write_trace_line, GfpMask, ReclaimFlags, ReclaimLru, TraceEvent as Sim};
    let events = [
        Sim::KswapdWake { nid: 0, order: 0 },
        Sim::writepage(
            1048577,
            ReclaimFlags {
                lru: ReclaimLru::File,
                sync: false,
            },
        ),
        Sim::DirectReclaimBegin {
            order: 0,
            may_writepage: true,
            gfp: GfpMask::HighuserMovable,
            alloc: wbsim::trace::AllocGfp::PageCacheWrite,
        },
        Sim::DirectReclaimEnd { nr_reclaimed: 9 },
        Sim::WakeupKswapd {
            nid: 0,
            zid: 1,
            order: 0,
            gfp: wbsim::trace::AllocGfp::PageCacheWrite,
        },
        Sim::KswapdSleep { nid: 0 },
    ];
    let mut text = String::new();
    for (i, ev) in events.iter().enumerate() {
        write_trace_line(
            &mut text,
            "kswapd0",
            41,
            1,
            2_000_000_000 + i as u64 * 1000,
            ev,
            wbsim::trace::WritebackLayout::Linux3,
        );
    }
    let got: Vec<TraceEvent> = text.lines().filter_map(parse_trace_line).collect();
    assert_eq!(
        got,
        [
            TraceEvent::KswapdWake { t_s: 2.0 },
            TraceEvent::Writepage {
                t_s: 2.000001,
                pfn: 1048577,
                file: true,
                sync: false
            },
            TraceEvent::DirectReclaimBegin {
                t_s: 2.000002,
                pid: 41
            },
            TraceEvent::DirectReclaimEnd {
                t_s: 2.000003,
                pid: 41,
                nr_reclaimed: 9
            },
            TraceEvent::WakeupKswapd {
                t_s: 2.000004,
                pid: 41,
                zid: Some(1),
                order: 0
            },
            TraceEvent::KswapdSleep { t_s: 2.000005 },
        ]
    );
}

#[test]
fn awake_wake_wake_sleep_is_one_interval() {
    let a = kswapd_awake(&[(10, true), (15, true), (30, false)], 0, 100);
    assert_eq!(a.intervals, [(10, 30)]);
    assert_eq!((a.full_sleeps, a.open_at_end, a.total_ns()), (1, false, 20));
    assert!(a.awake_at(10) && a.awake_at(29));
    assert!(!a.awake_at(9) && !a.awake_at(30));
}

#[test]
fn awake_open_interval_runs_to_the_end() {
    let a = kswapd_awake(&[(10, true), (20, false), (50, true), (60, true)], 0, 90);
    assert_eq!(a.intervals, [(10, 20), (50, 90)]);
    assert!(a.open_at_end);
    assert_eq!((a.full_sleeps, a.total_ns()), (1, 50));
    assert!(a.awake_at(90) && a.awake_at(70));
    // Closed at the end, or after the end: never negative.
    let a = kswapd_awake(&[(95, true)], 0, 90);
    assert_eq!(a.intervals, [(95, 95)]);
}

#[test]
fn awake_counts_from_the_window_start() {
    // A sleep while asleep counts as a full sleep but adds no time.
    let events = [(5, true), (8, false), (12, false), (15, true), (25, false)];
    let a = kswapd_awake(&events, 20, 100);
    assert_eq!(a.intervals, [(20, 25)]);
    assert_eq!(a.full_sleeps, 1);
    let a = kswapd_awake(&events, 0, 100);
    assert_eq!(a.intervals, [(5, 8), (15, 25)]);
    assert_eq!(a.full_sleeps, 3);
}

/// The 3.2.4 lab run's kswapd intervals, written as a 3.2 trace with a
/// `balance_pgdat` wake every 0.25 s inside each: the digest gives the
/// run's `kswapd_awake_s` and full sleeps (trace_summary).
#[test]
fn awake_time_of_the_3_2_4_run() {
    let mut text = String::new();
    for line in fixture("3.2.4-kswapd_intervals").lines() {
        let f: Vec<f64> = line
            .split_whitespace()
            .skip(1)
            .map(|x| x.parse().unwrap())
            .collect();
        let (a, b) = (f[0], f[1]);
        let mut t = a;
        while t < b {
            text += &format!(
                "         kswapd0-292   [000] {t:12.6}: mm_vmscan_kswapd_wake: nid=0 order=0\n"
            );
            t += 0.25;
        }
        text += &format!("         kswapd0-292   [000] {b:12.6}: mm_vmscan_kswapd_sleep: nid=0\n");
    }
    let summary = fixture("3.2.4-trace_summary");
    let field = |k: &str| -> f64 {
        let v = summary
            .split_whitespace()
            .find_map(|w| w.strip_prefix(k))
            .unwrap();
        v.parse().unwrap()
    };
    let d = digest_trace(&text, &[], ns(3.77), ns(305.4));
    // The interval file rounds each end to the millisecond.
    assert!((d.kswapd.total_ns() as f64 / 1e9 - field("kswapd_awake_s=")).abs() < 0.005);
    assert_eq!(d.kswapd.full_sleeps as f64, field("kswapd_fullsleeps="));
    assert_eq!(d.stats.kswapd_wakeups as f64, field("kswapd_fullwakes="));
}

#[test]
fn digest_of_the_3_2_trace() {
    let zones = parse_zoneinfo(&fixture("3.2.4-zoneinfo.before"))
        .unwrap()
        .zones;
    let d = digest_trace(&fixture("3.2-trace"), &zones, ns(81.0), ns(100.0));
    assert_eq!(d.lost_events, 3);
    assert_eq!(
        d.kswapd.intervals,
        [(ns(81.071), ns(92.315)), (ns(95.0), ns(100.0))]
    );
    assert!(d.kswapd.open_at_end);
    let s = &d.stats;
    assert_eq!(s.kswapd_wakeups, 2);
    assert_eq!(s.kswapd_awake_ns, ns(92.315 - 81.071) + ns(5.0));
    // kswapd0 by name and `<...>` by pid; the flusher and dd are direct.
    assert_eq!(s.kswapd_writes.file_async, 2);
    assert_eq!(s.direct_writes.file_async, 1);
    assert_eq!(s.direct_writes.anon_sync, 1);
    assert_eq!(s.direct_reclaims, 1);
    assert_eq!(s.direct_stall_ns, ns(0.0025));
    // dd's wakeup before it entered direct reclaim counts too (the
    // script's totals count all events of a direct reclaimer).
    assert_eq!(s.wake_kswapd_requests, 2);
    let by_zone: Vec<(&str, i64)> = d
        .writes_by_zone
        .iter()
        .map(|(k, v)| (k.as_str(), *v))
        .collect();
    assert_eq!(by_zone, [("dma", 1), ("dma32", 1), ("normal", 2)]);
    // From a later start only the later events count.
    let d = digest_trace(&fixture("3.2-trace"), &zones, ns(90.0), ns(100.0));
    assert_eq!(d.stats.direct_reclaims, 0);
    assert_eq!(d.stats.kswapd_writes.total(), 0);
    assert_eq!(d.kswapd.intervals[0], (ns(90.0), ns(92.315)));
}

#[test]
fn digest_moves_trace_times_by_the_clock_marker() {
    // The marker at trace time 13.2 s says CLOCK_MONOTONIC 13.15 s.
    let d = digest_trace(&fixture("6.1-trace"), &[], 0, ns(20.0));
    assert_eq!(d.clock_offset_ns, ns(0.05) as i64);
    assert_eq!(d.kswapd.intervals, [(ns(12.295678), ns(12.95))]);
    assert_eq!(d.stats.direct_stall_ns, ns(0.1));
    assert_eq!(d.stats.kswapd_writes.file_async, 1);
    assert_eq!(d.stats.wake_kswapd_requests, 1);
}

/// The same events through the simulator's collector
/// (trace-vmscan-postprocess.pl's rules) and through the digest.
#[test]
fn digest_agrees_with_the_simulators_collector() {
    use wbsim::trace::{
        write_trace_line, ReclaimFlags, ReclaimLru, TraceEvent as Sim, TraceStatsCollector,
    };
    let file = ReclaimFlags {
        lru: ReclaimLru::File,
        sync: false,
    };
    // (task index, comm, pid, time ms, event)
    let script: Vec<(u32, &str, u32, u64, Sim)> = vec![
        (0, "kswapd0", 40, 100, Sim::KswapdWake { nid: 0, order: 0 }),
        (0, "kswapd0", 40, 150, Sim::writepage(5000, file)),
        (
            1,
            "dd",
            300,
            160,
            Sim::WakeupKswapd {
                nid: 0,
                zid: 2,
                order: 0,
                gfp: wbsim::trace::AllocGfp::PageCacheWrite,
            },
        ),
        (0, "kswapd0", 40, 200, Sim::KswapdWake { nid: 0, order: 0 }),
        (0, "kswapd0", 40, 400, Sim::KswapdSleep { nid: 0 }),
        (
            1,
            "dd",
            300,
            500,
            Sim::DirectReclaimBegin {
                order: 0,
                may_writepage: true,
                gfp: wbsim::trace::GfpMask::HighuserMovable,
                alloc: wbsim::trace::AllocGfp::PageCacheWrite,
            },
        ),
        (1, "dd", 300, 510, Sim::writepage(1048600, file)),
        (
            1,
            "dd",
            300,
            530,
            Sim::DirectReclaimEnd { nr_reclaimed: 32 },
        ),
        (0, "kswapd0", 40, 600, Sim::KswapdWake { nid: 0, order: 0 }),
        (0, "kswapd0", 40, 900, Sim::KswapdSleep { nid: 0 }),
    ];
    let mut collector = TraceStatsCollector::new();
    let mut text = String::new();
    for (task, comm, pid, ms, ev) in &script {
        let t = ms * 1_000_000;
        collector.observe(*task, *task == 0, t, ev);
        write_trace_line(
            &mut text,
            comm,
            *pid,
            0,
            t,
            ev,
            wbsim::trace::WritebackLayout::Linux3,
        );
    }
    let d = digest_trace(&text, &[], 0, ns(1.0));
    let (ours, theirs) = (d.stats, collector.totals);
    assert_eq!(ours.kswapd_wakeups, theirs.kswapd_wakeups);
    assert_eq!(ours.kswapd_awake_ns, theirs.kswapd_awake_ns);
    assert_eq!(ours.kswapd_writes, theirs.kswapd_writes);
    assert_eq!(ours.direct_writes, theirs.direct_writes);
    assert_eq!(ours.direct_reclaims, theirs.direct_reclaims);
    assert_eq!(ours.direct_stall_ns, theirs.direct_stall_ns);
    assert_eq!(ours.wake_kswapd_requests, theirs.wake_kswapd_requests);
    assert_eq!(d.kswapd.full_sleeps, 2);
}
