//! The page cache's write side (`find_or_create_page`, the per-page part of
//! `generic_perform_write`: `grab_cache_page_write_begin`, copy,
//! `set_page_dirty`, `mark_page_accessed`), reading file pages through the
//! page cache, and dropping a file's pages:
//! `filemap_fault` / `do_generic_file_read` with readahead
//! (`mm/readahead.c`, 2.6.24 – 3.x), and `truncate_inode_pages` at unlink.
//!
//! Readahead, simplified from `ondemand_readahead` and `filemap_fault`:
//! * a `read(2)` miss that continues the previous read (or starts the
//!   file) is sequential: the window starts at 4 pages and doubles per
//!   miss up to `ra_pages`; any other `read(2)` miss reads just the page;
//! * a fault miss reads `ra_pages` around the faulting page
//!   (`do_page_cache_readahead(pgoff - ra_pages/2, ra_pages)`).
//!
//! Asynchronous readahead (PG_readahead marks) is not modelled, so a
//! sequential reader waits once per window.

use crate::mm::buffer_head::BufferHeads;
use crate::mm::page::{flags, Pfn, NIL};
use crate::mm::page_alloc::PageAlloc;
use crate::mm::Gfp;
use crate::mm::MemoryOps;
use crate::mm::MmHost;
use crate::sched::Step;

/// `VM_MAX_READAHEAD` (128 KiB) in pages, the default `read_ahead_kb`.
pub const RA_PAGES: u32 = 32;

/// `struct file_ra_state` of an open file, the part the model keeps: the
/// last window's size and its last page.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FileRaState {
    pub size_pages: u32,
    pub prev_index: u32,
}

impl Default for FileRaState {
    /// `file_ra_state_init`: no window yet, no page read (`prev_pos` -1).
    fn default() -> Self {
        FileRaState {
            size_pages: 0,
            prev_index: u32::MAX,
        }
    }
}

/// How the page is being read.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ReadKind {
    /// `read(2)`; the value is the readahead window after the last miss.
    Syscall,
    /// A page fault on a mapping.
    Fault,
}

/// The page cache: lookup, creation and the cached read and write paths (`mm/filemap.c`).
pub trait Filemap: MmHost {
    /// The page-cache page `idx` of inode `ino`, allocated with `gfp`, added
    /// to the page cache (up to date: nothing on disk to read) and queued
    /// for the LRU if absent (`find_or_create_page`). `Err` when the
    /// allocation must sleep (call again after waking).
    #[inline(always)]
    fn find_or_create_page(&mut self, tid: u32, ino: u32, idx: u32, gfp: Gfp) -> Result<u32, Step> {
        let pfn = self.mm().inodes[ino as usize].page(idx);
        if pfn != crate::mm::page::NIL {
            return Ok(pfn);
        }
        let pfn = self.alloc_page_for_task(tid, gfp)?;
        self.add_to_page_cache_lru(tid, pfn, ino, idx);
        Ok(pfn)
    }

    /// Write `bytes` into page `idx` of inode `ino` through the page cache:
    /// find or allocate the page, copy, dirty it (unless write-through) and
    /// `mark_page_accessed`. `Ok(true)` if the page became dirty; `Err`
    /// when the allocation must sleep (call again after waking).
    #[inline(always)]
    fn write_page_cached(
        &mut self,
        tid: u32,
        ino: u32,
        idx: u32,
        bytes: u64,
        dirty: bool,
    ) -> Result<bool, Step> {
        // grab_cache_page_write_begin: __GFP_WRITE.
        let pfn = self.find_or_create_page(tid, ino, idx, Gfp::movable(true))?;
        self.attach_buffer_heads(tid, ino, pfn);
        self.charge_sys(tid, bytes * self.cost().copy_per_kib_ns / 1024);
        let newly = dirty && self.set_page_dirty(pfn, Some(tid));
        self.mark_page_accessed_by(tid, pfn);
        Ok(newly)
    }

