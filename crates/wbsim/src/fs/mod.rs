//! Filesystem models: where data and metadata go on the device, what
//! `->writepage` does when reclaim or writeback calls it, and the
//! filesystems' own threads (FUSE daemon, jbd2, xfssyncd,
//! btrfs-transaction).
//!
//! `->writepage` from reclaim, Linux 3.0 (read in 3.0-era sources):
//! - xfs `xfs_vm_writepage`: redirty when PF_MEMALLOC without PF_KSWAPD
//!   (direct reclaim); kswapd writes and clusters following dirty pages of
//!   the same extent up to `nr_to_write` = 32.
//! - ext4 `ext4_writepage`: redirty any page with delayed-allocation
//!   buffers (never allocates), kswapd and direct reclaim alike.
//! - btrfs `btrfs_writepage`: redirty whenever PF_MEMALLOC (kswapd too).
//! - block device `blkdev_writepage` (= `block_write_full_page`): always
//!   writes; this is what reclaim meets under fuse-ntfs, because ntfs-3g
//!   writes through the block device's page cache.

pub mod daemon;
pub mod fuse;
pub mod ioend;
pub mod jbd2;
pub mod metadata;
pub mod space;
mod state;

use crate::block::bio::BioBuilding;
use crate::mm::page::{flags, Pfn};
use crate::writeback::pass::WritebackCaller;
use crate::writeback::WritebackHost;

use crate::fs::fuse::Fuse;
use crate::fs::ioend::IoendCompletion;
use crate::fs::jbd2::Jbd2;
use crate::fs::metadata::MetadataWrites;
use crate::writeback::account::Account;
pub use daemon::FsDaemonState;
pub use state::Filesystems;

/// The machine as the filesystem models see them: their own state, and
/// everything below (writeback, block, mm). They call nothing above.
pub trait FsHost: WritebackHost {
    fn fs(&self) -> &Filesystems;
    fn fs_mut(&mut self) -> &mut Filesystems;
    /// The memory (its inodes) and the filesystems at once, for a step
    /// that changes a file and its filesystem together (the write-time
    /// block reservation, on every page `write(2)` dirties).
    fn mm_and_fs_mut(&mut self) -> (&mut crate::mm::Memory, &mut Filesystems);
}

/// What `pageout()` sees after `->writepage` returned.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum WritepageResult {
    /// The filesystem refused and re-dirtied the page.
    Redirtied,
    /// IO was submitted; the page is under writeback.
    Submitted,
    /// The page is clean and not under writeback (FUSE copied it to a
    /// temporary page and ended writeback at once).
    CompletedSync,
}

/// A mounted filesystem.
#[derive(Debug, Clone)]
pub struct FsInstance {
    pub fs_type: FsType,
    pub mount: String,
    /// The block device it lives on.
    pub device: usize,
    /// The bdi its regular files write back through (a FUSE connection has
    /// its own).
    pub bdi: usize,
    /// The block-device inode (ntfs-3g writes through it; ext4 metadata).
    pub blockdev_inode: u32,
    /// Next free sector for new file data (a bump allocator per fs).
    pub data_cursor_sector: u64,
    /// xfs allocation groups: per group the next free data sector for
    /// files created in its directories.
    pub ag_data_cursor: Vec<u64>,
    pub metadata: metadata::MetadataState,
    /// The FUSE daemon (ntfs-3g) that serves writepage requests.
    pub fuse_daemon: Option<u32>,
    /// Data blocks (4 KiB) the filesystem can hold: the device's capacity
    /// less the swap partition on it (see `space`).
    pub capacity_blocks: u64,
    /// Data blocks reserved or allocated for file pages.
    pub used_blocks: u64,
}

/// Sectors in 1 GiB.
pub const SECTORS_PER_GIB: u64 = (1 << 30) / 512;
/// Sectors of a 4 KiB filesystem block (log blocks, superblocks): a size
/// on disk, the same whatever the simulated page's size.
pub const FS_BLOCK_SECTORS: u64 = 8;

