//! Filesystem metadata that reaches the page cache or the device.
//!
//! - btrfs (3.0): tree blocks are cached in the btree inode's page cache, on
//!   the file LRU, and every lookup calls `mark_page_accessed`
//!   (`find_extent_buffer`/`alloc_extent_buffer`). Each data page written
//!   back inserts a crc32c into the checksum tree: a search from the root
//!   touches the root node and the current leaf. A 4 KiB leaf (3.0 default
//!   leafsize) holds (4096 − 101 header) / 4 ≈ 998 checksums; a full leaf
//!   means a new leaf page. Tree blocks modified after a transaction commit
//!   are copied on write to new blocks, i.e. new pages.
//! - ext4: blocks are allocated at writeback (`ext4_da_writepages`), which
//!   files the inode on the running transaction's ordered-data list; the
//!   jbd2 commit then walks that inode's dirty pages (see `daemon`).
//! - xfs: metadata buffers are not in the page cache (`xfs_buf`); each
//!   delayed-allocation conversion logs a transaction, and xfssyncd forces
//!   the log to disk.
//! - ntfs-3g: each cluster allocation updates the $Bitmap page covering it
//!   and the file's $MFT record, both through the block device page cache.

use crate::block::plug::TaskPlugging;
use crate::block::submit::Submit;
use crate::fs::daemon::FsDaemons;
use crate::fs::jbd2::Jbd2;
use crate::fs::Filesystems;
use crate::fs::FsHost;
use crate::fs::FsType;
use crate::mm::inode::MappingKind;
use crate::mm::page::{Pfn, NIL};
use crate::mm::pcp::PerCpuLists;
use crate::mm::MemoryOps;
use crate::mm::{Gfp, Mark};

/// Checksums per btrfs leaf: (4096 − 101) / 4.
pub const BTRFS_CSUMS_PER_LEAF: u64 = 998;
/// Bytes of log space one xfs allocation transaction takes (UNVERIFIED
/// order of magnitude: a few logged buffers' worth of changes).
pub const XFS_LOG_BYTES_PER_ALLOC: u64 = 512;
/// Bytes of log one xfs file creation adds to the checkpoint (delayed
/// logging, 2.6.39+): the new inode's core (176 bytes in v5) and the
/// directory-entry and inode-btree changes, with log-op headers. An
/// UNVERIFIED order-of-magnitude input, not fitted.
pub const XFS_LOG_BYTES_PER_CREATE: u64 = 512;
/// Size of one xfs log buffer write (`logbsize=256k`, the mount option
/// Dave Chinner's test setups use; the default is 32 KiB). UNVERIFIED.
pub const XFS_LOG_BUFFER_BYTES: u64 = 256 << 10;
/// How often xfsaild pushes under a steady create load: `xfsaild_push`
/// asks to be called again after 10 ms while it is making progress (50 ms
/// when idle). UNVERIFIED (recollection of 3.x `fs/xfs/xfs_trans_ail.c`).
pub const XFSAILD_INTERVAL_NS: crate::sim::Ns = 10_000_000;
/// Clusters tracked by one 4 KiB page of the NTFS $Bitmap.
pub const NTFS_CLUSTERS_PER_BITMAP_PAGE: u64 = 4096 * 8;

