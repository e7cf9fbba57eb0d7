//! Totals of the vmscan and writeback tracepoints, as Mel Gorman's
//! `trace-vmscan-postprocess.pl` and mmtests' congestion report compute
//! them from an ftrace log. The engine feeds every trace event here
//! (whether or not a trace file is written), so `wbsim compare` can print
//! the "FTrace Reclaim Statistics" sections without a log.

use super::context::trace_usecs;
use super::event::{IsolateMode, ReclaimLru, TraceEvent};

/// Reclaim writes by kind (`mm_vmscan_writepage` flags).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, serde::Serialize)]
pub struct ReclaimWrites {
    pub file_async: u64,
    pub anon_async: u64,
    pub file_sync: u64,
    pub anon_sync: u64,
}

/// `writeback_congestion_wait` / `writeback_wait_iff_congested` totals for
/// one kind of waiter.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, serde::Serialize)]
pub struct WaitTotals {
    /// Number of waits.
    pub number: u64,
    /// Sum of `usec_delayed`, in microseconds.
    pub delayed_us: u64,
    /// Waits that slept their whole timeout (`usec_delayed >= usec_timeout`).
    pub full: u64,
}

/// Everything the "FTrace Reclaim Statistics: vmscan" and
/// "FTrace Reclaim Statistics: congestion_wait" sections print.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, serde::Serialize)]
pub struct ReclaimTraceStats {
    /// `mm_vmscan_direct_reclaim_begin` events.
    pub direct_reclaims: u64,
    /// Σ `nr_scanned` of `mm_vmscan_lru_isolate` by direct reclaimers.
    pub direct_pages_scanned: u64,
    /// Σ `nr_reclaimed` of `mm_vmscan_lru_shrink_inactive` by direct reclaimers.
    pub direct_pages_reclaimed: u64,
    pub direct_writes: ReclaimWrites,
    /// `mm_vmscan_wakeup_kswapd` events.
    pub wake_kswapd_requests: u64,
    /// `mm_vmscan_kswapd_wake` events.
    pub kswapd_wakeups: u64,
    pub kswapd_pages_scanned: u64,
    pub kswapd_pages_reclaimed: u64,
    pub kswapd_writes: ReclaimWrites,
    /// `mm_vmscan_kswapd_sleep` events: kswapd's full sleeps (its short
    /// naps between balancing runs do not fire it).
    pub kswapd_sleeps: u64,
    /// Σ (direct_reclaim_end − direct_reclaim_begin), ns.
    pub direct_stall_ns: u64,
    /// Σ (kswapd_sleep − kswapd_wake), ns.
    pub kswapd_awake_ns: u64,
    pub direct_congestion_wait: WaitTotals,
    pub direct_wait_iff_congested: WaitTotals,
    pub kswapd_congestion_wait: WaitTotals,
    pub kswapd_wait_iff_congested: WaitTotals,
}

impl ReclaimWrites {
    /// Count one `mm_vmscan_writepage` of the given kind.
    fn bump(&mut self, file: bool, sync: bool) {
        match (file, sync) {
            (true, false) => self.file_async += 1,
            (false, false) => self.anon_async += 1,
            (true, true) => self.file_sync += 1,
            (false, true) => self.anon_sync += 1,
        }
    }

    fn add(&mut self, other: &ReclaimWrites) {
        self.file_async += other.file_async;
        self.anon_async += other.anon_async;
        self.file_sync += other.file_sync;
        self.anon_sync += other.anon_sync;
    }

    /// All reclaim writes.
    pub fn total(&self) -> u64 {
        self.file_async + self.anon_async + self.file_sync + self.anon_sync
    }
}

impl WaitTotals {
    /// Count one wait of `usec_delayed` out of `usec_timeout`.
    pub fn record(&mut self, usec_timeout: u32, usec_delayed: u32) {
        self.number += 1;
        self.delayed_us += u64::from(usec_delayed);
        if usec_delayed >= usec_timeout {
            self.full += 1;
        }
    }
}

