//! One writeback pass over a device's dirty inodes, resumable when the task
//! has to wait for a request (3.0 `fs/fs-writeback.c`:
//! `writeback_inodes_wb`, `queue_io`, `move_expired_inodes`,
//! `writeback_single_inode`, `requeue_io`, `redirty_tail`;
//! `mm/page-writeback.c: write_cache_pages`).
//!
//! In 3.0 the `nr_to_write` budget (1024 pages for the flusher,
//! `write_chunk` for a throttled writer) is shared by all inodes of the
//! pass; an inode that used up the budget with pages left goes to
//! `b_more_io`, one that stopped for another reason to `b_dirty`. From 3.1
//! the flusher's pass is `writeback_sb_inodes` ([`SbInodes`]): each inode
//! gets its own budget, `writeback_chunk_size` (chosen in `chunk.rs`).

use std::collections::VecDeque;

use crate::block::plug::TaskPlugging;
use crate::mm::inode::InodeList;
use crate::mm::inode_table::InodeTable;
use crate::mm::page::{flags, NIL};
use crate::sim::Ns;
use crate::writeback::chunk::WritebackChunks;
use crate::writeback::{WbtClass, WritebackHost};

/// `MAX_WRITEBACK_PAGES`, in 4 KiB pages (see
/// [`WritebackHost::max_writeback_pages`]).
pub const MAX_WRITEBACK_PAGES: i64 = 1024;

/// How far ahead of the inode it takes next a walk of `b_dirty` or `b_io`
/// asks the host CPU for an inode (a cache hint, no effect on the
/// simulation): a run of many small files (fs_mark) takes inodes last
/// touched long before, and a miss on each stalled the walk.
const INODES_AHEAD: usize = 4;

/// Prefetch the inode `INODES_AHEAD` places before the back of `list`
/// (the end a walk takes from), past the `taken` inodes at its back that
/// the walk has in hand; none if the list is shorter.
#[inline]
fn prefetch_inode_ahead(inodes: &InodeTable, list: &VecDeque<u32>, taken: usize) {
    let from_back = INODES_AHEAD + taken;
    if let Some(&ahead) = list.len().checked_sub(from_back).and_then(|i| list.get(i)) {
        inodes.prefetch(ahead);
    }
}

/// The state of one `writeback_inodes_wb` call.
#[derive(Debug, Clone, Copy)]
pub struct WbPass {
    pub bdi: usize,
    pub nr_to_write: i64,
    pub written: u64,
    pub older_than_this: Option<Ns>,
    started: bool,
    /// Inode being written (`NIL` between inodes) and its
    /// `write_cache_pages` position.
    inode: u32,
    index: u32,
    end: u32,
    cycled: bool,
    done_index: u32,
    /// 3.1+ `writeback_sb_inodes`: a chunk per inode, and the work's
    /// budget and the time limit checked between inodes; `None` for 3.0's
    /// budget shared by the pass.
    pub per_inode: Option<SbInodes>,
    /// Background or periodic work (REQ_BACKGROUND: wbt's lowest limit).
    pub background: bool,
}

/// The state of a 3.1+ `writeback_sb_inodes` call (read in 3.3-era and
/// 6.1 fs/fs-writeback.c): `nr_to_write` is set to `write_chunk` for
/// each inode; what the inode's walk used (`write_chunk -
/// wbc.nr_to_write`) comes off `work->nr_pages`; once `wrote` (pages and
/// cleaned inodes) is non-zero the pass ends after HZ/10 or when
/// `work->nr_pages` is used up. 5.18+ subtracts `wbc.pages_skipped` from
/// `wrote`: no page of a flusher's walk is skipped that way here.
#[derive(Debug, Clone, Copy)]
pub struct SbInodes {
    /// `work->nr_pages`: pages the work item may still write.
    pub work_nr_pages: i64,
    /// `wrote`: pages written and inodes cleaned by the pass.
    pub wrote: u64,
    /// The current inode's `write_chunk`.
    write_chunk: i64,
    /// `start_time`, jiffies.
    start_jiffies: u64,
}

impl SbInodes {
    pub fn new(work_nr_pages: i64, start_jiffies: u64) -> SbInodes {
        SbInodes {
            work_nr_pages,
            wrote: 0,
            write_chunk: 0,
            start_jiffies,
        }
    }
}

