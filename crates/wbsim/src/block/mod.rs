//! The single-queue block layer of Linux 3.0: a request pool of
//! `nr_requests`, back and front merging of adjacent bios up to
//! `max_sectors`, and write congestion (`block/blk-core.c`:
//! `get_request`, `get_request_wait`, `blk_queue_congestion_threshold`,
//! `attempt_back_merge`; `block/elevator.c: elv_merge`).
//!
//! Dispatch order is FIFO (the noop elevator); with one outstanding command
//! on a USB stick and writeback submitting in ascending sector order this is
//! what deadline does too. Reads (swap-in) are dispatched before queued
//! writes, as deadline's read preference and CFQ's sync queues do; reads
//! and writes never merge with each other. A device with command queueing
//! takes up to its queue depth of requests; they may complete out of order.
//!
//! Explicit per-task plugging (2.6.39+) is in [`plug`]; with the
//! `queue-only` profile setting (the 3.0 presets) a bio goes straight into
//! the queue, mergeable with any queued request, and the device is started
//! at the end of each writeback pass.

pub mod bio;
pub mod hctx;
mod layer;
pub mod plug;
pub mod submit;
pub mod wbt;

use std::collections::VecDeque;

use crate::mm::page::Pfn;
use crate::mm::MmHost;

use hctx::HwQueues;
pub use layer::BlockLayer;
use wbt::{QueueRules, Wbt, WbtClass};

/// The machine as the block layer sees it: its own state, mm below it, and
/// the calls it makes into writeback/ above it.
pub trait BlockHost: MmHost {
    fn block(&self) -> &BlockLayer;
    fn block_mut(&mut self) -> &mut BlockLayer;

    /// The device a backing device writes to (`None`: FUSE).
    fn bdi_device(&self, bdi: usize) -> Option<usize>;
    /// `end_page_writeback` for a page whose write completed.
    fn end_page_writeback(&mut self, pfn: Pfn);
    /// Filesystem `fs`'s journal superblock or commit write completed.
    fn journal_commit_written(&mut self, fs: usize);
}

pub use crate::device::SECTOR_BYTES;

/// A run of consecutive pages of one mapping carried by a request; what
/// `end_page_writeback` walks on completion. `inode == NIL` for IO that does
/// not come from the page cache (a filesystem log write).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Segment {
    pub inode: u32,
    pub first_index: u32,
    pub nr_pages: u32,
}

impl Segment {
    /// A write of no page-cache page: a log or superblock write.
    pub const RAW: Segment = Segment {
        inode: crate::mm::page::NIL,
        first_index: 0,
        nr_pages: 0,
    };

    /// Filesystem `fs`'s journal commit write, whose completion the
    /// filesystem is told of (`first_index` carries the filesystem).
    pub fn journal_commit(fs: usize) -> Segment {
        Segment {
            first_index: u32::MAX - fs as u32,
            ..Segment::RAW
        }
    }

    /// The filesystem whose journal commit this segment carries.
    pub fn journal_commit_fs(&self) -> Option<usize> {
        (self.inode == crate::mm::page::NIL && self.first_index != 0)
            .then(|| (u32::MAX - self.first_index) as usize)
    }
}

#[derive(Debug, Clone, Default)]
pub struct Request {
    /// A read (swap-in) rather than a write.
    pub read: bool,
    /// When the request went to the device (`io_start_time_ns`).
    pub issued_ns: u64,
    /// The hardware queue whose tag it holds.
    pub hctx: u32,
    pub start_sector: u64,
    pub nr_sectors: u64,
    pub segs: Vec<Segment>,
    /// At the device (dispatched, not yet completed).
    pub in_flight: bool,
}

impl Request {
    pub fn end_sector(&self) -> u64 {
        self.start_sector + self.nr_sectors
    }
}

#[derive(Debug, Clone, Default)]
pub struct QueueStats {
    pub read_requests: u64,
    pub write_requests: u64,
    pub write_sectors: u64,
    pub merges: u64,
    /// Completed writes carrying page-cache pages, and their bytes.
    pub data_write_requests: u64,
    pub data_write_bytes: u64,
}

