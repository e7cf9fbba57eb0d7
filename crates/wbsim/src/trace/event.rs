//! The vmscan and writeback trace events of Linux 3.0, with the fields their
//! `TP_printk` formats print.
//!
//! Sources of the layouts (3.0): `include/trace/events/vmscan.h`
//! (`mm_vmscan_*`), `include/trace/events/writeback.h`
//! (`writeback_congest_waited_template`), `include/trace/events/gfpflags.h`
//! (`show_gfp_flags`). These are exactly the events Mel Gorman's
//! `Documentation/trace/postprocess/trace-vmscan-postprocess.pl` parses
//! (the congestion events are not read by that script; mmtests reports them).

use super::vmscan6::{AllocGfp, LruName, ShrinkStat};

/// One trace event, as the 3.0 tracepoint records it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TraceEvent {
    /// `mm_vmscan_kswapd_sleep` (`kswapd_try_to_sleep()`): `nid=%d`.
    KswapdSleep { nid: u32 },
    /// `mm_vmscan_kswapd_wake` (`kswapd()`, before `balance_pgdat()`):
    /// `nid=%d order=%d`. kswapd emits it on every pass of its loop, also
    /// without having slept, which the script counts as a "re-wakeup".
    KswapdWake { nid: u32, order: u32 },
    /// `mm_vmscan_wakeup_kswapd` (`wakeup_kswapd()`, in the allocating
    /// task): `nid=%d zid=%d order=%d`; 6.1 prints `gfp` for `zid`.
    WakeupKswapd {
        nid: u32,
        zid: u32,
        order: u32,
        gfp: AllocGfp,
    },
    /// `mm_vmscan_direct_reclaim_begin` (`try_to_free_pages()`):
    /// `order=%d may_writepage=%d gfp_flags=%s`; 6.1 prints `alloc` and
    /// no may_writepage.
    DirectReclaimBegin {
        order: u32,
        may_writepage: bool,
        gfp: GfpMask,
        alloc: AllocGfp,
    },
    /// `mm_vmscan_direct_reclaim_end`: `nr_reclaimed=%lu`.
    DirectReclaimEnd { nr_reclaimed: u64 },
    /// `mm_vmscan_lru_isolate` (`isolate_lru_pages()`):
    /// `isolate_mode=%d order=%d nr_requested=%lu nr_scanned=%lu
    /// nr_taken=%lu contig_taken=%lu contig_dirty=%lu contig_failed=%lu`.
    /// No `file=` field in 3.0 (added in 3.3); the `contig_*` (lumpy
    /// reclaim) fields were removed in 3.5.
    /// 6.1 (`vmscan6`) adds `classzone` (the scan's highest zone),
    /// `nr_skipped` (pages of higher zones passed over) and `lru`.
    LruIsolate {
        isolate_mode: IsolateMode,
        order: u32,
        nr_requested: u64,
        nr_scanned: u64,
        nr_taken: u64,
        contig_taken: u64,
        contig_dirty: u64,
        contig_failed: u64,
        classzone: u32,
        nr_skipped: u64,
        lru: LruName,
    },
    /// `mm_vmscan_writepage` (`pageout()`): `page=%p pfn=%lu flags=%s`.
    /// `page` is the `struct page` address (see [`vmemmap_page_ptr`]).
    Writepage {
        page: u64,
        pfn: u64,
        flags: ReclaimFlags,
    },
    /// `mm_vmscan_lru_shrink_inactive` (end of `shrink_inactive_list()`):
    /// `nid=%d zid=%d nr_scanned=%ld nr_reclaimed=%ld priority=%d flags=%s`.
    /// 6.1 (`vmscan6`) prints no zid, counts `nr_skipped` in
    /// nr_scanned, and adds the call's `reclaim_stat`.
    LruShrinkInactive {
        nid: u32,
        zid: u32,
        nr_scanned: u64,
        nr_reclaimed: u64,
        priority: u32,
        flags: ReclaimFlags,
        nr_skipped: u64,
        stat: ShrinkStat,
    },
    /// `writeback_congestion_wait` (`congestion_wait()`):
    /// `usec_timeout=%u usec_delayed=%u`.
    CongestionWait {
        usec_timeout: u32,
        usec_delayed: u32,
    },
    /// `writeback_wait_iff_congested` (`wait_iff_congested()`):
    /// `usec_timeout=%u usec_delayed=%u`.
    WaitIffCongested {
        usec_timeout: u32,
        usec_delayed: u32,
    },
    /// `global_dirty_state` (3.1+, each time the global limits are computed):
    /// `dirty=%lu writeback=%lu [unstable=%lu] bg_thresh=%lu thresh=%lu
    /// limit=%lu dirtied=%lu written=%lu`, pages.
    GlobalDirtyState(GlobalDirtyState),
    /// `bdi_dirty_ratelimit` (3.2+, end of `bdi_update_dirty_ratelimit` /
    /// `wb_update_dirty_ratelimit`), rates in KB/s.
    BdiDirtyRatelimit(BdiDirtyRatelimit),
    /// `balance_dirty_pages` (3.3+ layout; each pass that sleeps or ends
    /// the loop under `min_pause`).
    BalanceDirtyPages(BalanceDirtyPages),
    /// `mm_page_alloc_extfrag` (2.6.35+, `include/trace/events/kmem.h`;
    /// from `__rmqueue_fallback` after the steal; 6.1's layout, `pfn` in
    /// hex): an allocation took a buddy of another migratetype. One whose
    /// buddy is smaller than a pageblock (`fragmenting=1`) boosts the
    /// zone's watermarks (5.0+).
    PageAllocExtfrag(PageAllocExtfrag),
}