/// Result of running a pass until it ends or must wait.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PassResult {
    Done,
    /// Asleep until what it waits on wakes it: a free request on this
    /// device (`get_request_wait`, wbt's `rq_qos_wait`) or the journal's
    /// shadowed metadata (ext4's extent mapping).
    Blocked,
    /// Ran for `WRITEBACK_STEP_NS` of CPU: end the step so that simulated
    /// time moves on between submissions (the pass resumes next step).
    Yield,
}

/// CPU time after which a writeback pass ends its step. With per-task
/// plugging, requests reach a device with command queueing as they are
/// built, so submissions must be spread over the time their CPU cost
/// takes; with the 3.0 presets' queue-only model the device starts only at
/// the end of the pass and the pass runs as one step.
pub const WRITEBACK_STEP_NS: Ns = 20_000;

impl WbPass {
    pub fn new(bdi: usize, nr_to_write: i64, older_than_this: Option<Ns>) -> WbPass {
        WbPass {
            bdi,
            nr_to_write,
            written: 0,
            older_than_this,
            started: false,
            background: false,
            inode: NIL,
            index: 0,
            end: 0,
            cycled: false,
            done_index: 0,
            per_inode: None,
        }
    }

    /// A 3.1+ `writeback_sb_inodes` pass: budgets are set per inode.
    pub fn per_inode(bdi: usize, sb: SbInodes, older_than_this: Option<Ns>) -> WbPass {
        WbPass {
            per_inode: Some(sb),
            ..WbPass::new(bdi, 0, older_than_this)
        }
    }
}

/// Who is writing: decides the filesystem's `->writepage` answer.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum WritebackCaller {
    /// A flusher thread or a writer in `balance_dirty_pages`.
    Writeback,
    /// A journal thread's data=ordered pass.
    Journal,
}

/// Writeback passes over a bdi's dirty inodes (`writeback_inodes_wb`, `write_cache_pages`).
pub trait WritebackPasses: WritebackHost {
    /// `queue_io`: splice `b_more_io` onto `b_io`, then move inodes dirtied
    /// before `older_than_this` from the tail of `b_dirty`. With Gorman's
    /// RFC patch 5, `move_expired_inodes` first takes every I_DIRTY_RECLAIM
    /// inode whatever its age; they go where `b_io` is consumed first.
    fn queue_io(&mut self, bdi: usize, older_than_this: Option<Ns>) {
        while let Some(ino) = self.wb_mut().bdis[bdi].b_more_io.pop_back() {
            self.wb_mut().bdis[bdi].b_io.push_front(ino);
            self.mm_mut().inode_mut(ino).list = InodeList::Io;
        }
        if self.wb().nr_dirty_reclaim > 0 {
            let mut i = 0;
            while i < self.wb().bdis[bdi].b_dirty.len() {
                let ino = self.wb().bdis[bdi].b_dirty[i];
                if self.mm().inode(ino).dirty_reclaim {
                    self.wb_mut().bdis[bdi].b_dirty.remove(i);
                    self.wb_mut().bdis[bdi].b_io.push_back(ino);
                    let inode = self.mm_mut().inode_mut(ino);
                    inode.list = InodeList::Io;
                    inode.dirty_reclaim = false;
                    self.wb_mut().nr_dirty_reclaim -= 1;
                } else {
                    i += 1;
                }
            }
        }
        while let Some(&ino) = self.wb().bdis[bdi].b_dirty.back() {
            // `ino` is still on the list: the one ahead is one further.
            prefetch_inode_ahead(self.mm().inodes(), &self.wb().bdis[bdi].b_dirty, 1);
            if let Some(cutoff) = older_than_this {
                if self.mm().inode(ino).dirtied_when > cutoff {
                    break;
                }
            }
            self.wb_mut().bdis[bdi].b_dirty.pop_back();
            self.wb_mut().bdis[bdi].b_io.push_front(ino);
            self.mm_mut().inode_mut(ino).list = InodeList::Io;
        }
    }