#[derive(Debug)]
pub struct RequestQueue {
    pub nr_requests: u32,
    pub max_sectors: u64,
    congestion_on: u32,
    congestion_off: u32,
    pub congested: bool,
    /// The single-queue layer tracks congestion; blk-mq does not.
    congestion_tracking: bool,
    /// Writeback throttling (blk-mq, 4.10+), and the write requests it
    /// counts: allocated and not yet completed (plugged ones included).
    pub wbt: Option<Wbt>,
    write_requests: u32,
    /// blk-mq's hardware queues (one for the single-queue layer): whose
    /// tags a new request takes.
    pub tags: HwQueues,
    /// Requests waiting for the device, FIFO; values are slot numbers.
    pub queued: VecDeque<usize>,
    /// How many of `queued` are reads: with none (writeback, the common
    /// case) `dispatch` takes the front without scanning the queue.
    queued_reads: u32,
    /// Requests handed to the device and not yet completed. A count, not a
    /// list: completions come in any order (several channels, RAID0
    /// members), and nothing needs their order; `Request::in_flight` marks
    /// each.
    in_flight: u32,
    /// Requests allocated and held on some task's plug list.
    pub plugged: u32,
    slots: Vec<Request>,
    free_slots: Vec<usize>,
    /// The queued requests with room for another sector, in queue order.
    /// A bio merges only into such a request, and streaming writeback
    /// fills each request to `max_sectors` before starting the next, so
    /// this is usually empty or one request: `find_merge` scans it instead
    /// of the whole queue.
    with_room: Vec<usize>,
    pub stats: QueueStats,
}

/// `blk_queue_congestion_threshold`: (on, off).
pub fn congestion_thresholds(nr_requests: u32) -> (u32, u32) {
    let n = nr_requests;
    let on = (n - n / 8 + 1).min(n);
    let off = (n as i64 - (n / 8) as i64 - (n / 16) as i64 - 1).max(1) as u32;
    (on, off)
}

/// What happened to a submitted bio.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Submitted {
    Merged,
    NewRequest,
}

impl RequestQueue {
    /// A single-queue request queue (congestion, no wbt).
    pub fn new(nr_requests: u32, max_sectors: u64) -> RequestQueue {
        let rules = QueueRules {
            congestion: true,
            wbt: false,
        };
        RequestQueue::with_rules(nr_requests, max_sectors, rules, true)
    }

    /// A queue of the profile's block layer; `rotational` sets wbt's
    /// latency target.
    pub fn with_rules(
        nr_requests: u32,
        max_sectors: u64,
        rules: QueueRules,
        rotational: bool,
    ) -> RequestQueue {
        let (on, off) = congestion_thresholds(nr_requests);
        let n = nr_requests as usize;
        RequestQueue {
            nr_requests,
            max_sectors,
            congestion_on: on,
            congestion_off: off,
            congested: false,
            congestion_tracking: rules.congestion,
            wbt: rules.wbt.then(|| Wbt::new(nr_requests, rotational)),
            write_requests: 0,
            tags: HwQueues::new(1, nr_requests),
            queued: VecDeque::with_capacity(n),
            queued_reads: 0,
            in_flight: 0,
            plugged: 0,
            // One spare slot: a reclaim writer may overrun the pool by one
            // request before it waits (see `System::submit_page_io`).
            slots: (0..n + 8)
                .map(|_| Request {
                    segs: Vec::with_capacity(16),
                    ..Default::default()
                })
                .collect(),
            free_slots: (0..n + 8).rev().collect(),
            with_room: Vec::with_capacity(n + 8),
            stats: QueueStats::default(),
        }
    }

    /// Requests allocated from the pool (queued or at the device).
    pub fn allocated(&self) -> u32 {
        self.queued.len() as u32 + self.in_flight + self.plugged
    }

    /// No request can be allocated: `get_request_wait` would sleep.
    /// wbt's limits follow the queue's depth when the disk was registered
    /// (`wbt_init` reads `blk_queue_depth` once), not a later nr_requests.
    pub fn size_wbt_from(&mut self, boot_nr_requests: u32) {
        if let Some(w) = self.wbt.as_mut() {
            w.queue_depth_changed(boot_nr_requests);
        }
    }

    /// blk-mq: `nr_queues` hardware queues of nr_requests tags each (the
    /// single-queue layer keeps its one pool).
    pub fn set_hw_queues(&mut self, nr_queues: u32) {
        if !self.congestion_tracking {
            self.tags = HwQueues::new(nr_queues, self.nr_requests);
        }
    }

    /// blk-mq: sync requests come from the same tags as writeback's.
    pub fn sync_writes_share_the_pool(&self) -> bool {
        !self.congestion_tracking
    }

    /// No request can be allocated on hardware queue `hctx`: the submitter
    /// would sleep (`get_request_wait`, `blk_mq_get_tag`).
    pub fn is_full(&self, hctx: u32) -> bool {
        self.tags.is_full(hctx)
    }

