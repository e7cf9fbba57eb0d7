//! The machine's page frames (`mem_map`) and per-frame columns.

use std::cell::Cell;
use std::mem::ManuallyDrop;

use super::page::{Page, Pfn, NIL};

/// A frame's links on the one list it is on (free list, per-CPU list, LRU
/// list: `struct page`'s `lru` list_head), as [`Frames::links`] reads
/// them.
///
/// A list's end pages have no link past its ends: the list's
/// [`ListHead`](super::page::ListHead) says which pages its ends are, so
/// a head page's `prev` and a tail page's `next` are left as they were
/// (whatever a page's last list left there), and a page on no list has
/// no links at all. That frees the links of a "none" value: each is 24
/// bits, any frame of the `MAX_FRAMES` = 2^24 a machine may have.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Links {
    pub prev: Pfn,
    pub next: Pfn,
}

/// Host bytes of a frame: its [`Page`] and its links.
pub const BYTES_PER_FRAME: usize = std::mem::size_of::<Page>() + LINK_BYTES;
const _: () = assert!(BYTES_PER_FRAME == 16);

/// Bytes of a frame's links in [`Frames`]' link array: two 24-bit pfns,
/// `prev` (bytes 0 to 2) then `next` (3 to 5), little-endian.
const LINK_BYTES: usize = 6;
/// A link's bits.
const LINK_MASK: u32 = (1 << 24) - 1;
/// The link array's bytes: a link is read as the `u32` at its first
/// byte, so the last frame's `next` reads one byte past its links.
const LINK_ARRAY_BYTES: usize = LINK_BYTES * MAX_FRAMES + 1;
/// Every frame's links (see [`Links`]).
type LinkArray = [u8; LINK_ARRAY_BYTES];

/// Every page frame of the machine, indexed by pfn (`mem_map`).
///
/// Reading goes through `Index` (and `Deref` to `[Page]` for `len`,
/// `iter`); writing a frame's state only through `IndexMut`, which logs the
/// pfn for the invariant checker: it re-verifies just the frames written
/// during an event instead of every frame. There is no `DerefMut`: the
/// list functions (`super::page`) are the only other writers, and they change
/// nothing but the [`Links`], which no invariant reads.
///
/// The log is an array of pfns sized once ([`Frames::start_logging`]);
/// only a checked run logs, behind one well-predicted branch, so a plain
/// run pays a load and a test per write. (An unconditional store into a
/// one-slot ring cost plain runs ~4 % more instructions on the 2 GiB dd
/// of the dd bench, callgrind: 964 M against 924 M.) A checked run
/// whose event writes more frames than the log holds gets a full walk for
/// that event ([`Frames::written`] says `None`). Nothing is allocated
/// after `start_logging`.
pub struct Frames {
    /// Room for `MAX_FRAMES` frames, of which the first `nr_frames` are
    /// the machine's. A fixed-size array, so that indexing it by a pfn
    /// masked to `MAX_FRAMES` needs no bounds check: one `and` instead of
    /// a length load, a compare and a branch, on every frame a page's
    /// life touches (the 10 GiB dd: 1.9 % fewer instructions, cachegrind,
    /// 5.412 G against 5.309 G). Allocated zeroed, so the OS maps only
    /// the pages of it a machine's frames are in; the rest is address
    /// space (168 MB of it, and 101 MB of links).
    frames: ManuallyDrop<Box<[Page; MAX_FRAMES]>>,
    /// Each frame's list links, [`LINK_BYTES`] a frame, in an array of
    /// their own beside the frames rather than in [`Page`]: a list walk
    /// that changes only links (a batch spliced between a zone's free
    /// list and a CPU's list, an LRU batch isolated) reads 6 bytes a
    /// frame, not 16. Allocated zeroed, as `frames` is.
    links: ManuallyDrop<Box<LinkArray>>,
    nr_frames: usize,
    /// Each block of frames' zone ([`fill_zone_map`]): zones are ranges
    /// of frames, so a frame does not keep its zone. Blocks are
    /// `1 << zone_block_shift` frames; the first `nr_zone_blocks` are
    /// the machine's. A fixed-size array read at an index masked to it,
    /// as `frames` is.
    zone_of_block: ManuallyDrop<Box<[u8; MAX_FRAMES]>>,
    zone_block_shift: u32,
    nr_zone_blocks: usize,
    /// Written pfns, the first `writes` of them (all, if `writes` is
    /// at most `log.len()`).
    log: Box<[Pfn]>,
    /// Writes since the log was last cleared.
    writes: usize,
    /// Whether writes are logged (a checked run).
    logging: bool,
}

