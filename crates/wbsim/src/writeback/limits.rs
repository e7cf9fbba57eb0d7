//! Dirty limits, Linux 3.0 (`mm/page-writeback.c`):
//! `determine_dirtyable_memory`, `global_dirty_limits`, `bdi_dirty_limit`,
//! `task_dirty_limit`, `calc_period_shift`; 2.6.24's
//! `clip_bdi_dirty_limit`.

use crate::kernel::DirtyLimitScope;
use crate::writeback::WritebackHost;

/// (background threshold, hard threshold) in pages.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct DirtyLimits {
    pub background: u64,
    pub thresh: u64,
}

/// `global_dirty_limits` (3.0) from dirtyable memory and the sysctls. No 5 %
/// floor any more; `*_bytes` win over ratios; background is halved if it is
/// not below the hard limit.
pub fn dirty_limits(
    dirtyable: u64,
    s: &crate::kernel::SysctlConfig,
    page_bytes: u64,
) -> DirtyLimits {
    let thresh = if s.dirty_bytes > 0 {
        s.dirty_bytes.div_ceil(page_bytes)
    } else {
        s.dirty_ratio as u64 * dirtyable / 100
    };
    let mut background = if s.dirty_background_bytes > 0 {
        s.dirty_background_bytes.div_ceil(page_bytes)
    } else {
        s.dirty_background_ratio as u64 * dirtyable / 100
    };
    if background >= thresh {
        background = thresh / 2;
    }
    DirtyLimits { background, thresh }
}

/// `bdi_dirty_limit`: the device's share of `thresh` by its fraction of
/// recent completions, plus its min_ratio, capped by max_ratio.
pub fn bdi_share(
    thresh: u64,
    num: u64,
    den: u64,
    min_ratio: u32,
    max_ratio: u32,
    sum_min_ratio: u32,
) -> u64 {
    let mut share = thresh * (100 - sum_min_ratio as u64) / 100;
    share = if den == 0 {
        0
    } else {
        (share as u128 * num as u128 / den as u128) as u64
    };
    share += thresh * min_ratio as u64 / 100;
    share.min(thresh * max_ratio as u64 / 100)
}

/// `task_dirty_limit`: a task doing most of the dirtying gets up to 1/8
/// less, never below half.
pub fn task_limit(bdi_thresh: u64, num: u64, den: u64) -> u64 {
    if den == 0 {
        return bdi_thresh;
    }
    let inv = ((bdi_thresh >> 3) as u128 * num as u128 / den as u128) as u64;
    (bdi_thresh - inv.min(bdi_thresh)).max(bdi_thresh / 2)
}

/// Dirty limits: global, per bdi, per task and per zone.
pub trait Limits: WritebackHost {
    /// `determine_dirtyable_memory` (3.0): free pages plus reclaimable
    /// (file LRU; anon too while swap has free slots) + 1.
    /// With per-zone limits (3.3 `determine_dirtyable_memory`, read in
    /// 3.3.8) the sum less `dirty_balance_reserve` (pages the allocator
    /// keeps back anyway).
    fn dirtyable_memory(&self) -> u64 {
        let mut pages = self.mm().nr_free_pages() + self.mm().global_reclaimable_pages();
        if self.profile().dirty_limit_scope.per_zone() {
            let reserve: u64 = (0..self.mm().nr_zones())
                .map(|z| self.zone_dirty_balance_reserve(z))
                .sum();
            pages = pages.saturating_sub(reserve);
        }
        pages + 1
    }

    /// A zone's `dirty_balance_reserve`: its part of `totalreserve_pages`
    /// (`crate::mm::zone::setup_reserve_pages`).
    fn zone_dirty_balance_reserve(&self, z: usize) -> u64 {
        self.mm().zone(z).reserve_pages
    }

