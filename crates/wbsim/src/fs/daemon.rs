//! Filesystem threads: the FUSE userspace daemon (ntfs-3g), jbd2 (ext4),
//! xfssyncd (xfs) and btrfs-transaction.

use std::collections::VecDeque;

use super::metadata::{NTFS_CLUSTERS_PER_BITMAP_PAGE, XFS_LOG_BYTES_PER_ALLOC};
use crate::block::submit::Submit;
use crate::fs::fuse::Fuse;
use crate::fs::ioend::IoendCompletion;
use crate::fs::jbd2::{Jbd2, Jbd2Commit};
use crate::fs::metadata::MetadataWrites;
use crate::fs::space::SpaceReservation;
use crate::fs::FsHost;
use crate::fs::FS_BLOCK_SECTORS;
use crate::mm::filemap::Filemap;
use crate::mm::page::flags;
use crate::sched::Step;
use crate::sim::Ns;
use crate::writeback::throttle::balance_dirty_pages;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DaemonKind {
    /// ntfs-3g serving FUSE WRITE requests.
    Fuse,
    /// jbd2 commit every `commit` interval (ext4 default 5 s).
    Jbd2,
    /// xfssyncd forcing the log every `xfs_syncd_centisecs` (30 s).
    XfsSyncd,
    /// btrfs-transaction committing every `commit` interval (30 s).
    BtrfsTransaction,
    /// xfs log and inode writeback of file creations (see `metadata`).
    XfsAild,
    /// The workqueue worker that ends the writeback of completed ioends
    /// (`ext4-rsv-conversion`, `xfs-conv`; see `ioend`).
    IoendWorker,
}

/// Who waits for a FUSE WRITE request's reply.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FuseRequestKind {
    /// A `write(2)` (`fuse_perform_write`): the writer sleeps until the reply.
    Write { writer: u32 },
    /// A writeback request (`fuse_writepage_locked`) carrying the
    /// temporary page; the reply frees it (`fuse_writepage_end`).
    Writepage { tmp: u32 },
}

/// One FUSE WRITE request: page `file_index` of FUSE file `ino`.
#[derive(Debug, Clone, Copy)]
pub struct FuseRequest {
    pub kind: FuseRequestKind,
    pub ino: u32,
    pub file_index: u32,
}

#[derive(Debug, Clone)]
pub struct FsDaemonState {
    pub kind: DaemonKind,
    pub fs: usize,
    pub interval_ns: Ns,
    pub queue: VecDeque<FuseRequest>,
    current: Option<FuseRequest>,
    /// Progress on `current`: metadata done, data page written.
    meta_done: bool,
    data_done: bool,
    pub idle: bool,
    pub requests_served: u64,
    /// jbd2: the commit in progress (see `jbd2`).
    pub commit: Option<Jbd2Commit>,
}

impl FsDaemonState {
    pub fn new(kind: DaemonKind, fs: usize, interval_ns: Ns) -> FsDaemonState {
        FsDaemonState {
            kind,
            fs,
            interval_ns,
            queue: VecDeque::new(),
            current: None,
            meta_done: false,
            data_done: false,
            idle: kind == DaemonKind::Fuse,
            requests_served: 0,
            commit: None,
        }
    }
}

/// The filesystems' own threads: the FUSE daemon, jbd2, xfssyncd, btrfs-transaction, xfsaild.
pub trait FsDaemons: FsHost {
    /// Queue a FUSE WRITE request (`fuse_request_send`) and wake the daemon.
    fn fuse_send(&mut self, daemon: u32, req: FuseRequest) {
        let d = self.fs_mut().daemon_mut(daemon);
        d.queue.push_back(req);
        if d.idle {
            d.idle = false;
            self.wake_task(daemon);
        }
    }

    #[inline(never)]
    fn fs_daemon_step(&mut self, tid: u32) -> Step {
        let kind = self.fs_mut().daemon_mut(tid).kind;
        match kind {
            DaemonKind::Fuse => self.fuse_daemon_step(tid),
            DaemonKind::Jbd2 => self.jbd2_step(tid),
            DaemonKind::IoendWorker => {
                let fs = self.fs_mut().daemon_mut(tid).fs;
                self.ioend_worker_step(tid, fs)
            }
            _ => {
                self.periodic_commit(tid, kind);
                let interval = self.fs_mut().daemon_mut(tid).interval_ns;
                Step::SleepUntil(self.now() + interval)
            }
        }
    }