    /// Reclaim met a dirty page of `ino` it may not write (Gorman RFC patch
    /// 5, I_DIRTY_RECLAIM): `queue_io` takes the inode first, whatever its
    /// age. Only kernels with the patch call this (`reclaim/dirty_pages.rs`).
    fn mark_inode_dirty_reclaim(&mut self, ino: u32) {
        let inode = self.mm_mut().inode_mut(ino);
        if !inode.dirty_reclaim {
            inode.dirty_reclaim = true;
            self.wb_mut().nr_dirty_reclaim += 1;
        }
    }

    /// Run `writeback_inodes_wb` for `pass` until it finishes or must wait.
    fn writeback_pass(
        &mut self,
        tid: u32,
        pass: &mut WbPass,
        caller: WritebackCaller,
    ) -> PassResult {
        let bdi = pass.bdi;
        if !pass.started {
            pass.started = true;
            self.writeback_pass_plug(tid);
            if self.wb().bdis[bdi].b_io.is_empty() {
                self.queue_io(bdi, pass.older_than_this);
            }
        }
        loop {
            if pass.inode == NIL {
                if pass.per_inode.is_none() && pass.nr_to_write <= 0 {
                    return PassResult::Done;
                }
                let Some(ino) = self.wb_mut().bdis[bdi].b_io.pop_back() else {
                    return PassResult::Done;
                };
                prefetch_inode_ahead(self.mm().inodes(), &self.wb().bdis[bdi].b_io, 0);
                let inode = self.mm_mut().inode_mut(ino);
                if inode.in_writeback {
                    // I_SYNC held by another task: requeue_io.
                    inode.list = InodeList::MoreIo;
                    self.wb_mut().bdis[bdi].b_more_io.push_front(ino);
                    continue;
                }
                inode.in_writeback = true;
                inode.list = InodeList::None;
                pass.inode = ino;
                pass.index = inode.writeback_index;
                pass.done_index = pass.index;
                pass.end = u32::MAX;
                pass.cycled = pass.index == 0;
                if let Some(mut sb) = pass.per_inode {
                    sb.write_chunk = self.write_chunk(bdi, sb.work_nr_pages);
                    pass.nr_to_write = sb.write_chunk;
                    pass.per_inode = Some(sb);
                }
                // generic_writepages: a plug around this mapping.
                self.blk_start_plug(tid);
            }
            match self.write_cache_pages(tid, pass, caller) {
                PassResult::Done => {}
                other => return other,
            }
            self.fs_writepages_done(tid, pass.inode);
            self.blk_finish_plug(tid);
            let cleaned = self.mm().inode(pass.inode).nr_dirty == 0;
            self.finish_inode(pass);
            if let Some(mut sb) = pass.per_inode {
                let used = sb.write_chunk - pass.nr_to_write;
                sb.work_nr_pages -= used;
                sb.wrote += used.max(0) as u64 + cleaned as u64;
                pass.per_inode = Some(sb);
                // Bail out to wb_writeback often enough to check the
                // background threshold and other ends of the work.
                if sb.wrote > 0 {
                    let deadline = sb.start_jiffies + self.hz() / 10;
                    if self.jiffies_at(self.step_now()) > deadline || sb.work_nr_pages <= 0 {
                        return PassResult::Done;
                    }
                }
            }
            if self.per_task_plugging() && self.step_cost_ns() >= WRITEBACK_STEP_NS {
                return PassResult::Yield;
            }
        }
    }

    /// The end of a writeback pass: the high-level plug (if any) is
    /// finished; with the 3.0 presets' queue-only model the device is
    /// started on what the pass queued.
    fn writeback_pass_end(&mut self, tid: u32, bdi: usize) {
        self.writeback_pass_unplug(tid, bdi);
    }

    /// `writeback_single_inode`'s requeue decision after `do_writepages`.
    fn finish_inode(&mut self, pass: &mut WbPass) {
        let ino = pass.inode;
        pass.inode = NIL;
        let bdi = pass.bdi;
        let now = self.now();
        let inode = self.mm_mut().inode_mut(ino);
        inode.in_writeback = false;
        inode.writeback_index = pass.done_index;
        if inode.list != InodeList::None {
            return; // re-dirtied onto a list while we wrote it
        }
        if inode.nr_dirty == 0 {
            return;
        }
        if pass.nr_to_write <= 0 {
            inode.list = InodeList::MoreIo;
            self.wb_mut().bdis[bdi].b_more_io.push_front(ino);
        } else {
            // redirty_tail: keep b_dirty time-ordered.
            inode.list = InodeList::Dirty;
            if let Some(&newest) = self.wb().bdis[bdi].b_dirty.front() {
                if self.mm().inode(newest).dirtied_when > self.mm().inode(ino).dirtied_when {
                    self.mm_mut().inode_mut(ino).dirtied_when = now;
                }
            }
            self.wb_mut().bdis[bdi].b_dirty.push_front(ino);
        }
    }

