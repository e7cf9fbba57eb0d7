//! Every mapping by inode number, holding in host memory only the inodes
//! whose state can still be read.
//!
//! A run of fs_mark creates ten million files that are written, closed,
//! reclaimed and never opened again; keeping each one's [`Inode`] (then 152
//! bytes) made the writeback-plug run hold 1.5 GB. An inode is *retired*
//! when nothing will read its state again:
//! - the icache shrinker evicted it (`prune_icache` → `evict`, 3.0;
//!   `inode_lru_isolate` → `dispose_list`, 3.1+): its mapping had no pages
//!   left, and the kernel frees it;
//! - or it is closed (`i_count` 0) and reclaim took its last page. The
//!   kernel still caches it, on the dentry or inode LRU, where the slab
//!   model finds its number; but what it would read there is the empty
//!   mapping every retired inode reads as. Only a reopen would read its
//!   size, blocks and shadow entries, and no workload reopens a closed
//!   file.
//!
//! A retired inode costs one word: its number stays taken (numbers are
//! never reused, so every id a report or trace names means one file), its
//! [`Inode`] slot goes to the next file created, and the data blocks it
//! held stay counted for its filesystem.
//!
//! Reading a retired inode gives an empty mapping (no pages, nothing
//! dirty or under writeback), which is what the code that reads it here
//! (the slab LRUs, a jbd2 commit or a sync that listed it earlier) would
//! find; changing one is a bug and panics.
//!
//! Most of those ten million files are held for a while with one clean
//! page cached, until reclaim takes it. Such an inode (closed, a regular
//! file, one page, nothing dirty, under writeback or listed) is *frozen*:
//! its number's word holds its page's frame and one of a few shared
//! [`FrozenForm`]s, and its [`Inode`] slot goes to the next file. So a
//! held one-page file costs one word, as a retired one does. What reads a
//! frozen inode thaws it first ([`InodeTable::thaw`]: reclaim of its page,
//! the icache shrinker, a journal commit); reading one unthawed panics
//! (its word is no slot), and [`InodeTable::get`] and `iter` skip it
//! as they skip retired ones. Inodes are frozen in sweeps over those
//! noted as they may have become freezable: closed, or closed and just
//! written (its last page's writeback ended), or thawed. A sweep comes
//! with a close once [`SWEEP_BATCH`] are noted, so a sweep costs O(1) per
//! note; one not freezable yet is noted again when it may be.

use std::ops::{Index, IndexMut};

use super::inode::{FrozenForm, Inode, MappingKind};
use crate::mm::page::NIL;

/// `slot_of` entry of a retired inode: the slot of `live` that holds the
/// empty mapping it reads as (so that reading an inode takes no branch).
const RETIRED: u32 = 0;

/// `slot_of` entries at or above this are frozen inodes: the form's
/// number in bits 24–30, the page's frame in bits 0–23 (frames are below
/// 2^24, `MAX_FRAMES`).
const FROZEN: u32 = 1 << 31;
const FORM_SHIFT: u32 = 24;
const FRAME_MASK: u32 = (1 << FORM_SHIFT) - 1;
/// Distinct frozen forms a run may have; an inode whose form would be
/// one more stays as it is.
const MAX_FORMS: usize = 1 << (31 - FORM_SHIFT);
/// Noted inodes a sweep takes at once.
pub const SWEEP_BATCH: usize = 4096;

#[derive(Debug, Clone)]
pub struct InodeTable {
    /// Inode number → its slot in `live`, or `RETIRED`.
    slot_of: Vec<u32>,
    /// Slot `RETIRED` holds the empty mapping; the others, inodes. A free
    /// slot (in `free_slots`, no number maps to it) may still hold the
    /// Inode that left it, with no heap: the next file's overwrites it.
    ///
    /// It only grows (slots are reused, never removed), so every slot
    /// `slot_of` holds below `FROZEN` is in it: [`InodeTable`]'s `Index`
    /// reads it without a bounds check, on that invariant, which nothing
    /// outside this module can break.
    live: Vec<Inode>,
    /// Slots of `live` freed by retirements, reused by the next inodes.
    free_slots: Vec<u32>,
    /// Data blocks the retired and frozen files of each filesystem hold
    /// on disk.
    retired_blocks: Vec<u64>,
    /// The frozen inodes' forms, each once.
    forms: Vec<FrozenForm>,
    /// Inodes to try to freeze at the next sweep.
    noted: Vec<u32>,
}