    /// ntfs-3g: `pwrite()` the request's page into the NTFS volume through
    /// the block device page cache, updating $Bitmap and the $MFT record
    /// when a new cluster is allocated, then reply.
    fn fuse_daemon_step(&mut self, tid: u32) -> Step {
        if let Some(step) = balance_dirty_pages(self, tid) {
            return step;
        }
        // The request in hand and how far it got: only this step changes
        // them, so they are read once, and written back only where the
        // step ends before its reply.
        let d = self.fs_mut().daemon_mut(tid);
        let fs = d.fs;
        if d.current.is_none() {
            d.current = d.queue.pop_front();
            d.meta_done = false;
            d.data_done = false;
        }
        let Some(req) = d.current else {
            d.idle = true;
            return Step::Wait(None);
        };
        let (mut meta_done, mut data_done) = (d.meta_done, d.data_done);
        let blockdev = self.fs().filesystems[fs].blockdev_inode;
        let bdi = self.mm().inode(blockdev).bdi();
        self.wb_mut().set_task_backing_dev(tid, Some(bdi));
        let md = &self.fs().filesystems[fs].metadata;
        let (first_cluster, bitmap_first, mft_page) = (
            md.ntfs_data_first_cluster,
            md.ntfs_bitmap_first_page,
            md.ntfs_mft_page,
        );
        let cluster = first_cluster + req.file_index as u64;
        if !meta_done {
            self.charge_sys(tid, self.cost().fuse_request_ns);
            let bitmap = bitmap_first + (cluster / NTFS_CLUSTERS_PER_BITMAP_PAGE) as u32;
            let d1 = self.ntfs_touch(tid, blockdev, bitmap);
            let d2 = self.ntfs_touch(tid, blockdev, mft_page);
            // Kept in the daemon's state only if the step ends before the
            // reply (which leaves the request, so the flags are reset
            // with the next one).
            meta_done = true;
            self.balance_dirty_pages_ratelimited(tid, bdi, d1 + d2);
            if self.wb().task_bdp(tid).active {
                self.fs_mut().daemon_mut(tid).meta_done = true;
                return Step::Continue;
            }
        }
        if !data_done && !self.fs_reserve_block(req.ino, req.file_index) {
            // ntfs-3g finds no free cluster: the request fails with ENOSPC.
            data_done = true;
            self.fs_mut().daemon_mut(tid).data_done = true;
            if let FuseRequestKind::Write { writer } = req.kind {
                self.fs_mut().task_fuse_enospc[writer as usize] = true;
            }
        }
        if !data_done {
            match self.write_page_cached(tid, blockdev, cluster as u32, 4096, true) {
                Err(step) => {
                    self.fs_mut().daemon_mut(tid).meta_done = meta_done;
                    return step;
                }
                Ok(dirtied) => {
                    self.balance_dirty_pages_ratelimited(tid, bdi, dirtied as u64);
                    if self.wb().task_bdp(tid).active {
                        let d = self.fs_mut().daemon_mut(tid);
                        (d.meta_done, d.data_done) = (meta_done, true);
                        return Step::Continue;
                    }
                }
            }
        }
        // Reply: the writer's request completes.
        let d = self.fs_mut().daemon_mut(tid);
        d.current = None;
        d.requests_served += 1;
        self.wb_mut().set_task_backing_dev(tid, None);
        self.charge_sys(tid, self.cost().fuse_request_ns);
        match req.kind {
            FuseRequestKind::Write { writer } => self.wake_task(writer),
            FuseRequestKind::Writepage { tmp } => self.fuse_writepage_end(tid, req.ino, tmp),
        }
        Step::Continue
    }

    /// A small metadata update through the block-device page cache: 1 if
    /// it dirtied a clean page (`set_page_dirty` says so), else 0.
    fn ntfs_touch(&mut self, tid: u32, blockdev: u32, index: u32) -> u64 {
        let pfn = self.touch_metadata_page(tid, blockdev, index, false);
        u64::from(self.set_page_dirty(pfn, None))
    }

    /// xfs log force or btrfs transaction commit.
    fn periodic_commit(&mut self, tid: u32, kind: DaemonKind) {
        let fs = self.fs_mut().daemon_mut(tid).fs;
        let dev = self.fs().filesystems[fs].device;
        match kind {
            DaemonKind::XfsSyncd => {
                let n = std::mem::take(&mut self.fs_mut().filesystems[fs].metadata.unlogged_allocs);
                if n > 0 {
                    let blocks = (n * XFS_LOG_BYTES_PER_ALLOC).div_ceil(4096);
                    self.log_write(tid, fs, dev, blocks);
                }
            }
            DaemonKind::BtrfsTransaction => {
                if let Some(meta) = self.fs().filesystems[fs].metadata.meta_inode {
                    let mut idx = 0;
                    while let Some(i) = self.mm().inode(meta).next_dirty(idx, u32::MAX) {
                        let pfn = self.mm().inode(meta).page(i);
                        if !self.mm().pages()[pfn as usize].has(flags::WRITEBACK) {
                            self.charge_sys(tid, self.cost().writeback_page_ns);
                            self.submit_page_write(tid, pfn);
                        }
                        idx = i + 1;
                    }
                    self.fs_mut().filesystems[fs].metadata.cow_pending = true;
                    // Superblock at 64 KiB.
                    self.submit_raw_write(tid, dev, 128, FS_BLOCK_SECTORS);
                }
            }
            DaemonKind::XfsAild => self.xfs_metadata_writeback(tid, fs),
            // jbd2 commits in steps (`jbd2`); FUSE serves requests.
            DaemonKind::Jbd2 | DaemonKind::Fuse | DaemonKind::IoendWorker => {}
        }
        self.kick_device(dev);
    }

    /// Sequential write of `blocks` 4 KiB log blocks in the log region.
    fn log_write(&mut self, tid: u32, fs: usize, dev: usize, blocks: u64) {
        self.log_write_as(tid, fs, dev, blocks, crate::block::Segment::RAW);
    }

    /// [`FsDaemons::log_write`] whose requests carry `seg`; false if the
    /// filesystem has no log region (nothing was written).
    fn log_write_as(
        &mut self,
        tid: u32,
        fs: usize,
        dev: usize,
        blocks: u64,
        seg: crate::block::Segment,
    ) -> bool {
        let md = &mut self.fs_mut().filesystems[fs].metadata;
        if md.log_sectors == 0 {
            return false;
        }
        let nr = (blocks * FS_BLOCK_SECTORS).min(md.log_sectors);
        if md.log_cursor + nr > md.log_sectors {
            md.log_cursor = 0;
        }
        let sector = md.log_start_sector + md.log_cursor;
        md.log_cursor += nr;
        self.submit_raw_write_as(tid, dev, sector, nr, seg);
        true
    }
}

impl<T: FsHost + ?Sized> FsDaemons for T {}