#[derive(Debug, Clone, Default)]
pub struct MetadataState {
    /// btrfs: the btree inode.
    pub meta_inode: Option<u32>,
    pub next_meta_index: u32,
    pub csum_root_index: u32,
    pub csum_leaf_index: u32,
    pub csums_in_leaf: u64,
    /// Tree blocks were written by the last commit; the next change COWs.
    pub cow_pending: bool,
    /// ext4: inodes with blocks allocated in the running transaction.
    pub ordered_inodes: Vec<u32>,
    /// ext4: the committing transaction's log write is in flight, its
    /// metadata buffers shadowed (`jbd2_shadow_wait`).
    pub log_shadowed: bool,
    /// ext4: tasks waiting for the shadowed buffers.
    pub shadow_waiters: Vec<u32>,
    /// ext4: the journal's on-disk superblock still says the log is empty
    /// (JBD2_FLUSHED), so the next commit writes it first.
    pub journal_flushed: bool,
    /// ext4: that superblock write is in flight; the commit waits for it.
    pub journal_sb_in_flight: bool,
    /// ext4: when the running transaction is due for commit (`t_expires`);
    /// None while no handle has started one since the last commit began.
    pub transaction_expires_ns: Option<crate::sim::Ns>,
    /// ext4: a handle found the running transaction due and asked jbd2 to
    /// commit it (`j_commit_request`).
    pub commit_requested: bool,
    /// xfs: allocation transactions not yet forced to the log.
    pub unlogged_allocs: u64,
    /// xfs: log bytes of file creations not yet written.
    pub unlogged_create_bytes: u64,
    /// xfs: on-disk inode size; per allocation group the next inode's
    /// byte offset on the device and the dirty inodes not yet written back
    /// (first byte, bytes: consecutive creations in a group are
    /// consecutive inodes).
    pub inode_size: u64,
    pub ag_inode_cursor: Vec<u64>,
    pub ag_inode_pending: Vec<(u64, u64)>,
    /// Journal/log region and its write cursor.
    pub log_start_sector: u64,
    pub log_sectors: u64,
    pub log_cursor: u64,
    /// ntfs: block-device page indexes of $MFT record and $Bitmap.
    pub ntfs_mft_page: u32,
    pub ntfs_bitmap_first_page: u32,
    pub ntfs_data_first_cluster: u64,
}

/// Metadata and journal writes of the filesystems.
pub trait MetadataWrites: FsHost {
    /// xfsaild: write the created inodes' log (log-buffer-sized sequential
    /// writes) and push the dirty inode clusters, sorted by location and
    /// submitted under one plug (`xfs_buf_delwri_submit`), so consecutive
    /// inodes of a group go out as large IOs. Inode sectors are rounded
    /// out to whole 4 KiB blocks (the cluster buffer is written whole).
    fn xfs_metadata_writeback(&mut self, tid: u32, fs: usize) {
        let dev = self.fs().filesystems[fs].device;
        self.blk_start_plug(tid);
        let bytes =
            std::mem::take(&mut self.fs_mut().filesystems[fs].metadata.unlogged_create_bytes);
        let mut blocks = bytes.div_ceil(4096);
        let per_buffer = XFS_LOG_BUFFER_BYTES / 4096;
        while blocks > 0 {
            let n = blocks.min(per_buffer);
            self.charge_sys(tid, self.cost().copy_per_kib_ns * 4 * n);
            self.log_write(tid, fs, dev, n);
            blocks -= n;
        }
        for ag in 0..self.fs().filesystems[fs].metadata.ag_inode_pending.len() {
            let (start, len) =
                std::mem::take(&mut self.fs_mut().filesystems[fs].metadata.ag_inode_pending[ag]);
            if len == 0 {
                continue;
            }
            let first = start / 4096 * 8;
            let nr = (start + len).div_ceil(4096) * 8 - first;
            self.charge_sys(tid, self.cost().copy_per_kib_ns * 4 * nr / 8);
            self.submit_raw_write(tid, dev, first, nr);
        }
        self.blk_finish_plug(tid);
    }

