//! Per-CPU page lists (`struct per_cpu_pages`), Linux 2.6.24 – 3.10, and
//! 6.1 (the 5.14+ sizing and freeing, `scaled_lists`)
//! (`mm/page_alloc.c`: `zone_batchsize`, `setup_pageset`,
//! `free_hot_cold_page`, `free_pcppages_bulk`, `buffered_rmqueue`,
//! `rmqueue_bulk`, `drain_all_pages`).
//!
//! Why it matters: order-0 pages move between a zone's buddy lists and each
//! CPU's list in batches, and only the buddy pages count in
//! `NR_FREE_PAGES`, which every watermark check reads. A page reclaim
//! frees sits on the reclaiming CPU's list, invisible to the allocator's
//! and kswapd's watermark checks, until the list overflows `high` or is
//! drained. The lists have the same size in every zone above 512 MiB, so
//! they weigh far more against a small zone's watermark gaps than against a
//! big one's.
//!
//! Not modelled: the per-migratetype sub-lists (one list per CPU and zone)
//! and the hot/cold distinction beyond list order.

use super::buddy::{MIGRATE_MOVABLE, MIGRATE_RECLAIMABLE, MIGRATE_UNMOVABLE, NR_MIGRATETYPES};
use super::page::{
    list_add_head, list_add_tail, list_del, list_move_run, End, Holder, ListHead, Pfn, NIL,
};
use super::unit::PageUnit;
use super::vmstat::{Ev, ZoneEv};
use super::{Gfp, Mark};
use crate::mm::Memory;
use crate::mm::MemoryOps;
use crate::mm::MmHost;

/// One CPU's free pages of one zone (`per_cpu_pages`): one list per
/// migratetype (2.6.31+); the profiles without mobility grouping use
/// MOVABLE's alone.
#[derive(Debug, Clone, Copy, Default)]
pub struct PerCpuPages {
    pub lists: [ListHead; NR_MIGRATETYPES],
    /// `free_factor` (5.14+): how many times the batch a free returns has
    /// doubled since this CPU last allocated.
    free_factor: u8,
}

/// `CONFIG_PCP_BATCH_SCALE_MAX` (Debian 6.1's default): a free returns
/// at most 2^5 batches.
const PCP_BATCH_SCALE_MAX: u8 = 5;

impl PerCpuPages {
    /// `pcp->count`: pages on all the lists.
    pub fn count(&self) -> u64 {
        self.lists.iter().map(|l| l.len).sum()
    }
}

/// `zone_batchsize` (2.6.24 – 3.10): about a thousandth of the zone, at
/// most 512 KiB, divided by four and clamped to 2^n − 1; in 4 KiB pages.
pub fn zone_batchsize(present_pages: u64) -> u64 {
    batchsize(present_pages, 512 * 1024)
}

/// `zone_batchsize`'s rule with the cap of its era (512 KiB to 3.x,
/// 1 MiB in 6.1): a thousandth of `pages`, at most `max_bytes`, divided
/// by four (at least 1) and clamped to 2^n − 1; in 4 KiB pages.
fn batchsize(pages: u64, max_bytes: u64) -> u64 {
    let batch = ((pages / 1024).min(max_bytes / 4096) / 4).max(1);
    let x = batch + batch / 2;
    // rounddown_pow_of_two(x) - 1
    (1u64 << (63 - x.leading_zeros())) - 1
}

/// `setup_pageset`: (high, batch) for a zone of `present_pages` pages of
/// `unit`: the 4 KiB kernel's, in as many bytes ([`crate::mm::unit`]).
pub fn pageset_limits(present_pages: u64, unit: PageUnit) -> (u64, u64) {
    let batch = zone_batchsize(present_pages * unit.base_pages());
    if batch == 0 {
        return (0, 1);
    }
    (unit.from_base_pages(6 * batch), unit.from_base_pages(batch))
}

/// The rule of a profile (chosen at build; this file is the dispatch
/// point): the 5.14+ per-CPU lists ([`Memory::use_scaled_pcp`]) or the
/// 2.6.24 – 3.x ones.
pub fn scaled_lists(profile: &crate::kernel::KernelProfile) -> bool {
    profile.pcp_high_from_watermark
}

