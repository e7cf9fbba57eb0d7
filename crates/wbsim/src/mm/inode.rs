//! Inodes as the page cache sees them: `struct inode` with its mapping
//! (`struct address_space`), and the few per-inode fields writeback and
//! the filesystems keep.
//!
//! The radix tree and its dirty tags are a [`PageIndex`]: inline for
//! small files, a dense vector and a bitmap on the heap for larger ones.

use crate::mm::page::NIL;

/// A slot holding a shadow entry (the kernel's xarray value entries)
/// rather than a page frame: frames are below 2^24 (a scenario's
/// `MAX_FRAMES`, whatever its unit), so the top bit tells them apart;
/// `NIL` is neither.
const SHADOW_BIT: u32 = 1 << 31;
/// Shadow payloads are below this (so that no shadow is `NIL`).
pub const SHADOW_PAYLOAD_LIMIT: u32 = SHADOW_BIT - 1;

#[inline]
fn is_shadow(entry: u32) -> bool {
    entry != NIL && entry & SHADOW_BIT != 0
}
use crate::mm::page_index::PageIndex;

/// Which dirty-inode list of its backing device an inode is on
/// (`b_dirty`, `b_io`, `b_more_io` of `struct backing_dev_info`, 3.0).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum InodeList {
    None,
    Dirty,
    Io,
    MoreIo,
}

/// What kind of mapping the inode is; it selects the `->writepage` model.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum MappingKind {
    /// A regular file of a filesystem.
    Regular,
    /// The page cache of a block device (`def_blk_aops`).
    BlockDevice,
    /// A filesystem's metadata inode (btrfs btree inode).
    Metadata,
    /// A process's anonymous memory: index = virtual page number, pages =
    /// present page table entries.
    Anon,
    /// The swap cache (`swapper_space`): index = swap slot.
    Swap,
}

#[derive(Debug, Clone)]
pub struct Inode {
    pub id: u32,
    /// Index into `System::filesystems`; block-device inodes use the
    /// filesystem that sits on them for naming only.
    /// (Read through [`Inode::fs`]; `u16`, as `bdi`, because an inode is
    /// kept for every file a run holds, so its size is host memory per
    /// file.)
    fs: u16,
    /// Backing device info this mapping writes back through
    /// ([`Inode::bdi`]).
    bdi: u16,
    pub kind: MappingKind,
    /// Page index -> page frame, `NIL` if not cached, with the dirty
    /// tags. Inline up to four pages: runs create millions of one-page
    /// files, which then cost no heap allocation.
    pages: PageIndex,
    pub nr_cached: u32,
    pub nr_dirty: u32,
    /// `mapping->writeback_index` for cyclic writeback.
    pub writeback_index: u32,
    /// `inode->dirtied_when` (ns).
    pub dirtied_when: u64,
    pub list: InodeList,
    /// First sector of the file's data on its device (contiguous extent).
    pub base_sector: u64,
    /// File size in pages (highest written index + 1).
    pub size_pages: u32,
    /// I_SYNC: being written back right now.
    pub in_writeback: bool,
    /// Pages under writeback (what `filemap_fdatawait` waits for).
    pub nr_writeback: u32,
    /// Pages below this index have blocks on disk (were written once);
    /// a page-cache miss above it is a hole, read as zeroes without IO.
    pub on_disk_pages: u32,
    /// I_DIRTY_RECLAIM (Gorman RFC patch 5): reclaim met a dirty page of
    /// this inode; `queue_io` takes it regardless of age.
    pub dirty_reclaim: bool,
    /// Data blocks reserved for the file (`fs::space`): pages below
    /// `blocks_end` have one; `blocks` counts them.
    pub blocks: u32,
    pub blocks_end: u32,
    /// No task holds the file open (`i_count` 0: closed, its dentry or
    /// inode on the slab LRUs).
    pub unused: bool,
}

