//! The choices a kernel profile makes between mechanisms: one enum per
//! era-varying mechanism, each variant naming the kernels that have it.

use serde::{Deserialize, Serialize};

/// The owner of the LRU lists (`struct lruvec`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum LruScope {
    /// 2.6.24 – 4.7: each zone has its lists.
    Zone,
    /// 4.8+: one set of lists per node (`pgdat->__lruvec`).
    Node,
}

impl LruScope {
    pub(super) fn zone() -> Self {
        LruScope::Zone
    }
}

/// kswapd's balancing of its node (`balance_pgdat`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum KswapdBalance {
    /// 3.0 – 3.x: priority passes over the zones, each zone below its
    /// high watermark (plus the balance gap) shrunk in turn; balanced when
    /// every zone up to the classzone is at high.
    PerZone,
    /// 4.12+ (read in 6.1 `balance_pgdat`, `pgdat_balanced`,
    /// `kswapd_shrink_node`, `prepare_kswapd_sleep`): balanced when any
    /// zone up to the highest zone asked for meets its high watermark;
    /// else one `shrink_node` per priority with a target of the eligible
    /// zones' high watermarks, the priority raised only when a pass
    /// scanned less than that; `kswapd_failures` after passes that
    /// reclaimed nothing.
    Node,
}

impl KswapdBalance {
    pub(super) fn per_zone() -> Self {
        KswapdBalance::PerZone
    }
}

/// What reclaim does with a page under writeback at the tail.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum WritebackInReclaim {
    /// 3.0 – 4.10: back to the inactive head (counted `nr_writeback` for
    /// the 3.2 throttle).
    Keep,
    /// 4.11+ (read in 6.1 `shrink_folio_list`, cases 1 and 2): PG_reclaim
    /// set and the page activated (`pgactivate`); kswapd meeting one that
    /// already had PG_reclaim on a node flagged PGDAT_WRITEBACK counts it
    /// in `nr_immediate`, which makes it throttle.
    Activate,
}

impl WritebackInReclaim {
    pub(super) fn keep() -> Self {
        WritebackInReclaim::Keep
    }
}

/// The per-device proportion of writeback completions.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Proportions {
    /// 2.6.24 – 3.6 (`lib/proportions.c`): decays by half every
    /// `2^(shift-1)` completions machine-wide.
    Floating,
    /// 3.7+ (`lib/flex_proportions.c`): decays by half every 3 s of
    /// simulated time while completions happen.
    Flexible,
}

impl Proportions {
    pub(super) fn floating() -> Self {
        Proportions::Floating
    }
}

/// The wait between writeback chunks of a throttled writer (before 3.2).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum BdpWait {
    /// 2.6.24 – 2.6.35: `congestion_wait(WRITE, HZ/10)`, which returns
    /// early when a queue leaves congestion.
    CongestionWait,
    /// ~2.6.36 – 3.1: `io_schedule_timeout`, from one jiffy doubling up to
    /// HZ/10.
    DoublingTimeout,
}

impl BdpWait {
    pub(super) fn doubling_timeout() -> Self {
        BdpWait::DoublingTimeout
    }
}

/// Block plugging around writeback.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum WritebackPlug {
    /// The 3.0 presets' simplification: a bio goes straight into the
    /// request queue, mergeable with anything queued there, and the device
    /// is started when the writeback pass ends (per-task plugs not
    /// modelled).
    QueueOnly,
    /// 2.6.39 – 4.2: per-task plugs; `generic_writepages` (and XFS's
    /// `->writepages`) plug around one mapping, so a small file's IO is
    /// dispatched when its inode is done.
    PerMapping,
    /// Dave Chinner's "plug writeback at a high level" (posted 2013 for
    /// 3.11, merged 4.3 as 505a666e): the flusher also plugs around a whole
    /// pass over the dirty inodes, so consecutive files' bios merge.
    PerPass,
}

impl WritebackPlug {
    pub(super) fn queue_only() -> Self {
        WritebackPlug::QueueOnly
    }
}

