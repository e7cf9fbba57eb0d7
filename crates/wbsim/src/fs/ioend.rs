//! Deferred writeback completion, Linux 6.1: a filesystem that must
//! change its metadata once data is on disk ends the writeback of a whole
//! run of pages at once, in a worker, after the last bio of the run.
//!
//! - ext4 with dioread_nolock (the default from 5.6): `ext4_writepages`
//!   starts an `io_end` for each extent `mpage_prepare_extent_to_map`
//!   gathers (at most `MAX_WRITEPAGES_EXTENT_LEN` = 2048 blocks); the
//!   delalloc blocks are allocated as unwritten, so `ext4_end_bio` only
//!   drops a reference and the last one queues the io_end for the
//!   `ext4-rsv-conversion` workqueue (`ext4_add_complete_io`), whose
//!   `ext4_end_io_rsv_work` converts the extent and ends writeback on
//!   every page (`ext4_finish_bio`). Read in 6.1 fs/ext4/page-io.c and
//!   fs/ext4/inode.c.
//! - xfs: iomap builds an ioend of contiguous folios of one
//!   `->writepages` call, at most `IOEND_BATCH_SIZE` = 4096
//!   (`iomap_can_add_to_ioend`); one that ends past the on-disk size (a
//!   growing file) completes in the `xfs-conv` workqueue (`xfs_end_bio`,
//!   `xfs_end_io`), which updates the size and ends the folios'
//!   writeback. Read in 6.1 fs/iomap/buffered-io.c, fs/xfs/xfs_aops.c.
//!
//! - btrfs: one `->writepages` call adds a contiguous run of pages to a
//!   bio of up to `BIO_MAX_VECS` segments, each segment a run of
//!   physically contiguous pages (`btrfs_bio_add_page`, `bio_add_page`);
//!   `end_bio_extent_writepage` ends writeback on all of them, in irq
//!   context, once every request the block layer split it into is done.
//!   Read in 6.1 fs/btrfs/extent_io.c and fs/btrfs/volumes.c
//!   (`btrfs_simple_end_io` completes writes at once).
//!
//! Until then the pages stay PG_writeback (NR_WRITEBACK), though the
//! device has written them: dirty + writeback stays higher and falls in
//! steps, as a traced 6.1 guest's NR_WRITTEN does. Not modelled: btrfs's
//! ordered-extent completion (`btrfs_finish_ordered_io`, after the
//! pages' writeback has ended), ext4 overwrites of written blocks (irq
//! completion in the kernel; dd's file has none).

use std::collections::VecDeque;

use super::jbd2::Jbd2;
use super::{FsHost, FsType};
use crate::block::bio::BioBuilding;
use crate::block::submit::Submit;
use crate::block::wbt::WbtClass;
use crate::kernel::KernelProfile;
use crate::mm::inode::MappingKind;
use crate::mm::page::{Pfn, NIL};
use crate::sched::Step;

const NO_IOEND: u32 = u32::MAX;

/// `BIO_MAX_VECS`: ext4's `io_submit_add_bh` fills a bio with up to 256
/// pages before it submits it and allocates the next (4 KiB pages: at a
/// coarse unit, [`in_partial_ext4_bio`] takes as many bytes).
const BIO_MAX_PAGES: u64 = 256;

/// A run of pages of one file, written by one `->writepages` call, whose
/// writeback ends together.
#[derive(Debug, Clone, Copy)]
struct Ioend {
    fs: u32,
    ino: u32,
    first_index: u32,
    nr_pages: u32,
    /// Pages whose request has not completed yet.
    pending_pages: u32,
    /// No more pages will join (the `->writepages` call moved on).
    closed: bool,
    /// The frame of the last page added, and the segments so far (a
    /// btrfs bio's bvecs; unused for a worker's ioend).
    last_pfn: Pfn,
    nr_segments: u32,
    /// A btrfs bio's pages whose requests are made: its pages are put
    /// under writeback as they join, and submitted when it is full or
    /// the `->writepages` call ends (a worker's ioend: all of them).
    nr_submitted: u32,
    /// The next younger ioend in flight of the same inode, or `NO_IOEND`.
    next_of_inode: u32,
}

impl Ioend {
    /// Does page `index` in frame `pfn` join this open ioend? It must
    /// follow the last page in the file, and the ioend must have room:
    /// pages (a worker's) or segments (a bio's; a frame right after the
    /// last one extends its segment, `bio_add_page`'s merge).
    fn takes(&self, index: u32, pfn: Pfn, deferral: Deferral) -> bool {
        let follows = self.first_index.wrapping_add(self.nr_pages) == index;
        follows
            && match deferral {
                Deferral::Worker(limit) => self.nr_pages < limit,
                Deferral::Bio(max_segments) => {
                    self.last_pfn.wrapping_add(1) == pfn || self.nr_segments < max_segments
                }
                Deferral::None => false,
            }
    }
}