/// A filesystem's number as an inode keeps it (scenario validation allows
/// far fewer filesystems than fit).
fn fs_number(fs: usize) -> u16 {
    u16::try_from(fs).expect("at most 65,536 filesystems")
}

impl Inode {
    pub fn new(id: u32, fs: usize, bdi: usize, kind: MappingKind, base_sector: u64) -> Inode {
        Inode {
            id,
            fs: fs_number(fs),
            bdi: u16::try_from(bdi).expect("at most 65,536 backing devices"),
            kind,
            pages: PageIndex::new(),
            nr_cached: 0,
            nr_dirty: 0,
            writeback_index: 0,
            dirtied_when: 0,
            list: InodeList::None,
            nr_writeback: 0,
            on_disk_pages: 0,
            base_sector,
            dirty_reclaim: false,
            blocks: 0,
            blocks_end: 0,
            size_pages: 0,
            in_writeback: false,
            unused: false,
        }
    }

    /// Index of the inode's filesystem in `System::filesystems`.
    #[inline]
    pub fn fs(&self) -> usize {
        usize::from(self.fs)
    }

    /// The backing device this mapping writes back through.
    #[inline]
    pub fn bdi(&self) -> usize {
        usize::from(self.bdi)
    }

    /// A block device's inode names the filesystem that sits on it
    /// (set when the filesystem is mounted).
    pub fn set_fs(&mut self, fs: usize) {
        self.fs = fs_number(fs);
    }

    #[inline]
    /// One past the highest page index the mapping has room for.
    pub fn cached_extent(&self) -> u32 {
        self.pages.len() as u32
    }

    /// The page frame at `index`, `NIL` if none (a shadow entry is none).
    #[inline]
    pub fn page(&self, index: u32) -> u32 {
        match self.pages.get(index as usize) {
            Some(e) if !is_shadow(e) => e,
            _ => NIL,
        }
    }

    /// The shadow entry reclaim left at `index` (its payload), if any.
    pub fn shadow(&self, index: u32) -> Option<u32> {
        let e = self.pages.get(index as usize)?;
        is_shadow(e).then_some(e & !SHADOW_BIT)
    }

    /// Remove a page, leaving a shadow entry of `payload` (less than
    /// [`SHADOW_PAYLOAD_LIMIT`]) in its slot (`__filemap_remove_folio`
    /// with a shadow).
    pub fn remove_leaving_shadow(&mut self, index: u32, payload: u32) {
        self.remove(index);
        debug_assert!(payload < SHADOW_PAYLOAD_LIMIT);
        self.pages.set(index as usize, SHADOW_BIT | payload);
    }

    /// Insert a page into the mapping (`add_to_page_cache`), over a shadow
    /// entry if there is one.
    #[inline(always)]
    pub fn insert(&mut self, index: u32, pfn: u32) {
        let i = index as usize;
        self.pages.grow_for(i);
        debug_assert!(self.pages.get(i).is_some_and(|e| e == NIL || is_shadow(e)));
        self.pages.set(i, pfn);
        self.nr_cached += 1;
        if index >= self.size_pages {
            self.size_pages = index + 1;
        }
    }

    /// Remove a page from the mapping (`__remove_mapping`).
    pub fn remove(&mut self, index: u32) {
        let i = index as usize;
        debug_assert!(self.pages.get(i).is_some_and(|e| e != NIL && !is_shadow(e)));
        self.pages.set(i, NIL);
        self.nr_cached -= 1;
    }

    /// Tag an index dirty in the mapping. Returns false if it already was.
    pub fn set_dirty_tag(&mut self, index: u32) -> bool {
        let was = self.pages.tag(index, true);
        if !was {
            self.nr_dirty += 1;
        }
        !was
    }

    pub fn clear_dirty_tag(&mut self, index: u32) {
        if self.pages.tag(index, false) {
            self.nr_dirty -= 1;
        }
    }

