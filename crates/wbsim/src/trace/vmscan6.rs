//! The vmscan tracepoints as Linux 6.1 prints them
//! (`include/trace/events/vmscan.h` and `mmflags.h` of 6.1, read in
//! Debian's 6.1.192; the gfp strings are the ones traced 6.1 guests
//! print for the same allocations, docs/lab-results.md):
//!
//! - `mm_vmscan_wakeup_kswapd`: `nid=%d order=%d gfp_flags=%s` (no zid);
//! - `mm_vmscan_direct_reclaim_begin`: `order=%d gfp_flags=%s` (no
//!   may_writepage);
//! - `mm_vmscan_lru_isolate`: `isolate_mode=%d classzone=%d order=%d
//!   nr_requested=%lu nr_scanned=%lu nr_skipped=%lu nr_taken=%lu lru=%s`,
//!   where nr_scanned counts the pages of higher zones skipped too
//!   (`isolate_lru_folios`' `total_scan`);
//! - `mm_vmscan_lru_shrink_inactive`: `nid=%d nr_scanned=%ld
//!   nr_reclaimed=%ld nr_dirty=%ld nr_writeback=%ld nr_congested=%ld
//!   nr_immediate=%ld nr_activate_anon=%d nr_activate_file=%d
//!   nr_ref_keep=%ld nr_unmap_fail=%ld priority=%d flags=%s` (no zid; the
//!   counts are `shrink_folio_list`'s `struct reclaim_stat`).
//!
//! The 3.x layouts are in `format`; `Core::trace_layout` picks one.

use std::fmt::Write;

use super::event::TraceEvent;

/// The allocation a 6.1 `gfp_flags=` describes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum AllocGfp {
    /// A watermark boost's wake-up (`wakeup_kswapd(zone, 0, ...)` from
    /// `rmqueue`): gfp 0, printed `none`.
    #[default]
    None,
    /// A page-cache page to be written (`grab_cache_page_write_begin` →
    /// `filemap_alloc_folio`).
    PageCacheWrite,
    /// Another movable page (page-cache reads, anonymous memory); 6.1
    /// adds flags by caller (`__GFP_NORETRY` for readahead, `__GFP_ZERO`
    /// for anonymous faults) that the model does not tell apart.
    Movable,
    /// A reclaimable slab page (buffer heads: `alloc_buffer_head`'s
    /// `GFP_NOFS` slab refill).
    ReclaimableSlab,
    /// A page of a GFP_NOFS mapping's page cache (btrfs's tree blocks:
    /// `alloc_extent_buffer` → `find_or_create_page(.., GFP_NOFS |
    /// __GFP_NOFAIL)`).
    Nofs,
}

impl AllocGfp {
    /// What 6.1's `show_gfp_flags()` prints for it.
    pub fn as_str(self) -> &'static str {
        match self {
            AllocGfp::None => "none",
            AllocGfp::PageCacheWrite => "GFP_HIGHUSER_MOVABLE|__GFP_COMP|__GFP_WRITE",
            AllocGfp::Movable => "GFP_HIGHUSER_MOVABLE|__GFP_COMP",
            AllocGfp::ReclaimableSlab => "GFP_NOFS|__GFP_NOWARN|__GFP_NORETRY|__GFP_RECLAIMABLE",
            AllocGfp::Nofs => "GFP_NOFS|__GFP_NOFAIL|__GFP_COMP",
        }
    }
}

/// An LRU list, as 6.1's `lru=%s` names it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum LruName {
    InactiveAnon,
    ActiveAnon,
    #[default]
    InactiveFile,
    ActiveFile,
}

impl LruName {
    /// `enum lru_list` order: 0 inactive_anon, 1 active_anon, 2
    /// inactive_file, 3 active_file (4 unevictable is never scanned).
    pub fn of_index(lru: usize) -> LruName {
        match lru {
            0 => LruName::InactiveAnon,
            1 => LruName::ActiveAnon,
            3 => LruName::ActiveFile,
            _ => LruName::InactiveFile,
        }
    }

    fn as_str(self) -> &'static str {
        match self {
            LruName::InactiveAnon => "inactive_anon",
            LruName::ActiveAnon => "active_anon",
            LruName::InactiveFile => "inactive_file",
            LruName::ActiveFile => "active_file",
        }
    }
}

/// `struct reclaim_stat` of one `shrink_folio_list` call (6.1), as
/// `mm_vmscan_lru_shrink_inactive` prints it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct ShrinkStat {
    /// File pages dirty or under writeback.
    pub nr_dirty: u64,
    /// Pages under writeback given PG_reclaim and kept (case 2).
    pub nr_writeback: u64,
    /// Pages under writeback met again with PG_reclaim set.
    pub nr_congested: u64,
    /// Pages kswapd met under writeback with PG_reclaim on a
    /// PGDAT_WRITEBACK node (case 1).
    pub nr_immediate: u64,
    pub nr_activate_anon: u64,
    pub nr_activate_file: u64,
    /// Pages referenced once and kept on the inactive list.
    pub nr_ref_keep: u64,
}

