//! MGLRU's reclaim (6.1+, read in v6.1 `mm/vmscan.c`:
//! `lru_gen_shrink_lruvec`, `get_nr_to_scan`, `should_run_aging`,
//! `evict_folios`, `scan_folios`, `sort_folio`, `isolate_folio`,
//! `lru_gen_age_node`), per node, order 0. Not modelled: the page-table
//! walk that finds young PTEs while aging (`walk_mm`; the pages these
//! workloads write are never mapped), tiers and the refault controller
//! (no page is read back), memcgs.
//!
//! Eviction takes pages from the tail of the oldest generation, zone by
//! zone from the highest eligible down (each generation keeps a list per
//! zone), until 64 are isolated: one it may not evict now (dirty, under
//! writeback, locked) moves to the next generation with PG_reclaim and
//! counts in `pgrefill`; the rest are isolated (`pgscan_*`) and go through
//! `shrink_page_list`. A low zone's pages are thus taken only once the
//! zones above have none left in that generation.

use super::pageout::ShrinkList;
use super::{ReclaimHost, ScanControl, DEF_PRIORITY};
use crate::block::submit::Submit;
use crate::mm::lru_gen::{gen_list, MIN_NR_GENS};
use crate::mm::page::{flags, Holder, NIL};
use crate::mm::vmstat::ZoneEv;

/// `MAX_LRU_BATCH`: pages one `scan_folios` looks at, at most.
const MAX_LRU_BATCH: u64 = 4096;
/// `MIN_LRU_BATCH`: `scan_folios` stops once this many are isolated.
const MIN_LRU_BATCH: u64 = 64;

/// The types reclaim may take: file, and anon while swap has room
/// (`get_swappiness`).
fn kinds<H: ReclaimHost + ?Sized>(sys: &H) -> std::ops::RangeInclusive<usize> {
    if sys.mm().nr_swap_pages() > 0 && sys.sysctl().swappiness > 0 {
        0..=1
    } else {
        1..=1
    }
}

/// MGLRU's aging and eviction.
pub trait LruGenReclaim: ReclaimHost {
    /// `should_run_aging`: the oldest type is down to `MIN_NR_GENS`, or
    /// at three generations the youngest holds more than half the pages
    /// or the oldest less than a quarter.
    fn lru_gen_should_age(&self, nid: usize) -> bool {
        let g = self.mm().gen_seq(nid);
        kinds(self).any(|kind| {
            let nr_gens = self.mm().nr_gens(nid, kind);
            if nr_gens < MIN_NR_GENS + 1 {
                return true;
            }
            if nr_gens > MIN_NR_GENS + 1 {
                return false;
            }
            let total = self.mm().lru_gen_pages(nid, kind);
            let young = self.mm().gen_pages(nid, kind, g.max_seq);
            let old = self.mm().gen_pages(nid, kind, g.min_seq[kind]);
            young * 2 > total || old * 4 < total
        })
    }

    /// `lru_gen_age_node` (kswapd, before each `shrink_node`): a new
    /// generation when aging is due.
    fn lru_gen_age_node(&mut self, nid: usize) {
        if self.lru_gen_should_age(nid) {
            self.mm_mut().inc_max_seq(nid);
        }
    }

    /// `lru_gen_shrink_lruvec`: evict batches until the share of this
    /// priority is scanned or the target reclaimed.
    fn lru_gen_shrink_node(&mut self, sc: &mut ScanControl) {
        let (reclaimed_before, nid) = (sc.nr_reclaimed, sc.nid);
        let mut scanned = 0;
        loop {
            // get_nr_to_scan
            let g = self.mm().gen_seq(nid);
            let total: u64 = kinds(self).map(|k| self.mm().lru_gen_pages(nid, k)).sum();
            // On 4 KiB pages, to the nearest page of the unit (`mm::unit`).
            let unit = self.mm().unit();
            let nr_to_scan = unit.nearest_of_base_pages((total * unit.base_pages()) >> sc.priority);
            if self.lru_gen_should_age(nid) {
                let three_gens = kinds(self).all(|k| g.max_seq >= g.min_seq[k] + MIN_NR_GENS);
                if !(sc.priority == DEF_PRIORITY && three_gens) {
                    if sc.is_kswapd {
                        // Left to `lru_gen_age_node`.
                        return;
                    }
                    self.mm_mut().inc_max_seq(nid);
                }
            }
            if nr_to_scan == 0 {
                return;
            }
            let delta = self.evict_folios(sc);
            if delta == 0 {
                return;
            }
            scanned += delta;
            if scanned >= nr_to_scan || sc.nr_reclaimed - reclaimed_before >= sc.nr_to_reclaim {
                return;
            }
        }
    }

