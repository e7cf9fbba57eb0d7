//! ftrace text output as Linux 3.0's `/sys/kernel/debug/tracing/trace`
//! prints it.
//!
//! Context prefix: `context.rs` (the timestamp goes through 3.0's
//! `ns2usecs()`, which rounds to the nearest microsecond; 3.0 has no
//! irq-flags column in this format: the `irq-info` option and its `d.h.`
//! column came later).
//! Event body: `ftrace_raw_output_<event>()` of include/trace/ftrace.h
//! prints `"%s: "` with the event name and then the event's `TP_printk`
//! format followed by a newline.

use std::fmt::Write;

use super::context::write_context;
use super::event::{TraceEvent, WritebackLayout};

/// What 3.0's `s_show()` prints first for the nop tracer: `# tracer: nop`,
/// `#`, then `print_func_help_header()`.
pub const TRACE_HEADER_3_0: &str = "# tracer: nop\n\
#\n\
#           TASK-PID    CPU#    TIMESTAMP  FUNCTION\n\
#              | |       |          |         |\n";

/// Upper bound of one line from [`write_trace_line`] (all fields at their
/// maximum); reserve this much to keep it allocation-free.
pub const MAX_TRACE_LINE: usize = 640;

/// Append the header a 3.0 `trace` file starts with.
pub fn write_trace_header(out: &mut String) {
    out.push_str(TRACE_HEADER_3_0);
}

/// Append one trace line for `ev`, emitted by task `comm`/`pid` on `cpu` at
/// `ts_ns` nanoseconds of trace clock, exactly as 3.0 prints it.
///
/// For `trace-vmscan-postprocess.pl` to key a task by its name, `comm`
/// should consist of `[A-Za-z0-9-]` (its line regex); pid 0 prints as
/// `<idle>` as `trace_find_cmdline()` does. Nothing is allocated when `out`
/// has room for the line (at most [`MAX_TRACE_LINE`] bytes).
pub fn write_trace_line(
    out: &mut String,
    comm: &str,
    pid: u32,
    cpu: u32,
    ts_ns: u64,
    ev: &TraceEvent,
    layout: WritebackLayout,
) {
    write_context(out, comm, pid, cpu, ts_ns, ev.name());
    // fmt::Write for String never fails.
    let _ = match layout {
        WritebackLayout::Linux6 => super::vmscan6::write_fields(out, ev),
        WritebackLayout::Linux3 => None,
    }
    .unwrap_or_else(|| write_fields(out, ev));
    out.push('\n');
}