/// `->writepage` as writeback and reclaim call it.
pub trait Writepage: FsHost {
    /// `->writepage` called by `pageout()` on a dirty page at the LRU tail.
    /// Does `clear_page_dirty_for_io` and the filesystem's answer.
    fn fs_writepage_reclaim(&mut self, tid: u32, pfn: Pfn, is_kswapd: bool) -> WritepageResult {
        let p = self.mm().pages()[pfn as usize];
        let ino = p.inode();
        let inode = self.mm().inode(ino);
        let fs_type = self.fs().filesystems[inode.fs()].fs_type;
        let kind = inode.kind;
        use crate::mm::inode::MappingKind;
        let writes = match (kind, fs_type) {
            (MappingKind::BlockDevice, _) => true,
            (_, FsType::Xfs) => is_kswapd,
            (_, FsType::Ext4) => p.has(flags::MAPPED),
            (_, FsType::Btrfs) => false,
            (_, FsType::FuseNtfs) => {
                // fuse_writepage: copy to a temporary page, end writeback on
                // the original at once (only reached for mmap-dirtied pages).
                return if self.fuse_writepage(tid, pfn, true) {
                    WritepageResult::CompletedSync
                } else {
                    WritepageResult::Redirtied
                };
            }
        };
        self.charge_sys(tid, self.cost().writeback_page_ns);
        if !writes {
            self.clear_page_dirty_for_io(pfn);
            self.redirty_page_for_writepage(pfn);
            return WritepageResult::Redirtied;
        }
        if kind == MappingKind::Regular && fs_type == FsType::Xfs {
            // One ioend, submitted as bios of contiguous pages at the end
            // of the call (`xfs_submit_ioend`).
            crate::writeback::account::write_page_into_bio(self, tid, pfn);
            self.xfs_cluster_write(tid, ino, p.index() + 1, 31);
            self.submit_built_bio(tid);
        } else {
            self.submit_page_write(tid, pfn);
        }
        WritepageResult::Submitted
    }

    /// `xfs_cluster_write`: after the page reclaim asked for, write the
    /// following dirty pages of the same file (same extent; a streaming
    /// file is one extent) while `nr_to_write` lasts, into the bio being
    /// built.
    fn xfs_cluster_write(&mut self, tid: u32, ino: u32, from: u32, mut budget: u32) {
        let mut idx = from;
        while budget > 0 {
            let pfn = self.mm().inode(ino).page(idx);
            if pfn == crate::mm::page::NIL {
                break;
            }
            let p = self.mm().pages()[pfn as usize];
            if !p.has(flags::DIRTY) || p.has(flags::WRITEBACK) {
                break;
            }
            self.charge_sys(tid, self.cost().writeback_page_ns);
            crate::writeback::account::write_page_into_bio(self, tid, pfn);
            idx += 1;
            budget -= 1;
        }
    }
}

impl<T: FsHost + ?Sized> Writepage for T {}

/// A filesystem type.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
pub enum FsType {
    #[serde(rename = "xfs")]
    Xfs,
    #[serde(rename = "ext4")]
    Ext4,
    #[serde(rename = "btrfs")]
    Btrfs,
    #[serde(rename = "fuse-ntfs")]
    FuseNtfs,
}

impl FsType {
    /// The name used in scenario files (and by mount(8), but for FUSE).
    pub fn as_str(self) -> &'static str {
        match self {
            FsType::Xfs => "xfs",
            FsType::Ext4 => "ext4",
            FsType::Btrfs => "btrfs",
            FsType::FuseNtfs => "fuse-ntfs",
        }
    }
}

impl FsType {
    /// The type's `write_begin` attaches buffer heads to data pages
    /// (`block_write_begin`): ext4 (`ext4_da_write_begin`) and, while
    /// `xfs_buffer_heads` (2.6.24 – 4.x), xfs (`xfs_vm_write_begin`);
    /// btrfs keeps its own extent state and FUSE none.
    pub fn data_pages_have_buffer_heads(self, xfs_buffer_heads: bool) -> bool {
        match self {
            FsType::Ext4 => true,
            FsType::Xfs => xfs_buffer_heads,
            FsType::Btrfs | FsType::FuseNtfs => false,
        }
    }
}

