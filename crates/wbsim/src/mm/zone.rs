//! Zones, watermarks and lowmem_reserve (Linux 3.0 `mm/page_alloc.c`:
//! `init_per_zone_wmark_min`, `setup_per_zone_wmarks`,
//! `setup_per_zone_lowmem_reserve`, `__zone_watermark_ok`).

use super::buddy::Buddy;
use super::free_counter::FreePagesCounter;
use super::lruvec::Lruvec;
use super::page::{
    ListHead, LRU_ACTIVE_ANON, LRU_ACTIVE_FILE, LRU_INACTIVE_ANON, LRU_INACTIVE_FILE, NR_LRU_LISTS,
};
use super::pcp::PerCpuPages;

#[derive(Debug, Clone)]
pub struct Zone {
    pub name: &'static str,
    /// The node the zone is on.
    pub node: usize,
    /// vmstat suffix: dma, dma32, normal.
    pub suffix: &'static str,
    pub start_pfn: u32,
    pub present_pages: u64,
    /// Pages the kernel sized the watermarks, `lowmem_reserve` and the
    /// per-CPU batch from at boot: 3.8+'s `zone_managed_pages` (the
    /// scenario's `managed_mib`), else the present pages, as 3.0 – 3.7
    /// sized them.
    pub managed_pages: u64,
    /// Buddy free pages (per-CPU lists not included), on one list.
    pub free: ListHead,
    /// Buddy free pages by order and migratetype instead (5.0+ profiles,
    /// [`crate::mm::buddy`]); `free` is then empty.
    pub buddy: Option<Buddy>,
    /// `NR_FREE_PAGES` as counted: the buddy pages less what the CPUs have
    /// not folded in yet.
    pub free_counter: FreePagesCounter,
    /// Each CPU's free pages of this zone, and the lists' `high` / `batch`.
    pub pcp: Vec<PerCpuPages>,
    pub pcp_high: u64,
    pub pcp_batch: u64,
    /// ZONE_RECLAIM_ACTIVE (5.14+): kswapd is balancing this zone, and
    /// the per-CPU lists hold at most 4 x batch (`nr_pcp_high`).
    pub reclaim_active: bool,
    pub wmark_min: u64,
    pub wmark_low: u64,
    pub wmark_high: u64,
    /// `_watermark[]`: min, low and high before the boost; the three
    /// fields above are `wmark_pages()`, these plus `watermark_boost`.
    pub wmark_base: [u64; 3],
    /// `zone->watermark_boost` (5.0+, [`crate::mm::buddy`]).
    pub watermark_boost: u64,
    /// ZONE_BOOSTED_WATERMARK: a fallback boosted the zone; the
    /// allocation that took it wakes kswapd for this zone.
    pub boosted_wake: bool,
    /// The fallbacks of the last per-CPU refill, for the allocating
    /// task's `mm_page_alloc_extfrag` events (emptied at once).
    pub fallbacks: Vec<super::buddy::Fallback>,
    /// `lowmem_reserve[j]`: pages this zone keeps back from allocations whose
    /// preferred zone (classzone) is `j`.
    pub lowmem_reserve: Vec<u64>,
    /// The zone's LRU lists (per zone up to 4.7; empty when the node
    /// owns them).
    pub lruvec: Lruvec,
    /// The zone's pages on each LRU list, whoever owns the lists
    /// (`NR_ZONE_INACTIVE_FILE` and its siblings, 4.8+): what watermark
    /// and dirtyable-memory sums and the reports count.
    pub lru_pages: [u64; NR_LRU_LISTS],
    pub nr_dirty: u64,
    pub nr_writeback: u64,
    pub nr_isolated_file: u64,
    pub nr_isolated_anon: u64,
    /// Pages scanned since the last page was freed into the zone
    /// (`zone->pages_scanned`), for all_unreclaimable.
    pub pages_scanned: u64,
    pub all_unreclaimable: bool,
    /// ZONE_CONGESTED (3.0 `shrink_page_list`).
    pub congested: bool,
    /// `NR_SLAB_RECLAIMABLE`: the zone's pages in the buffer_head cache
    /// (the one slab cache modelled in page frames).
    pub nr_slab_reclaimable: u64,
    /// The zone's part of `totalreserve_pages` (3.3+
    /// `calculate_totalreserve_pages`): its largest `lowmem_reserve` plus
    /// its high watermark, at most its size; set with the watermarks.
    pub reserve_pages: u64,
}