/// The `TP_printk` part of `ev` (3.0 layouts).
fn write_fields(out: &mut String, ev: &TraceEvent) -> std::fmt::Result {
    match *ev {
        TraceEvent::KswapdSleep { nid } => write!(out, "nid={nid}"),
        TraceEvent::KswapdWake { nid, order } => write!(out, "nid={nid} order={order}"),
        TraceEvent::WakeupKswapd {
            nid, zid, order, ..
        } => {
            write!(out, "nid={nid} zid={zid} order={order}")
        }
        TraceEvent::DirectReclaimBegin {
            order,
            may_writepage,
            gfp,
            ..
        } => write!(
            out,
            "order={order} may_writepage={} gfp_flags={}",
            u8::from(may_writepage),
            gfp.as_str()
        ),
        TraceEvent::DirectReclaimEnd { nr_reclaimed } => {
            write!(out, "nr_reclaimed={nr_reclaimed}")
        }
        TraceEvent::LruIsolate {
            isolate_mode,
            order,
            nr_requested,
            nr_scanned,
            nr_taken,
            contig_taken,
            contig_dirty,
            contig_failed,
            ..
        } => write!(
            out,
            "isolate_mode={} order={order} nr_requested={nr_requested} \
             nr_scanned={nr_scanned} nr_taken={nr_taken} contig_taken={contig_taken} \
             contig_dirty={contig_dirty} contig_failed={contig_failed}",
            isolate_mode.value()
        ),
        // %p of 3.0's vsnprintf: zero-padded lowercase hex, 16 digits on
        // 64-bit, no 0x.
        TraceEvent::Writepage { page, pfn, flags } => {
            write!(out, "page={page:016x} pfn={pfn} flags={}", flags.as_str())
        }
        TraceEvent::LruShrinkInactive {
            nid,
            zid,
            nr_scanned,
            nr_reclaimed,
            priority,
            flags,
            ..
        } => write!(
            out,
            "nid={nid} zid={zid} nr_scanned={nr_scanned} nr_reclaimed={nr_reclaimed} \
             priority={priority} flags={}",
            flags.as_str()
        ),
        TraceEvent::CongestionWait {
            usec_timeout,
            usec_delayed,
        }
        | TraceEvent::WaitIffCongested {
            usec_timeout,
            usec_delayed,
        } => write!(
            out,
            "usec_timeout={usec_timeout} usec_delayed={usec_delayed}"
        ),
        TraceEvent::GlobalDirtyState(g) => {
            write!(out, "dirty={} writeback={} ", g.nr_dirty, g.nr_writeback)?;
            if g.layout == WritebackLayout::Linux3 {
                // The model has no NFS: NR_UNSTABLE_NFS is 0.
                out.push_str("unstable=0 ");
            }
            write!(
                out,
                "bg_thresh={} thresh={} limit={} dirtied={} written={}",
                g.bg_thresh, g.thresh, g.limit, g.nr_dirtied, g.nr_written
            )
        }
        TraceEvent::BdiDirtyRatelimit(r) => {
            write!(
                out,
                "bdi {}:{}: write_bw={} awrite_bw={} dirty_rate={} dirty_ratelimit={} \
                 task_ratelimit={} balanced_dirty_ratelimit={}",
                r.bdi.major,
                r.bdi.minor,
                r.write_bw,
                r.avg_write_bw,
                r.dirty_rate,
                r.dirty_ratelimit,
                r.task_ratelimit,
                r.balanced_dirty_ratelimit
            )?;
            write_cgroup_ino(out, r.layout)
        }
        TraceEvent::PageAllocExtfrag(e) => write!(
            out,
            "page={:016x} pfn={:#x} alloc_order={} fallback_order={} pageblock_order={} \
             alloc_migratetype={} fallback_migratetype={} fragmenting={} change_ownership={}",
            super::event::vmemmap_page_ptr(e.pfn),
            e.pfn,
            e.alloc_order,
            e.fallback_order,
            e.pageblock_order,
            e.alloc_migratetype,
            e.fallback_migratetype,
            u8::from(e.fallback_order < e.pageblock_order),
            u8::from(e.change_ownership),
        ),
        TraceEvent::BalanceDirtyPages(b) => {
            write!(
                out,
                "bdi {}:{}: limit={} setpoint={} dirty={} bdi_setpoint={} bdi_dirty={} \
                 dirty_ratelimit={} task_ratelimit={} dirtied={} dirtied_pause={} \
                 paused={} pause={} period={} think={}",
                b.bdi.major,
                b.bdi.minor,
                b.limit,
                b.setpoint,
                b.dirty,
                b.bdi_setpoint,
                b.bdi_dirty,
                b.dirty_ratelimit,
                b.task_ratelimit,
                b.dirtied,
                b.dirtied_pause,
                b.paused_ms,
                b.pause_ms,
                b.period_ms,
                b.think_ms
            )?;
            write_cgroup_ino(out, b.layout)
        }
    }
}

