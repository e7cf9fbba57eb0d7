//! What the guest's ftrace text says about kswapd and reclaim writes.

use std::collections::{BTreeMap, BTreeSet};

use wbsim::trace::stats::ReclaimWrites;
use wbsim::trace::ReclaimTraceStats;

use crate::procfs::{parse_trace_marker, parse_trace_record, TraceEvent, TraceLine, ZoneInfo};

/// The `trace_marker` text that ties the trace clock to the records'
/// clock: a guest that writes `wbsim_mono_ns=<CLOCK_MONOTONIC ns>` into
/// `trace_marker` lets trace times be moved onto the records' clock.
/// Without it the two clocks are taken to be the same (ftrace's default
/// `local` clock and CLOCK_MONOTONIC both count from boot; a guest can
/// also select `mono` in `trace_clock` where the kernel has it, 3.10+).
pub const CLOCK_MARKER: &str = wbsim_guest::protocol::TRACE_CLOCK_MARKER;

/// One kswapd state change on the records' clock: `true` for
/// `mm_vmscan_kswapd_wake`, `false` for `mm_vmscan_kswapd_sleep`.
pub type KswapdTransition = (u64, bool);

/// kswapd's awake time, as the kernel-lab analysis defines it: from the
/// first `mm_vmscan_kswapd_wake` after a full sleep to the next
/// `mm_vmscan_kswapd_sleep`. 3.x emits `kswapd_wake` before every
/// `balance_pgdat()` pass, also after the short naps of
/// `kswapd_try_to_sleep()`, and `kswapd_sleep` only at the full sleep; so
/// wakes while awake extend the interval (trace-vmscan-postprocess.pl's
/// "re-wakeups"), and kswapd is taken to be asleep when the trace starts.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct KswapdAwake {
    /// Awake intervals `[from, to)` in ns, in time order, clipped to start
    /// no earlier than the window's start.
    pub intervals: Vec<(u64, u64)>,
    /// `mm_vmscan_kswapd_sleep` events in the window.
    pub full_sleeps: u64,
    /// The last interval had no sleep and was closed at the window's end.
    pub open_at_end: bool,
}

impl KswapdAwake {
    /// Σ interval lengths, ns.
    pub fn total_ns(&self) -> u64 {
        self.intervals.iter().map(|(a, b)| b - a).sum()
    }

    /// Whether kswapd was awake at `t_ns`.
    pub fn awake_at(&self, t_ns: u64) -> bool {
        self.intervals.iter().any(|&(a, b)| a <= t_ns && t_ns < b)
            || self
                .intervals
                .last()
                .is_some_and(|&(a, b)| self.open_at_end && a <= t_ns && t_ns == b)
    }
}

/// kswapd's awake intervals from its wake/sleep events (in trace order),
/// counted from `start_ns`: an interval begun earlier counts from
/// `start_ns`, one that ended earlier not at all. An interval still open
/// after the last event runs to `end_ns` (the last sample).
pub fn kswapd_awake(events: &[KswapdTransition], start_ns: u64, end_ns: u64) -> KswapdAwake {
    let mut out = KswapdAwake::default();
    let mut since: Option<u64> = None;
    let push = |out: &mut KswapdAwake, from: u64, to: u64| {
        if to > start_ns || from >= start_ns {
            let from = from.max(start_ns);
            out.intervals.push((from, to.max(from)));
        }
    };
    for &(t, wake) in events {
        if wake {
            since.get_or_insert(t);
        } else {
            if t >= start_ns {
                out.full_sleeps += 1;
            }
            if let Some(from) = since.take() {
                push(&mut out, from, t);
            }
        }
    }
    if let Some(from) = since {
        push(&mut out, from, end_ns);
        out.open_at_end = true;
    }
    out
}

/// The trace, digested.
#[derive(Debug, Clone, Default)]
pub struct TraceDigest {
    pub kswapd: KswapdAwake,
    /// The trace-vmscan-postprocess.pl totals this trace can give (see
    /// [`digest_trace`]).
    pub stats: ReclaimTraceStats,
    /// Reclaim writes (`mm_vmscan_writepage`/`write_folio` in the window)
    /// by zone suffix (`dma32`), by the zone whose pfn range holds the
    /// page; pages outside every zone are left out.
    pub writes_by_zone: BTreeMap<String, i64>,
    /// `trace_pipe`'s `[LOST n EVENTS]` reports, summed.
    pub lost_events: u64,
    /// Trace clock minus records' clock, ns, from [`CLOCK_MARKER`]; 0
    /// without it.
    pub clock_offset_ns: i64,
}