/// Whether mapping `ino`'s written pages carry buffer heads: a regular
/// file of a buffer-head filesystem, or a block device's page cache
/// (`blkdev_write_begin` → `block_write_begin`).
#[inline(always)]
pub fn mapping_has_buffer_heads<H: FsHost + ?Sized>(sys: &H, ino: u32) -> bool {
    use crate::mm::inode::MappingKind;
    let inode = sys.mm().inode(ino);
    match inode.kind {
        MappingKind::Regular => sys.fs().filesystems[inode.fs()]
            .fs_type
            .data_pages_have_buffer_heads(sys.profile().xfs_buffer_heads),
        MappingKind::BlockDevice => true,
        MappingKind::Metadata | MappingKind::Anon | MappingKind::Swap => false,
    }
}

/// Whether the writeback bios of `ino`'s filesystem carry REQ_BACKGROUND when the
/// writeback is background or periodic, which puts them under wbt's
/// smallest limit (`get_limit`: a quarter of the depth, not a half). Read
/// in 6.1: iomap (`iomap_alloc_ioend`) and btrfs (`extent_write_cache_pages`
/// and friends) build their bios with `wbc_to_write_flags(wbc)`; ext4's
/// `io_submit_init_bio` allocates a plain REQ_OP_WRITE bio and
/// `ext4_io_submit` adds only REQ_SYNC for WB_SYNC_ALL (fs/ext4/page-io.c).
/// Only the blk-mq presets have wbt, so only 6.1 reads this.
pub fn marks_background_writes<H: FsHost + ?Sized>(sys: &H, ino: u32) -> bool {
    let fs = sys.mm().inode(ino).fs();
    match sys.fs().filesystems[fs].fs_type {
        FsType::Ext4 => false,
        FsType::Xfs | FsType::Btrfs => true,
        // No block device.
        FsType::FuseNtfs => false,
    }
}

/// Must task `tid`, writing back page `index` of `ino`, wait before it
/// can submit it? ext4 (6.1) maps each extent of delayed-allocation pages
/// before it writes them (`mpage_map_and_submit_extent`), and the block
/// allocation waits while the journal commit's log write holds the block
/// bitmap and group descriptor shadowed (`Jbd2::jbd2_metadata_update_waits`);
/// the task is then queued on the journal.
#[inline(always)]
pub fn writepages_map_waits<H: FsHost + ?Sized>(
    sys: &mut H,
    tid: u32,
    ino: u32,
    index: u32,
) -> bool {
    // Every ext4 has its jbd2 thread: without one, no file is ext4's,
    // and the walk's page needs no look at its inode here.
    if !sys.fs().any_jbd2() {
        return false;
    }
    let fs = sys.mm().inode(ino).fs();
    if sys.fs().filesystems[fs].fs_type != FsType::Ext4 || !sys.ioend_would_start(fs, ino, index) {
        return false;
    }
    // The previous extent's handle stops once its pages are submitted
    // (`ext4_io_submit`, here without a wait for a request: no journal
    // commit may wait on pages held in an unsubmitted bio); the next
    // starts (`ext4_journal_start_with_reserve`) before the extent is
    // mapped.
    sys.submit_built_bio(tid);
    sys.jbd2_handle_stop(fs);
    sys.jbd2_handle_start(fs);
    sys.jbd2_metadata_update_waits(tid, fs)
}

/// btrfs's `writepage_delalloc` at page `index` of `ino`, the next its
/// `->writepages` call writes: if the page starts a delalloc range (dirty
/// pages with no blocks yet, `MAPPED` clear, up to BTRFS_MAX_EXTENT_SIZE),
/// the range gets its blocks (`cow_file_range`) and the call's
/// `nr_to_write` becomes what the range asks for, returned here. None:
/// no range starts there, or the profile has no such rule.
#[inline(always)]
pub fn writepages_delalloc<H: FsHost + ?Sized>(
    sys: &mut H,
    ino: u32,
    index: u32,
    nr_to_write: i64,
) -> Option<i64> {
    /// BTRFS_MAX_EXTENT_SIZE (128 MiB) in 4 KiB pages.
    const MAX_EXTENT_PAGES: u64 = 32768;
    let max_extent_pages = sys.mm().unit().from_base_pages(MAX_EXTENT_PAGES) as u32;
    let thresh = sys.profile().btrfs_delalloc_write_pages as i64;
    if thresh == 0 {
        return None;
    }
    let fs = sys.mm().inode(ino).fs();
    if sys.fs().filesystems[fs].fs_type != FsType::Btrfs {
        return None;
    }
    let mut range = 0u32;
    while range < max_extent_pages {
        let pfn = sys.mm().inode(ino).page(index.wrapping_add(range));
        if pfn == crate::mm::page::NIL {
            break;
        }
        let p = &sys.mm().pages()[pfn as usize];
        if !p.has(flags::DIRTY) || p.has(flags::MAPPED) {
            break;
        }
        sys.mm_mut().pages_mut()[pfn as usize].flags |= flags::MAPPED;
        range += 1;
    }
    let delalloc = range as i64;
    if delalloc == 0 || nr_to_write >= delalloc {
        return None;
    }
    Some(if delalloc < 2 * thresh {
        delalloc
    } else {
        thresh
    })
}

