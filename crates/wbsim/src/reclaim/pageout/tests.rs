//! `shrink_inactive_list` → `shrink_page_list` on hand-built inactive
//! lists: each page state's fate, per reclaimer and kernel profile.

use crate::block::submit::Submit;
use crate::block::BlockHost;
use crate::mm::page::{flags, Holder, LRU_ACTIVE_ANON, LRU_INACTIVE_ANON, LRU_INACTIVE_FILE, NIL};
use crate::mm::vmstat::{Ev, ZoneEv};
use crate::mm::MmHost;
use crate::reclaim::tests::Machine;
use crate::reclaim::ReclaimHost;
use crate::reclaim::DEF_PRIORITY;
use crate::writeback::account::Account;

/// A clean, unmapped, unreferenced file page is taken out of its mapping
/// (`__remove_mapping`) and freed; pgscan and pgsteal count it.
#[test]
fn clean_unmapped_file_page_is_freed() {
    let mut m = Machine::new("3.0-vanilla");
    let pfn = m.file_page(m.file, 0);
    let free = m.zone().nr_free_snapshot();
    let sc = m.shrink(LRU_INACTIVE_FILE, m.direct(DEF_PRIORITY));
    assert_eq!((sc.nr_scanned, sc.nr_reclaimed), (1, 1));
    assert_eq!(m.sys.mm().inode(m.file).page(0), NIL);
    assert_eq!(m.place(pfn).0, Holder::Free);
    assert_eq!(m.zone().nr_free_snapshot(), free + 1);
    assert_eq!(m.zone_stat(ZoneEv::PgScanDirect), 1);
    assert_eq!(m.zone_stat(ZoneEv::PgStealDirect), 1);
    m.check();
}

/// A clean page whose buffers the filesystem holds (ext4's superblock):
/// `try_to_release_page` fails, so reclaim activates it (`pgactivate`)
/// and frees nothing; on 6.1 with MGLRU it goes to the youngest
/// generation, so it is met again only after the generations before it.
#[test]
fn a_page_with_pinned_buffers_is_activated_not_freed() {
    for kernel in ["3.0-vanilla", "6.1", "6.1+mglru"] {
        let mut m = Machine::new(kernel);
        let pfn = m.file_page(m.bdev, 0);
        m.sys.mm_mut().pages_mut()[pfn as usize].flags |= flags::PINNED;
        let activations = m.sys.mm().vmstat().get(Ev::PgActivate);
        let sc = m.shrink(LRU_INACTIVE_FILE, m.direct(DEF_PRIORITY));
        assert_eq!((sc.nr_scanned, sc.nr_reclaimed), (1, 0), "{kernel}");
        assert_eq!(m.sys.mm().inode(m.bdev).page(0), pfn, "{kernel}");
        assert_eq!(m.sys.mm().vmstat().get(Ev::PgActivate), activations + 1);
        let p = m.sys.mm().pages()[pfn as usize];
        if kernel.ends_with("mglru") {
            let youngest = m.sys.mm().gen_seq(0).max_seq;
            let list = crate::mm::lru_gen::gen_list(1, youngest, 0);
            assert_eq!(p.holder, Holder::from_lru(list), "{kernel}");
        } else {
            assert_eq!(p.holder, Holder::ActiveFile, "{kernel}");
        }
        m.check();
    }
}

/// A dirty xfs page kswapd may write (seen twice with PG_reclaim on a
/// PGDAT_DIRTY node): 3.10's `xfs_vm_writepage` writes it; 6.1's xfs has
/// no `->writepage`, so `pageout` activates it, still dirty, with no
/// nr_vmscan_write.
#[test]
fn xfs_without_writepage_has_its_dirty_pages_activated_from_6_1() {
    for (kernel, writes) in [("3.10", 1), ("6.1", 0)] {
        let mut m = Machine::new(kernel);
        let pfn = m.dirty_file_page(m.file, 0);
        m.sys.mm_mut().pages_mut()[pfn as usize].flags |= flags::RECLAIM;
        m.sys.reclaim_mut().node[0].dirty = true;
        m.shrink(LRU_INACTIVE_FILE, m.kswapd(1));
        let p = m.sys.mm().pages()[pfn as usize];
        assert_eq!(m.zone_stat(ZoneEv::NrVmscanWrite), writes, "{kernel}");
        assert_eq!(p.has(flags::WRITEBACK), writes == 1, "{kernel}");
        if writes == 0 {
            assert!(p.has(flags::DIRTY) && p.holder == Holder::ActiveFile);
        }
        m.check();
    }
}

