//! Block reservation per filesystem: a write that needs a data block when
//! none is left fails with ENOSPC, where the real filesystem fails it.
//!
//! One counter per filesystem (`FsInstance::used_blocks` against
//! `capacity_blocks`, the device's capacity less the swap partition on it)
//! and per file a high-water mark of the pages with a block: a page below
//! it needs nothing, a page at or above it reserves one block (the
//! modelled writers fill files from the start; a write into a hole below
//! the mark is not charged). Metadata (logs, inode tables, $MFT, btrfs
//! trees) is not charged. Where the reservation is made, Linux 3.0:
//! - ext4 (delalloc): `ext4_da_write_begin` → `ext4_da_get_block_prep` →
//!   `ext4_da_reserve_space` at `write(2)` time; a mapped write fault
//!   `ext4_page_mkwrite` → `block_page_mkwrite` → VM_FAULT_SIGBUS.
//! - xfs (delalloc): `xfs_vm_write_begin` → `__xfs_get_blocks` →
//!   `xfs_iomap_write_delay` at `write(2)` time; on ENOSPC
//!   `xfs_file_buffered_aio_write` calls `xfs_flush_inodes` once and
//!   retries (the model queues writeback of the device's dirty pages on
//!   its flusher, without waiting; its reservation is exact, with no
//!   speculative preallocation to give back, so the retry fails too);
//!   `xfs_vm_page_mkwrite` → `block_page_mkwrite` → SIGBUS.
//! - btrfs: `btrfs_file_aio_write` → `btrfs_delalloc_reserve_space` →
//!   `btrfs_check_data_free_space` at `write(2)` time;
//!   `btrfs_page_mkwrite` → VM_FAULT_SIGBUS.
//! - fuse-ntfs: ntfs-3g allocates clusters when it serves the WRITE
//!   request (`ntfs_attr_pwrite`); ENOSPC goes back in the reply and
//!   `fuse_perform_write` returns it to the writer. A writepage request
//!   that fails only sets the mapping's error (`fuse_writepage_end`):
//!   `fuse_page_mkwrite` reserves nothing, so a mapped writer gets no
//!   SIGBUS and its data is lost.
//!
//! `truncate_inode_pages` at unlink gives the file's blocks back.

use crate::fs::FsHost;
use crate::fs::FsInstance;
use crate::fs::FsType;
use crate::mm::inode::Inode;
use crate::mm::inode::MappingKind;
use crate::writeback::flusher::Flushers;

/// Block reservation and ENOSPC.
pub trait SpaceReservation: FsHost {
    /// Reserve the data block of page `idx` of `ino` if it has none.
    /// False when the filesystem is full (ENOSPC). Inline: the FUSE
    /// daemon calls it for every page a WRITE request carries.
    #[inline(always)]
    fn fs_reserve_block(&mut self, ino: u32, idx: u32) -> bool {
        let (mm, filesystems) = self.mm_and_fs_mut();
        let inode = mm.inode_mut(ino);
        if inode.kind != MappingKind::Regular || idx < inode.blocks_end {
            return true;
        }
        take_block(&mut filesystems.filesystems[inode.fs()], inode, idx)
    }

    /// The write-time reservation of a non-FUSE filesystem (FUSE reserves
    /// in its daemon). False on ENOSPC. (`is_fuse_file(ino) ||
    /// fs_reserve_block(ino, idx)`, with one look at the inode and one at
    /// its filesystem, each changed in place: every `write(2)` page comes
    /// here.)
    #[inline(always)]
    fn write_begin_reserve(&mut self, ino: u32, idx: u32) -> bool {
        let (mm, filesystems) = self.mm_and_fs_mut();
        let inode = mm.inode_mut(ino);
        if inode.kind != MappingKind::Regular || idx < inode.blocks_end {
            return true;
        }
        let fs = &mut filesystems.filesystems[inode.fs()];
        fs.fs_type == FsType::FuseNtfs || take_block(fs, inode, idx)
    }

    /// The reservation of a `write(2)`, with xfs's flush and retry. False
    /// on ENOSPC.
    #[inline(always)]
    fn write_reserve_or_retry(&mut self, tid: u32, ino: u32, idx: u32) -> bool {
        self.write_begin_reserve(ino, idx) || self.write_reserve_retry(tid, ino, idx)
    }

    /// ENOSPC: the retry, if the filesystem makes one (out of line, rare).
    #[inline(never)]
    fn write_reserve_retry(&mut self, tid: u32, ino: u32, idx: u32) -> bool {
        self.enospc_should_retry(tid, ino) && self.write_begin_reserve(ino, idx)
    }

    /// ENOSPC in `write(2)`: on xfs the first one per task wakes the
    /// flusher (`xfs_flush_inodes`) and retries once. Returns true if the
    /// caller should retry.
    fn enospc_should_retry(&mut self, tid: u32, ino: u32) -> bool {
        let fs = self.mm().inode(ino).fs();
        if self.fs().filesystems[fs].fs_type != FsType::Xfs
            || self.fs().task_enospc_flushed[tid as usize]
        {
            return false;
        }
        self.fs_mut().task_enospc_flushed[tid as usize] = true;
        let bdi = self.fs().filesystems[fs].bdi;
        if self.wb().bdi(bdi).has_dirty_io() {
            let nr_pages = self.wb().bdi(bdi).reclaimable as i64;
            self.wb_mut()
                .bdi_mut(bdi)
                .work
                .push_back(crate::writeback::flusher::WbWork {
                    nr_pages,
                    for_kupdate: false,
                    for_background: false,
                    range_cyclic: false,
                });
            self.wake_flusher(bdi);
        }
        true
    }

    /// The file is gone (unlink after `truncate_inode_pages`): its blocks
    /// go back to the filesystem.
    fn fs_release_blocks(&mut self, ino: u32) {
        let inode = self.mm_mut().inode_mut(ino);
        let n = inode.blocks as u64;
        inode.blocks = 0;
        inode.blocks_end = 0;
        let fs = inode.fs();
        let f = &mut self.fs_mut().filesystems[fs];
        f.used_blocks = f.used_blocks.saturating_sub(n);
    }
}

impl<T: FsHost + ?Sized> SpaceReservation for T {}

/// One block of `fs` for page `idx` of regular file `inode`, which needs
/// one (at or above its high-water mark), if the filesystem has one left.
#[inline(always)]
fn take_block(fs: &mut FsInstance, inode: &mut Inode, idx: u32) -> bool {
    if fs.used_blocks >= fs.capacity_blocks {
        return false;
    }
    fs.used_blocks += 1;
    inode.blocks += 1;
    inode.blocks_end = idx + 1;
    true
}