/// (high, batch) as 5.14+ sizes them (`zone_set_pageset_high_and_batch`):
/// the batch as before but up to 1 MiB of pages, at least 1; `high` the
/// zone's low watermark split over the node's CPUs (`zone_highsize`), at
/// least 4 x batch. The batch in pages of `unit` holds the 4 KiB
/// kernel's bytes.
pub fn pageset_limits_scaled(
    managed_pages: u64,
    low_wmark: u64,
    node_cpus: u64,
    unit: PageUnit,
) -> (u64, u64) {
    let base = batchsize(managed_pages * unit.base_pages(), 1 << 20);
    let batch = unit.from_base_pages(base);
    let high = (low_wmark / node_cpus.max(1)).max(batch << 2);
    (high, batch)
}

/// Per-CPU page lists (`struct per_cpu_pages`).
pub trait PerCpuLists: MmHost {
    /// `get_page_from_freelist`, and if it fails, `drain_all_pages` and one
    /// more try: the pages the caller is after may be pinned on other
    /// CPUs' lists (3.0 `__alloc_pages_direct_reclaim`).
    fn get_page_after_drain(&mut self, tid: u32, mark: Mark, gfp: Gfp) -> Option<Pfn> {
        self.get_page_from_freelist(tid, mark, gfp).or_else(|| {
            self.mm_mut().drain_all_pages();
            self.get_page_from_freelist(tid, mark, gfp)
        })
    }
}

impl<T: MmHost + ?Sized> PerCpuLists for T {}

impl Memory {
    /// `free_hot_cold_page` (cold: the page goes to the list's tail): the
    /// page joins `cpu`'s list; at `high` a batch goes back to the buddy
    /// lists.
    /// 5.14+ (`pcp_scaled`): `free_unref_page_commit`, the page to the
    /// head, and past `nr_pcp_high` the batch `nr_pcp_free` gives back.
    #[inline(always)]
    pub fn free_to_pcp(&mut self, cpu: usize, pfn: Pfn) {
        let z = self.pages.zone_of(pfn);
        self.pages[pfn as usize].holder = Holder::PerCpu;
        let zone = &mut self.zones[z];
        // `get_pcppage_migratetype`: the pageblock's type as it is freed.
        let mt = zone
            .buddy
            .as_ref()
            .map_or(MIGRATE_MOVABLE, |b| b.block_type(pfn));
        let list = &mut zone.pcp[cpu].lists[mt];
        if self.pcp_scaled {
            list_add_head(&mut self.pages, list, pfn);
        } else {
            list_add_tail(&mut self.pages, list, pfn);
        }
        self.vmstat.inc(Ev::PgFree, 1);
        let (high, batch) = (zone.pcp_high_now(), zone.pcp_batch);
        if zone.pcp[cpu].count() >= high {
            let count = match self.pcp_scaled {
                true => nr_pcp_free(&mut zone.pcp[cpu], high, batch),
                false => batch,
            };
            self.free_pcppages_bulk(z, cpu, count);
        }
    }

    /// `free_pcppages_bulk`: up to `count` pages from the tail of `cpu`'s
    /// list back to the zone's buddy lists; pages reaching the buddy lists
    /// reset the zone's `pages_scanned` and `all_unreclaimable`.
    ///
    /// With mobility grouping the lists are emptied in turn, MOVABLE's
    /// first, each page to its list's type (the kernel goes round them).
    pub fn free_pcppages_bulk(&mut self, z: usize, cpu: usize, count: u64) {
        let zone = &mut self.zones[z];
        let mut moved = 0;
        for mt in [MIGRATE_MOVABLE, MIGRATE_UNMOVABLE, MIGRATE_RECLAIMABLE] {
            let Some(buddy) = zone.buddy.as_mut() else {
                // One free list: the run from the list's tail goes to its
                // head as it is, relinked at its two ends.
                let list = &mut zone.pcp[cpu].lists[mt];
                moved += list_move_run(
                    &mut self.pages,
                    list,
                    &mut zone.free,
                    count - moved,
                    Holder::Free,
                    End::Tail,
                );
                continue;
            };
            while moved < count && zone.pcp[cpu].lists[mt].tail != NIL {
                let pfn = zone.pcp[cpu].lists[mt].tail;
                list_del(&mut self.pages, &mut zone.pcp[cpu].lists[mt], pfn);
                self.pages[pfn as usize].holder = Holder::Free;
                buddy.free_page(&mut self.pages, pfn, mt);
                moved += 1;
            }
        }
        if moved > 0 {
            zone.pages_scanned = 0;
            zone.all_unreclaimable = false;
            zone.free_counter.modify(cpu, moved as i64);
        }
    }