/// 3.0 `pageout`: kswapd writes a dirty file page even at DEF_PRIORITY
/// (PG_reclaim set, `->writepage`, nr_vmscan_write); the page, now under
/// writeback, goes back to the head of the inactive list.
#[test]
fn kswapd_writes_a_dirty_file_page_at_def_priority_under_3_0() {
    let mut m = Machine::new("3.0-vanilla");
    let pfn = m.dirty_file_page(m.file, 0);
    let sc = m.shrink(LRU_INACTIVE_FILE, m.kswapd(DEF_PRIORITY));
    assert_eq!(sc.nr_reclaimed, 0);
    assert!(m.has(pfn, flags::WRITEBACK) && m.has(pfn, flags::RECLAIM));
    assert!(!m.has(pfn, flags::DIRTY));
    assert_eq!(m.place(pfn), (Holder::InactiveFile, true));
    assert_eq!(m.zone_stat(ZoneEv::NrVmscanWrite), 1);
    m.check();
}

/// Gorman's series (3.2; the 3.1-mmotm preset, `kswapd_writepage_max_priority`
/// 9): kswapd skips a dirty file page at priority 10 (DEF_PRIORITY - 2),
/// marking it PG_reclaim for immediate reclaim, and writes it at 9.
#[test]
fn kswapd_writes_dirty_file_pages_only_at_priority_9_or_below_under_3_1_mmotm() {
    let mut m = Machine::new("3.1-mmotm");
    let pfn = m.dirty_file_page(m.file, 0);
    m.shrink(LRU_INACTIVE_FILE, m.kswapd(10));
    assert!(m.has(pfn, flags::DIRTY) && m.has(pfn, flags::RECLAIM));
    assert!(!m.has(pfn, flags::WRITEBACK));
    assert_eq!(
        m.sys
            .mm()
            .vmstat()
            .zone_sum(ZoneEv::NrVmscanImmediateReclaim),
        1
    );
    assert_eq!(m.zone_stat(ZoneEv::NrVmscanWrite), 0);

    m.shrink(LRU_INACTIVE_FILE, m.kswapd(9));
    assert!(m.has(pfn, flags::WRITEBACK) && !m.has(pfn, flags::DIRTY));
    assert_eq!(
        m.sys
            .mm()
            .vmstat()
            .zone_sum(ZoneEv::NrVmscanImmediateReclaim),
        1
    );
    assert_eq!(m.zone_stat(ZoneEv::NrVmscanWrite), 1);
    m.check();
}

/// `direct_reclaim_writes_file_pages`: 3.0 direct reclaim writes a dirty
/// file page (here a block-device page: `blkdev_writepage` always
/// writes); 3.1-mmotm's direct reclaim never does, whatever the priority.
#[test]
fn direct_reclaim_writes_dirty_file_pages_under_3_0_vanilla_only() {
    let mut m = Machine::new("3.0-vanilla");
    let pfn = m.dirty_file_page(m.bdev, 0);
    m.shrink(LRU_INACTIVE_FILE, m.direct(DEF_PRIORITY));
    assert!(m.has(pfn, flags::WRITEBACK) && !m.has(pfn, flags::DIRTY));
    assert_eq!(m.zone_stat(ZoneEv::NrVmscanWrite), 1);
    m.check();

    let mut m = Machine::new("3.1-mmotm");
    let pfn = m.dirty_file_page(m.bdev, 0);
    m.shrink(LRU_INACTIVE_FILE, m.direct(0));
    assert!(m.has(pfn, flags::DIRTY) && !m.has(pfn, flags::WRITEBACK));
    assert_eq!(m.zone_stat(ZoneEv::NrVmscanWrite), 0);
    m.check();
}

/// 3.0 `xfs_vm_writepage` refuses direct reclaim (PF_MEMALLOC without
/// PF_KSWAPD) and redirties the page; `pageout` still counts a write
/// (nr_vmscan_write) and, the page not being under writeback, clears
/// PG_reclaim. The page stays dirty at the inactive head.
#[test]
fn xfs_refuses_writepage_from_direct_reclaim() {
    let mut m = Machine::new("3.0-vanilla");
    let pfn = m.dirty_file_page(m.file, 0);
    let dirtied = m.sys.mm().vmstat().get(Ev::NrDirtied);
    m.shrink(LRU_INACTIVE_FILE, m.direct(DEF_PRIORITY));
    assert!(m.has(pfn, flags::DIRTY));
    assert!(!m.has(pfn, flags::WRITEBACK) && !m.has(pfn, flags::RECLAIM));
    assert_eq!(m.place(pfn), (Holder::InactiveFile, true));
    assert_eq!(m.zone_stat(ZoneEv::NrVmscanWrite), 1);
    // redirty_page_for_writepage dirties it anew.
    assert_eq!(m.sys.mm().vmstat().get(Ev::NrDirtied), dirtied + 1);
    m.check();
}

