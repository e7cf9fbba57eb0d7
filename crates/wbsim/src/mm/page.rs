//! Page frames and intrusive page lists.
//!
//! All page frames live in one [`Frames`] array indexed by a `u32` page
//! frame number. Lists (free lists, LRU lists) are doubly linked through the
//! frames' [`Links`] (an array beside the frames), so add, remove and rotate
//! are O(1) and never allocate. A frame is on at most one list;
//! `Page::holder` says which.

/// Page frame number.
pub type Pfn = u32;
/// "No page" / end of list.
pub const NIL: u32 = u32::MAX;

/// Page flags (`include/linux/page-flags.h`), only those the model needs.
pub mod flags {
    pub const DIRTY: u16 = 1 << 0;
    pub const WRITEBACK: u16 = 1 << 1;
    pub const REFERENCED: u16 = 1 << 2;
    pub const ACTIVE: u16 = 1 << 3;
    /// PG_reclaim: rotate to the inactive tail when writeback ends.
    pub const RECLAIM: u16 = 1 << 4;
    /// PG_lru: on an LRU list (not in a pagevec, not isolated).
    pub const LRU: u16 = 1 << 5;
    pub const UPTODATE: u16 = 1 << 6;
    /// The page's blocks are allocated on disk (`buffer_mapped` on all its
    /// buffers): set when writeback allocated a delayed-allocation page.
    pub const MAPPED: u16 = 1 << 7;
    /// PG_swapbacked: an anonymous page (`PageAnon`); written to swap, not
    /// to a filesystem, and never counted in the file dirty figures.
    pub const ANON: u16 = 1 << 8;
    /// PG_swapcache: the page is in the swap cache (`swapper_space`) at
    /// the slot in `System::page_swap_slot`.
    pub const SWAPCACHE: u16 = 1 << 9;
    /// `page_mapped`: a process page table maps the page (one mapping at
    /// most in the model: no fork, no sharing between processes).
    pub const PTE_MAPPED: u16 = 1 << 10;
    /// The accessed ("young") bit of the PTE mapping a file page, which
    /// `page_referenced` tests and clears. An anonymous page's is in its
    /// region's page table (`crate::mm::swap::AnonRegion`).
    pub const PTE_YOUNG: u16 = 1 << 11;
    /// PG_locked held for a read in flight (swap-in): reclaim's
    /// `trylock_page` fails and the faulting task waits for it.
    pub const LOCKED: u16 = 1 << 12;
    /// A file page mapped writable by some PTE (a shared mapping written
    /// through); `page_mkclean` clears it when the page is cleaned.
    pub const PTE_WRITE: u16 = 1 << 13;
    /// PG_private: buffer heads attached (`create_empty_buffers`); freeing
    /// the page frees them (`crate::mm::buffer_head`).
    pub const PRIVATE: u16 = 1 << 14;
    /// Buffers the filesystem holds for as long as it is mounted (a
    /// buffer head with `b_count` raised: ext4's superblock and group
    /// descriptors, jbd2's journal superblock): `try_to_release_page`
    /// fails on them (`buffer_busy`), so reclaim activates the page
    /// instead of freeing it.
    pub const PINNED: u16 = 1 << 15;
}