impl ReclaimTraceStats {
    /// Append the "Summary" block `trace-vmscan-postprocess.pl` prints at
    /// the end of its report, with these totals (where the script prints
    /// an empty value because no task qualified, this prints 0).
    pub fn write_vmscan_summary(&self, out: &mut String) {
        use std::fmt::Write;
        let secs = |ns: u64| ns as f64 / 1e9;
        let d = &self.direct_writes;
        let k = &self.kswapd_writes;
        // fmt::Write for String never fails.
        let _ = write!(
            out,
            "Summary\n\
             Direct reclaims:     \t\t\t{}\n\
             Direct reclaim pages scanned:\t\t{}\n\
             Direct reclaim pages reclaimed:\t\t{}\n\
             Direct reclaim write file sync I/O:\t{}\n\
             Direct reclaim write anon sync I/O:\t{}\n\
             Direct reclaim write file async I/O:\t{}\n\
             Direct reclaim write anon async I/O:\t{}\n\
             Wake kswapd requests:\t\t\t{}\n\
             Time stalled direct reclaim: \t\t{:.2} seconds\n\
             \n\
             Kswapd wakeups:\t\t\t\t{}\n\
             Kswapd pages scanned:\t\t\t{}\n\
             Kswapd pages reclaimed:\t\t\t{}\n\
             Kswapd reclaim write file sync I/O:\t{}\n\
             Kswapd reclaim write anon sync I/O:\t{}\n\
             Kswapd reclaim write file async I/O:\t{}\n\
             Kswapd reclaim write anon async I/O:\t{}\n\
             Time kswapd awake:\t\t\t{:.2} seconds\n",
            self.direct_reclaims,
            self.direct_pages_scanned,
            self.direct_pages_reclaimed,
            d.file_sync,
            d.anon_sync,
            d.file_async,
            d.anon_async,
            self.wake_kswapd_requests,
            secs(self.direct_stall_ns),
            self.kswapd_wakeups,
            self.kswapd_pages_scanned,
            self.kswapd_pages_reclaimed,
            k.file_sync,
            k.anon_sync,
            k.file_async,
            k.anon_async,
            secs(self.kswapd_awake_ns),
        );
    }
}

/// What `trace-vmscan-postprocess.pl` keeps per process (its
/// `%perprocesspid` entry), reduced to what its totals use.
#[derive(Debug, Clone, Copy, Default)]
struct TaskTally {
    /// `MM_VMSCAN_DIRECT_RECLAIM_BEGIN`: > 0 makes the task a direct
    /// reclaimer in the totals.
    direct_begins: u64,
    /// `MM_VMSCAN_KSWAPD_WAKE` (wakes while asleep): > 0 makes the task a
    /// kswapd instance in the totals.
    kswapd_wakes: u64,
    /// `MM_VMSCAN_WAKEUP_KSWAPD`.
    wakeup_requests: u64,
    /// `HIGH_NR_SCANNED`.
    scanned: u64,
    /// `HIGH_NR_RECLAIMED`.
    reclaimed: u64,
    writes: ReclaimWrites,
    /// `STATE_DIRECT_BEGIN` in trace microseconds; never cleared.
    direct_begin_us: Option<u64>,
    /// The task's first `direct_reclaim_end` came before any begin: its
    /// latency list starts with a hole and the script skips all of it.
    direct_latency_lost: bool,
    /// `STATE_KSWAPD_BEGIN` in trace microseconds; 0 means asleep.
    kswapd_awake_since_us: u64,
}