    /// Side effects of writing back (and, for delayed allocation,
    /// allocating) one data page of a regular file.
    #[inline(always)]
    fn fs_data_written(&mut self, tid: u32, fs: usize, ino: u32, index: u32, fs_type: FsType) {
        match fs_type {
            FsType::Btrfs => self.btrfs_csum_insert(tid, fs),
            FsType::Ext4 => {
                // The block allocation's handle (`ext4_da_writepages`),
                // stopped when the `->writepages` call ends.
                self.jbd2_handle_start(fs);
                let md = &mut self.fs_mut().filesystems[fs].metadata;
                if !md.ordered_inodes.contains(&ino) {
                    md.ordered_inodes.push(ino);
                }
                self.ext4_mballoc_touch(tid, fs, ino, index);
            }
            FsType::Xfs => {
                // One allocation transaction per writeback run of an inode
                // is logged; approximated per 1024 pages (one pass chunk).
                let md = &mut self.fs_mut().filesystems[fs].metadata;
                md.unlogged_allocs += 1;
            }
            FsType::FuseNtfs => {}
        }
    }

    /// ext4 delayed allocation at writeback (`ext4_da_writepages` →
    /// `ext4_mb_new_blocks`, 2.6.28+): each allocation reads the block
    /// group's block bitmap through the block device's page cache
    /// (`ext4_read_block_bitmap` → `sb_getblk` → `touch_buffer` →
    /// `mark_page_accessed`), so a bitmap page touched twice while on the
    /// LRU is activated — the ext4 row of seed 000's pgactivate table. One
    /// allocation per `MAX_WRITEBACK_PAGES` chunk of a file; groups of 128
    /// MiB with flex_bg 16 (bitmaps of 16 groups packed at the start of the
    /// first; mkfs.ext4 defaults, placement UNVERIFIED). The mballoc buddy
    /// cache pages are not modelled.
    fn ext4_mballoc_touch(&mut self, tid: u32, fs: usize, ino: u32, index: u32) {
        const GROUP_PAGES: u64 = 32768;
        const FLEX_GROUPS: u64 = 16;
        if index as i64 % self.max_writeback_pages() != 0 {
            return;
        }
        let page = self.mm().inode(ino).base_sector / self.mm().unit().sectors() + index as u64;
        let group = page / GROUP_PAGES;
        let bitmap = (group - group % FLEX_GROUPS) * GROUP_PAGES + 2 + group % FLEX_GROUPS;
        let bdev = self.fs().filesystems[fs].blockdev_inode;
        self.touch_metadata_page(tid, bdev, bitmap as u32, false);
    }

    fn btrfs_csum_insert(&mut self, tid: u32, fs: usize) {
        let md = &mut self.fs_mut().filesystems[fs].metadata;
        let Some(meta) = md.meta_inode else { return };
        if md.cow_pending {
            // COW of the search path after a commit: new root and leaf.
            md.cow_pending = false;
            md.csum_root_index = md.next_meta_index;
            md.csum_leaf_index = md.next_meta_index + 1;
            md.next_meta_index += 2;
        }
        md.csums_in_leaf += 1;
        if md.csums_in_leaf > BTRFS_CSUMS_PER_LEAF {
            md.csums_in_leaf = 1;
            md.csum_leaf_index = md.next_meta_index;
            md.next_meta_index += 1;
        }
        let (root, leaf) = (md.csum_root_index, md.csum_leaf_index);
        self.touch_metadata_page(tid, meta, root, true);
        self.touch_metadata_page(tid, meta, leaf, true);
    }

    /// Look up (and create if absent) a metadata page of a page-cache
    /// metadata mapping, `mark_page_accessed` it, and dirty it if modified.
    /// Metadata allocations do not enter direct reclaim in the model
    /// (GFP_NOFS, and they are few); they dip below the low watermark and
    /// wake kswapd instead.
    fn touch_metadata_page(&mut self, tid: u32, ino: u32, index: u32, modify: bool) -> Pfn {
        let mut pfn = self.mm().inode(ino).page(index);
        if pfn == NIL {
            let gfp = self.metadata_gfp(ino);
            pfn = match self.get_page_from_freelist(tid, Mark::Low, gfp) {
                Some(p) => p,
                None => {
                    self.wake_all_kswapd(tid, gfp);
                    self.get_page_after_drain(tid, Mark::NoWatermarks, gfp)
                        .expect("no free page at all for metadata")
                }
            };
            self.charge_sys(tid, self.cost().page_alloc_ns);
            self.add_to_page_cache_lru(tid, pfn, ino, index);
        }
        self.mark_page_accessed_by(tid, pfn);
        if modify {
            self.set_page_dirty(pfn, None);
        }
        pfn
    }

