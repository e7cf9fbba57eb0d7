//! ftrace `trace_pipe` lines of the vmscan tracepoints.
//!
//! Line layout (kernel/trace/trace_output.c, `trace_print_context()`):
//! 3.2 prints `"%16s-%-5d [%03d] %5lu.%06lu: "` (comm, pid, cpu, seconds,
//! microseconds; no irq-flags column), e.g.
//! `         kswapd0-292   [001]    81.071000: mm_vmscan_kswapd_wake: nid=0 order=0`;
//! later kernels pad the pid wider, may add a `(tgid)` column
//! (`record-tgid` option) and print the irq-info flags (`....` on 3.x with
//! that option, `.....` on 6.x) between the cpu and the timestamp, e.g.
//! `         kswapd0-45      [000] .....    12.345678: mm_vmscan_kswapd_wake: nid=0 order=0`.
//! The comm is `<...>` when the pid's name was not cached. Then comes the
//! event name, `: ` and the event's `TP_printk` text. (3.2: read in
//! `fc86-linux-3.2.7/kernel/trace/trace_output.c` of `me-oss/86-linux-3.2.7`;
//! 6.x: `"%16s-%-7d "`, `"(%7d) "` with `record-tgid`, `"[%03d] "`,
//! `trace_print_lat_fmt()` with `irq-info`, `" %5lu.%06lu"`, `": "` in
//! torvalds/linux `kernel/trace/trace_output.c`.) Timestamps are read as
//! seconds: the guest must keep a trace clock that ftrace prints in
//! seconds (`local`, `global`, `mono`), not `counter` or `x86-tsc`, which
//! print raw integers.
//!
//! `TP_printk` formats, from include/trace/events/vmscan.h:
//!
//! | event | 3.2 (read at 3.2.7: `fc86-linux-3.2.7/include/trace/events/vmscan.h` of `me-oss/86-linux-3.2.7`; no 3.2.4 tree was to be had, and the parser does not depend on the stable updates leaving it alone) | 6.1 |
//! |---|---|---|
//! | `mm_vmscan_kswapd_sleep` | `nid=%d` | `nid=%d` |
//! | `mm_vmscan_kswapd_wake` | `nid=%d order=%d` | `nid=%d order=%d` (4.8 added `zid=%d`, Yafang Shao's "mm: vmscan: drop zone id from kswapd tracepoints" (2019) took it out of the text again; as in the 5.10-based `freak07/Kirisakura_Raviole` and mainline) |
//! | `mm_vmscan_wakeup_kswapd` | `nid=%d zid=%d order=%d` | `nid=%d order=%d gfp_flags=%s` |
//! | `mm_vmscan_direct_reclaim_begin` | `order=%d may_writepage=%d gfp_flags=%s` | `order=%d gfp_flags=%s` |
//! | `mm_vmscan_direct_reclaim_end` | `nr_reclaimed=%lu` | `nr_reclaimed=%lu` |
//! | `mm_vmscan_writepage` | `page=%p pfn=%lu flags=%s` | renamed `mm_vmscan_write_folio` (Matthew Wilcox, "mm/vmscan: Convert pageout() to take a folio", 2022; present in 5.19 and 6.2 per `DepSurf/function`): `page=%p pfn=0x%lx flags=%s` |
//!
//! `flags` is `show_reclaim_flags()`: `RECLAIM_WB_ANON` or
//! `RECLAIM_WB_FILE` (or `RECLAIM_WB_MIXED`), `|`, `RECLAIM_WB_SYNC` or
//! `RECLAIM_WB_ASYNC` (6.x: always ASYNC). Both pfn forms (decimal, `0x`
//! hex) and both names of the write event are read; zid and gfp_flags are
//! optional. The memcg variants (`mm_vmscan_memcg_reclaim_*`) are not
//! global reclaim and are ignored, as is every other line.