/// The block layer's form (`crate::block::wbt` dispatches on it).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum BlockLayerKind {
    /// `request_fn` queues: a pool of `nr_requests` with congestion on
    /// and off thresholds (`blk_queue_congestion_threshold`).
    SingleQueue,
    /// blk-mq: tags, no congestion (blk-mq never marked it; 5.18 removed
    /// it), and `wbt` where the profile has it.
    BlkMq,
}

impl BlockLayerKind {
    pub(super) fn single_queue() -> Self {
        BlockLayerKind::SingleQueue
    }
}

/// Which filesystems' regular files have an `->writepage` that reclaim's
/// `pageout()` can call.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum FsWritepage {
    /// Every modelled filesystem (2.6.24 – 5.x): what each one's
    /// `->writepage` does with the page is its own business
    /// (`crate::fs::Writepage`; `reclaim/dirty_pages.rs` decides).
    All,
    /// xfs and btrfs have none (Christoph Hellwig's removals before 6.1;
    /// read in 6.1 `xfs_address_space_operations` and `btrfs_aops`, which
    /// set only `->writepages`): `pageout()` returns PAGE_ACTIVATE for
    /// their dirty pages before PG_reclaim or any count (read in 6.1
    /// mm/vmscan.c `pageout`). ext4 (`ext4_writepage`, which redirties a
    /// delayed-allocation page) and FUSE keep theirs.
    NotXfsBtrfs,
}

pub(super) fn yes() -> bool {
    true
}

impl FsWritepage {
    pub(super) fn all() -> Self {
        FsWritepage::All
    }
}

/// How a flusher's writeback pass shares out pages among inodes
/// (`fs/fs-writeback.c`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum WritebackChunk {
    /// 2.6.32 – 3.0 (`wb_writeback`, `writeback_inodes_wb`): each pass
    /// has `nr_to_write = MAX_WRITEBACK_PAGES` (1024) shared by all its
    /// inodes, and `wb_writeback` goes again while passes use it up.
    Fixed,
    /// 3.1+ (Wu Fengguang's "writeback: scale IO chunk size up to half
    /// device bandwidth", 1a12d8bd7b29, merged in the 3.1 merge window with
    /// the bandwidth estimate and the per-inode `writeback_sb_inodes`
    /// rework; still so in 6.1). Read in fs/fs-writeback.c copies of the
    /// 3.3/3.4, 3.8/3.9, 4.2 and 6.x eras (no v3.2 or v6.1 tree could be
    /// fetched; the function is the same in all four but for `bdi` →
    /// `wb` and `global_dirty_limit` → `global_wb_domain.dirty_limit`):
    /// `writeback_sb_inodes` gives each inode its own `wbc.nr_to_write =
    /// writeback_chunk_size(wb, work)` = min(`avg_write_bandwidth` / 2,
    /// `global_dirty_limit` / DIRTY_SCOPE, `work->nr_pages`) +
    /// MIN_WRITEBACK_PAGES (4 MiB), rounded down to a multiple of
    /// MIN_WRITEBACK_PAGES (WB_SYNC_ALL and tagged work: LONG_MAX, not
    /// modelled); takes what each inode's walk used off `work->nr_pages`;
    /// and, once it has written a page or cleaned an inode, ends the pass
    /// after HZ/10 or when `work->nr_pages` is used up. `wb_writeback`
    /// goes again while a pass made progress. Needs the bandwidth
    /// estimate, which the model keeps with IO-less throttling only (3.1's
    /// writer-writeback `balance_dirty_pages` estimated it too: not
    /// modelled, so 3.1-mmotm stays `fixed`).
    ///
    /// Set on 6.1 only. The 3.2 – 3.10 presets keep `fixed`, a known
    /// infidelity: with `bandwidth` on 3.2, 3.3 and 3.10 (so 3.7 and
    /// 3.10+writeback-plug) `wbsim reproduce` has one cell go from pass
    /// to fail, real-3x "3.3 kswapd awake / dd seconds": 0.6586 -> 0.6602
    /// against the band [0.42, 0.66] (published 0.538; 0.6561 -> 0.6608
    /// without the boot `global_dirty_limit`). Every other 3.x cell
    /// still passes (writeback-plug's plugged write IOPS 1585 -> 1316,
    /// unpatched/plugged 19.8 -> 23.8, band [9, 37]).
    Bandwidth,
}