/// Frames a machine may have (`scenario::schema::MAX_FRAMES`, which a
/// scenario is validated against): frame numbers fit in 24 bits, as the
/// frozen inodes' and swap entries' packed words assume, and [`Frames`]
/// masks with it, so it is a power of two.
pub const MAX_FRAMES: usize = 1 << 24;
const _: () = assert!(MAX_FRAMES.is_power_of_two());

/// A frame index within `Frames::frames` (see [`Frames`]).
#[inline(always)]
fn slot(pfn: usize) -> usize {
    pfn & (MAX_FRAMES - 1)
}

impl Frames {
    /// A machine whose zones have `zone_frames` frames each, in pfn
    /// order from pfn 0 (at most [`MAX_FRAMES`] in all), every frame
    /// free, of no mapping and on no list.
    pub fn new(zone_frames: &[u64]) -> Frames {
        let nr_frames: u64 = zone_frames.iter().sum();
        assert!(
            nr_frames <= MAX_FRAMES as u64,
            "more than {MAX_FRAMES} frames"
        );
        let nr_frames = nr_frames as usize;
        let mut arrays = FrameArrays::take();
        arrays.frames[..nr_frames].fill(ZERO_PAGE);
        let (shift, blocks) = fill_zone_map(&mut arrays.zone_of_block, zone_frames);
        arrays.into_frames(nr_frames, shift, blocks)
    }

    /// The zone frame `pfn` is in (`page_zone`): zones are ranges of
    /// frames, so a frame does not keep its zone.
    #[inline(always)]
    pub fn zone_of(&self, pfn: Pfn) -> usize {
        let block = (pfn >> self.zone_block_shift) as usize;
        usize::from(self.zone_of_block[slot(block)])
    }

    /// Frame `pfn`, which must be one of the machine's: checked in debug
    /// builds; in a release build a pfn past the machine's last frame
    /// reads a zeroed frame (or, past `MAX_FRAMES`, wraps) instead of
    /// panicking, and is never out of the array.
    #[inline(always)]
    fn at(&self, pfn: usize) -> &Page {
        &self.frames[self.slot_of(pfn)]
    }

    #[inline(always)]
    fn at_mut(&mut self, pfn: usize) -> &mut Page {
        let slot = self.slot_of(pfn);
        &mut self.frames[slot]
    }

    /// The slot of `pfn` in `frames` and `links` (see [`Frames::at`]).
    #[inline(always)]
    fn slot_of(&self, pfn: usize) -> usize {
        debug_assert!(pfn < self.nr_frames, "pfn {pfn} of {}", self.nr_frames);
        slot(pfn)
    }

    /// Log up to `slots` writes between two [`Frames::clear_log`]s, from
    /// now on.
    pub fn start_logging(&mut self, slots: usize) {
        self.log = vec![NIL; slots].into_boxed_slice();
        self.writes = 0;
        self.logging = true;
    }

    /// The frames written since the log was last cleared (a pfn may appear
    /// more than once), or `None` if more writes were made than the log
    /// holds (or it was never started).
    pub fn written(&self) -> Option<&[Pfn]> {
        self.log.get(..self.writes).filter(|_| self.logging)
    }

    pub fn clear_log(&mut self) {
        self.writes = 0;
    }

    /// Ask the host CPU to bring frame `pfn` into its cache (a hint: no
    /// effect on the simulation; a frame out of range is ignored). For a
    /// walk that knows the next frame it will read while it works on this
    /// one, such as writeback's walk of a file's dirty pages, whose
    /// frames were last touched long before.
    #[inline(always)]
    pub fn prefetch(&self, pfn: Pfn) {
        if let Some(page) = self.get(pfn as usize) {
            prefetch_line(page);
        }
    }

    /// A frame written without being logged, as a stray write past the
    /// page-state code would be: for the tests of what the checker's full
    /// walks find.
    #[cfg(test)]
    pub(crate) fn unlogged_mut(&mut self, pfn: usize) -> &mut Page {
        self.at_mut(pfn)
    }

