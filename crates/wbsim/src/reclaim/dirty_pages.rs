//! Reclaim's treatment of dirty file pages, the dispatch point: who may
//! write them from reclaim, what becomes of one it may not write, and
//! whether a reclaimer whose batch was mostly dirty is throttled. Chosen
//! once, when the machine is built, from the kernel profile
//! ([`DirtyPagePolicy`]); `shrink_page_list` (`pageout.rs`) asks here.
//!
//! 3.0 lets kswapd and direct reclaim write any dirty page; Mel Gorman's
//! 2011 series stops direct reclaim (patch 1) and kswapd above a priority
//! (patch 2), throttles (patch 3), orphans or flags skipped pages
//! (patches 4, 5); 3.2 merged the first two with PG_reclaim marking
//! (`SkippedDirtyPage::ImmediateReclaim`). 4.11+ (read in 6.1
//! `shrink_folio_list`) moves dirty and writeback pages out of the way
//! (activated with PG_reclaim) and lets kswapd write only pages it has
//! seen twice on a node flagged PGDAT_DIRTY.

use super::pageout::Fate;
use super::{ReclaimHost, ScanControl};
use crate::kernel::{KernelProfile, SkippedDirtyPage, WritebackInReclaim};
use crate::mm::page::flags;
use crate::mm::vmstat::{Ev, ZoneEv};
use crate::writeback::pass::WritebackPasses;

/// The profile's rules for dirty file pages met by reclaim.
#[derive(Debug, Clone, Copy)]
pub struct DirtyPagePolicy {
    /// kswapd writes file pages only at this priority or below
    /// (`DEF_PRIORITY`: always).
    kswapd_writepage_max_priority: u32,
    /// Direct reclaim writes file pages (3.0: yes).
    direct_reclaim_writes_file_pages: bool,
    /// What becomes of a dirty file page reclaim may not write.
    skipped: SkippedDirtyPage,
    /// RFC patch 3: throttle a reclaimer whose batch was mostly dirty.
    throttle_on_dirty_isolated: bool,
    /// 3.2: throttle a reclaimer whose batch was mostly under writeback.
    throttle_on_writeback_isolated: bool,
    /// RFC patch 5: flag the inode so the flusher writes it first.
    flag_inodes: bool,
    /// 4.11+: kswapd writes only PG_reclaim pages on a PGDAT_DIRTY node.
    kswapd_writes_seen_twice: bool,
    /// What becomes of a page under writeback met at the tail.
    writeback: WritebackInReclaim,
    /// Which filesystems' regular files have an `->writepage` for
    /// `pageout()` (6.1: not xfs, not btrfs).
    fs_writepage: crate::kernel::FsWritepage,
}

impl DirtyPagePolicy {
    pub fn from_profile(profile: &KernelProfile) -> DirtyPagePolicy {
        DirtyPagePolicy {
            kswapd_writepage_max_priority: profile.kswapd_writepage_max_priority,
            direct_reclaim_writes_file_pages: profile.direct_reclaim_writes_file_pages,
            skipped: profile.skipped_dirty_file_page,
            throttle_on_dirty_isolated: profile.throttle_on_dirty_isolated,
            throttle_on_writeback_isolated: profile.throttle_on_writeback_isolated,
            flag_inodes: profile.flush_reclaim_inodes_first,
            kswapd_writes_seen_twice: profile.kswapd_writes_seen_twice,
            writeback: profile.writeback_page_in_reclaim,
            fs_writepage: profile.fs_writepage,
        }
    }
}

/// The decisions `shrink_page_list` asks of the policy.
pub trait DirtyPages: ReclaimHost {
    /// `pageout()` finds no `->writepage` for the page's mapping (6.1's
    /// xfs and btrfs regular files): PAGE_ACTIVATE.
    fn pageout_has_no_writepage(&self, pfn: u32) -> bool {
        use crate::mm::inode::MappingKind;
        if self.reclaim().dirty_pages.fs_writepage == crate::kernel::FsWritepage::All {
            return false;
        }
        let inode = self.mm().inode(self.mm().pages()[pfn as usize].inode());
        let fs_type = self.fs().get(inode.fs()).fs_type;
        inode.kind == MappingKind::Regular
            && matches!(fs_type, crate::fs::FsType::Xfs | crate::fs::FsType::Btrfs)
    }

