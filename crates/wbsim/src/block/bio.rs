//! Bios of many pages, as a filesystem's `->writepages` builds them.
//!
//! xfs gathers the pages of a writeback call into an ioend and submits it
//! as bios of as many contiguous blocks as the queue takes
//! (`xfs_submit_ioend`: `xfs_alloc_ioend_bio`, then `bio_add_page` until
//! it refuses, 2.6.x to 4.x; read in fs/xfs/xfs_aops.c), ext4 from 2.6.39
//! does the same in `io_submit_add_bh` (`mpage_da_submit_io` →
//! `ext4_bio_write_page`, fs/ext4/page-io.c), and btrfs adds each page
//! to the bio it is building (`submit_extent_page`, 3.x). A bio
//! grows while the next page continues it on disk and `bio_add_page`
//! takes it: the queue's `max_sectors`, at most `BIO_MAX_PAGES` pages,
//! and for an md RAID0 array no chunk boundary crossed
//! (`raid0_mergeable_bvec`). The block layer then sees one bio where the
//! model used to submit a bio a page: a streaming writer's requests are
//! made of one bio each, not of a page and its back merges, as the
//! `merges` of a real 6.1 guest's /proc/diskstats show (a few tens for
//! 256 MiB written, against one merge a page before).
//!
//! Not modelled: the queue's `max_segments` (128 by default, which caps
//! 3.x's `bio_get_nr_vecs` at 512 KiB of pages: no scenario's device
//! takes larger requests), and a bio ending where xfs's or ext4's ioend
//! ends (every few thousand pages).
//!
//! The bio being built belongs to the task whose `->writepages` call
//! builds it; it is submitted when a page does not continue it, when it
//! is full, and when the call ends (before the call's plug is finished).
//! The task sleeps for a request only when the bio is submitted.

use super::submit::Submit;
use super::wbt::WbtClass;
use super::Segment;
use crate::mm::page::{Pfn, NIL};
use crate::mm::vmstat::Ev;

/// `BIO_MAX_PAGES`: the bvecs a bio can hold, in 4 KiB pages.
const BIO_MAX_PAGES: u64 = 256;

/// A task's bio under construction (`seg.nr_pages == 0`: none).
#[derive(Debug, Clone, Copy)]
pub struct OpenBio {
    /// The queue it goes to (an array's member, once mapped).
    dev: u32,
    sector: u64,
    nr_sectors: u64,
    /// The most sectors it may reach (`bio_add_page`'s limits).
    max_sectors: u64,
    seg: Segment,
}

impl Default for OpenBio {
    fn default() -> Self {
        OpenBio {
            dev: 0,
            sector: 0,
            nr_sectors: 0,
            max_sectors: 0,
            seg: Segment {
                inode: NIL,
                first_index: 0,
                nr_pages: 0,
            },
        }
    }
}

impl OpenBio {
    #[inline(always)]
    pub(super) fn is_open(&self) -> bool {
        self.seg.nr_pages > 0
    }

    /// Does page `index` of `ino` continue this bio with room for its
    /// `sectors`? A file's pages lie in order on its device from its
    /// base sector, and the bio ends before a RAID chunk boundary, so
    /// the next page of the file is the next sectors of the same queue.
    #[inline(always)]
    fn takes(&self, sectors: u64, ino: u32, index: u32) -> bool {
        self.is_open()
            && self.seg.inode == ino
            && self.seg.first_index.wrapping_add(self.seg.nr_pages) == index
            && self.nr_sectors + sectors <= self.max_sectors
    }
}

/// Building and submitting a task's multi-page bio.
pub trait BioBuilding: Submit {
    /// Would page `index` of `ino` join the bio task `tid` is building?
    #[inline(always)]
    fn bio_takes_page(&self, tid: u32, ino: u32, index: u32) -> bool {
        let sectors = self.mm().unit().sectors();
        self.block().open_bio[tid as usize].takes(sectors, ino, index)
    }