/// Read the trace text: events from `start_ns` on (the records' clock),
/// an open kswapd interval closed at `end_ns`. Totals filled in
/// [`ReclaimTraceStats`], with the meanings trace-vmscan-postprocess.pl
/// (and the simulator) give them:
/// * `kswapd_wakeups`: awake intervals (wakes after a full sleep);
///   `kswapd_awake_ns`: their total length;
/// * `kswapd_writes` / `direct_writes`: reclaim writes by kind, kswapd's
///   when the line's task is `kswapd*` or a pid that emitted
///   `mm_vmscan_kswapd_wake`/`sleep` (the comm may print as `<...>`),
///   else direct reclaim's;
/// * `direct_reclaims`: `mm_vmscan_direct_reclaim_begin` events;
///   `direct_stall_ns`: Σ (end − begin) per task;
/// * `wake_kswapd_requests`: `mm_vmscan_wakeup_kswapd` of tasks that
///   entered direct reclaim (the script counts only those).
///
/// Left 0: the scanned/reclaimed page counts (they need
/// `mm_vmscan_lru_isolate`/`lru_shrink_inactive`, whose layouts changed
/// over the versions) and the congestion-wait totals.
pub fn digest_trace(text: &str, zones: &[ZoneInfo], start_ns: u64, end_ns: u64) -> TraceDigest {
    let mut d = TraceDigest::default();
    let mut lines: Vec<TraceLine> = Vec::new();
    for line in text.lines() {
        if let Some(n) = lost_events(line) {
            d.lost_events += n;
        } else if let Some(l) = parse_trace_record(line) {
            lines.push(l);
        } else if let Some((t_s, text)) = parse_trace_marker(line) {
            let mono = text
                .split_whitespace()
                .find_map(|w| w.strip_prefix(CLOCK_MARKER)?.parse::<i64>().ok());
            if let (Some(mono), 0) = (mono, d.clock_offset_ns) {
                d.clock_offset_ns = secs_to_ns(t_s) as i64 - mono;
            }
        }
    }
    let offset = d.clock_offset_ns;
    let ns = |t_s: f64| (secs_to_ns(t_s) as i64 - offset).max(0) as u64;
    let kswapd_pids: BTreeSet<u32> = lines
        .iter()
        .filter(|l| {
            matches!(
                l.event,
                TraceEvent::KswapdWake { .. } | TraceEvent::KswapdSleep { .. }
            )
        })
        .map(|l| l.pid)
        .collect();
    let direct_pids: BTreeSet<u32> = lines
        .iter()
        .filter_map(|l| match l.event {
            TraceEvent::DirectReclaimBegin { pid, .. } => Some(pid),
            _ => None,
        })
        .collect();
    let transitions: Vec<KswapdTransition> = lines
        .iter()
        .filter_map(|l| match l.event {
            TraceEvent::KswapdWake { t_s } => Some((ns(t_s), true)),
            TraceEvent::KswapdSleep { t_s } => Some((ns(t_s), false)),
            _ => None,
        })
        .collect();
    d.kswapd = kswapd_awake(&transitions, start_ns, end_ns);
    d.stats.kswapd_wakeups = d.kswapd.intervals.len() as u64;
    d.stats.kswapd_awake_ns = d.kswapd.total_ns();
    d.stats.kswapd_sleeps = d.kswapd.full_sleeps;
    let mut begun: BTreeMap<u32, u64> = BTreeMap::new();
    for l in lines.iter().filter(|l| ns(l.t_s) >= start_ns) {
        match l.event {
            TraceEvent::Writepage {
                pfn, file, sync, ..
            } => {
                let by_kswapd = l.task_is_kswapd() || kswapd_pids.contains(&l.pid);
                let w = if by_kswapd {
                    &mut d.stats.kswapd_writes
                } else {
                    &mut d.stats.direct_writes
                };
                bump(w, file, sync);
                if let Some(z) = zones.iter().find(|z| z.contains_pfn(pfn)) {
                    *d.writes_by_zone.entry(z.suffix()).or_default() += 1;
                }
            }
            TraceEvent::DirectReclaimBegin { t_s, pid } => {
                d.stats.direct_reclaims += 1;
                begun.insert(pid, ns(t_s));
            }
            TraceEvent::DirectReclaimEnd { t_s, pid, .. } => {
                if let Some(b) = begun.remove(&pid) {
                    d.stats.direct_stall_ns += ns(t_s).saturating_sub(b);
                }
            }
            TraceEvent::WakeupKswapd { pid, .. } => {
                if direct_pids.contains(&pid) {
                    d.stats.wake_kswapd_requests += 1;
                }
            }
            TraceEvent::KswapdWake { .. } | TraceEvent::KswapdSleep { .. } => {}
        }
    }
    d
}

/// Seconds of trace time to ns.
fn secs_to_ns(t_s: f64) -> u64 {
    (t_s * 1e9).round().max(0.0) as u64
}

/// `CPU:1 [LOST 12 EVENTS]`: the 12.
fn lost_events(line: &str) -> Option<u64> {
    let rest = line.split_once("[LOST ")?.1;
    rest.split_whitespace().next()?.parse().ok()
}

/// Count one reclaim write (trace-vmscan-postprocess.pl: FILE if the flags
/// say RECLAIM_WB_FILE, SYNC if RECLAIM_WB_SYNC).
fn bump(w: &mut ReclaimWrites, file: bool, sync: bool) {
    match (file, sync) {
        (true, false) => w.file_async += 1,
        (false, false) => w.anon_async += 1,
        (true, true) => w.file_sync += 1,
        (false, true) => w.anon_sync += 1,
    }
}
