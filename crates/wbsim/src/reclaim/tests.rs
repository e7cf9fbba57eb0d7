//! The reclaim unit tests' machine: one 16 MiB DMA32 zone (watermarks min
//! 128, low 160, high 192 pages; per-CPU lists of `high` 0, so a freed page
//! is back on the buddy list at once), one CPU, the test USB stick with an
//! xfs filesystem, optionally a swap partition. The tests place pages on
//! the LRU lists and take free pages away by hand, then call one reclaim
//! function; this module also holds the tests of `shrink_zone`.

use super::{ScanControl, DEF_PRIORITY, SWAP_CLUSTER_MAX};
use crate::block::submit::Submit;
use crate::block::BlockHost;
use crate::fs::FsHost;
use crate::kernel::preset;
use crate::mm::inode::{Inode, MappingKind};
use crate::mm::page::{flags, Holder, Pfn, LRU_INACTIVE_ANON, LRU_INACTIVE_FILE};
use crate::mm::swap::AnonRegion;
use crate::mm::vmstat::ZoneEv;
use crate::mm::zone::Zone;
use crate::mm::MmHost;
use crate::reclaim::pageout::ShrinkList;
use crate::reclaim::ShrinkZone;
use crate::scenario::SwapConfig;
use crate::sched::HasCore;
use crate::system::{build_system, System};
use crate::test_support::usb_stick_scenario;

/// The zone every test works in.
pub(super) const ZONE: usize = 0;

pub(super) struct Machine {
    pub sys: System,
    /// The dd task: the allocating task and direct reclaimer.
    pub tid: u32,
    /// A regular xfs file (xfs `->writepage` writes for kswapd only).
    pub file: u32,
    /// The USB stick's block-device inode (`blkdev_writepage` always
    /// writes).
    pub bdev: u32,
}

impl Machine {
    /// The machine on kernel preset `kernel`, without swap.
    pub fn new(kernel: &str) -> Machine {
        Machine::build(kernel, false)
    }

    /// The machine with a 64 MiB swap partition on the stick and one
    /// anonymous region of 256 pages (see [`Machine::anon_page`]).
    pub fn with_swap(kernel: &str) -> Machine {
        Machine::build(kernel, true)
    }

    fn build(kernel: &str, swap: bool) -> Machine {
        let mut sc = usb_stick_scenario(kernel, "xfs", 1, &["f"]);
        sc.machine.zones[0].size_mib = 16;
        if swap {
            sc.swap = Some(SwapConfig {
                device: "sdb".into(),
                size_mib: 64,
            });
        }
        let mut sys = build_system(&sc, &preset(kernel).unwrap(), 1);
        let z = sys.mm().zone(ZONE);
        assert_eq!((z.wmark_min, z.wmark_low, z.wmark_high), (128, 160, 192));
        let file = (0..sys.mm().nr_inodes() as u32)
            .find(|&i| sys.mm().inode(i).kind == MappingKind::Regular)
            .unwrap();
        let bdev = sys.fs().get(0).blockdev_inode;
        // An anonymous region, as a memtouch task's would be.
        let id = sys.mm().nr_inodes() as u32;
        let bdi = sys.mm().swap().map_or(0, |s| s.device);
        sys.mm_mut()
            .add_inode(Inode::new(id, 0, bdi, MappingKind::Anon, 0));
        sys.mm_mut().add_anon_region(AnonRegion::new(id, 256));
        Machine {
            sys,
            tid: 0,
            file,
            bdev,
        }
    }

    pub fn zone(&self) -> &Zone {
        self.sys.mm().zone(ZONE)
    }

    /// A free frame taken off the buddy list, kernel-held.
    fn take_frame(&mut self) -> Pfn {
        self.sys.mm_mut().take_free_page(ZONE).expect("a free page")
    }

    /// Take free pages away (kernel-held for good) until `n` are left.
    pub fn leave_free(&mut self, n: u64) {
        while self.zone().nr_free() > n {
            self.take_frame();
        }
    }

    /// A clean, unmapped page `idx` of mapping `ino` at the head of the
    /// inactive file list.
    pub fn file_page(&mut self, ino: u32, idx: u32) -> Pfn {
        let pfn = self.take_frame();
        let p = &mut self.sys.mm_mut().pages_mut()[pfn as usize];
        p.flags = flags::UPTODATE;
        p.set_mapping(ino, idx);
        self.sys.mm_mut().inode_mut(ino).insert(idx, pfn);
        self.sys.mm_mut().lru_link_head(pfn, LRU_INACTIVE_FILE);
        pfn
    }

    /// As [`Machine::file_page`], dirtied (`set_page_dirty`).
    pub fn dirty_file_page(&mut self, ino: u32, idx: u32) -> Pfn {
        let pfn = self.file_page(ino, idx);
        self.sys.set_page_dirty(pfn, None);
        pfn
    }