/// Fields of [`TraceEvent::PageAllocExtfrag`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PageAllocExtfrag {
    /// The physical frame number of the buddy taken.
    pub pfn: u64,
    pub alloc_order: u32,
    pub fallback_order: u32,
    /// A fallback below it fragments a pageblock (`fragmenting=`).
    pub pageblock_order: u32,
    /// `enum migratetype`: 0 UNMOVABLE, 1 MOVABLE, 2 RECLAIMABLE.
    pub alloc_migratetype: u32,
    pub fallback_migratetype: u32,
    /// The buddy's pageblock has the allocation's type after the steal.
    pub change_ownership: bool,
}

/// Which kernel's field list the writeback and vmscan tracepoints print.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum WritebackLayout {
    /// 3.x: `global_dirty_state` has `unstable=` (NR_UNSTABLE_NFS, removed
    /// in 5.8); no `cgroup_ino`.
    #[default]
    Linux3,
    /// 6.1: no `unstable=`; `bdi_dirty_ratelimit` and `balance_dirty_pages`
    /// end with `cgroup_ino=1` (the root cgroup's inode).
    Linux6,
}

/// Fields of [`TraceEvent::GlobalDirtyState`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct GlobalDirtyState {
    pub layout: WritebackLayout,
    pub nr_dirty: u64,
    pub nr_writeback: u64,
    pub bg_thresh: u64,
    pub thresh: u64,
    /// `global_dirty_limit` (`global_wb_domain.dirty_limit`).
    pub limit: u64,
    /// The vmstat counters `nr_dirtied` and `nr_written`.
    pub nr_dirtied: u64,
    pub nr_written: u64,
}

/// Fields of [`TraceEvent::BdiDirtyRatelimit`], in KB/s as printed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct BdiDirtyRatelimit {
    pub layout: WritebackLayout,
    /// Device number `major:minor` of the backing device.
    pub bdi: BdiName,
    pub write_bw: u64,
    pub avg_write_bw: u64,
    pub dirty_rate: u64,
    pub dirty_ratelimit: u64,
    pub task_ratelimit: u64,
    pub balanced_dirty_ratelimit: u64,
}