impl Zone {
    pub fn new(name: &'static str, suffix: &'static str, start_pfn: u32, pages: u64) -> Zone {
        Zone {
            name,
            node: 0,
            suffix,
            start_pfn,
            present_pages: pages,
            managed_pages: pages,
            free: ListHead::default(),
            buddy: None,
            free_counter: FreePagesCounter::default(),
            pcp: Vec::new(),
            pcp_high: 0,
            pcp_batch: 1,
            reclaim_active: false,
            wmark_min: 0,
            wmark_low: 0,
            wmark_high: 0,
            wmark_base: [0; 3],
            watermark_boost: 0,
            boosted_wake: false,
            fallbacks: Vec::new(),
            lowmem_reserve: Vec::new(),
            lruvec: Lruvec::default(),
            lru_pages: [0; NR_LRU_LISTS],
            nr_dirty: 0,
            nr_writeback: 0,
            nr_isolated_file: 0,
            nr_isolated_anon: 0,
            pages_scanned: 0,
            all_unreclaimable: false,
            congested: false,
            nr_slab_reclaimable: 0,
            reserve_pages: 0,
        }
    }

    /// The zone's type as the kernel's `zone_idx` numbers it (ZONE_DMA 0,
    /// ZONE_DMA32 1, ZONE_NORMAL 2).
    pub fn zone_type(&self) -> usize {
        match self.suffix {
            "dma" => 0,
            "dma32" => 1,
            _ => 2,
        }
    }

    /// `zone_page_state(zone, NR_FREE_PAGES)`: what every reader of the
    /// counter (watermark checks, /proc/zoneinfo) sees.
    pub fn nr_free(&self) -> u64 {
        (self.nr_free_snapshot() as i64 - self.free_counter.pending()).max(0) as u64
    }

    /// `zone_page_state_snapshot`: the buddy pages themselves.
    pub fn nr_free_snapshot(&self) -> u64 {
        self.free.len + self.buddy.as_ref().map_or(0, |b| b.nr_free)
    }

    /// `nr_pcp_high`: the per-CPU lists' `high`, or 4 x batch while
    /// kswapd balances the zone (5.14+ sets `reclaim_active`).
    pub fn pcp_high_now(&self) -> u64 {
        match self.reclaim_active {
            true => self.pcp_high.min(self.pcp_batch << 2),
            false => self.pcp_high,
        }
    }

    /// `boost_watermark` (5.0+, read in 6.1): a fragmenting fallback
    /// raises the zone's watermarks by a pageblock, up to `factor`
    /// ten-thousandths of its high watermark (at least a pageblock); not
    /// in a zone of four pageblocks or less. Whether it boosted.
    pub fn boost_watermark(&mut self, factor: u32) -> bool {
        let pageblock = self
            .buddy
            .as_ref()
            .map_or(super::buddy::PAGEBLOCK_PAGES, |b| b.pageblock_pages());
        if factor == 0 || 4 * pageblock > self.managed_pages {
            return false;
        }
        let max_boost = (self.wmark_base[2] * factor as u64 / 10_000).max(pageblock);
        self.set_watermark_boost((self.watermark_boost + pageblock).min(max_boost));
        true
    }

    /// Set `watermark_boost`; the watermarks every check reads follow.
    pub fn set_watermark_boost(&mut self, boost: u64) {
        self.watermark_boost = boost;
        self.wmark_min = self.wmark_base[0] + boost;
        self.wmark_low = self.wmark_base[1] + boost;
        self.wmark_high = self.wmark_base[2] + boost;
    }

    pub fn nr_file_lru(&self) -> u64 {
        self.lru_pages[LRU_INACTIVE_FILE] + self.lru_pages[LRU_ACTIVE_FILE]
    }

