//! Explicit per-task plugging (2.6.39+, Jens Axboe; `block/blk-core.c`:
//! `blk_start_plug`, `blk_finish_plug`, `blk_flush_plug_list`,
//! `attempt_plug_merge`, `blk_queue_bio`; `kernel/sched/core.c`:
//! `sched_submit_work`). Read in the 3.10 sources' behaviour as the spec
//! (section 9) describes it; the legacy single-queue path, not blk-mq.
//!
//! While a task holds a plug, a bio first tries to merge into a request on
//! the task's plug list (back or front, same queue, up to `max_sectors`),
//! then into a queued request (`elv_merge`); otherwise a new request is
//! allocated and appended to the plug list instead of being queued — after
//! flushing the list if it already holds `BLK_MAX_REQUEST_COUNT` (16,
//! 3.1+) requests for that queue. The list is flushed at the outermost
//! `blk_finish_plug` and when the task sleeps (`sched_submit_work`; the
//! queue run is then left to kblockd). Flushing sorts the requests by
//! queue and sector, inserts each with a merge attempt and runs each queue.

use crate::block::submit::Submit;
use crate::block::BlockHost;
use crate::kernel::WritebackPlug;

/// `BLK_MAX_REQUEST_COUNT` (3.1+, commit 55c022bb).
pub const BLK_MAX_REQUEST_COUNT: u32 = 16;

/// A task's `struct blk_plug`.
#[derive(Debug, Clone, Default)]
pub struct Plug {
    /// Nesting depth of `blk_start_plug`; only the outermost counts.
    pub depth: u32,
    /// Plugged requests: (device, request slot), in submission order.
    pub list: Vec<(u32, u32)>,
}

/// Explicit per-task plugging (`blk_start_plug`, `blk_finish_plug`, 2.6.39+).
pub trait TaskPlugging: BlockHost {
    /// Does this kernel profile build requests on per-task plug lists?
    fn per_task_plugging(&self) -> bool {
        self.profile().writeback_plug != WritebackPlug::QueueOnly
    }

    /// A writeback pass starts: the high-level plug of `writeback_inodes_wb`
    /// (3.1's per-pass plug; none in 3.0, where a bio goes straight into
    /// the queue, or where `write_cache_pages` plugs per mapping).
    fn writeback_pass_plug(&mut self, tid: u32) {
        if self.profile().writeback_plug == WritebackPlug::PerPass {
            self.blk_start_plug(tid);
        }
    }

    /// A writeback pass on `bdi` ends: unplug its high-level plug, or with
    /// the 3.0 queue-only model start the device on what the pass queued.
    fn writeback_pass_unplug(&mut self, tid: u32, bdi: usize) {
        match self.profile().writeback_plug {
            WritebackPlug::QueueOnly => self.flush_plug(bdi),
            WritebackPlug::PerMapping => {}
            WritebackPlug::PerPass => self.blk_finish_plug(tid),
        }
    }

    /// `blk_start_plug`.
    fn blk_start_plug(&mut self, tid: u32) {
        if self.per_task_plugging() {
            self.block_mut().task_plug[tid as usize].depth += 1;
        }
    }

    /// `blk_finish_plug`: the outermost one flushes the list and runs the
    /// queues in the task's own context.
    fn blk_finish_plug(&mut self, tid: u32) {
        let plug = &mut self.block_mut().task_plug[tid as usize];
        if plug.depth == 0 {
            return;
        }
        plug.depth -= 1;
        if plug.depth == 0 {
            self.blk_flush_plug_list(tid, false);
        }
    }

    /// A task with plugged requests is going to sleep.
    fn sched_submit_work(&mut self, tid: u32) {
        if !self.block().task_plug[tid as usize].list.is_empty() {
            self.blk_flush_plug_list(tid, true);
        }
    }

    /// `attempt_plug_merge`: try to add a bio to a plugged request of queue
    /// `dev`; returns whether it merged and how many requests of that queue
    /// the list holds.
    #[inline(always)]
    fn attempt_plug_merge(
        &mut self,
        tid: u32,
        dev: usize,
        sector: u64,
        nr: u64,
        seg: super::Segment,
        read: bool,
    ) -> (bool, u32) {
        let mut count = 0;
        let n = self.block().task_plug[tid as usize].list.len();
        for i in (0..n).rev() {
            let (d, slot) = self.block().task_plug[tid as usize].list[i];
            if d as usize != dev {
                continue;
            }
            count += 1;
            let q = &mut self.block_mut().queues[dev];
            if let Some(back) = q.bio_fits(slot as usize, sector, nr, read) {
                q.merge_bio(slot as usize, back, sector, nr, seg);
                return (true, count);
            }
        }
        (false, count)
    }

    /// Append a new request for the bio to the task's plug list.
    fn plug_new_request(
        &mut self,
        tid: u32,
        dev: usize,
        sector: u64,
        nr: u64,
        seg: super::Segment,
        read: bool,
    ) {
        let hctx = self.hctx_of(tid, dev);
        let q = &mut self.block_mut().queues[dev];
        let slot = q.alloc_request(sector, nr, seg, read, hctx);
        q.plugged += 1;
        self.block_mut().task_plug[tid as usize]
            .list
            .push((dev as u32, slot as u32));
    }

    /// `blk_flush_plug_list`: sort by (queue, sector), insert each request
    /// with a merge attempt, then run every queue touched. From `schedule()`
    /// the queue runs are kblockd's work, not the sleeping task's.
    fn blk_flush_plug_list(&mut self, tid: u32, from_schedule: bool) {
        let mut list = std::mem::take(&mut self.block_mut().task_plug[tid as usize].list);
        if list.is_empty() {
            self.block_mut().task_plug[tid as usize].list = list;
            return;
        }
        let queues = &self.block().queues;
        list.sort_unstable_by_key(|&(d, slot)| {
            (d, queues[d as usize].request(slot as usize).start_sector)
        });
        let mut last_dev = u32::MAX;
        for &(d, slot) in &list {
            let q = &mut self.block_mut().queues[d as usize];
            q.plugged -= 1;
            q.insert_request(slot as usize);
            if last_dev != u32::MAX && last_dev != d {
                self.run_queue(last_dev as usize, (!from_schedule).then_some(tid));
            }
            last_dev = d;
        }
        self.run_queue(last_dev as usize, (!from_schedule).then_some(tid));
        list.clear();
        self.block_mut().task_plug[tid as usize].list = list;
    }
}

impl<T: BlockHost + ?Sized> TaskPlugging for T {}