/// Which list (or holder) a frame belongs to. Every frame is in exactly one
/// of these states; the conservation check counts them.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[repr(u8)]
pub enum Holder {
    /// On its zone's free list.
    Free = 0,
    /// `lru` index 0..4: inactive_anon, active_anon, inactive_file, active_file.
    InactiveAnon = 1,
    ActiveAnon = 2,
    InactiveFile = 3,
    ActiveFile = 4,
    /// In a per-CPU LRU-add pagevec, not yet on a list (`PageLRU` clear).
    Pagevec = 5,
    /// Isolated by reclaim (`isolate_lru_pages`), on the reclaimer's private list.
    Isolated = 6,
    /// Allocated, kernel-private and never on the LRU (FUSE temporary
    /// writeback pages, XFS buffer-cache pages).
    Kernel = 7,
    /// Off every LRU list but still in the page cache, held by a reference
    /// reclaim never dropped: Gorman's RFC patch 4 (Jul 2011) calls
    /// `deactivate_page` on a still-isolated dirty page, which does nothing
    /// to a page without PG_lru, and then skips the putback (`goto
    /// keep_dirty`). Such a page is written by the flushers like any other
    /// but never reclaimed.
    Orphaned = 8,
    /// Free, on a CPU's per-CPU page list (`per_cpu_pages`), not counted
    /// in the zone's free pages.
    PerCpu = 9,
    /// On a generation list of the multi-generational LRU (6.1+, MGLRU):
    /// list `LRU_GEN_BASE + (type * MAX_NR_GENS + gen) * MAX_ZONES + zone`,
    /// anon then file (see [`gen_list_of`]).
    Gen0 = 10,
    Gen1 = 11,
    Gen2 = 12,
    Gen3 = 13,
    Gen4 = 14,
    Gen5 = 15,
    Gen6 = 16,
    Gen7 = 17,
    Gen8 = 18,
    Gen9 = 19,
    Gen10 = 20,
    Gen11 = 21,
    Gen12 = 22,
    Gen13 = 23,
    Gen14 = 24,
    Gen15 = 25,
    Gen16 = 26,
    Gen17 = 27,
    Gen18 = 28,
    Gen19 = 29,
    Gen20 = 30,
    Gen21 = 31,
    Gen22 = 32,
    Gen23 = 33,
}

/// LRU list numbers as in `enum lru_list` (unevictable not modelled).
pub const LRU_INACTIVE_ANON: usize = 0;
pub const LRU_ACTIVE_ANON: usize = 1;
pub const LRU_INACTIVE_FILE: usize = 2;
pub const LRU_ACTIVE_FILE: usize = 3;
pub const NR_LRU_LISTS: usize = 4;
/// MGLRU's `MAX_NR_GENS`: generations per type.
pub const MAX_NR_GENS: usize = 4;
/// Zones a node may have (DMA, DMA32, Normal): MGLRU keeps a list per
/// zone in each generation (`lrugen->lists[gen][type][zone]`).
pub const MAX_ZONES: usize = 3;
/// The first generation list, after the four classic ones.
pub const LRU_GEN_BASE: usize = NR_LRU_LISTS;
/// Every list a lruvec holds: the classic four, then the generations'.
pub const NR_LISTS: usize = NR_LRU_LISTS + 2 * MAX_NR_GENS * MAX_ZONES;

/// The generation list of `kind` (0 anon, 1 file), generation slot `gen`
/// (the sequence number modulo `MAX_NR_GENS`) and `zone`.
#[inline]
pub fn gen_list_of(kind: usize, gen: usize, zone: usize) -> usize {
    LRU_GEN_BASE + (kind * MAX_NR_GENS + gen) * MAX_ZONES + zone
}

/// The classic list a list's pages are counted in (`NR_ZONE_*_ANON` /
/// `_FILE`): a generation list counts as its type's inactive list.
#[inline]
pub fn counted_lru(list: usize) -> usize {
    if list < NR_LRU_LISTS {
        list
    } else if list < LRU_GEN_BASE + MAX_NR_GENS * MAX_ZONES {
        LRU_INACTIVE_ANON
    } else {
        LRU_INACTIVE_FILE
    }
}

/// The holders of the generation lists, in list order.
const GEN_HOLDERS: [Holder; 2 * MAX_NR_GENS * MAX_ZONES] = [
    Holder::Gen0,
    Holder::Gen1,
    Holder::Gen2,
    Holder::Gen3,
    Holder::Gen4,
    Holder::Gen5,
    Holder::Gen6,
    Holder::Gen7,
    Holder::Gen8,
    Holder::Gen9,
    Holder::Gen10,
    Holder::Gen11,
    Holder::Gen12,
    Holder::Gen13,
    Holder::Gen14,
    Holder::Gen15,
    Holder::Gen16,
    Holder::Gen17,
    Holder::Gen18,
    Holder::Gen19,
    Holder::Gen20,
    Holder::Gen21,
    Holder::Gen22,
    Holder::Gen23,
];