impl WritebackChunk {
    pub(super) fn fixed() -> Self {
        WritebackChunk::Fixed
    }
}

/// Who writes back when writers exceed the dirty limits.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum DirtyThrottle {
    /// 2.6.24 – 3.1: the writer writes pages of its device itself
    /// (`balance_dirty_pages` with `writeback_inodes_wb`).
    WriterWriteback,
    /// 3.3+ (Wu Fengguang's IO-less throttling): the writer only sleeps, for
    /// a time set by the device's estimated bandwidth and how far dirty
    /// memory is from the set point; the flusher does all writeback.
    /// Pauses of up to 200 ms, with `bdi_min_pause` and the think-time
    /// credit; `dirty_exceeded` when both the device and the system are
    /// over their limits.
    IoLess,
    /// 3.2, the first form (read in 3.2.4): the same control lines, but a
    /// lone writer's longest pause is about 20 ms (`bdi_max_pause` of
    /// 3.2), the pause is `pages_dirtied / task_ratelimit` with no minimum
    /// and no think-time credit, and `dirty_exceeded` (which cuts the
    /// pages between checks to 8) holds when either the device or the
    /// system is over its limit.
    IoLessFirst,
}

impl DirtyThrottle {
    pub(super) fn writer_writeback() -> Self {
        DirtyThrottle::WriterWriteback
    }
}

/// When `get_scan_count` forces kswapd to scan a full batch of a list
/// whose share (`size >> priority`, by the anon/file fraction) is zero.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum KswapdForceScan {
    /// The model's reading of 3.0 (246e87a93934, "memcg: fix
    /// get_scan_count() for small targets"): while the zone's LRU pages
    /// shifted by the priority are fewer than `SWAP_CLUSTER_MAX`.
    SmallZone,
    /// 3.2 (read in 3.2.4: `if (scanning_global_lru(sc) &&
    /// current_is_kswapd()) force_scan = true`): always.
    Always,
    /// 3.3+ (b95a2f2d486d, Mel Gorman, "mm: vmscan: do not force kswapd to
    /// scan small targets"; read in 3.3.8, the same in 3.10): only while
    /// the zone is all_unreclaimable. A small zone such as DMA is then
    /// not scanned at all until the priority makes its share non-zero.
    AllUnreclaimable,
}

impl KswapdForceScan {
    pub(super) fn small_zone() -> Self {
        KswapdForceScan::SmallZone
    }
}

/// The fate of a dirty file page that reclaim is not allowed to write
/// (`shrink_page_list`, file page and not kswapd or priority too high).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum SkippedDirtyPage {
    /// Back to the inactive head, still dirty; counted in
    /// nr_vmscan_write_skip (Gorman RFC patches 1–3, Jul 2011). Also the
    /// 3.0 value, where the case never arises.
    Keep,
    /// Gorman RFC patch 4 ("Immediately reclaim end-of-LRU dirty pages when
    /// writeback completes", Jul 2011): counted in nr_vmscan_invalidate,
    /// then `deactivate_page` and `goto keep_dirty`. The page is still
    /// isolated, so `lru_deactivate_fn` (which returns early without
    /// PG_lru) leaves it alone, and `keep_dirty` skips the putback: the page
    /// drops out of the LRU for good (`Holder::Orphaned`).
    Orphan,
    /// As merged for 3.2 ("Immediately reclaim end-of-LRU dirty pages when
    /// writeback completes" v3): PG_reclaim is set and the page goes back
    /// to the inactive head, so `end_page_writeback` rotates it to the tail;
    /// counted in nr_vmscan_immediate_reclaim.
    ImmediateReclaim,
    /// 4.11+ (read in 6.1 `shrink_folio_list`): counted in
    /// nr_vmscan_immediate_reclaim, PG_reclaim set and the page activated
    /// (`pgactivate`), "move dirty pages out of the way until they're
    /// flushed"; `folio_end_writeback` rotates a PG_reclaim page that is
    /// not active to the inactive tail.
    ActivateReclaim,
}