    /// `n` pages 0.. of `ino`, clean or dirty; page 0 ends at the tail of
    /// the inactive file list, so reclaim meets them in index order.
    pub fn file_pages(&mut self, ino: u32, n: u32, dirty: bool) -> Vec<Pfn> {
        (0..n)
            .map(|idx| {
                if dirty {
                    self.dirty_file_page(ino, idx)
                } else {
                    self.file_page(ino, idx)
                }
            })
            .collect()
    }

    /// `n` clean pages 0.. of the regular file, the first `under_writeback`
    /// of them (the list's tail) flagged PG_writeback by hand (no counts),
    /// with the file's queue and the zone congested: a batch of them makes
    /// 3.2's `wait_iff_congested` sleep.
    pub fn congested_writeback_tail(&mut self, n: u32, under_writeback: usize) {
        let pages = self.file_pages(self.file, n, false);
        for &pfn in &pages[..under_writeback] {
            self.sys.mm_mut().pages_mut()[pfn as usize].flags |= flags::WRITEBACK;
        }
        let dev = self.sys.page_device_sector(self.file, 0).unwrap().0;
        self.sys.block_mut().queue_mut(dev).congested = true;
        self.sys.mm_mut().zone_mut(ZONE).congested = true;
    }

    /// A page of the anonymous region at `vpn`, mapped and not young
    /// (its fault's accessed bit already cleared), not in the swap cache,
    /// at the head of the inactive anon list.
    pub fn anon_page(&mut self, vpn: u32) -> Pfn {
        let ino = self.sys.mm().anon_regions()[0].inode;
        let pfn = self.take_frame();
        let p = &mut self.sys.mm_mut().pages_mut()[pfn as usize];
        p.flags = flags::ANON | flags::UPTODATE | flags::PTE_MAPPED;
        p.set_mapping(ino, vpn);
        self.sys.mm_mut().inode_mut(ino).insert(vpn, pfn);
        let region = self.sys.mm_mut().anon_region_mut(0);
        region.map(vpn, pfn);
        region.test_and_clear_young(vpn);
        self.sys.mm_mut().lru_link_head(pfn, LRU_INACTIVE_ANON);
        pfn
    }

    /// Direct reclaim's `scan_control` for the dd task at `priority`.
    pub fn direct(&self, priority: u32) -> ScanControl {
        ScanControl {
            tid: self.tid,
            nid: 0,
            is_kswapd: false,
            may_writepage: true,
            nr_to_reclaim: SWAP_CLUSTER_MAX,
            nr_scanned: 0,
            nr_reclaimed: 0,
            priority,
            stall: None,
            nr: Default::default(),
            reclaim_idx: None,
        }
    }

    /// kswapd's `scan_control` (`balance_pgdat`) at `priority`.
    pub fn kswapd(&self, priority: u32) -> ScanControl {
        ScanControl {
            tid: self.sys.kswapd_task(),
            is_kswapd: true,
            nr_to_reclaim: u64::MAX,
            ..self.direct(priority)
        }
    }

    /// One `shrink_inactive_list` batch (up to `SWAP_CLUSTER_MAX` pages)
    /// of list `lru`; the scan control after it.
    pub fn shrink(&mut self, lru: usize, mut sc: ScanControl) -> ScanControl {
        self.sys
            .shrink_inactive_list(ZONE, lru, SWAP_CLUSTER_MAX, &mut sc);
        sc
    }

    /// Where page `pfn` is: its holder, and whether it is the head of its
    /// LRU list.
    pub fn place(&self, pfn: Pfn) -> (Holder, bool) {
        let p = self.sys.mm().pages()[pfn as usize];
        let head = p
            .holder
            .lru()
            .is_some_and(|l| self.zone().lruvec.lists[l].head == pfn);
        (p.holder, head)
    }

    pub fn has(&self, pfn: Pfn, f: u16) -> bool {
        self.sys.mm().pages()[pfn as usize].has(f)
    }

    pub fn zone_stat(&self, e: ZoneEv) -> u64 {
        self.sys.mm().vmstat().zone_stat(ZONE, e)
    }

    /// The conservation invariants hold (the hand-built state and what
    /// reclaim did to it are consistent).
    pub fn check(&self) {
        self.sys.check_invariants().unwrap();
    }
}

/// `shrink_zone` (3.0): direct reclaim leaves a zone early, after a round
/// of `SWAP_CLUSTER_MAX` batches, once it has reclaimed `nr_to_reclaim`
/// pages below `DEF_PRIORITY`: at priority 4 a 2000-page list is due 125
/// scans, and the first 32 suffice.
#[test]
fn shrink_zone_stops_direct_reclaim_once_the_target_is_reclaimed() {
    let mut m = Machine::new("3.0-vanilla");
    m.file_pages(m.file, 2000, false);
    let mut sc = m.direct(4);
    assert_eq!(m.sys.get_scan_count(ZONE, &sc)[LRU_INACTIVE_FILE], 125);
    m.sys.shrink_zone(ZONE, &mut sc);
    assert_eq!((sc.nr_scanned, sc.nr_reclaimed), (32, 32));
    assert_eq!(m.zone().lruvec.lists[LRU_INACTIVE_FILE].len, 2000 - 32);
    m.check();
}

