//! FUSE `->writepage` with writeback-temp pages, as in Linux 3.0
//! `fs/fuse/file.c` (read in the 3.0-era source: `fuse_writepage`,
//! `fuse_writepage_locked`, `fuse_writepage_end`, `fuse_writepage_finish`,
//! `fuse_vma_close`, `fuse_page_mkwrite`, `fuse_file_mmap`; and
//! `fuse_bdi_init` in `fs/fuse/inode.c`).
//!
//! Pages of a FUSE file become dirty only through a shared writable
//! mapping (buffered `write(2)` is write-through, `fuse_perform_write`).
//! `fuse_file_mmap` allows such a mapping for any file not opened with
//! `direct_io` (ntfs-3g does not use it). `fuse_writepage_locked`:
//! `set_page_writeback`, allocate a temporary page (`GFP_NOFS |
//! __GFP_HIGHMEM`), copy, `inc_bdi_stat(BDI_WRITEBACK)` and
//! `inc_zone_page_state(NR_WRITEBACK_TEMP)` for the temporary page,
//! `end_page_writeback` on the original at once, and queue a WRITE request
//! for the daemon. The bdi has `BDI_CAP_NO_ACCT_WB`, so the original
//! page's writeback earns no bdi writeback count or completion; the
//! request's reply (`fuse_writepage_end` → `fuse_writepage_finish`) drops
//! the temporary page's counts and calls `bdi_writeout_inc`.
//!
//! Not modelled: `fuse_page_mkwrite` waiting for the page's in-flight
//! request (`fuse_wait_on_page_writeback`); the modelled mapped writers
//! dirty each page once. The temporary page is taken from the free lists
//! (fast path, then kswapd woken and the min watermark; below it with
//! PF_MEMALLOC), without entering direct reclaim. When it cannot be had, 3.0 ends writeback and returns -ENOMEM,
//! which stops `write_cache_pages` (the page stays clean, its data lost);
//! the model stops there too but redirties the page.

use crate::fs::daemon::FsDaemons;
use crate::fs::daemon::{FuseRequest, FuseRequestKind};
use crate::fs::FsHost;
use crate::mm::page::Pfn;
use crate::mm::vmstat::Ev;
use crate::mm::MemoryOps;
use crate::mm::{Gfp, Mark};
use crate::writeback::account::Account;
use crate::writeback::limits::Limits;

/// FUSE writes: a WRITE request to the daemon per page (`fuse_writepage`).
pub trait Fuse: FsHost {
    /// `fuse_writepage` of a dirty page of a FUSE file. `memalloc` is
    /// PF_MEMALLOC (reclaim), which may take the temporary page below the
    /// watermarks. Returns whether a request was queued.
    fn fuse_writepage(&mut self, tid: u32, pfn: Pfn, memalloc: bool) -> bool {
        let p = self.mm().pages()[pfn as usize];
        let ino = p.inode();
        let fs = self.mm().inode(ino).fs();
        self.clear_page_dirty_for_io(pfn);
        let daemon = self.fs().filesystems[fs].fuse_daemon;
        let tmp = daemon.and_then(|_| self.fuse_alloc_tmp_page(tid, memalloc));
        let (Some(daemon), Some(tmp)) = (daemon, tmp) else {
            self.redirty_page_for_writepage(pfn);
            return false;
        };
        self.charge_sys(
            tid,
            self.cost().page_alloc_ns + 4 * self.cost().copy_per_kib_ns,
        );
        // set_page_writeback + end_page_writeback on the original page:
        // NR_WRITEBACK up and down in the same call, NR_WRITTEN counted.
        self.mm_mut().vmstat_mut().inc(Ev::NrWritten, 1);
        let inode = self.mm_mut().inode_mut(ino);
        inode.on_disk_pages = inode.on_disk_pages.max(p.index() + 1);
        let bdi = inode.bdi();
        self.wb_mut().bdi_mut(bdi).writeback += 1;
        self.mm_mut().gauges_mut().nr_writeback_temp += 1;
        self.charge_sys(tid, self.cost().fuse_request_ns);
        self.fuse_send(
            daemon,
            FuseRequest {
                kind: FuseRequestKind::Writepage { tmp },
                ino,
                file_index: p.index(),
            },
        );
        true
    }

    /// The temporary page: the allocator's fast path, then kswapd woken
    /// and the min watermark (below it with PF_MEMALLOC); no direct reclaim.
    fn fuse_alloc_tmp_page(&mut self, tid: u32, memalloc: bool) -> Option<Pfn> {
        let gfp = Gfp::movable(false);
        if memalloc {
            return self.get_page_from_freelist(tid, Mark::NoWatermarks, gfp);
        }
        if let Some(pfn) = self.get_page_from_freelist(tid, Mark::Low, gfp) {
            return Some(pfn);
        }
        self.wake_all_kswapd(tid, gfp);
        self.get_page_from_freelist(tid, Mark::Min, gfp)
    }

    /// `fuse_writepage_end` → `fuse_writepage_finish`: the daemon replied
    /// to a writepage request; the temporary page is freed.
    fn fuse_writepage_end(&mut self, tid: u32, ino: u32, tmp: Pfn) {
        let bdi = self.mm().inode(ino).bdi();
        self.wb_mut().bdi_mut(bdi).writeback -= 1;
        self.wb_mut().bdi_mut(bdi).written_pages += 1;
        self.mm_mut().gauges_mut().nr_writeback_temp -= 1;
        self.bdi_writeout_inc(bdi);
        self.free_page(tid, tmp);
    }
}

impl<T: FsHost + ?Sized> Fuse for T {}

/// Whether `ino` is a regular file of a FUSE filesystem.
#[inline]
pub fn is_fuse_file<H: FsHost + ?Sized>(sys: &H, ino: u32) -> bool {
    let inode = sys.mm().inode(ino);
    inode.kind == crate::mm::inode::MappingKind::Regular
        && sys.fs().filesystems[inode.fs()].fs_type == crate::fs::FsType::FuseNtfs
}
