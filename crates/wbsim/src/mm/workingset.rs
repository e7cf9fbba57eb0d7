//! Refault detection of file pages (3.15+, `mm/workingset.c`; read in
//! 6.1): where reclaim removes a file page from its mapping it leaves a
//! shadow entry holding the lruvec's `nonresident_age` at that moment
//! (`workingset_eviction`); the age counts evictions and activations. A
//! page read back into that slot is a refault (`workingset_refault`):
//! its refault distance, the age now less the age at eviction, says how
//! many pages the inactive list would have needed to hold it. Within the
//! workingset (the active file list, and the anon lists while swap has
//! room) it starts on the active list. Only pages added without
//! `__GFP_WRITE` are checked (`filemap_add_folio`): reads, not writes.
//! With MGLRU (`lru_gen_eviction`, `lru_gen_refault`) the shadow holds the
//! type's oldest generation, and a refault is counted when that
//! generation is still the oldest; nothing is activated.
//!
//! Not modelled: PG_workingset and `workingset_restore_*`, the bucket
//! order of very large memories, anon shadows in the swap cache (5.9+),
//! and the shadow nodes' shrinker (`workingset_nodes`).

use super::inode::SHADOW_PAYLOAD_LIMIT;
use super::memory::Memory;
use super::page::{flags, Pfn, LRU_ACTIVE_ANON, LRU_ACTIVE_FILE, LRU_INACTIVE_ANON};

/// `workingset_refault_file` and `workingset_activate_file`.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct WorkingsetStats {
    pub refault_file: u64,
    pub activate_file: u64,
}

/// An age as a shadow payload (the kernel's `EVICTION_MASK` truncation).
fn payload(age: u64) -> u32 {
    (age % SHADOW_PAYLOAD_LIMIT as u64) as u32
}

impl Memory {
    /// Whether reclaim leaves shadow entries (the profile's
    /// `workingset_refault`).
    pub fn workingset_enabled(&self) -> bool {
        self.workingset
    }

    /// The refault counters, when refault detection is on.
    pub fn workingset_stats(&self) -> Option<WorkingsetStats> {
        self.workingset.then_some(self.workingset_stats)
    }

    /// `workingset_eviction`: the shadow payload for file page `pfn`,
    /// which reclaim is removing; the eviction ages the lruvec.
    pub fn workingset_eviction(&mut self, pfn: Pfn) -> u32 {
        let zone = self.pages.zone_of(pfn);
        if self.lru_gen {
            let nid = self.zone_node[zone];
            return payload(self.gen_seq(nid).min_seq[1]);
        }
        let lv = self.lruvec_mut(zone);
        let age = lv.nonresident_age;
        lv.nonresident_age += 1;
        payload(age)
    }

    /// `workingset_refault` for page `pfn`, about to be added to the LRU
    /// where reclaim left `shadow`: counted, and activated when its
    /// refault distance is within the workingset.
    pub fn workingset_refault(&mut self, pfn: Pfn, shadow: u32) {
        let zone = self.pages.zone_of(pfn);
        if self.lru_gen {
            let nid = self.zone_node[zone];
            if payload(self.gen_seq(nid).min_seq[1]) == shadow {
                self.workingset_stats.refault_file += 1;
            }
            return;
        }
        self.workingset_stats.refault_file += 1;
        let limit = SHADOW_PAYLOAD_LIMIT as u64;
        let lv = self.lruvec(zone);
        let distance = (payload(lv.nonresident_age) as u64 + limit - shadow as u64) % limit;
        let mut workingset = lv.lists[LRU_ACTIVE_FILE].len;
        if self.nr_swap_pages() > 0 {
            workingset += lv.lists[LRU_ACTIVE_ANON].len + lv.lists[LRU_INACTIVE_ANON].len;
        }
        if distance > workingset {
            return;
        }
        self.pages[pfn as usize].flags |= flags::ACTIVE;
        self.lruvec_mut(zone).nonresident_age += 1;
        self.workingset_stats.activate_file += 1;
    }

    /// `workingset_activation` (`folio_mark_accessed` activating a page):
    /// activations age the lruvec too.
    pub fn workingset_activation(&mut self, pfn: Pfn) {
        if self.workingset && !self.lru_gen {
            let zone = self.pages.zone_of(pfn);
            self.lruvec_mut(zone).nonresident_age += 1;
        }
    }
}

#[cfg(test)]
mod tests {
    use crate::mm::filemap::Filemap;
    use crate::mm::page::{flags, Holder};
    use crate::mm::MmHost;
    use crate::test_support::usb_stick_files;