    /// Page `idx` of `ino`, up to date. A miss below the file's on-disk
    /// size starts a read (with readahead) and the task waits for it; a
    /// miss above it is a hole, filled with zeroes. `Err` when the task
    /// must sleep (call again after waking).
    fn filemap_get_page(
        &mut self,
        tid: u32,
        ino: u32,
        idx: u32,
        kind: ReadKind,
    ) -> Result<u32, Step> {
        let pfn = self.mm().inodes[ino as usize].page(idx);
        if pfn == NIL {
            if idx >= self.mm().inodes[ino as usize].on_disk_pages {
                return self.find_or_create_page(tid, ino, idx, Gfp::movable(false));
            }
            self.readahead(tid, ino, idx, kind)?;
            self.mm_mut().vmstat.inc(
                crate::mm::vmstat::Ev::PgMajFault,
                (kind == ReadKind::Fault) as u64,
            );
        }
        let pfn = self.mm().inodes[ino as usize].page(idx);
        if self.mm().pages[pfn as usize].has(flags::LOCKED) {
            // lock_page / wait_on_page_locked: the read is in flight.
            self.mm_mut().read_waiters.push((pfn, tid));
            return Err(Step::Wait(None));
        }
        Ok(pfn)
    }

    /// A page fault on a shared file mapping (`filemap_fault`, then for a
    /// write `set_page_dirty_balance`): the page is found or read, mapped
    /// young (and writable for a write), and a write dirties it, entering
    /// `balance_dirty_pages_ratelimited` if it was clean. `Err` when the
    /// task must sleep (call again after waking).
    fn shared_mapping_fault(
        &mut self,
        tid: u32,
        ino: u32,
        bdi: usize,
        idx: u32,
        write: bool,
    ) -> Result<u32, Step> {
        let pfn = self.filemap_get_page(tid, ino, idx, ReadKind::Fault)?;
        self.mm_mut().vmstat.inc(crate::mm::vmstat::Ev::PgFault, 1);
        self.charge_sys(tid, self.cost().page_fault_ns);
        self.mm_mut().pages[pfn as usize].flags |= flags::PTE_MAPPED | flags::PTE_YOUNG;
        if write {
            self.mm_mut().pages[pfn as usize].flags |= flags::PTE_WRITE;
            if self.set_page_dirty(pfn, Some(tid)) {
                self.balance_dirty_pages_ratelimited(tid, bdi, 1);
            }
        }
        Ok(pfn)
    }

    /// A best-effort readahead page (`__GFP_NORETRY`, for file and swap
    /// readahead alike): from the free lists at the low watermark, never
    /// entering reclaim; `None` when memory is short.
    fn alloc_readahead_page(&mut self, tid: u32) -> Option<Pfn> {
        let pfn = self.get_page_from_freelist(tid, crate::mm::Mark::Low, Gfp::movable(false))?;
        self.charge_sys(tid, self.cost().page_alloc_ns);
        Some(pfn)
    }

    /// Queue reads for the window around `idx` and start the device.
    fn readahead(&mut self, tid: u32, ino: u32, idx: u32, kind: ReadKind) -> Result<(), Step> {
        let ra = self.mm().task_ra[tid as usize];
        let (first, nr) = match kind {
            ReadKind::Fault => (idx.saturating_sub(RA_PAGES / 2), RA_PAGES),
            ReadKind::Syscall if idx == 0 || idx == ra.prev_index.wrapping_add(1) => {
                let nr = (ra.size_pages * 2).clamp(4, RA_PAGES);
                (idx, nr)
            }
            ReadKind::Syscall => (idx, 1),
        };
        let end = (first + nr).min(self.mm().inodes[ino as usize].on_disk_pages);
        // The faulting page itself may wait for memory; the others are
        // best effort (`__GFP_NORETRY` readahead allocations).
        let target = self.alloc_page_for_task(tid, Gfp::movable(false))?;
        self.start_page_read(tid, target, ino, idx);
        for i in first..end {
            if i == idx || self.mm().inodes[ino as usize].page(i) != NIL {
                continue;
            }
            let Some(pfn) = self.alloc_readahead_page(tid) else {
                break;
            };
            self.start_page_read(tid, pfn, ino, i);
        }
        self.mm_mut().task_ra[tid as usize] = FileRaState {
            size_pages: end - first,
            prev_index: end - 1,
        };
        let bdi = self.mm().inodes[ino as usize].bdi();
        self.flush_plug(bdi);
        Ok(())
    }