    /// Page `pfn`, just put under writeback, joins task `tid`'s bio; a
    /// bio it does not continue is submitted first (without waiting: the
    /// caller asked [`BioBuilding::open_bio_must_wait`] before).
    #[inline(always)]
    fn bio_add_page(&mut self, tid: u32, pfn: Pfn) {
        let p = self.mm().pages()[pfn as usize];
        let sectors = self.mm().unit().sectors();
        let open = &mut self.block_mut().open_bio[tid as usize];
        if open.takes(sectors, p.inode(), p.index()) {
            open.nr_sectors += sectors;
            open.seg.nr_pages += 1;
            return;
        }
        self.submit_built_bio(tid);
        let Some((dev, sector, chunk_left)) = self.page_queue_sector(p.inode(), p.index()) else {
            return;
        };
        let unit = self.mm().unit();
        let max_sectors = self.block().queues[dev]
            .max_sectors
            .min(unit.sectors_of_pages(unit.from_base_pages(BIO_MAX_PAGES)))
            .min(chunk_left)
            .max(sectors);
        self.block_mut().open_bio[tid as usize] = OpenBio {
            dev: dev as u32,
            sector,
            nr_sectors: sectors,
            max_sectors,
            seg: Segment {
                inode: p.inode(),
                first_index: p.index(),
                nr_pages: 1,
            },
        };
    }

    /// Would submitting task `tid`'s bio now put it to sleep for a
    /// request (`get_request_wait`, `blk_mq_get_tag`, `wbt_wait`)? If so
    /// it is registered as a waiter, as
    /// [`Submit::must_wait_for_request_of`] does for a page's bio.
    #[inline(always)]
    fn open_bio_must_wait(&mut self, tid: u32, class: WbtClass) -> bool {
        let open = &self.block().open_bio[tid as usize];
        if !open.is_open() {
            return false;
        }
        let (dev, sector, nr_sectors) = (open.dev as usize, open.sector, open.nr_sectors);
        self.bio_must_wait(tid, dev, sector, nr_sectors, class)
    }

    /// Submit task `tid`'s bio, if it has one (asked three times for a
    /// file of one page: the test inline, the submission not).
    #[inline(always)]
    fn submit_built_bio(&mut self, tid: u32) {
        if self.block().open_bio[tid as usize].is_open() {
            self.submit_open_built_bio(tid);
        }
    }

    /// [`BioBuilding::submit_built_bio`] for a task that has one.
    fn submit_open_built_bio(&mut self, tid: u32) {
        let open = self.block().open_bio[tid as usize];
        self.block_mut().open_bio[tid as usize].seg.nr_pages = 0;
        let (dev, sector, nr_sectors) = (open.dev as usize, open.sector, open.nr_sectors);
        self.submit_write_bio(tid, dev, sector, nr_sectors, open.seg);
    }

    /// `submit_bio` of a write of the pages of `seg`, `pgpgout` counting
    /// them as `submit_bio` does.
    fn submit_write_bio(&mut self, tid: u32, dev: usize, sector: u64, nr: u64, seg: Segment) {
        self.submit_bio(tid, dev, sector, nr, seg, false);
        let kib = self.mm().unit().kib() * u64::from(seg.nr_pages);
        self.mm_mut().vmstat_mut().inc(Ev::PgpgOut, kib);
    }

    /// Submit pages `first_index..first_index + nr_pages` of `ino`, already
    /// under writeback, as one bio that the block layer splits at the
    /// queue's `max_sectors` and at RAID chunk boundaries (6.1's
    /// `__bio_split_to_limits`; a btrfs bio). With `class`, stops before a
    /// piece task `tid` would sleep for; returns the pages submitted and
    /// whether it stopped so.
    fn submit_page_run(
        &mut self,
        tid: u32,
        ino: u32,
        first_index: u32,
        nr_pages: u32,
        class: Option<WbtClass>,
    ) -> (u32, bool) {
        let sectors = self.mm().unit().sectors();
        let mut done = 0;
        while done < nr_pages {
            let index = first_index.wrapping_add(done);
            let Some((dev, sector, chunk_left)) = self.page_queue_sector(ino, index) else {
                return (done, false);
            };
            let room = self.block().queues[dev].max_sectors.min(chunk_left);
            let n = ((room / sectors).max(1) as u32).min(nr_pages - done);
            let nr_sectors = u64::from(n) * sectors;
            if let Some(class) = class {
                if self.bio_must_wait(tid, dev, sector, nr_sectors, class) {
                    return (done, true);
                }
            }
            let seg = Segment {
                inode: ino,
                first_index: index,
                nr_pages: n,
            };
            self.submit_write_bio(tid, dev, sector, nr_sectors, seg);
            done += n;
        }
        (done, false)
    }
}

impl<T: Submit + ?Sized> BioBuilding for T {}