/// Pages per MiB at 4 KiB pages (x86-64).
pub const PAGES_PER_MIB: u64 = 256;

/// Pages of each LRU list a reclaimer's `shrink_zone` still has to scan
/// (kept across a sleep inside it, to go on from there).
pub type ScanLeft = [u64; NR_LRU_LISTS];

impl Holder {
    pub fn from_lru(lru: usize) -> Holder {
        match lru {
            LRU_INACTIVE_ANON => Holder::InactiveAnon,
            LRU_ACTIVE_ANON => Holder::ActiveAnon,
            LRU_INACTIVE_FILE => Holder::InactiveFile,
            LRU_ACTIVE_FILE => Holder::ActiveFile,
            gen => GEN_HOLDERS[gen - LRU_GEN_BASE],
        }
    }
    /// The list the frame is on (a classic list, or a generation list).
    pub fn lru(self) -> Option<usize> {
        match self {
            Holder::InactiveAnon => Some(LRU_INACTIVE_ANON),
            Holder::ActiveAnon => Some(LRU_ACTIVE_ANON),
            Holder::InactiveFile => Some(LRU_INACTIVE_FILE),
            Holder::ActiveFile => Some(LRU_ACTIVE_FILE),
            h if (h as u8) >= Holder::Gen0 as u8 => {
                Some(LRU_GEN_BASE + (h as u8 - Holder::Gen0 as u8) as usize)
            }
            _ => None,
        }
    }
}

pub use super::frames::{FrameWords, Frames, Links, MAX_FRAMES};

/// One page frame (`struct page`), 10 bytes: with its 6 bytes of list
/// [`Links`] beside it, 16 bytes of host memory a frame. Its zone is
/// not kept in it but found from its frame number ([`Frames::zone_of`]),
/// as zones are ranges of frames.
#[derive(Clone, Copy)]
#[repr(C)]
pub struct Page {
    pub flags: u16,
    pub holder: Holder,
    /// The owning inode's number plus one (0: none) in the low 28 bits,
    /// the page index in the 28 above them, little-endian: read as the
    /// `u32` at byte 0 and the one at byte 3.
    mapping: [u8; 7],
}

/// Bits of a frame's inode number and of its page index.
const MAPPING_BITS: u32 = 28;
const MAPPING_MASK: u32 = (1 << MAPPING_BITS) - 1;
/// Inode numbers a frame can name: 0 to `MAX_INODES - 1` (the scenario
/// limits the files a run creates to fit).
pub const MAX_INODES: u32 = MAPPING_MASK;
/// Page indices a frame can hold: 0 to `MAX_PAGE_INDEX`, a file (or a
/// swap area) of 2^28 pages, 1 TiB at 4 KiB.
pub const MAX_PAGE_INDEX: u32 = MAPPING_MASK;

impl Page {
    /// A frame of no mapping.
    pub const fn new(flags: u16, holder: Holder) -> Page {
        Page {
            flags,
            holder,
            mapping: [0; 7],
        }
    }

    #[inline]
    pub fn has(&self, f: u16) -> bool {
        self.flags & f != 0
    }

    /// Owning inode (mapping), `NIL` if none.
    #[inline(always)]
    pub fn inode(&self) -> u32 {
        (self.low_word() & MAPPING_MASK).wrapping_sub(1)
    }

    /// Page index within the mapping (the buddy allocator's order and
    /// migratetype on a free block's head page).
    #[inline(always)]
    pub fn index(&self) -> u32 {
        self.high_word() >> (32 - MAPPING_BITS)
    }

    /// Set the owning inode (`NIL`: none).
    #[inline(always)]
    pub fn set_inode(&mut self, ino: u32) {
        debug_assert!(ino < MAX_INODES || ino == NIL, "inode {ino}");
        let low = self.low_word() & !MAPPING_MASK | (ino.wrapping_add(1) & MAPPING_MASK);
        self.mapping[..4].copy_from_slice(&low.to_le_bytes());
    }

