//! Workloads: processes that write through the page cache.
//!
//! dd (`dd if=/dev/zero of=F bs=B count=N`): N `write(2)` calls of B bytes.
//! Each call is `generic_perform_write` (3.0, `mm/filemap.c`): per page,
//! `grab_cache_page_write_begin` (allocate and add to the page cache and
//! the LRU pagevec if absent), copy, `set_page_dirty`, `mark_page_accessed`,
//! then `balance_dirty_pages_ratelimited` (once per page in 3.0).
//!
//! On FUSE (3.0 `fuse_perform_write`) buffered writes are write-through:
//! the page is filled, sent to the daemon in a WRITE request of at most
//! `max_write` bytes (4 KiB without `big_writes`), and left clean; the
//! writer waits for the reply and is never throttled by
//! `balance_dirty_pages` itself.

pub mod dd;
pub mod enospc;
pub mod fsmark;
pub mod fsmark_run;
pub mod iozone;
pub mod iozone_run;
pub mod limits;
pub mod mapwrite;
pub mod memtouch;
pub mod reference;
pub mod shell;
mod state;
pub mod sync;
pub mod synthetic;
pub mod text;

use crate::workload::enospc::Enospc;
pub use reference::reference_markdown;
pub use state::{Process, Workloads};

/// The machine as the workload programs see it: their own state and the
/// whole kernel below them (system calls, page faults).
pub trait WorkloadHost: crate::reclaim::ReclaimHost {
    fn workload(&self) -> &Workloads;
    fn workload_mut(&mut self) -> &mut Workloads;
}

use crate::fs::daemon::FsDaemons;
use crate::fs::daemon::{FuseRequest, FuseRequestKind};
use crate::fs::jbd2::Jbd2;
use crate::fs::space::SpaceReservation;
use crate::mm::filemap::Filemap;
use crate::sched::Step;
use crate::writeback::sync::Fsync;
use crate::writeback::throttle::balance_dirty_pages;

#[derive(Debug, Clone)]
pub struct WriterState {
    pub inode: u32,
    pub bdi: usize,
    /// The FUSE daemon task when the file is on FUSE.
    pub fuse_daemon: Option<u32>,
    pub bs_bytes: u64,
    /// Bytes still to write in calls not yet started.
    pub bytes_left: u64,
    /// dd reads each block from /dev/zero first (user loop, a read(2) and
    /// `clear_user`); fs_mark writes a static buffer.
    pub read_from_dev_zero: bool,
    pub pos_bytes: u64,
    /// Bytes left in the current write(2) call (0 = between calls).
    pub call_left: u64,
    /// A FUSE request is in flight.
    pub awaiting_reply: bool,
    pub bytes_written: u64,
    /// dd `conv=fsync`: `fsync` the file after the last block (the next
    /// page index to look at while it runs).
    pub fsync_at_end: bool,
    pub fsync_cursor: u32,
    /// Bytes of the FUSE request in flight (taken back if it fails).
    pub request_bytes: u64,
}

impl WriterState {
    /// Bytes are left to write: in the write(2) call under way, or in
    /// calls still to make.
    #[inline]
    pub fn has_bytes_to_write(&self) -> bool {
        self.bytes_left > 0 || self.call_left > 0
    }

    pub fn new(
        inode: u32,
        bdi: usize,
        fuse_daemon: Option<u32>,
        bs_bytes: u64,
        total_bytes: u64,
        read_from_dev_zero: bool,
    ) -> Self {
        WriterState {
            inode,
            bdi,
            fuse_daemon,
            bs_bytes,
            bytes_left: total_bytes,
            read_from_dev_zero,
            pos_bytes: 0,
            call_left: 0,
            awaiting_reply: false,
            bytes_written: 0,
            fsync_at_end: false,
            fsync_cursor: 0,
            request_bytes: 0,
        }
    }
}

/// dd: the write(2) loop and the page cache's buffered write path it drives.
pub trait Writer: WorkloadHost {
    fn writer_state(&mut self, tid: u32) -> &mut WriterState {
        match self.workload_mut().process_mut(tid) {
            Process::Writer(w) => w,
            Process::FsMark(f) => &mut f.writer,
            _ => unreachable!("task {tid} is not a writer"),
        }
    }

    /// dd's steps that the engine runs back to back, in one call: each a
    /// page of a write(2) call ([`Writer::writer_step`]), each ended and
    /// the next begun in place when the engine would run it at once
    /// (`HasCore::steps_in_place`), as it nearly always does between the
    /// pages of a dd.
    #[inline(never)]
    fn dd_step(&mut self, tid: u32) -> Step {
        self.steps_in_place(tid, |s| s.writer_step(tid))
    }