/// Accumulates [`ReclaimTraceStats`] from trace events exactly as Mel
/// Gorman's `Documentation/trace/postprocess/trace-vmscan-postprocess.pl`
/// (Linux 3.0 version) totals them from the text log, plus the congestion
/// wait totals mmtests reports.
///
/// The script classifies processes by the events they emit, not by name:
/// a process counts as a direct reclaimer if it ever emitted
/// `mm_vmscan_direct_reclaim_begin`, and as a kswapd instance if it ever
/// emitted an `mm_vmscan_kswapd_wake` while asleep; its scanned, reclaimed,
/// write and (for direct reclaimers) `mm_vmscan_wakeup_kswapd` counts go to
/// that side's totals, including events it emitted before it qualified.
/// Events of processes that never qualify (e.g. a task that only wakes
/// kswapd) are not in the totals. Details reproduced:
/// * scanned = Σ `nr_scanned` of `mm_vmscan_lru_isolate` except
///   `isolate_mode=1` (3.0's `ISOLATE_ACTIVE`: rotation);
/// * reclaimed = Σ `nr_reclaimed` of `mm_vmscan_lru_shrink_inactive`;
/// * a kswapd wake while already awake is a "re-wakeup", not a wakeup;
/// * kswapd awake time = Σ (sleep − last counted wake); a sleep while
///   already asleep adds its absolute timestamp (the script subtracts 0);
/// * stall time = Σ (end − last begin) per task, dropped entirely for a
///   task whose first end preceded its first begin;
/// * times use the printed, microsecond-rounded timestamps.
///
/// Not reproduced: tasks that are both direct reclaimers and kswapd with
/// latencies of both kinds (the script interleaves the two lists by index).
///
/// Congestion waits (`writeback_congestion_wait`,
/// `writeback_wait_iff_congested`) are split by the `is_kswapd` argument;
/// the vmscan totals ignore it.
#[derive(Debug, Clone, Default)]
pub struct TraceStatsCollector {
    pub totals: ReclaimTraceStats,
    /// Indexed by task number; grows only to the largest task seen.
    tasks: Vec<TaskTally>,
}

impl TraceStatsCollector {
    pub fn new() -> Self {
        Self::default()
    }