/// `skipped_dirty_file_page = keep` (Gorman RFC patches 1-2): a dirty file
/// page direct reclaim may not write goes back to the inactive head still
/// dirty, counted in nr_vmscan_write_skip.
#[test]
fn skipped_dirty_page_is_kept_dirty_under_keep() {
    let mut m = Machine::new("3.0-rc6+reclaim-1-2");
    let pfn = m.dirty_file_page(m.bdev, 0);
    let sc = m.shrink(LRU_INACTIVE_FILE, m.direct(DEF_PRIORITY));
    assert_eq!(sc.nr_reclaimed, 0);
    assert_eq!(m.place(pfn), (Holder::InactiveFile, true));
    assert!(m.has(pfn, flags::DIRTY) && !m.has(pfn, flags::RECLAIM));
    assert_eq!(m.sys.mm().vmstat().get(Ev::NrVmscanWriteSkip), 1);
    assert_eq!(m.zone_stat(ZoneEv::NrVmscanWrite), 0);
    m.check();
}

/// `skipped_dirty_file_page = orphan` (RFC patch 4): the skipped page is
/// counted in nr_vmscan_invalidate and leaves the LRU for good, still dirty
/// and in its mapping.
#[test]
fn skipped_dirty_page_leaves_the_lru_under_orphan() {
    let mut m = Machine::new("3.0-rc6+reclaim-1-4");
    let pfn = m.dirty_file_page(m.bdev, 0);
    m.shrink(LRU_INACTIVE_FILE, m.direct(DEF_PRIORITY));
    assert_eq!(m.place(pfn).0, Holder::Orphaned);
    assert_eq!(m.zone().lruvec.lists[LRU_INACTIVE_FILE].len, 0);
    assert!(m.has(pfn, flags::DIRTY));
    assert_eq!(m.sys.mm().inode(m.bdev).page(0), pfn);
    assert_eq!(m.sys.mm().vmstat().get(Ev::NrVmscanInvalidate), 1);
    assert_eq!(m.sys.mm().vmstat().get(Ev::NrVmscanWriteSkip), 0);
    m.check();
}

/// `skipped_dirty_file_page = immediate-reclaim` (3.2, the 3.1-mmotm
/// preset): the skipped page gets PG_reclaim, so that the end of its
/// writeback rotates it to the tail, and goes back to the inactive head;
/// counted in nr_vmscan_immediate_reclaim.
#[test]
fn skipped_dirty_page_gets_pg_reclaim_under_immediate_reclaim() {
    let mut m = Machine::new("3.1-mmotm");
    let pfn = m.dirty_file_page(m.bdev, 0);
    m.shrink(LRU_INACTIVE_FILE, m.direct(DEF_PRIORITY));
    assert_eq!(m.place(pfn), (Holder::InactiveFile, true));
    assert!(m.has(pfn, flags::DIRTY) && m.has(pfn, flags::RECLAIM));
    assert_eq!(
        m.sys
            .mm()
            .vmstat()
            .zone_sum(ZoneEv::NrVmscanImmediateReclaim),
        1
    );
    assert_eq!(m.sys.mm().vmstat().get(Ev::NrVmscanWriteSkip), 0);
    m.check();
}

/// A page under writeback (async reclaim: no `wait_on_page_writeback`)
/// and a page whose `trylock_page` fails (a read in flight) are kept,
/// back at the inactive head, untouched. The model counts every isolated
/// page in `nr_scanned`; 3.0 counts it in `shrink_page_list` after
/// `trylock_page`, so the locked page would not count there (a difference,
/// pinned here).
#[test]
fn page_under_writeback_or_locked_is_kept() {
    let mut m = Machine::new("3.0-vanilla");
    let wb = m.dirty_file_page(m.file, 0);
    m.sys.start_page_writeback(wb);
    let locked = m.file_page(m.file, 2);
    m.sys.mm_mut().pages_mut()[locked as usize].flags |= flags::LOCKED;
    let sc = m.shrink(LRU_INACTIVE_FILE, m.kswapd(DEF_PRIORITY));
    assert_eq!((sc.nr_scanned, sc.nr_reclaimed), (2, 0));
    assert_eq!(m.place(wb).0, Holder::InactiveFile);
    assert_eq!(m.place(locked).0, Holder::InactiveFile);
    assert!(m.has(wb, flags::WRITEBACK) && !m.has(wb, flags::RECLAIM));
    assert_eq!(m.zone_stat(ZoneEv::NrVmscanWrite), 0);
    m.check();
}