    /// A new locked page in the page cache with its read queued.
    fn start_page_read(&mut self, tid: u32, pfn: u32, ino: u32, idx: u32) {
        self.mm_mut().pages[pfn as usize].flags |= flags::LOCKED;
        // `filemap_add_folio` (read, no `__GFP_WRITE`) over a shadow entry.
        if let Some(shadow) = self.mm().inodes[ino as usize].shadow(idx) {
            self.mm_mut().workingset_refault(pfn, shadow);
        }
        self.add_to_page_cache_lru(tid, pfn, ino, idx);
        self.submit_page_read(tid, pfn);
    }

    /// `truncate_inode_pages` for an unlinked, unmapped file: dirty pages
    /// are cancelled at once (`cancel_dirty_page`); once no page is under
    /// writeback (truncate waits on those), every page leaves the page
    /// cache and the LRU and is freed. Returns false while it must wait:
    /// the caller sleeps and calls again.
    fn truncate_inode_pages(&mut self, tid: u32, ino: u32) -> bool {
        let size = self.mm().inodes[ino as usize].cached_extent();
        if self.mm().inodes[ino as usize].nr_dirty > 0 {
            for idx in 0..size {
                let pfn = self.mm().inodes[ino as usize].page(idx);
                if pfn != NIL && self.mm().pages[pfn as usize].has(flags::DIRTY) {
                    self.clear_page_dirty_for_io(pfn);
                }
            }
        }
        if self.mm().inodes[ino as usize].nr_writeback > 0 {
            return false;
        }
        for cpu in 0..self.mm().pagevecs.len() {
            self.mm_mut().lru_add_drain(cpu);
        }
        let busy = (0..size).any(|idx| {
            let pfn = self.mm().inodes[ino as usize].page(idx);
            pfn != NIL && {
                let p = &self.mm().pages[pfn as usize];
                p.has(flags::LOCKED) || p.holder.lru().is_none()
            }
        });
        if busy {
            return false;
        }
        for idx in 0..size {
            let pfn = self.mm().inodes[ino as usize].page(idx);
            if pfn == NIL {
                continue;
            }
            self.mm_mut().lru_unlink(pfn);
            self.mm_mut().inodes[ino as usize].remove(idx);
            self.free_page(tid, pfn);
        }
        true
    }
}

impl<T: MmHost + ?Sized> Filemap for T {}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::test_support::usb_stick_files;

    /// The readahead state is the reading task's open file's: a
    /// sequential `read(2)` miss grows the window from 4 pages, and a new
    /// open starts over (`file_ra_state_init`), whatever the file's pages.
    #[test]
    fn the_readahead_window_belongs_to_the_open_file() {
        let (mut sys, files) = usb_stick_files("3.3", "xfs", &["a"]);
        let ino = files[0];
        sys.mm_mut().inode_mut(ino).on_disk_pages = 1_000;
        let first = sys.filemap_get_page(0, ino, 0, ReadKind::Syscall);
        assert!(first.is_err(), "the first page waits for its read");
        let ra = |sys: &crate::system::System| sys.mm().task_ra[0];
        assert_eq!(
            ra(&sys),
            FileRaState {
                size_pages: 4,
                prev_index: 3
            }
        );
        // The next miss continues the stream: the window doubles.
        let _ = sys.filemap_get_page(0, ino, 4, ReadKind::Syscall);
        assert_eq!(
            ra(&sys),
            FileRaState {
                size_pages: 8,
                prev_index: 11
            }
        );
        sys.mm_mut().open_for_read(0);
        assert_eq!(ra(&sys), FileRaState::default());
        let _ = sys.filemap_get_page(0, ino, 12, ReadKind::Syscall);
        assert_eq!(
            ra(&sys),
            FileRaState {
                size_pages: 1,
                prev_index: 12
            }
        );
    }
}