    /// Over wbt's limit for a write of `class` (`wbt_wait`).
    pub fn over_wbt_limit(&self, class: WbtClass) -> bool {
        self.wbt
            .is_some_and(|w| self.write_requests >= w.limit(class))
    }

    /// A new write request of `class` from hardware queue `hctx` must
    /// wait: no tag is free there, or wbt's limit for the class is reached.
    pub fn write_must_wait(&self, class: WbtClass, hctx: u32) -> bool {
        self.is_full(hctx) || self.over_wbt_limit(class)
    }

    /// Would a bio at `sector..sector+nr` merge into a queued request?
    pub fn can_merge(&self, sector: u64, nr: u64) -> bool {
        self.find_merge(sector, nr, false).is_some()
    }

    /// The queued request a bio at `sector..sector+nr` merges into, and
    /// whether at its back (`elv_merge`).
    pub fn find_merge(&self, sector: u64, nr: u64, read: bool) -> Option<(usize, bool)> {
        // Most recent request first: streaming writeback back-merges there.
        self.with_room
            .iter()
            .rev()
            .find_map(|&slot| Some((slot, self.bio_fits(slot, sector, nr, read)?)))
    }

    /// `elv_merge` and the merge itself: whether the bio joined a queued
    /// request.
    #[inline(always)]
    pub fn try_merge(&mut self, sector: u64, nr: u64, seg: Segment, read: bool) -> bool {
        let Some((slot, back)) = self.find_merge(sector, nr, read) else {
            return false;
        };
        self.merge_bio(slot, back, sector, nr, seg);
        self.drop_from_with_room_if_full(slot);
        true
    }

    /// Whether request `slot` can take another sector.
    fn has_room(&self, slot: usize) -> bool {
        self.slots[slot].nr_sectors < self.max_sectors
    }

    /// Append `slot` to the queue.
    fn enqueue(&mut self, slot: usize) {
        self.queued.push_back(slot);
        self.queued_reads += u32::from(self.slots[slot].read);
        if self.has_room(slot) {
            self.with_room.push(slot);
        }
    }

    /// Request `slot`, queued, has just grown: it leaves `with_room` once
    /// it is full.
    fn drop_from_with_room_if_full(&mut self, slot: usize) {
        if !self.has_room(slot) {
            self.forget_room_of(slot);
        }
    }

    /// Request `slot` is no longer a merge candidate.
    fn forget_room_of(&mut self, slot: usize) {
        if let Some(i) = self.with_room.iter().rposition(|&s| s == slot) {
            self.with_room.remove(i);
        }
    }

    /// Submit a write bio of `nr` sectors carrying `seg` from the first
    /// hardware queue. Never fails: the caller checks `is_full` first when
    /// it can wait.
    pub fn submit(&mut self, sector: u64, nr: u64, seg: Segment) -> Submitted {
        self.submit_dir(sector, nr, seg, false, 0)
    }

    /// Submit a bio in either direction (`read` for swap-in) from hardware
    /// queue `hctx`.
    pub fn submit_dir(
        &mut self,
        sector: u64,
        nr: u64,
        seg: Segment,
        read: bool,
        hctx: u32,
    ) -> Submitted {
        if !read {
            self.stats.write_sectors += nr;
        }
        if self.try_merge(sector, nr, seg, read) {
            return Submitted::Merged;
        }
        let slot = self.alloc_request(sector, nr, seg, read, hctx);
        self.enqueue(slot);
        Submitted::NewRequest
    }

    /// `bio_attempt_back_merge` / `bio_attempt_front_merge`: add a bio to
    /// request `slot`.
    #[inline(always)]
    pub fn merge_bio(&mut self, slot: usize, back: bool, sector: u64, nr: u64, seg: Segment) {
        let r = &mut self.slots[slot];
        r.nr_sectors += nr;
        if back {
            push_seg_back(&mut r.segs, seg);
        } else {
            r.start_sector = sector;
            r.segs.insert(0, seg);
        }
        self.stats.merges += 1;
    }

    /// `get_request`: a new request for one bio, not yet queued anywhere,
    /// holding a tag of hardware queue `hctx`.
    pub fn alloc_request(
        &mut self,
        sector: u64,
        nr: u64,
        seg: Segment,
        read: bool,
        hctx: u32,
    ) -> usize {
        let slot = match self.free_slots.pop() {
            Some(s) => s,
            None => {
                self.slots.push(Request {
                    segs: Vec::with_capacity(16),
                    ..Default::default()
                });
                self.slots.len() - 1
            }
        };
        self.tags.get(hctx);
        let r = &mut self.slots[slot];
        r.read = read;
        r.hctx = hctx;
        r.start_sector = sector;
        r.nr_sectors = nr;
        r.segs.clear();
        r.segs.push(seg);
        if read {
            self.stats.read_requests += 1;
        } else {
            self.stats.write_requests += 1;
            self.write_requests += 1;
        }
        if self.congestion_tracking && self.allocated() + 1 >= self.congestion_on {
            self.congested = true;
        }
        slot
    }