    /// Account one event emitted by `task` at `ts_ns` (trace clock).
    /// `task` must map one-to-one to the comm-pid the trace line shows.
    pub fn observe(&mut self, task: u32, is_kswapd: bool, ts_ns: u64, ev: &TraceEvent) {
        let idx = task as usize;
        if idx >= self.tasks.len() {
            self.tasks.resize(idx + 1, TaskTally::default());
        }
        let t = &mut self.tasks[idx];
        let tot = &mut self.totals;
        let us = trace_usecs(ts_ns);
        let direct = t.direct_begins > 0;
        let kswapd = t.kswapd_wakes > 0;
        match *ev {
            TraceEvent::DirectReclaimBegin { .. } => {
                if !direct {
                    tot.direct_pages_scanned += t.scanned;
                    tot.direct_pages_reclaimed += t.reclaimed;
                    tot.direct_writes.add(&t.writes);
                    tot.wake_kswapd_requests += t.wakeup_requests;
                }
                t.direct_begins += 1;
                tot.direct_reclaims += 1;
                t.direct_begin_us = Some(us);
            }
            TraceEvent::DirectReclaimEnd { .. } => match t.direct_begin_us {
                Some(begin) if !t.direct_latency_lost => {
                    tot.direct_stall_ns += us.saturating_sub(begin) * 1000;
                }
                Some(_) => {}
                None => t.direct_latency_lost = true,
            },
            TraceEvent::KswapdWake { .. } => {
                if t.kswapd_awake_since_us == 0 {
                    if !kswapd {
                        tot.kswapd_pages_scanned += t.scanned;
                        tot.kswapd_pages_reclaimed += t.reclaimed;
                        tot.kswapd_writes.add(&t.writes);
                    }
                    t.kswapd_wakes += 1;
                    tot.kswapd_wakeups += 1;
                    t.kswapd_awake_since_us = us;
                }
            }
            TraceEvent::KswapdSleep { .. } => {
                tot.kswapd_sleeps += 1;
                tot.kswapd_awake_ns += us.saturating_sub(t.kswapd_awake_since_us) * 1000;
                t.kswapd_awake_since_us = 0;
            }
            TraceEvent::WakeupKswapd { .. } => {
                t.wakeup_requests += 1;
                if direct {
                    tot.wake_kswapd_requests += 1;
                }
            }
            TraceEvent::LruIsolate {
                isolate_mode,
                nr_scanned,
                ..
            } => {
                if isolate_mode != IsolateMode::Active {
                    t.scanned += nr_scanned;
                    if direct {
                        tot.direct_pages_scanned += nr_scanned;
                    }
                    if kswapd {
                        tot.kswapd_pages_scanned += nr_scanned;
                    }
                }
            }
            TraceEvent::LruShrinkInactive { nr_reclaimed, .. } => {
                t.reclaimed += nr_reclaimed;
                if direct {
                    tot.direct_pages_reclaimed += nr_reclaimed;
                }
                if kswapd {
                    tot.kswapd_pages_reclaimed += nr_reclaimed;
                }
            }
            TraceEvent::Writepage { flags, .. } => {
                // The script tests the text for RECLAIM_WB_FILE and
                // RECLAIM_WB_SYNC; anything else counts as anon / async.
                let file = flags.lru == ReclaimLru::File;
                t.writes.bump(file, flags.sync);
                if direct {
                    tot.direct_writes.bump(file, flags.sync);
                }
                if kswapd {
                    tot.kswapd_writes.bump(file, flags.sync);
                }
            }
            TraceEvent::CongestionWait {
                usec_timeout,
                usec_delayed,
            } => {
                let w = if is_kswapd {
                    &mut tot.kswapd_congestion_wait
                } else {
                    &mut tot.direct_congestion_wait
                };
                w.record(usec_timeout, usec_delayed);
            }
            TraceEvent::WaitIffCongested {
                usec_timeout,
                usec_delayed,
            } => {
                let w = if is_kswapd {
                    &mut tot.kswapd_wait_iff_congested
                } else {
                    &mut tot.direct_wait_iff_congested
                };
                w.record(usec_timeout, usec_delayed);
            }
            // The script reads no writeback-throttling or page-allocator event.
            TraceEvent::GlobalDirtyState(_)
            | TraceEvent::BdiDirtyRatelimit(_)
            | TraceEvent::BalanceDirtyPages(_)
            | TraceEvent::PageAllocExtfrag(_) => {}
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::trace::event::{GfpMask, ReclaimFlags};

    const MS: u64 = 1_000_000;

    fn isolate(mode: IsolateMode, nr_scanned: u64) -> TraceEvent {
        TraceEvent::LruIsolate {
            isolate_mode: mode,
            order: 0,
            nr_requested: 32,
            nr_scanned,
            nr_taken: nr_scanned,
            contig_taken: 0,
            contig_dirty: 0,
            contig_failed: 0,
            classzone: 0,
            nr_skipped: 0,
            lru: crate::trace::LruName::InactiveFile,
        }
    }

    fn shrink(nr_reclaimed: u64) -> TraceEvent {
        TraceEvent::LruShrinkInactive {
            nid: 0,
            zid: 1,
            nr_scanned: 32,
            nr_reclaimed,
            priority: 12,
            flags: ReclaimFlags {
                lru: ReclaimLru::File,
                sync: false,
            },
            nr_skipped: 0,
            stat: crate::trace::ShrinkStat::default(),
        }
    }

    fn write(lru: ReclaimLru, sync: bool) -> TraceEvent {
        TraceEvent::writepage(100, ReclaimFlags { lru, sync })
    }

    const BEGIN: TraceEvent = TraceEvent::DirectReclaimBegin {
        order: 0,
        may_writepage: true,
        gfp: GfpMask::HighuserMovable,
        alloc: crate::trace::AllocGfp::PageCacheWrite,
    };
    const END: TraceEvent = TraceEvent::DirectReclaimEnd { nr_reclaimed: 20 };
    const WAKEUP: TraceEvent = TraceEvent::WakeupKswapd {
        nid: 0,
        zid: 2,
        order: 0,
        gfp: crate::trace::AllocGfp::PageCacheWrite,
    };
    const WAKE: TraceEvent = TraceEvent::KswapdWake { nid: 0, order: 0 };
    const SLEEP: TraceEvent = TraceEvent::KswapdSleep { nid: 0 };

    #[test]
    fn accumulates_like_the_script() {
        const KSWAPD: u32 = 0;
        const DD: u32 = 1;
        const BASH: u32 = 2;
        const CC1: u32 = 3;
        let mut c = TraceStatsCollector::new();
        let seq: &[(u32, u64, TraceEvent)] = &[
            (KSWAPD, 5 * MS, SLEEP), // asleep already: adds 5 ms
            (BASH, 10 * MS, WAKEUP), // never direct-reclaims: not counted
            (KSWAPD, 10 * MS, WAKE),
            (KSWAPD, 11 * MS, isolate(IsolateMode::Inactive, 32)),
            (KSWAPD, 11 * MS, isolate(IsolateMode::Active, 100)), // rotation
            (KSWAPD, 12 * MS, write(ReclaimLru::File, false)),
            (KSWAPD, 12 * MS, shrink(30)),
            (KSWAPD, 13 * MS, WAKE),                      // re-wakeup
            (DD, 20 * MS, write(ReclaimLru::Anon, true)), // folded in at begin
            (DD, 20 * MS, WAKEUP),                        // folded in at begin
            (DD, 21 * MS, BEGIN),
            (DD, 22 * MS, isolate(IsolateMode::Both, 64)),
            (DD, 22 * MS, shrink(20)),
            (DD, 23 * MS, WAKEUP),
            (DD, 25 * MS, END),
            (KSWAPD, 30 * MS, SLEEP), // awake 20 ms
            (KSWAPD, 31 * MS, SLEEP), // asleep already: adds 31 ms
            (CC1, 40 * MS, END),      // before any begin: cc1's stalls are lost
            (CC1, 41 * MS, BEGIN),
            (CC1, 45 * MS, END),
        ];
        for &(task, ts, ev) in seq {
            c.observe(task, task == KSWAPD, ts, &ev);
        }
        let cw = |usec_timeout, usec_delayed| TraceEvent::CongestionWait {
            usec_timeout,
            usec_delayed,
        };
        let wic = |usec_timeout, usec_delayed| TraceEvent::WaitIffCongested {
            usec_timeout,
            usec_delayed,
        };
        c.observe(DD, false, 50 * MS, &cw(100_000, 100_000));
        c.observe(DD, false, 51 * MS, &cw(100_000, 4_000));
        c.observe(DD, false, 52 * MS, &wic(100_000, 100_001));
        c.observe(KSWAPD, true, 53 * MS, &wic(100_000, 0));
        c.observe(KSWAPD, true, 54 * MS, &cw(20_000, 30_000));

        let expected = ReclaimTraceStats {
            direct_reclaims: 2,
            direct_pages_scanned: 64,
            direct_pages_reclaimed: 20,
            direct_writes: ReclaimWrites {
                anon_sync: 1,
                ..Default::default()
            },
            wake_kswapd_requests: 2,
            kswapd_wakeups: 1,
            kswapd_pages_scanned: 32,
            kswapd_pages_reclaimed: 30,
            kswapd_writes: ReclaimWrites {
                file_async: 1,
                ..Default::default()
            },
            direct_stall_ns: 4 * MS,
            kswapd_awake_ns: 56 * MS,
            kswapd_sleeps: 3,
            direct_congestion_wait: WaitTotals {
                number: 2,
                delayed_us: 104_000,
                full: 1,
            },
            direct_wait_iff_congested: WaitTotals {
                number: 1,
                delayed_us: 100_001,
                full: 1,
            },
            kswapd_congestion_wait: WaitTotals {
                number: 1,
                delayed_us: 30_000,
                full: 1,
            },
            kswapd_wait_iff_congested: WaitTotals {
                number: 1,
                delayed_us: 0,
                full: 0,
            },
        };
        assert_eq!(c.totals, expected);
        assert_eq!(c.tasks.len(), 4);
    }

    #[test]
    fn stall_uses_rounded_microseconds() {
        let mut c = TraceStatsCollector::new();
        // Printed as 0.000001 and 0.000003: 2 us, not 1.002 us.
        c.observe(5, false, 1_499, &BEGIN);
        c.observe(5, false, 2_501, &END);
        assert_eq!(c.totals.direct_stall_ns, 2_000);
        assert_eq!(c.tasks.len(), 6);
    }

    #[test]
    fn summary_text() {
        let stats = ReclaimTraceStats {
            direct_reclaims: 3,
            direct_stall_ns: 1_234_567_890,
            kswapd_awake_ns: 5_000_000,
            ..Default::default()
        };
        let mut s = String::new();
        stats.write_vmscan_summary(&mut s);
        assert!(
            s.starts_with("Summary\nDirect reclaims:     \t\t\t3\n"),
            "{s}"
        );
        assert!(s.contains("Time stalled direct reclaim: \t\t1.23 seconds\n\nKswapd wakeups:"));
        assert!(s.ends_with("Time kswapd awake:\t\t\t0.01 seconds\n"), "{s}");
        assert_eq!(s.lines().count(), 19);
    }
}
