//! Submission and completion glue between page writeback, the request queue
//! and the device (`submit_bio` → `generic_make_request` → md's
//! `raid0_make_request` or `blk_queue_bio`; `__blk_run_queue`; the
//! completion path `blk_complete_request` → `end_page_writeback`).

use super::hctx::ANY_HCTX;
use super::wbt::WbtClass;
use super::{Segment, Submitted};
use crate::block::plug::TaskPlugging;
use crate::block::{BlockHost, BlockLayer};
use crate::mm::page::Pfn;
use crate::mm::swap::Swap;
use crate::mm::vmstat::Ev;
use crate::sim::EventKind;

/// How many pages ahead a request's completion asks for a frame: each
/// page's end of writeback is some hundreds of host instructions, so
/// eight pages cover a memory access.
const COMPLETION_PREFETCH_AHEAD: u32 = 8;

/// Bio submission, dispatch to the device and completion (`submit_bio`, `__make_request`, `blk_end_request`).
pub trait Submit: BlockHost {
    /// The device under inode `ino` and the sector of its page `idx`
    /// there, from one read of the inode (every page written asks).
    #[inline(always)]
    fn page_device_sector(&self, ino: u32, idx: u32) -> Option<(usize, u64)> {
        let inode = self.mm().inode(ino);
        let (bdi, base_sector) = (inode.bdi(), inode.base_sector);
        let dev = self.bdi_device(bdi)?;
        Some((
            dev,
            base_sector + self.mm().unit().sectors_of_pages(idx.into()),
        ))
    }

    /// Where page `idx` of `ino` goes in the block layer: its queue (an
    /// array's member, once mapped), the sector there and the sectors
    /// left in its RAID chunk; None without a block device (FUSE).
    #[inline(always)]
    fn page_queue_sector(&self, ino: u32, idx: u32) -> Option<(usize, u64, u64)> {
        let (dev, sector) = self.page_device_sector(ino, idx)?;
        Some(self.block().map_bio(dev, sector))
    }

    /// `get_request_wait` (or blk-mq's `wbt_wait`, for a write request of
    /// `class`) would sleep for this page: the queue has no free request,
    /// or wbt's limit is reached, and the bio cannot merge. Registers
    /// `tid` as a waiter and starts the device on what is queued.
    #[inline(always)]
    fn must_wait_for_request_of(&mut self, tid: u32, ino: u32, idx: u32, class: WbtClass) -> bool {
        let Some((dev, sector, _)) = self.page_queue_sector(ino, idx) else {
            return false;
        };
        let sectors = self.mm().unit().sectors();
        self.bio_must_wait(tid, dev, sector, sectors, class)
    }

    /// Would a write bio of `nr` sectors at `sector` of queue `dev` (an
    /// array's member once mapped) put task `tid` to sleep for a request?
    /// As [`Submit::must_wait_for_request_of`].
    #[inline(always)]
    fn bio_must_wait(
        &mut self,
        tid: u32,
        dev: usize,
        sector: u64,
        nr: u64,
        class: WbtClass,
    ) -> bool {
        let hctx = self.hctx_of(tid, dev);
        let q = &self.block().queues[dev];
        if q.write_must_wait(class, hctx) && !q.can_merge(sector, nr) {
            if self.per_task_plugging() {
                // The task sleeps: its plug is flushed (sched_submit_work).
                self.sched_submit_work(tid);
                if !self.block().queues[dev].write_must_wait(class, hctx) {
                    return false;
                }
            }
            // Waiting for a tag of its queue, else for wbt's count.
            let on = match self.block().queues[dev].is_full(hctx) {
                true => hctx,
                false => ANY_HCTX,
            };
            self.block_mut().request_waiters[dev].push_back((tid, on));
            self.run_queue(dev, None);
            return true;
        }
        false
    }

    /// The hardware queue a request of task `tid` on device `dev` takes
    /// its tag from: its CPU's.
    fn hctx_of(&self, tid: u32, dev: usize) -> u32 {
        self.block().queues[dev]
            .tags
            .of_cpu(self.task(tid).cpu as u32)
    }

    /// A synchronous write of task `tid` to device `dev` (a journal's
    /// superblock or log blocks, REQ_SYNC | REQ_IDLE: never throttled by
    /// wbt) would sleep for a request: blk-mq takes every request, sync or
    /// not, from one tag pool and `blk_mq_get_tag` sleeps while it is
    /// empty; the single-queue layer counts sync requests apart
    /// (`rl->count[is_sync]`), so a queue full of writeback never holds
    /// them up. Registers `tid` as a waiter, as `must_wait_for_request_of`.
    fn sync_write_must_wait(&mut self, tid: u32, dev: usize) -> bool {
        let hctx = self.hctx_of(tid, dev);
        let q = &self.block().queues[dev];
        if !q.sync_writes_share_the_pool() || !q.is_full(hctx) {
            return false;
        }
        if self.per_task_plugging() {
            self.sched_submit_work(tid);
        }
        self.block_mut().request_waiters[dev].push_back((tid, hctx));
        self.run_queue(dev, None);
        true
    }