/// One vmscan tracepoint hit. `t_s` is the trace timestamp in seconds.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum TraceEvent {
    /// `mm_vmscan_kswapd_wake` of node 0: kswapd starts a `balance_pgdat()`
    /// pass (on 3.x before every pass, also after a short nap).
    KswapdWake { t_s: f64 },
    /// `mm_vmscan_kswapd_sleep` of node 0: kswapd goes to its full sleep.
    KswapdSleep { t_s: f64 },
    /// `mm_vmscan_wakeup_kswapd`: task `pid` asks kswapd to run; `zid` only
    /// where the kernel prints it (3.x, and 4.x before the zid was dropped
    /// from the text).
    WakeupKswapd {
        t_s: f64,
        pid: u32,
        zid: Option<u32>,
        order: u32,
    },
    /// `mm_vmscan_writepage` / `mm_vmscan_write_folio`: reclaim wrote the
    /// page at `pfn`.
    Writepage {
        t_s: f64,
        pfn: u64,
        file: bool,
        sync: bool,
    },
    /// `mm_vmscan_direct_reclaim_begin` in task `pid`.
    DirectReclaimBegin { t_s: f64, pid: u32 },
    /// `mm_vmscan_direct_reclaim_end` in task `pid`.
    DirectReclaimEnd {
        t_s: f64,
        pid: u32,
        nr_reclaimed: u64,
    },
}

impl TraceEvent {
    /// The trace timestamp, seconds.
    pub fn t_s(&self) -> f64 {
        match *self {
            TraceEvent::KswapdWake { t_s }
            | TraceEvent::KswapdSleep { t_s }
            | TraceEvent::WakeupKswapd { t_s, .. }
            | TraceEvent::Writepage { t_s, .. }
            | TraceEvent::DirectReclaimBegin { t_s, .. }
            | TraceEvent::DirectReclaimEnd { t_s, .. } => t_s,
        }
    }
}

/// A parsed trace line: who emitted the event, where and when.
#[derive(Debug, Clone, PartialEq)]
pub struct TraceLine {
    /// The comm as printed (`kswapd0`, `dd`, `<...>`), padding removed.
    pub task: String,
    pub pid: u32,
    pub cpu: u32,
    pub t_s: f64,
    pub event: TraceEvent,
}

impl TraceLine {
    /// The line's task is a kswapd thread by name (`kswapd0`, ...).
    pub fn task_is_kswapd(&self) -> bool {
        self.task.starts_with("kswapd")
    }
}

/// The event of one trace line; `None` for lines of other events, of other
/// nodes' kswapd, comments and anything unreadable.
pub fn parse_trace_line(line: &str) -> Option<TraceEvent> {
    parse_trace_record(line).map(|l| l.event)
}

/// As [`parse_trace_line`], with the task, pid and cpu of the line.
pub fn parse_trace_record(line: &str) -> Option<TraceLine> {
    let raw = split_line(line)?;
    let t_s = raw.t_s;
    let args = |key: &str| arg(raw.args, key);
    let num = |key: &str| args(key).and_then(|v| v.parse::<u64>().ok());
    let node0 = || num("nid").unwrap_or(0) == 0;
    let event = match raw.event {
        "mm_vmscan_kswapd_wake" if node0() => TraceEvent::KswapdWake { t_s },
        "mm_vmscan_kswapd_sleep" if node0() => TraceEvent::KswapdSleep { t_s },
        "mm_vmscan_wakeup_kswapd" => TraceEvent::WakeupKswapd {
            t_s,
            pid: raw.pid,
            zid: num("zid").map(|z| z as u32),
            order: num("order").unwrap_or(0) as u32,
        },
        "mm_vmscan_writepage" | "mm_vmscan_write_folio" => {
            let pfn = args("pfn")?;
            let pfn = match pfn.strip_prefix("0x") {
                Some(hex) => u64::from_str_radix(hex, 16).ok()?,
                None => pfn.parse().ok()?,
            };
            let flags = args("flags").unwrap_or("");
            TraceEvent::Writepage {
                t_s,
                pfn,
                file: flags.contains("RECLAIM_WB_FILE"),
                sync: flags.contains("RECLAIM_WB_SYNC"),
            }
        }
        "mm_vmscan_direct_reclaim_begin" => TraceEvent::DirectReclaimBegin { t_s, pid: raw.pid },
        "mm_vmscan_direct_reclaim_end" => TraceEvent::DirectReclaimEnd {
            t_s,
            pid: raw.pid,
            nr_reclaimed: num("nr_reclaimed").unwrap_or(0),
        },
        _ => return None,
    };
    Some(TraceLine {
        task: raw.task.to_string(),
        pid: raw.pid,
        cpu: raw.cpu,
        t_s,
        event,
    })
}