    /// `zone_dirtyable_memory` (3.3.8): the zone's free and reclaimable
    /// pages less its `dirty_balance_reserve` (the kernel's unsigned
    /// subtraction never meets a zone whose reclaimable pages do not cover
    /// it; the model stops at 0).
    fn zone_dirtyable_memory(&self, z: usize) -> u64 {
        let pages = self.mm().zone(z).nr_free() + self.mm().zone_reclaimable_pages(z);
        pages.saturating_sub(self.zone_dirty_balance_reserve(z))
    }

    /// `zone_dirty_limit`: the global hard limit in proportion to the zone's
    /// dirtyable memory.
    #[inline(always)]
    fn zone_dirty_limit(&self, z: usize) -> u64 {
        self.dirty_limit_of(self.zone_dirtyable_memory(z))
    }

    /// The hard limit of a part of memory (a zone, 3.3+ `zone_dirty_limit`;
    /// a node, 4.8+ `node_dirty_limit`) with `memory_pages` dirtyable:
    /// `dirty_ratio` of it, or `dirty_bytes` in proportion to its share of
    /// the machine's dirtyable memory.
    fn dirty_limit_of(&self, memory_pages: u64) -> u64 {
        if self.sysctl().dirty_bytes > 0 {
            let global = self.dirtyable_memory();
            let bytes_pages = self.sysctl().dirty_bytes.div_ceil(self.mm().unit().bytes());
            (bytes_pages as u128 * memory_pages as u128 / global as u128) as u64
        } else {
            self.sysctl().dirty_ratio as u64 * memory_pages / 100
        }
    }

    fn global_dirty_limits(&self) -> DirtyLimits {
        dirty_limits(
            self.dirtyable_memory(),
            self.sysctl(),
            self.mm().unit().bytes(),
        )
    }

    /// `bdi_writeout_fraction`: the device's share of recent writeback
    /// completions as (numerator, denominator) ([`super::shares`]).
    fn bdi_writeout_fraction(&mut self, bdi: usize) -> (u64, u64) {
        let now = self.now();
        let wb = self.wb_mut();
        wb.completions.fraction(&mut wb.bdis[bdi].completions, now)
    }

    /// `bdi_writeout_fraction` without changing any state (for sampling).
    fn bdi_writeout_fraction_now(&self, bdi: usize) -> (u64, u64) {
        let wb = self.wb();
        wb.completions
            .fraction_now(&wb.bdis[bdi].completions, self.now())
    }

    /// `__bdi_writeout_inc`: one completion for the device's proportion.
    #[inline(always)]
    fn bdi_writeout_inc(&mut self, bdi: usize) {
        let now = self.now();
        let wb = self.wb_mut();
        wb.completions.inc(&mut wb.bdis[bdi].completions, now);
    }

    /// `task_dirty_inc`: count one page dirtied by `tid` for its share of
    /// the dirtying (only kernels with a per-task dirty limit keep it).
    fn task_dirty_inc(&mut self, tid: u32) {
        if self.profile().task_dirty_limit {
            let wb = self.wb_mut();
            wb.prop_dirties.inc(&mut wb.task_dirties[tid as usize]);
        }
    }

    /// `bdi_dirty_limit`, then (2.6.24) `clip_bdi_dirty_limit`, then
    /// `task_dirty_limit` for `tid`.
    fn bdi_thresh(&mut self, bdi: usize, thresh: u64, tid: Option<u32>) -> u64 {
        let sum_min: u32 = self.wb().bdis.iter().map(|b| b.min_ratio).sum();
        let (num, den) = self.bdi_writeout_fraction(bdi);
        let b = &self.wb().bdis[bdi];
        let mut limit = bdi_share(thresh, num, den, b.min_ratio, b.max_ratio, sum_min);
        if self.profile().clip_bdi_dirty_limit {
            let global_dirty = self.mm().gauges().nr_dirty + self.mm().gauges().nr_writeback;
            let held = b.reclaimable + b.writeback;
            limit = limit.min(thresh.saturating_sub(global_dirty) + held);
        }
        if let (Some(t), true) = (tid, self.profile().task_dirty_limit) {
            let wb = self.wb_mut();
            let (n, d) = wb.prop_dirties.fraction(&mut wb.task_dirties[t as usize]);
            limit = task_limit(limit, n, d);
        }
        limit
    }
}