    /// May this reclaimer write the dirty file page `pfn` (`pageout`)?
    fn reclaim_may_write_file(&self, sc: &ScanControl, pfn: u32) -> bool {
        let p = &self.reclaim().dirty_pages;
        if sc.is_kswapd {
            let seen_twice = !p.kswapd_writes_seen_twice
                || (self.mm().pages()[pfn as usize].has(flags::RECLAIM)
                    && self.reclaim().node[sc.nid].dirty);
            seen_twice && sc.priority <= p.kswapd_writepage_max_priority
        } else {
            p.direct_reclaim_writes_file_pages
        }
    }

    /// A page under writeback met at the tail: kept on the inactive list
    /// (3.0 – 4.10), or activated with PG_reclaim (4.11+), counted in
    /// `nr_immediate` when kswapd meets it a second time on a node flagged
    /// PGDAT_WRITEBACK.
    fn writeback_page_met(&mut self, pfn: u32, sc: &mut ScanControl) -> Fate {
        match self.reclaim().dirty_pages.writeback {
            WritebackInReclaim::Keep => Fate::Kept,
            WritebackInReclaim::Activate => {
                let seen = self.mm().pages()[pfn as usize].has(flags::RECLAIM);
                if sc.is_kswapd && seen && self.reclaim().node[sc.nid].writeback {
                    sc.nr.immediate += 1;
                } else {
                    self.mm_mut().pages_mut()[pfn as usize].flags |= flags::RECLAIM;
                }
                Fate::Activated
            }
        }
    }

    /// 4.11+ `shrink_inactive_list`: a batch whose every page was dirty and
    /// not queued for IO wakes the flushers (`wakeup_flusher_threads`,
    /// WB_REASON_VMSCAN: all dirty pages).
    fn wakes_flushers_on_unqueued_dirty(&self) -> bool {
        self.reclaim().dirty_pages.writeback == WritebackInReclaim::Activate
    }

    /// Throttle a reclaimer whose batch was mostly dirty (RFC patch 3),
    /// unless it already sleeps for another reason.
    fn throttle_dirty_batch(&self, sc: &ScanControl) -> bool {
        self.reclaim().dirty_pages.throttle_on_dirty_isolated && sc.stall.is_none()
    }

    /// Throttle a reclaimer whose batch was mostly pages under writeback
    /// (3.2), unless it already sleeps for another reason.
    fn throttle_writeback_batch(&self, sc: &ScanControl) -> bool {
        self.reclaim().dirty_pages.throttle_on_writeback_isolated && sc.stall.is_none()
    }

    /// Reclaim may not write a dirty page of `ino`: flag the inode for the
    /// flusher (RFC patch 5); whether it did.
    fn flag_inode_for_writeback(&mut self, ino: u32) -> bool {
        if !self.reclaim().dirty_pages.flag_inodes {
            return false;
        }
        self.mark_inode_dirty_reclaim(ino);
        true
    }

    /// A dirty file page reclaim may not write (see `SkippedDirtyPage`).
    fn skip_dirty_file_page(&mut self, pfn: u32) -> Fate {
        match self.reclaim().dirty_pages.skipped {
            SkippedDirtyPage::Keep => {
                self.mm_mut().vmstat_mut().inc(Ev::NrVmscanWriteSkip, 1);
                Fate::Kept
            }
            SkippedDirtyPage::ImmediateReclaim => {
                self.mm_mut().pages_mut()[pfn as usize].flags |= flags::RECLAIM;
                let zone = self.mm().pages().zone_of(pfn);
                self.mm_mut()
                    .vmstat_mut()
                    .zinc(zone, ZoneEv::NrVmscanImmediateReclaim, 1);
                Fate::Kept
            }
            SkippedDirtyPage::Orphan => {
                self.mm_mut().vmstat_mut().inc(Ev::NrVmscanInvalidate, 1);
                Fate::Orphaned
            }
            SkippedDirtyPage::ActivateReclaim => {
                self.mm_mut().pages_mut()[pfn as usize].flags |= flags::RECLAIM;
                let zone = self.mm().pages().zone_of(pfn);
                self.mm_mut()
                    .vmstat_mut()
                    .zinc(zone, ZoneEv::NrVmscanImmediateReclaim, 1);
                Fate::Activated
            }
        }
    }
}

impl<T: ReclaimHost + ?Sized> DirtyPages for T {}
