//! Data integrity writeback of one file: `fsync` and `msync(MS_SYNC)` →
//! `filemap_write_and_wait` (`__filemap_fdatawrite_range` with
//! WB_SYNC_ALL, then `filemap_fdatawait`), 2.6.24 – 3.x. Pages already
//! under writeback are waited for and written again if redirtied; the
//! caller neither takes I_SYNC nor moves the inode between the device's
//! lists (`do_writepages` is called directly).

use super::pass::WritebackCaller;
use crate::block::plug::TaskPlugging;
use crate::mm::page::flags;
use crate::sched::Step;
use crate::writeback::WritebackHost;

/// How often a task waiting in `filemap_fdatawait` looks again (the model
/// polls instead of keeping per-page wait queues).
const FDATAWAIT_POLL_NS: u64 = 1_000_000;

/// Writing and waiting for one file's pages (`filemap_write_and_wait`).
pub trait Fsync: WritebackHost {
    /// Write every dirty page of `ino` and wait until none is dirty or
    /// under writeback. `cursor` is the next page index to look at
    /// (start at 0); returns the step to take while it is not finished.
    fn filemap_write_and_wait(&mut self, tid: u32, ino: u32, cursor: &mut u32) -> Option<Step> {
        let bdi = self.mm().inode(ino).bdi();
        let class = self.wbt_class(bdi, false);
        self.blk_start_plug(tid);
        while let Some(idx) = self.mm().inode(ino).next_dirty(*cursor, u32::MAX) {
            let pfn = self.mm().inode(ino).page(idx);
            if self.mm().pages()[pfn as usize].has(flags::WRITEBACK) {
                // wait_on_page_writeback, then write it again: next round.
                *cursor = idx + 1;
                continue;
            }
            if self.fs_writepages_map_waits(tid, ino, idx)
                || self.fs_write_request_must_wait(tid, ino, idx, class)
            {
                self.blk_finish_plug(tid);
                return Some(Step::Wait(None));
            }
            self.charge_sys(tid, self.cost().writeback_page_ns);
            self.fs_writepage_writeback(tid, pfn, WritebackCaller::Writeback);
            *cursor = idx + 1;
        }
        if self.fs_writepages_submit_must_wait(tid, ino, class) {
            self.blk_finish_plug(tid);
            return Some(Step::Wait(None));
        }
        self.fs_writepages_done(tid, ino);
        self.blk_finish_plug(tid);
        self.flush_plug(bdi);
        let inode = self.mm().inode(ino);
        if inode.nr_dirty == 0 && inode.nr_writeback == 0 {
            return None;
        }
        *cursor = 0;
        Some(Step::SleepUntil(self.now() + FDATAWAIT_POLL_NS))
    }
}

impl<T: WritebackHost + ?Sized> Fsync for T {}
