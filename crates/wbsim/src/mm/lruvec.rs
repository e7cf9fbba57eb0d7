//! The LRU lists and what reclaim balances them by (`struct lruvec`: in
//! 3.0 the zone's `lru[]` and `reclaim_stat`, named `lruvec` in 3.3,
//! moved from the zone to the node in 4.8). Reclaim works on a lruvec;
//! which structure owns it is the era's business: a zone for the
//! 2.6.24 – 4.7 profiles modelled today, a node from 4.8 (`mm/vmscan.c`
//! then takes `pgdat->lruvec`).

use super::page::{
    ListHead, LRU_ACTIVE_ANON, LRU_ACTIVE_FILE, LRU_INACTIVE_ANON, LRU_INACTIVE_FILE, NR_LISTS,
};

/// The era's rules for the LRU lists (chosen at build).
#[derive(Debug, Clone, Copy)]
pub struct LruRules {
    /// Who owns the lists: each zone, or the node (4.8+).
    pub scope: crate::kernel::LruScope,
    /// `rotate_reclaimable_page` also takes an active page to the
    /// inactive tail, clearing PG_active (4.11+).
    pub rotate_deactivates: bool,
    /// MGLRU: generations instead of active and inactive lists (6.1+).
    pub generations: bool,
    /// Shadow entries and refault detection of file pages (3.15+).
    pub workingset: bool,
    /// `mark_page_accessed` activates a page in the CPU's pagevec (3.11+).
    pub activate_in_pagevec: bool,
}

/// One set of LRU lists.
#[derive(Debug, Clone, Default)]
pub struct Lruvec {
    /// Inactive anon, active anon, inactive file, active file; then the
    /// MGLRU generation lists (anon 0–3, file 0–3), empty without it.
    pub lists: [ListHead; NR_LISTS],
    /// MGLRU's sequence numbers (`lru_gen_struct`).
    pub gen: super::lru_gen::GenSeq,
    /// `reclaim_stat.recent_scanned` / `recent_rotated`, [anon, file]:
    /// the ratios `get_scan_count` weighs the two kinds by.
    pub recent_scanned: [u64; 2],
    pub recent_rotated: [u64; 2],
    /// `nonresident_age` (3.15+ `inactive_age`): evictions and
    /// activations so far, the clock of refault distances
    /// (`crate::mm::workingset`).
    pub nonresident_age: u64,
    /// At a coarse unit ([`crate::mm::unit`]): the 4 KiB pages of each
    /// list's scan shares that did not make a whole page of the unit yet,
    /// carried to the next `get_scan_count` (always 0 at 4 KiB).
    pub scan_carry_base_pages: [u64; super::page::NR_LRU_LISTS],
}

impl Lruvec {
    /// `scan` 4 KiB pages of list `lru` to scan, in whole pages of `unit`,
    /// the rest carried: on average a coarse unit scans what the 4 KiB
    /// kernel would, where truncating each pass's share would lose up to a
    /// page of the unit each time.
    pub fn scan_in_units(&mut self, lru: usize, scan: u64, unit: crate::mm::unit::PageUnit) -> u64 {
        let total = scan + self.scan_carry_base_pages[lru];
        self.scan_carry_base_pages[lru] = total % unit.base_pages();
        total / unit.base_pages()
    }

    /// Pages on the file lists.
    pub fn nr_file(&self) -> u64 {
        self.lists[LRU_INACTIVE_FILE].len + self.lists[LRU_ACTIVE_FILE].len
    }

    /// Pages on the anonymous lists.
    pub fn nr_anon(&self) -> u64 {
        self.lists[LRU_INACTIVE_ANON].len + self.lists[LRU_ACTIVE_ANON].len
    }

    /// `inactive_anon_is_low` (3.0): the inactive anon list is smaller than
    /// the active one over `ratio` (`inactive_ratio`).
    pub fn inactive_anon_is_low(&self, ratio: u64) -> bool {
        self.lists[LRU_INACTIVE_ANON].len * ratio < self.lists[LRU_ACTIVE_ANON].len
    }
}