/// A `trace_marker` write: its timestamp and text. 3.2+ prints it as the
/// event `tracing_mark_write: <text>`; 3.1 as `0: <text>` (as the
/// kernel-lab notes on 3.1 record).
pub fn parse_trace_marker(line: &str) -> Option<(f64, String)> {
    let raw = split_line(line)?;
    matches!(raw.event, "tracing_mark_write" | "0").then(|| (raw.t_s, raw.args.to_string()))
}

/// The fields of a trace line, before the event is interpreted.
struct RawLine<'a> {
    task: &'a str,
    pid: u32,
    cpu: u32,
    t_s: f64,
    event: &'a str,
    args: &'a str,
}

/// Split `<comm>-<pid> [(tgid)] [cpu] [flags] <secs.usecs>: <event>: <args>`.
/// The separator is the first `: ` that follows a timestamp token and is
/// followed by an event name and `:`; the comm (at most 15 bytes, any
/// characters) comes before it and the event's arguments after it.
fn split_line(line: &str) -> Option<RawLine<'_>> {
    let line = line.trim_end();
    if line.trim_start().starts_with('#') {
        return None;
    }
    for (p, _) in line.match_indices(": ") {
        let before = &line[..p];
        let ts_start = before.rfind(char::is_whitespace).map_or(0, |i| i + 1);
        let Some(t_s) = parse_timestamp(&before[ts_start..]) else {
            continue;
        };
        let after = &line[p + 2..];
        let name_end = after.find(':').unwrap_or(after.len());
        let event = &after[..name_end];
        let is_name = !event.is_empty()
            && event
                .bytes()
                .all(|b| b.is_ascii_alphanumeric() || b == b'_');
        if !is_name || name_end == after.len() {
            continue;
        }
        let args = after[name_end + 1..].trim();
        let (task, pid, cpu) = split_context(&before[..ts_start])?;
        return Some(RawLine {
            task,
            pid,
            cpu,
            t_s,
            event,
            args,
        });
    }
    None
}

/// `123.456789` (or a bare integer): seconds.
fn parse_timestamp(tok: &str) -> Option<f64> {
    let (int, frac) = tok.split_once('.').unwrap_or((tok, "0"));
    let digits = |s: &str| !s.is_empty() && s.bytes().all(|b| b.is_ascii_digit());
    if !digits(int) || !digits(frac) {
        return None;
    }
    tok.parse().ok()
}

/// `<comm>-<pid> [(tgid)] [cpu] [flags]` → (comm, pid, cpu). The cpu is the
/// last `[digits]` group; the comm is everything before the last `-` ahead
/// of it (comms may hold dashes and spaces).
fn split_context(ctx: &str) -> Option<(&str, u32, u32)> {
    let mut search = ctx.len();
    let (open, cpu) = loop {
        let open = ctx[..search].rfind('[')?;
        let close = ctx[open..].find(']').map(|c| open + c);
        if let Some(close) = close {
            if let Ok(cpu) = ctx[open + 1..close].trim().parse::<u32>() {
                break (open, cpu);
            }
        }
        search = open;
    };
    let mut task = ctx[..open].trim_end();
    // The `record-tgid` column: `(  123)` or `(-------)`.
    if task.ends_with(')') {
        if let Some(o) = task.rfind('(') {
            task = task[..o].trim_end();
        }
    }
    let (comm, pid) = task.rsplit_once('-')?;
    let pid = pid.trim().parse().ok()?;
    Some((comm.trim_start(), pid, cpu))
}

/// The value of `key=` in a `TP_printk` text of space-separated
/// `key=value` fields.
fn arg<'a>(args: &'a str, key: &str) -> Option<&'a str> {
    args.split_whitespace().find_map(|f| {
        let (k, v) = f.split_once('=')?;
        (k == key).then_some(v)
    })
}
