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

use std::ops::{Index, IndexMut};

use super::inode::{Inode, MappingKind};
use crate::mm::page::NIL;

/// `slot_of` entry of a retired inode: the slot of `live` that holds the
/// empty mapping it reads as (so that reading an inode takes no branch).
const RETIRED: u32 = 0;

#[derive(Debug, Clone)]
pub struct InodeTable {
    /// Inode number → its slot in `live`, or `RETIRED`.
    slot_of: Vec<u32>,
    /// Slot `RETIRED` holds the empty mapping; the others, inodes.
    live: Vec<Inode>,
    /// Slots of `live` freed by retirements, reused by the next inodes.
    free_slots: Vec<u32>,
    /// Data blocks the retired files of each filesystem hold on disk.
    retired_blocks: Vec<u64>,
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

    /// Inodes held in host memory.
    pub fn nr_live(&self) -> usize {
        self.live.len() - 1 - self.free_slots.len()
    }

    /// Add a mapping; returns its inode number (`inode.id` must be it).
    pub fn add(&mut self, inode: Inode) -> u32 {
        let id = self.slot_of.len() as u32;
        debug_assert_eq!(inode.id, id);
        let slot = match self.free_slots.pop() {
            Some(slot) => {
                self.live[slot as usize] = inode;
                slot
            }
            None => {
                self.live.push(inode);
                (self.live.len() - 1) as u32
            }
        };
        self.slot_of.push(slot);
        id
    }

    /// The inode `id` if it is still cached (not retired).
    pub fn get(&self, id: u32) -> Option<&Inode> {
        match self.slot_of.get(id as usize).copied() {
            Some(slot) if slot != RETIRED => Some(&self.live[slot as usize]),
            _ => None,
        }
    }

    /// The cached inodes in inode-number order.
    pub fn iter(&self) -> impl Iterator<Item = &Inode> + '_ {
        self.slot_of
            .iter()
            .filter(|&&slot| slot != RETIRED)
            .map(|&slot| &self.live[slot as usize])
    }

    /// Blocks held on disk by the retired files of filesystem `fs`.
    pub fn retired_blocks(&self, fs: usize) -> u64 {
        self.retired_blocks.get(fs).copied().unwrap_or(0)
    }

    /// Free inode `id`'s memory if its mapping has no page, nothing of it
    /// is dirty or under writeback, and it is on no writeback list.
    /// Returns whether it was retired. Its shadow entries go with it: the
    /// kernel's `evict` drops them (`truncate_inode_pages_final`), and
    /// of a closed file only a reopen would read them.
    pub fn retire(&mut self, id: u32) -> bool {
        let Some(slot) = self.slot_of.get(id as usize).copied() else {
            return false;
        };
        if slot == RETIRED {
            return false;
        }
        let inode = &self.live[slot as usize];
        let idle = inode.nr_cached == 0
            && inode.nr_dirty == 0
            && inode.nr_writeback == 0
            && !inode.in_writeback
            && inode.list == super::inode::InodeList::None;
        if !idle {
            return false;
        }
        if self.retired_blocks.len() <= inode.fs() {
            self.retired_blocks.resize(inode.fs() + 1, 0);
        }
        self.retired_blocks[inode.fs()] += u64::from(inode.blocks);
        // Give the slot's heap (a spilled page index) back now.
        self.live[slot as usize] = empty_mapping();
        self.free_slots.push(slot);
        self.slot_of[id as usize] = RETIRED;
        true
    }
}

impl Index<usize> for InodeTable {
    type Output = Inode;

    /// Inode `id`; a retired one reads as an empty mapping.
    #[inline(always)]
    fn index(&self, id: usize) -> &Inode {
        &self.live[self.slot_of[id] as usize]
    }
}

impl IndexMut<usize> for InodeTable {
    #[inline(always)]
    fn index_mut(&mut self, id: usize) -> &mut Inode {
        let slot = self.slot_of[id];
        assert!(slot != RETIRED, "inode {id} changed after it was retired");
        &mut self.live[slot as usize]
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
    #[should_panic(expected = "changed after it was retired")]
    fn changing_a_retired_inode_panics() {
        let mut t = InodeTable::default();
        t.add(file(0, 0));
        assert!(t.retire(0));
        t[0].nr_dirty = 1;
    }
}