    pub fn is_dirty_tagged(&self, index: u32) -> bool {
        self.pages.is_tagged(index)
    }

    /// First dirty index in `[from, end)`, like a radix-tree tag lookup.
    #[inline(always)]
    pub fn next_dirty(&self, from: u32, end: u32) -> Option<u32> {
        self.pages.next_tagged(from, end)
    }

    /// The inode half of `__mark_inode_dirty` at `now_ns`: a clean inode
    /// that is not being written and not metadata goes on its device's
    /// dirty list (which the caller then does: true) with `dirtied_when`
    /// set; any other is left as it is (false).
    #[inline(always)]
    pub fn mark_dirty_at(&mut self, now_ns: u64) -> bool {
        if self.list != InodeList::None || self.in_writeback || self.kind == MappingKind::Metadata {
            return false;
        }
        self.list = InodeList::Dirty;
        self.dirtied_when = now_ns;
        true
    }

    /// [`Inode::next_dirty`] and the page frame there (`NIL` if none), in
    /// one lookup of the inode (`pagevec_lookup_tag`: the tag walk returns
    /// the pages).
    #[inline(always)]
    pub fn next_dirty_page(&self, from: u32, end: u32) -> Option<(u32, u32)> {
        let idx = self.pages.next_tagged(from, end)?;
        Some((idx, self.page(idx)))
    }
}

/// What a *frozen* inode keeps (see [`crate::mm::inode_table`]) besides
/// the frame of its one page: everything of a closed, clean, one-page file
/// that reclaim, the icache shrinker or a later thaw reads. Files of one
/// run share a handful of these, so the table keeps each once.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FrozenForm {
    fs: u16,
    bdi: u16,
    kind: MappingKind,
    /// Which index of the mapping the page is at (below the inline size).
    page_index: u8,
    dirty_reclaim: bool,
    size_pages: u32,
    on_disk_pages: u32,
    blocks: u32,
    blocks_end: u32,
    writeback_index: u32,
}

impl FrozenForm {
    /// The filesystem whose blocks the file holds.
    pub fn fs(&self) -> usize {
        usize::from(self.fs)
    }

    pub fn blocks(&self) -> u32 {
        self.blocks
    }

    pub fn page_index(&self) -> u32 {
        u32::from(self.page_index)
    }
}

/// `base_sector` of a thawed inode: a frozen one forgets where its data
/// sits, which only IO to the file reads, and a closed file's clean page
/// is never written or read again (no workload reopens a closed file).
pub const FORGOTTEN_SECTOR: u64 = u64::MAX;

impl Inode {
    /// Nothing of the mapping is dirty, under writeback or being written
    /// back, and it is on no writeback list: what both retiring and
    /// freezing an inode ask ([`crate::mm::inode_table`]).
    pub fn is_idle(&self) -> bool {
        self.nr_dirty == 0
            && self.nr_writeback == 0
            && !self.in_writeback
            && self.list == InodeList::None
    }

    /// Whether the page index is on the heap (a mapping that has held
    /// more than a few pages): what retiring the inode gives back.
    #[inline]
    pub fn page_index_on_heap(&self) -> bool {
        self.pages.spilled()
    }

    /// The frozen form of a closed regular file that caches exactly one
    /// page, clean, and has nothing dirty, under writeback or listed:
    /// the form and the page's frame. `None` if the inode is not so.
    pub fn frozen_form(&self) -> Option<(FrozenForm, u32)> {
        let closed_one_page =
            self.unused && self.kind == MappingKind::Regular && self.nr_cached == 1;
        if !closed_one_page || !self.is_idle() {
            return None;
        }
        let (page_index, pfn) = self.pages.sole_untagged_entry()?;
        if is_shadow(pfn) {
            return None;
        }
        let form = FrozenForm {
            fs: self.fs,
            bdi: self.bdi,
            kind: self.kind,
            page_index: page_index as u8,
            dirty_reclaim: self.dirty_reclaim,
            size_pages: self.size_pages,
            on_disk_pages: self.on_disk_pages,
            blocks: self.blocks,
            blocks_end: self.blocks_end,
            writeback_index: self.writeback_index,
        };
        Some((form, pfn))
    }