    /// Frame `pfn`'s list links (see [`Links`] for which mean anything).
    #[inline(always)]
    pub fn links(&self, pfn: Pfn) -> Links {
        Links {
            prev: self.prev(pfn),
            next: self.next(pfn),
        }
    }

    /// Frame `pfn`'s `prev` link.
    #[inline(always)]
    pub fn prev(&self, pfn: Pfn) -> Pfn {
        self.link_at(self.link_offset(pfn))
    }

    /// Frame `pfn`'s `next` link.
    #[inline(always)]
    pub fn next(&self, pfn: Pfn) -> Pfn {
        self.link_at(self.link_offset(pfn) + 3)
    }

    /// Set frame `pfn`'s `prev` link, for the list functions: not
    /// logged, since no invariant reads links.
    #[inline(always)]
    pub(super) fn set_prev(&mut self, pfn: Pfn, prev: Pfn) {
        let offset = self.link_offset(pfn);
        self.set_link_at(offset, prev);
    }

    /// Set frame `pfn`'s `next` link (see [`Frames::set_prev`]).
    #[inline(always)]
    pub(super) fn set_next(&mut self, pfn: Pfn, next: Pfn) {
        let offset = self.link_offset(pfn) + 3;
        self.set_link_at(offset, next);
    }

    /// Where frame `pfn`'s links start in the link array.
    #[inline(always)]
    fn link_offset(&self, pfn: Pfn) -> usize {
        self.slot_of(pfn as usize) * LINK_BYTES
    }

    /// The link at `offset`: the `u32` there, less its top byte (the
    /// next link's, or the array's last byte).
    #[inline(always)]
    fn link_at(&self, offset: usize) -> Pfn {
        let word = &self.links[offset..offset + 4];
        u32::from_le_bytes(word.try_into().expect("four bytes")) & LINK_MASK
    }

    #[inline(always)]
    fn set_link_at(&mut self, offset: usize, pfn: Pfn) {
        debug_assert!(pfn <= LINK_MASK, "pfn {pfn} in a 24-bit link");
        self.links[offset..offset + 3].copy_from_slice(&pfn.to_le_bytes()[..3]);
    }
}

/// Ask the host CPU to bring the cache line holding `value` into its
/// cache: a hint, with no effect on the simulation, for a walk that knows
/// what it will read next (a frame, an inode) while it works on this.
#[inline(always)]
pub fn prefetch_line<T>(value: &T) {
    #[cfg(target_arch = "x86_64")]
    // SAFETY: a prefetch reads nothing the program sees and cannot fault;
    // SSE is part of the x86-64 baseline.
    unsafe {
        use std::arch::x86_64::{_mm_prefetch, _MM_HINT_T0};
        _mm_prefetch::<_MM_HINT_T0>((value as *const T).cast());
    }
    #[cfg(not(target_arch = "x86_64"))]
    let _ = value;
}

/// An all-zero frame: what [`zeroed_frames`] holds.
const ZERO_PAGE: Page = Page::new(0, super::page::Holder::Free);

/// `MAX_FRAMES` zeroed frames, straight from the allocator: the OS maps
/// each page of them when it is first written.
fn zeroed_frames() -> Box<[Page; MAX_FRAMES]> {
    let zeroed = Box::<[Page; MAX_FRAMES]>::new_zeroed();
    // SAFETY: every field of `Page` is an integer, or `Holder`, a
    // `repr(u8)` enum whose variant 0 is `Free`, so all-zero bytes are a
    // valid `Page` and a valid array of them.
    unsafe { zeroed.assume_init() }
}

/// `N` zeroed bytes (see [`zeroed_frames`]): the links, the zone map.
fn zeroed_bytes<const N: usize>() -> Box<[u8; N]> {
    let zeroed = Box::<[u8; N]>::new_zeroed();
    // SAFETY: all-zero bytes are valid bytes.
    unsafe { zeroed.assume_init() }
}