    #[inline(always)]
    pub fn set_index(&mut self, index: u32) {
        debug_assert!(index <= MAX_PAGE_INDEX, "page index {index}");
        let high = self.high_word() & !(MAPPING_MASK << 4) | index << (32 - MAPPING_BITS);
        self.mapping[3..].copy_from_slice(&high.to_le_bytes());
    }

    /// Set the owning inode and the page index together.
    #[inline(always)]
    pub fn set_mapping(&mut self, ino: u32, index: u32) {
        debug_assert!(ino < MAX_INODES || ino == NIL, "inode {ino}");
        debug_assert!(index <= MAX_PAGE_INDEX, "page index {index}");
        let word = u64::from(ino.wrapping_add(1) & MAPPING_MASK) | u64::from(index) << MAPPING_BITS;
        self.mapping.copy_from_slice(&word.to_le_bytes()[..7]);
    }

    #[inline(always)]
    fn low_word(&self) -> u32 {
        u32::from_le_bytes(self.mapping[..4].try_into().expect("four bytes"))
    }

    #[inline(always)]
    fn high_word(&self) -> u32 {
        u32::from_le_bytes(self.mapping[3..].try_into().expect("four bytes"))
    }
}

impl std::fmt::Debug for Page {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Page")
            .field("flags", &self.flags)
            .field("holder", &self.holder)
            .field("inode", &self.inode())
            .field("index", &self.index())
            .finish()
    }
}

/// Head of an intrusive list: pages are added at the head, reclaim takes
/// from the tail, as the kernel's LRU lists do.
#[derive(Debug, Clone, Copy)]
pub struct ListHead {
    pub head: u32,
    pub tail: u32,
    pub len: u64,
}

impl Default for ListHead {
    fn default() -> Self {
        ListHead {
            head: NIL,
            tail: NIL,
            len: 0,
        }
    }
}

/// Link `pfn` at the head of `list`. Its `prev` is left as it was: a
/// head page has none (see [`Links`]).
#[inline]
pub fn list_add_head(frames: &mut Frames, list: &mut ListHead, pfn: Pfn) {
    list_add(frames, list, pfn, End::Head)
}

/// Link `pfn` at the tail of `list` (its `next` left as it was).
#[inline]
pub fn list_add_tail(frames: &mut Frames, list: &mut ListHead, pfn: Pfn) {
    list_add(frames, list, pfn, End::Tail)
}

/// Link `pfn` at end `end` of `list`.
#[inline(always)]
fn list_add(frames: &mut Frames, list: &mut ListHead, pfn: Pfn, end: End) {
    // Links only: not logged for the checker (see `Frames`).
    let old = *end.of(list).0;
    if old != NIL {
        end.set_inward(frames, pfn, old);
        end.set_outward(frames, old, pfn);
    } else {
        *end.of(list).1 = pfn;
    }
    *end.of(list).0 = pfn;
    list.len += 1;
}

/// Unlink `pfn` from `list` (it must be on it).
#[inline]
pub fn list_del(frames: &mut Frames, list: &mut ListHead, pfn: Pfn) {
    // Links only: not logged for the checker (see `Frames`). Only the
    // links that point inside the list mean anything (see `Links`).
    match (pfn == list.head, pfn == list.tail) {
        (true, true) => (list.head, list.tail) = (NIL, NIL),
        (true, false) => list.head = frames.next(pfn),
        (false, true) => list.tail = frames.prev(pfn),
        (false, false) => {
            let Links { prev, next } = frames.links(pfn);
            frames.set_next(prev, next);
            frames.set_prev(next, prev);
        }
    }
    list.len -= 1;
}

/// The end of a list a run is taken from ([`list_move_run`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum End {
    Head,
    Tail,
}

impl End {
    /// The list's pfn at this end, and at the other.
    #[inline(always)]
    fn of(self, list: &mut ListHead) -> (&mut u32, &mut u32) {
        match self {
            End::Head => (&mut list.head, &mut list.tail),
            End::Tail => (&mut list.tail, &mut list.head),
        }
    }