    /// Inode `id` back from its frozen form and its page's frame: the
    /// inode it was, but for `base_sector` ([`FORGOTTEN_SECTOR`]) and
    /// `dirtied_when`, which nothing reads of a clean, unlisted inode
    /// (`__mark_inode_dirty` sets it when the inode is next dirtied).
    pub fn thawed(id: u32, form: &FrozenForm, pfn: u32) -> Inode {
        let mut inode = Inode::new(
            id,
            form.fs(),
            usize::from(form.bdi),
            form.kind,
            FORGOTTEN_SECTOR,
        );
        inode.insert(form.page_index(), pfn);
        inode.size_pages = form.size_pages;
        inode.on_disk_pages = form.on_disk_pages;
        inode.blocks = form.blocks;
        inode.blocks_end = form.blocks_end;
        inode.writeback_index = form.writeback_index;
        inode.dirty_reclaim = form.dirty_reclaim;
        inode.unused = true;
        inode
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::mm::page_index::INLINE_PAGES;

    #[test]
    fn dirty_lookup_skips_clean_ranges() {
        let mut ino = Inode::new(0, 0, 0, MappingKind::Regular, 0);
        for i in [3u32, 64, 65, 700] {
            ino.insert(i, i + 10);
            assert!(ino.set_dirty_tag(i));
        }
        assert!(!ino.set_dirty_tag(3));
        assert_eq!(ino.nr_dirty, 4);
        assert_eq!(ino.next_dirty(0, 1000), Some(3));
        assert_eq!(ino.next_dirty(4, 1000), Some(64));
        assert_eq!(ino.next_dirty(66, 1000), Some(700));
        assert_eq!(ino.next_dirty(66, 700), None);
        ino.clear_dirty_tag(64);
        assert_eq!(ino.next_dirty(4, 1000), Some(65));
        assert_eq!(ino.next_dirty_page(4, 1000), Some((65, 75)));
        assert_eq!(ino.next_dirty_page(701, 1000), None);
        assert_eq!(ino.page(700), 710);
        assert_eq!(ino.page(5000), NIL);
        assert_eq!(ino.size_pages, 701);
    }

    #[test]
    fn small_files_stay_inline() {
        let mut ino = Inode::new(0, 0, 0, MappingKind::Regular, 0);
        for i in 0..INLINE_PAGES as u32 {
            ino.insert(i, 100 + i);
            assert!(ino.set_dirty_tag(i));
        }
        assert!(!ino.pages.spilled());
        assert_eq!(ino.next_dirty(1, 4), Some(1));
        ino.insert(4, 104);
        assert!(ino.pages.spilled());
        assert_eq!((ino.page(3), ino.page(4), ino.page(5)), (103, 104, NIL));
        assert_eq!(ino.nr_cached, 5);
    }

    /// A run keeps an inode for every file it holds (4 M in the
    /// writeback-plug fs_mark), so its size is host memory per file:
    /// 152 bytes before the counters went to `u32`, `fs` and `bdi` to
    /// `u16`, the page index and its tags became one 24-byte
    /// [`PageIndex`] instead of two `SmallVec`s, and the readahead state
    /// moved to the reader (`Memory::open_for_read`).
    #[test]
    fn an_inode_takes_at_most_88_bytes() {
        assert!(std::mem::size_of::<Inode>() <= 88);
        assert_eq!(Inode::new(7, 3, 2, MappingKind::Regular, 0).fs(), 3, "fs");
        assert_eq!(Inode::new(7, 3, 2, MappingKind::Regular, 0).bdi(), 2);
    }
}