/// What a retired inode reads as, and what its slot holds until reused.
fn empty_mapping() -> Inode {
    Inode::new(NIL, 0, 0, MappingKind::Regular, 0)
}

impl Default for InodeTable {
    fn default() -> Self {
        InodeTable {
            slot_of: Vec::new(),
            live: vec![empty_mapping()],
            free_slots: Vec::new(),
            retired_blocks: Vec::new(),
            forms: Vec::new(),
            noted: Vec::with_capacity(SWEEP_BATCH),
        }
    }
}

impl InodeTable {
    /// Inode numbers given out so far (retired ones included).
    pub fn len(&self) -> usize {
        self.slot_of.len()
    }

    pub fn is_empty(&self) -> bool {
        self.slot_of.is_empty()
    }

    /// Inodes held in host memory as an [`Inode`] (not retired, not
    /// frozen).
    pub fn nr_live(&self) -> usize {
        self.live.len() - 1 - self.free_slots.len()
    }

    /// Add a mapping; returns its inode number (`inode.id` must be it).
    pub fn add(&mut self, inode: Inode) -> u32 {
        let id = self.slot_of.len() as u32;
        debug_assert_eq!(inode.id, id);
        // The scenario's limit on files (`MAX_TASK_FILES`) keeps a run
        // within the inode numbers a frame can name.
        assert!(id < super::page::MAX_INODES, "inode number {id}");
        let slot = self.take_slot(inode);
        self.slot_of.push(slot);
        id
    }

    /// A slot of `live` for `inode`: a freed one, else a new one.
    fn take_slot(&mut self, inode: Inode) -> u32 {
        match self.free_slots.pop() {
            Some(slot) => {
                self.live[slot as usize] = inode;
                slot
            }
            None => {
                self.live.push(inode);
                let slot = (self.live.len() - 1) as u32;
                assert!(slot < FROZEN, "more than 2^31 inodes held at once");
                slot
            }
        }
    }

    /// The slot of inode `id` in `live` if it is held as an [`Inode`]
    /// (not retired, not frozen).
    fn live_slot(&self, id: u32) -> Option<u32> {
        self.slot_of
            .get(id as usize)
            .copied()
            .filter(|&slot| slot != RETIRED && slot < FROZEN)
    }

    /// The form of frozen slot `slot` (a `slot_of` entry at or above
    /// `FROZEN`).
    fn form_of(&self, slot: u32) -> &FrozenForm {
        &self.forms[((slot & !FROZEN) >> FORM_SHIFT) as usize]
    }

    /// The inode `id` if it is held as an [`Inode`] (not retired, not
    /// frozen).
    pub fn get(&self, id: u32) -> Option<&Inode> {
        self.live_slot(id).map(|slot| &self.live[slot as usize])
    }

    /// Ask the host CPU to bring inode `id` into its cache, if it is held
    /// as an [`Inode`] (a hint: see [`super::frames::prefetch_line`]). For
    /// writeback's walks of a device's inode lists, whose inodes were last
    /// touched when they were dirtied.
    #[inline]
    pub fn prefetch(&self, id: u32) {
        if let Some(inode) = self.get(id) {
            super::frames::prefetch_line(inode);
        }
    }