    pub fn nr_anon_lru(&self) -> u64 {
        self.lru_pages[LRU_INACTIVE_ANON] + self.lru_pages[LRU_ACTIVE_ANON]
    }

    /// `zone_reclaimable_pages`: file pages, plus anonymous ones while swap
    /// has free slots.
    pub fn reclaimable_pages(&self, swap_free: bool) -> u64 {
        self.nr_file_lru() + if swap_free { self.nr_anon_lru() } else { 0 }
    }

    /// `inactive_anon_is_low` (3.0): the inactive anon list is smaller than
    /// the active one over `inactive_ratio` (`calculate_zone_inactive_ratio`:
    /// `int_sqrt(10 * gigabytes)`, at least 1).
    pub fn inactive_anon_is_low(&self) -> bool {
        let gb = self.present_pages >> 18;
        let ratio = if gb > 0 { int_sqrt(10 * gb) } else { 1 };
        self.lru_pages[LRU_INACTIVE_ANON] * ratio < self.lru_pages[LRU_ACTIVE_ANON]
    }

    /// `__zone_watermark_ok` for order 0 (3.0): free − (2^0 + 1) must stay
    /// above `mark + lowmem_reserve[classzone]`.
    pub fn watermark_ok(&self, mark: u64, classzone: usize) -> bool {
        self.watermark_ok_with(self.nr_free(), mark, classzone)
    }

    /// `zone_watermark_ok_safe` (2.6.36+), kswapd's check: below the
    /// zone's `percpu_drift_mark` the exact free count is used.
    pub fn watermark_ok_safe(&self, mark: u64, classzone: usize) -> bool {
        let mut free = self.nr_free();
        if free < self.free_counter.drift_mark() {
            free = self.nr_free_snapshot();
        }
        self.watermark_ok_with(free, mark, classzone)
    }

    fn watermark_ok_with(&self, free: u64, mark: u64, classzone: usize) -> bool {
        let free = free as i64 - 2;
        free > (mark + self.lowmem_reserve[classzone]) as i64
    }
}

/// `init_per_zone_wmark_min` (3.0): `int_sqrt(lowmem_kbytes * 16)` clamped to
/// [128, 65536]. All modelled zones are lowmem on x86-64. `lowmem_pages`
/// counts 4 KiB pages.
pub fn default_min_free_kbytes(lowmem_pages: u64) -> u64 {
    let lowmem_kbytes = lowmem_pages * 4;
    int_sqrt(lowmem_kbytes * 16).clamp(128, 65536)
}

pub fn int_sqrt(x: u64) -> u64 {
    if x < 2 {
        return x;
    }
    let mut r = (x as f64).sqrt() as u64;
    while r * r > x {
        r -= 1;
    }
    while (r + 1) * (r + 1) <= x {
        r += 1;
    }
    r
}

/// The watermark gaps' rule of a profile (chosen at build; this file is
/// the dispatch point): `Some(vm.watermark_scale_factor)` from 4.6, `None`
/// before.
pub fn watermark_scale(
    profile: &crate::kernel::KernelProfile,
    sysctl: &crate::kernel::SysctlConfig,
) -> Option<u32> {
    profile
        .watermark_scale_factor
        .then_some(sysctl.watermark_scale_factor)
}

/// `setup_per_zone_wmarks`: min proportional to zone size; 3.0 – 4.5 put
/// low at min + min/4 and high at min + min/2; 4.6+ (`scale`, read in 6.1
/// `__setup_per_zone_wmarks`) spaces min, low and high by the larger of
/// min/4 and `scale` ten-thousandths of the zone. Pages are of `page_kib`
/// KiB (`min_free_kbytes >> (PAGE_SHIFT - 10)`).
pub fn setup_watermarks(
    zones: &mut [Zone],
    min_free_kbytes: u64,
    page_kib: u64,
    scale: Option<u32>,
) {
    let pages_min = min_free_kbytes / page_kib;
    let lowmem_pages: u64 = zones.iter().map(|z| z.managed_pages).sum();
    for z in zones.iter_mut() {
        let tmp = pages_min * z.managed_pages / lowmem_pages.max(1);
        z.wmark_min = tmp;
        match scale {
            None => {
                z.wmark_low = tmp + tmp / 4;
                z.wmark_high = tmp + tmp / 2;
            }
            Some(factor) => {
                let gap = (tmp / 4).max(z.managed_pages * factor as u64 / 10_000);
                z.wmark_low = tmp + gap;
                z.wmark_high = tmp + 2 * gap;
            }
        }
        z.wmark_base = [z.wmark_min, z.wmark_low, z.wmark_high];
    }
}