/// How filesystem `fs`'s pages end writeback under the profile.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Deferral {
    /// Each page as its request completes.
    None,
    /// In a worker, a run of at most this many pages (ext4, xfs).
    Worker(u32),
    /// At the completion of a bio of at most this many segments of
    /// physically contiguous pages (btrfs).
    Bio(u32),
}

/// The ioends in flight and the completion workers' queues.
#[derive(Debug, Default)]
pub struct Ioends {
    slots: Vec<Ioend>,
    free_slots: Vec<u32>,
    /// Per inode: the oldest of its ioends not yet handed to the worker,
    /// the others linked through `next_of_inode` (a word per file: a
    /// list per file made a run of millions of files keep 24 bytes each
    /// after their ioends were done).
    first_of_inode: Vec<u32>,
    /// Per inode: the ioend pages are joining, or `NO_IOEND`.
    open: Vec<u32>,
    /// Per filesystem: ioends whose pages are all written, oldest first.
    ready: Vec<VecDeque<u32>>,
    /// Per filesystem: its completion worker, if the profile defers.
    worker: Vec<Option<u32>>,
    /// Per filesystem: the worker sleeps waiting for work.
    worker_idle: Vec<bool>,
}

impl Ioends {
    /// Filesystem `fs`'s completion worker is task `tid`.
    pub fn attach_worker(&mut self, fs: usize, tid: u32) {
        if self.worker.len() <= fs {
            self.worker.resize(fs + 1, None);
            self.worker_idle.resize(fs + 1, true);
            self.ready.resize_with(fs + 1, VecDeque::new);
        }
        self.worker[fs] = Some(tid);
    }

    /// Whether filesystem `fs` has a completion worker.
    pub fn has_worker(&self, fs: usize) -> bool {
        self.worker.get(fs).is_some_and(|w| w.is_some())
    }

    fn grow_to(&mut self, ino: u32) {
        let n = ino as usize + 1;
        if self.open.len() < n {
            self.open.resize(n, NO_IOEND);
            self.first_of_inode.resize(n, NO_IOEND);
        }
    }

    /// `ino`'s ioends not yet handed to the worker, oldest first.
    fn of_inode(&self, ino: u32) -> impl Iterator<Item = u32> + '_ {
        let first = self.first_of_inode.get(ino as usize).copied();
        std::iter::successors(first.filter(|&id| id != NO_IOEND), |&id| {
            Some(self.slots[id as usize].next_of_inode).filter(|&next| next != NO_IOEND)
        })
    }

    /// Add ioend `id` (the youngest) to `ino`'s list.
    fn list_append(&mut self, ino: u32, id: u32) {
        self.slots[id as usize].next_of_inode = NO_IOEND;
        match self.of_inode(ino).last() {
            Some(last) => self.slots[last as usize].next_of_inode = id,
            None => self.first_of_inode[ino as usize] = id,
        }
    }

    /// Take ioend `id` off `ino`'s list.
    fn list_remove(&mut self, ino: u32, id: u32) {
        let next = self.slots[id as usize].next_of_inode;
        if self.first_of_inode[ino as usize] == id {
            self.first_of_inode[ino as usize] = next;
            return;
        }
        let prev = (self.of_inode(ino)).find(|&p| self.slots[p as usize].next_of_inode == id);
        if let Some(prev) = prev {
            self.slots[prev as usize].next_of_inode = next;
        }
    }

    fn new_slot(&mut self, e: Ioend) -> u32 {
        match self.free_slots.pop() {
            Some(id) => {
                self.slots[id as usize] = e;
                id
            }
            None => {
                self.slots.push(e);
                (self.slots.len() - 1) as u32
            }
        }
    }

    /// The ioend `ino`'s pages are joining, if any.
    fn open_of(&self, ino: u32) -> Option<u32> {
        self.open
            .get(ino as usize)
            .copied()
            .filter(|&id| id != NO_IOEND)
    }

    /// The ioend in flight holding page `index` of `ino`.
    fn find(&self, ino: u32, index: u32) -> Option<u32> {
        self.of_inode(ino).find(|&id| {
            let e = &self.slots[id as usize];
            index.wrapping_sub(e.first_index) < e.nr_pages
        })
    }
}