    /// `evict_folios`: one batch from the oldest generation of a type;
    /// the pages looked at.
    fn evict_folios(&mut self, sc: &mut ScanControl) -> u64 {
        let (kinds, nid) = (kinds(self), sc.nid);
        self.mm_mut().try_to_inc_min_seq(nid, kinds.clone());
        // isolate_folios: anon when swap may be used and its oldest
        // generation is older than file's, else file (the tiers' PID
        // controller, which also weighs refaults, is not modelled).
        let g = self.mm().gen_seq(nid);
        let kind = if *kinds.start() == 0 && g.min_seq[0] < g.min_seq[1] {
            0
        } else {
            1
        };
        let zone = self.mm().node_highest_zone(nid);
        let first = self.mm().node_zones(nid).start;
        // Only the zones up to `reclaim_idx` are scanned (the kernel's
        // `scan_folios` also moves up to a batch of the higher zones' pages
        // to the next generation; not modelled).
        let top = sc.reclaim_idx.unwrap_or(zone);
        let cpu = self.task(sc.tid).cpu;
        self.mm_mut().lru_add_drain(cpu);
        // scan_folios: the oldest generation's list of each zone, from the
        // highest eligible down, until a batch is isolated.
        let min_seq = self.mm().gen_seq(nid).min_seq[kind];
        let mut buf = std::mem::take(&mut self.reclaim_mut().isolate_buf);
        buf.clear();
        let (mut looked, mut sorted) = (0u64, 0u64);
        // In pages of the machine's unit, as many bytes as the 4 KiB
        // kernel's ([`crate::mm::unit`]).
        let unit = self.mm().unit();
        let (max_batch, min_batch) = (
            unit.from_base_pages(MAX_LRU_BATCH),
            unit.from_base_pages(MIN_LRU_BATCH),
        );
        // Each generation keeps a list per zone of the node (`zone_idx`).
        let mut zones = (0..=top - first).rev();
        let mut oldest = gen_list(kind, min_seq, zones.next().unwrap_or(0));
        while looked < max_batch && (buf.len() as u64) < min_batch {
            let pfn = self.mm().lruvec(zone).lists[oldest].tail;
            if pfn == NIL {
                match zones.next() {
                    Some(z) => {
                        oldest = gen_list(kind, min_seq, z);
                        continue;
                    }
                    None => break,
                }
            }
            looked += 1;
            let p = self.mm().pages()[pfn as usize];
            let busy = p.has(flags::LOCKED)
                || p.has(flags::WRITEBACK)
                || (kind == 1 && p.has(flags::DIRTY));
            if busy {
                // sort_folio: `folio_inc_gen(reclaiming)`.
                self.mm_mut().gen_bump_to_second_oldest(pfn);
                sorted += 1;
                continue;
            }
            // isolate_folio
            self.mm_mut().lru_unlink(pfn);
            let pg = &mut self.mm_mut().pages_mut()[pfn as usize];
            pg.flags &= !(flags::RECLAIM | flags::REFERENCED);
            pg.holder = Holder::Isolated;
            buf.push(pfn);
        }
        let isolated = buf.len() as u64;
        self.count_scanned(zone, sc, isolated, kind == 1);
        self.mm_mut()
            .vmstat_mut()
            .zinc(zone, ZoneEv::PgRefill, sorted);
        self.mm_mut().try_to_inc_min_seq(nid, kinds);
        self.charge_sys(sc.tid, looked * self.cost().scan_page_ns);
        let t = self.shrink_page_list(zone, &buf, sc);
        self.reclaim_mut().isolate_buf = buf;
        self.count_reclaimed(zone, sc, t.reclaimed, kind == 1);
        self.flush_all_plugs();
        if isolated == 0 && looked < max_batch {
            return 0;
        }
        looked
    }
}

impl<T: ReclaimHost + ?Sized> LruGenReclaim for T {}