impl Clone for Frames {
    fn clone(&self) -> Self {
        let mut arrays = FrameArrays::take();
        arrays.frames[..self.nr_frames].copy_from_slice(self);
        let link_bytes = self.nr_frames * LINK_BYTES;
        arrays.links[..link_bytes].copy_from_slice(&self.links[..link_bytes]);
        let blocks = self.nr_zone_blocks;
        arrays.zone_of_block[..blocks].copy_from_slice(&self.zone_of_block[..blocks]);
        let mut copy = arrays.into_frames(self.nr_frames, self.zone_block_shift, blocks);
        copy.log = self.log.clone();
        copy.writes = self.writes;
        copy.logging = self.logging;
        copy
    }
}

impl Drop for Frames {
    /// The arrays go to the thread's spares ([`FrameArrays`]).
    fn drop(&mut self) {
        // SAFETY: the arrays are taken once, here, and never used again.
        let (frames, links, zone_of_block) = unsafe {
            (
                ManuallyDrop::take(&mut self.frames),
                ManuallyDrop::take(&mut self.links),
                ManuallyDrop::take(&mut self.zone_of_block),
            )
        };
        FrameArrays {
            frames,
            links,
            zone_of_block,
            used: self.nr_frames,
            used_blocks: self.nr_zone_blocks,
        }
        .keep();
    }
}

/// A [`Frames`]' arrays (frames, links, zone map), kept by a thread
/// between one machine and the next: every run would otherwise map its
/// arrays' pages afresh, one page
/// fault per 4 KiB the machine's frames cover (the 10 GiB dd's 3765 MiB
/// machine: some 4,700 of its 10,600 faults), and give them back at its
/// end. A criterion benchmark's iterations, `wbsim reproduce`'s runs
/// and a sweep's are many machines one after another on a few threads.
/// Reused arrays are zeroed past the new machine's frames, so a machine
/// starts as it would from fresh memory (frames past the machine's are
/// only read, never written: checked in debug builds). Kept, the zone
/// map (16 MiB of address space) is never freed and allocated again:
/// freeing it would raise glibc's mmap threshold above its size, and
/// the next one would come from the heap, cleared byte by byte.
struct FrameArrays {
    frames: Box<[Page; MAX_FRAMES]>,
    links: Box<LinkArray>,
    zone_of_block: Box<[u8; MAX_FRAMES]>,
    /// The frames at the start of the arrays that may be other than zero.
    used: usize,
    /// The zone map's blocks that may be other than zero.
    used_blocks: usize,
}

/// The largest machine whose arrays a thread keeps for the next one
/// (16 GiB at 4 KiB pages, 64 MiB of frames and links): a larger one's
/// arrays go back to the OS, so a process that has run one huge machine
/// does not hold its memory after it.
const MAX_KEPT_FRAMES: usize = 1 << 22;

thread_local! {
    /// The thread's spare arrays, if it has run a machine.
    static SPARE_ARRAYS: Cell<Option<FrameArrays>> = const { Cell::new(None) };
}

impl FrameArrays {
    /// The thread's spare arrays, or new zeroed ones.
    fn take() -> FrameArrays {
        SPARE_ARRAYS.take().unwrap_or_else(|| FrameArrays {
            frames: zeroed_frames(),
            links: zeroed_bytes(),
            zone_of_block: zeroed_bytes(),
            used: 0,
            used_blocks: 0,
        })
    }

    /// The [`Frames`] of a machine whose `nr_frames` frames and links,
    /// and `nr_zone_blocks` blocks of `1 << zone_block_shift` frames of
    /// zone map, are written at the start of the arrays (not logging):
    /// the rest, up to what a last machine used, zeroed.
    fn into_frames(
        mut self,
        nr_frames: usize,
        zone_block_shift: u32,
        nr_zone_blocks: usize,
    ) -> Frames {
        if self.used > nr_frames {
            self.frames[nr_frames..self.used].fill(ZERO_PAGE);
            self.links[nr_frames * LINK_BYTES..self.used * LINK_BYTES].fill(0);
        }
        if self.used_blocks > nr_zone_blocks {
            self.zone_of_block[nr_zone_blocks..self.used_blocks].fill(0);
        }
        Frames {
            frames: ManuallyDrop::new(self.frames),
            links: ManuallyDrop::new(self.links),
            nr_frames,
            zone_of_block: ManuallyDrop::new(self.zone_of_block),
            zone_block_shift,
            nr_zone_blocks,
            log: Box::new([NIL]),
            writes: 0,
            logging: false,
        }
    }