/// Fields of [`TraceEvent::BalanceDirtyPages`]: pages, rates in KB/s,
/// times in ms (`jiffies * 1000 / HZ`), as printed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct BalanceDirtyPages {
    pub layout: WritebackLayout,
    pub bdi: BdiName,
    pub limit: u64,
    pub setpoint: u64,
    pub dirty: u64,
    pub bdi_setpoint: u64,
    pub bdi_dirty: u64,
    pub dirty_ratelimit: u64,
    pub task_ratelimit: u64,
    pub dirtied: u64,
    pub dirtied_pause: u64,
    pub paused_ms: u64,
    pub pause_ms: i64,
    pub period_ms: u64,
    pub think_ms: i64,
}

/// A backing device's `bdi_dev_name`: `major:minor`. The model numbers its
/// devices as SCSI disks (`8:0`, `8:16`, ...).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct BdiName {
    pub major: u32,
    pub minor: u32,
}

impl BdiName {
    /// The `index`-th SCSI disk (`sd` major 8, 16 minors per disk).
    pub fn scsi_disk(index: usize) -> BdiName {
        BdiName {
            major: 8,
            minor: 16 * index as u32,
        }
    }
}

/// Pages (or pages/s) in KiB (or KB/s) as the tracepoints' `KBps()` prints
/// them: `x << (PAGE_SHIFT - 10)`.
pub const fn pages_to_kib(pages: u64) -> u64 {
    pages << 2
}

impl TraceEvent {
    /// The tracepoint name, as printed before the `:` in the trace.
    pub fn name(&self) -> &'static str {
        match self {
            TraceEvent::KswapdSleep { .. } => "mm_vmscan_kswapd_sleep",
            TraceEvent::KswapdWake { .. } => "mm_vmscan_kswapd_wake",
            TraceEvent::WakeupKswapd { .. } => "mm_vmscan_wakeup_kswapd",
            TraceEvent::DirectReclaimBegin { .. } => "mm_vmscan_direct_reclaim_begin",
            TraceEvent::DirectReclaimEnd { .. } => "mm_vmscan_direct_reclaim_end",
            TraceEvent::LruIsolate { .. } => "mm_vmscan_lru_isolate",
            TraceEvent::Writepage { .. } => "mm_vmscan_writepage",
            TraceEvent::LruShrinkInactive { .. } => "mm_vmscan_lru_shrink_inactive",
            TraceEvent::CongestionWait { .. } => "writeback_congestion_wait",
            TraceEvent::WaitIffCongested { .. } => "writeback_wait_iff_congested",
            TraceEvent::GlobalDirtyState(_) => "global_dirty_state",
            TraceEvent::BdiDirtyRatelimit(_) => "bdi_dirty_ratelimit",
            TraceEvent::BalanceDirtyPages(_) => "balance_dirty_pages",
            TraceEvent::PageAllocExtfrag(_) => "mm_page_alloc_extfrag",
        }
    }
}

/// The allocation masks the model reclaims for, printed by 3.0's
/// `show_gfp_flags()` (`__print_flags` over the table in
/// `include/trace/events/gfpflags.h`). Each of these four is matched
/// whole by its own table entry before any entry that is a subset of it,
/// so each prints as its single name.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum GfpMask {
    /// `__GFP_WAIT|__GFP_IO|__GFP_FS|__GFP_HARDWALL|__GFP_HIGHMEM|__GFP_MOVABLE`
    HighuserMovable,
    /// `__GFP_WAIT|__GFP_IO|__GFP_FS|__GFP_HARDWALL`
    User,
    /// `__GFP_WAIT|__GFP_IO|__GFP_FS`
    Kernel,
    /// `__GFP_WAIT|__GFP_IO`
    Nofs,
}

impl GfpMask {
    /// The symbolic form `show_gfp_flags()` prints.
    pub fn as_str(self) -> &'static str {
        match self {
            GfpMask::HighuserMovable => "GFP_HIGHUSER_MOVABLE",
            GfpMask::User => "GFP_USER",
            GfpMask::Kernel => "GFP_KERNEL",
            GfpMask::Nofs => "GFP_NOFS",
        }
    }
}