    /// `elv_attempt_insert_merge` then insertion (ELEVATOR_INSERT_SORT_MERGE,
    /// as `blk_flush_plug_list` inserts): a request that continues a queued
    /// one, or that a queued one continues, is merged into it and freed.
    pub fn insert_request(&mut self, slot: usize) {
        let (read, start, nr) = {
            let r = &self.slots[slot];
            (r.read, r.start_sector, r.nr_sectors)
        };
        let Some((t, back)) = self.find_merge(start, nr, read) else {
            self.enqueue(slot);
            return;
        };
        let mut segs = std::mem::take(&mut self.slots[slot].segs);
        let o = &mut self.slots[t];
        if back {
            for seg in segs.drain(..) {
                push_seg_back(&mut o.segs, seg);
            }
        } else {
            o.start_sector = start;
            segs.append(&mut o.segs);
            std::mem::swap(&mut o.segs, &mut segs);
        }
        o.nr_sectors += nr;
        self.drop_from_with_room_if_full(t);
        self.slots[slot].segs = segs;
        if !read {
            self.write_requests -= 1;
        }
        if read {
            self.stats.read_requests -= 1;
        } else {
            self.stats.write_requests -= 1;
        }
        self.stats.merges += 1;
        self.tags.put(self.slots[slot].hctx);
        self.free_slots.push(slot);
    }

    /// Can request `slot` take a bio at `sector..sector+nr`? `Some(true)`
    /// for a back merge, `Some(false)` for a front merge.
    pub fn bio_fits(&self, slot: usize, sector: u64, nr: u64, read: bool) -> Option<bool> {
        let r = &self.slots[slot];
        if r.read != read || r.nr_sectors + nr > self.max_sectors {
            return None;
        }
        if r.end_sector() == sector {
            Some(true)
        } else if sector + nr == r.start_sector {
            Some(false)
        } else {
            None
        }
    }

    /// Hand the oldest queued request (reads first) to the device.
    pub fn dispatch(&mut self) -> Option<usize> {
        let slot = if self.queued_reads == 0 {
            self.queued.pop_front()?
        } else {
            let pos = self.queued.iter().position(|&s| self.slots[s].read);
            let pos = pos.expect("queued_reads counts a queued read");
            self.queued_reads -= 1;
            self.queued.remove(pos)?
        };
        if self.has_room(slot) {
            self.forget_room_of(slot);
        }
        self.slots[slot].in_flight = true;
        self.in_flight += 1;
        Some(slot)
    }

    /// Request `slot` went to the device at `now_ns`.
    pub fn set_issued(&mut self, slot: usize, now_ns: u64) {
        self.slots[slot].issued_ns = now_ns;
    }

    pub fn request(&self, slot: usize) -> &Request {
        &self.slots[slot]
    }

    /// The device completed in-flight request `slot`; its slot is freed
    /// after the caller has walked its segments. Returns whether the queue
    /// left congestion (which wakes `congestion_wait` sleepers).
    ///
    /// `now_ns`: the completion's time, for wbt's windows.
    pub fn complete(&mut self, slot: usize, now_ns: u64) -> bool {
        assert!(
            std::mem::take(&mut self.slots[slot].in_flight),
            "completion of request {slot}, which is not at the device"
        );
        self.in_flight -= 1;
        let (read, issued) = (self.slots[slot].read, self.slots[slot].issued_ns);
        if !read {
            self.write_requests -= 1;
        }
        if let Some(w) = self.wbt.as_mut() {
            w.complete(now_ns, read, now_ns.saturating_sub(issued));
        }
        self.tags.put(self.slots[slot].hctx);
        self.free_slots.push(slot);
        if self.congested && self.allocated() < self.congestion_off {
            self.congested = false;
            return true;
        }
        false
    }
}

fn push_seg_back(segs: &mut Vec<Segment>, seg: Segment) {
    if let Some(last) = segs.last_mut() {
        if last.inode == seg.inode && last.first_index + last.nr_pages == seg.first_index {
            last.nr_pages += seg.nr_pages;
            return;
        }
    }
    segs.push(seg);
}

#[cfg(test)]
mod tests;