    /// The inodes held as an [`Inode`], in inode-number order.
    pub fn iter(&self) -> impl Iterator<Item = &Inode> + '_ {
        self.slot_of
            .iter()
            .filter(|&&slot| slot != RETIRED && slot < FROZEN)
            .map(|&slot| &self.live[slot as usize])
    }

    /// The entry at page `index` of inode `id`, frozen or not (a frame,
    /// or `NIL`); `None` if the inode is retired.
    pub fn page_of(&self, id: u32, index: u32) -> Option<u32> {
        match self.slot_of.get(id as usize).copied()? {
            RETIRED => None,
            slot if slot >= FROZEN => Some(if self.form_of(slot).page_index() == index {
                slot & FRAME_MASK
            } else {
                NIL
            }),
            slot => Some(self.live[slot as usize].page(index)),
        }
    }

    /// Whether inode `id` is frozen.
    pub fn is_frozen(&self, id: u32) -> bool {
        self.slot_of
            .get(id as usize)
            .is_some_and(|&slot| slot >= FROZEN)
    }

    /// Freeze inode `id` if it is a closed, clean one-page file with
    /// nothing in flight ([`Inode::frozen_form`]). Returns whether it was.
    pub fn freeze(&mut self, id: u32) -> bool {
        let Some(slot) = self.live_slot(id) else {
            return false;
        };
        let Some((form, pfn)) = self.live[slot as usize].frozen_form() else {
            return false;
        };
        let number = match self.forms.iter().position(|f| *f == form) {
            Some(n) => n,
            None if self.forms.len() < MAX_FORMS => {
                self.forms.push(form);
                self.forms.len() - 1
            }
            None => return false,
        };
        debug_assert!(pfn <= FRAME_MASK);
        self.count_unheld_blocks(form.fs(), i64::from(form.blocks()));
        // The slot keeps the Inode until the next file takes it: nothing
        // reads a free slot (no number maps to one), and a frozen
        // inode's page index is inline, with no heap to give back.
        debug_assert!(!self.live[slot as usize].page_index_on_heap());
        self.free_slots.push(slot);
        self.slot_of[id as usize] = FROZEN | (number as u32) << FORM_SHIFT | pfn;
        true
    }

    /// Give frozen inode `id` its [`Inode`] back, to be frozen again at a
    /// later sweep if it is still a clean one-page file then (not at once:
    /// whoever thawed it is about to read or change it). Returns whether
    /// it was frozen.
    pub fn thaw(&mut self, id: u32) -> bool {
        let Some(slot) = self.slot_of.get(id as usize).copied() else {
            return false;
        };
        if slot < FROZEN {
            return false;
        }
        let form = *self.form_of(slot);
        self.count_unheld_blocks(form.fs(), -i64::from(form.blocks()));
        let inode = Inode::thawed(id, &form, slot & FRAME_MASK);
        self.slot_of[id as usize] = self.take_slot(inode);
        self.note_idle(id);
        true
    }

    /// Closed inode `id` may have become freezable (its last writeback
    /// ended, or it was thawed): try it at the next sweep. Nothing is
    /// frozen now, since the caller may read the inode still.
    pub fn note_idle(&mut self, id: u32) {
        self.noted.push(id);
    }

    /// Inode `id` was closed: try it at the next sweep, and sweep if
    /// [`SWEEP_BATCH`] inodes are noted (a close reads nothing of the
    /// noted inodes after this).
    pub fn note_closed(&mut self, id: u32) {
        self.note_idle(id);
        if self.noted.len() >= SWEEP_BATCH {
            for i in 0..self.noted.len() {
                self.freeze(self.noted[i]);
            }
            self.noted.clear();
        }
    }

    /// Add `blocks` (negative: take) to the blocks of filesystem `fs`
    /// held by files without an [`Inode`].
    fn count_unheld_blocks(&mut self, fs: usize, blocks: i64) {
        if self.retired_blocks.len() <= fs {
            self.retired_blocks.resize(fs + 1, 0);
        }
        self.retired_blocks[fs] = self.retired_blocks[fs].wrapping_add_signed(blocks);
    }

    /// Blocks held on disk by the retired and frozen files of filesystem
    /// `fs`.
    pub fn retired_blocks(&self, fs: usize) -> u64 {
        self.retired_blocks.get(fs).copied().unwrap_or(0)
    }

    /// Free inode `id`'s memory if its mapping has no page, nothing of it
    /// is dirty or under writeback, and it is on no writeback list.
    /// Returns whether it was retired. Its shadow entries go with it: the
    /// kernel's `evict` drops them (`truncate_inode_pages_final`), and
    /// of a closed file only a reopen would read them.
    pub fn retire(&mut self, id: u32) -> bool {
        let Some(slot) = self.live_slot(id) else {
            return false;
        };
        let inode = &self.live[slot as usize];
        if inode.nr_cached != 0 || !inode.is_idle() {
            return false;
        }
        let (fs, blocks, on_heap) = (inode.fs(), inode.blocks, inode.page_index_on_heap());
        self.count_unheld_blocks(fs, i64::from(blocks));
        // Give the slot's heap (a spilled page index) back now; an inline
        // one stays until the next file takes the slot (nothing reads a
        // free slot).
        if on_heap {
            self.live[slot as usize] = empty_mapping();
        }
        self.free_slots.push(slot);
        self.slot_of[id as usize] = RETIRED;
        true
    }
}

impl Index<usize> for InodeTable {
    type Output = Inode;