/// 6.1's writeback events end with the wb's cgroup inode; without cgroup
/// writeback in use it is the root's, 1.
fn write_cgroup_ino(out: &mut String, layout: WritebackLayout) -> std::fmt::Result {
    if layout == WritebackLayout::Linux6 {
        out.push_str(" cgroup_ino=1");
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::trace::event::{GfpMask, IsolateMode, ReclaimFlags, ReclaimLru};

    fn line(comm: &str, pid: u32, cpu: u32, ts_ns: u64, ev: TraceEvent) -> String {
        let mut s = String::new();
        write_trace_line(&mut s, comm, pid, cpu, ts_ns, &ev, WritebackLayout::Linux3);
        s
    }

    const TS: u64 = 1_234_567_890_123; // 1234.567890 s after rounding

    #[test]
    fn header() {
        let mut s = String::new();
        write_trace_header(&mut s);
        assert_eq!(
            s,
            "# tracer: nop\n#\n\
             #           TASK-PID    CPU#    TIMESTAMP  FUNCTION\n\
             #              | |       |          |         |\n"
        );
    }

    #[test]
    fn kswapd_events() {
        assert_eq!(
            line(
                "kswapd0",
                32,
                1,
                TS,
                TraceEvent::KswapdWake { nid: 0, order: 0 }
            ),
            "         kswapd0-32    [001]  1234.567890: mm_vmscan_kswapd_wake: nid=0 order=0\n"
        );
        assert_eq!(
            line("kswapd1", 33, 12, TS, TraceEvent::KswapdSleep { nid: 1 }),
            "         kswapd1-33    [012]  1234.567890: mm_vmscan_kswapd_sleep: nid=1\n"
        );
        assert_eq!(
            line(
                "dd",
                4242,
                0,
                TS,
                TraceEvent::WakeupKswapd {
                    nid: 0,
                    zid: 2,
                    order: 3
                , gfp: crate::trace::AllocGfp::PageCacheWrite, }
            ),
            "              dd-4242  [000]  1234.567890: mm_vmscan_wakeup_kswapd: nid=0 zid=2 order=3\n"
        );
    }

    #[test]
    fn direct_reclaim_events() {
        let gfps = [
            (GfpMask::HighuserMovable, "GFP_HIGHUSER_MOVABLE"),
            (GfpMask::User, "GFP_USER"),
            (GfpMask::Kernel, "GFP_KERNEL"),
            (GfpMask::Nofs, "GFP_NOFS"),
        ];
        for (gfp, name) in gfps {
            let ev = TraceEvent::DirectReclaimBegin {
                order: 0,
                may_writepage: true,
                gfp,
                alloc: crate::trace::AllocGfp::PageCacheWrite,
            };
            assert_eq!(
                line("dd", 4242, 3, TS, ev),
                format!(
                    "              dd-4242  [003]  1234.567890: mm_vmscan_direct_reclaim_begin: \
                     order=0 may_writepage=1 gfp_flags={name}\n"
                )
            );
        }
        assert_eq!(
            line("dd", 4242, 3, TS, TraceEvent::DirectReclaimEnd { nr_reclaimed: 32 }),
            "              dd-4242  [003]  1234.567890: mm_vmscan_direct_reclaim_end: nr_reclaimed=32\n"
        );
    }

    #[test]
    fn lru_events() {
        let ev = TraceEvent::LruIsolate {
            isolate_mode: IsolateMode::Both,
            order: 3,
            nr_requested: 32,
            nr_scanned: 40,
            nr_taken: 30,
            contig_taken: 5,
            contig_dirty: 1,
            contig_failed: 2,
            classzone: 0,
            nr_skipped: 0,
            lru: crate::trace::LruName::InactiveFile,
        };
        assert_eq!(
            line("kswapd0", 32, 1, TS, ev),
            "         kswapd0-32    [001]  1234.567890: mm_vmscan_lru_isolate: isolate_mode=2 \
             order=3 nr_requested=32 nr_scanned=40 nr_taken=30 contig_taken=5 contig_dirty=1 \
             contig_failed=2\n"
        );
        let ev = TraceEvent::LruShrinkInactive {
            nid: 0,
            zid: 1,
            nr_scanned: 32,
            nr_reclaimed: 31,
            priority: 12,
            flags: ReclaimFlags {
                lru: ReclaimLru::File,
                sync: false,
            },
            nr_skipped: 0,
            stat: crate::trace::ShrinkStat::default(),
        };
        assert_eq!(
            line("kswapd0", 32, 1, TS, ev),
            "         kswapd0-32    [001]  1234.567890: mm_vmscan_lru_shrink_inactive: nid=0 \
             zid=1 nr_scanned=32 nr_reclaimed=31 priority=12 \
             flags=RECLAIM_WB_FILE|RECLAIM_WB_ASYNC\n"
        );
    }

    #[test]
    fn writepage_flags() {
        let cases = [
            (ReclaimLru::File, false, "RECLAIM_WB_FILE|RECLAIM_WB_ASYNC"),
            (ReclaimLru::File, true, "RECLAIM_WB_FILE|RECLAIM_WB_SYNC"),
            (ReclaimLru::Anon, false, "RECLAIM_WB_ANON|RECLAIM_WB_ASYNC"),
            (ReclaimLru::Anon, true, "RECLAIM_WB_ANON|RECLAIM_WB_SYNC"),
            (ReclaimLru::Mixed, true, "RECLAIM_WB_MIXED|RECLAIM_WB_SYNC"),
        ];
        for (lru, sync, text) in cases {
            let ev = TraceEvent::writepage(0x1234, ReclaimFlags { lru, sync });
            assert_eq!(
                line("kswapd0", 32, 1, TS, ev),
                format!(
                    "         kswapd0-32    [001]  1234.567890: mm_vmscan_writepage: \
                     page=ffffea0000048d00 pfn=4660 flags={text}\n"
                )
            );
        }
    }

    #[test]
    fn congestion_events() {
        assert_eq!(
            line(
                "dd",
                4242,
                1,
                TS,
                TraceEvent::CongestionWait {
                    usec_timeout: 100000,
                    usec_delayed: 100000
                }
            ),
            "              dd-4242  [001]  1234.567890: writeback_congestion_wait: \
             usec_timeout=100000 usec_delayed=100000\n"
        );
        assert_eq!(
            line(
                "kswapd0",
                32,
                1,
                TS,
                TraceEvent::WaitIffCongested {
                    usec_timeout: 100000,
                    usec_delayed: 0
                }
            ),
            "         kswapd0-32    [001]  1234.567890: writeback_wait_iff_congested: \
             usec_timeout=100000 usec_delayed=0\n"
        );
    }

    #[test]
    fn writeback_throttling_events() {
        use crate::trace::event::{
            BalanceDirtyPages, BdiDirtyRatelimit, BdiName, GlobalDirtyState, WritebackLayout,
        };
        let g = GlobalDirtyState {
            layout: WritebackLayout::Linux6,
            nr_dirty: 3435,
            nr_writeback: 6595,
            bg_thresh: 4656,
            thresh: 9325,
            limit: 10521,
            nr_dirtied: 53661,
            nr_written: 43631,
        };
        // As a 6.1 guest prints it (ext4-256m-1cpu, traced).
        assert_eq!(
            line("dd", 1000, 0, TS, TraceEvent::GlobalDirtyState(g)),
            "              dd-1000  [000]  1234.567890: global_dirty_state: dirty=3435 \
             writeback=6595 bg_thresh=4656 thresh=9325 limit=10521 dirtied=53661 \
             written=43631\n"
        );
        let g3 = GlobalDirtyState {
            layout: WritebackLayout::Linux3,
            ..g
        };
        assert!(line("dd", 1000, 0, TS, TraceEvent::GlobalDirtyState(g3))
            .contains(" writeback=6595 unstable=0 bg_thresh=4656 "));
        let r = BdiDirtyRatelimit {
            layout: WritebackLayout::Linux6,
            bdi: BdiName::scsi_disk(1),
            write_bw: 90500,
            avg_write_bw: 102400,
            dirty_rate: 59344,
            dirty_ratelimit: 102400,
            task_ratelimit: 26504,
            balanced_dirty_ratelimit: 45728,
        };
        assert_eq!(
            line("dd", 1000, 0, TS, TraceEvent::BdiDirtyRatelimit(r)),
            "              dd-1000  [000]  1234.567890: bdi_dirty_ratelimit: bdi 8:16: \
             write_bw=90500 awrite_bw=102400 dirty_rate=59344 dirty_ratelimit=102400 \
             task_ratelimit=26504 balanced_dirty_ratelimit=45728 cgroup_ino=1\n"
        );
        let b = BalanceDirtyPages {
            layout: WritebackLayout::Linux3,
            bdi: BdiName::scsi_disk(0),
            limit: 10521,
            setpoint: 8754,
            dirty: 7035,
            bdi_setpoint: 0,
            bdi_dirty: 7040,
            dirty_ratelimit: 102400,
            task_ratelimit: 65700,
            dirtied: 64,
            dirtied_pause: 64,
            paused_ms: 0,
            pause_ms: -8,
            period_ms: 0,
            think_ms: 8,
        };
        assert_eq!(
            line("dd", 1000, 0, TS, TraceEvent::BalanceDirtyPages(b)),
            "              dd-1000  [000]  1234.567890: balance_dirty_pages: bdi 8:0: \
             limit=10521 setpoint=8754 dirty=7035 bdi_setpoint=0 bdi_dirty=7040 \
             dirty_ratelimit=102400 task_ratelimit=65700 dirtied=64 dirtied_pause=64 \
             paused=0 pause=-8 period=0 think=8\n"
        );
        // The longest line stays within MAX_TRACE_LINE.
        let widest = BalanceDirtyPages {
            layout: WritebackLayout::Linux6,
            bdi: BdiName {
                major: u32::MAX,
                minor: u32::MAX,
            },
            limit: u64::MAX,
            setpoint: u64::MAX,
            dirty: u64::MAX,
            bdi_setpoint: u64::MAX,
            bdi_dirty: u64::MAX,
            dirty_ratelimit: u64::MAX,
            task_ratelimit: u64::MAX,
            dirtied: u64::MAX,
            dirtied_pause: u64::MAX,
            paused_ms: u64::MAX,
            pause_ms: i64::MIN,
            period_ms: u64::MAX,
            think_ms: i64::MIN,
        };
        let mut s = String::new();
        write_widest_context(&mut s, &TraceEvent::BalanceDirtyPages(widest));
        assert!(s.len() <= MAX_TRACE_LINE, "{}", s.len());
    }

    #[test]
    fn extfrag_event_prints_6_1_layout() {
        use crate::trace::PageAllocExtfrag;
        // A real 6.1 guest's line (ext4-512m, traced boot), its `%p`
        // hashed: page=0000000053e42d79 pfn=0x500 alloc_order=0
        // fallback_order=8 pageblock_order=9 alloc_migratetype=1
        // fallback_migratetype=2 fragmenting=1 change_ownership=1
        let ev = TraceEvent::PageAllocExtfrag(PageAllocExtfrag {
            pfn: 0x500,
            alloc_order: 0,
            fallback_order: 8,
            pageblock_order: 9,
            alloc_migratetype: 1,
            fallback_migratetype: 2,
            change_ownership: true,
        });
        assert_eq!(
            line("dd", 1000, 1, TS, ev),
            "              dd-1000  [001]  1234.567890: mm_page_alloc_extfrag: \
             page=ffffea0000014000 pfn=0x500 alloc_order=0 fallback_order=8 \
             pageblock_order=9 alloc_migratetype=1 fallback_migratetype=2 \
             fragmenting=1 change_ownership=1\n"
        );
        // A buddy of a pageblock or more does not fragment.
        let whole = TraceEvent::PageAllocExtfrag(PageAllocExtfrag {
            pfn: 0x400,
            alloc_order: 0,
            fallback_order: 10,
            pageblock_order: 9,
            alloc_migratetype: 2,
            fallback_migratetype: 1,
            change_ownership: true,
        });
        assert!(line("dd", 1000, 0, TS, whole).contains("fallback_order=10 pageblock_order=9 alloc_migratetype=2 fallback_migratetype=1 fragmenting=0 change_ownership=1"));
        let widest = TraceEvent::PageAllocExtfrag(PageAllocExtfrag {
            pfn: u64::MAX,
            alloc_order: u32::MAX,
            fallback_order: u32::MAX,
            pageblock_order: u32::MAX,
            alloc_migratetype: u32::MAX,
            fallback_migratetype: u32::MAX,
            change_ownership: true,
        });
        let mut s = String::new();
        write_widest_context(&mut s, &widest);
        assert!(s.len() <= MAX_TRACE_LINE, "{}", s.len());
    }

    /// `ev` with the widest comm, pid, cpu and timestamp.
    fn write_widest_context(s: &mut String, ev: &TraceEvent) {
        let (comm, widest) = ("averyverylongcommand", u32::MAX);
        write_trace_line(
            s,
            comm,
            widest,
            widest,
            u64::MAX,
            ev,
            WritebackLayout::Linux6,
        );
    }

    #[test]
    fn context_edge_cases() {
        let ev = TraceEvent::KswapdSleep { nid: 0 };
        // ns2usecs rounds half up: 999.9999995 s prints as 1000.000000.
        assert_eq!(
            line("kswapd0", 32, 0, 999_999_999_500, ev),
            "         kswapd0-32    [000]  1000.000000: mm_vmscan_kswapd_sleep: nid=0\n"
        );
        assert_eq!(
            line("kswapd0", 32, 0, 1_499, ev),
            "         kswapd0-32    [000]     0.000001: mm_vmscan_kswapd_sleep: nid=0\n"
        );
        // Wide seconds and pids push the columns, as printf does.
        assert_eq!(
            line("kswapd0", 1234567, 0, 123_456_000_000_000, ev),
            "         kswapd0-1234567 [000] 123456.000000: mm_vmscan_kswapd_sleep: nid=0\n"
        );
        // comm is clipped to 15 bytes; pid 0 is <idle>.
        assert_eq!(
            line("averyverylongcommand", 7, 0, 0, ev),
            " averyverylongco-7     [000]     0.000000: mm_vmscan_kswapd_sleep: nid=0\n"
        );
        assert_eq!(
            line("swapper", 0, 0, 0, ev),
            "          <idle>-0     [000]     0.000000: mm_vmscan_kswapd_sleep: nid=0\n"
        );
    }

    #[test]
    fn no_allocation_when_capacity_suffices() {
        let mut s = String::with_capacity(4096);
        let ptr = s.as_ptr();
        let ev = TraceEvent::LruIsolate {
            isolate_mode: IsolateMode::Inactive,
            order: 0,
            nr_requested: u64::MAX,
            nr_scanned: u64::MAX,
            nr_taken: u64::MAX,
            contig_taken: u64::MAX,
            contig_dirty: u64::MAX,
            contig_failed: u64::MAX,
            classzone: 0,
            nr_skipped: 0,
            lru: crate::trace::LruName::InactiveFile,
        };
        write_widest_context(&mut s, &ev);
        assert!(s.len() <= MAX_TRACE_LINE, "{}", s.len());
        assert_eq!(s.capacity(), 4096);
        assert_eq!(s.as_ptr(), ptr);
    }
}