/// The 6.1 fields of `ev`, or None when 6.1 prints it as 3.x does.
pub(super) fn write_fields(out: &mut String, ev: &TraceEvent) -> Option<std::fmt::Result> {
    Some(match *ev {
        TraceEvent::WakeupKswapd {
            nid, order, gfp, ..
        } => write!(out, "nid={nid} order={order} gfp_flags={}", gfp.as_str()),
        TraceEvent::DirectReclaimBegin { order, alloc, .. } => {
            write!(out, "order={order} gfp_flags={}", alloc.as_str())
        }
        TraceEvent::LruIsolate {
            order,
            nr_requested,
            nr_scanned,
            nr_taken,
            classzone,
            nr_skipped,
            lru,
            ..
        } => write!(
            out,
            "isolate_mode=0 classzone={classzone} order={order} nr_requested={nr_requested} \
             nr_scanned={} nr_skipped={nr_skipped} nr_taken={nr_taken} lru={}",
            nr_scanned + nr_skipped,
            lru.as_str()
        ),
        TraceEvent::LruShrinkInactive {
            nid,
            nr_scanned,
            nr_skipped,
            nr_reclaimed,
            priority,
            flags,
            stat: s,
            ..
        } => write!(
            out,
            "nid={nid} nr_scanned={} nr_reclaimed={nr_reclaimed} nr_dirty={} \
             nr_writeback={} nr_congested={} nr_immediate={} nr_activate_anon={} \
             nr_activate_file={} nr_ref_keep={} nr_unmap_fail=0 priority={priority} flags={}",
            nr_scanned + nr_skipped,
            s.nr_dirty,
            s.nr_writeback,
            s.nr_congested,
            s.nr_immediate,
            s.nr_activate_anon,
            s.nr_activate_file,
            s.nr_ref_keep,
            flags.as_str()
        ),
        _ => return None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::trace::{
        write_trace_line, GfpMask, IsolateMode, ReclaimFlags, ReclaimLru, WritebackLayout,
    };

    fn fields(ev: TraceEvent, layout: WritebackLayout) -> String {
        let mut s = String::new();
        write_trace_line(&mut s, "kswapd0", 42, 1, 20_714_184_000, &ev, layout);
        s.split_once(": ")
            .unwrap()
            .1
            .split_once(": ")
            .unwrap()
            .1
            .trim_end()
            .to_string()
    }

    /// The four events as a traced 6.1 guest prints them (the wake-up,
    /// direct reclaim and shrink lines are copied from one), and in 3.x's
    /// layout on the 3.x presets.
    #[test]
    fn vmscan_events_print_6_1_layouts() {
        let file = ReclaimFlags {
            lru: ReclaimLru::File,
            sync: false,
        };
        let wake = TraceEvent::WakeupKswapd {
            nid: 0,
            zid: 0,
            order: 0,
            gfp: AllocGfp::None,
        };
        assert_eq!(
            fields(wake, WritebackLayout::Linux6),
            "nid=0 order=0 gfp_flags=none"
        );
        assert_eq!(fields(wake, WritebackLayout::Linux3), "nid=0 zid=0 order=0");
        let begin = TraceEvent::DirectReclaimBegin {
            order: 0,
            may_writepage: true,
            gfp: GfpMask::HighuserMovable,
            alloc: AllocGfp::PageCacheWrite,
        };
        assert_eq!(
            fields(begin, WritebackLayout::Linux6),
            "order=0 gfp_flags=GFP_HIGHUSER_MOVABLE|__GFP_COMP|__GFP_WRITE"
        );
        let isolate = TraceEvent::LruIsolate {
            isolate_mode: IsolateMode::Inactive,
            order: 0,
            nr_requested: 1,
            nr_scanned: 1,
            nr_taken: 1,
            contig_taken: 0,
            contig_dirty: 0,
            contig_failed: 0,
            classzone: 0,
            nr_skipped: 99_023,
            lru: LruName::of_index(2),
        };
        assert_eq!(
            fields(isolate, WritebackLayout::Linux6),
            "isolate_mode=0 classzone=0 order=0 nr_requested=1 nr_scanned=99024 \
             nr_skipped=99023 nr_taken=1 lru=inactive_file"
        );
        let shrink = TraceEvent::LruShrinkInactive {
            nid: 0,
            zid: 1,
            nr_scanned: 26,
            nr_reclaimed: 23,
            priority: 12,
            flags: file,
            nr_skipped: 0,
            stat: ShrinkStat {
                nr_activate_file: 3,
                ..ShrinkStat::default()
            },
        };
        assert_eq!(
            fields(shrink, WritebackLayout::Linux6),
            "nid=0 nr_scanned=26 nr_reclaimed=23 nr_dirty=0 nr_writeback=0 nr_congested=0 \
             nr_immediate=0 nr_activate_anon=0 nr_activate_file=3 nr_ref_keep=0 \
             nr_unmap_fail=0 priority=12 flags=RECLAIM_WB_FILE|RECLAIM_WB_ASYNC"
        );
        assert_eq!(
            fields(shrink, WritebackLayout::Linux3),
            "nid=0 zid=1 nr_scanned=26 nr_reclaimed=23 priority=12 \
             flags=RECLAIM_WB_FILE|RECLAIM_WB_ASYNC"
        );
    }

    /// The allocations the model makes, as 6.1 names their masks.
    #[test]
    fn gfp_strings_of_the_models_allocations() {
        assert_eq!(
            AllocGfp::ReclaimableSlab.as_str(),
            "GFP_NOFS|__GFP_NOWARN|__GFP_NORETRY|__GFP_RECLAIMABLE"
        );
        assert_eq!(
            AllocGfp::Movable.as_str(),
            "GFP_HIGHUSER_MOVABLE|__GFP_COMP"
        );
        assert_eq!(LruName::of_index(3).as_str(), "active_file");
    }
}