    /// One step of a writing process (dd, or fs_mark writing a file): at
    /// most one page of one write(2) call; `Exit` when all is written.
    /// Inline in the loops that run its steps back to back ([`Writer::dd_step`],
    /// fs_mark's `fsmark_write_steps`).
    #[inline(always)]
    fn writer_step(&mut self, tid: u32) -> Step {
        if let Some(step) = balance_dirty_pages(self, tid) {
            return step;
        }
        // One look at the writer's state for the page, unless a call
        // starts or a FUSE reply came in between.
        let mut w = self.writer_state(tid);
        if w.awaiting_reply {
            w.awaiting_reply = false;
            if self.fs_mut().take_fuse_enospc(tid) {
                // The daemon's reply: ENOSPC; the page was not written.
                let w = self.writer_state(tid);
                w.pos_bytes -= w.request_bytes;
                w.bytes_written -= w.request_bytes;
                return self.write_enospc(tid);
            }
            w = self.writer_state(tid);
        }
        if w.call_left == 0 {
            if w.bytes_left == 0 {
                if w.fsync_at_end {
                    let (ino, mut cursor) = (w.inode, w.fsync_cursor);
                    // On FUSE the file's pages were written through to the
                    // daemon; FUSE_FSYNC makes ntfs-3g sync its whole volume
                    // (`ntfs_fuse_fsync` -> `ntfs_device_sync`): the block
                    // device's page cache, flushed here on its behalf.
                    let target = match w.fuse_daemon {
                        Some(_) => self.fs().get(self.mm().inode(ino).fs()).blockdev_inode,
                        None => ino,
                    };
                    let step = self.filemap_write_and_wait(tid, target, &mut cursor);
                    self.writer_state(tid).fsync_cursor = cursor;
                    if let Some(step) = step {
                        return step;
                    }
                }
                return Step::Exit;
            }
            let bs = w.bs_bytes.min(w.bytes_left);
            w.bytes_left -= bs;
            w.call_left = bs;
            let (bdi, dev_zero) = (w.bdi, w.read_from_dev_zero);
            if dev_zero {
                // dd's read() from /dev/zero and write(): user loop plus two
                // syscalls; /dev/zero's clear_user is kernel time.
                self.charge_user(tid, self.cost().dd_user_per_call_ns);
                self.charge_sys(
                    tid,
                    2 * self.cost().syscall_ns + bs * self.cost().copy_per_kib_ns / 1024,
                );
            } else {
                self.charge_sys(tid, self.cost().syscall_ns);
            }
            self.wb_mut().set_task_backing_dev(tid, Some(bdi));
            w = self.writer_state(tid);
        }
        let (ino, pos, call_left, daemon) = (w.inode, w.pos_bytes, w.call_left, w.fuse_daemon);
        let unit = self.mm().unit();
        let (idx, offset) = unit.page_and_offset(pos);
        let idx = idx as u32;
        let bytes = (unit.bytes() - offset).min(call_left);
        let dirty = daemon.is_none();
        if dirty && !self.write_reserve_or_retry(tid, ino, idx) {
            return self.write_enospc(tid);
        }
        // The previous page's `mark_inode_dirty` (a growing ext4 file)
        // waits while the journal commit's log write is in flight.
        if dirty && self.jbd2_inode_update_waits(tid, ino) {
            return Step::Wait(None);
        }
        if let Err(step) = self.write_page_cached(tid, ino, idx, bytes, dirty) {
            return step;
        }
        let w = self.writer_state(tid);
        w.pos_bytes += bytes;
        w.call_left -= bytes;
        w.bytes_written += bytes;
        let (call_done, bdi) = (w.call_left == 0, w.bdi);
        if let Some(daemon) = daemon {
            // One WRITE request per page (max_write 4096), wait for reply.
            let w = self.writer_state(tid);
            w.awaiting_reply = true;
            w.request_bytes = bytes;
            self.charge_sys(tid, self.cost().fuse_request_ns);
            self.fuse_send(
                daemon,
                FuseRequest {
                    kind: FuseRequestKind::Write { writer: tid },
                    ino,
                    file_index: idx,
                },
            );
            if call_done {
                self.wb_mut().set_task_backing_dev(tid, None);
            }
            return Step::Wait(None);
        }
        // 3.0 generic_perform_write calls balance_dirty_pages_ratelimited
        // after every page copied.
        self.balance_dirty_pages_ratelimited(tid, bdi, 1);
        if call_done {
            self.wb_mut().set_task_backing_dev(tid, None);
        }
        Step::Continue
    }
}

impl<T: WorkloadHost + ?Sized> Writer for T {}