/// `page_check_references` (3.0) for a mapped file page with a young PTE:
/// the first time it is kept with PG_referenced set ("look twice"), the
/// second time activated (pgactivate). A mapped page counts twice in
/// nr_scanned ("double the slab pressure").
#[test]
fn mapped_file_page_is_kept_once_then_activated() {
    let mut m = Machine::new("3.0-vanilla");
    let pfn = m.file_page(m.file, 0);
    m.sys.mm_mut().pages_mut()[pfn as usize].flags |= flags::PTE_MAPPED | flags::PTE_YOUNG;
    let sc = m.shrink(LRU_INACTIVE_FILE, m.direct(DEF_PRIORITY));
    assert_eq!((sc.nr_scanned, sc.nr_reclaimed), (2, 0));
    assert_eq!(m.place(pfn), (Holder::InactiveFile, true));
    assert!(m.has(pfn, flags::REFERENCED) && !m.has(pfn, flags::PTE_YOUNG));
    assert_eq!(m.sys.mm().vmstat().get(Ev::PgActivate), 0);

    // The process touches it again.
    m.sys.mm_mut().pages_mut()[pfn as usize].flags |= flags::PTE_YOUNG;
    m.shrink(LRU_INACTIVE_FILE, m.direct(DEF_PRIORITY));
    assert_eq!(m.place(pfn).0, Holder::ActiveFile);
    assert!(m.has(pfn, flags::ACTIVE) && m.has(pfn, flags::PTE_MAPPED));
    assert_eq!(m.sys.mm().vmstat().get(Ev::PgActivate), 1);
    m.check();
}

/// PAGEREF_RECLAIM_CLEAN (3.0): an unmapped file page with only
/// PG_referenced is freed if clean, but kept unwritten if dirty, even by
/// kswapd under 3.0; `TestClearPageReferenced` clears the flag either way.
#[test]
fn referenced_unmapped_file_page_is_freed_if_clean_but_not_written_if_dirty() {
    let mut m = Machine::new("3.0-vanilla");
    let clean = m.file_page(m.file, 0);
    let dirty = m.dirty_file_page(m.file, 2);
    for pfn in [clean, dirty] {
        m.sys.mm_mut().pages_mut()[pfn as usize].flags |= flags::REFERENCED;
    }
    let sc = m.shrink(LRU_INACTIVE_FILE, m.kswapd(DEF_PRIORITY));
    assert_eq!(sc.nr_reclaimed, 1);
    assert_eq!(m.place(clean).0, Holder::Free);
    assert_eq!(m.place(dirty), (Holder::InactiveFile, true));
    assert!(m.has(dirty, flags::DIRTY) && !m.has(dirty, flags::WRITEBACK));
    assert!(!m.has(dirty, flags::REFERENCED));
    assert_eq!(m.zone_stat(ZoneEv::NrVmscanWrite), 0);
    m.check();
}

/// `may_write_to_queue` (3.0): direct reclaim does not write to a
/// congested queue that is not its own (`pageout` returns PAGE_KEEP); when
/// every dirty page met was so, the zone is flagged ZONE_CONGESTED. kswapd
/// (PF_SWAPWRITE) writes anyway.
#[test]
fn direct_reclaim_skips_a_congested_queue_and_flags_the_zone_but_kswapd_writes() {
    let mut m = Machine::new("3.0-vanilla");
    let pfn = m.dirty_file_page(m.bdev, 0);
    let dev = m.sys.page_device_sector(m.bdev, 0).unwrap().0;
    m.sys.block_mut().queue_mut(dev).congested = true;
    m.shrink(LRU_INACTIVE_FILE, m.direct(DEF_PRIORITY));
    assert!(m.has(pfn, flags::DIRTY) && !m.has(pfn, flags::WRITEBACK));
    assert!(m.zone().congested);
    assert_eq!(m.zone_stat(ZoneEv::NrVmscanWrite), 0);

    m.shrink(LRU_INACTIVE_FILE, m.kswapd(DEF_PRIORITY));
    assert!(m.has(pfn, flags::WRITEBACK));
    assert_eq!(m.zone_stat(ZoneEv::NrVmscanWrite), 1);
    m.check();
}