/// The btree pages a btrfs mount reads and holds under the profile
/// (`btrfs_mount_tree_pages`: its trees' root nodes).
pub fn btrfs_mount_tree_pages<H: FsHost + ?Sized>(sys: &H) -> u32 {
    sys.profile().btrfs_mount_tree_pages
}

/// Task `tid`'s `->writepages` call on `ino` is over: its last io_end
/// is closed, its journal handle stops, and it is preemptible again.
pub fn writepages_done<H: FsHost + ?Sized>(sys: &mut H, tid: u32, ino: u32) {
    // The callers submitted the bio they built
    // (`fs_writepages_submit_must_wait`); one that did not has it
    // submitted now, without waiting, and the last ioend is closed.
    sys.submit_built_bio(tid);
    sys.submit_open_bio(tid, ino, None);
    let fs = sys.mm().inode(ino).fs();
    sys.jbd2_handle_stop(fs);
    sys.task_mut(tid).no_preempt = false;
}

/// `->writepage` / `->writepages` from `write_cache_pages` on behalf of
/// a flusher, a throttled writer or a journal commit. Returns whether IO
/// was submitted.
#[inline(always)]
pub fn fs_writepage_writeback<H: FsHost + ?Sized>(
    sys: &mut H,
    tid: u32,
    pfn: Pfn,
    caller: WritebackCaller,
) -> bool {
    let p = sys.mm().pages()[pfn as usize];
    let inode = sys.mm().inode(p.inode());
    let fs = inode.fs();
    let fs_type = sys.fs().filesystems[fs].fs_type;
    let regular = inode.kind == crate::mm::inode::MappingKind::Regular;
    if caller == WritebackCaller::Journal && !p.has(flags::MAPPED) {
        // ext4_writepage from the jbd2 data=ordered pass refuses pages
        // with delayed-allocation buffers.
        sys.clear_page_dirty_for_io(pfn);
        sys.redirty_page_for_writepage(pfn);
        return false;
    }
    if regular && fs_type == FsType::FuseNtfs {
        return sys.fuse_writepage(tid, pfn, false);
    }
    let by_writepages = regular && caller == WritebackCaller::Writeback;
    if by_writepages && sys.ioend_builds_bio(fs) {
        crate::writeback::account::prepare_page_write(sys, pfn);
    } else if by_writepages && sys.builds_multipage_bios(fs) {
        crate::writeback::account::write_page_into_bio(sys, tid, pfn);
    } else {
        sys.submit_page_write(tid, pfn);
    }
    if regular {
        sys.fs_data_written(tid, fs, p.inode(), p.index(), fs_type);
        if caller == WritebackCaller::Writeback {
            let ioend_pages = sys.ioend_add_page(tid, fs, p.inode(), p.index(), pfn);
            let unit = sys.mm().unit();
            sys.task_mut(tid).no_preempt = ioend::in_partial_ext4_bio(fs_type, ioend_pages, unit);
        }
    }
    true
}

#[cfg(test)]
mod tests {
    use crate::test_support::usb_stick_files;
    use crate::writeback::WritebackHost;

    /// Which filesystems' background and periodic writeback bios carry
    /// REQ_BACKGROUND (wbt's quarter-depth limit): iomap's and btrfs's,
    /// not ext4's.
    #[test]
    fn only_ext4_writes_background_bios_without_req_background() {
        for (fs_type, marked) in [("ext4", false), ("xfs", true), ("btrfs", true)] {
            let (sys, files) = usb_stick_files("6.1", fs_type, &["a"]);
            assert_eq!(
                sys.fs_marks_background_writes(files[0]),
                marked,
                "{fs_type}"
            );
        }
    }
}