/// `setup_per_zone_lowmem_reserve` with the 3.0 default ratios
/// (DMA 256, DMA32 256, Normal 32).
pub fn setup_lowmem_reserve(zones: &mut [Zone], ratios: &[u64]) {
    let n = zones.len();
    for z in zones.iter_mut() {
        z.lowmem_reserve = vec![0; n];
    }
    for j in 0..n {
        let mut pages = zones[j].managed_pages;
        let mut idx = j;
        while idx > 0 {
            idx -= 1;
            let ratio = ratios.get(idx).copied().unwrap_or(32).max(1);
            zones[idx].lowmem_reserve[j] = pages / ratio;
            pages += zones[idx].managed_pages;
        }
    }
}

/// `calculate_totalreserve_pages` (3.3, read in 3.3.8 mm/page_alloc.c):
/// each zone keeps back its largest `lowmem_reserve[j]` (for j from the
/// zone up, which is its largest, lower entries being 0) plus its high
/// watermark, at most its size. Run after the watermarks and reserves.
pub fn setup_reserve_pages(zones: &mut [Zone]) {
    for z in zones.iter_mut() {
        let max_reserve = z.lowmem_reserve.iter().copied().max().unwrap_or(0);
        z.reserve_pages = (max_reserve + z.wmark_high).min(z.managed_pages);
    }
}

