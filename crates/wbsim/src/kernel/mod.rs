//! Kernel profiles: which policy each mechanism uses, as plain data.
//!
//! A profile is one field per mechanism; presets are TOML files compiled into
//! the binary, each optionally on a `base` preset ([`layers`]). Mechanism
//! code branches on these fields at the decision point.

use serde::{Deserialize, Serialize};

mod choices;
pub mod layers;
mod sysctl;

pub use choices::*;
pub use sysctl::SysctlConfig;

/// `DEF_PRIORITY`.
/// (A kernel constant that profiles are checked against.)
pub const DEF_PRIORITY: u32 = 12;

/// Where the dirty limit is enforced.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum DirtyLimitScope {
    /// Global and per-device limits only (≤ 3.2).
    Global,
    /// Per-zone dirty limits steering `__GFP_WRITE` allocations (3.3 – 4.7,
    /// Johannes Weiner's series of Sep 2011): zone reserves are not
    /// dirtyable; when every zone is over its share the slow path ignores
    /// the limits.
    PerZone,
    /// The first version of the series (Jul 2011, seed 003): as `PerZone`,
    /// but when every zone is over its share the allocation wakes the
    /// flushers and stalls once (`congestion_wait`, HZ/10) before the slow
    /// path. The v2 cover letter names this stall ("code to wake the
    /// flushers and stall the allocation") as the only change from v1; its
    /// exact form is UNVERIFIED (the v1 patch was not found).
    PerZoneFirstVersion,
    /// Per-node dirty limits (4.8+, `node_dirty_ok`, read in 6.1
    /// mm/page-writeback.c and `get_page_from_freelist`): a `__GFP_WRITE`
    /// allocation in the fast path skips a node whose dirty and writeback
    /// pages are over its share of the limit (its dirtyable memory, free
    /// plus file LRU pages less `totalreserve_pages`); the slow path
    /// ignores it. On one node the share is the whole limit.
    PerNode,
}

