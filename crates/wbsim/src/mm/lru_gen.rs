//! The multi-generational LRU's lists (6.1+, `CONFIG_LRU_GEN` switched
//! on): each node keeps its pages in generations, oldest (`min_seq`) to
//! youngest (`max_seq`), per type (anon, file). Read in Debian's 6.1.192
//! `include/linux/mm_inline.h` (`lru_gen_add_folio`, which places a page
//! the stable updates changed from v6.1's) and `mm/vmscan.c`
//! (`folio_inc_gen`, `inc_min_seq`, `try_to_inc_min_seq`, `inc_max_seq`).
//! Reclaim's side (aging, eviction) is `crate::reclaim::lru_gen`.

use super::memory::Memory;
use super::page::{flags, gen_list_of, Pfn, MAX_NR_GENS};

/// `MIN_NR_GENS`: a type never has fewer generations.
pub const MIN_NR_GENS: u64 = 2;

/// `lru_gen_struct`'s sequence numbers: the youngest generation and each
/// type's oldest (anon, file).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct GenSeq {
    pub max_seq: u64,
    pub min_seq: [u64; 2],
}

impl Default for GenSeq {
    /// `lru_gen_init_lruvec`: `max_seq = MIN_NR_GENS + 1`, `min_seq = 0`.
    fn default() -> Self {
        GenSeq {
            max_seq: MIN_NR_GENS + 1,
            min_seq: [0, 0],
        }
    }
}

/// The list of generation `seq` of `kind` (0 anon, 1 file) in `zone`.
#[inline]
pub fn gen_list(kind: usize, seq: u64, zone: usize) -> usize {
    gen_list_of(kind, (seq % MAX_NR_GENS as u64) as usize, zone)
}

/// The type of a page: 0 anon, 1 file.
#[inline]
pub fn page_kind(page_flags: u16) -> usize {
    (page_flags & flags::ANON == 0) as usize
}

impl Memory {
    /// Whether the node's pages are kept in generations (MGLRU on).
    pub fn lru_gen_enabled(&self) -> bool {
        self.lru_gen
    }

    /// Node `nid`'s sequence numbers.
    pub fn gen_seq(&self, nid: usize) -> GenSeq {
        self.nodes[nid].lruvec.gen
    }

    /// Generations `kind` has now on node `nid`.
    pub fn nr_gens(&self, nid: usize, kind: usize) -> u64 {
        let g = self.gen_seq(nid);
        g.max_seq - g.min_seq[kind] + 1
    }

    /// Pages in generation `seq` of `kind` on node `nid`, every zone's.
    pub fn gen_pages(&self, nid: usize, kind: usize, seq: u64) -> u64 {
        let lv = &self.nodes[nid].lruvec;
        (0..self.nodes[nid].zones.len())
            .map(|zi| lv.lists[gen_list(kind, seq, zi)].len)
            .sum()
    }

    /// The list of generation `seq` of `kind` for zone `z`'s pages, on
    /// its node.
    fn zone_gen_list(&self, kind: usize, seq: u64, z: usize) -> usize {
        gen_list(kind, seq, self.zone_idx(z))
    }

    /// `lru_gen_add_folio` (Debian 6.1.192): an active page goes to the
    /// youngest generation; an anonymous page outside the swap cache, or a
    /// dirty or writeback page reclaim marked, to the one before it; else
    /// the oldest when reclaim puts it back (`reclaiming`, at the tail) or
    /// only `MIN_NR_GENS` exist, and the second oldest otherwise. PG_active
    /// is cleared: the generation is the page's age now.
    pub fn lru_gen_add(&mut self, pfn: Pfn, reclaiming: bool) {
        let p = self.pages[pfn as usize];
        let kind = page_kind(p.flags);
        let g = self.gen_seq(self.zone_node[self.pages.zone_of(pfn)]);
        let marked = p.has(flags::RECLAIM) && (p.has(flags::DIRTY) || p.has(flags::WRITEBACK));
        let anon_unswapped = kind == 0 && !p.has(flags::SWAPCACHE);
        let seq = if p.has(flags::ACTIVE) {
            g.max_seq
        } else if anon_unswapped || marked {
            g.max_seq - 1
        } else if reclaiming || g.min_seq[kind] + MIN_NR_GENS >= g.max_seq {
            g.min_seq[kind]
        } else {
            g.min_seq[kind] + 1
        };
        let list = self.zone_gen_list(kind, seq, self.pages.zone_of(pfn));
        self.gen_link(pfn, list, reclaiming);
    }