/// An anonymous page with a young PTE is activated (PAGEREF_ACTIVATE; no
/// second round as for file pages) before any swap slot is taken.
#[test]
fn young_anon_page_is_activated() {
    let mut m = Machine::with_swap("3.0-vanilla");
    let pfn = m.anon_page(0);
    // The process touches it: its PTE's accessed bit.
    m.sys.mm_mut().anon_region_mut(0).map(0, pfn);
    let free_slots = m.sys.mm().nr_swap_pages();
    m.shrink(LRU_INACTIVE_ANON, m.direct(DEF_PRIORITY));
    assert_eq!(m.place(pfn), (Holder::ActiveAnon, true));
    assert!(!m.has(pfn, flags::SWAPCACHE));
    assert_eq!(m.sys.mm().nr_swap_pages(), free_slots);
    assert_eq!(m.sys.mm().vmstat().get(Ev::PgActivate), 1);
    m.check();
}

/// An unreferenced anonymous page with swap: `add_to_swap` gives it a slot
/// and dirties it, `try_to_unmap` turns its PTE into the swap entry, and
/// `pageout` → `swap_writepage` writes it (pswpout, nr_vmscan_write); it
/// stays on the inactive anon list under writeback. The file-page switches
/// of 3.1-mmotm do not stop direct reclaim from swapping.
#[test]
fn anon_page_is_written_to_swap_by_direct_reclaim_under_3_1_mmotm() {
    let mut m = Machine::with_swap("3.1-mmotm");
    let pfn = m.anon_page(7);
    let sc = m.shrink(LRU_INACTIVE_ANON, m.direct(DEF_PRIORITY));
    // Mapped, so counted twice.
    assert_eq!((sc.nr_scanned, sc.nr_reclaimed), (2, 0));
    let p = m.sys.mm().pages()[pfn as usize];
    assert!(p.has(flags::SWAPCACHE) && p.has(flags::WRITEBACK));
    assert!(!p.has(flags::DIRTY) && !p.has(flags::PTE_MAPPED));
    let swap = m.sys.mm().swap().as_ref().unwrap().inode;
    assert_eq!(p.inode(), swap);
    assert_eq!(
        m.sys.mm().anon_regions()[0].pte(7),
        crate::mm::swap::Pte::Swapped(p.index())
    );
    assert_eq!(m.place(pfn), (Holder::InactiveAnon, true));
    assert_eq!(m.sys.mm().vmstat().get(Ev::PswpOut), 1);
    assert_eq!(m.zone_stat(ZoneEv::NrVmscanWrite), 1);
    m.check();
}

/// Without swap `add_to_swap` fails and the page is activated
/// (`activate_locked`), still mapped.
#[test]
fn anon_page_without_swap_is_activated() {
    let mut m = Machine::new("3.0-vanilla");
    let pfn = m.anon_page(0);
    m.shrink(LRU_INACTIVE_ANON, m.kswapd(DEF_PRIORITY));
    assert_eq!(m.place(pfn).0, Holder::ActiveAnon);
    assert!(m.has(pfn, flags::PTE_MAPPED) && !m.has(pfn, flags::SWAPCACHE));
    assert_eq!(m.sys.mm().vmstat().get(Ev::PgActivate), 1);
    assert_eq!(m.zone().lruvec.lists[LRU_ACTIVE_ANON].len, 1);
    m.check();
}

/// 3.2 `shrink_inactive_list` (mm/vmscan.c, 3.2.4): when the pages under
/// writeback among those isolated reach `nr_taken >> (DEF_PRIORITY -
/// priority)` (all of them at priority 12), the reclaimer calls
/// `wait_iff_congested`, which sleeps while a queue and the zone are
/// congested. 3.1-mmotm has no such throttle; a batch with fewer such
/// pages does not throttle either.
#[test]
fn batch_mostly_under_writeback_throttles_the_reclaimer_under_3_2() {
    for (kernel, under_writeback, stalls) in
        [("3.2", 4, true), ("3.2", 3, false), ("3.1-mmotm", 4, false)]
    {
        let mut m = Machine::new(kernel);
        m.congested_writeback_tail(4, under_writeback);
        let sc = m.shrink(LRU_INACTIVE_FILE, m.kswapd(DEF_PRIORITY));
        assert_eq!(
            sc.stall.is_some(),
            stalls,
            "{kernel}, {under_writeback} of 4 under writeback"
        );
    }
}