impl DirtyLimitScope {
    /// Whether `__GFP_WRITE` allocations are steered by per-zone (or
    /// per-node) limits, and the zones' reserves are not dirtyable.
    pub fn per_zone(self) -> bool {
        self != DirtyLimitScope::Global
    }
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct KernelProfile {
    pub name: String,
    /// One line saying what the preset is (`wbsim kernels`).
    pub description: String,
    pub dirty_limit_scope: DirtyLimitScope,
    /// How each device's share of the dirty limit follows its writeback
    /// completions.
    #[serde(default = "Proportions::floating")]
    pub proportions: Proportions,
    /// Added to the floating-proportion period shift of `calc_period_shift`
    /// (2.6.24 – 3.6); 0 is the kernel's own rule.
    pub proportion_shift_offset: i32,
    /// A fixed floating-proportion period shift instead of
    /// `calc_period_shift` (Jiang Zhe's Dec 2007 patch returns 12).
    #[serde(default)]
    pub proportion_shift_fixed: Option<u32>,
    /// `clip_bdi_dirty_limit` (2.6.24; later removal UNVERIFIED): a device
    /// may not claim more than what is still free in the global budget
    /// plus what it already holds.
    #[serde(default)]
    pub clip_bdi_dirty_limit: bool,
    /// How a writer over its device's limit waits between writeback
    /// chunks in `balance_dirty_pages` (writer-writeback throttling only).
    #[serde(default = "BdpWait::doubling_timeout")]
    pub bdp_wait: BdpWait,
    /// `task_dirty_limit` (2.6.24 – 3.1): heavy dirtiers get up to 1/8 less.
    pub task_dirty_limit: bool,
    /// `balance_dirty_pages` lets a device exceed its share while the system
    /// is below (background + hard limit) / 2.
    pub bdi_ramp_violation_allowed: bool,
    /// 3.0: direct reclaim calls `->writepage` on dirty file pages.
    pub direct_reclaim_writes_file_pages: bool,
    /// kswapd calls `->writepage` on dirty file pages only at priorities at
    /// or below this (12 = always, as in 3.0).
    pub kswapd_writepage_max_priority: u32,
    /// What `shrink_page_list` does with a dirty file page it may not write.
    pub skipped_dirty_file_page: SkippedDirtyPage,
    /// Gorman RFC patch 3 (Jul 2011): after a batch, if the dirty pages met
    /// are at least `nr_taken >> (DEF_PRIORITY - priority)`, count
    /// nr_vmscan_throttled and `wait_iff_congested(zone, HZ/10)`.
    pub throttle_on_dirty_isolated: bool,
    /// 3.2+ (`shrink_inactive_list`, read in 3.2.4 mm/vmscan.c; the merged
    /// form of RFC patch 3): when the pages under writeback among those
    /// isolated are at least `nr_taken >> (DEF_PRIORITY - priority)`,
    /// `wait_iff_congested(zone, BLK_RW_ASYNC, HZ/10)` (nothing counted).
    #[serde(default)]
    pub throttle_on_writeback_isolated: bool,
    /// 2.6.36+ `percpu_drift_mark` (`refresh_zone_stat_thresholds`): a zone
    /// whose per-CPU NR_FREE_PAGES drift could hide a breach of min gets a
    /// mark below which kswapd's `zone_watermark_ok_safe` reads the exact
    /// count, and (2.6.38+) smaller per-CPU thresholds while kswapd is
    /// awake (`set_pgdat_percpu_threshold`). Without it the counter's lag
    /// applies to every reader.
    #[serde(default)]
    pub percpu_drift_mark: bool,
    /// When kswapd scans a full `SWAP_CLUSTER_MAX` batch of a list whose
    /// share at this priority is zero (`get_scan_count`'s `force_scan`).
    #[serde(default = "KswapdForceScan::small_zone")]
    pub kswapd_force_scan: KswapdForceScan,
    /// 3.1+: the forced batch is scaled by the anon/file fraction like any
    /// other share, so a kind the balance gives nothing (anon whose
    /// scanned pages keep coming back referenced) is not forced either.
    /// Read in 3.1.0 (`nr_force_scan[file] = SWAP_CLUSTER_MAX * fraction /
    /// denominator`, 4508378b9523 "memcg: fix vmscan count in small
    /// memcgs") and 3.2.4 / 3.3.8 (`if (!scan && force_scan) scan =
    /// SWAP_CLUSTER_MAX;` before `scan * fraction[file] / denominator`).
    /// 3.0 (246e87a93934) forces a full batch whatever the fraction: the
    /// kswapd force-scan that Mel Gorman's 3.0-stable note blames for
    /// "workloads being pushed to swap that previously would have stayed
    /// resident".
    #[serde(default)]
    pub kswapd_force_scan_by_fraction: bool,
    /// Gorman RFC patch 5: the inodes of skipped dirty pages get
    /// I_DIRTY_RECLAIM, the flushers are woken for that many pages, and
    /// `move_expired_inodes` queues such inodes for IO regardless of age.
    pub flush_reclaim_inodes_first: bool,
    /// 3.3+ `account_page_redirty` ("writeback: fix dirtied pages
    /// accounting on redirty", read in 3.3.8 mm/page-writeback.c):
    /// `redirty_page_for_writepage` takes back the NR_DIRTIED and
    /// BDI_DIRTIED counts the re-dirtying adds, so a page a filesystem
    /// refuses to write is counted as dirtied once.
    #[serde(default)]
    pub redirty_accounting: bool,
    /// How writeback's bios reach the request queue.
    #[serde(default = "WritebackPlug::queue_only")]
    pub writeback_plug: WritebackPlug,
    /// How writers are throttled when too much memory is dirty.
    #[serde(default = "DirtyThrottle::writer_writeback")]
    pub dirty_throttle: DirtyThrottle,
    /// How many pages of each inode a flusher's writeback pass may write.
    #[serde(default = "WritebackChunk::fixed")]
    pub writeback_chunk: WritebackChunk,
    /// The block layer: the single request queue of 2.6.24 – 4.x (with
    /// congestion) or blk-mq (every driver from 5.0; no congestion state).
    #[serde(default = "BlockLayerKind::single_queue")]
    pub block_layer: BlockLayerKind,
    /// IO-less throttling's rate-limit step (`bdi_update_dirty_ratelimit`,
    /// `wb_update_dirty_ratelimit`): a damping shift of 64 or more wraps
    /// (3.2 – 4.4 on x86-64, whose `shr` takes the count mod 64) or makes
    /// the step 0 (4.5+, read in 6.1: `if (shift < BITS_PER_LONG)`).
    #[serde(default = "choices::yes")]
    pub ratelimit_shift_wraps: bool,
    /// Writeback throttling on blk-mq queues (4.10+, `block/blk-wbt.c`;
    /// 6.1 `wbt_enable_default` turns it on for every blk-mq queue not
    /// run by BFQ): buffered-write requests are capped per queue.
    #[serde(default)]
    pub wbt: bool,
    /// Which filesystems have `->writepage` for reclaim's `pageout()`.
    #[serde(default = "FsWritepage::all")]
    pub fs_writepage: FsWritepage,
    /// Who owns the LRU lists reclaim scans: each zone (2.6.24 – 4.7) or
    /// the node (4.8+, Mel Gorman's "move LRU page reclaim from zones to
    /// nodes"), whose lists hold the pages of all its zones in one age
    /// order.
    #[serde(default = "LruScope::zone")]
    pub lru_scope: LruScope,
    /// How kswapd balances a node (`balance_pgdat`).
    #[serde(default = "KswapdBalance::per_zone")]
    pub kswapd_balance: KswapdBalance,
    /// 4.11+ (Johannes Weiner, "mm: vmscan: only write dirty pages that
    /// the scanner has seen twice"; read in 6.1 `shrink_folio_list`):
    /// kswapd writes a dirty file page only if it already carries
    /// PG_reclaim (seen dirty at the tail before) and the node is flagged
    /// PGDAT_DIRTY (a whole batch of file pages was dirty and not queued
    /// for IO).
    #[serde(default)]
    pub kswapd_writes_seen_twice: bool,
    /// What reclaim does with a page under writeback it meets at the tail
    /// (`shrink_page_list` / `shrink_folio_list`).
    #[serde(default = "WritebackInReclaim::keep")]
    pub writeback_page_in_reclaim: WritebackInReclaim,
    /// 5.16+ (Mel Gorman's "mm/vmscan: throttle reclaim until some
    /// writeback completes if congested"; read in 6.1 `reclaim_throttle`,
    /// `shrink_node`, `consider_reclaim_throttle`): reclaim sleeps on the
    /// node's wait queues (WRITEBACK up to HZ/10, woken once enough pages
    /// finished writeback; NOPROGRESS and CONGESTED one jiffy) instead of
    /// `congestion_wait` / `wait_iff_congested`, and the allocator retries
    /// after direct reclaim without a wait.
    #[serde(default)]
    pub reclaim_throttle: bool,
    /// The multi-generational LRU (6.1+, `CONFIG_LRU_GEN` with
    /// /sys/kernel/mm/lru_gen/enabled set; `mm/vmscan.c` `lru_gen_*`):
    /// reclaim evicts the oldest generation of the node's pages instead of
    /// scanning active and inactive lists. `wbsim lab` switches a real
    /// kernel's MGLRU to match.
    #[serde(default)]
    pub lru_generations: bool,
    /// 4.6+ (`__setup_per_zone_wmarks`, read in 6.1): the gap between a
    /// zone's min, low and high watermarks is the larger of a quarter of
    /// min and `vm.watermark_scale_factor` ten-thousandths of the zone;
    /// before, a quarter of min (low) and a half (high).
    #[serde(default)]
    pub watermark_scale_factor: bool,
    /// 5.0+ (1c30844d2dfe, "mm: reclaim small amounts of memory when an
    /// external fragmentation event occurs"; read in 6.1 mm/page_alloc.c
    /// `steal_suitable_fallback`, `boost_watermark`, `rmqueue` and
    /// mm/vmscan.c `balance_pgdat`): the zones' free pages are grouped by
    /// mobility in pageblocks (`crate::mm::buddy`), a fallback that
    /// fragments a pageblock boosts the zone's watermarks by a pageblock
    /// (`vm.watermark_boost_factor`) and wakes kswapd for that zone alone,
    /// and kswapd reclaims the boost without writing or swapping.
    #[serde(default)]
    pub watermark_boosting: bool,
    /// The per-CPU page lists sized and drained as 5.14+ does (Mel
    /// Gorman's "mm/page_alloc" series; read in 6.1 mm/page_alloc.c
    /// `zone_batchsize`, `zone_highsize`, `nr_pcp_high`, `nr_pcp_free`,
    /// `free_unref_page_commit`, `rmqueue_pcplist`, and mm/vmscan.c
    /// `set_reclaim_active`): `high` is the zone's low watermark split
    /// over the node's CPUs (at least 4 x batch, batch up to 1 MiB), only
    /// 4 x batch while kswapd balances the zone (ZONE_RECLAIM_ACTIVE); a
    /// CPU that frees without allocating returns twice the batch each
    /// time (`free_factor`, up to 2^5); freed pages go to the head of the
    /// list (hot, all frees since 4.15) and are the next allocated. Off:
    /// 2.6.24 – 3.x (`setup_pageset`: high 6 x batch; reclaim frees cold,
    /// to the tail).
    #[serde(default)]
    pub pcp_high_from_watermark: bool,
    /// Whether xfs attaches buffer heads to its data pages (2.6.24 – 4.x,
    /// `xfs_vm_write_begin` → `block_write_begin`). 6.1's xfs writes
    /// through iomap (`iomap_write_begin`; an `iomap_page` only when a
    /// block is smaller than a page), so none (read in 6.1
    /// fs/xfs/xfs_aops.c and fs/iomap/buffered-io.c).
    #[serde(default = "choices::yes")]
    pub xfs_buffer_heads: bool,
    /// ext4's `io_end` for writes into unwritten extents (dioread_nolock,
    /// the default from 5.6; read in 6.1 fs/ext4/page-io.c `ext4_end_bio`,
    /// `ext4_add_complete_io`, `ext4_end_io_rsv_work` and fs/ext4/inode.c
    /// `ext4_writepages`, `MAX_WRITEPAGES_EXTENT_LEN`): the pages of one
    /// mapped extent, at most this many, end writeback together, once all
    /// their bios are done, in the `ext4-rsv-conversion` worker that
    /// converts the extent. 0: each page ends writeback when its request
    /// completes.
    #[serde(default)]
    pub ext4_io_end_pages: u32,
    /// xfs's ioend for writes past the on-disk file size (read in 6.1
    /// fs/iomap/buffered-io.c `iomap_can_add_to_ioend`, `IOEND_BATCH_SIZE`,
    /// and fs/xfs/xfs_aops.c `xfs_prepare_ioend`, `xfs_end_bio`,
    /// `xfs_end_io`): a contiguous run of at most this many pages of one
    /// `->writepages` call ends writeback together in the `xfs-conv`
    /// worker that updates the file size. 0: per request.
    #[serde(default)]
    pub xfs_ioend_pages: u32,
    /// btrfs's data bio (read in 6.1 fs/btrfs/extent_io.c
    /// `submit_extent_page`, `btrfs_bio_add_page`, `alloc_new_bio`,
    /// `end_bio_extent_writepage`, and block/bio.c `bio_add_page`): one
    /// `->writepages` call adds page after page of a contiguous run to a
    /// bio of this many segments (`BIO_MAX_VECS`), a segment growing while
    /// the pages are physically contiguous (multi-page bvecs, 5.1+); the
    /// block layer splits it into requests, and every page of it ends
    /// writeback when the last of them completes. 0: each page ends
    /// writeback when its request completes (a bio no bigger than a
    /// request).
    #[serde(default)]
    pub btrfs_bio_max_vecs: u32,
    /// btrfs's `->writepages` writes a whole delalloc range once it has
    /// allocated it (read in 6.1 fs/btrfs/extent_io.c `writepage_delalloc`,
    /// `find_lock_delalloc_range`): at a page that starts one (dirty pages
    /// with no blocks yet, up to BTRFS_MAX_EXTENT_SIZE = 128 MiB), it
    /// allocates all of it and raises `nr_to_write` to the range's pages
    /// when the range is under twice this many, else sets it to this
    /// many. 0: `nr_to_write` is the flusher's chunk.
    #[serde(default)]
    pub btrfs_delalloc_write_pages: u32,
    /// Pages of btrfs tree blocks that a mount reads and holds: the root
    /// node of each tree, whose extent buffer its root keeps referenced
    /// (`root->node`, `root->commit_root`), so `btree_release_folio` →
    /// `try_release_extent_buffer` fails (`eb->refs` > 1) and reclaim
    /// activates the page instead of freeing it (read in 6.1
    /// fs/btrfs/disk-io.c and fs/btrfs/extent_io.c). 0: not modelled.
    #[serde(default)]
    pub btrfs_mount_tree_pages: u32,
    /// A task that updates a metadata buffer the running jbd2 commit is
    /// writing to the log waits until that write is done
    /// (`do_get_write_access` on a BJ_Shadow buffer; read in 6.1
    /// fs/jbd2/transaction.c and fs/jbd2/commit.c): an ext4 writer
    /// extending its file (`generic_write_end` → `mark_inode_dirty` →
    /// `ext4_reserve_inode_write`) sleeps while the commit's log write
    /// waits behind the data writes queued at the device. Modelled for the
    /// 6.1 presets; the 3.x presets leave it off until their ext4
    /// experiments are checked with it.
    #[serde(default)]
    pub jbd2_shadow_wait: bool,
    /// Refault detection for file pages (3.15+, Johannes Weiner's
    /// "mm: thrash detection-based file cache sizing"; read in 6.1
    /// mm/workingset.c `workingset_eviction`, `workingset_refault`,
    /// `workingset_activation`, mm/filemap.c `filemap_add_folio`): reclaim
    /// leaves a shadow entry with the lruvec's `nonresident_age` where it
    /// removes a file page; a page read back in (not one allocated to be
    /// written, `__GFP_WRITE`) whose refault distance is within the
    /// workingset (the active file list, plus the anon lists while swap
    /// has room) starts on the active list (`workingset_refault_file`,
    /// `workingset_activate_file`). With MGLRU, `lru_gen_refault` counts
    /// a refault of the type's oldest generation and activates nothing.
    #[serde(default)]
    pub workingset_refault: bool,
    /// `mark_page_accessed` activates a page still in this CPU's LRU-add
    /// pagevec (3.11+, Mel Gorman's "mm: activate !PageLRU pages on
    /// mark_page_accessed if page is on local pagevec"; read in 6.1
    /// mm/swap.c `folio_mark_accessed`, `__lru_cache_activate_folio`): a
    /// referenced page not yet on a list is marked active, and goes onto
    /// the active list when the pagevec drains. Without it (3.0) such a
    /// page stays referenced and inactive.
    #[serde(default)]
    pub mark_accessed_in_pagevec: bool,
    /// With no idle CPU, a woken task queues on the CPU that woke it when
    /// that CPU's PELT load, plus the task's own, is under its previous
    /// CPU's less the task's by the 8% bias (`wake_affine_weight`, 4.13+;
    /// read in 6.1 kernel/sched/fair.c); off: on its previous CPU, which
    /// is what 3.0's `wake_affine` with instantaneous run-queue weights
    /// gives when each CPU runs one task.
    #[serde(default)]
    pub wake_affine_weight: bool,
}

const PRESETS: &[(&str, &str)] = &[
    ("2.6.24", include_str!("presets/2.6.24.toml")),
    (
        "2.6.24+violation",
        include_str!("presets/2.6.24+violation.toml"),
    ),
    (
        "2.6.24+shift-12",
        include_str!("presets/2.6.24+shift-12.toml"),
    ),
    (
        "2.6.24+violation+shift-12",
        include_str!("presets/2.6.24+violation+shift-12.toml"),
    ),
    ("3.7", include_str!("presets/3.7.toml")),
    ("3.0-vanilla", include_str!("presets/3.0-vanilla.toml")),
    (
        "3.0+per-zone-dirty",
        include_str!("presets/3.0+per-zone-dirty.toml"),
    ),
    (
        "3.0+per-zone-dirty-v1",
        include_str!("presets/3.0+per-zone-dirty-v1.toml"),
    ),
    ("3.0-rc6", include_str!("presets/3.0-rc6.toml")),
    (
        "3.0-rc6+reclaim-1",
        include_str!("presets/3.0-rc6+reclaim-1.toml"),
    ),
    (
        "3.0-rc6+reclaim-1-2",
        include_str!("presets/3.0-rc6+reclaim-1-2.toml"),
    ),
    (
        "3.0-rc6+reclaim-1-3",
        include_str!("presets/3.0-rc6+reclaim-1-3.toml"),
    ),
    (
        "3.0-rc6+reclaim-1-4",
        include_str!("presets/3.0-rc6+reclaim-1-4.toml"),
    ),
    (
        "3.0-rc6+reclaim-1-5",
        include_str!("presets/3.0-rc6+reclaim-1-5.toml"),
    ),
    ("3.1-mmotm", include_str!("presets/3.1-mmotm.toml")),
    ("3.2", include_str!("presets/3.2.toml")),
    ("3.3", include_str!("presets/3.3.toml")),
    ("3.10", include_str!("presets/3.10.toml")),
    (
        "3.10+writeback-plug",
        include_str!("presets/3.10+writeback-plug.toml"),
    ),
    ("6.1", include_str!("presets/6.1.toml")),
    ("6.1+mglru", include_str!("presets/6.1+mglru.toml")),
    (
        "3.1-mmotm+per-zone-dirty",
        include_str!("presets/3.1-mmotm+per-zone-dirty.toml"),
    ),
];

/// Names of the built-in presets.
pub fn preset_names() -> Vec<&'static str> {
    PRESETS.iter().map(|(n, _)| *n).collect()
}

/// Each preset's name and one-line description, in `preset_names` order.
pub fn preset_descriptions() -> Vec<(&'static str, String)> {
    PRESETS
        .iter()
        .map(|(n, _)| (*n, preset(n).map(|p| p.description).unwrap_or_default()))
        .collect()
}

/// Load a built-in preset by name, resolved over its `base` chain.
pub fn preset(name: &str) -> Result<KernelProfile, String> {
    layers::resolve_preset(name).map(|r| r.profile)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_preset_loads_and_is_named_after_itself() {
        for name in preset_names() {
            let p = preset(name).unwrap();
            assert_eq!(p.name, name);
            assert!(
                !p.description.is_empty() && p.description.len() <= 100,
                "{name}"
            );
        }
    }

    #[test]
    fn unknown_preset_lists_the_known_ones() {
        let e = preset("2.4-ancient").unwrap_err();
        assert!(e.contains("3.0-vanilla"), "{e}");
    }
}