    /// One page's bio at its mapping's sector, in either direction; false
    /// when the mapping has no block device (FUSE).
    #[inline(always)]
    fn submit_page_bio(&mut self, tid: u32, pfn: Pfn, read: bool) -> bool {
        let p = self.mm().pages()[pfn as usize];
        let Some((dev, sector, _)) = self.page_queue_sector(p.inode(), p.index()) else {
            return false;
        };
        let seg = Segment {
            inode: p.inode(),
            first_index: p.index(),
            nr_pages: 1,
        };
        let sectors = self.mm().unit().sectors();
        self.submit_bio(tid, dev, sector, sectors, seg, read);
        true
    }

    /// `blk_queue_bio` for a bio already mapped to queue `dev`. Without a
    /// plug (always, with the 3.0 presets' queue-only model) the bio merges
    /// into a queued request or becomes one; with per-task plugging the
    /// queue is then run at once, with the 3.0 presets it is started at the
    /// end of the writeback pass or by completions.
    #[inline(always)]
    fn submit_bio(&mut self, tid: u32, dev: usize, sector: u64, nr: u64, seg: Segment, read: bool) {
        if self.block().task_plug[tid as usize].depth == 0 {
            let hctx = self.hctx_of(tid, dev);
            if self.block_mut().queues[dev].submit_dir(sector, nr, seg, read, hctx)
                == Submitted::NewRequest
            {
                self.charge_sys(tid, self.cost().request_submit_ns);
                if self.per_task_plugging() {
                    self.run_queue(dev, Some(tid));
                }
            }
            return;
        }
        if !read {
            self.block_mut().queues[dev].stats.write_sectors += nr;
        }
        let (merged, request_count) = self.attempt_plug_merge(tid, dev, sector, nr, seg, read);
        if merged || self.block_mut().queues[dev].try_merge(sector, nr, seg, read) {
            return;
        }
        self.charge_sys(tid, self.cost().request_submit_ns);
        if request_count >= super::plug::BLK_MAX_REQUEST_COUNT {
            self.blk_flush_plug_list(tid, false);
        }
        self.plug_new_request(tid, dev, sector, nr, seg, read);
    }

    /// Submit IO that has no page-cache pages behind it (a log or metadata
    /// buffer write), split into bios of at most `max_sectors` and at
    /// RAID chunk boundaries.
    fn submit_raw_write(&mut self, tid: u32, dev: usize, sector: u64, nr_sectors: u64) {
        self.submit_raw_write_as(tid, dev, sector, nr_sectors, Segment::RAW);
    }

    /// [`Submit::submit_raw_write`] carrying `seg` (a journal commit's
    /// write is tagged with its filesystem).
    fn submit_raw_write_as(
        &mut self,
        tid: u32,
        dev: usize,
        sector: u64,
        nr_sectors: u64,
        seg: Segment,
    ) {
        let mut done = 0;
        while done < nr_sectors {
            let (qdev, qsector, chunk_left) = self.block().map_bio(dev, sector + done);
            let max = self.block().queues[qdev].max_sectors;
            let n = (nr_sectors - done).min(max).min(chunk_left);
            self.submit_bio(tid, qdev, qsector, n, seg, false);
            done += n;
        }
        self.mm_mut().vmstat_mut().inc(Ev::PgpgOut, nr_sectors / 2);
        if !self.per_task_plugging() {
            self.kick_device(dev);
        }
    }

    fn flush_all_plugs(&mut self) {
        for dev in 0..self.block().devices.len() {
            self.kick_device(dev);
        }
    }

    /// `__blk_run_queue`: hand queued requests to the device while it has
    /// room. Each dispatch costs `request_dispatch_ns` of CPU, charged to
    /// `tid` when a task runs the queue (otherwise it is softirq or
    /// kblockd work, which no task pays for).
    fn run_queue(&mut self, dev: usize, tid: Option<u32>) {
        while self.block().devices[dev].can_accept() {
            let Some(slot) = self.block_mut().queues[dev].dispatch() else {
                return;
            };
            let r = self.block().queues[dev].request(slot);
            let (start, nr, read) = (r.start_sector, r.nr_sectors, r.read);
            if let Some(t) = tid {
                self.charge_sys(t, self.cost().request_dispatch_ns);
            }
            let now = self.now();
            self.block_mut().queues[dev].set_issued(slot, now);
            let d = &mut self.block_mut().devices[dev];
            d.in_flight += 1;
            let done = d.start(now, start, nr, read);
            self.push_event(
                done,
                EventKind::DeviceComplete {
                    device: dev as u32,
                    slot: slot as u32,
                },
            );
        }
    }