    /// `write_cache_pages` as jbd2's data=ordered pass calls it
    /// (`journal_submit_inode_data_buffers`: WB_SYNC_ALL, range 0..`i_size`,
    /// budget twice the page count), from page `from` to `end_pages`.
    /// The range is neither cyclic nor "whole" (`range_end` is `i_size`, not
    /// LLONG_MAX), so `writeback_index` is left where the flusher put it.
    /// Pages under writeback were not dirty when the walk tagged its pages
    /// TOWRITE, so they are not visited. Returns how the walk ended and the
    /// page to resume at after a `Yield`.
    fn write_inode_for_journal(
        &mut self,
        tid: u32,
        ino: u32,
        from: u32,
        end_pages: u32,
    ) -> (PassResult, u32) {
        let bdi = self.mm().inode(ino).bdi();
        let mut pass = WbPass::new(bdi, i64::MAX, None);
        pass.started = true;
        pass.inode = ino;
        pass.index = from;
        pass.end = end_pages;
        pass.cycled = true;
        let result = self.write_cache_pages(tid, &mut pass, WritebackCaller::Journal);
        (result, pass.index)
    }

    /// `write_cache_pages` (3.0, WB_SYNC_NONE, range_cyclic): walk dirty
    /// pages from `writeback_index`, wrap once to the start, skip pages under
    /// writeback, decrement `nr_to_write` per `->writepage` call even when
    /// the filesystem redirties the page.
    fn write_cache_pages(
        &mut self,
        tid: u32,
        pass: &mut WbPass,
        caller: WritebackCaller,
    ) -> PassResult {
        let ino = pass.inode;
        let class = self.wbt_class(pass.bdi, pass.background);
        loop {
            if pass.nr_to_write <= 0 {
                // Blocked submitting the bio the walk built (btrfs).
                return self.writepages_end(tid, ino, class, caller);
            }
            let inode = self.mm().inode(ino);
            let next = inode.next_dirty_page(pass.index, pass.end);
            if let Some((idx, _)) = next {
                // The pages after this one are most often the next ones
                // written (a sequential writer's): start loading the frame
                // of the page four on. The flags test below was this
                // walk's hottest line, a tenth of its time in a dd (`perf
                // record`); with this it is no longer among them (one page
                // on was too late). A hint to the host's cache: nothing
                // simulated changes.
                self.mm().pages().prefetch(inode.page(idx.wrapping_add(4)));
            }
            let Some((idx, pfn)) = next else {
                if !pass.cycled {
                    pass.cycled = true;
                    pass.end = self.mm().inode(ino).writeback_index;
                    pass.index = 0;
                    continue;
                }
                return self.writepages_end(tid, ino, class, caller);
            };
            debug_assert_ne!(pfn, NIL);
            if self.mm().pages()[pfn as usize].has(flags::WRITEBACK) {
                pass.index = idx + 1;
                continue;
            }
            if caller == WritebackCaller::Writeback {
                if self.fs_writepages_map_waits(tid, ino, idx) {
                    return PassResult::Blocked;
                }
                if self.fs_write_request_must_wait(tid, ino, idx, class) {
                    return PassResult::Blocked;
                }
                if let Some(n) = self.fs_writepages_nr_to_write(ino, idx, pass.nr_to_write) {
                    pass.nr_to_write = n;
                }
            }
            pass.done_index = idx + 1;
            pass.index = idx + 1;
            self.charge_sys(tid, self.cost().writeback_page_ns);
            if self.fs_writepage_writeback(tid, pfn, caller) {
                pass.written += 1;
            } else if self.is_fuse_file(ino) {
                // fuse_writepage_locked found no temporary page (-ENOMEM):
                // write_cache_pages stops at the error (`done = 1`).
                pass.nr_to_write -= 1;
                return PassResult::Done;
            }
            pass.nr_to_write -= 1;
            if pass.nr_to_write <= 0 {
                return self.writepages_end(tid, ino, class, caller);
            }
            if self.per_task_plugging() && self.step_cost_ns() >= WRITEBACK_STEP_NS {
                return PassResult::Yield;
            }
        }
    }