/// LRU isolation mode of 3.0 (`include/linux/swap.h`: `ISOLATE_INACTIVE 0`,
/// `ISOLATE_ACTIVE 1`, `ISOLATE_BOTH 2`). 3.2 replaced these with the
/// `isolate_mode_t` bits 1/2/3, which is what later copies of the script
/// assume.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum IsolateMode {
    /// `shrink_inactive_list()` without lumpy reclaim.
    Inactive,
    /// `shrink_active_list()` (rotation, not counted as scanning).
    Active,
    /// `shrink_inactive_list()` in lumpy reclaim mode.
    Both,
}

impl IsolateMode {
    /// The value 3.0 prints for `isolate_mode=%d`.
    pub fn value(self) -> u32 {
        match self {
            IsolateMode::Inactive => 0,
            IsolateMode::Active => 1,
            IsolateMode::Both => 2,
        }
    }
}

/// Which LRU a reclaim write or shrink concerned (`RECLAIM_WB_ANON`,
/// `RECLAIM_WB_FILE`, `RECLAIM_WB_MIXED` of 3.0's `vmscan.h`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ReclaimLru {
    Anon,
    File,
    /// Only `trace_shrink_flags()` in synchronous lumpy reclaim uses it.
    Mixed,
}

/// The `reclaim_flags` of `mm_vmscan_writepage` and
/// `mm_vmscan_lru_shrink_inactive`: one LRU bit plus `RECLAIM_WB_SYNC` or
/// `RECLAIM_WB_ASYNC` (3.0's `trace_reclaim_flags()` /
/// `trace_shrink_flags()`), printed by `show_reclaim_flags()`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ReclaimFlags {
    pub lru: ReclaimLru,
    /// Synchronous (lumpy) reclaim I/O.
    pub sync: bool,
}

impl ReclaimFlags {
    /// `show_reclaim_flags()` output: the flag table is walked in the order
    /// ANON, FILE, MIXED, SYNC, ASYNC, joined with `|`.
    pub fn as_str(self) -> &'static str {
        match (self.lru, self.sync) {
            (ReclaimLru::Anon, false) => "RECLAIM_WB_ANON|RECLAIM_WB_ASYNC",
            (ReclaimLru::Anon, true) => "RECLAIM_WB_ANON|RECLAIM_WB_SYNC",
            (ReclaimLru::File, false) => "RECLAIM_WB_FILE|RECLAIM_WB_ASYNC",
            (ReclaimLru::File, true) => "RECLAIM_WB_FILE|RECLAIM_WB_SYNC",
            (ReclaimLru::Mixed, false) => "RECLAIM_WB_MIXED|RECLAIM_WB_ASYNC",
            (ReclaimLru::Mixed, true) => "RECLAIM_WB_MIXED|RECLAIM_WB_SYNC",
        }
    }
}

/// Start of the x86_64 `vmemmap` array in 3.0 (`VMEMMAP_START`).
pub const VMEMMAP_START: u64 = 0xffff_ea00_0000_0000;

/// A plausible `struct page *` for `pfn` on x86_64 with
/// `CONFIG_SPARSEMEM_VMEMMAP` and a 64-byte `struct page` (an assumption:
/// the simulator has no page addresses; the script only checks `[0-9a-f]*`).
pub const fn vmemmap_page_ptr(pfn: u64) -> u64 {
    VMEMMAP_START.wrapping_add(pfn.wrapping_mul(64))
}

impl TraceEvent {
    /// `mm_vmscan_writepage` for `pfn`, with the page address from
    /// [`vmemmap_page_ptr`].
    pub const fn writepage(pfn: u64, flags: ReclaimFlags) -> TraceEvent {
        TraceEvent::Writepage {
            page: vmemmap_page_ptr(pfn),
            pfn,
            flags,
        }
    }
}