    /// The device finished request `slot`: end writeback on every page it
    /// carried, free the request, wake a task waiting for one, and start
    /// the next request. The completion interrupt's CPU time
    /// (`request_complete_ns`) is charged by `charge_irq`.
    fn device_complete(&mut self, dev: usize, slot: usize, at: crate::sim::Ns) {
        let r = self.block().queues[dev].request(slot);
        let (nsegs, read, bytes) = (r.segs.len(), r.read, r.nr_sectors * super::SECTOR_BYTES);
        if !read && r.segs.iter().any(|s| s.inode != crate::mm::page::NIL) {
            let st = &mut self.block_mut().queues[dev].stats;
            st.data_write_requests += 1;
            st.data_write_bytes += bytes;
        }
        for s in 0..nsegs {
            let seg = self.block().queues[dev].request(slot).segs[s];
            if seg.inode == crate::mm::page::NIL {
                if let (Some(fs), false) = (seg.journal_commit_fs(), read) {
                    self.journal_commit_written(fs);
                }
                continue;
            }
            // The request's frames were last touched when it was built,
            // long before: ask for each some pages ahead of the one whose
            // writeback ends (a hint to the host's cache; nothing
            // simulated is read or changed). Each page is looked up once,
            // when it is asked for, and kept until its turn.
            let mut ahead = [crate::mm::page::NIL; COMPLETION_PREFETCH_AHEAD as usize];
            for (i, slot) in (0..seg.nr_pages).zip(ahead.iter_mut()) {
                *slot = self.mm().inode(seg.inode).page(seg.first_index + i);
                self.mm().pages().prefetch(*slot);
            }
            for i in 0..seg.nr_pages {
                let at = (i % COMPLETION_PREFETCH_AHEAD) as usize;
                let pfn = ahead[at];
                // Ending a page's writeback or read changes no other
                // entry of the page index: the page looked up ahead is
                // still the page there.
                debug_assert_eq!(pfn, self.mm().inode(seg.inode).page(seg.first_index + i));
                let next = i + COMPLETION_PREFETCH_AHEAD;
                if next < seg.nr_pages {
                    ahead[at] = self.mm().inode(seg.inode).page(seg.first_index + next);
                    self.mm().pages().prefetch(ahead[at]);
                }
                if read {
                    self.end_page_read(pfn);
                } else {
                    self.end_page_writeback(pfn);
                }
            }
        }
        self.charge_irq(self.cost().request_complete_ns);
        let hctx = self.block().queues[dev].request(slot).hctx;
        let left_congestion = self.block_mut().queues[dev].complete(slot, at);
        self.block_mut().devices[dev].in_flight -= 1;
        let waiters = &mut self.block_mut().request_waiters[dev];
        if let Some(i) = waiters
            .iter()
            .position(|&(_, on)| on == hctx || on == ANY_HCTX)
        {
            let (tid, _) = waiters.remove(i).expect("found");
            self.wake_task(tid);
        }
        if left_congestion {
            self.wake_congestion_waiters();
        }
        // Completion runs in interrupt context on the device's own time.
        let saved = self.now();
        self.core_mut().set_interrupt_clock(at);
        self.run_queue(dev, None);
        self.core_mut().set_interrupt_clock(saved.max(at));
    }
}

impl<T: BlockHost + ?Sized> Submit for T {}

impl BlockLayer {
    /// The queue a bio at `sector` of `dev` ends up in (a RAID0 array
    /// remaps it to a member), with its sector there and the sectors left
    /// before the next chunk boundary.
    #[inline(always)]
    pub fn map_bio(&self, dev: usize, sector: u64) -> (usize, u64, u64) {
        if !self.any_raid {
            return (dev, sector, u64::MAX);
        }
        match &self.raid[dev] {
            Some(r) => r.map(sector),
            None => (dev, sector, u64::MAX),
        }
    }
}

/// End of a writeback pass on `bdi` (3.0 presets): let the device
/// start on what the pass queued.
pub fn flush_plug<H: BlockHost + ?Sized>(sys: &mut H, bdi: usize) {
    if let Some(dev) = sys.bdi_device(bdi) {
        sys.kick_device(dev);
    }
}

/// Start `dev` (each member of an array) on queued requests.
pub fn kick_device<H: BlockHost + ?Sized>(sys: &mut H, dev: usize) {
    match &sys.block().raid[dev] {
        Some(r) => {
            for i in 0..r.members.len() {
                let m = sys.block().raid[dev].as_ref().expect("raid").members[i];
                sys.run_queue(m, None);
            }
        }
        None => sys.run_queue(dev, None),
    }
}

/// Queue a read of one page (swap-in) at its mapping's sector; the
/// caller kicks the device once its batch is queued.
/// A FUSE file has no block device: its READ request to the daemon is
/// not modelled, and the page is up to date at once.
pub fn submit_page_read<H: BlockHost + ?Sized>(sys: &mut H, tid: u32, pfn: Pfn) {
    if sys.submit_page_bio(tid, pfn, true) {
        let kib = sys.mm().unit().kib();
        sys.mm_mut().vmstat_mut().inc(Ev::PgpgIn, kib);
    } else {
        sys.end_page_read(pfn);
    }
}