    /// Keep the arrays as the thread's spares, unless they are too large.
    fn keep(self) {
        if self.used <= MAX_KEPT_FRAMES {
            SPARE_ARRAYS.set(Some(self));
        }
    }
}

impl std::fmt::Debug for Frames {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Frames")
            .field("nr_frames", &self.nr_frames)
            .field("logging", &self.logging)
            .field("writes", &self.writes)
            .finish_non_exhaustive()
    }
}

impl std::ops::Deref for Frames {
    type Target = [Page];
    #[inline]
    fn deref(&self) -> &[Page] {
        &self.frames[..self.nr_frames]
    }
}

impl std::ops::Index<usize> for Frames {
    type Output = Page;
    #[inline(always)]
    fn index(&self, pfn: usize) -> &Page {
        self.at(pfn)
    }
}

impl std::ops::IndexMut<usize> for Frames {
    #[inline(always)]
    fn index_mut(&mut self, pfn: usize) -> &mut Page {
        if self.logging {
            if let Some(slot) = self.log.get_mut(self.writes) {
                *slot = pfn as Pfn;
            }
            self.writes = self.writes.wrapping_add(1);
        }
        self.at_mut(pfn)
    }
}

/// Write the zone of each block of frames of a machine whose zones have
/// `zone_frames` frames each, from pfn 0, into `zone_of_block`; returns
/// the blocks' shift and how many there are. A machine's zones are
/// consecutive ranges of frames, so every frame of a block of `1 <<
/// shift` frames, aligned as every zone's first frame is, has one zone
/// (a byte: a zone number below 256). At 4 KiB pages a zone is whole
/// MiB, so blocks are 256 frames or more, and a map at most 64 KiB.
fn fill_zone_map(zone_of_block: &mut [u8; MAX_FRAMES], zone_frames: &[u64]) -> (u32, usize) {
    assert!(zone_frames.len() <= 256, "{} zones", zone_frames.len());
    // The largest power of two every zone's first frame is a multiple of.
    let mut shift = MAX_FRAMES.trailing_zeros();
    let mut start = 0u64;
    for &frames in zone_frames {
        if start > 0 {
            shift = shift.min(start.trailing_zeros());
        }
        start += frames;
    }
    let nr_blocks = start.div_ceil(1 << shift) as usize;
    let mut first_block = 0;
    for (zone, &frames) in zone_frames.iter().enumerate() {
        // Every zone but the last ends on a block boundary; the last
        // takes the partial block its frames may end in.
        let end = if zone + 1 == zone_frames.len() {
            nr_blocks
        } else {
            first_block + (frames >> shift) as usize
        };
        zone_of_block[first_block..end].fill(zone as u8);
        first_block = end;
    }
    (shift, nr_blocks)
}

/// One `u32` per page frame, `NIL` (`u32::MAX`, also `NO_SLOT`) meaning
/// none. A value is stored plus one, so "none" is 0 and a new column is
/// zeroed memory, which the OS maps only where a frame is first given a
/// value: a large machine pays for the frames a run uses, not for all.
#[derive(Debug, Clone, Default)]
pub struct FrameWords {
    words: Vec<u32>,
}

impl FrameWords {
    /// `nr_frames` frames, each none.
    pub fn none(nr_frames: usize) -> FrameWords {
        FrameWords {
            words: vec![0; nr_frames],
        }
    }

    /// Frame `pfn`'s value, `NIL` if none.
    #[inline]
    pub fn get(&self, pfn: Pfn) -> u32 {
        self.words[pfn as usize].wrapping_sub(1)
    }

    /// Give frame `pfn` `value` (`NIL`: none).
    #[inline]
    pub fn set(&mut self, pfn: Pfn, value: u32) {
        self.words[pfn as usize] = value.wrapping_add(1);
    }

    /// How many frames the column has (0: not allocated).
    pub fn len(&self) -> usize {
        self.words.len()
    }

    pub fn is_empty(&self) -> bool {
        self.words.is_empty()
    }

    /// Every word is still zero, as allocated.
    #[cfg(test)]
    pub fn is_zeroed(&self) -> bool {
        self.words.iter().all(|&w| w == 0)
    }
}

#[cfg(test)]
mod tests;