    /// The mapping's allocation flags: btrfs's btree inode is GFP_NOFS
    /// (6.1 fs/btrfs/disk-io.c `open_ctree`: `mapping_set_gfp_mask(
    /// btree_inode->i_mapping, GFP_NOFS)`), so its pages are unmovable;
    /// ext4's bitmaps come through `sb_getblk`, which adds
    /// `__GFP_MOVABLE` (6.1 include/linux/buffer_head.h).
    fn metadata_gfp(&self, ino: u32) -> Gfp {
        match self.mm().inode(ino).kind {
            MappingKind::Metadata => Gfp::unmovable(),
            _ => Gfp::movable(false),
        }
    }

    /// ext4 at mount (`ext4_fill_super`, 2.6.19 – 6.x): the superblock's
    /// buffer (`sbi->s_sbh`) and the group descriptors' (`s_group_desc`,
    /// `ext4_group_desc_init`) are read with `sb_bread` and held until
    /// unmount, and jbd2 holds its journal superblock (`j_sb_buffer`,
    /// `journal_init_common`): block-device page-cache pages whose buffers
    /// stay busy, written with `submit_bh` (the page never dirty), which
    /// reclaim can never free. One group-descriptor block covers 64
    /// groups of 128 MiB (64-byte descriptors, mke2fs's default 64bit
    /// feature). The journal starts in the middle of the filesystem
    /// (mke2fs's `get_midpoint_journal_block`; the exact block is
    /// UNVERIFIED, and only its being a page of its own matters). Read in
    /// Debian's 6.1.192 fs/ext4/super.c, fs/jbd2/journal.c and
    /// fs/buffer.c (`drop_buffers`, `buffer_busy`).
    fn ext4_pin_metadata(&mut self, fs: usize) {
        const BLOCKS_PER_GROUP: u64 = 32768;
        const GROUPS_PER_DESC_BLOCK: u64 = 64;
        let f = self.fs().get(fs);
        let (bdev, blocks) = (f.blockdev_inode, f.capacity_blocks);
        let groups = blocks.div_ceil(BLOCKS_PER_GROUP);
        let desc_blocks = groups.div_ceil(GROUPS_PER_DESC_BLOCK) as u32;
        let journal_block = (groups / 2 * BLOCKS_PER_GROUP) as u32;
        let pinned = (0..=desc_blocks).chain([journal_block.max(desc_blocks + 1)]);
        for index in pinned {
            self.mm_mut()
                .add_page_at_mount(bdev, index, crate::mm::page::flags::PINNED);
        }
    }

    /// Create the btree inode of a btrfs instance, with the tree roots the
    /// mount reads and holds (6.1).
    fn btrfs_init_metadata(&mut self, fs: usize, meta_base_sector: u64) {
        let bdi = self.fs().filesystems[fs].bdi;
        let id = self.mm().nr_inodes() as u32;
        self.mm_mut().add_inode(crate::mm::inode::Inode::new(
            id,
            fs,
            bdi,
            MappingKind::Metadata,
            meta_base_sector,
        ));
        // The trees' root nodes the mount holds: pinned, so reclaim
        // activates them (`crate::fs::btrfs_mount_tree_pages`).
        let held = crate::fs::btrfs_mount_tree_pages(self);
        for index in 0..held {
            self.mm_mut()
                .add_page_at_mount(id, index, crate::mm::page::flags::PINNED);
        }
        let md = &mut self.fs_mut().filesystems[fs].metadata;
        md.meta_inode = Some(id);
        md.csum_root_index = held;
        md.csum_leaf_index = held + 1;
        md.next_meta_index = held + 2;
    }
}