    /// `buffered_rmqueue` for order 0 (hot): the head of `cpu`'s list,
    /// refilled with a batch from the buddy lists (`rmqueue_bulk`) when
    /// empty. `None` if the zone has no page at all.
    ///
    /// `mt`: the allocation's migratetype (MOVABLE but for slab pages).
    /// With mobility grouping the batch comes from `__rmqueue`, which may
    /// fall back on another type's buddies; a fragmenting fallback boosts
    /// the zone's watermarks (`boost_factor`) and flags the zone for the
    /// caller's kswapd wake-up (`boosted_wake`); every fallback is left in
    /// `fallbacks` for the caller's tracepoint.
    #[inline(always)]
    pub fn rmqueue_pcp(&mut self, cpu: usize, z: usize, mt: usize) -> Option<Pfn> {
        let zone = &mut self.zones[z];
        let mt = if zone.buddy.is_some() {
            mt
        } else {
            MIGRATE_MOVABLE
        };
        let pcp = &mut zone.pcp[cpu];
        if self.pcp_scaled {
            // `rmqueue_pcplist`: an allocation halves the free scaling
            // (which only 5.14+ raises: 0 before).
            pcp.free_factor >>= 1;
        }
        if pcp.lists[mt].len == 0 {
            self.rmqueue_bulk(cpu, z, mt);
        }
        let list = &mut self.zones[z].pcp[cpu].lists[mt];
        let pfn = list.head;
        if pfn == NIL {
            return None;
        }
        list_del(&mut self.pages, list, pfn);
        self.vmstat.zinc(z, ZoneEv::PgAlloc, 1);
        Some(pfn)
    }

    /// `rmqueue_bulk`: refill `cpu`'s empty list of type `mt` with a batch
    /// (out of line: one allocation in `pcp_batch` comes here).
    #[inline(never)]
    fn rmqueue_bulk(&mut self, cpu: usize, z: usize, mt: usize) {
        let zone = &mut self.zones[z];
        if zone.buddy.is_none() {
            // One free list: a batch from its head, relinked at its ends.
            let list = &mut zone.pcp[cpu].lists[mt];
            let taken = list_move_run(
                &mut self.pages,
                &mut zone.free,
                list,
                zone.pcp_batch,
                Holder::PerCpu,
                End::Head,
            );
            zone.free_counter.modify(cpu, -(taken as i64));
            return;
        }
        let mut taken = 0;
        for _ in 0..zone.pcp_batch {
            let buddy = zone.buddy.as_mut();
            let Some((pfn, fallback)) = buddy.and_then(|b| b.rmqueue(&mut self.pages, mt)) else {
                break;
            };
            if let Some(f) = fallback {
                zone.fallbacks.push(f);
                if f.fragmenting && zone.boost_watermark(self.boost_factor) {
                    zone.boosted_wake = true;
                }
            }
            self.pages[pfn as usize].holder = Holder::PerCpu;
            list_add_tail(&mut self.pages, &mut zone.pcp[cpu].lists[mt], pfn);
            taken += 1;
        }
        zone.free_counter.modify(cpu, -taken);
    }

    /// `drain_all_pages`: every CPU's lists back to the buddy lists (3.0
    /// does this when an allocation fails right after direct reclaim made
    /// progress: the reclaimed pages may be sitting on per-CPU lists).
    pub fn drain_all_pages(&mut self) {
        for z in 0..self.zones.len() {
            for cpu in 0..self.zones[z].pcp.len() {
                self.free_pcppages_bulk(z, cpu, u64::MAX);
            }
        }
    }

    /// `vmstat_update` → `refresh_cpu_vm_stats` on every CPU (each second,
    /// `sysctl_stat_interval`): every zone's pending NR_FREE_PAGES deltas
    /// folded.
    pub fn refresh_cpu_vm_stats(&mut self) {
        for z in &mut self.zones {
            z.free_counter.refresh();
        }
    }

    /// kswapd's `set_pgdat_percpu_threshold` (2.6.38+): pressure
    /// thresholds for node `nid`'s zones while its kswapd is awake,
    /// normal ones while it sleeps.
    pub fn set_percpu_threshold_pressure(&mut self, nid: usize, pressure: bool) {
        for z in self.nodes[nid].zones.clone() {
            self.zones[z].free_counter.set_pressure(pressure);
        }
    }