    /// Put a page on generation list `list`, at the tail or the head;
    /// PG_active does not live on in a generation.
    fn gen_link(&mut self, pfn: Pfn, list: usize, tail: bool) {
        self.pages[pfn as usize].flags &= !flags::ACTIVE;
        self.lru_link(pfn, list, tail);
    }

    /// Pages of `kind` in all its generations on node `nid`.
    pub fn lru_gen_pages(&self, nid: usize, kind: usize) -> u64 {
        let g = self.gen_seq(nid);
        (g.min_seq[kind]..=g.max_seq)
            .map(|s| self.gen_pages(nid, kind, s))
            .sum()
    }

    /// `folio_inc_gen` for reclaim: a page it may not evict now (dirty,
    /// under writeback, locked) moves to the second-oldest generation's
    /// head with PG_reclaim, so its writeback's end brings it back.
    pub fn gen_bump_to_second_oldest(&mut self, pfn: Pfn) {
        let p = self.pages[pfn as usize];
        let kind = page_kind(p.flags);
        let seq = self
            .gen_seq(self.zone_node[self.pages.zone_of(pfn)])
            .min_seq[kind]
            + 1;
        self.lru_unlink(pfn);
        self.pages[pfn as usize].flags |= flags::RECLAIM;
        let list = self.zone_gen_list(kind, seq, self.pages.zone_of(pfn));
        self.gen_link(pfn, list, false);
    }

    /// `try_to_inc_min_seq`: drop each type's empty oldest generations,
    /// keeping at least `MIN_NR_GENS`.
    pub fn try_to_inc_min_seq(&mut self, nid: usize, kinds: std::ops::RangeInclusive<usize>) {
        for kind in kinds {
            loop {
                let g = self.gen_seq(nid);
                if g.min_seq[kind] + MIN_NR_GENS > g.max_seq
                    || self.gen_pages(nid, kind, g.min_seq[kind]) > 0
                {
                    break;
                }
                self.nodes[nid].lruvec.gen.min_seq[kind] += 1;
            }
        }
    }

    /// `inc_max_seq`: a new youngest generation. A type already at
    /// `MAX_NR_GENS` first folds its oldest generation into the next
    /// (`inc_min_seq`, whose pages keep their order at that list's tail).
    pub fn inc_max_seq(&mut self, nid: usize) {
        for kind in 0..2 {
            if self.nr_gens(nid, kind) < MAX_NR_GENS as u64 {
                continue;
            }
            let old = self.gen_seq(nid).min_seq[kind];
            for zi in 0..self.nodes[nid].zones.len() {
                let (from, to) = (gen_list(kind, old, zi), gen_list(kind, old + 1, zi));
                loop {
                    let pfn = self.nodes[nid].lruvec.lists[from].head;
                    if pfn == super::page::NIL {
                        break;
                    }
                    self.lru_unlink(pfn);
                    self.gen_link(pfn, to, true);
                }
            }
            self.nodes[nid].lruvec.gen.min_seq[kind] = old + 1;
        }
        self.nodes[nid].lruvec.gen.max_seq += 1;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn generation_lists_follow_the_sequence_modulo_four() {
        use crate::mm::page::LRU_GEN_BASE;
        assert_eq!(gen_list(0, 0, 0), LRU_GEN_BASE);
        assert_eq!(gen_list(0, 0, 2), LRU_GEN_BASE + 2);
        assert_eq!(gen_list(1, 3, 1), LRU_GEN_BASE + (4 + 3) * 3 + 1);
        assert_eq!(gen_list(1, 5, 1), gen_list(1, 1, 1));
        let g = GenSeq::default();
        assert_eq!((g.max_seq, g.min_seq), (3, [0, 0]));
    }
}