/// The completion worker a filesystem of type `fs_type` has under
/// `profile`, by its workqueue's name, or None when its pages end
/// writeback as their requests complete.
pub fn worker_name(fs_type: FsType, profile: &KernelProfile) -> Option<&'static str> {
    match fs_type {
        FsType::Ext4 if profile.ext4_io_end_pages > 0 => Some("ext4-rsv-conver"),
        FsType::Xfs if profile.xfs_ioend_pages > 0 => Some("xfs-conv"),
        _ => None,
    }
}

/// Is a task that has just added the `ioend_pages`-th page of an ioend
/// inside ext4 6.1's submission loop between two bios?
/// `mpage_map_and_submit_buffers` hands page after page to
/// `ext4_bio_write_page` with no `cond_resched` and nothing that sleeps;
/// its preemption points are where a full bio is submitted and the next
/// allocated (`bio_alloc` with GFP_NOIO), every `BIO_MAX_VECS` pages of an
/// io_end (read in 6.1 fs/ext4/inode.c and fs/ext4/page-io.c). Traced 6.1
/// guests: a kworker in `wb_workfn` is preempted a median 1.0 ms after the
/// wake-up that asked for it (docs/lab-results.md). xfs's iomap locks each
/// folio in `write_cache_pages` (`folio_lock` sleeps), so it is
/// preemptible at every page; `ioend_pages` 0 (no io_end) is too.
pub fn in_partial_ext4_bio(
    fs_type: FsType,
    ioend_pages: u32,
    unit: crate::mm::unit::PageUnit,
) -> bool {
    fs_type == FsType::Ext4
        && !u64::from(ioend_pages).is_multiple_of(unit.from_base_pages(BIO_MAX_PAGES))
}

/// The page-completion side of the filesystems' deferred completion.
pub trait IoendCompletion: FsHost {
    /// How filesystem `fs` defers the end of its pages' writeback.
    #[inline(always)]
    fn ioend_deferral(&self, fs: usize) -> Deferral {
        if self.fs().ioends.has_worker(fs) {
            return Deferral::Worker(self.ioend_limit_pages(fs));
        }
        if self.ioend_builds_bio(fs) {
            return Deferral::Bio(self.profile().btrfs_bio_max_vecs);
        }
        Deferral::None
    }

    /// Whether filesystem `fs`'s deferral is [`Deferral::Bio`], asked
    /// per page written: the profile first, which rules it out on every
    /// kernel without btrfs's bio batching.
    #[inline(always)]
    fn ioend_builds_bio(&self, fs: usize) -> bool {
        self.profile().btrfs_bio_max_vecs > 0
            && self.fs().filesystems[fs].fs_type == FsType::Btrfs
            && !self.fs().ioends.has_worker(fs)
    }

    /// Pages per worker's ioend on filesystem `fs` (0: none).
    fn ioend_limit_pages(&self, fs: usize) -> u32 {
        if !self.fs().ioends.has_worker(fs) {
            return 0;
        }
        match self.fs().filesystems[fs].fs_type {
            FsType::Ext4 => self.profile().ext4_io_end_pages,
            FsType::Xfs => self.profile().xfs_ioend_pages,
            FsType::Btrfs | FsType::FuseNtfs => 0,
        }
    }

    /// Would page `index` of `ino`, written next by `->writepages`, begin
    /// a new ioend (the next extent `ext4_writepages` maps)? False when the
    /// filesystem does not defer completion.
    fn ioend_would_start(&self, fs: usize, ino: u32, index: u32) -> bool {
        let limit = self.ioend_limit_pages(fs);
        if limit == 0 {
            return false;
        }
        let io = &self.fs().ioends;
        io.open_of(ino)
            .is_none_or(|open| !io.slots[open as usize].takes(index, NIL, Deferral::Worker(limit)))
    }

