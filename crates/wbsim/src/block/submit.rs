//! Submission and completion glue between page writeback, the request queue
//! and the device (`submit_bio` → `__make_request`; `blk_finish_plug`;
//! the completion path `end_bio_bh_io_sync` / `end_page_writeback`).

use super::{Segment, Submitted, SECTORS_PER_PAGE};
use crate::mm::page::Pfn;
use crate::mm::vmstat::Ev;
use crate::sim::{EventKind, Ns};
use crate::system::System;

impl System {
    /// Sector of page `idx` of inode `ino` on its device.
    pub fn page_sector(&self, ino: u32, idx: u32) -> u64 {
        self.inodes[ino as usize].base_sector + idx as u64 * SECTORS_PER_PAGE
    }

    /// Device under inode `ino`, if it has a block device.
    pub fn inode_device(&self, ino: u32) -> Option<usize> {
        self.bdis[self.inodes[ino as usize].bdi].device
    }

    /// `get_request_wait` would sleep for this page: the queue has no free
    /// request and the bio cannot merge. Registers `tid` as a waiter and
    /// starts the device on what is queued.
    pub fn must_wait_for_request_of(&mut self, tid: u32, ino: u32, idx: u32) -> bool {
        let Some(dev) = self.inode_device(ino) else {
            return false;
        };
        let sector = self.page_sector(ino, idx);
        let q = &self.queues[dev];
        if q.is_full() && !q.can_merge(sector, SECTORS_PER_PAGE) {
            self.request_waiters[dev].push_back(tid);
            self.kick_device(dev);
            return true;
        }
        false
    }

    /// Put one page under writeback and submit its bio. A page being written
    /// has its blocks allocated from then on (`MAPPED`).
    pub fn submit_page_write(&mut self, tid: u32, pfn: Pfn) {
        self.start_page_writeback(pfn);
        self.pages[pfn as usize].flags |= crate::mm::page::flags::MAPPED;
        if self.submit_page_bio(tid, pfn, false) {
            self.vmstat.inc(Ev::PgpgOut, 4);
        }
    }

    /// Queue a read of one page (swap-in) at its mapping's sector; the
    /// caller kicks the device once its batch is queued.
    pub fn submit_page_read(&mut self, tid: u32, pfn: Pfn) {
        if self.submit_page_bio(tid, pfn, true) {
            self.vmstat.inc(Ev::PgpgIn, 4);
        }
    }

    /// One page's bio at its mapping's sector, in either direction; false
    /// when the mapping has no block device (FUSE).
    fn submit_page_bio(&mut self, tid: u32, pfn: Pfn, read: bool) -> bool {
        let p = self.pages[pfn as usize];
        let Some(dev) = self.inode_device(p.inode) else {
            return false;
        };
        let sector = self.page_sector(p.inode, p.index);
        let seg = Segment {
            inode: p.inode,
            first_index: p.index,
            nr_pages: 1,
        };
        if self.queues[dev].submit_dir(sector, SECTORS_PER_PAGE, seg, read) == Submitted::NewRequest
        {
            self.charge_sys(tid, self.cost.request_submit_ns);
        }
        true
    }

    /// Submit IO that has no page-cache pages behind it (a log write), split
    /// into bios of at most `max_sectors`.
    pub fn submit_raw_write(&mut self, tid: u32, dev: usize, sector: u64, nr_sectors: u64) {
        let seg = Segment {
            inode: crate::mm::page::NIL,
            first_index: 0,
            nr_pages: 0,
        };
        let max = self.queues[dev].max_sectors;
        let mut done = 0;
        while done < nr_sectors {
            let n = (nr_sectors - done).min(max);
            if self.queues[dev].submit(sector + done, n, seg) == Submitted::NewRequest {
                self.charge_sys(tid, self.cost.request_submit_ns);
            }
            done += n;
        }
        self.vmstat.inc(Ev::PgpgOut, nr_sectors / 2);
        self.kick_device(dev);
    }

    /// `blk_finish_plug` for the device behind `bdi`: let the device start
    /// on what the task queued.
    pub fn flush_plug(&mut self, bdi: usize) {
        if let Some(dev) = self.bdis[bdi].device {
            self.kick_device(dev);
        }
    }

    pub fn flush_all_plugs(&mut self) {
        for dev in 0..self.devices.len() {
            self.kick_device(dev);
        }
    }

    /// Start the device on the next queued request if it is idle.
    pub fn kick_device(&mut self, dev: usize) {
        if self.devices[dev].busy {
            return;
        }
        let Some(slot) = self.queues[dev].dispatch() else {
            return;
        };
        let r = self.queues[dev].request(slot);
        let (start, nr, read) = (r.start_sector, r.nr_sectors, r.read);
        let service: Ns = self.devices[dev].service(start, nr, read);
        self.devices[dev].busy = true;
        self.events.push(
            self.now + service,
            EventKind::DeviceComplete { device: dev as u32 },
        );
    }

    /// The device finished its request: end writeback on every page it
    /// carried, free the request, wake a task waiting for one, and start
    /// the next request.
    pub fn device_complete(&mut self, dev: usize, at: Ns) {
        let slot = *self.queues[dev]
            .in_flight
            .front()
            .expect("completion without request");
        let nsegs = self.queues[dev].request(slot).segs.len();
        let read = self.queues[dev].request(slot).read;
        for s in 0..nsegs {
            let seg = self.queues[dev].request(slot).segs[s];
            if seg.inode == crate::mm::page::NIL {
                continue;
            }
            for i in 0..seg.nr_pages {
                let pfn = self.inodes[seg.inode as usize].page(seg.first_index + i);
                if read {
                    self.end_page_read(pfn);
                } else {
                    self.end_page_writeback(pfn);
                }
            }
        }
        let left_congestion = self.queues[dev].complete(slot);
        self.devices[dev].busy = false;
        if let Some(tid) = self.request_waiters[dev].pop_front() {
            self.wake_task(tid);
        }
        if left_congestion {
            self.wake_congestion_waiters();
        }
        // Completion runs in interrupt context on the device's own time.
        let saved = self.now;
        self.now = at;
        self.kick_device(dev);
        self.now = saved.max(at);
    }
}
