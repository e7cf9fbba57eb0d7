//! A pseudo-random but deterministic trace for checking
//! [`TraceStatsCollector`] against `trace-vmscan-postprocess.pl` itself.
//!
//! `WBSIM_TRACE_EXPORT_DIR=/tmp/x cargo test -p wbsim --lib trace::synthetic`
//! writes `trace.txt` (3.0 format), `summary.txt` (our totals in the
//! script's "Summary" layout, 3.0 `isolate_mode` semantics),
//! `summary-isolate-3.2.txt` (the same with the 3.2+ reading of
//! `isolate_mode`, which later copies of the script use) and
//! `congestion.txt` and `totals.json` (the raw [`ReclaimTraceStats`]).
//!
//! [`ReclaimTraceStats`]: super::stats::ReclaimTraceStats

use super::event::{GfpMask, IsolateMode, ReclaimFlags, ReclaimLru, TraceEvent};
use super::format::{write_trace_header, write_trace_line};
use super::stats::TraceStatsCollector;

#[derive(Clone, Copy, PartialEq)]
enum Kind {
    Kswapd,
    Direct,
    /// Only wakes kswapd and waits on congestion.
    Waker,
    /// Direct reclaimer whose first event is a `direct_reclaim_end`.
    LateStart,
}

struct Task {
    comm: &'static str,
    pid: u32,
    kind: Kind,
    /// kswapd awake / direct reclaimer inside reclaim.
    active: bool,
    started: bool,
}

struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }
    fn below(&mut self, n: u64) -> u64 {
        self.next() % n
    }
}

/// The synthetic trace text and the collectors fed with the same events
/// (the second one reading `isolate_mode` as 3.2+ scripts do).
pub(crate) struct Synthetic {
    pub text: String,
    pub stats: TraceStatsCollector,
    pub stats_isolate_3_2: TraceStatsCollector,
}

fn flags(rng: &mut Rng) -> ReclaimFlags {
    let lru = match rng.below(5) {
        0 | 1 => ReclaimLru::File,
        2 | 3 => ReclaimLru::Anon,
        _ => ReclaimLru::Mixed,
    };
    ReclaimFlags {
        lru,
        sync: rng.below(3) == 0,
    }
}

/// One reclaim-work event (isolate, shrink, writepage or a wait).
fn work_event(rng: &mut Rng) -> TraceEvent {
    match rng.below(10) {
        0..=3 => {
            let isolate_mode = match rng.below(4) {
                0 | 1 => IsolateMode::Inactive,
                2 => IsolateMode::Active,
                _ => IsolateMode::Both,
            };
            let nr_scanned = rng.below(200);
            TraceEvent::LruIsolate {
                isolate_mode,
                order: rng.below(4) as u32,
                nr_requested: 32,
                nr_scanned,
                nr_taken: nr_scanned / 2,
                contig_taken: rng.below(3),
                contig_dirty: rng.below(3),
                contig_failed: rng.below(3),
                classzone: 0,
                nr_skipped: 0,
                lru: crate::trace::LruName::InactiveFile,
            }
        }
        4 | 5 => TraceEvent::LruShrinkInactive {
            nid: 0,
            zid: rng.below(3) as u32,
            nr_scanned: 32,
            nr_reclaimed: rng.below(33),
            priority: rng.below(13) as u32,
            flags: flags(rng),
            nr_skipped: 0,
            stat: crate::trace::ShrinkStat::default(),
        },
        6 | 7 => TraceEvent::writepage(rng.below(1 << 22), flags(rng)),
        8 => TraceEvent::CongestionWait {
            usec_timeout: 100_000,
            usec_delayed: [0, 4_000, 100_000, 104_000][rng.below(4) as usize],
        },
        _ => TraceEvent::WaitIffCongested {
            usec_timeout: 100_000,
            usec_delayed: [0, 0, 100_000][rng.below(3) as usize],
        },
    }
}

fn next_event(t: &mut Task, rng: &mut Rng) -> TraceEvent {
    let wakeup = TraceEvent::WakeupKswapd {
        nid: rng.below(2) as u32,
        zid: rng.below(3) as u32,
        order: rng.below(4) as u32,
        gfp: crate::trace::AllocGfp::PageCacheWrite,
    };
    match t.kind {
        Kind::Kswapd => {
            let nid = u32::from(t.comm == "kswapd1");
            if !t.started && t.comm == "kswapd0" {
                // Sleeping without a prior wake (the script's quirk).
                t.started = true;
                return TraceEvent::KswapdSleep { nid };
            }
            t.started = true;
            if !t.active || rng.below(12) == 0 {
                t.active = true;
                return TraceEvent::KswapdWake {
                    nid,
                    order: rng.below(3) as u32,
                };
            }
            if rng.below(15) == 0 {
                t.active = false;
                return TraceEvent::KswapdSleep { nid };
            }
            work_event(rng)
        }
        Kind::Waker => {
            if rng.below(2) == 0 {
                wakeup
            } else {
                work_event(rng)
            }
        }
        Kind::Direct | Kind::LateStart => {
            if t.kind == Kind::LateStart && !t.started {
                t.started = true;
                return TraceEvent::DirectReclaimEnd { nr_reclaimed: 3 };
            }
            if !t.active {
                if rng.below(3) == 0 {
                    return wakeup;
                }
                if rng.below(4) == 0 {
                    // Work outside reclaim, counted once the task qualifies.
                    return work_event(rng);
                }
                t.active = true;
                let gfp = [
                    GfpMask::HighuserMovable,
                    GfpMask::User,
                    GfpMask::Kernel,
                    GfpMask::Nofs,
                ][rng.below(4) as usize];
                return TraceEvent::DirectReclaimBegin {
                    order: rng.below(4) as u32,
                    may_writepage: rng.below(2) == 0,
                    gfp,
                    alloc: crate::trace::AllocGfp::PageCacheWrite,
                };
            }
            if rng.below(8) == 0 {
                t.active = false;
                return TraceEvent::DirectReclaimEnd {
                    nr_reclaimed: rng.below(64),
                };
            }
            work_event(rng)
        }
    }
}