/// The same stop counts only the pages this call reclaimed (3.x
/// `shrink_zone`'s local `nr_reclaimed`, from 0): with 20 pages from
/// earlier priorities, a first round that frees 12 (20 dirty pages are
/// skipped) does not end the zone; the second round's 32 do.
#[test]
fn shrink_zone_stops_on_the_pages_reclaimed_in_this_call_only() {
    let mut m = Machine::new("3.1-mmotm");
    // Tail first: 12 clean pages, then 20 dirty ones direct reclaim may
    // not write under 3.1-mmotm, then clean ones.
    for idx in 0..2000 {
        if (12..32).contains(&idx) {
            m.dirty_file_page(m.file, idx);
        } else {
            m.file_page(m.file, idx);
        }
    }
    let mut sc = ScanControl {
        nr_reclaimed: 20,
        ..m.direct(4)
    };
    m.sys.shrink_zone(ZONE, &mut sc);
    assert_eq!((sc.nr_scanned, sc.nr_reclaimed), (64, 20 + 12 + 32));
    m.check();
}

/// `get_scan_count` (3.0) for kswapd on a small zone: without swap only
/// the file lists are scanned, and a list whose `size >> priority` is
/// below `SWAP_CLUSTER_MAX` is scanned a full batch anyway (`force_scan`);
/// direct reclaim gets no such batch.
#[test]
fn kswapd_scans_a_full_batch_of_a_small_zone_at_def_priority() {
    let mut m = Machine::new("3.0-vanilla");
    m.file_pages(m.file, 1000, false);
    m.anon_page(0);
    let sc = m.kswapd(DEF_PRIORITY);
    assert_eq!(m.sys.get_scan_count(ZONE, &sc), [0, 0, 32, 32]);
    let sc = m.direct(DEF_PRIORITY);
    assert_eq!(m.sys.get_scan_count(ZONE, &sc), [0, 0, 0, 0]);
}

/// `get_scan_count`'s forced batch by era: 3.2 gives kswapd a full batch
/// of any list whose share is zero; 3.3 (b95a2f2d486d) only while the zone
/// is all_unreclaimable, so a small zone is not scanned at DEF_PRIORITY.
#[test]
fn kswapd_forced_batch_is_always_in_3_2_and_only_for_all_unreclaimable_zones_in_3_3() {
    for (kernel, unreclaimable, expected) in [
        ("3.2", false, [0, 0, 32, 32]),
        ("3.3", false, [0, 0, 0, 0]),
        ("3.3", true, [0, 0, 32, 32]),
    ] {
        let mut m = Machine::new(kernel);
        m.file_pages(m.file, 1000, false);
        m.sys.mm_mut().zone_mut(ZONE).all_unreclaimable = unreclaimable;
        let sc = m.kswapd(DEF_PRIORITY);
        let nr = m.sys.get_scan_count(ZONE, &sc);
        assert_eq!(nr, expected, "{kernel}, all_unreclaimable {unreclaimable}");
    }
}

/// `get_scan_count`'s forced batch with swap, by era. The anon list of a
/// small zone whose recently scanned anon pages all came back referenced
/// (rotated) and whose file pages did not: 3.0 (246e87a93934) forces a
/// full anon batch anyway, which is how kswapd pushes a small, hot anon
/// working set to swap; 3.2 (and 3.1, 3.3, 3.10) scale the forced batch
/// by the anon/file fraction, which here gives anon nothing.
#[test]
fn kswapd_forced_anon_batch_is_full_in_3_0_and_scaled_by_the_fraction_from_3_1() {
    for (kernel, expected_anon) in [("3.0-vanilla", 32), ("3.2", 0), ("3.1-mmotm", 0)] {
        let mut m = Machine::with_swap(kernel);
        m.file_pages(m.file, 1000, false);
        for vpn in 0..8 {
            m.anon_page(vpn);
        }
        let lv = m.sys.mm_mut().lruvec_mut(ZONE);
        lv.recent_scanned = [200, 200];
        lv.recent_rotated = [200, 0];
        let sc = m.kswapd(DEF_PRIORITY);
        let nr = m.sys.get_scan_count(ZONE, &sc);
        assert_eq!(nr[LRU_INACTIVE_ANON], expected_anon, "{kernel}: {nr:?}");
        // File pages get the forced batch nearly whole in both eras.
        assert!(nr[LRU_INACTIVE_FILE] >= 31, "{kernel}: {nr:?}");
    }
}