impl<T: WritebackHost + ?Sized> Limits for T {}

/// The scope of the dirty limits (global; per zone, 3.3+; per node,
/// 4.8+), which the page allocator also asks for.
pub fn dirty_limit_scope<H: WritebackHost + ?Sized>(sys: &H) -> DirtyLimitScope {
    sys.profile().dirty_limit_scope
}

/// Whether a `__GFP_WRITE` allocation may take a page from zone `z`:
/// `zone_dirty_ok` (3.3 – 4.7), the zone's dirty + writeback pages within
/// its limit; `node_dirty_ok` (4.8+) for the zone's node.
#[inline(always)]
pub fn zone_dirty_ok<H: WritebackHost + ?Sized>(sys: &H, z: usize) -> bool {
    if sys.profile().dirty_limit_scope == DirtyLimitScope::PerNode {
        return node_dirty_ok(sys, sys.mm().zone_node(z));
    }
    let zone = sys.mm().zone(z);
    zone.nr_dirty + zone.nr_writeback <= sys.zone_dirty_limit(z)
}

/// `node_dirty_ok` (4.8+, read in 6.1 mm/page-writeback.c with
/// `node_dirty_limit` and `node_dirtyable_memory`): the node's dirty and
/// writeback pages within `dirty_ratio` of its dirtyable memory, which is
/// its zones' free pages less the node's reserve (`totalreserve_pages`,
/// each zone's largest `lowmem_reserve` plus its high watermark) plus its
/// file LRU pages; with `dirty_bytes`, that many pages in proportion to
/// the node's share of the machine's dirtyable memory.
pub fn node_dirty_ok<H: WritebackHost + ?Sized>(sys: &H, nid: usize) -> bool {
    let zones = sys.mm().node_zones(nid);
    let (mut free, mut reserve, mut file, mut pending) = (0, 0, 0, 0);
    for z in zones {
        let zone = sys.mm().zone(z);
        if zone.present_pages == 0 {
            continue;
        }
        free += zone.nr_free();
        reserve += sys.zone_dirty_balance_reserve(z);
        file += zone.nr_file_lru();
        pending += zone.nr_dirty + zone.nr_writeback;
    }
    pending <= sys.dirty_limit_of(free.saturating_sub(reserve) + file)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::kernel::SysctlConfig;

    fn sysctl(ratio: u32, bg: u32) -> SysctlConfig {
        SysctlConfig {
            dirty_ratio: ratio,
            dirty_background_ratio: bg,
            ..SysctlConfig::default()
        }
    }

    /// Writeback spec test vector 4.
    #[test]
    fn global_thresholds() {
        let l = dirty_limits(1_000_000, &sysctl(20, 10), 4096);
        assert_eq!((l.thresh, l.background), (200_000, 100_000));
        let l = dirty_limits(1_000_000, &sysctl(20, 30), 4096);
        assert_eq!(l.background, 100_000);
        let mut s = sysctl(20, 10);
        s.dirty_bytes = 8192 * 3 + 1;
        assert_eq!(dirty_limits(1_000_000, &s, 4096).thresh, 7);
    }

    /// Test vector 13: device threshold.
    #[test]
    fn device_threshold() {
        assert_eq!(bdi_share(200_000, 1, 4, 0, 100, 0), 50_000);
        assert_eq!(bdi_share(200_000, 1, 4, 0, 1, 0), 2_000);
        assert_eq!(bdi_share(200_000, 1, 4, 10, 100, 10), 65_000);
    }

    #[test]
    fn task_limit_takes_up_to_an_eighth() {
        assert_eq!(task_limit(80_000, 1, 1), 70_000);
        assert_eq!(task_limit(80_000, 0, 1), 80_000);
        assert_eq!(task_limit(80_000, 1, 2), 75_000);
    }
}