/// `isolate_mode` as a 3.2+ script reads a 3.0 value: it skips 2 (3.0's
/// `ISOLATE_BOTH`) instead of 1 (`ISOLATE_ACTIVE`). Swapping the two lets
/// the 3.0 collector compute that reading.
fn as_read_by_3_2(mut ev: TraceEvent) -> TraceEvent {
    if let TraceEvent::LruIsolate { isolate_mode, .. } = &mut ev {
        *isolate_mode = match *isolate_mode {
            IsolateMode::Active => IsolateMode::Both,
            IsolateMode::Both => IsolateMode::Active,
            IsolateMode::Inactive => IsolateMode::Inactive,
        };
    }
    ev
}

pub(crate) fn generate(events: usize, seed: u64) -> Synthetic {
    let mut tasks = [
        Task::new("kswapd0", 38, Kind::Kswapd),
        Task::new("kswapd1", 39, Kind::Kswapd),
        Task::new("dd", 3001, Kind::Direct),
        Task::new("dd", 3002, Kind::Direct),
        Task::new("memhog", 3100, Kind::Direct),
        Task::new("post-master", 3200, Kind::Direct),
        Task::new("bash", 2990, Kind::Waker),
        Task::new("cc1", 4000, Kind::LateStart),
    ];
    let mut rng = Rng(seed | 1);
    let mut out = Synthetic {
        text: String::with_capacity(events * 140),
        stats: TraceStatsCollector::new(),
        stats_isolate_3_2: TraceStatsCollector::new(),
    };
    write_trace_header(&mut out.text);
    let mut ts_ns: u64 = 2_000_000_000;
    for _ in 0..events {
        // Sub-microsecond jitter exercises ns2usecs rounding.
        ts_ns += 1 + rng.below(3_000_000);
        let id = rng.below(tasks.len() as u64) as usize;
        let task = &mut tasks[id];
        let ev = next_event(task, &mut rng);
        let cpu = rng.below(4) as u32;
        let layout = crate::trace::WritebackLayout::Linux3;
        write_trace_line(&mut out.text, task.comm, task.pid, cpu, ts_ns, &ev, layout);
        let is_kswapd = task.kind == Kind::Kswapd;
        out.stats.observe(id as u32, is_kswapd, ts_ns, &ev);
        out.stats_isolate_3_2
            .observe(id as u32, is_kswapd, ts_ns, &as_read_by_3_2(ev));
    }
    out
}

impl Task {
    fn new(comm: &'static str, pid: u32, kind: Kind) -> Task {
        Task {
            comm,
            pid,
            kind,
            active: false,
            started: false,
        }
    }
}

#[test]
fn export_for_perl() {
    let syn = generate(20_000, 0x5eed);
    let t = &syn.stats.totals;
    assert!(t.direct_reclaims > 0 && t.kswapd_wakeups > 0);
    assert!(t.direct_writes.total() > 0 && t.kswapd_writes.total() > 0);
    assert_ne!(
        t.direct_pages_scanned,
        syn.stats_isolate_3_2.totals.direct_pages_scanned
    );
    let Some(dir) = std::env::var_os("WBSIM_TRACE_EXPORT_DIR") else {
        return;
    };
    let dir = std::path::PathBuf::from(dir);
    let mut summary = String::new();
    t.write_vmscan_summary(&mut summary);
    let mut summary_3_2 = String::new();
    syn.stats_isolate_3_2
        .totals
        .write_vmscan_summary(&mut summary_3_2);
    let congestion = format!(
        "direct congestion_wait {:?}\ndirect wait_iff_congested {:?}\n\
         kswapd congestion_wait {:?}\nkswapd wait_iff_congested {:?}\n",
        t.direct_congestion_wait,
        t.direct_wait_iff_congested,
        t.kswapd_congestion_wait,
        t.kswapd_wait_iff_congested
    );
    std::fs::write(dir.join("trace.txt"), &syn.text).unwrap();
    std::fs::write(dir.join("summary.txt"), summary).unwrap();
    std::fs::write(dir.join("summary-isolate-3.2.txt"), summary_3_2).unwrap();
    std::fs::write(dir.join("congestion.txt"), congestion).unwrap();
    let json = serde_json::to_string_pretty(t).unwrap();
    std::fs::write(dir.join("totals.json"), json).unwrap();
}
