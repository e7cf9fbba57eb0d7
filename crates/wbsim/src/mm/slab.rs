//! Slab reclaim, Linux 3.0: `shrink_slab` (`mm/vmscan.c`) driving the
//! dentry and inode cache shrinkers (`fs/dcache.c: shrink_dcache_memory`,
//! `fs/inode.c: shrink_icache_memory`, `prune_icache`), read in 3.0.x
//! trees and Dave Chinner's June 2011 per-sb shrinker patches (whose
//! removed lines are the 3.0 code).
//!
//! A simple model, stated as such: only closed regular files are cached
//! objects (one dentry and one inode each); their slab memory is not
//! counted in page frames. A closed file's dentry is unused at once (on the
//! dentry LRU) and pins its inode; pruning the dentry puts the inode on the
//! inode LRU with I_REFERENCED (`iput_final`). `prune_icache` gives a
//! referenced inode a second round; an inode that still has page-cache
//! pages has its clean, unmapped, idle ones dropped
//! (`invalidate_mapping_pages`), counted in `kswapd_inodesteal` or
//! `pginodesteal`, and is evicted only once it has none.

use std::collections::VecDeque;

use crate::mm::page::{flags, NIL};
use crate::mm::vmstat::Ev;
use crate::mm::Memory;
use crate::mm::MemoryOps;
use crate::mm::MmHost;

/// An `inode_lru` entry's I_REFERENCED bit, above every inode number
/// (a run gives out far fewer than 2^31).
pub const I_REFERENCED: u32 = 1 << 31;

/// `SHRINK_BATCH`.
pub const SHRINK_BATCH: u64 = 128;
/// `DEFAULT_SEEKS` of the dcache and icache shrinkers.
const DEFAULT_SEEKS: u64 = 2;

#[derive(Debug, Clone, Default)]
pub struct VfsCaches {
    /// Unused dentries of closed files (front = most recent).
    pub dentry_lru: VecDeque<u32>,
    /// Unused inodes (front = most recent), each with its I_REFERENCED
    /// bit in [`I_REFERENCED`] (one word per entry: the writeback-plug
    /// run holds 4 M of them).
    pub inode_lru: VecDeque<u32>,
    /// `shrinker->nr`: work deferred to the next call, [dcache, icache].
    deferred: [u64; 2],
}

/// Slab reclaim of the dentry and inode caches (`shrink_slab`).
pub trait SlabShrink: MmHost {
    /// `shrink_slab` (3.0): each shrinker scans in proportion to the LRU
    /// pages just scanned, `4 * scanned / seeks * objects / (lru_pages +
    /// 1)`, in batches of `SHRINK_BATCH`, each counted in `slabs_scanned`.
    /// Returns how many objects the batches took off the caches' LRUs
    /// (Σ `nr_before - shrink_ret`), which kswapd reads as "slab freed
    /// something".
    fn shrink_slab(&mut self, tid: u32, is_kswapd: bool, nr_scanned: u64, lru_pages: u64) -> u64 {
        let mut freed = 0;
        let nr_scanned = if nr_scanned == 0 { 32 } else { nr_scanned };
        for which in 0..2 {
            let objects = if which == 0 {
                self.mm().vfs.dentry_lru.len() as u64
            } else {
                self.mm().vfs.inode_lru.len() as u64
            };
            // shrink_*_memory(0): (nr_unused / 100) * vfs_cache_pressure.
            let max_pass = objects / 100 * 100;
            let delta = 4 * nr_scanned / DEFAULT_SEEKS * max_pass / (lru_pages + 1);
            let mut total = (self.mm().vfs.deferred[which] + delta).min(2 * max_pass);
            while total >= SHRINK_BATCH {
                self.mm_mut().vmstat.inc(Ev::SlabsScanned, SHRINK_BATCH);
                let before = self.vfs_lru_len(which);
                if which == 0 {
                    self.prune_dcache(tid, SHRINK_BATCH);
                } else {
                    self.prune_icache(tid, is_kswapd, SHRINK_BATCH);
                }
                freed += before.saturating_sub(self.vfs_lru_len(which));
                total -= SHRINK_BATCH;
            }
            self.mm_mut().vfs.deferred[which] = total;
        }
        freed
    }