/// `setup_per_zone_lowmem_reserve` on a machine of several nodes: each
/// node's zones reserve against the node's higher zones (as above), and
/// `lowmem_reserve` is indexed by the machine's zone index so that an
/// allocation whose preferred zone is on another node finds the reserve
/// against that zone's type (the kernel indexes it by zone type):
/// against zone `j` of another node, a zone keeps the reserve it keeps
/// against its own node's highest zone of a type no higher than `j`'s
/// (none: 0). `ratios`: each zone's `lowmem_reserve_ratio`. One node: as
/// above.
pub fn setup_lowmem_reserve_nodes(
    zones: &mut [Zone],
    nodes: &[std::ops::Range<usize>],
    ratios: &[u64],
) {
    let kinds: Vec<usize> = zones.iter().map(Zone::zone_type).collect();
    let total = zones.len();
    for range in nodes {
        setup_lowmem_reserve(&mut zones[range.clone()], &ratios[range.clone()]);
    }
    for range in nodes {
        for z in range.clone() {
            let local = std::mem::take(&mut zones[z].lowmem_reserve);
            zones[z].lowmem_reserve = (0..total)
                .map(|j| {
                    if range.contains(&j) {
                        return local[j - range.start];
                    }
                    range
                        .clone()
                        .rev()
                        .find(|&l| kinds[l] <= kinds[j])
                        .map_or(0, |l| local[l - range.start])
                })
                .collect();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn three_zones() -> Vec<Zone> {
        vec![
            Zone::new("DMA", "dma", 0, 3840),
            Zone::new("DMA32", "dma32", 3840, 830_976),
            Zone::new("Normal", "normal", 834_816, 129_024),
        ]
    }

    #[test]
    fn watermarks_are_proportional() {
        let mut zones = three_zones();
        let total: u64 = zones.iter().map(|z| z.present_pages).sum();
        let mfk = default_min_free_kbytes(total);
        // isqrt(963840 * 4 * 16) = 7854
        assert_eq!(mfk, 7854);
        setup_watermarks(&mut zones, mfk, 4, None);
        let pages_min = mfk / 4;
        let n = &zones[2];
        assert_eq!(n.wmark_min, pages_min * 129_024 / total);
        assert_eq!(n.wmark_low, n.wmark_min + n.wmark_min / 4);
        assert_eq!(n.wmark_high, n.wmark_min + n.wmark_min / 2);
    }

    /// 3.8+ size the watermarks and reserves by managed pages: Debian
    /// 6.1's 256 MiB guest managed 3,840 DMA and about 49,152 DMA32 pages
    /// at boot (DMA's protection against DMA32 is 192), from which the
    /// kernel's own min_free_kbytes (the guest's 1,840) and its zones'
    /// min (the guest's 33 and 427) follow, not from the 60,416 present.
    #[test]
    fn watermarks_and_reserves_follow_managed_pages() {
        let mut zones = vec![
            Zone::new("DMA", "dma", 0, 3_840),
            Zone::new("DMA32", "dma32", 3_840, 60_416),
        ];
        zones[1].managed_pages = 49_152;
        let mfk = default_min_free_kbytes(zones.iter().map(|z| z.managed_pages).sum());
        assert_eq!(mfk, 1_841);
        setup_watermarks(&mut zones, mfk, 4, Some(10));
        assert_eq!((zones[0].wmark_min, zones[1].wmark_min), (33, 426));
        assert_eq!(zones[1].wmark_low, 426 + 106);
        setup_lowmem_reserve(&mut zones, &[256, 256]);
        assert_eq!(zones[0].lowmem_reserve[1], 192);
        setup_reserve_pages(&mut zones);
        assert_eq!(zones[0].reserve_pages, 192 + zones[0].wmark_high);
    }

    /// 4.6+: the gaps are the larger of min/4 and the scale factor's share
    /// of the zone; DMA32's 830,976 pages at factor 10 give 830, more than
    /// a quarter of its min (1,692 / 4 = 423); at factor 1, 83 is less.
    #[test]
    fn watermark_scale_factor_spaces_the_watermarks_from_4_6() {
        let mut zones = three_zones();
        let mfk = default_min_free_kbytes(zones.iter().map(|z| z.present_pages).sum());
        setup_watermarks(&mut zones, mfk, 4, Some(10));
        let z = &zones[1];
        assert_eq!(z.wmark_min, 1692);
        assert_eq!((z.wmark_low, z.wmark_high), (1692 + 830, 1692 + 2 * 830));
        setup_watermarks(&mut zones, mfk, 4, Some(1));
        let z = &zones[1];
        assert_eq!((z.wmark_low, z.wmark_high), (1692 + 423, 1692 + 2 * 423));
    }

    #[test]
    fn lowmem_reserve_protects_lower_zones() {
        let mut zones = three_zones();
        setup_lowmem_reserve(&mut zones, &[256, 256, 32]);
        assert_eq!(zones[1].lowmem_reserve[2], 129_024 / 256);
        assert_eq!(zones[0].lowmem_reserve[2], (129_024 + 830_976) / 256);
        assert_eq!(zones[2].lowmem_reserve[2], 0);
        assert_eq!(zones[0].lowmem_reserve[0], 0);
    }

    /// Node 1's Normal zone reserves nothing against anyone; node 0's
    /// DMA32 keeps against node 1's Normal what it keeps against its own.
    #[test]
    fn lowmem_reserve_on_two_nodes_follows_the_zone_type() {
        let mut zones = three_zones();
        zones.push(Zone::new("Normal", "normal", 963_840, 262_144));
        let nodes = [0..3, 3..4];
        setup_lowmem_reserve_nodes(&mut zones, &nodes, &[256, 256, 32, 32]);
        assert_eq!(zones[1].lowmem_reserve[3], 129_024 / 256);
        assert_eq!(zones[1].lowmem_reserve[3], zones[1].lowmem_reserve[2]);
        assert_eq!(zones[0].lowmem_reserve[1], 830_976 / 256);
        assert_eq!(zones[3].lowmem_reserve, vec![0; 4]);
        assert_eq!(zones[2].lowmem_reserve[3], 0);
    }

    #[test]
    fn int_sqrt_exact() {
        for x in [0u64, 1, 2, 3, 4, 15, 16, 17, 1 << 40, (1 << 40) - 1] {
            let r = int_sqrt(x);
            assert!(r * r <= x && (r + 1) * (r + 1) > x, "{x}");
        }
    }
}