    /// Page `pfn`, at `index` of `ino`, was just submitted by task `tid`'s
    /// `->writepages` (a btrfs bio's: put under writeback, its request
    /// not yet made): it joins the open ioend if it continues it and
    /// there is room, else it starts the next one. Returns the pages of
    /// its ioend so far (0: the filesystem does not defer completion).
    #[inline(always)]
    fn ioend_add_page(&mut self, tid: u32, fs: usize, ino: u32, index: u32, pfn: Pfn) -> u32 {
        let deferral = self.ioend_deferral(fs);
        if deferral == Deferral::None {
            return 0;
        }
        // A worker's ioend has its pages' requests made as they join; a
        // btrfs bio's wait for its submission.
        let made_now = u32::from(!matches!(deferral, Deferral::Bio(_)));
        let io = &mut self.fs_mut().ioends;
        io.grow_to(ino);
        if let Some(open) = io.open_of(ino) {
            let e = &mut io.slots[open as usize];
            if e.takes(index, pfn, deferral) {
                let new_segment = e.last_pfn.wrapping_add(1) != pfn;
                e.nr_pages += 1;
                e.pending_pages += 1;
                e.last_pfn = pfn;
                e.nr_segments += new_segment as u32;
                e.nr_submitted += made_now;
                return e.nr_pages;
            }
            // A caller that did not ask `bio_submission_must_wait` first
            // (none does) submits the rest without waiting.
            self.submit_open_bio(tid, ino, None);
        }
        let io = &mut self.fs_mut().ioends;
        let id = io.new_slot(Ioend {
            fs: fs as u32,
            ino,
            first_index: index,
            nr_pages: 1,
            pending_pages: 1,
            closed: false,
            last_pfn: pfn,
            nr_segments: 1,
            nr_submitted: made_now,
            next_of_inode: NO_IOEND,
        });
        io.list_append(ino, id);
        io.open[ino as usize] = id;
        1
    }

    /// Would page `index` (frame `pfn`) of `ino`, about to be written
    /// back, join the open btrfs bio? If not, that bio is submitted
    /// first: true if task `tid` must wait for a request on the way
    /// (wbt's `class` or a tag), as in `submit_one_bio` → `submit_bio`
    /// sleeping in `wbt_wait` or `blk_mq_get_tag` with every page of the
    /// bio already under writeback. Not a btrfs bio: the page's own
    /// request (`must_wait_for_request_of`).
    #[inline(always)]
    fn bio_submission_must_wait(
        &mut self,
        tid: u32,
        ino: u32,
        index: u32,
        class: WbtClass,
    ) -> bool {
        // The profile first: without btrfs's bio batching the file's
        // filesystem need not be looked up.
        let fs = match self.profile().btrfs_bio_max_vecs {
            0 => None,
            _ => Some(self.mm().inode(ino).fs()).filter(|&fs| self.ioend_builds_bio(fs)),
        };
        let Some(fs) = fs else {
            return self.page_bio_must_wait(tid, ino, index, class);
        };
        let deferral = self.ioend_deferral(fs);
        let io = &self.fs().ioends;
        let Some(open) = io.open_of(ino) else {
            return false;
        };
        let pfn = self.mm().inode(ino).page(index);
        if io.slots[open as usize].takes(index, pfn, deferral) {
            return false;
        }
        self.submit_open_bio(tid, ino, Some(class))
    }

    /// [`IoendCompletion::bio_submission_must_wait`] where pages' requests
    /// are made as they are written: a page that continues the bio task
    /// `tid` is building never waits; one that does not has that bio
    /// submitted first, which may; on a filesystem that submits a bio a
    /// page, the page's own bio may.
    #[inline(always)]
    fn page_bio_must_wait(&mut self, tid: u32, ino: u32, index: u32, class: WbtClass) -> bool {
        if self.block().has_open_bio(tid) {
            if self.bio_takes_page(tid, ino, index) {
                return false;
            }
            return self.open_bio_must_wait(tid, class);
        }
        let inode = self.mm().inode(ino);
        if inode.kind == MappingKind::Regular && self.builds_multipage_bios(inode.fs()) {
            return false;
        }
        self.must_wait_for_request_of(tid, ino, index, class)
    }

    /// Does filesystem `fs`'s `->writepages` gather its pages into bios
    /// of many pages ([`crate::block::bio`])? xfs does in every modelled
    /// version (`xfs_submit_ioend`), btrfs too (`submit_extent_page`),
    /// and ext4's delayed-allocation writeback from 2.6.39, when
    /// `mblk_io_submit` became the default (`mpage_da_submit_io` →
    /// `ext4_bio_write_page`; read in 3.0 to 3.3 fs/ext4/inode.c and
    /// super.c); in 6.1, iomap's ioends (xfs) and ext4's io_end bios
    /// too. FUSE has no block device. A btrfs bio whose completion ends
    /// its pages' writeback ([`Deferral::Bio`]) is built by its ioend and
    /// submitted by [`IoendCompletion::submit_open_bio`].
    #[inline(always)]
    fn builds_multipage_bios(&self, fs: usize) -> bool {
        self.fs().filesystems[fs].fs_type != FsType::FuseNtfs && !self.ioend_builds_bio(fs)
    }