    /// Page 0 of the file evicted with a shadow, then read back after
    /// `evictions_between` more evictions: whether it starts active.
    fn refault_after(kernel: &str, evictions_between: u64) -> (bool, u64, u64) {
        let (mut sys, files) = usb_stick_files(kernel, "ext4", &["f"]);
        let ino = files[0];
        let zone = sys.mm().nr_zones() - 1;
        // Eight pages of the file on the active list: the workingset.
        for idx in 10..18 {
            let pfn = sys.mm_mut().take_free_page(zone).unwrap();
            let p = &mut sys.mm_mut().pages_mut()[pfn as usize];
            p.set_mapping(ino, idx);
            p.flags = flags::UPTODATE | flags::ACTIVE;
            sys.mm_mut().inode_mut(ino).insert(idx, pfn);
            sys.mm_mut().lru_add(pfn);
        }
        let pfn = sys.mm_mut().take_free_page(zone).unwrap();
        let shadow = sys.mm_mut().workingset_eviction(pfn);
        sys.mm_mut().inode_mut(ino).insert(0, pfn);
        sys.mm_mut().inode_mut(ino).remove_leaving_shadow(0, shadow);
        assert_eq!(sys.mm().inode(ino).page(0), crate::mm::page::NIL);
        sys.mm_mut().lruvec_mut(zone).nonresident_age += evictions_between;
        let page = sys.mm_mut().take_free_page(zone).unwrap();
        sys.start_page_read(0, page, ino, 0);
        assert_eq!(sys.mm().inode(ino).page(0), page);
        let p = sys.mm().pages()[page as usize];
        let s = sys.mm().workingset_stats().unwrap();
        assert!(matches!(p.holder, Holder::Pagevec));
        (p.has(flags::ACTIVE), s.refault_file, s.activate_file)
    }

    /// 6.1: a page read back before more pages were evicted than the
    /// active file list holds (8; its own eviction counts 1) is
    /// activated; one read back later is only counted as a refault.
    #[test]
    fn a_refault_within_the_workingset_starts_active() {
        assert_eq!(refault_after("6.1", 0), (true, 1, 1));
        assert_eq!(refault_after("6.1", 7), (true, 1, 1));
        assert_eq!(refault_after("6.1", 8), (false, 1, 0));
    }

    /// 3.3 has no refault detection; MGLRU counts the refault of its
    /// oldest generation and activates nothing.
    #[test]
    fn without_workingset_or_with_mglru_nothing_is_activated() {
        let (sys, _) = usb_stick_files("3.3", "ext4", &["f"]);
        assert!(sys.mm().workingset_stats().is_none());
        assert_eq!(refault_after("6.1+mglru", 0), (false, 1, 0));
    }

    /// 6.1 (3.11+): touching a referenced page still in this CPU's
    /// pagevec marks it active, and the drain puts it on the active list;
    /// in another CPU's pagevec it only loses its referenced bit. 3.3
    /// leaves it referenced and inactive.
    #[test]
    fn a_page_touched_twice_in_the_local_pagevec_goes_active() {
        let touched_twice = |kernel: &str, touching_cpu: usize| {
            let sc = crate::test_support::usb_stick_scenario(kernel, "ext4", 2, &["f"]);
            let profile = crate::kernel::preset(kernel).unwrap();
            let mut sys = crate::system::build_system(&sc, &profile, 1);
            let zone = sys.mm().nr_zones() - 1;
            let pfn = sys.mm_mut().take_free_page(zone).unwrap();
            let p = &mut sys.mm_mut().pages_mut()[pfn as usize];
            p.set_mapping(0, 0);
            p.flags = flags::UPTODATE;
            sys.mm_mut().lru_cache_add(0, pfn);
            sys.mm_mut().mark_page_accessed_on(touching_cpu, pfn);
            sys.mm_mut().mark_page_accessed_on(touching_cpu, pfn);
            let before_drain = sys.mm().pages()[pfn as usize];
            sys.mm_mut().lru_add_drain(0);
            let after = sys.mm().pages()[pfn as usize];
            (
                before_drain.has(flags::ACTIVE),
                before_drain.has(flags::REFERENCED),
                after.holder,
            )
        };
        assert_eq!(touched_twice("6.1", 0), (true, false, Holder::ActiveFile));
        assert_eq!(
            touched_twice("6.1", 1),
            (false, false, Holder::InactiveFile)
        );
        assert_eq!(touched_twice("3.3", 0), (false, true, Holder::InactiveFile));
    }
}