    /// The walk of `ino` is over: done once the filesystem has submitted
    /// the bio it built (btrfs), which may have to wait for a request.
    fn writepages_end(
        &mut self,
        tid: u32,
        ino: u32,
        class: WbtClass,
        caller: WritebackCaller,
    ) -> PassResult {
        if caller == WritebackCaller::Writeback
            && self.fs_writepages_submit_must_wait(tid, ino, class)
        {
            return PassResult::Blocked;
        }
        PassResult::Done
    }
}

impl<T: WritebackHost + ?Sized> WritebackPasses for T {}

#[cfg(test)]
mod tests {
    use crate::mm::inode::InodeList;
    use crate::mm::MmHost;
    use crate::test_support::usb_stick_files;
    use crate::writeback::pass::WritebackPasses;
    use crate::writeback::WritebackHost;

    /// Two files on one xfs device; returns (system, older inode, newer inode).
    fn two_files(kernel: &str) -> (crate::system::System, u32, u32) {
        let (mut sys, files) = usb_stick_files(kernel, "xfs", &["a", "b"]);
        let (old, new) = (files[0], files[1]);
        let bdi = sys.mm().inode(old).bdi();
        // b_dirty: head = newest, tail = oldest.
        sys.mm_mut().inode_mut(old).dirtied_when = 1_000;
        sys.mm_mut().inode_mut(new).dirtied_when = 50_000_000_000;
        for ino in [new, old] {
            sys.wb_mut().bdi_mut(bdi).b_dirty.push_back(ino);
            sys.mm_mut().inode_mut(ino).list = InodeList::Dirty;
        }
        sys.mark_inode_dirty_reclaim(new);
        (sys, old, new)
    }

    /// Gorman RFC patch 5: an I_DIRTY_RECLAIM inode is queued for IO even
    /// though it is too young for this kupdate pass, and written first.
    #[test]
    fn reclaim_marked_inode_is_queued_regardless_of_age() {
        let cutoff = Some(10_000);
        let (mut sys, old, new) = two_files("3.0-rc6+reclaim-1-5");
        let bdi = sys.mm().inode(old).bdi();
        sys.queue_io(bdi, cutoff);
        let b_io: Vec<u32> = sys.wb().bdi(bdi).b_io.iter().copied().collect();
        // b_io is consumed from the back: the marked inode goes first.
        assert_eq!(b_io, vec![old, new]);
        assert!(!sys.mm().inode(new).dirty_reclaim);
    }

    /// jbd2's data=ordered pass (0..i_size, not cyclic, not 0..LLONG_MAX)
    /// refuses delayed-allocation pages, writes pages whose blocks are
    /// allocated, and leaves the flusher's `writeback_index` alone.
    #[test]
    fn journal_pass_refuses_delalloc_pages_and_keeps_the_writeback_index() {
        use crate::mm::page::flags;
        let (mut sys, files) = usb_stick_files("3.1-mmotm", "ext4", &["a"]);
        let ino = files[0];
        let pfns = crate::test_support::dirty_file_pages(&mut sys, ino, 8);
        // Page 2's blocks were allocated earlier (by the flusher).
        sys.mm_mut().pages_mut()[pfns[2] as usize].flags |= flags::MAPPED;
        sys.mm_mut().inode_mut(ino).writeback_index = 5;

        let (result, _) = sys.write_inode_for_journal(0, ino, 0, 8);

        assert_eq!(result, super::PassResult::Done);
        assert_eq!(sys.mm().inode(ino).writeback_index, 5);
        for (idx, &pfn) in pfns.iter().enumerate() {
            let p = &sys.mm().pages()[pfn as usize];
            if idx == 2 {
                assert!(
                    p.has(flags::WRITEBACK) && !p.has(flags::DIRTY),
                    "page {idx}"
                );
            } else {
                assert!(
                    p.has(flags::DIRTY) && !p.has(flags::WRITEBACK),
                    "page {idx}"
                );
            }
        }
    }
}