    /// Submit the requests of `ino`'s open btrfs bio (the end of a
    /// `->writepages` call, or a page that does not fit) in pieces of at
    /// most the queue's `max_sectors`, stopping when task `tid` must wait
    /// for a request (true) if `class` is given; the ioend is then closed
    /// (a worker's has every request made already: it is only closed).
    /// False if there is none.
    fn submit_open_bio(&mut self, tid: u32, ino: u32, class: Option<WbtClass>) -> bool {
        let Some(open) = self.fs().ioends.open_of(ino) else {
            return false;
        };
        let e = self.fs().ioends.slots[open as usize];
        let index = e.first_index.wrapping_add(e.nr_submitted);
        let (done, waits) =
            self.submit_page_run(tid, ino, index, e.nr_pages - e.nr_submitted, class);
        self.fs_mut().ioends.slots[open as usize].nr_submitted += done;
        if waits {
            return true;
        }
        self.ioend_close(ino);
        false
    }

    /// The `->writepages` call on `ino` is over: its last ioend takes no
    /// more pages, and goes to the worker if its pages are all written.
    fn ioend_close(&mut self, ino: u32) {
        let io = &mut self.fs_mut().ioends;
        let Some(open) = io.open_of(ino) else {
            return;
        };
        io.open[ino as usize] = NO_IOEND;
        let e = &mut io.slots[open as usize];
        e.closed = true;
        if e.pending_pages == 0 {
            self.ioend_ready(open);
        }
    }

    /// The request carrying `pfn` completed. True if the page belongs to
    /// an ioend, whose worker ends its writeback later.
    #[inline(always)]
    fn ioend_page_written(&mut self, pfn: Pfn) -> bool {
        let p = self.mm().pages()[pfn as usize];
        if p.inode() == NIL {
            return false;
        }
        let Some(id) = self.fs().ioends.find(p.inode(), p.index()) else {
            return false;
        };
        let e = &mut self.fs_mut().ioends.slots[id as usize];
        e.pending_pages -= 1;
        if e.pending_pages == 0 && e.closed {
            self.ioend_ready(id);
        }
        true
    }

    /// All of ioend `id`'s pages are written: queue it for its
    /// filesystem's worker (`queue_work`) and wake the worker, or, for a
    /// bio completed in irq context, end its pages' writeback now.
    fn ioend_ready(&mut self, id: u32) {
        let io = &mut self.fs_mut().ioends;
        let e = io.slots[id as usize];
        io.list_remove(e.ino, id);
        let fs = e.fs as usize;
        if !io.has_worker(fs) {
            self.ioend_end_writeback(id);
            return;
        }
        let io = &mut self.fs_mut().ioends;
        io.ready[fs].push_back(id);
        if std::mem::take(&mut io.worker_idle[fs]) {
            let tid = io.worker[fs].expect("a deferring filesystem has a worker");
            self.wake_task(tid);
        }
    }

    /// `end_page_writeback` on every page of ioend `id`, which is done.
    fn ioend_end_writeback(&mut self, id: u32) {
        let e = self.fs().ioends.slots[id as usize];
        for i in 0..e.nr_pages {
            let pfn = self.mm().inode(e.ino).page(e.first_index.wrapping_add(i));
            crate::writeback::account::end_page_writeback(self, pfn);
        }
        self.fs_mut().ioends.free_slots.push(id);
    }

    /// One step of filesystem `fs`'s completion worker (task `tid`): one
    /// ready ioend's metadata update (`request_complete_ns`, the cost of a
    /// completion) and its pages' `end_page_writeback` (`page_free_ns`
    /// each, an assumption: clearing a flag and waking waiters, about
    /// what freeing a page costs).
    fn ioend_worker_step(&mut self, tid: u32, fs: usize) -> Step {
        let Some(id) = self.fs_mut().ioends.ready[fs].pop_front() else {
            self.fs_mut().ioends.worker_idle[fs] = true;
            return Step::Wait(None);
        };
        let e = self.fs().ioends.slots[id as usize];
        if self.fs().filesystems[fs].fs_type == FsType::Ext4 {
            // The extent conversion (a reserved handle) dirties the inode,
            // whose block the committing transaction may be writing to
            // the log.
            if self.jbd2_short_handle_waits(tid, fs) {
                self.fs_mut().ioends.ready[fs].push_front(id);
                return Step::Wait(None);
            }
        }
        let cost = self.cost().request_complete_ns + e.nr_pages as u64 * self.cost().page_free_ns;
        self.charge_sys(tid, cost);
        self.ioend_end_writeback(id);
        Step::Continue
    }
}

impl<T: FsHost + ?Sized> IoendCompletion for T {}

#[cfg(test)]
mod tests;