    /// A page's link away from this end (into the list).
    #[inline(always)]
    fn inward(self, frames: &Frames, pfn: Pfn) -> Pfn {
        match self {
            End::Head => frames.next(pfn),
            End::Tail => frames.prev(pfn),
        }
    }

    #[inline(always)]
    fn set_inward(self, frames: &mut Frames, pfn: Pfn, to: Pfn) {
        match self {
            End::Head => frames.set_next(pfn, to),
            End::Tail => frames.set_prev(pfn, to),
        }
    }

    /// Set a page's link towards this end.
    #[inline(always)]
    fn set_outward(self, frames: &mut Frames, pfn: Pfn, to: Pfn) {
        match self {
            End::Head => frames.set_prev(pfn, to),
            End::Tail => frames.set_next(pfn, to),
        }
    }
}

/// Move the `n` pages at end `end` of `from` (all of them if it has
/// fewer) to the other end of `to`, in their order, each given `holder`;
/// returns how many moved. The lists end as `n` rounds of `list_del` at
/// that end of `from` and `list_add` at the other end of `to` leave them
/// (taking from one end and pushing at the other keeps the run's order),
/// but each page is visited once, to give it its holder, and only the
/// run's two ends are relinked. On kernels without mobility grouping a
/// per-CPU list's refill from the zone's free list (`rmqueue_bulk`:
/// `End::Head`, to the CPU list's tail) and its give-back
/// (`free_pcppages_bulk`: `End::Tail`, to the free list's head) move
/// their batches this way.
#[inline(always)]
pub fn list_move_run(
    frames: &mut Frames,
    from: &mut ListHead,
    to: &mut ListHead,
    n: u64,
    holder: Holder,
    end: End,
) -> u64 {
    let n = n.min(from.len);
    if n == 0 {
        return 0;
    }
    // The run, from its page at `end` (outer) to its innermost.
    let outer = *end.of(from).0;
    let mut inner = outer;
    frames[inner as usize].holder = holder;
    for _ in 1..n {
        inner = end.inward(frames, inner);
        frames[inner as usize].holder = holder;
    }
    if n < from.len {
        *end.of(from).0 = end.inward(frames, inner);
    } else {
        (from.head, from.tail) = (NIL, NIL);
    }
    from.len -= n;
    // Onto `to`'s other end: the run's outer page next to that end's page.
    let far = *end.of(to).1;
    if far != NIL {
        end.set_outward(frames, outer, far);
        end.set_inward(frames, far, outer);
    } else {
        *end.of(to).0 = outer;
    }
    *end.of(to).1 = inner;
    to.len += n;
    n
}

/// Take the last `n` pages of `list` (all of them if it has fewer) off
/// it, from the tail towards the head, calling `visit` with each page's
/// frame number and its frame to change (a logged write); returns how
/// many were taken. The list ends as `n` rounds of `list_del` of the
/// tail leave it, and no link is written: `isolate_lru_pages` taking a
/// batch from an LRU list's tail.
pub fn list_take_tail_run(
    frames: &mut Frames,
    list: &mut ListHead,
    n: u64,
    mut visit: impl FnMut(Pfn, &mut Page),
) -> u64 {
    let n = n.min(list.len);
    let mut pfn = list.tail;
    for _ in 0..n {
        // The head page's `prev` means nothing: read, and then unused
        // when the whole list is taken.
        let prev = frames.prev(pfn);
        visit(pfn, &mut frames[pfn as usize]);
        pfn = prev;
    }
    list.len -= n;
    if list.len == 0 {
        (list.head, list.tail) = (NIL, NIL);
    } else {
        list.tail = pfn;
    }
    n
}

/// Tests: `n` free frames of zone 0, on no list.
#[cfg(test)]
pub(crate) fn test_frames(n: usize) -> Frames {
    Frames::new(&[n as u64])
}

#[cfg(test)]
mod tests;