    /// Inode `id`; a retired one reads as an empty mapping. Reading a
    /// frozen one is a bug, and panics.
    ///
    /// The inode number is checked against the numbers given out; its
    /// slot is not checked against `live`, which always holds it (see
    /// `live`): in the 10 GiB dd that check was 1.8 % of all instructions
    /// (cachegrind, 5.309 G against 5.216 G).
    #[inline(always)]
    fn index(&self, id: usize) -> &Inode {
        let slot = self.slot_of[id];
        assert!(slot < FROZEN, "inode {id} read while frozen");
        debug_assert!((slot as usize) < self.live.len());
        // SAFETY: `slot_of` holds only slots `take_slot` gave out (each
        // below `live.len()` then), `RETIRED` (0, the empty mapping's) or
        // frozen words (>= FROZEN, refused above); `live` never shrinks.
        unsafe { self.live.get_unchecked(slot as usize) }
    }
}

impl IndexMut<usize> for InodeTable {
    #[inline(always)]
    fn index_mut(&mut self, id: usize) -> &mut Inode {
        let slot = self.slot_of[id];
        // One compare for both: RETIRED is 0, frozen slots are >= FROZEN.
        assert!(
            slot.wrapping_sub(1) < FROZEN - 1,
            "inode {id} changed after it was retired or frozen"
        );
        debug_assert!((slot as usize) < self.live.len());
        // SAFETY: as in `index`: a slot that is neither RETIRED nor frozen
        // was given out by `take_slot`, below `live.len()`, which never
        // shrinks.
        unsafe { self.live.get_unchecked_mut(slot as usize) }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn file(id: u32, fs: usize) -> Inode {
        Inode::new(id, fs, 0, MappingKind::Regular, 0)
    }

    #[test]
    fn a_retired_inode_frees_its_slot_for_the_next_and_keeps_its_blocks_counted() {
        let mut t = InodeTable::default();
        for id in 0..3 {
            t.add(file(id, 1));
        }
        t[1].blocks = 5;
        t[1].insert(0, 42);
        assert!(!t.retire(1), "a cached page keeps it");
        t[1].remove(0);
        assert!(t.retire(1));
        assert!(t.get(1).is_none() && !t.retire(1));
        assert_eq!((t.len(), t.nr_live(), t.retired_blocks(1)), (3, 2, 5));
        assert_eq!(t[1].nr_cached + t[1].nr_dirty, 0);
        assert_eq!(t[1].page(0), NIL);
        // The next inode takes the freed slot, under a new number.
        assert_eq!(t.add(file(3, 0)), 3);
        assert_eq!((t.len(), t.nr_live()), (4, 3));
        let ids: Vec<u32> = t.iter().map(|i| i.id).collect();
        assert_eq!(ids, vec![0, 2, 3]);
        assert!(t.get(1).is_none() && t.get(3).is_some_and(|i| i.id == 3));
    }

    #[test]
    fn dirty_or_listed_inodes_stay_and_shadows_go_with_a_retired_one() {
        let mut t = InodeTable::default();
        t.add(file(0, 0));
        t[0].list = super::super::inode::InodeList::Dirty;
        assert!(!t.retire(0));
        t.add(file(1, 0));
        t[1].nr_writeback = 1;
        assert!(!t.retire(1));
        assert_eq!(t.nr_live(), 2);
        t[0].list = super::super::inode::InodeList::None;
        t[0].insert(2, 9);
        t[0].remove_leaving_shadow(2, 7);
        assert!(t.retire(0));
        assert_eq!(t[0].shadow(2), None);
    }

    #[test]
    fn retiring_a_larger_file_gives_its_page_index_heap_back() {
        let mut t = InodeTable::default();
        t.add(file(0, 0));
        let pages = 2 * crate::mm::page_index::INLINE_PAGES as u32;
        for i in 0..pages {
            t[0].insert(i, i);
        }
        let slot = t.slot_of[0] as usize;
        assert!(t.live[slot].page_index_on_heap());
        for i in 0..pages {
            t[0].remove(i);
        }
        assert!(t.retire(0));
        assert!(!t.live[slot].page_index_on_heap(), "the heap went with it");
    }

    /// A closed, clean one-page file: what fs_mark leaves behind.
    fn closed_one_page_file(t: &mut InodeTable, fs: usize, pfn: u32) -> u32 {
        let id = t.len() as u32;
        t.add(file(id, fs));
        t[id as usize].insert(1, pfn);
        t[id as usize].blocks = 2;
        t[id as usize].blocks_end = 2;
        t[id as usize].on_disk_pages = 2;
        t[id as usize].writeback_index = 2;
        t[id as usize].unused = true;
        id
    }

    #[test]
    fn a_frozen_file_costs_its_number_only_and_thaws_as_it_was() {
        let mut t = InodeTable::default();
        let a = closed_one_page_file(&mut t, 1, 40);
        let b = closed_one_page_file(&mut t, 1, 41);
        let before = t[a as usize].clone();
        assert!(t.freeze(a) && t.freeze(b) && !t.freeze(a));
        assert_eq!(t.nr_live(), 0, "both slots free");
        assert_eq!(t.forms.len(), 1, "one form for both");
        assert!(t.is_frozen(a) && t.get(a).is_none() && t.iter().count() == 0);
        assert_eq!(
            (t.page_of(a, 1), t.page_of(a, 0), t.page_of(b, 1)),
            (Some(40), Some(NIL), Some(41))
        );
        assert_eq!(t.retired_blocks(1), 4, "their blocks stay counted");
        // The next file takes a freed slot, and reads as itself (the
        // frozen inode's Inode stayed in the slot until then).
        t.add(file(2, 0));
        assert_eq!(t.nr_live(), 1);
        assert_eq!(
            (t[2].id, t[2].page(1), t[2].nr_cached, t[2].blocks),
            (2, NIL, 0, 0)
        );
        assert!(t.thaw(a) && !t.thaw(a) && !t.is_frozen(a));
        let after = &t[a as usize];
        assert_eq!(
            (after.id, after.fs(), after.bdi(), after.kind),
            (before.id, 1, 0, MappingKind::Regular)
        );
        assert_eq!((after.page(1), after.nr_cached, after.nr_dirty), (40, 1, 0));
        assert_eq!(
            (
                after.size_pages,
                after.blocks,
                after.blocks_end,
                after.on_disk_pages,
                after.writeback_index
            ),
            (2, 2, 2, 2, 2)
        );
        assert!(after.unused && after.base_sector == crate::mm::inode::FORGOTTEN_SECTOR);
        assert_eq!(t.retired_blocks(1), 2);
        // Reclaim takes the page: the thawed inode retires.
        t[a as usize].remove(1);
        assert!(t.retire(a));
        assert_eq!(t.retired_blocks(1), 4);
    }

    #[test]
    fn open_dirty_listed_or_larger_files_are_not_frozen() {
        let mut t = InodeTable::default();
        let open = closed_one_page_file(&mut t, 0, 10);
        t[open as usize].unused = false;
        let dirty = closed_one_page_file(&mut t, 0, 11);
        t[dirty as usize].set_dirty_tag(1);
        let listed = closed_one_page_file(&mut t, 0, 12);
        t[listed as usize].list = super::super::inode::InodeList::Dirty;
        let two = closed_one_page_file(&mut t, 0, 13);
        t[two as usize].insert(0, 14);
        let shadow = closed_one_page_file(&mut t, 0, 15);
        t[shadow as usize].insert(0, 16);
        t[shadow as usize].remove_leaving_shadow(0, 3);
        for id in [open, dirty, listed, two, shadow] {
            assert!(!t.freeze(id), "inode {id}");
        }
        assert_eq!(t.nr_live(), 5);
    }

    #[test]
    fn closes_sweep_the_noted_inodes_in_batches() {
        let mut t = InodeTable::default();
        let ids: Vec<u32> = (0..SWEEP_BATCH as u32)
            .map(|i| closed_one_page_file(&mut t, 0, i))
            .collect();
        for &id in &ids[..SWEEP_BATCH - 1] {
            t.note_closed(id);
        }
        assert_eq!(
            t.nr_live(),
            SWEEP_BATCH,
            "no sweep before the batch is full"
        );
        t.note_closed(ids[SWEEP_BATCH - 1]);
        assert_eq!(t.nr_live(), 0);
        assert!(ids.iter().all(|&id| t.page_of(id, 1) == Some(id)));
    }

    #[test]
    #[should_panic(expected = "read while frozen")]
    fn reading_a_frozen_inode_unthawed_panics() {
        let mut t = InodeTable::default();
        let a = closed_one_page_file(&mut t, 0, 7);
        assert!(t.freeze(a));
        let _ = t[a as usize].nr_cached;
    }

    #[test]
    #[should_panic(expected = "changed after it was retired or frozen")]
    fn changing_a_frozen_inode_panics() {
        let mut t = InodeTable::default();
        let a = closed_one_page_file(&mut t, 0, 7);
        assert!(t.freeze(a));
        t[a as usize].nr_dirty = 1;
    }

    #[test]
    #[should_panic(expected = "changed after it was retired")]
    fn changing_a_retired_inode_panics() {
        let mut t = InodeTable::default();
        t.add(file(0, 0));
        assert!(t.retire(0));
        t[0].nr_dirty = 1;
    }
}