impl<T: FsHost + ?Sized> MetadataWrites for T {}

impl Filesystems {
    /// An xfs file created in a directory of allocation group `ag`
    /// (`xfs_create`): a new inode next to the group's previous one, and
    /// the transaction's log bytes. Both reach the disk through xfsaild.
    pub fn xfs_file_created(&mut self, fs: usize, ag: usize) {
        let md = &mut self.filesystems[fs].metadata;
        md.unlogged_create_bytes += XFS_LOG_BYTES_PER_CREATE;
        let offset = md.ag_inode_cursor[ag];
        md.ag_inode_cursor[ag] += md.inode_size;
        let pending = &mut md.ag_inode_pending[ag];
        if pending.1 == 0 {
            *pending = (offset, 0);
        }
        pending.1 += md.inode_size;
    }
}

#[cfg(test)]
mod tests {
    use crate::fs::FsHost;
    use crate::mm::page::{flags, Holder};
    use crate::mm::MmHost;
    use crate::test_support::usb_stick_files;

    /// The indices of the pinned pages, all of mapping `ino` and on the
    /// inactive file list.
    fn pinned_pages_of(sys: &crate::system::System, ino: u32) -> Vec<u32> {
        sys.mm()
            .pages()
            .iter()
            .filter(|p| p.has(flags::PINNED))
            .map(|p| {
                assert_eq!(p.inode(), ino);
                assert!(matches!(p.holder, Holder::InactiveFile));
                p.index()
            })
            .collect()
    }

    /// ext4 on the 16 GiB stick (128 groups, two descriptor blocks) holds
    /// the superblock, both group-descriptor blocks and the journal
    /// superblock at mount: four pinned block-device pages on the
    /// inactive file list; xfs holds none.
    #[test]
    fn ext4_holds_its_superblocks_and_group_descriptors_from_mount() {
        for (fs, expect) in [("ext4", vec![0, 1, 2, 64 * 32768]), ("xfs", vec![])] {
            let (sys, _) = usb_stick_files("6.1", fs, &["f"]);
            let bdev = sys.fs().get(0).blockdev_inode;
            assert_eq!(pinned_pages_of(&sys, bdev), expect, "{fs}");
        }
    }

    /// btrfs's tree blocks are allocated GFP_NOFS from the btree inode's
    /// mapping: unmovable, so they take (and fragment) pageblocks of
    /// their own; ext4's bitmaps come through `sb_getblk`, movable.
    #[test]
    fn btrfs_tree_blocks_are_unmovable_and_ext4_bitmaps_movable() {
        use super::MetadataWrites;
        use crate::mm::Mobility;
        let (sys, _) = usb_stick_files("6.1", "btrfs", &["f"]);
        let meta = sys.fs().get(0).metadata.meta_inode.expect("a btree inode");
        assert_eq!(sys.metadata_gfp(meta).mobility, Mobility::Unmovable);
        let (sys, _) = usb_stick_files("6.1", "ext4", &["f"]);
        let bdev = sys.fs().get(0).blockdev_inode;
        assert_eq!(sys.metadata_gfp(bdev).mobility, Mobility::Movable);
    }

    /// A 6.1 btrfs mount holds its nine trees' root nodes (16 KiB, 36
    /// pages) on the file LRU, pinned; the checksum tree's pages follow
    /// them. The 3.x presets model none.
    #[test]
    fn a_btrfs_mount_holds_its_tree_roots() {
        for (kernel, held) in [("6.1", 36), ("3.3", 0)] {
            let (sys, _) = usb_stick_files(kernel, "btrfs", &["f"]);
            let meta = sys.fs().get(0).metadata.meta_inode.expect("a btree inode");
            let all: Vec<u32> = (0..held).collect();
            assert_eq!(pinned_pages_of(&sys, meta), all, "{kernel}");
            assert_eq!(sys.fs().get(0).metadata.csum_root_index, held, "{kernel}");
        }
    }
}