    /// The 5.14+ per-CPU list rules (chosen at build): each zone's
    /// `high` and `batch` from its low watermark and its node's CPUs.
    pub fn use_scaled_pcp(&mut self) {
        self.pcp_scaled = true;
        for z in 0..self.zones.len() {
            let cpus = self.nodes[self.zones[z].node].cpus.len() as u64;
            let zone = &mut self.zones[z];
            (zone.pcp_high, zone.pcp_batch) =
                pageset_limits_scaled(zone.managed_pages, zone.wmark_base[1], cpus, self.unit);
        }
    }

    /// `set_reclaim_active` / `clear_reclaim_active` (5.14+) on zones
    /// `zones` of a node kswapd starts or stops balancing; nothing under
    /// the older rules.
    pub fn set_reclaim_active(&mut self, zones: impl IntoIterator<Item = usize>, active: bool) {
        if !self.pcp_scaled {
            return;
        }
        for z in zones {
            let zone = &mut self.zones[z];
            zone.reclaim_active = active && zone.managed_pages > 0;
        }
    }

    /// Pages on per-CPU lists, all zones and CPUs.
    pub fn nr_pcp_pages(&self) -> u64 {
        self.zones
            .iter()
            .flat_map(|z| z.pcp.iter())
            .map(PerCpuPages::count)
            .sum()
    }
}

/// `nr_pcp_free` (5.14+): the pages a CPU over `high` returns, doubling
/// with each free since its last allocation, between `batch` and
/// `high - batch` (1 when `high` is under `batch`).
fn nr_pcp_free(pcp: &mut PerCpuPages, high: u64, batch: u64) -> u64 {
    if high < batch {
        return 1;
    }
    let (min_free, max_free) = (batch, high - batch);
    let scaled = batch << pcp.free_factor;
    if scaled < max_free && pcp.free_factor < PCP_BATCH_SCALE_MAX {
        pcp.free_factor += 1;
    }
    scaled.min(max_free).max(min_free)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The Debian 6.1 guests' zoneinfo (2 vCPUs): DMA high 20 batch 1
    /// (3,840 managed, low 41), DMA32 high 263 batch 15 (51,748, 526).
    #[test]
    fn scaled_limits_are_the_guests() {
        assert_eq!(pageset_limits_scaled(3840, 41, 2, PageUnit::BASE), (20, 1));
        assert_eq!(
            pageset_limits_scaled(51_748, 526, 2, PageUnit::BASE),
            (263, 15)
        );
        // 4 x batch at least; batch up to 1 MiB (63 at 256 pages).
        assert_eq!(
            pageset_limits_scaled(51_748, 40, 2, PageUnit::BASE),
            (60, 15)
        );
        assert_eq!(
            pageset_limits_scaled(4 << 20, 100_000, 8, PageUnit::BASE),
            (12_500, 63)
        );
    }

    /// A CPU that keeps freeing returns twice the batch each time, up to
    /// high - batch; an allocation halves the factor.
    #[test]
    fn consecutive_frees_return_growing_batches() {
        let mut pcp = PerCpuPages::default();
        let frees: Vec<u64> = (0..6).map(|_| nr_pcp_free(&mut pcp, 263, 15)).collect();
        assert_eq!(frees, [15, 30, 60, 120, 240, 248]);
        assert_eq!(nr_pcp_free(&mut pcp, 20, 1), 19);
        assert_eq!(nr_pcp_free(&mut pcp, 4, 15), 1, "high under batch");
    }

    #[test]
    fn batch_is_31_for_zones_of_512_mib_and_more() {
        // 504 MiB Normal and 3 GiB DMA32 of seed 000's machine.
        assert_eq!(zone_batchsize(129_024), 31);
        assert_eq!(zone_batchsize(830_976), 31);
        assert_eq!(pageset_limits(830_976, PageUnit::BASE), (186, 31));
    }

    #[test]
    fn dma_zone_has_no_per_cpu_list() {
        // 15 MiB: batch rounds to 0, high 0, so every free goes straight
        // back to the buddy lists in batches of one.
        assert_eq!(zone_batchsize(3840), 0);
        assert_eq!(pageset_limits(3840, PageUnit::BASE), (0, 1));
    }

    #[test]
    fn small_zone_batch_scales_with_size() {
        // 64 MiB: 16 / 4 = 4, rounddown_pow_of_two(6) - 1 = 3.
        assert_eq!(zone_batchsize(16_384), 3);
    }
}