    /// Unused objects of the dcache (0) or icache (1) shrinker.
    fn vfs_lru_len(&self, which: usize) -> u64 {
        if which == 0 {
            self.mm().vfs.dentry_lru.len() as u64
        } else {
            self.mm().vfs.inode_lru.len() as u64
        }
    }

    /// `prune_dcache`: free the oldest unused dentries; their inodes become
    /// unused, referenced.
    fn prune_dcache(&mut self, tid: u32, nr: u64) {
        for _ in 0..nr {
            let Some(ino) = self.mm_mut().vfs.dentry_lru.pop_back() else {
                break;
            };
            debug_assert!(ino < I_REFERENCED);
            self.mm_mut().vfs.inode_lru.push_front(ino | I_REFERENCED);
            self.charge_sys(tid, self.cost().inode_evict_ns / 2);
        }
    }

    /// `prune_icache(nr)`: walk `nr` inodes from the LRU tail.
    fn prune_icache(&mut self, tid: u32, is_kswapd: bool, nr: u64) {
        let mut reap = 0;
        for _ in 0..nr {
            let Some(entry) = self.mm_mut().vfs.inode_lru.pop_back() else {
                break;
            };
            let (ino, referenced) = (entry & !I_REFERENCED, entry & I_REFERENCED != 0);
            self.charge_sys(tid, self.cost().inode_evict_ns);
            if referenced {
                self.mm_mut().vfs.inode_lru.push_front(ino);
                continue;
            }
            self.mm_mut().thaw_inode(ino);
            if self.mm().inodes[ino as usize].nr_cached > 0 {
                reap += self.invalidate_mapping_pages(tid, ino);
                if self.mm().inodes[ino as usize].nr_cached > 0 {
                    self.mm_mut().vfs.inode_lru.push_front(ino);
                    continue;
                }
            }
            // Evicted: the inode has no pages and leaves the cache (and,
            // when nothing else of it is in flight, host memory).
            self.mm_mut().inodes.retire(ino);
        }
        let ev = if is_kswapd {
            Ev::KswapdInodeSteal
        } else {
            Ev::PgInodeSteal
        };
        self.mm_mut().vmstat.inc(ev, reap);
    }

    /// `invalidate_mapping_pages(mapping, 0, -1)`: drop the clean pages
    /// that nobody maps, that are not under writeback and that sit on an
    /// LRU list. Returns how many were freed.
    fn invalidate_mapping_pages(&mut self, tid: u32, ino: u32) -> u64 {
        let size = self.mm().inodes[ino as usize].size_pages;
        let mut freed = 0;
        for idx in 0..size {
            let pfn = self.mm().inodes[ino as usize].page(idx);
            if pfn == NIL {
                continue;
            }
            let p = self.mm().pages[pfn as usize];
            let busy = flags::DIRTY | flags::WRITEBACK | flags::PTE_MAPPED | flags::LOCKED;
            if p.flags & busy != 0 || p.holder.lru().is_none() {
                continue;
            }
            self.mm_mut().lru_unlink(pfn);
            self.mm_mut().inodes[ino as usize].remove(idx);
            self.free_page(tid, pfn);
            self.charge_sys(tid, self.cost().page_free_ns);
            freed += 1;
        }
        freed
    }
}

impl<T: MmHost + ?Sized> SlabShrink for T {}

impl Memory {
    /// `close()` of the last reference: the dentry goes on the unused list
    /// (and an empty file's inode leaves host memory, see
    /// [`crate::mm::inode_table`]).
    pub fn icache_release(&mut self, ino: u32) {
        self.inodes[ino as usize].unused = true;
        if !self.inodes.retire(ino) {
            self.inodes.note_closed(ino);
        }
        self.vfs.dentry_lru.push_front(ino);
    }
}
